#!/bin/bash
# SPDX-License-Identifier: MIT
# gst-vivid.sh PLUGIN_DIR: the GStreamer elements with a real V4L2 device (vivid, in the test VM;
# tests/vm/run brings gst-launch-1.0, the plugin scanner and the core, tracer and video4linux2
# plugins into the guest at their host paths).
#   1. v4l2src io-mode=dmabuf (vivid's buffers exported as dma-bufs) ! tee into dmaiosink and
#      filesink: the two files byte-identical, every frame written from its dma-buf (the stats
#      message dmaiosink posts at EOS: frames-direct = frames-written = N), the index N lines.
#   2. dmaiosrc (image buffers of the library's providers) ! filesink: the recorded file again.
#   3. dmaiosrc ! v4l2sink io-mode=dmabuf-import on vivid's video output (its default output
#      0, S-Video PAL: 720x576 interlaced; a file of random frames of that size): the device
#      imports every frame's dma-buf (no error, EOS).
# Every pipeline runs under the leaks tracer. GStreamer 1.22's v4l2src leaves its element, pool,
# allocators, pad and caps alive at exit by itself (v4l2src ! fakesink does: the baseline,
# measured here), and v4l2sink, the same V4L2 object code, the same with itself as the element;
# a pipeline with one of them may leave that baseline, nothing more; the others nothing.
# Exit 0, 1 on a failure, 77 without GStreamer, the plugin or a vivid capture node.
set -u
plugin_dir=${1:?usage: gst-vivid.sh PLUGIN_DIR}
export GST_PLUGIN_PATH=$plugin_dir GST_REGISTRY=${TMPDIR:-/tmp}/dmaio-gst-vivid-$$.bin
export GST_TRACERS=leaks GST_DEBUG=GST_TRACER:7,leaks:7 GST_DEBUG_NO_COLOR=1
skip() { echo "SKIP: $*"; exit 77; }
fails=0
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }

command -v gst-launch-1.0 >/dev/null || skip "no gst-launch-1.0"
[ -e "$plugin_dir/libgstdmaio.so" ] || skip "libgstdmaio.so not built"
node() { # the /dev node of vivid's first device named *-$1
	local n
	for n in /sys/class/video4linux/video*; do
		[ -e "$n/name" ] || continue
		case $(cat "$n/name") in vivid-*-"$1") echo "/dev/${n##*/}"; return 0 ;; esac
	done
	return 1
}
cap=$(node vid-cap) || {
	if [ "${DMAIO_TEST_VM:-0}" = 1 ] && [[ " ${DMAIO_TEST_DEVICES-v4l2} " == *" v4l2 "* ]]; then
		echo "FAIL: this kernel has vivid and there is no vivid capture node"
		exit 1
	fi
	skip "no vivid capture node"
}
out=$(mktemp -d)
trap 'rm -rf "$out" "$GST_REGISTRY"' EXIT
N=30 W=640 H=360
caps="video/x-raw,format=NV12,width=$W,height=$H"
fsize=$((W * H * 3 / 2))

# the types of the objects a run left alive, one per object, sorted
alive_types() {
	sed -n 's/.*object-alive, type-name=(string)\([A-Za-z0-9_]*\),.*/\1/p' "$1" | sort
}

