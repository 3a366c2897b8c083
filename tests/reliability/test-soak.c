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
 * Usage: test-soak [--heap NAME]     Env: DMAIO_TEST_QUICK=1 does a tenth of everything.
 * Prints the cycles and calls made.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common.h"
#include "rel.h"

#define RSS_LIMIT_KIB (16 * 1024)

static struct test_args args;
static unsigned fails;

static const int paths[] = { DMAIO_PATH_AUTO, DMAIO_PATH_UDMABUF_DIRECT,
			     DMAIO_PATH_BOUNCE_DIRECT, DMAIO_PATH_BUFFERED, DMAIO_PATH_SENDFILE };

#define FAIL(...)                                                                                 \
	do {                                                                                      \
		if (++fails <= 10)                                                                \
			fprintf(stderr, "FAIL " __VA_ARGS__);                                     \
	} while (0)

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
};

static void phase_begin(struct phase *ph, const char *name)
{
	ph->name = name;
	ph->fds0 = test_count_fds();
	ph->rss_warm = -1;
	ph->t0 = rel_now();
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
		FAIL("%s: %d fds open after the phase, %d before\n", ph->name, fds, ph->fds0);
		rel_dump_fds("after the phase");
	}
	if (ph->rss_warm > 0 && rss > 0 && rss - ph->rss_warm > RSS_LIMIT_KIB)
		FAIL("%s: VmRSS grew by %ld KiB (from %ld to %ld KiB)\n", ph->name,
		     rss - ph->rss_warm, ph->rss_warm, rss);
	printf("# %s: %s; fds %d -> %d, VmRSS %ld -> %ld KiB (%.1f s)\n", ph->name, summary,
	       ph->fds0, fds, ph->rss_warm, rss, rel_now() - ph->t0);
}

static void soak_alloc(struct dmaio_ctx *ctx, unsigned cycles)
{
	struct phase ph;
	char sum[160];
	unsigned mapped = 0;

	/* the contexts open (and keep) their device fds on first use: not part of the count */
	for (int k = 0; k < 2; k++) {
		struct dmaio_buf *b = NULL;

		if (!dmaio_alloc(k ? NULL : ctx, args.heap_name, 4096, 0, &b))
			dmaio_free(b);
	}
	phase_begin(&ph, "alloc/free");
	for (unsigned i = 0; i < cycles; i++) {
		struct dmaio_ctx *c = i % 10 == 9 ? NULL : ctx;
		struct dmaio_buf *b = NULL;
		int r;

		if (i == cycles / 50)
			phase_warm(&ph);
		r = dmaio_alloc(c, args.heap_name, 4096, 0, &b);
		if (r) {
			FAIL("alloc/free: cycle %u: dmaio_alloc = %s\n", i, test_errname(r));
			if (fails > 10)
				break;
			continue;
		}
		if (i % 1000 == 0) {
			uint8_t *p;

			if (dmaio_map(b, (void **)&p)) {
				FAIL("alloc/free: cycle %u: dmaio_map failed\n", i);
			} else {
				dmaio_sync_begin(b, DMAIO_SYNC_RW);
				pat_fill(p, 4096, i, 0);
				if (pat_check(p, 4096, i, 0) >= 0)
					FAIL("alloc/free: cycle %u: the buffer lost its bytes\n", i);
				dmaio_sync_end(b, DMAIO_SYNC_RW);
				mapped++;
			}
		}
		dmaio_free(b);
	}
	snprintf(sum, sizeof(sum), "%u alloc/free cycles of 4 KiB (%u mapped and checked)",
		 cycles, mapped);
	phase_end(&ph, sum);
}

static void soak_io(unsigned calls)
{
	struct dmaio_ctx *ctx;
	const size_t bsize = 1 * MiB + 4096, fsize = 2 * MiB;
	unsigned verified = 0, reads = 0, writes = 0;
	uint64_t moved = 0, rmoved = 0, wmoved = 0;
	struct dmaio_buf *b = NULL;
	struct dmaio_stats st;
	struct phase ph;
	char sum[200];
	uint8_t *p;
	int src, dst, r;

	src = test_tmpfile(NULL, NULL, 0);
	dst = test_tmpfile(NULL, NULL, 0);
	if (file_fill_pattern(src, 0, fsize, SEED_FILE) || ftruncate(dst, (off_t)fsize)) {
		FAIL("io: cannot prepare the files\n");
		return;
	}
	phase_begin(&ph, "io");
	if (dmaio_ctx_new(&ctx)) {
		FAIL("io: dmaio_ctx_new failed\n");
		return;
	}
	r = dmaio_alloc(ctx, args.heap_name, bsize, 0, &b);
	if (r || dmaio_map(b, (void **)&p)) {
		FAIL("io: dmaio_alloc/map = %s\n", test_errname(r));
		dmaio_free(b);
		dmaio_ctx_free(ctx);
		return;
	}
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
			dmaio_sync_begin(b, DMAIO_SYNC_WRITE);
			pat_fill(p + boff, len, SEED_BUF, (uint64_t)foff);
			dmaio_sync_end(b, DMAIO_SYNC_WRITE);
		}
		n = write ? dmaio_write_file(b, boff, dst, foff, len, flags) :
			    dmaio_read_file(b, boff, src, foff, len, flags);
		if (n != (ssize_t)len) {
			FAIL("io: call %u: %s of %zu bytes at %lld (buffer +%zu) via %s returned %s\n",
			     i, write ? "write" : "read", len, (long long)foff, boff,
			     dmaio_path_name(path), test_errname(n));
			if (fails > 10)
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
				FAIL("io: call %u: file byte %lld wrong after a write via %s\n", i, e,
				     dmaio_path_name(path));
		} else {
			long long e;

			dmaio_sync_begin(b, DMAIO_SYNC_READ);
			e = pat_check(p + boff, len, SEED_FILE, (uint64_t)foff);
			dmaio_sync_end(b, DMAIO_SYNC_READ);
			if (e >= 0)
				FAIL("io: call %u: buffer byte %lld wrong after a read via %s\n", i, e,
				     dmaio_path_name(path));
		}
	}
	if (dmaio_buf_stats(b, &st) == 0 &&
	    (st.ops != reads + writes || st.errors || st.bytes_read != rmoved ||
	     st.bytes_written != wmoved))
		FAIL("io: dmaio_buf_stats: ops %llu errors %llu read %llu written %llu, expected "
		     "%u ops, %llu read, %llu written\n", (unsigned long long)st.ops,
		     (unsigned long long)st.errors, (unsigned long long)st.bytes_read,
		     (unsigned long long)st.bytes_written, reads + writes,
		     (unsigned long long)rmoved, (unsigned long long)wmoved);
	if (dmaio_ctx_stats(ctx, &st) == 0 && (st.ops != reads + writes || st.errors))
		FAIL("io: dmaio_ctx_stats: ops %llu errors %llu, expected %u ops (buffer alive)\n",
		     (unsigned long long)st.ops, (unsigned long long)st.errors, reads + writes);
	dmaio_free(b);
	dmaio_ctx_free(ctx);
	snprintf(sum, sizeof(sum), "%u I/O calls (%u reads, %u writes, %llu MiB, %u verified "
		 "byte by byte)", reads + writes, reads, writes, (unsigned long long)(moved >> 20),
		 verified);
	phase_end(&ph, sum);
	close(src);
	close(dst);
	test_cleanup();
}

