// SPDX-License-Identifier: MIT
/* What a bench run found (report.h). */
#include "report.h"
#include "util.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const char *const csv_columns[NCOLS] = {
	"test", "provider", "size_bytes", "dir", "mode", "method", "path", "runs", "mbps_median",
	"mbps_min", "mbps_max", "cpu_s_per_gib", "x_uring_direct", "x_buffered", "x_naive", "ms_median",
	"ms_min", "ms_max", "count",
};

static char *vfmt(const char *fmt, va_list ap)
{
	char *s;

	if (vasprintf(&s, fmt, ap) < 0)
		die("out of memory");
	return s;
}

static void push(char ***list, int *n, char *s)
{
	char **l = realloc(*list, sizeof(char *) * (size_t)(*n + 1));

	if (!l)
		die("out of memory");
	l[(*n)++] = s;
	*list = l;
}

void report_init(struct report *r, const char *program, int argc, char **argv)
{
	size_t cl = 0;
	int i;

	memset(r, 0, sizeof(*r));
	snprintf(r->program, sizeof(r->program), "%s", program);
	/* the command line, quoted where a shell would need it */
	for (i = 0; i < argc && cl < sizeof(r->cmdline) - 8; i++) {
		bool plain = argv[i][0] && !argv[i][strcspn(argv[i], " \t\n'\"\\$`*?[]{}()<>|&;#~!")];

		cl += (size_t)snprintf(r->cmdline + cl, sizeof(r->cmdline) - cl, plain ? "%s%s" : "%s'%s'",
				       i ? " " : "", argv[i]);
	}
}

static void free_list(char **l, int n)
{
	for (int i = 0; i < n; i++)
		free(l[i]);
	free(l);
}

void report_free(struct report *r)
{
	int i, k;

	free_list(r->info, r->ninfo);
	free_list(r->trailer, r->ntrailer);
	free_list(r->notes, r->nnotes);
	for (i = 0; i < r->nrows; i++)
		free(r->rows[i]);
	free(r->rows);
	for (i = 0; i < r->nsec; i++)
		for (k = 0; k < r->sec[i].ntitle; k++)
			free(r->sec[i].title[k]);
	for (i = 0; i < r->ncfg; i++) {
		free(r->cfg[i].key);
		free(r->cfg[i].val);
	}
	free(r->cfg);
	memset(r, 0, sizeof(*r));
}

void report_info(struct report *r, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	push(&r->info, &r->ninfo, vfmt(fmt, ap));
	va_end(ap);
}

void report_trailer(struct report *r, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	push(&r->trailer, &r->ntrailer, vfmt(fmt, ap));
	va_end(ap);
}

void report_note(struct report *r, const char *fmt, ...)
{
	va_list ap;
	char *s;
	int i;

	va_start(ap, fmt);
	s = vfmt(fmt, ap);
	va_end(ap);
	for (i = 0; i < r->nnotes; i++) {
		if (!strcmp(r->notes[i], s)) {
			free(s);
			return;
		}
	}
	push(&r->notes, &r->nnotes, s);
}

static void cfg(struct report *r, const char *key, bool num, const char *fmt, va_list ap)
{
	struct kv *c = realloc(r->cfg, sizeof(*c) * (size_t)(r->ncfg + 1));

	if (!c)
		die("out of memory");
	r->cfg = c;
	c[r->ncfg].key = strdup(key);
	c[r->ncfg].val = vfmt(fmt, ap);
	c[r->ncfg].num = num;
	if (!c[r->ncfg].key)
		die("out of memory");
	r->ncfg++;
}

void report_cfg_num(struct report *r, const char *key, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	cfg(r, key, true, fmt, ap);
	va_end(ap);
}

void report_cfg_str(struct report *r, const char *key, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	cfg(r, key, false, fmt, ap);
	va_end(ap);
}

int report_section(struct report *r, const char *kind)
{
	if (r->nsec == MAX_SECTIONS)
		die("more than %d result sections", MAX_SECTIONS);
	memset(&r->sec[r->nsec], 0, sizeof(r->sec[0]));
	snprintf(r->sec[r->nsec].kind, sizeof(r->sec[0].kind), "%s", kind);
	return r->nsec++;
}

void section_title(struct report *r, int sec, const char *fmt, ...)
{
	struct section *s = &r->sec[sec];
	va_list ap;

	if (s->ntitle == MAX_TITLE)
		return;
	va_start(ap, fmt);
	s->title[s->ntitle++] = vfmt(fmt, ap);
	va_end(ap);
}

struct row *report_row(struct report *r, int sec, const char *test)
{
	struct row *w;
	int i;

