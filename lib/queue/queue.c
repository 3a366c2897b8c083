/* SPDX-License-Identifier: MIT */
/* Requests in flight: path choice and fallback per request, ops fed to the engine across
 * requests, completion, accounting. See queue.h. */
#include <linux/dma-buf.h>
#include <stdlib.h>
#include <string.h>

#include "queue.h"
#include "../choose/choose.h"
#include "../engine/engine.h"
#include "../paths/path.h"
#include "../providers/provider.h"
#include "../sys/sys.h"

#define SYNC_DEPTH 8      /* ops in flight of a synchronous call */
#define REAP_BATCH 64

struct dmaio_q {
	struct dmaio_ctx *ctx;
	struct dmaio_engine *e;
	struct dmaio_choice_memo memo; /* its last automatic choice's prices (choose.c) */
	unsigned cap;
	struct dmaio_req *reqs;       /* cap slots */
	struct dmaio_req *free_reqs;
	struct dmaio_req *active, *active_tail;  /* started, not finished: oldest first */
	struct dmaio_req *ready, *ready_tail;    /* finished, not reaped */
	unsigned held;                /* requests in the queue (not reaped) */
	struct dmaio_progress prog;
	struct dmaio_q *next_free;    /* ctx->free_qs */
	/* The service clock: it advances by the time that passes over the number of ops in the
	 * engine, so what an op is charged is its share of the time it was in flight, and a
	 * request's service is the sum of its ops'. Ops in flight share the machine, and paths mix
	 * in one queue: a request that finishes right after another path's long one did not cost
	 * that wait, nor did the long one cost it all (gaps between completions charged them so,
	 * and a mixed load learned its fastest path as its slowest: a 4 GiB model load went
	 * 0.62-0.83x the baseline on udmabuf-direct 0.4%, against 1.05x forced), and a request
	 * waiting for room in the engine costs nothing yet. A path's begin (its mapping, its
	 * registration) is timed apart and left out. The work a path does on the queue's thread
	 * for one op (bounce-direct's copy into or out of bounce memory) is that request's own:
	 * the clock stops for the others while it runs (own_work). Charged to the ops in flight,
	 * a copy path looked cheap beside a direct one in a mixed queue and the direct one dear
	 * (our VM's 64 KiB writes into a udmabuf buffer: udmabuf-direct 2.5x faster forced, auto
	 * mixed in bounce-direct and went at 0.61x). */
	double vclock;
	uint64_t vlast;
	unsigned nops;
	/* How busy the queue is: the time with ops in flight, and its share of the time between
	 * request arrivals (a moving average of 1/8 weight; 1 until measured). A queue busy a
	 * small part of the time does not make its caller wait: the choice may then save CPU at
	 * some cost in time (choose.c, margin_of). Asynchronous queues only: a synchronous call's
	 * caller waits on every request. */
	uint64_t busy_ns, win_t0, win_busy_ns;
	float busy;
	/* The caller's last dmaio_queue_reap with requests in flight asked to wait for some
	 * (min > 0, a timeout): it waits on its I/O, and time is what a path costs it whatever
	 * the busy share. A batch after an idle gap (a bulk caller that drops the page cache
	 * between passes, a loader that parses between files) is busy a small share of the time
	 * per arrival; taken for a queue with time to spare, its choice traded up to 2x the time
	 * for CPU (our host's 16 MiB-buffer cells: auto on udmabuf-direct at 0.68-0.80x of
	 * bounce-direct, never explored, the margin 2x). A caller that polls the queue's fd and
	 * reaps without waiting (dmaiosink) keeps the busy share. */
	bool caller_waits;
	/* what finished requests cost, summed per cost key until LEARN_BATCH of them (one
	 * request's share says little: requests finish in bunches), or until the queue goes idle
	 * with at least LEARN_IDLE_NS summed (one long request is a sample of its own: a
	 * 16 MiB range read alone was never learned); an explored request with its burst (below;
	 * explored one at a time in sums of 8, at 1 in 256 a path waited 2048 requests for a
	 * sum) */
	struct learn_acc {
		uint32_t key;
		unsigned n;
		double service, model;
		double cpu, cpu_model;  /* blocking calls: their threads' CPU, and the model's */
	} acc[8];
	/* An exploration's burst (choose.c, "in bursts"): the requests chosen in it are learned
	 * as one sum when the last of them finishes (a request of an earlier burst that finishes
	 * later, alone). It ends when the requests it was chosen for are started, when a request
	 * of the queue is chosen otherwise (another kind, its path refused it), or when the queue
	 * goes idle. */
	unsigned depth;               /* ring entries */
	unsigned started;             /* requests pushed, not finished */
	/* Explored requests in flight. What the pick's requests measure while one is (and what an
	 * explored one measures beside them: its burst's sum, above) is the mix, not their path:
	 * they are not learned. Our VM's 4 KiB writes into a 16 MiB udmabuf buffer went
	 * `buffered` at 34.5 us (x1.57) before a pass that explored `bounce-direct` (a burst of
	 * 128), `sendfile` and `udmabuf-direct` among its `buffered` ones, and at 244 us (x11.15)
	 * after it; the next pass went `udmabuf-direct`, 0.74x of `buffered` forced
	 * (bench/RESULTS.md, session 29). */
	unsigned explore_open;
	/* Requests in flight per cost key (its kind and path; the first FLY_KEYS keys at once):
	 * when a request begins on a path while one of its kind is in flight on another, a mix
	 * begins (mix_seq), and neither it nor any request in flight then is learned (each keeps
	 * the mixes begun when it began: one begun before it finishes marks it). Beside each other
	 * the paths of one kind measure the mix, not their paths, and the pick changes where their
	 * estimates cross: our 7.3 VM's 64 KiB reads into a 512 MiB system-heap buffer learned
	 * rw-file at 0.62x and bounce-direct at 0.88-0.97x forced, and 0.37x and 2.03x in a pass of
	 * auto that went from one to the other and back every few dozen requests (an op's own
	 * copy on the queue's thread stops the clock for the others, while rw-file's calls go on
	 * on the worker threads beside it); auto went at 0.63x of bounce-direct forced
	 * (bench/RESULTS.md, C62 and C64). Another kind's mix marks the requests in flight too:
	 * less learned, never a mix learned as a path. */
	struct {
		uint32_t key;
		unsigned n;
	} fly[8];
	uint32_t mix_seq;
	struct {
		uint32_t key, gen;
		unsigned left;        /* requests still to be chosen in it */
		unsigned open;        /* chosen in it, not finished */
		unsigned n;           /* of those finished, learned */
		unsigned len;         /* requests it was chosen for */
		double service, model;
		double pick;          /* the pick's estimates of the learned ones */
		double cpu, cpu_model; /* blocking calls: their threads' CPU, and the model's */
		double granted;       /* the time the budget granted the whole burst */
	} burst;
};

