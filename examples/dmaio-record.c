// SPDX-License-Identifier: MIT
/*
 * dmaio-record: record camera frames to a file through libdmaio's queue, without ever blocking
 * the capture loop on the disk.
 *
 * Sources:
 *   --device /dev/videoN  a V4L2 single-planar capture device (e.g. vivid), buffers either
 *       --io mmap    the driver's (V4L2_MEMORY_MMAP), exported with VIDIOC_EXPBUF and wrapped
 *                    with dmaio_buf_import(), or
 *       --io dmabuf  ours: dmaio_buf_alloc_image() image buffers queued as V4L2_MEMORY_DMABUF.
 *   --synthetic           image buffers of ours filled by the program at --fps (a timerfd).
 *                         Each buffer is rendered once; per frame only a 64-byte stamp (frame
 *                         number, time) is written, so the CPU per frame is the write path's.
 *
 * The loop: poll() on the V4L2 fd (or the timer) and dmaio_queue_fd() together. A new frame is
 * submitted as one write (frame k at k * frame size); a completed write gives its buffer back
 * (VIDIOC_QBUF, or "free" for the synthetic source). Nothing in the loop waits for the disk.
 *
 * Drop policy (requeue on completion): a buffer returns to the driver only when its write has
 * completed. When every buffer is still being written, the driver has nowhere to put the next
 * frame and drops it; V4L2 shows that as a gap in v4l2_buffer.sequence, the synthetic source as a
 * tick with no free buffer. Those are "dropped (no free buffer)". A gap while buffers were queued
 * at the driver is the source's own (vivid falls behind its clock when the CPU is slow): counted
 * apart as "dropped by the source". The recording ends after --frames frames are written.
 *
 * --baseline-write[=buffered|direct] replaces the queue by a plain write() of each frame in the
 * loop (from the same mapped buffers), for a side-by-side CPU comparison; the loop then blocks.
 */
#include <dmaio.h>

#include <drm_fourcc.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <linux/videodev2.h>
#include <poll.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/ioctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/timerfd.h>
#include <time.h>
#include <unistd.h>

#define PROG "dmaio-record"
#define MAX_BUFS 32

enum source { SRC_V4L2, SRC_SYNTH };
enum io_mode { IO_MMAP, IO_DMABUF };
enum baseline { BASE_NONE, BASE_BUFFERED, BASE_DIRECT };

struct frame_buf {
	struct dmaio_buf *b;
	uint8_t *map;
	bool busy;          /* being written (or, for V4L2, not queued at the driver) */
	uint64_t frame;     /* frame number it holds while busy */
};

struct rec {
	/* options */
	const char *device, *out, *heap;
	enum source src;
	enum io_mode io;
	enum baseline base;
	uint32_t v4l2_fmt, drm_fmt, width, height;
	unsigned frames, nbufs, depth;
	double fps;
	bool contiguous, force, quiet;
	/* state */
	struct dmaio_ctx *ctx;
	struct dmaio_queue *q;
	struct dmaio_file *file;
	int out_fd, direct_fd, vfd, tfd;
	size_t frame_size;
	uint32_t bytesperline;
	struct dmaio_image_layout lay;
	struct frame_buf bufs[MAX_BUFS];
	unsigned at_driver;      /* V4L2: buffers queued at the driver */
	bool starved;            /* the driver had no buffer since the last frame */
	bool have_seq;
	uint32_t last_seq;
	unsigned pollerr;        /* POLLERR without a frame, in a row */
	/* counters */
	uint64_t captured;       /* frames accepted (submitted or written) */
	uint64_t written;        /* frames whose write completed */
	uint64_t dropped_nobuf;  /* no free buffer (ours) */
	uint64_t dropped_source; /* sequence gaps while buffers were queued (the source's) */
	uint64_t bytes;
	uint64_t in_flight;
	uint64_t *lat_ns;        /* per written frame: submit -> completion */
	uint64_t path_frames[DMAIO_PATH_SLOTS];
	uint64_t t_first, t_last;
};

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static uint64_t cpu_ns(void)
{
	struct rusage ru;

	getrusage(RUSAGE_SELF, &ru);
	return ((uint64_t)ru.ru_utime.tv_sec + (uint64_t)ru.ru_stime.tv_sec) * 1000000000ull +
	       ((uint64_t)ru.ru_utime.tv_usec + (uint64_t)ru.ru_stime.tv_usec) * 1000ull;
}

static int xioctl(int fd, unsigned long req, void *arg)
{
	int r;

	do
		r = ioctl(fd, req, arg);
	while (r < 0 && errno == EINTR);
	return r < 0 ? -errno : 0;
}

