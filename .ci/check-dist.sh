#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# .ci/check-dist.sh [BUILDDIR]
#
# The release tarball: `meson dist --no-tests --formats xztar` from BUILDDIR (default build/; a
# temporary one when that is not configured) makes BUILDDIR/meson-dist/libdmaio-VERSION.tar.xz
# from the committed tree (git archive of HEAD: uncommitted changes are not in it, and this
# script says so). Then,
# from that tarball alone, unpacked in a temporary directory, with the network unavailable:
#   1. it holds the fallback wraps and their release tarballs (subprojects/packagecache/) and
#      no build directory or extracted subproject;
#   2. meson setup (--wrap-mode=nodownload), meson compile and `meson test --suite host` pass;
#   3. the forced fallbacks (liburing, cmocka) configure from the tarball's packagecache.
# The network: as root, every step runs in a new network namespace (`unshare -n`: no interface
# but loopback); otherwise (or where unshare is refused, e.g. unprivileged containers) the proxy
# variables point to a closed local port, so a download attempt fails at once instead of
# succeeding. The VM suites are not run from the tarball (they boot a kernel built from
# /usr/src, which the tarball does not carry); the tarball's build runs only suite host.
# Called by tests/run after .ci/check-setups.sh. Exit 0 when all passes, 1 otherwise.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${1:-$root/build}
start=$SECONDS

tmp=$(mktemp -d "${TMPDIR:-/var/tmp}/dmaio-dist.XXXXXX")
keep=0
trap '[ $keep = 1 ] || rm -rf "$tmp"' EXIT
fails=0
ok() { echo "ok: $*"; }
bad() { echo "FAIL: $*"; fails=$((fails + 1)); }
die() { echo "check-dist: $*"; keep=1; echo "check-dist: logs kept in $tmp"; exit 1; }

git -C "$root" rev-parse --git-dir >/dev/null 2>&1 ||
	die "$root is not a git checkout (meson dist archives the committed tree)"
head=$(git -C "$root" rev-parse --short HEAD)
ndirty=$(git -C "$root" status --porcelain --untracked-files=no | wc -l)
if [ "$ndirty" != 0 ]; then
	echo "check-dist: NOTE: $ndirty tracked files have uncommitted changes: they are not in the" \
		"tarball, which is HEAD ($head)"
fi

# --- the tarball -------------------------------------------------------------------------------
if [ ! -f "$build/meson-private/build.dat" ]; then
	build=$tmp/build-dist
	meson setup "$build" "$root" --wrap-mode=nodownload -Dtests=disabled -Dexamples=false \
		-Dbench=false >"$tmp/dist-setup.log" 2>&1 || { tail -n 30 "$tmp/dist-setup.log"; die "meson setup for meson dist failed"; }
fi
t0=$SECONDS
meson dist -C "$build" --no-tests --formats xztar --allow-dirty >"$tmp/dist.log" 2>&1 ||
	{ tail -n 30 "$tmp/dist.log"; die "meson dist failed"; }
tarball=$(sed -n 's/^Created \(.*\.tar\.xz\)$/\1/p' "$tmp/dist.log" | tail -n 1)
if [ -z "$tarball" ] || [ ! -f "$tarball" ]; then cat "$tmp/dist.log"; die "meson dist made no .tar.xz"; fi
ok "meson dist: $tarball ($(du -k "$tarball" | cut -f1) KiB, HEAD $head, $((SECONDS - t0)) s)"

# --- 1. what it holds --------------------------------------------------------------------------
tar -tJf "$tarball" >"$tmp/list"
top=$(head -n 1 "$tmp/list" | cut -d/ -f1)
missing=()
for f in meson.build meson_options.txt subprojects/liburing.wrap subprojects/cmocka.wrap; do
	grep -qxF "$top/$f" "$tmp/list" || missing+=("$f")
done
# every file of the packagecache and packagefiles git tracks at HEAD
while IFS= read -r f; do
	grep -qxF "$top/$f" "$tmp/list" || missing+=("$f")
