// SPDX-License-Identifier: MIT
/*
 * test-abi: callers built against another version of dmaio.h (dmaio.h, "Extensible structs").
 *
 * With tests/check-abi.sh (meson tests abi and abi-selftest: the built library against the ABI
 * stored at the release, tests/abi/), this is the "old-size struct caller test" of the 1.0
 * release: a program built against the 1.0 header keeps working with every later library, and
 * a program built against a later header with the 1.0 library.
 *
 * For every struct the library FILLS (dmaio_xfer, dmaio_done, dmaio_progress, dmaio_stats of a
 * buffer and of a context, dmaio_sys_info, dmaio_proposed_info, dmaio_heap_info and
 * dmaio_heap_proposed where a dma-heap exists, dmaio_file_info of a descriptor and of a
 * registered file, dmaio_image_layout, dmaio_reason of a refused allocation):
 *   old   struct_size = the 1.0 size (DMAIO_SIZE_*), guard bytes after it: the call works and
 *         not one guard byte changes, struct_size neither;
 *   new   struct_size = sizeof + 32, those 32 bytes 0xa5: the call works, the 32 bytes come back
 *         zero, struct_size unchanged, the guard after them untouched;
 *   bad   struct_size below the 1.0 size (1.0 - 1, 0), 65537 and 0xffffffff: -EINVAL and not
 *         one byte written.
 * For every struct the library READS (dmaio_alloc_opts, dmaio_image_desc, dmaio_io as a batch of
 * one and of three): the 1.0 size works, a larger struct_size with a zero tail works, a
 * non-zero byte in the tail (its first, its last, in the first and in the last element of a
 * batch) is -E2BIG, a smaller one or 65537 is -EINVAL; a refused batch queues nothing.
 * And a dmaio_done array reaped at a stride larger than sizeof (out[0].struct_size = sizeof +
 * 16): the completions land at that stride, each element's struct_size is the stride, its extra
 * bytes zero, and the slot after the last completion is untouched.
 *
 * Everything on the "memfd" provider: runs anywhere (suite host).
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "common.h"

#define BUF_SIZE ((size_t)65536)
#define FILE_SIZE ((size_t)65536)
#define XFER_LEN 4096u
#define REAP_TIMEOUT_MS 60000
#define SIZE_GARBAGE 65537u /* above the largest struct_size taken (65536) */
#define TAIL 32u            /* the new-size caller's bytes past sizeof */
#define GUARD 64u           /* guard bytes after a struct */
#define GUARD_BYTE 0x3c
#define NEW_BYTE 0xa5
/* room for a struct of SIZE_GARBAGE bytes and its guard, so that a library that took it would
 * not write outside the test's memory */
#define AREA_SIZE (SIZE_GARBAGE + 4096u)

static struct {
	struct dmaio_ctx *ctx;
	struct dmaio_buf *buf;  /* memfd, BUF_SIZE */
	struct dmaio_file *file; /* registered file of fd */
	struct dmaio_queue *q;
	int fd;                 /* FILE_SIZE bytes of SEED_FILE */
	uint32_t pending;       /* ranges submitted and not reaped */
} E;

/* the memory a struct under test lives in: aligned for any field */
static union {
	max_align_t align;
	unsigned char b[AREA_SIZE];
} area_u;
#define area (area_u.b)

static void set_size(void *st, uint32_t size)
{
	memcpy(st, &size, sizeof(size));
}

static uint32_t get_size(const void *st)
{
	uint32_t n;

	memcpy(&n, st, sizeof(n));
	return n;
}

/* index of the first byte of [p, p + len) that is not b, or -1 */
static long first_not(const unsigned char *p, size_t len, unsigned char b)
{
	for (size_t i = 0; i < len; i++)
		if (p[i] != b)
			return (long)i;
	return -1;
}

/* ------------------------------------------------------------------------------------------ */
/* Structs the library fills */

struct out_case {
	const char *what;    /* "struct dmaio_xfer from dmaio_fd_read()" */
	size_t size10;       /* its DMAIO_SIZE_* */
	size_t size_now;     /* its sizeof in this header */
	long want;           /* what the call returns when it works */
	long (*call)(void *st);
	/* the fields the call filled make sense (1.0 fields only), or NULL */
	void (*sane)(const char *what, const void *st);
};

