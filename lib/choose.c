/* SPDX-License-Identifier: MIT */
/* Path choice: the path table, scoring, fallback on refusal, and the read/write entry points. */
#include <fcntl.h>
#include <linux/dma-buf.h>
#include <string.h>
#include <unistd.h>

#include "dmaio-private.h"

/* Adding a path: a file in paths/ and a line here. Order breaks score ties. */
static const struct dmaio_path_ops *const path_table[] = {
	&dmaio_path_rw_file,
	&dmaio_path_uring_dmabuf,
	&dmaio_path_udmabuf_direct,
	&dmaio_path_bounce_direct,
	&dmaio_path_buffered,
	&dmaio_path_sendfile,
};

static const struct dmaio_path_ops *path_by_id(int id)
{
	for (size_t i = 0; i < ARRAY_SIZE(path_table); i++)
		if (path_table[i]->id == id)
			return path_table[i];
	return NULL;
}

/* Errors that mean "this path cannot do this", as opposed to real I/O errors. */
bool dmaio_errno_is_refusal(int err)
{
	switch (-err) {
	case EINVAL:     /* O_DIRECT alignment, RW_FILE exporter without the op */
	case EOPNOTSUPP: /* feature absent */
	case ENOTTY:     /* ioctl unknown to the kernel */
	case ENOSYS:     /* io_uring compiled out or filtered by seccomp */
	case EPERM:      /* io_uring_disabled, seccomp */
	case EXDEV:      /* copy_file_range across filesystems */
	case EFAULT:     /* O_DIRECT into PFN mappings */
	case ENODEV:     /* no CPU mapping */
		return true;
	default:
		return false;
	}
}

/* ---- helpers shared by the paths ---------------------------------------------------------- */
int dmaio_req_cpu_begin(struct dmaio_req *r)
{
	int err;

	if (r->cpu_synced || !dmaio_buf_is_dmabuf(r->buf))
		return 0;
	err = dmaio_sync_ioctl(r->buf->fd, DMA_BUF_SYNC_START |
				(r->write ? DMA_BUF_SYNC_READ : DMA_BUF_SYNC_WRITE));
	if (!err)
		r->cpu_synced = true;
	return err;
}

int dmaio_req_map(struct dmaio_req *r)
{
	int err;

	if (!r->addr) {
		err = dmaio_buf_get_addr(r->buf, &r->addr);
		if (err)
			return err;
	}
	return dmaio_req_cpu_begin(r);
}

int dmaio_req_buffered(struct dmaio_req *r, uint64_t rel, size_t n, bool count_unaligned)
{
	size_t moved = 0;
	int fd, err;

	if (!n)
		return 0;
	err = dmaio_req_map(r);
	if (err)
		return err;
	fd = dmaio_file_buffered_fd(r->file);
	if (fd < 0)
		return fd;
	if (r->write)
		err = dmaio_pwrite_full(fd, r->addr + r->buf_off + rel, n, r->file_off + rel, &moved);
	else
		err = dmaio_pread_full(fd, r->addr + r->buf_off + rel, n, r->file_off + rel, &moved);
	r->done += moved;
	if (count_unaligned)
		r->unaligned += moved;
	if (!err && moved < n)
		r->eof = true;
	return err;
}

/* ---- choice ------------------------------------------------------------------------------- */
/* The best path not yet tried: the forced one first (when given), then by score. */
static const struct dmaio_path_ops *pick(struct dmaio_req *r, unsigned tried, int forced,
					 int *score, const char **why, int *last_refusal)
{
	const struct dmaio_path_ops *best = NULL;
	const char *best_why = NULL;
	int best_score = 0;

	if (forced && !(tried & (1u << forced))) {
		const struct dmaio_path_ops *p = path_by_id(forced);
		const char *w = "forced";
		int s = p ? p->score(r, &w) : -EOPNOTSUPP;

		*why = w;
		if (s > 0) {
			*score = s;
			return p;
		}
		*last_refusal = s;
		*score = s;
		return NULL;
	}
	for (size_t i = 0; i < ARRAY_SIZE(path_table); i++) {
		const struct dmaio_path_ops *p = path_table[i];
		const char *w = "";
		int s;

		if (tried & (1u << p->id))
			continue;
		s = p->score(r, &w);
		if (s > best_score) {
			best = p;
			best_score = s;
			best_why = w;
		} else if (s <= 0) {
			DBG(r->ctx, "  %s: cannot: %s", p->name, w);
		}
	}
	*score = best_score;
	*why = best_why;
	return best;
}

