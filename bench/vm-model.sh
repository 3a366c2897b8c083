#!/bin/bash
# SPDX-License-Identifier: MIT
# The model-loading target of issue 13 in the test VM: a 4 GiB safetensors model of 1000 tensors
# in 4 shards (dmaio-load --generate, 4 KiB to 256 MiB tensors) on /mnt/ext4, loaded into
# system-heap buffers by dmaio-bench-model beside the O_DIRECT io_uring baseline and the loaders
# users have today, cold, 3 runs, medians. 12 GiB guest, 8 GiB ext4 disk (sparse).
# Writes bench/results/vm-model-<kernel>.json and .log. About 7 min (6.12, measured).
#   bench/vm-model.sh [BUILD_DIR] [KERNEL]
# --tcg-thread multi: one host thread per vCPU, as every result in bench/results was measured
# (the tests run with one thread for both; tests/vm/README.md, "TCG and text patching").
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${1:-$root/build}
kernel=${2:-6.12}
out=$root/bench/results
mkdir -p "$out"
"$root/tests/vm/run" --kernel "$kernel" --build "$build" --no-build --tcg-thread multi --memory 12288 --ext4-size 8G \
	--timeout 3600 -- sh -c "'$build/examples/dmaio-load' --generate /mnt/ext4/m4g --format st \
	--shards 4 --tensors 1000 --size-mib 4096 >/dev/null && exec '$build/bench/dmaio-bench-model' \
	--heap system --runs 3 --format json /mnt/ext4/m4g-*.safetensors" \
	>"$out/vm-model-$kernel.json" 2>"$out/vm-model-$kernel.log"
# the VM merges the command's stderr into its stdout: keep the JSON from its first line on
sed -i -n '/^{"program"/,$p' "$out/vm-model-$kernel.json"
