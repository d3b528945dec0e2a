// Secret arguments through the Java binding (run by PerpsTests, with its harness): every
// private key and API token goes to the library in native memory the binding owns
// (PerpsNative.Secret), encoded through an array it wipes at once, and that memory must be
// zeros before it is freed, whether the call succeeded or failed. Secret.hook (package-private,
// tests only) shows the test each secret as made and as closed; a heap dump shows that a
// refused key's encoding left no copy behind (the encoding is the binding's own, not a
// CharsetEncoder's, whose buffers are dropped unwiped). The same for the char[] and byte[]
// forms: a char[] is encoded as a String is (made, encoded, closed); a byte[] is copied
// straight into native memory (made, closed), so a byte[] key its caller wiped leaves no copy.

import java.lang.reflect.Field;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.function.BiConsumer;
import perps.Client;
import perps.Session;
import perps.Wallet;

final class SecretTests {
    private SecretTests() {
    }

    /** What the hook saw: an event ("made", "encoded", "closed") and the bytes it was shown. */
    private record Seen(String event, byte[] bytes) {
    }

    static void run() {
        List<Seen> seen = new ArrayList<>();
        Field hook;
        Map<String, String> credential;
        try {
            credential = TestJson.flat(PerpsTests.admin("api-key", "{}"));
            hook = Class.forName("perps.PerpsNative$Secret").getDeclaredField("hook");
            hook.setAccessible(true);
            hook.set(null, (BiConsumer<String, byte[]>) (event, bytes) -> {
                synchronized (seen) {
                    seen.add(new Seen(event, bytes.clone()));
                }
            });
        } catch (Exception e) {
            PerpsTests.test("secrets: the test hook and an API credential", () -> {
                throw e;
            });
            return;
        }
        try {
            // Runs call (a PerpsException is expected when failing), then checks, per secret in
            // order: made holding it, its encoding array wiped, and closed as zeros.
            WipedForm wipedForm = (what, secrets, failing, bytes, call) -> PerpsTests.test("secrets: " + what, () -> {
                synchronized (seen) {
                    seen.clear();
                }
                if (failing) {
                    PerpsTests.expectThrows(call);
                } else {
                    call.run();
                }
                synchronized (seen) {
                    List<String> events = new ArrayList<>();
                    seen.forEach(s -> events.add(s.event()));
                    List<String> expected = new ArrayList<>();
                    for (int i = 0; i < secrets.length; i++) {
                        expected.addAll(bytes ? List.of("made") : List.of("made", "encoded"));
                    }
                    for (int i = 0; i < secrets.length; i++) {
                        expected.add("closed");
                    }
                    PerpsTests.equal(expected, events);
                    for (int i = 0; i < secrets.length; i++) {
                        byte[] secret = (secrets[i] + "\0").getBytes(StandardCharsets.UTF_8);
                        int made = bytes ? i : 2 * i;
                        PerpsTests.expect(Arrays.equals(secret, seen.get(made).bytes()), "secret " + i + " made holding it");
                        PerpsTests.expect(bytes || isZeros(seen.get(made + 1).bytes()), "secret " + i + "'s encoding array wiped");
                        // Closed in reverse order (try-with-resources).
                        byte[] closed = seen.get(seen.size() - 1 - i).bytes();
                        PerpsTests.expect(closed.length == secret.length && isZeros(closed), "secret " + i + " zeros when closed");
                    }
                }
            });

            Wiped wiped = (what, secrets, failing, call) -> wipedForm.check(what, secrets, failing, false, call);
            Wiped wipedBytes = (what, secrets, failing, call) -> wipedForm.check(what, secrets, failing, true, call);

            String wallet = PerpsTests.WALLET_KEY;
            wiped.check("Wallet.address wipes its key", new String[] {wallet}, false, () -> Wallet.address("bsc", wallet));
            wiped.check("Wallet.address wipes a key it refuses", new String[] {"0x1234"}, true, () -> Wallet.address("bsc", "0x1234"));
            String token = credential.get("token"), key = credential.get("private_key");
            wiped.check("Session.fromApiKey wipes its token and key", new String[] {token, key}, false,
                    () -> Session.fromApiKey(token, key).close());
            wiped.check("Session.fromApiKey wipes a token and key it refuses", new String[] {"tok", "not-a-key"}, true,
                    () -> Session.fromApiKey("tok", "not-a-key"));
            try (Client client = new Client(PerpsTests.baseUrl, PerpsTests.perpsUrl);
                    Session session = new Session()) {
                wiped.check("Client.signin wipes its key", new String[] {wallet}, false,
                        () -> client.signin(session, "bsc", wallet, 3600));
                wiped.check("Client.signin wipes a key it refuses", new String[] {"0x1234"}, true,
                        () -> client.signin(session, "bsc", "0x1234", 3600));
                String payload = client.prepareSignin(session, "bsc", PerpsTests.WALLET_ADDRESS);
                wiped.check("Wallet.sign wipes its key", new String[] {wallet}, false, () -> Wallet.sign("bsc", wallet, payload));
                wiped.check("Wallet.sign wipes its key when the payload is refused", new String[] {wallet}, true,
                        () -> Wallet.sign("bsc", wallet, "{"));
            }
            arrayForms(wiped, wipedBytes, token, key);
        } finally {
            try {
                hook.set(null, null);
            } catch (IllegalAccessException e) {
                throw new AssertionError(e);
            }
        }

        // A key refused must leave no copy of its bytes either: one refused before the call (not
        // valid Unicode: a lone surrogate at its end), and one refused by the library whose
        // UTF-8 is much longer than its characters (it is sent). The key is random and only ever
        // held two bytes a character (a char[], a String with a character above U+00FF), the
        // needle as ints: its hex digits in a row, one byte each, can only be a UTF-8 encoding
        // the binding left behind. The heap dump takes unreachable objects too (live=false).
        PerpsTests.test("secrets: a refused key leaves no UTF-8 copy in the heap (lone surrogate; many multi-byte characters)", () -> {
            leavesNoCopy("\uD800", IllegalArgumentException.class, Form.STRING);
            leavesNoCopy("\u0100".repeat(40), perps.PerpsException.class, Form.STRING);
        });
        // The same for a char[] key, never made a String; and for a byte[] key, already UTF-8,
        // which the caller wipes after the call: then no copy may be left, whether the library
        // refused it as not UTF-8 (a 0xFF byte) or as no key (many multi-byte characters).
        PerpsTests.test("secrets: a refused char[] key leaves no UTF-8 copy in the heap", () -> {
            leavesNoCopy("\uD800", IllegalArgumentException.class, Form.CHARS);
            leavesNoCopy("\u0100".repeat(40), perps.PerpsException.class, Form.CHARS);
        });
        PerpsTests.test("secrets: a refused byte[] key, wiped by its caller, leaves no copy in the heap", () -> {
            leavesNoCopy("\uFFFF", perps.PerpsException.class, Form.BYTES); // U+FFFF: written as the byte 0xFF
            leavesNoCopy("\u0100".repeat(40), perps.PerpsException.class, Form.BYTES);
        });
    }

