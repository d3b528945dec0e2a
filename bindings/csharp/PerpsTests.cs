// Tests of the C# binding against the sandbox venue, which this program starts itself.
//
//   mono PerpsTests.exe PATH/TO/perps-sandbox
//   mono PerpsTests.exe --expect-abi-refusal VERSION PATH   (with LD_LIBRARY_PATH on a libperps of
//                                                           another ABI: PerpsTests.Offline.cs)
//
// Prints one line per test and closes with "N passed, N failed"; exits 1 on any failure.

using System;
using System.Collections.Generic;
using System.Diagnostics;
using System.Globalization;
using System.Linq;
using System.Net;
using System.Text;
using System.Text.RegularExpressions;
using Perps;

static partial class PerpsTests
{
    const string WalletKey = "0xac0974bec39a17e36ba4a6b4d238ff944bacb478cbed5efcae784d7bf4f2ff80"; // published test key
    const string WalletAddress = "0xf39Fd6e51aad88F6F4ce6aB8827279cffFb92266";
    const string OrderJson = "{\"symbol\":\"BTC-USD\",\"side\":\"buy\",\"order_type\":\"limit\",\"qty\":\"0.01\","
        + "\"price\":\"65000\",\"time_in_force\":\"gtc\",\"reduce_only\":false}";
    static readonly Regex Uuid4 = new Regex("^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$");

    static int passed, failed;
    static string baseUrl, perpsUrl, adminUrl;

    // ---- the README's "Use from C#" snippet, verbatim ----
    static string PlaceOrder(string baseUrl, string perpsUrl, string walletKey, string orderJson)
    {
        using (var client = new Client(baseUrl, perpsUrl))
        using (var session = new Session())
        {
            string address = Wallet.Address("bsc", walletKey);
            string payload = client.PrepareSignin(session, "bsc", address); // challenge verified
            string signature = Wallet.Sign("bsc", walletKey, payload);      // or an external wallet
            client.Login(session, signature, 3600);
            return client.NewOrder(session, orderJson); // PerpsException: Code, HttpStatus, Body,
        }                                               // MayHaveReachedVenue (then query first)
    }
    // ---- end of snippet ----

    static int Main(string[] args)
    {
        if (args.Length == 3 && args[0] == "--expect-abi-refusal") return ExpectAbiRefusal(args[1], args[2]);
        if (args.Length != 1)
        {
            Console.Error.WriteLine("usage: mono PerpsTests.exe PATH/TO/perps-sandbox");
            return 2;
        }
        Process sandbox;
        try { sandbox = StartSandbox(args[0]); }
        catch (Exception e)
        {
            Console.WriteLine("FAIL start the sandbox: " + e.Message);
            Console.WriteLine("0 passed, 1 failed");
            return 1;
        }
        try { RunAll(); }
        finally { StopSandbox(sandbox); }
        Console.WriteLine(passed + " passed, " + failed + " failed");
        return failed == 0 ? 0 : 1;
    }

