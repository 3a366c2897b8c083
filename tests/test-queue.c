// SPDX-License-Identifier: MIT
/*
 * test-queue: the asynchronous API (registered files, queues of ranges) checked byte by byte.
 *
 *  random      thousands of random ranges (1 B .. 2 MiB, aligned and unaligned offsets, some
 *              across or past end of file) over 3 registered files and 2 buffers, writes into
 *              non-overlapping file ranges then reads back, with the path chosen by the library
 *              and with every path forced (with and without DMAIO_RW_NO_FALLBACK); the buffers
 *              and the files are compared with a reference kept in memory, every byte, guard
 *              bytes (outside every range) included.
 *  once        completions exactly once, dmaio_queue_get_progress() consistent after every reap.
 *  batch       one invalid range makes the whole batch fail with its errno, nothing queued.
 *  full        a queue holds depth x DMAIO_QUEUE_RANGES_PER_DEPTH ranges not reaped: the count
 *              accepted, then -EAGAIN, then room again after reaping.
 *  poll        dmaio_queue_fd() readiness: idle empty queue not readable; readable while
 *              work waits; an event loop of poll + dmaio_queue_reap(min 0, timeout 0) finishes all.
 *  cancel      DMAIO_CANCEL_ALL and cancel by user_data: exactly once, -ECANCELED or done,
 *              a cancelled range wrote only inside itself and only the right bytes.
 *  args        -ENODATA of an empty queue, every @retval of the new functions.
 *  threads     4 threads, a queue each, one context, shared buffers and files, disjoint ranges.
 *  regfile     dmaio_file_read/write against dmaio_fd_read/dmaio_fd_write, get_info against
 *              dmaio_probe_file, the caller's fd untouched and closable.
 *
 * Usage: test-queue [--heap NAME]   (memfd, system, cma, udmabuf, udmabuf-huge, drm, ...)
 * Env:   DMAIO_TEST_DIRS, DMAIO_TEST_QUICK=1, DMAIO_TEST_SEED=N (reproduce a random run).
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "common.h"

#define REAP_TIMEOUT_MS 120000 /* a queue that finishes nothing in 2 minutes is stuck */
#define REAP_MAX 64
#define NTHREADS 4

static struct test_args args;
static struct dmaio_ctx *ctx;
static int kind;
static uint64_t g_seed;

static const int all_paths[] = {
	DMAIO_PATH_RW_FILE,	  DMAIO_PATH_URING_DMABUF, DMAIO_PATH_UDMABUF_DIRECT,
	DMAIO_PATH_BOUNCE_DIRECT, DMAIO_PATH_BUFFERED,	   DMAIO_PATH_SENDFILE,
};

static bool mandatory(int path)
{
	return test_path_mandatory(kind, path);
}

/* ------------------------------------------------------------------------------------------ */
/* Random numbers (xorshift64*, seeded per test from DMAIO_TEST_SEED or the clock) */

struct rng {
	uint64_t s;
};

static void rng_init(struct rng *r, uint64_t salt)
{
	r->s = (g_seed ^ (salt * 0x9e3779b97f4a7c15ull)) | 1;
}

static uint64_t rnd(struct rng *r)
{
	r->s ^= r->s >> 12;
	r->s ^= r->s << 25;
	r->s ^= r->s >> 27;
	return r->s * 0x2545f4914f6cdd1dull;
}

/* uniform in [0, n) (n > 0) */
static uint64_t rndn(struct rng *r, uint64_t n)
{
	return n ? rnd(r) % n : 0;
}

/* A length in [1, max]: mostly small, a tenth up to @max, some page multiples, some = max. */
static uint64_t rand_len(struct rng *r, uint64_t max)
{
	unsigned c = (unsigned)rndn(r, 100);
	uint64_t len;
	unsigned e;

	if (c < 4)
		return max;
	if (c < 14) {
		/* 128 KiB .. max */
		len = 128 * KiB + rndn(r, max - 128 * KiB + 1);
	} else {
		e = (unsigned)rndn(r, 17); /* 1 B .. 128 KiB, log-uniform */
		len = (1ull << e) + rndn(r, 1ull << e);
	}
	if (c >= 14 && c < 30)
		len = (len + 4095) & ~4095ull;
	if (len > max)
		len = max;
	return len ? len : 1;
}

/* ------------------------------------------------------------------------------------------ */
/* Buffers and files */

struct qbuf {
	struct dmaio_buf *buf;
	uint8_t *map;
	size_t size;
	uint64_t sbase; /* pattern stream offset of byte 0 */
};

static int qbuf_alloc(struct qbuf *b, struct dmaio_ctx *c, size_t size, uint64_t sbase)
{
	void *p = NULL;
	int rc;

	memset(b, 0, sizeof(*b));
	rc = t_alloc(c, args.heap_name, size, 0, &b->buf);
	if (rc)
		return rc;
	rc = dmaio_buf_map(b->buf, &p);
	if (rc) {
		fprintf(stderr, "dmaio_buf_map(%s, %zu) = %s\n", args.heap, size, test_errname(rc));
		dmaio_buf_free(b->buf);
		b->buf = NULL;
		return rc;
	}
	b->map = p;
	b->size = size;
	b->sbase = sbase;
	return 0;
}

/* Allocate, or skip the test when a device heap has no room for @size (CMA areas are small). */
static void qbuf_alloc_or_skip(struct qbuf *b, struct dmaio_ctx *c, size_t size, uint64_t sbase,
			       const char *what)
{
	int rc = qbuf_alloc(b, c, size, sbase);

	if (rc && (rc == -ENOMEM || rc == -EFBIG) && kind != DMAIO_BUF_MEMFD) {
		printf("# %s: %s cannot allocate %zu bytes here (%s)\n", what, args.heap, size,
		       test_errname(rc));
		skip();
	}
	if (rc)
		fail_msg("%s: dmaio_buf_alloc(%s, %zu) = %s", what, args.heap, size, test_errname(rc));
}

static void qbuf_free(struct qbuf *b)
{
	dmaio_buf_free(b->buf);
	memset(b, 0, sizeof(*b));
}

static void cpu_begin(struct qbuf *b, unsigned dir)
{
	int rc = dmaio_buf_sync_begin(b->buf, dir);

	if (rc)
		test_fail("dmaio_buf_sync_begin(%u) = %s", dir, test_errname(rc));
}

static void cpu_end(struct qbuf *b, unsigned dir)
{
	int rc = dmaio_buf_sync_end(b->buf, dir);

	if (rc)
		test_fail("dmaio_buf_sync_end(%u) = %s", dir, test_errname(rc));
}

/* Fill [off, off + len) of the buffer with stream @seed (stream offset sbase + off). */
static void qbuf_fill(struct qbuf *b, size_t off, size_t len, uint64_t seed)
{
	cpu_begin(b, DMAIO_SYNC_WRITE);
	pat_fill(b->map + off, len, seed, b->sbase + off);
	cpu_end(b, DMAIO_SYNC_WRITE);
}

struct qfile {
	char path[PATH_MAX];
	int vfd;                 /* verification fd, O_RDWR, never used by the library */
	struct dmaio_file *f;    /* registered (O_RDWR) */
	uint8_t *ref;            /* expected content */
	size_t size, cap;        /* expected size, room in ref */
	uint64_t sbase;
};

static void ref_reserve(struct qfile *f, size_t need)
{
	size_t ncap;
	uint8_t *p;

	if (need <= f->cap)
		return;
	ncap = need + 4 * MiB;
	p = realloc(f->ref, ncap);
	assert_non_null(p);
	memset(p + f->cap, 0, ncap - f->cap);
	f->ref = p;
	f->cap = ncap;
}

/* A temp file of @size bytes of stream @seed (stream offset sbase + file offset), registered. */
static void qfile_create(struct qfile *f, struct dmaio_ctx *c, size_t size, uint64_t seed,
			 uint64_t sbase)
{
	int rc, fd;

	memset(f, 0, sizeof(*f));
	f->vfd = test_tmpfile(NULL, f->path, sizeof(f->path));
	f->sbase = sbase;
	assert_int_equal(file_fill_stream(f->vfd, 0, size, seed, sbase, false), 0);
	ref_reserve(f, size);
	pat_fill(f->ref, size, seed, sbase);
	f->size = size;
	fd = open(f->path, O_RDWR | O_CLOEXEC);
	assert_true(fd >= 0);
	rc = dmaio_file_open(c, fd, 0, &f->f);
	close(fd);
	if (rc)
		fail_msg("dmaio_file_open(%s) = %s", f->path, test_errname(rc));
}

static void qfile_free(struct qfile *f)
{
	dmaio_file_close(f->f);
	if (f->vfd >= 0) {
		close(f->vfd);
		unlink(f->path);
	}
	free(f->ref);
	memset(f, 0, sizeof(*f));
	f->vfd = -1;
}

/* Print the bytes around @bad of @got and @exp. */
static void report_bytes(const char *what, const uint8_t *got, const uint8_t *exp, size_t len,
			 size_t bad)
{
	size_t from = bad > 8 ? bad - 8 : 0, to = bad + 8 < len ? bad + 8 : len, i;

	if (!test_fail_printing())
		return;
	fprintf(stderr, "  %s at %zu:\n  expected:", what, bad);
	for (i = from; i < to; i++)
		fprintf(stderr, "%s%02x", i == bad ? " [" : " ", exp[i]);
	fprintf(stderr, "\n  found:   ");
	for (i = from; i < to; i++)
		fprintf(stderr, "%s%02x", i == bad ? " [" : " ", got[i]);
	fprintf(stderr, "\n");
}

/* Compare the whole file (size and every byte) with its reference. */
static unsigned qfile_verify(struct qfile *f, const char *what)
{
	struct stat st;
	uint8_t *b;
	ssize_t r;
	long long d;

	assert_int_equal(fstat(f->vfd, &st), 0);
	if ((size_t)st.st_size != f->size) {
		test_fail("%s: file %s has %lld bytes, expected %zu", what, f->path,
			  (long long)st.st_size, f->size);
		return 1;
	}
	b = malloc(f->size ? f->size : 1);
	assert_non_null(b);
	r = pread_full(f->vfd, b, f->size, 0);
	if (r != (ssize_t)f->size) {
		test_fail("%s: pread(%zu) = %zd", what, f->size, r);
		free(b);
		return 1;
	}
	d = mem_first_diff(b, f->ref, f->size);
	if (d >= 0) {
		test_fail("%s: file %s differs from the reference at byte %lld", what, f->path, d);
		report_bytes("file", b, f->ref, f->size, (size_t)d);
	}
	free(b);
	return d >= 0;
}

/* ------------------------------------------------------------------------------------------ */
/* The queue engine: submit ranges, reap them all, check every completion */

struct xio {
	struct dmaio_io io;
	int fi, bi;          /* file and buffer index (for messages and the checks) */
	int64_t exp;         /* the result of a complete success */
	int path;            /* forced path, or DMAIO_PATH_AUTO */
	bool nofb;           /* DMAIO_RW_NO_FALLBACK */
	bool may_unsupp;     /* -EOPNOTSUPP allowed (forced non-mandatory path, no fallback) */
	bool may_cancel;     /* -ECANCELED allowed */
	unsigned seen;
	struct dmaio_done d;
};

/* What we know the queue must report. */
struct qtrack {
	struct dmaio_queue *q;
	unsigned cap;        /* ranges it holds */
	uint64_t accepted, reaped, bytes_submitted, bytes_done, cancelled, unsupp;
	unsigned nfull;      /* times the queue was found full */
	const char *name;
};

static int qtrack_new(struct qtrack *t, struct dmaio_ctx *c, unsigned depth, const char *name)
{
	int rc;

	memset(t, 0, sizeof(*t));
	t->name = name;
	t->cap = (depth ? depth : 32) * DMAIO_QUEUE_RANGES_PER_DEPTH;
	rc = dmaio_queue_new(c, depth, 0, &t->q);
	if (rc)
		test_fail("%s: dmaio_queue_new(depth %u) = %s", name, depth, test_errname(rc));
	return rc;
}

static void describe(const struct xio *x, char *s, size_t n)
{
	snprintf(s, n, "%s file %d off %lld buf %d off %llu len %llu path %s%s", x->io.op ==
		 DMAIO_OP_READ ? "read" : x->io.op == DMAIO_OP_WRITE ? "write" : "op?", x->fi,
		 (long long)x->io.file_off, x->bi, (unsigned long long)x->io.buf_off,
		 (unsigned long long)x->io.len, test_pname(x->path), x->nofb ? "+nofallback" : "");
}

static void progress_check(struct qtrack *t, const char *when, bool idle)
{
	struct dmaio_progress p = { .struct_size = sizeof(struct dmaio_progress) };
	int rc;

	memset(&p, 0xa5, sizeof(p)); p.struct_size = sizeof(p);
	rc = dmaio_queue_get_progress(t->q, &p);
	if (rc) {
		test_fail("%s %s: dmaio_queue_get_progress = %s", t->name, when, test_errname(rc));
		return;
	}
	if (p.submitted != t->accepted)
		test_fail("%s %s: progress.submitted %llu, %llu ranges were accepted", t->name,
			  when, (unsigned long long)p.submitted, (unsigned long long)t->accepted);
	if (p.reaped != t->reaped)
		test_fail("%s %s: progress.reaped %llu, %llu were reaped", t->name, when,
			  (unsigned long long)p.reaped, (unsigned long long)t->reaped);
	if (p.completed < p.reaped || p.completed > p.submitted)
		test_fail("%s %s: progress.completed %llu not in [reaped %llu, submitted %llu]",
			  t->name, when, (unsigned long long)p.completed,
			  (unsigned long long)p.reaped, (unsigned long long)p.submitted);
	if (p.bytes_submitted != t->bytes_submitted)
		test_fail("%s %s: progress.bytes_submitted %llu, accepted ranges sum to %llu", t->name,
			  when, (unsigned long long)p.bytes_submitted,
			  (unsigned long long)t->bytes_submitted);
	if (p.bytes_done < t->bytes_done || p.bytes_done > p.bytes_submitted)
		test_fail("%s %s: progress.bytes_done %llu not in [reaped done %llu, total %llu]",
			  t->name, when, (unsigned long long)p.bytes_done,
			  (unsigned long long)t->bytes_done, (unsigned long long)p.bytes_submitted);
	if (p.cancelled < t->cancelled)
		test_fail("%s %s: progress.cancelled %llu < %llu reaped as cancelled", t->name,
			  when, (unsigned long long)p.cancelled, (unsigned long long)t->cancelled);
	if (p.pad0 || p.struct_size != sizeof(p))
		test_fail("%s %s: progress.pad0 %u, struct_size %u", t->name, when, p.pad0,
			  p.struct_size);
	if (idle) {
		if (p.completed != t->reaped)
			test_fail("%s %s: progress.completed %llu, all %llu ranges reaped", t->name,
				  when, (unsigned long long)p.completed,
				  (unsigned long long)t->reaped);
		if (p.bytes_done != t->bytes_done)
			test_fail("%s %s: progress.bytes_done %llu, the completions moved %llu",
				  t->name, when, (unsigned long long)p.bytes_done,
				  (unsigned long long)t->bytes_done);
		if (p.cancelled != t->cancelled)
			test_fail(
				"%s %s: progress.cancelled %llu, %llu completions said -ECANCELED",
				t->name, when, (unsigned long long)p.cancelled,
				(unsigned long long)t->cancelled);
	}
}

