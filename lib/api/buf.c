/* SPDX-License-Identifier: MIT */
/* Buffers: import, free, accessors, CPU mapping and sync. */
#include <fcntl.h>
#include <linux/dma-buf.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/statfs.h>
#include <unistd.h>

#include "api.h"
#include "../engine/engine.h"
#include "../probe/probe.h"
#include "../providers/provider.h"
#include "../sys/sys.h"

#define DMA_BUF_MAGIC_FS 0x444d4142u /* "DMAB": the dma-buf pseudo filesystem */

DMAIO_EXPORT int dmaio_buf_import(struct dmaio_ctx *ctx, int dmabuf_fd, uint32_t flags,
			      struct dmaio_buf **buf)
{
	struct dmaio_ctx *c;
	struct dmaio_buf *b;
	struct statfs sfs;
	off_t size;
	int fd;

	if (!buf || flags)
		return -EINVAL;
	if (dmabuf_fd < 0 || fcntl(dmabuf_fd, F_GETFD) < 0)
		return -EBADF;
	if (fstatfs(dmabuf_fd, &sfs) || (uint32_t)sfs.f_type != DMA_BUF_MAGIC_FS)
		return -ENOTTY;
	size = lseek(dmabuf_fd, 0, SEEK_END); /* dma-bufs report their size this way */
	if (size <= 0)
		return size < 0 ? neg_errno() : -EINVAL;
	c = dmaio_ctx_get(ctx);
	if (!c)
		return -ENOMEM;
	b = calloc(1, sizeof(*b));
	if (!b)
		return -ENOMEM;
	fd = fcntl(dmabuf_fd, F_DUPFD_CLOEXEC, 3);
	if (fd < 0 || pthread_mutex_init(&b->lock, NULL)) {
		int err = fd < 0 ? neg_errno() : -ENOMEM;

		if (fd >= 0)
			close(fd);
		free(b);
		return err;
	}
	b->ctx = c;
	b->kind = DMAIO_BUF_IMPORTED;
	b->fd = fd;
	b->memfd = -1;
	b->size = b->alloc_size = (size_t)size;
	b->stats.last_path = DMAIO_PATH_AUTO;
	strcpy(b->provider, "import");
	/* probed here, at the edge: whether the CPU can map it (a trial mapping, dropped), so
	 * that the paths through a mapping refuse an exporter without one before they start, and
	 * whether the exporter can revoke it (the paths then touch its mapping through the
	 * kernel only) */
	dmaio_buf_probe_import(b);
	dmaio_buf_register(c, b);
	*buf = b;
	return 0;
}

DMAIO_EXPORT void dmaio_buf_free(struct dmaio_buf *buf)
{
	struct dmaio_ctx *c;

	if (!buf)
		return;
	c = buf->ctx;
	dmaio_ctx_remove_buf(c, buf);
	dmaio_engines_forget_buf(c, buf->id);
	dmaio_buf_unmap_final(buf, buf->addr);
	if (buf->memfd >= 0 && buf->memfd != buf->fd)
		close(buf->memfd);
	if (buf->fd >= 0)
		close(buf->fd);
	pthread_mutex_lock(&c->io_lock);
	c->nbufs--; /* its counters are in the context's already (added per call) */
	pthread_mutex_unlock(&c->io_lock);
	pthread_mutex_destroy(&buf->lock);
	memset(buf, 0, sizeof(*buf));
	buf->fd = buf->memfd = -1;
	free(buf);
}

DMAIO_EXPORT int dmaio_buf_fd(const struct dmaio_buf *buf)
{
	return buf ? buf->fd : -EINVAL;
}

DMAIO_EXPORT int64_t dmaio_buf_size(const struct dmaio_buf *buf)
{
	return buf ? (int64_t)buf->size : -EINVAL;
}

DMAIO_EXPORT int dmaio_buf_kind(const struct dmaio_buf *buf)
{
	return buf ? buf->kind : -EINVAL;
}

DMAIO_EXPORT const char *dmaio_buf_provider(const struct dmaio_buf *buf)
{
	return buf ? buf->provider : NULL;
}

DMAIO_EXPORT int dmaio_buf_get_info(struct dmaio_buf *buf, struct dmaio_buf_info *info)
{
	struct dmaio_buf_info in = { .struct_size = sizeof(in) };

	if (!buf || dmaio_abi_check_out(info, DMAIO_SIZE_BUF_INFO))
		return -EINVAL;
	dmaio_buf_probe_info(buf, &in);
	dmaio_abi_copy_out(info, &in, sizeof(in));
	return 0;
}

DMAIO_EXPORT int dmaio_buf_map(struct dmaio_buf *buf, void **addr)
{
	if (!buf || !addr)
		return -EINVAL;
	return dmaio_buf_map_user(buf, addr);
}

DMAIO_EXPORT int dmaio_buf_unmap(struct dmaio_buf *buf)
{
	void *old;
	int r;

	if (!buf)
		return -EINVAL;
	r = dmaio_buf_unmap_user(buf, &old);
	if (r || !old)
		return r; /* not mapped, or a request of another thread uses the mapping */
	/* registrations point at the old address */
	dmaio_engines_forget_buf(buf->ctx, buf->id);
	dmaio_buf_unmap_final(buf, old);
	return 0;
}

static int sync_common(struct dmaio_buf *buf, unsigned dir, uint64_t when)
{
	uint64_t f = 0;

	if (!buf || !dir || (dir & ~DMAIO_SYNC_RW))
		return -EINVAL;
	if (!dmaio_buf_is_dmabuf(buf))
		return 0;
	if (dir & DMAIO_SYNC_READ)
		f |= DMA_BUF_SYNC_READ;
	if (dir & DMAIO_SYNC_WRITE)
		f |= DMA_BUF_SYNC_WRITE;
	return dmaio_sync_ioctl(buf->fd, f | when);
}

DMAIO_EXPORT int dmaio_buf_sync_begin(struct dmaio_buf *buf, uint32_t dir)
{
	return sync_common(buf, dir, DMA_BUF_SYNC_START);
}

DMAIO_EXPORT int dmaio_buf_sync_end(struct dmaio_buf *buf, uint32_t dir)
{
	return sync_common(buf, dir, DMA_BUF_SYNC_END);
}

DMAIO_EXPORT int dmaio_buf_get_stats(const struct dmaio_buf *buf, struct dmaio_stats *st)
{
	struct dmaio_buf *b = (struct dmaio_buf *)buf;

	if (!buf || dmaio_abi_check_out(st, DMAIO_SIZE_STATS))
		return -EINVAL;
	pthread_mutex_lock(&b->lock);
	dmaio_abi_copy_out(st, &b->stats, sizeof(b->stats));
	pthread_mutex_unlock(&b->lock);
	return 0;
}
