package perps

// Client: the venue's two base URLs and HTTP settings, sign-in, orders and the endpoint
// exports (one method each).

/*
#include <perps.h> // angle brackets: found only through -I (in-tree) or pkg-config, never a stray copy beside cgo's temporary files
// The shape every endpoint export shares (perps_cancel_order ... perps_query_depth_book):
// Go cannot call a C function pointer, so this calls it.
typedef char *(*perps_endpoint_fn)(const perps_client *, const perps_session *, const char *, perps_error **);
static char *perps_call_endpoint(perps_endpoint_fn fn, const perps_client *c, const perps_session *s,
                                 const char *params_json, perps_error **err) {
	return fn(c, s, params_json, err);
}
*/
import "C"

import (
	"runtime"
	"unsafe"
)

// ---------------------------------------------------------------------------------------
// Client
// ---------------------------------------------------------------------------------------

// Client is the venue's two base URLs, HTTP settings, one keep-alive connection pool, the
// cached certificate set and the clock offset. Share one client between sessions and
// goroutines.
type Client struct{ h handle }

// NewClient makes a client. baseURL serves sign-in and certs, perpsURL serves trading.
// optionsJSON is "" or a JSON object of the client options in the README's "Client options"
// (connect_timeout_ms, total_timeout_ms, rate_limit, symbol_rules, cl_ord_id_prefix, the
// stream options, …).
func NewClient(baseURL, perpsURL, optionsJSON string) (*Client, error) {
	var a cArgs
	defer a.free()
	base, perps, opts := a.str("baseURL", baseURL), a.str("perpsURL", perpsURL), a.optStr("optionsJSON", optionsJSON)
	if a.err != nil {
		return nil, a.err
	}
	var cerr *C.perps_error
	p := C.perps_client_new(base, perps, opts, &cerr)
	if p == nil {
		return nil, takeError(cerr)
	}
	c := &Client{h: handle{ptr: unsafe.Pointer(p)}}
	runtime.SetFinalizer(c, (*Client).finalize)
	return c, nil
}

func freeClient(p unsafe.Pointer) { C.perps_client_free((*C.perps_client)(p)) }

// finalize runs only when c is unreachable, so no call can be using it.
func (c *Client) finalize() { c.h.finalize(freeClient) }

// Close frees the client after the calls in flight return. Idempotent; always nil.
func (c *Client) Close() error {
	if c != nil {
		c.h.close(c, freeClient)
	}
	return nil
}

// useAlone runs f with the client's C handle held open.
func (c *Client) useAlone(f func(*C.perps_client) error) error {
	if c == nil {
		return argumentError("the client is nil")
	}
	cp, err := c.h.acquire("client")
	if err != nil {
		return err
	}
	defer c.h.release()
	return f((*C.perps_client)(cp))
}

// use runs f with the client's (and then the session's) C handle held open.
func (c *Client) use(s *Session, f func(*C.perps_client, *C.perps_session) error) error {
	return c.useAlone(func(cp *C.perps_client) error {
		return s.use(func(sp *C.perps_session) error { return f(cp, sp) })
	})
}

// SyncTime reads the venue's clock (GET {perpsURL}/api/kline/time) and keeps the offset
// for every later request timestamp of this client. Returns venue minus local, in ms.
func (c *Client) SyncTime() (offset int64, err error) {
	err = c.useAlone(func(cp *C.perps_client) error {
		var off C.int64_t
		var cerr *C.perps_error
		if err := checkCode(C.perps_client_sync_time(cp, &off, &cerr), cerr); err != nil {
			return err
		}
		offset = int64(off)
		return nil
	})
	return offset, err
}

// PrepareSignin posts prepare-signin for chain ("bsc" or "solana") and the wallet address,
// verifies the venue's challenge and keeps it in the session. Returns the sign-in payload
// JSON: pass it unchanged to the wallet (WalletSign).
func (c *Client) PrepareSignin(s *Session, chain, address string) (out string, err error) {
	err = c.use(s, func(cp *C.perps_client, sp *C.perps_session) error {
		var a cArgs
		defer a.free()
		ch, addr := a.str("chain", chain), a.str("address", address)
		if a.err != nil {
			return a.err
		}
		var cerr *C.perps_error
		out, err = takeString(C.perps_prepare_signin(cp, sp, ch, addr, &cerr), cerr)
		return err
	})
	return out, err
}

// Login posts login with the session's pending challenge and the wallet's signature, and
// keeps the token. expiresSeconds <= 0 asks for the venue default. Returns the venue's
// login result JSON (it contains the token).
func (c *Client) Login(s *Session, signature string, expiresSeconds int64) (out string, err error) {
	err = c.use(s, func(cp *C.perps_client, sp *C.perps_session) error {
		var a cArgs
		defer a.free()
		sig := a.str("signature", signature)
		if a.err != nil {
			return a.err
		}
		var cerr *C.perps_error
		out, err = takeString(C.perps_login(cp, sp, sig, C.int64_t(expiresSeconds), &cerr), cerr)
		return err
	})
	return out, err
}

