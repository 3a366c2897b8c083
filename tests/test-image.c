/* SPDX-License-Identifier: MIT */
/*
 * Image buffers and allocation options (dmaio_image_layout, dmaio_alloc_image, dmaio_alloc_ex,
 * dmaio_buf_set_name):
 *  - layouts of every supported format against values worked out by hand from V4L2's rules
 *    (bytesperline and sizeimage of the single-buffer formats), with and without alignment;
 *  - invariants of every format over a sweep of sizes and alignments (planes inside the buffer,
 *    in order, aligned, strides derived as V4L2 derives them, nothing wasted beyond alignment);
 *  - bad geometry refused with its own errno and nothing allocated;
 *  - with --heap H: an image buffer of every format from H, each plane filled through the
 *    mapping, written to a file through the library and compared byte by byte; names visible in
 *    /proc/self/fdinfo (dma-bufs) or the memfd name; preference lists and constraints
 *    (contiguous memory from the CMA heap, refused when the CMA area is too small, refused on
 *    providers that do not give it, -EACCES for an unprivileged process on 0600 nodes).
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

/* Every format the header promises, with its plane count. */
static const struct {
	uint32_t fourcc;
	unsigned planes;
} all_formats[] = {
	{ DRM_FORMAT_NV12, 2 },     { DRM_FORMAT_NV21, 2 },     { DRM_FORMAT_NV16, 2 },
	{ DRM_FORMAT_NV61, 2 },     { DRM_FORMAT_NV24, 2 },     { DRM_FORMAT_NV42, 2 },
	{ DRM_FORMAT_YUV420, 3 },   { DRM_FORMAT_YVU420, 3 },   { DRM_FORMAT_YUV422, 3 },
	{ DRM_FORMAT_YUV444, 3 },   { DRM_FORMAT_YUYV, 1 },     { DRM_FORMAT_YVYU, 1 },
	{ DRM_FORMAT_UYVY, 1 },     { DRM_FORMAT_VYUY, 1 },     { DRM_FORMAT_P010, 2 },
	{ DRM_FORMAT_P210, 2 },     { DRM_FORMAT_RGB565, 1 },   { DRM_FORMAT_BGR565, 1 },
	{ DRM_FORMAT_RGB888, 1 },   { DRM_FORMAT_BGR888, 1 },   { DRM_FORMAT_XRGB8888, 1 },
	{ DRM_FORMAT_XBGR8888, 1 }, { DRM_FORMAT_RGBX8888, 1 }, { DRM_FORMAT_BGRX8888, 1 },
	{ DRM_FORMAT_ARGB8888, 1 }, { DRM_FORMAT_ABGR8888, 1 }, { DRM_FORMAT_RGBA8888, 1 },
	{ DRM_FORMAT_BGRA8888, 1 }, { DRM_FORMAT_XRGB2101010, 1 }, { DRM_FORMAT_ARGB2101010, 1 },
	{ DRM_FORMAT_R8, 1 },       { DRM_FORMAT_R16, 1 },      { DRM_FORMAT_GR88, 1 },
};

