// SPDX-License-Identifier: MIT
/*
 * test-fork-busy: fork() while other threads are inside the library; the child must never hang.
 *
 * Busy threads of the parent use the default context and one context of their own the whole
 * time: synchronous reads and writes on every path (sync), a queue over a registered file
 * (queue), probes and statistics (probe), allocations, mappings and frees, and a context made
 * and freed (alloc). Meanwhile the main thread forks again and again; each child, with a
 * watchdog, makes its first library calls at once:
 *   - one read through the default context into a buffer it inherited (checked byte by byte),
 *   - a queued read through the inherited context (a new queue, the inherited registered file),
 *   - a new buffer from the default context, read into, checked, freed,
 * then exits. Whatever lock a parent thread held at the fork, the child must finish: a child that
 * the watchdog kills (SIGALRM) hung. The parent's threads must keep working, byte-exact.
 *
 * Before the library took its locks around fork() (pthread_atfork, 0d69629 and earlier), one
 * busy thread gave about 1 hung child in 1000; with these 8 threads the first child hung (gdb:
 * blocked on the inherited context's io_lock in its first queue). 1000 forks by default.
 *
 * A hang's report: where each of the child's threads waits (/proc: wchan, the system call, a
 * futex's owner, the kernel stack and a scan of the user stack for code addresses), and the
 * parent's threads. So CI's stop 58 (the 6.12 VM, no gdb there) was found: 1 run in about
 * 200 (its first fork, 4-12 ms after the threads started) hung in dmaio_pool_push, on the
 * parent's pool lock, owned by a busy sync thread (the fork handler registered too late,
 * sys/sysio.c; tests/test-fork.c makes that case certain).
 *
 * Usage: test-fork-busy [--heap NAME] [--forks N]
 *   Env: DMAIO_TEST_QUICK=1 (fewer forks), DMAIO_TEST_FORKS=N, DMAIO_TEST_FORK_DELAY_US=N (the
 *   first fork's time after the busy threads start, 20000 by default: the threads' first
 *   calls, their probes and engines, are the window of child 0)
 * Prints: "forks N, children ok N, hung 0; parent threads: sync N, queue N, probe N, alloc N".
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <setjmp.h>
#include <signal.h>
#include <stdbool.h>
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
#include "rel.h"

#define SRC_SIZE (2u << 20)
#define SEED_SRC 0x666f726b62757379ull
#define CHILD_LEN (192u << 10)

static struct test_args args;
static unsigned nforks = 1000;
static unsigned fork_delay_us = 20000; /* from the busy threads' start to the first fork */

enum { T_SYNC, T_QUEUE, T_PROBE, T_ALLOC, NKINDS };
static const char *const kind_name[NKINDS] = { "sync", "queue", "probe", "alloc" };

static int src_fd = -1, dst_fd = -1;
static struct dmaio_ctx *own_ctx;        /* a context besides the default one */
static struct dmaio_file *src_file;      /* registered in own_ctx */
static struct dmaio_buf *child_buf;      /* default context: what each child reads into */
static void *child_map;
static int stop; /* atomic */

static bool stopped(void)
{
	return __atomic_load_n(&stop, __ATOMIC_RELAXED);
}

struct busy {
	int kind, id;
	int tid; /* for a hang's report: which thread owned the lock */
	pthread_t th;
	unsigned long ops;
};

static const int paths[] = { DMAIO_PATH_AUTO, DMAIO_PATH_UDMABUF_DIRECT,
			     DMAIO_PATH_BOUNCE_DIRECT, DMAIO_PATH_BUFFERED, DMAIO_PATH_SENDFILE };

static uint32_t path_flags(unsigned i)
{
	int p = paths[i % (sizeof(paths) / sizeof(paths[0]))];

	return p == DMAIO_PATH_AUTO ? 0 : DMAIO_RW_PATH(p);
}

