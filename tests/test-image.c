/* SPDX-License-Identifier: MIT */
/*
 * Image buffers and allocation options (dmaio_image_get_layout, dmaio_buf_alloc_image,
 * dmaio_buf_alloc, dmaio_buf_set_name):
 *  - layouts of every supported format against values worked out by hand from V4L2's rules
 *    (bytesperline and sizeimage of the single-buffer formats), with and without alignment;
 *  - the DMAIO_FOURCC() code of every supported format is libdrm's DRM_FORMAT_* code;
 *  - invariants of every format over a sweep of sizes and alignments (planes inside the buffer,
 *    in order, aligned, strides derived as V4L2 derives them, nothing wasted beyond alignment);
 *  - bad geometry refused with its own errno, a reason naming the field, and nothing allocated;
 *    the struct_size rules of struct dmaio_image_desc, dmaio_image_layout and dmaio_alloc_opts
 *    (below the 1.0 size -EINVAL, larger with unknown non-zero bytes -E2BIG, with zeros
 *    accepted);
 *  - with --heap H: an image buffer of every format from H, each plane filled through the
 *    mapping, written to a file through the library and compared byte by byte; names visible in
 *    /proc/self/fdinfo (dma-bufs) or the memfd name; preference lists and constraints
 *    (contiguous memory from the CMA heap, refused when the CMA area is too small, refused on
 *    providers that do not give it, with a reason naming each provider tried; -EACCES for an
 *    unprivileged process on 0600 nodes).
 */
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>
#include <drm_fourcc.h>

#include "common.h"

static struct test_args args;

/* Every format the header promises, with its plane count: libdrm's code and the same code
 * written with DMAIO_FOURCC() (as the library's own table writes it). */
#define F(drm, a, b, c, d, planes) { drm, DMAIO_FOURCC(a, b, c, d), #drm, planes }
static const struct {
	uint32_t fourcc;
	uint32_t dmaio_fourcc;
	const char *name;
	unsigned planes;
} all_formats[] = {
	F(DRM_FORMAT_NV12, 'N', 'V', '1', '2', 2),
	F(DRM_FORMAT_NV21, 'N', 'V', '2', '1', 2),
	F(DRM_FORMAT_NV16, 'N', 'V', '1', '6', 2),
	F(DRM_FORMAT_NV61, 'N', 'V', '6', '1', 2),
	F(DRM_FORMAT_NV24, 'N', 'V', '2', '4', 2),
	F(DRM_FORMAT_NV42, 'N', 'V', '4', '2', 2),
	F(DRM_FORMAT_YUV420, 'Y', 'U', '1', '2', 3),
	F(DRM_FORMAT_YVU420, 'Y', 'V', '1', '2', 3),
	F(DRM_FORMAT_YUV422, 'Y', 'U', '1', '6', 3),
	F(DRM_FORMAT_YUV444, 'Y', 'U', '2', '4', 3),
	F(DRM_FORMAT_YUYV, 'Y', 'U', 'Y', 'V', 1),
	F(DRM_FORMAT_YVYU, 'Y', 'V', 'Y', 'U', 1),
	F(DRM_FORMAT_UYVY, 'U', 'Y', 'V', 'Y', 1),
	F(DRM_FORMAT_VYUY, 'V', 'Y', 'U', 'Y', 1),
	F(DRM_FORMAT_P010, 'P', '0', '1', '0', 2),
	F(DRM_FORMAT_P210, 'P', '2', '1', '0', 2),
	F(DRM_FORMAT_RGB565, 'R', 'G', '1', '6', 1),
	F(DRM_FORMAT_BGR565, 'B', 'G', '1', '6', 1),
	F(DRM_FORMAT_RGB888, 'R', 'G', '2', '4', 1),
	F(DRM_FORMAT_BGR888, 'B', 'G', '2', '4', 1),
	F(DRM_FORMAT_XRGB8888, 'X', 'R', '2', '4', 1),
	F(DRM_FORMAT_XBGR8888, 'X', 'B', '2', '4', 1),
	F(DRM_FORMAT_RGBX8888, 'R', 'X', '2', '4', 1),
	F(DRM_FORMAT_BGRX8888, 'B', 'X', '2', '4', 1),
	F(DRM_FORMAT_ARGB8888, 'A', 'R', '2', '4', 1),
	F(DRM_FORMAT_ABGR8888, 'A', 'B', '2', '4', 1),
	F(DRM_FORMAT_RGBA8888, 'R', 'A', '2', '4', 1),
	F(DRM_FORMAT_BGRA8888, 'B', 'A', '2', '4', 1),
	F(DRM_FORMAT_XRGB2101010, 'X', 'R', '3', '0', 1),
	F(DRM_FORMAT_ARGB2101010, 'A', 'R', '3', '0', 1),
	F(DRM_FORMAT_R8, 'R', '8', ' ', ' ', 1),
	F(DRM_FORMAT_R16, 'R', '1', '6', ' ', 1),
	F(DRM_FORMAT_GR88, 'G', 'R', '8', '8', 1),
};
#undef F

static struct dmaio_image_desc desc(uint32_t fourcc, uint32_t w, uint32_t h, uint32_t sa,
				    uint32_t pa)
{
	struct dmaio_image_desc d = { .struct_size = sizeof(d) };

	d.width = w;
	d.height = h;
	d.fourcc = fourcc;
	d.modifier = DRM_FORMAT_MOD_LINEAR;
	d.stride_align = sa;
	d.plane_align = pa;
	return d;
}

static const char *fcc(uint32_t f)
{
	static char s[5];

	for (int i = 0; i < 4; i++) {
		char c = (char)((f >> (8 * i)) & 0xff);

		s[i] = c >= 0x20 && c < 0x7f ? c : '?';
	}
	s[4] = 0;
	return s;
}

/* ---- layouts worked out by hand ----------------------------------------------------------- */
/* V4L2: bytesperline of the first plane is width x bytes per pixel; a later plane's is the
 * first's x its bytes per pixel / (the first's x horizontal subsampling); sizeimage the sum of
 * stride x lines. */
