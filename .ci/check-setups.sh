#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# .ci/check-setups.sh [--quick]
#
# The build setups a packager or a new user meets (issue 14, item 1), each from a copy of the
# source tree (tracked and untracked files, no build directories, no extracted subprojects) and
# offline (--wrap-mode=nodownload: the fallbacks must come from subprojects/packagecache/):
#   1. the fallbacks forced (--force-fallback-for=liburing,cmocka): configures, builds, the
#      fallback liburing 2.3 is linked into libdmaio, and the host suite passes
#      (--quick: configure and build only);
#   2. no cmocka (PKG_CONFIG_LIBDIR without cmocka.pc): configures with the tests disabled;
#      -Dtests=enabled there fails with an error naming cmocka; -Dtests=disabled configures;
#   3. the udev rule: -Dudevrulesdir=DIR installs it there, -Dudev=disabled installs none,
#      -Dudev=enabled without udev.pc or a directory fails.
# Called by tests/run. Exit 0 when every setup behaves, 1 otherwise.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
quick=0
[ "${1:-}" = --quick ] && quick=1

tmp=$(mktemp -d "${TMPDIR:-/var/tmp}/dmaio-setups.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
fails=0
ok() { echo "ok: $*"; }
bad() { echo "FAIL: $*"; fails=$((fails + 1)); }

# the source: what git would commit, not what is lying around
mkdir "$tmp/src"
(cd "$root" && git ls-files -z --cached --others --exclude-standard | tar --null -T - -cf -) |
	tar -xf - -C "$tmp/src"
for d in "$tmp"/src/subprojects/*/; do
	case $d in */packagefiles/ | */packagecache/) ;; *) rm -rf "$d" ;; esac
done
src=$tmp/src

# --- 1. forced fallbacks ---------------------------------------------------------------------
fb=$tmp/build-fb
if meson setup "$fb" "$src" --wrap-mode=nodownload --force-fallback-for=liburing,cmocka \
	>"$tmp/fb-setup.log" 2>&1; then
	ok "forced fallbacks: configured"
	grep -qE 'Dependency liburing.* found: YES 2\.3' "$fb/meson-logs/meson-log.txt" ||
		bad "forced fallbacks: liburing is not the fallback's 2.3"
	grep -qE 'Dependency cmocka.* found: YES 1\.1\.5' "$fb/meson-logs/meson-log.txt" ||
		bad "forced fallbacks: cmocka is not the fallback's 1.1.5"
	if meson compile -C "$fb" >"$tmp/fb-compile.log" 2>&1; then
		ok "forced fallbacks: built"
		so=$(find "$fb/lib" -maxdepth 1 -type f -regextype posix-extended \
			-regex '.*/libdmaio\.so\.[0-9]+\.[0-9]+\.[0-9]+' | head -n 1)
		if [ -z "$so" ]; then
			bad "forced fallbacks: no libdmaio.so.X.Y.Z built"
		elif readelf -d "$so" | grep -q 'NEEDED.*liburing'; then
			bad "forced fallbacks: $so still needs the system liburing"
		else
			ok "forced fallbacks: liburing linked into libdmaio"
		fi
		if [ $quick = 0 ]; then
			if meson test -C "$fb" --suite host --print-errorlogs >"$tmp/fb-test.log" 2>&1; then
				ok "forced fallbacks: host suite passed ($(grep -E '^Ok:' "$tmp/fb-test.log" | tr -s ' '))"
			else
				tail -n 40 "$tmp/fb-test.log"
				bad "forced fallbacks: host suite failed"
			fi
		fi
	else
		tail -n 40 "$tmp/fb-compile.log"
		bad "forced fallbacks: build failed"
	fi
else
	tail -n 40 "$tmp/fb-setup.log"
	bad "forced fallbacks: meson setup failed"
fi

