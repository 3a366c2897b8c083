#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""The cost tables of README.md "The kernels users run", from the CSV that bench/vm-debian.sh
wrote (bench/results/debian-<kernel>[-run2]-{io,queue}.csv: pass 1 and, where present, pass 2).
Prints Markdown.

io: per kernel and provider, cold reads and writes of 16 MiB and 256 MiB: the best library path
(the fastest lib:<path> method of pass 1, lib:auto left out) against the better of the two
O_DIRECT io_uring baselines (into anonymous memory and into a memfd: dmaio-bench's "x direct"),
medians of 3 runs; then what lib:auto (the library's own choice) got.
queue: per kernel and provider, cold random ranges (64K, 1M) and whole 16M files: lib:queue
against the O_DIRECT io_uring baseline (32 in flight), then lib:sync (one call per range).
Each cell: ratio of pass 1 · ratio of pass 2 (MB/s library / baseline of each pass).

  bench/vm-debian-table.py [RESULTS_DIR]
"""
import csv
import os
import sys

KERNELS = [("6.1", "Debian 12 stock (`debian-6.1`)"),
           ("6.12", "Debian 13 / backports (`debian-6.12`)"),
           ("7.3", "our 7.3 (`7.3 --uring-dmabuf=on`)")]
TAGS = ["", "-run2"]


def load(d, k, tag, what):
    p = os.path.join(d, "debian-%s%s-%s.csv" % (k, tag, what))
    try:
        with open(p, newline="") as f:
            return list(csv.DictReader(f))
    except OSError as e:
        print("# %s: %s" % (p, e), file=sys.stderr)
        return None


def mib(n):
    return "%dM" % (int(n) >> 20) if int(n) >= 1 << 20 else "%dK" % (int(n) >> 10)


def kind(m):
    return m.partition("@")[0]


def mbps(r):
    return float(r["mbps_median"])


def providers(rows):
    provs = []
    for r in rows:
        if r["method"].startswith("lib:") and r["provider"] not in provs:
            provs.append(r["provider"])
    return provs


def cell(passes, base_of, lib_of, other_of, other_name):
    """passes: the rows of each pass; lib_of(rows) picks the library row (pass 1 decides the
    method, the same method is taken from pass 2)."""
    first = None
    ratios, mbs, others = [], [], []
    for rows in passes:
        b = base_of(rows)
        r = lib_of(rows, first)
        if b is None or r is None:
            continue
        if first is None:
            first = r
        ratios.append("%.2f×" % (mbps(r) / b))
        mbs.append("%.0f/%.0f" % (mbps(r), b))
        o = other_of(rows)
        if o is not None:
            others.append("%.2f×" % (mbps(o) / b))
    if first is None:
        return "–"
    c = "`%s` **%s** (%s)" % (first["path"], " · ".join(ratios), " · ".join(mbs))
    if others:
        c += "; %s %s" % (other_name, " · ".join(others))
    return c


def io_table(d, direction):
    sizes = [16 << 20, 256 << 20]
    print("| cold %s | buffer | %s |" % (direction, " | ".join(mib(s) for s in sizes)))
    print("|---|---|" + "---|" * len(sizes))
    for k, label in KERNELS:
        passes = [x for x in (load(d, k, t, "io") for t in TAGS) if x is not None]
        passes = [[r for r in p if r["test"] == "io" and r["mode"] == "cold" and r["dir"] == direction]
                  for p in passes]
        if not passes:
            continue
        for prov in providers(passes[0]):
            cells = []
            for sz in sizes:
                sel = [[r for r in p if int(r["size_bytes"]) == sz] for p in passes]

                def base_of(rows):
                    v = [mbps(r) for r in rows if r["method"] in ("base:uring-direct", "base:uring-shm")]
                    return max(v) if v else None

                def lib_of(rows, first):
                    v = [r for r in rows if r["provider"] == prov and r["method"].startswith("lib:")
                         and kind(r["method"]) != "lib:auto"]
                    if first is not None:
                        v = [r for r in v if r["method"] == first["method"]]
                    return max(v, key=mbps) if v else None

                def auto_of(rows):
                    v = [r for r in rows if r["provider"] == prov and kind(r["method"]) == "lib:auto"]
                    return v[0] if v else None

                auto_path = auto_of(sel[0])
                name = "auto" if auto_path is None else "auto (`%s`)" % auto_path["path"]
                cells.append(cell(sel, base_of, lib_of, auto_of, name))
            print("| %s | %s | %s |" % (label, prov, " | ".join(cells)))


def queue_table(d):
    cols = [("ranges", 64 << 10), ("ranges", 1 << 20), ("files", 16 << 20)]
    print("| cold, queued | buffer | " + " | ".join(
        ("%s random ranges" if t == "ranges" else "%s whole files") % mib(sz) for t, sz in cols) + " |")
    print("|---|---|" + "---|" * len(cols))
    for k, label in KERNELS:
        passes = [x for x in (load(d, k, t, "queue") for t in TAGS) if x is not None]
        if not passes:
            continue
        for prov in providers(passes[0]):
            cells = []
            for t, sz in cols:
                sel = [[r for r in p if r["test"] == t and int(r["size_bytes"]) == sz] for p in passes]

                def base_of(rows):
                    v = [mbps(r) for r in rows if r["method"] == "base:uring-direct"]
                    return v[0] if v else None

                def pick(rows, what):
                    v = [r for r in rows if r["provider"] == prov and kind(r["method"]) == what]
                    return v[0] if v else None

                cells.append(cell(sel, base_of, lambda rows, first: pick(rows, "lib:queue"),
                                  lambda rows: pick(rows, "lib:sync"), "sync"))
            print("| %s | %s | %s |" % (label, prov, " | ".join(cells)))


def main():
    d = sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(__file__), "results")
    io_table(d, "read")
    print()
    io_table(d, "write")
    print()
    queue_table(d)


if __name__ == "__main__":
    main()
