/* SPDX-License-Identifier: MIT */
/*
 * Statistics of the bench: medians, min/max over runs, nearest-rank percentiles of latency
 * samples, and a growable sample array (reserved before a timed run, so that adding a sample
 * inside it does not allocate).
 */
#ifndef DMAIO_BENCH_STATS_H
#define DMAIO_BENCH_STATS_H

#include <stddef.h>

#define MAX_RUNS 101

/* NAN for n <= 0 */
double median(const double *v, int n);
double vmin(const double *v, int n);
double vmax(const double *v, int n);
void sort_doubles(double *v, size_t n);
/* nearest rank p (0..1] of a sorted array; NAN for n 0 */
double pct_sorted(const double *sorted, size_t n, double p);

/* p50, p90, p99 and max of one run's samples; NAN when there are none */
struct pcts {
	double p50, p90, p99, max;
};
#define PCTS_NONE ((struct pcts){ __builtin_nan(""), __builtin_nan(""), __builtin_nan(""), __builtin_nan("") })
/* sorts v in place */
struct pcts pcts_of(double *v, size_t n);
/* over runs: the median of each run's p50, p90 and p99, the max of their maxima */
struct pcts pcts_over_runs(const struct pcts *runs, int n);
double pcts_get(const struct pcts *p, int i); /* 0 p50, 1 p90, 2 p99, 3 max */

struct samples {
	double *v;
	size_t n, cap;
};
void samples_reserve(struct samples *s, size_t n); /* room for n more; dies without memory */
void samples_add(struct samples *s, double x);     /* grows when the reserve is used up */
void samples_free(struct samples *s);

#endif /* DMAIO_BENCH_STATS_H */
