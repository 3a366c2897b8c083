/* SPDX-License-Identifier: MIT */
/*
 * The objects every layer of libdmaio shares: contexts, buffers, registered files, requests.
 * Types and trivial inline helpers only; each layer declares its functions in its own header
 * (LAYERS lists the layers and who may call whom).
 */
#ifndef DMAIO_TYPES_H
#define DMAIO_TYPES_H

#include <errno.h>
#include <stdarg.h>
#include <string.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/stat.h>
#include <sys/types.h>

/* The public types only: no layer below api sees an exported function (LAYERS). The api layer
 * (api/api.h) and the layers above it include the public headers again for the functions. */
#define DMAIO_NO_PROTOTYPES
#include "dmaio.h"
#undef DMAIO_NO_PROTOTYPES

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

/* What the probes know of one heap: the public dmaio_heap_info and dmaio_heap_proposed are
 * filled from it at the API edge. */
struct dmaio_heap_facts {
	char name[DMAIO_NAME_MAX];
	int32_t alloc, alloc_err, mmap;  /* enum dmaio_cap, -errno */
	int32_t rw_file, rw_file_err;    /* proposed DMA_BUF_IOCTL_RW_FILE */
	int32_t contiguous, uncached;
	int32_t uring_dmabuf;            /* proposed io_uring dma-buf registration */
};

/* What the probes know of the system: the public dmaio_sys_info and dmaio_proposed_info are
 * filled from it at the API edge. */
struct dmaio_sys_facts {
	uint32_t page_size;
	int32_t nheaps;
	int32_t udmabuf, udmabuf_err;
	uint64_t udmabuf_size_limit;
	uint32_t udmabuf_list_limit;
	int32_t udmabuf_huge, hugetlb_memfd;
	uint32_t huge_page_size;
	int32_t io_uring, io_uring_err, io_uring_disabled, io_uring_fixed;
	int32_t uring_dmabuf, uring_dmabuf_err; /* proposed: registration of a heap buffer */
	int32_t drm;
	char drm_node[32];
	int32_t rw_file_kernel;                 /* proposed */
	int32_t uring_dmabuf_kernel;            /* proposed */
	int32_t heap_memcg;
	int32_t cachestat;
	char uring_dmabuf_dev[16];
};

/* One /dev/dma_heap entry of a context. */
struct dmaio_heap {
	char name[DMAIO_NAME_MAX];
	int fd;              /* cached /dev/dma_heap/<name>, -1 until opened */
	int open_err;
	struct dmaio_heap_facts info; /* alloc/mmap probed by the heap probe, rw_file on 1st alloc */
	bool probed;         /* info.alloc/mmap filled */
	bool rw_probed;      /* info.rw_file filled (atomic: dmaio_heap_rw_probed) */
	int uring_dmabuf_err; /* -errno of the io_uring registration probe (info.uring_dmabuf NO) */
};

/* A heap's RW_FILE answer (info.rw_file, info.rw_file_err, rw_probed) is written after the heap
 * is in use: by the probe on the heap's first buffer (under ctx->lock) and by the rw-file path
 * when the kernel refuses the ioctl after all (no lock); the path's scoring and the allocator
 * read it without the lock. Every access goes through these: the error is stored before the
 * answer (release), so whoever sees the answer (acquire) sees its error; rw_probed after both. */
static inline int32_t dmaio_heap_rw_file(const struct dmaio_heap *h, int32_t *err)
{
	int32_t cap = __atomic_load_n(&h->info.rw_file, __ATOMIC_ACQUIRE);

	if (err)
		*err = __atomic_load_n(&h->info.rw_file_err, __ATOMIC_RELAXED);
	return cap;
}

static inline void dmaio_heap_set_rw_file(struct dmaio_heap *h, int32_t cap, int32_t err)
{
	__atomic_store_n(&h->info.rw_file_err, err, __ATOMIC_RELAXED);
	__atomic_store_n(&h->info.rw_file, cap, __ATOMIC_RELEASE);
}

static inline bool dmaio_heap_rw_probed(const struct dmaio_heap *h)
{
	return __atomic_load_n(&h->rw_probed, __ATOMIC_ACQUIRE);
}

