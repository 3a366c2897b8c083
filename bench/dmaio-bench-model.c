// SPDX-License-Identifier: MIT
/*
 * dmaio-bench-model: loading every tensor of a model (safetensors / GGUF, one or more shards,
 * e.g. written by `dmaio-load --generate`) cold, six ways interleaved run by run, medians:
 *
 *  base:uring-direct  the baseline: O_DIRECT io_uring reads of the same ranges (each tensor's
 *                     range widened to 4 KiB, pieces of at most 16 MiB, --depth in flight) into
 *                     posix_memalign'd anonymous memory (unregistered: pinned per I/O;
 *                     baselines.c)
 *  lib:load           dmaio_model_load(PACKED) into buffers of --heap (they are allocated inside
 *                     the timed call: the allocation is part of the load)
 *  read               pread() of each tensor into the mapping of a --heap buffer (allocated,
 *                     mapped and touched before the clock starts)
 *  mmap+memcpy        mmap of each file and memcpy of each tensor into that mapping (llama.cpp's
 *                     default loader)
 *  base:fresh-memory  the baseline into anonymous memory allocated (mmap, not touched) inside
 *                     the timed region, like lib:load's buffers: the cost of first-touch faults
 *  lib:load-into      dmaio_model_load(PACKED) into a --heap buffer the caller already has
 *                     (dmaio_load_opts.bufs; allocated, touched and loaded into once before the
 *                     clock starts, like the baseline's memory): a runtime reloading weights, a
 *                     device arena — the comparison with the baseline on equal terms
 *
 * Each variant's destination is made before its clock starts and freed after it stops, so the
 * bench holds one variant's memory at a time (plus the largest tensor, to verify lib:load and
 * lib:load-into against pread() of the files in the first run).
 *
 * Before each variant every file's page cache is dropped (fdatasync + POSIX_FADV_DONTNEED) and
 * checked (cache.c: cachestat, else mincore; fatal when pages stay). Reported per variant: MB/s,
 * CPU s per GiB (getrusage), and the peak RSS growth during the variant (VmHWM after
 * `echo 5 > /proc/self/clear_refs`, minus VmRSS before it); for lib:load the destination
 * buffers are allocated inside, so on memfd they are part of that growth. The target verdicts:
 * bench/verdict.py on the --csv or --json file.
 *
 *   dmaio-bench-model [--heap H] [--runs N] [--depth N] [--lib-depth N] [--variants LIST]
 *                     [--no-verify] [--format F] [--csv FILE] [--json FILE] FILE...
 *   dmaio-bench-model --version
 *
 * --heap H: the buffers' provider (dmaio_alloc_opts.providers, a list of one); without it the
 * library's order.
 *
 * --depth sets the baselines' requests in flight and, unless --lib-depth is given, the load's
 * queue depth (dmaio_load_opts.depth); --variants runs a subset (base always).
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "dmaio-model.h"

#include "baselines.h"
#include "cache.h"
#include "output.h"
#include "report.h"
#include "stats.h"
#include "util.h"

#define PROG "dmaio-bench-model"
#define PIECE (16u << 20)
#define NVAR 6

enum { V_BASE, V_LOAD, V_READ, V_MMAP, V_FRESH, V_INTO };
static const char *const vname[NVAR] = { "base:uring-direct", "lib:load", "read", "mmap+memcpy",
					 "base:fresh-memory", "lib:load-into" };
/* the names --variants takes besides vname */
static const char *const vshort[NVAR] = { "base", "load", "read", "mmap", "fresh", "into" };

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

struct model_ctx {
	struct dmaio_model *m;
	int n;
	struct dmaio_tensor_info *ti;
	int *fds, *dfds;
	uint64_t *lens;         /* the files' sizes (make_cold) */
	int nfds;
	uint64_t total;
	const char *heap;        /* --heap, or NULL: the library's order */
	const char *providers[2]; /* { heap, NULL } */
	struct dmaio_alloc_opts ao; /* the buffers' options: providers when --heap */
	unsigned depth;          /* the baseline's requests in flight */
	unsigned lib_depth;      /* dmaio_load_opts.depth of lib:load and lib:load-into */
	struct breq *reqs;      /* the baseline's requests */
	size_t nreqs;
	const char *resid_how;
};

