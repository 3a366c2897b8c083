#!/bin/sh
# 6.12, booted with cma=768M: the reserved 512M 4K write cell, and system 512M 64K writes with
# both bounce-direct and buffered forced (the first script's run had auto on buffered)
B=/work/main/build-dev/bench/dmaio-bench
cell() { # heap buf range dir paths name
	DMAIO_BENCH_TRACE=1 $B --dir /mnt/ext4 --tests choice --quick --heap $1 --choice-bufs $2 --choice-ranges $3 --dirs $4 --path auto,$5 --runs 3 --json /tmp/$6.json 2>&1 | grep -v "^dmaio:" | grep -E "trace|^$1 " | cut -c1-400
	echo "== JSON $6"; cat /tmp/$6.json; echo
}
cell reserved 512M 4K write buffered r512w4
cell system 512M 64K write bounce-direct,buffered s512w64b
