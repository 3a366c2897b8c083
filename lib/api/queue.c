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

DMAIO_EXPORT int dmaio_queue_new(struct dmaio_ctx *ctx, uint32_t depth, uint32_t flags,
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

/* One range of a batch as this library knows it: the caller's element itself when it is at least
 * as large (its bytes past what the library knows were checked to be zero), else a copy with the
 * fields it lacks zero. */
static const struct dmaio_io *io_view(const struct dmaio_io *in, struct dmaio_io *tmp)
{
	if (in->struct_size >= sizeof(*tmp))
		return in;
	memset(tmp, 0, sizeof(*tmp));
	memcpy(tmp, in, in->struct_size);
	return tmp;
}

/* One range of a batch, checked. */
static int check_io(const struct dmaio_queue *q, const struct dmaio_io *in, uint32_t stride)
{
	const struct dmaio_io *io;
	struct dmaio_io tmp;
	int r;

	if (in->struct_size != stride)
		return -EINVAL;
	r = dmaio_abi_copy_in(&tmp, sizeof(tmp), in, DMAIO_SIZE_IO); /* the size rules */
	if (r)
		return r;
	io = &tmp;
	if (io->op != DMAIO_OP_READ && io->op != DMAIO_OP_WRITE)
		return -EINVAL;
	if (io->pad0 || !io->file)
		return -EINVAL;
	r = dmaio_check_range(io->buf, io->buf_off, io->file_off, io->len, io->flags);
	if (r)
		return r;
	if (io->buf->ctx != q->ctx || io->file->ctx != q->ctx)
		return -EINVAL;
	return dmaio_file_check_dir(io->file, io->op == DMAIO_OP_WRITE);
}

static const struct dmaio_io *io_at(const struct dmaio_io *ios, uint32_t stride, uint32_t i)
{
	return (const struct dmaio_io *)((const char *)ios + (size_t)stride * i);
}

DMAIO_EXPORT int dmaio_queue_submit(struct dmaio_queue *q, const struct dmaio_io *ios, uint32_t n)
{
	uint32_t i, stride;

	if (!q || (!ios && n))
		return -EINVAL;
	stride = n ? ios[0].struct_size : 0;
	for (i = 0; i < n; i++) {
		int r = check_io(q, io_at(ios, stride, i), stride);

		if (r)
			return r;
	}
	if (n && !dmaio_q_room(q->q))
		return -EAGAIN;
	for (i = 0; i < n; i++) {
		struct dmaio_req *r = dmaio_q_req_get(q->q);
		struct dmaio_io tmp;
		const struct dmaio_io *io;

		if (!r)
			break;
		io = io_view(io_at(ios, stride, i), &tmp);
		dmaio_q_req_init(r, io->buf, io->file, io->op == DMAIO_OP_WRITE, io->buf_off,
				 io->file_off, io->len, io->flags, io->user_data);
		dmaio_q_push(q->q, r);
	}
	dmaio_q_kick(q->q); /* start the I/O; never waits */
	return (int)i;
}

DMAIO_EXPORT int dmaio_queue_reap(struct dmaio_queue *q, struct dmaio_done *out, uint32_t max,
				  uint32_t min, int timeout_ms)
{
	struct dmaio_req *got[64];
	uint32_t n = 0, stride;

	if (!q || !out || !max || min > max || dmaio_abi_check_out(out, DMAIO_SIZE_DONE))
		return -EINVAL;
	stride = out[0].struct_size;
	do {
		unsigned want = MIN(max - n, ARRAY_SIZE(got));
		int k = dmaio_q_reap(q->q, got, want, MIN(want, min > n ? min - n : 0), timeout_ms);

		if (k < 0)
			return n ? (int)n : k;
		for (int i = 0; i < k; i++) {
			struct dmaio_done *d = (struct dmaio_done *)((char *)out + (size_t)stride * n++);
			struct dmaio_done v = { .struct_size = sizeof(v) };
			struct dmaio_req *r = got[i];

			v.user_data = r->user_data;
			v.res = r->res;
			v.done = r->done;
			v.path = (uint32_t)r->bulk;
			v.fallbacks = r->fallbacks;
			v.unaligned = r->unaligned;
			v.ns = r->t0;
			d->struct_size = stride;
			dmaio_abi_copy_out(d, &v, sizeof(v));
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

DMAIO_EXPORT int dmaio_queue_cancel(struct dmaio_queue *q, uint64_t user_data, uint32_t flags)
{
	if (!q || (flags & ~DMAIO_CANCEL_ALL))
		return -EINVAL;
	return dmaio_q_cancel(q->q, user_data, flags & DMAIO_CANCEL_ALL);
}

DMAIO_EXPORT int dmaio_queue_get_progress(const struct dmaio_queue *q, struct dmaio_progress *p)
{
	struct dmaio_progress v;

	if (!q || dmaio_abi_check_out(p, DMAIO_SIZE_PROGRESS))
		return -EINVAL;
	dmaio_q_progress(q->q, &v);
	v.struct_size = sizeof(v);
	dmaio_abi_copy_out(p, &v, sizeof(v));
	return 0;
}
