package perps_test

// Every C copy the binding makes of a secret argument (WalletAddress, WalletSign, Signin,
// SessionFromAPIKey, string and []byte forms) holds the secret when made and is all zeros
// just before it is freed, before the call returns: on success, on a key the library
// refuses, on a payload it refuses, and on a NUL the binding refuses after the secret was
// copied (a NUL inside the secret itself is refused before any copy is made). The caller's
// []byte is never changed. The wipes show in no result, so the test watches each copy
// through the package's test hook (export_test.go, SetSecretCopyHook), pairing the "made"
// and "freeing" of each copy by its C address.

import (
	"fmt"
	"strings"
	"sync"
	"testing"
	"unsafe"

	perps "libperps/bindings/go"
)

// copySeen is one event of the hook: what the copy held at that moment, and where it is.
type copySeen struct {
	event, name string
	held        []byte
	at          uintptr
}

// watchSecretCopies runs call with the hook set and returns what it showed.
func watchSecretCopies(t *testing.T, call func() error) ([]copySeen, error) {
	t.Helper()
	var mu sync.Mutex
	var seen []copySeen
	restore := perps.SetSecretCopyHook(func(event, name string, c []byte) {
		mu.Lock()
		defer mu.Unlock()
		seen = append(seen, copySeen{event, name, append([]byte(nil), c...), uintptr(unsafe.Pointer(&c[0]))})
	})
	err := call()
	restore()
	mu.Lock()
	defer mu.Unlock()
	return seen, err
}

// secret is an expected copy: the argument's name and the secret.
type secret struct{ name, value string }

// checkCopies: a copy of each expected secret was made holding it (and its NUL), in order,
// then each same copy was seen all zeros before its free; nothing else.
func checkCopies(t *testing.T, seen []copySeen, want []secret) {
	t.Helper()
	if len(seen) != 2*len(want) {
		t.Fatalf("%d events for %d secrets: %+v", len(seen), len(want), seen)
	}
	for i, w := range want {
		made, freeing := seen[i], seen[len(want)+i]
		if made.event != "made" || made.name != w.name || string(made.held) != w.value+"\x00" {
			t.Fatalf("copy %d: %s of %s holding %q, want made of %s holding the secret", i, made.event, made.name, made.held, w.name)
		}
		if freeing.event != "freeing" || freeing.name != w.name || freeing.at != made.at {
			t.Fatalf("copy %d: then %s of %s at %#x, want its own freeing (at %#x)", i, freeing.event, freeing.name, freeing.at, made.at)
		}
		if len(freeing.held) != len(w.value)+1 || strings.Trim(string(freeing.held), "\x00") != "" {
			t.Fatalf("copy %d (%s) before its free: %q, want %d zeros", i, w.name, freeing.held, len(w.value)+1)
		}
	}
}

// asBytes calls call with each value as a []byte and checks none was changed.
func asBytes(t *testing.T, values []string, call func(b [][]byte) error) error {
	t.Helper()
	b := make([][]byte, len(values))
	for i, v := range values {
		b[i] = []byte(v)
	}
	err := call(b)
	for i, v := range values {
		if string(b[i]) != v {
			t.Fatalf("the caller's slice %d changed: %q", i, b[i])
		}
	}
	return err
}

