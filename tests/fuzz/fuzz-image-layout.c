/* SPDX-License-Identifier: MIT */
/*
 * fuzz-image-layout: dmaio_image_get_layout() with a fourcc, width, height, modifier, alignments,
 * flags and struct sizes from the input. Checked: a refusal is one of the documented errnos with
 * a reason; an accepted layout echoes the description, has 1 to 4 planes (zeros past them),
 * planes in order inside total_size without overflow or overlap, strides and offsets aligned as
 * asked, and, for the formats of the table below (written from the header's rule: V4L2's
 * single-buffer layout), the stride, plane count and lines of every plane; a description this
 * table calls valid and small is never refused.
 */
#include <errno.h>
#include <stdbool.h>
#include <string.h>

#include <dmaio.h>

#include "fuzz.h"

struct fmt {
	uint32_t fourcc;
	uint8_t planes;
	uint8_t cpp[3];  /* bytes per pixel of each plane (a subsampled plane: per chroma sample) */
	uint8_t hsub, vsub;
};

#define F DMAIO_FOURCC
static const struct fmt fmts[] = {
	{ F('N', 'V', '1', '2'), 2, { 1, 2 }, 2, 2 },    { F('N', 'V', '2', '1'), 2, { 1, 2 }, 2, 2 },
	{ F('N', 'V', '1', '6'), 2, { 1, 2 }, 2, 1 },    { F('N', 'V', '6', '1'), 2, { 1, 2 }, 2, 1 },
	{ F('N', 'V', '2', '4'), 2, { 1, 2 }, 1, 1 },    { F('N', 'V', '4', '2'), 2, { 1, 2 }, 1, 1 },
	{ F('Y', 'U', '1', '2'), 3, { 1, 1, 1 }, 2, 2 }, { F('Y', 'V', '1', '2'), 3, { 1, 1, 1 }, 2, 2 },
	{ F('Y', 'U', '1', '6'), 3, { 1, 1, 1 }, 2, 1 }, { F('Y', 'U', '2', '4'), 3, { 1, 1, 1 }, 1, 1 },
	{ F('Y', 'U', 'Y', 'V'), 1, { 2 }, 2, 1 },       { F('Y', 'V', 'Y', 'U'), 1, { 2 }, 2, 1 },
	{ F('U', 'Y', 'V', 'Y'), 1, { 2 }, 2, 1 },       { F('V', 'Y', 'U', 'Y'), 1, { 2 }, 2, 1 },
	{ F('P', '0', '1', '0'), 2, { 2, 4 }, 2, 2 },    { F('P', '2', '1', '0'), 2, { 2, 4 }, 2, 1 },
	{ F('R', 'G', '1', '6'), 1, { 2 }, 1, 1 },       { F('B', 'G', '1', '6'), 1, { 2 }, 1, 1 },
	{ F('R', 'G', '2', '4'), 1, { 3 }, 1, 1 },       { F('B', 'G', '2', '4'), 1, { 3 }, 1, 1 },
	{ F('X', 'R', '2', '4'), 1, { 4 }, 1, 1 },       { F('X', 'B', '2', '4'), 1, { 4 }, 1, 1 },
	{ F('R', 'X', '2', '4'), 1, { 4 }, 1, 1 },       { F('B', 'X', '2', '4'), 1, { 4 }, 1, 1 },
	{ F('A', 'R', '2', '4'), 1, { 4 }, 1, 1 },       { F('A', 'B', '2', '4'), 1, { 4 }, 1, 1 },
	{ F('R', 'A', '2', '4'), 1, { 4 }, 1, 1 },       { F('B', 'A', '2', '4'), 1, { 4 }, 1, 1 },
	{ F('X', 'R', '3', '0'), 1, { 4 }, 1, 1 },       { F('A', 'R', '3', '0'), 1, { 4 }, 1, 1 },
	{ F('R', '8', ' ', ' '), 1, { 1 }, 1, 1 },       { F('R', '1', '6', ' '), 1, { 2 }, 1, 1 },
	{ F('G', 'R', '8', '8'), 1, { 2 }, 1, 1 },
};
#undef F
#define NFMTS (sizeof(fmts) / sizeof(fmts[0]))

static const struct fmt *fmt_of(uint32_t fourcc)
{
	for (size_t i = 0; i < NFMTS; i++)
		if (fmts[i].fourcc == fourcc)
			return &fmts[i];
	return NULL;
}

static bool align_ok(uint32_t a, uint32_t max)
{
	return a <= 1 || (!(a & (a - 1)) && a <= max);
}

