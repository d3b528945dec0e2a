// The offline helpers and the load-time ABI check of the C# binding (part of PerpsTests), each
// against an independent truth:
//  - Wallet.WrapSolanaSignature: a raw signature computed outside the library (Python
//    `cryptography`, tests/c/fixtures.h SOL_RAW_SIG) wrapped into the known login signature,
//    whose JSON carries the payload, message, signature and key; refused when it does not verify;
//  - Challenge.Verify: the shared challenge fixture (tests/c/fixtures.h CHALLENGE_JWS, made and
//    verified with `cryptography` by tests/python/test_challenge.py: an ES256 JWS by the key
//    whose public key is P-256's generator point, the certs' key) gives back its payload, and is
//    refused expired, for another wallet or session key, or with its signature changed;
//  - AbiCheck (Native's static constructor): the version rule on inputs that must be refused,
//    the message naming both versions and the path; the library loaded here agrees with
//    Library.BindingVersion. run.sh also runs this program against a libperps of another 0.x
//    minor (ExpectAbiRefusal), which must be refused before any call.

using System;
using System.Collections.Generic;
using System.Linq;
using System.Reflection;
using System.Text;
using Perps;

static partial class PerpsTests
{
    const string Rfc8032SeedB58 = "BbMQkQYZspmkytduTWvXEtc4mMURjsekJDvty2WtKeSb";
    const string Rfc8032Address = "FVen3X669xLzsi6N2V91DoiyzHzg1uAgqiT8jZ9nS96Z"; // base58 of its public key
    const string SolPayload = "{\"message\":\"sign me please\",\"requestId\":\"x\"}";
    static readonly byte[] SolRawSig = {
        73, 168, 206, 31, 70, 74, 255, 147, 242, 247, 230, 89, 131, 29, 150, 98,
        180, 38, 138, 158, 24, 219, 207, 93, 120, 132, 56, 86, 61, 25, 219, 9,
        86, 73, 244, 95, 62, 151, 232, 135, 181, 10, 10, 23, 44, 18, 77, 22,
        154, 252, 179, 31, 149, 250, 31, 197, 190, 77, 213, 27, 64, 158, 152, 7 };
    const string SolLoginSig =
        "eyJpbnB1dCI6eyJtZXNzYWdlIjoic2lnbiBtZSBwbGVhc2UiLCJyZXF1ZXN0SWQiOiJ4In0sIm91dHB1dCI6eyJzaWdu"
        + "ZWRNZXNzYWdlIjpbMTE1LDEwNSwxMDMsMTEwLDMyLDEwOSwxMDEsMzIsMTEyLDEwOCwxMDEsOTcsMTE1LDEwMV0sInNp"
        + "Z25hdHVyZSI6WzczLDE2OCwyMDYsMzEsNzAsNzQsMjU1LDE0NywyNDIsMjQ3LDIzMCw4OSwxMzEsMjksMTUwLDk4LDE4"
        + "MCwzOCwxMzgsMTU4LDI0LDIxOSwyMDcsOTMsMTIwLDEzMiw1Niw4Niw2MSwyNSwyMTksOSw4Niw3MywyNDQsOTUsNjIs"
        + "MTUxLDIzMiwxMzUsMTgxLDEwLDEwLDIzLDQ0LDE4LDc3LDIyLDE1NCwyNTIsMTc5LDMxLDE0OSwyNTAsMzEsMTk3LDE5"
        + "MCw3NywyMTMsMjcsNjQsMTU4LDE1Miw3XSwiYWNjb3VudCI6eyJwdWJsaWNLZXkiOlsyMTUsOTAsMTUyLDEsMTMwLDE3"
        + "NywxMCwxODMsMjEzLDc1LDI1NCwyMTEsMjAxLDEwMCw3LDU4LDE0LDIyNSwxMTQsMjQzLDIxOCwxNjYsMzUsMzcsMTc1"
        + "LDIsMjYsMTA0LDI0Nyw3LDgxLDI2XX19fQ==";