/* Check and record one completion. */
static void take_done(struct qtrack *t, struct xio *x, unsigned n, uint64_t tag,
		      const struct dmaio_done *d)
{
	uint64_t idx = d->user_data & 0xffffffffull;
	char desc[200];
	struct xio *e;

	t->reaped++;
	if ((d->user_data >> 32) != tag || idx >= n) {
		test_fail("%s: completion with user_data 0x%llx that was never submitted (tag "
			  "0x%llx, %u ranges)", t->name, (unsigned long long)d->user_data,
			  (unsigned long long)tag, n);
		return;
	}
	e = &x[idx];
	describe(e, desc, sizeof(desc));
	if (e->seen++) {
		test_fail("%s: range %llu (%s) completed twice: res %s then %s", t->name,
			  (unsigned long long)idx, desc, test_errname(e->d.res),
			  test_errname(d->res));
		return;
	}
	e->d = *d;
	if (d->done <= e->io.len)
		t->bytes_done += d->done;
	if (d->res == -ECANCELED)
		t->cancelled++;
	if (d->res == -EOPNOTSUPP)
		t->unsupp++;
	if (d->pad0 || d->struct_size != sizeof(*d))
		test_fail("%s: %s: done.pad0 %u, struct_size %u", t->name, desc, d->pad0,
			  d->struct_size);
	if (d->done > e->io.len || d->unaligned > d->done)
		test_fail("%s: %s: done %llu unaligned %llu (len %llu)", t->name, desc,
			  (unsigned long long)d->done, (unsigned long long)d->unaligned,
			  (unsigned long long)e->io.len);
	if (d->res == e->exp) {
		if (d->done != (uint64_t)d->res)
			test_fail("%s: %s: res %lld but done %llu", t->name, desc,
				  (long long)d->res, (unsigned long long)d->done);
		if (d->res > 0 && (d->path <= DMAIO_PATH_AUTO || d->path >= DMAIO_PATH_COUNT))
			test_fail("%s: %s: done.path %d is not a data path", t->name, desc,
				  d->path);
		if (d->res > 0 && e->path != DMAIO_PATH_AUTO && e->nofb &&
		    ((int)d->path != (int)e->path || d->fallbacks))
			test_fail("%s: %s: served by %s with %u fallbacks; forced %s, no fallback",
				  t->name, desc, test_pname(d->path), d->fallbacks,
				  test_pname(e->path));
		if (d->res > 0 && e->path != DMAIO_PATH_AUTO && !d->fallbacks &&
		    (int)d->path != (int)e->path)
			test_fail("%s: %s: served by %s with no fallback, %s was forced", t->name,
				  desc, test_pname(d->path), test_pname(e->path));
	} else if (d->res == -EOPNOTSUPP && e->may_unsupp) {
		if (d->done)
			test_fail("%s: %s: -EOPNOTSUPP after moving %llu bytes", t->name, desc,
				  (unsigned long long)d->done);
	} else if (d->res == -ECANCELED && e->may_cancel) {
		if (e->exp >= 0 && d->done > (uint64_t)e->exp)
			test_fail("%s: %s: cancelled with done %llu past the end of file (%lld)",
				  t->name, desc, (unsigned long long)d->done, (long long)e->exp);
	} else {
		test_fail("%s: %s: res %s (done %llu, path %s, fallbacks %u), expected %lld%s%s",
			  t->name, desc, test_errname(d->res), (unsigned long long)d->done,
			  test_pname(d->path), d->fallbacks, (long long)e->exp,
			  e->may_unsupp ? " or -EOPNOTSUPP" : "",
			  e->may_cancel ? " or -ECANCELED" : "");
	}
}

/* One reap call; returns the count or -1 after a failure that ends the run. */
static int reap_some(struct qtrack *t, struct xio *x, unsigned n, uint64_t tag, unsigned min,
		     int timeout_ms, unsigned max)
{
	struct dmaio_done out[REAP_MAX] = { { .struct_size = sizeof(struct dmaio_done) } };
	uint64_t outstanding = t->accepted - t->reaped;
	int r, i;

	if (max > REAP_MAX)
		max = REAP_MAX;
	memset(out, 0x5a, sizeof(out));
	out[0].struct_size = sizeof(out[0]);
	r = dmaio_queue_reap(t->q, out, max, min, timeout_ms);
	if (r < 0) {
		test_fail("%s: dmaio_queue_reap(max %u, min %u, %d ms) = %s with %llu ranges outstanding",
			  t->name, max, min, timeout_ms, test_errname(r),
			  (unsigned long long)outstanding);
		return -1;
	}
	if ((unsigned)r > max || (uint64_t)r > outstanding) {
		test_fail("%s: dmaio_queue_reap(max %u) = %d with %llu outstanding", t->name, max, r,
			  (unsigned long long)outstanding);
		return -1;
	}
	if ((unsigned)r < min && outstanding >= min)
		test_fail("%s: dmaio_queue_reap(min %u, %d ms) = %d with %llu outstanding", t->name, min,
			  timeout_ms, r, (unsigned long long)outstanding);
	for (i = 0; i < r; i++)
		take_done(t, x, n, tag, &out[i]);
	return r;
}

/*
 * Submit x[0..n) in random batches, reaping whenever the queue is full, then reap everything.
 * user_data is set here: tag << 32 | index. Checks that a short submit or -EAGAIN happens
 * exactly when the queue holds t->cap unreaped ranges. Returns false when the run had to stop.
 */
static bool run_queue(struct qtrack *t, struct xio *x, unsigned n, uint64_t tag, struct rng *rg)
{
	struct dmaio_io ios[64] = { { .struct_size = sizeof(struct dmaio_io) } };
	unsigned next = 0, i, b;
	bool ok = true;
	int r;

	for (i = 0; i < n; i++) {
		x[i].io.user_data = tag << 32 | i;
		x[i].seen = 0;
	}
	while (ok && next < n) {
		b = 1 + (unsigned)rndn(rg, 64);
		if (b > n - next)
			b = n - next;
		for (i = 0; i < b; i++)
			ios[i] = x[next + i].io;
		r = dmaio_queue_submit(t->q, ios, b);
		if (r == -EAGAIN || (r >= 0 && (unsigned)r < b)) {
			uint64_t held = t->accepted - t->reaped + (r > 0 ? (unsigned)r : 0);

			t->nfull++;
			if (held != t->cap)
				test_fail("%s: dmaio_queue_submit(%u) = %s with %llu ranges held, "
					  "capacity %u",
					  t->name, b, test_errname(r), (unsigned long long)held,
					  t->cap);
			if (r == 0)
				test_fail("%s: dmaio_queue_submit(%u) = 0 (a full queue gives -EAGAIN)",
					  t->name, b);
		} else if (r < 0) {
			char desc[200];

			describe(&x[next], desc, sizeof(desc));
			test_fail("%s: dmaio_queue_submit(%u ranges, first: %s) = %s", t->name, b, desc,
				  test_errname(r));
			ok = false;
			break;
		}
		if (r > 0) {
			for (i = 0; i < (unsigned)r; i++)
				t->bytes_submitted += x[next + i].io.len;
			t->accepted += (unsigned)r;
			next += (unsigned)r;
		}
		if (r == (int)b) {
			/* not full: collect what is there without waiting */
			if (reap_some(t, x, n, tag, 0, 0, 1 + (unsigned)rndn(rg, REAP_MAX)) < 0)
				ok = false;
		} else if (t->accepted > t->reaped) {
			if (reap_some(t, x, n, tag, 1, REAP_TIMEOUT_MS,
				      1 + (unsigned)rndn(rg, REAP_MAX)) < 0)
				ok = false;
		}
	}
	while (ok && t->accepted > t->reaped) {
		uint64_t out = t->accepted - t->reaped;
		unsigned mx = 1 + (unsigned)rndn(rg, REAP_MAX);
		unsigned mn = 1 + (unsigned)rndn(rg, mx);

		if (mn > out)
			mn = (unsigned)out;
		if (reap_some(t, x, n, tag, mn, REAP_TIMEOUT_MS, mx) < 0)
			ok = false;
	}
	if (!ok) {
		/* leave the queue empty for the next user */
		dmaio_queue_cancel(t->q, 0, DMAIO_CANCEL_ALL);
		while (t->accepted > t->reaped &&
		       reap_some(t, x, n, tag, 1, REAP_TIMEOUT_MS, REAP_MAX) > 0)
			;
		return false;
	}
	for (i = 0; i < n; i++) {
		if (x[i].seen != 1) {
			char desc[200];

			describe(&x[i], desc, sizeof(desc));
			test_fail("%s: range %u (%s) completed %u times", t->name, i, desc,
				  x[i].seen);
		}
	}
	/* nothing left over */
	r = reap_some(t, x, n, tag, 0, 0, REAP_MAX);
	if (r != 0)
		test_fail("%s: a reap after all completions returned %d", t->name, r);
	progress_check(t, "after the run", true);
	return true;
}

static void xio_set(struct xio *x, uint32_t op, int path, bool nofb, struct qbuf *b, int bi,
		    uint64_t boff, struct qfile *f, int fi, int64_t foff, uint64_t len)
{
	memset(x, 0, sizeof(*x));
	x->io.struct_size = sizeof(x->io);
	x->io.op = op;
	x->io.flags = path == DMAIO_PATH_AUTO ? 0 :
		      DMAIO_RW_PATH(path) | (nofb ? DMAIO_RW_NO_FALLBACK : 0);
	x->io.buf = b->buf;
	x->io.buf_off = boff;
	x->io.file = f->f;
	x->io.file_off = foff;
	x->io.len = len;
	x->bi = bi;
	x->fi = fi;
	x->path = path;
	x->nofb = nofb;
	x->may_unsupp = path != DMAIO_PATH_AUTO && nofb && !mandatory(path);
	if (op == DMAIO_OP_WRITE)
		x->exp = (int64_t)len;
	else
		x->exp = foff >= (int64_t)f->size ? 0 :
			 (int64_t)((uint64_t)((int64_t)f->size - foff) < len ?
				   (uint64_t)((int64_t)f->size - foff) : len);
}

/* Which range of x[] covers byte @off of buffer @bi (read) or file @fi (write)? -1: none. */
static long find_range(const struct xio *x, unsigned n, bool write, int idx, uint64_t off)
{
	unsigned i;

	for (i = 0; i < n; i++) {
		uint64_t s = write ? (uint64_t)x[i].io.file_off : x[i].io.buf_off;

		if ((write ? x[i].fi : x[i].bi) == idx && off >= s && off < s + x[i].io.len)
			return (long)i;
	}
	return -1;
}

static void shuffle(struct xio *x, unsigned n, struct rng *rg)
{
	unsigned i, j;
	struct xio tmp;

	for (i = n; i > 1; i--) {
		j = (unsigned)rndn(rg, i);
		tmp = x[i - 1];
		x[i - 1] = x[j];
		x[j] = tmp;
	}
}

/* ------------------------------------------------------------------------------------------ */
/* Expected buffer images for reads */

/*
 * Build the expected image of buffer @bi after the reads of x[]: the guard stream, with the
 * file's bytes over [buf_off, buf_off + res) of every read that succeeded. Compare every byte
 * of [0, @lim) (the rest of the buffer holds the source of writes).
 */
static unsigned verify_reads_lim(struct qbuf *b, int bi, const struct xio *x, unsigned n,
				 struct qfile *files, const char *what, size_t lim)
{
	uint8_t *exp = malloc(b->size);
	long long d;
	unsigned i;
	long k;

	assert_non_null(exp);
	cpu_begin(b, DMAIO_SYNC_READ);
	pat_fill(exp, b->size, SEED_GUARD, b->sbase);
	for (i = 0; i < n; i++) {
		const struct xio *e = &x[i];

		if (e->io.op != DMAIO_OP_READ || e->bi != bi)
			continue;
		/* a cancelled range was checked by itself (check_cancelled_read) */
		if (e->d.res == -ECANCELED && e->may_cancel)
			memcpy(exp + e->io.buf_off, b->map + e->io.buf_off, e->io.len);
		if (e->d.res <= 0 || e->d.res != e->exp)
			continue;
		memcpy(exp + e->io.buf_off, files[e->fi].ref + e->io.file_off, (size_t)e->d.res);
	}
	d = mem_first_diff(b->map, exp, lim);
	if (d >= 0) {
		char desc[320] = "outside every range (guard byte)";

		k = find_range(x, n, false, bi, (uint64_t)d);
		if (k >= 0) {
			char r[160];

			describe(&x[k], r, sizeof(r));
			snprintf(desc, sizeof(desc), "in range %ld (%s; res %lld, byte %llu of it)",
				 k, r, (long long)x[k].d.res,
				 (unsigned long long)d - x[k].io.buf_off);
		}
		test_fail("%s: buffer %d differs at byte %lld: %s", what, bi, d, desc);
		report_bytes("buffer", b->map, exp, lim, (size_t)d);
	}
	cpu_end(b, DMAIO_SYNC_READ);
	free(exp);
	return d >= 0;
}

static unsigned verify_reads(struct qbuf *b, int bi, const struct xio *x, unsigned n,
			     struct qfile *files, const char *what)
{
	return verify_reads_lim(b, bi, x, n, files, what, b->size);
}

/* ------------------------------------------------------------------------------------------ */
/* Layout: ranges one after another in containers (buffers or files), random small gaps */

struct layout {
	uint64_t cur[4], cap[4];
	int n;
};

/* Place @len somewhere; returns the container or -1 when none has room. */
static int layout_place(struct layout *l, struct rng *rg, uint64_t len, uint64_t *off)
{
	int start = (int)rndn(rg, (uint64_t)l->n), i, c;
	unsigned g = (unsigned)rndn(rg, 10);
	uint64_t o;

	for (i = 0; i < l->n; i++) {
		c = (start + i) % l->n;
		o = l->cur[c];
		if (g < 3)
			o += 0; /* adjacent to the previous range */
		else if (g < 6)
			o = (o + 4095) & ~4095ull;
		else
			o += rndn(rg, 6000);
		if (o + len <= l->cap[c]) {
			*off = o;
			l->cur[c] = o + len;
			return c;
		}
	}
	return -1;
}

/* ------------------------------------------------------------------------------------------ */
/* 1. Random ranges over 3 files and 2 buffers */

#define RF 3
#define RB 2

struct rstate {
	struct qtrack t;
	struct qbuf b[RB];
	struct qfile f[RF];
	struct rng rg;
	size_t maxlen;
	uint64_t tag;
	unsigned waves, across_eof, past_eof, grow, zero_len, ranges;
	unsigned per_path[DMAIO_PATH_COUNT][2];
};

/* Path of range @i of a round: 0 auto only, 1 a mix of auto and every path forced. */
static void pick_path(struct rng *rg, int mode, int *path, bool *nofb)
{
	unsigned v = (unsigned)rndn(rg, 13);

	*path = DMAIO_PATH_AUTO;
	*nofb = false;
	if (mode == 0 || v == 0)
		return;
	*path = all_paths[(v - 1) % 6];
	*nofb = v > 6;
}

static unsigned write_wave(struct rstate *s, int mode, unsigned want, const char *name)
{
	struct xio *x = calloc(want, sizeof(*x));
	struct layout l;
	size_t before[RF];
	unsigned n = 0, i;
	int fi, bi;

	assert_non_null(x);
	memset(&l, 0, sizeof(l));
	l.n = RF;
	for (i = 0; i < RF; i++) {
		l.cap[i] = s->f[i].size + MiB;
		before[i] = s->f[i].size;
	}
	while (n < want) {
		uint64_t len = rndn(&s->rg, 100) == 0 ? 0 : rand_len(&s->rg, s->maxlen);
		uint64_t foff, boff;
		int path;
		bool nofb;

		fi = layout_place(&l, &s->rg, len, &foff);
		if (fi < 0)
			break;
		bi = (int)rndn(&s->rg, RB);
		boff = rndn(&s->rg, s->b[bi].size - len + 1);
		if (rndn(&s->rg, 10) < 3 && boff >= 4096)
			boff &= ~4095ull;
		pick_path(&s->rg, mode, &path, &nofb);
		xio_set(&x[n], DMAIO_OP_WRITE, path, nofb, &s->b[bi], bi, boff, &s->f[fi], fi,
			(int64_t)foff, len);
		if (len == 0)
			s->zero_len++;
		else if (foff < before[fi] && foff + len > before[fi])
			s->across_eof++;
		else if (foff >= before[fi])
			s->past_eof++;
		n++;
	}
	shuffle(x, n, &s->rg);
	run_queue(&s->t, x, n, ++s->tag, &s->rg);
	/* the reference: every write that completed */
	for (i = 0; i < n; i++) {
		struct xio *e = &x[i];
		struct qfile *f = &s->f[e->fi];

		s->per_path[e->path][e->d.res == e->exp ? 0 : 1]++;
		if (e->d.res != e->exp || e->io.len == 0)
			continue;
		ref_reserve(f, (size_t)e->io.file_off + e->io.len);
		pat_fill(f->ref + e->io.file_off, e->io.len, SEED_BUF,
			 s->b[e->bi].sbase + e->io.buf_off);
		if ((size_t)e->io.file_off + e->io.len > f->size) {
			f->size = (size_t)e->io.file_off + e->io.len;
			s->grow++;
		}
	}
	for (fi = 0; fi < RF; fi++) {
		struct stat st;
		uint8_t *b;
		long long d;

		/* compare; on a difference name the range (or "outside every range") */
		assert_int_equal(fstat(s->f[fi].vfd, &st), 0);
		if ((size_t)st.st_size != s->f[fi].size) {
			test_fail("%s: file %d has %lld bytes, expected %zu (was %zu)", name, fi,
				  (long long)st.st_size, s->f[fi].size, before[fi]);
			continue;
		}
		b = malloc(s->f[fi].size + 1);
		assert_non_null(b);
		assert_int_equal(pread_full(s->f[fi].vfd, b, s->f[fi].size, 0),
				 (ssize_t)s->f[fi].size);
		d = mem_first_diff(b, s->f[fi].ref, s->f[fi].size);
		if (d >= 0) {
			long k = find_range(x, n, true, fi, (uint64_t)d);
			char desc[320] = "outside every written range";

			if (k >= 0) {
				char r[160];

				describe(&x[k], r, sizeof(r));
				snprintf(desc, sizeof(desc), "in range %ld (%s; res %lld)", k, r,
					 (long long)x[k].d.res);
			}
			test_fail("%s: file %d differs at byte %lld: %s", name, fi, d, desc);
			report_bytes("file", b, s->f[fi].ref, s->f[fi].size, (size_t)d);
		}
		free(b);
	}
	free(x);
	s->waves++;
	return n;
}

