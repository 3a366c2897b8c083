/* SPDX-License-Identifier: MIT */
/*
 * fork(): a child that goes on using the context, buffers and paths its parent used gets correct
 * data (its own rings, worker threads and bounce memory are made on first use; the parent's are
 * left alone), and the parent keeps working afterwards (no hang, correct data). A buffer shared
 * by both (a dma-buf or memfd: the same pages) carries what the child wrote to the parent.
 * Every path that can serve the buffer, forced; then auto. Suites: host (memfd), device heaps.
 */
#include <fcntl.h>
#include <limits.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "common.h"

#define SIZE (4u << 20)
#define SEED_F2 0x66326632ull

static struct test_args args;

/* read [0, len) of fd into buf at off through path: every byte as the file has it (seed) */
static void read_check(struct dmaio_buf *b, void *map, size_t off, int fd, size_t len, int path,
		       uint64_t seed)
{
	ssize_t n = dmaio_fd_read(fd, 0, b, off, len, path ? DMAIO_RW_PATH(path) : 0, NULL);

	if (n != (ssize_t)len)
		fail_msg("read via %s: %s", test_pname(path), test_errname(n));
	if (pat_check((char *)map + off, len, seed, 0) >= 0)
		fail_msg("read via %s: wrong bytes", test_pname(path));
}

/* What the child inherits from its parent. */
struct inherited {
	struct dmaio_buf *shared;
	void *smap;
	int f2, path;
};

/* The child (a cmocka test of its own, test_in_child()): the inherited context, buffer and path */
static void child(void **state)
{
	struct inherited *in = *state;
	unsigned fl = in->path ? DMAIO_RW_PATH(in->path) : 0;
	struct dmaio_io io = { .struct_size = sizeof(struct dmaio_io), .op = DMAIO_OP_READ, .flags = fl, .len = SIZE, .user_data = 7 };
	struct dmaio_queue *q;
	struct dmaio_buf *own;
	struct dmaio_file *rf;
	struct dmaio_done d = { .struct_size = sizeof(struct dmaio_done) };
	char path[PATH_MAX];
	void *omap;
	int out;

	alarm(120);
	/* its own buffer */
	assert_rc_equal(t_alloc(NULL, args.heap_name, SIZE, 0, &own), 0);
	assert_rc_equal(dmaio_buf_map(own, &omap), 0);
	read_check(own, omap, 0, in->f2, SIZE, in->path, SEED_F2);
	/* the buffer shared with the parent: the second half */
	read_check(in->shared, in->smap, SIZE / 2, in->f2, SIZE / 2, in->path, SEED_F2);
	/* a write through the same path */
	out = test_tmpfile(NULL, path, sizeof(path));
	unlink(path); /* the child exits with _exit(): no cleanup at exit */
	assert_rc_equal(dmaio_fd_write(out, 0, own, 0, SIZE, fl, NULL), SIZE);
	assert_int_equal(file_check_pattern(out, 0, SIZE, SEED_F2, 0), -1);
	/* a queue of its own, on the inherited context */
	assert_rc_equal(dmaio_file_open(NULL, in->f2, 0, &rf), 0);
	assert_rc_equal(dmaio_queue_new(NULL, 8, 0, &q), 0);
	io.buf = own;
	io.file = rf;
	memset(omap, 0, SIZE);
	assert_rc_equal(dmaio_queue_submit(q, &io, 1), 1);
	assert_rc_equal(dmaio_queue_reap(q, &d, 1, 1, 30000), 1);
	assert_rc_equal(d.res, SIZE);
	assert_int_equal(d.user_data, 7);
	assert_int_equal(pat_check(omap, SIZE, SEED_F2, 0), -1);
	dmaio_queue_free(q);
	dmaio_file_close(rf);
	dmaio_buf_free(own);
}

static void one_path(int path, int f1, int f2)
{
	struct inherited in = { .f2 = f2, .path = path };
	struct dmaio_buf *b;
	char name[64];
	void *map;

	/* 77 where the provider is missing on the host; in the VM a failure */
	assert_rc_equal(test_alloc_or_skip(NULL, args.heap_name, SIZE, 0, &b), 0);
	assert_int_equal(dmaio_buf_map(b, &map), 0);
	if (path) {
		char why[160];
		int p = t_choose_path(b, 0, f1, 0, SIZE, 0, DMAIO_RW_PATH(path) |
					  DMAIO_RW_NO_FALLBACK, why, sizeof(why));

		if (p != path) {
			printf("# %-15s cannot serve this buffer: %s\n", dmaio_path_name(path), why);
			dmaio_buf_free(b);
			return;
		}
	}
	/* the parent uses the path first: its rings, bounce memory, workers exist at fork time */
	read_check(b, map, 0, f1, SIZE, path, SEED_FILE);
	in.shared = b;
	in.smap = map;
	snprintf(name, sizeof(name), "child via %s", path ? dmaio_path_name(path) : "auto");
	test_in_child(name, child, &in);
	/* the parent goes on: first half again from f1, second half is what the child put there */
	alarm(120);
	memset(map, 0, SIZE / 2);
	read_check(b, map, 0, f1, SIZE / 2, path, SEED_FILE);
	assert_true(pat_check((char *)map + SIZE / 2, SIZE / 2, SEED_F2, 0) < 0);
	alarm(0);
	printf("# %-15s parent and child byte-exact\n", path ? dmaio_path_name(path) : "auto");
	dmaio_buf_free(b);
}

static void test_fork(void **state)
{
	static const int paths[] = { DMAIO_PATH_UDMABUF_DIRECT, DMAIO_PATH_BOUNCE_DIRECT,
				     DMAIO_PATH_BUFFERED, DMAIO_PATH_SENDFILE, DMAIO_PATH_RW_FILE,
				     DMAIO_PATH_AUTO };
	int f1 = test_tmpfile(NULL, NULL, 0), f2 = test_tmpfile(NULL, NULL, 0);

	(void)state;
	assert_int_equal(file_fill_pattern(f1, 0, SIZE, SEED_FILE), 0);
	assert_int_equal(file_fill_pattern(f2, 0, SIZE, SEED_F2), 0);
	for (size_t i = 0; i < sizeof(paths) / sizeof(paths[0]); i++)
		one_path(paths[i], f1, f2);
	close(f1);
	close(f2);
}

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_fork),
	};

	test_parse_args(argc, argv, &args, "memfd");
	return cmocka_run_group_tests_name("fork", tests, NULL, NULL);
}
