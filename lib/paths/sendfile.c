/* SPDX-License-Identifier: MIT */
/* Path "sendfile": the kernel copies between the file and the memfd behind the buffer, with
 * copy_file_range (same filesystem) or splice through a pipe (across filesystems), both with
 * explicit offsets so no shared file position is touched. One CPU copy at best, no mapping. */
#include <fcntl.h>
#include <unistd.h>

#include "../dmaio-private.h"

#define PIPE_SIZE (1u << 20)

static int score(struct dmaio_req *r, const char **why)
{
	if (r->buf->memfd < 0) {
		*why = "no memfd behind this buffer";
		return -EOPNOTSUPP;
	}
	if (r->buf->kind == DMAIO_BUF_UDMABUF_HUGE && !r->write) {
		*why = "hugetlbfs memfds take no write()/splice";
		return -EOPNOTSUPP;
	}
	*why = "in-kernel copy between the file and the memfd";
	return 10;
}

/* splice [*in_off, +n) of in to [*out_off, ...) of out through a pipe */
static int splice_copy(int in, uint64_t *in_off, int out, uint64_t *out_off, size_t n,
		       size_t *moved, bool *eof)
{
	int pfd[2], err = 0;

	*moved = 0;
	if (pipe2(pfd, O_CLOEXEC))
		return neg_errno();
	(void)fcntl(pfd[1], F_SETPIPE_SZ, PIPE_SIZE);
	while (*moved < n) {
		ssize_t got = sys_splice(in, in_off, pfd[1], NULL, MIN(n - *moved, PIPE_SIZE));

		if (got < 0) {
			if (errno == EINTR || errno == EAGAIN)
				continue;
			err = neg_errno();
			break;
		}
		if (got == 0) {
			*eof = true;
			break;
		}
		while (got > 0) {
			ssize_t put = sys_splice(pfd[0], NULL, out, out_off, (size_t)got);

			if (put < 0) {
				if (errno == EINTR || errno == EAGAIN)
					continue;
				err = neg_errno();
				break;
			}
			if (put == 0) {
				err = -EIO;
				break;
			}
			got -= put;
			*moved += (size_t)put;
		}
		if (err)
			break;
	}
	close(pfd[0]);
	close(pfd[1]);
	return err;
}

static int run(struct dmaio_req *r)
{
	int fd = dmaio_file_buffered_fd(r->file);
	int in, out, err = 0;
	uint64_t foff = r->file_off + r->done, boff = r->buf_off + r->done;
	uint64_t *in_off, *out_off;
	bool cfr = true, eof = false;

	if (fd < 0)
		return fd;
	in = r->write ? r->buf->memfd : fd;
	out = r->write ? fd : r->buf->memfd;
	in_off = r->write ? &boff : &foff;
	out_off = r->write ? &foff : &boff;
	while (r->done < r->len && !eof && !err) {
		size_t n = MIN(r->len - r->done, DMAIO_MAX_RW_COUNT), moved = 0;

		if (cfr) {
			ssize_t c = sys_copy_file_range(in, in_off, out, out_off, n);

			if (c < 0) {
				if (errno == EINTR || errno == EAGAIN)
					continue;
				if (errno == EXDEV || errno == EINVAL || errno == EOPNOTSUPP ||
				    errno == ENOSYS || errno == EBADF) {
					cfr = false; /* across filesystems: splice */
					continue;
				}
				return neg_errno();
			}
			if (c == 0)
				eof = true;
			r->done += (uint64_t)c;
			continue;
		}
		err = splice_copy(in, in_off, out, out_off, n, &moved, &eof);
		r->done += moved;
	}
	if (eof && !r->write)
		r->eof = true;
	else if (eof)
		err = err ? err : -EIO; /* the memfd ended early: cannot happen inside the buffer */
	return err;
}

const struct dmaio_path_ops dmaio_path_sendfile = {
	.id = DMAIO_PATH_SENDFILE,
	.name = "sendfile",
	.score = score,
	.run = run,
};
