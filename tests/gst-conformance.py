#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""gst-conformance.py: what an element must do in any pipeline, checked on dmaiosrc and
dmaiosink with GStreamer's own API (python3-gi). Debian 12 has no gst-validate (gst-devtools is
not packaged), so this is its equivalent for the two elements, run by check-gst.py under the
leaks tracer (GST_TRACERS=leaks: every GstObject and GstMiniObject made must be gone at
Gst.deinit()).

dmaiosrc (a GRAY8 file whose every byte encodes its frame and position):
  - every frame, in order, byte for byte; PTS i / framerate, duration, offsets; then EOS
  - duration queries in TIME and DEFAULT (frames)
  - flushing seeks: to a frame, between two frames (the next one), backwards after EOS, past
    the end (EOS, no buffer); a SEGMENT event starting where the seek asked, before the data
  - state changes: NULL<->READY, NULL<->PAUSED repeated, PLAYING->NULL while downstream holds
    every buffer of the pool (no hang), and PLAYING again from the start afterwards
  - a missing file: an error message from the element, the state change fails
dmaiosink (appsrc frames):
  - the file is the frames, in order; the EOS message comes once every frame is in the file
    (size checked when it arrives); stats frames-written
  - state changes without data: NULL<->READY<->PAUSED repeated (no hang, no error)
  - a flushing seek of dmaiosrc ! dmaiosink while prerolled: the file holds the frames from
    the seek's position to the end, in order
Exit 0, 1 on a failure, 77 without python3-gi or the plugin.
"""
import gc
import os
import signal
import sys
import tempfile

try:
    import gi
    gi.require_version("Gst", "1.0")
    gi.require_version("GstApp", "1.0")
    from gi.repository import Gst, GstApp  # noqa: F401 (GstApp: appsrc/appsink methods)
except (ImportError, ValueError) as e:
    print("SKIP: python3-gi with GStreamer's introspection data: %s" % e)
    sys.exit(77)

Gst.init(None)
if not Gst.ElementFactory.find("dmaiosrc") or not Gst.ElementFactory.find("dmaiosink"):
    print("SKIP: dmaiosrc/dmaiosink not found (GST_PLUGIN_PATH)")
    sys.exit(77)

W, H, FPS, N = 64, 48, 30, 20
FRAME = W * H
DUR = Gst.SECOND // FPS
CAPS = "video/x-raw,format=GRAY8,width=%d,height=%d,framerate=%d/1" % (W, H, FPS)
failures = []


def fail(msg):
    print("FAIL: " + msg)
    failures.append(msg)


def on_alarm(signum, frame):
    print("FAIL: timeout (a hang) in: %s" % current[0])
    sys.stdout.flush()
    os._exit(1)


current = ["setup"]
signal.signal(signal.SIGALRM, on_alarm)


def step(name, seconds=60):
    current[0] = name
    signal.alarm(seconds)


def frame_bytes(i):
    return bytes(((i * 37 + k * 11 + (k >> 8)) & 0xFF) for k in range(FRAME))


FRAMES = [frame_bytes(i) for i in range(N)]


def pts(i):
    return Gst.util_uint64_scale(i, Gst.SECOND, FPS)


def sample_frame(sample):
    """the GRAY8 picture of a sample, through its video meta's stride when it has one"""
    buf = sample.get_buffer()
    ok, info = buf.map(Gst.MapFlags.READ)
    if not ok:
        return None
    data = bytes(info.data)
    buf.unmap(info)
    stride, offset = W, 0
    try:
        gi.require_version("GstVideo", "1.0")
        from gi.repository import GstVideo
        meta = GstVideo.buffer_get_video_meta(buf)
        if meta:
            stride, offset = meta.stride[0], meta.offset[0]
    except (ImportError, ValueError, AttributeError):
        pass
    return b"".join(data[offset + y * stride: offset + y * stride + W] for y in range(H))


def bus_error(pipe, timeout=0):
    msg = pipe.get_bus().timed_pop_filtered(timeout, Gst.MessageType.ERROR)
    if msg:
        err, dbg = msg.parse_error()
        return "%s: %s" % (msg.src.get_name() if msg.src else "?", err.message)
    return None


