/* SPDX-License-Identifier: MIT */
/*
 * Layer "choose": the path table and the choice of a path for a request: the forced one first
 * (flags or DMAIO_PATH), then the best score among the paths not tried yet for this request.
 */
#ifndef DMAIO_CHOOSE_H
#define DMAIO_CHOOSE_H

#include "../dmaio-types.h"

/* The path to try next for r, marked tried (r->tried, r->fallbacks, r->last_refusal updated for
 * the ones that cannot serve). NULL when none is left: *err says why (-EOPNOTSUPP for a forced
 * path that cannot serve with DMAIO_RW_NO_FALLBACK). *why: one line for the debug log. */
const struct dmaio_path_ops *dmaio_choose(struct dmaio_req *r, int cached_pct, int *score,
					  const char **why, int *err);
const struct dmaio_path_ops *dmaio_path_by_id(int id);
/* the name of a path value ("auto" for 0), NULL for none; and the reverse (-EINVAL) */
const char *dmaio_choose_path_name(uint32_t id);
int dmaio_choose_path_by_name(const char *name);
/* may a refusal of path p make r fall back? */
bool dmaio_choose_may_fall_back(const struct dmaio_req *r, const struct dmaio_path_ops *p);

#endif
