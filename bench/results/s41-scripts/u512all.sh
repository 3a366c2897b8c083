#!/bin/sh
# 6.12, cma=768M: the udmabuf heap's whole quick matrix (16M and 512M buffers, every range and
# direction) with three repeats, traced, in one process: does the 512M 4K write cell fail in its
# matrix's context (s40 C73) where it did not alone (u512w.sh)? Only that cell's trace is kept.
B=/work/main/build-dev/bench/dmaio-bench
DMAIO_BENCH_TRACE=1 $B --dir /mnt/ext4 --tests choice --quick --heap udmabuf --choice-repeat 3 2>&1 | grep -v "^dmaio:" | grep -E "trace udmabuf 512M/4K write|^udmabuf |choice run" | cut -c1-900
