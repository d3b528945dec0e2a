package perps;

import com.sun.jna.IntegerType;
import com.sun.jna.Library;
import com.sun.jna.Memory;
import com.sun.jna.Native;
import com.sun.jna.Pointer;
import com.sun.jna.Structure;
import com.sun.jna.ptr.LongByReference;
import com.sun.jna.ptr.PointerByReference;
import java.util.Arrays;
import java.util.function.BiConsumer;

/**
 * The C functions of include/perps.h, one to one, through JNA. Package-private: use
 * {@link Client}, {@link Session}, {@link Stream}, {@link Wallet}, {@link Order}, {@link Challenge},
 * {@link Perps}.
 *
 * <p>The mapping rules, each one a JNA trap:
 * <ul>
 *   <li>every {@code char*} the library returns is a {@link Pointer}, never {@code String}
 *       (JNA would copy it and never free it: a leak, and a token left in native memory); it is
 *       copied with {@code getString(0, "UTF-8")} and freed with {@code perps_string_free};
 *   <li>every input string is a {@code byte[]} of NUL-terminated UTF-8 made by {@link #utf8}
 *       ({@code null} stays NULL). Not {@code String}: JNA encodes {@code String} arguments with
 *       its default encoding ({@code jna.encoding}, else the platform's: US-ASCII under
 *       {@code LANG=C}) and, in JNA 5.13, ignores {@code OPTION_STRING_ENCODING} for them;
 *   <li>C {@code bool} is one byte: mapped as {@code byte} (JNA's {@code boolean} is a 4-byte
 *       int whose upper bytes would be garbage on a return);
 *   <li>{@code uint16_t} is {@code short} (read with {@code & 0xFFFF}), {@code int64_t} is
 *       {@code long}, {@code perps_code} is {@code int}, handles are opaque {@code Pointer}s.
 * </ul>
 */
interface PerpsNative extends Library {
    /** The library, its ABI checked against the binding's version before any call (AbiCheck). */
    PerpsNative LIB = AbiCheck.verified(Native.load("perps", PerpsNative.class));

    /**
     * C {@code size_t}. Not {@code long} (right only where size_t is 64 bits), not
     * {@code NativeLong} (that is C {@code long}: 32 bits on 64-bit Windows, where size_t is
     * 64): an unsigned integer of {@link Native#SIZE_T_SIZE} bytes, right on every platform.
     */
    final class SizeT extends IntegerType {
        private static final long serialVersionUID = 1L;

        public SizeT() {
            this(0);
        }

        public SizeT(long value) {
            super(Native.SIZE_T_SIZE, value, true);
        }
    }

    /** {@code perps_body_signature}: four fixed-size NUL-terminated char arrays. */
    @Structure.FieldOrder({"version", "request_id", "timestamp", "signature"})
    final class BodySignatureStruct extends Structure {
        public byte[] version = new byte[4];      // PERPS_SIGN_VERSION_SIZE
        public byte[] request_id = new byte[40];  // PERPS_REQUEST_ID_SIZE
        public byte[] timestamp = new byte[24];   // PERPS_TIMESTAMP_SIZE
        public byte[] signature = new byte[96];   // PERPS_SIGNATURE_SIZE
    }

    void perps_string_free(Pointer s);
    Pointer perps_version();

    int perps_error_code(Pointer e);
    Pointer perps_error_message(Pointer e);
    short perps_error_http_status(Pointer e);
    Pointer perps_error_body(Pointer e);
    byte perps_error_may_have_reached_venue(Pointer e);
    Pointer perps_error_cl_ord_id(Pointer e);
    Pointer perps_error_request_id(Pointer e);
    long perps_error_retry_after_ms(Pointer e);
    Pointer perps_error_stream_request_id(Pointer e);
    void perps_error_free(Pointer e);

    Pointer perps_client_new(byte[] baseUrl, byte[] perpsUrl, byte[] optionsJson, PointerByReference err);
    void perps_client_free(Pointer c);
    int perps_client_sync_time(Pointer c, LongByReference offsetMs, PointerByReference err);

