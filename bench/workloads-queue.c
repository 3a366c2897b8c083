// SPDX-License-Identifier: MIT
/*
 * dmaio-bench workloads of the asynchronous API (--tests ranges,files,frames), each measured
 * against a baseline written here, the variants interleaved run by run, medians reported:
 *
 *  ranges  COUNT random ranges of SIZE of one cold file, in random order, into one buffer
 *  files   N whole cold files of SIZE into one buffer, each file at its own offset
 *          variants: base:uring-direct (O_DIRECT io_uring into anonymous memory, --depth requests
 *          in flight), lib:sync (dmaio_read_file per range), lib:file (dmaio_file_read per range
 *          of a registered file), lib:queue (dmaio_submit / dmaio_reap, dmaio_queue_new(--depth))
 *  frames  fixed-size frames arriving at a fixed rate into a ring of K buffers, written to one
 *          file at sequential offsets: base:write (write() from anonymous memory), lib:sync
 *          (dmaio_write_file), lib:file (dmaio_file_write), lib:queue (dmaio_submit per frame;
 *          the capture loop never blocks: it waits for the next frame in ppoll() on
 *          dmaio_queue_fd() and reaps with min 0, timeout 0). A frame is dropped when the ring
 *          wraps onto a buffer that is still in flight (not yet saved).
 */
#include "bench.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <liburing.h>
#include <math.h>
#include <poll.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/statfs.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

struct wl_opts wlo = {
	.nfiles = 64,
	.file_size = 16 * MIB,
	.frame_size = 1920 * 1080 * 3 / 2, /* NV12 */
	.fps = 60,
	.frames = 300,
	.ring = 4,
	.depth = 32,
	.seed = 1,
};

/* ------------------------------------------------------------------------------------------- */
/* state */

enum vkind { V_BASE, V_SYNC, V_FILE, V_QUEUE };
#define WL_MAX_VARS (1 + 3 * MAX_LBUFS)
#define WL_MAX_SETS (WL_MAX_RANGESETS + 2)
#define REAP_TIMEOUT_MS 60000 /* a queue that completes nothing for a minute is broken */

struct var {
	char name[64];
	enum vkind kind;
	int h; /* lib variants: index of the buffer (one per --heap) */
};

struct res {
	bool ok;
	char note[256];
	int n;
	double mbps[MAX_RUNS];
	double cpu[MAX_RUNS];      /* CPU s per GiB */
	double ms[MAX_RUNS];       /* wall time of the variant */
	uint64_t path_bytes[DMAIO_PATH_SLOTS];
	uint64_t fallbacks, unaligned;
	int err;
	/* frames */
	double cpu_frame[MAX_RUNS]; /* CPU ms per frame written */
	double lat[4][MAX_RUNS];    /* p50, p90, p99, max of the run, ms */
	double libns[MAX_RUNS];     /* queue: p50 of dmaio_done.ns of the run, ms */
	uint64_t frames, written, dropped; /* totals over the runs */
	uint64_t wakeups, empty_reaps;     /* queue: ppoll() saw POLLIN; dmaio_reap() then found nothing */
};

enum stype { S_RANGES, S_FILES, S_FRAMES };

struct rng {
	uint32_t fi;       /* index into the set's files */
	uint64_t file_off;
	uint64_t mem_off;  /* in the buffer */
	uint64_t len;
	uint64_t pat;      /* pattern offset of the range's first byte */
};

struct breq {
	int fd;
	uint64_t off, mem_off;
	uint32_t len;
};

struct tfile {
	char *path;
	int fd;                 /* O_RDWR, page cache */
	int dfd;                /* O_DIRECT, for the baseline (-1 if refused) */
	struct dmaio_file *df;  /* registered */
	uint64_t size;
};

struct set {
	enum stype type;
	uint64_t count, size;
	struct tfile *files;    /* the set's files */
	unsigned nfiles;
	struct rng *r;          /* the ranges, in the order they are moved */
	size_t nr;
	struct breq *b;         /* the baseline's requests (ranges split at --chunk and 1 GiB) */
	size_t nb;
	uint64_t bytes;
	struct res res[WL_MAX_VARS];
};

static struct var vars[WL_MAX_VARS];
static int nvars;
static struct set sets[WL_MAX_SETS];
static int nsets;

static struct tfile rfile = { .fd = -1, .dfd = -1 };  /* ranges */
static struct tfile *mfiles;                         /* files */
static struct tfile ffile = { .fd = -1, .dfd = -1 };  /* frames */

/* test files to remove on exit, die() and signals: paths stored before the files are created */
static char *unlink_paths[4096 + 2];
static volatile sig_atomic_t nunlink;

/* buffers of the read sets: anonymous memory (baseline) and one library buffer per --heap */
struct lbuf2 {
	struct dmaio_buf *b;
	void *map;
};
static char *anon;
static uint64_t rbuf_size;
static struct lbuf2 lb[MAX_LBUFS];
static int nlb;
/* frames: a ring of K slots, one allocation each kind */
static char *fanon;
static struct lbuf2 flb[MAX_LBUFS];
static uint64_t fring_size;

/* one queue for the read sets, one of its own for the frame writer (as an application would
 * have; and the frames do not depend on what the read sets left in a queue) */
struct wlq {
	struct dmaio_queue *q;
	bool broken;
	char note[160];
};
static struct wlq rq, fq;
static struct io_uring ur;
static bool ur_ok, ur_fixed;
static char ur_note[256];
static double open_us[4096 + 1];   /* dmaio_file_open times */
static int nopen;

static bool have_reads(void)
{
	return wlo.test_ranges || wlo.test_files;
}

bool wl_enabled(void)
{
	return wlo.test_ranges || wlo.test_files || wlo.test_frames;
}

/* ------------------------------------------------------------------------------------------- */
/* options */

/* "COUNTxSIZE" */
static int parse_nx(const char *s, uint64_t *n, uint64_t *size)
{
	char *end;
	unsigned long long v;

	errno = 0;
	v = strtoull(s, &end, 10);
	if (errno || end == s || *end != 'x' || v == 0)
		return -EINVAL;
	*n = v;
	return parse_size(end + 1, size);
}

static int parse_uint(const char *s, unsigned long lo, unsigned long hi, unsigned long *out)
{
	char *end;
	unsigned long v;

	errno = 0;
	v = strtoul(s, &end, 10);
	if (errno || end == s || *end || v < lo || v > hi)
		return -EINVAL;
	*out = v;
	return 0;
}

