/* SPDX-License-Identifier: MIT */
/* Provider "drm": a dumb buffer on a DRM node, exported as a dma-buf with PRIME (libdrm). */
#include <dirent.h>
#include <fcntl.h>
#include <string.h>
#include <unistd.h>

#include "provider.h"
#include "../sys/sys.h"

#ifdef DMAIO_HAVE_DRM
#include <xf86drm.h>
#include <drm_mode.h>

/* A dumb buffer of at least size bytes: rows of 16 KiB (4096 px x 32 bpp), wider rows when the
 * height would pass 8192 (a common mode_config limit). */
static int dumb_create(int fd, uint64_t size, uint32_t *handle, uint64_t *got)
{
	static const uint32_t widths[] = { 4096, 8192, 16384 };

	for (size_t i = 0; i < ARRAY_SIZE(widths); i++) {
		struct drm_mode_create_dumb c = { 0 };
		uint64_t row = (uint64_t)widths[i] * 4;
		uint64_t h = (size + row - 1) / row;

		if (h > 8192 && i + 1 < ARRAY_SIZE(widths))
			continue;
		if (h > UINT32_MAX)
			return -EFBIG;
		c.width = widths[i];
		c.height = (uint32_t)(h ? h : 1);
		c.bpp = 32;
		if (drmIoctl(fd, DRM_IOCTL_MODE_CREATE_DUMB, &c))
			return neg_errno();
		*handle = c.handle;
		*got = c.size;
		return 0;
	}
	return -EFBIG;
}

static void dumb_destroy(int fd, uint32_t handle)
{
	struct drm_mode_destroy_dumb d = { .handle = handle };

	drmIoctl(fd, DRM_IOCTL_MODE_DESTROY_DUMB, &d);
}

/* Try every /dev/dri node: the first that makes and exports a one-page dumb buffer wins. */
int dmaio_drm_find_node(char *node, size_t node_len)
{
	struct dirent *de;
	int found = -ENOENT;
	DIR *d;

	d = opendir("/dev/dri");
	if (!d)
		return -ENOENT;
	while ((de = readdir(d))) {
		char path[300];
		uint32_t handle;
		uint64_t got;
		int fd, pfd;

		if (strncmp(de->d_name, "card", 4) && strncmp(de->d_name, "renderD", 7))
			continue;
		snprintf(path, sizeof(path), "/dev/dri/%s", de->d_name);
		fd = sys_open(path, O_RDWR, 0);
		if (fd < 0)
			continue;
		if (dumb_create(fd, (uint64_t)dmaio_page_size(), &handle, &got)) {
			close(fd);
			continue;
		}
		if (drmPrimeHandleToFD(fd, handle, DRM_CLOEXEC | DRM_RDWR, &pfd)) {
			dumb_destroy(fd, handle);
			close(fd);
			continue;
		}
		close(pfd);
		dumb_destroy(fd, handle);
		snprintf(node, node_len, "%.31s", path);
		found = fd;
		break;
	}
	closedir(d);
	return found;
}

static int drm_alloc(struct dmaio_ctx *ctx, const char *name, size_t size, struct dmaio_buf *b)
{
	uint32_t handle;
	uint64_t got;
	int fd, pfd, r;

	(void)name;
	pthread_mutex_lock(&ctx->lock);
	fd = ctx->drm_fd; /* found by the probe the API ran first */
	pthread_mutex_unlock(&ctx->lock);
	if (fd < 0)
		return -ENOENT;
	r = dumb_create(fd, size, &handle, &got);
	if (r)
		return r;
	r = drmPrimeHandleToFD(fd, handle, DRM_CLOEXEC | DRM_RDWR, &pfd);
	if (r) {
		r = r < 0 && r != -1 ? r : neg_errno();
		dumb_destroy(fd, handle);
		return r;
	}
	/* the dma-buf holds its own reference on the object: the handle is not needed */
	dumb_destroy(fd, handle);
	b->fd = pfd;
	b->alloc_size = (size_t)got;
	return 0;
}
#else
int dmaio_drm_find_node(char *node, size_t node_len)
{
	(void)node;
	(void)node_len;
	return -EOPNOTSUPP;
}

static int drm_alloc(struct dmaio_ctx *ctx, const char *name, size_t size, struct dmaio_buf *b)
{
	(void)ctx;
	(void)name;
	(void)size;
	(void)b;
	return -ENOENT; /* built without libdrm */
}
#endif

const struct dmaio_provider dmaio_provider_drm = {
	.name = "drm",
	.kind = DMAIO_BUF_DRM,
	.alloc = drm_alloc,
};
