// SPDX-License-Identifier: MIT
/*
 * test-threads: 4 threads using the library at once, every byte verified.
 *
 * Three runs, each in a fresh process (forked; the parent makes no library call) with 4 threads
 * released together by a barrier, so that the first library calls of the process race:
 *   default  the NULL default context; the threads' calls are the first library calls of the
 *            process (the lazy creation of the default context and the first probes race);
 *   shared   one context made by dmaio_ctx_new() for all threads;
 *   own      a context per thread (several contexts probing and pooling rings at once).
 * In each run every thread does, with paths rotating over auto, udmabuf-direct, bounce-direct,
 * buffered and sendfile (forced without DMAIO_RW_NO_FALLBACK, so a path that cannot serve the
 * buffer falls back), sizes and offsets aligned and not:
 *   part 1, separate buffers: alloc two buffers, fill one through dmaio_buf_map(), write it to the
 *           thread's own region of a shared destination file, read that region back into the
 *           other buffer, check the file and the second buffer, free both;
 *   part 2, one shared buffer (allocated by thread 0, mapped by all: dmaio_buf_map() must give every
 *           thread the same address): read the thread's own range of it from a shared source
 *           file, check it, write it to the thread's region of the destination, check the file;
 *           at the end the main thread checks the whole shared buffer (every range where its
 *           thread left it, the gaps between ranges untouched);
 * while dmaio_ctx_get_stats()/dmaio_buf_get_stats() are read concurrently. Afterwards the context's
 * counters must match the calls made (ops, no errors, bytes), the fds be back to their number.
 *
 * ThreadSanitizer: must run clean under (suite tsan, run by tests/run)
 *   meson setup build-tsan -Db_sanitize=thread -Db_lundef=false
 *   meson test -C build-tsan --setup=tsan --suite tsan
 *
 * Each run is a cmocka test; its process is a child of test_in_child() (common.h), where the
 * workers report every problem with test_fail() and the run fails at its end when any was.
 *
 * Usage: test-threads [--heap NAME]     Env: DMAIO_TEST_QUICK=1 (fewer, smaller operations)
 * Prints: "threads x operations: 4 x N = M" per run.
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
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "common.h"
#include "rel.h"

#define NTHREADS 4

static struct test_args args;

static const int paths[] = { DMAIO_PATH_AUTO, DMAIO_PATH_UDMABUF_DIRECT,
			     DMAIO_PATH_BOUNCE_DIRECT, DMAIO_PATH_BUFFERED, DMAIO_PATH_SENDFILE };

struct shape {
	size_t len, buf_off;
	off_t file_off; /* inside the thread's region */
};

/* aligned and not; big enough for O_DIRECT middles and the bounce pipeline */
static const struct shape shapes_full[] = {
	{ 4 * KiB + 17, 0, 0 },
	{ 64 * KiB, 4096, 8192 },
	{ 300 * KiB + 5, 4097, 513 },
	{ MiB + 4097, 512, 1536 },
	{ 2 * MiB, 0, 4096 },
	{ 3 * MiB + 123, 1, 3 },
};
static const struct shape shapes_quick[] = {
	{ 4 * KiB + 17, 0, 0 },
	{ 64 * KiB, 4096, 8192 },
	{ 100 * KiB + 5, 4097, 513 },
	{ 256 * KiB + 4097, 512, 1536 },
};

static const struct shape *shapes;
static size_t nshapes;
static unsigned iters;        /* per part, per thread */
static off_t region;          /* bytes of the destination file per thread */
static size_t slice;          /* bytes of the shared buffer per thread */

struct run;

struct worker {
	struct run *run;
	int id;
	pthread_t th;
	struct dmaio_ctx *ctx;  /* the context this thread passes (NULL: default) */
	unsigned ops;           /* library calls made */
	unsigned rw_calls;      /* of which read/write */
	unsigned rw_part1;      /* read/write calls on the thread's own buffers */
	uint64_t bytes_read, bytes_written;
	uint64_t bytes_part1;   /* bytes moved by them */
	void *map_addr;         /* what dmaio_buf_map() gave for the shared buffer */
	uint64_t last_seed;     /* seed of the last data left in its shared range */
	size_t last_len, last_off;
};

