/* SPDX-License-Identifier: MIT */
/*
 * dmaiosrc: raw video frames from a file into dma-bufs through libdmaio.
 *
 * The file holds frames one after the other in GStreamer's default layout for the negotiated
 * caps (what filesink or dmaiosink writes from system-memory video), or where an index file
 * (dmaiosink's index-location: "offset pts size" per line) says. Each frame is read into an
 * image buffer of the element's own pool, allocated by dmaio_buf_alloc_image() from the provider
 * asked (a dma-heap, udmabuf, ...; the library's order by default): one range per plane when the
 * buffer's stride is the file's, one per line otherwise, all queued at once. The buffer goes
 * downstream as a GstDmaBufMemory (a memfd buffer, where no dma-buf provider exists, as a plain
 * fd memory) with a GstVideoMeta giving the buffer's strides and offsets; it comes back to the
 * pool when downstream drops it. Frames are stamped from the index or from the framerate
 * (frame i at i / framerate); seeking goes to the first frame at or after the position.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <gst/gst.h>
#include <gst/base/gstpushsrc.h>
#include <gst/allocators/gstdmabuf.h>
#include <gst/allocators/gstfdmemory.h>
#include <gst/video/video.h>

#include <dmaio.h>

#include "gstdmaio.h"

GST_DEBUG_CATEGORY_STATIC(dmaiosrc_debug);
#define GST_CAT_DEFAULT dmaiosrc_debug

#define POOL_MAX 32               /* pool-size's maximum */
#define SLOTS_MAX 1024            /* buffers at most, grown past pool-size ... */
#define GROW_BYTES (256ull << 20) /* ... while they take no more than this */
#define DEFAULT_POOL 4
#define QDEPTH 8                  /* the read queue's depth */

enum {
	PROP_0,
	PROP_LOCATION,
	PROP_INDEX_LOCATION,
	PROP_PROVIDER,
	PROP_POOL_SIZE,
};

struct slot {
	struct dmaio_buf *buf;
	int fd;
	bool out;          /* downstream holds it */
	struct _GstDmaioSrc *owner;
};

struct entry {
	uint64_t off, size;
	GstClockTime pts;
};

struct _GstDmaioSrc {
	GstPushSrc parent;

	gchar *location;
	gchar *index_location;
	gchar *provider;
	guint pool_size;

	struct dmaio_ctx *ctx;
	struct dmaio_queue *q;
	int fd;
	struct dmaio_file *file;
	uint64_t file_size;
	struct entry *index;
	guint64 nindex;

	GstVideoInfo info;
	gboolean have_info;
	struct dmaio_image_layout layout;
	struct slot slots[SLOTS_MAX];
	guint nslots;
	GMutex lock;
	GCond cond;
	gboolean flushing;
	GstAllocator *dmabuf_alloc, *fd_alloc;
	guint64 next;      /* the next frame */
};

G_DEFINE_TYPE(GstDmaioSrc, gst_dmaio_src, GST_TYPE_PUSH_SRC)

static GstStaticPadTemplate src_template = GST_STATIC_PAD_TEMPLATE(
	"src", GST_PAD_SRC, GST_PAD_ALWAYS,
	GST_STATIC_CAPS(GST_VIDEO_CAPS_MAKE_WITH_FEATURES(GST_CAPS_FEATURE_MEMORY_DMABUF,
							  "{ NV12, NV21, NV16, NV61, NV24, P010_10LE, "
							  "I420, YV12, Y42B, Y444, YUY2, YVYU, UYVY, "
							  "VYUY, RGB16, BGR16, RGB, BGR, BGRx, RGBx, "
							  "xRGB, xBGR, BGRA, RGBA, ARGB, ABGR, GRAY8, "
							  "GRAY16_LE }") "; "
			GST_VIDEO_CAPS_MAKE("{ NV12, NV21, NV16, NV61, NV24, P010_10LE, I420, YV12, "
					    "Y42B, Y444, YUY2, YVYU, UYVY, VYUY, RGB16, BGR16, RGB, "
					    "BGR, BGRx, RGBx, xRGB, xBGR, BGRA, RGBA, ARGB, ABGR, "
					    "GRAY8, GRAY16_LE }")));