def set_state(pipe, state, what):
    r = pipe.set_state(state)
    if r == Gst.StateChangeReturn.ASYNC:
        r, _, _ = pipe.get_state(10 * Gst.SECOND)
    if r == Gst.StateChangeReturn.FAILURE:
        fail("%s: set_state(%s) failed: %s" % (what, state.value_nick, bus_error(pipe)))
        return False
    return True


def drain(pipe):
    """pop every pending message (the bus holds references to their sources)"""
    bus = pipe.get_bus()
    while bus.pop():
        pass


tmp = tempfile.mkdtemp(prefix="dmaio-gst-conf-")
src_file = os.path.join(tmp, "frames.gray")
with open(src_file, "wb") as f:
    for fr in FRAMES:
        f.write(fr)


# ---- dmaiosrc --------------------------------------------------------------------------------
def src_pipe(extra="", sink_props="sync=false"):
    return Gst.parse_launch("dmaiosrc name=src location=%s %s ! %s ! appsink name=out %s"
                            % (src_file, extra, CAPS, sink_props))


def pull_until_eos(sink, limit=N + 5):
    got = []
    for _ in range(limit):
        s = sink.emit("try-pull-sample", 5 * Gst.SECOND)
        if s is None:
            break
        got.append((s.get_buffer().pts, s.get_buffer().duration, s.get_buffer().offset,
                    sample_frame(s), s.get_segment()))
    return got, sink.is_eos()


def check_frames(what, got, first):
    for k, (t, d, off, data, seg) in enumerate(got):
        i = first + k
        if i >= N:
            fail("%s: a buffer past the last frame" % what)
            return
        if t != pts(i) or d != DUR or off != i:
            fail("%s: buffer %d: pts %s duration %s offset %s; want %s %s %d"
                 % (what, k, t, d, off, pts(i), DUR, i))
            return
        if data != FRAMES[i]:
            fail("%s: buffer %d (frame %d): bytes differ from the file's" % (what, k, i))
            return


step("dmaiosrc: whole file")
p = src_pipe()
out = p.get_by_name("out")
if set_state(p, Gst.State.PLAYING, "dmaiosrc"):
    got, eos = pull_until_eos(out)
    if len(got) != N or not eos:
        fail("dmaiosrc: %d buffers, eos %s; want %d then EOS" % (len(got), eos, N))
    check_frames("dmaiosrc", got, 0)
    ok, d = p.query_duration(Gst.Format.TIME)
    if not ok or d != pts(N):
        fail("dmaiosrc: duration query (TIME): %s %s, want %d" % (ok, d, pts(N)))
    ok, d = p.get_by_name("src").query_duration(Gst.Format.DEFAULT)
    if not ok or d != N:
        fail("dmaiosrc: duration query (DEFAULT): %s %s, want %d frames" % (ok, d, N))
err = bus_error(p)
if err:
    fail("dmaiosrc: error: %s" % err)
p.set_state(Gst.State.NULL)
drain(p)
del p, out

