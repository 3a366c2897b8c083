/* SPDX-License-Identifier: MIT */
/* Allocation: the provider table, the choice of provider for heap NULL, and dmaio_alloc. */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <linux/dma-buf.h>

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
	pthread_mutex_lock(&c->io_lock);
	c->nbufs++;
	pthread_mutex_unlock(&c->io_lock);
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

/* What one dmaio_alloc*() call asks for. */
struct plan {
	size_t size;
	unsigned flags;
	const char *label;                     /* the buffer's name */
	bool named;                            /* by the caller: naming must work */
	const struct dmaio_image_desc *image_desc;
	struct dmaio_image_layout *image;      /* NULL for a flat buffer */
};

#define CONSTRAINTS (DMAIO_ALLOC_CONTIGUOUS | DMAIO_ALLOC_UNCACHED)

/* Does this provider give the memory the flags ask for? 1 yes, 0 no, -ENOENT: no such heap. */
static int meets(struct dmaio_ctx *c, const struct dmaio_provider *p, const char *name,
		 unsigned flags, bool *contiguous)
{
	struct dmaio_heap *h;
	int r = 1;

	*contiguous = false;
	if (p != &dmaio_provider_heap)
		return !(flags & CONSTRAINTS);
	pthread_mutex_lock(&c->lock);
	h = dmaio_find_heap_locked(c, name);
	if (!h)
		r = -ENOENT;
	else {
		*contiguous = h->info.contiguous;
		if ((flags & DMAIO_ALLOC_CONTIGUOUS) && !h->info.contiguous)
			r = 0;
		if ((flags & DMAIO_ALLOC_UNCACHED) && !h->info.uncached)
			r = 0;
	}
	pthread_mutex_unlock(&c->lock);
	return r;
}

/* Sizes that cannot fit are refused before the kernel is asked: a 6.12 system heap allocates
 * page by page until the OOM killer fires, and dma-buf pages are in no process's RSS, so it may
 * kill another process. More than the machine's memory: -ENOMEM; more than the CMA area, for
 * the CMA heaps: -ENOMEM too (udmabuf's own limit gives -EFBIG in its provider). */
static int fits(struct dmaio_ctx *c, bool contiguous, const char *name, size_t size)
{
	if (c->mem_total && size > c->mem_total) {
		DBG(c, "alloc %zu bytes from %s: more than the machine's memory (%llu MiB)", size, name,
		    (unsigned long long)(c->mem_total >> 20));
		return -ENOMEM;
	}
	if (contiguous && size > c->cma_total) {
		DBG(c, "alloc %zu bytes from %s: more than the CMA area (CmaTotal %llu MiB); boot with "
		    "a larger cma= or pick another heap", size, name,
		    (unsigned long long)(c->cma_total >> 20));
		return -ENOMEM;
	}
	return 0;
}

/* The name a buffer gets (DMA_BUF_SET_NAME): printable ASCII, shorter than DMA_BUF_NAME_LEN. */
static int check_label(const char *label)
{
	size_t n = strlen(label);

	if (!n || n >= DMAIO_BUF_NAME_MAX)
		return -EINVAL;
	for (size_t i = 0; i < n; i++)
		if (label[i] < 0x20 || label[i] > 0x7e)
			return -EINVAL;
	return 0;
}

