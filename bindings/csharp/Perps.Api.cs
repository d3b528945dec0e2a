// libperps for C#, the public classes: Library, Client, Session, Stream, Wallet, Order and
// Challenge, each a thin wrapper over the C functions of Perps.cs (Native), with its
// conversions (Interop) and handles (SafeHandle subclasses). The rules they follow are in
// Perps.cs's header.

using System;
using System.Runtime.InteropServices;
using System.Text;

namespace Perps
{
    /// <summary>Library-wide information.</summary>
    public static class Library
    {
        /// <summary>"MAJOR.MINOR.PATCH" (a static string in the library: not freed).</summary>
        public static string Version { get { return Interop.CopyUtf8(Native.perps_version()); } }

        /// <summary>The libperps version this binding is made for: Cargo.toml's (scripts/package.sh
        /// refuses to package a binding whose constant differs, and stamps the assembly and the
        /// NuGet package with the same). The library loaded must have a compatible ABI
        /// (<see cref="AbiCheck"/>), else the first call throws.</summary>
        public const string BindingVersion = "0.1.0";
    }

    /// <summary>The check that the libperps loaded has the ABI of the one this binding is made
    /// for. [DllImport("perps")] loads any libperps.so (beside Perps.dll, on LD_LIBRARY_PATH, the
    /// system's unversioned symlink), not the SONAME libperps.so.0.MINOR a C program records;
    /// while the version is 0.x every minor release may change the ABI, so another 0.minor could
    /// run with the wrong structs and codes. Native's static constructor runs it before any
    /// call.</summary>
    internal static class AbiCheck
    {
        /// <summary>MAJOR and MINOR of "MAJOR.MINOR.PATCH[-pre][+build]", or null.</summary>
        internal static int[] MajorMinor(string version)
        {
            var m = version == null ? null
                : System.Text.RegularExpressions.Regex.Match(version, @"^(\d{1,9})\.(\d{1,9})\.\d{1,9}([-+].*)?$");
            if (m == null || !m.Success) return null;
            return new[] { int.Parse(m.Groups[1].Value), int.Parse(m.Groups[2].Value) };
        }

        /// <summary>Whether a libperps of version <paramref name="library"/> serves a binding made
        /// for <paramref name="binding"/>: the same 0.minor while the version is 0.x (each 0.x
        /// minor may break the ABI, as the SONAME libperps.so.0.MINOR says), the same major and at
        /// least the binding's minor from 1.0 on (minor releases only add).</summary>
        internal static bool Compatible(string binding, string library)
        {
            int[] b = MajorMinor(binding), l = MajorMinor(library);
            if (b == null || l == null || b[0] != l[0]) return false;
            return b[0] == 0 ? l[1] == b[1] : l[1] >= b[1];
        }

        /// <summary>Why the library cannot be used (both versions, where it was loaded from and
        /// what to do), or null when it can.</summary>
        internal static string Refusal(string binding, string library, string loadedFrom)
        {
            if (Compatible(binding, library)) return null;
            int[] b = MajorMinor(binding);
            string needed = b == null ? "libperps " + binding
                : b[0] == 0 ? "libperps 0." + b[1] + ".x" : "libperps " + b[0] + ".x, x >= " + b[1];
            return "libperps " + library + " was loaded (from " + loadedFrom + "), but this binding (Perps.dll) is made for "
                + "libperps " + binding + " and needs " + needed + ": another version has another ABI. Put the "
                + "libperps.so of the Perps package beside Perps.dll (searched first), or one of " + needed
                + " first on LD_LIBRARY_PATH, or remove or upgrade the one loaded.";
        }

        /// <summary>The libperps files mapped into this process (Linux's /proc/self/maps), or
        /// "an unknown path".</summary>
        internal static string LoadedFrom()
        {
            try
            {
                var found = new System.Collections.Generic.List<string>();
                foreach (string line in System.IO.File.ReadAllLines("/proc/self/maps"))
                {
                    int slash = line.IndexOf('/');
                    if (slash < 0) continue;
                    string path = line.Substring(slash);
                    if (System.IO.Path.GetFileName(path).StartsWith("libperps", StringComparison.Ordinal) && !found.Contains(path))
                        found.Add(path);
                }
                if (found.Count > 0) return string.Join(", ", found);
            }
            catch (Exception) { }
            return "an unknown path";
        }
    }

