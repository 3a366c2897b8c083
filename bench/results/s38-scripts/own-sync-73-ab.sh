#!/bin/sh
# 7.3, cma=768M: the bench's 4K write cells with --choice-own-sync, every path, per heap, the
# library before (0b842b4, build-dev/old) and after (build-dev) the guessed pick's backoff, in turn
B=/work/main/build-dev/bench/dmaio-bench
run() {
	echo "== $2 own-sync $1 $(date +%T)"
	if [ "$2" = old ]; then
		LD_LIBRARY_PATH=/work/main/build-dev/old/lib DMAIO_BENCH_TRACE=1 $B --dir /mnt/ext4 --tests choice --quick --heap $1 --choice-bufs 16M,512M --choice-ranges 4K --dirs write --choice-own-sync 2>&1 | grep -v "^dmaio:" | grep -E "trace|^$1 " | cut -c1-900
	else
		DMAIO_BENCH_TRACE=1 $B --dir /mnt/ext4 --tests choice --quick --heap $1 --choice-bufs 16M,512M --choice-ranges 4K --dirs write --choice-own-sync 2>&1 | grep -v "^dmaio:" | grep -E "trace|^$1 " | cut -c1-900
	fi
}
run default_cma_region old; run default_cma_region new
run system new; run system old
run udmabuf old; run udmabuf new
echo "== done $(date +%T)"