static int try_provider(struct dmaio_ctx *c, const struct dmaio_provider *p, const char *name,
			const struct plan *pl, struct dmaio_buf **out)
{
	struct dmaio_alloc_req req = { .name = name, .size = pl->size, .label = pl->label,
				       .image_desc = pl->image_desc };
	struct dmaio_image_layout image;
	struct dmaio_buf *b;
	bool contiguous;
	int r;

	probe_for(c, p);
	r = meets(c, p, name, pl->flags, &contiguous);
	if (r <= 0) {
		if (!r)
			DBG(c, "alloc from %s: it does not give%s%s memory", name,
			    pl->flags & DMAIO_ALLOC_CONTIGUOUS ? " physically contiguous" : "",
			    pl->flags & DMAIO_ALLOC_UNCACHED ? " uncached" : "");
		return r ? r : -EOPNOTSUPP;
	}
	r = fits(c, contiguous, name, pl->size);
	if (r)
		return r;
	if (pl->image) {
		image = *pl->image; /* a provider may rewrite it (the DRM driver's pitch) */
		req.image = &image;
	}
	r = new_buf(c, name, p->kind, &b);
	if (r)
		return r;
	r = p->alloc(c, &req, b);
	if (r) {
		if (r == -EACCES)
			DBG(c, "alloc from %s: no permission to open its device; install "
			    "udev/60-dmaio.rules (or give this user access to the node)", name);
		pthread_mutex_destroy(&b->lock);
		free(b);
		return r;
	}
	b->size = pl->image ? (size_t)image.size : pl->size;
	if (dmaio_buf_is_dmabuf(b)) {
		r = sys_ioctl(b->fd, DMA_BUF_SET_NAME, (void *)pl->label);
		if (r && pl->named) {
			DBG(c, "alloc from %s: naming the buffer \"%s\": %s", name, pl->label,
			    strerror(-r));
			close(b->fd);
			if (b->memfd >= 0)
				close(b->memfd);
			pthread_mutex_destroy(&b->lock);
			free(b);
			return r;
		}
	}
	if (b->heap && !__atomic_load_n(&b->heap->rw_probed, __ATOMIC_RELAXED))
		dmaio_probe_heap_rw_file(c, b->heap, b->fd); /* on its first real buffer */
	if (pl->image)
		*pl->image = image;
	dmaio_buf_register(c, b);
	*out = b;
	return 0;
}

/* Of the refusals of several providers, the one that tells the caller most: no permission
 * (fixable with the udev rule) over the rest. */
static int worse(int have, int r)
{
	if (have == -EACCES)
		return have;
	return r;
}

/* heap NULL: the provider that gives file I/O the fastest path here. A heap whose exporter takes
 * RW_FILE first (the kernel does the I/O into its pages), then udmabuf (O_DIRECT into the same
 * pages), then the system heap, the CMA heaps, any other heap, DRM. With constraints: only the
 * heaps that meet them, the default CMA area's heap first. */
