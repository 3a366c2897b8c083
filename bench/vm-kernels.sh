#!/bin/bash
# SPDX-License-Identifier: MIT
# The same measurements on both test kernels, one after the other on this machine: Debian's 6.12
# and 7.3 (tests/vm/kernel), RW_FILE and the io_uring dma-buf registration switched on.
#   alloc + mmap:  dmaio-bench --tests alloc,mmap (32 x 32 MiB allocations per provider; a 512 MiB
#                  map + touch of a system-heap buffer: 7.3 maps the heap in large chunks)
#   paths:         cold 256 MiB reads and writes of the raw NVMe namespace, every path that can
#                  serve each buffer (uring-dmabuf exists on 7.3 only) beside the O_DIRECT io_uring
#                  baseline into plain memory
# Writes bench/results/vm-kernels-<kernel>-<what>.json (stdout of dmaio-bench --format json) and
# .log (the harness and dmaio-bench's stderr); bench/vm-kernels-table.py turns them into the
# table of bench/RESULTS.md. About 15-25 min.
#   bench/vm-kernels.sh [BUILD_DIR] [KERNEL...]
# --tcg-thread multi: one host thread per vCPU, as every result in bench/results was measured
# (the tests run with one thread for both; tests/vm/README.md, "TCG and text patching").
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${1:-$root/build}
shift || true
kernels=("$@")
((${#kernels[@]})) || kernels=(6.12 7.3)
out=$root/bench/results
mkdir -p "$out"
for k in "${kernels[@]}"; do
	echo "== $k: alloc, mmap" >&2
	"$root/tests/vm/run" --kernel "$k" --build "$build" --no-build --tcg-thread multi --memory 8192 --timeout 3600 \
		-- "$build/bench/dmaio-bench" --dir /mnt/ext4 --heap system,udmabuf --tests alloc,mmap \
		--runs 5 --format json >"$out/vm-kernels-$k-alloc-mmap.json" 2>"$out/vm-kernels-$k-alloc-mmap.log" ||
		echo "== $k alloc/mmap failed, see $out/vm-kernels-$k-alloc-mmap.log" >&2
	echo "== $k: paths on the raw NVMe namespace" >&2
	"$root/tests/vm/run" --kernel "$k" --build "$build" --no-build --tcg-thread multi --memory 8192 --timeout 3600 \
		-- sh -c "exec '$build/bench/dmaio-bench' --device \"\$DMAIO_TEST_RAWDEV\" --heap system,udmabuf \
		--sizes 256M --modes cold --runs 3 --tests io --format json" >"$out/vm-kernels-$k-paths.json" \
		2>"$out/vm-kernels-$k-paths.log" ||
		echo "== $k paths failed, see $out/vm-kernels-$k-paths.log" >&2
done
