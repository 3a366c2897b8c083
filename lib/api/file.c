/* SPDX-License-Identifier: MIT */
/* Registered files (dmaio_file_open) and the per-file probe (dmaio_fd_get_info). */
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>

#include "api.h"
#include "../choose/cost.h"
#include "../probe/probe.h"
#include "../sys/sys.h"

DMAIO_EXPORT int dmaio_file_open(struct dmaio_ctx *ctx, int fd, uint32_t flags,
				 struct dmaio_file **file)
{
	struct dmaio_file *f;
	struct dmaio_ctx *c;
	int r;

	if (!file || (flags & ~DMAIO_FILE_FLAGS_ALL))
		return -EINVAL;
	if (fd < 0)
		return -EBADF;
	c = dmaio_ctx_get(ctx);
	if (!c)
		return -ENOMEM;
	f = malloc(sizeof(*f));
	if (!f)
		return -ENOMEM;
	r = dmaio_file_probe(c, fd, true, f);
	if (r) {
		dmaio_file_release(f);
		free(f);
		return r;
	}
	dmaio_ctx_probe_base(c);
	*file = f;
	return 0;
}

DMAIO_EXPORT void dmaio_file_close(struct dmaio_file *file)
{
	if (!file)
		return;
	dmaio_file_release(file);
	free(file);
}

DMAIO_EXPORT int dmaio_file_get_info(const struct dmaio_file *file, struct dmaio_file_info *info)
{
	struct dmaio_file_info fi;

	if (!file || dmaio_abi_check_out(info, DMAIO_SIZE_FILE_INFO))
		return -EINVAL;
	dmaio_file_fill_info(file, &fi);
	dmaio_abi_copy_out(info, &fi, sizeof(fi));
	return 0;
}

DMAIO_EXPORT int dmaio_fd_get_info(int fd, struct dmaio_file_info *info)
{
	struct dmaio_file_info fi;
	struct dmaio_file f;
	int r;

	if (dmaio_abi_check_out(info, DMAIO_SIZE_FILE_INFO))
		return -EINVAL;
	if (fd < 0)
		return -EBADF;
	r = dmaio_file_probe(NULL, fd, false, &f);
	if (!r) {
		dmaio_file_fill_info(&f, &fi);
		dmaio_abi_copy_out(info, &fi, sizeof(fi));
	}
	dmaio_file_release(&f);
	return r;
}

/* The sync of f for context c, timed and charged to c's writes into the file since its last
 * one (cost.c); the file's dirty bytes asked for only where something is learned. */
static int sync_file(struct dmaio_ctx *c, struct dmaio_file *f, uint32_t flags)
{
	int64_t dirty = c->cost.fixed ? -ENOSYS : dmaio_file_dirty_bytes(f);
	uint64_t t0 = dmaio_now_ns(), t1;
	int r = sys_fsync(f->fd, flags & DMAIO_SYNC_DATA);

	t1 = dmaio_now_ns();
	dmaio_cost_learn_sync(c, f->dev, f->ino, !r, t1 > t0 ? t1 - t0 : 0, dirty);
	DBG(c, "sync of file %llu (%s): %s in %.1f us, %lld bytes dirty before",
	    (unsigned long long)f->id, flags & DMAIO_SYNC_DATA ? "data" : "all",
	    r ? strerror(-r) : "done", (double)(t1 - t0) / 1e3, (long long)dirty);
	return r;
}

DMAIO_EXPORT int dmaio_file_sync(struct dmaio_file *file, uint32_t flags)
{
	if (!file || (flags & ~DMAIO_SYNC_FLAGS_ALL))
		return -EINVAL;
	return sync_file(file->ctx, file, flags);
}

DMAIO_EXPORT int dmaio_fd_sync(int fd, struct dmaio_ctx *ctx, uint32_t flags)
{
	struct dmaio_file f;
	struct dmaio_ctx *c;
	int r;

	if (flags & ~DMAIO_SYNC_FLAGS_ALL)
		return -EINVAL;
	if (fd < 0)
		return -EBADF;
	c = dmaio_ctx_get(ctx);
	if (!c)
		return -ENOMEM;
	r = dmaio_file_probe(c, fd, false, &f);
	if (!r)
		r = sync_file(c, &f, flags);
	dmaio_file_release(&f);
	return r;
}