static struct dmaio_image_desc desc(uint32_t fourcc, uint32_t w, uint32_t h, uint32_t sa,
				    uint32_t pa)
{
	struct dmaio_image_desc d;

	memset(&d, 0, sizeof(d));
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
		struct dmaio_image_layout l;
		int ret = dmaio_image_layout(&d, &l);

		printf("# %s %ux%u sa %u pa %u: %d size %llu\n", fcc(r->fourcc), r->w, r->h, r->sa,
		       r->pa, ret, (unsigned long long)(ret ? 0 : l.size));
		assert_int_equal(ret, 0);
		assert_int_equal(l.fourcc, r->fourcc);
		assert_int_equal(l.width, r->w);
		assert_int_equal(l.height, r->h);
		assert_int_equal(l.num_planes, r->planes);
		assert_true(l.modifier == DRM_FORMAT_MOD_LINEAR);
		assert_int_equal(l.size, r->size);
		for (unsigned p = 0; p < r->planes; p++) {
			assert_int_equal(l.planes[p].offset, r->p[p].offset);
			assert_int_equal(l.planes[p].stride, r->p[p].stride);
		}
	}
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
		const struct dmaio_plane *pl = &l->planes[p];

		assert_true(pl->offset >= end);             /* in order, no overlap */
		assert_true(pl->offset - end < pa);          /* no gap beyond the alignment */
		padding += pl->offset - end;
		assert_int_equal(pl->offset % pa, 0);
		assert_int_equal(pl->stride % sa, 0);
		assert_true(pl->stride > 0);
		assert_int_equal(pl->size % pl->stride, 0);
		end = pl->offset + pl->size;
	}
	assert_int_equal(l->size, end);
	for (unsigned p = planes; p < DMAIO_IMAGE_MAX_PLANES; p++) {
		assert_int_equal(l->planes[p].offset, 0);
		assert_int_equal(l->planes[p].stride, 0);
		assert_int_equal(l->planes[p].size, 0);
	}
	/* the first plane's stride is the smallest aligned one that holds a line */
	{
		struct dmaio_image_desc u = *d;
		struct dmaio_image_layout ul;

		u.stride_align = 0;
		u.plane_align = 0;
		assert_int_equal(dmaio_image_layout(&u, &ul), 0);
		assert_true(l->planes[0].stride >= ul.planes[0].stride);
		/* at most one alignment unit (x2 for YUV420's halved chroma) more */
		assert_true(l->planes[0].stride < ul.planes[0].stride + 2 * sa);
		/* every derived stride keeps the unaligned ratio to the first plane's */
		for (unsigned p = 1; p < planes; p++)
			assert_true((uint64_t)l->planes[p].stride * ul.planes[0].stride ==
				    (uint64_t)ul.planes[p].stride * l->planes[0].stride);
		/* and the lines of each plane are those of the unaligned layout */
		for (unsigned p = 0; p < planes; p++)
			assert_true(l->planes[p].size / l->planes[p].stride ==
				    ul.planes[p].size / ul.planes[p].stride);
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
						struct dmaio_image_layout l;

						assert_int_equal(dmaio_image_layout(&d, &l), 0);
						check_invariants(&d, &l, all_formats[f].planes);
						n++;
					}
	printf("# %u layouts checked\n", n);
}

/* ---- bad geometry -------------------------------------------------------------------------- */
static void bad(struct dmaio_image_desc d, int want, const char *what)
{
	struct dmaio_image_layout l;
	struct dmaio_buf *b = NULL;
	struct dmaio_alloc_opts o;
	const char *memfd[] = { "memfd", NULL };
	int fds = test_count_fds();
	int r = dmaio_image_layout(&d, &l);

	printf("# %s: %s\n", what, test_errname(r));
	assert_int_equal(r, want);
	memset(&o, 0, sizeof(o));
	o.providers = memfd;
	r = dmaio_alloc_image(NULL, &d, &o, &b, &l);
	assert_int_equal(r, want);
	assert_null(b);
	assert_int_equal(test_count_fds(), fds); /* nothing allocated */
}

