#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""
The examples of README.md and of the manual pages, compiled and run as written.

  found     every ```c block of README.md and every .Bd -literal block of the EXAMPLES section
            of man/man3/*.3 and man/man7/*.7 (roff escapes undone as mandoc does: \\e is a
            backslash, \\(aq a quote, ...; when mandoc is installed the page's rendering is
            checked to hold the same text)
  compiled  cc -std=c11 -Wall -Wextra -Werror -I BUILDDIR/include -I SRCDIR/include, linked with
            -L BUILDDIR/lib -ldmaio -ldmaio-model -ldmaio-account -Wl,-rpath,BUILDDIR/lib. A block with main() is
            compiled as it is. A manual's example is a whole translation unit without main(): it
            comes first, as written, and a driver (HARNESS below) follows it with main() and the
            functions the example only declares. A README fragment (statements using names it
            does not define) is put, verbatim, into the body of a function after a prelude that
            declares exactly those names; statements after it may check what it did.
  ran       each program with a timeout of 10 s in a directory holding the files it opens
            (weights.bin, safetensors shards, a GGUF model, ...), once per run of its entry: the
            run must end as the entry expects: exit 0; or an error path of the example itself
            (a missing file, a bad queue range: every queue loop gets a run with a range past
            its buffer and must stop); or, for an example that needs a device this host lacks
            (a dma-buf provider, the system or a CMA heap, a V4L2 device), the -errno and the
            message the example's own error handling gives, accepted only when the device is
            indeed absent (the HOST table).

The drivers use the helpers of ex-support.c (written into the temporary directory), named ex_*.
Every example must match exactly one HARNESS entry (by a string only it contains) unless it is
a complete program; an example without an entry, or an entry matching none, is a failure.

Usage: check-examples.py BUILDDIR SRCDIR
Environment: CC (default cc), EXAMPLES_CFLAGS (e.g. -fsanitize=address,undefined for a
sanitized library), DMAIO_TEST_VM=1 (exit 77: the VM has no build tree).
Exit 0 all passed, 1 a failure, 77 skipped (no C compiler, no shared library, in the VM).
"""
import errno
import glob
import json
import os
import re
import shlex
import shutil
import struct
import subprocess
import sys
import tempfile

TIMEOUT = 10

if len(sys.argv) != 3:
    sys.exit("usage: check-examples.py BUILDDIR SRCDIR")
BUILD, SRC = (os.path.abspath(a) for a in sys.argv[1:3])

if os.environ.get("DMAIO_TEST_VM", "0") == "1":
    print("SKIP: a host-only test (the VM has no build tree and no compiler)")
    sys.exit(77)
CC = shlex.split(os.environ.get("CC") or "cc")
if not shutil.which(CC[0]):
    print(f"SKIP: no C compiler ({CC[0]})")
    sys.exit(77)
LIBDIR = os.path.join(BUILD, "lib")
if not (os.path.exists(os.path.join(LIBDIR, "libdmaio.so"))
        and os.path.exists(os.path.join(LIBDIR, "libdmaio-model.so"))):
    print(f"SKIP: no libdmaio.so and libdmaio-model.so in {LIBDIR} (a static build?)")
    sys.exit(77)

CFLAGS = ["-std=c11", "-Wall", "-Wextra", "-Werror",
          "-I", os.path.join(BUILD, "include"), "-I", os.path.join(SRC, "include")]
CFLAGS += shlex.split(os.environ.get("EXAMPLES_CFLAGS", ""))
LDFLAGS = ["-L", LIBDIR, "-ldmaio", "-ldmaio-model", "-ldmaio-account", "-Wl,-rpath," + LIBDIR]


# --- extraction ----------------------------------------------------------------------------

# roff escapes a literal block may use, as mandoc renders them
ROFF_CHARS = {"aq": "'", "dq": '"', "rs": "\\", "ga": "`", "ti": "~", "ha": "^", "em": "--",
              "en": "-", "mi": "-", "hy": "-", "pl": "+", "eq": "=", "lq": '"', "rq": '"',
              "oq": "'", "cq": "'", "at": "@", "sh": "#", "Do": "$", "ba": "|", "br": "|",
              "sl": "/", "lC": "{", "rC": "}", "la": "<", "ra": ">", "lB": "[", "rB": "]"}


def unroff(line, where):
    """One line of a literal block as mandoc prints it; None for a roff comment line."""
    if line.startswith(('.\\"', "'\\\"", '.\\#')):
        return None
    if line.startswith((".", "'")) and not line.startswith("..."):
        # a request or macro: mandoc would not print it as code
        raise ValueError(f"{where}: a roff control line inside a literal block: {line!r}")
    out, i = [], 0
    while i < len(line):
        c = line[i]
        if c != "\\":
            out.append(c)
            i += 1
            continue
        e = line[i + 1:i + 2]
        if e in ("e", "\\"):
            out.append("\\")
            i += 2
        elif e in ("&", "|", "^", ")", "c"):
            i += 2
        elif e in ("-", " ", "0", "~"):
            out.append({"-": "-", " ": " ", "0": " ", "~": " "}[e])
            i += 2
        elif e in ('"', "#"):
            break  # a comment to the end of the line
        elif e == "(":
            name = line[i + 2:i + 4]
            if name not in ROFF_CHARS:
                raise ValueError(f"{where}: roff character \\({name} not known here")
            out.append(ROFF_CHARS[name])
            i += 4
        elif e == "[":
            j = line.index("]", i)
            name = line[i + 2:j]
            if name not in ROFF_CHARS:
                raise ValueError(f"{where}: roff character \\[{name}] not known here")
            out.append(ROFF_CHARS[name])
            i = j + 1
        else:
            raise ValueError(f"{where}: roff escape \\{e} not handled: {line!r}")
    return "".join(out)


class Example:
    def __init__(self, source, line, text, page=None):
        self.source, self.line, self.text, self.page = source, line, text, page
        code = [l.strip() for l in text.splitlines() if l.strip() and not l.startswith("#")]
        self.first = code[0] if code else text.strip().splitlines()[0]
        if len(code) > 1 and "(" not in self.first and "(" in code[1]:
            self.first += " " + code[1]      # "int" and "f(...)" on lines of their own

    def name(self):
        return f"{self.source}:{self.line}"


def man_examples():
    pages = sorted(glob.glob(os.path.join(SRC, "man", "man3", "*.3"))
                   + glob.glob(os.path.join(SRC, "man", "man7", "*.7")))
    found = []
    for page in pages:
        if os.path.islink(page):
            continue  # another name of a page already read
        rel = os.path.relpath(page, SRC)
        lines = open(page, encoding="utf-8").read().split("\n")
        section, block, start = None, None, 0
        for n, line in enumerate(lines, 1):
            if line.startswith(".Sh "):
                section = line[4:].strip()
            elif section == "EXAMPLES" and line.startswith(".Bd ") and "-literal" in line:
                block, start = [], n + 1
            elif block is not None and line.startswith(".Ed"):
                text = "\n".join(block) + "\n"
                if "#include" in text or "main(" in text:
                    found.append(Example(rel, start, text, page))
                block = None
            elif block is not None:
                u = unroff(line, f"{rel}:{n}")
                block.append("" if u is None else u)  # keep the line numbers
    return found


