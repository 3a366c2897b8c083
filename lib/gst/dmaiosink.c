/* SPDX-License-Identifier: MIT */
/*
 * dmaiosink: raw video frames to a file through a libdmaio queue.
 *
 * Each frame's memories are written one after the other, as they are (the bytes filesink writes
 * for the same buffer: padding and plane offsets included), at the file's running offset. A
 * memory that is a dma-buf (GstDmaBufMemory) is written from the dma-buf itself: it is imported
 * once (the import is cached by the dma-buf's inode) and the queue picks the fastest path for
 * it; the GstBuffer is held until its ranges complete and is then released, so it goes back to
 * the upstream pool as soon as it is on disk. For caps in system memory the sink proposes a
 * pool of its own memfd buffers (below), and a frame the source put there is written from it,
 * placed where it falls in the file's pages; any other buffer in system memory is copied into
 * one of the sink's staging buffers and released at once.
 *
 * At most queue-depth frames are in flight: a frame that finds no room waits for the oldest to
 * complete (drop-when-full drops it instead, counted and reported by a QoS message). A reaper
 * thread takes completions as they come (it waits on the queue's fd), so a frame's buffer goes
 * back to its pool, and its latency ends, when it is on disk, not when the next frame arrives;
 * the queue and the frames are under one lock, the streaming thread's and the reaper's. A write
 * error stops the stream with an element error that names the errno, the frame and how many of
 * its bytes were written; every frame completed before it is in the file. Statistics: the
 * "stats" property; an element message "dmaiosink-stats" at EOS.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/stat.h>
#include <unistd.h>

#include <gst/gst.h>
#include <gst/base/gstbasesink.h>
#include <gst/allocators/gstdmabuf.h>
#include <gst/video/video.h>

#include <dmaio.h>

#include "gstdmaio.h"

GST_DEBUG_CATEGORY_STATIC(dmaiosink_debug);
#define GST_CAT_DEFAULT dmaiosink_debug

#define DEFAULT_DEPTH 4
#define MAX_DEPTH 64
#define IMPORT_CACHE 64
#define MAX_MEMS 8        /* memories of one buffer written directly; more: copied */
#define LAT_SAMPLES 4096  /* write latencies kept for the percentiles */

enum {
	PROP_0,
	PROP_LOCATION,
	PROP_QUEUE_DEPTH,
	PROP_DSYNC,
	PROP_APPEND,
	PROP_MAX_SIZE_BYTES,
	PROP_MAX_SIZE_TIME,
	PROP_INDEX_LOCATION,
	PROP_DROP_WHEN_FULL,
	PROP_PROPOSE_POOL,
	PROP_STATS,
};

struct import {
	ino_t ino;
	dev_t dev;
	struct dmaio_buf *buf;
	unsigned users;     /* frames in flight that write from it */
	uint64_t last_use;
};

struct frame {
	bool busy;
	GstBuffer *gbuf;    /* held while its dma-buf ranges are in flight */
	struct dmaio_buf *staging;
	uint64_t staging_size;
	struct import *imports[MAX_MEMS];
	unsigned nimports;
	uint64_t off, size, written;
	unsigned pending;
	int err;
	GstClockTime pts;
	uint64_t seq;
	gint64 t_submit;
};

/* an index line waiting for the frames before it (frames complete out of order; lines go out
 * in frame order) */
struct idx_line {
	int state; /* 0 empty, 1 written, 2 failed */
	uint64_t off, size;
	GstClockTime pts;
};

struct _GstDmaioSink {
	GstBaseSink parent;

	/* properties */
	gchar *location;
	guint depth;
	gboolean dsync;
	gboolean append;
	guint64 max_bytes;
	guint64 max_time;
	gchar *index_location;
	gboolean drop_when_full;
	gboolean propose_pool;

	/* state (streaming thread and reaper, under lock) */
	GMutex lock;
	GCond room;             /* a frame completed (or the reaper failed) */
	GThread *reaper;
	int wake_fd;            /* eventfd: the reaper is to stop */
	gboolean reaper_stop;
	int reap_err;           /* dmaio_queue_reap failed: no completion will come */
	struct dmaio_ctx *ctx;
	struct dmaio_queue *q;
	int fd;
	struct dmaio_file *file;
	FILE *index;
	struct idx_line idx[MAX_DEPTH];
	uint64_t idx_next;      /* the next frame (seq) whose line goes out */
	guint file_no;
	gchar *cur_path;
	uint64_t off;           /* where the next frame goes */
	uint64_t file_bytes;    /* frames' bytes in the current file */
	GstClockTime file_t0;   /* pts of the current file's first frame */
	struct frame *frames;
	unsigned inflight;
	uint64_t seq;
	struct import imports[IMPORT_CACHE];
	unsigned nimports;
	uint64_t use_tick;
	int failed;             /* first error (negative errno), 0 */
	uint64_t page;

	/* the pool proposed upstream: where its next buffer's frame will land in the file */
	GMutex pool_lock;
	uint64_t pool_next;     /* the file offset of the next frame rendered (s->off) */
	uint64_t pool_out;      /* pool buffers acquired upstream, not rendered nor released */

	/* statistics (read by the "stats" property from any thread) */
	GMutex stats_lock;
	guint64 frames_written, bytes_written, frames_dropped, frames_copied, frames_direct;
	guint64 frames_pool;
	guint64 lat_us[LAT_SAMPLES];
	guint64 nlat;
};

G_DEFINE_TYPE(GstDmaioSink, gst_dmaio_sink, GST_TYPE_BASE_SINK)

static GstStaticPadTemplate sink_template = GST_STATIC_PAD_TEMPLATE(
	"sink", GST_PAD_SINK, GST_PAD_ALWAYS,
	GST_STATIC_CAPS(GST_VIDEO_CAPS_MAKE_WITH_FEATURES(GST_CAPS_FEATURE_MEMORY_DMABUF,
							  GST_VIDEO_FORMATS_ALL) "; "
			GST_VIDEO_CAPS_MAKE(GST_VIDEO_FORMATS_ALL)));

/* ---- errors -------------------------------------------------------------------------------- */
static const char *err_words(int err)
{
	switch (-err) {
	case ENOSPC: return "disk full";
	case EFBIG: return "file too large (RLIMIT_FSIZE or the file system's limit)";
	case EDQUOT: return "disk quota exceeded";
	case EIO: return "I/O error";
	case EROFS: return "read-only file system";
	case EACCES:
	case EPERM: return "permission denied";
	default: return "write failed";
	}
}

