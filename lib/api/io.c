/* SPDX-License-Identifier: MIT */
/* The synchronous transfers: one request on a pooled queue, for a plain fd (probed for this call)
 * or a registered file; and dmaio_fd_choose_path. */
#include <string.h>

#include "api.h"
#include "../choose/choose.h"
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

/* The request a transfer of this range would make, for a decision without I/O (choose_path,
 * explain_path): the range checked, the file probed (*f: release it after), the base probe. */
static int decision_req(int fd, uint64_t file_off, struct dmaio_buf *buf, uint64_t buf_off,
			uint64_t len, uint32_t op, uint32_t flags, struct dmaio_file *f,
			struct dmaio_req *r)
{
	bool write = op == DMAIO_OP_WRITE;
	int err = dmaio_check_range(buf, buf_off, file_off, len, flags);

	if (err)
		return err;
	if (fd < 0)
		return -EBADF;
	err = dmaio_file_probe(buf->ctx, fd, false, f);
	if (!err)
		err = dmaio_file_check_dir(f, write);
	if (err) {
		dmaio_file_release(f);
		return err;
	}
	dmaio_ctx_probe_base(buf->ctx);
	dmaio_q_req_init(r, buf, f, write, buf_off, file_off, len, flags, 0);
	return 0;
}

DMAIO_EXPORT int dmaio_fd_choose_path(int fd, uint64_t file_off, struct dmaio_buf *buf,
				      uint64_t buf_off, uint64_t len, uint32_t op, uint32_t flags,
				      struct dmaio_reason *reason)
{
	struct dmaio_file f;
	struct dmaio_req r;
	const char *w = NULL;
	int err;

	if (dmaio_reason_check(reason) || (op != DMAIO_OP_READ && op != DMAIO_OP_WRITE))
		return -EINVAL;
	dmaio_reason_clear(reason);
	err = decision_req(fd, file_off, buf, buf_off, len, op, flags, &f, &r);
	if (err)
		return err;
	err = dmaio_q_choose(&r, &w);
	dmaio_file_release(&f);
	if (w)
		dmaio_reason_set(reason, err < 0 ? err : 0, "%s", w);
	return err;
}

static uint64_t round_ns(double ns)
{
	return ns <= 0 ? 0 : ns >= 1.8e19 ? UINT64_MAX : (uint64_t)(ns + 0.5);
}

DMAIO_EXPORT int dmaio_fd_explain_path(int fd, uint64_t file_off, struct dmaio_buf *buf,
				       uint64_t buf_off, uint64_t len, uint32_t op, uint32_t flags,
				       struct dmaio_path_estimate *est, uint32_t count)
{
	unsigned n = dmaio_choose_count();
	struct dmaio_cost_est e[DMAIO_PATH_SLOTS];
	const char *why[DMAIO_PATH_SLOTS];
	int status[DMAIO_PATH_SLOTS], ids[DMAIO_PATH_SLOTS], pick, err;
	uint32_t stride = 0;
	struct dmaio_file f;
	struct dmaio_req r;

	if ((count && !est) || (op != DMAIO_OP_READ && op != DMAIO_OP_WRITE))
		return -EINVAL;
	if (count) {
		stride = est->struct_size;
		if (stride < DMAIO_SIZE_PATH_ESTIMATE || stride > DMAIO_ABI_SIZE_MAX)
			return -EINVAL;
	}
	err = decision_req(fd, file_off, buf, buf_off, len, op, flags, &f, &r);
	if (err)
		return err;
	pick = dmaio_q_explain(&r, status, e, why, ids);
	dmaio_file_release(&f);
	for (unsigned i = 0; i < n && i < count; i++) {
		struct dmaio_path_estimate v = { .struct_size = sizeof(v) };
		struct dmaio_path_estimate *out =
			(struct dmaio_path_estimate *)((char *)est + (size_t)stride * i);
		double ratio = status[i] ? 1 : e[i].ratio;

		v.path = (uint32_t)ids[i];
		v.status = status[i] < 0 ? status[i] : 0;
		v.chosen = (int)i == pick;
		if (!status[i]) {
			v.est_ns = round_ns(e[i].est_ns);
			v.ops_ns = round_ns(e[i].ops_ns);
			v.bytes_ns = round_ns(e[i].bytes_ns);
			v.walk_ns = round_ns(e[i].walk_ns);
			v.setup_ns = round_ns(e[i].setup_ns);
			v.samples = e[i].samples;
			v.cpu_ns = round_ns(e[i].cpu_ns);
		}
		v.ratio_milli = ratio * 1000 >= 4e9 ? UINT32_MAX : (uint32_t)(ratio * 1000 + 0.5);
		snprintf(v.reason, sizeof(v.reason), "%s", why[i] ? why[i] : "");
		out->struct_size = stride;
		dmaio_abi_copy_out(out, &v, sizeof(v));
	}
	return (int)n;
}
