// Tests of the Java binding against the sandbox venue, which this program starts itself.
//
//   java -cp jna.jar:classes -Djna.library.path=target/release PerpsTests PATH/TO/perps-sandbox
//   java ... -Djna.library.path=DIR PerpsTests --expect-abi-refusal VERSION PATH   (DIR holding a
//                                  libperps of another ABI: OfflineTests.java)
//
// Prints one line per test and closes with "N passed, N failed"; exits 1 on any failure.

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

public final class PerpsTests {
    static final String WALLET_KEY = "0xac0974bec39a17e36ba4a6b4d238ff944bacb478cbed5efcae784d7bf4f2ff80"; // published test key
    static final String WALLET_ADDRESS = "0xf39Fd6e51aad88F6F4ce6aB8827279cffFb92266";
    static final String ORDER_JSON = "{\"symbol\":\"BTC-USD\",\"side\":\"buy\",\"order_type\":\"limit\",\"qty\":\"0.01\","
            + "\"price\":\"65000\",\"time_in_force\":\"gtc\",\"reduce_only\":false}";
    static final Pattern UUID4 = Pattern.compile("^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$");

    static int passed, failed;
    static String baseUrl, perpsUrl, adminUrl;
    // HTTP/1.1: the default (HTTP/2) sends "Connection: Upgrade" + "Upgrade: h2c" on http://,
    // and the sandbox (tiny_http) then never answers.
    static final HttpClient HTTP = HttpClient.newBuilder()
            .version(HttpClient.Version.HTTP_1_1)
            .proxy(HttpClient.Builder.NO_PROXY)
            .connectTimeout(java.time.Duration.ofSeconds(5))
            .build();

    // ---- the README's "Use from Java" snippet, verbatim ----
    static String placeOrder(String baseUrl, String perpsUrl, String walletKey, String orderJson) {
        try (Client client = new Client(baseUrl, perpsUrl);
             Session session = new Session()) {
            String address = Wallet.address("bsc", walletKey);
            String payload = client.prepareSignin(session, "bsc", address); // challenge verified
            String signature = Wallet.sign("bsc", walletKey, payload);      // or an external wallet
            client.login(session, signature, 3600);
            return client.newOrder(session, orderJson); // PerpsException: getCode(), getHttpStatus(),
        }                                               // getBody(), mayHaveReachedVenue() (then query first)
    }
    // ---- end of snippet ----

    interface Body {
        void run() throws Exception;
    }

    public static void main(String[] args) throws Exception {
        if (args.length == 3 && args[0].equals("--expect-abi-refusal")) {
            OfflineTests.expectAbiRefusal(args[1], args[2]);
            System.out.println(passed + " passed, " + failed + " failed");
            System.exit(failed == 0 ? 0 : 1);
        }
        if (args.length != 1) {
            System.err.println("usage: java PerpsTests PATH/TO/perps-sandbox");
            System.exit(2);
        }
        Process sandbox;
        try {
            sandbox = startSandbox(args[0]);
        } catch (Exception e) {
            System.out.println("FAIL start the sandbox: " + e);
            System.out.println("0 passed, 1 failed");
            System.exit(1);
            return;
        }
        try {
            runAll();
        } finally {
            sandbox.destroy();
            sandbox.waitFor();
        }
        System.out.println(passed + " passed, " + failed + " failed");
        System.exit(failed == 0 ? 0 : 1);
    }

