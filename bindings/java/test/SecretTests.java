// Secret arguments through the Java binding (run by PerpsTests, with its harness): every
// private key and API token goes to the library in native memory the binding owns
// (PerpsNative.Secret), encoded through an array it wipes at once, and that memory must be
// zeros before it is freed, whether the call succeeded or failed. Secret.hook (package-private,
// tests only) shows the test each secret as made and as closed; a heap dump shows that a
// refused key's encoding left no copy behind (the encoding is the binding's own, not a
// CharsetEncoder's, whose buffers are dropped unwiped).

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
            Wiped wiped = (what, secrets, failing, call) -> PerpsTests.test("secrets: " + what, () -> {
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
                        expected.addAll(List.of("made", "encoded"));
                    }
                    for (int i = 0; i < secrets.length; i++) {
                        expected.add("closed");
                    }
                    PerpsTests.equal(expected, events);
                    for (int i = 0; i < secrets.length; i++) {
                        byte[] secret = (secrets[i] + "\0").getBytes(StandardCharsets.UTF_8);
                        PerpsTests.expect(Arrays.equals(secret, seen.get(2 * i).bytes()), "secret " + i + " made holding it");
                        PerpsTests.expect(isZeros(seen.get(2 * i + 1).bytes()), "secret " + i + "'s encoding array wiped");
                        // Closed in reverse order (try-with-resources).
                        byte[] closed = seen.get(seen.size() - 1 - i).bytes();
                        PerpsTests.expect(closed.length == secret.length && isZeros(closed), "secret " + i + " zeros when closed");
                    }
                }
            });

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
            leavesNoCopy("\uD800", IllegalArgumentException.class);
            leavesNoCopy("\u0100".repeat(40), perps.PerpsException.class);
        });
    }

    /**
     * Wallet.address of a random key (U+0100, 64 hex digits, then {@code tail}) throws
     * {@code refusal}; then no copy of the hex digits may be in the heap.
     */
    private static void leavesNoCopy(String tail, Class<? extends RuntimeException> refusal) throws Exception {
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
        String key = new String(chars);
        Arrays.fill(chars, '\0');
        try {
            Wallet.address("bsc", key);
            throw new AssertionError("the key was accepted");
        } catch (RuntimeException e) {
            PerpsTests.expect(refusal.isInstance(e), "refused with " + refusal.getSimpleName() + ": " + e);
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
