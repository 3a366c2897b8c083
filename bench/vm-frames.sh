#!/bin/bash
# SPDX-License-Identifier: MIT
# The frame writer (dmaio-bench --tests frames: 1080p NV12 frames at 30 fps from a ring of 4
# buffers, CPU per frame) in the test VM, each path in a process of its own, one after the other
# in one VM boot (issue 26: "CPU per frame within 10% of the cheapest path"). A variant is auto
# (DMAIO_PATH unset), auto-debug (the same with DMAIO_DEBUG=1: the paths its requests took, the
# CPU its blocking calls learned, the machine's costs and its last estimates of rw-file and
# bounce-direct, from the debug lines) or a path's name (DMAIO_PATH=name). Every boot's first
# process has run its own write() baseline 1.2-1.4x dearer than the others (bench/RESULTS.md,
# sessions 32 and 33): compare a variant against the others of its boot, and its write() line.
# Writes bench/results/vm-frames-KERNEL[-NAME].txt.
#   bench/vm-frames.sh [--build DIR] [--kernel 6.12|7.3] [--heap NAME] [--name NAME]
#                      [--variants "auto rw-file bounce-direct auto auto-debug"] [--no-build]
#                      [-- MORE DMAIO-BENCH OPTIONS, e.g. --runs 3]
# About 50 s a variant under TCG (150 frames, 2 runs).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=$root/build
kernel=6.12
heap=system
name=
variants="auto rw-file bounce-direct auto auto-debug"
nobuild=()
while (($#)); do
	case $1 in
	--build) build=$(cd "${2:?}" && pwd); shift ;;
	--kernel) kernel=${2:?}; shift ;;
	--heap) heap=${2:?}; shift ;;
	--name) name=-${2:?}; shift ;;
	--variants) variants=${2:?}; shift ;;
	--no-build) nobuild=(--no-build) ;;
	--) shift; break ;;
	*) echo "usage: $0 [--build DIR] [--kernel 6.12|7.3] [--heap NAME] [--name NAME]" \
		"[--variants LIST] [--no-build] [-- BENCH OPTIONS]" >&2
	   exit 2 ;;
	esac
	shift
done
case $kernel in
6.12 | 7.3) ;;
*) echo "$0: --kernel takes 6.12 or 7.3" >&2; exit 2 ;;
esac
for v in $variants; do
	case $v in
	auto | auto-debug | rw-file | uring-dmabuf | udmabuf-direct | bounce-direct | buffered | sendfile) ;;
	*) echo "$0: unknown variant $v" >&2; exit 2 ;;
	esac
done
args=
(($#)) && args=$(printf " %q" "$@")
bench="'$build/bench/dmaio-bench' --dir /mnt/ext4 --heap '$heap' --tests frames --fps 30"
bench+=" --frames 150 --runs 2$args"
# the guest script: one process per variant; the debug lines summarised in the guest (they are
# many: a few per frame)
guest=
for v in $variants; do
	guest+="echo '== variant $v';"
	case $v in
	auto) guest+="$bench;" ;;
	auto-debug)
		guest+="DMAIO_DEBUG=1 $bench 2>/tmp/dbg.txt;"
		guest+="echo '-- the paths its requests took';"
		guest+="grep -o '=> done [0-9]* bytes via [a-z-]*' /tmp/dbg.txt | awk '{print \$NF}' | sort | uniq -c;"
		guest+="echo '-- the CPU its blocking calls learned (first and last 3)';"
		guest+="grep 'CPU in blocking calls' /tmp/dbg.txt | head -3;"
		guest+="grep 'CPU in blocking calls' /tmp/dbg.txt | tail -3;"
		guest+="echo '-- the costs measured';"
		guest+="grep 'costs (' /tmp/dbg.txt | head -3;"
		guest+="echo '-- the last estimates of rw-file and bounce-direct';"
		guest+="grep '^dmaio:.*  rw-file: [0-9]' /tmp/dbg.txt | tail -2;"
		guest+="grep '^dmaio:.*  bounce-direct: [0-9]' /tmp/dbg.txt | tail -2;"
		;;
	*) guest+="DMAIO_PATH=$v $bench;" ;;
	esac
done
out=$root/bench/results/vm-frames-$kernel$name
mkdir -p "$root/bench/results"
echo "== $out.txt: --heap $heap, variants: $variants" >&2
{
	echo "# bench/vm-frames.sh --kernel $kernel --heap $heap --variants '$variants'$args" \
		"($(git -C "$root" rev-parse --short HEAD 2>/dev/null || echo '?'), $(date +%F), one VM boot)"
	"$root/tests/vm/run" --build "$build" "${nobuild[@]}" --kernel "$kernel" --tcg-thread multi \
		--memory 8192 --timeout 3600 -- sh -c "$guest"
} >"$out.txt" 2>&1 || { echo "== failed, see $out.txt" >&2; exit 1; }
echo "== $out.txt" >&2
