#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""
The target verdicts of a dmaio-bench (or dmaio-bench-model) run, computed from its CSV or JSON
output; the benchmarks themselves only measure. The targets and thresholds are the ones
dmaio-bench used to print itself:

  cold read >= 0.95x O_DIRECT io_uring   lib:auto against the better of base:uring-direct and
                                         base:uring-shm, read, cold, the largest size
  cold read never below naive            lib:auto against base:naive, same case
  CPU s/GiB <= 0.3x buffered             lib:auto against base:buffered, same case
  write >= 0.95x O_DIRECT write          as the first, write, cold
  udmabuf alloc <= 2x system heap        dmaio_buf_alloc of udmabuf against the system heap
  library alloc <= 1.05x raw DMA_HEAP_IOCTL_ALLOC (HEAP), for every heap
  lib:load >= 0.90x base, lib:load-into >= 0.90x base   (dmaio-bench-model)
  choice: lib:auto within 10% of the best forced path, and never 1.5x slower (issue 26; not
          printed by dmaio-bench before): each cell of --tests choice (provider x buffer x range
          size x direction) is ok (lib:auto >= 0.90x the fastest lib:PATH of the cell), miss
          (below) or FAIL (below 1/1.5), "~" added when the best path's own max/min over its
          samples is wider than best/auto; the cell's buffer is size_bytes x count; from a
          JSON, a miss also gives the share of lib:auto's bytes on the best path (at least 90%:
          auto took that path for nearly all of them: the gap is the samples' spread, auto's
          own cost per request, or what its few other requests cost)

MET / MISSED by the ratio of the medians; a JSON input also gives the ratios run by run (the
cases of a run ran next to each other). lib:auto is the first buffer's (lib:auto@PROVIDER when
several --heap were measured). A CSV holds only results: a heap whose allocation failed is not
in it (the JSON says "failed").

Usage: verdict.py [--strict] FILE.csv|FILE.json
  exit 0; 1 with --strict when a target is MISSED; 2 when FILE cannot be read or holds nothing
"""
import csv
import json
import math
import sys

GIB = 1 << 30
NUMERIC = {"size_bytes", "runs", "count", "mbps_median", "mbps_min", "mbps_max", "cpu_s_per_gib",
           "x_uring_direct", "x_buffered", "x_naive", "ms_median", "ms_min", "ms_max"}
NOT_HEAPS = {"udmabuf", "udmabuf-huge", "drm", "memfd", "anonymous"}


def num(v):
    if v is None or v == "" or v == "-":
        return math.nan
    try:
        return float(v)
    except (TypeError, ValueError):
        return math.nan


def load(path):
    """the rows as dicts: the CSV's columns (numbers as floats), 'status', 'per_run' when JSON"""
    with open(path, newline="") as f:
        text = f.read()
    if text.lstrip().startswith("{"):
        doc = json.loads(text)
        rows = []
        for r in doc.get("results", []):
            row = dict(r)
            for k in NUMERIC:
                if k in row:
                    row[k] = num(row[k])
            row.setdefault("status", "ok")
            rows.append(row)
        return rows, True
    reader = csv.DictReader(text.splitlines())
    if not reader.fieldnames or "test" not in reader.fieldnames:
        raise ValueError("not a dmaio-bench CSV (no 'test' column)")
    rows = []
    for r in reader:
        if None in r or any(v is None for v in r.values()):
            raise ValueError("a row with a field count other than the header's: %r" % r)
        row = {k: (num(v) if k in NUMERIC else v) for k, v in r.items()}
        row["status"] = "ok"
        rows.append(row)
    return rows, False


