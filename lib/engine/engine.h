/* SPDX-License-Identifier: MIT */
/*
 * Layer "engine": runs ops (one transfer each) with many in flight. An engine is an io_uring
 * (with buffers registered once, a pinned bounce area and the proposed dma-buf registrations)
 * plus the context's worker threads for blocking ops (ioctls, splice) and for every op when no
 * ring can be had. Short transfers and EINTR/EAGAIN completions are resumed inside the engine:
 * an op comes back finished (all of it, end of file, or an error). Ops belong to their issuer;
 * the engine never looks at what owns them.
 */
#ifndef DMAIO_ENGINE_H
#define DMAIO_ENGINE_H

#include "../dmaio-types.h"

struct io_uring_rsrc_update2;
struct dmaio_io_uring_regbuf_desc;

enum dmaio_op_kind {
	DMAIO_OPK_READ = 1,   /* fd -> mem */
	DMAIO_OPK_WRITE = 2,  /* mem -> fd */
	DMAIO_OPK_CALL = 3,   /* call(op) on a worker thread */
};

struct dmaio_op {
	/* set by the issuer */
	uint8_t kind;
	bool direct;               /* O_DIRECT: a short transfer resumes at an aligned offset */
	int fd;
	char *mem;                 /* memory, or the offset into a registered dma-buf */
	int buf_index;             /* fixed buffer index, -1 */
	uint32_t len;
	uint32_t align;            /* resume alignment of direct ops */
	int rest_fd;               /* direct writes: the file without O_DIRECT, for a rest that
				    * the kernel cut at an unaligned offset (RLIMIT_FSIZE); -1 */
	uint64_t off;              /* file offset */
	int (*call)(struct dmaio_op *op); /* CALL: moves the op, sets got/eof; 0 or -errno */
	int fd2;                   /* CALL: the other side (a dma-buf, a memfd) */
	uint64_t off2;             /* CALL: offset on the other side */
	bool to_file;              /* CALL: the direction (buffer -> file) */
	bool edge;                 /* the issuer's: an unaligned head or tail */
	void *owner;               /* the issuer's */
	uint64_t rel;              /* the issuer's */
	int bounce;                /* bounce units taken (dmaio_engine_bounce_get), -1 */
	uint32_t bounce_units;
	uint8_t bounce_area;       /* the engine's: which area they are of */
	int path;                  /* the issuer's */
	double svc_v0;             /* the issuer's: its service clock when the op started */
	/* results */
	uint32_t got;              /* bytes moved */
	int res;                   /* 0 or -errno */
	bool eof;                  /* a read ended at got: end of file */
	uint64_t cpu_ns;           /* CALL: the CPU time of the thread that ran the call, in it
				    * (the kernel's work in a blocking call: RW_FILE's, splice's) */
	/* engine's */
	int slot_held;             /* the registration slot this started op holds, -1 */
	unsigned retries;
	uint32_t last_end;
	struct dmaio_engine *e;
	struct dmaio_op *next;
};

/* an engine: ring (when use_ring and the kernel gives one) with depth ops in flight */
int dmaio_engine_new(struct dmaio_ctx *ctx, unsigned depth, bool use_ring, bool may_inline,
		     struct dmaio_engine **e);
bool dmaio_engine_is_inline(const struct dmaio_engine *e); /* made without descriptors */
void dmaio_engine_free(struct dmaio_engine *e);      /* waits for ops still in flight */
bool dmaio_engine_has_ring(const struct dmaio_engine *e);
bool dmaio_engine_inherited(const struct dmaio_engine *e); /* made by another process (fork) */
void dmaio_engine_abandon(struct dmaio_engine *e);   /* drop an inherited engine, touching nothing */
struct dmaio_op *dmaio_engine_op_get(struct dmaio_engine *e);  /* NULL: depth reached */
void dmaio_engine_op_put(struct dmaio_engine *e, struct dmaio_op *op);
void dmaio_engine_start(struct dmaio_engine *e, struct dmaio_op *op);
unsigned dmaio_engine_inflight(const struct dmaio_engine *e);
/* submit what was started, collect finished ops (at most max), waiting up to timeout_ms (< 0:
 * forever, 0: not at all) when none has finished and some are in flight; count or -errno */