    /// <summary>The venue: its two base URLs, HTTP settings, one connection pool, the cached
    /// certificates and the clock offset. Thread-safe; share one per venue.</summary>
    public sealed partial class Client : IDisposable
    {
        private readonly ClientHandle handle;

        /// <param name="optionsJson">null, or a JSON object of client options (see README).</param>
        public Client(string baseUrl, string perpsUrl, string optionsJson = null)
        {
            IntPtr err = IntPtr.Zero;
            handle = Interop.TakeHandle(
                Native.perps_client_new(Interop.Utf8Z(baseUrl), Interop.Utf8Z(perpsUrl), Interop.Utf8Z(optionsJson), ref err), err);
        }

        /// <summary>Measure the venue's clock; returns the offset (venue − local, ms) now used
        /// for every request timestamp sent through this client.</summary>
        public long SyncTime()
        {
            IntPtr err = IntPtr.Zero;
            long offset;
            Interop.Check(Native.perps_client_sync_time(handle, out offset, ref err), err);
            return offset;
        }

        /// <summary>prepare-signin + challenge verification; returns the payload JSON for the wallet.</summary>
        public string PrepareSignin(Session session, string chain, string address)
        {
            IntPtr err = IntPtr.Zero;
            return Interop.Take(Native.perps_prepare_signin(handle, Session.Of(session), Interop.Utf8Z(chain), Interop.Utf8Z(address), ref err), err);
        }

        /// <summary>login with the kept challenge and the wallet's signature; returns the login JSON.</summary>
        public string Login(Session session, string signature, long expiresSeconds)
        {
            IntPtr err = IntPtr.Zero;
            return Interop.Take(Native.perps_login(handle, Session.Of(session), Interop.Utf8Z(signature), expiresSeconds, ref err), err);
        }

        /// <summary>All of sign-in in one call with an in-process wallet key. A string cannot be
        /// wiped: the char[] and byte[] overloads (Perps.Secrets.cs) take a key the caller can
        /// wipe.</summary>
        public string Signin(Session session, string chain, string walletPrivateKey, long expiresSeconds)
        {
            using (var key = NativeSecret.FromString(walletPrivateKey)) return Signin(session, chain, key, expiresSeconds);
        }

        /// <summary>Validate, sign and send an order (never retried); returns the venue's JSON, which
        /// carries the order's cl_ord_id (generated when the order has none). On a
        /// PerpsException with MayHaveReachedVenue, look the order up by its ClOrdId first.</summary>
        public string NewOrder(Session session, string orderJson)
        {
            IntPtr err = IntPtr.Zero;
            return Interop.Take(Native.perps_new_order(handle, Session.Of(session), Interop.Utf8Z(orderJson), ref err), err);
        }

        /// <summary>Any other endpoint under perps_url; body null for none.</summary>
        public string Request(Session session, string method, string path, string body = null)
        {
            IntPtr err = IntPtr.Zero;
            return Interop.Take(Native.perps_request(handle, Session.Of(session), Interop.Utf8Z(method), Interop.Utf8Z(path), Interop.Utf8Z(body), ref err), err);
        }

        // ---- The trading loop: one method per venue endpoint ----
        // paramsJson: a JSON object of the endpoint's parameters (see perps.h; checked before
        // anything is sent: InvalidArgument names the parameter), or null for none. Each returns
        // the venue's JSON and is never retried (but a GET query that found its kept-alive
        // connection closed before any answer is sent once more: README "The keep-alive
        // race"). An order already gone (or not visible yet) throws with Code NotFound. The three public endpoints take a null session.

        private delegate IntPtr EndpointCall(ClientHandle c, SessionHandle s, byte[] paramsJson, ref IntPtr err);

        private string Endpoint(EndpointCall call, SessionHandle session, string paramsJson)
        {
            IntPtr err = IntPtr.Zero;
            return Interop.Take(call(handle, session, Interop.Utf8Z(paramsJson), ref err), err);
        }

