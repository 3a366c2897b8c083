#!/bin/sh
# 7.3, booted with cma=768M: the CMA 512M 4K write cell as the quick matrix runs it (one run:
# check passes, then auto first), three processes, traced: does auto's first pass stay on
# bounce-direct after the check passes taught buffered 6-8x?
B=/work/main/build-dev/bench/dmaio-bench
for i in 1 2 3; do
	echo "== process $i"
	DMAIO_BENCH_TRACE=1 $B --dir /mnt/ext4 --tests choice --quick --heap default_cma_region --choice-bufs 512M --choice-ranges 4K --dirs write --path auto,bounce-direct,buffered --runs 1 --json /tmp/fp$i.json 2>&1 | grep -v "^dmaio:" | grep -E "trace|^default_cma_region " | cut -c1-700
	python3 -c "
import json; d=json.load(open('/tmp/fp$i.json'))
for r in d['results']:
    print(r['method'], r.get('mbps_median'), [round(x['mbps']) for x in r.get('per_run',[])], r.get('path_bytes',''))
" 2>/dev/null || cat /tmp/fp$i.json
done