static inline void dmaio_heap_set_rw_probed(struct dmaio_heap *h)
{
	__atomic_store_n(&h->rw_probed, true, __ATOMIC_RELEASE);
}

/* ---- the cost model of the path choice (choose/cost.c) ------------------------------------ */
/* The machine's costs: what one op, one call, one byte costs here. Measured once per process by
 * the base probe (probe/system.c: a memory copy, a trivial syscall), or fixed (DMAIO_COST=fixed,
 * for tests). Nanoseconds, per byte where it says so. */
struct dmaio_cost_params {
	double sys_ns;             /* a trivial syscall */
	double op_ns;              /* an io_uring op: submission, completion, the op's own setup */
	double call_ns;            /* a blocking call handed to a worker thread and back */
	double copy_ns;            /* per byte: a CPU copy */
	double dev_ns;             /* per byte: the storage, before anything was measured */
	double walk_ns;            /* per byte of a buffer's table the kernel walks (a page entry) */
	double map_dmabuf_ns;      /* per byte: mapping a dma-buf (pages entered at mmap) */
	double map_memfd_ns;       /* per byte: mapping a memfd (pages entered on first touch) */
	double reg_ns;             /* per byte: registering a dma-buf with the kernel */
};

/* What was measured since: per kind of request and path, log2 of measured / modelled time
 * (an open-addressing table, lock-free: a key is claimed with a CAS and never moves; a value
 * packs the sample count and the float, replaced with a CAS). */
#define DMAIO_COST_CELLS 512
struct dmaio_cost_cell {
	uint32_t key;              /* 0: free */
	uint32_t last;             /* explore_tick when it last learned a sample (atomic) */
	uint64_t val;              /* samples << 32 | float bits of log2(ratio) */
};

struct dmaio_cost {
	bool fixed;                /* DMAIO_COST=fixed: the params below never change, no learning */
	bool calibrated;           /* params set (base probe) */
	struct dmaio_cost_params p;
	struct dmaio_cost_cell cells[DMAIO_COST_CELLS];
	uint32_t explore_tick;     /* auto choices made (atomic): every 16th may explore */
	uint64_t gen;              /* samples learned (atomic): a queue's memo of its last choice
				    * made at another count is stale (choose.c) */
	/* writes not synced through the library yet, per file and kind (cost.c,
	 * dmaio_cost_write_done(), dmaio_cost_learn_sync()); under the context's io_lock */
	struct dmaio_cost_unsynced {
		uint64_t dev, ino;
		uint32_t key;          /* 0: free */
		uint32_t tick;         /* explore_tick at its last write */
		double model_ns;       /* the writes' modelled time */
		uint64_t bytes;
	} unsynced[16];
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
	struct dmaio_sys_facts sys;
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
	struct dmaio_cost cost;    /* the path choice's cost model (choose/cost.c) */
	/* fork(): the library's locks are all taken around it (api/ctx.c), so a child never
	 * inherits one held by a thread that does not exist there. Every context is on one
	 * process-wide list; its buffers are on bufs (under bufs_lock). Lock order, the one
	 * fork takes them in: default context lock, the context list, then per context: lock,
	 * bufs_lock, each buffer's lock, io_lock, each engine's lock (log_lock: made anew in the
	 * child, see api/ctx.c). */
	pthread_mutex_t bufs_lock;
	struct dmaio_buf *bufs;
	struct dmaio_ctx *all_next;
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
	int map_err;               /* -ENODEV once the exporter refused a CPU mapping, else 0; set
				    * under lock, read by the paths' serve() (atomic, relaxed) */
	/* the exporter can take the memory away while it is mapped (VFIO device memory: the
	 * device's memory disabled, or a revoke request), after which the mapping faults: the
	 * paths then touch the mapping through system calls only (a fault is EFAULT there, and
	 * the request's -ENXIO), never from user space (SIGBUS). Set at import, from the exporter */
	bool revocable;
	bool mapped_once;          /* a mapping of it was made (so a refusal later is a revocation) */
	unsigned io_refs;          /* requests using addr */
	struct dmaio_stats stats;
	struct dmaio_buf *ctx_prev, *ctx_next; /* ctx->bufs, under ctx->bufs_lock */
	bool listed;               /* on ctx->bufs */
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
	uint64_t dev, ino;         /* st_dev, st_ino: the page-cache writes a sync covers */
	uint64_t size;             /* st_size or device size; grown by writes, re-read by reads past
				    * it: atomic, dmaio_file_size_load() */
	int dfd;                   /* O_DIRECT fd (fd itself or reopened), -1 */
	int bfd;                   /* buffered fd (fd itself or reopened), -1 */
	bool dfd_owned, bfd_owned;
	int direct;                /* 1 yes, -errno no */
	uint32_t mem_align;        /* DIO memory alignment */
	uint32_t off_align;        /* DIO offset alignment, writes */
	uint32_t roff_align;       /* DIO offset alignment, reads (STATX_DIO_READ_ALIGN) */
	uint32_t align_source;     /* 1 statx, 2 fallback */
	int cachestat;             /* 0 unknown/works, -errno: the kernel cannot tell (atomic) */
};

