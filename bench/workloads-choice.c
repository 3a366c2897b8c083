// SPDX-License-Identifier: MIT
/*
 * dmaio-bench --tests choice: does the library's own choice of path move data as fast as the
 * best path forced by hand (issue 26, "choose the path by measured cost")? The matrix: for each
 * provider (--heap), buffer size (--choice-bufs), range size (--choice-ranges) and direction
 * (--dirs), one buffer from the provider is moved whole as buffer / range ranges in random
 * order, each at the file offset equal to its buffer offset, through one dmaio_queue of --depth
 * (as lib:queue of workloads-queue.c), by each method:
 *
 *   base:uring-direct  O_DIRECT io_uring of the same ranges into anonymous memory
 *                      (baselines.c): requests of at most --chunk, --depth in flight
 *   lib:auto           the library's choice, range by range; its path is the one the
 *                      majority of its completions name (dmaio_done.path)
 *   lib:PATH           each path forced: DMAIO_RW_PATH(p) | DMAIO_RW_NO_FALLBACK in every
 *                      range; a path that refuses (-EOPNOTSUPP) "cannot serve" the cell
 *
 * Reads are cold (the file's own pages dropped and checked, cache.c), writes are timed with
 * their sync: fdatasync() for the baseline, dmaio_file_sync() for the library's methods (what
 * an application that wants its writes durable calls; the library charges the sync's time to
 * the page-cache writes before it). The buffers are allocated once per run: a provider's
 * buffer serves every range size and direction of its size, and so does the baseline's
 * memory. Before the first timed run every method of every cell moves the whole buffer once,
 * cold as a timed pass, and every byte is checked, which also finds the paths that cannot
 * serve; each later run warms every method up on its new buffer. The methods of a cell run back to back, their order
 * reversed every other run; then (--choice-repeat, 1 by default) the fastest forced path so far
 * and lib:auto run again, side by side, in turn which first.
 *
 * The verdict of a cell compares lib:auto with the fastest forced path: ok at >= 0.90x, miss
 * below, FAIL below 1/1.5; "~" marks a miss or FAIL whose gap is inside the fastest path's own
 * spread (its max/min over its samples). bench/verdict.py computes the same from the CSV or
 * the JSON.
 */
#include "bench.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/statfs.h>
#include <sys/uio.h>
#include <unistd.h>

#define CH_MAX_METHODS (1 + DMAIO_PATH_COUNT) /* the baseline, auto, each forced path */
#define CH_BATCH 64                 /* ranges per dmaio_queue_submit / dmaio_queue_reap */
#define CH_REAP_TIMEOUT_MS 60000    /* a queue that completes nothing for a minute is broken */
#define CH_BUSY_MAX 10000           /* -EBUSY retries of one pass before it counts as failed */
#define CH_WARM_BYTES (4 * MIB)     /* a method's warm-up on a new buffer (at least one range) */
#define CH_CHUNK (8 * MIB)          /* the file written, restored and read back in pieces */
#define CH_OK 0.90                  /* lib:auto / the best forced path at or above: ok */
#define CH_FAIL (1 / 1.5)           /* below: FAIL; in between: miss */
#define M_BASE (-1)                 /* cmethod.path of the baseline */

/* The write checks give each pass a pattern of its own (pattern offset k << 40, plus the file
 * offset), so a write that leaves the file as it was is caught without scrambling it first. */
#define CHECK_PATTERN(k) ((uint64_t)(k) << 40)

struct cmethod {
	char name[32];
	int path;               /* M_BASE, DMAIO_PATH_AUTO, or the path forced */
};

enum cstate { C_OK, C_CANNOT, C_FAILED };

/* one method in one cell */
struct cres {
	enum cstate state;
	char note[320];
	int n;
	double mbps[MAX_RUNS];
	double cpu[MAX_RUNS];   /* CPU s per GiB */
	double ms[MAX_RUNS];    /* wall time of the pass */
	double resid[MAX_RUNS]; /* page-cache residency of the file before the pass */
	uint64_t done_count[DMAIO_PATH_SLOTS]; /* completions per dmaio_done.path, timed passes */
	uint64_t path_bytes[DMAIO_PATH_SLOTS];
	uint64_t fallbacks, unaligned, busy;
	/* DMAIO_BENCH_TRACE=1: the paths of a timed pass in completion order, as runs */
	char trace[480];
	int tr_path;
	uint64_t tr_n;
};

static bool trace_on(void)
{
	static int on = -1;

	if (on < 0) {
		const char *v = secure_getenv("DMAIO_BENCH_TRACE");

		on = v && *v && strcmp(v, "0");
	}
	return on;
}

/* the run of acc's trace so far into its text ("path xN, ..."; "..." once full) */
static void trace_flush(struct cres *acc)
{
	size_t l = strlen(acc->trace);

	if (acc->tr_n && l + 48 < sizeof(acc->trace))
		snprintf(acc->trace + l, sizeof(acc->trace) - l, "%s%s x%" PRIu64, l ? ", " : "",
			 dmaio_path_name((uint32_t)acc->tr_path), acc->tr_n);
	else if (acc->tr_n && l + 4 < sizeof(acc->trace) && !strstr(acc->trace, "..."))
		strcat(acc->trace, ", ...");
	acc->tr_n = 0;
}

struct cell {
	int h, bi, ri;          /* provider, buffer size, range size: indices into the options */
	int dir;                /* DIR_READ or DIR_WRITE */
	uint64_t nr;            /* ranges: buffer / range */
	struct cres res[CH_MAX_METHODS];
};

struct choice_state {
	const struct opts *o;
	struct report *rep;
	struct cmethod m[CH_MAX_METHODS];
	int nm;
	struct cell *cells;
	int ncells;
	uint32_t **order;       /* [bi * nchoice_ranges + ri]: the slots in the order they move;
				 * NULL when the range size does not divide the buffer size */
	/* the file: [0, fsize) holds the pattern of its own offsets between passes */
	char *path;
	int fd;                 /* O_RDWR through the page cache; registered as df */
	int dfd;                /* O_RDWR | O_DIRECT for the baseline, -1 when refused */
	struct dmaio_file *df;
	uint64_t fsize;
	struct dmaio_queue *q;
	bool qbroken;
	char qnote[160];
	struct uring_base ur;
	char ur_note[256];      /* why the baseline cannot run, "" when it can */
	struct breq *breqs;     /* the baseline's requests of one pass */
	size_t *retry;          /* ranges to submit again after -EBUSY */
	size_t retry_cap;
	char *tmp;              /* CH_CHUNK bytes */
	/* this run's memory */
	char *base_mem;
	uint64_t base_size;
	struct dmaio_buf *buf;
	void *map;
	char prov[MAX_LBUFS][64]; /* each --heap as the library names its buffers */
	uint64_t nchecks;       /* write checks made: their patterns */
	const char *resid_how;
};