static int check_args(const struct dmaio_buf *buf, size_t buf_off, int fd, off_t file_off,
		      size_t len, unsigned flags)
{
	if (!buf || (flags & ~DMAIO_RW_FLAGS_ALL) ||
	    (flags & DMAIO_RW_PATH_MASK) >= DMAIO_PATH_COUNT)
		return -EINVAL;
	if (fd < 0)
		return -EBADF;
	if (file_off < 0)
		return -EINVAL;
	if (buf_off > SIZE_MAX - len || (uint64_t)len > (uint64_t)INT64_MAX - (uint64_t)file_off)
		return -EOVERFLOW;
	if (buf_off + len > buf->size)
		return -EINVAL;
	return 0;
}

static int forced_path(struct dmaio_ctx *c, unsigned flags)
{
	int f = (int)(flags & DMAIO_RW_PATH_MASK);

	return f ? f : c->env_path;
}

static void req_init(struct dmaio_req *r, struct dmaio_buf *buf, struct dmaio_file *f, bool write,
		     size_t buf_off, off_t file_off, size_t len)
{
	memset(r, 0, sizeof(*r));
	r->ctx = buf->ctx;
	r->buf = buf;
	r->file = f;
	r->write = write;
	r->buf_off = buf_off;
	r->file_off = (uint64_t)file_off;
	r->len = len;
}

static void account(struct dmaio_req *r, const uint64_t *path_bytes, int path, int result,
		    unsigned fallbacks, uint64_t ns)
{
	struct dmaio_stats d = { 0 };
	struct dmaio_buf *b = r->buf;

	d.ops = 1;
	d.errors = result < 0;
	d.ns = ns;
	d.fallbacks = fallbacks;
	d.unaligned_bytes = r->unaligned;
	if (r->write)
		d.bytes_written = r->done;
	else
		d.bytes_read = r->done;
	memcpy(d.path_bytes, path_bytes, sizeof(d.path_bytes));
	d.last_path = path;
	d.last_result = result < 0 ? result : 0;
	d.last_done = r->done;
	pthread_mutex_lock(&b->lock);
	dmaio_stats_add(&b->stats, &d);
	pthread_mutex_unlock(&b->lock);
	pthread_mutex_lock(&r->ctx->lock);
	dmaio_stats_add(&r->ctx->stats, &d);
	pthread_mutex_unlock(&r->ctx->lock);
}

