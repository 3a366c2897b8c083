#!/bin/sh
# SPDX-License-Identifier: MIT
#
# check-pkgconfig.sh BUILDDIR CONSUMER_C
#
# Installs the build into a temporary DESTDIR, builds CONSUMER_C with nothing but
# `pkg-config --cflags --libs libdmaio` (PKG_CONFIG_PATH and PKG_CONFIG_SYSROOT_DIR pointing
# into the DESTDIR), runs it against the installed library (LD_LIBRARY_PATH) with DMAIO_PATH
# unset and set to each path that must serve a memfd buffer, and checks that every run gives
# byte-identical output files.
# Env: CC (compiler), MESON (meson command), CONSUMER_CFLAGS (e.g. -fsanitize=... to match a
# sanitized build). Exit 0 ok, 1 failure, 77 tools missing.
set -u
# under the valgrind test setup: run the script itself natively (valgrind would report the
# shell's own leaks)
case "${LD_PRELOAD:-}" in *vgpreload*) exec env -u LD_PRELOAD sh "$0" "$@" ;; esac

build=${1:?usage: check-pkgconfig.sh BUILDDIR CONSUMER_C}
consumer=${2:?}
cc=${CC:-cc}
meson=${MESON:-meson}

for t in "$cc" pkg-config cmp; do
	command -v "$t" >/dev/null 2>&1 || { echo "SKIP: $t not found"; exit 77; }
done
# MESON may be "python3 /path/meson.py": check the first word
set -- $meson
command -v "$1" >/dev/null 2>&1 || { echo "SKIP: meson not found ($meson)"; exit 77; }

tmp=$(mktemp -d "${TMPDIR:-/var/tmp}/dmaio-pc.XXXXXX") || exit 1
trap 'rm -rf "$tmp"' EXIT
dest=$tmp/dest

if ! $meson install -C "$build" --destdir "$dest" --no-rebuild >"$tmp/install.log" 2>&1; then
	echo "FAIL: meson install --destdir failed:"
	cat "$tmp/install.log"
	exit 1
fi
pc=$(find "$dest" -name libdmaio.pc | head -n 1)
[ -n "$pc" ] || { echo "FAIL: no libdmaio.pc installed"; find "$dest"; exit 1; }
header=$(find "$dest" -name dmaio.h | head -n 1)
[ -n "$header" ] || { echo "FAIL: dmaio.h not installed"; exit 1; }
so=$(find "$dest" -name 'libdmaio.so.*' | head -n 1)
[ -n "$so" ] || { echo "FAIL: libdmaio.so.* not installed"; exit 1; }
libdir=$(dirname "$so")
[ -e "$libdir/libdmaio.so" ] || { echo "FAIL: no libdmaio.so development link in $libdir"; exit 1; }

PKG_CONFIG_PATH=$(dirname "$pc")${PKG_CONFIG_PATH:+:$PKG_CONFIG_PATH}
PKG_CONFIG_SYSROOT_DIR=$dest
export PKG_CONFIG_PATH PKG_CONFIG_SYSROOT_DIR
if ! flags=$(pkg-config --cflags --libs libdmaio 2>"$tmp/pc.err"); then
	echo "FAIL: pkg-config --cflags --libs libdmaio:"
	cat "$tmp/pc.err"
	cat "$pc"
	exit 1
fi
echo "# pkg-config --cflags --libs libdmaio: $flags"
# The header needs neither liburing nor libdrm: the flags must come without their .pc files
# (PKG_CONFIG_LIBDIR: the installed libdmaio.pc and nothing else), and a static link must still
# be told about them (Libs.private).
if ! nflags=$(PKG_CONFIG_LIBDIR=$(dirname "$pc") PKG_CONFIG_PATH= \
	pkg-config --cflags --libs libdmaio 2>"$tmp/pc.err"); then
	echo "FAIL: pkg-config --cflags --libs libdmaio needs other .pc files (liburing, libdrm?):"
	cat "$tmp/pc.err"
	cat "$pc"
	exit 1
fi
[ "$nflags" = "$flags" ] || { echo "FAIL: flags differ without the system .pc files: $nflags"; exit 1; }
if grep -q '^Requires' "$pc"; then
	echo "FAIL: libdmaio.pc has a Requires line (its header needs no other package):"
	cat "$pc"
	exit 1
fi
sflags=$(PKG_CONFIG_LIBDIR=$(dirname "$pc") PKG_CONFIG_PATH= pkg-config --static --libs libdmaio)
echo "# pkg-config --static --libs libdmaio: $sflags"
case " $sflags " in *" -pthread "*) ;; *) echo "FAIL: --static misses -pthread"; exit 1 ;; esac
pkg-config --modversion libdmaio | sed 's/^/# version /'

# shellcheck disable=SC2086
if ! "$cc" -std=gnu11 -Wall -Werror ${CONSUMER_CFLAGS:-} -o "$tmp/pc-consumer" "$consumer" $flags \
	>"$tmp/cc.log" 2>&1; then
	echo "FAIL: the consumer does not build with the pkg-config flags alone:"
	cat "$tmp/cc.log"
	exit 1
fi
# it must run against the installed copy, not the build tree
unset PKG_CONFIG_PATH PKG_CONFIG_SYSROOT_DIR
rc=0
for p in "" udmabuf-direct bounce-direct buffered sendfile; do
	mkdir -p "$tmp/run"
	if [ -n "$p" ]; then
		out=$(env -u DMAIO_DEBUG DMAIO_PATH="$p" LD_LIBRARY_PATH="$libdir" \
			"$tmp/pc-consumer" "$tmp/run" 2>&1)
	else
		out=$(env -u DMAIO_DEBUG -u DMAIO_PATH LD_LIBRARY_PATH="$libdir" \
			"$tmp/pc-consumer" "$tmp/run" 2>&1)
	fi
	st=$?
	echo "$out"
	[ $st = 0 ] || { echo "FAIL: consumer with DMAIO_PATH=${p:-(unset)} exit $st"; rc=1; }
done
# the consumer must have used the installed library
if LD_LIBRARY_PATH="$libdir" ldd "$tmp/pc-consumer" 2>/dev/null | grep -q libdmaio; then
	LD_LIBRARY_PATH="$libdir" ldd "$tmp/pc-consumer" | grep libdmaio | grep -q "$dest" ||
		{ echo "FAIL: the consumer does not load the installed libdmaio"; rc=1; }
fi
for p in udmabuf-direct bounce-direct buffered sendfile; do
	if [ -f "$tmp/run/out.$p" ] && [ -f "$tmp/run/out.auto" ]; then
		cmp "$tmp/run/out.auto" "$tmp/run/out.$p" ||
			{ echo "FAIL: output with DMAIO_PATH=$p differs from the default"; rc=1; }
	else
		echo "FAIL: output of DMAIO_PATH=$p missing"
		rc=1
	fi
done
[ $rc = 0 ] && echo "ok: installed library usable through pkg-config, all paths identical"
exit $rc