static void test_bad_geometry(void **state)
{
	struct dmaio_image_desc d;
	struct dmaio_image_layout l;
	struct dmaio_buf *b = NULL;

	(void)state;
	bad(desc(DRM_FORMAT_NV12, 0, 1080, 0, 0), -EINVAL, "width 0");
	bad(desc(DRM_FORMAT_NV12, 1920, 0, 0, 0), -EINVAL, "height 0");
	d = desc(DRM_FORMAT_NV12, 1920, 1080, 0, 0);
	d.flags = 1;
	bad(d, -EINVAL, "flags");
	for (size_t i = 0; i < ARRAY_SIZE(d.reserved); i++) {
		d = desc(DRM_FORMAT_NV12, 1920, 1080, 0, 0);
		d.reserved[i] = 1;
		bad(d, -EINVAL, "reserved");
	}
	bad(desc(DRM_FORMAT_NV12, 1920, 1080, 3, 0), -EINVAL, "stride_align 3");
	bad(desc(DRM_FORMAT_NV12, 1920, 1080, 8192, 0), -EINVAL, "stride_align 8192");
	bad(desc(DRM_FORMAT_NV12, 1920, 1080, 0, 96), -EINVAL, "plane_align 96");
	bad(desc(DRM_FORMAT_NV12, 1920, 1080, 0, 1u << 21), -EINVAL, "plane_align 2 MiB");
	/* subsampling */
	bad(desc(DRM_FORMAT_NV12, 1919, 1080, 0, 0), -EDOM, "NV12 odd width");
	bad(desc(DRM_FORMAT_NV12, 1920, 1079, 0, 0), -EDOM, "NV12 odd height");
	bad(desc(DRM_FORMAT_YUV420, 641, 480, 0, 0), -EDOM, "YUV420 odd width");
	bad(desc(DRM_FORMAT_P010, 1920, 1, 0, 0), -EDOM, "P010 odd height");
	bad(desc(DRM_FORMAT_YUYV, 1919, 1080, 0, 0), -EDOM, "YUYV odd width");
	bad(desc(DRM_FORMAT_UYVY, 1, 1, 0, 0), -EDOM, "UYVY width 1");
	bad(desc(DRM_FORMAT_NV16, 1919, 1080, 0, 0), -EDOM, "NV16 odd width");
	/* formats */
	bad(desc(0, 64, 64, 0, 0), -EOPNOTSUPP, "fourcc 0");
	bad(desc(fourcc_code('M', 'J', 'P', 'G'), 64, 64, 0, 0), -EOPNOTSUPP, "MJPG");
	bad(desc(DRM_FORMAT_NV15, 64, 64, 0, 0), -EOPNOTSUPP, "NV15 (packed 10-bit)");
	d = desc(DRM_FORMAT_NV12, 64, 64, 0, 0);
	d.modifier = DRM_FORMAT_MOD_INVALID;
	bad(d, -EPROTONOSUPPORT, "modifier INVALID");
	d.modifier = I915_FORMAT_MOD_X_TILED;
	bad(d, -EPROTONOSUPPORT, "modifier X_TILED");
	/* overflow */
	bad(desc(DRM_FORMAT_XRGB8888, 1u << 30, 1, 0, 0), -EOVERFLOW, "stride 2^32");
	bad(desc(DRM_FORMAT_XRGB8888, (1u << 30) - 1, 1, 4096, 0), -EOVERFLOW, "aligned past 2^32");
	bad(desc(DRM_FORMAT_R8, UINT32_MAX, UINT32_MAX, 0, 0), -EOVERFLOW, "size past 2^63");
	bad(desc(DRM_FORMAT_NV12, 0xfffffffe, 0xfffffffe, 0, 1u << 20), -EOVERFLOW, "NV12 huge");
	/* NULLs */
	d = desc(DRM_FORMAT_NV12, 64, 64, 0, 0);
	assert_int_equal(dmaio_image_layout(NULL, &l), -EINVAL);
	assert_int_equal(dmaio_image_layout(&d, NULL), -EINVAL);
	assert_int_equal(dmaio_alloc_image(NULL, NULL, NULL, &b, &l), -EINVAL);
	assert_int_equal(dmaio_alloc_image(NULL, &d, NULL, NULL, &l), -EINVAL);
	assert_int_equal(dmaio_alloc_image(NULL, &d, NULL, &b, NULL), -EINVAL);
	assert_null(b);
}

