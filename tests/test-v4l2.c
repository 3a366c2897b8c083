// SPDX-License-Identifier: MIT
/*
 * test-v4l2: real V4L2 frames through libdmaio, against the vivid virtual capture driver.
 *
 *   --mode mmap    vivid's own buffers (V4L2_MEMORY_MMAP), exported with VIDIOC_EXPBUF,
 *                  wrapped with dmaio_buf_import(), written to a file through a queue
 *                  (dmaio_file_open + dmaio_queue_new + dmaio_queue_submit/dmaio_queue_reap);
 *                  every byte of the file compared with the frame as V4L2 maps it (mmap of the
 *                  V4L2 buffer).
 *   --mode dmabuf  image buffers of ours (dmaio_buf_alloc_image() from --heap, CONTIGUOUS for a
 *                  CMA heap) queued to vivid as V4L2_MEMORY_DMABUF; vivid captures into them;
 *                  each frame written out through the queue and compared with the buffer as
 *                  mapped (dmaio_buf_map + dmaio_buf_sync_begin). The buffers are filled with a
 *                  position-encoded pattern before every QBUF: every line of every plane must
 *                  have been written by vivid. With a CMA heap also: an allocation that fits
 *                  takes CMA memory (CmaFree drops); one larger than the CMA area is refused
 *                  with -ENOMEM and allocates nothing.
 *
 * Both modes check first that dmaio_image_get_layout() gives what V4L2 reports (bytesperline ==
 * strides[0], sizeimage == total_size, the chroma plane of NV12 right after the luma).
 *
 * A missing vivid capture node (driver "vivid", V4L2_CAP_VIDEO_CAPTURE) is a skip (77) on the
 * host and a failure in the test VM (DMAIO_TEST_VM=1) or with --expect-devices.
 *
 * Usage: test-v4l2 --mode mmap|dmabuf [--heap NAME] [--expect-devices]
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <linux/videodev2.h>
#include <poll.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <drm_fourcc.h>

#include <cmocka.h>

#include "common.h"

#define MAX_BUFS 8

static struct test_args args;
static bool mode_dmabuf;
static struct dmaio_ctx *ctx;
static char vpath[64];

/* One capture case: a V4L2 format and the DRM fourcc of the same memory layout. */
struct fmt_case {
	const char *name;
	uint32_t v4l2;
	uint32_t drm;
	uint32_t width, height;
	uint32_t stride_align; /* passed to dmaio_image_get_layout(); the stride is then given to V4L2 */
};

static const struct fmt_case case_nv12_1080 = { "NV12 1920x1080", V4L2_PIX_FMT_NV12,
						DRM_FORMAT_NV12, 1920, 1080, 0 };
static const struct fmt_case case_yuyv_1080 = { "YUYV 1920x1080", V4L2_PIX_FMT_YUYV,
						DRM_FORMAT_YUYV, 1920, 1080, 0 };
/* 640 -> a 768-byte stride: V4L2 takes a custom bytesperline, our layout must agree */
static const struct fmt_case case_nv12_480_pad = { "NV12 640x480 stride 256-aligned",
						   V4L2_PIX_FMT_NV12, DRM_FORMAT_NV12, 640, 480,
						   256 };
static const struct fmt_case case_yuyv_360 = { "YUYV 640x360", V4L2_PIX_FMT_YUYV,
					       DRM_FORMAT_YUYV, 640, 360, 0 };

static int xioctl(int fd, unsigned long req, void *arg)
{
	int r;

	do
		r = ioctl(fd, req, arg);
	while (r < 0 && errno == EINTR);
	return r < 0 ? -errno : 0;
}

static void fourcc_str(uint32_t f, char out[5])
{
	for (int i = 0; i < 4; i++) {
		char c = (char)((f >> (8 * i)) & 0xff);

		out[i] = (c >= 32 && c < 127) ? c : '?';
	}
	out[4] = 0;
}

/* The first /dev/video* whose driver is vivid and that captures single-planar video. */
static int open_vivid(char *path, size_t len)
{
	int seen = 0;

	for (int i = 0; i < 64; i++) {
		struct v4l2_capability cap;
		uint32_t caps;
		char p[64];
		int fd;

		snprintf(p, sizeof(p), "/dev/video%d", i);
		fd = open(p, O_RDWR | O_NONBLOCK | O_CLOEXEC);
		if (fd < 0)
			continue;
		seen++;
		memset(&cap, 0, sizeof(cap));
		if (xioctl(fd, VIDIOC_QUERYCAP, &cap) == 0) {
			caps = (cap.capabilities & V4L2_CAP_DEVICE_CAPS) ? cap.device_caps
									  : cap.capabilities;
			if (strcmp((const char *)cap.driver, "vivid") == 0 &&
			    (caps & V4L2_CAP_VIDEO_CAPTURE) && (caps & V4L2_CAP_STREAMING)) {
				snprintf(path, len, "%s", p);
				printf("# %s: driver %s, card \"%s\", device caps 0x%08x\n", p,
				       cap.driver, cap.card, caps);
				return fd;
			}
		}
		close(fd);
	}
	if (!test_expect_device("v4l2")) {	/* the VM's kernel has no vivid (DMAIO_TEST_DEVICES) */
		printf("SKIP: no vivid capture node among %d /dev/video* nodes, and this kernel "
		       "has no vivid\n", seen);
		exit(TEST_SKIP);
	}
	test_no_device("no vivid single-planar capture node among %d /dev/video* nodes "
		  "(CONFIG_VIDEO_VIVID, multiplanar=1)", seen);
	return -1;
}

