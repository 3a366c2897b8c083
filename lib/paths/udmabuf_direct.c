/* SPDX-License-Identifier: MIT */
/* Path "udmabuf-direct": O_DIRECT I/O straight into the pages behind the buffer, through the
 * memfd's mapping (the dma-buf's own mapping is PFN-mapped and refuses O_DIRECT). The mapping is
 * registered once per ring as fixed buffers (pinned once, not per I/O), several requests fly. */
#include "../dmaio-private.h"

#define CHUNK (4u << 20)
#define DEPTH 8
#define MIN_WORTH (64u << 10)     /* below this, buffered I/O is as fast */
#define REG_PIECE (1ull << 30)    /* io_uring takes at most 1 GiB per registered buffer */

/* Offsets of buffer and file must be congruent modulo the DIO memory alignment for the aligned
 * middle to land on an aligned address; otherwise no byte can go direct. */
static bool congruent(struct dmaio_req *r, struct dmaio_split *s)
{
	uint64_t rel = r->done;

	dmaio_split_range(r->file_off + rel, r->len - rel, r->write ? UINT64_MAX : r->file->size,
			  r->file->off_align, s);
	return !s->mid || (r->buf_off + rel + s->head) % r->file->mem_align == 0;
}

static int score(struct dmaio_req *r, const char **why)
{
	struct dmaio_split s;
	int fd;

	if (r->buf->memfd < 0) {
		*why = "no memfd behind this buffer";
		return -EOPNOTSUPP;
	}
	fd = dmaio_file_direct_fd(r->file, r->write);
	if (fd < 0) {
		*why = "the file takes no O_DIRECT";
		return fd;
	}
	if (!congruent(r, &s)) {
		*why = "buffer and file offsets differ modulo the O_DIRECT memory alignment: "
		       "all of it would go through the page cache";
		return 20;
	}
	if (s.mid < MIN_WORTH) {
		*why = "aligned middle too small to be worth O_DIRECT";
		return 20;
	}
	*why = "O_DIRECT into the buffer's own pages, fixed buffers";
	return 80;
}

static int mid(struct dmaio_req *r, uint64_t rel, size_t n, void *arg)
{
	struct dmaio_engine *e = NULL;
	int err = 0;

	(void)arg;
	if (!r->addr) {
		err = dmaio_buf_get_addr(r->buf, &r->addr);
		if (err)
			return err;
	}
	if (dmaio_engine_get(r->ctx, &e))
		e = NULL; /* synchronous O_DIRECT */
	while (n && !err) {
		size_t boff = r->buf_off + rel;
		uint64_t piece = boff / REG_PIECE * REG_PIECE;
		size_t plen = (size_t)MIN(REG_PIECE, r->buf->alloc_size - piece);
		size_t take = (size_t)MIN((uint64_t)n, piece + plen - boff);
		struct dmaio_pipe p = {
			.fd = r->file->dfd,
			.write = r->write,
			.file_off = r->file_off + rel,
			.len = take,
			.addr = r->addr + boff,
			.buf_index = e ? dmaio_engine_regbuf(e, r->buf->id, r->addr + piece, plen) : -1,
			.chunk = CHUNK,
			.depth = DEPTH,
			.align = r->file->off_align,
		};

		/* memlock limit or old kernel: plain reads, pinned per I/O. Fixed buffers are cut into
		 * page-sized bvecs whose lengths must be multiples of the logical block size: a middle
		 * that only meets a smaller DIO memory alignment (4 on NVMe) goes as a plain read. */
		if (p.buf_index < 0 || (uintptr_t)p.addr % r->file->off_align)
			p.buf_index = -1;
		err = dmaio_pipe_run(e, &p);
		r->done += p.done;
		rel += p.done;
		n -= p.done;
		if (p.eof) {
			r->eof = true;
			break;
		}
	}
	dmaio_engine_put(r->ctx, e);
	return err;
}

static int run(struct dmaio_req *r)
{
	struct dmaio_split s;

	if (dmaio_file_direct_fd(r->file, r->write) < 0 || !congruent(r, &s))
		return dmaio_req_buffered(r, r->done, r->len - r->done, true);
	return dmaio_req_split_run(r, r->file->off_align, mid, NULL);
}

const struct dmaio_path_ops dmaio_path_udmabuf_direct = {
	.id = DMAIO_PATH_UDMABUF_DIRECT,
	.name = "udmabuf-direct",
	.score = score,
	.run = run,
};