    /** How the key is handed over. */
    private enum Form {
        STRING, CHARS, BYTES
    }

    /**
     * Wallet.address of a random key (U+0100, 64 hex digits, then {@code tail}) throws
     * {@code refusal}; then no copy of the hex digits may be in the heap. As BYTES, the key is
     * UTF-8 (U+FFFF in the tail as the invalid byte 0xFF), made and wiped here with no other copy.
     */
    private static void leavesNoCopy(String tail, Class<? extends RuntimeException> refusal, Form form) throws Exception {
        java.security.SecureRandom random = new java.security.SecureRandom();
        // U+0100 first: new String(char[]) tries a Latin-1 array first, and would leave one
        // holding every character before the first above U+00FF.
        char[] chars = new char[65 + tail.length()];
        int[] needle = new int[64];
        chars[0] = '\u0100';
        for (int i = 0; i < 64; i++) {
            chars[1 + i] = Character.forDigit(random.nextInt(16), 16);
            needle[i] = chars[1 + i];
        }
        tail.getChars(0, tail.length(), chars, 65);
        byte[] utf8 = null;
        if (form == Form.BYTES) {
            // Encoded by hand into the one array (U+0100 is C4 80, U+FFFF the byte FF alone).
            int n = 0;
            for (char ch : chars) {
                n += ch < 0x80 || ch == '\uFFFF' ? 1 : 2;
            }
            utf8 = new byte[n];
            n = 0;
            for (char ch : chars) {
                if (ch < 0x80 || ch == '\uFFFF') {
                    utf8[n++] = (byte) ch;
                } else {
                    utf8[n++] = (byte) (0xC0 | (ch >> 6));
                    utf8[n++] = (byte) (0x80 | (ch & 0x3F));
                }
            }
            Arrays.fill(chars, '\0');
        }
        String key = form == Form.STRING ? new String(chars) : null;
        if (form == Form.STRING) {
            Arrays.fill(chars, '\0');
        }
        try {
            switch (form) {
                case STRING -> Wallet.address("bsc", key);
                case CHARS -> Wallet.address("bsc", chars);
                case BYTES -> Wallet.address("bsc", utf8);
            }
            throw new AssertionError("the key was accepted");
        } catch (RuntimeException e) {
            PerpsTests.expect(refusal.isInstance(e), "refused with " + refusal.getSimpleName() + ": " + e);
        } finally {
            Arrays.fill(chars, '\0'); // the caller's wipe
            if (utf8 != null) {
                Arrays.fill(utf8, (byte) 0);
            }
        }
        java.nio.file.Path dump = java.nio.file.Files.createTempDirectory("perps-heap").resolve("heap.hprof");
        try {
            java.lang.management.ManagementFactory.getPlatformMXBean(com.sun.management.HotSpotDiagnosticMXBean.class)
                    .dumpHeap(dump.toString(), false);
            byte[] heap = java.nio.file.Files.readAllBytes(dump);
            int found = 0;
            for (int at = 0; at + needle.length <= heap.length; at++) {
                int n = 0;
                while (n < needle.length && heap[at + n] == needle[n]) {
                    n++;
                }
                if (n == needle.length) {
                    found++;
                }
            }
            PerpsTests.expect(found == 0, "no UTF-8 copy of the key (tail of " + tail.length()
                    + " characters) in the heap, found " + found);
        } finally {
            java.nio.file.Files.deleteIfExists(dump);
            java.nio.file.Files.deleteIfExists(dump.getParent());
        }
    }

