#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""The 6.12 vs 7.3 table of bench/RESULTS.md, from the JSON that bench/vm-kernels.sh wrote
(bench/results/vm-kernels-<kernel>-{alloc-mmap,paths}.json). Prints Markdown.

  bench/vm-kernels-table.py [RESULTS_DIR]
"""
import json
import os
import sys

KERNELS = ["6.12", "7.3"]


def load(d, k, what):
    p = os.path.join(d, "vm-kernels-%s-%s.json" % (k, what))
    try:
        with open(p) as f:
            return json.load(f)
    except (OSError, ValueError) as e:
        print("# %s: %s" % (p, e), file=sys.stderr)
        return None


def rows(doc, test):
    return [r for r in (doc or {}).get("results", []) if r.get("test") == test and r.get("status") == "ok"]


def fmt(v, spec="%.0f"):
    return spec % v if isinstance(v, (int, float)) else "–"


def main():
    d = sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(__file__), "results")
    docs = {k: (load(d, k, "alloc-mmap"), load(d, k, "paths")) for k in KERNELS}

    print("| alloc / mmap (median ms) | " + " | ".join(KERNELS) + " |")
    print("|---|" + "---:|" * len(KERNELS))
    keys = []
    for k in KERNELS:
        for r in rows(docs[k][0], "alloc") + rows(docs[k][0], "mmap"):
            key = (r["test"], r["provider"], r["method"], r["size_bytes"], r.get("count"))
            if key not in keys:
                keys.append(key)
    for key in keys:
        test, prov, method, size, count = key
        label = ("%s %d x %d MiB %s" % (prov, count, size >> 20, method) if test == "alloc"
                 else "%s %d MiB %s" % (prov, size >> 20, method))
        cells = []
        for k in KERNELS:
            v = [r for r in rows(docs[k][0], test)
                 if (r["test"], r["provider"], r["method"], r["size_bytes"], r.get("count")) == key]
            cells.append(fmt(v[0]["ms_median"], "%.1f") if v else "–")
        print("| %s | %s |" % (label, " | ".join(cells)))

    print()
    print("| raw NVMe, cold 256 MiB (MB/s, median) | " +
          " | ".join("%s read | %s write" % (k, k) for k in KERNELS) + " |")
    print("|---|" + "---:|---:|" * len(KERNELS))
    methods = []
    for k in KERNELS:
        for r in rows(docs[k][1], "io"):
            if r.get("mode") == "cold" and r["method"] not in methods:
                methods.append(r["method"])
    for m in methods:
        cells = []
        for k in KERNELS:
            for dr in ("read", "write"):
                v = [r for r in rows(docs[k][1], "io")
                     if r["method"] == m and r.get("mode") == "cold" and r.get("dir") == dr]
                if not v:
                    cells.append("–")
                    continue
                x = v[0].get("x_uring_direct")
                cells.append(fmt(v[0]["mbps_median"]) + (" (%.2fx)" % x if isinstance(x, (int, float)) else ""))
        print("| `%s` | %s |" % (m, " | ".join(cells)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
