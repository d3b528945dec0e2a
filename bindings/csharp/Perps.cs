// libperps for C#: a thin P/Invoke layer over the C ABI (include/perps.h).
//
// Built with Mono's mcs (C# 6 syntax, no nuint: size_t is UIntPtr) and the .NET runtimes
// alike. The rules it follows, each one a trap of P/Invoke:
//  - every function is CallingConvention.Cdecl;
//  - every char* the library returns is received as IntPtr, copied as UTF-8 bytes (never
//    Marshal.PtrToStringAnsi, which is not UTF-8 on Mono) and freed with perps_string_free
//    in a finally, never by the .NET marshaller (it would free with the wrong allocator);
//  - every input string is passed as explicit NUL-terminated UTF-8 bytes (byte[]), never
//    the platform's default string marshalling; null stays a NULL pointer;
//  - C `bool` is one byte: [return: MarshalAs(UnmanagedType.I1)] (the P/Invoke default for
//    bool is the 4-byte Win32 BOOL, whose upper bytes would be garbage);
//  - size_t is UIntPtr, uint16_t is ushort, int64_t is long, perps_code is a 4-byte enum;
//  - client, session, stream and error handles are SafeHandle subclasses whose ReleaseHandle
//    calls the matching _free: Dispose frees at once (twice is harmless), the finalizer is the
//    safety net (a stream's closes the stream and leaves its free to the thread pool), and the
//    marshaller keeps a handle alive for the duration of each call (a Dispose during a call
//    defers the free until the call has returned).
//
// Library resolution: [DllImport("perps")] is libperps.so. Mono looks for it beside Perps.dll
// first (the NuGet package has one in lib/net45/, next to the assembly: copy both beside your
// program), then on LD_LIBRARY_PATH (a build tree's target/release) and the system's library
// path (an installed libperps). .NET finds the package's runtimes/linux-x64/native/libperps.so.
//
// Thread safety is the library's: clients, sessions and streams may be shared between threads.

using System;
using System.Runtime.InteropServices;
using System.Text;
using Microsoft.Win32.SafeHandles;

namespace Perps
{
    /// <summary>Mirror of <c>perps_code</c>. The numbers are stable and never reused.</summary>
    public enum PerpsCode
    {
        Ok = 0,
        InvalidArgument = 1,
        InvalidKey = 2,
        InvalidOrder = 3,
        VerificationFailed = 4,
        InvalidState = 5,
        Transport = 6,
        Timeout = 7,
        HttpStatus = 8,
        ApiError = 9,
        BadResponse = 10,
        TokenExpired = 11,
        Rng = 12,
        /// <summary>HTTP 404 from an endpoint call: the order is gone (or not visible yet).</summary>
        NotFound = 13,
        /// <summary>Refused by the client's rate limiter (option rate_limit); nothing was sent.</summary>
        RateLimited = 14,
        /// <summary>The stream was closed (Stream.Close), or has ended for good (Next: after its "failed" event; a request: as soon as it is ending).</summary>
        StreamClosed = 15,
        /// <summary>A new WebSocket would break the venue's connection limits; nothing was sent.</summary>
        StreamLimit = 16,
        Panic = 99,
    }

    /// <summary>A failed libperps call: the contents of its <c>perps_error</c>.</summary>
    public class PerpsException : Exception
    {
        /// <summary>The stable error code.</summary>
        public PerpsCode Code { get; private set; }
        /// <summary>The venue's HTTP status, or 0 when there was no HTTP answer.</summary>
        public int HttpStatus { get; private set; }
        /// <summary>The venue's response body, or null.</summary>
        public string Body { get; private set; }
        /// <summary>True when the venue may have acted on the request: for an order, query the
        /// venue before sending it again (the library never retries).</summary>
        public bool MayHaveReachedVenue { get; private set; }
        /// <summary>The cl_ord_id of the order a failed NewOrder (Client or Stream) was placing
        /// (yours, or the one the library generated): look it up with QueryOrder before
        /// resending; for a failed Stream.CancelOrder, the one its params named; for a Request
        /// POST to /api/new_order, the one its body names; null for other calls.</summary>
        public string ClOrdId { get; private set; }
        /// <summary>The x-request-id header sent with the failed request (body-signed requests),
        /// or null when nothing was sent. Not the session's request key id (Session.RequestId),
        /// nor the venue's request_id field.</summary>
        public string XRequestId { get; private set; }
        /// <summary>How long to wait before asking again (the Retry-After of a 429 or 503, or the
        /// client's rate limiter for RateLimited), in milliseconds; -1 when unknown. A Retry-After
        /// too long to count in milliseconds gives long.MaxValue: cap it before
        /// TimeSpan.FromMilliseconds, which throws OverflowException on it.</summary>
        public long RetryAfterMs { get; private set; }
        /// <summary>The envelope request_id of an order-stream request (Stream.NewOrder,
        /// Stream.CancelOrder) whose frame may have been partly written when the write failed:
        /// the id its order_response events and the "unanswered" list of the next
        /// "disconnected" status event name; null for every other error. Not the
        /// x-request-id.</summary>
        public string StreamRequestId { get; private set; }

