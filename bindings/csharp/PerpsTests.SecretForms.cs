// The char[] and byte[] forms of every secret argument of the C# binding (part of
// PerpsTests): Wallet.Address, Wallet.Sign, Client.Signin and Session.FromApiKey give what the
// string form gives — the same result for a good key, the same code and message for an empty
// one, one holding a NUL and one the library refuses — and never modify the caller's array
// (the caller wipes it). A byte[] that is not UTF-8 is the library's InvalidArgument naming
// the argument. Against independent truths: the test wallet's address, the RFC 8032 key's
// public key and its Solana login signature (made by the JDK: PerpsTests.Offline.cs).
// (That the binding's own copies are wiped: PerpsTests.Secrets.cs.)

using System;
using System.Collections.Generic;
using System.Linq;
using System.Text;
using Perps;

static partial class PerpsTests
{
    /// <summary>A call's result, or what it threw (type, code, message), as text.</summary>
    static string Outcome(Func<string> call)
    {
        try { return "ok " + call(); }
        catch (PerpsException e) { return "PerpsException " + e.Code + " " + e.Message; }
        catch (Exception e) { return e.GetType().Name + " " + e.Message; }
    }

    /// <summary>The secret as the three forms take it; Unchanged checks the arrays after.</summary>
    sealed class Forms
    {
        internal readonly string Text;
        internal readonly char[] Chars;
        internal readonly byte[] Bytes;
        private readonly char[] charsBefore;
        private readonly byte[] bytesBefore;

        internal Forms(string text)
        {
            Text = text;
            Chars = text.ToCharArray();
            Bytes = Encoding.UTF8.GetBytes(text);
            charsBefore = (char[])Chars.Clone();
            bytesBefore = (byte[])Bytes.Clone();
        }

        internal void Unchanged()
        {
            Expect(Chars.SequenceEqual(charsBefore), "the caller's char[] unchanged");
            Expect(Bytes.SequenceEqual(bytesBefore), "the caller's byte[] unchanged");
        }
    }

    /// <summary>Keys for a bsc wallet call: good, empty, a NUL inside, refused, non-ASCII.</summary>
    static readonly string[] WalletKeys = {
        WalletKey, "", WalletKey.Substring(0, 10) + "\0" + WalletKey.Substring(10), "0x1234", "é€😀" };

    /// <summary>For each key: the char[] and byte[] forms' outcomes equal the string form's,
    /// which succeeds for the test key only.</summary>
    static void SameAsString(string what, Func<Forms, Func<string>[]> calls)
    {
        foreach (string walletKey in WalletKeys)
        {
            string key = walletKey;
            string shown = new[] { "the test key", "an empty key", "the test key with a NUL inside", "a refused key",
                "a non-ASCII key" }[Array.IndexOf(WalletKeys, key)];
            Test("secret forms: " + what + " of " + shown + ": char[] and byte[] as string", () =>
            {
                var forms = new Forms(key);
                var three = calls(forms);
                string expected = Outcome(three[0]);
                Expect(expected.StartsWith("ok ") == (key == WalletKey), "outcome " + expected);
                Equal(expected, Outcome(three[1]));
                Equal(expected, Outcome(three[2]));
                forms.Unchanged();
            });
        }
    }

