#!/bin/sh
# 7.3, cma=768M: the CMA 512M 4K write cell (C70's, ok at 1.01x in session 40) with the
# session-41 change (a page-cache write's pick samples weigh their time), every path, one run
# and three repeats, traced, two processes: does buffered's price still follow the pass as a
# whole, and does auto stay on buffered, on 7.3 too?
B=/work/main/build-dev/bench/dmaio-bench
for i in 1 2; do
	echo "== process $i"
	DMAIO_BENCH_TRACE=1 $B --dir /mnt/ext4 --tests choice --quick --heap default_cma_region --choice-bufs 512M --choice-ranges 4K --dirs write --runs 1 --choice-repeat 3 2>&1 | grep -v "^dmaio:" | grep -E "trace|^default_cma_region " | cut -c1-900
done
