package perps_test

// The trading loop through the Go binding against the sandbox venue: every endpoint method
// called and its answer checked (the public three without a session), an order placed,
// found by its generated cl_ord_id, listed, cancelled, and NotFound on cancelling it again
// with the x-request-id the venue received; parameters refused before anything is sent; an
// order that times out carrying its ClOrdID and XRequestID and found afterwards; the
// client's rate limiter refusing with RetryAfterMs.

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"math/big"
	"net/http"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	perps "libperps/bindings/go"
)

var uuidAny = regexp.MustCompile(`^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$`)

// decode parses a venue answer, numbers kept exact (json.Number).
func decode(t *testing.T, text string) interface{} {
	t.Helper()
	d := json.NewDecoder(strings.NewReader(text))
	d.UseNumber()
	var v interface{}
	if err := d.Decode(&v); err != nil {
		t.Fatalf("not JSON (%v): %s", err, text)
	}
	return v
}

func object(t *testing.T, text string) map[string]interface{} {
	t.Helper()
	m, ok := decode(t, text).(map[string]interface{})
	if !ok {
		t.Fatalf("not a JSON object: %s", text)
	}
	return m
}

// rows is a list answer: a bare array, or the result of a {page_size, result, total} envelope.
func rows(t *testing.T, text string) []map[string]interface{} {
	t.Helper()
	v := decode(t, text)
	if m, ok := v.(map[string]interface{}); ok {
		v = m["result"]
	}
	items, ok := v.([]interface{})
	if !ok {
		t.Fatalf("not a list answer: %s", text)
	}
	out := make([]map[string]interface{}, 0, len(items))
	for _, item := range items {
		if m, ok := item.(map[string]interface{}); ok {
			out = append(out, m)
		}
	}
	return out
}

// decimal reads a decimal the venue may write as a string or a number, exactly.
func decimal(t *testing.T, v interface{}) *big.Rat {
	t.Helper()
	var text string
	switch x := v.(type) {
	case string:
		text = x
	case json.Number:
		text = x.String()
	default:
		t.Fatalf("not a decimal: %#v", v)
	}
	r, ok := new(big.Rat).SetString(text)
	if !ok {
		t.Fatalf("not a decimal: %q", text)
	}
	return r
}

func int64Of(t *testing.T, v interface{}) int64 {
	t.Helper()
	n, ok := v.(json.Number)
	if !ok {
		t.Fatalf("not a JSON integer: %#v", v)
	}
	i, err := n.Int64()
	if err != nil {
		t.Fatalf("not an int64: %v", n)
	}
	return i
}

// okOf returns ok(answer, err): the answer of a call that must succeed.
func okOf(t *testing.T) func(string, error) string {
	return func(answer string, err error) string {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
		return answer
	}
}

// requestsTo is the venue's request log (oldest first) for one endpoint, e.g. "cancel_order".
func (sb *sandbox) requestsTo(t *testing.T, endpoint string) []map[string]interface{} {
	t.Helper()
	resp, err := http.Get(sb.AdminURL + "/requests?last=1000")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var log []map[string]interface{}
	if err := json.NewDecoder(resp.Body).Decode(&log); err != nil {
		t.Fatal(err)
	}
	var out []map[string]interface{}
	for _, r := range log {
		if path, _ := r["path"].(string); endpoint == "" && strings.Contains(path, "/api/") ||
			endpoint != "" && strings.HasSuffix(path, "/api/"+endpoint) {
			out = append(out, r)
		}
	}
	return out
}

func header(r map[string]interface{}, name string) string {
	headers, _ := r["headers"].(map[string]interface{})
	value, _ := headers[name].(string)
	return value
}

func limitBuy(price, qty, extra string) string {
	return `{"symbol":"BTC-USD","side":"buy","order_type":"limit","qty":"` + qty + `","price":"` + price +
		`","time_in_force":"gtc","reduce_only":false` + extra + `}`
}