/* ---- allocation options -------------------------------------------------------------------- */
static void test_opts_args(void **state)
{
	const char *empty[] = { NULL };
	const char *badname[] = { "../system", NULL };
	const char *memfd[] = { "memfd", NULL };
	struct dmaio_alloc_opts o;
	struct dmaio_buf *b = NULL;
	struct dmaio_sys_info si;
	char longname[DMAIO_BUF_NAME_MAX + 1];
	int fds;

	(void)state;
	/* the context's cached device fds (heaps, udmabuf) are opened by the probes, once */
	assert_int_equal(dmaio_probe_system(NULL, &si), 0);
	assert_true(dmaio_probe_heaps(NULL, NULL, 0) >= 0);
	fds = test_count_fds();
	memset(longname, 'a', sizeof(longname) - 1);
	longname[sizeof(longname) - 1] = 0;
#define OPTS_CASE(setup, want)                                                              \
	do {                                                                                \
		memset(&o, 0, sizeof(o));                                                   \
		o.providers = memfd;                                                        \
		setup;                                                                      \
		assert_int_equal(dmaio_alloc_ex(NULL, 4096, &o, &b), want);                 \
		assert_null(b);                                                             \
	} while (0)
	OPTS_CASE(o.flags = 1u << 30, -EINVAL);
	OPTS_CASE(o.flags = DMAIO_ALLOC_ALLOW_NON_DMABUF | DMAIO_ALLOC_DMABUF_ONLY, -EINVAL);
	OPTS_CASE(o.reserved0 = 1, -EINVAL);
	OPTS_CASE(o.reserved[4] = 1, -EINVAL);
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
#undef OPTS_CASE
	assert_int_equal(dmaio_alloc_ex(NULL, 0, NULL, &b), -EINVAL);
	assert_int_equal(dmaio_alloc_ex(NULL, 4096, NULL, NULL), -EINVAL);
	assert_int_equal(dmaio_buf_set_name(NULL, "x"), -EINVAL);
	assert_int_equal(test_count_fds(), fds);
	/* the longest name works */
	memset(&o, 0, sizeof(o));
	o.providers = memfd;
	longname[DMAIO_BUF_NAME_MAX - 1] = 0;
	o.name = longname;
	assert_int_equal(dmaio_alloc_ex(NULL, 4096, &o, &b), 0);
	assert_int_equal(dmaio_buf_set_name(b, "x"), -EOPNOTSUPP); /* a memfd */
	assert_int_equal(dmaio_buf_set_name(b, ""), -EINVAL);
	dmaio_free(b);
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
	struct dmaio_alloc_opts o;
	struct dmaio_buf *b;
	char name[64];
	int r;

	(void)state;
	/* 77 where the provider is missing on the host; in the VM a failure */
	assert_rc_equal(test_alloc_or_skip(NULL, args.heap_name, 4096, 0, &b), 0);
	buf_name(b, name, sizeof(name));
	printf("# default name: \"%s\"\n", name);
	assert_string_equal(name, "libdmaio");
	dmaio_free(b);
	memset(&o, 0, sizeof(o));
	o.providers = list;
	o.name = "cam0:frame 7";
	assert_int_equal(dmaio_alloc_ex(NULL, 65536, &o, &b), 0);
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
	dmaio_free(b);
}

/* Fill each plane of an image with the pattern through the mapping, write the buffer to a file
 * through the library, compare every byte of the file; then read it back into a second image
 * and compare every plane. */
