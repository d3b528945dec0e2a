//go:build perps_intree

package perps

// The in-tree link (go build -tags perps_intree), for working on libperps itself: the
// header in include/ and target/release/libperps.so of this repository (`make lib`), with
// a run path to it, so tests run without LD_LIBRARY_PATH or an installed copy.

// #cgo CFLAGS: -I${SRCDIR}/../../include
// #cgo LDFLAGS: -L${SRCDIR}/../../target/release -lperps -Wl,-rpath,${SRCDIR}/../../target/release
import "C"
