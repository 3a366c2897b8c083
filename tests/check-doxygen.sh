#!/bin/sh
# SPDX-License-Identifier: MIT
#
# check-doxygen.sh SRCDIR BUILDDIR
#
# Doxygen (man/Doxyfile) over the public headers, build/include/dmaio.h (generated from
# include/dmaio.h.in) and include/dmaio-model.h: every function, parameter, return value,
# struct member and macro documented, and no malformed comment. Any warning fails (doxygen's
# WARN_AS_ERROR=FAIL_ON_WARNINGS, and the warning log must be empty).
# Exit 0 clean, 1 warnings, 77 when doxygen is missing.
set -u
case "${LD_PRELOAD:-}" in *vgpreload*) exec env -u LD_PRELOAD sh "$0" "$@" ;; esac

src=${1:?usage: check-doxygen.sh SRCDIR BUILDDIR}
build=${2:?usage: check-doxygen.sh SRCDIR BUILDDIR}
command -v doxygen >/dev/null 2>&1 || { echo "SKIP: doxygen not found (package doxygen)"; exit 77; }
for f in "$src/man/Doxyfile" "$build/include/dmaio.h" "$src/include/dmaio-model.h" "$src/include/dmaio-account.h"; do
	[ -f "$f" ] || { echo "FAIL: $f does not exist"; exit 1; }
done

tmp=$(mktemp -d) || exit 1
trap 'rm -rf "$tmp"' EXIT
{
	cat "$src/man/Doxyfile"
	echo "INPUT = \"$build/include/dmaio.h\" \"$src/include/dmaio-model.h\" \"$src/include/dmaio-account.h\""
	echo "OUTPUT_DIRECTORY = \"$tmp/out\""
	echo "WARN_LOGFILE = \"$tmp/warnings\""
} >"$tmp/Doxyfile"
doxygen "$tmp/Doxyfile" >"$tmp/stdout" 2>&1
r=$?
if [ -s "$tmp/warnings" ] || [ $r != 0 ]; then
	echo "FAIL: doxygen (exit $r) warns about the public headers:"
	cat "$tmp/warnings" "$tmp/stdout" | sed 's/^/    /'
	exit 1
fi
[ -d "$tmp/out/man/man3" ] || { echo "FAIL: doxygen wrote nothing"; exit 1; }
echo "ok: doxygen $(doxygen --version | cut -d' ' -f1): no warning over dmaio.h, dmaio-model.h and dmaio-account.h" \
	"($(ls "$tmp/out/man/man3" | wc -l) pages generated and dropped)"