// Signin does all of sign-in with a wallet key held in-process (address, prepare-signin,
// challenge verification, wallet signature, login). Returns the login result JSON.
func (c *Client) Signin(s *Session, chain, walletKey string, expiresSeconds int64) (out string, err error) {
	return c.signin(s, chain, secretString(walletKey), expiresSeconds)
}

// SigninBytes is Signin with the wallet key as UTF-8 bytes, which it only reads: wipe them
// yourself after the call. Its C copy is overwritten before it returns, failure included.
func (c *Client) SigninBytes(s *Session, chain string, walletKey []byte, expiresSeconds int64) (out string, err error) {
	return c.signin(s, chain, secretBytes(walletKey), expiresSeconds)
}

func (c *Client) signin(s *Session, chain string, walletKey secretArg, expiresSeconds int64) (out string, err error) {
	err = c.use(s, func(cp *C.perps_client, sp *C.perps_session) error {
		var a cArgs
		defer a.free()
		ch, key := a.str("chain", chain), walletKey(&a, "walletKey")
		if a.err != nil {
			return a.err
		}
		var cerr *C.perps_error
		out, err = takeString(C.perps_signin(cp, sp, ch, key, C.int64_t(expiresSeconds), &cerr), cerr)
		return err
	})
	return out, err
}

// NewOrder validates the order JSON, serialises it once, signs those bytes and posts
// /api/new_order. The answer carries the order's cl_ord_id (generated when the order has
// none). Never retried: on an error with MayHaveReachedVenue, look the order up by the
// error's ClOrdID (QueryOrder) before sending again.
func (c *Client) NewOrder(s *Session, orderJSON string) (out string, err error) {
	err = c.use(s, func(cp *C.perps_client, sp *C.perps_session) error {
		var a cArgs
		defer a.free()
		order := a.str("orderJSON", orderJSON)
		if a.err != nil {
			return a.err
		}
		var cerr *C.perps_error
		out, err = takeString(C.perps_new_order(cp, sp, order, &cerr), cerr)
		return err
	})
	return out, err
}

// Request calls any other endpoint under perpsURL: method "GET", "POST", "PUT" or
// "DELETE", path starting with "/", body "" for none (a body is signed and sent byte for
// byte). Never retried, but a GET that found its kept-alive connection closed before any
// answer is sent once more (README "The keep-alive race"). Returns the venue's answer.
func (c *Client) Request(s *Session, method, path, body string) (out string, err error) {
	err = c.use(s, func(cp *C.perps_client, sp *C.perps_session) error {
		var a cArgs
		defer a.free()
		m, p, b := a.str("method", method), a.str("path", path), a.optStr("body", body)
		if a.err != nil {
			return a.err
		}
		var cerr *C.perps_error
		out, err = takeString(C.perps_request(cp, sp, m, p, b, &cerr), cerr)
		return err
	})
	return out, err
}

// ---------------------------------------------------------------------------------------
// The trading loop: one method per venue endpoint
// ---------------------------------------------------------------------------------------
//
// paramsJSON is a JSON object of the endpoint's parameters (see include/perps.h; checked
// before anything is sent: InvalidArgument names the parameter), "" for none. Each returns
// the venue's JSON answer and is never retried (but a GET query that found its kept-alive
// connection closed before any answer is sent once more: README "The keep-alive race"). An
// order already gone (or not visible yet) is an *Error with Code NotFound. The three public endpoints take a nil session.

// endpoint calls one endpoint export. s may be nil only when public (else it is refused
// here, as every other method refuses a nil session).
func (c *Client) endpoint(s *Session, paramsJSON string, fn C.perps_endpoint_fn, public bool) (out string, err error) {
	call := func(cp *C.perps_client, sp *C.perps_session) error {
		var a cArgs
		defer a.free()
		params := a.optStr("paramsJSON", paramsJSON)
		if a.err != nil {
			return a.err
		}
		var cerr *C.perps_error
		out, err = takeString(C.perps_call_endpoint(fn, cp, sp, params, &cerr), cerr)
		return err
	}
	if public && s == nil {
		err = c.useAlone(func(cp *C.perps_client) error { return call(cp, nil) })
	} else {
		err = c.use(s, call)
	}
	return out, err
}

// CancelOrder posts /api/cancel_order: {"order_id":<int64>} or {"cl_ord_id":"…"}. Success
// means the cancel was accepted; an order already gone is NotFound.
func (c *Client) CancelOrder(s *Session, paramsJSON string) (string, error) {
	return c.endpoint(s, paramsJSON, C.perps_endpoint_fn(C.perps_cancel_order), false)
}

// CancelOrders posts /api/cancel_orders: {"order_id_list":[…]} and/or {"cl_ord_id_list":[…]}.
func (c *Client) CancelOrders(s *Session, paramsJSON string) (string, error) {
	return c.endpoint(s, paramsJSON, C.perps_endpoint_fn(C.perps_cancel_orders), false)
}

