#!/bin/sh
# 4K writes with the caller's own fdatasync(), one mode per process: auto of the library before
# (425f39a, build-dev/prof) and after (build-dev), and buffered forced, in turn (7.3, cma=768M)
O=/work/main/build-dev/ovh/ovh
for H in default_cma_region system udmabuf; do
	for S in 512 16; do
		R=2; [ $S = 16 ] && R=6
		for L in old new forced new old forced; do
			echo "== $H ${S}M $L"
			case $L in
			old) LD_LIBRARY_PATH=/work/main/build-dev/prof/lib $O 4096 1 $R 5 1 $H $S /mnt/ext4/ovh$S.dat 2>&1 | grep -v "^prof" ;;
			new) $O 4096 1 $R 5 1 $H $S /mnt/ext4/ovh$S.dat 2>&1 ;;
			forced) $O 4096 1 $R 5 2 $H $S /mnt/ext4/ovh$S.dat 2>&1 ;;
			esac
		done
	done
done
