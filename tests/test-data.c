// SPDX-License-Identifier: MIT
/*
 * test-data: the core data check. Every path that can serve the buffer (forced per call with
 * DMAIO_RW_PATH(p) | DMAIO_RW_NO_FALLBACK, and AUTO) x aligned/unaligned buffer and file
 * offsets x sizes x reads across EOF x writes that grow files x caller fds with and without
 * O_DIRECT, O_RDONLY/O_WRONLY/O_RDWR. Every byte of the buffer and of the file is checked
 * after every call: the range against the position-encoded pattern, everything else against
 * what was there before.
 *
 * Usage: test-data [--heap NAME]   (memfd, system, cma, udmabuf, udmabuf-huge, drm, ...)
 * Env:   DMAIO_TEST_DIRS, DMAIO_TEST_QUICK=1, DMAIO_TEST_RAWDEV=/dev/BLOCKDEV (destructive).
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/fs.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "common.h"

static struct test_args args;
static struct dmaio_ctx *ctx;
static int kind;
static unsigned total_calls;
static uint64_t total_read, total_written; /* bytes returned by successful calls */

static const int paths[] = {
	DMAIO_PATH_UDMABUF_DIRECT, DMAIO_PATH_BOUNCE_DIRECT, DMAIO_PATH_BUFFERED,
	DMAIO_PATH_SENDFILE,       DMAIO_PATH_RW_FILE,       DMAIO_PATH_URING_DMABUF,
	DMAIO_PATH_AUTO,
};

/* Paths that must serve every case for the buffer kind under test. */
static bool mandatory(int path)
{
	return test_path_mandatory(kind, path);
}

static unsigned path_flags(int path)
{
	return path == DMAIO_PATH_AUTO ? 0 : DMAIO_RW_PATH(path) | DMAIO_RW_NO_FALLBACK;
}

struct tier {
	const char *name;
	struct dmaio_buf *buf;
	uint8_t *map;
	size_t size;
};

struct file {
	char path[PATH_MAX];
	int vfd;              /* verification fd: O_RDWR, never O_DIRECT */
	off_t size;           /* size between cases */
	bool fixed;           /* block device: no growth, only [win_lo, win_hi) checked */
	off_t win_lo, win_hi;
};

struct fdmode {
	int flags;
	const char *name;
};

static const struct fdmode read_modes[] = {
	{ O_RDONLY, "ro" },
	{ O_RDONLY | O_DIRECT, "ro+direct" },
	{ O_RDWR, "rw" },
	{ O_RDWR | O_DIRECT, "rw+direct" },
};

static const struct fdmode write_modes[] = {
	{ O_WRONLY, "wo" },
	{ O_WRONLY | O_DIRECT, "wo+direct" },
	{ O_RDWR, "rw" },
	{ O_RDWR | O_DIRECT, "rw+direct" },
};

struct pstat {
	unsigned served, na, failed;
};

struct run {
	const char *name;
	struct tier *t;
	struct pstat ps[DMAIO_PATH_COUNT];
	unsigned calls, fail0, choose_soft; /* fail0: test_failures() when the run began */
	double t0;
	bool all_paths; /* every path ran every case: each mandatory one must have served */
	uint64_t bytes_checked;
};

struct xcase {
	size_t boff;
	off_t foff;
	size_t len;
};

/* ------------------------------------------------------------------------------------------ */

static void cpu_begin(struct run *r, const char *desc, struct tier *t, unsigned dir)
{
	int rc = dmaio_buf_sync_begin(t->buf, dir);

	if (rc)
		test_fail_in(desc, "dmaio_buf_sync_begin(%u) = %s", dir, test_errname(rc));
}

static void cpu_end(struct run *r, const char *desc, struct tier *t, unsigned dir)
{
	int rc = dmaio_buf_sync_end(t->buf, dir);

	if (rc)
		test_fail_in(desc, "dmaio_buf_sync_end(%u) = %s", dir, test_errname(rc));
}

static int tier_alloc(struct tier *t, const char *name, size_t size)
{
	void *p = NULL;
	int rc;

	memset(t, 0, sizeof(*t));
	t->name = name;
	rc = t_alloc(ctx, args.heap_name, size, 0, &t->buf);
	if (rc)
		return rc;
	t->size = size;
	assert_int_equal(dmaio_buf_size(t->buf), size);
	assert_int_equal(dmaio_buf_kind(t->buf), kind);
	rc = dmaio_buf_map(t->buf, &p);
	if (rc)
		fprintf(stderr, "dmaio_buf_map(%s, %zu) = %s\n", args.heap, size, test_errname(rc));
	assert_int_equal(rc, 0);
	assert_non_null(p);
	t->map = p;
	return 0;
}

static void tier_free(struct tier *t)
{
	dmaio_buf_free(t->buf);
	memset(t, 0, sizeof(*t));
}

static void tier_fill(struct run *r, struct tier *t, uint64_t seed)
{
	cpu_begin(r, t->name, t, DMAIO_SYNC_WRITE);
	pat_fill(t->map, t->size, seed, 0);
	cpu_end(r, t->name, t, DMAIO_SYNC_WRITE);
}

static void file_create(struct file *f, const char *dir, off_t size, uint64_t seed)
{
	memset(f, 0, sizeof(*f));
	f->vfd = test_tmpfile(dir, f->path, sizeof(f->path));
	assert_int_equal(file_fill_pattern(f->vfd, 0, (size_t)size, seed), 0);
	f->size = size;
	f->win_lo = 0;
	f->win_hi = size;
}

static void file_close(struct file *f)
{
	if (f->vfd >= 0) {
		close(f->vfd);
		if (!f->fixed)
			unlink(f->path);
	}
	f->vfd = -1;
}

static int open_mode(const struct file *f, const struct fdmode *m)
{
	int fd = open(f->path, m->flags | O_CLOEXEC);

	if (fd < 0 && (m->flags & O_DIRECT) && errno == EINVAL)
		return -EINVAL;
	if (fd < 0) {
		fprintf(stderr, "open(%s, %s): %s\n", f->path, m->name, strerror(errno));
		return -errno;
	}
	return fd;
}

static void get_stats(struct run *r, const char *desc, struct tier *t, struct dmaio_stats *st)
{
	int rc;

	memset(st, 0, sizeof(*st));
	st->struct_size = sizeof(*st);
	rc = dmaio_buf_get_stats(t->buf, st);
	if (rc)
		test_fail_in(desc, "dmaio_buf_get_stats = %s", test_errname(rc));
}

