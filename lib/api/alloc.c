/* SPDX-License-Identifier: MIT */
/* Allocation: the provider table, the choice of provider for heap NULL, and dmaio_alloc. */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "api.h"
#include "../probe/probe.h"
#include "../providers/provider.h"
#include "../sys/sys.h"

/* Named providers; any other name is looked up in /dev/dma_heap. */
static const struct dmaio_provider *const providers[] = {
	&dmaio_provider_udmabuf,
	&dmaio_provider_udmabuf_huge,
	&dmaio_provider_drm,
	&dmaio_provider_memfd,
};

/* CMA heap names: fixed since 6.17, then the names of the default CMA area before it. */
static const char *const cma_names[] = { "default_cma_region", "reserved", "linux,cma",
					 "default-pool" };

static const struct dmaio_provider *provider_by_name(const char *name)
{
	for (size_t i = 0; i < ARRAY_SIZE(providers); i++)
		if (!strcmp(providers[i]->name, name))
			return providers[i];
	return &dmaio_provider_heap;
}

static int check_heap_name(const char *heap)
{
	size_t n = strlen(heap);

	if (!n || n >= DMAIO_NAME_MAX || strchr(heap, '/') || strstr(heap, ".."))
		return -EINVAL;
	return 0;
}

static int new_buf(struct dmaio_ctx *c, const char *name, int kind, struct dmaio_buf **out)
{
	struct dmaio_buf *b = calloc(1, sizeof(*b));

	if (!b)
		return -ENOMEM;
	if (pthread_mutex_init(&b->lock, NULL)) {
		free(b);
		return -ENOMEM;
	}
	b->ctx = c;
	b->kind = kind;
	b->fd = -1;
	b->memfd = -1;
	b->stats.last_path = DMAIO_PATH_AUTO;
	snprintf(b->provider, sizeof(b->provider), "%s", name);
	*out = b;
	return 0;
}

/* A unique id (io_uring registrations are keyed by it) and the context's buffer count. */
void dmaio_buf_register(struct dmaio_ctx *c, struct dmaio_buf *b)
{
	static uint64_t next_id; /* process-wide */

	b->id = __atomic_add_fetch(&next_id, 1, __ATOMIC_RELAXED);
	pthread_mutex_lock(&c->lock);
	c->nbufs++;
	pthread_mutex_unlock(&c->lock);
}

/* The probes a provider relies on, run here at the API edge before it is called. */
static void probe_for(struct dmaio_ctx *c, const struct dmaio_provider *p)
{
	pthread_mutex_lock(&c->lock);
	dmaio_probe_base_locked(c);
	if (p == &dmaio_provider_drm)
		dmaio_probe_drm_locked(c);
	else if (p == &dmaio_provider_udmabuf_huge)
		dmaio_probe_hugetlb_locked(c);
	pthread_mutex_unlock(&c->lock);
}

static bool is_cma_name(const char *name)
{
	for (size_t i = 0; i < ARRAY_SIZE(cma_names); i++)
		if (!strcmp(name, cma_names[i]))
			return true;
	return false;
}

/* Sizes that cannot fit are refused before the kernel is asked: a 6.12 system heap allocates
 * page by page until the OOM killer fires, and dma-buf pages are in no process's RSS, so it may
 * kill another process. More than the machine's memory: -ENOMEM; more than the CMA area, for
 * the CMA heaps: -ENOMEM too (udmabuf's own limit gives -EFBIG in its provider). */
static int fits(struct dmaio_ctx *c, const struct dmaio_provider *p, const char *name, size_t size)
{
	if (c->mem_total && size > c->mem_total) {
		DBG(c, "alloc %zu bytes from %s: more than the machine's memory (%llu MiB)", size, name,
		    (unsigned long long)(c->mem_total >> 20));
		return -ENOMEM;
	}
	if (p == &dmaio_provider_heap && is_cma_name(name) && size > c->cma_total) {
		DBG(c, "alloc %zu bytes from %s: more than the CMA area (CmaTotal %llu MiB); boot with "
		    "a larger cma= or pick another heap", size, name,
		    (unsigned long long)(c->cma_total >> 20));
		return -ENOMEM;
	}
	return 0;
}

static int try_provider(struct dmaio_ctx *c, const struct dmaio_provider *p, const char *name,
			size_t size, struct dmaio_buf **out)
{
	struct dmaio_buf *b;
	int r;

	probe_for(c, p);
	r = fits(c, p, name, size);
	if (r)
		return r;
	r = new_buf(c, name, p->kind, &b);

	if (r)
		return r;
	r = p->alloc(c, name, size, b);
	if (r) {
		pthread_mutex_destroy(&b->lock);
		free(b);
		return r;
	}
	b->size = size;
	if (b->heap && !__atomic_load_n(&b->heap->rw_probed, __ATOMIC_RELAXED))
		dmaio_probe_heap_rw_file(c, b->heap, b->fd); /* on its first real buffer */
	dmaio_buf_register(c, b);
	*out = b;
	return 0;
}