        public PerpsException(PerpsCode code, string message, int httpStatus, string body, bool mayHaveReachedVenue)
            : this(code, message, httpStatus, body, mayHaveReachedVenue, null, null, -1)
        {
        }

        public PerpsException(PerpsCode code, string message, int httpStatus, string body, bool mayHaveReachedVenue,
            string clOrdId, string xRequestId, long retryAfterMs)
            : this(code, message, httpStatus, body, mayHaveReachedVenue, clOrdId, xRequestId, retryAfterMs, null)
        {
        }

        public PerpsException(PerpsCode code, string message, int httpStatus, string body, bool mayHaveReachedVenue,
            string clOrdId, string xRequestId, long retryAfterMs, string streamRequestId)
            : base(message)
        {
            Code = code;
            HttpStatus = httpStatus;
            Body = body;
            MayHaveReachedVenue = mayHaveReachedVenue;
            ClOrdId = clOrdId;
            XRequestId = xRequestId;
            RetryAfterMs = retryAfterMs;
            StreamRequestId = streamRequestId;
        }

        public override string ToString()
        {
            var s = "PerpsException(" + Code + "): " + Message;
            if (HttpStatus != 0) s += " [HTTP " + HttpStatus + "]";
            if (MayHaveReachedVenue) s += " [may have reached the venue]";
            if (ClOrdId != null) s += " [cl_ord_id " + ClOrdId + "]";
            return s;
        }
    }

    /// <summary>The four <c>x-request-*</c> header values of a signed body.</summary>
    public struct BodySignature
    {
        public string Version;    // x-request-sign-version
        public string RequestId;  // the x-request-id (fresh per request), not the session's request key id
        public string Timestamp;  // x-request-timestamp
        public string Signature;  // x-request-signature
    }

    internal sealed class ClientHandle : SafeHandleZeroOrMinusOneIsInvalid
    {
        public ClientHandle() : base(true) { }
        protected override bool ReleaseHandle() { Native.perps_client_free(handle); return true; }
    }

    internal sealed class SessionHandle : SafeHandleZeroOrMinusOneIsInvalid
    {
        public SessionHandle() : base(true) { }
        protected override bool ReleaseHandle() { Native.perps_session_free(handle); return true; }
    }

    internal sealed class StreamHandle : SafeHandleZeroOrMinusOneIsInvalid
    {
        private bool finalizing;

        public StreamHandle() : base(true) { }

        protected override void Dispose(bool disposing)
        {
            finalizing = !disposing;
            base.Dispose(disposing);
        }

        /// <summary>Dispose frees at once. The finalizer thread, which perps_stream_free could
        /// hold for up to about 2 s (waiting for the library's I/O thread) and every other
        /// finalizer with it, only closes the stream and leaves the free to the thread pool.</summary>
        protected override bool ReleaseHandle()
        {
            IntPtr stream = handle;
            if (!finalizing)
            {
                Native.perps_stream_free(stream);
                return true;
            }
            Native.perps_stream_close_raw(stream);
            TellCollected("closed");
            bool queued;
            try
            {
                queued = System.Threading.ThreadPool.UnsafeQueueUserWorkItem(_ => FreeCollected(stream), null);
            }
            catch (Exception)
            {
                // No work item to be had (out of memory, a runtime shutting down): an exception
                // leaving a finalizer ends the process, so the free is done here instead, holding
                // this thread for as long as it takes (about 2 s at most).
                queued = false;
            }
            if (!queued)
            {
                FreeCollected(stream);
            }
            return true;
        }

        /// <summary>perps_stream_free of a stream its finalizer closed, on a thread-pool thread.</summary>
        private static void FreeCollected(IntPtr stream)
        {
            TellCollected("freeing");
            Native.perps_stream_free(stream);
            TellCollected("freed");
        }

