/* SPDX-License-Identifier: MIT */
/*
 * The io_uring engine. Each engine has one ring with `depth` ops in flight at most (the ring has
 * at least as many entries, so a started op always gets its SQE), a sparse fixed-buffer table
 * (slot 0: the pinned bounce area; then buffers registered once, least recently used out; then
 * proposed dma-buf registrations), and an eventfd + epoll set that polls readable when ops
 * finished on the ring or on the worker threads. Without a ring every op runs on the workers.
 */
#include <fcntl.h>
#include <liburing.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <unistd.h>

#include "engine.h"
#include "../sys/sys.h"
#include "../uapi/io_uring-dmabuf.h"

#define SLOT_BOUNCE 0
#define SLOT_REG_FIRST 1
#define SLOT_DMABUF_FIRST 24
#define ENGINE_SLOTS 32
#define BOUNCE_UNIT (64u << 10)
#define BOUNCE_UNITS 256 /* 16 MiB */
#define BOUNCE_WORDS (BOUNCE_UNITS / 64)

/* Bounce memory, made on first use. The pinned area is anonymous memory registered as fixed
 * buffer slot 0; the kernel-copy area is a sealed memfd, so that the kernel can copy between it
 * and memory the process must not touch itself (dmaio_engine_bounce_copy). */
enum { AREA_PINNED, AREA_KCOPY };
struct bounce_area {
	char *mem;
	int fd;                /* AREA_KCOPY: the memfd (valid while mem) */
	bool fixed;
	bool dontfork;         /* not in a child (MADV_DONTFORK: no MADV_WIPEONFORK) */
	uint64_t map[BOUNCE_WORDS]; /* set bit: unit in use */
};

struct reg_slot {
	uint64_t buf_id;
	uint64_t file_id;          /* dma-buf registrations: the target file */
	char *base;
	size_t len;
	uint64_t used;
	unsigned refs;             /* started ops that name this slot (until they are put back) */
	bool set;
};

struct dmaio_engine {
	struct dmaio_ctx *ctx;
	unsigned fork_gen;            /* dmaio_fork_generation() of the process that made it */
	bool has_ring;
	struct io_uring ring;
	unsigned depth;
	struct dmaio_op *ops;
	struct dmaio_op *free_ops;
	unsigned inflight;            /* ops started and not returned by reap */
	unsigned on_pool;             /* of which on the worker threads */
	int efd, epfd;                /* -1 both for an inline engine */
	bool inline_only;             /* no descriptor of its own: every op runs in start */
	bool kicked;                  /* the owner wrote the eventfd and has not read it since */
	pthread_mutex_t lock;         /* done list; slots (dmaio_buf_free of another thread) */
	struct dmaio_op *done_head, *done_tail;
	bool table;                   /* sparse table registered */
	struct reg_slot slots[ENGINE_SLOTS];
	uint64_t tick;
	struct bounce_area bounce[2]; /* AREA_PINNED, AREA_KCOPY */
	bool broken;
	struct dmaio_engine *next;    /* ctx->engines */
};

static int dmabuf_kernel(struct io_uring *ring);

void dmaio_engine_probe(struct dmaio_sys_facts *s)
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
		s->uring_dmabuf_kernel = DMAIO_CAP_NO;
		s->uring_dmabuf_err = r;
		return;
	}
	s->io_uring = DMAIO_CAP_YES;
	r = dmabuf_kernel(&ring);
	s->uring_dmabuf_kernel = r ? DMAIO_CAP_NO : DMAIO_CAP_YES;
	s->uring_dmabuf_err = r;
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
}

static unsigned pow2_at_least(unsigned v)
{
	unsigned p = 4;

	while (p < v)
		p <<= 1;
	return p;
}

/*
 * An engine needs two descriptors (an eventfd its workers signal, an epoll set the owner waits
 * on) and a third for its ring. When they cannot be had (EMFILE/ENFILE) and the caller needs no
 * descriptor to poll (may_inline: the synchronous calls), it is made inline instead: no ring,
 * no workers, every op runs on the caller's thread as it starts. Slower, but a process with no
 * descriptor left still moves its data (the page-cache paths need none).
 */
int dmaio_engine_new(struct dmaio_ctx *ctx, unsigned depth, bool use_ring, bool may_inline,
		     struct dmaio_engine **out)
{
	struct epoll_event ev = { .events = EPOLLIN };
	struct dmaio_engine *e = calloc(1, sizeof(*e));
	int r;