#define LEARN_BATCH 8
#define LEARN_IDLE_NS 1e6

static void learn_flush(struct dmaio_q *q, struct learn_acc *a)
{
	if (a->model > 0) { /* (requests that taught only their calls' CPU add no time) */
		DBG(q->ctx, "  learned: %s, %u requests: %.1f us measured, %.1f us modelled (%.2fx)",
		    dmaio_choose_path_name(DMAIO_COST_KEY_PATH(a->key)), a->n, a->service / 1e3,
		    a->model / 1e3, a->service / a->model);
		dmaio_cost_learn_sum(q->ctx, a->key, a->service, a->model);
	}
	if (a->cpu_model > 0) {
		DBG(q->ctx, "  learned: %s, CPU in blocking calls: %.1f us measured, %.1f us "
		    "modelled (%.2fx)", dmaio_choose_path_name(DMAIO_COST_KEY_PATH(a->key)),
		    a->cpu / 1e3, a->cpu_model / 1e3, a->cpu / a->cpu_model);
		dmaio_cost_learn_cpu(q->ctx, a->key, a->cpu, a->cpu_model);
	}
	memset(a, 0, sizeof(*a));
}

/* A finished request's measurements, summed with others of its kind (key) until LEARN_BATCH of
 * them (or now): its time against its model (model > 0), and the CPU its blocking calls took
 * against the model's (cpu_model > 0). */
static void learn_add(struct dmaio_q *q, uint32_t key, double service, double model, double cpu,
		      double cpu_model, bool now)
{
	struct learn_acc *a = NULL, *full = &q->acc[0];

	for (size_t i = 0; i < ARRAY_SIZE(q->acc) && !a; i++)
		if (q->acc[i].n && q->acc[i].key == key)
			a = &q->acc[i];
	for (size_t i = 0; i < ARRAY_SIZE(q->acc) && !a; i++) {
		if (!q->acc[i].n)
			a = &q->acc[i];
		else if (q->acc[i].n > full->n)
			full = &q->acc[i];
	}
	if (!a) { /* more kinds at once than slots: the fullest goes now */
		learn_flush(q, full);
		a = full;
	}
	a->key = key;
	a->service += service;
	a->model += model;
	a->cpu += cpu;
	a->cpu_model += cpu_model;
	if (++a->n == LEARN_BATCH || now)
		learn_flush(q, a);
}

/* The burst's sum learned (its requests finished, or the queue going away) */
static void burst_flush(struct dmaio_q *q)
{
	if (q->burst.n) {
		DBG(q->ctx, "  learned: %s, a burst of %u requests: %.1f us measured, %.1f us "
		    "modelled (%.2fx), the pick estimated at %.1f us",
		    dmaio_choose_path_name(DMAIO_COST_KEY_PATH(q->burst.key)), q->burst.n,
		    q->burst.service / 1e3, q->burst.model / 1e3,
		    q->burst.model > 0 ? q->burst.service / q->burst.model : 0,
		    q->burst.pick / 1e3);
		/* as many samples as its sums of LEARN_BATCH would have been: a burst of 32
		 * learned as one moved a ratio 1/8 of the way, where its requests learned by the
		 * pick move it 4 times; one of LEARN_BATCH or more is a run as deep as the queue,
		 * and comes down faster (cost.c); fewer (a request alone), as any sum */
		if (q->burst.n >= LEARN_BATCH)
			dmaio_cost_learn_burst(q->ctx, q->burst.key, q->burst.service,
					       q->burst.model, q->burst.n / LEARN_BATCH);
		else
			dmaio_cost_learn_explored(q->ctx, q->burst.key, q->burst.service,
						  q->burst.model);
		/* what it took beyond the pick's time and the budget's grant (its share of it
		 * for the learned ones) is paid too: a burst of 32 on a path 3-4x slower than
		 * its estimate cost our VM's 64 KiB writes into a 16 MiB buffer 0.50x */
		dmaio_cost_explore_settle(q->ctx, q->burst.key, q->burst.service, q->burst.pick,
					  q->burst.granted * q->burst.n / MAX(q->burst.len, 1u));
	}
	if (q->burst.cpu_model > 0)
		dmaio_cost_learn_cpu(q->ctx, q->burst.key, q->burst.cpu, q->burst.cpu_model);
	q->burst.n = 0;
	q->burst.service = q->burst.model = q->burst.pick = 0;
	q->burst.cpu = q->burst.cpu_model = 0;
}

