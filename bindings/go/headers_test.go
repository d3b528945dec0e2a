package perps_test

// The session's optional headers through the Go binding, as the sandbox venue received them
// (its request log): x-impersonate on every account request, REST and body-signed alike,
// while set, and on none once cleared; a value that would break the header refused unsent.

import (
	"strings"
	"testing"

	perps "libperps/bindings/go"
)

// lastTo is the newest logged request to /api/{endpoint}.
func (sb *sandbox) lastTo(t *testing.T, endpoint string) map[string]interface{} {
	t.Helper()
	logged := sb.requestsTo(t, endpoint)
	if len(logged) == 0 {
		t.Fatalf("no %s request in the venue's log", endpoint)
	}
	return logged[len(logged)-1]
}

func TestImpersonateHeader(t *testing.T) {
	ok := okOf(t)
	sb, client, session := signedIn(t)
	if err := session.SetImpersonate("cv_vault_go"); err != nil {
		t.Fatal(err)
	}
	if info := object(t, ok(session.Info())); info["impersonate"] != "cv_vault_go" {
		t.Fatalf("session info %v", info)
	}
	ok(client.QueryBalance(session, ""))
	placed := object(t, ok(client.NewOrder(session, order)))
	for _, endpoint := range []string{"query_balance", "new_order"} {
		if got := header(sb.lastTo(t, endpoint), "x-impersonate"); got != "cv_vault_go" {
			t.Fatalf("%s: the venue received x-impersonate %q", endpoint, got)
		}
	}
	if got := header(sb.lastTo(t, "new_order"), "x-request-id"); got != placed["request_id"] {
		t.Fatalf("the logged new_order is not ours: x-request-id %q, answer %v", got, placed)
	}

	if err := session.ClearImpersonate(); err != nil {
		t.Fatal(err)
	}
	if info := object(t, ok(session.Info())); info["impersonate"] != nil {
		t.Fatalf("session info after ClearImpersonate %v", info)
	}
	ok(client.QueryBalance(session, ""))
	last := sb.lastTo(t, "query_balance")
	if headers, _ := last["headers"].(map[string]interface{}); headers == nil || headers["authorization"] == nil {
		t.Fatalf("logged request without its headers: %v", last)
	} else if _, sent := headers["x-impersonate"]; sent {
		t.Fatalf("x-impersonate sent after ClearImpersonate: %v", headers)
	}

	before := len(sb.requestsTo(t, ""))
	perr := asPerpsError(t, session.SetImpersonate("cv_1\r\nx-evil: 1"), perps.InvalidArgument)
	if !strings.Contains(perr.Message, "x-impersonate") {
		t.Fatalf("error %+v", perr)
	}
	asPerpsError(t, session.SetImpersonate("cv_\x00x"), perps.InvalidArgument)
	if after := len(sb.requestsTo(t, "")); after != before {
		t.Fatalf("%d requests sent by refused settings", after-before)
	}
}
