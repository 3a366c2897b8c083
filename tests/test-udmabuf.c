// SPDX-License-Identifier: MIT
/*
 * test-udmabuf: the udmabuf provider (sealed shmem memfd, or hugetlb memfd for udmabuf-huge):
 * the size_limit_mb limit gives -EFBIG, the buffer is a real udmabuf dma-buf of the rounded
 * size, and data written through dmaio_buf_map() is what reaches a file (and data read from a
 * file is what an independent mapping of the dma-buf shows), for every path that serves it.
 *
 * Usage: test-udmabuf --heap udmabuf|udmabuf-huge
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/dma-buf.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cmocka.h>

#include "common.h"

#define LIMIT_PATH "/sys/module/udmabuf/parameters/size_limit_mb"

static struct test_args args;
static int want_kind;
static long saved_limit = -1;

static int write_limit(long mb)
{
	FILE *f = fopen(LIMIT_PATH, "we");
	int rc;

	if (!f)
		return -errno;
	rc = fprintf(f, "%ld\n", mb) < 0 ? -EIO : 0;
	if (fclose(f) != 0)
		rc = -errno;
	return rc;
}

static void restore_limit(void)
{
	if (saved_limit > 0) {
		write_limit(saved_limit);
		saved_limit = -1;
	}
}

static size_t huge_size(void)
{
	struct dmaio_sys_info si = { .struct_size = sizeof(struct dmaio_sys_info) };

	if (dmaio_ctx_get_system(NULL, &si) == 0 && si.huge_page_size)
		return si.huge_page_size;
	return 2 * MiB;
}

static size_t rounded(size_t n)
{
	size_t g = want_kind == DMAIO_BUF_UDMABUF_HUGE ? huge_size() : (size_t)sysconf(_SC_PAGESIZE);

	return (n + g - 1) / g * g;
}

/* What a test holds, freed by its teardown also when an assert ended the test part-way. */
struct hold {
	struct dmaio_ctx *ctx;
	struct dmaio_buf *b;
	void *own;
	size_t ownlen;
	int fd[4];
};

static int hold_setup(void **state)
{
	struct hold *h = calloc(1, sizeof(*h));

	if (!h)
		return -1;
	for (size_t i = 0; i < ARRAY_SIZE(h->fd); i++)
		h->fd[i] = -1;
	*state = h;
	return 0;
}

static int hold_teardown(void **state)
{
	struct hold *h = *state;

	if (h->own)
		munmap(h->own, h->ownlen);
	dmaio_buf_free(h->b);
	dmaio_ctx_free(h->ctx);
	for (size_t i = 0; i < ARRAY_SIZE(h->fd); i++)
		if (h->fd[i] >= 0)
			close(h->fd[i]);
	restore_limit();
	free(h);
	return 0;
}

/* ------------------------------------------------------------------------------------------ */

static void test_kind(void **state)
{
	const size_t sizes[] = { 1, 4097, MiB + 3 };
	struct hold *h = *state;

	for (size_t i = 0; i < ARRAY_SIZE(sizes); i++) {
		char exp[64], sz[32];
		int fd;

		printf("# kind: %zu bytes from %s\n", sizes[i], args.heap_name);
		assert_rc_equal(t_alloc(NULL, args.heap_name, sizes[i], 0, &h->b), 0);
		assert_int_equal(dmaio_buf_kind(h->b), want_kind);
		assert_string_equal(dmaio_buf_provider(h->b), args.heap_name);
		assert_int_equal(dmaio_buf_size(h->b), sizes[i]);
		/* a udmabuf dma-buf of the rounded size */
		fd = dmaio_buf_fd(h->b);
		test_fdinfo(fd, "exp_name", exp, sizeof(exp));
		assert_string_equal(exp, "udmabuf");
		test_fdinfo(fd, "size", sz, sizeof(sz));
		assert_int_equal(strtoull(sz, NULL, 10), rounded(sizes[i]));
		dmaio_buf_free(h->b);
		h->b = NULL;
	}
}