/* No more requests are chosen in the burst; learned once its last one finishes. */
static void burst_stop(struct dmaio_q *q)
{
	q->burst.left = 0;
	if (!q->burst.open)
		burst_flush(q);
}

/* r was chosen by exploration: it begins a burst (est->burst requests), or goes on the one
 * under way. */
static void burst_join(struct dmaio_q *q, struct dmaio_req *r, const struct dmaio_cost_est *est)
{
	if (est->burst) {
		/* the last one's finished part learned now, what is still open of it alone */
		burst_flush(q);
		if (!++q->burst.gen)
			q->burst.gen = 1;
		q->burst.key = est->key;
		q->burst.left = est->burst - 1;
		q->burst.len = est->burst;
		q->burst.granted = est->granted_ns;
		q->burst.open = 0;
	} else if (q->burst.left) {
		q->burst.left--;
	}
	q->burst.open++;
	r->burst_gen = q->burst.gen;
}

/* r is no longer an explored request in flight */
static void explore_uncount(struct dmaio_q *q, struct dmaio_req *r)
{
	if (r->explore_counted) {
		q->explore_open--;
		r->explore_counted = false;
	}
}

#define FLY_KEYS (sizeof(((struct dmaio_q *)0)->fly) / sizeof(((struct dmaio_q *)0)->fly[0]))

/* r begins on its path as cost key's kind: counted in flight; a mix begins when a request of its
 * kind is in flight on another path */
static void fly_count(struct dmaio_q *q, struct dmaio_req *r, uint32_t key)
{
	int slot = -1, free_slot = -1;
	bool mixed = false;

	for (int i = 0; i < (int)FLY_KEYS; i++) {
		if (!q->fly[i].n) {
			if (free_slot < 0)
				free_slot = i;
			continue;
		}
		if (q->fly[i].key == key)
			slot = i;
		else if (DMAIO_COST_KEY_KIND(q->fly[i].key) == DMAIO_COST_KEY_KIND(key))
			mixed = true;
	}
	if (slot < 0 && free_slot >= 0) {
		slot = free_slot;
		q->fly[slot].key = key;
	}
	if (slot >= 0)
		q->fly[slot].n++;
	r->fly_slot = (int8_t)slot;
	if (mixed) {
		q->mix_seq++;
		r->beside_other = true;
	}
	r->mix_seq = q->mix_seq;
}

/* r's path ended (it finishes, or falls back): no longer in flight; a mix begun meanwhile
 * marks it */
static void fly_uncount(struct dmaio_q *q, struct dmaio_req *r)
{
	if (r->fly_slot >= 0)
		q->fly[r->fly_slot].n--;
	r->fly_slot = -1;
	if (r->mix_seq != q->mix_seq)
		r->beside_other = true;
}

/* r, an explored request, begins: it and the requests in flight with it measure the mix */
static void explore_count(struct dmaio_q *q, struct dmaio_req *r)
{
	q->explore_open++;
	r->explore_counted = true;
	for (struct dmaio_req *o = q->active; o; o = o->next)
		if (o != r)
			o->beside_other = true;
}

/* The service clock to now, before the number of ops in flight changes. */
static void clock_advance(struct dmaio_q *q, uint64_t now)
{
	if (q->nops && now > q->vlast) {
		q->vclock += (double)(now - q->vlast) / q->nops;
		q->busy_ns += now - q->vlast;
	}
	q->vlast = now;
}

/* r's path worked on the queue's thread since t0 (the clock advanced to t0): the time is r's,
 * not shared with the ops in flight. */
static void own_work(struct dmaio_q *q, struct dmaio_req *r, uint64_t t0)
{
	uint64_t t1 = dmaio_now_ns();

	if (t1 > t0) {
		r->svc_ns += (double)(t1 - t0);
		q->busy_ns += t1 - t0;
	}
	q->vlast = MAX(q->vlast, t1);
}

int dmaio_q_new(struct dmaio_ctx *ctx, unsigned depth, unsigned cap, struct dmaio_q **out)
{
	struct dmaio_q *q = calloc(1, sizeof(*q));
	int r;

	if (!q)
		return -ENOMEM;
	q->ctx = ctx;
	q->cap = cap;
	q->depth = depth;
	q->busy = 1;
	if (cap) {
		q->reqs = calloc(cap, sizeof(*q->reqs));
		if (!q->reqs) {
			free(q);
			return -ENOMEM;
		}
		for (unsigned i = cap; i-- > 0;) {
			q->reqs[i].next = q->free_reqs;
			q->free_reqs = &q->reqs[i];
		}
	}
	/* a queue without ranges of its own (cap 0) serves the synchronous calls: nobody polls
	 * its descriptor, so it may run inline when descriptors run out */
	r = dmaio_engine_new(ctx, depth, ctx->sys.io_uring == DMAIO_CAP_YES, !cap, &q->e);
	if (r) {
		free(q->reqs);
		free(q);
		return r;
	}
	*out = q;
	return 0;
}

