#!/bin/sh
# where a frame writer's CPU goes: system-wide /proc/stat deltas vs the process's own, and the
# threads' split (sampled while it runs), rw-file vs bounce-direct forced
B=/work/main/build-dev/bench/dmaio-bench
for v in rw-file bounce-direct rw-file bounce-direct; do
	rm -f /mnt/ext4/dmaio-bench*
	s0=$(head -1 /proc/stat)
	DMAIO_PATH=$v $B --dir /mnt/ext4 --heap system --tests frames --fps 30 --frames 150 --runs 1 > /tmp/out.txt 2>&1 &
	pid=$!
	: > /tmp/th.txt
	while kill -0 $pid 2>/dev/null; do
		for t in /proc/$pid/task/*; do
			[ -r $t/stat ] && echo "$(basename $t) $(cat $t/comm 2>/dev/null) $(cut -d' ' -f14,15 $t/stat 2>/dev/null)" >> /tmp/th.txt
		done
		sleep 0.2
	done
	wait $pid
	s1=$(head -1 /proc/stat)
	echo "== $v"
	grep -E "^lib:|^base:" /tmp/out.txt
	echo "stat0 $s0"
	echo "stat1 $s1"
	# the last sample of each thread: tid comm utime stime (ticks)
	awk '{last[$1]=$0} END {for (k in last) print "thread", last[k]}' /tmp/th.txt | sort -k2 -n
done
getconf CLK_TCK
