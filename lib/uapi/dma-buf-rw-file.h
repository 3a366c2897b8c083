/* SPDX-License-Identifier: MIT */
/*
 * PROPOSED uAPI, not in mainline: DMA_BUF_IOCTL_RW_FILE, as posted to dri-devel in May 2025
 * ("dma-buf: add DMA_BUF_IOCTL_RW_FILE"). Kernels without it answer -ENOTTY; exporters without
 * the op answer -EINVAL. Kept here because no released <linux/dma-buf.h> has it.
 */
#ifndef DMAIO_UAPI_DMA_BUF_RW_FILE_H
#define DMAIO_UAPI_DMA_BUF_RW_FILE_H

#include <linux/ioctl.h>
#include <linux/types.h>

struct dmaio_dma_buf_rw_file {
	__u32 flags;       /* op | DIRECT */
	__s32 fd;          /* the file to read from / write to */
	__u64 file_offset;
	__u64 buf_offset;
	__u64 buf_len;
};

#define DMAIO_DMA_BUF_RW_FLAGS_OP_MASK (0xFFu << 0)
#define DMAIO_DMA_BUF_RW_FLAGS_READ (1u << 0)   /* file -> dma-buf */
#define DMAIO_DMA_BUF_RW_FLAGS_WRITE (2u << 0)  /* dma-buf -> file */
#define DMAIO_DMA_BUF_RW_FLAGS_DIRECT (1u << 31) /* O_DIRECT semantics */

#define DMAIO_DMA_BUF_IOCTL_RW_FILE _IOW('b', 4, struct dmaio_dma_buf_rw_file)

#endif
