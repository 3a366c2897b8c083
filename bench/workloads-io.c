// SPDX-License-Identifier: MIT
/*
 * --tests io: bandwidth and CPU cost of every libdmaio data path against the baselines of
 * baselines.c (O_DIRECT io_uring into posix_memalign'd memory and into a memfd mapping, buffered
 * read() into plain memory, and the naive buffered read() into the dma-buf mapping), for each
 * size, direction and cache mode. Cases are interleaved round-robin over the runs (the order
 * reversed every other run) and medians reported, so drift on a noisy machine cancels.
 *
 * With --jobs N each case moves its transfer as N disjoint slices from N threads at once (an
 * O_DIRECT baseline thread has a ring of its own); N 1 runs in the calling thread.
 */
#include "bench.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <linux/fs.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/uio.h>
#include <unistd.h>

#define MAX_METHODS 32

enum mkind { M_LIB, M_URING, M_URING_SHM, M_BUFFERED, M_NAIVE };

struct method {
	char name[64];
	enum mkind kind;
	int path;               /* M_LIB: the forced path, DMAIO_PATH_AUTO for the library's choice */
	int buf;                /* M_LIB: index into lbufs[] */
	bool ok[NDIRS];         /* can run in this direction */
	char note[NDIRS][320];  /* why not, or what it chose (a struct dmaio_reason fits) */
};

struct result {
	int n;
	double mbps[MAX_RUNS];
	double cpu[MAX_RUNS];   /* CPU seconds per GiB */
	double ms[MAX_RUNS];    /* wall time */
	double resid[MAX_RUNS]; /* page-cache residency of the range before the run */
	struct pcts lat[MAX_RUNS];
	uint64_t path_bytes[DMAIO_PATH_SLOTS];
	uint64_t fallbacks;
	uint64_t unaligned;
	int err;
};

/* the library's buffers, one per --heap; all dbuf_size bytes. lbufs[0] also serves base:naive */
struct lbuf {
	struct dmaio_buf *b;
	void *map;           /* dmaio_buf_map() of b, NULL if it cannot be mapped */
};

struct io_state;

/* one thread's share of a case */
struct job {
	struct io_state *io;
	int idx;
	pthread_t th;
	struct uring_base ub;    /* its ring (O_DIRECT baselines) */
	/* the case, set before the start */
	const struct method *m;
	int dir;
	uint64_t start, end;     /* its slice of the file */
	uint64_t boff, blen;     /* library / naive: its region of the buffer (when the transfer is
				  * larger than the buffer: pieces of blen) */
	struct breq *reqs;       /* O_DIRECT baselines: its requests */
	size_t nreqs, reqs_cap;
	bool timing;             /* collect latency samples */
	/* what it did */
	int ret;
	struct samples lat;
	uint64_t path_bytes[DMAIO_PATH_SLOTS];
	uint64_t fallbacks, unaligned;
};

struct io_state {
	const struct opts *o;
	struct report *rep;
	uint64_t sizes[MAX_SIZES];  /* --sizes, less those the memory cannot hold */
	int nsizes;
	char test_path[PATH_MAX];
	int fd_buf;                 /* O_RDWR, page cache: library, buffered and naive cases */
	int fd_dir;                 /* O_RDWR | O_DIRECT: io_uring baseline */
	char *plain;                /* posix_memalign'd memory of the baselines */
	char *shm;                  /* a shared memfd mapping: the second O_DIRECT baseline */
	uint64_t plain_size;        /* size of both */
	struct lbuf lbufs[MAX_LBUFS];
	int nlbufs;
	size_t dbuf_size;
	bool ring_ok, ring_fixed;   /* every job's ring made; all registered */
	char ring_note[256];
	uint64_t file_size;
	struct method methods[MAX_METHODS];
	int nmethods;
	struct result *results;     /* [size][dir][mode][method] */
	const char *resid_how;
	/* threads (jobs > 1) */
	unsigned njobs;
	struct job jobs[MAX_JOBS];
	pthread_barrier_t start, done;
	bool threads, quit;
	struct samples all_lat;     /* one run's samples of every job */
};

static struct result *res_at(struct io_state *io, int s, int d, int m, int k)
{
	return &io->results[((s * NDIRS + d) * NMODES + m) * MAX_METHODS + k];
}

/* ------------------------------------------------------------------------------------------- */
/* one job's slice of a case */

static int job_lib(struct job *j)
{
	struct io_state *io = j->io;
	const struct method *m = j->m;
	unsigned flags = m->path == DMAIO_PATH_AUTO ? 0 : DMAIO_RW_PATH(m->path) | DMAIO_RW_NO_FALLBACK;
	struct dmaio_buf *dbuf = io->lbufs[m->buf].b;
	uint64_t off;

	for (off = j->start; off < j->end; off += j->blen) {
		size_t n = (size_t)(j->end - off < j->blen ? j->end - off : j->blen);
		struct dmaio_xfer x = { .struct_size = sizeof(x) };
		uint64_t boff = j->boff, t0 = j->timing ? now_ns() : 0;
		ssize_t r;

		if (j->dir == DIR_READ)
			r = dmaio_fd_read(io->fd_buf, off, dbuf, boff, n, flags, &x);
		else
			r = dmaio_fd_write(io->fd_buf, off, dbuf, boff, n, flags, &x);
		if (j->timing)
			samples_add(&j->lat, (double)(now_ns() - t0) / 1e6);
		if (x.path < DMAIO_PATH_SLOTS)
			j->path_bytes[x.path] += x.done;
		j->fallbacks += x.fallbacks;
		j->unaligned += x.unaligned;
		if (r < 0)
			return (int)r;
		if ((size_t)r != n)
			return -ENODATA;
	}
	return 0;
}

