/* SPDX-License-Identifier: MIT */
/* Allocation at the API edge: the arguments checked, the probes a provider needs run, the
 * providers tried in the order the providers layer gives (providers/choice.c, the policy), their
 * refusals collected for the caller's reason and logged, the buffer named and registered. */
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <linux/dma-buf.h>

#include "api.h"
#include "../probe/probe.h"
#include "../providers/provider.h"
#include "../sys/sys.h"

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
	dmaio_ctx_add_buf(c, b);
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

/* What one dmaio_buf_alloc*() call asks for, and the refusals met so far. */
struct plan {
	size_t size;
	unsigned flags;
	const char *label;                     /* the buffer's name */
	bool named;                            /* by the caller: naming must work */
	const struct dmaio_image_desc *image_desc;
	struct dmaio_image_layout *image;      /* NULL for a flat buffer */
	char notes[512];                       /* "provider: why; provider: why" (reasons) */
};

/* One refusal, for the caller's reason. */
__attribute__((format(printf, 2, 3)))
static void note(struct plan *pl, const char *fmt, ...)
{
	size_t n = strlen(pl->notes);
	va_list ap;

	if (n + 3 >= sizeof(pl->notes))
		return;
	if (n)
		n += (size_t)snprintf(pl->notes + n, sizeof(pl->notes) - n, "; ");
	va_start(ap, fmt);
	vsnprintf(pl->notes + n, sizeof(pl->notes) - n, fmt, ap);
	va_end(ap);
}

/* Does this provider give the memory the flags ask for (providers/choice.c)? The heap of that
 * name looked up here, at the edge (the lookup lists the heaps when they are not yet). */
static int meets(struct dmaio_ctx *c, const struct dmaio_provider *p, const char *name,
		 unsigned flags, bool *contiguous, struct dmaio_refusal *why)
{
	int r;

	if (p != &dmaio_provider_heap)
		return dmaio_provider_meets(p, NULL, flags, contiguous, why);
	pthread_mutex_lock(&c->lock);
	r = dmaio_provider_meets(p, dmaio_find_heap_locked(c, name), flags, contiguous, why);
	pthread_mutex_unlock(&c->lock);
	return r;
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
			struct plan *pl, struct dmaio_buf **out)
{
	struct dmaio_alloc_req req = { .name = name, .size = pl->size, .label = pl->label,
				       .image_desc = pl->image_desc };
	struct dmaio_image_layout image;
	struct dmaio_refusal why;
	struct dmaio_buf *b;
	bool contiguous;
	int r;

