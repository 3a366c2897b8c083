/* SPDX-License-Identifier: MIT */
/*
 * dmaio-bench: the context the benchmarks share (the options, read-only after parsing, and the
 * report they fill) and the entry points of each benchmark module:
 *   workloads-io.c     --tests io: every library path against O_DIRECT io_uring, buffered and
 *                      naive baselines, sizes x directions x cold/warm
 *   workloads-alloc.c  --tests alloc,mmap: allocation per provider against the raw kernel loops,
 *                      map and touch
 *   workloads-queue.c  --tests ranges,files,frames: the asynchronous API's workloads
 *   workloads-choice.c --tests choice: lib:auto against every path forced and the O_DIRECT
 *                      baseline, providers x buffer sizes x range sizes x directions
 * Each has setup (files, buffers, checks), info (the "# " lines), run (the timed, interleaved
 * runs), report (the rows) and free.
 */
#ifndef DMAIO_BENCH_H
#define DMAIO_BENCH_H

#include "baselines.h"
#include "cache.h"
#include "options.h"
#include "output.h"
#include "report.h"
#include "stats.h"
#include "util.h"

struct io_state;
struct alloc_state;
struct wl_state;
struct choice_state;

struct bench {
	struct opts o;
	struct report rep;
	struct io_state *io;
	struct alloc_state *al;
	struct wl_state *wl;
	struct choice_state *ch;
};

#define note(b, ...) report_note(&(b)->rep, __VA_ARGS__)

static inline const char *dir_name(int d)
{
	return d == DIR_READ ? "read" : "write";
}

static inline const char *mode_name(int m)
{
	return m == MODE_COLD ? "cold" : "warm";
}

/* workloads-io.c */
void io_setup(struct bench *b);
void io_info(struct bench *b);
void io_run(struct bench *b);
void io_report(struct bench *b);
/* the plot's title: the buffers' providers and the directory */
void io_plot_title(const struct bench *b, char *out, size_t len);
void io_free(struct bench *b);

/* workloads-alloc.c */
void alloc_setup(struct bench *b);
void alloc_run(struct bench *b);
void mmap_run(struct bench *b);
void alloc_report(struct bench *b);
void mmap_report(struct bench *b);
void alloc_free(struct bench *b);

/* workloads-queue.c */
void wl_setup(struct bench *b);
void wl_info(struct bench *b);
void wl_run(struct bench *b);
void wl_report(struct bench *b);
void wl_free(struct bench *b);

/* workloads-choice.c */
void choice_setup(struct bench *b);
void choice_info(struct bench *b);
void choice_run(struct bench *b);
void choice_report(struct bench *b);
void choice_free(struct bench *b);

#endif /* DMAIO_BENCH_H */
