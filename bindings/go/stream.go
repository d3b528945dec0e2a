package perps

// Streams: the venue's two WebSockets (README "Streams"), read by polling the library.

/*
#include <perps.h> // angle brackets: found only through -I (in-tree) or pkg-config, never a stray copy beside cgo's temporary files
*/
import "C"

import (
	"context"
	"runtime"
	"sync/atomic"
	"time"
	"unsafe"
)

// nextSlice is the longest one perps_stream_next call blocks while Next waits on a context
// that can be cancelled: the C call cannot be interrupted, so Next polls ctx.Done() between
// calls. An event is returned as soon as it arrives; only noticing a cancellation may take
// up to this long.
const nextSlice = 50 * time.Millisecond

// Stream is one of the venue's WebSockets: the market + account stream (OpenStream) or the
// order stream (OpenOrderStream), served by a background I/O thread of the library that
// never runs Go code.
//
// Next, NewOrder, CancelOrder and Close may be called from different goroutines at once.
// Close wakes a Next blocked in another goroutine at once (it returns StreamClosed), waits
// for the calls in flight, then frees the stream; every later call returns an *Error with
// Code StreamClosed. The stream keeps what it needs of its Client and Session: they may be
// closed first. A stream never closed is closed by its finalizer and freed on a goroutine of
// its own, as a safety net only.
type Stream struct{ h handle }

func newStream(p *C.perps_stream, cerr *C.perps_error) (*Stream, error) {
	if p == nil {
		return nil, takeError(cerr)
	}
	st := &Stream{h: handle{ptr: unsafe.Pointer(p)}}
	runtime.SetFinalizer(st, (*Stream).finalize)
	return st, nil
}

// OpenStream opens the market + account stream (ws-stream; client option stream_url).
// subscriptionsJSON is a JSON array of {"channel":C,"symbol":S} with C one of price,
// depth_book, public_trade and, with a session, {"channel":C} with C one of order,
// position, balance, trade. s may be nil for public channels only. Returns once connected,
// authenticated and subscribed; the first event is the "connected" status.
func (c *Client) OpenStream(s *Session, subscriptionsJSON string) (st *Stream, err error) {
	open := func(cp *C.perps_client, sp *C.perps_session) error {
		var a cArgs
		defer a.free()
		subs := a.str("subscriptionsJSON", subscriptionsJSON)
		if a.err != nil {
			return a.err
		}
		var cerr *C.perps_error
		st, err = newStream(C.perps_stream_open(cp, sp, subs, &cerr), cerr)
		return err
	}
	if s == nil {
		err = c.useAlone(func(cp *C.perps_client) error { return open(cp, nil) })
	} else {
		err = c.use(s, open)
	}
	return st, err
}

// OpenOrderStream opens the order stream (ws-api; client option order_stream_url) and logs
// in with the session's token. Its session_id is the session's x-session-id when one is set
// (SetSessionID before opening: REST orders sent with it then report here).
func (c *Client) OpenOrderStream(s *Session) (st *Stream, err error) {
	err = c.use(s, func(cp *C.perps_client, sp *C.perps_session) error {
		var cerr *C.perps_error
		st, err = newStream(C.perps_order_stream_open(cp, sp, &cerr), cerr)
		return err
	})
	return st, err
}

func freeStream(p unsafe.Pointer) { C.perps_stream_free((*C.perps_stream)(p)) }

// collectedHook is for tests only (export_test.go sets it; outside a test it stays empty, and
// costs a load and a comparison per collected stream). The finalizer's whole point is where
// each step runs, which no result shows, so the steps tell it: "closed" on the finalizer
// goroutine once perps_stream_close returned, then "freeing" and "freed" around
// perps_stream_free on the goroutine that frees the stream. A test can hold the free by
// blocking in "freeing", as a slow I/O thread would. Atomic because finalizers and the free
// run on goroutines of their own.
var collectedHook atomic.Value // func(event string)

func tellCollected(event string) {
	if hook, _ := collectedHook.Load().(func(string)); hook != nil {
		hook(event)
	}
}

// finalize runs only when st is unreachable, so no call can be using it. It runs on the
// runtime's one finalizer goroutine, which perps_stream_free could hold for up to about 2 s
// (waiting for the I/O thread) and every other finalizer with it: the stream is closed at
// once (its I/O thread told to end), and freed on a goroutine of its own.
func (st *Stream) finalize() {
	st.h.finalize(func(p unsafe.Pointer) {
		C.perps_stream_close((*C.perps_stream)(p))
		tellCollected("closed")
		go func() {
			tellCollected("freeing")
			freeStream(p)
			tellCollected("freed")
		}()
	})
}

// use runs f with the stream's C handle held open; StreamClosed once closed.
func (st *Stream) use(f func(*C.perps_stream) error) error {
	if st == nil {
		return argumentError("the stream is nil")
	}
	p, err := st.h.acquire("stream")
	if err != nil {
		return newError(StreamClosed, "the stream is closed")
	}
	defer st.h.release()
	return f((*C.perps_stream)(p))
}

