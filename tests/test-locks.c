/* SPDX-License-Identifier: MIT */
/*
 * Probing never holds a lock the I/O path needs. A probe (a heap's test allocation, a DRM
 * node's dumb buffer, the hugetlb check) holds the context's probe lock while it works; this
 * test holds that lock itself (white box: it links the library's objects) and checks that
 * transfers of every kind started by another thread still complete: plain-fd and
 * registered-file reads and writes, a queue made, fed, reaped and freed, statistics, a buffer
 * freed. Before the probe lock and the I/O lock were split, every one of them waited for it.
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

#include "../lib/dmaio-types.h"
#include "common.h"

#define SIZE (4u << 20)

struct job {
	struct dmaio_ctx *ctx;
	struct dmaio_buf *buf, *spare;
	struct dmaio_file *file;
	int fd;
	int step;          /* how far the I/O thread got */
	int err;           /* its first failure */
	bool done;
	pthread_mutex_t m;
	pthread_cond_t cv;
};

static void step(struct job *j, int n, long r, long want)
{
	pthread_mutex_lock(&j->m);
	j->step = n;
	if (r != want && !j->err)
		j->err = n;
	pthread_mutex_unlock(&j->m);
	if (r != want)
		printf("# I/O thread, step %d: %ld, expected %ld\n", n, r, want);
}

static void *io_thread(void *arg)
{
	struct job *j = arg;
	struct dmaio_queue *q = NULL;
	struct dmaio_stats st = { .struct_size = sizeof(struct dmaio_stats) };
	struct dmaio_done d[4] = { { .struct_size = sizeof(struct dmaio_done) } };
	struct dmaio_io io[2] = { { .struct_size = sizeof(struct dmaio_io) } };
	int n;

	step(j, 1, dmaio_fd_read(j->fd, 0, j->buf, 0, SIZE, 0, NULL), SIZE);
	step(j, 2, dmaio_file_read(j->file, 4096, j->buf, 100, SIZE / 2, 0, NULL), SIZE / 2);
	step(j, 3, dmaio_fd_write(j->fd, SIZE, j->buf, 0, SIZE, 0, NULL), SIZE);
	step(j, 4, dmaio_queue_new(j->ctx, 8, 0, &q), 0);
	memset(io, 0, sizeof(io));
	io[0].struct_size = sizeof(io[0]);
	for (int i = 0; i < 2; i++) {
		io[i].struct_size = sizeof(io[i]);
		io[i].op = DMAIO_OP_READ;
		io[i].buf = j->buf;
		io[i].buf_off = (size_t)i * (SIZE / 2);
		io[i].file = j->file;
		io[i].file_off = (off_t)i * (SIZE / 2) + 1;
		io[i].len = SIZE / 2 - 1;
		io[i].user_data = (uint64_t)i;
	}
	if (q) {
		step(j, 5, dmaio_queue_submit(q, io, 2), 2);
		for (n = 0; n < 2;) {
			int k = dmaio_queue_reap(q, d, 4, 1, 10000);

			if (k <= 0) {
				step(j, 6, k, 1);
				break;
			}
			for (int i = 0; i < k; i++)
				step(j, 6, d[i].res, SIZE / 2 - 1);
			n += k;
		}
		dmaio_queue_free(q);
	}
	step(j, 7, dmaio_ctx_get_stats(j->ctx, &st), 0);
	step(j, 8, dmaio_buf_get_stats(j->buf, &st), 0);
	dmaio_buf_free(j->spare);
	step(j, 9, 0, 0);
	pthread_mutex_lock(&j->m);
	j->done = true;
	pthread_cond_signal(&j->cv);
	pthread_mutex_unlock(&j->m);
	return NULL;
}

static void test_io_during_probe(void **state)
{
	struct job j;
	struct timespec until;
	char path[512];
	pthread_t t;
	bool finished;
	int r = 0;

	(void)state;
	memset(&j, 0, sizeof(j));
	pthread_mutex_init(&j.m, NULL);
	pthread_cond_init(&j.cv, NULL);
	assert_int_equal(dmaio_ctx_new(0, &j.ctx), 0);
	assert_int_equal(t_alloc(j.ctx, "memfd", SIZE, 0, &j.buf), 0);
	assert_int_equal(t_alloc(j.ctx, "memfd", 4096, 0, &j.spare), 0);
	j.fd = test_tmpfile(NULL, path, sizeof(path));
	assert_true(j.fd >= 0);
	assert_int_equal(file_fill_pattern(j.fd, 0, 2 * SIZE, 5), 0);
	assert_int_equal(dmaio_file_open(j.ctx, j.fd, 0, &j.file), 0);
	/* the first transfer runs the base probe (at the API edge, under the probe lock) */
	assert_int_equal(dmaio_fd_read(j.fd, 0, j.buf, 0, 4096, 0, NULL), 4096);

	/* a probe at work: the probe lock held for as long as it takes */
	pthread_mutex_lock(&j.ctx->lock);
	assert_int_equal(pthread_create(&t, NULL, io_thread, &j), 0);
	clock_gettime(CLOCK_REALTIME, &until);
	until.tv_sec += 30;
	pthread_mutex_lock(&j.m);
	while (!j.done && r != ETIMEDOUT)
		r = pthread_cond_timedwait(&j.cv, &j.m, &until);
	finished = j.done;
	printf("# with the probe lock held, the I/O thread %s (step %d of 9)\n",
	       finished ? "finished" : "is stuck", j.step);
	pthread_mutex_unlock(&j.m);
	pthread_mutex_unlock(&j.ctx->lock); /* let a stuck thread go on, so it can be joined */
	pthread_join(t, NULL);
	assert_true(finished);
	assert_int_equal(j.err, 0);
	{
		void *map;

		/* the queued reads placed file [1, SIZE/2) and [SIZE/2 + 1, SIZE) */
		assert_int_equal(dmaio_buf_map(j.buf, &map), 0);
		assert_int_equal(pat_check(map, SIZE / 2 - 1, 5, 1), -1);
		assert_int_equal(pat_check((char *)map + SIZE / 2, SIZE / 2 - 1, 5, SIZE / 2 + 1), -1);
	}
	dmaio_file_close(j.file);
	dmaio_buf_free(j.buf);
	close(j.fd);
	dmaio_ctx_free(j.ctx);
	pthread_cond_destroy(&j.cv);
	pthread_mutex_destroy(&j.m);
}

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_io_during_probe),
	};
	struct test_args args;

	test_parse_args(argc, argv, &args, "memfd");
	return cmocka_run_group_tests_name("locks", tests, NULL, NULL);
}
