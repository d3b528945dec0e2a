package perps;

import static perps.PerpsNative.LIB;
import static perps.PerpsNative.utf8;

import com.sun.jna.ptr.PointerByReference;

/** The sign-in challenge checks as a pure function. */
public final class Challenge {
    private Challenge() {
    }

    /** Verify signedData against a JWK set and the claims; nowUnixSecs 0 means the system clock. */
    public static String verify(String signedData, String certsJson, String requestId, String chain, String address,
            long nowUnixSecs) {
        PointerByReference err = new PointerByReference();
        return PerpsNative.take(
                LIB.perps_challenge_verify(utf8(signedData), utf8(certsJson), utf8(requestId), utf8(chain),
                        utf8(address), nowUnixSecs, err), err);
    }
}
