#!/bin/sh
# SPDX-License-Identifier: MIT
#
# The meson tests of the fuzz harnesses (tests/fuzz/meson.build, README.md):
#   run.sh replay HARNESS DIR...          every file of the DIRs once (seed corpus, regressions)
#   run.sh timed HARNESS WORKDIR DIR...   fuzz for $DMAIO_FUZZ_SECONDS (default 60) from WORKDIR
#                                         (new inputs go there) and the DIRs (read only); a crash
#                                         is written to WORKDIR-artifacts/crash-* and fails the test
# ASan/UBSan: leaks, every error fatal. Exit status 0 when nothing was found, else 1 (libFuzzer's
# own default, 77, would read as a skipped test).
set -eu
mode=$1 exe=$2
shift 2
export ASAN_OPTIONS="${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=1:allocator_may_return_null=1}"
export UBSAN_OPTIONS="${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}"
work=
if [ "$mode" = timed ]; then
	work=$1
	shift
	art=$work-artifacts
	mkdir -p "$work" "$art"
fi
# the DIRs that exist (a harness without regression inputs has no regress/ directory)
dirs=
for d in "$@"; do
	[ ! -d "$d" ] || dirs="$dirs $d"
done
case $mode in
replay)
	# shellcheck disable=SC2086 # directory names without blanks
	files=$(find $dirs -type f ! -name '.*' | sort)
	[ -n "$files" ] || { echo "run.sh: no input in $*" >&2; exit 1; }
	echo "run.sh: $(echo "$files" | wc -l) inputs of $*"
	# shellcheck disable=SC2086 # one argument per file; names have no blanks (make-seeds.py)
	exec "$exe" -error_exitcode=1 -timeout_exitcode=1 -timeout=60 -rss_limit_mb=4096 $files
	;;
timed)
	secs=${DMAIO_FUZZ_SECONDS:-60}
	echo "run.sh: $(basename "$exe") for $secs s (DMAIO_FUZZ_SECONDS), new inputs in $work"
	rc=0
	# shellcheck disable=SC2086 # directory names without blanks
	"$exe" -error_exitcode=1 -timeout_exitcode=1 -max_total_time="$secs" -timeout=30 \
		-rss_limit_mb=4096 -max_len=65536 -print_final_stats=1 -artifact_prefix="$art/" \
		"$work" $dirs || rc=$?
	if [ $rc != 0 ]; then
		echo "run.sh: $(basename "$exe") failed (exit $rc); the input: $(ls -t "$art"/crash-* \
			"$art"/timeout-* "$art"/oom-* "$art"/leak-* 2>/dev/null | head -1 | tr '\n' ' ')" >&2
		echo "run.sh: replay it with $exe FILE; keep it in tests/fuzz/regress/$(basename \
			"$exe")/ once fixed (tests/fuzz/README.md)" >&2
	fi
	exit $rc
	;;
*)
	echo "run.sh: unknown mode $mode" >&2
	exit 2
	;;
esac
