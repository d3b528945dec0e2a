package perps_test

// Streams through the Go binding against the sandbox venue's two WebSockets: an order placed
// and cancelled over the order stream, with both reply frames of each (the "accepted" ack,
// final false, then the outcome) and the account stream's order events, checked against the
// venue's REST view; a public depth_book subscription with its levels sorted by exact decimal
// value (the sandbox shuffles them); Next honouring ctx cancellation and deadlines without
// losing events or leaving goroutines; Close from another goroutine waking a blocked Next. A
// real partial write: orders written to an order stream the venue has stalled until one no
// longer fits the socket, whose error names the request by its envelope request_id
// (Error.StreamRequestID), the id the "disconnected" event's "unanswered" list names; errors
// of requests refused unsent have none.

import (
	"context"
	"encoding/json"
	"errors"
	"math/big"
	"net/http"
	"runtime"
	"strings"
	"testing"
	"time"

	perps "libperps/bindings/go"
)

// nextWhere returns the first event (decoded) for which accept holds, within 5 s; events
// before it are skipped.
func nextWhere(t *testing.T, st *perps.Stream, accept func(map[string]interface{}) bool) map[string]interface{} {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	var seen []string
	for {
		text, err := st.Next(ctx)
		if errors.Is(err, context.DeadlineExceeded) {
			t.Fatalf("no such event within 5 s; saw %v", seen)
		}
		if err != nil {
			t.Fatal(err)
		}
		if event := object(t, text); accept(event) {
			return event
		}
		seen = append(seen, text)
	}
}

func isStatus(state string) func(map[string]interface{}) bool {
	return func(e map[string]interface{}) bool { return e["channel"] == "status" && e["state"] == state }
}

func responseTo(requestID string, final bool) func(map[string]interface{}) bool {
	return func(e map[string]interface{}) bool {
		return e["channel"] == "order_response" && e["request_id"] == requestID && e["final"] == final
	}
}

func accountOrder(clOrdID, status string) func(map[string]interface{}) bool {
	return func(e map[string]interface{}) bool {
		data, _ := e["data"].(map[string]interface{})
		return e["channel"] == "order" && data["cl_ord_id"] == clOrdID && data["status"] == status
	}
}

