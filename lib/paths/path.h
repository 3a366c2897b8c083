/* SPDX-License-Identifier: MIT */
/*
 * Layer "paths": one file per data path behind one small interface. A path says whether it can
 * serve a request and how well (from cached facts only: no syscalls), starts on a request, hands
 * its transfers to the engine one op at a time, finishes each op that comes back, and says which
 * of its own errors mean "cannot serve" (the request then falls back to the next path).
 */
#ifndef DMAIO_PATH_H
#define DMAIO_PATH_H

#include "../dmaio-types.h"

struct dmaio_engine;
struct dmaio_op;

/* What serving a request would take on a path, in counts and bytes only: the choice layer
 * (choose/cost.c) prices them with the costs measured on the running machine. */
struct dmaio_cost_shape {
	uint64_t ops;      /* transfers queued on the ring (io_uring entries) */
	uint64_t calls;    /* blocking calls handed to the worker threads (ioctl, splice) */
	uint64_t dev;      /* bytes the storage moves (O_DIRECT, or page-cache misses) */
	uint64_t copy;     /* bytes the CPU copies (page cache or bounce memory <-> the buffer) */
	uint64_t overlap;  /* of copy: bytes copied while the storage works on other pieces */
	uint64_t map;      /* bytes of the buffer's CPU mapping this request pays for: its share,
			    * the mapping being made once per buffer and used by every range */
	uint64_t reg;      /* the same for a registration of the buffer with the kernel */
	uint64_t area;     /* the same for the engine's bounce memory, when its first use is to
			    * make it (faulted in, zeroed, pinned): the bytes through it */
	uint64_t walk;     /* buffer bytes the kernel walks per call, summed over the calls */
	uint64_t pcache;   /* of dev: bytes through the page cache (pages allocated, written
			    * back, reclaimed: CPU the machine spends besides the copy) */
};

struct dmaio_path_ops {
	int id;                    /* enum dmaio_path */
	const char *name;
	/* Can it serve the rest of this request ([r->start, r->len)), and what would it take:
	 * 0 with *shape filled, or -errno with *why the reason. cached_pct: page-cache residency
	 * of the range (reads), -errno when unknown. *why: one line on how it would serve. */
	int (*serve)(const struct dmaio_req *r, int cached_pct, struct dmaio_cost_shape *shape,
		     const char **why);
	/* Take over the request at r->start: split it, map, register. 0 or -errno. */
	int (*begin)(struct dmaio_req *r, struct dmaio_engine *e);
	/* Fill op with the next transfer at r->cursor and advance it: 1 made, 0 nothing left to
	 * hand out, -EAGAIN a resource is busy (retry after a completion), -errno failed. */
	int (*next)(struct dmaio_req *r, struct dmaio_engine *e, struct dmaio_op *op);
	/* An op came back finished (op->got, op->res, op->eof): copy out of bounce memory etc.
	 * NULL when there is nothing to do. */
	void (*finish)(struct dmaio_req *r, struct dmaio_engine *e, struct dmaio_op *op);
	/* Does this errno from this path mean "cannot serve" rather than an I/O error? */
	bool (*refuses)(int err);
};

extern const struct dmaio_path_ops dmaio_path_rw_file, dmaio_path_uring_dmabuf,
	dmaio_path_udmabuf_direct, dmaio_path_bounce_direct, dmaio_path_buffered, dmaio_path_sendfile;

/* helpers shared by the paths (common.c) */
int dmaio_path_map(struct dmaio_req *r);     /* r->addr and CPU sync start, once */
/* for serve() of a path through the mapping: -ENODEV with *why when the exporter refused one */
int dmaio_path_unmappable(const struct dmaio_req *r, const char **why);
/* a transfer between [rel, rel + n) of the file and the buffer's mapping */
void dmaio_path_op_mapped(struct dmaio_req *r, struct dmaio_op *op, uint64_t rel, uint64_t n,
			  bool direct);
uint32_t dmaio_path_align(const struct dmaio_req *r); /* DIO offset alignment, this direction */
bool dmaio_path_refuses_direct(int err);     /* O_DIRECT / io_uring refusals */
struct dmaio_split;
/* splits the rest of the range (into *s); whether its direct middle starts at a buffer offset
 * that is a multiple of mem_align (true when there is no middle or mem_align is 0) */
bool dmaio_path_congruent(const struct dmaio_req *r, uint32_t mem_align, struct dmaio_split *s);
/* The shape of the rest of r served as head | middle | tail (the middle only when direct_ok):
 * the middle through the storage in pieces of chunk, the edges through the page cache in pieces
 * of edge (each a ring op); reads stop at the known end of file. The caller adds what is its
 * own (copies of the middle, calls instead of ops, mapping). Returns the middle's bytes. */
uint64_t dmaio_path_shape(const struct dmaio_req *r, int cached_pct, uint32_t align,
			  bool direct_ok, uint64_t chunk, uint64_t edge, struct dmaio_cost_shape *sh);

#endif
