/* SPDX-License-Identifier: MIT */
/*
 * Image layouts: DRM fourcc formats (the codes come from libdrm's drm_fourcc.h) described by
 * planes, bytes per pixel and subsampling, laid out in one buffer as V4L2 lays out its
 * single-buffer formats (v4l2_fill_pixfmt): the first plane's stride is width x bytes per
 * pixel, every later plane's stride is the first's scaled by its bytes per pixel and its
 * horizontal subsampling, planes back to back. Alignment of strides and plane offsets on top.
 */
#include <string.h>

#include "provider.h"
#include "../sys/sys.h"

#ifdef DMAIO_HAVE_DRM
#include <drm_fourcc.h>

/* cpp: bytes per pixel of each plane (per pixel pair for the packed 4:2:2 formats, whose
 * "pixel" is a 2-pixel macropixel of 4 bytes: cpp 2, hsub 2 of the whole image). */
struct dmaio_format {
	uint32_t fourcc;
	uint8_t planes;
	uint8_t cpp[DMAIO_IMAGE_MAX_PLANES];
	uint8_t hsub; /* chroma horizontal subsampling (planes 1..), or the macropixel width */
	uint8_t vsub; /* chroma vertical subsampling (planes 1..) */
};

static const struct dmaio_format formats[] = {
	/* semi-planar YUV: Y plane, interleaved CbCr plane */
	{ DRM_FORMAT_NV12, 2, { 1, 2 }, 2, 2 },
	{ DRM_FORMAT_NV21, 2, { 1, 2 }, 2, 2 },
	{ DRM_FORMAT_NV16, 2, { 1, 2 }, 2, 1 },
	{ DRM_FORMAT_NV61, 2, { 1, 2 }, 2, 1 },
	{ DRM_FORMAT_NV24, 2, { 1, 2 }, 1, 1 },
	{ DRM_FORMAT_NV42, 2, { 1, 2 }, 1, 1 },
	{ DRM_FORMAT_P010, 2, { 2, 4 }, 2, 2 },
	{ DRM_FORMAT_P210, 2, { 2, 4 }, 2, 1 },
	/* planar YUV: Y, Cb, Cr planes */
	{ DRM_FORMAT_YUV420, 3, { 1, 1, 1 }, 2, 2 },
	{ DRM_FORMAT_YVU420, 3, { 1, 1, 1 }, 2, 2 },
	{ DRM_FORMAT_YUV422, 3, { 1, 1, 1 }, 2, 1 },
	{ DRM_FORMAT_YUV444, 3, { 1, 1, 1 }, 1, 1 },
	/* packed YUV 4:2:2: 4 bytes per 2 pixels, width even */
	{ DRM_FORMAT_YUYV, 1, { 2 }, 2, 1 },
	{ DRM_FORMAT_YVYU, 1, { 2 }, 2, 1 },
	{ DRM_FORMAT_UYVY, 1, { 2 }, 2, 1 },
	{ DRM_FORMAT_VYUY, 1, { 2 }, 2, 1 },
	/* RGB */
	{ DRM_FORMAT_RGB565, 1, { 2 }, 1, 1 },
	{ DRM_FORMAT_BGR565, 1, { 2 }, 1, 1 },
	{ DRM_FORMAT_RGB888, 1, { 3 }, 1, 1 },
	{ DRM_FORMAT_BGR888, 1, { 3 }, 1, 1 },
	{ DRM_FORMAT_XRGB8888, 1, { 4 }, 1, 1 },
	{ DRM_FORMAT_XBGR8888, 1, { 4 }, 1, 1 },
	{ DRM_FORMAT_RGBX8888, 1, { 4 }, 1, 1 },
	{ DRM_FORMAT_BGRX8888, 1, { 4 }, 1, 1 },
	{ DRM_FORMAT_ARGB8888, 1, { 4 }, 1, 1 },
	{ DRM_FORMAT_ABGR8888, 1, { 4 }, 1, 1 },
	{ DRM_FORMAT_RGBA8888, 1, { 4 }, 1, 1 },
	{ DRM_FORMAT_BGRA8888, 1, { 4 }, 1, 1 },
	{ DRM_FORMAT_XRGB2101010, 1, { 4 }, 1, 1 },
	{ DRM_FORMAT_ARGB2101010, 1, { 4 }, 1, 1 },
	/* grey / single channel */
	{ DRM_FORMAT_R8, 1, { 1 }, 1, 1 },
	{ DRM_FORMAT_R16, 1, { 2 }, 1, 1 },
	{ DRM_FORMAT_GR88, 1, { 2 }, 1, 1 },
};