    static void RunAll()
    {
        Test("version is MAJOR.MINOR.PATCH", () =>
            Expect(Regex.IsMatch(Library.Version, @"^\d+\.\d+\.\d+$"), "version " + Library.Version));

        Test("wallet address of the bsc test key", () =>
            Equal(WalletAddress, Wallet.Address("bsc", WalletKey)));

        Test("README flow: sign-in bsc, login, order", () =>
        {
            long before = Stat("orders_accepted");
            string answer = PlaceOrder(baseUrl, perpsUrl, WalletKey, OrderJson);
            Expect(answer.Contains("\"code\":0"), "answer " + answer);
            Equal(before + 1, Stat("orders_accepted"));
        });

        using (var client = new Client(baseUrl, perpsUrl))
        using (var session = new Session())
        {
            Test("sign-in bsc step by step, session state", () =>
            {
                string payload = client.PrepareSignin(session, "bsc", WalletAddress);
                Expect(payload.Contains("\"message\""), "payload has no message: " + payload);
                Expect(session.Info.Contains("\"pending_signin\":true"), "info " + session.Info);
                string signature = Wallet.Sign("bsc", WalletKey, payload);
                Expect(Regex.IsMatch(signature, "^0x[0-9a-f]{130}$"), "signature " + signature);
                string login = client.Login(session, signature, 3600);
                Expect(login.Length > 0, "empty login answer");
                string info = session.Info;
                Expect(info.Contains("\"has_token\":true"), "info " + info);
                Expect(info.Contains(WalletAddress), "info " + info);
                Expect(session.Token.Length > 0, "empty token");
            });

            Test("one-call sign-in and an order", () =>
            {
                client.Signin(session, "bsc", WalletKey, 3600);
                string answer = client.NewOrder(session, OrderJson);
                var json = FlatJson(answer);
                Equal("0", json["code"]);
                Expect(Uuid4.IsMatch(json["request_id"]), "request_id " + json["request_id"]);
            });

            Test("error: HTTP 500 from the venue (fault) -> HttpStatus, flag true", () =>
            {
                Admin("faults", "{\"status\":500}");
                try
                {
                    var e = Throws(() => client.NewOrder(session, OrderJson));
                    Equal(PerpsCode.HttpStatus, e.Code);
                    Equal(500, e.HttpStatus);
                    Expect(e.Body != null && e.Body.Contains("sandbox fault"), "body " + e.Body);
                    Expect(e.MayHaveReachedVenue, "a 5xx may have reached the venue");
                }
                finally { Admin("faults", "{}"); }
            });

            Test("error: HTTP 404 from the venue (fault) -> flag false", () =>
            {
                Admin("faults", "{\"status\":404}");
                try
                {
                    var e = Throws(() => client.NewOrder(session, OrderJson));
                    Equal(PerpsCode.HttpStatus, e.Code);
                    Equal(404, e.HttpStatus);
                    Expect(!e.MayHaveReachedVenue, "a 4xx was refused");
                }
                finally { Admin("faults", "{}"); }
            });

            Test("error: invalid order names the (UTF-8) field, nothing sent", () =>
            {
                long before = Stat("orders_received");
                string bad = OrderJson.Replace("}", ",\"prix€😀\":\"1\"}");
                var e = Throws(() => client.NewOrder(session, bad));
                Equal(PerpsCode.InvalidOrder, e.Code);
                Expect(e.Message.Contains("prix€😀"), "message " + e.Message);
                Equal(0, e.HttpStatus);
                Expect(e.Body == null, "no body");
                Expect(!e.MayHaveReachedVenue, "nothing was sent");
                Equal(before, Stat("orders_received"));
            });

            Test("error: order after logout is InvalidState", () =>
            {
                session.Logout();
                var e = Throws(() => client.NewOrder(session, OrderJson));
                Equal(PerpsCode.InvalidState, e.Code);
                Expect(!e.MayHaveReachedVenue, "nothing was sent");
            });

            Test("body signature: JSON of the four headers, UUID v4, 64-byte base64", () =>
            {
                var headers = FlatJson(session.SignBody(OrderJson));
                Equal(4, headers.Count);
                Equal("v1", headers["x-request-sign-version"]);
                Expect(Uuid4.IsMatch(headers["x-request-id"]), "x-request-id " + headers["x-request-id"]);
                long ts = long.Parse(headers["x-request-timestamp"]);
                long now = (long)(DateTime.UtcNow - new DateTime(1970, 1, 1, 0, 0, 0, DateTimeKind.Utc)).TotalMilliseconds;
                Expect(Math.Abs(now - ts) < 60000, "timestamp " + ts + " vs now " + now);
                Equal(64, Convert.FromBase64String(headers["x-request-signature"]).Length);
            });

            Test("body signature at a given id and time is deterministic", () =>
            {
                const string id = "0b4f4a3e-8c1d-4f6e-9a2b-3c4d5e6f7a8b";
                var a = FlatJson(session.SignBodyAt("{\"note\":\"café €\"}", id, 1700000000000));
                var b = FlatJson(session.SignBodyAt("{\"note\":\"café €\"}", id, 1700000000000));
                var c = FlatJson(session.SignBodyAt("{\"note\":\"cafe €\"}", id, 1700000000000));
                Equal(id, a["x-request-id"]);
                Equal("1700000000000", a["x-request-timestamp"]);
                Equal(a["x-request-signature"], b["x-request-signature"]);
                Expect(a["x-request-signature"] != c["x-request-signature"], "different bodies, same signature");
            });

            Test("body signature into the fixed-size struct (size_t as UIntPtr)", () =>
            {
                var sig = session.SignBodyInto(Encoding.UTF8.GetBytes(OrderJson));
                Equal("v1", sig.Version);
                Expect(Uuid4.IsMatch(sig.RequestId), "request id " + sig.RequestId);
                Expect(Regex.IsMatch(sig.Timestamp, @"^\d{13}$"), "timestamp " + sig.Timestamp);
                Equal(64, Convert.FromBase64String(sig.Signature).Length);
                Equal(64, Convert.FromBase64String(session.SignBodyInto(new byte[0]).Signature).Length);
            });

            Test("order serialisation is the compact body", () =>
                Equal(OrderJson, Order.Serialize(OrderJson.Replace(",", ", "))));

            Test("a string that is not valid Unicode is refused before the call", () =>
            {
                try { Order.Serialize("{\"symbol\":\"\uD800\"}"); throw new Exception("a lone surrogate was accepted"); }
                catch (ArgumentException) { } // EncoderFallbackException: not sent as '?'
            });

            Test("a string holding a NUL is InvalidArgument, not signed up to the NUL", () =>
            {
                var e = Throws(() => session.SignBodyAt("{\"a\":1}\0{\"b\":2}", "0b4f4a3e-8c1d-4f6e-9a2b-3c4d5e6f7a8b", 1));
                Equal(PerpsCode.InvalidArgument, e.Code);
                Expect(e.Message.Contains("NUL"), "message " + e.Message);
                Equal(PerpsCode.InvalidArgument, Throws(() => Wallet.Address("bsc", WalletKey + "\0")).Code);
            });

            Test("NULL argument is InvalidArgument naming it", () =>
            {
                var e = Throws(() => Wallet.Address(null, WalletKey));
                Equal(PerpsCode.InvalidArgument, e.Code);
                Expect(e.Message.Contains("chain"), "message " + e.Message);
            });
        }

        Test("handles: Dispose is idempotent, use after Dispose is refused", () =>
        {
            var session = new Session();
            string id = session.RequestId;
            Expect(id.Length >= 32, "request id " + id);
            session.Dispose();
            session.Dispose();
            try { var unused = session.RequestId; throw new Exception("no exception after Dispose: " + unused); }
            catch (ObjectDisposedException) { }
        });

        Test("client options are checked (unknown option refused)", () =>
        {
            var e = Throws(() => new Client(baseUrl, perpsUrl, "{\"no_such_option\":1}").Dispose());
            Equal(PerpsCode.InvalidArgument, e.Code);
        });

        TradingTests();
        HeaderTests();
        OfflineTests();
        StreamTests();
        FundingTests();
        SecretTests();
        SecretFormsTests();
    }