	if (!e)
		return -ENOMEM;
	e->ctx = ctx;
	e->fork_gen = dmaio_fork_generation();
	e->depth = depth;
	e->efd = e->epfd = -1;
	e->ops = calloc(depth, sizeof(*e->ops));
	if (!e->ops) {
		free(e);
		return -ENOMEM;
	}
	for (unsigned i = depth; i-- > 0;) {
		e->ops[i].next = e->free_ops;
		e->free_ops = &e->ops[i];
	}
	pthread_mutex_init(&e->lock, NULL);
	e->efd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	e->epfd = e->efd < 0 ? -1 : epoll_create1(EPOLL_CLOEXEC);
	if (e->efd < 0 || e->epfd < 0) {
		r = neg_errno();
		if (!may_inline || (r != -EMFILE && r != -ENFILE))
			goto fail;
		if (e->efd >= 0)
			close(e->efd);
		e->efd = e->epfd = -1;
		e->inline_only = true;
		use_ring = false;
	}
	ev.data.u32 = 0;
	if (!e->inline_only && epoll_ctl(e->epfd, EPOLL_CTL_ADD, e->efd, &ev)) {
		r = neg_errno();
		goto fail;
	}
	if (use_ring && io_uring_queue_init(pow2_at_least(depth), &e->ring, 0) == 0) {
		e->has_ring = true;
		ev.data.u32 = 1;
		if (epoll_ctl(e->epfd, EPOLL_CTL_ADD, e->ring.ring_fd, &ev)) {
			r = neg_errno();
			goto fail;
		}
		/* a sparse table lets buffers come and go one slot at a time */
		e->table = io_uring_register_buffers_sparse(&e->ring, ENGINE_SLOTS) == 0;
	}
	pthread_mutex_lock(&ctx->io_lock);
	e->next = ctx->engines;
	ctx->engines = e;
	pthread_mutex_unlock(&ctx->io_lock);
	*out = e;
	return 0;
fail:
	if (e->has_ring)
		io_uring_queue_exit(&e->ring);
	if (e->efd >= 0)
		close(e->efd);
	if (e->epfd >= 0)
		close(e->epfd);
	pthread_mutex_destroy(&e->lock);
	free(e->ops);
	free(e);
	return r;
}

bool dmaio_engine_has_ring(const struct dmaio_engine *e)
{
	return e->has_ring;
}

bool dmaio_engine_is_inline(const struct dmaio_engine *e)
{
	return e->inline_only;
}

bool dmaio_engine_inherited(const struct dmaio_engine *e)
{
	return e->fork_gen != dmaio_fork_generation();
}

unsigned dmaio_engine_inflight(const struct dmaio_engine *e)
{
	return e->inflight;
}

int dmaio_engine_fd(const struct dmaio_engine *e)
{
	return e->epfd;
}

/* The owner's kicks write the eventfd only when its last kick has not been consumed yet (the
 * owner thread alone kicks and acks); worker threads write it for every op they finish, after
 * the op is on the done list, so a consumed wakeup never hides an op. */
void dmaio_engine_kick(struct dmaio_engine *e)
{
	uint64_t one = 1;

	if (!e->kicked && e->efd >= 0) {
		e->kicked = true;
		(void)!write(e->efd, &one, sizeof(one));
	}
}

void dmaio_engine_ack(struct dmaio_engine *e)
{
	uint64_t v;

	e->kicked = false;
	if (e->efd >= 0)
		(void)!read(e->efd, &v, sizeof(v));
}

static void unlink_engine(struct dmaio_engine *e)
{
	struct dmaio_ctx *c = e->ctx;

	pthread_mutex_lock(&c->io_lock);
	for (struct dmaio_engine **pp = &c->engines; *pp; pp = &(*pp)->next) {
		if (*pp == e) {
			*pp = e->next;
			break;
		}
	}
	pthread_mutex_unlock(&c->io_lock);
}

/* forked: in a child, only what the child has (an area left out of it is not there: its
 * addresses may hold one of the child's own mappings by now) */
static void area_drop(struct bounce_area *a, bool forked)
{
	if (!a->mem)
		return;
	if (!forked || !a->dontfork)
		munmap(a->mem, (size_t)BOUNCE_UNIT * BOUNCE_UNITS);
	if (a->fd >= 0)
		close(a->fd);
	a->mem = NULL;
}

/* After fork the ring's memory is shared with the parent's ring: the child only unmaps its copy
 * and closes its descriptors; nothing is submitted, registered or unregistered. */