        /// <summary>POST /api/cancel_order: {"order_id":&lt;int64&gt;} or {"cl_ord_id":"…"}.</summary>
        public string CancelOrder(Session session, string paramsJson) { return Endpoint(Native.perps_cancel_order, Session.Of(session), paramsJson); }
        /// <summary>POST /api/cancel_orders: order_id_list and/or cl_ord_id_list.</summary>
        public string CancelOrders(Session session, string paramsJson) { return Endpoint(Native.perps_cancel_orders, Session.Of(session), paramsJson); }
        /// <summary>Cancel every open order selected (symbol, cl_ord_id_prefix; null for all) and the
        /// named cl_ord_id_list orders the venue may not list yet (a list alone: only those), then confirm each ended with
        /// query_order for up to confirm_ms (default 15000; 0: no confirmation). Returns the report
        /// {"complete","orders":[{"order_id","cl_ord_id","symbol","status","confirmed"}],
        /// "cancel_requests","failed_cancel_requests","queries","listing_truncated"} (perps.h: perps_cancel_all).</summary>
        public string CancelAll(Session session, string paramsJson = null) { return Endpoint(Native.perps_cancel_all, Session.Of(session), paramsJson); }
        /// <summary>POST /api/change_leverage: {"symbol":"BTC-USD","leverage":&lt;int&gt;}.</summary>
        public string ChangeLeverage(Session session, string paramsJson) { return Endpoint(Native.perps_change_leverage, Session.Of(session), paramsJson); }
        /// <summary>POST /api/change_margin_mode: {"symbol":…,"margin_mode":"cross"|"isolated"}.</summary>
        public string ChangeMarginMode(Session session, string paramsJson) { return Endpoint(Native.perps_change_margin_mode, Session.Of(session), paramsJson); }
        /// <summary>GET /api/query_order: {"order_id":&lt;int64&gt;} or {"cl_ord_id":"…"}.</summary>
        public string QueryOrder(Session session, string paramsJson) { return Endpoint(Native.perps_query_order, Session.Of(session), paramsJson); }
        /// <summary>GET /api/query_orders (history): symbol, status, order_type, start, end, last_id, limit.</summary>
        public string QueryOrders(Session session, string paramsJson = null) { return Endpoint(Native.perps_query_orders, Session.Of(session), paramsJson); }
        /// <summary>GET /api/query_open_orders: symbol, limit.</summary>
        public string QueryOpenOrders(Session session, string paramsJson = null) { return Endpoint(Native.perps_query_open_orders, Session.Of(session), paramsJson); }
        /// <summary>GET /api/query_trades (the account's fills): symbol, side, start, end, last_id, limit.</summary>
        public string QueryTrades(Session session, string paramsJson = null) { return Endpoint(Native.perps_query_trades, Session.Of(session), paramsJson); }
        /// <summary>GET /api/query_funding_history (the account's funding payments, qty negative = paid):
        /// symbol, start, end, last_id, limit (1..500). The venue's JSON as sent: a bare array of rows,
        /// newest first (live), or the {page_size, result, total} envelope.</summary>
        public string QueryFundingHistory(Session session, string paramsJson = null) { return Endpoint(Native.perps_query_funding_history, Session.Of(session), paramsJson); }
        /// <summary>GET /api/query_positions: symbol (optional); qty is signed (negative: short).</summary>
        public string QueryPositions(Session session, string paramsJson = null) { return Endpoint(Native.perps_query_positions, Session.Of(session), paramsJson); }
        /// <summary>GET /api/query_balance (no parameters).</summary>
        public string QueryBalance(Session session, string paramsJson = null) { return Endpoint(Native.perps_query_balance, Session.Of(session), paramsJson); }
        /// <summary>GET /api/query_position_config: {"symbol":"BTC-USD"}.</summary>
        public string QueryPositionConfig(Session session, string paramsJson) { return Endpoint(Native.perps_query_position_config, Session.Of(session), paramsJson); }
        /// <summary>GET /api/query_symbol_info (public: session may be null): symbol, optional.</summary>
        public string QuerySymbolInfo(Session session, string paramsJson = null) { return Endpoint(Native.perps_query_symbol_info, Session.OrNone(session), paramsJson); }
        /// <summary>GET /api/query_symbol_price (public: session may be null): {"symbol":"BTC-USD"}.</summary>
        public string QuerySymbolPrice(Session session, string paramsJson) { return Endpoint(Native.perps_query_symbol_price, Session.OrNone(session), paramsJson); }
        /// <summary>GET /api/query_depth_book (public: session may be null): {"symbol":"BTC-USD"};
        /// levels sorted best first (bids high to low, asks low to high).</summary>
        public string QueryDepthBook(Session session, string paramsJson) { return Endpoint(Native.perps_query_depth_book, Session.OrNone(session), paramsJson); }