static ssize_t do_io(struct dmaio_buf *buf, size_t buf_off, int fd, off_t file_off, size_t len,
		     unsigned flags, struct dmaio_xfer *xfer, bool write)
{
	uint64_t path_bytes[DMAIO_PATH_COUNT] = { 0 };
	uint64_t t0 = dmaio_now_ns();
	const struct dmaio_path_ops *p;
	struct dmaio_file f;
	struct dmaio_req r;
	unsigned tried = 0, fallbacks = 0;
	int err, forced, score, bulk = DMAIO_PATH_AUTO, last_refusal = -EOPNOTSUPP;
	const char *why;

	if (xfer)
		memset(xfer, 0, sizeof(*xfer));
	err = check_args(buf, buf_off, fd, file_off, len, flags);
	if (err)
		return err;
	err = dmaio_file_open(&f, fd, write);
	if (err) {
		dmaio_file_close(&f);
		return err;
	}
	if (!len)
		return 0;
	req_init(&r, buf, &f, write, buf_off, file_off, len);
	forced = forced_path(buf->ctx, flags);
	DBG(r.ctx, "%s fd=%d off=%lld len=%zu buf=%s+%zu%s%s", write ? "write" : "read", fd,
	    (long long)file_off, len, buf->provider, buf_off, forced ? " forced=" : "",
	    forced ? dmaio_path_name(forced) : "");
	err = -EOPNOTSUPP;
	while (r.done < r.len && !r.eof) {
		uint64_t before = r.done;

		p = pick(&r, tried, forced, &score, &why, &last_refusal);
		if (!p) {
			if (forced && !(tried & (1u << forced))) {
				tried |= 1u << forced;
				DBG(r.ctx, "  forced path %s cannot serve: %s", dmaio_path_name(forced),
				    why ? why : "");
				if (flags & DMAIO_RW_NO_FALLBACK) {
					err = -EOPNOTSUPP;
					break;
				}
				fallbacks++;
				continue;
			}
			err = last_refusal;
			DBG(r.ctx, "  no path left: %s", strerror(-err));
			break;
		}
		tried |= 1u << p->id;
		DBG(r.ctx, "  path %s (score %d): %s", p->name, score, why ? why : "");
		err = p->run(&r);
		path_bytes[p->id] += r.done - before;
		if (r.done - before >= path_bytes[bulk] || bulk == DMAIO_PATH_AUTO)
			bulk = p->id;
		if (!err)
			break;
		if (!dmaio_errno_is_refusal(err) ||
		    (forced == p->id && (flags & DMAIO_RW_NO_FALLBACK))) {
			DBG(r.ctx, "  %s failed after %llu bytes: %s", p->name,
			    (unsigned long long)r.done, strerror(-err));
			if (forced == p->id && (flags & DMAIO_RW_NO_FALLBACK) &&
			    dmaio_errno_is_refusal(err) && r.done == before)
				err = -EOPNOTSUPP;
			break;
		}
		last_refusal = err;
		fallbacks++;
		DBG(r.ctx, "  %s refused (%s) after %llu bytes; falling back", p->name,
		    strerror(-err), (unsigned long long)r.done);
	}
	if (r.done == r.len || r.eof)
		err = 0;
	if (r.cpu_synced) {
		int e = dmaio_sync_ioctl(buf->fd, DMA_BUF_SYNC_END |
					 (write ? DMA_BUF_SYNC_READ : DMA_BUF_SYNC_WRITE));
		if (e && !err)
			err = e;
	}
	if (r.addr)
		dmaio_buf_put_addr(buf);
	dmaio_file_close(&f);
	account(&r, path_bytes, bulk, err, fallbacks, dmaio_now_ns() - t0);
	if (xfer) {
		xfer->done = r.done;
		xfer->path = bulk;
		xfer->fallbacks = fallbacks;
		xfer->unaligned = r.unaligned;
		xfer->ns = dmaio_now_ns() - t0;
	}
	DBG(r.ctx, "  => %s %llu bytes via %s%s%s", err ? "error after" : "done",
	    (unsigned long long)r.done, dmaio_path_name(bulk), err ? ": " : "",
	    err ? strerror(-err) : "");
	return err ? err : (ssize_t)r.done;
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

DMAIO_EXPORT int dmaio_choose_path(struct dmaio_buf *buf, size_t buf_off, int fd, off_t file_off,
				   size_t len, int write, unsigned flags, char *why, size_t why_len)
{
	const struct dmaio_path_ops *p;
	struct dmaio_file f;
	struct dmaio_req r;
	const char *w = NULL;
	int err, score, forced, last = -EOPNOTSUPP;

	err = check_args(buf, buf_off, fd, file_off, len, flags);
	if (err)
		return err;
	if (why && why_len)
		why[0] = 0;
	err = dmaio_file_open(&f, fd, write != 0);
	if (err) {
		dmaio_file_close(&f);
		return err;
	}
	req_init(&r, buf, &f, write != 0, buf_off, file_off, len);
	forced = forced_path(buf->ctx, flags);
	p = pick(&r, 0, forced, &score, &w, &last);
	if (!p && forced && !(flags & DMAIO_RW_NO_FALLBACK))
		p = pick(&r, 1u << forced, forced, &score, &w, &last);
	dmaio_file_close(&f);
	if (why && why_len)
		snprintf(why, why_len, "%s", w ? w : "");
	return p ? p->id : -EOPNOTSUPP;
}