static void post_write_error(GstDmaioSink *s, const struct frame *f, int err)
{
	gchar *text = g_strdup_printf("%s: %s writing \"%s\"", err_words(err), g_strerror(-err),
				      s->cur_path);
	gchar *dbg = g_strdup_printf("frame %" G_GUINT64_FORMAT " (%" G_GUINT64_FORMAT
				     " bytes at offset %" G_GUINT64_FORMAT "): %" G_GUINT64_FORMAT
				     " bytes written, errno %d; %" G_GUINT64_FORMAT " frames before "
				     "it are complete in the file", f->seq, f->size, f->off,
				     f->written, -err, s->frames_written);

	/* the error code is part of the macro's name: one call per code */
	if (-err == ENOSPC || -err == EDQUOT)
		GST_ELEMENT_ERROR(s, RESOURCE, NO_SPACE_LEFT, ("%s", text), ("%s", dbg));
	else
		GST_ELEMENT_ERROR(s, RESOURCE, WRITE, ("%s", text), ("%s", dbg));
	g_free(text);
	g_free(dbg);
}

/* ---- imports of dma-buf memories, cached by inode ------------------------------------------- */
static struct import *import_get(GstDmaioSink *s, int fd, int *err)
{
	struct import *victim = NULL;
	struct stat st;
	int r;

	if (fstat(fd, &st)) {
		*err = -errno;
		return NULL;
	}
	for (unsigned i = 0; i < s->nimports; i++) {
		struct import *im = &s->imports[i];

		if (im->ino == st.st_ino && im->dev == st.st_dev) {
			im->last_use = ++s->use_tick;
			return im;
		}
		if (!im->users && (!victim || im->last_use < victim->last_use))
			victim = im;
	}
	if (s->nimports < IMPORT_CACHE) {
		victim = &s->imports[s->nimports++];
	} else if (!victim) {
		*err = -EBUSY; /* every cached import in flight: cannot happen with depth <= 64/8 */
		return NULL;
	} else {
		dmaio_buf_free(victim->buf);
	}
	memset(victim, 0, sizeof(*victim));
	r = dmaio_buf_import(s->ctx, fd, 0, &victim->buf);
	if (r) {
		/* an empty slot stays at the end only when it was the last one */
		if (victim == &s->imports[s->nimports - 1])
			s->nimports--;
		*err = r;
		return NULL;
	}
	victim->ino = st.st_ino;
	victim->dev = st.st_dev;
	victim->last_use = ++s->use_tick;
	return victim;
}

static void imports_clear(GstDmaioSink *s)
{
	for (unsigned i = 0; i < s->nimports; i++)
		dmaio_buf_free(s->imports[i].buf);
	memset(s->imports, 0, sizeof(s->imports));
	s->nimports = 0;
}

/* ---- the pool proposed upstream -------------------------------------------------------------
 *
 * A source in system memory (videotestsrc, a decoder, a converter) writes its frames where its
 * pool says. Without a pool from us each frame is copied into a staging buffer: the copy is the
 * largest part of what the sink costs (a 1080p NV12 frame: 3 MiB). So for system-memory caps
 * the sink proposes a pool of its own memory, memfds allocated through the library, and writes
 * a frame from where the source put it.
 *
 * O_DIRECT wants the memory where the file is in a page: from memory that sits across the
 * file's pages a write costs 20x on our host (bench/RESULTS.md, session 19), and frames whose
 * size is no multiple of the page start inside one. Each pool buffer is one page longer than a
 * frame, and when it is handed out its data is placed at the in-page offset of the file offset
 * its frame will have: the next frame's offset plus one frame for each buffer handed out and
 * not yet rendered. A guess that turns out wrong (a rotation, a frame dropped upstream) costs
 * the copy that would have been made anyway.
 *
 * Only a layout without padding moves: a source leaves the padding at the end of a line (641
 * pixels of 8 bits in a 644-byte stride) as it was, and a frame moved to another place would
 * find there the bytes of an older frame's pixels. A layout with padding stays at offset 0, its
 * padding as the memfd gave it (zeros); its frames that start inside a page are copied. */
struct pool_mem {
	struct dmaio_buf *buf;
	GstDmaioSink *sink;  /* a reference: the sink's context outlives its memory */
	char *base;          /* the buffer's mapping */
	uint64_t size;       /* the buffer's size */
	gboolean out;        /* handed out, not rendered nor released */
};

static GQuark pool_quark;

#define GST_TYPE_DMAIO_SINK_POOL (gst_dmaio_sink_pool_get_type())
G_DECLARE_FINAL_TYPE(GstDmaioSinkPool, gst_dmaio_sink_pool, GST, DMAIO_SINK_POOL, GstBufferPool)

struct _GstDmaioSinkPool {
	GstBufferPool parent;
	GstDmaioSink *sink; /* a reference */
	guint size;         /* a frame */
	gboolean shift;     /* the layout has no padding: data may move within its buffer */
};

G_DEFINE_TYPE(GstDmaioSinkPool, gst_dmaio_sink_pool, GST_TYPE_BUFFER_POOL)

static void pool_mem_free(gpointer data)
{
	struct pool_mem *pm = data;

	dmaio_buf_free(pm->buf);
	gst_object_unref(pm->sink);
	g_free(pm);
}

/* Every byte of the frame is a pixel's: each plane's lines are as long as their pixels and
 * follow one another, the planes follow one another, nothing after the last. Formats whose
 * pixels are not whole bytes per component (v210, tiled, packed 4:1:1) count as padded. */