static unsigned read_wave(struct rstate *s, int mode, unsigned want, const char *name)
{
	struct xio *x = calloc(want, sizeof(*x));
	struct layout l;
	unsigned n = 0, i;
	int bi;

	assert_non_null(x);
	for (bi = 0; bi < RB; bi++)
		qbuf_fill(&s->b[bi], 0, s->b[bi].size, SEED_GUARD);
	memset(&l, 0, sizeof(l));
	l.n = RB;
	for (i = 0; i < RB; i++)
		l.cap[i] = s->b[i].size;
	while (n < want) {
		uint64_t len = rndn(&s->rg, 100) == 0 ? 0 : rand_len(&s->rg, s->maxlen);
		int fi = (int)rndn(&s->rg, RF);
		uint64_t fsize = s->f[fi].size, boff, foff;
		unsigned c = (unsigned)rndn(&s->rg, 100);
		int path;
		bool nofb;

		bi = layout_place(&l, &s->rg, len, &boff);
		if (bi < 0)
			break;
		if (c < 12 && len > 1)
			foff = fsize - 1 - rndn(&s->rg, len - 1 < fsize ? len - 1 : fsize - 1);
		else if (c < 15)
			foff = fsize + rndn(&s->rg, 3) * (rndn(&s->rg, 2) ? 4096 : 777);
		else
			foff = rndn(&s->rg, fsize);
		if (c >= 15 && c < 45)
			foff &= ~4095ull;
		pick_path(&s->rg, mode, &path, &nofb);
		xio_set(&x[n], DMAIO_OP_READ, path, nofb, &s->b[bi], bi, boff, &s->f[fi], fi,
			(int64_t)foff, len);
		if (len == 0)
			s->zero_len++;
		else if (foff < fsize && foff + len > fsize)
			s->across_eof++;
		else if (foff >= fsize)
			s->past_eof++;
		n++;
	}
	shuffle(x, n, &s->rg);
	run_queue(&s->t, x, n, ++s->tag, &s->rg);
	for (i = 0; i < n; i++)
		s->per_path[x[i].path][x[i].d.res == x[i].exp ? 0 : 1]++;
	for (bi = 0; bi < RB; bi++)
		verify_reads(&s->b[bi], bi, x, n, s->f, name);
	free(x);
	s->waves++;
	return n;
}

static void random_round(struct rstate *s, int mode, unsigned nranges)
{
	const char *name = mode ? "random-forced" : "random-auto";
	unsigned done = 0, w, fails0 = test_failures();
	double t0 = test_now();
	int bi, p;

	memset(s->per_path, 0, sizeof(s->per_path));
	s->waves = s->across_eof = s->past_eof = s->grow = s->zero_len = 0;
	s->t.nfull = 0;
	s->t.name = name;
	/* phase 1: writes of the buffers' data */
	for (bi = 0; bi < RB; bi++)
		qbuf_fill(&s->b[bi], 0, s->b[bi].size, SEED_BUF);
	while (done < nranges / 2 && test_failures() == fails0) {
		w = write_wave(s, mode, nranges / 2 - done, name);
		assert_true(w > 0);
		done += w;
	}
	/* phase 2: reads back */
	while (done < nranges && test_failures() == fails0) {
		w = read_wave(s, mode, nranges - done, name);
		assert_true(w > 0);
		done += w;
	}
	printf("# %s: %u ranges in %.2f s, %u waves; %u across EOF, %u at/past EOF, %u of "
	       "length 0, files grew %u times, queue full %u times\n", name, done, test_now() - t0,
	       s->waves, s->across_eof, s->past_eof, s->zero_len, s->grow, s->t.nfull);
	for (p = 0; p < DMAIO_PATH_COUNT; p++)
		if (s->per_path[p][0] + s->per_path[p][1])
			printf("#   %-16s %5u served, %5u -EOPNOTSUPP%s\n", test_pname(p),
			       s->per_path[p][0], s->per_path[p][1],
			       mandatory(p) ? " (mandatory)" : "");
	if (test_failures() == fails0) {
		if (s->across_eof == 0 || s->past_eof == 0)
			test_fail(
				"%s: no range crossed (%u) or started past (%u) the end of a file",
				name, s->across_eof, s->past_eof);
	}
}

static void test_random(void **state)
{
	unsigned before = test_failures(), n = args.quick ? 300 : 2000;
	size_t bsize = args.quick ? 4 * MiB + 1234 : 12 * MiB + 4321;
	size_t fsize = args.quick ? MiB + 333 : 6 * MiB + 12345;
	struct rstate *s = calloc(1, sizeof(*s));
	int i;

	(void)state;
	assert_non_null(s);
	rng_init(&s->rg, 1);
	s->maxlen = 2 * MiB;
	for (i = 0; i < RB; i++) {
		int rc = qbuf_alloc(&s->b[i], ctx, bsize, (uint64_t)i << 32);

		if ((rc == -ENOMEM || rc == -EFBIG) && kind != DMAIO_BUF_MEMFD &&
		    bsize > 3 * MiB) {
			/* a small CMA area: smaller buffers, same ranges (fewer per wave) */
			printf("# random: %zu-byte buffers refused (%s), 3 MiB\n", bsize,
			       test_errname(rc));
			if (i)
				qbuf_free(&s->b[0]);
			bsize = 3 * MiB;
			i = -1;
			continue;
		}
		if (rc) {
			while (i-- > 0)
				qbuf_free(&s->b[i]);
			free(s);
			if ((rc == -ENOMEM || rc == -EFBIG) && kind != DMAIO_BUF_MEMFD) {
				printf("# random: %s cannot allocate %zu bytes here (%s)\n",
				       args.heap, bsize, test_errname(rc));
				skip();
			}
			fail_msg("random: dmaio_buf_alloc(%s, %zu) = %s", args.heap, bsize,
				 test_errname(rc));
		}
	}
	for (i = 0; i < RF; i++)
		qfile_create(&s->f[i], ctx, fsize + (size_t)i * 4097, SEED_DEST, (uint64_t)i << 32);
	assert_int_equal(qtrack_new(&s->t, ctx, 0, "random"), 0);

	random_round(s, 0, n);
	if (test_failures() == before)
		random_round(s, 1, n);

	dmaio_queue_free(s->t.q);
	for (i = 0; i < RF; i++)
		qfile_free(&s->f[i]);
	for (i = 0; i < RB; i++)
		qbuf_free(&s->b[i]);
	free(s);
	assert_no_failures_since(before);
}

/* ------------------------------------------------------------------------------------------ */
/* 2. Exactly once, progress after every reap */

static void test_once(void **state)
{
	unsigned before = test_failures(), n = args.quick ? 1000 : 6000, i, next = 0, rounds = 0;
	struct dmaio_done out[16] = { { .struct_size = sizeof(struct dmaio_done) } };
	struct qtrack t;
	struct qbuf b;
	struct qfile f;
	struct xio *x;
	struct rng rg;
	int r, k;
	double t0 = test_now();

	(void)state;
	rng_init(&rg, 2);
	qbuf_alloc_or_skip(&b, ctx, 2 * MiB, 0, "once");
	qfile_create(&f, ctx, 3 * MiB, SEED_FILE, 0);
	assert_int_equal(qtrack_new(&t, ctx, 8, "once"), 0);
	x = calloc(n, sizeof(*x));
	assert_non_null(x);
	/* small ranges, reads and writes (writes past the data read, to their own region) */
	for (i = 0; i < n; i++) {
		uint64_t len = rndn(&rg, 4097);
		uint64_t boff = rndn(&rg, b.size - len + 1);

		if (i % 3 == 2)
			xio_set(&x[i], DMAIO_OP_WRITE, DMAIO_PATH_AUTO, false, &b, 0, boff, &f, 0,
				(int64_t)(2 * MiB + (i % 256) * 4096), len);
		else
			xio_set(&x[i], DMAIO_OP_READ, DMAIO_PATH_AUTO, false, &b, 0, boff, &f, 0,
				(int64_t)rndn(&rg, 2 * MiB), len);
		x[i].io.user_data = 7ull << 32 | i;
	}
	/*
	 * Overlapping ranges give no defined data: this test is about completions only. Submit
	 * one at a time or in small batches, reap with small max, check progress every step.
	 */
	while ((next < n || t.accepted > t.reaped) && test_failures() == before) {
		unsigned bsz = 1 + (unsigned)rndn(&rg, 7);

		if (next < n) {
			struct dmaio_io ios[8] = { { .struct_size = sizeof(struct dmaio_io) } };

			if (bsz > n - next)
				bsz = n - next;
			for (i = 0; i < bsz; i++)
				ios[i] = x[next + i].io;
			r = dmaio_queue_submit(t.q, ios, bsz);
			if (r > 0) {
				for (i = 0; i < (unsigned)r; i++)
					t.bytes_submitted += x[next + i].io.len;
				next += (unsigned)r;
				t.accepted += (unsigned)r;
			} else if (r != -EAGAIN) {
				test_fail("once: dmaio_queue_submit(%u) = %s", bsz, test_errname(r));
				break;
			}
			progress_check(&t, "after a submit", false);
		}
		{
			unsigned mx = 1 + (unsigned)rndn(&rg, ARRAY_SIZE(out));
			unsigned mn = next == n || t.accepted - t.reaped == t.cap ? 1 : 0;

			r = dmaio_queue_reap(t.q, out, mx, mn, REAP_TIMEOUT_MS);
			if (r < 0 || (unsigned)r > mx) {
				test_fail("once: dmaio_queue_reap(max %u, min %u) = %s", mx, mn,
					  test_errname(r));
				break;
			}
			for (k = 0; k < r; k++)
				take_done(&t, x, n, 7, &out[k]);
			progress_check(&t, "after a reap", false);
		}
		rounds++;
	}
	for (i = 0; i < n && test_failures() == before; i++)
		if (x[i].seen != 1)
			test_fail("once: range %u (user_data 0x%llx) completed %u times", i,
				  (unsigned long long)x[i].io.user_data, x[i].seen);
	progress_check(&t, "at the end", true);
	/* the queue is empty: nothing more comes, and waiting for one says there is none */
	r = dmaio_queue_reap(t.q, out, 16, 0, 0);
	if (r != 0)
		test_fail("once: reap of a drained queue = %s", test_errname(r));
	r = dmaio_queue_reap(t.q, out, 16, 1, 20);
	if (r != -ENODATA)
		test_fail("once: reap(min 1, 20 ms) of a drained queue = %s, expected -ENODATA",
			  test_errname(r));
	printf("# once: %u ranges, %u loop rounds, %.2f s\n", n, rounds, test_now() - t0);
	dmaio_queue_free(t.q);
	free(x);
	qfile_free(&f);
	qbuf_free(&b);
	assert_no_failures_since(before);
}

/* ------------------------------------------------------------------------------------------ */
/* 3. Batch validation is atomic */

enum { F_RW, F_RO, F_WO, F_APP, F_N };

struct bcase {
	const char *name;
	int err, err2; /* expected errno (err2: another documented one, or 0) */
	void (*mk)(struct dmaio_io *io);
};

static struct {
	struct dmaio_file *f[F_N];
	struct dmaio_buf *buf, *other_buf;
	struct dmaio_file *other_file;
	size_t bsize;
} B;

static void mk_op0(struct dmaio_io *io) { io->op = 0; }
static void mk_op3(struct dmaio_io *io) { io->op = 3; }
static void mk_opmax(struct dmaio_io *io) { io->op = UINT32_MAX; }
static void mk_flag5(struct dmaio_io *io) { io->flags = 1u << 5; }
static void mk_flagall(struct dmaio_io *io) { io->flags = ~0u; }
static void mk_flagnot(struct dmaio_io *io) { io->flags = ~DMAIO_RW_FLAGS_ALL; }
static void mk_path7(struct dmaio_io *io) { io->flags = DMAIO_RW_PATH(7); }
static void mk_path15(struct dmaio_io *io) { io->flags = DMAIO_RW_PATH(15) | DMAIO_RW_NO_FALLBACK; }
static void mk_path17(struct dmaio_io *io) { io->flags = DMAIO_RW_PATH(17); }
static void mk_pathmax(struct dmaio_io *io) { io->flags = DMAIO_RW_PATH(0xffff); }
static void mk_pad0(struct dmaio_io *io) { io->pad0 = 1; }
static void mk_size0(struct dmaio_io *io) { io->struct_size = 0; }
static void mk_sizesmall(struct dmaio_io *io) { io->struct_size = DMAIO_SIZE_IO - 8; }
static void mk_nobuf(struct dmaio_io *io) { io->buf = NULL; }
static void mk_nofile(struct dmaio_io *io) { io->file = NULL; }
static void mk_neg1(struct dmaio_io *io) { io->file_off = UINT64_MAX; }
static void mk_negmin(struct dmaio_io *io) { io->file_off = (uint64_t)INT64_MAX + 1; }
static void mk_negpage(struct dmaio_io *io) { io->file_off = (uint64_t)-4096; io->len = 0; }
static void mk_past1(struct dmaio_io *io) { io->buf_off = B.bsize; io->len = 1; }
static void mk_past2(struct dmaio_io *io) { io->buf_off = B.bsize + 1; io->len = 0; }
static void mk_past3(struct dmaio_io *io) { io->buf_off = 0; io->len = B.bsize + 1; }
static void mk_past4(struct dmaio_io *io) { io->buf_off = B.bsize - 1; io->len = 2; }
static void mk_past5(struct dmaio_io *io) { io->buf_off = 1ull << 40; io->len = 16; }
static void mk_ovf1(struct dmaio_io *io) { io->buf_off = UINT64_MAX; io->len = 1; }
static void mk_ovf2(struct dmaio_io *io) { io->buf_off = 1; io->len = UINT64_MAX; }
static void mk_ovf3(struct dmaio_io *io) { io->buf_off = 0; io->file_off = INT64_MAX; io->len = 1; }
static void mk_ovf4(struct dmaio_io *io) { io->file_off = INT64_MAX - 8; io->len = 16; }
static void mk_ovf5(struct dmaio_io *io) { io->buf_off = 0; io->file_off = 1; io->len = (uint64_t)INT64_MAX; }
static void mk_rd_wo(struct dmaio_io *io) { io->op = DMAIO_OP_READ; io->file = B.f[F_WO]; }
static void mk_wr_ro(struct dmaio_io *io) { io->op = DMAIO_OP_WRITE; io->file = B.f[F_RO]; }
static void mk_wr_app(struct dmaio_io *io) { io->op = DMAIO_OP_WRITE; io->file = B.f[F_APP]; }
static void mk_obuf(struct dmaio_io *io) { io->buf = B.other_buf; }
static void mk_ofile(struct dmaio_io *io) { io->file = B.other_file; }

static const struct bcase bcases[] = {
	{ "op 0", -EINVAL, 0, mk_op0 },
	{ "op 3", -EINVAL, 0, mk_op3 },
	{ "op UINT32_MAX", -EINVAL, 0, mk_opmax },
	{ "flags 1<<5", -EINVAL, 0, mk_flag5 },
	{ "flags ~0", -EINVAL, 0, mk_flagall },
	{ "flags ~DMAIO_RW_FLAGS_ALL", -EINVAL, 0, mk_flagnot },
	{ "path 7", -EINVAL, 0, mk_path7 },
	{ "path 15 + no fallback", -EINVAL, 0, mk_path15 },
	{ "path 17 (no such path, never another one)", -EINVAL, 0, mk_path17 },
	{ "path 0xffff", -EINVAL, 0, mk_pathmax },
	{ "pad0 = 1", -EINVAL, 0, mk_pad0 },
	{ "struct_size 0", -EINVAL, 0, mk_size0 },
	{ "struct_size below 1.0", -EINVAL, 0, mk_sizesmall },
	{ "buf NULL", -EINVAL, 0, mk_nobuf },
	{ "file NULL", -EINVAL, 0, mk_nofile },
	{ "file_off UINT64_MAX", -EOVERFLOW, 0, mk_neg1 },
	{ "file_off INT64_MAX + 1", -EOVERFLOW, 0, mk_negmin },
	{ "file_off 2^64 - 4096, len 0", -EOVERFLOW, 0, mk_negpage },
	{ "buf_off size, len 1", -EINVAL, 0, mk_past1 },
	{ "buf_off size+1, len 0", -EINVAL, 0, mk_past2 },
	{ "len size+1", -EINVAL, 0, mk_past3 },
	{ "buf_off size-1, len 2", -EINVAL, 0, mk_past4 },
	{ "buf_off 1<<40", -EINVAL, 0, mk_past5 },
	{ "buf_off UINT64_MAX, len 1", -EOVERFLOW, 0, mk_ovf1 },
	{ "buf_off 1, len UINT64_MAX", -EOVERFLOW, 0, mk_ovf2 },
	{ "file_off INT64_MAX, len 1", -EOVERFLOW, 0, mk_ovf3 },
	{ "file_off INT64_MAX-8, len 16", -EOVERFLOW, 0, mk_ovf4 },
	{ "file_off 1, len INT64_MAX (also past the buffer)", -EOVERFLOW, -EINVAL, mk_ovf5 },
	{ "read of a write-only file", -EBADF, 0, mk_rd_wo },
	{ "write of a read-only file", -EBADF, 0, mk_wr_ro },
	{ "write of an O_APPEND file", -EBADF, 0, mk_wr_app },
	{ "buffer of another context", -EINVAL, 0, mk_obuf },
	{ "file of another context", -EINVAL, 0, mk_ofile },
};

