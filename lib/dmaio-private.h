/* SPDX-License-Identifier: MIT */
/* Internal interfaces of libdmaio. Data flows one way: API (io.c, buf.c) -> choice (choose.c)
 * -> path (paths/NAME.c) -> kernel (through sysio.c, the single syscall seam). */
#ifndef DMAIO_PRIVATE_H
#define DMAIO_PRIVATE_H

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

/* ---- probes (probe.c) --------------------------------------------------------------------- */
struct dmaio_heap {
	char name[DMAIO_NAME_MAX];
	int fd;              /* cached /dev/dma_heap/<name>, -1 until opened */
	int open_err;
	struct dmaio_heap_info info; /* alloc/mmap probed by dmaio_probe_heaps, rw_file on 1st alloc */
	bool probed;         /* info.alloc/mmap filled */
	bool rw_probed;      /* info.rw_file filled */
};

/* Per-call view of the caller's file: checked once, reopened lazily. */
struct dmaio_file {
	int fd;              /* the caller's fd */
	int accmode;         /* O_RDONLY/O_WRONLY/O_RDWR */
	bool caller_direct;  /* caller's fd has O_DIRECT */
	bool is_blk;
	uint64_t size;       /* st_size or device size */
	dev_t dev, rdev;
	ino_t ino;
	int dfd;             /* O_DIRECT fd (caller's or reopened), -1 */
	int bfd;             /* buffered fd (caller's or reopened), -1 */
	bool dfd_owned, bfd_owned;
	int direct;          /* 0 unknown, 1 yes, -errno no */
	uint32_t mem_align, off_align; /* for this direction */
	bool align_known;
	bool cached_known;   /* page-cache residency of the last range asked */
	int cached_pct;
	uint64_t cached_off, cached_len;
};

/* ---- context (ctx.c) ---------------------------------------------------------------------- */
struct dmaio_ctx {
	pthread_mutex_t lock;      /* protects everything below */
	bool is_default;
	int env_path;              /* DMAIO_PATH, 0 if unset */
	bool debug;                /* DMAIO_DEBUG */
	bool sys_probed;
	struct dmaio_sys_info sys;
	bool heaps_listed;
	struct dmaio_heap *heaps;
	int nheaps;
	int udmabuf_fd;            /* cached /dev/udmabuf, -1 */
	int drm_fd;                /* cached DRM node, -1 */
	int uring_dmabuf;          /* DMAIO_CAP_* learned at run time */
	struct dmaio_engine *engines;     /* all */
	struct dmaio_engine *free_engines;
	uint64_t next_buf_id;
	unsigned nbufs;
	struct dmaio_stats stats;
};

/* ---- buffers (buf.c, alloc.c) ------------------------------------------------------------- */
struct dmaio_buf {
	struct dmaio_ctx *ctx;
	uint64_t id;               /* unique in the process, keys io_uring registrations */
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
	unsigned io_refs;          /* calls using addr */
	struct dmaio_stats stats;
};

static inline bool dmaio_buf_is_dmabuf(const struct dmaio_buf *b)
{
	return b->kind != DMAIO_BUF_MEMFD;
}

/* ---- allocation providers (alloc.c, providers/NAME.c) ---------------------------------------- */
struct dmaio_provider {
	const char *name;          /* matched against the heap argument; NULL: matches heap names */
	int kind;
	/* fill buf->fd/memfd/alloc_size/heap; return 0 or -errno */
	int (*alloc)(struct dmaio_ctx *ctx, const char *name, size_t size, struct dmaio_buf *buf);
};
extern const struct dmaio_provider dmaio_provider_heap, dmaio_provider_udmabuf,
	dmaio_provider_udmabuf_huge, dmaio_provider_drm, dmaio_provider_memfd;
void dmaio_buf_register(struct dmaio_ctx *c, struct dmaio_buf *b);
int dmaio_heap_open(struct dmaio_ctx *ctx, struct dmaio_heap *h); /* ctx locked */
int dmaio_heap_alloc_fd(struct dmaio_ctx *ctx, struct dmaio_heap *h, size_t size, int *fd);
void dmaio_heap_probe_rw_file(struct dmaio_ctx *ctx, struct dmaio_heap *h, int dmabuf_fd);
int dmaio_udmabuf_make(struct dmaio_ctx *ctx, int dev, size_t size, bool huge, uint64_t limit,
		       uint32_t list_limit, struct dmaio_buf *b);
