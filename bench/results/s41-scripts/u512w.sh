#!/bin/sh
# 6.12, cma=768M: the udmabuf 512M 4K write cell (s40 C73's FAIL: 0.52x of buffered with four
# pairs a cell, 40% of auto's bytes on udmabuf-direct after the forced runs), every path, one
# run and three repeats, traced, two processes: what teaches buffered dear or udmabuf-direct
# cheap after the forced runs?
B=/work/main/build-dev/bench/dmaio-bench
for i in 1 2; do
	echo "== process $i"
	DMAIO_BENCH_TRACE=1 $B --dir /mnt/ext4 --tests choice --quick --heap udmabuf --choice-bufs 512M --choice-ranges 4K --dirs write --runs 1 --choice-repeat 3 2>&1 | grep -v "^dmaio:" | grep -E "trace|^udmabuf " | cut -c1-900
done