// farBid is a price far below the mark, so the moving mark does not fill the order.
func farBid(t *testing.T, client *perps.Client) string {
	ok := okOf(t)
	t.Helper()
	price := object(t, ok(client.QuerySymbolPrice(nil, `{"symbol":"BTC-USD"}`)))
	mark, _ := decimal(t, price["mark_price"]).Float64()
	return fmt.Sprintf("%.2f", math.Floor(mark-2000))
}

func hasID(t *testing.T, list string, id int64) bool {
	t.Helper()
	for _, o := range rows(t, list) {
		if int64Of(t, o["id"]) == id {
			return true
		}
	}
	return false
}

func TestPublicEndpointsWithoutSession(t *testing.T) {
	ok := okOf(t)
	sb := startSandbox(t)
	client, err := perps.NewClient(sb.BaseURL, sb.PerpsURL, "")
	if err != nil {
		t.Fatal(err)
	}
	defer client.Close()

	symbols := map[string]bool{}
	for _, s := range rows(t, ok(client.QuerySymbolInfo(nil, ""))) {
		symbols[s["symbol"].(string)] = true
	}
	for _, want := range []string{"BTC-USD", "ETH-USD", "XAG-USD"} {
		if !symbols[want] {
			t.Errorf("query_symbol_info lacks %s: %v", want, symbols)
		}
	}
	one := rows(t, ok(client.QuerySymbolInfo(nil, `{"symbol":"XAG-USD"}`)))
	if len(one) != 1 || one[0]["symbol"] != "XAG-USD" || one[0]["price_tick_decimals"] == nil {
		t.Errorf("query_symbol_info XAG-USD: %v", one)
	}
	price := object(t, ok(client.QuerySymbolPrice(nil, `{"symbol":"BTC-USD"}`)))
	if price["symbol"] != "BTC-USD" || decimal(t, price["mark_price"]).Sign() <= 0 {
		t.Errorf("query_symbol_price: %v", price)
	}

	// XAG-USD's bids (100.04 … 99.95 around the default mark) sort differently as strings.
	for _, symbol := range []string{"XAG-USD", "BTC-USD"} {
		text := ok(client.QueryDepthBook(nil, `{"symbol":"`+symbol+`"}`))
		book := object(t, text)
		level := func(side string) []*big.Rat {
			var out []*big.Rat
			for _, l := range book[side].([]interface{}) {
				out = append(out, decimal(t, l.([]interface{})[0]))
			}
			return out
		}
		bids, asks := level("bids"), level("asks")
		if len(bids) == 0 || len(asks) == 0 || bids[0].Cmp(asks[0]) >= 0 {
			t.Fatalf("depth book %s", text)
		}
		for i := 1; i < len(bids); i++ {
			if bids[i-1].Cmp(bids[i]) <= 0 {
				t.Errorf("bids not high to low: %s", text)
			}
		}
		for i := 1; i < len(asks); i++ {
			if asks[i-1].Cmp(asks[i]) >= 0 {
				t.Errorf("asks not low to high: %s", text)
			}
		}
	}
	for _, name := range []string{"query_symbol_info", "query_symbol_price", "query_depth_book"} {
		sent := sb.requestsTo(t, name)
		if len(sent) == 0 {
			t.Errorf("%s not in the venue's log", name)
		}
		for _, r := range sent {
			if header(r, "authorization") != "" {
				t.Errorf("%s sent a bearer token", name)
			}
		}
	}

	// A session is accepted (and not needed); a closed one is refused, not read.
	session, _ := perps.NewSession()
	if _, err := client.QuerySymbolPrice(session, `{"symbol":"ETH-USD"}`); err != nil {
		t.Fatal(err)
	}
	_ = session.Close()
	_, err = client.QuerySymbolPrice(session, `{"symbol":"ETH-USD"}`)
	asPerpsError(t, err, perps.InvalidArgument)
}