    // ---- the sandbox ----

    static Process StartSandbox(string path)
    {
        var info = new ProcessStartInfo(path, "--port 0 --exit-on-stdin-eof")
        {
            UseShellExecute = false,
            RedirectStandardOutput = true,
            RedirectStandardInput = true, // closed when this program ends: the sandbox exits too
        };
        var p = Process.Start(info);
        string line = p.StandardOutput.ReadLine();
        if (line == null) throw new Exception("the sandbox printed nothing");
        var urls = FlatJson(line);
        baseUrl = urls["base_url"];
        perpsUrl = urls["perps_url"];
        adminUrl = urls["admin_url"];
        Console.WriteLine("sandbox: " + line);
        return p;
    }

    static void StopSandbox(Process p)
    {
        try
        {
            if (!p.HasExited) p.Kill();
            p.WaitForExit();
        }
        catch (Exception e) { Console.Error.WriteLine("stopping the sandbox: " + e.Message); }
    }

    static string Admin(string name, string postJson = null)
    {
        using (var web = new WebClient())
        {
            web.Proxy = null;
            web.Encoding = Encoding.UTF8;
            if (postJson == null) return web.DownloadString(adminUrl + "/" + name);
            web.Headers[HttpRequestHeader.ContentType] = "application/json";
            return web.UploadString(adminUrl + "/" + name, "POST", postJson);
        }
    }

    static long Stat(string name) { return long.Parse(FlatJson(Admin("stats"))[name]); }

    // ---- a tiny test harness ----

    static void Test(string name, Action body)
    {
        try
        {
            body();
            passed++;
            Console.WriteLine("ok   " + name);
        }
        catch (Exception e)
        {
            failed++;
            Console.WriteLine("FAIL " + name + ": " + e);
        }
    }

    static void Expect(bool condition, string what)
    {
        if (!condition) throw new Exception("expected: " + what);
    }

    static void Equal<T>(T expected, T actual)
    {
        if (!EqualityComparer<T>.Default.Equals(expected, actual))
            throw new Exception("expected " + expected + ", got " + actual);
    }

    static PerpsException Throws(Action call)
    {
        try { call(); }
        catch (PerpsException e) { return e; }
        throw new Exception("expected a PerpsException");
    }

    // ---- JSON: just enough to read the venue's answers (numbers as decimal) ----

    static Dictionary<string, object> Obj(object v) { return (Dictionary<string, object>)v; }

    /// <summary>A list answer: a bare array, or the result of a {page_size, result, total} envelope.</summary>
    static List<object> Rows(string answer)
    {
        var v = Json(answer);
        return v as List<object> ?? (List<object>)Obj(v)["result"];
    }