// next is one perps_stream_next: the event, or ok false when timeoutMs passed first.
func next(sp *C.perps_stream, timeoutMs int64) (event string, ok bool, err error) {
	var cerr *C.perps_error
	p := C.perps_stream_next(sp, C.int64_t(timeoutMs), &cerr)
	if p == nil && cerr == nil {
		return "", false, nil
	}
	event, err = takeString(p, cerr)
	return event, err == nil, err
}

// Next returns the next event, a JSON object (see the README's "Streams": venue pushes,
// order_response frames, status changes), waiting until one comes, ctx is done, or the
// stream is closed. On cancellation or deadline it returns ctx.Err(); nothing is lost: the
// next call gets the next event. After Close (also one that wakes this call), or once a
// stream that ended (its "failed" status event) has given all its events: an *Error with
// Code StreamClosed. With a ctx that can never be done (context.Background()), the call
// blocks in the library until an event comes or Close; otherwise it waits in slices of at
// most 50 ms, checking ctx between them (the C call cannot be interrupted; no goroutine is
// started).
func (st *Stream) Next(ctx context.Context) (event string, err error) {
	err = st.use(func(sp *C.perps_stream) error {
		done := ctx.Done()
		if done == nil {
			var ok bool
			for !ok && err == nil {
				event, ok, err = next(sp, -1)
			}
			return err
		}
		for {
			select {
			case <-done:
				return ctx.Err()
			default:
			}
			wait := nextSlice
			if deadline, has := ctx.Deadline(); has {
				if left := time.Until(deadline); left < wait {
					wait = left
				}
			}
			if wait < 0 {
				wait = 0
			}
			// Whole milliseconds, rounded up: a deadline 0.4 ms away still waits for it.
			var ok bool
			if event, ok, err = next(sp, int64((wait+time.Millisecond-1)/time.Millisecond)); ok || err != nil {
				return err
			}
		}
	})
	return event, err
}

// NewOrder (order stream only) validates the order as Client.NewOrder does (with the client
// option symbol_rules, against the symbol rules too), generates a cl_ord_id when it has none,
// signs the exact params text and writes the order:new frame.
// Returns {"request_id":…,"cl_ord_id":…} as soon as the frame is written, without waiting
// for the venue: the replies come as order_response events with that request_id (the
// "accepted" ack with "final":false, then the outcome with "final":true). Never retried:
// on any *Error with MayHaveReachedVenue (Transport, Timeout when the venue does not read the
// frame within read_timeout_ms, StreamClosed when Close cut a begun write short), look the
// order up by its ClOrdID first.
func (st *Stream) NewOrder(orderJSON string) (string, error) {
	return st.send("orderJSON", orderJSON, func(sp *C.perps_stream, order *C.char, cerr **C.perps_error) *C.char {
		return C.perps_stream_new_order(sp, order, cerr)
	})
}

// CancelOrder (order stream only) writes a signed order:cancel frame for {"order_id":N}
// and/or {"cl_ord_id":"…"}. Returns {"request_id":…,…} once written; replies as for NewOrder.
func (st *Stream) CancelOrder(paramsJSON string) (string, error) {
	return st.send("paramsJSON", paramsJSON, func(sp *C.perps_stream, params *C.char, cerr **C.perps_error) *C.char {
		return C.perps_stream_cancel_order(sp, params, cerr)
	})
}

// send passes one JSON text argument (named name in errors) to an order stream export and
// returns the C string it answers: what NewOrder and CancelOrder share.
func (st *Stream) send(name, text string, export func(*C.perps_stream, *C.char, **C.perps_error) *C.char) (out string, err error) {
	err = st.use(func(sp *C.perps_stream) error {
		var a cArgs
		defer a.free()
		arg := a.str(name, text)
		if a.err != nil {
			return a.err
		}
		var cerr *C.perps_error
		out, err = takeString(export(sp, arg, &cerr), cerr)
		return err
	})
	return out, err
}

// Close closes the stream (from any goroutine): a Next blocked in another goroutine returns
// StreamClosed at once; then Close waits for the calls in flight and frees the stream (the
// library waits at most about 2 s for its I/O thread). Idempotent; always nil.
func (st *Stream) Close() error {
	if st == nil {
		return nil
	}
	// Wake the calls blocked in the library first: they hold the handle's read lock, which
	// freeing waits for. perps_stream_close runs under the read lock itself, so the pointer
	// stays valid while it runs, and may run twice (racing Closes): closing twice is harmless.
	if p, err := st.h.acquire("stream"); err == nil {
		C.perps_stream_close((*C.perps_stream)(p))
		st.h.release()
	}
	st.h.close(st, freeStream)
	return nil
}
