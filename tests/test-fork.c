/* SPDX-License-Identifier: MIT */
/*
 * fork(): a child that goes on using the context, buffers and paths its parent used gets correct
 * data (its own rings, worker threads and bounce memory are made on first use; the parent's are
 * left alone), and the parent keeps working afterwards (no hang, correct data). A buffer shared
 * by both (a dma-buf or memfd: the same pages) carries what the child wrote to the parent.
 * Every path that can serve the buffer, forced; then auto. Suites: host (memfd), device heaps.
 */
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "common.h"

#define SIZE (4u << 20)
#define SEED_F2 0x66326632ull

static struct test_args args;

/* read [0, len) of fd into buf at off through path; 0 when byte-exact against seed */
static int read_check(struct dmaio_buf *b, void *map, size_t off, int fd, size_t len, int path,
		      uint64_t seed)
{
	ssize_t n = dmaio_read_file(b, off, fd, 0, len, path ? DMAIO_RW_PATH(path) : 0);

	if (n != (ssize_t)len) {
		fprintf(stderr, "read via %s: %zd (%s)\n", dmaio_path_name(path), n,
			n < 0 ? strerror((int)-n) : "short");
		return 1;
	}
	if (pat_check((char *)map + off, len, seed, 0) >= 0) {
		fprintf(stderr, "read via %s: wrong bytes\n", dmaio_path_name(path));
		return 1;
	}
	return 0;
}

static int child(struct dmaio_buf *shared, void *smap, int f2, int path)
{
	struct dmaio_queue *q;
	struct dmaio_buf *own;
	struct dmaio_file *rf;
	void *omap;
	int out, bad = 0;

	/* its own buffer */
	if (dmaio_alloc(NULL, args.heap_name, SIZE, 0, &own) || dmaio_map(own, &omap))
		return 2;
	bad |= read_check(own, omap, 0, f2, SIZE, path, SEED_F2);
	/* the buffer shared with the parent: the second half */
	bad |= read_check(shared, smap, SIZE / 2, f2, SIZE / 2, path, SEED_F2);
	/* a write through the same path */
	out = test_tmpfile(NULL, NULL, 0);
	if (dmaio_write_file(own, 0, out, 0, SIZE, path ? DMAIO_RW_PATH(path) : 0) != SIZE ||
	    file_check_pattern(out, 0, SIZE, SEED_F2, 0) != -1) {
		fprintf(stderr, "child write via %s: wrong\n", dmaio_path_name(path));
		bad = 1;
	}
	/* a queue of its own, on the inherited context */
	if (dmaio_file_open(NULL, f2, 0, &rf) || dmaio_queue_new(NULL, 8, 0, &q)) {
		bad = 1;
	} else {
		struct dmaio_io io = { .op = DMAIO_OP_READ, .flags = path ? DMAIO_RW_PATH(path) : 0,
				       .buf = own, .file = rf, .len = SIZE, .user_data = 7 };
		struct dmaio_done d;

		memset(omap, 0, SIZE);
		if (dmaio_submit(q, &io, 1) != 1 || dmaio_reap(q, &d, 1, 1, 30000) != 1 ||
		    d.res != SIZE || d.user_data != 7 || pat_check(omap, SIZE, SEED_F2, 0) >= 0) {
			fprintf(stderr, "child queue via %s: wrong\n", dmaio_path_name(path));
			bad = 1;
		}
		dmaio_queue_free(q);
		dmaio_file_close(rf);
	}
	dmaio_free(own);
	return bad;
}

static void one_path(int path, int f1, int f2)
{
	struct dmaio_buf *b;
	void *map;
	pid_t pid;
	int st;

	if (test_alloc_or_skip(NULL, args.heap_name, SIZE, 0, &b))
		return;
	assert_int_equal(dmaio_map(b, &map), 0);
	if (path) {
		char why[160];
		int p = dmaio_choose_path(b, 0, f1, 0, SIZE, 0, DMAIO_RW_PATH(path) |
					  DMAIO_RW_NO_FALLBACK, why, sizeof(why));

		if (p != path) {
			printf("# %-15s cannot serve this buffer: %s\n", dmaio_path_name(path), why);
			dmaio_free(b);
			return;
		}
	}
	/* the parent uses the path first: its rings, bounce memory, workers exist at fork time */
	assert_int_equal(read_check(b, map, 0, f1, SIZE, path, SEED_FILE), 0);
	pid = fork();
	assert_true(pid >= 0);
	if (!pid) {
		alarm(120);
		_exit(child(b, map, f2, path));
	}
	assert_int_equal(waitpid(pid, &st, 0), pid);
	if (!WIFEXITED(st) || WEXITSTATUS(st)) {
		fprintf(stderr, "child via %s: status %#x\n", dmaio_path_name(path), st);
		fail();
	}
	/* the parent goes on: first half again from f1, second half is what the child put there */
	alarm(120);
	memset(map, 0, SIZE / 2);
	assert_int_equal(read_check(b, map, 0, f1, SIZE / 2, path, SEED_FILE), 0);
	assert_true(pat_check((char *)map + SIZE / 2, SIZE / 2, SEED_F2, 0) < 0);
	alarm(0);
	printf("# %-15s parent and child byte-exact\n", path ? dmaio_path_name(path) : "auto");
	dmaio_free(b);
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
