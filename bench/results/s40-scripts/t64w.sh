#!/bin/sh
# 7.3, cma=768M: the system-heap 512M 64K write cell (session 39's 0.74x miss), one run with
# every path, traced, two processes: where do auto's passes go and what does each path learn?
B=/work/main/build-dev/bench/dmaio-bench
for i in 1 2; do
	echo "== process $i"
	DMAIO_BENCH_TRACE=1 $B --dir /mnt/ext4 --tests choice --quick --heap system --choice-bufs 512M --choice-ranges 64K --dirs write --runs 1 2>&1 | grep -v "^dmaio:" | grep -E "trace|^system " | cut -c1-900
done