static const struct ref {
	uint32_t fourcc, w, h, sa, pa;
	unsigned planes;
	uint64_t size;
	struct {
		uint64_t offset;
		uint32_t stride;
	} p[3];
} refs[] = {
	{ DRM_FORMAT_NV12, 1920, 1080, 0, 0, 2, 3110400, { { 0, 1920 }, { 2073600, 1920 } } },
	{ DRM_FORMAT_NV21, 1920, 1080, 1, 1, 2, 3110400, { { 0, 1920 }, { 2073600, 1920 } } },
	{ DRM_FORMAT_NV16, 1920, 1080, 0, 0, 2, 4147200, { { 0, 1920 }, { 2073600, 1920 } } },
	{ DRM_FORMAT_NV61, 640, 481, 0, 0, 2, 615680, { { 0, 640 }, { 307840, 640 } } },
	{ DRM_FORMAT_NV24, 640, 480, 0, 0, 2, 921600, { { 0, 640 }, { 307200, 1280 } } },
	{ DRM_FORMAT_NV42, 3, 5, 0, 0, 2, 45, { { 0, 3 }, { 15, 6 } } },
	{ DRM_FORMAT_YUV420, 640, 480, 0, 0, 3, 460800,
	  { { 0, 640 }, { 307200, 320 }, { 384000, 320 } } },
	{ DRM_FORMAT_YVU420, 1920, 1080, 0, 0, 3, 3110400,
	  { { 0, 1920 }, { 2073600, 960 }, { 2592000, 960 } } },
	{ DRM_FORMAT_YUV422, 640, 480, 0, 0, 3, 614400,
	  { { 0, 640 }, { 307200, 320 }, { 460800, 320 } } },
	{ DRM_FORMAT_YUV444, 640, 480, 0, 0, 3, 921600,
	  { { 0, 640 }, { 307200, 640 }, { 614400, 640 } } },
	{ DRM_FORMAT_YUYV, 1920, 1080, 0, 0, 1, 4147200, { { 0, 3840 } } },
	{ DRM_FORMAT_UYVY, 2, 1, 0, 0, 1, 4, { { 0, 4 } } },
	{ DRM_FORMAT_P010, 1920, 1080, 0, 0, 2, 6220800, { { 0, 3840 }, { 4147200, 3840 } } },
	{ DRM_FORMAT_P210, 1920, 1080, 0, 0, 2, 8294400, { { 0, 3840 }, { 4147200, 3840 } } },
	{ DRM_FORMAT_RGB565, 640, 480, 0, 0, 1, 614400, { { 0, 1280 } } },
	{ DRM_FORMAT_RGB888, 641, 480, 0, 0, 1, 923040, { { 0, 1923 } } },
	{ DRM_FORMAT_BGR888, 641, 480, 64, 0, 1, 952320, { { 0, 1984 } } },
	{ DRM_FORMAT_XRGB8888, 640, 480, 0, 0, 1, 1228800, { { 0, 2560 } } },
	{ DRM_FORMAT_ARGB8888, 1366, 768, 256, 0, 1, 4325376, { { 0, 5632 } } },
	{ DRM_FORMAT_R8, 641, 3, 0, 0, 1, 1923, { { 0, 641 } } },
	{ DRM_FORMAT_R16, 641, 3, 0, 0, 1, 3846, { { 0, 1282 } } },
	/* strides aligned to 64: NV12's chroma stride is the luma stride */
	{ DRM_FORMAT_NV12, 1366, 768, 64, 0, 2, 1622016, { { 0, 1408 }, { 1081344, 1408 } } },
	/* YUV420's chroma stride is half: the luma stride is aligned to 128 so both are to 64 */
	{ DRM_FORMAT_YUV420, 1366, 768, 64, 0, 3, 1622016,
	  { { 0, 1408 }, { 1081344, 704 }, { 1351680, 704 } } },
	{ DRM_FORMAT_YUV420, 1300, 2, 64, 0, 3, 4224, { { 0, 1408 }, { 2816, 704 }, { 3520, 704 } } },
	/* planes at 4 KiB */
	{ DRM_FORMAT_NV12, 100, 100, 0, 4096, 2, 17288, { { 0, 100 }, { 12288, 100 } } },
	/* strides to 16 (luma to 32), planes to 4 KiB: Y 128 x 100, U and V 64 x 50 each */
	{ DRM_FORMAT_YUV420, 100, 100, 16, 4096, 3, 23680,
	  { { 0, 128 }, { 16384, 64 }, { 20480, 64 } } },
};

static void test_layout_reference(void **state)
{
	(void)state;
	for (size_t i = 0; i < ARRAY_SIZE(refs); i++) {
		const struct ref *r = &refs[i];
		struct dmaio_image_desc d = desc(r->fourcc, r->w, r->h, r->sa, r->pa);
		struct dmaio_image_layout l = { .struct_size = sizeof(l) };
		int ret = dmaio_image_get_layout(&d, &l, NULL);

		printf("# %s %ux%u sa %u pa %u: %d size %llu\n", fcc(r->fourcc), r->w, r->h, r->sa,
		       r->pa, ret, (unsigned long long)(ret ? 0 : l.total_size));
		assert_int_equal(ret, 0);
		assert_int_equal(l.fourcc, r->fourcc);
		assert_int_equal(l.width, r->w);
		assert_int_equal(l.height, r->h);
		assert_int_equal(l.num_planes, r->planes);
		assert_true(l.modifier == DRM_FORMAT_MOD_LINEAR);
		assert_int_equal(l.total_size, r->size);
		for (unsigned p = 0; p < r->planes; p++) {
			assert_int_equal(l.offsets[p], r->p[p].offset);
			assert_int_equal(l.strides[p], r->p[p].stride);
		}
	}
}

/* ---- fourcc codes without libdrm ----------------------------------------------------------- */
/* A program without libdrm writes the codes with DMAIO_FOURCC(): every format the library lays
 * out has the code libdrm gives it, and the layout of that code is the format's. */
static void test_fourcc_codes(void **state)
{
	(void)state;
	assert_true(DMAIO_FOURCC('N', 'V', '1', '2') == DRM_FORMAT_NV12);
	assert_true(DMAIO_MOD_LINEAR == DRM_FORMAT_MOD_LINEAR);
	for (size_t f = 0; f < ARRAY_SIZE(all_formats); f++) {
		struct dmaio_image_desc d = desc(all_formats[f].dmaio_fourcc, 64, 64, 0, 0);
		struct dmaio_image_layout l = { .struct_size = sizeof(l) };

		if (all_formats[f].dmaio_fourcc != all_formats[f].fourcc)
			fail_msg("%s: DMAIO_FOURCC gives 0x%08x, libdrm 0x%08x", all_formats[f].name,
				 all_formats[f].dmaio_fourcc, all_formats[f].fourcc);
		assert_rc_equal(dmaio_image_get_layout(&d, &l, NULL), 0);
		assert_int_equal(l.fourcc, all_formats[f].fourcc);
		assert_int_equal(l.num_planes, all_formats[f].planes);
	}
	printf("# %zu DMAIO_FOURCC codes are libdrm's\n", ARRAY_SIZE(all_formats));
}