static void busy_sync(struct busy *w)
{
	struct dmaio_buf *b;
	void *map;
	uint64_t region = 256u << 10;
	int r = t_alloc(w->id & 1 ? own_ctx : NULL, args.heap_name, region, 0, &b);

	if (r) {
		test_fail_in("sync", "alloc = %s", test_errname(r));
		return;
	}
	if ((r = dmaio_buf_map(b, &map))) {
		test_fail_in("sync", "map = %s", test_errname(r));
		dmaio_buf_free(b);
		return;
	}
	for (unsigned i = 0; !stopped(); i++) {
		uint64_t off = (i * 8191u) % (SRC_SIZE - region);
		uint64_t len = region - (i % 7) * 511;
		int64_t n = dmaio_fd_read(src_fd, off, b, 0, len, path_flags(i), NULL);

		if (n != (int64_t)len) {
			test_fail_in("sync", "read %llu at %llu: %s", (unsigned long long)len,
				     (unsigned long long)off, test_errname(n));
			break;
		}
		if (pat_check(map, len, SEED_SRC, off) >= 0) {
			test_fail_in("sync", "read %llu at %llu: wrong bytes", (unsigned long long)len,
				     (unsigned long long)off);
			break;
		}
		/* the thread's own region of the destination */
		n = dmaio_fd_write(dst_fd, (uint64_t)w->id * region, b, 0, len, path_flags(i + 1),
				   NULL);
		if (n != (int64_t)len) {
			test_fail_in("sync", "write %llu: %s", (unsigned long long)len, test_errname(n));
			break;
		}
		w->ops += 2;
	}
	dmaio_buf_free(b);
}

static void busy_queue(struct busy *w)
{
	struct dmaio_io io[8];
	struct dmaio_done d[8];
	struct dmaio_queue *q;
	struct dmaio_buf *b;
	void *map;
	const uint64_t piece = 64u << 10;
	int r = t_alloc(own_ctx, args.heap_name, 8 * piece, 0, &b);

	if (r) {
		test_fail_in("queue", "alloc = %s", test_errname(r));
		return;
	}
	if ((r = dmaio_buf_map(b, &map)) || (r = dmaio_queue_new(own_ctx, 8, 0, &q))) {
		test_fail_in("queue", "map/queue_new = %s", test_errname(r));
		dmaio_buf_free(b);
		return;
	}
	for (unsigned it = 0; !stopped(); it++) {
		int got = 0;

		memset(io, 0, sizeof(io));
		for (unsigned i = 0; i < 8; i++) {
			io[i].struct_size = sizeof(io[i]);
			io[i].op = DMAIO_OP_READ;
			io[i].file = src_file;
			io[i].file_off = ((it * 8 + i) * piece + it) % (SRC_SIZE - piece);
			io[i].buf = b;
			io[i].buf_off = i * piece;
			io[i].len = piece;
			io[i].flags = path_flags(it + i);
			io[i].user_data = i;
		}
		r = dmaio_queue_submit(q, io, 8);
		if (r != 8) {
			test_fail_in("queue", "submit = %d", r);
			break;
		}
		d[0].struct_size = sizeof(d[0]);
		while (got < 8) {
			r = dmaio_queue_reap(q, d, 8, 1, -1);
			if (r < 0) {
				test_fail_in("queue", "reap = %s", test_errname(r));
				goto out;
			}
			for (int k = 0; k < r; k++) {
				unsigned i = (unsigned)d[k].user_data;

				if (i >= 8 || d[k].res != (int64_t)piece ||
				    pat_check((char *)map + i * piece, piece, SEED_SRC, io[i].file_off) >= 0) {
					test_fail_in("queue", "range %u: res %lld or wrong bytes", i,
						     (long long)d[k].res);
					goto out;
				}
			}
			got += r;
		}
		w->ops += 8;
	}
out:
	dmaio_queue_free(q);
	dmaio_buf_free(b);
}

