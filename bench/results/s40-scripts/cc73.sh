#!/bin/sh
# (run at the experiment commit, with a temporary DMAIO_BENCH_CHECK_COLD knob in check_one(); since fe0f013 every check pass is cold and the knob is gone)
# 7.3, cma=768M: the CMA 512M 4K write cell (one run, auto first), traced; processes alternate
# between the check pass as it is (the file warm from the previous check's read-back) and
# DMAIO_BENCH_CHECK_COLD=1 (the file made cold before each check pass, as a timed pass is)
B=/work/main/build-dev/bench/dmaio-bench
for i in 1 2 3 4; do
	if [ $((i % 2)) = 0 ]; then export DMAIO_BENCH_CHECK_COLD=1; else unset DMAIO_BENCH_CHECK_COLD; fi
	echo "== process $i cold=${DMAIO_BENCH_CHECK_COLD:-0}"
	DMAIO_BENCH_TRACE=1 $B --dir /mnt/ext4 --tests choice --quick --heap default_cma_region --choice-bufs 512M --choice-ranges 4K --dirs write --path auto,bounce-direct,buffered --runs 1 2>&1 | grep -v "^dmaio:" | grep -E "trace|^default_cma_region " | cut -c1-400
done