static int job_naive(struct job *j)
{
	struct io_state *io = j->io;
	struct lbuf *lb = &io->lbufs[0];
	unsigned sync = j->dir == DIR_READ ? DMAIO_SYNC_WRITE : DMAIO_SYNC_READ;
	uint64_t off;
	int ret;

	for (off = j->start; off < j->end; off += j->blen) {
		size_t n = (size_t)(j->end - off < j->blen ? j->end - off : j->blen);
		char *p = (char *)lb->map + j->boff;
		uint64_t t0 = j->timing ? now_ns() : 0;
		ssize_t r;

		ret = dmaio_buf_sync_begin(lb->b, sync);
		if (ret < 0)
			return ret;
		if (j->dir == DIR_READ)
			r = full_pread(io->fd_buf, p, n, off);
		else
			r = full_pwrite(io->fd_buf, p, n, off);
		ret = dmaio_buf_sync_end(lb->b, sync);
		if (j->timing)
			samples_add(&j->lat, (double)(now_ns() - t0) / 1e6);
		if (r < 0)
			return (int)r;
		if (ret < 0)
			return ret;
		if ((size_t)r != n)
			return -ENODATA;
	}
	return 0;
}

static int job_buffered(struct job *j)
{
	uint64_t t0 = j->timing ? now_ns() : 0;
	int ret;

	if (j->end == j->start)
		return 0;
	ret = buffered_rw(j->dir, j->io->fd_buf, j->io->plain, j->start, j->end - j->start);
	if (j->timing)
		samples_add(&j->lat, (double)(now_ns() - t0) / 1e6);
	return ret;
}

static int job_uring(struct job *j)
{
	struct io_state *io = j->io;
	int shm_base = (int)((io->plain_size + URING_PIECE - 1) / URING_PIECE);

	if (j->m->kind == M_URING)
		return ub_run(&j->ub, j->dir, io->plain, 0, j->reqs, j->nreqs, io->o->qd, false,
			      j->timing ? &j->lat : NULL);
	return ub_run(&j->ub, j->dir, io->shm, shm_base, j->reqs, j->nreqs, io->o->qd, false,
		      j->timing ? &j->lat : NULL);
}

static int job_run(struct job *j)
{
	switch (j->m->kind) {
	case M_LIB:
		return job_lib(j);
	case M_URING:
	case M_URING_SHM:
		return job_uring(j);
	case M_BUFFERED:
		return job_buffered(j);
	case M_NAIVE:
		return job_naive(j);
	}
	return -EINVAL;
}

static void *job_thread(void *arg)
{
	struct job *j = arg;

	for (;;) {
		pthread_barrier_wait(&j->io->start);
		if (j->io->quit)
			break;
		j->ret = job_run(j);
		pthread_barrier_wait(&j->io->done);
	}
	return NULL;
}

/*
 * The slices of a case of size bytes: job i moves [start, end) of the file, 4 KiB-aligned. When
 * the transfer fits in the buffer, the library and naive cases put each byte at its file offset
 * in the buffer; else job i cycles through its own region of the buffer in pieces of that size.
 */
static void prepare(struct io_state *io, const struct method *m, int dir, uint64_t size, bool timing)
{
	uint64_t per = size / io->njobs / 4096 * 4096, bper = io->dbuf_size / io->njobs / 4096 * 4096;
	unsigned i;

	for (i = 0; i < io->njobs; i++) {
		struct job *j = &io->jobs[i];

		j->m = m;
		j->dir = dir;
		j->start = per * i;
		j->end = i == io->njobs - 1 ? size : per * (i + 1);
		if (size <= io->dbuf_size) {
			j->boff = j->start;
			j->blen = j->end - j->start ? j->end - j->start : 1;
		} else {
			j->boff = bper * i;
			j->blen = i == io->njobs - 1 ? io->dbuf_size - j->boff : bper;
		}
		j->timing = timing;
		j->ret = 0;
		j->lat.n = 0;
		memset(j->path_bytes, 0, sizeof(j->path_bytes));
		j->fallbacks = j->unaligned = 0;
		j->nreqs = 0;
		if (m->kind == M_URING || m->kind == M_URING_SHM) {
			size_t need = breq_count(j->start, j->end - j->start, io->o->chunk);

			if (need > j->reqs_cap) {
				free(j->reqs);
				j->reqs = xcalloc(need, sizeof(*j->reqs));
				j->reqs_cap = need;
			}
			j->nreqs = breq_split(j->reqs, io->fd_dir, j->start, j->start, j->end - j->start, io->o->chunk);
		}
		if (timing)
			samples_reserve(&j->lat, j->nreqs + (j->end - j->start) / j->blen + 4);
	}
}

/*
 * Run a case: the jobs' slices at once, then for writes the final fdatasync. With res, the
 * library's accounting is added to it and *ns / *cpu get the wall time and the CPU seconds.
 */
static int run_case(struct io_state *io, const struct method *m, int dir, uint64_t size, struct result *res,
		    uint64_t *ns, double *cpu)
{
	uint64_t t0, t1;
	double c0, c1;
	unsigned i;
	int ret = 0;

	prepare(io, m, dir, size, res != NULL);
	c0 = cpu_now();
	t0 = now_ns();
	if (io->threads) {
		pthread_barrier_wait(&io->start);
		pthread_barrier_wait(&io->done);
	} else {
		io->jobs[0].ret = job_run(&io->jobs[0]);
	}
	for (i = 0; i < io->njobs && !ret; i++)
		ret = io->jobs[i].ret;
	if (!ret && dir == DIR_WRITE &&
	    fdatasync(m->kind == M_URING || m->kind == M_URING_SHM ? io->fd_dir : io->fd_buf) < 0)
		ret = -errno;
	t1 = now_ns();
	c1 = cpu_now();
	if (ns)
		*ns = t1 - t0;
	if (cpu)
		*cpu = c1 - c0;
	if (res) {
		for (i = 0; i < io->njobs; i++) {
			for (unsigned p = 0; p < DMAIO_PATH_SLOTS; p++)
				res->path_bytes[p] += io->jobs[i].path_bytes[p];
			res->fallbacks += io->jobs[i].fallbacks;
			res->unaligned += io->jobs[i].unaligned;
		}
	}
	return ret;
}

/* the run's latency percentiles over every job's samples */
static struct pcts run_pcts(struct io_state *io)
{
	unsigned i;

