// The offline helpers and the load-time ABI check of the Java binding (run by PerpsTests, with
// its harness), each against an independent truth:
//  - Wallet.wrapSolanaSignature: a raw signature made by the JDK's own Ed25519 with the RFC 8032
//    test key, wrapped into the known login signature (tests/c/fixtures.h SOL_LOGIN_SIG), whose
//    JSON carries the payload, message, signature and key; refused when it does not verify;
//  - Challenge.verify: the shared challenge fixture (tests/c/fixtures.h CHALLENGE_JWS, made and
//    verified with `cryptography` by tests/python/test_challenge.py), whose ES256 signature the
//    JDK verifies here with P-256's published generator point (the certs' key), gives back its
//    payload, and is refused expired, for another wallet or session key, or altered;
//  - AbiCheck (before PerpsNative.LIB's first use): the version rule on inputs that must be
//    refused, the message naming both versions and the file; the library loaded here agrees
//    with Perps.BINDING_VERSION. run.sh also runs PerpsTests against a libperps of another 0.x
//    minor (expectAbiRefusal), which must be refused before any call.

import java.lang.reflect.Method;
import java.math.BigInteger;
import java.nio.charset.StandardCharsets;
import java.security.AlgorithmParameters;
import java.security.KeyFactory;
import java.security.PrivateKey;
import java.security.PublicKey;
import java.security.Signature;
import java.security.spec.ECGenParameterSpec;
import java.security.spec.ECParameterSpec;
import java.security.spec.ECPoint;
import java.security.spec.ECPublicKeySpec;
import java.security.spec.EdECPrivateKeySpec;
import java.security.spec.NamedParameterSpec;
import java.util.Arrays;
import java.util.Base64;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import perps.Challenge;
import perps.Perps;
import perps.PerpsCode;
import perps.PerpsException;
import perps.Session;
import perps.Wallet;

final class OfflineTests {
    private OfflineTests() {
    }

    static final String RFC8032_SEED = "9d61b19deffd5a60ba844af492ec2cc44449c5697b326919703bac031cae7f60";
    static final String RFC8032_SEED_B58 = "BbMQkQYZspmkytduTWvXEtc4mMURjsekJDvty2WtKeSb";
    static final String RFC8032_ADDRESS = "FVen3X669xLzsi6N2V91DoiyzHzg1uAgqiT8jZ9nS96Z"; // base58 of its public key
    static final String SOL_PAYLOAD = "{\"message\":\"sign me please\",\"requestId\":\"x\"}";
    static final String SOL_LOGIN_SIG =
            "eyJpbnB1dCI6eyJtZXNzYWdlIjoic2lnbiBtZSBwbGVhc2UiLCJyZXF1ZXN0SWQiOiJ4In0sIm91dHB1dCI6eyJzaWdu"
            + "ZWRNZXNzYWdlIjpbMTE1LDEwNSwxMDMsMTEwLDMyLDEwOSwxMDEsMzIsMTEyLDEwOCwxMDEsOTcsMTE1LDEwMV0sInNp"
            + "Z25hdHVyZSI6WzczLDE2OCwyMDYsMzEsNzAsNzQsMjU1LDE0NywyNDIsMjQ3LDIzMCw4OSwxMzEsMjksMTUwLDk4LDE4"
            + "MCwzOCwxMzgsMTU4LDI0LDIxOSwyMDcsOTMsMTIwLDEzMiw1Niw4Niw2MSwyNSwyMTksOSw4Niw3MywyNDQsOTUsNjIs"
            + "MTUxLDIzMiwxMzUsMTgxLDEwLDEwLDIzLDQ0LDE4LDc3LDIyLDE1NCwyNTIsMTc5LDMxLDE0OSwyNTAsMzEsMTk3LDE5"
            + "MCw3NywyMTMsMjcsNjQsMTU4LDE1Miw3XSwiYWNjb3VudCI6eyJwdWJsaWNLZXkiOlsyMTUsOTAsMTUyLDEsMTMwLDE3"
            + "NywxMCwxODMsMjEzLDc1LDI1NCwyMTEsMjAxLDEwMCw3LDU4LDE0LDIyNSwxMTQsMjQzLDIxOCwxNjYsMzUsMzcsMTc1"
            + "LDIsMjYsMTA0LDI0Nyw3LDgxLDI2XX19fQ==";

