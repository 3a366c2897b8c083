#!/bin/sh
# 7.3, cma=768M: 64K ranges of 512M buffers, reads and writes, quick, every path, per heap; the
# library before (c9166dd: a worktree built with meson, its bench and libdmaio.so* copied to
# build-dev/old) and after (build-dev) in turn in one boot, twice in turn (old new new old)
for H in system default_cma_region udmabuf; do
for L in old new new old; do
	if [ $L = old ]; then B=/work/main/build-dev/old/bench/dmaio-bench; else B=/work/main/build-dev/bench/dmaio-bench; fi
	echo "== $H $L"
	$B --dir /mnt/ext4 --tests choice --quick --heap $H --choice-bufs 512M --choice-ranges 64K --dirs read,write 2>&1 | grep -E "^$H "
done
done