static void test_limit(void **state)
{
	struct hold *h = *state;
	struct dmaio_sys_info si = { .struct_size = sizeof(struct dmaio_sys_info) };
	long lim = test_read_long(LIMIT_PATH);
	size_t bytes;
	int rc;

	if (lim <= 0) {
		printf("# %s not readable\n", LIMIT_PATH);
		skip();
	}
	if (lim > 64) {
		/* a limit we can allocate up to: lower it for the test when allowed */
		if (write_limit(64) == 0) {
			saved_limit = lim;
			atexit(restore_limit);
			printf("# size_limit_mb lowered from %ld to 64 for the test\n", lim);
			lim = 64;
		} else if (lim > 256) {
			printf("# size_limit_mb %ld and not writable: limit not tested\n", lim);
			skip();
		}
	}
	bytes = (size_t)lim * MiB;
	/* a new context: the limit is probed per context */
	assert_rc_equal(dmaio_ctx_new(0, &h->ctx), 0);
	assert_rc_equal(dmaio_ctx_get_system(h->ctx, &si), 0);
	assert_int_equal(si.udmabuf_size_limit, bytes);

	/* above the limit: -EFBIG */
	assert_rc_equal(t_alloc(h->ctx, args.heap_name, bytes + 1, 0, &h->b), -EFBIG);
	assert_rc_equal(t_alloc(h->ctx, args.heap_name, bytes + 4096, 0, &h->b), -EFBIG);
	assert_rc_equal(t_alloc(h->ctx, args.heap_name, 4 * bytes, 0, &h->b), -EFBIG);
	assert_null(h->b);
	/* at and below it: allocated (huge pages may run out: -ENOMEM then) */
	rc = t_alloc(h->ctx, args.heap_name, bytes, 0, &h->b);
	if (rc == -ENOMEM && want_kind == DMAIO_BUF_UDMABUF_HUGE) {
		printf("# %zu bytes of huge pages not available: at-limit allocation -ENOMEM\n",
		       bytes);
	} else {
		assert_rc_equal(rc, 0);
		dmaio_buf_free(h->b);
		h->b = NULL;
	}
	rc = t_alloc(h->ctx, args.heap_name, bytes - 1, 0, &h->b);
	if (rc != -ENOMEM || want_kind != DMAIO_BUF_UDMABUF_HUGE) {
		assert_rc_equal(rc, 0);
		dmaio_buf_free(h->b);
		h->b = NULL;
	}
}

