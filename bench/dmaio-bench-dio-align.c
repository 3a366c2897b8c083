// SPDX-License-Identifier: MIT
/*
 * dmaio-bench-dio-align: what O_DIRECT costs from memory that is not page-aligned where the file
 * is (the cost model keeps such requests apart: lib/choose/cost.c, sub_page()).
 *
 *   dmaio-bench-dio-align [--dir DIR] [--size BYTES] [--count N] [--runs R]
 *
 * Per run, for anonymous memory and a memfd mapping (the pages behind udmabuf and memfd
 * buffers), each at memory offsets 0, 512 and 2048 from a page boundary: N O_DIRECT pwrite()s
 * of SIZE (rounded down to 4 KiB) appending to a new file in DIR, then N O_DIRECT pread()s of
 * that file back into the same memory. The variants are interleaved run by run; the report
 * gives each one's median time per call over the runs, and its ratio to the page-aligned
 * anonymous variant of the same direction. The syscalls themselves are measured: no library.
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#define MAX_RUNS 64
#define NVAR 6

static double now_s(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

static int cmp_d(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

static double median(double *v, int n)
{
	qsort(v, (size_t)n, sizeof(*v), cmp_d);
	return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

struct var {
	const char *mem;
	size_t shift;
	char *base;
};

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "dir", required_argument, NULL, 'd' }, { "size", required_argument, NULL, 's' },
		{ "count", required_argument, NULL, 'n' }, { "runs", required_argument, NULL, 'r' },
		{ "help", no_argument, NULL, 'h' }, { 0 }
	};
	const char *dir = ".";
	size_t size = 3u << 20, map_len;
	int count = 100, runs = 3, c;
	struct var v[NVAR] = { { "anon", 0, NULL }, { "anon", 512, NULL }, { "anon", 2048, NULL },
			       { "memfd", 0, NULL }, { "memfd", 512, NULL }, { "memfd", 2048, NULL } };
	static double wr[NVAR][MAX_RUNS], rd[NVAR][MAX_RUNS];
	char path[4096];

	while ((c = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
		switch (c) {
		case 'd': dir = optarg; break;
		case 's': size = strtoull(optarg, NULL, 0); break;
		case 'n': count = atoi(optarg); break;
		case 'r': runs = atoi(optarg); break;
		default:
			printf("usage: %s [--dir DIR] [--size BYTES] [--count N] [--runs R]\n", argv[0]);
			return c == 'h' ? 0 : 2;
		}
	}
	size &= ~(size_t)4095;
	if (!size || count < 1 || runs < 1 || runs > MAX_RUNS) {
		fprintf(stderr, "size >= 4096, count >= 1, 1 <= runs <= %d\n", MAX_RUNS);
		return 2;
	}
	map_len = size + (2u << 20);
	for (int i = 0; i < NVAR; i++) {
		int fd = -1, flags = MAP_SHARED;

		if (!strcmp(v[i].mem, "memfd")) {
			fd = memfd_create("dio-align", MFD_CLOEXEC);
			if (fd < 0 || ftruncate(fd, (off_t)map_len)) {
				perror("memfd");
				return 1;
			}
		} else {
			flags = MAP_PRIVATE | MAP_ANONYMOUS;
		}
		v[i].base = mmap(NULL, map_len, PROT_READ | PROT_WRITE, flags, fd, 0);
		if (v[i].base == MAP_FAILED) {
			perror("mmap");
			return 1;
		}
		if (fd >= 0)
			close(fd);
		memset(v[i].base, 0x5a + i, map_len);
	}
	snprintf(path, sizeof(path), "%s/dmaio-dio-align-%d", dir, (int)getpid());
	printf("# %s", argv[0]);
	for (int i = 1; i < argc; i++)
		printf(" %s", argv[i]);
	printf("\n# %d x %zu-byte O_DIRECT pwrite (appending to a new file) then pread, per variant, "
	       "%d interleaved runs, medians\n", count, size, runs);
	for (int r = 0; r < runs; r++) {
		for (int i = 0; i < NVAR; i++) {
			char *m = v[i].base + v[i].shift;
			int fd = open(path, O_RDWR | O_CREAT | O_TRUNC | O_DIRECT | O_CLOEXEC, 0600);
			double t0;

			if (fd < 0) {
				fprintf(stderr, "%s: %s\n", path, strerror(errno));
				return 1;
			}
			t0 = now_s();
			for (int k = 0; k < count; k++)
				if (pwrite(fd, m, size, (off_t)k * (off_t)size) != (ssize_t)size) {
					fprintf(stderr, "pwrite %s+%zu: %s\n", v[i].mem, v[i].shift,
						strerror(errno));
					return 1;
				}
			wr[i][r] = (now_s() - t0) / count;
			t0 = now_s();
			for (int k = 0; k < count; k++)
				if (pread(fd, m, size, (off_t)k * (off_t)size) != (ssize_t)size) {
					fprintf(stderr, "pread %s+%zu: %s\n", v[i].mem, v[i].shift,
						strerror(errno));
					return 1;
				}
			rd[i][r] = (now_s() - t0) / count;
			close(fd);
			unlink(path);
		}
	}
	{
		double mw[NVAR], mr[NVAR];

		for (int i = 0; i < NVAR; i++) {
			mw[i] = median(wr[i], runs);
			mr[i] = median(rd[i], runs);
		}
		printf("%-6s %-12s %12s %8s %12s %8s\n", "memory", "page offset", "write ms", "x",
		       "read ms", "x");
		for (int i = 0; i < NVAR; i++)
			printf("%-6s %-12zu %12.3f %8.2f %12.3f %8.2f\n", v[i].mem, v[i].shift,
			       mw[i] * 1e3, mw[i] / mw[0], mr[i] * 1e3, mr[i] / mr[0]);
	}
	return 0;
}
