// SPDX-License-Identifier: MIT
/* Statistics of the bench (stats.h). */
#include "stats.h"
#include "util.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

void sort_doubles(double *v, size_t n)
{
	if (n > 1)
		qsort(v, n, sizeof(double), cmp_double);
}

double median(const double *v, int n)
{
	double small[MAX_RUNS], *tmp = small, m;

	if (n <= 0)
		return NAN;
	if (n > MAX_RUNS)
		tmp = xcalloc((size_t)n, sizeof(double));
	memcpy(tmp, v, sizeof(double) * (size_t)n);
	sort_doubles(tmp, (size_t)n);
	m = n % 2 ? tmp[n / 2] : (tmp[n / 2 - 1] + tmp[n / 2]) / 2;
	if (tmp != small)
		free(tmp);
	return m;
}

double vmin(const double *v, int n)
{
	double m = INFINITY;
	int i;

	for (i = 0; i < n; i++)
		if (v[i] < m)
			m = v[i];
	return n > 0 ? m : NAN;
}

double vmax(const double *v, int n)
{
	double m = -INFINITY;
	int i;

	for (i = 0; i < n; i++)
		if (v[i] > m)
			m = v[i];
	return n > 0 ? m : NAN;
}

double pct_sorted(const double *sorted, size_t n, double p)
{
	size_t k;

	if (!n)
		return NAN;
	k = (size_t)ceil(p * (double)n);
	if (k < 1)
		k = 1;
	if (k > n)
		k = n;
	return sorted[k - 1];
}

struct pcts pcts_of(double *v, size_t n)
{
	struct pcts p = PCTS_NONE;

	if (!n)
		return p;
	sort_doubles(v, n);
	p.p50 = pct_sorted(v, n, 0.50);
	p.p90 = pct_sorted(v, n, 0.90);
	p.p99 = pct_sorted(v, n, 0.99);
	p.max = v[n - 1];
	return p;
}

double pcts_get(const struct pcts *p, int i)
{
	return i == 0 ? p->p50 : i == 1 ? p->p90 : i == 2 ? p->p99 : p->max;
}

struct pcts pcts_over_runs(const struct pcts *runs, int n)
{
	double v[4][MAX_RUNS];
	struct pcts out = PCTS_NONE;
	int i, k, m = 0;

	for (i = 0; i < n && i < MAX_RUNS; i++) {
		if (isnan(runs[i].max))
			continue;
		for (k = 0; k < 4; k++)
			v[k][m] = pcts_get(&runs[i], k);
		m++;
	}
	if (!m)
		return out;
	out.p50 = median(v[0], m);
	out.p90 = median(v[1], m);
	out.p99 = median(v[2], m);
	out.max = vmax(v[3], m);
	return out;
}

void samples_reserve(struct samples *s, size_t n)
{
	double *p;

	if (s->cap - s->n >= n)
		return;
	p = realloc(s->v, (s->n + n) * sizeof(double));
	if (!p)
		die("out of memory");
	s->v = p;
	s->cap = s->n + n;
}

void samples_add(struct samples *s, double x)
{
	if (s->n == s->cap)
		samples_reserve(s, s->cap ? s->cap : 64);
	s->v[s->n++] = x;
}

void samples_free(struct samples *s)
{
	free(s->v);
	s->v = NULL;
	s->n = s->cap = 0;
}
