/* SPDX-License-Identifier: MIT */
/* Path "bounce-direct": O_DIRECT into the engine's pinned, registered bounce memory, each piece
 * copied to (or from) the buffer's CPU mapping inside DMA_BUF_SYNC begin/end; the copy of one
 * piece overlaps the I/O of the others. For buffers whose mapping cannot take O_DIRECT. A buffer
 * whose memory its exporter can revoke (device memory) is never touched by the process: its
 * pieces go through the engine's kernel-copy bounce area, copied by the kernel, so that a
 * revocation fails the piece (EFAULT) instead of killing the process (SIGBUS). */
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
	if (r->bounce_cold)
		sh->area = mid;
	*why = "O_DIRECT through pinned bounce buffers, copy overlapped";
	return 0;
}

static int begin(struct dmaio_req *r, struct dmaio_engine *e)
{
	int err;

	if (r->file->direct < 0)
		return -EOPNOTSUPP;
	dmaio_split_req(r, dmaio_path_align(r), true);
	/* the bounce memory made here, if not yet: a one-time cost, timed as setup (the cost
	 * model learns it), not as the first piece's service; a failure (-ENOMEM) fails the
	 * request as it would have failed its first piece, before the mapping is touched */
	err = dmaio_engine_bounce_ready(e, r->buf->revocable, &r->area_ns, &r->area_bytes);
	if (err)
		return err;
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
	/* sets mem and buf_index */
	err = dmaio_engine_bounce_get(e, (uint32_t)n, r->buf->revocable, op);
	if (err)
		return err;
	if (r->write) {
		char *src = r->addr + r->buf_off + rel;
		size_t moved;

		if (r->buf->revocable) {
			/* a piece of it gone: nothing of this piece reaches the file */
			err = dmaio_engine_bounce_copy(e, op, src, n, true, &moved);
			if (err) {
				dmaio_engine_bounce_put(e, op);
				return err;
			}
		} else {
			memcpy(op->mem, src, n);
		}
	}
	op->kind = r->write ? DMAIO_OPK_WRITE : DMAIO_OPK_READ;
	op->fd = r->file->dfd;
	op->len = (uint32_t)n;
	op->off = r->file_off + rel;
	op->direct = true;
	op->rest_fd = r->write ? r->file->bfd : -1;
	op->align = dmaio_path_align(r);
	op->rel = rel;
	r->cursor += n;
	return 1;
}

static void finish(struct dmaio_req *r, struct dmaio_engine *e, struct dmaio_op *op)
{
	char *dst = r->addr + r->buf_off + op->rel;
	size_t moved;
	int err;

	/* a read hands over what arrived, also when it stopped part-way */
	if (op->bounce < 0 || r->write || !op->got)
		return;
	if (!r->buf->revocable) {
		memcpy(dst, op->mem, op->got);
		return;
	}
	err = dmaio_engine_bounce_copy(e, op, dst, op->got, false, &moved);
	if (err) {
		/* the op ends where the copy stopped, with the copy's error */
		op->got = (uint32_t)moved;
		op->res = err;
		op->eof = false;
	}
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