static struct dmaio_file *open_reg(struct dmaio_ctx *c, const char *path, int flags)
{
	struct dmaio_file *f = NULL;
	int fd = open(path, flags | O_CLOEXEC), rc;

	assert_true(fd >= 0);
	rc = dmaio_file_open(c, fd, 0, &f);
	close(fd);
	if (rc)
		fail_msg("dmaio_file_open(%s, flags 0x%x) = %s", path, flags, test_errname(rc));
	return f;
}

#define BATCH 6

static void test_batch(void **state)
{
	unsigned before = test_failures(), c, k, i;
	const unsigned ks[] = { 0, 3, BATCH - 1 };
	struct dmaio_progress p0 = { .struct_size = sizeof(struct dmaio_progress) }, p1 = { .struct_size = sizeof(struct dmaio_progress) };
	struct dmaio_io ios[BATCH] = { { .struct_size = sizeof(struct dmaio_io) } };
	struct dmaio_done out[8] = { { .struct_size = sizeof(struct dmaio_done) } };
	struct dmaio_ctx *ctx2 = NULL;
	struct qfile f, wf;
	struct qbuf b, ob;
	struct qtrack t;
	struct xio x[BATCH];
	struct rng rg;
	char path2[PATH_MAX];
	int rc, fd2;

	(void)state;
	rng_init(&rg, 3);
	qbuf_alloc_or_skip(&b, ctx, 256 * KiB + 7, 0, "batch");
	B.buf = b.buf;
	B.bsize = b.size;
	qfile_create(&f, ctx, 128 * KiB, SEED_FILE, 0);   /* reads come from here */
	qfile_create(&wf, ctx, 64 * KiB, SEED_DEST, 0);   /* the valid write goes here */
	B.f[F_RW] = f.f;
	B.f[F_RO] = open_reg(ctx, f.path, O_RDONLY);
	B.f[F_WO] = open_reg(ctx, f.path, O_WRONLY);
	B.f[F_APP] = open_reg(ctx, f.path, O_RDWR | O_APPEND);
	assert_int_equal(dmaio_ctx_new(0, &ctx2), 0);
	rc = qbuf_alloc(&ob, ctx2, 64 * KiB, 0);
	if (rc)
		fail_msg("dmaio_buf_alloc in a second context = %s", test_errname(rc));
	B.other_buf = ob.buf;
	fd2 = test_tmpfile(NULL, path2, sizeof(path2));
	assert_int_equal(file_fill_pattern(fd2, 0, 64 * KiB, SEED_FILE), 0);
	assert_int_equal(dmaio_file_open(ctx2, fd2, 0, &B.other_file), 0);
	close(fd2);
	assert_int_equal(qtrack_new(&t, ctx, 4, "batch"), 0);

	qbuf_fill(&b, 0, b.size, SEED_GUARD);
	/* the valid batch: reads into [i * 16 KiB, + 8 KiB), one write (index 3) */
	for (i = 0; i < BATCH; i++) {
		if (i == 3)
			xio_set(&x[i], DMAIO_OP_WRITE, DMAIO_PATH_AUTO, false, &b, 0, 200 * KiB, &wf,
				1, 4096 + 1, 8 * KiB);
		else
			xio_set(&x[i], DMAIO_OP_READ, DMAIO_PATH_AUTO, false, &b, 0, i * 16 * KiB,
				&f, 0, (int64_t)(i * 8 * KiB + 3), 8 * KiB);
	}
	for (c = 0; c < ARRAY_SIZE(bcases); c++) {
		for (k = 0; k < ARRAY_SIZE(ks); k++) {
			for (i = 0; i < BATCH; i++) {
				ios[i] = x[i].io;
				ios[i].user_data = 0xbad0000000000000ull | c << 8 | i;
			}
			bcases[c].mk(&ios[ks[k]]);
			assert_int_equal(dmaio_queue_get_progress(t.q, &p0), 0);
			rc = dmaio_queue_submit(t.q, ios, BATCH);
			assert_int_equal(dmaio_queue_get_progress(t.q, &p1), 0);
			if (rc != bcases[c].err && (!bcases[c].err2 || rc != bcases[c].err2))
				test_fail("batch: range %u of %u is \"%s\": dmaio_queue_submit = %s, "
					  "expected "
					  "%s", ks[k], BATCH, bcases[c].name, test_errname(rc),
					  test_errname(bcases[c].err));
			if (memcmp(&p0, &p1, sizeof(p0)) != 0)
				test_fail("batch: \"%s\" at %u: the progress changed (submitted "
					  "%llu -> %llu)", bcases[c].name, ks[k],
					  (unsigned long long)p0.submitted,
					  (unsigned long long)p1.submitted);
			rc = dmaio_queue_reap(t.q, out, 8, 0, 0);
			if (rc != 0)
				test_fail(
					"batch: \"%s\" at %u: a reap after the refused batch = %s",
					bcases[c].name, ks[k], test_errname(rc));
			if (rc > 0)
				t.reaped += (unsigned)rc; /* keep the tally straight */
		}
	}
	/* the queue-level checks */
	rc = dmaio_queue_submit(NULL, ios, 1);
	if (rc != -EINVAL)
		test_fail("batch: dmaio_queue_submit(NULL queue) = %s", test_errname(rc));
	rc = dmaio_queue_submit(t.q, NULL, 1);
	if (rc != -EINVAL)
		test_fail("batch: dmaio_queue_submit(ios NULL, n 1) = %s", test_errname(rc));
	rc = dmaio_queue_submit(t.q, NULL, 0);
	if (rc != 0)
		test_fail("batch: dmaio_queue_submit(ios NULL, n 0) = %s, expected 0", test_errname(rc));
	rc = dmaio_queue_submit(t.q, ios, 0);
	if (rc != 0)
		test_fail("batch: dmaio_queue_submit(n 0) = %s, expected 0", test_errname(rc));
	progress_check(&t, "after the refused batches", true);

	/* nothing of the refused batches ran: the buffer and the write's file are untouched */
	cpu_begin(&b, DMAIO_SYNC_READ);
	if (pat_check(b.map, b.size, SEED_GUARD, 0) >= 0)
		test_fail("batch: the buffer changed although every batch was refused");
	cpu_end(&b, DMAIO_SYNC_READ);
	qfile_verify(&wf, "batch (refused write)");

	/* and the valid batch goes through whole */
	run_queue(&t, x, BATCH, 9, &rg);
	verify_reads(&b, 0, x, BATCH, (struct qfile[]){ f, wf }, "batch (valid)");
	pat_fill(wf.ref + 4097, 8 * KiB, SEED_GUARD, 200 * KiB);
	qfile_verify(&wf, "batch (valid write)");
	if (t.accepted != BATCH)
		test_fail("batch: %llu ranges accepted in all, expected %d",
			  (unsigned long long)t.accepted, BATCH);

	dmaio_queue_free(t.q);
	dmaio_file_close(B.f[F_RO]);
	dmaio_file_close(B.f[F_WO]);
	dmaio_file_close(B.f[F_APP]);
	dmaio_file_close(B.other_file);
	qbuf_free(&ob);
	dmaio_ctx_free(ctx2);
	qfile_free(&f);
	qfile_free(&wf);
	qbuf_free(&b);
	memset(&B, 0, sizeof(B));
	assert_no_failures_since(before);
}

/* ------------------------------------------------------------------------------------------ */
/* 4. Queue full */

static void full_case(struct qbuf *b, struct qfile *f, unsigned depth, uint64_t len, struct rng *rg)
{
	unsigned cap = (depth ? depth : 32) * DMAIO_QUEUE_RANGES_PER_DEPTH, n = cap + 5, i;
	struct dmaio_io *ios;
	struct qtrack t;
	struct xio *x;
	char name[64];
	int r;

	snprintf(name, sizeof(name), "full(depth %u)", depth);
	if (qtrack_new(&t, ctx, depth, name))
		return;
	assert_int_equal(t.cap, cap);
	x = calloc(n, sizeof(*x));
	ios = calloc(n, sizeof(*ios));
	assert_true(x && ios);
	assert_true(n * len <= b->size);
	qbuf_fill(b, 0, b->size, SEED_GUARD);
	for (i = 0; i < n; i++) {
		xio_set(&x[i], DMAIO_OP_READ, DMAIO_PATH_AUTO, false, b, 0, i * len, f, 0,
			(int64_t)(rndn(rg, f->size - len)), len);
		x[i].io.user_data = 5ull << 32 | i;
		ios[i] = x[i].io;
	}
	/* one batch larger than the queue: the count accepted */
	r = dmaio_queue_submit(t.q, ios, n);
	if (r != (int)cap)
		test_fail("%s: dmaio_queue_submit(%u) = %s, expected %u", name, n, test_errname(r), cap);
	if (r > 0) {
		for (i = 0; i < (unsigned)r; i++)
			t.bytes_submitted += len;
		t.accepted = (unsigned)r;
	}
	/* full: -EAGAIN, nothing accepted */
	r = dmaio_queue_submit(t.q, ios + t.accepted, n - (unsigned)t.accepted);
	if (r != -EAGAIN)
		test_fail("%s: dmaio_queue_submit on a full queue = %s, expected -EAGAIN", name,
			  test_errname(r));
	if (r > 0)
		t.accepted += (unsigned)r;
	progress_check(&t, "full", false);
	if (t.accepted == cap) {
		/* reap exactly 2: room for exactly 2 */
		r = reap_some(&t, x, n, 5, 2, REAP_TIMEOUT_MS, 2);
		if (r == 2) {
			r = dmaio_queue_submit(t.q, ios + t.accepted, n - (unsigned)t.accepted);
			if (r != 2)
				test_fail("%s: after reaping 2, dmaio_queue_submit(%u) = %s, expected 2",
					  name, n - (unsigned)t.accepted, test_errname(r));
			if (r > 0) {
				t.bytes_submitted += (unsigned)r * len;
				t.accepted += (unsigned)r;
			}
			r = dmaio_queue_submit(t.q, ios + t.accepted, 1);
			if (r != -EAGAIN)
				test_fail("%s: full again, dmaio_queue_submit(1) = %s, expected -EAGAIN",
					  name, test_errname(r));
			if (r > 0)
				t.accepted += (unsigned)r;
		}
		/* reap everything, then the last 3 go in */
		while (t.accepted > t.reaped &&
		       reap_some(&t, x, n, 5, 1, REAP_TIMEOUT_MS, REAP_MAX) > 0)
			;
		if (t.accepted < n) {
			r = dmaio_queue_submit(t.q, ios + t.accepted, n - (unsigned)t.accepted);
			if (r != (int)(n - t.accepted))
				test_fail("%s: on an empty queue dmaio_queue_submit(%u) = %s", name,
					  n - (unsigned)t.accepted, test_errname(r));
			if (r > 0) {
				t.bytes_submitted += (unsigned)r * len;
				t.accepted += (unsigned)r;
			}
		}
		while (t.accepted > t.reaped &&
		       reap_some(&t, x, n, 5, 1, REAP_TIMEOUT_MS, REAP_MAX) > 0)
			;
	}
	for (i = 0; i < n; i++)
		if (x[i].seen != 1)
			test_fail("%s: range %u completed %u times", name, i, x[i].seen);
	progress_check(&t, "at the end", true);
	verify_reads(b, 0, x, n, f, name);
	printf("# %s: capacity %u checked\n", name, cap);
	dmaio_queue_free(t.q);
	free(x);
	free(ios);
}

static void test_full(void **state)
{
	unsigned before = test_failures();
	struct qbuf b;
	struct qfile f;
	struct rng rg;

	(void)state;
	rng_init(&rg, 4);
	qbuf_alloc_or_skip(&b, ctx, 1 * MiB, 0, "full");
	qfile_create(&f, ctx, 512 * KiB + 5, SEED_FILE, 0);
	full_case(&b, &f, 1, 4096, &rg);
	full_case(&b, &f, 2, 3000, &rg);
	full_case(&b, &f, 0, 4096, &rg);
	full_case(&b, &f, DMAIO_QUEUE_DEPTH_MAX, 1, &rg);
	qfile_free(&f);
	qbuf_free(&b);
	assert_no_failures_since(before);
}

/* ------------------------------------------------------------------------------------------ */
/* 5. Readiness of dmaio_queue_fd() */

static int poll_in(int fd, int timeout_ms)
{
	struct pollfd p = { .fd = fd, .events = POLLIN };
	int r;

	do
		r = poll(&p, 1, timeout_ms);
	while (r < 0 && errno == EINTR);
	if (r < 0)
		return -errno;
	if (r > 0 && (p.revents & (POLLERR | POLLNVAL)))
		return -EIO;
	return r > 0 && (p.revents & POLLIN);
}

/* After draining, an idle queue must stop polling readable (a spurious wake-up or two allowed). */
static void check_idle(struct qtrack *t, int qfd, const char *when)
{
	struct dmaio_done out[4] = { { .struct_size = sizeof(struct dmaio_done) } };
	int i, r;

	for (i = 0; i < 4; i++) {
		r = poll_in(qfd, 0);
		if (r == 0)
			return;
		if (r < 0) {
			test_fail("poll: poll(queue fd) %s = %s", when, test_errname(r));
			return;
		}
		r = dmaio_queue_reap(t->q, out, 4, 0, 0);
		if (r != 0) {
			test_fail("poll: %s, the queue fd was readable and reap returned %s", when,
				  test_errname(r));
			return;
		}
	}
	test_fail("poll: the fd of an idle, empty queue stays readable (%s)", when);
}