static gboolean tight_layout(const GstVideoInfo *info)
{
	const GstVideoFormatInfo *fi = info->finfo;
	gsize end = 0;

	if (!fi || GST_VIDEO_FORMAT_INFO_IS_TILED(fi) ||
	    GST_VIDEO_INFO_INTERLACE_MODE(info) == GST_VIDEO_INTERLACE_MODE_ALTERNATE)
		return FALSE;
	for (guint p = 0; p < GST_VIDEO_INFO_N_PLANES(info); p++) {
		gint line = 0, rows = 0;

		for (guint c = 0; c < GST_VIDEO_INFO_N_COMPONENTS(info); c++) {
			gint ps = GST_VIDEO_FORMAT_INFO_PSTRIDE(fi, c);

			if (GST_VIDEO_FORMAT_INFO_PLANE(fi, c) != p)
				continue;
			if (ps <= 0 || GST_VIDEO_FORMAT_INFO_DEPTH(fi, c) % 8 ||
			    GST_VIDEO_FORMAT_INFO_BITS(fi) % 8)
				return FALSE;
			line = MAX(line, ps * GST_VIDEO_INFO_COMP_WIDTH(info, c));
			rows = MAX(rows, GST_VIDEO_INFO_COMP_HEIGHT(info, c));
		}
		if (!line || GST_VIDEO_INFO_PLANE_STRIDE(info, p) != line ||
		    GST_VIDEO_INFO_PLANE_OFFSET(info, p) != end)
			return FALSE;
		end += (gsize)line * (gsize)rows;
	}
	return end == GST_VIDEO_INFO_SIZE(info);
}

static gboolean pool_set_config(GstBufferPool *bp, GstStructure *config)
{
	GstDmaioSinkPool *p = GST_DMAIO_SINK_POOL(bp);
	GstVideoInfo info;
	GstCaps *caps;
	guint size, min, max;

	if (!gst_buffer_pool_config_get_params(config, &caps, &size, &min, &max) || !size)
		return FALSE;
	p->size = size;
	p->shift = caps && gst_video_info_from_caps(&info, caps) && info.size == size &&
		   tight_layout(&info);
	return GST_BUFFER_POOL_CLASS(gst_dmaio_sink_pool_parent_class)->set_config(bp, config);
}

static GstFlowReturn pool_alloc(GstBufferPool *bp, GstBuffer **out,
				GstBufferPoolAcquireParams *params)
{
	static const char *const memfd[] = { "memfd", NULL };
	GstDmaioSinkPool *p = GST_DMAIO_SINK_POOL(bp);
	GstDmaioSink *s = p->sink;
	struct dmaio_alloc_opts o = { .struct_size = sizeof(o),
				      .flags = DMAIO_ALLOC_ALLOW_NON_DMABUF,
				      .providers = memfd, .name = "dmaiosink-pool" };
	struct dmaio_reason why = { .struct_size = sizeof(why) };
	struct pool_mem *pm = g_new0(struct pool_mem, 1);
	GstMemory *mem;
	void *addr;
	int r;

	(void)params;
	pm->size = p->size + s->page;
	r = dmaio_buf_alloc(s->ctx, pm->size, &o, &pm->buf, &why);
	if (!r)
		r = dmaio_buf_map(pm->buf, &addr);
	if (r) {
		/* the source sees only a failed allocation: the reason goes with the sink's error */
		GST_ELEMENT_ERROR(s, RESOURCE, NO_SPACE_LEFT,
				  ("cannot allocate a %" G_GUINT64_FORMAT "-byte pool buffer: %s",
				   pm->size, why.text[0] ? why.text : g_strerror(-r)),
				  ("dmaio_buf_alloc/map: %d (propose-pool=false copies frames instead)",
				   r));
		dmaio_buf_free(pm->buf);
		g_free(pm);
		return GST_FLOW_ERROR;
	}
	pm->base = addr;
	pm->sink = gst_object_ref(s);
	mem = gst_memory_new_wrapped(0, addr, pm->size, 0, p->size, pm, pool_mem_free);
	gst_mini_object_set_qdata(GST_MINI_OBJECT(mem), pool_quark, pm, NULL);
	*out = gst_buffer_new();
	gst_buffer_append_memory(*out, mem);
	gst_mini_object_set_qdata(GST_MINI_OBJECT(*out), pool_quark, pm, NULL);
	return GST_FLOW_OK;
}

static GstFlowReturn pool_acquire(GstBufferPool *bp, GstBuffer **out,
				  GstBufferPoolAcquireParams *params)
{
	GstDmaioSinkPool *p = GST_DMAIO_SINK_POOL(bp);
	GstDmaioSink *s = p->sink;
	GstFlowReturn ret;
	struct pool_mem *pm;
	uint64_t skew;

	ret = GST_BUFFER_POOL_CLASS(gst_dmaio_sink_pool_parent_class)->acquire_buffer(bp, out,
										      params);
	if (ret != GST_FLOW_OK)
		return ret;
	pm = gst_mini_object_get_qdata(GST_MINI_OBJECT(*out), pool_quark);
	if (!pm || gst_buffer_n_memory(*out) != 1)
		return ret;
	g_mutex_lock(&s->pool_lock);
	skew = p->shift ? (s->pool_next + s->pool_out * p->size) % s->page : 0;
	s->pool_out++;
	pm->out = TRUE;
	g_mutex_unlock(&s->pool_lock);
	if (skew)
		gst_buffer_resize(*out, (gssize)skew, p->size);
	return ret;
}

/* A buffer handed out is back (rendered, or released unrendered). Under pool_lock. */
static void pool_back(GstDmaioSink *s, struct pool_mem *pm)
{
	if (pm && pm->out) {
		s->pool_out--;
		pm->out = FALSE;
	}
}

static void pool_release(GstBufferPool *bp, GstBuffer *buf)
{
	GstDmaioSinkPool *p = GST_DMAIO_SINK_POOL(bp);

	g_mutex_lock(&p->sink->pool_lock);
	pool_back(p->sink, gst_mini_object_get_qdata(GST_MINI_OBJECT(buf), pool_quark));
	g_mutex_unlock(&p->sink->pool_lock);
	GST_BUFFER_POOL_CLASS(gst_dmaio_sink_pool_parent_class)->release_buffer(bp, buf);
}

static void pool_finalize(GObject *o)
{
	GstDmaioSinkPool *p = GST_DMAIO_SINK_POOL(o);

	gst_object_unref(p->sink);
	G_OBJECT_CLASS(gst_dmaio_sink_pool_parent_class)->finalize(o);
}

static void gst_dmaio_sink_pool_init(GstDmaioSinkPool *p)
{
	(void)p;
}

static void gst_dmaio_sink_pool_class_init(GstDmaioSinkPoolClass *k)
{
	GstBufferPoolClass *bk = GST_BUFFER_POOL_CLASS(k);

	G_OBJECT_CLASS(k)->finalize = pool_finalize;
	bk->set_config = pool_set_config;
	bk->alloc_buffer = pool_alloc;
	bk->acquire_buffer = pool_acquire;
	bk->release_buffer = pool_release;
	pool_quark = g_quark_from_static_string("dmaiosink-pool-mem");
}

