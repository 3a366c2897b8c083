/* SPDX-License-Identifier: MIT */
/* Provider for /dev/dma_heap/<name>: heap fds cached in the context, buffers named. */
#include <fcntl.h>
#include <linux/dma-buf.h>
#include <linux/dma-heap.h>
#include <string.h>
#include <unistd.h>

#include "../dmaio-private.h"
#include "../uapi/dma-buf-rw-file.h"

int dmaio_heap_open(struct dmaio_ctx *ctx, struct dmaio_heap *h)
{
	char path[32 + DMAIO_NAME_MAX];
	int fd;

	(void)ctx;
	if (h->fd >= 0)
		return h->fd;
	snprintf(path, sizeof(path), "/dev/dma_heap/%s", h->name);
	fd = sys_open(path, O_RDONLY, 0);
	if (fd < 0) {
		h->open_err = neg_errno();
		return h->open_err;
	}
	h->fd = fd;
	return fd;
}

int dmaio_heap_alloc_fd(struct dmaio_ctx *ctx, struct dmaio_heap *h, size_t size, int *fd)
{
	struct dma_heap_allocation_data d = { 0 };
	int hfd = dmaio_heap_open(ctx, h);

	if (hfd < 0)
		return hfd;
	d.len = size;
	d.fd_flags = O_RDWR | O_CLOEXEC;
	while (sys_ioctl(hfd, DMA_HEAP_IOCTL_ALLOC, &d)) {
		if (errno == EINTR || errno == EAGAIN)
			continue;
		return neg_errno();
	}
	*fd = (int)d.fd;
	/* the name shows in /proc/<pid>/fdinfo and debugfs; failure is harmless */
	(void)sys_ioctl(*fd, DMA_BUF_SET_NAME, (void *)DMAIO_BUF_NAME);
	return 0;
}

/* The proposed RW_FILE ioctl, probed on a real buffer of this heap with a well-formed request:
 * read one page of a memfd. -ENOTTY: the kernel lacks it; -EINVAL: this exporter lacks it. */
void dmaio_heap_probe_rw_file(struct dmaio_ctx *ctx, struct dmaio_heap *h, int dmabuf_fd)
{
	struct dmaio_dma_buf_rw_file rw = { 0 };
	size_t ps = (size_t)dmaio_page_size();
	int mfd, r;

	if (h->rw_probed)
		return;
	mfd = dmaio_memfd_create(ps, false, true, NULL, 0);
	if (mfd < 0)
		return; /* try again on the next allocation */
	rw.flags = DMAIO_DMA_BUF_RW_FLAGS_READ;
	rw.fd = mfd;
	rw.buf_len = ps;
	do
		r = sys_ioctl(dmabuf_fd, DMAIO_DMA_BUF_IOCTL_RW_FILE, &rw);
	while (r < 0 && (errno == EINTR || errno == EAGAIN));
	r = r < 0 ? neg_errno() : 0;
	close(mfd);
	h->rw_probed = true;
	h->info.rw_file = r ? DMAIO_CAP_NO : DMAIO_CAP_YES;
	h->info.rw_file_err = r;
	DBG(ctx, "heap %s: DMA_BUF_IOCTL_RW_FILE %s (%d: %s)", h->name,
	    r ? "absent" : "available", r,
	    r == -ENOTTY ? "kernel lacks the ioctl" :
	    r == -EINVAL ? "exporter lacks the op" : r ? "refused" : "ok");
}

static int heap_alloc(struct dmaio_ctx *ctx, const char *name, size_t size, struct dmaio_buf *b)
{
	struct dmaio_heap *h;
	uint64_t rounded;
	int r, fd;

	pthread_mutex_lock(&ctx->lock);
	h = dmaio_find_heap_locked(ctx, name);
	if (!h) {
		pthread_mutex_unlock(&ctx->lock);
		return -ENOENT;
	}
	if (size > SIZE_MAX - (size_t)dmaio_page_size()) {
		pthread_mutex_unlock(&ctx->lock);
		return -EOVERFLOW;
	}
	rounded = round_up_u64(size, (uint64_t)dmaio_page_size());
	r = dmaio_heap_open(ctx, h);
	pthread_mutex_unlock(&ctx->lock);
	if (r < 0)
		return r;
	/* the heap fd stays open until the context is freed: no lock needed for the ioctl */
	r = dmaio_heap_alloc_fd(ctx, h, (size_t)rounded, &fd);
	if (r)
		return r;
	pthread_mutex_lock(&ctx->lock);
	if (!h->rw_probed)
		dmaio_heap_probe_rw_file(ctx, h, fd);
	pthread_mutex_unlock(&ctx->lock);
	b->fd = fd;
	b->alloc_size = (size_t)rounded;
	b->heap = h;
	return 0;
}

const struct dmaio_provider dmaio_provider_heap = {
	.name = NULL, /* every /dev/dma_heap entry */
	.kind = DMAIO_BUF_HEAP,
	.alloc = heap_alloc,
};
