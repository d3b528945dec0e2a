# libperps, built and installed like a C library.
#
#   make  |  make lib                      the C libraries: target/release/libperps.so, .a
#   make sandbox                           target/release/perps-sandbox
#   make lib sandbox GLIBC=2.17            the same for glibc 2.17 and newer (below), in
#                                          target/x86_64-unknown-linux-gnu/release
#   make install [PREFIX=/usr/local] [DESTDIR=/staging]
#   make uninstall [PREFIX=/usr/local] [DESTDIR=/staging]
#
# The crate declares only the Rust library (rlib), so a Rust program that depends on it
# builds no C artifacts; `make lib` builds them (the cargo-c convention):
#   cargo rustc -p perps --lib --release --crate-type cdylib,staticlib -- -C link-arg=-Wl,-soname,...
# Every script and document builds the C libraries with `make lib`, never with cargo directly.
#
# SONAME: libperps.so.0.<minor> while the version is 0.x (any 0.x minor release may break the
# ABI; patch releases do not), libperps.so.<major> from 1.0 on. `make lib` also puts a
# libperps.so.<soversion> -> libperps.so symlink beside the library, so programs linked
# against the build tree (-Ltarget/release -lperps and an rpath) find it.
#
# `make install` builds the library and the sandbox venue, then installs
#   $(PREFIX)/include/perps.h, perps.hpp        the C header and the C++17 layer
#   $(PREFIX)/lib/libperps.a                    static library
#   $(PREFIX)/lib/libperps.so.X.Y.Z             shared library, SONAME libperps.so.$(SOVERSION)
#   $(PREFIX)/lib/libperps.so.$(SOVERSION) -> .so.X.Y.Z   what programs load at run time
#   $(PREFIX)/lib/libperps.so   -> .so.$(SOVERSION)       what -lperps finds at link time
#   $(PREFIX)/lib/pkgconfig/perps.pc            `pkg-config --cflags --libs [--static] perps`
#   $(PREFIX)/lib/cmake/perps/perpsConfig.cmake, perpsConfigVersion.cmake
#                                               find_package(perps CONFIG): perps::perps,
#                                               perps::perps_static
#   $(PREFIX)/bin/perps-sandbox                 the sandbox venue (tests, rehearsal)
# DESTDIR stages the files elsewhere (packaging) without changing the paths in perps.pc.
# PC_PREFIX sets perps.pc's prefix= line (default $(PREFIX)); scripts/package.sh uses
# '$${pcfiledir}/../..' so that the tarball's tree works wherever it is unpacked. The CMake
# files find everything relative to themselves.
# After installing into a system directory such as /usr/local/lib, run `ldconfig`.

PREFIX       ?= /usr/local
BINDIR       ?= $(PREFIX)/bin
LIBDIR       ?= $(PREFIX)/lib
INCLUDEDIR   ?= $(PREFIX)/include
PKGCONFIGDIR ?= $(LIBDIR)/pkgconfig
CMAKEDIR     ?= $(LIBDIR)/cmake/perps
PC_PREFIX    ?= $(PREFIX)
CARGO        ?= cargo
INSTALL      ?= install

# GLIBC=2.17 builds for that glibc and every newer one (manylinux2014: RHEL/CentOS 7 and 8,
# Ubuntu 18.04+, Debian 10+, Amazon Linux 2) instead of the build machine's own, whose symbol
# versions (glibc 2.34 on Debian 12) would keep the library off older systems. zig is the
# linker, through cargo-zigbuild (scripts/package.sh installs both from PyPI; ZIGBUILD names
# the command); the code rustc generates is the same. The build goes to
# target/<host triple>/release; `make build-dir` prints where. The packages ship this build.
GLIBC        ?=
ZIGBUILD     ?= cargo-zigbuild
ifeq ($(GLIBC),)
CARGO_BUILD  := $(CARGO)
TARGET_FLAG  :=
CLEAN_TARGET :=
BUILD_DIR    ?= $(or $(CARGO_TARGET_DIR),target)/release
else
HOST_TRIPLE  := $(shell rustc -vV | sed -n 's/^host: //p')
CARGO_BUILD  := $(ZIGBUILD)
TARGET_FLAG  := --target $(HOST_TRIPLE).$(GLIBC)
CLEAN_TARGET := --target $(HOST_TRIPLE)
BUILD_DIR    ?= $(or $(CARGO_TARGET_DIR),target)/$(HOST_TRIPLE)/release
endif

# The version from Cargo.toml (the [package] version is its first `version = "..."` line).
VERSION   := $(shell sed -n 's/^version *= *"\([^"]*\)".*/\1/p' Cargo.toml | head -n 1)
MAJOR     := $(word 1,$(subst ., ,$(VERSION)))
MINOR     := $(word 2,$(subst ., ,$(VERSION)))
SOVERSION := $(if $(filter 0,$(MAJOR)),0.$(MINOR),$(MAJOR))
SONAME    := libperps.so.$(SOVERSION)

# The system libraries a program linked with the static library needs (Libs.private), as
# printed on Linux/glibc by
#   cargo rustc --release --lib --crate-type staticlib -- --print native-static-libs
# Hard-coded because computing it rebuilds the library; set it on the command line elsewhere.
NATIVE_STATIC_LIBS ?= -lgcc_s -lutil -lrt -lpthread -lm -ldl -lc

