/* SPDX-License-Identifier: MIT */
/*
 * Image layouts: DRM fourcc formats (the codes of the kernel's drm_fourcc.h, written with
 * DMAIO_FOURCC so that no libdrm is needed) described by
 * planes, bytes per pixel and subsampling, laid out in one buffer as V4L2 lays out its
 * single-buffer formats (v4l2_fill_pixfmt): the first plane's stride is width x bytes per
 * pixel, every later plane's stride is the first's scaled by its bytes per pixel and its
 * horizontal subsampling, planes back to back. Alignment of strides and plane offsets on top.
 */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "provider.h"
#include "../sys/sys.h"

/* cpp: bytes per pixel of each plane (per pixel pair for the packed 4:2:2 formats, whose
 * "pixel" is a 2-pixel macropixel of 4 bytes: cpp 2, hsub 2 of the whole image). */
struct dmaio_format {
	uint32_t fourcc;
	const char *name;
	uint8_t planes;
	uint8_t cpp[DMAIO_IMAGE_MAX_PLANES];
	uint8_t hsub; /* chroma horizontal subsampling (planes 1..), or the macropixel width */
	uint8_t vsub; /* chroma vertical subsampling (planes 1..) */
};

static const struct dmaio_format formats[] = {
	/* semi-planar YUV: Y plane, interleaved CbCr plane */
	{ DMAIO_FOURCC('N', 'V', '1', '2'), "NV12", 2, { 1, 2 }, 2, 2 },
	{ DMAIO_FOURCC('N', 'V', '2', '1'), "NV21", 2, { 1, 2 }, 2, 2 },
	{ DMAIO_FOURCC('N', 'V', '1', '6'), "NV16", 2, { 1, 2 }, 2, 1 },
	{ DMAIO_FOURCC('N', 'V', '6', '1'), "NV61", 2, { 1, 2 }, 2, 1 },
	{ DMAIO_FOURCC('N', 'V', '2', '4'), "NV24", 2, { 1, 2 }, 1, 1 },
	{ DMAIO_FOURCC('N', 'V', '4', '2'), "NV42", 2, { 1, 2 }, 1, 1 },
	{ DMAIO_FOURCC('P', '0', '1', '0'), "P010", 2, { 2, 4 }, 2, 2 },
	{ DMAIO_FOURCC('P', '2', '1', '0'), "P210", 2, { 2, 4 }, 2, 1 },
	/* planar YUV: Y, Cb, Cr planes */
	{ DMAIO_FOURCC('Y', 'U', '1', '2'), "YUV420", 3, { 1, 1, 1 }, 2, 2 },
	{ DMAIO_FOURCC('Y', 'V', '1', '2'), "YVU420", 3, { 1, 1, 1 }, 2, 2 },
	{ DMAIO_FOURCC('Y', 'U', '1', '6'), "YUV422", 3, { 1, 1, 1 }, 2, 1 },
	{ DMAIO_FOURCC('Y', 'U', '2', '4'), "YUV444", 3, { 1, 1, 1 }, 1, 1 },
	/* packed YUV 4:2:2: 4 bytes per 2 pixels, width even */
	{ DMAIO_FOURCC('Y', 'U', 'Y', 'V'), "YUYV", 1, { 2 }, 2, 1 },
	{ DMAIO_FOURCC('Y', 'V', 'Y', 'U'), "YVYU", 1, { 2 }, 2, 1 },
	{ DMAIO_FOURCC('U', 'Y', 'V', 'Y'), "UYVY", 1, { 2 }, 2, 1 },
	{ DMAIO_FOURCC('V', 'Y', 'U', 'Y'), "VYUY", 1, { 2 }, 2, 1 },
	/* RGB */
	{ DMAIO_FOURCC('R', 'G', '1', '6'), "RGB565", 1, { 2 }, 1, 1 },
	{ DMAIO_FOURCC('B', 'G', '1', '6'), "BGR565", 1, { 2 }, 1, 1 },
	{ DMAIO_FOURCC('R', 'G', '2', '4'), "RGB888", 1, { 3 }, 1, 1 },
	{ DMAIO_FOURCC('B', 'G', '2', '4'), "BGR888", 1, { 3 }, 1, 1 },
	{ DMAIO_FOURCC('X', 'R', '2', '4'), "XRGB8888", 1, { 4 }, 1, 1 },
	{ DMAIO_FOURCC('X', 'B', '2', '4'), "XBGR8888", 1, { 4 }, 1, 1 },
	{ DMAIO_FOURCC('R', 'X', '2', '4'), "RGBX8888", 1, { 4 }, 1, 1 },
	{ DMAIO_FOURCC('B', 'X', '2', '4'), "BGRX8888", 1, { 4 }, 1, 1 },
	{ DMAIO_FOURCC('A', 'R', '2', '4'), "ARGB8888", 1, { 4 }, 1, 1 },
	{ DMAIO_FOURCC('A', 'B', '2', '4'), "ABGR8888", 1, { 4 }, 1, 1 },
	{ DMAIO_FOURCC('R', 'A', '2', '4'), "RGBA8888", 1, { 4 }, 1, 1 },
	{ DMAIO_FOURCC('B', 'A', '2', '4'), "BGRA8888", 1, { 4 }, 1, 1 },
	{ DMAIO_FOURCC('X', 'R', '3', '0'), "XRGB2101010", 1, { 4 }, 1, 1 },
	{ DMAIO_FOURCC('A', 'R', '3', '0'), "ARGB2101010", 1, { 4 }, 1, 1 },
	/* grey / single channel */
	{ DMAIO_FOURCC('R', '8', ' ', ' '), "R8", 1, { 1 }, 1, 1 },
	{ DMAIO_FOURCC('R', '1', '6', ' '), "R16", 1, { 2 }, 1, 1 },
	{ DMAIO_FOURCC('G', 'R', '8', '8'), "GR88", 1, { 2 }, 1, 1 },
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

/* Each refusal says which field is wrong and why, into msg. */
__attribute__((format(printf, 4, 5)))
static int refuse(char *msg, size_t len, int err, const char *fmt, ...)
{
	va_list ap;

	if (msg && len) {
		va_start(ap, fmt);
		vsnprintf(msg, len, fmt, ap);
		va_end(ap);
	}
	return err;
}

static const char *fourcc_str(uint32_t c, char s[5])
{
	for (int i = 0; i < 4; i++) {
		char ch = (char)(c >> (8 * i));

		s[i] = ch >= 0x20 && ch < 0x7f ? ch : '?';
	}
	s[4] = 0;
	return s;
}

int dmaio_image_check(const struct dmaio_image_desc *d, char *msg, size_t len)
{
	const struct dmaio_format *f;
	char cc[5];

	if (d->flags || d->pad0)
		return refuse(msg, len, -EINVAL, "image %s 0x%x: must be 0", d->flags ? "flags" : "pad0",
			      d->flags ? d->flags : d->pad0);
	if (!d->width || !d->height)
		return refuse(msg, len, -EINVAL, "image %s 0", !d->width ? "width" : "height");
	if (!align_ok(d->stride_align, 4096))
		return refuse(msg, len, -EINVAL, "stride_align %u: not 0, 1 or a power of two up to "
			      "4096", d->stride_align);
	if (!align_ok(d->plane_align, 1u << 20))
		return refuse(msg, len, -EINVAL, "plane_align %u: not 0, 1 or a power of two up to "
			      "1 MiB", d->plane_align);
	f = find_format(d->fourcc);
	if (!f)
		return refuse(msg, len, -EOPNOTSUPP, "fourcc 0x%08x ('%s'): not a format this "
			      "library lays out", d->fourcc, fourcc_str(d->fourcc, cc));
	if (d->modifier != DMAIO_MOD_LINEAR)
		return refuse(msg, len, -EPROTONOSUPPORT, "modifier 0x%llx: only "
			      "DRM_FORMAT_MOD_LINEAR (0) is supported",
			      (unsigned long long)d->modifier);
	if (d->width % f->hsub)
		return refuse(msg, len, -EDOM, "%s: width %u is not a multiple of %u", f->name,
			      d->width, f->hsub);
	if (f->planes > 1 && d->height % f->vsub)
		return refuse(msg, len, -EDOM, "%s: height %u is not a multiple of %u", f->name,
			      d->height, f->vsub);
	return 0;
}

int dmaio_image_compute(const struct dmaio_image_desc *d, uint32_t min_stride,
			struct dmaio_image_layout *l, char *msg, size_t len)
{
	const struct dmaio_format *f;
	uint64_t sa = d->stride_align > 1 ? d->stride_align : 1;
	uint64_t pa = d->plane_align > 1 ? d->plane_align : 1;
	uint64_t unit = sa, stride0, off = 0;
	int r = dmaio_image_check(d, msg, len);

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
		return refuse(msg, len, -EOVERFLOW, "%s: width %u gives a stride of %llu bytes, past "
			      "32 bits", f->name, d->width, (unsigned long long)stride0);
	memset(l, 0, sizeof(*l));
	l->struct_size = sizeof(*l);
	l->fourcc = d->fourcc;
	l->width = d->width;
	l->height = d->height;
	l->num_planes = f->planes;
	l->modifier = DMAIO_MOD_LINEAR;
	for (unsigned i = 0; i < f->planes; i++) {
		uint64_t stride = i ? stride0 * f->cpp[i] / ((uint64_t)f->cpp[0] * f->hsub) : stride0;
		uint64_t lines = i ? d->height / f->vsub : d->height;
		uint64_t size;

		/* a derived stride can be wider than the first (NV24's chroma: twice) */
		if (stride > UINT32_MAX)
			return refuse(msg, len, -EOVERFLOW, "%s: width %u gives plane %u a stride of "
				      "%llu bytes, past 32 bits", f->name, d->width, i,
				      (unsigned long long)stride);
		size = stride * lines; /* < 2^32 * 2^32: no overflow in 64 bits */
		off = round_up_u64(off, pa);
		if (size > (uint64_t)INT64_MAX - off)
			return refuse(msg, len, -EOVERFLOW, "%s %ux%u: plane %u ends past 63 bits",
				      f->name, d->width, d->height, i);
		l->offsets[i] = off;
		l->plane_sizes[i] = size;
		l->strides[i] = (uint32_t)stride;
		off += size;
	}
	l->total_size = off;
	return 0;
}

unsigned dmaio_image_cpp0(uint32_t fourcc)
{
	const struct dmaio_format *f = find_format(fourcc);

	return f ? f->cpp[0] : 0;
}