int wl_option(int id, char *arg)
{
	char *tok, *save = NULL;
	unsigned long v;
	uint64_t n, size;

	switch (id) {
	case WL_OPT_RANGES:
		wlo.nsets = 0;
		wlo.sets_given = true;
		for (tok = strtok_r(arg, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
			if (wlo.nsets == WL_MAX_RANGESETS || parse_nx(tok, &n, &size) || size % 4096 ||
			    n > (1u << 24)) {
				fprintf(stderr, PROG ": --ranges takes COUNTxSIZE[,...] (e.g. 4096x64K,512x1M; SIZE a "
					"multiple of 4K, at most %d sets)\n", WL_MAX_RANGESETS);
				return -EINVAL;
			}
			wlo.set_count[wlo.nsets] = n;
			wlo.set_size[wlo.nsets] = size;
			wlo.nsets++;
		}
		if (!wlo.nsets) {
			fprintf(stderr, PROG ": --ranges: no COUNTxSIZE given\n");
			return -EINVAL;
		}
		return 0;
	case WL_OPT_RANGES_FILE:
		if (parse_size(arg, &wlo.ranges_file) || wlo.ranges_file % 4096) {
			fprintf(stderr, PROG ": --ranges-file takes a size, a multiple of 4K\n");
			return -EINVAL;
		}
		return 0;
	case WL_OPT_FILES:
		if (parse_nx(arg, &n, &size) || n > 4096 || size % 4096) {
			fprintf(stderr, PROG ": --files takes NxSIZE (N 1..4096, SIZE a multiple of 4K)\n");
			return -EINVAL;
		}
		wlo.nfiles = (unsigned)n;
		wlo.file_size = size;
		wlo.files_given = true;
		return 0;
	case WL_OPT_FRAME_SIZE:
		/* WxH: an NV12 frame (W*H*3/2 bytes); else a size in bytes */
		if (strchr(arg, 'x')) {
			uint64_t w, h;
			char *end;

			errno = 0;
			w = strtoull(arg, &end, 10);
			if (errno || end == arg || *end != 'x' || parse_uint(end + 1, 1, 65536, &v) || !w || w > 65536) {
				fprintf(stderr, PROG ": --frame-size takes WxH (NV12) or a size in bytes\n");
				return -EINVAL;
			}
			h = v;
			wlo.frame_size = w * h * 3 / 2;
		} else if (parse_size(arg, &wlo.frame_size) || wlo.frame_size > GIB) {
			fprintf(stderr, PROG ": --frame-size takes WxH (NV12) or a size up to 1G\n");
			return -EINVAL;
		}
		if (!wlo.frame_size) {
			fprintf(stderr, PROG ": --frame-size: empty frame\n");
			return -EINVAL;
		}
		return 0;
	case WL_OPT_FPS:
		if (parse_uint(arg, 1, 10000, &v)) {
			fprintf(stderr, PROG ": --fps takes 1..10000\n");
			return -EINVAL;
		}
		wlo.fps = (unsigned)v;
		return 0;
	case WL_OPT_FRAMES:
		if (parse_uint(arg, 1, 10000000, &v)) {
			fprintf(stderr, PROG ": --frames takes 1..10000000\n");
			return -EINVAL;
		}
		wlo.frames = (unsigned)v;
		wlo.frames_given = true;
		return 0;
	case WL_OPT_RING:
		if (parse_uint(arg, 1, 64, &v)) {
			fprintf(stderr, PROG ": --ring takes 1..64\n");
			return -EINVAL;
		}
		wlo.ring = (unsigned)v;
		return 0;
	case WL_OPT_DEPTH:
		if (parse_uint(arg, 1, DMAIO_QUEUE_DEPTH_MAX, &v)) {
			fprintf(stderr, PROG ": --depth takes 1..%u\n", DMAIO_QUEUE_DEPTH_MAX);
			return -EINVAL;
		}
		wlo.depth = (unsigned)v;
		return 0;
	case WL_OPT_SEED:
		if (parse_uint(arg, 0, ULONG_MAX, &v)) {
			fprintf(stderr, PROG ": --seed takes a number\n");
			return -EINVAL;
		}
		wlo.seed = v;
		return 0;
	case WL_OPT_BASE_MEM:
		if (strcmp(arg, "anon") && strcmp(arg, "memfd")) {
			fprintf(stderr, PROG ": --base-mem takes anon or memfd\n");
			return -EINVAL;
		}
		wlo.base_memfd = !strcmp(arg, "memfd");
		return 0;
	}
	return -EINVAL;
}

void wl_usage(FILE *out)
{
	fprintf(out,
		"\n"
		"Queue workloads (--tests ranges,files,frames; run only when named): the baseline, lib:sync\n"
		"(one dmaio_read/write_file per range), lib:file (dmaio_file_read/write on a registered file)\n"
		"and lib:queue (dmaio_submit/dmaio_reap), interleaved, cold before every read variant:\n"
		"  --ranges LIST     ranges: COUNTxSIZE[,...] random ranges of one file, random order\n"
		"                    (default 4096x64K,512x1M; --quick 1024x64K,128x1M)\n"
		"  --ranges-file SIZE  its file (default twice the largest COUNT x SIZE)\n"
		"  --files NxSIZE    files: N whole files into one buffer (default 64x16M; --quick 16x16M)\n"
		"  --depth N         in flight: the O_DIRECT io_uring baseline's requests (of at most --chunk)\n"
		"                    and dmaio_queue_new()'s depth (default 32)\n"
		"  --frame-size S    frames: bytes per frame, or WxH for NV12 (default 1920x1080 = 3110400)\n"
		"  --fps N           frame rate (default 60)\n"
		"  --frames N        frames per variant and run (default 300; --quick 120)\n"
		"  --ring K          capture buffers (default 4): a frame whose buffer is still in flight\n"
		"                    when the ring wraps is dropped\n"
		"  --seed N          of the random ranges (default 1)\n"
		"  --base-mem M      the baseline's memory: anon (default; may get THP) or memfd (shmem, the\n"
		"                    memory behind a udmabuf or memfd buffer)\n"
		"CSV rows: ranges/files: size_bytes = range/file size, x_uring_direct = x the baseline, ms_* =\n"
		"wall ms of the variant, count = ranges/files. frames: mode = <fps>fps, x_buffered = x base:write\n"
		"MB/s, ms_* = CPU ms per frame, count = frames dropped (all runs); frames-latency: mode =\n"
		"p50/p90/p99/max, ms_* = that percentile of each run (median, min, max over runs; submit to\n"
		"completion), count = frames written (all runs).\n");
}

/* ------------------------------------------------------------------------------------------- */
/* helpers */

static uint64_t splitmix(uint64_t *s)
{
	uint64_t z = (*s += 0x9e3779b97f4a7c15ull);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

static void *xcalloc(size_t n, size_t size)
{
	void *p = calloc(n ? n : 1, size);

	if (!p)
		die("out of memory");
	return p;
}

static char *anon_alloc(uint64_t size)
{
	void *p;

	if (wlo.base_memfd) {
		int fd = memfd_create("dmaio-bench-base", MFD_CLOEXEC);

		if (fd < 0 || ftruncate(fd, (off_t)size) || fallocate(fd, 0, 0, (off_t)size))
			die("memfd of %" PRIu64 " MiB: %s", size / MIB, strerror(errno));
		p = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
		close(fd);
	} else {
		p = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	}
	if (p == MAP_FAILED)
		die("mmap %" PRIu64 " MiB of anonymous memory: %s", size / MIB, strerror(errno));
	memset(p, 0, size);
	return p;
}

static const char *vname(const struct var *v, enum stype t)
{
	if (v->kind == V_BASE)
		return t == S_FRAMES ? "base:write" : "base:uring-direct";
	return v->name;
}

static void account(struct res *r, int32_t path, uint64_t done, uint32_t fallbacks, uint64_t unaligned)
{
	if (!r)
		return;
	if (path >= 0 && path < DMAIO_PATH_SLOTS)
		r->path_bytes[path] += done;
	r->fallbacks += fallbacks;
	r->unaligned += unaligned;
}

static const char *main_path(const struct var *v, const struct res *r, enum stype t)
{
	uint64_t best = 0;
	int p, bp = -1;

	if (v->kind == V_BASE)
		return t == S_FRAMES ? "write()" : "uring O_DIRECT";
	for (p = 0; p < DMAIO_PATH_SLOTS; p++)
		if (r->path_bytes[p] > best) {
			best = r->path_bytes[p];
			bp = p;
		}
	return bp >= 0 && dmaio_path_name(bp) ? dmaio_path_name(bp) : "-";
}

static void add_unlink(char *path)
{
	if (nunlink < (sig_atomic_t)(sizeof(unlink_paths) / sizeof(unlink_paths[0]))) {
		unlink_paths[nunlink] = path;
		nunlink = nunlink + 1;
	}
}

void wl_unlink_files(void)
{
	sig_atomic_t i, n = nunlink;

	if (o.keep)
		return;
	for (i = 0; i < n; i++)
		if (unlink_paths[i])
			unlink(unlink_paths[i]);
}

/* create a test file of size bytes holding the pattern of [pat, pat + size) */
static void create_file(struct tfile *f, const char *tag, int idx, uint64_t size, uint64_t pat)
{
	size_t bl = 8 * MIB;
	char *tmp;
	uint64_t off;

	if ((idx >= 0 ? asprintf(&f->path, "%s/dmaio-bench-%s.%d.%d.tmp", o.dir, tag, (int)getpid(), idx) :
			asprintf(&f->path, "%s/dmaio-bench-%s.%d.tmp", o.dir, tag, (int)getpid())) < 0)
		die("out of memory");
	add_unlink(f->path);
	f->fd = open(f->path, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
	if (f->fd < 0)
		die("create %s: %s", f->path, strerror(errno));
	f->dfd = -1;
	f->size = size;
	if (!size)
		return;
	tmp = malloc(bl);
	if (!tmp)
		die("out of memory");
	for (off = 0; off < size; off += bl) {
		size_t n = (size_t)(size - off < bl ? size - off : bl);

		fill_pattern(tmp, pat + off, n);
		if (full_pwrite(f->fd, tmp, n, off) != (ssize_t)n)
			die("write %s: %s", f->path, strerror(errno));
	}
	free(tmp);
	if (fsync(f->fd) < 0)
		die("fsync %s: %s", f->path, strerror(errno));
}

static void open_direct_and_register(struct tfile *f)
{
	uint64_t t0;
	int ret;

	f->dfd = open(f->path, O_RDONLY | O_DIRECT | O_CLOEXEC);
	if (f->dfd < 0 && !ur_note[0])
		snprintf(ur_note, sizeof(ur_note), "O_DIRECT open of %.120s failed (%s): use --dir on a block filesystem",
			 f->path, strerror(errno));
	t0 = now_ns();
	ret = dmaio_file_open(NULL, f->fd, 0, &f->df);
	if (ret == 0 && nopen < (int)(sizeof(open_us) / sizeof(open_us[0])))
		open_us[nopen++] = (double)(now_ns() - t0) / 1e3;
	if (ret < 0) {
		f->df = NULL;
		note("dmaio_file_open(%s): %s (%s): lib:file and lib:queue skipped", f->path, strerror(-ret), errname(ret));
	}
}

static void close_tfile(struct tfile *f)
{
	if (f->df)
		dmaio_file_close(f->df);
	f->df = NULL;
	if (f->dfd >= 0)
		close(f->dfd);
	if (f->fd >= 0)
		close(f->fd);
	f->fd = f->dfd = -1;
}

static void sync_begin(struct dmaio_buf *b, unsigned dir)
{
	if (b)
		dmaio_sync_begin(b, dir);
}

static void sync_end(struct dmaio_buf *b, unsigned dir)
{
	if (b)
		dmaio_sync_end(b, dir);
}

/* the memory of a variant's reads, and the library buffer that owns it (NULL: anonymous) */
static char *var_mem(const struct var *v, struct dmaio_buf **owner, bool frames)
{
	if (v->kind == V_BASE) {
		*owner = NULL;
		return frames ? fanon : anon;
	}
	*owner = frames ? flb[v->h].b : lb[v->h].b;
	return frames ? flb[v->h].map : lb[v->h].map;
}

static int cmp_dbl(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

/* nearest rank of a sorted array */
static double pct(const double *sorted, size_t n, double p)
{
	size_t k;

	if (!n)
		return NAN;
	k = (size_t)ceil(p * (double)n);
	if (k < 1)
		k = 1;
	if (k > n)
		k = n;
	return sorted[k - 1];
}

/* ------------------------------------------------------------------------------------------- */
/* the O_DIRECT io_uring baseline: reqs with --depth in flight, short reads reissued */

static void prep_req(struct io_uring_sqe *sqe, const struct breq *q, char *mem)
{
	if (ur_fixed)
		io_uring_prep_read_fixed(sqe, q->fd, mem + q->mem_off, q->len, q->off, (int)(q->mem_off / URING_PIECE));
	else
		io_uring_prep_read(sqe, q->fd, mem + q->mem_off, q->len, q->off);
}

static int uring_reads(char *mem, const struct breq *reqs, size_t n)
{
	unsigned depth = wlo.depth, nfree = depth, inflight = 0, i;
	struct breq *sl = xcalloc(depth, sizeof(*sl));
	unsigned *freel = xcalloc(depth, sizeof(*freel));
	size_t next = 0;
	int ret = 0;

	for (i = 0; i < depth; i++)
		freel[i] = i;
	while (next < n || inflight) {
		struct io_uring_cqe *cqe;
		bool queued = false;

		while (nfree && next < n) {
			struct io_uring_sqe *sqe = io_uring_get_sqe(&ur);
			unsigned s;

			if (!sqe)
				break;
			s = freel[--nfree];
			sl[s] = reqs[next++];
			prep_req(sqe, &sl[s], mem);
			io_uring_sqe_set_data64(sqe, s);
			inflight++;
			queued = true;
		}
		if (queued) {
			ret = io_uring_submit(&ur);
			if (ret < 0)
				goto out;
		}
		ret = io_uring_wait_cqe(&ur, &cqe);
		if (ret < 0)
			goto out;
		queued = false;
		do {
			unsigned s = (unsigned)io_uring_cqe_get_data64(cqe);
			int r = cqe->res;

			io_uring_cqe_seen(&ur, cqe);
			inflight--;
			if (r == -EAGAIN || r == -EINTR || (r > 0 && (uint32_t)r < sl[s].len)) {
				struct io_uring_sqe *sqe;
				uint32_t adv = r > 0 ? (uint32_t)r : 0;

				sl[s].off += adv;
				sl[s].mem_off += adv;
				sl[s].len -= adv;
				sqe = io_uring_get_sqe(&ur);
				if (!sqe) {
					io_uring_submit(&ur);
					sqe = io_uring_get_sqe(&ur);
				}
				if (!sqe) {
					ret = -EBUSY;
					goto out;
				}
				prep_req(sqe, &sl[s], mem);
				io_uring_sqe_set_data64(sqe, s);
				inflight++;
				queued = true;
			} else if (r < 0) {
				ret = r;
				goto out;
			} else if (r == 0) {
				ret = -ENODATA;
				goto out;
			} else {
				freel[nfree++] = s;
			}
		} while (io_uring_peek_cqe(&ur, &cqe) == 0);
		if (queued) {
			ret = io_uring_submit(&ur);
			if (ret < 0)
				goto out;
		}
		ret = 0;
	}
out:
	while (inflight) {
		struct io_uring_cqe *cqe;

		if (io_uring_wait_cqe(&ur, &cqe) < 0)
			break;
		io_uring_cqe_seen(&ur, cqe);
		inflight--;
	}
	free(sl);
	free(freel);
	return ret;
}

static int register_anon(void)
{
	unsigned n = (unsigned)((rbuf_size + URING_PIECE - 1) / URING_PIECE), j;
	struct iovec *iov = xcalloc(n, sizeof(*iov));
	int ret;

	for (j = 0; j < n; j++) {
		uint64_t off = (uint64_t)j * URING_PIECE;

		iov[j].iov_base = anon + off;
		iov[j].iov_len = (size_t)(rbuf_size - off < URING_PIECE ? rbuf_size - off : URING_PIECE);
	}
	ret = io_uring_register_buffers(&ur, iov, n);
	free(iov);
	return ret;
}

/* ------------------------------------------------------------------------------------------- */
/* the read variants */

/* the queue: submit as the queue accepts, reap what completed, until every range is back */
static int queue_reads(struct dmaio_buf *b, struct set *st, size_t n, struct res *rs)
{
	struct dmaio_io ios[64];
	struct dmaio_done dn[64];
	size_t next = 0, completed = 0;
	int ret = 0, got, i;

	while (completed < next || next < n) {
		if (next < n && !ret) {
			unsigned k = (unsigned)(n - next < 64 ? n - next : 64);
			int s;

			memset(ios, 0, sizeof(ios[0]) * k);
			for (i = 0; i < (int)k; i++) {
				const struct rng *r = &st->r[next + (size_t)i];

				ios[i].op = DMAIO_OP_READ;
				ios[i].buf = b;
				ios[i].buf_off = r->mem_off;
				ios[i].file = st->files[r->fi].df;
				ios[i].file_off = (int64_t)r->file_off;
				ios[i].len = r->len;
				ios[i].user_data = next + (size_t)i;
			}
			s = dmaio_submit(rq.q, ios, k);
			if (s > 0)
				next += (size_t)s;
			else if (s < 0 && s != -EAGAIN)
				ret = s;
			if (s == (int)k && next < n)
				continue; /* room left, maybe: fill the queue before reaping */
		}
		if (completed == next) {
			/* done, failed, or refused with nothing in flight (that would be a library bug) */
			if (!ret && next < n)
				ret = -EAGAIN;
			break;
		}
		got = dmaio_reap(rq.q, dn, 64, 1, REAP_TIMEOUT_MS);
		if (got < 0) {
			if (!ret)
				ret = got;
			rq.broken = true;
			snprintf(rq.note, sizeof(rq.note), "dmaio_reap failed (%s) with %zu ranges in flight",
				 errname(got), next - completed);
			return ret;
		}
		for (i = 0; i < got; i++) {
			const struct rng *r;

			if (dn[i].user_data >= next) {
				/* not a range of this run: the queue returned something it was not given */
				if (!ret)
					ret = -EPROTO;
				note("lib:queue: a completion with user_data %" PRIu64 " that was never submitted",
				     dn[i].user_data);
				completed++;
				continue;
			}
			r = &st->r[dn[i].user_data];
			completed++;
			account(rs, dn[i].path, dn[i].done, dn[i].fallbacks, dn[i].unaligned);
			if (dn[i].res < 0 && !ret)
				ret = (int)dn[i].res;
			else if (dn[i].res >= 0 && (uint64_t)dn[i].res != r->len && !ret)
				ret = -ENODATA;
		}
		if (ret && completed < next)
			dmaio_cancel(rq.q, 0, DMAIO_CANCEL_ALL);
	}
	return ret;
}

/* move the first n ranges of the set (all when n is 0) with variant v */
static int run_read(const struct var *v, struct set *st, size_t n, struct res *rs)
{
	size_t i;

	if (!n || n > st->nr)
		n = st->nr;
	switch (v->kind) {
	case V_BASE:
		return uring_reads(anon, st->b, n == st->nr ? st->nb : (n < st->nb ? n : st->nb));
	case V_SYNC:
	case V_FILE:
		for (i = 0; i < n; i++) {
			const struct rng *r = &st->r[i];
			struct dmaio_xfer x = { 0 };
			ssize_t got;

			if (v->kind == V_SYNC)
				got = dmaio_read_file_ex(lb[v->h].b, r->mem_off, st->files[r->fi].fd, (off_t)r->file_off,
							 r->len, 0, &x);
			else
				got = dmaio_file_read(st->files[r->fi].df, (off_t)r->file_off, lb[v->h].b, r->mem_off,
						      r->len, 0, &x);
			account(rs, x.path, x.done, x.fallbacks, x.unaligned);
			if (got < 0)
				return (int)got;
			if ((uint64_t)got != r->len)
				return -ENODATA;
		}
		return 0;
	case V_QUEUE:
		return queue_reads(lb[v->h].b, st, n, rs);
	}
	return -EINVAL;
}

static bool var_can_run(const struct var *v, const struct set *st)
{
	unsigned i;

	if (v->kind == V_BASE) {
		if (st->type == S_FRAMES)
			return true;
		if (!ur_ok)
			return false;
		for (i = 0; i < st->nfiles; i++)
			if (st->files[i].dfd < 0)
				return false;
		return true;
	}
	if (v->kind == V_FILE || v->kind == V_QUEUE)
		for (i = 0; i < st->nfiles; i++)
			if (!st->files[i].df)
				return false;
	if (v->kind == V_QUEUE) {
		const struct wlq *wq = st->type == S_FRAMES ? &fq : &rq;

		if (!wq->q || wq->broken)
			return false;
	}
	return true;
}

static void cold_set(const struct set *st)
{
	int fds[4096 + 1];
	uint64_t lens[4096 + 1];
	unsigned i;

	for (i = 0; i < st->nfiles; i++) {
		fds[i] = st->files[i].fd;
		lens[i] = st->files[i].size;
	}
	make_cold_fds(fds, lens, (int)st->nfiles);
}

/* one pass with the bytes checked: poison, move, compare with the file's pattern */
static void verify_read(const struct var *v, struct set *st)
{
	struct res *rs = &st->res[v - vars];
	struct dmaio_buf *owner;
	char *mem = var_mem(v, &owner, false);
	uint64_t span = st->count * st->size;
	size_t i;
	int ret;

	if (mem) {
		sync_begin(owner, DMAIO_SYNC_WRITE);
		memset(mem, 0xa5, span);
		sync_end(owner, DMAIO_SYNC_WRITE);
	}
	ret = run_read(v, st, 0, NULL);
	if (ret < 0) {
		rs->ok = false;
		snprintf(rs->note, sizeof(rs->note), "failed: %s (%s)", strerror(-ret), errname(ret));
		fprintf(stderr, PROG ": %s %s: %s\n", st->type == S_RANGES ? "ranges" : "files", vname(v, st->type),
			rs->note);
		return;
	}
	if (!mem) {
		note("%s: the buffer cannot be mapped: reads not verified", vname(v, st->type));
		return;
	}
	sync_begin(owner, DMAIO_SYNC_READ);
	for (i = 0; i < st->nr; i++) {
		const struct rng *r = &st->r[i];
		int64_t bad = check_pattern(mem + r->mem_off, r->pat, r->len);

		if (bad >= 0) {
			rs->ok = false;
			snprintf(rs->note, sizeof(rs->note), "verification failed: range %zu (file %u offset %" PRIu64
				 "): wrong bytes at pattern offset %" PRId64, i, r->fi, r->file_off, bad);
			fprintf(stderr, PROG ": %s %s: %s\n", st->type == S_RANGES ? "ranges" : "files",
				vname(v, st->type), rs->note);
			break;
		}
	}
	sync_end(owner, DMAIO_SYNC_READ);
}

/* fill mem with bytes of the test files (a kernel copy: the first one into new memory is slow on
 * this host, see prime_buffers() in dmaio-bench.c) */
static void prime_mem(void *mem, uint64_t len)
{
	uint64_t done = 0;
	unsigned i;

	if (rfile.fd >= 0 && done < len) {
		size_t n = (size_t)(rfile.size < len ? rfile.size : len);

		full_pread(rfile.fd, mem, n, 0);
		done += n;
	}
	for (i = 0; mfiles && i < wlo.nfiles && done < len; i++) {
		size_t n = (size_t)(mfiles[i].size < len - done ? mfiles[i].size : len - done);

		full_pread(mfiles[i].fd, (char *)mem + done, n, 0);
		done += n;
	}
}

/* New buffers for the read sets (before each run unless --same-buffers; see fresh_buffers() in
 * dmaio-bench.c): allocated before the old ones are freed, the order alternating; primed and
 * warmed up (registration with the rings) outside the timing. */
static void alloc_read_bufs(int run)
{
	struct lbuf2 nb[MAX_LBUFS] = { { 0 } };
	char *na = NULL;
	uint64_t avail = mem_available();
	int i, s, step;

	if (anon && avail && avail < 3 * (uint64_t)(1 + nlb) * rbuf_size) {
		/* short of memory for both sets at once: free first */
		if (ur_fixed)
			io_uring_unregister_buffers(&ur);
		munmap(anon, rbuf_size);
		anon = NULL;
		for (i = 0; i < nlb; i++) {
			dmaio_free(lb[i].b);
			lb[i].b = NULL;
			lb[i].map = NULL;
		}
	}
	for (step = 0; step < 2; step++) {
		if ((step + run) % 2 == 0) {
			na = anon_alloc(rbuf_size);
		} else {
			for (i = 0; i < nlb; i++) {
				int ret = alloc_dbuf(i, (size_t)rbuf_size, &nb[i].b, &nb[i].map);

				if (ret < 0)
					die("allocate %" PRIu64 " MiB from %s: %s", rbuf_size / MIB, heap_desc(i), strerror(-ret));
				if (!o.heaps[i] && dmaio_buf_kind(nb[i].b) == DMAIO_BUF_MEMFD && run == 0)
					fprintf(stderr, PROG ": no dma-buf provider on this machine; using a memfd\n");
			}
		}
	}
	if (anon) {
		if (ur_fixed)
			io_uring_unregister_buffers(&ur);
		munmap(anon, rbuf_size);
	}
	anon = na;
	if (ur_ok) {
		int ret = register_anon();

		if (run == 0 && ret < 0)
			note("base:uring-direct: registering the buffer failed (%s, RLIMIT_MEMLOCK?): unregistered "
			     "buffers used", strerror(-ret));
		ur_fixed = ret == 0;
	}
	for (i = 0; i < nlb; i++) {
		dmaio_free(lb[i].b);
		lb[i] = nb[i];
	}
	prime_mem(anon, rbuf_size);
	for (i = 0; i < nlb; i++) {
		if (!lb[i].map)
			continue;
		sync_begin(lb[i].b, DMAIO_SYNC_WRITE);
		prime_mem(lb[i].map, rbuf_size);
		sync_end(lb[i].b, DMAIO_SYNC_WRITE);
	}
	/* first-use costs of the new buffers stay out of the timing */
	if (run > 0)
		for (s = 0; s < nsets; s++)
			for (i = 0; i < nvars; i++)
				if (sets[s].type != S_FRAMES && sets[s].res[i].ok)
					run_read(&vars[i], &sets[s], wlo.depth, NULL);
}

static void setup_reads(void)
{
	uint64_t maxrs = 0, need, avail, total = 0;
	struct statfs sfs;
	int s, k, ret;
	unsigned i;
	char sz[32];

	if (wlo.test_ranges) {
		for (k = 0; k < wlo.nsets; k++)
			if (wlo.set_count[k] * wlo.set_size[k] > maxrs)
				maxrs = wlo.set_count[k] * wlo.set_size[k];
		if (!wlo.ranges_file)
			wlo.ranges_file = 2 * maxrs;
		for (k = 0; k < wlo.nsets; k++)
			if (wlo.ranges_file / wlo.set_size[k] < wlo.set_count[k]) {
				size_str(sz, sizeof(sz), wlo.set_size[k]);
				die("--ranges-file: %" PRIu64 " ranges of %s do not fit in a %" PRIu64 " MiB file",
				    wlo.set_count[k], sz, wlo.ranges_file / MIB);
			}
		total += wlo.ranges_file;
		rbuf_size = maxrs;
	}
	if (wlo.test_files) {
		total += (uint64_t)wlo.nfiles * wlo.file_size;
		if ((uint64_t)wlo.nfiles * wlo.file_size > rbuf_size)
			rbuf_size = (uint64_t)wlo.nfiles * wlo.file_size;
	}
	/* memory: the baseline's and each heap's buffer, twice while new ones replace them, and room
	 * for the page cache */
	avail = mem_available();
	need = (uint64_t)(1 + nlb) * rbuf_size * (o.fresh ? 2 : 1) + rbuf_size;
	if (avail && need > avail * 9 / 10)
		die("ranges/files: the buffers need about %" PRIu64 " MiB of memory, %" PRIu64 " MiB available "
		    "(smaller --ranges/--files, or --same-buffers)", need / MIB, avail / MIB);
	if (statfs(o.dir, &sfs) == 0 && (uint64_t)sfs.f_bavail * (uint64_t)sfs.f_bsize < total + 64 * MIB)
		die("%s: not enough free space for %" PRIu64 " MiB of test files", o.dir, total / MIB);

	/* files */
	if (wlo.test_ranges) {
		create_file(&rfile, "ranges", -1, wlo.ranges_file, 0);
		open_direct_and_register(&rfile);
	}
	if (wlo.test_files) {
		mfiles = xcalloc(wlo.nfiles, sizeof(*mfiles));
		for (i = 0; i < wlo.nfiles; i++) {
			create_file(&mfiles[i], "files", (int)i, wlo.file_size, (uint64_t)i * wlo.file_size);
			open_direct_and_register(&mfiles[i]);
		}
	}

	/* the sets: ranges, then the baseline's requests */
	if (wlo.test_ranges) {
		for (k = 0; k < wlo.nsets; k++) {
			struct set *st = &sets[nsets++];
			uint64_t nslots = wlo.ranges_file / wlo.set_size[k], seed = wlo.seed * 1000003u + (uint64_t)k, j;
			uint32_t *slot = xcalloc(nslots, sizeof(*slot));

			st->type = S_RANGES;
			st->count = wlo.set_count[k];
			st->size = wlo.set_size[k];
			st->files = &rfile;
			st->nfiles = 1;
			st->nr = st->count;
			st->r = xcalloc(st->nr, sizeof(*st->r));
			/* COUNT distinct slots of the file, in random order (partial Fisher-Yates) */
			for (j = 0; j < nslots; j++)
				slot[j] = (uint32_t)j;
			for (j = 0; j < st->count; j++) {
				uint64_t x = j + splitmix(&seed) % (nslots - j);
				uint32_t t = slot[j];

				slot[j] = slot[x];
				slot[x] = t;
				st->r[j].fi = 0;
				st->r[j].file_off = (uint64_t)slot[j] * st->size;
				st->r[j].mem_off = j * st->size;
				st->r[j].len = st->size;
				st->r[j].pat = st->r[j].file_off;
			}
			free(slot);
		}
	}
	if (wlo.test_files) {
		struct set *st = &sets[nsets++];

		st->type = S_FILES;
		st->count = wlo.nfiles;
		st->size = wlo.file_size;
		st->files = mfiles;
		st->nfiles = wlo.nfiles;
		st->nr = wlo.nfiles;
		st->r = xcalloc(st->nr, sizeof(*st->r));
		for (i = 0; i < wlo.nfiles; i++) {
			st->r[i].fi = i;
			st->r[i].file_off = 0;
			st->r[i].mem_off = (uint64_t)i * wlo.file_size;
			st->r[i].len = wlo.file_size;
			st->r[i].pat = (uint64_t)i * wlo.file_size;
		}
	}
	for (s = 0; s < nsets; s++) {
		struct set *st = &sets[s];
		size_t cap = 0, j;

		if (st->type == S_FRAMES)
			continue;
		for (j = 0; j < st->nr; j++)
			cap += (size_t)((st->r[j].len + o.chunk - 1) / o.chunk) + 1;
		st->b = xcalloc(cap, sizeof(*st->b));
		for (j = 0; j < st->nr; j++) {
			const struct rng *r = &st->r[j];
			uint64_t done = 0;

			st->bytes += r->len;
			while (done < r->len) {
				uint64_t mo = r->mem_off + done, len = r->len - done;
				uint64_t piece_end = (mo / URING_PIECE + 1) * URING_PIECE;

				if (len > o.chunk)
					len = o.chunk;
				if (mo + len > piece_end)
					len = piece_end - mo;
				st->b[st->nb].fd = st->files[r->fi].dfd;
				st->b[st->nb].off = r->file_off + done;
				st->b[st->nb].mem_off = mo;
				st->b[st->nb].len = (uint32_t)len;
				st->nb++;
				done += len;
			}
		}
	}

	/* the baseline's ring */
	if (!ur_note[0]) {
		ret = io_uring_queue_init(wlo.depth < 4 ? 4 : wlo.depth, &ur, 0);
		if (ret < 0)
			snprintf(ur_note, sizeof(ur_note), "io_uring unavailable (%s)", strerror(-ret));
		else
			ur_ok = true;
	}
	alloc_read_bufs(0);

	/* which variants can run; each checked once (also the warm-up) */
	for (s = 0; s < nsets; s++) {
		struct set *st = &sets[s];

		for (k = 0; k < nvars; k++) {
			struct res *rs = &st->res[k];

			rs->ok = var_can_run(&vars[k], st);
			if (!rs->ok) {
				if (vars[k].kind == V_BASE)
					snprintf(rs->note, sizeof(rs->note), "%s", ur_note);
				else if (vars[k].kind == V_QUEUE && (!rq.q || rq.broken))
					snprintf(rs->note, sizeof(rs->note), "%s", rq.note);
				else
					snprintf(rs->note, sizeof(rs->note), "dmaio_file_open failed");
				continue;
			}
			if (o.verify)
				verify_read(&vars[k], st);
			else if (run_read(&vars[k], st, wlo.depth, NULL) < 0)
				rs->ok = false;
		}
	}
}

/* ------------------------------------------------------------------------------------------- */
/* the frame writer */

struct fctx {
	uint64_t F;
	unsigned K;
	uint64_t *sub_ns;       /* per slot: when its write was submitted */
	bool *busy;             /* per slot: in flight (queue) */
	uint64_t *busy_until;   /* per slot: when its last write completed (sync variants) */
	unsigned nin;
	double *lat;            /* ms, per frame written */
	double *libns;          /* queue: dmaio_done.ns, ms */
	size_t nl, nlib, cap;
	unsigned *slot_of;      /* slot of each frame written (verification) */
	int err;
	struct res *rs;
};

static void sleep_until(uint64_t t)
{
	struct timespec ts = { .tv_sec = (time_t)(t / 1000000000ull), .tv_nsec = (long)(t % 1000000000ull) };

	while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL) == EINTR)
		;
}

/* collect what the queue finished; min 0 and timeout 0 never block */
static int frames_reap(struct fctx *c, unsigned min, int timeout_ms)
{
	struct dmaio_done dn[64];
	uint64_t t;
	int got, i;

	got = dmaio_reap(fq.q, dn, 64, min, timeout_ms);
	if (got < 0)
		return got;
	t = now_ns();
	for (i = 0; i < got; i++) {
		unsigned s = (unsigned)dn[i].user_data;

		if (dn[i].user_data >= c->K || !c->busy[s] || c->nl >= c->cap) {
			note("frames lib:queue: a completion with user_data %" PRIu64 " that is not in flight",
			     dn[i].user_data);
			if (!c->err)
				c->err = -EPROTO;
			continue;
		}
		c->lat[c->nl++] = (double)(t - c->sub_ns[s]) / 1e6;
		c->libns[c->nlib++] = (double)dn[i].ns / 1e6;
		c->busy[s] = false;
		c->nin--;
		account(c->rs, dn[i].path, dn[i].done, dn[i].fallbacks, dn[i].unaligned);
		if (dn[i].res < 0 && !c->err)
			c->err = (int)dn[i].res;
		else if (dn[i].res >= 0 && (uint64_t)dn[i].res != c->F && !c->err)
			c->err = -EIO;
	}
	return got;
}

/* write() all of len, from the file position */
static ssize_t full_write(int fd, const char *p, size_t len)
{
	size_t done = 0;

	while (done < len) {
		ssize_t r = write(fd, p + done, len - done);

		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0)
			return -errno;
		done += (size_t)r;
	}
	return (ssize_t)done;
}

/* a new empty frames file for the next variant, registered again (outside the timing) */
static int frames_reset(void)
{
	int ret;

	if (ffile.df)
		dmaio_file_close(ffile.df);
	ffile.df = NULL;
	if (ftruncate(ffile.fd, 0) < 0 || lseek(ffile.fd, 0, SEEK_SET) < 0)
		return -errno;
	fsync(ffile.fd);
	posix_fadvise(ffile.fd, 0, 0, POSIX_FADV_DONTNEED);
	ret = dmaio_file_open(NULL, ffile.fd, 0, &ffile.df);
	if (ret < 0)
		ffile.df = NULL;
	return ret;
}

/*
 * nframes frames at wlo.fps with variant v. Frame i arrives at t0 + i / fps into slot i % K; it is
 * dropped when that slot still holds a frame not yet saved. Sync variants write it when they get
 * to it (late when the previous writes took longer than a frame); the queue variant submits it at
 * once. The last step is a fdatasync(). With verify, the file is read back and every frame
 * written compared with its slot.
 */
static int run_frames(const struct var *v, unsigned nframes, struct res *rs, int run, bool verify)
{
	struct fctx c = { 0 };
	uint64_t period = 1000000000ull / wlo.fps, t0, t1, written = 0, dropped = 0, i;
	double c0, c1;
	struct dmaio_buf *b = v->kind == V_BASE ? NULL : flb[v->h].b;
	int ret = 0, qfd = -1;

	ret = frames_reset();
	if (ret < 0 && v->kind != V_BASE && v->kind != V_SYNC)
		return ret;
	c.F = wlo.frame_size;
	c.K = wlo.ring;
	c.rs = rs;
	c.sub_ns = xcalloc(c.K, sizeof(*c.sub_ns));
	c.busy = xcalloc(c.K, sizeof(*c.busy));
	c.busy_until = xcalloc(c.K, sizeof(*c.busy_until));
	c.cap = nframes;
	c.lat = xcalloc(nframes, sizeof(*c.lat));
	c.libns = xcalloc(nframes, sizeof(*c.libns));
	c.slot_of = xcalloc(nframes, sizeof(*c.slot_of));
	if (v->kind == V_QUEUE)
		qfd = dmaio_queue_fd(fq.q);
	ret = 0;

	c0 = cpu_now();
	t0 = now_ns();
	for (i = 0; i < nframes && !ret; i++) {
		uint64_t ti = t0 + i * period, ts, tc;
		unsigned s = (unsigned)(i % c.K);
		uint64_t off = written * c.F;
		struct dmaio_xfer x = { 0 };
		ssize_t r = 0;

		if (v->kind == V_QUEUE) {
			struct dmaio_io io = { 0 };
			int q;

			/* wait for the frame, moving the queue along when it has work */
			for (;;) {
				uint64_t now = now_ns();
				struct pollfd pfd = { .fd = qfd, .events = POLLIN };
				struct timespec rel;

				if (now >= ti)
					break;
				rel.tv_sec = (time_t)((ti - now) / 1000000000ull);
				rel.tv_nsec = (long)((ti - now) % 1000000000ull);
				if (ppoll(&pfd, 1, &rel, NULL) > 0 && (pfd.revents & POLLIN)) {
					q = frames_reap(&c, 0, 0);
					if (q < 0) {
						ret = q;
						break;
					}
					if (run >= 0) {
						rs->wakeups++;
						rs->empty_reaps += q == 0;
					}
				}
			}
			if (ret)
				break;
			q = frames_reap(&c, 0, 0);
			if (q < 0) {
				ret = q;
				break;
			}
			if (c.err) {
				ret = c.err;
				break;
			}
			if (c.busy[s]) {
				dropped++;
				continue;
			}
			io.op = DMAIO_OP_WRITE;
			io.buf = b;
			io.buf_off = (uint64_t)s * c.F;
			io.file = ffile.df;
			io.file_off = (int64_t)off;
			io.len = c.F;
			io.user_data = s;
			c.sub_ns[s] = now_ns();
			q = dmaio_submit(fq.q, &io, 1);
			if (q == -EAGAIN || q == 0) {
				dropped++; /* the queue is full; the capture loop does not wait */
				continue;
			}
			if (q < 0) {
				ret = q;
				break;
			}
			c.busy[s] = true;
			c.nin++;
			c.slot_of[written++] = s;
			continue;
		}

		/* sync variants */
		sleep_until(ti);
		if (c.busy_until[s] > ti) {
			dropped++;
			continue;
		}
		ts = now_ns();
		switch (v->kind) {
		case V_BASE:
			r = full_write(ffile.fd, fanon + (uint64_t)s * c.F, (size_t)c.F);
			break;
		case V_SYNC:
			r = dmaio_write_file_ex(b, (size_t)s * c.F, ffile.fd, (off_t)off, (size_t)c.F, 0, &x);
			break;
		case V_FILE:
			r = dmaio_file_write(ffile.df, (off_t)off, b, (size_t)s * c.F, (size_t)c.F, 0, &x);
			break;
		case V_QUEUE:
			break;
		}
		tc = now_ns();
		if (v->kind != V_BASE)
			account(rs, x.path, x.done, x.fallbacks, x.unaligned);
		if (r < 0) {
			ret = (int)r;
			break;
		}
		if ((uint64_t)r != c.F) {
			ret = -EIO;
			break;
		}
		c.busy_until[s] = tc;
		c.lat[c.nl++] = (double)(tc - ts) / 1e6;
		c.slot_of[written++] = s;
	}
	/* the queue: wait for what is still in flight */
	while (v->kind == V_QUEUE && c.nin) {
		int q = frames_reap(&c, 1, REAP_TIMEOUT_MS);

		if (q < 0) {
			fq.broken = true;
			snprintf(fq.note, sizeof(fq.note), "dmaio_reap failed (%s) with %u frames in flight",
				 errname(q), c.nin);
			if (!ret)
				ret = q;
			break;
		}
	}
	if (!ret && c.err)
		ret = c.err;
	if (!ret && fdatasync(ffile.fd) < 0)
		ret = -errno;
	t1 = now_ns();
	c1 = cpu_now();
	/* the capture lasts nframes periods: a writer that keeps up is at the frame rate */
	if (t1 < t0 + nframes * period)
		t1 = t0 + nframes * period;

	if (!ret && verify && written) {
		char *tmp = xcalloc(1, (size_t)c.F);

		for (i = 0; i < written; i++) {
			int64_t bad;

			if (full_pread(ffile.fd, tmp, (size_t)c.F, i * c.F) != (ssize_t)c.F) {
				ret = -EIO;
				break;
			}
			bad = check_pattern(tmp, (uint64_t)c.slot_of[i] * c.F, (size_t)c.F);
			if (bad >= 0) {
				snprintf(rs->note, sizeof(rs->note), "verification failed: frame %" PRIu64 " (slot %u): "
					 "wrong bytes at pattern offset %" PRId64, i, c.slot_of[i], bad);
				fprintf(stderr, PROG ": frames %s: %s\n", vname(v, S_FRAMES), rs->note);
				rs->ok = false;
				break;
			}
		}
		free(tmp);
	}
	if (!ret && run >= 0 && rs->ok) {
		double *sorted = c.lat;
		int n = rs->n;

		qsort(sorted, c.nl, sizeof(double), cmp_dbl);
		rs->lat[0][n] = pct(sorted, c.nl, 0.50);
		rs->lat[1][n] = pct(sorted, c.nl, 0.90);
		rs->lat[2][n] = pct(sorted, c.nl, 0.99);
		rs->lat[3][n] = c.nl ? sorted[c.nl - 1] : NAN;
		qsort(c.libns, c.nlib, sizeof(double), cmp_dbl);
		rs->libns[n] = pct(c.libns, c.nlib, 0.50);
		rs->mbps[n] = (double)(written * c.F) * 1000.0 / (double)(t1 - t0);
		rs->ms[n] = (double)(t1 - t0) / 1e6;
		rs->cpu[n] = written ? (c1 - c0) / ((double)(written * c.F) / (double)GIB) : NAN;
		rs->cpu_frame[n] = written ? (c1 - c0) * 1e3 / (double)written : NAN;
		rs->frames += nframes;
		rs->written += written;
		rs->dropped += dropped;
		rs->n++;
	}
	free(c.sub_ns);
	free(c.busy);
	free(c.busy_until);
	free(c.lat);
	free(c.libns);
	free(c.slot_of);
	return ret;
}

static void setup_frames(void)
{
	struct set *st = &sets[nsets++];
	uint64_t F = wlo.frame_size, s;
	struct statfs sfs;
	int k, i;

	st->type = S_FRAMES;
	st->count = wlo.frames;
	st->size = F;
	st->files = &ffile;
	st->nfiles = 1;
	fring_size = F * wlo.ring;
	if (statfs(o.dir, &sfs) == 0 && (uint64_t)sfs.f_bavail * (uint64_t)sfs.f_bsize < F * wlo.frames + 64 * MIB)
		die("%s: not enough free space for %" PRIu64 " MiB of frames", o.dir, F * wlo.frames / MIB);
	create_file(&ffile, "frames", -1, 0, 0);
	if (frames_reset() < 0)
		note("frames: dmaio_file_open of the frames file failed: lib:file and lib:queue skipped");
	/* the ring: slot s holds the pattern of [s * F, (s + 1) * F) */
	fanon = anon_alloc(fring_size);
	for (s = 0; s < wlo.ring; s++)
		fill_pattern(fanon + s * F, s * F, (size_t)F);
	for (i = 0; i < nlb; i++) {
		int ret = alloc_dbuf(i, (size_t)fring_size, &flb[i].b, &flb[i].map);

		if (ret < 0)
			die("allocate %" PRIu64 " KiB from %s: %s", fring_size / KIB, heap_desc(i), strerror(-ret));
		if (flb[i].map) {
			sync_begin(flb[i].b, DMAIO_SYNC_WRITE);
			memcpy(flb[i].map, fanon, fring_size);
			sync_end(flb[i].b, DMAIO_SYNC_WRITE);
		} else {
			note("frames: the %s buffer cannot be mapped: its frames hold zeros and are not verified",
			     dmaio_buf_provider(flb[i].b));
		}
	}
	/* each variant checked (and warmed up) with a few frames */
	for (k = 0; k < nvars; k++) {
		struct res *rs = &st->res[k];
		int ret;

		rs->ok = var_can_run(&vars[k], st);
		if (!rs->ok) {
			snprintf(rs->note, sizeof(rs->note), "%s", vars[k].kind == V_QUEUE && !fq.q ? fq.note :
				 "dmaio_file_open failed");
			continue;
		}
		ret = run_frames(&vars[k], wlo.frames < 2 * wlo.ring ? wlo.frames : 2 * wlo.ring, rs, -1,
				 o.verify && (vars[k].kind == V_BASE || flb[vars[k].h].map));
		if (ret < 0) {
			rs->ok = false;
			snprintf(rs->note, sizeof(rs->note), "failed: %s (%s)", strerror(-ret), errname(ret));
			fprintf(stderr, PROG ": frames %s: %s\n", vname(&vars[k], S_FRAMES), rs->note);
		}
	}
}

/* ------------------------------------------------------------------------------------------- */
/* entry points */

void wl_setup(void)
{
	struct rlimit rl;
	int i, ret;

	if (o.quick && !wlo.sets_given) {
		wlo.nsets = 2;
		wlo.set_count[0] = 1024;
		wlo.set_size[0] = 64 * KIB;
		wlo.set_count[1] = 128;
		wlo.set_size[1] = MIB;
	} else if (!wlo.sets_given) {
		wlo.nsets = 2;
		wlo.set_count[0] = 4096;
		wlo.set_size[0] = 64 * KIB;
		wlo.set_count[1] = 512;
		wlo.set_size[1] = MIB;
	}
	if (o.quick && !wlo.files_given)
		wlo.nfiles = 16;
	if (o.quick && !wlo.frames_given)
		wlo.frames = 120;

	nlb = o.nheaps ? o.nheaps : 1; /* heaps[0] NULL: the default provider */
	/* registered files keep descriptors of their own: room for --files 4096 */
	if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < rl.rlim_max) {
		rl.rlim_cur = rl.rlim_max;
		setrlimit(RLIMIT_NOFILE, &rl);
	}
	vars[nvars++] = (struct var){ .kind = V_BASE };
	snprintf(vars[0].name, sizeof(vars[0].name), "base");
	for (i = 0; i < nlb; i++) {
		static const char *const kn[] = { "", "lib:sync", "lib:file", "lib:queue" };
		enum vkind k;

		for (k = V_SYNC; k <= V_QUEUE; k++) {
			struct var *v = &vars[nvars++];

			v->kind = k;
			v->h = i;
			if (nlb > 1) {
				const char *hn = o.heaps[i] ? o.heaps[i] : "default";
				int j, dup = 0;

				for (j = 0; j < i; j++)
					dup += !strcmp(o.heaps[j] ? o.heaps[j] : "default", hn);
				snprintf(v->name, sizeof(v->name), dup ? "%s@%.40s#%d" : "%s@%.40s", kn[k], hn, dup + 1);
			} else
				snprintf(v->name, sizeof(v->name), "%s", kn[k]);
		}
	}
	for (i = 0; i < 2; i++) {
		struct wlq *wq = i ? &fq : &rq;

		if (i ? !wlo.test_frames : !have_reads())
			continue;
		ret = dmaio_queue_new(NULL, wlo.depth, 0, &wq->q);
		if (ret < 0) {
			wq->q = NULL;
			snprintf(wq->note, sizeof(wq->note), "dmaio_queue_new: %s (%s)", strerror(-ret), errname(ret));
			note("%s: lib:queue skipped", wq->note);
		}
	}
	if (have_reads())
		setup_reads();
	if (wlo.test_frames)
		setup_frames();
}