    Pointer perps_prepare_signin(Pointer c, Pointer s, byte[] chain, byte[] address, PointerByReference err);
    Pointer perps_login(Pointer c, Pointer s, byte[] signature, long expiresSeconds, PointerByReference err);
    Pointer perps_signin(Pointer c, Pointer s, byte[] chain, Pointer walletKey, long expiresSeconds,
            PointerByReference err);
    Pointer perps_new_order(Pointer c, Pointer s, byte[] orderJson, PointerByReference err);
    Pointer perps_request(Pointer c, Pointer s, byte[] method, byte[] path, byte[] body, PointerByReference err);

    /** The shape every endpoint export shares; s may be NULL for the public three. */
    @FunctionalInterface
    interface EndpointCall {
        Pointer call(Pointer c, Pointer s, byte[] paramsJson, PointerByReference err);
    }

    Pointer perps_cancel_order(Pointer c, Pointer s, byte[] paramsJson, PointerByReference err);
    Pointer perps_cancel_orders(Pointer c, Pointer s, byte[] paramsJson, PointerByReference err);
    Pointer perps_cancel_all(Pointer c, Pointer s, byte[] paramsJson, PointerByReference err);
    Pointer perps_change_leverage(Pointer c, Pointer s, byte[] paramsJson, PointerByReference err);
    Pointer perps_change_margin_mode(Pointer c, Pointer s, byte[] paramsJson, PointerByReference err);
    Pointer perps_query_order(Pointer c, Pointer s, byte[] paramsJson, PointerByReference err);
    Pointer perps_query_orders(Pointer c, Pointer s, byte[] paramsJson, PointerByReference err);
    Pointer perps_query_open_orders(Pointer c, Pointer s, byte[] paramsJson, PointerByReference err);
    Pointer perps_query_trades(Pointer c, Pointer s, byte[] paramsJson, PointerByReference err);
    Pointer perps_query_funding_history(Pointer c, Pointer s, byte[] paramsJson, PointerByReference err);
    Pointer perps_query_positions(Pointer c, Pointer s, byte[] paramsJson, PointerByReference err);
    Pointer perps_query_balance(Pointer c, Pointer s, byte[] paramsJson, PointerByReference err);
    Pointer perps_query_position_config(Pointer c, Pointer s, byte[] paramsJson, PointerByReference err);
    Pointer perps_query_symbol_info(Pointer c, Pointer s, byte[] paramsJson, PointerByReference err);
    Pointer perps_query_symbol_price(Pointer c, Pointer s, byte[] paramsJson, PointerByReference err);
    Pointer perps_query_depth_book(Pointer c, Pointer s, byte[] paramsJson, PointerByReference err);

    Pointer perps_session_new(PointerByReference err);
    Pointer perps_session_from_api_key(Pointer apiToken, Pointer ed25519Key, PointerByReference err);
    void perps_session_free(Pointer s);
    Pointer perps_session_request_id(Pointer s, PointerByReference err);
    Pointer perps_session_token(Pointer s, PointerByReference err);
    Pointer perps_session_info(Pointer s, PointerByReference err);
    int perps_session_logout(Pointer s, PointerByReference err);
    int perps_session_set_session_id(Pointer s, byte[] value, PointerByReference err);
    int perps_session_set_impersonate(Pointer s, byte[] value, PointerByReference err);

    Pointer perps_sign_body(Pointer s, byte[] body, PointerByReference err);
    Pointer perps_sign_body_at(Pointer s, byte[] body, byte[] requestId, long timestampMs, PointerByReference err);
    int perps_sign_body_into(Pointer s, byte[] body, SizeT len, BodySignatureStruct out);

    Pointer perps_wallet_address(byte[] chain, Pointer privateKey, PointerByReference err);
    Pointer perps_wallet_sign(byte[] chain, Pointer privateKey, byte[] payloadJson, PointerByReference err);
    Pointer perps_wallet_wrap_solana_signature(byte[] payloadJson, byte[] address, byte[] signature, SizeT signatureLen,
            PointerByReference err);
    Pointer perps_challenge_verify(byte[] signedData, byte[] certsJson, byte[] requestId, byte[] chain, byte[] address,
            long nowUnixSecs, PointerByReference err);
    Pointer perps_order_serialize(byte[] orderJson, PointerByReference err);

