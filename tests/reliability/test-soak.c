// SPDX-License-Identifier: MIT
/*
 * test-soak: long runs that leaks would show in.
 *   1. alloc/free: 100 000 cycles of a 4 KiB buffer (10 000 with a device --heap), every
 *      1000th one mapped and written; one context, every 10th cycle the default one;
 *   2. I/O: 10 000 calls on one buffer, reads and writes in turn, sizes from 1 byte to 64 KiB
 *      + odd, offsets aligned and not, paths rotating over auto, udmabuf-direct, bounce-direct,
 *      buffered and sendfile (forced without DMAIO_RW_NO_FALLBACK); every call must move all
 *      its bytes, every 100th is verified byte by byte; the buffer's and the context's counters
 *      must match the calls;
 *   3. contexts: 1000 cycles of dmaio_ctx_new, alloc, a read through the io_uring paths, free,
 *      dmaio_ctx_free (rings, probes and device fds per context).
 * After each phase the number of open fds is what it was before, and VmRSS has not grown by more
 * than 16 MiB since the phase warmed up (its first 2%).
 *
 * One cmocka test per phase; a phase goes on after a failed call (up to 10 of them), each reported
 * with test_fail() (common.h), and fails at its end when any was.
 *
 * Usage: test-soak [--heap NAME]     Env: DMAIO_TEST_QUICK=1 does a tenth of everything.
 * Prints the cycles and calls made.
 */
#include <errno.h>
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
#include "rel.h"

#define RSS_LIMIT_KIB (16 * 1024)

static struct test_args args;
static unsigned div_; /* 10 with DMAIO_TEST_QUICK */
static bool device;   /* a device provider: fewer cycles (each is a kernel allocation) */

static const int paths[] = { DMAIO_PATH_AUTO, DMAIO_PATH_UDMABUF_DIRECT,
			     DMAIO_PATH_BOUNCE_DIRECT, DMAIO_PATH_BUFFERED, DMAIO_PATH_SENDFILE };

/* xorshift: the same sequence every run */
static uint64_t rnd_state = 0x9e3779b97f4a7c15ull;

static uint64_t rnd(void)
{
	rnd_state ^= rnd_state << 13;
	rnd_state ^= rnd_state >> 7;
	rnd_state ^= rnd_state << 17;
	return rnd_state;
}

struct phase {
	const char *name;
	int fds0;
	long rss_warm;
	double t0;
	unsigned fail0; /* test_failures() when the phase began */
};

static void phase_begin(struct phase *ph, const char *name)
{
	ph->name = name;
	ph->fds0 = test_count_fds();
	ph->rss_warm = -1;
	ph->t0 = test_now();
	ph->fail0 = test_failures();
	rel_set_label("phase %s", name);
}

static void phase_warm(struct phase *ph)
{
	ph->rss_warm = rel_rss_kib();
}

static void phase_end(struct phase *ph, const char *summary)
{
	int fds = test_count_fds();
	long rss = rel_rss_kib();

	if (fds != ph->fds0) {
		test_fail("%s: %d fds open after the phase, %d before", ph->name, fds, ph->fds0);
		rel_dump_fds("after the phase");
	}
	if (ph->rss_warm > 0 && rss > 0 && rss - ph->rss_warm > RSS_LIMIT_KIB)
		test_fail("%s: VmRSS grew by %ld KiB (from %ld to %ld KiB)", ph->name,
			  rss - ph->rss_warm, ph->rss_warm, rss);
	printf("# %s: %s; fds %d -> %d, VmRSS %ld -> %ld KiB (%.1f s)\n", ph->name, summary,
	       ph->fds0, fds, ph->rss_warm, rss, test_now() - ph->t0);
	assert_no_failures_since(ph->fail0);
}

/* What a phase holds, freed by its teardown also when an assert ended it part-way. */
struct hold {
	struct dmaio_ctx *ctx;
	struct dmaio_buf *b;
	int fd[2];
};