/* ------------------------------------------------------------------------------------------ */
/* Format and layout */

/* One capture case; the test's state: its teardown frees all of it, also after a failed assert
 * (stream off, buffers given back by vivid, then ours freed), so the next case finds vivid
 * idle. */
struct session {
	const struct fmt_case *fc;
	int vfd;
	bool streaming;
	int fd;                       /* the output file */
	char path[512];
	struct dmaio_file *file;
	struct dmaio_queue *q;
	uint8_t **copy;               /* [nframes]: each frame as captured */
	unsigned nframes;
	uint8_t *rd;
	struct v4l2_pix_format pix;
	struct dmaio_image_desc desc;
	struct dmaio_image_layout lay;
	unsigned nbufs;
	struct {
		void *vmap;           /* MMAP: the V4L2 mapping */
		size_t vlen;
		struct dmaio_buf *b;  /* MMAP: the import of the EXPBUF fd; DMABUF: ours */
		uint8_t *bmap;        /* dmaio_buf_map() of b */
		uint64_t fill_seed;   /* DMABUF: the pattern it holds before QBUF */
	} bufs[MAX_BUFS];
};

/* S_FMT as asked (the stride our layout gives when stride_align is set), then check that
 * dmaio_image_get_layout() describes exactly what V4L2 reports. */
static void set_format(struct session *s)
{
	const struct fmt_case *fc = s->fc;
	struct v4l2_format f;
	struct v4l2_streamparm parm;
	char got[5], want[5];

	memset(&s->desc, 0, sizeof(s->desc));
	s->desc.struct_size = sizeof(s->desc);
	s->desc.width = fc->width;
	s->desc.height = fc->height;
	s->desc.fourcc = fc->drm;
	s->desc.modifier = DRM_FORMAT_MOD_LINEAR;
	s->desc.stride_align = fc->stride_align;
	s->lay.struct_size = sizeof(s->lay);
	assert_rc_equal(dmaio_image_get_layout(&s->desc, &s->lay, NULL), 0);

	memset(&f, 0, sizeof(f));
	f.type = V4L2_BUF_TYPE_VIDEO_CAPTURE;
	f.fmt.pix.width = fc->width;
	f.fmt.pix.height = fc->height;
	f.fmt.pix.pixelformat = fc->v4l2;
	f.fmt.pix.field = V4L2_FIELD_NONE;
	f.fmt.pix.bytesperline = fc->stride_align > 1 ? s->lay.strides[0] : 0;
	assert_rc_equal(xioctl(s->vfd, VIDIOC_S_FMT, &f), 0);
	memset(&f, 0, sizeof(f));
	f.type = V4L2_BUF_TYPE_VIDEO_CAPTURE;
	assert_rc_equal(xioctl(s->vfd, VIDIOC_G_FMT, &f), 0);
	s->pix = f.fmt.pix;
	fourcc_str(s->pix.pixelformat, got);
	fourcc_str(fc->v4l2, want);
	if (s->pix.pixelformat != fc->v4l2 || s->pix.width != fc->width ||
	    s->pix.height != fc->height)
		fail_msg("%s: vivid gives %s %ux%u, asked %s %ux%u", fc->name, got, s->pix.width,
			 s->pix.height, want, fc->width, fc->height);
	printf("# %s: V4L2 bytesperline %u sizeimage %u; layout stride %u size %" PRIu64
	       ", %u planes\n", fc->name, s->pix.bytesperline, s->pix.sizeimage,
	       s->lay.strides[0], s->lay.total_size, s->lay.num_planes);

	/* the layout and V4L2 must agree on every byte's place */
	assert_int_equal(s->lay.offsets[0], 0);
	assert_int_equal(s->lay.strides[0], s->pix.bytesperline);
	assert_int_equal(s->lay.total_size, s->pix.sizeimage);
	if (fc->v4l2 == V4L2_PIX_FMT_NV12) {
		assert_int_equal(s->lay.num_planes, 2);
		/* V4L2's NV12: the CbCr plane follows the Y plane, same bytesperline */
		assert_int_equal(s->lay.offsets[1],
				 (uint64_t)s->pix.bytesperline * s->pix.height);
		assert_int_equal(s->lay.strides[1], s->pix.bytesperline);
		assert_int_equal(s->lay.plane_sizes[1],
				 (uint64_t)s->pix.bytesperline * s->pix.height / 2);
	} else {
		assert_int_equal(s->lay.num_planes, 1);
		assert_int_equal(s->lay.plane_sizes[0], s->pix.sizeimage);
	}

	/* 10 fps: vivid's capture thread has slack under TCG. When it runs late, 6.12's
	 * vivid_thread_vid_cap() can pass a negative timeout to schedule_timeout() (the lateness
	 * check and the wait read jiffies apart), which prints a stack trace: a VM failure. */
	memset(&parm, 0, sizeof(parm));
	parm.type = V4L2_BUF_TYPE_VIDEO_CAPTURE;
	parm.parm.capture.timeperframe.numerator = 1;
	parm.parm.capture.timeperframe.denominator = 10;
	if (xioctl(s->vfd, VIDIOC_S_PARM, &parm) == 0)
		printf("# %s: frame interval %u/%u s\n", fc->name,
		       parm.parm.capture.timeperframe.numerator,
		       parm.parm.capture.timeperframe.denominator);
}