    /// <summary>A decimal the venue may write as a string or a number, exactly.</summary>
    static decimal Dec(object v)
    {
        if (v is decimal) return (decimal)v;
        return decimal.Parse((string)v, NumberStyles.Float, CultureInfo.InvariantCulture);
    }

    static object Json(string text)
    {
        int i = 0;
        var v = JsonValue(text, ref i);
        JsonSpace(text, ref i);
        if (i != text.Length) throw new FormatException("trailing characters in " + text);
        return v;
    }

    static void JsonSpace(string t, ref int i) { while (i < t.Length && char.IsWhiteSpace(t[i])) i++; }

    static object JsonValue(string t, ref int i)
    {
        JsonSpace(t, ref i);
        char c = t[i];
        if (c == '{')
        {
            var o = new Dictionary<string, object>();
            i++;
            JsonSpace(t, ref i);
            if (t[i] == '}') { i++; return o; }
            while (true)
            {
                JsonSpace(t, ref i);
                string key = (string)JsonValue(t, ref i);
                JsonSpace(t, ref i);
                if (t[i++] != ':') throw new FormatException("expected ':' in " + t);
                o[key] = JsonValue(t, ref i);
                JsonSpace(t, ref i);
                if (t[i] == ',') { i++; continue; }
                if (t[i++] != '}') throw new FormatException("expected '}' in " + t);
                return o;
            }
        }
        if (c == '[')
        {
            var a = new List<object>();
            i++;
            JsonSpace(t, ref i);
            if (t[i] == ']') { i++; return a; }
            while (true)
            {
                a.Add(JsonValue(t, ref i));
                JsonSpace(t, ref i);
                if (t[i] == ',') { i++; continue; }
                if (t[i++] != ']') throw new FormatException("expected ']' in " + t);
                return a;
            }
        }
        if (c == '"')
        {
            var sb = new StringBuilder();
            i++;
            while (t[i] != '"')
            {
                if (t[i] == '\\')
                {
                    char e = t[++i];
                    if (e == 'u') { sb.Append((char)Convert.ToInt32(t.Substring(i + 1, 4), 16)); i += 4; }
                    else sb.Append(e == 'n' ? '\n' : e == 't' ? '\t' : e == 'r' ? '\r' : e == 'b' ? '\b' : e == 'f' ? '\f' : e);
                }
                else sb.Append(t[i]);
                i++;
            }
            i++;
            return sb.ToString();
        }
        int start = i;
        while (i < t.Length && ",]} \n\r\t".IndexOf(t[i]) < 0) i++;
        string word = t.Substring(start, i - start);
        if (word == "null") return null;
        if (word == "true") return true;
        if (word == "false") return false;
        return decimal.Parse(word, NumberStyles.Float, CultureInfo.InvariantCulture);
    }

    /// <summary>A flat JSON object (no nesting) as strings: string values unescaped, other
    /// values as their text. Enough for the headers, the stats and the sandbox's URL line.</summary>
    static Dictionary<string, string> FlatJson(string text)
    {
        var result = new Dictionary<string, string>();
        int i = 0;
        Func<char> peek = () => { while (i < text.Length && char.IsWhiteSpace(text[i])) i++; return i < text.Length ? text[i] : '\0'; };
        Action<char> eat = c => { if (peek() != c) throw new FormatException("expected '" + c + "' at " + i + " in " + text); i++; };
        Func<string> str = () =>
        {
            eat('"');
            var sb = new StringBuilder();
            while (text[i] != '"')
            {
                if (text[i] == '\\')
                {
                    char e = text[++i];
                    if (e == 'u') { sb.Append((char)Convert.ToInt32(text.Substring(i + 1, 4), 16)); i += 4; }
                    else sb.Append(e == 'n' ? '\n' : e == 't' ? '\t' : e == 'r' ? '\r' : e == 'b' ? '\b' : e == 'f' ? '\f' : e);
                }
                else sb.Append(text[i]);
                i++;
            }
            i++;
            return sb.ToString();
        };
        eat('{');
        if (peek() == '}') return result;
        while (true)
        {
            string key = str();
            eat(':');
            if (peek() == '"') result.Add(key, str());
            else
            {
                int start = i;
                while (i < text.Length && text[i] != ',' && text[i] != '}')
                {
                    if (text[i] == '{' || text[i] == '[') throw new FormatException("nested value in " + text);
                    i++;
                }
                result.Add(key, text.Substring(start, i - start).Trim());
            }
            if (peek() == '}') return result;
            eat(',');
        }
    }
}