    const string ChallengeCerts = "{\"keys\":[{\"kty\":\"EC\",\"crv\":\"P-256\",\"kid\":\"k1\",\"alg\":\"ES256\",\"use\":\"sig\","
        + "\"x\":\"axfR8uEsQkf4vOblY6RA8ncDfYEt6zOg9KE5RdiYwpY\",\"y\":\"T-NC4v4af5uO5-tKfA-eFivOM1drMV7Oy7ZAaDe_UfU\"}]}";
    const long ChallengeNow = 1700000060, ChallengeExp = 1700000180; // issued at 1700000000
    const string ChallengeJws = "eyJhbGciOiJFUzI1NiIsInR5cCI6IkpXVCIsImtpZCI6ImsxIn0."
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

    static byte[] Base64Url(string text)
    {
        string b64 = text.Replace('-', '+').Replace('_', '/');
        return Convert.FromBase64String(b64 + new string('=', (4 - b64.Length % 4) % 4));
    }

    static void OfflineTests()
    {
        Test("Wallet.WrapSolanaSignature: an outside signature wrapped into the known login signature", () =>
        {
            string wrapped = Wallet.WrapSolanaSignature(SolPayload, Rfc8032Address, SolRawSig);
            Equal(SolLoginSig, wrapped);
            var login = Obj(Json(Encoding.UTF8.GetString(Convert.FromBase64String(wrapped))));
            var output = Obj(login["output"]);
            Func<object, byte[]> bytes = v => ((List<object>)v).Select(b => (byte)(decimal)b).ToArray();
            Equal("sign me please", (string)Obj(login["input"])["message"]);
            Equal("sign me please", Encoding.UTF8.GetString(bytes(output["signedMessage"])));
            Expect(bytes(output["signature"]).SequenceEqual(SolRawSig), "the signature wrapped");
            Equal(32, bytes(Obj(output["account"])["publicKey"]).Length);
            Equal(wrapped, Wallet.Sign("solana", Rfc8032SeedB58, SolPayload)); // Ed25519 is deterministic

            var flipped = (byte[])SolRawSig.Clone();
            flipped[0] ^= 1;
            Equal(PerpsCode.VerificationFailed, Throws(() => Wallet.WrapSolanaSignature(SolPayload, Rfc8032Address, flipped)).Code);
            Equal(PerpsCode.InvalidArgument, Throws(() => Wallet.WrapSolanaSignature(SolPayload, Rfc8032Address, SolRawSig.Take(63).ToArray())).Code);
            Equal(PerpsCode.VerificationFailed,
                Throws(() => Wallet.WrapSolanaSignature("{\"message\":\"another message\"}", Rfc8032Address, SolRawSig)).Code);
        });

        Test("Challenge.Verify: the shared fixture's payload back; refused expired, for another wallet or key, or altered", () =>
        {
            string requestId;
            using (var session = Session.FromApiKey("tok", Rfc8032SeedB58)) requestId = session.RequestId;
            Equal(Rfc8032Address, requestId);
            string[] parts = ChallengeJws.Split('.');
            string payload = Encoding.UTF8.GetString(Base64Url(parts[1]));
            Equal(payload, Challenge.Verify(ChallengeJws, ChallengeCerts, requestId, "bsc", WalletAddress, ChallengeNow));
            var refused = new[]
            {
                new object[] { ChallengeJws, requestId, WalletAddress, ChallengeExp },
                new object[] { ChallengeJws, requestId, "0x1111111111111111111111111111111111111111", ChallengeNow },
                new object[] { ChallengeJws, "8bK4GzmYb2Xc7m9vHuJnWWwvQ6RkU2z3t1ePqAa7sXYZ", WalletAddress, ChallengeNow },
                new object[] { parts[0] + "." + parts[1] + ".A" + parts[2].Substring(1), requestId, WalletAddress, ChallengeNow },
            };
            foreach (var c in refused)
            {
                var e = Throws(() => Challenge.Verify((string)c[0], ChallengeCerts, (string)c[1], "bsc", (string)c[2], (long)c[3]));
                Equal(PerpsCode.VerificationFailed, e.Code);
                Expect(!e.MayHaveReachedVenue, "offline");
            }
            Equal(PerpsCode.BadResponse, Throws(() => Challenge.Verify(ChallengeJws, "not json", requestId, "bsc", WalletAddress, ChallengeNow)).Code);
        });

        Test("ABI check: the version rule, the refusal's words, and the library loaded here", () =>
        {
            var check = typeof(Client).Assembly.GetType("Perps.AbiCheck");
            Func<string, string, bool> compatible = (b, l) =>
                (bool)check.GetMethod("Compatible", BindingFlags.NonPublic | BindingFlags.Static).Invoke(null, new object[] { b, l });
            Func<string, string, string, string> refusal = (b, l, p) =>
                (string)check.GetMethod("Refusal", BindingFlags.NonPublic | BindingFlags.Static).Invoke(null, new object[] { b, l, p });
            foreach (var ok in new[] { "0.1.0/0.1.0", "0.1.0/0.1.7", "0.1.3/0.1.0", "1.2.0/1.2.0", "1.2.0/1.5.1", "0.1.0/0.1.1-rc.1" })
                Expect(compatible(ok.Split('/')[0], ok.Split('/')[1]), ok + " compatible");
            foreach (var bad in new[] { "0.1.0/0.2.0", "0.2.0/0.1.0", "0.1.0/1.1.0", "1.2.0/1.1.9", "1.2.0/2.2.0", "0.1.0/", "0.1.0/0.1", "0.1.0/x.1.0" })
                Expect(!compatible(bad.Split('/')[0], bad.Split('/')[1]), bad + " refused");
            string why = refusal("0.1.0", "0.2.0", "/usr/lib/x86_64-linux-gnu/libperps.so");
            foreach (var words in new[] { "libperps 0.2.0", "libperps 0.1.0", "/usr/lib/x86_64-linux-gnu/libperps.so", "0.1.x", "LD_LIBRARY_PATH" })
                Expect(why != null && why.Contains(words), "refusal names " + words + ": " + why);
            Expect(refusal("0.1.0", "0.1.9", "here") == null, "no refusal for a patch release");
            // The library these tests run against: built from the same Cargo.toml.
            Equal(Library.BindingVersion, Library.Version);
            string loaded = (string)check.GetMethod("LoadedFrom", BindingFlags.NonPublic | BindingFlags.Static).Invoke(null, null);
            Expect(loaded.Contains("/libperps.so"), "loaded from " + loaded);
        });
    }

    /// <summary>run.sh: this program against a libperps of another 0.x minor (a stand-in with
    /// perps_version alone): the first call must throw, naming both versions and the file,
    /// and so must every later one. Prints "N passed, N failed".</summary>
    static int ExpectAbiRefusal(string libraryVersion, string libraryPath)
    {
        for (int attempt = 1; attempt <= 2; attempt++)
        {
            Test("ABI refusal of libperps " + libraryVersion + " (call " + attempt + ")", () =>
            {
                try
                {
                    string v = Library.Version;
                    throw new Exception("the binding used libperps " + v);
                }
                catch (TypeInitializationException e)
                {
                    var inner = e.InnerException as DllNotFoundException;
                    Expect(inner != null, "a DllNotFoundException inside: " + e.InnerException);
                    foreach (var words in new[] { "libperps " + libraryVersion, "libperps " + Library.BindingVersion, libraryPath })
                        Expect(inner.Message.Contains(words), "the message names " + words + ": " + inner.Message);
                    Console.WriteLine("     " + inner.Message);
                }
            });
        }
        Console.WriteLine(passed + " passed, " + failed + " failed");
        return failed == 0 ? 0 : 1;
    }
}
