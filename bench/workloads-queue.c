// SPDX-License-Identifier: MIT
/*
 * dmaio-bench workloads of the asynchronous API (--tests ranges,files,frames), each measured
 * against a baseline, the variants interleaved run by run, medians reported:
 *
 *  ranges  COUNT random ranges of SIZE of one cold file, in random order, into one buffer
 *  files   N whole cold files of SIZE into one buffer, each file at its own offset
 *          variants: base:uring-direct (O_DIRECT io_uring into anonymous memory, --depth requests
 *          in flight; baselines.c), lib:sync (dmaio_fd_read per range), lib:file
 *          (dmaio_file_read per range of a registered file), lib:queue (dmaio_queue_submit /
 *          dmaio_queue_reap, dmaio_queue_new(--depth))
 *  frames  fixed-size frames arriving at a fixed rate into a ring of K buffers, written to one
 *          file at sequential offsets: base:write (write() from anonymous memory), lib:sync
 *          (dmaio_fd_write), lib:file (dmaio_file_write), lib:queue (dmaio_queue_submit per frame;
 *          the capture loop never blocks: it waits for the next frame in ppoll() on
 *          dmaio_queue_fd() and reaps with min 0, timeout 0). A frame is dropped when the ring
 *          wraps onto a buffer that is still in flight (not yet saved).
 *
 * Latency: ranges/files time every request of the baseline, every call of lib:sync and
 * lib:file, and submit to reap of every range of lib:queue; frames time submit to completion.
 */
#include "bench.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <math.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/statfs.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

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
	double resid[MAX_RUNS];    /* reads: page-cache residency before the run */
	struct pcts lat[MAX_RUNS]; /* ranges/files: per range or request; frames: per frame, ms */
	uint64_t path_bytes[DMAIO_PATH_SLOTS];
	uint64_t fallbacks, unaligned;
	int err;
	/* frames */
	double cpu_frame[MAX_RUNS]; /* CPU ms per frame written */
	double libns[MAX_RUNS];     /* queue: p50 of dmaio_done.ns of the run, ms */
	uint64_t frames, written, dropped; /* totals over the runs */
	uint64_t wakeups, empty_reaps;     /* queue: ppoll() saw POLLIN; dmaio_queue_reap() then found nothing */
};

enum stype { S_RANGES, S_FILES, S_FRAMES };

struct rng {
	uint32_t fi;       /* index into the set's files */
	uint64_t file_off;
	uint64_t mem_off;  /* in the buffer */
	uint64_t len;
	uint64_t pat;      /* pattern offset of the range's first byte */
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
	int *fds;               /* their fds and sizes (make_cold) */
	uint64_t *lens;
	struct rng *r;          /* the ranges, in the order they are moved */
	size_t nr;
	struct breq *b;         /* the baseline's requests (ranges split at --chunk and 1 GiB) */
	size_t nb;
	uint64_t bytes;
	struct res res[WL_MAX_VARS];
};

/* buffers: anonymous memory (baseline) and one library buffer per --heap */
struct lbuf2 {
	struct dmaio_buf *b;
	void *map;
};

/* a queue: one for the read sets, one of its own for the frame writer (as an application would
 * have; and the frames do not depend on what the read sets left in a queue) */
struct wlq {
	struct dmaio_queue *q;
	bool broken;
	char note[160];
};

struct wl_state {
	const struct opts *o;
	struct report *rep;
	struct var vars[WL_MAX_VARS];
	int nvars;
	struct set sets[WL_MAX_SETS];
	int nsets;
	struct tfile rfile;     /* ranges */
	struct tfile *mfiles;   /* files */
	struct tfile ffile;     /* frames */
	/* the read sets' buffers */
	char *anon;
	uint64_t rbuf_size;
	struct lbuf2 lb[MAX_LBUFS];
	int nlb;
	/* frames: a ring of K slots, one allocation each kind */
	char *fanon;
	struct lbuf2 flb[MAX_LBUFS];
	uint64_t fring_size;
	struct wlq rq, fq;
	struct uring_base ur;
	char ur_note[256];
	double *open_us;        /* dmaio_file_open times */
	int nopen;
	struct samples lat;     /* one run's latency samples */
	uint64_t *sub_ns;       /* lib:queue: when each range was submitted */
	size_t sub_cap;
	const char *resid_how;
};