done < <(git -C "$root" ls-tree -r --name-only HEAD -- subprojects/packagecache subprojects/packagefiles)
if ((${#missing[@]})); then
	bad "the tarball lacks: ${missing[*]}"
else
	ok "the tarball holds the wraps, subprojects/packagecache ($(grep -c "^$top/subprojects/packagecache/." "$tmp/list") files) and packagefiles"
fi
stray=$(grep -E "^$top/(build[^/]*|subprojects/(liburing|cmocka)[^/]*)/" "$tmp/list" | head -n 3 || true)
[ -z "$stray" ] || bad "the tarball holds build output or extracted subprojects: $stray"

# --- the network -------------------------------------------------------------------------------
offline_env=(env http_proxy=http://127.0.0.1:9 https_proxy=http://127.0.0.1:9
	HTTP_PROXY=http://127.0.0.1:9 HTTPS_PROXY=http://127.0.0.1:9 ALL_PROXY=http://127.0.0.1:9
	ftp_proxy=http://127.0.0.1:9 no_proxy= NO_PROXY= GIT_ALLOW_PROTOCOL=file)
if [ "$(id -u)" = 0 ] && unshare -n true 2>/dev/null; then
	# loopback up where `ip` exists (nothing leaves the namespace either way)
	offline=(unshare -n -- sh -c 'command -v ip >/dev/null && ip link set lo up 2>/dev/null; exec "$@"' sh
		"${offline_env[@]}")
	# the namespace really is cut off: a connect to a public address fails at once
	if "${offline[@]}" timeout 5 bash -c 'exec 3<>/dev/tcp/192.0.2.1/80' 2>/dev/null; then
		die "unshare -n: a TCP connect still succeeds"
	fi
	echo "check-dist: network: none (unshare -n), wrap mode nodownload"
	how=offline
else
	offline=("${offline_env[@]}")
	echo "check-dist: network: present (not root, or unshare -n refused): downloads refused by" \
		"--wrap-mode=nodownload and proxies set to a closed port"
	how='with downloads refused'
fi

# --- 2. configure, build, host suite from the tarball alone -------------------------------------
tar -xJf "$tarball" -C "$tmp"
src=$tmp/$top
b=$tmp/build
t0=$SECONDS
if ! "${offline[@]}" meson setup "$b" "$src" --wrap-mode=nodownload >"$tmp/setup.log" 2>&1; then
	tail -n 40 "$tmp/setup.log"
	bad "tarball: meson setup failed"
elif ! "${offline[@]}" meson compile -C "$b" >"$tmp/compile.log" 2>&1; then
	tail -n 40 "$tmp/compile.log"
	bad "tarball: meson compile failed"
else
	ok "tarball: configured and built $how ($((SECONDS - t0)) s)"
	t0=$SECONDS
	# timeouts doubled: a busy 2-core machine is slow, not wrong (tests/run ran these tests in
	# build/ with the normal timeouts); suite slow (abi-selftest: six library builds of mutated
	# copies of the same sources) ran in build/ and is not repeated here
	if "${offline[@]}" meson test -C "$b" --suite host --no-suite slow --timeout-multiplier 2 \
		--print-errorlogs \
		>"$tmp/test.log" 2>&1; then
		ok "tarball: suite host passed $how ($(grep -E '^Ok:' "$tmp/test.log" | tr -s ' '), $((SECONDS - t0)) s)"
	else
		grep -E '^ *[0-9]+/[0-9]+ .*(FAIL|TIMEOUT|ERROR)' "$tmp/test.log" || true
		tail -n 60 "$tmp/test.log"
		bad "tarball: suite host failed ($((SECONDS - t0)) s)"
	fi
fi

# --- 3. the fallbacks from the tarball's packagecache --------------------------------------------
t0=$SECONDS
if "${offline[@]}" meson setup "$tmp/build-fb" "$src" --wrap-mode=nodownload \
	--force-fallback-for=liburing,cmocka -Dexamples=false -Dbench=false \
	>"$tmp/fb.log" 2>&1 &&
	grep -qE 'Dependency liburing.* found: YES 2\.3' "$tmp/build-fb/meson-logs/meson-log.txt" &&
	grep -qE 'Dependency cmocka.* found: YES 1\.1\.5' "$tmp/build-fb/meson-logs/meson-log.txt"; then
	ok "tarball: forced fallbacks (liburing 2.3, cmocka 1.1.5) configure $how ($((SECONDS - t0)) s)"
else
	tail -n 30 "$tmp/fb.log"
	bad "tarball: the forced fallbacks do not configure $how"
fi

if [ $fails = 0 ]; then
	echo "check-dist: $tarball configures, builds and passes suite host $how ($((SECONDS - start)) s)"
	exit 0
fi
keep=1
echo "check-dist: $fails failures ($((SECONDS - start)) s); logs and the unpacked tree kept in $tmp"
exit 1