        // ---- Streams: the venue's two WebSockets (see Stream) ----

        /// <summary>Open the market + account stream (ws-stream; client option stream_url).
        /// subscriptionsJson: a JSON array of {"channel":C,"symbol":S} (C: price, depth_book,
        /// public_trade) and, with a session, {"channel":C} (C: order, position, balance,
        /// trade); session null for public channels only. Returns once connected, authenticated
        /// and subscribed.</summary>
        public Stream OpenStream(Session session, string subscriptionsJson)
        {
            IntPtr err = IntPtr.Zero;
            return new Stream(Interop.TakeHandle(
                Native.perps_stream_open(handle, Session.OrNone(session), Interop.Utf8Z(subscriptionsJson), ref err), err));
        }

        /// <summary>Open the order stream (ws-api; client option order_stream_url) and log in
        /// with the session's token; its session_id is the session's x-session-id when set.</summary>
        public Stream OpenOrderStream(Session session)
        {
            IntPtr err = IntPtr.Zero;
            return new Stream(Interop.TakeHandle(Native.perps_order_stream_open(handle, Session.Of(session), ref err), err));
        }

        public void Dispose() { handle.Dispose(); }
    }

    /// <summary>One identity: request-signing key, pending challenge, access token. Thread-safe.</summary>
    public sealed partial class Session : IDisposable
    {
        internal readonly SessionHandle Handle;

        private Session(SessionHandle handle) { Handle = handle; }

        internal static SessionHandle Of(Session session)
        {
            if (session == null) throw new ArgumentNullException("session");
            return session.Handle;
        }

        /// <summary>The session's handle, or for null a handle holding NULL (public endpoints).</summary>
        internal static SessionHandle OrNone(Session session)
        {
            return session == null ? new SessionHandle() : session.Handle;
        }

        /// <summary>A session with a fresh temporary Ed25519 key.</summary>
        public Session()
        {
            IntPtr err = IntPtr.Zero;
            Handle = Interop.TakeHandle(Native.perps_session_new(ref err), err);
        }

        /// <summary>A session for a web-site API credential (can place orders at once). Strings
        /// cannot be wiped: the char[] and byte[] overloads take secrets the caller can
        /// wipe.</summary>
        public static Session FromApiKey(string apiToken, string ed25519PrivateKey)
        {
            using (var token = NativeSecret.FromString(apiToken))
            using (var key = NativeSecret.FromString(ed25519PrivateKey))
                return FromApiKey(token, key);
        }

        /// <summary>The request key id: base58 public key of the request-signing key, sent as
        /// requestId at sign-in. Not the x-request-id (a fresh UUID per signed request,
        /// BodySignature.RequestId) nor the venue's request_id (a field of its answers).</summary>
        public string RequestId
        {
            get { IntPtr err = IntPtr.Zero; return Interop.Take(Native.perps_session_request_id(Handle, ref err), err); }
        }

        /// <summary>The access token (a secret); InvalidState when there is none.</summary>
        public string Token
        {
            get { IntPtr err = IntPtr.Zero; return Interop.Take(Native.perps_session_token(Handle, ref err), err); }
        }

        /// <summary>The session's state as JSON, without secrets.</summary>
        public string Info
        {
            get { IntPtr err = IntPtr.Zero; return Interop.Take(Native.perps_session_info(Handle, ref err), err); }
        }

        /// <summary>Forget the token and any pending challenge.</summary>
        public void Logout()
        {
            IntPtr err = IntPtr.Zero;
            Interop.Check(Native.perps_session_logout(Handle, ref err), err);
        }

