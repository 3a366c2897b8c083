/* SPDX-License-Identifier: MIT */
/* Path "sendfile": the kernel copies between the file and the memfd behind the buffer, with
 * copy_file_range (same filesystem) or splice through a pipe (across filesystems), both with
 * explicit offsets so no shared file position is touched. One CPU copy at best, no mapping.
 * The calls block: pieces run on the worker threads. */
#include <fcntl.h>
#include <unistd.h>

#include "path.h"
#include "../engine/engine.h"
#include "../split/split.h"
#include "../sys/sys.h"

#define PIECE (16u << 20)
#define PIPE_SIZE (1u << 20)

static int serve(const struct dmaio_req *r, int cached_pct, struct dmaio_cost_shape *sh,
		 const char **why)
{
	if (r->buf->memfd < 0) {
		*why = "no memfd behind this buffer";
		return -EOPNOTSUPP;
	}
	if (r->buf->kind == DMAIO_BUF_UDMABUF_HUGE && !r->write) {
		*why = "hugetlbfs memfds take no write()/splice";
		return -EOPNOTSUPP;
	}
	/* blocking splices through a pipe of PIPE_SIZE (two per pipe-full), the kernel copying
	 * between the page cache and the memfd: no mapping of ours */
	dmaio_path_shape(r, cached_pct, 1, false, PIECE, PIECE, sh);
	sh->calls = 2 * ((r->len - r->start + PIPE_SIZE - 1) / PIPE_SIZE);
	sh->ops = 0;
	*why = "in-kernel copy between the file and the memfd";
	return 0;
}

static int begin(struct dmaio_req *r, struct dmaio_engine *e)
{
	(void)e;
	if (r->buf->memfd < 0)
		return -EOPNOTSUPP;
	dmaio_split_req(r, 1, false);
	return 0;
}

/* splice [*in_off, +n) of in to [*out_off, ...) of out through a pipe; *moved bytes */
static int splice_copy(int in, uint64_t *in_off, int out, uint64_t *out_off, size_t n,
		       size_t *moved, bool *eof)
{
	int pfd[2], err;

	*moved = 0;
	err = sys_pipe(pfd);
	if (err)
		return err;
	(void)fcntl(pfd[1], F_SETPIPE_SZ, PIPE_SIZE);
	while (*moved < n && !err) {
		ssize_t got = sys_splice(in, in_off, pfd[1], NULL, MIN(n - *moved, PIPE_SIZE));

		if (got <= 0) {
			err = (int)got;
			*eof = !got;
			break;
		}
		while (got > 0) {
			ssize_t put = sys_splice(pfd[0], NULL, out, out_off, (size_t)got);

			if (put <= 0) {
				err = put ? (int)put : -EIO;
				break;
			}
			got -= put;
			*moved += (size_t)put;
		}
	}
	close(pfd[0]);
	close(pfd[1]);
	return err;
}

static int copy_call(struct dmaio_op *op)
{
	int in = op->to_file ? op->fd2 : op->fd, out = op->to_file ? op->fd : op->fd2;
	uint64_t foff = op->off, boff = op->off2;
	uint64_t *in_off = op->to_file ? &boff : &foff, *out_off = op->to_file ? &foff : &boff;
	bool cfr = true, eof = false;
	int err = 0;

	while (op->got < op->len && !eof && !err) {
		size_t n = op->len - op->got, moved = 0;

		if (cfr) {
			ssize_t c = sys_copy_file_range(in, in_off, out, out_off, n);

			if (c == -EXDEV || c == -EINVAL || c == -EOPNOTSUPP || c == -ENOSYS ||
			    c == -EBADF || c == -EPERM) {
				/* across filesystems, not for this file, or denied (seccomp): splice */
				cfr = false;
				continue;
			}
			if (c < 0)
				return (int)c;
			eof = !c;
			op->got += (uint32_t)c;
			continue;
		}
		err = splice_copy(in, in_off, out, out_off, n, &moved, &eof);
		op->got += (uint32_t)moved;
	}
	if (eof && !op->to_file)
		op->eof = true;
	else if (eof)
		err = err ? err : -EIO; /* the memfd ended early: cannot happen inside the buffer */
	return err;
}

static int next(struct dmaio_req *r, struct dmaio_engine *e, struct dmaio_op *op)
{
	uint64_t rel, n;
	bool direct;

	(void)e;
	if (!dmaio_split_next(r, PIECE, PIECE, &rel, &n, &direct))
		return 0;
	op->kind = DMAIO_OPK_CALL;
	op->call = copy_call;
	op->fd = r->file->bfd;
	op->fd2 = r->buf->memfd;
	op->off = r->file_off + rel;
	op->off2 = r->buf_off + rel;
	op->len = (uint32_t)n;
	op->to_file = r->write;
	op->rel = rel;
	r->cursor += n;
	return 1;
}

/* copy_file_range/splice that the kernel will not do here, a pipe this process cannot have, or
 * syscalls a seccomp filter denies (EPERM; a file that really refuses writes, immutable or
 * append-only, gives the next path the same EPERM, which is then returned): another path may
 * serve */
static bool refuses(int err)
{
	return err == -EXDEV || err == -EINVAL || err == -EOPNOTSUPP || err == -ENOSYS ||
	       err == -EMFILE || err == -ENFILE || err == -EPERM;
}

const struct dmaio_path_ops dmaio_path_sendfile = {
	.id = DMAIO_PATH_SENDFILE,
	.name = "sendfile",
	.serve = serve,
	.begin = begin,
	.next = next,
	.refuses = refuses,
};
