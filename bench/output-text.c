// SPDX-License-Identifier: MIT
/* The text of a report: the "# " lines, then one table per section, the trailer and the notes. */
#include "output.h"
#include "util.h"

#include <inttypes.h>
#include <math.h>
#include <string.h>

void output_text_info(FILE *f, const struct report *r)
{
	for (int i = 0; i < r->ninfo; i++)
		fprintf(f, "# %s\n", r->info[i]);
	fflush(f);
}

static void ratio(char *out, size_t len, double x)
{
	if (isnan(x))
		snprintf(out, len, "-");
	else
		snprintf(out, len, "%.2f", x);
}

static const char *path_of(const struct row *w)
{
	return w->path[0] ? w->path : "-";
}

static int method_width(const struct report *r, int sec)
{
	int w = 20;

	for (int i = 0; i < r->nrows; i++)
		if (r->rows[i]->section == sec && (int)strlen(r->rows[i]->method) > w)
			w = (int)strlen(r->rows[i]->method);
	return w;
}

static void io_table(FILE *f, const struct report *r, int sec)
{
	int i, w = method_width(r, sec);

	fprintf(f, "\n%-6s %-5s %-4s %-*s %-16s %8s %8s %8s %9s %8s %8s %8s\n", "size", "dir", "mode", w, "method",
		"path", "MB/s", "min", "max", "CPU s/GiB", "x direct", "x buffrd", "x naive");
	for (i = 0; i < r->nrows; i++) {
		const struct row *x = r->rows[i];
		char sz[32], rd[16], rb[16], rn[16];

		if (x->section != sec || x->csv_only)
			continue;
		size_str(sz, sizeof(sz), x->size);
		if (x->status != ROW_OK) {
			fprintf(f, "%-6s %-5s %-4s %-*s %s\n", sz, x->dir, x->mode, w, x->method, x->note);
			continue;
		}
		ratio(rd, sizeof(rd), x->x[0]);
		ratio(rb, sizeof(rb), x->x[1]);
		ratio(rn, sizeof(rn), x->x[2]);
		fprintf(f, "%-6s %-5s %-4s %-*s %-16s %8.0f %8.0f %8.0f %9.3f %8s %8s %8s%s\n", sz, x->dir, x->mode, w,
			x->method, path_of(x), x->mbps[0], x->mbps[1], x->mbps[2], x->cpu, rd, rb, rn,
			x->fallbacks ? " (fallbacks)" : "");
	}
}

static void alloc_table(FILE *f, const struct report *r, int sec)
{
	fprintf(f, "%-16s %-8s %10s %10s %10s %9s  %s\n", "provider", "loop", "ms", "min", "max", "lib/raw",
		"raw loop");
	for (int i = 0; i < r->nrows; i++) {
		const struct row *x = r->rows[i];
		char rt[16] = "";

		if (x->section != sec || x->csv_only)
			continue;
		if (x->status != ROW_OK) {
			fprintf(f, "%-16s %-8s %s\n", x->provider, x->method, x->note);
			continue;
		}
		if (!isnan(x->extra))
			snprintf(rt, sizeof(rt), "%.2f", x->extra);
		fprintf(f, "%-16s %-8s %10.1f %10.1f %10.1f %9s  %s\n", x->provider, x->method, x->ms[0], x->ms[1],
			x->ms[2], rt, x->desc ? x->desc : "");
	}
}

static void mmap_table(FILE *f, const struct report *r, int sec)
{
	fprintf(f, "%-16s %10s %10s %10s %10s\n", "provider", "alloc ms", "map+touch", "min", "max");
	for (int i = 0; i < r->nrows; i++) {
		const struct row *x = r->rows[i];
		char am[24];

		if (x->section != sec || x->csv_only)
			continue;
		if (x->status != ROW_OK) {
			fprintf(f, "%-16s skipped: %s\n", x->provider, x->note);
			continue;
		}
		if (isnan(x->extra))
			snprintf(am, sizeof(am), "-");
		else
			snprintf(am, sizeof(am), "%.1f", x->extra);
		fprintf(f, "%-16s %10s %10.1f %10.1f %10.1f%s%s\n", x->provider, am, x->ms[0], x->ms[1], x->ms[2],
			x->desc ? "  " : "", x->desc ? x->desc : "");
	}
}