static void test_poll(void **state)
{
	unsigned before = test_failures(), n = args.quick ? 60 : 200, i, loops = 0, empty = 0,
		 round;
	struct dmaio_done out[REAP_MAX] = { { .struct_size = sizeof(struct dmaio_done) } };
	struct layout l;
	struct qtrack t;
	struct qbuf b;
	struct qfile f, wf;
	struct xio *x;
	struct rng rg;
	uint64_t acc0;
	int qfd, r, k;
	double t0;

	(void)state;
	rng_init(&rg, 5);
	qbuf_alloc_or_skip(&b, ctx, 8 * MiB, 0, "poll");
	qfile_create(&f, ctx, 4 * MiB + 17, SEED_FILE, 0);
	qfile_create(&wf, ctx, 0, SEED_DEST, 1ull << 32);
	assert_int_equal(qtrack_new(&t, ctx, 8, "poll"), 0);
	qfd = dmaio_queue_fd(t.q);
	if (qfd < 0)
		fail_msg("dmaio_queue_fd = %s", test_errname(qfd));
	r = fcntl(qfd, F_GETFD);
	if (r < 0 || !(r & FD_CLOEXEC))
		test_fail("poll: the queue fd is not close-on-exec (F_GETFD %d)", r);
	if (dmaio_queue_fd(t.q) != qfd)
		test_fail("poll: dmaio_queue_fd changed between two calls");
	r = poll_in(qfd, 0);
	if (r != 0)
		test_fail("poll: a new queue's fd polls %s", r > 0 ? "readable" : test_errname(r));
	x = calloc(n, sizeof(*x));
	assert_non_null(x);

	for (round = 0; round < 2 && test_failures() == before; round++) {
		/* reads into disjoint ranges of the buffer's first half, writes from its second */
		qbuf_fill(&b, 0, 4 * MiB, SEED_GUARD);
		qbuf_fill(&b, 4 * MiB, 4 * MiB, SEED_BUF);
		memset(&l, 0, sizeof(l));
		l.n = 2;
		l.cap[0] = 4 * MiB;
		l.cap[1] = 4 * MiB; /* file region of the writes */
		for (i = 0; i < n; i++) {
			uint64_t len = 1 + rndn(&rg, 64 * KiB), off;
			int c;

			do
				c = layout_place(&l, &rg, len, &off);
			while (c < 0 && (len /= 2) > 0);
			if (c < 0)
				break;
			if (c == 0)
				xio_set(&x[i], DMAIO_OP_READ, DMAIO_PATH_AUTO, false, &b, 0, off, &f,
					0, (int64_t)rndn(&rg, f.size + 4096), len);
			else
				xio_set(&x[i], DMAIO_OP_WRITE, DMAIO_PATH_AUTO, false, &b, 0,
					4 * MiB + rndn(&rg, 4 * MiB - len), &wf, 1,
					(int64_t)(off + round * 4 * MiB), len);
			x[i].io.user_data = (uint64_t)(10 + round) << 32 | i;
			x[i].seen = 0;
		}
		n = i;
		/* all in (the queue holds 32), then an event loop: poll, reap(0, 0), submit */
		t0 = test_now();
		acc0 = t.accepted;
		i = 0;
		while ((i < n || t.accepted > t.reaped) && test_failures() == before) {
			if (i < n) {
				struct dmaio_io ios[32] = { { .struct_size = sizeof(struct dmaio_io) } };
				unsigned m = n - i < 32 ? n - i : 32, j;

				for (j = 0; j < m; j++)
					ios[j] = x[i + j].io;
				r = dmaio_queue_submit(t.q, ios, m);
				if (r > 0) {
					for (j = 0; j < (unsigned)r; j++)
						t.bytes_submitted += x[i + j].io.len;
					t.accepted += (unsigned)r;
					i += (unsigned)r;
				} else if (r != -EAGAIN) {
					test_fail("poll: dmaio_queue_submit = %s", test_errname(r));
					break;
				}
			}
			if (t.accepted == t.reaped)
				continue;
			r = poll_in(qfd, 10000);
			if (r < 0) {
				test_fail("poll: poll = %s", test_errname(r));
				break;
			}
			if (r == 0) {
				struct dmaio_progress pg = { .struct_size = sizeof(struct dmaio_progress) };

				memset(&pg, 0, sizeof(pg));
				pg.struct_size = sizeof(pg);
				dmaio_queue_get_progress(t.q, &pg);
				r = dmaio_queue_reap(t.q, out, REAP_MAX, 0, 0);
				test_fail("poll: round %u: the queue fd not readable in 10 s with "
					  "%llu ranges outstanding (progress: %llu completed, %llu "
					  "reaped); then dmaio_queue_reap(min 0, timeout 0) = %s",
					  round, (unsigned long long)(t.accepted - t.reaped),
					  (unsigned long long)pg.completed,
					  (unsigned long long)pg.reaped, test_errname(r));
				for (k = 0; k < r; k++)
					take_done(&t, x, n, 10 + round, &out[k]);
				break;
			}
			r = dmaio_queue_reap(t.q, out, REAP_MAX, 0, 0);
			if (r < 0) {
				test_fail("poll: dmaio_queue_reap(min 0, timeout 0) = %s",
					  test_errname(r));
				break;
			}
			for (k = 0; k < r; k++)
				take_done(&t, x, n, 10 + round, &out[k]);
			if (r == 0)
				empty++;
			loops++;
			if (test_now() - t0 > 300) {
				test_fail("poll: the event loop ran for 300 s (%u loops, %u empty "
					  "reaps, %llu outstanding)", loops, empty,
					  (unsigned long long)(t.accepted - t.reaped));
				break;
			}
		}
		for (i = 0; i < n && t.accepted - acc0 == n && t.accepted == t.reaped; i++)
			if (x[i].seen != 1)
				test_fail("poll: range %u completed %u times", i, x[i].seen);
		for (i = 0; i < n; i++)
			if (x[i].io.op == DMAIO_OP_WRITE && x[i].d.res == x[i].exp) {
				ref_reserve(&wf, (size_t)x[i].io.file_off + x[i].io.len);
				pat_fill(wf.ref + x[i].io.file_off, x[i].io.len, SEED_BUF,
					 x[i].io.buf_off);
				if ((size_t)x[i].io.file_off + x[i].io.len > wf.size)
					wf.size = (size_t)x[i].io.file_off + x[i].io.len;
			}
		progress_check(&t, "after the event loop", true);
		verify_reads_lim(&b, 0, x, n, (struct qfile[]){ f, wf }, "poll", 4 * MiB);
		qfile_verify(&wf, "poll (writes)");
		check_idle(&t, qfd, "after the event loop");
		printf("# poll: round %u: %u ranges, %u poll+reap loops (%u reaped nothing)\n",
		       round, n, loops, empty);
	}
	free(x);
	dmaio_queue_free(t.q);
	qfile_free(&f);
	qfile_free(&wf);
	qbuf_free(&b);
	assert_no_failures_since(before);
}

/* ------------------------------------------------------------------------------------------ */
/* 6. Cancellation */

/* Every byte of a cancelled read's range is the file's byte or the untouched guard. */
static void check_cancelled_read(struct qbuf *b, const struct xio *e, struct qfile *f)
{
	const uint8_t *m = b->map + e->io.buf_off;
	uint64_t avail = e->exp > 0 ? (uint64_t)e->exp : 0, i;
	char desc[200];

	describe(e, desc, sizeof(desc));
	for (i = 0; i < e->io.len; i++) {
		uint8_t g = pat_byte(SEED_GUARD, b->sbase + e->io.buf_off + i);
		bool file_ok = i < avail && m[i] == f->ref[e->io.file_off + (int64_t)i];

		if (i < e->d.done && !file_ok) {
			test_fail("cancel: %s: byte %llu of the %llu done is not the file's "
				  "(0x%02x)",
				  desc, (unsigned long long)i, (unsigned long long)e->d.done, m[i]);
			return;
		}
		if (!file_ok && m[i] != g) {
			test_fail("cancel: %s (cancelled, done %llu): byte %llu is 0x%02x, neither "
				  "the file's%s nor the guard 0x%02x",
				  desc, (unsigned long long)e->d.done, (unsigned long long)i, m[i],
				  i < avail ? "" : " (past EOF)", g);
			return;
		}
	}
}

/* Every byte of a cancelled write's range is the new byte or the old one. */
static void check_cancelled_write(struct qbuf *b, const struct xio *e, struct qfile *f,
				  const uint8_t *file_now)
{
	uint64_t i;
	char desc[200];

	describe(e, desc, sizeof(desc));
	for (i = 0; i < e->io.len; i++) {
		uint64_t o = (uint64_t)e->io.file_off + i;
		uint8_t nw = pat_byte(SEED_BUF, b->sbase + e->io.buf_off + i);
		uint8_t old = o < f->size ? f->ref[o] : 0;

		if (i < e->d.done && file_now[o] != nw) {
			test_fail("cancel: %s: byte %llu of the %llu done is not the buffer's",
				  desc, (unsigned long long)i, (unsigned long long)e->d.done);
			return;
		}
		if (file_now[o] != nw && file_now[o] != old) {
			test_fail("cancel: %s (cancelled, done %llu): file byte %llu is 0x%02x, "
				  "neither "
				  "new 0x%02x nor old 0x%02x", desc, (unsigned long long)e->d.done,
				  (unsigned long long)o, file_now[o], nw, old);
			return;
		}
	}
}

/*
 * Submit reads (into the first half of the buffer) and writes (from the second half, to
 * disjoint ranges of @wf), cancel at once (all, or the one of index @one), reap, check.
 * Returns the number of ranges cancelled.
 */
enum { CANCEL_NONE, CANCEL_ALL, CANCEL_ONE };

static int cancel_round(struct qtrack *t, struct qbuf *b, struct qfile *f, struct qfile *wf,
			unsigned n, uint64_t maxlen, int mode, uint64_t tag, struct rng *rg)
{
	struct xio *x = calloc(n, sizeof(*x));
	size_t half = b->size / 2, fsz0 = wf->size;
	struct dmaio_io *ios = calloc(n, sizeof(*ios));
	unsigned i, ncanc = 0, one;
	struct layout l;
	uint8_t *file_now;
	int r, c, cr;

	assert_true(x && ios);
	qbuf_fill(b, 0, half, SEED_GUARD);
	qbuf_fill(b, half, b->size - half, SEED_BUF);
	memset(&l, 0, sizeof(l));
	l.n = 2;
	l.cap[0] = half;
	l.cap[1] = wf->size + MiB;
	for (i = 0; i < n; i++) {
		uint64_t len = 1 + rndn(rg, maxlen), off;

		c = layout_place(&l, rg, len, &off);
		if (c < 0)
			break;
		if (c == 0)
			xio_set(&x[i], DMAIO_OP_READ, DMAIO_PATH_AUTO, false, b, 0, off, f, 0,
				(int64_t)rndn(rg, f->size + 8192), len);
		else
			xio_set(&x[i], DMAIO_OP_WRITE, DMAIO_PATH_AUTO, false, b, 0,
				half + rndn(rg, b->size - half - len), wf, 1, (int64_t)off, len);
		x[i].io.user_data = tag << 32 | i;
		ios[i] = x[i].io;
	}
	n = i;
	one = n - 1; /* CANCEL_ONE: the last of the batch */
	/* cold data: reads that go to the device, not memory copies done inside the submit */
	fdatasync(f->vfd);
	posix_fadvise(f->vfd, 0, 0, POSIX_FADV_DONTNEED);
	for (i = 0; i < n; i++)
		x[i].may_cancel = mode == CANCEL_ALL || (mode == CANCEL_ONE && i == one);
	r = dmaio_queue_submit(t->q, ios, n);
	if (r != (int)n) {
		test_fail("cancel: dmaio_queue_submit(%u) = %s (queue capacity %u)", n, test_errname(r),
			  t->cap);
		if (r > 0)
			t->accepted += (unsigned)r;
		dmaio_queue_cancel(t->q, 0, DMAIO_CANCEL_ALL);
		while (t->accepted > t->reaped &&
		       reap_some(t, x, n, tag, 1, REAP_TIMEOUT_MS, REAP_MAX) > 0)
			;
		free(x);
		free(ios);
		return 0;
	}
	for (i = 0; i < n; i++)
		t->bytes_submitted += x[i].io.len;
	t->accepted += n;
	if (mode == CANCEL_ALL)
		cr = dmaio_queue_cancel(t->q, 0, DMAIO_CANCEL_ALL);
	else if (mode == CANCEL_ONE)
		cr = dmaio_queue_cancel(t->q, x[one].io.user_data, 0);
	else
		cr = 0;
	if (cr < 0 || (unsigned)cr > (mode == CANCEL_ALL ? n : 1))
		test_fail("cancel: dmaio_queue_cancel(%s) = %s with %u ranges",
			  mode == CANCEL_ALL ? "all" : "one", test_errname(cr), n);
	while (t->accepted > t->reaped &&
	       reap_some(t, x, n, tag, 1, REAP_TIMEOUT_MS, REAP_MAX) > 0)
		;
	for (i = 0; i < n; i++) {
		if (x[i].seen != 1)
			test_fail("cancel: range %u completed %u times", i, x[i].seen);
		if (x[i].d.res == -ECANCELED)
			ncanc++;
	}
	if (cr >= 0 && ncanc != (unsigned)cr)
		test_fail("cancel: dmaio_queue_cancel said %d cancelled, %u completions are -ECANCELED",
			  cr, ncanc);
	progress_check(t, "after cancelling", true);

	/* reads: cancelled ones byte by byte, then every other byte of the buffer exactly */
	cpu_begin(b, DMAIO_SYNC_READ);
	for (i = 0; i < n; i++)
		if (x[i].io.op == DMAIO_OP_READ && x[i].d.res == -ECANCELED)
			check_cancelled_read(b, &x[i], f);
	cpu_end(b, DMAIO_SYNC_READ);
	verify_reads_lim(b, 0, x, n, (struct qfile[]){ *f, *wf }, "cancel", half);

	/* writes: the file must be the reference, but cancelled ranges may hold old or new bytes */
	{
		struct stat st;
		size_t maxend = fsz0;
		long long d;

		for (i = 0; i < n; i++)
			if (x[i].io.op == DMAIO_OP_WRITE) {
				size_t end = (size_t)x[i].io.file_off + x[i].io.len;

				if (x[i].d.res == x[i].exp) {
					ref_reserve(wf, end);
					pat_fill(wf->ref + x[i].io.file_off, x[i].io.len, SEED_BUF,
						 b->sbase + x[i].io.buf_off);
					if (end > wf->size)
						wf->size = end;
				}
				if (end > maxend)
					maxend = end;
			}
		assert_int_equal(fstat(wf->vfd, &st), 0);
		if ((size_t)st.st_size < wf->size || (size_t)st.st_size > maxend)
			test_fail("cancel: the written file has %lld bytes, expected %zu .. %zu",
				  (long long)st.st_size, wf->size, maxend);
		file_now = calloc(1, (maxend > (size_t)st.st_size ? maxend : (size_t)st.st_size) + 1);
		assert_non_null(file_now);
		assert_true(pread_full(wf->vfd, file_now, (size_t)st.st_size, 0) >= 0);
		cpu_begin(b, DMAIO_SYNC_READ);
		for (i = 0; i < n; i++)
			if (x[i].io.op == DMAIO_OP_WRITE && x[i].d.res == -ECANCELED)
				check_cancelled_write(b, &x[i], wf, file_now);
		cpu_end(b, DMAIO_SYNC_READ);
		/* adopt what the cancelled writes left, then everything must match */
		ref_reserve(wf, (size_t)st.st_size);
		for (i = 0; i < n; i++) {
			uint64_t off = x[i].io.file_off, sz = (uint64_t)st.st_size;

			/* a cancelled write starting at or past the file's end left nothing */
			if (x[i].io.op == DMAIO_OP_WRITE && x[i].d.res == -ECANCELED && off < sz)
				memcpy(wf->ref + off, file_now + off,
				       x[i].io.len < sz - off ? x[i].io.len : sz - off);
		}
		if ((size_t)st.st_size > wf->size)
			wf->size = (size_t)st.st_size;
		d = mem_first_diff(file_now, wf->ref, wf->size);
		if (d >= 0) {
			test_fail("cancel: the written file differs at byte %lld (outside every "
				  "cancelled range)", d);
			report_bytes("file", file_now, wf->ref, wf->size, (size_t)d);
		}
		free(file_now);
	}
	if (mode == CANCEL_ONE)
		printf("# cancel one (range %u of %u): cancel returned %d\n", one, n, cr);
	else if (mode == CANCEL_ALL)
		printf("# cancel all: %u ranges, %u cancelled\n", n, ncanc);
	free(x);
	free(ios);
	return cr;
}

static void test_cancel(void **state)
{
	unsigned before = test_failures(), i, ones = 0, all_canc = 0;
	struct dmaio_done out[4] = { { .struct_size = sizeof(struct dmaio_done) } };
	struct qtrack t, t2;
	struct qbuf b;
	struct qfile f, wf;
	struct rng rg;
	int r;

	(void)state;
	rng_init(&rg, 6);
	qbuf_alloc_or_skip(&b, ctx, args.quick ? 8 * MiB : 16 * MiB, 0, "cancel");
	qfile_create(&f, ctx, 6 * MiB + 99, SEED_FILE, 0);
	qfile_create(&wf, ctx, 256 * KiB + 1, SEED_DEST, 1ull << 32);
	assert_int_equal(qtrack_new(&t, ctx, 32, "cancel"), 0); /* holds 128 */

	/* cancelling an empty queue cancels nothing */
	r = dmaio_queue_cancel(t.q, 0, DMAIO_CANCEL_ALL);
	if (r != 0)
		test_fail("cancel: dmaio_queue_cancel(all) of an empty queue = %s", test_errname(r));
	r = dmaio_queue_cancel(t.q, 12345, 0);
	if (r != 0)
		test_fail("cancel: dmaio_queue_cancel(12345) of an empty queue = %s", test_errname(r));

	for (i = 0; i < (args.quick ? 2u : 4u) && test_failures() == before; i++) {
		r = cancel_round(&t, &b, &f, &wf, 120, 256 * KiB, CANCEL_ALL, 100 + i, &rg);
		if (r > 0)
			all_canc += (unsigned)r;
	}
	if (test_failures() == before && all_canc == 0)
		test_fail("cancel: DMAIO_CANCEL_ALL right after submitting 120 ranges never "
			  "cancelled any (does dmaio_queue_submit wait for I/O?)");
	/* the queue works normally after a cancellation */
	if (test_failures() == before)
		cancel_round(&t, &b, &f, &wf, 40, 64 * KiB, CANCEL_NONE, 200, &rg);
	/* one: a user_data that is not in the queue, then the last of a batch */
	if (test_failures() == before) {
		assert_int_equal(qtrack_new(&t2, ctx, 2, "cancel-one"), 0); /* 2 chunks in flight */
		for (i = 0; i < 4 && test_failures() == before; i++) {
			r = cancel_round(&t2, &b, &f, &wf, 8, 2 * MiB, CANCEL_ONE, 300 + i, &rg);
			if (r == 1)
				ones++;
		}
		r = dmaio_queue_cancel(t2.q, 300ull << 32 | 7, 0);
		if (r != 0)
			test_fail("cancel: dmaio_queue_cancel of a reaped range's user_data = %s",
				  test_errname(r));
		if (test_failures() == before && ones == 0)
			test_fail("cancel: cancelling the last of 8 ranges of 2 MiB (queue depth "
				  "2) right after submitting never cancelled it");
		r = dmaio_queue_reap(t2.q, out, 4, 0, 0);
		if (r != 0)
			test_fail("cancel: reap after everything = %s", test_errname(r));
		dmaio_queue_free(t2.q);
	}
	/* a queue freed with ranges in flight: no hang, no crash, buffers and files usable */
	if (test_failures() == before) {
		struct dmaio_io ios[16] = { { .struct_size = sizeof(struct dmaio_io) } };

		qbuf_fill(&b, 0, b.size, SEED_GUARD);
		assert_int_equal(qtrack_new(&t2, ctx, 4, "free-busy"), 0);
		for (i = 0; i < 16; i++) {
			struct xio x;

			xio_set(&x, DMAIO_OP_READ, DMAIO_PATH_AUTO, false, &b, 0, i * 512 * KiB, &f,
				0, (int64_t)(i * 300 * KiB), 512 * KiB);
			ios[i] = x.io;
		}
		r = dmaio_queue_submit(t2.q, ios, 16);
		if (r != 16)
			test_fail("free-busy: dmaio_queue_submit(16) = %s", test_errname(r));
		dmaio_queue_free(t2.q);
		/* nothing may write after the free: the buffer keeps what it has now */
		{
			uint8_t *snap = malloc(b.size);

			assert_non_null(snap);
			cpu_begin(&b, DMAIO_SYNC_READ);
			memcpy(snap, b.map, b.size);
			cpu_end(&b, DMAIO_SYNC_READ);
			usleep(100 * 1000);
			cpu_begin(&b, DMAIO_SYNC_READ);
			if (mem_first_diff(snap, b.map, b.size) >= 0)
				test_fail("free-busy: the buffer changed after dmaio_queue_free "
					  "returned");
			cpu_end(&b, DMAIO_SYNC_READ);
			free(snap);
		}
	}
	dmaio_queue_free(t.q);
	qfile_free(&f);
	qfile_free(&wf);
	qbuf_free(&b);
	assert_no_failures_since(before);
}