    /** The same checks for the char[] and byte[] forms of each secret argument. */
    private static void arrayForms(Wiped chars, Wiped bytes, String token, String key) {
        String wallet = PerpsTests.WALLET_KEY;
        char[] c = wallet.toCharArray();
        byte[] b = wallet.getBytes(StandardCharsets.UTF_8);
        char[] refusedC = "0x1234".toCharArray();
        byte[] refusedB = "0x1234".getBytes(StandardCharsets.UTF_8);
        chars.check("Wallet.address(char[]) wipes its copies", new String[] {wallet}, false, () -> Wallet.address("bsc", c));
        bytes.check("Wallet.address(byte[]) wipes its copy", new String[] {wallet}, false, () -> Wallet.address("bsc", b));
        chars.check("Wallet.address(char[]) wipes a key it refuses", new String[] {"0x1234"}, true, () -> Wallet.address("bsc", refusedC));
        bytes.check("Wallet.address(byte[]) wipes a key it refuses", new String[] {"0x1234"}, true, () -> Wallet.address("bsc", refusedB));
        char[] tc = token.toCharArray(), kc = key.toCharArray();
        byte[] tb = token.getBytes(StandardCharsets.UTF_8), kb = key.getBytes(StandardCharsets.UTF_8);
        chars.check("Session.fromApiKey(char[]) wipes its token and key", new String[] {token, key}, false,
                () -> Session.fromApiKey(tc, kc).close());
        bytes.check("Session.fromApiKey(byte[]) wipes its token and key", new String[] {token, key}, false,
                () -> Session.fromApiKey(tb, kb).close());
        chars.check("Session.fromApiKey(char[]) wipes a token and key it refuses", new String[] {"tok", "not-a-key"}, true,
                () -> Session.fromApiKey("tok".toCharArray(), "not-a-key".toCharArray()));
        bytes.check("Session.fromApiKey(byte[]) wipes a token and key it refuses", new String[] {"tok", "not-a-key"}, true,
                () -> Session.fromApiKey("tok".getBytes(StandardCharsets.UTF_8), "not-a-key".getBytes(StandardCharsets.UTF_8)));
        // The key refused for its NUL before its copy is made: the token's copy, made, is wiped.
        chars.check("Session.fromApiKey(char[]) wipes the token when the key holds a NUL", new String[] {token}, true,
                () -> Session.fromApiKey(tc, (key + "\0").toCharArray()));
        bytes.check("Session.fromApiKey(byte[]) wipes the token when the key holds a NUL", new String[] {token}, true,
                () -> Session.fromApiKey(tb, (key + "\0").getBytes(StandardCharsets.UTF_8)));
        try (Client client = new Client(PerpsTests.baseUrl, PerpsTests.perpsUrl);
                Session session = new Session()) {
            chars.check("Client.signin(char[]) wipes its key", new String[] {wallet}, false, () -> client.signin(session, "bsc", c, 3600));
            bytes.check("Client.signin(byte[]) wipes its key", new String[] {wallet}, false, () -> client.signin(session, "bsc", b, 3600));
            chars.check("Client.signin(char[]) wipes a key it refuses", new String[] {"0x1234"}, true,
                    () -> client.signin(session, "bsc", refusedC, 3600));
            bytes.check("Client.signin(byte[]) wipes a key it refuses", new String[] {"0x1234"}, true,
                    () -> client.signin(session, "bsc", refusedB, 3600));
            String payload = client.prepareSignin(session, "bsc", PerpsTests.WALLET_ADDRESS);
            chars.check("Wallet.sign(char[]) wipes its key", new String[] {wallet}, false, () -> Wallet.sign("bsc", c, payload));
            bytes.check("Wallet.sign(byte[]) wipes its key", new String[] {wallet}, false, () -> Wallet.sign("bsc", b, payload));
            chars.check("Wallet.sign(char[]) wipes its key when the payload is refused", new String[] {wallet}, true,
                    () -> Wallet.sign("bsc", c, "{"));
            bytes.check("Wallet.sign(byte[]) wipes its key when the payload is refused", new String[] {wallet}, true,
                    () -> Wallet.sign("bsc", b, "{"));
        }
        PerpsTests.test("secrets: the caller's arrays are left as they were", () -> {
            PerpsTests.expect(Arrays.equals(wallet.toCharArray(), c) && Arrays.equals(wallet.getBytes(StandardCharsets.UTF_8), b),
                    "wallet key arrays unchanged");
            PerpsTests.expect(Arrays.equals(token.toCharArray(), tc) && Arrays.equals(key.getBytes(StandardCharsets.UTF_8), kb),
                    "token and key arrays unchanged");
        });
    }

    @FunctionalInterface
    private interface WipedForm {
        void check(String what, String[] secrets, boolean failing, boolean bytes, PerpsTests.Body call);
    }

    @FunctionalInterface
    private interface Wiped {
        void check(String what, String[] secrets, boolean failing, PerpsTests.Body call);
    }

    private static boolean isZeros(byte[] bytes) {
        for (byte b : bytes) {
            if (b != 0) {
                return false;
            }
        }
        return true;
    }
}
