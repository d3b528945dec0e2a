// Package perps is a thin cgo binding of libperps: wallet sign-in to a perpetual-futures
// venue, Ed25519 body signatures and orders, through the library's C ABI (include/perps.h).
//
//	client, err := perps.NewClient(baseURL, perpsURL, "")
//	session, err := perps.NewSession()
//	defer session.Close(); defer client.Close()
//	_, err = client.Signin(session, "bsc", walletKey, 3600)
//	answer, err := client.NewOrder(session, orderJSON) // carries its cl_ord_id
//	answer, err = client.QueryOpenOrders(session, `{"symbol":"BTC-USD"}`)
//
// # Errors
//
// A failing call returns an *Error (use errors.As) with the library's Code, Message,
// HTTPStatus, Body, MayHaveReachedVenue, and where they apply the order's ClOrdID, the
// XRequestID sent, RetryAfterMs and StreamRequestID. It is read from the perps_error object that the
// failing C call hands back through its own out-parameter, and freed, before the Go function
// returns. libperps keeps no thread-local "last error", so a goroutine that moves to another
// OS thread between two cgo calls loses nothing: runtime.LockOSThread is never needed.
//
// # Handles
//
// Client, Session and Stream own a C handle. Close frees it (Close is idempotent and waits for calls
// in flight on other goroutines); a finalizer frees a handle that was never closed, as a
// safety net only: close handles yourself (a Stream's finalizer closes it at once and frees
// it on a goroutine of its own, not on the runtime's finalizer goroutine). A method called on
// a closed (or nil) handle returns an *Error with Code InvalidArgument (a closed Stream:
// StreamClosed); it never crashes. Clients, sessions and streams are safe to use from many
// goroutines at once.
//
// # Streams
//
// Client.OpenStream and Client.OpenOrderStream open the venue's WebSockets as a *Stream: read
// events (JSON text) with Next(ctx), which honours ctx, place orders with NewOrder; Close from
// any goroutine wakes a blocked Next (see stream.go).
//
// # Strings
//
// Every string the library returns is copied into Go memory and freed with
// perps_string_free at once (which overwrites its bytes). Go strings passed in are copied
// into C memory for the call, then overwritten and freed; a string holding a NUL byte is
// refused (InvalidArgument) rather than silently cut short. Go strings themselves cannot be
// wiped: keep secrets (wallet keys, tokens) in them no longer than needed.
//
// JSON results (venue answers, the sign-in payload, session info) are returned as the
// library's exact text; unmarshal them into your own types.
//
// # Linking
//
// By default the package links the installed libperps through pkg-config (`#cgo
// pkg-config: perps`, cgo_installed.go): install the library first (`make install`, or
// unpack the release tarball; PKG_CONFIG_PATH for a non-standard prefix). With the build tag
// perps_intree (cgo_intree.go) it links target/release/libperps.so of this repository
// instead, with a run path to it: `make lib`, then `go test -tags perps_intree`.
package perps

