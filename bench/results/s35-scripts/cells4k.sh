#!/bin/sh
# 6.12: the 4 KiB misses of the s34 quick matrix where auto's bytes went the best path's way:
# udmabuf 512M writes (buffered) and system 512M reads (bounce-direct); auto against that path, traced
B=/work/main/build-dev/bench/dmaio-bench
DMAIO_BENCH_TRACE=1 $B --dir /mnt/ext4 --tests choice --quick --heap udmabuf --choice-bufs 512M --choice-ranges 4K --dirs write --path auto,buffered --runs 3 --json /tmp/w.json 2>&1 | grep -v "^dmaio:" | tail -40
DMAIO_BENCH_TRACE=1 $B --dir /mnt/ext4 --tests choice --quick --heap system --choice-bufs 512M --choice-ranges 4K --dirs read --path auto,bounce-direct --runs 3 --json /tmp/r.json 2>&1 | grep -v "^dmaio:" | tail -40
echo "== JSON w"; cat /tmp/w.json; echo "== JSON r"; cat /tmp/r.json
