package perps;

/**
 * The four {@code x-request-*} header values of a signed body. {@code requestId} is the
 * x-request-id (a fresh UUID per signed request), not the session's request key id.
 */
public record BodySignature(String version, String requestId, String timestamp, String signature) {
}