int dmaio_q_fd(const struct dmaio_q *q)
{
	return dmaio_engine_fd(q->e);
}

unsigned dmaio_q_room(const struct dmaio_q *q)
{
	return q->cap - q->held;
}

struct dmaio_req *dmaio_q_req_get(struct dmaio_q *q)
{
	struct dmaio_req *r = q->free_reqs;

	if (!r)
		return NULL;
	q->free_reqs = r->next;
	return r;
}

void dmaio_q_req_put(struct dmaio_q *q, struct dmaio_req *r)
{
	if (q->cap && r >= q->reqs && r < q->reqs + q->cap) {
		r->next = q->free_reqs;
		q->free_reqs = r;
	}
	q->held--;
	q->prog.reaped++;
}

void dmaio_q_req_init(struct dmaio_req *r, struct dmaio_buf *buf, struct dmaio_file *file,
		      bool write, uint64_t buf_off, uint64_t file_off, uint64_t len, unsigned flags,
		      uint64_t user_data)
{
	memset(r, 0, sizeof(*r));
	r->ctx = buf->ctx;
	r->buf = buf;
	r->file = file;
	r->write = write;
	r->buf_off = buf_off;
	r->file_off = file_off;
	r->len = len;
	r->flags = flags;
	r->user_data = user_data;
	r->slot = -1;
	r->fly_slot = -1;
	r->stop_at = UINT64_MAX;
	r->forced = (int)(flags & DMAIO_RW_PATH_MASK);
	if (!r->forced)
		r->forced = r->ctx->env_path;
}

/* ---- lists -------------------------------------------------------------------------------- */
static void list_append(struct dmaio_req **head, struct dmaio_req **tail, struct dmaio_req *r)
{
	r->next = NULL;
	if (*tail)
		(*tail)->next = r;
	else
		*head = r;
	*tail = r;
}

static void list_remove(struct dmaio_req **head, struct dmaio_req **tail, struct dmaio_req *r)
{
	struct dmaio_req *prev = NULL;

	for (struct dmaio_req *i = *head; i; prev = i, i = i->next) {
		if (i != r)
			continue;
		if (prev)
			prev->next = r->next;
		else
			*head = r->next;
		if (*tail == r)
			*tail = prev;
		r->next = NULL;
		return;
	}
}

/* ---- finishing ---------------------------------------------------------------------------- */
static void stats_merge(struct dmaio_stats *dst, const struct dmaio_stats *src)
{
	dst->bytes_read += src->bytes_read;
	dst->bytes_written += src->bytes_written;
	dst->ops += src->ops;
	dst->errors += src->errors;
	dst->ns += src->ns;
	dst->fallbacks += src->fallbacks;
	dst->unaligned_bytes += src->unaligned_bytes;
	dst->reissues += src->reissues;
	for (unsigned i = 0; i < DMAIO_PATH_SLOTS; i++)
		dst->path_bytes[i] += src->path_bytes[i];
	dst->last_path = src->last_path;
	dst->last_result = src->last_result;
	dst->last_done = src->last_done;
}

static void account(struct dmaio_req *r, uint64_t ns)
{
	struct dmaio_stats d = { .struct_size = sizeof(d) };
	struct dmaio_buf *b = r->buf;
	struct dmaio_ctx *c = r->ctx;
	int bulk = DMAIO_PATH_AUTO;

	for (int i = 1; i < DMAIO_PATH_COUNT; i++)
		if (r->path_bytes[i] && (bulk == DMAIO_PATH_AUTO || r->path_bytes[i] > r->path_bytes[bulk]))
			bulk = i;
	if (bulk == DMAIO_PATH_AUTO && r->path)
		bulk = r->path->id; /* 0 bytes: the path that met end of file */
	d.ops = 1;
	d.errors = r->res < 0;
	d.ns = ns;
	d.fallbacks = r->fallbacks;
	d.unaligned_bytes = r->unaligned;
	d.reissues = r->reissues;
	if (r->write)
		d.bytes_written = r->done;
	else
		d.bytes_read = r->done;
	memcpy(d.path_bytes, r->path_bytes, sizeof(d.path_bytes));
	d.last_path = bulk;
	d.last_result = r->res < 0 ? (int32_t)r->res : 0;
	d.last_done = r->done;
	pthread_mutex_lock(&b->lock);
	stats_merge(&b->stats, &d);
	pthread_mutex_unlock(&b->lock);
	pthread_mutex_lock(&c->io_lock);
	stats_merge(&c->stats, &d);
	pthread_mutex_unlock(&c->io_lock);
	r->bulk = bulk;
}

