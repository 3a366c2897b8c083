#!/bin/sh
# SPDX-License-Identifier: MIT
#
# tests/fuzz/long-run.sh BUILDDIR OUTDIR HARNESS:SECONDS...
# tests/fuzz/long-run.sh --summary OUTDIR HARNESS...
#
# The long fuzz run of tests/fuzz/README.md: each harness in turn (one at a time: a lock in
# OUTDIR serialises concurrent invocations), niced, for SECONDS of wall time, from the seed
# corpus and the regression inputs into OUTDIR/corpus-HARNESS. A crash is kept
# (OUTDIR/HARNESS-crash-*) and fuzzing goes on for the rest of the time. OUTDIR/HARNESS.log has
# libFuzzer's output and, per run, the CPU time (/usr/bin/time); a harness given again goes on
# from its corpus, its log growing (do not edit this script while it runs: sh reads it as it goes).
# OUTDIR/summary: one line per harness, over all its
# sessions: wall and CPU seconds, executions, final cov/ft, corpus, crashes (--summary: only that).
set -eu
src=$(cd "$(dirname "$0")" && pwd)

summary() { # HARNESS: one line of OUTDIR/summary from its log (every session)
	log=$out/$1.log
	execs=$(grep -h '^stat::number_of_executed_units' "$log" | awk '{s += $2} END {print s + 0}')
	cpu=$(grep -h '^=== cpu' "$log" | awk '{s += $4 + $6} END {printf "%.0f", s}')
	last=$(grep -h 'DONE \|pulse \|NEW \|REDUCE ' "$log" | tail -1)
	cov=$(echo "$last" | sed -n 's/.*cov: \([0-9]*\).*/\1/p')
	ft=$(echo "$last" | sed -n 's/.*ft: \([0-9]*\).*/\1/p')
	crashes=$(find "$out" -maxdepth 1 -name "$1-*" -type f | wc -l)
	wall=$(grep -h '^=== session' "$log" | awk '{s += $3} END {print s + 0}')
	echo "$1 wall ${wall}s cpu ${cpu}s execs $execs cov $cov ft $ft corpus" \
		"$(find "$out/corpus-$1" -type f | wc -l) files" \
		"$(du -sb "$out/corpus-$1" | cut -f1) bytes runs $(grep -c '^=== run' "$log")" \
		"crashes $crashes" >>"$out/summary"
}

if [ "$1" = --summary ]; then
	out=$2
	shift 2
	for spec in "$@"; do
		summary "${spec%%:*}"
	done
	exit 0
fi
build=$1 out=$2
shift 2
mkdir -p "$out"
exec 9>"$out/lock"
flock 9
for spec in "$@"; do
	h=${spec%%:*} secs=${spec#*:}
	exe=$build/tests/fuzz/$h
	log=$out/$h.log
	regress=
	[ ! -d "$src/regress/$h" ] || regress=$src/regress/$h
	mkdir -p "$out/corpus-$h"
	echo "=== session $secs s" >>"$log" # a harness run again goes on from its corpus
	end=$(($(date +%s) + secs))
	runs=0
	while :; do
		left=$((end - $(date +%s)))
		[ $left -gt 5 ] && [ $runs -lt 50 ] || break
		runs=$((runs + 1))
		echo "=== run $runs: $left s" >>"$log"
		# shellcheck disable=SC2086 # $regress: one directory or none
		/usr/bin/time -f "=== cpu user %U sys %S wall %e" \
			nice -n 19 "$exe" -max_total_time=$left -timeout=30 -rss_limit_mb=4096 \
			-max_len=65536 -print_final_stats=1 -error_exitcode=1 \
			-artifact_prefix="$out/$h-" "$out/corpus-$h" "$src/corpus/$h" $regress \
			>>"$log" 2>&1 || echo "=== exit $?" >>"$log"
	done
	summary "$h"
done
