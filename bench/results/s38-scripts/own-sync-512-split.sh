#!/bin/sh
# 7.3, cma=768M: the system heap's 512M 4K own-sync write cell, traced with each pass's time and
# its sync's, the library after (build-dev) and before (0b842b4, build-dev/old) in turn
B=/work/main/build-dev/bench/dmaio-bench
run() {
	echo "== $2 own-sync $1 512M $(date +%T)"
	if [ "$2" = old ]; then export LD_LIBRARY_PATH=/work/main/build-dev/old/lib; else unset LD_LIBRARY_PATH; fi
	DMAIO_BENCH_TRACE=1 $B --dir /mnt/ext4 --tests choice --quick --heap $1 --choice-bufs 512M --choice-ranges 4K --dirs write --choice-own-sync 2>&1 | grep -v "^dmaio:" | grep -E "trace|^$1 " | cut -c1-600
}
run system new; run system old; run default_cma_region new
echo "== done $(date +%T)"
