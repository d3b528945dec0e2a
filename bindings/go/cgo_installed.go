//go:build !perps_intree

package perps

// The default link: libperps as installed (`make install`, the release tarball, a
// distribution package), found through pkg-config's perps.pc. For a prefix pkg-config does
// not search by default, set PKG_CONFIG_PATH=<prefix>/lib/pkgconfig; for one the dynamic
// loader does not search either, add a run path when building:
// CGO_LDFLAGS="-Wl,-rpath,$(pkg-config --variable=libdir perps)".

// #cgo pkg-config: perps
import "C"