        /// <summary>Tests only (PerpsTests.Streams.cs sets it by reflection; null otherwise, which
        /// costs a field read and a comparison per step of a collected stream's end). Where the
        /// finalizer runs each step is its whole point and shows in no result, so each step tells
        /// it, on the thread running it: "closed" once perps_stream_close returned (on the
        /// finalizer thread), then "freeing" and "freed" around perps_stream_free (on the thread
        /// that frees). A test holds the free by blocking in "freeing", as a slow I/O thread would.
        /// It must not throw: it runs on the finalizer thread.</summary>
        private static volatile Action<string> collectedHook = null;

        private static void TellCollected(string step)
        {
            Action<string> hook = collectedHook;
            if (hook != null) hook(step);
        }
    }

    internal sealed class ErrorHandle : SafeHandleZeroOrMinusOneIsInvalid
    {
        public ErrorHandle(IntPtr error) : base(true) { SetHandle(error); }
        protected override bool ReleaseHandle() { Native.perps_error_free(handle); return true; }
    }

    /// <summary>perps_body_signature: four fixed-size NUL-terminated char arrays.</summary>
    [StructLayout(LayoutKind.Sequential)]
    internal struct NativeBodySignature
    {
        [MarshalAs(UnmanagedType.ByValArray, SizeConst = 4)] public byte[] version;     // PERPS_SIGN_VERSION_SIZE
        [MarshalAs(UnmanagedType.ByValArray, SizeConst = 40)] public byte[] request_id; // PERPS_REQUEST_ID_SIZE
        [MarshalAs(UnmanagedType.ByValArray, SizeConst = 24)] public byte[] timestamp;  // PERPS_TIMESTAMP_SIZE
        [MarshalAs(UnmanagedType.ByValArray, SizeConst = 96)] public byte[] signature;  // PERPS_SIGNATURE_SIZE
    }

    /// <summary>The C functions, one to one. Strings in: byte[] (NUL-terminated UTF-8).
    /// Strings out: IntPtr. `ref IntPtr err` starts at IntPtr.Zero and is written only on
    /// failure (an `out` SafeHandle would rely on the marshaller zeroing it).</summary>
    internal static class Native
    {
        private const string Lib = "perps";
        private const CallingConvention Cdecl = CallingConvention.Cdecl;

        /// <summary>Before any call: refuse a libperps of another ABI (AbiCheck). The exception
        /// reaches the caller as a TypeInitializationException whose InnerException is a
        /// DllNotFoundException naming both versions; every later call throws it again.</summary>
        static Native()
        {
            string library = Interop.CopyUtf8(perps_version());
            string refusal = AbiCheck.Refusal(Library.BindingVersion, library, AbiCheck.LoadedFrom());
            if (refusal != null) throw new DllNotFoundException(refusal);
        }

        [DllImport(Lib, CallingConvention = Cdecl)] internal static extern void perps_string_free(IntPtr s);
        [DllImport(Lib, CallingConvention = Cdecl)] internal static extern IntPtr perps_version();

        [DllImport(Lib, CallingConvention = Cdecl)] internal static extern PerpsCode perps_error_code(ErrorHandle e);
        [DllImport(Lib, CallingConvention = Cdecl)] internal static extern IntPtr perps_error_message(ErrorHandle e);
        [DllImport(Lib, CallingConvention = Cdecl)] internal static extern ushort perps_error_http_status(ErrorHandle e);
        [DllImport(Lib, CallingConvention = Cdecl)] internal static extern IntPtr perps_error_body(ErrorHandle e);
        [DllImport(Lib, CallingConvention = Cdecl)]
        [return: MarshalAs(UnmanagedType.I1)]
        internal static extern bool perps_error_may_have_reached_venue(ErrorHandle e);
        [DllImport(Lib, CallingConvention = Cdecl)] internal static extern IntPtr perps_error_cl_ord_id(ErrorHandle e);
        [DllImport(Lib, CallingConvention = Cdecl)] internal static extern IntPtr perps_error_request_id(ErrorHandle e);
        [DllImport(Lib, CallingConvention = Cdecl)] internal static extern long perps_error_retry_after_ms(ErrorHandle e);
        [DllImport(Lib, CallingConvention = Cdecl)] internal static extern IntPtr perps_error_stream_request_id(ErrorHandle e);
        [DllImport(Lib, CallingConvention = Cdecl)] internal static extern void perps_error_free(IntPtr e);