static void finish(struct dmaio_q *q, struct dmaio_req *r, int64_t res, uint64_t done)
{
	uint64_t t1 = dmaio_now_ns();
	bool one_path, learnable, cpu_learnable;

	list_remove(&q->active, &q->active_tail, r);
	q->started--;
	fly_uncount(q, r);
	if (res == -EFAULT && r->buf->revocable) {
		/* the kernel met a fault on the buffer's mapping: its exporter took the memory
		 * away (a VFIO device's memory disabled or revoked) */
		INFO(r->ctx, "  the buffer's device memory was revoked after %llu bytes",
		     (unsigned long long)done);
		res = -ENXIO;
	}
	r->res = res;
	r->done = done;
	r->finished = true;
	if (r->cpu_synced) {
		int e = dmaio_sync_ioctl(r->buf->fd, DMA_BUF_SYNC_END |
					 (r->write ? DMA_BUF_SYNC_READ : DMA_BUF_SYNC_WRITE));

		if (e && res >= 0)
			r->res = e;
		r->cpu_synced = false;
	}
	if (r->addr) {
		dmaio_buf_put_addr(r->buf);
		r->addr = NULL;
	}
	if (r->write && done) {
		dmaio_file_grow(r->file, r->file_off + done);
		/* what the file's next sync through the library covers (dmaio_file_sync()) */
		dmaio_cost_write_done(r, done);
	}
	q->prog.bytes_done += done - r->counted;
	r->counted = done;
	q->prog.completed++;
	if (r->res == -ECANCELED)
		q->prog.cancelled++;
	account(r, t1 - r->t0);
	/* what it cost, for the cost model: its share of the time it was in flight (the service
	 * clock), without its path's setup; only a request one path served from its start, and
	 * not the first of a queue (it meets the one-time costs: the ring's first use, worker
	 * threads started, pages faulted) */
	one_path = q->prog.completed > 1 && r->res >= 0 && !r->fallbacks && r->path && done &&
		   !r->start && r->path_bytes[r->path->id] == done;
	learnable = one_path && (r->explored || !r->beside_other);
	/* the CPU its blocking calls took is its own, whatever ran beside it */
	cpu_learnable = one_path && r->cost_cpu_model_ns > 0 && r->cpu_calls_ns > 0;
	explore_uncount(q, r);
	if (r->burst_gen && r->burst_gen == q->burst.gen) { /* of the burst under way */
		if (learnable) {
			q->burst.n++;
			q->burst.service += r->svc_ns;
			q->burst.model += r->cost_model_ns;
			q->burst.pick += r->cost_pick_ns;
		}
		if (cpu_learnable) {
			q->burst.cpu += r->cpu_calls_ns;
			q->burst.cpu_model += r->cost_cpu_model_ns;
		}
		if (!--q->burst.open && !q->burst.left)
			burst_flush(q);
	} else if (learnable || cpu_learnable) { /* an earlier burst's: alone */
		learn_add(q, r->cost_key, learnable ? r->svc_ns : 0, learnable ? r->cost_model_ns : 0,
			  cpu_learnable ? r->cpu_calls_ns : 0,
			  cpu_learnable ? r->cost_cpu_model_ns : 0, r->burst_gen != 0);
	}
	if (!q->active) { /* idle: a long sum is a sample now, and a burst ends */
		for (size_t i = 0; i < ARRAY_SIZE(q->acc); i++)
			if (q->acc[i].n && q->acc[i].service >= LEARN_IDLE_NS)
				learn_flush(q, &q->acc[i]);
		burst_stop(q);
	}
	DBG(r->ctx, "  => %s %llu bytes via %s%s%s", r->res < 0 ? "error after" : "done",
	    (unsigned long long)done, dmaio_choose_path_name((uint32_t)r->bulk),
	    r->res < 0 ? ": " : "", r->res < 0 ? strerror((int)-r->res) : "");
	r->t0 = t1 - r->t0; /* from now on: the duration */
	list_append(&q->ready, &q->ready_tail, r);
}

/* Choose and begin the next path at r->start; finish the request when none is left. */
static void start_path(struct dmaio_q *q, struct dmaio_req *r, int cached_pct)
{
	for (;;) {
		const struct dmaio_path_ops *p;
		struct dmaio_cost_est est;
		const char *why = NULL;
		uint64_t t0;
		bool mapped;
		int err;

		r->bounce_cold = !dmaio_engine_bounce_made(q->e, r->buf->revocable);
		r->burst_room = q->depth;
		r->burst_queued = q->started;
		r->burst_key = q->burst.left ? q->burst.key : 0;
		r->memo = &q->memo;
		p = dmaio_choose(r, cached_pct, DMAIO_CHOOSE_EXPLORE, &est, &why, &err);
		r->memo = NULL;
		if (p && est.explored)
			burst_join(q, r, &est);
		else if (p && q->burst.left && !r->forced && !r->fallbacks)
			burst_stop(q); /* chosen otherwise: the burst ends here */
		if (!p) {
			INFO(r->ctx, "  no path left: %s", strerror(-err));
			finish(q, r, err, r->start);
			return;
		}
		DBG(r->ctx, "  path %s (estimate %.1f us): %s", p->name, est.est_ns / 1e3,
		    why ? why : "");
		r->cost_key = est.key;
		r->cost_model_ns = est.ops_ns + est.bytes_ns + est.walk_ns;
		r->cost_cpu_model_ns = est.call_cpu_ns;
		r->cost_pick_ns = est.pick_ns;
		r->explored = est.explored;
		explore_uncount(q, r); /* a refusal's fallback: chosen anew */
		fly_uncount(q, r);
		fly_count(q, r, est.key);
		if (r->explored)
			explore_count(q, r);
		else if (q->explore_open)
			r->beside_other = true;
		r->path = p;
		r->slot = -1;
		r->end = r->len;
		r->cursor = r->start;
		r->err = 0;
		r->eof = false;
		r->stop_at = UINT64_MAX;
		mapped = __atomic_load_n(&r->buf->addr, __ATOMIC_RELAXED) != NULL;
		t0 = dmaio_now_ns();
		clock_advance(q, t0);
		r->area_ns = 0;
		err = p->begin(r, q->e);
		q->vlast = MAX(q->vlast, dmaio_now_ns()); /* the begin's time: nobody's service */
		if (!err) {
			uint64_t setup = q->vlast - t0;

			/* the engine's bounce memory, made by this begin: learned apart */
			if (r->area_ns) {
				DBG(r->ctx, "  bounce memory made: %llu KiB in %.1f us",
				    (unsigned long long)(r->area_bytes >> 10), (double)r->area_ns / 1e3);
				dmaio_cost_learn_area(r->ctx, r->buf->revocable, r->area_ns,
						      r->area_bytes);
				setup -= MIN(setup, r->area_ns);
			}
			dmaio_cost_learn_setup(r, mapped, setup);
			return;
		}
		/* -EBUSY: the path cannot start now (transient, nothing remembered): the next path
		 * serves, or the request ends with -EBUSY itself when it may not fall back */
		if (err == -EBUSY && dmaio_choose_may_fall_back(r, p)) {
			INFO(r->ctx, "  %s busy now; falling back", p->name);
			r->fallbacks++;
			continue;
		}
		if (err == -EBUSY || !p->refuses(err) || !dmaio_choose_may_fall_back(r, p)) {
			if (p->refuses(err))
				err = -EOPNOTSUPP;
			finish(q, r, err, r->start);
			return;
		}
		INFO(r->ctx, "  %s refused (%s); falling back", p->name, strerror(-err));
		r->last_refusal = err;
		r->fallbacks++;
	}
}