func TestEverySecretCopyIsWipedBeforeItIsFreed(t *testing.T) {
	_, client, payloadSession := connected(t, "")
	payload, err := client.PrepareSignin(payloadSession, "bsc", walletAddress)
	if err != nil {
		t.Fatal(err)
	}
	keyNUL := walletKey[:10] + "\x00" + walletKey[10:]

	// Each call, with its secrets as strings (bytes false) or []byte; the secrets it must copy.
	walletAddr := func(key string) func(bool) error {
		return func(bytes bool) error {
			if !bytes {
				_, err := perps.WalletAddress("bsc", key)
				return err
			}
			return asBytes(t, []string{key}, func(b [][]byte) error {
				_, err := perps.WalletAddressBytes("bsc", b[0])
				return err
			})
		}
	}
	walletSign := func(key, payload string) func(bool) error {
		return func(bytes bool) error {
			if !bytes {
				_, err := perps.WalletSign("bsc", key, payload)
				return err
			}
			return asBytes(t, []string{key}, func(b [][]byte) error {
				_, err := perps.WalletSignBytes("bsc", b[0], payload)
				return err
			})
		}
	}
	fromAPIKey := func(token, key string) func(bool) error {
		return func(bytes bool) error {
			var s *perps.Session
			err := asBytes(t, []string{token, key}, func(b [][]byte) (err error) {
				if bytes {
					s, err = perps.SessionFromAPIKeyBytes(b[0], b[1])
				} else {
					s, err = perps.SessionFromAPIKey(token, key)
				}
				return err
			})
			if s != nil {
				s.Close()
			}
			return err
		}
	}
	signin := func(key string) func(bool) error {
		return func(bytes bool) error {
			s, err := perps.NewSession()
			if err != nil {
				return fmt.Errorf("NewSession: %w", err)
			}
			defer s.Close()
			if !bytes {
				_, err = client.Signin(s, "bsc", key, 3600)
				return err
			}
			return asBytes(t, []string{key}, func(b [][]byte) error {
				_, err := client.SigninBytes(s, "bsc", b[0], 3600)
				return err
			})
		}
	}
	cases := []struct {
		label string
		call  func(bytes bool) error
		code  perps.Code // OK: the call succeeds
		want  []secret
	}{
		{"WalletAddress", walletAddr(walletKey), perps.OK, []secret{{"privateKey", walletKey}}},
		{"WalletAddress of a refused key", walletAddr("0x1234"), perps.InvalidKey, []secret{{"privateKey", "0x1234"}}},
		{"WalletAddress of a key holding a NUL", walletAddr(keyNUL), perps.InvalidArgument, nil},
		{"WalletSign", walletSign(walletKey, payload), perps.OK, []secret{{"privateKey", walletKey}}},
		{"WalletSign of a refused key", walletSign("0x1234", payload), perps.InvalidKey, []secret{{"privateKey", "0x1234"}}},
		{"WalletSign of a bad payload", walletSign(walletKey, "{"), perps.InvalidArgument, []secret{{"privateKey", walletKey}}},
		// the key is copied before the payload is refused for its NUL
		{"WalletSign of a payload holding a NUL", walletSign(walletKey, payload+"\x00"), perps.InvalidArgument, []secret{{"privateKey", walletKey}}},
		{"SessionFromAPIKey", fromAPIKey("tok", rfc8032SeedB58), perps.OK,
			[]secret{{"apiToken", "tok"}, {"ed25519PrivateKey", rfc8032SeedB58}}},
		{"SessionFromAPIKey of a refused key", fromAPIKey("tok", "not-a-key"), perps.InvalidKey,
			[]secret{{"apiToken", "tok"}, {"ed25519PrivateKey", "not-a-key"}}},
		// the token is copied before the key is refused for its NUL
		{"SessionFromAPIKey of a key holding a NUL", fromAPIKey("tok", rfc8032SeedB58+"\x00"), perps.InvalidArgument,
			[]secret{{"apiToken", "tok"}}},
		{"Signin", signin(walletKey), perps.OK, []secret{{"walletKey", walletKey}}},
		{"Signin of a refused key", signin("0x1234"), perps.InvalidKey, []secret{{"walletKey", "0x1234"}}},
		{"Signin of a key holding a NUL", signin(keyNUL), perps.InvalidArgument, nil},
	}
	for _, c := range cases {
		for _, bytes := range []bool{false, true} {
			form := "string"
			if bytes {
				form = "[]byte"
			}
			t.Run(c.label+" ("+form+")", func(t *testing.T) {
				seen, err := watchSecretCopies(t, func() error { return c.call(bytes) })
				if c.code == perps.OK {
					if err != nil {
						t.Fatalf("want success: %v", err)
					}
				} else {
					asPerpsError(t, err, c.code)
				}
				checkCopies(t, seen, c.want)
			})
		}
	}
}
