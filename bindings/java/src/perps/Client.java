package perps;

import static perps.PerpsNative.LIB;
import static perps.PerpsNative.utf8;

import com.sun.jna.Pointer;
import com.sun.jna.ptr.LongByReference;
import com.sun.jna.ptr.PointerByReference;

/**
 * The venue: its two base URLs, HTTP settings, one connection pool, the cached certificates and
 * the clock offset. Thread-safe: share one per venue between threads and sessions. Close it
 * (try-with-resources) when done.
 */
public final class Client extends NativeHandle {
    /** A client with the default options. */
    public Client(String baseUrl, String perpsUrl) {
        this(baseUrl, perpsUrl, null);
    }

    /** @param optionsJson null, or a JSON object of client options (see the README). */
    public Client(String baseUrl, String perpsUrl, String optionsJson) {
        this(create(baseUrl, perpsUrl, optionsJson));
    }

    private Client(Pointer pointer) {
        super(pointer, LIB::perps_client_free);
    }

    private static Pointer create(String baseUrl, String perpsUrl, String optionsJson) {
        PointerByReference err = new PointerByReference();
        return PerpsNative.takeHandle(
                LIB.perps_client_new(utf8(baseUrl), utf8(perpsUrl), utf8(optionsJson), err), err);
    }

    /**
     * Measure the venue's clock; returns the offset (venue minus local, ms) now used for every
     * request timestamp sent through this client.
     */
    public long syncTime() {
        return use(() -> {
            PointerByReference err = new PointerByReference();
            LongByReference offset = new LongByReference();
            PerpsNative.check(LIB.perps_client_sync_time(ptr(), offset, err), err);
            return offset.getValue();
        });
    }

    /** prepare-signin and challenge verification; returns the payload JSON for the wallet. */
    public String prepareSignin(Session session, String chain, String address) {
        return takeString(session, err -> LIB.perps_prepare_signin(
                ptr(), session.ptr(), utf8(chain), utf8(address), err));
    }

    /** login with the kept challenge and the wallet's signature; returns the login JSON. */
    public String login(Session session, String signature, long expiresSeconds) {
        return takeString(session, err -> LIB.perps_login(ptr(), session.ptr(), utf8(signature), expiresSeconds, err));
    }

    /** All of sign-in in one call with an in-process wallet key; returns the login JSON. */
    public String signin(Session session, String chain, String walletPrivateKey, long expiresSeconds) {
        return takeString(session, err -> LIB.perps_signin(
                ptr(), session.ptr(), utf8(chain), utf8(walletPrivateKey), expiresSeconds, err));
    }

    /** Validate, sign and send an order (never retried); returns the venue's JSON. */
    public String newOrder(Session session, String orderJson) {
        return takeString(session, err -> LIB.perps_new_order(ptr(), session.ptr(), utf8(orderJson), err));
    }

    /** Any other endpoint under perps_url ("GET", "POST", "PUT", "DELETE"); body null for none. */
    public String request(Session session, String method, String path, String body) {
        return takeString(session, err -> LIB.perps_request(
                ptr(), session.ptr(), utf8(method), utf8(path), utf8(body), err));
    }
}
