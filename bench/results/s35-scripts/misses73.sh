#!/bin/sh
# 7.3, booted with cma=768M: the FAIL and the seven misses of the s35 quick matrix (one sample
# pair a cell), again with three runs a cell (six samples of auto and of the best forced path), traced
B=/work/main/build-dev/bench/dmaio-bench
cell() { # heap buf range dir paths name
	DMAIO_BENCH_TRACE=1 $B --dir /mnt/ext4 --tests choice --quick --heap $1 --choice-bufs $2 --choice-ranges $3 --dirs $4 --path auto,$5 --runs 3 --json /tmp/$6.json 2>&1 | grep -v "^dmaio:" | grep -E "trace|^$1 " | cut -c1-400
	echo "== JSON $6"; cat /tmp/$6.json; echo
}
cell default_cma_region 512M 4K write buffered,bounce-direct c512w4
cell system 16M 4K write buffered s16w4
cell system 512M 64K read rw-file s512r64
cell default_cma_region 16M 64K read bounce-direct c16r64
cell default_cma_region 512M 1M write bounce-direct c512w1m
cell default_cma_region 512M 16M write bounce-direct c512w16m
cell udmabuf 16M 16M write udmabuf-direct u16w16m
cell udmabuf 512M 1M read udmabuf-direct u512r1m
