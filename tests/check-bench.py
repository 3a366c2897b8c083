#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""
dmaio-bench's outputs parse and say what they should (issue 14): short runs on the host (1 MiB,
two runs) write a CSV whose every row has the header's field count (so do the committed
bench/results/*.csv) and a JSON that python's json reads, with the CSV's values, each run's
latency percentiles (p50 <= p90 <= p99 <= max), the jobs and requests in flight, and the
page-cache residency before each timed run (about 0 for cold runs, all for warm ones);
--jobs 2 is reported as such; the queue workloads report per-range and per-frame latency;
cold runs fail loudly on a file system that keeps its pages (tmpfs); bench/verdict.py prints
the target verdicts from the CSV and the JSON, and the right ones for a CSV made up here;
the path-choice matrix measures lib:auto and the fastest forced path again side by side
(--choice-repeat) and its verdicts follow from its numbers;
--plot writes the format its name says (.svg an SVG, .png a PNG) and refuses a name it cannot
honour; dmaio-bench-model's CSV and JSON too, when dmaio-load can make a model.
Usage: check-bench.py DMAIO_BENCH SOURCE_ROOT [DMAIO_BENCH_MODEL]   (exit 0 ok, 1 failure)
"""
import csv
import glob
import io
import json
import math
import os
import shutil
import subprocess
import sys
import tempfile

bench, root = sys.argv[1], sys.argv[2]
model_bench = sys.argv[3] if len(sys.argv) > 3 else None
verdict = os.path.join(root, "bench", "verdict.py")
passes, failures = [], []


def check(name, cond, detail=""):
    print(("ok" if cond else "FAIL") + ": " + name + ("" if cond else ": " + str(detail)))
    (passes if cond else failures).append(name)
    return cond


def fields_of(text):
    rows = list(csv.reader(io.StringIO(text)))
    bad = [(i + 1, len(r)) for i, r in enumerate(rows[1:], 1) if len(r) != len(rows[0])]
    return rows, bad


def fields(path):
    with open(path, newline="") as f:
        return fields_of(f.read())


def fstype(path):
    """the file system type of path (the longest mount point above it in /proc/self/mounts)"""
    path, best, t = os.path.realpath(path), "", "?"
    try:
        with open("/proc/self/mounts") as f:
            for line in f:
                p = line.split()
                mnt = p[1].replace("\\040", " ")
                if (path == mnt or path.startswith(mnt.rstrip("/") + "/")) and len(mnt) >= len(best):
                    best, t = mnt, p[2]
    except OSError:
        pass
    return t


def run(args, timeout=240):
    return subprocess.run(args, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=timeout)


def is_num(v):
    return isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v)


def outputs(js, cs):
    """a run's JSON (None when missing or not JSON), its CSV rows, what is wrong with them"""
    try:
        with open(js) as f:
            doc = json.load(f)
        rows, bad = fields(cs)
    except (OSError, ValueError) as e:
        return None, [], [e]
    return doc, rows, bad


def check_pcts(name, p):
    ok = isinstance(p, dict) and all(is_num(p.get(k)) for k in ("p50", "p90", "p99", "max"))
    return check(name, ok and 0 < p["p50"] <= p["p90"] <= p["p99"] <= p["max"], p)


tmp = tempfile.mkdtemp(prefix="dmaio-bench.", dir=os.environ.get("TMPDIR", "/var/tmp"))
env = dict(os.environ)
env.pop("DMAIO_PATH", None)
memfs = fstype(tmp) in ("tmpfs", "ramfs")
if memfs:
    print("# %s is on %s, which keeps its pages: the runs there use --modes warm" % (tmp, fstype(tmp)))
modes = ["--modes", "warm"] if memfs else []
base = [bench, "--dir", tmp, "--sizes", "1M", "--runs", "2"] + modes

# ---- io, alloc, mmap: text on stdout, CSV, JSON and a plot -----------------------------------
out = os.path.join(tmp, "r.csv")
js = os.path.join(tmp, "r.json")
svg = os.path.join(tmp, "r.svg")
# --no-drop-caches: an old command line still runs (the option does nothing now)
r = run(base + ["--no-drop-caches", "--tests", "io,alloc,mmap", "--csv", out, "--json", js, "--plot", svg])
check("run", r.returncode == 0, "exit %d: %s" % (r.returncode, (r.stdout + r.stderr)[-600:]))
text = r.stdout.decode(errors="replace")
check("text: the io table and the verdict pointer", "x direct" in text and "bench/verdict.py" in text, text[-600:])
check("text: no verdicts of its own", "[MET]" not in text and "[MISSED]" not in text, text[-600:])
rows = []
if os.path.exists(out):
    rows, bad = fields(out)
    check("csv: rows", len(rows) > 1, "%d rows" % len(rows))
    check("csv: every row has the header's %d fields" % len(rows[0]), not bad, "rows %s" % bad[:5])
    kinds = {row[0] for row in rows[1:]}
    check("csv: io, alloc and mmap rows", {"io", "alloc", "mmap"} <= kinds, str(kinds))
else:
    check("csv: written", False)

doc = None
try:
    with open(js) as f:
        doc = json.load(f)
    check("json: parses", True)
except (OSError, ValueError) as e:
    check("json: parses", False, e)
if doc:
    res = doc.get("results", [])
    ok = [x for x in res if x.get("status") == "ok"]
    check("json: program, version, command, config", doc.get("program") == "dmaio-bench" and
          doc.get("version") and bench in doc.get("command", "") and doc.get("config", {}).get("jobs") == 1,
          {k: doc.get(k) for k in ("program", "version", "command", "config")})
    check("json: the CSV's rows (%d)" % (len(rows) - 1), len(ok) == len(rows) - 1, "%d ok results" % len(ok))
    # the same values as the CSV, row by row (the CSV rounds MB/s to 0.1)
    hdr = rows[0] if rows else []
    diff = []
    for crow, jrow in zip(rows[1:], ok):
        c = dict(zip(hdr, crow))
        for k in ("test", "provider", "dir", "mode", "method", "path"):
            if c[k] != str(jrow.get(k, "")):
                diff.append((k, c[k], jrow.get(k)))
        if c["mbps_median"] and abs(float(c["mbps_median"]) - jrow["mbps_median"]) > 0.051:
            diff.append(("mbps_median", c["mbps_median"], jrow["mbps_median"]))
        if c["ms_median"] and abs(float(c["ms_median"]) - jrow["ms_median"]) > 0.001:
            diff.append(("ms_median", c["ms_median"], jrow["ms_median"]))
    check("json: the CSV's values", not diff, diff[:5])
    iorows = [x for x in ok if x["test"] == "io"]
    check("json: io rows", len(iorows) >= 8, len(iorows))
    for x in iorows:
        name = "json: io %s %s %s" % (x["dir"], x["mode"], x["method"])
        check(name + ": jobs 1, queue depth", x.get("jobs") == 1 and isinstance(x.get("queue_depth"), int) and
              x["queue_depth"] == (8 if x["method"].startswith("base:uring") else 1),
              (x.get("jobs"), x.get("queue_depth")))
        check(name + ": what a latency sample is", x.get("latency_of") in ("request", "call", "read/write call"),
              x.get("latency_of"))
        check_pcts(name + ": latency percentiles", x.get("latency_ms"))
        per = x.get("per_run", [])
        check(name + ": one entry per run", len(per) == x["runs"] == 2, len(per))
        for i, p in enumerate(per):
            check_pcts(name + ": run %d latency percentiles" % i, p.get("latency_ms"))
            check(name + ": run %d MB/s, ms" % i, is_num(p.get("mbps")) and is_num(p.get("ms")), p)
        rmax = x.get("residency_max")
        if x["mode"] == "cold":
            check(name + ": residency before the runs ~0", is_num(rmax) and rmax <= 0.001 and
                  x.get("residency_by") in ("cachestat", "mincore"), (rmax, x.get("residency_by")))
        else:
            check(name + ": residency before the runs ~1", is_num(rmax) and
                  all(p.get("residency", 0) >= 0.99 for p in per), [p.get("residency") for p in per])
    check("json: the library's path accounting", all(
        isinstance(x.get("path_bytes"), dict) and sum(x["path_bytes"].values()) == 2 * x["size_bytes"]
        for x in iorows if x["method"].startswith("lib:")), [x.get("path_bytes") for x in iorows][:3])
    check("json: residency in the trailer", any("page cache before" in t for t in doc.get("trailer", [])),
          doc.get("trailer"))

# ---- the verdicts from this run's CSV and JSON -----------------------------------------------
TARGETS = ["cold read >= 0.95x O_DIRECT io_uring", "cold read never below naive", "CPU s/GiB <= 0.3x buffered",
           "write >= 0.95x O_DIRECT write", "udmabuf alloc <= 2x system heap"]


def verdicts(path, *extra):
    r = subprocess.run([sys.executable, verdict] + list(extra) + [path], stdout=subprocess.PIPE,
                       stderr=subprocess.STDOUT, timeout=60)
    return r.returncode, r.stdout.decode(errors="replace")


def tag(out, target):
    for line in out.splitlines():
        s = line.strip()
        if s.startswith("[") and ("] " + target + ":") in s:
            return s[1:s.index("]")]
    return None


if memfs:
    print("# no cold rows on %s: the verdicts of this run not checked (the made-up CSV below is)" % fstype(tmp))
else:
    for path in (out, js):
        rc, vo = verdicts(path)
        kind = os.path.splitext(path)[1]
        check("verdict %s: exit 0" % kind, rc == 0, "exit %d: %s" % (rc, vo[-400:]))
        for t in TARGETS[:4]:
            check("verdict %s: %s measured" % (kind, t), tag(vo, t) in ("MET", "MISSED"), vo[-600:])
        check("verdict %s: the allocation targets" % kind, tag(vo, TARGETS[4]) is not None, vo[-600:])
        if kind == ".json":
            check("verdict .json: run by run", "run by run" in vo, vo[-600:])

# a made-up run: each target's threshold on either side
HDR = ("test,provider,size_bytes,dir,mode,method,path,runs,mbps_median,mbps_min,mbps_max,cpu_s_per_gib,"
       "x_uring_direct,x_buffered,x_naive,ms_median,ms_min,ms_max,count")
G = 1 << 30
M32 = 32 << 20


def io_row(d, method, mbps, cpu, path="x"):
    return "io,system,%d,%s,cold,%s,%s,3,%s,1,1,%s,-,-,-,,,," % (G, d, method, path, mbps, cpu)


def alloc_row(prov, loop, ms):
    return "alloc,%s,%d,,,%s,,3,,,,,,,,%s,1,1,32" % (prov, M32, loop, ms)


fake = [HDR,
        io_row("read", "lib:auto", 1000, 0.02, "rw-file"), io_row("read", "base:uring-direct", 1100, 0.01),
        io_row("read", "base:uring-shm", 900, 0.01), io_row("read", "base:buffered", 300, 0.1),
        io_row("read", "base:naive", 1001, 0.05),
        io_row("write", "lib:auto", 1044, 0.02, "rw-file"), io_row("write", "base:uring-direct", 1000, 0.01),
        io_row("write", "base:uring-shm", 1100, 0.01),
        alloc_row("system", "library", 100), alloc_row("system", "raw", 96),
        alloc_row("reserved", "library", 100), alloc_row("reserved", "raw", 95),
        alloc_row("udmabuf", "library", 199), alloc_row("udmabuf", "raw", 150),
        alloc_row("memfd", "library", 10)]
want = {"cold read >= 0.95x O_DIRECT io_uring": "MISSED",     # 1000 / 1100 = 0.909
        "cold read never below naive": "MISSED",              # 1000 < 1001
        "CPU s/GiB <= 0.3x buffered": "MET",                  # 0.02 <= 0.03
        "write >= 0.95x O_DIRECT write": "MISSED",            # 1044 / 1100 (the memfd baseline) = 0.949
        "udmabuf alloc <= 2x system heap": "MET",             # 199 / 100
        "library alloc <= 1.05x raw DMA_HEAP_IOCTL_ALLOC (system)": "MET",      # 100 / 96 = 1.042
        "library alloc <= 1.05x raw DMA_HEAP_IOCTL_ALLOC (reserved)": "MISSED"}  # 100 / 95 = 1.053
fcsv = os.path.join(tmp, "fake.csv")
with open(fcsv, "w") as f:
    f.write("\n".join(fake) + "\n")
rc, vo = verdicts(fcsv)
check("verdict of a made-up CSV: exit 0", rc == 0, vo)
for t, w in want.items():
    check("verdict of a made-up CSV: %s %s" % (w, t), tag(vo, t) == w, vo)
check("verdict of a made-up CSV: 1 GiB, the memfd baseline named", "1G cold rw-file: 1044 MB/s vs 1100 MB/s (memfd)" in vo, vo)
rc, _ = verdicts(fcsv, "--strict")
check("verdict --strict: exit 1 when a target is missed", rc == 1, rc)
fake[2] = io_row("read", "base:uring-direct", 1050, 0.01)  # 1000 / 1050 = 0.952
fake[5] = io_row("read", "base:naive", 999, 0.05)
with open(fcsv, "w") as f:
    f.write("\n".join(fake) + "\n")
rc, vo = verdicts(fcsv)
check("verdict of a made-up CSV: MET once above the threshold",
      tag(vo, TARGETS[0]) == "MET" and tag(vo, TARGETS[1]) == "MET", vo)
with open(fcsv, "a") as f:
    f.write(io_row("read", "base:extra", 1, 1) + ",one-too-many\n")
rc, vo = verdicts(fcsv)
check("verdict of a CSV with a row of the wrong field count: refused (exit 2)", rc == 2, "exit %d %s" % (rc, vo))
check("the field-count check finds that row", fields(fcsv)[1] != [], fields(fcsv)[1])

# ---- --jobs 2, JSON and CSV on stdout -------------------------------------------------------
r = run(base + ["--tests", "io", "--dirs", "read", "--jobs", "2", "--format", "json"])
try:
    jd = json.loads(r.stdout)
except ValueError as e:
    jd = None
check("--jobs 2 --format json: stdout is JSON", r.returncode == 0 and jd is not None,
      "exit %d %r %s" % (r.returncode, r.stdout[:200], r.stderr[-300:]))
if jd:
    io2 = [x for x in jd["results"] if x["test"] == "io" and x["status"] == "ok"]
    check("--jobs 2: every io row says 2 jobs", io2 and all(x["jobs"] == 2 for x in io2) and
          jd["config"]["jobs"] == 2, [x.get("jobs") for x in io2])
    check("--jobs 2: latency of both jobs' requests", all(is_num(x["latency_ms"]["p50"]) for x in io2),
          [x.get("latency_ms") for x in io2][:2])
r = run(base + ["--tests", "io,alloc", "--dirs", "write", "--format", "csv"])
crow, bad = fields_of(r.stdout.decode(errors="replace")) if r.returncode == 0 else ([], [1])
check("--format csv: stdout is the CSV", r.returncode == 0 and crow and crow[0][0] == "test" and not bad and
      {x[0] for x in crow[1:]} == {"io", "alloc"}, "exit %d %r" % (r.returncode, r.stdout[:300]))

# ---- the queue workloads: per-range and per-frame latency -------------------------------------
qj = os.path.join(tmp, "q.json")
qc = os.path.join(tmp, "q.csv")
r = run([bench, "--dir", tmp, "--runs", "2", "--tests", "ranges,files,frames", "--ranges", "64x64K",
         "--files", "4x1M", "--frames", "12", "--fps", "200", "--csv", qc, "--json", qj], timeout=240)
check("queue workloads: run", r.returncode == 0, "exit %d: %s" % (r.returncode, (r.stdout + r.stderr)[-600:]))
qd, q_rows, qbad = outputs(qj, qc)
check("queue workloads: CSV fields, JSON parses", qd is not None and not qbad and len(q_rows) > 1, qbad[:3])
if qd:
    qr = [x for x in qd["results"] if x["status"] == "ok"]
    for x in qr:
        name = "queue %s %s" % (x["test"], x["method"])
        want_of = "frame" if x["test"] == "frames" else "request" if x["method"].startswith("base:") else "range"
        check(name + ": latency of each " + want_of, x.get("latency_of") == want_of, x.get("latency_of"))
        check_pcts(name + ": latency percentiles", x.get("latency_ms"))
        check(name + ": per-run percentiles", len(x.get("per_run", [])) == 2 and
              all(is_num(p["latency_ms"]["max"]) for p in x["per_run"]), x.get("per_run"))
        depth = 32 if x["method"] == "lib:queue" or (x["method"].startswith("base:") and x["test"] != "frames") else 1
        check(name + ": jobs 1, queue depth %d" % depth, x.get("jobs") == 1 and x.get("queue_depth") == depth,
              (x.get("jobs"), x.get("queue_depth")))
        if x["test"] != "frames" and not memfs:
            check(name + ": cold before each run", x.get("residency_max") is not None and x["residency_max"] <= 0.001,
                  x.get("residency_max"))
    check("queue workloads: ranges, files and frames rows", {x["test"] for x in qr} == {"ranges", "files", "frames"},
          {x["test"] for x in qr})
    check("queue workloads: frames-latency rows only in the CSV",
          any(row[0] == "frames-latency" for row in q_rows[1:]) and
          not any(x["test"] == "frames-latency" for x in qd["results"]), "")

# ---- cold on a file system that keeps its pages: a loud failure ------------------------------
shm = "/dev/shm"
if os.path.isdir(shm) and os.access(shm, os.W_OK) and fstype(shm) == "tmpfs":
    d = tempfile.mkdtemp(prefix="dmaio-bench.", dir=shm)
    r = run([bench, "--dir", d, "--sizes", "1M", "--runs", "1", "--tests", "io", "--dirs", "read",
             "--modes", "cold"], timeout=120)
    err = r.stderr.decode(errors="replace")
    check("cold on tmpfs: fails (exit 1) naming the file and the residency", r.returncode == 1 and
          "stay in the page cache" in err and d in err, "exit %d: %s" % (r.returncode, err[-400:]))
    check("cold on tmpfs: the test file removed", os.listdir(d) == [], os.listdir(d))
    shutil.rmtree(d, ignore_errors=True)
else:
    print("# no writable tmpfs at /dev/shm: the loud cold failure not checked")

# ---- the committed results ---------------------------------------------------------------------
for f in sorted(glob.glob(os.path.join(root, "bench", "results", "*.csv"))):
    rows_c, bad = fields(f)
    check("committed %s: every row has the header's %d fields" % (os.path.basename(f), len(rows_c[0])),
          not bad, "rows %s" % bad[:5])

for f in sorted(glob.glob(os.path.join(root, "bench", "results", "*.json"))):
    try:
        with open(f) as fh:
            d = json.load(fh)
        good = isinstance(d.get("results"), list) and d.get("program", "").startswith("dmaio-bench")
    except ValueError as e:
        good, d = False, e
    check("committed %s: a dmaio-bench JSON" % os.path.basename(f), good, str(d)[:200])

# ---- the plot ------------------------------------------------------------------------------
script = svg + ".gp"
gp = open(script).read() if os.path.exists(script) else ""
check("plot .svg: the script asks for svg", "set terminal svg" in gp, gp[-400:])
if shutil.which("gnuplot"):
    head = open(svg, "rb").read(400) if os.path.exists(svg) else b""
    check("plot .svg: an SVG file", b"<svg" in head, repr(head[:80]))
    png = os.path.join(tmp, "r.png")
    r = run(base + ["--tests", "io", "--dirs", "read", "--plot", png])
    head = open(png, "rb").read(8) if os.path.exists(png) else b""
    check("plot .png: a PNG file", r.returncode == 0 and head == b"\x89PNG\r\n\x1a\n", repr(head))
else:
    print("# gnuplot not installed: the plot files themselves not checked")
r = run(base + ["--tests", "io", "--plot", os.path.join(tmp, "r.jpg")], timeout=60)
check("plot .jpg: refused", r.returncode == 2 and b".svg" in r.stderr, "exit %d %r" % (r.returncode, r.stderr[-300:]))

# ---- the path-choice matrix: samples, the repeat pair, the verdicts ---------------------------
if memfs:
    print("# %s keeps its pages: the choice matrix (cold reads) not checked" % tmp)
else:
    cj, cc = os.path.join(tmp, "c.json"), os.path.join(tmp, "c.csv")
    r = run([bench, "--dir", tmp, "--heap", "memfd", "--tests", "choice", "--choice-bufs", "1M",
             "--choice-ranges", "256K", "--runs", "1", "--choice-repeat", "1", "--choice-min-bytes",
             "0", "--csv", cc, "--json", cj])
    check("choice: run", r.returncode == 0, "exit %d: %s" % (r.returncode, (r.stdout + r.stderr)[-600:]))
    cd, c_rows, cbad = outputs(cj, cc)
    check("choice: CSV fields, JSON parses", cd is not None and not cbad, cbad[:3])
    for d in ("read", "write"):
        rs = [x for x in (cd or {}).get("results", []) if x.get("dir") == d and x.get("status") == "ok"]
        auto = next((x for x in rs if x["method"] == "lib:auto"), None)
        best = next((x for x in rs if auto and x["method"] == "lib:" + auto.get("best_forced", "?")), None)
        others = [x for x in rs if x["method"].startswith("lib:") and x not in (auto, best)]
        # --runs 1 --choice-repeat 1: lib:auto and the fastest forced path twice, the rest once
        # (the pair runs the fastest after the main pass; a later sample may make another one the
        # fastest, which then has two samples as well or is the only other one with one)
        twice = [x["method"] for x in rs if x["method"].startswith("lib:") and x["runs"] == 2]
        check("choice %s: lib:auto and one forced path measured twice, every other once" % d,
              auto is not None and best is not None and auto["runs"] == 2 and
              len(twice) == 2 and all(x["runs"] in (1, 2) for x in others),
              [(x["method"], x["runs"]) for x in rs])
        if auto and best:
            x = auto["mbps_median"] / best["mbps_median"]
            sp = best["mbps_max"] / best["mbps_min"] if best["runs"] >= 2 else 1.0
            want = "ok" if x >= 0.90 else "miss" if x >= 1 / 1.5 else "FAIL"
            want += "~" if want != "ok" and sp > 1 / x else ""
            check("choice %s: the verdict from the medians and the best path's spread" % d,
                  auto.get("verdict") == want and abs(auto["auto_over_best"] - x) < 1e-3 * x,
                  (auto.get("verdict"), want, auto.get("auto_over_best"), x, sp))
    rc, vo = verdicts(cj)
    check("choice: verdict.py judges the cells, the last pair side by side",
          rc == 0 and tag(vo, "choice: lib:auto within 10% of the best forced path") in ("MET", "MISSED")
          and "last sample pair of each cell alone" in vo, vo[-600:])
    r = run([bench, "--dir", tmp, "--tests", "choice", "--runs", "30", "--choice-repeat", "3"], timeout=60)
    check("choice: --runs x (1 + --choice-repeat) above the samples a method keeps: exit 2",
          r.returncode == 2 and b"choice-repeat" in r.stderr, (r.returncode, r.stderr[-300:]))
    r = run([bench, "--dir", tmp, "--tests", "choice", "--choice-repeat", "9"], timeout=60)
    check("choice: --choice-repeat 9: exit 2", r.returncode == 2, r.returncode)

# ---- made-up choice cells: the byte mix of a miss at its paths' forced speeds ------------------
def choice_row(method, mbps, path_bytes=None, count=4):
    r = {"test": "choice", "provider": "system", "size_bytes": 1 << 20, "count": count,
         "dir": "write", "method": method, "path": method[4:], "runs": 1, "mbps_median": mbps,
         "mbps_min": mbps, "mbps_max": mbps, "status": "ok"}
    if path_bytes:
        r["path_bytes"] = path_bytes
    return r


MB = 1 << 20
fj = os.path.join(tmp, "fake-choice.json")
with open(fj, "w") as f:
    json.dump({"results": [
        # a cell the choice missed: 3/4 of auto's bytes on A (100 MB/s forced), 1/4 on B (50):
        # at those speeds the mix runs 1 / (0.75 / 100 + 0.25 / 50) = 80 MB/s, 0.80x of A
        choice_row("lib:auto", 80, {"A": 3 * MB, "B": MB}), choice_row("lib:A", 100),
        choice_row("lib:B", 50),
        # a cell whose pass missed with every byte on the best path: its mix is 1.00x
        choice_row("lib:auto", 85, {"A": 8 * MB}, 8), choice_row("lib:A", 100, count=8),
        choice_row("lib:B", 50, count=8)]}, f)
rc, vo = verdicts(fj)
check("choice, made up: the mix of a miss at its paths' forced speeds",
      rc == 0 and "= 0.80x" in vo and "its mix at the forced speeds 0.80x" in vo and
      "= 0.85x" in vo and "its mix at the forced speeds 1.00x" in vo and
      "1 whose byte mix at the forced paths' speeds is at least 0.90x" in vo, vo[-900:])

# ---- dmaio-bench-model -----------------------------------------------------------------------
load = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(bench))), "examples", "dmaio-load")
if model_bench and os.access(load, os.X_OK):
    prefix = os.path.join(tmp, "model")
    r = run([load, "--generate", prefix, "--format", "gguf", "--shards", "2", "--tensors", "20", "--size-mib", "16"])
    shards = sorted(glob.glob(prefix + "*.gguf"))
    check("model: generated", r.returncode == 0 and len(shards) == 2, (r.returncode, r.stderr[-300:]))
    mj, mc = os.path.join(tmp, "m.json"), os.path.join(tmp, "m.csv")
    r = run([model_bench, "--heap", "memfd", "--runs", "2", "--csv", mc, "--json", mj] + shards)
    check("model: run", r.returncode == 0, "exit %d: %s" % (r.returncode, (r.stdout + r.stderr)[-600:]))
    md, m_rows, mbad = outputs(mj, mc)
    check("model: CSV fields, JSON parses", md is not None and not mbad and len(m_rows) == 7, (mbad[:3], len(m_rows)))
    if md:
        meth = [x["method"] for x in md["results"]]
        check("model: six variants, residency ~0 before each", len(meth) == 6 and "lib:load-into" in meth and
              all(x["residency_max"] <= 0.001 for x in md["results"]), [x.get("residency_max") for x in md["results"]])
        check("model: no verdict of its own", b"MET" not in r.stdout and b"MISSED" not in r.stdout, r.stdout[-300:])
        rc, vo = verdicts(mj)
        check("model: verdict.py judges lib:load and lib:load-into",
              rc == 0 and tag(vo, "lib:load >= 0.90x base") in ("MET", "MISSED") and
              tag(vo, "lib:load-into >= 0.90x base") in ("MET", "MISSED"), vo)
    # a subset of the variants, the load at its own depth
    mj2 = os.path.join(tmp, "m2.json")
    r = run([model_bench, "--heap", "memfd", "--runs", "1", "--variants", "base,into", "--lib-depth", "64",
             "--depth", "8", "--json", mj2] + shards)
    try:
        with open(mj2) as f:
            md2 = json.load(f)
    except (OSError, ValueError):
        md2 = None
    got = [(x["method"], x.get("queue_depth")) for x in md2["results"]] if md2 else None
    check("model: --variants base,into --lib-depth 64 --depth 8: two rows at their depths",
          r.returncode == 0 and got == [("base:uring-direct", 8), ("lib:load-into", 64)], (r.returncode, got))
    r = run([model_bench, "--variants", "base,nosuch"] + shards)
    check("model: --variants with an unknown name: exit 2", r.returncode == 2 and b"nosuch" in r.stderr, r.returncode)
    r = run([model_bench, "--variants", "load"] + shards)
    check("model: --variants without base: exit 2", r.returncode == 2, r.returncode)
    r = run([model_bench, "--lib-depth", "257"] + shards)
    check("model: --lib-depth above DMAIO_QUEUE_DEPTH_MAX: exit 2", r.returncode == 2, r.returncode)
else:
    print("# dmaio-bench-model or dmaio-load not built: the model bench not checked")

shutil.rmtree(tmp, ignore_errors=True)
print("%d passed, %d failed" % (len(passes), len(failures)))
sys.exit(1 if failures else 0)