    // Streams: perps_stream_next blocks (up to its timeout); perps_stream_close may run on any
    // thread meanwhile and wakes it.
    Pointer perps_stream_open(Pointer c, Pointer s, byte[] subscriptionsJson, PointerByReference err);
    Pointer perps_order_stream_open(Pointer c, Pointer s, PointerByReference err);
    Pointer perps_stream_next(Pointer st, long timeoutMs, PointerByReference err);
    Pointer perps_stream_new_order(Pointer st, byte[] orderJson, PointerByReference err);
    Pointer perps_stream_cancel_order(Pointer st, byte[] paramsJson, PointerByReference err);
    void perps_stream_close(Pointer st);
    void perps_stream_free(Pointer st);

    // ---- conversions shared by the wrappers ----

    /**
     * A string as NUL-terminated UTF-8 bytes; null stays null (a NULL pointer). A string that
     * is not valid UTF-16 (a lone surrogate) is refused rather than sent with a '?' in it, and
     * one holding a NUL character is refused (INVALID_ARGUMENT) rather than cut short there by
     * C: a body signed up to its NUL would not be the body sent.
     *
     * <p>Encoded here, in two passes (count, then write into the one array returned), as C#'s
     * GetByteCount and GetBytes do: the string may be a key, and the array returned is the
     * only copy of its bytes this makes (a {@link Secret} wipes it). A CharsetEncoder writes
     * into buffers of its own and, when one is too small or the input turns out not to be valid
     * Unicode, drops it holding what it had encoded so far: a refused key's bytes, left in the
     * heap unwiped. A CharSequence so that a caller's {@code char[]} is read in place
     * ({@link java.nio.CharBuffer#wrap(char[])}), never copied into a String.
     */
    static byte[] utf8(CharSequence s) {
        if (s == null) {
            return null;
        }
        for (int i = 0, length = s.length(); i < length; i++) {
            if (s.charAt(i) == '\0') {
                throw nulRefused();
            }
        }
        int length = s.length();
        long count = 0;
        for (int i = 0; i < length; i++) {
            char c = s.charAt(i);
            if (c < 0x80) {
                count += 1;
            } else if (c < 0x800) {
                count += 2;
            } else if (!Character.isSurrogate(c)) {
                count += 3;
            } else if (Character.isHighSurrogate(c) && i + 1 < length && Character.isLowSurrogate(s.charAt(i + 1))) {
                count += 4;
                i++;
            } else {
                throw new IllegalArgumentException("string argument is not valid Unicode (lone surrogate)");
            }
        }
        if (count > Integer.MAX_VALUE - 16) {
            throw new IllegalArgumentException("string argument too long for one C string");
        }
        byte[] z = new byte[(int) count + 1];
        int n = 0;
        for (int i = 0; i < length; i++) {
            int c = s.charAt(i);
            if (c < 0x80) {
                z[n++] = (byte) c;
            } else if (c < 0x800) {
                z[n++] = (byte) (0xC0 | (c >> 6));
                z[n++] = (byte) (0x80 | (c & 0x3F));
            } else if (!Character.isSurrogate((char) c)) {
                z[n++] = (byte) (0xE0 | (c >> 12));
                z[n++] = (byte) (0x80 | ((c >> 6) & 0x3F));
                z[n++] = (byte) (0x80 | (c & 0x3F));
            } else {
                int cp = Character.toCodePoint((char) c, s.charAt(++i)); // a valid pair: checked above
                z[n++] = (byte) (0xF0 | (cp >> 18));
                z[n++] = (byte) (0x80 | ((cp >> 12) & 0x3F));
                z[n++] = (byte) (0x80 | ((cp >> 6) & 0x3F));
                z[n++] = (byte) (0x80 | (cp & 0x3F));
            }
        }
        return z; // last byte stays 0
    }

    /** The refusal of an argument holding a NUL, whichever form it came in. */
    static PerpsException nulRefused() {
        return new PerpsException(PerpsCode.INVALID_ARGUMENT, PerpsCode.INVALID_ARGUMENT.value(),
                "string argument contains a NUL character (C would read it only up to there)", 0, null, false);
    }