# --- 2. no cmocka ----------------------------------------------------------------------------
# every .pc file the system has, but cmocka's
pcdir=$tmp/pc-nocmocka
mkdir "$pcdir"
syspath=$(pkg-config --variable pc_path pkg-config)
IFS=: read -r -a dirs <<<"$syspath"
for d in "${dirs[@]}"; do
	[ -d "$d" ] || continue
	for f in "$d"/*.pc; do
		[ -e "$f" ] || continue
		b=$(basename "$f")
		[ "$b" = cmocka.pc ] || [ -e "$pcdir/$b" ] || ln -s "$f" "$pcdir/$b"
	done
done
nc() { PKG_CONFIG_LIBDIR=$pcdir PKG_CONFIG_PATH= CMAKE_PREFIX_PATH=/nonexistent meson setup "$@"; }
if nc "$tmp/nc" "$src" --wrap-mode=nodownload -Dudev=disabled >"$tmp/nc.log" 2>&1; then
	if meson introspect "$tmp/nc" --tests | python3 -c '
import json, sys
names = [t["name"] for t in json.load(sys.stdin)]
sys.exit(1 if "api" in names or "data-memfd" in names else 0)'; then
		ok "no cmocka: configured with the tests disabled"
	else
		bad "no cmocka: configured, but the cmocka tests are still there"
	fi
else
	tail -n 20 "$tmp/nc.log"
	bad "no cmocka: meson setup failed (the tests must be disabled, not required)"
fi
if nc "$tmp/nc-en" "$src" --wrap-mode=nofallback -Dtests=enabled >"$tmp/nc-en.log" 2>&1; then
	bad "no cmocka, -Dtests=enabled, no fallback: configured (must fail)"
elif grep -qi 'cmocka' "$tmp/nc-en.log"; then
	ok "no cmocka, -Dtests=enabled: fails naming cmocka"
else
	tail -n 10 "$tmp/nc-en.log"
	bad "no cmocka, -Dtests=enabled: failed without naming cmocka"
fi
if meson setup "$tmp/td" "$src" --wrap-mode=nodownload -Dtests=disabled >"$tmp/td.log" 2>&1; then
	ok "-Dtests=disabled: configured"
else
	tail -n 20 "$tmp/td.log"
	bad "-Dtests=disabled: meson setup failed"
fi

# --- 3. the udev rule ------------------------------------------------------------------------
installed() { meson introspect "$1" --installed; }
if meson setup "$tmp/ud" "$src" --wrap-mode=nodownload -Dtests=disabled -Dexamples=false \
	-Dbench=false -Dudevrulesdir=/opt/dmaio-test/rules.d >"$tmp/ud.log" 2>&1 &&
	installed "$tmp/ud" | grep -q '"/opt/dmaio-test/rules.d/60-dmaio.rules"'; then
	ok "-Dudevrulesdir: the rule goes there"
else
	bad "-Dudevrulesdir: the rule is not installed there"
fi
if meson setup "$tmp/ud0" "$src" --wrap-mode=nodownload -Dtests=disabled -Dexamples=false \
	-Dbench=false -Dudev=disabled -Dudevrulesdir=/opt/dmaio-test/rules.d >"$tmp/ud0.log" 2>&1 &&
	! installed "$tmp/ud0" | grep -q '60-dmaio.rules'; then
	ok "-Dudev=disabled: no rule installed"
else
	bad "-Dudev=disabled: a rule is installed (or setup failed)"
fi
if pkg-config --exists udev; then
	echo "# udev.pc present ($(pkg-config --variable udevdir udev)): -Dudev=enabled check skipped"
elif meson setup "$tmp/ud1" "$src" --wrap-mode=nodownload -Dtests=disabled -Dudev=enabled \
	>"$tmp/ud1.log" 2>&1; then
	bad "-Dudev=enabled without udev.pc or udevrulesdir: configured (must fail)"
else
	ok "-Dudev=enabled without udev.pc or udevrulesdir: fails"
fi

if [ $fails = 0 ]; then
	echo "check-setups: all setups behave"
	exit 0
fi
echo "check-setups: $fails failures"
exit 1
