package perps_test

// QueryFundingHistory against the sandbox venue: the venue settles funding at a rate (its
// admin control POST /_sandbox/funding), and the row that comes back must carry the payment
// this test computes itself, exactly — −qty × mark × rate from the position the venue
// reported, rounded to nine decimals — and the balance must move by it; then paging with
// limit and last_id, and parameters refused before anything is sent.

import (
	"encoding/json"
	"errors"
	"io"
	"math/big"
	"net/http"
	"strings"
	"testing"

	perps "libperps/bindings/go"
)

func (sb *sandbox) settleFunding(t *testing.T, body string) {
	t.Helper()
	resp, err := http.Post(sb.AdminURL+"/funding", "application/json", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != 200 {
		answer, _ := io.ReadAll(resp.Body)
		t.Fatalf("settling funding %s: HTTP %d %s", body, resp.StatusCode, answer)
	}
}

// nineDecimals rounds r half away from zero to nine decimals (the venue's money).
func nineDecimals(r *big.Rat) *big.Rat {
	scaled := new(big.Rat).Mul(r, big.NewRat(1_000_000_000, 1))
	num, den := new(big.Int).Abs(scaled.Num()), scaled.Denom()
	twice := new(big.Int).Add(new(big.Int).Mul(num, big.NewInt(2)), den)
	rounded := new(big.Int).Quo(twice, new(big.Int).Mul(den, big.NewInt(2)))
	if scaled.Sign() < 0 {
		rounded.Neg(rounded)
	}
	return new(big.Rat).SetFrac(rounded, big.NewInt(1_000_000_000))
}

func TestFundingHistory(t *testing.T) {
	ok := okOf(t)
	sb, client, session := signedIn(t)
	ok(client.NewOrder(session, `{"symbol":"BTC-USD","side":"buy","order_type":"market","qty":"0.0100","time_in_force":"ioc","reduce_only":false}`))
	if got := rows(t, ok(client.QueryFundingHistory(session, ""))); len(got) != 0 {
		t.Fatalf("rows before any settlement: %v", got)
	}
	position := func() map[string]interface{} {
		return rows(t, ok(client.QueryPositions(session, `{"symbol":"BTC-USD"}`)))[0]
	}
	balance := func() *big.Rat {
		return decimal(t, object(t, ok(client.QueryBalance(session, "")))["balance"])
	}
	rate := big.NewRat(1, 10_000) // 0.0001: a long pays
	checked := false
	// The sandbox's marks walk every 3 s: a settlement is checked when the mark read before
	// and after it is the same, and tried again otherwise.
	for attempt := 1; attempt <= 5 && !checked; attempt++ {
		before, balanceBefore := position(), balance()
		sb.settleFunding(t, `{"symbol":"BTC-USD","rate":"0.0001"}`)
		after, balanceAfter := position(), balance()
		got := rows(t, ok(client.QueryFundingHistory(session, `{"symbol":"BTC-USD"}`)))
		if len(got) != attempt {
			t.Fatalf("settlement %d: %d rows: %v", attempt, len(got), got)
		}
		row := got[0] // newest first
		if row["txn_type"] != "funding_fee" || row["asset"] != "DUSD" || row["symbol"] != "BTC-USD" {
			t.Fatalf("row %v", row)
		}
		paid := decimal(t, row["qty"])
		if moved := new(big.Rat).Sub(balanceAfter, balanceBefore); moved.Cmp(paid) != 0 {
			t.Fatalf("the balance moved by %s, the row says %s", moved.FloatString(9), paid.FloatString(9))
		}
		if before["mark_price"] != after["mark_price"] {
			continue
		}
		exact := new(big.Rat).Mul(decimal(t, before["qty"]), decimal(t, before["mark_price"]))
		expected := nineDecimals(exact.Neg(exact.Mul(exact, rate)))
		if paid.Cmp(expected) != 0 || paid.Sign() >= 0 {
			t.Fatalf("row qty %s, expected %s (qty %v at %v)", paid.FloatString(9), expected.FloatString(9),
				before["qty"], before["mark_price"])
		}
		checked = true
	}
	if !checked {
		t.Fatal("no settlement without a walk step during it")
	}

	// Paging: the newest row alone, then the older ones from its id.
	sb.settleFunding(t, `{"rate":"-0.0002"}`)
	all := rows(t, ok(client.QueryFundingHistory(session, "")))
	first := rows(t, ok(client.QueryFundingHistory(session, `{"limit":1}`)))
	if len(first) != 1 || int64Of(t, first[0]["id"]) != int64Of(t, all[0]["id"]) || decimal(t, first[0]["qty"]).Sign() <= 0 {
		t.Fatalf("limit 1: %v of %v", first, all)
	}
	rest := rows(t, ok(client.QueryFundingHistory(session, `{"last_id":`+string(all[0]["id"].(json.Number))+`}`)))
	if len(rest) != len(all)-1 || int64Of(t, rest[0]["id"]) != int64Of(t, all[1]["id"]) {
		t.Fatalf("after last_id: %v of %v", rest, all)
	}

	// Refused before sending.
	before := len(sb.requestsTo(t, ""))
	for _, params := range []string{`{"limit":501}`, `{"side":"buy"}`, `{"start":"2026-01-03","end":"2026-01-02"}`} {
		_, err := client.QueryFundingHistory(session, params)
		var perr *perps.Error
		if !errors.As(err, &perr) || perr.Code != perps.InvalidArgument || perr.MayHaveReachedVenue {
			t.Fatalf("%s: %v", params, err)
		}
	}
	if _, err := client.QueryFundingHistory(nil, ""); err == nil || !strings.Contains(err.Error(), "session is nil") {
		t.Fatalf("nil session: %v", err)
	}
	if after := len(sb.requestsTo(t, "")); after != before {
		t.Fatalf("the venue received %d requests from refused calls", after-before)
	}
}
