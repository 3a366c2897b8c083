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

/* ---- fork() during a thread's first use of the library ------------------------------------
 * glibc (2.36) runs the prepare handlers of fork() without its handler lock, and a handler
 * registered meanwhile runs neither its prepare nor its child handler in that fork. The
 * library's fork handlers, registered on first use, could so miss a fork that began before:
 * CI (stop 58, the 6.12 VM) saw a child of test-fork-busy hang in its first read, in
 * dmaio_pool_push, on the lock of the parent's worker pool, which a parent thread held in
 * pthread_create. The thread had made the process's first engine while the fork waited for
 * the library's locks, so the handler that tells a child its inherited objects was registered
 * too late, and the child took the parent's pool, rings and queues as its own.
 *
 * Here the window is made certain: a prepare handler of the test (registered after the
 * library's, so it runs first) lets a thread make the process's first transfer through a
 * worker thread (sendfile) and waits for it; then the child reads through the same path. On
 * the library that registered its handlers on first use the child waits forever for a worker
 * thread of the parent's pool (killed by its alarm); it must get its own. Runs first in the
 * process: nothing may have used an engine or a pool, or made the default context, before. */
static struct {
	pthread_mutex_t lock;
	pthread_cond_t cond;
	int stage; /* 0 idle, 1 go (fork's prepare is running), 2 the thread's read ended */
	bool armed, joined;
	pthread_t th;
	int fd, path;
	int64_t res;
	bool bytes_ok;
} fp = { .lock = PTHREAD_MUTEX_INITIALIZER, .cond = PTHREAD_COND_INITIALIZER, .fd = -1 };

static void *first_user(void *arg)
{
	struct dmaio_buf *b = NULL;
	void *map;
	int64_t r;

	(void)arg;
	pthread_mutex_lock(&fp.lock);
	while (fp.stage < 1)
		pthread_cond_wait(&fp.cond, &fp.lock);
	pthread_mutex_unlock(&fp.lock);
	r = t_alloc(NULL, args.heap_name, 1u << 20, 0, &b);
	if (!r && !(r = dmaio_buf_map(b, &map))) {
		r = dmaio_fd_read(fp.fd, 0, b, 0, 1u << 20, DMAIO_RW_PATH(fp.path), NULL);
		fp.bytes_ok = r == (1 << 20) && pat_check(map, 1u << 20, SEED_FILE, 0) < 0;
	}
	dmaio_buf_free(b);
	pthread_mutex_lock(&fp.lock);
	fp.res = r;
	fp.stage = 2;
	pthread_cond_broadcast(&fp.cond);
	pthread_mutex_unlock(&fp.lock);
	return NULL;
}

static void fp_prepare(void)
{
	struct timespec until;

	if (!fp.armed)
		return;
	fp.armed = false;
	clock_gettime(CLOCK_REALTIME, &until);
	until.tv_sec += 60;
	pthread_mutex_lock(&fp.lock);
	fp.stage = 1;
	pthread_cond_broadcast(&fp.cond);
	while (fp.stage < 2 && pthread_cond_timedwait(&fp.cond, &fp.lock, &until) == 0)
		;
	pthread_mutex_unlock(&fp.lock);
	/* the thread gone before the fork: under AddressSanitizer a thread's exit takes the
	 * allocator's locks, which GCC 12's libasan does not hold across fork() (test-fork-busy) */
	if (fp.stage == 2)
		fp.joined = pthread_join(fp.th, NULL) == 0;
}

static void first_use_child(void **state)
{
	struct dmaio_buf *b;
	void *map;

	(void)state;
	alarm(30);
	assert_rc_equal(t_alloc(NULL, args.heap_name, 1u << 20, 0, &b), 0);
	assert_rc_equal(dmaio_buf_map(b, &map), 0);
	read_check(b, map, 0, fp.fd, 1u << 20, fp.path, SEED_FILE);
	dmaio_buf_free(b);
}

static void test_fork_in_first_use(void **state)
{
	struct dmaio_buf *b;
	char why[160];
	int p;

	(void)state;
	/* one worker thread a pool: a child that took the parent's pool as its own would queue
	 * its op for the parent's worker, which the child does not have, and wait forever (with
	 * more, it may start a worker of its own there and get by) */
	setenv("DMAIO_WORKERS", "1", 1);
	fp.fd = test_tmpfile(NULL, NULL, 0);
	assert_true(fp.fd >= 0);
	assert_int_equal(file_fill_pattern(fp.fd, 0, 1u << 20, SEED_FILE), 0);
	/* a path whose ops run on the worker threads: sendfile, else the proposed RW_FILE. Asked
	 * without a transfer (a choice makes no engine and no pool). */
	assert_rc_equal(test_alloc_or_skip(NULL, args.heap_name, 1u << 20, 0, &b), 0);
	for (int i = 0; i < 2 && !fp.path; i++) {
		int want = i ? DMAIO_PATH_RW_FILE : DMAIO_PATH_SENDFILE;

		p = t_choose_path(b, 0, fp.fd, 0, 1u << 20, 0,
				  DMAIO_RW_PATH(want) | DMAIO_RW_NO_FALLBACK, why, sizeof(why));
		if (p == want)
			fp.path = want;
	}
	dmaio_buf_free(b);
	if (!fp.path) {
		printf("# no path of this buffer runs on worker threads: %s\n", why);
		close(fp.fd);
		skip();
	}
	assert_int_equal(pthread_create(&fp.th, NULL, first_user, NULL), 0);
	assert_int_equal(pthread_atfork(fp_prepare, NULL, NULL), 0);
	fp.armed = true;
	test_in_child("child of a fork during the first use", first_use_child, NULL);
	if (!fp.joined)
		assert_int_equal(pthread_join(fp.th, NULL), 0);
	assert_int_equal(fp.stage, 2);
	assert_rc_equal(fp.res, 1 << 20);
	assert_true(fp.bytes_ok);
	printf("# fork during the first transfer (via %s): the child read byte-exact\n",
	       dmaio_path_name(fp.path));
	close(fp.fd);
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
		cmocka_unit_test(test_fork_in_first_use), /* first: see there */
		cmocka_unit_test(test_fork),
	};

	test_parse_args(argc, argv, &args, "memfd");
	return cmocka_run_group_tests_name("fork", tests, NULL, NULL);
}