static void out_bad(const struct out_case *c, uint32_t bad)
{
	long r, e;

	memset(area, GUARD_BYTE, sizeof(area));
	set_size(area, bad);
	r = c->call(area);
	test_expect(r == -EINVAL, "%s: struct_size %u gives %s, expected -EINVAL", c->what, bad,
		    test_errname(r));
	test_expect(get_size(area) == bad, "%s: struct_size %u changed to %u", c->what, bad,
		    get_size(area));
	e = first_not(area + 4, sizeof(area) - 4, GUARD_BYTE);
	test_expect(e < 0, "%s: struct_size %u refused, yet byte %ld was written", c->what, bad,
		    e + 4);
}

static void check_out(const struct out_case *c)
{
	unsigned before = test_failures();
	size_t big = c->size_now + TAIL;
	long r, e;

	assert_true(c->size10 <= c->size_now);
	assert_true(c->size10 >= 8);

	/* old: the 1.0 size, guard bytes right after it */
	memset(area, GUARD_BYTE, sizeof(area));
	set_size(area, (uint32_t)c->size10);
	r = c->call(area);
	test_expect(r == c->want, "%s: 1.0 size (%zu): %s, expected %s", c->what, c->size10,
		    test_errname(r), test_errname(c->want));
	test_expect(get_size(area) == c->size10, "%s: 1.0 size: struct_size %zu became %u", c->what,
		    c->size10, get_size(area));
	e = first_not(area + c->size10, GUARD, GUARD_BYTE);
	test_expect(e < 0, "%s: 1.0 size (%zu): guard byte %ld after the struct changed", c->what,
		    c->size10, e);
	if (r == c->want && c->sane)
		c->sane(c->what, area);

	/* new: sizeof + 32, the 32 bytes 0xa5 */
	memset(area, GUARD_BYTE, sizeof(area));
	memset(area + c->size_now, NEW_BYTE, TAIL);
	set_size(area, (uint32_t)big);
	r = c->call(area);
	test_expect(r == c->want, "%s: size %zu (sizeof + %u): %s, expected %s", c->what, big, TAIL,
		    test_errname(r), test_errname(c->want));
	test_expect(get_size(area) == big, "%s: struct_size %zu became %u", c->what, big,
		    get_size(area));
	e = first_not(area + c->size_now, TAIL, 0);
	test_expect(e < 0, "%s: size %zu: byte %zu (past what the library knows) is 0x%02x, not 0",
		    c->what, big, c->size_now + (size_t)e, e < 0 ? 0 : area[c->size_now + (size_t)e]);
	e = first_not(area + big, GUARD, GUARD_BYTE);
	test_expect(e < 0, "%s: size %zu: guard byte %ld after the struct changed", c->what, big, e);
	if (r == c->want && c->sane)
		c->sane(c->what, area);

	/* bad sizes: refused, nothing written */
	out_bad(c, (uint32_t)c->size10 - 1);
	out_bad(c, 0);
	out_bad(c, SIZE_GARBAGE);
	out_bad(c, UINT32_MAX);

	assert_no_failures_since(before);
}

/* --- struct dmaio_xfer: dmaio_fd_read() of XFER_LEN bytes into the memfd buffer --- */
static long call_xfer(void *st)
{
	return (long)dmaio_fd_read(E.fd, 0, E.buf, 0, XFER_LEN, 0, st);
}

static void sane_xfer(const char *what, const void *st)
{
	struct dmaio_xfer x;

	memcpy(&x, st, DMAIO_SIZE_XFER);
	test_expect(x.done == XFER_LEN, "%s: done %llu, expected %u", what,
		    (unsigned long long)x.done, XFER_LEN);
	test_expect(x.path > DMAIO_PATH_AUTO && x.path < DMAIO_PATH_COUNT, "%s: path %u", what,
		    x.path);
	test_expect(x.pad0 == 0, "%s: pad0 %u", what, x.pad0);
}

