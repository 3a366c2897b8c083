#!/bin/sh
# the system heap's 512M 64K read cell, the library after (build-dev) and before (50919e0, build-dev/old) in turn
B=/work/main/build-dev/bench/dmaio-bench
run() {
	echo "== $1 $2 $(date +%T)"
	if [ "$1" = old ]; then export LD_LIBRARY_PATH=/work/main/build-dev/old/lib; else unset LD_LIBRARY_PATH; fi
	DMAIO_BENCH_TRACE=1 $B --dir /mnt/ext4 --tests choice --quick --heap system --choice-bufs 512M --choice-ranges 64K --dirs $2 2>&1 | grep -v "^dmaio:" | grep -E "trace.*(run|before:)|^system " | cut -c1-420
}
for i in 1 2 3; do run new read; run old read; done
echo "== done $(date +%T)"
