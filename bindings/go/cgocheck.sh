# Sourced by run.sh and cgocheck_test.sh: how to turn on cgo's full pointer checks
# ("cgocheck=2": every Go pointer stored into C memory is checked, not only the arguments of
# each call) for the Go in use.
#
# Go 1.19 and 1.20 (Debian 12 has 1.19) take them at run time as GODEBUG=cgocheck=2, and
# reject GOEXPERIMENT=cgocheck2 as an unknown experiment. From Go 1.21 they are built in by
# GOEXPERIMENT=cgocheck2, and GODEBUG=cgocheck=2 stops every Go program at its start, the go
# command included ("cgocheck > 1 mode is no longer supported at runtime. Use
# GOEXPERIMENT=cgocheck2 at build time instead."). So the form follows `go version`.

# go_cgocheck2_setting 'go version go1.21.5 linux/amd64' prints the one assignment to make:
# GODEBUG=cgocheck=2 (Go 1.x, x < 21) or GOEXPERIMENT=cgocheck2 (Go 1.21 and later, devel
# builds and release candidates by their version's number). A line with no Go version in it
# is an error (exit 2), never a guess.
go_cgocheck2_setting() {
    local line=$1
    if [[ ! $line =~ [[:space:]]go([0-9]+)\.([0-9]+) ]]; then
        echo "cgocheck.sh: no Go version (goN.M) in '$line'" >&2
        return 2
    fi
    local major=$((10#${BASH_REMATCH[1]})) minor=$((10#${BASH_REMATCH[2]}))
    if ((major > 1 || minor >= 21)); then
        echo GOEXPERIMENT=cgocheck2
    else
        echo GODEBUG=cgocheck=2
    fi
}

# go_cgocheck2_apply SETTING: adds SETTING (as printed above) to the exported GODEBUG or
# GOEXPERIMENT, keeping what they already hold.
go_cgocheck2_apply() {
    case "$1" in
        GODEBUG=cgocheck=2) export GODEBUG="${GODEBUG:+$GODEBUG,}cgocheck=2" ;;
        GOEXPERIMENT=cgocheck2) export GOEXPERIMENT="${GOEXPERIMENT:+$GOEXPERIMENT,}cgocheck2" ;;
        *) echo "cgocheck.sh: unknown setting '$1'" >&2; return 2 ;;
    esac
}

# go_cgocheck2_take_request: when GODEBUG asks for cgocheck=2 (how callers ask for the checks,
# whatever their Go: scripts/test.sh, the README), removes that item from GODEBUG (unset when
# nothing is left), so that the go command can start on Go 1.21 and later, and succeeds;
# fails (status 1) when GODEBUG does not ask.
go_cgocheck2_take_request() {
    local item kept=() asked=1
    local -a items
    IFS=, read -r -a items <<<"${GODEBUG:-}"
    for item in "${items[@]}"; do
        if [[ $item == cgocheck=2 ]]; then asked=0; else kept+=("$item"); fi
    done
    if ((asked == 0)); then
        if ((${#kept[@]} > 0)); then
            GODEBUG=$(IFS=,; echo "${kept[*]}")
            export GODEBUG
        else
            unset GODEBUG
        fi
    fi
    return $asked
}
