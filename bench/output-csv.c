// SPDX-License-Identifier: MIT
/* The CSV of a report: the header, then one line per result with the header's field count. */
#include "output.h"
#include "util.h"

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <string.h>

static void field_str(FILE *f, const char *s)
{
	if (!s[strcspn(s, ",\"\r\n")]) {
		fputs(s, f);
		return;
	}
	fputc('"', f);
	for (; *s; s++) {
		if (*s == '"')
			fputc('"', f);
		fputc(*s, f);
	}
	fputc('"', f);
}

static void field_num(FILE *f, double v, int decimals)
{
	if (!isnan(v) && !isinf(v))
		fprintf(f, "%.*f", decimals, v);
}

static void field(FILE *f, const struct row *w, enum col c)
{
	if (!(w->set & COLBIT(c)))
		return;
	switch (c) {
	case COL_TEST: field_str(f, w->test); break;
	case COL_PROVIDER: field_str(f, w->provider); break;
	case COL_DIR: field_str(f, w->dir); break;
	case COL_MODE: field_str(f, w->mode); break;
	case COL_METHOD: field_str(f, w->method); break;
	case COL_PATH: field_str(f, w->path); break;
	case COL_SIZE: fprintf(f, "%" PRIu64, w->size); break;
	case COL_RUNS: fprintf(f, "%d", w->runs); break;
	case COL_COUNT: fprintf(f, "%" PRIu64, w->count); break;
	case COL_MBPS_MED: case COL_MBPS_MIN: case COL_MBPS_MAX:
		field_num(f, w->mbps[c - COL_MBPS_MED], 1);
		break;
	case COL_CPU: field_num(f, w->cpu, 4); break;
	case COL_X_DIRECT: case COL_X_BUFFERED: case COL_X_NAIVE:
		/* a ratio that cannot be computed (no baseline result) is "-" */
		if (isnan(w->x[c - COL_X_DIRECT]))
			fputc('-', f);
		else
			fprintf(f, "%.2f", w->x[c - COL_X_DIRECT]);
		break;
	case COL_MS_MED: case COL_MS_MIN: case COL_MS_MAX:
		field_num(f, w->ms[c - COL_MS_MED], w->ms_decimals);
		break;
	case NCOLS:
		break;
	}
}

int output_csv(FILE *f, const struct report *r)
{
	int i, c;

	for (c = 0; c < NCOLS; c++)
		fprintf(f, "%s%s", c ? "," : "", csv_columns[c]);
	fputc('\n', f);
	for (i = 0; i < r->nrows; i++) {
		const struct row *w = r->rows[i];

		if (w->status != ROW_OK)
			continue;
		for (c = 0; c < NCOLS; c++) {
			if (c)
				fputc(',', f);
			field(f, w, (enum col)c);
		}
		fputc('\n', f);
	}
	return ferror(f) ? -EIO : 0;
}
