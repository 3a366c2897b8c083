// SPDX-License-Identifier: MIT
/*
 * dmaio-bench-account: what a snapshot of the system's dma-bufs costs (libdmaio-account), by
 * source, with 1k/10k/100k live buffers held by several processes; and whether snapshots taken
 * back to back slow down a process that allocates and frees buffers meanwhile.
 *
 *   dmaio-bench-account [--buffers N[,N...]] [--procs P] [--runs R] [--heap NAME]
 *                       [--size BYTES] [--alloc-seconds S] [--json]
 *
 * Each count: P child processes (more where each would hold over 4000) hold N buffers between them (named, 4 KiB each by default);
 * for each source (proc, proc without maps, bpf where it works: a program loaded per snapshot,
 * and bpf-reader: one reader, the program loaded once, as dmaio-top -d does) R snapshots, the median and
 * min/max of wall time and of CPU time (user + system of this process) per snapshot, and the
 * buffers seen (must be >= N). Then a child allocates and frees one buffer at a time for S
 * seconds alone, and again while this process takes snapshots without pause (per source): the
 * allocation rates side by side. Needs a dma-buf heap (VM: tests/vm/run).
 */
#include <dmaio-account.h>

#include <errno.h>
#include <fcntl.h>
#include <linux/dma-buf.h>
#include <linux/dma-heap.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define MAXRUNS 64

static const char *heap = "system";
static uint64_t bufsize = 4096;

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static double cpu(void)
{
	struct rusage ru;

	getrusage(RUSAGE_SELF, &ru);
	return (double)ru.ru_utime.tv_sec + (double)ru.ru_utime.tv_usec / 1e6 +
	       (double)ru.ru_stime.tv_sec + (double)ru.ru_stime.tv_usec / 1e6;
}

static int alloc_buf(int hfd)
{
	struct dma_heap_allocation_data d = { .len = bufsize, .fd_flags = O_RDWR | O_CLOEXEC };

	if (ioctl(hfd, DMA_HEAP_IOCTL_ALLOC, &d))
		return -errno;
	ioctl((int)d.fd, DMA_BUF_SET_NAME_B, "bench-acct");
	return (int)d.fd;
}

static int open_heap(void)
{
	char p[128];

	snprintf(p, sizeof(p), "/dev/dma_heap/%s", heap);
	return open(p, O_RDONLY | O_CLOEXEC);
}

/* a child holding n buffers until killed; reports readiness through the pipe */
static pid_t holder(unsigned n, int ready)
{
	pid_t pid = fork();

	if (pid)
		return pid;
	struct rlimit rl;
	int hfd = open_heap();
	char c = 1;

	getrlimit(RLIMIT_NOFILE, &rl);
	rl.rlim_cur = rl.rlim_max;
	setrlimit(RLIMIT_NOFILE, &rl);
	for (unsigned i = 0; i < n; i++)
		if (alloc_buf(hfd) < 0) {
			fprintf(stderr, "holder: buffer %u of %u: %s\n", i, n, strerror(errno));
			c = 0;
			break;
		}
	if (write(ready, &c, 1) != 1)
		_exit(1);
	for (;;)
		pause();
}

/* a child allocating and freeing one buffer at a time: writes its count after @secs */
static pid_t allocator(double secs, int out)
{
	pid_t pid = fork();

	if (pid)
		return pid;
	int hfd = open_heap();
	uint64_t n = 0;
	double end = now() + secs;

	while (now() < end) {
		int fd = alloc_buf(hfd);

		if (fd < 0)
			_exit(1);
		close(fd);
		n++;
	}
	if (write(out, &n, sizeof(n)) != sizeof(n))
		_exit(1);
	_exit(0);
}

