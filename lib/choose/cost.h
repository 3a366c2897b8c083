/* SPDX-License-Identifier: MIT */
/*
 * Layer "choose", the cost model: what serving a request would take on a path (its shape: ops,
 * calls, bytes through the storage and the CPU, the buffer's mapping and registration, table
 * walks), priced with the running machine's costs (measured by the base probe), and corrected by
 * what requests of the same kind measured when they finished (the queue reports each one).
 */
#ifndef DMAIO_COST_H
#define DMAIO_COST_H

#include "../dmaio-types.h"

struct dmaio_cost_shape;
struct dmaio_path_ops;

/* A candidate's estimate, in nanoseconds. est = (ops + bytes + walk) * ratio + setup. */
struct dmaio_cost_est {
	double ops_ns;             /* ops and calls */
	double bytes_ns;           /* storage and CPU copies */
	double walk_ns;            /* per-call work that grows with the buffer */
	double setup_ns;           /* the range's share of the buffer's mapping / registration */
	double cpu_ns;             /* of those, what the CPU spends (ops, calls, copies, walks,
				    * setup), unscaled: the tie-break between estimates alike */
	double ratio;              /* measured / modelled, learned (1 when nothing measured) */
	uint32_t samples;          /* completions behind ratio */
	uint32_t key;              /* where this request's measurement goes */
	bool explored;             /* chosen by exploration, not as the pick (dmaio_choose) */
	uint32_t burst;            /* explored: the length of the burst this choice begins (0:
				    * the request goes on the burst under way, r->burst_key) */
	uint64_t ops;              /* ring entries of the request (the shape's ops and calls) */
	double pick_ns;            /* explored: the pick's estimate (what its overrun is
				    * measured from: dmaio_cost_explore_settle()) */
	double granted_ns;         /* explored, a burst's first: the time the budget granted it */
	uint32_t age;              /* automatic choices of the context since its last sample
				    * (UINT32_MAX: none); above DMAIO_COST_STALE, the ratio is
				    * stale (choose.c explores it farther) */
	uint64_t calls;            /* blocking calls on the worker threads (the shape's) */
	double call_cpu_ns;        /* calls: the base their threads' measured CPU is learned
				    * against: the model's CPU of the calls, and the bytes they move
				    * priced as a copy; 0: no calls */
	double cpu_ratio;          /* calls: measured CPU / call_cpu_ns, learned (1 when nothing
				    * measured); measured, cpu_ns is call_cpu_ns x cpu_ratio + setup */
	uint32_t cpu_samples;      /* completions behind cpu_ratio */
	bool wb_guessed;           /* a write through the page cache priced by its writeback's
				    * guess, the direct writes' ratio (cost.c writeback_lr()), above
				    * its own: a price none of its samples moves */
	double est_ns;
};

/* Automatic choices of a context after which a kind's ratio not measured since is stale */
#define DMAIO_COST_STALE 4096u
/* Automatic choices of c since key's ratio last learned a sample (UINT32_MAX: none) */
uint32_t dmaio_cost_age(const struct dmaio_ctx *c, uint32_t key);
/* Samples c's model has learned so far: an estimate made at another count may be stale */
uint64_t dmaio_cost_gen(const struct dmaio_ctx *c);

/* The path a cost key is of (a key: bit 31, path << 24, then the kind of request) */
#define DMAIO_COST_KEY_PATH(key) (((key) >> 24) & 0x7fu)
/* A cost key's kind, whatever its path */
#define DMAIO_COST_KEY_KIND(key) ((key) & ~(0x7fu << 24))

/* The params of DMAIO_COST=fixed (the same on every machine: tests), and the params derived
 * from the two measured ones (a memory copy per byte, a trivial syscall). */
void dmaio_cost_params_fixed(struct dmaio_cost_params *p);
void dmaio_cost_params_measured(double copy_ns, double sys_ns, struct dmaio_cost_params *p);
/* "read cold", "read warm", "write": the kind of request the learned ratios are kept for */
int dmaio_cost_mode(const struct dmaio_req *r, int cached_pct);
/* Does a write of r through path complete before the storage sees its bytes (the page cache,
 * a file without O_SYNC / O_DSYNC)? Its time then shows only its own part of its cost: it is
 * priced with the larger of its own ratio and its writeback's, and teaches its siblings
 * nothing. */
