// SPDX-License-Identifier: MIT
/*
 * dmaio-bench-model: loading every tensor of a model (safetensors / GGUF, one or more shards,
 * e.g. written by `dmaio-load --generate`) cold, four ways interleaved run by run, medians:
 *
 *  base:uring-direct  the baseline: O_DIRECT io_uring reads of the same ranges (each tensor's
 *                     range widened to 4 KiB, pieces of at most 16 MiB, --depth in flight) into
 *                     posix_memalign'd anonymous memory
 *  lib:load           dmaio_model_load(PACKED) into buffers of --heap (they are allocated inside
 *                     the timed call: the allocation is part of the load)
 *  read               pread() of each tensor into the mapping of a --heap buffer (allocated and
 *                     mapped before the clock starts)
 *  mmap+memcpy        mmap of each file and memcpy of each tensor into that mapping (llama.cpp's
 *                     default loader)
 *  base:fresh-memory  the baseline into anonymous memory allocated (mmap, not touched) inside
 *                     the timed region, like lib:load's buffers: the cost of first-touch faults
 *  lib:load-into      dmaio_model_load(PACKED) into a --heap buffer the caller already has
 *                     (dmaio_load_opts.bufs; allocated, touched and loaded into once before the
 *                     runs, like the baseline's memory): a runtime reloading weights, a device
 *                     arena — the comparison with the baseline on equal terms
 *
 * Before each variant every file's page cache is dropped (POSIX_FADV_DONTNEED after fdatasync).
 * Reported per variant: GB/s, CPU s per GiB (getrusage), and the peak RSS growth during the
 * variant (VmHWM after `echo 5 > /proc/self/clear_refs`, minus VmRSS before it); for lib:load
 * the destination buffers are allocated inside, so on memfd they are part of that growth.
 *
 *   dmaio-bench-model [--heap H] [--runs N] [--depth N] [--no-verify] FILE...
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <liburing.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#include "dmaio-model.h"

#define MAX_RUNS 16
#define PIECE (16u << 20)
#define NVAR 6

static const char *const vname[NVAR] = { "base:uring-direct", "lib:load", "read", "mmap+memcpy",
					 "base:fresh-memory", "lib:load-into" };

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static double cpu_now(void)
{
	struct rusage ru;

	getrusage(RUSAGE_SELF, &ru);
	return (double)ru.ru_utime.tv_sec + (double)ru.ru_utime.tv_usec / 1e6 +
	       (double)ru.ru_stime.tv_sec + (double)ru.ru_stime.tv_usec / 1e6;
}

static long status_kib(const char *key)
{
	char line[256];
	long v = -1;
	size_t kl = strlen(key);
	FILE *f = fopen("/proc/self/status", "re");

	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f))
		if (!strncmp(line, key, kl) && line[kl] == ':')
			v = strtol(line + kl + 1, NULL, 10);
	fclose(f);
	return v;
}

static void reset_hwm(void)
{
	int fd = open("/proc/self/clear_refs", O_WRONLY | O_CLOEXEC);

	if (fd >= 0) {
		if (write(fd, "5", 1) < 0) {
			/* an old kernel: the peak is then the process's */
		}
		close(fd);
	}
}

