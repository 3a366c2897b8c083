#!/bin/sh
# 7.3, cma=768M. 1: 4K writes with the caller's own fdatasync(), auto, estimates after each pass
# (ovh.c); 2: the bench's 4K write cells with --choice-own-sync, every path, per heap, traced
O=/work/main/build-dev/ovh/ovh
for H in default_cma_region system; do
	echo "== ovh $H 512M auto"
	$O 4096 1 2 5 1 $H 512 /mnt/ext4/ovh512.dat 2>&1
done
rm -f /mnt/ext4/ovh512.dat
B=/work/main/build-dev/bench/dmaio-bench
for H in default_cma_region system udmabuf; do
	echo "== bench own-sync $H"
	DMAIO_BENCH_TRACE=1 $B --dir /mnt/ext4 --tests choice --quick --heap $H --choice-bufs 16M,512M --choice-ranges 4K --dirs write --choice-own-sync --json /tmp/os-$H.json 2>&1 | grep -v "^dmaio:" | grep -E "trace|^$H " | cut -c1-900
done