static uint64_t buf_size(const struct choice_state *c, const struct cell *cl)
{
	return c->o->choice_bufs[cl->bi];
}

static uint64_t range_size(const struct choice_state *c, const struct cell *cl)
{
	return c->o->choice_ranges[cl->ri];
}

static const uint32_t *cell_order(const struct choice_state *c, const struct cell *cl)
{
	return c->order[cl->bi * c->o->nchoice_ranges + cl->ri];
}

static uint32_t cell_op(const struct cell *cl)
{
	return cl->dir == DIR_READ ? DMAIO_OP_READ : DMAIO_OP_WRITE;
}

/* "memfd 16M/4K read", for messages */
static const char *cell_name(const struct choice_state *c, const struct cell *cl, char *out,
			     size_t len)
{
	char b[32], r[32];

	size_str(b, sizeof(b), buf_size(c, cl));
	size_str(r, sizeof(r), range_size(c, cl));
	snprintf(out, len, "%s %s/%s %s", c->prov[cl->h], b, r, dir_name(cl->dir));
	return out;
}

/* splitmix64: the random order of the ranges, the same for every provider and direction */
static uint64_t next_rand(uint64_t *s)
{
	uint64_t z = (*s += 0x9e3779b97f4a7c15ull);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

/* ------------------------------------------------------------------------------------------- */
/* moving one cell's ranges */

/* the baseline's requests of the first n ranges (split at --chunk and at the registered
 * pieces) */
static size_t base_prepare(struct choice_state *c, const struct cell *cl, size_t n)
{
	const uint32_t *ord = cell_order(c, cl);
	uint64_t R = range_size(c, cl);
	size_t nb = 0, i;

	for (i = 0; i < n; i++) {
		uint64_t off = (uint64_t)ord[i] * R;

		nb += breq_split(c->breqs + nb, c->dfd, off, off, R, c->o->chunk);
	}
	return nb;
}

static void account(struct cres *acc, const struct dmaio_done *d)
{
	if (!acc)
		return;
	if (d->path < DMAIO_PATH_SLOTS) {
		acc->done_count[d->path]++;
		acc->path_bytes[d->path] += d->done;
	}
	if (trace_on()) {
		if ((int)d->path != acc->tr_path)
			trace_flush(acc);
		acc->tr_path = (int)d->path;
		acc->tr_n++;
	}
	acc->fallbacks += d->fallbacks;
	acc->unaligned += d->unaligned;
}

/* the next batch: the ranges to retry first (from the top of the stack), then new ones */
static int fill_batch(struct choice_state *c, struct dmaio_buf *buf, const struct cell *cl,
		      uint32_t flags, struct dmaio_io *ios, size_t next, size_t n, size_t nretry,
		      size_t *from_retry)
{
	const uint32_t *ord = cell_order(c, cl);
	uint64_t R = range_size(c, cl);
	int k = 0;

	*from_retry = 0;
	memset(ios, 0, sizeof(*ios) * CH_BATCH);
	while (k < CH_BATCH && (*from_retry < nretry || next < n)) {
		size_t idx = *from_retry < nretry ? c->retry[nretry - 1 - (*from_retry)++] : next++;
		uint64_t off = (uint64_t)ord[idx] * R;

		ios[k].struct_size = sizeof(ios[k]);
		ios[k].op = cell_op(cl);
		ios[k].file = c->df;
		ios[k].file_off = off;
		ios[k].buf = buf;
		ios[k].buf_off = off;
		ios[k].len = R;
		ios[k].flags = flags;
		ios[k].user_data = idx;
		k++;
	}
	return k;
}

/*
 * The first n ranges of the cell through the queue, flags in every range: submitted as the
 * queue takes them, reaped until all are back. A range that completes with -EBUSY and nothing
 * done (a forced path that could not start now: transient, the header says) is submitted
 * again. acc (may be NULL) gets the library's accounting. 0, -EOPNOTSUPP when the forced path
 * refused a range (the rest are cancelled), or the first error.
 */
static int queue_move(struct choice_state *c, struct dmaio_buf *buf, const struct cell *cl,
		      uint32_t flags, size_t n, struct cres *acc)
{
	struct dmaio_io ios[CH_BATCH];
	struct dmaio_done dn[CH_BATCH] = { { .struct_size = sizeof(dn[0]) } };
	uint64_t R = range_size(c, cl);
	size_t next = 0, nretry = 0, inflight = 0, busy = 0, from_retry;
	int ret = 0, got, i, k, s;

	if (c->qbroken)
		return -EIO;
	while (inflight || (!ret && (next < n || nretry))) {
		if (!ret && (next < n || nretry)) {
			k = fill_batch(c, buf, cl, flags, ios, next, n, nretry, &from_retry);
			s = dmaio_queue_submit(c->q, ios, (uint32_t)k);
			if (s < 0 && s != -EAGAIN)
				ret = s;
			s = s < 0 ? 0 : s;
			/* the accepted ones are the first s: the retries, then new ranges */
			if ((size_t)s <= from_retry) {
				nretry -= (size_t)s;
			} else {
				next += (size_t)s - from_retry;
				nretry -= from_retry;
			}
			inflight += (size_t)s;
			if (s == k && (next < n || nretry))
				continue; /* room left, maybe: fill the queue before reaping */
			if (!inflight) {
				/* refused with nothing in flight: not full (a library bug) */
				ret = ret ? ret : -EAGAIN;
				break;
			}
		}
		got = dmaio_queue_reap(c->q, dn, CH_BATCH, 1, CH_REAP_TIMEOUT_MS);
		if (got < 0) {
			c->qbroken = true;
			snprintf(c->qnote, sizeof(c->qnote), "dmaio_queue_reap failed (%s) with "
				 "%zu ranges in flight", errname(got), inflight);
			return got;
		}
		for (i = 0; i < got; i++) {
			const struct dmaio_done *d = &dn[i];

			inflight--;
			if (d->user_data >= n) {
				/* not a range of this pass: the queue made it up */
				report_note(c->rep, "choice: a completion with user_data %" PRIu64
					    " that was never submitted", d->user_data);
				ret = ret ? ret : -EPROTO;
				continue;
			}
			if (d->res == -EBUSY && d->done == 0 && !ret && busy < CH_BUSY_MAX &&
			    nretry < c->retry_cap) {
				busy++;
				c->retry[nretry++] = (size_t)d->user_data;
				continue;
			}
			account(acc, d);
			if (d->res < 0 && !ret)
				ret = (int)d->res;
			else if (d->res >= 0 && (uint64_t)d->res != R && !ret)
				ret = -ENODATA;
		}
		if (ret && inflight)
			dmaio_queue_cancel(c->q, 0, DMAIO_CANCEL_ALL);
	}
	if (acc)
		acc->busy += busy;
	return ret;
}

static uint32_t method_flags(const struct cmethod *m)
{
	if (m->path == DMAIO_PATH_AUTO)
		return 0;
	return DMAIO_RW_PATH((uint32_t)m->path) | DMAIO_RW_NO_FALLBACK;
}

/* A pass of writes made durable: the baseline's by fdatasync(), the library's through the
 * library (dmaio_file_sync(), as an application that wants its writes durable does: the sync's
 * time is charged to the page-cache writes before it, whose completions come before their
 * writeback), or with --choice-own-sync by fdatasync() of the registered file (an application
 * that syncs on its own: the library learns no writeback). 0 or -errno. */
static int write_sync(struct choice_state *c, bool base)
{
	if (base)
		return fdatasync(c->dfd) < 0 ? -errno : 0;
	if (c->o->choice_own_sync)
		return fdatasync(c->fd) < 0 ? -errno : 0;
	return dmaio_file_sync(c->df, DMAIO_SYNC_DATA);
}

/* the first n ranges of the cell (all when 0) with method k, writes synced, not timed: 0 or
 * -errno */
static int move(struct choice_state *c, const struct cell *cl, int k, size_t n)
{
	const struct cmethod *m = &c->m[k];
	int ret;

	if (!n || n > cl->nr)
		n = (size_t)cl->nr;
	if (m->path == M_BASE)
		ret = ub_run(&c->ur, cl->dir, c->base_mem, 0, c->breqs, base_prepare(c, cl, n),
			     c->o->depth, false, NULL);
	else
		ret = queue_move(c, c->buf, cl, method_flags(m), n, NULL);
	if (!ret && cl->dir == DIR_WRITE)
		ret = write_sync(c, m->path == M_BASE);
	return ret;
}

/* a forced path refused: why, in the library's words */
static void cannot_serve(struct choice_state *c, struct cell *cl, int k)
{
	struct dmaio_reason why = { .struct_size = sizeof(why) };
	struct cres *rs = &cl->res[k];
	int p;

	p = dmaio_fd_choose_path(c->fd, 0, c->buf, 0, range_size(c, cl), cell_op(cl),
				 method_flags(&c->m[k]), &why);
	rs->state = C_CANNOT;
	if (p >= 0)
		snprintf(rs->note, sizeof(rs->note), "cannot serve: EOPNOTSUPP in the queue "
			 "(dmaio_fd_choose_path says %s)", dmaio_path_name((uint32_t)p));
	else
		snprintf(rs->note, sizeof(rs->note), "cannot serve: %s",
			 why.text[0] ? why.text : errname(p));
}

static void failed(struct choice_state *c, struct cell *cl, int k, int ret, const char *what)
{
	struct cres *rs = &cl->res[k];
	char cn[128];

	if (ret == -EOPNOTSUPP && c->m[k].path > 0) {
		cannot_serve(c, cl, k);
		return;
	}
	rs->state = C_FAILED;
	snprintf(rs->note, sizeof(rs->note), "%s: %s (%s)", what, strerror(-ret), errname(ret));
	fprintf(stderr, PROG ": choice %s %s: %s\n", cell_name(c, cl, cn, sizeof(cn)),
		c->m[k].name, rs->note);
}

/* the memory method k moves into or out of (NULL: not mapped), and its dma-buf (NULL: none) */
static char *method_mem(struct choice_state *c, int k, struct dmaio_buf **owner)
{
	if (c->m[k].path == M_BASE) {
		*owner = NULL;
		return c->base_mem;
	}
	*owner = c->buf;
	return c->map;
}

/* len bytes of mem: byte >= 0 in every byte, else the pattern of pat + offset */
static void fill_mem(char *mem, struct dmaio_buf *owner, int byte, uint64_t pat, uint64_t len)
{
	if (owner)
		dmaio_buf_sync_begin(owner, DMAIO_SYNC_WRITE);
	if (byte >= 0)
		memset(mem, byte, (size_t)len);
	else
		fill_pattern(mem, pat, (size_t)len);
	if (owner)
		dmaio_buf_sync_end(owner, DMAIO_SYNC_WRITE);
}

/* does [0, len) of the file hold the pattern of pat + offset? -1, else the first bad offset */
static int64_t check_file(struct choice_state *c, uint64_t pat, uint64_t len)
{
	uint64_t off;

	if (fdatasync(c->fd) < 0)
		die("choice: fdatasync of the test file: %s", strerror(errno));
	/* from the disk, not from pages a buffered path left behind */
	posix_fadvise(c->fd, 0, (off_t)len, POSIX_FADV_DONTNEED);
	for (off = 0; off < len; off += CH_CHUNK) {
		size_t l = (size_t)(len - off < CH_CHUNK ? len - off : CH_CHUNK);
		int64_t bad;

		if (full_pread(c->fd, c->tmp, l, off) != (ssize_t)l)
			die("choice: read back the test file: %s", strerror(errno));
		bad = check_pattern(c->tmp, pat + off, l);
		if (bad >= 0)
			return bad - (int64_t)pat;
	}
	return -1;
}

/* [0, len) of the file: the pattern of its offsets (made, and restored after write checks) */
static void write_file(struct choice_state *c, uint64_t len)
{
	uint64_t off;

	for (off = 0; off < len; off += CH_CHUNK) {
		size_t l = (size_t)(len - off < CH_CHUNK ? len - off : CH_CHUNK);

		fill_pattern(c->tmp, off, l);
		if (full_pwrite(c->fd, c->tmp, l, off) != (ssize_t)l)
			die("choice: write %s: %s", c->path, strerror(errno));
	}
	if (fdatasync(c->fd) < 0)
		die("choice: fdatasync %s: %s", c->path, strerror(errno));
}

/* one cell, method k, the whole buffer once with the bytes checked (reads: the memory poisoned
 * first; writes: a pattern of their own, read back from the disk) */
static void check_one(struct choice_state *c, struct cell *cl, int k)
{
	struct dmaio_buf *owner;
	char *mem = method_mem(c, k, &owner), cn[128];
	uint64_t B = buf_size(c, cl), pat = 0;
	int64_t bad;
	int ret;

	if (cl->dir == DIR_WRITE && mem) {
		pat = CHECK_PATTERN(++c->nchecks);
		fill_mem(mem, owner, -1, pat, B);
	} else if (mem) {
		fill_mem(mem, owner, 0xa5, 0, B);
	}
	/* cold, as every timed pass is: the library learns from this pass too (it is auto's
	 * only lesson before its first timed pass), and the previous check left the buffer's
	 * part of the file in the page cache (its read-back, or the reads), in the large
	 * folios of readahead. Warm, our 7.3 VM's 4 KiB writes into a 512 MiB CMA buffer
	 * taught `buffered` 8.1x and 16.7x, cold 1.7x, the 1.4-2.1x it measures in the timed
	 * passes, and auto's first pass began on a path 3x slower (bench/RESULTS.md,
	 * session 40) */
	make_cold(&c->fd, &c->fsize, 1, &c->resid_how);
	ret = move(c, cl, k, 0);
	if (ret < 0) {
		failed(c, cl, k, ret, "first pass");
		return;
	}
	if (!mem) {
		report_note(c->rep, "choice: the %s buffer cannot be mapped: its data is not "
			    "verified", c->prov[cl->h]);
		return;
	}
	if (cl->dir == DIR_READ) {
		if (owner)
			dmaio_buf_sync_begin(owner, DMAIO_SYNC_READ);
		bad = check_pattern(mem, 0, (size_t)B);
		if (owner)
			dmaio_buf_sync_end(owner, DMAIO_SYNC_READ);
	} else {
		bad = check_file(c, pat, B);
	}
	if (bad >= 0) {
		struct cres *rs = &cl->res[k];

		rs->state = C_FAILED;
		snprintf(rs->note, sizeof(rs->note), "verification failed: wrong bytes at offset %"
			 PRId64 " after the %s", bad, dir_name(cl->dir));
		fprintf(stderr, PROG ": choice %s %s: %s\n", cell_name(c, cl, cn, sizeof(cn)),
			c->m[k].name, rs->note);
	}
}

/*
 * Before the first timed run, on the first buffers: every method of every cell of provider h
 * and buffer size bi once, checked. The reads first, while the file holds the pattern of its
 * offsets; then the writes, each with a pattern of its own; then the file and the memory get
 * the pattern of the offsets back, which the timed writes then write again and again.
 */
static void check_group(struct choice_state *c, int h, int bi)
{
	uint64_t B = c->o->choice_bufs[bi];
	bool wrote = false;
	int i, k, d;

	for (d = 0; d < NDIRS; d++) {
		for (i = 0; i < c->ncells; i++) {
			struct cell *cl = &c->cells[i];

			if (cl->h != h || cl->bi != bi || cl->dir != d)
				continue;
			for (k = 0; k < c->nm; k++) {
				if (cl->res[k].state != C_OK)
					continue;
				check_one(c, cl, k);
				wrote |= d == DIR_WRITE;
			}
		}
	}
	if (!wrote)
		return;
	write_file(c, B);
	if (c->base_mem)
		fill_pattern(c->base_mem, 0, (size_t)B);
	if (c->map)
		fill_mem(c->map, c->buf, -1, 0, B);
}

/* Later runs: each method once per direction on a few ranges of its new buffer (first-use
 * costs: registration, mapping), outside the timing; in the first cell of the direction that
 * it serves (the one with the smallest ranges). */
static void warm_group(struct choice_state *c, int h, int bi)
{
	int i, k, d;

	for (k = 0; k < c->nm; k++) {
		for (d = 0; d < NDIRS; d++) {
			for (i = 0; i < c->ncells; i++) {
				struct cell *cl = &c->cells[i];
				uint64_t R = range_size(c, cl);

				if (cl->h != h || cl->bi != bi || cl->dir != d ||
				    cl->res[k].state != C_OK)
					continue;
				move(c, cl, k, R >= CH_WARM_BYTES ? 1 :
				     (size_t)(CH_WARM_BYTES / R));
				break;
			}
		}
	}
}

/* DMAIO_BENCH_TRACE: what the library estimates now for the cell's first range, per path
 * (dmaio_fd_explain_path(): the ratio learned and its samples, the CPU, the pick) */
static void trace_explain(struct choice_state *c, const struct cell *cl, const char *when)
{
	struct dmaio_path_estimate e[DMAIO_PATH_COUNT] = { { .struct_size = sizeof(e[0]) } };
	uint64_t R = range_size(c, cl), off = (uint64_t)cell_order(c, cl)[0] * R;
	char cn[128], line[1024];
	size_t l = 0;
	int n;

	n = dmaio_fd_explain_path(c->fd, off, c->buf, off, R, cell_op(cl), 0, e, DMAIO_PATH_COUNT);
	if (n < 0) {
		fprintf(stderr, PROG ": trace %s: explain: %s\n", cell_name(c, cl, cn, sizeof(cn)),
			strerror(-n));
		return;
	}
	line[0] = 0;
	for (int i = 0; i < n && i < DMAIO_PATH_COUNT; i++)
		if (!e[i].status && l + 96 < sizeof(line))
			l += (size_t)snprintf(line + l, sizeof(line) - l,
					      "%s%s%s %.1f us (x%.2f, %u; cpu %.1f)", l ? ", " : "",
					      e[i].chosen ? "*" : "", dmaio_path_name(e[i].path),
					      (double)e[i].est_ns / 1e3, e[i].ratio_milli / 1e3,
					      e[i].samples, (double)e[i].cpu_ns / 1e3);
	fprintf(stderr, PROG ": trace %s %s: %s\n", cell_name(c, cl, cn, sizeof(cn)), when, line);
}

/* one sample of method k over the cell: as many passes as it takes to move
 * --choice-min-bytes (a 16 MiB buffer moves in a few ms, mostly the storage's noise), each
 * cold, writes each with their fdatasync(); the passes' times summed */
static void timed(struct choice_state *c, struct cell *cl, int k)
{
	struct cres *rs = &cl->res[k];
	uint64_t B = buf_size(c, cl), t = 0, t0, t1, tq, tsync = 0;
	uint64_t passes = B >= c->o->choice_min_bytes ? 1 : (c->o->choice_min_bytes + B - 1) / B;
	bool base = c->m[k].path == M_BASE;
	double cpu = 0, c0, c1, resid, resid_max = 0;
	size_t nb = 0;
	char what[96];
	int ret = 0;

	/* the baseline's requests are made outside the timing, once for every pass: the library
	 * gets ranges, the baseline the requests an application would have made of them before */
	if (base)
		nb = base_prepare(c, cl, (size_t)cl->nr);
	if (trace_on() && c->m[k].path == DMAIO_PATH_AUTO)
		trace_explain(c, cl, "estimates before");
	for (uint64_t p = 0; p < passes; p++) {
		resid = make_cold(&c->fd, &c->fsize, 1, &c->resid_how);
		if (resid > resid_max)
			resid_max = resid;
		c0 = cpu_now();
		t0 = now_ns();
		if (base)
			ret = ub_run(&c->ur, cl->dir, c->base_mem, 0, c->breqs, nb, c->o->depth,
				     false, NULL);
		else
			ret = queue_move(c, c->buf, cl, method_flags(&c->m[k]), (size_t)cl->nr,
					 rs);
		tq = now_ns();
		if (!ret && cl->dir == DIR_WRITE)
			ret = write_sync(c, base);
		t1 = now_ns();
		tsync += t1 - tq;
		c1 = cpu_now();
		if (ret < 0) {
			snprintf(what, sizeof(what), "run %d pass %" PRIu64, rs->n + 1, p + 1);
			failed(c, cl, k, ret, what);
			return;
		}
		t += t1 - t0;
		cpu += c1 - c0;
	}
	if (trace_on() && c->m[k].path == DMAIO_PATH_AUTO) {
		char cn[128];

		trace_flush(rs);
		fprintf(stderr, PROG ": trace %s %s run %d (%.1f ms, %.1f of them the sync): %s\n",
			cell_name(c, cl, cn, sizeof(cn)), c->m[k].name, rs->n + 1, (double)t / 1e6,
			(double)tsync / 1e6, rs->trace);
		trace_explain(c, cl, "estimates after");
		rs->trace[0] = 0;
		rs->tr_path = -1;
	} else if (trace_on() && !base) {
		snprintf(what, sizeof(what), "estimates after %s (%.1f ms, sync %.1f)", c->m[k].name,
			 (double)t / 1e6, (double)tsync / 1e6);
		trace_explain(c, cl, what);
	}
	rs->mbps[rs->n] = (double)(B * passes) * 1000.0 / (double)t;
	rs->cpu[rs->n] = cpu / ((double)(B * passes) / (double)GIB);
	rs->ms[rs->n] = (double)t / 1e6;
	rs->resid[rs->n] = resid_max;
	rs->n++;
}

/* ------------------------------------------------------------------------------------------- */
/* this run's memory */

static void base_alloc(struct choice_state *c, uint64_t B)
{
	unsigned n = (unsigned)((B + URING_PIECE - 1) / URING_PIECE), j;
	struct iovec *iov;
	int ret;

	if (c->ur_note[0])
		return; /* no baseline here */
	c->base_mem = c->o->base_memfd ? mem_memfd(B, true) : mem_anon(B);
	c->base_size = B;
	/* the first kernel copy into new memory is slow on some hosts (prime_buffers() in
	 * workloads-io.c): one pread of the file, outside the timing; it also gives the memory
	 * the pattern that the timed writes write */
	full_pread(c->fd, c->base_mem, (size_t)B, 0);
	iov = xcalloc(n, sizeof(*iov));
	for (j = 0; j < n; j++) {
		uint64_t off = (uint64_t)j * URING_PIECE;

		iov[j].iov_base = c->base_mem + off;
		iov[j].iov_len = (size_t)(B - off < URING_PIECE ? B - off : URING_PIECE);
	}
	ret = ub_register(&c->ur, iov, n);
	free(iov);
	if (ret < 0)
		report_note(c->rep, "choice: base:uring-direct: registering the memory failed (%s, "
			    "RLIMIT_MEMLOCK?): unregistered buffers used", strerror(-ret));
}

static void base_free(struct choice_state *c)
{
	ub_unregister(&c->ur);
	if (c->base_mem)
		munmap(c->base_mem, c->base_size);
	c->base_mem = NULL;
}

/* provider h's buffer of B bytes, mapped and primed as the baseline's memory is: 0 or -errno */
static int lib_alloc(struct choice_state *c, int h, uint64_t B)
{
	int ret = alloc_dbuf(c->o->heaps[h], (size_t)B, &c->buf, &c->map);

	if (ret < 0) {
		c->buf = NULL;
		c->map = NULL;
		return ret;
	}
	snprintf(c->prov[h], sizeof(c->prov[h]), "%s", dmaio_buf_provider(c->buf));
	if (c->map) {
		dmaio_buf_sync_begin(c->buf, DMAIO_SYNC_WRITE);
		full_pread(c->fd, c->map, (size_t)B, 0);
		dmaio_buf_sync_end(c->buf, DMAIO_SYNC_WRITE);
	}
	return 0;
}

static void lib_free(struct choice_state *c)
{
	dmaio_buf_free(c->buf);
	c->buf = NULL;
	c->map = NULL;
}

/* provider h has no buffer of size bi in this run: every method of its cells failed */
static void alloc_failed(struct choice_state *c, int h, int bi, int run, int err)
{
	char sz[32];
	int i, k;

	size_str(sz, sizeof(sz), c->o->choice_bufs[bi]);
	for (i = 0; i < c->ncells; i++) {
		struct cell *cl = &c->cells[i];

		if (cl->h != h || cl->bi != bi)
			continue;
		for (k = 0; k < c->nm; k++) {
			if (cl->res[k].state != C_OK)
				continue;
			cl->res[k].state = C_FAILED;
			snprintf(cl->res[k].note, sizeof(cl->res[k].note), "allocating %s from "
				 "%s: %s (%s)", sz, heap_desc(c->o->heaps[h]), strerror(-err),
				 errname(err));
		}
	}
	report_note(c->rep, "choice: allocating %s from %s failed in run %d: %s", sz,
		    heap_desc(c->o->heaps[h]), run + 1, strerror(-err));
}

/* ------------------------------------------------------------------------------------------- */
/* set-up */

static void make_orders(struct choice_state *c, size_t *max_breqs)
{
	const struct opts *o = c->o;
	char sz[32], rz[32];
	int bi, ri;

	c->order = xcalloc((size_t)o->nchoice_bufs * (size_t)o->nchoice_ranges, sizeof(*c->order));
	for (bi = 0; bi < o->nchoice_bufs; bi++) {
		uint64_t B = o->choice_bufs[bi];

		for (ri = 0; ri < o->nchoice_ranges; ri++) {
			uint64_t R = o->choice_ranges[ri], n = B / R, j, seed;
			uint32_t *ord;

			if (R > B || B % R || n > UINT32_MAX) {
				size_str(sz, sizeof(sz), B);
				size_str(rz, sizeof(rz), R);
				report_note(c->rep, "choice: %s ranges do not divide a %s buffer: "
					    "left out", rz, sz);
				continue;
			}
			/* a random permutation of the slots (Fisher-Yates), seeded by the sizes */
			ord = xcalloc((size_t)n, sizeof(*ord));
			seed = o->seed * 1000003u + B / 4096 * 31u + R / 4096;
			for (j = 0; j < n; j++)
				ord[j] = (uint32_t)j;
			for (j = n - 1; j > 0; j--) {
				uint64_t x = next_rand(&seed) % (j + 1);
				uint32_t t = ord[j];

				ord[j] = ord[x];
				ord[x] = t;
			}
			c->order[bi * o->nchoice_ranges + ri] = ord;
			if (breq_count(0, R, o->chunk) * n > *max_breqs)
				*max_breqs = breq_count(0, R, o->chunk) * (size_t)n;
			if (B > c->fsize)
				c->fsize = B;
		}
	}
}

static void make_cells(struct choice_state *c)
{
	const struct opts *o = c->o;
	int h, bi, ri, d;

	c->cells = xcalloc((size_t)o->nheaps * (size_t)o->nchoice_bufs * (size_t)o->nchoice_ranges *
			   NDIRS, sizeof(*c->cells));
	for (h = 0; h < o->nheaps; h++)
		for (bi = 0; bi < o->nchoice_bufs; bi++)
			for (ri = 0; ri < o->nchoice_ranges; ri++)
				for (d = 0; d < NDIRS; d++) {
					struct cell *cl;

					if (!o->dirs[d] || !c->order[bi * o->nchoice_ranges + ri])
						continue;
					cl = &c->cells[c->ncells++];
					cl->h = h;
					cl->bi = bi;
					cl->ri = ri;
					cl->dir = d;
					cl->nr = o->choice_bufs[bi] / o->choice_ranges[ri];
				}
}

static void make_file(struct choice_state *c)
{
	int ret;

	if (asprintf(&c->path, "%s/dmaio-bench-choice.%d.tmp", c->o->dir, (int)getpid()) < 0)
		die("out of memory");
	cleanup_add(c->path);
	c->fd = open(c->path, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
	if (c->fd < 0)
		die("create %s: %s", c->path, strerror(errno));
	write_file(c, c->fsize);
	c->dfd = open(c->path, O_RDWR | O_DIRECT | O_CLOEXEC);
	if (c->dfd < 0)
		snprintf(c->ur_note, sizeof(c->ur_note), "O_DIRECT open of %.120s failed (%s): use "
			 "--dir on a block filesystem", c->path, strerror(errno));
	else if ((ret = ub_init(&c->ur, c->o->depth)) < 0)
		snprintf(c->ur_note, sizeof(c->ur_note), "io_uring unavailable (%s)",
			 strerror(-ret));
	ret = dmaio_file_open(NULL, c->fd, 0, &c->df);
	if (ret < 0)
		die("choice: dmaio_file_open(%s): %s (%s)", c->path, strerror(-ret), errname(ret));
}

/* ------------------------------------------------------------------------------------------- */
/* entry points */

void choice_setup(struct bench *b)
{
	const struct opts *o = &b->o;
	struct choice_state *c = xcalloc(1, sizeof(*c));
	size_t max_breqs = 0;
	struct statfs sfs;
	uint64_t avail;
	int h, i, p, ret;

	b->ch = c;
	c->o = o;
	c->rep = &b->rep;
	c->fd = c->dfd = -1;

	/* the methods: the baseline, the library's choice, each path forced (--path: those
	 * named) */
	c->m[c->nm++] = (struct cmethod){ .name = "base:uring-direct", .path = M_BASE };
	c->m[c->nm++] = (struct cmethod){ .name = "lib:auto", .path = DMAIO_PATH_AUTO };
	for (p = 1; p < DMAIO_PATH_COUNT; p++) {
		if (o->paths_given && !o->paths[p])
			continue;
		c->m[c->nm].path = p;
		snprintf(c->m[c->nm].name, sizeof(c->m[0].name), "lib:%s",
			 dmaio_path_name((uint32_t)p));
		c->nm++;
	}
	make_orders(c, &max_breqs);
	make_cells(c);
	if (!c->ncells)
		die("choice: no cell to measure (--choice-bufs, --choice-ranges, --dirs)");
	for (h = 0; h < o->nheaps; h++)
		snprintf(c->prov[h], sizeof(c->prov[h]), "%s", heap_desc(o->heaps[h]));

	/* memory: the baseline's and one provider buffer at a time, and the file's page cache */
	avail = mem_available();
	if (avail && 3 * c->fsize > avail * 9 / 10)
		die("choice: a %" PRIu64 " MiB buffer needs about %" PRIu64 " MiB of memory, %"
		    PRIu64 " MiB available (smaller --choice-bufs)", c->fsize / MIB,
		    3 * c->fsize / MIB, avail / MIB);
	if (statfs(o->dir, &sfs) == 0 &&
	    (uint64_t)sfs.f_bavail * (uint64_t)sfs.f_bsize < c->fsize + 64 * MIB)
		die("%s: not enough free space for a %" PRIu64 " MiB test file", o->dir,
		    c->fsize / MIB);

	c->tmp = xcalloc(1, CH_CHUNK);
	make_file(c);
	ret = dmaio_queue_new(NULL, o->depth, 0, &c->q);
	if (ret < 0)
		die("choice: dmaio_queue_new(%u): %s (%s)", o->depth, strerror(-ret), errname(ret));
	c->breqs = xcalloc(max_breqs, sizeof(*c->breqs));
	/* what can come back busy at once: at most what the queue holds */
	c->retry_cap = (size_t)o->depth * DMAIO_QUEUE_RANGES_PER_DEPTH + CH_BATCH;
	c->retry = xcalloc(c->retry_cap, sizeof(*c->retry));
	for (i = 0; i < c->ncells && c->ur_note[0]; i++) {
		struct cres *rs = &c->cells[i].res[0];

		rs->state = C_CANNOT;
		snprintf(rs->note, sizeof(rs->note), "%s", c->ur_note);
	}
}

/* "16M,512M" */
static void sizes_str(char *out, size_t len, const uint64_t *v, int n)
{
	size_t l = 0;

	out[0] = '\0';
	for (int i = 0; i < n && l + 16 < len; i++) {
		char sz[32];

		size_str(sz, sizeof(sz), v[i]);
		l += (size_t)snprintf(out + l, len - l, "%s%s", i ? "," : "", sz);
	}
}

void choice_info(struct bench *b)
{
	struct choice_state *c = b->ch;
	const struct opts *o = &b->o;
	char bufs[256], ranges[256], provs[256], fs[32], ck[32], minb[32];
	const char *dirs = !o->dirs[DIR_WRITE] ? "read" : !o->dirs[DIR_READ] ? "write" :
			   "read,write";
	size_t l = 0;

	sizes_str(bufs, sizeof(bufs), o->choice_bufs, o->nchoice_bufs);
	sizes_str(ranges, sizeof(ranges), o->choice_ranges, o->nchoice_ranges);
	provs[0] = '\0';
	for (int i = 0; i < o->nheaps && l + 16 < sizeof(provs); i++)
		l += (size_t)snprintf(provs + l, sizeof(provs) - l, "%s%s", i ? "," : "",
				      o->heaps[i] ? o->heaps[i] : "default");
	size_str(fs, sizeof(fs), c->fsize);
	size_str(ck, sizeof(ck), o->chunk);
	size_str(minb, sizeof(minb), o->choice_min_bytes);
	report_info(&b->rep, "choice: %d cells = providers %s x buffers %s x ranges %s x %s; %d "
		    "methods each; %d runs (buffers allocated once per run); test file %s (%s)",
		    c->ncells, provs, bufs, ranges, dirs, c->nm, o->choice_runs, fs, c->path);
	report_info(&b->rep, "choice: every range of the buffer once, random order (seed %" PRIu64
		    "), file offset = buffer offset, one dmaio_queue_new(depth %u); "
		    "base:uring-direct = O_DIRECT io_uring of the same ranges into %s memory, "
		    "requests of at most %s, %u in flight; lib:PATH = DMAIO_RW_PATH(PATH) | "
		    "DMAIO_RW_NO_FALLBACK in every range", o->seed, o->depth,
		    o->base_memfd ? "memfd (shmem)" : "anonymous", ck, o->depth);
	report_info(&b->rep, "choice: reads cold (fdatasync + POSIX_FADV_DONTNEED of the file, "
		    "residency checked), writes with fdatasync() (the library's methods: %s); "
		    "a sample moves the buffer as often "
		    "as it takes to move %s (each pass cold, times summed); %s",
		    o->choice_own_sync ? "fdatasync() too, --choice-own-sync" : "dmaio_file_sync()",
		    minb, o->verify ?
		    "every method of every cell checked byte by byte once before the timed runs" :
		    "--no-verify: the data is not checked");
	if (getenv("DMAIO_PATH"))
		report_info(&b->rep, "DMAIO_PATH=%s is set: it steers lib:auto",
			    getenv("DMAIO_PATH"));
	if (c->ur_note[0])
		report_info(&b->rep, "choice: base:uring-direct SKIPPED: %s", c->ur_note);
}

/* the index of lib:auto among the methods, -1 when none */
static int auto_method(const struct choice_state *c)
{
	int k;

	for (k = 0; k < c->nm; k++)
		if (c->m[k].path == DMAIO_PATH_AUTO)
			return k;
	return -1;
}

static int best_forced(const struct choice_state *c, const struct cell *cl, double *mbps);

/* the cells of provider h and buffer size bi in one run: the methods back to back, their
 * order reversed every other run, then the --choice-repeat pairs */
static void run_group(struct choice_state *c, int h, int bi, int run)
{
	int i, kk, k, rp, ak = auto_method(c);

	for (i = 0; i < c->ncells; i++) {
		struct cell *cl = &c->cells[i];

		if (cl->h != h || cl->bi != bi)
			continue;
		for (kk = 0; kk < c->nm; kk++) {
			k = run % 2 ? c->nm - 1 - kk : kk;
			if (cl->res[k].state == C_OK)
				timed(c, cl, k);
		}
		/* --choice-repeat: the fastest forced path so far and lib:auto again, side by side,
		 * in turn which goes first. In a run's order lib:auto may come before the forced
		 * runs it would learn from (or after): here it has learned from them, and the best
		 * path's second sample says how far one sample of it can be trusted. */
		for (rp = 0; ak >= 0 && rp < c->o->choice_repeat; rp++) {
			double best = 0;
			int bk = best_forced(c, cl, &best), first, second;

			if (bk < 0 || cl->res[ak].state != C_OK)
				break;
			first = (run + rp) % 2 ? ak : bk;
			second = first == ak ? bk : ak;
			timed(c, cl, first);
			if (cl->res[second].state == C_OK)
				timed(c, cl, second);
		}
	}
}

/* one provider's buffer of size bi in run r: allocated, checked or warmed up, measured, freed */
static void run_buffer(struct choice_state *c, int h, int bi, int r, bool tty)
{
	char sz[32];
	int ret;

	size_str(sz, sizeof(sz), c->o->choice_bufs[bi]);
	/* a line per buffer in a log too: a VM run of the matrix takes an hour */
	fprintf(stderr, "%s" PROG ": choice run %d/%d, %s %s%s", tty ? "\r\033[K" : "", r + 1,
		c->o->choice_runs, c->prov[h], sz, tty ? "" : "\n");
	/* a provider without so much memory (a small CMA area): its cells fail, the others go
	 * on */
	ret = lib_alloc(c, h, c->o->choice_bufs[bi]);
	if (ret < 0) {
		alloc_failed(c, h, bi, r, ret);
		return;
	}
	if (r == 0 && c->o->verify)
		check_group(c, h, bi);
	else
		warm_group(c, h, bi);
	run_group(c, h, bi, r);
	lib_free(c);
}

void choice_run(struct bench *b)
{
	struct choice_state *c = b->ch;
	const struct opts *o = &b->o;
	bool tty = interactive(STDERR_FILENO);
	int r, bi, h, i;

	for (r = 0; r < o->choice_runs; r++) {
		for (bi = 0; bi < o->nchoice_bufs; bi++) {
			bool any = false;

			for (i = 0; i < c->ncells; i++)
				any |= c->cells[i].bi == bi;
			if (!any)
				continue;
			base_alloc(c, o->choice_bufs[bi]);
			for (h = 0; h < o->nheaps; h++)
				run_buffer(c, h, bi, r, tty);
			base_free(c);
		}
	}
	if (tty)
		fprintf(stderr, "\r\033[K");
}

/* the path most completions of a library method named, NULL when none */
static const char *majority(const struct cres *rs)
{
	uint64_t best = 0;
	int p, bp = -1;

	for (p = 0; p < (int)DMAIO_PATH_SLOTS; p++)
		if (rs->done_count[p] > best) {
			best = rs->done_count[p];
			bp = p;
		}
	return bp >= 0 ? dmaio_path_name((uint32_t)bp) : NULL;
}

/* max / min of a method's samples (1 with fewer than two) */
static double spread(const struct cres *rs)
{
	double lo = INFINITY, hi = 0;
	int j;

	for (j = 0; j < rs->n; j++) {
		lo = rs->mbps[j] < lo ? rs->mbps[j] : lo;
		hi = rs->mbps[j] > hi ? rs->mbps[j] : hi;
	}
	return rs->n >= 2 && lo > 0 ? hi / lo : 1;
}

/* the forced method with the highest median MB/s in the cell, -1 when none served */
static int best_forced(const struct choice_state *c, const struct cell *cl, double *mbps)
{
	int k, bk = -1;

	for (k = 0; k < c->nm; k++) {
		const struct cres *rs = &cl->res[k];
		double m;

		if (c->m[k].path <= 0 || rs->state != C_OK || !rs->n)
			continue;
		m = median(rs->mbps, rs->n);
		if (bk < 0 || m > *mbps) {
			*mbps = m;
			bk = k;
		}
	}
	return bk;
}

/* the row of method k in cell cl; NULL when it has no numbers (skipped or failed: said why) */
static struct row *cell_row(struct bench *b, int sec, const struct cell *cl, int k)
{
	struct choice_state *c = b->ch;
	const struct cres *rs = &cl->res[k];
	struct row *x = report_row(&b->rep, sec, "choice");
	const char *mp;

	row_str(x, COL_PROVIDER, "%s", c->prov[cl->h]);
	row_u64(x, COL_SIZE, range_size(c, cl));
	row_str(x, COL_DIR, "%s", dir_name(cl->dir));
	row_str(x, COL_MODE, "cold");
	row_str(x, COL_METHOD, "%s", c->m[k].name);
	row_u64(x, COL_COUNT, cl->nr);
	x->depth = c->o->depth;
	if (rs->state == C_CANNOT) {
		x->status = ROW_SKIPPED;
		snprintf(x->note, sizeof(x->note), "%s", rs->note);
		return NULL;
	}
	if (rs->state == C_FAILED || !rs->n) {
		x->status = ROW_FAILED;
		snprintf(x->note, sizeof(x->note), "%s", rs->state == C_FAILED ? rs->note :
			 "no result");
		return NULL;
	}
	mp = c->m[k].path == M_BASE ? "uring O_DIRECT" : majority(rs);
	row_str(x, COL_PATH, "%s", mp ? mp : "-");
	row_runs(x, rs->n, rs->mbps, rs->cpu, rs->ms);
	row_residency(x, rs->n, rs->resid, c->resid_how);
	if (c->m[k].path != M_BASE)
		row_paths(x, rs->path_bytes, rs->fallbacks, rs->unaligned);
	return x;
}

void choice_report(struct bench *b)
{
	struct choice_state *c = b->ch;
	const struct opts *o = &b->o;
	int sec = report_section(&b->rep, "choice"), i, k, j, nv[3] = { 0 }, nojudge = 0;
	int nnoisy = 0;
	bool noisy;
	uint64_t busy[CH_MAX_METHODS] = { 0 };
	double lo = INFINITY, hi = -INFINITY;

	section_title(&b->rep, sec, "path choice: each buffer moved whole as ranges of one size, "
		      "random order, file offset = buffer offset, one dmaio_queue of depth %u; "
		      "reads cold, writes with their sync (dmaio_file_sync()); medians of %d runs, each "
		      "ending a cell with %d more pair(s) of its fastest forced path and lib:auto",
		      o->depth, o->choice_runs, o->choice_repeat);
	section_title(&b->rep, sec, "verdict: ok = lib:auto >= %.2fx the fastest forced path, miss "
		      "= below, FAIL = below %.2fx (1/1.5), ~ = the fastest path's own samples spread "
		      "wider than lib:auto's gap to it (its max/min above best/auto); n/s = the forced "
		      "path cannot serve (refused under DMAIO_RW_NO_FALLBACK), ERR = failed", CH_OK,
		      CH_FAIL);
	for (i = 0; i < c->ncells; i++) {
		const struct cell *cl = &c->cells[i];
		const struct cres *base = &cl->res[0];
		double bm = base->n ? median(base->mbps, base->n) : NAN, best = NAN;
		int bk = best_forced(c, cl, &best);

		for (k = 0; k < c->nm; k++) {
			const struct cres *rs = &cl->res[k];
			struct row *x = cell_row(b, sec, cl, k);

			if (!x) {
				nojudge += k == 1;
				continue;
			}
			row_num(x, COL_X_DIRECT, isnan(bm) || bm <= 0 ? NAN : x->mbps[0] / bm);
			for (j = 0; j < rs->n; j++) {
				lo = rs->resid[j] < lo ? rs->resid[j] : lo;
				hi = rs->resid[j] > hi ? rs->resid[j] : hi;
			}
			busy[k] += rs->busy;
			if (c->m[k].path != DMAIO_PATH_AUTO)
				continue;
			if (bk < 0) {
				nojudge++;
				continue;
			}
			/* the cell's verdict rides on its lib:auto row; "~": the best path's own
			 * samples spread wider than auto's gap to it */
			x->extra = x->mbps[0] / best;
			noisy = x->extra < CH_OK && spread(&cl->res[bk]) > 1 / x->extra;
			x->desc = x->extra >= CH_OK ? "ok" : x->extra >= CH_FAIL ?
				  (noisy ? "miss~" : "miss") : (noisy ? "FAIL~" : "FAIL");
			snprintf(x->best, sizeof(x->best), "%s",
				 dmaio_path_name((uint32_t)c->m[bk].path));
			nv[x->extra >= CH_OK ? 0 : x->extra >= CH_FAIL ? 1 : 2]++;
			nnoisy += noisy;
		}
	}
	report_trailer(&b->rep, "choice: %d cells judged: %d ok, %d miss, %d FAIL; of the misses "
		       "and FAILs, %d within the best path's own spread (~)%s",
		       nv[0] + nv[1] + nv[2], nv[0], nv[1], nv[2], nnoisy, nojudge ? "; cells "
		       "without a lib:auto result or a forced path that served are not judged" : "");
	if (lo <= hi)
		report_trailer(&b->rep, "page cache before the choice runs (%s): %.2f%% to %.2f%% "
			       "of the file resident", c->resid_how ? c->resid_how : "-", 100 * lo,
			       100 * hi);
	for (k = 0; k < c->nm; k++)
		if (busy[k])
			report_note(&b->rep, "choice: %s: %" PRIu64 " ranges came back -EBUSY in "
				    "the timed runs and were submitted again", c->m[k].name,
				    busy[k]);
	if (c->qbroken)
		report_note(&b->rep, "choice: %s; later library passes failed", c->qnote);
}

void choice_free(struct bench *b)
{
	struct choice_state *c = b->ch;
	int i;

	if (!c)
		return;
	lib_free(c);
	base_free(c);
	dmaio_queue_free(c->q);
	if (c->df)
		dmaio_file_close(c->df);
	ub_exit(&c->ur);
	if (c->dfd >= 0)
		close(c->dfd);
	if (c->fd >= 0)
		close(c->fd);
	if (c->path && !b->o.keep)
		unlink(c->path);
	free(c->path);
	for (i = 0; c->order && i < b->o.nchoice_bufs * b->o.nchoice_ranges; i++)
		free(c->order[i]);
	free(c->order);
	free(c->cells);
	free(c->breqs);
	free(c->retry);
	free(c->tmp);
	free(c);
	b->ch = NULL;
}