step("dmaiosrc: seeks")
p = src_pipe()
out = p.get_by_name("out")
if set_state(p, Gst.State.PAUSED, "dmaiosrc seek"):
    flags = Gst.SeekFlags.FLUSH | Gst.SeekFlags.ACCURATE
    cases = [("to frame 7", pts(7), 7), ("between frames 11 and 12", pts(11) + DUR // 2, 12),
             ("back to frame 2", pts(2), 2), ("to the last frame", pts(N - 1), N - 1)]
    for name, pos, first in cases:
        if not p.seek_simple(Gst.Format.TIME, flags, pos):
            fail("dmaiosrc: seek %s refused" % name)
            continue
        seeks_done = globals().get("seeks_done", 0) + 1
        globals()["seeks_done"] = seeks_done
        p.get_state(10 * Gst.SECOND)
        set_state(p, Gst.State.PLAYING, "dmaiosrc seek")
        got, eos = pull_until_eos(out)
        if len(got) != N - first or not eos:
            fail("dmaiosrc: seek %s: %d buffers, eos %s; want %d then EOS"
                 % (name, len(got), eos, N - first))
        check_frames("dmaiosrc seek %s" % name, got, first)
        if got and got[0][4].start != pos:
            fail("dmaiosrc: seek %s: segment start %d, want %d" % (name, got[0][4].start, pos))
        set_state(p, Gst.State.PAUSED, "dmaiosrc seek")
    if globals().get("seeks_done", 0) != len(cases):
        fail("dmaiosrc: %d of %d seeks done" % (globals().get("seeks_done", 0), len(cases)))
    # past the end: EOS and no buffer
    if p.seek_simple(Gst.Format.TIME, flags, pts(N) + DUR):
        p.get_state(10 * Gst.SECOND)
        set_state(p, Gst.State.PLAYING, "dmaiosrc seek")
        got, eos = pull_until_eos(out)
        if got or not eos:
            fail("dmaiosrc: seek past the end: %d buffers, eos %s; want none, EOS" % (len(got), eos))
err = bus_error(p)
if err:
    fail("dmaiosrc seek: error: %s" % err)
p.set_state(Gst.State.NULL)
drain(p)
del p, out

step("dmaiosrc: state changes")
p = src_pipe()
for k in range(3):
    for st in (Gst.State.READY, Gst.State.NULL, Gst.State.PAUSED, Gst.State.NULL):
        set_state(p, st, "dmaiosrc cycle %d" % k)
err = bus_error(p)
if err:
    fail("dmaiosrc state changes: error: %s" % err)
drain(p)
del p

step("dmaiosrc: stop while downstream holds the pool")
p = src_pipe("pool-size=2", "sync=false max-buffers=1 drop=false")
out = p.get_by_name("out")
if set_state(p, Gst.State.PLAYING, "dmaiosrc held"):
    held = [out.emit("try-pull-sample", 5 * Gst.SECOND) for _ in range(2)]
    if any(h is None for h in held):
        fail("dmaiosrc held: fewer than 2 samples")
    # the source now waits for a pool buffer downstream keeps: stopping must not hang
    p.set_state(Gst.State.NULL)
    del held
    gc.collect()
    # and it plays again from the start
    if set_state(p, Gst.State.PLAYING, "dmaiosrc again"):
        got, eos = pull_until_eos(out)
        if len(got) != N or not eos:
            fail("dmaiosrc again: %d buffers, eos %s; want %d then EOS" % (len(got), eos, N))
        check_frames("dmaiosrc again", got, 0)
p.set_state(Gst.State.NULL)
drain(p)
del p, out

step("dmaiosrc: missing file")
p = Gst.parse_launch("dmaiosrc location=%s ! %s ! fakesink"
                     % (os.path.join(tmp, "does-not-exist"), CAPS))
r = p.set_state(Gst.State.PLAYING)
if r == Gst.StateChangeReturn.ASYNC:
    r, _, _ = p.get_state(10 * Gst.SECOND)
err = bus_error(p, 5 * Gst.SECOND)
if r != Gst.StateChangeReturn.FAILURE or not err or not err.startswith("dmaiosrc"):
    fail("dmaiosrc missing file: state change %s, error %r; want FAILURE with the element's error"
         % (r.value_nick, err))
p.set_state(Gst.State.NULL)
drain(p)
del p


# ---- dmaiosink -------------------------------------------------------------------------------
def sink_pipe(path):
    p = Gst.parse_launch("appsrc name=in format=time caps=%s ! dmaiosink name=snk location=%s "
                         "sync=false" % (CAPS, path))
    return p, p.get_by_name("in"), p.get_by_name("snk")


def push(appsrc, i):
    b = Gst.Buffer.new_wrapped(FRAMES[i])
    b.pts, b.duration, b.offset = pts(i), DUR, i
    return appsrc.emit("push-buffer", b)


step("dmaiosink: frames, EOS after the last write")
out_file = os.path.join(tmp, "sink.gray")
p, a, snk = sink_pipe(out_file)
# a sink's PAUSED/PLAYING completes with its first buffer (preroll): no waiting here
if p.set_state(Gst.State.PLAYING) == Gst.StateChangeReturn.FAILURE:
    fail("dmaiosink: set_state(PLAYING) failed: %s" % bus_error(p))
else:
    for i in range(N):
        if push(a, i) != Gst.FlowReturn.OK:
            fail("dmaiosink: push %d refused" % i)
            break
    a.emit("end-of-stream")
    msg = p.get_bus().timed_pop_filtered(30 * Gst.SECOND,
                                         Gst.MessageType.EOS | Gst.MessageType.ERROR)
    size_at_eos = os.path.getsize(out_file) if os.path.exists(out_file) else -1
    if not msg or msg.type != Gst.MessageType.EOS:
        fail("dmaiosink: no EOS message (%s)" % (msg.parse_error()[0].message if msg else "timeout"))
    elif size_at_eos != N * FRAME:
        fail("dmaiosink: %d bytes in the file when EOS came, want %d" % (size_at_eos, N * FRAME))
    st = snk.get_property("stats")
    if st is None or st.get_value("frames-written") != N:
        fail("dmaiosink: stats %s, want frames-written %d" % (st.to_string() if st else None, N))
p.set_state(Gst.State.NULL)
drain(p)
with open(out_file, "rb") as f:
    if f.read() != b"".join(FRAMES):
        fail("dmaiosink: the file is not the frames in order")
del p, a, snk

step("dmaiosink: state changes without data")
p, a, snk = sink_pipe(os.path.join(tmp, "cycle.gray"))
for k in range(3):
    for st in (Gst.State.READY, Gst.State.PAUSED, Gst.State.READY, Gst.State.NULL):
        r = p.set_state(st)
        if r == Gst.StateChangeReturn.FAILURE:
            fail("dmaiosink cycle %d: set_state(%s) failed: %s" % (k, st.value_nick, bus_error(p)))
        # PAUSED without data stays ASYNC (no preroll buffer): that is right for a sink
err = bus_error(p)
if err:
    fail("dmaiosink state changes: error: %s" % err)
drain(p)
del p, a, snk

step("dmaiosink: a flushing seek")
out_file = os.path.join(tmp, "flush.gray")
p = Gst.parse_launch("dmaiosrc location=%s ! %s ! dmaiosink name=snk location=%s sync=false"
                     % (src_file, CAPS, out_file))
if set_state(p, Gst.State.PAUSED, "dmaiosink flush"):
    # prerolled on frame 0; the seek flushes the sink (FLUSH_START, FLUSH_STOP, a new segment)
    if not p.seek_simple(Gst.Format.TIME, Gst.SeekFlags.FLUSH | Gst.SeekFlags.ACCURATE, pts(5)):
        fail("dmaiosink flush: the seek was refused")
    p.get_state(10 * Gst.SECOND)
    set_state(p, Gst.State.PLAYING, "dmaiosink flush")
    msg = p.get_bus().timed_pop_filtered(30 * Gst.SECOND,
                                         Gst.MessageType.EOS | Gst.MessageType.ERROR)
    if not msg or msg.type != Gst.MessageType.EOS:
        fail("dmaiosink flush: no EOS (%s)" % (msg.parse_error()[0].message if msg else "timeout"))
p.set_state(Gst.State.NULL)
drain(p)
with open(out_file, "rb") as f:
    data = f.read()
# frames 5 .. N-1 in order; frame 0 only if the sink wrote its preroll frame before the seek
frames_in = [data[k:k + FRAME] for k in range(0, len(data), FRAME)]
idx = [FRAMES.index(fr) if fr in FRAMES else -1 for fr in frames_in]
if len(data) % FRAME or idx not in (list(range(5, N)), [0] + list(range(5, N))):
    fail("dmaiosink flush: the file holds frames %s; want 5..%d in order" % (idx, N - 1))
del p

signal.alarm(0)
# nothing of GStreamer's may stay referenced from here (a message keeps its source alive)
msg = st = err = None
signal.alarm(0)
for name in os.listdir(tmp):
    os.unlink(os.path.join(tmp, name))
os.rmdir(tmp)
gc.collect()
Gst.deinit()
print("%d failures" % len(failures))
sys.exit(1 if failures else 0)
