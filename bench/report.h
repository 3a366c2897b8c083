/* SPDX-License-Identifier: MIT */
/*
 * What a bench run found, independent of how it is written: the "# " information lines, the
 * result rows (one per test, case and method; the CSV columns plus what the JSON and the text
 * tables add: per-run values, latency percentiles, jobs, page-cache residency), the sections
 * the text tables are grouped in, and the notes. The workloads fill it, output-text.c,
 * output-csv.c and output-json.c write it.
 */
#ifndef DMAIO_BENCH_REPORT_H
#define DMAIO_BENCH_REPORT_H

#include <dmaio.h>

#include <stdbool.h>
#include <stdint.h>

#include "stats.h"

/* the CSV columns, in order (csv_columns[] names them) */
enum col {
	COL_TEST, COL_PROVIDER, COL_SIZE, COL_DIR, COL_MODE, COL_METHOD, COL_PATH, COL_RUNS,
	COL_MBPS_MED, COL_MBPS_MIN, COL_MBPS_MAX, COL_CPU, COL_X_DIRECT, COL_X_BUFFERED, COL_X_NAIVE,
	COL_MS_MED, COL_MS_MIN, COL_MS_MAX, COL_COUNT, NCOLS
};
extern const char *const csv_columns[NCOLS];
#define COLBIT(c) (1u << (c))

enum row_status { ROW_OK, ROW_FAILED, ROW_SKIPPED };

struct row {
	int section;              /* the text table it belongs to */
	enum row_status status;
	char note[256];           /* ROW_FAILED / ROW_SKIPPED: why (the text and JSON say it) */
	bool csv_only;            /* a CSV row that the text and JSON hold elsewhere (frames-latency) */
	unsigned set;             /* COLBIT()s of the CSV columns with a value */

	/* the CSV columns */
	char test[24], provider[64], dir[8], mode[16], method[64], path[32];
	uint64_t size;
	int runs;
	double mbps[3];           /* median, min, max */
	double cpu;               /* CPU s per GiB */
	double x[3];              /* x_uring_direct, x_buffered, x_naive; NAN is written "-" */
	double ms[3];             /* median, min, max */
	int ms_decimals;          /* 3 unless set */
	uint64_t count;

	/* beyond the CSV (JSON) */
	int jobs;                 /* threads moving the data at once */
	unsigned depth;           /* requests the bench keeps in flight per job (JSON queue_depth; a
				   * synchronous library call is 1, whatever the library does inside) */
	int n;                    /* runs with a result: the per-run values below */
	double run_mbps[MAX_RUNS];
	double run_cpu[MAX_RUNS];
	double run_ms[MAX_RUNS];
	bool has_resid;           /* page-cache residency measured before each timed run */
	double run_resid[MAX_RUNS];
	const char *resid_how;    /* "cachestat" / "mincore" */
	const char *lat_of;       /* what one latency sample times ("request", "call", ...), NULL: none */
	struct pcts run_lat[MAX_RUNS];
	struct pcts lat;          /* over the runs: median of each percentile, max of the maxima */
	bool has_paths;           /* the library's accounting */
	uint64_t path_bytes[DMAIO_PATH_SLOTS];
	uint64_t fallbacks, unaligned;

	/* for the text tables */
	double extra;             /* alloc: lib/raw ratio; mmap: alloc ms; frames: CPU ms per frame;
				   * choice, the lib:auto row: lib:auto / the fastest forced path */
	const char *desc;         /* alloc: what the loop does; mmap: a remark; choice, the lib:auto
				   * row: the cell's verdict (ok, miss, FAIL) */
	char best[32];            /* choice, the lib:auto row: the cell's fastest forced path */
	uint64_t frames, written, dropped, wakeups, empty_reaps; /* frames, all runs */
	double libns_p50;         /* frames, queue: median of each run's p50 of dmaio_done.ns (ms) */
	bool queue_stats;
};

#define MAX_SECTIONS 32
#define MAX_TITLE 4
struct section {
	char kind[16];            /* io, alloc, mmap, ranges, files, frames, model, choice */
	char *title[MAX_TITLE];   /* the lines above its table */
	int ntitle;
};

/* a key of the JSON "config" object: a number (written as is) or a string */
struct kv {
	char *key, *val;
	bool num;
};

struct report {
	char program[32];
	char cmdline[4096];
	char **info;              /* "# " lines, without the "# " */
	int ninfo;
	struct row **rows;        /* each allocated once: a row pointer stays valid */
	int nrows, cap;
	struct section sec[MAX_SECTIONS];
	int nsec;
	char **trailer;           /* lines after the tables */
	int ntrailer;
	char **notes;
	int nnotes;
	struct kv *cfg;
	int ncfg;
};

void report_init(struct report *r, const char *program, int argc, char **argv);
void report_free(struct report *r);
__attribute__((format(printf, 2, 3))) void report_info(struct report *r, const char *fmt, ...);
__attribute__((format(printf, 2, 3))) void report_note(struct report *r, const char *fmt, ...);
__attribute__((format(printf, 2, 3))) void report_trailer(struct report *r, const char *fmt, ...);
/* a config entry of the JSON: report_cfg_num(r, "runs", "%d", n) */
__attribute__((format(printf, 3, 4))) void report_cfg_num(struct report *r, const char *key, const char *fmt, ...);
__attribute__((format(printf, 3, 4))) void report_cfg_str(struct report *r, const char *key, const char *fmt, ...);
/* a new section (its index) of kind, with title lines added by section_title() */
int report_section(struct report *r, const char *kind);
__attribute__((format(printf, 3, 4))) void section_title(struct report *r, int sec, const char *fmt, ...);
/* a new row of section sec, test test: all numbers NAN, nothing set, jobs 1 */
struct row *report_row(struct report *r, int sec, const char *test);

/* row helpers */
__attribute__((format(printf, 3, 4), nonnull(1, 3))) void row_str(struct row *w, enum col c, const char *fmt, ...);
void row_u64(struct row *w, enum col c, uint64_t v);   /* size, count, runs */
void row_num(struct row *w, enum col c, double v);     /* the double columns */
/* the per-run values: mbps/cpu/ms (NULL: none), their median/min/max set in the columns */
void row_runs(struct row *w, int n, const double *mbps, const double *cpu, const double *ms);
/* per-run latency percentiles of samples of what */
void row_latency(struct row *w, int n, const struct pcts *runs, const char *what);
void row_residency(struct row *w, int n, const double *resid, const char *how);
void row_paths(struct row *w, const uint64_t *path_bytes, uint64_t fallbacks, uint64_t unaligned);
/* the path that moved most bytes, NULL when none */
const char *row_main_path(const struct row *w);

#endif /* DMAIO_BENCH_REPORT_H */
