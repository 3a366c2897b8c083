/* SPDX-License-Identifier: MIT */
/*
 * A file truncated by another thread while a read is in flight (issue 15, item 3). What the
 * library promises (include/dmaio.h, dmaio_fd_read): no byte outside [buf_off, buf_off + len)
 * is ever written; the bytes before the new end of file are the file's; between the new end of
 * file and the end of the range a byte holds the file's old data (pieces of the range run at
 * once: one that finished before the truncation has landed, even past the returned count), zero
 * (an O_DIRECT read that met the truncation: the kernel may zero-fill those blocks and even count
 * them), or, past the returned count, its old value. Every path that can serve the buffer, many rounds, the
 * truncation at random times and sizes.
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "common.h"

#define FSIZE (8u << 20)
#define GUARD 4096u

static struct test_args args;

struct cutter {
	int fd;
	unsigned delay_us;
	off_t size;
};

static void *cut(void *arg)
{
	struct cutter *c = arg;

	usleep(c->delay_us);
	if (ftruncate(c->fd, c->size))
		abort();
	return NULL;
}

static void one_path(int path, unsigned rounds)
{
	struct dmaio_buf *b;
	uint8_t *map;
	unsigned zeros = 0, counted_zeros = 0, before = test_failures();

	/* 77 where the provider is missing on the host; in the VM a failure */
	assert_rc_equal(test_alloc_or_skip(NULL, args.heap_name, FSIZE + 2 * GUARD, 0, &b), 0);
	assert_int_equal(dmaio_buf_map(b, (void **)&map), 0);
	for (unsigned i = 0; i < rounds && test_failures() == before; i++) {
		int fd = test_tmpfile(NULL, NULL, 0);
		struct cutter c = { .fd = fd, .delay_us = (unsigned)(rand() % 3000),
				    .size = (off_t)((uint64_t)rand() * 4099 % FSIZE) };
		pthread_t th;
		ssize_t r;
		long long at;

		assert_int_equal(file_fill_pattern(fd, 0, FSIZE, SEED_FILE), 0);
		posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED);
		pat_fill(map, FSIZE + 2 * GUARD, SEED_GUARD, 0);
		if (path) {
			char why[128];

			if (t_choose_path(b, GUARD, fd, 0, FSIZE, 0, DMAIO_RW_PATH(path) |
					      DMAIO_RW_NO_FALLBACK, why, sizeof(why)) != path) {
				close(fd);
				printf("# %-15s cannot serve this buffer: %s\n", dmaio_path_name(path), why);
				dmaio_buf_free(b);
				return;
			}
		}
		assert_int_equal(pthread_create(&th, NULL, cut, &c), 0);
		r = dmaio_fd_read(fd, 0, b, GUARD, FSIZE, path ? DMAIO_RW_PATH(path) : 0, NULL);
		pthread_join(th, NULL);
		close(fd);
		if (r < 0) { /* an error is honest too; the bytes outside must hold */
			r = 0;
		}
		/* the returned bytes before the new end of file are the file's */
		if (pat_check(map + GUARD, (size_t)MIN(r, c.size), SEED_FILE, 0) >= 0)
			test_fail("%s: round %u: returned bytes wrong (count %zd, cut to %lld)",
				  dmaio_path_name(path), i, r, (long long)c.size);
		/* between the new end of file and the count: the old data, or zero */
		for (uint64_t o = GUARD + (uint64_t)c.size; o < GUARD + (uint64_t)r; o++) {
			if (map[o] == pat_byte(SEED_FILE, o - GUARD))
				continue;
			if (map[o] == 0) {
				counted_zeros++;
				continue;
			}
			test_fail("%s: round %u: byte %llu (count %zd, cut to %lld) is %#x",
				  dmaio_path_name(path), i, (unsigned long long)(o - GUARD), r,
				  (long long)c.size, map[o]);
			break;
		}
		/* nothing outside the range */
		if (pat_check(map, GUARD, SEED_GUARD, 0) >= 0 ||
		    pat_check(map + GUARD + FSIZE, GUARD, SEED_GUARD, GUARD + FSIZE) >= 0)
			test_fail("%s: round %u: bytes outside the range written",
				  dmaio_path_name(path), i);
		/* past the count: the buffer's old value, the file's old data (a later piece that
		 * finished before the truncation), or zero; never anything else */
		for (uint64_t o = GUARD + (uint64_t)r; o < GUARD + FSIZE; o++) {
			if (map[o] == pat_byte(SEED_GUARD, o) || map[o] == pat_byte(SEED_FILE, o - GUARD))
				continue;
			if (map[o] == 0) {
				zeros++;
				continue;
			}
			at = (long long)o;
			test_fail("%s: round %u: byte %lld past the count %zd is %#x",
				  dmaio_path_name(path), i, at - GUARD, r, map[o]);
			break;
		}
	}
	printf("# %-15s %u rounds; zero bytes past the new end of file: %u counted, %u past the "
	       "count\n", path ? dmaio_path_name(path) : "auto", rounds, counted_zeros, zeros);
	dmaio_buf_free(b);
	assert_no_failures_since(before);
}

static void test_truncate(void **state)
{
	static const int paths[] = { DMAIO_PATH_AUTO, DMAIO_PATH_UDMABUF_DIRECT,
				     DMAIO_PATH_BOUNCE_DIRECT, DMAIO_PATH_BUFFERED,
				     DMAIO_PATH_SENDFILE, DMAIO_PATH_RW_FILE };
	unsigned rounds = args.quick ? 5 : 20;

	(void)state;
	srand((unsigned)time(NULL));
	for (size_t i = 0; i < sizeof(paths) / sizeof(paths[0]); i++)
		one_path(paths[i], rounds);
}

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_truncate),
	};

	test_parse_args(argc, argv, &args, "memfd");
	return cmocka_run_group_tests_name("truncate", tests, NULL, NULL);
}
