package perps

// Session: one identity (request-signing key, wallet, token), its headers and body
// signatures; and the functions that need no handle (wallet, order, challenge).

/*
#include <perps.h> // angle brackets: found only through -I (in-tree) or pkg-config, never a stray copy beside cgo's temporary files
*/
import "C"

import (
	"bytes"
	"encoding/json"
	"runtime"
	"unsafe"
)

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
	return sessionFromAPIKey(secretString(apiToken), secretString(ed25519PrivateKey))
}

// SessionFromAPIKeyBytes is SessionFromAPIKey with the token and key as UTF-8 bytes, which
// it only reads: wipe them yourself after the call (the session keeps its own copies,
// zeroized when closed). Its C copies are overwritten before it returns, failure included.
func SessionFromAPIKeyBytes(apiToken, ed25519PrivateKey []byte) (*Session, error) {
	return sessionFromAPIKey(secretBytes(apiToken), secretBytes(ed25519PrivateKey))
}

func sessionFromAPIKey(apiToken, ed25519PrivateKey secretArg) (*Session, error) {
	var a cArgs
	defer a.free()
	token, key := apiToken(&a, "apiToken"), ed25519PrivateKey(&a, "ed25519PrivateKey")
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
	return walletAddress(chain, secretString(privateKey))
}

// WalletAddressBytes is WalletAddress with the key as UTF-8 bytes, which it only reads: wipe
// them yourself after the call. Its C copy is overwritten before it returns, failure included.
func WalletAddressBytes(chain string, privateKey []byte) (string, error) {
	return walletAddress(chain, secretBytes(privateKey))
}

func walletAddress(chain string, privateKey secretArg) (string, error) {
	var a cArgs
	defer a.free()
	ch, key := a.str("chain", chain), privateKey(&a, "privateKey")
	if a.err != nil {
		return "", a.err
	}
	var cerr *C.perps_error
	return takeString(C.perps_wallet_address(ch, key, &cerr), cerr)
}

// WalletSignBytes is WalletSign with the key as UTF-8 bytes, which it only reads: wipe them
// yourself after the call. Its C copy is overwritten before it returns, failure included.
func WalletSignBytes(chain string, privateKey []byte, payloadJSON string) (string, error) {
	return walletSign(chain, secretBytes(privateKey), payloadJSON)
}

// WalletSign is the login signature for a sign-in payload (PrepareSignin's result).
func WalletSign(chain, privateKey, payloadJSON string) (string, error) {
	return walletSign(chain, secretString(privateKey), payloadJSON)
}

func walletSign(chain string, privateKey secretArg, payloadJSON string) (string, error) {
	var a cArgs
	defer a.free()
	ch, key, payload := a.str("chain", chain), privateKey(&a, "privateKey"), a.str("payloadJSON", payloadJSON)
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
