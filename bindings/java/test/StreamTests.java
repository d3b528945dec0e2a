// Streams through the Java binding against the sandbox venue's two WebSockets (run by
// PerpsTests, with its harness): an order placed and cancelled over the order stream, with
// both reply frames of each (the "accepted" ack, final false, then the outcome) and the
// account stream's order events, checked against the venue's REST view; a public depth_book
// subscription with its levels sorted by exact decimal value (the sandbox shuffles them);
// next(timeout) returning null; close() from another thread waking a blocked next(). A real
// partial write: orders written to an order stream the venue has stalled until one no longer
// fits the socket, whose error names the request by its envelope request_id
// (PerpsException.getStreamRequestId), the id the "disconnected" event's "unanswered" list
// names; errors of requests refused unsent have none. A stream never closed: the Cleaner closes
// it (its connection leaves the venue's list) and it is freed on a daemon thread, not the Cleaner's.

import static java.util.stream.Collectors.toList;

import java.lang.reflect.Field;
import java.math.BigDecimal;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.Consumer;
import java.util.function.Predicate;
import perps.Client;
import perps.PerpsCode;
import perps.PerpsException;
import perps.Session;
import perps.Stream;

final class StreamTests {
    private StreamTests() {
    }

    /** The first event (parsed) for which accept holds, within 5 s; earlier ones are skipped. */
    static Map<String, Object> nextWhere(Stream stream, Predicate<Map<String, Object>> accept) {
        long deadline = System.nanoTime() + 5_000_000_000L;
        List<String> seen = new ArrayList<>();
        while (System.nanoTime() < deadline) {
            String text = stream.next(200);
            if (text == null) {
                continue;
            }
            Map<String, Object> e = TestJson.obj(TestJson.parse(text));
            if (accept.test(e)) {
                return e;
            }
            seen.add(text);
        }
        throw new AssertionError("no such event within 5 s; saw " + seen);
    }

    static Predicate<Map<String, Object>> isStatus(String state) {
        return e -> "status".equals(e.get("channel")) && state.equals(e.get("state"));
    }

    static Predicate<Map<String, Object>> responseTo(String requestId, boolean fin) {
        return e -> "order_response".equals(e.get("channel")) && requestId.equals(e.get("request_id"))
                && Boolean.valueOf(fin).equals(e.get("final"));
    }

    static Predicate<Map<String, Object>> accountOrder(String clOrdId, String status) {
        return e -> "order".equals(e.get("channel")) && clOrdId.equals(TestJson.obj(e.get("data")).get("cl_ord_id"))
                && status.equals(TestJson.obj(e.get("data")).get("status"));
    }

    static List<BigDecimal> prices(Object side) {
        return ((List<?>) side).stream().map(l -> TestJson.dec(((List<?>) l).get(0))).collect(toList());
    }

    /** The venue's open market-stream connections (admin ws/connections, endpoint ws-stream). */
    static int marketConnections() throws Exception {
        return (int) ((List<?>) TestJson.parse(PerpsTests.admin("ws/connections", null))).stream()
                .filter(c -> "ws-stream".equals(TestJson.obj(c).get("endpoint"))).count();
    }

    /** Open a market stream, see it connected and drop it unclosed (unreachable once this returns). */
    static void openAndDrop(Client client) {
        Stream stream = client.openStream(null, "[{\"channel\":\"price\",\"symbol\":\"BTC-USD\"}]");
        nextWhere(stream, isStatus("connected"));
    }