void wl_print_header(void)
{
	char a[32], b[32], c[32];
	int s;

	for (s = 0; s < nsets; s++) {
		const struct set *st = &sets[s];

		size_str(a, sizeof(a), st->size);
		if (st->type == S_RANGES) {
			size_str(b, sizeof(b), st->count * st->size);
			size_str(c, sizeof(c), rfile.size);
			printf("# ranges: %" PRIu64 " x %s (%s) of one %s file at random %s-aligned offsets, random order "
			       "(seed %" PRIu64 "), into one buffer\n", st->count, a, b, c, a, wlo.seed);
		} else if (st->type == S_FILES) {
			size_str(b, sizeof(b), st->count * st->size);
			printf("# files: %" PRIu64 " files x %s (%s), whole files into one buffer, each at its own offset\n",
			       st->count, a, b);
		} else {
			printf("# frames: %" PRIu64 " frames x %" PRIu64 " B at %u fps from a ring of %u buffers, one file at "
			       "sequential offsets (a new empty file for each variant), then fdatasync()\n", st->count,
			       st->size, wlo.fps, wlo.ring);
		}
	}
	if (have_reads()) {
		size_str(a, sizeof(a), o.chunk);
		for (s = 0; s < nlb; s++)
			printf("# ranges/files: buffer %" PRIu64 " MiB from %s (%s)\n", rbuf_size / MIB,
			       lb[s].b ? dmaio_buf_provider(lb[s].b) : heap_desc(s),
			       lb[s].b && dmaio_buf_kind(lb[s].b) == DMAIO_BUF_MEMFD ? "a memfd, not a dma-buf" : "dma-buf");
		printf("# base:uring-direct = O_DIRECT io_uring, %s, requests of at most %s, %u in flight, into "
		       "%s; lib:sync = dmaio_read_file per range; lib:file = dmaio_file_read per range "
		       "(files registered once, outside the timing); lib:queue = dmaio_submit/dmaio_reap on one "
		       "dmaio_queue_new(depth %u), made once\n", ur_fixed ? "fixed buffers" : "unregistered buffers",
		       a, wlo.depth, wlo.base_memfd ? "memfd (shmem) memory" : "anonymous memory", wlo.depth);
		printf("# cold before every variant: fsync + POSIX_FADV_DONTNEED of each file%s; %s\n",
		       o.drop_caches && is_root ? " + drop_caches" : "",
		       o.fresh ? "new buffers for every run" : "the same buffers for every run");
		if (nopen) {
			printf("# dmaio_file_open: %.0f us median (min %.0f, max %.0f) over %d files\n",
			       median(open_us, nopen), vmin(open_us, nopen), vmax(open_us, nopen), nopen);
		}
	}
	if (wlo.test_frames)
		printf("# frames: base:write = write() from anonymous memory; lib:sync = dmaio_write_file; lib:file = "
		       "dmaio_file_write; lib:queue = dmaio_submit per frame, ppoll(dmaio_queue_fd) until the next "
		       "frame, dmaio_reap(min 0, timeout 0); latency = submit to completion\n");
	for (s = 0; s < nsets; s++) {
		int k;

		for (k = 0; k < nvars; k++)
			if (!sets[s].res[k].ok)
				printf("# %s %-18s SKIPPED: %s\n", sets[s].type == S_RANGES ? "ranges" :
				       sets[s].type == S_FILES ? "files" : "frames", vname(&vars[k], sets[s].type),
				       sets[s].res[k].note);
	}
}