/* ------------------------------------------------------------------------------------------ */
/* Buffers */

static void bufs_mmap(struct session *s)
{
	struct v4l2_requestbuffers rb = { .count = 4, .type = V4L2_BUF_TYPE_VIDEO_CAPTURE,
					  .memory = V4L2_MEMORY_MMAP };
	int rc;

	assert_rc_equal(xioctl(s->vfd, VIDIOC_REQBUFS, &rb), 0);
	assert_in_range(rb.count, 2, MAX_BUFS);
	s->nbufs = rb.count;
	for (unsigned i = 0; i < s->nbufs; i++) {
		struct v4l2_buffer vb = { .index = i, .type = V4L2_BUF_TYPE_VIDEO_CAPTURE,
					  .memory = V4L2_MEMORY_MMAP };
		struct v4l2_exportbuffer eb = { .type = V4L2_BUF_TYPE_VIDEO_CAPTURE, .index = i,
						.flags = O_RDWR | O_CLOEXEC };
		int fl;

		assert_rc_equal(xioctl(s->vfd, VIDIOC_QUERYBUF, &vb), 0);
		assert_true(vb.length >= s->pix.sizeimage);
		s->bufs[i].vmap = mmap(NULL, vb.length, PROT_READ, MAP_SHARED, s->vfd,
				       vb.m.offset);
		if (s->bufs[i].vmap == MAP_FAILED) {
			s->bufs[i].vmap = NULL;
			fail_msg("mmap of V4L2 buffer %u: %s", i, strerror(errno));
		}
		s->bufs[i].vlen = vb.length;
		assert_rc_equal(xioctl(s->vfd, VIDIOC_EXPBUF, &eb), 0);
		fl = fcntl(eb.fd, F_GETFD);
		rc = dmaio_buf_import(ctx, eb.fd, 0, &s->bufs[i].b);
		close(eb.fd); /* the import holds its own duplicate */
		/* EXPBUF gave a close-on-exec fd; the import took it */
		assert_true(fl >= 0 && (fl & FD_CLOEXEC));
		assert_rc_equal(rc, 0);
		assert_int_equal(dmaio_buf_kind(s->bufs[i].b), DMAIO_BUF_IMPORTED);
		assert_true(dmaio_buf_size(s->bufs[i].b) >= s->pix.sizeimage);
		assert_rc_equal(dmaio_buf_map(s->bufs[i].b, (void **)&s->bufs[i].bmap), 0);
	}
}

/* A "too large" or a "no such provider" from the heap means skip on the host. */
static void alloc_failed(const struct session *s, int rc, const struct dmaio_reason *why)
{
	if (test_is_skip_err(rc))
		test_no_device("dmaio_buf_alloc_image(%s, heap %s) = %s: %s", s->fc->name, args.heap,
			       test_errname(rc), why->text);
	fail_msg("dmaio_buf_alloc_image(%s, heap %s) = %s: %s", s->fc->name, args.heap,
		 test_errname(rc), why->text);
}

static bool heap_is_cma(void)
{
	return strcmp(args.heap, "cma") == 0;
}

