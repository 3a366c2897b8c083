/* SPDX-License-Identifier: MIT */
/* Path "buffered": pread/pwrite through the page cache against the buffer's CPU mapping, inside
 * DMA_BUF_SYNC begin/end. Serves every buffer that can be mapped and every offset. */
#include "../dmaio-private.h"

static int score(struct dmaio_req *r, const char **why)
{
	(void)r;
	*why = "page cache copy into the CPU mapping";
	return 50;
}

static int run(struct dmaio_req *r)
{
	return dmaio_req_buffered(r, r->done, r->len - r->done, false);
}

const struct dmaio_path_ops dmaio_path_buffered = {
	.id = DMAIO_PATH_BUFFERED,
	.name = "buffered",
	.score = score,
	.run = run,
};