/* after a queue variant: everything submitted came back, every byte counted */
static void check_progress(const struct wlq *wq, const char *what)
{
	struct dmaio_progress p;
	int ret;

	if (!wq->q || wq->broken)
		return;
	ret = dmaio_queue_progress(wq->q, &p);
	if (ret < 0)
		note("%s: dmaio_queue_progress: %s", what, strerror(-ret));
	else if (p.submitted != p.completed || p.completed != p.reaped || p.bytes_done != p.bytes_total ||
		 p.cancelled)
		note("%s: dmaio_queue_progress after the run: submitted %" PRIu64 ", completed %" PRIu64 ", reaped %"
		     PRIu64 ", cancelled %" PRIu64 ", bytes %" PRIu64 " of %" PRIu64, what, p.submitted, p.completed,
		     p.reaped, p.cancelled, p.bytes_done, p.bytes_total);
}

void wl_run(void)
{
	bool tty = interactive(STDERR_FILENO);
	int r, s, kk, k;

	for (r = 0; r < o.runs; r++) {
		if (r > 0 && o.fresh && have_reads())
			alloc_read_bufs(r);
		for (s = 0; s < nsets; s++) {
			struct set *st = &sets[s];

			if (tty)
				fprintf(stderr, "\r\033[K" PROG ": %s run %d/%d", st->type == S_RANGES ? "ranges" :
					st->type == S_FILES ? "files" : "frames", r + 1, o.runs);
			/* alternate the order of the variants between runs */
			for (kk = 0; kk < nvars; kk++) {
				struct res *rs;
				uint64_t t0, t1;
				double c0, c1;
				int ret;

				k = r % 2 ? nvars - 1 - kk : kk;
				rs = &st->res[k];
				if (!rs->ok || rs->err || (vars[k].kind == V_QUEUE && !var_can_run(&vars[k], st)))
					continue;
				if (st->type == S_FRAMES) {
					ret = run_frames(&vars[k], wlo.frames, rs, r, o.verify && r == 0 &&
							 (vars[k].kind == V_BASE || flb[vars[k].h].map));
					if (ret < 0) {
						rs->err = ret;
						note("frames %s: %s", vname(&vars[k], S_FRAMES), strerror(-ret));
					} else if (vars[k].kind == V_QUEUE) {
						check_progress(&fq, "frames lib:queue");
					}
					continue;
				}
				cold_set(st);
				c0 = cpu_now();
				t0 = now_ns();
				ret = run_read(&vars[k], st, 0, rs);
				t1 = now_ns();
				c1 = cpu_now();
				if (ret < 0) {
					rs->err = ret;
					note("%s %s: %s", st->type == S_RANGES ? "ranges" : "files", vname(&vars[k], st->type),
					     strerror(-ret));
					continue;
				}
				if (vars[k].kind == V_QUEUE)
					check_progress(&rq, "ranges/files lib:queue");
				rs->mbps[rs->n] = (double)st->bytes * 1000.0 / (double)(t1 - t0);
				rs->cpu[rs->n] = (c1 - c0) / ((double)st->bytes / (double)GIB);
				rs->ms[rs->n] = (double)(t1 - t0) / 1e6;
				rs->n++;
			}
		}
	}
	if (tty)
		fprintf(stderr, "\r\033[K");
}

