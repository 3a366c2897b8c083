#!/bin/sh
B=/work/main/build-dev/bench/dmaio-bench
for k in 1 2 3 4 5; do
rm -f /mnt/ext4/dmaio-bench*
DMAIO_DEBUG=1 $B --dir /mnt/ext4 --heap system --tests frames --fps 30 --frames 150 --runs 2 > /tmp/out.txt 2>/tmp/dbg.txt
echo "=== process $k"
grep -E "^lib:" /tmp/out.txt | cut -c1-60
grep -E "=> done|explored \(|not explored|learned: bounce|learned: rw-file, [0-9]" /tmp/dbg.txt | awk '
/=> done/ {p=$NF; c="?"; if (p=="bounce-direct") c="B"; if (p=="rw-file") c="r"; if (p=="buffered") c="u"; s=s c; next}
/not explored/ {s=s "n"; next}
/explored \(/ {s=s "X"; next}
/learned: bounce/ {s=s "L"; if (nb++<8) print "  " $0; next}
/learned: rw-file/ {if (nr++<4) print "  " $0; next}
END {for (i=1;i<=length(s);i+=150) print substr(s,i,150)}'
done