	io->all_lat.n = 0;
	for (i = 0; i < io->njobs; i++) {
		samples_reserve(&io->all_lat, io->jobs[i].lat.n);
		memcpy(io->all_lat.v + io->all_lat.n, io->jobs[i].lat.v, io->jobs[i].lat.n * sizeof(double));
		io->all_lat.n += io->jobs[i].lat.n;
	}
	return pcts_of(io->all_lat.v, io->all_lat.n);
}

/* ------------------------------------------------------------------------------------------- */
/* cache state */

static double make_warm(struct io_state *io, uint64_t len)
{
	/* read the range through the page cache; plain memory is scratch here */
	uint64_t off;

	for (off = 0; off < len; off += io->plain_size) {
		size_t n = (size_t)(len - off < io->plain_size ? len - off : io->plain_size);

		full_pread(io->fd_buf, io->plain, n, off);
	}
	return residency_fraction(io->fd_buf, len, &io->resid_how);
}

/* ------------------------------------------------------------------------------------------- */
/* verification */

/* where the bytes of a method land (reads) or come from (writes) */
static void *method_mem(struct io_state *io, const struct method *m)
{
	switch (m->kind) {
	case M_URING:
	case M_BUFFERED:
		return io->plain;
	case M_URING_SHM:
		return io->shm;
	case M_LIB:
		return io->lbufs[m->buf].map;
	case M_NAIVE:
		break;
	}
	return io->lbufs[0].map;
}

/* the library buffer whose mapping mem is (sync_begin/end around CPU access), or NULL */
static struct dmaio_buf *map_owner(struct io_state *io, const void *mem)
{
	for (int i = 0; i < io->nlbufs; i++)
		if (mem && mem == io->lbufs[i].map)
			return io->lbufs[i].b;
	return NULL;
}

static void fail_method(struct method *m, int d, int ret)
{
	snprintf(m->note[d], sizeof(m->note[d]), "failed: %s (%s)", strerror(-ret), errname(ret));
	m->ok[d] = false;
	fprintf(stderr, PROG ": %s %s: %s\n", m->name, dir_name(d), m->note[d]);
}

/* Before timing: move a small range with each method (all jobs) and check the bytes, both ways. */
static void verify_methods(struct io_state *io)
{
	size_t len = (size_t)(4 * MIB < io->dbuf_size ? 4 * MIB : io->dbuf_size);
	char *tmp;
	int k, d;

	if (len > io->file_size)
		len = (size_t)io->file_size;
	tmp = xcalloc(1, len);
	for (k = 0; k < io->nmethods; k++) {
		struct method *m = &io->methods[k];
		void *mem = method_mem(io, m);
		struct dmaio_buf *owner = map_owner(io, mem);

		for (d = 0; d < NDIRS; d++) {
			int64_t bad;
			int ret;

			if (!m->ok[d] || !io->o->dirs[d])
				continue;
			if (d == DIR_READ) {
				/* poison the destination, read, check */
				if (mem) {
					if (owner)
						dmaio_buf_sync_begin(owner, DMAIO_SYNC_WRITE);
					memset(mem, 0xa5, len);
					if (owner)
						dmaio_buf_sync_end(owner, DMAIO_SYNC_WRITE);
				}
				ret = run_case(io, m, DIR_READ, len, NULL, NULL, NULL);
				if (ret < 0) {
					fail_method(m, d, ret);
					continue;
				}
				if (!mem)
					continue;
				if (owner)
					dmaio_buf_sync_begin(owner, DMAIO_SYNC_READ);
				bad = check_pattern(mem, 0, len);
				if (owner)
					dmaio_buf_sync_end(owner, DMAIO_SYNC_READ);
				if (bad >= 0) {
					snprintf(m->note[d], sizeof(m->note[d]),
						 "verification failed: wrong bytes at offset %" PRId64 " after a read", bad);
					m->ok[d] = false;
					fprintf(stderr, PROG ": %s read: %s\n", m->name, m->note[d]);
				}
				continue;
			}
			/* the source holds the pattern of [0, len) (from the file); write it, re-read */
			if (mem) {
				if (owner)
					dmaio_buf_sync_begin(owner, DMAIO_SYNC_WRITE);
				fill_pattern(mem, 0, len);
				if (owner)
					dmaio_buf_sync_end(owner, DMAIO_SYNC_WRITE);
			} else {
				/* no mapping: load the source through the library itself */
				struct method load = { .kind = M_LIB, .path = DMAIO_PATH_AUTO,
						       .buf = m->kind == M_LIB ? m->buf : 0 };

				ret = run_case(io, &load, DIR_READ, len, NULL, NULL, NULL);
				if (ret < 0) {
					fail_method(m, d, ret);
					continue;
				}
			}
			/* scramble the file range first so a write that does nothing is caught */
			memset(tmp, 0x5a, len);
			if (full_pwrite(io->fd_buf, tmp, len, 0) != (ssize_t)len || fdatasync(io->fd_buf) < 0)
				die("scramble the test file: %s", strerror(errno));
			posix_fadvise(io->fd_buf, 0, len, POSIX_FADV_DONTNEED);
			ret = run_case(io, m, DIR_WRITE, len, NULL, NULL, NULL);
			if (ret < 0) {
				/* restore the pattern for the next methods */
				fill_pattern(tmp, 0, len);
				full_pwrite(io->fd_buf, tmp, len, 0);
				fail_method(m, d, ret);
				continue;
			}
			posix_fadvise(io->fd_buf, 0, len, POSIX_FADV_DONTNEED);
			if (full_pread(io->fd_buf, tmp, len, 0) != (ssize_t)len)
				die("re-read the test file: %s", strerror(errno));
			bad = check_pattern(tmp, 0, len);
			if (bad >= 0) {
				snprintf(m->note[d], sizeof(m->note[d]),
					 "verification failed: wrong bytes at offset %" PRId64 " after a write", bad);
				m->ok[d] = false;
				fprintf(stderr, PROG ": %s write: %s\n", m->name, m->note[d]);
				fill_pattern(tmp, 0, len);
				full_pwrite(io->fd_buf, tmp, len, 0);
				fdatasync(io->fd_buf);
			}
		}
	}
	free(tmp);
}