static void image_roundtrip(uint32_t fourcc, uint32_t w, uint32_t h, uint32_t sa, uint32_t pa)
{
	const char *list[] = { args.heap_name, NULL };
	struct dmaio_image_desc d = desc(fourcc, w, h, sa, pa);
	struct dmaio_image_layout l, want;
	struct dmaio_alloc_opts o;
	struct dmaio_buf *b, *b2;
	char path[512];
	uint8_t *p, *p2;
	void *addr;
	int fd, r;

	memset(&o, 0, sizeof(o));
	o.providers = list;
	assert_int_equal(dmaio_image_layout(&d, &want), 0);
	r = dmaio_alloc_image(NULL, &d, &o, &b, &l);
	if (r == -ENOMEM && !strcmp(args.heap, "cma")) {
		printf("# %s %ux%u: the CMA area is too small (%s)\n", fcc(fourcc), w, h,
		       test_errname(r));
		return;
	}
	assert_int_equal(r, 0);
	assert_int_equal(dmaio_buf_size(b), l.size);
	assert_int_equal(l.num_planes, want.num_planes);
	if (dmaio_buf_kind(b) == DMAIO_BUF_DRM) {
		/* the driver's pitch: at least the stride we would pick, the planes derived from it */
		assert_true(l.planes[0].stride >= want.planes[0].stride);
		printf("# drm %s %ux%u: pitch %u (ours %u), size %llu\n", fcc(fourcc), w, h,
		       l.planes[0].stride, want.planes[0].stride, (unsigned long long)l.size);
	} else {
		assert_memory_equal(&l, &want, sizeof(l));
	}
	assert_int_equal(dmaio_map(b, &addr), 0);
	p = addr;
	assert_int_equal(dmaio_sync_begin(b, DMAIO_SYNC_WRITE), 0);
	memset(p, 0x5a, l.size);
	for (unsigned i = 0; i < l.num_planes; i++)
		pat_fill(p + l.planes[i].offset, l.planes[i].size, 11 + i, 0);
	assert_int_equal(dmaio_sync_end(b, DMAIO_SYNC_WRITE), 0);
	fd = test_tmpfile(test_dir(), path, sizeof(path));
	assert_true(fd >= 0);
	assert_int_equal(dmaio_write_file(b, 0, fd, 0, l.size, 0), (ssize_t)l.size);
	for (unsigned i = 0; i < l.num_planes; i++)
		assert_int_equal(file_check_pattern(fd, (off_t)l.planes[i].offset, l.planes[i].size,
						    11 + i, 0), -1);
	/* and back into a second image of the same layout */
	assert_int_equal(dmaio_alloc_image(NULL, &d, &o, &b2, &want), 0);
	assert_memory_equal(&l, &want, sizeof(l));
	assert_int_equal(dmaio_read_file(b2, 0, fd, 0, l.size, 0), (ssize_t)l.size);
	assert_int_equal(dmaio_map(b2, &addr), 0);
	p2 = addr;
	assert_int_equal(dmaio_sync_begin(b2, DMAIO_SYNC_READ), 0);
	assert_int_equal(mem_first_diff(p, p2, l.size), -1);
	assert_int_equal(dmaio_sync_end(b2, DMAIO_SYNC_READ), 0);
	close(fd);
	unlink(path);
	dmaio_free(b2);
	dmaio_free(b);
}

static void test_image_alloc(void **state)
{
	struct dmaio_buf *b;

	(void)state;
	/* 77 where the provider is missing on the host; in the VM a failure */
	assert_rc_equal(test_alloc_or_skip(NULL, args.heap_name, 4096, 0, &b), 0);
	dmaio_free(b);
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
	struct dmaio_alloc_opts o;
	struct dmaio_buf *b = NULL;

	(void)state;
	/* 77 where the provider is missing on the host; in the VM a failure */
	assert_rc_equal(test_alloc_or_skip(NULL, args.heap_name, 4096, 0, &b), 0);
	dmaio_free(b);
	memset(&o, 0, sizeof(o));
	o.providers = list;
	assert_int_equal(dmaio_alloc_ex(NULL, 8192, &o, &b), 0);
	assert_string_equal(dmaio_buf_provider(b), args.heap_name);
	assert_int_equal(dmaio_buf_size(b), 8192);
	dmaio_free(b);
	b = NULL;
	o.providers = none;
	assert_int_equal(dmaio_alloc_ex(NULL, 8192, &o, &b), -ENOENT);
	assert_null(b);
}

/* Contiguous memory: the CMA heap answers heap NULL with DMAIO_ALLOC_CONTIGUOUS; more than the
 * CMA area is refused at once; providers that do not give it are refused; no uncached heap in
 * mainline kernels. Run with --heap cma. */