static void soak_ctx(unsigned cycles)
{
	const size_t len = 256 * KiB;
	struct phase ph;
	char sum[160];
	int src;

	src = test_tmpfile(NULL, NULL, 0);
	if (file_fill_pattern(src, 0, len + 4096, SEED_FILE)) {
		FAIL("contexts: cannot prepare the file\n");
		return;
	}
	phase_begin(&ph, "contexts");
	for (unsigned i = 0; i < cycles; i++) {
		int path = i & 1 ? DMAIO_PATH_BOUNCE_DIRECT : DMAIO_PATH_UDMABUF_DIRECT;
		struct dmaio_buf *b = NULL;
		struct dmaio_ctx *c;
		ssize_t n;
		int r;

		if (i == cycles / 50)
			phase_warm(&ph);
		if (dmaio_ctx_new(&c)) {
			FAIL("contexts: dmaio_ctx_new failed\n");
			break;
		}
		r = dmaio_alloc(c, args.heap_name, len, 0, &b);
		if (r) {
			FAIL("contexts: cycle %u: dmaio_alloc = %s\n", i, test_errname(r));
		} else {
			n = dmaio_read_file(b, 0, src, 4096, len, DMAIO_RW_PATH(path));
			if (n != (ssize_t)len)
				FAIL("contexts: cycle %u: read via %s = %s\n", i,
				     dmaio_path_name(path), test_errname(n));
			if (i % 100 == 0) {
				uint8_t *p;

				if (dmaio_map(b, (void **)&p)) {
					FAIL("contexts: dmaio_map failed\n");
				} else {
					dmaio_sync_begin(b, DMAIO_SYNC_READ);
					if (pat_check(p, len, SEED_FILE, 4096) >= 0)
						FAIL("contexts: cycle %u: read via %s: wrong bytes\n",
						     i, dmaio_path_name(path));
					dmaio_sync_end(b, DMAIO_SYNC_READ);
				}
			}
			dmaio_free(b);
		}
		dmaio_ctx_free(c);
		if (fails > 10)
			break;
	}
	snprintf(sum, sizeof(sum), "%u context cycles (new, alloc, read through io_uring, free)",
		 cycles);
	phase_end(&ph, sum);
	close(src);
	test_cleanup();
}

int main(int argc, char **argv)
{
	bool device;
	unsigned div;
	struct dmaio_buf *probe = NULL;
	struct dmaio_ctx *ctx;
	int r;

	test_parse_args(argc, argv, &args, "memfd");
	setvbuf(stdout, NULL, _IOLBF, 0);
	rel_install_crash_label();
	div = args.quick ? 10 : 1;
	device = args.heap_name && strcmp(args.heap_name, "memfd");
	r = test_alloc_or_skip(NULL, args.heap_name, 4096, 0, &probe);
	if (r) {
		fprintf(stderr, "dmaio_alloc(%s) = %s\n", args.heap, test_errname(r));
		return 1;
	}
	dmaio_free(probe);
	if (dmaio_ctx_new(&ctx)) {
		fprintf(stderr, "dmaio_ctx_new failed\n");
		return 1;
	}
	printf("# heap %s, files in %s%s\n", args.heap, test_dir(), args.quick ? ", quick" : "");
	rel_watchdog(170);
	soak_alloc(ctx, (device ? 10000 : 100000) / div);
	soak_io(10000 / div);
	soak_ctx((device ? 300 : 1000) / div);
	dmaio_ctx_free(ctx);
	rel_watchdog(0);
	printf("soak: %u alloc/free cycles, %u I/O calls, %u context cycles: %u failures\n",
	       (device ? 10000 : 100000) / div, 10000 / div, (device ? 300 : 1000) / div, fails);
	return fails ? 1 : 0;
}
