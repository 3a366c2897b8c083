#!/bin/sh
# SPDX-License-Identifier: MIT
#
# check-syscalls.sh PROBE DIR
#
# Syscalls per warm 4 KiB read (tests/syscall-probe.c under strace -f): through a registered
# file at most 2 (the data syscall and the page-cache residency); dmaio_read_file on a plain fd
# is printed for comparison (it probes the file on every call). Exit 77 without strace.
set -u
probe=${1:?usage: check-syscalls.sh PROBE DIR}
dir=${2:?}
command -v strace >/dev/null 2>&1 || { echo "SKIP: strace not found"; exit 77; }
# under the valgrind setup: strace the program itself, not valgrind
case "${LD_PRELOAD:-}" in *vgpreload*) exec env -u LD_PRELOAD sh "$0" "$@" ;; esac
tmp=$(mktemp -d) || exit 1
trap 'rm -rf "$tmp"' EXIT

count() { # MODE -> syscalls per read
	n=$(strace -f -qq -o "$tmp/$1.log" "$probe" "$dir" "$1") || { echo "FAIL: $probe $1"; cat "$tmp/$1.log" | tail -20; exit 1; }
	# lines between the two getppid markers; a call split by a thread switch counts once
	awk '/getppid\(\)/ { m++; next } m == 1 && !/resumed>/ { c++ } END { print c + 0 }' \
		"$tmp/$1.log" >"$tmp/$1.n"
	echo "$n $(cat "$tmp/$1.n")"
}
set -- $(count file)
reads=$1 calls=$2
set -- $(count fd)
fd_calls=$2
echo "registered file: $calls syscalls for $reads warm 4 KiB reads ($(awk "BEGIN { printf \"%.2f\", $calls / $reads }") per read)"
echo "plain fd:        $fd_calls syscalls for $reads warm 4 KiB reads ($(awk "BEGIN { printf \"%.2f\", $fd_calls / $reads }") per read)"
awk '/getppid\(\)/ { m++; next } m == 1' "$tmp/file.log" | sed 's/(.*//' | sort | uniq -c | sed 's/^/  /'
if [ "$calls" -gt $((reads * 2)) ]; then
	echo "FAIL: more than 2 syscalls per read through a registered file"
	awk '/getppid\(\)/ { m++; next } m == 1' "$tmp/file.log" | head -20
	exit 1
fi