    static void runAll() {
        test("version is MAJOR.MINOR.PATCH", () ->
                expect(Perps.version().matches("\\d+\\.\\d+\\.\\d+"), "version " + Perps.version()));

        test("wallet address of the bsc test key", () -> equal(WALLET_ADDRESS, Wallet.address("bsc", WALLET_KEY)));

        test("README flow: sign-in bsc, login, order", () -> {
            long before = stat("orders_accepted");
            String answer = placeOrder(baseUrl, perpsUrl, WALLET_KEY, ORDER_JSON);
            expect(answer.contains("\"code\":0"), "answer " + answer);
            equal(before + 1, stat("orders_accepted"));
        });

        try (Client client = new Client(baseUrl, perpsUrl);
             Session session = new Session()) {
            test("sign-in bsc step by step, session state", () -> {
                String payload = client.prepareSignin(session, "bsc", WALLET_ADDRESS);
                expect(payload.contains("\"message\""), "payload has no message: " + payload);
                expect(session.info().contains("\"pending_signin\":true"), "info " + session.info());
                String signature = Wallet.sign("bsc", WALLET_KEY, payload);
                expect(signature.matches("0x[0-9a-f]{130}"), "signature " + signature);
                String login = client.login(session, signature, 3600);
                expect(!login.isEmpty(), "empty login answer");
                String info = session.info();
                expect(info.contains("\"has_token\":true"), "info " + info);
                expect(info.contains(WALLET_ADDRESS), "info " + info);
                expect(!session.token().isEmpty(), "empty token");
            });

            test("one-call sign-in and an order", () -> {
                client.signin(session, "bsc", WALLET_KEY, 3600);
                Map<String, String> answer = TestJson.flat(client.newOrder(session, ORDER_JSON));
                equal("0", answer.get("code"));
                expect(UUID4.matcher(answer.get("request_id")).matches(), "request_id " + answer.get("request_id"));
            });

            test("error: HTTP 500 from the venue (fault) -> HTTP_STATUS, flag true", () -> {
                admin("faults", "{\"status\":500}");
                try {
                    PerpsException e = expectThrows(() -> client.newOrder(session, ORDER_JSON));
                    equal(PerpsCode.HTTP_STATUS, e.getCode());
                    equal(500, e.getHttpStatus());
                    expect(e.getBody() != null && e.getBody().contains("sandbox fault"), "body " + e.getBody());
                    expect(e.mayHaveReachedVenue(), "a 5xx may have reached the venue");
                } finally {
                    admin("faults", "{}");
                }
            });

            test("error: HTTP 404 from the venue (fault) -> flag false", () -> {
                admin("faults", "{\"status\":404}");
                try {
                    PerpsException e = expectThrows(() -> client.newOrder(session, ORDER_JSON));
                    equal(PerpsCode.HTTP_STATUS, e.getCode());
                    equal(404, e.getHttpStatus());
                    expect(!e.mayHaveReachedVenue(), "a 4xx was refused");
                } finally {
                    admin("faults", "{}");
                }
            });

            test("error: invalid order names the (UTF-8) field, nothing sent", () -> {
                long before = stat("orders_received");
                String bad = ORDER_JSON.replace("}", ",\"prix€😀\":\"1\"}");
                PerpsException e = expectThrows(() -> client.newOrder(session, bad));
                equal(PerpsCode.INVALID_ORDER, e.getCode());
                expect(e.getMessage().contains("prix€😀"), "message " + e.getMessage());
                equal(0, e.getHttpStatus());
                expect(e.getBody() == null, "no body");
                expect(!e.mayHaveReachedVenue(), "nothing was sent");
                equal(before, stat("orders_received"));
            });

            test("error: order after logout is INVALID_STATE", () -> {
                session.logout();
                PerpsException e = expectThrows(() -> client.newOrder(session, ORDER_JSON));
                equal(PerpsCode.INVALID_STATE, e.getCode());
                expect(!e.mayHaveReachedVenue(), "nothing was sent");
            });

            test("body signature: JSON of the four headers, UUID v4, 64-byte base64", () -> {
                Map<String, String> headers = TestJson.flat(session.signBody(ORDER_JSON));
                equal(4, headers.size());
                equal("v1", headers.get("x-request-sign-version"));
                expect(UUID4.matcher(headers.get("x-request-id")).matches(), "x-request-id " + headers.get("x-request-id"));
                long ts = Long.parseLong(headers.get("x-request-timestamp"));
                expect(Math.abs(System.currentTimeMillis() - ts) < 60000, "timestamp " + ts);
                equal(64, Base64.getDecoder().decode(headers.get("x-request-signature")).length);
            });

            test("body signature verifies (Ed25519, exact UTF-8 body bytes)", () -> {
                String body = "{\"note\":\"café € 😀\"}";
                String id = "0b4f4a3e-8c1d-4f6e-9a2b-3c4d5e6f7a8b";
                Map<String, String> h = TestJson.flat(session.signBodyAt(body, id, 1700000000000L));
                equal(id, h.get("x-request-id"));
                equal("1700000000000", h.get("x-request-timestamp"));
                byte[] message = ("v1," + id + ",1700000000000," + body).getBytes(StandardCharsets.UTF_8);
                byte[] sig = Base64.getDecoder().decode(h.get("x-request-signature"));
                expect(ed25519Verify(base58(session.requestId()), message, sig), "signature does not verify");
                byte[] other = ("v1," + id + ",1700000000000," + body.replace("é", "e")).getBytes(StandardCharsets.UTF_8);
                expect(!ed25519Verify(base58(session.requestId()), other, sig), "verifies another body");
            });

            test("body signature into the fixed-size struct (size_t as SizeT)", () -> {
                BodySignature sig = session.signBodyInto(ORDER_JSON.getBytes(StandardCharsets.UTF_8));
                equal("v1", sig.version());
                expect(UUID4.matcher(sig.requestId()).matches(), "request id " + sig.requestId());
                expect(sig.timestamp().matches("\\d{13}"), "timestamp " + sig.timestamp());
                equal(64, Base64.getDecoder().decode(sig.signature()).length);
                equal(64, Base64.getDecoder().decode(session.signBodyInto(new byte[0]).signature()).length);
            });

            test("order serialisation is the compact body", () ->
                    equal(ORDER_JSON, Order.serialize(ORDER_JSON.replace(",", ", "))));

            test("a string that is not valid Unicode is refused before the call", () -> {
                try {
                    Order.serialize("{\"symbol\":\"\uD800\"}");
                    throw new AssertionError("a lone surrogate was accepted");
                } catch (IllegalArgumentException expected) {
                    // not sent as '?'
                }
            });

            test("a string holding a NUL is INVALID_ARGUMENT, not signed up to the NUL", () -> {
                PerpsException e = expectThrows(() ->
                        session.signBodyAt("{\"a\":1}\0{\"b\":2}", "0b4f4a3e-8c1d-4f6e-9a2b-3c4d5e6f7a8b", 1L));
                equal(PerpsCode.INVALID_ARGUMENT, e.getCode());
                expect(e.getMessage().contains("NUL"), e.getMessage());
                PerpsException key = expectThrows(() -> Wallet.address("bsc", WALLET_KEY + "\0"));
                equal(PerpsCode.INVALID_ARGUMENT, key.getCode());
            });

            test("NULL argument is INVALID_ARGUMENT naming it", () -> {
                PerpsException e = expectThrows(() -> Wallet.address(null, WALLET_KEY));
                equal(PerpsCode.INVALID_ARGUMENT, e.getCode());
                expect(e.getMessage().contains("chain"), "message " + e.getMessage());
            });
        }

        test("handles: close is idempotent, use after close is refused", () -> {
            Session session = new Session();
            String id = session.requestId();
            expect(id.length() >= 32, "request id " + id);
            session.close();
            session.close();
            try {
                session.requestId();
                throw new AssertionError("no exception after close");
            } catch (IllegalStateException expected) {
                // closed
            }
        });

        test("handles: close() waits for a call in flight on another thread", () -> {
            Client client = new Client(baseUrl, perpsUrl);
            Session session = new Session();
            client.signin(session, "bsc", WALLET_KEY, 3600);
            admin("faults", "{\"slow_ms\":1500}");
            try {
                java.util.concurrent.atomic.AtomicReference<Object> result = new java.util.concurrent.atomic.AtomicReference<>();
                java.util.concurrent.CountDownLatch started = new java.util.concurrent.CountDownLatch(1);
                Thread caller = new Thread(() -> {
                    started.countDown();
                    try {
                        result.set(client.newOrder(session, ORDER_JSON));
                    } catch (Throwable e) {
                        result.set(e);
                    }
                });
                caller.start();
                started.await();
                Thread.sleep(300); // the order is on its way (the venue answers after 1.5 s)
                long before = System.nanoTime();
                session.close(); // both wait for the call: neither is freed under it
                client.close();
                long waitedMs = (System.nanoTime() - before) / 1_000_000;
                caller.join();
                expect(result.get() instanceof String, "the call in flight completed: " + result.get());
                expect(((String) result.get()).contains("\"code\":0"), "answer " + result.get());
                expect(waitedMs >= 800, "close() returned after " + waitedMs + " ms, before the call");
                try {
                    client.newOrder(session, ORDER_JSON);
                    throw new AssertionError("a call after close succeeded");
                } catch (IllegalStateException expected) {
                    expect(expected.getMessage().contains("closed"), expected.getMessage());
                }
            } finally {
                admin("faults", "{}");
            }
        });

        test("client options are checked (unknown option refused)", () -> {
            PerpsException e = expectThrows(() -> new Client(baseUrl, perpsUrl, "{\"no_such_option\":1}").close());
            equal(PerpsCode.INVALID_ARGUMENT, e.getCode());
        });

        TradingTests.run();
        HeaderTests.run();
        OfflineTests.run();
        StreamTests.run();
        FundingTests.run();
        SecretTests.run();
        SecretFormsTests.run();
    }