static const char *res_provider(const struct var *v, bool frames)
{
	if (v->kind == V_BASE)
		return "anonymous";
	if (frames)
		return flb[v->h].b ? dmaio_buf_provider(flb[v->h].b) : heap_desc(v->h);
	return lb[v->h].b ? dmaio_buf_provider(lb[v->h].b) : heap_desc(v->h);
}

static void print_reads(const struct set *st, FILE *csv)
{
	const struct res *base = &st->res[0];
	double bm = base->n ? median(base->mbps, base->n) : NAN;
	const char *test = st->type == S_RANGES ? "ranges" : "files";
	char a[32], b[32];
	int k;

	size_str(a, sizeof(a), st->size);
	size_str(b, sizeof(b), st->count * st->size);
	if (st->type == S_RANGES)
		printf("\nmany ranges: %" PRIu64 " x %s (%s) random ranges of one cold file, random order; "
		       "medians of %d runs\n", st->count, a, b, o.runs);
	else
		printf("\nmany files: %" PRIu64 " cold files x %s (%s), whole files into one buffer; medians of %d runs\n",
		       st->count, a, b, o.runs);
	printf("%-20s %-16s %8s %8s %8s %9s %7s %9s  %s\n", "method", "path", "MB/s", "min", "max", "CPU s/GiB",
	       "x base", "ms", "fallbacks, unaligned bytes (all runs)");
	for (k = 0; k < nvars; k++) {
		const struct var *v = &vars[k];
		const struct res *rs = &st->res[k];
		double mb, cpu, ms;
		char x[16];

		if (!rs->ok) {
			printf("%-20s skipped: %s\n", vname(v, st->type), rs->note);
			continue;
		}
		if (!rs->n) {
			printf("%-20s %s\n", vname(v, st->type), rs->err ? strerror(-rs->err) : "no result");
			continue;
		}
		mb = median(rs->mbps, rs->n);
		cpu = median(rs->cpu, rs->n);
		ms = median(rs->ms, rs->n);
		fmt_ratio(x, sizeof(x), mb, bm);
		printf("%-20s %-16s %8.0f %8.0f %8.0f %9.3f %7s %9.1f", vname(v, st->type), main_path(v, rs, st->type), mb,
		       vmin(rs->mbps, rs->n), vmax(rs->mbps, rs->n), cpu, x, ms);
		if (v->kind != V_BASE)
			printf("  %" PRIu64 ", %" PRIu64, rs->fallbacks, rs->unaligned);
		printf("\n");
		if (csv)
			fprintf(csv, "%s,%s,%" PRIu64 ",read,cold,%s,%s,%d,%.1f,%.1f,%.1f,%.4f,%s,,,%.3f,%.3f,%.3f,%" PRIu64 "\n",
				test, res_provider(v, false), st->size, vname(v, st->type), main_path(v, rs, st->type),
				rs->n, mb, vmin(rs->mbps, rs->n), vmax(rs->mbps, rs->n), cpu, x, ms, vmin(rs->ms, rs->n),
				vmax(rs->ms, rs->n), st->count);
	}
}

