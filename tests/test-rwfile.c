// SPDX-License-Identifier: MIT
/*
 * test-rwfile: the proposed DMA_BUF_IOCTL_RW_FILE path end to end (suite needs-dmaheap; run in the
 * VM for both boots of tests/vm/run). What is expected comes from the kernel command line:
 * dma_buf_rw_file=on  -> the system heap's exporter takes the ioctl, a cold read of a large file
 *                        into a system-heap buffer goes through rw-file, CMA heap says -EINVAL;
 * dma_buf_rw_file=off -> every heap says -ENOTTY and the same calls fall back;
 * absent              -> whatever the probe says, consistently (a kernel without our patch).
 * Every byte is checked in every case; writes back to files are byte-exact and touch nothing
 * outside their range.
 *
 * Usage: test-rwfile   Env: DMAIO_TEST_DIRS, DMAIO_TEST_QUICK=1
 */
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "common.h"

enum expect { EXPECT_UNKNOWN, EXPECT_ON, EXPECT_OFF };

static enum expect expect;
static struct dmaio_ctx *ctx;
static int src_fd;
static size_t src_size;

static enum expect cmdline_expect(void)
{
	if (test_cmdline_has("dma_buf_rw_file=off"))
		return EXPECT_OFF;
	if (test_cmdline_has("dma_buf_rw_file=on"))
		return EXPECT_ON;
	return EXPECT_UNKNOWN;
}

static void drop_cache(int fd)
{
	int dc;

	fdatasync(fd);
	posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED);
	dc = open("/proc/sys/vm/drop_caches", O_WRONLY | O_CLOEXEC);
	if (dc >= 0) {
		(void)!write(dc, "1", 1);
		close(dc);
	}
}

static const struct t_heap_info *find_heap(const struct t_heap_info *h, int n,
					       const char *name)
{
	for (int i = 0; i < n; i++)
		if (!strcmp(h[i].name, name))
			return &h[i];
	return NULL;
}

static void test_probe(void **state)
{
	struct t_heap_info heaps[16];
	const struct t_heap_info *sys, *cma;
	const char *cma_name = test_cma_heap();
	int n = t_probe_heaps(ctx, heaps, 16);

	(void)state;
	assert_true(n > 0);
	sys = find_heap(heaps, n, "system");
	assert_non_null(sys);
	assert_int_equal(sys->alloc, DMAIO_CAP_YES);
	printf("# system heap: rw_file %d (%d); expectation %s\n", sys->rw_file, sys->rw_file_err,
	       expect == EXPECT_ON ? "on" : expect == EXPECT_OFF ? "off" : "unknown");
	if (expect == EXPECT_ON) {
		assert_int_equal(sys->rw_file, DMAIO_CAP_YES);
	} else if (expect == EXPECT_OFF) {
		assert_int_equal(sys->rw_file, DMAIO_CAP_NO);
		assert_int_equal(sys->rw_file_err, -ENOTTY);
	} else {
		assert_true(sys->rw_file == DMAIO_CAP_YES ||
			    (sys->rw_file == DMAIO_CAP_NO && sys->rw_file_err < 0));
	}
	cma = cma_name ? find_heap(heaps, n, cma_name) : NULL;
	if (cma && cma->alloc == DMAIO_CAP_YES) {
		printf("# CMA heap %s: rw_file %d (%d)\n", cma->name, cma->rw_file, cma->rw_file_err);
		/* the CMA exporter has no rw_file op: never available */
		assert_int_equal(cma->rw_file, DMAIO_CAP_NO);
		if (expect == EXPECT_ON)
			assert_int_equal(cma->rw_file_err, -EINVAL);
		if (expect == EXPECT_OFF)
			assert_int_equal(cma->rw_file_err, -ENOTTY);
	}
}

/* Read [foff, foff + len) into buf at boff, cold, and check every byte of the buffer.
 * want_rw: 1 through rw-file, 0 not through it, -1 either (0 bytes: the path that met EOF). */
