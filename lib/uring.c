/* SPDX-License-Identifier: MIT */
/* The io_uring engine: rings pooled per context (one per concurrently calling thread), buffers
 * registered once and cached per ring, and a pipeline that keeps several requests in flight
 * (zero-copy into registered memory, or through bounce buffers whose copy overlaps the next
 * request). Without a ring (io_uring disabled or filtered) the pipeline runs synchronously. */
#include <liburing.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "dmaio-private.h"

/* registered-buffer table: slot 0 holds the bounce pool, the last one a proposed dma-buf
 * registration (DMAIO_ENGINE_SLOT_DMABUF), the others cached buffer registrations */
#define ENGINE_SLOTS (DMAIO_ENGINE_SLOT_DMABUF + 1)
#define ENGINE_ENTRIES 32
#define MAX_DEPTH 32

struct reg_slot {
	uint64_t buf_id;
	char *base;
	size_t len;
	uint64_t used;
};

struct dmaio_engine {
	struct io_uring ring;
	pthread_mutex_t lock;         /* slots: dmaio_free of another thread may drop entries */
	bool table;                   /* sparse table registered */
	struct reg_slot slots[ENGINE_SLOTS];
	uint64_t tick;
	char *bounce;
	size_t bounce_chunk;
	unsigned bounce_n;
	bool bounce_fixed;
	bool broken;                  /* submit/reap failed: never pooled again */
	struct dmaio_engine *next, *next_free;
};

