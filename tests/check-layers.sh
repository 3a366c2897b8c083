#!/bin/sh
# SPDX-License-Identifier: MIT
#
# check-layers.sh LIBDIR
#
# The layering of lib/ (LIBDIR/LAYERS): every #include "..." of a file under LIBDIR must name
# a header of the file's own layer, dmaio-types.h, or a layer of higher rank (lower in the stack).
# Every directory of LIBDIR must be a layer of LAYERS. Prints each violation; exit 1 if any.
set -u
lib=${1:?usage: check-layers.sh LIBDIR}
layers=$lib/LAYERS
pubinc=$lib/../include
# the test VM runs the build with only parts of the source tree: a static check, done on the host
if [ "${DMAIO_TEST_VM:-0}" = 1 ] || [ ! -d "$lib" ]; then
	echo "SKIP: the source tree is not here (test VM)"
	exit 77
fi
[ -f "$layers" ] || { echo "FAIL: $layers missing"; exit 1; }

# "layer=rank" words, read once; rank_of LAYER sets rank ("" when LAYER is not a layer) without a
# fork per lookup (the selftest runs this check once per planted violation)
ranks=$(awk '!/^#/ && NF >= 2 { print $2 "=" $1 }' "$layers")
rank_of() {
	rank=
	for kv in $ranks; do
		if [ "${kv%%=*}" = "$1" ]; then rank=${kv#*=}; return; fi
	done
}

bad=0
for d in "$lib"/*/; do
	l=${d%/}; l=${l##*/}
	rank_of "$l"
	[ -n "$rank" ] || { echo "FAIL: lib/$l/ is not a layer of LAYERS"; bad=1; }
done
checked=0
for f in "$lib"/*/*.c "$lib"/*/*.h; do
	[ -f "$f" ] || continue
	layer=${f%/*}; layer=${layer##*/}
	rank_of "$layer"; r=$rank
	[ -n "$r" ] || continue
	# every quoted include: "x.h" (own layer), "../dmaio-types.h", "../L/x.h"
	for inc in $(sed -n 's/^[[:space:]]*#[[:space:]]*include[[:space:]]*"\([^"]*\)".*/\1/p' "$f"); do
		checked=$((checked + 1))
		case $inc in
		../dmaio-types.h) continue ;;
		../*/*)
			to=${inc#../}; to=${to%%/*}
			if [ "$r" -lt 0 ]; then
				echo "FAIL: ${f#"$lib"/} ($layer, rank $r: public API only) includes $inc"
				bad=1
				continue
			fi
			rank_of "$to"; tr=$rank
			if [ -z "$tr" ]; then
				echo "FAIL: ${f#"$lib"/} includes $inc: $to is not a layer"; bad=1
			elif [ "$tr" -le "$r" ] && [ "$to" != "$layer" ]; then
				echo "FAIL: ${f#"$lib"/} ($layer, rank $r) includes $inc ($to, rank $tr): a layer above or beside it"
				bad=1
			fi ;;
		*/*) echo "FAIL: ${f#"$lib"/} includes $inc: not a path this check knows"; bad=1 ;;
		*)
			# its own layer (a BPF skeleton X.skel.h is generated from the layer's own
			# X.bpf.c); a public-API layer may also name a header of include/ (dmaio.h is
			# generated from dmaio.h.in)
			if [ "$r" -lt 0 ] && [ ! -f "$(dirname "$f")/$inc" ] && [ ! -f "$pubinc/$inc" ] &&
			   [ ! -f "$pubinc/$inc.in" ] &&
			   [ ! -f "$(dirname "$f")/${inc%.skel.h}.bpf.c" ]; then
				echo "FAIL: ${f#"$lib"/} ($layer, rank $r) includes $inc: neither its own" \
					"header nor a public one"
				bad=1
			fi ;;
		esac
	done
done
[ "$checked" -gt 0 ] || { echo "FAIL: no include checked (wrong LIBDIR?)"; exit 1; }
[ "$bad" = 0 ] && echo "ok: $checked includes of lib/ follow LAYERS"
exit "$bad"