/* All ops of the current path are back: finish, or fall back for the rest. */
static void path_ended(struct dmaio_q *q, struct dmaio_req *r)
{
	const struct dmaio_path_ops *p = r->path;
	uint64_t at = MIN(r->stop_at, r->cursor);

	if (r->cancelled) {
		finish(q, r, -ECANCELED, at);
		return;
	}
	if (r->err) {
		if (!p->refuses(r->err)) {
			INFO(r->ctx, "  %s failed after %llu bytes: %s", p->name,
			    (unsigned long long)at, strerror(-r->err));
			finish(q, r, r->err, at);
			return;
		}
		if (!dmaio_choose_may_fall_back(r, p)) {
			finish(q, r, -EOPNOTSUPP, at);
			return;
		}
		INFO(r->ctx, "  %s refused (%s) after %llu bytes; falling back", p->name,
		    strerror(-r->err), (unsigned long long)at);
		r->last_refusal = r->err;
		r->fallbacks++;
		r->start = at;
		start_path(q, r, -ENODATA);
		return;
	}
	if (r->eof) {
		finish(q, r, (int64_t)at, at);
		return;
	}
	/* a path that stopped a read at end of file (r->end < r->len) */
	finish(q, r, (int64_t)r->end, r->end);
}

static bool issuing(const struct dmaio_req *r)
{
	return !r->finished && !r->cancelled && !r->err && !r->eof && r->cursor < r->end;
}

/* Feed the engine: ops of the active requests, oldest first, while it has room. */
static void pump(struct dmaio_q *q)
{
	struct dmaio_req *r = q->active, *next;

	for (; r; r = next) {
		next = r->next;
		while (issuing(r)) {
			struct dmaio_op *op = dmaio_engine_op_get(q->e);
			uint64_t t0;
			int n;

			if (!op)
				return;
			t0 = dmaio_now_ns();
			clock_advance(q, t0);
			n = r->path->next(r, q->e, op);
			own_work(q, r, t0);
			if (n <= 0) {
				dmaio_engine_op_put(q->e, op);
				if (n < 0 && n != -EAGAIN) {
					if (!r->err || r->cursor < r->err_at) {
						r->err = n;
						r->err_at = r->cursor;
					}
					r->stop_at = MIN(r->stop_at, r->cursor);
				}
				break;
			}
			op->owner = r;
			op->path = r->path->id;
			r->inflight++;
			q->nops++;
			op->svc_v0 = q->vclock;
			dmaio_engine_start(q->e, op);
		}
		if (!r->inflight && !issuing(r) && !r->finished)
			path_ended(q, r);
	}
}

static void op_done(struct dmaio_q *q, struct dmaio_op *op)
{
	struct dmaio_req *r = op->owner;

	clock_advance(q, dmaio_now_ns());
	q->nops--;
	r->svc_ns += q->vclock - op->svc_v0;
	if (op->kind == DMAIO_OPK_CALL)
		r->cpu_calls_ns += (double)op->cpu_ns;
	if (r->path->finish) {
		uint64_t t0 = dmaio_now_ns();

		r->path->finish(r, q->e, op); /* a copy out of bounce memory: r's own */
		own_work(q, r, t0);
	}
	r->path_bytes[op->path] += op->got;
	r->reissues += op->retries;
	if (op->edge)
		r->unaligned += op->got;
	q->prog.bytes_done += op->got;
	r->counted += op->got;
	if (op->res) {
		uint64_t at = op->rel + op->got;

		/* ops end in any order: the failure that counts is the first in the range (a
		 * refusal there falls back from there, even when a later op failed otherwise,
		 * e.g. O_DIRECT's EINVAL for a write that RLIMIT_FSIZE cut short, then EFBIG) */
		if (!r->err || at < r->err_at) {
			r->err = op->res;
			r->err_at = at;
		}
		r->stop_at = MIN(r->stop_at, at);
	} else if (op->eof) {
		r->eof = true;
		r->stop_at = MIN(r->stop_at, op->rel + op->got);
	}
	r->inflight--;
	dmaio_engine_op_put(q->e, op);
	if (!r->inflight && !issuing(r))
		path_ended(q, r);
}

