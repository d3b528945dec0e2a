package perps;

/** Mirror of {@code perps_code}. The numbers are stable and never reused. */
public enum PerpsCode {
    OK(0),
    INVALID_ARGUMENT(1),
    INVALID_KEY(2),
    INVALID_ORDER(3),
    VERIFICATION_FAILED(4),
    INVALID_STATE(5),
    TRANSPORT(6),
    TIMEOUT(7),
    HTTP_STATUS(8),
    API_ERROR(9),
    BAD_RESPONSE(10),
    TOKEN_EXPIRED(11),
    RNG(12),
    /** The venue's HTTP 404 from an endpoint call: the order is gone (or not visible yet). */
    NOT_FOUND(13),
    /** Refused by the client's rate limiter (option rate_limit); nothing was sent. */
    RATE_LIMITED(14),
    /** The stream was closed ({@link Stream#close()}), or has ended for good (next: after its "failed" event; a request: as soon as it is ending). */
    STREAM_CLOSED(15),
    /** A new WebSocket would break the venue's connection limits (counted in this process); nothing sent. */
    STREAM_LIMIT(16),
    PANIC(99),
    /** A code this binding does not know (a newer library); see {@link PerpsException#getRawCode()}. */
    UNKNOWN(-1);

    private final int value;

    PerpsCode(int value) {
        this.value = value;
    }

    /** The C value. */
    public int value() {
        return value;
    }

    /** The constant for a C value; {@link #UNKNOWN} for a value this binding does not know. */
    public static PerpsCode of(int value) {
        for (PerpsCode c : values()) {
            if (c.value == value && c != UNKNOWN) {
                return c;
            }
        }
        return UNKNOWN;
    }
}
