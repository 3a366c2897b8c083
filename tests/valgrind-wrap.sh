#!/bin/sh
# SPDX-License-Identifier: MIT
# The valgrind test setup's wrapper (meson.build): "valgrind-wrap.sh valgrind --opt... PROG ARGS".
# A test program runs under valgrind. A test that is a script (its program a shell or python)
# runs as it is: valgrind would check the interpreter, not the library (dash's own leaks failed
# the tree checks), and the programs the script starts are not traced anyway.
vg=$1
shift
n=0
for a in "$@"; do
	case $a in
	--*) n=$((n + 1)) ;;
	*) break ;;
	esac
done
prog=
i=0
for a in "$@"; do
	if [ "$i" -eq "$n" ]; then
		prog=$a
		break
	fi
	i=$((i + 1))
done
case ${prog##*/} in
sh | dash | bash | python3 | python3.*)
	shift "$n"
	exec "$@"
	;;
esac
exec "$vg" "$@"
