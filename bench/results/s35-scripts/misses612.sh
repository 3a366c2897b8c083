#!/bin/sh
# 6.12: the other six misses of the s34 quick matrix (one sample pair a cell), again with
# three runs a cell (six samples of auto and of the best forced path), traced
B=/work/main/build-dev/bench/dmaio-bench
cell() { # heap buf range dir best name
	DMAIO_BENCH_TRACE=1 $B --dir /mnt/ext4 --tests choice --quick --heap $1 --choice-bufs $2 --choice-ranges $3 --dirs $4 --path auto,$5 --runs 3 --json /tmp/$6.json 2>&1 | grep -v "^dmaio:" | grep -E "trace|^$1 " | cut -c1-400
	echo "== JSON $6"; cat /tmp/$6.json; echo
}
cell system 16M 16M write rw-file s16w
cell system 512M 64K write bounce-direct s512w64
cell reserved 16M 4K read bounce-direct r16r4
cell reserved 512M 4K write buffered r512w4
cell udmabuf 16M 4K read udmabuf-direct u16r4
cell udmabuf 16M 64K read udmabuf-direct u16r64
