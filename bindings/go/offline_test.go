package perps_test

// The offline helpers through the Go binding, each checked against an independent truth:
// WrapSolanaSignature against a signature Go's crypto/ed25519 makes with the RFC 8032 test
// key (and the known answer tests/c/fixtures.h shares), ChallengeVerify against the shared
// challenge fixture (tests/c/fixtures.h CHALLENGE_JWS, made and checked by
// tests/python/test_challenge.py), whose ES256 signature Go's crypto/ecdsa verifies here with
// P-256's published generator point, the certs' key.

import (
	"bytes"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/elliptic"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"math/big"
	"strings"
	"testing"

	perps "libperps/bindings/go"
)

const (
	// RFC 8032 test 1: the seed, and its public key in base58 (the Solana address, and the
	// requestId of a session with this key).
	rfc8032Seed    = "9d61b19deffd5a60ba844af492ec2cc44449c5697b326919703bac031cae7f60"
	rfc8032SeedB58 = "BbMQkQYZspmkytduTWvXEtc4mMURjsekJDvty2WtKeSb"
	rfc8032Address = "FVen3X669xLzsi6N2V91DoiyzHzg1uAgqiT8jZ9nS96Z"
	solPayload     = `{"message":"sign me please","requestId":"x"}`
	// The login signature of solPayload by that key (tests/c/fixtures.h SOL_LOGIN_SIG).
	solLoginSig = "eyJpbnB1dCI6eyJtZXNzYWdlIjoic2lnbiBtZSBwbGVhc2UiLCJyZXF1ZXN0SWQiOiJ4In0sIm91dHB1dCI6eyJzaWdu" +
		"ZWRNZXNzYWdlIjpbMTE1LDEwNSwxMDMsMTEwLDMyLDEwOSwxMDEsMzIsMTEyLDEwOCwxMDEsOTcsMTE1LDEwMV0sInNp" +
		"Z25hdHVyZSI6WzczLDE2OCwyMDYsMzEsNzAsNzQsMjU1LDE0NywyNDIsMjQ3LDIzMCw4OSwxMzEsMjksMTUwLDk4LDE4" +
		"MCwzOCwxMzgsMTU4LDI0LDIxOSwyMDcsOTMsMTIwLDEzMiw1Niw4Niw2MSwyNSwyMTksOSw4Niw3MywyNDQsOTUsNjIs" +
		"MTUxLDIzMiwxMzUsMTgxLDEwLDEwLDIzLDQ0LDE4LDc3LDIyLDE1NCwyNTIsMTc5LDMxLDE0OSwyNTAsMzEsMTk3LDE5" +
		"MCw3NywyMTMsMjcsNjQsMTU4LDE1Miw3XSwiYWNjb3VudCI6eyJwdWJsaWNLZXkiOlsyMTUsOTAsMTUyLDEsMTMwLDE3" +
		"NywxMCwxODMsMjEzLDc1LDI1NCwyMTEsMjAxLDEwMCw3LDU4LDE0LDIyNSwxMTQsMjQzLDIxOCwxNjYsMzUsMzcsMTc1" +
		"LDIsMjYsMTA0LDI0Nyw3LDgxLDI2XX19fQ=="

	// The shared challenge fixture: an ES256 JWS by the key whose public key is CERTS' point.
	challengeCerts = `{"keys":[{"kty":"EC","crv":"P-256","kid":"k1","alg":"ES256","use":"sig",` +
		`"x":"axfR8uEsQkf4vOblY6RA8ncDfYEt6zOg9KE5RdiYwpY","y":"T-NC4v4af5uO5-tKfA-eFivOM1drMV7Oy7ZAaDe_UfU"}]}`
	challengeNow = 1700000060 // issued at 1700000000, expires at 1700000180
	challengeExp = 1700000180
	challengeJWS = "eyJhbGciOiJFUzI1NiIsInR5cCI6IkpXVCIsImtpZCI6ImsxIn0." +
		"eyJkb21haW4iOiJ2ZW51ZS5leGFtcGxlIiwidXJpIjoiaHR0cHM6Ly92ZW51ZS5leGFtcGxlIiwic3RhdGVtZW50" +
		"IjoiU2lnbiBpbiB0byB0aGUgdGVzdCB2ZW51ZS4iLCJ2ZXJzaW9uIjoiMSIsImNoYWluSWQiOjU2LCJub25jZSI6" +
		"Im4wbmNlMTcwMDAwMDAwMCIsImFkZHJlc3MiOiIweGYzOUZkNmU1MWFhZDg4RjZGNGNlNmFCODgyNzI3OWNmZkZi" +
		"OTIyNjYiLCJyZXF1ZXN0SWQiOiJGVmVuM1g2Njl4THpzaTZOMlY5MURvaXl6SHpnMXVBZ3FpVDhqWjluUzk2WiIs" +
		"Imlzc3VlZEF0IjoiMjAyMy0xMS0xNFQyMjoxMzoyMFoiLCJtZXNzYWdlIjoidmVudWUuZXhhbXBsZSB3YW50cyB5" +
		"b3UgdG8gc2lnbiBpbiB3aXRoIHlvdXIgRXRoZXJldW0gYWNjb3VudDpcbjB4ZjM5RmQ2ZTUxYWFkODhGNkY0Y2U2" +
		"YUI4ODI3Mjc5Y2ZmRmI5MjI2NlxuXG5TaWduIGluIHRvIHRoZSB0ZXN0IHZlbnVlLlxuXG5VUkk6IGh0dHBzOi8v" +
		"dmVudWUuZXhhbXBsZVxuVmVyc2lvbjogMVxuQ2hhaW4gSUQ6IDU2XG5Ob25jZTogbjBuY2UxNzAwMDAwMDAwXG5J" +
		"c3N1ZWQgQXQ6IDIwMjMtMTEtMTRUMjI6MTM6MjBaXG5SZXF1ZXN0IElEOiBGVmVuM1g2Njl4THpzaTZOMlY5MURv" +
		"aXl6SHpnMXVBZ3FpVDhqWjluUzk2WiIsImlhdCI6MTcwMDAwMDAwMCwiZXhwIjoxNzAwMDAwMTgwfQ." +
		"j7s3-ScJacb5e3lu0q5TJvr3MyTNNtntLIbHb2cXwRmNDXskIyMRLeiCP5nHfuSuH6ljHcKZ-BJD3epZ1fBxbw"
)