    static void run() {
        PerpsTests.test("stream codes 15 and 16", () -> {
            PerpsTests.equal(15, PerpsCode.STREAM_CLOSED.value());
            PerpsTests.equal(PerpsCode.STREAM_LIMIT, PerpsCode.of(16));
        });

        try (Client client = new Client(PerpsTests.baseUrl, PerpsTests.perpsUrl);
             Session session = new Session()) {
            client.signin(session, "bsc", PerpsTests.WALLET_KEY, 3600);

            PerpsTests.test("stream: an order over the order stream, both reply frames, its account event", () -> {
                String bid = PerpsTests.farBid(client);
                try (Stream account = client.openStream(session, "[{\"channel\":\"order\"}]");
                     Stream orders = client.openOrderStream(session)) {
                    PerpsTests.equal("market", nextWhere(account, isStatus("connected")).get("stream"));
                    PerpsTests.equal("order", nextWhere(orders, isStatus("connected")).get("stream"));

                    Map<String, Object> sent = TestJson.obj(TestJson.parse(orders.newOrder(PerpsTests.limitBuy(bid, "0.01", ""))));
                    String requestId = (String) sent.get("request_id");
                    String cl = (String) sent.get("cl_ord_id");
                    PerpsTests.expect(PerpsTests.UUID4.matcher(requestId).matches() && cl.length() >= 26, "sent " + sent);
                    Map<String, Object> ack = nextWhere(orders, responseTo(requestId, false));
                    PerpsTests.equal("accepted", ack.get("message"));
                    PerpsTests.equal(0, TestJson.dec(ack.get("code")).intValueExact());
                    Map<String, Object> outcome = nextWhere(orders, responseTo(requestId, true));
                    PerpsTests.equal("success", outcome.get("message"));
                    PerpsTests.equal(cl, outcome.get("cl_ord_id"));
                    PerpsTests.expect(TestJson.dec(outcome.get("received_ns")).compareTo(TestJson.dec(ack.get("received_ns"))) >= 0,
                            "received_ns in order");

                    Map<String, Object> data = TestJson.obj(nextWhere(account, accountOrder(cl, "open")).get("data"));
                    PerpsTests.equal(0, new BigDecimal(bid).compareTo(TestJson.dec(data.get("price"))));
                    PerpsTests.equal(0, new BigDecimal("0.01").compareTo(TestJson.dec(data.get("qty"))));
                    // The venue's REST view agrees: the order it accepted (signature verified) is ours.
                    Map<String, Object> rest = TestJson.obj(TestJson.parse(client.queryOrder(session, "{\"cl_ord_id\":\"" + cl + "\"}")));
                    PerpsTests.equal(TestJson.dec(data.get("id")), TestJson.dec(rest.get("id")));
                    PerpsTests.equal("open", rest.get("status"));

                    Map<String, Object> cancel = TestJson.obj(TestJson.parse(orders.cancelOrder("{\"cl_ord_id\":\"" + cl + "\"}")));
                    String cancelId = (String) cancel.get("request_id");
                    PerpsTests.expect(!cancelId.equals(requestId) && cl.equals(cancel.get("cl_ord_id")), "cancel " + cancel);
                    nextWhere(orders, responseTo(cancelId, false));
                    PerpsTests.equal("success", nextWhere(orders, responseTo(cancelId, true)).get("message"));
                    nextWhere(account, accountOrder(cl, "canceled"));
                    PerpsTests.equal("canceled", TestJson.obj(TestJson.parse(
                            client.queryOrder(session, "{\"cl_ord_id\":\"" + cl + "\"}"))).get("status"));

                    // Refused before anything is sent.
                    PerpsException e = PerpsTests.expectThrows(() -> orders.newOrder(
                            PerpsTests.limitBuy(bid, "0.01", "").replace("\"buy\"", "\"up\"")));
                    PerpsTests.equal(PerpsCode.INVALID_ORDER, e.getCode());
                    PerpsTests.expect(e.getStreamRequestId() == null, "no frame was written: " + e.getStreamRequestId());
                    e = PerpsTests.expectThrows(() -> account.newOrder(PerpsTests.limitBuy(bid, "0.01", "")));
                    PerpsTests.equal(PerpsCode.INVALID_STATE, e.getCode()); // a market stream takes no orders
                    long started = System.nanoTime();
                    PerpsTests.expect(orders.next(300) == null, "nothing more on the order stream");
                    long waitedMs = (System.nanoTime() - started) / 1_000_000;
                    PerpsTests.expect(waitedMs >= 290 && waitedMs < 2000, "waited " + waitedMs + " ms");
                }
            });

            PerpsTests.test("stream: close() from another thread wakes a blocked next()", () -> {
                Stream orders = client.openOrderStream(session); // no orders: nothing more will come
                nextWhere(orders, isStatus("connected"));
                AtomicReference<Throwable> woke = new AtomicReference<>();
                AtomicLong wokeAt = new AtomicLong();
                Thread reader = new Thread(() -> {
                    try {
                        woke.set(new AssertionError("next() returned " + orders.next()));
                    } catch (Throwable t) {
                        woke.set(t);
                    }
                    wokeAt.set(System.nanoTime());
                });
                reader.start();
                Thread.sleep(300);
                long closedAt = System.nanoTime();
                orders.close(); // wakes the reader, waits for it, frees
                reader.join(5000);
                PerpsTests.expect(!reader.isAlive(), "the reader returned");
                PerpsTests.expect(woke.get() instanceof PerpsException
                        && ((PerpsException) woke.get()).getCode() == PerpsCode.STREAM_CLOSED, "woke with " + woke.get());
                PerpsTests.expect(wokeAt.get() - closedAt < 1_000_000_000L, "woke " + (wokeAt.get() - closedAt) / 1e6 + " ms after close");
                orders.close(); // idempotent
                PerpsTests.equal(PerpsCode.STREAM_CLOSED, PerpsTests.expectThrows(() -> orders.next(0)).getCode());
                PerpsTests.equal(PerpsCode.STREAM_CLOSED, PerpsTests.expectThrows(() -> orders.newOrder("{}")).getCode());
                PerpsTests.equal(PerpsCode.STREAM_CLOSED, PerpsTests.expectThrows(() -> orders.cancelOrder("{}")).getCode());
            });
        }

        try (Client client = new Client(PerpsTests.baseUrl, PerpsTests.perpsUrl)) {
            PerpsTests.test("stream: public depth_book, levels sorted best first", () -> {
                // XAG-USD's bids (100.04 … 99.95 around the default mark) sort differently as strings.
                try (Stream stream = client.openStream(null, "[{\"channel\":\"depth_book\",\"symbol\":\"XAG-USD\"}]")) {
                    for (int n = 0; n < 3; n++) { // the snapshot, then pushes (each shuffled by the venue)
                        Map<String, Object> e = nextWhere(stream, x -> "depth_book".equals(x.get("channel")));
                        PerpsTests.equal("XAG-USD", e.get("symbol"));
                        Map<String, Object> book = TestJson.obj(e.get("data"));
                        PerpsTests.expect(((List<?>) book.get("bids")).stream().allMatch(l -> ((List<?>) l).get(0) instanceof String),
                                "prices as the venue's text");
                        List<BigDecimal> bids = prices(book.get("bids"));
                        List<BigDecimal> asks = prices(book.get("asks"));
                        PerpsTests.expect(bids.size() == 10 && asks.size() == 10 && bids.get(0).compareTo(asks.get(0)) < 0, "sides " + book);
                        for (int i = 1; i < 10; i++) {
                            PerpsTests.expect(bids.get(i - 1).compareTo(bids.get(i)) > 0, "bids high to low: " + bids);
                            PerpsTests.expect(asks.get(i - 1).compareTo(asks.get(i)) < 0, "asks low to high: " + asks);
                        }
                    }
                }
                PerpsException e = PerpsTests.expectThrows(() -> client.openStream(null, "[{\"channel\":\"order\"}]"));
                PerpsTests.equal(PerpsCode.INVALID_ARGUMENT, e.getCode()); // an account channel needs a session
                e = PerpsTests.expectThrows(() -> client.openStream(null, "[{\"channel\":\"kline\",\"symbol\":\"BTC-USD\"}]"));
                PerpsTests.expect(e.getCode() == PerpsCode.INVALID_ARGUMENT && e.getMessage().contains("kline"), "message " + e.getMessage());
            });

            PerpsTests.test("stream: one never closed is closed by the Cleaner (its connection leaves the venue), freed off its thread", () -> {
                // Stream.collectedHook (package-private, tests only): "closed" on the thread that
                // closed a collected stream, then "freed" on the one that freed it.
                Field hook = Class.forName("perps.Stream").getDeclaredField("collectedHook");
                hook.setAccessible(true);
                Map<String, Thread> seenOn = new ConcurrentHashMap<>();
                hook.set(null, (Consumer<String>) event -> seenOn.put(event, Thread.currentThread()));
                try {
                    int before = marketConnections();
                    openAndDrop(client);
                    PerpsTests.equal(before + 1, marketConnections());
                    long deadline = System.nanoTime() + 10_000_000_000L;
                    while (marketConnections() != before) {
                        PerpsTests.expect(System.nanoTime() < deadline, "the stream's connection is gone within 10 s");
                        System.gc();
                        Thread.sleep(50);
                    }
                    while (!seenOn.containsKey("freed")) {
                        PerpsTests.expect(System.nanoTime() < deadline, "the collected stream freed within 10 s; saw " + seenOn);
                        Thread.sleep(20);
                    }
                    Thread closedOn = seenOn.get("closed");
                    Thread freedOn = seenOn.get("freed");
                    PerpsTests.expect(closedOn != null && closedOn.getName().startsWith("Cleaner"), "closed on the Cleaner's thread: " + closedOn);
                    PerpsTests.expect(freedOn != closedOn && freedOn.isDaemon() && "perps-stream-free".equals(freedOn.getName()),
                            "freed on a daemon thread of its own: " + freedOn);
                } finally {
                    hook.set(null, null);
                }
            });
        }

        // A write that finds the socket full waits read_timeout_ms; the stalled venue's silence
        // must not end the connection first (stream_idle_timeout_ms).
        try (Client client = new Client(PerpsTests.baseUrl, PerpsTests.perpsUrl,
                "{\"read_timeout_ms\":2000,\"stream_idle_timeout_ms\":120000}");
             Session session = new Session()) {
            client.signin(session, "bsc", PerpsTests.WALLET_KEY, 3600);
            PerpsTests.test("stream: a partly written order frame is named by its envelope request_id (getStreamRequestId)", () -> {
                String bid = PerpsTests.farBid(client);
                try (Stream orders = client.openOrderStream(session)) {
                    nextWhere(orders, isStatus("connected"));
                    String firstId = (String) TestJson.obj(TestJson.parse(orders.newOrder(PerpsTests.limitBuy(bid, "0.01", ""))))
                            .get("request_id");
                    nextWhere(orders, responseTo(firstId, true));

                    // The venue stops reading (its socket stays open): orders until one does not fit.
                    PerpsTests.expect(Long.parseLong(TestJson.flat(PerpsTests.admin("ws/stall", "{}")).get("stalled")) >= 1,
                            "a connection stalled");
                    Set<String> written = new HashSet<>();
                    String last = null;
                    PerpsException e = null;
                    long deadline = System.nanoTime() + 60_000_000_000L;
                    while (written.size() < 50000 && System.nanoTime() < deadline) {
                        try {
                            last = (String) TestJson.obj(TestJson.parse(orders.newOrder(PerpsTests.limitBuy(bid, "0.01", ""))))
                                    .get("request_id");
                        } catch (PerpsException failure) {
                            e = failure;
                            break;
                        }
                        written.add(last);
                    }
                    PerpsTests.expect(e != null && !written.isEmpty(), written.size() + " orders written in full, then " + e);
                    PerpsTests.expect((e.getCode() == PerpsCode.TIMEOUT || e.getCode() == PerpsCode.TRANSPORT) && e.mayHaveReachedVenue(),
                            "the failed write: " + e);
                    // The envelope request_id of the partly written frame: the one the message
                    // names, a new request (none of those written in full), not the x-request-id.
                    String id = e.getStreamRequestId();
                    PerpsTests.expect(id != null && PerpsTests.UUID4.matcher(id).matches(), "getStreamRequestId " + id);
                    PerpsTests.expect(e.getMessage().contains("request_id " + id + " may have been partly sent"), "message " + e.getMessage());
                    PerpsTests.expect(!written.contains(id) && !id.equals(firstId), "a new request");
                    PerpsTests.expect(e.getXRequestId() != null && !e.getXRequestId().equals(id) && e.getClOrdId() != null,
                            "x-request-id " + e.getXRequestId());

                    // The connection is replaced; its "disconnected" event lists that request as
                    // awaiting its outcome, by the same id, with the orders written before it.
                    List<?> unanswered = (List<?>) nextWhere(orders, isStatus("disconnected")).get("unanswered");
                    PerpsTests.expect(unanswered.contains(id) && unanswered.contains(last), unanswered.size() + " unanswered");
                }
            });
        }
    }
}