    static String limitBuy(String price, String qty, String extra) {
        return "{\"symbol\":\"BTC-USD\",\"side\":\"buy\",\"order_type\":\"limit\",\"qty\":\"" + qty + "\",\"price\":\""
                + price + "\",\"time_in_force\":\"gtc\",\"reduce_only\":false" + extra + "}";
    }

    /** A price far below the mark, so the moving mark does not fill the order. */
    static String farBid(Client client) {
        BigDecimal mark = TestJson.dec(TestJson.obj(TestJson.parse(client.querySymbolPrice(null, "{\"symbol\":\"BTC-USD\"}"))).get("mark_price"));
        return mark.subtract(BigDecimal.valueOf(2000)).setScale(0, RoundingMode.FLOOR).toPlainString();
    }

    static List<Long> ids(String listAnswer) {
        List<Long> out = new ArrayList<>();
        for (Object o : TestJson.rows(listAnswer)) {
            out.add(TestJson.dec(TestJson.obj(o).get("id")).longValueExact());
        }
        return out;
    }

    /** The venue's request log (oldest first) for /api/{endpoint}, or every /api/ request. */
    static List<Object> logged(String endpoint) throws Exception {
        List<Object> out = new ArrayList<>();
        for (Object r : (List<?>) TestJson.parse(admin("requests?last=1000", null))) {
            String path = (String) TestJson.obj(r).get("path");
            if (endpoint == null ? path.contains("/api/") : path.endsWith("/api/" + endpoint)) {
                out.add(r);
            }
        }
        return out;
    }

