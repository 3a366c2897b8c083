/* SPDX-License-Identifier: MIT */
/* Providers "udmabuf" and "udmabuf-huge": a sealed memfd (shmem or hugetlb) turned into a
 * dma-buf by /dev/udmabuf. The memfd is kept: its mapping is the same pages as the dma-buf and,
 * unlike the udmabuf's own PFN mapping, takes O_DIRECT I/O. */
#include <fcntl.h>
#include <linux/udmabuf.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "provider.h"
#include "../sys/sys.h"

#define UDMABUF_LIST_ITEM (1ull << 30) /* items of UDMABUF_CREATE_LIST for large buffers */

static int udmabuf_dev(struct dmaio_ctx *ctx)
{
	int fd;

	pthread_mutex_lock(&ctx->lock);
	/* opened by the probe the API ran first */
	fd = ctx->udmabuf_fd >= 0 ? ctx->udmabuf_fd : ctx->sys.udmabuf_err;
	pthread_mutex_unlock(&ctx->lock);
	if (fd < 0)
		return fd == -EACCES || fd == -EPERM ? -EACCES : -ENOENT;
	return fd;
}

static int create(int dev, int memfd, size_t size, uint32_t list_limit)
{
	int r;

	if (size <= UDMABUF_LIST_ITEM) {
		struct udmabuf_create c = { .memfd = (__u32)memfd, .flags = UDMABUF_FLAGS_CLOEXEC,
					    .offset = 0, .size = size };

		r = sys_ioctl(dev, UDMABUF_CREATE, &c);
	} else {
		/* large: one list item per GiB, where the list limit allows */
		size_t n = (size + UDMABUF_LIST_ITEM - 1) / UDMABUF_LIST_ITEM;
		struct udmabuf_create_list *l;

		if (list_limit && n > list_limit)
			return -EFBIG;
		l = calloc(1, sizeof(*l) + n * sizeof(l->list[0]));
		if (!l)
			return -ENOMEM;
		l->flags = UDMABUF_FLAGS_CLOEXEC;
		l->count = (__u32)n;
		for (size_t i = 0; i < n; i++) {
			l->list[i].memfd = (__u32)memfd;
			l->list[i].offset = i * UDMABUF_LIST_ITEM;
			l->list[i].size = MIN(UDMABUF_LIST_ITEM, size - i * UDMABUF_LIST_ITEM);
		}
		r = sys_ioctl(dev, UDMABUF_CREATE_LIST, l);
		free(l);
	}
	return r;
}

/* memfd + seals + UDMABUF_CREATE(_LIST); ctx lock not needed (the probe holds it). */
int dmaio_udmabuf_make(struct dmaio_ctx *ctx, int dev, const char *label, size_t size, bool huge,
		       uint64_t limit, uint32_t list_limit, struct dmaio_buf *b)
{
	size_t asz;
	int memfd, fd;

	/* refuse before allocating memory the kernel would refuse anyway */
	if (limit && size > limit) {
		DBG(ctx, "udmabuf: %zu bytes above size_limit_mb (%llu MiB); raise "
		    "/sys/module/udmabuf/parameters/size_limit_mb", size,
		    (unsigned long long)(limit >> 20));
		return -EFBIG;
	}
	/* shmem: no fallocate. shmem keeps fallocated pages "unwritten" and UDMABUF_CREATE pins
	 * them as they are, so the first fault through the memfd would zero-fill what a device wrote
	 * and splice would read holes. Pages that UDMABUF_CREATE allocates itself (shmem_read_folio)
	 * are ordinary zeroed, up-to-date pages, and allocating them there costs one pass instead of
	 * two; a shortage is still a clean ENOMEM from the ioctl. hugetlb: fallocated pages are
	 * ordinary pages, and kernels before 6.11 only pin hugetlb pages that already exist. */
	memfd = dmaio_memfd_create(label, size, huge, huge, &asz, F_SEAL_SHRINK | F_SEAL_GROW);
	if (memfd < 0)
		return memfd;
	if (limit && asz > limit) {
		close(memfd);
		return -EFBIG;
	}
	fd = create(dev, memfd, asz, list_limit);
	if (fd < 0) {
		close(memfd);
		if (huge && fd == -EINVAL)
			return -EOPNOTSUPP; /* kernels before ~6.11 refuse hugetlb memfds */
		return fd;
	}
	/* nobody may add F_SEAL_WRITE or resize under the device from now on */
	(void)fcntl(memfd, F_ADD_SEALS, F_SEAL_SEAL);
	b->fd = fd;
	b->memfd = memfd;
	b->alloc_size = asz;
	return 0;
}

static int udmabuf_alloc_common(struct dmaio_ctx *ctx, const struct dmaio_alloc_req *req, bool huge,
				struct dmaio_buf *b)
{
	uint64_t limit;
	uint32_t list_limit;
	int dev;

	dev = udmabuf_dev(ctx);
	if (dev < 0)
		return dev;
	pthread_mutex_lock(&ctx->lock);
	limit = ctx->sys.udmabuf_size_limit;
	list_limit = ctx->sys.udmabuf_list_limit;
	if (huge && ctx->sys.hugetlb_memfd != DMAIO_CAP_YES) {
		pthread_mutex_unlock(&ctx->lock);
		return -EOPNOTSUPP;
	}
	pthread_mutex_unlock(&ctx->lock);
	return dmaio_udmabuf_make(ctx, dev, req->label, req->size, huge, limit, list_limit, b);
}

static int udmabuf_alloc(struct dmaio_ctx *ctx, const struct dmaio_alloc_req *req,
			 struct dmaio_buf *b)
{
	return udmabuf_alloc_common(ctx, req, false, b);
}

static int udmabuf_huge_alloc(struct dmaio_ctx *ctx, const struct dmaio_alloc_req *req,
			      struct dmaio_buf *b)
{
	return udmabuf_alloc_common(ctx, req, true, b);
}

const struct dmaio_provider dmaio_provider_udmabuf = {
	.name = "udmabuf",
	.kind = DMAIO_BUF_UDMABUF,
	.alloc = udmabuf_alloc,
};

const struct dmaio_provider dmaio_provider_udmabuf_huge = {
	.name = "udmabuf-huge",
	.kind = DMAIO_BUF_UDMABUF_HUGE,
	.alloc = udmabuf_huge_alloc,
};