void dmaio_engine_abandon(struct dmaio_engine *e)
{
	if (e->has_ring) {
		munmap(e->ring.sq.ring_ptr, e->ring.sq.ring_sz);
		if (e->ring.cq.ring_ptr != e->ring.sq.ring_ptr)
			munmap(e->ring.cq.ring_ptr, e->ring.cq.ring_sz);
		munmap(e->ring.sq.sqes, e->ring.sq.ring_entries * sizeof(struct io_uring_sqe));
		close(e->ring.ring_fd);
	}
	/* a bounce area left out of the child is not there: its addresses may hold one of the
	 * child's own mappings by now */
	for (unsigned i = 0; i < ARRAY_SIZE(e->bounce); i++)
		area_drop(&e->bounce[i], true);
	if (e->efd >= 0)
		close(e->efd);
	if (e->epfd >= 0)
		close(e->epfd);
	unlink_engine(e);
	free(e->ops);
	free(e);
}

void dmaio_engine_free(struct dmaio_engine *e)
{
	struct dmaio_op *done[16];

	if (!e)
		return;
	/* the kernel may still write into memory of ops in flight, and workers hold ops: let them
	 * end (a broken ring's own ops end in io_uring_queue_exit) */
	while (e->inflight > (e->broken ? e->inflight - e->on_pool : 0)) {
		int n = dmaio_engine_reap(e, done, ARRAY_SIZE(done), e->broken ? 100 : -1);

		if (n < 0 && !e->broken)
			e->broken = true;
		for (int i = 0; i < n; i++)
			dmaio_engine_op_put(e, done[i]);
	}
	unlink_engine(e);
	if (e->has_ring)
		io_uring_queue_exit(&e->ring); /* also unregisters (unpins) the buffers */
	for (unsigned i = 0; i < ARRAY_SIZE(e->bounce); i++)
		area_drop(&e->bounce[i], false);
	if (e->efd >= 0)
		close(e->efd);
	if (e->epfd >= 0)
		close(e->epfd);
	pthread_mutex_destroy(&e->lock);
	free(e->ops);
	free(e);
}

struct dmaio_op *dmaio_engine_op_get(struct dmaio_engine *e)
{
	struct dmaio_op *op = e->free_ops;

	if (!op)
		return NULL;
	e->free_ops = op->next;
	memset(op, 0, sizeof(*op));
	op->e = e;
	op->buf_index = -1;
	op->bounce = -1;
	op->slot_held = -1;
	op->rest_fd = -1;
	return op;
}

/* A started op names its registration slot until it is put back: an SQE is prepared now and
 * submitted later (and a short transfer is prepared again), and the kernel resolves the slot
 * when it takes the SQE, so the slot must not be given to another buffer meanwhile. */
static void slot_hold(struct dmaio_engine *e, struct dmaio_op *op)
{
	if (op->buf_index < SLOT_REG_FIRST || op->buf_index >= ENGINE_SLOTS)
		return;
	pthread_mutex_lock(&e->lock);
	e->slots[op->buf_index].refs++;
	pthread_mutex_unlock(&e->lock);
	op->slot_held = op->buf_index;
}

void dmaio_engine_op_put(struct dmaio_engine *e, struct dmaio_op *op)
{
	if (op->slot_held >= 0) {
		pthread_mutex_lock(&e->lock);
		if (e->slots[op->slot_held].refs)
			e->slots[op->slot_held].refs--;
		pthread_mutex_unlock(&e->lock);
		op->slot_held = -1;
	}
	if (op->bounce >= 0)
		dmaio_engine_bounce_put(e, op);
	op->next = e->free_ops;
	e->free_ops = op;
}

/*
 * Account one result (bytes or -errno) of an op. Transient errors and short counts are reissued
 * for the rest; O_DIRECT needs the rest to start aligned, so progress is rounded down to the
 * alignment and the unaligned bytes moved again (idempotent). A read that ends short twice at
 * the same place met end of file. A direct write that ends short at an unaligned offset was cut
 * there by the kernel (RLIMIT_FSIZE between two sectors of a block): the same O_DIRECT write
 * would end there again, so its rest goes through the page cache (rest_fd), whose answer at
 * that offset is the real one (-EFBIG), the bytes before it counted.
 */
/* Does the rest of this write end past the process's RLIMIT_FSIZE? (asked on an error only) */
static bool crosses_fsize_limit(const struct dmaio_op *op)
{
	struct rlimit rl;

	return !getrlimit(RLIMIT_FSIZE, &rl) && rl.rlim_cur != RLIM_INFINITY &&
	       op->off + op->len > (uint64_t)rl.rlim_cur;
}