/* ------------------------------------------------------------------------------------------- */
/* set-up */

static void add_method(struct io_state *io, const char *name, enum mkind kind, int path, int buf)
{
	struct method *m;

	if (io->nmethods >= MAX_METHODS)
		return;
	m = &io->methods[io->nmethods++];
	snprintf(m->name, sizeof(m->name), "%s", name);
	m->kind = kind;
	m->path = path;
	m->buf = buf;
	m->ok[DIR_READ] = m->ok[DIR_WRITE] = true;
}

/* Register the plain memory and the shm mapping with every job's ring, in pieces of 1 GiB. */
static int register_plain(struct io_state *io)
{
	unsigned n = (unsigned)((io->plain_size + URING_PIECE - 1) / URING_PIECE), j;
	struct iovec *iov = xcalloc(2 * n, sizeof(*iov));
	int ret = 0;

	for (j = 0; j < n; j++) {
		uint64_t off = (uint64_t)j * URING_PIECE;
		size_t len = (size_t)(io->plain_size - off < URING_PIECE ? io->plain_size - off : URING_PIECE);

		iov[j].iov_base = io->plain + off;
		iov[j].iov_len = len;
		iov[n + j].iov_base = io->shm + off;
		iov[n + j].iov_len = len;
	}
	for (j = 0; j < io->njobs && !ret; j++)
		ret = ub_register(&io->jobs[j].ub, iov, 2 * n);
	free(iov);
	if (ret < 0)
		for (j = 0; j < io->njobs; j++)
			ub_unregister(&io->jobs[j].ub);
	return ret;
}

static void unregister_plain(struct io_state *io)
{
	for (unsigned j = 0; j < io->njobs; j++)
		ub_unregister(&io->jobs[j].ub);
}

/*
 * One kernel copy (pread of the test file) into all of every buffer that has a CPU mapping. On
 * this host the first copy_to_user() into memory costs about 2 ms per MiB even when user space
 * has already written every page (plain, memfd and dma-buf memory alike, measured with a bare
 * pread loop); later copies run at memory speed. Unprimed, that cost lands on whichever
 * CPU-copy method happens to run first after new buffers, a different one each run.
 */
static void prime_buffers(struct io_state *io)
{
	size_t n = (size_t)(io->file_size < io->dbuf_size ? io->file_size : io->dbuf_size);

	if (io->plain)
		full_pread(io->fd_buf, io->plain, (size_t)io->file_size, 0);
	if (io->shm)
		full_pread(io->fd_buf, io->shm, (size_t)io->file_size, 0);
	for (int i = 0; i < io->nlbufs; i++) {
		if (!io->lbufs[i].map)
			continue;
		dmaio_buf_sync_begin(io->lbufs[i].b, DMAIO_SYNC_WRITE);
		full_pread(io->fd_buf, io->lbufs[i].map, n, 0);
		dmaio_buf_sync_end(io->lbufs[i].b, DMAIO_SYNC_WRITE);
	}
}

/* a few MiB with each method that can run, outside the timing (first-use costs) */
static void warm_up(struct io_state *io, bool drop_failing)
{
	size_t len = (size_t)(io->dbuf_size < io->file_size ? io->dbuf_size : io->file_size);
	int k, d;

	if (len > 4 * MIB)
		len = 4 * MIB;
	for (k = 0; k < io->nmethods; k++)
		for (d = 0; d < NDIRS; d++) {
			if (!io->methods[k].ok[d] || !io->o->dirs[d])
				continue;
			if (!drop_failing && io->methods[k].kind == M_BUFFERED)
				continue;
			if (run_case(io, &io->methods[k], d, len, NULL, NULL, NULL) < 0 && drop_failing)
				io->methods[k].ok[d] = false;
			if (!drop_failing)
				break; /* one direction is enough to prime new buffers */
		}
}

/*
 * New memory for both the baselines and the library before a run: where the pages land in
 * physical memory changes the bandwidth of this (virtual) machine by up to 2x, a fixed bias for a
 * whole run otherwise. The new buffers are allocated before the old ones are freed, so they get
 * other pages; which one is allocated first alternates.
 */
static void fresh_buffers(struct io_state *io, int run)
{
	struct lbuf nb[MAX_LBUFS] = { { 0 } };
	char *np = NULL, *ns = NULL;
	uint64_t avail = mem_available();
	int i, step;

	/* short of memory for both sets at once: free first (the pages still get reshuffled) */
	if (avail && avail < 4 * io->plain_size + (uint64_t)io->nlbufs * io->dbuf_size) {
		unregister_plain(io);
		free(io->plain);
		io->plain = NULL;
		munmap(io->shm, io->plain_size);
		io->shm = NULL;
		for (i = 0; i < io->nlbufs; i++) {
			dmaio_buf_free(io->lbufs[i].b);
			io->lbufs[i].b = NULL;
			io->lbufs[i].map = NULL;
		}
	}
	for (step = 0; step < 3; step++) {
		int which = (step + run) % 3;

		if (which == 0) {
			np = mem_plain(io->plain_size);
		} else if (which == 1) {
			ns = mem_memfd(io->plain_size, false);
		} else {
			for (i = 0; i < io->nlbufs; i++) {
				int ret = alloc_dbuf(io->o->heaps[i], io->dbuf_size, &nb[i].b, &nb[i].map);

				if (ret < 0)
					die("allocate %" PRIu64 " MiB from %s again: %s", (uint64_t)io->dbuf_size / MIB,
					    heap_desc(io->o->heaps[i]), strerror(-ret));
			}
		}
	}
	unregister_plain(io);
	free(io->plain);
	io->plain = np;
	if (io->shm)
		munmap(io->shm, io->plain_size);
	io->shm = ns;
	if (io->ring_fixed && register_plain(io) < 0)
		die("registering the plain memory again failed");
	for (i = 0; i < io->nlbufs; i++) {
		dmaio_buf_free(io->lbufs[i].b);
		io->lbufs[i] = nb[i];
	}
	/* first-use costs of the new buffers (first kernel copy, registration) stay out of the
	 * timing */
	prime_buffers(io);
	warm_up(io, false);
}

