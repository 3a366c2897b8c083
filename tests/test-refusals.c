/* SPDX-License-Identifier: MIT */
/*
 * Refusals are local to a path (issue 15, item 5): a forced sendfile that cannot get its pipe
 * (no descriptor left: EMFILE) falls back to another path and the read succeeds; with
 * DMAIO_RW_NO_FALLBACK the same call gives -EOPNOTSUPP, the documented errno, not the raw one.
 * The test file sits on a disk filesystem, so copy_file_range with the memfd refuses (EXDEV)
 * and sendfile needs splice, hence a pipe.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

#include <cmocka.h>

#include "common.h"

#define SIZE (1u << 20)

static struct test_args args;

/* the lowest fd number not open now */
static int lowest_free(void)
{
	int fd = dup(0);

	close(fd);
	return fd;
}

static void test_emfile(void **state)
{
	struct dmaio_buf *b;
	struct dmaio_xfer x = { .struct_size = sizeof(struct dmaio_xfer) };
	struct rlimit old, lim;
	unsigned flags = DMAIO_RW_PATH(DMAIO_PATH_SENDFILE);
	void *map;
	ssize_t r, r2;
	int fd;

	(void)state;
	/* 77 where the provider is missing on the host; in the VM a failure */
	assert_rc_equal(test_alloc_or_skip(NULL, args.heap_name, SIZE, 0, &b), 0);
	if (dmaio_buf_kind(b) != DMAIO_BUF_MEMFD && dmaio_buf_kind(b) != DMAIO_BUF_UDMABUF) {
		dmaio_buf_free(b);
		skip();
	}
	assert_int_equal(dmaio_buf_map(b, &map), 0);
	fd = test_tmpfile(NULL, NULL, 0);
	assert_int_equal(file_fill_pattern(fd, 0, SIZE, SEED_FILE), 0);
	/* once with descriptors to spare: the pooled queue and its ring exist afterwards */
	r = dmaio_fd_read(fd, 0, b, 0, SIZE, flags, &x);
	assert_int_equal(r, SIZE);
	printf("# with descriptors to spare: path %s, %u fallbacks\n", dmaio_path_name(x.path),
	       x.fallbacks);
	/* one descriptor left: the O_DIRECT reopen of the file takes it, the pipe cannot be had */
	assert_int_equal(getrlimit(RLIMIT_NOFILE, &old), 0);
	lim = old;
	lim.rlim_cur = (rlim_t)lowest_free() + 1;
	assert_int_equal(setrlimit(RLIMIT_NOFILE, &lim), 0);
	memset(map, 0, SIZE);
	r = dmaio_fd_read(fd, 0, b, 0, SIZE, flags, &x);
	r2 = dmaio_fd_read(fd, 0, b, 0, SIZE, flags | DMAIO_RW_NO_FALLBACK, NULL);
	assert_int_equal(setrlimit(RLIMIT_NOFILE, &old), 0);
	printf("# one descriptor left: %zd via %s, %u fallbacks; with NO_FALLBACK: %zd (%s)\n", r,
	       dmaio_path_name(x.path), x.fallbacks, r2, test_errname(r2));
	assert_int_equal(r, SIZE);
	assert_true(x.fallbacks >= 1);
	assert_int_not_equal(x.path, DMAIO_PATH_SENDFILE);
	assert_true(pat_check(map, SIZE, SEED_FILE, 0) < 0);
	assert_int_equal(r2, -EOPNOTSUPP);
	close(fd);
	dmaio_buf_free(b);
}

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_emfile),
	};

	test_parse_args(argc, argv, &args, "memfd");
	return cmocka_run_group_tests_name("refusals", tests, NULL, NULL);
}