static const struct dmaio_format *find_format(uint32_t fourcc)
{
	for (size_t i = 0; i < ARRAY_SIZE(formats); i++)
		if (formats[i].fourcc == fourcc)
			return &formats[i];
	return NULL;
}

static uint64_t gcd_u64(uint64_t a, uint64_t b)
{
	while (b) {
		uint64_t t = a % b;

		a = b;
		b = t;
	}
	return a;
}

static uint64_t lcm_u64(uint64_t a, uint64_t b)
{
	return a / gcd_u64(a, b) * b;
}

static bool align_ok(uint32_t a, uint32_t max)
{
	return a <= 1 || (!(a & (a - 1)) && a <= max);
}

int dmaio_image_check(const struct dmaio_image_desc *d)
{
	const struct dmaio_format *f;

	for (size_t i = 0; i < ARRAY_SIZE(d->reserved); i++)
		if (d->reserved[i])
			return -EINVAL;
	if (!d->width || !d->height || d->flags)
		return -EINVAL;
	if (!align_ok(d->stride_align, 4096) || !align_ok(d->plane_align, 1u << 20))
		return -EINVAL;
	f = find_format(d->fourcc);
	if (!f)
		return -EOPNOTSUPP;
	if (d->modifier != DRM_FORMAT_MOD_LINEAR)
		return -EPROTONOSUPPORT;
	if (d->width % f->hsub || (f->planes > 1 && d->height % f->vsub))
		return -EDOM;
	return 0;
}

int dmaio_image_compute(const struct dmaio_image_desc *d, uint32_t min_stride,
			struct dmaio_image_layout *l)
{
	const struct dmaio_format *f;
	uint64_t sa = d->stride_align > 1 ? d->stride_align : 1;
	uint64_t pa = d->plane_align > 1 ? d->plane_align : 1;
	uint64_t unit = sa, stride0, off = 0;
	int r = dmaio_image_check(d);

	if (r)
		return r;
	f = find_format(d->fourcc);
	/* plane i's stride is stride0 * cpp[i] / (cpp[0] * hsub): stride0 must make that exact
	 * and, with stride_align, a multiple of the alignment for every plane */
	for (unsigned i = 1; i < f->planes; i++) {
		uint64_t div = (uint64_t)f->cpp[0] * f->hsub;
		uint64_t m = div / gcd_u64(f->cpp[i], div);

		unit = lcm_u64(unit, sa * m);
	}
	stride0 = MAX((uint64_t)d->width * f->cpp[0], (uint64_t)min_stride);
	stride0 = round_up_u64(stride0, unit);
	if (stride0 > UINT32_MAX)
		return -EOVERFLOW;
	memset(l, 0, sizeof(*l));
	l->fourcc = d->fourcc;
	l->width = d->width;
	l->height = d->height;
	l->num_planes = f->planes;
	l->modifier = DRM_FORMAT_MOD_LINEAR;
	for (unsigned i = 0; i < f->planes; i++) {
		uint64_t stride = i ? stride0 * f->cpp[i] / ((uint64_t)f->cpp[0] * f->hsub) : stride0;
		uint64_t lines = i ? d->height / f->vsub : d->height;
		uint64_t size = stride * lines; /* < 2^32 * 2^32: no overflow in 64 bits */

		off = round_up_u64(off, pa);
		if (size > (uint64_t)INT64_MAX - off)
			return -EOVERFLOW;
		l->planes[i].offset = off;
		l->planes[i].size = size;
		l->planes[i].stride = (uint32_t)stride;
		off += size;
	}
	l->size = off;
	return 0;
}

unsigned dmaio_image_cpp0(uint32_t fourcc)
{
	const struct dmaio_format *f = find_format(fourcc);

	return f ? f->cpp[0] : 0;
}
#else
int dmaio_image_check(const struct dmaio_image_desc *d)
{
	(void)d;
	return -EOPNOTSUPP; /* built without libdrm: no drm_fourcc.h */
}

int dmaio_image_compute(const struct dmaio_image_desc *d, uint32_t min_stride,
			struct dmaio_image_layout *l)
{
	(void)d;
	(void)min_stride;
	(void)l;
	return -EOPNOTSUPP;
}

unsigned dmaio_image_cpp0(uint32_t fourcc)
{
	(void)fourcc;
	return 0;
}
#endif
