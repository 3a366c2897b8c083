#!/bin/sh
# SPDX-License-Identifier: MIT
#
# Guest side: dmaio-record against vivid in the test VM, 300 frames of 1920x1080 NV12, each way
# of getting the buffers, and the plain pwrite() loop for comparison. Run from the host with
#   tests/vm/run --build build -- sh bench/vm-record.sh build [buffers]
# (the build directory and tests/ are copied into the guest at the same paths; bench/ with --copy).
set -u
build=${1:?build dir}
rec=$build/examples/dmaio-record
out=/mnt/ext4/dmaio-record.raw
dev=
for d in /dev/video*; do
	# the vivid capture node (single-planar)
	if [ -e "/sys/class/video4linux/${d#/dev/}/name" ] &&
	   grep -q "vid-cap" "/sys/class/video4linux/${d#/dev/}/name"; then dev=$d; break; fi
done
[ -n "$dev" ] || dev=/dev/video0
echo "# vivid capture node $dev ($(cat /sys/class/video4linux/${dev#/dev/}/name 2>/dev/null)); $(uname -r), $(nproc) CPUs"
run() {
	echo
	echo "\$ dmaio-record $*"
	"$rec" --force --device "$dev" --format NV12 --size 1920x1080 --frames 300 "$@" "$out"
	echo "exit status $?"
	rm -f "$out"
}
if [ "${2:-}" = buffers ]; then	# more buffering at 30 fps: does it absorb the guest's stalls?
	run --fps 30 --io mmap --buffers 32
	run --fps 30 --io mmap --buffers 32
	run --fps 30 --io mmap --buffers 32 --depth 64
	exit 0
fi
run --fps 30 --io mmap
run --fps 30 --io mmap --buffers 16
run --fps 30 --io dmabuf --heap system --buffers 16
run --fps 30 --io dmabuf --heap reserved --contiguous --buffers 16
run --fps 30 --io mmap --buffers 16 --baseline-write
run --fps 15 --io mmap
