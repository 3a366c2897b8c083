#!/bin/sh
# 7.3, cma=768M: 4K writes into 16M and 512M buffers, quick, every path, per heap; the old
# library (c9166dd, copied to build-dev/old) and the new (build-dev) in turn in one boot, traced
for H in default_cma_region system udmabuf; do
for L in old new; do
	if [ $L = old ]; then B=/work/main/build-dev/old/bench/dmaio-bench; else B=/work/main/build-dev/bench/dmaio-bench; fi
	echo "== $H $L"
	DMAIO_BENCH_TRACE=1 $B --dir /mnt/ext4 --tests choice --quick --heap $H --choice-bufs 16M,512M --choice-ranges 4K --dirs write --json /tmp/ab-$L.json 2>&1 | grep -v "^dmaio:" | grep -E "trace|^$H " | cut -c1-900
done
done
