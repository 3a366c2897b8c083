/* SPDX-License-Identifier: MIT */
/* Path "uring-dmabuf": the proposed io_uring dma-buf registered buffers (uapi/io_uring-dmabuf.h):
 * the dma-buf is registered to a ring for the target file (an NVMe block device opened O_DIRECT),
 * then READ_FIXED/WRITE_FIXED address it by offset. Any refusal marks it absent for the context;
 * the mainline paths take over. Never run against a kernel that has it (none can be built here). */
#include <liburing.h>
#include <string.h>

#include "../dmaio-private.h"
#include "../uapi/io_uring-dmabuf.h"

#define CHUNK (1u << 20)
#define DEPTH 16

/* The registration request of the proposal (RFC v3): one descriptor of type DMABUF for
 * target_fd, sent as a buffer update of one slot flagged as carrying descriptors. */
void dmaio_uring_dmabuf_request(struct io_uring_rsrc_update2 *up, struct dmaio_io_uring_regbuf_desc *d,
				unsigned slot, int dmabuf_fd, int target_fd)
{
	memset(d, 0, sizeof(*d));
	d->type = DMAIO_IO_REGBUF_TYPE_DMABUF;
	d->dmabuf_fd = dmabuf_fd;
	d->target_fd = target_fd;
	memset(up, 0, sizeof(*up));
	up->offset = slot;
	up->resv = DMAIO_IORING_RSRC_UPDATE_DESC;
	up->data = (__u64)(uintptr_t)d;
	up->nr = 1;
}

/* Register dmabuf_fd for target_fd in one slot of ring (sparse table already there). */
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

/* 0 when the kernel takes the registration; any refusal as -errno. */
int dmaio_uring_dmabuf_probe(struct dmaio_ctx *ctx, int dmabuf_fd, int target_fd)
{
	struct io_uring ring;
	int r;

	(void)ctx;
	r = io_uring_queue_init(4, &ring, 0);
	if (r < 0)
		return r;
	r = io_uring_register_buffers_sparse(&ring, 1);
	if (!r)
		r = register_dmabuf(&ring, 0, dmabuf_fd, target_fd);
	io_uring_queue_exit(&ring);
	return r;
}

static int score(struct dmaio_req *r, const char **why)
{
	int known = __atomic_load_n(&r->ctx->uring_dmabuf, __ATOMIC_RELAXED);

	if (known == DMAIO_CAP_NO) {
		*why = "kernel refused io_uring dma-buf registration";
		return -EOPNOTSUPP;
	}
	if (!dmaio_buf_is_dmabuf(r->buf) || r->buf->memfd >= 0) {
		*why = "not a heap or imported dma-buf";
		return -EOPNOTSUPP;
	}
	if (!r->file->is_blk) {
		*why = "the proposal only serves NVMe block devices";
		return -EOPNOTSUPP;
	}
	if (r->buf->alloc_size > DMAIO_IO_URING_DMABUF_MAX) {
		*why = "dma-buf over 1 GiB";
		return -EOPNOTSUPP;
	}
	if (dmaio_file_direct_fd(r->file, r->write) < 0) {
		*why = "device takes no O_DIRECT";
		return -EOPNOTSUPP;
	}
	*why = "io_uring fixed I/O against the registered dma-buf";
	return 90;
}

static int mid(struct dmaio_req *r, uint64_t rel, size_t n, void *arg)
{
	struct dmaio_engine *e = arg;
	struct dmaio_pipe p;
	int err;

	memset(&p, 0, sizeof(p));
	p.fd = r->file->dfd;
	p.write = r->write;
	p.file_off = r->file_off + rel;
	p.len = n;
	/* the registered buffer is addressed by offset into the dma-buf */
	p.addr = (char *)(uintptr_t)(r->buf_off + rel);
	p.buf_index = DMAIO_ENGINE_SLOT_DMABUF;
	p.chunk = CHUNK;
	p.depth = DEPTH;
	p.align = r->file->off_align;
	err = dmaio_pipe_run(e, &p);
	r->done += p.done;
	if (p.eof)
		r->eof = true;
	return err;
}

static int run(struct dmaio_req *r)
{
	struct dmaio_engine *e = NULL;
	int err;

	err = dmaio_engine_get(r->ctx, &e);
	if (err)
		return err;
	err = register_dmabuf(dmaio_engine_ring(e), DMAIO_ENGINE_SLOT_DMABUF, r->buf->fd,
			      r->file->dfd);
	if (err) {
		__atomic_store_n(&r->ctx->uring_dmabuf, DMAIO_CAP_NO, __ATOMIC_RELAXED);
		dmaio_engine_put(r->ctx, e);
		DBG(r->ctx, "  uring-dmabuf: registration refused (%d); absent from now on", err);
		return err == -ENOMEM ? err : -EOPNOTSUPP;
	}
	__atomic_store_n(&r->ctx->uring_dmabuf, DMAIO_CAP_YES, __ATOMIC_RELAXED);
	err = dmaio_req_split_run(r, r->file->off_align, mid, e);
	dmaio_engine_slot_clear(e, DMAIO_ENGINE_SLOT_DMABUF);
	dmaio_engine_put(r->ctx, e);
	return err;
}

const struct dmaio_path_ops dmaio_path_uring_dmabuf = {
	.id = DMAIO_PATH_URING_DMABUF,
	.name = "uring-dmabuf",
	.score = score,
	.run = run,
};
