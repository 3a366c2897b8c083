#!/bin/sh
B=/work/main/build-dev/bench/dmaio-bench
rm -f /mnt/ext4/dmaio-bench*
DMAIO_DEBUG=1 $B --dir /mnt/ext4 --heap system --tests frames --fps 30 --frames 150 --runs 1 > /tmp/out.txt 2>/tmp/dbg.txt
grep -E "^lib:|^base:" /tmp/out.txt
echo "== per choice: rw-file est/setup/cpu | bounce-direct est/setup/cpu | done via"
awk '
/  rw-file: [0-9.]+ us =/ {r=sprintf("r %s/%s/%s x%s(%s)", $3, $(NF-7), $(NF-5), $(NF-11), $(NF-10)); next}
/  bounce-direct: [0-9.]+ us =/ {b=sprintf("B %s/%s/%s x%s(%s)", $3, $(NF-7), $(NF-5), $(NF-11), $(NF-10)); next}
/explored/ {x=x " " $2 $3 $4; next}
/within .* of the lowest/ {x=x " bycpu"; next}
/=> done/ {n++; if (n<=200) print n, r, "|", b, "|", $NF, x; r=b=x=""; next}
' /tmp/dbg.txt
grep -m3 "  rw-file: [0-9.]* us =" /tmp/dbg.txt