func TestWrapSolanaSignature(t *testing.T) {
	seed, _ := hex.DecodeString(rfc8032Seed)
	key := ed25519.NewKeyFromSeed(seed)
	public, err := base58Decode(rfc8032Address)
	if err != nil || !bytes.Equal(public, key.Public().(ed25519.PublicKey)) {
		t.Fatalf("the address is not the key's public key: %v", err)
	}
	// A signature made outside the library (as a hardware wallet would), by crypto/ed25519.
	raw := ed25519.Sign(key, []byte("sign me please"))
	wrapped, err := perps.WrapSolanaSignature(solPayload, rfc8032Address, raw)
	if err != nil {
		t.Fatal(err)
	}
	if wrapped != solLoginSig {
		t.Fatalf("WrapSolanaSignature = %s, want the known answer", wrapped)
	}
	// What it wraps: the payload unchanged, the message's bytes, the signature, the key.
	text, err := base64.StdEncoding.DecodeString(wrapped)
	if err != nil {
		t.Fatal(err)
	}
	var login struct {
		Input  json.RawMessage `json:"input"`
		Output struct {
			SignedMessage []int `json:"signedMessage"`
			Signature     []int `json:"signature"`
			Account       struct {
				PublicKey []int `json:"publicKey"`
			} `json:"account"`
		} `json:"output"`
	}
	if err := json.Unmarshal(text, &login); err != nil {
		t.Fatalf("%s: %v", text, err)
	}
	asBytes := func(v []int) []byte {
		out := make([]byte, len(v))
		for i, b := range v {
			out[i] = byte(b)
		}
		return out
	}
	if string(login.Input) != solPayload || string(asBytes(login.Output.SignedMessage)) != "sign me please" ||
		!bytes.Equal(asBytes(login.Output.Signature), raw) || !bytes.Equal(asBytes(login.Output.Account.PublicKey), public) {
		t.Fatalf("wrapped login %s", text)
	}
	// The library's own signing gives the same login signature (Ed25519 is deterministic).
	if signed, err := perps.WalletSign("solana", rfc8032SeedB58, solPayload); err != nil || signed != wrapped {
		t.Fatalf("WalletSign = %q, %v", signed, err)
	}

	flipped := append([]byte(nil), raw...)
	flipped[0] ^= 1
	_, err = perps.WrapSolanaSignature(solPayload, rfc8032Address, flipped)
	asPerpsError(t, err, perps.VerificationFailed)
	_, err = perps.WrapSolanaSignature(solPayload, rfc8032Address, raw[:63])
	asPerpsError(t, err, perps.InvalidArgument)
	_, err = perps.WrapSolanaSignature(`{"message":"another message"}`, rfc8032Address, raw)
	asPerpsError(t, err, perps.VerificationFailed)
}

