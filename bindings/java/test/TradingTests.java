// The trading loop through the Java binding against the sandbox venue (run by PerpsTests,
// with its harness): every endpoint method, and the error's new fields (getClOrdId,
// getXRequestId, getRetryAfterMs).

import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.math.BigDecimal;
import java.math.BigInteger;
import java.math.RoundingMode;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.security.KeyFactory;
import java.security.PublicKey;
import java.security.Signature;
import java.security.spec.X509EncodedKeySpec;
import java.util.ArrayList;
import java.util.Base64;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.regex.Pattern;
import perps.BodySignature;
import perps.Client;
import perps.Order;
import perps.Perps;
import perps.PerpsCode;
import perps.PerpsException;
import perps.Session;
import perps.Wallet;

final class TradingTests {
    private TradingTests() {
    }

    static void run() {
        PerpsTests.test("codes 13 and 14; the error's new fields default to unknown", () -> {
            PerpsTests.equal(13, PerpsCode.NOT_FOUND.value());
            PerpsTests.equal(14, PerpsCode.RATE_LIMITED.value());
            PerpsTests.equal(PerpsCode.RATE_LIMITED, PerpsCode.of(14));
            PerpsException e = new PerpsException(PerpsCode.TIMEOUT, 7, "m", 0, null, true);
            PerpsTests.expect(e.getClOrdId() == null && e.getXRequestId() == null && e.getRetryAfterMs() == -1, "defaults " + e);
        });

        try (Client client = new Client(PerpsTests.baseUrl, PerpsTests.perpsUrl)) {
            PerpsTests.test("public endpoints without a session; depth book sorted", () -> {
                List<String> symbols = new ArrayList<>();
                for (Object r : TestJson.rows(client.querySymbolInfo(null, null))) {
                    symbols.add((String) TestJson.obj(r).get("symbol"));
                }
                for (String want : new String[] {"BTC-USD", "ETH-USD", "XAG-USD"}) {
                    PerpsTests.expect(symbols.contains(want), "symbols " + symbols);
                }
                List<Object> xag = TestJson.rows(client.querySymbolInfo(null, "{\"symbol\":\"XAG-USD\"}"));
                PerpsTests.equal(1, xag.size());
                PerpsTests.equal("XAG-USD", TestJson.obj(xag.get(0)).get("symbol"));
                Map<String, Object> price = TestJson.obj(TestJson.parse(client.querySymbolPrice(null, "{\"symbol\":\"BTC-USD\"}")));
                PerpsTests.expect(TestJson.dec(price.get("mark_price")).signum() > 0, "mark_price " + price);
                // XAG-USD's bids (100.04 … 99.95 around the default mark) sort differently as strings.
                for (String symbol : new String[] {"XAG-USD", "BTC-USD"}) {
                    String text = client.queryDepthBook(null, "{\"symbol\":\"" + symbol + "\"}");
                    Map<String, Object> book = TestJson.obj(TestJson.parse(text));
                    List<BigDecimal> bids = new ArrayList<>();
                    List<BigDecimal> asks = new ArrayList<>();
                    for (Object l : (List<?>) book.get("bids")) {
                        bids.add(TestJson.dec(((List<?>) l).get(0)));
                    }
                    for (Object l : (List<?>) book.get("asks")) {
                        asks.add(TestJson.dec(((List<?>) l).get(0)));
                    }
                    PerpsTests.expect(!bids.isEmpty() && !asks.isEmpty() && bids.get(0).compareTo(asks.get(0)) < 0, "book " + text);
                    for (int i = 1; i < bids.size(); i++) {
                        PerpsTests.expect(bids.get(i - 1).compareTo(bids.get(i)) > 0, "bids high to low: " + text);
                    }
                    for (int i = 1; i < asks.size(); i++) {
                        PerpsTests.expect(asks.get(i - 1).compareTo(asks.get(i)) < 0, "asks low to high: " + text);
                    }
                }
                for (String name : new String[] {"query_symbol_info", "query_symbol_price", "query_depth_book"}) {
                    List<Object> sent = PerpsTests.logged(name);
                    PerpsTests.expect(!sent.isEmpty(), name + " in the venue's log");
                    for (Object r : sent) {
                        PerpsTests.expect(!TestJson.obj(TestJson.obj(r).get("headers")).containsKey("authorization"), name + " sent a bearer token");
                    }
                }
                try (Session session = new Session()) {
                    PerpsTests.expect(client.querySymbolPrice(session, "{\"symbol\":\"ETH-USD\"}").contains("ETH-USD"), "with a session");
                }
            });

            try (Session session = new Session()) {
                client.signin(session, "bsc", PerpsTests.WALLET_KEY, 3600);

                PerpsTests.test("trading loop: set-up, order by cl_ord_id, open orders, cancel, NOT_FOUND again", () -> {
                    PerpsTests.equal(BigDecimal.ZERO, TestJson.dec(TestJson.obj(TestJson.parse(client.changeMarginMode(session,
                            "{\"symbol\":\"BTC-USD\",\"margin_mode\":\"cross\"}"))).get("code")));
                    PerpsTests.equal(BigDecimal.ZERO, TestJson.dec(TestJson.obj(TestJson.parse(client.changeLeverage(session,
                            "{\"symbol\":\"BTC-USD\",\"leverage\":10}"))).get("code")));
                    Map<String, Object> config = TestJson.obj(TestJson.parse(client.queryPositionConfig(session, "{\"symbol\":\"BTC-USD\"}")));
                    PerpsTests.equal(0, TestJson.dec(config.get("leverage")).compareTo(BigDecimal.TEN));
                    PerpsTests.equal("cross", config.get("margin_mode"));

                    String bid = PerpsTests.farBid(client);
                    Map<String, Object> placed = TestJson.obj(TestJson.parse(client.newOrder(session, PerpsTests.limitBuy(bid, "0.01", ""))));
                    String cl = (String) placed.get("cl_ord_id");
                    PerpsTests.expect(cl != null && cl.length() >= 26, "cl_ord_id " + cl);
                    Map<String, Object> order = TestJson.obj(TestJson.parse(client.queryOrder(session, "{\"cl_ord_id\":\"" + cl + "\"}")));
                    long id = TestJson.dec(order.get("id")).longValueExact();
                    PerpsTests.expect(id > (1L << 32), "id above 2^32: " + id);
                    PerpsTests.equal("open", order.get("status"));
                    PerpsTests.equal(cl, TestJson.obj(TestJson.parse(client.queryOrder(session, "{\"order_id\":" + id + "}"))).get("cl_ord_id"));
                    PerpsTests.expect(PerpsTests.ids(client.queryOpenOrders(session, "{\"symbol\":\"BTC-USD\"}")).contains(id), "listed as open");
                    PerpsTests.expect(PerpsTests.ids(client.queryOpenOrders(session, null)).contains(id), "listed as open (no filter)");
                    PerpsTests.equal(BigDecimal.ZERO, TestJson.dec(TestJson.obj(TestJson.parse(client.cancelOrder(session, "{\"cl_ord_id\":\"" + cl + "\"}"))).get("code")));
                    PerpsTests.equal("canceled", TestJson.obj(TestJson.parse(client.queryOrder(session, "{\"order_id\":" + id + "}"))).get("status"));
                    PerpsTests.expect(!PerpsTests.ids(client.queryOpenOrders(session, null)).contains(id), "no longer open");
                    PerpsTests.expect(PerpsTests.ids(client.queryOrders(session, "{\"symbol\":\"BTC-USD\",\"status\":\"canceled\",\"limit\":50}"))
                            .contains(id), "in the history");

                    PerpsException e = PerpsTests.expectThrows(() -> client.cancelOrder(session, "{\"order_id\":" + id + "}"));
                    PerpsTests.equal(PerpsCode.NOT_FOUND, e.getCode());
                    PerpsTests.equal(404, e.getHttpStatus());
                    PerpsTests.expect(e.getBody() != null && e.getBody().contains("not found"), "body " + e.getBody());
                    PerpsTests.expect(e.getClOrdId() == null && e.getRetryAfterMs() == -1, "fields " + e);
                    PerpsTests.expect(e.getXRequestId() != null && PerpsTests.UUID4.matcher(e.getXRequestId()).matches(), "x-request-id " + e.getXRequestId());
                    List<Object> cancels = PerpsTests.logged("cancel_order");
                    Map<String, Object> last = TestJson.obj(cancels.get(cancels.size() - 1));
                    PerpsTests.equal(e.getXRequestId(), TestJson.obj(last.get("headers")).get("x-request-id"));
                    PerpsTests.equal(0, TestJson.dec(last.get("status")).compareTo(BigDecimal.valueOf(404)));

                    PerpsException get = PerpsTests.expectThrows(() -> client.queryOrder(session, "{\"order_id\":4294967299999}"));
                    PerpsTests.equal(PerpsCode.NOT_FOUND, get.getCode());
                    PerpsTests.expect(get.getXRequestId() == null, "a GET carries no x-request-id");
                });

                PerpsTests.test("fills: market order, trades, positions, balance; batch cancel", () -> {
                    client.newOrder(session, "{\"symbol\":\"BTC-USD\",\"side\":\"buy\",\"order_type\":\"market\","
                            + "\"qty\":\"0.01\",\"time_in_force\":\"ioc\",\"reduce_only\":false}");
                    List<Object> trades = TestJson.rows(client.queryTrades(session, "{\"symbol\":\"BTC-USD\",\"side\":\"buy\"}"));
                    PerpsTests.expect(!trades.isEmpty() && TestJson.dec(TestJson.obj(trades.get(0)).get("qty")).signum() > 0, "a fill");
                    PerpsTests.expect(!TestJson.rows(client.queryTrades(session, null)).isEmpty(), "fills without a filter");
                    boolean longBtc = false;
                    for (Object p : TestJson.rows(client.queryPositions(session, "{\"symbol\":\"BTC-USD\"}"))) {
                        longBtc |= "BTC-USD".equals(TestJson.obj(p).get("symbol")) && TestJson.dec(TestJson.obj(p).get("qty")).signum() > 0;
                    }
                    PerpsTests.expect(longBtc, "a long position");
                    PerpsTests.expect(!TestJson.rows(client.queryPositions(session, null)).isEmpty(), "positions without a filter");
                    Map<String, Object> balance = TestJson.obj(TestJson.parse(client.queryBalance(session, null)));
                    PerpsTests.expect(balance.containsKey("equity") && TestJson.dec(balance.get("balance")).signum() > 0, "balance " + balance);

                    String bid = PerpsTests.farBid(client);
                    String a = (String) TestJson.obj(TestJson.parse(client.newOrder(session, PerpsTests.limitBuy(bid, "0.01", "")))).get("cl_ord_id");
                    String b = "java-batch-" + System.nanoTime() % 1000000000L;
                    client.newOrder(session, PerpsTests.limitBuy(bid, "0.01", ",\"cl_ord_id\":\"" + b + "\""));
                    long aId = TestJson.dec(TestJson.obj(TestJson.parse(client.queryOrder(session, "{\"cl_ord_id\":\"" + a + "\"}"))).get("id")).longValueExact();
                    Object answer = TestJson.parse(client.cancelOrders(session,
                            "{\"order_id_list\":[" + aId + "],\"cl_ord_id_list\":[\"" + b + "\"]}"));
                    PerpsTests.expect(answer instanceof List || TestJson.dec(TestJson.obj(answer).get("code")).signum() == 0, "cancel_orders answer " + answer);
                    for (String c : new String[] {a, b}) {
                        PerpsTests.equal("canceled", TestJson.obj(TestJson.parse(client.queryOrder(session, "{\"cl_ord_id\":\"" + c + "\"}"))).get("status"));
                    }
                });

                PerpsTests.test("cancel_all: the prefixed orders cancelled and confirmed, the other left open", () -> {
                    String bid = PerpsTests.farBid(client);
                    String prefix = "java-all-" + System.nanoTime() % 1000000000L + "-";
                    for (String name : new String[] {"a", "b"}) {
                        client.newOrder(session, PerpsTests.limitBuy(bid, "0.01", ",\"cl_ord_id\":\"" + prefix + name + "\""));
                    }
                    String other = (String) TestJson.obj(TestJson.parse(client.newOrder(session, PerpsTests.limitBuy(bid, "0.01", "")))).get("cl_ord_id");
                    String text = client.cancelAll(session, "{\"cl_ord_id_prefix\":\"" + prefix + "\",\"confirm_ms\":5000}");
                    Map<String, Object> report = TestJson.obj(TestJson.parse(text));
                    PerpsTests.expect(Boolean.TRUE.equals(report.get("complete")), text);
                    List<?> orders = (List<?>) report.get("orders");
                    PerpsTests.equal(2, orders.size());
                    for (Object o : orders) {
                        String cl = (String) TestJson.obj(o).get("cl_ord_id");
                        PerpsTests.equal("canceled", TestJson.obj(o).get("status"));
                        PerpsTests.expect(cl.startsWith(prefix), text);
                        PerpsTests.equal("canceled", TestJson.obj(TestJson.parse(client.queryOrder(session, "{\"cl_ord_id\":\"" + cl + "\"}"))).get("status"));
                    }
                    PerpsTests.equal("open", TestJson.obj(TestJson.parse(client.queryOrder(session, "{\"cl_ord_id\":\"" + other + "\"}"))).get("status"));
                    client.cancelOrder(session, "{\"cl_ord_id\":\"" + other + "\"}");
                    PerpsException e = PerpsTests.expectThrows(() -> client.cancelAll(session, "{\"cl_ord_id_prefix\":\"\"}"));
                    PerpsTests.equal(PerpsCode.INVALID_ARGUMENT, e.getCode());
                    PerpsTests.expect(e.getMessage().contains("cl_ord_id_prefix"), e.getMessage());
                });

                PerpsTests.test("parameters refused before sending, naming the parameter", () -> {
                    int before = PerpsTests.logged(null).size();
                    Map<PerpsTests.Body, String> cases = new LinkedHashMap<>();
                    cases.put(() -> client.cancelOrder(session, "{\"order_id\":\"12\"}"), "order_id");
                    cases.put(() -> client.cancelOrders(session, "{\"order_id_list\":[]}"), "order_id_list");
                    cases.put(() -> client.changeLeverage(session, "{\"symbol\":\"BTC-USD\",\"leverage\":\"10\"}"), "leverage");
                    cases.put(() -> client.changeMarginMode(session, "{\"symbol\":\"BTC-USD\",\"margin_mode\":\"CROSS\"}"), "margin_mode");
                    cases.put(() -> client.queryOrder(session, "{}"), "query_order");
                    cases.put(() -> client.queryOrders(session, "{\"limit\":501}"), "limit");
                    cases.put(() -> client.queryOpenOrders(session, "{\"symbol\":\"BTC-USD\",\"nope€\":1}"), "nope€");
                    cases.put(() -> client.queryTrades(session, "{\"start\":\"yesterday\"}"), "start");
                    cases.put(() -> client.queryPositions(session, "[]"), "params_json");
                    cases.put(() -> client.queryBalance(session, "{\"symbol\":\"BTC-USD\"}"), "symbol");
                    cases.put(() -> client.queryPositionConfig(session, null), "symbol");
                    cases.put(() -> client.querySymbolInfo(null, "{\"symbol\":null}"), "symbol");
                    cases.put(() -> client.querySymbolPrice(null, "{\"symbol\":\"BTC-USD\",\"x\":1}"), "\"x\"");
                    cases.put(() -> client.queryDepthBook(null, "{\"symbol\":\"BTC-USD\",\"limit\":0}"), "limit");
                    for (Map.Entry<PerpsTests.Body, String> c : cases.entrySet()) {
                        PerpsException e = PerpsTests.expectThrows(c.getKey());
                        PerpsTests.equal(PerpsCode.INVALID_ARGUMENT, e.getCode());
                        PerpsTests.expect(e.getMessage().contains(c.getValue()), "message " + e.getMessage() + " names " + c.getValue());
                        PerpsTests.expect(e.getHttpStatus() == 0 && !e.mayHaveReachedVenue() && e.getXRequestId() == null
                                && e.getRetryAfterMs() == -1, "local: " + e);
                    }
                    try {
                        client.queryBalance(null, null);
                        throw new AssertionError("a null session was accepted");
                    } catch (NullPointerException expected) {
                        // as for every other account method
                    }
                    try (Session fresh = new Session()) {
                        PerpsTests.equal(PerpsCode.INVALID_STATE, PerpsTests.expectThrows(() -> client.queryOpenOrders(fresh, null)).getCode());
                    }
                    PerpsTests.equal(before, PerpsTests.logged(null).size());
                });

                PerpsTests.test("an order that times out names its cl_ord_id and x-request-id, and is found", () -> {
                    try (Client slow = new Client(PerpsTests.baseUrl, PerpsTests.perpsUrl,
                            "{\"read_timeout_ms\":300,\"total_timeout_ms\":500,\"cl_ord_id_prefix\":\"java-\"}")) {
                        int ordersBefore = PerpsTests.logged("new_order").size();
                        String bid = PerpsTests.farBid(slow);
                        PerpsTests.admin("faults", "{\"per_endpoint\":{\"new_order\":{\"slow_ms\":1200,\"times\":1}}}");
                        PerpsException e = PerpsTests.expectThrows(() -> slow.newOrder(session, PerpsTests.limitBuy(bid, "0.02", "")));
                        PerpsTests.equal(PerpsCode.TIMEOUT, e.getCode());
                        PerpsTests.expect(e.mayHaveReachedVenue(), "may have reached the venue");
                        PerpsTests.expect(e.getClOrdId() != null && e.getClOrdId().startsWith("java-") && e.getClOrdId().length() == 31,
                                "cl_ord_id " + e.getClOrdId());
                        PerpsTests.expect(e.getXRequestId() != null && PerpsTests.UUID4.matcher(e.getXRequestId()).matches(), "x-request-id " + e.getXRequestId());
                        Map<String, Object> found = null;
                        long deadline = System.nanoTime() + 10_000_000_000L;
                        while (found == null) {
                            try {
                                found = TestJson.obj(TestJson.parse(slow.queryOrder(session, "{\"cl_ord_id\":\"" + e.getClOrdId() + "\"}")));
                            } catch (PerpsException notYet) {
                                PerpsTests.equal(PerpsCode.NOT_FOUND, notYet.getCode());
                                PerpsTests.expect(System.nanoTime() < deadline, "found within 10 s");
                                Thread.sleep(100);
                            }
                        }
                        PerpsTests.equal("open", found.get("status"));
                        PerpsTests.equal(0, TestJson.dec(found.get("qty")).compareTo(new BigDecimal("0.02")));
                        List<Object> orders = PerpsTests.logged("new_order");
                        PerpsTests.equal(ordersBefore + 1, orders.size());
                        PerpsTests.equal(e.getXRequestId(), TestJson.obj(TestJson.obj(orders.get(orders.size() - 1)).get("headers")).get("x-request-id"));
                    }
                });

                PerpsTests.test("rate_limit refuse: RATE_LIMITED with retry-after, nothing sent", () -> {
                    // The host's per-IP limit (48 in any 1.1 s) is shared by every client of the
                    // process and counts the earlier tests' requests: let them leave its window,
                    // so that what refuses below is the account's bucket.
                    Thread.sleep(1150);
                    try (Client paced = new Client(PerpsTests.baseUrl, PerpsTests.perpsUrl, "{\"rate_limit\":\"refuse\"}")) {
                        int before = PerpsTests.logged("query_balance").size();
                        int sent = 0;
                        PerpsException refused = null;
                        while (sent < 400 && refused == null) { // a burst of 18, then one each 45 ms
                            try {
                                paced.queryBalance(session, null);
                                sent++;
                            } catch (PerpsException e) {
                                refused = e;
                            }
                        }
                        PerpsTests.expect(refused != null && refused.getCode() == PerpsCode.RATE_LIMITED, "refused " + refused);
                        PerpsTests.expect(sent >= 15, sent + " calls let through");
                        PerpsTests.expect(refused.getRetryAfterMs() > 0 && refused.getRetryAfterMs() <= 1000, "retry after " + refused.getRetryAfterMs());
                        PerpsTests.expect(refused.getHttpStatus() == 0 && refused.getXRequestId() == null && !refused.mayHaveReachedVenue(),
                                "local: " + refused);
                        PerpsTests.equal(before + sent, PerpsTests.logged("query_balance").size());
                    }
                });
            }
        }
    }
}