static void test_xfer(void **state)
{
	const struct out_case c = { "struct dmaio_xfer from dmaio_fd_read()", DMAIO_SIZE_XFER,
				    sizeof(struct dmaio_xfer), XFER_LEN, call_xfer, sane_xfer };

	(void)state;
	check_out(&c);
}

/* --- struct dmaio_done: one range submitted (unless one is pending), reaped --- */
static int submit_reads(uint32_t n, uint64_t user_data0)
{
	struct dmaio_io io[3];

	assert_true(n <= 3);
	for (uint32_t i = 0; i < n; i++) {
		memset(&io[i], 0, sizeof(io[i]));
		io[i].struct_size = sizeof(io[i]);
		io[i].op = DMAIO_OP_READ;
		io[i].file = E.file;
		io[i].file_off = (uint64_t)i * XFER_LEN;
		io[i].buf = E.buf;
		io[i].buf_off = (uint64_t)i * XFER_LEN;
		io[i].len = XFER_LEN;
		io[i].user_data = user_data0 + i;
	}
	return dmaio_queue_submit(E.q, io, n);
}

static long call_done(void *st)
{
	int r;

	if (!E.pending) {
		r = submit_reads(1, 77);
		assert_rc_equal(r, 1);
		E.pending = 1;
	}
	r = dmaio_queue_reap(E.q, st, 1, 1, REAP_TIMEOUT_MS);
	if (r > 0)
		E.pending -= (uint32_t)r;
	return r;
}

static void sane_done(const char *what, const void *st)
{
	struct dmaio_done d;

	memcpy(&d, st, DMAIO_SIZE_DONE);
	test_expect(d.res == XFER_LEN && d.done == XFER_LEN, "%s: res %lld done %llu, expected %u",
		    what, (long long)d.res, (unsigned long long)d.done, XFER_LEN);
	test_expect(d.user_data == 77, "%s: user_data %llu, expected 77", what,
		    (unsigned long long)d.user_data);
	test_expect(d.pad0 == 0, "%s: pad0 %u", what, d.pad0);
}

static void test_done(void **state)
{
	const struct out_case c = { "struct dmaio_done from dmaio_queue_reap()", DMAIO_SIZE_DONE,
				    sizeof(struct dmaio_done), 1, call_done, sane_done };

	(void)state;
	check_out(&c);
	/* a refused reap left its range in the queue: collect it */
	while (E.pending) {
		struct dmaio_done d = { .struct_size = sizeof(d) };

		assert_rc_equal(dmaio_queue_reap(E.q, &d, 1, 1, REAP_TIMEOUT_MS), 1);
		E.pending--;
	}
}

/* --- struct dmaio_progress --- */
static long call_progress(void *st)
{
	return dmaio_queue_get_progress(E.q, st);
}

static void sane_progress(const char *what, const void *st)
{
	struct dmaio_progress p;

	memcpy(&p, st, DMAIO_SIZE_PROGRESS);
	test_expect(p.submitted >= p.completed && p.completed >= p.reaped,
		    "%s: submitted %llu completed %llu reaped %llu", what,
		    (unsigned long long)p.submitted, (unsigned long long)p.completed,
		    (unsigned long long)p.reaped);
	test_expect(p.pad0 == 0, "%s: pad0 %u", what, p.pad0);
}

static void test_progress(void **state)
{
	const struct out_case c = { "struct dmaio_progress from dmaio_queue_get_progress()",
				    DMAIO_SIZE_PROGRESS, sizeof(struct dmaio_progress), 0,
				    call_progress, sane_progress };

	(void)state;
	/* a range done, so that the counters are not all zero */
	assert_rc_equal(call_done(&(struct dmaio_done){ .struct_size = sizeof(struct dmaio_done) }),
			1);
	check_out(&c);
}

/* --- struct dmaio_stats of the buffer and of the context --- */
static long call_buf_stats(void *st)
{
	return dmaio_buf_get_stats(E.buf, st);
}

static long call_ctx_stats(void *st)
{
	return dmaio_ctx_get_stats(E.ctx, st);
}

