#!/bin/sh
# SPDX-License-Identifier: MIT
#
# check-coverage-selftest.sh CHECK_COVERAGE MAPFILE TESTDIR
#
# check-coverage.sh must pass on a copy of the test sources, and fail, naming the symbol, when
#   - the map exports a function no test calls,
#   - every call of an exported function is gone from the tests (for the first, a middle and
#     the last symbol of the map), even when the name is still in a comment, a string, a
#     longer identifier, or a call in the shared helpers (common.c).
# Exit 0 when every case came out as it should, 1 otherwise, 77 in the test VM (DMAIO_TEST_VM=1)
# or when the sources are not here.
set -u
check=${1:?usage: check-coverage-selftest.sh CHECK_COVERAGE MAPFILE TESTDIR}
map=${2:?}
dir=${3:?}
# a check of the sources: the host's (in the test VM, where the shell and awk run emulated, it
# would take minutes)
if [ "${DMAIO_TEST_VM:-0}" = 1 ] || [ ! -f "$map" ] || [ ! -d "$dir" ]; then
	echo "SKIP: a check of the sources, run on the host (test VM, or $map or $dir absent)"
	exit 77
fi
tmp=$(mktemp -d) || exit 1
trap 'rm -rf "$tmp"' EXIT
rc=0

copy() {
	rm -rf "$tmp/t"
	mkdir -p "$tmp/t/reliability" || exit 1
	cp "$dir"/*.c "$tmp/t/" && cp "$dir"/reliability/*.c "$tmp/t/reliability/" || exit 1
	for f in "$dir"/*.cpp; do
		[ -f "$f" ] && cp "$f" "$tmp/t/"
	done
	return 0
}

# expect_fail WHAT SYMBOL MAP
expect_fail() {
	if out=$(sh "$check" "$3" "$tmp/t" 2>&1); then
		echo "FAIL: check-coverage.sh passed with $1"
		rc=1
	elif ! printf '%s\n' "$out" | grep -q "FAIL: $2 "; then
		echo "FAIL: check-coverage.sh failed with $1 but did not name $2:"
		printf '%s\n' "$out" | sed 's/^/    /'
		rc=1
	else
		echo "ok: $1 refused"
	fi
}

copy
if ! out=$(sh "$check" "$map" "$tmp/t" 2>&1); then
	echo "FAIL: check-coverage.sh fails on an unchanged copy of the tests:"
	printf '%s\n' "$out" | sed 's/^/    /'
	exit 1
fi
echo "ok: an unchanged copy passes"

# an exported function no test calls
sed 's/^global:$/global:\n\tdmaio_selftest_never_called;/' "$map" >"$tmp/map"
expect_fail "a map exporting dmaio_selftest_never_called" dmaio_selftest_never_called "$tmp/map"

# every call of a real symbol gone, the name left in places that are not calls
syms=$(sed -n 's/^[[:space:]]*\(dmaio_[A-Za-z0-9_]*\)[[:space:]]*;.*$/\1/p' "$map")
n=$(printf '%s\n' "$syms" | wc -l)
for k in 1 $(((n + 1) / 2)) "$n"; do
	s=$(printf '%s\n' "$syms" | sed -n "${k}p")
	copy
	for f in "$tmp"/t/*.c "$tmp"/t/*.cpp "$tmp"/t/reliability/*.c; do
		[ -f "$f" ] || continue
		sed -i "s/\\b$s[[:space:]]*(/gone_$s(/g" "$f" || exit 1
	done
	cat >>"$tmp/t/test-api.c" <<EOF
/* $s(x) in a comment */
static const char *const selftest_s = "$s(x)"; // $s(
static void selftest_f(void) { ${s}_longer(0); (void)'('; }
EOF
	printf 'static void selftest_helper(void) { %s(0); }\n' "$s" >>"$tmp/t/common.c"
	expect_fail "no test calling $s (only comments, strings, a helper)" "$s" "$map"
done
exit $rc