    static void SecretFormsTests()
    {
        SameAsString("Wallet.Address", f => new Func<string>[] {
            () => Wallet.Address("bsc", f.Text), () => Wallet.Address("bsc", f.Chars), () => Wallet.Address("bsc", f.Bytes) });
        Test("secret forms: Wallet.Address of the test key's arrays is its address", () =>
        {
            var forms = new Forms(WalletKey);
            Equal(WalletAddress, Wallet.Address("bsc", forms.Chars));
            Equal(WalletAddress, Wallet.Address("bsc", forms.Bytes));
            forms.Unchanged();
        });
        Test("secret forms: a byte[] key that is not UTF-8 is the library's InvalidArgument, naming it", () =>
        {
            var bad = new byte[] { (byte)'0', (byte)'x', 0xFF, (byte)'a' };
            var e = Throws(() => Wallet.Address("bsc", bad));
            Equal(PerpsCode.InvalidArgument, e.Code);
            Expect(e.Message.Contains("private_key is not valid UTF-8"), "message " + e.Message);
            Expect(bad.SequenceEqual(new byte[] { (byte)'0', (byte)'x', 0xFF, (byte)'a' }), "the caller's byte[] unchanged");
        });
        Test("secret forms: a char[] key with a lone surrogate is refused before the call, as a string is", () =>
        {
            var lone = new[] { '0', 'x', '\uD800' };
            Equal(Outcome(() => Wallet.Address("bsc", "0x\uD800")).Split(' ')[0], Outcome(() => Wallet.Address("bsc", lone)).Split(' ')[0]);
            try { Wallet.Address("bsc", lone); throw new Exception("a lone surrogate was accepted"); }
            catch (ArgumentException) { }
            Expect(lone.SequenceEqual(new[] { '0', 'x', '\uD800' }), "the caller's char[] unchanged");
        });
        Test("secret forms: Wallet.Sign of the RFC 8032 key's arrays is its known Solana login signature", () =>
        {
            var forms = new Forms(Rfc8032SeedB58);
            Equal(SolLoginSig, Wallet.Sign("solana", forms.Chars, SolPayload));
            Equal(SolLoginSig, Wallet.Sign("solana", forms.Bytes, SolPayload));
            forms.Unchanged();
        });

        var credential = FlatJson(Admin("api-key", "{}"));
        string token = credential["token"], key = credential["private_key"];
        // The first and the last are accepted, the others refused. A session's request key id,
        // a body signature at a fixed id and time (Ed25519 is deterministic) and its token show
        // which key and token it holds.
        var pairs = new[] {
            new[] { token, key }, new[] { "", key }, new[] { token, "" }, new[] { "tok\0en", key }, new[] { token, key + "\0" },
            new[] { token, "not-a-key" }, new[] { "tok", Rfc8032SeedB58 } };
        Func<Session, string> state = s =>
        {
            using (s)
                return s.RequestId + " " + s.Token + " " + s.SignBodyAt("{\"a\":1}", "0b4f4a3e-8c1d-4f6e-9a2b-3c4d5e6f7a8b", 1700000000000);
        };
        for (int i = 0; i < pairs.Length; i++)
        {
            var pair = pairs[i];
            bool good = i == 0 || i == pairs.Length - 1;
            Test("secret forms: Session.FromApiKey (token of " + pair[0].Length + ", key of " + pair[1].Length
                + " characters): char[] and byte[] as string", () =>
            {
                Forms t = new Forms(pair[0]), k = new Forms(pair[1]);
                string expected = Outcome(() => state(Session.FromApiKey(t.Text, k.Text)));
                Expect(expected.StartsWith("ok ") == good, "outcome " + expected);
                Equal(expected, Outcome(() => state(Session.FromApiKey(t.Chars, k.Chars))));
                Equal(expected, Outcome(() => state(Session.FromApiKey(t.Bytes, k.Bytes))));
                t.Unchanged();
                k.Unchanged();
            });
        }
        Test("secret forms: a session from the RFC 8032 key's arrays has its public key", () =>
        {
            var k = new Forms(Rfc8032SeedB58);
            using (var s = Session.FromApiKey("tok".ToCharArray(), k.Chars)) Equal(Rfc8032Address, s.RequestId);
            using (var s = Session.FromApiKey(Encoding.UTF8.GetBytes("tok"), k.Bytes)) Equal(Rfc8032Address, s.RequestId);
            k.Unchanged();
        });

        using (var client = new Client(baseUrl, perpsUrl))
        {
            string payload;
            using (var session = new Session()) payload = client.PrepareSignin(session, "bsc", WalletAddress);
            SameAsString("Wallet.Sign", f => new Func<string>[] {
                () => Wallet.Sign("bsc", f.Text, payload), () => Wallet.Sign("bsc", f.Chars, payload), () => Wallet.Sign("bsc", f.Bytes, payload) });
            // Each form signs in a session of its own; the outcome is what the session then holds.
            Func<Action<Session>, Func<string>> signin = form => () =>
            {
                using (var session = new Session())
                {
                    form(session);
                    string info = session.Info;
                    Expect(info.Contains("\"has_token\":true"), "info " + info);
                    return info.Contains(WalletAddress) ? "signed in as the test wallet" : info;
                }
            };
            SameAsString("Client.Signin", f => new[] {
                signin(s => client.Signin(s, "bsc", f.Text, 3600)),
                signin(s => client.Signin(s, "bsc", f.Chars, 3600)),
                signin(s => client.Signin(s, "bsc", f.Bytes, 3600)) });
            Test("secret forms: a session signed in with a byte[] key places an order", () =>
            {
                var forms = new Forms(WalletKey);
                using (var session = new Session())
                {
                    client.Signin(session, "bsc", forms.Bytes, 3600);
                    Equal("0", FlatJson(client.NewOrder(session, OrderJson))["code"]);
                }
                forms.Unchanged();
            });
        }
    }
}
