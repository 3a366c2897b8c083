/* SPDX-License-Identifier: MIT */
/* Path "udmabuf-direct": O_DIRECT I/O straight into the pages behind the buffer, through the
 * memfd's mapping (the dma-buf's own mapping is PFN-mapped and refuses O_DIRECT). The mapping is
 * registered once per ring as fixed buffers (pinned once, not per I/O); unaligned heads and tails
 * go through the page cache into the same mapping. */
#include "path.h"
#include "../engine/engine.h"
#include "../split/split.h"

#define CHUNK (4u << 20)
#define REG_PIECE (1ull << 30)    /* io_uring takes at most 1 GiB per registered buffer */

/* Offsets of buffer and file must be congruent modulo the DIO memory alignment for the aligned
 * middle to land on an aligned address; otherwise no byte can go direct. */
static bool congruent(const struct dmaio_req *r, struct dmaio_split *s)
{
	return dmaio_path_congruent(r, r->file->mem_align, s);
}

static int serve(const struct dmaio_req *r, int cached_pct, struct dmaio_cost_shape *sh,
		 const char **why)
{
	struct dmaio_split s;
	bool cong;

	if (r->buf->memfd < 0) {
		*why = "no memfd behind this buffer";
		return -EOPNOTSUPP;
	}
	if (r->file->direct < 0) {
		*why = "the file takes no O_DIRECT";
		return r->file->direct;
	}
	/* O_DIRECT straight into the memfd's pages (fixed buffers); the edges, and all of it when
	 * the offsets are not congruent, through the page cache and the memfd's mapping */
	cong = congruent(r, &s);
	dmaio_path_shape(r, cached_pct, dmaio_path_align(r), cong, CHUNK, CHUNK, sh);
	sh->map = r->len - r->start;
	sh->reg = r->len - r->start; /* fixed buffers: the pages pinned and mapped once */
	*why = !cong ? "buffer and file offsets differ modulo the O_DIRECT memory alignment: "
		       "all of it through the page cache" :
	       "O_DIRECT into the buffer's own pages, fixed buffers";
	return 0;
}

static int begin(struct dmaio_req *r, struct dmaio_engine *e)
{
	struct dmaio_split s;

	(void)e;
	if (r->buf->memfd < 0 || r->file->direct < 0)
		return -EOPNOTSUPP;
	dmaio_split_req(r, dmaio_path_align(r), congruent(r, &s));
	return dmaio_path_map(r);
}

static int next(struct dmaio_req *r, struct dmaio_engine *e, struct dmaio_op *op)
{
	uint64_t rel, n, boff, piece = 0;
	bool direct;

	if (!dmaio_split_next(r, CHUNK, CHUNK, &rel, &n, &direct))
		return 0;
	if (direct) {
		/* one registration per GiB of the buffer; an op stays inside one */
		boff = r->buf_off + rel;
		piece = boff / REG_PIECE * REG_PIECE;
		n = MIN(n, piece + REG_PIECE - boff);
	}
	dmaio_path_op_mapped(r, op, rel, n, direct);
	if (direct) {
		size_t plen = (size_t)MIN(REG_PIECE, r->buf->alloc_size - piece);

		op->buf_index = dmaio_engine_regbuf(e, r->buf->id, r->addr + piece, plen);
		/* memlock limit or old kernel: plain reads, pinned per I/O. Fixed buffers are cut
		 * into page-sized bvecs whose lengths must be multiples of the logical block size:
		 * memory that only meets a smaller DIO memory alignment goes as a plain op. */
		if (op->buf_index < 0 ||
		    (uintptr_t)op->mem % (r->write ? r->file->off_align : r->file->roff_align))
			op->buf_index = -1;
	}
	r->cursor += n;
	return 1;
}

const struct dmaio_path_ops dmaio_path_udmabuf_direct = {
	.id = DMAIO_PATH_UDMABUF_DIRECT,
	.name = "udmabuf-direct",
	.serve = serve,
	.begin = begin,
	.next = next,
	.refuses = dmaio_path_refuses_direct,
};
