/* SPDX-License-Identifier: (GPL-2.0-only OR MIT) */
/* One dma-buf as the BPF program (dmabuf.bpf.c) writes it and bpf.c reads it. */
#ifndef DMAIO_DMABUF_RECORD_H
#define DMAIO_DMABUF_RECORD_H

#define DMAIO_DMABUF_RECORD_MAGIC 0x646d6162u /* "bamd": a record boundary check */

struct dmaio_dmabuf_record {
	__u32 magic;
	__u32 has_name;
	__u64 ino;
	__u64 size;
	char exporter[64];
	char name[64];     /* DMA_BUF_NAME_LEN is 32 */
};

#endif