def size_str(v):
    v = int(v)
    for unit, mul in (("G", GIB), ("M", 1 << 20), ("K", 1 << 10)):
        if v >= mul and v % mul == 0:
            return "%d%s" % (v // mul, unit)
    return str(v)


class Verdicts:
    def __init__(self):
        self.lines = []
        self.missed = 0

    def add(self, target, measurable, met, detail):
        tag = "n/a" if not measurable else "MET" if met else "MISSED"
        if measurable and not met:
            self.missed += 1
        self.lines.append("  [%s] %s: %s" % (tag, target, detail))


def paired(a, b):
    """' (run by run: median X, min-max)' from the per-run MB/s of two rows of one run"""
    ra, rb = a.get("per_run"), b.get("per_run")
    if not ra or not rb or len(ra) != len(rb) or len(ra) < 2:
        return ""
    r = []
    for x, y in zip(ra, rb):
        mx, my = num(x.get("mbps")), num(y.get("mbps"))
        if math.isnan(mx) or math.isnan(my) or my <= 0:
            return ""
        r.append(mx / my)
    s = sorted(r)
    n = len(s)
    med = s[n // 2] if n % 2 else (s[n // 2 - 1] + s[n // 2]) / 2
    return " (run by run: median %.2fx, %.2f-%.2f)" % (med, s[0], s[-1])


def io_targets(rows, v):
    io = [r for r in rows if r.get("test") == "io" and r.get("status") == "ok"]
    size = max(r["size_bytes"] for r in io)
    sz = size_str(size)
    if size < GIB:
        v.lines.append("  (the targets are for >= 1 GiB; the largest size here is %s)" % sz)

    def case(d, m):
        return [r for r in io if r["size_bytes"] == size and r.get("dir") == d and r.get("mode") == m]

    def find(cs, method):
        for r in cs:
            if r.get("method") == method:
                return r
        return None

    def lib_auto(cs):
        base = [r for r in cs if r.get("method", "").startswith("base:")]
        prov = base[0].get("provider") if base else None
        for r in cs:
            m = r.get("method", "")
            if m == "lib:auto" or (m.startswith("lib:auto@") and m[len("lib:auto@"):] == prov):
                return r
        return None

    def best_direct(cs):
        a, b = find(cs, "base:uring-direct"), find(cs, "base:uring-shm")
        if not a or not b:
            return a or b
        return a if a["mbps_median"] >= b["mbps_median"] else b

    def mem_of(r):
        return "posix_memalign'd" if r.get("method") == "base:uring-direct" else "memfd"

    cs = case("read", "cold")
    lib, dr, naive, buf = lib_auto(cs), best_direct(cs), find(cs, "base:naive"), find(cs, "base:buffered")
    if lib and dr:
        a, b = lib["mbps_median"], dr["mbps_median"]
        v.add("cold read >= 0.95x O_DIRECT io_uring", True, a >= 0.95 * b,
              "%s %s: %.0f MB/s vs %.0f MB/s (%s) = %.2fx%s" % (sz, lib.get("path", "-"), a, b, mem_of(dr),
                                                               a / b, paired(lib, dr)))
        if naive:
            c = naive["mbps_median"]
            v.add("cold read never below naive", True, a >= c,
                  "%.0f MB/s vs naive %.0f MB/s = %.2fx%s" % (a, c, a / c, paired(lib, naive)))
        else:
            v.add("cold read never below naive", False, False, "no base:naive result")
    else:
        v.add("cold read >= 0.95x O_DIRECT io_uring", False, False,
              "not measured (%s)" % ("lib:auto read cold missing" if not lib else "baseline missing"))
    if lib and buf:
        a, b = lib["cpu_s_per_gib"], buf["cpu_s_per_gib"]
        v.add("CPU s/GiB <= 0.3x buffered", True, a <= 0.3 * b,
              "%s cold read: %.3f vs buffered %.3f s/GiB = %.2fx" % (sz, a, b, a / b if b > 0 else math.nan))
    else:
        v.add("CPU s/GiB <= 0.3x buffered", False, False, "not measured")
    cs = case("write", "cold")
    lib, dr = lib_auto(cs), best_direct(cs)
    if lib and dr:
        a, b = lib["mbps_median"], dr["mbps_median"]
        v.add("write >= 0.95x O_DIRECT write", True, a >= 0.95 * b,
              "%s cold %s: %.0f MB/s vs %.0f MB/s (%s) = %.2fx%s" % (sz, lib.get("path", "-"), a, b, mem_of(dr),
                                                                    a / b, paired(lib, dr)))
    else:
        v.add("write >= 0.95x O_DIRECT write", False, False, "not measured")


def alloc_targets(rows, v):
    al = [r for r in rows if r.get("test") == "alloc"]

    def ok(prov, method):
        for r in al:
            if r.get("provider") == prov and r.get("method") == method and r.get("status") == "ok":
                return r
        return None

    heaps = []
    for r in al:
        p = r.get("provider")
        if p not in NOT_HEAPS and p not in heaps:
            heaps.append(p)
    sysl, udma = ok("system", "library"), ok("udmabuf", "library")
    if sysl and udma:
        a, b = udma["ms_median"], sysl["ms_median"]
        v.add("udmabuf alloc <= 2x system heap", True, a <= 2 * b,
              "%d x %d MiB: %.1f ms vs %.1f ms = %.2fx" % (udma["count"], udma["size_bytes"] // (1 << 20), a, b,
                                                         a / b))
    else:
        v.add("udmabuf alloc <= 2x system heap", False, False, "needs both the system heap and udmabuf")
    for h in heaps:
        t = "library alloc <= 1.05x raw DMA_HEAP_IOCTL_ALLOC (%s)" % h
        lib, raw = ok(h, "library"), ok(h, "raw")
        if lib and raw:
            a, b = lib["ms_median"], raw["ms_median"]
            v.add(t, True, a <= 1.05 * b, "%.1f ms vs %.1f ms = %.3fx" % (a, b, a / b))
        else:
            v.add(t, False, False, "not measured")
    if "system" not in heaps:
        v.add("library alloc <= 1.05x raw DMA_HEAP_IOCTL_ALLOC", False, False, "no dma-heap here")


def model_targets(rows, v):
    md = {r.get("method"): r for r in rows if r.get("test") == "model" and r.get("status") == "ok"}
    base = md.get("base:uring-direct")
    for name, what in (("lib:load", "new buffers: allocation and first touch inside"),
                       ("lib:load-into", "buffers the caller has, as the baseline's memory")):
        r = md.get(name)
        t = "%s >= 0.90x base" % name
        if r and base and base["mbps_median"] > 0:
            x = r["mbps_median"] / base["mbps_median"]
            v.add(t, True, x >= 0.90, "%.0f MB/s vs %.0f MB/s = %.2fx%s (%s)" %
                  (r["mbps_median"], base["mbps_median"], x, paired(r, base), what))
        else:
            v.add(t, False, False, "not measured")


CHOICE_OK = 0.90
CHOICE_FAIL = 1 / 1.5
# a miss with at least this share of lib:auto's bytes on the best path: not the path it chose
SAME_PATH = 0.90


def choice_targets(rows, v):
    """per cell of --tests choice (provider, range size, ranges, direction; the buffer is
    size_bytes x count): lib:auto against the fastest forced path"""
    cells = {}
    for r in rows:
        if r.get("test") != "choice":
            continue
        key = (r.get("provider"), int(r["size_bytes"]), int(r["count"]), r.get("dir"))
        cells.setdefault(key, []).append(r)
    counts = {"ok": 0, "miss": 0, "FAIL": 0}
    late = {"ok": 0, "miss": 0, "FAIL": 0}
    noisy = same = mixed_ok = 0
    known = False  # auto's bytes per path (a JSON)
    worst = None
    lines = []
    for (prov, rsize, count, d), rs in cells.items():
        ok = [r for r in rs if r.get("status") == "ok" and not math.isnan(r["mbps_median"])]
        auto = next((r for r in ok if r.get("method") == "lib:auto"), None)
        forced = [r for r in ok
                  if r.get("method", "").startswith("lib:") and r.get("method") != "lib:auto"]
        cell = "%s %s buffer, %s ranges, %s" % (prov, size_str(rsize * count), size_str(rsize), d)
        if not auto or not forced:
            why = "no lib:auto result" if not auto else "no forced path served"
            lines.append("  [n/a] %s: %s" % (cell, why))
            continue
        best = max(forced, key=lambda r: r["mbps_median"])
        x = auto["mbps_median"] / best["mbps_median"] if best["mbps_median"] > 0 else math.nan
        tag = "ok" if x >= CHOICE_OK else "miss" if x >= CHOICE_FAIL else "FAIL"
        counts[tag] += 1
        # the fastest path's own samples (runs, --choice-repeat) spread wider than auto's gap
        sp = best["mbps_max"] / best["mbps_min"] if best.get("runs", 1) >= 2 and \
            best.get("mbps_min", 0) > 0 else 1.0
        if tag != "ok" and x > 0 and sp > 1 / x:
            tag += "~"
            noisy += 1
        if worst is None or x < worst[0]:
            worst = (x, cell)
        # how much of auto's bytes went the best path's way (a JSON has them): a cell missed
        # with nearly all of them there missed by the samples' spread or auto's own cost, not
        # by the path it chose for most of them
        pb = auto.get("path_bytes") or {}
        total = sum(pb.values())
        share = ""
        known = known or total > 0
        if tag != "ok" and total > 0:
            on = pb.get(best["method"][len("lib:"):], 0) / total
            share = ", %.0f%% of auto's bytes on it" % (100 * on)
            if on >= SAME_PATH:
                same += 1
            # auto's bytes at the speeds their paths ran forced: the choice's own share of
            # the gap. At >= CHOICE_OK the choice would have been ok and the pass lost its
            # time elsewhere (its noise, the cost of its mixing); below, the choice itself
            speed = {r["method"][len("lib:"):]: r["mbps_median"] for r in forced}
            if all(speed.get(p, 0) > 0 for p, b in pb.items() if b):
                mx = total / sum(b / speed[p] for p, b in pb.items() if b) / best["mbps_median"]
                share += ", its mix at the forced speeds %.2fx" % mx
                if mx >= CHOICE_OK:
                    mixed_ok += 1
        # the last pair side by side (dmaio-bench's --choice-repeat: lib:auto after it has
        # learned from every forced run of the cell), when the JSON has the samples
        last = ""
        ra = auto.get("per_run") or []
        # its partner: the fastest forced path with as many samples (the one repeated beside
        # it, unless a later sample made another the fastest)
        partner = max((r for r in forced if len(r.get("per_run") or []) == len(ra)),
                      key=lambda r: r["mbps_median"], default=best)
        rb = partner.get("per_run") or []
        if len(ra) == len(rb) >= 2 and num(rb[-1].get("mbps")) > 0:
            lx = num(ra[-1].get("mbps")) / num(rb[-1].get("mbps"))
            if not math.isnan(lx):
                lt = "ok" if lx >= CHOICE_OK else "miss" if lx >= CHOICE_FAIL else "FAIL"
                late[lt] += 1
                last = ", last pair %.2fx" % lx
        lines.append("  [%s] %s: auto %s %.0f MB/s vs best %s %.0f MB/s = %.2fx (best's max/min "
                     "%.2f%s%s)%s" %
                     (tag, cell, auto.get("path", "-"), auto["mbps_median"],
                      best["method"][len("lib:"):], best["mbps_median"], x, sp, last, share,
                      paired(auto, best)))
    judged = sum(counts.values())
    v.lines.append("choice of path (lib:auto against the fastest forced path of each cell; "
                   "medians; ok >= %.2fx, miss below, FAIL below %.2fx; ~: the best path's own "
                   "max/min is wider than best/auto)" % (CHOICE_OK, CHOICE_FAIL))
    v.lines.extend(lines)
    if sum(late.values()):
        v.lines.append("  the last sample pair of each cell alone (with dmaio-bench --choice-repeat: "
                       "lib:auto after every forced run of the cell): %d ok, %d miss, %d FAIL" %
                       (late["ok"], late["miss"], late["FAIL"]))
    on_best = ("; %d with at least %.0f%% of auto's bytes on the best path itself; %d whose "
               "byte mix at the forced paths' speeds is at least %.2fx") % (
        same, 100 * SAME_PATH, mixed_ok, CHOICE_OK) if known else ""
    detail = "%d cells: %d ok, %d miss, %d FAIL (%d of them within the best's spread%s)%s" % (
        judged, counts["ok"], counts["miss"], counts["FAIL"], noisy, on_best,
        "; worst %.2fx (%s)" % worst if worst else "")
    v.add("choice: lib:auto within 10% of the best forced path", judged > 0,
          judged > 0 and counts["miss"] + counts["FAIL"] == 0, detail)
    v.add("choice: lib:auto never 1.5x slower than the best forced path", judged > 0,
          judged > 0 and counts["FAIL"] == 0,
          "%d of %d cells below %.2fx" % (counts["FAIL"], judged, CHOICE_FAIL))


def main(argv):
    args = [a for a in argv[1:] if a != "--strict"]
    strict = "--strict" in argv[1:]
    if len(args) != 1 or args[0] in ("-h", "--help"):
        print(__doc__.strip())
        return 0 if args and args[0] in ("-h", "--help") else 2
    try:
        rows, is_json = load(args[0])
    except (OSError, ValueError) as e:
        print("verdict.py: %s: %s" % (args[0], e), file=sys.stderr)
        return 2
    tests = {r.get("test") for r in rows}
    if not tests & {"io", "alloc", "model", "choice"}:
        print("verdict.py: %s: no io, alloc, model or choice results: no target to judge" % args[0],
              file=sys.stderr)
        return 2
    v = Verdicts()
    if tests & {"io", "alloc"}:
        v.lines.append("targets (lib:auto is the library's best path; medians of this run; MET/MISSED by the "
                       "ratio of medians)")
        if "io" in tests and any(r.get("status") == "ok" for r in rows if r.get("test") == "io"):
            io_targets(rows, v)
        if "alloc" in tests:
            alloc_targets(rows, v)
    if "model" in tests:
        v.lines.append("targets of the model load (medians of this run; MET/MISSED by the ratio of medians)")
        model_targets(rows, v)
    if "choice" in tests:
        choice_targets(rows, v)
    if not is_json:
        v.lines.append("  (from a CSV: the run-by-run ratios need the run's --json)")
    print("\n".join(v.lines))
    return 1 if strict and v.missed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