static int hold_setup(void **state)
{
	struct hold *h = calloc(1, sizeof(*h));

	if (!h)
		return -1;
	h->fd[0] = h->fd[1] = -1;
	*state = h;
	return 0;
}

static int hold_teardown(void **state)
{
	struct hold *h = *state;

	dmaio_buf_free(h->b);
	dmaio_ctx_free(h->ctx);
	for (int i = 0; i < 2; i++)
		if (h->fd[i] >= 0)
			close(h->fd[i]);
	test_cleanup();
	free(h);
	return 0;
}

/* 1. alloc/free */
static void test_alloc_free(void **state)
{
	struct hold *h = *state;
	unsigned cycles = (device ? 10000 : 100000) / div_, mapped = 0;
	struct dmaio_ctx *ctx;
	struct phase ph;
	char sum[160];

	assert_rc_equal(dmaio_ctx_new(0, &h->ctx), 0);
	ctx = h->ctx;

	/* the contexts open (and keep) their device fds on first use: not part of the count */
	for (int k = 0; k < 2; k++) {
		struct dmaio_buf *b = NULL;

		if (!t_alloc(k ? NULL : ctx, args.heap_name, 4096, 0, &b))
			dmaio_buf_free(b);
	}
	phase_begin(&ph, "alloc/free");
	for (unsigned i = 0; i < cycles; i++) {
		struct dmaio_ctx *c = i % 10 == 9 ? NULL : ctx;
		struct dmaio_buf *b = NULL;
		int r;

		if (i == cycles / 50)
			phase_warm(&ph);
		r = t_alloc(c, args.heap_name, 4096, 0, &b);
		if (r) {
			test_fail("alloc/free: cycle %u: dmaio_buf_alloc = %s", i, test_errname(r));
			if (test_failures() - ph.fail0 > 10)
				break;
			continue;
		}
		if (i % 1000 == 0) {
			uint8_t *p;

			if (dmaio_buf_map(b, (void **)&p)) {
				test_fail("alloc/free: cycle %u: dmaio_buf_map failed", i);
			} else {
				dmaio_buf_sync_begin(b, DMAIO_SYNC_RW);
				pat_fill(p, 4096, i, 0);
				if (pat_check(p, 4096, i, 0) >= 0)
					test_fail("alloc/free: cycle %u: the buffer lost its bytes",
						  i);
				dmaio_buf_sync_end(b, DMAIO_SYNC_RW);
				mapped++;
			}
		}
		dmaio_buf_free(b);
	}
	snprintf(sum, sizeof(sum), "%u alloc/free cycles of 4 KiB (%u mapped and checked)",
		 cycles, mapped);
	phase_end(&ph, sum);
}