static int alloc_best(struct dmaio_ctx *c, const struct plan *pl, struct dmaio_buf **out)
{
	const char *order[16];
	char heap_names[16][DMAIO_NAME_MAX];
	bool constrained = pl->flags & CONSTRAINTS;
	int n = 0, err = -ENODEV;
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
	if (!constrained) {
		for (int i = 0; i < c->nheaps && n < 4; i++)
			if (c->heaps[i].info.rw_file == DMAIO_CAP_YES)
				order[n] = strcpy(heap_names[n], c->heaps[i].name), n++;
		if (udmabuf && (!ulimit || pl->size <= ulimit))
			order[n++] = "udmabuf";
		if (dmaio_find_heap_locked(c, "system"))
			order[n++] = "system";
	}
	for (size_t i = 0; i < DMAIO_CMA_HEAP_NAMES; i++)
		if (dmaio_find_heap_locked(c, dmaio_cma_heap_names[i]))
			order[n++] = dmaio_cma_heap_names[i];
	for (int i = 0; i < c->nheaps && n < 14; i++) {
		const struct dmaio_heap *h = &c->heaps[i];
		bool seen = false;

		for (int j = 0; j < n; j++)
			seen |= !strcmp(order[j], h->name);
		if (seen || h->info.alloc != DMAIO_CAP_YES)
			continue;
		if (((pl->flags & DMAIO_ALLOC_CONTIGUOUS) && !h->info.contiguous) ||
		    ((pl->flags & DMAIO_ALLOC_UNCACHED) && !h->info.uncached))
			continue;
		order[n] = strcpy(heap_names[n], h->name), n++;
	}
	pthread_mutex_unlock(&c->lock);
	if (!constrained)
		order[n++] = "drm"; /* probed when reached */

	for (int i = 0; i < n; i++) {
		int r = try_provider(c, provider_by_name(order[i]), order[i], pl, out);

		if (!r) {
			DBG(c, "alloc %zu bytes: provider %s", pl->size, order[i]);
			return 0;
		}
		if (!strcmp(order[i], "drm") && r == -ENOENT)
			continue; /* no DRM node: not a refusal worth a line */
		DBG(c, "alloc %zu bytes: provider %s refused: %s", pl->size, order[i], strerror(-r));
		if (r == -ENOMEM || r == -EOVERFLOW)
			return r;
		if (r == -EACCES)
			err = -EACCES;
	}
	if (constrained) {
		if (err == -ENODEV)
			DBG(c, "alloc %zu bytes: no heap here gives%s%s memory (CMA heaps need "
			    "CONFIG_DMABUF_HEAPS_CMA and a CMA area: cma= on the kernel command line or "
			    "a shared-dma-pool region)", pl->size,
			    pl->flags & DMAIO_ALLOC_CONTIGUOUS ? " physically contiguous" : "",
			    pl->flags & DMAIO_ALLOC_UNCACHED ? " uncached" : "");
		return err;
	}
	if (pl->flags & DMAIO_ALLOC_ALLOW_NON_DMABUF) {
		DBG(c, "alloc %zu bytes: no dma-buf provider works; using a plain memfd", pl->size);
		return try_provider(c, &dmaio_provider_memfd, "memfd", pl, out);
	}
	DBG(c, "alloc: no dma-buf provider: /dev/dma_heap is %s, /dev/udmabuf %s, DRM %s. Enable "
	    "CONFIG_DMABUF_HEAPS_SYSTEM or CONFIG_UDMABUF (modprobe udmabuf), install "
	    "udev/60-dmaio.rules for access, or pass DMAIO_ALLOC_ALLOW_NON_DMABUF / heap \"memfd\"",
	    n > 1 ? "present but refusing" : "empty or absent",
	    udmabuf ? "present" : "absent or not accessible",
	    c->sys.drm == DMAIO_CAP_YES ? "present" : "absent");
	return err;
}

/* One named provider. */
static int alloc_named(struct dmaio_ctx *c, const char *heap, const struct plan *pl,
		       struct dmaio_buf **out)
{
	const struct dmaio_provider *p = provider_by_name(heap);
	int r;

	if (p == &dmaio_provider_memfd && (pl->flags & DMAIO_ALLOC_DMABUF_ONLY))
		return -EOPNOTSUPP;
	r = try_provider(c, p, heap, pl, out);
	if (r)
		DBG(c, "alloc %zu bytes from %s: %s", pl->size, heap, strerror(-r));
	return r;
}

/* The caller's list, in order; the most telling refusal when none works. */
static int alloc_list(struct dmaio_ctx *c, const char *const *list, const struct plan *pl,
		      struct dmaio_buf **out)
{
	int err = -ENODEV;

	for (size_t i = 0; list[i]; i++) {
		int r = alloc_named(c, list[i], pl, out);

		if (!r)
			return 0;
		if (r == -ENOMEM || r == -EOVERFLOW)
			return r;
		err = worse(err, r);
	}
	return err;
}

static int check_flags(unsigned flags)
{
	if (flags & ~DMAIO_ALLOC_FLAGS_ALL)
		return -EINVAL;
	if ((flags & DMAIO_ALLOC_ALLOW_NON_DMABUF) && (flags & DMAIO_ALLOC_DMABUF_ONLY))
		return -EINVAL;
	return 0;
}

