// SPDX-License-Identifier: MIT
/*
 * The JSON of a report: one object with the program, its version and the library's, the
 * command line, the configuration, the "# " information lines, every result (the CSV's values
 * under the CSV's column names, plus the per-run values, the latency percentiles of each run,
 * the jobs and requests in flight, the page-cache residency before each timed run and the
 * library's path accounting), the trailer lines and the notes. Numbers that are not known are
 * null; strings are UTF-8 (bytes that are not become U+FFFD).
 */
#include "output.h"
#include "util.h"

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <string.h>

struct json {
	FILE *f;
	bool first;   /* no value yet at this level */
};

/* the length of a well-formed UTF-8 sequence at s, 0 when it is not one */
static int utf8_len(const unsigned char *s)
{
	int n, i;
	uint32_t c;

	if (s[0] < 0x80)
		return 1;
	if ((s[0] & 0xe0) == 0xc0)
		n = 2, c = s[0] & 0x1f;
	else if ((s[0] & 0xf0) == 0xe0)
		n = 3, c = s[0] & 0x0f;
	else if ((s[0] & 0xf8) == 0xf0)
		n = 4, c = s[0] & 0x07;
	else
		return 0;
	for (i = 1; i < n; i++) {
		if ((s[i] & 0xc0) != 0x80)
			return 0;
		c = (c << 6) | (s[i] & 0x3f);
	}
	if ((n == 2 && c < 0x80) || (n == 3 && c < 0x800) || (n == 4 && (c < 0x10000 || c > 0x10ffff)) ||
	    (c >= 0xd800 && c <= 0xdfff))
		return 0;
	return n;
}

static void jstr(FILE *f, const char *str)
{
	const unsigned char *s = (const unsigned char *)(str ? str : "");

	fputc('"', f);
	while (*s) {
		int n = utf8_len(s);

		if (n == 0) {
			fputs("\\ufffd", f);
			s++;
		} else if (*s == '"' || *s == '\\') {
			fputc('\\', f);
			fputc(*s++, f);
		} else if (*s < 0x20) {
			switch (*s) {
			case '\n': fputs("\\n", f); break;
			case '\t': fputs("\\t", f); break;
			case '\r': fputs("\\r", f); break;
			default: fprintf(f, "\\u%04x", *s); break;
			}
			s++;
		} else {
			fwrite(s, 1, (size_t)n, f);
			s += n;
		}
	}
	fputc('"', f);
}

static void key(struct json *j, const char *k)
{
	fputs(j->first ? "" : ",", j->f);
	j->first = false;
	if (k) {
		jstr(j->f, k);
		fputc(':', j->f);
	}
}

static void open_(struct json *j, const char *k, char c)
{
	key(j, k);
	fputc(c, j->f);
	j->first = true;
}

static void close_(struct json *j, char c)
{
	fputc(c, j->f);
	j->first = false;
}

static void j_str(struct json *j, const char *k, const char *v)
{
	key(j, k);
	jstr(j->f, v);
}

static void j_num(struct json *j, const char *k, double v)
{
	key(j, k);
	if (isnan(v) || isinf(v))
		fputs("null", j->f);
	else
		fprintf(j->f, "%.9g", v);
}

static void j_u64(struct json *j, const char *k, uint64_t v)
{
	key(j, k);
	fprintf(j->f, "%" PRIu64, v);
}

static void j_raw(struct json *j, const char *k, const char *v)
{
	key(j, k);
	fputs(v, j->f);
}

static void j_lines(struct json *j, const char *k, char *const *l, int n)
{
	open_(j, k, '[');
	for (int i = 0; i < n; i++)
		j_str(j, NULL, l[i]);
	close_(j, ']');
}

static void j_pcts(struct json *j, const char *k, const struct pcts *p)
{
	open_(j, k, '{');
	j_num(j, "p50", p->p50);
	j_num(j, "p90", p->p90);
	j_num(j, "p99", p->p99);
	j_num(j, "max", p->max);
	close_(j, '}');
}