/* The statistics and the xfer record must tell exactly what the call returned. */
static void check_accounting(struct run *r, const char *desc, const struct dmaio_stats *a,
			     const struct dmaio_stats *b, ssize_t ret, const struct dmaio_xfer *x,
			     int path, bool write)
{
	uint64_t sum = 0, d_rd = b->bytes_read - a->bytes_read;
	uint64_t d_wr = b->bytes_written - a->bytes_written;
	int i;

	if (b->ops - a->ops != 1)
		test_fail_in(desc, "stats.ops grew by %llu, expected 1",
			     (unsigned long long)(b->ops - a->ops));
	if (ret < 0) {
		if (b->errors - a->errors != 1)
			test_fail_in(desc, "stats.errors grew by %llu after %s",
				     (unsigned long long)(b->errors - a->errors),
				     test_errname(ret));
		if (b->last_result != ret)
			test_fail_in(desc, "stats.last_result %s, call returned %s",
				     test_errname(b->last_result), test_errname(ret));
		if (b->last_done != x->done)
			test_fail_in(desc, "stats.last_done %llu != xfer.done %llu",
				     (unsigned long long)b->last_done, (unsigned long long)x->done);
		return;
	}
	if ((uint64_t)ret != x->done)
		test_fail_in(desc, "xfer.done %llu != returned %zd", (unsigned long long)x->done,
			     ret);
	if (x->unaligned > x->done)
		test_fail_in(desc, "xfer.unaligned %llu > xfer.done %llu",
			     (unsigned long long)x->unaligned, (unsigned long long)x->done);
	if (ret > 0 && (x->path <= DMAIO_PATH_AUTO || x->path >= DMAIO_PATH_COUNT))
		test_fail_in(desc, "xfer.path %d is not a data path", x->path);
	if (ret > 0 && path != DMAIO_PATH_AUTO && (int)x->path != path)
		test_fail_in(desc, "xfer.path %s, forced %s", test_pname(x->path),
			     test_pname(path));
	if (path != DMAIO_PATH_AUTO && x->fallbacks != 0)
		test_fail_in(desc, "xfer.fallbacks %u with a forced path and NO_FALLBACK",
			     x->fallbacks);
	if (b->errors != a->errors)
		test_fail_in(desc, "stats.errors grew after a successful call");
	if ((write ? d_wr : d_rd) != (uint64_t)ret || (write ? d_rd : d_wr) != 0)
		test_fail_in(desc, "stats bytes_read +%llu bytes_written +%llu, call moved %zd "
			     "(%s)", (unsigned long long)d_rd, (unsigned long long)d_wr, ret,
			     write ? "write" : "read");
	for (i = 0; i < DMAIO_PATH_COUNT; i++)
		sum += b->path_bytes[i] - a->path_bytes[i];
	if (sum != (uint64_t)ret)
		test_fail_in(desc, "sum of stats.path_bytes grew by %llu, call moved %zd",
			     (unsigned long long)sum, ret);
	if (ret > 0 && x->path > 0 && x->path < DMAIO_PATH_COUNT &&
	    b->path_bytes[x->path] == a->path_bytes[x->path])
		test_fail_in(desc, "stats.path_bytes[%s] did not grow", test_pname(x->path));
	if (b->unaligned_bytes - a->unaligned_bytes != x->unaligned)
		test_fail_in(desc, "stats.unaligned_bytes grew by %llu, xfer.unaligned %llu",
			     (unsigned long long)(b->unaligned_bytes - a->unaligned_bytes),
			     (unsigned long long)x->unaligned);
	if (b->fallbacks - a->fallbacks != x->fallbacks)
		test_fail_in(desc, "stats.fallbacks grew by %llu, xfer.fallbacks %u",
			     (unsigned long long)(b->fallbacks - a->fallbacks), x->fallbacks);
	if (b->last_result != 0)
		test_fail_in(desc, "stats.last_result %s after success",
			     test_errname(b->last_result));
	if (b->last_done != (uint64_t)ret)
		test_fail_in(desc, "stats.last_done %llu, returned %zd",
			     (unsigned long long)b->last_done, ret);
	if (ret > 0 && b->last_path != x->path)
		test_fail_in(desc, "stats.last_path %s, xfer.path %s", test_pname(b->last_path),
			     test_pname(x->path));
}

/* choose_path() must take the decision the I/O call took. */
static void check_choice(struct run *r, const char *desc, int cp, const char *why, ssize_t ret,
			 const struct dmaio_xfer *x, int path)
{
	if (ret > 0 && path != DMAIO_PATH_AUTO && cp != path)
		test_fail_in(desc, "dmaio_choose_path = %s (%s), forced %s served the call",
			     cp < 0 ? test_errname(cp) : test_pname(cp), why, test_pname(path));
	if (ret > 0 && path == DMAIO_PATH_AUTO && x->fallbacks == 0 && cp != (int)x->path)
		test_fail_in(desc, "dmaio_choose_path = %s (%s), the call used %s",
			     cp < 0 ? test_errname(cp) : test_pname(cp), why, test_pname(x->path));
	if (ret == -EOPNOTSUPP && cp >= 0) {
		/* a refusal discovered only while doing I/O: allowed, but counted */
		r->choose_soft++;
	}
}

static void check_guard(struct run *r, const char *desc, struct tier *t, size_t from, size_t to,
			bool *bad)
{
	long long e;

	if (from >= to)
		return;
	e = pat_check(t->map + from, to - from, SEED_GUARD, from);
	r->bytes_checked += to - from;
	if (e >= 0) {
		test_fail_in(desc, "buffer byte %llu outside the range was changed",
			     (unsigned long long)from + (unsigned long long)e);
		if (test_fail_printing())
			pat_report("buffer guard", t->map + from, to - from, SEED_GUARD, from, e,
				   false);
		*bad = true;
	}
}

/* ------------------------------------------------------------------------------------------ */
/* One read */

