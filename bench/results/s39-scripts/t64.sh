#!/bin/sh
B=/work/main/build-dev/bench/dmaio-bench
for i in 1 2; do
echo "== system 512M 64K read $i $(date +%T)"
DMAIO_BENCH_TRACE=1 $B --dir /mnt/ext4 --tests choice --quick --heap system --choice-bufs 512M --choice-ranges 64K --dirs read 2>&1 | grep -v "^dmaio:" | cut -c1-900
done
echo "== done $(date +%T)"
