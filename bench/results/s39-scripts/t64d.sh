#!/bin/sh
B=/work/main/build-dev/bench/dmaio-bench
for i in 1 2; do
echo "== system 512M 64K read $i $(date +%T)"
DMAIO_DEBUG=1 DMAIO_BENCH_TRACE=1 $B --dir /mnt/ext4 --tests choice --quick --heap system --choice-bufs 512M --choice-ranges 64K --dirs read 2>&1 | grep -E "learned:|explored \(|trace|^system|bench: choice" | cut -c1-400
done
echo "== done $(date +%T)"
