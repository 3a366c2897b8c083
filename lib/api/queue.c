/* SPDX-License-Identifier: MIT */
/* The public queue: argument checks and the conversion between dmaio_io/dmaio_done and the
 * requests of the queue layer. */
#include <stdlib.h>
#include <string.h>

#include "api.h"
#include "../probe/probe.h"
#include "../queue/queue.h"

#define DEFAULT_DEPTH 32

struct dmaio_queue {
	struct dmaio_ctx *ctx;
	struct dmaio_q *q;
};

DMAIO_EXPORT int dmaio_queue_new(struct dmaio_ctx *ctx, unsigned depth, unsigned flags,
				 struct dmaio_queue **q)
{
	struct dmaio_queue *dq;
	struct dmaio_ctx *c;
	int r;

	if (!q || (flags & ~DMAIO_QUEUE_FLAGS_ALL) || depth > DMAIO_QUEUE_DEPTH_MAX)
		return -EINVAL;
	if (!depth)
		depth = DEFAULT_DEPTH;
	c = dmaio_ctx_get(ctx);
	if (!c)
		return -ENOMEM;
	dmaio_ctx_probe_base(c);
	dq = calloc(1, sizeof(*dq));
	if (!dq)
		return -ENOMEM;
	dq->ctx = c;
	r = dmaio_q_new(c, depth, depth * DMAIO_QUEUE_RANGES_PER_DEPTH, &dq->q);
	if (r) {
		free(dq);
		return r;
	}
	*q = dq;
	return 0;
}

DMAIO_EXPORT void dmaio_queue_free(struct dmaio_queue *q)
{
	if (!q)
		return;
	dmaio_q_free(q->q);
	free(q);
}

static int check_io(const struct dmaio_queue *q, const struct dmaio_io *io)
{
	int r;

	if (io->op != DMAIO_OP_READ && io->op != DMAIO_OP_WRITE)
		return -EINVAL;
	if (io->reserved[0] || io->reserved[1] || !io->file)
		return -EINVAL;
	r = dmaio_check_range(io->buf, io->buf_off, io->file_off, io->len, io->flags);
	if (r)
		return r;
	if (io->buf->ctx != q->ctx || io->file->ctx != q->ctx)
		return -EINVAL;
	return dmaio_file_check_dir(io->file, io->op == DMAIO_OP_WRITE);
}

DMAIO_EXPORT int dmaio_submit(struct dmaio_queue *q, const struct dmaio_io *ios, unsigned n)
{
	unsigned i;

	if (!q || (!ios && n))
		return -EINVAL;
	for (i = 0; i < n; i++) {
		int r = check_io(q, &ios[i]);

		if (r)
			return r;
	}
	if (n && !dmaio_q_room(q->q))
		return -EAGAIN;
	for (i = 0; i < n; i++) {
		const struct dmaio_io *io = &ios[i];
		struct dmaio_req *r = dmaio_q_req_get(q->q);

		if (!r)
			break;
		dmaio_q_req_init(r, io->buf, io->file, io->op == DMAIO_OP_WRITE, io->buf_off,
				 (uint64_t)io->file_off, io->len, io->flags, io->user_data);
		dmaio_q_push(q->q, r);
	}
	dmaio_q_kick(q->q); /* start the I/O; never waits */
	return (int)i;
}

DMAIO_EXPORT int dmaio_reap(struct dmaio_queue *q, struct dmaio_done *out, unsigned max,
			    unsigned min, int timeout_ms)
{
	struct dmaio_req *got[64];
	unsigned n = 0;

	if (!q || !out || !max || min > max)
		return -EINVAL;
	do {
		unsigned want = MIN(max - n, ARRAY_SIZE(got));
		int k = dmaio_q_reap(q->q, got, want, MIN(want, min > n ? min - n : 0), timeout_ms);

		if (k < 0)
			return n ? (int)n : k;
		for (int i = 0; i < k; i++) {
			struct dmaio_done *d = &out[n++];
			struct dmaio_req *r = got[i];

			memset(d, 0, sizeof(*d));
			d->user_data = r->user_data;
			d->res = r->res;
			d->done = r->done;
			d->path = r->bulk;
			d->fallbacks = r->fallbacks;
			d->unaligned = r->unaligned;
			d->ns = r->t0;
			dmaio_q_req_put(q->q, r);
		}
		if (!k || (unsigned)k < want)
			break;
	} while (n < max);
	return (int)n;
}

DMAIO_EXPORT int dmaio_queue_fd(const struct dmaio_queue *q)
{
	return q ? dmaio_q_fd(q->q) : -EINVAL;
}

DMAIO_EXPORT int dmaio_cancel(struct dmaio_queue *q, uint64_t user_data, unsigned flags)
{
	if (!q || (flags & ~DMAIO_CANCEL_ALL))
		return -EINVAL;
	return dmaio_q_cancel(q->q, user_data, flags & DMAIO_CANCEL_ALL);
}

DMAIO_EXPORT int dmaio_queue_progress(const struct dmaio_queue *q, struct dmaio_progress *p)
{
	if (!q || !p)
		return -EINVAL;
	dmaio_q_progress(q->q, p);
	return 0;
}
