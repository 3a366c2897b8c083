#!/bin/sh
# 7.3, cma=768M: the system-heap 16M 4K write cell (s40's 0.77x miss with 99% of auto's bytes
# on buffered), auto/buffered/bounce-direct, three runs, traced, two processes: where does
# auto's pass lose its time against buffered forced?
B=/work/main/build-dev/bench/dmaio-bench
for i in 1 2; do
	echo "== process $i"
	DMAIO_BENCH_TRACE=1 $B --dir /mnt/ext4 --tests choice --quick --heap system --choice-bufs 16M --choice-ranges 4K --dirs write --path auto,bounce-direct,buffered --runs 3 2>&1 | grep -v "^dmaio:" | grep -E "trace|^system " | cut -c1-900
done
