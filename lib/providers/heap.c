/* SPDX-License-Identifier: MIT */
/* Provider for /dev/dma_heap/<name>: heap fds cached in the context, buffers named. */
#include <fcntl.h>
#include <linux/dma-heap.h>
#include <string.h>
#include <unistd.h>

#include "provider.h"
#include "../sys/sys.h"

int dmaio_heap_open(struct dmaio_heap *h)
{
	char path[32 + DMAIO_NAME_MAX];
	int fd;

	if (h->fd >= 0)
		return h->fd;
	snprintf(path, sizeof(path), "/dev/dma_heap/%s", h->name);
	fd = sys_open(path, O_RDONLY, 0);
	if (fd < 0) {
		h->open_err = fd;
		return fd;
	}
	h->fd = fd;
	return fd;
}

int dmaio_heap_alloc_fd(struct dmaio_heap *h, size_t size, int *fd)
{
	struct dma_heap_allocation_data d = { 0 };
	int hfd = dmaio_heap_open(h);
	int r;

	if (hfd < 0)
		return hfd;
	d.len = size;
	d.fd_flags = O_RDWR | O_CLOEXEC;
	r = sys_ioctl(hfd, DMA_HEAP_IOCTL_ALLOC, &d);
	if (r < 0)
		return r;
	*fd = (int)d.fd;
	return 0;
}

static int heap_alloc(struct dmaio_ctx *ctx, const struct dmaio_alloc_req *req, struct dmaio_buf *b)
{
	const char *name = req->name;
	size_t size = req->size;
	struct dmaio_heap *h;
	uint64_t rounded;
	int r, fd;

	pthread_mutex_lock(&ctx->lock);
	h = NULL;
	for (int i = 0; i < ctx->nheaps && !h; i++) /* listed by the probe the API ran first */
		if (!strcmp(ctx->heaps[i].name, name))
			h = &ctx->heaps[i];
	if (!h) {
		pthread_mutex_unlock(&ctx->lock);
		return -ENOENT;
	}
	if (size > SIZE_MAX - (size_t)dmaio_page_size()) {
		pthread_mutex_unlock(&ctx->lock);
		return -EOVERFLOW;
	}
	rounded = round_up_u64(size, (uint64_t)dmaio_page_size());
	r = dmaio_heap_open(h);
	pthread_mutex_unlock(&ctx->lock);
	if (r < 0)
		return r;
	/* the heap fd stays open until the context is freed: no lock needed for the ioctl */
	r = dmaio_heap_alloc_fd(h, (size_t)rounded, &fd);
	if (r)
		return r;
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