int dmaio_op_progress(struct dmaio_op *op, int res)
{
	uint32_t end, keep;

	/* ECANCELED: io-wq gives up a punted request when it cannot start a worker while a signal
	 * is pending; we never cancel ourselves */
	if (res == -EAGAIN || res == -EINTR || res == -ECANCELED) {
		if (++op->retries < SYS_RETRIES)
			return DMAIO_OP_REISSUE;
		op->res = res;
		return DMAIO_OP_STOP;
	}
	if (res == -EINVAL && op->kind == DMAIO_OPK_WRITE && op->direct && op->rest_fd >= 0 &&
	    crosses_fsize_limit(op)) {
		/* RLIMIT_FSIZE cut this write to a length O_DIRECT cannot take: the page cache
		 * writes up to the limit, then answers -EFBIG there */
		op->fd = op->rest_fd;
		op->direct = false;
		return DMAIO_OP_REISSUE;
	}
	if (res < 0) {
		op->res = res;
		return DMAIO_OP_STOP;
	}
	if (res == 0) {
		if (op->kind == DMAIO_OPK_READ) {
			op->eof = true;
			return DMAIO_OP_STOP;
		}
		if (++op->retries < 8)
			return DMAIO_OP_REISSUE;
		op->res = -EIO;
		return DMAIO_OP_STOP;
	}
	end = op->got + (uint32_t)res;
	if (end >= op->len) {
		op->got = op->len;
		return DMAIO_OP_DONE;
	}
	if (op->kind == DMAIO_OPK_READ && end == op->last_end) {
		op->got = end;
		op->eof = true;
		return DMAIO_OP_STOP;
	}
	op->last_end = end;
	if (op->kind == DMAIO_OPK_WRITE && op->direct && op->rest_fd >= 0 && op->align > 1 &&
	    end % op->align) {
		op->got = end;
		op->fd = op->rest_fd;
		op->direct = false;
		return DMAIO_OP_REISSUE;
	}
	keep = op->direct && op->align > 1 ? end / op->align * op->align : end;
	if (keep == op->got && ++op->retries >= 8) {
		op->res = -EIO;
		return DMAIO_OP_STOP;
	}
	op->got = keep;
	return DMAIO_OP_REISSUE;
}

static void prep(struct dmaio_engine *e, struct dmaio_op *op)
{
	struct io_uring_sqe *sqe = io_uring_get_sqe(&e->ring);
	char *mem = op->mem + op->got;
	unsigned n = op->len - op->got;
	uint64_t off = op->off + op->got;

	/* cannot fail: at most depth ops, each with at most one SQE, and depth <= entries */
	if (op->kind == DMAIO_OPK_WRITE) {
		if (op->buf_index >= 0)
			io_uring_prep_write_fixed(sqe, op->fd, mem, n, off, op->buf_index);
		else
			io_uring_prep_write(sqe, op->fd, mem, n, off);
	} else {
		if (op->buf_index >= 0)
			io_uring_prep_read_fixed(sqe, op->fd, mem, n, off, op->buf_index);
		else
			io_uring_prep_read(sqe, op->fd, mem, n, off);
	}
	io_uring_sqe_set_data(sqe, op);
}

void dmaio_engine_start(struct dmaio_engine *e, struct dmaio_op *op)
{
	e->inflight++;
	slot_hold(e, op);
	if (e->has_ring && op->kind != DMAIO_OPK_CALL && !e->broken) {
		prep(e, op);
		return;
	}
	e->on_pool++;
	if (e->inline_only || dmaio_pool_push(e->ctx, op)) {
		/* no worker thread could be started: run it here, synchronously */
		dmaio_pool_run(op);
		dmaio_engine_pool_done(op);
	}
}

/* called by a worker (or by start when none could run) when an op ended */
void dmaio_engine_pool_done(struct dmaio_op *op)
{
	struct dmaio_engine *e = op->e;
	uint64_t one = 1;

	/* under the lock, the op first and then the wakeup: the owner pops ops under this lock,
	 * so it cannot free the engine (and close the eventfd) before this thread lets go */
	pthread_mutex_lock(&e->lock);
	op->next = NULL;
	if (e->done_tail)
		e->done_tail->next = op;
	else
		__atomic_store_n(&e->done_head, op, __ATOMIC_RELEASE); /* peeked without the lock */
	e->done_tail = op;
	if (e->efd >= 0)
		(void)!write(e->efd, &one, sizeof(one));
	pthread_mutex_unlock(&e->lock);
}