static void read_case(const char *heap, size_t boff, off_t foff, size_t len, int want_rw)
{
	size_t bsize = boff + len + 8192;
	struct dmaio_buf *b;
	struct dmaio_xfer x = { .struct_size = sizeof(struct dmaio_xfer) };
	struct dmaio_stats st = { .struct_size = sizeof(struct dmaio_stats) };
	size_t want = foff >= (off_t)src_size ? 0 : MIN(len, src_size - (size_t)foff);
	uint8_t *map;
	ssize_t n;
	long long bad;

	if (test_alloc_or_skip(ctx, heap, bsize, 0, &b))
		fail_msg("alloc %s", heap);
	assert_int_equal(dmaio_buf_map(b, (void **)&map), 0);
	assert_int_equal(dmaio_buf_sync_begin(b, DMAIO_SYNC_WRITE), 0);
	pat_fill(map, bsize, SEED_GUARD, 0);
	assert_int_equal(dmaio_buf_sync_end(b, DMAIO_SYNC_WRITE), 0);
	drop_cache(src_fd);
	n = dmaio_fd_read(src_fd, foff, b, boff, len, 0, &x);
	printf("# read %s boff %zu foff %lld len %zu: %zd via %s (%llu unaligned, %u fallbacks)\n",
	       heap, boff, (long long)foff, len, n, dmaio_path_name(x.path),
	       (unsigned long long)x.unaligned, x.fallbacks);
	assert_int_equal(n, (ssize_t)want);
	assert_int_equal(x.done, want);
	assert_int_equal(dmaio_buf_get_stats(b, &st), 0);
	if (want_rw == 1) {
		assert_int_equal(x.path, DMAIO_PATH_RW_FILE);
		assert_true(st.path_bytes[DMAIO_PATH_RW_FILE] > 0);
	} else if (want_rw == 0) {
		assert_int_not_equal(x.path, DMAIO_PATH_RW_FILE);
		assert_int_equal(st.path_bytes[DMAIO_PATH_RW_FILE], 0);
	}
	assert_int_equal(dmaio_buf_sync_begin(b, DMAIO_SYNC_READ), 0);
	bad = pat_check(map, boff, SEED_GUARD, 0);
	if (bad >= 0)
		pat_report("guard before", map, boff, SEED_GUARD, 0, bad, false);
	assert_true(bad < 0);
	bad = pat_check(map + boff, want, SEED_FILE, (uint64_t)foff);
	if (bad >= 0)
		pat_report("data", map + boff, want, SEED_FILE, (uint64_t)foff, bad, false);
	assert_true(bad < 0);
	bad = pat_check(map + boff + want, bsize - boff - want, SEED_GUARD, boff + want);
	if (bad >= 0)
		pat_report("guard after", map + boff + want, bsize - boff - want, SEED_GUARD,
			   boff + want, bad, false);
	assert_true(bad < 0);
	assert_int_equal(dmaio_buf_sync_end(b, DMAIO_SYNC_READ), 0);
	dmaio_buf_free(b);
}

/* Write [boff, boff + len) of a buffer holding the file's pattern to a prefilled file at foff. */
static void write_case(const char *heap, size_t boff, off_t foff, size_t len, bool want_rw)
{
	size_t bsize = boff + len;
	off_t dsize = foff + (off_t)len + 5000;
	struct dmaio_buf *b;
	struct dmaio_xfer x = { .struct_size = sizeof(struct dmaio_xfer) };
	struct stat st;
	uint8_t *map;
	ssize_t n;
	long long bad;
	int dfd;

	if (test_alloc_or_skip(ctx, heap, bsize, 0, &b))
		fail_msg("alloc %s", heap);
	assert_int_equal(dmaio_buf_map(b, (void **)&map), 0);
	assert_int_equal(dmaio_buf_sync_begin(b, DMAIO_SYNC_WRITE), 0);
	pat_fill(map, bsize, SEED_BUF, 0);
	assert_int_equal(dmaio_buf_sync_end(b, DMAIO_SYNC_WRITE), 0);
	dfd = test_tmpfile(NULL, NULL, 0);
	assert_int_equal(file_fill_pattern(dfd, 0, (size_t)dsize, SEED_DEST), 0);
	drop_cache(dfd);
	n = dmaio_fd_write(dfd, foff, b, boff, len, 0, &x);
	printf("# write %s boff %zu foff %lld len %zu: %zd via %s\n", heap, boff, (long long)foff,
	       len, n, dmaio_path_name(x.path));
	assert_int_equal(n, (ssize_t)len);
	if (want_rw)
		assert_int_equal(x.path, DMAIO_PATH_RW_FILE);
	else
		assert_int_not_equal(x.path, DMAIO_PATH_RW_FILE);
	assert_int_equal(fstat(dfd, &st), 0);
	assert_int_equal(st.st_size, dsize);
	bad = file_check_pattern(dfd, 0, (size_t)foff, SEED_DEST, 0);
	assert_true(bad == -1);
	bad = file_check_pattern(dfd, foff, len, SEED_BUF, boff);
	assert_true(bad == -1);
	bad = file_check_pattern(dfd, foff + (off_t)len, (size_t)(dsize - foff - (off_t)len),
				 SEED_DEST, (uint64_t)(foff + (off_t)len));
	assert_true(bad == -1);
	close(dfd);
	dmaio_buf_free(b);
}

