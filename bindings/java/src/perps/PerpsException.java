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
    private final String clOrdId;
    private final String xRequestId;
    private final long retryAfterMs;
    private final String streamRequestId;

    public PerpsException(PerpsCode code, int rawCode, String message, int httpStatus, String body,
            boolean mayHaveReachedVenue) {
        this(code, rawCode, message, httpStatus, body, mayHaveReachedVenue, null, null, -1);
    }

    public PerpsException(PerpsCode code, int rawCode, String message, int httpStatus, String body,
            boolean mayHaveReachedVenue, String clOrdId, String xRequestId, long retryAfterMs) {
        this(code, rawCode, message, httpStatus, body, mayHaveReachedVenue, clOrdId, xRequestId, retryAfterMs, null);
    }

    public PerpsException(PerpsCode code, int rawCode, String message, int httpStatus, String body,
            boolean mayHaveReachedVenue, String clOrdId, String xRequestId, long retryAfterMs,
            String streamRequestId) {
        super(message);
        this.code = code;
        this.rawCode = rawCode;
        this.httpStatus = httpStatus;
        this.body = body;
        this.mayHaveReachedVenue = mayHaveReachedVenue;
        this.clOrdId = clOrdId;
        this.xRequestId = xRequestId;
        this.retryAfterMs = retryAfterMs;
        this.streamRequestId = streamRequestId;
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

    /**
     * The cl_ord_id of the order a failed {@link Client#newOrder} or {@link Stream#newOrder} was
     * placing (yours, or the one the library generated): look it up with {@link Client#queryOrder}
     * before resending; for a failed {@link Stream#cancelOrder}, the one its params named; for a
     * {@link Client#request} POST to /api/new_order, the one its body names; null for other calls.
     */
    public String getClOrdId() {
        return clOrdId;
    }

    /**
     * The x-request-id header sent with the failed request (body-signed requests), or null when
     * nothing was sent. Not the session's request key id ({@link Session#requestId()}), nor the
     * venue's request_id field.
     */
    public String getXRequestId() {
        return xRequestId;
    }

    /**
     * How long to wait before asking again (the Retry-After of a 429 or 503, or the client's
     * rate limiter for RATE_LIMITED), in milliseconds; -1 when unknown. A Retry-After too long
     * to count in milliseconds gives Long.MAX_VALUE: cap it before adding it to a time.
     */
    public long getRetryAfterMs() {
        return retryAfterMs;
    }

    /**
     * The envelope request_id of an order-stream request ({@link Stream#newOrder},
     * {@link Stream#cancelOrder}) whose frame may have been partly written when the write failed:
     * the id its order_response events and the "unanswered" list of the next "disconnected"
     * status event name; null for every other error. Not the x-request-id.
     */
    public String getStreamRequestId() {
        return streamRequestId;
    }

    @Override
    public String toString() {
        return "PerpsException(" + code + "): " + getMessage() + (httpStatus != 0 ? " [HTTP " + httpStatus + "]" : "")
                + (mayHaveReachedVenue ? " [may have reached the venue]" : "")
                + (clOrdId != null ? " [cl_ord_id " + clOrdId + "]" : "");
    }

    /** A borrowed C string of the error (copied, not freed), or null. */
    private static String text(Pointer borrowed) {
        return borrowed == null ? null : borrowed.getString(0, "UTF-8");
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
            return new PerpsException(PerpsCode.of(raw), raw,
                    lib.perps_error_message(error).getString(0, "UTF-8"),
                    lib.perps_error_http_status(error) & 0xFFFF,
                    text(lib.perps_error_body(error)),
                    lib.perps_error_may_have_reached_venue(error) != 0,
                    text(lib.perps_error_cl_ord_id(error)),
                    text(lib.perps_error_request_id(error)),
                    lib.perps_error_retry_after_ms(error),
                    text(lib.perps_error_stream_request_id(error)));
        } finally {
            lib.perps_error_free(error);
        }
    }
}
