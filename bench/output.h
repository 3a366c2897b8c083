/* SPDX-License-Identifier: MIT */
/*
 * The output formats of a report (report.h): text (the tables a person reads), CSV (one row per
 * result, the columns of csv_columns[]), JSON (everything: the CSV's values plus per-run values,
 * latency percentiles, jobs and page-cache residency), and the gnuplot plot of the io rows.
 */
#ifndef DMAIO_BENCH_OUTPUT_H
#define DMAIO_BENCH_OUTPUT_H

#include <stddef.h>
#include <stdio.h>

#include "report.h"

enum format { FMT_TEXT, FMT_CSV, FMT_JSON };

/* the "# " lines (printed before the timed runs, so a long run says what it does) */
void output_text_info(FILE *f, const struct report *r);
/* the tables, the trailer lines and the notes */
void output_text(FILE *f, const struct report *r);
/* 0, or -errno when writing failed */
int output_csv(FILE *f, const struct report *r);
int output_json(FILE *f, const struct report *r);
/* write to path (fclose checked): 0 or -errno */
int output_to_file(const char *path, enum format fmt, const struct report *r);

/* the gnuplot terminal of a plot file name (.png, .svg, .pdf) into buf; NULL for another name */
const char *plot_terminal(const char *file, int height, char *buf, size_t len);
/* FILE.gp with the io rows' bandwidth against size, one panel per direction and mode, one line
 * per method, then gnuplot FILE.gp; says what it did on msg */
void output_plot(const struct report *r, const char *file, const char *title, FILE *msg);

#endif /* DMAIO_BENCH_OUTPUT_H */