func TestTradingLoop(t *testing.T) {
	ok := okOf(t)
	sb, client, session := signedIn(t)

	// A market maker's set-up calls.
	for _, call := range []func() (string, error){
		func() (string, error) {
			return client.ChangeMarginMode(session, `{"symbol":"BTC-USD","margin_mode":"cross"}`)
		},
		func() (string, error) { return client.ChangeLeverage(session, `{"symbol":"BTC-USD","leverage":10}`) },
	} {
		if answer := object(t, ok(call())); answer["code"] != json.Number("0") {
			t.Fatalf("answer %v", answer)
		}
	}
	config := object(t, ok(client.QueryPositionConfig(session, `{"symbol":"BTC-USD"}`)))
	if decimal(t, config["leverage"]).Cmp(big.NewRat(10, 1)) != 0 || config["margin_mode"] != "cross" {
		t.Fatalf("position config %v", config)
	}

	// An order without cl_ord_id: the answer carries the generated one.
	bid := farBid(t, client)
	placed := object(t, ok(client.NewOrder(session, limitBuy(bid, "0.01", ""))))
	cl, _ := placed["cl_ord_id"].(string)
	if placed["code"] != json.Number("0") || len(cl) < 26 {
		t.Fatalf("order answer %v", placed)
	}
	byCl := object(t, ok(client.QueryOrder(session, `{"cl_ord_id":"`+cl+`"}`)))
	id := int64Of(t, byCl["id"])
	if id <= 1<<32 || byCl["status"] != "open" || byCl["cl_ord_id"] != cl {
		t.Fatalf("order %v: want an open order with an id above 2^32", byCl)
	}
	byID := object(t, ok(client.QueryOrder(session, fmt.Sprintf(`{"order_id":%d}`, id))))
	if byID["cl_ord_id"] != cl {
		t.Fatalf("order by id %v", byID)
	}
	if !hasID(t, ok(client.QueryOpenOrders(session, `{"symbol":"BTC-USD"}`)), id) ||
		!hasID(t, ok(client.QueryOpenOrders(session, "")), id) {
		t.Fatal("the order is not in query_open_orders")
	}
	if answer := object(t, ok(client.CancelOrder(session, `{"cl_ord_id":"`+cl+`"}`))); answer["code"] != json.Number("0") {
		t.Fatalf("cancel answer %v", answer)
	}
	if o := object(t, ok(client.QueryOrder(session, fmt.Sprintf(`{"order_id":%d}`, id)))); o["status"] != "canceled" {
		t.Fatalf("after the cancel: %v", o)
	}
	if hasID(t, ok(client.QueryOpenOrders(session, "")), id) {
		t.Fatal("a cancelled order still listed as open")
	}
	if !hasID(t, ok(client.QueryOrders(session, `{"symbol":"BTC-USD","status":"canceled","limit":50}`)), id) {
		t.Fatal("the cancelled order is not in query_orders")
	}

	// Cancelling it again: gone, NotFound, with the x-request-id the venue received.
	_, err := client.CancelOrder(session, fmt.Sprintf(`{"order_id":%d}`, id))
	gone := asPerpsError(t, err, perps.NotFound)
	if gone.HTTPStatus != 404 || !strings.Contains(gone.Body, "not found") || gone.ClOrdID != "" ||
		gone.RetryAfterMs != -1 || !uuidAny.MatchString(gone.XRequestID) {
		t.Fatalf("error %+v", gone)
	}
	sent := sb.requestsTo(t, "cancel_order")
	if last := sent[len(sent)-1]; header(last, "x-request-id") != gone.XRequestID || fmt.Sprint(last["status"]) != "404" {
		t.Fatalf("the venue received %v, the error says x-request-id %s", last, gone.XRequestID)
	}
	if !strings.Contains(gone.Error(), "PERPS_NOT_FOUND (HTTP 404)") {
		t.Fatalf("Error() = %q", gone.Error())
	}
	// A GET sends no body signature: no x-request-id on its error.
	_, err = client.QueryOrder(session, `{"order_id":4294967299999}`)
	if e := asPerpsError(t, err, perps.NotFound); e.XRequestID != "" {
		t.Fatalf("error %+v", e)
	}

	// A market order (ioc) fills: trades, a position, the balance.
	ok(client.NewOrder(session, `{"symbol":"BTC-USD","side":"buy","order_type":"market","qty":"0.01","time_in_force":"ioc","reduce_only":false}`))
	trades := rows(t, ok(client.QueryTrades(session, `{"symbol":"BTC-USD","side":"buy"}`)))
	if len(trades) == 0 || trades[0]["symbol"] != "BTC-USD" || decimal(t, trades[0]["qty"]).Sign() <= 0 {
		t.Fatalf("trades %v", trades)
	}
	if len(rows(t, ok(client.QueryTrades(session, "")))) == 0 {
		t.Fatal("no trades without a filter")
	}
	long := false
	for _, p := range rows(t, ok(client.QueryPositions(session, `{"symbol":"BTC-USD"}`))) {
		long = long || p["symbol"] == "BTC-USD" && decimal(t, p["qty"]).Sign() > 0
	}
	if !long || len(rows(t, ok(client.QueryPositions(session, "")))) == 0 {
		t.Fatal("no long BTC-USD position after a market buy")
	}
	balance := object(t, ok(client.QueryBalance(session, "")))
	if balance["equity"] == nil || decimal(t, balance["balance"]).Sign() <= 0 {
		t.Fatalf("balance %v", balance)
	}

	// Batch cancel, by order id and by cl_ord_id.
	a := object(t, ok(client.NewOrder(session, limitBuy(bid, "0.01", ""))))
	bCl := "go-batch-" + strconv.FormatInt(time.Now().UnixNano()%1e9, 10)
	ok(client.NewOrder(session, limitBuy(bid, "0.01", `,"cl_ord_id":"`+bCl+`"`)))
	aID := int64Of(t, object(t, ok(client.QueryOrder(session, `{"cl_ord_id":"`+a["cl_ord_id"].(string)+`"}`)))["id"])
	answer := ok(client.CancelOrders(session, fmt.Sprintf(`{"order_id_list":[%d],"cl_ord_id_list":["%s"]}`, aID, bCl)))
	if v := decode(t, answer); !(fmt.Sprint(v) == "[]" || v.(map[string]interface{})["code"] == json.Number("0")) {
		t.Fatalf("cancel_orders answer %s", answer)
	}
	for _, c := range []string{a["cl_ord_id"].(string), bCl} {
		if o := object(t, ok(client.QueryOrder(session, `{"cl_ord_id":"`+c+`"}`))); o["status"] != "canceled" {
			t.Fatalf("after cancel_orders: %v", o)
		}
	}
}

