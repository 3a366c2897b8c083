#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""vm-vfio-table.py: the fault-cost table of bench/RESULTS.md from bench/vm-vfio.sh's outputs
(bench/results/vm-vfio-7.3-mmap-{on,off}[-rN].txt): per mapping, alignment and threads, the
median over rounds (boots) of each boot's median ns per fault, with the range of the rounds,
and the ratio of the series' device fd mapping (on) to mainline's (off).
  bench/vm-vfio-table.py [RESULTS_DIR]"""
import glob
import os
import re
import statistics
import sys

d = sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(__file__), "results")
row = re.compile(r"^(devfd|dma-buf)\s+(2M|4K\+)\s+(\d+)\s+(\d+)\s+([\d.]+) \[.*?\]\s+([\d.]+) \[.*?\]\s+(-?\d+) \[")
data = {}
for mode in ("on", "off"):
    files = sorted(glob.glob(os.path.join(d, f"vm-vfio-7.3-mmap-{mode}.txt")) +
                   glob.glob(os.path.join(d, f"vm-vfio-7.3-mmap-{mode}-r*.txt")))
    for f in files:
        for line in open(f):
            m = row.match(line)
            if m:
                key = (mode, m.group(1), m.group(2), int(m.group(3)))
                data.setdefault(key, []).append((int(m.group(7)), float(m.group(5)), int(m.group(4))))
print("| mapping | kernel | alignment | threads | faults | cold pass ms | ns per fault (median of boots) | boots' range | × mainline |")
print("|---|---|---|---:|---:|---:|---:|---|---:|")
for mapping in ("devfd", "dma-buf"):
    for align in ("4K+", "2M"):
        for thr in (1, 2, 4):
            for mode in ("off", "on"):
                v = data.get((mode, mapping, align, thr))
                if not v:
                    continue
                ns = [x[0] for x in v]
                med = statistics.median(ns)
                base = data.get(("off", "devfd", align, thr))
                ratio = f"{med / statistics.median(x[0] for x in base):.2f}" if base else "–"
                print(f"| {'device fd' if mapping == 'devfd' else 'dma-buf'} | "
                      f"{'series on' if mode == 'on' else 'mainline'} | "
                      f"{'2 MiB aligned' if align == '2M' else '4 KiB off 2 MiB'} | {thr} | "
                      f"{v[0][2]} | {statistics.median(x[1] for x in v):.1f} | {med:.0f} | "
                      f"{min(ns)}–{max(ns)} ({len(ns)}) | {ratio} |")
