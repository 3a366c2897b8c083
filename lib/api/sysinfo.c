/* SPDX-License-Identifier: MIT */
/* The probe functions of the API: the system, the unmerged proposals, the heaps. The probes
 * keep their facts in the context (struct dmaio_sys_facts, dmaio_heap_facts); the public structs
 * are filled from them here. */
#include <string.h>

#include "api.h"
#include "../probe/probe.h"

DMAIO_EXPORT int dmaio_ctx_get_system(struct dmaio_ctx *ctx, struct dmaio_sys_info *info)
{
	struct dmaio_sys_info si = { .struct_size = sizeof(si) };
	struct dmaio_ctx *c;

	if (dmaio_abi_check_out(info, DMAIO_SIZE_SYS_INFO))
		return -EINVAL;
	c = dmaio_ctx_get(ctx);
	if (!c)
		return -ENOMEM;
	pthread_mutex_lock(&c->lock);
	dmaio_probe_sys_locked(c);
	si.page_size = c->sys.page_size;
	si.nheaps = c->sys.nheaps;
	si.udmabuf = c->sys.udmabuf;
	si.udmabuf_err = c->sys.udmabuf_err;
	si.udmabuf_list_limit = c->sys.udmabuf_list_limit;
	si.udmabuf_size_limit = c->sys.udmabuf_size_limit;
	si.udmabuf_huge = c->sys.udmabuf_huge;
	si.hugetlb_memfd = c->sys.hugetlb_memfd;
	si.huge_page_size = c->sys.huge_page_size;
	si.io_uring = c->sys.io_uring;
	si.io_uring_err = c->sys.io_uring_err;
	si.io_uring_disabled = c->sys.io_uring_disabled;
	si.io_uring_fixed = c->sys.io_uring_fixed;
	si.drm = c->sys.drm;
	si.heap_memcg = c->sys.heap_memcg;
	si.cachestat = c->sys.cachestat;
	memcpy(si.drm_node, c->sys.drm_node, sizeof(si.drm_node));
	pthread_mutex_unlock(&c->lock);
	dmaio_abi_copy_out(info, &si, sizeof(si));
	return 0;
}

DMAIO_EXPORT int dmaio_ctx_get_proposed(struct dmaio_ctx *ctx, struct dmaio_proposed_info *info)
{
	struct dmaio_proposed_info pi = { .struct_size = sizeof(pi) };
	struct dmaio_ctx *c;

	if (dmaio_abi_check_out(info, DMAIO_SIZE_PROPOSED_INFO))
		return -EINVAL;
	c = dmaio_ctx_get(ctx);
	if (!c)
		return -ENOMEM;
	pthread_mutex_lock(&c->lock);
	dmaio_probe_sys_locked(c);
	for (int i = 0; i < c->nheaps; i++) /* what the proposals answer is learned per heap */
		dmaio_probe_heap_locked(c, &c->heaps[i]);
	pi.rw_file_kernel = c->sys.rw_file_kernel;
	pi.uring_dmabuf_kernel = c->sys.uring_dmabuf_kernel;
	pi.uring_dmabuf = c->sys.uring_dmabuf;
	pi.uring_dmabuf_err = c->sys.uring_dmabuf_err;
	memcpy(pi.uring_dmabuf_dev, c->sys.uring_dmabuf_dev, sizeof(pi.uring_dmabuf_dev));
	pthread_mutex_unlock(&c->lock);
	dmaio_abi_copy_out(info, &pi, sizeof(pi));
	return 0;
}

/* The heap of that index, probed; -ERANGE past the count. Called with c->lock held. */
static struct dmaio_heap *heap_at(struct dmaio_ctx *c, uint32_t index)
{
	dmaio_probe_base_locked(c);
	if (c->sys.nheaps <= 0 || index >= (uint32_t)c->sys.nheaps)
		return NULL;
	dmaio_probe_heap_locked(c, &c->heaps[index]);
	return &c->heaps[index];
}

DMAIO_EXPORT int dmaio_ctx_heap_count(struct dmaio_ctx *ctx)
{
	struct dmaio_ctx *c = dmaio_ctx_get(ctx);
	int n;

	if (!c)
		return -ENOMEM;
	pthread_mutex_lock(&c->lock);
	dmaio_probe_base_locked(c);
	n = c->sys.nheaps == -ENOENT ? 0 : c->sys.nheaps; /* no /dev/dma_heap: no heaps */
	pthread_mutex_unlock(&c->lock);
	return n;
}

static void fill_heap_info(const struct dmaio_heap *h, void *out)
{
	struct dmaio_heap_info *hi = out;

	hi->alloc = h->info.alloc;
	hi->alloc_err = h->info.alloc_err;
	hi->mmap = h->info.mmap;
	hi->contiguous = h->info.contiguous;
	hi->uncached = h->info.uncached;
	snprintf(hi->name, sizeof(hi->name), "%s", h->info.name);
}

static void fill_heap_proposed(const struct dmaio_heap *h, void *out)
{
	struct dmaio_heap_proposed *hp = out;

	hp->rw_file = dmaio_heap_rw_file(h, &hp->rw_file_err);
	hp->uring_dmabuf = h->info.uring_dmabuf;
}

/* One heap's facts into the caller's struct: the library's own version (v, size bytes) is
 * filled under the probe lock, then copied out by the caller's struct_size. */
static int get_heap(struct dmaio_ctx *ctx, uint32_t index, void *info, size_t min, void *v,
		    size_t size, void (*fill)(const struct dmaio_heap *, void *))
{
	struct dmaio_heap *h;
	struct dmaio_ctx *c;

	if (dmaio_abi_check_out(info, min))
		return -EINVAL;
	c = dmaio_ctx_get(ctx);
	if (!c)
		return -ENOMEM;
	pthread_mutex_lock(&c->lock);
	h = heap_at(c, index);
	if (h)
		fill(h, v);
	pthread_mutex_unlock(&c->lock);
	if (!h)
		return -ERANGE;
	dmaio_abi_copy_out(info, v, size);
	return 0;
}

DMAIO_EXPORT int dmaio_ctx_get_heap(struct dmaio_ctx *ctx, uint32_t index,
				    struct dmaio_heap_info *info)
{
	struct dmaio_heap_info hi = { .struct_size = sizeof(hi) };

	return get_heap(ctx, index, info, DMAIO_SIZE_HEAP_INFO, &hi, sizeof(hi), fill_heap_info);
}

DMAIO_EXPORT int dmaio_ctx_get_heap_proposed(struct dmaio_ctx *ctx, uint32_t index,
					     struct dmaio_heap_proposed *info)
{
	struct dmaio_heap_proposed hp = { .struct_size = sizeof(hp) };

	return get_heap(ctx, index, info, DMAIO_SIZE_HEAP_PROPOSED, &hp, sizeof(hp),
			fill_heap_proposed);
}