func TestCancelAll(t *testing.T) {
	sb, client, session := signedIn(t)
	ok := okOf(t)
	bid := farBid(t, client)
	ok(client.NewOrder(session, limitBuy(bid, "0.01", `,"cl_ord_id":"go-all-1"`)))
	ok(client.NewOrder(session, limitBuy(bid, "0.01", `,"cl_ord_id":"go-all-2"`)))
	ok(client.NewOrder(session, limitBuy(bid, "0.01", `,"cl_ord_id":"go-keep-1"`)))
	// The batch is lost once (HTTP 503, nothing done): it is sent again.
	sb.setFaults(t, `{"per_endpoint":{"cancel_orders":{"status":503,"times":1}}}`)
	report := object(t, ok(client.CancelAll(session, `{"cl_ord_id_prefix":"go-all-","confirm_ms":10000}`)))
	orders, _ := report["orders"].([]interface{})
	if report["complete"] != true || len(orders) != 2 || report["cancel_requests"] != json.Number("2") ||
		report["failed_cancel_requests"] != json.Number("1") {
		t.Fatalf("report %v", report)
	}
	for _, o := range orders {
		if order := o.(map[string]interface{}); order["status"] != "canceled" || order["confirmed"] != true {
			t.Fatalf("report %v", report)
		}
	}
	for cl, want := range map[string]string{"go-all-1": "canceled", "go-all-2": "canceled", "go-keep-1": "open"} {
		if o := object(t, ok(client.QueryOrder(session, `{"cl_ord_id":"`+cl+`"}`))); o["status"] != want {
			t.Fatalf("%s: %v", cl, o)
		}
	}
	if _, err := client.CancelAll(session, `{"cl_ord_id_list":[]}`); asPerpsError(t, err, perps.InvalidArgument) == nil ||
		!strings.Contains(err.Error(), "cl_ord_id_list") {
		t.Fatalf("an empty list: %v", err)
	}
}

