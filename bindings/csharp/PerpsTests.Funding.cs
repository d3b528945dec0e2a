// Client.QueryFundingHistory against the sandbox venue (part of PerpsTests): the venue settles
// funding at a rate (its admin control POST /_sandbox/funding), and the row that comes back
// must carry the payment this test computes itself, exactly (decimal) — −qty × mark × rate
// from the position the venue reported, rounded half away from zero to nine decimals — and
// the balance must move by it; then paging with limit and last_id, and parameters refused
// before anything is sent.

using System;
using System.Linq;
using Perps;

static partial class PerpsTests
{
    static void FundingTests()
    {
        // A fresh account: the other tests' positions do not reach it.
        var credential = FlatJson(Admin("api-key", "{}"));
        using (var client = new Client(baseUrl, perpsUrl))
        using (var session = Session.FromApiKey(credential["token"], credential["private_key"]))
        {
            Test("funding: a settled payment comes back, exactly, and moves the balance", () =>
            {
                client.NewOrder(session, "{\"symbol\":\"BTC-USD\",\"side\":\"buy\",\"order_type\":\"market\",\"qty\":\"0.0100\",\"time_in_force\":\"ioc\",\"reduce_only\":false}");
                Equal(0, Rows(client.QueryFundingHistory(session)).Count);
                Func<System.Collections.Generic.Dictionary<string, object>> position =
                    () => Obj(Rows(client.QueryPositions(session, "{\"symbol\":\"BTC-USD\"}"))[0]);
                Func<decimal> balance = () => Dec(Obj(Json(client.QueryBalance(session)))["balance"]);
                bool checkedOne = false;
                // The sandbox's marks walk every 3 s: a settlement is checked when the mark read
                // before and after it is the same, and tried again otherwise.
                for (int attempt = 1; attempt <= 5 && !checkedOne; attempt++)
                {
                    var before = position();
                    decimal balanceBefore = balance();
                    Admin("funding", "{\"symbol\":\"BTC-USD\",\"rate\":\"0.0001\"}");
                    var after = position();
                    decimal balanceAfter = balance();
                    var rows = Rows(client.QueryFundingHistory(session, "{\"symbol\":\"BTC-USD\"}"));
                    Equal(attempt, rows.Count);
                    var row = Obj(rows[0]); // newest first
                    Equal("funding_fee", (string)row["txn_type"]);
                    Equal("DUSD", (string)row["asset"]);
                    decimal paid = Dec(row["qty"]);
                    Equal(paid, balanceAfter - balanceBefore);
                    if ((string)before["mark_price"] != (string)after["mark_price"]) continue;
                    decimal expected = Math.Round(-Dec(before["qty"]) * Dec(before["mark_price"]) * 0.0001m, 9,
                        MidpointRounding.AwayFromZero);
                    Equal(expected, paid);
                    Expect(paid < 0, "a long pays at a positive rate: " + paid);
                    checkedOne = true;
                }
                Expect(checkedOne, "a settlement without a walk step during it");
            });

            Test("funding: limit and last_id page toward older rows", () =>
            {
                Admin("funding", "{\"rate\":\"-0.0002\"}");
                var all = Ids(client.QueryFundingHistory(session));
                Expect(all.Count >= 2, "rows " + all.Count);
                var first = Rows(client.QueryFundingHistory(session, "{\"limit\":1}"));
                Equal(1, first.Count);
                Equal(all[0], (long)Dec(Obj(first[0])["id"]));
                Expect(Dec(Obj(first[0])["qty"]) > 0, "received at a negative rate");
                var rest = Ids(client.QueryFundingHistory(session, "{\"last_id\":" + all[0] + "}"));
                Expect(rest.SequenceEqual(all.Skip(1)), "after last_id: " + string.Join(",", rest));
            });

            Test("funding: bad parameters refused, nothing sent", () =>
            {
                int before = Logged(null).Count;
                foreach (var c in new[] {
                    Case(() => client.QueryFundingHistory(session, "{\"limit\":501}"), "expected an integer from 1 to 500"),
                    Case(() => client.QueryFundingHistory(session, "{\"side\":\"buy\"}"), "unknown parameter \"side\""),
                })
                {
                    var e = Throws(() => c.Key());
                    Expect(e.Code == PerpsCode.InvalidArgument && e.Message.Contains(c.Value), "refused " + e);
                    Expect(!e.MayHaveReachedVenue, "local: " + e);
                }
                bool refusedNull = false;
                try { client.QueryFundingHistory(null); }
                catch (ArgumentNullException) { refusedNull = true; } // an account endpoint needs a session
                Expect(refusedNull, "a null session refused");
                Equal(before, Logged(null).Count);
            });
        }
    }
}