    // ---- the sandbox ----

    static Process startSandbox(String path) throws Exception {
        Process p = new ProcessBuilder(path, "--port", "0", "--exit-on-stdin-eof")
                .redirectError(ProcessBuilder.Redirect.INHERIT)
                .start(); // its stdin is our pipe: closed when this JVM ends, so the sandbox exits too
        BufferedReader out = new BufferedReader(new InputStreamReader(p.getInputStream(), StandardCharsets.UTF_8));
        String line = out.readLine();
        if (line == null) {
            throw new IllegalStateException("the sandbox printed nothing");
        }
        Map<String, String> urls = TestJson.flat(line);
        baseUrl = urls.get("base_url");
        perpsUrl = urls.get("perps_url");
        adminUrl = urls.get("admin_url");
        System.out.println("sandbox: " + line);
        return p;
    }

    /**
     * A fresh API credential (flat JSON: token, private_key, …) from the sandbox's admin
     * endpoint; or, when it cannot be had, a failed test named "{what}: an API credential from
     * the sandbox" and null (the caller skips its tests).
     */
    static Map<String, String> freshCredential(String what) {
        try {
            return TestJson.flat(admin("api-key", "{}"));
        } catch (Exception e) {
            test(what + ": an API credential from the sandbox", () -> {
                throw e;
            });
            return null;
        }
    }