LIB_DEST   := $(DESTDIR)$(LIBDIR)
INC_DEST   := $(DESTDIR)$(INCLUDEDIR)
PC_DEST    := $(DESTDIR)$(PKGCONFIGDIR)
CMAKE_DEST := $(DESTDIR)$(CMAKEDIR)
BIN_DEST   := $(DESTDIR)$(BINDIR)

# A directory as perps.pc writes it: ${prefix}/... when it is under $(PREFIX).
pc_dir = $(patsubst $(PREFIX)/%,$${prefix}/%,$(1))
# A path relative to another (both absolute; neither needs to exist).
relative = $(shell realpath -m --relative-to="$(2)" "$(1)")
empty :=
space := $(empty) $(empty)

.PHONY: all lib build sandbox build-dir install uninstall
all: lib

CARGO_LIB := $(CARGO_BUILD) rustc -p perps --lib --release $(TARGET_FLAG) --crate-type cdylib,staticlib \
    -- -C link-arg=-Wl,-soname,$(SONAME)

# Always ask cargo: it knows whether the library is up to date. Only the library's crate,
# never the sandbox: this is the build that ships. Should another build have replaced
# libperps.so (a `cargo rustc --crate-type cdylib` without the SONAME), cargo would still call
# ours fresh: the SONAME is checked, and perps rebuilt when it is not there.
lib:
	$(CARGO_LIB)
	@if ! readelf -d "$(BUILD_DIR)/libperps.so" | grep -q 'SONAME.*\[$(SONAME)\]'; then \
	    echo "$(BUILD_DIR)/libperps.so has no SONAME $(SONAME) (another build made it): rebuilding"; \
	    $(CARGO) clean -p perps --release $(CLEAN_TARGET) && $(CARGO_LIB); \
	fi
	ln -sfn libperps.so "$(BUILD_DIR)/$(SONAME)"

build: lib  # the former name

sandbox:
	$(CARGO_BUILD) build --release $(TARGET_FLAG) -p perps-sandbox

build-dir:
	@echo "$(BUILD_DIR)"

install: lib sandbox
	$(INSTALL) -d "$(INC_DEST)" "$(LIB_DEST)" "$(PC_DEST)" "$(CMAKE_DEST)" "$(BIN_DEST)"
	$(INSTALL) -m 644 include/perps.h include/perps.hpp "$(INC_DEST)/"
	$(INSTALL) -m 644 "$(BUILD_DIR)/libperps.a" "$(LIB_DEST)/libperps.a"
	$(INSTALL) -m 755 "$(BUILD_DIR)/libperps.so" "$(LIB_DEST)/libperps.so.$(VERSION)"
	ln -sfn "libperps.so.$(VERSION)" "$(LIB_DEST)/$(SONAME)"
	ln -sfn "$(SONAME)" "$(LIB_DEST)/libperps.so"
	$(INSTALL) -m 755 "$(BUILD_DIR)/perps-sandbox" "$(BIN_DEST)/perps-sandbox"
	sed -e 's|@PREFIX@|$(PC_PREFIX)|' -e 's|@LIBDIR@|$(call pc_dir,$(LIBDIR))|' \
	    -e 's|@INCLUDEDIR@|$(call pc_dir,$(INCLUDEDIR))|' \
	    -e 's|@VERSION@|$(VERSION)|' -e 's|@LIBS_PRIVATE@|$(NATIVE_STATIC_LIBS)|' \
	    perps.pc.in > "$(PC_DEST)/perps.pc"
	chmod 644 "$(PC_DEST)/perps.pc"
	sed -e 's|@CONFIG_TO_PREFIX@|$(call relative,$(PREFIX),$(CMAKEDIR))|' \
	    -e 's|@LIBDIR@|$(call relative,$(LIBDIR),$(PREFIX))|' \
	    -e 's|@INCLUDEDIR@|$(call relative,$(INCLUDEDIR),$(PREFIX))|' \
	    -e 's|@VERSION@|$(VERSION)|' -e 's|@SONAME@|$(SONAME)|' \
	    -e 's|@LIBS_PRIVATE@|$(subst $(space),;,$(strip $(NATIVE_STATIC_LIBS)))|' \
	    cmake/perpsConfig.cmake.in > "$(CMAKE_DEST)/perpsConfig.cmake"
	sed -e 's|@VERSION@|$(VERSION)|' cmake/perpsConfigVersion.cmake.in \
	    > "$(CMAKE_DEST)/perpsConfigVersion.cmake"
	chmod 644 "$(CMAKE_DEST)/perpsConfig.cmake" "$(CMAKE_DEST)/perpsConfigVersion.cmake"

uninstall:
	rm -f "$(INC_DEST)/perps.h" "$(INC_DEST)/perps.hpp" "$(LIB_DEST)/libperps.a" \
	    "$(LIB_DEST)/libperps.so.$(VERSION)" "$(LIB_DEST)/$(SONAME)" \
	    "$(LIB_DEST)/libperps.so" "$(PC_DEST)/perps.pc" "$(BIN_DEST)/perps-sandbox" \
	    "$(CMAKE_DEST)/perpsConfig.cmake" "$(CMAKE_DEST)/perpsConfigVersion.cmake"
	rmdir "$(CMAKE_DEST)" 2>/dev/null || true