static int cmp_d(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

static double median(const double *v, int n)
{
	double t[MAX_RUNS];

	memcpy(t, v, (size_t)n * sizeof(double));
	qsort(t, (size_t)n, sizeof(double), cmp_d);
	return n % 2 ? t[n / 2] : (t[n / 2 - 1] + t[n / 2]) / 2;
}

struct model_ctx {
	struct dmaio_model *m;
	int n;
	struct dmaio_tensor_info *ti;
	int *fds, *dfds;
	int nfds;
	uint64_t total;
	const char *heap;
	unsigned depth;
};

static void cold(const struct model_ctx *c)
{
	for (int i = 0; i < c->nfds; i++) {
		fdatasync(c->fds[i]);
		posix_fadvise(c->fds[i], 0, 0, POSIX_FADV_DONTNEED);
	}
}

/* base: O_DIRECT io_uring, each tensor range widened to 4 KiB, in 16 MiB pieces */
static int run_base(const struct model_ctx *c, unsigned char *dst)
{
	struct io_uring ring;
	int in = 0, r;
	int idx = 0;
	uint64_t piece_off = 0, dst_at = 0;

	r = io_uring_queue_init(c->depth, &ring, 0);
	if (r < 0)
		return r;
	for (;;) {
		while (in < (int)c->depth && idx < c->n) {
			const struct dmaio_tensor_info *t = &c->ti[idx];
			uint64_t b = t->offset & ~4095ull;
			uint64_t e = (t->offset + t->size + 4095) & ~4095ull;
			uint64_t off = b + piece_off, len = e - off < PIECE ? e - off : PIECE;
			struct io_uring_sqe *sqe;

			if (t->size == 0) {
				idx++;
				continue;
			}
			sqe = io_uring_get_sqe(&ring);
			io_uring_prep_read(sqe, c->dfds[t->file], dst + dst_at, (unsigned)len, off);
			sqe->user_data = len;
			dst_at += len;
			in++;
			piece_off += len;
			if (b + piece_off >= e) {
				piece_off = 0;
				idx++;
			}
		}
		if (in == 0)
			break;
		io_uring_submit_and_wait(&ring, 1);
		struct io_uring_cqe *cqe;
		unsigned head, seen = 0;

		io_uring_for_each_cqe(&ring, head, cqe) {
			if (cqe->res < 0) {
				r = cqe->res;
			}
			/* a short O_DIRECT read happens only at end of file (the widened tail) */
			seen++;
		}
		io_uring_cq_advance(&ring, seen);
		in -= (int)seen;
		if (r < 0)
			break;
	}
	io_uring_queue_exit(&ring);
	return r < 0 ? r : 0;
}

static uint64_t widened_total(const struct model_ctx *c)
{
	uint64_t s = 0;

	for (int i = 0; i < c->n; i++)
		if (c->ti[i].size)
			s += ((c->ti[i].offset + c->ti[i].size + 4095) & ~4095ull) -
			     (c->ti[i].offset & ~4095ull);
	return s;
}

static int run_read(const struct model_ctx *c, unsigned char *dst)
{
	uint64_t at = 0;

	for (int i = 0; i < c->n; i++) {
		for (uint64_t o = 0; o < c->ti[i].size;) {
			ssize_t r = pread(c->fds[c->ti[i].file], dst + at + o,
					  c->ti[i].size - o > (1u << 30) ? (1u << 30) : c->ti[i].size - o,
					  (off_t)(c->ti[i].offset + o));

			if (r <= 0)
				return r < 0 ? -errno : -ENODATA;
			o += (uint64_t)r;
		}
		at += c->ti[i].size;
	}
	return 0;
}

static int run_mmap(const struct model_ctx *c, unsigned char *dst)
{
	uint64_t at = 0;
	void *maps[64] = { 0 };
	size_t lens[64] = { 0 };

	if (c->nfds > 64)
		return -E2BIG;
	for (int f = 0; f < c->nfds; f++) {
		off_t sz = lseek(c->fds[f], 0, SEEK_END);

		lens[f] = (size_t)sz;
		maps[f] = mmap(NULL, lens[f], PROT_READ, MAP_SHARED, c->fds[f], 0);
		if (maps[f] == MAP_FAILED)
			return -errno;
	}
	for (int i = 0; i < c->n; i++) {
		memcpy(dst + at, (char *)maps[c->ti[i].file] + c->ti[i].offset, (size_t)c->ti[i].size);
		at += c->ti[i].size;
	}
	for (int f = 0; f < c->nfds; f++)
		munmap(maps[f], lens[f]);
	return 0;
}

static int run_lib(const struct model_ctx *c, struct dmaio_buf *const *into,
		   struct dmaio_load **l, struct dmaio_load_stats *st)
{
	struct dmaio_load_opts o;
	int r;

	memset(&o, 0, sizeof(o));
	o.mode = DMAIO_LOAD_PACKED;
	if (into) {
		o.bufs = into;
		o.nbufs = 1;
	}
	o.heap = c->heap;
	o.depth = c->depth;
	o.flags = DMAIO_LOAD_DROP_CACHE;
	r = dmaio_model_load(c->m, &o, l);
	if (r == 0)
		dmaio_load_get_stats(*l, st);
	return r;
}

static int verify_lib(const struct model_ctx *c, struct dmaio_load *l, const unsigned char *ref)
{
	uint64_t at = 0;
	int bad = 0;

	for (int b = 0; b < dmaio_load_buf_count(l); b++) {
		void *p;

		if (dmaio_map(dmaio_load_buf(l, (unsigned)b), &p) < 0)
			return -1;
		dmaio_sync_begin(dmaio_load_buf(l, (unsigned)b), DMAIO_SYNC_READ);
	}
	for (int i = 0; i < c->n; i++) {
		struct dmaio_tensor_place pl;
		void *p;

		if (dmaio_load_tensor(l, (unsigned)i, &pl) == 0 && pl.buf &&
		    dmaio_map(pl.buf, &p) == 0 &&
		    memcmp((char *)p + pl.offset, ref + at, (size_t)pl.size) != 0)
			bad++;
		at += c->ti[i].size;
	}
	for (int b = 0; b < dmaio_load_buf_count(l); b++)
		dmaio_sync_end(dmaio_load_buf(l, (unsigned)b), DMAIO_SYNC_READ);
	return bad;
}

int main(int argc, char **argv)
{
	static const struct option lopts[] = {
		{ "heap", required_argument, 0, 'H' }, { "runs", required_argument, 0, 'r' },
		{ "depth", required_argument, 0, 'd' }, { "no-verify", no_argument, 0, 'n' },
		{ 0, 0, 0, 0 },
	};
	struct model_ctx c = { .heap = NULL, .depth = 32 };
	int runs = 3, ch;
	bool do_verify = true;
	double mbps[NVAR][MAX_RUNS], cpu[NVAR][MAX_RUNS], rss[NVAR][MAX_RUNS];
	uint64_t path_bytes[DMAIO_PATH_SLOTS] = { 0 }, into_bytes[DMAIO_PATH_SLOTS] = { 0 };
	struct dmaio_buf *dbuf = NULL, *ibuf = NULL;
	unsigned char *dmap = NULL, *anon = NULL;
	int rc = 0;

	while ((ch = getopt_long(argc, argv, "H:r:d:n", lopts, NULL)) != -1) {
		switch (ch) {
		case 'H': c.heap = optarg; break;
		case 'r': runs = atoi(optarg); break;
		case 'd': c.depth = (unsigned)atoi(optarg); break;
		case 'n': do_verify = false; break;
		default:
			fprintf(stderr, "usage: dmaio-bench-model [--heap H] [--runs N] [--depth N] "
					"[--no-verify] FILE...\n");
			return 2;
		}
	}
	if (runs < 1 || runs > MAX_RUNS || optind >= argc) {
		fprintf(stderr, "dmaio-bench-model: FILE... and 1 <= --runs <= %d\n", MAX_RUNS);
		return 2;
	}
	c.nfds = argc - optind;
	c.fds = calloc((size_t)c.nfds, sizeof(int));
	c.dfds = calloc((size_t)c.nfds, sizeof(int));
	for (int i = 0; i < c.nfds; i++) {
		c.fds[i] = open(argv[optind + i], O_RDONLY | O_CLOEXEC);
		c.dfds[i] = open(argv[optind + i], O_RDONLY | O_DIRECT | O_CLOEXEC);
		if (c.fds[i] < 0 || c.dfds[i] < 0) {
			fprintf(stderr, "dmaio-bench-model: %s: %s\n", argv[optind + i], strerror(errno));
			return 1;
		}
	}
	ch = dmaio_model_open(NULL, c.fds, (unsigned)c.nfds, 0, &c.m);
	if (ch < 0) {
		fprintf(stderr, "dmaio-bench-model: model: %s\n", strerror(-ch));
		return 1;
	}
	c.n = dmaio_model_count(c.m);
	c.ti = calloc((size_t)c.n + 1, sizeof(*c.ti));
	for (int i = 0; i < c.n; i++) {
		dmaio_model_tensor(c.m, (unsigned)i, &c.ti[i]);
		c.total += c.ti[i].size;
	}
	/* destinations of the baselines: anonymous aligned memory (base), a --heap buffer (read,
	 * mmap), allocated and touched before the runs */
	if (posix_memalign((void **)&anon, 4096, (size_t)widened_total(&c)) != 0)
		return 1;
	memset(anon, 0, (size_t)widened_total(&c));
	ch = dmaio_alloc(NULL, c.heap, (size_t)c.total, 0, &dbuf);
	if (ch == 0)
		ch = dmaio_map(dbuf, (void **)&dmap);
	if (ch < 0) {
		fprintf(stderr, "dmaio-bench-model: %s buffer of %" PRIu64 " bytes: %s\n",
			c.heap ? c.heap : "default", c.total, strerror(-ch));
		return 1;
	}
	dmaio_sync_begin(dbuf, DMAIO_SYNC_WRITE);
	memset(dmap, 0, (size_t)c.total);
	/* the caller's buffer of lib:load-into: room for every tensor at its file phase, touched,
	 * and loaded into once (its registration with the ring is then made, as for any buffer a
	 * process keeps) */
	{
		struct dmaio_load *l = NULL;
		struct dmaio_load_stats st;
		void *im;

		ch = dmaio_alloc(NULL, c.heap, (size_t)widened_total(&c) + 4096, 0, &ibuf);
		if (ch == 0)
			ch = dmaio_map(ibuf, &im);
		if (ch == 0) {
			memset(im, 0, (size_t)widened_total(&c) + 4096);
			ch = run_lib(&c, &ibuf, &l, &st);
		}
		if (ch < 0) {
			fprintf(stderr, "dmaio-bench-model: lib:load-into buffer: %s\n", strerror(-ch));
			return 1;
		}
		dmaio_load_free(l);
	}
	printf("# model: %d tensors, %d files, %.1f MiB of tensors; heap %s (%s); depth %u; %d runs;"
	       " cold (fadvise DONTNEED) before each variant\n",
	       c.n, c.nfds, (double)c.total / 1048576, c.heap ? c.heap : "default",
	       dmaio_buf_provider(dbuf), c.depth, runs);
	for (int run = 0; run < runs; run++) {
		for (int k = 0; k < NVAR; k++) {
			int v = (k + run) % NVAR; /* rotate the order run by run */
			struct dmaio_load *l = NULL;
			struct dmaio_load_stats st;
			long rss0;
			double c0;
			uint64_t t0, t1;
			int r = 0;

			cold(&c);
			reset_hwm();
			rss0 = status_kib("VmRSS");
			c0 = cpu_now();
			t0 = now_ns();
			switch (v) {
			case 0: r = run_base(&c, anon); break;
			case 1: r = run_lib(&c, NULL, &l, &st); break;
			case 5: r = run_lib(&c, &ibuf, &l, &st); break;
			case 2: r = run_read(&c, dmap); break;
			case 3: r = run_mmap(&c, dmap); break;
			case 4: {
				size_t wl = (size_t)widened_total(&c);
				void *fresh = mmap(NULL, wl, PROT_READ | PROT_WRITE,
						   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

				if (fresh == MAP_FAILED) {
					r = -errno;
					break;
				}
				r = run_base(&c, fresh);
				munmap(fresh, wl);
				break;
			}
			}
			t1 = now_ns();
			cpu[v][run] = (cpu_now() - c0) / ((double)c.total / 1073741824.0);
			rss[v][run] = (double)(status_kib("VmHWM") - rss0) / 1024.0;
			mbps[v][run] = (double)c.total / ((double)(t1 - t0) / 1e9) / 1e6;
			if (r < 0) {
				fprintf(stderr, "dmaio-bench-model: %s: %s\n", vname[v], strerror(-r));
				return 1;
			}
			if (v == 5) {
				for (int p = 0; p < DMAIO_PATH_SLOTS; p++)
					into_bytes[p] += st.path_bytes[p];
				if (do_verify && run == 0) {
					int bad;

					run_read(&c, dmap);
					bad = verify_lib(&c, l, dmap);
					if (bad) {
						fprintf(stderr, "dmaio-bench-model: lib:load-into: %d "
								"tensors differ from pread()\n", bad);
						rc = 1;
					}
				}
				dmaio_load_free(l);
			}
			if (v == 1) {
				for (int p = 0; p < DMAIO_PATH_SLOTS; p++)
					path_bytes[p] += st.path_bytes[p];
				if (do_verify && run == 0) {
					/* the read variant's result is the reference */
					int bad;

					run_read(&c, dmap);
					bad = verify_lib(&c, l, dmap);
					if (bad) {
						fprintf(stderr, "dmaio-bench-model: lib:load: %d tensors "
								"differ from pread()\n", bad);
						rc = 1;
					}
				}
				dmaio_load_free(l);
			}
		}
	}
	double base = median(mbps[0], runs);

	printf("%-18s %10s %8s %12s %14s\n", "variant", "MB/s", "x base", "CPU s/GiB",
	       "peak RSS +MiB");
	for (int v = 0; v < NVAR; v++)
		printf("%-18s %10.0f %8.2f %12.3f %14.1f\n", vname[v], median(mbps[v], runs),
		       median(mbps[v], runs) / base, median(cpu[v], runs), median(rss[v], runs));
	printf("lib:load paths:");
	uint64_t pt = 0;

	for (int p = 0; p < DMAIO_PATH_SLOTS; p++)
		pt += path_bytes[p];
	for (int p = 0; p < DMAIO_PATH_SLOTS; p++)
		if (path_bytes[p])
			printf(" %s %.1f%%", dmaio_path_name(p), 100.0 * (double)path_bytes[p] / (double)pt);
	printf("\n");
	printf("lib:load-into paths:");
	pt = 0;
	for (int p = 0; p < DMAIO_PATH_SLOTS; p++)
		pt += into_bytes[p];
	for (int p = 0; p < DMAIO_PATH_SLOTS; p++)
		if (into_bytes[p])
			printf(" %s %.1f%%", dmaio_path_name(p), 100.0 * (double)into_bytes[p] / (double)pt);
	printf("\n");
	printf("target lib:load >= 0.90x base: %.2fx %s (new buffers: allocation and first touch "
	       "inside)\n", median(mbps[1], runs) / base,
	       median(mbps[1], runs) / base >= 0.90 ? "MET" : "MISSED");
	printf("target lib:load-into >= 0.90x base: %.2fx %s (buffers the caller has, as the "
	       "baseline's memory)\n", median(mbps[5], runs) / base,
	       median(mbps[5], runs) / base >= 0.90 ? "MET" : "MISSED");
	dmaio_sync_end(dbuf, DMAIO_SYNC_WRITE);
	dmaio_free(dbuf);
	dmaio_free(ibuf);
	free(anon);
	dmaio_model_close(c.m);
	return rc;
}
