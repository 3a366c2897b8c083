/* SPDX-License-Identifier: MIT */
/*
 * Layer "queue": requests in flight. A queue owns an engine (ring, ops, bounce memory) and the
 * requests handed to it; it chooses each request's path, feeds the engine with the paths' ops
 * across requests (oldest first, up to the engine's depth), finishes ops as they come back, falls
 * back per request when a path refuses, and hands finished requests back. The public queue and
 * the synchronous calls (one request on a pooled queue) are both thin users of it.
 */
#ifndef DMAIO_QUEUE_H
#define DMAIO_QUEUE_H

#include "../dmaio-types.h"
#include "../choose/cost.h"

int dmaio_q_new(struct dmaio_ctx *ctx, unsigned depth, unsigned cap, struct dmaio_q **q);
void dmaio_q_free(struct dmaio_q *q);     /* cancels what has not started, waits for the rest */
int dmaio_q_fd(const struct dmaio_q *q);
unsigned dmaio_q_room(const struct dmaio_q *q);
/* a request slot (NULL when the queue holds cap requests), then filled in and pushed */
struct dmaio_req *dmaio_q_req_get(struct dmaio_q *q);
void dmaio_q_req_init(struct dmaio_req *r, struct dmaio_buf *buf, struct dmaio_file *file,
		      bool write, uint64_t buf_off, uint64_t file_off, uint64_t len, unsigned flags,
		      uint64_t user_data);
void dmaio_q_push(struct dmaio_q *q, struct dmaio_req *r);   /* starts it; never waits */
void dmaio_q_kick(struct dmaio_q *q);                        /* start ops, collect finished */
/* finished requests into out (at most max; at least min unless timeout_ms passes), count or
 * -errno; each must be given back with dmaio_q_req_put() */
int dmaio_q_reap(struct dmaio_q *q, struct dmaio_req **out, unsigned max, unsigned min,
		 int timeout_ms);
void dmaio_q_req_put(struct dmaio_q *q, struct dmaio_req *r);
int dmaio_q_cancel(struct dmaio_q *q, uint64_t user_data, bool all);
void dmaio_q_progress(const struct dmaio_q *q, struct dmaio_progress *p);
/* the path a request would take now (nothing moves) */
int dmaio_q_choose(struct dmaio_req *r, const char **why);
/* every path's refusal or estimate for r, and the index of the one a transfer would take (-1:
 * none); arrays of dmaio_choose_count() */
int dmaio_q_explain(const struct dmaio_req *r, int *status, struct dmaio_cost_est *est,
		    const char **why, int *ids);
/* one request on a queue of the context's pool (the synchronous calls) */
int dmaio_q_run_one(struct dmaio_ctx *ctx, struct dmaio_req *r);
void dmaio_q_account_failed(struct dmaio_req *r, int err); /* counted, never started */
void dmaio_q_pool_free(struct dmaio_ctx *ctx);

#endif
