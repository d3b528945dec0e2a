package perps_test

import (
	"crypto/ed25519"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"math/big"
	"regexp"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	perps "libperps/bindings/go"
)

// Hardhat/Anvil account #0: a published TEST key, never to be used with real funds.
const (
	walletKey     = "0xac0974bec39a17e36ba4a6b4d238ff944bacb478cbed5efcae784d7bf4f2ff80"
	walletAddress = "0xf39Fd6e51aad88F6F4ce6aB8827279cffFb92266"
	order         = `{"symbol":"BTC-USD","side":"buy","order_type":"limit","qty":"0.01","price":"65000","time_in_force":"gtc","reduce_only":false}`
)

// ---------------------------------------------------------------------------------------
// The flow (this is the README's "Use from Go" snippet)
// ---------------------------------------------------------------------------------------

func signinAndOrder(baseURL, perpsURL string) (string, error) {
	client, err := perps.NewClient(baseURL, perpsURL, "")
	if err != nil {
		return "", err
	}
	defer client.Close()
	session, err := perps.NewSession()
	if err != nil {
		return "", err
	}
	defer session.Close()
	address, _ := perps.WalletAddress("bsc", walletKey)
	payload, err := client.PrepareSignin(session, "bsc", address) // challenge verified
	if err != nil {
		return "", err
	}
	signature, _ := perps.WalletSign("bsc", walletKey, payload) // or your wallet
	if _, err := client.Login(session, signature, 3600); err != nil {
		return "", err
	}
	answer, err := client.NewOrder(session, order) // never retried
	var perr *perps.Error                          // .Code .Message .HTTPStatus .Body
	if errors.As(err, &perr) && perr.MayHaveReachedVenue {
		fmt.Println("the order may have reached the venue: query it before resending")
	}
	return answer, err
}

func TestSigninLoginOrder(t *testing.T) {
	sb := startSandbox(t)
	answer, err := signinAndOrder(sb.BaseURL, sb.PerpsURL)
	if err != nil {
		t.Fatal(err)
	}
	var got struct {
		Code      int    `json:"code"`
		Message   string `json:"message"`
		RequestID string `json:"request_id"`
	}
	if err := json.Unmarshal([]byte(answer), &got); err != nil || got.Code != 0 || got.RequestID == "" {
		t.Fatalf("order answer %q: %v", answer, err)
	}
	if stats := sb.stats(t); stats["orders_accepted"] != 1 {
		t.Fatalf("sandbox stats %v: want 1 accepted order", stats)
	}
}

func TestSigninOneCallRequestLogout(t *testing.T) {
	sb, client, session := connected(t, `{"total_timeout_ms":5000}`)

	if addr, err := perps.WalletAddress("bsc", walletKey); err != nil || addr != walletAddress {
		t.Fatalf("WalletAddress = %q, %v", addr, err)
	}
	if _, err := client.SyncTime(); err != nil {
		t.Fatal(err)
	}
	if _, err := client.Signin(session, "bsc", walletKey, 3600); err != nil {
		t.Fatal(err)
	}
	var info struct {
		RequestID string `json:"request_id"`
		HasToken  bool   `json:"has_token"`
		Chain     string `json:"chain"`
		Address   string `json:"address"`
	}
	text, err := session.Info()
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal([]byte(text), &info); err != nil || !info.HasToken || info.Chain != "bsc" ||
		!strings.EqualFold(info.Address, walletAddress) {
		t.Fatalf("session info %s: %v", text, err)
	}
	if token, err := session.Token(); err != nil || token == "" {
		t.Fatalf("Token: %v", err)
	}
	if err := session.SetSessionID("ws-1"); err != nil {
		t.Fatal(err)
	}
	if err := session.ClearSessionID(); err != nil {
		t.Fatal(err)
	}
	if _, err := client.NewOrder(session, order); err != nil {
		t.Fatal(err)
	}
	open, err := client.Request(session, "GET", "/api/query_open_orders?symbol=BTC-USD", "")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(open, "BTC-USD") {
		t.Fatalf("open orders %s: want the order placed", open)
	}
	if err := session.Logout(); err != nil {
		t.Fatal(err)
	}
	_, err = client.NewOrder(session, order)
	asPerpsError(t, err, perps.InvalidState)
	if stats := sb.stats(t); stats["orders_received"] != 1 {
		t.Fatalf("sandbox stats %v: the order after logout must not be sent", stats)
	}
}

