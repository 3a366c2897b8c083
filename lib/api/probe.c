/* SPDX-License-Identifier: MIT */
/* The probe functions of the API: system capabilities and heaps. */
#include "api.h"
#include "../probe/probe.h"

DMAIO_EXPORT int dmaio_probe_system(struct dmaio_ctx *ctx, struct dmaio_sys_info *info)
{
	struct dmaio_ctx *c;

	if (!info)
		return -EINVAL;
	c = dmaio_ctx_get(ctx);
	if (!c)
		return -ENOMEM;
	pthread_mutex_lock(&c->lock);
	dmaio_probe_sys_locked(c);
	*info = c->sys;
	pthread_mutex_unlock(&c->lock);
	return 0;
}

DMAIO_EXPORT int dmaio_probe_heaps(struct dmaio_ctx *ctx, struct dmaio_heap_info *heaps, size_t max)
{
	struct dmaio_ctx *c;
	int n;

	if (!heaps && max)
		return -EINVAL;
	c = dmaio_ctx_get(ctx);
	if (!c)
		return -ENOMEM;
	pthread_mutex_lock(&c->lock);
	dmaio_probe_base_locked(c);
	n = c->sys.nheaps == -ENOENT ? 0 : c->sys.nheaps; /* no /dev/dma_heap: no heaps */
	for (int i = 0; i < n; i++) {
		dmaio_probe_heap_locked(c, &c->heaps[i]);
		if ((size_t)i < max)
			heaps[i] = c->heaps[i].info;
	}
	pthread_mutex_unlock(&c->lock);
	return n;
}
