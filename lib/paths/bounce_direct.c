/* SPDX-License-Identifier: MIT */
/* Path "bounce-direct": O_DIRECT into the engine's pinned, registered bounce memory, each piece
 * copied to (or from) the buffer's CPU mapping inside DMA_BUF_SYNC begin/end; the copy of one
 * piece overlaps the I/O of the others. For buffers whose mapping cannot take O_DIRECT. */
#include <string.h>

#include "path.h"
#include "../engine/engine.h"
#include "../split/split.h"

#define CHUNK DMAIO_BOUNCE_MAX
#define EDGE (4u << 20)

static int serve(const struct dmaio_req *r, int cached_pct, struct dmaio_cost_shape *sh,
		 const char **why)
{
	uint64_t mid;
	int err;

	if (r->file->direct < 0) {
		*why = "the file takes no O_DIRECT";
		return r->file->direct;
	}
	err = dmaio_path_unmappable(r, why);
	if (err)
		return err;
	/* the middle O_DIRECT into pinned bounce memory and copied to the mapping while the
	 * storage works on the next pieces; the edges through the page cache */
	mid = dmaio_path_shape(r, cached_pct, dmaio_path_align(r), true, CHUNK, EDGE, sh);
	sh->copy += mid;
	sh->overlap = mid;
	sh->map = r->len - r->start;
	*why = "O_DIRECT through pinned bounce buffers, copy overlapped";
	return 0;
}

static int begin(struct dmaio_req *r, struct dmaio_engine *e)
{
	(void)e;
	if (r->file->direct < 0)
		return -EOPNOTSUPP;
	dmaio_split_req(r, dmaio_path_align(r), true);
	return dmaio_path_map(r);
}

static int next(struct dmaio_req *r, struct dmaio_engine *e, struct dmaio_op *op)
{
	uint64_t rel, n;
	bool direct;
	int err;

	if (!dmaio_split_next(r, CHUNK, EDGE, &rel, &n, &direct))
		return 0;
	if (!direct) {
		dmaio_path_op_mapped(r, op, rel, n, false);
		r->cursor += n;
		return 1;
	}
	err = dmaio_engine_bounce_get(e, (uint32_t)n, op); /* sets mem and buf_index */
	if (err)
		return err;
	op->kind = r->write ? DMAIO_OPK_WRITE : DMAIO_OPK_READ;
	op->fd = r->file->dfd;
	op->len = (uint32_t)n;
	op->off = r->file_off + rel;
	op->direct = true;
	op->rest_fd = r->write ? r->file->bfd : -1;
	op->align = dmaio_path_align(r);
	op->rel = rel;
	if (r->write)
		memcpy(op->mem, r->addr + r->buf_off + rel, n);
	r->cursor += n;
	return 1;
}

static void finish(struct dmaio_req *r, struct dmaio_engine *e, struct dmaio_op *op)
{
	(void)e;
	/* a read hands over what arrived, also when it stopped part-way */
	if (op->bounce >= 0 && !r->write && op->got)
		memcpy(r->addr + r->buf_off + op->rel, op->mem, op->got);
}

const struct dmaio_path_ops dmaio_path_bounce_direct = {
	.id = DMAIO_PATH_BOUNCE_DIRECT,
	.name = "bounce-direct",
	.serve = serve,
	.begin = begin,
	.next = next,
	.finish = finish,
	.refuses = dmaio_path_refuses_direct,
};