/* GStreamer's format names its bytes in memory order; DRM's fourcc names a little-endian word */
static uint32_t drm_fourcc(GstVideoFormat f)
{
	switch (f) {
	case GST_VIDEO_FORMAT_NV12: return DMAIO_FOURCC('N', 'V', '1', '2');
	case GST_VIDEO_FORMAT_NV21: return DMAIO_FOURCC('N', 'V', '2', '1');
	case GST_VIDEO_FORMAT_NV16: return DMAIO_FOURCC('N', 'V', '1', '6');
	case GST_VIDEO_FORMAT_NV61: return DMAIO_FOURCC('N', 'V', '6', '1');
	case GST_VIDEO_FORMAT_NV24: return DMAIO_FOURCC('N', 'V', '2', '4');
	case GST_VIDEO_FORMAT_P010_10LE: return DMAIO_FOURCC('P', '0', '1', '0');
	case GST_VIDEO_FORMAT_I420: return DMAIO_FOURCC('Y', 'U', '1', '2');
	case GST_VIDEO_FORMAT_YV12: return DMAIO_FOURCC('Y', 'V', '1', '2');
	case GST_VIDEO_FORMAT_Y42B: return DMAIO_FOURCC('Y', 'U', '1', '6');
	case GST_VIDEO_FORMAT_Y444: return DMAIO_FOURCC('Y', 'U', '2', '4');
	case GST_VIDEO_FORMAT_YUY2: return DMAIO_FOURCC('Y', 'U', 'Y', 'V');
	case GST_VIDEO_FORMAT_YVYU: return DMAIO_FOURCC('Y', 'V', 'Y', 'U');
	case GST_VIDEO_FORMAT_UYVY: return DMAIO_FOURCC('U', 'Y', 'V', 'Y');
	case GST_VIDEO_FORMAT_VYUY: return DMAIO_FOURCC('V', 'Y', 'U', 'Y');
	case GST_VIDEO_FORMAT_RGB16: return DMAIO_FOURCC('R', 'G', '1', '6');
	case GST_VIDEO_FORMAT_BGR16: return DMAIO_FOURCC('B', 'G', '1', '6');
	case GST_VIDEO_FORMAT_RGB: return DMAIO_FOURCC('B', 'G', '2', '4');
	case GST_VIDEO_FORMAT_BGR: return DMAIO_FOURCC('R', 'G', '2', '4');
	case GST_VIDEO_FORMAT_BGRx: return DMAIO_FOURCC('X', 'R', '2', '4');
	case GST_VIDEO_FORMAT_RGBx: return DMAIO_FOURCC('X', 'B', '2', '4');
	case GST_VIDEO_FORMAT_xRGB: return DMAIO_FOURCC('B', 'X', '2', '4');
	case GST_VIDEO_FORMAT_xBGR: return DMAIO_FOURCC('R', 'X', '2', '4');
	case GST_VIDEO_FORMAT_BGRA: return DMAIO_FOURCC('A', 'R', '2', '4');
	case GST_VIDEO_FORMAT_RGBA: return DMAIO_FOURCC('A', 'B', '2', '4');
	case GST_VIDEO_FORMAT_ARGB: return DMAIO_FOURCC('B', 'A', '2', '4');
	case GST_VIDEO_FORMAT_ABGR: return DMAIO_FOURCC('R', 'A', '2', '4');
	case GST_VIDEO_FORMAT_GRAY8: return DMAIO_FOURCC('R', '8', ' ', ' ');
	case GST_VIDEO_FORMAT_GRAY16_LE: return DMAIO_FOURCC('R', '1', '6', ' ');
	default: return 0;
	}
}

/* ---- the pool ------------------------------------------------------------------------------ */
static void pool_free(GstDmaioSrc *s)
{
	g_mutex_lock(&s->lock);
	/* buffers still downstream keep their dma-buf (the memory holds a descriptor of its own) */
	for (guint i = 0; i < s->nslots; i++) {
		dmaio_buf_free(s->slots[i].buf);
		s->slots[i].buf = NULL;
	}
	s->nslots = 0;
	g_mutex_unlock(&s->lock);
}