static void busy_probe(struct busy *w)
{
	while (!stopped()) {
		struct dmaio_sys_info si = { .struct_size = sizeof(si) };
		struct dmaio_stats st = { .struct_size = sizeof(st) };
		struct dmaio_file_info fi = { .struct_size = sizeof(fi) };
		struct dmaio_ctx *c = w->ops & 1 ? own_ctx : NULL;
		int r, n;

		if ((r = dmaio_ctx_get_system(c, &si)) || (r = dmaio_ctx_get_stats(c, &st)) ||
		    (r = dmaio_buf_get_stats(child_buf, &st)) || (r = dmaio_file_get_info(src_file, &fi)) ||
		    (r = dmaio_fd_get_info(src_fd, &fi))) {
			test_fail_in("probe", "a probe = %s", test_errname(r));
			break;
		}
		n = dmaio_ctx_heap_count(c);
		for (int i = 0; i < n; i++) {
			struct dmaio_heap_info hi = { .struct_size = sizeof(hi) };

			dmaio_ctx_get_heap(c, (uint32_t)i, &hi);
		}
		r = dmaio_fd_choose_path(src_fd, (w->ops * 4096) % SRC_SIZE, child_buf, 0, 4096,
					 DMAIO_OP_READ, 0, NULL);
		if (r < 0) {
			test_fail_in("probe", "choose_path = %s", test_errname(r));
			break;
		}
		w->ops += 7;
	}
}

static void busy_alloc(struct busy *w)
{
	while (!stopped()) {
		struct dmaio_ctx *c = NULL;
		struct dmaio_buf *b;
		void *map;
		int r;

		if ((w->ops & 15) == 0 && (r = dmaio_ctx_new(0, &c))) {
			test_fail_in("alloc", "ctx_new = %s", test_errname(r));
			break;
		}
		r = t_alloc(c ? c : (w->ops & 2 ? own_ctx : NULL), args.heap_name,
			    4096 * (1 + w->ops % 16), 0, &b);
		if (r) {
			test_fail_in("alloc", "alloc = %s", test_errname(r));
			dmaio_ctx_free(c);
			break;
		}
		if ((r = dmaio_buf_map(b, &map))) {
			test_fail_in("alloc", "map = %s", test_errname(r));
		} else {
			memset(map, 0x5a, 4096);
			dmaio_buf_unmap(b);
		}
		dmaio_buf_free(b);
		dmaio_ctx_free(c);
		w->ops += 3;
	}
}

static void *busy_main(void *arg)
{
	struct busy *w = arg;

	__atomic_store_n(&w->tid, (int)gettid(), __ATOMIC_RELAXED);	static void (*const fn[NKINDS])(struct busy *) = { busy_sync, busy_queue, busy_probe,
							   busy_alloc };

	fn[w->kind](w);
	return NULL;
}

/* The child: first library calls right after fork(). Exit 0, 1 on a wrong result; a hang is
 * ended by SIGALRM. */
static unsigned child_secs(void)
{
	const char *vm = getenv("DMAIO_TEST_VM");

	return (vm && *vm == '1') || test_quick() ? 120 : 15;
}

static void __attribute__((noreturn)) child_run(unsigned i)
{
	unsigned secs = child_secs() + 5; /* the parent looks first (wait_child) */
	uint64_t off = (i * 4099u) % (SRC_SIZE - CHILD_LEN);
	struct dmaio_queue *q = NULL;
	struct dmaio_buf *b = NULL;
	void *map;
	int64_t n;
	int r;

	signal(SIGALRM, SIG_DFL);
	rel_install_stack_dump(SIGUSR1); /* wait_child's report of a hang */
	alarm(secs);
	n = dmaio_fd_read(src_fd, off, child_buf, 0, CHILD_LEN, path_flags(i), NULL);
	if (n != CHILD_LEN || pat_check(child_map, CHILD_LEN, SEED_SRC, off) >= 0) {
		fprintf(stderr, "child %u: read via %s: %s\n", i, test_pname(paths[i % 5]),
			n == CHILD_LEN ? "wrong bytes" : test_errname(n));
		_exit(1);
	}
	/* a queue of the inherited context over the inherited registered file */
	if ((r = dmaio_queue_new(own_ctx, 4, 0, &q)) == 0) {
		struct dmaio_io io = { .struct_size = sizeof(io), .op = DMAIO_OP_READ,
				       .file = src_file, .file_off = off + 1, .len = 4096,
				       .flags = path_flags(i + 2) };
		struct dmaio_done d = { .struct_size = sizeof(d) };

		/* own_ctx's buffer: the child's new one, else the inherited default-context one
		 * would be refused (another context) */
		r = t_alloc(own_ctx, args.heap_name, 8192, 0, &b);
		if (!r && !(r = dmaio_buf_map(b, &map))) {
			io.buf = b;
			r = dmaio_queue_submit(q, &io, 1);
			if (r == 1)
				r = dmaio_queue_reap(q, &d, 1, 1, -1);
			if (r == 1 && (d.res != 4096 || pat_check(map, 4096, SEED_SRC, off + 1) >= 0))
				r = -EIO;
		}
		dmaio_buf_free(b);
		dmaio_queue_free(q);
	}
	if (r != 1) {
		fprintf(stderr, "child %u: queued read: %s\n", i, test_errname(r < 0 ? r : -EIO));
		_exit(1);
	}
	/* a new buffer of the default context */
	r = t_alloc(NULL, args.heap_name, 3 * 4096, 0, &b);
	if (r || (r = dmaio_buf_map(b, &map)) ||
	    dmaio_fd_read(src_fd, off + 3, b, 5, 8000, 0, NULL) != 8000 ||
	    pat_check((char *)map + 5, 8000, SEED_SRC, off + 3) >= 0) {
		fprintf(stderr, "child %u: new buffer: %s\n", i, r ? test_errname(r) : "read failed");
		_exit(1);
	}
	dmaio_buf_free(b);
	_exit(0);
}