/* ---- invariants of every format ------------------------------------------------------------ */
static void check_invariants(const struct dmaio_image_desc *d, const struct dmaio_image_layout *l,
			     unsigned planes)
{
	uint64_t sa = d->stride_align > 1 ? d->stride_align : 1;
	uint64_t pa = d->plane_align > 1 ? d->plane_align : 1;
	uint64_t end = 0, padding = 0;

	assert_int_equal(l->num_planes, planes);
	for (unsigned p = 0; p < planes; p++) {
		const struct plane pl_v = plane_of(l, p), *pl = &pl_v;

		assert_true(pl->offset >= end);             /* in order, no overlap */
		assert_true(pl->offset - end < pa);          /* no gap beyond the alignment */
		padding += pl->offset - end;
		assert_int_equal(pl->offset % pa, 0);
		assert_int_equal(pl->stride % sa, 0);
		assert_true(pl->stride > 0);
		assert_int_equal(pl->size % pl->stride, 0);
		end = pl->offset + pl->size;
	}
	assert_int_equal(l->total_size, end);
	for (unsigned p = planes; p < DMAIO_IMAGE_MAX_PLANES; p++) {
		assert_int_equal(l->offsets[p], 0);
		assert_int_equal(l->strides[p], 0);
		assert_int_equal(l->plane_sizes[p], 0);
	}
	/* the first plane's stride is the smallest aligned one that holds a line */
	{
		struct dmaio_image_desc u = *d;
		struct dmaio_image_layout ul = { .struct_size = sizeof(ul) };

		u.stride_align = 0;
		u.plane_align = 0;
		assert_int_equal(dmaio_image_get_layout(&u, &ul, NULL), 0);
		assert_true(l->strides[0] >= ul.strides[0]);
		/* at most one alignment unit (x2 for YUV420's halved chroma) more */
		assert_true(l->strides[0] < ul.strides[0] + 2 * sa);
		/* every derived stride keeps the unaligned ratio to the first plane's */
		for (unsigned p = 1; p < planes; p++)
			assert_true((uint64_t)l->strides[p] * ul.strides[0] ==
				    (uint64_t)ul.strides[p] * l->strides[0]);
		/* and the lines of each plane are those of the unaligned layout */
		for (unsigned p = 0; p < planes; p++)
			assert_true(l->plane_sizes[p] / l->strides[p] ==
				    ul.plane_sizes[p] / ul.strides[p]);
		if (sa == 1 && pa == 1)
			assert_int_equal(padding, 0);
	}
}

static void test_layout_sweep(void **state)
{
	static const uint32_t widths[] = { 2, 4, 6, 64, 100, 638, 1280, 1366, 1920, 3840, 4098 };
	static const uint32_t heights[] = { 2, 4, 10, 480, 720, 1080, 2160 };
	static const uint32_t saligns[] = { 0, 1, 2, 16, 64, 256, 4096 };
	static const uint32_t paligns[] = { 0, 1, 32, 4096, 1u << 20 };
	unsigned n = 0;

	(void)state;
	for (size_t f = 0; f < ARRAY_SIZE(all_formats); f++)
		for (size_t w = 0; w < ARRAY_SIZE(widths); w++)
			for (size_t h = 0; h < ARRAY_SIZE(heights); h++)
				for (size_t s = 0; s < ARRAY_SIZE(saligns); s++)
					for (size_t p = 0; p < ARRAY_SIZE(paligns); p++) {
						struct dmaio_image_desc d =
							desc(all_formats[f].fourcc, widths[w],
							     heights[h], saligns[s], paligns[p]);
						struct dmaio_image_layout l = { .struct_size = sizeof(l) };

						assert_int_equal(dmaio_image_get_layout(&d, &l, NULL), 0);
						check_invariants(&d, &l, all_formats[f].planes);
						n++;
					}
	printf("# %u layouts checked\n", n);
}

/* ---- bad geometry -------------------------------------------------------------------------- */
/* The reason of a refusal: its error is the call's, its text names @field (and @field2). */
static void check_reason(const struct dmaio_reason *why, int want, const char *call,
			 const char *field, const char *field2)
{
	assert_int_equal(why->struct_size, sizeof(*why));
	if (why->error != want)
		fail_msg("%s: reason error %s, expected %s (\"%s\")", call,
			 test_errname(why->error), test_errname(want), why->text);
	if (!strstr(why->text, field) || (field2 && !strstr(why->text, field2)))
		fail_msg("%s: the reason \"%s\" does not name \"%s\"%s%s%s", call, why->text, field,
			 field2 ? " and \"" : "", field2 ? field2 : "", field2 ? "\"" : "");
}

/* @d (whose struct_size bytes are read) refused by dmaio_image_get_layout() and
 * dmaio_buf_alloc_image() with @want, a reason naming @field (and @field2), nothing allocated. */
static void bad_p(const struct dmaio_image_desc *d, int want, const char *what, const char *field,
		  const char *field2)
{
	struct dmaio_image_layout l = { .struct_size = sizeof(l) };
	struct dmaio_reason why = { .struct_size = sizeof(why) };
	struct dmaio_buf *b = NULL;
	const char *memfd[] = { "memfd", NULL };
	struct dmaio_alloc_opts o = { .struct_size = sizeof(o), .providers = memfd };
	int fds = test_count_fds();
	int r = dmaio_image_get_layout(d, &l, NULL);

	printf("# %s: %s\n", what, test_errname(r));
	assert_int_equal(r, want);
	r = dmaio_image_get_layout(d, &l, &why);
	assert_int_equal(r, want);
	printf("#   reason: %s\n", why.text);
	check_reason(&why, want, "dmaio_image_get_layout", field, field2);
	r = dmaio_buf_alloc_image(NULL, d, &o, &b, &l, NULL);
	assert_int_equal(r, want);
	assert_null(b);
	why = (struct dmaio_reason){ .struct_size = sizeof(why) };
	r = dmaio_buf_alloc_image(NULL, d, &o, &b, &l, &why);
	assert_int_equal(r, want);
	assert_null(b);
	check_reason(&why, want, "dmaio_buf_alloc_image", field, field2);
	assert_int_equal(test_count_fds(), fds); /* nothing allocated */
}