// CancelAll cancels every open order paramsJSON selects ("symbol", "cl_ord_id_prefix"; "" for
// all), and the named "cl_ord_id_list" orders the venue may not list yet (a list alone: only
// those), then confirms each
// ended with query_order for up to "confirm_ms" (default 15000; 0: no confirmation). It
// returns the report {"complete","orders":[{"order_id","cl_ord_id","symbol","status",
// "confirmed"}],"cancel_requests","failed_cancel_requests","queries","listing_truncated"} (perps.h: perps_cancel_all).
func (c *Client) CancelAll(s *Session, paramsJSON string) (string, error) {
	return c.endpoint(s, paramsJSON, C.perps_endpoint_fn(C.perps_cancel_all), false)
}

// ChangeLeverage posts /api/change_leverage: {"symbol":"BTC-USD","leverage":<int>}.
func (c *Client) ChangeLeverage(s *Session, paramsJSON string) (string, error) {
	return c.endpoint(s, paramsJSON, C.perps_endpoint_fn(C.perps_change_leverage), false)
}

// ChangeMarginMode posts /api/change_margin_mode: {"symbol":…,"margin_mode":"cross"|"isolated"}.
func (c *Client) ChangeMarginMode(s *Session, paramsJSON string) (string, error) {
	return c.endpoint(s, paramsJSON, C.perps_endpoint_fn(C.perps_change_margin_mode), false)
}

// QueryOrder gets one order: {"order_id":<int64>} or {"cl_ord_id":"…"}; NotFound when the
// venue does not have it (gone, or not visible yet).
func (c *Client) QueryOrder(s *Session, paramsJSON string) (string, error) {
	return c.endpoint(s, paramsJSON, C.perps_endpoint_fn(C.perps_query_order), false)
}

// QueryOrders gets the order history (symbol, status, order_type, start, end, last_id, limit).
func (c *Client) QueryOrders(s *Session, paramsJSON string) (string, error) {
	return c.endpoint(s, paramsJSON, C.perps_endpoint_fn(C.perps_query_orders), false)
}

// QueryOpenOrders gets the resting orders (symbol, limit).
func (c *Client) QueryOpenOrders(s *Session, paramsJSON string) (string, error) {
	return c.endpoint(s, paramsJSON, C.perps_endpoint_fn(C.perps_query_open_orders), false)
}

// QueryTrades gets the account's fills (symbol, side, start, end, last_id, limit).
func (c *Client) QueryTrades(s *Session, paramsJSON string) (string, error) {
	return c.endpoint(s, paramsJSON, C.perps_endpoint_fn(C.perps_query_trades), false)
}

// QueryFundingHistory gets the account's funding payments (symbol, start, end, last_id,
// limit 1..500): the venue's JSON as sent, a bare array of rows newest first (live) or the
// {page_size, result, total} envelope; a row's qty is signed, negative = paid.
func (c *Client) QueryFundingHistory(s *Session, paramsJSON string) (string, error) {
	return c.endpoint(s, paramsJSON, C.perps_endpoint_fn(C.perps_query_funding_history), false)
}

// QueryPositions gets the positions (symbol optional); qty is signed, negative is short.
func (c *Client) QueryPositions(s *Session, paramsJSON string) (string, error) {
	return c.endpoint(s, paramsJSON, C.perps_endpoint_fn(C.perps_query_positions), false)
}

// QueryBalance gets the balance snapshot (no parameters: paramsJSON "").
func (c *Client) QueryBalance(s *Session, paramsJSON string) (string, error) {
	return c.endpoint(s, paramsJSON, C.perps_endpoint_fn(C.perps_query_balance), false)
}

// QueryPositionConfig gets a symbol's leverage and margin mode: {"symbol":"BTC-USD"}.
func (c *Client) QueryPositionConfig(s *Session, paramsJSON string) (string, error) {
	return c.endpoint(s, paramsJSON, C.perps_endpoint_fn(C.perps_query_position_config), false)
}

// QuerySymbolInfo gets the symbols' rules (public: s may be nil); without a symbol, all.
func (c *Client) QuerySymbolInfo(s *Session, paramsJSON string) (string, error) {
	return c.endpoint(s, paramsJSON, C.perps_endpoint_fn(C.perps_query_symbol_info), true)
}

// QuerySymbolPrice gets a symbol's prices (public: s may be nil): {"symbol":"BTC-USD"}.
func (c *Client) QuerySymbolPrice(s *Session, paramsJSON string) (string, error) {
	return c.endpoint(s, paramsJSON, C.perps_endpoint_fn(C.perps_query_symbol_price), true)
}

// QueryDepthBook gets a symbol's book (public: s may be nil): {"symbol":"BTC-USD"}; the
// levels come back sorted best first (bids high to low, asks low to high).
func (c *Client) QueryDepthBook(s *Session, paramsJSON string) (string, error) {
	return c.endpoint(s, paramsJSON, C.perps_endpoint_fn(C.perps_query_depth_book), true)
}