/* ------------------------------------------------------------------------------------------ */
/* 7. Timeouts and arguments */

#define EXPECT(call, want)                                                                 \
	do {                                                                               \
		long r_ = (long)(call);                                                    \
		if (r_ != (long)(want))                                                    \
			test_fail("args: %s = %s, expected %s", #call, test_errname(r_),       \
				  test_errname(want));                                         \
	} while (0)

/* Use up every descriptor below a lowered RLIMIT_NOFILE, call @fn, give everything back. */
static void with_no_fds(int src, void (*fn)(void *), void *arg)
{
	struct rlimit old, low;
	int *dups, n = 0, fd;

	if (test_under_valgrind()) {
		printf("# args: -EMFILE checks not run under valgrind\n");
		return;
	}
	assert_int_equal(getrlimit(RLIMIT_NOFILE, &old), 0);
	low = old;
	low.rlim_cur = 512;
	if (old.rlim_cur < low.rlim_cur)
		low.rlim_cur = old.rlim_cur;
	assert_int_equal(setrlimit(RLIMIT_NOFILE, &low), 0);
	dups = calloc(low.rlim_cur, sizeof(int));
	assert_non_null(dups);
	while ((fd = fcntl(src, F_DUPFD_CLOEXEC, 0)) >= 0)
		dups[n++] = fd;
	if (errno != EMFILE)
		test_fail("args: filling the fd table ended with %s", strerror(errno));
	fn(arg);
	while (n > 0)
		close(dups[--n]);
	free(dups);
	assert_int_equal(setrlimit(RLIMIT_NOFILE, &old), 0);
}

struct emfile_arg {
	int fd;
	int rq, rf;
	struct dmaio_queue *q;
	struct dmaio_file *f;
};

static void emfile_fn(void *p)
{
	struct emfile_arg *a = p;

	a->rq = dmaio_queue_new(ctx, 4, 0, &a->q);
	a->rf = dmaio_file_open(ctx, a->fd, 0, &a->f);
}

static void test_args(void **state)
{
	unsigned before = test_failures();
	struct dmaio_file_info fi = { .struct_size = sizeof(struct dmaio_file_info) };
	struct dmaio_progress pr = { .struct_size = sizeof(struct dmaio_progress) };
	struct dmaio_done out[4] = { { .struct_size = sizeof(struct dmaio_done) } };
	struct dmaio_queue *q = NULL, *q2 = NULL;
	struct dmaio_file *f = NULL, *fro = NULL, *fwo = NULL, *fapp = NULL, *fo = NULL;
	struct dmaio_ctx *ctx2 = NULL;
	struct emfile_arg ea;
	struct qbuf b, ob;
	struct qfile qf;
	struct dmaio_io io = { .struct_size = sizeof(struct dmaio_io) };
	struct xio x;
	int pfd[2], sfd[2], fd, efd, dfd, r;
	unsigned depth;
	double t0, dt;

	(void)state;
	qbuf_alloc_or_skip(&b, ctx, 64 * KiB, 0, "args");
	qfile_create(&qf, ctx, 64 * KiB, SEED_FILE, 0);

	/* dmaio_queue_new */
	EXPECT(dmaio_queue_new(ctx, 4, 0, NULL), -EINVAL);
	EXPECT(dmaio_queue_new(ctx, 4, 1, &q), -EINVAL);
	EXPECT(dmaio_queue_new(ctx, 4, ~0u, &q), -EINVAL);
	EXPECT(dmaio_queue_new(ctx, DMAIO_QUEUE_DEPTH_MAX + 1, 0, &q), -EINVAL);
	EXPECT(dmaio_queue_new(ctx, ~0u, 0, &q), -EINVAL);
	if (q)
		test_fail("args: a refused dmaio_queue_new set *q");
	for (depth = 0; depth <= DMAIO_QUEUE_DEPTH_MAX; depth += depth < 2 ? 1 : 127) {
		r = dmaio_queue_new(ctx, depth, 0, &q);
		if (r)
			test_fail("args: dmaio_queue_new(depth %u) = %s", depth, test_errname(r));
		else
			dmaio_queue_free(q);
		q = NULL;
	}
	r = dmaio_queue_new(ctx, DMAIO_QUEUE_DEPTH_MAX, 0, &q);
	if (r)
		test_fail("args: dmaio_queue_new(DMAIO_QUEUE_DEPTH_MAX) = %s", test_errname(r));
	dmaio_queue_free(q);
	r = dmaio_queue_new(NULL, 4, 0, &q2); /* the default context */
	if (r)
		test_fail("args: dmaio_queue_new(NULL ctx) = %s", test_errname(r));
	dmaio_queue_free(q2);
	dmaio_queue_free(NULL);
	assert_int_equal(dmaio_queue_new(ctx, 4, 0, &q), 0);

	/* -ENODATA: min 1 on a queue that holds no range, whatever the timeout, at once (a
	 * loop waiting for completions that can never come sees an error, not a timeout) */
	for (int k = 0; k < 3; k++) {
		static const int tmo[3] = { 50, 0, -1 };

		t0 = test_now();
		r = dmaio_queue_reap(q, out, 4, 1, tmo[k]);
		dt = test_now() - t0;
		if (r != -ENODATA || dt > 1.0)
			test_fail("args: dmaio_queue_reap(min 1, %d ms) of an empty queue = %s after "
				  "%.3f s, expected -ENODATA at once", tmo[k], test_errname(r), dt);
	}
	EXPECT(dmaio_queue_reap(q, out, 4, 0, 0), 0);
	EXPECT(dmaio_queue_reap(q, out, 4, 0, 50), 0);

	/* dmaio_queue_reap, dmaio_queue_cancel, dmaio_queue_fd, dmaio_queue_get_progress: arguments, while a
	 * completion waits (a refused call must not take it) */
	qbuf_fill(&b, 0, b.size, SEED_GUARD);
	xio_set(&x, DMAIO_OP_READ, DMAIO_PATH_AUTO, false, &b, 0, 100, &qf, 0, 65536 - 995, 1000);
	x.io.user_data = 42;
	EXPECT(dmaio_queue_submit(q, &x.io, 1), 1);
	EXPECT(dmaio_queue_reap(NULL, out, 4, 0, 0), -EINVAL);
	EXPECT(dmaio_queue_reap(q, NULL, 4, 0, 0), -EINVAL);
	EXPECT(dmaio_queue_reap(q, out, 0, 0, 0), -EINVAL);
	EXPECT(dmaio_queue_reap(q, out, 2, 3, 0), -EINVAL);
	EXPECT(dmaio_queue_reap(q, out, 0, 1, 0), -EINVAL);
	EXPECT(dmaio_queue_cancel(NULL, 0, DMAIO_CANCEL_ALL), -EINVAL);
	EXPECT(dmaio_queue_cancel(q, 42, 2), -EINVAL);
	EXPECT(dmaio_queue_cancel(q, 42, ~0u), -EINVAL);
	EXPECT(dmaio_queue_cancel(q, 42, DMAIO_CANCEL_ALL | 4), -EINVAL);
	EXPECT(dmaio_queue_fd(NULL), -EINVAL);
	EXPECT(dmaio_queue_get_progress(NULL, &pr), -EINVAL);
	EXPECT(dmaio_queue_get_progress(q, NULL), -EINVAL);
	memset(out, 0, sizeof(out));
	out[0].struct_size = sizeof(out[0]);
	r = dmaio_queue_reap(q, out, 4, 1, REAP_TIMEOUT_MS);
	if (r != 1 || out[0].user_data != 42 || out[0].res != 995)
		test_fail("args: after the refused calls, reap = %s (user_data %llu res %lld), "
			  "expected the range (42, 995)", test_errname(r),
			  (unsigned long long)out[0].user_data, (long long)out[0].res);
	EXPECT(dmaio_queue_get_progress(q, &pr), 0);
	if (pr.submitted != 1 || pr.completed != 1 || pr.reaped != 1 || pr.cancelled != 0 ||
	    pr.bytes_submitted != 1000 || pr.bytes_done != 995)
		test_fail("args: progress %llu/%llu/%llu/%llu bytes %llu/%llu, expected 1/1/1/0 "
			  "995/1000", (unsigned long long)pr.submitted,
			  (unsigned long long)pr.completed, (unsigned long long)pr.reaped,
			  (unsigned long long)pr.cancelled, (unsigned long long)pr.bytes_done,
			  (unsigned long long)pr.bytes_submitted);
	/* a range of length 0 completes with 0 */
	x.io.len = 0;
	x.io.user_data = 43;
	EXPECT(dmaio_queue_submit(q, &x.io, 1), 1);
	r = dmaio_queue_reap(q, out, 4, 1, REAP_TIMEOUT_MS);
	if (r != 1 || out[0].user_data != 43 || out[0].res != 0 || out[0].done != 0)
		test_fail("args: a range of length 0: reap = %s (user_data %llu res %lld)",
			  test_errname(r), (unsigned long long)out[0].user_data,
			  (long long)out[0].res);
	cpu_begin(&b, DMAIO_SYNC_READ);
	if (pat_check(b.map + 100, 995, SEED_FILE, 65536 - 995) >= 0 ||
	    pat_check(b.map, 100, SEED_GUARD, 0) >= 0 ||
	    pat_check(b.map + 1095, b.size - 1095, SEED_GUARD, 1095) >= 0)
		test_fail("args: the 995-byte read is not byte-exact");
	cpu_end(&b, DMAIO_SYNC_READ);

	/* dmaio_file_open */
	fd = open(qf.path, O_RDWR | O_CLOEXEC);
	assert_true(fd >= 0);
	EXPECT(dmaio_file_open(ctx, fd, 0, NULL), -EINVAL);
	EXPECT(dmaio_file_open(ctx, fd, 1, &f), -EINVAL);
	EXPECT(dmaio_file_open(ctx, fd, ~0u, &f), -EINVAL);
	EXPECT(dmaio_file_open(ctx, -1, 0, &f), -EBADF);
	EXPECT(dmaio_file_open(ctx, INT_MIN, 0, &f), -EBADF);
	dfd = open("/", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	assert_true(dfd >= 0);
	EXPECT(dmaio_file_open(ctx, dfd, 0, &f), -EISDIR);
	close(dfd);
	EXPECT(dmaio_file_open(ctx, dfd, 0, &f), -EBADF); /* closed */
	dfd = open(qf.path, O_PATH | O_CLOEXEC);
	assert_true(dfd >= 0);
	EXPECT(dmaio_file_open(ctx, dfd, 0, &f), -EBADF);
	close(dfd);
	assert_int_equal(pipe2(pfd, O_CLOEXEC), 0);
	EXPECT(dmaio_file_open(ctx, pfd[0], 0, &f), -ESPIPE);
	EXPECT(dmaio_file_open(ctx, pfd[1], 0, &f), -ESPIPE);
	close(pfd[0]);
	close(pfd[1]);
	assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sfd), 0);
	EXPECT(dmaio_file_open(ctx, sfd[0], 0, &f), -ESPIPE);
	close(sfd[0]);
	close(sfd[1]);
	dfd = open("/dev/null", O_RDWR | O_CLOEXEC);
	assert_true(dfd >= 0);
	EXPECT(dmaio_file_open(ctx, dfd, 0, &f), -ESPIPE);
	close(dfd);
	efd = eventfd(0, EFD_CLOEXEC);
	assert_true(efd >= 0);
	EXPECT(dmaio_file_open(ctx, efd, 0, &f), -EINVAL);
	close(efd);
	if (kind != DMAIO_BUF_MEMFD)
		EXPECT(dmaio_file_open(ctx, dmaio_buf_fd(b.buf), 0, &f), -EINVAL);
	if (f)
		test_fail("args: a refused dmaio_file_open set *file");
	r = dmaio_file_open(NULL, fd, 0, &fo); /* the default context */
	if (r)
		test_fail("args: dmaio_file_open(NULL ctx) = %s", test_errname(r));
	dmaio_file_close(NULL);
	/* -EMFILE for queues and files */
	memset(&ea, 0, sizeof(ea));
	ea.fd = fd;
	with_no_fds(fd, emfile_fn, &ea);
	if (!test_under_valgrind()) {
		if (ea.rq != -EMFILE)
			test_fail("args: dmaio_queue_new with no fd left = %s, expected -EMFILE",
				  test_errname(ea.rq));
		if (ea.rf != -EMFILE)
			test_fail("args: dmaio_file_open with no fd left = %s, expected -EMFILE",
				  test_errname(ea.rf));
		dmaio_queue_free(ea.q);
		dmaio_file_close(ea.f);
	}

	/* dmaio_file_get_info */
	EXPECT(dmaio_file_get_info(NULL, &fi), -EINVAL);
	EXPECT(dmaio_file_get_info(qf.f, NULL), -EINVAL);
	EXPECT(dmaio_file_get_info(qf.f, &fi), 0);

	/* dmaio_file_read / dmaio_file_write: each documented errno */
	fro = open_reg(ctx, qf.path, O_RDONLY);
	fwo = open_reg(ctx, qf.path, O_WRONLY);
	fapp = open_reg(ctx, qf.path, O_RDWR | O_APPEND);
	assert_int_equal(dmaio_ctx_new(0, &ctx2), 0);
	assert_int_equal(qbuf_alloc(&ob, ctx2, 4096, 0), 0);
	{
		struct {
			struct dmaio_file *f;
			struct dmaio_buf *b;
			off_t foff;
			size_t boff, len;
			unsigned flags;
			int rd, wr; /* expected of a read, of a write */
			const char *what;
		} c[] = {
			{ NULL, b.buf, 0, 0, 16, 0, -EINVAL, -EINVAL, "file NULL" },
			{ qf.f, NULL, 0, 0, 16, 0, -EINVAL, -EINVAL, "buf NULL" },
			{ qf.f, b.buf, 0, 0, 16, 1u << 5, -EINVAL, -EINVAL, "flags 1<<5" },
			{ qf.f, b.buf, 0, 0, 16, ~0u, -EINVAL, -EINVAL, "flags ~0" },
			{ qf.f, b.buf, 0, 0, 16, DMAIO_RW_PATH(7), -EINVAL, -EINVAL, "path 7" },
			{ qf.f, b.buf, -1, 0, 16, 0, -EOVERFLOW, -EOVERFLOW, "file_off -1 (2^64 - 1)" },
			{ qf.f, b.buf, INT64_MIN, 0, 0, 0, -EOVERFLOW, -EOVERFLOW, "file_off 2^63" },
			{ qf.f, b.buf, 0, b.size, 1, 0, -EINVAL, -EINVAL, "buf_off size" },
			{ qf.f, b.buf, 0, b.size + 1, 0, 0, -EINVAL, -EINVAL, "buf_off size+1 len 0" },
			{ qf.f, b.buf, 0, 0, b.size + 1, 0, -EINVAL, -EINVAL, "len size+1" },
			{ qf.f, ob.buf, 0, 0, 16, 0, -EINVAL, -EINVAL, "buffer of another ctx" },
			{ qf.f, b.buf, 0, SIZE_MAX, 1, 0, -EOVERFLOW, -EOVERFLOW, "buf_off overflow" },
			{ qf.f, b.buf, 0, 1, SIZE_MAX, 0, -EOVERFLOW, -EOVERFLOW, "len overflow" },
			{ qf.f, b.buf, INT64_MAX, 0, 1, 0, -EOVERFLOW, -EOVERFLOW, "file_off overflow" },
			{ qf.f, b.buf, INT64_MAX - 8, 0, 16, 0, -EOVERFLOW, -EOVERFLOW, "file_off + 16" },
			{ fwo, b.buf, 0, 0, 16, 0, -EBADF, 16, "write-only file" },
			{ fro, b.buf, 0, 0, 16, 0, 16, -EBADF, "read-only file" },
			{ fapp, b.buf, 0, 0, 16, 0, 16, -EBADF, "O_APPEND file" },
			{ qf.f, b.buf, 0, 0, 16, DMAIO_RW_PATH(DMAIO_PATH_URING_DMABUF) |
			  DMAIO_RW_NO_FALLBACK, -EOPNOTSUPP, -EOPNOTSUPP,
			  "uring-dmabuf on a regular file, no fallback" },
			{ qf.f, b.buf, 100, 0, 0, 0, 0, 0, "len 0" },
		};
		struct dmaio_xfer xf = { .struct_size = sizeof(struct dmaio_xfer) };
		size_t i;
		ssize_t rr;

		for (i = 0; i < ARRAY_SIZE(c); i++) {
			memset(&xf, 0xa5, sizeof(xf)); xf.struct_size = sizeof(xf);
			rr = dmaio_file_read(c[i].f, c[i].foff, c[i].b, c[i].boff, c[i].len,
					     c[i].flags, &xf);
			if (rr != c[i].rd)
				test_fail("args: dmaio_file_read(%s) = %s, expected %s", c[i].what,
					  test_errname(rr), test_errname(c[i].rd));
			if (rr < 0 && rr != -EOPNOTSUPP && xf.done != 0 &&
			    xf.done != 0xa5a5a5a5a5a5a5a5ull)
				test_fail("args: dmaio_file_read(%s) refused, xfer.done %llu",
					  c[i].what, (unsigned long long)xf.done);
			rr = dmaio_file_read(c[i].f, c[i].foff, c[i].b, c[i].boff, c[i].len,
					     c[i].flags, NULL);
			if (rr != c[i].rd)
				test_fail("args: dmaio_file_read(%s, xfer NULL) = %s, expected %s",
					  c[i].what, test_errname(rr), test_errname(c[i].rd));
			/* writes into the copy of the data they read: the file keeps its bytes */
			qbuf_fill(&b, 0, b.size, SEED_FILE);
			rr = dmaio_file_write(c[i].f, c[i].foff, c[i].b, c[i].boff, c[i].len,
					      c[i].flags, &xf);
			if (rr != c[i].wr)
				test_fail("args: dmaio_file_write(%s) = %s, expected %s", c[i].what,
					  test_errname(rr), test_errname(c[i].wr));
		}
		if (file_check_pattern(qf.vfd, 0, qf.size, SEED_FILE, 0) != -1)
			test_fail("args: the file changed");
	}
	dmaio_file_close(fro);
	dmaio_file_close(fwo);
	dmaio_file_close(fapp);
	/* a registered file of another context with this context's buffer */
	r = dmaio_file_open(ctx2, fd, 0, &f);
	assert_int_equal(r, 0);
	EXPECT(dmaio_file_read(f, 0, b.buf, 0, 16, 0, NULL), -EINVAL);
	EXPECT(dmaio_file_write(f, 0, b.buf, 0, 16, 0, NULL), -EINVAL);
	/* ... and queued through this context's queue */
	memset(&io, 0, sizeof(io));
	io.struct_size = sizeof(io);
	io.op = DMAIO_OP_READ;
	io.buf = ob.buf;
	io.file = f;
	io.len = 16;
	EXPECT(dmaio_queue_submit(q, &io, 1), -EINVAL);
	dmaio_file_close(f);
	f = NULL;
	dmaio_file_close(fo);
	qbuf_free(&ob);
	dmaio_ctx_free(ctx2);
	close(fd);

	dmaio_queue_free(q);
	qfile_free(&qf);
	qbuf_free(&b);
	assert_no_failures_since(before);
}

