/* SPDX-License-Identifier: MIT */
/* CPU access to a buffer: one mapping per buffer (the memfd's when there is one: same pages, and
 * O_DIRECT works on it; else the dma-buf's), made on first need and kept until unmap or free,
 * shared by the caller (dmaio_buf_map) and the requests that copy through it; DMA_BUF_IOCTL_SYNC. */
#include <linux/dma-buf.h>
#include <sys/mman.h>

#include "provider.h"
#include "../sys/sys.h"

/* A new mapping of the whole buffer into *p, or the refusal. An exporter without mmap (-EINVAL:
 * no .mmap op, as VFIO's BAR dma-bufs on mainline 7.3) or one that refuses write access
 * (-EACCES) refuses for good: remembered as -ENODEV, so the paths through the mapping say so
 * before they start (no mmap per request) and nobody tries again. Anything else (-ENOMEM) may
 * pass; so does -ENXIO, revocable memory revoked now. Under b->lock. */
static int new_mapping_locked(struct dmaio_buf *b, void **p)
{
	int err = b->map_err;

	if (!err)
		err = sys_mmap(b->alloc_size, PROT_READ | PROT_WRITE, MAP_SHARED,
			       b->memfd >= 0 ? b->memfd : b->fd, 0, p);
	/* device memory that mapped before and now refuses is revoked (VFIO's mmap series:
	 * -ENODEV while revoked): gone for now, perhaps back later, not remembered. One that never
	 * mapped refuses for good (mainline 7.3's VFIO dma-bufs: no mmap at all, also -ENODEV) */
	if (err == -ENODEV && b->revocable && b->mapped_once)
		return -ENXIO;
	if (!err)
		b->mapped_once = true;
	if (err == -EINVAL || err == -EACCES || err == -ENODEV) {
		__atomic_store_n(&b->map_err, -ENODEV, __ATOMIC_RELAXED);
		return -ENODEV;
	}
	return err;
}

static int map_locked(struct dmaio_buf *b)
{
	void *p;
	int err;

	if (b->addr)
		return 0;
	err = new_mapping_locked(b, &p);
	if (!err)
		b->addr = p;
	return err;
}

int dmaio_buf_probe_map(struct dmaio_buf *b)
{
	void *p;
	int err = 0;

	pthread_mutex_lock(&b->lock);
	if (!b->addr) {
		err = new_mapping_locked(b, &p);
		if (!err)
			munmap(p, b->alloc_size);
	}
	pthread_mutex_unlock(&b->lock);
	return err;
}

int dmaio_buf_get_addr(struct dmaio_buf *b, char **addr)
{
	int r;

	pthread_mutex_lock(&b->lock);
	r = map_locked(b);
	if (!r) {
		b->io_refs++;
		*addr = b->addr;
	}
	pthread_mutex_unlock(&b->lock);
	return r;
}

void dmaio_buf_put_addr(struct dmaio_buf *b)
{
	pthread_mutex_lock(&b->lock);
	b->io_refs--;
	pthread_mutex_unlock(&b->lock);
}

int dmaio_buf_map_user(struct dmaio_buf *b, void **addr)
{
	int r;

	pthread_mutex_lock(&b->lock);
	r = map_locked(b);
	if (!r) {
		b->user_mapped = true;
		*addr = b->addr;
	}
	pthread_mutex_unlock(&b->lock);
	return r;
}

/* 0 with *old the mapping to drop (NULL when requests still use it), -ENOENT when not mapped */
int dmaio_buf_unmap_user(struct dmaio_buf *b, void **old)
{
	*old = NULL;
	pthread_mutex_lock(&b->lock);
	if (!b->user_mapped) {
		pthread_mutex_unlock(&b->lock);
		return -ENOENT;
	}
	b->user_mapped = false;
	if (!b->io_refs) {
		*old = b->addr;
		b->addr = NULL;
	}
	pthread_mutex_unlock(&b->lock);
	return 0;
}

void dmaio_buf_unmap_final(struct dmaio_buf *b, void *addr)
{
	if (addr)
		munmap(addr, b->alloc_size);
}

int dmaio_sync_ioctl(int fd, uint64_t flags)
{
	struct dma_buf_sync s = { .flags = flags };
	int r = sys_ioctl(fd, DMA_BUF_IOCTL_SYNC, &s);

	return r < 0 ? r : 0;
}