int dmaio_uring_probe(struct dmaio_sys_info *s)
{
	struct io_uring ring;
	struct iovec iov;
	void *page;
	int r;

	r = io_uring_queue_init(2, &ring, 0);
	if (r < 0) {
		s->io_uring = DMAIO_CAP_NO;
		s->io_uring_err = r;
		s->io_uring_fixed = DMAIO_CAP_NO;
		return r;
	}
	s->io_uring = DMAIO_CAP_YES;
	page = mmap(NULL, (size_t)dmaio_page_size(), PROT_READ | PROT_WRITE,
		    MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (page != MAP_FAILED) {
		iov.iov_base = page;
		iov.iov_len = (size_t)dmaio_page_size();
		r = io_uring_register_buffers(&ring, &iov, 1);
		s->io_uring_fixed = r ? DMAIO_CAP_NO : DMAIO_CAP_YES;
		munmap(page, (size_t)dmaio_page_size());
	}
	io_uring_queue_exit(&ring);
	return 0;
}

int dmaio_engine_get(struct dmaio_ctx *ctx, struct dmaio_engine **out)
{
	struct dmaio_engine *e;
	int r;

	pthread_mutex_lock(&ctx->lock);
	dmaio_probe_sys_locked(ctx);
	if (ctx->sys.io_uring != DMAIO_CAP_YES) {
		r = ctx->sys.io_uring_err ? ctx->sys.io_uring_err : -ENOSYS;
		pthread_mutex_unlock(&ctx->lock);
		return r;
	}
	e = ctx->free_engines;
	if (e) {
		ctx->free_engines = e->next_free;
		pthread_mutex_unlock(&ctx->lock);
		*out = e;
		return 0;
	}
	pthread_mutex_unlock(&ctx->lock);

	e = calloc(1, sizeof(*e));
	if (!e)
		return -ENOMEM;
	r = io_uring_queue_init(ENGINE_ENTRIES, &e->ring, 0);
	if (r < 0) {
		free(e);
		return r;
	}
	pthread_mutex_init(&e->lock, NULL);
	/* a sparse table lets buffers come and go one slot at a time (5.13+) */
	e->table = io_uring_register_buffers_sparse(&e->ring, ENGINE_SLOTS) == 0;
	pthread_mutex_lock(&ctx->lock);
	e->next = ctx->engines;
	ctx->engines = e;
	pthread_mutex_unlock(&ctx->lock);
	*out = e;
	return 0;
}

static void engine_destroy(struct dmaio_engine *e)
{
	io_uring_queue_exit(&e->ring);
	if (e->bounce)
		munmap(e->bounce, e->bounce_chunk * e->bounce_n);
	pthread_mutex_destroy(&e->lock);
	free(e);
}

void dmaio_engine_put(struct dmaio_ctx *ctx, struct dmaio_engine *e)
{
	if (!e)
		return;
	pthread_mutex_lock(&ctx->lock);
	if (e->broken) {
		/* requests may be stuck in its queues: tear it down, never reuse it */
		for (struct dmaio_engine **pp = &ctx->engines; *pp; pp = &(*pp)->next) {
			if (*pp == e) {
				*pp = e->next;
				break;
			}
		}
		pthread_mutex_unlock(&ctx->lock);
		engine_destroy(e);
		return;
	}
	e->next_free = ctx->free_engines;
	ctx->free_engines = e;
	pthread_mutex_unlock(&ctx->lock);
}

void dmaio_engines_free(struct dmaio_ctx *ctx)
{
	struct dmaio_engine *e = ctx->engines, *n;

	for (; e; e = n) {
		n = e->next;
		engine_destroy(e);
	}
	ctx->engines = ctx->free_engines = NULL;
}

static int slot_set(struct dmaio_engine *e, unsigned idx, void *base, size_t len)
{
	struct iovec iov = { .iov_base = base, .iov_len = len };
	__u64 tag = 0;
	int r = io_uring_register_buffers_update_tag(&e->ring, idx, &iov, &tag, 1);

	return r == 1 ? 0 : (r < 0 ? r : -EIO);
}

struct io_uring *dmaio_engine_ring(struct dmaio_engine *e)
{
	return &e->ring;
}

void dmaio_engine_slot_clear(struct dmaio_engine *e, unsigned idx)
{
	slot_set(e, idx, NULL, 0);
}

/* Unpin a freed (or unmapped) buffer from every ring of the context. */
void dmaio_engines_forget_buf(struct dmaio_ctx *ctx, uint64_t buf_id)
{
	pthread_mutex_lock(&ctx->lock);
	for (struct dmaio_engine *e = ctx->engines; e; e = e->next) {
		pthread_mutex_lock(&e->lock);
		for (unsigned i = 1; i < DMAIO_ENGINE_SLOT_DMABUF; i++) {
			if (e->slots[i].buf_id != buf_id || !e->slots[i].base)
				continue;
			slot_set(e, i, NULL, 0);
			memset(&e->slots[i], 0, sizeof(e->slots[i]));
		}
		pthread_mutex_unlock(&e->lock);
	}
	pthread_mutex_unlock(&ctx->lock);
}

/* The fixed-buffer index covering [base, base + len) of buffer buf_id, registering it (pinning
 * its pages once) on first use; least recently used entries make room. -errno: use plain I/O. */
int dmaio_engine_regbuf(struct dmaio_engine *e, uint64_t buf_id, void *base, size_t len)
{
	unsigned victim = 1;
	int r;

	if (!e->table)
		return -EOPNOTSUPP;
	pthread_mutex_lock(&e->lock);
	e->tick++;
	for (unsigned i = 1; i < DMAIO_ENGINE_SLOT_DMABUF; i++) {
		struct reg_slot *s = &e->slots[i];

		if (s->base && s->buf_id == buf_id && s->base == base && s->len == len) {
			s->used = e->tick;
			pthread_mutex_unlock(&e->lock);
			return (int)i;
		}
		if (!e->slots[victim].base)
			continue;
		if (!s->base || s->used < e->slots[victim].used)
			victim = i;
	}
	r = slot_set(e, victim, base, len);
	if (r) {
		memset(&e->slots[victim], 0, sizeof(e->slots[victim]));
	} else {
		e->slots[victim] = (struct reg_slot){ buf_id, base, len, e->tick };
		r = (int)victim;
	}
	pthread_mutex_unlock(&e->lock);
	return r;
}

/* The ring's bounce pool: n chunks, page aligned, pinned once as fixed buffer slot 0. */
int dmaio_engine_bounce(struct dmaio_engine *e, size_t chunk, unsigned n)
{
	void *p;

	if (e->bounce && e->bounce_chunk == chunk && e->bounce_n >= n)
		return 0;
	if (e->bounce) {
		if (e->bounce_fixed)
			slot_set(e, 0, NULL, 0);
		munmap(e->bounce, e->bounce_chunk * e->bounce_n);
		e->bounce = NULL;
	}
	p = mmap(NULL, chunk * n, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (p == MAP_FAILED)
		return neg_errno();
	madvise(p, chunk * n, MADV_HUGEPAGE);
	e->bounce = p;
	e->bounce_chunk = chunk;
	e->bounce_n = n;
	e->bounce_fixed = e->table && !slot_set(e, 0, p, chunk * n);
	return 0;
}

/* ---- the pipeline ------------------------------------------------------------------------- */
struct flight {
	uint64_t rel;    /* offset of the chunk in the range */
	size_t len;
	size_t got;      /* bytes done, kept a multiple of the pipe's alignment until the end */
	size_t last_end; /* end of the last short transfer, to recognise end of file */
	unsigned retries;
	bool busy;
};

enum { CHUNK_REISSUE, CHUNK_DONE, CHUNK_STOP };

/*
 * Account one completion (bytes or -errno) of a chunk. Transient errors and short counts are
 * reissued for the rest of the chunk; O_DIRECT needs the rest to start aligned, so progress is
 * rounded down to the alignment and the unaligned bytes moved again (idempotent). A read that
 * ends short twice at the same place met end of file.
 */
static int chunk_progress(struct dmaio_pipe *p, struct flight *f, int res, int *err)
{
	size_t end, keep;

	/* ECANCELED: we never cancel; io-wq gives up a punted request when it cannot start a
	 * worker while a signal is pending */
	if (res == -EAGAIN || res == -EINTR || res == -ECANCELED)
		return ++f->retries < 1000 ? CHUNK_REISSUE : (*err = res, CHUNK_STOP);
	if (res < 0) {
		*err = res;
		return CHUNK_STOP;
	}
	if (res == 0) {
		if (!p->write) {
			p->eof = true;
			return CHUNK_STOP;
		}
		return ++f->retries < 8 ? CHUNK_REISSUE : (*err = -EIO, CHUNK_STOP);
	}
	end = f->got + (size_t)res;
	if (end >= f->len) {
		f->got = f->len;
		return CHUNK_DONE;
	}
	if (!p->write && end == f->last_end) {
		f->got = end;
		p->eof = true;
		return CHUNK_STOP;
	}
	f->last_end = end;
	keep = p->align > 1 ? end / p->align * p->align : end;
	if (keep == f->got && ++f->retries >= 8) {
		*err = -EIO;
		return CHUNK_STOP;
	}
	f->got = keep;
	return CHUNK_REISSUE;
}

static char *chunk_mem(struct dmaio_engine *e, struct dmaio_pipe *p, struct flight *f, unsigned i)
{
	return !p->bounce ? p->addr + f->rel : e->bounce + (size_t)i * e->bounce_chunk;
}

static int prep(struct dmaio_engine *e, struct dmaio_pipe *p, struct flight *f, unsigned i)
{
	struct io_uring_sqe *sqe = io_uring_get_sqe(&e->ring);
	char *mem = chunk_mem(e, p, f, i) + f->got;
	unsigned n = (unsigned)(f->len - f->got);
	uint64_t off = p->file_off + f->rel + f->got;
	int idx = !p->bounce ? p->buf_index : (e->bounce_fixed ? 0 : -1);

	if (!sqe)
		return -EBUSY;
	if (p->write) {
		if (idx >= 0)
			io_uring_prep_write_fixed(sqe, p->fd, mem, n, off, idx);
		else
			io_uring_prep_write(sqe, p->fd, mem, n, off);
	} else {
		if (idx >= 0)
			io_uring_prep_read_fixed(sqe, p->fd, mem, n, off, idx);
		else
			io_uring_prep_read(sqe, p->fd, mem, n, off);
	}
	io_uring_sqe_set_data64(sqe, i);
	return 0;
}

static int submit(struct dmaio_engine *e)
{
	int r;

	do
		r = io_uring_submit(&e->ring);
	while (r == -EINTR);
	return r < 0 ? r : 0;
}

/* A chunk ended (complete or stopped): bounce reads hand over what arrived. */
static void chunk_end(struct dmaio_pipe *p, struct flight *f, const char *mem, uint64_t *stop_at,
		      int how)
{
	if (p->bounce && !p->write && f->got)
		p->drain(p, f->rel, mem, f->got);
	if (how == CHUNK_STOP)
		*stop_at = MIN(*stop_at, f->rel + f->got);
	f->busy = false;
}

/* Synchronous fallback: the same chunks one at a time with pread/pwrite. */
static int pipe_sync(struct dmaio_pipe *p)
{
	uint64_t stop_at = UINT64_MAX;
	char *bounce = NULL;
	int err = 0;

	if (p->bounce) {
		bounce = mmap(NULL, p->chunk, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS,
			      -1, 0);
		if (bounce == MAP_FAILED)
			return neg_errno();
	}
	for (uint64_t rel = 0; rel < p->len && stop_at == UINT64_MAX; rel += p->chunk) {
		struct flight f = { .rel = rel, .len = (size_t)MIN(p->chunk, p->len - rel) };
		char *mem = bounce ? bounce : p->addr + rel;
		int how;

		if (bounce && p->write)
			p->fill(p, rel, mem, f.len);
		do {
			ssize_t r = p->write ?
				sys_pwrite(p->fd, mem + f.got, f.len - f.got, p->file_off + rel + f.got) :
				sys_pread(p->fd, mem + f.got, f.len - f.got, p->file_off + rel + f.got);

			how = chunk_progress(p, &f, r < 0 ? neg_errno() : (int)r, &err);
		} while (how == CHUNK_REISSUE);
		chunk_end(p, &f, mem, &stop_at, how);
	}
	if (bounce)
		munmap(bounce, p->chunk);
	p->done = stop_at == UINT64_MAX ? p->len : stop_at;
	return err;
}

int dmaio_pipe_run(struct dmaio_engine *e, struct dmaio_pipe *p)
{
	struct flight fl[MAX_DEPTH];
	unsigned depth, inflight = 0;
	uint64_t next = 0, stop_at = UINT64_MAX;
	int err = 0;

	p->done = 0;
	p->eof = false;
	if (!p->len)
		return 0;
	if (!e)
		return pipe_sync(p);
	depth = MIN(p->depth ? p->depth : 1, MAX_DEPTH);
	if (p->bounce)
		depth = MIN(depth, e->bounce_n);
	memset(fl, 0, sizeof(fl));

	while ((next < p->len && !err && stop_at == UINT64_MAX) || inflight) {
		struct io_uring_cqe *cqe;
		unsigned head, seen = 0;
		int r;

		/* fill the queue */
		while (inflight < depth && next < p->len && !err && stop_at == UINT64_MAX) {
			unsigned i = 0;

			while (fl[i].busy)
				i++;
			fl[i] = (struct flight){ .rel = next, .len = MIN(p->chunk, p->len - next),
						 .busy = true };
			if (p->bounce && p->write)
				p->fill(p, fl[i].rel, chunk_mem(e, p, &fl[i], i), fl[i].len);
			if (prep(e, p, &fl[i], i)) {
				fl[i].busy = false;
				break;
			}
			next += fl[i].len;
			inflight++;
		}
		r = submit(e);
		if (r < 0 && r != -EBUSY && r != -EAGAIN) {
			/* the queue holds requests the kernel will not take: this ring is done */
			e->broken = true;
			p->done = 0; /* a lower bound: completions are unknown */
			return r;
		}
		if (!inflight)
			break;
		do
			r = io_uring_wait_cqe(&e->ring, &cqe);
		while (r == -EINTR);
		if (r < 0) {
			e->broken = true;
			p->done = 0;
			return r;
		}
		io_uring_for_each_cqe(&e->ring, head, cqe) {
			unsigned i = (unsigned)io_uring_cqe_get_data64(cqe);
			struct flight *f = &fl[i];
			int how = chunk_progress(p, f, sys_uring_result(cqe->res), &err);

			seen++;
			if (how == CHUNK_REISSUE) {
				if (!prep(e, p, f, i))
					continue;
				how = CHUNK_STOP; /* no room in the queue: cannot happen at depth */
				if (!err)
					err = -EBUSY;
			}
			chunk_end(p, f, chunk_mem(e, p, f, i), &stop_at, how);
			inflight--;
		}
		io_uring_cq_advance(&e->ring, seen);
	}
	p->done = stop_at == UINT64_MAX ? p->len : stop_at;
	return err;
}
