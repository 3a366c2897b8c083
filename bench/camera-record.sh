#!/bin/bash
# SPDX-License-Identifier: MIT
#
# dmaio-record side by side: the library queue against a plain pwrite() loop (buffered and
# O_DIRECT) of the same frames, ROUNDS rounds interleaved (queue, buffered, direct, queue, ...),
# medians of CPU per frame, MB/s, dropped frames and write latency.
#
#   bench/camera-record.sh BUILD_DIR OUTPUT_FILE [ROUNDS] -- [dmaio-record options]
#   e.g. bench/camera-record.sh build /var/tmp/rec.raw 3 -- --synthetic --size 3840x2160 --fps 60 --frames 300
set -euo pipefail
build=${1:?build dir}; out=${2:?output file}; rounds=${3:-3}
shift 3 || shift $#
[[ ${1:-} == -- ]] && shift
rec=$build/examples/dmaio-record
[[ -x $rec ]] || { echo "no $rec" >&2; exit 2; }
tmp=$(mktemp -d); trap 'rm -rf "$tmp"; rm -f "$out"' EXIT
modes=(queue buffered direct)
echo "# $rec $* (rounds $rounds, interleaved; $(date -u +%FT%TZ), $(uname -r), $(nproc) CPUs)"
for ((r = 1; r <= rounds; r++)); do
	for m in "${modes[@]}"; do
		case $m in queue) extra=() ;; buffered) extra=(--baseline-write) ;; direct) extra=(--baseline-write=direct) ;; esac
		sync # no dirty pages of the previous run left to write back
		"$rec" --quiet --force "${extra[@]}" "$@" "$out" >"$tmp/$m.$r" 2>&1 || { cat "$tmp/$m.$r"; exit 1; }
		echo "## round $r, $m"; cat "$tmp/$m.$r"
	done
done
med() { sort -g | awk '{ a[NR] = $1 } END { print (NR % 2) ? a[(NR + 1) / 2] : (a[NR / 2] + a[NR / 2 + 1]) / 2 }'; }
echo
printf '%-10s %14s %10s %10s %12s %12s %12s\n' mode "CPU ms/frame" "MB/s" dropped "p50 ms" "p99 ms" "max ms"
for m in "${modes[@]}"; do
	cpu=$(for r in $(seq "$rounds"); do sed -n 's/^CPU: .*s user+sys, \([0-9.]*\) ms per frame.*/\1/p' "$tmp/$m.$r"; done | med)
	mbs=$(for r in $(seq "$rounds"); do sed -n 's/^wall time: .*frames\/s, \([0-9.]*\) MB\/s/\1/p' "$tmp/$m.$r"; done | med)
	drop=$(for r in $(seq "$rounds"); do sed -n 's/^frames dropped: *\([0-9]*\) .*/\1/p' "$tmp/$m.$r"; done | med)
	p50=$(for r in $(seq "$rounds"); do sed -n 's/^write latency: *p50 \([0-9.]*\) ms.*/\1/p' "$tmp/$m.$r"; done | med)
	p99=$(for r in $(seq "$rounds"); do sed -n 's/^write latency:.*p99 \([0-9.]*\) ms.*/\1/p' "$tmp/$m.$r"; done | med)
	mx=$(for r in $(seq "$rounds"); do sed -n 's/^write latency:.*max \([0-9.]*\) ms.*/\1/p' "$tmp/$m.$r"; done | med)
	printf '%-10s %14s %10s %10s %12s %12s %12s\n' "$m" "$cpu" "$mbs" "$drop" "$p50" "$p99" "$mx"
done
echo "(medians of $rounds rounds; queue = dmaio_queue_submit/dmaio_queue_reap, buffered = pwrite(), direct = pwrite(O_DIRECT) + buffered tail)"