/* A frame that is one of our pool's memories: the pool buffer, the frame's place in it. */
static struct pool_mem *pool_mem_of(GstBuffer *buf, uint64_t *off)
{
	GstMemory *m;
	struct pool_mem *pm = NULL;
	GstMapInfo map;

	if (gst_buffer_n_memory(buf) != 1)
		return NULL;
	/* a memory shared from ours (a sub-buffer) has ours as its parent */
	for (m = gst_buffer_peek_memory(buf, 0); m && !pm; m = m->parent)
		pm = gst_mini_object_get_qdata(GST_MINI_OBJECT(m), pool_quark);
	if (!pm || !gst_buffer_map(buf, &map, GST_MAP_READ))
		return NULL;
	*off = (uint64_t)((char *)map.data - pm->base);
	if ((char *)map.data < pm->base || *off + map.size > pm->size)
		pm = NULL;
	gst_buffer_unmap(buf, &map);
	return pm;
}

/* A buffer was rendered (written, dropped or refused): if the pool handed it out, it is out no
 * more, and the next frame goes at s->off. Both at once: a buffer handed out in between would
 * be placed a frame off (counted neither as out nor in the offset). */
static void pool_settle(GstDmaioSink *s, GstBuffer *buf)
{
	g_mutex_lock(&s->pool_lock);
	pool_back(s, gst_mini_object_get_qdata(GST_MINI_OBJECT(buf), pool_quark));
	s->pool_next = s->off;
	g_mutex_unlock(&s->pool_lock);
}

/* Where the next frame goes: what the pool's next guess starts from. */
static void pool_next_at(GstDmaioSink *s, uint64_t off)
{
	g_mutex_lock(&s->pool_lock);
	s->pool_next = off;
	g_mutex_unlock(&s->pool_lock);
}

static gboolean sink_propose_allocation(GstBaseSink *bs, GstQuery *q)
{
	GstDmaioSink *s = GST_DMAIO_SINK(bs);
	GstCaps *caps;
	GstCapsFeatures *feat;
	GstVideoInfo info;
	GstBufferPool *bp;
	GstStructure *config;
	gboolean need_pool;

	gst_query_parse_allocation(q, &caps, &need_pool);
	if (!s->propose_pool || !caps || !s->ctx || gst_caps_is_empty(caps))
		return TRUE;
	feat = gst_caps_get_features(caps, 0);
	if (feat && gst_caps_features_contains(feat, GST_CAPS_FEATURE_MEMORY_DMABUF))
		return TRUE; /* dma-bufs: written from themselves */
	if (!gst_video_info_from_caps(&info, caps) || !info.size)
		return TRUE;
	bp = g_object_new(GST_TYPE_DMAIO_SINK_POOL, NULL);
	gst_object_ref_sink(bp);
	GST_DMAIO_SINK_POOL(bp)->sink = gst_object_ref(s);
	config = gst_buffer_pool_get_config(bp);
	gst_buffer_pool_config_set_params(config, caps, (guint)info.size, 2, 0);
	if (gst_buffer_pool_set_config(bp, config))
		gst_query_add_allocation_pool(q, bp, (guint)info.size, 2, 0);
	else
		GST_WARNING_OBJECT(s, "the pool refused its configuration: none proposed");
	gst_object_unref(bp);
	return TRUE;
}

/* ---- completions --------------------------------------------------------------------------- */
static void frame_release(struct frame *f)
{
	for (unsigned i = 0; i < f->nimports; i++)
		f->imports[i]->users--;
	f->nimports = 0;
	if (f->gbuf) {
		gst_buffer_unref(f->gbuf); /* back to the upstream pool */
		f->gbuf = NULL;
	}
	f->busy = false;
}

static void frame_done(GstDmaioSink *s, struct frame *f)
{
	guint64 lat = (guint64)(g_get_monotonic_time() - f->t_submit);

	if (!f->err) {
		g_mutex_lock(&s->stats_lock);
		s->frames_written++;
		s->bytes_written += f->size;
		s->lat_us[s->nlat++ % LAT_SAMPLES] = lat;
		g_mutex_unlock(&s->stats_lock);
	} else if (!s->failed) {
		s->failed = f->err;
		post_write_error(s, f, f->err);
	}
	if (s->index) {
		struct idx_line *l = &s->idx[f->seq % MAX_DEPTH];

		*l = (struct idx_line){ f->err ? 2 : 1, f->off, f->size, f->pts };
		while ((l = &s->idx[s->idx_next % MAX_DEPTH])->state) {
			if (l->state == 1)
				fprintf(s->index, "%" G_GUINT64_FORMAT " %" G_GINT64_FORMAT " %"
					G_GUINT64_FORMAT "\n", l->off,
					GST_CLOCK_TIME_IS_VALID(l->pts) ? (gint64)l->pts : -1, l->size);
			l->state = 0;
			s->idx_next++;
		}
	}
	frame_release(f);
	s->inflight--;
}

/* Take the completions that are there. Under lock. */
static int reap(GstDmaioSink *s)
{
	struct dmaio_done d[16];
	int n;

	d[0].struct_size = sizeof(d[0]);
	n = dmaio_queue_reap(s->q, d, 16, 0, 0);
	if (n < 0)
		return n;
	for (int i = 0; i < n; i++) {
		struct frame *f = &s->frames[d[i].user_data];

		f->written += d[i].done;
		if (d[i].res < 0 && !f->err)
			f->err = (int)d[i].res;
		if (!--f->pending)
			frame_done(s, f);
	}
	return n;
}

/* Wait until every frame in flight completed (the reaper takes them). Under lock. */
static int drain(GstDmaioSink *s)
{
	while (s->inflight && !s->reap_err)
		g_cond_wait(&s->room, &s->lock);
	return s->reap_err;
}