static void bad(struct dmaio_image_desc d, int want, const char *what, const char *field)
{
	bad_p(&d, want, what, field, NULL);
}

/* A description of a later version: struct dmaio_image_desc and fields this library does not
 * know. */
struct desc_ext {
	struct dmaio_image_desc d;
	uint64_t more[3];
};

/* A layout of a later version: the library fills what it knows and zeroes the rest. */
struct layout_ext {
	struct dmaio_image_layout l;
	uint64_t more[3];
};

static void test_bad_geometry(void **state)
{
	struct dmaio_image_desc d = { .struct_size = sizeof(d) };
	struct dmaio_image_layout l = { .struct_size = sizeof(l) };
	struct dmaio_reason why = { .struct_size = sizeof(why) };
	struct dmaio_buf *b = NULL;
	struct desc_ext x;
	struct layout_ext lx;

	(void)state;
	bad(desc(DRM_FORMAT_NV12, 0, 1080, 0, 0), -EINVAL, "width 0", "width");
	bad(desc(DRM_FORMAT_NV12, 1920, 0, 0, 0), -EINVAL, "height 0", "height");
	d = desc(DRM_FORMAT_NV12, 1920, 1080, 0, 0);
	d.flags = 1;
	bad(d, -EINVAL, "flags", "flags");
	d = desc(DRM_FORMAT_NV12, 1920, 1080, 0, 0);
	d.pad0 = 1;
	bad(d, -EINVAL, "pad0", "pad0");
	/* struct_size: below the 1.0 size */
	d = desc(DRM_FORMAT_NV12, 1920, 1080, 0, 0);
	d.struct_size = 0;
	bad(d, -EINVAL, "struct_size 0", "struct dmaio_image_desc");
	d.struct_size = DMAIO_SIZE_IMAGE_DESC - 4;
	bad(d, -EINVAL, "struct_size below the 1.0 size", "struct dmaio_image_desc");
	/* a later version's: non-zero bytes past what the library knows are refused, zeros not */
	for (size_t i = 0; i < ARRAY_SIZE(x.more); i++) {
		memset(&x, 0, sizeof(x));
		x.d = desc(DRM_FORMAT_NV12, 1920, 1080, 0, 0);
		x.d.struct_size = sizeof(x);
		x.more[i] = 1;
		bad_p(&x.d, -E2BIG, "struct_size larger, unknown bytes set",
		      "struct dmaio_image_desc", "non-zero");
	}
	memset(&x, 0, sizeof(x));
	x.d = desc(DRM_FORMAT_NV12, 1920, 1080, 0, 0);
	x.d.struct_size = sizeof(x);
	assert_int_equal(dmaio_image_get_layout(&x.d, &l, &why), 0);
	assert_string_equal(why.text, "");
	assert_int_equal(why.error, 0);
	assert_int_equal(l.total_size, 3110400);
	{
		const char *memfd[] = { "memfd", NULL };
		struct dmaio_alloc_opts o = { .struct_size = sizeof(o), .providers = memfd };

		assert_int_equal(dmaio_buf_alloc_image(NULL, &x.d, &o, &b, &l, &why), 0);
		assert_int_equal(dmaio_buf_size(b), 3110400);
		dmaio_buf_free(b);
		b = NULL;
	}
	/* the layout: below the 1.0 size refused; a larger one filled, the rest zeroed */
	d = desc(DRM_FORMAT_NV12, 1920, 1080, 0, 0);
	l.struct_size = DMAIO_SIZE_IMAGE_LAYOUT - 8;
	assert_int_equal(dmaio_image_get_layout(&d, &l, NULL), -EINVAL);
	assert_int_equal(dmaio_buf_alloc_image(NULL, &d, NULL, &b, &l, NULL), -EINVAL);
	assert_null(b);
	memset(&lx, 0xa5, sizeof(lx));
	lx.l.struct_size = sizeof(lx);
	assert_int_equal(dmaio_image_get_layout(&d, &lx.l, NULL), 0);
	assert_int_equal(lx.l.struct_size, sizeof(lx)); /* the caller's, kept */
	assert_int_equal(lx.l.total_size, 3110400);
	assert_int_equal(lx.l.num_planes, 2);
	assert_int_equal(lx.l.pad0, 0);
	assert_int_equal(lx.l.strides[2], 0);
	assert_int_equal(lx.l.offsets[3], 0);
	for (size_t i = 0; i < ARRAY_SIZE(lx.more); i++)
		assert_int_equal(lx.more[i], 0);
	l.struct_size = sizeof(l);
	/* a reason below its 1.0 size: refused before anything else */
	why.struct_size = DMAIO_SIZE_REASON - 1;
	assert_int_equal(dmaio_image_get_layout(&d, &l, &why), -EINVAL);
	why.struct_size = sizeof(why);
	bad(desc(DRM_FORMAT_NV12, 1920, 1080, 3, 0), -EINVAL, "stride_align 3", "stride_align");
	bad(desc(DRM_FORMAT_NV12, 1920, 1080, 8192, 0), -EINVAL, "stride_align 8192",
	    "stride_align");
	bad(desc(DRM_FORMAT_NV12, 1920, 1080, 0, 96), -EINVAL, "plane_align 96", "plane_align");
	bad(desc(DRM_FORMAT_NV12, 1920, 1080, 0, 1u << 21), -EINVAL, "plane_align 2 MiB",
	    "plane_align");
	/* subsampling */
	d = desc(DRM_FORMAT_NV12, 1919, 1080, 0, 0);
	bad_p(&d, -EDOM, "NV12 odd width", "width", "not a multiple");
	d = desc(DRM_FORMAT_NV12, 1920, 1079, 0, 0);
	bad_p(&d, -EDOM, "NV12 odd height", "height", "not a multiple");
	d = desc(DRM_FORMAT_YUV420, 641, 480, 0, 0);
	bad_p(&d, -EDOM, "YUV420 odd width", "width", "not a multiple");
	d = desc(DRM_FORMAT_P010, 1920, 1, 0, 0);
	bad_p(&d, -EDOM, "P010 odd height", "height", "not a multiple");
	d = desc(DRM_FORMAT_YUYV, 1919, 1080, 0, 0);
	bad_p(&d, -EDOM, "YUYV odd width", "width", "not a multiple");
	d = desc(DRM_FORMAT_UYVY, 1, 1, 0, 0);
	bad_p(&d, -EDOM, "UYVY width 1", "width", "not a multiple");
	d = desc(DRM_FORMAT_NV16, 1919, 1080, 0, 0);
	bad_p(&d, -EDOM, "NV16 odd width", "width", "not a multiple");
	/* formats */
	bad(desc(0, 64, 64, 0, 0), -EOPNOTSUPP, "fourcc 0", "fourcc");
	bad(desc(fourcc_code('M', 'J', 'P', 'G'), 64, 64, 0, 0), -EOPNOTSUPP, "MJPG", "fourcc");
	bad(desc(DRM_FORMAT_NV15, 64, 64, 0, 0), -EOPNOTSUPP, "NV15 (packed 10-bit)", "fourcc");
	d = desc(DRM_FORMAT_NV12, 64, 64, 0, 0);
	d.modifier = DRM_FORMAT_MOD_INVALID;
	bad(d, -EPROTONOSUPPORT, "modifier INVALID", "modifier");
	d.modifier = I915_FORMAT_MOD_X_TILED;
	bad(d, -EPROTONOSUPPORT, "modifier X_TILED", "modifier");
	/* overflow */
	bad(desc(DRM_FORMAT_XRGB8888, 1u << 30, 1, 0, 0), -EOVERFLOW, "stride 2^32", "stride");
	bad(desc(DRM_FORMAT_XRGB8888, (1u << 30) - 1, 1, 4096, 0), -EOVERFLOW, "aligned past 2^32",
	    "stride");
	bad(desc(DRM_FORMAT_R8, UINT32_MAX, UINT32_MAX, 0, 0), -EOVERFLOW, "size past 2^63",
	    "63 bits");
	bad(desc(DRM_FORMAT_NV12, 0xfffffffe, 0xfffffffe, 0, 1u << 20), -EOVERFLOW, "NV12 huge",
	    "63 bits");
	/* NULLs */
	d = desc(DRM_FORMAT_NV12, 64, 64, 0, 0);
	assert_int_equal(dmaio_image_get_layout(NULL, &l, NULL), -EINVAL);
	assert_int_equal(dmaio_image_get_layout(&d, NULL, NULL), -EINVAL);
	assert_int_equal(dmaio_buf_alloc_image(NULL, NULL, NULL, &b, &l, NULL), -EINVAL);
	assert_int_equal(dmaio_buf_alloc_image(NULL, &d, NULL, NULL, &l, NULL), -EINVAL);
	assert_int_equal(dmaio_buf_alloc_image(NULL, &d, NULL, &b, NULL, NULL), -EINVAL);
	assert_null(b);
}

