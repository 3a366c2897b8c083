/* SPDX-License-Identifier: MIT */
/*
 * Layer "api", the top: the exported functions. Each checks its arguments first, runs the probes
 * the call needs (the only place probing starts), and hands the work to the layers below.
 */
#ifndef DMAIO_API_H
#define DMAIO_API_H

/* the api layer defines the exported functions: it alone sees their prototypes */
#include "../dmaio-types.h"
#include "dmaio.h"

struct dmaio_ctx *dmaio_ctx_get(struct dmaio_ctx *ctx); /* NULL -> default, may return NULL */
void dmaio_ctx_probe_base(struct dmaio_ctx *ctx);       /* what every transfer needs */
void dmaio_buf_register(struct dmaio_ctx *c, struct dmaio_buf *b);
/* the context's list of buffers, whose locks fork() takes (ctx.c) */
void dmaio_ctx_add_buf(struct dmaio_ctx *c, struct dmaio_buf *b);
void dmaio_ctx_remove_buf(struct dmaio_ctx *c, struct dmaio_buf *b);
/* the checks shared by every transfer of one range (sync and queued) */
int dmaio_check_range(const struct dmaio_buf *buf, uint64_t buf_off, uint64_t file_off,
		      uint64_t len, uint32_t flags);

#endif