/* One more image buffer in the pool (the caller holds the lock or is the only thread). */
static gboolean pool_add(GstDmaioSrc *s)
{
	struct dmaio_image_desc d = { .struct_size = sizeof(d), .stride_align = 4 };
	const char *provs[2] = { s->provider, NULL };
	struct dmaio_alloc_opts o = { .struct_size = sizeof(o),
				      .flags = DMAIO_ALLOC_ALLOW_NON_DMABUF,
				      .providers = s->provider ? provs : NULL, .name = "dmaiosrc" };
	int r;

	d.width = GST_VIDEO_INFO_WIDTH(&s->info);
	d.height = GST_VIDEO_INFO_HEIGHT(&s->info);
	d.fourcc = drm_fourcc(GST_VIDEO_INFO_FORMAT(&s->info));
	{
		struct dmaio_reason why = { .struct_size = sizeof(why) };
		struct dmaio_image_layout l = { .struct_size = sizeof(l) };
		struct dmaio_buf *b;
		guint i = s->nslots;

		r = dmaio_buf_alloc_image(s->ctx, &d, &o, &b, &l, &why);
		if (r) {
			GST_ELEMENT_ERROR(s, RESOURCE, NO_SPACE_LEFT,
					  ("cannot allocate a %ux%u %s image buffer%s%s: %s", d.width,
					   d.height, gst_video_format_to_string(
						   GST_VIDEO_INFO_FORMAT(&s->info)),
					   s->provider ? " from " : "", s->provider ? s->provider : "",
					   why.text[0] ? why.text : g_strerror(-r)), ("errno %d", -r));
			return FALSE;
		}
		s->layout = l;
		s->slots[i] = (struct slot){ .buf = b, .fd = dmaio_buf_fd(b), .owner = s };
		s->nslots++;
	}
	GST_INFO_OBJECT(s, "%u buffers of %" G_GUINT64_FORMAT " bytes from %s", s->nslots,
			s->layout.total_size, dmaio_buf_provider(s->slots[0].buf));
	return TRUE;
}

static gboolean pool_alloc(GstDmaioSrc *s)
{
	for (guint i = 0; i < s->pool_size; i++)
		if (!pool_add(s)) {
			pool_free(s);
			return FALSE;
		}
	return TRUE;
}

/* A buffer back in the pool: a waiting create() may take it. */
static void slot_put(GstDmaioSrc *s, struct slot *sl)
{
	g_mutex_lock(&s->lock);
	sl->out = false;
	g_cond_broadcast(&s->cond);
	g_mutex_unlock(&s->lock);
}

/* downstream dropped the last reference of a buffer pushed from this slot */
static void slot_back(gpointer data, GstMiniObject *obj)
{
	struct slot *sl = data;
	GstDmaioSrc *s = sl->owner;

	(void)obj;
	slot_put(s, sl);
	gst_object_unref(s);
}

/* A free buffer; none free: one more while the pool may grow (downstream elements that batch,
 * like filesink's 64 KiB buffering of small frames, hold many), else wait for one to come
 * back. NULL when flushing, or when growing failed (the element error is posted). */
static struct slot *slot_get(GstDmaioSrc *s)
{
	struct slot *got = NULL;

	g_mutex_lock(&s->lock);
	while (!got && !s->flushing) {
		for (guint i = 0; i < s->nslots && !got; i++)
			if (!s->slots[i].out)
				got = &s->slots[i];
		if (got)
			break;
		if (s->nslots < SLOTS_MAX &&
		    (s->nslots + 1) * s->layout.total_size <= GROW_BYTES) {
			if (!pool_add(s))
				break;
			continue;
		}
		g_cond_wait(&s->cond, &s->lock);
	}
	if (got)
		got->out = true;
	g_mutex_unlock(&s->lock);
	return got;
}

/* ---- files --------------------------------------------------------------------------------- */
static gboolean index_load(GstDmaioSrc *s)
{
	FILE *f = fopen(s->index_location, "re");
	guint64 cap = 0;
	char line[256];

	if (!f) {
		int e = errno;

		GST_ELEMENT_ERROR(s, RESOURCE, OPEN_READ, ("cannot open the index \"%s\": %s",
							   s->index_location, g_strerror(e)), (NULL));
		return FALSE;
	}
	while (fgets(line, sizeof(line), f)) {
		guint64 off, size;
		gint64 pts;

		if (sscanf(line, "%" G_GUINT64_FORMAT " %" G_GINT64_FORMAT " %" G_GUINT64_FORMAT,
			   &off, &pts, &size) != 3 || off + size > s->file_size || off + size < off) {
			GST_ELEMENT_ERROR(s, STREAM, DECODE,
					  ("index \"%s\", line %" G_GUINT64_FORMAT ": not \"offset pts "
					   "size\" inside the file's %" G_GUINT64_FORMAT " bytes",
					   s->index_location, s->nindex + 1, s->file_size), (NULL));
			fclose(f);
			return FALSE;
		}
		if (s->nindex == cap) {
			cap = cap ? cap * 2 : 256;
			s->index = g_renew(struct entry, s->index, cap);
		}
		s->index[s->nindex++] = (struct entry){ off, size,
						       pts < 0 ? GST_CLOCK_TIME_NONE : (GstClockTime)pts };
	}
	fclose(f);
	return TRUE;
}

