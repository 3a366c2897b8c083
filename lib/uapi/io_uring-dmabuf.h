/* SPDX-License-Identifier: MIT */
/*
 * PROPOSED uAPI, not in mainline (not in 7.3): io_uring dma-buf registered buffers, from the series
 * "Add dmabuf read/write via io_uring" (Pavel Begunkov). Every value is cited to the posted patch
 * (public io-uring / linux-block archives) it was read in. Exercised against our own test kernel
 * implementing this uAPI (tests/vm/kernel/7.3/0002-io_uring-dma-buf-registered-buffers.patch), not
 * against the series itself.
 *
 * Follows the NEWEST VERSION WHOSE io_uring PATCHES COULD BE READ VERBATIM: v3, 2026-04-29,
 *   [PATCH v3 09/10] io_uring/rsrc: extend buffer update
 *     <a97e2d1338029380995653824dea6bbb09d71775.1777475843.git.asml.silence@gmail.com>
 *   [PATCH v3 10/10] io_uring/rsrc: add dmabuf backed registered buffers
 *     <0040156480814237fc099878756fa0fb079e14d2.1777475843.git.asml.silence@gmail.com>
 * The same uAPI (flag value, descriptor layout) was posted again unchanged on 2026-07-11 in
 * "[RFC 06/10] io_uring/rsrc: extend buffer update"; that RFC's "add uncloneable regbuf flag" and
 * "add regbuf import flags" (07/10, 08/10), which v5-v7 carry too, are kernel-internal flags
 * (IO_REGBUF_F_UNCLONEABLE in io_uring/rsrc.h), not uAPI. The patches of v4 (2026-07-28) to v7
 * (2026-09-28, 13 patches) were NOT found in the archive; the v7 cover letter was read: its
 * diffstat gives include/uapi/linux/io_uring.h 31 lines, the size of v3's two uAPI hunks (25 + 6),
 * and it lists "v5: Fix io_uring uapi validation" and "v6: relax the 1G io_uring registered
 * dma-buf limit" without saying what changed. So a kernel could be built with v3's 1 GiB cap
 * or without it: the library does not assume either (a refused registration falls back for that
 * buffer and file only).
 *
 * Use (v3): make a (sparse) buffer table, then IORING_REGISTER_BUFFERS_UPDATE (mainline opcode,
 * no new one) with struct io_uring_rsrc_update2 { .flags = IORING_RSRC_UPDATE_EXTENDED,
 * .data = array of struct io_uring_regbuf_desc, .nr = n, .tags = 0 }; the call returns the number
 * of entries installed. Then IORING_OP_READ_FIXED / WRITE_FIXED on target_fd only, with
 * sqe->addr = byte offset into the dma-buf, sqe->len > 0, addr + len <= dma-buf size. Completions
 * may carry spurious -EAGAIN: reissue the request. Kernel config (v3): CONFIG_DMABUF_TOKEN
 * (def_bool y, depends on DMA_SHARED_BUFFER; without it -EOPNOTSUPP). Only NVMe (nvme-pci) block
 * devices opened O_DIRECT take it (v3: other block devices and non-O_DIRECT fds -EINVAL, files
 * without the file op -EOPNOTSUPP). Mainline kernels refuse the request with -EINVAL (non-zero
 * resv, the word that became flags), which the library takes as "absent".
 */
#ifndef DMAIO_UAPI_IO_URING_DMABUF_H
#define DMAIO_UAPI_IO_URING_DMABUF_H

#include <linux/types.h>

/*
 * struct io_uring_rsrc_update2 as the series declares it: PROPOSED v3 09/10 (2026-04-29) renames
 * mainline's "__u32 resv" (offset 4) to "__u32 flags". Same size (32 bytes) and offsets as the
 * mainline struct, which liburing still spells with "resv": setting liburing's up.resv to
 * DMAIO_IORING_RSRC_UPDATE_EXTENDED is the same bytes.
 */
struct dmaio_io_uring_rsrc_update2 {
	__u32 offset;        /* mainline: first buffer-table slot to update */
	__u32 flags;         /* PROPOSED v3 2026-04-29: was resv; DMAIO_IORING_RSRC_UPDATE_* */
	__aligned_u64 data;  /* mainline: iovec array; with ..._EXTENDED (v3): regbuf_desc array */
	__aligned_u64 tags;  /* mainline: optional u64 tags array (0: none) */
	__u32 nr;            /* mainline: entries in data (0: -EINVAL) */
	__u32 resv2;         /* mainline: must be 0 (-EINVAL), unchanged in v3 */
};

/*
 * struct io_uring_rsrc_update2.flags (enum io_uring_rsrc_reg_flags), PROPOSED v3 09/10
 * (2026-04-29): data points at struct io_uring_regbuf_desc entries instead of iovecs. Any other
 * bit: -EINVAL (v3). Bit 0 is deliberately unused by v3; RFC v1 (2025-06-27) and RFC v2
 * (2025-11-23) had IORING_RSRC_F_EXTENDED_UPDATE = 1 with a different 16-byte
 * struct io_uring_reg_buffer, which this header does not support.
 */
#define DMAIO_IORING_RSRC_UPDATE_EXTENDED (1u << 1)

/* struct io_uring_regbuf_desc.type (enum io_uring_regbuf_type); type >= 3: -EINVAL (v3) */
enum dmaio_io_uring_regbuf_type {
	DMAIO_IO_REGBUF_TYPE_EMPTY = 0,  /* PROPOSED v3 09/10 2026-04-29: clear the slot */
	DMAIO_IO_REGBUF_TYPE_UADDR = 1,  /* PROPOSED v3 09/10 2026-04-29: user memory, as an iovec */
	DMAIO_IO_REGBUF_TYPE_DMABUF = 2, /* PROPOSED v3 10/10 2026-04-29: dma-buf for target_fd */
};

/* 80 bytes; field offsets 0, 4, 8, 16, 24, 28, 32. */
struct dmaio_io_uring_regbuf_desc {
	__u32 type;      /* PROPOSED v3 09/10 2026-04-29: enum dmaio_io_uring_regbuf_type */
	__u32 flags;     /* PROPOSED v3 09/10 2026-04-29: "not used yet", not checked by v3; send 0 */
	__u64 size;      /* PROPOSED v3 09/10 2026-04-29: 0 for a dma-buf (else -EINVAL, v3 10/10) */
	__u64 uaddr;     /* PROPOSED v3 09/10 2026-04-29: 0 for a dma-buf (else -EINVAL, v3 10/10) */
	__s32 dmabuf_fd; /* PROPOSED v3 10/10 2026-04-29: the dma-buf; 0 for other types (-EINVAL) */
	__s32 target_fd; /* PROPOSED v3 10/10 2026-04-29: the file it is for; 0 for other types */
	__u64 __resv[6]; /* PROPOSED v3 10/10 2026-04-29 (was [7] in 09/10): must be 0, -EINVAL */
};

/*
 * Largest dma-buf v3 10/10 (2026-04-29) registers: dmabuf->size > SZ_1G gives -EINVAL. The v7
 * cover (2026-09-28) says v6 "relax[ed] the 1G io_uring registered dma-buf limit"; the new limit
 * was not readable. Kept as the size every posted version accepts; the library does not refuse
 * larger buffers itself (v6+ takes them, v3-v5 answer -EINVAL and the buffer falls back).
 */
#define DMAIO_IO_URING_DMABUF_MAX (1ull << 30)

#endif