func TestEndpointParamsRefusedBeforeSending(t *testing.T) {
	sb, client, session := signedIn(t)
	before := len(sb.requestsTo(t, ""))
	cases := []struct {
		call func() (string, error)
		code perps.Code
		want string
	}{
		{func() (string, error) { return client.CancelOrder(session, `{"order_id":"12"}`) }, perps.InvalidArgument, "order_id"},
		{func() (string, error) { return client.CancelOrders(session, `{"order_id_list":[]}`) }, perps.InvalidArgument, "order_id_list"},
		{func() (string, error) { return client.ChangeLeverage(session, `{"symbol":"BTC-USD","leverage":1.5}`) }, perps.InvalidArgument, "leverage"},
		{func() (string, error) {
			return client.ChangeMarginMode(session, `{"symbol":"BTC-USD","margin_mode":"CROSS"}`)
		}, perps.InvalidArgument, "margin_mode"},
		{func() (string, error) { return client.QueryOrder(session, `{}`) }, perps.InvalidArgument, "query_order"},
		{func() (string, error) { return client.QueryOrders(session, `{"limit":501}`) }, perps.InvalidArgument, "limit"},
		{func() (string, error) { return client.QueryOpenOrders(session, `{"symbol":"BTC-USD","nope":1}`) }, perps.InvalidArgument, "nope"},
		{func() (string, error) { return client.QueryTrades(session, `{"start":"yesterday"}`) }, perps.InvalidArgument, "start"},
		{func() (string, error) { return client.QueryPositions(session, `[]`) }, perps.InvalidArgument, "params_json"},
		{func() (string, error) { return client.QueryBalance(session, `{"symbol":"BTC-USD"}`) }, perps.InvalidArgument, "symbol"},
		{func() (string, error) { return client.QueryPositionConfig(session, "") }, perps.InvalidArgument, "symbol"},
		{func() (string, error) { return client.QuerySymbolInfo(nil, `{"symbol":null}`) }, perps.InvalidArgument, "symbol"},
		{func() (string, error) { return client.QuerySymbolPrice(nil, `{"symbol":"BTC-USD","x":1}`) }, perps.InvalidArgument, `"x"`},
		{func() (string, error) { return client.QueryDepthBook(nil, "{\"symbol\":\"BTC\x00\"}") }, perps.InvalidArgument, "paramsJSON contains a NUL byte"},
		// Account endpoints need a session; nil is refused here, as by every other method.
		{func() (string, error) { return client.QueryBalance(nil, "") }, perps.InvalidArgument, "session is nil"},
		{func() (string, error) { return client.CancelOrder(nil, `{"order_id":1}`) }, perps.InvalidArgument, "session is nil"},
	}
	for i, c := range cases {
		answer, err := c.call()
		var perr *perps.Error
		if !errors.As(err, &perr) || perr.Code != c.code || !strings.Contains(perr.Message, c.want) {
			t.Errorf("case %d: want %v naming %q, got %q, %v", i, c.code, c.want, answer, err)
			continue
		}
		if perr.HTTPStatus != 0 || perr.MayHaveReachedVenue || perr.XRequestID != "" || perr.RetryAfterMs != -1 {
			t.Errorf("case %d: a local refusal carries venue details: %+v", i, perr)
		}
	}
	// Signed out: no token, nothing sent.
	fresh, _ := perps.NewSession()
	defer fresh.Close()
	_, err := client.QueryOpenOrders(fresh, "")
	asPerpsError(t, err, perps.InvalidState)
	if after := len(sb.requestsTo(t, "")); after != before {
		t.Fatalf("the venue received %d requests from refused calls", after-before)
	}
}

