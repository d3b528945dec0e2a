// Tests of the C# binding against the sandbox venue, which this program starts itself.
//
//   mono PerpsTests.exe PATH/TO/perps-sandbox
//
// Prints one line per test and closes with "N passed, N failed"; exits 1 on any failure.

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
    const string WalletKey = "0xac0974bec39a17e36ba4a6b4d238ff944bacb478cbed5efcae784d7bf4f2ff80"; // published test key
    const string WalletAddress = "0xf39Fd6e51aad88F6F4ce6aB8827279cffFb92266";
    const string OrderJson = "{\"symbol\":\"BTC-USD\",\"side\":\"buy\",\"order_type\":\"limit\",\"qty\":\"0.01\","
        + "\"price\":\"65000\",\"time_in_force\":\"gtc\",\"reduce_only\":false}";
    static readonly Regex Uuid4 = new Regex("^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$");

    static int passed, failed;
    static string baseUrl, perpsUrl, adminUrl;

    // ---- the README's "Use from C#" snippet, verbatim ----
    static string PlaceOrder(string baseUrl, string perpsUrl, string walletKey, string orderJson)
    {
        using (var client = new Client(baseUrl, perpsUrl))
        using (var session = new Session())
        {
            string address = Wallet.Address("bsc", walletKey);
            string payload = client.PrepareSignin(session, "bsc", address); // challenge verified
            string signature = Wallet.Sign("bsc", walletKey, payload);      // or an external wallet
            client.Login(session, signature, 3600);
            return client.NewOrder(session, orderJson); // PerpsException: Code, HttpStatus, Body,
        }                                               // MayHaveReachedVenue (then query first)
    }
    // ---- end of snippet ----

    static int Main(string[] args)
    {
        if (args.Length != 1)
        {
            Console.Error.WriteLine("usage: mono PerpsTests.exe PATH/TO/perps-sandbox");
            return 2;
        }
        Process sandbox;
        try { sandbox = StartSandbox(args[0]); }
        catch (Exception e)
        {
            Console.WriteLine("FAIL start the sandbox: " + e.Message);
            Console.WriteLine("0 passed, 1 failed");
            return 1;
        }
        try { RunAll(); }
        finally { StopSandbox(sandbox); }
        Console.WriteLine(passed + " passed, " + failed + " failed");
        return failed == 0 ? 0 : 1;
    }

    static void RunAll()
    {
        Test("version is MAJOR.MINOR.PATCH", () =>
            Expect(Regex.IsMatch(Library.Version, @"^\d+\.\d+\.\d+$"), "version " + Library.Version));

        Test("wallet address of the bsc test key", () =>
            Equal(WalletAddress, Wallet.Address("bsc", WalletKey)));

        Test("README flow: sign-in bsc, login, order", () =>
        {
            long before = Stat("orders_accepted");
            string answer = PlaceOrder(baseUrl, perpsUrl, WalletKey, OrderJson);
            Expect(answer.Contains("\"code\":0"), "answer " + answer);
            Equal(before + 1, Stat("orders_accepted"));
        });

        using (var client = new Client(baseUrl, perpsUrl))
        using (var session = new Session())
        {
            Test("sign-in bsc step by step, session state", () =>
            {
                string payload = client.PrepareSignin(session, "bsc", WalletAddress);
                Expect(payload.Contains("\"message\""), "payload has no message: " + payload);
                Expect(session.Info.Contains("\"pending_signin\":true"), "info " + session.Info);
                string signature = Wallet.Sign("bsc", WalletKey, payload);
                Expect(Regex.IsMatch(signature, "^0x[0-9a-f]{130}$"), "signature " + signature);
                string login = client.Login(session, signature, 3600);
                Expect(login.Length > 0, "empty login answer");
                string info = session.Info;
                Expect(info.Contains("\"has_token\":true"), "info " + info);
                Expect(info.Contains(WalletAddress), "info " + info);
                Expect(session.Token.Length > 0, "empty token");
            });

            Test("one-call sign-in and an order", () =>
            {
                client.Signin(session, "bsc", WalletKey, 3600);
                string answer = client.NewOrder(session, OrderJson);
                var json = FlatJson(answer);
                Equal("0", json["code"]);
                Expect(Uuid4.IsMatch(json["request_id"]), "request_id " + json["request_id"]);
            });

            Test("error: HTTP 500 from the venue (fault) -> HttpStatus, flag true", () =>
            {
                Admin("faults", "{\"status\":500}");
                try
                {
                    var e = Throws(() => client.NewOrder(session, OrderJson));
                    Equal(PerpsCode.HttpStatus, e.Code);
                    Equal(500, e.HttpStatus);
                    Expect(e.Body != null && e.Body.Contains("sandbox fault"), "body " + e.Body);
                    Expect(e.MayHaveReachedVenue, "a 5xx may have reached the venue");
                }
                finally { Admin("faults", "{}"); }
            });

            Test("error: HTTP 404 from the venue (fault) -> flag false", () =>
            {
                Admin("faults", "{\"status\":404}");
                try
                {
                    var e = Throws(() => client.NewOrder(session, OrderJson));
                    Equal(PerpsCode.HttpStatus, e.Code);
                    Equal(404, e.HttpStatus);
                    Expect(!e.MayHaveReachedVenue, "a 4xx was refused");
                }
                finally { Admin("faults", "{}"); }
            });

            Test("error: invalid order names the (UTF-8) field, nothing sent", () =>
            {
                long before = Stat("orders_received");
                string bad = OrderJson.Replace("}", ",\"prix€😀\":\"1\"}");
                var e = Throws(() => client.NewOrder(session, bad));
                Equal(PerpsCode.InvalidOrder, e.Code);
                Expect(e.Message.Contains("prix€😀"), "message " + e.Message);
                Equal(0, e.HttpStatus);
                Expect(e.Body == null, "no body");
                Expect(!e.MayHaveReachedVenue, "nothing was sent");
                Equal(before, Stat("orders_received"));
            });

            Test("error: order after logout is InvalidState", () =>
            {
                session.Logout();
                var e = Throws(() => client.NewOrder(session, OrderJson));
                Equal(PerpsCode.InvalidState, e.Code);
                Expect(!e.MayHaveReachedVenue, "nothing was sent");
            });

            Test("body signature: JSON of the four headers, UUID v4, 64-byte base64", () =>
            {
                var headers = FlatJson(session.SignBody(OrderJson));
                Equal(4, headers.Count);
                Equal("v1", headers["x-request-sign-version"]);
                Expect(Uuid4.IsMatch(headers["x-request-id"]), "x-request-id " + headers["x-request-id"]);
                long ts = long.Parse(headers["x-request-timestamp"]);
                long now = (long)(DateTime.UtcNow - new DateTime(1970, 1, 1, 0, 0, 0, DateTimeKind.Utc)).TotalMilliseconds;
                Expect(Math.Abs(now - ts) < 60000, "timestamp " + ts + " vs now " + now);
                Equal(64, Convert.FromBase64String(headers["x-request-signature"]).Length);
            });

            Test("body signature at a given id and time is deterministic", () =>
            {
                const string id = "0b4f4a3e-8c1d-4f6e-9a2b-3c4d5e6f7a8b";
                var a = FlatJson(session.SignBodyAt("{\"note\":\"café €\"}", id, 1700000000000));
                var b = FlatJson(session.SignBodyAt("{\"note\":\"café €\"}", id, 1700000000000));
                var c = FlatJson(session.SignBodyAt("{\"note\":\"cafe €\"}", id, 1700000000000));
                Equal(id, a["x-request-id"]);
                Equal("1700000000000", a["x-request-timestamp"]);
                Equal(a["x-request-signature"], b["x-request-signature"]);
                Expect(a["x-request-signature"] != c["x-request-signature"], "different bodies, same signature");
            });

            Test("body signature into the fixed-size struct (size_t as UIntPtr)", () =>
            {
                var sig = session.SignBodyInto(Encoding.UTF8.GetBytes(OrderJson));
                Equal("v1", sig.Version);
                Expect(Uuid4.IsMatch(sig.RequestId), "request id " + sig.RequestId);
                Expect(Regex.IsMatch(sig.Timestamp, @"^\d{13}$"), "timestamp " + sig.Timestamp);
                Equal(64, Convert.FromBase64String(sig.Signature).Length);
                Equal(64, Convert.FromBase64String(session.SignBodyInto(new byte[0]).Signature).Length);
            });

            Test("order serialisation is the compact body", () =>
                Equal(OrderJson, Order.Serialize(OrderJson.Replace(",", ", "))));

            Test("a string that is not valid Unicode is refused before the call", () =>
            {
                try { Order.Serialize("{\"symbol\":\"\uD800\"}"); throw new Exception("a lone surrogate was accepted"); }
                catch (ArgumentException) { } // EncoderFallbackException: not sent as '?'
            });

            Test("a string holding a NUL is InvalidArgument, not signed up to the NUL", () =>
            {
                var e = Throws(() => session.SignBodyAt("{\"a\":1}\0{\"b\":2}", "0b4f4a3e-8c1d-4f6e-9a2b-3c4d5e6f7a8b", 1));
                Equal(PerpsCode.InvalidArgument, e.Code);
                Expect(e.Message.Contains("NUL"), "message " + e.Message);
                Equal(PerpsCode.InvalidArgument, Throws(() => Wallet.Address("bsc", WalletKey + "\0")).Code);
            });

            Test("NULL argument is InvalidArgument naming it", () =>
            {
                var e = Throws(() => Wallet.Address(null, WalletKey));
                Equal(PerpsCode.InvalidArgument, e.Code);
                Expect(e.Message.Contains("chain"), "message " + e.Message);
            });
        }

        Test("handles: Dispose is idempotent, use after Dispose is refused", () =>
        {
            var session = new Session();
            string id = session.RequestId;
            Expect(id.Length >= 32, "request id " + id);
            session.Dispose();
            session.Dispose();
            try { var unused = session.RequestId; throw new Exception("no exception after Dispose: " + unused); }
            catch (ObjectDisposedException) { }
        });

        Test("client options are checked (unknown option refused)", () =>
        {
            var e = Throws(() => new Client(baseUrl, perpsUrl, "{\"no_such_option\":1}").Dispose());
            Equal(PerpsCode.InvalidArgument, e.Code);
        });

        TradingTests();
        StreamTests();
        FundingTests();
        SecretTests();
    }

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

    // ---- the sandbox ----

    static Process StartSandbox(string path)
    {
        var info = new ProcessStartInfo(path, "--port 0 --exit-on-stdin-eof")
        {
            UseShellExecute = false,
            RedirectStandardOutput = true,
            RedirectStandardInput = true, // closed when this program ends: the sandbox exits too
        };
        var p = Process.Start(info);
        string line = p.StandardOutput.ReadLine();
        if (line == null) throw new Exception("the sandbox printed nothing");
        var urls = FlatJson(line);
        baseUrl = urls["base_url"];
        perpsUrl = urls["perps_url"];
        adminUrl = urls["admin_url"];
        Console.WriteLine("sandbox: " + line);
        return p;
    }

    static void StopSandbox(Process p)
    {
        try
        {
            if (!p.HasExited) p.Kill();
            p.WaitForExit();
        }
        catch (Exception e) { Console.Error.WriteLine("stopping the sandbox: " + e.Message); }
    }

    static string Admin(string name, string postJson = null)
    {
        using (var web = new WebClient())
        {
            web.Proxy = null;
            web.Encoding = Encoding.UTF8;
            if (postJson == null) return web.DownloadString(adminUrl + "/" + name);
            web.Headers[HttpRequestHeader.ContentType] = "application/json";
            return web.UploadString(adminUrl + "/" + name, "POST", postJson);
        }
    }

    static long Stat(string name) { return long.Parse(FlatJson(Admin("stats"))[name]); }

    // ---- a tiny test harness ----

    static void Test(string name, Action body)
    {
        try
        {
            body();
            passed++;
            Console.WriteLine("ok   " + name);
        }
        catch (Exception e)
        {
            failed++;
            Console.WriteLine("FAIL " + name + ": " + e);
        }
    }

    static void Expect(bool condition, string what)
    {
        if (!condition) throw new Exception("expected: " + what);
    }

    static void Equal<T>(T expected, T actual)
    {
        if (!EqualityComparer<T>.Default.Equals(expected, actual))
            throw new Exception("expected " + expected + ", got " + actual);
    }

    static PerpsException Throws(Action call)
    {
        try { call(); }
        catch (PerpsException e) { return e; }
        throw new Exception("expected a PerpsException");
    }

    // ---- JSON: just enough to read the venue's answers (numbers as decimal) ----

    static Dictionary<string, object> Obj(object v) { return (Dictionary<string, object>)v; }

    /// <summary>A list answer: a bare array, or the result of a {page_size, result, total} envelope.</summary>
    static List<object> Rows(string answer)
    {
        var v = Json(answer);
        return v as List<object> ?? (List<object>)Obj(v)["result"];
    }

    /// <summary>A decimal the venue may write as a string or a number, exactly.</summary>
    static decimal Dec(object v)
    {
        if (v is decimal) return (decimal)v;
        return decimal.Parse((string)v, NumberStyles.Float, CultureInfo.InvariantCulture);
    }

    static object Json(string text)
    {
        int i = 0;
        var v = JsonValue(text, ref i);
        JsonSpace(text, ref i);
        if (i != text.Length) throw new FormatException("trailing characters in " + text);
        return v;
    }

    static void JsonSpace(string t, ref int i) { while (i < t.Length && char.IsWhiteSpace(t[i])) i++; }

    static object JsonValue(string t, ref int i)
    {
        JsonSpace(t, ref i);
        char c = t[i];
        if (c == '{')
        {
            var o = new Dictionary<string, object>();
            i++;
            JsonSpace(t, ref i);
            if (t[i] == '}') { i++; return o; }
            while (true)
            {
                JsonSpace(t, ref i);
                string key = (string)JsonValue(t, ref i);
                JsonSpace(t, ref i);
                if (t[i++] != ':') throw new FormatException("expected ':' in " + t);
                o[key] = JsonValue(t, ref i);
                JsonSpace(t, ref i);
                if (t[i] == ',') { i++; continue; }
                if (t[i++] != '}') throw new FormatException("expected '}' in " + t);
                return o;
            }
        }
        if (c == '[')
        {
            var a = new List<object>();
            i++;
            JsonSpace(t, ref i);
            if (t[i] == ']') { i++; return a; }
            while (true)
            {
                a.Add(JsonValue(t, ref i));
                JsonSpace(t, ref i);
                if (t[i] == ',') { i++; continue; }
                if (t[i++] != ']') throw new FormatException("expected ']' in " + t);
                return a;
            }
        }
        if (c == '"')
        {
            var sb = new StringBuilder();
            i++;
            while (t[i] != '"')
            {
                if (t[i] == '\\')
                {
                    char e = t[++i];
                    if (e == 'u') { sb.Append((char)Convert.ToInt32(t.Substring(i + 1, 4), 16)); i += 4; }
                    else sb.Append(e == 'n' ? '\n' : e == 't' ? '\t' : e == 'r' ? '\r' : e == 'b' ? '\b' : e == 'f' ? '\f' : e);
                }
                else sb.Append(t[i]);
                i++;
            }
            i++;
            return sb.ToString();
        }
        int start = i;
        while (i < t.Length && ",]} \n\r\t".IndexOf(t[i]) < 0) i++;
        string word = t.Substring(start, i - start);
        if (word == "null") return null;
        if (word == "true") return true;
        if (word == "false") return false;
        return decimal.Parse(word, NumberStyles.Float, CultureInfo.InvariantCulture);
    }

    /// <summary>A flat JSON object (no nesting) as strings: string values unescaped, other
    /// values as their text. Enough for the headers, the stats and the sandbox's URL line.</summary>
    static Dictionary<string, string> FlatJson(string text)
    {
        var result = new Dictionary<string, string>();
        int i = 0;
        Func<char> peek = () => { while (i < text.Length && char.IsWhiteSpace(text[i])) i++; return i < text.Length ? text[i] : '\0'; };
        Action<char> eat = c => { if (peek() != c) throw new FormatException("expected '" + c + "' at " + i + " in " + text); i++; };
        Func<string> str = () =>
        {
            eat('"');
            var sb = new StringBuilder();
            while (text[i] != '"')
            {
                if (text[i] == '\\')
                {
                    char e = text[++i];
                    if (e == 'u') { sb.Append((char)Convert.ToInt32(text.Substring(i + 1, 4), 16)); i += 4; }
                    else sb.Append(e == 'n' ? '\n' : e == 't' ? '\t' : e == 'r' ? '\r' : e == 'b' ? '\b' : e == 'f' ? '\f' : e);
                }
                else sb.Append(text[i]);
                i++;
            }
            i++;
            return sb.ToString();
        };
        eat('{');
        if (peek() == '}') return result;
        while (true)
        {
            string key = str();
            eat(':');
            if (peek() == '"') result.Add(key, str());
            else
            {
                int start = i;
                while (i < text.Length && text[i] != ',' && text[i] != '}')
                {
                    if (text[i] == '{' || text[i] == '[') throw new FormatException("nested value in " + text);
                    i++;
                }
                result.Add(key, text.Substring(start, i - start).Trim());
            }
            if (peek() == '}') return result;
            eat(',');
        }
    }
}
