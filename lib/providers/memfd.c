/* SPDX-License-Identifier: MIT */
/* Provider "memfd": a sealed memfd that is not a dma-buf (machines without any provider). */
#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>

#include "provider.h"
#include "../sys/sys.h"

/* A memfd of at least size bytes (page or huge page multiple), sealed against shrinking and
 * growing (and against further sealing when seals asks for F_SEAL_SEAL). populate: back it with
 * memory now (fallocate). */
int dmaio_memfd_create(const char *name, size_t size, bool huge, bool populate,
		       size_t *alloc_size, unsigned seals)
{
	uint64_t unit = huge ? dmaio_huge_page_size() : (uint64_t)dmaio_page_size();
	uint64_t rounded;
	int fd, err;

	if (!unit)
		return -EOPNOTSUPP;
	if (size > SIZE_MAX - unit)
		return -EOVERFLOW;
	rounded = round_up_u64(size, unit);
	if (rounded > (uint64_t)INT64_MAX)
		return -EOVERFLOW;
	fd = sys_memfd_create(name ? name : "dmaio", MFD_ALLOW_SEALING | (huge ? MFD_HUGETLB : 0));
	if (fd < 0)
		return fd == -EINVAL && huge ? -EOPNOTSUPP : fd;
	err = sys_ftruncate(fd, (off_t)rounded);
	/* Back it with memory now, like every dma-buf provider does: a clean ENOMEM here rather than
	 * SIGBUS later (hugetlb pages are otherwise only reserved at fault time). */
	if (!err && populate) {
		err = sys_fallocate(fd, 0, 0, (off_t)rounded);
		/* hugetlbfs answers ENOSPC, or EINTR while it waits for pages that do not come */
		if (err == -ENOSPC || err == -EINTR || err == -EAGAIN)
			err = -ENOMEM;
	}
	if (!err && seals && fcntl(fd, F_ADD_SEALS, seals))
		err = neg_errno();
	if (err) {
		close(fd);
		return err;
	}
	if (alloc_size)
		*alloc_size = (size_t)rounded;
	return fd;
}

static int memfd_alloc(struct dmaio_ctx *ctx, const struct dmaio_alloc_req *req,
		       struct dmaio_buf *b)
{
	int fd = dmaio_memfd_create(req->label, req->size, false, true, &b->alloc_size,
				    F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_SEAL);

	(void)ctx;
	if (fd < 0)
		return fd;
	b->fd = fd;
	b->memfd = fd;
	return 0;
}

const struct dmaio_provider dmaio_provider_memfd = {
	.name = "memfd",
	.kind = DMAIO_BUF_MEMFD,
	.alloc = memfd_alloc,
};