def readme_examples():
    rel = "README.md"
    lines = open(os.path.join(SRC, rel), encoding="utf-8").read().split("\n")
    found, block, start = [], None, 0
    for n, line in enumerate(lines, 1):
        if block is None and line.strip() == "```c":
            block, start = [], n + 1
        elif block is not None and line.strip() == "```":
            found.append(Example(rel, start, "\n".join(block) + "\n"))
            block = None
        elif block is not None:
            block.append(line)
    return found


def mandoc_check(examples):
    """The text of each block appears in mandoc's rendering of its page (words in order)."""
    if not shutil.which("mandoc"):
        return {}
    bad, rendered = {}, {}
    for ex in examples:
        if ex.page is None:
            continue
        if ex.page not in rendered:
            p = subprocess.run(["mandoc", "-Tascii", "-Owidth=400", ex.page],
                               capture_output=True, text=True, timeout=60)
            rendered[ex.page] = " ".join(re.sub(r".\x08", "", p.stdout).split())
        if " ".join(ex.text.split()) not in rendered[ex.page]:
            bad[id(ex)] = "mandoc renders this block differently (an escape undone wrongly?)"
    return bad


# --- what this host lacks --------------------------------------------------------------------

def nodes(*pats):
    return [p for pat in pats for p in glob.glob(pat)]


DMABUF_NODES = ("/dev/dma_heap/*", "/dev/udmabuf", "/dev/dri/card*")
CMA_HEAPS = ["default_cma_region", "reserved", "linux,cma", "default-pool"] + \
    [os.path.basename(p) for p in glob.glob("/sys/kernel/mm/cma/*")]


def usable(path):
    return os.access(path, os.R_OK | os.W_OK)


def no_dmabuf():
    return not nodes(*DMABUF_NODES)


def dmabuf_closed():
    n = nodes(*DMABUF_NODES)
    return bool(n) and not any(usable(p) for p in n)


def no_heap(name):
    return lambda: not os.path.exists(f"/dev/dma_heap/{name}")


def heap_closed(name):
    p = f"/dev/dma_heap/{name}"
    return lambda: os.path.exists(p) and not usable(p)


def no_cma():
    return not any(os.path.exists(f"/dev/dma_heap/{h}") for h in CMA_HEAPS)


def no_video():
    return not nodes("/dev/video*")


def no_jansson():
    try:
        deps = json.load(open(os.path.join(BUILD, "meson-info", "intro-dependencies.json")))
        return not any(d.get("name") == "jansson" for d in deps)
    except (OSError, ValueError):
        return False


def strerr(e):
    return re.escape(os.strerror(e))


# --- expectations ------------------------------------------------------------------------
# A run ends with exit 0 (ok), 2 (the example returned -errno: the driver prints
# "returned -N (text)"), 1 (the example's own exit, e.g. README's die()) or 3 (the driver
# itself failed: never accepted).

def OK(out=None):
    return dict(status=0, ret=None, out=out, when=None, why="ok")


def ERR(err, out=None, why=""):
    """An error path of the example itself, on any host."""
    return dict(status=2, ret=-err, out=out, when=None,
                why=f"-{errno.errorcode[err]}, the example's error path ({why})")


def HOST(err, when, why, out=None):
    """Accepted only when `when()` holds: the device the example needs is absent here."""
    return dict(status=2, ret=-err, out=out, when=when,
                why=f"-{errno.errorcode[err]}: {why}, handled by the example")


def EXIT(status, out, why):
    return dict(status=status, ret=None, out=out, when=None, why=why)


def NO_DMABUF(out=None):
    return [HOST(errno.ENODEV, no_dmabuf, "no dma-buf provider on this host", out),
            HOST(errno.EACCES, dmabuf_closed, "dma-buf nodes not accessible here", out)]


def NO_SYSTEM_HEAP(out=None):
    return [HOST(errno.ENOENT, no_heap("system"), "no /dev/dma_heap/system here", out),
            HOST(errno.EACCES, heap_closed("system"), "/dev/dma_heap/system not accessible",
                 out)]


def NO_CMA(out=None):
    return [HOST(e, no_cma, "no CMA heap here", out) for e in (errno.ENODEV, errno.EOPNOTSUPP)]


def run(args=(), cwd="files", env=None, expect=()):
    return dict(args=list(args), cwd=cwd, env=env or {}, expect=list(expect))


# --- the helpers of the drivers ------------------------------------------------------------

SUPPORT_H = r"""
/* helpers of tests/check-examples.py's drivers: not part of any example */
#ifndef EX_SUPPORT_H
#define EX_SUPPORT_H
#include <stdint.h>
#include <dmaio.h>
extern const char *ex_mode;                               /* argv[1] of the run, or "" */
int ex_is(const char *mode);                              /* ex_mode is @mode */
_Noreturn void ex_fail(const char *fmt, ...);             /* the driver failed: exit 3 */
int ex_result(const char *what, int64_t r);               /* "WHAT: returned R": 0 or 2 */
struct dmaio_buf *ex_memfd_buf(uint64_t size);            /* provider "memfd" */
int ex_open_read(const char *path);
int ex_open_write(const char *path);                      /* created, truncated */
void ex_close(int fd);
uint64_t ex_file_size(const char *path);
void ex_fill(struct dmaio_buf *buf, unsigned seed);       /* a pattern over the whole buffer */
int ex_is_all(struct dmaio_buf *buf, unsigned char v);    /* every byte is @v */
int ex_same(int fd, uint64_t file_off, struct dmaio_buf *buf, uint64_t buf_off, uint64_t len);
int ex_wait_readable(int fd, int timeout_ms);             /* 1 readable, 0 timeout */
int ex_fd_valid(int fd);
int ex_v4l2_fd(void);   /* a capture device with one MMAP buffer, else /dev/null */
#endif
"""

