/* SPDX-License-Identifier: MIT */
/* Path choice: the path table and scoring. Scores come from cached facts only (no syscalls). */
#include <string.h>

#include "choose.h"
#include "../paths/path.h"
#include "../sys/sys.h"

/* Adding a path: a file in paths/ and a line here. Order breaks score ties. */
static const struct dmaio_path_ops *const path_table[] = {
	&dmaio_path_rw_file,
	&dmaio_path_uring_dmabuf,
	&dmaio_path_udmabuf_direct,
	&dmaio_path_bounce_direct,
	&dmaio_path_buffered,
	&dmaio_path_sendfile,
};

const struct dmaio_path_ops *dmaio_path_by_id(int id)
{
	for (size_t i = 0; i < ARRAY_SIZE(path_table); i++)
		if (path_table[i]->id == id)
			return path_table[i];
	return NULL;
}

/* The one table of path names is the path table's (each path's ops->name), plus "auto". */
const char *dmaio_choose_path_name(uint32_t id)
{
	const struct dmaio_path_ops *p;

	if (id == DMAIO_PATH_AUTO)
		return "auto";
	p = id < DMAIO_PATH_COUNT ? dmaio_path_by_id((int)id) : NULL;
	return p ? p->name : NULL;
}

int dmaio_choose_path_by_name(const char *name)
{
	if (!strcmp(name, "auto"))
		return DMAIO_PATH_AUTO;
	for (size_t i = 0; i < ARRAY_SIZE(path_table); i++)
		if (!strcmp(path_table[i]->name, name))
			return path_table[i]->id;
	return -EINVAL;
}

bool dmaio_choose_may_fall_back(const struct dmaio_req *r, const struct dmaio_path_ops *p)
{
	return !(r->forced == p->id && (r->flags & DMAIO_RW_NO_FALLBACK));
}

const struct dmaio_path_ops *dmaio_choose(struct dmaio_req *r, int cached_pct, int *score,
					  const char **why, int *err)
{
	const struct dmaio_path_ops *best = NULL;
	const char *best_why = NULL;
	int best_score = 0;

	*err = 0;
	if (r->forced && !(r->tried & (1u << r->forced))) {
		const struct dmaio_path_ops *p = dmaio_path_by_id(r->forced);
		const char *w = "forced";
		int s = p ? p->score(r, cached_pct, &w) : -EOPNOTSUPP;

		*why = w;
		if (s > 0) {
			r->tried |= 1u << r->forced;
			*score = s;
			return p;
		}
		r->tried |= 1u << r->forced;
		INFO(r->ctx, "  forced path %s cannot serve: %s", dmaio_choose_path_name((uint32_t)r->forced), w);
		if (r->flags & DMAIO_RW_NO_FALLBACK) {
			*err = -EOPNOTSUPP;
			return NULL;
		}
		r->fallbacks++;
		r->last_refusal = s;
	}
	for (size_t i = 0; i < ARRAY_SIZE(path_table); i++) {
		const struct dmaio_path_ops *p = path_table[i];
		const char *w = "";
		int s;

		if (r->tried & (1u << p->id))
			continue;
		s = p->score(r, cached_pct, &w);
		if (s > best_score) {
			best = p;
			best_score = s;
			best_why = w;
		} else if (s <= 0) {
			DBG(r->ctx, "  %s: cannot: %s", p->name, w);
		}
	}
	*score = best_score;
	*why = best_why;
	if (!best) {
		*err = r->last_refusal ? r->last_refusal : -EOPNOTSUPP;
		return NULL;
	}
	r->tried |= 1u << best->id;
	return best;
}
