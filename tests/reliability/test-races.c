// SPDX-License-Identifier: MIT
/*
 * test-races: the state of a registered file and of a heap that one thread changes while others
 * use it, every byte checked; made to be run under ThreadSanitizer (suite tsan), which reports
 * any access to such state that is not atomic or under a lock.
 *
 *   grow   One registered file, empty at first, shared by four threads of one context:
 *            appender  appends 64 KiB writes (every seventh 64 KiB + 123, so the end of file is
 *                      often not aligned), alternating dmaio_file_write() and a queue of its
 *                      own, one write in flight at a time, paths rotating (forced, with
 *                      fallback), from two buffers (one congruent with the file, one 513 bytes
 *                      off);
 *            reader    dmaio_file_read() of random ranges, many of them across the end of file
 *                      or past it, paths rotating, at random buffer offsets;
 *            qreader   the same through a queue of its own, three ranges in flight at once;
 *            info      dmaio_file_get_info() again and again.
 *          The file is the position-encoded pattern (stream offset = file offset). Checked: every
 *          byte read below what the appender had finished before the read began is the pattern;
 *          a byte past it is the pattern or 0 (the pieces of a write in flight land in any
 *          order); a read is short only at an end of file at or past what was finished, and
 *          ends at or before what had been started; the buffer around the bytes read is
 *          untouched; the sizes dmaio_file_get_info() gives never decrease, are at least what
 *          was finished before the call and at most what was started after it; at the end the
 *          file is the pattern, its size and the library's the total appended.
 *   heap   (a dma-heap given with --heap; skipped for memfd, which has no heap) rounds of a fresh
 *          context whose first buffers of the heap are allocated by three threads at once
 *          (the first allocation probes the heap's DMA_BUF_IOCTL_RW_FILE), each reading a range
 *          of a registered file into its buffer (the rw-file path scores on that probe) and
 *          checking it, while one of them asks dmaio_ctx_get_heap_proposed() (which probes the
 *          heap too) and checks that the answer never changes once given.
 *
 * Usage: test-races [--heap NAME]     Env: DMAIO_TEST_QUICK=1 (smaller file, fewer rounds)
 * Prints: per part the calls each thread made and the bytes appended and read.
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
#include <unistd.h>

#include <cmocka.h>

#include "common.h"
#include "rel.h"

#define CHUNK (64 * KiB)
#define ODD_CHUNK (64 * KiB + 123)
#define SKEW 513           /* the second appender buffer: buffer offset = file offset + SKEW */
#define GUARD_PAD 64       /* guard bytes checked on either side of a read */
#define QDEPTH 3           /* ranges of the queue reader in flight */

static struct test_args args;

static const int paths[] = { DMAIO_PATH_AUTO, DMAIO_PATH_UDMABUF_DIRECT, DMAIO_PATH_BOUNCE_DIRECT,
			     DMAIO_PATH_BUFFERED, DMAIO_PATH_SENDFILE, DMAIO_PATH_RW_FILE };

static uint32_t rw_flags(int path)
{
	return path == DMAIO_PATH_AUTO ? 0 : DMAIO_RW_PATH(path);
}

static uint64_t rnd(uint64_t *s)
{
	*s ^= *s << 13;
	*s ^= *s >> 7;
	*s ^= *s << 17;
	return *s;
}

/* ---- part grow ------------------------------------------------------------------------------ */
struct grow {
	struct dmaio_ctx *ctx;
	struct dmaio_file *file;
	int fd;
	uint64_t total;          /* bytes the appender writes */
	size_t max_read;         /* longest read */
	/* the appender's progress (atomics): bytes of the file written and finished, the end of
	 * the write begun; done once it has stopped */
	uint64_t finished, started;
	int done;
	pthread_barrier_t bar;
};

struct gstat {
	unsigned calls, short_reads, past_end, info_calls, grew_seen;
	uint64_t bytes;
};

static uint64_t load(const uint64_t *v)
{
	return __atomic_load_n(v, __ATOMIC_ACQUIRE);
}

