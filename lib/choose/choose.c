/* SPDX-License-Identifier: MIT */
/* Path choice: the path table, and the choice of the path with the lowest estimated cost
 * (cost.c) among those that can serve, from cached facts only (no syscalls). */
#include <string.h>

#include "choose.h"
#include "cost.h"
#include "../paths/path.h"
#include "../sys/sys.h"

/* Adding a path: a file in paths/ and a line here. Order breaks ties of estimates. */
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

/* Can p serve the rest of r, and at what estimated cost: 0 with *e filled, or its refusal. */
static int price(const struct dmaio_req *r, const struct dmaio_path_ops *p, int cached_pct,
		 int mode, struct dmaio_cost_est *e, const char **why)
{
	struct dmaio_cost_shape sh;
	int s = p->serve(r, cached_pct, &sh, why);

	if (!s)
		dmaio_cost_estimate(r, p, mode, &sh, e);
	return s;
}

const struct dmaio_path_ops *dmaio_choose(struct dmaio_req *r, int cached_pct,
					  struct dmaio_cost_est *est, const char **why, int *err)
{
	const struct dmaio_path_ops *best = NULL;
	struct dmaio_cost_est e;
	int mode = dmaio_cost_mode(r, cached_pct);
	bool unmapped = false;

	*err = 0;
	*why = NULL;
	if (r->forced && !(r->tried & (1u << r->forced))) {
		const struct dmaio_path_ops *p = dmaio_path_by_id(r->forced);
		const char *w = "forced";
		int s = p ? price(r, p, cached_pct, mode, est, &w) : -EOPNOTSUPP;

		*why = w;
		r->tried |= 1u << r->forced;
		if (!s)
			return p;
		INFO(r->ctx, "  forced path %s cannot serve: %s", dmaio_choose_path_name((uint32_t)r->forced), w);
		if (r->flags & DMAIO_RW_NO_FALLBACK) {
			*err = -EOPNOTSUPP;
			return NULL;
		}
		r->fallbacks++;
		r->last_refusal = s;
	}
	/* the lowest estimate among the paths not tried yet; ties go to the table's order */
	for (size_t i = 0; i < ARRAY_SIZE(path_table); i++) {
		const struct dmaio_path_ops *p = path_table[i];
		const char *w = "";

		if (r->tried & (1u << p->id))
			continue;
		int s = price(r, p, cached_pct, mode, &e, &w);

		if (s) {
			DBG(r->ctx, "  %s: cannot: %s", p->name, w);
			unmapped |= s == -ENODEV;
			continue;
		}
		DBG(r->ctx, "  %s: %.1f us = (ops %.1f + bytes %.1f + walk %.1f) x %.2f (%u measured)"
		    " + setup %.1f", p->name, e.est_ns / 1e3, e.ops_ns / 1e3, e.bytes_ns / 1e3,
		    e.walk_ns / 1e3, e.ratio, e.samples, e.setup_ns / 1e3);
		if (!best || e.est_ns < est->est_ns) {
			best = p;
			*est = e;
			*why = w;
		}
	}
	if (!best) {
		/* a path that needs the mapping could have served, had the exporter given one:
		 * -ENODEV says so (dmaio_fd_read()), more than any other path's refusal */
		*err = unmapped ? -ENODEV : r->last_refusal ? r->last_refusal : -EOPNOTSUPP;
		return NULL;
	}
	r->tried |= 1u << best->id;
	return best;
}

unsigned dmaio_choose_count(void)
{
	return ARRAY_SIZE(path_table);
}

int dmaio_choose_explain(const struct dmaio_req *r, int cached_pct, int *status,
			 struct dmaio_cost_est *est, const char **why,
			 int *ids)
{
	int mode = dmaio_cost_mode(r, cached_pct), pick = -1;

	for (size_t i = 0; i < ARRAY_SIZE(path_table); i++) {
		const struct dmaio_path_ops *p = path_table[i];

		ids[i] = p->id;
		why[i] = "";
		memset(&est[i], 0, sizeof(est[i]));
		status[i] = price(r, p, cached_pct, mode, &est[i], &why[i]);
		if (status[i])
			continue;
		if (pick < 0 || est[i].est_ns < est[pick].est_ns)
			pick = (int)i;
	}
	/* a forced path that can serve is taken whatever its estimate */
	for (size_t i = 0; i < ARRAY_SIZE(path_table); i++)
		if (r->forced == path_table[i]->id && !status[i])
			pick = (int)i;
	return pick;
}