static int check_opts(const struct dmaio_alloc_opts *o)
{
	size_t n = 0;

	if (!o)
		return 0;
	if (check_flags(o->flags) || o->reserved0)
		return -EINVAL;
	for (size_t i = 0; i < ARRAY_SIZE(o->reserved); i++)
		if (o->reserved[i])
			return -EINVAL;
	if (o->name && check_label(o->name))
		return -EINVAL;
	if (o->providers) {
		for (; o->providers[n]; n++)
			if (n >= 64 || check_heap_name(o->providers[n]))
				return -EINVAL;
		if (!n)
			return -EINVAL;
	}
	return 0;
}

static int alloc_with(struct dmaio_ctx *ctx, const struct dmaio_alloc_opts *o, struct plan *pl,
		      struct dmaio_buf **buf)
{
	struct dmaio_ctx *c;

	if (pl->size > (size_t)INT64_MAX)
		return -EOVERFLOW;
	c = dmaio_ctx_get(ctx);
	if (!c)
		return -ENOMEM;
	if (o && o->providers)
		return alloc_list(c, o->providers, pl, buf);
	return alloc_best(c, pl, buf);
}

DMAIO_EXPORT int dmaio_alloc(struct dmaio_ctx *ctx, const char *heap, size_t size, unsigned flags,
			     struct dmaio_buf **buf)
{
	struct plan pl = { .size = size, .flags = flags, .label = DMAIO_BUF_NAME };
	struct dmaio_ctx *c;

	if (!buf || check_flags(flags) || !size)
		return -EINVAL;
	if (heap && check_heap_name(heap))
		return -EINVAL;
	if (size > (size_t)INT64_MAX)
		return -EOVERFLOW;
	if (!heap)
		return alloc_with(ctx, NULL, &pl, buf);
	c = dmaio_ctx_get(ctx);
	if (!c)
		return -ENOMEM;
	return alloc_named(c, heap, &pl, buf);
}

DMAIO_EXPORT int dmaio_alloc_ex(struct dmaio_ctx *ctx, size_t size,
				const struct dmaio_alloc_opts *opts, struct dmaio_buf **buf)
{
	struct plan pl = { .size = size, .flags = opts ? opts->flags : 0,
			   .label = opts && opts->name ? opts->name : DMAIO_BUF_NAME,
			   .named = opts && opts->name };

	if (!buf || !size || check_opts(opts))
		return -EINVAL;
	return alloc_with(ctx, opts, &pl, buf);
}

DMAIO_EXPORT int dmaio_image_layout(const struct dmaio_image_desc *desc,
				    struct dmaio_image_layout *layout)
{
	if (!desc || !layout)
		return -EINVAL;
	return dmaio_image_compute(desc, 0, layout);
}

DMAIO_EXPORT int dmaio_alloc_image(struct dmaio_ctx *ctx, const struct dmaio_image_desc *desc,
				   const struct dmaio_alloc_opts *opts, struct dmaio_buf **buf,
				   struct dmaio_image_layout *layout)
{
	struct dmaio_image_layout l;
	struct plan pl = { .flags = opts ? opts->flags : 0,
			   .label = opts && opts->name ? opts->name : DMAIO_BUF_NAME,
			   .named = opts && opts->name, .image_desc = desc, .image = &l };
	int r;

	if (!desc || !buf || !layout || check_opts(opts))
		return -EINVAL;
	r = dmaio_image_compute(desc, 0, &l);
	if (r)
		return r;
	if (l.size > SIZE_MAX)
		return -EOVERFLOW;
	pl.size = (size_t)l.size;
	r = alloc_with(ctx, opts, &pl, buf);
	if (!r)
		*layout = l;
	return r;
}

DMAIO_EXPORT int dmaio_buf_set_name(struct dmaio_buf *buf, const char *name)
{
	if (!buf || !name || check_label(name))
		return -EINVAL;
	if (!dmaio_buf_is_dmabuf(buf))
		return -EOPNOTSUPP;
	return sys_ioctl(buf->fd, DMA_BUF_SET_NAME, (void *)name);
}
