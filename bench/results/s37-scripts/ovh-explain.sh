#!/bin/sh
# 4K writes with the caller's own fdatasync(): auto, buffered forced, bounce-direct forced, each
# the log ovh-explain-7.3-first-try.log: the library of 425f39a with a first try of 6da00fe (the direct writes ratio on the bytes of the model, ops left out)
# with the estimates after every pass (7.3, cma=768M)
O=/work/main/build-dev/ovh/ovh
for H in default_cma_region system; do
	for M in "1 5" "2 5" "2 4"; do
		echo "== $H 512M mode/path $M"
		$O 4096 1 2 $(echo $M | cut -d' ' -f2) $(echo $M | cut -d' ' -f1) $H 512 /mnt/ext4/ovh512.dat 2>&1
	done
done