static void bufs_dmabuf(struct session *s)
{
	struct v4l2_requestbuffers rb = { .count = 4, .type = V4L2_BUF_TYPE_VIDEO_CAPTURE,
					  .memory = V4L2_MEMORY_DMABUF };
	const char *provs[2] = { args.heap_name, NULL };
	int rc;

	assert_rc_equal(xioctl(s->vfd, VIDIOC_REQBUFS, &rb), 0);
	assert_in_range(rb.count, 2, MAX_BUFS);
	s->nbufs = rb.count;
	for (unsigned i = 0; i < s->nbufs; i++) {
		struct dmaio_alloc_opts o = { .struct_size = sizeof(o) };
		struct dmaio_image_layout lay;
		struct dmaio_reason why = { .struct_size = sizeof(why) };
		char name[DMAIO_BUF_NAME_MAX];

		snprintf(name, sizeof(name), "v4l2-test-%u", i);
		o.providers = provs;
		o.flags = heap_is_cma() ? DMAIO_ALLOC_CONTIGUOUS : 0;
		o.name = name;
		memset(&lay, 0xa5, sizeof(lay));
		lay.struct_size = sizeof(lay);
		rc = dmaio_buf_alloc_image(ctx, &s->desc, &o, &s->bufs[i].b, &lay, &why);
		if (rc)
			alloc_failed(s, rc, &why);
		assert_string_equal(dmaio_buf_provider(s->bufs[i].b), args.heap_name);
		/* dmaio_buf_alloc_image()'s layout is dmaio_image_get_layout()'s */
		assert_int_equal(lay.total_size, s->lay.total_size);
		assert_int_equal(lay.num_planes, s->lay.num_planes);
		assert_int_equal(lay.strides[0], s->lay.strides[0]);
		assert_int_equal(lay.offsets[s->lay.num_planes - 1],
				 s->lay.offsets[s->lay.num_planes - 1]);
		assert_int_equal(dmaio_buf_size(s->bufs[i].b), s->lay.total_size);
		assert_rc_equal(dmaio_buf_map(s->bufs[i].b, (void **)&s->bufs[i].bmap), 0);
	}
}

/* DMABUF: fill the buffer with its pattern, so that what vivid did not write stays visible. */
static void fill_before_qbuf(struct session *s, unsigned i, uint64_t seed)
{
	size_t sz = s->lay.total_size;

	assert_rc_equal(dmaio_buf_sync_begin(s->bufs[i].b, DMAIO_SYNC_WRITE), 0);
	pat_fill(s->bufs[i].bmap, sz, seed, 0);
	assert_rc_equal(dmaio_buf_sync_end(s->bufs[i].b, DMAIO_SYNC_WRITE), 0);
	s->bufs[i].fill_seed = seed;
}

static void qbuf(struct session *s, unsigned i)
{
	struct v4l2_buffer vb = { .index = i, .type = V4L2_BUF_TYPE_VIDEO_CAPTURE };

	if (mode_dmabuf) {
		vb.memory = V4L2_MEMORY_DMABUF;
		vb.m.fd = dmaio_buf_fd(s->bufs[i].b);
		vb.length = (uint32_t)dmaio_buf_size(s->bufs[i].b);
	} else {
		vb.memory = V4L2_MEMORY_MMAP;
	}
	assert_rc_equal(xioctl(s->vfd, VIDIOC_QBUF, &vb), 0);
}

/* Wait (poll; vivid under TCG is slow) for one filled buffer. */
static void dqbuf(struct session *s, struct v4l2_buffer *vb)
{
	for (int tries = 0;; tries++) {
		struct pollfd p = { .fd = s->vfd, .events = POLLIN };
		int rc;

		memset(vb, 0, sizeof(*vb));
		vb->type = V4L2_BUF_TYPE_VIDEO_CAPTURE;
		vb->memory = mode_dmabuf ? V4L2_MEMORY_DMABUF : V4L2_MEMORY_MMAP;
		rc = xioctl(s->vfd, VIDIOC_DQBUF, vb);
		if (rc == 0)
			break;
		assert_rc_equal(rc, -EAGAIN);
		if (tries >= 60)
			fail_msg("no frame from vivid in 60 s");
		rc = poll(&p, 1, 1000);
		if (rc < 0 && errno != EINTR)
			fail_msg("poll: %s", strerror(errno));
	}
	assert_in_range(vb->index, 0, s->nbufs - 1);
	if (vb->flags & V4L2_BUF_FLAG_ERROR)
		fail_msg("buffer %u flagged ERROR", vb->index);
	assert_int_equal(vb->bytesused, s->pix.sizeimage);
}

/* DMABUF: vivid wrote every line of every plane (no line still holds the fill pattern) and
 * nearly every byte (a byte may equal the pattern by chance). */