static int flush(struct dmaio_engine *e)
{
	int r;

	if (!e->has_ring || e->broken || !io_uring_sq_ready(&e->ring))
		return 0;
	r = io_uring_submit(&e->ring);
	if (r >= 0 || r == -EINTR || r == -EAGAIN || r == -EBUSY)
		return 0; /* busy: completions first, then again */
	e->broken = true;
	return r;
}

int dmaio_engine_submit(struct dmaio_engine *e)
{
	return flush(e);
}

static unsigned collect(struct dmaio_engine *e, struct dmaio_op **out, unsigned max);

unsigned dmaio_engine_peek(struct dmaio_engine *e, struct dmaio_op **out, unsigned max)
{
	return collect(e, out, max);
}

static unsigned collect(struct dmaio_engine *e, struct dmaio_op **out, unsigned max)
{
	struct io_uring_cqe *cqe;
	unsigned n = 0;

	while (e->has_ring && !e->broken && n < max && io_uring_peek_cqe(&e->ring, &cqe) == 0) {
		struct dmaio_op *op = io_uring_cqe_get_data(cqe);
		int how = dmaio_op_progress(op, sys_uring_result(cqe->res));

		io_uring_cqe_seen(&e->ring, cqe);
		if (how == DMAIO_OP_REISSUE) {
			prep(e, op);
			continue;
		}
		e->inflight--;
		out[n++] = op;
	}
	if (n < max && __atomic_load_n(&e->done_head, __ATOMIC_ACQUIRE)) {
		pthread_mutex_lock(&e->lock);
		while (n < max && e->done_head) {
			struct dmaio_op *op = e->done_head;

			__atomic_store_n(&e->done_head, op->next, __ATOMIC_RELAXED);
			if (!e->done_head)
				e->done_tail = NULL;
			e->inflight--;
			e->on_pool--;
			out[n++] = op;
		}
		pthread_mutex_unlock(&e->lock);
	}
	return n;
}

int dmaio_engine_reap(struct dmaio_engine *e, struct dmaio_op **out, unsigned max, int timeout_ms)
{
	uint64_t deadline = timeout_ms > 0 ? dmaio_now_ns() + (uint64_t)timeout_ms * 1000000ull : 0;

	for (;;) {
		unsigned n;
		int r, wait_ms;

		/* what was started is submitted when returning, or by the wait itself */
		n = collect(e, out, max);
		if (n || !timeout_ms || !e->inflight) {
			r = flush(e);
			return r < 0 ? r : (int)n;
		}
		wait_ms = -1;
		if (timeout_ms > 0) {
			uint64_t now = dmaio_now_ns();

			if (now >= deadline)
				return 0;
			wait_ms = (int)((deadline - now + 999999) / 1000000);
		}
		if (e->has_ring && !e->broken && !e->on_pool) {
			/* only the ring: submit and wait in it, one syscall */
			struct io_uring_cqe *cqe;
			struct __kernel_timespec ts = { .tv_sec = wait_ms / 1000,
							.tv_nsec = (wait_ms % 1000) * 1000000ll };

			r = io_uring_submit_and_wait_timeout(&e->ring, &cqe, 1,
							     wait_ms < 0 ? NULL : &ts, NULL);
			if (r < 0 && r != -ETIME && r != -EINTR && r != -EAGAIN && r != -EBUSY) {
				e->broken = true;
				return r;
			}
		} else {
			struct epoll_event ev[2];

			r = flush(e);
			if (r < 0)
				return r;
			if (e->epfd < 0) /* inline: every op ended in start; none can come */
				return 0;
			r = epoll_wait(e->epfd, ev, 2, wait_ms);
			if (r < 0 && errno != EINTR)
				return neg_errno();
			dmaio_engine_ack(e);
		}
	}
}

/* ---- registered memory -------------------------------------------------------------------- */
static int slot_set(struct dmaio_engine *e, unsigned idx, void *base, size_t len)
{
	struct iovec iov = { .iov_base = base, .iov_len = len };
	__u64 tag = 0;
	int r = io_uring_register_buffers_update_tag(&e->ring, idx, &iov, &tag, 1);

	return r == 1 ? 0 : (r < 0 ? r : -EIO);
}

void dmaio_engines_lock_all(struct dmaio_ctx *ctx)
{
	for (struct dmaio_engine *e = ctx->engines; e; e = e->next)
		pthread_mutex_lock(&e->lock);
}

void dmaio_engines_unlock_all(struct dmaio_ctx *ctx)
{
	for (struct dmaio_engine *e = ctx->engines; e; e = e->next)
		pthread_mutex_unlock(&e->lock);
}