/* A row of this section with numbers to print; a skipped or failed one is printed as its note. */
static bool row_measured(FILE *f, const struct row *x, int sec)
{
	if (x->section != sec || x->csv_only)
		return false;
	if (x->status == ROW_SKIPPED) {
		fprintf(f, "%-20s skipped: %s\n", x->method, x->note);
		return false;
	}
	if (x->status != ROW_OK) {
		fprintf(f, "%-20s %s\n", x->method, x->note);
		return false;
	}
	return true;
}

static void reads_table(FILE *f, const struct report *r, int sec)
{
	fprintf(f, "%-20s %-16s %8s %8s %8s %9s %7s %9s  %s\n", "method", "path", "MB/s", "min", "max", "CPU s/GiB",
		"x base", "ms", "fallbacks, unaligned bytes (all runs)");
	for (int i = 0; i < r->nrows; i++) {
		const struct row *x = r->rows[i];
		char rx[16];

		if (!row_measured(f, x, sec))
			continue;
		ratio(rx, sizeof(rx), x->x[0]);
		fprintf(f, "%-20s %-16s %8.0f %8.0f %8.0f %9.3f %7s %9.1f", x->method, path_of(x), x->mbps[0],
			x->mbps[1], x->mbps[2], x->cpu, rx, x->ms[0]);
		if (x->has_paths)
			fprintf(f, "  %" PRIu64 ", %" PRIu64, x->fallbacks, x->unaligned);
		fputc('\n', f);
	}
}

static void frames_table(FILE *f, const struct report *r, int sec)
{
	fprintf(f, "%-20s %-16s %7s %8s %9s %7s %7s %7s %8s %13s %6s  %s\n", "method", "path", "MB/s", "CPU ms/f",
		"CPU s/GiB", "p50", "p90", "p99", "max", "dropped", "x base", "fallbacks, unaligned bytes (all runs)");
	for (int i = 0; i < r->nrows; i++) {
		const struct row *x = r->rows[i];
		char rx[16], drop[48];

		if (!row_measured(f, x, sec))
			continue;
		ratio(rx, sizeof(rx), x->x[1]);
		snprintf(drop, sizeof(drop), "%" PRIu64 "/%" PRIu64, x->dropped, x->frames);
		fprintf(f, "%-20s %-16s %7.1f %8.3f %9.3f %7.2f %7.2f %7.2f %8.2f %13s %6s", x->method, path_of(x),
			x->mbps[0], x->extra, x->cpu, x->lat.p50, x->lat.p90, x->lat.p99, x->lat.max, drop, rx);
		if (x->has_paths)
			fprintf(f, "  %" PRIu64 ", %" PRIu64, x->fallbacks, x->unaligned);
		if (x->queue_stats)
			fprintf(f, "  (dmaio_done.ns p50 %.2f ms; %.1f fd wake-ups per frame, %.0f%% with nothing to reap)",
				x->libns_p50, x->frames ? (double)x->wakeups / (double)x->frames : 0.0,
				x->wakeups ? 100.0 * (double)x->empty_reaps / (double)x->wakeups : 0.0);
		fputc('\n', f);
	}
}

static void model_table(FILE *f, const struct report *r, int sec)
{
	fprintf(f, "%-18s %10s %8s %12s %14s\n", "variant", "MB/s", "x base", "CPU s/GiB", "peak RSS +MiB");
	for (int i = 0; i < r->nrows; i++) {
		const struct row *x = r->rows[i];

		if (x->section != sec || x->csv_only)
			continue;
		if (x->status != ROW_OK) {
			fprintf(f, "%-18s %s\n", x->method, x->note);
			continue;
		}
		fprintf(f, "%-18s %10.0f %8.2f %12.3f %14.1f\n", x->method, x->mbps[0], x->x[0], x->cpu, x->extra);
	}
}