static void setup_rings(struct io_state *io)
{
	unsigned j;
	int ret = 0;

	io->fd_dir = open(io->test_path, O_RDWR | O_DIRECT | O_CLOEXEC);
	if (io->fd_dir < 0) {
		snprintf(io->ring_note, sizeof(io->ring_note), "O_DIRECT open of %.120s failed (%s): use --dir on a "
			 "block filesystem", io->test_path, strerror(errno));
		return;
	}
	for (j = 0; j < io->njobs && !ret; j++)
		ret = ub_init(&io->jobs[j].ub, io->o->qd);
	if (ret < 0) {
		snprintf(io->ring_note, sizeof(io->ring_note), "io_uring unavailable (%s)", strerror(-ret));
		for (j = 0; j < io->njobs; j++)
			ub_exit(&io->jobs[j].ub);
		return;
	}
	io->ring_ok = true;
	ret = register_plain(io);
	io->ring_fixed = ret == 0;
	if (!io->ring_fixed)
		report_note(io->rep, "baseline uring-direct: registering the buffer failed (%s, RLIMIT_MEMLOCK?): "
			    "unregistered buffers used", strerror(-ret));
}

static void setup_threads(struct io_state *io)
{
	unsigned j;

	io->threads = io->njobs > 1;
	if (!io->threads)
		return;
	if (pthread_barrier_init(&io->start, NULL, io->njobs + 1) ||
	    pthread_barrier_init(&io->done, NULL, io->njobs + 1))
		die("pthread_barrier_init failed");
	for (j = 0; j < io->njobs; j++) {
		int ret = pthread_create(&io->jobs[j].th, NULL, job_thread, &io->jobs[j]);

		if (ret)
			die("pthread_create: %s", strerror(ret));
	}
}