        [DllImport(Lib, CallingConvention = Cdecl)]
        internal static extern ClientHandle perps_client_new(byte[] baseUrl, byte[] perpsUrl, byte[] optionsJson, ref IntPtr err);
        [DllImport(Lib, CallingConvention = Cdecl)] internal static extern void perps_client_free(IntPtr c);
        [DllImport(Lib, CallingConvention = Cdecl)]
        internal static extern PerpsCode perps_client_sync_time(ClientHandle c, out long offsetMs, ref IntPtr err);

        [DllImport(Lib, CallingConvention = Cdecl)]
        internal static extern IntPtr perps_prepare_signin(ClientHandle c, SessionHandle s, byte[] chain, byte[] address, ref IntPtr err);
        [DllImport(Lib, CallingConvention = Cdecl)]
        internal static extern IntPtr perps_login(ClientHandle c, SessionHandle s, byte[] signature, long expiresSeconds, ref IntPtr err);
        [DllImport(Lib, CallingConvention = Cdecl)]
        internal static extern IntPtr perps_new_order(ClientHandle c, SessionHandle s, byte[] orderJson, ref IntPtr err);
        [DllImport(Lib, CallingConvention = Cdecl)]
        internal static extern IntPtr perps_request(ClientHandle c, SessionHandle s, byte[] method, byte[] path, byte[] body, ref IntPtr err);

        // The endpoint exports, one shape (see EndpointCall); s may be NULL for the public three.
        [DllImport(Lib, CallingConvention = Cdecl)] internal static extern IntPtr perps_cancel_order(ClientHandle c, SessionHandle s, byte[] paramsJson, ref IntPtr err);
        [DllImport(Lib, CallingConvention = Cdecl)] internal static extern IntPtr perps_cancel_orders(ClientHandle c, SessionHandle s, byte[] paramsJson, ref IntPtr err);
        [DllImport(Lib, CallingConvention = Cdecl)] internal static extern IntPtr perps_cancel_all(ClientHandle c, SessionHandle s, byte[] paramsJson, ref IntPtr err);
        [DllImport(Lib, CallingConvention = Cdecl)] internal static extern IntPtr perps_change_leverage(ClientHandle c, SessionHandle s, byte[] paramsJson, ref IntPtr err);
        [DllImport(Lib, CallingConvention = Cdecl)] internal static extern IntPtr perps_change_margin_mode(ClientHandle c, SessionHandle s, byte[] paramsJson, ref IntPtr err);
        [DllImport(Lib, CallingConvention = Cdecl)] internal static extern IntPtr perps_query_order(ClientHandle c, SessionHandle s, byte[] paramsJson, ref IntPtr err);
        [DllImport(Lib, CallingConvention = Cdecl)] internal static extern IntPtr perps_query_orders(ClientHandle c, SessionHandle s, byte[] paramsJson, ref IntPtr err);
        [DllImport(Lib, CallingConvention = Cdecl)] internal static extern IntPtr perps_query_open_orders(ClientHandle c, SessionHandle s, byte[] paramsJson, ref IntPtr err);
        [DllImport(Lib, CallingConvention = Cdecl)] internal static extern IntPtr perps_query_trades(ClientHandle c, SessionHandle s, byte[] paramsJson, ref IntPtr err);
        [DllImport(Lib, CallingConvention = Cdecl)] internal static extern IntPtr perps_query_funding_history(ClientHandle c, SessionHandle s, byte[] paramsJson, ref IntPtr err);
        [DllImport(Lib, CallingConvention = Cdecl)] internal static extern IntPtr perps_query_positions(ClientHandle c, SessionHandle s, byte[] paramsJson, ref IntPtr err);
        [DllImport(Lib, CallingConvention = Cdecl)] internal static extern IntPtr perps_query_balance(ClientHandle c, SessionHandle s, byte[] paramsJson, ref IntPtr err);
        [DllImport(Lib, CallingConvention = Cdecl)] internal static extern IntPtr perps_query_position_config(ClientHandle c, SessionHandle s, byte[] paramsJson, ref IntPtr err);
        [DllImport(Lib, CallingConvention = Cdecl)] internal static extern IntPtr perps_query_symbol_info(ClientHandle c, SessionHandle s, byte[] paramsJson, ref IntPtr err);
        [DllImport(Lib, CallingConvention = Cdecl)] internal static extern IntPtr perps_query_symbol_price(ClientHandle c, SessionHandle s, byte[] paramsJson, ref IntPtr err);
        [DllImport(Lib, CallingConvention = Cdecl)] internal static extern IntPtr perps_query_depth_book(ClientHandle c, SessionHandle s, byte[] paramsJson, ref IntPtr err);

