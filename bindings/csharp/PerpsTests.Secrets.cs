// Secret arguments through the C# binding (part of PerpsTests): every private key and API
// token, given as a string, a char[] or a byte[], is copied into native memory (NativeSecret,
// Perps.Secrets.cs), through no managed array a garbage collection could move and leave
// behind. NativeSecret.seen (private, tests only) shows the test each copy as made and as
// disposed: each must hold its secret when made and be zeros before it is freed, whether the
// call succeeded or failed; the caller's arrays stay as they were.

using System;
using System.Collections.Generic;
using System.Linq;
using System.Text;
using Perps;

static partial class PerpsTests
{
    static void SecretTests()
    {
        var credential = FlatJson(Admin("api-key", "{}"));
        SecretCopyTests(credential["token"], credential["private_key"]);
    }

    static void SecretCopyTests(string token, string key)
    {
        var hook = typeof(Client).Assembly.GetType("Perps.NativeSecret")
            .GetField("seen", System.Reflection.BindingFlags.NonPublic | System.Reflection.BindingFlags.Static);
        var seen = new List<KeyValuePair<string, byte[]>>();
        hook.SetValue(null, (Action<string, byte[]>)((evt, bytes) => { lock (seen) seen.Add(new KeyValuePair<string, byte[]>(evt, bytes)); }));
        try
        {
            // Runs call (a PerpsException is expected when failing), then checks that each
            // secret, in order, was made holding it and closed as zeros (in reverse order: the
            // usings' nesting).
            Action<string, string[], bool, Action> wiped = (what, secrets, failing, call) => Test("secrets: " + what, () =>
            {
                lock (seen) seen.Clear();
                if (failing) Throws(call); else call();
                lock (seen)
                {
                    Equal(string.Join(",", secrets.Select(_ => "made").Concat(secrets.Select(_ => "closed"))),
                        string.Join(",", seen.Select(e => e.Key)));
                    for (int i = 0; i < secrets.Length; i++)
                    {
                        byte[] secret = Encoding.UTF8.GetBytes(secrets[i] + "\0");
                        Expect(seen[i].Value.SequenceEqual(secret), "copy " + i + " held the secret");
                        byte[] closed = seen[seen.Count - 1 - i].Value;
                        Expect(closed.Length == secret.Length && closed.All(b => b == 0), "copy " + i + " zeros when closed");
                    }
                }
            });
            Func<string, char[]> c = text => text.ToCharArray();
            Func<string, byte[]> u = text => Encoding.UTF8.GetBytes(text);
            string w = WalletKey;
            char[] wc = c(w);
            byte[] wb = u(w);
            wiped("Wallet.Address(string) wipes its copy", new[] { w }, false, () => Wallet.Address("bsc", w));
            wiped("Wallet.Address(string) wipes a key it refuses", new[] { "0x1234" }, true, () => Wallet.Address("bsc", "0x1234"));
            wiped("Session.FromApiKey(string) wipes its token and key", new[] { token, key }, false,
                () => Session.FromApiKey(token, key).Dispose());
            wiped("Session.FromApiKey(string) wipes a token and key it refuses", new[] { "tok", "not-a-key" }, true,
                () => Session.FromApiKey("tok", "not-a-key"));
            wiped("Session.FromApiKey(string) wipes the token when the key holds a NUL", new[] { token }, true,
                () => Session.FromApiKey(token, key + "\0"));
            wiped("Wallet.Address(char[]) wipes its copy", new[] { w }, false, () => Wallet.Address("bsc", wc));
            wiped("Wallet.Address(byte[]) wipes its copy", new[] { w }, false, () => Wallet.Address("bsc", wb));
            wiped("Wallet.Address(char[]) wipes a key it refuses", new[] { "0x1234" }, true, () => Wallet.Address("bsc", c("0x1234")));
            wiped("Wallet.Address(byte[]) wipes a key it refuses", new[] { "0x1234" }, true, () => Wallet.Address("bsc", u("0x1234")));
            wiped("Wallet.Address(char[]) wipes a non-ASCII key it refuses", new[] { "é€😀" }, true, () => Wallet.Address("bsc", c("é€😀")));
            wiped("Session.FromApiKey(char[]) wipes its token and key", new[] { token, key }, false,
                () => Session.FromApiKey(c(token), c(key)).Dispose());
            wiped("Session.FromApiKey(byte[]) wipes its token and key", new[] { token, key }, false,
                () => Session.FromApiKey(u(token), u(key)).Dispose());
            wiped("Session.FromApiKey(char[]) wipes a token and key it refuses", new[] { "tok", "not-a-key" }, true,
                () => Session.FromApiKey(c("tok"), c("not-a-key")));
            wiped("Session.FromApiKey(byte[]) wipes a token and key it refuses", new[] { "tok", "not-a-key" }, true,
                () => Session.FromApiKey(u("tok"), u("not-a-key")));
            // The key refused for its NUL before its copy is made: the token's copy is wiped.
            wiped("Session.FromApiKey(char[]) wipes the token when the key holds a NUL", new[] { token }, true,
                () => Session.FromApiKey(c(token), c(key + "\0")));
            wiped("Session.FromApiKey(byte[]) wipes the token when the key holds a NUL", new[] { token }, true,
                () => Session.FromApiKey(u(token), u(key + "\0")));
            using (var client = new Client(baseUrl, perpsUrl))
            using (var session = new Session())
            {
                wiped("Client.Signin(string) wipes its key", new[] { w }, false, () => client.Signin(session, "bsc", w, 3600));
                wiped("Client.Signin(string) wipes a key it refuses", new[] { "0x1234" }, true, () => client.Signin(session, "bsc", "0x1234", 3600));
                wiped("Client.Signin(char[]) wipes its key", new[] { w }, false, () => client.Signin(session, "bsc", wc, 3600));
                wiped("Client.Signin(byte[]) wipes its key", new[] { w }, false, () => client.Signin(session, "bsc", wb, 3600));
                wiped("Client.Signin(char[]) wipes a key it refuses", new[] { "0x1234" }, true, () => client.Signin(session, "bsc", c("0x1234"), 3600));
                wiped("Client.Signin(byte[]) wipes a key it refuses", new[] { "0x1234" }, true, () => client.Signin(session, "bsc", u("0x1234"), 3600));
                string payload = client.PrepareSignin(session, "bsc", WalletAddress);
                wiped("Wallet.Sign(string) wipes its key", new[] { w }, false, () => Wallet.Sign("bsc", w, payload));
                wiped("Wallet.Sign(string) wipes its key when the payload is refused", new[] { w }, true, () => Wallet.Sign("bsc", w, "{"));
                wiped("Wallet.Sign(char[]) wipes its key", new[] { w }, false, () => Wallet.Sign("bsc", wc, payload));
                wiped("Wallet.Sign(byte[]) wipes its key", new[] { w }, false, () => Wallet.Sign("bsc", wb, payload));
                wiped("Wallet.Sign(char[]) wipes its key when the payload is refused", new[] { w }, true, () => Wallet.Sign("bsc", wc, "{"));
                wiped("Wallet.Sign(byte[]) wipes its key when the payload is refused", new[] { w }, true, () => Wallet.Sign("bsc", wb, "{"));
            }
            Test("secrets: the caller's arrays are left as they were", () =>
                Expect(wc.SequenceEqual(w.ToCharArray()) && wb.SequenceEqual(Encoding.UTF8.GetBytes(w)), "wallet key arrays unchanged"));
        }
        finally
        {
            hook.SetValue(null, null);
        }
    }
}