/* 2. I/O on one buffer */
static void test_io(void **state)
{
	struct hold *h = *state;
	const size_t bsize = 1 * MiB + 4096, fsize = 2 * MiB;
	unsigned calls = 10000 / div_, verified = 0, reads = 0, writes = 0;
	uint64_t moved = 0, rmoved = 0, wmoved = 0;
	struct dmaio_buf *b;
	struct dmaio_stats st = { .struct_size = sizeof(struct dmaio_stats) };
	struct phase ph;
	char sum[200];
	uint8_t *p;
	int src, dst;

	src = h->fd[0] = test_tmpfile(NULL, NULL, 0);
	dst = h->fd[1] = test_tmpfile(NULL, NULL, 0);
	assert_int_equal(file_fill_pattern(src, 0, fsize, SEED_FILE), 0);
	assert_int_equal(ftruncate(dst, (off_t)fsize), 0);
	phase_begin(&ph, "io");
	assert_rc_equal(dmaio_ctx_new(0, &h->ctx), 0);
	assert_rc_equal(t_alloc(h->ctx, args.heap_name, bsize, 0, &h->b), 0);
	b = h->b;
	assert_rc_equal(dmaio_buf_map(b, (void **)&p), 0);
	for (unsigned i = 0; i < calls; i++) {
		bool write = i & 1, verify = i % 100 == 99;
		int path = paths[(i / 2) % ARRAY_SIZE(paths)];
		unsigned flags = path == DMAIO_PATH_AUTO ? 0 : DMAIO_RW_PATH(path);
		size_t len, boff;
		off_t foff;
		ssize_t n;

		if (i == calls / 50)
			phase_warm(&ph);
		/* sizes: 1 B .. 64 KiB + 511, a quarter of them page multiples at page offsets */
		len = 1 + (size_t)(rnd() % (64 * KiB + 511));
		boff = (size_t)(rnd() % (bsize - len));
		foff = (off_t)(rnd() % (fsize - len));
		if (rnd() % 4 == 0) {
			len = ((len + 4095) / 4096) * 4096;
			boff = boff / 4096 * 4096;
			foff = foff / 4096 * 4096;
			if (boff + len > bsize)
				boff = bsize - len;
			if ((size_t)foff + len > fsize)
				foff = (off_t)(fsize - len);
		}
		if (write && verify) {
			dmaio_buf_sync_begin(b, DMAIO_SYNC_WRITE);
			pat_fill(p + boff, len, SEED_BUF, (uint64_t)foff);
			dmaio_buf_sync_end(b, DMAIO_SYNC_WRITE);
		}
		n = write ? dmaio_fd_write(dst, foff, b, boff, len, flags, NULL) :
			    dmaio_fd_read(src, foff, b, boff, len, flags, NULL);
		if (n != (ssize_t)len) {
			test_fail("io: call %u: %s of %zu bytes at %lld (buffer +%zu) via %s "
				  "returned %s", i, write ? "write" : "read", len, (long long)foff,
				  boff, dmaio_path_name(path), test_errname(n));
			if (test_failures() - ph.fail0 > 10)
				break;
			continue;
		}
		moved += len;
		if (write) {
			writes++;
			wmoved += len;
		} else {
			reads++;
			rmoved += len;
		}
		if (!verify)
			continue;
		verified++;
		if (write) {
			long long e = file_check_pattern(dst, foff, len, SEED_BUF, (uint64_t)foff);

			if (e != -1)
				test_fail("io: call %u: file byte %lld wrong after a write via %s",
					  i, e, dmaio_path_name(path));
		} else {
			long long e;

			dmaio_buf_sync_begin(b, DMAIO_SYNC_READ);
			e = pat_check(p + boff, len, SEED_FILE, (uint64_t)foff);
			dmaio_buf_sync_end(b, DMAIO_SYNC_READ);
			if (e >= 0)
				test_fail("io: call %u: buffer byte %lld wrong after a read via %s",
					  i, e, dmaio_path_name(path));
		}
	}
	if (dmaio_buf_get_stats(b, &st) == 0 &&
	    (st.ops != reads + writes || st.errors || st.bytes_read != rmoved ||
	     st.bytes_written != wmoved))
		test_fail("io: dmaio_buf_get_stats: ops %llu errors %llu read %llu written %llu, "
			  "expected %u ops, %llu read, %llu written", (unsigned long long)st.ops,
			  (unsigned long long)st.errors, (unsigned long long)st.bytes_read,
			  (unsigned long long)st.bytes_written, reads + writes,
			  (unsigned long long)rmoved, (unsigned long long)wmoved);
	if (dmaio_ctx_get_stats(h->ctx, &st) == 0 && (st.ops != reads + writes || st.errors))
		test_fail("io: dmaio_ctx_get_stats: ops %llu errors %llu, expected %u ops (buffer "
			  "alive)", (unsigned long long)st.ops, (unsigned long long)st.errors,
			  reads + writes);
	dmaio_buf_free(h->b);
	h->b = NULL;
	dmaio_ctx_free(h->ctx);
	h->ctx = NULL;
	snprintf(sum, sizeof(sum), "%u I/O calls (%u reads, %u writes, %llu MiB, %u verified "
		 "byte by byte)", reads + writes, reads, writes, (unsigned long long)(moved >> 20),
		 verified);
	phase_end(&ph, sum);
}