SUPPORT_C = r"""
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <poll.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <linux/videodev2.h>
#include "ex-support.h"

const char *ex_mode = "";

int ex_is(const char *mode) { return strcmp(ex_mode, mode) == 0; }

void ex_fail(const char *fmt, ...)
{
	va_list ap;
	fputs("DRIVER FAILED: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	exit(3);
}

int ex_result(const char *what, int64_t r)
{
	fflush(stderr);
	if (r < 0 && r > -4096)
		printf("%s: returned %" PRId64 " (%s)\n", what, r, strerror((int)-r));
	else
		printf("%s: returned %" PRId64 "\n", what, r);
	return r < 0 ? 2 : 0;
}

struct dmaio_buf *ex_memfd_buf(uint64_t size)
{
	static const char *const memfd[] = { "memfd", NULL };
	struct dmaio_alloc_opts o = { .struct_size = sizeof o, .providers = memfd };
	struct dmaio_reason why = { .struct_size = sizeof why };
	struct dmaio_buf *buf;
	int r = dmaio_buf_alloc(NULL, size, &o, &buf, &why);
	if (r < 0)
		ex_fail("memfd buffer of %" PRIu64 " bytes: %s: %s", size, strerror(-r), why.text);
	return buf;
}

int ex_open_read(const char *path)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		ex_fail("open %s: %s", path, strerror(errno));
	return fd;
}

int ex_open_write(const char *path)
{
	int fd = open(path, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (fd < 0)
		ex_fail("create %s: %s", path, strerror(errno));
	return fd;
}

void ex_close(int fd)
{
	if (fd >= 0 && close(fd) < 0)
		ex_fail("close: %s", strerror(errno));
}

uint64_t ex_file_size(const char *path)
{
	struct stat sb;
	if (stat(path, &sb) < 0)
		ex_fail("stat %s: %s", path, strerror(errno));
	return (uint64_t)sb.st_size;
}

static unsigned char *map(struct dmaio_buf *buf, uint64_t *size)
{
	void *p;
	int64_t s = dmaio_buf_size(buf);
	int r = s < 0 ? (int)s : dmaio_buf_map(buf, &p);
	if (r < 0)
		ex_fail("map: %s", strerror(-r));
	*size = (uint64_t)s;
	return p;
}

void ex_fill(struct dmaio_buf *buf, unsigned seed)
{
	uint64_t size;
	unsigned char *p = map(buf, &size);
	dmaio_buf_sync_begin(buf, DMAIO_SYNC_WRITE);
	for (uint64_t i = 0; i < size; i++)
		p[i] = (unsigned char)(i * 131 + (i >> 9) + seed);
	dmaio_buf_sync_end(buf, DMAIO_SYNC_WRITE);
}

int ex_is_all(struct dmaio_buf *buf, unsigned char v)
{
	uint64_t size, i;
	unsigned char *p = map(buf, &size);
	dmaio_buf_sync_begin(buf, DMAIO_SYNC_READ);
	for (i = 0; i < size && p[i] == v; i++)
		;
	dmaio_buf_sync_end(buf, DMAIO_SYNC_READ);
	return i == size;
}

int ex_same(int fd, uint64_t file_off, struct dmaio_buf *buf, uint64_t buf_off, uint64_t len)
{
	uint64_t size;
	unsigned char *p = map(buf, &size), *f = malloc(len ? len : 1);
	int same;
	if (!f || buf_off + len > size)
		ex_fail("compare: %s", f ? "range past the buffer" : "out of memory");
	if (pread(fd, f, len, (off_t)file_off) != (ssize_t)len)
		ex_fail("compare: pread at %" PRIu64 ": short or %s", file_off, strerror(errno));
	dmaio_buf_sync_begin(buf, DMAIO_SYNC_READ);
	same = memcmp(f, p + buf_off, len) == 0;
	dmaio_buf_sync_end(buf, DMAIO_SYNC_READ);
	free(f);
	if (!same)
		fprintf(stderr, "differs: file [%" PRIu64 ", +%" PRIu64 ") and buffer at %" PRIu64
			"\n", file_off, len, buf_off);
	return same;
}

int ex_wait_readable(int fd, int timeout_ms)
{
	struct pollfd pfd = { .fd = fd, .events = POLLIN };
	int r = poll(&pfd, 1, timeout_ms);
	if (r < 0)
		ex_fail("poll: %s", strerror(errno));
	return r > 0;
}

int ex_fd_valid(int fd) { return fd >= 0 && fcntl(fd, F_GETFD) >= 0; }

int ex_v4l2_fd(void)
{
	for (int i = 0; i < 64; i++) {
		char path[32];
		struct v4l2_capability cap;
		struct v4l2_requestbuffers rb = { .count = 1, .type = V4L2_BUF_TYPE_VIDEO_CAPTURE,
						  .memory = V4L2_MEMORY_MMAP };
		int fd;
		snprintf(path, sizeof path, "/dev/video%d", i);
		fd = open(path, O_RDWR | O_CLOEXEC);
		if (fd < 0)
			continue;
		if (ioctl(fd, VIDIOC_QUERYCAP, &cap) == 0 &&
		    (cap.device_caps & V4L2_CAP_VIDEO_CAPTURE) &&
		    (cap.device_caps & V4L2_CAP_STREAMING) &&
		    ioctl(fd, VIDIOC_REQBUFS, &rb) == 0 && rb.count >= 1) {
			printf("V4L2 device %s, %u MMAP buffer(s)\n", path, rb.count);
			return fd;
		}
		close(fd);
	}
	printf("no V4L2 capture device: the example gets /dev/null\n");
	int fd = open("/dev/null", O_RDWR | O_CLOEXEC);
	if (fd < 0)
		ex_fail("/dev/null: %s", strerror(errno));
	return fd;
}
"""

# the start of every README fragment's file; the fragment goes into ex_fragment()'s body
FRAGMENT_HEAD = r"""#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <dmaio.h>          /* before the fragment: an #include <dmaio.h> in it is then empty */
#include <dmaio-model.h>
#include "ex-support.h"
"""

FRAGMENT_MAIN = r"""
int main(int argc, char **argv)
{
	ex_mode = argc > 1 ? argv[1] : "";
	ex_setup();
	return ex_result("fragment", ex_fragment());
}
"""

# GLib's g_log() and levels (same values), for the dmaio_ctx_set_log(3) example where
# glib-2.0 is not installed: the example's own code is what is checked
STUB_GLIB_H = r"""
#ifndef EX_STUB_GLIB_H
#define EX_STUB_GLIB_H
typedef char gchar;
typedef enum {
	G_LOG_LEVEL_ERROR = 1 << 2, G_LOG_LEVEL_CRITICAL = 1 << 3, G_LOG_LEVEL_WARNING = 1 << 4,
	G_LOG_LEVEL_MESSAGE = 1 << 5, G_LOG_LEVEL_INFO = 1 << 6, G_LOG_LEVEL_DEBUG = 1 << 7
} GLogLevelFlags;
void g_log(const gchar *log_domain, GLogLevelFlags log_level, const gchar *format, ...)
	__attribute__((format(printf, 3, 4)));
#endif
"""
STUB_GLIB_C = r"""
#include <stdarg.h>
#include <stdio.h>
#include "glib.h"
void g_log(const gchar *domain, GLogLevelFlags level, const gchar *format, ...)
{
	va_list ap;
	fprintf(stderr, "%s-%s: ", domain, level == G_LOG_LEVEL_WARNING ? "WARNING" :
		level == G_LOG_LEVEL_INFO ? "INFO" : level == G_LOG_LEVEL_DEBUG ? "DEBUG" : "OTHER");
	va_start(ap, format);
	vfprintf(stderr, format, ap);
	va_end(ap);
	fputc('\n', stderr);
}
"""

# --- the table: one entry per example ------------------------------------------------------
# key: a string only that example holds. kind "driver": a manual's translation unit, `driver`
# appended; "fragment": README statements, `decls` at file scope (the free names it uses),
# `setup` the body of ex_setup() run first, `post` statements after the fragment in the same
# function (they see its variables); "program": has main().

WEIGHTS_SIZE = 3 * 1024 * 1024 + 1234       # weights.bin: odd size, unaligned tail

def range_driver(fn):
    """main() for an example fn(fd, buf, len) about a range of weights.bin in a memfd buffer;
    with an argument, the range is one byte past the buffer (the example's error path)."""
    return r"""
int main(int argc, char **argv)
{
	int fd = ex_open_read("weights.bin");
	uint64_t size = ex_file_size("weights.bin");
	struct dmaio_buf *buf = ex_memfd_buf(size);
	int bad = argc > 1 && argv[1][0];   /* a range past the buffer */
	%s(fd, buf, bad ? (uint64_t)dmaio_buf_size(buf) + 1 : size);
	dmaio_buf_free(buf);
	ex_close(fd);
	return 0;
}
""" % fn