/* A registered file's size changes while other threads' requests use the file (a write grows
 * it, a read past it re-reads it: sys/sysio.c, from whichever thread completes the request):
 * every read of it is this one atomic load, and a reader that uses it twice loads it once.
 * Relaxed: the size publishes no other data. */
static inline uint64_t dmaio_file_size_load(const struct dmaio_file *f)
{
	return __atomic_load_n(&f->size, __ATOMIC_RELAXED);
}

/* ---- requests: one range moving ------------------------------------------------------------ */
struct dmaio_split {
	size_t head;   /* bytes before the aligned middle */
	size_t mid;    /* aligned middle, a multiple of align */
	size_t tail;   /* rest */
};

struct dmaio_path_ops;
struct dmaio_choice_memo;

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
	/* the cost model's view of the current path (choose/cost.c): what it modelled for the
	 * rest of the range, without the per-buffer share (setup), and the key its measurement
	 * goes under; setup_ns: time the path's begin took (mapping, registration) */
	uint32_t cost_key;
	double cost_model_ns;
	double cost_cpu_model_ns;  /* a path of blocking calls: the model's CPU of them (0: none) */
	double cost_pick_ns;       /* explored: the pick's estimate, what the range would have
				    * taken without the exploration (its overrun is paid: queue.c) */
	bool explored;             /* the current path is an exploration: its time is learned
				    * with its burst's when the burst's last request finishes
				    * (queue.c) */
	/* Exploration in bursts (the queue sets these before a choice, choose.c reads them): an
	 * explored request alone among the pick's ops in flight is charged a share of their
	 * time that is not what its path costs (choose.c, "in bursts") */
	unsigned burst_room;       /* ring entries of the queue (0: one request at a time) */
	unsigned burst_queued;     /* the queue's requests not finished, this one included */
	uint32_t burst_key;        /* a burst under way: its cost key (path and kind); 0: none */
	uint32_t burst_gen;        /* the burst this request was chosen in (queue.c); 0: none */
	uint64_t setup_ns;
	double svc_ns;             /* its ops' shares of the time they were in flight (queue.c) */
	double cpu_calls_ns;       /* the CPU time its blocking calls took on their threads */
	float busy;                /* the share of recent time its queue had ops in flight, when
				    * the caller does not wait on each request (an asynchronous
				    * queue whose caller reaps without waiting, queue.c); 0:
				    * unknown, a synchronous call, a caller that waits, a question */
	bool beside_other;         /* another path's request of its kind (or an explored one of
				    * any kind) was in flight with it: its time measures the mix,
				    * not its path (not learned, queue.c) */
	int8_t fly_slot;           /* its slot in its queue's requests in flight per cost key
				    * (-1: none) */
	uint32_t mix_seq;          /* its queue's mixes begun, when it began on its path */
	bool explore_counted;      /* counted in its queue's explored requests in flight */
	bool bounce_cold;          /* its engine's bounce memory is not made yet: a path through it
				    * pays for making it (queue.c sets it before a choice) */
	struct dmaio_choice_memo *memo; /* its queue's last choice (queue.c sets it around a
				    * choice; NULL: none kept): choose.c */
	uint64_t area_ns, area_bytes; /* its path's begin made the engine's bounce memory (the
				    * kernel-copy area for a revocable buffer): the time it took,
				    * its size (the cost model learns it) */
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

