// The session's optional headers and the client's clock through the C# binding, against the
// sandbox venue (part of PerpsTests), each checked by what the venue received or did:
//  - SetImpersonate: x-impersonate on every account request (GET and body-signed POST) in the
//    venue's request log while set, on none once cleared; a value that would break the header
//    refused with nothing sent;
//  - SetSessionId: the order stream logs in with that session_id, a REST order carries
//    x-session-id, and the venue routes the order's ack and outcome, keyed by the REST answer's
//    request_id, to that order stream; once cleared, neither;
//  - SyncTime: the offset is small against the venue's own clock; with the venue's clock set
//    2 min ahead (beyond its 30 s timestamp window) an order is refused until SyncTime, which
//    then measures that offset, and the next order is accepted.

using System;
using System.Collections.Generic;
using System.Diagnostics;
using System.Linq;
using Perps;

static partial class PerpsTests
{
    /// <summary>A logged request's headers.</summary>
    static Dictionary<string, object> Headers(object logged) { return Obj(Obj(logged)["headers"]); }

    static void HeaderTests()
    {
        using (var client = new Client(baseUrl, perpsUrl))
        using (var session = new Session())
        {
            client.Signin(session, "bsc", WalletKey, 3600);

            Test("SetImpersonate: x-impersonate on every account request while set, none once cleared", () =>
            {
                session.SetImpersonate("cv_vault_cs");
                Equal("cv_vault_cs", (string)Obj(Json(session.Info))["impersonate"]);
                client.QueryBalance(session);
                string placed = client.NewOrder(session, LimitBuy(FarBid(client), "0.01", ""));
                var balance = Headers(Logged("query_balance").Last());
                var order = Headers(Logged("new_order").Last());
                Equal("cv_vault_cs", (string)balance["x-impersonate"]);
                Equal("cv_vault_cs", (string)order["x-impersonate"]);
                Equal(FlatJson(placed)["request_id"], (string)order["x-request-id"]); // the logged order is ours

                session.SetImpersonate(null);
                Expect(Obj(Json(session.Info))["impersonate"] == null, "info " + session.Info);
                client.QueryBalance(session);
                var after = Headers(Logged("query_balance").Last());
                Expect(after.ContainsKey("authorization") && !after.ContainsKey("x-impersonate"), "headers after clearing");

                int sent = Logged(null).Count;
                var e = Throws(() => session.SetImpersonate("cv_1\r\nx-evil: 1"));
                Equal(PerpsCode.InvalidArgument, e.Code);
                Expect(e.Message.Contains("x-impersonate"), "message " + e.Message);
                Equal(PerpsCode.InvalidArgument, Throws(() => session.SetImpersonate("cv_\0x")).Code);
                Equal(sent, Logged(null).Count);
            });

            Test("SetSessionId: REST order results routed to the order stream of that session id", () =>
            {
                session.SetSessionId("cs-engine-1");
                Equal("cs-engine-1", (string)Obj(Json(session.Info))["session_id"]);
                using (var orders = client.OpenOrderStream(session))
                {
                    var connected = NextWhere(orders, IsStatus("connected"));
                    Equal("cs-engine-1", (string)connected["session_id"]);

                    string requestId = FlatJson(client.NewOrder(session, LimitBuy(FarBid(client), "0.01", "")))["request_id"];
                    var logged = Headers(Logged("new_order").Last());
                    Equal(requestId, (string)logged["x-request-id"]);
                    Equal("cs-engine-1", (string)logged["x-session-id"]);
                    // The venue's two frames for it, on the order stream: no request of this
                    // stream, so passed on unmatched.
                    var ack = NextWhere(orders, ResponseTo(requestId, false));
                    var outcome = NextWhere(orders, ResponseTo(requestId, true));
                    Expect(!(bool)ack["matched"] && !(bool)outcome["matched"], "matched: " + ack["matched"] + ", " + outcome["matched"]);
                    Equal("success", (string)outcome["message"]);

                    // Cleared: the header is gone, and the order stream hears nothing of the next order.
                    session.SetSessionId(null);
                    Expect(Obj(Json(session.Info))["session_id"] == null, "info " + session.Info);
                    string unrouted = FlatJson(client.NewOrder(session, LimitBuy(FarBid(client), "0.01", "")))["request_id"];
                    Expect(!Headers(Logged("new_order").Last()).ContainsKey("x-session-id"), "x-session-id sent after clearing");
                    var clock = Stopwatch.StartNew();
                    while (clock.ElapsedMilliseconds < 1500)
                    {
                        string text = orders.Next(100);
                        Expect(text == null || !text.Contains(unrouted), "routed after clearing: " + text);
                    }
                }
            });
        }

        Test("SyncTime: small offset; measures a venue clock 2 min ahead, after which orders are accepted again", () =>
        {
            using (var client = new Client(baseUrl, perpsUrl))
            using (var session = new Session())
            {
                long offset = client.SyncTime();
                Expect(Math.Abs(offset) <= 1500, "offset " + offset + " ms against the same machine's clock");
                client.Signin(session, "bsc", WalletKey, 3600);
                Admin("clock", "{\"offset_ms\":120000}");
                try
                {
                    long before = Stat("orders_accepted");
                    var e = Throws(() => client.NewOrder(session, LimitBuy(FarBid(client), "0.01", "")));
                    Equal(PerpsCode.HttpStatus, e.Code);
                    Expect(e.HttpStatus >= 400 && e.HttpStatus < 500, "refused: " + e);
                    offset = client.SyncTime();
                    Expect(Math.Abs(offset - 120000) <= 1500, "offset " + offset + " ms, the venue's clock is 120000 ms ahead");
                    var placed = FlatJson(client.NewOrder(session, LimitBuy(FarBid(client), "0.01", "")));
                    Equal("0", placed["code"]);
                    Equal(before + 1, Stat("orders_accepted"));
                }
                finally { Admin("clock", "{\"offset_ms\":0}"); }
                offset = client.SyncTime();
                Expect(Math.Abs(offset) <= 1500, "offset " + offset + " ms once the venue's clock is back");
            }
        });
    }
}