/* ---- allocation options -------------------------------------------------------------------- */
/* A later version's options: struct dmaio_alloc_opts and fields this library does not know. */
struct opts_ext {
	struct dmaio_alloc_opts o;
	uint64_t more[2];
};

static void test_opts_args(void **state)
{
	const char *empty[] = { NULL };
	const char *badname[] = { "../system", NULL };
	const char *memfd[] = { "memfd", NULL };
	const char *two[] = { "nosuchheap", "memfd", NULL };
	struct dmaio_alloc_opts o = { .struct_size = sizeof(o) };
	struct dmaio_reason why = { .struct_size = sizeof(why) };
	struct dmaio_buf *b = NULL;
	struct dmaio_sys_info si = { .struct_size = sizeof(si) };
	struct opts_ext ox;
	char longname[DMAIO_BUF_NAME_MAX + 1];
	int fds, n, r;

	(void)state;
	/* the context's cached device fds (heaps, udmabuf) are opened by the probes, once */
	assert_int_equal(dmaio_ctx_get_system(NULL, &si), 0);
	n = dmaio_ctx_heap_count(NULL);
	assert_true(n >= 0);
	for (int i = 0; i < n; i++) {
		struct dmaio_heap_info hi = { .struct_size = sizeof(hi) };

		assert_int_equal(dmaio_ctx_get_heap(NULL, (uint32_t)i, &hi), 0);
	}
	fds = test_count_fds();
	memset(longname, 'a', sizeof(longname) - 1);
	longname[sizeof(longname) - 1] = 0;
#define OPTS_CASE(setup, want)                                                              \
	do {                                                                                \
		o = (struct dmaio_alloc_opts){ .struct_size = sizeof(o) };                  \
		o.providers = memfd;                                                        \
		setup;                                                                      \
		assert_int_equal(dmaio_buf_alloc(NULL, 4096, &o, &b, NULL), want);          \
		assert_null(b);                                                             \
		why = (struct dmaio_reason){ .struct_size = sizeof(why) };                  \
		assert_int_equal(dmaio_buf_alloc(NULL, 4096, &o, &b, &why), want);          \
		assert_null(b);                                                             \
		assert_int_equal(why.error, want);                                          \
		assert_true(why.text[0] != 0);                                              \
	} while (0)
	OPTS_CASE(o.flags = 1u << 30, -EINVAL);
	OPTS_CASE(o.flags = DMAIO_ALLOC_ALLOW_NON_DMABUF | DMAIO_ALLOC_DMABUF_ONLY, -EINVAL);
	/* struct_size below the 1.0 size */
	OPTS_CASE(o.struct_size = 0, -EINVAL);
	OPTS_CASE(o.struct_size = DMAIO_SIZE_ALLOC_OPTS - 1, -EINVAL);
	OPTS_CASE(o.providers = empty, -EINVAL);
	OPTS_CASE(o.providers = badname, -EINVAL);
	OPTS_CASE(o.name = "", -EINVAL);
	OPTS_CASE(o.name = longname, -EINVAL);
	OPTS_CASE(o.name = "tab\there", -EINVAL);
	OPTS_CASE(o.name = "caf\xc3\xa9", -EINVAL);
	/* memfd is not contiguous nor uncached, nor a dma-buf */
	OPTS_CASE(o.flags = DMAIO_ALLOC_CONTIGUOUS, -EOPNOTSUPP);
	OPTS_CASE(o.flags = DMAIO_ALLOC_UNCACHED, -EOPNOTSUPP);
	OPTS_CASE(o.flags = DMAIO_ALLOC_DMABUF_ONLY, -EOPNOTSUPP);
	if (!test_cma_heap()) /* no CMA heap: nothing gives contiguous memory */
		OPTS_CASE(o.providers = NULL; o.flags = DMAIO_ALLOC_CONTIGUOUS, -ENODEV);
	/* every provider tried is named in the reason, with why it refused */
	OPTS_CASE(o.providers = two; o.flags = DMAIO_ALLOC_CONTIGUOUS, -EOPNOTSUPP);
	printf("# nosuchheap, memfd, CONTIGUOUS: %s\n", why.text);
	assert_non_null(strstr(why.text, "nosuchheap"));
	assert_non_null(strstr(why.text, "memfd"));
	{
		struct dmaio_image_desc d = desc(DRM_FORMAT_NV12, 64, 64, 0, 0);
		struct dmaio_image_layout l = { .struct_size = sizeof(l) };

		why = (struct dmaio_reason){ .struct_size = sizeof(why) };
		assert_int_equal(dmaio_buf_alloc_image(NULL, &d, &o, &b, &l, &why), -EOPNOTSUPP);
		assert_null(b);
		assert_int_equal(why.error, -EOPNOTSUPP);
		assert_non_null(strstr(why.text, "nosuchheap"));
		assert_non_null(strstr(why.text, "memfd"));
	}
	/* a later version's options: unknown bytes set are refused */
	for (size_t i = 0; i < ARRAY_SIZE(ox.more); i++) {
		memset(&ox, 0, sizeof(ox));
		ox.o.struct_size = sizeof(ox);
		ox.o.providers = memfd;
		ox.more[i] = 1;
		why = (struct dmaio_reason){ .struct_size = sizeof(why) };
		assert_int_equal(dmaio_buf_alloc(NULL, 4096, &ox.o, &b, &why), -E2BIG);
		assert_null(b);
		assert_int_equal(why.error, -E2BIG);
		assert_non_null(strstr(why.text, "struct dmaio_alloc_opts"));
	}
#undef OPTS_CASE
	/* a reason below its 1.0 size */
	why.struct_size = DMAIO_SIZE_REASON - 1;
	o = (struct dmaio_alloc_opts){ .struct_size = sizeof(o), .providers = memfd };
	assert_int_equal(dmaio_buf_alloc(NULL, 4096, &o, &b, &why), -EINVAL);
	assert_null(b);
	assert_int_equal(dmaio_buf_alloc(NULL, 0, NULL, &b, NULL), -EINVAL);
	assert_int_equal(dmaio_buf_alloc(NULL, 4096, NULL, NULL, NULL), -EINVAL);
	assert_int_equal(dmaio_buf_set_name(NULL, "x"), -EINVAL);
	assert_int_equal(test_count_fds(), fds);
	/* a later version's options with the unknown bytes zero: accepted */
	memset(&ox, 0, sizeof(ox));
	ox.o.struct_size = sizeof(ox);
	ox.o.providers = memfd;
	ox.o.name = "ext";
	r = dmaio_buf_alloc(NULL, 4096, &ox.o, &b, NULL);
	assert_int_equal(r, 0);
	assert_string_equal(dmaio_buf_provider(b), "memfd");
	dmaio_buf_free(b);
	b = NULL;
	/* the longest name works */
	o = (struct dmaio_alloc_opts){ .struct_size = sizeof(o) };
	o.providers = memfd;
	longname[DMAIO_BUF_NAME_MAX - 1] = 0;
	o.name = longname;
	assert_int_equal(dmaio_buf_alloc(NULL, 4096, &o, &b, NULL), 0);
	assert_int_equal(dmaio_buf_set_name(b, "x"), -EOPNOTSUPP); /* a memfd */
	assert_int_equal(dmaio_buf_set_name(b, ""), -EINVAL);
	dmaio_buf_free(b);
}

