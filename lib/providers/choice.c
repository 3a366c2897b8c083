/* SPDX-License-Identifier: MIT */
/* The choice of a provider: the named providers, the order tried for heap NULL, and the checks
 * made before one is asked (does it give the memory the flags ask for, can the size fit). Policy
 * only, on the facts the api probed first; the api tries the providers, notes their refusals for
 * the caller's reason and logs them. */
#include <string.h>

#include "provider.h"

/* Named providers; any other name is looked up in /dev/dma_heap. */
static const struct dmaio_provider *const providers[] = {
	&dmaio_provider_udmabuf,
	&dmaio_provider_udmabuf_huge,
	&dmaio_provider_drm,
	&dmaio_provider_memfd,
};

const struct dmaio_provider *dmaio_provider_by_name(const char *name)
{
	for (size_t i = 0; i < ARRAY_SIZE(providers); i++)
		if (!strcmp(providers[i]->name, name))
			return providers[i];
	return &dmaio_provider_heap;
}

/* The default CMA area's heap: its fixed name since 6.17, then the names it had before (after
 * the CMA area: "reserved", "linux,cma", "default-pool"), in the order a caller asking for
 * contiguous memory tries them. */
const char *const dmaio_cma_heap_names[DMAIO_CMA_HEAP_NAMES] = { "default_cma_region", "reserved",
								  "linux,cma", "default-pool" };

int dmaio_provider_meets(const struct dmaio_provider *p, const struct dmaio_heap *h,
			 unsigned flags, bool *contiguous, struct dmaio_refusal *why)
{
	int r = 1;

	*contiguous = false;
	why->why[0] = why->log[0] = '\0';
	if (p != &dmaio_provider_heap) {
		r = !(flags & DMAIO_ALLOC_CONSTRAINTS);
	} else if (!h) {
		r = -ENOENT;
	} else {
		*contiguous = h->info.contiguous;
		if ((flags & DMAIO_ALLOC_CONTIGUOUS) && !h->info.contiguous)
			r = 0;
		if ((flags & DMAIO_ALLOC_UNCACHED) && !h->info.uncached)
			r = 0;
	}
	if (!r) {
		const char *pc = flags & DMAIO_ALLOC_CONTIGUOUS ? " physically contiguous" : "";
		const char *uc = flags & DMAIO_ALLOC_UNCACHED ? " uncached" : "";

		snprintf(why->why, sizeof(why->why), "does not give%s%s memory", pc, uc);
		snprintf(why->log, sizeof(why->log), "it does not give%s%s memory", pc, uc);
	} else if (r < 0) {
		snprintf(why->why, sizeof(why->why), "no such heap in /dev/dma_heap");
	}
	return r;
}

/* A 6.12 system heap allocates page by page until the OOM killer fires, and dma-buf pages are in
 * no process's RSS, so it may kill another process. More than the machine's memory: -ENOMEM;
 * more than the CMA area, for the CMA heaps: -ENOMEM too (udmabuf's own limit gives -EFBIG in
 * its provider). */
int dmaio_provider_fits(const struct dmaio_ctx *c, bool contiguous, size_t size,
			struct dmaio_refusal *why)
{
	unsigned long long mib;

	if (c->mem_total && size > c->mem_total) {
		mib = (unsigned long long)(c->mem_total >> 20);
		snprintf(why->why, sizeof(why->why),
			 "more than the machine's memory (MemTotal %llu MiB)", mib);
		snprintf(why->log, sizeof(why->log), "more than the machine's memory (%llu MiB)", mib);
		return -ENOMEM;
	}
	if (contiguous && size > c->cma_total) {
		mib = (unsigned long long)(c->cma_total >> 20);
		snprintf(why->why, sizeof(why->why), "more than the CMA area (CmaTotal %llu MiB)", mib);
		snprintf(why->log, sizeof(why->log), "more than the CMA area (CmaTotal %llu MiB); boot "
			 "with a larger cma= or pick another heap", mib);
		return -ENOMEM;
	}
	return 0;
}

/* A heap of the context, as the probe listed it. */
static bool listed(const struct dmaio_ctx *c, const char *name)
{
	for (int i = 0; i < c->nheaps; i++)
		if (!strcmp(c->heaps[i].name, name))
			return true;
	return false;
}

/* heap NULL: the provider that gives file I/O the fastest path here. A heap whose exporter takes
 * RW_FILE first (the kernel does the I/O into its pages), then udmabuf (O_DIRECT into the same
 * pages), then the system heap, the CMA heaps, any other heap, DRM (probed when reached). With
 * constraints: only the heaps that meet them, the default CMA area's heap first. */
void dmaio_provider_order_locked(const struct dmaio_ctx *c, size_t size, unsigned flags,
				 struct dmaio_provider_order *o)
{
	const char **order = o->name;
	bool constrained = flags & DMAIO_ALLOC_CONSTRAINTS;
	bool udmabuf = c->sys.udmabuf == DMAIO_CAP_YES;
	uint64_t ulimit = c->sys.udmabuf_size_limit;
	int n = 0;

	if (!constrained) {
		for (int i = 0; i < c->nheaps && n < 4; i++)
			if (dmaio_heap_rw_file(&c->heaps[i], NULL) == DMAIO_CAP_YES)
				order[n] = strcpy(o->heap_names[n], c->heaps[i].name), n++;
		if (udmabuf && (!ulimit || size <= ulimit))
			order[n++] = "udmabuf";
		if (listed(c, "system"))
			order[n++] = "system";
	}
	for (size_t i = 0; i < DMAIO_CMA_HEAP_NAMES; i++)
		if (listed(c, dmaio_cma_heap_names[i]))
			order[n++] = dmaio_cma_heap_names[i];
	for (int i = 0; i < c->nheaps && n < 14; i++) {
		const struct dmaio_heap *h = &c->heaps[i];
		bool seen = false;

		for (int j = 0; j < n; j++)
			seen |= !strcmp(order[j], h->name);
		if (seen || h->info.alloc != DMAIO_CAP_YES)
			continue;
		if (((flags & DMAIO_ALLOC_CONTIGUOUS) && !h->info.contiguous) ||
		    ((flags & DMAIO_ALLOC_UNCACHED) && !h->info.uncached))
			continue;
		order[n] = strcpy(o->heap_names[n], h->name), n++;
	}
	if (!constrained)
		order[n++] = "drm"; /* probed when reached */
	o->n = n;
}
