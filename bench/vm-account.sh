#!/bin/bash
# SPDX-License-Identifier: MIT
# The accounting's cost (issue 23) in the test VM: dmaio-bench-account with 1k, 10k and 100k
# live system-heap buffers held by 4 processes, each source 3 times, then an allocating
# process's rate alone and under back-to-back snapshots. 4 GiB guest (100k 4 KiB buffers and
# their descriptors). Writes bench/results/vm-account-<kernel>.txt.
#   bench/vm-account.sh [BUILD_DIR] [KERNEL]
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${1:-$root/build}
kernel=${2:-7.3}
out=$root/bench/results
mkdir -p "$out"
"$root/tests/vm/run" --kernel "$kernel" --build "$build" --no-build --tcg-thread multi --memory 4096 \
	--timeout 3600 -- sh -c "exec '$build/bench/dmaio-bench-account' --buffers 1000,10000,100000 \
	--procs 4 --runs 3 --alloc-seconds 5" >"$out/vm-account-$kernel.txt" 2>&1