/* Unpin a freed (or unmapped) buffer from every ring of the context. */
void dmaio_engines_forget_buf(struct dmaio_ctx *ctx, uint64_t buf_id)
{
	pthread_mutex_lock(&ctx->io_lock);
	for (struct dmaio_engine *e = ctx->engines; e; e = e->next) {
		if (dmaio_engine_inherited(e))
			continue;
		pthread_mutex_lock(&e->lock);
		for (unsigned i = SLOT_REG_FIRST; i < ENGINE_SLOTS; i++) {
			if (!e->slots[i].set || e->slots[i].buf_id != buf_id)
				continue;
			slot_set(e, i, NULL, 0);
			memset(&e->slots[i], 0, sizeof(e->slots[i]));
		}
		pthread_mutex_unlock(&e->lock);
	}
	pthread_mutex_unlock(&ctx->io_lock);
}

/* The LRU victim among slots [first, last) that no started op names, or -1 when every slot is
 * named by one (the caller's op then goes without a fixed buffer). */
static int victim(struct dmaio_engine *e, unsigned first, unsigned last)
{
	int v = -1;

	for (unsigned i = first; i < last; i++) {
		if (!e->slots[i].set)
			return (int)i;
		if (e->slots[i].refs)
			continue;
		if (v < 0 || e->slots[i].used < e->slots[v].used)
			v = (int)i;
	}
	return v;
}

/* The slot of [first, last) holding key (its use time refreshed), or -1. Engine lock held. */
static int slot_find(struct dmaio_engine *e, unsigned first, unsigned last, const struct reg_slot *key)
{
	for (unsigned i = first; i < last; i++) {
		struct reg_slot *s = &e->slots[i];

		if (s->set && s->buf_id == key->buf_id && s->file_id == key->file_id &&
		    s->base == key->base && s->len == key->len) {
			s->used = e->tick;
			return (int)i;
		}
	}
	return -1;
}

int dmaio_engine_regbuf(struct dmaio_engine *e, uint64_t buf_id, void *base, size_t len)
{
	struct reg_slot key = { .buf_id = buf_id, .base = base, .len = len, .set = true };
	int v;
	int r;

	if (!e->table)
		return -EOPNOTSUPP;
	pthread_mutex_lock(&e->lock);
	key.used = ++e->tick;
	r = slot_find(e, SLOT_REG_FIRST, SLOT_DMABUF_FIRST, &key);
	if (r >= 0) {
		pthread_mutex_unlock(&e->lock);
		return r;
	}
	/* never a slot a started op names (slot_hold): its SQE may not be in the kernel yet */
	v = victim(e, SLOT_REG_FIRST, SLOT_DMABUF_FIRST);
	if (v < 0) {
		pthread_mutex_unlock(&e->lock);
		return -EBUSY;
	}
	r = slot_set(e, (unsigned)v, base, len);
	if (r) {
		memset(&e->slots[v], 0, sizeof(e->slots[v]));
	} else {
		e->slots[v] = key;
		r = (int)v;
	}
	pthread_mutex_unlock(&e->lock);
	return r;
}

/* The area's memory: anonymous and pinned (registered as slot 0), or a sealed memfd. */
static int area_make(struct dmaio_engine *e, unsigned which)
{
	struct bounce_area *a = &e->bounce[which];
	size_t len = (size_t)BOUNCE_UNIT * BOUNCE_UNITS;
	void *p;
	int fd = -1, err;

	if (which == AREA_KCOPY) {
		fd = sys_memfd_create("dmaio-kcopy-bounce", MFD_ALLOW_SEALING);
		if (fd < 0)
			return fd;
		err = sys_ftruncate(fd, (off_t)len);
		if (!err && fcntl(fd, F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_SEAL))
			err = neg_errno();
		if (!err)
			err = sys_mmap(len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0, &p);
		if (err) {
			close(fd);
			return err;
		}
	} else {
		p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		if (p == MAP_FAILED)
			return neg_errno();
		madvise(p, len, MADV_HUGEPAGE);
	}
	/* A child makes its own engines (and bounce areas), and fork() would copy every page of a
	 * pinned private mapping at once (16 MiB per engine per fork). The pinned area is wiped
	 * in a child (MADV_WIPEONFORK: nothing copied, the child's copy of the mapping reads
	 * zeros until its abandoned engine unmaps it); only a kernel without it (before 4.14)
	 * leaves the area out of the child (MADV_DONTFORK). Left out, its addresses are a hole
	 * that a tool tracing the child does not know of: valgrind's leak check at a child's
	 * exit faulted on each of its words, 2 M faults per area (rel-soak-faults' fork children
	 * ran past 200 s). The kernel-copy area is a shared mapping: fork() copies none of its
	 * pages, the child inherits it as it is and unmaps it. */
	a->dontfork = false;
	if (which == AREA_PINNED && madvise(p, len, MADV_WIPEONFORK))
		a->dontfork = !madvise(p, len, MADV_DONTFORK);
	a->mem = p;
	a->fd = fd;
	a->fixed = which == AREA_PINNED && e->table && !slot_set(e, SLOT_BOUNCE, p, len);
	return 0;
}

