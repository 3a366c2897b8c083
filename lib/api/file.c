/* SPDX-License-Identifier: MIT */
/* Registered files (dmaio_file_open) and the per-file probe (dmaio_fd_get_info). */
#include <fcntl.h>
#include <stdlib.h>

#include "api.h"
#include "../probe/probe.h"

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