static void do_read(struct run *r, int path, int fd, const char *mode, struct file *f,
		    const struct xcase *c)
{
	struct tier *t = r->t;
	struct dmaio_stats a = { .struct_size = sizeof(struct dmaio_stats) }, b = { .struct_size = sizeof(struct dmaio_stats) };
	struct dmaio_xfer x = { .struct_size = sizeof(struct dmaio_xfer) };
	char desc[256], why[256] = "";
	unsigned flags = path_flags(path);
	size_t exp = 0, got;
	bool bad = false;
	long long e;
	ssize_t ret;
	int cp;

	if (c->foff < f->size)
		exp = (size_t)(f->size - c->foff) < c->len ? (size_t)(f->size - c->foff) : c->len;
	snprintf(desc, sizeof(desc), "%s read path=%s fd=%s buf_off=%zu file_off=%lld len=%zu "
		 "(file size %lld)", r->name, test_pname(path), mode, c->boff, (long long)c->foff,
		 c->len, (long long)f->size);

	/* the range starts as the complement of what must arrive: every byte must change */
	cpu_begin(r, desc, t, DMAIO_SYNC_WRITE);
	pat_fill_inv(t->map + c->boff, c->len, SEED_FILE, (uint64_t)c->foff);
	cpu_end(r, desc, t, DMAIO_SYNC_WRITE);

	get_stats(r, desc, t, &a);
	cp = t_choose_path(t->buf, c->boff, fd, c->foff, c->len, 0, flags, why, sizeof(why));
	memset(&x, 0xa5, sizeof(x)); x.struct_size = sizeof(x);
	ret = dmaio_fd_read(fd, c->foff, t->buf, c->boff, c->len, flags, &x);
	get_stats(r, desc, t, &b);
	r->calls++;
	total_calls++;

	if (ret == -EOPNOTSUPP && path != DMAIO_PATH_AUTO && !mandatory(path)) {
		r->ps[path].na++;
		if (x.done != 0)
			test_fail_in(desc, "refused with -EOPNOTSUPP but xfer.done %llu",
				     (unsigned long long)x.done);
		got = 0;
	} else if (ret != (ssize_t)exp) {
		test_fail_in(desc, "returned %s, expected %zu (xfer: done %llu path %s "
			     "fallbacks %u; choose_path %s: %s)", test_errname(ret), exp,
			     (unsigned long long)x.done, test_pname(x.path), x.fallbacks,
			     cp < 0 ? test_errname(cp) : test_pname(cp), why);
		r->ps[path].failed++;
		got = ret > 0 && (size_t)ret <= c->len ? (size_t)ret : 0;
		if (ret < 0) {
			/* unknown state: check only outside the range, then reset the buffer */
			cpu_begin(r, desc, t, DMAIO_SYNC_READ);
			check_guard(r, desc, t, 0, c->boff, &bad);
			check_guard(r, desc, t, c->boff + c->len, t->size, &bad);
			cpu_end(r, desc, t, DMAIO_SYNC_READ);
			tier_fill(r, t, SEED_GUARD);
			return;
		}
	} else {
		r->ps[path].served++;
		got = (size_t)ret;
		total_read += got;
	}
	check_accounting(r, desc, &a, &b, ret, &x, path, false);
	check_choice(r, desc, cp, why, ret, &x, path);

	cpu_begin(r, desc, t, DMAIO_SYNC_READ);
	check_guard(r, desc, t, 0, c->boff, &bad);
	e = pat_check(t->map + c->boff, got, SEED_FILE, (uint64_t)c->foff);
	if (e >= 0) {
		test_fail_in(desc, "data mismatch at buffer offset %llu (file offset %llu)",
			     (unsigned long long)(c->boff + (size_t)e),
			     (unsigned long long)c->foff + (unsigned long long)e);
		if (test_fail_printing())
			pat_report("read data", t->map + c->boff, got, SEED_FILE,
				   (uint64_t)c->foff, e, false);
		r->ps[path].failed++;
	}
	e = pat_check_inv(t->map + c->boff + got, c->len - got, SEED_FILE,
			  (uint64_t)c->foff + got);
	if (e >= 0) {
		test_fail_in(desc, "buffer byte %llu past the returned count %zu was written",
			     (unsigned long long)(c->boff + got + (size_t)e), got);
		if (test_fail_printing())
			pat_report("past count", t->map + c->boff + got, c->len - got, SEED_FILE,
				   (uint64_t)c->foff + got, e, true);
		r->ps[path].failed++;
	}
	check_guard(r, desc, t, c->boff + c->len, t->size, &bad);
	cpu_end(r, desc, t, DMAIO_SYNC_READ);
	r->bytes_checked += c->len;
	if (bad)
		r->ps[path].failed++;

	/* back to guard */
	if (bad) {
		tier_fill(r, t, SEED_GUARD);
	} else {
		cpu_begin(r, desc, t, DMAIO_SYNC_WRITE);
		pat_fill(t->map + c->boff, c->len, SEED_GUARD, c->boff);
		cpu_end(r, desc, t, DMAIO_SYNC_WRITE);
	}
}

/* ------------------------------------------------------------------------------------------ */
/* One write */

/* Check [lo, hi) of the file against its state before the call (DEST prefill, holes zero). */
static bool check_file_outside(struct run *r, const char *desc, struct file *f, off_t lo,
			       off_t hi)
{
	off_t dend = f->size; /* data (DEST) ends here, zeros after (only for growing files) */
	long long e;

	if (lo >= hi)
		return true;
	if (lo < dend) {
		off_t end = hi < dend ? hi : dend;

		e = file_check_pattern(f->vfd, lo, (size_t)(end - lo), SEED_DEST, (uint64_t)lo);
		r->bytes_checked += (uint64_t)(end - lo);
		if (e != -1) {
			test_fail_in(desc, "file byte %lld outside the range changed (%s)", e,
				     e == -2 ? "short file" : "mismatch");
			return false;
		}
		lo = end;
	}
	if (lo < hi) {
		e = file_check_zero(f->vfd, lo, (size_t)(hi - lo));
		r->bytes_checked += (uint64_t)(hi - lo);
		if (e != -1) {
			test_fail_in(desc, "file byte %lld in the hole before the range is not "
				     "zero", e);
			return false;
		}
	}
	return true;
}