HARNESS = {
    # ---- README.md --------------------------------------------------------------------
    'int fd = open("weights.bin", O_RDONLY | O_CLOEXEC);': dict(
        kind="fragment",
        decls=r"""
static uint64_t size;                      /* of weights.bin */
static void hand_to_device(int dmabuf_fd)
{
	if (!ex_fd_valid(dmabuf_fd))
		ex_fail("hand_to_device: fd %d is not open", dmabuf_fd);
	printf("hand_to_device: dma-buf fd %d\n", dmabuf_fd);
}
""",
        setup='size = ex_is("nofile") ? 4096 : ex_file_size("weights.bin");',
        post="return 0;",
        runs=[run(expect=[OK(rf"{WEIGHTS_SIZE} bytes via \S+")] + NO_DMABUF()),
              run(args=["nofile"], cwd="empty",
                  expect=[ERR(errno.ENOENT, why="weights.bin missing: open fails")])]),

    "r = dmaio_queue_submit(q, io + sent, N - sent);": dict(
        kind="fragment",
        decls=r"""
#define N 200u                             /* ranges: more than the queue holds (32 x 4) */
static int fd;                             /* weights.bin */
static struct dmaio_buf *buf;              /* a memfd buffer of N * LEN bytes */
static struct { uint64_t src, dst, len; } t[N];
static void report(uint64_t user_data, int64_t res, uint64_t done)
{
	fprintf(stderr, "range %" PRIu64 ": %s after %" PRIu64 " bytes\n", user_data,
		strerror((int)-res), done);
}
""",
        setup=rf"""
	const uint64_t len = {WEIGHTS_SIZE} / N;   /* odd: ranges at unaligned offsets */
	fd = ex_open_read("weights.bin");
	buf = ex_memfd_buf(N * len);
	for (uint32_t k = 0; k < N; k++)           /* file order reversed in the buffer */
		t[k].src = k * len, t[k].dst = (N - 1 - k) * len, t[k].len = len;
	if (ex_is("bad"))                          /* one range past the buffer */
		t[N / 2].dst = N * len;
""",
        post=r"""
	for (uint32_t k = 0; err == 0 && k < N; k++)
		if (!ex_same(fd, t[k].src, buf, t[k].dst, t[k].len))
			ex_fail("range %u: wrong bytes", k);
	printf("%u ranges, err %d\n", N, err);
	dmaio_buf_free(buf);
	ex_close(fd);
	return err;
""",
        runs=[run(expect=[OK(r"200 ranges, err 0")]),
              run(args=["bad"], expect=[ERR(errno.EINVAL, why="a range past the buffer: the "
                                            "loop stops, nothing queued")])]),

    ".fourcc = DMAIO_FOURCC('N', 'V', '1', '2'),  /* DRM_FORMAT_NV12 */": dict(
        kind="fragment",
        decls="",
        setup="",
        post=r"""
	if (r < 0) {      /* the errnos the fragment's comment names; why.text says which */
		fprintf(stderr, "dmaio_buf_alloc_image: %s: %s\n", strerror(-r), why.text);
		return r;
	}
	if (lay.total_size != 3110400 || lay.strides[0] != 1920)
		printf("layout: total %" PRIu64 ", stride %u\n", lay.total_size, lay.strides[0]);
	dmaio_buf_free(buf);
	return 0;
""",
        runs=[run(expect=[OK()] + NO_CMA(out=r"dmaio_buf_alloc_image: .+: .+"))]),

    "if ((r = dmaio_file_open(NULL, out_fd, 0, &file)) < 0": dict(
        kind="fragment",
        decls=r"""
#define NBUFS 4u
static int out_fd;                         /* frames.raw */
static struct dmaio_file *file;
static struct dmaio_queue *q;
static int r;
static uint64_t nframes = 3, frame_size = 640 * 480 * 2;     /* YUYV VGA; frame 3 */
static struct dmaio_buf *bufs[NBUFS];
static uint32_t i = 2;                     /* the buffer VIDIOC_DQBUF gave */
static unsigned requeued[NBUFS];
static void die(const char *what, int err)
{
	fprintf(stderr, "%s: %s\n", what, strerror(-err));
	exit(1);
}
static void requeue(uint64_t index)
{
	if (index >= NBUFS)
		ex_fail("requeue(%" PRIu64 "): no such buffer", index);
	requeued[index]++;
}
static void report(uint64_t user_data, int64_t res, uint64_t done)
{
	fprintf(stderr, "frame in buffer %" PRIu64 ": %s after %" PRIu64 " bytes\n",
		user_data, strerror((int)-res), done);
}
""",
        setup=r"""
	out_fd = ex_open_write("frames.raw");
	for (uint32_t k = 0; k < NBUFS; k++) {
		bufs[k] = ex_memfd_buf(frame_size);
		ex_fill(bufs[k], k);
	}
	if (ex_is("bad"))                          /* a frame size past the buffers */
		frame_size += 4096;
""",
        post=r"""
	/* the event loop goes on: reap until nothing is in flight */
	for (;;) {
		n = dmaio_queue_reap(q, done, 32, 1, 5000);
		if (n == -ENODATA)
			break;
		if (n < 0)
			die("reap", n);
		for (int j = 0; j < n; j++) {
			if (done[j].res < 0) report(done[j].user_data, done[j].res, done[j].done);
			requeue(done[j].user_data);
		}
	}
	dmaio_queue_free(q);
	dmaio_file_close(file);
	if (requeued[i] != 1)
		ex_fail("buffer %u given back %u times", i, requeued[i]);
	if (!ex_same(out_fd, (nframes - 1) * frame_size, bufs[i], 0, frame_size))
		ex_fail("frame %" PRIu64 " not in the file", nframes - 1);
	printf("frame %" PRIu64 " written from buffer %u\n", nframes - 1, i);
	for (uint32_t k = 0; k < NBUFS; k++)
		dmaio_buf_free(bufs[k]);
	ex_close(out_fd);
	return 0;
""",
        runs=[run(expect=[OK(r"frame 3 written from buffer 2")]),
              run(args=["bad"], expect=[EXIT(1, rf"^submit: {strerr(errno.EINVAL)}$",
                                             "die(\"submit\", -EINVAL): a bad range stops")])]),

    'int fds[2] = { open("model-00001-of-00002.safetensors", O_RDONLY | O_CLOEXEC),': dict(
        kind="fragment",
        decls=r"""
static int fail(const char *what, int err, const char *text)
{
	fprintf(stderr, "%s: %s: %s\n", what, strerror(-err), text);
	return err;
}
static void use(struct dmaio_buf *buf, uint64_t offset, uint64_t nbytes)
{
	printf("lm_head.weight: %" PRIu64 " bytes at %" PRIu64 " of dma-buf fd %d\n", nbytes,
	       offset, dmaio_buf_fd(buf));
}
""",
        setup="",
        post=r"""
	dmaio_load_free(l);
	dmaio_model_close(m);
	ex_close(fds[0]);
	ex_close(fds[1]);
	return 0;
""",
        runs=[run(cwd="st", expect=[OK(r"lm_head\.weight: 32768 bytes at \d+ of dma-buf")]
                  + NO_SYSTEM_HEAP(out=rf"^load: {strerr(errno.ENOENT)}: .+")
                  + [HOST(errno.EOPNOTSUPP, no_jansson, "built without jansson",
                          out=r"^open: .+: .+")]),
              run(cwd="st-one-shard",
                  expect=[ERR(errno.EBADF, out=rf"^open: {strerr(errno.EBADF)}: .+",
                              why="the second shard missing: its fd is -1")])]),

    # ---- man/man3, man/man7 -----------------------------------------------------------
    "alloc_frame(struct dmaio_buf **buf)": dict(
        kind="driver", driver=r"""
int main(void)
{
	struct dmaio_buf *buf = NULL;
	int r = alloc_frame(&buf);
	if (r == 0) {
		if (dmaio_buf_size(buf) < 8 << 20)
			ex_fail("a buffer of %lld bytes", (long long)dmaio_buf_size(buf));
		dmaio_buf_free(buf);
	}
	return ex_result("alloc_frame", r);
}
""", runs=[run(expect=[OK()] + NO_SYSTEM_HEAP(
            out=rf"^dmaio_buf_alloc: {strerr(errno.ENOENT)}: .+"))]),

    "print_stats(const struct dmaio_buf *buf)": dict(
        kind="driver", driver=r"""
int main(void)
{
	int fd = ex_open_read("weights.bin");
	uint64_t size = ex_file_size("weights.bin");
	struct dmaio_buf *buf = ex_memfd_buf(size);
	struct dmaio_xfer x = { .struct_size = sizeof x };
	if (dmaio_fd_read(fd, 0, buf, 0, size, 0, &x) != (int64_t)size)
		ex_fail("the read before print_stats()");
	print_stats(buf);
	dmaio_buf_free(buf);
	ex_close(fd);
	return 0;
}
""", runs=[run(expect=[OK(rf"^{WEIGHTS_SIZE} bytes read in 1 ranges, last via [a-z-]+$")])]),

    "can_map(struct dmaio_buf *buf)": dict(
        kind="driver", driver=r"""
int main(void)
{
	struct dmaio_buf *buf = ex_memfd_buf(12345);
	int r = can_map(buf);
	dmaio_buf_free(buf);
	if (r != 1)
		ex_fail("can_map() of a memfd buffer gave %d, not 1", r);
	return 0;
}
""", runs=[run(expect=[OK(r'^memfd buffer, exporter "", inode [0-9]+: CPU mapping yes$')])]),

    "wrap_v4l2_buffer(int vfd, unsigned int index, struct dmaio_buf **buf)": dict(
        kind="driver", driver=r"""
int main(void)
{
	struct dmaio_buf *buf = NULL;
	int vfd = ex_v4l2_fd();
	int r = wrap_v4l2_buffer(vfd, 0, &buf);
	if (r == 0)
		dmaio_buf_free(buf);
	ex_close(vfd);
	return ex_result("wrap_v4l2_buffer", r);
}
""", runs=[run(expect=[OK(r"V4L2 device")] + [HOST(
            errno.ENOTTY, no_video, "no V4L2 device here: VIDIOC_EXPBUF on /dev/null",
            out=r"no V4L2 capture device")])]),

    "clear_buffer(struct dmaio_buf *buf)": dict(
        kind="driver", driver=r"""
int main(void)
{
	struct dmaio_buf *buf = ex_memfd_buf((1 << 20) + 123);
	int r;
	ex_fill(buf, 7);
	r = clear_buffer(buf);
	if (r == 0 && !ex_is_all(buf, 0))
		ex_fail("clear_buffer() left non-zero bytes");
	dmaio_buf_free(buf);
	return ex_result("clear_buffer", r);
}
""", runs=[run(expect=[OK(r"clear_buffer: returned 0")])]),

    "list_heaps(struct dmaio_ctx *ctx)": dict(
        kind="driver", driver=r"""
int main(void)
{
	struct dmaio_ctx *ctx;
	int r = dmaio_ctx_new(0, &ctx);
	if (r < 0)
		ex_fail("dmaio_ctx_new: %d", r);
	r = list_heaps(ctx);
	dmaio_ctx_free(ctx);
	if (r >= 0)
		r = list_heaps(NULL);      /* the default context */
	return ex_result("list_heaps", r);
}
""", runs=[run(expect=[OK(r"list_heaps: returned \d+")])]),

    "make_context(void)": dict(
        kind="driver", driver=r"""
int main(void)
{
	struct dmaio_ctx *ctx = make_context();
	if (!ctx)
		return 2;
	dmaio_ctx_free(ctx);
	return ex_result("make_context", 0);
}
""", runs=[run(expect=[OK()])]),

    "log_to_glib(struct dmaio_ctx *ctx)": dict(
        kind="driver", glib=True, driver=r"""
int main(void)
{
	/* a read forced onto rw-file, which no memfd buffer takes: an INFO message */
	struct dmaio_xfer x = { .struct_size = sizeof x };
	struct dmaio_ctx *ctx;
	struct dmaio_buf *buf;
	int fd = ex_open_read("weights.bin"), r = dmaio_ctx_new(0, &ctx);
	if (r < 0)
		ex_fail("dmaio_ctx_new: %d", r);
	r = log_to_glib(ctx);
	if (r == 0) {
		static const char *const memfd[] = { "memfd", NULL };
		struct dmaio_alloc_opts o = { .struct_size = sizeof o, .providers = memfd };
		if (dmaio_buf_alloc(ctx, 65536, &o, &buf, NULL) < 0)
			ex_fail("a memfd buffer");
		if (dmaio_fd_read(fd, 0, buf, 0, 65536, DMAIO_RW_PATH(DMAIO_PATH_RW_FILE), &x) < 0)
			ex_fail("the read");
		dmaio_buf_free(buf);
	}
	dmaio_ctx_free(ctx);
	ex_close(fd);
	return ex_result("log_to_glib", r);
}
""", runs=[run(env={"G_MESSAGES_DEBUG": "dmaio"},
               expect=[OK(r"dmaio-INFO.*forced path rw-file cannot serve")])]),

    "explain(int fd, struct dmaio_buf *buf, uint64_t len)": dict(
        kind="driver", driver=range_driver("explain"),
        runs=[run(expect=[OK(r"^[a-z-]+: .+")]),
              run(args=["bad"], expect=[OK(rf"^no path: {strerr(errno.EINVAL)} \(.*\)$")])]),

    "show(int fd, struct dmaio_buf *buf, uint64_t len)": dict(
        kind="driver", driver=range_driver("show"),
        runs=[run(expect=[OK(r"^\* [a-z-]+: [0-9.]+ us$")]),
              run(args=["bad"], expect=[OK(rf"^no estimates: {strerr(errno.EINVAL)}$")])]),

    "print_direct(int fd)": dict(
        kind="driver", driver=r"""
int main(void)
{
	int fd = ex_open_read("weights.bin");
	int r = print_direct(fd);
	ex_close(fd);
	return ex_result("print_direct", r);
}
""", runs=[run(expect=[OK(r"^(O_DIRECT: memory \d+, offset \d+|no O_DIRECT: .+)$")])]),

    "load_file(const char *path, struct dmaio_buf **buf)": dict(
        kind="driver", driver=r"""
int main(int argc, char **argv)
{
	struct dmaio_buf *buf = NULL;
	int r;
	if (argc != 2)
		ex_fail("usage: FILE");
	r = load_file(argv[1], &buf);
	if (r == 0) {
		int fd = ex_open_read(argv[1]);
		if (!ex_same(fd, 0, buf, 0, ex_file_size(argv[1])))
			ex_fail("load_file: wrong bytes");
		ex_close(fd);
		dmaio_buf_free(buf);
	}
	return ex_result("load_file", r);
}
""", runs=[run(args=["weights.bin"], expect=[OK(rf"^{WEIGHTS_SIZE} bytes via [a-z-]+$")]
               + NO_DMABUF()),
           run(args=["missing.bin"], expect=[ERR(errno.ENOENT, why="no such file")]),
           run(args=["empty.bin"], expect=[ERR(errno.EINVAL, why="an empty file: size 0")])]),

    "alloc_nv12(struct dmaio_buf **buf, struct dmaio_image_layout *lay)": dict(
        kind="driver", driver=r"""
int main(void)
{
	/* the numbers of the example's comment, from the layout alone */
	struct dmaio_image_desc d = { .struct_size = sizeof d, .width = 1920, .height = 1080,
		.fourcc = DMAIO_FOURCC('N', 'V', '1', '2'), .modifier = DMAIO_MOD_LINEAR };
	struct dmaio_image_layout want = { .struct_size = sizeof want }, lay;
	struct dmaio_buf *buf = NULL;
	int r = dmaio_image_get_layout(&d, &want, NULL);
	if (r < 0 || want.offsets[0] != 0 || want.strides[0] != 1920 ||
	    want.offsets[1] != 2073600 || want.strides[1] != 1920 || want.total_size != 3110400)
		ex_fail("the layout is not the one the example's comment gives");
	r = alloc_nv12(&buf, &lay);
	if (r == 0) {
		if (lay.offsets[1] != 2073600 || lay.total_size < 3110400)
			ex_fail("a buffer with another layout");
		dmaio_buf_free(buf);
	}
	return ex_result("alloc_nv12", r);
}
""", runs=[run(expect=[OK()] + NO_CMA(out=r"^NV12 1920x1080: .+: .+"))]),

    "export_load(const struct dmaio_load *l)": dict(
        kind="driver", driver=r"""
#include <errno.h>
#include <stdio.h>
#include "ex-support.h"

static unsigned imported;

int import_into_device(int dmabuf_fd, int64_t size)
{
	if (!ex_fd_valid(dmabuf_fd) || size <= 0)
		return -EBADF;
	imported++;
	return 0;
}

int main(void)
{
	static const char *const memfd[] = { "memfd", NULL };
	struct dmaio_alloc_opts a = { .struct_size = sizeof a, .providers = memfd };
	struct dmaio_load_opts o = { .struct_size = sizeof o, .mode = DMAIO_LOAD_PER_TENSOR,
				     .alloc = &a };
	struct dmaio_model *m;
	struct dmaio_load *l;
	int fd = ex_open_read("model.gguf");
	int r = dmaio_model_open(NULL, &fd, 1, 0, &m, NULL);
	if (r < 0 || (r = dmaio_model_load(m, &o, &l, NULL)) < 0)
		ex_fail("open and load model.gguf: %d", r);
	r = export_load(l);
	printf("%u buffers handed over of %d\n", imported, dmaio_load_buf_count(l));
	dmaio_load_free(l);
	dmaio_model_close(m);
	ex_close(fd);
	return ex_result("export_load", r);
}
""", runs=[run(expect=[OK(r"^2 buffers handed over of 2$")])]),

    "load_packed(struct dmaio_model *m, struct dmaio_load **l)": dict(
        kind="driver", driver=r"""
int main(void)
{
	struct dmaio_model *m;
	struct dmaio_load *l = NULL;
	int fd = ex_open_read("model.gguf");
	int r = dmaio_model_open(NULL, &fd, 1, 0, &m, NULL);
	if (r < 0)
		ex_fail("open model.gguf: %d", r);
	r = load_packed(m, &l);
	dmaio_load_free(l);
	dmaio_model_close(m);
	ex_close(fd);
	return ex_result("load_packed", r);
}
""", runs=[run(expect=[OK(r"^token_embd\.weight: buffer 0, offset \d+$")]
               + NO_SYSTEM_HEAP(out=rf"^load: {strerr(errno.ENOENT)}: .+"))]),

    "open_model(const char *path, struct dmaio_model **m)": dict(
        kind="driver", driver=r"""
int main(int argc, char **argv)
{
	struct dmaio_model *m;
	int r;
	if (argc != 2)
		ex_fail("usage: FILE");
	r = open_model(argv[1], &m);
	if (r == 0) {
		if (dmaio_model_tensor_count(m) != 2)
			ex_fail("%d tensors", dmaio_model_tensor_count(m));
		dmaio_model_close(m);
	}
	return ex_result("open_model", r);
}
""", runs=[run(args=["model.gguf"], expect=[OK(r"open_model: returned 0")]),
           run(args=["truncated.gguf"],
               expect=[ERR(errno.ERANGE, why="a tensor past the end of the file",
                           out=rf"^truncated\.gguf: {strerr(errno.ERANGE)}: .+past the end")]),
           run(args=["missing.gguf"], expect=[ERR(errno.ENOENT, why="no such file")])]),

    "save(struct dmaio_file *f, struct dmaio_buf *frame, uint64_t size, int n)": dict(
        kind="driver", driver=r"""
#define FRAME (640u * 480u * 2u)

int main(int argc, char **argv)
{
	struct dmaio_buf *buf = ex_memfd_buf(FRAME);
	struct dmaio_file *f;
	int fd, r;

	ex_mode = argc > 1 ? argv[1] : "";
	fd = ex_is("ro") ? ex_open_read("weights.bin") : ex_open_write("frames.raw");
	if ((r = dmaio_file_open(NULL, fd, 0, &f)) < 0)
		ex_fail("dmaio_file_open: %d", r);
	ex_fill(buf, 7);
	r = save(f, buf, FRAME, 4);
	dmaio_file_close(f);
	for (uint64_t k = 0; r == 0 && k < 4; k++)
		if (!ex_same(fd, k * FRAME, buf, 0, FRAME))
			ex_fail("frame %u: wrong bytes in the file", (unsigned)k);
	dmaio_buf_free(buf);
	ex_close(fd);
	return ex_result("save", r);
}
""", runs=[run(expect=[OK(r"save: returned 0")]),
           run(args=["ro"], expect=[ERR(errno.EBADF, why="a file not open for writing")])]),

    "list_tensors(const struct dmaio_model *m)": dict(
        kind="driver", driver=r"""
int main(void)
{
	struct dmaio_model *m;
	int fd = ex_open_read("model.gguf");
	int r = dmaio_model_open(NULL, &fd, 1, 0, &m, NULL);
	if (r < 0)
		ex_fail("open model.gguf: %d", r);
	r = list_tensors(m);
	dmaio_model_close(m);
	ex_close(fd);
	return ex_result("list_tensors", r);
}
""", runs=[run(expect=[OK(r"(?s)^token_embd\.weight F32 8192 bytes at \d+ of shard 0$.*"
                          r"^output\.weight F16 8192 bytes at \d+ of shard 0$")])]),

    "read_ranges(const struct dmaio_io *io, uint32_t n)": dict(
        kind="driver", driver=r"""
#define N 200u     /* more ranges than the queue holds (32 x 4): -EAGAIN on the way */

int main(int argc, char **argv)
{
	static struct dmaio_io io[N];
	uint64_t size = ex_file_size("weights.bin"), len = size / N;
	int fd = ex_open_read("weights.bin");
	struct dmaio_buf *buf = ex_memfd_buf(N * len);
	struct dmaio_file *f;
	int r = dmaio_file_open(NULL, fd, 0, &f);
	if (r < 0)
		ex_fail("dmaio_file_open: %d", r);
	for (uint32_t k = 0; k < N; k++)
		io[k] = (struct dmaio_io){ .struct_size = sizeof io[0], .op = DMAIO_OP_READ,
			.file = f, .file_off = k * len, .buf = buf, .buf_off = (N - 1 - k) * len,
			.len = len, .user_data = k };
	if (argc > 1 && argv[1][0])      /* "bad": a range past the buffer */
		io[N - 3].buf_off = N * len;
	r = read_ranges(io, N);
	for (uint32_t k = 0; r == 0 && k < N; k++)
		if (!ex_same(fd, k * len, buf, (N - 1 - k) * len, len))
			ex_fail("range %u: wrong bytes", k);
	dmaio_file_close(f);
	dmaio_buf_free(buf);
	ex_close(fd);
	return ex_result("read_ranges", r);
}
""", runs=[run(expect=[OK(r"read_ranges: returned 0")]),
           run(args=["bad"], expect=[ERR(errno.EINVAL, why="a range past the buffer: the "
                                         "loop stops, nothing queued")])]),

    "on_queue_readable(struct dmaio_queue *q)": dict(
        kind="driver", driver=r"""
#include <stdio.h>
#include "ex-support.h"

#define FRAMES 8u
#define FRAME (640u * 480u * 2u)

static unsigned written, failed;

void frame_written(uint64_t user_data, int64_t res)
{
	if (user_data >= FRAMES || res != FRAME)
		failed++;
	written++;
}

int main(void)
{
	struct dmaio_buf *bufs[FRAMES];
	struct dmaio_file *f;
	struct dmaio_queue *q;
	int fd = ex_open_write("frames.raw"), r;
	if ((r = dmaio_file_open(NULL, fd, 0, &f)) < 0 || (r = dmaio_queue_new(NULL, 4, 0, &q)) < 0)
		ex_fail("setup: %d", r);
	for (uint32_t k = 0; k < FRAMES; k++) {
		struct dmaio_io io = { .struct_size = sizeof io, .op = DMAIO_OP_WRITE, .file = f,
			.file_off = (uint64_t)k * FRAME, .buf = bufs[k] = ex_memfd_buf(FRAME),
			.len = FRAME, .user_data = k };
		ex_fill(bufs[k], k);
		if ((r = dmaio_queue_submit(q, &io, 1)) != 1)
			ex_fail("submit: %d", r);
	}
	r = 0;
	while (r == 0 && written < FRAMES) {
		if (!ex_wait_readable(dmaio_queue_fd(q), 5000))
			ex_fail("the queue's fd never became readable (%u written)", written);
		r = on_queue_readable(q);
	}
	dmaio_queue_free(q);
	dmaio_file_close(f);
	for (uint32_t k = 0; k < FRAMES; k++) {
		if (r == 0 && !ex_same(fd, (uint64_t)k * FRAME, bufs[k], 0, FRAME))
			ex_fail("frame %u: wrong bytes in the file", k);
		dmaio_buf_free(bufs[k]);
	}
	ex_close(fd);
	printf("%u frames written, %u failed\n", written, failed);
	return ex_result("on_queue_readable", failed ? -5 : r);
}
""", runs=[run(expect=[OK(r"^8 frames written, 0 failed$")])]),

    "check_version(void)": dict(
        kind="driver", driver=r"""
int main(void)
{
	return check_version() == 0 ? 0 : 2;
}
""", runs=[run(expect=[OK(r"^libdmaio (\d+)\.(\d+)\.(\d+) \(built against \1\.\2\.\3\)$")])]),

    "load_weights(uint64_t size)": dict(
        kind="driver", driver=r"""
#include "ex-support.h"

void hand_to_device(int dmabuf_fd)
{
	if (!ex_fd_valid(dmabuf_fd))
		ex_fail("hand_to_device: fd %d is not open", dmabuf_fd);
}

int main(void)
{
	return ex_result("load_weights", load_weights(ex_file_size("weights.bin")));
}
""", runs=[run(expect=[OK(rf"^{WEIGHTS_SIZE} bytes via [a-z-]+$")]
               + NO_DMABUF(out=rf"^alloc: {strerr(errno.ENODEV)}: .+"))]),
}