	if (r->nrows == r->cap) {
		struct row **rows = realloc(r->rows, sizeof(*rows) * (size_t)(r->cap ? 2 * r->cap : 64));

		if (!rows)
			die("out of memory");
		r->rows = rows;
		r->cap = r->cap ? 2 * r->cap : 64;
	}
	w = xcalloc(1, sizeof(*w));
	w->section = sec;
	w->jobs = 1;
	w->ms_decimals = 3;
	for (i = 0; i < 3; i++)
		w->mbps[i] = w->x[i] = w->ms[i] = NAN;
	w->cpu = w->extra = w->libns_p50 = NAN;
	w->lat = PCTS_NONE;
	snprintf(w->test, sizeof(w->test), "%s", test);
	w->set = COLBIT(COL_TEST);
	r->rows[r->nrows++] = w;
	return w;
}

void row_str(struct row *w, enum col c, const char *fmt, ...)
{
	char *dst;
	size_t len;
	va_list ap;

	switch (c) {
	case COL_TEST: dst = w->test; len = sizeof(w->test); break;
	case COL_PROVIDER: dst = w->provider; len = sizeof(w->provider); break;
	case COL_DIR: dst = w->dir; len = sizeof(w->dir); break;
	case COL_MODE: dst = w->mode; len = sizeof(w->mode); break;
	case COL_METHOD: dst = w->method; len = sizeof(w->method); break;
	case COL_PATH: dst = w->path; len = sizeof(w->path); break;
	default: return;
	}
	va_start(ap, fmt);
	vsnprintf(dst, len, fmt, ap);
	va_end(ap);
	w->set |= COLBIT(c);
}

void row_u64(struct row *w, enum col c, uint64_t v)
{
	if (c == COL_SIZE)
		w->size = v;
	else if (c == COL_COUNT)
		w->count = v;
	else if (c == COL_RUNS)
		w->runs = (int)v;
	else
		return;
	w->set |= COLBIT(c);
}

void row_num(struct row *w, enum col c, double v)
{
	if (c >= COL_MBPS_MED && c <= COL_MBPS_MAX)
		w->mbps[c - COL_MBPS_MED] = v;
	else if (c == COL_CPU)
		w->cpu = v;
	else if (c >= COL_X_DIRECT && c <= COL_X_NAIVE)
		w->x[c - COL_X_DIRECT] = v;
	else if (c >= COL_MS_MED && c <= COL_MS_MAX)
		w->ms[c - COL_MS_MED] = v;
	else
		return;
	w->set |= COLBIT(c);
}

void row_runs(struct row *w, int n, const double *mbps, const double *cpu, const double *ms)
{
	if (n > MAX_RUNS)
		n = MAX_RUNS;
	w->n = n;
	row_u64(w, COL_RUNS, (uint64_t)n);
	for (int i = 0; i < n; i++) {
		w->run_mbps[i] = mbps ? mbps[i] : NAN;
		w->run_cpu[i] = cpu ? cpu[i] : NAN;
		w->run_ms[i] = ms ? ms[i] : NAN;
	}
	if (mbps) {
		row_num(w, COL_MBPS_MED, median(mbps, n));
		row_num(w, COL_MBPS_MIN, vmin(mbps, n));
		row_num(w, COL_MBPS_MAX, vmax(mbps, n));
	}
	if (cpu)
		row_num(w, COL_CPU, median(cpu, n));
	if (ms) {
		row_num(w, COL_MS_MED, median(ms, n));
		row_num(w, COL_MS_MIN, vmin(ms, n));
		row_num(w, COL_MS_MAX, vmax(ms, n));
	}
}

void row_latency(struct row *w, int n, const struct pcts *runs, const char *what)
{
	if (n > MAX_RUNS)
		n = MAX_RUNS;
	memcpy(w->run_lat, runs, sizeof(*runs) * (size_t)n);
	w->lat = pcts_over_runs(runs, n);
	w->lat_of = what;
}

void row_residency(struct row *w, int n, const double *resid, const char *how)
{
	if (n > MAX_RUNS)
		n = MAX_RUNS;
	memcpy(w->run_resid, resid, sizeof(*resid) * (size_t)n);
	w->has_resid = true;
	w->resid_how = how;
}

void row_paths(struct row *w, const uint64_t *path_bytes, uint64_t fallbacks, uint64_t unaligned)
{
	memcpy(w->path_bytes, path_bytes, sizeof(w->path_bytes));
	w->fallbacks = fallbacks;
	w->unaligned = unaligned;
	w->has_paths = true;
}

const char *row_main_path(const struct row *w)
{
	uint64_t best = 0;
	int p, bp = -1;

	for (p = 0; p < (int)DMAIO_PATH_SLOTS; p++)
		if (w->path_bytes[p] > best) {
			best = w->path_bytes[p];
			bp = p;
		}
	return bp >= 0 ? dmaio_path_name(bp) : NULL;
}
