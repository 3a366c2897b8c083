#!/bin/sh
# SPDX-License-Identifier: MIT
#
# check-layers-selftest.sh CHECK_LAYERS LIBDIR
#
# check-layers.sh must fail on a copy of lib/ (and include/) with a forbidden include planted:
# each case alone makes it exit 1 and name the file. Exit 0 when every case failed as it should.
set -u
check=${1:?usage: check-layers-selftest.sh CHECK_LAYERS LIBDIR}
lib=${2:?}
if [ "${DMAIO_TEST_VM:-0}" = 1 ] || [ ! -d "$lib" ]; then
	echo "SKIP: the source tree is not here (test VM)"
	exit 77
fi
tmp=$(mktemp -d) || exit 1
trap 'rm -rf "$tmp"' EXIT
rc=0
n=0
# case: file to append to | include line | what
while IFS='|' read -r file line what; do
	[ -n "$file" ] || continue
	n=$((n + 1))
	rm -rf "$tmp/lib" "$tmp/include"
	cp -r "$lib" "$tmp/lib" && cp -r "$lib/../include" "$tmp/include" || exit 1
	printf '%s\n' "$line" >>"$tmp/lib/$file"
	if out=$(sh "$check" "$tmp/lib" 2>&1); then
		echo "FAIL: check-layers.sh passed with $what ($file: $line)"
		rc=1
	elif ! printf '%s\n' "$out" | grep -q "FAIL: ${file}"; then
		echo "FAIL: check-layers.sh failed with $what but did not name $file:"
		printf '%s\n' "$out" | sed 's/^/    /'
		rc=1
	else
		echo "ok: $what refused"
	fi
done <<'CASES'
model/load.c|#include "../api/api.h"|the model layer including the api layer
model/gguf.c|#include "../queue/queue.h"|the model layer including a lower internal layer
model/model.c|#include "engine.h"|the model layer naming a header that is neither its own nor public
api/ctx.c|#include "../model/model.h"|the api layer including the model layer above it
queue/queue.c|#include "../api/api.h"|the queue layer including the api layer above it
queue/queue.c|#include "../probe/probe.h"|the queue layer including the probe layer beside it
providers/choice.c|#include "../probe/probe.h"|the providers layer including the probe layer above it
CASES
# an unknown directory is not a layer
rm -rf "$tmp/lib" "$tmp/include"
cp -r "$lib" "$tmp/lib" && cp -r "$lib/../include" "$tmp/include" && mkdir "$tmp/lib/extra" &&
	echo '#include "../dmaio-types.h"' >"$tmp/lib/extra/x.c"
n=$((n + 1))
if sh "$check" "$tmp/lib" >/dev/null 2>&1; then
	echo "FAIL: check-layers.sh passed with a directory that is not a layer"
	rc=1
else
	echo "ok: a directory that is not a layer refused"
fi
[ "$rc" = 0 ] && echo "ok: $n planted violations, each refused"
exit $rc