static void sane_stats(const char *what, const void *st)
{
	struct dmaio_stats s;

	memcpy(&s, st, DMAIO_SIZE_STATS);
	test_expect(s.ops >= 1 && s.bytes_read >= XFER_LEN, "%s: ops %llu bytes_read %llu", what,
		    (unsigned long long)s.ops, (unsigned long long)s.bytes_read);
	test_expect(s.pad0 == 0, "%s: pad0 %u", what, s.pad0);
}

static void test_stats(void **state)
{
	const struct out_case b = { "struct dmaio_stats from dmaio_buf_get_stats()",
				    DMAIO_SIZE_STATS, sizeof(struct dmaio_stats), 0,
				    call_buf_stats, sane_stats };
	const struct out_case c = { "struct dmaio_stats from dmaio_ctx_get_stats()",
				    DMAIO_SIZE_STATS, sizeof(struct dmaio_stats), 0,
				    call_ctx_stats, sane_stats };

	(void)state;
	assert_rc_equal(call_xfer(NULL), XFER_LEN);
	check_out(&b);
	check_out(&c);
}

/* --- struct dmaio_sys_info, struct dmaio_proposed_info --- */
static long call_sys(void *st)
{
	return dmaio_ctx_get_system(E.ctx, st);
}

static void sane_sys(const char *what, const void *st)
{
	struct dmaio_sys_info s;

	memcpy(&s, st, DMAIO_SIZE_SYS_INFO);
	test_expect(s.page_size == (uint32_t)sysconf(_SC_PAGESIZE), "%s: page_size %u", what,
		    s.page_size);
	test_expect(memchr(s.drm_node, 0, sizeof(s.drm_node)) != NULL,
		    "%s: drm_node not NUL-terminated", what);
}

static long call_proposed(void *st)
{
	return dmaio_ctx_get_proposed(E.ctx, st);
}

static void sane_proposed(const char *what, const void *st)
{
	struct dmaio_proposed_info p;

	memcpy(&p, st, DMAIO_SIZE_PROPOSED_INFO);
	test_expect(p.rw_file_kernel >= DMAIO_CAP_UNKNOWN && p.rw_file_kernel <= DMAIO_CAP_NO,
		    "%s: rw_file_kernel %d", what, p.rw_file_kernel);
	test_expect(memchr(p.uring_dmabuf_dev, 0, sizeof(p.uring_dmabuf_dev)) != NULL,
		    "%s: uring_dmabuf_dev not NUL-terminated", what);
}

static void test_system(void **state)
{
	const struct out_case s = { "struct dmaio_sys_info from dmaio_ctx_get_system()",
				    DMAIO_SIZE_SYS_INFO, sizeof(struct dmaio_sys_info), 0, call_sys,
				    sane_sys };
	const struct out_case p = { "struct dmaio_proposed_info from dmaio_ctx_get_proposed()",
				    DMAIO_SIZE_PROPOSED_INFO, sizeof(struct dmaio_proposed_info), 0,
				    call_proposed, sane_proposed };

	(void)state;
	check_out(&s);
	check_out(&p);
}

/* --- struct dmaio_heap_info, struct dmaio_heap_proposed: heap 0, where there is one --- */
static long call_heap(void *st)
{
	return dmaio_ctx_get_heap(E.ctx, 0, st);
}

static void sane_heap(const char *what, const void *st)
{
	struct dmaio_heap_info h;

	memcpy(&h, st, DMAIO_SIZE_HEAP_INFO);
	test_expect(h.name[0] && memchr(h.name, 0, sizeof(h.name)) != NULL, "%s: name", what);
}

static long call_heap_proposed(void *st)
{
	return dmaio_ctx_get_heap_proposed(E.ctx, 0, st);
}

static void test_heap(void **state)
{
	const struct out_case h = { "struct dmaio_heap_info from dmaio_ctx_get_heap()",
				    DMAIO_SIZE_HEAP_INFO, sizeof(struct dmaio_heap_info), 0,
				    call_heap, sane_heap };
	const struct out_case p = { "struct dmaio_heap_proposed from dmaio_ctx_get_heap_proposed()",
				    DMAIO_SIZE_HEAP_PROPOSED, sizeof(struct dmaio_heap_proposed), 0,
				    call_heap_proposed, NULL };
	int n = dmaio_ctx_heap_count(E.ctx);

	(void)state;
	if (n <= 0) {
		print_message("no dma-heap here (dmaio_ctx_heap_count() = %d): struct dmaio_heap_info "
			      "and struct dmaio_heap_proposed not tried\n", n);
		skip();
	}
	check_out(&h);
	check_out(&p);
}

