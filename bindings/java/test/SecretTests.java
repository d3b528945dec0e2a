// Secret arguments through the Java binding (run by PerpsTests, with its harness): every
// private key and API token goes to the library in native memory the binding owns
// (PerpsNative.Secret), encoded through an array it wipes at once, and that memory must be
// zeros before it is freed, whether the call succeeded or failed. Secret.hook (package-private,
// tests only) shows the test each secret as made and as closed.

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
