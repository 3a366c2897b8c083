// SPDX-License-Identifier: MIT
/*
 * test-heap: one dma-heap, like the kernel's dmabuf-heap selftest but through libdmaio:
 * alloc + map + sync + CPU access, zeroed on (re)allocation, concurrent allocations from
 * several threads, and dmaio_buf_import() of a dma-buf made outside the library (dup semantics).
 *
 * Usage: test-heap --heap NAME   (system, cma = first existing CMA heap, or any heap name)
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/dma-buf.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "common.h"

static struct test_args args;
static struct dmaio_ctx *ctx;

static size_t page_round(size_t n)
{
	size_t ps = (size_t)sysconf(_SC_PAGESIZE);

	return (n + ps - 1) / ps * ps;
}

/*
 * What a test holds, freed by its teardown, also when an assert ended the test part-way:
 * buffers, our own mapping of a dma-buf, fds, threads still running.
 */
#define NTHREADS 4

struct thr {
	pthread_t tid;
	struct dmaio_ctx *c;
	unsigned id, iters, done;
};

struct hold {
	struct dmaio_buf *b[3];
	void *own;
	size_t ownlen;
	int fd[2];
	struct thr t[NTHREADS];
	unsigned nthreads;
};

static int hold_setup(void **state)
{
	struct hold *h = calloc(1, sizeof(*h));

	if (!h)
		return -1;
	h->fd[0] = h->fd[1] = -1;
	*state = h;
	return 0;
}

static int hold_teardown(void **state)
{
	struct hold *h = *state;

	for (unsigned i = 0; i < h->nthreads; i++)
		pthread_join(h->t[i].tid, NULL);
	if (h->own)
		munmap(h->own, h->ownlen);
	for (size_t i = 0; i < ARRAY_SIZE(h->b); i++)
		dmaio_buf_free(h->b[i]);
	for (size_t i = 0; i < ARRAY_SIZE(h->fd); i++)
		if (h->fd[i] >= 0)
			close(h->fd[i]);
	free(h);
	return 0;
}

/* Our own mapping of @fd, held by @h. */
static uint8_t *own_map(struct hold *h, int fd, size_t len, int prot)
{
	if (h->own)
		munmap(h->own, h->ownlen);
	h->own = mmap(NULL, len, prot, MAP_SHARED, fd, 0);
	if (h->own == MAP_FAILED) {
		h->own = NULL;
		fail_msg("mmap of the dma-buf fd %d: %s", fd, strerror(errno));
	}
	h->ownlen = len;
	return h->own;
}

static void own_unmap(struct hold *h)
{
	munmap(h->own, h->ownlen);
	h->own = NULL;
}

/* ------------------------------------------------------------------------------------------ */