static uint64_t widened_total(const struct model_ctx *c)
{
	uint64_t s = 0;

	for (int i = 0; i < c->n; i++)
		if (c->ti[i].nbytes)
			s += ((c->ti[i].offset + c->ti[i].nbytes + 4095) & ~4095ull) - (c->ti[i].offset & ~4095ull);
	return s;
}

/* the baseline's requests: each tensor's range widened to 4 KiB, in 16 MiB pieces, one after
 * the other in the destination */
static void plan_base(struct model_ctx *c)
{
	uint64_t at = 0;
	size_t cap = 0;

	for (int i = 0; i < c->n; i++)
		cap += (size_t)(c->ti[i].nbytes / PIECE + 2);
	c->reqs = xcalloc(cap, sizeof(*c->reqs));
	for (int i = 0; i < c->n; i++) {
		const struct dmaio_tensor_info *t = &c->ti[i];
		uint64_t b = t->offset & ~4095ull, e = (t->offset + t->nbytes + 4095) & ~4095ull, off;

		if (!t->nbytes)
			continue;
		for (off = b; off < e; off += PIECE) {
			struct breq *q = &c->reqs[c->nreqs++];

			q->fd = c->dfds[t->file];
			q->off = off;
			q->mem_off = at;
			q->len = (uint32_t)(e - off < PIECE ? e - off : PIECE);
			at += q->len;
		}
	}
}

/* base: O_DIRECT io_uring, a ring made for the load (a short read happens only at the end of a
 * file: the widened tail) */
static int run_base(const struct model_ctx *c, unsigned char *dst)
{
	struct uring_base u;
	int r = ub_init(&u, c->depth);

	if (r < 0)
		return r;
	r = ub_run(&u, DIR_READ, (char *)dst, 0, c->reqs, c->nreqs, c->depth, true, NULL);
	ub_exit(&u);
	return r;
}

static int run_read(const struct model_ctx *c, unsigned char *dst)
{
	uint64_t at = 0;

	for (int i = 0; i < c->n; i++) {
		ssize_t r = full_pread(c->fds[c->ti[i].file], dst + at, (size_t)c->ti[i].nbytes, c->ti[i].offset);

		if (r < 0)
			return (int)r;
		if ((uint64_t)r != c->ti[i].nbytes)
			return -ENODATA;
		at += c->ti[i].nbytes;
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
		lens[f] = (size_t)c->lens[f];
		maps[f] = mmap(NULL, lens[f], PROT_READ, MAP_SHARED, c->fds[f], 0);
		if (maps[f] == MAP_FAILED)
			return -errno;
	}
	for (int i = 0; i < c->n; i++) {
		memcpy(dst + at, (char *)maps[c->ti[i].file] + c->ti[i].offset, (size_t)c->ti[i].nbytes);
		at += c->ti[i].nbytes;
	}
	for (int f = 0; f < c->nfds; f++)
		munmap(maps[f], lens[f]);
	return 0;
}

/* a --heap buffer (the library's order without --heap); why it failed in @why */
static int heap_alloc(const struct model_ctx *c, size_t len, struct dmaio_buf **buf,
		      struct dmaio_reason *why)
{
	return dmaio_buf_alloc(NULL, len, &c->ao, buf, why);
}

/* buffer @b of a load (NULL past its count) */
static struct dmaio_buf *lbuf(const struct dmaio_load *l, int b)
{
	struct dmaio_buf *buf = NULL;

	if (dmaio_load_get_buf(l, (uint32_t)b, &buf) < 0)
		return NULL;
	return buf;
}

static int run_lib(const struct model_ctx *c, struct dmaio_buf *const *into, struct dmaio_load **l,
		   struct dmaio_load_stats *st, struct dmaio_reason *why)
{
	struct dmaio_load_opts o = { .struct_size = sizeof(struct dmaio_load_opts) };
	int r;

