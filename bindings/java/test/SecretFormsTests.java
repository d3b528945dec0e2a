// The char[] and byte[] forms of every secret argument of the Java binding (run by PerpsTests,
// with its harness): Wallet.address, Wallet.sign, Client.signin and Session.fromApiKey give
// what the String form gives — the same result for a good key, the same code and message for
// an empty one, one holding a NUL and one the library refuses — and never modify the caller's
// array (the caller wipes it). A byte[] that is not UTF-8 is the library's INVALID_ARGUMENT
// naming the argument. A session made from arrays signs bodies that verify under its key.
// (That the binding's own copies are wiped: SecretTests.)

import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.Base64;
import java.util.List;
import java.util.Map;
import java.util.function.Function;
import perps.Client;
import perps.PerpsException;
import perps.Session;
import perps.Wallet;

final class SecretFormsTests {
    private SecretFormsTests() {
    }

    /** A call of one form: its result, or what it threw (class, code, message) as text. */
    @FunctionalInterface
    private interface Call {
        String run() throws Exception;
    }

    static String outcome(Call call) {
        try {
            return "ok " + call.run();
        } catch (PerpsException e) {
            return "PerpsException " + e.getCode() + " " + e.getMessage();
        } catch (Exception e) {
            return e.getClass().getSimpleName() + " " + e.getMessage();
        }
    }

    /** The secret as the three forms take it; the arrays are checked unchanged afterwards. */
    private static final class Forms {
        final String text;
        final char[] chars;
        final byte[] bytes;
        private final char[] charsBefore;
        private final byte[] bytesBefore;

        Forms(String text) {
            this.text = text;
            chars = text.toCharArray();
            bytes = text.getBytes(StandardCharsets.UTF_8);
            charsBefore = chars.clone();
            bytesBefore = bytes.clone();
        }

        void expectUnchanged() {
            PerpsTests.expect(Arrays.equals(charsBefore, chars), "the caller's char[] unchanged");
            PerpsTests.expect(Arrays.equals(bytesBefore, bytes), "the caller's byte[] unchanged");
        }
    }

    /** Keys for a bsc wallet call: good, empty, a NUL inside, refused by the library, non-ASCII. */
    private static final List<String> WALLET_KEYS = List.of(PerpsTests.WALLET_KEY, "",
            PerpsTests.WALLET_KEY.substring(0, 10) + "\0" + PerpsTests.WALLET_KEY.substring(10), "0x1234", "é€😀");

    /** For each key: the char[] and byte[] forms' outcomes equal the String form's. */
    private static void sameAsString(String what, List<String> keys, Function<Forms, Call[]> calls) {
        for (String key : keys) {
            String shown = List.of("the test key", "an empty key", "the test key with a NUL inside", "a refused key",
                    "a non-ASCII key").get(keys.indexOf(key));
            PerpsTests.test("secret forms: " + what + " of " + shown + ": char[] and byte[] as String", () -> {
                Forms forms = new Forms(key);
                Call[] three = calls.apply(forms);
                String expected = outcome(three[0]);
                boolean good = key.equals(PerpsTests.WALLET_KEY);
                PerpsTests.expect(expected.startsWith("ok ") == good, (good ? "accepted: " : "refused: ") + expected);
                PerpsTests.equal(expected, outcome(three[1]));
                PerpsTests.equal(expected, outcome(three[2]));
                forms.expectUnchanged();
            });
        }
    }

