/* SPDX-License-Identifier: MIT */
/* Path "uring-dmabuf": the proposed io_uring dma-buf registered buffers (uapi/io_uring-dmabuf.h):
 * the dma-buf (a heap buffer, a udmabuf or an imported one) is registered to the engine's ring for
 * the target file (an NVMe block device opened O_DIRECT), then READ_FIXED/WRITE_FIXED address it
 * by offset; spurious -EAGAIN completions are reissued by the engine. A kernel without the
 * registration (the base probe asks it once) never gets here; a registration this kernel refuses
 * for one buffer and file (exporter, device, size) is remembered on the buffer and the mainline
 * paths take over for that pair. */
#include <time.h>

#include "path.h"
#include "../engine/engine.h"
#include "../split/split.h"
#include "../uapi/io_uring-dmabuf.h"

#define CHUNK (4u << 20)
#define EDGE (4u << 20)

/* The direct middle (file offsets aligned to the page and the device's block) must land on a
 * dma-buf offset aligned to the device's logical block: the kernel builds the I/O from the
 * buffer's pages, and every segment of a direct bio must be a multiple of the block. So buffer
 * and file offsets must be congruent modulo the DIO offset alignment; otherwise another path
 * serves the range. */
static bool congruent(const struct dmaio_req *r)
{
	struct dmaio_split s;

	return dmaio_path_congruent(r, r->write ? r->file->off_align : r->file->roff_align, &s);
}

static int serve(const struct dmaio_req *r, int cached_pct, struct dmaio_cost_shape *sh,
		 const char **why)
{
	int known = __atomic_load_n(&r->ctx->uring_dmabuf, __ATOMIC_RELAXED);

	if (known == DMAIO_CAP_NO) {
		*why = "kernel refused io_uring dma-buf registration";
		return -EOPNOTSUPP;
	}
	if (!dmaio_buf_is_dmabuf(r->buf)) {
		*why = "not a dma-buf";
		return -EOPNOTSUPP;
	}
	if (!r->file->is_blk) {
		*why = "the proposal only serves NVMe block devices";
		return -EOPNOTSUPP;
	}
	if (__atomic_load_n(&r->buf->udb_refused, __ATOMIC_RELAXED) == r->file->id + 1) {
		*why = "the kernel refused to register this dma-buf for this device";
		return -EOPNOTSUPP;
	}
	if (r->file->direct < 0) {
		*why = "device takes no O_DIRECT";
		return -EOPNOTSUPP;
	}
	if (!congruent(r)) {
		*why = "buffer and device offsets differ modulo the device's block";
		return -EOPNOTSUPP;
	}
	/* the middle as fixed ring I/O against the registered dma-buf (mapped for the device
	 * once, at registration: its share), the edges through the CPU mapping */
	dmaio_path_shape(r, cached_pct, dmaio_path_align(r), true, CHUNK, EDGE, sh);
	sh->reg = r->len - r->start;
	if (sh->copy)
		sh->map = r->len - r->start;
	*why = "io_uring fixed I/O against the registered dma-buf";
	return 0;
}

/* -EBUSY from the registration: "not now", never "not this buffer". The kernel's (the device
 * or the slot briefly busy) or the engine's (every dma-buf slot held by ops in flight). Tried
 * again a few times at once (under 1 ms in all: a submit does not wait for I/O); still busy,
 * begin answers -EBUSY and nothing is remembered: the request falls back to the next path, or,
 * when it may not fall back, ends with -EBUSY (the caller may try again), never -EOPNOTSUPP. */
#define BUSY_TRIES 4

static int begin(struct dmaio_req *r, struct dmaio_engine *e)
{
	int slot;

	if (!dmaio_engine_has_ring(e))
		return -EOPNOTSUPP;
	slot = dmaio_engine_dmabuf_slot(e, r->buf->id, r->buf->fd, r->file->id, r->file->dfd);
	for (int i = 0; slot == -EBUSY && i < BUSY_TRIES; i++) {
		struct timespec ts = { 0, 100000L << i }; /* 0.1, 0.2, 0.4, 0.8 ms */

		nanosleep(&ts, NULL);
		slot = dmaio_engine_dmabuf_slot(e, r->buf->id, r->buf->fd, r->file->id,
						r->file->dfd);
	}
	if (slot < 0) {
		if (slot == -ENOMEM || slot == -EBUSY)
			return slot; /* no slot now: not a refusal, nothing remembered */
		/* v3 answers for this pair: -EOPNOTSUPP (device or exporter without dma-buf I/O),
		 * -EINVAL (over v3's 1 GiB, bad size), -EBADF; remembered, the kernel keeps it */
		__atomic_store_n(&r->buf->udb_refused, r->file->id + 1, __ATOMIC_RELAXED);
		return -EOPNOTSUPP;
	}
	__atomic_store_n(&r->ctx->uring_dmabuf, DMAIO_CAP_YES, __ATOMIC_RELAXED);
	r->slot = slot;
	dmaio_split_req(r, dmaio_path_align(r), true);
	/* heads and tails go through the dma-buf's CPU mapping */
	return r->split.head || r->split.tail ? dmaio_path_map(r) : 0;
}

static int next(struct dmaio_req *r, struct dmaio_engine *e, struct dmaio_op *op)
{
	uint64_t rel, n;
	bool direct;

	(void)e;
	if (!dmaio_split_next(r, CHUNK, EDGE, &rel, &n, &direct))
		return 0;
	if (!direct) {
		dmaio_path_op_mapped(r, op, rel, n, false);
	} else {
		op->kind = r->write ? DMAIO_OPK_WRITE : DMAIO_OPK_READ;
		op->fd = r->file->dfd;
		/* the registered buffer is addressed by offset into the dma-buf */
		op->mem = (char *)(uintptr_t)(r->buf_off + rel);
		op->buf_index = r->slot;
		op->len = (uint32_t)n;
		op->off = r->file_off + rel;
		op->direct = true;
		op->align = dmaio_path_align(r);
		op->rel = rel;
	}
	r->cursor += n;
	return 1;
}

static bool refuses(int err)
{
	/* EBADF/EFAULT: the kernel would not take this file or range with the registration */
	return dmaio_path_refuses_direct(err) || err == -EBADF || err == -EFAULT || err == -ENXIO;
}

const struct dmaio_path_ops dmaio_path_uring_dmabuf = {
	.id = DMAIO_PATH_URING_DMABUF,
	.name = "uring-dmabuf",
	.serve = serve,
	.begin = begin,
	.next = next,
	.refuses = refuses,
};