	o.mode = DMAIO_LOAD_PACKED;
	if (into) {
		o.bufs = into;
		o.nbufs = 1;
	} else {
		o.alloc = &c->ao; /* the caller's buffers need none */
	}
	o.depth = c->lib_depth;
	o.flags = DMAIO_LOAD_DROP_CACHE;
	r = dmaio_model_load(c->m, &o, l, why);
	if (r == 0)
		dmaio_load_get_stats(*l, st);
	return r;
}

/* every tensor of the load against pread() of the file (scratch memory: the largest tensor) */
static int verify_lib(const struct model_ctx *c, struct dmaio_load *l)
{
	uint64_t biggest = 0;
	unsigned char *ref;
	int bad = 0;

	for (int i = 0; i < c->n; i++)
		biggest = c->ti[i].nbytes > biggest ? c->ti[i].nbytes : biggest;
	ref = xcalloc(1, (size_t)biggest + 1);
	for (int b = 0; b < dmaio_load_buf_count(l); b++) {
		void *p;

		if (dmaio_buf_map(lbuf(l, b), &p) < 0) {
			free(ref);
			return -1;
		}
		dmaio_buf_sync_begin(lbuf(l, b), DMAIO_SYNC_READ);
	}
	for (int i = 0; i < c->n; i++) {
		struct dmaio_tensor_place pl = { .struct_size = sizeof(struct dmaio_tensor_place) };
		void *p;
		ssize_t r;

		if (dmaio_load_get_tensor(l, (unsigned)i, &pl) != 0 || !pl.buf)
			continue;
		r = full_pread(c->fds[c->ti[i].file], ref, (size_t)pl.nbytes, c->ti[i].offset);
		if (r != (ssize_t)pl.nbytes || dmaio_buf_map(pl.buf, &p) != 0 ||
		    memcmp((char *)p + pl.offset, ref, (size_t)pl.nbytes) != 0)
			bad++;
	}
	for (int b = 0; b < dmaio_load_buf_count(l); b++)
		dmaio_buf_sync_end(lbuf(l, b), DMAIO_SYNC_READ);
	free(ref);
	return bad;
}

/* The destination of a variant, made (and touched) before its clock starts and freed after it:
 * one variant's memory at a time (a 4 GiB model then fits a 12 GiB test VM). */
struct dest {
	unsigned char *anon;     /* base: posix_memalign'd, touched */
	struct dmaio_buf *buf;   /* read, mmap+memcpy, lib:load-into: a --heap buffer, touched */
	unsigned char *map;
	size_t anon_len;
};

static void dest_make(const struct model_ctx *c, int v, struct dest *d)
{
	struct dmaio_reason why = { .struct_size = sizeof(why) };
	size_t len;
	int r;

	memset(d, 0, sizeof(*d));
	if (v == V_BASE) {
		d->anon_len = (size_t)widened_total(c);
		if (posix_memalign((void **)&d->anon, 4096, d->anon_len) != 0)
			die("out of memory");
		memset(d->anon, 0, d->anon_len);
		return;
	}
	if (v != V_READ && v != V_MMAP && v != V_INTO)
		return;
	/* lib:load-into: room for every tensor at its file phase */
	len = v == V_INTO ? (size_t)widened_total(c) + 4096 : (size_t)c->total;
	r = heap_alloc(c, len, &d->buf, &why);
	if (r < 0)
		die("%s buffer of %zu bytes: %s", c->heap ? c->heap : "default", len,
		    why.text[0] ? why.text : strerror(-r));
	r = dmaio_buf_map(d->buf, (void **)&d->map);
	if (r < 0)
		die("%s buffer of %zu bytes: mapping it: %s", c->heap ? c->heap : "default", len,
		    strerror(-r));
	dmaio_buf_sync_begin(d->buf, DMAIO_SYNC_WRITE);
	memset(d->map, 0, len);
	dmaio_buf_sync_end(d->buf, DMAIO_SYNC_WRITE);
	if (v == V_INTO) {
		/* loaded into once: its registration with the ring is made, as for any buffer a
		 * process keeps */
		struct dmaio_load *l = NULL;
		struct dmaio_load_stats st = { .struct_size = sizeof(struct dmaio_load_stats) };

		r = run_lib(c, &d->buf, &l, &st, &why);
		if (r < 0)
			die("lib:load-into buffer: %s", why.text[0] ? why.text : strerror(-r));
		dmaio_load_free(l);
	} else {
		dmaio_buf_sync_begin(d->buf, DMAIO_SYNC_WRITE);
	}
}