func TestChallengeVerify(t *testing.T) {
	parts := strings.Split(challengeJWS, ".")
	if len(parts) != 3 {
		t.Fatalf("the fixture is not a compact JWS")
	}
	payload, err := base64.RawURLEncoding.DecodeString(parts[1])
	if err != nil {
		t.Fatal(err)
	}
	// Independently: the certs' key is P-256's generator point, and it verifies the JWS.
	var certs struct {
		Keys []struct{ X, Y string } `json:"keys"`
	}
	if err := json.Unmarshal([]byte(challengeCerts), &certs); err != nil || len(certs.Keys) != 1 {
		t.Fatalf("certs: %v", err)
	}
	x, _ := base64.RawURLEncoding.DecodeString(certs.Keys[0].X)
	y, _ := base64.RawURLEncoding.DecodeString(certs.Keys[0].Y)
	public := &ecdsa.PublicKey{Curve: elliptic.P256(), X: new(big.Int).SetBytes(x), Y: new(big.Int).SetBytes(y)}
	if public.X.Cmp(elliptic.P256().Params().Gx) != 0 || public.Y.Cmp(elliptic.P256().Params().Gy) != 0 {
		t.Fatal("the certs' key is not the generator point")
	}
	signature, _ := base64.RawURLEncoding.DecodeString(parts[2])
	digest := sha256.Sum256([]byte(parts[0] + "." + parts[1]))
	if len(signature) != 64 || !ecdsa.Verify(public, digest[:], new(big.Int).SetBytes(signature[:32]),
		new(big.Int).SetBytes(signature[32:])) {
		t.Fatal("crypto/ecdsa does not verify the fixture")
	}

	// Its requestId is the key of a session made from the RFC 8032 seed.
	session, err := perps.SessionFromAPIKey("tok", rfc8032SeedB58)
	if err != nil {
		t.Fatal(err)
	}
	defer session.Close()
	requestID, err := session.RequestID()
	if err != nil || requestID != rfc8032Address {
		t.Fatalf("RequestID = %q, %v", requestID, err)
	}
	got, err := perps.ChallengeVerify(challengeJWS, challengeCerts, requestID, "bsc", walletAddress, challengeNow)
	if err != nil {
		t.Fatal(err)
	}
	if got != string(payload) {
		t.Fatalf("ChallengeVerify = %s, want the payload %s", got, payload)
	}
	if claims := object(t, got); claims["requestId"] != requestID || claims["address"] != walletAddress {
		t.Fatalf("claims %v", claims)
	}

	for _, c := range []struct {
		name, requestID, address, jws string
		now                           int64
	}{
		{"expired", requestID, walletAddress, challengeJWS, challengeExp},
		{"another wallet", requestID, "0x1111111111111111111111111111111111111111", challengeJWS, challengeNow},
		{"another session", "8bK4GzmYb2Xc7m9vHuJnWWwvQ6RkU2z3t1ePqAa7sXYZ", walletAddress, challengeJWS, challengeNow},
		{"signature changed", requestID, walletAddress, parts[0] + "." + parts[1] + ".A" + parts[2][1:], challengeNow},
	} {
		_, err := perps.ChallengeVerify(c.jws, challengeCerts, c.requestID, "bsc", c.address, c.now)
		if perr := asPerpsError(t, err, perps.VerificationFailed); perr.MayHaveReachedVenue {
			t.Fatalf("%s: %+v", c.name, perr)
		}
	}
	_, err = perps.ChallengeVerify(challengeJWS, "not json", requestID, "bsc", walletAddress, challengeNow)
	asPerpsError(t, err, perps.BadResponse)
}