/* --- struct dmaio_file_info of a descriptor and of a registered file --- */
static long call_fd_info(void *st)
{
	return dmaio_fd_get_info(E.fd, st);
}

static long call_file_info(void *st)
{
	return dmaio_file_get_info(E.file, st);
}

static void sane_file_info(const char *what, const void *st)
{
	struct dmaio_file_info f;

	memcpy(&f, st, DMAIO_SIZE_FILE_INFO);
	test_expect(f.file_size == FILE_SIZE && f.is_blockdev == 0, "%s: file_size %llu", what,
		    (unsigned long long)f.file_size);
	test_expect(f.pad0 == 0, "%s: pad0 %u", what, f.pad0);
}

static void test_file_info(void **state)
{
	const struct out_case d = { "struct dmaio_file_info from dmaio_fd_get_info()",
				    DMAIO_SIZE_FILE_INFO, sizeof(struct dmaio_file_info), 0,
				    call_fd_info, sane_file_info };
	const struct out_case f = { "struct dmaio_file_info from dmaio_file_get_info()",
				    DMAIO_SIZE_FILE_INFO, sizeof(struct dmaio_file_info), 0,
				    call_file_info, sane_file_info };

	(void)state;
	check_out(&d);
	check_out(&f);
}

/* --- struct dmaio_image_layout: NV12 64x32 --- */
static void nv12_desc(struct dmaio_image_desc *d)
{
	memset(d, 0, sizeof(*d));
	d->struct_size = sizeof(*d);
	d->width = 64;
	d->height = 32;
	d->fourcc = DMAIO_FOURCC('N', 'V', '1', '2');
	d->modifier = DMAIO_MOD_LINEAR;
}

static long call_layout(void *st)
{
	struct dmaio_image_desc d;

	nv12_desc(&d);
	return dmaio_image_get_layout(&d, st, NULL);
}

static void sane_layout(const char *what, const void *st)
{
	struct dmaio_image_layout l;

	memcpy(&l, st, DMAIO_SIZE_IMAGE_LAYOUT);
	test_expect(l.num_planes == 2 && l.total_size == 64 * 32 * 3 / 2 && l.strides[0] == 64,
		    "%s: num_planes %u total_size %llu stride %u", what, l.num_planes,
		    (unsigned long long)l.total_size, l.strides[0]);
	test_expect(l.pad0 == 0, "%s: pad0 %u", what, l.pad0);
}

static void test_layout(void **state)
{
	const struct out_case c = { "struct dmaio_image_layout from dmaio_image_get_layout()",
				    DMAIO_SIZE_IMAGE_LAYOUT, sizeof(struct dmaio_image_layout), 0,
				    call_layout, sane_layout };

	(void)state;
	check_out(&c);
}

/* --- struct dmaio_reason of a refused allocation (a provider that does not exist) --- */
static const char *const no_provider[] = { "dmaio-test-abi-none", NULL };

static long call_reason(void *st)
{
	struct dmaio_alloc_opts o = { .struct_size = sizeof(o), .providers = no_provider };
	struct dmaio_buf *b = NULL;
	int r = dmaio_buf_alloc(E.ctx, XFER_LEN, &o, &b, st);

	if (!r)
		dmaio_buf_free(b);
	return r;
}

static void sane_reason(const char *what, const void *st)
{
	struct dmaio_reason w;

	memcpy(&w, st, DMAIO_SIZE_REASON);
	test_expect(w.error == -ENOENT, "%s: error %s, expected -ENOENT", what,
		    test_errname(w.error));
	test_expect(memchr(w.text, 0, sizeof(w.text)) != NULL && w.text[0],
		    "%s: no text, or not NUL-terminated", what);
}

static void test_reason(void **state)
{
	const struct out_case c = { "struct dmaio_reason from a refused dmaio_buf_alloc()",
				    DMAIO_SIZE_REASON, sizeof(struct dmaio_reason), -ENOENT,
				    call_reason, sane_reason };

	(void)state;
	check_out(&c);
}

