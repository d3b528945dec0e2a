// The session's optional headers and the client's clock through the Java binding, against the
// sandbox venue (run by PerpsTests, with its harness), each checked by what the venue received
// or did:
//  - setImpersonate: x-impersonate on every account request (GET and body-signed POST) in the
//    venue's request log while set, on none once cleared; a value that would break the header
//    refused with nothing sent;
//  - setSessionId: the order stream logs in with that session_id, a REST order carries
//    x-session-id, and the venue routes the order's ack and outcome, keyed by the REST answer's
//    request_id, to that order stream; once cleared, neither;
//  - syncTime: the offset is small against the venue's own clock; with the venue's clock set
//    2 min ahead (beyond its 30 s timestamp window) an order is refused until syncTime, which
//    then measures that offset, and the next order is accepted.

import java.util.List;
import java.util.Map;
import perps.Client;
import perps.PerpsCode;
import perps.PerpsException;
import perps.Session;
import perps.Stream;

final class HeaderTests {
    private HeaderTests() {
    }

    /** The newest logged request to /api/{endpoint}: its headers. */
    static Map<String, Object> lastHeaders(String endpoint) throws Exception {
        List<Object> logged = PerpsTests.logged(endpoint);
        PerpsTests.expect(!logged.isEmpty(), endpoint + " in the venue's log");
        return TestJson.obj(TestJson.obj(logged.get(logged.size() - 1)).get("headers"));
    }

    static Object infoField(Session session, String name) {
        return TestJson.obj(TestJson.parse(session.info())).get(name);
    }

    static void run() {
        try (Client client = new Client(PerpsTests.baseUrl, PerpsTests.perpsUrl);
             Session session = new Session()) {
            client.signin(session, "bsc", PerpsTests.WALLET_KEY, 3600);

            PerpsTests.test("setImpersonate: x-impersonate on every account request while set, none once cleared", () -> {
                session.setImpersonate("cv_vault_java");
                PerpsTests.equal("cv_vault_java", infoField(session, "impersonate"));
                client.queryBalance(session, null);
                String placed = client.newOrder(session, PerpsTests.limitBuy(PerpsTests.farBid(client), "0.01", ""));
                Map<String, Object> order = lastHeaders("new_order");
                PerpsTests.equal("cv_vault_java", lastHeaders("query_balance").get("x-impersonate"));
                PerpsTests.equal("cv_vault_java", order.get("x-impersonate"));
                PerpsTests.equal(TestJson.flat(placed).get("request_id"), order.get("x-request-id")); // ours

                session.setImpersonate(null);
                PerpsTests.expect(infoField(session, "impersonate") == null, "info " + session.info());
                client.queryBalance(session, null);
                Map<String, Object> after = lastHeaders("query_balance");
                PerpsTests.expect(after.containsKey("authorization") && !after.containsKey("x-impersonate"),
                        "headers after clearing: " + after.keySet());

                int sent = PerpsTests.logged(null).size();
                PerpsException e = PerpsTests.expectThrows(() -> session.setImpersonate("cv_1\r\nx-evil: 1"));
                PerpsTests.equal(PerpsCode.INVALID_ARGUMENT, e.getCode());
                PerpsTests.expect(e.getMessage().contains("x-impersonate"), "message " + e.getMessage());
                PerpsTests.equal(PerpsCode.INVALID_ARGUMENT,
                        PerpsTests.expectThrows(() -> session.setImpersonate("cv_\0x")).getCode());
                PerpsTests.equal(sent, PerpsTests.logged(null).size());
            });

            PerpsTests.test("setSessionId: REST order results routed to the order stream of that session id", () -> {
                session.setSessionId("java-engine-1");
                PerpsTests.equal("java-engine-1", infoField(session, "session_id"));
                try (Stream orders = client.openOrderStream(session)) {
                    Map<String, Object> connected = StreamTests.nextWhere(orders, StreamTests.isStatus("connected"));
                    PerpsTests.equal("java-engine-1", connected.get("session_id"));

                    String requestId = TestJson.flat(client.newOrder(session,
                            PerpsTests.limitBuy(PerpsTests.farBid(client), "0.01", ""))).get("request_id");
                    Map<String, Object> logged = lastHeaders("new_order");
                    PerpsTests.equal(requestId, logged.get("x-request-id"));
                    PerpsTests.equal("java-engine-1", logged.get("x-session-id"));
                    // The venue's two frames for it, on the order stream: no request of this
                    // stream, so passed on unmatched.
                    Map<String, Object> ack = StreamTests.nextWhere(orders, StreamTests.responseTo(requestId, false));
                    Map<String, Object> outcome = StreamTests.nextWhere(orders, StreamTests.responseTo(requestId, true));
                    PerpsTests.equal(Boolean.FALSE, ack.get("matched"));
                    PerpsTests.equal(Boolean.FALSE, outcome.get("matched"));
                    PerpsTests.equal("success", outcome.get("message"));

                    // Cleared: the header is gone, and the order stream hears nothing of the next order.
                    session.setSessionId(null);
                    PerpsTests.expect(infoField(session, "session_id") == null, "info " + session.info());
                    String unrouted = TestJson.flat(client.newOrder(session,
                            PerpsTests.limitBuy(PerpsTests.farBid(client), "0.01", ""))).get("request_id");
                    PerpsTests.expect(!lastHeaders("new_order").containsKey("x-session-id"), "x-session-id after clearing");
                    long deadline = System.nanoTime() + 1_500_000_000L;
                    while (System.nanoTime() < deadline) {
                        String text = orders.next(100);
                        PerpsTests.expect(text == null || !text.contains(unrouted), "routed after clearing: " + text);
                    }
                }
            });
        }

        PerpsTests.test("syncTime: small offset; measures a venue clock 2 min ahead, after which orders are accepted", () -> {
            try (Client client = new Client(PerpsTests.baseUrl, PerpsTests.perpsUrl);
                 Session session = new Session()) {
                long offset = client.syncTime();
                PerpsTests.expect(Math.abs(offset) <= 1500, "offset " + offset + " ms against the same machine's clock");
                client.signin(session, "bsc", PerpsTests.WALLET_KEY, 3600);
                PerpsTests.admin("clock", "{\"offset_ms\":120000}");
                try {
                    long before = PerpsTests.stat("orders_accepted");
                    String order = PerpsTests.limitBuy(PerpsTests.farBid(client), "0.01", "");
                    PerpsException e = PerpsTests.expectThrows(() -> client.newOrder(session, order));
                    PerpsTests.equal(PerpsCode.HTTP_STATUS, e.getCode());
                    PerpsTests.expect(e.getHttpStatus() >= 400 && e.getHttpStatus() < 500, "refused: " + e);
                    offset = client.syncTime();
                    PerpsTests.expect(Math.abs(offset - 120000) <= 1500, "offset " + offset + " ms, the venue is 120000 ms ahead");
                    PerpsTests.equal("0", TestJson.flat(client.newOrder(session, order)).get("code"));
                    PerpsTests.equal(before + 1, PerpsTests.stat("orders_accepted"));
                } finally {
                    PerpsTests.admin("clock", "{\"offset_ms\":0}");
                }
                offset = client.syncTime();
                PerpsTests.expect(Math.abs(offset) <= 1500, "offset " + offset + " ms once the venue's clock is back");
            }
        });
    }
}