/* The reaper: completions taken as the queue's fd says there are some. */
static gpointer reaper_main(gpointer data)
{
	GstDmaioSink *s = data;
	struct pollfd p[2] = { { .fd = dmaio_queue_fd(s->q), .events = POLLIN },
			       { .fd = s->wake_fd, .events = POLLIN } };

	for (;;) {
		int n;

		if (poll(p, 2, -1) < 0 && errno != EINTR)
			break;
		g_mutex_lock(&s->lock);
		if (s->reaper_stop) {
			g_mutex_unlock(&s->lock);
			break;
		}
		do
			n = reap(s);
		while (n == 16);
		if (n < 0 && !s->reap_err) {
			s->reap_err = n;
			if (!s->failed)
				s->failed = n;
		}
		g_cond_broadcast(&s->room);
		g_mutex_unlock(&s->lock);
		if (n < 0)
			break;
	}
	return NULL;
}

/* ---- files --------------------------------------------------------------------------------- */
static void file_close(GstDmaioSink *s)
{
	dmaio_file_close(s->file);
	s->file = NULL;
	if (s->fd >= 0)
		close(s->fd);
	s->fd = -1;
	if (s->index) {
		fclose(s->index);
		s->index = NULL;
	}
}

static gchar *path_for(const gchar *pattern, guint n)
{
	/* a pattern with one %d-like conversion names the files of a rotation */
	if (strchr(pattern, '%'))
		return g_strdup_printf(pattern, n);
	return g_strdup(pattern);
}

static gboolean file_open(GstDmaioSink *s)
{
	int flags = O_WRONLY | O_CREAT | O_CLOEXEC | (s->dsync ? O_DSYNC : 0);
	struct stat st;
	int r;

	g_free(s->cur_path);
	s->cur_path = path_for(s->location, s->file_no);
	if (!s->append)
		flags |= O_TRUNC;
	s->fd = open(s->cur_path, flags, 0644);
	if (s->fd < 0) {
		int e = errno;

		GST_ELEMENT_ERROR(s, RESOURCE, OPEN_WRITE,
				  ("cannot open \"%s\" for writing: %s", s->cur_path, g_strerror(e)),
				  ("open(2): errno %d", e));
		return FALSE;
	}
	s->off = s->append && !fstat(s->fd, &st) ? (uint64_t)st.st_size : 0;
	pool_next_at(s, s->off);
	r = dmaio_file_open(s->ctx, s->fd, 0, &s->file);
	if (r) {
		GST_ELEMENT_ERROR(s, RESOURCE, OPEN_WRITE,
				  ("cannot register \"%s\" with libdmaio: %s", s->cur_path,
				   g_strerror(-r)), ("dmaio_file_open: %d", r));
		return FALSE;
	}
	if (s->index_location) {
		gchar *ip = path_for(s->index_location, s->file_no);

		s->index = fopen(ip, s->append ? "ae" : "we");
		if (!s->index) {
			int e = errno;

			GST_ELEMENT_ERROR(s, RESOURCE, OPEN_WRITE,
					  ("cannot open the index \"%s\": %s", ip, g_strerror(e)),
					  (NULL));
			g_free(ip);
			return FALSE;
		}
		g_free(ip);
	}
	s->file_bytes = 0;
	s->file_t0 = GST_CLOCK_TIME_NONE;
	memset(s->idx, 0, sizeof(s->idx));
	s->idx_next = s->seq; /* rotation drains first: every frame before is done */
	return TRUE;
}

/* ---- GstBaseSink --------------------------------------------------------------------------- */
static gboolean sink_start(GstBaseSink *bs)
{
	GstDmaioSink *s = GST_DMAIO_SINK(bs);
	int r;

	if (!s->location) {
		GST_ELEMENT_ERROR(s, RESOURCE, NOT_FOUND, ("no location set"), (NULL));
		return FALSE;
	}
	if ((s->max_bytes || s->max_time) && !strchr(s->location, '%')) {
		GST_ELEMENT_ERROR(s, RESOURCE, SETTINGS,
				  ("max-size-bytes/max-size-time rotate files: location \"%s\" needs a "
				   "number pattern such as %%05d", s->location), (NULL));
		return FALSE;
	}
	/* the context lives as long as the element: the memory of a pool proposed upstream may
	 * outlive a stop (each holds a reference on the element) */
	r = s->ctx ? 0 : dmaio_ctx_new(0, &s->ctx);
	if (!r)
		r = dmaio_queue_new(s->ctx, s->depth * 2, 0, &s->q);
	if (r) {
		GST_ELEMENT_ERROR(s, RESOURCE, FAILED, ("libdmaio: %s", g_strerror(-r)), (NULL));
		return FALSE;
	}
	s->frames = g_new0(struct frame, s->depth);
	s->inflight = 0;
	s->seq = 0;
	s->failed = 0;
	s->file_no = 0;
	s->frames_written = s->bytes_written = s->frames_dropped = 0;
	s->frames_copied = s->frames_direct = s->frames_pool = s->nlat = 0;
	s->reap_err = 0;
	s->reaper_stop = FALSE;
	if (!file_open(s))
		return FALSE;
	s->wake_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	if (s->wake_fd < 0) {
		GST_ELEMENT_ERROR(s, RESOURCE, FAILED, ("eventfd: %s", g_strerror(errno)), (NULL));
		return FALSE;
	}
	s->reaper = g_thread_try_new("dmaiosink-reap", reaper_main, s, NULL);
	if (!s->reaper) {
		GST_ELEMENT_ERROR(s, RESOURCE, FAILED, ("cannot start the reaper thread"), (NULL));
		return FALSE;
	}
	return TRUE;
}

static gboolean sink_stop(GstBaseSink *bs)
{
	GstDmaioSink *s = GST_DMAIO_SINK(bs);
	uint64_t one = 1;

	g_mutex_lock(&s->lock);
	if (s->q && s->reaper)
		drain(s);
	s->reaper_stop = TRUE;
	g_mutex_unlock(&s->lock);
	if (s->reaper) {
		if (write(s->wake_fd, &one, sizeof(one)) < 0)
			GST_WARNING_OBJECT(s, "waking the reaper: %s", g_strerror(errno));
		g_thread_join(s->reaper);
		s->reaper = NULL;
	}
	if (s->wake_fd >= 0)
		close(s->wake_fd);
	s->wake_fd = -1;
	dmaio_queue_free(s->q);
	s->q = NULL;
	if (s->frames) {
		for (unsigned i = 0; i < s->depth; i++) {
			frame_release(&s->frames[i]);
			dmaio_buf_free(s->frames[i].staging);
		}
		g_free(s->frames);
		s->frames = NULL;
	}
	imports_clear(s);
	file_close(s);
	return TRUE;
}

