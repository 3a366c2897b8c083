// SPDX-License-Identifier: MIT
/* The page-cache state of the test files (cache.h). */
#include "cache.h"
#include "util.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

/* cachestat(2), 6.5+ (include/uapi/linux/mman.h); one number on every architecture */
#ifndef __NR_cachestat
#define __NR_cachestat 451
#endif
struct bench_cachestat_range {
	uint64_t off;
	uint64_t len;
};
struct bench_cachestat {
	uint64_t nr_cache;
	uint64_t nr_dirty;
	uint64_t nr_writeback;
	uint64_t nr_evicted;
	uint64_t nr_recently_evicted;
};

static int residency_mincore(int fd, uint64_t len, struct residency *r)
{
	size_t page = (size_t)sysconf(_SC_PAGESIZE), n = (size_t)((len + page - 1) / page), i;
	unsigned char *vec;
	void *m;

	r->how = "mincore";
	r->pages = n;
	r->cached = 0;
	if (!len)
		return 0;
	m = mmap(NULL, (size_t)len, PROT_READ, MAP_SHARED, fd, 0);
	if (m == MAP_FAILED)
		return -errno;
	vec = malloc(n);
	if (!vec || mincore(m, (size_t)len, vec) < 0) {
		int e = vec ? -errno : -ENOMEM;

		free(vec);
		munmap(m, (size_t)len);
		return e;
	}
	for (i = 0; i < n; i++)
		r->cached += vec[i] & 1;
	free(vec);
	munmap(m, (size_t)len);
	return 0;
}

int file_residency(int fd, uint64_t len, struct residency *r)
{
	size_t page = (size_t)sysconf(_SC_PAGESIZE);
	struct bench_cachestat_range rg = { 0, len };
	struct bench_cachestat cs = { 0 };

	if (!len) {
		r->cached = r->pages = 0;
		r->how = "cachestat";
		return 0;
	}
	if (syscall(__NR_cachestat, fd, &rg, &cs, 0) == 0) {
		r->how = "cachestat";
		r->pages = (len + page - 1) / page;
		r->cached = cs.nr_cache;
		return 0;
	}
	/* ENOSYS (before 6.5), EOPNOTSUPP (a file type it refuses), EPERM (a seccomp filter) */
	return residency_mincore(fd, len, r);
}

double residency_fraction(int fd, uint64_t len, const char **how)
{
	struct residency r;

	if (file_residency(fd, len, &r) < 0)
		return -1;
	if (how)
		*how = r.how;
	return r.pages ? (double)r.cached / (double)r.pages : 0;
}

static void drop(int fd)
{
	/* dirty pages cannot be dropped: write them first (EINVAL: a file without data sync) */
	if (fdatasync(fd) < 0 && errno != EINVAL && errno != EROFS)
		die("cold: fdatasync of a test file: %s", strerror(errno));
	posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED);
}

double make_cold(const int *fds, const uint64_t *lens, int n, const char **how)
{
	double worst = 0;
	int i, round;

	for (i = 0; i < n; i++)
		drop(fds[i]);
	for (i = 0; i < n; i++) {
		struct residency r = { 0 };

		for (round = 0;; round++) {
			int ret = file_residency(fds[i], lens[i], &r);

			if (ret < 0)
				die("cold: neither cachestat(2) nor mincore(2) can tell what of a test file is "
				    "cached (%s)", strerror(-ret));
			if (r.cached * 1000 <= r.pages * COLD_MAX_PER_MILLE)
				break;
			if (round == 2) {
				char link[64], path[4096];
				ssize_t l;

				snprintf(link, sizeof(link), "/proc/self/fd/%d", fds[i]);
				l = readlink(link, path, sizeof(path) - 1);
				path[l > 0 ? l : 0] = '\0';
				die("cold: %" PRIu64 " of %" PRIu64 " pages (%.1f%%) of %s stay in the page cache "
				    "after fdatasync + POSIX_FADV_DONTNEED (%s): a cold run cannot be measured "
				    "there (a file system that keeps its pages, e.g. tmpfs, or pages mapped "
				    "elsewhere); use --dir on a disk file system or --modes warm", r.cached, r.pages,
				    100.0 * (double)r.cached / (double)r.pages, l > 0 ? path : link, r.how);
			}
			/* writeback that ended after the first drop, or a reader racing us: once more */
			drop(fds[i]);
			nanosleep(&(struct timespec){ 0, 10 * 1000 * 1000 }, NULL);
		}
		if (how)
			*how = r.how;
		if (r.pages && (double)r.cached / (double)r.pages > worst)
			worst = (double)r.cached / (double)r.pages;
	}
	return worst;
}