/* ---- choice: one line per cell, a column per method ---- */

#define CHOICE_MAX_COLS 16

/* rows a and b belong to one cell: provider, range size, ranges (so buffer size) and direction */
static bool same_cell(const struct row *a, const struct row *b)
{
	return !strcmp(a->provider, b->provider) && a->size == b->size && a->count == b->count &&
	       !strcmp(a->dir, b->dir);
}

/* the column of a method: "base:uring-direct" is "base", "lib:X" is "X" */
static const char *choice_label(const char *method)
{
	if (!strncmp(method, "base:", 5))
		return "base";
	return strncmp(method, "lib:", 4) ? method : method + 4;
}

/* the methods of the section in the order they come; only those with a result somewhere get a
 * column (a path that cannot serve any cell is listed under the table instead) */
static int choice_columns(const struct report *r, int sec, const char **col)
{
	int n = 0, i, j;

	for (i = 0; i < r->nrows; i++) {
		const struct row *x = r->rows[i];

		if (x->section != sec || x->status != ROW_OK)
			continue;
		for (j = 0; j < n && strcmp(col[j], x->method); j++)
			;
		if (j == n && n < CHOICE_MAX_COLS)
			col[n++] = x->method;
	}
	return n;
}

/* the row of method in the cell that starts at row first, NULL when none */
static const struct row *choice_find(const struct report *r, int first, const char *method)
{
	for (int i = first; i < r->nrows && same_cell(r->rows[first], r->rows[i]); i++)
		if (r->rows[i]->section == r->rows[first]->section &&
		    !strcmp(r->rows[i]->method, method))
			return r->rows[i];
	return NULL;
}

/* lib:auto's path, with its share of the bytes when other paths moved some */
static void choice_auto_path(char *out, size_t len, const struct row *a)
{
	uint64_t all = 0, top = 0;
	int p;

	if (!a || a->status != ROW_OK) {
		snprintf(out, len, "-");
		return;
	}
	for (p = 0; p < (int)DMAIO_PATH_SLOTS; p++) {
		all += a->path_bytes[p];
		top = a->path_bytes[p] > top ? a->path_bytes[p] : top;
	}
	if (all && top < all)
		snprintf(out, len, "%s %.0f%%", path_of(a), 100.0 * (double)top / (double)all);
	else
		snprintf(out, len, "%s", path_of(a));
}

static void choice_grid(FILE *f, const struct report *r, int sec, bool cpu)
{
	const char *col[CHOICE_MAX_COLS];
	int ncol = choice_columns(r, sec, col), pw = 8, wid[CHOICE_MAX_COLS], i, j;

	for (i = 0; i < r->nrows; i++)
		if (r->rows[i]->section == sec && (int)strlen(r->rows[i]->provider) > pw)
			pw = (int)strlen(r->rows[i]->provider);
	fprintf(f, "\n%-*s %6s %6s %-5s", pw, "provider", "buffer", "range", "dir");
	for (j = 0; j < ncol; j++) {
		wid[j] = (int)strlen(choice_label(col[j]));
		wid[j] = wid[j] < 9 ? 9 : wid[j];
		fprintf(f, " %*s", wid[j], choice_label(col[j]));
	}
	if (cpu)
		fprintf(f, "   (CPU s/GiB, medians)\n");
	else
		fprintf(f, "  %-18s %-14s %9s %s   (MB/s, medians)\n", "auto took", "best forced",
			"auto/best", "verdict");
	for (i = 0; i < r->nrows; i++) {
		const struct row *x = r->rows[i], *a;
		char b[32], rs[32], ap[48], ratio[16];

		if (x->section != sec || x->csv_only || (i > 0 && r->rows[i - 1]->section == sec &&
							 same_cell(r->rows[i - 1], x)))
			continue;
		size_str(b, sizeof(b), x->size * x->count);
		size_str(rs, sizeof(rs), x->size);
		fprintf(f, "%-*s %6s %6s %-5s", pw, x->provider, b, rs, x->dir);
		for (j = 0; j < ncol; j++) {
			const struct row *y = choice_find(r, i, col[j]);

			if (!y)
				fprintf(f, " %*s", wid[j], "-");
			else if (y->status == ROW_SKIPPED)
				fprintf(f, " %*s", wid[j], "n/s");
			else if (y->status != ROW_OK)
				fprintf(f, " %*s", wid[j], "ERR");
			else if (cpu)
				fprintf(f, " %*.3f", wid[j], y->cpu);
			else
				fprintf(f, " %*.0f", wid[j], y->mbps[0]);
		}
		if (!cpu) {
			a = choice_find(r, i, "lib:auto");
			choice_auto_path(ap, sizeof(ap), a);
			snprintf(ratio, sizeof(ratio), "-");
			if (a && a->desc)
				snprintf(ratio, sizeof(ratio), "%.2f", a->extra);
			fprintf(f, "  %-18s %-14s %9s %s", ap, a && a->desc ? a->best : "-", ratio,
				a && a->desc ? a->desc : "-");
		}
		fputc('\n', f);
	}
}

