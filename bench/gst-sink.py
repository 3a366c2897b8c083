#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""gst-sink.py: dmaiosink against filesink, side by side in one run (issue 25).

  /usr/bin/python3 bench/gst-sink.py BUILD_DIR [--dir DIR] [--frames N] [--rounds R]
                                     [--sizes WxH,...] [--format NV12] [--fps 60]
                                     [--paths PATH,...] [--copy]

Each size: a live videotestsrc (pattern black: the source is cheap) at --fps into
  fakesink   the source's own cost (subtracted from the others: the sink's CPU per frame),
  filesink   buffered write() of each frame,
  dmaiosink  the frames through a libdmaio queue (queue-depth 4),
  dmaiosink@PATH  the same with DMAIO_PATH=PATH (each of --paths: the forced paths beside
             auto, for issue 26's frame-writer target),
  dmaiosink-copy  with --copy: dmaiosink propose-pool=false, so the source writes into its own
             memory and each frame is copied into the sink's staging buffer (session 19's sink;
             dmaiosink itself proposes its pool and writes frames from where the source put them),
rounds interleaved (fakesink, filesink, dmaiosink, fakesink, ...), each run in its own process
(CPU = user + system of the process: its io_uring and worker threads included). Both sinks
sync to the clock with qos and max-lateness of one frame period: a frame the sink could not
take within a period of its time is dropped (counted from the sinks' QoS messages). Write
latency: dmaiosink's own (submit to on disk, its "stats"); filesink writes in the streaming
thread, so its latency is the time its render takes (not instrumented here). Medians of the
rounds, min and max beside them. Needs Debian's gir1.2-gstreamer-1.0 (python3-gi).
"""
import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time

ONE = "--one"


def run_one(a):
    """in a child process: one pipeline, its results as one JSON line on stdout"""
    import gi
    gi.require_version("Gst", "1.0")
    from gi.repository import Gst
    Gst.init(None)
    w, h = map(int, a.size.split("x"))
    period = 1_000_000_000 // a.fps
    sink = {"fakesink": "fakesink",
            "filesink": f"filesink location={a.location}",
            "dmaiosink": f"dmaiosink name=dsink location={a.location} queue-depth=4",
            "dmaiosink-copy": f"dmaiosink name=dsink location={a.location} queue-depth=4 "
                              "propose-pool=false"}[a.sink.split("@")[0]]
    desc = (f"videotestsrc is-live=true pattern=black num-buffers={a.frames} ! "
            f"video/x-raw,format={a.format},width={w},height={h},framerate={a.fps}/1 ! "
            f"{sink} name=out sync=true qos=true max-lateness={period}")
    p = Gst.parse_launch(desc)
    bus = p.get_bus()
    dropped = {}
    stats = None
    err = None
    r0 = resource.getrusage(resource.RUSAGE_SELF)
    t0 = time.monotonic()
    p.set_state(Gst.State.PLAYING)
    while True:
        m = bus.timed_pop_filtered(Gst.CLOCK_TIME_NONE, Gst.MessageType.EOS | Gst.MessageType.ERROR |
                                   Gst.MessageType.QOS | Gst.MessageType.ELEMENT)
        if m.type == Gst.MessageType.QOS:
            fmt, processed, drop = m.parse_qos_stats()
            if fmt == Gst.Format.BUFFERS:
                dropped[m.src.get_name()] = max(dropped.get(m.src.get_name(), 0), drop)
        elif m.type == Gst.MessageType.ELEMENT:
            s = m.get_structure()
            if s and s.get_name() == "dmaiosink-stats":
                stats = {k: s.get_value(k) for k in ("frames-written", "frames-dropped",
                                                      "frames-pool", "frames-copied",
                                                      "latency-p50-us", "latency-p99-us",
                                                      "latency-max-us") if s.has_field(k)}
        elif m.type == Gst.MessageType.ERROR:
            e, dbg = m.parse_error()
            err = f"{e.message} ({dbg})"
            break
        else:
            break
    wall = time.monotonic() - t0
    p.set_state(Gst.State.NULL)
    r1 = resource.getrusage(resource.RUSAGE_SELF)
    cpu = (r1.ru_utime - r0.ru_utime) + (r1.ru_stime - r0.ru_stime)
    print(json.dumps({"cpu": cpu, "wall": wall, "dropped": sum(dropped.values()),
                      "stats": stats, "error": err}))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("build")
    ap.add_argument("--dir", default="/var/tmp")
    ap.add_argument("--frames", type=int, default=600)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--sizes", default="3840x2160,1920x1080")
    ap.add_argument("--format", default="NV12")
    ap.add_argument("--fps", type=int, default=60)
    ap.add_argument("--paths", default="", help="forced paths run beside auto (DMAIO_PATH)")
    ap.add_argument("--copy", action="store_true",
                    help="also dmaiosink propose-pool=false (every frame copied)")
    ap.add_argument(ONE, action="store_true", help=argparse.SUPPRESS)
    ap.add_argument("--sink", help=argparse.SUPPRESS)
    ap.add_argument("--size", help=argparse.SUPPRESS)
    ap.add_argument("--location", help=argparse.SUPPRESS)
    a = ap.parse_args()
    if a.one:
        run_one(a)
        return 0
    libdir = os.path.join(os.path.abspath(a.build), "lib")
    env = dict(os.environ, GST_PLUGIN_PATH=libdir,
               LD_LIBRARY_PATH=libdir + ":" + os.environ.get("LD_LIBRARY_PATH", ""),
               GST_REGISTRY=os.path.join(tempfile.gettempdir(), f"dmaio-gst-bench-{os.getpid()}.bin"))
    loc = os.path.join(a.dir, f"dmaio-gst-sink-{os.getpid()}.raw")
    sinks = (["fakesink", "filesink", "dmaiosink"] + (["dmaiosink-copy"] if a.copy else []) +
             [f"dmaiosink@{p}" for p in a.paths.split(",") if p])
    print(f"# {' '.join(sys.argv)}  ({time.strftime('%Y-%m-%dT%H:%M:%SZ', time.gmtime())}, "
          f"{os.uname().release}, {os.cpu_count()} CPUs, {a.frames} frames of {a.format} "
          f"at {a.fps} fps, live, {a.rounds} rounds interleaved)")
    rows = []
    for size in a.sizes.split(","):
        res = {s: [] for s in sinks}
        for r in range(a.rounds):
            for s in sinks:
                subprocess.run(["sync"], check=False)
                senv = dict(env)
                senv.pop("DMAIO_PATH", None)
                if "@" in s:
                    senv["DMAIO_PATH"] = s.split("@")[1]
                out = subprocess.run([sys.executable, os.path.abspath(__file__), a.build, ONE,
                                      "--sink", s, "--size", size, "--location", loc,
                                      "--frames", str(a.frames), "--format", a.format,
                                      "--fps", str(a.fps)],
                                     env=senv, capture_output=True, text=True)
                try:
                    os.unlink(loc)
                except FileNotFoundError:
                    pass
                line = out.stdout.strip().splitlines()[-1] if out.stdout.strip() else ""
                if out.returncode or not line:
                    print(f"FAIL: {s} {size}: rc {out.returncode}\n{out.stderr}", file=sys.stderr)
                    return 1
                d = json.loads(line)
                if d["error"]:
                    print(f"FAIL: {s} {size}: {d['error']}", file=sys.stderr)
                    return 1
                res[s].append(d)
                print(f"## {size} round {r + 1} {s}: {line}")
        src = statistics.median(d["cpu"] for d in res["fakesink"]) / a.frames
        for s in sinks:
            cpu = [d["cpu"] / a.frames for d in res[s]]
            sink_cpu = [c - src for c in cpu]
            drops = [d["dropped"] for d in res[s]]
            lat = [d["stats"] for d in res[s] if d["stats"]]
            rows.append((size, s, statistics.median(cpu) * 1e3, min(cpu) * 1e3, max(cpu) * 1e3,
                         statistics.median(sink_cpu) * 1e3, statistics.median(drops),
                         max(drops),
                         statistics.median(x["latency-p50-us"] for x in lat) / 1e3 if lat else None,
                         statistics.median(x["latency-p99-us"] for x in lat) / 1e3 if lat else None,
                         max(x["latency-max-us"] for x in lat) / 1e3 if lat else None))
    print()
    print(f"{'size':<10} {'sink':<26} {'CPU ms/frame [min-max]':>26} {'sink ms/frame':>14} "
          f"{'dropped (max)':>14} {'p50 ms':>8} {'p99 ms':>8} {'max ms':>8}")
    for r in rows:
        lat = " ".join(f"{v:8.2f}" if v is not None else f"{'-':>8}" for v in r[8:11])
        print(f"{r[0]:<10} {r[1]:<26} {r[2]:10.3f} [{r[3]:6.3f}-{r[4]:6.3f}] {r[5]:14.3f} "
              f"{r[6]:8.0f} ({r[7]:3d}) {lat}")
    by = {(r[0], r[1]): r for r in rows}
    for size in a.sizes.split(","):
        f, d = by[(size, "filesink")], by[(size, "dmaiosink")]
        if f[5] > 0:
            print(f"{size}: dmaiosink's CPU per frame is {d[5] / f[5]:.2f}x filesink's "
                  f"(target <= 0.20x), the source's subtracted")
        forced = [by[(size, s)] for s in sinks if "@" in s]
        if forced:
            best = min(forced, key=lambda r: r[5])
            print(f"{size}: auto's sink CPU per frame is {d[5] / best[5]:.2f}x the cheapest forced "
                  f"path's ({best[1]}; target <= 1.10x); drops {d[6]:.0f} vs {best[6]:.0f}")
    print("(CPU: user + system of the process per frame, medians of the rounds; sink = minus the "
          "fakesink run's median; dropped: frames later than one period, from QoS messages)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