static void test_alloc_map(void **state)
{
	const size_t sizes[] = { 1, 4095, 4096, 4097, 65536 + 3, MiB + 1 };
	struct hold *h = *state;

	for (size_t i = 0; i < ARRAY_SIZE(sizes); i++) {
		size_t sz = sizes[i], maplen = page_round(sz);
		char exp_name[64], fsize[32];
		uint8_t *m = NULL, *m2 = NULL, *own;
		int fd, fl;

		printf("# alloc/map: %zu bytes from %s\n", sz, args.heap_name);
		assert_rc_equal(t_alloc(ctx, args.heap_name, sz, 0, &h->b[0]), 0);
		assert_int_equal(dmaio_buf_kind(h->b[0]), DMAIO_BUF_HEAP);
		assert_string_equal(dmaio_buf_provider(h->b[0]), args.heap_name);
		assert_int_equal(dmaio_buf_size(h->b[0]), sz);
		fd = dmaio_buf_fd(h->b[0]);
		assert_true(fd >= 0);
		fl = fcntl(fd, F_GETFD);
		assert_true(fl >= 0 && (fl & FD_CLOEXEC));
		/* a dma-buf of the page-rounded size */
		test_fdinfo(fd, "exp_name", exp_name, sizeof(exp_name));
		assert_true(exp_name[0]);
		test_fdinfo(fd, "size", fsize, sizeof(fsize));
		assert_int_equal(strtoull(fsize, NULL, 10), maplen);
		assert_rc_equal(dmaio_buf_unmap(h->b[0]), -ENOENT); /* not mapped yet */

		assert_rc_equal(dmaio_buf_map(h->b[0], (void **)&m), 0);
		assert_non_null(m);
		assert_rc_equal(dmaio_buf_map(h->b[0], (void **)&m2), 0);
		assert_ptr_equal(m2, m); /* the second map: the same address */
		assert_rc_equal(dmaio_buf_sync_begin(h->b[0], DMAIO_SYNC_WRITE), 0);
		pat_fill(m, sz, SEED_BUF, 0);
		assert_rc_equal(dmaio_buf_sync_end(h->b[0], DMAIO_SYNC_WRITE), 0);
		assert_rc_equal(dmaio_buf_unmap(h->b[0]), 0);
		assert_rc_equal(dmaio_buf_unmap(h->b[0]), -ENOENT);
		m = NULL;
		assert_rc_equal(dmaio_buf_map(h->b[0], (void **)&m), 0);
		assert_non_null(m);
		assert_rc_equal(dmaio_buf_sync_begin(h->b[0], DMAIO_SYNC_READ), 0);
		/* the data survives unmap/map */
		assert_int_equal(pat_check(m, sz, SEED_BUF, 0), -1);
		assert_rc_equal(dmaio_buf_sync_end(h->b[0], DMAIO_SYNC_READ), 0);

		/* an independent mapping of the dma-buf sees the same bytes */
		own = own_map(h, fd, maplen, PROT_READ);
		assert_rc_equal(test_dmabuf_sync(fd, DMA_BUF_SYNC_START | DMA_BUF_SYNC_READ), 0);
		assert_int_equal(pat_check(own, sz, SEED_BUF, 0), -1);
		assert_rc_equal(test_dmabuf_sync(fd, DMA_BUF_SYNC_END | DMA_BUF_SYNC_READ), 0);
		own_unmap(h);

		/* RW both ways; bad directions refused */
		assert_rc_equal(dmaio_buf_sync_begin(h->b[0], DMAIO_SYNC_RW), 0);
		m[sz - 1] ^= 0xff;
		assert_rc_equal(dmaio_buf_sync_end(h->b[0], DMAIO_SYNC_RW), 0);
		assert_rc_equal(dmaio_buf_sync_begin(h->b[0], 0), -EINVAL);
		assert_rc_equal(dmaio_buf_sync_end(h->b[0], 8), -EINVAL);
		dmaio_buf_free(h->b[0]); /* still mapped: free unmaps */
		h->b[0] = NULL;
		/* and the buffer fd is closed */
		assert_true(fcntl(fd, F_GETFD) < 0);
	}
}

static void test_zeroed(void **state)
{
	const size_t sizes[] = { 4096, 256 * KiB + 1, 4 * MiB };
	struct hold *h = *state;

	for (size_t i = 0; i < ARRAY_SIZE(sizes); i++) {
		for (unsigned round = 0; round < 4; round++) {
			uint8_t *m = NULL;
			long long e;
			int rc;

			rc = t_alloc(ctx, args.heap_name, sizes[i], 0, &h->b[0]);
			if (rc == -ENOMEM && sizes[i] > MiB) {
				printf("# zeroed: %zu bytes: -ENOMEM, size skipped\n", sizes[i]);
				break;
			}
			assert_rc_equal(rc, 0);
			assert_rc_equal(dmaio_buf_map(h->b[0], (void **)&m), 0);
			assert_rc_equal(dmaio_buf_sync_begin(h->b[0], DMAIO_SYNC_RW), 0);
			/* the whole mapping, page rounding included */
			e = mem_check_byte(m, page_round(sizes[i]), 0);
			if (e >= 0)
				fail_msg("round %u, size %zu: byte %lld of a new buffer is %#x, "
					 "not 0", round, sizes[i], e, m[e]);
			memset(m, 0xff, page_round(sizes[i]));
			assert_rc_equal(dmaio_buf_sync_end(h->b[0], DMAIO_SYNC_RW), 0);
			dmaio_buf_free(h->b[0]);
			h->b[0] = NULL;
		}
	}
}