static bool system_takes_rw(void)
{
	struct t_heap_info heaps[16];
	const struct t_heap_info *s;
	int n = t_probe_heaps(ctx, heaps, 16);

	s = n > 0 ? find_heap(heaps, n, "system") : NULL;
	return s && s->rw_file == DMAIO_CAP_YES;
}

static void test_system_reads(void **state)
{
	bool rw = system_takes_rw();
	size_t ps = (size_t)sysconf(_SC_PAGESIZE);

	(void)state;
	/* the whole file, cold, page-aligned: DIRECT for all but the odd tail */
	read_case("system", 0, 0, src_size, rw);
	/* unaligned buffer and file offsets, odd length */
	read_case("system", 4097, 513, 3 * MiB + 77, rw);
	/* aligned offsets, across end of file: a page and a bit, which the cost model may give to
	 * a ring op through the mapping rather than a blocking RW_FILE call on a worker thread */
	read_case("system", ps, (off_t)(src_size / ps * ps - ps), 4 * ps, -1);
	/* starting past end of file: 0 bytes, nothing touched */
	read_case("system", 0, (off_t)src_size + 10, 4096, -1);
}

static void test_system_writes(void **state)
{
	bool rw = system_takes_rw();

	(void)state;
	write_case("system", 0, 0, 8 * MiB, rw);
	write_case("system", 4097, 513, 3 * MiB + 77, rw);
}

static void test_cma_falls_back(void **state)
{
	const char *cma = test_cma_heap();

	(void)state;
	if (!cma)
		skip();
	read_case(cma, 0, 0, MIN(src_size, 16 * MiB), false);
	read_case(cma, 4097, 513, 1 * MiB + 77, false);
	write_case(cma, 4097, 513, 1 * MiB + 77, false);
}

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_probe),
		cmocka_unit_test(test_system_reads),
		cmocka_unit_test(test_system_writes),
		cmocka_unit_test(test_cma_falls_back),
	};
	struct test_args a;
	struct dmaio_buf *probe;
	int r;

	test_parse_args(argc, argv, &a, "system");
	expect = cmdline_expect();
	assert_int_equal(dmaio_ctx_new(0, &ctx), 0);
	/* no system heap here: nothing to test (exit 77), or a failure where devices are expected */
	r = test_alloc_or_skip(ctx, "system", 4096, 0, &probe);
	if (r) {
		fprintf(stderr, "system heap allocation failed: %s\n", test_errname(r));
		return 1;
	}
	dmaio_buf_free(probe);
	src_size = (a.quick ? 32 : 256) * MiB + 1234; /* not a page multiple */
	src_fd = test_tmpfile(NULL, NULL, 0);
	if (file_fill_pattern(src_fd, 0, src_size, SEED_FILE)) {
		fprintf(stderr, "cannot write the source file\n");
		return 1;
	}
	r = cmocka_run_group_tests(tests, NULL, NULL);
	close(src_fd);
	dmaio_ctx_free(ctx);
	return r;
}