static int cmpd(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

static double median(double *v, int n)
{
	qsort(v, (size_t)n, sizeof(*v), cmpd);
	return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

struct source {
	const char *name;
	uint32_t source, flags;
	bool reader;   /* snapshots through one reader (the BPF program loaded once, as dmaio-top -d) */
};

static const struct source sources[] = {
	{ "proc", DMAIO_SNAPSHOT_PROC, 0, false },
	{ "proc-no-maps", DMAIO_SNAPSHOT_PROC, DMAIO_SNAPSHOT_NO_MAPS, false },
	{ "bpf", DMAIO_SNAPSHOT_BPF, 0, false },
	{ "bpf-reader", DMAIO_SNAPSHOT_BPF, 0, true },
};

/* the reader of a source with .reader, made at its first snapshot, kept to the end */
static struct dmaio_snapshot_reader *readers[sizeof(sources) / sizeof(sources[0])];

static int snap(const struct source *s, uint32_t *nbufs, char *why_out, size_t why_len)
{
	struct dmaio_snapshot_opts o = { .struct_size = sizeof(o), .source = s->source,
					 .flags = s->flags };
	struct dmaio_reason why = { .struct_size = sizeof(why) };
	struct dmaio_snapshot_info in = { .struct_size = sizeof(in) };
	struct dmaio_snapshot_reader **rd = &readers[s - sources];
	struct dmaio_snapshot *sn;
	int r;

	if (s->reader) {
		r = *rd ? 0 : dmaio_snapshot_reader_new(&o, rd, &why);
		if (!r)
			r = dmaio_snapshot_reader_take(*rd, &sn, &why);
	} else {
		r = dmaio_snapshot_new(&o, &sn, &why);
	}

	if (r) {
		snprintf(why_out, why_len, "%s", why.text);
		return r;
	}
	dmaio_snapshot_get_info(sn, &in);
	*nbufs = in.nbuffers;
	dmaio_snapshot_free(sn);
	return 0;
}

/* allocation rate of a child for @secs, with snapshots of @s running meanwhile (or not) */
static double alloc_rate(double secs, const struct source *s, unsigned *snaps)
{
	int p[2];
	uint64_t n = 0;
	pid_t pid;
	int st;
	double t0 = now();

	if (pipe2(p, O_CLOEXEC))
		return -1;
	pid = allocator(secs, p[1]);
	*snaps = 0;
	if (s) {
		char why[256];
		uint32_t nb;

		while (now() - t0 < secs && !snap(s, &nb, why, sizeof(why)))
			(*snaps)++;
	}
	if (read(p[0], &n, sizeof(n)) != sizeof(n))
		n = 0;
	waitpid(pid, &st, 0);
	close(p[0]);
	close(p[1]);
	return (double)n / secs;
}

int main(int argc, char **argv)
{
	unsigned counts[8] = { 1000, 10000, 100000 }, ncounts = 3, procs = 4, runs = 5;
	double alloc_secs = 5;
	bool json = false;

	for (int i = 1; i < argc; i++) {
		const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;

		if (!strcmp(a, "--json")) {
			json = true;
			continue;
		}
		if (!v) {
			fprintf(stderr, "usage: see the comment of bench/dmaio-bench-account.c\n");
			return 2;
		}
		i++;
		if (!strcmp(a, "--buffers")) {
			char *save = NULL, *t, *dup = strdup(v);

			ncounts = 0;
			for (t = strtok_r(dup, ",", &save); t && ncounts < 8; t = strtok_r(NULL, ",", &save))
				counts[ncounts++] = (unsigned)strtoul(t, NULL, 10);
			free(dup);
		} else if (!strcmp(a, "--procs")) {
			procs = (unsigned)strtoul(v, NULL, 10);
		} else if (!strcmp(a, "--runs")) {
			runs = (unsigned)strtoul(v, NULL, 10);
		} else if (!strcmp(a, "--heap")) {
			heap = v;
		} else if (!strcmp(a, "--size")) {
			bufsize = strtoull(v, NULL, 0);
		} else if (!strcmp(a, "--alloc-seconds")) {
			alloc_secs = strtod(v, NULL);
		} else {
			fprintf(stderr, "dmaio-bench-account: unknown option %s\n", a);
			return 2;
		}
	}
	if (!procs || !runs || runs > MAXRUNS || !ncounts || alloc_secs <= 0) {
		fprintf(stderr, "dmaio-bench-account: bad arguments\n");
		return 2;
	}
	int hfd = open_heap();

	if (hfd < 0) {
		fprintf(stderr, "SKIP: /dev/dma_heap/%s: %s\n", heap, strerror(errno));
		return 77;
	}
	close(hfd);
	if (json)
		printf("{\"heap\": \"%s\", \"size\": %llu, \"procs\": %u, \"runs\": %u, \"snapshots\": [",
		       heap, (unsigned long long)bufsize, procs, runs);
	else
		printf("# dmaio-bench-account: heap %s, %llu B buffers held by %u processes, %u runs "
		       "per cell; times per snapshot (median [min, max])\n", heap,
		       (unsigned long long)bufsize, procs, runs);
	bool first = true;

	for (unsigned c = 0; c < ncounts; c++) {
		pid_t kids[64];
		int ready[2];
		double t_alloc = now();
		/* a process holds at most 4000 (the VM's descriptor limit is 4096): more holders for
		 * more buffers */
		unsigned procs_c = counts[c] / 4000 + 1 > procs ? counts[c] / 4000 + 1 : procs;

		if (procs_c > 64 || pipe2(ready, O_CLOEXEC))
			return 1;
		for (unsigned k = 0; k < procs_c; k++)
			kids[k] = holder(counts[c] / procs_c + (k < counts[c] % procs_c), ready[1]);
		for (unsigned k = 0; k < procs_c; k++) {
			char ok = 0;

			if (read(ready[0], &ok, 1) != 1 || !ok) {
				fprintf(stderr, "dmaio-bench-account: holders could not allocate %u buffers\n",
					counts[c]);
				for (unsigned j = 0; j < procs_c; j++)
					kill(kids[j], SIGKILL);
				return 1;
			}
		}
		t_alloc = now() - t_alloc;
		for (unsigned s = 0; s < sizeof(sources) / sizeof(sources[0]); s++) {
			double wall[MAXRUNS], cp[MAXRUNS];
			uint32_t nb = 0;
			char why[256] = "";
			int r = 0;
			unsigned k;

			for (k = 0; k < runs; k++) {
				double w0 = now(), c0 = cpu();

				r = snap(&sources[s], &nb, why, sizeof(why));
				if (r)
					break;
				wall[k] = now() - w0;
				cp[k] = cpu() - c0;
			}
			if (json)
				printf("%s\n  {\"buffers\": %u, \"source\": \"%s\", ", first ? "" : ",",
				       counts[c], sources[s].name);
			first = false;
			if (r) {
				if (json)
					printf("\"error\": %d, \"reason\": \"%s\"}", r, why);
				else
					printf("%7u buffers  %-13s unavailable: %s\n", counts[c],
					       sources[s].name, why);
				continue;
			}
			double wmin = wall[0], wmax = wall[0];

			for (unsigned j = 1; j < runs; j++) {
				wmin = wall[j] < wmin ? wall[j] : wmin;
				wmax = wall[j] > wmax ? wall[j] : wmax;
			}
			double wmed = median(wall, (int)runs), cmed = median(cp, (int)runs);

			if (json)
				printf("\"seen\": %u, \"wall_ms\": %.3f, \"wall_min_ms\": %.3f, "
				       "\"wall_max_ms\": %.3f, \"cpu_ms\": %.3f}", nb, wmed * 1e3,
				       wmin * 1e3, wmax * 1e3, cmed * 1e3);
			else
				printf("%7u buffers  %-13s %9.2f ms [%.2f, %.2f]  cpu %9.2f ms  "
				       "(%.2f us/buffer)  seen %u%s\n", counts[c], sources[s].name,
				       wmed * 1e3, wmin * 1e3, wmax * 1e3, cmed * 1e3,
				       wmed * 1e6 / counts[c], nb, nb < counts[c] ? "  MISSING" : "");
		}
		if (!json)
			printf("%7u buffers  (allocated by %u holders in %.1f s)\n", counts[c], procs_c,
			       t_alloc);
		for (unsigned k = 0; k < procs_c; k++) {
			kill(kids[k], SIGKILL);
			waitpid(kids[k], NULL, 0);
		}
		close(ready[0]);
		close(ready[1]);
	}
	/* the allocation rate of another process, alone and under back-to-back snapshots */
	unsigned ns = 0;
	double base = alloc_rate(alloc_secs, NULL, &ns);

	if (json)
		printf("\n], \"alloc\": {\"alone_per_s\": %.1f", base);
	else
		printf("# allocation rate of another process (%llu B buffers, alloc + close), %.0f s "
		       "each\nalone                 %10.1f /s\n", (unsigned long long)bufsize,
		       alloc_secs, base);
	for (unsigned s = 0; s < sizeof(sources) / sizeof(sources[0]); s++) {
		double r = alloc_rate(alloc_secs, &sources[s], &ns);

		if (json)
			printf(", \"%s_per_s\": %.1f, \"%s_snapshots\": %u", sources[s].name, r,
			       sources[s].name, ns);
		else
			printf("with %-13s    %10.1f /s  (%.2f of alone; %u snapshots meanwhile)\n",
			       sources[s].name, r, base > 0 ? r / base : 0, ns);
	}
	if (json)
		printf("}}\n");
	for (unsigned s = 0; s < sizeof(sources) / sizeof(sources[0]); s++)
		dmaio_snapshot_reader_free(readers[s]);
	return 0;
}
