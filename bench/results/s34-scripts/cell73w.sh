#!/bin/sh
# 7.3, system heap, 512M buffer, 64K ranges, writes: auto vs rw-file vs bounce-direct, traced
DMAIO_BENCH_TRACE=1 /work/main/build-dev/bench/dmaio-bench --dir /mnt/ext4 --tests choice --quick --heap system --choice-bufs 512M --choice-ranges 64K --dirs write --path auto,rw-file,bounce-direct --runs 3 --json /tmp/cell.json 2>&1 | grep -v "^dmaio:" | tail -80
echo "== JSON"
cat /tmp/cell.json
