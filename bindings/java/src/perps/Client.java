package perps;

import static perps.PerpsNative.LIB;
import static perps.PerpsNative.utf8;

import com.sun.jna.Pointer;
import com.sun.jna.ptr.LongByReference;
import com.sun.jna.ptr.PointerByReference;
import java.util.Objects;
import java.util.function.Function;

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

    /**
     * All of sign-in in one call with an in-process wallet key; returns the login JSON. A String
     * key cannot be wiped: the {@code char[]} and {@code byte[]} overloads take one the caller
     * can wipe.
     */
    public String signin(Session session, String chain, String walletPrivateKey, long expiresSeconds) {
        try (PerpsNative.Secret key = new PerpsNative.Secret(walletPrivateKey)) {
            return signin(session, chain, key, expiresSeconds);
        }
    }

    /**
     * {@link #signin(Session, String, String, long)} with the key in a {@code char[]}, which is
     * only read (wipe it yourself when done); the binding's own UTF-8 copies are zeroed before
     * the call returns, failed calls included.
     */
    public String signin(Session session, String chain, char[] walletPrivateKey, long expiresSeconds) {
        try (PerpsNative.Secret key = new PerpsNative.Secret(walletPrivateKey)) {
            return signin(session, chain, key, expiresSeconds);
        }
    }

    /**
     * {@link #signin(Session, String, String, long)} with the key as UTF-8 bytes (no NUL), which
     * are only read (wipe them yourself when done); the binding's native copy is zeroed before
     * the call returns, failed calls included.
     */
    public String signin(Session session, String chain, byte[] walletPrivateKey, long expiresSeconds) {
        try (PerpsNative.Secret key = new PerpsNative.Secret(walletPrivateKey)) {
            return signin(session, chain, key, expiresSeconds);
        }
    }

    private String signin(Session session, String chain, PerpsNative.Secret key, long expiresSeconds) {
        return takeString(session, err -> LIB.perps_signin(
                ptr(), session.ptr(), utf8(chain), key.pointer(), expiresSeconds, err));
    }

    /**
     * Validate, sign and send an order (never retried); returns the venue's JSON, which carries
     * the order's cl_ord_id (generated when the order has none). On a PerpsException with
     * mayHaveReachedVenue(), look the order up by its getClOrdId() before resending.
     */
    public String newOrder(Session session, String orderJson) {
        return takeString(session, err -> LIB.perps_new_order(ptr(), session.ptr(), utf8(orderJson), err));
    }

    /** Any other endpoint under perps_url ("GET", "POST", "PUT", "DELETE"); body null for none. */
    public String request(Session session, String method, String path, String body) {
        return takeString(session, err -> LIB.perps_request(
                ptr(), session.ptr(), utf8(method), utf8(path), utf8(body), err));
    }

    // ---- The trading loop: one method per venue endpoint ----
    // paramsJson: a JSON object of the endpoint's parameters (see perps.h; checked before
    // anything is sent: INVALID_ARGUMENT names the parameter), or null for none. Each returns
    // the venue's JSON and is never retried (but a GET query that found its kept-alive
    // connection closed before any answer is sent once more: README "The keep-alive race").
    // An order already gone (or not visible yet) throws with NOT_FOUND. The three public endpoints take a null session.

    /** An account endpoint: the session is required. */
    private String endpoint(PerpsNative.EndpointCall call, Session session, String paramsJson) {
        Objects.requireNonNull(session, "session");
        return publicEndpoint(call, session, paramsJson);
    }

    /** A public endpoint: the session may be null. */
    private String publicEndpoint(PerpsNative.EndpointCall call, Session session, String paramsJson) {
        if (session == null) {
            return takeString(err -> call.call(ptr(), null, utf8(paramsJson), err));
        }
        return takeString(session, err -> call.call(ptr(), session.ptr(), utf8(paramsJson), err));
    }

    /** POST /api/cancel_order: {"order_id":&lt;int64&gt;} or {"cl_ord_id":"…"}. */
    public String cancelOrder(Session session, String paramsJson) {
        return endpoint(LIB::perps_cancel_order, session, paramsJson);
    }

    /** POST /api/cancel_orders: order_id_list and/or cl_ord_id_list. */
    public String cancelOrders(Session session, String paramsJson) {
        return endpoint(LIB::perps_cancel_orders, session, paramsJson);
    }

    /**
     * Cancel every open order selected (symbol, cl_ord_id_prefix; null for all) and the named
     * cl_ord_id_list orders the venue may not list yet (a list alone: only those), then confirm each ended with query_order
     * for up to confirm_ms (default 15000; 0: no confirmation). Returns the report
     * {"complete","orders":[{"order_id","cl_ord_id","symbol","status","confirmed"}],
     * "cancel_requests","failed_cancel_requests","queries","listing_truncated"} (perps.h: perps_cancel_all).
     */
    public String cancelAll(Session session, String paramsJson) {
        return endpoint(LIB::perps_cancel_all, session, paramsJson);
    }

    /** POST /api/change_leverage: {"symbol":"BTC-USD","leverage":&lt;int&gt;}. */
    public String changeLeverage(Session session, String paramsJson) {
        return endpoint(LIB::perps_change_leverage, session, paramsJson);
    }

    /** POST /api/change_margin_mode: {"symbol":…,"margin_mode":"cross"|"isolated"}. */
    public String changeMarginMode(Session session, String paramsJson) {
        return endpoint(LIB::perps_change_margin_mode, session, paramsJson);
    }

    /** GET /api/query_order: {"order_id":&lt;int64&gt;} or {"cl_ord_id":"…"}. */
    public String queryOrder(Session session, String paramsJson) {
        return endpoint(LIB::perps_query_order, session, paramsJson);
    }

    /** GET /api/query_orders (history): symbol, status, order_type, start, end, last_id, limit. */
    public String queryOrders(Session session, String paramsJson) {
        return endpoint(LIB::perps_query_orders, session, paramsJson);
    }

    /** GET /api/query_open_orders: symbol, limit. */
    public String queryOpenOrders(Session session, String paramsJson) {
        return endpoint(LIB::perps_query_open_orders, session, paramsJson);
    }

    /** GET /api/query_trades (the account's fills): symbol, side, start, end, last_id, limit. */
    public String queryTrades(Session session, String paramsJson) {
        return endpoint(LIB::perps_query_trades, session, paramsJson);
    }

    /**
     * GET /api/query_funding_history (the account's funding payments, qty negative = paid):
     * symbol, start, end, last_id, limit (1..500). The venue's JSON as sent: a bare array of
     * rows, newest first (live), or the {page_size, result, total} envelope.
     */
    public String queryFundingHistory(Session session, String paramsJson) {
        return endpoint(LIB::perps_query_funding_history, session, paramsJson);
    }

    /** GET /api/query_positions: symbol (optional); qty is signed (negative: short). */
    public String queryPositions(Session session, String paramsJson) {
        return endpoint(LIB::perps_query_positions, session, paramsJson);
    }

    /** GET /api/query_balance (no parameters: paramsJson null). */
    public String queryBalance(Session session, String paramsJson) {
        return endpoint(LIB::perps_query_balance, session, paramsJson);
    }

    /** GET /api/query_position_config: {"symbol":"BTC-USD"}. */
    public String queryPositionConfig(Session session, String paramsJson) {
        return endpoint(LIB::perps_query_position_config, session, paramsJson);
    }

    /** GET /api/query_symbol_info (public: session may be null): symbol, optional. */
    public String querySymbolInfo(Session session, String paramsJson) {
        return publicEndpoint(LIB::perps_query_symbol_info, session, paramsJson);
    }

    /** GET /api/query_symbol_price (public: session may be null): {"symbol":"BTC-USD"}. */
    public String querySymbolPrice(Session session, String paramsJson) {
        return publicEndpoint(LIB::perps_query_symbol_price, session, paramsJson);
    }

    /**
     * GET /api/query_depth_book (public: session may be null): {"symbol":"BTC-USD"}; levels
     * sorted best first (bids high to low, asks low to high).
     */
    public String queryDepthBook(Session session, String paramsJson) {
        return publicEndpoint(LIB::perps_query_depth_book, session, paramsJson);
    }

    // ---- Streams: the venue's two WebSockets (see Stream) ----

    /**
     * Open the market + account stream (ws-stream; client option stream_url).
     * {@code subscriptionsJson}: a JSON array of {"channel":C,"symbol":S} (C: price, depth_book,
     * public_trade) and, with a session, {"channel":C} (C: order, position, balance, trade);
     * {@code session} null for public channels only. Returns once connected, authenticated and
     * subscribed.
     */
    public Stream openStream(Session session, String subscriptionsJson) {
        Pointer stream;
        if (session == null) {
            stream = use(() -> open(err -> LIB.perps_stream_open(ptr(), null, utf8(subscriptionsJson), err)));
        } else {
            stream = session.use(() -> use(() -> open(err -> LIB.perps_stream_open(
                    ptr(), session.ptr(), utf8(subscriptionsJson), err))));
        }
        return new Stream(stream);
    }

    /**
     * Open the order stream (ws-api; client option order_stream_url) and log in with the
     * session's token; its session_id is the session's x-session-id when one is set.
     */
    public Stream openOrderStream(Session session) {
        Objects.requireNonNull(session, "session");
        return new Stream(session.use(() -> use(() -> open(err -> LIB.perps_order_stream_open(
                ptr(), session.ptr(), err)))));
    }

    private static Pointer open(Function<PointerByReference, Pointer> call) {
        PointerByReference err = new PointerByReference();
        return PerpsNative.takeHandle(call.apply(err), err);
    }
}
