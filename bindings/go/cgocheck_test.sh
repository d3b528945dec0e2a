#!/usr/bin/env bash
# Tests of cgocheck.sh: the form of cgo's full pointer checks chosen for each `go version`
# line (faked: Go 1.19 as on Debian 12, and the Go 1.21+ that a newer machine may have), the
# caller's GODEBUG=cgocheck=2 taken out of GODEBUG, and, with the Go installed here, that the
# chosen form does turn the checks on: a program storing a Go pointer into C memory is
# stopped by it and runs to its end without it (so a form that checks nothing fails here).
# Usage: bash bindings/go/cgocheck_test.sh   (scripts/test.sh runs it before the Go tests)
set -uo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(cd "$here/../.." && pwd)"
source "$here/cgocheck.sh"
passed=0 failed=0

check() { # check NAME WANT GOT
    if [[ $2 == "$3" ]]; then
        passed=$((passed + 1))
    else
        failed=$((failed + 1))
        echo "FAIL $1: want '$2', got '$3'" >&2
    fi
}

for case in \
    "go version go1.19.8 linux/amd64|GODEBUG=cgocheck=2" \
    "go version go1.19 linux/amd64|GODEBUG=cgocheck=2" \
    "go version go1.20.14 linux/arm64|GODEBUG=cgocheck=2" \
    "go version go1.21.0 linux/amd64|GOEXPERIMENT=cgocheck2" \
    "go version go1.21rc2 linux/amd64|GOEXPERIMENT=cgocheck2" \
    "go version go1.22.5 linux/amd64|GOEXPERIMENT=cgocheck2" \
    "go version go1.100.1 linux/amd64|GOEXPERIMENT=cgocheck2" \
    "go version devel go1.24-3f4a5b6c Tue Jan 2 10:00:00 2024 +0000 linux/amd64|GOEXPERIMENT=cgocheck2" \
    "go version go1.9.7 linux/amd64|GODEBUG=cgocheck=2" \
    "go version go2.0 linux/amd64|GOEXPERIMENT=cgocheck2"; do
    line=${case%|*} want=${case##*|}
    check "setting for '$line'" "$want" "$(go_cgocheck2_setting "$line")"
done
for line in "" "go version" "bash: go: command not found" "go version gox.y linux/amd64"; do
    got=$(go_cgocheck2_setting "$line" 2>/dev/null; echo "status $?")
    check "no version in '$line'" "status 2" "$got"
done

# The caller's request, taken out of GODEBUG with the rest kept; none when not asked.
for case in "cgocheck=2|0|unset" "madvdontneed=1,cgocheck=2|0|madvdontneed=1" \
    "cgocheck=2,x=1,y=2|0|x=1,y=2" "x=1|1|x=1" "cgocheck=1|1|cgocheck=1" "|1|unset"; do
    IFS='|' read -r given want_status want_left <<<"$case"
    got=$(
        if [[ -n $given ]]; then export GODEBUG=$given; else unset GODEBUG; fi
        go_cgocheck2_take_request
        echo "$? ${GODEBUG-unset}"
    )
    check "request in GODEBUG='$given'" "$want_status $want_left" "$got"
done
got=$(
    export GODEBUG=x=1 GOEXPERIMENT=loopvar
    go_cgocheck2_apply GODEBUG=cgocheck=2 && go_cgocheck2_apply GOEXPERIMENT=cgocheck2
    echo "$GODEBUG $GOEXPERIMENT"
)
check "apply keeps what was there" "x=1,cgocheck=2 loopvar,cgocheck2" "$got"

# The form chosen for the Go installed here, tried: the checks stop a program that stores a
# Go pointer into C memory, which runs to its end without them.
if command -v go >/dev/null; then
    probe=$(mktemp -d)
    trap 'rm -rf "$probe"' EXIT
    cat >"$probe/go.mod" <<'EOF'
module cgocheckprobe

go 1.19
EOF
    cat >"$probe/main.go" <<'EOF'
package main

// #include <stdlib.h>
import "C"

import (
	"fmt"
	"unsafe"
)

func main() {
	slot := (*unsafe.Pointer)(C.malloc(C.size_t(unsafe.Sizeof(uintptr(0)))))
	*slot = unsafe.Pointer(new(int)) // allowed by the default checks, not by cgocheck=2's
	fmt.Println("stored")
}
EOF
    export GOCACHE="$root/target/go/cache" GOPATH="$root/target/go/path" GOPROXY=off CGO_ENABLED=1
    unset GODEBUG GOEXPERIMENT
    setting=$(go_cgocheck2_setting "$(go version)")
    (cd "$probe" && go build -o plain . && env "$setting" go build -o checked .) ||
        { echo "cgocheck_test.sh: the probe did not build" >&2; exit 1; }
    check "without the checks ($(go version))" "stored" "$("$probe/plain" 2>&1)"
    got=$(env "$setting" "$probe/checked" 2>&1)
    check "with $setting ($(go version))" "stopped" \
        "$([[ $got == *"Go pointer stored into non-Go memory"* ]] && echo stopped || echo "$got")"
else
    echo "cgocheck_test.sh: no go here; the forms were checked, not tried" >&2
fi

echo "$passed passed, $failed failed"
((failed == 0))