# the drivers of the manual pages start with these (the example above them included what it
# needs; these are the driver's own)
DRIVER_HEAD = '#include <stdio.h>\n#include "ex-support.h"\n'


# --- fixtures ----------------------------------------------------------------------------

def pattern(n, seed):
    return bytes(((i * 131 + (i >> 9) + seed) & 0xFF) for i in range(n))


def safetensors(tensors, seed):
    """tensors: [(name, dtype, shape, nbytes)] back to back."""
    header, off = {"__metadata__": {"format": "pt"}}, 0
    for name, dtype, shape, nbytes in tensors:
        header[name] = {"dtype": dtype, "shape": shape, "data_offsets": [off, off + nbytes]}
        off += nbytes
    h = json.dumps(header).encode()
    h += b" " * (-len(h) % 8)
    return struct.pack("<Q", len(h)) + h + pattern(off, seed)


def gguf(tensors, truncate=0):
    """tensors: [(name, ggml type, dims, nbytes)], alignment 32."""
    def s(x):
        return struct.pack("<Q", len(x)) + x.encode()
    b = b"GGUF" + struct.pack("<IQQ", 3, len(tensors), 1)
    b += s("general.architecture") + struct.pack("<I", 8) + s("llama")
    off = 0
    for name, typ, dims, nbytes in tensors:
        b += s(name) + struct.pack("<I", len(dims)) + b"".join(struct.pack("<Q", d) for d in dims)
        b += struct.pack("<IQ", typ, off)
        off += (nbytes + 31) // 32 * 32
    b += b"\0" * (-len(b) % 32)
    data = pattern(off, 5)
    return b + data[:len(data) - truncate]