	probe_for(c, p);
	r = meets(c, p, name, pl->flags, &contiguous, &why);
	if (r <= 0) {
		if (!r)
			DBG(c, "alloc from %s: %s", name, why.log);
		note(pl, "%s: %s", name, why.why);
		return r ? r : -EOPNOTSUPP;
	}
	r = dmaio_provider_fits(c, contiguous, pl->size, &why);
	if (r) {
		note(pl, "%s: %s", name, why.why);
		DBG(c, "alloc %zu bytes from %s: %s", pl->size, name, why.log);
		return r;
	}
	if (pl->image) {
		image = *pl->image; /* a provider may rewrite it (the DRM driver's pitch) */
		req.image = &image;
	}
	r = new_buf(c, name, p->kind, &b);
	if (r)
		return r;
	r = p->alloc(c, &req, b);
	if (r) {
		if (r == -EACCES) {
			DBG(c, "alloc from %s: no permission to open its device; install "
			    "udev/60-dmaio.rules (or give this user access to the node)", name);
			note(pl, "%s: no permission to open its device (install udev/60-dmaio.rules)",
			     name);
		} else if (r == -ENOENT) {
			note(pl, "%s: its device is absent", name);
		} else {
			note(pl, "%s: %s", name, strerror(-r));
		}
		pthread_mutex_destroy(&b->lock);
		free(b);
		return r;
	}
	b->size = pl->image ? (size_t)image.total_size : pl->size;
	if (dmaio_buf_is_dmabuf(b)) {
		r = sys_ioctl(b->fd, DMA_BUF_SET_NAME, (void *)pl->label);
		if (r && pl->named) {
			DBG(c, "alloc from %s: naming the buffer \"%s\": %s", name, pl->label,
			    strerror(-r));
			note(pl, "%s: the kernel refused the name \"%s\": %s", name, pl->label,
			     strerror(-r));
			close(b->fd);
			if (b->memfd >= 0)
				close(b->memfd);
			pthread_mutex_destroy(&b->lock);
			free(b);
			return r;
		}
	}
	if (b->heap && !dmaio_heap_rw_probed(b->heap))
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

/* heap NULL: every provider in the order the providers layer gives (providers/choice.c), until
 * one works. */
static int alloc_best(struct dmaio_ctx *c, struct plan *pl, struct dmaio_buf **out)
{
	struct dmaio_provider_order o;
	const char *const *order = o.name;
	bool constrained = pl->flags & DMAIO_ALLOC_CONSTRAINTS;
	int n, err = -ENODEV;
	bool udmabuf;

	pthread_mutex_lock(&c->lock);
	/* heap NULL means "any provider": every heap is probed (a one-page allocation each) to learn
	 * which exporter takes RW_FILE; DRM is probed only when reached */
	dmaio_probe_base_locked(c);
	for (int i = 0; i < c->nheaps; i++)
		dmaio_probe_heap_locked(c, &c->heaps[i]);
	udmabuf = c->sys.udmabuf == DMAIO_CAP_YES;
	dmaio_provider_order_locked(c, pl->size, pl->flags, &o);
	pthread_mutex_unlock(&c->lock);
	n = o.n;

	for (int i = 0; i < n; i++) {
		int r = try_provider(c, dmaio_provider_by_name(order[i]), order[i], pl, out);

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
		if (err == -ENODEV && !pl->notes[0])
			note(pl, "no heap here gives%s%s memory (CMA heaps need CONFIG_DMABUF_HEAPS_CMA "
			     "and a CMA area)", pl->flags & DMAIO_ALLOC_CONTIGUOUS ?
			     " physically contiguous" : "",
			     pl->flags & DMAIO_ALLOC_UNCACHED ? " uncached" : "");
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
	note(pl, "no dma-buf provider works here: /dev/dma_heap %s, /dev/udmabuf %s, DRM %s",
	     n > 1 ? "present but refusing" : "empty or absent",
	     udmabuf ? "present" : "absent or not accessible",
	     c->sys.drm == DMAIO_CAP_YES ? "present" : "absent");
	DBG(c, "alloc: no dma-buf provider: /dev/dma_heap is %s, /dev/udmabuf %s, DRM %s. Enable "
	    "CONFIG_DMABUF_HEAPS_SYSTEM or CONFIG_UDMABUF (modprobe udmabuf), install "
	    "udev/60-dmaio.rules for access, or pass DMAIO_ALLOC_ALLOW_NON_DMABUF / heap \"memfd\"",
	    n > 1 ? "present but refusing" : "empty or absent",
	    udmabuf ? "present" : "absent or not accessible",
	    c->sys.drm == DMAIO_CAP_YES ? "present" : "absent");
	return err;
}

/* One named provider. */
static int alloc_named(struct dmaio_ctx *c, const char *heap, struct plan *pl,
		       struct dmaio_buf **out)
{
	const struct dmaio_provider *p = dmaio_provider_by_name(heap);
	int r;

	if (p == &dmaio_provider_memfd && (pl->flags & DMAIO_ALLOC_DMABUF_ONLY)) {
		note(pl, "memfd: not a dma-buf, and DMAIO_ALLOC_DMABUF_ONLY was asked");
		return -EOPNOTSUPP;
	}
	r = try_provider(c, p, heap, pl, out);
	if (r)
		DBG(c, "alloc %zu bytes from %s: %s", pl->size, heap, strerror(-r));
	return r;
}

/* The caller's list, in order; the most telling refusal when none works. */
static int alloc_list(struct dmaio_ctx *c, const char *const *list, struct plan *pl,
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

static int check_flags(uint32_t flags, struct dmaio_reason *why)
{
	if (flags & ~DMAIO_ALLOC_FLAGS_ALL)
		return dmaio_reason_set(why, -EINVAL, "unknown allocation flags 0x%x",
					flags & ~DMAIO_ALLOC_FLAGS_ALL);
	if ((flags & DMAIO_ALLOC_ALLOW_NON_DMABUF) && (flags & DMAIO_ALLOC_DMABUF_ONLY))
		return dmaio_reason_set(why, -EINVAL, "DMAIO_ALLOC_ALLOW_NON_DMABUF and "
					"DMAIO_ALLOC_DMABUF_ONLY contradict each other");
	return 0;
}

/* The caller's options, read into o (zeros when opts is NULL). */
static int read_opts(struct dmaio_alloc_opts *o, const struct dmaio_alloc_opts *opts,
		     struct dmaio_reason *why)
{
	size_t n = 0;
	int r;

	memset(o, 0, sizeof(*o));
	if (!opts)
		return 0;
	r = dmaio_abi_copy_in(o, sizeof(*o), opts, DMAIO_SIZE_ALLOC_OPTS);
	if (r)
		return dmaio_reason_set(why, r, "struct dmaio_alloc_opts: size %u %s", opts->struct_size,
					r == -E2BIG ? "with non-zero bytes this library does not know"
						    : "below its 1.0 size");
	r = check_flags(o->flags, why);
	if (r)
		return r;
	if (o->name && check_label(o->name))
		return dmaio_reason_set(why, -EINVAL, "buffer name \"%.40s\": 1 to %u printable "
					"ASCII bytes", o->name, DMAIO_BUF_NAME_MAX - 1);
	if (o->providers) {
		for (; o->providers[n]; n++) {
			if (n >= DMAIO_ALLOC_PROVIDERS_MAX)
				return dmaio_reason_set(why, -EINVAL, "more than %u providers",
							DMAIO_ALLOC_PROVIDERS_MAX);
			if (check_heap_name(o->providers[n]))
				return dmaio_reason_set(why, -EINVAL, "provider name \"%.63s\": empty, "
							"63 bytes or more, or with '/' or \"..\"",
							o->providers[n]);
		}
		if (!n)
			return dmaio_reason_set(why, -EINVAL, "empty provider list");
	}
	return 0;
}

static int alloc_with(struct dmaio_ctx *ctx, const struct dmaio_alloc_opts *o, struct plan *pl,
		      struct dmaio_buf **buf, struct dmaio_reason *why)
{
	struct dmaio_ctx *c;
	int r;

	c = dmaio_ctx_get(ctx);
	if (!c)
		return -ENOMEM;
	r = o->providers ? alloc_list(c, o->providers, pl, buf) : alloc_best(c, pl, buf);
	if (r)
		dmaio_reason_set(why, r, "cannot allocate %zu bytes: %s", pl->size,
				 pl->notes[0] ? pl->notes : strerror(-r));
	return r;
}

DMAIO_EXPORT int dmaio_buf_alloc(struct dmaio_ctx *ctx, uint64_t size,
				 const struct dmaio_alloc_opts *opts, struct dmaio_buf **buf,
				 struct dmaio_reason *reason)
{
	struct dmaio_alloc_opts o;
	struct plan pl = { .size = (size_t)size };
	int r;

	if (dmaio_reason_check(reason))
		return -EINVAL;
	dmaio_reason_clear(reason);
	if (!buf)
		return dmaio_reason_set(reason, -EINVAL, "no place for the buffer (buf NULL)");
	if (!size)
		return dmaio_reason_set(reason, -EINVAL, "size 0");
	r = read_opts(&o, opts, reason);
	if (r)
		return r;
	if (size > (uint64_t)INT64_MAX || size > SIZE_MAX)
		return dmaio_reason_set(reason, -EOVERFLOW, "size %llu is above INT64_MAX",
					(unsigned long long)size);
	pl.flags = o.flags;
	pl.label = o.name ? o.name : DMAIO_BUF_NAME;
	pl.named = o.name;
	return alloc_with(ctx, &o, &pl, buf, reason);
}

/* The caller's image description, read and checked; why names the field. */
static int read_image(struct dmaio_image_desc *d, const struct dmaio_image_desc *desc,
		      struct dmaio_image_layout *l, struct dmaio_reason *why)
{
	char msg[160];
	int r;

	if (!desc)
		return dmaio_reason_set(why, -EINVAL, "no image description (desc NULL)");
	r = dmaio_abi_copy_in(d, sizeof(*d), desc, DMAIO_SIZE_IMAGE_DESC);
	if (r)
		return dmaio_reason_set(why, r, "struct dmaio_image_desc: size %u %s", desc->struct_size,
					r == -E2BIG ? "with non-zero bytes this library does not know"
						    : "below its 1.0 size");
	r = dmaio_image_compute(d, 0, l, msg, sizeof(msg));
	if (r)
		return dmaio_reason_set(why, r, "%s", msg);
	return 0;
}

DMAIO_EXPORT int dmaio_image_get_layout(const struct dmaio_image_desc *desc,
					struct dmaio_image_layout *layout,
					struct dmaio_reason *reason)
{
	struct dmaio_image_desc d;
	struct dmaio_image_layout l;
	int r;

	if (dmaio_reason_check(reason))
		return -EINVAL;
	dmaio_reason_clear(reason);
	if (dmaio_abi_check_out(layout, DMAIO_SIZE_IMAGE_LAYOUT))
		return dmaio_reason_set(reason, -EINVAL, "layout NULL or its size below the 1.0 "
					"size of struct dmaio_image_layout");
	r = read_image(&d, desc, &l, reason);
	if (!r)
		dmaio_abi_copy_out(layout, &l, sizeof(l));
	return r;
}

DMAIO_EXPORT int dmaio_buf_alloc_image(struct dmaio_ctx *ctx, const struct dmaio_image_desc *desc,
				       const struct dmaio_alloc_opts *opts, struct dmaio_buf **buf,
				       struct dmaio_image_layout *layout,
				       struct dmaio_reason *reason)
{
	struct dmaio_alloc_opts o;
	struct dmaio_image_desc d;
	struct dmaio_image_layout l;
	struct plan pl = { .image_desc = &d, .image = &l };
	int r;

	if (dmaio_reason_check(reason))
		return -EINVAL;
	dmaio_reason_clear(reason);
	if (!buf)
		return dmaio_reason_set(reason, -EINVAL, "no place for the buffer (buf NULL)");
	if (dmaio_abi_check_out(layout, DMAIO_SIZE_IMAGE_LAYOUT))
		return dmaio_reason_set(reason, -EINVAL, "layout NULL or its size below the 1.0 "
					"size of struct dmaio_image_layout");
	r = read_opts(&o, opts, reason);
	if (!r)
		r = read_image(&d, desc, &l, reason);
	if (r)
		return r;
	if (l.total_size > SIZE_MAX)
		return dmaio_reason_set(reason, -EOVERFLOW, "the image needs %llu bytes",
					(unsigned long long)l.total_size);
	pl.size = (size_t)l.total_size;
	pl.flags = o.flags;
	pl.label = o.name ? o.name : DMAIO_BUF_NAME;
	pl.named = o.name;
	r = alloc_with(ctx, &o, &pl, buf, reason);
	if (!r)
		dmaio_abi_copy_out(layout, &l, sizeof(l));
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