    static final String CHALLENGE_CERTS = "{\"keys\":[{\"kty\":\"EC\",\"crv\":\"P-256\",\"kid\":\"k1\",\"alg\":\"ES256\","
            + "\"use\":\"sig\",\"x\":\"axfR8uEsQkf4vOblY6RA8ncDfYEt6zOg9KE5RdiYwpY\","
            + "\"y\":\"T-NC4v4af5uO5-tKfA-eFivOM1drMV7Oy7ZAaDe_UfU\"}]}";
    static final long CHALLENGE_NOW = 1700000060L; // issued at 1700000000
    static final long CHALLENGE_EXP = 1700000180L;
    static final String CHALLENGE_JWS = "eyJhbGciOiJFUzI1NiIsInR5cCI6IkpXVCIsImtpZCI6ImsxIn0."
            + "eyJkb21haW4iOiJ2ZW51ZS5leGFtcGxlIiwidXJpIjoiaHR0cHM6Ly92ZW51ZS5leGFtcGxlIiwic3RhdGVtZW50"
            + "IjoiU2lnbiBpbiB0byB0aGUgdGVzdCB2ZW51ZS4iLCJ2ZXJzaW9uIjoiMSIsImNoYWluSWQiOjU2LCJub25jZSI6"
            + "Im4wbmNlMTcwMDAwMDAwMCIsImFkZHJlc3MiOiIweGYzOUZkNmU1MWFhZDg4RjZGNGNlNmFCODgyNzI3OWNmZkZi"
            + "OTIyNjYiLCJyZXF1ZXN0SWQiOiJGVmVuM1g2Njl4THpzaTZOMlY5MURvaXl6SHpnMXVBZ3FpVDhqWjluUzk2WiIs"
            + "Imlzc3VlZEF0IjoiMjAyMy0xMS0xNFQyMjoxMzoyMFoiLCJtZXNzYWdlIjoidmVudWUuZXhhbXBsZSB3YW50cyB5"
            + "b3UgdG8gc2lnbiBpbiB3aXRoIHlvdXIgRXRoZXJldW0gYWNjb3VudDpcbjB4ZjM5RmQ2ZTUxYWFkODhGNkY0Y2U2"
            + "YUI4ODI3Mjc5Y2ZmRmI5MjI2NlxuXG5TaWduIGluIHRvIHRoZSB0ZXN0IHZlbnVlLlxuXG5VUkk6IGh0dHBzOi8v"
            + "dmVudWUuZXhhbXBsZVxuVmVyc2lvbjogMVxuQ2hhaW4gSUQ6IDU2XG5Ob25jZTogbjBuY2UxNzAwMDAwMDAwXG5J"
            + "c3N1ZWQgQXQ6IDIwMjMtMTEtMTRUMjI6MTM6MjBaXG5SZXF1ZXN0IElEOiBGVmVuM1g2Njl4THpzaTZOMlY5MURv"
            + "aXl6SHpnMXVBZ3FpVDhqWjluUzk2WiIsImlhdCI6MTcwMDAwMDAwMCwiZXhwIjoxNzAwMDAwMTgwfQ."
            + "j7s3-ScJacb5e3lu0q5TJvr3MyTNNtntLIbHb2cXwRmNDXskIyMRLeiCP5nHfuSuH6ljHcKZ-BJD3epZ1fBxbw";

    static byte[] bytes(Object jsonArray) {
        List<?> list = (List<?>) jsonArray;
        byte[] out = new byte[list.size()];
        for (int i = 0; i < out.length; i++) {
            out[i] = (byte) TestJson.dec(list.get(i)).intValueExact();
        }
        return out;
    }

    static Object call(String method, Class<?>[] types, Object... args) throws Exception {
        Method m = Class.forName("perps.AbiCheck").getDeclaredMethod(method, types);
        m.setAccessible(true);
        return m.invoke(null, args);
    }

