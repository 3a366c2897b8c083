/* SPDX-License-Identifier: MIT */
/*
 * Layer "providers": where buffers come from (dma-heaps, udmabuf, DRM dumb buffers, memfds) and
 * how their memory is reached by the CPU (mapping, DMA_BUF_IOCTL_SYNC). Providers use the facts
 * the probes left in the context (device fds, limits); they never probe themselves.
 */
#ifndef DMAIO_PROVIDER_H
#define DMAIO_PROVIDER_H

#include "../dmaio-types.h"

/* What to allocate. */
struct dmaio_alloc_req {
	const char *name;          /* the provider or heap name */
	size_t size;               /* bytes */
	const char *label;         /* the buffer's name (memfd name; dma-bufs are named by the api) */
	/* an image: its layout (size == image->size); the drm provider creates the dumb buffer in
	 * its geometry and rewrites it with the driver's pitch. NULL for a flat buffer. */
	const struct dmaio_image_desc *image_desc;
	struct dmaio_image_layout *image;
};

struct dmaio_provider {
	const char *name;          /* matched against the heap argument; NULL: matches heap names */
	int kind;
	/* fill buf->fd/memfd/alloc_size/heap; return 0 or -errno */
	int (*alloc)(struct dmaio_ctx *ctx, const struct dmaio_alloc_req *req, struct dmaio_buf *buf);
};
extern const struct dmaio_provider dmaio_provider_heap, dmaio_provider_udmabuf,
	dmaio_provider_udmabuf_huge, dmaio_provider_drm, dmaio_provider_memfd;

/* The choice of a provider (choice.c): the policy; the api probes first (the facts it reads are
 * in the context: heaps, sys, mem_total, cma_total), then tries the providers in this order. */
const struct dmaio_provider *dmaio_provider_by_name(const char *name); /* else the heap one */
/* the flags that ask for a kind of memory */
#define DMAIO_ALLOC_CONSTRAINTS (DMAIO_ALLOC_CONTIGUOUS | DMAIO_ALLOC_UNCACHED)
/* the names of the default CMA area's heap, newest first: tried first for contiguous memory */
#define DMAIO_CMA_HEAP_NAMES 4
extern const char *const dmaio_cma_heap_names[DMAIO_CMA_HEAP_NAMES];
/* Why a provider is not asked: the refusal for the caller's reason ("does not give physically
 * contiguous memory") and the longer debug line (what to do about it), "" when none. */
struct dmaio_refusal {
	char why[128];
	char log[192];
};
/* Does provider p give the memory the flags ask for? h: the heap of that name for the heap
 * provider (NULL: none), unused by the others; read under ctx->lock. 1 yes (*contiguous: the
 * heap's memory is), 0 no, -ENOENT no such heap; *why filled when not 1. */
int dmaio_provider_meets(const struct dmaio_provider *p, const struct dmaio_heap *h,
			 unsigned flags, bool *contiguous, struct dmaio_refusal *why);
/* Sizes that cannot fit, refused before the kernel is asked: 0, or -ENOMEM with *why filled. */
int dmaio_provider_fits(const struct dmaio_ctx *ctx, bool contiguous, size_t size,
			struct dmaio_refusal *why);
/* The providers to try, best first, for a request that names none (heap NULL): n names. The
 * api runs the base probe and every heap's first, and holds ctx->lock. */
#define DMAIO_PROVIDER_ORDER_MAX 16
struct dmaio_provider_order {
	int n;
	const char *name[DMAIO_PROVIDER_ORDER_MAX];
	char heap_names[DMAIO_PROVIDER_ORDER_MAX][DMAIO_NAME_MAX]; /* copies: name[] points here */
};
void dmaio_provider_order_locked(const struct dmaio_ctx *ctx, size_t size, unsigned flags,
				 struct dmaio_provider_order *o);

/* heaps (heap.c) */
int dmaio_heap_open(struct dmaio_heap *h);
int dmaio_heap_alloc_fd(struct dmaio_heap *h, size_t size, int *fd);
/* udmabuf (udmabuf.c): memfd + seals + UDMABUF_CREATE(_LIST) */
int dmaio_udmabuf_make(struct dmaio_ctx *ctx, int dev, const char *label, size_t size, bool huge,
		       uint64_t limit, uint32_t list_limit, struct dmaio_buf *b);
/* DRM (drm.c): the first node that makes and exports a dumb buffer: its fd, or -errno */
int dmaio_drm_find_node(char *node, size_t node_len);
/* memfd (memfd.c): populate backs it with memory now (fallocate); name: the memfd name */
int dmaio_memfd_create(const char *name, size_t size, bool huge, bool populate,
		       size_t *alloc_size, unsigned seals);

/* image layouts (image.c): check a description; compute its layout with a first-plane stride
 * of at least min_stride; bytes per pixel of the first plane (0: unknown format) */
/* 0, or -errno with one line in msg (len bytes) naming the field that is wrong */
int dmaio_image_check(const struct dmaio_image_desc *d, char *msg, size_t len);
int dmaio_image_compute(const struct dmaio_image_desc *d, uint32_t min_stride,
			struct dmaio_image_layout *l, char *msg, size_t len);
unsigned dmaio_image_cpp0(uint32_t fourcc);

/* CPU access (map.c) */
int dmaio_buf_get_addr(struct dmaio_buf *b, char **addr); /* the mapping; takes an io ref */
void dmaio_buf_put_addr(struct dmaio_buf *b);
int dmaio_buf_map_user(struct dmaio_buf *b, void **addr);
/* Can the CPU map the buffer: 0 yes (mapped now, or a trial mapping worked and was dropped),
 * -ENODEV the exporter refuses (remembered in b->map_err), another -errno: not now (-ENOMEM) */
int dmaio_buf_probe_map(struct dmaio_buf *b);
int dmaio_buf_unmap_user(struct dmaio_buf *b, void **old); /* *old: to unmap after unpinning */
void dmaio_buf_unmap_final(struct dmaio_buf *b, void *addr);
int dmaio_sync_ioctl(int fd, uint64_t flags);

#endif