static void do_write(struct run *r, int path, int fd, const char *mode, struct file *f,
		     const struct xcase *c)
{
	struct tier *t = r->t;
	struct dmaio_stats a = { .struct_size = sizeof(struct dmaio_stats) }, b = { .struct_size = sizeof(struct dmaio_stats) };
	struct dmaio_xfer x = { .struct_size = sizeof(struct dmaio_xfer) };
	char desc[256], why[256] = "";
	unsigned flags = path_flags(path);
	off_t end = c->foff + (off_t)c->len, newsize, pre_end;
	bool na = false, ok = true;
	struct stat st;
	long long e;
	ssize_t ret;
	int cp;

	snprintf(desc, sizeof(desc), "%s write path=%s fd=%s buf_off=%zu file_off=%lld len=%zu "
		 "(file size %lld)", r->name, test_pname(path), mode, c->boff, (long long)c->foff,
		 c->len, (long long)f->size);

	/* the existing part of the range starts as the complement of what must arrive */
	pre_end = end < f->size ? end : f->size;
	if (c->foff < pre_end)
		assert_int_equal(file_fill_stream(f->vfd, c->foff, (size_t)(pre_end - c->foff),
						  SEED_BUF, c->boff, true), 0);

	get_stats(r, desc, t, &a);
	cp = t_choose_path(t->buf, c->boff, fd, c->foff, c->len, 1, flags, why, sizeof(why));
	memset(&x, 0xa5, sizeof(x)); x.struct_size = sizeof(x);
	ret = dmaio_fd_write(fd, c->foff, t->buf, c->boff, c->len, flags, &x);
	get_stats(r, desc, t, &b);
	r->calls++;
	total_calls++;

	if (ret == -EOPNOTSUPP && path != DMAIO_PATH_AUTO && !mandatory(path)) {
		r->ps[path].na++;
		na = true;
		if (x.done != 0)
			test_fail_in(desc, "refused with -EOPNOTSUPP but xfer.done %llu",
				     (unsigned long long)x.done);
	} else if (ret != (ssize_t)c->len) {
		test_fail_in(desc, "returned %s, expected %zu (xfer: done %llu path %s "
			     "fallbacks %u; choose_path %s: %s)", test_errname(ret), c->len,
			     (unsigned long long)x.done, test_pname(x.path), x.fallbacks,
			     cp < 0 ? test_errname(cp) : test_pname(cp), why);
		r->ps[path].failed++;
		ok = false;
	} else {
		r->ps[path].served++;
		total_written += c->len;
	}
	check_accounting(r, desc, &a, &b, ret, &x, path, true);
	check_choice(r, desc, cp, why, ret, &x, path);

	/* size: grows exactly to the end of the range, never shrinks */
	if (fstat(f->vfd, &st) != 0)
		fail_msg("fstat: %s", strerror(errno));
	newsize = (na || !ok || f->fixed) ? f->size : (end > f->size ? end : f->size);
	if (!f->fixed && ok && st.st_size != newsize) {
		test_fail_in(desc, "file size %lld after the call, expected %lld",
			     (long long)st.st_size, (long long)newsize);
		r->ps[path].failed++;
	}

	if (ok) {
		off_t lo = f->fixed ? f->win_lo : 0, hi = f->fixed ? f->win_hi : f->size;

		/* before and after the range: unchanged */
		if (!check_file_outside(r, desc, f, lo, c->foff < hi ? c->foff : hi))
			r->ps[path].failed++;
		if (end < hi && !check_file_outside(r, desc, f, end, hi))
			r->ps[path].failed++;
		/* the range itself */
		if (na) {
			if (c->foff < pre_end) {
				e = file_check_pattern_inv(f->vfd, c->foff,
							   (size_t)(pre_end - c->foff), SEED_BUF,
							   c->boff);
				if (e != -1) {
					test_fail_in(desc, "refused call changed file byte %lld",
						     e);
					r->ps[path].failed++;
				}
			}
		} else {
			e = file_check_pattern(f->vfd, c->foff, c->len, SEED_BUF, c->boff);
			r->bytes_checked += c->len;
			if (e != -1) {
				test_fail_in(desc, "file data wrong at file offset %lld%s", e,
					     e == -2 ? " (short file)" : "");
				r->ps[path].failed++;
			}
		}
	}

	/* the buffer is only read */
	cpu_begin(r, desc, t, DMAIO_SYNC_READ);
	e = pat_check(t->map, t->size, SEED_BUF, 0);
	cpu_end(r, desc, t, DMAIO_SYNC_READ);
	if (e >= 0) {
		test_fail_in(desc, "the write changed buffer byte %lld", e);
		pat_report("write source", t->map, t->size, SEED_BUF, 0, e, false);
		tier_fill(r, t, SEED_BUF);
		r->ps[path].failed++;
	}

	/* restore the file */
	if (!f->fixed && ftruncate(f->vfd, f->size) != 0)
		fail_msg("ftruncate: %s", strerror(errno));
	if (c->foff < pre_end)
		assert_int_equal(file_fill_pattern(f->vfd, c->foff, (size_t)(pre_end - c->foff),
						   SEED_DEST), 0);
	if (!ok) {
		/* unknown state: rewrite the whole window */
		off_t lo = f->fixed ? f->win_lo : 0, hi = f->fixed ? f->win_hi : f->size;

		assert_int_equal(file_fill_pattern(f->vfd, lo, (size_t)(hi - lo), SEED_DEST), 0);
	}
}

/* ------------------------------------------------------------------------------------------ */

static void run_init(struct run *r, const char *name, struct tier *t)
{
	memset(r, 0, sizeof(*r));
	r->name = name;
	r->t = t;
	r->t0 = test_now();
	r->fail0 = test_failures();
}

static void print_summary(struct run *r)
{
	size_t i;

	printf("# %s: %u calls, %llu bytes checked, %u failures, %.1f s", r->name, r->calls,
	       (unsigned long long)r->bytes_checked, test_failures() - r->fail0,
	       test_now() - r->t0);
	if (r->choose_soft)
		printf(", %u refusals not foreseen by dmaio_choose_path", r->choose_soft);
	printf("\n");
	for (i = 0; i < ARRAY_SIZE(paths); i++) {
		struct pstat *p = &r->ps[paths[i]];

		if (!p->served && !p->na && !p->failed)
			continue;
		printf("#   %-15s served %4u  not-applicable %4u  failed %u%s\n",
		       test_pname(paths[i]), p->served, p->na, p->failed,
		       mandatory(paths[i]) ? "  (mandatory)" : "");
	}
	fflush(stdout);
}

/* Summary and end-of-run checks (the test fails at its end: assert_no_failures_since()). */
static void finish(struct run *r)
{
	size_t i;

	print_summary(r);
	/* a mandatory path must have served; a path that never served anything is not tested */
	for (i = 0; i < ARRAY_SIZE(paths); i++) {
		struct pstat *p = &r->ps[paths[i]];

		if (r->all_paths && mandatory(paths[i]) && p->served == 0)
			test_fail_in(r->name, "mandatory path %s served nothing",
				     test_pname(paths[i]));
	}
	if (r->calls == 0)
		test_fail_in(r->name, "no call was made");
}

/* ------------------------------------------------------------------------------------------ */
/* Case tables */

#define SMALL_BUF (192 * KiB + 3)
#define SMALL_SRC ((off_t)(160 * KiB + 333))
#define SMALL_DST ((off_t)(100 * KiB + 77))

