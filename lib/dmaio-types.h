/* SPDX-License-Identifier: MIT */
/*
 * The objects every layer of libdmaio shares: contexts, buffers, registered files, requests.
 * Types and trivial inline helpers only; each layer declares its functions in its own header
 * (LAYERS lists the layers and who may call whom).
 */
#ifndef DMAIO_TYPES_H
#define DMAIO_TYPES_H

#include <errno.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/stat.h>
#include <sys/types.h>

#include "dmaio.h"

#define DMAIO_EXPORT __attribute__((visibility("default")))

#define DMAIO_MAX_RW_COUNT ((size_t)0x7ffff000) /* INT_MAX & PAGE_MASK (4 KiB pages) */
#define DMAIO_NAME_MAX 64
#define DMAIO_BUF_NAME "libdmaio" /* DMA_BUF_SET_NAME, <= 32 bytes */

#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))
#define MIN(a, b) ((a) < (b) ? (a) : (b))
#define MAX(a, b) ((a) > (b) ? (a) : (b))

struct dmaio_engine;
struct dmaio_pool;
struct dmaio_q;

/* One /dev/dma_heap entry of a context. */
struct dmaio_heap {
	char name[DMAIO_NAME_MAX];
	int fd;              /* cached /dev/dma_heap/<name>, -1 until opened */
	int open_err;
	struct dmaio_heap_info info; /* alloc/mmap probed by the heap probe, rw_file on 1st alloc */
	bool probed;         /* info.alloc/mmap filled */
	bool rw_probed;      /* info.rw_file filled */
	int uring_dmabuf_err; /* -errno of the io_uring registration probe (info.uring_dmabuf NO) */
};

/* ---- context ------------------------------------------------------------------------------ */
struct dmaio_ctx {
	/* lock: the probe state (heaps, sys, device fds, probe flags). A probe holds it while it
	 * works (a heap's test allocation, a DRM node's dumb buffer), so the I/O path never takes
	 * it: the base probe is checked lock-free (base_done), and the state the I/O path shares
	 * lives under io_lock. */
	pthread_mutex_t lock;
	pthread_mutex_t io_lock;   /* stats, nbufs, engines, free_qs, pool: short sections only */
	bool base_done;            /* the base probe has run (atomic, release/acquire) */
	bool is_default;
	int env_path;              /* DMAIO_PATH, 0 if unset */
	bool debug;                /* DMAIO_DEBUG */
	/* the log sink (dmaio_ctx_set_log): log_lock guards fn and data and is held while the
	 * callback runs; log_level (atomic) is the most verbose level delivered: DEBUG with
	 * DMAIO_DEBUG, else the callback's level, else ERROR (the stderr default) */
	pthread_mutex_t log_lock;
	int log_level;
	dmaio_log_fn log_fn;       /* NULL: stderr */
	void *log_data;
	unsigned workers;          /* worker threads for blocking ops (DMAIO_WORKERS) */
	bool sys_probed;
	struct dmaio_sys_info sys;
	bool heaps_listed;
	struct dmaio_heap *heaps;
	int nheaps;
	uint64_t mem_total;        /* MemTotal, bytes (0: unknown) */
	uint64_t cma_total;        /* CmaTotal, bytes (0: no CMA area, or unknown) */
	int udmabuf_fd;            /* cached /dev/udmabuf, -1 */
	int drm_fd;                /* cached DRM node, -1 */
	int uring_dmabuf;          /* DMAIO_CAP_* learned at run time */
	struct dmaio_engine *engines;   /* every engine of the context (buffer unpinning) */
	struct dmaio_q *free_qs;        /* pooled internal queues of the synchronous calls */
	struct dmaio_pool *pool;        /* worker threads, created on first blocking op */
	unsigned nbufs;
	struct dmaio_stats stats;
};

/* ---- buffers ------------------------------------------------------------------------------ */
struct dmaio_buf {
	struct dmaio_ctx *ctx;
	uint64_t id;               /* unique in the process, keys io_uring registrations */
	uint64_t udb_refused;      /* 1 + id of the last file the io_uring dma-buf registration refused */
	int kind;                  /* enum dmaio_buf_kind */
	char provider[DMAIO_NAME_MAX];
	int fd;                    /* dma-buf fd, or the memfd for DMAIO_BUF_MEMFD */
	int memfd;                 /* memfd behind the pages (udmabuf, memfd kinds), else -1 */
	size_t size;               /* as requested */
	size_t alloc_size;         /* rounded */
	struct dmaio_heap *heap;   /* heap kind */
	pthread_mutex_t lock;      /* mapping and stats */
	void *addr;                /* mapping (memfd mapping when memfd != -1), NULL */
	bool user_mapped;
	unsigned io_refs;          /* requests using addr */
	struct dmaio_stats stats;
};

