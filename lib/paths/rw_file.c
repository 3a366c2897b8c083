/* SPDX-License-Identifier: MIT */
/* Path "rw-file": the proposed DMA_BUF_IOCTL_RW_FILE, the kernel reading/writing the file straight
 * into the exporter's pages. DIRECT for the page-aligned middle when the file takes O_DIRECT,
 * without DIRECT for unaligned heads and tails. Probed per heap on its first allocation. */
#include <fcntl.h>

#include "../dmaio-private.h"
#include "../uapi/dma-buf-rw-file.h"

#define PIECE (256u << 20) /* per ioctl: bounded latency, far below MAX_RW_COUNT */

static int score(struct dmaio_req *r, const char **why)
{
	struct dmaio_heap *h = r->buf->heap;

	if (r->buf->kind != DMAIO_BUF_HEAP || !h) {
		*why = "only heap buffers are probed for RW_FILE";
		return -EOPNOTSUPP;
	}
	if (__atomic_load_n(&h->info.rw_file, __ATOMIC_RELAXED) != DMAIO_CAP_YES) {
		*why = h->info.rw_file_err == -ENOTTY ? "kernel lacks DMA_BUF_IOCTL_RW_FILE" :
		       "this heap's exporter lacks the RW_FILE op";
		return h->info.rw_file_err ? h->info.rw_file_err : -EOPNOTSUPP;
	}
	*why = "the kernel moves the file data to or from the heap's pages (DMA_BUF_IOCTL_RW_FILE)";
	return 100;
}

/* one ioctl per piece; the kernel loops until the piece is done */
static int rw(struct dmaio_req *r, uint64_t rel, size_t n, bool direct)
{
	int fd = direct ? r->file->fd : dmaio_file_buffered_fd(r->file);

	if (fd < 0)
		return fd;
	while (n) {
		size_t take = MIN(n, PIECE);
		struct dmaio_dma_buf_rw_file a = {
			.flags = (r->write ? DMAIO_DMA_BUF_RW_FLAGS_WRITE : DMAIO_DMA_BUF_RW_FLAGS_READ) |
				 (direct ? DMAIO_DMA_BUF_RW_FLAGS_DIRECT : 0),
			.fd = fd,
			.file_offset = r->file_off + rel,
			.buf_offset = r->buf_off + rel,
			.buf_len = take,
		};
		int ret;

		do
			ret = sys_ioctl(r->buf->fd, DMAIO_DMA_BUF_IOCTL_RW_FILE, &a);
		while (ret < 0 && (errno == EINTR || errno == EAGAIN));
		if (ret < 0) {
			int err = neg_errno();

			if (err == -ENOTTY) /* cache: the kernel lacks it after all */
				__atomic_store_n(&r->buf->heap->info.rw_file, DMAIO_CAP_NO,
						 __ATOMIC_RELAXED);
			return err;
		}
		/* 0: all moved; > 0: the kernel stopped early (end of file) after that many */
		if (ret > 0 && (size_t)ret < take) {
			r->done += (uint64_t)ret;
			if (!direct)
				r->unaligned += (uint64_t)ret;
			r->eof = !r->write;
			return r->write ? -EIO : 0;
		}
		r->done += take;
		if (!direct)
			r->unaligned += take;
		rel += take;
		n -= take;
	}
	return 0;
}

static int mid(struct dmaio_req *r, uint64_t rel, size_t n, void *arg)
{
	(void)arg;
	return rw(r, rel, n, true);
}

static int run(struct dmaio_req *r)
{
	uint64_t ps = (uint64_t)dmaio_page_size();
	uint64_t end = r->file_off + r->len, rel = r->done;
	struct dmaio_split s;
	int err;

	/* reads stop at end of file here, whatever the kernel's convention for it */
	if (!r->write && end > r->file->size) {
		if (r->file_off + rel >= r->file->size) {
			r->eof = true;
			return 0;
		}
		end = r->file->size;
	}
	dmaio_split_range(r->file_off + rel, end - r->file_off - rel, UINT64_MAX, (uint32_t)ps, &s);
	if (s.mid && dmaio_file_direct_fd(r->file, r->write) >= 0 &&
	    (r->buf_off + rel + s.head) % ps == 0) {
		err = rw(r, rel, s.head, false);
		if (!err && !r->eof)
			err = mid(r, rel + s.head, s.mid, NULL);
		if (!err && !r->eof)
			err = rw(r, rel + s.head + s.mid, s.tail, false);
	} else {
		err = rw(r, rel, (size_t)(end - r->file_off - rel), false);
	}
	if (!err && r->file_off + r->done < r->file_off + r->len && !r->write)
		r->eof = true;
	return err;
}

const struct dmaio_path_ops dmaio_path_rw_file = {
	.id = DMAIO_PATH_RW_FILE,
	.name = "rw-file",
	.score = score,
	.run = run,
};