static size_t small_cases(struct xcase *cs, size_t max, bool read, off_t fsize)
{
	static const size_t sizes[] = { 1, 511, 512, 4096, 4097, 65543 };
	static const struct {
		size_t boff;
		off_t foff;
	} offs[] = {
		{ 0, 0 },	   { 0, 1 },	     { 1, 0 },	       { 1, 1 },
		{ 511, 512 },	   { 512, 511 },     { 4095, 4096 },   { 4096, 4095 },
		{ 4096, 4096 },	   { 0, 65537 },     { 65537, 4096 },  { SIZE_MAX, 8192 },
	};
	size_t n = 0, i, j;

	for (i = 0; i < ARRAY_SIZE(offs); i++) {
		for (j = 0; j < ARRAY_SIZE(sizes) && n < max; j++) {
			cs[n].boff = offs[i].boff == SIZE_MAX ? SMALL_BUF - sizes[j] : offs[i].boff;
			cs[n].foff = offs[i].foff;
			cs[n].len = sizes[j];
			n++;
		}
	}
	if (read) {
		/* across and past EOF */
		const struct xcase eof[] = {
			{ 0, fsize - 1, 4096 },	       { 1, fsize - 4095, 8192 },
			{ 4096, fsize - 100000, 131072 }, { 0, fsize, 10 },
			{ 5, fsize + 4096, 4096 },      { 3, fsize - 4097, 4097 },
			{ 4096, fsize & ~(off_t)4095, 8192 }, { 0, 0, (size_t)fsize + 100 },
			{ 4097, (fsize & ~(off_t)4095) - 4096, 3 * 4096 },
		};

		for (i = 0; i < ARRAY_SIZE(eof) && n < max; i++)
			cs[n++] = eof[i];
	} else {
		/* writes that grow the file, with and without a hole */
		const struct xcase grow[] = {
			{ 0, fsize, 4096 },	      { 1, fsize + 5000, 511 },
			{ 4096, fsize - 100, 4097 },  { 7, fsize - 3, 64 },
			{ 0, 0, (size_t)fsize - 1 },  { 8192, (fsize + 8191) & ~(off_t)4095, 8192 },
		};

		for (i = 0; i < ARRAY_SIZE(grow) && n < max; i++)
			cs[n++] = grow[i];
	}
	return n;
}

/* Run @ncases on every path and every fd mode on file @f. */
static void run_matrix(struct run *r, struct file *f, bool write, const struct xcase *cs,
		       size_t ncases, bool rotate_modes)
{
	const struct fdmode *modes = write ? write_modes : read_modes;
	int fds[4];
	size_t m, p, i;
	static bool told;

	r->all_paths = true;
	for (m = 0; m < 4; m++) {
		fds[m] = open_mode(f, &modes[m]);
		if (fds[m] == -EINVAL && !told) {
			printf("# %s: O_DIRECT refused here: modes with O_DIRECT not run\n",
			       f->path);
			told = true;
		}
		if (fds[m] < 0 && fds[m] != -EINVAL)
			fail_msg("open %s %s failed", f->path, modes[m].name);
	}
	for (p = 0; p < ARRAY_SIZE(paths); p++) {
		for (i = 0; i < ncases; i++) {
			for (m = 0; m < 4; m++) {
				size_t k = m;

				if (rotate_modes) {
					/* one mode per case, a different one for each path */
					if (m)
						break;
					k = (i + p) % 4;
					if (fds[k] < 0)
						k &= ~(size_t)1; /* same access mode, no O_DIRECT */
				} else if (fds[k] < 0) {
					continue;
				}
				if (write)
					do_write(r, paths[p], fds[k], modes[k].name, f, &cs[i]);
				else
					do_read(r, paths[p], fds[k], modes[k].name, f, &cs[i]);
			}
		}
	}
	for (m = 0; m < 4; m++)
		if (fds[m] >= 0)
			close(fds[m]);
}

/* ------------------------------------------------------------------------------------------ */
/* Tests */

static void test_small(void **state)
{
	unsigned before = test_failures();
	struct xcase cs[128];
	const char *dirs[16];
	struct tier t;
	struct file src, dst;
	struct run r;
	char name[64];
	size_t n;
	int nd, d, rc;

	(void)state;
	rc = tier_alloc(&t, "small", SMALL_BUF);
	if (rc)
		fail_msg("dmaio_buf_alloc(%s, %zu) = %s", args.heap, (size_t)SMALL_BUF,
			 test_errname(rc));
	nd = test_dirs(dirs, 16);
	for (d = 0; d < nd; d++) {
		printf("# directory %s\n", dirs[d]);
		file_create(&src, dirs[d], SMALL_SRC, SEED_FILE);
		file_create(&dst, dirs[d], SMALL_DST, SEED_DEST);

		snprintf(name, sizeof(name), "small-read[%d]", d);
		run_init(&r, name, &t);
		tier_fill(&r, &t, SEED_GUARD);
		n = small_cases(cs, ARRAY_SIZE(cs), true, src.size);
		/* every fd mode in the first directory, one mode per case in the others */
		run_matrix(&r, &src, false, cs, n, args.quick || d > 0);
		finish(&r);

		snprintf(name, sizeof(name), "small-write[%d]", d);
		run_init(&r, name, &t);
		tier_fill(&r, &t, SEED_BUF);
		n = small_cases(cs, ARRAY_SIZE(cs), false, dst.size);
		run_matrix(&r, &dst, true, cs, n, args.quick || d > 0);
		finish(&r);

		file_close(&src);
		file_close(&dst);
	}
	tier_free(&t);
	assert_no_failures_since(before);
}