/* The name the kernel shows for a buffer: fdinfo's "name:" for a dma-buf, the memfd name. */
static void buf_name(const struct dmaio_buf *b, char *out, size_t len)
{
	char p[64];

	out[0] = 0;
	if (dmaio_buf_kind(b) == DMAIO_BUF_MEMFD) {
		char l[DMAIO_BUF_NAME_MAX + 32];
		ssize_t n;

		snprintf(p, sizeof(p), "/proc/self/fd/%d", dmaio_buf_fd(b));
		n = readlink(p, l, sizeof(l) - 1);
		assert_true(n > 0);
		l[n] = 0;
		/* "/memfd:NAME (deleted)" */
		assert_int_equal(strncmp(l, "/memfd:", 7), 0);
		snprintf(out, len, "%s", l + 7);
		if (strstr(out, " (deleted)"))
			*strstr(out, " (deleted)") = 0;
		return;
	}
	test_fdinfo(dmaio_buf_fd(b), "name", out, len);
}

static void test_names(void **state)
{
	const char *list[] = { args.heap_name, NULL };
	struct dmaio_alloc_opts o = { .struct_size = sizeof(o) };
	struct dmaio_buf *b;
	char name[64];
	int r;

	(void)state;
	/* 77 where the provider is missing on the host; in the VM a failure */
	assert_rc_equal(test_alloc_or_skip(NULL, args.heap_name, 4096, 0, &b), 0);
	buf_name(b, name, sizeof(name));
	printf("# default name: \"%s\"\n", name);
	assert_string_equal(name, "libdmaio");
	dmaio_buf_free(b);
	o = (struct dmaio_alloc_opts){ .struct_size = sizeof(o) };
	o.providers = list;
	o.name = "cam0:frame 7";
	assert_int_equal(dmaio_buf_alloc(NULL, 65536, &o, &b, NULL), 0);
	assert_string_equal(dmaio_buf_provider(b), args.heap_name);
	buf_name(b, name, sizeof(name));
	printf("# asked \"%s\", the kernel shows \"%s\"\n", o.name, name);
	assert_string_equal(name, "cam0:frame 7");
	r = dmaio_buf_set_name(b, "renamed");
	if (dmaio_buf_kind(b) == DMAIO_BUF_MEMFD) {
		assert_int_equal(r, -EOPNOTSUPP);
	} else {
		assert_int_equal(r, 0);
		buf_name(b, name, sizeof(name));
		assert_string_equal(name, "renamed");
	}
	dmaio_buf_free(b);
}

/* Fill each plane of an image with the pattern through the mapping, write the buffer to a file
 * through the library, compare every byte of the file; then read it back into a second image
 * and compare every plane. */