/* ------------------------------------------------------------------------------------------ */
/* 8. Threads: a queue each, one context, shared buffers and files */

struct thr {
	pthread_t tid;
	int id;
	struct qbuf *b;        /* RB shared buffers: this thread owns [lo, hi) of each */
	size_t lo, hi;
	struct qfile *src;     /* shared, registered once, read by everyone */
	struct qfile *dst;     /* shared path; this thread registers its own, owns [flo, fhi) */
	size_t flo, fhi;
	unsigned rounds, ranges, before;
};

static void *thread_main(void *p)
{
	struct thr *th = p;
	struct qfile mydst;
	struct qtrack t;
	struct rng rg;
	char name[32];
	unsigned round, n, i, maxn = 48;
	struct xio *x = calloc(maxn, sizeof(*x));
	uint8_t *got = malloc(th->fhi - th->flo), *ref = malloc(th->fhi - th->flo);
	int fd, rc, bi;

	rng_init(&rg, 80 + (uint64_t)th->id);
	snprintf(name, sizeof(name), "thread %d", th->id);
	if (!x || !got || !ref) {
		test_fail("%s: out of memory", name);
		goto out;
	}
	if (qtrack_new(&t, ctx, 4 + (unsigned)th->id, name))
		goto out;
	t.name = name;
	/* this thread's registration of the destination */
	memset(&mydst, 0, sizeof(mydst));
	fd = open(th->dst->path, O_RDWR | O_CLOEXEC);
	rc = fd < 0 ? -errno : dmaio_file_open(ctx, fd, 0, &mydst.f);
	if (fd >= 0)
		close(fd);
	if (rc) {
		test_fail("%s: dmaio_file_open(dst) = %s", name, test_errname(rc));
		dmaio_queue_free(t.q);
		goto out;
	}
	mydst.size = th->dst->size;
	pread_full(th->dst->vfd, ref, th->fhi - th->flo, (off_t)th->flo);
	for (round = 0; round < th->rounds && test_failures() == th->before; round++) {
		struct layout l;

		/* reads of the shared source into this thread's parts of the buffers */
		for (bi = 0; bi < RB; bi++) {
			cpu_begin(&th->b[bi], DMAIO_SYNC_WRITE);
			pat_fill(th->b[bi].map + th->lo, th->hi - th->lo, SEED_GUARD,
				 th->b[bi].sbase + th->lo);
			cpu_end(&th->b[bi], DMAIO_SYNC_WRITE);
		}
		memset(&l, 0, sizeof(l));
		l.n = RB;
		for (bi = 0; bi < RB; bi++) {
			l.cur[bi] = th->lo;
			l.cap[bi] = th->hi;
		}
		for (n = 0; n < maxn; n++) {
			uint64_t len = rand_len(&rg, 256 * KiB), boff, foff;
			int path = (int)rndn(&rg, DMAIO_PATH_COUNT);

			bi = layout_place(&l, &rg, len, &boff);
			if (bi < 0)
				break;
			foff = rndn(&rg, th->src->size + 4096);
			xio_set(&x[n], DMAIO_OP_READ, path, false, &th->b[bi], bi, boff, th->src, 0,
				(int64_t)foff, len);
		}
		th->ranges += n;
		run_queue(&t, x, n, 1000 + round, &rg);
		for (bi = 0; bi < RB; bi++) {
			struct qbuf *b = &th->b[bi];
			uint8_t *exp = malloc(th->hi - th->lo);
			long long d;

			if (!exp) {
				test_fail("%s: out of memory", name);
				break;
			}
			pat_fill(exp, th->hi - th->lo, SEED_GUARD, b->sbase + th->lo);
			for (i = 0; i < n; i++)
				if (x[i].bi == bi && x[i].d.res > 0 && x[i].d.res == x[i].exp)
					memcpy(exp + x[i].io.buf_off - th->lo,
					       th->src->ref + x[i].io.file_off, (size_t)x[i].d.res);
			cpu_begin(b, DMAIO_SYNC_READ);
			d = mem_first_diff(b->map + th->lo, exp, th->hi - th->lo);
			if (d >= 0) {
				long k = find_range(x, n, false, bi, th->lo + (uint64_t)d);

				test_fail("%s round %u: buffer %d byte %llu differs (range %ld)",
					  name, round, bi,
					  (unsigned long long)(th->lo + (uint64_t)d), k);
				report_bytes("buffer", b->map + th->lo, exp, th->hi - th->lo,
					     (size_t)d);
			}
			cpu_end(b, DMAIO_SYNC_READ);
			free(exp);
		}
		/* writes of what was read to this thread's part of the destination */
		memset(&l, 0, sizeof(l));
		l.n = 1;
		l.cur[0] = th->flo;
		l.cap[0] = th->fhi;
		for (n = 0; n < maxn; n++) {
			uint64_t len = rand_len(&rg, 128 * KiB), foff;
			int path = (int)rndn(&rg, DMAIO_PATH_COUNT);

			if (layout_place(&l, &rg, len, &foff) < 0)
				break;
			bi = (int)rndn(&rg, RB);
			xio_set(&x[n], DMAIO_OP_WRITE, path, false, &th->b[bi], bi,
				th->lo + rndn(&rg, th->hi - th->lo - len + 1), &mydst, 1,
				(int64_t)foff, len);
		}
		th->ranges += n;
		/* what each buffer holds now, to update the reference */
		run_queue(&t, x, n, 2000 + round, &rg);
		for (i = 0; i < n; i++) {
			struct qbuf *b = &th->b[x[i].bi];

			if (x[i].d.res != x[i].exp)
				continue;
			cpu_begin(b, DMAIO_SYNC_READ);
			memcpy(ref + (x[i].io.file_off - (int64_t)th->flo), b->map + x[i].io.buf_off,
			       x[i].io.len);
			cpu_end(b, DMAIO_SYNC_READ);
		}
		if (pread_full(th->dst->vfd, got, th->fhi - th->flo, (off_t)th->flo) !=
		    (ssize_t)(th->fhi - th->flo)) {
			test_fail("%s: pread of the destination failed", name);
		} else {
			long long d = mem_first_diff(got, ref, th->fhi - th->flo);

			if (d >= 0) {
				test_fail("%s round %u: destination byte %llu differs (range %ld)",
					  name, round, (unsigned long long)(th->flo + (uint64_t)d),
					  find_range(x, n, true, 1, th->flo + (uint64_t)d));
				report_bytes("file", got, ref, th->fhi - th->flo, (size_t)d);
			}
		}
	}
	dmaio_queue_free(t.q);
	dmaio_file_close(mydst.f);
out:
	free(x);
	free(got);
	free(ref);
	return NULL;
}

static void test_threads(void **state)
{
	unsigned before = test_failures(), ranges = 0, rounds = args.quick ? 3 : 12;
	size_t bsize = args.quick ? 2 * MiB : 8 * MiB, part, fpart = MiB;
	struct thr th[NTHREADS];
	struct qbuf b[RB];
	struct qfile src, dst;
	double t0 = test_now();
	int i;

	(void)state;
	for (i = 0; i < RB; i++) {
		qbuf_alloc_or_skip(&b[i], ctx, bsize + 3, (uint64_t)i << 32, "threads");
		qbuf_fill(&b[i], 0, b[i].size, SEED_GUARD);
	}
	qfile_create(&src, ctx, 5 * MiB + 4321, SEED_FILE, 0);
	qfile_create(&dst, ctx, NTHREADS * fpart, SEED_DEST, 1ull << 32);
	part = bsize / NTHREADS;
	for (i = 0; i < NTHREADS; i++) {
		memset(&th[i], 0, sizeof(th[i]));
		th[i].id = i;
		th[i].b = b;
		th[i].lo = part * (size_t)i + (i ? 1 : 0); /* unaligned borders between threads */
		th[i].hi = part * (size_t)(i + 1);
		th[i].src = &src;
		th[i].dst = &dst;
		th[i].flo = fpart * (size_t)i;
		th[i].fhi = fpart * (size_t)(i + 1) - (size_t)i;
		th[i].rounds = rounds;
		th[i].before = before;
	}
	for (i = 0; i < NTHREADS; i++)
		assert_int_equal(pthread_create(&th[i].tid, NULL, thread_main, &th[i]), 0);
	for (i = 0; i < NTHREADS; i++) {
		pthread_join(th[i].tid, NULL);
		ranges += th[i].ranges;
	}
	printf("# threads: %d threads x %u rounds, %u ranges, %.2f s\n", NTHREADS, rounds, ranges,
	       test_now() - t0);
	/* nobody wrote outside their part: the bytes between the parts are the prefill */
	for (i = 1; i < NTHREADS; i++) {
		size_t gap = th[i].flo - th[i - 1].fhi;

		if (gap && file_check_pattern(dst.vfd, (off_t)th[i - 1].fhi, gap, SEED_DEST,
					      (1ull << 32) + th[i - 1].fhi) != -1)
			test_fail("threads: the destination bytes between thread %d and %d changed",
				  i - 1, i);
	}
	/* nor outside their parts of the buffers: the byte between two parts, and the tail */
	for (i = 0; i < RB; i++) {
		int j;

		cpu_begin(&b[i], DMAIO_SYNC_READ);
		for (j = 1; j < NTHREADS; j++)
			if (b[i].map[part * (size_t)j] !=
			    pat_byte(SEED_GUARD, b[i].sbase + part * (size_t)j))
				test_fail("threads: buffer %d byte %zu between two threads' parts "
					  "changed",
					  i, part * (size_t)j);
		if (pat_check(b[i].map + part * NTHREADS, b[i].size - part * NTHREADS, SEED_GUARD,
			      b[i].sbase + part * NTHREADS) >= 0)
			test_fail("threads: buffer %d bytes past every thread's part changed", i);
		cpu_end(&b[i], DMAIO_SYNC_READ);
	}
	if (ranges == 0)
		test_fail("threads: no range ran");
	qfile_free(&src);
	qfile_free(&dst);
	for (i = 0; i < RB; i++)
		qbuf_free(&b[i]);
	assert_no_failures_since(before);
}

/* ------------------------------------------------------------------------------------------ */
/* 9. Registered files: the synchronous calls, the facts, the caller's fd */

static void info_compare(const struct dmaio_file_info *a, const struct dmaio_file_info *b,
			 const char *when)
{
#define FIELD(x)                                                                           \
	if (a->x != b->x)                                                                  \
		test_fail("regfile %s: dmaio_file_get_info." #x " %lld, dmaio_fd_get_info " \
			  "says %lld", when, (long long)a->x, (long long)b->x)
	FIELD(is_blockdev);
	FIELD(direct);
	FIELD(direct_err);
	FIELD(dio_mem_align);
	FIELD(dio_offset_align);
	FIELD(dio_read_offset_align);
	FIELD(align_source);
	FIELD(fs_magic);
	FIELD(file_size);
#undef FIELD
}

struct fdstate {
	int fl, fd;
	off_t pos;
};

static void fd_state(int fd, struct fdstate *s)
{
	s->fl = fcntl(fd, F_GETFL);
	s->fd = fcntl(fd, F_GETFD);
	s->pos = lseek(fd, 0, SEEK_CUR);
}

static void fd_unchanged(int fd, const struct fdstate *s0, const char *when)
{
	struct fdstate s;

	fd_state(fd, &s);
	if (s.fl != s0->fl || s.fd != s0->fd || s.pos != s0->pos)
		test_fail("regfile %s: the caller's fd changed: F_GETFL 0x%x -> 0x%x, F_GETFD %d "
			  "-> %d, offset %lld -> %lld",
			  when, s0->fl, s.fl, s0->fd, s.fd, (long long)s0->pos, (long long)s.pos);
}

struct rcase {
	size_t boff;
	off_t foff;
	size_t len;
};

static size_t regfile_cases(struct rcase *cs, size_t max, bool read, off_t fsize)
{
	static const size_t sizes[] = { 1, 4096, 4097, 65543 };
	static const struct {
		size_t boff;
		off_t foff;
	} offs[] = { { 0, 0 }, { 0, 1 }, { 1, 0 }, { 4095, 4096 }, { 4096, 4096 }, { 511, 512 },
		     { 65537, 4096 } };
	size_t n = 0, i, j;

	for (i = 0; i < ARRAY_SIZE(offs); i++)
		for (j = 0; j < ARRAY_SIZE(sizes) && n < max; j++) {
			cs[n].boff = offs[i].boff;
			cs[n].foff = offs[i].foff;
			cs[n].len = sizes[j];
			n++;
		}
	if (read) {
		const struct rcase eof[] = {
			{ 0, fsize - 1, 4096 }, { 1, fsize - 4095, 8192 }, { 0, fsize, 10 },
			{ 5, fsize + 4096, 4096 }, { 4096, 0, (size_t)fsize + 100 },
		};

		for (i = 0; i < ARRAY_SIZE(eof) && n < max; i++)
			cs[n++] = eof[i];
	} else {
		const struct rcase grow[] = {
			{ 0, fsize, 4096 }, { 1, fsize + 5000, 511 }, { 7, fsize - 3, 64 },
		};

		for (i = 0; i < ARRAY_SIZE(grow) && n < max; i++)
			cs[n++] = grow[i];
	}
	return n;
}

static const int sync_paths[] = {
	DMAIO_PATH_AUTO,	  DMAIO_PATH_RW_FILE,  DMAIO_PATH_URING_DMABUF,
	DMAIO_PATH_UDMABUF_DIRECT, DMAIO_PATH_BOUNCE_DIRECT, DMAIO_PATH_BUFFERED,
	DMAIO_PATH_SENDFILE,
};

static unsigned sync_flags(int p)
{
	return p == DMAIO_PATH_AUTO ? 0 : DMAIO_RW_PATH(p) | DMAIO_RW_NO_FALLBACK;
}

