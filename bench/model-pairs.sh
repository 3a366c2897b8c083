#!/bin/bash
# SPDX-License-Identifier: MIT
# The equal-terms model target of issue 13, paired: ROUNDS rounds, each one dmaio-bench-model
# process per variant set (default "base,into" and "base,fresh,into"), 1 run each, so every
# lib:load-into number has a baseline measured beside it in the same minute. Prints one line per
# round and set (MB/s, the ratio) and the median ratio per set; keeps each process's JSON in OUT.
#   bench/model-pairs.sh [-b BUILD] [-r ROUNDS] [-H HEAP] [-o OUT] [-s SET]... FILE...
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=$root/build rounds=5 heap=memfd out=$(mktemp -d) sets=()
while getopts b:r:H:o:s: opt; do
	case $opt in
	b) build=$OPTARG ;;
	r) rounds=$OPTARG ;;
	H) heap=$OPTARG ;;
	o) out=$OPTARG ;;
	s) sets+=("$OPTARG") ;;
	*) sed -n 3,7p "$0" >&2; exit 2 ;;
	esac
done
shift $((OPTIND - 1))
[[ $# -gt 0 ]] || { sed -n 3,7p "$0" >&2; exit 2; }
[[ ${#sets[@]} -gt 0 ]] || sets=(base,into base,fresh,into)
mkdir -p "$out"
for r in $(seq 1 "$rounds"); do
	for s in "${sets[@]}"; do
		"$build/bench/dmaio-bench-model" --heap "$heap" --runs 1 --no-verify --variants "$s" \
			--json "$out/r$r-$s.json" "$@" >"$out/r$r-$s.txt"
	done
done
python3 - "$out" "$rounds" "${sets[@]}" <<'EOF'
import json, statistics, sys
out, rounds, sets = sys.argv[1], int(sys.argv[2]), sys.argv[3:]
for s in sets:
    ratios = []
    for r in range(1, rounds + 1):
        with open("%s/r%d-%s.json" % (out, r, s)) as f:
            m = {x["method"]: x["mbps_median"] for x in json.load(f)["results"]}
        base = m["base:uring-direct"]
        others = ", ".join("%s %.0f (%.2fx)" % (k, v, v / base) for k, v in m.items() if k != "base:uring-direct")
        if "lib:load-into" in m:
            ratios.append(m["lib:load-into"] / base)
        print("round %d %s: base %.0f MB/s, %s" % (r, s, base, others))
    if ratios:
        print("%s: lib:load-into / base, median of %d rounds: %.2fx (%.2f-%.2f)" %
              (s, len(ratios), statistics.median(ratios), min(ratios), max(ratios)))
print("JSON of each process: %s" % out)
EOF
