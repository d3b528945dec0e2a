// Client.queryFundingHistory against the sandbox venue (run by PerpsTests, with its harness):
// the venue settles funding at a rate (its admin control POST /_sandbox/funding), and the row
// that comes back must carry the payment this test computes itself, exactly (BigDecimal) —
// −qty × mark × rate from the position the venue reported, rounded half away from zero to
// nine decimals — and the balance must move by it; then paging with limit and last_id, and
// parameters refused before anything is sent.

import java.math.BigDecimal;
import java.math.RoundingMode;
import java.util.List;
import java.util.Map;
import perps.Client;
import perps.PerpsCode;
import perps.PerpsException;
import perps.Session;

final class FundingTests {
    private FundingTests() {
    }

    static void run() {
        // A fresh account: the other tests' positions do not reach it.
        Map<String, String> credential = PerpsTests.freshCredential("funding");
        if (credential == null) {
            return;
        }
        try (Client client = new Client(PerpsTests.baseUrl, PerpsTests.perpsUrl);
             Session session = Session.fromApiKey(credential.get("token"), credential.get("private_key"))) {
            PerpsTests.test("funding: a settled payment comes back, exactly, and moves the balance", () -> {
                client.newOrder(session, "{\"symbol\":\"BTC-USD\",\"side\":\"buy\",\"order_type\":\"market\","
                        + "\"qty\":\"0.0100\",\"time_in_force\":\"ioc\",\"reduce_only\":false}");
                PerpsTests.equal(0, TestJson.rows(client.queryFundingHistory(session, null)).size());
                boolean checked = false;
                // The sandbox's marks walk every 3 s: a settlement is checked when the mark read
                // before and after it is the same, and tried again otherwise.
                for (int attempt = 1; attempt <= 5 && !checked; attempt++) {
                    Map<String, Object> before = position(client, session);
                    BigDecimal balanceBefore = balance(client, session);
                    PerpsTests.admin("funding", "{\"symbol\":\"BTC-USD\",\"rate\":\"0.0001\"}");
                    Map<String, Object> after = position(client, session);
                    BigDecimal balanceAfter = balance(client, session);
                    List<Object> rows = TestJson.rows(client.queryFundingHistory(session, "{\"symbol\":\"BTC-USD\"}"));
                    PerpsTests.equal(attempt, rows.size());
                    Map<String, Object> row = TestJson.obj(rows.get(0)); // newest first
                    PerpsTests.equal("funding_fee", row.get("txn_type"));
                    PerpsTests.equal("DUSD", row.get("asset"));
                    BigDecimal paid = TestJson.dec(row.get("qty"));
                    PerpsTests.equal(0, paid.compareTo(balanceAfter.subtract(balanceBefore)));
                    if (!before.get("mark_price").equals(after.get("mark_price"))) {
                        continue;
                    }
                    BigDecimal expected = TestJson.dec(before.get("qty"))
                            .multiply(TestJson.dec(before.get("mark_price")))
                            .multiply(new BigDecimal("0.0001"))
                            .negate()
                            .setScale(9, RoundingMode.HALF_UP); // half away from zero
                    PerpsTests.expect(paid.compareTo(expected) == 0, "row qty " + paid + ", expected " + expected);
                    PerpsTests.expect(paid.signum() < 0, "a long pays at a positive rate: " + paid);
                    checked = true;
                }
                PerpsTests.expect(checked, "a settlement without a walk step during it");
            });

            PerpsTests.test("funding: limit and last_id page toward older rows", () -> {
                PerpsTests.admin("funding", "{\"rate\":\"-0.0002\"}");
                List<Long> all = PerpsTests.ids(client.queryFundingHistory(session, null));
                PerpsTests.expect(all.size() >= 2, "rows " + all);
                List<Object> first = TestJson.rows(client.queryFundingHistory(session, "{\"limit\":1}"));
                PerpsTests.equal(1, first.size());
                PerpsTests.equal(all.get(0), TestJson.dec(TestJson.obj(first.get(0)).get("id")).longValueExact());
                PerpsTests.expect(TestJson.dec(TestJson.obj(first.get(0)).get("qty")).signum() > 0,
                        "received at a negative rate");
                List<Long> rest = PerpsTests.ids(client.queryFundingHistory(session, "{\"last_id\":" + all.get(0) + "}"));
                PerpsTests.equal(all.subList(1, all.size()), rest);
            });

            PerpsTests.test("funding: bad parameters refused, nothing sent", () -> {
                int before = PerpsTests.logged(null).size();
                String[][] cases = {
                    {"{\"limit\":501}", "expected an integer from 1 to 500"},
                    {"{\"side\":\"buy\"}", "unknown parameter \"side\""},
                };
                for (String[] c : cases) {
                    PerpsException e = PerpsTests.expectThrows(() -> client.queryFundingHistory(session, c[0]));
                    PerpsTests.expect(e.getCode() == PerpsCode.INVALID_ARGUMENT && e.getMessage().contains(c[1]),
                            "refused " + e);
                    PerpsTests.expect(!e.mayHaveReachedVenue(), "local: " + e);
                }
                boolean refusedNull = false;
                try {
                    client.queryFundingHistory(null, null);
                } catch (NullPointerException e) {
                    refusedNull = true; // an account endpoint needs a session
                }
                PerpsTests.expect(refusedNull, "a null session refused");
                PerpsTests.equal(before, PerpsTests.logged(null).size());
            });
        }
    }

    static Map<String, Object> position(Client client, Session session) {
        return TestJson.obj(TestJson.rows(client.queryPositions(session, "{\"symbol\":\"BTC-USD\"}")).get(0));
    }

    static BigDecimal balance(Client client, Session session) {
        return TestJson.dec(TestJson.obj(TestJson.parse(client.queryBalance(session, null))).get("balance"));
    }
}