/* Wait for child @pid; after its watchdog time less a second, print where each of its threads
 * waits (the kernel's view, rel_dump_task_waits), its main thread's stack (SIGUSR1) and every
 * thread's (gdb, when installed), and kill it: return 1. */
static int wait_child(pid_t pid, int *st, const struct busy *w, unsigned nw)
{
	double end = test_now() + child_secs() - 1;
	pid_t r;

	while ((r = waitpid(pid, st, WNOHANG)) == 0 && test_now() < end)
		usleep(500);
	if (r == pid)
		return 0;
	if (r < 0 && errno != EINTR)
		fail_msg("waitpid: %s", strerror(errno));
	fprintf(stderr, "child %d hangs; where its threads wait:\n", (int)pid);
	rel_dump_task_waits((int)pid);
	kill(pid, SIGUSR1);
	sleep(2);
	rel_dump_code_maps((int)pid);
	fprintf(stderr, "  the parent's threads (the main thread is tid %d):\n", (int)getpid());
	for (unsigned i = 0; i < nw; i++)
		fprintf(stderr, "    tid %d: busy %s thread %u\n", w[i].tid, kind_name[w[i].kind], i);
	rel_list_tasks((int)getpid());
	if (system("command -v gdb >/dev/null 2>&1") == 0) {
		char cmd[160];

		fprintf(stderr, "child %d hangs; its threads:\n", (int)pid);
		snprintf(cmd, sizeof(cmd),
			 "gdb -p %d -batch -ex 'thread apply all bt' 2>&1 | grep -E '^(#|Thread)' >&2",
			 (int)pid);
		if (system(cmd) != 0)
			fprintf(stderr, "(gdb failed)\n");
	}
	kill(pid, SIGKILL);
	while (waitpid(pid, st, 0) < 0 && errno == EINTR)
		;
	return 1;
}