static void check_written_by_vivid(struct session *s, unsigned i, unsigned frame)
{
	const uint8_t *m = s->bufs[i].bmap;
	uint64_t seed = s->bufs[i].fill_seed, same = 0, total = 0;
	/* bytes of picture per line: NV12 luma and chroma lines are width bytes, YUYV 2 x width */
	uint64_t vis = (uint64_t)s->fc->width * (s->fc->v4l2 == V4L2_PIX_FMT_YUYV ? 2 : 1);

	for (unsigned p = 0; p < s->lay.num_planes; p++) {
		const struct plane pl_v = plane_of(&s->lay, p), *pl = &pl_v;

		for (uint64_t off = pl->offset; off < pl->offset + pl->size; off += pl->stride) {
			if (pat_check(m + off, pl->stride, seed, off) < 0)
				fail_msg("frame %u (buffer %u): plane %u line at %" PRIu64
					 " not written by vivid", frame, i, p, off);
		}
	}
	/* the picture bytes of each line (a padded stride's tail is not vivid's to write) */
	for (unsigned p = 0; p < s->lay.num_planes; p++) {
		const struct plane pl_v = plane_of(&s->lay, p), *pl = &pl_v;

		for (uint64_t off = pl->offset; off < pl->offset + pl->size; off += pl->stride) {
			for (uint64_t x = off; x < off + vis; x++)
				same += m[x] == pat_byte(seed, x);
			total += vis;
		}
	}
	if (same >= total / 16)
		fail_msg("frame %u: %" PRIu64 " of %" PRIu64
			 " picture bytes still hold the fill pattern", frame, same, total);
}

/* ------------------------------------------------------------------------------------------ */
/* The session: made by the setup, everything freed by the teardown */

static int session_setup(void **state)
{
	struct session *s = calloc(1, sizeof(*s));

	if (!s)
		return -1;
	s->vfd = -1;
	s->fd = -1;
	*state = s;
	return 0;
}

static int session_teardown(void **state)
{
	struct session *s = *state;
	enum v4l2_buf_type type = V4L2_BUF_TYPE_VIDEO_CAPTURE;
	struct v4l2_requestbuffers rb = { .count = 0, .type = V4L2_BUF_TYPE_VIDEO_CAPTURE,
					  .memory = mode_dmabuf ? V4L2_MEMORY_DMABUF
								: V4L2_MEMORY_MMAP };
	int rc = 0;

	if (s->streaming && xioctl(s->vfd, VIDIOC_STREAMOFF, &type))
		rc = -1;
	for (unsigned i = 0; i < s->nbufs; i++)
		if (s->bufs[i].vmap)
			munmap(s->bufs[i].vmap, s->bufs[i].vlen);
	/* vivid lets go of the buffers (and of our dma-bufs) first; also of those a REQBUFS
	 * gave before an assert stopped the test */
	if (s->vfd >= 0 && xioctl(s->vfd, VIDIOC_REQBUFS, &rb) && s->nbufs)
		rc = -1;
	for (unsigned i = 0; i < s->nbufs; i++)
		dmaio_buf_free(s->bufs[i].b);
	dmaio_queue_free(s->q);
	dmaio_file_close(s->file);
	for (unsigned k = 0; s->copy && k < s->nframes; k++)
		free(s->copy[k]);
	free(s->copy);
	free(s->rd);
	if (s->fd >= 0) {
		close(s->fd);
		unlink(s->path);
	}
	if (s->vfd >= 0)
		close(s->vfd);
	free(s);
	if (rc)
		print_error("teardown: STREAMOFF or REQBUFS 0 failed\n");
	return rc;
}

/* ------------------------------------------------------------------------------------------ */
/* Capture -> queue -> file -> compare */

