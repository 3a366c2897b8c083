/* SPDX-License-Identifier: MIT */
/* Path "bounce-direct": O_DIRECT into the ring's pool of registered, aligned bounce buffers, each
 * copied to (or from) the buffer's CPU mapping inside DMA_BUF_SYNC begin/end; the copy of one
 * chunk overlaps the I/O of the others. For buffers whose mapping cannot take O_DIRECT. */
#include <string.h>

#include "../dmaio-private.h"

#define CHUNK (2u << 20)
#define NBOUNCE 8
#define MIN_WORTH (1u << 20)

static int score(struct dmaio_req *r, const char **why)
{
	int fd = dmaio_file_direct_fd(r->file, r->write);
	struct dmaio_split s;

	if (fd < 0) {
		*why = "the file takes no O_DIRECT";
		return fd;
	}
	dmaio_split_range(r->file_off + r->done, r->len - r->done,
			  r->write ? UINT64_MAX : r->file->size, r->file->off_align, &s);
	if (s.mid < MIN_WORTH) {
		*why = "aligned middle too small to be worth O_DIRECT";
		return 30;
	}
	*why = "O_DIRECT through pinned bounce buffers, copy overlapped";
	return 70;
}

static void fill(struct dmaio_pipe *p, size_t rel, char *dst, size_t n)
{
	memcpy(dst, (char *)p->priv + rel, n);
}

static void drain(struct dmaio_pipe *p, size_t rel, const char *src, size_t n)
{
	memcpy((char *)p->priv + rel, src, n);
}

static int mid(struct dmaio_req *r, uint64_t rel, size_t n, void *arg)
{
	struct dmaio_engine *e = NULL;
	struct dmaio_pipe p;
	int err;

	(void)arg;
	err = dmaio_req_map(r);
	if (err)
		return err;
	if (dmaio_engine_get(r->ctx, &e) || dmaio_engine_bounce(e, CHUNK, NBOUNCE)) {
		dmaio_engine_put(r->ctx, e);
		e = NULL; /* synchronous, one bounce chunk */
	}
	memset(&p, 0, sizeof(p));
	p.fd = r->file->dfd;
	p.write = r->write;
	p.file_off = r->file_off + rel;
	p.len = n;
	p.bounce = true;
	p.buf_index = -1;
	p.chunk = CHUNK;
	p.depth = NBOUNCE;
	p.align = r->file->off_align;
	p.fill = fill;
	p.drain = drain;
	p.priv = r->addr + r->buf_off + rel;
	err = dmaio_pipe_run(e, &p);
	r->done += p.done;
	if (p.eof)
		r->eof = true;
	dmaio_engine_put(r->ctx, e);
	return err;
}

static int run(struct dmaio_req *r)
{
	return dmaio_req_split_run(r, r->file->off_align, mid, NULL);
}

const struct dmaio_path_ops dmaio_path_bounce_direct = {
	.id = DMAIO_PATH_BOUNCE_DIRECT,
	.name = "bounce-direct",
	.score = score,
	.run = run,
};