static void test_data(void **state)
{
	static const int paths[] = { DMAIO_PATH_AUTO, DMAIO_PATH_UDMABUF_DIRECT,
				     DMAIO_PATH_BOUNCE_DIRECT, DMAIO_PATH_BUFFERED,
				     DMAIO_PATH_SENDFILE };
	const size_t sz = MiB + 3;
	struct hold *h = *state;
	char pout[PATH_MAX], pin[PATH_MAX];
	uint8_t *m = NULL, *own;
	size_t i, maplen = rounded(sz);
	int fd, out, outd, in, ind;

	assert_rc_equal(t_alloc(NULL, args.heap_name, sz, 0, &h->b), 0);
	assert_rc_equal(dmaio_buf_map(h->b, (void **)&m), 0);
	fd = dmaio_buf_fd(h->b);
	/* an independent mapping of the udmabuf */
	own = mmap(NULL, maplen, PROT_READ, MAP_SHARED, fd, 0);
	if (own == MAP_FAILED)
		fail_msg("our own mmap of the udmabuf: %s", strerror(errno));
	h->own = own;
	h->ownlen = maplen;

	out = h->fd[0] = test_tmpfile(NULL, pout, sizeof(pout));
	outd = h->fd[1] = open(pout, O_RDWR | O_DIRECT | O_CLOEXEC);
	in = h->fd[2] = test_tmpfile(NULL, pin, sizeof(pin));
	assert_int_equal(file_fill_pattern(in, 0, 2 * MiB, SEED_FILE), 0);
	ind = h->fd[3] = open(pin, O_RDONLY | O_DIRECT | O_CLOEXEC);

	for (i = 0; i < ARRAY_SIZE(paths); i++) {
		unsigned fl = paths[i] ? DMAIO_RW_PATH(paths[i]) | DMAIO_RW_NO_FALLBACK : 0;
		const char *pn = dmaio_path_name(paths[i]);
		int wfd = (i & 1) && outd >= 0 ? outd : out;
		int rfd = (i & 1) && ind >= 0 ? ind : in;
		struct dmaio_xfer x = { .struct_size = sizeof(struct dmaio_xfer) };
		ssize_t r;

		printf("# data: path %s, %s fds\n", pn, wfd == outd ? "O_DIRECT" : "plain");
		/* written through the mapping -> the dma-buf's own mapping shows it */
		assert_rc_equal(dmaio_buf_sync_begin(h->b, DMAIO_SYNC_WRITE), 0);
		pat_fill(m, sz, SEED_BUF + i, 0);
		assert_rc_equal(dmaio_buf_sync_end(h->b, DMAIO_SYNC_WRITE), 0);
		test_dmabuf_sync(fd, DMA_BUF_SYNC_START | DMA_BUF_SYNC_READ);
		assert_int_equal(pat_check(own, sz, SEED_BUF + i, 0), -1);
		test_dmabuf_sync(fd, DMA_BUF_SYNC_END | DMA_BUF_SYNC_READ);
		/* ... and reaches the file */
		assert_int_equal(ftruncate(out, 0), 0);
		memset(&x, 0, sizeof(x));
		x.struct_size = sizeof(x);
		r = dmaio_fd_write(wfd, 4095, h->b, 1, sz - 1, fl, &x);
		if (r == -EOPNOTSUPP && paths[i] == DMAIO_PATH_SENDFILE &&
		    want_kind == DMAIO_BUF_UDMABUF_HUGE) {
			/* hugetlbfs files cannot be spliced: sendfile does not apply */
			printf("# %s: not applicable to hugetlb memfds\n", pn);
			continue;
		}
		assert_rc_equal(r, sz - 1);
		if (paths[i])
			assert_int_equal(x.path, paths[i]);
		assert_int_equal(file_check_pattern(out, 4095, sz - 1, SEED_BUF + i, 1), -1);
		assert_int_equal(file_check_zero(out, 0, 4095), -1); /* the hole */

		/* read from a file -> visible through both mappings */
		assert_rc_equal(dmaio_buf_sync_begin(h->b, DMAIO_SYNC_WRITE), 0);
		memset(m, 0, sz);
		assert_rc_equal(dmaio_buf_sync_end(h->b, DMAIO_SYNC_WRITE), 0);
		r = dmaio_fd_read(rfd, 5 + (off_t)i, h->b, 3, sz - 3, fl, &x);
		assert_rc_equal(r, sz - 3);
		if (paths[i])
			assert_int_equal(x.path, paths[i]);
		assert_rc_equal(dmaio_buf_sync_begin(h->b, DMAIO_SYNC_READ), 0);
		assert_int_equal(pat_check(m + 3, sz - 3, SEED_FILE, 5 + i), -1);
		assert_int_equal(mem_check_byte(m, 3, 0), -1); /* nothing before the range */
		assert_rc_equal(dmaio_buf_sync_end(h->b, DMAIO_SYNC_READ), 0);
		test_dmabuf_sync(fd, DMA_BUF_SYNC_START | DMA_BUF_SYNC_READ);
		assert_int_equal(pat_check(own + 3, sz - 3, SEED_FILE, 5 + i), -1);
		test_dmabuf_sync(fd, DMA_BUF_SYNC_END | DMA_BUF_SYNC_READ);
	}
	unlink(pout);
	unlink(pin);
}

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_kind, hold_setup, hold_teardown),
		cmocka_unit_test_setup_teardown(test_data, hold_setup, hold_teardown),
		cmocka_unit_test_setup_teardown(test_limit, hold_setup, hold_teardown),
	};
	struct dmaio_buf *b = NULL;
	int rc;

	test_parse_args(argc, argv, &args, "udmabuf");
	setvbuf(stdout, NULL, _IOLBF, 0);
	want_kind = test_expected_kind(args.heap_name);
	if (want_kind != DMAIO_BUF_UDMABUF && want_kind != DMAIO_BUF_UDMABUF_HUGE) {
		fprintf(stderr, "test-udmabuf takes --heap udmabuf or udmabuf-huge\n");
		return 2;
	}
	rc = test_alloc_or_skip(NULL, args.heap_name, 4096, 0, &b);
	if (rc) {
		fprintf(stderr, "dmaio_buf_alloc(%s) = %s\n", args.heap, test_errname(rc));
		return 1;
	}
	dmaio_buf_free(b);
	rc = cmocka_run_group_tests_name(args.heap, tests, NULL, NULL);
	restore_limit();
	test_cleanup();
	return rc ? 1 : 0;
}
