#!/bin/sh
# SPDX-License-Identifier: MIT
#
# check-layers-nm.sh LIBDIR OBJDIR...
#
# The layering of lib/ (LIBDIR/LAYERS) checked on what the compiler made of it, the symbols of
# the built objects, where check-layers.sh checks the #include lines. OBJDIR: a directory of the
# library's objects as meson leaves them (build/lib/libdmaio.so.1.1.0.p,
# build/lib/libdmaio-model.so.1.1.0.p, build/lib/libdmaio-fault.a.p); an object's name encodes
# its source file under LIBDIR, "queue_queue.c.o" for queue/queue.c, so its layer is the name up
# to the first '_'.
#
# Every global symbol an object defines (exported or hidden) belongs to that object's layer.
# Every undefined reference of an object of layer L (rank r) to a symbol defined by an object of
# another layer M (rank m) must go down the stack: m > r. A layer of negative rank is a user of
# the library: it may reference the exported symbols of libdmaio (LIBDIR/libdmaio.map), its own
# layer's symbols and those of other libraries (libc, libpthread, jansson), never a hidden
# internal of libdmaio. Prints each violation; exit 1 if any, 77 where this cannot run (the test
# VM, no nm).
set -u
usage() { echo "usage: check-layers-nm.sh LIBDIR OBJDIR..." >&2; exit 2; }
lib=${1:-}
[ -n "$lib" ] || usage
shift
[ $# -ge 1 ] || usage
# the test VM runs the build with only parts of the source tree: a static check, done on the host
if [ "${DMAIO_TEST_VM:-0}" = 1 ] || [ ! -d "$lib" ]; then
	echo "SKIP: the source tree is not here (test VM)"
	exit 77
fi
nm=$(command -v "${NM:-nm}") || {
	echo "SKIP: ${NM:-nm} (binutils) not found"
	exit 77
}
layers=$lib/LAYERS
map=$lib/libdmaio.map
[ -f "$layers" ] || { echo "FAIL: $layers missing"; exit 1; }
[ -f "$map" ] || { echo "FAIL: $map missing"; exit 1; }

tmp=$(mktemp -d) || exit 1
trap 'rm -rf "$tmp"' EXIT
: >"$tmp/syms"
n=0
for d in "$@"; do
	[ -d "$d" ] || { echo "FAIL: $d: no such directory (build the library first)"; exit 1; }
	found=0
	for o in "$d"/*.o; do
		[ -f "$o" ] && found=$((found + 1))
	done
	[ "$found" -gt 0 ] || continue
	n=$((n + found))
	# one nm for the directory, run in it so each line starts with the object's name:
	# "api_alloc.c.o: name type [value size]" (POSIX format); -g: external symbols only, hidden
	# ones too
	if ! (cd "$d" && "$nm" -A -P -g ./*.o) >"$tmp/dir" 2>"$tmp/err"; then
		echo "FAIL: $nm in $d:"; sed 's/^/    /' "$tmp/err"; exit 1
	fi
	awk 'NF >= 3 { o = $1; sub(/^\.\//, "", o); sub(/:$/, "", o); print o, $2, $3 }' \
		"$tmp/dir" >>"$tmp/syms"
done
[ "$n" -gt 0 ] || { echo "FAIL: no object in $* (build the library first)"; exit 1; }

# LAYERS: "rank layer ..."; libdmaio.map: one exported name per line, "	dmaio_x;"
awk -v nobj="$n" '
FILENAME == ARGV[1] { if (!/^#/ && NF >= 2) rank[$2] = $1; next }
FILENAME == ARGV[2] {
	if (/^[ \t]+[A-Za-z_][A-Za-z0-9_]*;[ \t]*$/) {
		s = $1; sub(/;$/, "", s); exported[s] = 1
	}
	next
}
{
	obj = $1; sym = $2; type = $3
	if (!(obj in layer)) {
		l = obj; sub(/_.*/, "", l)
		layer[obj] = l
		if (obj !~ /_/ || !(l in rank)) {
			print "FAIL: " obj " (" l "): not the object of a file of a layer of LAYERS"
			bad = 1
		}
	}
	if (type == "U" || type == "w" || type == "v") {
		nund++; uobj[nund] = obj; usym[nund] = sym
	} else if (!(sym in def)) {
		def[sym] = layer[obj]
	} else if (def[sym] != layer[obj] && index(" " def[sym] " ", " " layer[obj] " ") == 0) {
		def[sym] = def[sym] " " layer[obj] # every layer that defines it
	}
}
END {
	checked = 0
	for (i = 1; i <= nund; i++) {
		obj = uobj[i]; sym = usym[i]; l = layer[obj]
		if (!(l in rank))
			continue
		r = rank[l] + 0
		if (!(sym in def)) {
			# another library; a user of libdmaio may not name an internal of it either
			if (r < 0 && sym ~ /^dmaio_/ && !(sym in exported)) {
				print "FAIL: " obj " (" l ", rank " r ": public API only) references " sym \
					", not an exported symbol of libdmaio (libdmaio.map)"
				bad = 1
			}
			continue
		}
		checked++
		nm_ = split(def[sym], ms, " ")
		own = 0
		for (j = 1; j <= nm_; j++)
			own = own || ms[j] == l
		if (own)
			continue
		for (j = 1; j <= nm_; j++) {
			m = ms[j]; mr = rank[m] + 0
			if (!(m in rank))
				continue # its object is reported as not of a layer
			if (r < 0 && mr >= 0 && !(sym in exported)) {
				print "FAIL: " obj " (" l ", rank " r ": public API only) references " sym \
					" (" m ", rank " mr "): a hidden internal of libdmaio, not in libdmaio.map"
				bad = 1
			} else if (mr <= r) {
				print "FAIL: " obj " (" l ", rank " r ") references " sym " (" m ", rank " mr \
					"): a layer above or beside it"
				bad = 1
			}
		}
	}
	if (!checked && !bad) {
		print "FAIL: no reference between the objects checked (wrong OBJDIR?)"
		exit 1
	}
	if (!bad)
		print "ok: " checked " references between " nobj " objects follow LAYERS"
	exit bad
}' "$layers" "$map" "$tmp/syms" >"$tmp/out"
rc=$?
grep -v '^ok:' "$tmp/out" | sort -u
grep '^ok:' "$tmp/out"
exit $rc
