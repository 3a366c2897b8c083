#!/bin/sh
# built: gcc -O2 -Ibuild-dev/include ovh.c -Lbuild-dev/lib -ldmaio -Wl,-rpath,$PWD/build-dev/lib -o build-dev/ovh/ovh; args: range write reps path only(0 both,1 auto,2 forced) provider MiB file
# auto against forced buffered, 4K writes, one mode per process, in turn (auto forced auto forced),
# the library with timing counters (DMAIO_PROF) around choose/push/op_done/finish
O=/work/main/build-dev/ovh/ovh
export LD_LIBRARY_PATH=/work/main/build-dev/prof/lib DMAIO_PROF=1
for H in default_cma_region system udmabuf; do
	for M in 1 2 1 2; do
		echo "== $H 512M mode $M"
		$O 4096 1 2 5 $M $H 512 /mnt/ext4/ovh.dat 2>&1
	done
	for M in 1 2 1 2; do
		echo "== $H 16M mode $M"
		$O 4096 1 6 5 $M $H 16 /mnt/ext4/ovh16.dat 2>&1
	done
done