// ---------------------------------------------------------------------------------------
// Errors
// ---------------------------------------------------------------------------------------

func TestHTTPStatusError(t *testing.T) {
	sb, client, session := signedIn(t)
	sb.setFaults(t, `{"status":500}`) // trading endpoints only: sign-in still works
	if _, err := signinAndOrder(sb.BaseURL, sb.PerpsURL); err == nil {
		t.Fatal("the snippet's order succeeded despite HTTP 500")
	}
	answer, err := client.NewOrder(session, order)
	if answer != "" {
		t.Fatalf("answer %q on failure", answer)
	}
	perr := asPerpsError(t, err, perps.HTTPStatus)
	if perr.HTTPStatus != 500 || !perr.MayHaveReachedVenue || !strings.Contains(perr.Body, "sandbox fault") {
		t.Fatalf("error %+v: want HTTP 500, may have reached the venue, the venue's body", perr)
	}
	if !strings.Contains(perr.Error(), "PERPS_HTTP_STATUS (HTTP 500)") {
		t.Fatalf("Error() = %q", perr.Error())
	}

	sb.setFaults(t, `{"order_code_nonzero":true}`)
	_, err = client.NewOrder(session, order)
	perr = asPerpsError(t, err, perps.APIError)
	if perr.MayHaveReachedVenue || perr.Body == "" {
		t.Fatalf("error %+v: want a refusal with its body", perr)
	}
}

func TestInvalidOrderIsNotSent(t *testing.T) {
	sb, client, session := signedIn(t)
	bad := strings.Replace(order, `"qty":"0.01"`, `"qty":0.01`, 1)
	_, err := client.NewOrder(session, bad)
	perr := asPerpsError(t, err, perps.InvalidOrder)
	if !strings.Contains(perr.Message, "qty") || perr.HTTPStatus != 0 || perr.MayHaveReachedVenue {
		t.Fatalf("error %+v: want the field named, nothing sent", perr)
	}
	_, err = perps.OrderSerialize(bad)
	asPerpsError(t, err, perps.InvalidOrder)
	if body, err := perps.OrderSerialize(order); err != nil || body != order {
		t.Fatalf("OrderSerialize = %q, %v", body, err)
	}
	if stats := sb.stats(t); stats["orders_received"] != 0 {
		t.Fatalf("sandbox stats %v: an invalid order must not be sent", stats)
	}
}

// ---------------------------------------------------------------------------------------
// Body signatures
// ---------------------------------------------------------------------------------------

var uuidV4 = regexp.MustCompile(`^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$`)

// base58Decode decodes Bitcoin-alphabet base58 (the requestId is base58 of the public key).
func base58Decode(s string) ([]byte, error) {
	const alphabet = "123456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz"
	n := new(big.Int)
	for _, r := range s {
		i := strings.IndexRune(alphabet, r)
		if i < 0 {
			return nil, fmt.Errorf("not base58: %q", r)
		}
		n.Mul(n, big.NewInt(58))
		n.Add(n, big.NewInt(int64(i)))
	}
	zeros := len(s) - len(strings.TrimLeft(s, "1"))
	return append(make([]byte, zeros), n.Bytes()...), nil
}