static void capture_case(struct session *s, const struct fmt_case *fc)
{
	unsigned frame = 0, gaps = 0, ndiffer = 0;
	enum v4l2_buf_type type = V4L2_BUF_TYPE_VIDEO_CAPTURE;
	uint32_t last_seq = 0;
	uint8_t fds_before[1024];
	size_t fsz;
	int rc, path_used = -1, nnew = 0;

	test_fd_snapshot(fds_before, (int)sizeof(fds_before));
	s->fc = fc;
	s->nframes = args.quick ? 4 : 12;
	s->vfd = open(vpath, O_RDWR | O_NONBLOCK | O_CLOEXEC);
	if (s->vfd < 0)
		fail_msg("open %s: %s", vpath, strerror(errno));
	set_format(s);
	fsz = s->pix.sizeimage;
	if (mode_dmabuf)
		bufs_dmabuf(s);
	else
		bufs_mmap(s);

	/* the file: frame k at k * sizeimage, prefilled so an unwritten byte shows, a guard after */
	s->fd = test_tmpfile(NULL, s->path, sizeof(s->path));
	assert_rc_equal(file_fill_pattern(s->fd, 0, s->nframes * fsz + 4096, SEED_DEST), 0);
	assert_rc_equal(dmaio_file_open(ctx, s->fd, 0, &s->file), 0);
	assert_rc_equal(dmaio_queue_new(ctx, 8, 0, &s->q), 0);
	s->copy = calloc(s->nframes, sizeof(*s->copy));
	s->rd = malloc(fsz);
	assert_non_null(s->copy);
	assert_non_null(s->rd);

	/* every descriptor made for the buffers, imports, file and queue is close-on-exec */
	assert_int_equal(test_check_new_fds_cloexec(fds_before, (int)sizeof(fds_before), fc->name,
						    &nnew), 0);
	assert_true(nnew > 0);
	for (unsigned i = 0; i < s->nbufs; i++) {
		if (mode_dmabuf)
			fill_before_qbuf(s, i, SEED_GUARD + i);
		qbuf(s, i);
	}
	assert_rc_equal(xioctl(s->vfd, VIDIOC_STREAMON, &type), 0);
	s->streaming = true;

	while (frame < s->nframes) {
		struct v4l2_buffer got[MAX_BUFS];
		struct dmaio_io ios[MAX_BUFS];
		struct dmaio_done done[MAX_BUFS];
		unsigned n = 0, want = s->nbufs - 1, reaped = 0;

		/* dmaio_queue_reap() is given done + reaped: every element carries the stride */
		for (unsigned j = 0; j < MAX_BUFS; j++)
			done[j] = (struct dmaio_done){ .struct_size = sizeof(done[j]) };

		/* several frames at once, so several writes are in the queue together (one buffer
		 * stays with vivid so it keeps capturing) */
		if (want > s->nframes - frame)
			want = s->nframes - frame;
		if (want == 0)
			want = 1;
		while (n < want) {
			dqbuf(s, &got[n]);
			if (frame + n > 0 && got[n].sequence != last_seq + 1)
				gaps++;
			last_seq = got[n].sequence;
			memset(&ios[n], 0, sizeof(ios[n]));
			ios[n].struct_size = sizeof(ios[n]);
			ios[n].op = DMAIO_OP_WRITE;
			ios[n].buf = s->bufs[got[n].index].b;
			ios[n].buf_off = 0;
			ios[n].file = s->file;
			ios[n].file_off = (int64_t)((frame + n) * fsz);
			ios[n].len = fsz;
			ios[n].user_data = frame + n;
			n++;
		}
		assert_rc_equal(dmaio_queue_submit(s->q, ios, n), n);
		while (reaped < n) {
			rc = dmaio_queue_reap(s->q, done + reaped, n - reaped, n - reaped, -1);
			if (rc <= 0)
				fail_msg("dmaio_queue_reap = %s", test_errname(rc));
			reaped += (unsigned)rc;
		}
		for (unsigned j = 0; j < n; j++) {
			if (done[j].res != (int64_t)fsz)
				fail_msg("write of frame %" PRIu64 " = %s", done[j].user_data,
					 test_errname(done[j].res));
			if (path_used < 0)
				path_used = done[j].path;
		}
		for (unsigned j = 0; j < n; j++) {
			unsigned idx = got[j].index, k = frame + j;
			const uint8_t *ref;
			long long bad;

			assert_rc_equal(dmaio_buf_sync_begin(s->bufs[idx].b, DMAIO_SYNC_READ), 0);
			/* MMAP: the frame as V4L2 maps it; DMABUF: as our mapping shows it */
			ref = mode_dmabuf ? s->bufs[idx].bmap : (const uint8_t *)s->bufs[idx].vmap;
			if (!mode_dmabuf) {
				/* the import maps the same memory */
				bad = mem_first_diff(ref, s->bufs[idx].bmap, fsz);
				if (bad >= 0)
					fail_msg("frame %u: dmaio_buf_map of the import differs "
						 "from the V4L2 mmap at byte %lld", k, bad);
			} else {
				check_written_by_vivid(s, idx, k);
			}
			s->copy[k] = malloc(fsz);
			assert_non_null(s->copy[k]);
			memcpy(s->copy[k], ref, fsz);
			assert_int_equal(pread_full(s->fd, s->rd, fsz, (off_t)(k * fsz)), fsz);
			bad = mem_first_diff(s->rd, ref, fsz);
			if (bad >= 0)
				fail_msg("%s frame %u (buffer %u, sequence %u): the file differs "
					 "from the frame at byte %lld (file 0x%02x, frame 0x%02x)",
					 fc->name, k, idx, got[j].sequence, bad, s->rd[bad],
					 ref[bad]);
			assert_rc_equal(dmaio_buf_sync_end(s->bufs[idx].b, DMAIO_SYNC_READ), 0);
			if (k > 0 && mem_first_diff(s->copy[k - 1], s->copy[k], fsz) >= 0)
				ndiffer++;
			if (mode_dmabuf)
				fill_before_qbuf(s, idx, SEED_GUARD + 16 * (k + 1) + idx);
			qbuf(s, idx);
		}
		frame += n;
	}
	assert_rc_equal(xioctl(s->vfd, VIDIOC_STREAMOFF, &type), 0);
	s->streaming = false;

	/* the whole file again: each frame where it belongs, nothing after the last one */
	for (unsigned k = 0; k < s->nframes; k++) {
		long long bad;

		assert_int_equal(pread_full(s->fd, s->rd, fsz, (off_t)(k * fsz)), fsz);
		bad = mem_first_diff(s->rd, s->copy[k], fsz);
		if (bad >= 0)
			fail_msg("%s: frame %u of the file changed after its write (byte %lld)",
				 fc->name, k, bad);
	}
	{
		long long bad = file_check_pattern(s->fd, (off_t)(s->nframes * fsz), 4096,
						   SEED_DEST, s->nframes * fsz);

		if (bad != -1)
			fail_msg("%s: the guard after the last frame was written (at %lld)",
				 fc->name, bad);
	}
	printf("# %s, %s: %u frames byte-exact (%zu bytes each) via %s, sequence gaps %u, "
	       "%u of %u frames differ from the one before\n", fc->name,
	       mode_dmabuf ? args.heap_name : "MMAP+EXPBUF", s->nframes, fsz,
	       dmaio_path_name(path_used) ? dmaio_path_name(path_used) : "?", gaps, ndiffer,
	       s->nframes - 1);
}

