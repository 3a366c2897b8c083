/* SPDX-License-Identifier: MIT */
/*
 * PROPOSED uAPI, not in mainline: io_uring dma-buf registered buffers, following the RFC **v3
 * (April 2026)** of the series (v5, September 2026, moved fields again). Not verified against a
 * kernel that carries it: no such kernel can be built here. A dma-buf is registered to a ring for
 * one target file through IORING_REGISTER_BUFFERS_UPDATE, with descriptors instead of iovecs;
 * then IORING_OP_READ_FIXED / WRITE_FIXED against that file use it. Needs CONFIG_DMABUF_TOKEN
 * (else -EOPNOTSUPP); only nvme-pci block devices opened O_DIRECT take it; <= 1 GiB per dma-buf;
 * spurious -EAGAIN completions must be reissued. Mainline kernels refuse the flagged update with
 * -EINVAL (non-zero reserved field), which the library takes as "absent".
 */
#ifndef DMAIO_UAPI_IO_URING_DMABUF_H
#define DMAIO_UAPI_IO_URING_DMABUF_H

#include <linux/types.h>

enum dmaio_io_uring_regbuf_type {
	DMAIO_IO_REGBUF_TYPE_EMPTY = 0,
	DMAIO_IO_REGBUF_TYPE_UADDR = 1,
	DMAIO_IO_REGBUF_TYPE_DMABUF = 2,
};

struct dmaio_io_uring_regbuf_desc {
	__u32 type;      /* enum dmaio_io_uring_regbuf_type (read as desc->type) */
	__u32 flags;
	__u64 size;      /* 0 for a dma-buf */
	__u64 uaddr;     /* 0 for a dma-buf */
	__s32 dmabuf_fd;
	__s32 target_fd;
	__u64 __resv[6]; /* was [7] before the dma-buf fields */
};

/* struct io_uring_rsrc_update2.resv flag marking data as an array of regbuf descriptors */
#define DMAIO_IORING_RSRC_UPDATE_DESC (1u << 0)

#define DMAIO_IO_URING_DMABUF_MAX (1ull << 30)

#endif
