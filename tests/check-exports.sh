#!/bin/sh
# SPDX-License-Identifier: MIT
#
# check-exports.sh LIBDMAIO_SO HEADER MAPFILE [HEADER...]
#
# The exported functions of the built library, the functions declared in the public headers
# (the union of every HEADER: dmaio.h and dmaio-model.h) and
# the symbols of the version script must be the same set:
#   - no exported symbol that is not dmaio_* (leaked internals, helpers, data),
#   - every dmaio_* function declared in the header is exported (and listed in the map),
#   - nothing exported or listed in the map that the header does not declare,
#   - every export carries a version node of the map.
# Exit 0 ok, 1 mismatch, 77 when the tools are missing or the library is not a shared object.
set -u
strip_awk=$(dirname "$0")/strip-comments.awk
# under the valgrind test setup: run the script itself natively (valgrind would report the
# shell's own leaks)
case "${LD_PRELOAD:-}" in *vgpreload*) exec env -u LD_PRELOAD sh "$0" "$@" ;; esac

so=${1:?usage: check-exports.sh LIBDMAIO_SO HEADER MAPFILE}
header=${2:?}
map=${3:?}
shift 3
headers="$header $*"
for h in $headers; do
	[ -f "$h" ] || { echo "FAIL: header $h does not exist"; exit 1; }
done
hnames=$(for h in $headers; do basename "$h"; done | tr '\n' ' ' | sed 's/ $//')

for t in nm sed sort comm; do
	command -v "$t" >/dev/null 2>&1 || { echo "SKIP: $t not found"; exit 77; }
done
case $so in
*.so | *.so.*) ;;
*) echo "SKIP: $so is not a shared library (default_library=static?)"; exit 77 ;;
esac
[ -f "$so" ] || { echo "FAIL: $so does not exist"; exit 1; }
[ -f "$map" ] || { echo "FAIL: version script $map does not exist"; exit 1; }

tmp=$(mktemp -d) || exit 1
trap 'rm -rf "$tmp"' EXIT

# -- exported (dynamic, defined) symbols, without @VERSION; the version node symbols (type A) out
nm -D --defined-only "$so" >"$tmp/nm.raw" || { echo "FAIL: nm -D $so"; exit 1; }
awk '$2 != "A" { print $3 }' "$tmp/nm.raw" | sed 's/@.*//' | sort -u >"$tmp/exported"
awk '$2 != "A" && $2 !~ /^[TtWiI]$/ { print $3 }' "$tmp/nm.raw" | sed 's/@.*//' |
	sort -u >"$tmp/exported-data"
# every export versioned (binutils >= 2.35 prints name@@NODE)
awk '$2 != "A" && $3 !~ /@/ { print $3 }' "$tmp/nm.raw" | sort -u >"$tmp/unversioned"
awk '$2 == "A" { print $3 }' "$tmp/nm.raw" | sed 's/@.*//' | sort -u >"$tmp/nodes"

# -- functions declared in the header: comments and preprocessor lines removed, then every
#    "dmaio_name (" that is not a macro
awk -f "$strip_awk" $headers | sed -e 's://.*$::' -e '/^[[:space:]]*#/d' |
	tr '\n' ' ' | grep -o 'dmaio_[A-Za-z0-9_]*[[:space:]]*(' | sed 's/[[:space:]]*($//' |
	sort -u >"$tmp/declared"

# -- symbols listed in the version script (global: sections), comments removed
sed -e 's:/\*.*\*/::g' -e 's:#.*$::' "$map" | tr ';{}' '\n\n\n' | sed 's/[[:space:]]//g' |
	awk '/^local:/ { g = 0; next } /^global:/ { g = 1; sub(/^global:/, "") } g && NF' |
	grep -v '^$' | grep -v '^[A-Z_0-9.]*$' | sort -u >"$tmp/mapped"

rc=0
report() { # title file
	if [ -s "$2" ]; then
		echo "FAIL: $1:"
		sed 's/^/    /' "$2"
		rc=1
	fi
}

[ -s "$tmp/declared" ] || { echo "FAIL: no dmaio_* function found in $hnames"; exit 1; }
[ -s "$tmp/exported" ] || { echo "FAIL: $so exports nothing"; exit 1; }

grep -v '^dmaio_' "$tmp/exported" >"$tmp/leaked"
report "exported symbols outside the dmaio_ namespace (leaked)" "$tmp/leaked"
report "exported data objects (the API has none)" "$tmp/exported-data"
comm -23 "$tmp/declared" "$tmp/exported" >"$tmp/missing"
report "declared in $hnames but not exported" "$tmp/missing"
grep '^dmaio_' "$tmp/exported" | comm -13 "$tmp/declared" - >"$tmp/extra"
report "exported but not declared in $hnames" "$tmp/extra"
comm -23 "$tmp/declared" "$tmp/mapped" >"$tmp/notmapped"
report "declared but not listed in $(basename "$map")" "$tmp/notmapped"
comm -13 "$tmp/declared" "$tmp/mapped" >"$tmp/mapextra"
report "listed in $(basename "$map") but not declared" "$tmp/mapextra"
report "exports without a version node" "$tmp/unversioned"
if ! grep -q 'local:[[:space:]]*\*' "$map" && ! tr -d ' \t\n' <"$map" | grep -q 'local:\*'; then
	echo "FAIL: $(basename "$map") has no 'local: *;' (everything else would be exported)"
	rc=1
fi
[ -s "$tmp/nodes" ] || { echo "FAIL: no version node in $so"; rc=1; }

echo "# declared $(wc -l <"$tmp/declared"), exported $(wc -l <"$tmp/exported")," \
	"in the map $(wc -l <"$tmp/mapped"), version nodes: $(tr '\n' ' ' <"$tmp/nodes")"
[ $rc = 0 ] && echo "ok: exports, header and version script agree"
exit $rc