    /**
     * A secret argument (a wallet or Ed25519 private key, an API token) as NUL-terminated
     * UTF-8 in native memory the binding owns, overwritten with zeros when closed. As a
     * {@code byte[]}, JNA would copy it into a temporary native buffer that it frees without
     * wiping, and the array would stay in the heap until collected. (The caller's own
     * {@code String} cannot be wiped: keep keys out of Strings that live long; a caller's
     * {@code char[]} or {@code byte[]} is read, never written: the caller wipes it.)
     */
    final class Secret implements AutoCloseable {
        /**
         * Tests only (set by reflection, null otherwise): told of each secret when made
         * ("made": its native copy's bytes; "encoded": the array a String or char[] was
         * encoded into, now wiped — a byte[] is copied straight into native memory, with no
         * array of the binding's) and when closed ("closed": its native copy's bytes after the
         * wipe, read before the memory is freed), so that a test can check that every one is
         * wiped.
         */
        static volatile BiConsumer<String, byte[]> hook;

        private final Memory memory;

        private Secret(Memory memory) {
            this.memory = memory;
        }

        /** A String secret, encoded to UTF-8 by {@link #utf8}. */
        Secret(String s) {
            this(fromEncoded(utf8(s)));
        }

        /** A char[] secret, encoded in place (no String made) through an array wiped at once. */
        Secret(char[] s) {
            this(fromEncoded(s == null ? null : utf8(java.nio.CharBuffer.wrap(s))));
        }

        /**
         * A secret already UTF-8, copied straight from the caller's array into native memory
         * with a NUL after it: no Java copy is made. Its UTF-8 is checked by the library (the
         * same INVALID_ARGUMENT as for any argument); an embedded NUL is refused here, as
         * {@link #utf8} refuses it in a String.
         */
        Secret(byte[] utf8) {
            this(fromCaller(utf8));
        }

        private static Memory fromEncoded(byte[] z) {
            if (z == null) {
                return null;
            }
            Memory memory;
            try {
                memory = new Memory(z.length);
                memory.write(0, z, 0, z.length);
            } finally {
                Arrays.fill(z, (byte) 0);
            }
            BiConsumer<String, byte[]> seen = hook;
            if (seen != null) {
                seen.accept("made", memory.getByteArray(0, z.length));
                seen.accept("encoded", z);
            }
            return memory;
        }

        private static Memory fromCaller(byte[] bytes) {
            if (bytes == null) {
                return null;
            }
            for (byte b : bytes) {
                if (b == 0) {
                    throw nulRefused();
                }
            }
            Memory memory = new Memory(bytes.length + 1L);
            memory.write(0, bytes, 0, bytes.length); // JNI copies from the array itself
            memory.setByte(bytes.length, (byte) 0);
            BiConsumer<String, byte[]> seen = hook;
            if (seen != null) {
                seen.accept("made", memory.getByteArray(0, bytes.length + 1));
            }
            return memory;
        }

        /** The NUL-terminated copy, or null (a NULL pointer) for a null argument. */
        Pointer pointer() {
            return memory;
        }

        @Override
        public void close() {
            if (memory != null) {
                memory.clear();
                BiConsumer<String, byte[]> seen = hook;
                if (seen != null) {
                    seen.accept("closed", memory.getByteArray(0, (int) memory.size()));
                }
                memory.close();
            }
        }
    }

    /** Take an owned char* result: copy it as UTF-8, free it; NULL means failure: throw. */
    static String take(Pointer result, PointerByReference err) {
        if (result == null) {
            throw PerpsException.take(err.getValue(), PerpsCode.PANIC);
        }
        try {
            return result.getString(0, "UTF-8");
        } finally {
            LIB.perps_string_free(result);
        }
    }

    /** A handle result: NULL means failure: throw. */
    static Pointer takeHandle(Pointer handle, PointerByReference err) {
        if (handle == null) {
            throw PerpsException.take(err.getValue(), PerpsCode.PANIC);
        }
        return handle;
    }

    /** A perps_code result: non-zero means failure: throw. */
    static void check(int code, PointerByReference err) {
        if (code != PerpsCode.OK.value()) {
            throw PerpsException.take(err.getValue(), PerpsCode.of(code));
        }
    }
}
