#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""check-gst.py PLUGIN_DIR LIB_DIR: the GStreamer elements of libgstdmaio.so on the host.

  1. gst-inspect-1.0 finds dmaiosink, every property documented (a blurb).
  2. videotestsrc ! tee into dmaiosink and filesink: byte-identical files for several formats
     and sizes (odd widths included), queue depths 1 and 8, with the index checked against the
     frames (one line per frame, in order, offsets contiguous, PTS of the source).
  3. Rotation: max-size-bytes gives files of whole frames that concatenate to filesink's file.
  4. append: a second run adds its frames after the first's.
  8. The pool dmaiosink proposes to a source in system memory: frames written from where the
     source put them (no copy), each placed where its frame falls in the file's pages (1080p
     NV12 frames start inside a page 7 times in 8), with and without a queue between, across a
     rotation; the files byte-identical with a filesink run; propose-pool=false copies every
     frame; a layout with padding stays in place and is copied where it must be.
  6. dmaiosrc: the file read back into image buffers reproduces it (several formats), a layout
     whose strides differ from GStreamer's converts to the same picture (video meta), frames
     found through dmaiosink's index, a missing file is an error.
  7. Conformance (tests/gst-conformance.py: seeks, queries, state changes, flushes, EOS).
  Every run under the leaks tracer: nothing GStreamer counts may be alive at exit.
  5. Errors stop the pipeline with an element error and keep every frame before it:
     a read-only location (open fails: nothing written), RLIMIT_FSIZE below the stream
     ("file too large", the frames below the limit are filesink's), a full tmpfs ("disk full";
     root only, in a private mount namespace: else reported as skipped).
