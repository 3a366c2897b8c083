#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""
The command-line tools as a user meets them (issue 14, item 3), one regression check per bug:
  version   dmaio-info, dmaio-cp and dmaio-bench --version print "<tool> <version>" and exit 0
  stdin     `echo hi | dmaio-cp /dev/stdin x` copies the bytes (never an empty x with exit 0)
  pipes     dmaio-cp from a pipe of 40 MiB and to a pipe (/dev/stdout): every byte arrives;
            --verify with a pipe is refused with a clear error, exit 2
  json      dmaio-info --json with file names that are not UTF-8 (and control characters):
            Python's json.loads accepts it, "schema" is 1, the name comes back with each
            invalid byte as U+FFFD and "name_hex" holds the exact bytes
  explain   dmaio-info --json --explain FILE: the file is probed (no "error"; the report's
            struct_size was once left 0, so every file failed with EINVAL), and each provider's
            read has one estimate per path, exactly one chosen, the same path as its "path",
            the chosen one's estimate the lowest of those that can serve
  memfd     dmaio-cp -v --heap memfd names the direct path of a memfd buffer by the library's
            name, "udmabuf-direct" (the one DMAIO_PATH and --path take), never "memfd-direct"
  top       dmaio-top --json parses, with the documented keys and totals that add up; --save
            then --diff against the same system: nothing new, nothing gone; usage errors exit
            2, a --diff file that is no snapshot exits 1 with the reason
  progress  on a terminal (a pty): one line rewritten with \r, with MB/s and ETA, and the
            verify phase shown too; not on a terminal: plain lines ending in \n, no \r
