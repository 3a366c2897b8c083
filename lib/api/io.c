/* SPDX-License-Identifier: MIT */
/* The synchronous transfers: one request on a pooled queue, for a plain fd (probed for this call)
 * or a registered file; and dmaio_fd_choose_path. */
#include <string.h>

#include "api.h"
#include "../probe/probe.h"
#include "../queue/queue.h"

int dmaio_check_range(const struct dmaio_buf *buf, uint64_t buf_off, uint64_t file_off,
		      uint64_t len, uint32_t flags)
{
	if (!buf || (flags & ~DMAIO_RW_FLAGS_ALL) ||
	    (flags & DMAIO_RW_PATH_MASK) >= DMAIO_PATH_COUNT)
		return -EINVAL;
	if (buf_off > UINT64_MAX - len || file_off > (uint64_t)INT64_MAX ||
	    len > (uint64_t)INT64_MAX - file_off)
		return -EOVERFLOW;
	if (buf_off + len > buf->size)
		return -EINVAL;
	return 0;
}

static void fill_xfer(struct dmaio_xfer *x, const struct dmaio_req *r)
{
	struct dmaio_xfer v = { .struct_size = sizeof(v) };

	if (!x)
		return;
	v.done = r->done;
	v.path = (uint32_t)r->bulk;
	v.fallbacks = r->fallbacks;
	v.unaligned = r->unaligned;
	v.ns = r->t0; /* the duration, once finished */
	dmaio_abi_copy_out(x, &v, sizeof(v));
}

/* A caller's xfer: checked with the arguments, then zeroed (nothing done yet). */
static int xfer_begin(struct dmaio_xfer *x)
{
	struct dmaio_xfer zero = { .struct_size = sizeof(zero) };

	if (!x)
		return 0;
	if (dmaio_abi_check_out(x, DMAIO_SIZE_XFER))
		return -EINVAL;
	dmaio_abi_copy_out(x, &zero, sizeof(zero));
	return 0;
}

static int64_t run(struct dmaio_buf *buf, uint64_t buf_off, struct dmaio_file *f,
		   uint64_t file_off, uint64_t len, uint32_t flags, struct dmaio_xfer *xfer,
		   bool write)
{
	struct dmaio_req r;
	int err = dmaio_file_check_dir(f, write);

	if (err)
		return err;
	if (!len)
		return 0;
	dmaio_ctx_probe_base(buf->ctx);
	dmaio_q_req_init(&r, buf, f, write, buf_off, file_off, len, flags, 0);
	err = dmaio_q_run_one(buf->ctx, &r);
	if (err)
		return err;
	fill_xfer(xfer, &r);
	return r.res < 0 ? r.res : (int64_t)r.done;
}

static int64_t do_io(int fd, uint64_t file_off, struct dmaio_buf *buf, uint64_t buf_off,
		     uint64_t len, uint32_t flags, struct dmaio_xfer *xfer, bool write)
{
	struct dmaio_file f;
	int64_t r;

	r = xfer_begin(xfer);
	if (!r)
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

		dmaio_q_req_init(&q, buf, &f, write, buf_off, file_off, len, flags, 0);
		dmaio_q_account_failed(&q, (int)r);
	}
	dmaio_file_release(&f);
	return r;
}

static int64_t do_file_io(struct dmaio_file *file, uint64_t file_off, struct dmaio_buf *buf,
			  uint64_t buf_off, uint64_t len, uint32_t flags, struct dmaio_xfer *xfer,
			  bool write)
{
	int64_t r;

	r = xfer_begin(xfer);
	if (r)
		return r;
	if (!file)
		return -EINVAL;
	r = dmaio_check_range(buf, buf_off, file_off, len, flags);
	if (r)
		return r;
	if (file->ctx != buf->ctx)
		return -EINVAL;
	return run(buf, buf_off, file, file_off, len, flags, xfer, write);
}

DMAIO_EXPORT int64_t dmaio_fd_read(int fd, uint64_t file_off, struct dmaio_buf *buf,
				   uint64_t buf_off, uint64_t len, uint32_t flags,
				   struct dmaio_xfer *xfer)
{
	return do_io(fd, file_off, buf, buf_off, len, flags, xfer, false);
}

DMAIO_EXPORT int64_t dmaio_fd_write(int fd, uint64_t file_off, struct dmaio_buf *buf,
				    uint64_t buf_off, uint64_t len, uint32_t flags,
				    struct dmaio_xfer *xfer)
{
	return do_io(fd, file_off, buf, buf_off, len, flags, xfer, true);
}

DMAIO_EXPORT int64_t dmaio_file_read(struct dmaio_file *file, uint64_t file_off,
				     struct dmaio_buf *buf, uint64_t buf_off, uint64_t len,
				     uint32_t flags, struct dmaio_xfer *xfer)
{
	return do_file_io(file, file_off, buf, buf_off, len, flags, xfer, false);
}

DMAIO_EXPORT int64_t dmaio_file_write(struct dmaio_file *file, uint64_t file_off,
				      struct dmaio_buf *buf, uint64_t buf_off, uint64_t len,
				      uint32_t flags, struct dmaio_xfer *xfer)
{
	return do_file_io(file, file_off, buf, buf_off, len, flags, xfer, true);
}

DMAIO_EXPORT int dmaio_fd_choose_path(int fd, uint64_t file_off, struct dmaio_buf *buf,
				      uint64_t buf_off, uint64_t len, uint32_t op, uint32_t flags,
				      struct dmaio_reason *reason)
{
	struct dmaio_file f;
	struct dmaio_req r;
	const char *w = NULL;
	bool write = op == DMAIO_OP_WRITE;
	int err;

	if (dmaio_reason_check(reason) || (op != DMAIO_OP_READ && op != DMAIO_OP_WRITE))
		return -EINVAL;
	dmaio_reason_clear(reason);
	err = dmaio_check_range(buf, buf_off, file_off, len, flags);
	if (err)
		return err;
	if (fd < 0)
		return -EBADF;
	err = dmaio_file_probe(buf->ctx, fd, false, &f);
	if (!err)
		err = dmaio_file_check_dir(&f, write);
	if (!err) {
		dmaio_ctx_probe_base(buf->ctx);
		dmaio_q_req_init(&r, buf, &f, write, buf_off, file_off, len, flags, 0);
		err = dmaio_q_choose(&r, &w);
	}
	dmaio_file_release(&f);
	if (w)
		dmaio_reason_set(reason, err < 0 ? err : 0, "%s", w);
	return err;
}
