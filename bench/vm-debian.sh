#!/bin/bash
# SPDX-License-Identifier: MIT
# What the library finds and what it costs on the kernels users run (issue 27): one boot each of
# Debian 12's stock kernel (debian-6.1), the Debian 13 / bookworm-backports line (debian-6.12) and
# our 7.3 build with the proposed uAPIs (RW_FILE and the io_uring dma-buf registration on). In
# each boot, one after the other:
#   info:  dmaio-info (providers, heaps, RW_FILE, udmabuf, io_uring features, cachestat); the
#          paths that serve each provider are in the io test's header (lib:auto and every path)
#   io:    dmaio-bench --tests io --sizes 16M,256M --runs 3 (cold and warm, read and write)
#   queue: dmaio-bench --tests ranges,files --quick --runs 3
# both with every provider the boot has: system,udmabuf where /dev/dma_heap/system and
# /dev/udmabuf exist, memfd otherwise (the guest decides from its device nodes).
# Writes bench/results/debian-<kernel>-{info,io,queue}.txt, -{io,queue}.csv and -boot.log (the
# harness's stderr); <kernel> is 6.1, 6.12, 7.3. About 10-40 min a boot on 2 shared cores.
#   bench/vm-debian.sh [BUILD_DIR] [KERNEL...]      (KERNEL: 6.1 6.12 7.3, default all three)
# TAG=-run2 bench/vm-debian.sh ...: the files are debian-<kernel>-run2-* (a second pass).
# --tcg-thread multi: one host thread per vCPU, as every result in bench/results was measured
# (the tests run with one thread for both; tests/vm/README.md, "TCG and text patching").
set -euo pipefail
if [[ ${1:-} == --guest ]]; then
	# guest side: tests/vm/run -- bash THIS --guest BUILD_DIR
	build=$2
	heaps=memfd
	[[ -e /dev/dma_heap/system && -e /dev/udmabuf ]] && heaps=system,udmabuf
	section() { echo "@@VMDEB@@ $*"; }
	step() { # NAME CMD...
		local name=$1 t0 rc=0; shift
		section BEGIN "$name"
		echo "\$ $*"
		t0=$(date +%s)
		"$@" 2>&1 || rc=$?
		echo "# exit status $rc, $(($(date +%s) - t0)) s in the guest; $(uname -r); heaps $heaps"
		section END "$name"
	}
	step info "$build/examples/dmaio-info"
	step io "$build/bench/dmaio-bench" --dir /mnt/ext4 --heap "$heaps" --tests io --sizes 16M,256M \
		--runs 3 --csv /tmp/io.csv
	step queue "$build/bench/dmaio-bench" --dir /mnt/ext4 --heap "$heaps" --tests ranges,files \
		--quick --runs 3 --csv /tmp/queue.csv
	for c in io queue; do
		section BEGIN "$c.csv"
		cat "/tmp/$c.csv" 2>/dev/null || true
		section END "$c.csv"
	done
	exit 0
fi
root=$(cd "$(dirname "$0")/.." && pwd)
build=$(cd "${1:-$root/build}" && pwd)
shift || true
kernels=("$@")
((${#kernels[@]})) || kernels=(6.1 6.12 7.3)
out=$root/bench/results
tag=${TAG:-}
mkdir -p "$out"
for k in "${kernels[@]}"; do
	case $k in
	6.1 | 6.12) args=(--kernel "debian-$k") ;;
	7.3) args=(--kernel 7.3 --rwfile=on --uring-dmabuf=on) ;;
	*) echo "unknown kernel $k (6.1, 6.12, 7.3)" >&2; exit 2 ;;
	esac
	raw=$(mktemp)
	t0=$(date +%s)
	load0=$(cut -d' ' -f1-3 /proc/loadavg)
	echo "== $k: ${args[*]}" >&2
	rc=0
	"$root/tests/vm/run" "${args[@]}" --build "$build" --no-build --tcg-thread multi --memory 8192 \
		--timeout 5400 --copy "$root/bench/vm-debian.sh" -- bash "$root/bench/vm-debian.sh" --guest "$build" \
		>"$raw" 2>"$out/debian-$k$tag-boot.log" || rc=$?
	{
		echo "# tests/vm/run ${args[*]} ...: exit status $rc, $(($(date +%s) - t0)) s wall clock on the host"
		echo "# started $(date -u -d "@$t0" '+%F %T') UTC; host load average before: $load0, after: $(cut -d' ' -f1-3 /proc/loadavg)"
	} >>"$out/debian-$k$tag-boot.log"
	for s in info io queue io.csv queue.csv; do
		f=$out/debian-$k$tag-$s
		[[ $s == *.csv ]] || f=$f.txt
		awk -v s="$s" '$0 == "@@VMDEB@@ BEGIN " s { on = 1; next } $0 == "@@VMDEB@@ END " s { on = 0 } on' \
			"$raw" >"$f"
		[[ -s $f ]] || { rm -f "$f"; echo "== $k: no $s output, see $out/debian-$k$tag-boot.log" >&2; }
	done
	# whatever the command printed outside the sections goes to the log
	awk '/^@@VMDEB@@ BEGIN/ { on = 1; next } /^@@VMDEB@@ END/ { on = 0; next } !on' "$raw" \
		>>"$out/debian-$k$tag-boot.log"
	rm -f "$raw"
	echo "== $k: exit status $rc, $(($(date +%s) - t0)) s" >&2
done