static void test_nv12_1080(void **state)
{
	capture_case(*state, &case_nv12_1080);
}

static void test_yuyv_1080(void **state)
{
	capture_case(*state, &case_yuyv_1080);
}

static void test_nv12_padded(void **state)
{
	capture_case(*state, &case_nv12_480_pad);
}

static void test_yuyv_360(void **state)
{
	capture_case(*state, &case_yuyv_360);
}

/* ------------------------------------------------------------------------------------------ */
/* CMA: memory really taken from the CMA area; too large refused, nothing allocated */

/* The buffers of test_cma_limits, freed by its teardown. */
struct cma_hold {
	struct dmaio_buf *b[16];
};

static int cma_setup(void **state)
{
	*state = calloc(1, sizeof(struct cma_hold));
	return *state ? 0 : -1;
}

static int cma_teardown(void **state)
{
	struct cma_hold *h = *state;

	for (size_t i = 0; i < ARRAY_SIZE(h->b); i++)
		dmaio_buf_free(h->b[i]);
	free(h);
	return 0;
}

static void test_cma_limits(void **state)
{
	struct cma_hold *h = *state;
	const char *provs[2] = { args.heap_name, NULL };
	struct dmaio_alloc_opts o = { .struct_size = sizeof(o) };
	struct dmaio_image_desc d = { .struct_size = sizeof(d) };
	struct dmaio_image_layout lay = { .struct_size = sizeof(lay) };
	long total = test_meminfo("CmaTotal"), free0, free1, free2;
	unsigned n = 1;
	int fds, fds0, rc;

	if (total <= 0)
		fail_msg("no CmaTotal in /proc/meminfo with CMA heap %s", args.heap_name);
	printf("# CMA area: CmaTotal %ld KiB, CmaFree %ld KiB\n", total, test_meminfo("CmaFree"));

	/* a 4K NV12 frame fits (12 MiB of a 64 MiB area): CmaFree drops */
	o.flags = DMAIO_ALLOC_CONTIGUOUS;
	d.width = 3840;
	d.height = 2160;
	d.fourcc = DRM_FORMAT_NV12;
	free0 = test_meminfo("CmaFree");
	/* providers NULL: the library picks a CMA heap */
	assert_rc_equal(dmaio_buf_alloc_image(ctx, &d, &o, &h->b[0], &lay, NULL), 0);
	free1 = test_meminfo("CmaFree");
	printf("# CONTIGUOUS 4K NV12: provider %s, %" PRIu64 " bytes, CmaFree %ld -> %ld KiB\n",
	       dmaio_buf_provider(h->b[0]), lay.total_size, free0, free1);
	/* CmaFree drops by less than the size (movable pages that had borrowed the area are
	 * migrated out), and pagemap cannot see the heap's VM_PFNMAP mapping: the proof that the
	 * memory is the CMA area's is that the area runs out. 4K frames are allocated until the
	 * kernel refuses (each alone fits under CmaTotal: the refusal is the kernel's, -ENOMEM);
	 * no more than CmaTotal can have been handed out. */
	if (free1 >= free0)
		fail_msg("CmaFree did not drop (%ld -> %ld KiB)", free0, free1);
	fds = test_count_fds();
	o.providers = provs;
	for (; n < ARRAY_SIZE(h->b); n++) {
		rc = dmaio_buf_alloc_image(ctx, &d, &o, &h->b[n], &lay, NULL);
		if (rc)
			break;
	}
	printf("# %u CONTIGUOUS 4K NV12 frames (%" PRIu64 " KiB) from %s, then %s\n", n,
	       n * lay.total_size / 1024, args.heap_name, test_errname(rc));
	/* the allocation after the last one, from the full CMA area */
	assert_rc_equal(rc, -ENOMEM);
	assert_null(h->b[n]); /* no buffer with the refusal */
	if ((long)(n * lay.total_size / 1024) > total)
		fail_msg("%u x %" PRIu64 " bytes from a %ld KiB area: not CMA memory", n,
			 lay.total_size, total);
	for (unsigned j = 0; j < n; j++) {
		dmaio_buf_free(h->b[j]);
		h->b[j] = NULL;
	}
	/* fds counted with the first buffer: it and the others are gone now */
	assert_true(test_count_fds() < fds);
	o.providers = NULL;
	/* the area is whole again */
	assert_rc_equal(dmaio_buf_alloc_image(ctx, &d, &o, &h->b[0], &lay, NULL), 0);
	dmaio_buf_free(h->b[0]);
	h->b[0] = NULL;

	/* larger than the whole CMA area: refused before the kernel is asked */
	fds0 = test_count_fds();
	free0 = test_meminfo("CmaFree");
	d.width = 4096;
	d.height = (uint32_t)(((uint64_t)total * 1024 / (4096 * 3 / 2) + 16) & ~1ull);
	o.providers = provs;
	printf("# NV12 4096x%u (> CmaTotal) from %s\n", d.height, args.heap_name);
	assert_rc_equal(dmaio_buf_alloc_image(ctx, &d, &o, &h->b[0], &lay, NULL), -ENOMEM);
	assert_null(h->b[0]);
	o.providers = NULL;
	assert_rc_equal(dmaio_buf_alloc(ctx, (uint64_t)total * 1024 + MiB, &o, &h->b[0], NULL),
			-ENOMEM);
	assert_null(h->b[0]);
	free2 = test_meminfo("CmaFree");
	/* the refusals allocated nothing */
	assert_int_equal(test_count_fds(), fds0);
	if (free2 < free0 - 64)
		fail_msg("CmaFree %ld -> %ld KiB after the refusals", free0, free2);
}

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_nv12_1080, session_setup, session_teardown),
		cmocka_unit_test_setup_teardown(test_yuyv_1080, session_setup, session_teardown),
		cmocka_unit_test_setup_teardown(test_nv12_padded, session_setup, session_teardown),
		cmocka_unit_test_setup_teardown(test_yuyv_360, session_setup, session_teardown),
	};
	const struct CMUnitTest cma_tests[] = {
		cmocka_unit_test_setup_teardown(test_cma_limits, cma_setup, cma_teardown),
	};
	char *rest[8];
	int nrest = 0, rc, vfd;
	const char *mode = NULL;

	/* --mode is ours; the rest goes to the common parser */
	rest[nrest++] = argv[0];
	for (int i = 1; i < argc; i++) {
		if (strcmp(argv[i], "--mode") == 0 && i + 1 < argc)
			mode = argv[++i];
		else if (strncmp(argv[i], "--mode=", 7) == 0)
			mode = argv[i] + 7;
		else if (nrest < (int)ARRAY_SIZE(rest) - 1)
			rest[nrest++] = argv[i];
	}
	rest[nrest] = NULL;
	if (!mode || (strcmp(mode, "mmap") && strcmp(mode, "dmabuf"))) {
		fprintf(stderr, "usage: %s --mode mmap|dmabuf [--heap NAME] [--expect-devices]\n",
			argv[0]);
		return 2;
	}
	mode_dmabuf = strcmp(mode, "dmabuf") == 0;
	test_parse_args(nrest, rest, &args, "system");
	setvbuf(stdout, NULL, _IOLBF, 0);
	if (mode_dmabuf && test_expected_kind(args.heap_name) != DMAIO_BUF_HEAP) {
		fprintf(stderr, "test-v4l2 --mode dmabuf takes a dma-heap name, not %s\n", args.heap);
		return 2;
	}
	vfd = open_vivid(vpath, sizeof(vpath));
	close(vfd);
	rc = dmaio_ctx_new(0, &ctx);
	if (rc) {
		fprintf(stderr, "dmaio_ctx_new = %s\n", test_errname(rc));
		return 1;
	}
	rc = cmocka_run_group_tests_name(mode_dmabuf ? args.heap : "mmap", tests, NULL, NULL);
	if (mode_dmabuf && heap_is_cma())
		rc |= cmocka_run_group_tests_name("cma limits", cma_tests, NULL, NULL);
	dmaio_ctx_free(ctx);
	test_cleanup();
	return rc ? 1 : 0;
}
