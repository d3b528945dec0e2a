package perps;

import com.sun.jna.Pointer;

/** A failed libperps call: the contents of its {@code perps_error}. */
public class PerpsException extends RuntimeException {
    private static final long serialVersionUID = 1L;

    private final PerpsCode code;
    private final int rawCode;
    private final int httpStatus;
    private final String body;
    private final boolean mayHaveReachedVenue;

    public PerpsException(PerpsCode code, int rawCode, String message, int httpStatus, String body,
            boolean mayHaveReachedVenue) {
        super(message);
        this.code = code;
        this.rawCode = rawCode;
        this.httpStatus = httpStatus;
        this.body = body;
        this.mayHaveReachedVenue = mayHaveReachedVenue;
    }

    /** The stable error code. */
    public PerpsCode getCode() {
        return code;
    }

    /** The C value of the code (differs from {@code getCode().value()} only for UNKNOWN). */
    public int getRawCode() {
        return rawCode;
    }

    /** The venue's HTTP status, or 0 when there was no HTTP answer. */
    public int getHttpStatus() {
        return httpStatus;
    }

    /** The venue's response body, or null. */
    public String getBody() {
        return body;
    }

    /**
     * True when the venue may have acted on the request: for an order, query the venue before
     * sending it again (the library never retries).
     */
    public boolean mayHaveReachedVenue() {
        return mayHaveReachedVenue;
    }

    @Override
    public String toString() {
        return "PerpsException(" + code + "): " + getMessage() + (httpStatus != 0 ? " [HTTP " + httpStatus + "]" : "")
                + (mayHaveReachedVenue ? " [may have reached the venue]" : "");
    }

    /** Read a perps_error* into an exception and free it. */
    static PerpsException take(Pointer error, PerpsCode fallback) {
        if (error == null) {
            return new PerpsException(fallback, fallback.value(), "libperps reported a failure without an error object",
                    0, null, false);
        }
        PerpsNative lib = PerpsNative.LIB;
        try {
            int raw = lib.perps_error_code(error);
            Pointer body = lib.perps_error_body(error);
            return new PerpsException(PerpsCode.of(raw), raw,
                    lib.perps_error_message(error).getString(0, "UTF-8"),
                    lib.perps_error_http_status(error) & 0xFFFF,
                    body == null ? null : body.getString(0, "UTF-8"),
                    lib.perps_error_may_have_reached_venue(error) != 0);
        } finally {
            lib.perps_error_free(error);
        }
    }
}