/*
#include <stdlib.h>
#include <string.h>
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
	"bytes"
	"encoding/json"
	"fmt"
	"runtime"
	"strings"
	"sync"
	"unsafe"
)

// Header version of libperps this package was compiled against; Version() gives the
// loaded library's.
const (
	VersionMajor = C.PERPS_VERSION_MAJOR
	VersionMinor = C.PERPS_VERSION_MINOR
	VersionPatch = C.PERPS_VERSION_PATCH
)

// Code is a libperps result code. The numbers are stable and never reused.
type Code int

// The codes of include/perps.h (see the README's "Error codes").
const (
	OK                 Code = C.PERPS_OK
	InvalidArgument    Code = C.PERPS_INVALID_ARGUMENT
	InvalidKey         Code = C.PERPS_INVALID_KEY
	InvalidOrder       Code = C.PERPS_INVALID_ORDER
	VerificationFailed Code = C.PERPS_VERIFICATION_FAILED
	InvalidState       Code = C.PERPS_INVALID_STATE
	Transport          Code = C.PERPS_TRANSPORT
	Timeout            Code = C.PERPS_TIMEOUT
	HTTPStatus         Code = C.PERPS_HTTP_STATUS
	APIError           Code = C.PERPS_API_ERROR
	BadResponse        Code = C.PERPS_BAD_RESPONSE
	TokenExpired       Code = C.PERPS_TOKEN_EXPIRED
	RNG                Code = C.PERPS_RNG
	NotFound           Code = C.PERPS_NOT_FOUND     // HTTP 404 from an endpoint call: the order is gone (or not visible yet)
	RateLimited        Code = C.PERPS_RATE_LIMITED  // refused by the client's rate limiter; nothing was sent
	StreamClosed       Code = C.PERPS_STREAM_CLOSED // the stream was closed, or ended after its "failed" event
	StreamLimit        Code = C.PERPS_STREAM_LIMIT  // a new WebSocket would break the venue's connection limits; nothing sent
	Panic              Code = C.PERPS_PANIC
)

var codeNames = map[Code]string{
	OK: "PERPS_OK", InvalidArgument: "PERPS_INVALID_ARGUMENT", InvalidKey: "PERPS_INVALID_KEY",
	InvalidOrder: "PERPS_INVALID_ORDER", VerificationFailed: "PERPS_VERIFICATION_FAILED",
	InvalidState: "PERPS_INVALID_STATE", Transport: "PERPS_TRANSPORT", Timeout: "PERPS_TIMEOUT",
	HTTPStatus: "PERPS_HTTP_STATUS", APIError: "PERPS_API_ERROR", BadResponse: "PERPS_BAD_RESPONSE",
	TokenExpired: "PERPS_TOKEN_EXPIRED", RNG: "PERPS_RNG", NotFound: "PERPS_NOT_FOUND",
	RateLimited: "PERPS_RATE_LIMITED", StreamClosed: "PERPS_STREAM_CLOSED", StreamLimit: "PERPS_STREAM_LIMIT",
	Panic: "PERPS_PANIC",
}

// String is the C name of the code, e.g. "PERPS_HTTP_STATUS".
func (c Code) String() string {
	if name, ok := codeNames[c]; ok {
		return name
	}
	return fmt.Sprintf("PERPS_CODE_%d", int(c))
}

// Error is one libperps failure.
type Error struct {
	Code    Code
	Message string
	// HTTPStatus of the venue's answer, 0 when there was none.
	HTTPStatus int
	// Body is the venue's response body, "" when there was none.
	Body string
	// MayHaveReachedVenue: the venue may have received and acted on the request. For an
	// order, query the venue before sending it again (the library never retries).
	MayHaveReachedVenue bool
	// ClOrdID is the cl_ord_id of the order a failed NewOrder (Client or Stream) was placing
	// (yours, or the one the library generated): look it up with QueryOrder before sending
	// the order again. For a failed Stream.CancelOrder, the cl_ord_id its params named; for
	// a Request POST to /api/new_order, the one its body names. "" for other calls.
	ClOrdID string
	// XRequestID is the x-request-id header sent with the failed request (body-signed
	// requests), "" when nothing was sent. Not the session's request key id (RequestID),
	// nor the venue's request_id field.
	XRequestID string
	// RetryAfterMs is how long to wait before asking again (the Retry-After of a 429 or
	// 503, or the client's rate limiter for RateLimited), in milliseconds; -1 when unknown.
	RetryAfterMs int64
	// StreamRequestID is the envelope request_id of an order-stream request
	// (Stream.NewOrder, Stream.CancelOrder) whose frame may have been partly written when the
	// write failed: the id its order_response events and the "unanswered" list of the next
	// "disconnected" status event name. "" for every other error. Not the x-request-id.
	StreamRequestID string
}

func (e *Error) Error() string {
	if e.HTTPStatus != 0 {
		return fmt.Sprintf("perps: %s (HTTP %d): %s", e.Code, e.HTTPStatus, e.Message)
	}
	return fmt.Sprintf("perps: %s: %s", e.Code, e.Message)
}

// takeError turns the perps_error a failing call stored in its out-parameter into an
// *Error and frees it.
func takeError(e *C.perps_error) error {
	if e == nil {
		return newError(Panic, "libperps reported a failure without an error object")
	}
	defer C.perps_error_free(e)
	return &Error{
		Code:                Code(C.perps_error_code(e)),
		Message:             C.GoString(C.perps_error_message(e)),
		HTTPStatus:          int(C.perps_error_http_status(e)),
		Body:                optString(C.perps_error_body(e)),
		MayHaveReachedVenue: bool(C.perps_error_may_have_reached_venue(e)),
		ClOrdID:             optString(C.perps_error_cl_ord_id(e)),
		XRequestID:          optString(C.perps_error_request_id(e)),
		RetryAfterMs:        int64(C.perps_error_retry_after_ms(e)),
		StreamRequestID:     optString(C.perps_error_stream_request_id(e)),
	}
}

// optString copies a borrowed C string that may be NULL ("").
func optString(p *C.char) string {
	if p == nil {
		return ""
	}
	return C.GoString(p)
}

// newError is an error made on the Go side (no C error object: nothing was sent).
func newError(code Code, message string) *Error {
	return &Error{Code: code, Message: message, RetryAfterMs: -1}
}

func argumentError(format string, args ...interface{}) error {
	return newError(InvalidArgument, fmt.Sprintf(format, args...))
}

// takeString copies an owned char* result into Go and frees it; NULL means failure.
func takeString(p *C.char, cerr *C.perps_error) (string, error) {
	if p == nil {
		return "", takeError(cerr)
	}
	defer C.perps_string_free(p)
	return C.GoString(p), nil
}

func checkCode(code C.enum_perps_code, cerr *C.perps_error) error {
	if Code(code) != OK {
		return takeError(cerr)
	}
	return nil
}

// cArgs holds the C copies of one call's string arguments.
type cArgs struct {
	ptrs []*C.char
	err  error
}

// str copies s into C memory for the call (freed by free). A NUL byte inside s is refused.
func (a *cArgs) str(name, s string) *C.char {
	if a.err != nil {
		return nil
	}
	if strings.IndexByte(s, 0) >= 0 {
		a.err = argumentError("%s contains a NUL byte", name)
		return nil
	}
	p := C.CString(s)
	a.ptrs = append(a.ptrs, p)
	return p
}

// optStr is str, with "" passed as NULL.
func (a *cArgs) optStr(name, s string) *C.char {
	if s == "" {
		return nil
	}
	return a.str(name, s)
}

// free overwrites (arguments may be keys or tokens) and frees the copies.
func (a *cArgs) free() {
	for _, p := range a.ptrs {
		C.memset(unsafe.Pointer(p), 0, C.strlen(p))
		C.free(unsafe.Pointer(p))
	}
	a.ptrs = nil
}

// handle is the lifetime of one C handle: calls hold the read lock, Close the write lock,
// so Close waits for calls in flight and later calls see the handle closed.
type handle struct {
	mu  sync.RWMutex
	ptr unsafe.Pointer
}

func (h *handle) acquire(kind string) (unsafe.Pointer, error) {
	h.mu.RLock()
	if h.ptr == nil {
		h.mu.RUnlock()
		return nil, argumentError("the %s is closed", kind)
	}
	return h.ptr, nil
}

func (h *handle) release() { h.mu.RUnlock() }

// take clears the pointer and returns it (nil when already closed).
func (h *handle) take() unsafe.Pointer {
	h.mu.Lock()
	defer h.mu.Unlock()
	p := h.ptr
	h.ptr = nil
	return p
}

// close frees the pointer with free after the calls in flight return, and drops the
// finalizer of owner (the Client, Session or Stream holding h). Idempotent.
func (h *handle) close(owner interface{}, free func(unsafe.Pointer)) {
	if p := h.take(); p != nil {
		runtime.SetFinalizer(owner, nil)
		free(p)
	}
}

// finalize frees the pointer of a handle that was never closed. It runs only from the
// owner's finalizer, when the owner is unreachable, so no call can be using it.
func (h *handle) finalize(free func(unsafe.Pointer)) {
	if h.ptr != nil {
		free(h.ptr)
		h.ptr = nil
	}
}

// Version is the loaded library's version, "MAJOR.MINOR.PATCH".
func Version() string { return C.GoString(C.perps_version()) }

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
	err = c.use(s, func(cp *C.perps_client, sp *C.perps_session) error {
		var a cArgs
		defer a.free()
		ch, key := a.str("chain", chain), a.str("walletKey", walletKey)
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
// byte). Never retried. Returns the venue's answer.
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
// the venue's JSON answer and is never retried. An order already gone (or not visible yet)
// is an *Error with Code NotFound. The three public endpoints take a nil session.

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

// ---------------------------------------------------------------------------------------
// Session
// ---------------------------------------------------------------------------------------

// Session is one identity: the Ed25519 request-signing key, the chain and wallet address,
// the pending challenge and the access token. Safe to use from many goroutines at once.
type Session struct{ h handle }

func newSession(p *C.perps_session, cerr *C.perps_error) (*Session, error) {
	if p == nil {
		return nil, takeError(cerr)
	}
	s := &Session{h: handle{ptr: unsafe.Pointer(p)}}
	runtime.SetFinalizer(s, (*Session).finalize)
	return s, nil
}

// NewSession makes a session with a fresh temporary Ed25519 key from the OS RNG.
func NewSession() (*Session, error) {
	var cerr *C.perps_error
	return newSession(C.perps_session_new(&cerr), cerr)
}

// SessionFromAPIKey makes a session for a web-site API credential (token and Ed25519
// private key: base58 seed or keypair, or hex); it can place orders at once.
func SessionFromAPIKey(apiToken, ed25519PrivateKey string) (*Session, error) {
	var a cArgs
	defer a.free()
	token, key := a.str("apiToken", apiToken), a.str("ed25519PrivateKey", ed25519PrivateKey)
	if a.err != nil {
		return nil, a.err
	}
	var cerr *C.perps_error
	return newSession(C.perps_session_from_api_key(token, key, &cerr), cerr)
}

func freeSession(p unsafe.Pointer) { C.perps_session_free((*C.perps_session)(p)) }

// finalize runs only when s is unreachable, so no call can be using it.
func (s *Session) finalize() { s.h.finalize(freeSession) }

// Close frees the session (zeroizing its key and token) after the calls in flight return.
// Idempotent; always nil.
func (s *Session) Close() error {
	if s != nil {
		s.h.close(s, freeSession)
	}
	return nil
}

// use runs f with the session's C handle held open.
func (s *Session) use(f func(*C.perps_session) error) error {
	if s == nil {
		return argumentError("the session is nil")
	}
	sp, err := s.h.acquire("session")
	if err != nil {
		return err
	}
	defer s.h.release()
	return f((*C.perps_session)(sp))
}

func (s *Session) stringCall(f func(*C.perps_session, **C.perps_error) *C.char) (out string, err error) {
	err = s.use(func(sp *C.perps_session) error {
		var cerr *C.perps_error
		out, err = takeString(f(sp, &cerr), cerr)
		return err
	})
	return out, err
}

// RequestID is the session's request key id: base58 of its Ed25519 public key, sent as
// requestId at sign-in. Not the x-request-id (a fresh UUID per signed request,
// BodySignature.RequestID) nor the venue's request_id (a field of its answers).
func (s *Session) RequestID() (string, error) {
	return s.stringCall(func(sp *C.perps_session, e **C.perps_error) *C.char { return C.perps_session_request_id(sp, e) })
}

// Token is the session's access token (a secret). InvalidState when it has none.
func (s *Session) Token() (string, error) {
	return s.stringCall(func(sp *C.perps_session, e **C.perps_error) *C.char { return C.perps_session_token(sp, e) })
}

// Info is the session's state as JSON, without secrets (request_id, has_token, chain,
// address, alias, token_expires_at, pending_signin, challenge_expires_at).
func (s *Session) Info() (string, error) {
	return s.stringCall(func(sp *C.perps_session, e **C.perps_error) *C.char { return C.perps_session_info(sp, e) })
}

// Logout forgets the token and any pending challenge; the key is kept.
func (s *Session) Logout() error {
	return s.use(func(sp *C.perps_session) error {
		var cerr *C.perps_error
		return checkCode(C.perps_session_logout(sp, &cerr), cerr)
	})
}

func (s *Session) setHeader(name string, value *string, set func(*C.perps_session, *C.char, **C.perps_error) C.enum_perps_code) error {
	return s.use(func(sp *C.perps_session) error {
		var a cArgs
		defer a.free()
		var v *C.char
		if value != nil {
			v = a.str(name, *value)
		}
		if a.err != nil {
			return a.err
		}
		var cerr *C.perps_error
		return checkCode(set(sp, v, &cerr), cerr)
	})
}

func setSessionID(sp *C.perps_session, v *C.char, e **C.perps_error) C.enum_perps_code {
	return C.perps_session_set_session_id(sp, v, e)
}

func setImpersonate(sp *C.perps_session, v *C.char, e **C.perps_error) C.enum_perps_code {
	return C.perps_session_set_impersonate(sp, v, e)
}

// SetSessionID sets the x-session-id header sent with the session's order entry (new_order,
// cancel_order, cancel_orders); reads and other calls go without it.
func (s *Session) SetSessionID(value string) error {
	return s.setHeader("value", &value, setSessionID)
}

// ClearSessionID stops sending x-session-id.
func (s *Session) ClearSessionID() error {
	return s.setHeader("value", nil, setSessionID)
}

// SetImpersonate sets the x-impersonate header (a vault id the account owns).
func (s *Session) SetImpersonate(value string) error {
	return s.setHeader("value", &value, setImpersonate)
}

// ClearImpersonate stops sending x-impersonate.
func (s *Session) ClearImpersonate() error {
	return s.setHeader("value", nil, setImpersonate)
}

func headersFromJSON(text string, err error) (map[string]string, error) {
	if err != nil {
		return nil, err
	}
	var headers map[string]string
	if err := json.Unmarshal([]byte(text), &headers); err != nil {
		return nil, newError(BadResponse, "signature headers are not a JSON object of strings: "+err.Error())
	}
	return headers, nil
}

// SignBody signs body (byte for byte) with a fresh UUID v4 and the local clock, and
// returns the four headers: x-request-sign-version, x-request-id, x-request-timestamp,
// x-request-signature. No network.
func (s *Session) SignBody(body string) (map[string]string, error) {
	var a cArgs
	defer a.free()
	b := a.str("body", body)
	if a.err != nil {
		return nil, a.err
	}
	return headersFromJSON(s.stringCall(func(sp *C.perps_session, e **C.perps_error) *C.char {
		return C.perps_sign_body(sp, b, e)
	}))
}

// SignBodyAt is SignBody with a caller-chosen x-request-id (a hyphenated UUID) and
// timestamp (ms since the Unix epoch, >= 0): for test vectors and re-checking a logged
// request.
func (s *Session) SignBodyAt(body, requestID string, timestampMs int64) (map[string]string, error) {
	var a cArgs
	defer a.free()
	b, id := a.str("body", body), a.str("requestID", requestID)
	if a.err != nil {
		return nil, a.err
	}
	return headersFromJSON(s.stringCall(func(sp *C.perps_session, e **C.perps_error) *C.char {
		return C.perps_sign_body_at(sp, b, id, C.int64_t(timestampMs), e)
	}))
}

// BodySignature holds the four header values of a signed body in fixed-size fields, as
// the C struct perps_body_signature does. SignBodyInto fills it in place: reuse one value
// and signing allocates nothing.
type BodySignature struct {
	raw C.perps_body_signature
}

func field(p *C.char, n int) string {
	b := unsafe.Slice((*byte)(unsafe.Pointer(p)), n)
	if i := bytes.IndexByte(b, 0); i >= 0 {
		b = b[:i]
	}
	return string(b)
}

// Version is x-request-sign-version ("v1").
func (b *BodySignature) Version() string { return field(&b.raw.version[0], C.PERPS_SIGN_VERSION_SIZE) }

// RequestID is the x-request-id (a fresh UUID v4 per signed request; not the session's
// request key id).
func (b *BodySignature) RequestID() string {
	return field(&b.raw.request_id[0], C.PERPS_REQUEST_ID_SIZE)
}

// Timestamp is x-request-timestamp (ms since the Unix epoch, decimal).
func (b *BodySignature) Timestamp() string { return field(&b.raw.timestamp[0], C.PERPS_TIMESTAMP_SIZE) }

// Signature is x-request-signature (standard padded base64 of 64 bytes).
func (b *BodySignature) Signature() string { return field(&b.raw.signature[0], C.PERPS_SIGNATURE_SIZE) }

// Headers returns the four headers by name.
func (b *BodySignature) Headers() map[string]string {
	return map[string]string{
		"x-request-sign-version": b.Version(),
		"x-request-id":           b.RequestID(),
		"x-request-timestamp":    b.Timestamp(),
		"x-request-signature":    b.Signature(),
	}
}

// SignBodyInto is the hot path: it signs body (UTF-8) with a fresh UUID v4 and the local
// clock into *out without copying the body or allocating. out is written only on success.
func (s *Session) SignBodyInto(body []byte, out *BodySignature) error {
	if out == nil {
		return argumentError("out is nil")
	}
	return s.use(func(sp *C.perps_session) error {
		var p *C.uint8_t
		if len(body) > 0 {
			p = (*C.uint8_t)(unsafe.Pointer(&body[0]))
		}
		code := Code(C.perps_sign_body_into(sp, p, C.size_t(len(body)), &out.raw))
		if code != OK {
			return newError(code, "perps_sign_body_into failed ("+code.String()+")")
		}
		return nil
	})
}

// ---------------------------------------------------------------------------------------
// Functions without a handle
// ---------------------------------------------------------------------------------------

// WalletAddress is the address that privateKey controls on chain ("bsc": EIP-55;
// "solana": base58).
func WalletAddress(chain, privateKey string) (string, error) {
	var a cArgs
	defer a.free()
	ch, key := a.str("chain", chain), a.str("privateKey", privateKey)
	if a.err != nil {
		return "", a.err
	}
	var cerr *C.perps_error
	return takeString(C.perps_wallet_address(ch, key, &cerr), cerr)
}

// WalletSign is the login signature for a sign-in payload (PrepareSignin's result).
func WalletSign(chain, privateKey, payloadJSON string) (string, error) {
	var a cArgs
	defer a.free()
	ch, key, payload := a.str("chain", chain), a.str("privateKey", privateKey), a.str("payloadJSON", payloadJSON)
	if a.err != nil {
		return "", a.err
	}
	var cerr *C.perps_error
	return takeString(C.perps_wallet_sign(ch, key, payload, &cerr), cerr)
}

// WrapSolanaSignature wraps a raw 64-byte Ed25519 signature of the payload's message,
// made elsewhere (e.g. a hardware wallet) by the Solana wallet address, into the login
// signature format; the signature is verified first.
func WrapSolanaSignature(payloadJSON, address string, signature []byte) (string, error) {
	var a cArgs
	defer a.free()
	payload, addr := a.str("payloadJSON", payloadJSON), a.str("address", address)
	if a.err != nil {
		return "", a.err
	}
	var sig *C.uint8_t
	if len(signature) > 0 {
		sig = (*C.uint8_t)(unsafe.Pointer(&signature[0]))
	}
	var cerr *C.perps_error
	return takeString(C.perps_wallet_wrap_solana_signature(payload, addr, sig, C.size_t(len(signature)), &cerr), cerr)
}

// ChallengeVerify checks a sign-in challenge without the network: signedData against the
// venue's JWK set certsJSON, and its claims against requestID (the session's request key
// id), chain and address at
// nowUnixSecs (0 = the system clock). Returns the decoded payload JSON.
func ChallengeVerify(signedData, certsJSON, requestID, chain, address string, nowUnixSecs int64) (string, error) {
	var a cArgs
	defer a.free()
	sd, certs, id := a.str("signedData", signedData), a.str("certsJSON", certsJSON), a.str("requestID", requestID)
	ch, addr := a.str("chain", chain), a.str("address", address)
	if a.err != nil {
		return "", a.err
	}
	var cerr *C.perps_error
	return takeString(C.perps_challenge_verify(sd, certs, id, ch, addr, C.int64_t(nowUnixSecs), &cerr), cerr)
}

// OrderSerialize validates an order and returns the exact body NewOrder would sign and send.
func OrderSerialize(orderJSON string) (string, error) {
	var a cArgs
	defer a.free()
	order := a.str("orderJSON", orderJSON)
	if a.err != nil {
		return "", a.err
	}
	var cerr *C.perps_error
	return takeString(C.perps_order_serialize(order, &cerr), cerr)
}
