// SPDX-License-Identifier: MIT
/* The plot of the io rows: a gnuplot script, then gnuplot run on it when it is installed. */
#include "output.h"
#include "util.h"

#include <errno.h>
#include <limits.h>
#include <spawn.h>
#include <stdbool.h>
#include <string.h>
#include <strings.h>
#include <sys/wait.h>

extern char **environ;

const char *plot_terminal(const char *file, int height, char *t, size_t len)
{
	const char *dot = strrchr(file, '.');

	if (!dot || strchr(dot, '/'))
		return NULL;
	if (!strcasecmp(dot, ".png"))
		snprintf(t, len, "pngcairo size 1400,%d noenhanced font ',10'", height);
	else if (!strcasecmp(dot, ".svg"))
		snprintf(t, len, "svg size 1400,%d noenhanced font ',10'", height);
	else if (!strcasecmp(dot, ".pdf"))
		snprintf(t, len, "pdfcairo size 14in,%.1fin noenhanced font ',10'", height / 100.0);
	else
		return NULL;
	return t;
}

static bool is_io(const struct report *r, const struct row *w)
{
	return !strcmp(r->sec[w->section].kind, "io") && !w->csv_only;
}

/* the first io row (index) of each (dir, mode) panel and of each method in it */
static int first_of(const struct report *r, int upto, const struct row *w, bool by_method)
{
	for (int i = 0; i < upto; i++) {
		const struct row *x = r->rows[i];

		if (is_io(r, x) && !strcmp(x->dir, w->dir) && !strcmp(x->mode, w->mode) &&
		    (!by_method || !strcmp(x->method, w->method)))
			return i;
	}
	return upto;
}

void output_plot(const struct report *r, const char *file, const char *title, FILE *msg)
{
	char gp[PATH_MAX], term[128];
	FILE *f;
	int i, k, np = 0, ret, status;
	pid_t pid;
	char *argv_gp[3];

	snprintf(gp, sizeof(gp), "%s.gp", file);
	f = fopen(gp, "we");
	if (!f) {
		fprintf(stderr, "%s: cannot write %s: %s\n", r->program, gp, strerror(errno));
		return;
	}
	/* one data block per (dir, mode, method): size in MiB, median MB/s */
	for (i = 0; i < r->nrows; i++) {
		const struct row *w = r->rows[i];

		if (!is_io(r, w))
			continue;
		if (first_of(r, i, w, false) == i)
			np++;
		if (first_of(r, i, w, true) != i)
			continue;
		fprintf(f, "$d%d << EOD\n", i);
		for (k = i; k < r->nrows; k++) {
			const struct row *x = r->rows[k];

			if (is_io(r, x) && x->status == ROW_OK && !strcmp(x->dir, w->dir) && !strcmp(x->mode, w->mode) &&
			    !strcmp(x->method, w->method))
				fprintf(f, "%.6f %.1f\n", (double)x->size / MIB, x->mbps[0]);
		}
		fprintf(f, "EOD\n");
	}
	fprintf(f, "set terminal %s\n", plot_terminal(file, np > 2 ? 1000 : 520, term, sizeof(term)));
	fprintf(f, "set output '%s'\n", file);
	fprintf(f, "set multiplot layout %d,%d title 'dmaio-bench: %s'\n", np > 2 ? 2 : 1, np > 1 ? 2 : 1, title);
	fprintf(f, "set logscale x 2\nset xlabel 'size (MiB)'\nset ylabel 'MB/s (median)'\nset grid\n"
		   "set key outside right\nset yrange [0:*]\n");
	for (i = 0; i < r->nrows; i++) {
		const struct row *w = r->rows[i];
		bool first = true;

		if (!is_io(r, w) || first_of(r, i, w, false) != i)
			continue;
		fprintf(f, "set title '%s %s'\nplot ", w->dir, w->mode);
		for (k = i; k < r->nrows; k++) {
			const struct row *x = r->rows[k];

			if (!is_io(r, x) || strcmp(x->dir, w->dir) || strcmp(x->mode, w->mode) ||
			    first_of(r, k, x, true) != k)
				continue;
			fprintf(f, "%s$d%d with linespoints%s title '%s'", first ? "" : ", \\\n     ", k,
				strncmp(x->method, "lib:", 4) ? " dt 2" : "", x->method);
			first = false;
		}
		if (first)
			fprintf(f, "NaN notitle");
		fprintf(f, "\n");
	}
	fprintf(f, "unset multiplot\n");
	if (fclose(f)) {
		fprintf(stderr, "%s: cannot write %s: %s\n", r->program, gp, strerror(errno));
		return;
	}
	argv_gp[0] = (char *)"gnuplot";
	argv_gp[1] = gp;
	argv_gp[2] = NULL;
	ret = posix_spawnp(&pid, "gnuplot", NULL, NULL, argv_gp, environ);
	if (ret == ENOENT) {
		fprintf(msg, "\nplot: gnuplot not found; wrote %s (run `gnuplot %s` to draw %s)\n", gp, gp, file);
		return;
	}
	if (ret) {
		fprintf(stderr, "%s: cannot run gnuplot: %s\n", r->program, strerror(ret));
		return;
	}
	if (waitpid(pid, &status, 0) < 0 || !WIFEXITED(status) || WEXITSTATUS(status)) {
		if (WIFEXITED(status) && WEXITSTATUS(status) == 127)
			fprintf(msg, "\nplot: gnuplot not found; wrote %s\n", gp);
		else
			fprintf(stderr, "%s: gnuplot failed on %s\n", r->program, gp);
		return;
	}
	fprintf(msg, "\nplot: %s (script %s)\n", file, gp);
}
