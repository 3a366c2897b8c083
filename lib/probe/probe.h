/* SPDX-License-Identifier: MIT */
/*
 * Layer "probe": what the machine offers (per context, cached) and what each file allows (per
 * registered file, once). Called at the API edge only; the layers below read the results from
 * the context, heap and file objects and never probe.
 */
#ifndef DMAIO_PROBE_H
#define DMAIO_PROBE_H

#include "../dmaio-types.h"

/* system (system.c); every _locked function runs under ctx->lock */
void dmaio_probe_base_locked(struct dmaio_ctx *ctx);   /* heaps listed, udmabuf, io_uring */
void dmaio_probe_drm_locked(struct dmaio_ctx *ctx);
void dmaio_probe_hugetlb_locked(struct dmaio_ctx *ctx);
void dmaio_probe_heap_locked(struct dmaio_ctx *ctx, struct dmaio_heap *h); /* alloc, mmap, rw */
void dmaio_probe_sys_locked(struct dmaio_ctx *ctx);    /* all of it */
struct dmaio_heap *dmaio_find_heap_locked(struct dmaio_ctx *ctx, const char *name);
/* (the names of the default CMA area's heap: providers/provider.h) */
/* RW_FILE on a real buffer of heap h (first allocation); takes ctx->lock */
void dmaio_probe_heap_rw_file(struct dmaio_ctx *ctx, struct dmaio_heap *h, int dmabuf_fd);

/* buffers (buf.c): kind, size, provider, inode, exporter, name, CPU mapping (tried once) */
void dmaio_buf_probe_info(struct dmaio_buf *b, struct dmaio_buf_info *info);
/* at import: whether the exporter can revoke the memory (b->revocable), the CPU mapping */
void dmaio_buf_probe_import(struct dmaio_buf *b);

/* files (file.c) */
/* Probe fd into f: type, size, access mode, O_DIRECT descriptor and alignment. own: work on a
 * duplicate of fd (registered files) instead of fd itself (one call). */
int dmaio_file_probe(struct dmaio_ctx *ctx, int fd, bool own, struct dmaio_file *f);
void dmaio_file_release(struct dmaio_file *f);
int dmaio_file_check_dir(const struct dmaio_file *f, bool write); /* 0 or -EBADF */
void dmaio_file_fill_info(const struct dmaio_file *f, struct dmaio_file_info *info);
/* what changes during I/O (size, page-cache residency) is the sys layer's: sys/sys.h */

#endif