static void test_medium(void **state)
{
	unsigned before = test_failures();
	const size_t mib = MiB;
	const off_t fsrc = (off_t)(9 * mib + 12345), fdst = (off_t)(6 * mib + 999);
	const struct xcase rd[] = {
		{ 0, 0, mib },
		{ 1, 4095, mib - 1 },
		{ 4096, 1, mib + 1 },
		{ 4096, fsrc - 1000000, mib + 1 },
		{ 65536, 65536, 8 * mib },
		{ 511, 512, 8 * mib + 3 },
	};
	const struct xcase wr[] = {
		{ 0, 0, mib },
		{ 1, 4095, mib - 1 },
		{ 4096, 1, mib + 1 },
		{ 3, fdst - 777, mib + 1 },
		{ 65536, 65536, 8 * mib },
		{ 511, 512, 8 * mib + 3 },
	};
	size_t n = args.quick ? 4 : ARRAY_SIZE(rd);
	struct tier t;
	struct file src, dst;
	struct run r;
	int rc;

	(void)state;
	rc = tier_alloc(&t, "medium", 8 * mib + 64 * KiB + 5);
	if (rc == -ENOMEM && args.heap_name && test_cma_heap() &&
	    strcmp(args.heap_name, test_cma_heap()) == 0) {
		printf("# medium: the CMA area is too small for 8 MiB (%s)\n", test_errname(rc));
		skip();
	}
	if (rc)
		fail_msg("dmaio_buf_alloc(%s, 8 MiB) = %s", args.heap, test_errname(rc));
	file_create(&src, NULL, fsrc, SEED_FILE);
	file_create(&dst, NULL, fdst, SEED_DEST);

	run_init(&r, "medium-read", &t);
	tier_fill(&r, &t, SEED_GUARD);
	run_matrix(&r, &src, false, rd, n, true);
	finish(&r);

	run_init(&r, "medium-write", &t);
	tier_fill(&r, &t, SEED_BUF);
	run_matrix(&r, &dst, true, wr, n, true);
	finish(&r);

	file_close(&src);
	file_close(&dst);
	tier_free(&t);
	assert_no_failures_since(before);
}

static void test_big(void **state)
{
	unsigned before = test_failures();
	const size_t mib = MiB;
	const off_t fsrc = (off_t)(64 * mib + 3 * 4096 + 1), fdst = (off_t)(mib + 5);
	struct tier t;
	struct file src, dst;
	struct run r;
	struct xcase c0 = { 0, 0, 64 * mib }, c1 = { 1, 4097, 64 * mib + 1 };
	int direct = kind == DMAIO_BUF_MEMFD || kind == DMAIO_BUF_UDMABUF ||
				     kind == DMAIO_BUF_UDMABUF_HUGE ?
			     DMAIO_PATH_UDMABUF_DIRECT :
			     DMAIO_PATH_BOUNCE_DIRECT;
	bool both = true;
	int rc, fd;

	(void)state;
	if (args.quick) {
		printf("# big: skipped in quick mode\n");
		skip();
	}
	rc = tier_alloc(&t, "big", 64 * mib + 8 * KiB + 1);
	if (rc == -EFBIG || rc == -ENOMEM) {
		printf("# big: 64 MiB + 8 KiB + 1 refused (%s), trying 64 MiB\n", test_errname(rc));
		rc = tier_alloc(&t, "big", 64 * mib);
		both = false;
	}
	if (rc == -EFBIG || (rc == -ENOMEM && kind != DMAIO_BUF_MEMFD)) {
		printf("# big: not applicable to %s: %s\n", args.heap, test_errname(rc));
		skip();
	}
	if (rc)
		fail_msg("dmaio_buf_alloc(%s, 64 MiB) = %s", args.heap, test_errname(rc));
	file_create(&src, NULL, fsrc, SEED_FILE);
	file_create(&dst, NULL, fdst, SEED_DEST);

	run_init(&r, "big-read", &t);
	tier_fill(&r, &t, SEED_GUARD);
	fd = open_mode(&src, &read_modes[3]);
	if (fd < 0)
		fd = open_mode(&src, &read_modes[2]);
	assert_true(fd >= 0);
	do_read(&r, DMAIO_PATH_AUTO, fd, "rw+direct", &src, &c0);
	do_read(&r, direct, fd, "rw+direct", &src, &c0);
	close(fd);
	if (both) {
		fd = open_mode(&src, &read_modes[0]);
		assert_true(fd >= 0);
		do_read(&r, DMAIO_PATH_AUTO, fd, "ro", &src, &c1);
		do_read(&r, DMAIO_PATH_BUFFERED, fd, "ro", &src, &c1);
		close(fd);
	}
	finish(&r);

	run_init(&r, "big-write", &t);
	tier_fill(&r, &t, SEED_BUF);
	fd = open_mode(&dst, &write_modes[3]);
	if (fd < 0)
		fd = open_mode(&dst, &write_modes[2]);
	assert_true(fd >= 0);
	do_write(&r, DMAIO_PATH_AUTO, fd, "rw+direct", &dst, &c0);
	do_write(&r, direct, fd, "rw+direct", &dst, &c0);
	close(fd);
	if (both) {
		fd = open_mode(&dst, &write_modes[0]);
		assert_true(fd >= 0);
		do_write(&r, DMAIO_PATH_AUTO, fd, "wo", &dst, &c1);
		do_write(&r, DMAIO_PATH_BUFFERED, fd, "wo", &dst, &c1);
		close(fd);
	}
	finish(&r);

	file_close(&src);
	file_close(&dst);
	tier_free(&t);
	assert_no_failures_since(before);
}

/* ------------------------------------------------------------------------------------------ */
/* Several threads on disjoint ranges of one buffer */

#define NTHREADS 4

struct thr {
	pthread_t tid;
	struct tier *t;
	int fd_src, fd_dst, vfd;
	off_t src_size;
	size_t lo, hi; /* the thread's part of the buffer */
	int id;
	unsigned calls;
};