static void print_frames(const struct set *st, FILE *csv)
{
	static const char *const pn[4] = { "p50", "p90", "p99", "max" };
	const struct res *base = &st->res[0];
	double bm = base->n ? median(base->mbps, base->n) : NAN;
	int k, p;

	printf("\nframe writer: %" PRIu64 " frames x %" PRIu64 " B at %u fps, ring of %u buffers, one file; medians of "
	       "%d runs\n", st->count, st->size, wlo.fps, wlo.ring, o.runs);
	printf("  latency ms = submit to completion: each run's percentile, median over the runs; max = over all "
	       "runs; MB/s = bytes written / (frames / fps, or longer when the last write and the final "
	       "fdatasync() end later)\n");
	printf("%-20s %-16s %7s %8s %9s %7s %7s %7s %8s %13s %6s  %s\n", "method", "path", "MB/s", "CPU ms/f",
	       "CPU s/GiB", "p50", "p90", "p99", "max", "dropped", "x base", "fallbacks, unaligned bytes (all runs)");
	for (k = 0; k < nvars; k++) {
		const struct var *v = &vars[k];
		const struct res *rs = &st->res[k];
		double mb, lat[4];
		char x[16], drop[32];

		if (!rs->ok) {
			printf("%-20s skipped: %s\n", vname(v, S_FRAMES), rs->note);
			continue;
		}
		if (!rs->n) {
			printf("%-20s %s\n", vname(v, S_FRAMES), rs->err ? strerror(-rs->err) : "no result");
			continue;
		}
		mb = median(rs->mbps, rs->n);
		for (p = 0; p < 3; p++)
			lat[p] = median(rs->lat[p], rs->n);
		lat[3] = vmax(rs->lat[3], rs->n);
		fmt_ratio(x, sizeof(x), mb, bm);
		snprintf(drop, sizeof(drop), "%" PRIu64 "/%" PRIu64, rs->dropped, rs->frames);
		printf("%-20s %-16s %7.1f %8.3f %9.3f %7.2f %7.2f %7.2f %8.2f %13s %6s", vname(v, S_FRAMES),
		       main_path(v, rs, S_FRAMES), mb, median(rs->cpu_frame, rs->n), median(rs->cpu, rs->n), lat[0],
		       lat[1], lat[2], lat[3], drop, x);
		if (v->kind != V_BASE)
			printf("  %" PRIu64 ", %" PRIu64, rs->fallbacks, rs->unaligned);
		if (v->kind == V_QUEUE)
			printf("  (dmaio_done.ns p50 %.2f ms; %.1f fd wake-ups per frame, %.0f%% with nothing to reap)",
			       median(rs->libns, rs->n), rs->frames ? (double)rs->wakeups / (double)rs->frames : 0.0,
			       rs->wakeups ? 100.0 * (double)rs->empty_reaps / (double)rs->wakeups : 0.0);
		printf("\n");
		if (!csv)
			continue;
		fprintf(csv, "frames,%s,%" PRIu64 ",write,%ufps,%s,%s,%d,%.1f,%.1f,%.1f,%.4f,,%s,,%.4f,%.4f,%.4f,%" PRIu64 "\n",
			res_provider(v, true), st->size, wlo.fps, vname(v, S_FRAMES), main_path(v, rs, S_FRAMES), rs->n, mb,
			vmin(rs->mbps, rs->n), vmax(rs->mbps, rs->n), median(rs->cpu, rs->n), x,
			median(rs->cpu_frame, rs->n), vmin(rs->cpu_frame, rs->n), vmax(rs->cpu_frame, rs->n), rs->dropped);
		for (p = 0; p < 4; p++)
			fprintf(csv, "frames-latency,%s,%" PRIu64 ",write,%s,%s,%s,%d,,,,,,,,%.4f,%.4f,%.4f,%" PRIu64 "\n",
				res_provider(v, true), st->size, pn[p], vname(v, S_FRAMES), main_path(v, rs, S_FRAMES), rs->n,
				median(rs->lat[p], rs->n), vmin(rs->lat[p], rs->n), vmax(rs->lat[p], rs->n), rs->written);
	}
}