static GstStructure *stats_new(GstDmaioSink *s)
{
	guint64 n, *v, p50 = 0, p99 = 0, max = 0;
	GstStructure *st;

	g_mutex_lock(&s->stats_lock);
	n = MIN(s->nlat, LAT_SAMPLES);
	v = g_new(guint64, n ? n : 1);
	memcpy(v, s->lat_us, n * sizeof(*v));
	st = gst_structure_new("dmaiosink-stats",
			       "frames-written", G_TYPE_UINT64, s->frames_written,
			       "bytes-written", G_TYPE_UINT64, s->bytes_written,
			       "frames-dropped", G_TYPE_UINT64, s->frames_dropped,
			       "frames-direct", G_TYPE_UINT64, s->frames_direct,
			       "frames-copied", G_TYPE_UINT64, s->frames_copied,
			       "frames-pool", G_TYPE_UINT64, s->frames_pool, NULL);
	g_mutex_unlock(&s->stats_lock);
	if (n) {
		qsort(v, n, sizeof(*v), gst_dmaio_cmp_u64);
		p50 = v[n / 2];
		p99 = v[(n * 99) / 100 < n ? (n * 99) / 100 : n - 1];
		max = v[n - 1];
	}
	gst_structure_set(st, "latency-p50-us", G_TYPE_UINT64, p50, "latency-p99-us",
			  G_TYPE_UINT64, p99, "latency-max-us", G_TYPE_UINT64, max, NULL);
	g_free(v);
	return st;
}

static gboolean sink_event(GstBaseSink *bs, GstEvent *ev)
{
	GstDmaioSink *s = GST_DMAIO_SINK(bs);

	if (GST_EVENT_TYPE(ev) == GST_EVENT_EOS && s->q) {
		g_mutex_lock(&s->lock);
		drain(s);
		if (s->index)
			fflush(s->index);
		g_mutex_unlock(&s->lock);
		gst_element_post_message(GST_ELEMENT(s),
					 gst_message_new_element(GST_OBJECT(s), stats_new(s)));
	}
	return GST_BASE_SINK_CLASS(gst_dmaio_sink_parent_class)->event(bs, ev);
}

static bool rotate_due(GstDmaioSink *s, GstBuffer *buf, gsize size)
{
	if (!s->file_bytes)
		return false;
	if (s->max_bytes && s->file_bytes + size > s->max_bytes)
		return true;
	return s->max_time && GST_BUFFER_PTS_IS_VALID(buf) && GST_CLOCK_TIME_IS_VALID(s->file_t0) &&
	       GST_BUFFER_PTS(buf) >= s->file_t0 + s->max_time;
}

static struct frame *free_frame(GstDmaioSink *s)
{
	for (unsigned i = 0; i < s->depth; i++)
		if (!s->frames[i].busy)
			return &s->frames[i];
	return NULL;
}

static void post_drop(GstDmaioSink *s, GstBuffer *buf)
{
	GstClockTime ts = GST_BUFFER_PTS(buf);
	GstMessage *m = gst_message_new_qos(GST_OBJECT(s), FALSE,
					    gst_segment_to_running_time(&GST_BASE_SINK(s)->segment,
									GST_FORMAT_TIME, ts),
					    GST_CLOCK_TIME_NONE, ts, GST_BUFFER_DURATION(buf));

	gst_message_set_qos_stats(m, GST_FORMAT_BUFFERS, s->frames_written, s->frames_dropped);
	gst_element_post_message(GST_ELEMENT(s), m);
}

/* The ranges of one frame: its dma-buf memories written from the dma-bufs, or the whole buffer
 * copied into the frame's staging buffer. */
static int frame_ranges(GstDmaioSink *s, struct frame *f, GstBuffer *buf, struct dmaio_io *ios,
			unsigned *nios)
{
	guint nmem = gst_buffer_n_memory(buf);
	bool direct = nmem <= MAX_MEMS;
	const uint64_t page = s->page;
	struct pool_mem *pm;
	uint64_t at = 0, skew, pool_off;
	GstMapInfo map;
	int err = 0, r;

	for (guint i = 0; i < nmem && direct; i++)
		direct = gst_is_dmabuf_memory(gst_buffer_peek_memory(buf, i));
	*nios = 0;
	if (direct) {
		for (guint i = 0; i < nmem; i++) {
			GstMemory *m = gst_buffer_peek_memory(buf, i);
			gsize off, size = gst_memory_get_sizes(m, &off, NULL);
			struct import *im = import_get(s, gst_dmabuf_memory_get_fd(m), &err);

			if (!im) {
				/* not importable (not a dma-buf after all, no descriptor): copy */
				for (unsigned k = 0; k < f->nimports; k++)
					f->imports[k]->users--;
				f->nimports = 0;
				GST_DEBUG_OBJECT(s, "import failed (%s): copying", g_strerror(-err));
				direct = false;
				break;
			}
			im->users++;
			f->imports[f->nimports++] = im;
			ios[*nios] = (struct dmaio_io){ .struct_size = sizeof(struct dmaio_io),
							.op = DMAIO_OP_WRITE, .file = s->file,
							.file_off = f->off + at, .buf = im->buf,
							.buf_off = off, .len = size };
			at += size;
			(*nios)++;
		}
		if (direct) {
			f->gbuf = gst_buffer_ref(buf);
			s->frames_direct++;
			return 0;
		}
		*nios = 0;
	}
	/* Our pool's memory, placed where the file is in a page: written from where it is. */
	pm = pool_mem_of(buf, &pool_off);
	if (pm && pool_off % page == f->off % page) {
		ios[0] = (struct dmaio_io){ .struct_size = sizeof(struct dmaio_io),
					    .op = DMAIO_OP_WRITE, .file = s->file, .file_off = f->off,
					    .buf = pm->buf, .buf_off = pool_off, .len = f->size };
		*nios = 1;
		f->gbuf = gst_buffer_ref(buf);
		s->frames_direct++;
		s->frames_pool++;
		return 0;
	}
	/* System memory (or not importable): into the staging buffer, at the file offset's place
	 * in a page. Frames follow one another in the file, so a frame whose size is no multiple
	 * of the page (1080p NV12: 3110400 bytes) starts within a page 7 times in 8; copied to
	 * offset 0, the buffer's pages would sit across the file's, and O_DIRECT from memory that
	 * is not page-aligned costs: a 1080p frame took 37-60 ms so on our host against 1.6-2.6 ms
	 * aligned, 20x for the write alone (bench/RESULTS.md, session 19). The copy is ours, so its
	 * place is free. */
	skew = f->off % page;
	if (f->staging_size < f->size + skew) {
		static const char *const memfd[] = { "memfd", NULL };
		struct dmaio_alloc_opts o = { .struct_size = sizeof(o),
					      .flags = DMAIO_ALLOC_ALLOW_NON_DMABUF,
					      .providers = memfd, .name = "dmaiosink-staging" };
		struct dmaio_reason why = { .struct_size = sizeof(why) };

		dmaio_buf_free(f->staging);
		f->staging = NULL;
		f->staging_size = 0;
		r = dmaio_buf_alloc(s->ctx, f->size + page, &o, &f->staging, &why);
		if (r) {
			GST_ELEMENT_ERROR(s, RESOURCE, NO_SPACE_LEFT,
					  ("cannot allocate a %" G_GUINT64_FORMAT "-byte staging buffer: %s",
					   f->size, why.text[0] ? why.text : g_strerror(-r)), (NULL));
			return r;
		}
		f->staging_size = f->size + page;
	}
	{
		void *p;

		r = dmaio_buf_map(f->staging, &p);
		if (r)
			return r;
		if (!gst_buffer_map(buf, &map, GST_MAP_READ))
			return -EIO;
		memcpy((char *)p + skew, map.data, map.size);
		gst_buffer_unmap(buf, &map);
	}
	ios[0] = (struct dmaio_io){ .struct_size = sizeof(struct dmaio_io), .op = DMAIO_OP_WRITE,
				    .file = s->file, .file_off = f->off, .buf = f->staging,
				    .buf_off = skew, .len = f->size };
	*nios = 1;
	s->frames_copied++;
	return 0;
}

