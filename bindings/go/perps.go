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
// wiped: keep secrets (wallet keys, tokens) in them no longer than needed, or pass them as
// []byte to the Bytes variants (WalletAddressBytes, WalletSignBytes, SessionFromAPIKeyBytes,
// Client.SigninBytes), which only read the slice: wipe it yourself after the call. Their C
// copies are overwritten and freed as the string forms' are.
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

*/
import "C"

import (
	"bytes"
	"fmt"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
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
	StreamClosed       Code = C.PERPS_STREAM_CLOSED // the stream was closed, or ended for good (next: after its "failed" event; a request: as soon as it is ending)
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
	// A Retry-After too long to count in milliseconds gives math.MaxInt64: cap it before
	// time.Duration(RetryAfterMs) * time.Millisecond, which would wrap to a negative wait.
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
	args []cArg
	err  error
}

// cArg is one C copy: n bytes, then a NUL. secret is the argument's name when it holds a
// secret (a key, a token), "" otherwise.
type cArg struct {
	p      *C.char
	n      int
	secret string
}

// secretCopyHook is for tests only (export_test.go sets it; outside a test it stays empty,
// and costs a load and a comparison per secret argument). Every wipe is of C memory no result
// shows, so the hook is shown each C copy of a secret: "made" once the secret is copied in,
// "freeing" once free overwrote it, just before it is freed; c is the copy, its NUL included
// (C memory: read it during the call only). Atomic because tests call from many goroutines.
var secretCopyHook atomic.Value // func(event, name string, c []byte)

func tellSecretCopy(event string, arg cArg) {
	if hook, _ := secretCopyHook.Load().(func(string, string, []byte)); hook != nil {
		hook(event, arg.secret, unsafe.Slice((*byte)(unsafe.Pointer(arg.p)), arg.n+1))
	}
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
	p := C.CString(s) // straight from s into C memory: no Go copy
	a.args = append(a.args, cArg{p: p, n: len(s)})
	return p
}

// secret is str for a secret argument given as a string (which its caller cannot wipe; its C
// copy is overwritten by free, as every copy is).
func (a *cArgs) secret(name, s string) *C.char {
	p := a.str(name, s)
	if p != nil {
		a.args[len(a.args)-1].secret = name
		tellSecretCopy("made", a.args[len(a.args)-1])
	}
	return p
}

// secretArg is a secret argument in either of its forms (a string, or UTF-8 bytes its caller
// can wipe): copied into C memory by cArgs.secret or cArgs.bytes, under the argument's name.
// The string and []byte variants of a call differ only in it.
type secretArg func(a *cArgs, name string) *C.char

func secretString(s string) secretArg {
	return func(a *cArgs, name string) *C.char { return a.secret(name, s) }
}

func secretBytes(b []byte) secretArg {
	return func(a *cArgs, name string) *C.char { return a.bytes(name, b) }
}

// bytes copies b (a secret as UTF-8, which the library checks) into C memory for the call,
// with a NUL after it (freed, overwritten first, by free). b is only read, and copied
// nowhere else: no string(b), no Go buffer. A NUL byte inside b is refused, as str refuses
// one in a string.
func (a *cArgs) bytes(name string, b []byte) *C.char {
	if a.err != nil {
		return nil
	}
	if bytes.IndexByte(b, 0) >= 0 {
		a.err = argumentError("%s contains a NUL byte", name)
		return nil
	}
	p := (*C.char)(C.malloc(C.size_t(len(b) + 1)))
	if p == nil {
		panic("perps: out of C memory")
	}
	arg := cArg{p: p, n: len(b), secret: name}
	a.args = append(a.args, arg) // before the copy: from here on free overwrites it
	c := unsafe.Slice((*byte)(unsafe.Pointer(p)), len(b)+1)
	copy(c, b)
	c[len(b)] = 0
	tellSecretCopy("made", arg)
	return p
}

// optStr is str, with "" passed as NULL.
func (a *cArgs) optStr(name, s string) *C.char {
	if s == "" {
		return nil
	}
	return a.str(name, s)
}

// free overwrites every copy (arguments may be keys or tokens), its NUL included, then frees
// it: the length copied, not strlen, so nothing in the copy can stop the wipe short.
func (a *cArgs) free() {
	for _, arg := range a.args {
		C.memset(unsafe.Pointer(arg.p), 0, C.size_t(arg.n+1))
		if arg.secret != "" {
			tellSecretCopy("freeing", arg)
		}
		C.free(unsafe.Pointer(arg.p))
	}
	a.args = nil
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