    static void run() {
        sameAsString("Wallet.address", WALLET_KEYS, f -> new Call[] {
            () -> Wallet.address("bsc", f.text), () -> Wallet.address("bsc", f.chars), () -> Wallet.address("bsc", f.bytes)});
        PerpsTests.test("secret forms: Wallet.address of the test key's arrays is its address", () -> {
            Forms forms = new Forms(PerpsTests.WALLET_KEY);
            PerpsTests.equal(PerpsTests.WALLET_ADDRESS, Wallet.address("bsc", forms.chars));
            PerpsTests.equal(PerpsTests.WALLET_ADDRESS, Wallet.address("bsc", forms.bytes));
            forms.expectUnchanged();
        });
        PerpsTests.test("secret forms: a byte[] key that is not UTF-8 is the library's INVALID_ARGUMENT, naming it", () -> {
            byte[] key = {'0', 'x', (byte) 0xFF, 'a'};
            PerpsException e = PerpsTests.expectThrows(() -> Wallet.address("bsc", key));
            PerpsTests.equal(perps.PerpsCode.INVALID_ARGUMENT, e.getCode());
            PerpsTests.expect(e.getMessage().contains("private_key is not valid UTF-8"), e.getMessage());
            PerpsTests.expect(Arrays.equals(new byte[] {'0', 'x', (byte) 0xFF, 'a'}, key), "the caller's byte[] unchanged");
        });
        PerpsTests.test("secret forms: a char[] key with a lone surrogate is refused before the call, as a String is", () -> {
            char[] key = {'0', 'x', '\uD800'};
            try {
                Wallet.address("bsc", key);
                throw new AssertionError("a lone surrogate was accepted");
            } catch (IllegalArgumentException expected) {
                PerpsTests.expect(Arrays.equals(new char[] {'0', 'x', '\uD800'}, key), "the caller's char[] unchanged");
            }
        });

        Map<String, String> credential = PerpsTests.freshCredential("secret forms");
        if (credential == null) {
            return;
        }
        String token = credential.get("token"), key = credential.get("private_key");
        // A session's request key id and token show which key and token it holds.
        // The first and the last are accepted, the others refused.
        String[][] pairs = {{token, key}, {"", key}, {token, ""}, {"tok\0en", key}, {token, key + "\0"},
            {token, "not-a-key"}, {"tok", OfflineTests.RFC8032_SEED_B58}};
        for (String[] pair : pairs) {
            boolean good = pair == pairs[0] || pair == pairs[pairs.length - 1];
            PerpsTests.test("secret forms: Session.fromApiKey (token of " + pair[0].length() + ", key of " + pair[1].length()
                    + " characters): char[] and byte[] as String", () -> {
                Forms t = new Forms(pair[0]), k = new Forms(pair[1]);
                Function<Session, String> state = s -> {
                    try (s) {
                        return s.requestId() + " " + s.token();
                    }
                };
                String expected = outcome(() -> state.apply(Session.fromApiKey(t.text, k.text)));
                PerpsTests.expect(expected.startsWith("ok ") == good, (good ? "accepted: " : "refused: ") + expected);
                PerpsTests.equal(expected, outcome(() -> state.apply(Session.fromApiKey(t.chars, k.chars))));
                PerpsTests.equal(expected, outcome(() -> state.apply(Session.fromApiKey(t.bytes, k.bytes))));
                t.expectUnchanged();
                k.expectUnchanged();
            });
        }
        PerpsTests.test("secret forms: a session from an API key's arrays signs bodies that verify under its key", () -> {
            Forms t = new Forms(token), k = new Forms(key);
            String expectedId;
            try (Session s = Session.fromApiKey(token, key)) {
                expectedId = s.requestId();
            }
            for (Session s : new Session[] {Session.fromApiKey(t.chars, k.chars), Session.fromApiKey(t.bytes, k.bytes)}) {
                try (s) {
                    PerpsTests.equal(expectedId, s.requestId());
                    String body = "{\"note\":\"arrays\"}", id = "0b4f4a3e-8c1d-4f6e-9a2b-3c4d5e6f7a8b";
                    Map<String, String> h = TestJson.flat(s.signBodyAt(body, id, 1700000000000L));
                    byte[] message = ("v1," + id + ",1700000000000," + body).getBytes(StandardCharsets.UTF_8);
                    byte[] sig = Base64.getDecoder().decode(h.get("x-request-signature"));
                    PerpsTests.expect(PerpsTests.ed25519Verify(PerpsTests.base58(s.requestId()), message, sig),
                            "signature verifies");
                }
            }
            t.expectUnchanged();
            k.expectUnchanged();
        });

        try (Client client = new Client(PerpsTests.baseUrl, PerpsTests.perpsUrl)) {
            String payload;
            try (Session session = new Session()) {
                payload = client.prepareSignin(session, "bsc", PerpsTests.WALLET_ADDRESS);
            }
            sameAsString("Wallet.sign", WALLET_KEYS, f -> new Call[] {() -> Wallet.sign("bsc", f.text, payload),
                () -> Wallet.sign("bsc", f.chars, payload), () -> Wallet.sign("bsc", f.bytes, payload)});
            // Each form signs in a session of its own; the outcome is what the session then holds.
            Function<java.util.function.BiFunction<Client, Session, String>, Call> signin = form -> () -> {
                try (Session session = new Session()) {
                    form.apply(client, session);
                    String info = session.info();
                    PerpsTests.expect(info.contains("\"has_token\":true"), "info " + info);
                    return info.contains(PerpsTests.WALLET_ADDRESS) ? "signed in as the test wallet" : info;
                }
            };
            sameAsString("Client.signin", WALLET_KEYS, f -> new Call[] {
                signin.apply((c, s) -> c.signin(s, "bsc", f.text, 3600)),
                signin.apply((c, s) -> c.signin(s, "bsc", f.chars, 3600)),
                signin.apply((c, s) -> c.signin(s, "bsc", f.bytes, 3600))});
            PerpsTests.test("secret forms: a session signed in with a byte[] key places an order", () -> {
                Forms forms = new Forms(PerpsTests.WALLET_KEY);
                try (Session session = new Session()) {
                    client.signin(session, "bsc", forms.bytes, 3600);
                    PerpsTests.equal("0", TestJson.flat(client.newOrder(session, PerpsTests.ORDER_JSON)).get("code"));
                }
                forms.expectUnchanged();
            });
        }
    }
}