static void image_roundtrip(uint32_t fourcc, uint32_t w, uint32_t h, uint32_t sa, uint32_t pa)
{
	const char *list[] = { args.heap_name, NULL };
	struct dmaio_image_desc d = desc(fourcc, w, h, sa, pa);
	struct dmaio_image_layout l = { .struct_size = sizeof(l) };
	struct dmaio_image_layout want = { .struct_size = sizeof(want) };
	struct dmaio_alloc_opts o = { .struct_size = sizeof(o) };
	struct dmaio_buf *b, *b2;
	char path[512];
	uint8_t *p, *p2;
	void *addr;
	int fd, r;

	o = (struct dmaio_alloc_opts){ .struct_size = sizeof(o) };
	o.providers = list;
	assert_int_equal(dmaio_image_get_layout(&d, &want, NULL), 0);
	r = dmaio_buf_alloc_image(NULL, &d, &o, &b, &l, NULL);
	if (r == -ENOMEM && !strcmp(args.heap, "cma")) {
		printf("# %s %ux%u: the CMA area is too small (%s)\n", fcc(fourcc), w, h,
		       test_errname(r));
		return;
	}
	assert_int_equal(r, 0);
	assert_int_equal(dmaio_buf_size(b), l.total_size);
	assert_int_equal(l.num_planes, want.num_planes);
	if (dmaio_buf_kind(b) == DMAIO_BUF_DRM) {
		/* the driver's pitch: at least the stride we would pick, the planes derived from it */
		assert_true(l.strides[0] >= want.strides[0]);
		printf("# drm %s %ux%u: pitch %u (ours %u), size %llu\n", fcc(fourcc), w, h,
		       l.strides[0], want.strides[0], (unsigned long long)l.total_size);
	} else {
		assert_memory_equal(&l, &want, sizeof(l));
	}
	assert_int_equal(dmaio_buf_map(b, &addr), 0);
	p = addr;
	assert_int_equal(dmaio_buf_sync_begin(b, DMAIO_SYNC_WRITE), 0);
	memset(p, 0x5a, l.total_size);
	for (unsigned i = 0; i < l.num_planes; i++)
		pat_fill(p + l.offsets[i], l.plane_sizes[i], 11 + i, 0);
	assert_int_equal(dmaio_buf_sync_end(b, DMAIO_SYNC_WRITE), 0);
	fd = test_tmpfile(test_dir(), path, sizeof(path));
	assert_true(fd >= 0);
	assert_int_equal(dmaio_fd_write(fd, 0, b, 0, l.total_size, 0, NULL), (ssize_t)l.total_size);
	for (unsigned i = 0; i < l.num_planes; i++)
		assert_int_equal(file_check_pattern(fd, (off_t)l.offsets[i], l.plane_sizes[i],
						    11 + i, 0), -1);
	/* and back into a second image of the same layout */
	assert_int_equal(dmaio_buf_alloc_image(NULL, &d, &o, &b2, &want, NULL), 0);
	assert_memory_equal(&l, &want, sizeof(l));
	assert_int_equal(dmaio_fd_read(fd, 0, b2, 0, l.total_size, 0, NULL), (ssize_t)l.total_size);
	assert_int_equal(dmaio_buf_map(b2, &addr), 0);
	p2 = addr;
	assert_int_equal(dmaio_buf_sync_begin(b2, DMAIO_SYNC_READ), 0);
	assert_int_equal(mem_first_diff(p, p2, l.total_size), -1);
	assert_int_equal(dmaio_buf_sync_end(b2, DMAIO_SYNC_READ), 0);
	close(fd);
	unlink(path);
	dmaio_buf_free(b2);
	dmaio_buf_free(b);
}

static void test_image_alloc(void **state)
{
	struct dmaio_buf *b;

	(void)state;
	/* 77 where the provider is missing on the host; in the VM a failure */
	assert_rc_equal(test_alloc_or_skip(NULL, args.heap_name, 4096, 0, &b), 0);
	dmaio_buf_free(b);
	for (size_t f = 0; f < ARRAY_SIZE(all_formats); f++) {
		image_roundtrip(all_formats[f].fourcc, 640, 480, 0, 0);
		if (!test_quick())
			image_roundtrip(all_formats[f].fourcc, 1366, 100, 64, 4096);
	}
	image_roundtrip(DRM_FORMAT_NV12, 1920, 1080, 0, 0);
	image_roundtrip(DRM_FORMAT_YUYV, 1920, 1080, 256, 0);
}

/* Preference lists: absent names are skipped, the first that works is used; the most telling
 * errno when none does. */
static void test_preference(void **state)
{
	const char *list[] = { "no-such-heap", "udmabuf-huge-nope", args.heap_name, "memfd", NULL };
	const char *none[] = { "no-such-heap", NULL };
	struct dmaio_alloc_opts o = { .struct_size = sizeof(o) };
	struct dmaio_buf *b = NULL;

	(void)state;
	/* 77 where the provider is missing on the host; in the VM a failure */
	assert_rc_equal(test_alloc_or_skip(NULL, args.heap_name, 4096, 0, &b), 0);
	dmaio_buf_free(b);
	o = (struct dmaio_alloc_opts){ .struct_size = sizeof(o) };
	o.providers = list;
	assert_int_equal(dmaio_buf_alloc(NULL, 8192, &o, &b, NULL), 0);
	assert_string_equal(dmaio_buf_provider(b), args.heap_name);
	assert_int_equal(dmaio_buf_size(b), 8192);
	dmaio_buf_free(b);
	b = NULL;
	o.providers = none;
	assert_int_equal(dmaio_buf_alloc(NULL, 8192, &o, &b, NULL), -ENOENT);
	assert_null(b);
	{
		struct dmaio_reason why = { .struct_size = sizeof(why) };

		assert_int_equal(dmaio_buf_alloc(NULL, 8192, &o, &b, &why), -ENOENT);
		assert_null(b);
		assert_int_equal(why.error, -ENOENT);
		assert_non_null(strstr(why.text, "no-such-heap"));
	}
}

/* Contiguous memory: the CMA heap answers heap NULL with DMAIO_ALLOC_CONTIGUOUS; more than the
 * CMA area is refused at once; providers that do not give it are refused; no uncached heap in
 * mainline kernels. Run with --heap cma. */
