/* SPDX-License-Identifier: MIT */
/* The synchronous transfers: one request on a pooled queue, for a plain fd (probed for this call)
 * or a registered file; and dmaio_choose_path. */
#include <string.h>

#include "api.h"
#include "../probe/probe.h"
#include "../queue/queue.h"

int dmaio_check_range(const struct dmaio_buf *buf, uint64_t buf_off, int64_t file_off,
		      uint64_t len, unsigned flags)
{
	if (!buf || (flags & ~DMAIO_RW_FLAGS_ALL) ||
	    (flags & DMAIO_RW_PATH_MASK) >= DMAIO_PATH_COUNT)
		return -EINVAL;
	if (file_off < 0)
		return -EINVAL;
	if (buf_off > UINT64_MAX - len || len > (uint64_t)INT64_MAX - (uint64_t)file_off)
		return -EOVERFLOW;
	if (buf_off + len > buf->size)
		return -EINVAL;
	return 0;
}

static void fill_xfer(struct dmaio_xfer *x, const struct dmaio_req *r)
{
	if (!x)
		return;
	x->done = r->done;
	x->path = r->bulk;
	x->fallbacks = r->fallbacks;
	x->unaligned = r->unaligned;
	x->ns = r->t0; /* the duration, once finished */
}

static ssize_t run(struct dmaio_buf *buf, size_t buf_off, struct dmaio_file *f, off_t file_off,
		   size_t len, unsigned flags, struct dmaio_xfer *xfer, bool write)
{
	struct dmaio_req r;
	int err = dmaio_file_check_dir(f, write);

	if (err)
		return err;
	if (!len)
		return 0;
	dmaio_ctx_probe_base(buf->ctx);
	dmaio_q_req_init(&r, buf, f, write, buf_off, (uint64_t)file_off, len, flags, 0);
	err = dmaio_q_run_one(buf->ctx, &r);
	if (err)
		return err;
	fill_xfer(xfer, &r);
	return r.res < 0 ? (ssize_t)r.res : (ssize_t)r.done;
}

static ssize_t do_io(struct dmaio_buf *buf, size_t buf_off, int fd, off_t file_off, size_t len,
		     unsigned flags, struct dmaio_xfer *xfer, bool write)
{
	struct dmaio_file f;
	ssize_t r;

	if (xfer)
		memset(xfer, 0, sizeof(*xfer));
	r = dmaio_check_range(buf, buf_off, file_off, len, flags);
	if (r)
		return r;
	if (fd < 0)
		return -EBADF;
	r = dmaio_file_probe(buf->ctx, fd, false, &f);
	if (!r) {
		r = run(buf, buf_off, &f, file_off, len, flags, xfer, write);
	} else if (r != -EBADF && r != -EISDIR && r != -ESPIPE && r != -EINVAL) {
		/* the file is fine but the probe could not finish (EMFILE, ENOMEM...): a failed
		 * transfer, counted like one */
		struct dmaio_req q;

		dmaio_q_req_init(&q, buf, &f, write, buf_off, (uint64_t)file_off, len, flags, 0);
		dmaio_q_account_failed(&q, (int)r);
	}
	dmaio_file_release(&f);
	return r;
}

static ssize_t do_file_io(struct dmaio_file *file, off_t file_off, struct dmaio_buf *buf,
			  size_t buf_off, size_t len, unsigned flags, struct dmaio_xfer *xfer,
			  bool write)
{
	ssize_t r;

	if (xfer)
		memset(xfer, 0, sizeof(*xfer));
	if (!file)
		return -EINVAL;
	r = dmaio_check_range(buf, buf_off, file_off, len, flags);
	if (r)
		return r;
	if (file->ctx != buf->ctx)
		return -EINVAL;
	return run(buf, buf_off, file, file_off, len, flags, xfer, write);
}

DMAIO_EXPORT ssize_t dmaio_read_file_ex(struct dmaio_buf *buf, size_t buf_off, int fd,
					off_t file_off, size_t len, unsigned flags,
					struct dmaio_xfer *xfer)
{
	return do_io(buf, buf_off, fd, file_off, len, flags, xfer, false);
}

DMAIO_EXPORT ssize_t dmaio_write_file_ex(struct dmaio_buf *buf, size_t buf_off, int fd,
					 off_t file_off, size_t len, unsigned flags,
					 struct dmaio_xfer *xfer)
{
	return do_io(buf, buf_off, fd, file_off, len, flags, xfer, true);
}

DMAIO_EXPORT ssize_t dmaio_read_file(struct dmaio_buf *buf, size_t buf_off, int fd, off_t file_off,
				     size_t len, unsigned flags)
{
	return do_io(buf, buf_off, fd, file_off, len, flags, NULL, false);
}

DMAIO_EXPORT ssize_t dmaio_write_file(struct dmaio_buf *buf, size_t buf_off, int fd,
				      off_t file_off, size_t len, unsigned flags)
{
	return do_io(buf, buf_off, fd, file_off, len, flags, NULL, true);
}

DMAIO_EXPORT ssize_t dmaio_file_read(struct dmaio_file *file, off_t file_off, struct dmaio_buf *buf,
				     size_t buf_off, size_t len, unsigned flags,
				     struct dmaio_xfer *xfer)
{
	return do_file_io(file, file_off, buf, buf_off, len, flags, xfer, false);
}

DMAIO_EXPORT ssize_t dmaio_file_write(struct dmaio_file *file, off_t file_off,
				      struct dmaio_buf *buf, size_t buf_off, size_t len,
				      unsigned flags, struct dmaio_xfer *xfer)
{
	return do_file_io(file, file_off, buf, buf_off, len, flags, xfer, true);
}

DMAIO_EXPORT int dmaio_choose_path(struct dmaio_buf *buf, size_t buf_off, int fd, off_t file_off,
				   size_t len, int write, unsigned flags, char *why, size_t why_len)
{
	struct dmaio_file f;
	struct dmaio_req r;
	const char *w = NULL;
	int err;

	err = dmaio_check_range(buf, buf_off, file_off, len, flags);
	if (err)
		return err;
	if (fd < 0)
		return -EBADF;
	if (why && why_len)
		why[0] = 0;
	err = dmaio_file_probe(buf->ctx, fd, false, &f);
	if (!err)
		err = dmaio_file_check_dir(&f, write != 0);
	if (!err) {
		dmaio_ctx_probe_base(buf->ctx);
		dmaio_q_req_init(&r, buf, &f, write != 0, buf_off, (uint64_t)file_off, len, flags, 0);
		err = dmaio_q_choose(&r, &w);
	}
	dmaio_file_release(&f);
	if (why && why_len)
		snprintf(why, why_len, "%s", w ? w : "");
	return err;
}
