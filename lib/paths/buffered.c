/* SPDX-License-Identifier: MIT */
/* Path "buffered": reads and writes through the page cache against the buffer's CPU mapping,
 * inside DMA_BUF_IOCTL_SYNC begin/end, several pieces in flight (io_uring buffered ops, or the
 * worker threads). Any mappable buffer, any file; the best choice when the range is already in
 * the page cache, where a memory copy beats the device. */
#include "path.h"
#include "../engine/engine.h"
#include "../split/split.h"

#define WARM_PCT 90
#define PIECE (4u << 20)

static int serve(const struct dmaio_req *r, int cached_pct, struct dmaio_cost_shape *sh,
		 const char **why)
{
	int err = dmaio_path_unmappable(r, why);

	if (err)
		return err;
	dmaio_path_shape(r, cached_pct, 1, false, PIECE, PIECE, sh);
	sh->map = r->len - r->start;
	*why = !r->write && cached_pct >= WARM_PCT ?
	       "the range is in the page cache: a memory copy" :
	       "page cache copy into the CPU mapping";
	return 0;
}

static int begin(struct dmaio_req *r, struct dmaio_engine *e)
{
	(void)e;
	dmaio_split_req(r, 1, false);
	return dmaio_path_map(r);
}

static int next(struct dmaio_req *r, struct dmaio_engine *e, struct dmaio_op *op)
{
	uint64_t rel, n;
	bool direct;

	(void)e;
	if (!dmaio_split_next(r, PIECE, PIECE, &rel, &n, &direct))
		return 0;
	dmaio_path_op_mapped(r, op, rel, n, false);
	r->cursor += n;
	return 1;
}

static bool refuses(int err)
{
	return err == -ENODEV; /* no CPU mapping: anything else is a real error */
}

const struct dmaio_path_ops dmaio_path_buffered = {
	.id = DMAIO_PATH_BUFFERED,
	.name = "buffered",
	.serve = serve,
	.begin = begin,
	.next = next,
	.refuses = refuses,
};