static void test_fork_busy(void **state)
{
	struct busy w[NKINDS * 2];
	unsigned ok = 0, hung = 0, bad = 0;
	char path[4096];
	int r;

	(void)state;
	src_fd = test_tmpfile(NULL, path, sizeof(path));
	dst_fd = test_tmpfile(NULL, path, sizeof(path));
	assert_true(src_fd >= 0 && dst_fd >= 0);
	assert_int_equal(file_fill_pattern(src_fd, 0, SRC_SIZE, SEED_SRC), 0);
	r = t_alloc(NULL, args.heap_name, CHILD_LEN, 0, &child_buf);
	if (r)
		test_no_device("%s: %s", args.heap_name, test_errname(r));
	assert_int_equal(dmaio_buf_map(child_buf, &child_map), 0);
	assert_int_equal(dmaio_ctx_new(0, &own_ctx), 0);
	assert_int_equal(dmaio_file_open(own_ctx, src_fd, 0, &src_file), 0);

	memset(w, 0, sizeof(w));
	for (unsigned i = 0; i < NKINDS * 2; i++) {
		w[i].kind = (int)(i % NKINDS);
		w[i].id = (int)i;
		assert_int_equal(pthread_create(&w[i].th, NULL, busy_main, &w[i]), 0);
	}
	usleep(fork_delay_us);
	for (unsigned i = 0; i < nforks && !test_failures(); i++) {
		int st, hang;
		pid_t pid = fork();

		if (pid == 0)
			child_run(i);
		assert_true(pid > 0);
		hang = wait_child(pid, &st, w, NKINDS * 2); /* hung: its stack printed, killed */
		if (hang || (WIFSIGNALED(st) && WTERMSIG(st) == SIGALRM)) {
			hung++;
			test_fail("child %u hung (killed by its watchdog)", i);
		} else if (WIFEXITED(st) && WEXITSTATUS(st) == 0) {
			ok++;
		} else {
			bad++;
			test_fail("child %u: %s %d", i, WIFEXITED(st) ? "exit" : "signal",
				  WIFEXITED(st) ? WEXITSTATUS(st) : WTERMSIG(st));
		}
	}
	__atomic_store_n(&stop, 1, __ATOMIC_RELAXED);
	for (unsigned i = 0; i < NKINDS * 2; i++)
		pthread_join(w[i].th, NULL);
	printf("forks %u, children ok %u, hung %u, failed %u; parent threads:", nforks, ok, hung,
	       bad);
	for (unsigned k = 0; k < NKINDS; k++)
		printf(" %s %lu", kind_name[k], w[k].ops + w[k + NKINDS].ops);
	printf("\n");
	for (unsigned i = 0; i < NKINDS * 2; i++)
		if (!w[i].ops)
			test_fail("%s thread %u made no call", kind_name[w[i].kind], i);
	dmaio_file_close(src_file);
	dmaio_ctx_free(own_ctx);
	dmaio_buf_free(child_buf);
	close(src_fd);
	close(dst_fd);
	assert_int_equal(test_failures(), 0);
}

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_fork_busy),
	};
	const char *env = getenv("DMAIO_TEST_FORKS");

	if (test_under_valgrind()) {
		/* valgrind runs one thread at a time: 8 busy threads and a child's watchdog of
		 * seconds make every child look hung, and the run takes longer than any timeout
		 * (900 s for the quick count). The tsan setup covers the locks around fork(). */
		printf("# not run under valgrind: its serialized threads make the watchdog's "
		       "verdicts meaningless\n");
		return 77;
	}
	for (int i = 1; i + 1 < argc; i++) {
		if (!strcmp(argv[i], "--forks")) {
			nforks = (unsigned)strtoul(argv[i + 1], NULL, 10);
			memmove(&argv[i], &argv[i + 2], (size_t)(argc - i - 1) * sizeof(*argv));
			argc -= 2;
			break;
		}
	}
	if (getenv("DMAIO_TEST_FORK_DELAY_US") && *getenv("DMAIO_TEST_FORK_DELAY_US"))
		fork_delay_us = (unsigned)strtoul(getenv("DMAIO_TEST_FORK_DELAY_US"), NULL, 10);
	if (env && *env)
		nforks = (unsigned)strtoul(env, NULL, 10);
	else if (test_quick())
		nforks = 150;
	else if (getenv("DMAIO_TEST_VM") && *getenv("DMAIO_TEST_VM") == '1')
		nforks = 150; /* an emulated CPU: 400 forks took 73-83 s per variant (CI time) */
	test_parse_args(argc, argv, &args, "memfd");
#ifdef __SANITIZE_ADDRESS__
	/* GCC 12's libasan does not hold its allocator's locks across fork(): a child whose first
	 * malloc meets a lock a parent thread held at the fork waits forever inside libasan (seen:
	 * 1 run in 17, gdb: SizeClassAllocator64::GetFromAllocator -> Mutex::Lock). That is not the
	 * library's; ThreadSanitizer (suite tsan) and the plain build run this test. */
	printf("# SKIP: AddressSanitizer's allocator is not fork-safe beside busy threads\n");
	return 77;
#endif
	rel_install_crash_label();
	int rc;

	rc = cmocka_run_group_tests_name("fork-busy", tests, NULL, NULL);
	test_cleanup();
	return rc;
}