/* heap NULL: the provider that gives file I/O the fastest path here. A heap whose exporter takes
 * RW_FILE first (the kernel does the I/O into its pages), then udmabuf (O_DIRECT into the same
 * pages), then the system heap, the CMA heaps, any other heap, DRM. */
static int alloc_best(struct dmaio_ctx *c, size_t size, unsigned flags, struct dmaio_buf **out)
{
	const char *order[16];
	char heap_names[16][DMAIO_NAME_MAX];
	int n = 0;
	uint64_t ulimit;
	bool udmabuf;

	pthread_mutex_lock(&c->lock);
	/* heap NULL means "any provider": every heap is probed (a one-page allocation each) to learn
	 * which exporter takes RW_FILE; DRM is probed only when reached */
	dmaio_probe_base_locked(c);
	for (int i = 0; i < c->nheaps; i++)
		dmaio_probe_heap_locked(c, &c->heaps[i]);
	udmabuf = c->sys.udmabuf == DMAIO_CAP_YES;
	ulimit = c->sys.udmabuf_size_limit;
	for (int i = 0; i < c->nheaps && n < 4; i++)
		if (c->heaps[i].info.rw_file == DMAIO_CAP_YES)
			order[n] = strcpy(heap_names[n], c->heaps[i].name), n++;
	if (udmabuf && (!ulimit || size <= ulimit))
		order[n++] = "udmabuf";
	if (dmaio_find_heap_locked(c, "system"))
		order[n++] = "system";
	for (size_t i = 0; i < ARRAY_SIZE(cma_names); i++)
		if (dmaio_find_heap_locked(c, cma_names[i]))
			order[n++] = cma_names[i];
	for (int i = 0; i < c->nheaps && n < 14; i++) {
		bool seen = false;

		for (int j = 0; j < n; j++)
			seen |= !strcmp(order[j], c->heaps[i].name);
		if (!seen && c->heaps[i].info.alloc == DMAIO_CAP_YES)
			order[n] = strcpy(heap_names[n], c->heaps[i].name), n++;
	}
	pthread_mutex_unlock(&c->lock);
	order[n++] = "drm"; /* probed when reached */

	for (int i = 0; i < n; i++) {
		int r = try_provider(c, provider_by_name(order[i]), order[i], size, out);

		if (!r) {
			DBG(c, "alloc %zu bytes: provider %s", size, order[i]);
			return 0;
		}
		if (!strcmp(order[i], "drm") && r == -ENOENT)
			continue; /* no DRM node: not a refusal worth a line */
		DBG(c, "alloc %zu bytes: provider %s refused: %s", size, order[i], strerror(-r));
		if (r == -ENOMEM || r == -EOVERFLOW)
			return r;
	}
	if (flags & DMAIO_ALLOC_ALLOW_NON_DMABUF) {
		DBG(c, "alloc %zu bytes: no dma-buf provider works; using a plain memfd", size);
		return try_provider(c, &dmaio_provider_memfd, "memfd", size, out);
	}
	DBG(c, "alloc: no dma-buf provider: /dev/dma_heap is %s, /dev/udmabuf %s, DRM %s. Enable "
	    "CONFIG_DMABUF_HEAPS_SYSTEM or CONFIG_UDMABUF (modprobe udmabuf), install "
	    "udev/60-dmaio.rules for access, or pass DMAIO_ALLOC_ALLOW_NON_DMABUF / heap \"memfd\"",
	    n > 1 ? "present but refusing" : "empty or absent",
	    udmabuf ? "present" : "absent or not accessible",
	    c->sys.drm == DMAIO_CAP_YES ? "present" : "absent");
	return -ENODEV;
}

DMAIO_EXPORT int dmaio_alloc(struct dmaio_ctx *ctx, const char *heap, size_t size, unsigned flags,
			     struct dmaio_buf **buf)
{
	const struct dmaio_provider *p;
	struct dmaio_ctx *c;
	int r;

	if (!buf || (flags & ~DMAIO_ALLOC_FLAGS_ALL) || !size)
		return -EINVAL;
	if ((flags & DMAIO_ALLOC_ALLOW_NON_DMABUF) && (flags & DMAIO_ALLOC_DMABUF_ONLY))
		return -EINVAL;
	if (heap && check_heap_name(heap))
		return -EINVAL;
	if (size > (size_t)INT64_MAX)
		return -EOVERFLOW;
	c = dmaio_ctx_get(ctx);
	if (!c)
		return -ENOMEM;
	if (!heap)
		return alloc_best(c, size, flags, buf);
	p = provider_by_name(heap);
	if (p == &dmaio_provider_memfd && (flags & DMAIO_ALLOC_DMABUF_ONLY))
		return -EOPNOTSUPP;
	r = try_provider(c, p, heap, size, buf);
	if (r)
		DBG(c, "alloc %zu bytes from %s: %s", size, heap, strerror(-r));
	return r;
}