bool dmaio_cost_write_unseen(const struct dmaio_req *r, int path);
/* Price path p's shape of the rest of r. */
void dmaio_cost_estimate(const struct dmaio_req *r, const struct dmaio_path_ops *p, int mode,
			 const struct dmaio_cost_shape *sh, struct dmaio_cost_est *e);
/* The request's path began in ns (its mapping, registration); was_mapped: the buffer had its
 * CPU mapping before. Learns the provider's mapping cost when this begin made the mapping. */
void dmaio_cost_learn_setup(struct dmaio_req *r, bool was_mapped, uint64_t ns);
/* An engine's bounce memory (kcopy: the kernel-copy area, else the pinned one) was made: it
 * took ns for bytes. Learns its cost per byte (the first sample whole: it is the thing itself,
 * timed). */
void dmaio_cost_learn_area(struct dmaio_ctx *c, bool kcopy, uint64_t ns, uint64_t bytes);
/* The request finished on the path chosen for it, without fallback: service_ns is the time it
 * took, its setup excluded. Corrects the ratio of its kind. */
void dmaio_cost_learn(struct dmaio_req *r, uint64_t service_ns);
/* Requests of one key whose path runs blocking calls on the worker threads: the CPU time those
 * threads spent in their calls (cpu_ns) against the model's (model_ns: their call_cpu_ns
 * summed). One sample of the kind's CPU ratio, which scales the path's cpu_ns from then on. */
void dmaio_cost_learn_cpu(struct dmaio_ctx *c, uint32_t key, double cpu_ns, double model_ns);
/* The same for several requests of one key at once, the pick's: their summed time against
 * their summed model (one sample; a page-cache write's weighs its time, cost.c PC_TAU_NS). */
void dmaio_cost_learn_sum(struct dmaio_ctx *c, uint32_t key, double service_ns, double model_ns);
/* The same for an exploration's requests fewer than a burst (a request alone): one sample of
 * the weight of any path's. */
void dmaio_cost_learn_explored(struct dmaio_ctx *c, uint32_t key, double service_ns,
			       double model_ns);

/* A write of r finished, done bytes of it written (to a file without O_SYNC / O_DSYNC): kept
 * under its kind (r->cost_key, with r->cost_model_ns) for the file's next sync through the
 * library. */
void dmaio_cost_write_done(struct dmaio_req *r, uint64_t done);
/* A sync of the file (dev, ino) through the library took sync_ns, with dirty_bytes of the file
 * dirty or under writeback when it began (negative: unknown). Charged to the writes kept for
 * the file since its last sync (their share of the dirty bytes, when the kernel counts more),
 * shared among their kinds by what their syncs took before: each kind learns its share per
 * its model, added to its own ratio in its price (dmaio_cost_estimate()). !synced (the sync
 * failed): the writes are forgotten, nothing learned. */
void dmaio_cost_learn_sync(struct dmaio_ctx *c, uint64_t dev, uint64_t ino, bool synced,
			   uint64_t sync_ns, int64_t dirty_bytes);
/* An exploration's burst finished: its summed time against its summed model, learned as
 * samples sums (one per LEARN_BATCH requests of it); a sum more than 2x below the kind's
 * settled ratio moves it faster than a pick's sample would. */
void dmaio_cost_learn_burst(struct dmaio_ctx *c, uint32_t key, double service_ns, double model_ns,
			    unsigned samples);

/* A kind's exploration budget (the kind of cost key, whatever its path), two accounts: [0]
 * time, [1] CPU. earn_ns credited to each (up to cap_ns: a credit above it is kept, not
 * raised), then spend_ns taken from both when both credits cover it (spend_ns < 0: nothing
 * asked); with overdraw, when both credits are not below zero (the spend may take them below:
 * the kind earns it back before it is granted again). True when the spend was granted. Not
 * learned: an account of what the choice spent. */
bool dmaio_cost_explore_credit(struct dmaio_ctx *c, uint32_t key, const double earn_ns[2],
			       const double cap_ns[2], const double spend_ns[2], bool overdraw);

/* An exploration finished: requests of key's kind took service_ns where the pick was estimated
 * at pick_ns for them, and the budget had granted granted_ns for the difference. What it took
 * beyond that is taken from the kind's time account too (which may go below zero: the kind
 * explores again once its choices earned it back). An exploration is paid for what it cost,
 * not only what it was estimated to cost. */
void dmaio_cost_explore_settle(struct dmaio_ctx *c, uint32_t key, double service_ns,
			       double pick_ns, double granted_ns);

#endif