func TestOrderTimeoutFoundByClOrdID(t *testing.T) {
	sb, _, session := signedIn(t)
	client, err := perps.NewClient(sb.BaseURL, sb.PerpsURL, `{"read_timeout_ms":300,"total_timeout_ms":500,"cl_ord_id_prefix":"go-"}`)
	if err != nil {
		t.Fatal(err)
	}
	defer client.Close()
	// The venue is slow for the next order only: it books it after the client gave up.
	sb.setFaults(t, `{"per_endpoint":{"new_order":{"slow_ms":1200,"times":1}}}`)
	_, err = client.NewOrder(session, limitBuy(farBid(t, client), "0.02", ""))
	perr := asPerpsError(t, err, perps.Timeout)
	if !perr.MayHaveReachedVenue || !strings.HasPrefix(perr.ClOrdID, "go-") || len(perr.ClOrdID) != 29 ||
		!uuidAny.MatchString(perr.XRequestID) || perr.RetryAfterMs != -1 {
		t.Fatalf("error %+v: want the order's cl_ord_id and x-request-id", perr)
	}
	// Look before resending: not visible until the venue has booked it, then found.
	query := `{"cl_ord_id":"` + perr.ClOrdID + `"}`
	var found map[string]interface{}
	for deadline := time.Now().Add(10 * time.Second); found == nil; {
		answer, err := client.QueryOrder(session, query)
		var notYet *perps.Error
		switch {
		case err == nil:
			found = object(t, answer)
		case errors.As(err, &notYet) && notYet.Code == perps.NotFound && time.Now().Before(deadline):
			time.Sleep(100 * time.Millisecond)
		default:
			t.Fatal(err)
		}
	}
	if found["status"] != "open" || decimal(t, found["qty"]).Cmp(big.NewRat(2, 100)) != 0 {
		t.Fatalf("found %v", found)
	}
	orders := sb.requestsTo(t, "new_order")
	if len(orders) != 1 || header(orders[0], "x-request-id") != perr.XRequestID {
		t.Fatalf("the venue received %d orders (%v); want one with x-request-id %s", len(orders), orders, perr.XRequestID)
	}
}

func TestRateLimitedRefuse(t *testing.T) {
	sb, _, session := signedIn(t)
	client, err := perps.NewClient(sb.BaseURL, sb.PerpsURL, `{"rate_limit":"refuse"}`)
	if err != nil {
		t.Fatal(err)
	}
	defer client.Close()
	sent := 0
	for ; sent < 400; sent++ { // a burst of 18, then one each 45 ms
		if _, err = client.QueryBalance(session, ""); err != nil {
			break
		}
	}
	perr := asPerpsError(t, err, perps.RateLimited)
	if sent < 15 || perr.RetryAfterMs <= 0 || perr.RetryAfterMs > 1000 || perr.HTTPStatus != 0 ||
		perr.XRequestID != "" || perr.MayHaveReachedVenue {
		t.Fatalf("after %d calls: %+v", sent, perr)
	}
	if got := len(sb.requestsTo(t, "query_balance")); got != sent {
		t.Fatalf("the venue received %d query_balance, the client let %d through", got, sent)
	}
}

func TestNewCodes(t *testing.T) {
	if perps.NotFound != 13 || perps.RateLimited != 14 || perps.NotFound.String() != "PERPS_NOT_FOUND" ||
		perps.RateLimited.String() != "PERPS_RATE_LIMITED" {
		t.Fatal("NotFound / RateLimited")
	}
}
