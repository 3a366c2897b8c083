#!/bin/bash
# SPDX-License-Identifier: MIT
# Device memory (issue 24) in the test VM on 7.3: dmaio-bench-vfio on the ivshmem-plain BAR
# (64 MiB) bound to vfio-pci, booted with the ported mmap series on (device fd and dma-buf
# mappings, file <-> BAR through the library against the O_DIRECT io_uring baseline) and off
# (mainline's device fd fault handler: the other side of the series' fault-cost comparison).
# One host thread per vCPU (--tcg-thread multi, 2 vCPUs), as every result in bench/results.
# Boots differ from each other under TCG by more than the fault costs compared here, so
# ROUNDS (default 1) alternates the two boots that many times: round 1 writes
# bench/results/vm-vfio-7.3-mmap-{on,off}.txt, round N -rN.txt (stdout and stderr). About 1 min
# per round.
#   [ROUNDS=N] bench/vm-vfio.sh [BUILD_DIR] [-- dmaio-bench-vfio options]
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${1:-$root/build}
shift || true
[[ ${1:-} == -- ]] && shift
out=$root/bench/results
mkdir -p "$out"
for ((r = 1; r <= ${ROUNDS:-1}; r++)); do
	suffix=$( ((r == 1)) || echo "-r$r")
	for m in on off; do
		f=$out/vm-vfio-7.3-mmap-$m$suffix.txt
		echo "== round $r, 7.3, vfio_dmabuf_mmap=$m" >&2
		"$root/tests/vm/run" --kernel 7.3 --vfio-mmap=$m --build "$build" --no-build \
			--tcg-thread multi --memory 4096 --timeout 3600 \
			-- "$build/bench/dmaio-bench-vfio" --dir /mnt/ext4 --size 32M --runs 5 "$@" \
			>"$f" 2>&1 || echo "== mmap $m failed, see $f" >&2
	done
done
