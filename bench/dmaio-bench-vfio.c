// SPDX-License-Identifier: MIT
/*
 * dmaio-bench-vfio: device memory (a vfio-pci BAR) as the destination of file data, and what a
 * CPU mapping of it costs (issue 24). Needs a device bound to vfio-pci (the test VM's
 * ivshmem-plain on 7.3: tests/vm/README.md "VFIO device memory"; bench/vm-vfio.sh).
 *
 *   dmaio-bench-vfio [--device BDF] [--bar N] [--dir DIR] [--size BYTES] [--runs R]
 *                    [--threads N[,N...]] [--tests faults,io]
 *
 * faults  A fresh mapping of the BAR (--size bytes of it) touched once per 4 KiB page (a read),
 *         cold (every touch may fault) then warm (no fault): the cold pass's extra time per
 *         fault is the fault's cost. Mappings: through the device fd (mainline's fault handler,
 *         or, with the ported mmap series on, the dma-buf one behind it) and through a
 *         dma-buf of the BAR (mmap series on only), each at a 2 MiB aligned address (the
 *         handler may insert PMDs) and at one 4 KiB off it (PTEs only); with 1..N threads
 *         each touching its own slice of one fresh mapping at once. Faults counted by
 *         getrusage (minor faults of the process).
 * io      A file of --size bytes (pattern) on DIR read cold into the BAR and the BAR written to
 *         it (fdatasync), through libdmaio (auto, bounce-direct, buffered) against the O_DIRECT
 *         io_uring baseline into and out of plain memory, in the same run; the data read
 *         checked once per path through the device fd. With the mmap series, the buffer
 *         mapped uncached (the default) and write-combined (DMA_BUF_MEMATTR).
 * Medians over R runs, min and max beside them.
 */
#include <dmaio.h>

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include "baselines.h"
#include "cache.h"
#include "stats.h"
#include "util.h"
#include "../tests/vfio.h"

#define HUGE_ALIGN (2 * MIB)
#define MAX_THREADS 16

static struct test_vfio vf;
static uint64_t size = 32 * MIB;
static int runs = 5;
static unsigned threads[8] = { 1, 2, 4 };
static int nthreads = 3;
static const char *dir = "/mnt/ext4";
static bool do_faults = true, do_io = true;
static bool mmap_on; /* dma-bufs of the BAR can be mapped (the series, switched on) */

static long minflt(void)
{
	struct rusage ru;

	getrusage(RUSAGE_SELF, &ru);
	return ru.ru_minflt;
}

/* ---- faults ------------------------------------------------------------------------------- */

enum { SRC_DEVFD, SRC_DMABUF };

/* a fresh mapping of [0, size) of the BAR from src at a 2 MiB aligned address, or 4 KiB off
 * one (huge false); the reservation to unmap in *res, *res_len */