# run LOG BASELINE PIPELINE...: gst-launch-1.0 -m (messages printed), output in LOG; the leaks
# verdict: what it left alive must be within BASELINE (a file of alive_types, or /dev/null)
run() {
	local log=$1 base=$2
	shift 2
	gst-launch-1.0 -m "$@" >"$log" 2>&1
	local rc=$? extra
	if ! grep -q "listed [0-9]* alive objects" "$log"; then
		fail "no leaks-tracer verdict for: $*"
	else
		# the objects of this run beyond the baseline's, counted per type (awk: the guest's
		# busybox has no comm)
		extra=$(alive_types "$log" | awk -v base="$base" '
			BEGIN { while ((getline t < base) > 0) n[t]++ }
			{ if (n[$0] > 0) n[$0]--; else x[$0]++ }
			END { for (t in x) printf "%d %s ", x[t], t }')
		[ -z "$extra" ] || fail "GStreamer objects alive at exit beyond the baseline's: $extra($*)"
	fi
	return $rc
}

# the baseline of v4l2src's own leaks
gst-launch-1.0 -q v4l2src device="$cap" io-mode=dmabuf num-buffers=2 ! "$caps" ! fakesink \
	>"$out/base.log" 2>&1 || fail "v4l2src io-mode=dmabuf ! fakesink: $(grep -m1 -i error "$out/base.log")"
alive_types "$out/base.log" >"$out/base.alive"
echo "# v4l2src ! fakesink leaves $(wc -l <"$out/base.alive") objects alive: $(uniq -c "$out/base.alive" | tr '\n' ' ')"

# 1. record from vivid's dma-bufs
if ! run "$out/rec.log" "$out/base.alive" v4l2src device="$cap" io-mode=dmabuf num-buffers=$N ! "$caps" ! \
	tee name=t ! queue ! dmaiosink location="$out/a.raw" index-location="$out/a.idx" \
	t. ! queue ! filesink location="$out/b.raw"; then
	fail "v4l2src io-mode=dmabuf ! dmaiosink: $(grep -m1 -i error "$out/rec.log")"
else
	[ "$(stat -c %s "$out/a.raw")" = $((N * fsize)) ] ||
		fail "dmaiosink wrote $(stat -c %s "$out/a.raw") bytes, want $((N * fsize))"
	cmp "$out/a.raw" "$out/b.raw" || fail "dmaiosink's file differs from filesink's"
	[ "$(wc -l <"$out/a.idx")" = $N ] || fail "index: $(wc -l <"$out/a.idx") lines, want $N"
	grep -q "frames-written=(guint64)$N," "$out/rec.log" ||
		fail "stats: no frames-written=$N ($(grep -o 'frames-written=[^,]*' "$out/rec.log"))"
	grep -q "frames-direct=(guint64)$N," "$out/rec.log" ||
		fail "stats: not every frame from its dma-buf ($(grep -o 'frames-direct=[^,]*' "$out/rec.log"))"
	echo "# vivid $cap io-mode=dmabuf: $N frames ${W}x$H NV12, dmaiosink = filesink, all from dma-bufs"
fi

# 2. replay into the library's image buffers, back to a file
if [ -e "$out/a.raw" ]; then
	if ! run "$out/play.log" /dev/null dmaiosrc location="$out/a.raw" index-location="$out/a.idx" ! \
		"$caps,framerate=30/1" ! filesink location="$out/c.raw"; then
		fail "dmaiosrc ! filesink: $(grep -m1 -i error "$out/play.log")"
	else
		cmp "$out/a.raw" "$out/c.raw" || fail "dmaiosrc ! filesink differs from the recording"
		echo "# dmaiosrc ! filesink: the recording reproduced"
	fi
	# 3. into a V4L2 output that imports the dma-bufs
	vout=$(node vid-out) || vout=
	ow=720 oh=576
	head -c $((N * ow * oh * 3 / 2)) /dev/urandom >"$out/o.raw"
	if [ -z "$vout" ]; then
		echo "# no vivid output node: dmaiosrc ! v4l2sink not run"
	elif [ ! -e /dev/dma_heap/system ] && [ ! -e /dev/udmabuf ]; then
		# dmaiosrc's buffers are then memfds, which a V4L2 device cannot import
		echo "# no dma-buf provider (no system heap, no udmabuf): dmaiosrc ! v4l2sink io-mode=dmabuf-import not run"
	elif ! sed 's/^GstV4l2Src$/GstV4l2Sink/' "$out/base.alive" | sort >"$out/obase.alive" ||
		! run "$out/out.log" "$out/obase.alive" dmaiosrc location="$out/o.raw" ! \
		"video/x-raw,format=NV12,width=$ow,height=$oh,interlace-mode=interleaved,framerate=25/1" ! \
		v4l2sink device="$vout" io-mode=dmabuf-import sync=false; then
		fail "dmaiosrc ! v4l2sink io-mode=dmabuf-import: $(grep -m1 -i -A2 error "$out/out.log" | tr '\n' ' ')"
	else
		grep -q '(eos)' "$out/out.log" || fail "dmaiosrc ! v4l2sink: no EOS"
		echo "# dmaiosrc ! v4l2sink $vout io-mode=dmabuf-import: $N frames ${ow}x$oh through the device's dma-buf import mode"
	fi
fi
if ((fails)); then
	for f in "$out"/*.log; do
		echo "--- $f"
		grep -v -e ' leaks ' -e ' GST_TRACER ' "$f" | tail -n 15
	done
	exit 1
fi
echo "# all passed"