Usage: check-tools.py BUILDDIR   (exit 0 ok, 1 failure)
"""
import codecs
import json
import os
import pty
import select
import subprocess
import sys
import tempfile

build = sys.argv[1]
info = os.path.join(build, "examples", "dmaio-info")
cp = os.path.join(build, "examples", "dmaio-cp")
bench = os.path.join(build, "bench", "dmaio-bench")
top = os.path.join(build, "examples", "dmaio-top")
failures = []
passes = []
# dmaio-info's rule: each byte that is not part of a well-formed UTF-8 sequence is one U+FFFD
codecs.register_error("per_byte", lambda e: ("\ufffd" * (e.end - e.start), e.end))
env = dict(os.environ)
env.pop("DMAIO_PATH", None)
env.pop("DMAIO_DEBUG", None)


def check(name, cond, detail=""):
    print(("ok" if cond else "FAIL") + ": " + name + ("" if cond else ": " + detail))
    (passes if cond else failures).append(name)


def run(args, **kw):
    kw.setdefault("env", env)
    kw.setdefault("stdout", subprocess.PIPE)
    kw.setdefault("stderr", subprocess.PIPE)
    return subprocess.run(args, timeout=120, **kw)


def pattern(n, seed=1):
    out = bytearray(n)
    x = seed
    for i in range(0, n, 8):
        x = (x * 6364136223846793005 + 1442695040888963407) & (2**64 - 1)
        out[i:i + 8] = x.to_bytes(8, "little")[: n - i]
    return bytes(out)


tmp = tempfile.mkdtemp(prefix="dmaio-tools.", dir=os.environ.get("TMPDIR", "/var/tmp"))

# --- version -------------------------------------------------------------------------------
for tool in (info, cp, bench, top):
    if not os.path.exists(tool):
        print("# %s not built: skipped" % tool)
        continue
    r = run([tool, "--version"])
    out = r.stdout.decode(errors="replace").strip()
    name = os.path.basename(tool)
    check("version: " + name, r.returncode == 0 and out.startswith(name + " ") and
          any(c.isdigit() for c in out), "exit %d, %r %r" % (r.returncode, out, r.stderr[:200]))

# --- stdin ---------------------------------------------------------------------------------
x = os.path.join(tmp, "x")
r = run(["sh", "-c", 'echo hi | "$0" /dev/stdin "$1"', cp, x])
data = open(x, "rb").read() if os.path.exists(x) else None
check("stdin: echo hi | dmaio-cp /dev/stdin x",
      (r.returncode == 0 and data == b"hi\n") or (r.returncode != 0 and r.stderr.strip()),
      "exit %d, x=%r, stderr=%r" % (r.returncode, data, r.stderr[:300]))
check("stdin: the data is copied", data == b"hi\n", "x=%r" % (data,))

# --- pipes ---------------------------------------------------------------------------------
big = pattern(40 * 1024 * 1024 + 12345)
src = os.path.join(tmp, "src")
with open(src, "wb") as f:
    f.write(big)
y = os.path.join(tmp, "y")
r = run([cp, "/dev/stdin", y], input=big)
got = open(y, "rb").read() if os.path.exists(y) else b""
check("pipes: 40 MiB from a pipe", r.returncode == 0 and got == big,
      "exit %d, %d of %d bytes, stderr=%r" % (r.returncode, len(got), len(big), r.stderr[:300]))
r = run([cp, src, "/dev/stdout"])
check("pipes: to a pipe (/dev/stdout)", r.returncode == 0 and r.stdout == big,
      "exit %d, %d of %d bytes, stderr=%r" % (r.returncode, len(r.stdout), len(big), r.stderr[:300]))
r = run([cp, "--verify", "/dev/stdin", os.path.join(tmp, "z")], input=b"abc")
check("pipes: --verify of a pipe refused", r.returncode == 2 and b"verify" in r.stderr,
      "exit %d, stderr=%r" % (r.returncode, r.stderr[:300]))

# --- json ----------------------------------------------------------------------------------
names = [b"plain", b"caf\xc3\xa9", b"bad\xff\xfeutf8", b"ctl\x01\x1b\x7f", b"trunc\xe2\x82",
         b"over\xc0\xaf", b"surr\xed\xa0\x80"]
paths = []
for n in names:
    p = os.path.join(tmp.encode(), n)
    with open(p, "wb") as f:
        f.write(b"1234")
    paths.append(p)
r = run([info, "--json"] + paths)
try:
    doc = json.loads(r.stdout.decode("utf-8"))  # strict: raw invalid bytes fail here
    check("json: parses", True)
except (UnicodeDecodeError, ValueError) as e:
    doc = None
    check("json: parses", False, "%s; exit %d; %r" % (e, r.returncode, r.stdout[-300:]))
if doc is not None:
    check("json: schema 1", doc.get("schema") == 1, "schema=%r" % (doc.get("schema"),))
    files = doc.get("files", [])
    check("json: every file", len(files) == len(paths), "%d files" % len(files))
    for p, f in zip(paths, files):
        want = p.decode("utf-8", errors="per_byte")
        check("json: name %r" % p[-14:], f.get("name") == want, "%r != %r" % (f.get("name"), want))
        valid = True
        try:
            p.decode("utf-8")
        except UnicodeDecodeError:
            valid = False
        if not valid:
            check("json: name_hex %r" % p[-14:], f.get("name_hex") == p.hex(), "%r" % f.get("name_hex"))
        else:
            check("json: no name_hex for UTF-8 %r" % p[-14:], "name_hex" not in f)

# --- explain -------------------------------------------------------------------------------
ef = os.path.join(tmp, "explain")
with open(ef, "wb") as f:
    f.write(pattern(3 << 20))
r = run([info, "--json", "--explain", ef])
try:
    doc = json.loads(r.stdout.decode("utf-8"))
except (UnicodeDecodeError, ValueError) as e:
    doc = None
    check("explain: parses", False, "%s; exit %d; %r" % (e, r.returncode, r.stdout[-300:]))
if doc is not None:
    f = doc.get("files", [{}])[0]
    check("explain: the file is probed", f.get("error") is None, "error %r" % f.get("error"))
    reads = [c for c in f.get("read_paths", []) if c.get("alloc_error") is None]
    check("explain: a provider read it", len(reads) > 0, "%r" % f.get("read_paths"))
    for c in reads:
        est = c.get("estimates", [])
        chosen = [e for e in est if e.get("chosen")]
        can = [e["est_ns"] for e in est if e.get("error") is None]
        check("explain %s: one estimate per path" % c["provider"], len(est) == 6, "%r" % est)
        check("explain %s: one chosen, the path taken" % c["provider"],
              len(chosen) == 1 and chosen[0]["path"] == c.get("path"),
              "chosen %r, path %r" % ([e["path"] for e in chosen], c.get("path")))
        check("explain %s: the chosen estimate is the lowest" % c["provider"],
              len(chosen) == 1 and chosen[0]["est_ns"] == min(can) and min(can) > 0,
              "%r" % est)

# --- memfd ---------------------------------------------------------------------------------
r = run([cp, "-v", "--heap", "memfd", "--path", "udmabuf-direct", src, os.path.join(tmp, "m")])
out = r.stdout.decode(errors="replace")
check("memfd: copy", r.returncode == 0, "exit %d %r" % (r.returncode, r.stderr[:300]))
check("memfd: the direct path has the library's name", "path udmabuf-direct" in out and
      "memfd-direct" not in out, out)

# --- top -----------------------------------------------------------------------------------
if os.path.exists(top):
    r = run([top, "--json"])
    try:
        doc = json.loads(r.stdout.decode("utf-8"))
    except (UnicodeDecodeError, ValueError) as e:
        doc = None
        check("top: --json parses", False, "%s; exit %d; %r" % (e, r.returncode, r.stdout[-300:]))
    if doc is not None:
        keys = {"source", "time_ns", "duration_ns", "flags", "reason", "scanned", "hidden",
                "vanished", "totals", "cma", "exporters", "processes", "names", "buffers",
                "cgroups", "memcg_accounting"}
        check("top: --json keys", r.returncode == 0 and keys <= set(doc),
              "missing %s" % sorted(keys - set(doc)))
        bufs = doc.get("buffers", [])
        check("top: totals are the buffers' sum",
              doc["totals"]["buffers"] == len(bufs) and
              doc["totals"]["bytes"] == sum(b["size"] for b in bufs) and
              sum(e["bytes"] for e in doc["exporters"]) == doc["totals"]["bytes"],
              repr(doc["totals"]))
        check("top: at least this process read", doc["scanned"] >= 1, repr(doc["scanned"]))
        procs, cgs = doc.get("processes", []), doc.get("cgroups", [])
        check("top: every holding process in one listed cgroup, each cgroup's processes counted",
              sum(c["processes"] for c in cgs) == len(procs) and
              all(sum(1 for p in procs if p["cgroup"] == c["path"]) == c["processes"]
                  for c in cgs) and
              all(c["bytes"] <= sum(b["size"] for b in bufs) for c in cgs) and
              doc.get("memcg_accounting") in ("on", "off", "absent"),
              repr(cgs)[:300])
    saved = os.path.join(tmp, "top.json")
    r = run([top, "--no-maps", "--save", saved])
    check("top: --save", r.returncode == 0 and os.path.exists(saved), "exit %d" % r.returncode)
    r = run([top, "--json", "--no-maps", "--diff", saved])
    try:
        d = json.loads(r.stdout.decode("utf-8"))["diff"]
        check("top: --diff against itself: nothing new or gone",
              r.returncode == 0 and d["new"] == [] and d["gone"] == [], repr(d)[:300])
    except (UnicodeDecodeError, ValueError, KeyError) as e:
        check("top: --diff --json parses", False, "%s; exit %d" % (e, r.returncode))
    # a buffer that was there and is no more: listed as gone, with the process that lost it
    try:
        old = json.load(open(saved))
        fake = {"inode": 987654321, "size": 12345, "exporter": "system", "name": "leak-test",
                "kernel": False, "partial": False, "holders": [{"pid": 424242, "fds": 1,
                                                                "maps": 0, "mapped_bytes": 0}]}
        old["buffers"].append(fake)
        old["processes"].append({"pid": 424242, "comm": "gone-proc", "buffers": 1,
                                 "bytes": 12345, "private_bytes": 12345, "shared_bytes": 0,
                                 "pss_bytes": 12345})
        json.dump(old, open(saved, "w"))
        r = run([top, "--json", "--no-maps", "--diff", saved])
        d = json.loads(r.stdout.decode("utf-8"))["diff"]
        check("top: --diff lists a buffer gone and the process that held it",
              r.returncode == 0 and [b["inode"] for b in d["gone"]] == [987654321] and
              any(p["pid"] == 424242 and p["delta"] == -12345 for p in d["processes"]),
              repr(d)[:400])
    except (OSError, ValueError, KeyError) as e:
        check("top: --diff of an edited snapshot", False, repr(e))
    for bad in (["--source", "nope"], ["--pid", "0"], ["--delay", "-1"], ["extra"]):
        r = run([top] + bad)
        check("top: usage error %s exits 2" % " ".join(bad), r.returncode == 2 and r.stderr,
              "exit %d" % r.returncode)
    r = run([top, "--diff", src])
    check("top: --diff of a file that is no snapshot: exit 1 with the reason",
          r.returncode == 1 and b"--diff" in r.stderr, "exit %d, %r" % (r.returncode, r.stderr[:200]))

# --- progress ------------------------------------------------------------------------------
def on_pty(args):
    """run args with stderr on a pty; return (exit, what the terminal got)"""
    master, slave = pty.openpty()
    p = subprocess.Popen(args, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=slave,
                         env=env)
    os.close(slave)
    got = b""
    while True:
        rl, _, _ = select.select([master], [], [], 60)
        if not rl:
            break
        try:
            chunk = os.read(master, 65536)
        except OSError:
            break
        if not chunk:
            break
        got += chunk
    os.close(master)
    return p.wait(timeout=60), got


code, tty = on_pty([cp, "--verify", "--progress-interval", "0", src, os.path.join(tmp, "p1")])
check("progress: terminal copy", code == 0, "exit %d %r" % (code, tty[-300:]))
check("progress: terminal line updated in place", tty.count(b"\r") >= 2 and b"MB/s" in tty and
      b"ETA" in tty, repr(tty[:400]))
check("progress: terminal shows verify", b"\r\x1b[Kverify: " in tty, repr(tty[-400:]))
r = run([cp, "--verify", "--progress-interval", "0", src, os.path.join(tmp, "p2")])
err = r.stderr
check("progress: not a terminal: plain lines", r.returncode == 0 and b"\r" not in err and
      b"MB/s" in err and err.count(b"\n") >= 2, repr(err[:400]))
check("progress: not a terminal: verify shown", b"dmaio-cp: verify: " in err, repr(err[:400]))

subprocess.run(["rm", "-rf", tmp])
print("%d passed, %d failed" % (len(passes), len(failures)))
sys.exit(1 if failures else 0)