def make_fixtures(tmp):
    files = os.path.join(tmp, "files")
    st, st1, empty = (os.path.join(tmp, d) for d in ("st", "st-one-shard", "empty"))
    for d in (files, st, st1, empty):
        os.makedirs(d)
    with open(os.path.join(files, "weights.bin"), "wb") as f:
        f.write(pattern(WEIGHTS_SIZE, 1))
    open(os.path.join(files, "empty.bin"), "wb").close()
    model = [("token_embd.weight", 0, [64, 32], 8192), ("output.weight", 1, [64, 64], 8192)]
    with open(os.path.join(files, "model.gguf"), "wb") as f:
        f.write(gguf(model))
    with open(os.path.join(files, "truncated.gguf"), "wb") as f:
        f.write(gguf(model, truncate=100))
    shard1 = safetensors([("model.embed_tokens.weight", "F32", [64, 64], 16384)], 2)
    shard2 = safetensors([("lm_head.weight", "F16", [128, 128], 32768)], 3)
    for d, shards in ((st, (shard1, shard2)), (st1, (shard1,))):
        for k, data in enumerate(shards, 1):
            with open(os.path.join(d, f"model-0000{k}-of-00002.safetensors"), "wb") as f:
                f.write(data)


# --- compile and run ---------------------------------------------------------------------