static void choice_table(FILE *f, const struct report *r, int sec)
{
	const char *col[CHOICE_MAX_COLS];
	int ncol = choice_columns(r, sec, col), i, j, k;
	bool first = true;

	choice_grid(f, r, sec, false);
	choice_grid(f, r, sec, true);
	/* what could not serve or failed, each reason once, with the number of cells */
	for (i = 0; i < r->nrows; i++) {
		const struct row *x = r->rows[i];
		int n = 0, all = 0;
		bool seen = false, col_of = false;

		if (x->section != sec || x->status == ROW_OK)
			continue;
		for (j = 0; j < i && !seen; j++)
			seen = r->rows[j]->section == sec && r->rows[j]->status == x->status &&
			       !strcmp(r->rows[j]->method, x->method) &&
			       !strcmp(r->rows[j]->note, x->note);
		if (seen)
			continue;
		for (j = 0; j < r->nrows; j++) {
			const struct row *y = r->rows[j];

			if (y->section != sec || strcmp(y->method, x->method))
				continue;
			all++;
			n += y->status == x->status && !strcmp(y->note, x->note);
		}
		for (k = 0; k < ncol; k++)
			col_of |= !strcmp(col[k], x->method);
		fprintf(f, "%s%s %s: %s (%d of %d cells%s)\n", first ? "\n" : "",
			x->status == ROW_SKIPPED ? "n/s" : "ERR", x->method, x->note, n, all,
			col_of ? "" : "; no column");
		first = false;
	}
}

void output_text(FILE *f, const struct report *r)
{
	int s, i;

	for (s = 0; s < r->nsec; s++) {
		const struct section *sc = &r->sec[s];

		if (sc->ntitle)
			fputc('\n', f);
		for (i = 0; i < sc->ntitle; i++)
			fprintf(f, "%s\n", sc->title[i]);
		if (!strcmp(sc->kind, "io"))
			io_table(f, r, s);
		else if (!strcmp(sc->kind, "alloc"))
			alloc_table(f, r, s);
		else if (!strcmp(sc->kind, "mmap"))
			mmap_table(f, r, s);
		else if (!strcmp(sc->kind, "ranges") || !strcmp(sc->kind, "files"))
			reads_table(f, r, s);
		else if (!strcmp(sc->kind, "frames"))
			frames_table(f, r, s);
		else if (!strcmp(sc->kind, "model"))
			model_table(f, r, s);
		else if (!strcmp(sc->kind, "choice"))
			choice_table(f, r, s);
	}
	if (r->ntrailer)
		fputc('\n', f);
	for (i = 0; i < r->ntrailer; i++)
		fprintf(f, "%s\n", r->trailer[i]);
	if (r->nnotes) {
		fprintf(f, "\nnotes:\n");
		for (i = 0; i < r->nnotes; i++)
			fprintf(f, "  - %s\n", r->notes[i]);
	}
	fflush(f);
}