/* ------------------------------------------------------------------------------------------ */

/* A worker: no cmocka assert here (another thread); each problem is a test_fail(). */
static void *thread_main(void *arg)
{
	struct thr *t = arg;
	unsigned i, seed = t->id * 7919 + 1;

	for (i = 0; i < t->iters; i++) {
		struct dmaio_buf *b = NULL;
		uint8_t *m = NULL;
		size_t sz;
		int rc;

		seed = seed * 1103515245 + 12345;
		sz = 1 + (seed >> 8) % (256 * KiB);
		rc = t_alloc(t->c, args.heap_name, sz, 0, &b);
		if (rc) {
			test_fail("thread %u: alloc(%zu) = %s", t->id, sz, test_errname(rc));
			continue;
		}
		rc = dmaio_buf_map(b, (void **)&m);
		if (!rc)
			rc = dmaio_buf_sync_begin(b, DMAIO_SYNC_RW);
		if (rc) {
			test_fail("thread %u: map/sync = %s", t->id, test_errname(rc));
			dmaio_buf_free(b);
			continue;
		}
		if (mem_check_byte(m, sz, 0) >= 0)
			test_fail("thread %u: new buffer of %zu not zeroed", t->id, sz);
		pat_fill(m, sz, SEED_BUF + t->id, i);
		if (pat_check(m, sz, SEED_BUF + t->id, i) >= 0)
			test_fail("thread %u: pattern lost in buffer of %zu", t->id, sz);
		dmaio_buf_sync_end(b, DMAIO_SYNC_RW);
		dmaio_buf_free(b);
		t->done++;
	}
	return NULL;
}

static void test_concurrent(void **state)
{
	struct hold *h = *state;
	unsigned i, done = 0, before = test_failures();
	int fds0 = test_count_fds();

	for (i = 0; i < NTHREADS; i++) {
		struct thr *t = &h->t[i];

		t->id = i;
		t->iters = args.quick ? 8 : 64;
		/* half the threads on the shared context, half on the default one */
		t->c = i & 1 ? NULL : ctx;
		assert_int_equal(pthread_create(&t->tid, NULL, thread_main, t), 0);
		h->nthreads++;
	}
	for (i = 0; i < NTHREADS; i++) {
		pthread_join(h->t[i].tid, NULL);
		done += h->t[i].done;
	}
	h->nthreads = 0;
	printf("# concurrent: %u threads, %u allocations, %u errors\n", NTHREADS, done,
	       test_failures() - before);
	assert_no_failures_since(before);
	assert_int_equal(done, NTHREADS * h->t[0].iters);
	/* the default context may keep a cached heap fd, nothing else */
	assert_in_range(test_count_fds(), 0, fds0 + 2);
}

/* ------------------------------------------------------------------------------------------ */

