/* SPDX-License-Identifier: MIT */
/*
 * The page-cache state of the test files: cold = each file's own pages dropped (fdatasync, then
 * POSIX_FADV_DONTNEED over the file), never the whole system's caches; residency measured with
 * cachestat(2) (6.5+), else mincore(2) on a mapping of the file.
 */
#ifndef DMAIO_BENCH_CACHE_H
#define DMAIO_BENCH_CACHE_H

#include <stdint.h>

/* the most a cold file may keep cached: this fraction of its pages (0.1%; none below 1000 pages) */
#define COLD_MAX_PER_MILLE 1

struct residency {
	uint64_t cached;  /* pages of the range in the page cache */
	uint64_t pages;   /* pages of the range */
	const char *how;  /* "cachestat" or "mincore" */
};

/* residency of [0, len) of fd: 0, or -errno when neither cachestat nor mincore can tell */
int file_residency(int fd, uint64_t len, struct residency *r);
/* cached / pages, 0 for an empty range, -1 when it cannot be told */
double residency_fraction(int fd, uint64_t len, const char **how);

/*
 * Make [0, lens[i]) of each file cold: fdatasync + POSIX_FADV_DONTNEED, residency checked, up to
 * three rounds; dies naming the file when more than COLD_MAX_PER_MILLE of one stays cached (a
 * file system that cannot drop its pages, such as tmpfs, or pages mapped elsewhere). Returns the
 * largest resident fraction left (the number the output reports); *how the method used.
 */
double make_cold(const int *fds, const uint64_t *lens, int n, const char **how);

#endif /* DMAIO_BENCH_CACHE_H */
