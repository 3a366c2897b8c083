#!/bin/bash
# SPDX-License-Identifier: MIT
# The queue workloads in the test VM (6.12, RW_FILE on): every provider's path side by side
# against the O_DIRECT io_uring baseline, then the RW_FILE worker-thread count swept.
# Writes bench/results/vm-queue-*.txt. Takes about 20-40 min.
#   bench/vm-queue.sh [BUILD_DIR] [NAME...]   (NAME: only these runs, e.g. paths workers-4)
# --tcg-thread multi: one host thread per vCPU, as every result in bench/results was measured
# (the tests run with one thread for both; tests/vm/README.md, "TCG and text patching").
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${1:-$root/build}
shift || true
only=" $* "
out=$root/bench/results
sets=(--tests ranges,files --ranges 4096x64K,512x1M --files 32x16M --runs 3)
run() { # NAME ENV... -- BENCH ARGS
	local name=$1; shift
	[[ $only == "  " || $only == *" ${name#vm-queue-} "* ]] || return 0
	local envs=()
	while [[ $1 != -- ]]; do envs+=(--env "$1"); shift; done
	shift
	echo "== $name: $*" >&2
	"$root/tests/vm/run" --build "$build" --no-build --tcg-thread multi --memory 8192 --timeout 3600 "${envs[@]}" \
		-- "$build/bench/dmaio-bench" --dir /mnt/ext4 "$@" >"$out/$name.txt" 2>&1 ||
		echo "== $name failed, see $out/$name.txt" >&2
}
run vm-queue-paths -- --heap system,udmabuf "${sets[@]}"
for w in 1 2 4 8; do
	run "vm-queue-workers-$w" "DMAIO_WORKERS=$w" -- --heap system "${sets[@]}"
done
# the baseline into the memory behind a udmabuf (shmem, no THP) instead of anonymous memory
run vm-queue-udmabuf-memfd-base -- --heap udmabuf "${sets[@]}" --base-mem memfd
# system-heap buffers through the other paths that can serve them, forced
for p in bounce-direct buffered; do
	run "vm-queue-system-$p" "DMAIO_PATH=$p" -- --heap system "${sets[@]}"
done