int dmaio_engine_reap(struct dmaio_engine *e, struct dmaio_op **out, unsigned max, int timeout_ms);
/* finished ops already there, without a syscall (nothing submitted, nothing waited for) */
unsigned dmaio_engine_peek(struct dmaio_engine *e, struct dmaio_op **out, unsigned max);
int dmaio_engine_fd(const struct dmaio_engine *e);   /* pollable: finished ops or a kick */
void dmaio_engine_kick(struct dmaio_engine *e);      /* make the fd readable */
void dmaio_engine_ack(struct dmaio_engine *e);       /* consume kicks and worker wakeups */
int dmaio_engine_submit(struct dmaio_engine *e);     /* hand started ring ops to the kernel */
/* fixed buffers: index covering [base, base + len) of buffer buf_id, registered on first use */
int dmaio_engine_regbuf(struct dmaio_engine *e, uint64_t buf_id, void *base, size_t len);
void dmaio_engines_forget_buf(struct dmaio_ctx *ctx, uint64_t buf_id); /* every engine of ctx */
/* fork(): take (before) and release (after, in parent and child) the lock of every engine of
 * ctx; the caller holds ctx->io_lock (the list of engines) */
void dmaio_engines_lock_all(struct dmaio_ctx *ctx);
void dmaio_engines_unlock_all(struct dmaio_ctx *ctx);
/* bounce memory: n bytes (<= DMAIO_BOUNCE_MAX) into op->mem; -EAGAIN when all is in use. Of the
 * pinned area (a registered fixed buffer), or with kcopy of the kernel-copy area, a memfd that
 * dmaio_engine_bounce_copy() moves data through */
#define DMAIO_BOUNCE_MAX (2u << 20)
int dmaio_engine_bounce_get(struct dmaio_engine *e, uint32_t n, bool kcopy, struct dmaio_op *op);
void dmaio_engine_bounce_put(struct dmaio_engine *e, struct dmaio_op *op);
/* has the area (pinned, or kcopy) been made: 16 MiB faulted in, zeroed and pinned (44 ms of CPU
 * once on our VM host; 1-2 ms on another day) */
bool dmaio_engine_bounce_made(const struct dmaio_engine *e, bool kcopy);
/* Make the area now if it is not (a path's begin, so that its one-time cost is the begin's and
 * not an op's): 0 or -errno; *ns, *bytes: the time making it took and its size, 0 when it was
 * made before. dmaio_engine_bounce_get() makes it too, for a caller that did not. */
int dmaio_engine_bounce_ready(struct dmaio_engine *e, bool kcopy, uint64_t *ns, uint64_t *bytes);
/* n bytes between op's kernel-copy bounce memory and mem (to_bounce: mem -> bounce), copied by
 * the kernel (pwrite/pread of the area's memfd), never by the process: a fault on mem (device
 * memory revoked while mapped) fails the copy with -EFAULT instead of raising SIGBUS. 0 or
 * -errno; *moved: bytes copied before a failure */
int dmaio_engine_bounce_copy(struct dmaio_engine *e, const struct dmaio_op *op, char *mem,
			     size_t n, bool to_bounce, size_t *moved);
/* proposed io_uring dma-buf registration (uapi/io_uring-dmabuf.h) bound to one target file:
 * the fixed buffer index, or -errno (refused) */
int dmaio_engine_dmabuf_slot(struct dmaio_engine *e, uint64_t buf_id, int dmabuf_fd,
			     uint64_t file_id, int target_fd);
void dmaio_uring_dmabuf_request(struct io_uring_rsrc_update2 *up, struct dmaio_io_uring_regbuf_desc *d,
				unsigned slot, int dmabuf_fd, int target_fd);
int dmaio_engine_dmabuf_probe(int dmabuf_fd, int target_fd);
/* what the kernel offers: a ring, registered buffers */
void dmaio_engine_probe(struct dmaio_sys_facts *s);

/* worker threads of a context (pool.c) */
int dmaio_pool_push(struct dmaio_ctx *ctx, struct dmaio_op *op); /* -errno: no worker */
void dmaio_pool_run(struct dmaio_op *op);                         /* run it in this thread */
void dmaio_pool_free(struct dmaio_ctx *ctx);
/* engine internals shared by uring.c and pool.c */
enum { DMAIO_OP_REISSUE, DMAIO_OP_DONE, DMAIO_OP_STOP };
int dmaio_op_progress(struct dmaio_op *op, int res);
void dmaio_engine_pool_done(struct dmaio_op *op);

#endif