/* Collect finished ops without waiting (timeout 0), or wait for some (timeout < 0 or > 0). */
static int collect(struct dmaio_q *q, int timeout_ms)
{
	struct dmaio_op *ops[REAP_BATCH];
	int n = dmaio_engine_reap(q->e, ops, REAP_BATCH, timeout_ms);

	for (int i = 0; i < n; i++)
		op_done(q, ops[i]);
	return n;
}

/* One round, bounded (never until quiet: dmaio_queue_submit must not wait for I/O): start ops, take
 * what has finished, start ops in the room it left, submit. */
void dmaio_q_kick(struct dmaio_q *q)
{
	pump(q);
	if (collect(q, 0) > 0)
		pump(q);
	dmaio_engine_submit(q->e);
	if (q->ready && q->cap)
		dmaio_engine_kick(q->e); /* completions wait: the fd polls readable */
}

void dmaio_q_push(struct dmaio_q *q, struct dmaio_req *r)
{
	int cached_pct = -ENODATA;

	r->t0 = dmaio_now_ns();
	r->svc_ns = 0;
	r->cpu_calls_ns = 0;
	if (q->cap) {
		clock_advance(q, r->t0);
		if (q->win_t0 && r->t0 > q->win_t0)
			q->busy += ((float)(q->busy_ns - q->win_busy_ns) /
				    (float)(r->t0 - q->win_t0) - q->busy) / 8;
		q->win_t0 = r->t0;
		q->win_busy_ns = q->busy_ns;
		r->busy = q->caller_waits ? 0 : q->busy;
	}
	q->held++;
	q->started++;
	r->burst_gen = 0;
	r->beside_other = r->explore_counted = false;
	r->fly_slot = -1;
	r->mix_seq = q->mix_seq;
	q->prog.submitted++;
	q->prog.bytes_submitted += r->len;
	list_append(&q->active, &q->active_tail, r);
	DBG(r->ctx, "%s file=%d off=%llu len=%llu buf=%s+%llu%s%s", r->write ? "write" : "read",
	    r->file->fd, (unsigned long long)r->file_off, (unsigned long long)r->len,
	    r->buf->provider, (unsigned long long)r->buf_off, r->forced ? " forced=" : "",
	    r->forced ? dmaio_choose_path_name((uint32_t)r->forced) : "");
	if (!r->len) {
		finish(q, r, 0, 0);
		return;
	}
	if (!r->write) {
		/* facts of the file are cached; a read past the known size looks again (it may
		 * have grown), and the page-cache residency is asked once per range */
		if (r->file_off + r->len > dmaio_file_size_load(r->file))
			dmaio_file_refresh_size(r->file);
		/* a forced read asks too while the cost model learns: what it measures is filed
		 * under the range's page-cache state (a warm read is not a cold one) */
		if (!r->forced || !r->ctx->cost.fixed)
			cached_pct = dmaio_file_cached_pct(r->file, r->file_off, r->len);
	}
	start_path(q, r, cached_pct);
}

int dmaio_q_reap(struct dmaio_q *q, struct dmaio_req **out, unsigned max, unsigned min,
		 int timeout_ms)
{
	uint64_t deadline = timeout_ms > 0 ? dmaio_now_ns() + (uint64_t)timeout_ms * 1000000ull : 0;
	unsigned n = 0;

	if (min && !q->held)
		return -ENODATA; /* nothing submitted and not reaped: nothing to wait for */
	if (q->active)
		q->caller_waits = min && timeout_ms;
	if (q->cap)
		dmaio_engine_ack(q->e); /* readiness is recomputed below */
	for (;;) {
		struct dmaio_op *ops[REAP_BATCH];
		unsigned got;
		int wait_ms, k;

		/* start ops and take what has finished, without a syscall: the wait below submits */
		pump(q);
		got = dmaio_engine_peek(q->e, ops, REAP_BATCH);
		for (unsigned i = 0; i < got; i++)
			op_done(q, ops[i]);
		if (got)
			pump(q);
		while (n < max && q->ready) {
			struct dmaio_req *r = q->ready;

			q->ready = r->next;
			if (!q->ready)
				q->ready_tail = NULL;
			out[n++] = r;
		}
		if (n >= min || (!q->active && !q->ready))
			break;
		if (!timeout_ms) {
			/* no waiting, but the kernel gets what was started and gives what ended */
			k = collect(q, 0);
			if (k < 0)
				return k;
			if (k > 0)
				continue;
			break;
		}
		wait_ms = -1;
		if (timeout_ms > 0) {
			uint64_t now = dmaio_now_ns();

			if (now >= deadline)
				break;
			wait_ms = (int)((deadline - now + 999999) / 1000000);
		}
		if (!dmaio_engine_inflight(q->e)) {
			/* active requests but nothing in flight: a resource (bounce memory) is
			 * held by nobody; cannot happen, but never spin */
			break;
		}
		k = collect(q, wait_ms);
		if (k < 0)
			return k;
	}
	dmaio_engine_submit(q->e); /* what the last round started */
	if (q->ready && q->cap)
		dmaio_engine_kick(q->e); /* completions still wait: keep the fd readable */
	if (!n && min)
		return -ETIME; /* timed out */
	return (int)n;
}