static GstFlowReturn render_locked(GstDmaioSink *s, GstBuffer *buf)
{
	struct dmaio_io ios[MAX_MEMS];
	gsize size = gst_buffer_get_size(buf);
	struct frame *f;
	unsigned nios;
	int r;

	if (s->failed)
		return GST_FLOW_ERROR;
	if (!size)
		return GST_FLOW_OK;
	if (rotate_due(s, buf, size)) {
		if (drain(s) < 0 || s->failed)
			return GST_FLOW_ERROR;
		file_close(s);
		s->file_no++;
		if (!file_open(s))
			return GST_FLOW_ERROR;
	}
	/* room: what the reaper took; wait for it only when there is none */
	f = free_frame(s);
	if (!f && s->drop_when_full) {
		g_mutex_lock(&s->stats_lock);
		s->frames_dropped++;
		g_mutex_unlock(&s->stats_lock);
		post_drop(s, buf);
		return GST_FLOW_OK;
	}
	while (!f) {
		if (s->reap_err)
			return GST_FLOW_ERROR;
		g_cond_wait(&s->room, &s->lock);
		f = free_frame(s);
	}
	if (s->failed)
		return GST_FLOW_ERROR;
	f->busy = true;
	f->off = s->off;
	f->size = size;
	f->written = 0;
	f->err = 0;
	f->pts = GST_BUFFER_PTS(buf);
	f->seq = s->seq++;
	r = frame_ranges(s, f, buf, ios, &nios);
	if (r) {
		frame_release(f);
		return GST_FLOW_ERROR;
	}
	for (unsigned i = 0; i < nios; i++)
		ios[i].user_data = (uint64_t)(f - s->frames);
	f->pending = nios;
	f->t_submit = g_get_monotonic_time();
	r = dmaio_queue_submit(s->q, ios, nios);
	if (r != (int)nios) {
		GST_ELEMENT_ERROR(s, RESOURCE, WRITE, ("libdmaio refused the frame: %s",
						       g_strerror(r < 0 ? -r : EAGAIN)), (NULL));
		frame_release(f);
		return GST_FLOW_ERROR;
	}
	s->inflight++;
	s->off += size;
	s->file_bytes += size;
	if (!GST_CLOCK_TIME_IS_VALID(s->file_t0))
		s->file_t0 = GST_BUFFER_PTS(buf);
	return s->failed ? GST_FLOW_ERROR : GST_FLOW_OK;
}

static GstFlowReturn sink_render(GstBaseSink *bs, GstBuffer *buf)
{
	GstDmaioSink *s = GST_DMAIO_SINK(bs);
	GstFlowReturn ret;

	g_mutex_lock(&s->lock);
	ret = render_locked(s, buf);
	pool_settle(s, buf);
	g_mutex_unlock(&s->lock);
	return ret;
}

/* ---- GObject ------------------------------------------------------------------------------- */
static void set_property(GObject *o, guint id, const GValue *v, GParamSpec *ps)
{
	GstDmaioSink *s = GST_DMAIO_SINK(o);

	GST_OBJECT_LOCK(s);
	switch (id) {
	case PROP_LOCATION:
		g_free(s->location);
		s->location = g_value_dup_string(v);
		break;
	case PROP_QUEUE_DEPTH: s->depth = g_value_get_uint(v); break;
	case PROP_DSYNC: s->dsync = g_value_get_boolean(v); break;
	case PROP_APPEND: s->append = g_value_get_boolean(v); break;
	case PROP_MAX_SIZE_BYTES: s->max_bytes = g_value_get_uint64(v); break;
	case PROP_MAX_SIZE_TIME: s->max_time = g_value_get_uint64(v); break;
	case PROP_INDEX_LOCATION:
		g_free(s->index_location);
		s->index_location = g_value_dup_string(v);
		break;
	case PROP_DROP_WHEN_FULL: s->drop_when_full = g_value_get_boolean(v); break;
	case PROP_PROPOSE_POOL: s->propose_pool = g_value_get_boolean(v); break;
	default: G_OBJECT_WARN_INVALID_PROPERTY_ID(o, id, ps); break;
	}
	GST_OBJECT_UNLOCK(s);
}

