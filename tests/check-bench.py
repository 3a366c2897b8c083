#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""
dmaio-bench's outputs parse (issue 14, item 3): a short run on the host (1 MiB, one run, no
cache dropping) writes a CSV whose every row has the header's field count, and so do the
committed bench/results/*.csv; --plot writes the format its name says (.svg an SVG, .png a PNG)
and refuses a name it cannot honour.
Usage: check-bench.py DMAIO_BENCH SOURCE_ROOT   (exit 0 ok, 1 failure)
"""
import csv
import glob
import os
import shutil
import subprocess
import sys
import tempfile

bench, root = sys.argv[1], sys.argv[2]
passes, failures = [], []


def check(name, cond, detail=""):
    print(("ok" if cond else "FAIL") + ": " + name + ("" if cond else ": " + detail))
    (passes if cond else failures).append(name)


def fields(path):
    with open(path, newline="") as f:
        rows = list(csv.reader(f))
    bad = [(i + 1, len(r)) for i, r in enumerate(rows[1:], 1) if len(r) != len(rows[0])]
    return rows, bad


tmp = tempfile.mkdtemp(prefix="dmaio-bench.", dir=os.environ.get("TMPDIR", "/var/tmp"))
env = dict(os.environ)
env.pop("DMAIO_PATH", None)
base = [bench, "--dir", tmp, "--sizes", "1M", "--runs", "1", "--no-drop-caches"]

out = os.path.join(tmp, "r.csv")
svg = os.path.join(tmp, "r.svg")
r = subprocess.run(base + ["--tests", "io,alloc,mmap", "--csv", out, "--plot", svg], env=env,
                   stdout=subprocess.PIPE, stderr=subprocess.STDOUT, timeout=240)
check("run", r.returncode == 0, "exit %d: %s" % (r.returncode, r.stdout[-600:]))
if os.path.exists(out):
    rows, bad = fields(out)
    check("csv: rows", len(rows) > 1, "%d rows" % len(rows))
    check("csv: every row has the header's %d fields" % len(rows[0]), not bad, "rows %s" % bad[:5])
    kinds = {row[0] for row in rows[1:]}
    check("csv: io, alloc and mmap rows", {"io", "alloc", "mmap"} <= kinds, str(kinds))
else:
    check("csv: written", False)

for f in sorted(glob.glob(os.path.join(root, "bench", "results", "*.csv"))):
    rows, bad = fields(f)
    check("committed %s: every row has the header's %d fields" % (os.path.basename(f), len(rows[0])),
          not bad, "rows %s" % bad[:5])

script = svg + ".gp"
gp = open(script).read() if os.path.exists(script) else ""
check("plot .svg: the script asks for svg", "set terminal svg" in gp, gp[-400:])
if shutil.which("gnuplot"):
    head = open(svg, "rb").read(400) if os.path.exists(svg) else b""
    check("plot .svg: an SVG file", b"<svg" in head, repr(head[:80]))
    png = os.path.join(tmp, "r.png")
    r = subprocess.run(base + ["--tests", "io", "--dirs", "read", "--plot", png], env=env,
                       stdout=subprocess.PIPE, stderr=subprocess.STDOUT, timeout=240)
    head = open(png, "rb").read(8) if os.path.exists(png) else b""
    check("plot .png: a PNG file", r.returncode == 0 and head == b"\x89PNG\r\n\x1a\n", repr(head))
else:
    print("# gnuplot not installed: the plot files themselves not checked")
r = subprocess.run(base + ["--tests", "io", "--plot", os.path.join(tmp, "r.jpg")], env=env,
                   stdout=subprocess.PIPE, stderr=subprocess.STDOUT, timeout=60)
check("plot .jpg: refused", r.returncode == 2 and b".svg" in r.stdout, "exit %d %r" % (r.returncode, r.stdout[-300:]))

shutil.rmtree(tmp, ignore_errors=True)
print("%d passed, %d failed" % (len(passes), len(failures)))
sys.exit(1 if failures else 0)
