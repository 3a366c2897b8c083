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

static int create_raw(int fd, uint32_t width, uint32_t height, uint32_t bpp, uint32_t *handle,
		      uint32_t *pitch, uint64_t *got)
{
	struct drm_mode_create_dumb c = { .width = width, .height = height, .bpp = bpp };

	if (drmIoctl(fd, DRM_IOCTL_MODE_CREATE_DUMB, &c))
		return neg_errno();
	*handle = c.handle;
	*pitch = c.pitch;
	*got = c.size;
	return 0;
}

/* An image: a dumb buffer in its geometry, as display code asks for one. The first plane's
 * pixels give width and bpp (bpp 8 with a byte width when the first plane is 3 bytes per pixel
 * or the stride was padded); the lines of every plane, counted in first-plane strides, give the
 * height. The pitch the driver returns becomes the first plane's stride and the layout is
 * computed again from it; when the planes then need more lines than the buffer has, the dumb
 * buffer is made again with that many lines. */
static int dumb_create_image(int fd, const struct dmaio_alloc_req *req, uint32_t *handle,
			     uint64_t *got)
{
	const struct dmaio_image_desc *d = req->image_desc;
	struct dmaio_image_layout *l = req->image;
	unsigned cpp = dmaio_image_cpp0(d->fourcc);
	uint32_t stride = l->strides[0], pitch, width, bpp;
	uint64_t lines = (l->total_size + stride - 1) / stride;
	int r;

	if (cpp && (cpp == 1 || cpp == 2 || cpp == 4) && stride == (uint64_t)d->width * cpp) {
		width = d->width;
		bpp = cpp * 8;
	} else {
		width = stride;
		bpp = 8;
	}
	for (int attempt = 0; attempt < 2; attempt++) {
		struct dmaio_image_layout nl;

		if (lines > UINT32_MAX)
			return -EFBIG;
		r = create_raw(fd, width, (uint32_t)lines, bpp, handle, &pitch, got);
		if (r)
			return r;
		r = dmaio_image_compute(d, pitch, &nl, NULL, 0);
		if (r) {
			dumb_destroy(fd, *handle);
			return r;
		}
		if (nl.strides[0] != pitch) {
			/* a pitch the format's plane strides cannot be derived from */
			dumb_destroy(fd, *handle);
			return -EOPNOTSUPP;
		}
		if (nl.total_size <= *got) {
			*l = nl;
			return 0;
		}
		dumb_destroy(fd, *handle);
		lines = (nl.total_size + pitch - 1) / pitch;
	}
	return -EOPNOTSUPP;
}

static int drm_alloc(struct dmaio_ctx *ctx, const struct dmaio_alloc_req *req, struct dmaio_buf *b)
{
	uint32_t handle;
	uint64_t got;
	int fd, pfd, r;

	pthread_mutex_lock(&ctx->lock);
	fd = ctx->drm_fd; /* found by the probe the API ran first */
	pthread_mutex_unlock(&ctx->lock);
	if (fd < 0)
		return -ENOENT;
	if (req->image)
		r = dumb_create_image(fd, req, &handle, &got);
	else
		r = dumb_create(fd, req->size, &handle, &got);
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

static int drm_alloc(struct dmaio_ctx *ctx, const struct dmaio_alloc_req *req, struct dmaio_buf *b)
{
	(void)ctx;
	(void)req;
	(void)b;
	return -ENOENT; /* built without libdrm */
}
#endif

const struct dmaio_provider dmaio_provider_drm = {
	.name = "drm",
	.kind = DMAIO_BUF_DRM,
	.alloc = drm_alloc,
};
