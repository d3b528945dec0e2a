// The trading loop through the C# binding against the sandbox venue (part of PerpsTests):
// every endpoint method, the error's new fields (ClOrdId, XRequestId, RetryAfterMs), and the
// helpers the stream tests share (LimitBuy, FarBid, Ids, Logged).

using System;
using System.Collections.Generic;
using System.Diagnostics;
using System.Globalization;
using System.Linq;
using System.Net;
using System.Text;
using System.Text.RegularExpressions;
using Perps;

static partial class PerpsTests
{
    // ---- the trading loop: every endpoint method, and the error's new fields ----

    static void TradingTests()
    {
        Test("codes 13 and 14; the error's new fields default to unknown", () =>
        {
            Equal(13, (int)PerpsCode.NotFound);
            Equal(14, (int)PerpsCode.RateLimited);
            var e = new PerpsException(PerpsCode.Timeout, "m", 0, null, true);
            Expect(e.ClOrdId == null && e.XRequestId == null && e.RetryAfterMs == -1, "defaults " + e);
        });

        using (var client = new Client(baseUrl, perpsUrl))
        {
            Test("public endpoints without a session; depth book sorted", () =>
            {
                var symbols = Rows(client.QuerySymbolInfo(null)).Select(r => (string)Obj(r)["symbol"]).ToList();
                foreach (var want in new[] { "BTC-USD", "ETH-USD", "XAG-USD" })
                    Expect(symbols.Contains(want), "symbols " + string.Join(",", symbols));
                var xag = Rows(client.QuerySymbolInfo(null, "{\"symbol\":\"XAG-USD\"}"));
                Equal(1, xag.Count);
                Equal("XAG-USD", (string)Obj(xag[0])["symbol"]);
                var price = Obj(Json(client.QuerySymbolPrice(null, "{\"symbol\":\"BTC-USD\"}")));
                Expect(Dec(price["mark_price"]) > 0, "mark_price");
                // XAG-USD's bids (100.04 … 99.95 around the default mark) sort differently as strings.
                foreach (var symbol in new[] { "XAG-USD", "BTC-USD" })
                {
                    string text = client.QueryDepthBook(null, "{\"symbol\":\"" + symbol + "\"}");
                    var book = Obj(Json(text));
                    var bids = ((List<object>)book["bids"]).Select(l => Dec(((List<object>)l)[0])).ToList();
                    var asks = ((List<object>)book["asks"]).Select(l => Dec(((List<object>)l)[0])).ToList();
                    Expect(bids.Count > 0 && asks.Count > 0 && bids[0] < asks[0], "book " + text);
                    for (int i = 1; i < bids.Count; i++) Expect(bids[i - 1] > bids[i], "bids high to low: " + text);
                    for (int i = 1; i < asks.Count; i++) Expect(asks[i - 1] < asks[i], "asks low to high: " + text);
                }
                foreach (var name in new[] { "query_symbol_info", "query_symbol_price", "query_depth_book" })
                {
                    var sent = Logged(name);
                    Expect(sent.Count > 0, name + " in the venue's log");
                    Expect(sent.All(r => !Obj(Obj(r)["headers"]).ContainsKey("authorization")), name + " sent a bearer token");
                }
                using (var session = new Session())
                    Expect(client.QuerySymbolPrice(session, "{\"symbol\":\"ETH-USD\"}").Contains("ETH-USD"), "with a session");
            });

            using (var session = new Session())
            {
                client.Signin(session, "bsc", WalletKey, 3600);

                Test("trading loop: set-up, order by cl_ord_id, open orders, cancel, NotFound again", () =>
                {
                    Equal(0m, Dec(Obj(Json(client.ChangeMarginMode(session, "{\"symbol\":\"BTC-USD\",\"margin_mode\":\"cross\"}")))["code"]));
                    Equal(0m, Dec(Obj(Json(client.ChangeLeverage(session, "{\"symbol\":\"BTC-USD\",\"leverage\":10}")))["code"]));
                    var config = Obj(Json(client.QueryPositionConfig(session, "{\"symbol\":\"BTC-USD\"}")));
                    Equal(10m, Dec(config["leverage"]));
                    Equal("cross", (string)config["margin_mode"]);

                    string bid = FarBid(client);
                    var placed = Obj(Json(client.NewOrder(session, LimitBuy(bid, "0.01", ""))));
                    string cl = (string)placed["cl_ord_id"];
                    Expect(cl != null && cl.Length >= 26, "cl_ord_id " + cl);
                    var order = Obj(Json(client.QueryOrder(session, "{\"cl_ord_id\":\"" + cl + "\"}")));
                    long id = (long)Dec(order["id"]);
                    Expect(id > (1L << 32), "id above 2^32: " + id);
                    Equal("open", (string)order["status"]);
                    Equal(cl, (string)Obj(Json(client.QueryOrder(session, "{\"order_id\":" + id + "}")))["cl_ord_id"]);
                    Expect(Ids(client.QueryOpenOrders(session, "{\"symbol\":\"BTC-USD\"}")).Contains(id), "listed as open");
                    Expect(Ids(client.QueryOpenOrders(session)).Contains(id), "listed as open (no filter)");
                    Equal(0m, Dec(Obj(Json(client.CancelOrder(session, "{\"cl_ord_id\":\"" + cl + "\"}")))["code"]));
                    Equal("canceled", (string)Obj(Json(client.QueryOrder(session, "{\"order_id\":" + id + "}")))["status"]);
                    Expect(!Ids(client.QueryOpenOrders(session)).Contains(id), "no longer open");
                    Expect(Ids(client.QueryOrders(session, "{\"symbol\":\"BTC-USD\",\"status\":\"canceled\",\"limit\":50}")).Contains(id), "in the history");

                    var e = Throws(() => client.CancelOrder(session, "{\"order_id\":" + id + "}"));
                    Equal(PerpsCode.NotFound, e.Code);
                    Equal(404, e.HttpStatus);
                    Expect(e.Body != null && e.Body.Contains("not found"), "body " + e.Body);
                    Expect(e.ClOrdId == null && e.RetryAfterMs == -1, "fields " + e);
                    Expect(e.XRequestId != null && Uuid4.IsMatch(e.XRequestId), "x-request-id " + e.XRequestId);
                    var last = Obj(Logged("cancel_order").Last());
                    Equal(e.XRequestId, (string)Obj(last["headers"])["x-request-id"]);
                    Equal(404m, Dec(last["status"]));

                    e = Throws(() => client.QueryOrder(session, "{\"order_id\":4294967299999}"));
                    Equal(PerpsCode.NotFound, e.Code);
                    Expect(e.XRequestId == null, "a GET carries no x-request-id");
                });

                Test("fills: market order, trades, positions, balance; batch cancel", () =>
                {
                    client.NewOrder(session, "{\"symbol\":\"BTC-USD\",\"side\":\"buy\",\"order_type\":\"market\",\"qty\":\"0.01\",\"time_in_force\":\"ioc\",\"reduce_only\":false}");
                    var trades = Rows(client.QueryTrades(session, "{\"symbol\":\"BTC-USD\",\"side\":\"buy\"}"));
                    Expect(trades.Count > 0 && Dec(Obj(trades[0])["qty"]) > 0, "a fill");
                    Expect(Rows(client.QueryTrades(session)).Count > 0, "fills without a filter");
                    Expect(Rows(client.QueryPositions(session, "{\"symbol\":\"BTC-USD\"}"))
                        .Any(p => (string)Obj(p)["symbol"] == "BTC-USD" && Dec(Obj(p)["qty"]) > 0), "a long position");
                    Expect(Rows(client.QueryPositions(session)).Count > 0, "positions without a filter");
                    var balance = Obj(Json(client.QueryBalance(session)));
                    Expect(balance.ContainsKey("equity") && Dec(balance["balance"]) > 0, "balance");

                    string bid = FarBid(client);
                    string a = (string)Obj(Json(client.NewOrder(session, LimitBuy(bid, "0.01", ""))))["cl_ord_id"];
                    string b = "cs-batch-" + DateTime.UtcNow.Ticks % 1000000000;
                    client.NewOrder(session, LimitBuy(bid, "0.01", ",\"cl_ord_id\":\"" + b + "\""));
                    long aId = (long)Dec(Obj(Json(client.QueryOrder(session, "{\"cl_ord_id\":\"" + a + "\"}")))["id"]);
                    var answer = Json(client.CancelOrders(session, "{\"order_id_list\":[" + aId + "],\"cl_ord_id_list\":[\"" + b + "\"]}"));
                    Expect(answer is List<object> || Dec(Obj(answer)["code"]) == 0, "cancel_orders answer");
                    foreach (var c in new[] { a, b })
                        Equal("canceled", (string)Obj(Json(client.QueryOrder(session, "{\"cl_ord_id\":\"" + c + "\"}")))["status"]);
                });

                Test("cancel_all: the prefixed orders cancelled and confirmed, the other left open", () =>
                {
                    string bid = FarBid(client);
                    string prefix = "cs-all-" + DateTime.UtcNow.Ticks % 1000000000 + "-";
                    foreach (var name in new[] { "a", "b" })
                        client.NewOrder(session, LimitBuy(bid, "0.01", ",\"cl_ord_id\":\"" + prefix + name + "\""));
                    string other = (string)Obj(Json(client.NewOrder(session, LimitBuy(bid, "0.01", ""))))["cl_ord_id"];
                    string text = client.CancelAll(session, "{\"cl_ord_id_prefix\":\"" + prefix + "\",\"confirm_ms\":5000}");
                    var report = Obj(Json(text));
                    Expect(report["complete"] is bool complete && complete, text);
                    var orders = (List<object>)report["orders"];
                    Equal(2, orders.Count);
                    foreach (var o in orders)
                    {
                        Equal("canceled", (string)Obj(o)["status"]);
                        Expect(((string)Obj(o)["cl_ord_id"]).StartsWith(prefix, StringComparison.Ordinal), text);
                        Equal("canceled", (string)Obj(Json(client.QueryOrder(session, "{\"cl_ord_id\":\"" + (string)Obj(o)["cl_ord_id"] + "\"}")))["status"]);
                    }
                    Equal("open", (string)Obj(Json(client.QueryOrder(session, "{\"cl_ord_id\":\"" + other + "\"}")))["status"]);
                    client.CancelOrder(session, "{\"cl_ord_id\":\"" + other + "\"}");
                    var e = Throws(() => client.CancelAll(session, "{\"cl_ord_id_prefix\":\"\"}"));
                    Equal(PerpsCode.InvalidArgument, e.Code);
                    Expect(e.Message.Contains("cl_ord_id_prefix"), e.Message);
                });

                Test("parameters refused before sending, naming the parameter", () =>
                {
                    int before = Logged(null).Count;
                    var cases = new List<KeyValuePair<Func<string>, string>>
                    {
                        Case(() => client.CancelOrder(session, "{\"order_id\":\"12\"}"), "order_id"),
                        Case(() => client.CancelOrders(session, "{\"order_id_list\":[]}"), "order_id_list"),
                        Case(() => client.ChangeLeverage(session, "{\"symbol\":\"BTC-USD\",\"leverage\":\"10\"}"), "leverage"),
                        Case(() => client.ChangeMarginMode(session, "{\"symbol\":\"BTC-USD\",\"margin_mode\":\"CROSS\"}"), "margin_mode"),
                        Case(() => client.QueryOrder(session, "{}"), "query_order"),
                        Case(() => client.QueryOrders(session, "{\"limit\":501}"), "limit"),
                        Case(() => client.QueryOpenOrders(session, "{\"symbol\":\"BTC-USD\",\"nope€\":1}"), "nope€"),
                        Case(() => client.QueryTrades(session, "{\"start\":\"yesterday\"}"), "start"),
                        Case(() => client.QueryPositions(session, "[]"), "params_json"),
                        Case(() => client.QueryBalance(session, "{\"symbol\":\"BTC-USD\"}"), "symbol"),
                        Case(() => client.QueryPositionConfig(session, null), "symbol"),
                        Case(() => client.QuerySymbolInfo(null, "{\"symbol\":null}"), "symbol"),
                        Case(() => client.QuerySymbolPrice(null, "{\"symbol\":\"BTC-USD\",\"x\":1}"), "\"x\""),
                        Case(() => client.QueryDepthBook(null, "{\"symbol\":\"BTC-USD\",\"limit\":0}"), "limit"),
                    };
                    foreach (var c in cases)
                    {
                        var e = Throws(() => c.Key());
                        Equal(PerpsCode.InvalidArgument, e.Code);
                        Expect(e.Message.Contains(c.Value), "message " + e.Message + " names " + c.Value);
                        Expect(e.HttpStatus == 0 && !e.MayHaveReachedVenue && e.XRequestId == null && e.RetryAfterMs == -1, "local: " + e);
                    }
                    try { client.QueryBalance(null); throw new Exception("a null session was accepted"); }
                    catch (ArgumentNullException) { }
                    using (var fresh = new Session())
                        Equal(PerpsCode.InvalidState, Throws(() => client.QueryOpenOrders(fresh)).Code);
                    Equal(before, Logged(null).Count);
                });

                Test("an order that times out names its ClOrdId and XRequestId, and is found", () =>
                {
                    using (var slow = new Client(baseUrl, perpsUrl, "{\"read_timeout_ms\":300,\"total_timeout_ms\":500,\"cl_ord_id_prefix\":\"cs-\"}"))
                    {
                        int ordersBefore = Logged("new_order").Count;
                        string bid = FarBid(slow);
                        Admin("faults", "{\"per_endpoint\":{\"new_order\":{\"slow_ms\":1200,\"times\":1}}}");
                        var e = Throws(() => slow.NewOrder(session, LimitBuy(bid, "0.02", "")));
                        Equal(PerpsCode.Timeout, e.Code);
                        Expect(e.MayHaveReachedVenue, "may have reached the venue");
                        Expect(e.ClOrdId != null && e.ClOrdId.StartsWith("cs-", StringComparison.Ordinal) && e.ClOrdId.Length == 29, "cl_ord_id " + e.ClOrdId);
                        Expect(e.XRequestId != null && Uuid4.IsMatch(e.XRequestId), "x-request-id " + e.XRequestId);
                        Dictionary<string, object> found = null;
                        var deadline = DateTime.UtcNow.AddSeconds(10);
                        while (found == null)
                        {
                            try { found = Obj(Json(slow.QueryOrder(session, "{\"cl_ord_id\":\"" + e.ClOrdId + "\"}"))); }
                            catch (PerpsException notYet)
                            {
                                Equal(PerpsCode.NotFound, notYet.Code);
                                Expect(DateTime.UtcNow < deadline, "found within 10 s");
                                System.Threading.Thread.Sleep(100);
                            }
                        }
                        Equal("open", (string)found["status"]);
                        Equal(0.02m, Dec(found["qty"]));
                        var orders = Logged("new_order");
                        Equal(ordersBefore + 1, orders.Count);
                        Equal(e.XRequestId, (string)Obj(Obj(orders.Last())["headers"])["x-request-id"]);
                    }
                });

                Test("rate_limit refuse: RateLimited with RetryAfterMs, nothing sent", () =>
                {
                    // The host's per-IP limit (48 in any 1.1 s) is shared by every client of the
                    // process and counts the earlier tests' requests: let them leave its window,
                    // so that what refuses below is the account's bucket.
                    System.Threading.Thread.Sleep(1150);
                    using (var paced = new Client(baseUrl, perpsUrl, "{\"rate_limit\":\"refuse\"}"))
                    {
                        int before = Logged("query_balance").Count, sent = 0;
                        PerpsException refused = null;
                        for (; sent < 400 && refused == null; sent++) // a burst of 18, then one each 45 ms
                        {
                            try { paced.QueryBalance(session); }
                            catch (PerpsException e) { refused = e; sent--; }
                        }
                        Expect(refused != null && refused.Code == PerpsCode.RateLimited, "refused " + refused);
                        Expect(sent >= 15, sent + " calls let through");
                        Expect(refused.RetryAfterMs > 0 && refused.RetryAfterMs <= 1000, "retry after " + refused.RetryAfterMs);
                        Expect(refused.HttpStatus == 0 && refused.XRequestId == null && !refused.MayHaveReachedVenue, "local: " + refused);
                        Equal(before + sent, Logged("query_balance").Count);
                    }
                });
            }
        }
    }

