#!/bin/sh
# SPDX-License-Identifier: MIT
#
# check-abi-selftest.sh CHECK_ABI SRCDIR
#
# check-abi.sh can fail: the library is built from a copy of the sources (include/, lib/, the
# top meson files, man/meson.build, tests/fuzz/meson.build, subprojects/, tests/abi/), once unchanged and once for each
# mutation, and check-abi.sh must
#   PASS  (d) the unchanged copy,
#   FAIL  (a) two members of struct dmaio_xfer swapped (dmaio.h.in),
#   FAIL  (b) dmaio_fd_read()'s len uint64_t -> uint32_t (dmaio.h.in and lib/api/io.c),
#   FAIL  (c) a new function, dmaio_selftest_added(), listed in the released node DMAIO_1.0,
#   PASS  (e) a member appended to struct dmaio_xfer, and dmaio_selftest_added() in a new node
#             DMAIO_99.0 after the newest (the one allowed extension and the one allowed way
#             to add a symbol),
#   FAIL  (f) (e) with two other members of struct dmaio_xfer swapped too (the allowed
#             extension does not hide a change made with it).
# One meson configure; each case rebuilds only the library target.
# Exit 0 when every case came out as it should, 1 otherwise, 77 without abidw/abidiff/meson/
# ninja, in the test VM (DMAIO_TEST_VM=1: no source tree, emulated) or when the check itself
# skips (another architecture than the stored ABI's).
set -u
case "${LD_PRELOAD:-}" in *vgpreload*) exec env -u LD_PRELOAD sh "$0" "$@" ;; esac
check=${1:?usage: check-abi-selftest.sh CHECK_ABI SRCDIR}
src=${2:?usage: check-abi-selftest.sh CHECK_ABI SRCDIR}

if [ "${DMAIO_TEST_VM:-0}" = 1 ]; then
	echo "SKIP: builds the library from a copy of the sources, on the host only (test VM)"
	exit 77
fi
for t in abidw abidiff meson ninja cc; do
	command -v "$t" >/dev/null 2>&1 || { echo "SKIP: $t not found"; exit 77; }
done
for f in include/dmaio.h.in include/dmaio-model.h lib/libdmaio.map lib/api/io.c lib/api/ctx.c \
	meson.build meson_options.txt man/meson.build tests/abi/extensible.suppr tests/fuzz/meson.build; do
	[ -f "$src/$f" ] || { echo "FAIL: $src/$f does not exist"; exit 1; }
done

tmp=$(mktemp -d) || exit 1
trap 'rm -rf "$tmp"' EXIT
t=$tmp/src
b=$tmp/build
mkdir -p "$t/man" "$t/tests" "$tmp/orig" || exit 1
cp -R "$src/include" "$src/lib" "$t/" || exit 1
cp "$src/meson.build" "$src/meson_options.txt" "$t/" || exit 1
cp "$src/man/meson.build" "$t/man/" || exit 1
cp -R "$src/tests/abi" "$t/tests/" || exit 1
# meson.build enters tests/fuzz whatever -Dfuzz says (its meson.build decides): only that file
mkdir -p "$t/tests/fuzz" && cp "$src/tests/fuzz/meson.build" "$t/tests/fuzz/" || exit 1
[ -d "$src/subprojects" ] && { cp -R "$src/subprojects" "$t/" || exit 1; }
# the pristine copies of the files the mutations change
for f in include/dmaio.h.in lib/libdmaio.map lib/api/io.c lib/api/ctx.c; do
	mkdir -p "$tmp/orig/$(dirname "$f")" && cp "$t/$f" "$tmp/orig/$f" || exit 1
done

start=$(date +%s)
# -O0 (buildtype debug): the DWARF types and functions abidw reads are those of -O2, in less time
if ! meson setup "$b" "$t" -Dbuildtype=debug -Dtests=disabled -Dexamples=false -Dbench=false -Ddocs=disabled \
	-Dfault_injection=false -Dudev=disabled -Dfuzz=disabled >"$tmp/setup.log" 2>&1; then
	echo "FAIL: meson setup of the copy:"
	sed 's/^/    /' "$tmp/setup.log"
	exit 1
fi
lib=$b/lib/libdmaio.so.$(sed -n "s/^ *version : '\([0-9.]*\)',.*/\1/p" "$t/meson.build" | head -n 1)
target=lib/$(basename "$lib")

rc=0
# restore: every mutated file back as it was (a fresh mtime, so that ninja rebuilds)
restore() {
	for f in include/dmaio.h.in lib/libdmaio.map lib/api/io.c lib/api/ctx.c; do
		cmp -s "$tmp/orig/$f" "$t/$f" || cp "$tmp/orig/$f" "$t/$f" || exit 1
	done
}
# changed FILE: the mutation changed FILE (else the sources moved under the selftest)
changed() {
	if cmp -s "$tmp/orig/$1" "$t/$1"; then
		echo "FAIL: the mutation left $1 unchanged (its text moved?)"
		exit 1
	fi
}

