#!/bin/sh
# SPDX-License-Identifier: MIT
#
# check-coverage.sh MAPFILE TESTDIR
#
# Every function the library exports (the global symbols of the version script MAPFILE) is called
# by at least one test program under TESTDIR: TESTDIR/*.c, *.cpp and TESTDIR/reliability/*.c,
# without the shared helpers (common.c, reliability/rel.c: a call there proves nothing about a
# test). A call is the name as a word followed by "(" in the code: comments and string or
# character literals are removed first, so a name in a message or a comment does not count.
# Prints each symbol no test calls; exit 0 when there is none, 1 otherwise, 77 in the test VM
# (DMAIO_TEST_VM=1: a check of the sources, the host's) or when the sources are not there.
set -u
# under the valgrind test setup: run the script itself natively
case "${LD_PRELOAD:-}" in *vgpreload*) exec env -u LD_PRELOAD sh "$0" "$@" ;; esac

map=${1:?usage: check-coverage.sh MAPFILE TESTDIR}
dir=${2:?usage: check-coverage.sh MAPFILE TESTDIR}
# a check of the sources: the host's (in the test VM, where the shell and awk run emulated, it
# would take minutes)
if [ "${DMAIO_TEST_VM:-0}" = 1 ] || [ ! -f "$map" ] || [ ! -d "$dir" ]; then
	echo "SKIP: a check of the sources, run on the host (test VM, or $map or $dir absent)"
	exit 77
fi
for t in awk grep sed sort; do
	command -v "$t" >/dev/null 2>&1 || { echo "SKIP: $t not found"; exit 77; }
done

tmp=$(mktemp -d) || exit 1
trap 'rm -rf "$tmp"' EXIT

# the exported functions: "name;" lines of the global: parts of every version node
sed -n 's/^[[:space:]]*\(dmaio_[A-Za-z0-9_]*\)[[:space:]]*;.*$/\1/p' "$map" | sort -u >"$tmp/syms"
nsyms=$(wc -l <"$tmp/syms")
if [ "$nsyms" -eq 0 ]; then
	echo "FAIL: no dmaio_* symbol found in $map"
	exit 1
fi

# the test programs, their code only (comments, strings and characters blanked)
: >"$tmp/files"
for f in "$dir"/*.c "$dir"/*.cpp "$dir"/reliability/*.c; do
	[ -f "$f" ] || continue
	case ${f##*/} in common.c | rel.c) continue ;; esac
	printf '%s\n' "$f" >>"$tmp/files"
done
nfiles=$(wc -l <"$tmp/files")
if [ "$nfiles" -eq 0 ]; then
	echo "FAIL: no test source in $dir"
	exit 1
fi
code() {
	awk '
	BEGIN { st = 0 } # 0 code, 1 block comment, 2 string, 3 character
	{
		out = ""
		n = length($0)
		for (i = 1; i <= n; i++) {
			c = substr($0, i, 1)
			d = substr($0, i, 2)
			if (st == 1) {
				if (d == "*/") { st = 0; i++ }
				continue
			}
			if (st == 2 || st == 3) {
				if (c == "\\") { i++; continue }
				if ((st == 2 && c == "\"") || (st == 3 && c == "'\''")) { st = 0; out = out c }
				continue
			}
			if (d == "/*") { st = 1; i++; out = out " "; continue }
			if (d == "//") break
			if (c == "\"") st = 2
			else if (c == "'\''") st = 3
			out = out c
		}
		if (st == 2 || st == 3)
			st = 0 # an unterminated literal ends with its line
		print out
	}' "$1"
}
while read -r f; do
	code "$f" >"$tmp/code.$(basename "$f")"
done <"$tmp/files"

missing=0
while read -r s; do
	callers=$(grep -lE "(^|[^A-Za-z0-9_])$s[[:space:]]*\(" "$tmp"/code.* 2>/dev/null |
		  sed 's|.*/code\.||' | tr '\n' ' ')
	if [ -z "$callers" ]; then
		echo "FAIL: $s (exported by $map) is called by no test in $dir"
		missing=$((missing + 1))
	elif [ -n "${VERBOSE:-}" ]; then
		echo "ok: $s: $callers"
	fi
done <"$tmp/syms"
if [ "$missing" -ne 0 ]; then
	echo "$missing of $nsyms exported functions are called by no test ($nfiles test sources)"
	exit 1
fi
echo "ok: each of the $nsyms exported functions is called by a test ($nfiles test sources)"
exit 0
