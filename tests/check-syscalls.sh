#!/bin/sh
# SPDX-License-Identifier: MIT
#
# check-syscalls.sh PROBE DIR
#
# Syscalls per warm 4 KiB read (tests/syscall-probe.c under strace -f): through a registered
# file at most 2 (the data syscall and the page-cache residency); dmaio_fd_read on a plain fd
# is printed for comparison (it probes the file on every call). Exit 77 without strace.
set -u
probe=${1:?usage: check-syscalls.sh PROBE DIR}
dir=${2:?}
command -v strace >/dev/null 2>&1 || { echo "SKIP: strace not found"; exit 77; }
# under the valgrind setup: strace the program itself, not valgrind
case "${LD_PRELOAD:-}" in *vgpreload*) exec env -u LD_PRELOAD sh "$0" "$@" ;; esac
tmp=$(mktemp -d) || exit 1
trap 'rm -rf "$tmp"' EXIT

# LeakSanitizer cannot run under ptrace: the sanitizer build's leak check is off here
export ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0"

count() { # MODE: reads in $tmp/MODE.reads, syscalls between the markers in $tmp/MODE.n
	if ! strace -f -qq -o "$tmp/$1.log" "$probe" "$dir" "$1" >"$tmp/$1.reads"; then
		echo "FAIL: $probe $1"
		tail -20 "$tmp/$1.log"
		exit 1
	fi
	# lines between the two getppid markers; a call split by a thread switch counts once
	awk '/getppid\(\)/ { m++; next } m == 1 && !/resumed>/ { c++ } END { print c + 0 }' \
		"$tmp/$1.log" >"$tmp/$1.n"
}
count file
count fd
reads=$(cat "$tmp/file.reads") calls=$(cat "$tmp/file.n") fd_calls=$(cat "$tmp/fd.n")
echo "registered file: $calls syscalls for $reads warm 4 KiB reads ($(awk "BEGIN { printf \"%.2f\", $calls / $reads }") per read)"
echo "plain fd:        $fd_calls syscalls for $reads warm 4 KiB reads ($(awk "BEGIN { printf \"%.2f\", $fd_calls / $reads }") per read)"
awk '/getppid\(\)/ { m++; next } m == 1' "$tmp/file.log" | sed 's/(.*//' | sort | uniq -c | sed 's/^/  /'
if [ "$calls" -gt $((reads * 2)) ]; then
	echo "FAIL: more than 2 syscalls per read through a registered file"
	awk '/getppid\(\)/ { m++; next } m == 1' "$tmp/file.log" | head -20
	exit 1
fi
