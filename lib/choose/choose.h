/* SPDX-License-Identifier: MIT */
/*
 * Layer "choose": the path table and the choice of a path for a request: the forced one first
 * (flags or DMAIO_PATH), then among the paths not tried yet for this request that can serve it,
 * the lowest estimated cost (cost.h), the one spending the least CPU among those within 10% of
 * it; every 16th automatic choice of a transfer may explore a path measured less (within 1.5x),
 * spending at most 1/32 of the time its kind's choices were estimated to take; a queue's
 * exploration is a burst as deep as the queue (r->burst_room, r->burst_queued; every 16 x its
 * length), which the queue goes on with (r->burst_key) and learns as one sum.
 */
#ifndef DMAIO_CHOOSE_H
#define DMAIO_CHOOSE_H

#include "../dmaio-types.h"
#include "cost.h"

/* The path to try next for r, marked tried (r->tried, r->fallbacks, r->last_refusal updated for
 * the ones that cannot serve), with its estimate *est. NULL when none is left: *err says why
 * (-EOPNOTSUPP for a forced path that cannot serve with DMAIO_RW_NO_FALLBACK). *why: one line
 * for the debug log. */
#define DMAIO_CHOOSE_EXPLORE 1u /* flags: the choice may explore (a transfer, not a question) */
/* A queue's last automatic choice, kept for its next request of the same kind (r->memo; zeroed:
 * empty): every path's refusal or estimate, reused while every input of them is alike and the
 * cost model has learned nothing since (choose.c, "memo"). */
#define DMAIO_CHOOSE_SLOTS 8u
struct dmaio_choice_memo {
	uint64_t gen;              /* dmaio_cost_gen() when made */
	uint64_t buf_id, file_id;  /* theirs (unique in the process: a buffer freed and another
				    * made at its address is another) */
	uint64_t len;              /* the rest of the range */
	uint64_t buf_mod, file_mod; /* its buffer and file offsets modulo memo_align() */
	unsigned flags;
	int cached_pct;
	bool valid, write, mapped, bounce_cold;
	unsigned uses;             /* choices it served since made */
	int status[DMAIO_CHOOSE_SLOTS];
	struct dmaio_cost_est est[DMAIO_CHOOSE_SLOTS];
	const char *why[DMAIO_CHOOSE_SLOTS];
};
const struct dmaio_path_ops *dmaio_choose(struct dmaio_req *r, int cached_pct, unsigned flags,
					  struct dmaio_cost_est *est, const char **why, int *err);
/* Every path of the table for r, as dmaio_choose() would see it (nothing marked): each one's
 * refusal (-errno) or 0 and its estimate, and its line; the index of the one it would take (the
 * forced one when it can serve), -1 when none. n: room in the arrays (ARRAY of the table). */
unsigned dmaio_choose_count(void);
int dmaio_choose_explain(const struct dmaio_req *r, int cached_pct, int *status,
			 struct dmaio_cost_est *est, const char **why, int *ids);
const struct dmaio_path_ops *dmaio_path_by_id(int id);
/* the name of a path value ("auto" for 0), NULL for none; and the reverse (-EINVAL) */
const char *dmaio_choose_path_name(uint32_t id);
int dmaio_choose_path_by_name(const char *name);
/* may a refusal of path p make r fall back? */
bool dmaio_choose_may_fall_back(const struct dmaio_req *r, const struct dmaio_path_ops *p);

#endif