/* 3. contexts */
static void test_contexts(void **state)
{
	struct hold *h = *state;
	const size_t len = 256 * KiB;
	unsigned cycles = (device ? 300 : 1000) / div_;
	struct phase ph;
	char sum[160];
	int src;

	src = h->fd[0] = test_tmpfile(NULL, NULL, 0);
	assert_int_equal(file_fill_pattern(src, 0, len + 4096, SEED_FILE), 0);
	phase_begin(&ph, "contexts");
	for (unsigned i = 0; i < cycles; i++) {
		int path = i & 1 ? DMAIO_PATH_BOUNCE_DIRECT : DMAIO_PATH_UDMABUF_DIRECT;
		struct dmaio_buf *b = NULL;
		struct dmaio_ctx *c;
		ssize_t n;
		int r;

		if (i == cycles / 50)
			phase_warm(&ph);
		r = dmaio_ctx_new(0, &c);
		if (r) {
			test_fail("contexts: cycle %u: dmaio_ctx_new = %s", i, test_errname(r));
			break;
		}
		r = t_alloc(c, args.heap_name, len, 0, &b);
		if (r) {
			test_fail("contexts: cycle %u: dmaio_buf_alloc = %s", i, test_errname(r));
		} else {
			n = dmaio_fd_read(src, 4096, b, 0, len, DMAIO_RW_PATH(path), NULL);
			if (n != (ssize_t)len)
				test_fail("contexts: cycle %u: read via %s = %s", i,
					  dmaio_path_name(path), test_errname(n));
			if (i % 100 == 0) {
				uint8_t *p;

				if (dmaio_buf_map(b, (void **)&p)) {
					test_fail("contexts: dmaio_buf_map failed");
				} else {
					dmaio_buf_sync_begin(b, DMAIO_SYNC_READ);
					if (pat_check(p, len, SEED_FILE, 4096) >= 0)
						test_fail("contexts: cycle %u: read via %s: "
							  "wrong bytes", i, dmaio_path_name(path));
					dmaio_buf_sync_end(b, DMAIO_SYNC_READ);
				}
			}
			dmaio_buf_free(b);
		}
		dmaio_ctx_free(c);
		if (test_failures() - ph.fail0 > 10)
			break;
	}
	snprintf(sum, sizeof(sum), "%u context cycles (new, alloc, read through io_uring, free)",
		 cycles);
	phase_end(&ph, sum);
}

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_alloc_free, hold_setup, hold_teardown),
		cmocka_unit_test_setup_teardown(test_io, hold_setup, hold_teardown),
		cmocka_unit_test_setup_teardown(test_contexts, hold_setup, hold_teardown),
	};
	struct dmaio_buf *probe = NULL;
	int r;

	test_parse_args(argc, argv, &args, "memfd");
	setvbuf(stdout, NULL, _IOLBF, 0);
	rel_install_crash_label();
	div_ = args.quick ? 10 : 1;
	device = args.heap_name && strcmp(args.heap_name, "memfd");
	/* the provider exists? (77 when not on the host, a failure where devices are expected) */
	r = test_alloc_or_skip(NULL, args.heap_name, 4096, 0, &probe);
	if (r) {
		fprintf(stderr, "dmaio_buf_alloc(%s) = %s\n", args.heap, test_errname(r));
		return 1;
	}
	dmaio_buf_free(probe);
	printf("# heap %s, files in %s%s\n", args.heap, test_dir(), args.quick ? ", quick" : "");
	rel_watchdog(170);
	r = cmocka_run_group_tests_name("soak", tests, NULL, NULL);
	rel_watchdog(0);
	printf("soak: %u alloc/free cycles, %u I/O calls, %u context cycles: %u failures\n",
	       (device ? 10000 : 100000) / div_, 10000 / div_, (device ? 300 : 1000) / div_,
	       test_failures());
	return r ? 1 : 0;
}