        /// <summary>x-session-id header for order entry (new_order, cancel_order, cancel_orders); null clears it.</summary>
        public void SetSessionId(string value)
        {
            IntPtr err = IntPtr.Zero;
            Interop.Check(Native.perps_session_set_session_id(Handle, Interop.Utf8Z(value), ref err), err);
        }

        /// <summary>x-impersonate header for trading requests; null clears it.</summary>
        public void SetImpersonate(string value)
        {
            IntPtr err = IntPtr.Zero;
            Interop.Check(Native.perps_session_set_impersonate(Handle, Interop.Utf8Z(value), ref err), err);
        }

        /// <summary>JSON of the four x-request-* headers for this exact body (its UTF-8 bytes).</summary>
        public string SignBody(string body)
        {
            IntPtr err = IntPtr.Zero;
            return Interop.Take(Native.perps_sign_body(Handle, Interop.Utf8Z(body), ref err), err);
        }

        /// <summary>Same with a caller-chosen request id (UUID) and timestamp (ms).</summary>
        public string SignBodyAt(string body, string requestId, long timestampMs)
        {
            IntPtr err = IntPtr.Zero;
            return Interop.Take(Native.perps_sign_body_at(Handle, Interop.Utf8Z(body), Interop.Utf8Z(requestId), timestampMs, ref err), err);
        }

        /// <summary>The allocation-free path of the library: sign these exact bytes.</summary>
        public BodySignature SignBodyInto(byte[] body)
        {
            if (body == null) throw new ArgumentNullException("body");
            NativeBodySignature raw;
            var code = Native.perps_sign_body_into(Handle, body, new UIntPtr((ulong)body.Length), out raw);
            if (code != PerpsCode.Ok)
                throw new PerpsException(code, "perps_sign_body_into failed with " + code, 0, null, false);
            return new BodySignature
            {
                Version = Interop.FixedField(raw.version),
                RequestId = Interop.FixedField(raw.request_id),
                Timestamp = Interop.FixedField(raw.timestamp),
                Signature = Interop.FixedField(raw.signature),
            };
        }

        /// <summary>Free the session now (zeroizes its key and token). Idempotent.</summary>
        public void Dispose() { Handle.Dispose(); }
    }

    /// <summary>One of the venue's WebSockets: the market + account stream (Client.OpenStream)
    /// or the order stream (Client.OpenOrderStream), served by a background I/O thread of the
    /// library that never runs managed code. Read events with a blocking Next on a thread of
    /// your choosing. Next, NewOrder, CancelOrder and Close may run on different threads at
    /// once; Close wakes a Next blocked in another thread at once (it throws StreamClosed).
    /// Any call after Close throws PerpsException with Code StreamClosed. The stream keeps what
    /// it needs of its Client and Session: they may be disposed first.</summary>
    public sealed class Stream : IDisposable
    {
        private readonly StreamHandle handle;

        internal Stream(StreamHandle handle) { this.handle = handle; }

        private static PerpsException Closed()
        {
            return new PerpsException(PerpsCode.StreamClosed, "the stream is closed", 0, null, false);
        }

        /// <summary>The next event, a JSON object (README "Streams": venue pushes, order_response
        /// frames, status changes), waiting up to timeoutMs milliseconds (0: do not wait;
        /// negative: until an event comes or the stream is closed); null when the time passes
        /// first. Throws StreamClosed after Close (also when Close wakes it) or once a stream
        /// that ended (its "failed" status event) has given all its events.</summary>
        public string Next(int timeoutMs = -1)
        {
            IntPtr err = IntPtr.Zero;
            IntPtr result;
            try { result = Native.perps_stream_next(handle, timeoutMs, ref err); }
            catch (ObjectDisposedException) { throw Closed(); } // the SafeHandle is closed
            if (result == IntPtr.Zero && err == IntPtr.Zero) return null; // timed out
            return Interop.Take(result, err);
        }

