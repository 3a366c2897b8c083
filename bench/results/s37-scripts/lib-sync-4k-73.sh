#!/bin/sh
# 7.3, cma=768M: the bench's 4K write cells, library sync (the default), every path, per heap, traced
B=/work/main/build-dev/bench/dmaio-bench
for H in default_cma_region system udmabuf; do
	echo "== bench $H"
	DMAIO_BENCH_TRACE=1 $B --dir /mnt/ext4 --tests choice --quick --heap $H --choice-bufs 16M,512M --choice-ranges 4K --dirs write 2>&1 | grep -v "^dmaio:" | grep -E "trace|^$H " | cut -c1-900
done