/* A worker: no cmocka assert here (another thread); each problem is a test_fail(). */
static void *thread_main(void *arg)
{
	struct thr *th = arg;
	const int tp[] = { DMAIO_PATH_AUTO, DMAIO_PATH_BUFFERED, DMAIO_PATH_BOUNCE_DIRECT,
			   DMAIO_PATH_UDMABUF_DIRECT, DMAIO_PATH_SENDFILE };
	size_t part = th->hi - th->lo, len, boff;
	unsigned i, k, iters = args.quick ? 4 : 24;
	long long e;
	ssize_t ret;
	off_t foff;

	for (i = 0; i < iters; i++) {
		for (k = 0; k < ARRAY_SIZE(tp); k++) {
			int p = tp[k];

			if (!mandatory(p))
				continue;
			boff = th->lo + (i * 511) % (part / 2);
			len = part / 2 - (i * 7) % 4096;
			foff = (off_t)((th->lo * 3 + i * 4097) % (size_t)(th->src_size - (off_t)len));
			if (dmaio_buf_sync_begin(th->t->buf, DMAIO_SYNC_WRITE) != 0)
				test_fail("thread %d: dmaio_buf_sync_begin failed", th->id);
			pat_fill_inv(th->t->map + boff, len, SEED_FILE, (uint64_t)foff);
			dmaio_buf_sync_end(th->t->buf, DMAIO_SYNC_WRITE);
			ret = dmaio_fd_read(th->fd_src, foff, th->t->buf, boff, len, path_flags(p), NULL);
			th->calls++;
			if (ret != (ssize_t)len) {
				test_fail("thread %d: read path %s boff %zu foff %lld len %zu = %s",
					  th->id, test_pname(p), boff, (long long)foff, len,
					  test_errname(ret));
				continue;
			}
			dmaio_buf_sync_begin(th->t->buf, DMAIO_SYNC_READ);
			e = pat_check(th->t->map + boff, len, SEED_FILE, (uint64_t)foff);
			dmaio_buf_sync_end(th->t->buf, DMAIO_SYNC_READ);
			if (e >= 0)
				test_fail("thread %d: read path %s boff %zu foff %lld len %zu: bad "
					  "byte %lld", th->id, test_pname(p), boff, (long long)foff,
					  len, e);
			/* and write the same bytes out to the thread's own part of dst */
			ret = dmaio_fd_write(th->fd_dst, (off_t)boff, th->t->buf, boff, len, path_flags(p), NULL);
			th->calls++;
			if (ret != (ssize_t)len)
				test_fail("thread %d: write path %s boff %zu len %zu = %s", th->id,
					  test_pname(p), boff, len, test_errname(ret));
			e = file_check_pattern(th->vfd, (off_t)boff, len, SEED_FILE,
					       (uint64_t)foff);
			if (e != -1)
				test_fail("thread %d: write path %s boff %zu len %zu: file byte "
					  "%lld wrong", th->id, test_pname(p), boff, len, e);
		}
	}
	return NULL;
}

static void test_threads(void **state)
{
	struct thr th[NTHREADS];
	struct tier t;
	struct file src, dst;
	unsigned calls = 0, before = test_failures();
	int i, rc, started;

	(void)state;
	rc = tier_alloc(&t, "threads", SMALL_BUF);
	if (rc)
		fail_msg("dmaio_buf_alloc = %s", test_errname(rc));
	file_create(&src, NULL, SMALL_SRC, SEED_FILE);
	file_create(&dst, NULL, 0, SEED_DEST);
	for (i = 0; i < NTHREADS; i++) {
		memset(&th[i], 0, sizeof(th[i]));
		th[i].id = i;
		th[i].t = &t;
		th[i].src_size = src.size;
		th[i].vfd = dst.vfd;
		th[i].lo = (SMALL_BUF / NTHREADS) * (size_t)i;
		th[i].hi = th[i].lo + SMALL_BUF / NTHREADS;
		th[i].fd_src = open(src.path, O_RDONLY | O_CLOEXEC | (i & 1 ? O_DIRECT : 0));
		if (th[i].fd_src < 0)
			th[i].fd_src = open(src.path, O_RDONLY | O_CLOEXEC);
		th[i].fd_dst = open(dst.path, O_RDWR | O_CLOEXEC | (i & 2 ? O_DIRECT : 0));
		if (th[i].fd_dst < 0)
			th[i].fd_dst = open(dst.path, O_RDWR | O_CLOEXEC);
		assert_true(th[i].fd_src >= 0 && th[i].fd_dst >= 0);
	}
	/* no assert before every started thread is joined: they use this frame's tier */
	for (started = 0; started < NTHREADS; started++)
		if (pthread_create(&th[started].tid, NULL, thread_main, &th[started]))
			break;
	for (i = 0; i < NTHREADS; i++) {
		if (i < started)
			pthread_join(th[i].tid, NULL);
		calls += th[i].calls;
		close(th[i].fd_src);
		close(th[i].fd_dst);
	}
	printf("# threads: %d threads, %u calls on disjoint ranges, %u errors\n", started, calls,
	       test_failures() - before);
	total_calls += calls;
	file_close(&src);
	file_close(&dst);
	tier_free(&t);
	assert_int_equal(started, NTHREADS);
	assert_no_failures_since(before);
	assert_true(calls > 0);
}

/* ------------------------------------------------------------------------------------------ */
/* Block device (DMAIO_TEST_RAWDEV): write then read back, byte-exact */

static int provider_slot(void)
{
	static const char *const names[] = { "memfd", "system", "cma", "udmabuf", "udmabuf-huge",
					     "drm", "default" };
	size_t i;

	for (i = 0; i < ARRAY_SIZE(names); i++)
		if (strcmp(args.heap, names[i]) == 0)
			return (int)i;
	return 7;
}

