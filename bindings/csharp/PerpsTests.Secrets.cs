// Secret arguments through the C# binding (part of PerpsTests): every private key and API
// token is copied into a UTF-8 array the marshaller pins for the call, and that array is the
// binding's only copy. Each one must be zeros once the call returns, whether the call
// succeeded or failed. Interop.secretMade (private, tests only) shows the test each array
// as the binding makes it.

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
        var hook = typeof(Client).Assembly.GetType("Perps.Interop")
            .GetField("secretMade", System.Reflection.BindingFlags.NonPublic | System.Reflection.BindingFlags.Static);
        var made = new List<KeyValuePair<byte[], byte[]>>(); // each array, and a copy of it when made
        hook.SetValue(null, (Action<byte[]>)(bytes => { lock (made) made.Add(new KeyValuePair<byte[], byte[]>(bytes, (byte[])bytes.Clone())); }));
        try
        {
            // Runs call (a PerpsException is expected when failing), then checks that it made
            // one array per secret, each holding that secret as made and zeros now.
            Action<string, string[], bool, Action> wiped = (what, secrets, failing, call) => Test("secrets: " + what, () =>
            {
                lock (made) made.Clear();
                if (failing) Throws(call); else call();
                lock (made)
                {
                    Equal(secrets.Length, made.Count);
                    for (int i = 0; i < secrets.Length; i++)
                    {
                        Expect(made[i].Value.SequenceEqual(Encoding.UTF8.GetBytes(secrets[i] + "\0")), "array " + i + " held the secret");
                        Expect(made[i].Key.All(b => b == 0), "array " + i + " is zeros after the call");
                    }
                }
            });

            wiped("Wallet.Address wipes its key", new[] { WalletKey }, false, () => Wallet.Address("bsc", WalletKey));
            wiped("Wallet.Address wipes a key it refuses", new[] { "0x1234" }, true, () => Wallet.Address("bsc", "0x1234"));
            wiped("Session.FromApiKey wipes its token and key", new[] { credential["token"], credential["private_key"] }, false,
                () => Session.FromApiKey(credential["token"], credential["private_key"]).Dispose());
            wiped("Session.FromApiKey wipes a token and key it refuses", new[] { "tok", "not-a-key" }, true,
                () => Session.FromApiKey("tok", "not-a-key"));
            using (var client = new Client(baseUrl, perpsUrl))
            using (var session = new Session())
            {
                wiped("Client.Signin wipes its key", new[] { WalletKey }, false, () => client.Signin(session, "bsc", WalletKey, 3600));
                wiped("Client.Signin wipes a key it refuses", new[] { "0x1234" }, true, () => client.Signin(session, "bsc", "0x1234", 3600));
                string payload = client.PrepareSignin(session, "bsc", WalletAddress);
                wiped("Wallet.Sign wipes its key", new[] { WalletKey }, false, () => Wallet.Sign("bsc", WalletKey, payload));
                wiped("Wallet.Sign wipes its key when the payload is refused", new[] { WalletKey }, true, () => Wallet.Sign("bsc", WalletKey, "{"));
            }
        }
        finally
        {
            hook.SetValue(null, null);
        }
    }
}