void io_setup(struct bench *b)
{
	const struct opts *o = &b->o;
	struct io_state *io = xcalloc(1, sizeof(*io));
	struct dmaio_file_info fi = { .struct_size = sizeof(fi) };
	struct statfs sfs;
	uint64_t max = 0, avail;
	int i, k, d, ret, p;
	char sz[32];
	size_t len;

	b->io = io;
	io->o = o;
	io->rep = &b->rep;
	io->fd_buf = io->fd_dir = -1;
	io->njobs = o->jobs;
	for (unsigned j = 0; j < io->njobs; j++) {
		io->jobs[j].io = io;
		io->jobs[j].idx = (int)j;
	}
	io->nsizes = o->nsizes;
	memcpy(io->sizes, o->sizes, sizeof(io->sizes));
	for (i = 0; i < io->nsizes; i++) {
		if (io->sizes[i] % 4096) {
			size_str(sz, sizeof(sz), io->sizes[i]);
			die("size %s is not a multiple of 4 KiB (needed by O_DIRECT)", sz);
		}
		if (io->sizes[i] > max)
			max = io->sizes[i];
	}
	/* memory: plain memory + shm + the buffer + the file's page cache (+ the next run's buffers) */
	avail = mem_available();
	while (avail && max > 4 * MIB && 4 * max > avail * 9 / 10) {
		int j = 0;

		size_str(sz, sizeof(sz), max);
		note(b, "size %s skipped: needs about %" PRIu64 " MiB of memory, %" PRIu64 " MiB available", sz,
		     4 * max / MIB, avail / MIB);
		for (i = 0; i < io->nsizes; i++)
			if (io->sizes[i] != max)
				io->sizes[j++] = io->sizes[i];
		io->nsizes = j;
		max = 0;
		for (i = 0; i < io->nsizes; i++)
			if (io->sizes[i] > max)
				max = io->sizes[i];
	}
	if (!io->nsizes)
		die("no size left to run");
	io->file_size = max;

	/* the test file, filled with a position-encoded pattern */
	if (o->device) {
		uint64_t devsize = 0;
		struct stat st;

		/* a block device: never created, never removed, the first max bytes overwritten */
		snprintf(io->test_path, sizeof(io->test_path), "%s", o->device);
		io->fd_buf = open(io->test_path, O_RDWR | O_CLOEXEC);
		if (io->fd_buf < 0)
			die("open %s: %s", io->test_path, strerror(errno));
		if (fstat(io->fd_buf, &st) < 0 || !S_ISBLK(st.st_mode))
			die("%s: not a block device", io->test_path);
		if (ioctl(io->fd_buf, BLKGETSIZE64, &devsize) < 0 || devsize < max)
			die("%s: %" PRIu64 " MiB, smaller than the %" PRIu64 " MiB test", io->test_path,
			    devsize / MIB, max / MIB);
	} else {
		snprintf(io->test_path, sizeof(io->test_path), "%s/dmaio-bench.%d.tmp", o->dir, (int)getpid());
		cleanup_add(io->test_path);
		io->fd_buf = open(io->test_path, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
		if (io->fd_buf < 0)
			die("create %s: %s", io->test_path, strerror(errno));
		if (fstatfs(io->fd_buf, &sfs) == 0 &&
		    (uint64_t)sfs.f_bavail * (uint64_t)sfs.f_bsize < max + 64 * MIB)
			die("%s: not enough free space for a %" PRIu64 " MiB test file", o->dir, max / MIB);
	}

	io->plain_size = max;
	io->plain = mem_plain(io->plain_size);
	fill_pattern(io->plain, 0, io->plain_size);
	io->shm = mem_memfd(io->plain_size, false);
	if (full_pwrite(io->fd_buf, io->plain, io->plain_size, 0) != (ssize_t)io->plain_size || fsync(io->fd_buf) < 0)
		die("write %s: %s", io->test_path, strerror(errno));

	/* the O_DIRECT io_uring baseline: a ring per job */
	setup_rings(io);

	/* the library's buffers, all of one size; chunked when a provider refuses the whole size */
	len = (size_t)max;
	for (i = 0; i < o->nheaps; i++) {
		for (;;) {
			ret = alloc_dbuf(o->heaps[i], len, &io->lbufs[i].b, &io->lbufs[i].map);
			if ((ret == -EFBIG || ret == -ENOMEM) && len / 2 >= MIB) {
				len /= 2;
				/* the buffers before this one are too large now: all get the same size */
				for (k = 0; k < i; k++) {
					dmaio_buf_free(io->lbufs[k].b);
					io->lbufs[k].b = NULL;
					if (alloc_dbuf(o->heaps[k], len, &io->lbufs[k].b, &io->lbufs[k].map) < 0)
						die("allocate %" PRIu64 " MiB from %s again", (uint64_t)len / MIB,
						    heap_desc(o->heaps[k]));
				}
				continue;
			}
			break;
		}
		if (ret < 0)
			die("allocate %" PRIu64 " MiB from %s: %s", (uint64_t)len / MIB, heap_desc(o->heaps[i]),
			    strerror(-ret));
		io->nlbufs = i + 1;
		if (!o->heaps[i] && dmaio_buf_kind(io->lbufs[i].b) == DMAIO_BUF_MEMFD)
			fprintf(stderr, PROG ": no dma-buf provider on this machine; using a memfd\n");
	}
	io->dbuf_size = len;
	for (i = 0; i < io->nlbufs; i++) {
		if (io->dbuf_size < max) {
			size_str(sz, sizeof(sz), io->dbuf_size);
			note(b, "%s: no buffer of the largest size: the library cases and naive move bigger sizes "
			     "in %s chunks", dmaio_buf_provider(io->lbufs[i].b), sz);
		}
		if (!io->lbufs[i].map)
			note(b, "the %s buffer cannot be mapped: %slibrary reads not verified",
			     dmaio_buf_provider(io->lbufs[i].b), i ? "" : "no naive baseline, ");
	}

	/* the methods: per buffer the library's choice and each path that can serve; the baselines */
	for (i = 0; i < io->nlbufs; i++) {
		char sfx[48] = "";

		if (io->nlbufs > 1)
			snprintf(sfx, sizeof(sfx), "@%.40s", dmaio_buf_provider(io->lbufs[i].b));
		for (p = 0; p < DMAIO_PATH_COUNT; p++) {
			char name[64];

			if (o->paths_given && !o->paths[p])
				continue;
			snprintf(name, sizeof(name), "lib:%s%s", p ? dmaio_path_name(p) : "auto", sfx);
			add_method(io, name, M_LIB, p, i);
		}
	}
	add_method(io, "base:uring-direct", M_URING, 0, 0);
	add_method(io, "base:uring-shm", M_URING_SHM, 0, 0);
	add_method(io, "base:buffered", M_BUFFERED, 0, 0);
	add_method(io, "base:naive", M_NAIVE, 0, 0);

	len = (size_t)(io->dbuf_size < max ? io->dbuf_size : max);
	for (k = 0; k < io->nmethods; k++) {
		struct method *m = &io->methods[k];

		for (d = 0; d < NDIRS; d++) {
			struct dmaio_reason why = { .struct_size = sizeof(why) };

			if ((m->kind == M_URING || m->kind == M_URING_SHM) && !io->ring_ok) {
				m->ok[d] = false;
				snprintf(m->note[d], sizeof(m->note[d]), "%s", io->ring_note);
			} else if (m->kind == M_NAIVE && !io->lbufs[0].map) {
				m->ok[d] = false;
				snprintf(m->note[d], sizeof(m->note[d]), "the buffer cannot be mapped");
			} else if (m->kind == M_LIB) {
				unsigned flags = m->path ? DMAIO_RW_PATH(m->path) | DMAIO_RW_NO_FALLBACK : 0;

				ret = dmaio_fd_choose_path(io->fd_buf, 0, io->lbufs[m->buf].b, 0, len,
							   d == DIR_READ ? DMAIO_OP_READ : DMAIO_OP_WRITE, flags,
							   &why);
				if (ret < 0 || (m->path && ret != m->path)) {
					m->ok[d] = false;
					snprintf(m->note[d], sizeof(m->note[d]), "cannot serve: %s%s%s",
						 ret < 0 ? errname(ret) : dmaio_path_name((uint32_t)ret),
						 why.text[0] ? ": " : "", why.text);
				} else {
					snprintf(m->note[d], sizeof(m->note[d]), "%s%s%s",
						 dmaio_path_name((uint32_t)ret), why.text[0] ? ": " : "", why.text);
				}
			}
		}
	}
	if (dmaio_fd_get_info(io->fd_buf, &fi) == 0 && fi.direct != DMAIO_CAP_YES)
		note(b, "O_DIRECT is not supported in %s (%s): the direct paths cannot be measured there", o->dir,
		     errname(fi.direct_err));

	io->results = xcalloc((size_t)io->nsizes * NDIRS * NMODES * MAX_METHODS, sizeof(*io->results));
	setup_threads(io);
	prime_buffers(io);
	if (o->verify)
		verify_methods(io);
	/* warm-up: one pass of every method (first-use costs: ring set-up, registration) */
	warm_up(io, true);
	/* the warm-up writes left the file's head with the buffer's bytes: restore the pattern */
	fill_pattern(io->plain, 0, io->plain_size);
	full_pwrite(io->fd_buf, io->plain, (size_t)(4 * MIB < io->plain_size ? 4 * MIB : io->plain_size), 0);
	fsync(io->fd_buf);
}

static const char *providers_str(const struct io_state *io, char *buf, size_t len)
{
	size_t l = 0;

	buf[0] = 0;
	for (int i = 0; i < io->nlbufs && l < len - 1; i++)
		l += (size_t)snprintf(buf + l, len - l, "%s%s", i ? "," : "", dmaio_buf_provider(io->lbufs[i].b));
	return buf;
}

void io_plot_title(const struct bench *b, char *out, size_t len)
{
	char pr[256];

	snprintf(out, len, "%s buffer, %s", providers_str(b->io, pr, sizeof(pr)), b->o.dir);
}

void io_info(struct bench *b)
{
	struct io_state *io = b->io;
	const struct opts *o = &b->o;
	char bs[32], sizes[256] = "";
	size_t l = 0;
	int i;

	for (i = 0; i < io->nsizes && l < sizeof(sizes) - 16; i++) {
		char sz[32];

		size_str(sz, sizeof(sz), io->sizes[i]);
		l += (size_t)snprintf(sizes + l, sizeof(sizes) - l, "%s%s", i ? "," : "", sz);
	}
	size_str(bs, sizeof(bs), io->dbuf_size);
	for (i = 0; i < io->nlbufs; i++)
		report_info(&b->rep, "I/O: buffer %s from %s (%s), sizes %s, test file %s", bs,
			    dmaio_buf_provider(io->lbufs[i].b),
			    dmaio_buf_kind(io->lbufs[i].b) == DMAIO_BUF_MEMFD ? "a memfd, not a dma-buf" : "dma-buf",
			    sizes, io->test_path);
	if (io->nlbufs > 1)
		report_info(&b->rep, "one test file for all buffers; lib:PATH@PROVIDER = that buffer; base:naive "
			    "uses the %s buffer; targets use lib:auto@%s", dmaio_buf_provider(io->lbufs[0].b),
			    dmaio_buf_provider(io->lbufs[0].b));
	report_info(&b->rep, "cold: fdatasync + POSIX_FADV_DONTNEED of the test file, residency checked before "
		    "each timed run (cachestat, else mincore; more than 0.1%% cached fails); warm: range read once "
		    "before");
	report_info(&b->rep, "base:uring-direct = O_DIRECT io_uring, %s, %" PRIu64 " KiB requests, QD %u%s, into "
		    "posix_memalign'd memory; base:uring-shm = the same into a memfd mapping",
		    io->ring_fixed ? "fixed buffers" : "unregistered buffers", o->chunk / KIB, o->qd,
		    io->njobs > 1 ? " per job" : "");
	report_info(&b->rep, "base:buffered = read()/write() into plain memory; base:naive = read()/write() on the "
		    "dmaio_buf_map() mapping inside sync_begin/end");
	report_info(&b->rep, "x direct = ratio to the better of the two O_DIRECT baselines (the device-limit proxy)");
	if (io->njobs > 1)
		report_info(&b->rep, "jobs: %u threads move disjoint slices of each transfer at once (each case, "
			    "each baseline)", io->njobs);
	report_info(&b->rep, "writes include fdatasync(); MB/s = 10^6 B/s; CPU = user+sys s per GiB (RUSAGE_SELF); "
		    "%s, each primed with one pread of the file before timing",
		    o->fresh ? "new buffers for every run" : "the same buffers for every run");
	if (getenv("DMAIO_PATH"))
		report_info(&b->rep, "DMAIO_PATH=%s is set: it steers lib:auto", getenv("DMAIO_PATH"));
	for (i = 0; i < io->nmethods; i++) {
		const struct method *m = &io->methods[i];

		if (m->kind != M_LIB)
			continue;
		report_info(&b->rep, "%-18s read: %s%s", m->name, m->ok[0] ? "" : "SKIPPED, ", m->note[0]);
		report_info(&b->rep, "%-18s write: %s%s", "", m->ok[1] ? "" : "SKIPPED, ", m->note[1]);
	}
	for (i = 0; i < io->nmethods; i++) {
		const struct method *m = &io->methods[i];

		if (m->kind != M_LIB && (!m->ok[0] || !m->ok[1]))
			report_info(&b->rep, "%-18s SKIPPED: %s", m->name, m->note[0][0] ? m->note[0] : m->note[1]);
	}
}

void io_run(struct bench *b)
{
	struct io_state *io = b->io;
	const struct opts *o = &b->o;
	bool tty = interactive(STDERR_FILENO);
	int r, s, d, md, k, kk;

	for (r = 0; r < o->runs; r++) {
		if (tty)
			fprintf(stderr, "\r\033[K" PROG ": I/O run %d/%d", r + 1, o->runs);
		if (r > 0 && o->fresh)
			fresh_buffers(io, r);
		for (s = 0; s < io->nsizes; s++) {
			uint64_t size = io->sizes[s];

			for (d = 0; d < NDIRS; d++) {
				if (!o->dirs[d])
					continue;
				for (md = 0; md < NMODES; md++) {
					if (!o->modes[md])
						continue;
					/* alternate the order of the methods between runs */
					for (kk = 0; kk < io->nmethods; kk++) {
						struct result *res;
						uint64_t ns;
						double cpu, resid;
						int ret;

						k = r % 2 ? io->nmethods - 1 - kk : kk;
						if (!io->methods[k].ok[d])
							continue;
						res = res_at(io, s, d, md, k);
						if (res->err)
							continue;
						if (md == MODE_COLD)
							resid = make_cold(&io->fd_buf, &size, 1, &io->resid_how);
						else
							resid = make_warm(io, size);
						ret = run_case(io, &io->methods[k], d, size, res, &ns, &cpu);
						if (ret < 0) {
							res->err = ret;
							note(b, "%s %s %s: %s", io->methods[k].name, dir_name(d), mode_name(md),
							     strerror(-ret));
							continue;
						}
						res->mbps[res->n] = (double)size * 1000.0 / (double)ns;
						res->cpu[res->n] = cpu / ((double)size / (double)GIB);
						res->ms[res->n] = (double)ns / 1e6;
						res->resid[res->n] = resid;
						res->lat[res->n] = run_pcts(io);
						res->n++;
					}
				}
			}
		}
	}
	if (tty)
		fprintf(stderr, "\r\033[K");
}

/* ------------------------------------------------------------------------------------------- */
/* the rows */

static double med_mbps(struct io_state *io, int s, int d, int md, enum mkind kind)
{
	for (int k = 0; k < io->nmethods; k++)
		if (io->methods[k].kind == kind) {
			struct result *r = res_at(io, s, d, md, k);

			return r->n ? median(r->mbps, r->n) : NAN;
		}
	return NAN;
}

/* the device-limit proxy: the better of the two O_DIRECT io_uring baselines */
static double best_direct(struct io_state *io, int s, int d, int md)
{
	double a = med_mbps(io, s, d, md, M_URING), c = med_mbps(io, s, d, md, M_URING_SHM);

	if (isnan(a))
		return c;
	if (isnan(c))
		return a;
	return a > c ? a : c;
}

static const char *used_path(const struct method *m, const struct result *r)
{
	int p, bp = -1;
	uint64_t best = 0;

	if (m->kind != M_LIB)
		return m->kind == M_URING || m->kind == M_URING_SHM ? "uring O_DIRECT" :
		       m->kind == M_BUFFERED ? "read/write" : "read/write map";
	for (p = 0; p < (int)DMAIO_PATH_SLOTS; p++)
		if (r->path_bytes[p] > best) {
			best = r->path_bytes[p];
			bp = p;
		}
	return bp >= 0 && dmaio_path_name(bp) ? dmaio_path_name(bp) : "-";
}

void io_report(struct bench *b)
{
	struct io_state *io = b->io;
	const struct opts *o = &b->o;
	int sec = report_section(&b->rep, "io"), s, d, md, k;

	for (s = 0; s < io->nsizes; s++) {
		for (d = 0; d < NDIRS; d++) {
			if (!o->dirs[d])
				continue;
			for (md = 0; md < NMODES; md++) {
				double bd, bb, bn;

				if (!o->modes[md])
					continue;
				bd = best_direct(io, s, d, md);
				bb = med_mbps(io, s, d, md, M_BUFFERED);
				bn = med_mbps(io, s, d, md, M_NAIVE);
				for (k = 0; k < io->nmethods; k++) {
					const struct method *m = &io->methods[k];
					const struct result *r = res_at(io, s, d, md, k);
					struct row *w;
					double mb;

					if (!m->ok[d])
						continue;
					w = report_row(&b->rep, sec, "io");
					row_str(w, COL_PROVIDER, "%s", dmaio_buf_provider(io->lbufs[m->buf].b));
					row_u64(w, COL_SIZE, io->sizes[s]);
					row_str(w, COL_DIR, "%s", dir_name(d));
					row_str(w, COL_MODE, "%s", mode_name(md));
					row_str(w, COL_METHOD, "%s", m->name);
					w->jobs = (int)io->njobs;
					w->depth = m->kind == M_URING || m->kind == M_URING_SHM ? o->qd : 1;
					if (!r->n) {
						w->status = ROW_FAILED;
						snprintf(w->note, sizeof(w->note), "%s", r->err ? strerror(-r->err) : "no result");
						continue;
					}
					row_str(w, COL_PATH, "%s", used_path(m, r));
					row_runs(w, r->n, r->mbps, r->cpu, NULL);
					/* the wall time of each run in the JSON; the CSV's ms_* of io rows stay empty */
					memcpy(w->run_ms, r->ms, sizeof(double) * (size_t)r->n);
					mb = w->mbps[0];
					row_num(w, COL_X_DIRECT, isnan(bd) || bd <= 0 ? NAN : mb / bd);
					row_num(w, COL_X_BUFFERED, isnan(bb) || bb <= 0 ? NAN : mb / bb);
					row_num(w, COL_X_NAIVE, isnan(bn) || bn <= 0 ? NAN : mb / bn);
					row_latency(w, r->n, r->lat,
						    m->kind == M_URING || m->kind == M_URING_SHM ? "request" :
						    m->kind == M_LIB ? "call" : "read/write call");
					row_residency(w, r->n, r->resid, io->resid_how);
					if (m->kind == M_LIB)
						row_paths(w, r->path_bytes, r->fallbacks, r->unaligned);
				}
			}
		}
	}
	/* the page cache before the timed runs, as measured */
	for (md = 0; md < NMODES; md++) {
		double lo = INFINITY, hi = -INFINITY;
		int n = 0;

		for (int i = 0; i < b->rep.nrows; i++) {
			const struct row *w = b->rep.rows[i];

			if (w->section != sec || strcmp(w->mode, mode_name(md)) || !w->has_resid)
				continue;
			for (int j = 0; j < w->n; j++) {
				lo = w->run_resid[j] < lo ? w->run_resid[j] : lo;
				hi = w->run_resid[j] > hi ? w->run_resid[j] : hi;
				n++;
			}
		}
		if (n)
			report_trailer(&b->rep, "page cache before the %d %s io runs (%s): %.2f%% to %.2f%% of the range "
				       "resident", n, mode_name(md), io->resid_how ? io->resid_how : "-", 100 * lo,
				       100 * hi);
	}
}

void io_free(struct bench *b)
{
	struct io_state *io = b->io;
	unsigned j;
	int i;

	if (!io)
		return;
	if (io->threads) {
		io->quit = true;
		pthread_barrier_wait(&io->start);
		for (j = 0; j < io->njobs; j++)
			pthread_join(io->jobs[j].th, NULL);
		pthread_barrier_destroy(&io->start);
		pthread_barrier_destroy(&io->done);
	}
	for (j = 0; j < io->njobs; j++) {
		ub_exit(&io->jobs[j].ub);
		samples_free(&io->jobs[j].lat);
		free(io->jobs[j].reqs);
	}
	samples_free(&io->all_lat);
	for (i = 0; i < io->nlbufs; i++)
		dmaio_buf_free(io->lbufs[i].b);
	if (io->fd_dir >= 0)
		close(io->fd_dir);
	if (io->fd_buf >= 0)
		close(io->fd_buf);
	if (!b->o.keep && !b->o.device)
		unlink(io->test_path);
	free(io->plain);
	if (io->shm)
		munmap(io->shm, io->plain_size);
	free(io->results);
	free(io);
	b->io = NULL;
}