static void test_rawdev(void **state)
{
	unsigned before = test_failures();
	const char *dev = getenv("DMAIO_TEST_RAWDEV");
	const struct xcase cs[] = {
		{ 0, 0, 65536 },   { 1, 4097, 100001 }, { 4095, 1537, 4097 },
		{ 0, 511, 1 },	   { 8192, 4096, 131072 },
	};
	uint64_t devsize = 0;
	off_t base, region;
	struct tier wt, rt;
	struct file f;
	struct run r;
	struct stat st;
	size_t i, p, m;
	int fds[2];
	int rc;

	(void)state;
	if (!dev || !*dev) {
		printf("# rawdev: DMAIO_TEST_RAWDEV not set\n");
		skip();
	}
	memset(&f, 0, sizeof(f));
	snprintf(f.path, sizeof(f.path), "%s", dev);
	f.vfd = open(dev, O_RDWR | O_CLOEXEC);
	if (f.vfd < 0)
		fail_msg("open %s: %s", dev, strerror(errno));
	assert_int_equal(fstat(f.vfd, &st), 0);
	assert_true(S_ISBLK(st.st_mode));
	assert_int_equal(ioctl(f.vfd, BLKGETSIZE64, &devsize), 0);
	assert_true(devsize >= 8 * MiB);
	/* every provider's run gets its own region: the suites run in parallel */
	region = (off_t)(devsize / 8 < 8 * MiB ? devsize / 8 : 8 * MiB) & ~(off_t)4095;
	base = region * provider_slot();
	f.fixed = true;
	f.size = (off_t)devsize;
	f.win_lo = base;
	f.win_hi = base + region;
	printf("# rawdev %s: %llu bytes, region [%lld, %lld)\n", dev, (unsigned long long)devsize,
	       (long long)f.win_lo, (long long)f.win_hi);
	assert_int_equal(file_fill_pattern(f.vfd, base, (size_t)region, SEED_DEST), 0);
	assert_int_equal(fsync(f.vfd), 0);

	rc = tier_alloc(&wt, "rawdev-src", SMALL_BUF);
	if (rc == 0)
		rc = tier_alloc(&rt, "rawdev-dst", SMALL_BUF);
	if (rc)
		fail_msg("dmaio_buf_alloc = %s", test_errname(rc));
	fds[0] = open(dev, O_RDWR | O_CLOEXEC);
	fds[1] = open(dev, O_RDWR | O_CLOEXEC | O_DIRECT);
	assert_true(fds[0] >= 0 && fds[1] >= 0);

	run_init(&r, "rawdev", &wt);
	tier_fill(&r, &wt, SEED_BUF);
	{
		struct run rr;

		memset(&rr, 0, sizeof(rr));
		rr.t = &rt;
		tier_fill(&rr, &rt, SEED_GUARD);
	}
	for (p = 0; p < ARRAY_SIZE(paths); p++) {
		for (i = 0; i < ARRAY_SIZE(cs); i++) {
			struct xcase c = cs[i];
			unsigned fl = path_flags(paths[p]);
			char desc[200];
			ssize_t ret;
			long long e;

			m = (i + p) & 1;
			c.foff += base;
			r.t = &wt;
			do_write(&r, paths[p], fds[m], m ? "rw+direct" : "rw", &f, &c);
			/* do_write restored the range: write it again, then read it back */
			ret = dmaio_fd_write(fds[m], c.foff, wt.buf, c.boff, c.len, fl, NULL);
			if (ret == -EOPNOTSUPP && !mandatory(paths[p]))
				continue;
			snprintf(desc, sizeof(desc), "rawdev read-back path=%s fd=%s boff=%zu "
				 "off=%lld len=%zu", test_pname(paths[p]), m ? "rw+direct" : "rw",
				 c.boff, (long long)c.foff, c.len);
			if (ret != (ssize_t)c.len) {
				test_fail_in(desc, "write = %s", test_errname(ret));
				continue;
			}
			ret = dmaio_fd_read(fds[m ^ 1], c.foff, rt.buf, 4096 + i, c.len, fl, NULL);
			if (ret == -EOPNOTSUPP && !mandatory(paths[p])) {
				/* the forced path refuses these offsets (uring-dmabuf: buffer and
				 * device offsets not congruent modulo the block): no read-back */
			} else if (ret != (ssize_t)c.len) {
				test_fail_in(desc, "read = %s", test_errname(ret));
			} else {
				cpu_begin(&r, desc, &rt, DMAIO_SYNC_RW);
				e = pat_check(rt.map + 4096 + i, c.len, SEED_BUF, c.boff);
				if (e >= 0) {
					test_fail_in(desc, "read-back byte %lld differs", e);
					pat_report("read-back", rt.map + 4096 + i, c.len, SEED_BUF,
						   c.boff, e, false);
				}
				e = pat_check(rt.map, 4096 + i, SEED_GUARD, 0);
				if (e < 0)
					e = pat_check(rt.map + 4096 + i + c.len,
						      rt.size - 4096 - i - c.len, SEED_GUARD,
						      4096 + i + c.len);
				if (e >= 0)
					test_fail_in(desc, "read-back wrote outside its range");
				pat_fill(rt.map, rt.size, SEED_GUARD, 0);
				cpu_end(&r, desc, &rt, DMAIO_SYNC_RW);
			}
			r.calls += 2;
			assert_int_equal(file_fill_pattern(f.vfd, c.foff, c.len, SEED_DEST), 0);
		}
	}
	/* a read across the end of the device is short */
	{
		uint8_t *own = malloc(4096);
		ssize_t ret;

		assert_non_null(own);
		assert_int_equal(pread_full(f.vfd, own, 1000, (off_t)devsize - 1000), 1000);
		ret = dmaio_fd_read(fds[1], (off_t)devsize - 1000, rt.buf, 0, 4096, 0, NULL);
		if (ret != 1000)
			test_fail_in("rawdev end", "read across the device end = %s, expected 1000",
				     test_errname(ret));
		cpu_begin(&r, "rawdev end", &rt, DMAIO_SYNC_READ);
		if (ret == 1000 && mem_first_diff(rt.map, own, 1000) >= 0)
			test_fail_in("rawdev end", "last 1000 bytes differ from pread");
		if (pat_check(rt.map + 1000, 3096, SEED_GUARD, 1000) >= 0)
			test_fail_in("rawdev end", "bytes past the device end were written");
		cpu_end(&r, "rawdev end", &rt, DMAIO_SYNC_READ);
		free(own);
	}
	close(fds[0]);
	close(fds[1]);
	tier_free(&wt);
	tier_free(&rt);
	close(f.vfd);
	finish(&r);
	assert_no_failures_since(before);
}

/* The context's counters add up everything the buffers (freed ones included) did. */
static void test_ctx_stats(void **state)
{
	struct dmaio_stats st = { .struct_size = sizeof(struct dmaio_stats) };
	uint64_t sum = 0;
	int i;

	(void)state;
	assert_int_equal(dmaio_ctx_get_stats(ctx, &st), 0);
	for (i = 0; i < DMAIO_PATH_COUNT; i++)
		sum += st.path_bytes[i];
	printf("# ctx: ops %llu errors %llu read %llu written %llu (expected %llu / %llu) "
	       "fallbacks %llu\n", (unsigned long long)st.ops, (unsigned long long)st.errors,
	       (unsigned long long)st.bytes_read, (unsigned long long)st.bytes_written,
	       (unsigned long long)total_read, (unsigned long long)total_written,
	       (unsigned long long)st.fallbacks);
	/* threads and rawdev read-backs add bytes not tallied here: at least the tallies */
	assert_true(st.bytes_read >= total_read);
	assert_true(st.bytes_written >= total_written);
	assert_int_equal(sum, st.bytes_read + st.bytes_written);
	assert_true(st.ops >= total_calls);
}

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_small),   cmocka_unit_test(test_medium),
		cmocka_unit_test(test_big),     cmocka_unit_test(test_threads),
		cmocka_unit_test(test_rawdev),  cmocka_unit_test(test_ctx_stats),
	};
	struct dmaio_buf *probe = NULL;
	int rc;

	test_parse_args(argc, argv, &args, "memfd");
	setvbuf(stdout, NULL, _IOLBF, 0);
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
	printf("# heap %s (kind %d), test directory %s%s\n", args.heap, kind, test_dir(),
	       args.quick ? ", quick" : "");
	rc = cmocka_run_group_tests_name(args.heap, tests, NULL, NULL);
	dmaio_ctx_free(ctx);
	test_cleanup();
	return rc ? 1 : 0;
}