static void j_row(struct json *j, const struct row *w)
{
	static const char *const status[] = { "ok", "failed", "skipped" };
	int c, i;

	open_(j, NULL, '{');
	for (c = 0; c < NCOLS; c++) {
		const char *k = csv_columns[c];

		if (!(w->set & COLBIT(c)))
			continue;
		switch (c) {
		case COL_TEST: j_str(j, k, w->test); break;
		case COL_PROVIDER: j_str(j, k, w->provider); break;
		case COL_DIR: j_str(j, k, w->dir); break;
		case COL_MODE: j_str(j, k, w->mode); break;
		case COL_METHOD: j_str(j, k, w->method); break;
		case COL_PATH: j_str(j, k, w->path); break;
		case COL_SIZE: j_u64(j, k, w->size); break;
		case COL_RUNS: j_u64(j, k, (uint64_t)w->runs); break;
		case COL_COUNT: j_u64(j, k, w->count); break;
		case COL_MBPS_MED: case COL_MBPS_MIN: case COL_MBPS_MAX: j_num(j, k, w->mbps[c - COL_MBPS_MED]); break;
		case COL_CPU: j_num(j, k, w->cpu); break;
		case COL_X_DIRECT: case COL_X_BUFFERED: case COL_X_NAIVE: j_num(j, k, w->x[c - COL_X_DIRECT]); break;
		case COL_MS_MED: case COL_MS_MIN: case COL_MS_MAX: j_num(j, k, w->ms[c - COL_MS_MED]); break;
		}
	}
	j_str(j, "status", status[w->status]);
	if (w->status != ROW_OK)
		j_str(j, "note", w->note);
	j_u64(j, "jobs", (uint64_t)w->jobs);
	if (w->depth)
		j_u64(j, "queue_depth", w->depth);
	if (w->lat_of) {
		j_str(j, "latency_of", w->lat_of);
		j_pcts(j, "latency_ms", &w->lat);
	}
	if (w->has_resid) {
		double mx = 0;

		for (i = 0; i < w->n; i++)
			if (w->run_resid[i] > mx)
				mx = w->run_resid[i];
		j_num(j, "residency_max", w->n ? mx : NAN);
		j_str(j, "residency_by", w->resid_how);
	}
	if (w->has_paths) {
		open_(j, "path_bytes", '{');
		for (i = 0; i < (int)DMAIO_PATH_SLOTS; i++)
			if (w->path_bytes[i] && dmaio_path_name(i))
				j_u64(j, dmaio_path_name(i), w->path_bytes[i]);
		close_(j, '}');
		j_u64(j, "fallbacks", w->fallbacks);
		j_u64(j, "unaligned", w->unaligned);
	}
	if (!strcmp(w->test, "frames")) {
		j_u64(j, "frames", w->frames);
		j_u64(j, "written", w->written);
		j_u64(j, "dropped", w->dropped);
		j_num(j, "cpu_ms_per_frame", w->extra);
		if (w->queue_stats) {
			j_num(j, "dmaio_done_ns_p50_ms", w->libns_p50);
			j_u64(j, "fd_wakeups", w->wakeups);
			j_u64(j, "empty_reaps", w->empty_reaps);
		}
	} else if (!strcmp(w->test, "model")) {
		j_num(j, "peak_rss_growth_mib", w->extra);
	} else if (!strcmp(w->test, "mmap")) {
		j_num(j, "alloc_ms_median", w->extra);
	} else if (!strcmp(w->test, "choice")) {
		j_u64(j, "buffer_bytes", w->size * w->count);
		if (w->desc) {
			j_str(j, "best_forced", w->best);
			j_num(j, "auto_over_best", w->extra);
			j_str(j, "verdict", w->desc);
		}
	}
	open_(j, "per_run", '[');
	for (i = 0; i < w->n; i++) {
		open_(j, NULL, '{');
		j_num(j, "mbps", w->run_mbps[i]);
		j_num(j, "cpu_s_per_gib", w->run_cpu[i]);
		j_num(j, "ms", w->run_ms[i]);
		if (w->has_resid)
			j_num(j, "residency", w->run_resid[i]);
		if (w->lat_of)
			j_pcts(j, "latency_ms", &w->run_lat[i]);
		close_(j, '}');
	}
	close_(j, ']');
	close_(j, '}');
}

int output_json(FILE *f, const struct report *r)
{
	struct json j = { .f = f, .first = true };
	unsigned lv = dmaio_version();
	char v[64];
	int i;

	open_(&j, NULL, '{');
	j_str(&j, "program", r->program);
	snprintf(v, sizeof(v), "%d.%d.%d", DMAIO_VERSION_MAJOR, DMAIO_VERSION_MINOR, DMAIO_VERSION_MICRO);
	j_str(&j, "version", v);
	snprintf(v, sizeof(v), "%u.%u.%u", lv >> 16, (lv >> 8) & 0xff, lv & 0xff);
	j_str(&j, "libdmaio", v);
	j_str(&j, "command", r->cmdline);
	open_(&j, "config", '{');
	for (i = 0; i < r->ncfg; i++) {
		if (r->cfg[i].num)
			j_raw(&j, r->cfg[i].key, r->cfg[i].val);
		else
			j_str(&j, r->cfg[i].key, r->cfg[i].val);
	}
	close_(&j, '}');
	j_lines(&j, "info", r->info, r->ninfo);
	open_(&j, "results", '[');
	for (i = 0; i < r->nrows; i++)
		if (!r->rows[i]->csv_only)
			j_row(&j, r->rows[i]);
	close_(&j, ']');
	j_lines(&j, "trailer", r->trailer, r->ntrailer);
	j_lines(&j, "notes", r->notes, r->nnotes);
	close_(&j, '}');
	fputc('\n', f);
	return ferror(f) ? -EIO : 0;
}

int output_to_file(const char *path, enum format fmt, const struct report *r)
{
	FILE *f = fopen(path, "we");
	int ret;

	if (!f)
		return -errno;
	if (fmt == FMT_CSV)
		ret = output_csv(f, r);
	else if (fmt == FMT_JSON)
		ret = output_json(f, r);
	else
		ret = (output_text_info(f, r), output_text(f, r), 0);
	if (fclose(f) && !ret)
		ret = -errno;
	return ret;
}