        [DllImport(Lib, CallingConvention = Cdecl)] internal static extern SessionHandle perps_session_new(ref IntPtr err);
        [DllImport(Lib, CallingConvention = Cdecl)] internal static extern void perps_session_free(IntPtr s);
        [DllImport(Lib, CallingConvention = Cdecl)] internal static extern IntPtr perps_session_request_id(SessionHandle s, ref IntPtr err);
        [DllImport(Lib, CallingConvention = Cdecl)] internal static extern IntPtr perps_session_token(SessionHandle s, ref IntPtr err);
        [DllImport(Lib, CallingConvention = Cdecl)] internal static extern IntPtr perps_session_info(SessionHandle s, ref IntPtr err);
        [DllImport(Lib, CallingConvention = Cdecl)] internal static extern PerpsCode perps_session_logout(SessionHandle s, ref IntPtr err);
        [DllImport(Lib, CallingConvention = Cdecl)]
        internal static extern PerpsCode perps_session_set_session_id(SessionHandle s, byte[] value, ref IntPtr err);
        [DllImport(Lib, CallingConvention = Cdecl)]
        internal static extern PerpsCode perps_session_set_impersonate(SessionHandle s, byte[] value, ref IntPtr err);

        [DllImport(Lib, CallingConvention = Cdecl)]
        internal static extern IntPtr perps_sign_body(SessionHandle s, byte[] body, ref IntPtr err);
        [DllImport(Lib, CallingConvention = Cdecl)]
        internal static extern IntPtr perps_sign_body_at(SessionHandle s, byte[] body, byte[] requestId, long timestampMs, ref IntPtr err);
        [DllImport(Lib, CallingConvention = Cdecl)]
        internal static extern PerpsCode perps_sign_body_into(SessionHandle s, byte[] body, UIntPtr len, out NativeBodySignature output);

        // The secret arguments, as a copy in native memory (NativeSecret, Perps.Secrets.cs),
        // which no garbage collector moves or copies: never a managed array.
        [DllImport(Lib, CallingConvention = Cdecl)]
        internal static extern IntPtr perps_signin(ClientHandle c, SessionHandle s, byte[] chain, IntPtr walletKey, long expiresSeconds, ref IntPtr err);
        [DllImport(Lib, CallingConvention = Cdecl)]
        internal static extern SessionHandle perps_session_from_api_key(IntPtr apiToken, IntPtr ed25519Key, ref IntPtr err);
        [DllImport(Lib, CallingConvention = Cdecl)]
        internal static extern IntPtr perps_wallet_address(byte[] chain, IntPtr privateKey, ref IntPtr err);
        [DllImport(Lib, CallingConvention = Cdecl)]
        internal static extern IntPtr perps_wallet_sign(byte[] chain, IntPtr privateKey, byte[] payloadJson, ref IntPtr err);
        [DllImport(Lib, CallingConvention = Cdecl)]
        internal static extern IntPtr perps_wallet_wrap_solana_signature(byte[] payloadJson, byte[] address, byte[] signature, UIntPtr signatureLen, ref IntPtr err);
        [DllImport(Lib, CallingConvention = Cdecl)]
        internal static extern IntPtr perps_challenge_verify(byte[] signedData, byte[] certsJson, byte[] requestId, byte[] chain, byte[] address, long nowUnixSecs, ref IntPtr err);
        [DllImport(Lib, CallingConvention = Cdecl)]
        internal static extern IntPtr perps_order_serialize(byte[] orderJson, ref IntPtr err);

        // Streams: perps_stream_next blocks (up to its timeout); perps_stream_close may run on
        // any thread meanwhile and wakes it.
        [DllImport(Lib, CallingConvention = Cdecl)]
        internal static extern StreamHandle perps_stream_open(ClientHandle c, SessionHandle s, byte[] subscriptionsJson, ref IntPtr err);
        [DllImport(Lib, CallingConvention = Cdecl)]
        internal static extern StreamHandle perps_order_stream_open(ClientHandle c, SessionHandle s, ref IntPtr err);
        [DllImport(Lib, CallingConvention = Cdecl)] internal static extern IntPtr perps_stream_next(StreamHandle st, long timeoutMs, ref IntPtr err);
        [DllImport(Lib, CallingConvention = Cdecl)] internal static extern IntPtr perps_stream_new_order(StreamHandle st, byte[] orderJson, ref IntPtr err);
        [DllImport(Lib, CallingConvention = Cdecl)] internal static extern IntPtr perps_stream_cancel_order(StreamHandle st, byte[] paramsJson, ref IntPtr err);
        [DllImport(Lib, CallingConvention = Cdecl)] internal static extern void perps_stream_close(StreamHandle st);
        [DllImport(Lib, CallingConvention = Cdecl)] internal static extern void perps_stream_free(IntPtr st);
        // The same close on the raw pointer, for StreamHandle.ReleaseHandle (the handle itself
        // is already released there and can no longer be passed).
        [DllImport(Lib, CallingConvention = Cdecl, EntryPoint = "perps_stream_close")]
        internal static extern void perps_stream_close_raw(IntPtr st);
    }

