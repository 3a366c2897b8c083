#!/bin/sh
# SPDX-License-Identifier: MIT
#
# check-layers-nm-selftest.sh CHECK_LAYERS_NM LIBDIR OBJDIR MODEL_OBJDIR
#
# check-layers-nm.sh must fail on a copy of the library's objects with one object planted whose
# undefined reference breaks LAYERS: each case alone makes it exit 1 and name the planted object
# and the symbol. Planted objects that follow LAYERS must not be named. The objects are compiled
# with $CC (cc). Exit 0 when every case went as it should.
set -u
check=${1:?usage: check-layers-nm-selftest.sh CHECK_LAYERS_NM LIBDIR OBJDIR MODEL_OBJDIR}
lib=${2:?}
objdir=${3:?}
modeldir=${4:?}
if [ "${DMAIO_TEST_VM:-0}" = 1 ] || [ ! -d "$lib" ]; then
	echo "SKIP: the source tree is not here (test VM)"
	exit 77
fi
if ! command -v "${NM:-nm}" >/dev/null 2>&1; then
	echo "SKIP: ${NM:-nm} (binutils) not found"
	exit 77
fi
cc=${CC:-cc}
for d in "$objdir" "$modeldir"; do
	[ -d "$d" ] || { echo "FAIL: $d: no such directory (build the library first)"; exit 1; }
done
tmp=$(mktemp -d) || exit 1
trap 'rm -rf "$tmp"' EXIT
mkdir "$tmp/lib" "$tmp/model" &&
	cp "$objdir"/*.o "$tmp/lib/" && cp "$modeldir"/*.o "$tmp/model/" || exit 1

rc=0
n=0
# plant EXPECT DIR OBJECT SYMBOLS SOURCE WHAT: compile SOURCE as DIR/OBJECT (DIR lib or model) and
# run the check; EXPECT refused: it fails and names OBJECT and SYMBOLS; allowed: it names not OBJECT
plant() {
	expect=$1 dir=$2 obj=$3 sym=$4 src=$5 what=$6
	n=$((n + 1))
	printf '%s\n' "$src" >"$tmp/planted.c"
	# $cc unquoted: it may be a command with arguments (ccache cc)
	# shellcheck disable=SC2086
	if ! $cc -O0 -c -o "$tmp/$dir/$obj" "$tmp/planted.c" 2>"$tmp/cc.err"; then
		echo "FAIL: cannot compile the planted $obj with $cc:"
		sed 's/^/    /' "$tmp/cc.err"
		exit 1
	fi
	out=$(sh "$check" "$lib" "$tmp/lib" "$tmp/model" 2>&1)
	res=$?
	rm -f "$tmp/$dir/$obj"
	named=$(printf '%s\n' "$out" | grep "^FAIL: $obj " | grep -F "$sym")
	if [ "$expect" = allowed ]; then
		if printf '%s\n' "$out" | grep -q "^FAIL: $obj "; then
			echo "FAIL: check-layers-nm.sh refused $what ($obj: $sym):"
			printf '%s\n' "$out" | sed 's/^/    /'
			rc=1
		else
			echo "ok: $what allowed"
		fi
	elif [ "$res" = 0 ]; then
		echo "FAIL: check-layers-nm.sh passed with $what ($obj: $sym)"
		rc=1
	elif [ -z "$named" ]; then
		echo "FAIL: check-layers-nm.sh failed with $what but did not name $obj and $sym:"
		printf '%s\n' "$out" | sed 's/^/    /'
		rc=1
	else
		echo "ok: $what refused: $named"
	fi
}

plant refused lib queue_x.c.o dmaio_ctx_get \
	'void *dmaio_ctx_get(void *); void *planted(void) { return dmaio_ctx_get(0); }' \
	'the queue layer calling the api layer above it'
plant refused lib sys_x.c.o dmaio_buf_alloc \
	'int dmaio_buf_alloc(void); int planted(void) { return dmaio_buf_alloc(); }' \
	'the sys layer calling an exported function'
plant refused lib queue_x.c.o dmaio_file_probe \
	'int dmaio_file_probe(void); int planted(void) { return dmaio_file_probe(); }' \
	'the queue layer calling the probe layer beside it'
plant refused lib paths_x.c.o dmaio_choose \
	'void *dmaio_choose(void); void *planted(void) { return dmaio_choose(); }' \
	'the paths layer calling the choose layer above it'
plant refused lib providers_x.c.o dmaio_path_buffered \
	'extern char dmaio_path_buffered; char *planted(void) { return &dmaio_path_buffered; }' \
	'the providers layer reading an object of the paths layer above it'
plant refused model model_x.c.o dmaio_q_new \
	'int dmaio_q_new(void); int planted(void) { return dmaio_q_new(); }' \
	'the model layer calling a hidden internal of libdmaio'
plant refused model model_x.c.o dmaio_no_such_internal \
	'int dmaio_no_such_internal(void); int planted(void) { return dmaio_no_such_internal(); }' \
	'the model layer calling a dmaio_ name libdmaio does not export'
plant refused lib extra_x.c.o extra \
	'int planted(void) { return 0; }' \
	'an object of a directory that is not a layer'
plant allowed lib queue_x.c.o 'dmaio_choose sys_ioctl' \
	'void *dmaio_choose(void); int sys_ioctl(void);
int planted(void) { return !dmaio_choose() + sys_ioctl(); }' \
	'the queue layer calling the choose and sys layers below it'
plant allowed model model_x.c.o 'dmaio_buf_alloc malloc' \
	'#include <stdlib.h>
int dmaio_buf_alloc(void); int planted(void) { free(malloc(1)); return dmaio_buf_alloc(); }' \
	'the model layer calling an exported function and libc'
[ "$rc" = 0 ] && echo "ok: $n planted objects, each refused or allowed as LAYERS says"
exit $rc