static void test_contiguous(void **state)
{
	struct dmaio_alloc_opts o;
	struct dmaio_heap_info hi[32];
	struct dmaio_buf *b = NULL;
	const char *sys[] = { "system", NULL };
	int n, fds;

	(void)state;
	if (strcmp(args.heap, "cma")) {
		skip();
		return;
	}
	n = dmaio_probe_heaps(NULL, hi, ARRAY_SIZE(hi));
	assert_true(n > 0);
	for (int i = 0; i < n && i < (int)ARRAY_SIZE(hi); i++) {
		printf("# heap %s: contiguous %d uncached %d\n", hi[i].name, hi[i].contiguous,
		       hi[i].uncached);
		/* the CMA heap under test and the other names the default area has (7.3 shows it
		 * as default_cma_region and as reserved); the VM has no other contiguous heap */
		if (!strcmp(hi[i].name, "system"))
			assert_int_equal(hi[i].contiguous, 0);
		else if (!strcmp(hi[i].name, args.heap_name) || !strcmp(hi[i].name, "reserved") ||
			 !strcmp(hi[i].name, "default_cma_region") || !strcmp(hi[i].name, "linux,cma"))
			assert_int_equal(hi[i].contiguous, 1);
	}
	memset(&o, 0, sizeof(o));
	o.flags = DMAIO_ALLOC_CONTIGUOUS;
	o.name = "contig";
	assert_int_equal(dmaio_alloc_ex(NULL, 1 * MiB, &o, &b), 0);
	assert_string_equal(dmaio_buf_provider(b), args.heap_name);
	dmaio_free(b);
	b = NULL;
	assert_int_equal(dmaio_alloc(NULL, args.heap_name, 1 * MiB, DMAIO_ALLOC_CONTIGUOUS, &b), 0);
	dmaio_free(b);
	b = NULL;
	/* the system heap is not contiguous */
	o.providers = sys;
	assert_int_equal(dmaio_alloc_ex(NULL, 1 * MiB, &o, &b), -EOPNOTSUPP);
	assert_int_equal(dmaio_alloc(NULL, "system", 1 * MiB, DMAIO_ALLOC_CONTIGUOUS, &b),
			 -EOPNOTSUPP);
	assert_int_equal(dmaio_alloc(NULL, "udmabuf", 1 * MiB, DMAIO_ALLOC_CONTIGUOUS, &b),
			 -EOPNOTSUPP);
	assert_null(b);
	/* too large for the CMA area (and not the machine): refused at once, nothing taken */
	fds = test_count_fds();
	o.providers = NULL;
	{
		unsigned long long kb = (unsigned long long)test_meminfo("CmaTotal");

		assert_true(test_meminfo("CmaTotal") > 0);
		printf("# CmaTotal %llu MiB: asking for %llu MiB\n", kb >> 10, (kb >> 10) + 1);
		assert_int_equal(dmaio_alloc_ex(NULL, (size_t)(kb + 1024) << 10, &o, &b), -ENOMEM);
		assert_null(b);
	}
	/* an image too large for it, the same */
	{
		struct dmaio_image_desc d = desc(DRM_FORMAT_XRGB8888, 7680, 4320, 0, 0); /* 126 MiB */
		struct dmaio_image_layout l;

		assert_int_equal(dmaio_alloc_image(NULL, &d, &o, &b, &l), -ENOMEM);
		assert_null(b);
	}
	assert_int_equal(test_count_fds(), fds);
	/* mainline has no uncached heap */
	o.flags = DMAIO_ALLOC_UNCACHED;
	assert_int_equal(dmaio_alloc_ex(NULL, 1 * MiB, &o, &b), -ENODEV);
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
	assert_rc_equal(dmaio_ctx_new(&c), 0);
	r = dmaio_alloc(c, args.heap_name, 4096, 0, &b);
	printf("# unprivileged alloc from %s: %s\n", args.heap_name, test_errname(r));
	assert_rc_equal(r, -EACCES);
	r = dmaio_alloc(c, NULL, 4096, 0, &b);
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
