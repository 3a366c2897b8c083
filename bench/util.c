// SPDX-License-Identifier: MIT
/* The helpers every bench program shares (util.h). */
#include "util.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

double cpu_now(void)
{
	struct rusage ru;

	getrusage(RUSAGE_SELF, &ru);
	return (double)ru.ru_utime.tv_sec + (double)ru.ru_utime.tv_usec / 1e6 + (double)ru.ru_stime.tv_sec +
	       (double)ru.ru_stime.tv_usec / 1e6;
}

long proc_status_kib(const char *key)
{
	char line[256];
	long v = -1;
	size_t kl = strlen(key);
	FILE *f = fopen("/proc/self/status", "re");

	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f))
		if (!strncmp(line, key, kl) && line[kl] == ':')
			v = strtol(line + kl + 1, NULL, 10);
	fclose(f);
	return v;
}

uint64_t mem_available(void)
{
	FILE *f = fopen("/proc/meminfo", "re");
	char line[256];
	unsigned long long kb = 0;

	if (!f)
		return 0;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "MemAvailable: %llu kB", &kb) == 1)
			break;
	fclose(f);
	return (uint64_t)kb * KIB;
}

bool interactive(int fd)
{
	const char *t;

	if (!isatty(fd))
		return false;
	t = ttyname(fd);
	return !t || (strcmp(t, "/dev/console") && strncmp(t, "/dev/ttyS", 9));
}

const char *errname(int err)
{
	if (err < 0)
		err = -err;
#if defined(__GLIBC__) && (__GLIBC__ > 2 || (__GLIBC__ == 2 && __GLIBC_MINOR__ >= 32))
	if (strerrorname_np(err))
		return strerrorname_np(err);
#endif
	return strerror(err);
}

void size_str(char *out, size_t len, uint64_t v)
{
	if (v >= GIB && v % GIB == 0)
		snprintf(out, len, "%" PRIu64 "G", v / GIB);
	else if (v >= MIB && v % MIB == 0)
		snprintf(out, len, "%" PRIu64 "M", v / MIB);
	else if (v >= KIB && v % KIB == 0)
		snprintf(out, len, "%" PRIu64 "K", v / KIB);
	else
		snprintf(out, len, "%" PRIu64, v);
}

int parse_size(const char *s, uint64_t *out)
{
	char *end;
	unsigned long long v;
	uint64_t mul = 1;

	errno = 0;
	v = strtoull(s, &end, 10);
	if (errno || end == s)
		return -EINVAL;
	switch (*end) {
	case 'k': case 'K': mul = KIB; end++; break;
	case 'm': case 'M': mul = MIB; end++; break;
	case 'g': case 'G': mul = GIB; end++; break;
	case '\0': break;
	default: return -EINVAL;
	}
	if (*end == 'i' && end[1] == 'B')
		end += 2;
	else if (*end == 'B')
		end++;
	if (*end || v == 0 || v > UINT64_MAX / mul)
		return -EINVAL;
	*out = v * mul;
	return 0;
}

void fmt_ratio(char *out, size_t len, double a, double b)
{
	if (a != a || b != b || b <= 0)
		snprintf(out, len, "-");
	else
		snprintf(out, len, "%.2f", a / b);
}

void fill_pattern(void *p, uint64_t file_off, size_t len)
{
	uint64_t *w = p;
	size_t i;

	for (i = 0; i < len / 8; i++)
		w[i] = pattern_word(file_off + i * 8);
}

int64_t check_pattern(const void *p, uint64_t file_off, size_t len)
{
	const uint64_t *w = p;
	size_t i;

	for (i = 0; i < len / 8; i++)
		if (w[i] != pattern_word(file_off + i * 8))
			return (int64_t)(file_off + i * 8);
	return -1;
}

ssize_t full_pread(int fd, void *p, size_t len, uint64_t off)
{
	size_t done = 0;

	while (done < len) {
		ssize_t r = pread(fd, (char *)p + done, len - done, (off_t)(off + done));

		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0)
			return -errno;
		if (r == 0)
			break;
		done += (size_t)r;
	}
	return (ssize_t)done;
}

ssize_t full_pwrite(int fd, const void *p, size_t len, uint64_t off)
{
	size_t done = 0;

	while (done < len) {
		ssize_t r = pwrite(fd, (const char *)p + done, len - done, (off_t)(off + done));

		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0)
			return -errno;
		done += (size_t)r;
	}
	return (ssize_t)done;
}

void *xcalloc(size_t n, size_t size)
{
	void *p = calloc(n ? n : 1, size ? size : 1);

	if (!p)
		die("out of memory");
	return p;
}

void die(const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "%s: ", program_invocation_short_name);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	exit(1);
}

const char *heap_desc(const char *heap)
{
	return heap ? heap : "the default provider";
}

int bench_alloc(struct dmaio_ctx *ctx, const char *heap, uint64_t size, uint32_t flags,
		struct dmaio_buf **buf)
{
	const char *list[2] = { heap, NULL };
	struct dmaio_alloc_opts o = { .struct_size = sizeof(o), .flags = flags,
				      .providers = heap ? list : NULL };

	return dmaio_buf_alloc(ctx, size, &o, buf, NULL);
}

int alloc_dbuf(const char *heap, size_t len, struct dmaio_buf **b, void **map)
{
	int ret = bench_alloc(NULL, heap, len, heap ? 0 : DMAIO_ALLOC_ALLOW_NON_DMABUF, b);

	if (ret < 0)
		return ret;
	*map = NULL;
	if (dmaio_buf_map(*b, map) < 0) {
		*map = NULL;
	} else {
		/* touch the mapping once, as a user would have before the transfer */
		dmaio_buf_sync_begin(*b, DMAIO_SYNC_WRITE);
		memset(*map, 0, len);
		dmaio_buf_sync_end(*b, DMAIO_SYNC_WRITE);
	}
	return 0;
}

/* ------------------------------------------------------------------------------------------- */
/* the test files' registry: the one file-scope state, as the signal handler needs it */

#define CLEANUP_MAX 8192

static struct {
	char *path[CLEANUP_MAX];
	volatile sig_atomic_t n;
	volatile sig_atomic_t keep;
} registry;

void cleanup_files(void)
{
	sig_atomic_t i, n = registry.n;

	if (registry.keep)
		return;
	for (i = 0; i < n; i++)
		if (registry.path[i])
			unlink(registry.path[i]);
}

static void on_signal(int sig)
{
	cleanup_files();
	signal(sig, SIG_DFL);
	raise(sig);
}

void cleanup_init(bool keep)
{
	struct sigaction sa = { 0 };

	registry.keep = keep;
	sa.sa_handler = on_signal;
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGHUP, &sa, NULL);
	atexit(cleanup_files);
}

void cleanup_add(const char *path)
{
	char *p;

	if (registry.n >= CLEANUP_MAX)
		die("more than %d test files", CLEANUP_MAX);
	p = strdup(path);
	if (!p)
		die("out of memory");
	registry.path[registry.n] = p;
	registry.n = registry.n + 1;
}