int dmaio_q_cancel(struct dmaio_q *q, uint64_t user_data, bool all)
{
	int n = 0;

	for (struct dmaio_req *r = q->active, *next; r; r = next) {
		next = r->next;
		if (r->cancelled || (!all && r->user_data != user_data))
			continue;
		r->cancelled = true;
		n++;
		if (!r->inflight)
			path_ended(q, r);
	}
	if (n)
		dmaio_engine_kick(q->e);
	return n;
}

void dmaio_q_progress(const struct dmaio_q *q, struct dmaio_progress *p)
{
	*p = q->prog;
}

void dmaio_q_free(struct dmaio_q *q)
{
	struct dmaio_req *out[REAP_BATCH];

	if (!q)
		return;
	if (dmaio_engine_inherited(q->e)) {
		/* after fork: the ring is the parent's; nothing of it may be touched */
		dmaio_engine_abandon(q->e);
		free(q->reqs);
		free(q);
		return;
	}
	dmaio_q_cancel(q, 0, true);
	for (size_t i = 0; i < ARRAY_SIZE(q->acc); i++)
		learn_flush(q, &q->acc[i]);
	burst_flush(q);
	while (q->active || q->ready) {
		int n = dmaio_q_reap(q, out, REAP_BATCH, 1, -1);

		if (n <= 0)
			break;
		for (int i = 0; i < n; i++)
			dmaio_q_req_put(q, out[i]);
	}
	dmaio_engine_free(q->e);
	free(q->reqs);
	free(q);
}

int dmaio_q_choose(struct dmaio_req *r, const char **why)
{
	int cached_pct = -ENODATA, err;
	const struct dmaio_path_ops *p;
	struct dmaio_cost_est est;

	if (!r->write && (!r->forced || !r->ctx->cost.fixed))
		cached_pct = dmaio_file_cached_pct(r->file, r->file_off, r->len);
	p = dmaio_choose(r, cached_pct, 0, &est, why, &err);
	if (!p && r->forced && !(r->flags & DMAIO_RW_NO_FALLBACK))
		p = dmaio_choose(r, cached_pct, 0, &est, why, &err);
	return p ? p->id : err;
}

/* Every path's view of r (dmaio_choose_explain), the residency asked as a transfer would; the
 * pick is -1 when a forced path cannot serve and may not fall back. */
int dmaio_q_explain(const struct dmaio_req *r, int *status, struct dmaio_cost_est *est,
		    const char **why, int *ids)
{
	int cached_pct = -ENODATA, pick;

	if (!r->write && (!r->forced || !r->ctx->cost.fixed))
		cached_pct = dmaio_file_cached_pct(r->file, r->file_off, r->len);
	pick = dmaio_choose_explain(r, cached_pct, status, est, why, ids);
	if (pick >= 0 && r->forced && ids[pick] != r->forced &&
	    (r->flags & DMAIO_RW_NO_FALLBACK))
		pick = -1;
	return pick;
}

/* A request that failed before it could start (its file could not be probed): counted. */
void dmaio_q_account_failed(struct dmaio_req *r, int err)
{
	r->res = err;
	r->done = 0;
	account(r, 0);
}

/* ---- synchronous calls: one request on a pooled queue ------------------------------------- */
static int pool_get(struct dmaio_ctx *ctx, struct dmaio_q **out)
{
	struct dmaio_q *q;

	pthread_mutex_lock(&ctx->io_lock);
	while ((q = ctx->free_qs)) {
		ctx->free_qs = q->next_free;
		if (!dmaio_engine_inherited(q->e))
			break;
		pthread_mutex_unlock(&ctx->io_lock);
		dmaio_q_free(q); /* inherited through fork: dropped, untouched */
		pthread_mutex_lock(&ctx->io_lock);
	}
	pthread_mutex_unlock(&ctx->io_lock);
	if (q) {
		*out = q;
		return 0;
	}
	return dmaio_q_new(ctx, SYNC_DEPTH, 0, out);
}

int dmaio_q_run_one(struct dmaio_ctx *ctx, struct dmaio_req *r)
{
	struct dmaio_req *got;
	struct dmaio_q *q;
	int err = pool_get(ctx, &q);

	if (err)
		return err;
	dmaio_q_push(q, r);
	for (;;) {
		int k = dmaio_q_reap(q, &got, 1, 1, -1);

		if (k < 0 || !k) { /* an engine that broke, or nothing left: cannot go on */
			err = k < 0 ? k : -EIO;
			break;
		}
		if (got == r) {
			dmaio_q_req_put(q, r);
			break;
		}
	}
	if (err < 0 || q->active) {
		dmaio_q_free(q); /* a broken engine is not pooled */
		return err < 0 ? err : -EIO;
	}
	if (dmaio_engine_is_inline(q->e)) {
		dmaio_q_free(q); /* not pooled: the next call may have descriptors again */
		return 0;
	}
	pthread_mutex_lock(&ctx->io_lock);
	q->next_free = ctx->free_qs;
	ctx->free_qs = q;
	pthread_mutex_unlock(&ctx->io_lock);
	return 0;
}

void dmaio_q_pool_free(struct dmaio_ctx *ctx)
{
	struct dmaio_q *q = ctx->free_qs, *n;

	for (; q; q = n) {
		n = q->next_free;
		dmaio_q_free(q);
	}
	ctx->free_qs = NULL;
}