/* --- an array of struct dmaio_done at a stride larger than sizeof --- */
static void test_done_stride(void **state)
{
	const size_t stride = sizeof(struct dmaio_done) + 16;
	unsigned before = test_failures();
	unsigned seen = 0;
	int r;

	(void)state;
	assert_int_equal(E.pending, 0);
	memset(area, GUARD_BYTE, sizeof(area));
	for (unsigned i = 0; i < 4; i++)
		memset(area + i * stride + sizeof(struct dmaio_done), NEW_BYTE, 16);
	set_size(area, (uint32_t)stride);
	assert_rc_equal(submit_reads(3, 100), 3);
	/* room for 4, 3 in flight: the 4th slot stays as it was */
	r = dmaio_queue_reap(E.q, (struct dmaio_done *)(void *)area, 4, 3, REAP_TIMEOUT_MS);
	assert_rc_equal(r, 3);
	for (unsigned i = 0; i < 3; i++) {
		struct dmaio_done d;
		unsigned char *el = area + i * stride;
		long e;

		memcpy(&d, el, sizeof(d));
		test_expect(d.struct_size == stride, "element %u: struct_size %u, expected the stride "
			    "%zu", i, d.struct_size, stride);
		test_expect(d.res == XFER_LEN && d.done == XFER_LEN, "element %u: res %lld", i,
			    (long long)d.res);
		test_expect(d.user_data >= 100 && d.user_data < 103 &&
			    !(seen & (1u << (d.user_data - 100))),
			    "element %u: user_data %llu (not 100..102 or twice)", i,
			    (unsigned long long)d.user_data);
		if (d.user_data >= 100 && d.user_data < 103)
			seen |= 1u << (d.user_data - 100);
		e = first_not(el + sizeof(d), 16, 0);
		test_expect(e < 0, "element %u: byte %zu past sizeof is 0x%02x, not 0", i,
			    sizeof(d) + (size_t)e, e < 0 ? 0 : el[sizeof(d) + (size_t)e]);
	}
	{
		unsigned char *el = area + 3 * stride;
		long e = first_not(el, sizeof(struct dmaio_done), GUARD_BYTE);

		test_expect(e < 0, "the 4th slot (no completion for it) was written at byte %ld", e);
		e = first_not(el + sizeof(struct dmaio_done), 16, NEW_BYTE);
		test_expect(e < 0, "the 4th slot's extra bytes were written at byte %ld", e);
	}
	assert_no_failures_since(before);
}

/* ------------------------------------------------------------------------------------------ */
/* Structs the library reads */

struct in_case {
	const char *what;
	size_t size10, size_now;
	uint32_t n;                       /* elements (an array: dmaio_io) */
	void (*proto)(void *st, uint32_t i); /* element i, valid, sizeof bytes, struct_size set */
	long want;                        /* what the call returns when it works */
	long (*call)(const void *st, uint32_t n);
};

/* the n elements at stride, each a proto, struct_size = stride, zeros past sizeof */
static void lay_out(const struct in_case *c, size_t stride)
{
	unsigned char el[512];

	assert_true(c->size_now <= sizeof(el));
	memset(area, 0, sizeof(area));
	for (uint32_t i = 0; i < c->n; i++) {
		c->proto(el, i);
		memcpy(area + i * stride, el, MIN(stride, c->size_now));
		set_size(area + i * stride, (uint32_t)stride);
	}
}

static void in_expect(const struct in_case *c, size_t stride, long want, const char *how)
{
	long r;

	r = c->call(area, c->n);
	test_expect(r == want, "%s%s: struct_size %zu%s: %s, expected %s", c->what,
		    c->n > 1 ? " (batch)" : "", stride, how, test_errname(r), test_errname(want));
}