// checkSignature checks the shape of the four headers and verifies the Ed25519 signature
// over "v1,{id},{ts},{body}" with the session's public key (its base58 requestId).
func checkSignature(t *testing.T, session *perps.Session, headers map[string]string, body string) {
	t.Helper()
	if len(headers) != 4 || headers["x-request-sign-version"] != "v1" {
		t.Fatalf("headers %v: want the four x-request-* headers, version v1", headers)
	}
	id, ts, sig := headers["x-request-id"], headers["x-request-timestamp"], headers["x-request-signature"]
	if !uuidV4.MatchString(id) {
		t.Fatalf("x-request-id %q is not a lower-case UUID v4", id)
	}
	if ms, err := strconv.ParseInt(ts, 10, 64); err != nil || ms <= 0 {
		t.Fatalf("x-request-timestamp %q", ts)
	}
	raw, err := base64.StdEncoding.DecodeString(sig)
	if len(sig) != 88 || err != nil || len(raw) != ed25519.SignatureSize {
		t.Fatalf("x-request-signature %q: want 88 base64 characters of 64 bytes (%v)", sig, err)
	}
	requestID, err := session.RequestID()
	if err != nil {
		t.Fatal(err)
	}
	public, err := base58Decode(requestID)
	if err != nil || len(public) != ed25519.PublicKeySize {
		t.Fatalf("requestId %q is not base58 of 32 bytes: %v", requestID, err)
	}
	message := "v1," + id + "," + ts + "," + body
	if !ed25519.Verify(public, []byte(message), raw) {
		t.Fatalf("the signature does not verify over %q", message)
	}
}

func TestSignBody(t *testing.T) {
	session, err := perps.NewSession()
	if err != nil {
		t.Fatal(err)
	}
	defer session.Close()
	body := `{"symbol":"BTC-USD","order_id":"42"}`

	before := time.Now().UnixMilli()
	headers, err := session.SignBody(body)
	if err != nil {
		t.Fatal(err)
	}
	checkSignature(t, session, headers, body)
	if ms, _ := strconv.ParseInt(headers["x-request-timestamp"], 10, 64); ms < before-1000 || ms > time.Now().UnixMilli()+1000 {
		t.Fatalf("x-request-timestamp %d is not the local clock", ms)
	}

	const id = "0f8fad5b-d9cb-469f-a165-70867728950e"
	at, err := session.SignBodyAt(body, id, 1700000000000)
	if err != nil {
		t.Fatal(err)
	}
	checkSignature(t, session, at, body)
	again, _ := session.SignBodyAt(body, id, 1700000000000)
	if at["x-request-id"] != id || at["x-request-timestamp"] != "1700000000000" ||
		again["x-request-signature"] != at["x-request-signature"] {
		t.Fatalf("SignBodyAt %v: want the given id and time, deterministic", at)
	}

	var sig perps.BodySignature
	if err := session.SignBodyInto([]byte(body), &sig); err != nil {
		t.Fatal(err)
	}
	checkSignature(t, session, sig.Headers(), body)
	if err := session.SignBodyInto(nil, &sig); err != nil { // empty body
		t.Fatal(err)
	}
	checkSignature(t, session, sig.Headers(), "")
	err = session.SignBodyInto([]byte{0xff, 0xfe}, &sig)
	asPerpsError(t, err, perps.InvalidArgument)
}

// ---------------------------------------------------------------------------------------
// Misuse: errors, never crashes
// ---------------------------------------------------------------------------------------

func TestMisuse(t *testing.T) {
	client, err := perps.NewClient("http://127.0.0.1:9/auth", "http://127.0.0.1:9/perps", "")
	if err != nil {
		t.Fatal(err)
	}
	session, err := perps.NewSession()
	if err != nil {
		t.Fatal(err)
	}

	// Closed handles: every call is an InvalidArgument error; Close is idempotent.
	if err := session.Close(); err != nil {
		t.Fatal(err)
	}
	_ = session.Close()
	_, err = session.SignBody("{}")
	asPerpsError(t, err, perps.InvalidArgument)
	_, err = session.RequestID()
	asPerpsError(t, err, perps.InvalidArgument)
	var sig perps.BodySignature
	asPerpsError(t, session.SignBodyInto([]byte("{}"), &sig), perps.InvalidArgument)
	_, err = client.NewOrder(session, order)
	asPerpsError(t, err, perps.InvalidArgument)
	_, err = client.NewOrder(nil, order)
	asPerpsError(t, err, perps.InvalidArgument)
	var nilSession *perps.Session
	_, err = nilSession.Token()
	asPerpsError(t, err, perps.InvalidArgument)
	_ = nilSession.Close()
	_ = client.Close()
	_ = client.Close()
	_, err = client.SyncTime()
	asPerpsError(t, err, perps.InvalidArgument)

	// Arguments the library refuses, and one Go refuses before C would cut it short.
	live, _ := perps.NewSession()
	defer live.Close()
	asPerpsError(t, live.SignBodyInto([]byte("{}"), nil), perps.InvalidArgument)
	_, err = live.SignBody("{}\x00tail")
	asPerpsError(t, err, perps.InvalidArgument)
	_, err = perps.WalletAddress("eth", walletKey)
	asPerpsError(t, err, perps.InvalidArgument)
	_, err = perps.WalletAddress("bsc", "0x1234")
	asPerpsError(t, err, perps.InvalidKey)
	_, err = perps.NewClient("http://127.0.0.1:9", "http://127.0.0.1:9", `{"no_such_option":1}`)
	asPerpsError(t, err, perps.InvalidArgument)
	_, err = perps.SessionFromAPIKey("token", "not a key")
	asPerpsError(t, err, perps.InvalidKey)
	c2, _ := perps.NewClient("http://127.0.0.1:9/auth", "http://127.0.0.1:9/perps", "")
	defer c2.Close()
	_, err = c2.Login(live, "0x00", 3600) // no pending challenge
	asPerpsError(t, err, perps.InvalidState)

	// Handles never closed are freed by their finalizers.
	for i := 0; i < 100; i++ {
		_, _ = perps.NewSession()
	}
	runtime.GC()
	runtime.GC()
}

