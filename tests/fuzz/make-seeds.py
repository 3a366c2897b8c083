#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Write the seed corpora of the fuzz harnesses: tests/fuzz/corpus/<harness>/<name>.

Small hand-made inputs, valid ones and edges, in each harness's input format (the comment at
the top of each harness says it). Run from anywhere: tests/fuzz/make-seeds.py; the files it
writes are committed. Regression inputs (tests/fuzz/regress/) are not made here: they are the
inputs that made a harness fail, kept as they were found."""
import json
import os
import shutil
import struct
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
CORPUS = os.path.join(HERE, "corpus")


def put(harness, name, data):
    d = os.path.join(CORPUS, harness)
    os.makedirs(d, exist_ok=True)
    with open(os.path.join(d, name), "wb") as f:
        f.write(data)


# --- GGUF ----------------------------------------------------------------------------------
def gstr(s):
    b = s.encode() if isinstance(s, str) else s
    return struct.pack("<Q", len(b)) + b


def gval(t, v):
    """One GGUF value of type t (the spec's numbering)."""
    fmt = {0: "B", 1: "b", 2: "H", 3: "h", 4: "I", 5: "i", 6: "f", 7: "?", 10: "Q", 11: "q",
           12: "d"}
    if t in fmt:
        return struct.pack("<" + fmt[t], v)
    if t == 8:
        return gstr(v)
    if t == 9:
        et, items = v
        return struct.pack("<IQ", et, len(items)) + b"".join(gval(et, x) for x in items)
    raise ValueError(t)


# bytes of a tensor: ggml type -> (elements per block, bytes per block)
GGML = {0: (1, 4), 1: (1, 2), 2: (32, 18), 3: (32, 20), 8: (32, 34), 12: (256, 144),
        24: (1, 1), 26: (1, 4), 28: (1, 8), 30: (1, 2)}


def gguf(version=3, kvs=(), tensors=(), align=32, tail=b""):
    """tensors: (name, dims (ne0 first), ggml type); data laid out aligned, filled with a
    pattern."""
    out = b"GGUF" + struct.pack("<IQQ", version, len(tensors), len(kvs))
    for k, t, v in kvs:
        out += gstr(k) + struct.pack("<I", t) + gval(t, v)
    off = 0
    infos, datas = b"", []
    for name, dims, t in tensors:
        n = 1
        for d in dims:
            n *= d
        blck, size = GGML[t]
        nbytes = n // blck * size
        infos += gstr(name) + struct.pack("<I", len(dims)) + b"".join(
            struct.pack("<Q", d) for d in dims) + struct.pack("<IQ", t, off)
        datas.append((off, nbytes))
        off += (nbytes + align - 1) // align * align
    out += infos
    out += b"\0" * (-len(out) % align)
    data = bytearray(off)
    for o, nb in datas:
        for i in range(nb):
            data[o + i] = (o + i * 7) & 0xff
    return out + bytes(data) + tail


def seeds_gguf():
    h = "fuzz-gguf"
    put(h, "one-f32", gguf(tensors=[("w", [4], 0)]))
    put(h, "v2-one-f16", gguf(version=2, tensors=[("weight", [3, 2], 1)]))
    put(h, "kv-every-type", gguf(kvs=[
        ("u8", 0, 7), ("i8", 1, -7), ("u16", 2, 700), ("i16", 3, -700), ("u32", 4, 70000),
        ("i32", 5, -70000), ("f32", 6, 1.5), ("bool", 7, True), ("str", 8, "llama"),
        ("u64", 10, 1 << 40), ("i64", 11, -(1 << 40)), ("f64", 12, 2.25),
        ("arr.u32", 9, (4, [1, 2, 3])), ("arr.str", 9, (8, ["a", "bc", ""])),
        ("arr.arr", 9, (9, [(0, [1, 2]), (8, ["x"])])), ("general.name", 8, "seed"),
    ], tensors=[("t.0", [8], 0), ("t.1", [4, 2], 1)]))
    put(h, "align-64-quant", gguf(kvs=[("general.alignment", 4, 64)], align=64, tensors=[
        ("q4_0", [32, 2], 2), ("q4_1", [32], 3), ("q8_0", [64], 8), ("q4_k", [256], 12),
        ("i8", [5], 24), ("i32", [3], 26), ("f64", [2], 28), ("bf16", [2, 2, 2, 2], 30)]))
    put(h, "zero-size-tensor", gguf(tensors=[("empty", [0, 4], 0), ("one", [1], 0)]))
    put(h, "kv-only", gguf(kvs=[("general.architecture", 8, "none")]))
    put(h, "utf8-names", gguf(tensors=[("blk.0.\u00e9t\u00e9", [2], 0), ("\u6f22\u5b57", [2], 1)]))
    put(h, "trailing-bytes", gguf(tensors=[("w", [4], 0)], tail=b"\xffTRAILER"))
    put(h, "truncated", gguf(tensors=[("w", [64], 0)])[:-100])


# --- safetensors ---------------------------------------------------------------------------
ST = {"F64": 8, "F32": 4, "F16": 2, "BF16": 2, "I64": 8, "I32": 4, "I16": 2, "I8": 1, "U8": 1,
      "U16": 2, "U32": 4, "U64": 8, "BOOL": 1, "F8_E4M3": 1, "F8_E5M2": 1}


def safetensors(tensors, metadata=None, pad=0, order=None):
    """tensors: (name, dtype, shape) laid out in order"""
    hdr, off = {}, 0
    for name, dt, shape in tensors:
        n = 1
        for d in shape:
            n *= d
        hdr[name] = {"dtype": dt, "shape": shape, "data_offsets": [off, off + n * ST[dt]]}
        off += n * ST[dt]
    if metadata is not None:
        hdr["__metadata__"] = metadata
    js = json.dumps(hdr, separators=(",", ":"), ensure_ascii=False).encode()
    js += b" " * ((-len(js) % 8) + pad)
    return struct.pack("<Q", len(js)) + js + bytes((i * 13) & 0xff for i in range(off))


def seeds_safetensors():
    h = "fuzz-safetensors"
    put(h, "one-f32", safetensors([("a", "F32", [2, 2])]))
    put(h, "every-dtype", safetensors([(dt.lower(), dt, [3]) for dt in ST],
                                      metadata={"format": "pt"}))
    put(h, "scalar-and-empty", safetensors([("s", "F16", []), ("e", "I64", [0, 3]),
                                            ("x", "U8", [1, 1, 1, 1, 1, 1, 1, 1])]))
    put(h, "utf8-names", safetensors([("mod\u00e8le.w", "BF16", [2]), ("\u6f22", "I8", [4])]))
    put(h, "empty", safetensors([]))
    put(h, "metadata-only", safetensors([], metadata={"k": "v", "n": "1"}))
    put(h, "padded-header", safetensors([("w", "F64", [2])], pad=64))
    put(h, "escaped-name", safetensors([('q"\\/\n', "U16", [2, 1])]))


# --- image layouts -------------------------------------------------------------------------
FOURCCS = 33  # entries of fuzz-image-layout.c's table


def image(fsel, w, h, salign=0, palign=0, sel=0, fourcc=None, mod=None):
    """sel bits as fuzz-image-layout.c reads them; the fields it reads in its order"""
    b = struct.pack("<HB", sel, fsel)
    if sel & 1:
        b += struct.pack("<I", fourcc)
    b += struct.pack("<II", w, h)
    if sel & 8:
        b += struct.pack("<Q", mod)
    b += struct.pack("<I", salign) if sel & 16 else struct.pack("<B", salign)
    b += struct.pack("<I", palign) if sel & 32 else struct.pack("<B", palign)
    return b


def seeds_image():
    h = "fuzz-image-layout"
    for i in range(FOURCCS):
        put(h, "fmt-%02d-1920x1080" % i, image(i, 1920, 1080))
    put(h, "nv12-aligned", image(0, 1918, 1078, salign=9, palign=13))
    put(h, "yuv420-odd-aligned", image(6, 642, 482, salign=7, palign=21))
    put(h, "rgb888-odd", image(18, 1, 1, salign=13))
    put(h, "nv12-odd-width", image(0, 1921, 1080))
    put(h, "raw-huge", image(0, 0xfffffffe, 0xfffffffe, sel=2 | 4))
    put(h, "raw-fourcc", image(0, 64, 64, sel=1, fourcc=0x20203852))
    put(h, "modifier", image(0, 64, 64, sel=8, mod=0x0100000000000001))
    put(h, "raw-aligns", image(0, 64, 64, salign=8192, palign=3, sel=16 | 32))
    put(h, "big-struct", image(0, 64, 64, sel=0x100 | 0x400))


# --- queue batches -------------------------------------------------------------------------
# fuzz-queue.c's input: a header (queue index, contents seed), then batches: a count byte
# (1 + b % 16 ranges), a shape byte (struct sizes), and 8 bytes per range (a: operation, file,
# buffer; b: length mode; c: flags; w; file offset u16; buffer offset u16).
QFILES, QBUFS = 6, 4   # index QFILES / QBUFS: NULL; the last of each: another context


def qa(write, fi, bi, raw_op=False):
    """the first byte of a range that decodes to this operation, file and buffer"""
    for a in range(256):
        if (a & 1) == int(write) and bool(a & 0x80) == raw_op and \
                (a >> 1) % (QFILES + 1) == fi and (a >> 4) % (QBUFS + 1) == bi:
            return a
    raise ValueError((write, fi, bi, raw_op))


def qrange(write, fi, bi, foff, boff, lenmode=1, w=0, blow=0, c=0, wild=None, raw_op=False):
    b = (lenmode << 6) | blow
    out = struct.pack("<BBBBHH", qa(write, fi, bi, raw_op), b, c, w, foff, boff)
    if wild is not None:
        out += struct.pack("<Q", wild)
    return out


def qbatch(ranges, shape=0):
    return struct.pack("<BB", len(ranges) - 1, shape) + b"".join(ranges)


def queue(q, seed, *batches):
    return struct.pack("<BB", q, seed) + b"".join(batches)


def seeds_queue():
    h = "fuzz-queue"
    R = qrange
    put(h, "read-whole", queue(3, 1, qbatch([R(0, 0, 0, 0, 0)])))
    put(h, "read-past-eof", queue(3, 2, qbatch([R(0, 0, 0, 39000, 100, lenmode=2, w=40)])))
    put(h, "write-then-read", queue(2, 3, qbatch([R(1, 0, 1, 1000, 5, lenmode=2, w=20, blow=3)]),
                                    qbatch([R(0, 0, 2, 900, 0, lenmode=1)])))
    put(h, "direct-file", queue(3, 4, qbatch([R(0, 1, 0, 4096, 4096, lenmode=2, w=128),
                                              R(1, 1, 0, 8192, 0, lenmode=2, w=64)])))
    put(h, "many-ranges-depth1", queue(0, 5, qbatch(
        [R(i & 1, (0, 1, 3)[i % 3] if i & 1 else i % 2, i % 3, 512 * i + 7, 300 * i % 2700, lenmode=2,
           w=3 + i, blow=i)
         for i in range(16)])))
    put(h, "overlapping", queue(1, 6, qbatch([R(0, 0, 2, 0, 0), R(0, 2, 2, 100, 0),
                                              R(1, 0, 2, 50, 1000, lenmode=2, w=10)])))
    put(h, "forced-paths", queue(3, 7, qbatch([R(0, 0, 0, 3, 5, lenmode=2, w=100, c=0x10 | p)
                                               for p in range(7)]),
                                 qbatch([R(1, 1, 1, 4096, 4096, lenmode=2, w=64, c=0x30 | p)
                                         for p in range(7)])))
    put(h, "refused-ebadf", queue(3, 8, qbatch([R(0, 0, 0, 0, 0), R(0, 3, 0, 0, 0)]),
                                  qbatch([R(1, 2, 0, 0, 0)]), qbatch([R(1, 4, 0, 0, 0)])))
    put(h, "refused-other-ctx", queue(3, 9, qbatch([R(0, 5, 0, 0, 0)]),
                                      qbatch([R(0, 0, 3, 0, 0)]), qbatch([R(0, 6, 4, 0, 0)])))
    put(h, "refused-sizes", queue(3, 10, qbatch([R(0, 0, 0, 0, 0)] * 3, shape=2),
                                  qbatch([R(0, 0, 0, 0, 0)] * 3, shape=3 | 8),
                                  qbatch([R(0, 0, 0, 0, 0)] * 2, shape=4),
                                  qbatch([R(0, 0, 0, 0, 0)] * 2, shape=1)))
    put(h, "refused-flags", queue(3, 11, qbatch([R(0, 0, 0, 0, 0, c=0x18)]),
                                  qbatch([R(0, 0, 0, 0, 0, c=0xc0)]),
                                  qbatch([R(0, 0, 0, 0, 0, c=0x80, w=1)]),
                                  qbatch([R(0, 0, 0, 0, 0, raw_op=True)])))
    put(h, "wild-offsets", queue(3, 12,
                                 qbatch([R(0, 0, 0, 0, 0, blow=0x3c, w=0, wild=(1 << 63) - 1)]),
                                 qbatch([R(0, 0, 0, 0, 0, lenmode=0, blow=0x3c, w=2,
                                           wild=(1 << 64) - 1)]),
                                 qbatch([R(0, 0, 0, 0, 0, lenmode=3, blow=0x3c, w=3 | 16)]),
                                 qbatch([R(1, 0, 0, 0, 0, lenmode=3, blow=0x3c, w=1,
                                           wild=(1 << 64) - 8)])))
    put(h, "zero-length", queue(2, 13, qbatch([R(0, 0, 0, 65000, 0, lenmode=3),
                                               R(1, 3, 1, 0, 20580, lenmode=3)])))


# --- the tools' command lines --------------------------------------------------------------
# fuzz-tool-options.c's input: a byte picking the tool (0 dmaio-cp, 1 dmaio-info, 2 dmaio-load,
# 3 dmaio-record), then the arguments separated by NUL bytes.
def cmdline(tool, *args):
    return bytes([tool]) + b"\0".join(a.encode() for a in args)


def seeds_tools():
    h = "fuzz-tool-options"
    put(h, "cp-plain", cmdline(0, "/tmp/a", "/tmp/b"))
    put(h, "cp-all", cmdline(0, "--heap", "system", "--path=udmabuf-direct", "--verify", "-v",
                             "--progress-interval", "250", "--no-progress", "src", "dst"))
    put(h, "cp-bad-interval", cmdline(0, "--progress-interval=-5", "a", "b"))
    put(h, "cp-version", cmdline(0, "--version"))
    put(h, "info-json", cmdline(1, "--json", "/dev/null", "file"))
    put(h, "info-help", cmdline(1, "-h"))
    put(h, "load-list", cmdline(2, "-l", "model.safetensors"))
    put(h, "load-all", cmdline(2, "--heap=memfd", "--mode", "tensor", "--max-buf", "0x100000",
                               "--align", "4096", "--depth", "64", "--path", "buffered",
                               "--drop-cache", "--cold", "--verify", "--quiet", "a.gguf", "b.gguf"))
    put(h, "load-whole", cmdline(2, "-m", "whole", "-a", "64", "x"))
    put(h, "load-generate", cmdline(2, "--generate", "/tmp/m", "--format", "gguf", "--shards",
                                    "3", "--tensors", "10", "--size-mib", "1"))
    put(h, "load-bad-mode", cmdline(2, "--mode", "sideways", "x"))
    put(h, "record-synthetic", cmdline(3, "--synthetic", "--format", "YUYV", "--size", "640x480",
                                       "--frames", "30", "--buffers", "4", "--fps", "29.97",
                                       "--depth", "8", "--baseline-write=direct", "--force",
                                       "--quiet", "out.raw"))
    put(h, "record-v4l2", cmdline(3, "--device", "/dev/video2", "--io", "dmabuf", "--heap",
                                  "system", "--contiguous", "--baseline-write", "out"))
    put(h, "record-bad-size", cmdline(3, "--size", "99999x1", "o"))


def main():
    if os.path.isdir(CORPUS) and "--keep" not in sys.argv:
        for h in ("fuzz-gguf", "fuzz-safetensors", "fuzz-image-layout", "fuzz-queue",
                  "fuzz-tool-options"):
            shutil.rmtree(os.path.join(CORPUS, h), ignore_errors=True)
    seeds_gguf()
    seeds_safetensors()
    seeds_image()
    seeds_queue()
    seeds_tools()


if __name__ == "__main__":
    main()