static bool have_reads(const struct opts *o)
{
	return o->test_ranges || o->test_files;
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

static char *base_alloc(const struct wl_state *w, uint64_t size)
{
	return w->o->base_memfd ? mem_memfd(size, true) : mem_anon(size);
}

static const char *vname(const struct var *v, enum stype t)
{
	if (v->kind == V_BASE)
		return t == S_FRAMES ? "base:write" : "base:uring-direct";
	return v->name;
}

static const char *stype_name(enum stype t)
{
	return t == S_RANGES ? "ranges" : t == S_FILES ? "files" : "frames";
}

static void account(struct res *r, uint32_t path, uint64_t done, uint32_t fallbacks, uint64_t unaligned)
{
	if (!r)
		return;
	if (path < DMAIO_PATH_SLOTS)
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
	for (p = 0; p < (int)DMAIO_PATH_SLOTS; p++)
		if (r->path_bytes[p] > best) {
			best = r->path_bytes[p];
			bp = p;
		}
	return bp >= 0 && dmaio_path_name(bp) ? dmaio_path_name(bp) : "-";
}

/* create a test file of size bytes holding the pattern of [pat, pat + size) */
static void create_file(struct wl_state *w, struct tfile *f, const char *tag, int idx, uint64_t size, uint64_t pat)
{
	size_t bl = 8 * MIB;
	char *tmp;
	uint64_t off;

	if ((idx >= 0 ? asprintf(&f->path, "%s/dmaio-bench-%s.%d.%d.tmp", w->o->dir, tag, (int)getpid(), idx) :
			asprintf(&f->path, "%s/dmaio-bench-%s.%d.tmp", w->o->dir, tag, (int)getpid())) < 0)
		die("out of memory");
	cleanup_add(f->path);
	f->fd = open(f->path, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
	if (f->fd < 0)
		die("create %s: %s", f->path, strerror(errno));
	f->dfd = -1;
	f->size = size;
	if (!size)
		return;
	tmp = xcalloc(1, bl);
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

static void open_direct_and_register(struct wl_state *w, struct tfile *f)
{
	uint64_t t0;
	int ret;

	f->dfd = open(f->path, O_RDONLY | O_DIRECT | O_CLOEXEC);
	if (f->dfd < 0 && !w->ur_note[0])
		snprintf(w->ur_note, sizeof(w->ur_note), "O_DIRECT open of %.120s failed (%s): use --dir on a block "
			 "filesystem", f->path, strerror(errno));
	t0 = now_ns();
	ret = dmaio_file_open(NULL, f->fd, 0, &f->df);
	if (ret == 0)
		w->open_us[w->nopen++] = (double)(now_ns() - t0) / 1e3;
	if (ret < 0) {
		f->df = NULL;
		report_note(w->rep, "dmaio_file_open(%s): %s (%s): lib:file and lib:queue skipped", f->path,
			    strerror(-ret), errname(ret));
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
		dmaio_buf_sync_begin(b, dir);
}

static void sync_end(struct dmaio_buf *b, unsigned dir)
{
	if (b)
		dmaio_buf_sync_end(b, dir);
}

/* the memory of a variant's reads, and the library buffer that owns it (NULL: anonymous) */
static char *var_mem(struct wl_state *w, const struct var *v, struct dmaio_buf **owner, bool frames)
{
	if (v->kind == V_BASE) {
		*owner = NULL;
		return frames ? w->fanon : w->anon;
	}
	*owner = frames ? w->flb[v->h].b : w->lb[v->h].b;
	return frames ? w->flb[v->h].map : w->lb[v->h].map;
}

static int register_anon(struct wl_state *w)
{
	unsigned n = (unsigned)((w->rbuf_size + URING_PIECE - 1) / URING_PIECE), j;
	struct iovec *iov = xcalloc(n, sizeof(*iov));
	int ret;

	for (j = 0; j < n; j++) {
		uint64_t off = (uint64_t)j * URING_PIECE;

		iov[j].iov_base = w->anon + off;
		iov[j].iov_len = (size_t)(w->rbuf_size - off < URING_PIECE ? w->rbuf_size - off : URING_PIECE);
	}
	ret = ub_register(&w->ur, iov, n);
	free(iov);
	return ret;
}

/* ------------------------------------------------------------------------------------------- */
/* the read variants */

/* the queue: submit as the queue accepts, reap what completed, until every range is back */
static int queue_reads(struct wl_state *w, struct dmaio_buf *b, struct set *st, size_t n, struct res *rs,
		       struct samples *lat)
{
	struct dmaio_io ios[64];
	struct dmaio_done dn[64] = { { .struct_size = sizeof(dn[0]) } };
	size_t next = 0, completed = 0;
	int ret = 0, got, i;

	while (completed < next || next < n) {
		if (next < n && !ret) {
			unsigned k = (unsigned)(n - next < 64 ? n - next : 64);
			uint64_t t;
			int s;

			memset(ios, 0, sizeof(ios[0]) * k);
			for (i = 0; i < (int)k; i++) {
				const struct rng *r = &st->r[next + (size_t)i];

				ios[i].struct_size = sizeof(ios[i]); /* the same in every element */
				ios[i].op = DMAIO_OP_READ;
				ios[i].buf = b;
				ios[i].buf_off = r->mem_off;
				ios[i].file = st->files[r->fi].df;
				ios[i].file_off = (int64_t)r->file_off;
				ios[i].len = r->len;
				ios[i].user_data = next + (size_t)i;
			}
			t = lat ? now_ns() : 0;
			s = dmaio_queue_submit(w->rq.q, ios, k);
			if (s > 0 && lat)
				for (i = 0; i < s; i++)
					w->sub_ns[next + (size_t)i] = t;
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
		got = dmaio_queue_reap(w->rq.q, dn, 64, 1, REAP_TIMEOUT_MS);
		if (got < 0) {
			if (!ret)
				ret = got;
			w->rq.broken = true;
			snprintf(w->rq.note, sizeof(w->rq.note), "dmaio_queue_reap failed (%s) with %zu ranges in flight",
				 errname(got), next - completed);
			return ret;
		}
		for (i = 0; i < got; i++) {
			const struct rng *r;

			if (dn[i].user_data >= next) {
				/* not a range of this run: the queue returned something it was not given */
				if (!ret)
					ret = -EPROTO;
				report_note(w->rep, "lib:queue: a completion with user_data %" PRIu64 " that was never "
					    "submitted", dn[i].user_data);
				completed++;
				continue;
			}
			r = &st->r[dn[i].user_data];
			completed++;
			if (lat)
				samples_add(lat, (double)(now_ns() - w->sub_ns[dn[i].user_data]) / 1e6);
			account(rs, dn[i].path, dn[i].done, dn[i].fallbacks, dn[i].unaligned);
			if (dn[i].res < 0 && !ret)
				ret = (int)dn[i].res;
			else if (dn[i].res >= 0 && (uint64_t)dn[i].res != r->len && !ret)
				ret = -ENODATA;
		}
		if (ret && completed < next)
			dmaio_queue_cancel(w->rq.q, 0, DMAIO_CANCEL_ALL);
	}
	return ret;
}

/* move the first n ranges of the set (all when n is 0) with variant v; lat: each range's (or
 * the baseline's request's) latency in ms */
static int run_read(struct wl_state *w, const struct var *v, struct set *st, size_t n, struct res *rs,
		    struct samples *lat)
{
	size_t i;

	if (!n || n > st->nr)
		n = st->nr;
	switch (v->kind) {
	case V_BASE:
		return ub_run(&w->ur, DIR_READ, w->anon, 0, st->b, n == st->nr ? st->nb : (n < st->nb ? n : st->nb),
			      w->o->depth, false, lat);
	case V_SYNC:
	case V_FILE:
		for (i = 0; i < n; i++) {
			const struct rng *r = &st->r[i];
			struct dmaio_xfer x = { .struct_size = sizeof(x) };
			uint64_t t0 = lat ? now_ns() : 0;
			ssize_t got;

			if (v->kind == V_SYNC)
				got = dmaio_fd_read(st->files[r->fi].fd, r->file_off, w->lb[v->h].b, r->mem_off,
						    r->len, 0, &x);
			else
				got = dmaio_file_read(st->files[r->fi].df, (off_t)r->file_off, w->lb[v->h].b, r->mem_off,
						      r->len, 0, &x);
			if (lat)
				samples_add(lat, (double)(now_ns() - t0) / 1e6);
			account(rs, x.path, x.done, x.fallbacks, x.unaligned);
			if (got < 0)
				return (int)got;
			if ((uint64_t)got != r->len)
				return -ENODATA;
		}
		return 0;
	case V_QUEUE:
		return queue_reads(w, w->lb[v->h].b, st, n, rs, lat);
	}
	return -EINVAL;
}

static bool var_can_run(const struct wl_state *w, const struct var *v, const struct set *st)
{
	unsigned i;

	if (v->kind == V_BASE) {
		if (st->type == S_FRAMES)
			return true;
		if (!w->ur.ok)
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
		const struct wlq *wq = st->type == S_FRAMES ? &w->fq : &w->rq;

		if (!wq->q || wq->broken)
			return false;
	}
	return true;
}

/* one pass with the bytes checked: poison, move, compare with the file's pattern */
static void verify_read(struct wl_state *w, const struct var *v, struct set *st)
{
	struct res *rs = &st->res[v - w->vars];
	struct dmaio_buf *owner;
	char *mem = var_mem(w, v, &owner, false);
	uint64_t span = st->count * st->size;
	size_t i;
	int ret;

	if (mem) {
		sync_begin(owner, DMAIO_SYNC_WRITE);
		memset(mem, 0xa5, span);
		sync_end(owner, DMAIO_SYNC_WRITE);
	}
	ret = run_read(w, v, st, 0, NULL, NULL);
	if (ret < 0) {
		rs->ok = false;
		snprintf(rs->note, sizeof(rs->note), "failed: %s (%s)", strerror(-ret), errname(ret));
		fprintf(stderr, PROG ": %s %s: %s\n", stype_name(st->type), vname(v, st->type), rs->note);
		return;
	}
	if (!mem) {
		report_note(w->rep, "%s: the buffer cannot be mapped: reads not verified", vname(v, st->type));
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
			fprintf(stderr, PROG ": %s %s: %s\n", stype_name(st->type), vname(v, st->type), rs->note);
			break;
		}
	}
	sync_end(owner, DMAIO_SYNC_READ);
}

/* fill mem with bytes of the test files (a kernel copy: the first one into new memory is slow on
 * this host, see prime_buffers() in workloads-io.c) */
static void prime_mem(struct wl_state *w, void *mem, uint64_t len)
{
	uint64_t done = 0;
	unsigned i;

	if (w->rfile.fd >= 0 && done < len) {
		size_t n = (size_t)(w->rfile.size < len ? w->rfile.size : len);

		full_pread(w->rfile.fd, mem, n, 0);
		done += n;
	}
	for (i = 0; w->mfiles && i < w->o->nfiles && done < len; i++) {
		size_t n = (size_t)(w->mfiles[i].size < len - done ? w->mfiles[i].size : len - done);

		full_pread(w->mfiles[i].fd, (char *)mem + done, n, 0);
		done += n;
	}
}

/* New buffers for the read sets (before each run unless --same-buffers; see fresh_buffers() in
 * workloads-io.c): allocated before the old ones are freed, the order alternating; primed and
 * warmed up (registration with the rings) outside the timing. */
static void alloc_read_bufs(struct wl_state *w, int run)
{
	const struct opts *o = w->o;
	struct lbuf2 nb[MAX_LBUFS] = { { 0 } };
	char *na = NULL;
	uint64_t avail = mem_available();
	int i, s, step;

	if (w->anon && avail && avail < 3 * (uint64_t)(1 + w->nlb) * w->rbuf_size) {
		/* short of memory for both sets at once: free first */
		ub_unregister(&w->ur);
		munmap(w->anon, w->rbuf_size);
		w->anon = NULL;
		for (i = 0; i < w->nlb; i++) {
			dmaio_buf_free(w->lb[i].b);
			w->lb[i].b = NULL;
			w->lb[i].map = NULL;
		}
	}
	for (step = 0; step < 2; step++) {
		if ((step + run) % 2 == 0) {
			na = base_alloc(w, w->rbuf_size);
		} else {
			for (i = 0; i < w->nlb; i++) {
				int ret = alloc_dbuf(o->heaps[i], (size_t)w->rbuf_size, &nb[i].b, &nb[i].map);

				if (ret < 0)
					die("allocate %" PRIu64 " MiB from %s: %s", w->rbuf_size / MIB, heap_desc(o->heaps[i]),
					    strerror(-ret));
				if (!o->heaps[i] && dmaio_buf_kind(nb[i].b) == DMAIO_BUF_MEMFD && run == 0)
					fprintf(stderr, PROG ": no dma-buf provider on this machine; using a memfd\n");
			}
		}
	}
	if (w->anon) {
		ub_unregister(&w->ur);
		munmap(w->anon, w->rbuf_size);
	}
	w->anon = na;
	if (w->ur.ok) {
		int ret = register_anon(w);

		if (run == 0 && ret < 0)
			report_note(w->rep, "base:uring-direct: registering the buffer failed (%s, RLIMIT_MEMLOCK?): "
				    "unregistered buffers used", strerror(-ret));
	}
	for (i = 0; i < w->nlb; i++) {
		dmaio_buf_free(w->lb[i].b);
		w->lb[i] = nb[i];
	}
	prime_mem(w, w->anon, w->rbuf_size);
	for (i = 0; i < w->nlb; i++) {
		if (!w->lb[i].map)
			continue;
		sync_begin(w->lb[i].b, DMAIO_SYNC_WRITE);
		prime_mem(w, w->lb[i].map, w->rbuf_size);
		sync_end(w->lb[i].b, DMAIO_SYNC_WRITE);
	}
	/* first-use costs of the new buffers stay out of the timing */
	if (run > 0)
		for (s = 0; s < w->nsets; s++)
			for (i = 0; i < w->nvars; i++)
				if (w->sets[s].type != S_FRAMES && w->sets[s].res[i].ok)
					run_read(w, &w->vars[i], &w->sets[s], o->depth, NULL, NULL);
}

static void set_files(struct set *st, struct tfile *files, unsigned n)
{
	st->files = files;
	st->nfiles = n;
	st->fds = xcalloc(n, sizeof(*st->fds));
	st->lens = xcalloc(n, sizeof(*st->lens));
}

static void setup_reads(struct wl_state *w)
{
	const struct opts *o = w->o;
	uint64_t maxrs = 0, need, avail, total = 0;
	struct statfs sfs;
	int s, k, ret;
	unsigned i;
	char sz[32];

	if (o->test_ranges) {
		for (k = 0; k < o->nsets; k++)
			if (o->set_count[k] * o->set_size[k] > maxrs)
				maxrs = o->set_count[k] * o->set_size[k];
		for (k = 0; k < o->nsets; k++)
			if (o->ranges_file / o->set_size[k] < o->set_count[k]) {
				size_str(sz, sizeof(sz), o->set_size[k]);
				die("--ranges-file: %" PRIu64 " ranges of %s do not fit in a %" PRIu64 " MiB file",
				    o->set_count[k], sz, o->ranges_file / MIB);
			}
		total += o->ranges_file;
		w->rbuf_size = maxrs;
	}
	if (o->test_files) {
		total += (uint64_t)o->nfiles * o->file_size;
		if ((uint64_t)o->nfiles * o->file_size > w->rbuf_size)
			w->rbuf_size = (uint64_t)o->nfiles * o->file_size;
	}
	/* memory: the baseline's and each heap's buffer, twice while new ones replace them, and room
	 * for the page cache */
	avail = mem_available();
	need = (uint64_t)(1 + w->nlb) * w->rbuf_size * (o->fresh ? 2 : 1) + w->rbuf_size;
	if (avail && need > avail * 9 / 10)
		die("ranges/files: the buffers need about %" PRIu64 " MiB of memory, %" PRIu64 " MiB available "
		    "(smaller --ranges/--files, or --same-buffers)", need / MIB, avail / MIB);
	if (statfs(o->dir, &sfs) == 0 && (uint64_t)sfs.f_bavail * (uint64_t)sfs.f_bsize < total + 64 * MIB)
		die("%s: not enough free space for %" PRIu64 " MiB of test files", o->dir, total / MIB);

	/* files */
	if (o->test_ranges) {
		create_file(w, &w->rfile, "ranges", -1, o->ranges_file, 0);
		open_direct_and_register(w, &w->rfile);
	}
	if (o->test_files) {
		w->mfiles = xcalloc(o->nfiles, sizeof(*w->mfiles));
		for (i = 0; i < o->nfiles; i++) {
			create_file(w, &w->mfiles[i], "files", (int)i, o->file_size, (uint64_t)i * o->file_size);
			open_direct_and_register(w, &w->mfiles[i]);
		}
	}

	/* the sets: ranges, then the baseline's requests */
	if (o->test_ranges) {
		for (k = 0; k < o->nsets; k++) {
			struct set *st = &w->sets[w->nsets++];
			uint64_t nslots = o->ranges_file / o->set_size[k], seed = o->seed * 1000003u + (uint64_t)k, j;
			uint32_t *slot = xcalloc(nslots, sizeof(*slot));

			st->type = S_RANGES;
			st->count = o->set_count[k];
			st->size = o->set_size[k];
			set_files(st, &w->rfile, 1);
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
	if (o->test_files) {
		struct set *st = &w->sets[w->nsets++];

		st->type = S_FILES;
		st->count = o->nfiles;
		st->size = o->file_size;
		set_files(st, w->mfiles, o->nfiles);
		st->nr = o->nfiles;
		st->r = xcalloc(st->nr, sizeof(*st->r));
		for (i = 0; i < o->nfiles; i++) {
			st->r[i].fi = i;
			st->r[i].file_off = 0;
			st->r[i].mem_off = (uint64_t)i * o->file_size;
			st->r[i].len = o->file_size;
			st->r[i].pat = (uint64_t)i * o->file_size;
		}
	}
	for (s = 0; s < w->nsets; s++) {
		struct set *st = &w->sets[s];
		size_t cap = 0, j;

		for (i = 0; i < st->nfiles; i++) {
			st->fds[i] = st->files[i].fd;
			st->lens[i] = st->files[i].size;
		}
		if (st->nr > w->sub_cap)
			w->sub_cap = st->nr;
		for (j = 0; j < st->nr; j++)
			cap += breq_count(st->r[j].mem_off, st->r[j].len, o->chunk);
		st->b = xcalloc(cap, sizeof(*st->b));
		for (j = 0; j < st->nr; j++) {
			const struct rng *r = &st->r[j];

			st->bytes += r->len;
			st->nb += breq_split(st->b + st->nb, st->files[r->fi].dfd, r->file_off, r->mem_off, r->len, o->chunk);
		}
	}
	w->sub_ns = xcalloc(w->sub_cap, sizeof(*w->sub_ns));

	/* the baseline's ring */
	if (!w->ur_note[0]) {
		ret = ub_init(&w->ur, o->depth);
		if (ret < 0)
			snprintf(w->ur_note, sizeof(w->ur_note), "io_uring unavailable (%s)", strerror(-ret));
	}
	alloc_read_bufs(w, 0);

	/* which variants can run; each checked once (also the warm-up) */
	for (s = 0; s < w->nsets; s++) {
		struct set *st = &w->sets[s];

		for (k = 0; k < w->nvars; k++) {
			struct res *rs = &st->res[k];

			rs->ok = var_can_run(w, &w->vars[k], st);
			if (!rs->ok) {
				if (w->vars[k].kind == V_BASE)
					snprintf(rs->note, sizeof(rs->note), "%s", w->ur_note);
				else if (w->vars[k].kind == V_QUEUE && (!w->rq.q || w->rq.broken))
					snprintf(rs->note, sizeof(rs->note), "%s", w->rq.note);
				else
					snprintf(rs->note, sizeof(rs->note), "dmaio_file_open failed");
				continue;
			}
			if (o->verify)
				verify_read(w, &w->vars[k], st);
			else if (run_read(w, &w->vars[k], st, o->depth, NULL, NULL) < 0)
				rs->ok = false;
		}
	}
}

/* ------------------------------------------------------------------------------------------- */
/* the frame writer */

struct fctx {
	struct wl_state *w;
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
	struct dmaio_done dn[64] = { { .struct_size = sizeof(dn[0]) } };
	uint64_t t;
	int got, i;

	got = dmaio_queue_reap(c->w->fq.q, dn, 64, min, timeout_ms);
	if (got < 0)
		return got;
	t = now_ns();
	for (i = 0; i < got; i++) {
		unsigned s = (unsigned)dn[i].user_data;

		if (dn[i].user_data >= c->K || !c->busy[s] || c->nl >= c->cap) {
			report_note(c->w->rep, "frames lib:queue: a completion with user_data %" PRIu64 " that is not "
				    "in flight", dn[i].user_data);
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
static int frames_reset(struct wl_state *w)
{
	struct tfile *f = &w->ffile;
	int ret;

	if (f->df)
		dmaio_file_close(f->df);
	f->df = NULL;
	if (ftruncate(f->fd, 0) < 0 || lseek(f->fd, 0, SEEK_SET) < 0)
		return -errno;
	fsync(f->fd);
	posix_fadvise(f->fd, 0, 0, POSIX_FADV_DONTNEED);
	ret = dmaio_file_open(NULL, f->fd, 0, &f->df);
	if (ret < 0)
		f->df = NULL;
	return ret;
}

/*
 * nframes frames at --fps with variant v. Frame i arrives at t0 + i / fps into slot i % K; it is
 * dropped when that slot still holds a frame not yet saved. Sync variants write it when they get
 * to it (late when the previous writes took longer than a frame); the queue variant submits it at
 * once. The last step is a fdatasync(). With verify, the file is read back and every frame
 * written compared with its slot.
 */
static int run_frames(struct wl_state *w, const struct var *v, unsigned nframes, struct res *rs, int run, bool verify)
{
	const struct opts *o = w->o;
	struct fctx c = { 0 };
	uint64_t period = 1000000000ull / o->fps, t0, t1, written = 0, dropped = 0, i;
	double c0, c1;
	struct dmaio_buf *b = v->kind == V_BASE ? NULL : w->flb[v->h].b;
	int ret = 0, qfd = -1;

	ret = frames_reset(w);
	if (ret < 0 && v->kind != V_BASE && v->kind != V_SYNC)
		return ret;
	c.w = w;
	c.F = o->frame_size;
	c.K = o->ring;
	c.rs = rs;
	c.sub_ns = xcalloc(c.K, sizeof(*c.sub_ns));
	c.busy = xcalloc(c.K, sizeof(*c.busy));
	c.busy_until = xcalloc(c.K, sizeof(*c.busy_until));
	c.cap = nframes;
	c.lat = xcalloc(nframes, sizeof(*c.lat));
	c.libns = xcalloc(nframes, sizeof(*c.libns));
	c.slot_of = xcalloc(nframes, sizeof(*c.slot_of));
	if (v->kind == V_QUEUE)
		qfd = dmaio_queue_fd(w->fq.q);
	ret = 0;

	c0 = cpu_now();
	t0 = now_ns();
	for (i = 0; i < nframes && !ret; i++) {
		uint64_t ti = t0 + i * period, ts, tc;
		unsigned s = (unsigned)(i % c.K);
		uint64_t off = written * c.F;
		struct dmaio_xfer x = { .struct_size = sizeof(x) };
		ssize_t r = 0;

		if (v->kind == V_QUEUE) {
			struct dmaio_io io = { .struct_size = sizeof(io) };
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
			io.file = w->ffile.df;
			io.file_off = (int64_t)off;
			io.len = c.F;
			io.user_data = s;
			c.sub_ns[s] = now_ns();
			q = dmaio_queue_submit(w->fq.q, &io, 1);
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
			r = full_write(w->ffile.fd, w->fanon + (uint64_t)s * c.F, (size_t)c.F);
			break;
		case V_SYNC:
			r = dmaio_fd_write(w->ffile.fd, (off_t)off, b, (size_t)s * c.F, (size_t)c.F, 0, &x);
			break;
		case V_FILE:
			r = dmaio_file_write(w->ffile.df, (off_t)off, b, (size_t)s * c.F, (size_t)c.F, 0, &x);
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
			w->fq.broken = true;
			snprintf(w->fq.note, sizeof(w->fq.note), "dmaio_queue_reap failed (%s) with %u frames in flight",
				 errname(q), c.nin);
			if (!ret)
				ret = q;
			break;
		}
	}
	if (!ret && c.err)
		ret = c.err;
	if (!ret && fdatasync(w->ffile.fd) < 0)
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

			if (full_pread(w->ffile.fd, tmp, (size_t)c.F, i * c.F) != (ssize_t)c.F) {
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
		int n = rs->n;

		rs->lat[n] = pcts_of(c.lat, c.nl);
		sort_doubles(c.libns, c.nlib);
		rs->libns[n] = pct_sorted(c.libns, c.nlib, 0.50);
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

static void setup_frames(struct wl_state *w)
{
	const struct opts *o = w->o;
	struct set *st = &w->sets[w->nsets++];
	uint64_t F = o->frame_size, s;
	struct statfs sfs;
	int k, i;

	st->type = S_FRAMES;
	st->count = o->frames;
	st->size = F;
	st->files = &w->ffile;
	st->nfiles = 1;
	w->fring_size = F * o->ring;
	if (statfs(o->dir, &sfs) == 0 && (uint64_t)sfs.f_bavail * (uint64_t)sfs.f_bsize < F * o->frames + 64 * MIB)
		die("%s: not enough free space for %" PRIu64 " MiB of frames", o->dir, F * o->frames / MIB);
	create_file(w, &w->ffile, "frames", -1, 0, 0);
	if (frames_reset(w) < 0)
		report_note(w->rep, "frames: dmaio_file_open of the frames file failed: lib:file and lib:queue skipped");
	/* the ring: slot s holds the pattern of [s * F, (s + 1) * F) */
	w->fanon = mem_anon(w->fring_size);
	for (s = 0; s < o->ring; s++)
		fill_pattern(w->fanon + s * F, s * F, (size_t)F);
	for (i = 0; i < w->nlb; i++) {
		int ret = alloc_dbuf(o->heaps[i], (size_t)w->fring_size, &w->flb[i].b, &w->flb[i].map);

		if (ret < 0)
			die("allocate %" PRIu64 " KiB from %s: %s", w->fring_size / KIB, heap_desc(o->heaps[i]),
			    strerror(-ret));
		if (w->flb[i].map) {
			sync_begin(w->flb[i].b, DMAIO_SYNC_WRITE);
			memcpy(w->flb[i].map, w->fanon, w->fring_size);
			sync_end(w->flb[i].b, DMAIO_SYNC_WRITE);
		} else {
			report_note(w->rep, "frames: the %s buffer cannot be mapped: its frames hold zeros and are not "
				    "verified", dmaio_buf_provider(w->flb[i].b));
		}
	}
	/* each variant checked (and warmed up) with a few frames */
	for (k = 0; k < w->nvars; k++) {
		struct res *rs = &st->res[k];
		int ret;

		rs->ok = var_can_run(w, &w->vars[k], st);
		if (!rs->ok) {
			snprintf(rs->note, sizeof(rs->note), "%s", w->vars[k].kind == V_QUEUE && !w->fq.q ? w->fq.note :
				 "dmaio_file_open failed");
			continue;
		}
		ret = run_frames(w, &w->vars[k], o->frames < 2 * o->ring ? o->frames : 2 * o->ring, rs, -1,
				 o->verify && (w->vars[k].kind == V_BASE || w->flb[w->vars[k].h].map));
		if (ret < 0) {
			rs->ok = false;
			snprintf(rs->note, sizeof(rs->note), "failed: %s (%s)", strerror(-ret), errname(ret));
			fprintf(stderr, PROG ": frames %s: %s\n", vname(&w->vars[k], S_FRAMES), rs->note);
		}
	}
}

/* ------------------------------------------------------------------------------------------- */
/* entry points */

void wl_setup(struct bench *b)
{
	const struct opts *o = &b->o;
	struct wl_state *w = xcalloc(1, sizeof(*w));
	struct rlimit rl;
	int i, ret;

	b->wl = w;
	w->o = o;
	w->rep = &b->rep;
	w->rfile.fd = w->rfile.dfd = w->ffile.fd = w->ffile.dfd = -1;
	w->open_us = xcalloc((size_t)o->nfiles + 2, sizeof(*w->open_us));
	w->nlb = o->nheaps;
	/* registered files keep descriptors of their own: room for --files 4096 */
	if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < rl.rlim_max) {
		rl.rlim_cur = rl.rlim_max;
		setrlimit(RLIMIT_NOFILE, &rl);
	}
	w->vars[w->nvars++] = (struct var){ .kind = V_BASE };
	snprintf(w->vars[0].name, sizeof(w->vars[0].name), "base");
	for (i = 0; i < w->nlb; i++) {
		static const char *const kn[] = { "", "lib:sync", "lib:file", "lib:queue" };
		enum vkind k;

		for (k = V_SYNC; k <= V_QUEUE; k++) {
			struct var *v = &w->vars[w->nvars++];

			v->kind = k;
			v->h = i;
			if (w->nlb > 1) {
				const char *hn = o->heaps[i] ? o->heaps[i] : "default";
				int j, dup = 0;

				for (j = 0; j < i; j++)
					dup += !strcmp(o->heaps[j] ? o->heaps[j] : "default", hn);
				snprintf(v->name, sizeof(v->name), dup ? "%s@%.40s#%d" : "%s@%.40s", kn[k], hn, dup + 1);
			} else {
				snprintf(v->name, sizeof(v->name), "%s", kn[k]);
			}
		}
	}
	for (i = 0; i < 2; i++) {
		struct wlq *wq = i ? &w->fq : &w->rq;

		if (i ? !o->test_frames : !have_reads(o))
			continue;
		ret = dmaio_queue_new(NULL, o->depth, 0, &wq->q);
		if (ret < 0) {
			wq->q = NULL;
			snprintf(wq->note, sizeof(wq->note), "dmaio_queue_new: %s (%s)", strerror(-ret), errname(ret));
			note(b, "%s: lib:queue skipped", wq->note);
		}
	}
	if (have_reads(o))
		setup_reads(w);
	if (o->test_frames)
		setup_frames(w);
}

void wl_info(struct bench *b)
{
	struct wl_state *w = b->wl;
	const struct opts *o = &b->o;
	char a[32], c2[32], c3[32];
	int s, k;

	for (s = 0; s < w->nsets; s++) {
		const struct set *st = &w->sets[s];

		size_str(a, sizeof(a), st->size);
		if (st->type == S_RANGES) {
			size_str(c2, sizeof(c2), st->count * st->size);
			size_str(c3, sizeof(c3), w->rfile.size);
			report_info(&b->rep, "ranges: %" PRIu64 " x %s (%s) of one %s file at random %s-aligned offsets, "
				    "random order (seed %" PRIu64 "), into one buffer", st->count, a, c2, c3, a, o->seed);
		} else if (st->type == S_FILES) {
			size_str(c2, sizeof(c2), st->count * st->size);
			report_info(&b->rep, "files: %" PRIu64 " files x %s (%s), whole files into one buffer, each at its "
				    "own offset", st->count, a, c2);
		} else {
			report_info(&b->rep, "frames: %" PRIu64 " frames x %" PRIu64 " B at %u fps from a ring of %u "
				    "buffers, one file at sequential offsets (a new empty file for each variant), then "
				    "fdatasync()", st->count, st->size, o->fps, o->ring);
		}
	}
	if (have_reads(o)) {
		size_str(a, sizeof(a), o->chunk);
		for (s = 0; s < w->nlb; s++)
			report_info(&b->rep, "ranges/files: buffer %" PRIu64 " MiB from %s (%s)", w->rbuf_size / MIB,
				    w->lb[s].b ? dmaio_buf_provider(w->lb[s].b) : heap_desc(o->heaps[s]),
				    w->lb[s].b && dmaio_buf_kind(w->lb[s].b) == DMAIO_BUF_MEMFD ? "a memfd, not a dma-buf" :
				    "dma-buf");
		report_info(&b->rep, "base:uring-direct = O_DIRECT io_uring, %s, requests of at most %s, %u in flight, "
			    "into %s; lib:sync = dmaio_fd_read per range; lib:file = dmaio_file_read per range (files "
			    "registered once, outside the timing); lib:queue = dmaio_queue_submit/dmaio_queue_reap on one "
			    "dmaio_queue_new(depth %u), made once", w->ur.fixed ? "fixed buffers" : "unregistered buffers",
			    a, o->depth, o->base_memfd ? "memfd (shmem) memory" : "anonymous memory", o->depth);
		report_info(&b->rep, "cold before every variant: fdatasync + POSIX_FADV_DONTNEED of each file, residency "
			    "checked (cachestat, else mincore; more than 0.1%% cached fails); %s",
			    o->fresh ? "new buffers for every run" : "the same buffers for every run");
		if (w->nopen)
			report_info(&b->rep, "dmaio_file_open: %.0f us median (min %.0f, max %.0f) over %d files",
				    median(w->open_us, w->nopen), vmin(w->open_us, w->nopen), vmax(w->open_us, w->nopen),
				    w->nopen);
	}
	if (o->test_frames)
		report_info(&b->rep, "frames: base:write = write() from anonymous memory; lib:sync = dmaio_fd_write; "
			    "lib:file = dmaio_file_write; lib:queue = dmaio_queue_submit per frame, ppoll(dmaio_queue_fd) "
			    "until the next frame, dmaio_queue_reap(min 0, timeout 0); latency = submit to completion");
	for (s = 0; s < w->nsets; s++)
		for (k = 0; k < w->nvars; k++)
			if (!w->sets[s].res[k].ok)
				report_info(&b->rep, "%s %-18s SKIPPED: %s", stype_name(w->sets[s].type),
					    vname(&w->vars[k], w->sets[s].type), w->sets[s].res[k].note);
}

/* after a queue variant: everything submitted came back, every byte counted */
static void check_progress(struct wl_state *w, const struct wlq *wq, const char *what)
{
	struct dmaio_progress p = { .struct_size = sizeof(p) };
	int ret;

	if (!wq->q || wq->broken)
		return;
	ret = dmaio_queue_get_progress(wq->q, &p);
	if (ret < 0)
		report_note(w->rep, "%s: dmaio_queue_get_progress: %s", what, strerror(-ret));
	else if (p.submitted != p.completed || p.completed != p.reaped || p.bytes_done != p.bytes_submitted ||
		 p.cancelled)
		report_note(w->rep, "%s: dmaio_queue_get_progress after the run: submitted %" PRIu64 ", completed %" PRIu64
			    ", reaped %" PRIu64 ", cancelled %" PRIu64 ", bytes %" PRIu64 " of %" PRIu64, what,
			    p.submitted, p.completed, p.reaped, p.cancelled, p.bytes_done, p.bytes_submitted);
}

void wl_run(struct bench *b)
{
	struct wl_state *w = b->wl;
	const struct opts *o = &b->o;
	bool tty = interactive(STDERR_FILENO);
	int r, s, kk, k;

	for (r = 0; r < o->runs; r++) {
		if (r > 0 && o->fresh && have_reads(o))
			alloc_read_bufs(w, r);
		for (s = 0; s < w->nsets; s++) {
			struct set *st = &w->sets[s];

			if (tty)
				fprintf(stderr, "\r\033[K" PROG ": %s run %d/%d", stype_name(st->type), r + 1, o->runs);
			/* alternate the order of the variants between runs */
			for (kk = 0; kk < w->nvars; kk++) {
				const struct var *v;
				struct res *rs;
				uint64_t t0, t1;
				double c0, c1, resid;
				int ret;

				k = r % 2 ? w->nvars - 1 - kk : kk;
				v = &w->vars[k];
				rs = &st->res[k];
				if (!rs->ok || rs->err || (v->kind == V_QUEUE && !var_can_run(w, v, st)))
					continue;
				if (st->type == S_FRAMES) {
					ret = run_frames(w, v, o->frames, rs, r, o->verify && r == 0 &&
							 (v->kind == V_BASE || w->flb[v->h].map));
					if (ret < 0) {
						rs->err = ret;
						note(b, "frames %s: %s", vname(v, S_FRAMES), strerror(-ret));
					} else if (v->kind == V_QUEUE) {
						check_progress(w, &w->fq, "frames lib:queue");
					}
					continue;
				}
				resid = make_cold(st->fds, st->lens, (int)st->nfiles, &w->resid_how);
				w->lat.n = 0;
				samples_reserve(&w->lat, st->nr + st->nb);
				c0 = cpu_now();
				t0 = now_ns();
				ret = run_read(w, v, st, 0, rs, &w->lat);
				t1 = now_ns();
				c1 = cpu_now();
				if (ret < 0) {
					rs->err = ret;
					note(b, "%s %s: %s", stype_name(st->type), vname(v, st->type), strerror(-ret));
					continue;
				}
				if (v->kind == V_QUEUE)
					check_progress(w, &w->rq, "ranges/files lib:queue");
				rs->mbps[rs->n] = (double)st->bytes * 1000.0 / (double)(t1 - t0);
				rs->cpu[rs->n] = (c1 - c0) / ((double)st->bytes / (double)GIB);
				rs->ms[rs->n] = (double)(t1 - t0) / 1e6;
				rs->resid[rs->n] = resid;
				rs->lat[rs->n] = pcts_of(w->lat.v, w->lat.n);
				rs->n++;
			}
		}
	}
	if (tty)
		fprintf(stderr, "\r\033[K");
}

static const char *res_provider(const struct wl_state *w, const struct var *v, bool frames)
{
	if (v->kind == V_BASE)
		return "anonymous";
	if (frames)
		return w->flb[v->h].b ? dmaio_buf_provider(w->flb[v->h].b) : heap_desc(w->o->heaps[v->h]);
	return w->lb[v->h].b ? dmaio_buf_provider(w->lb[v->h].b) : heap_desc(w->o->heaps[v->h]);
}

/* the columns every row of a variant has: method, provider, status, jobs, depth */
static struct row *var_row(struct bench *b, int sec, const struct set *st, const struct var *v, const struct res *rs,
			   const char *test)
{
	struct wl_state *w = b->wl;
	struct row *x = report_row(&b->rep, sec, test);

	row_str(x, COL_PROVIDER, "%s", res_provider(w, v, st->type == S_FRAMES));
	row_u64(x, COL_SIZE, st->size);
	row_str(x, COL_METHOD, "%s", vname(v, st->type));
	x->depth = v->kind == V_QUEUE || (v->kind == V_BASE && st->type != S_FRAMES) ? b->o.depth : 1;
	if (!rs->ok) {
		x->status = ROW_SKIPPED;
		snprintf(x->note, sizeof(x->note), "%s", rs->note);
	} else if (!rs->n) {
		x->status = ROW_FAILED;
		snprintf(x->note, sizeof(x->note), "%s", rs->err ? strerror(-rs->err) : "no result");
	}
	return x;
}

static void report_reads(struct bench *b, const struct set *st)
{
	struct wl_state *w = b->wl;
	const struct res *base = &st->res[0];
	double bm = base->n ? median(base->mbps, base->n) : NAN;
	const char *test = stype_name(st->type);
	int sec = report_section(&b->rep, test), k;
	char a[32], c2[32];

	size_str(a, sizeof(a), st->size);
	size_str(c2, sizeof(c2), st->count * st->size);
	if (st->type == S_RANGES)
		section_title(&b->rep, sec, "many ranges: %" PRIu64 " x %s (%s) random ranges of one cold file, random "
			      "order; medians of %d runs", st->count, a, c2, b->o.runs);
	else
		section_title(&b->rep, sec, "many files: %" PRIu64 " cold files x %s (%s), whole files into one buffer; "
			      "medians of %d runs", st->count, a, c2, b->o.runs);
	for (k = 0; k < w->nvars; k++) {
		const struct var *v = &w->vars[k];
		const struct res *rs = &st->res[k];
		struct row *x = var_row(b, sec, st, v, rs, test);

		if (x->status != ROW_OK)
			continue;
		row_str(x, COL_DIR, "read");
		row_str(x, COL_MODE, "cold");
		row_str(x, COL_PATH, "%s", main_path(v, rs, st->type));
		row_runs(x, rs->n, rs->mbps, rs->cpu, rs->ms);
		row_num(x, COL_X_DIRECT, isnan(bm) || bm <= 0 ? NAN : x->mbps[0] / bm);
		row_u64(x, COL_COUNT, st->count);
		row_latency(x, rs->n, rs->lat, v->kind == V_BASE ? "request" : "range");
		row_residency(x, rs->n, rs->resid, w->resid_how);
		if (v->kind != V_BASE)
			row_paths(x, rs->path_bytes, rs->fallbacks, rs->unaligned);
	}
}

static void report_frames(struct bench *b, const struct set *st)
{
	static const char *const pn[4] = { "p50", "p90", "p99", "max" };
	struct wl_state *w = b->wl;
	const struct opts *o = &b->o;
	const struct res *base = &st->res[0];
	double bm = base->n ? median(base->mbps, base->n) : NAN;
	int sec = report_section(&b->rep, "frames"), k, p, i;

	section_title(&b->rep, sec, "frame writer: %" PRIu64 " frames x %" PRIu64 " B at %u fps, ring of %u buffers, "
		      "one file; medians of %d runs", st->count, st->size, o->fps, o->ring, o->runs);
	section_title(&b->rep, sec, "  latency ms = submit to completion: each run's percentile, median over the "
		      "runs; max = over all runs; MB/s = bytes written / (frames / fps, or longer when the last write "
		      "and the final fdatasync() end later)");
	for (k = 0; k < w->nvars; k++) {
		const struct var *v = &w->vars[k];
		const struct res *rs = &st->res[k];
		struct row *x = var_row(b, sec, st, v, rs, "frames");
		double lat[4][MAX_RUNS];

		if (x->status != ROW_OK)
			continue;
		row_str(x, COL_DIR, "write");
		row_str(x, COL_MODE, "%ufps", o->fps);
		row_str(x, COL_PATH, "%s", main_path(v, rs, S_FRAMES));
		row_runs(x, rs->n, rs->mbps, rs->cpu, rs->cpu_frame);
		x->ms_decimals = 4;
		row_num(x, COL_X_BUFFERED, isnan(bm) || bm <= 0 ? NAN : x->mbps[0] / bm);
		row_u64(x, COL_COUNT, rs->dropped);
		x->extra = median(rs->cpu_frame, rs->n);
		row_latency(x, rs->n, rs->lat, "frame");
		x->frames = rs->frames;
		x->written = rs->written;
		x->dropped = rs->dropped;
		if (v->kind != V_BASE)
			row_paths(x, rs->path_bytes, rs->fallbacks, rs->unaligned);
		if (v->kind == V_QUEUE) {
			x->queue_stats = true;
			x->libns_p50 = median(rs->libns, rs->n);
			x->wakeups = rs->wakeups;
			x->empty_reaps = rs->empty_reaps;
		}
		for (i = 0; i < rs->n; i++)
			for (p = 0; p < 4; p++)
				lat[p][i] = pcts_get(&rs->lat[i], p);
		for (p = 0; p < 4; p++) {
			struct row *y = report_row(&b->rep, sec, "frames-latency");

			y->csv_only = true;
			row_str(y, COL_PROVIDER, "%s", res_provider(w, v, true));
			row_u64(y, COL_SIZE, st->size);
			row_str(y, COL_DIR, "write");
			row_str(y, COL_MODE, "%s", pn[p]);
			row_str(y, COL_METHOD, "%s", vname(v, S_FRAMES));
			row_str(y, COL_PATH, "%s", main_path(v, rs, S_FRAMES));
			row_runs(y, rs->n, NULL, NULL, lat[p]);
			y->ms_decimals = 4;
			row_u64(y, COL_COUNT, rs->written);
		}
	}
}

void wl_report(struct bench *b)
{
	struct wl_state *w = b->wl;

	for (int s = 0; s < w->nsets; s++) {
		if (w->sets[s].type == S_FRAMES)
			report_frames(b, &w->sets[s]);
		else
			report_reads(b, &w->sets[s]);
	}
	if (w->rq.broken)
		note(b, "lib:queue (ranges/files): %s; later queue runs skipped", w->rq.note);
	if (w->fq.broken)
		note(b, "lib:queue (frames): %s; later queue runs skipped", w->fq.note);
}

void wl_free(struct bench *b)
{
	struct wl_state *w = b->wl;
	unsigned i;
	int s;

	if (!w)
		return;
	close_tfile(&w->rfile);
	close_tfile(&w->ffile);
	for (i = 0; w->mfiles && i < w->o->nfiles; i++)
		close_tfile(&w->mfiles[i]);
	dmaio_queue_free(w->rq.q);
	dmaio_queue_free(w->fq.q);
	for (i = 0; i < (unsigned)w->nlb; i++) {
		dmaio_buf_free(w->lb[i].b);
		dmaio_buf_free(w->flb[i].b);
	}
	ub_exit(&w->ur);
	if (w->anon)
		munmap(w->anon, w->rbuf_size);
	if (w->fanon)
		munmap(w->fanon, w->fring_size);
	if (!b->o.keep) {
		if (w->rfile.path)
			unlink(w->rfile.path);
		if (w->ffile.path)
			unlink(w->ffile.path);
		for (i = 0; w->mfiles && i < w->o->nfiles; i++)
			if (w->mfiles[i].path)
				unlink(w->mfiles[i].path);
	}
	free(w->rfile.path);
	free(w->ffile.path);
	for (i = 0; w->mfiles && i < w->o->nfiles; i++)
		free(w->mfiles[i].path);
	free(w->mfiles);
	for (s = 0; s < w->nsets; s++) {
		free(w->sets[s].r);
		free(w->sets[s].b);
		free(w->sets[s].fds);
		free(w->sets[s].lens);
	}
	samples_free(&w->lat);
	free(w->sub_ns);
	free(w->open_us);
	free(w);
	b->wl = NULL;
}