static void test_import(void **state)
{
	const size_t sz = 64 * KiB;
	struct hold *h = *state;
	char path[PATH_MAX];
	uint8_t *own, *m = NULL, *chk;
	struct stat st;
	int fd, ffd, fl;

	/* a dma-buf made outside the library, filled through our own mapping */
	fd = h->fd[0] = test_heap_alloc_fd(args.heap_name, sz);
	if (fd < 0)
		fail_msg("our own allocation from %s: %s", args.heap_name, test_errname(fd));
	own = own_map(h, fd, sz, PROT_READ | PROT_WRITE);
	test_dmabuf_sync(fd, DMA_BUF_SYNC_START | DMA_BUF_SYNC_WRITE);
	pat_fill(own, sz, SEED_BUF, 0);
	test_dmabuf_sync(fd, DMA_BUF_SYNC_END | DMA_BUF_SYNC_WRITE);

	assert_rc_equal(dmaio_buf_import(ctx, fd, 0, &h->b[0]), 0);
	assert_int_equal(dmaio_buf_kind(h->b[0]), DMAIO_BUF_IMPORTED);
	assert_string_equal(dmaio_buf_provider(h->b[0]), "import");
	assert_int_equal(dmaio_buf_size(h->b[0]), sz);
	/* what the kernel says of it: the heap exports it under its own name, fstat's inode */
	{
		struct dmaio_buf_info info = { .struct_size = sizeof(info) };
		char exp_name[64];

		assert_rc_equal(dmaio_buf_get_info(h->b[0], &info), 0);
		test_fdinfo(fd, "exp_name", exp_name, sizeof(exp_name));
		assert_string_equal(info.exporter, exp_name);
		assert_string_equal(info.exporter, args.heap_name);
		assert_int_equal(fstat(fd, &st), 0);
		assert_int_equal(info.inode, (uint64_t)st.st_ino);
		assert_int_equal(info.mmap, DMAIO_CAP_YES);
		assert_int_equal(info.kind, DMAIO_BUF_IMPORTED);
		assert_int_equal(info.size, sz);
	}
	/* the fd was duplicated, close-on-exec */
	assert_true(dmaio_buf_fd(h->b[0]) >= 0);
	assert_int_not_equal(dmaio_buf_fd(h->b[0]), fd);
	fl = fcntl(dmaio_buf_fd(h->b[0]), F_GETFD);
	assert_true(fl >= 0 && (fl & FD_CLOEXEC));
	assert_rc_equal(dmaio_buf_map(h->b[0], (void **)&m), 0);
	dmaio_buf_sync_begin(h->b[0], DMAIO_SYNC_READ);
	assert_int_equal(pat_check(m, sz, SEED_BUF, 0), -1); /* the import shows the data */
	dmaio_buf_sync_end(h->b[0], DMAIO_SYNC_READ);

	/* file -> imported buffer, visible through our own mapping */
	ffd = h->fd[1] = test_tmpfile(NULL, path, sizeof(path));
	assert_int_equal(file_fill_pattern(ffd, 0, 3 * sz, SEED_FILE), 0);
	assert_rc_equal(dmaio_fd_read(ffd, 4097, h->b[0], 1, sz - 2, 0, NULL), sz - 2);
	test_dmabuf_sync(fd, DMA_BUF_SYNC_START | DMA_BUF_SYNC_READ);
	assert_int_equal(pat_check(own + 1, sz - 2, SEED_FILE, 4097), -1);
	/* the bytes outside the read range unchanged */
	assert_int_equal(own[0], pat_byte(SEED_BUF, 0));
	assert_int_equal(own[sz - 1], pat_byte(SEED_BUF, sz - 1));
	test_dmabuf_sync(fd, DMA_BUF_SYNC_END | DMA_BUF_SYNC_READ);
	/* imported buffer -> file */
	assert_rc_equal(dmaio_fd_write(ffd, 2 * (off_t)sz + 3, h->b[0], 0, sz, 0, NULL), sz);
	chk = malloc(sz);
	assert_non_null(chk);
	if (pread_full(ffd, chk, sz, 2 * (off_t)sz + 3) != (ssize_t)sz) {
		free(chk);
		fail_msg("pread of the written range");
	}
	test_dmabuf_sync(fd, DMA_BUF_SYNC_START | DMA_BUF_SYNC_READ);
	{
		long long d = mem_first_diff(chk, own, sz);

		free(chk);
		test_dmabuf_sync(fd, DMA_BUF_SYNC_END | DMA_BUF_SYNC_READ);
		if (d >= 0)
			fail_msg("the written file differs from the buffer at byte %lld", d);
	}

	/* dup semantics: after dmaio_buf_free the caller's fd and mapping still work */
	dmaio_buf_free(h->b[0]);
	h->b[0] = NULL;
	assert_true(fcntl(fd, F_GETFD) >= 0);
	assert_int_equal(fstat(fd, &st), 0);
	test_dmabuf_sync(fd, DMA_BUF_SYNC_START | DMA_BUF_SYNC_READ);
	assert_int_equal(pat_check(own + 1, sz - 2, SEED_FILE, 4097), -1);
	test_dmabuf_sync(fd, DMA_BUF_SYNC_END | DMA_BUF_SYNC_READ);
	own_unmap(h);
	own_map(h, fd, sz, PROT_READ); /* the caller can still mmap its fd */
	own_unmap(h);

	/* and the other way: the caller closes first, the imported buffer lives on */
	assert_rc_equal(dmaio_buf_import(ctx, fd, 0, &h->b[1]), 0);
	close(fd);
	h->fd[0] = -1;
	m = NULL;
	assert_rc_equal(dmaio_buf_map(h->b[1], (void **)&m), 0);
	assert_rc_equal(dmaio_fd_read(ffd, 0, h->b[1], 0, sz, DMAIO_RW_PATH(DMAIO_PATH_BUFFERED), NULL),
			sz);
	dmaio_buf_sync_begin(h->b[1], DMAIO_SYNC_READ);
	assert_int_equal(pat_check(m, sz, SEED_FILE, 0), -1);
	dmaio_buf_sync_end(h->b[1], DMAIO_SYNC_READ);
	dmaio_buf_free(h->b[1]);
	h->b[1] = NULL;

	/* importing a library buffer's fd, then freeing the original first */
	assert_rc_equal(t_alloc(ctx, args.heap_name, sz, 0, &h->b[2]), 0);
	assert_rc_equal(dmaio_buf_import(NULL, dmaio_buf_fd(h->b[2]), 0, &h->b[1]), 0);
	dmaio_buf_free(h->b[2]);
	h->b[2] = NULL;
	assert_rc_equal(dmaio_fd_read(ffd, 5, h->b[1], 3, sz - 3, 0, NULL), sz - 3);
	m = NULL;
	assert_rc_equal(dmaio_buf_map(h->b[1], (void **)&m), 0);
	dmaio_buf_sync_begin(h->b[1], DMAIO_SYNC_READ);
	assert_int_equal(pat_check(m + 3, sz - 3, SEED_FILE, 5), -1);
	dmaio_buf_sync_end(h->b[1], DMAIO_SYNC_READ);
	unlink(path);
}

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_alloc_map, hold_setup, hold_teardown),
		cmocka_unit_test_setup_teardown(test_zeroed, hold_setup, hold_teardown),
		cmocka_unit_test_setup_teardown(test_concurrent, hold_setup, hold_teardown),
		cmocka_unit_test_setup_teardown(test_import, hold_setup, hold_teardown),
	};
	struct dmaio_buf *b = NULL;
	int rc;

	test_parse_args(argc, argv, &args, "system");
	setvbuf(stdout, NULL, _IOLBF, 0);
	if (test_expected_kind(args.heap_name) != DMAIO_BUF_HEAP) {
		fprintf(stderr, "test-heap takes a dma-heap name, not %s\n", args.heap);
		return 2;
	}
	rc = dmaio_ctx_new(0, &ctx);
	if (rc) {
		fprintf(stderr, "dmaio_ctx_new = %s\n", test_errname(rc));
		return 1;
	}
	rc = test_alloc_or_skip(ctx, args.heap_name, 4096, 0, &b);
	if (rc) {
		fprintf(stderr, "dmaio_buf_alloc(%s) = %s\n", args.heap, test_errname(rc));
		return 1;
	}
	dmaio_buf_free(b);
	rc = cmocka_run_group_tests_name(args.heap, tests, NULL, NULL);
	dmaio_ctx_free(ctx);
	test_cleanup();
	return rc ? 1 : 0;
}