static void dest_free(int v, struct dest *d)
{
	if (d->buf && v != V_INTO)
		dmaio_buf_sync_end(d->buf, DMAIO_SYNC_WRITE);
	dmaio_buf_free(d->buf);
	free(d->anon);
	memset(d, 0, sizeof(*d));
}

static void usage(FILE *f)
{
	fprintf(f, "usage: " PROG " [--heap H] [--runs N] [--depth N] [--lib-depth N] [--variants LIST]\n"
		   "       [--no-verify] [--format text|csv|json] [--csv FILE] [--json FILE] FILE...\n"
		   "       " PROG " --version   (the version of " PROG " and of the libdmaio it runs with)\n"
		   "--heap: the buffers' provider (a dma-heap name, udmabuf, udmabuf-huge, drm, memfd);\n"
		   "default: the library's order.\n"
		   "--depth: the baselines' requests in flight and, unless --lib-depth, the load's queue depth.\n"
		   "--variants: a comma-separated subset of base, load, read, mmap, fresh, into (default all).\n"
		   "The target verdicts: bench/verdict.py FILE.csv (or FILE.json: with run-by-run ratios).\n");
}

static const char *paths_str(const uint64_t *pb, char *out, size_t len)
{
	uint64_t pt = 0;
	size_t l = 0;

	out[0] = '\0';
	for (uint32_t p = 0; p < DMAIO_PATH_SLOTS; p++)
		pt += pb[p];
	for (uint32_t p = 0; p < DMAIO_PATH_SLOTS && l < len; p++)
		if (pb[p] && dmaio_path_name(p))
			l += (size_t)snprintf(out + l, len - l, " %s %.1f%%", dmaio_path_name(p),
					      100.0 * (double)pb[p] / (double)pt);
	return out;
}