static void gfail(const char *who, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static void gfail(const char *who, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	test_vfail(who, fmt, ap);
	va_end(ap);
}

static struct dmaio_buf *alloc_mapped(struct dmaio_ctx *ctx, size_t size, uint8_t **map,
				      const char *who)
{
	struct dmaio_buf *b = NULL;
	int r = t_alloc(ctx, args.heap_name, size, 0, &b);

	if (r) {
		gfail(who, "dmaio_buf_alloc(%zu) = %s", size, test_errname(r));
		return NULL;
	}
	r = dmaio_buf_map(b, (void **)map);
	if (r) {
		gfail(who, "dmaio_buf_map = %s", test_errname(r));
		dmaio_buf_free(b);
		return NULL;
	}
	return b;
}

static void *appender(void *arg)
{
	struct grow *g = arg;
	struct dmaio_buf *a = NULL, *b = NULL;
	struct dmaio_queue *q = NULL;
	uint64_t end = 0;
	unsigned i = 0;
	uint8_t *pa, *pb;
	int r;

	a = alloc_mapped(g->ctx, (size_t)g->total, &pa, "appender");
	b = alloc_mapped(g->ctx, (size_t)g->total + SKEW, &pb, "appender");
	r = dmaio_queue_new(g->ctx, 8, 0, &q);
	if (r)
		gfail("appender", "dmaio_queue_new = %s", test_errname(r));
	if (a && b) {
		dmaio_buf_sync_begin(a, DMAIO_SYNC_WRITE);
		pat_fill(pa, (size_t)g->total, SEED_FILE, 0);
		dmaio_buf_sync_end(a, DMAIO_SYNC_WRITE);
		dmaio_buf_sync_begin(b, DMAIO_SYNC_WRITE);
		memset(pb, 0, SKEW);
		pat_fill(pb + SKEW, (size_t)g->total, SEED_FILE, 0);
		dmaio_buf_sync_end(b, DMAIO_SYNC_WRITE);
	}
	pthread_barrier_wait(&g->bar);
	for (; a && b && q && end < g->total; i++) {
		uint64_t len = MIN(g->total - end, i % 7 == 6 ? ODD_CHUNK : CHUNK);
		struct dmaio_buf *src = i % 2 ? b : a;
		uint64_t boff = end + (i % 2 ? SKEW : 0);
		int path = paths[(i / 2) % ARRAY_SIZE(paths)];
		int64_t got;

		__atomic_store_n(&g->started, end + len, __ATOMIC_RELEASE);
		if (i % 4 < 2) {
			got = dmaio_file_write(g->file, end, src, boff, len, rw_flags(path), NULL);
		} else {
			struct dmaio_io io = { .struct_size = sizeof io, .op = DMAIO_OP_WRITE,
					       .file = g->file, .file_off = end, .buf = src,
					       .buf_off = boff, .len = len, .flags = rw_flags(path),
					       .user_data = i };
			struct dmaio_done d = { .struct_size = sizeof d };

			r = dmaio_queue_submit(q, &io, 1);
			if (r != 1) {
				gfail("appender", "dmaio_queue_submit = %s", test_errname(r));
				break;
			}
			r = dmaio_queue_reap(q, &d, 1, 1, -1);
			if (r != 1 || d.user_data != i) {
				gfail("appender", "dmaio_queue_reap = %s", test_errname(r));
				break;
			}
			got = d.res;
		}
		if (got != (int64_t)len) {
			gfail("appender", "append of %llu bytes at %llu via %s: %s",
			      (unsigned long long)len, (unsigned long long)end, test_pname(path),
			      test_errname(got));
			break;
		}
		end += len;
		__atomic_store_n(&g->finished, end, __ATOMIC_RELEASE);
	}
	printf("# appender: %u appends (half through a queue), %llu MiB\n", i,
	       (unsigned long long)(end >> 20));
	__atomic_store_n(&g->done, 1, __ATOMIC_RELEASE);
	dmaio_queue_free(q);
	dmaio_buf_free(a);
	dmaio_buf_free(b);
	return NULL;
}

/* The bytes a read of [off, off + len) into p + boff brought, finished0 being the appender's
 * finished bytes before the read began: see the head of the file. */
static void check_read(struct grow *g, const char *who, struct gstat *st, const uint8_t *p,
		       size_t boff, uint64_t off, size_t len, int64_t got, uint64_t finished0,
		       int path)
{
	uint64_t started1 = load(&g->started);
	uint64_t sure = finished0 > off ? MIN(finished0 - off, len) : 0;
	long long e;

	st->calls++;
	if (got < 0) {
		gfail(who, "read of %zu at %llu via %s: %s", len, (unsigned long long)off,
		      test_pname(path), test_errname(got));
		return;
	}
	st->bytes += (uint64_t)got;
	if ((uint64_t)got < len)
		st->short_reads++;
	if ((uint64_t)got > sure)
		st->past_end++;
	if ((uint64_t)got < sure || (uint64_t)got > len ||
	    (got > 0 && off + (uint64_t)got > started1)) {
		gfail(who, "read of %zu at %llu via %s gave %lld bytes: %llu were written before "
		      "it, %llu begun after it", len, (unsigned long long)off, test_pname(path),
		      (long long)got, (unsigned long long)finished0, (unsigned long long)started1);
		return;
	}
	e = pat_check(p + boff, (size_t)sure, SEED_FILE, off);
	if (e >= 0) {
		gfail(who, "read of %zu at %llu via %s: byte %llu (file offset %llu) is wrong",
		      len, (unsigned long long)off, test_pname(path), (unsigned long long)e,
		      (unsigned long long)(off + (uint64_t)e));
		if (test_fail_printing())
			pat_report("read", p + boff, (size_t)sure, SEED_FILE, off, e, false);
		return;
	}
	for (uint64_t k = sure; k < (uint64_t)got; k++)
		if (p[boff + k] && p[boff + k] != pat_byte(SEED_FILE, off + k)) {
			gfail(who, "read of %zu at %llu via %s: byte at file offset %llu (past the "
			      "%llu bytes written before the read) is neither the data nor 0",
			      len, (unsigned long long)off, test_pname(path),
			      (unsigned long long)(off + k), (unsigned long long)finished0);
			return;
		}
	e = pat_check(p + boff - GUARD_PAD, GUARD_PAD, SEED_GUARD, boff - GUARD_PAD);
	if (e < 0)
		e = pat_check(p + boff + got, len - (size_t)got + GUARD_PAD, SEED_GUARD,
			      boff + (uint64_t)got);
	if (e >= 0)
		gfail(who, "read of %zu at %llu via %s (%lld bytes) changed the buffer outside "
		      "the bytes read", len, (unsigned long long)off, test_pname(path),
		      (long long)got);
}

/* A random range near the growing end of the file (often across it, sometimes past it), or
 * anywhere before it; a random buffer offset inside [GUARD_PAD, room - len - GUARD_PAD). */
static void pick(struct grow *g, uint64_t *seed, uint64_t finished, size_t room, uint64_t *off,
		 size_t *len, size_t *boff)
{
	uint64_t x = rnd(seed), back;

	*len = 1 + (size_t)(rnd(seed) % g->max_read);
	if (x % 2) { /* near the end: across it, or past it */
		back = rnd(seed) % (*len + 128 * KiB);
		*off = finished > back ? finished - back : 0;
		if (x % 7 == 1)
			*off = finished + rnd(seed) % (64 * KiB);
	} else {
		*off = rnd(seed) % (finished + 64 * KiB);
	}
	if (x % 5 == 0)
		*off &= ~(uint64_t)4095; /* page-aligned start */
	*boff = GUARD_PAD + (size_t)(rnd(seed) % (room - *len - 2 * GUARD_PAD));
	if (x % 3 == 0) /* congruent with the file offset: the O_DIRECT middle is possible */
		*boff = (size_t)((*boff & ~(size_t)4095) + (*off & 4095)) + 4096;
	if (*boff + *len + GUARD_PAD > room)
		*boff = GUARD_PAD + (size_t)(*off & 4095);
	if (*boff + *len + GUARD_PAD > room)
		*boff = GUARD_PAD;
}

static void *reader(void *arg)
{
	struct grow *g = arg;
	struct gstat st = { 0 };
	size_t room = g->max_read + 3 * 4096 + 2 * GUARD_PAD;
	uint64_t seed = 0x7265616465720001ull;
	struct dmaio_buf *b;
	uint8_t *p;

	b = alloc_mapped(g->ctx, room, &p, "reader");
	pthread_barrier_wait(&g->bar);
	for (unsigned i = 0; b; i++) {
		int path = paths[i % ARRAY_SIZE(paths)];
		uint64_t finished0 = load(&g->finished), off;
		size_t len, boff;
		int64_t got;

		if (__atomic_load_n(&g->done, __ATOMIC_ACQUIRE) && i >= 8)
			break;
		pick(g, &seed, finished0, room, &off, &len, &boff);
		dmaio_buf_sync_begin(b, DMAIO_SYNC_WRITE);
		pat_fill(p + boff - GUARD_PAD, len + 2 * GUARD_PAD, SEED_GUARD, boff - GUARD_PAD);
		dmaio_buf_sync_end(b, DMAIO_SYNC_WRITE);
		got = dmaio_file_read(g->file, off, b, boff, len, rw_flags(path), NULL);
		dmaio_buf_sync_begin(b, DMAIO_SYNC_READ);
		check_read(g, "reader", &st, p, boff, off, len, got, finished0, path);
		dmaio_buf_sync_end(b, DMAIO_SYNC_READ);
	}
	printf("# reader: %u reads (%u short, %u past what was written before them), %llu MiB\n",
	       st.calls, st.short_reads, st.past_end, (unsigned long long)(st.bytes >> 20));
	dmaio_buf_free(b);
	return NULL;
}

static void *qreader(void *arg)
{
	struct grow *g = arg;
	struct gstat st = { 0 };
	size_t room = g->max_read + 3 * 4096 + 2 * GUARD_PAD;
	uint64_t seed = 0x7172656164657202ull;
	struct dmaio_queue *q = NULL;
	struct dmaio_buf *b;
	unsigned rounds = 0;
	uint8_t *p;
	int r;

	b = alloc_mapped(g->ctx, room * QDEPTH, &p, "qreader");
	r = dmaio_queue_new(g->ctx, 16, 0, &q);
	if (r)
		gfail("qreader", "dmaio_queue_new = %s", test_errname(r));
	pthread_barrier_wait(&g->bar);
	for (unsigned i = 0; b && q; i++, rounds++) {
		struct dmaio_io io[QDEPTH];
		struct dmaio_done d[QDEPTH];
		uint64_t finished0 = load(&g->finished);
		size_t len[QDEPTH], boff[QDEPTH];
		uint64_t off[QDEPTH];
		int n = 0;

		if (__atomic_load_n(&g->done, __ATOMIC_ACQUIRE) && i >= 4)
			break;
		dmaio_buf_sync_begin(b, DMAIO_SYNC_WRITE);
		for (unsigned k = 0; k < QDEPTH; k++) {
			pick(g, &seed, finished0, room, &off[k], &len[k], &boff[k]);
			boff[k] += k * room;
			pat_fill(p + boff[k] - GUARD_PAD, len[k] + 2 * GUARD_PAD, SEED_GUARD,
				 boff[k] - GUARD_PAD);
			/* reaped in parts: every element is the start of an array once */
			d[k] = (struct dmaio_done){ .struct_size = sizeof d[0] };
			io[k] = (struct dmaio_io){
				.struct_size = sizeof io[0], .op = DMAIO_OP_READ, .file = g->file,
				.file_off = off[k], .buf = b, .buf_off = boff[k], .len = len[k],
				.flags = rw_flags(paths[(i + k) % ARRAY_SIZE(paths)]),
				.user_data = k };
		}
		dmaio_buf_sync_end(b, DMAIO_SYNC_WRITE);
		r = dmaio_queue_submit(q, io, QDEPTH);
		if (r != QDEPTH) {
			gfail("qreader", "dmaio_queue_submit = %s", test_errname(r));
			break;
		}
		while (n < QDEPTH) {
			r = dmaio_queue_reap(q, d + n, QDEPTH - (uint32_t)n, 1, -1);
			if (r <= 0) {
				gfail("qreader", "dmaio_queue_reap = %s", test_errname(r));
				break;
			}
			n += r;
		}
		if (n < QDEPTH)
			break;
		dmaio_buf_sync_begin(b, DMAIO_SYNC_READ);
		for (int j = 0; j < n; j++) {
			unsigned k = (unsigned)d[j].user_data;

			check_read(g, "qreader", &st, p, boff[k], off[k], len[k], d[j].res,
				   finished0, paths[(i + k) % ARRAY_SIZE(paths)]);
		}
		dmaio_buf_sync_end(b, DMAIO_SYNC_READ);
	}
	printf("# qreader: %u batches of %d, %u reads (%u short, %u past what was written "
	       "before them), %llu MiB\n", rounds, QDEPTH, st.calls, st.short_reads, st.past_end,
	       (unsigned long long)(st.bytes >> 20));
	dmaio_queue_free(q);
	dmaio_buf_free(b);
	return NULL;
}

static void *info(void *arg)
{
	struct grow *g = arg;
	uint64_t last = 0, changes = 0;
	unsigned calls = 0;

	pthread_barrier_wait(&g->bar);
	for (;;) {
		struct dmaio_file_info fi = { .struct_size = sizeof fi };
		uint64_t finished0 = load(&g->finished), started1;
		int stop = __atomic_load_n(&g->done, __ATOMIC_ACQUIRE);
		int r = dmaio_file_get_info(g->file, &fi);

		started1 = load(&g->started);
		calls++;
		if (r) {
			gfail("info", "dmaio_file_get_info = %s", test_errname(r));
			break;
		}
		if (fi.file_size < last || fi.file_size < finished0 || fi.file_size > started1) {
			gfail("info", "dmaio_file_get_info: size %llu after %llu; %llu bytes were "
			      "written before the call, %llu begun after it",
			      (unsigned long long)fi.file_size, (unsigned long long)last,
			      (unsigned long long)finished0, (unsigned long long)started1);
			break;
		}
		changes += fi.file_size != last;
		last = fi.file_size;
		if (stop)
			break;
		if (calls % 64 == 0)
			usleep(50); /* leave the CPUs to the others now and then */
	}
	printf("# info: %u calls, %llu sizes seen, the last %llu\n", calls,
	       (unsigned long long)changes, (unsigned long long)last);
	return NULL;
}

static void test_grow(void **state)
{
	struct grow g = { 0 };
	void *(*fn[])(void *) = { appender, reader, qreader, info };
	pthread_t th[ARRAY_SIZE(fn)];
	struct dmaio_file_info fi = { .struct_size = sizeof fi };
	unsigned before = test_failures();
	double t0 = test_now();
	struct stat sb;
	long long e;

	(void)state;
	rel_set_label("grow");
	g.total = args.quick ? 16 * MiB : 48 * MiB; /* udmabuf: under its 64 MiB limit */
	g.max_read = args.quick ? 192 * KiB : 640 * KiB;
	g.fd = test_tmpfile(NULL, NULL, 0);
	assert_rc_equal(dmaio_ctx_new(0, &g.ctx), 0);
	assert_rc_equal(dmaio_file_open(g.ctx, g.fd, 0, &g.file), 0);
	assert_int_equal(pthread_barrier_init(&g.bar, NULL, ARRAY_SIZE(fn)), 0);
	for (size_t i = 0; i < ARRAY_SIZE(fn); i++)
		if (pthread_create(&th[i], NULL, fn[i], &g)) {
			print_error("pthread_create failed\n");
			_exit(1); /* the others wait at the barrier for this one */
		}
	for (size_t i = 0; i < ARRAY_SIZE(fn); i++)
		pthread_join(th[i], NULL);
	pthread_barrier_destroy(&g.bar);

	assert_rc_equal(dmaio_file_get_info(g.file, &fi), 0);
	assert_rc_equal(fstat(g.fd, &sb), 0);
	test_expect(g.finished == g.total, "the appender stopped at %llu of %llu bytes",
		    (unsigned long long)g.finished, (unsigned long long)g.total);
	test_expect((uint64_t)sb.st_size == g.finished && fi.file_size == g.finished,
		    "file size %lld, the library's %llu, %llu bytes appended",
		    (long long)sb.st_size, (unsigned long long)fi.file_size,
		    (unsigned long long)g.finished);
	e = file_check_pattern(g.fd, 0, (size_t)g.finished, SEED_FILE, 0);
	test_expect(e == -1, "the file is wrong at byte %lld", e);
	dmaio_file_close(g.file);
	dmaio_ctx_free(g.ctx);
	close(g.fd);
	printf("# grow: %.1f s, %u failures\n", test_now() - t0, test_failures() - before);
	assert_no_failures_since(before);
}

/* ---- part heap ------------------------------------------------------------------------------ */
#define HEAP_THREADS 3

struct heap_round {
	struct dmaio_ctx *ctx;
	struct dmaio_file *file;
	int heap_index;
	size_t len;
	pthread_barrier_t bar;
	int id_next;
};

struct heap_seen {
	int32_t rw_file, rw_file_err; /* the first answer of the run (rw_file UNKNOWN: none yet) */
	unsigned asked, reads;
};

static struct heap_seen seen;
static pthread_mutex_t seen_lock = PTHREAD_MUTEX_INITIALIZER;

static void ask_proposed(struct heap_round *h)
{
	struct dmaio_heap_proposed hp = { .struct_size = sizeof hp };
	int r = dmaio_ctx_get_heap_proposed(h->ctx, (uint32_t)h->heap_index, &hp);

	if (r) {
		gfail("heap", "dmaio_ctx_get_heap_proposed = %s", test_errname(r));
		return;
	}
	pthread_mutex_lock(&seen_lock);
	seen.asked++;
	if (hp.rw_file != DMAIO_CAP_UNKNOWN && seen.rw_file == DMAIO_CAP_UNKNOWN) {
		seen.rw_file = hp.rw_file;
		seen.rw_file_err = hp.rw_file_err;
	} else if (hp.rw_file != seen.rw_file || hp.rw_file_err != seen.rw_file_err) {
		gfail("heap", "RW_FILE answered %d (%s), before %d (%s)", hp.rw_file,
		      test_errname(hp.rw_file_err), seen.rw_file, test_errname(seen.rw_file_err));
	}
	pthread_mutex_unlock(&seen_lock);
}

static void *heap_thread(void *arg)
{
	struct heap_round *h = arg;
	int id = __atomic_fetch_add(&h->id_next, 1, __ATOMIC_RELAXED);
	struct dmaio_buf *b = NULL;
	uint8_t *p = NULL;
	uint64_t off = (uint64_t)id * 8192 + 512 * (uint64_t)id;
	int64_t got;
	int r;

	pthread_barrier_wait(&h->bar);
	if (id == HEAP_THREADS - 1)
		ask_proposed(h);
	r = t_alloc(h->ctx, args.heap_name, h->len, 0, &b);
	if (r) {
		gfail("heap", "dmaio_buf_alloc(%s, %zu) = %s", args.heap_name, h->len,
		      test_errname(r));
		return NULL;
	}
	got = dmaio_file_read(h->file, off, b, 0, h->len, 0, NULL);
	if (id == HEAP_THREADS - 1)
		ask_proposed(h);
	if (got != (int64_t)h->len) {
		gfail("heap", "read of %zu at %llu: %s", h->len, (unsigned long long)off,
		      test_errname(got));
	} else if (!dmaio_buf_map(b, (void **)&p)) {
		long long e;

		dmaio_buf_sync_begin(b, DMAIO_SYNC_READ);
		e = pat_check(p, h->len, SEED_FILE, off);
		dmaio_buf_sync_end(b, DMAIO_SYNC_READ);
		if (e >= 0)
			gfail("heap", "read of %zu at %llu: byte %lld wrong", h->len,
			      (unsigned long long)off, e);
	}
	__atomic_fetch_add(&seen.reads, 1, __ATOMIC_RELAXED);
	dmaio_buf_free(b);
	return NULL;
}

static void test_heap(void **state)
{
	unsigned rounds = args.quick ? 6 : 30, before = test_failures();
	struct dmaio_heap_info hi = { .struct_size = sizeof hi };
	struct dmaio_ctx *probe;
	size_t len = 1 * MiB + 4096;
	int fd, idx = -1, n;

	(void)state;
	rel_set_label("heap");
	/* the heap's index, from a context of its own (asking probes the heap) */
	assert_rc_equal(dmaio_ctx_new(0, &probe), 0);
	n = dmaio_ctx_heap_count(probe);
	for (int i = 0; i < n && idx < 0; i++)
		if (!dmaio_ctx_get_heap(probe, (uint32_t)i, &hi) &&
		    !strcmp(hi.name, args.heap_name))
			idx = i;
	dmaio_ctx_free(probe);
	if (idx < 0) { /* memfd, udmabuf, drm: not a dma-heap (main() checked the provider) */
		print_message("# heap: %s is not a /dev/dma_heap heap: part skipped\n",
			      args.heap_name);
		skip();
	}
	fd = test_tmpfile(NULL, NULL, 0);
	assert_rc_equal(file_fill_pattern(fd, 0, len + 64 * KiB, SEED_FILE), 0);
	for (unsigned i = 0; i < rounds; i++) {
		struct heap_round h = { .heap_index = idx, .len = len };
		pthread_t th[HEAP_THREADS];

		assert_rc_equal(dmaio_ctx_new(0, &h.ctx), 0);
		assert_rc_equal(dmaio_file_open(h.ctx, fd, 0, &h.file), 0);
		assert_int_equal(pthread_barrier_init(&h.bar, NULL, HEAP_THREADS), 0);
		for (int t = 0; t < HEAP_THREADS; t++)
			if (pthread_create(&th[t], NULL, heap_thread, &h)) {
				print_error("pthread_create failed\n");
				_exit(1);
			}
		for (int t = 0; t < HEAP_THREADS; t++)
			pthread_join(th[t], NULL);
		pthread_barrier_destroy(&h.bar);
		dmaio_file_close(h.file);
		dmaio_ctx_free(h.ctx);
	}
	close(fd);
	printf("# heap %s: %u rounds of %d threads, %u reads, %u answers, RW_FILE %d (%s)\n",
	       args.heap_name, rounds, HEAP_THREADS, seen.reads, seen.asked, seen.rw_file,
	       test_errname(seen.rw_file_err));
	assert_no_failures_since(before);
}

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_grow),
		cmocka_unit_test(test_heap),
	};
	struct dmaio_buf *b = NULL;
	int r, rc;

	test_parse_args(argc, argv, &args, "memfd");
	setvbuf(stdout, NULL, _IOLBF, 0);
	rel_install_crash_label();
	r = test_alloc_or_skip(NULL, args.heap_name, 4096, 0, &b);
	if (r) {
		fprintf(stderr, "dmaio_buf_alloc(%s) = %s\n", args.heap, test_errname(r));
		return 1;
	}
	dmaio_buf_free(b);
	printf("# heap %s, files in %s\n", args.heap, test_dir());
	rel_watchdog(300);
	rc = cmocka_run_group_tests_name("races", tests, NULL, NULL);
	rel_watchdog(0);
	return rc ? 1 : 0;
}