int dmaio_engine_bounce_ready(struct dmaio_engine *e, bool kcopy, uint64_t *ns, uint64_t *bytes)
{
	unsigned which = kcopy ? AREA_KCOPY : AREA_PINNED;
	uint64_t t0;
	int err;

	*ns = 0;
	*bytes = 0;
	if (e->bounce[which].mem)
		return 0;
	t0 = dmaio_now_ns();
	err = area_make(e, which);
	if (err)
		return err;
	*ns = MAX(dmaio_now_ns() - t0, 1);
	*bytes = (uint64_t)BOUNCE_UNIT * BOUNCE_UNITS;
	return 0;
}

bool dmaio_engine_bounce_made(const struct dmaio_engine *e, bool kcopy)
{
	/* read without the lock: a stale answer only misprices one choice */
	return __atomic_load_n(&e->bounce[kcopy ? AREA_KCOPY : AREA_PINNED].mem, __ATOMIC_RELAXED);
}

/* Bounce memory: 16 MiB per area in 64 KiB units. */
int dmaio_engine_bounce_get(struct dmaio_engine *e, uint32_t n, bool kcopy, struct dmaio_op *op)
{
	unsigned units = (n + BOUNCE_UNIT - 1) / BOUNCE_UNIT, run = 0, which;
	struct bounce_area *a;
	int err;

	if (!units || units > DMAIO_BOUNCE_MAX / BOUNCE_UNIT)
		return -EINVAL;
	which = kcopy ? AREA_KCOPY : AREA_PINNED;
	a = &e->bounce[which];
	if (!a->mem) {
		err = area_make(e, which);
		if (err)
			return err;
	}
	for (unsigned i = 0; i < BOUNCE_UNITS; i++) {
		if (a->map[i / 64] & (1ull << (i % 64))) {
			run = 0;
			continue;
		}
		if (++run == units) {
			unsigned first = i + 1 - units;

			for (unsigned j = first; j <= i; j++)
				a->map[j / 64] |= 1ull << (j % 64);
			op->bounce = (int)first;
			op->bounce_units = units;
			op->bounce_area = (uint8_t)which;
			op->mem = a->mem + (size_t)first * BOUNCE_UNIT;
			op->buf_index = a->fixed ? SLOT_BOUNCE : -1;
			return 0;
		}
	}
	return -EAGAIN;
}

void dmaio_engine_bounce_put(struct dmaio_engine *e, struct dmaio_op *op)
{
	struct bounce_area *a = &e->bounce[op->bounce_area];

	for (unsigned j = (unsigned)op->bounce; j < (unsigned)op->bounce + op->bounce_units; j++)
		a->map[j / 64] &= ~(1ull << (j % 64));
	op->bounce = -1;
}

int dmaio_engine_bounce_copy(struct dmaio_engine *e, const struct dmaio_op *op, char *mem,
			     size_t n, bool to_bounce, size_t *moved)
{
	const struct bounce_area *a = &e->bounce[AREA_KCOPY];
	uint64_t off;

	*moved = 0;
	if (op->bounce < 0 || op->bounce_area != AREA_KCOPY ||
	    n > (size_t)op->bounce_units * BOUNCE_UNIT)
		return -EINVAL;
	off = (uint64_t)op->bounce * BOUNCE_UNIT;
	/* the kernel reads mem (pwrite into the memfd) or writes it (pread out of the memfd) */
	return to_bounce ? sys_pwrite_full(a->fd, mem, n, off, moved)
			 : sys_pread_full(a->fd, mem, n, off, moved);
}

/* ---- the proposed io_uring dma-buf registration ------------------------------------------- */
/* One descriptor of type DMABUF for target_fd, sent as a buffer update of one slot flagged as
 * carrying descriptors (uapi/io_uring-dmabuf.h says which posted version this follows). */