static char *map_bar(int src, int dmabuf_fd, bool huge, void **res, size_t *res_len)
{
	size_t len = size + 2 * HUGE_ALIGN;
	char *r = mmap(NULL, len, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	uintptr_t a;
	void *p;

	if (r == MAP_FAILED)
		die("reserving address space: %s", strerror(errno));
	a = ((uintptr_t)r + HUGE_ALIGN - 1) & ~(uintptr_t)(HUGE_ALIGN - 1);
	if (!huge)
		a += 4096;
	p = src == SRC_DEVFD ? mmap((void *)a, size, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_FIXED,
				    vf.device, (off_t)vf.bar_offset)
			     : mmap((void *)a, size, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_FIXED,
				    dmabuf_fd, 0);
	if (p == MAP_FAILED)
		die("mmap of the BAR through the %s: %s", src == SRC_DEVFD ? "device fd" : "dma-buf",
		    strerror(errno));
	*res = r;
	*res_len = len;
	return p;
}

struct toucher {
	pthread_t t;
	const volatile char *p;
	size_t len;
	pthread_barrier_t *go;
	uint64_t ns;
	unsigned sum;
};

static void *touch_main(void *arg)
{
	struct toucher *t = arg;
	uint64_t t0;
	unsigned s = 0;

	pthread_barrier_wait(t->go);
	t0 = now_ns();
	for (size_t i = 0; i < t->len; i += 4096)
		s += (unsigned char)t->p[i];
	t->ns = now_ns() - t0;
	t->sum = s;
	return NULL;
}

/* touch [p, p + size) with n threads, each its own slice; wall ns, thread ns summed in *busy */
static uint64_t touch(const char *p, unsigned n, uint64_t *busy)
{
	struct toucher t[MAX_THREADS];
	pthread_barrier_t go;
	size_t slice = (size / n + 4095) & ~(size_t)4095;
	uint64_t t0, wall;

	pthread_barrier_init(&go, NULL, n + 1);
	for (unsigned i = 0; i < n; i++) {
		t[i] = (struct toucher){ .p = p + i * slice, .go = &go };
		t[i].len = i * slice >= size ? 0 : (size - i * slice < slice ? size - i * slice : slice);
		if (pthread_create(&t[i].t, NULL, touch_main, &t[i]))
			die("pthread_create");
	}
	t0 = now_ns();
	pthread_barrier_wait(&go);
	*busy = 0;
	for (unsigned i = 0; i < n; i++) {
		pthread_join(t[i].t, NULL);
		*busy += t[i].ns;
	}
	wall = now_ns() - t0;
	pthread_barrier_destroy(&go);
	return wall;
}

static void bench_faults(void)
{
	uint64_t ranges[1][2] = { { 0, 0 } };
	int dfd = -1;

	ranges[0][1] = size;
	if (mmap_on) {
		dfd = test_vfio_dmabuf(&vf, (const uint64_t (*)[2])ranges, 1);
		if (dfd < 0)
			die("VFIO_DEVICE_FEATURE_DMA_BUF: %s", errname(dfd));
	}
	printf("\n## faults: %" PRIu64 " MiB of BAR %d, one read per 4 KiB page, %d runs "
	       "(median [min-max])\n", size >> 20, vf.bar, runs);
	printf("%-8s %-5s %3s %8s %22s %22s %22s\n", "mapping", "align", "thr", "faults",
	       "cold ms", "warm ms", "ns per fault");
	for (int src = SRC_DEVFD; src <= SRC_DMABUF; src++) {
		if (src == SRC_DMABUF && dfd < 0)
			continue;
		for (int huge = 1; huge >= 0; huge--) {
			for (int k = 0; k < nthreads; k++) {
				double cold[MAX_RUNS], warm[MAX_RUNS], per[MAX_RUNS], flt[MAX_RUNS];

				for (int r = 0; r < runs; r++) {
					void *res;
					size_t res_len;
					char *p = map_bar(src, dfd, huge, &res, &res_len);
					uint64_t busy_c, busy_w, wc, ww;
					long f0 = minflt(), f1;

					wc = touch(p, threads[k], &busy_c);
					f1 = minflt();
					ww = touch(p, threads[k], &busy_w);
					munmap(res, res_len);
					cold[r] = (double)wc / 1e6;
					warm[r] = (double)ww / 1e6;
					flt[r] = (double)(f1 - f0);
					/* thread time of the cold pass beyond the warm one, per fault */
					per[r] = f1 > f0 ? ((double)busy_c - (double)busy_w) / (double)(f1 - f0)
							 : 0;
				}
				printf("%-8s %-5s %3u %8.0f %8.2f [%5.2f-%5.2f] %8.2f [%5.2f-%5.2f] "
				       "%8.0f [%5.0f-%5.0f]\n", src == SRC_DEVFD ? "devfd" : "dma-buf",
				       huge ? "2M" : "4K+", threads[k], median(flt, runs),
				       median(cold, runs), vmin(cold, runs), vmax(cold, runs),
				       median(warm, runs), vmin(warm, runs), vmax(warm, runs),
				       median(per, runs), vmin(per, runs), vmax(per, runs));
				fflush(stdout);
			}
		}
	}
	if (dfd >= 0)
		close(dfd);
}

/* ---- file <-> BAR --------------------------------------------------------------------------- */

static double mbps(uint64_t bytes, uint64_t ns)
{
	return ns ? (double)bytes / ((double)ns / 1e9) / 1e6 : 0;
}

/* the O_DIRECT io_uring baseline: [0, size) of fd into (or out of) plain memory, 1 MiB requests,
 * depth 8; MB/s */
static double base_run(int dir_, int fd, char *mem, struct uring_base *u)
{
	size_t n = breq_count(0, size, MIB);
	struct breq *reqs = xcalloc(n, sizeof(*reqs));
	uint64_t t0, t;
	int err;

	n = breq_split(reqs, fd, 0, 0, size, MIB); /* breq_count() is an upper bound */
	t0 = now_ns();
	err = ub_run(u, dir_, mem, 0, reqs, n, 8, false, NULL);
	if (!err && dir_ == DIR_WRITE && fdatasync(fd))
		err = -errno;
	t = now_ns() - t0;
	free(reqs);
	if (err)
		die("O_DIRECT io_uring baseline: %s", errname(err));
	return mbps(size, t);
}

static void file_cold(int fd)
{
	uint64_t len = size;
	const char *how;

	make_cold(&fd, &len, 1, &how);
}

static const int lpaths[] = { DMAIO_PATH_AUTO, DMAIO_PATH_BOUNCE_DIRECT, DMAIO_PATH_BUFFERED };

static void bench_io(void)
{
	uint64_t ranges[1][2] = { { 0, 0 } };
	char path[512], *mem, *chk;
	struct uring_base u = { 0 };
	int fd, dfd, wc_max = mmap_on ? 1 : 0;

	ranges[0][1] = size;
	snprintf(path, sizeof(path), "%s/dmaio-bench-vfio.%d", dir, (int)getpid());
	cleanup_add(path);
	fd = open(path, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	if (fd < 0)
		die("%s: %s", path, strerror(errno));
	mem = mem_plain(size);
	chk = mem_plain(size);
	fill_pattern(mem, 0, size);
	if (full_pwrite(fd, mem, size, 0) != (ssize_t)size || fsync(fd))
		die("writing %s", path);
	close(fd);
	fd = open(path, O_RDWR | O_DIRECT | O_CLOEXEC);
	if (fd < 0)
		die("%s with O_DIRECT: %s", path, strerror(errno));
	if (ub_init(&u, 16))
		die("io_uring");
	printf("\n## file <-> BAR: %" PRIu64 " MiB on %s, cold reads, writes with fdatasync, %d runs "
	       "(MB/s median [min-max], x of the O_DIRECT io_uring baseline into plain memory of "
	       "the same run)\n", size >> 20, dir, runs);
	printf("%-5s %-6s %-14s %24s %24s %7s\n", "dir", "map", "path", "MB/s", "baseline MB/s",
	       "x");
	for (int d = DIR_READ; d <= DIR_WRITE; d++) {
		for (int wc = 0; wc <= wc_max; wc++) {
			struct dmaio_buf *buf;
			int err;

			dfd = test_vfio_dmabuf(&vf, (const uint64_t (*)[2])ranges, 1);
			if (dfd < 0)
				die("VFIO_DEVICE_FEATURE_DMA_BUF: %s", errname(dfd));
			if (wc && (err = test_vfio_memattr(&vf, dfd, true)))
				die("DMA_BUF_MEMATTR WC: %s", errname(err));
			err = dmaio_buf_import(NULL, dfd, 0, &buf);
			if (err)
				die("dmaio_buf_import: %s", errname(err));
			for (size_t k = 0; k < sizeof(lpaths) / sizeof(lpaths[0]); k++) {
				double lib[MAX_RUNS], base[MAX_RUNS], x[MAX_RUNS];
				uint32_t flags = (uint32_t)lpaths[k] |
						 (lpaths[k] ? DMAIO_RW_NO_FALLBACK : 0);
				struct dmaio_xfer xf = { .struct_size = sizeof(xf) };

				for (int r = 0; r < runs; r++) {
					uint64_t t0, t;
					int64_t got;

					/* side by side: the baseline, then the library, each cold */
					if (d == DIR_READ)
						file_cold(fd);
					base[r] = base_run(d, fd, mem, &u);
					if (d == DIR_READ)
						file_cold(fd);
					t0 = now_ns();
					got = d == DIR_READ ? dmaio_fd_read(fd, 0, buf, 0, size, flags, &xf)
							    : dmaio_fd_write(fd, 0, buf, 0, size, flags, &xf);
					if (got == (int64_t)size && d == DIR_WRITE && fdatasync(fd))
						got = -errno;
					t = now_ns() - t0;
					if (got != (int64_t)size)
						die("%s %s: %s", d == DIR_READ ? "read" : "write",
						    dmaio_path_name(lpaths[k]), errname((int)got));
					lib[r] = mbps(size, t);
					x[r] = lib[r] / base[r];
					if (r == 0 && d == DIR_READ) {
						int64_t bad;

						if (test_vfio_bar_read(&vf, chk, size, 0))
							die("reading the BAR through the device fd");
						bad = check_pattern(chk, 0, size);
						if (bad >= 0)
							die("BAR byte %" PRId64 " wrong after %s", bad,
							    dmaio_path_name(lpaths[k]));
					}
				}
				printf("%-5s %-6s %-14s %8.0f [%6.0f-%6.0f] %8.0f [%6.0f-%6.0f] %7.2f\n",
				       d == DIR_READ ? "read" : "write", wc ? "WC" : "NC",
				       lpaths[k] ? dmaio_path_name(lpaths[k]) : "auto",
				       median(lib, runs), vmin(lib, runs), vmax(lib, runs),
				       median(base, runs), vmin(base, runs), vmax(base, runs),
				       median(x, runs));
				fflush(stdout);
			}
			dmaio_buf_free(buf);
			close(dfd);
		}
	}
	ub_exit(&u);
	close(fd);
	free(mem);
	free(chk);
	unlink(path);
}

/* ---- main ---------------------------------------------------------------------------------- */

static void usage(void)
{
	fprintf(stderr, "usage: dmaio-bench-vfio [--device BDF] [--bar N] [--dir DIR] [--size BYTES] "
		"[--runs R] [--threads N[,N...]] [--tests faults,io]\n");
	exit(2);
}

int main(int argc, char **argv)
{
	const char *bdf = test_vfio_env();
	int bar = 2, err;
	char why[512];

	for (int i = 1; i < argc; i++) {
		const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;

		if (!v)
			usage();
		i++;
		if (!strcmp(a, "--device")) {
			bdf = v;
		} else if (!strcmp(a, "--bar")) {
			bar = atoi(v);
		} else if (!strcmp(a, "--dir")) {
			dir = v;
		} else if (!strcmp(a, "--size")) {
			if (parse_size(v, &size) || size % HUGE_ALIGN)
				die("--size: a multiple of 2 MiB");
		} else if (!strcmp(a, "--runs")) {
			runs = atoi(v);
			if (runs < 1 || runs > MAX_RUNS)
				die("--runs: 1 to %d", MAX_RUNS);
		} else if (!strcmp(a, "--threads")) {
			char *s = strdup(v), *tok, *save = NULL;

			nthreads = 0;
			for (tok = strtok_r(s, ",", &save); tok && nthreads < 8;
			     tok = strtok_r(NULL, ",", &save)) {
				threads[nthreads] = (unsigned)atoi(tok);
				if (threads[nthreads] < 1 || threads[nthreads] > MAX_THREADS)
					die("--threads: 1 to %d", MAX_THREADS);
				nthreads++;
			}
			free(s);
		} else if (!strcmp(a, "--tests")) {
			do_faults = strstr(v, "faults") != NULL;
			do_io = strstr(v, "io") != NULL;
		} else {
			usage();
		}
	}
	if (!bdf)
		die("no device: --device BDF, or DMAIO_TEST_VFIO (the test VM on 7.3)");
	cleanup_init(false);
	err = test_vfio_open(bdf, bar, &vf, why, sizeof(why));
	if (err)
		die("%s: %s", bdf, why);
	if (size > vf.bar_size)
		die("--size %" PRIu64 " MiB: BAR %d has %" PRIu64 " MiB", size >> 20, bar,
		    vf.bar_size >> 20);
	mmap_on = test_vfio_mmap_on();
	printf("# dmaio-bench-vfio: %s BAR %d (%" PRIu64 " MiB), %s group; VFIO dma-buf mmap %s\n",
	       vf.bdf, bar, vf.bar_size >> 20, vf.noiommu ? "no-IOMMU" : "IOMMU",
	       mmap_on ? "on (the ported series)" : "off (mainline: device fd mappings only)");
	if (do_faults)
		bench_faults();
	if (do_io && mmap_on)
		bench_io();
	else if (do_io)
		printf("\n## file <-> BAR: skipped, the BAR's dma-buf cannot be mapped here (every "
		       "path refuses: tests/test-vfio.c checks that)\n");
	test_vfio_close(&vf);
	return 0;
}