    static void run() {
        PerpsTests.test("Wallet.wrapSolanaSignature: a JDK Ed25519 signature wrapped into the known login signature", () -> {
            PrivateKey key = KeyFactory.getInstance("Ed25519").generatePrivate(
                    new EdECPrivateKeySpec(NamedParameterSpec.ED25519, HexFormat.of().parseHex(RFC8032_SEED)));
            Signature signer = Signature.getInstance("Ed25519");
            signer.initSign(key);
            signer.update("sign me please".getBytes(StandardCharsets.UTF_8));
            byte[] raw = signer.sign();
            String wrapped = Wallet.wrapSolanaSignature(SOL_PAYLOAD, RFC8032_ADDRESS, raw);
            PerpsTests.equal(SOL_LOGIN_SIG, wrapped);
            Map<String, Object> login = TestJson.obj(TestJson.parse(
                    new String(Base64.getDecoder().decode(wrapped), StandardCharsets.UTF_8)));
            Map<String, Object> output = TestJson.obj(login.get("output"));
            PerpsTests.equal("sign me please", TestJson.obj(login.get("input")).get("message"));
            PerpsTests.equal("sign me please", new String(bytes(output.get("signedMessage")), StandardCharsets.UTF_8));
            PerpsTests.expect(Arrays.equals(bytes(output.get("signature")), raw), "the signature wrapped");
            PerpsTests.expect(Arrays.equals(bytes(TestJson.obj(output.get("account")).get("publicKey")),
                    PerpsTests.base58(RFC8032_ADDRESS)), "the public key wrapped");
            PerpsTests.equal(wrapped, Wallet.sign("solana", RFC8032_SEED_B58, SOL_PAYLOAD)); // Ed25519 is deterministic

            byte[] flipped = raw.clone();
            flipped[0] ^= 1;
            PerpsTests.equal(PerpsCode.VERIFICATION_FAILED, PerpsTests.expectThrows(() ->
                    Wallet.wrapSolanaSignature(SOL_PAYLOAD, RFC8032_ADDRESS, flipped)).getCode());
            PerpsTests.equal(PerpsCode.INVALID_ARGUMENT, PerpsTests.expectThrows(() ->
                    Wallet.wrapSolanaSignature(SOL_PAYLOAD, RFC8032_ADDRESS, Arrays.copyOf(raw, 63))).getCode());
            PerpsTests.equal(PerpsCode.VERIFICATION_FAILED, PerpsTests.expectThrows(() ->
                    Wallet.wrapSolanaSignature("{\"message\":\"another message\"}", RFC8032_ADDRESS, raw)).getCode());
        });

        PerpsTests.test("Challenge.verify: the shared fixture (the JDK verifies it) gives its payload; refused when it must be", () -> {
            String[] parts = CHALLENGE_JWS.split("\\.");
            Base64.Decoder url = Base64.getUrlDecoder();
            // Independently: the certs' key is P-256's generator point, and the JDK verifies the JWS with it.
            Map<String, Object> jwk = TestJson.obj(((List<?>) TestJson.obj(TestJson.parse(CHALLENGE_CERTS)).get("keys")).get(0));
            ECPoint point = new ECPoint(new BigInteger(1, url.decode((String) jwk.get("x"))),
                    new BigInteger(1, url.decode((String) jwk.get("y"))));
            AlgorithmParameters params = AlgorithmParameters.getInstance("EC");
            params.init(new ECGenParameterSpec("secp256r1"));
            ECParameterSpec p256 = params.getParameterSpec(ECParameterSpec.class);
            PerpsTests.equal(p256.getGenerator(), point);
            PublicKey certKey = KeyFactory.getInstance("EC").generatePublic(new ECPublicKeySpec(point, p256));
            Signature es256 = Signature.getInstance("SHA256withECDSAinP1363Format");
            es256.initVerify(certKey);
            es256.update((parts[0] + "." + parts[1]).getBytes(StandardCharsets.US_ASCII));
            PerpsTests.expect(es256.verify(url.decode(parts[2])), "the JDK verifies the fixture");

            String requestId;
            try (Session session = Session.fromApiKey("tok", RFC8032_SEED_B58)) {
                requestId = session.requestId();
            }
            PerpsTests.equal(RFC8032_ADDRESS, requestId);
            String payload = new String(url.decode(parts[1]), StandardCharsets.UTF_8);
            PerpsTests.equal(payload, Challenge.verify(CHALLENGE_JWS, CHALLENGE_CERTS, requestId, "bsc",
                    PerpsTests.WALLET_ADDRESS, CHALLENGE_NOW));
            Object[][] refused = {
                {CHALLENGE_JWS, requestId, PerpsTests.WALLET_ADDRESS, CHALLENGE_EXP},
                {CHALLENGE_JWS, requestId, "0x1111111111111111111111111111111111111111", CHALLENGE_NOW},
                {CHALLENGE_JWS, "8bK4GzmYb2Xc7m9vHuJnWWwvQ6RkU2z3t1ePqAa7sXYZ", PerpsTests.WALLET_ADDRESS, CHALLENGE_NOW},
                {parts[0] + "." + parts[1] + ".A" + parts[2].substring(1), requestId, PerpsTests.WALLET_ADDRESS, CHALLENGE_NOW},
            };
            for (Object[] c : refused) {
                PerpsException e = PerpsTests.expectThrows(() ->
                        Challenge.verify((String) c[0], CHALLENGE_CERTS, (String) c[1], "bsc", (String) c[2], (Long) c[3]));
                PerpsTests.equal(PerpsCode.VERIFICATION_FAILED, e.getCode());
                PerpsTests.expect(!e.mayHaveReachedVenue(), "offline");
            }
            PerpsTests.equal(PerpsCode.BAD_RESPONSE, PerpsTests.expectThrows(() -> Challenge.verify(CHALLENGE_JWS,
                    "not json", requestId, "bsc", PerpsTests.WALLET_ADDRESS, CHALLENGE_NOW)).getCode());
        });

        PerpsTests.test("ABI check: the version rule, the refusal's words, and the library loaded here", () -> {
            Class<?>[] two = {String.class, String.class};
            Class<?>[] three = {String.class, String.class, String.class};
            for (String ok : new String[] {"0.1.0/0.1.0", "0.1.0/0.1.7", "0.1.3/0.1.0", "1.2.0/1.2.0", "1.2.0/1.5.1",
                "0.1.0/0.1.1-rc.1"}) {
                String[] v = ok.split("/");
                PerpsTests.equal(Boolean.TRUE, call("compatible", two, v[0], v[1]));
            }
            for (String bad : new String[] {"0.1.0/0.2.0", "0.2.0/0.1.0", "0.1.0/1.1.0", "1.2.0/1.1.9", "1.2.0/2.2.0",
                "0.1.0/", "0.1.0/0.1", "0.1.0/x.1.0"}) {
                String[] v = bad.split("/", -1);
                PerpsTests.equal(Boolean.FALSE, call("compatible", two, v[0], v[1]));
            }
            String why = (String) call("refusal", three, "0.1.0", "0.2.0", "/usr/lib/x86_64-linux-gnu/libperps.so");
            for (String words : new String[] {"libperps 0.2.0", "libperps 0.1.0", "/usr/lib/x86_64-linux-gnu/libperps.so",
                "0.1.x", "jna.library.path"}) {
                PerpsTests.expect(why != null && why.contains(words), "the refusal names " + words + ": " + why);
            }
            PerpsTests.expect(call("refusal", three, "0.1.0", "0.1.9", "here") == null, "no refusal for a patch release");
            // The library these tests run against: built from the same Cargo.toml.
            PerpsTests.equal(Perps.BINDING_VERSION, Perps.version());
        });
    }

    /**
     * run.sh: PerpsTests against a libperps of another 0.x minor (a stand-in with perps_version
     * alone, on jna.library.path): the first call must throw UnsatisfiedLinkError naming both
     * versions and the file, and every later one a LinkageError too.
     */
    static void expectAbiRefusal(String libraryVersion, String libraryPath) {
        PerpsTests.test("ABI refusal of libperps " + libraryVersion + ": the first call", () -> {
            try {
                throw new AssertionError("the binding used libperps " + Perps.version());
            } catch (UnsatisfiedLinkError e) {
                for (String words : new String[] {"libperps " + libraryVersion, "libperps " + Perps.BINDING_VERSION,
                    libraryPath}) {
                    PerpsTests.expect(e.getMessage().contains(words), "the message names " + words + ": " + e.getMessage());
                }
                System.out.println("     " + e.getMessage());
            }
        });
        PerpsTests.test("ABI refusal of libperps " + libraryVersion + ": a later call", () -> {
            try {
                throw new AssertionError("the binding used libperps " + Perps.version());
            } catch (LinkageError e) {
                System.out.println("     " + e);
            }
        });
    }
}