    static KeyValuePair<Func<string>, string> Case(Func<string> call, string needle)
    {
        return new KeyValuePair<Func<string>, string>(call, needle);
    }

    static string LimitBuy(string price, string qty, string extra)
    {
        return "{\"symbol\":\"BTC-USD\",\"side\":\"buy\",\"order_type\":\"limit\",\"qty\":\"" + qty + "\",\"price\":\""
            + price + "\",\"time_in_force\":\"gtc\",\"reduce_only\":false" + extra + "}";
    }

    /// <summary>A price far below the mark, so the moving mark does not fill the order.</summary>
    static string FarBid(Client client)
    {
        decimal mark = Dec(Obj(Json(client.QuerySymbolPrice(null, "{\"symbol\":\"BTC-USD\"}")))["mark_price"]);
        return Math.Floor(mark - 2000m).ToString(CultureInfo.InvariantCulture);
    }

    static List<long> Ids(string listAnswer)
    {
        return Rows(listAnswer).Select(o => (long)Dec(Obj(o)["id"])).ToList();
    }

    /// <summary>The venue's request log (oldest first) for /api/{endpoint}, or every /api/ request.</summary>
    static List<object> Logged(string endpoint)
    {
        return ((List<object>)Json(Admin("requests?last=1000"))).Where(r =>
        {
            string path = (string)Obj(r)["path"];
            return endpoint == null ? path.Contains("/api/") : path.EndsWith("/api/" + endpoint, StringComparison.Ordinal);
        }).ToList();
    }
}