static void check_in(const struct in_case *c)
{
	unsigned before = test_failures();
	size_t big = c->size_now + TAIL;
	char how[80];

	assert_true(c->size10 <= c->size_now);
	/* the 1.0 size; sizeof; larger with a zero tail */
	lay_out(c, c->size10);
	in_expect(c, c->size10, c->want, " (1.0)");
	lay_out(c, c->size_now);
	in_expect(c, c->size_now, c->want, " (sizeof)");
	lay_out(c, big);
	in_expect(c, big, c->want, " (zero tail)");
	/* a non-zero byte in the tail: its first and last byte, in the first and last element */
	for (uint32_t i = 0; i < c->n; i += (c->n > 1 ? c->n - 1 : 1)) {
		for (size_t k = c->size_now; k < big; k += big - c->size_now - 1) {
			lay_out(c, big);
			area[i * big + k] = 1;
			snprintf(how, sizeof(how), ", byte %zu of element %u not zero", k, i);
			in_expect(c, big, -E2BIG, how);
		}
	}
	/* smaller than 1.0, garbage */
	lay_out(c, c->size10 - 8);
	in_expect(c, c->size10 - 8, -EINVAL, " (below 1.0)");
	lay_out(c, c->size10);
	set_size(area, (uint32_t)c->size10 - 1);
	in_expect(c, c->size10 - 1, -EINVAL, " (1.0 - 1)");
	lay_out(c, c->size10);
	set_size(area, SIZE_GARBAGE);
	in_expect(c, SIZE_GARBAGE, -EINVAL, " (garbage)");
	assert_no_failures_since(before);
}

/* --- struct dmaio_alloc_opts: a memfd buffer --- */
static const char *const memfd_provider[] = { "memfd", NULL };

static void proto_opts(void *st, uint32_t i)
{
	struct dmaio_alloc_opts o = { .struct_size = sizeof(o), .providers = memfd_provider,
				      .name = "abi-test" };

	(void)i;
	memcpy(st, &o, sizeof(o));
}

static long call_opts(const void *st, uint32_t n)
{
	struct dmaio_buf *b = NULL;
	int r;

	(void)n;
	r = dmaio_buf_alloc(E.ctx, XFER_LEN, st, &b, NULL);
	if (!r) {
		if (dmaio_buf_kind(b) != DMAIO_BUF_MEMFD)
			test_fail("struct dmaio_alloc_opts: providers not read: kind %d",
				  dmaio_buf_kind(b));
		dmaio_buf_free(b);
	}
	return r;
}

static void test_alloc_opts(void **state)
{
	const struct in_case c = { "struct dmaio_alloc_opts to dmaio_buf_alloc()",
				   DMAIO_SIZE_ALLOC_OPTS, sizeof(struct dmaio_alloc_opts), 1,
				   proto_opts, 0, call_opts };

	(void)state;
	check_in(&c);
}

/* --- struct dmaio_image_desc --- */
static void proto_desc(void *st, uint32_t i)
{
	struct dmaio_image_desc d;

	(void)i;
	nv12_desc(&d);
	memcpy(st, &d, sizeof(d));
}

static long call_desc(const void *st, uint32_t n)
{
	struct dmaio_image_layout l = { .struct_size = sizeof(l) };
	int r;

	(void)n;
	r = dmaio_image_get_layout(st, &l, NULL);
	if (!r && l.total_size != 64 * 32 * 3 / 2)
		test_fail("struct dmaio_image_desc: layout of %llu bytes, expected %u",
			  (unsigned long long)l.total_size, 64 * 32 * 3 / 2);
	return r;
}

static void test_image_desc(void **state)
{
	const struct in_case c = { "struct dmaio_image_desc to dmaio_image_get_layout()",
				   DMAIO_SIZE_IMAGE_DESC, sizeof(struct dmaio_image_desc), 1,
				   proto_desc, 0, call_desc };

	(void)state;
	check_in(&c);
}

/* --- struct dmaio_io: batches of one and of three reads; a refused batch queues nothing --- */
static void proto_io(void *st, uint32_t i)
{
	struct dmaio_io io;

	memset(&io, 0, sizeof(io));
	io.struct_size = sizeof(io);
	io.op = DMAIO_OP_READ;
	io.file = E.file;
	io.file_off = (uint64_t)i * XFER_LEN;
	io.buf = E.buf;
	io.buf_off = (uint64_t)i * XFER_LEN;
	io.len = XFER_LEN;
	io.user_data = 200 + i;
	memcpy(st, &io, sizeof(io));
}

