package perps_test

// The sandbox venue the tests run against, one per test (target/release/perps-sandbox, or
// $PERPS_SANDBOX), its admin endpoints, and the set-ups most tests share.

import (
	"bufio"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	perps "libperps/bindings/go"
)

type sandbox struct {
	BaseURL  string `json:"base_url"`
	PerpsURL string `json:"perps_url"`
	AdminURL string `json:"admin_url"`
}

func startSandbox(t *testing.T) *sandbox {
	t.Helper()
	bin := os.Getenv("PERPS_SANDBOX")
	if bin == "" {
		bin = filepath.Join("..", "..", "target", "release", "perps-sandbox")
	}
	if _, err := os.Stat(bin); err != nil {
		t.Fatalf("sandbox binary %s: %v (build it: cargo build --release -p perps-sandbox)", bin, err)
	}
	cmd := exec.Command(bin, "--port", "0", "--exit-on-stdin-eof")
	cmd.Stderr = os.Stderr
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		stdin.Close()
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
	})
	line := make(chan string, 1)
	go func() {
		text, _ := bufio.NewReader(stdout).ReadString('\n')
		line <- text
		_, _ = io.Copy(io.Discard, stdout)
	}()
	var sb sandbox
	select {
	case text := <-line:
		if err := json.Unmarshal([]byte(text), &sb); err != nil || sb.BaseURL == "" {
			t.Fatalf("sandbox printed %q: %v", text, err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the sandbox did not print its URLs within 10 s")
	}
	return &sb
}

func (sb *sandbox) setFaults(t *testing.T, faults string) {
	t.Helper()
	resp, err := http.Post(sb.AdminURL+"/faults", "application/json", strings.NewReader(faults))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != 200 {
		body, _ := io.ReadAll(resp.Body)
		t.Fatalf("setting faults %s: HTTP %d %s", faults, resp.StatusCode, body)
	}
}

func (sb *sandbox) stats(t *testing.T) map[string]int {
	t.Helper()
	resp, err := http.Get(sb.AdminURL + "/stats")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	stats := map[string]int{}
	if err := json.NewDecoder(resp.Body).Decode(&stats); err != nil {
		t.Fatal(err)
	}
	return stats
}

// asPerpsError asserts err is a *perps.Error with the code.
func asPerpsError(t *testing.T, err error, code perps.Code) *perps.Error {
	t.Helper()
	var perr *perps.Error
	if !errors.As(err, &perr) {
		t.Fatalf("want a *perps.Error %v, got %T %v", code, err, err)
	}
	if perr.Code != code {
		t.Fatalf("want code %v, got %v (%s)", code, perr.Code, perr.Message)
	}
	return perr
}

// connected starts a sandbox and returns a client of it (with optionsJSON) and a new session,
// not signed in; all three are closed when the test ends.
func connected(t *testing.T, optionsJSON string) (*sandbox, *perps.Client, *perps.Session) {
	t.Helper()
	sb := startSandbox(t)
	client, err := perps.NewClient(sb.BaseURL, sb.PerpsURL, optionsJSON)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = client.Close() })
	session, err := perps.NewSession()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = session.Close() })
	return sb, client, session
}

// signedIn is connected, the session signed in with the bsc test wallet.
func signedIn(t *testing.T) (*sandbox, *perps.Client, *perps.Session) {
	t.Helper()
	sb, client, session := connected(t, "")
	if _, err := client.Signin(session, "bsc", walletKey, 3600); err != nil {
		t.Fatal(err)
	}
	return sb, client, session
}