    /// <summary>String and error conversions shared by the wrappers.</summary>
    internal static class Interop
    {
        private static readonly UTF8Encoding Utf8Strict = new UTF8Encoding(false, true);

        /// <summary>A string as NUL-terminated UTF-8; null stays null (a NULL pointer). A string
        /// holding a NUL character is refused (InvalidArgument) rather than cut short there by C:
        /// a body signed up to its NUL would not be the body sent.</summary>
        internal static byte[] Utf8Z(string s)
        {
            if (s == null) return null;
            if (s.IndexOf('\0') >= 0) throw NulRefused();
            var bytes = new byte[Utf8Strict.GetByteCount(s) + 1];
            Utf8Strict.GetBytes(s, 0, s.Length, bytes, 0);
            return bytes; // last byte stays 0
        }

        /// <summary>The refusal of an argument holding a NUL, whichever form it came in.</summary>
        internal static PerpsException NulRefused()
        {
            return new PerpsException(PerpsCode.InvalidArgument,
                "string argument contains a NUL character (C would read it only up to there)", 0, null, false);
        }

        /// <summary>Copy a borrowed NUL-terminated UTF-8 string (not freed); null for NULL.</summary>
        internal static string CopyUtf8(IntPtr p)
        {
            if (p == IntPtr.Zero) return null;
            int n = 0;
            while (Marshal.ReadByte(p, n) != 0) n++;
            var bytes = new byte[n];
            Marshal.Copy(p, bytes, 0, n);
            try { return Encoding.UTF8.GetString(bytes); }
            finally { Array.Clear(bytes, 0, n); } // results may hold tokens
        }

        /// <summary>Take an owned char* result: copy it, then free it with perps_string_free.
        /// NULL means the call failed: throw the error it stored in `err`.</summary>
        internal static string Take(IntPtr result, IntPtr err)
        {
            if (result == IntPtr.Zero) throw ToException(err);
            try { return CopyUtf8(result); }
            finally { Native.perps_string_free(result); }
        }

        /// <summary>A handle result: NULL (invalid) means failure.</summary>
        internal static T TakeHandle<T>(T handle, IntPtr err) where T : SafeHandle
        {
            if (handle == null || handle.IsInvalid)
            {
                if (handle != null) handle.Dispose();
                throw ToException(err);
            }
            return handle;
        }

        internal static void Check(PerpsCode code, IntPtr err)
        {
            if (code != PerpsCode.Ok) throw ToException(err, code);
        }

        /// <summary>Read and free a perps_error*, as an exception.</summary>
        internal static PerpsException ToException(IntPtr err, PerpsCode fallback = PerpsCode.Panic)
        {
            if (err == IntPtr.Zero)
                return new PerpsException(fallback, "libperps reported a failure without an error object", 0, null, false);
            using (var e = new ErrorHandle(err))
            {
                return new PerpsException(
                    Native.perps_error_code(e),
                    CopyUtf8(Native.perps_error_message(e)),
                    Native.perps_error_http_status(e),
                    CopyUtf8(Native.perps_error_body(e)),
                    Native.perps_error_may_have_reached_venue(e),
                    CopyUtf8(Native.perps_error_cl_ord_id(e)),
                    CopyUtf8(Native.perps_error_request_id(e)),
                    Native.perps_error_retry_after_ms(e),
                    CopyUtf8(Native.perps_error_stream_request_id(e)));
            }
        }

        /// <summary>A fixed-size NUL-terminated char array as a string.</summary>
        internal static string FixedField(byte[] field)
        {
            int n = Array.IndexOf(field, (byte)0);
            return Encoding.UTF8.GetString(field, 0, n < 0 ? field.Length : n);
        }
    }
}