static long call_io(const void *st, uint32_t n)
{
	struct dmaio_progress p0 = { .struct_size = sizeof(p0) };
	struct dmaio_progress p1 = { .struct_size = sizeof(p1) };
	int r;

	assert_rc_equal(dmaio_queue_get_progress(E.q, &p0), 0);
	r = dmaio_queue_submit(E.q, st, n);
	assert_rc_equal(dmaio_queue_get_progress(E.q, &p1), 0);
	if (r < 0 && p1.submitted != p0.submitted)
		test_fail("struct dmaio_io: a refused batch (%s) queued %llu ranges", test_errname(r),
			  (unsigned long long)(p1.submitted - p0.submitted));
	if (r > 0) { /* the ranges queued, read as submitted: collect and check them */
		uint32_t seen = 0;

		for (int k = 0; k < r; k++) {
			struct dmaio_done d = { .struct_size = sizeof(d) };

			assert_rc_equal(dmaio_queue_reap(E.q, &d, 1, 1, REAP_TIMEOUT_MS), 1);
			if (d.res != XFER_LEN || d.user_data < 200 || d.user_data >= 200 + n ||
			    (seen & (1u << (d.user_data - 200))))
				test_fail("struct dmaio_io: completion res %lld user_data %llu",
					  (long long)d.res, (unsigned long long)d.user_data);
			else
				seen |= 1u << (d.user_data - 200);
		}
	}
	return r;
}

static void test_io(void **state)
{
	struct in_case c = { "struct dmaio_io to dmaio_queue_submit()", DMAIO_SIZE_IO,
			     sizeof(struct dmaio_io), 1, proto_io, 1, call_io };

	(void)state;
	assert_int_equal(E.pending, 0);
	check_in(&c);
	c.n = 3;
	c.want = 3;
	check_in(&c);
}

/* ------------------------------------------------------------------------------------------ */

static int setup(void **state)
{
	struct dmaio_alloc_opts o = { .struct_size = sizeof(o), .providers = memfd_provider };
	int r;

	(void)state;
	r = dmaio_ctx_new(0, &E.ctx);
	if (r) {
		print_error("dmaio_ctx_new: %s\n", test_errname(r));
		return -1;
	}
	r = dmaio_buf_alloc(E.ctx, BUF_SIZE, &o, &E.buf, NULL);
	if (r) {
		print_error("dmaio_buf_alloc(memfd): %s\n", test_errname(r));
		return -1;
	}
	E.fd = test_tmpfile(NULL, NULL, 0);
	if (file_fill_pattern(E.fd, 0, FILE_SIZE, SEED_FILE)) {
		print_error("cannot fill the test file\n");
		return -1;
	}
	r = dmaio_file_open(E.ctx, E.fd, 0, &E.file);
	if (!r)
		r = dmaio_queue_new(E.ctx, 8, 0, &E.q);
	if (r) {
		print_error("dmaio_file_open / dmaio_queue_new: %s\n", test_errname(r));
		return -1;
	}
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	dmaio_queue_free(E.q);
	dmaio_file_close(E.file);
	dmaio_buf_free(E.buf);
	if (E.fd >= 0)
		close(E.fd);
	dmaio_ctx_free(E.ctx);
	return 0;
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		/* filled by the library */
		cmocka_unit_test(test_xfer),
		cmocka_unit_test(test_done),
		cmocka_unit_test(test_progress),
		cmocka_unit_test(test_stats),
		cmocka_unit_test(test_system),
		cmocka_unit_test(test_heap),
		cmocka_unit_test(test_file_info),
		cmocka_unit_test(test_layout),
		cmocka_unit_test(test_reason),
		cmocka_unit_test(test_done_stride),
		/* read by the library */
		cmocka_unit_test(test_alloc_opts),
		cmocka_unit_test(test_image_desc),
		cmocka_unit_test(test_io),
	};
	int rc;

	setvbuf(stdout, NULL, _IOLBF, 0);
	rc = cmocka_run_group_tests_name("abi-sizes", tests, setup, teardown);
	test_cleanup();
	return rc ? 1 : 0;
}