// One client and one session shared by goroutines that place orders, valid and invalid: the
// errors come back to the goroutine that made the call, whatever OS thread it ran on.
func TestConcurrentOrders(t *testing.T) {
	sb, client, session := signedIn(t)
	bad := strings.Replace(order, `"side":"buy"`, `"side":"up"`, 1)
	var wg sync.WaitGroup
	for g := 0; g < 8; g++ {
		wg.Add(1)
		go func(g int) {
			defer wg.Done()
			for i := 0; i < 10; i++ {
				if g%2 == 0 {
					if _, err := client.NewOrder(session, order); err != nil {
						t.Errorf("goroutine %d order %d: %v", g, i, err)
					}
				} else {
					runtime.Gosched()
					_, err := client.NewOrder(session, bad)
					var perr *perps.Error
					if !errors.As(err, &perr) || perr.Code != perps.InvalidOrder || !strings.Contains(perr.Message, "side") {
						t.Errorf("goroutine %d order %d: want InvalidOrder naming side, got %v", g, i, err)
					}
				}
			}
		}(g)
	}
	wg.Wait()
	if stats := sb.stats(t); stats["orders_accepted"] != 40 || stats["orders_received"] != 40 {
		t.Fatalf("sandbox stats %v: want 40 orders received and accepted", stats)
	}
}

// Close while other goroutines sign: Close waits for calls in flight, later calls fail
// cleanly.
func TestCloseWhileInUse(t *testing.T) {
	session, err := perps.NewSession()
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	var mu sync.Mutex
	ok, closed := 0, 0
	for g := 0; g < 4; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var sig perps.BodySignature
			body := []byte(order)
			for i := 0; i < 500; i++ {
				err := session.SignBodyInto(body, &sig)
				mu.Lock()
				if err == nil {
					ok++
				} else if perr := (*perps.Error)(nil); errors.As(err, &perr) && perr.Code == perps.InvalidArgument {
					closed++
				} else {
					t.Errorf("SignBodyInto: %v", err)
				}
				mu.Unlock()
			}
		}()
	}
	time.Sleep(2 * time.Millisecond)
	_ = session.Close()
	wg.Wait()
	t.Logf("%d signatures before Close, %d refused after", ok, closed)
	if ok+closed != 2000 {
		t.Fatalf("ok %d + closed %d", ok, closed)
	}
}

func TestVersion(t *testing.T) {
	want := fmt.Sprintf("%d.%d.%d", perps.VersionMajor, perps.VersionMinor, perps.VersionPatch)
	if got := perps.Version(); got != want {
		t.Fatalf("Version() = %q, header says %q", got, want)
	}
	if perps.InvalidOrder.String() != "PERPS_INVALID_ORDER" || perps.Code(77).String() != "PERPS_CODE_77" {
		t.Fatal("Code.String")
	}
}