# run_case LETTER WANT(pass|fail) WHAT
run_case() {
	_t0=$(date +%s)
	if ! ninja -C "$b" "$target" >"$tmp/build.log" 2>&1; then
		echo "FAIL: ($1) $3: the mutant library does not build:"
		tail -n 30 "$tmp/build.log" | sed 's/^/    /'
		rc=1
		return
	fi
	sh "$check" "$t" "$lib" >"$tmp/check.log" 2>&1
	_st=$?
	_secs=$(($(date +%s) - _t0))
	if [ $_st = 77 ]; then
		echo "SKIP: check-abi.sh skips here:"
		sed 's/^/    /' "$tmp/check.log"
		exit 77
	fi
	_got=pass
	[ $_st = 0 ] || _got=fail
	# the FAIL lines, and the heart of abidiff's report
	_why=$({ grep '^FAIL' "$tmp/check.log" | head -n 3 | sed 's/^FAIL: //'
		grep -E "\[[ACD]\] |parameter [0-9]+ of type|offset changed|size changed from" \
			"$tmp/check.log" | head -n 2 | sed 's/^ *//'; } | cut -c1-160 |
		tr '\n' '|' | sed 's/|$//; s/|/ + /g; s/: + /: /g')
	if [ "$_got" = "$2" ]; then
		if [ "$_got" = fail ]; then
			echo "ok: ($1) $3: check-abi.sh FAILS (exit $_st, ${_secs}s): $_why"
		else
			echo "ok: ($1) $3: check-abi.sh PASSES (${_secs}s)"
		fi
	else
		echo "FAIL: ($1) $3: check-abi.sh should $2 but exits $_st:"
		sed 's/^/    /' "$tmp/check.log"
		rc=1
	fi
	[ "${VERBOSE:-0}" = 1 ] && sed 's/^/    | /' "$tmp/check.log"
	return 0
}

# swap_xfer A B: swap the member lines "\t<type> A;" and "\t<type> B;" of struct dmaio_xfer
swap_xfer() {
	if ! awk -v a="$1" -v b="$2" '
		function member(l,   m) { m = l; sub(/;.*/, "", m); sub(/.*[ *]/, "", m); return m }
		/^struct dmaio_xfer \{/ { in_s = 1 }
		in_s && /^\};/ { in_s = 0 }
		{ line[NR] = $0 }
		in_s && /^\t[a-z0-9_]+ [a-z0-9_]+;/ && member($0) == a { la = NR }
		in_s && /^\t[a-z0-9_]+ [a-z0-9_]+;/ && member($0) == b { lb = NR }
		END {
			if (!la || !lb) exit 1
			t = line[la]; line[la] = line[lb]; line[lb] = t
			for (i = 1; i <= NR; i++) print line[i]
		}' "$t/include/dmaio.h.in" >"$tmp/h"; then
		echo "FAIL: struct dmaio_xfer has no members $1 and $2 to swap"
		exit 1
	fi
	cp "$tmp/h" "$t/include/dmaio.h.in" || exit 1
	changed include/dmaio.h.in
}

# append_xfer: a member at the end of struct dmaio_xfer
append_xfer() {
	awk '/^struct dmaio_xfer \{/ { in_s = 1 }
		in_s && /^\};/ { print "\tuint64_t selftest_appended; /**< added after 1.0 */"; in_s = 0 }
		{ print }' "$t/include/dmaio.h.in" >"$tmp/h" && cp "$tmp/h" "$t/include/dmaio.h.in" || exit 1
	changed include/dmaio.h.in
}

# add_function: dmaio_selftest_added() in lib/api/ctx.c (exported, declared)
add_function() {
	cat >>"$t/lib/api/ctx.c" <<'EOF'

uint32_t dmaio_selftest_added(void);
DMAIO_EXPORT uint32_t dmaio_selftest_added(void)
{
	return 1;
}
EOF
}

# (d) the unchanged copy (the first build: every file)
run_case d pass "the unchanged sources"

# (c) a function added to the released node (before the header mutations: no full rebuild)
add_function
awk '!done && /^global:/ { print; print "\tdmaio_selftest_added;"; done = 1; next } { print }' \
	"$tmp/orig/lib/libdmaio.map" >"$t/lib/libdmaio.map" || exit 1
changed lib/libdmaio.map
run_case c fail "dmaio_selftest_added() added to the released node DMAIO_1.0"
restore

# (a) two members of struct dmaio_xfer swapped (both uint64_t: the size stays, offsets change)
swap_xfer 'done' ns
run_case a fail "struct dmaio_xfer: members done and ns swapped"
restore

# (b) a parameter type changed, in the header and the definition alike
sed '/^int64_t dmaio_fd_read(/,/;$/ s/uint64_t len/uint32_t len/' "$tmp/orig/include/dmaio.h.in" \
	>"$t/include/dmaio.h.in" || exit 1
sed '/^DMAIO_EXPORT int64_t dmaio_fd_read(/,/)$/ s/uint64_t len/uint32_t len/' \
	"$tmp/orig/lib/api/io.c" >"$t/lib/api/io.c" || exit 1
changed include/dmaio.h.in
changed lib/api/io.c
run_case b fail "dmaio_fd_read(): len uint64_t -> uint32_t"
restore

# (e) the allowed extension: a member appended, a function in a new node
append_xfer
add_function
# a node after the map's newest one (the map may have grown nodes since 1.0: DMAIO_1.1, ...)
newest=$(sed -n 's/^\(DMAIO_[0-9][0-9.]*\) {.*/\1/p' "$t/lib/libdmaio.map" | tail -n 1)
cat >>"$t/lib/libdmaio.map" <<EOF
DMAIO_99.0 {
global:
	dmaio_selftest_added;
} $newest;
EOF
run_case e pass "a member appended to struct dmaio_xfer + dmaio_selftest_added() in DMAIO_99.0"

# (f) the same with two members swapped as well
swap_xfer fallbacks pad0
run_case f fail "(e) plus struct dmaio_xfer's members fallbacks and pad0 swapped"
restore

echo "# $(($(date +%s) - start))s in all"
[ $rc = 0 ] && echo "ok: check-abi.sh refuses every mutation and passes the allowed extension"
exit $rc
