# libperps, built and installed like a C library.
#
#   make                                   cargo build --release --lib
#   make install [PREFIX=/usr/local] [DESTDIR=/staging]
#   make uninstall [PREFIX=/usr/local] [DESTDIR=/staging]
#
# `make install` builds the library and the sandbox venue, then installs
#   $(PREFIX)/bin/perps-sandbox                 the sandbox venue (sandbox/README.md)
#   $(PREFIX)/include/perps.h, perps.hpp        the C header and the C++17 layer
#   $(PREFIX)/lib/libperps.a                    static library
#   $(PREFIX)/lib/libperps.so.X.Y.Z             shared library, SONAME libperps.so.X (build.rs)
#   $(PREFIX)/lib/libperps.so.X -> .so.X.Y.Z    what programs load at run time
#   $(PREFIX)/lib/libperps.so   -> .so.X        what -lperps finds at link time
#   $(PREFIX)/lib/pkgconfig/perps.pc            `pkg-config --cflags --libs [--static] perps`
# DESTDIR stages the files elsewhere (packaging) without changing the paths in perps.pc.
# After installing into a system directory such as /usr/local/lib, run `ldconfig`.

PREFIX       ?= /usr/local
BINDIR       ?= $(PREFIX)/bin
LIBDIR       ?= $(PREFIX)/lib
INCLUDEDIR   ?= $(PREFIX)/include
PKGCONFIGDIR ?= $(LIBDIR)/pkgconfig
CARGO        ?= cargo
INSTALL      ?= install
BUILD_DIR    ?= $(or $(CARGO_TARGET_DIR),target)/release

# The version from Cargo.toml (the [package] version is its first `version = "..."` line).
VERSION := $(shell sed -n 's/^version *= *"\([^"]*\)".*/\1/p' Cargo.toml | head -n 1)
MAJOR   := $(firstword $(subst ., ,$(VERSION)))

# The system libraries a program linked with the static library needs (Libs.private), as
# printed on Linux/glibc by
#   cargo rustc --release --lib --crate-type staticlib -- --print native-static-libs
# Hard-coded because computing it rebuilds the library; set it on the command line elsewhere.
NATIVE_STATIC_LIBS ?= -lgcc_s -lutil -lrt -lpthread -lm -ldl -lc

BIN_DEST := $(DESTDIR)$(BINDIR)
LIB_DEST := $(DESTDIR)$(LIBDIR)
INC_DEST := $(DESTDIR)$(INCLUDEDIR)
PC_DEST  := $(DESTDIR)$(PKGCONFIGDIR)

.PHONY: all build build-sandbox install uninstall
all: build

# Always ask cargo: it knows whether the library is up to date. The library alone: the
# sandbox venue is its own crate and is never linked into it.
build:
	$(CARGO) build --release --lib

# The sandbox venue (its own crate): a paper-trading venue on loopback for rehearsals.
build-sandbox:
	$(CARGO) build --release -p perps-sandbox

install: build build-sandbox
	$(INSTALL) -d "$(BIN_DEST)" "$(INC_DEST)" "$(LIB_DEST)" "$(PC_DEST)"
	$(INSTALL) -m 755 "$(BUILD_DIR)/perps-sandbox" "$(BIN_DEST)/perps-sandbox"
	$(INSTALL) -m 644 include/perps.h include/perps.hpp "$(INC_DEST)/"
	$(INSTALL) -m 644 "$(BUILD_DIR)/libperps.a" "$(LIB_DEST)/libperps.a"
	$(INSTALL) -m 755 "$(BUILD_DIR)/libperps.so" "$(LIB_DEST)/libperps.so.$(VERSION)"
	ln -sfn "libperps.so.$(VERSION)" "$(LIB_DEST)/libperps.so.$(MAJOR)"
	ln -sfn "libperps.so.$(MAJOR)" "$(LIB_DEST)/libperps.so"
	sed -e 's|@PREFIX@|$(PREFIX)|' -e 's|@LIBDIR@|$(LIBDIR)|' -e 's|@INCLUDEDIR@|$(INCLUDEDIR)|' \
	    -e 's|@VERSION@|$(VERSION)|' -e 's|@LIBS_PRIVATE@|$(NATIVE_STATIC_LIBS)|' \
	    perps.pc.in > "$(PC_DEST)/perps.pc"
	chmod 644 "$(PC_DEST)/perps.pc"

uninstall:
	rm -f "$(BIN_DEST)/perps-sandbox"
	rm -f "$(INC_DEST)/perps.h" "$(INC_DEST)/perps.hpp" "$(LIB_DEST)/libperps.a" \
	    "$(LIB_DEST)/libperps.so.$(VERSION)" "$(LIB_DEST)/libperps.so.$(MAJOR)" \
	    "$(LIB_DEST)/libperps.so" "$(PC_DEST)/perps.pc"
