#!/bin/sh
# rw-file forced frames: the calls' CPU the library measured (DMAIO_DEBUG sums) vs the worker
# threads' own runtime (schedstat, ns)
B=/work/main/build-dev/bench/dmaio-bench
rm -f /mnt/ext4/dmaio-bench*
DMAIO_DEBUG=1 DMAIO_PATH=rw-file $B --dir /mnt/ext4 --heap system --tests frames --fps 30 --frames 150 --runs 1 > /tmp/out.txt 2>/tmp/dbg.txt &
pid=$!
: > /tmp/th.txt
while kill -0 $pid 2>/dev/null; do
	for t in /proc/$pid/task/*; do
		echo "$(basename $t) $(cat $t/comm 2>/dev/null) $(cat $t/schedstat 2>/dev/null)" >> /tmp/th.txt
	done
	sleep 0.2
done
wait $pid
grep -E "^lib:|^base:" /tmp/out.txt
awk '{last[$1]=$0} END {for (k in last) print "thread", last[k]}' /tmp/th.txt | sort -k2 -n
grep "CPU in blocking calls" /tmp/dbg.txt | awk '{m+=$(NF-6); n++} END {print "learned lines", n, "measured us sum", m}'
grep "CPU in blocking calls" /tmp/dbg.txt | head -3
grep -c "=> done" /tmp/dbg.txt
grep "=> done" /tmp/dbg.txt | head -3
grep -i "rw-file" /tmp/dbg.txt | grep -v "CPU in blocking\|us = " | head -20
