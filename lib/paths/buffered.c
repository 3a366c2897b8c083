/* SPDX-License-Identifier: MIT */
/* Path "buffered": pread/pwrite through the page cache against the buffer's CPU mapping, inside
 * DMA_BUF_SYNC begin/end. Serves every buffer that can be mapped and every offset. A read whose
 * range already sits in the page cache is a memory copy: faster than any O_DIRECT path. */
#include "../dmaio-private.h"

#define WARM_PCT 90

static int score(struct dmaio_req *r, const char **why)
{
	if (!r->write && dmaio_file_cached_pct(r->file, r->file_off + r->done,
					       r->len - r->done) >= WARM_PCT) {
		*why = "the range is in the page cache: a memory copy beats the device";
		return 85;
	}
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