func TestStreamOrderAndAccountEvent(t *testing.T) {
	ok := okOf(t)
	_, client, session := signedIn(t)
	bid := farBid(t, client)
	account, err := client.OpenStream(session, `[{"channel":"order"}]`)
	if err != nil {
		t.Fatal(err)
	}
	defer account.Close()
	orders, err := client.OpenOrderStream(session)
	if err != nil {
		t.Fatal(err)
	}
	defer orders.Close()
	if e := nextWhere(t, account, isStatus("connected")); e["stream"] != "market" {
		t.Fatalf("account stream connected: %v", e)
	}
	if e := nextWhere(t, orders, isStatus("connected")); e["stream"] != "order" {
		t.Fatalf("order stream connected: %v", e)
	}

	// The call returns once the frame is written; the venue's two frames follow.
	sent := object(t, ok(orders.NewOrder(limitBuy(bid, "0.01", ""))))
	requestID, _ := sent["request_id"].(string)
	cl, _ := sent["cl_ord_id"].(string)
	if requestID == "" || len(cl) < 26 {
		t.Fatalf("new_order over the stream: %v", sent)
	}
	ack := nextWhere(t, orders, responseTo(requestID, false))
	if ack["message"] != "accepted" || ack["code"] != json.Number("0") || ack["matched"] != true {
		t.Fatalf("ack %v", ack)
	}
	outcome := nextWhere(t, orders, responseTo(requestID, true))
	if outcome["message"] != "success" || outcome["cl_ord_id"] != cl {
		t.Fatalf("outcome %v", outcome)
	}
	if int64Of(t, outcome["received_ns"]) < int64Of(t, ack["received_ns"]) {
		t.Fatalf("received_ns: ack %v, outcome %v", ack["received_ns"], outcome["received_ns"])
	}

	event := nextWhere(t, account, accountOrder(cl, "open"))
	data := event["data"].(map[string]interface{})
	if int64Of(t, event["seq"]) < 1 || decimal(t, data["price"]).Cmp(decimal(t, bid)) != 0 ||
		decimal(t, data["qty"]).Cmp(big.NewRat(1, 100)) != 0 {
		t.Fatalf("account order event %v", event)
	}
	// The venue's REST view agrees: the order it accepted (signature verified) is ours.
	rest := object(t, ok(client.QueryOrder(session, `{"cl_ord_id":"`+cl+`"}`)))
	if int64Of(t, rest["id"]) != int64Of(t, data["id"]) || rest["status"] != "open" {
		t.Fatalf("query_order %v, event %v", rest, event)
	}

	// Cancel it over the order stream: two frames again, and the account event.
	cancel := object(t, ok(orders.CancelOrder(`{"cl_ord_id":"`+cl+`"}`)))
	cancelID, _ := cancel["request_id"].(string)
	if cancelID == "" || cancelID == requestID || cancel["cl_ord_id"] != cl {
		t.Fatalf("cancel over the stream: %v", cancel)
	}
	nextWhere(t, orders, responseTo(cancelID, false))
	if e := nextWhere(t, orders, responseTo(cancelID, true)); e["message"] != "success" {
		t.Fatalf("cancel outcome %v", e)
	}
	nextWhere(t, account, accountOrder(cl, "canceled"))
	if o := object(t, ok(client.QueryOrder(session, `{"cl_ord_id":"`+cl+`"}`))); o["status"] != "canceled" {
		t.Fatalf("after the cancel: %v", o)
	}

	// Refused before anything is sent.
	_, err = orders.NewOrder(strings.Replace(limitBuy(bid, "0.01", ""), `"side":"buy"`, `"side":"up"`, 1))
	if e := asPerpsError(t, err, perps.InvalidOrder); e.StreamRequestID != "" {
		t.Fatalf("no frame was written, yet StreamRequestID %q", e.StreamRequestID)
	}
	_, err = account.NewOrder(limitBuy(bid, "0.01", "")) // a market stream takes no orders
	asPerpsError(t, err, perps.InvalidState)
	_, err = orders.CancelOrder("{\"cl_ord_id\":\"a\x00b\"}")
	asPerpsError(t, err, perps.InvalidArgument)
}

func TestStreamDepthBookSorted(t *testing.T) {
	_, client, _ := connected(t, "")
	// XAG-USD's bids (100.04 … 99.95 around the default mark) sort differently as strings.
	st, err := client.OpenStream(nil, `[{"channel":"depth_book","symbol":"XAG-USD"}]`)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	for i := 0; i < 3; i++ { // the snapshot, then pushes (each shuffled by the venue)
		event := nextWhere(t, st, func(e map[string]interface{}) bool { return e["channel"] == "depth_book" })
		data := event["data"].(map[string]interface{})
		levels := func(side string) []*big.Rat {
			var out []*big.Rat
			for _, l := range data[side].([]interface{}) {
				price := l.([]interface{})[0]
				if _, isText := price.(string); !isText {
					t.Fatalf("price %v is not the venue's text", price)
				}
				out = append(out, decimal(t, price))
			}
			return out
		}
		bids, asks := levels("bids"), levels("asks")
		if event["symbol"] != "XAG-USD" || len(bids) != 10 || len(asks) != 10 || bids[0].Cmp(asks[0]) >= 0 {
			t.Fatalf("depth_book %v", event)
		}
		for j := 1; j < 10; j++ {
			if bids[j-1].Cmp(bids[j]) <= 0 || asks[j-1].Cmp(asks[j]) >= 0 {
				t.Fatalf("levels not sorted best first: %v", event)
			}
		}
	}
	_, err = client.OpenStream(nil, `[{"channel":"order"}]`) // an account channel needs a session
	asPerpsError(t, err, perps.InvalidArgument)
	_, err = client.OpenStream(nil, `[{"channel":"kline","symbol":"BTC-USD"}]`)
	if perr := asPerpsError(t, err, perps.InvalidArgument); !strings.Contains(perr.Message, "kline") {
		t.Fatalf("message %q does not name the entry", perr.Message)
	}
}