void wl_print(FILE *csv)
{
	int s;

	for (s = 0; s < nsets; s++) {
		if (sets[s].type == S_FRAMES)
			print_frames(&sets[s], csv);
		else
			print_reads(&sets[s], csv);
	}
	if (rq.broken)
		note("lib:queue (ranges/files): %s; later queue runs skipped", rq.note);
	if (fq.broken)
		note("lib:queue (frames): %s; later queue runs skipped", fq.note);
}

void wl_cleanup(void)
{
	unsigned i;
	int s;

	if (!wl_enabled())
		return;
	close_tfile(&rfile);
	close_tfile(&ffile);
	for (i = 0; mfiles && i < wlo.nfiles; i++)
		close_tfile(&mfiles[i]);
	dmaio_queue_free(rq.q);
	dmaio_queue_free(fq.q);
	rq.q = fq.q = NULL;
	for (i = 0; i < (unsigned)nlb; i++) {
		dmaio_free(lb[i].b);
		dmaio_free(flb[i].b);
		lb[i].b = flb[i].b = NULL;
	}
	if (ur_ok)
		io_uring_queue_exit(&ur);
	ur_ok = false;
	if (anon)
		munmap(anon, rbuf_size);
	if (fanon)
		munmap(fanon, fring_size);
	anon = fanon = NULL;
	wl_unlink_files();
	for (s = 0; s < nsets; s++) {
		free(sets[s].r);
		free(sets[s].b);
	}
	nsets = 0;
}