/* ---- the extensible structs of the ABI (dmaio.h, "Extensible structs") ---------------------- */
/* Largest struct_size taken: far above any struct, far below what garbage in the field holds. */
#define DMAIO_ABI_SIZE_MAX 65536u

/* A struct the caller passes for the library to fill: its size field is at least the 1.0 size
 * (and not garbage). Checked with the other arguments, before anything is done. */
static inline int dmaio_abi_check_out(const void *dst, size_t min)
{
	uint32_t n = dst ? *(const uint32_t *)dst : 0;

	return n >= min && n <= DMAIO_ABI_SIZE_MAX ? 0 : -EINVAL;
}

/* Fill a checked caller struct from the library's: the bytes both know, zeros past what the
 * library knows; the caller's size stays. */
static inline void dmaio_abi_copy_out(void *dst, const void *src, size_t src_size)
{
	uint32_t n = *(const uint32_t *)dst;

	memcpy((char *)dst + 4, (const char *)src + 4, (n < src_size ? n : src_size) - 4);
	if (n > src_size)
		memset((char *)dst + src_size, 0, n - src_size);
}

/* Read a caller struct into the library's (dst_size bytes, zeroed past what the caller has):
 * -EINVAL below the 1.0 size, -E2BIG when the caller's bytes the library does not know are not
 * zero. dst->size becomes dst_size. */
static inline int dmaio_abi_copy_in(void *dst, size_t dst_size, const void *src, size_t min)
{
	uint32_t n = *(const uint32_t *)src;

	if (n < min || n > DMAIO_ABI_SIZE_MAX)
		return -EINVAL;
	for (size_t i = dst_size; i < n; i++)
		if (((const unsigned char *)src)[i])
			return -E2BIG;
	memset(dst, 0, dst_size);
	memcpy(dst, src, n < dst_size ? n : dst_size);
	*(uint32_t *)dst = (uint32_t)dst_size;
	return 0;
}

/* A caller's struct dmaio_reason, if any, must be big enough (checked with the arguments). */
static inline int dmaio_reason_check(const struct dmaio_reason *r)
{
	return !r || (r->struct_size >= DMAIO_SIZE_REASON && r->struct_size <= DMAIO_ABI_SIZE_MAX) ?
		0 : -EINVAL;
}

/* Say why: err (a -errno or 0) and one line. Returns err, so a refusal reads
 * "return dmaio_reason_set(why, -EINVAL, "...", ...);". */
__attribute__((format(printf, 3, 4)))
static inline int dmaio_reason_set(struct dmaio_reason *r, int err, const char *fmt, ...)
{
	va_list ap;
	int n;

	if (!r)
		return err;
	r->error = err < 0 ? err : 0;
	va_start(ap, fmt);
	n = vsnprintf(r->text, sizeof(r->text), fmt, ap);
	va_end(ap);
	if (n >= (int)sizeof(r->text))
		memcpy(r->text + sizeof(r->text) - 4, "...", 4);
	for (char *c = r->text; *c; c++) /* one line */
		if (*c == '\n' || *c == '\r')
			*c = ' ';
	return err;
}

/* Clear a caller's reason at the start of a call that takes one. */
static inline void dmaio_reason_clear(struct dmaio_reason *r)
{
	if (r) {
		r->error = 0;
		r->text[0] = 0;
		if (r->struct_size > sizeof(*r)) /* what this library does not know: zero */
			memset((char *)r + sizeof(*r), 0, r->struct_size - sizeof(*r));
	}
}

static inline int neg_errno(void)
{
	return errno > 0 ? -errno : -EIO;
}

static inline uint64_t round_up_u64(uint64_t v, uint64_t a)
{
	return (v + a - 1) / a * a;
}

#endif