static void die(const char *fmt, ...) __attribute__((format(printf, 1, 2), noreturn));
static void die(const char *fmt, ...)
{
	va_list ap;

	fputs(PROG ": ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	exit(1);
}

/* A progress line only on an interactive terminal (not a serial console, usually a log). */
static bool interactive(int fd)
{
	const char *t;

	if (!isatty(fd))
		return false;
	t = ttyname(fd);
	return !t || (strcmp(t, "/dev/console") && strncmp(t, "/dev/ttyS", 9));
}

/* ------------------------------------------------------------------------------------------ */
/* Buffers */

/* Our image buffers: dmaio_buf_alloc_image() from --heap (or the library's order), CONTIGUOUS
 * on request; a plain memfd is allowed for the synthetic source when no dma-buf provider works. */
static void alloc_images(struct rec *r)
{
	const char *provs[2] = { r->heap, NULL };
	struct dmaio_image_desc d = { .struct_size = sizeof(d) };
	struct dmaio_alloc_opts o;
	struct dmaio_reason why = { .struct_size = sizeof(why) };
	char name[DMAIO_BUF_NAME_MAX];
	int rc;

	d.width = r->width;
	d.height = r->height;
	d.fourcc = r->drm_fmt;
	d.modifier = DRM_FORMAT_MOD_LINEAR;
	r->lay.struct_size = sizeof(r->lay);
	for (unsigned i = 0; i < r->nbufs; i++) {
		o = (struct dmaio_alloc_opts){ .struct_size = sizeof(o) };
		o.flags = r->contiguous ? DMAIO_ALLOC_CONTIGUOUS : 0;
		if (r->src == SRC_SYNTH && !r->heap && !r->contiguous)
			o.flags |= DMAIO_ALLOC_ALLOW_NON_DMABUF;
		o.providers = r->heap ? provs : NULL;
		snprintf(name, sizeof(name), "dmaio-record-%u", i);
		o.name = name;
		rc = dmaio_buf_alloc_image(r->ctx, &d, &o, &r->bufs[i].b, &r->lay, &why);
		if (rc)
			die("dmaio_buf_alloc_image(%ux%u, %s%s) failed: %s (%s)", r->width, r->height,
			    r->heap ? r->heap : "any provider", r->contiguous ? ", contiguous" : "",
			    strerror(-rc), why.text[0] ? why.text : "DMAIO_DEBUG=1 says why");
		rc = dmaio_buf_map(r->bufs[i].b, (void **)&r->bufs[i].map);
		if (rc)
			die("dmaio_buf_map: %s", strerror(-rc));
	}
	r->frame_size = r->lay.total_size;
}

/* Synthetic: render a picture once per buffer (luma ramp, neutral chroma). */
static void render_once(struct rec *r, unsigned i)
{
	struct frame_buf *fb = &r->bufs[i];
	uint64_t off0 = r->lay.offsets[0];
	uint32_t stride0 = r->lay.strides[0];

	dmaio_buf_sync_begin(fb->b, DMAIO_SYNC_WRITE);
	for (uint32_t y = 0; y < r->height; y++) {
		uint8_t *line = fb->map + off0 + (uint64_t)y * stride0;

		for (uint32_t x = 0; x < stride0; x++)
			line[x] = (uint8_t)(x + y + 37 * i);
	}
	for (unsigned p = 1; p < r->lay.num_planes; p++)
		memset(fb->map + r->lay.offsets[p], 128, r->lay.plane_sizes[p]);
	dmaio_buf_sync_end(fb->b, DMAIO_SYNC_WRITE);
}

/* Synthetic: the per-frame work of the source, a stamp of 64 bytes. */
static void stamp(struct rec *r, unsigned i, uint64_t frame)
{
	struct frame_buf *fb = &r->bufs[i];
	char s[64];

	memset(s, 0, sizeof(s));
	snprintf(s, sizeof(s), "dmaio-record frame %" PRIu64 " t %" PRIu64, frame, now_ns());
	dmaio_buf_sync_begin(fb->b, DMAIO_SYNC_WRITE);
	memcpy(fb->map, s, sizeof(s) < r->frame_size ? sizeof(s) : r->frame_size);
	dmaio_buf_sync_end(fb->b, DMAIO_SYNC_WRITE);
}

/* ------------------------------------------------------------------------------------------ */
/* V4L2 */

static void v4l2_open(struct rec *r)
{
	struct v4l2_capability cap;
	struct v4l2_format f;
	struct v4l2_streamparm parm;
	uint32_t caps;
	int rc;

	r->vfd = open(r->device, O_RDWR | O_NONBLOCK | O_CLOEXEC);
	if (r->vfd < 0)
		die("%s: %s", r->device, strerror(errno));
	memset(&cap, 0, sizeof(cap));
	rc = xioctl(r->vfd, VIDIOC_QUERYCAP, &cap);
	if (rc)
		die("%s: VIDIOC_QUERYCAP: %s (not a V4L2 device?)", r->device, strerror(-rc));
	caps = (cap.capabilities & V4L2_CAP_DEVICE_CAPS) ? cap.device_caps : cap.capabilities;
	if (!(caps & V4L2_CAP_VIDEO_CAPTURE)) {
		if (caps & V4L2_CAP_VIDEO_CAPTURE_MPLANE)
			die("%s: a multi-planar capture device: this example handles single-planar "
			    "capture only", r->device);
		die("%s: not a video capture device", r->device);
	}
	if (!(caps & V4L2_CAP_STREAMING))
		die("%s: no streaming I/O", r->device);

	/* our layout first: with --io dmabuf the driver must take its stride */
	if (r->io == IO_DMABUF) {
		alloc_images(r);
	} else {
		struct dmaio_image_desc d = { .struct_size = sizeof(d), .width = r->width,
					      .height = r->height, .fourcc = r->drm_fmt };
		struct dmaio_reason why = { .struct_size = sizeof(why) };

		r->lay.struct_size = sizeof(r->lay);
		rc = dmaio_image_get_layout(&d, &r->lay, &why);
		if (rc)
			die("dmaio_image_get_layout: %s (%s)", strerror(-rc), why.text);
	}
	memset(&f, 0, sizeof(f));
	f.type = V4L2_BUF_TYPE_VIDEO_CAPTURE;
	f.fmt.pix.width = r->width;
	f.fmt.pix.height = r->height;
	f.fmt.pix.pixelformat = r->v4l2_fmt;
	f.fmt.pix.field = V4L2_FIELD_NONE;
	f.fmt.pix.bytesperline = r->io == IO_DMABUF ? r->lay.strides[0] : 0;
	rc = xioctl(r->vfd, VIDIOC_S_FMT, &f);
	if (rc)
		die("%s: VIDIOC_S_FMT: %s", r->device, strerror(-rc));
	if (f.fmt.pix.pixelformat != r->v4l2_fmt || f.fmt.pix.width != r->width ||
	    f.fmt.pix.height != r->height)
		die("%s: the driver gives %.4s %ux%u, not %.4s %ux%u", r->device,
		    (const char *)&f.fmt.pix.pixelformat, f.fmt.pix.width, f.fmt.pix.height,
		    (const char *)&r->v4l2_fmt, r->width, r->height);
	r->bytesperline = f.fmt.pix.bytesperline;
	r->frame_size = f.fmt.pix.sizeimage;
	if (r->io == IO_DMABUF && (f.fmt.pix.bytesperline != r->lay.strides[0] ||
				   f.fmt.pix.sizeimage > r->lay.total_size))
		die("%s: the driver wants bytesperline %u, sizeimage %u; our image buffers have "
		    "stride %u, size %" PRIu64, r->device, f.fmt.pix.bytesperline,
		    f.fmt.pix.sizeimage, r->lay.strides[0], r->lay.total_size);

	memset(&parm, 0, sizeof(parm));
	parm.type = V4L2_BUF_TYPE_VIDEO_CAPTURE;
	if (r->fps > 0) {
		parm.parm.capture.timeperframe.numerator = 1000;
		parm.parm.capture.timeperframe.denominator = (uint32_t)(r->fps * 1000.0 + 0.5);
		rc = xioctl(r->vfd, VIDIOC_S_PARM, &parm);
	} else {
		rc = xioctl(r->vfd, VIDIOC_G_PARM, &parm);
	}
	if (rc == 0 && parm.parm.capture.timeperframe.numerator)
		r->fps = (double)parm.parm.capture.timeperframe.denominator /
			 parm.parm.capture.timeperframe.numerator;
	printf("source: %s (%s, \"%s\"), %.4s %ux%u, bytesperline %u, sizeimage %zu, %.2f fps "
	       "(driver)\n", r->device, cap.driver, cap.card, (const char *)&r->v4l2_fmt, r->width,
	       r->height, r->bytesperline, r->frame_size, r->fps);
}

static void v4l2_buffers(struct rec *r)
{
	struct v4l2_requestbuffers rb = { .count = r->nbufs, .type = V4L2_BUF_TYPE_VIDEO_CAPTURE,
					  .memory = r->io == IO_DMABUF ? V4L2_MEMORY_DMABUF
								       : V4L2_MEMORY_MMAP };
	int rc;

	rc = xioctl(r->vfd, VIDIOC_REQBUFS, &rb);
	if (rc)
		die("%s: VIDIOC_REQBUFS(%u, %s): %s", r->device, r->nbufs,
		    r->io == IO_DMABUF ? "DMABUF" : "MMAP", strerror(-rc));
	if (rb.count < 2 || rb.count > r->nbufs)
		die("%s: the driver gives %u buffers", r->device, rb.count);
	if (r->io == IO_DMABUF && rb.count < r->nbufs) {
		for (unsigned i = rb.count; i < r->nbufs; i++)
			dmaio_buf_free(r->bufs[i].b);
	}
	r->nbufs = rb.count;
	if (r->io == IO_DMABUF)
		return;
	for (unsigned i = 0; i < r->nbufs; i++) {
		/* O_RDWR: dmaio_buf_map() maps read-write */
		struct v4l2_exportbuffer eb = { .type = V4L2_BUF_TYPE_VIDEO_CAPTURE, .index = i,
						.flags = O_RDWR | O_CLOEXEC };

		rc = xioctl(r->vfd, VIDIOC_EXPBUF, &eb);
		if (rc)
			die("%s: VIDIOC_EXPBUF: %s (try --io dmabuf)", r->device, strerror(-rc));
		rc = dmaio_buf_import(r->ctx, eb.fd, 0, &r->bufs[i].b);
		close(eb.fd); /* the import keeps a duplicate */
		if (rc)
			die("dmaio_buf_import: %s", strerror(-rc));
		rc = dmaio_buf_map(r->bufs[i].b, (void **)&r->bufs[i].map);
		if (rc)
			die("dmaio_buf_map of an exported V4L2 buffer: %s", strerror(-rc));
	}
}

static void v4l2_qbuf(struct rec *r, unsigned i)
{
	struct v4l2_buffer vb = { .index = i, .type = V4L2_BUF_TYPE_VIDEO_CAPTURE };
	int rc;

	if (r->io == IO_DMABUF) {
		vb.memory = V4L2_MEMORY_DMABUF;
		vb.m.fd = dmaio_buf_fd(r->bufs[i].b);
		vb.length = (uint32_t)dmaio_buf_size(r->bufs[i].b);
	} else {
		vb.memory = V4L2_MEMORY_MMAP;
	}
	rc = xioctl(r->vfd, VIDIOC_QBUF, &vb);
	if (rc)
		die("%s: VIDIOC_QBUF: %s", r->device, strerror(-rc));
	r->bufs[i].busy = false;
	r->at_driver++;
}

static void v4l2_stream(struct rec *r, bool on)
{
	enum v4l2_buf_type t = V4L2_BUF_TYPE_VIDEO_CAPTURE;
	int rc = xioctl(r->vfd, on ? VIDIOC_STREAMON : VIDIOC_STREAMOFF, &t);

	if (rc)
		die("%s: %s: %s", r->device, on ? "STREAMON" : "STREAMOFF", strerror(-rc));
}

/* ------------------------------------------------------------------------------------------ */
/* Writing */

static void record_done(struct rec *r, uint64_t lat, int path)
{
	r->lat_ns[r->written++] = lat;
	r->bytes += r->frame_size;
	if (path >= 0 && (unsigned)path < DMAIO_PATH_SLOTS)
		r->path_frames[path]++;
	r->t_last = now_ns();
}

static void give_back(struct rec *r, unsigned i)
{
	if (r->src == SRC_V4L2)
		v4l2_qbuf(r, i);
	else
		r->bufs[i].busy = false;
}

/* Plain write() of the frame from the mapping, in the loop (the baseline). */
static void baseline_write(struct rec *r, unsigned i, uint64_t k)
{
	struct frame_buf *fb = &r->bufs[i];
	off_t off = (off_t)(k * r->frame_size);
	size_t len = r->frame_size, head = 0;
	uint64_t t0 = now_ns();
	ssize_t n;

	dmaio_buf_sync_begin(fb->b, DMAIO_SYNC_READ);
	if (r->base == BASE_DIRECT && r->direct_fd >= 0 && off % 4096 == 0) {
		head = len & ~(size_t)4095; /* O_DIRECT for the 4 KiB multiple, the tail buffered */
		for (size_t d = 0; d < head; d += (size_t)n) {
			n = pwrite(r->direct_fd, fb->map + d, head - d, off + (off_t)d);
			if (n <= 0)
				die("pwrite(O_DIRECT): %s", n < 0 ? strerror(errno) : "short write");
		}
	}
	for (size_t d = head; d < len; d += (size_t)n) {
		n = pwrite(r->out_fd, fb->map + d, len - d, off + (off_t)d);
		if (n <= 0)
			die("pwrite: %s", n < 0 ? strerror(errno) : "short write");
	}
	dmaio_buf_sync_end(fb->b, DMAIO_SYNC_READ);
	record_done(r, now_ns() - t0, -1);
	give_back(r, i);
}

/* A frame is in buffer i: write it as frame number r->captured. */
static void new_frame(struct rec *r, unsigned i)
{
	uint64_t k = r->captured;
	struct dmaio_io io = { .struct_size = sizeof(io) };
	int rc;

	if (!r->t_first)
		r->t_first = now_ns();
	r->bufs[i].busy = true;
	r->bufs[i].frame = k;
	if (r->base != BASE_NONE) {
		r->captured++;
		baseline_write(r, i, k);
		return;
	}
	io.op = DMAIO_OP_WRITE;
	io.buf = r->bufs[i].b;
	io.file = r->file;
	io.file_off = (int64_t)(k * r->frame_size);
	io.len = r->frame_size;
	io.user_data = i;
	rc = dmaio_queue_submit(r->q, &io, 1);
	if (rc == -EAGAIN || rc == 0) { /* the queue is full: the frame is dropped */
		r->dropped_nobuf++;
		give_back(r, i);
		return;
	}
	if (rc < 0)
		die("dmaio_queue_submit: %s", strerror(-rc));
	r->captured++;
	r->in_flight++;
}

static void reap(struct rec *r, unsigned min, int timeout_ms)
{
	struct dmaio_done d[32] = { { .struct_size = sizeof(d[0]) } };
	int n;

	n = dmaio_queue_reap(r->q, d, 32, min, timeout_ms);
	if (n == -ETIME)
		return;
	if (n < 0)
		die("dmaio_queue_reap: %s", strerror(-n));
	for (int j = 0; j < n; j++) {
		unsigned i = (unsigned)d[j].user_data;

		if (d[j].res != (int64_t)r->frame_size)
			die("writing frame %" PRIu64 " failed: %s", r->bufs[i].frame,
			    d[j].res < 0 ? strerror((int)-d[j].res) : "short write");
		r->in_flight--;
		record_done(r, d[j].ns, d[j].path);
		give_back(r, i);
	}
}

/* ------------------------------------------------------------------------------------------ */
/* Sources in the loop */

static void v4l2_ready(struct rec *r)
{
	for (;;) {
		struct v4l2_buffer vb = { .type = V4L2_BUF_TYPE_VIDEO_CAPTURE,
					  .memory = r->io == IO_DMABUF ? V4L2_MEMORY_DMABUF
								       : V4L2_MEMORY_MMAP };
		int rc = xioctl(r->vfd, VIDIOC_DQBUF, &vb);

		if (rc == -EAGAIN)
			return;
		if (rc)
			die("%s: VIDIOC_DQBUF: %s", r->device, strerror(-rc));
		r->pollerr = 0;
		r->at_driver--;
		if (r->at_driver == 0)
			r->starved = true;
		if (r->have_seq && vb.sequence > r->last_seq + 1) {
			uint64_t gap = vb.sequence - r->last_seq - 1;

			if (r->starved)
				r->dropped_nobuf += gap;
			else
				r->dropped_source += gap;
		}
		r->have_seq = true;
		r->last_seq = vb.sequence;
		r->starved = r->at_driver == 0;
		if (r->captured >= r->frames || (vb.flags & V4L2_BUF_FLAG_ERROR)) {
			give_back(r, vb.index); /* enough frames (or a broken one): back at once */
			continue;
		}
		new_frame(r, vb.index);
	}
}

static int free_buf(struct rec *r)
{
	for (unsigned i = 0; i < r->nbufs; i++)
		if (!r->bufs[i].busy)
			return (int)i;
	return -1;
}

/* Synthetic: @ticks frames are due now. */
/* Synthetic: @ticks frames are due now. Like a driver with its queued buffers, the frames that
 * came while the loop was away (more than one tick: a blocking baseline write) land in the
 * buffers that were free; the others are lost. Then each is written. */
static void synth_ticks(struct rec *r, uint64_t ticks)
{
	unsigned pending[MAX_BUFS], np = 0;

	while (ticks-- && r->captured + np < r->frames) {
		int i = free_buf(r);

		if (i < 0) {
			r->dropped_nobuf++;
			continue;
		}
		r->bufs[i].busy = true;
		pending[np++] = (unsigned)i;
	}
	for (unsigned j = 0; j < np; j++) {
		stamp(r, pending[j], r->captured);
		new_frame(r, pending[j]);
	}
}

static void progress(struct rec *r, bool final)
{
	double s = r->t_first ? (double)(now_ns() - r->t_first) / 1e9 : 0;

	fprintf(stderr, "\r%s: %" PRIu64 "/%u frames written, %" PRIu64 " dropped, %.1f MB/s   %s",
		PROG, r->written, r->frames, r->dropped_nobuf + r->dropped_source,
		s > 0 ? (double)r->bytes / 1e6 / s : 0.0, final ? "\n" : "");
}

static void run(struct rec *r)
{
	bool tty = !r->quiet && interactive(2);
	uint64_t last_progress = 0;
	int qfd = r->base == BASE_NONE ? dmaio_queue_fd(r->q) : -1;

	while (r->written < r->frames) {
		struct pollfd p[2];
		int np = 0, timeout = 1000, rc;
		bool want_src = r->captured < r->frames;

		/* the synthetic source without a rate: a frame whenever a buffer is free */
		if (r->src == SRC_SYNTH && r->tfd < 0 && want_src) {
			int i = free_buf(r);

			if (i >= 0) {
				stamp(r, (unsigned)i, r->captured);
				new_frame(r, (unsigned)i);
				continue;
			}
		}
		if (want_src && (r->src == SRC_V4L2 || r->tfd >= 0)) {
			p[np].fd = r->src == SRC_V4L2 ? r->vfd : r->tfd;
			p[np++].events = POLLIN;
		}
		if (qfd >= 0 && r->in_flight) {
			p[np].fd = qfd;
			p[np++].events = POLLIN;
		}
		if (np == 0) {
			if (r->base == BASE_NONE && r->in_flight)
				reap(r, 1, 1000);
			continue;
		}
		rc = poll(p, (nfds_t)np, timeout);
		if (rc < 0 && errno != EINTR)
			die("poll: %s", strerror(errno));
		if (rc == 0 && r->src == SRC_V4L2 && want_src && r->at_driver == r->nbufs)
			fprintf(stderr, "%s: no frame for a second (is the device streaming?)\n",
				PROG);
		for (int j = 0; j < np && rc > 0; j++) {
			if (!(p[j].revents & (POLLIN | POLLERR | POLLHUP)))
				continue;
			if (p[j].fd == qfd) {
				reap(r, 0, 0);
			} else if (r->src == SRC_V4L2) {
				/* POLLERR: not streaming, a queue error, or nothing queued;
				 * VIDIOC_DQBUF tells which (and dies with its errno) */
				if ((p[j].revents & POLLERR) && !(p[j].revents & POLLIN) &&
				    ++r->pollerr > 100)
					die("%s: poll keeps reporting POLLERR (revents 0x%x) with %u "
					    "buffers at the driver, DQBUF -EAGAIN", r->device,
					    p[j].revents, r->at_driver);
				v4l2_ready(r);
			} else {
				uint64_t ticks = 0;

				if (read(r->tfd, &ticks, sizeof(ticks)) == (ssize_t)sizeof(ticks))
					synth_ticks(r, ticks);
			}
		}
		if (tty && now_ns() - last_progress > 200000000ull) {
			last_progress = now_ns();
			progress(r, false);
		}
	}
	if (tty)
		progress(r, true);
}

/* ------------------------------------------------------------------------------------------ */
/* Options, report */

static void usage(FILE *out)
{
	fprintf(out,
		"Usage: " PROG " [OPTIONS] OUTPUT\n"
		"Record frames from a V4L2 capture device (or a synthetic source) to OUTPUT through\n"
		"libdmaio's queue, without blocking the capture loop on the disk. Frame k is at byte\n"
		"k * frame size of OUTPUT (raw frames, no container).\n"
		"\n"
		"  --device PATH      V4L2 capture device (default /dev/video0)\n"
		"  --io mmap|dmabuf   mmap: the driver's buffers, VIDIOC_EXPBUF + dmaio_buf_import (default);\n"
		"                     dmabuf: our image buffers (dmaio_buf_alloc_image) as V4L2_MEMORY_DMABUF\n"
		"  --synthetic        frames generated into our image buffers at --fps instead\n"
		"  --format NV12|YUYV pixel format (default NV12)\n"
		"  --size WxH         frame size (default 1920x1080)\n"
		"  --frames N         frames to write (default 300)\n"
		"  --buffers K        frame buffers, 2..%d (default 8)\n"
		"  --fps F            synthetic: frames per second (default 30, 0 = as fast as buffers\n"
		"                     free up); V4L2: the frame rate to ask the driver for (VIDIOC_S_PARM)\n"
		"  --heap NAME        allocate our buffers from NAME (a /dev/dma_heap entry, udmabuf, ...)\n"
		"  --contiguous       physically contiguous buffers (a CMA heap)\n"
		"  --depth D          queue depth (default 32)\n"
		"  --baseline-write[=buffered|direct]\n"
		"                     write each frame with pwrite() in the loop instead of the queue\n"
		"                     (direct: O_DIRECT for the 4 KiB-aligned part), for comparison\n"
		"  --force            overwrite OUTPUT if it exists\n"
		"  --quiet            no progress line\n"
		"  --version          print the version\n"
		"  -h, --help         this help\n"
		"\n"
		"Dropped frames: a buffer goes back to the driver when its write completes; a frame that\n"
		"arrives while every buffer is being written is lost (\"no free buffer\"). Gaps in the\n"
		"driver's sequence while it had buffers are the source's own (\"by the source\").\n"
		"Exit status: 0 all frames written, 1 an error, 2 a usage error.\n",
		MAX_BUFS);
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

static double pct_ms(const uint64_t *s, uint64_t n, double p)
{
	uint64_t i;

	if (!n)
		return 0;
	i = (uint64_t)(p * (double)(n - 1) + 0.5);
	return (double)s[i] / 1e6;
}

static void report(struct rec *r, uint64_t cpu, uint64_t wall, uint64_t sync_ns, uint64_t cpu_sync)
{
	struct dmaio_stats st = { .struct_size = sizeof(st) };
	double secs = (double)wall / 1e9;
	int first = 1;

	qsort(r->lat_ns, r->written, sizeof(*r->lat_ns), cmp_u64);
	printf("frames written:   %" PRIu64 " of %u (%zu bytes each, %.1f MB)\n", r->written,
	       r->frames, r->frame_size, (double)r->bytes / 1e6);
	printf("frames dropped:   %" PRIu64 " (no free buffer %" PRIu64 ", by the source %" PRIu64
	       ")\n", r->dropped_nobuf + r->dropped_source, r->dropped_nobuf, r->dropped_source);
	printf("wall time:        %.3f s (first frame to last write), %.1f frames/s, %.1f MB/s\n",
	       secs, secs > 0 ? (double)r->written / secs : 0,
	       secs > 0 ? (double)r->bytes / 1e6 / secs : 0);
	printf("fdatasync:        %.3f s at the end (%.3f ms CPU)\n", (double)sync_ns / 1e9,
	       (double)cpu_sync / 1e6);
	printf("CPU:              %.3f s user+sys, %.3f ms per frame (getrusage, all threads)\n",
	       (double)cpu / 1e9, r->written ? (double)cpu / 1e6 / (double)r->written : 0);
	printf("write latency:    p50 %.2f ms, p90 %.2f ms, p99 %.2f ms, max %.2f ms (%s)\n",
	       pct_ms(r->lat_ns, r->written, 0.50), pct_ms(r->lat_ns, r->written, 0.90),
	       pct_ms(r->lat_ns, r->written, 0.99), pct_ms(r->lat_ns, r->written, 1.0),
	       r->base == BASE_NONE ? "submit to completion" : "the pwrite() calls");
	if (r->base == BASE_NONE) {
		printf("paths:           ");
		for (unsigned p = 0; p < DMAIO_PATH_SLOTS; p++) {
			if (!r->path_frames[p])
				continue;
			printf("%s %s %" PRIu64 " frames", first ? "" : ",",
			       dmaio_path_name(p) ? dmaio_path_name(p) : "?", r->path_frames[p]);
			first = 0;
		}
		if (dmaio_ctx_get_stats(r->ctx, &st) == 0)
			printf(" (%" PRIu64 " fallbacks)", st.fallbacks);
		printf("\n");
	} else {
		printf("paths:            pwrite() (%s)\n",
		       r->base == BASE_DIRECT ? "O_DIRECT + buffered tail" : "buffered");
	}
}

static uint32_t parse_format(const char *s, uint32_t *drm)
{
	if (strcasecmp(s, "NV12") == 0) {
		*drm = DRM_FORMAT_NV12;
		return V4L2_PIX_FMT_NV12;
	}
	if (strcasecmp(s, "YUYV") == 0) {
		*drm = DRM_FORMAT_YUYV;
		return V4L2_PIX_FMT_YUYV;
	}
	return 0;
}

static bool parse_uint(const char *s, unsigned long min, unsigned long max, unsigned *out)
{
	char *end;
	unsigned long v;

	errno = 0;
	v = strtoul(s, &end, 10);
	if (errno || end == s || *end || v < min || v > max || s[0] == '-')
		return false;
	*out = (unsigned)v;
	return true;
}

/* The command line into @r's options (@r zeroed by the caller): -1 to go on, else the exit status
 * (--help, --version: 0; a usage error: 2). Apart from main so that it can be run alone
 * (tests/fuzz/fuzz-tool-options.c). */
static int parse_options(int argc, char **argv, struct rec *r)
{
	static const struct option opts[] = {
		{ "device", required_argument, NULL, 'd' },
		{ "io", required_argument, NULL, 'i' },
		{ "synthetic", no_argument, NULL, 'S' },
		{ "format", required_argument, NULL, 'f' },
		{ "size", required_argument, NULL, 's' },
		{ "frames", required_argument, NULL, 'n' },
		{ "buffers", required_argument, NULL, 'b' },
		{ "fps", required_argument, NULL, 'r' },
		{ "heap", required_argument, NULL, 'H' },
		{ "contiguous", no_argument, NULL, 'C' },
		{ "depth", required_argument, NULL, 'D' },
		{ "baseline-write", optional_argument, NULL, 'B' },
		{ "force", no_argument, NULL, 'F' },
		{ "quiet", no_argument, NULL, 'q' },
		{ "version", no_argument, NULL, 'V' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	bool fps_given = false;
	unsigned v;
	int c;

	r->device = "/dev/video0";
	r->v4l2_fmt = V4L2_PIX_FMT_NV12;
	r->drm_fmt = DRM_FORMAT_NV12;
	r->width = 1920;
	r->height = 1080;
	r->frames = 300;
	r->nbufs = 8;
	r->depth = 32;
	r->fps = 30;
	while ((c = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
		switch (c) {
		case 'd': r->device = optarg; break;
		case 'i':
			if (strcmp(optarg, "mmap") == 0)
				r->io = IO_MMAP;
			else if (strcmp(optarg, "dmabuf") == 0)
				r->io = IO_DMABUF;
			else
				goto bad;
			break;
		case 'S': r->src = SRC_SYNTH; break;
		case 'f':
			r->v4l2_fmt = parse_format(optarg, &r->drm_fmt);
			if (!r->v4l2_fmt)
				goto bad;
			break;
		case 's':
			if (sscanf(optarg, "%ux%u", &r->width, &r->height) != 2 || !r->width ||
			    !r->height || r->width > 16384 || r->height > 16384)
				goto bad;
			break;
		case 'n':
			if (!parse_uint(optarg, 1, 10000000, &r->frames))
				goto bad;
			break;
		case 'b':
			if (!parse_uint(optarg, 2, MAX_BUFS, &r->nbufs))
				goto bad;
			break;
		case 'r': {
			char *end;

			r->fps = strtod(optarg, &end);
			if (end == optarg || *end || r->fps < 0 || r->fps > 10000)
				goto bad;
			fps_given = true;
			break;
		}
		case 'H': r->heap = optarg; break;
		case 'C': r->contiguous = true; break;
		case 'D':
			if (!parse_uint(optarg, 1, DMAIO_QUEUE_DEPTH_MAX, &v))
				goto bad;
			r->depth = v;
			break;
		case 'B':
			if (!optarg || strcmp(optarg, "buffered") == 0)
				r->base = BASE_BUFFERED;
			else if (strcmp(optarg, "direct") == 0)
				r->base = BASE_DIRECT;
			else
				goto bad;
			break;
		case 'F': r->force = true; break;
		case 'q': r->quiet = true; break;
		case 'V': {
			unsigned lv = dmaio_version();

			printf(PROG " (libdmaio %u.%u.%u, built against %u.%u.%u)\n", lv >> 16,
			       (lv >> 8) & 0xff, lv & 0xff, DMAIO_VERSION_MAJOR, DMAIO_VERSION_MINOR,
			       DMAIO_VERSION_MICRO);
			return 0;
		}
		case 'h': usage(stdout); return 0;
		default: goto bad;
		}
	}
	if (optind != argc - 1)
		goto bad;
	r->out = argv[optind];
	if (r->src == SRC_V4L2 && !fps_given)
		r->fps = 0; /* keep the driver's rate */
	return -1;
bad:
	usage(stderr);
	return 2;
}

int main(int argc, char **argv)
{
	struct rec r;
	uint64_t cpu0, cpu1, cpu2, t_sync;
	int rc, oflags;

	memset(&r, 0, sizeof(r));
	r.out_fd = r.direct_fd = r.vfd = r.tfd = -1;
	rc = parse_options(argc, argv, &r);
	if (rc >= 0)
		return rc;
	setvbuf(stdout, NULL, _IOLBF, 0);

	/* refuse early (before the device is touched); the O_EXCL open below is the real check */
	if (!r.force && access(r.out, F_OK) == 0)
		die("%s exists (use --force to overwrite it)", r.out);
	rc = dmaio_ctx_new(0, &r.ctx);
	if (rc)
		die("dmaio_ctx_new: %s", strerror(-rc));
	r.lat_ns = calloc(r.frames, sizeof(*r.lat_ns));
	if (!r.lat_ns)
		die("out of memory");

	/* the source and its buffers */
	if (r.src == SRC_V4L2) {
		v4l2_open(&r);
		v4l2_buffers(&r);
	} else {
		alloc_images(&r);
		for (unsigned i = 0; i < r.nbufs; i++)
			render_once(&r, i);
		printf("source: synthetic %.4s %ux%u, %zu bytes per frame, %.2f fps%s\n",
		       (const char *)&r.v4l2_fmt, r.width, r.height, r.frame_size, r.fps,
		       r.fps > 0 ? "" : " (as fast as buffers free up)");
	}
	printf("buffers:          %u x %s (%s)%s\n", r.nbufs,
	       r.src == SRC_V4L2 && r.io == IO_MMAP ? "V4L2 MMAP, EXPBUF + dmaio_buf_import"
						    : "dmaio_buf_alloc_image",
	       dmaio_buf_provider(r.bufs[0].b), r.contiguous ? ", contiguous" : "");

	/* the output: never an existing file without --force */
	oflags = O_WRONLY | O_CREAT | O_CLOEXEC | (r.force ? O_TRUNC : O_EXCL);
	r.out_fd = open(r.out, oflags, 0644);
	if (r.out_fd < 0) {
		if (errno == EEXIST)
			die("%s exists (use --force to overwrite it)", r.out);
		die("%s: %s", r.out, strerror(errno));
	}
	if (r.base == BASE_DIRECT) {
		r.direct_fd = open(r.out, O_WRONLY | O_DIRECT | O_CLOEXEC);
		if (r.direct_fd < 0)
			fprintf(stderr, PROG ": O_DIRECT open refused (%s): buffered writes\n",
				strerror(errno));
	}
	if (r.base == BASE_NONE) {
		rc = dmaio_file_open(r.ctx, r.out_fd, 0, &r.file);
		if (rc)
			die("dmaio_file_open(%s): %s", r.out, strerror(-rc));
		rc = dmaio_queue_new(r.ctx, r.depth, 0, &r.q);
		if (rc)
			die("dmaio_queue_new: %s", strerror(-rc));
	}

	cpu0 = cpu_ns();
	if (r.src == SRC_V4L2) {
		for (unsigned i = 0; i < r.nbufs; i++)
			v4l2_qbuf(&r, i);
		v4l2_stream(&r, true);
	} else if (r.fps > 0) {
		uint64_t period = (uint64_t)(1e9 / r.fps);
		struct itimerspec its = {
			.it_interval = { (time_t)(period / 1000000000ull), (long)(period % 1000000000ull) },
			.it_value = { (time_t)(period / 1000000000ull), (long)(period % 1000000000ull) },
		};

		r.tfd = timerfd_create(CLOCK_MONOTONIC, TFD_CLOEXEC | TFD_NONBLOCK);
		if (r.tfd < 0 || timerfd_settime(r.tfd, 0, &its, NULL) < 0)
			die("timerfd: %s", strerror(errno));
		synth_ticks(&r, 1); /* the first frame now */
	}
	run(&r);
	if (r.src == SRC_V4L2)
		v4l2_stream(&r, false);
	cpu1 = cpu_ns();
	t_sync = now_ns();
	/* through the library when it wrote the file: the sync's time teaches its path choice
	 * what the page-cache writes cost */
	if (r.file) {
		rc = dmaio_file_sync(r.file, DMAIO_SYNC_DATA);
		if (rc)
			die("dmaio_file_sync(%s): %s", r.out, strerror(-rc));
	} else if (fdatasync(r.out_fd) < 0) {
		die("fdatasync(%s): %s", r.out, strerror(errno));
	}
	t_sync = now_ns() - t_sync;
	cpu2 = cpu_ns();
	report(&r, cpu1 - cpu0, r.t_last - r.t_first, t_sync, cpu2 - cpu1);

	dmaio_queue_free(r.q);
	dmaio_file_close(r.file);
	if (r.src == SRC_V4L2) {
		struct v4l2_requestbuffers rb = { .count = 0, .type = V4L2_BUF_TYPE_VIDEO_CAPTURE,
						  .memory = r.io == IO_DMABUF ? V4L2_MEMORY_DMABUF
									      : V4L2_MEMORY_MMAP };

		xioctl(r.vfd, VIDIOC_REQBUFS, &rb);
	}
	for (unsigned i = 0; i < r.nbufs; i++)
		dmaio_buf_free(r.bufs[i].b);
	if (r.vfd >= 0)
		close(r.vfd);
	if (r.tfd >= 0)
		close(r.tfd);
	if (r.direct_fd >= 0)
		close(r.direct_fd);
	if (close(r.out_fd) < 0)
		die("close(%s): %s", r.out, strerror(errno));
	free(r.lat_ns);
	dmaio_ctx_free(r.ctx);
	return r.written == r.frames ? 0 : 1;
}