/* populate: fallocate the whole size now (udmabuf leaves shmem pages to UDMABUF_CREATE) */
int dmaio_memfd_create(size_t size, bool huge, bool populate, size_t *alloc_size, unsigned seals);

/* ---- context helpers (ctx.c) -------------------------------------------------------------- */
struct dmaio_ctx *dmaio_ctx_get(struct dmaio_ctx *ctx); /* NULL -> default, may return NULL */
void dmaio_log(const struct dmaio_ctx *ctx, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
#define DBG(ctx, ...) do { if ((ctx)->debug) dmaio_log((ctx), __VA_ARGS__); } while (0)
void dmaio_stats_add(struct dmaio_stats *dst, const struct dmaio_stats *src);

/* ---- probes (probe.c) --------------------------------------------------------------------- */
void dmaio_probe_sys_locked(struct dmaio_ctx *ctx);
int dmaio_drm_probe_locked(struct dmaio_ctx *ctx, struct dmaio_sys_info *s);
int dmaio_uring_dmabuf_probe(struct dmaio_ctx *ctx, int dmabuf_fd, int target_fd);
struct io_uring_rsrc_update2;
struct dmaio_io_uring_regbuf_desc;
void dmaio_uring_dmabuf_request(struct io_uring_rsrc_update2 *up, struct dmaio_io_uring_regbuf_desc *d,
				unsigned slot, int dmabuf_fd, int target_fd);
int dmaio_list_heaps_locked(struct dmaio_ctx *ctx);
struct dmaio_heap *dmaio_find_heap_locked(struct dmaio_ctx *ctx, const char *name);
void dmaio_probe_heap_locked(struct dmaio_ctx *ctx, struct dmaio_heap *h);
uint64_t dmaio_read_sysfs_u64(const char *path, uint64_t dflt);
uint32_t dmaio_huge_page_size(void);
int dmaio_file_open(struct dmaio_file *f, int fd, bool write);
void dmaio_file_close(struct dmaio_file *f);
int dmaio_file_direct_fd(struct dmaio_file *f, bool write); /* >= 0 fd or -errno (refusal) */
int dmaio_file_buffered_fd(struct dmaio_file *f);
int dmaio_file_cached_pct(struct dmaio_file *f, uint64_t off, uint64_t len);
int dmaio_file_info_fill(int fd, struct dmaio_file_info *info);

/* ---- mapping (buf.c) ---------------------------------------------------------------------- */
int dmaio_buf_get_addr(struct dmaio_buf *b, char **addr); /* takes an io ref */
void dmaio_buf_put_addr(struct dmaio_buf *b);
int dmaio_sync_ioctl(int fd, uint64_t flags);

/* ---- requests and paths (choose.c, paths/NAME.c) --------------------------------------------- */
struct dmaio_req {
	struct dmaio_ctx *ctx;
	struct dmaio_buf *buf;
	struct dmaio_file *file;
	bool write;                /* buffer -> file */
	size_t buf_off;
	uint64_t file_off;
	size_t len;
	uint64_t done;             /* bytes moved so far, from the start of the range */
	uint64_t unaligned;        /* bytes moved outside a direct middle */
	bool eof;                  /* a read met end of file */
	bool cpu_synced;           /* DMA_BUF_SYNC START issued */
	char *addr;                /* mapping, once taken */
};

struct dmaio_path_ops {
	int id;                    /* enum dmaio_path */
	const char *name;
	/* Can it serve this request, and how well: > 0 score, or -errno (refusal reason). */
	int (*score)(struct dmaio_req *r, const char **why);
	/* Move bytes [r->done, r->len). 0 when done (or r->eof), -errno otherwise. */
	int (*run)(struct dmaio_req *r);
};
extern const struct dmaio_path_ops dmaio_path_rw_file, dmaio_path_uring_dmabuf,
	dmaio_path_udmabuf_direct, dmaio_path_bounce_direct, dmaio_path_buffered, dmaio_path_sendfile;
bool dmaio_errno_is_refusal(int err);

/* Helpers shared by paths (choose.c) */
int dmaio_req_map(struct dmaio_req *r);          /* r->addr, and CPU sync start */
int dmaio_req_cpu_begin(struct dmaio_req *r);    /* CPU sync start only (once) */
/* buffered copy of request bytes [rel, rel+n) between file and mapping; advances r->done */
int dmaio_req_buffered(struct dmaio_req *r, uint64_t rel, size_t n, bool count_unaligned);

/* ---- alignment splitting (split.c) -------------------------------------------------------- */
struct dmaio_split {
	size_t head;   /* bytes before the aligned middle */
	size_t mid;    /* aligned middle, a multiple of align */
	size_t tail;   /* rest */
};
void dmaio_split_range(uint64_t file_off, size_t len, uint64_t limit, uint32_t align,
		       struct dmaio_split *s);
int dmaio_req_split_run(struct dmaio_req *r, uint32_t align,
			int (*mid)(struct dmaio_req *r, uint64_t rel, size_t n, void *arg), void *arg);

/* ---- io_uring engine (uring.c) ------------------------------------------------------------ */
struct dmaio_pipe {
	int fd;
	bool write;
	uint64_t file_off;         /* of the range */
	size_t len;
	bool bounce;               /* through the engine's bounce pool (fill/drain) */
	char *addr;                /* memory of the range in zero-copy mode */
	int buf_index;             /* fixed buffer index of addr, -1 */
	size_t chunk;
	unsigned depth;
	uint32_t align;            /* O_DIRECT offset alignment: short transfers resume aligned */
	/* bounce mode: copy between the bounce buffer and the destination */
	void (*fill)(struct dmaio_pipe *p, size_t rel, char *dst, size_t n);
	void (*drain)(struct dmaio_pipe *p, size_t rel, const char *src, size_t n);
	void *priv;
	/* out */
	uint64_t done;             /* contiguous bytes completed from the start */
	bool eof;
};
#define DMAIO_ENGINE_SLOT_DMABUF 15
struct io_uring;
int dmaio_engine_get(struct dmaio_ctx *ctx, struct dmaio_engine **e); /* 0 or -errno (no ring) */
struct io_uring *dmaio_engine_ring(struct dmaio_engine *e);
void dmaio_engine_slot_clear(struct dmaio_engine *e, unsigned idx);
void dmaio_engine_put(struct dmaio_ctx *ctx, struct dmaio_engine *e);
void dmaio_engines_free(struct dmaio_ctx *ctx);
void dmaio_engines_forget_buf(struct dmaio_ctx *ctx, uint64_t buf_id);
int dmaio_engine_regbuf(struct dmaio_engine *e, uint64_t buf_id, void *base, size_t len);
int dmaio_engine_bounce(struct dmaio_engine *e, size_t chunk, unsigned n);
int dmaio_pipe_run(struct dmaio_engine *e, struct dmaio_pipe *p);
int dmaio_uring_probe(struct dmaio_sys_info *sys);

/* ---- the syscall seam (sysio.c): every call into the kernel that moves data or can fail
 *      part-way goes through these, so the fault-injection build can fail the Nth one. -------- */
ssize_t sys_pread(int fd, void *buf, size_t n, uint64_t off);
ssize_t sys_pwrite(int fd, const void *buf, size_t n, uint64_t off);
int sys_ioctl(int fd, unsigned long req, void *arg);
int sys_open(const char *path, int flags, mode_t mode);
int sys_memfd_create(const char *name, unsigned flags);
int sys_ftruncate(int fd, off_t len);
int sys_fallocate(int fd, int mode, off_t off, off_t len);
void *sys_mmap(size_t len, int prot, int flags, int fd, off_t off, int *err);
ssize_t sys_copy_file_range(int in, uint64_t *in_off, int out, uint64_t *out_off, size_t n);
ssize_t sys_splice(int in, uint64_t *in_off, int out, uint64_t *out_off, size_t n);
int sys_uring_result(int res); /* completion results pass through here */
/* full-length loops over the above with EINTR/EAGAIN retry and MAX_RW_COUNT clamp; return bytes
 * moved (short only at EOF for reads) or -errno with *moved set */
int dmaio_pread_full(int fd, char *buf, size_t n, uint64_t off, size_t *moved);
int dmaio_pwrite_full(int fd, const char *buf, size_t n, uint64_t off, size_t *moved);

static inline int neg_errno(void)
{
	return errno > 0 ? -errno : -EIO;
}

static inline uint64_t round_up_u64(uint64_t v, uint64_t a)
{
	return (v + a - 1) / a * a;
}

uint64_t dmaio_now_ns(void);
long dmaio_page_size(void);

#endif
