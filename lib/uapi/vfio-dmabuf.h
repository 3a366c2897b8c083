/* SPDX-License-Identifier: MIT */
/*
 * MAINLINE uAPI missing from older headers: VFIO_DEVICE_FEATURE_DMA_BUF, a dma-buf for ranges of
 * a vfio-pci device's BAR (include/uapi/linux/vfio.h of mainline, copied as in the 7.3 source;
 * Debian 12's linux-libc-dev 6.1 lacks it). Used through VFIO_DEVICE_FEATURE with
 * VFIO_DEVICE_FEATURE_GET; the ioctl returns the new dma-buf fd. Offsets and lengths page aligned, region_index a BAR (0-5), flags 0.
 * The names carry a DMAIO_ prefix so this header works beside a <linux/vfio.h> that has them.
 */
#ifndef DMAIO_UAPI_VFIO_DMABUF_H
#define DMAIO_UAPI_VFIO_DMABUF_H

#include <linux/types.h>

#define DMAIO_VFIO_DEVICE_FEATURE_DMA_BUF 11

struct dmaio_vfio_region_dma_range {
	__u64 offset;
	__u64 length;
};

struct dmaio_vfio_device_feature_dma_buf {
	__u32 region_index;
	__u32 open_flags;  /* O_RDWR, O_CLOEXEC, ... of the new dma-buf file */
	__u32 flags;       /* 0 */
	__u32 nr_ranges;
	struct dmaio_vfio_region_dma_range dma_ranges[];
};

#endif