func TestStreamNextContextAndClose(t *testing.T) {
	ok := okOf(t)
	_, client, session := signedIn(t)
	orders, err := client.OpenOrderStream(session) // no orders yet: nothing more will come
	if err != nil {
		t.Fatal(err)
	}
	defer orders.Close()
	nextWhere(t, orders, isStatus("connected"))

	// Cancellation: Next returns ctx.Err() soon after, and the stream goes on.
	ctx, cancel := context.WithCancel(context.Background())
	type result struct {
		event string
		err   error
		at    time.Time
	}
	got := make(chan result, 1)
	go func() {
		event, err := orders.Next(ctx)
		got <- result{event, err, time.Now()}
	}()
	time.Sleep(200 * time.Millisecond)
	cancelledAt := time.Now()
	cancel()
	r := <-got
	if !errors.Is(r.err, context.Canceled) || r.event != "" || r.at.Sub(cancelledAt) > 500*time.Millisecond {
		t.Fatalf("Next after cancel: %q %v after %v", r.event, r.err, r.at.Sub(cancelledAt))
	}
	// A deadline: DeadlineExceeded once it passes, not before.
	ctx, cancel = context.WithTimeout(context.Background(), 300*time.Millisecond)
	started := time.Now()
	_, err = orders.Next(ctx)
	cancel()
	if waited := time.Since(started); !errors.Is(err, context.DeadlineExceeded) || waited < 290*time.Millisecond || waited > time.Second {
		t.Fatalf("Next with a 300 ms deadline: %v after %v", err, waited)
	}
	// Nothing was lost: the next events are this order's frames, in order.
	sent := object(t, ok(orders.NewOrder(limitBuy(farBid(t, client), "0.01", ""))))
	for _, final := range []bool{false, true} {
		ctx, cancel = context.WithTimeout(context.Background(), 5*time.Second)
		text, err := orders.Next(ctx)
		cancel()
		if err != nil {
			t.Fatal(err)
		}
		if e := object(t, text); e["request_id"] != sent["request_id"] || e["final"] != final {
			t.Fatalf("want the order's final=%v frame, got %s", final, text)
		}
	}
	// Next starts no goroutine: many short waits leave none behind.
	before := runtime.NumGoroutine()
	for i := 0; i < 50; i++ {
		ctx, cancel = context.WithTimeout(context.Background(), time.Millisecond)
		_, _ = orders.Next(ctx)
		cancel()
	}
	// The runtime counts its finalizer goroutine while it runs a finalizer (an earlier test's
	// handle, collected meanwhile), so the count may rise by one for a moment: wait for it to
	// settle. A goroutine per Next would leave 50 behind, blocked in the library.
	after := runtime.NumGoroutine()
	for settle := time.Now().Add(2 * time.Second); after > before && time.Now().Before(settle); after = runtime.NumGoroutine() {
		time.Sleep(10 * time.Millisecond)
	}
	if after > before {
		t.Fatalf("goroutines: %d before, %d after", before, after)
	}

	// Close from another goroutine wakes a Next blocked in the library (no deadline).
	go func() {
		event, err := orders.Next(context.Background())
		got <- result{event, err, time.Now()}
	}()
	time.Sleep(200 * time.Millisecond)
	closedAt := time.Now()
	if err := orders.Close(); err != nil {
		t.Fatal(err)
	}
	r = <-got
	asPerpsError(t, r.err, perps.StreamClosed)
	if r.at.Sub(closedAt) > time.Second {
		t.Fatalf("Next woke %v after Close", r.at.Sub(closedAt))
	}
	_ = orders.Close() // idempotent
	_, err = orders.Next(context.Background())
	asPerpsError(t, err, perps.StreamClosed)
	_, err = orders.NewOrder(limitBuy("1", "0.01", ""))
	asPerpsError(t, err, perps.StreamClosed)
	if perps.StreamClosed.String() != "PERPS_STREAM_CLOSED" || perps.StreamLimit != 16 {
		t.Fatal("codes 15, 16")
	}
}