int main(int argc, char **argv)
{
	enum { O_CSV = 256, O_JSON, O_FORMAT, O_LIB_DEPTH, O_VARIANTS, O_VERSION };
	static const struct option lopts[] = {
		{ "heap", required_argument, 0, 'H' }, { "runs", required_argument, 0, 'r' },
		{ "depth", required_argument, 0, 'd' }, { "no-verify", no_argument, 0, 'n' },
		{ "csv", required_argument, 0, O_CSV }, { "json", required_argument, 0, O_JSON },
		{ "format", required_argument, 0, O_FORMAT }, { "help", no_argument, 0, 'h' },
		{ "lib-depth", required_argument, 0, O_LIB_DEPTH },
		{ "variants", required_argument, 0, O_VARIANTS },
		{ "version", no_argument, 0, O_VERSION },
		{ 0, 0, 0, 0 },
	};
	struct model_ctx c = { .heap = NULL, .depth = 32,
			       .ao = { .struct_size = sizeof(struct dmaio_alloc_opts) } };
	struct dmaio_reason why = { .struct_size = sizeof(why) };
	int runs = 3, ch, rc = 0, sec;
	bool do_verify = true, want[NVAR] = { true, true, true, true, true, true };
	const char *csv = NULL, *json = NULL;
	enum format fmt = FMT_TEXT;
	double mbps[NVAR][MAX_RUNS], cpu[NVAR][MAX_RUNS], rss[NVAR][MAX_RUNS], ms[NVAR][MAX_RUNS],
		resid[NVAR][MAX_RUNS];
	uint64_t path_bytes[NVAR][DMAIO_PATH_SLOTS] = { { 0 } };
	struct report rep;
	char *end, pbuf[256], prov[64] = "";

	report_init(&rep, PROG, argc, argv);
	while ((ch = getopt_long(argc, argv, "H:r:d:nh", lopts, NULL)) != -1) {
		switch (ch) {
		case 'H':
			c.heap = optarg;
			c.providers[0] = optarg; /* a list of one */
			c.ao.providers = c.providers;
			break;
		case O_VERSION: {
			uint32_t lv = dmaio_version();

			printf(PROG " %d.%d.%d (libdmaio %u.%u.%u)\n", DMAIO_VERSION_MAJOR,
			       DMAIO_VERSION_MINOR, DMAIO_VERSION_MICRO, lv >> 16, (lv >> 8) & 0xff,
			       lv & 0xff);
			return 0;
		}
		case 'r':
			runs = (int)strtol(optarg, &end, 10);
			if (*end)
				runs = 0;
			break;
		case 'd':
			c.depth = (unsigned)strtoul(optarg, &end, 10);
			if (*end || c.depth < 1 || c.depth > 4096) {
				fprintf(stderr, PROG ": --depth takes 1..4096\n");
				return 2;
			}
			break;
		case O_LIB_DEPTH:
			c.lib_depth = (unsigned)strtoul(optarg, &end, 10);
			if (*end || c.lib_depth < 1 || c.lib_depth > DMAIO_QUEUE_DEPTH_MAX) {
				fprintf(stderr, PROG ": --lib-depth takes 1..%u\n", DMAIO_QUEUE_DEPTH_MAX);
				return 2;
			}
			break;
		case O_VARIANTS: {
			char *list = strdup(optarg), *save = NULL;

			if (!list)
				die("out of memory");
			for (int v = 0; v < NVAR; v++)
				want[v] = false;
			for (char *t = strtok_r(list, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
				int v = 0;

				while (v < NVAR && strcmp(t, vshort[v]) && strcmp(t, vname[v]))
					v++;
				if (v == NVAR) {
					fprintf(stderr, PROG ": --variants: unknown variant '%s'\n", t);
					return 2;
				}
				want[v] = true;
			}
			free(list);
			if (!want[V_BASE]) {
				fprintf(stderr, PROG ": --variants: base is the reference of every ratio\n");
				return 2;
			}
			break;
		}
		case 'n': do_verify = false; break;
		case O_CSV: csv = optarg; break;
		case O_JSON: json = optarg; break;
		case O_FORMAT:
			fmt = !strcmp(optarg, "text") ? FMT_TEXT : !strcmp(optarg, "csv") ? FMT_CSV :
			      !strcmp(optarg, "json") ? FMT_JSON : (enum format)-1;
			if ((int)fmt < 0) {
				fprintf(stderr, PROG ": --format takes text, csv or json\n");
				return 2;
			}
			break;
		case 'h':
			usage(stdout);
			return 0;
		default:
			usage(stderr);
			return 2;
		}
	}
	if (runs < 1 || runs > MAX_RUNS || optind >= argc) {
		fprintf(stderr, PROG ": FILE... and 1 <= --runs <= %d\n", MAX_RUNS);
		return 2;
	}
	if (!c.lib_depth)
		c.lib_depth = c.depth;
	c.nfds = argc - optind;
	c.fds = xcalloc((size_t)c.nfds, sizeof(int));
	c.dfds = xcalloc((size_t)c.nfds, sizeof(int));
	c.lens = xcalloc((size_t)c.nfds, sizeof(uint64_t));
	for (int i = 0; i < c.nfds; i++) {
		c.fds[i] = open(argv[optind + i], O_RDONLY | O_CLOEXEC);
		c.dfds[i] = open(argv[optind + i], O_RDONLY | O_DIRECT | O_CLOEXEC);
		if (c.fds[i] < 0 || c.dfds[i] < 0)
			die("%s: %s", argv[optind + i], strerror(errno));
		c.lens[i] = (uint64_t)lseek(c.fds[i], 0, SEEK_END);
	}
	ch = dmaio_model_open(NULL, c.fds, (uint32_t)c.nfds, 0, &c.m, &why);
	if (ch < 0)
		die("model: %s", why.text[0] ? why.text : strerror(-ch));
	c.n = dmaio_model_tensor_count(c.m);
	c.ti = xcalloc((size_t)c.n + 1, sizeof(*c.ti));
	for (int i = 0; i < c.n; i++) {
		c.ti[i].struct_size = sizeof(c.ti[i]);
		dmaio_model_get_tensor(c.m, (uint32_t)i, &c.ti[i]);
		c.total += c.ti[i].nbytes;
	}
	plan_base(&c);
	/* the provider's name, for the rows */
	{
		struct dmaio_buf *pb = NULL;

		ch = heap_alloc(&c, 4096, &pb, &why);
		if (ch < 0)
			die("%s buffer: %s", c.heap ? c.heap : "default",
			    why.text[0] ? why.text : strerror(-ch));
		snprintf(prov, sizeof(prov), "%s", dmaio_buf_provider(pb));
		dmaio_buf_free(pb);
	}
	report_info(&rep, "%s", rep.cmdline);
	report_info(&rep, "model: %d tensors, %d files, %.1f MiB of tensors; heap %s (%s); depth %u (the load's %u); %d "
		    "runs; cold (fdatasync + POSIX_FADV_DONTNEED, residency checked) before each variant", c.n,
		    c.nfds, (double)c.total / 1048576, c.heap ? c.heap : "default", prov, c.depth, c.lib_depth, runs);
	report_cfg_num(&rep, "runs", "%d", runs);
	report_cfg_num(&rep, "lib_depth", "%u", c.lib_depth);
	report_cfg_num(&rep, "depth", "%u", c.depth);
	report_cfg_str(&rep, "heap", "%s", c.heap ? c.heap : "default");
	report_cfg_num(&rep, "tensors", "%d", c.n);
	report_cfg_num(&rep, "files", "%d", c.nfds);
	/* Every variant starts after the one before it freed its destination (memory of the same
	 * size the kernel had just had back); the first variant gets the same from this warm-up. */
	{
		size_t wl = (size_t)widened_total(&c);
		void *w = mmap(NULL, wl, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

		if (w != MAP_FAILED) {
			uint64_t t0 = now_ns();

			memset(w, 0, wl);
			t0 = now_ns() - t0;
			munmap(w, wl);
			/* what a first touch from user space costs on this machine (the destinations
			 * of base, read, mmap+memcpy and lib:load-into pay it before their clocks
			 * start; new memory that the kernel pins is faulted in by the kernel) */
			report_info(&rep, "warm-up: memset of %.0f MiB of new anonymous memory: %.2f s (%.2f s/GiB)",
				    (double)wl / 1048576, (double)t0 / 1e9,
				    (double)t0 / 1e9 / ((double)wl / (double)GIB));
			report_cfg_num(&rep, "first_touch_s_per_gib", "%.3f", (double)t0 / 1e9 / ((double)wl / (double)GIB));
		}
	}
	if (fmt == FMT_TEXT)
		output_text_info(stdout, &rep);
	for (int run = 0; run < runs; run++) {
		for (int k = 0; k < NVAR; k++) {
			int v = (k + run) % NVAR; /* rotate the order run by run */
			struct dmaio_load *l = NULL;
			struct dmaio_load_stats st = { .struct_size = sizeof(struct dmaio_load_stats) };
			struct dest d;
			long rss0;
			double c0;
			uint64_t t0, t1;
			int r = 0;

			if (!want[v])
				continue;
			dest_make(&c, v, &d);
			resid[v][run] = make_cold(c.fds, c.lens, c.nfds, &c.resid_how);
			reset_hwm();
			rss0 = proc_status_kib("VmRSS");
			c0 = cpu_now();
			t0 = now_ns();
			switch (v) {
			case V_BASE: r = run_base(&c, d.anon); break;
			case V_LOAD: r = run_lib(&c, NULL, &l, &st, &why); break;
			case V_INTO: r = run_lib(&c, &d.buf, &l, &st, &why); break;
			case V_READ: r = run_read(&c, d.map); break;
			case V_MMAP: r = run_mmap(&c, d.map); break;
			case V_FRESH: {
				size_t wl = (size_t)widened_total(&c);
				void *fresh = mmap(NULL, wl, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

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
			cpu[v][run] = (cpu_now() - c0) / ((double)c.total / (double)GIB);
			rss[v][run] = (double)(proc_status_kib("VmHWM") - rss0) / 1024.0;
			mbps[v][run] = (double)c.total / ((double)(t1 - t0) / 1e9) / 1e6;
			ms[v][run] = (double)(t1 - t0) / 1e6;
			if (r < 0)
				die("%s: %s", vname[v],
				    (v == V_LOAD || v == V_INTO) && why.text[0] ? why.text : strerror(-r));
			if (v == V_LOAD || v == V_INTO) {
				for (uint32_t p = 0; p < DMAIO_PATH_SLOTS; p++)
					path_bytes[v][p] += st.path_bytes[p];
				if (do_verify && run == 0) {
					int bad = verify_lib(&c, l);

					if (bad) {
						fprintf(stderr, PROG ": %s: %d tensors differ from pread()\n", vname[v], bad);
						rc = 1;
					}
				}
				dmaio_load_free(l);
			}
			dest_free(v, &d);
		}
	}

	sec = report_section(&rep, "model");
	for (int v = 0; v < NVAR; v++) {
		struct row *w;
		double base = median(mbps[V_BASE], runs);

		if (!want[v])
			continue;
		w = report_row(&rep, sec, "model");

		row_str(w, COL_PROVIDER, "%s", v == V_BASE || v == V_FRESH ? "anonymous" : prov);
		row_u64(w, COL_SIZE, c.total);
		row_str(w, COL_DIR, "read");
		row_str(w, COL_MODE, "cold");
		row_str(w, COL_METHOD, "%s", vname[v]);
		row_runs(w, runs, mbps[v], cpu[v], ms[v]);
		row_num(w, COL_X_DIRECT, base > 0 ? w->mbps[0] / base : NAN);
		row_u64(w, COL_COUNT, (uint64_t)c.n);
		row_residency(w, runs, resid[v], c.resid_how);
		w->extra = median(rss[v], runs);
		w->depth = v == V_READ || v == V_MMAP ? 1 : v == V_LOAD || v == V_INTO ? c.lib_depth : c.depth;
		if (v == V_LOAD || v == V_INTO) {
			row_paths(w, path_bytes[v], 0, 0);
			row_str(w, COL_PATH, "%s", row_main_path(w) ? row_main_path(w) : "-");
		} else {
			row_str(w, COL_PATH, "%s", v == V_READ ? "pread" : v == V_MMAP ? "mmap+memcpy" : "uring O_DIRECT");
		}
	}
	if (want[V_LOAD])
		report_trailer(&rep, "lib:load paths:%s", paths_str(path_bytes[V_LOAD], pbuf, sizeof(pbuf)));
	if (want[V_INTO])
		report_trailer(&rep, "lib:load-into paths:%s", paths_str(path_bytes[V_INTO], pbuf, sizeof(pbuf)));
	report_trailer(&rep, "target verdicts (lib:load, lib:load-into >= 0.90x base): bench/verdict.py %s",
		       csv ? csv : json ? json : "FILE (the --csv or --json file of this run)");
	if (fmt == FMT_TEXT)
		output_text(stdout, &rep);
	else if ((fmt == FMT_CSV ? output_csv(stdout, &rep) : output_json(stdout, &rep)) < 0)
		rc = 1;
	if (csv && output_to_file(csv, FMT_CSV, &rep) < 0) {
		fprintf(stderr, PROG ": cannot write %s: %s\n", csv, strerror(errno));
		rc = 1;
	}
	if (json && output_to_file(json, FMT_JSON, &rep) < 0) {
		fprintf(stderr, PROG ": cannot write %s: %s\n", json, strerror(errno));
		rc = 1;
	}
	dmaio_model_close(c.m);
	report_free(&rep);
	free(c.reqs);
	free(c.ti);
	free(c.fds);
	free(c.dfds);
	free(c.lens);
	return rc;
}