    static String admin(String name, String postJson) throws Exception {
        HttpRequest.Builder req = HttpRequest.newBuilder(URI.create(adminUrl + "/" + name))
                .timeout(java.time.Duration.ofSeconds(10));
        if (postJson != null) {
            req.header("Content-Type", "application/json")
                    .POST(HttpRequest.BodyPublishers.ofString(postJson, StandardCharsets.UTF_8));
        }
        HttpResponse<String> resp = HTTP.send(req.build(), HttpResponse.BodyHandlers.ofString(StandardCharsets.UTF_8));
        if (resp.statusCode() != 200) {
            throw new IllegalStateException("admin " + name + ": HTTP " + resp.statusCode() + " " + resp.body());
        }
        return resp.body();
    }

    static long stat(String name) throws Exception {
        return Long.parseLong(TestJson.flat(admin("stats", null)).get(name));
    }

    // ---- Ed25519 and base58, to check the signature independently ----

    static boolean ed25519Verify(byte[] publicKey, byte[] message, byte[] signature) throws Exception {
        byte[] der = new byte[44]; // SubjectPublicKeyInfo: 302a300506032b6570032100 || key
        byte[] prefix = {0x30, 0x2a, 0x30, 0x05, 0x06, 0x03, 0x2b, 0x65, 0x70, 0x03, 0x21, 0x00};
        System.arraycopy(prefix, 0, der, 0, 12);
        System.arraycopy(publicKey, 0, der, 12, 32);
        PublicKey key = KeyFactory.getInstance("Ed25519").generatePublic(new X509EncodedKeySpec(der));
        Signature v = Signature.getInstance("Ed25519");
        v.initVerify(key);
        v.update(message);
        return v.verify(signature);
    }

    static byte[] base58(String text) {
        String alphabet = "123456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz";
        BigInteger n = BigInteger.ZERO;
        for (char c : text.toCharArray()) {
            int d = alphabet.indexOf(c);
            if (d < 0) {
                throw new IllegalArgumentException("not base58: " + text);
            }
            n = n.multiply(BigInteger.valueOf(58)).add(BigInteger.valueOf(d));
        }
        byte[] raw = n.toByteArray();
        byte[] key = new byte[32]; // right-aligned in 32 bytes (drops a sign byte, pads leading zeros)
        int len = Math.min(raw.length, 32);
        System.arraycopy(raw, raw.length - len, key, 32 - len, len);
        return key;
    }

    // ---- a tiny test harness ----

    static void test(String name, Body body) {
        try {
            body.run();
            passed++;
            System.out.println("ok   " + name);
        } catch (Throwable e) {
            failed++;
            System.out.println("FAIL " + name + ": " + e);
            e.printStackTrace(System.out);
        }
    }

    static void expect(boolean condition, String what) {
        if (!condition) {
            throw new AssertionError("expected: " + what);
        }
    }

    static void equal(Object expected, Object actual) {
        if (!expected.equals(actual)) {
            throw new AssertionError("expected " + expected + ", got " + actual);
        }
    }

    static PerpsException expectThrows(Body call) throws Exception {
        try {
            call.run();
        } catch (PerpsException e) {
            return e;
        }
        throw new AssertionError("expected a PerpsException");
    }
}