def compile_cmd(src, exe, extra_c=(), extra_obj=(), extra_ld=()):
    return CC + CFLAGS + list(extra_c) + [src] + list(extra_obj) + ["-o", exe] + LDFLAGS + \
        list(extra_ld)


def source_of(ex, h, n):
    """The translation unit of example n: the example's text verbatim with #line markers."""
    mark = f'#line {ex.line} "{ex.source}"\n'
    if h["kind"] == "program":
        return mark + ex.text
    if h["kind"] == "driver":
        return mark + ex.text + f'#line 1 "driver of {ex.source}"\n' + DRIVER_HEAD + h["driver"]
    return (FRAGMENT_HEAD + f'#line 1 "prelude of {ex.source}:{ex.line}"\n' + h["decls"] +
            "\nstatic void ex_setup(void)\n{\n" + h["setup"] + "\n}\n" +
            "\nstatic int ex_fragment(void)\n{\n" + mark + ex.text +
            f'#line 1 "after {ex.source}:{ex.line}"\n' + h["post"] + "\n}\n" + FRAGMENT_MAIN)


def match_run(p, spec):
    """None when the run p matches the expectation, else why not."""
    out = p.stdout + p.stderr
    if p.returncode != spec["status"]:
        return f"exit {p.returncode}, expected {spec['status']}"
    if spec["ret"] is not None:
        m = re.findall(r": returned (-?\d+)", p.stdout)
        if not m or int(m[-1]) != spec["ret"]:
            return f"returned {m[-1] if m else '?'}, expected {spec['ret']}"
    if spec["out"] and not re.search(spec["out"], out, re.M):
        return f"output does not match /{spec['out']}/"
    if spec["when"] and not spec["when"]():
        return "the device it lacks is here"
    return None


