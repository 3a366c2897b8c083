#!/bin/sh
B=/work/wt-model/build
cd /mnt/ext4 || exit 1
df -h . | tail -1
$B/examples/dmaio-load --generate ./m --format st --shards 3 --tensors 1000 --size-mib 512
$B/examples/dmaio-load --generate ./c --format gguf --shards 2 --tensors 100 --size-mib 40
for h in system udmabuf; do
  echo "== dmaio-load $h (3 safetensors shards)"
  $B/examples/dmaio-load --heap $h --mode packed --cold --drop-cache --verify ./m-0000*.safetensors
done
echo "== dmaio-load reserved (CMA, 2 GGUF shards)"
$B/examples/dmaio-load --heap reserved --mode whole --cold --verify ./c-0000*.gguf
$B/examples/dmaio-load --list ./c-0000*.gguf | head -3
for h in system udmabuf; do
  echo "== bench $h"
  $B/bench/dmaio-bench-model --heap $h --runs 3 ./m-0000*.safetensors
done
