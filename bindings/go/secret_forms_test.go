package perps_test

// The []byte variants of every secret argument (WalletAddressBytes, WalletSignBytes,
// SessionFromAPIKeyBytes, Client.SigninBytes) give what the string forms give — the same
// result for a good key, the same error (code and message) for an empty one, one holding a
// NUL and one the library refuses — and never modify the caller's slice (the caller wipes
// it). Bytes that are not UTF-8 are the library's InvalidArgument naming the argument.
// Independent truths: the test wallet's address, the RFC 8032 key's public key and known
// Solana login signature, and crypto/ed25519 verifying a body signed by a session made from
// that key's bytes.

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"

	perps "libperps/bindings/go"
)

var secretKeys = []struct{ label, key string }{
	{"the test key", walletKey},
	{"an empty key", ""},
	{"a NUL inside", walletKey[:10] + "\x00" + walletKey[10:]},
	{"a refused key", "0x1234"},
	{"a non-ASCII key", "é€😀"},
}

// outcome is a call's result or its error (code and message) as text.
func outcome(out string, err error) string {
	var perr *perps.Error
	if errors.As(err, &perr) {
		return fmt.Sprintf("error %v %s", perr.Code, perr.Message)
	}
	if err != nil {
		return "error " + err.Error()
	}
	return "ok " + out
}

// sameAsString checks, for each key, that call with the []byte form gives what it gives with
// the string form (success for the test key only) and leaves the slice as it was.
func sameAsString(t *testing.T, what string, call func(key string, b []byte, asBytes bool) (string, error)) {
	for _, k := range secretKeys {
		t.Run(what+" of "+k.label, func(t *testing.T) {
			want := outcome(call(k.key, nil, false))
			if strings.HasPrefix(want, "ok ") != (k.key == walletKey) {
				t.Fatalf("string form: %s", want)
			}
			b := []byte(k.key)
			if got := outcome(call("", b, true)); got != want {
				t.Fatalf("[]byte form: %s, string form: %s", got, want)
			}
			if string(b) != k.key {
				t.Fatalf("the caller's slice changed: %q", b)
			}
		})
	}
}

func TestSecretBytesWalletAddress(t *testing.T) {
	sameAsString(t, "WalletAddress", func(key string, b []byte, asBytes bool) (string, error) {
		if asBytes {
			return perps.WalletAddressBytes("bsc", b)
		}
		return perps.WalletAddress("bsc", key)
	})
	if address, err := perps.WalletAddressBytes("bsc", []byte(walletKey)); err != nil || address != walletAddress {
		t.Fatalf("WalletAddressBytes of the test key: %q, %v", address, err)
	}
	bad := []byte("0x\xffa")
	_, err := perps.WalletAddressBytes("bsc", bad)
	if perr := asPerpsError(t, err, perps.InvalidArgument); !strings.Contains(perr.Message, "private_key is not valid UTF-8") {
		t.Fatalf("not UTF-8: %q", perr.Message)
	}
	if !bytes.Equal(bad, []byte("0x\xffa")) {
		t.Fatalf("the caller's slice changed: %q", bad)
	}
	if signed, err := perps.WalletSignBytes("solana", []byte(rfc8032SeedB58), solPayload); err != nil || signed != solLoginSig {
		t.Fatalf("WalletSignBytes of the RFC 8032 key: %q, %v", signed, err)
	}
}

func TestSecretBytesSessionFromAPIKey(t *testing.T) {
	state := func(s *perps.Session, err error) (string, error) {
		if err != nil {
			return "", err
		}
		defer s.Close()
		id, _ := s.RequestID()
		token, _ := s.Token()
		headers, err := s.SignBodyAt(`{"a":1}`, "0b4f4a3e-8c1d-4f6e-9a2b-3c4d5e6f7a8b", 1700000000000)
		text, _ := json.Marshal(headers)
		return id + " " + token + " " + string(text), err
	}
	for i, pair := range [][2]string{{"tok", rfc8032SeedB58}, {"", rfc8032SeedB58}, {"tok", ""}, {"to\x00k", rfc8032SeedB58},
		{"tok", rfc8032SeedB58 + "\x00"}, {"tok", "not-a-key"}} {
		want := outcome(state(perps.SessionFromAPIKey(pair[0], pair[1])))
		if strings.HasPrefix(want, "ok ") != (i == 0) {
			t.Fatalf("pair %d, string form: %s", i, want)
		}
		token, key := []byte(pair[0]), []byte(pair[1])
		if got := outcome(state(perps.SessionFromAPIKeyBytes(token, key))); got != want {
			t.Fatalf("pair %d: []byte form %s, string form %s", i, got, want)
		}
		if string(token) != pair[0] || string(key) != pair[1] {
			t.Fatalf("pair %d: the caller's slices changed", i)
		}
	}
	session, err := perps.SessionFromAPIKeyBytes([]byte("tok"), []byte(rfc8032SeedB58))
	if err != nil {
		t.Fatal(err)
	}
	defer session.Close()
	if id, err := session.RequestID(); err != nil || id != rfc8032Address {
		t.Fatalf("request id %q, %v: want the RFC 8032 public key", id, err)
	}
	headers, err := session.SignBody(order)
	if err != nil {
		t.Fatal(err)
	}
	checkSignature(t, session, headers, order)
}

func TestSecretBytesSigninAndWalletSign(t *testing.T) {
	_, client, session := connected(t, "")
	payload, err := client.PrepareSignin(session, "bsc", walletAddress)
	if err != nil {
		t.Fatal(err)
	}
	sameAsString(t, "WalletSign", func(key string, b []byte, asBytes bool) (string, error) {
		if asBytes {
			return perps.WalletSignBytes("bsc", b, payload)
		}
		return perps.WalletSign("bsc", key, payload)
	})
	// Each form signs in a session of its own; the outcome is what the session then holds.
	sameAsString(t, "Signin", func(key string, b []byte, asBytes bool) (string, error) {
		s, err := perps.NewSession()
		if err != nil {
			return "", err
		}
		defer s.Close()
		if asBytes {
			_, err = client.SigninBytes(s, "bsc", b, 3600)
		} else {
			_, err = client.Signin(s, "bsc", key, 3600)
		}
		if err != nil {
			return "", err
		}
		info, err := s.Info()
		if !strings.Contains(info, `"has_token":true`) || !strings.Contains(info, walletAddress) {
			return info, fmt.Errorf("not signed in as the test wallet: %s", info)
		}
		return "signed in as the test wallet", err
	})
	key := []byte(walletKey)
	if _, err := client.SigninBytes(session, "bsc", key, 3600); err != nil {
		t.Fatal(err)
	}
	answer, err := client.NewOrder(session, order)
	if err != nil || !strings.Contains(answer, `"code":0`) {
		t.Fatalf("an order after SigninBytes: %s, %v", answer, err)
	}
}