static inline bool dmaio_buf_is_dmabuf(const struct dmaio_buf *b)
{
	return b->kind != DMAIO_BUF_MEMFD;
}

/* ---- registered files: every fact probed once at open -------------------------------------- */
struct dmaio_file {
	struct dmaio_ctx *ctx;
	uint64_t id;               /* unique in the process (dma-buf registrations bind to a file) */
	int fd;                    /* the library's descriptor (a dup, or the caller's for one call) */
	bool fd_owned;
	int accmode;               /* O_RDONLY/O_WRONLY/O_RDWR */
	int sync_flags;            /* O_SYNC / O_DSYNC of the caller's fd */
	bool append;               /* O_APPEND: no writes */
	bool caller_direct;        /* fd has O_DIRECT */
	bool is_blk;
	uint32_t fs_magic;
	uint64_t size;             /* st_size or device size; grown by writes, re-read by reads past it */
	int dfd;                   /* O_DIRECT fd (fd itself or reopened), -1 */
	int bfd;                   /* buffered fd (fd itself or reopened), -1 */
	bool dfd_owned, bfd_owned;
	int direct;                /* 1 yes, -errno no */
	uint32_t mem_align;        /* DIO memory alignment */
	uint32_t off_align;        /* DIO offset alignment, writes */
	uint32_t roff_align;       /* DIO offset alignment, reads (STATX_DIO_READ_ALIGN) */
	uint32_t align_source;     /* 1 statx, 2 fallback */
	int cachestat;             /* 0 unknown/works, -errno: the kernel cannot tell */
};

/* ---- requests: one range moving ------------------------------------------------------------ */
struct dmaio_split {
	size_t head;   /* bytes before the aligned middle */
	size_t mid;    /* aligned middle, a multiple of align */
	size_t tail;   /* rest */
};

struct dmaio_path_ops;

struct dmaio_req {
	/* the range */
	struct dmaio_ctx *ctx;
	struct dmaio_buf *buf;
	struct dmaio_file *file;
	bool write;                /* buffer -> file */
	unsigned flags;            /* DMAIO_RW_* */
	uint64_t buf_off;
	uint64_t file_off;
	uint64_t len;
	uint64_t user_data;
	uint64_t t0;
	/* the path at work and the choice so far */
	const struct dmaio_path_ops *path;
	int forced;
	uint32_t tried;            /* bit per path id */
	uint32_t fallbacks;
	int last_refusal;
	/* progress of the current path over [start, end) of the range (rel offsets) */
	uint64_t start;
	uint64_t end;              /* len, or less for reads that stop at end of file */
	uint64_t cursor;           /* next byte to hand to an op */
	struct dmaio_split split;  /* of [start, end) for the current path */
	bool direct_ok;            /* the current path's middle goes direct */
	int slot;                  /* the current path's registration (fixed buffer index), -1 */
	unsigned inflight;         /* ops of this request in the engine */
	uint64_t stop_at;          /* lowest rel where an op failed or met end of file */
	int err;                   /* the error of the current path at the lowest offset */
	uint64_t err_at;           /* its rel */
	bool eof;                  /* a read met end of file at stop_at */
	bool cancelled;
	bool finished;
	/* results */
	uint64_t unaligned;
	uint64_t reissues;         /* ops submitted again (transient errors, short counts) */
	uint64_t counted;          /* bytes already added to the queue's progress */
	uint64_t path_bytes[DMAIO_PATH_SLOTS];
	int64_t res;
	uint64_t done;
	int bulk;                  /* the path that moved the most */
	/* CPU access */
	char *addr;                /* mapping, once taken */
	bool cpu_synced;
	/* queue linkage */
	struct dmaio_req *next;
};

static inline int neg_errno(void)
{
	return errno > 0 ? -errno : -EIO;
}

static inline uint64_t round_up_u64(uint64_t v, uint64_t a)
{
	return (v + a - 1) / a * a;
}

#endif