func TestStreamPartlyWrittenFrameNamedByItsEnvelopeRequestID(t *testing.T) {
	ok := okOf(t)
	// A write that finds the socket full waits read_timeout_ms; the stalled venue's silence
	// must not end the connection first (stream_idle_timeout_ms).
	sb, client, session := connected(t, `{"read_timeout_ms":2000,"stream_idle_timeout_ms":120000}`)
	ok(client.Signin(session, "bsc", walletKey, 3600))
	bid := farBid(t, client)
	orders, err := client.OpenOrderStream(session)
	if err != nil {
		t.Fatal(err)
	}
	defer orders.Close()
	nextWhere(t, orders, isStatus("connected"))
	first := object(t, ok(orders.NewOrder(limitBuy(bid, "0.01", ""))))
	firstID, _ := first["request_id"].(string)
	nextWhere(t, orders, responseTo(firstID, true))

	// The venue stops reading (its socket stays open): orders until one does not fit.
	resp, err := http.Post(sb.AdminURL+"/ws/stall", "application/json", strings.NewReader("{}"))
	if err != nil {
		t.Fatal(err)
	}
	var stalled map[string]int
	if err := json.NewDecoder(resp.Body).Decode(&stalled); err != nil || stalled["stalled"] < 1 {
		t.Fatalf("ws/stall: %v %v", stalled, err)
	}
	resp.Body.Close()
	written := map[string]bool{}
	last := ""
	deadline := time.Now().Add(60 * time.Second)
	for len(written) < 50000 && time.Now().Before(deadline) {
		var answer string
		if answer, err = orders.NewOrder(limitBuy(bid, "0.01", "")); err != nil {
			break
		}
		last, _ = object(t, answer)["request_id"].(string)
		written[last] = true
	}
	var e *perps.Error
	if !errors.As(err, &e) || len(written) == 0 {
		t.Fatalf("after %d orders written in full: %v", len(written), err)
	}
	if (e.Code != perps.Timeout && e.Code != perps.Transport) || !e.MayHaveReachedVenue {
		t.Fatalf("the failed write: %v (may have reached the venue: %v)", e, e.MayHaveReachedVenue)
	}
	// The envelope request_id of the partly written frame: the one the message names, a new
	// request (none of those written in full), not the x-request-id.
	id := e.StreamRequestID
	if len(id) != 36 || !strings.Contains(e.Message, "request_id "+id+" may have been partly sent") {
		t.Fatalf("StreamRequestID %q, message %q", id, e.Message)
	}
	if written[id] || id == firstID || e.XRequestID == "" || e.XRequestID == id || e.ClOrdID == "" {
		t.Fatalf("StreamRequestID %q, XRequestID %q, ClOrdID %q", id, e.XRequestID, e.ClOrdID)
	}

	// The connection is replaced; its "disconnected" event lists that request as awaiting
	// its outcome, by the same id, with the orders written before it.
	down := nextWhere(t, orders, isStatus("disconnected"))
	unanswered := map[string]bool{}
	list, _ := down["unanswered"].([]interface{})
	for _, v := range list {
		if s, isText := v.(string); isText {
			unanswered[s] = true
		}
	}
	if !unanswered[id] || !unanswered[last] {
		t.Fatalf("unanswered (%d ids) lacks %q or %q", len(unanswered), id, last)
	}
}