Exit 0 all passed, 1 a failure, 77 no gst-launch-1.0/gst-inspect-1.0 or no plugin.
"""
import os
import resource
import shutil
import subprocess
import sys
import tempfile

plugin_dir, lib_dir = sys.argv[1], sys.argv[2]
env = dict(os.environ, GST_PLUGIN_PATH=plugin_dir,
           LD_LIBRARY_PATH=lib_dir + ":" + os.environ.get("LD_LIBRARY_PATH", ""),
           GST_REGISTRY=os.path.join(tempfile.gettempdir(), "dmaio-gst-registry-%d.bin" % os.getpid()))
failures = []
skipped = []


def fail(msg):
    print("FAIL: " + msg)
    failures.append(msg)


# Every pipeline runs under GStreamer's leaks tracer: at gst_deinit() it lists the GstObjects
# and GstMiniObjects still alive (elements, pads, buffers, pools, memories, caps, events).
leak_env = dict(GST_TRACERS="leaks", GST_DEBUG="GST_TRACER:7,leaks:7", GST_DEBUG_NO_COLOR="1")
env.update(leak_env)
leak_runs = [0]


def check_leaks(what, out):
    """the leaks tracer's verdict in a run's output: 'listed N alive objects', N must be 0"""
    import re
    m = re.findall(r"listed (\d+) alive objects", out)
    if not m:
        fail("%s: the leaks tracer gave no verdict (did the process end in gst_deinit?)" % what)
    elif int(m[-1]):
        alive = [l.split("object-alive,", 1)[1][:160] for l in out.splitlines()
                 if "object-alive, type-name=(string)Gst" in l or
                 ("object-alive," in l and "%s" not in l)]
        fail("%s: %s objects alive at exit: %s" % (what, m[-1], alive[:8]))
    else:
        leak_runs[0] += 1


def launch(desc, preexec=None, timeout=300):
    p = subprocess.run(["gst-launch-1.0", "-q"] + desc.split(), env=env, capture_output=True,
                       text=True, preexec_fn=preexec, timeout=timeout)
    out = p.stdout + p.stderr
    check_leaks("gst-launch-1.0 " + desc[:120], out)
    # the rest of the checks read the pipeline's own messages, not the tracer's
    return p.returncode, "\n".join(l for l in out.splitlines()
                                   if " GST_TRACER " not in l and " leaks " not in l)


for tool in ("gst-launch-1.0", "gst-inspect-1.0"):
    if not shutil.which(tool):
        print("SKIP: %s not found (Debian: gstreamer1.0-tools)" % tool)
        sys.exit(77)
if not os.path.exists(os.path.join(plugin_dir, "libgstdmaio.so")):
    print("SKIP: libgstdmaio.so not built (-Dgstreamer)")
    sys.exit(77)

# 1. inspect
r = subprocess.run(["gst-inspect-1.0", "dmaiosink"], env=env, capture_output=True, text=True)
if r.returncode:
    fail("gst-inspect-1.0 dmaiosink: %s" % r.stderr.strip())
else:
    for prop in ("location", "queue-depth", "dsync", "append", "max-size-bytes", "max-size-time",
                 "index-location", "drop-when-full", "propose-pool", "stats"):
        line = [l for l in r.stdout.splitlines() if l.strip().startswith(prop + " ")]
        if not line or ":" not in line[0] or len(line[0].split(":", 1)[1].strip()) < 10:
            fail("dmaiosink: property %s missing or undocumented" % prop)

tmp = tempfile.mkdtemp(prefix="dmaio-gst-", dir=os.environ.get("DMAIO_TEST_DIR", "/var/tmp"))


def src(fmt, w, h, n):
    return ("videotestsrc num-buffers=%d pattern=ball ! video/x-raw,format=%s,width=%d,height=%d,"
            "framerate=30/1" % (n, fmt, w, h))


def frame_size(path_ref, n):
    return os.path.getsize(path_ref) // n


# 2. tee: identical files, index
cases = [("NV12", 1280, 720, 30, 4), ("I420", 641, 479, 25, 1), ("RGBA", 322, 242, 40, 8),
         ("YUY2", 1920, 1080, 10, 2), ("GRAY8", 17, 9, 50, 3)]
ntee = 0
for fmt, w, h, n, depth in cases:
    a, b, idx = (os.path.join(tmp, x) for x in ("a.raw", "b.raw", "a.idx"))
    rc, out = launch("%s ! tee name=t ! queue ! dmaiosink location=%s index-location=%s "
                     "queue-depth=%d t. ! queue ! filesink location=%s" % (src(fmt, w, h, n), a, idx,
                                                                           depth, b))
    if rc:
        fail("%s %dx%d: pipeline failed: %s" % (fmt, w, h, out.strip()))
        continue
    da, db = open(a, "rb").read(), open(b, "rb").read()
    if da != db or not da:
        fail("%s %dx%d depth %d: dmaiosink wrote %d bytes, filesink %d, differing" %
             (fmt, w, h, depth, len(da), len(db)))
        continue
    fs = len(db) // n
    lines = [l.split() for l in open(idx).read().splitlines()]
    if len(lines) != n:
        fail("%s: index has %d lines for %d frames" % (fmt, len(lines), n))
        continue
    for i, (off, pts, size) in enumerate(lines):
        if int(off) != i * fs or int(size) != fs or int(pts) != i * 1000000000 // 30:
            fail("%s: index line %d: %s %s %s, expected %d %d %d" %
                 (fmt, i, off, pts, size, i * fs, i * 1000000000 // 30, fs))
            break
    ntee += 1
print("# tee: %d of %d format/size/depth cases byte-identical with filesink, index exact" %
      (ntee, len(cases)))

# 3. rotation
ref = os.path.join(tmp, "b.raw")
rc, out = launch("%s ! tee name=t ! queue ! dmaiosink location=%s/rot-%%03d.raw "
                 "max-size-bytes=%d t. ! queue ! filesink location=%s" %
                 (src("NV12", 320, 240, 20), tmp, 320 * 240 * 3 // 2 * 6 + 100, ref))
if rc:
    fail("rotation: %s" % out.strip())
else:
    parts = sorted(f for f in os.listdir(tmp) if f.startswith("rot-"))
    data = b"".join(open(os.path.join(tmp, f), "rb").read() for f in parts)
    sizes = [os.path.getsize(os.path.join(tmp, f)) for f in parts]
    if data != open(ref, "rb").read() or len(parts) != 4 or sizes[:3] != [6 * 115200] * 3:
        fail("rotation: %d files of %s bytes do not make filesink's file in frames of 6" %
             (len(parts), sizes))
    else:
        print("# rotation: 20 frames into %d files of %s bytes, concatenated = filesink's" %
              (len(parts), sizes))

# 4. append
a = os.path.join(tmp, "app.raw")
rc1, out1 = launch("%s ! dmaiosink location=%s" % (src("GRAY8", 64, 64, 5), a))
rc2, out2 = launch("%s ! dmaiosink location=%s append=true" % (src("GRAY8", 64, 64, 3), a))
rc3, out3 = launch("%s ! filesink location=%s" % (src("GRAY8", 64, 64, 5), ref))
one = open(ref, "rb").read()
if rc1 or rc2 or rc3 or open(a, "rb").read() != one + one[:3 * 4096]:
    fail("append: the file is not the first run's 5 frames then the second's 3")
else:
    print("# append: 5 frames then 3 appended, exact")

# 8. the pool proposed upstream: the sink's statistics (its EOS message, gst-launch-1.0 -m) say
# how each frame went; the file is compared with a filesink run of the same source (layouts
# without padding: every byte is a pixel the source wrote)
def launch_stats(desc):
    import re
    p = subprocess.run(["gst-launch-1.0", "-m"] + desc.split(), env=env, capture_output=True,
                       text=True, timeout=300)
    out = p.stdout + p.stderr
    check_leaks("gst-launch-1.0 -m " + desc[:120], out)
    st = {}
    for k in ("frames-written", "frames-pool", "frames-copied", "frames-direct"):
        m = re.findall(r"%s=\(guint64\)(\d+)" % k, out)
        st[k] = int(m[-1]) if m else -1
    return p.returncode, out, st


npool = 0
pool_cases = [  # format, w, h, frames, between, sink options, frames from the pool (None: all)
    ("NV12", 1920, 1080, 12, "", "", None),           # 3110400 bytes: 8 in-page offsets
    ("NV12", 1920, 1080, 12, "queue max-size-buffers=3 !", "queue-depth=2", None),
    ("I420", 640, 360, 20, "", "queue-depth=1", None),  # 345600 bytes
    ("RGB", 400, 300, 20, "", "", None),                # 360000 bytes: 8-byte steps
    ("YUY2", 642, 480, 10, "", "propose-pool=false", 0),
    ("NV12", 320, 240, 20, "", "max-size-bytes=700000 location-pattern", None),
]
for fmt, w, h, n, between, opts, want in pool_cases:
    a, b = os.path.join(tmp, "pool.raw"), os.path.join(tmp, "pool-ref.raw")
    rotate = "location-pattern" in opts
    loc = os.path.join(tmp, "pool-%03d.raw") if rotate else a
    opts = opts.replace("location-pattern", "")
    for f in os.listdir(tmp):
        if f.startswith("pool-"):
            os.unlink(os.path.join(tmp, f))
    rc, out, st = launch_stats("%s ! %s dmaiosink location=%s %s" %
                               (src(fmt, w, h, n), between, loc, opts))
    launch("%s ! filesink location=%s" % (src(fmt, w, h, n), b))
    ref = open(b, "rb").read()
    if rotate:
        parts = sorted(f for f in os.listdir(tmp) if f.startswith("pool-") and f != "pool-ref.raw")
        data = b"".join(open(os.path.join(tmp, f), "rb").read() for f in parts)
    else:
        data = open(a, "rb").read() if os.path.exists(a) else b""
    what = "%s %dx%d %s%s" % (fmt, w, h, between + " " if between else "", opts.strip())
    frames_pool = n if want is None else want
    # a rotation restarts the offsets: the frame that starts a file was placed for the old one
    # and is copied (700000-byte files: 6 frames each, 3 rotations in 20 frames)
    lo = frames_pool - (3 if rotate else 0)
    if rc or data != ref:
        fail("pool, %s: rc %d, %d bytes against filesink's %d%s" %
             (what, rc, len(data), len(ref), ", differing" if len(data) == len(ref) else ""))
    elif st["frames-written"] != n or not lo <= st["frames-pool"] <= frames_pool or \
            st["frames-pool"] + st["frames-copied"] != n:
        fail("pool, %s: %s, expected %d frames from the pool" % (what, st, frames_pool))
    else:
        npool += 1
print("# pool: %d of %d cases byte-identical with filesink, frames from the pool as expected" %
      (npool, len(pool_cases)))
# a layout with padding (641 wide: 3 bytes after each line) stays in place: the frames that
# start inside a page are copied, the others written from the pool; pixel bytes as filesink's
fmt, w, h, n = "GRAY8", 641, 100, 24
rc, out, st = launch_stats("%s ! dmaiosink location=%s" % (src(fmt, w, h, n), a))
launch("%s ! filesink location=%s" % (src(fmt, w, h, n), b))
data, ref = open(a, "rb").read(), open(b, "rb").read()
pix = lambda d: b"".join(d[i:i + w] for i in range(0, len(d), 644))
aligned = sum(1 for k in range(n) if (k * 644 * h) % os.sysconf("SC_PAGESIZE") == 0)
if rc or len(data) != len(ref) or pix(data) != pix(ref) or st["frames-pool"] != aligned or \
        st["frames-copied"] != n - aligned:
    fail("pool, padded GRAY8 641x100: rc %d, %s (expected %d from the pool), pixels %s" %
         (rc, st, aligned, "equal" if pix(data) == pix(ref) else "differ"))
else:
    print("# pool, padded layout: in place, %d frames from the pool, %d copied, pixels exact" %
          (aligned, n - aligned))

# 6. dmaiosrc: the file back into image buffers (the library's layout, GstVideoMeta)
nsrc = 0
src_cases = [("NV12", 1280, 720, 12), ("RGBA", 322, 242, 10), ("YUY2", 640, 360, 8),
             ("GRAY8", 20, 12, 30), ("I420", 640, 480, 6)]
for fmt, w, h, n in src_cases:
    f, back = os.path.join(tmp, "src.raw"), os.path.join(tmp, "back.raw")
    caps = "video/x-raw,format=%s,width=%d,height=%d,framerate=30/1" % (fmt, w, h)
    launch("%s ! filesink location=%s" % (src(fmt, w, h, n), f))
    rc, out = launch("dmaiosrc location=%s ! %s ! filesink location=%s" % (f, caps, back))
    if rc or open(f, "rb").read() != open(back, "rb").read():
        fail("dmaiosrc %s %dx%d: the frames read back differ from the file (rc %d %s)" %
             (fmt, w, h, rc, out.strip()[-200:]))
    else:
        nsrc += 1
print("# dmaiosrc ! filesink: %d of %d format/size cases reproduce the file" %
      (nsrc, len(src_cases)))
# strides that differ from GStreamer's (I420 642 wide: the library aligns the luma stride so the
# chroma's is a multiple of 4 too): read line by line, the video meta says where the lines are;
# videoconvert must see the same picture as from videotestsrc
f, o1, o2 = (os.path.join(tmp, x) for x in ("i420.raw", "conv1.raw", "conv2.raw"))
launch("%s ! filesink location=%s" % (src("I420", 642, 480, 5), f))
rc1, out1 = launch("dmaiosrc location=%s ! video/x-raw,format=I420,width=642,height=480,"
                   "framerate=30/1 ! videoconvert ! video/x-raw,format=RGBA ! filesink location=%s"
                   % (f, o1))
rc2, out2 = launch("%s ! videoconvert ! video/x-raw,format=RGBA ! filesink location=%s" %
                   (src("I420", 642, 480, 5), o2))
if rc1 or rc2 or open(o1, "rb").read() != open(o2, "rb").read():
    fail("dmaiosrc I420 642x480 (other strides) ! videoconvert differs from the source's: %s" %
         (out1.strip()[-200:]))
else:
    print("# dmaiosrc I420 642x480 (the library's strides, video meta) ! videoconvert = "
          "videotestsrc's")
# with dmaiosink's index: frames where it says, stamped from it
f, idx, back = (os.path.join(tmp, x) for x in ("ix.raw", "ix.idx", "ix-back.raw"))
rc, out = launch("%s ! dmaiosink location=%s index-location=%s" %
                 (src("NV12", 320, 240, 15), f, idx))
rc2, out2 = launch("dmaiosrc location=%s index-location=%s ! video/x-raw,format=NV12,width=320,"
                   "height=240,framerate=30/1 ! filesink location=%s" % (f, idx, back))
if rc or rc2 or open(f, "rb").read() != open(back, "rb").read():
    fail("dmaiosrc with an index: %s" % out2.strip()[-200:])
else:
    print("# dmaiosrc with dmaiosink's index: 15 frames exact")
rc, out = launch("dmaiosrc location=%s/none.raw ! video/x-raw,format=NV12,width=64,height=64 ! "
                 "fakesink" % tmp)
if rc == 0 or "cannot open" not in out:
    fail("dmaiosrc, missing file: rc %d %r" % (rc, out.strip()[-200:]))

# 5. errors
ro = os.path.join(tmp, "ro")
os.mkdir(ro)
os.chmod(ro, 0o555)
target = os.path.join(ro, "x.raw")
if os.geteuid() == 0:
    # root writes anywhere: a path under a regular file cannot be opened by anybody
    open(os.path.join(tmp, "plain"), "w").close()
    target = os.path.join(tmp, "plain", "x.raw")
rc, out = launch("%s ! dmaiosink location=%s" % (src("NV12", 64, 64, 3), target))
if rc == 0 or "cannot open" not in out or os.path.exists(target):
    fail("unwritable location: rc %d, message %r" % (rc, out.strip()[-200:]))
else:
    print("# unwritable location: pipeline stopped: %s" %
          [l for l in out.splitlines() if "cannot open" in l][0].strip()[:160])

fsz_frames, fs = 40, 320 * 240 * 3 // 2
limit = 12 * fs + 1536  # between frames 12 and 13, not block-aligned
b = os.path.join(tmp, "fsz-ref.raw")
launch("%s ! filesink location=%s" % (src("NV12", 320, 240, fsz_frames), b))
a = os.path.join(tmp, "fsz.raw")


def fsize_limit():
    import signal
    signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
    resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit))


rc, out = launch("%s ! dmaiosink location=%s queue-depth=4" % (src("NV12", 320, 240, fsz_frames), a),
                 preexec=fsize_limit)
data, refd = open(a, "rb").read(), open(b, "rb").read()
whole = len(data) // fs
if rc == 0 or "file too large" not in out:
    fail("RLIMIT_FSIZE: rc %d, no 'file too large' in %r" % (rc, out.strip()[-300:]))
elif len(data) > limit or whole < 12 or data[:whole * fs] != refd[:whole * fs]:
    fail("RLIMIT_FSIZE: %d bytes kept (limit %d), %d whole frames, not filesink's" %
         (len(data), limit, whole))
else:
    print("# RLIMIT_FSIZE %d: pipeline stopped (%s); %d bytes kept, the first %d frames exact" %
          (limit, [l for l in out.splitlines() if "too large" in l][0].strip()[:100],
           len(data), whole))

if os.geteuid() == 0 and shutil.which("unshare"):
    mnt = os.path.join(tmp, "small")
    os.mkdir(mnt)
    b = os.path.join(tmp, "full-ref.raw")
    launch("%s ! filesink location=%s" % (src("NV12", 640, 480, 30), b))
    # "rc=" only once the tmpfs is mounted: an unshare or a mount that fails (a chroot, where
    # unshare -m cannot change the root's propagation) is a skip, not a disk-full result
    script = ("mount -t tmpfs -o size=4m none %s || exit 0; GST_PLUGIN_PATH=%s gst-launch-1.0 "
              "-q %s ! dmaiosink location=%s/f.raw; echo rc=$?; cp %s/f.raw %s/full.raw" %
              (mnt, plugin_dir, src("NV12", 640, 480, 30), mnt, mnt, tmp))
    p = subprocess.run(["unshare", "-m", "sh", "-c", script], env=env, capture_output=True,
                       text=True, timeout=300)
    out = p.stdout + p.stderr
    fs = 640 * 480 * 3 // 2
    if "rc=" not in out:
        skipped.append("disk full: no tmpfs mount in a mount namespace here (%s)" %
                       out.strip()[:100])
    else:
        data, refd = open(os.path.join(tmp, "full.raw"), "rb").read(), open(b, "rb").read()
        whole = len(data) // fs
        if "rc=0" in out or "disk full" not in out:
            fail("disk full: %r" % out.strip()[-300:])
        elif whole < 8 or data[:whole * fs] != refd[:whole * fs]:
            fail("disk full: %d bytes kept, %d whole frames, not filesink's" % (len(data), whole))
        else:
            print("# disk full (tmpfs 4 MiB): pipeline stopped (%s); %d whole frames exact" %
                  ([l for l in out.splitlines() if "disk full" in l][0].strip()[:100], whole))
else:
    skipped.append("disk full: needs root and unshare (a private tmpfs)")

# 7. conformance (gst-validate's kind of checks; Debian 12 does not package gst-validate):
# tests/gst-conformance.py with GStreamer's python bindings, under the leaks tracer too
conf = os.path.join(os.path.dirname(os.path.abspath(__file__)), "gst-conformance.py")
py = None
for cand in (sys.executable, "/usr/bin/python3"):
    if cand and subprocess.run([cand, "-c", "import gi; gi.require_version('Gst', '1.0')"],
                               capture_output=True).returncode == 0:
        py = cand
        break
if not py:
    skipped.append("conformance: no python3 with gi and Gst 1.0 (Debian: python3-gi, "
                   "gir1.2-gstreamer-1.0)")
else:
    p = subprocess.run([py, conf], env=env, capture_output=True, text=True, timeout=600)
    out = p.stdout + p.stderr
    if p.returncode == 77:
        skipped.append("conformance: %s" % p.stdout.strip()[-200:])
    else:
        for line in p.stdout.splitlines():
            if line.startswith("FAIL"):
                fail("conformance: " + line[6:])
        if p.returncode and not any(l.startswith("FAIL") for l in p.stdout.splitlines()):
            fail("conformance: exit %d: %r" % (p.returncode, out.strip()[-300:]))
        check_leaks("gst-conformance.py", out)
        if p.returncode == 0:
            print("# conformance: dmaiosrc (order, bytes, PTS, duration queries, seeks, state "
                  "changes, a held pool, a missing file) and dmaiosink (EOS after the writes, "
                  "state changes, a flushing seek): passed")
print("# leaks tracer: %d runs, none left an object alive" % leak_runs[0])

os.chmod(ro, 0o755)
shutil.rmtree(tmp, ignore_errors=True)
try:
    os.unlink(env["GST_REGISTRY"])
except OSError:
    pass
for s in skipped:
    print("# SKIPPED: " + s)
if failures:
    print("%d failure(s)" % len(failures))
    sys.exit(1)
print("# all passed")