static gboolean src_start(GstBaseSrc *bs)
{
	GstDmaioSrc *s = GST_DMAIO_SRC(bs);
	struct stat st;
	int r;

	if (!s->location) {
		GST_ELEMENT_ERROR(s, RESOURCE, NOT_FOUND, ("no location set"), (NULL));
		return FALSE;
	}
	s->fd = open(s->location, O_RDONLY | O_CLOEXEC);
	if (s->fd < 0 || fstat(s->fd, &st)) {
		int e = errno;

		GST_ELEMENT_ERROR(s, RESOURCE, OPEN_READ, ("cannot open \"%s\": %s", s->location,
							   g_strerror(e)), (NULL));
		return FALSE;
	}
	s->file_size = (uint64_t)st.st_size;
	r = dmaio_ctx_new(0, &s->ctx);
	if (!r)
		r = dmaio_file_open(s->ctx, s->fd, 0, &s->file);
	if (!r)
		r = dmaio_queue_new(s->ctx, QDEPTH, 0, &s->q);
	if (r) {
		GST_ELEMENT_ERROR(s, RESOURCE, FAILED, ("libdmaio: %s", g_strerror(-r)), (NULL));
		return FALSE;
	}
	if (s->index_location && !index_load(s))
		return FALSE;
	s->dmabuf_alloc = gst_dmabuf_allocator_new();
	s->fd_alloc = gst_fd_allocator_new();
	s->next = 0;
	s->flushing = FALSE;
	s->have_info = FALSE;
	return TRUE;
}

static gboolean src_stop(GstBaseSrc *bs)
{
	GstDmaioSrc *s = GST_DMAIO_SRC(bs);

	pool_free(s);
	dmaio_queue_free(s->q);
	s->q = NULL;
	dmaio_file_close(s->file);
	s->file = NULL;
	if (s->fd >= 0)
		close(s->fd);
	s->fd = -1;
	dmaio_ctx_free(s->ctx);
	s->ctx = NULL;
	g_free(s->index);
	s->index = NULL;
	s->nindex = 0;
	g_clear_object(&s->dmabuf_alloc);
	g_clear_object(&s->fd_alloc);
	return TRUE;
}

static gboolean src_set_caps(GstBaseSrc *bs, GstCaps *caps)
{
	GstDmaioSrc *s = GST_DMAIO_SRC(bs);

	if (!gst_video_info_from_caps(&s->info, caps))
		return FALSE;
	if (!drm_fourcc(GST_VIDEO_INFO_FORMAT(&s->info)))
		return FALSE;
	pool_free(s);
	s->have_info = TRUE;
	return pool_alloc(s);
}

static guint64 frame_count(GstDmaioSrc *s)
{
	return s->index ? s->nindex : s->file_size / GST_VIDEO_INFO_SIZE(&s->info);
}

static GstClockTime frame_pts(GstDmaioSrc *s, guint64 i)
{
	if (s->index)
		return s->index[i].pts;
	if (!GST_VIDEO_INFO_FPS_N(&s->info))
		return GST_CLOCK_TIME_NONE;
	return gst_util_uint64_scale(i, GST_SECOND * GST_VIDEO_INFO_FPS_D(&s->info),
				     GST_VIDEO_INFO_FPS_N(&s->info));
}

