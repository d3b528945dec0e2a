package perps;

import static perps.PerpsNative.LIB;
import static perps.PerpsNative.utf8;

import com.sun.jna.Pointer;
import com.sun.jna.ptr.PointerByReference;
import java.nio.charset.StandardCharsets;
import java.util.Objects;

/**
 * One identity: the request-signing key, the pending challenge, the access token. Thread-safe.
 * Closing it frees it and zeroizes its key and token.
 */
public final class Session extends NativeHandle {
    /** A session with a fresh temporary Ed25519 key from the OS random number generator. */
    public Session() {
        this(create());
    }

    private Session(Pointer pointer) {
        super(pointer, LIB::perps_session_free);
    }

    private static Pointer create() {
        PointerByReference err = new PointerByReference();
        return PerpsNative.takeHandle(LIB.perps_session_new(err), err);
    }

    /**
     * A session for a web-site API credential (it can place orders at once). String secrets
     * cannot be wiped: the {@code char[]} and {@code byte[]} overloads take ones the caller can
     * wipe.
     */
    public static Session fromApiKey(String apiToken, String ed25519PrivateKey) {
        try (PerpsNative.Secret token = new PerpsNative.Secret(apiToken);
                PerpsNative.Secret key = new PerpsNative.Secret(ed25519PrivateKey)) {
            return fromApiKey(token, key);
        }
    }

    /**
     * {@link #fromApiKey(String, String)} with the token and key in {@code char[]}s, which are
     * only read (wipe them yourself when done; the session keeps its own copies, zeroized when
     * it is closed); the binding's own UTF-8 copies are zeroed before the call returns, failed
     * calls included.
     */
    public static Session fromApiKey(char[] apiToken, char[] ed25519PrivateKey) {
        try (PerpsNative.Secret token = new PerpsNative.Secret(apiToken);
                PerpsNative.Secret key = new PerpsNative.Secret(ed25519PrivateKey)) {
            return fromApiKey(token, key);
        }
    }

    /**
     * {@link #fromApiKey(String, String)} with the token and key as UTF-8 bytes (no NUL), which
     * are only read (wipe them yourself when done); the binding's native copies are zeroed
     * before the call returns, failed calls included.
     */
    public static Session fromApiKey(byte[] apiToken, byte[] ed25519PrivateKey) {
        try (PerpsNative.Secret token = new PerpsNative.Secret(apiToken);
                PerpsNative.Secret key = new PerpsNative.Secret(ed25519PrivateKey)) {
            return fromApiKey(token, key);
        }
    }

    private static Session fromApiKey(PerpsNative.Secret token, PerpsNative.Secret key) {
        PointerByReference err = new PointerByReference();
        return new Session(PerpsNative.takeHandle(
                LIB.perps_session_from_api_key(token.pointer(), key.pointer(), err), err));
    }

    /**
     * The request key id: base58 public key of the request-signing key, sent as requestId at
     * sign-in. Not the x-request-id (a fresh UUID per signed request, {@link BodySignature#requestId})
     * nor the venue's request_id (a field of its answers).
     */
    public String requestId() {
        return takeString(err -> LIB.perps_session_request_id(ptr(), err));
    }

    /** The access token (a secret); INVALID_STATE when there is none. */
    public String token() {
        return takeString(err -> LIB.perps_session_token(ptr(), err));
    }

    /** The session's state as JSON, without secrets. */
    public String info() {
        return takeString(err -> LIB.perps_session_info(ptr(), err));
    }

    /** Forget the token and any pending challenge (the key is kept). */
    public void logout() {
        checkCode(err -> LIB.perps_session_logout(ptr(), err));
    }

    /** The x-session-id header of order entry (new_order, cancel_order, cancel_orders); null clears it. */
    public void setSessionId(String value) {
        checkCode(err -> LIB.perps_session_set_session_id(ptr(), utf8(value), err));
    }

    /** The x-impersonate header of trading requests; null clears it. */
    public void setImpersonate(String value) {
        checkCode(err -> LIB.perps_session_set_impersonate(ptr(), utf8(value), err));
    }

    /** JSON of the four x-request-* headers for this body (its exact UTF-8 bytes are signed). */
    public String signBody(String body) {
        return takeString(err -> LIB.perps_sign_body(ptr(), utf8(body), err));
    }

    /** Same with a caller-chosen request id (a UUID) and timestamp (ms since the epoch). */
    public String signBodyAt(String body, String requestId, long timestampMs) {
        return takeString(err -> LIB.perps_sign_body_at(ptr(), utf8(body), utf8(requestId), timestampMs, err));
    }

    /** The library's allocation-free path: sign exactly these bytes (UTF-8). */
    public BodySignature signBodyInto(byte[] body) {
        Objects.requireNonNull(body, "body");
        PerpsNative.BodySignatureStruct out = new PerpsNative.BodySignatureStruct();
        return use(() -> {
            int code = LIB.perps_sign_body_into(ptr(), body, new PerpsNative.SizeT(body.length), out);
            if (code != PerpsCode.OK.value()) {
                PerpsCode c = PerpsCode.of(code);
                throw new PerpsException(c, code, "perps_sign_body_into failed with " + c, 0, null, false);
            }
            return new BodySignature(field(out.version), field(out.request_id), field(out.timestamp),
                    field(out.signature));
        });
    }

    private static String field(byte[] bytes) {
        int n = 0;
        while (n < bytes.length && bytes[n] != 0) {
            n++;
        }
        return new String(bytes, 0, n, StandardCharsets.UTF_8);
    }
}