/* The result of a sync call against what it must be; false when it may not be compared. */
static bool sync_result(const char *what, const char *desc, int path, ssize_t r1, ssize_t r2,
			ssize_t exp, const struct dmaio_xfer *x)
{
	if (r1 != r2)
		test_fail("regfile %s %s: registered %s, by fd %s", what, desc, test_errname(r1),
			  test_errname(r2));
	if (r1 == -EOPNOTSUPP && !mandatory(path))
		return false;
	if (r1 != exp) {
		test_fail("regfile %s %s: %s, expected %zd", what, desc, test_errname(r1), exp);
		return false;
	}
	if (x->done != (uint64_t)r1)
		test_fail("regfile %s %s: xfer.done %llu, returned %zd", what, desc,
			  (unsigned long long)x->done, r1);
	if (r1 > 0 && path != DMAIO_PATH_AUTO && ((int)x->path != path || x->fallbacks))
		test_fail("regfile %s %s: xfer.path %s fallbacks %u, forced %s", what, desc,
			  test_pname(x->path), x->fallbacks, test_pname(path));
	return true;
}

static void test_regfile(void **state)
{
	const size_t BS = 192 * KiB + 3;
	const off_t S = (off_t)(160 * KiB + 333), D = (off_t)(100 * KiB + 77);
	unsigned before = test_failures(), calls = 0, na = 0;
	struct dmaio_file_info fi = { .struct_size = sizeof(struct dmaio_file_info) }, pi = { .struct_size = sizeof(struct dmaio_file_info) };
	struct dmaio_file *rf = NULL, *wf1 = NULL, *rod = NULL;
	struct fdstate s_rd, s_wr;
	struct rcase cs[64];
	struct dmaio_xfer x1 = { .struct_size = sizeof(struct dmaio_xfer) }, x2 = { .struct_size = sizeof(struct dmaio_xfer) };
	struct qbuf a, b;
	char spath[PATH_MAX], d1path[PATH_MAX], d2path[PATH_MAX];
	int vsrc, vd1, vd2, fd, wfd, fd2, r, n0, nnew;
	uint8_t *f1 = malloc(4 * MiB), *f2 = malloc(4 * MiB), *ref = calloc(1, 4 * MiB);
	uint8_t fdset[1024 / 8];
	size_t n, i, p;
	ssize_t r1, r2, exp;
	off_t dsize = D;
	long long e;

	(void)state;
	assert_true(f1 && f2 && ref);
	qbuf_alloc_or_skip(&a, ctx, BS, 0, "regfile");
	qbuf_alloc_or_skip(&b, ctx, BS, 0, "regfile");
	vsrc = test_tmpfile(NULL, spath, sizeof(spath));
	assert_int_equal(file_fill_pattern(vsrc, 0, (size_t)S, SEED_FILE), 0);

	/* the caller's fd: no CLOEXEC, an offset of its own */
	fd = open(spath, O_RDWR);
	assert_true(fd >= 0);
	assert_int_equal(lseek(fd, 12345, SEEK_SET), 12345);
	fd_state(fd, &s_rd);
	test_fd_snapshot(fdset, 1024);
	r = dmaio_file_open(ctx, fd, 0, &rf);
	if (r)
		fail_msg("dmaio_file_open = %s", test_errname(r));
	if (test_check_new_fds_cloexec(fdset, 1024, "dmaio_file_open", &nnew))
		test_fail("regfile: dmaio_file_open made fds that are not close-on-exec");
	fd_unchanged(fd, &s_rd, "after dmaio_file_open");
	assert_int_equal(dmaio_file_get_info(rf, &fi), 0);
	assert_int_equal(dmaio_fd_get_info(fd, &pi), 0);
	info_compare(&fi, &pi, "after open");
	if (fi.file_size != (uint64_t)S)
		test_fail("regfile: get_info.file_size %llu, the file has %lld",
			  (unsigned long long)fi.file_size, (long long)S);

	/* reads: registered against by fd, same call, same bytes */
	n = regfile_cases(cs, ARRAY_SIZE(cs), true, S);
	for (p = 0; p < ARRAY_SIZE(sync_paths); p++) {
		int path = sync_paths[p];

		for (i = 0; i < n; i++) {
			char desc[160];

			snprintf(desc, sizeof(desc), "read path %s buf_off %zu file_off %lld len %zu",
				 test_pname(path), cs[i].boff, (long long)cs[i].foff, cs[i].len);
			exp = cs[i].foff >= S ? 0 :
			      (ssize_t)(S - cs[i].foff < (off_t)cs[i].len ? (size_t)(S - cs[i].foff) :
									  cs[i].len);
			qbuf_fill(&a, 0, BS, SEED_GUARD);
			qbuf_fill(&b, 0, BS, SEED_GUARD);
			memset(&x1, 0xa5, sizeof(x1)); x1.struct_size = sizeof(x1);
			r1 = dmaio_file_read(rf, cs[i].foff, a.buf, cs[i].boff, cs[i].len,
					     sync_flags(path), &x1);
			r2 = dmaio_fd_read(fd, cs[i].foff, b.buf, cs[i].boff, cs[i].len, sync_flags(path), &x2);
			calls++;
			if (!sync_result("read", desc, path, r1, r2, exp, &x1)) {
				na += r1 == -EOPNOTSUPP;
				if (r1 != -EOPNOTSUPP)
					continue;
				exp = 0; /* refused: nothing may have been written */
			}
			cpu_begin(&a, DMAIO_SYNC_READ);
			cpu_begin(&b, DMAIO_SYNC_READ);
			e = pat_check(a.map + cs[i].boff, (size_t)exp, SEED_FILE,
				      (uint64_t)cs[i].foff);
			if (e >= 0) {
				test_fail("regfile %s: data byte %lld wrong", desc, e);
				pat_report("read", a.map + cs[i].boff, (size_t)exp, SEED_FILE,
					   (uint64_t)cs[i].foff, e, false);
			}
			if (pat_check(a.map, cs[i].boff, SEED_GUARD, 0) >= 0 ||
			    pat_check(a.map + cs[i].boff + exp, BS - cs[i].boff - (size_t)exp,
				      SEED_GUARD, cs[i].boff + (size_t)exp) >= 0)
				test_fail("regfile %s: a buffer byte outside the %zd bytes read "
					  "changed",
					  desc, exp);
			e = mem_first_diff(a.map, b.map, BS);
			if (e >= 0 && r1 == r2)
				test_fail("regfile %s: registered and by-fd buffers differ at %lld",
					  desc, e);
			cpu_end(&a, DMAIO_SYNC_READ);
			cpu_end(&b, DMAIO_SYNC_READ);
		}
	}
	fd_unchanged(fd, &s_rd, "after the reads");

	/* writes: registered file d1 against file d2 by fd, both compared whole */
	vd1 = test_tmpfile(NULL, d1path, sizeof(d1path));
	vd2 = test_tmpfile(NULL, d2path, sizeof(d2path));
	assert_int_equal(file_fill_pattern(vd1, 0, (size_t)D, SEED_DEST), 0);
	assert_int_equal(file_fill_pattern(vd2, 0, (size_t)D, SEED_DEST), 0);
	pat_fill(ref, (size_t)D, SEED_DEST, 0);
	wfd = open(d1path, O_WRONLY | O_CLOEXEC);
	fd2 = open(d2path, O_WRONLY | O_CLOEXEC);
	assert_true(wfd >= 0 && fd2 >= 0);
	fd_state(wfd, &s_wr);
	assert_int_equal(dmaio_file_open(ctx, wfd, 0, &wf1), 0);
	qbuf_fill(&a, 0, BS, SEED_BUF);
	n = regfile_cases(cs, ARRAY_SIZE(cs), false, D);
	for (p = 0; p < ARRAY_SIZE(sync_paths); p++) {
		int path = sync_paths[p];

		for (i = 0; i < n; i++) {
			char desc[160];
			struct stat st1, st2;
			off_t foff = cs[i].foff;

			/* the growth cases are relative to the size now */
			if (i >= n - 3)
				foff += dsize - D;
			snprintf(desc, sizeof(desc), "write path %s buf_off %zu file_off %lld len %zu",
				 test_pname(path), cs[i].boff, (long long)foff, cs[i].len);
			r1 = dmaio_file_write(wf1, foff, a.buf, cs[i].boff, cs[i].len,
					      sync_flags(path), &x1);
			r2 = dmaio_fd_write(fd2, foff, a.buf, cs[i].boff, cs[i].len, sync_flags(path), &x2);
			calls++;
			if (sync_result("write", desc, path, r1, r2, (ssize_t)cs[i].len, &x1)) {
				pat_fill(ref + foff, cs[i].len, SEED_BUF, cs[i].boff);
				if (foff + (off_t)cs[i].len > dsize)
					dsize = foff + (off_t)cs[i].len;
			} else {
				na += r1 == -EOPNOTSUPP;
			}
			assert_int_equal(fstat(vd1, &st1), 0);
			assert_int_equal(fstat(vd2, &st2), 0);
			if (st1.st_size != dsize || st2.st_size != dsize) {
				test_fail("regfile %s: sizes %lld (registered) %lld (by fd), "
					  "expected %lld",
					  desc, (long long)st1.st_size, (long long)st2.st_size,
					  (long long)dsize);
				continue;
			}
			assert_int_equal(pread_full(vd1, f1, (size_t)dsize, 0), dsize);
			assert_int_equal(pread_full(vd2, f2, (size_t)dsize, 0), dsize);
			e = mem_first_diff(f1, ref, (size_t)dsize);
			if (e >= 0) {
				test_fail("regfile %s: registered file byte %lld wrong", desc, e);
				report_bytes("file", f1, ref, (size_t)dsize, (size_t)e);
			}
			e = mem_first_diff(f1, f2, (size_t)dsize);
			if (e >= 0)
				test_fail("regfile %s: the files written both ways differ at %lld",
					  desc, e);
			assert_int_equal(dmaio_file_get_info(wf1, &fi), 0);
			if (fi.file_size != (uint64_t)dsize)
				test_fail("regfile %s: get_info.file_size %llu, file size %lld", desc,
					  (unsigned long long)fi.file_size, (long long)dsize);
		}
	}
	fd_unchanged(wfd, &s_wr, "after the writes");
	assert_int_equal(dmaio_fd_get_info(vd1, &pi), 0);
	assert_int_equal(dmaio_file_get_info(wf1, &fi), 0);
	info_compare(&fi, &pi, "after the writes");

	/* the caller closes its fds: the registered files go on working */
	close(fd);
	close(wfd);
	qbuf_fill(&a, 0, BS, SEED_GUARD);
	r1 = dmaio_file_read(rf, 4097, a.buf, 3, 100000, 0, NULL);
	cpu_begin(&a, DMAIO_SYNC_READ);
	if (r1 != 100000 || pat_check(a.map + 3, 100000, SEED_FILE, 4097) >= 0)
		test_fail("regfile: a read after the caller closed its fd = %s, or wrong data",
			  test_errname(r1));
	cpu_end(&a, DMAIO_SYNC_READ);
	qbuf_fill(&a, 0, BS, SEED_BUF);
	r1 = dmaio_file_write(wf1, 1000, a.buf, 77, 50000, 0, NULL);
	pat_fill(ref + 1000, 50000, SEED_BUF, 77);
	if (r1 != 50000 || file_check_pattern(vd1, 1000, 50000, SEED_BUF, 77) != -1)
		test_fail("regfile: a write after the caller closed its fd = %s, or wrong data",
			  test_errname(r1));
	/* a write-only registration cannot read, even with the caller's fd gone */
	r1 = dmaio_file_read(wf1, 0, a.buf, 0, 16, 0, NULL);
	if (r1 != -EBADF)
		test_fail("regfile: a read of a write-only registered file = %s", test_errname(r1));

	/* the file grows behind the library's back: a read past the size it knew sees it */
	assert_int_equal(file_fill_pattern(vsrc, S, 20000, SEED_FILE), 0);
	qbuf_fill(&a, 0, BS, SEED_GUARD);
	r1 = dmaio_file_read(rf, S - 1000, a.buf, 1, 30000, 0, NULL);
	cpu_begin(&a, DMAIO_SYNC_READ);
	if (r1 != 21000 || pat_check(a.map + 1, 21000, SEED_FILE, (uint64_t)S - 1000) >= 0 ||
	    pat_check(a.map + 21001, BS - 21001, SEED_GUARD, 21001) >= 0)
		test_fail("regfile: after the file grew by 20000 bytes outside the library, a read "
			  "across the old end = %s, expected 21000 exact bytes", test_errname(r1));
	cpu_end(&a, DMAIO_SYNC_READ);
	assert_int_equal(dmaio_file_get_info(rf, &fi), 0);
	if (fi.file_size != (uint64_t)S + 20000)
		test_fail("regfile: get_info.size %llu after the read that looked again, file has "
			  "%lld",
			  (unsigned long long)fi.file_size, (long long)S + 20000);

	/* an O_RDONLY | O_DIRECT caller fd: its flags stay, buffered reads still work */
	if (test_can_odirect(spath)) {
		struct fdstate s;

		fd = open(spath, O_RDONLY | O_DIRECT);
		assert_true(fd >= 0);
		fd_state(fd, &s);
		assert_int_equal(dmaio_file_open(ctx, fd, 0, &rod), 0);
		qbuf_fill(&a, 0, BS, SEED_GUARD);
		r1 = dmaio_file_read(rod, 3, a.buf, 5, 7000,
				     DMAIO_RW_PATH(DMAIO_PATH_BUFFERED) | DMAIO_RW_NO_FALLBACK,
				     NULL);
		cpu_begin(&a, DMAIO_SYNC_READ);
		if (r1 != 7000 || pat_check(a.map + 5, 7000, SEED_FILE, 3) >= 0)
			test_fail("regfile: a buffered read through an O_DIRECT registration = %s",
				  test_errname(r1));
		cpu_end(&a, DMAIO_SYNC_READ);
		r1 = dmaio_file_write(rod, 0, a.buf, 0, 16, 0, NULL);
		if (r1 != -EBADF)
			test_fail("regfile: a write of an O_RDONLY registered file = %s",
				  test_errname(r1));
		fd_unchanged(fd, &s, "(O_DIRECT) after a buffered read");
		close(fd);
		dmaio_file_close(rod);
	}

	/* closing gives back every fd: open, use, close leaves the count where it was */
	n0 = test_count_fds();
	fd = open(spath, O_RDONLY | O_CLOEXEC);
	assert_true(fd >= 0);
	assert_int_equal(dmaio_file_open(ctx, fd, 0, &rod), 0);
	close(fd);
	(void)dmaio_file_read(rod, 0, a.buf, 0, 65536, 0, NULL);
	dmaio_file_close(rod);
	if (test_count_fds() != n0)
		test_fail("regfile: %d fds before dmaio_file_open, %d after dmaio_file_close", n0,
			  test_count_fds());

	printf("# regfile: %u call pairs, %u refused by a forced path\n", calls, na);
	dmaio_file_close(rf);
	dmaio_file_close(wf1);
	close(vsrc);
	close(vd1);
	close(vd2);
	close(fd2);
	free(f1);
	free(f2);
	free(ref);
	qbuf_free(&a);
	qbuf_free(&b);
	assert_no_failures_since(before);
}

/* ------------------------------------------------------------------------------------------ */

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_args),	cmocka_unit_test(test_batch),
		cmocka_unit_test(test_full),	cmocka_unit_test(test_once),
		cmocka_unit_test(test_poll),	cmocka_unit_test(test_cancel),
		cmocka_unit_test(test_regfile), cmocka_unit_test(test_random),
		cmocka_unit_test(test_threads),
	};
	struct dmaio_buf *probe = NULL;
	const char *s = getenv("DMAIO_TEST_SEED");
	int rc;

	test_parse_args(argc, argv, &args, "memfd");
	setvbuf(stdout, NULL, _IOLBF, 0);
	g_seed = s && *s ? strtoull(s, NULL, 0) : (uint64_t)time(NULL) ^ ((uint64_t)getpid() << 32);
	rc = dmaio_ctx_new(0, &ctx);
	if (rc) {
		fprintf(stderr, "dmaio_ctx_new = %s\n", test_errname(rc));
		return 1;
	}
	rc = test_alloc_or_skip(ctx, args.heap_name, 4096, 0, &probe);
	if (rc) {
		fprintf(stderr, "dmaio_buf_alloc(%s, 4096) = %s\n", args.heap, test_errname(rc));
		return 1;
	}
	kind = dmaio_buf_kind(probe);
	if (test_expected_kind(args.heap_name) > 0 && kind != test_expected_kind(args.heap_name)) {
		fprintf(stderr, "dmaio_buf_kind = %d, expected %d for %s\n", kind,
			test_expected_kind(args.heap_name), args.heap);
		return 1;
	}
	dmaio_buf_free(probe);
	printf("# heap %s (kind %d), test directory %s%s, DMAIO_TEST_SEED=%llu\n", args.heap,
	       kind, test_dir(), args.quick ? ", quick" : "", (unsigned long long)g_seed);
	rc = cmocka_run_group_tests_name(args.heap, tests, NULL, NULL);
	dmaio_ctx_free(ctx);
	test_cleanup();
	return rc ? 1 : 0;
}