void dmaio_uring_dmabuf_request(struct io_uring_rsrc_update2 *up, struct dmaio_io_uring_regbuf_desc *d,
				unsigned slot, int dmabuf_fd, int target_fd)
{
	memset(d, 0, sizeof(*d));
	d->type = DMAIO_IO_REGBUF_TYPE_DMABUF;
	d->dmabuf_fd = dmabuf_fd;
	d->target_fd = target_fd;
	memset(up, 0, sizeof(*up));
	up->offset = slot;
	up->resv = DMAIO_IORING_RSRC_UPDATE_EXTENDED;
	up->data = (__u64)(uintptr_t)d;
	up->nr = 1;
}

static int register_dmabuf(struct io_uring *ring, unsigned slot, int dmabuf_fd, int target_fd)
{
	struct dmaio_io_uring_regbuf_desc d;
	struct io_uring_rsrc_update2 up;
	int r;

	dmaio_uring_dmabuf_request(&up, &d, slot, dmabuf_fd, target_fd);
	r = io_uring_register(ring->ring_fd, IORING_REGISTER_BUFFERS_UPDATE, &up, sizeof(up));
	if (r == 1)
		return 0;
	return r < 0 ? r : -EOPNOTSUPP;
}

/*
 * Does the kernel know the proposed registration at all? Two requests that need no buffer and
 * no device (the answers as posted in v3, 2026-04-29, see uapi/io_uring-dmabuf.h):
 *   1. an extended update clearing one slot (type EMPTY): mainline refuses the flag word with
 *      -EINVAL ("resv" must be zero there), a kernel with the series installs nothing (1);
 *   2. a DMABUF descriptor naming no file (-1): a kernel that has the type fails the fget with
 *      -EBADF; -EINVAL means it knows extended updates but not the type, -EOPNOTSUPP that it
 *      was built without the dma-buf I/O support (v3: CONFIG_DMABUF_TOKEN).
 * Returns 0 when both say the registration exists, else the -errno that says why not.
 */
static int dmabuf_kernel(struct io_uring *ring)
{
	struct dmaio_io_uring_regbuf_desc d;
	struct io_uring_rsrc_update2 up;
	int r;

	r = io_uring_register_buffers_sparse(ring, 1);
	if (r)
		return r;
	dmaio_uring_dmabuf_request(&up, &d, 0, -1, -1);
	d.type = DMAIO_IO_REGBUF_TYPE_EMPTY;
	d.dmabuf_fd = 0;
	d.target_fd = 0;
	r = io_uring_register(ring->ring_fd, IORING_REGISTER_BUFFERS_UPDATE, &up, sizeof(up));
	if (r == 1) {
		dmaio_uring_dmabuf_request(&up, &d, 0, -1, -1);
		r = io_uring_register(ring->ring_fd, IORING_REGISTER_BUFFERS_UPDATE, &up, sizeof(up));
		r = r == -EBADF ? 0 : r < 0 ? r : -EPROTO; /* a slot for no file: nothing we know */
	} else if (r >= 0) {
		r = -EPROTO;
	}
	io_uring_unregister_buffers(ring);
	return r;
}

int dmaio_engine_dmabuf_probe(int dmabuf_fd, int target_fd)
{
	struct io_uring ring;
	int r = io_uring_queue_init(4, &ring, 0);

	if (r < 0)
		return r;
	r = io_uring_register_buffers_sparse(&ring, 1);
	if (!r)
		r = register_dmabuf(&ring, 0, dmabuf_fd, target_fd);
	io_uring_queue_exit(&ring);
	return r;
}

int dmaio_engine_dmabuf_slot(struct dmaio_engine *e, uint64_t buf_id, int dmabuf_fd,
			     uint64_t file_id, int target_fd)
{
	struct reg_slot key = { .buf_id = buf_id, .file_id = file_id, .set = true };
	int v;
	int r;

	if (!e->table)
		return -EOPNOTSUPP;
	pthread_mutex_lock(&e->lock);
	key.used = ++e->tick;
	r = slot_find(e, SLOT_DMABUF_FIRST, ENGINE_SLOTS, &key);
	if (r >= 0) {
		pthread_mutex_unlock(&e->lock);
		return r;
	}
	v = victim(e, SLOT_DMABUF_FIRST, ENGINE_SLOTS);
	if (v < 0) {
		pthread_mutex_unlock(&e->lock);
		return -EBUSY;
	}
	r = register_dmabuf(&e->ring, (unsigned)v, dmabuf_fd, target_fd);
	if (r) {
		if (e->slots[v].set)
			slot_set(e, v, NULL, 0);
		memset(&e->slots[v], 0, sizeof(e->slots[v]));
	} else {
		e->slots[v] = key;
		r = (int)v;
	}
	pthread_mutex_unlock(&e->lock);
	return r;
}