struct run {
	const char *name;
	int mode;               /* 0 default, 1 shared, 2 own */
	pthread_barrier_t bar;
	struct dmaio_ctx *shared_ctx;
	struct dmaio_buf *shared;
	uint8_t *shared_map;
	int src_fd, dst_fd;
	struct worker w[NTHREADS];
};

/* A problem seen by worker @w: test_vfail() (common.h; thread-safe) with the run and thread. */
static void failf(struct worker *w, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static void failf(struct worker *w, const char *fmt, ...)
{
	char where[64];
	va_list ap;

	snprintf(where, sizeof(where), "%s thread %d", w->run->name, w->id);
	va_start(ap, fmt);
	test_vfail(where, fmt, ap);
	va_end(ap);
}

static unsigned rw_flags(int path)
{
	return path == DMAIO_PATH_AUTO ? 0 : DMAIO_RW_PATH(path);
}

static uint64_t seed_of(int run, int t, unsigned it, int part)
{
	return 0x7468726561640000ull ^ ((uint64_t)run << 40) ^ ((uint64_t)t << 32) ^
	       ((uint64_t)part << 24) ^ it;
}

static ssize_t rd(struct worker *w, struct dmaio_buf *b, size_t off, int fd, off_t foff,
		  size_t len, int path)
{
	ssize_t r = dmaio_fd_read(fd, foff, b, off, len, rw_flags(path), NULL);

	w->ops++;
	w->rw_calls++;
	if (r > 0)
		w->bytes_read += (uint64_t)r;
	return r;
}

static ssize_t wr(struct worker *w, struct dmaio_buf *b, size_t off, int fd, off_t foff,
		  size_t len, int path)
{
	ssize_t r = dmaio_fd_write(fd, foff, b, off, len, rw_flags(path), NULL);

	w->ops++;
	w->rw_calls++;
	if (r > 0)
		w->bytes_written += (uint64_t)r;
	return r;
}

/* part 1: own buffers, write then read back */
static void part_separate(struct worker *w, unsigned it)
{
	const struct shape *s = &shapes[(it + (unsigned)w->id) % nshapes];
	int pw = paths[(it + (unsigned)w->id) % ARRAY_SIZE(paths)];
	int pr = paths[(it * 3 + 1 + (unsigned)w->id) % ARRAY_SIZE(paths)];
	off_t foff = (off_t)w->id * region + s->file_off;
	uint64_t seed = seed_of(w->run->mode, w->id, it, 1);
	size_t size = s->buf_off + s->len + 4096 + 3;
	struct dmaio_buf *a = NULL, *b = NULL;
	struct dmaio_stats st = { .struct_size = sizeof(struct dmaio_stats) };
	unsigned calls0 = w->rw_calls;
	uint64_t bytes0 = w->bytes_read + w->bytes_written;
	uint8_t *pa, *pb;
	long long e;
	ssize_t r;

	r = t_alloc(w->ctx, args.heap_name, size, 0, &a);
	w->ops++;
	if (r) {
		failf(w, "dmaio_buf_alloc(%zu) = %s", size, test_errname(r));
		return;
	}
	r = t_alloc(w->ctx, args.heap_name, size, 0, &b);
	w->ops++;
	if (r) {
		failf(w, "dmaio_buf_alloc(%zu) = %s", size, test_errname(r));
		dmaio_buf_free(a);
		w->ops++;
		return;
	}
	if (dmaio_buf_map(a, (void **)&pa) || dmaio_buf_map(b, (void **)&pb)) {
		failf(w, "dmaio_buf_map failed");
		goto out;
	}
	w->ops += 2;
	dmaio_buf_sync_begin(a, DMAIO_SYNC_WRITE);
	pat_fill(pa, size, seed, 0);
	dmaio_buf_sync_end(a, DMAIO_SYNC_WRITE);
	dmaio_buf_sync_begin(b, DMAIO_SYNC_WRITE);
	pat_fill(pb, size, SEED_GUARD, 0);
	dmaio_buf_sync_end(b, DMAIO_SYNC_WRITE);
	w->ops += 4;

	r = wr(w, a, s->buf_off, w->run->dst_fd, foff, s->len, pw);
	if (r != (ssize_t)s->len) {
		failf(w, "write %zu bytes via %s: %s", s->len, dmaio_path_name(pw),
		      test_errname(r));
		goto out;
	}
	e = file_check_pattern(w->run->dst_fd, foff, s->len, seed, s->buf_off);
	if (e != -1)
		failf(w, "file byte %lld wrong after a write of %zu via %s", e, s->len,
		      dmaio_path_name(pw));
	r = rd(w, b, s->buf_off, w->run->dst_fd, foff, s->len, pr);
	if (r != (ssize_t)s->len) {
		failf(w, "read %zu bytes via %s: %s", s->len, dmaio_path_name(pr), test_errname(r));
		goto out;
	}
	dmaio_buf_sync_begin(b, DMAIO_SYNC_READ);
	e = pat_check(pb + s->buf_off, s->len, seed, s->buf_off);
	if (e >= 0)
		failf(w, "buffer byte %lld wrong after a read of %zu via %s", e, s->len,
		      dmaio_path_name(pr));
	e = pat_check(pb, s->buf_off, SEED_GUARD, 0);
	if (e < 0)
		e = pat_check(pb + s->buf_off + s->len, size - s->buf_off - s->len, SEED_GUARD,
			      s->buf_off + s->len);
	if (e >= 0)
		failf(w, "buffer changed outside the range of a read via %s", dmaio_path_name(pr));
	dmaio_buf_sync_end(b, DMAIO_SYNC_READ);
	w->ops += 2;
	if (dmaio_buf_get_stats(b, &st) || st.ops != 1 || st.bytes_read != s->len || st.errors)
		failf(w, "buffer stats: ops %llu bytes_read %llu errors %llu",
		      (unsigned long long)st.ops, (unsigned long long)st.bytes_read,
		      (unsigned long long)st.errors);
	w->ops++;
out:
	dmaio_buf_free(a);
	dmaio_buf_free(b);
	w->ops += 2;
	w->rw_part1 += w->rw_calls - calls0;
	w->bytes_part1 += w->bytes_read + w->bytes_written - bytes0;
}

/* part 2: the thread's own range of the shared buffer */
static void part_shared(struct worker *w, unsigned it)
{
	const struct shape *s = &shapes[(it * 5 + (unsigned)w->id) % nshapes];
	int pr = paths[(it + 2 + (unsigned)w->id) % ARRAY_SIZE(paths)];
	int pw = paths[(it * 7 + (unsigned)w->id) % ARRAY_SIZE(paths)];
	size_t boff = (size_t)w->id * slice + s->buf_off;
	off_t src_off = (off_t)(it % 8) * 4096 + s->file_off + (off_t)w->id * 65536;
	off_t dst_off = (off_t)w->id * region + s->file_off;
	struct dmaio_buf *b = w->run->shared;
	uint8_t *p = w->run->shared_map;
	struct dmaio_stats st = { .struct_size = sizeof(struct dmaio_stats) };
	long long e;
	ssize_t r;

	/* the whole slice is the guard but for the range being read */
	dmaio_buf_sync_begin(b, DMAIO_SYNC_WRITE);
	pat_fill(p + (size_t)w->id * slice, slice, SEED_GUARD, (size_t)w->id * slice);
	dmaio_buf_sync_end(b, DMAIO_SYNC_WRITE);
	w->ops += 2;
	r = rd(w, b, boff, w->run->src_fd, src_off, s->len, pr);
	if (r != (ssize_t)s->len) {
		failf(w, "shared: read %zu bytes via %s: %s", s->len, dmaio_path_name(pr),
		      test_errname(r));
		w->last_len = 0;
		return;
	}
	dmaio_buf_sync_begin(b, DMAIO_SYNC_READ);
	e = pat_check(p + boff, s->len, SEED_FILE, (uint64_t)src_off);
	if (e >= 0)
		failf(w, "shared: buffer byte %lld wrong after a read of %zu via %s", e, s->len,
		      dmaio_path_name(pr));
	e = pat_check(p + (size_t)w->id * slice, s->buf_off, SEED_GUARD, (size_t)w->id * slice);
	if (e < 0)
		e = pat_check(p + boff + s->len, slice - s->buf_off - s->len, SEED_GUARD,
			      boff + s->len);
	if (e >= 0)
		failf(w, "shared: the slice changed outside the range of a read via %s",
		      dmaio_path_name(pr));
	dmaio_buf_sync_end(b, DMAIO_SYNC_READ);
	w->ops += 2;
	w->last_seed = SEED_FILE;
	w->last_off = (size_t)src_off;
	w->last_len = s->len;
	r = wr(w, b, boff, w->run->dst_fd, dst_off, s->len, pw);
	if (r != (ssize_t)s->len) {
		failf(w, "shared: write %zu bytes via %s: %s", s->len, dmaio_path_name(pw),
		      test_errname(r));
		return;
	}
	e = file_check_pattern(w->run->dst_fd, dst_off, s->len, SEED_FILE, (uint64_t)src_off);
	if (e != -1)
		failf(w, "shared: file byte %lld wrong after a write of %zu via %s", e, s->len,
		      dmaio_path_name(pw));
	if (dmaio_buf_get_stats(b, &st) || dmaio_ctx_get_stats(w->ctx, &st))
		failf(w, "stats calls failed");
	w->ops += 2;
}

static void *worker_main(void *arg)
{
	struct worker *w = arg;
	struct run *run = w->run;
	void *addr = NULL;
	int r;

	pthread_barrier_wait(&run->bar);
	if (run->mode == 2) {
		r = dmaio_ctx_new(0, &w->ctx);
		w->ops++;
		if (r) {
			failf(w, "dmaio_ctx_new = %s", test_errname(r));
			return NULL;
		}
	}
	for (unsigned it = 0; it < iters; it++)
		part_separate(w, it);

	/* part 2: thread 0 makes the shared buffer, everybody maps it */
	pthread_barrier_wait(&run->bar);
	if (w->id == 0) {
		size_t size = slice * NTHREADS + 4096 + 1;

		r = t_alloc(w->ctx, args.heap_name, size, 0, &run->shared);
		w->ops++;
		if (r) {
			failf(w, "dmaio_buf_alloc(shared %zu) = %s", size, test_errname(r));
			run->shared = NULL;
		} else {
			uint8_t *p;

			if (dmaio_buf_map(run->shared, (void **)&p))
				failf(w, "dmaio_buf_map(shared) failed");
			w->ops++;
			dmaio_buf_sync_begin(run->shared, DMAIO_SYNC_WRITE);
			pat_fill(p, size, SEED_GUARD, 0);
			dmaio_buf_sync_end(run->shared, DMAIO_SYNC_WRITE);
			w->ops += 2;
		}
	}
	pthread_barrier_wait(&run->bar);
	if (!run->shared)
		return NULL;
	r = dmaio_buf_map(run->shared, &addr);
	w->ops++;
	if (r)
		failf(w, "dmaio_buf_map(shared) = %s", test_errname(r));
	w->map_addr = addr;
	pthread_barrier_wait(&run->bar);
	if (w->id == 0)
		run->shared_map = addr;
	pthread_barrier_wait(&run->bar);
	for (unsigned it = 0; it < iters; it++)
		part_shared(w, it);
	return NULL;
}

/* One run, in its own process (a child of test_in_child()): a cmocka test there. */
static void run_threads(void **state)
{
	struct run *run = *state;
	struct dmaio_stats st = { .struct_size = sizeof(struct dmaio_stats) };
	unsigned ops = 0, rw = 0, before = test_failures();
	uint64_t bread = 0, bwritten = 0;
	int fds0, fds1, t;
	double t0 = test_now();

	fds0 = test_count_fds();
	assert_int_equal(pthread_barrier_init(&run->bar, NULL, NTHREADS), 0);
	if (run->mode == 1)
		assert_rc_equal(dmaio_ctx_new(0, &run->shared_ctx), 0);
	for (t = 0; t < NTHREADS; t++) {
		run->w[t].run = run;
		run->w[t].id = t;
		run->w[t].ctx = run->mode == 1 ? run->shared_ctx : NULL;
		/* the others wait at the barrier for this one: a failure here cannot be undone */
		if (pthread_create(&run->w[t].th, NULL, worker_main, &run->w[t])) {
			print_error("pthread_create failed\n");
			_exit(1);
		}
	}
	for (t = 0; t < NTHREADS; t++)
		pthread_join(run->w[t].th, NULL);

	/* the shared buffer: same address everywhere, every slice as its thread left it (the
	 * guard but for the range of its last read), nothing after the slices touched */
	if (run->shared) {
		uint8_t *p = run->shared_map;
		size_t size = dmaio_buf_size(run->shared);

		for (t = 0; t < NTHREADS && p; t++) {
			struct worker *w = &run->w[t];
			const struct shape *s = &shapes[((iters - 1) * 5 + (unsigned)t) % nshapes];
			size_t lo = (size_t)t * slice, boff = lo + s->buf_off;
			long long e;

			if (w->map_addr != run->shared_map)
				failf(w, "dmaio_buf_map gave %p, thread 0 got %p", w->map_addr,
				      (void *)run->shared_map);
			dmaio_buf_sync_begin(run->shared, DMAIO_SYNC_READ);
			if (w->last_len) {
				e = pat_check(p + boff, w->last_len, w->last_seed, w->last_off);
				if (e >= 0)
					failf(w, "shared buffer: range byte %lld changed after the "
					      "thread's last read", e);
				e = pat_check(p + lo, s->buf_off, SEED_GUARD, lo);
				if (e < 0)
					e = pat_check(p + boff + s->len, lo + slice - boff - s->len,
						      SEED_GUARD, boff + s->len);
				if (e >= 0)
					failf(w, "shared buffer: the slice of thread %d changed outside "
					      "its last range", t);
			}
			dmaio_buf_sync_end(run->shared, DMAIO_SYNC_READ);
		}
		if (p) {
			size_t end = slice * NTHREADS;
			long long e = pat_check(p + end, size - end, SEED_GUARD, end);

			if (e >= 0)
				failf(&run->w[NTHREADS - 1], "shared buffer byte %zu (after the "
				      "slices) was changed", end + (size_t)e);
		}
		dmaio_buf_free(run->shared);
		run->w[0].ops++;
	}
	for (t = 0; t < NTHREADS; t++) {
		ops += run->w[t].ops;
		rw += run->w[t].rw_calls;
		bread += run->w[t].bytes_read;
		bwritten += run->w[t].bytes_written;
	}
	/*
	 * Counters: exact for the contexts of this run, all buffers freed by now. "own": thread
	 * t's context has its part-1 calls, thread 0's also every call on the shared buffer (it
	 * was allocated there).
	 */
	if (run->mode == 1 && !dmaio_ctx_get_stats(run->shared_ctx, &st)) {
		if (st.ops != rw || st.errors || st.bytes_read + st.bytes_written != bread + bwritten)
			failf(&run->w[0], "dmaio_ctx_get_stats: ops %llu for %u calls, %llu bytes for "
			      "%llu moved, errors %llu (%.2fx)", (unsigned long long)st.ops, rw,
			      (unsigned long long)(st.bytes_read + st.bytes_written),
			      (unsigned long long)(bread + bwritten), (unsigned long long)st.errors,
			      rw ? (double)st.ops / rw : 0.0);
	}
	if (run->mode == 2) {
		unsigned part2 = rw;
		uint64_t part2_bytes = bread + bwritten;

		for (t = 0; t < NTHREADS; t++) {
			part2 -= run->w[t].rw_part1;
			part2_bytes -= run->w[t].bytes_part1;
		}
		for (t = 0; t < NTHREADS; t++) {
			struct worker *w = &run->w[t];
			unsigned want = w->rw_part1 + (t == 0 ? part2 : 0);
			uint64_t want_bytes = w->bytes_part1 + (t == 0 ? part2_bytes : 0);

			if (!w->ctx || dmaio_ctx_get_stats(w->ctx, &st))
				continue;
			if (st.ops != want || st.errors ||
			    st.bytes_read + st.bytes_written != want_bytes)
				failf(w, "dmaio_ctx_get_stats of its own context: ops %llu for %u calls, "
				      "%llu bytes for %llu moved, errors %llu (%.2fx)",
				      (unsigned long long)st.ops, want,
				      (unsigned long long)(st.bytes_read + st.bytes_written),
				      (unsigned long long)want_bytes, (unsigned long long)st.errors,
				      want ? (double)st.ops / want : 0.0);
		}
		for (t = 0; t < NTHREADS; t++)
			dmaio_ctx_free(run->w[t].ctx);
	}
	dmaio_ctx_free(run->shared_ctx);
	pthread_barrier_destroy(&run->bar);
	fds1 = test_count_fds();
	/* the default context keeps its rings and device fds for the life of the process */
	if (run->mode != 0 && fds1 != fds0)
		failf(&run->w[0], "%d fds open after the run, %d before", fds1, fds0);
	printf("# %-8s threads x operations: %d x %u = %u (%u reads/writes, %llu MiB moved), "
	       "%u failures (%.1f s)\n", run->name, NTHREADS, ops / NTHREADS, ops, rw,
	       (unsigned long long)((bread + bwritten) >> 20), test_failures() - before,
	       test_now() - t0);
	assert_no_failures_since(before);
}

static struct run runs[3] = {
	{ .name = "default", .mode = 0 },
	{ .name = "own", .mode = 2 },
	{ .name = "shared", .mode = 1 },
};

/* each run in a fresh process: its threads make its first library calls */
static void test_run(void **state)
{
	struct run *run = *state;

	rel_set_label("run %s", run->name);
	test_in_child(run->name, run_threads, run);
}

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		{ "default context", test_run, NULL, NULL, &runs[0] },
		{ "a context per thread", test_run, NULL, NULL, &runs[1] },
		{ "one shared context", test_run, NULL, NULL, &runs[2] },
	};
	size_t maxlen = 0;
	int src, dst, rc;
	off_t src_size;

	test_parse_args(argc, argv, &args, "memfd");
	setvbuf(stdout, NULL, _IOLBF, 0);
	rel_install_crash_label();
	shapes = args.quick ? shapes_quick : shapes_full;
	nshapes = args.quick ? ARRAY_SIZE(shapes_quick) : ARRAY_SIZE(shapes_full);
	iters = args.quick ? 6 : 24;
	for (size_t i = 0; i < nshapes; i++)
		if (shapes[i].len + shapes[i].buf_off > maxlen)
			maxlen = shapes[i].len + shapes[i].buf_off;
	slice = (maxlen + 8191) / 4096 * 4096;
	region = (off_t)slice + 65536;
	src_size = 8 * 4096 + (off_t)NTHREADS * 65536 + (off_t)maxlen + 8192;

	/* Is the provider there (77 when not)? Asked in a child: no library call may happen in
	 * this process before the first run, whose threads make the first ones. */
	{
		pid_t pid = fork();
		int st = 0;

		if (pid == 0) {
			struct dmaio_buf *probe = NULL;
			int r = test_alloc_or_skip(NULL, args.heap_name, 4096, 0, &probe);

			if (r)
				fprintf(stderr, "dmaio_buf_alloc(%s) = %s\n", args.heap, test_errname(r));
			_exit(r ? 1 : 0);
		}
		if (pid < 0 || waitpid(pid, &st, 0) != pid || !WIFEXITED(st)) {
			fprintf(stderr, "the provider check did not run\n");
			return 1;
		}
		if (WEXITSTATUS(st))
			return WEXITSTATUS(st);
	}
	test_dir();
	src = test_tmpfile(NULL, NULL, 0);
	dst = test_tmpfile(NULL, NULL, 0);
	if (file_fill_pattern(src, 0, (size_t)src_size, SEED_FILE) ||
	    ftruncate(dst, region * NTHREADS)) {
		fprintf(stderr, "cannot prepare the files\n");
		return 1;
	}
	for (size_t i = 0; i < ARRAY_SIZE(runs); i++) {
		runs[i].src_fd = src;
		runs[i].dst_fd = dst;
	}
	rel_watchdog(300);
	printf("# heap %s, %d threads, %u iterations per part and thread, files in %s\n",
	       args.heap, NTHREADS, iters, test_dir());
	rc = cmocka_run_group_tests_name("threads", tests, NULL, NULL);
	rel_watchdog(0);
	return rc ? 1 : 0;
}