static void test_contiguous(void **state)
{
	struct dmaio_alloc_opts o = { .struct_size = sizeof(o) };
	struct dmaio_buf *b = NULL;
	const char *sys[] = { "system", NULL };
	int n, fds;

	(void)state;
	if (strcmp(args.heap, "cma")) {
		skip();
		return;
	}
	n = dmaio_ctx_heap_count(NULL);
	assert_true(n > 0);
	for (int i = 0; i < n; i++) {
		struct dmaio_heap_info hi = { .struct_size = sizeof(hi) };

		assert_int_equal(dmaio_ctx_get_heap(NULL, (uint32_t)i, &hi), 0);
		printf("# heap %s: contiguous %d uncached %d\n", hi.name, hi.contiguous, hi.uncached);
		/* the CMA heap under test and the other names the default area has (7.3 shows it
		 * as default_cma_region and as reserved); the VM has no other contiguous heap */
		if (!strcmp(hi.name, "system"))
			assert_int_equal(hi.contiguous, 0);
		else if (!strcmp(hi.name, args.heap_name) || !strcmp(hi.name, "reserved") ||
			 !strcmp(hi.name, "default_cma_region") || !strcmp(hi.name, "linux,cma"))
			assert_int_equal(hi.contiguous, 1);
	}
	o = (struct dmaio_alloc_opts){ .struct_size = sizeof(o) };
	o.flags = DMAIO_ALLOC_CONTIGUOUS;
	o.name = "contig";
	assert_int_equal(dmaio_buf_alloc(NULL, 1 * MiB, &o, &b, NULL), 0);
	assert_string_equal(dmaio_buf_provider(b), args.heap_name);
	dmaio_buf_free(b);
	b = NULL;
	assert_int_equal(t_alloc(NULL, args.heap_name, 1 * MiB, DMAIO_ALLOC_CONTIGUOUS, &b), 0);
	dmaio_buf_free(b);
	b = NULL;
	/* the system heap is not contiguous */
	o.providers = sys;
	assert_int_equal(dmaio_buf_alloc(NULL, 1 * MiB, &o, &b, NULL), -EOPNOTSUPP);
	{
		struct dmaio_reason why = { .struct_size = sizeof(why) };

		assert_int_equal(dmaio_buf_alloc(NULL, 1 * MiB, &o, &b, &why), -EOPNOTSUPP);
		printf("# system, CONTIGUOUS: %s\n", why.text);
		assert_int_equal(why.error, -EOPNOTSUPP);
		assert_non_null(strstr(why.text, "system"));
	}
	assert_int_equal(t_alloc(NULL, "system", 1 * MiB, DMAIO_ALLOC_CONTIGUOUS, &b),
			 -EOPNOTSUPP);
	assert_int_equal(t_alloc(NULL, "udmabuf", 1 * MiB, DMAIO_ALLOC_CONTIGUOUS, &b),
			 -EOPNOTSUPP);
	assert_null(b);
	/* too large for the CMA area (and not the machine): refused at once, nothing taken */
	fds = test_count_fds();
	o.providers = NULL;
	{
		unsigned long long kb = (unsigned long long)test_meminfo("CmaTotal");

		assert_true(test_meminfo("CmaTotal") > 0);
		printf("# CmaTotal %llu MiB: asking for %llu MiB\n", kb >> 10, (kb >> 10) + 1);
		assert_int_equal(dmaio_buf_alloc(NULL, (kb + 1024) << 10, &o, &b, NULL), -ENOMEM);
		assert_null(b);
	}
	/* an image too large for it, the same */
	{
		struct dmaio_image_desc d = desc(DRM_FORMAT_XRGB8888, 7680, 4320, 0, 0); /* 126 MiB */
		struct dmaio_image_layout l = { .struct_size = sizeof(l) };

		assert_int_equal(dmaio_buf_alloc_image(NULL, &d, &o, &b, &l, NULL), -ENOMEM);
		assert_null(b);
	}
	assert_int_equal(test_count_fds(), fds);
	/* mainline has no uncached heap */
	o.flags = DMAIO_ALLOC_UNCACHED;
	assert_int_equal(dmaio_buf_alloc(NULL, 1 * MiB, &o, &b, NULL), -ENODEV);
	assert_null(b);
}

/* The unprivileged child of test_eacces (a cmocka test of its own, test_in_child()). */
static void eacces_child(void **state)
{
	struct dmaio_buf *b = NULL;
	struct dmaio_ctx *c;
	int r;

	(void)state;
	assert_int_equal(setgid(65534), 0);
	assert_int_equal(setuid(65534), 0);
	assert_rc_equal(dmaio_ctx_new(0, &c), 0);
	r = t_alloc(c, args.heap_name, 4096, 0, &b);
	printf("# unprivileged alloc from %s: %s\n", args.heap_name, test_errname(r));
	assert_rc_equal(r, -EACCES);
	r = t_alloc(c, NULL, 4096, 0, &b);
	printf("# unprivileged alloc, heap NULL: %s%s%s\n", test_errname(r), r ? "" : " from ",
	       r ? "" : dmaio_buf_provider(b));
	/* every heap and udmabuf node here is root-only: -EACCES, unless a DRM node open to
	 * everyone serves */
	if (r == 0)
		assert_string_equal(dmaio_buf_provider(b), "drm");
	else
		assert_rc_equal(r, -EACCES);
}

/* An unprivileged process with the device nodes at their default 0600: -EACCES, not -ENODEV
 * (the fix is the udev rule). Needs root to drop to nobody, and root-only nodes. */
static void test_eacces(void **state)
{
	char path[128];
	struct stat st;

	(void)state;
	if (strcmp(args.heap, "memfd") == 0 || geteuid() != 0) {
		skip();
		return;
	}
	snprintf(path, sizeof(path), "/dev/dma_heap/%s", args.heap_name);
	if (stat(path, &st) || (st.st_mode & 0066)) {
		printf("# %s is not a root-only dma-heap node\n", path);
		skip();
		return;
	}
	test_in_child("unprivileged", eacces_child, NULL);
}

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_layout_reference),
		cmocka_unit_test(test_fourcc_codes),
		cmocka_unit_test(test_layout_sweep),
		cmocka_unit_test(test_bad_geometry),
		cmocka_unit_test(test_opts_args),
		cmocka_unit_test(test_names),
		cmocka_unit_test(test_image_alloc),
		cmocka_unit_test(test_preference),
		cmocka_unit_test(test_contiguous),
		cmocka_unit_test(test_eacces),
	};

	test_parse_args(argc, argv, &args, "memfd");
	return cmocka_run_group_tests_name("image", tests, NULL, NULL);
}