        /// <summary>Order stream only: validate the order (as Client.NewOrder, the symbol rules
        /// too with the client option symbol_rules), sign it and write the order:new frame.
        /// Returns {"request_id":…,"cl_ord_id":…} once the frame is written, without waiting
        /// for the venue: its replies come as order_response events with that request_id (the
        /// "accepted" ack with "final":false, then the outcome).
        /// Never retried: on any PerpsException with MayHaveReachedVenue (Transport, Timeout
        /// when the venue does not read the frame within read_timeout_ms, StreamClosed when
        /// Close cut a begun write short), look the order up first.</summary>
        public string NewOrder(string orderJson)
        {
            IntPtr err = IntPtr.Zero;
            try { return Interop.Take(Native.perps_stream_new_order(handle, Interop.Utf8Z(orderJson), ref err), err); }
            catch (ObjectDisposedException) { throw Closed(); }
        }

        /// <summary>Order stream only: a signed order:cancel for {"order_id":N} and/or
        /// {"cl_ord_id":"…"}; returns {"request_id":…,…} once written.</summary>
        public string CancelOrder(string paramsJson)
        {
            IntPtr err = IntPtr.Zero;
            try { return Interop.Take(Native.perps_stream_cancel_order(handle, Interop.Utf8Z(paramsJson), ref err), err); }
            catch (ObjectDisposedException) { throw Closed(); }
        }

        /// <summary>Close the stream from any thread: a Next blocked in another thread returns
        /// at once (StreamClosed); the stream is freed once the calls in flight have returned
        /// (the SafeHandle counts them; the library waits at most about 2 s for its I/O
        /// thread). Idempotent.</summary>
        public void Close()
        {
            try { Native.perps_stream_close(handle); } // wakes the calls blocked in Next
            catch (ObjectDisposedException) { return; } // closed already
            handle.Dispose();
        }

        /// <summary>Close (IDisposable).</summary>
        public void Dispose() { Close(); }
    }

    /// <summary>Wallet helpers for a wallet key held in-process.</summary>
    public static partial class Wallet
    {
        /// <summary>EIP-55 (bsc) or base58 (solana) address of a wallet key. A string cannot be
        /// wiped: the char[] and byte[] overloads take a key the caller can wipe.</summary>
        public static string Address(string chain, string privateKey)
        {
            using (var key = NativeSecret.FromString(privateKey)) return Address(chain, key);
        }

        /// <summary>The exact login signature for a sign-in payload (from PrepareSignin). A
        /// string cannot be wiped: the char[] and byte[] overloads take a key the caller can
        /// wipe.</summary>
        public static string Sign(string chain, string privateKey, string payloadJson)
        {
            using (var key = NativeSecret.FromString(privateKey)) return Sign(chain, key, payloadJson);
        }

        /// <summary>Wrap a raw 64-byte Ed25519 signature made elsewhere into the Solana login signature.</summary>
        public static string WrapSolanaSignature(string payloadJson, string address, byte[] signature)
        {
            if (signature == null) throw new ArgumentNullException("signature");
            IntPtr err = IntPtr.Zero;
            return Interop.Take(Native.perps_wallet_wrap_solana_signature(
                Interop.Utf8Z(payloadJson), Interop.Utf8Z(address), signature, new UIntPtr((ulong)signature.Length), ref err), err);
        }
    }

    /// <summary>Orders without the network.</summary>
    public static class Order
    {
        /// <summary>The exact body NewOrder would sign and send (InvalidOrder names the field).</summary>
        public static string Serialize(string orderJson)
        {
            IntPtr err = IntPtr.Zero;
            return Interop.Take(Native.perps_order_serialize(Interop.Utf8Z(orderJson), ref err), err);
        }
    }

    /// <summary>Challenge checks as a pure function.</summary>
    public static class Challenge
    {
        /// <summary>Verify signedData against a JWK set and the claims; nowUnixSecs 0 = system clock.</summary>
        public static string Verify(string signedData, string certsJson, string requestId, string chain, string address, long nowUnixSecs)
        {
            IntPtr err = IntPtr.Zero;
            return Interop.Take(Native.perps_challenge_verify(Interop.Utf8Z(signedData), Interop.Utf8Z(certsJson),
                Interop.Utf8Z(requestId), Interop.Utf8Z(chain), Interop.Utf8Z(address), nowUnixSecs, ref err), err);
        }
    }
}
