/* SPDX-License-Identifier: MIT */
/*
 * PROPOSED uAPI, not in any kernel release: "vfio/pci: Add mmap() for DMABUFs" (Matt Evans;
 * v4 and the v3 revoke patch, as our test kernel's port applies them:
 * tests/vm/kernel/7.3/0003-vfio-pci-mmap-for-dma-bufs.patch). Through VFIO_DEVICE_FEATURE with
 * VFIO_DEVICE_FEATURE_SET on the device fd:
 *   - DMA_BUF_REVOKE: revoke one dma-buf exported from this device, for good (its mappings
 *     fault from then on: SIGBUS in user space, -EFAULT from a system call);
 *   - DMA_BUF_MEMATTR: the memory attribute of the dma-buf's future mmap()s.
 * The posted series numbers them 13 and 14; Linux 7.3 already uses 13 (ZPCI_ERROR), so the port
 * numbers them 14 and 15 (NOTES-vfio-mmap.md). Only the tests use them, on that kernel.
 */
#ifndef DMAIO_UAPI_VFIO_DMABUF_MMAP_H
#define DMAIO_UAPI_VFIO_DMABUF_MMAP_H

#include <linux/types.h>

#define DMAIO_VFIO_DEVICE_FEATURE_DMA_BUF_REVOKE 14
struct dmaio_vfio_device_feature_dma_buf_revoke {
	__s32 dmabuf_fd;
};

#define DMAIO_VFIO_DEVICE_FEATURE_DMA_BUF_MEMATTR 15
enum {
	DMAIO_VFIO_DMA_BUF_MEMATTR_NC = 0,
	DMAIO_VFIO_DMA_BUF_MEMATTR_WC = 1,
};
struct dmaio_vfio_device_feature_dma_buf_memattr {
	__s32 dmabuf_fd;
	__u32 memattr;
};

#endif