/* a field: small (the usual) or raw (the edges), as the selector bit says */
static uint32_t pick(struct fz *in, bool raw, uint32_t small_mod)
{
	uint32_t v = fz_u32(in);

	return raw ? v : v % small_mod;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct fz in = { data, size };
	struct {
		struct dmaio_image_desc d;
		unsigned char tail[8];
	} dd;
	struct {
		struct dmaio_image_layout l;
		unsigned char tail[16];
	} ll;
	struct dmaio_reason why = { .struct_size = sizeof(why) };
	struct dmaio_image_desc *d = &dd.d;
	struct dmaio_image_layout *l = &ll.l;
	uint16_t sel = fz_u16(&in);
	uint8_t fsel = fz_u8(&in);
	const struct fmt *f;
	bool expect_ok = true, big = false;
	uint32_t lsize;
	int r;

	memset(&dd, 0, sizeof(dd));
	memset(&ll, 0x5a, sizeof(ll));
	d->fourcc = (sel & 1) ? fz_u32(&in) : fmts[fsel % NFMTS].fourcc;
	d->width = pick(&in, sel & 2, 8200);
	d->height = pick(&in, sel & 4, 8200);
	d->modifier = (sel & 8) ? fz_u64(&in) : DMAIO_MOD_LINEAR;
	d->stride_align = (sel & 16) ? fz_u32(&in) : (1u << (fz_u8(&in) % 14)) >> 1;
	d->plane_align = (sel & 32) ? fz_u32(&in) : (1u << (fz_u8(&in) % 22)) >> 1;
	d->flags = (sel & 64) ? fz_u32(&in) : 0;
	d->pad0 = (sel & 128) ? fz_u32(&in) : 0;
	/* the struct sizes: the 1.0 one, larger (its tail zero or not), smaller */
	switch ((sel >> 8) & 3) {
	case 0: d->struct_size = sizeof(*d); break;
	case 1: d->struct_size = sizeof(dd); break;
	case 2: d->struct_size = sizeof(dd), dd.tail[fz_u8(&in) % 8] = fz_u8(&in); break;
	default: d->struct_size = fz_u8(&in) % (uint32_t)sizeof(*d); break;
	}
	lsize = (sel & 0x400) ? sizeof(ll) : sizeof(*l);
	if ((sel & 0x1800) == 0x1800)
		lsize = fz_u8(&in) % (uint32_t)sizeof(*l);
	l->struct_size = lsize;
	if ((sel & 0x6000) == 0x6000)
		why.struct_size = fz_u8(&in) % (uint32_t)sizeof(why);

	/* what the header's rules say of this description (NULL f: not a supported format) */
	f = fmt_of(d->fourcc);
	if (d->struct_size < sizeof(*d) || lsize < sizeof(*l) || why.struct_size < sizeof(why) ||
	    !d->width || !d->height || d->flags || d->pad0 || !align_ok(d->stride_align, 4096) ||
	    !align_ok(d->plane_align, 1u << 20) || !f || d->modifier != DMAIO_MOD_LINEAR ||
	    d->width % f->hsub || (f->planes > 1 && d->height % f->vsub))
		expect_ok = false;
	/* a byte past the known struct that is not zero: -E2BIG */
	if (d->struct_size > sizeof(*d))
		for (int k = 0; k < 8; k++)
			if (dd.tail[k])
				expect_ok = false;
	/* an aligned stride may pass 32 bits (a derived one too: NV24's chroma is twice the
	 * first), or the planes 63 bits (a bound above the sum) */
	if (f) {
		uint64_t s0 = (uint64_t)d->width * f->cpp[0] + 8192;

		for (unsigned i = 0; i < f->planes; i++)
			if ((i ? s0 * f->cpp[i] / ((uint64_t)f->cpp[0] * f->hsub) : s0) > UINT32_MAX)
				big = true;
		if ((unsigned __int128)s0 * 2 * d->height * 3 + (4u << 20) >
		    (unsigned __int128)INT64_MAX)
			big = true;
	}

	r = dmaio_image_get_layout(d, l, why.struct_size >= sizeof(why) ? &why : NULL);
	if (why.struct_size < sizeof(why)) {
		/* no reason given: ask again with one (a reason too small is -EINVAL) */
		struct dmaio_reason w2 = { .struct_size = why.struct_size };

		FUZZ_CHECK(dmaio_image_get_layout(d, l, &w2) == -EINVAL,
			   "a reason of struct_size %u accepted", why.struct_size);
		return 0;
	}
	if (r < 0) {
		FUZZ_CHECK(r == -EINVAL || r == -E2BIG || r == -EDOM || r == -EOPNOTSUPP ||
				   r == -EPROTONOSUPPORT || r == -EOVERFLOW,
			   "an errno the header does not name: %d", r);
		FUZZ_CHECK(why.error == r && why.text[0], "refused (%d) without a reason (%d, \"%s\")",
			   r, why.error, why.text);
		FUZZ_CHECK(!expect_ok || (r == -EOVERFLOW && big),
			   "%.4s %ux%u stride_align %u plane_align %u refused: %d (%s)",
			   (const char *)&d->fourcc, d->width, d->height, d->stride_align,
			   d->plane_align, r, why.text);
		return 0;
	}
	FUZZ_CHECK(r == 0, "result %d", r);
	FUZZ_CHECK(expect_ok, "accepted a description the rules refuse: %.4s %ux%u mod %llx "
		   "align %u/%u flags %x pad %x size %u/%u", (const char *)&d->fourcc, d->width,
		   d->height, (unsigned long long)d->modifier, d->stride_align, d->plane_align,
		   d->flags, d->pad0, d->struct_size, lsize);
	FUZZ_CHECK(why.error == 0, "accepted with a reason error %d", why.error);
	FUZZ_CHECK(l->struct_size == lsize, "struct_size changed to %u", l->struct_size);
	if (lsize > sizeof(*l))
		for (size_t k = 0; k < sizeof(ll.tail); k++)
			FUZZ_CHECK(ll.tail[k] == 0, "byte %zu past the layout not zeroed", k);
	FUZZ_CHECK(l->fourcc == d->fourcc && l->width == d->width && l->height == d->height &&
			   l->modifier == d->modifier && l->pad0 == 0,
		   "the description not echoed");
	FUZZ_CHECK(l->num_planes == f->planes, "%u planes, %u expected", l->num_planes, f->planes);
	FUZZ_CHECK(l->total_size <= (uint64_t)INT64_MAX, "total_size %llu past 63 bits",
		   (unsigned long long)l->total_size);

	uint64_t end = 0;
	uint64_t sa = d->stride_align > 1 ? d->stride_align : 1;
	uint64_t pa = d->plane_align > 1 ? d->plane_align : 1;

	for (uint32_t i = 0; i < DMAIO_IMAGE_MAX_PLANES; i++) {
		uint64_t lines = i ? d->height / f->vsub : d->height, stride, pend;

		if (i >= l->num_planes) {
			FUZZ_CHECK(!l->strides[i] && !l->offsets[i] && !l->plane_sizes[i],
				   "plane %u past num_planes not zero", i);
			continue;
		}
		stride = l->strides[i];
		FUZZ_CHECK(stride > 0 && stride % sa == 0, "plane %u: stride %llu, align %llu", i,
			   (unsigned long long)stride, (unsigned long long)sa);
		FUZZ_CHECK(l->offsets[i] % pa == 0, "plane %u: offset %llu, align %llu", i,
			   (unsigned long long)l->offsets[i], (unsigned long long)pa);
		if (i == 0) {
			uint64_t min = (uint64_t)d->width * f->cpp[0];

			FUZZ_CHECK(stride >= min, "stride %llu below width x cpp %llu",
				   (unsigned long long)stride, (unsigned long long)min);
			if (sa == 1)
				FUZZ_CHECK(stride == min, "stride %llu, V4L2's %llu",
					   (unsigned long long)stride, (unsigned long long)min);
			FUZZ_CHECK(l->offsets[0] == 0, "plane 0 at %llu",
				   (unsigned long long)l->offsets[0]);
		} else {
			/* derived: stride0 * cpp[i] / (cpp[0] * hsub), exactly */
			FUZZ_CHECK(stride * f->cpp[0] * f->hsub == (uint64_t)l->strides[0] * f->cpp[i],
				   "plane %u: stride %llu from stride0 %u", i,
				   (unsigned long long)stride, l->strides[0]);
			FUZZ_CHECK(l->offsets[i] >= end, "plane %u at %llu overlaps the one before (%llu)",
				   i, (unsigned long long)l->offsets[i], (unsigned long long)end);
			if (pa == 1)
				FUZZ_CHECK(l->offsets[i] == end, "plane %u at %llu, not back to back (%llu)",
					   i, (unsigned long long)l->offsets[i], (unsigned long long)end);
		}
		FUZZ_CHECK(!__builtin_mul_overflow(stride, lines, &pend) && pend == l->plane_sizes[i],
			   "plane %u: size %llu, stride %llu x %llu lines", i,
			   (unsigned long long)l->plane_sizes[i], (unsigned long long)stride,
			   (unsigned long long)lines);
		FUZZ_CHECK(!__builtin_add_overflow(l->offsets[i], l->plane_sizes[i], &pend) &&
				   pend <= l->total_size,
			   "plane %u [%llu, +%llu) past total_size %llu", i,
			   (unsigned long long)l->offsets[i], (unsigned long long)l->plane_sizes[i],
			   (unsigned long long)l->total_size);
		end = pend;
	}
	FUZZ_CHECK(end == l->total_size, "total_size %llu, the last plane ends at %llu",
		   (unsigned long long)l->total_size, (unsigned long long)end);
	return 0;
}