static void get_property(GObject *o, guint id, GValue *v, GParamSpec *ps)
{
	GstDmaioSink *s = GST_DMAIO_SINK(o);

	switch (id) {
	case PROP_LOCATION: g_value_set_string(v, s->location); break;
	case PROP_QUEUE_DEPTH: g_value_set_uint(v, s->depth); break;
	case PROP_DSYNC: g_value_set_boolean(v, s->dsync); break;
	case PROP_APPEND: g_value_set_boolean(v, s->append); break;
	case PROP_MAX_SIZE_BYTES: g_value_set_uint64(v, s->max_bytes); break;
	case PROP_MAX_SIZE_TIME: g_value_set_uint64(v, s->max_time); break;
	case PROP_INDEX_LOCATION: g_value_set_string(v, s->index_location); break;
	case PROP_DROP_WHEN_FULL: g_value_set_boolean(v, s->drop_when_full); break;
	case PROP_PROPOSE_POOL: g_value_set_boolean(v, s->propose_pool); break;
	case PROP_STATS: g_value_take_boxed(v, stats_new(s)); break;
	default: G_OBJECT_WARN_INVALID_PROPERTY_ID(o, id, ps); break;
	}
}

static void finalize(GObject *o)
{
	GstDmaioSink *s = GST_DMAIO_SINK(o);

	g_free(s->location);
	g_free(s->index_location);
	g_free(s->cur_path);
	dmaio_ctx_free(s->ctx);
	g_mutex_clear(&s->pool_lock);
	g_mutex_clear(&s->stats_lock);
	g_mutex_clear(&s->lock);
	g_cond_clear(&s->room);
	G_OBJECT_CLASS(gst_dmaio_sink_parent_class)->finalize(o);
}

static void gst_dmaio_sink_init(GstDmaioSink *s)
{
	s->depth = DEFAULT_DEPTH;
	s->fd = -1;
	s->wake_fd = -1;
	s->propose_pool = TRUE;
	s->page = (uint64_t)sysconf(_SC_PAGESIZE);
	g_mutex_init(&s->pool_lock);
	g_mutex_init(&s->stats_lock);
	g_mutex_init(&s->lock);
	g_cond_init(&s->room);
	/* a file sink: no clock synchronisation by default (as filesink) */
	gst_base_sink_set_sync(GST_BASE_SINK(s), FALSE);
}

static void gst_dmaio_sink_class_init(GstDmaioSinkClass *k)
{
	GObjectClass *ok = G_OBJECT_CLASS(k);
	GstElementClass *ek = GST_ELEMENT_CLASS(k);
	GstBaseSinkClass *bk = GST_BASE_SINK_CLASS(k);
	const GParamFlags rw = G_PARAM_READWRITE | G_PARAM_STATIC_STRINGS |
			       GST_PARAM_MUTABLE_READY;

	GST_DEBUG_CATEGORY_INIT(dmaiosink_debug, "dmaiosink", 0, "libdmaio frame writer");
	ok->set_property = set_property;
	ok->get_property = get_property;
	ok->finalize = finalize;
	g_object_class_install_property(ok, PROP_LOCATION,
		g_param_spec_string("location", "Location",
				    "File to write; with max-size-* a pattern with one number "
				    "conversion (frames-%05d.raw), the file's number", NULL, rw));
	g_object_class_install_property(ok, PROP_QUEUE_DEPTH,
		g_param_spec_uint("queue-depth", "Queue depth",
				  "Frames in flight at most; a frame that finds none free waits for "
				  "the oldest (or is dropped with drop-when-full)", 1, MAX_DEPTH,
				  DEFAULT_DEPTH, rw));
	g_object_class_install_property(ok, PROP_DSYNC,
		g_param_spec_boolean("dsync", "O_DSYNC",
				     "Open the file O_DSYNC: a frame counts as written once durable "
				     "(named dsync: \"sync\" is GstBaseSink's clock synchronisation)",
				     FALSE, rw));
	g_object_class_install_property(ok, PROP_APPEND,
		g_param_spec_boolean("append", "Append",
				     "Write after the file's current end instead of truncating it",
				     FALSE, rw));
	g_object_class_install_property(ok, PROP_MAX_SIZE_BYTES,
		g_param_spec_uint64("max-size-bytes", "Max size in bytes",
				    "Start the next file before a frame would take the current one "
				    "past this size (0: no limit)", 0, G_MAXUINT64, 0, rw));
	g_object_class_install_property(ok, PROP_MAX_SIZE_TIME,
		g_param_spec_uint64("max-size-time", "Max size in time",
				    "Start the next file when a frame's PTS is this far past the "
				    "current file's first (ns, 0: no limit)", 0, G_MAXUINT64, 0, rw));
	g_object_class_install_property(ok, PROP_INDEX_LOCATION,
		g_param_spec_string("index-location", "Index location",
				    "Text index, one line per frame written: offset pts size (pts -1 "
				    "when none); a number pattern as location with rotation", NULL, rw));
	g_object_class_install_property(ok, PROP_DROP_WHEN_FULL,
		g_param_spec_boolean("drop-when-full", "Drop when full",
				     "Drop a frame that finds queue-depth frames in flight (QoS "
				     "message) instead of waiting", FALSE, rw));
	g_object_class_install_property(ok, PROP_PROPOSE_POOL,
		g_param_spec_boolean("propose-pool", "Propose a pool",
				     "Offer a source in system memory buffers of the sink's own "
				     "memory, placed where each frame falls in the file's pages, so "
				     "that its frames are written without a copy", TRUE, rw));
	g_object_class_install_property(ok, PROP_STATS,
		g_param_spec_boxed("stats", "Statistics",
				   "frames-written, bytes-written, frames-dropped, frames-direct (from "
				   "the frame's own memory: dma-bufs, the sink's pool), frames-pool (of "
				   "them, from the sink's pool), frames-copied, latency-p50/p99/max-us "
				   "(submit to on disk, last 4096 frames)", GST_TYPE_STRUCTURE,
				   G_PARAM_READABLE | G_PARAM_STATIC_STRINGS));
	gst_element_class_set_static_metadata(ek, "libdmaio frame writer", "Sink/File/Video",
		"Writes raw video frames (dma-bufs or system memory) to a file through a libdmaio "
		"queue, on the fastest path the kernel offers", "libdmaio");
	gst_element_class_add_static_pad_template(ek, &sink_template);
	bk->start = sink_start;
	bk->stop = sink_stop;
	bk->render = sink_render;
	bk->event = sink_event;
	bk->propose_allocation = sink_propose_allocation;
}