/* Read frame i (GStreamer's default layout in the file) into the slot's buffer (its layout). */
static int read_frame(GstDmaioSrc *s, guint64 i, struct slot *sl)
{
	uint64_t base = s->index ? s->index[i].off : i * GST_VIDEO_INFO_SIZE(&s->info);
	/* a batch fits the queue: depth QDEPTH holds QDEPTH x DMAIO_QUEUE_RANGES_PER_DEPTH ranges */
	struct dmaio_io io[QDEPTH * DMAIO_QUEUE_RANGES_PER_DEPTH];
	struct dmaio_done d[QDEPTH * DMAIO_QUEUE_RANGES_PER_DEPTH];
	unsigned n = 0, pending = 0;
	int err = 0;

	d[0].struct_size = sizeof(d[0]);
	for (guint p = 0; p < GST_VIDEO_INFO_N_PLANES(&s->info); p++) {
		guint fstride = GST_VIDEO_INFO_PLANE_STRIDE(&s->info, p);
		guint lstride = s->layout.strides[p];
		guint rows = GST_VIDEO_INFO_COMP_HEIGHT(&s->info, p == 0 ? 0 : (p == 1 ? 1 : 2));
		uint64_t foff = base + GST_VIDEO_INFO_PLANE_OFFSET(&s->info, p);
		bool whole = fstride == lstride;

		/* per plane when the strides agree, else per line (the shorter stride's bytes) */
		for (guint row = 0; row < (whole ? 1 : rows); row++) {
			io[n] = (struct dmaio_io){
				.struct_size = sizeof(struct dmaio_io), .op = DMAIO_OP_READ,
				.file = s->file, .file_off = foff + (uint64_t)row * fstride,
				.buf = sl->buf,
				.buf_off = s->layout.offsets[p] + (uint64_t)row * lstride,
				.len = whole ? (uint64_t)fstride * rows : MIN(fstride, lstride),
				.user_data = n };
			if (++n == G_N_ELEMENTS(io) || (p + 1 == GST_VIDEO_INFO_N_PLANES(&s->info) &&
							row + 1 == (whole ? 1 : rows))) {
				int r = dmaio_queue_submit(s->q, io, n);

				if (r != (int)n)
					return r < 0 ? r : -EAGAIN; /* cannot be: the queue is empty */
				pending += n;
				while (pending) {
					int k = dmaio_queue_reap(s->q, d, G_N_ELEMENTS(d), 1, -1);

					if (k < 0)
						return k;
					for (int j = 0; j < k; j++) {
						if (d[j].res < 0 && !err)
							err = (int)d[j].res;
						else if (!err && (uint64_t)d[j].res < io[d[j].user_data].len)
							err = -ENODATA; /* the file ends inside the frame */
					}
					pending -= (unsigned)k;
				}
				n = 0;
			}
		}
	}
	return err;
}

static GstFlowReturn src_create(GstPushSrc *ps, GstBuffer **out)
{
	GstDmaioSrc *s = GST_DMAIO_SRC(ps);
	GstVideoInfo *vi = &s->info;
	gsize offsets[GST_VIDEO_MAX_PLANES] = { 0 };
	gint strides[GST_VIDEO_MAX_PLANES] = { 0 };
	GstBuffer *buf;
	GstMemory *mem;
	struct slot *sl;
	guint64 i = s->next;
	int r, fd;

	if (!s->have_info)
		return GST_FLOW_NOT_NEGOTIATED;
	if (i >= frame_count(s))
		return GST_FLOW_EOS;
	sl = slot_get(s);
	if (!sl)
		return s->flushing ? GST_FLOW_FLUSHING : GST_FLOW_ERROR;
	r = read_frame(s, i, sl);
	if (r) {
		slot_put(s, sl);
		if (r == -ENODATA)
			return GST_FLOW_EOS; /* a partial last frame is not a frame */
		GST_ELEMENT_ERROR(s, RESOURCE, READ, ("reading frame %" G_GUINT64_FORMAT " of \"%s\": %s",
						      i, s->location, g_strerror(-r)), ("errno %d", -r));
		return GST_FLOW_ERROR;
	}
	fd = dup(sl->fd);
	if (fd < 0) {
		slot_put(s, sl);
		GST_ELEMENT_ERROR(s, RESOURCE, FAILED,
				  ("cannot hand frame %" G_GUINT64_FORMAT " downstream: no descriptor "
				   "for its memory (dup: %s)", i, g_strerror(errno)), (NULL));
		return GST_FLOW_ERROR;
	}
	mem = dmaio_buf_kind(sl->buf) == DMAIO_BUF_MEMFD ?
	      gst_fd_allocator_alloc(s->fd_alloc, fd, s->layout.total_size, GST_FD_MEMORY_FLAG_NONE) :
	      gst_dmabuf_allocator_alloc(s->dmabuf_alloc, fd, s->layout.total_size);
	buf = gst_buffer_new();
	gst_buffer_append_memory(buf, mem);
	for (guint p = 0; p < s->layout.num_planes && p < GST_VIDEO_MAX_PLANES; p++) {
		offsets[p] = s->layout.offsets[p];
		strides[p] = (gint)s->layout.strides[p];
	}
	gst_buffer_add_video_meta_full(buf, GST_VIDEO_FRAME_FLAG_NONE, GST_VIDEO_INFO_FORMAT(vi),
				       GST_VIDEO_INFO_WIDTH(vi), GST_VIDEO_INFO_HEIGHT(vi),
				       GST_VIDEO_INFO_N_PLANES(vi), offsets, strides);
	GST_BUFFER_PTS(buf) = frame_pts(s, i);
	if (GST_VIDEO_INFO_FPS_N(vi))
		GST_BUFFER_DURATION(buf) = gst_util_uint64_scale(GST_SECOND, GST_VIDEO_INFO_FPS_D(vi),
								 GST_VIDEO_INFO_FPS_N(vi));
	GST_BUFFER_OFFSET(buf) = i;
	GST_BUFFER_OFFSET_END(buf) = i + 1;
	gst_object_ref(s);
	gst_mini_object_weak_ref(GST_MINI_OBJECT(buf), slot_back, sl);
	s->next = i + 1;
	*out = buf;
	return GST_FLOW_OK;
}

