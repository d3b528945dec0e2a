package perps;

/** The four {@code x-request-*} header values of a signed body. */
public record BodySignature(String version, String requestId, String timestamp, String signature) {
}
