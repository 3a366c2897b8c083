#!/bin/bash
# SPDX-License-Identifier: MIT
# The path-choice matrix (dmaio-bench --tests choice, issue 26) in the test VM: lib:auto against
# every forced path and the O_DIRECT io_uring baseline, per provider x buffer size x range size x
# direction, on real dma-bufs. Writes bench/results/choice-vm-KERNEL[-NAME].{txt,csv,json,log}.
#   bench/vm-choice.sh [--build DIR] [--kernel 6.12|7.3] [--heap LIST] [--name NAME] [--no-build]
#                      [-- MORE DMAIO-BENCH OPTIONS, e.g. --quick or --choice-bufs 16M]
# The default providers are the system heap, the CMA heap (its name on that kernel: "reserved" on
# 6.12, "default_cma_region" on 7.3) and udmabuf; with a CMA heap the guest boots with a CMA area
# large enough for the largest buffer (the kernel's own is 64 MiB). Under TCG --quick (1 run, the
# same sizes) took 43 min for system,udmabuf on 6.12 here (another VM beside it for a while); the
# default 3 runs about twice that, each more provider about half that again. In session 27, the
# three providers with --quick (1 run, --choice-repeat 1) took 23.5 min on 6.12 and 26.8 on 7.3.
# --tcg-thread multi: one host thread per vCPU, as every result in bench/results was measured
# (the tests run with one thread for both; tests/vm/README.md, "TCG and text patching").
# DMAIO_BENCH_TRACE=1 in the environment is passed to the guest's dmaio-bench (each cell's
# estimates and auto's path runs: they come back with the table, at the top of the .txt).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=$root/build
kernel=6.12
heap=
name=
nobuild=()
while (($#)); do
	case $1 in
	--build) build=$(cd "${2:?}" && pwd); shift ;;
	--kernel) kernel=${2:?}; shift ;;
	--heap) heap=${2:?}; shift ;;
	--name) name=-${2:?}; shift ;;
	--no-build) nobuild=(--no-build) ;;
	--) shift; break ;;
	*) echo "usage: $0 [--build DIR] [--kernel 6.12|7.3] [--heap LIST] [--name NAME]" \
		"[--no-build] [-- BENCH OPTIONS]" >&2
	   exit 2 ;;
	esac
	shift
done
case $kernel in
6.12) cma=reserved ;;
7.3) cma=default_cma_region ;;
*) echo "$0: --kernel takes 6.12 or 7.3" >&2; exit 2 ;;
esac
heap=${heap:-system,$cma,udmabuf}
# room for the largest buffer in the CMA area (the default one, or the last --choice-bufs given)
append=()
if [[ ,$heap, == *,$cma,* || ,$heap, == *,cma,* ]]; then
	append=(--append cma=768M)
	for ((i = 1; i <= $#; i++)); do
		if [[ ${!i} == --choice-bufs ]]; then
			j=$((i + 1))
			last=${!j##*,}
			case $last in
			*G) append=(--append "cma=$((${last%G} * 1024 + 256))M") ;;
			*M) append=(--append "cma=$((${last%M} + 256))M") ;;
			esac
		fi
	done
fi
out=$root/bench/results/choice-vm-$kernel$name
mkdir -p "$root/bench/results"
echo "== $out: --heap $heap $*" >&2
# the guest cannot write the host's tree: the CSV and the JSON come back on stdout after the text,
# each after a marker line, and are split off here
args=
(($#)) && args=$(printf " %q" "$@")
trace=
[[ ${DMAIO_BENCH_TRACE:-} =~ ^[0-9]+$ ]] && trace="DMAIO_BENCH_TRACE=$DMAIO_BENCH_TRACE "
guest="$trace'$build/bench/dmaio-bench' --dir /mnt/ext4 --heap '$heap' --tests choice"
guest+=" --csv /tmp/choice.csv --json /tmp/choice.json$args; rc=\$?"
guest+="; echo '=== csv'; cat /tmp/choice.csv; echo '=== json'; cat /tmp/choice.json; exit \$rc"
rc=0
"$root/tests/vm/run" --build "$build" "${nobuild[@]}" --kernel "$kernel" --tcg-thread multi \
	--memory 8192 --timeout 14400 "${append[@]}" -- sh -c "$guest" >"$out.all" 2>"$out.log" || rc=$?
sed -n '/^=== csv$/q;p' "$out.all" >"$out.txt"
sed -n '/^=== csv$/,/^=== json$/p' "$out.all" | sed '1d;$d' >"$out.csv"
sed -n '/^=== json$/,$p' "$out.all" | sed '1d' >"$out.json"
rm -f "$out.all"
if ((rc)); then
	echo "== failed ($rc), see $out.txt and $out.log" >&2
	exit 1
fi
"$root/bench/verdict.py" "$out.json" >>"$out.txt" || true
echo "== $out.txt" >&2