static gboolean src_is_seekable(GstBaseSrc *bs)
{
	(void)bs;
	return TRUE;
}

static gboolean src_do_seek(GstBaseSrc *bs, GstSegment *seg)
{
	GstDmaioSrc *s = GST_DMAIO_SRC(bs);
	guint64 i, n;

	if (!s->have_info) {
		s->next = 0;
		return TRUE;
	}
	n = frame_count(s);
	/* the first frame at or after the position */
	for (i = 0; i < n; i++) {
		GstClockTime t = frame_pts(s, i);

		if (!GST_CLOCK_TIME_IS_VALID(t) || t >= seg->start)
			break;
	}
	s->next = i;
	seg->time = seg->start;
	return TRUE;
}

static gboolean src_unlock(GstBaseSrc *bs)
{
	GstDmaioSrc *s = GST_DMAIO_SRC(bs);

	g_mutex_lock(&s->lock);
	s->flushing = TRUE;
	g_cond_broadcast(&s->cond);
	g_mutex_unlock(&s->lock);
	return TRUE;
}

static gboolean src_unlock_stop(GstBaseSrc *bs)
{
	GstDmaioSrc *s = GST_DMAIO_SRC(bs);

	g_mutex_lock(&s->lock);
	s->flushing = FALSE;
	g_mutex_unlock(&s->lock);
	return TRUE;
}

static gboolean src_query(GstBaseSrc *bs, GstQuery *q)
{
	GstDmaioSrc *s = GST_DMAIO_SRC(bs);

	if (GST_QUERY_TYPE(q) == GST_QUERY_DURATION && s->have_info) {
		GstFormat fmt;

		gst_query_parse_duration(q, &fmt, NULL);
		if (fmt == GST_FORMAT_DEFAULT) {
			gst_query_set_duration(q, fmt, (gint64)frame_count(s));
			return TRUE;
		}
		if (fmt == GST_FORMAT_TIME && GST_VIDEO_INFO_FPS_N(&s->info)) {
			gst_query_set_duration(q, fmt, (gint64)frame_pts(s, frame_count(s)));
			return TRUE;
		}
	}
	return GST_BASE_SRC_CLASS(gst_dmaio_src_parent_class)->query(bs, q);
}

/* ---- GObject ------------------------------------------------------------------------------- */
static void set_property(GObject *o, guint id, const GValue *v, GParamSpec *ps)
{
	GstDmaioSrc *s = GST_DMAIO_SRC(o);

	switch (id) {
	case PROP_LOCATION:
		g_free(s->location);
		s->location = g_value_dup_string(v);
		break;
	case PROP_INDEX_LOCATION:
		g_free(s->index_location);
		s->index_location = g_value_dup_string(v);
		break;
	case PROP_PROVIDER:
		g_free(s->provider);
		s->provider = g_value_dup_string(v);
		break;
	case PROP_POOL_SIZE: s->pool_size = g_value_get_uint(v); break;
	default: G_OBJECT_WARN_INVALID_PROPERTY_ID(o, id, ps); break;
	}
}

