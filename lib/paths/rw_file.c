/* SPDX-License-Identifier: MIT */
/* Path "rw-file": the proposed DMA_BUF_IOCTL_RW_FILE, the kernel reading/writing the file straight
 * into the exporter's pages. DIRECT for the page-aligned middle when the file takes O_DIRECT,
 * without DIRECT for unaligned heads and tails. The ioctl blocks: pieces run on the worker
 * threads, several at once. Probed per heap on its first allocation. */
#include <fcntl.h>

#include "path.h"
#include "../engine/engine.h"
#include "../split/split.h"
#include "../sys/sys.h"
#include "../uapi/dma-buf-rw-file.h"

#define PIECE (16u << 20) /* per ioctl: pieces of one range overlap on the workers */

static int serve(const struct dmaio_req *r, int cached_pct, struct dmaio_cost_shape *sh,
		 const char **why)
{
	struct dmaio_heap *h = r->buf->heap;
	int32_t err;

	if (r->buf->kind != DMAIO_BUF_HEAP || !h) {
		*why = "only heap buffers are probed for RW_FILE";
		return -EOPNOTSUPP;
	}
	if (dmaio_heap_rw_file(h, &err) != DMAIO_CAP_YES) {
		*why = err == -ENOTTY ? "kernel lacks DMA_BUF_IOCTL_RW_FILE" :
		       "this heap's exporter lacks the RW_FILE op";
		return err ? err : -EOPNOTSUPP;
	}
	/* one blocking ioctl per piece, the edges included (without DIRECT, through the page
	 * cache but into the heap's pages by the kernel: no copy of ours); each call walks the
	 * buffer's whole scatterlist to find the pages of its range */
	dmaio_path_shape(r, cached_pct, (uint32_t)dmaio_page_size(), r->file->direct > 0, PIECE,
			 PIECE, sh);
	sh->calls = sh->ops;
	sh->ops = 0;
	sh->dev += sh->copy;
	sh->copy = 0;
	sh->walk = sh->calls * r->buf->alloc_size;
	*why = "the kernel moves the file data to or from the heap's pages (DMA_BUF_IOCTL_RW_FILE)";
	return 0;
}

static int begin(struct dmaio_req *r, struct dmaio_engine *e)
{
	uint64_t ps = (uint64_t)dmaio_page_size();
	uint64_t size = dmaio_file_size_load(r->file); /* once: another thread may change it */

	(void)e;
	/* reads stop at end of file here, whatever the kernel's convention for it */
	if (!r->write && r->file_off + r->end > size)
		r->end = r->file_off + r->start >= size ? r->start : size - r->file_off;
	dmaio_split_req(r, (uint32_t)ps, r->file->direct > 0);
	if (r->split.mid && (r->buf_off + r->start + r->split.head) % ps)
		dmaio_split_req(r, (uint32_t)ps, false);
	return 0;
}

/* one ioctl; the kernel loops until the piece is done (0), or stops early at end of file (> 0:
 * that many moved) */
static int rw_call(struct dmaio_op *op)
{
	struct dmaio_dma_buf_rw_file a = {
		.flags = (op->to_file ? DMAIO_DMA_BUF_RW_FLAGS_WRITE : DMAIO_DMA_BUF_RW_FLAGS_READ) |
			 (op->direct ? DMAIO_DMA_BUF_RW_FLAGS_DIRECT : 0),
		.fd = op->fd,
		.file_offset = op->off,
		.buf_offset = op->off2,
		.buf_len = op->len,
	};
	int ret = sys_ioctl(op->fd2, DMAIO_DMA_BUF_IOCTL_RW_FILE, &a);

	if (ret < 0)
		return ret;
	if (ret > 0 && (uint32_t)ret < op->len) {
		op->got = (uint32_t)ret;
		if (op->to_file)
			return -EIO;
		op->eof = true;
		return 0;
	}
	op->got = op->len;
	return 0;
}

static int next(struct dmaio_req *r, struct dmaio_engine *e, struct dmaio_op *op)
{
	uint64_t rel, n;
	bool direct;

	(void)e;
	if (!dmaio_split_next(r, PIECE, PIECE, &rel, &n, &direct))
		return 0;
	op->kind = DMAIO_OPK_CALL;
	op->call = rw_call;
	op->fd = direct ? r->file->fd : r->file->bfd;
	op->fd2 = r->buf->fd;
	op->off = r->file_off + rel;
	op->off2 = r->buf_off + rel;
	op->len = (uint32_t)n;
	op->direct = direct;
	op->edge = !direct && r->direct_ok;
	op->rel = rel;
	op->to_file = r->write;
	r->cursor += n;
	return 1;
}

static void finish(struct dmaio_req *r, struct dmaio_engine *e, struct dmaio_op *op)
{
	(void)e;
	if (op->res == -ENOTTY) /* cache: the kernel lacks it after all */
		dmaio_heap_set_rw_file(r->buf->heap, DMAIO_CAP_NO, -ENOTTY);
}

static bool refuses(int err)
{
	return err == -EINVAL || err == -ENOTTY || err == -EOPNOTSUPP;
}

const struct dmaio_path_ops dmaio_path_rw_file = {
	.id = DMAIO_PATH_RW_FILE,
	.name = "rw-file",
	.serve = serve,
	.begin = begin,
	.next = next,
	.finish = finish,
	.refuses = refuses,
};