def main():
    examples = readme_examples() + man_examples()
    failures = 0
    tmp = tempfile.mkdtemp(prefix="dmaio-examples-",
                           dir=os.environ.get("TMPDIR") or "/var/tmp")
    try:
        make_fixtures(tmp)
        with open(os.path.join(tmp, "ex-support.h"), "w") as f:
            f.write(SUPPORT_H)
        with open(os.path.join(tmp, "ex-support.c"), "w") as f:
            f.write(SUPPORT_C)
        support_o = os.path.join(tmp, "ex-support.o")
        p = subprocess.run(CC + CFLAGS + ["-c", os.path.join(tmp, "ex-support.c"),
                                          "-o", support_o], capture_output=True, text=True)
        if p.returncode:
            print("FAIL the drivers' helpers (ex-support.c) do not compile:\n" + p.stderr)
            return 1

        glib_c, glib_ld, glib_note = [], [], "glib-2.0"
        pc = subprocess.run(["pkg-config", "--cflags", "--libs", "glib-2.0"],
                            capture_output=True, text=True) if shutil.which("pkg-config") else None
        if pc and pc.returncode == 0:
            cf = subprocess.run(["pkg-config", "--cflags", "glib-2.0"], capture_output=True,
                                text=True).stdout
            lf = subprocess.run(["pkg-config", "--libs", "glib-2.0"], capture_output=True,
                                text=True).stdout
            glib_c, glib_ld = shlex.split(cf), shlex.split(lf)
        else:
            stub = os.path.join(tmp, "stub-glib")
            os.makedirs(stub)
            with open(os.path.join(stub, "glib.h"), "w") as f:
                f.write(STUB_GLIB_H)
            with open(os.path.join(stub, "glib.c"), "w") as f:
                f.write(STUB_GLIB_C)
            q = subprocess.run(CC + CFLAGS + ["-I", stub, "-c", os.path.join(stub, "glib.c"),
                                              "-o", os.path.join(stub, "glib.o")],
                               capture_output=True, text=True)
            if q.returncode:
                print("FAIL the stand-in glib.h does not compile:\n" + q.stderr)
                return 1
            glib_c, glib_ld = ["-I", stub], [os.path.join(stub, "glib.o")]
            glib_note = "a stand-in glib.h (g_log to stderr): glib-2.0 is not installed"

        bad_text = mandoc_check(examples)
        used = set()
        print(f"{len(examples)} examples: "
              f"{sum(e.page is None for e in examples)} in README.md, "
              f"{sum(e.page is not None for e in examples)} in the manual pages")
        for n, ex in enumerate(examples, 1):
            label = f"{ex.name()} \"{ex.first[:60]}\""
            keys = [k for k in HARNESS if k in ex.text]
            has_main = re.search(r"\bmain\s*\(", ex.text) is not None
            if len(keys) > 1:
                print(f"FAIL {label}: matches several HARNESS entries: {keys}")
                failures += 1
                continue
            if not keys and not has_main:
                print(f"FAIL {label}: no HARNESS entry (a driver or a prelude and its runs)")
                failures += 1
                continue
            h = HARNESS[keys[0]] if keys else dict(kind="program", runs=[run(expect=[OK()])])
            if keys:
                used.add(keys[0])
            if id(ex) in bad_text:
                print(f"FAIL {label}: {bad_text[id(ex)]}")
                failures += 1
                continue
            src = os.path.join(tmp, f"ex{n:02d}.c")
            exe = os.path.join(tmp, f"ex{n:02d}")
            with open(src, "w") as f:
                f.write(source_of(ex, h, n))
            extra_c = ["-I", tmp]
            extra_obj = [] if h["kind"] == "program" else [support_o]
            extra_ld, note = [], ""
            if h.get("glib"):
                extra_c += glib_c
                extra_ld += glib_ld
                note = f" (with {glib_note})"
            p = subprocess.run(compile_cmd(src, exe, extra_c, extra_obj, extra_ld),
                               capture_output=True, text=True)
            if p.returncode:
                print(f"FAIL {label}: does not compile{note}:\n{p.stderr.rstrip()}")
                failures += 1
                continue
            results, ok = [], True
            for r in h["runs"]:
                what = " ".join(r["args"]) or "-"
                env = dict(os.environ, **r["env"])
                env.pop("DMAIO_PATH", None)
                try:
                    p = subprocess.run([exe] + r["args"], cwd=os.path.join(tmp, r["cwd"]),
                                       env=env, capture_output=True, text=True,
                                       timeout=TIMEOUT)
                except subprocess.TimeoutExpired:
                    results.append(f"[{what}] did not end within {TIMEOUT} s")
                    ok = False
                    continue
                misses = []
                for spec in r["expect"]:
                    miss = match_run(p, spec)
                    if miss is None:
                        m = spec["out"] and re.search(spec["out"], p.stdout + p.stderr, re.M)
                        said = f" (\"{m.group(0)[:70]}\")".replace("\n", " / ") if m and spec["status"] == 0 else ""
                        results.append(f"[{what} in {r['cwd']}/] {spec['why']}{said}")
                        break
                    misses.append(f"{spec['why']}: {miss}")
                else:
                    ok = False
                    out = (p.stdout + p.stderr).strip().replace("\n", "\n      | ")
                    results.append(f"[{what} in {r['cwd']}/] exit {p.returncode}, matches no "
                                   "expectation:\n      - " + "\n      - ".join(misses) +
                                   f"\n      | {out}")
            failures += not ok
            print(f"{'PASS' if ok else 'FAIL'} {label}: compiled{note}; ran "
                  f"{len(h['runs'])}x: " + "; ".join(results))
        for k in HARNESS:
            if k not in used:
                print(f"FAIL HARNESS entry {k!r} matches no example (changed or removed?)")
                failures += 1
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    print(f"{'FAIL' if failures else 'PASS'}: {len(examples)} examples, {failures} failing")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