static void get_property(GObject *o, guint id, GValue *v, GParamSpec *ps)
{
	GstDmaioSrc *s = GST_DMAIO_SRC(o);

	switch (id) {
	case PROP_LOCATION: g_value_set_string(v, s->location); break;
	case PROP_INDEX_LOCATION: g_value_set_string(v, s->index_location); break;
	case PROP_PROVIDER: g_value_set_string(v, s->provider); break;
	case PROP_POOL_SIZE: g_value_set_uint(v, s->pool_size); break;
	default: G_OBJECT_WARN_INVALID_PROPERTY_ID(o, id, ps); break;
	}
}

static void finalize(GObject *o)
{
	GstDmaioSrc *s = GST_DMAIO_SRC(o);

	g_free(s->location);
	g_free(s->index_location);
	g_free(s->provider);
	g_mutex_clear(&s->lock);
	g_cond_clear(&s->cond);
	G_OBJECT_CLASS(gst_dmaio_src_parent_class)->finalize(o);
}

static void gst_dmaio_src_init(GstDmaioSrc *s)
{
	s->fd = -1;
	s->pool_size = DEFAULT_POOL;
	g_mutex_init(&s->lock);
	g_cond_init(&s->cond);
	gst_base_src_set_format(GST_BASE_SRC(s), GST_FORMAT_TIME);
}

static void gst_dmaio_src_class_init(GstDmaioSrcClass *k)
{
	GObjectClass *ok = G_OBJECT_CLASS(k);
	GstElementClass *ek = GST_ELEMENT_CLASS(k);
	GstBaseSrcClass *bk = GST_BASE_SRC_CLASS(k);
	GstPushSrcClass *pk = GST_PUSH_SRC_CLASS(k);
	const GParamFlags rw = G_PARAM_READWRITE | G_PARAM_STATIC_STRINGS |
			       GST_PARAM_MUTABLE_READY;

	GST_DEBUG_CATEGORY_INIT(dmaiosrc_debug, "dmaiosrc", 0, "libdmaio frame reader");
	ok->set_property = set_property;
	ok->get_property = get_property;
	ok->finalize = finalize;
	g_object_class_install_property(ok, PROP_LOCATION,
		g_param_spec_string("location", "Location",
				    "Raw frame file: frames back to back in GStreamer's default "
				    "layout for the caps set downstream (or where the index says)",
				    NULL, rw));
	g_object_class_install_property(ok, PROP_INDEX_LOCATION,
		g_param_spec_string("index-location", "Index location",
				    "Index of the frames (dmaiosink's: one \"offset pts size\" line per "
				    "frame); without it frame i is at i x the frame size, stamped i / "
				    "framerate", NULL, rw));
	g_object_class_install_property(ok, PROP_PROVIDER,
		g_param_spec_string("provider", "Provider",
				    "libdmaio provider of the buffers (\"system\", "
				    "\"default_cma_region\", \"udmabuf\", \"memfd\", ...); none: the "
				    "library's order, a memfd where no dma-buf provider exists", NULL, rw));
	g_object_class_install_property(ok, PROP_POOL_SIZE,
		g_param_spec_uint("pool-size", "Pool size",
				  "Image buffers allocated; a frame waits for one downstream gives "
				  "back", 1, POOL_MAX, DEFAULT_POOL, rw));
	gst_element_class_set_static_metadata(ek, "libdmaio frame reader", "Source/File/Video",
		"Reads raw video frames from a file into dma-bufs (libdmaio image buffers) through a "
		"libdmaio queue", "libdmaio");
	gst_element_class_add_static_pad_template(ek, &src_template);
	bk->start = src_start;
	bk->stop = src_stop;
	bk->set_caps = src_set_caps;
	bk->is_seekable = src_is_seekable;
	bk->do_seek = src_do_seek;
	bk->unlock = src_unlock;
	bk->unlock_stop = src_unlock_stop;
	bk->query = src_query;
	pk->create = src_create;
}
