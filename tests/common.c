// SPDX-License-Identifier: MIT
/*
 * Helpers shared by the libdmaio test programs. See common.h.
 */
#include <dirent.h>
#include <endian.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/dma-buf.h>
#include <linux/dma-heap.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "common.h"

/* The tests see the path choice of the fixed cost model (DMAIO_COST=fixed: the same costs on
 * every machine, nothing learned), so that which path auto takes, and the syscalls it makes, do
 * not depend on what earlier calls of the same program measured: the fault-injection runs count
 * the calls of one run and replay it, the path tests expect a path. A test of the measured model
 * sets DMAIO_COST=measured in its environment (tests/meson.build), which this keeps. */
__attribute__((constructor)) static void test_cost_fixed(void)
{
	setenv("DMAIO_COST", "fixed", 0);
}

#ifndef TMPFS_MAGIC
#define TMPFS_MAGIC 0x01021994
#endif
#ifndef RAMFS_MAGIC
#define RAMFS_MAGIC 0x858458f6
#endif

/* ------------------------------------------------------------------------------------------ */
/* Arguments */

static bool g_expect;
static const char *g_heap;	/* the test's --heap, once parsed */

static bool env_true(const char *name)
{
	const char *v = getenv(name);

	return v && *v && strcmp(v, "0") != 0;
}

static const char *const cma_names[] = { "default_cma_region", "reserved", "linux,cma",
					 "default-pool" };

bool test_expect_device(const char *kind)
{
	const char *list = getenv("DMAIO_TEST_DEVICES"), *p;
	size_t i, n;

	if (!(g_expect || env_true("DMAIO_TEST_VM") || env_true("DMAIO_TEST_EXPECT_DEVICES")))
		return false;
	if (!list)
		return true;
	/* the kinds of the list: a heap asked for by name is the kind it belongs to */
	if (!kind || strcmp(kind, "default") == 0)
		return *list != 0;	/* some provider serves the default */
	if (strcmp(kind, "memfd") == 0)
		return true;
	if (strcmp(kind, "udmabuf-huge") == 0)
		kind = "udmabuf";
	for (i = 0; i < sizeof(cma_names) / sizeof(cma_names[0]); i++)
		if (strcmp(kind, cma_names[i]) == 0)
			kind = "cma";
	n = strlen(kind);
	for (p = list; (p = strstr(p, kind)) != NULL; p += n)
		if ((p == list || p[-1] == ' ') && (p[n] == 0 || p[n] == ' '))
			return true;
	return false;
}

bool test_expect_devices(void)
{
	return test_expect_device(g_heap);
}

const char *test_cma_heap(void)
{
	char p[128];
	size_t i;

	for (i = 0; i < ARRAY_SIZE(cma_names); i++) {
		snprintf(p, sizeof(p), "/dev/dma_heap/%s", cma_names[i]);
		if (access(p, F_OK) == 0)
			return cma_names[i];
	}
	return NULL;
}

bool test_cmdline_has(const char *word)
{
	char line[4096] = "";
	int fd = open("/proc/cmdline", O_RDONLY | O_CLOEXEC);
	ssize_t n;

	if (fd < 0)
		return false;
	n = read(fd, line, sizeof(line) - 1);
	close(fd);
	if (n <= 0)
		return false;
	line[n] = 0;
	return strstr(line, word) != NULL;
}

bool test_under_valgrind(void)
{
	const char *pre = getenv("LD_PRELOAD");

	/* valgrind preloads its vgpreload_*.so into the client */
	return pre && strstr(pre, "vgpreload");
}

bool test_quick(void)
{
	const char *q = getenv("DMAIO_TEST_QUICK");

	if (q && *q && strcmp(q, "0") != 0)
		return true;
	return test_under_valgrind();
}

static void usage(const char *prog)
{
	fprintf(stderr,
		"usage: %s [--heap NAME] [--expect-devices]\n"
		"  NAME: memfd, system, cma (first existing CMA heap), udmabuf, udmabuf-huge, drm,\n"
		"        default (heap NULL), or any /dev/dma_heap entry. Env: DMAIO_TEST_HEAP.\n",
		prog);
}

void test_parse_args(int argc, char **argv, struct test_args *a, const char *default_heap)
{
	const char *env = getenv("DMAIO_TEST_HEAP");
	int i;

	memset(a, 0, sizeof(*a));
	a->heap = (env && *env) ? env : default_heap;
	for (i = 1; i < argc; i++) {
		if (strcmp(argv[i], "--heap") == 0 && i + 1 < argc) {
			a->heap = argv[++i];
		} else if (strncmp(argv[i], "--heap=", 7) == 0) {
			a->heap = argv[i] + 7;
		} else if (strcmp(argv[i], "--expect-devices") == 0) {
			a->expect_devices = true;
		} else if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0) {
			usage(argv[0]);
			exit(0);
		} else {
			usage(argv[0]);
			exit(2);
		}
	}
	a->quick = test_quick();
	g_expect = a->expect_devices;
	g_heap = a->heap;
	a->expect_devices = test_expect_devices();
	if (!a->heap || strcmp(a->heap, "default") == 0) {
		a->heap_name = NULL;
		a->heap = "default";
	} else if (strcmp(a->heap, "cma") == 0) {
		a->heap_name = test_cma_heap();
		if (!a->heap_name && a->expect_devices) {
			printf("FAIL: devices expected but no CMA heap in /dev/dma_heap\n");
			exit(1);
		}
		if (!a->heap_name) {
			printf("SKIP: no CMA heap (looked for default_cma_region, reserved, "
			       "linux,cma, default-pool in /dev/dma_heap)\n");
			exit(TEST_SKIP);
		}
		printf("# heap cma is /dev/dma_heap/%s\n", a->heap_name);
	} else {
		a->heap_name = a->heap;
	}
}

bool test_is_skip_err(int e)
{
	return e == -ENOENT || e == -ENODEV || e == -EACCES || e == -EOPNOTSUPP;
}

void test_no_device(const char *fmt, ...)
{
	bool expect = test_expect_devices();
	va_list ap;

	printf("%s: ", expect ? "FAIL: devices expected (DMAIO_TEST_VM, --expect-devices) but"
			      : "SKIP");
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	printf("\n");
	fflush(stdout);
	exit(expect ? 1 : TEST_SKIP);
}

/* ------------------------------------------------------------------------------------------ */
/* Failures counted */

static unsigned fail_count;   /* atomic */
static unsigned fail_printed; /* atomic */

void test_vfail(const char *where, const char *fmt, va_list ap)
{
	char msg[1024];
	unsigned n;

	__atomic_add_fetch(&fail_count, 1, __ATOMIC_RELAXED);
	n = __atomic_add_fetch(&fail_printed, 1, __ATOMIC_RELAXED);
	if (n > TEST_FAIL_PRINT_MAX) {
		if (n == TEST_FAIL_PRINT_MAX + 1)
			print_error("FAIL: (further failures counted, not printed)\n");
		return;
	}
	vsnprintf(msg, sizeof(msg), fmt, ap);
	print_error("FAIL: %s%s%s\n", where ? where : "", where ? ": " : "", msg);
}

void test_fail(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	test_vfail(NULL, fmt, ap);
	va_end(ap);
}

void test_fail_in(const char *where, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	test_vfail(where, fmt, ap);
	va_end(ap);
}

void test_fail_count(unsigned n)
{
	__atomic_add_fetch(&fail_count, n, __ATOMIC_RELAXED);
}

unsigned test_failures(void)
{
	return __atomic_load_n(&fail_count, __ATOMIC_RELAXED);
}

bool test_fail_printing(void)
{
	return __atomic_load_n(&fail_printed, __ATOMIC_RELAXED) <= TEST_FAIL_PRINT_MAX;
}

void test_in_child(const char *name, void (*fn)(void **state), void *state)
{
	int status = 0;
	pid_t pid;

	fflush(NULL);
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		const struct CMUnitTest t[] = {
			{ name, fn, NULL, NULL, state },
		};
		int rc = _cmocka_run_group_tests(name, t, 1, NULL, NULL);

		fflush(NULL);
		test_child_exit(rc ? 1 : 0);
	}
	assert_int_equal(waitpid(pid, &status, 0), pid);
	if (WIFSIGNALED(status))
		fail_msg("%s: the child died of signal %d", name, WTERMSIG(status));
	if (!WIFEXITED(status) || WEXITSTATUS(status))
		fail_msg("%s: the child failed (exit status %d%s)", name, WEXITSTATUS(status),
			 WEXITSTATUS(status) == 66 ? ": a sanitizer report, see above" : "");
}

/* ------------------------------------------------------------------------------------------ */
/* Small things */

double test_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

const char *test_pname(int path)
{
	const char *n = dmaio_path_name(path);

	return n ? n : "?";
}

long test_read_long(const char *path)
{
	char b[64] = "";
	long v = -1;
	FILE *f = fopen(path, "re");

	if (!f)
		return -1;
	if (fgets(b, sizeof(b), f))
		v = strtol(b, NULL, 10);
	fclose(f);
	return v;
}

/* ------------------------------------------------------------------------------------------ */
/* dma-bufs made and used without the library */

int test_heap_alloc_fd(const char *heap, size_t len)
{
	struct dma_heap_allocation_data d = { .len = len, .fd_flags = O_RDWR | O_CLOEXEC };
	char p[128];
	int hfd, rc;

	snprintf(p, sizeof(p), "/dev/dma_heap/%s", heap);
	hfd = open(p, O_RDONLY | O_CLOEXEC);
	if (hfd < 0)
		return -errno;
	rc = ioctl(hfd, DMA_HEAP_IOCTL_ALLOC, &d);
	rc = rc < 0 ? -errno : (int)d.fd;
	close(hfd);
	return rc;
}

int test_dmabuf_sync(int fd, uint64_t flags)
{
	struct dma_buf_sync s = { flags };
	int rc;

	do
		rc = ioctl(fd, DMA_BUF_IOCTL_SYNC, &s);
	while (rc < 0 && (errno == EINTR || errno == EAGAIN));
	return rc < 0 ? -errno : 0;
}

void test_fdinfo(int fd, const char *key, char *out, size_t outlen)
{
	char p[64], line[256];
	size_t kl = strlen(key);
	FILE *f;

	out[0] = 0;
	snprintf(p, sizeof(p), "/proc/self/fdinfo/%d", fd);
	f = fopen(p, "re");
	if (!f)
		return;
	while (fgets(line, sizeof(line), f)) {
		if (strncmp(line, key, kl) == 0 && line[kl] == ':') {
			char *v = line + kl + 1;

			v += strspn(v, " \t");
			v[strcspn(v, "\n")] = 0;
			snprintf(out, outlen, "%s", v);
			break;
		}
	}
	fclose(f);
}

long test_meminfo(const char *key)
{
	char line[256];
	size_t kl = strlen(key);
	long v = -1;
	FILE *f = fopen("/proc/meminfo", "re");

	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f)) {
		if (strncmp(line, key, kl) == 0 && line[kl] == ':') {
			v = strtol(line + kl + 1, NULL, 10);
			break;
		}
	}
	fclose(f);
	return v;
}

int t_probe_heaps(struct dmaio_ctx *ctx, struct t_heap_info *heaps, size_t max)
{
	int n = dmaio_ctx_heap_count(ctx);

	for (int i = 0; i < n && (size_t)i < max; i++) {
		struct dmaio_heap_info hi = { .struct_size = sizeof(hi) };
		struct dmaio_heap_proposed hp = { .struct_size = sizeof(hp) };
		struct t_heap_info *t = &heaps[i];
		int r = dmaio_ctx_get_heap(ctx, (uint32_t)i, &hi);

		if (!r)
			r = dmaio_ctx_get_heap_proposed(ctx, (uint32_t)i, &hp);
		if (r)
			return r;
		memset(t, 0, sizeof(*t));
		memcpy(t->name, hi.name, sizeof(t->name));
		t->alloc = hi.alloc;
		t->alloc_err = hi.alloc_err;
		t->mmap = hi.mmap;
		t->contiguous = hi.contiguous;
		t->uncached = hi.uncached;
		t->rw_file = hp.rw_file;
		t->rw_file_err = hp.rw_file_err;
		t->uring_dmabuf = hp.uring_dmabuf;
	}
	return n;
}

int t_probe_system(struct dmaio_ctx *ctx, struct t_sys_info *si)
{
	int r;

	memset(si, 0, sizeof(*si));
	si->sys.struct_size = sizeof(si->sys);
	si->prop.struct_size = sizeof(si->prop);
	r = dmaio_ctx_get_system(ctx, &si->sys);
	return r ? r : dmaio_ctx_get_proposed(ctx, &si->prop);
}

int t_choose_path(struct dmaio_buf *buf, uint64_t buf_off, int fd, uint64_t file_off, uint64_t len,
		  int write, uint32_t flags, char *why, size_t why_len)
{
	struct dmaio_reason r = { .struct_size = sizeof(r) };
	int rc = dmaio_fd_choose_path(fd, file_off, buf, buf_off, len,
				      write ? DMAIO_OP_WRITE : DMAIO_OP_READ, flags, &r);

	if (why && why_len)
		snprintf(why, why_len, "%s", r.text);
	return rc;
}

int t_alloc(struct dmaio_ctx *ctx, const char *heap, uint64_t size, uint32_t flags,
	    struct dmaio_buf **buf)
{
	const char *list[2] = { heap, NULL };
	struct dmaio_alloc_opts o = { .struct_size = sizeof(o), .flags = flags,
				      .providers = heap ? list : NULL };

	return dmaio_buf_alloc(ctx, size, &o, buf, NULL);
}

int test_alloc_or_skip(struct dmaio_ctx *ctx, const char *heap, size_t size, unsigned flags,
		       struct dmaio_buf **buf)
{
	int rc = t_alloc(ctx, heap, size, flags, buf);

	if (rc == 0)
		return 0;
	if (heap && strcmp(heap, "memfd") == 0)
		return rc;
	if (test_is_skip_err(rc) && test_expect_devices()) {
		printf("FAIL: devices expected (--expect-devices, DMAIO_TEST_VM) but provider %s "
		       "cannot allocate: dmaio_buf_alloc(%zu) = %s\n", heap ? heap : "(default)", size,
		       test_errname(rc));
		return rc;
	}
	if (test_is_skip_err(rc)) {
		printf("SKIP: provider %s cannot allocate here: dmaio_buf_alloc(%zu) = %s\n",
		       heap ? heap : "(default)", size, test_errname(rc));
		exit(TEST_SKIP);
	}
	if (rc == -ENOMEM && !test_expect_devices() && heap && strcmp(heap, "udmabuf-huge") == 0 &&
	    test_meminfo("HugePages_Free") <= 0) {
		printf("SKIP: udmabuf-huge: no free huge pages (HugePages_Free 0): %s\n",
		       test_errname(rc));
		exit(TEST_SKIP);
	}
	return rc;
}

const char *test_errname(long e)
{
	static __thread char bufs[4][48];
	static __thread int n;
	char *b = bufs[n++ & 3];
	const char *name = NULL;

	if (e < 0 && e > -4096)
		name = strerrorname_np((int)-e);
	if (e >= 0)
		snprintf(b, sizeof(bufs[0]), "%ld", e);
	else if (name)
		snprintf(b, sizeof(bufs[0]), "-%s", name);
	else
		snprintf(b, sizeof(bufs[0]), "-%ld", -e);
	return b;
}

int test_expected_kind(const char *heap)
{
	if (!heap)
		return -1;
	if (strcmp(heap, "memfd") == 0)
		return DMAIO_BUF_MEMFD;
	if (strcmp(heap, "udmabuf") == 0)
		return DMAIO_BUF_UDMABUF;
	if (strcmp(heap, "udmabuf-huge") == 0)
		return DMAIO_BUF_UDMABUF_HUGE;
	if (strcmp(heap, "drm") == 0)
		return DMAIO_BUF_DRM;
	return DMAIO_BUF_HEAP;
}

bool test_path_mandatory(int kind, int path)
{
	if (path == DMAIO_PATH_AUTO)
		return true;
	switch (kind) {
	case DMAIO_BUF_MEMFD:
	case DMAIO_BUF_UDMABUF:
		return path == DMAIO_PATH_UDMABUF_DIRECT || path == DMAIO_PATH_BOUNCE_DIRECT ||
		       path == DMAIO_PATH_BUFFERED || path == DMAIO_PATH_SENDFILE;
	case DMAIO_BUF_UDMABUF_HUGE:
		/* hugetlbfs takes no splice/sendfile writes: no sendfile into the buffer */
		return path == DMAIO_PATH_UDMABUF_DIRECT || path == DMAIO_PATH_BOUNCE_DIRECT ||
		       path == DMAIO_PATH_BUFFERED;
	default:
		return path == DMAIO_PATH_BOUNCE_DIRECT || path == DMAIO_PATH_BUFFERED;
	}
}

/* ------------------------------------------------------------------------------------------ */
/* Pattern */

#define PAT_K 0x9e3779b97f4a7c15ull
#define MIX1 0xbf58476d1ce4e5b9ull
#define MIX2 0x94d049bb133111ebull

static inline uint64_t fmix(uint64_t z)
{
	z = (z ^ (z >> 30)) * MIX1;
	z = (z ^ (z >> 27)) * MIX2;
	return z ^ (z >> 31);
}

static uint64_t inv_mul(uint64_t a)
{
	uint64_t x = a; /* Newton: correct to 3 bits for odd a, doubles each step */
	int i;

	for (i = 0; i < 6; i++)
		x *= 2 - a * x;
	return x;
}

static uint64_t unxorshift(uint64_t z, int s)
{
	uint64_t x = z;
	int i;

	for (i = 0; i < 64 / s + 1; i++)
		x = z ^ (x >> s);
	return x;
}

static uint64_t funmix(uint64_t z)
{
	z = unxorshift(z, 31);
	z *= inv_mul(MIX2);
	z = unxorshift(z, 27);
	z *= inv_mul(MIX1);
	return unxorshift(z, 30);
}

uint64_t pat_word(uint64_t seed, uint64_t off8)
{
	return fmix(seed * PAT_K + off8);
}

uint8_t pat_byte(uint64_t seed, uint64_t off)
{
	return (uint8_t)(pat_word(seed, off & ~7ull) >> (8 * (off & 7)));
}

int64_t pat_decode(uint64_t word, uint64_t seed, uint64_t max_off)
{
	uint64_t o = funmix(word) - seed * PAT_K;

	if (o > max_off || (o & 7))
		return -1;
	return (int64_t)o;
}

static void fill(uint8_t *d, size_t len, uint64_t seed, uint64_t off, uint8_t x)
{
	size_t i = 0;
	uint64_t w, xx = x ? ~0ull : 0;

	while (i < len && ((off + i) & 7))
		d[i] = pat_byte(seed, off + i) ^ x, i++;
	for (; i + 8 <= len; i += 8) {
		w = htole64(pat_word(seed, off + i) ^ xx);
		memcpy(d + i, &w, 8);
	}
	for (; i < len; i++)
		d[i] = pat_byte(seed, off + i) ^ x;
}

void pat_fill(void *dst, size_t len, uint64_t seed, uint64_t off)
{
	fill(dst, len, seed, off, 0);
}

void pat_fill_inv(void *dst, size_t len, uint64_t seed, uint64_t off)
{
	fill(dst, len, seed, off, 0xff);
}

static long long check(const uint8_t *p, size_t len, uint64_t seed, uint64_t off, uint8_t x)
{
	size_t i = 0, j;
	uint64_t w, e, xx = x ? ~0ull : 0;

	while (i < len && ((off + i) & 7)) {
		if (p[i] != (uint8_t)(pat_byte(seed, off + i) ^ x))
			return (long long)i;
		i++;
	}
	for (; i + 8 <= len; i += 8) {
		memcpy(&w, p + i, 8);
		e = htole64(pat_word(seed, off + i) ^ xx);
		if (w != e) {
			for (j = i; j < i + 8; j++)
				if (p[j] != (uint8_t)(pat_byte(seed, off + j) ^ x))
					return (long long)j;
		}
	}
	for (; i < len; i++)
		if (p[i] != (uint8_t)(pat_byte(seed, off + i) ^ x))
			return (long long)i;
	return -1;
}

long long pat_check(const void *p, size_t len, uint64_t seed, uint64_t off)
{
	return check(p, len, seed, off, 0);
}

long long pat_check_inv(const void *p, size_t len, uint64_t seed, uint64_t off)
{
	return check(p, len, seed, off, 0xff);
}

long long mem_check_byte(const void *p, size_t len, uint8_t byte)
{
	const uint8_t *b = p;
	uint64_t w, e;
	size_t i = 0;

	memset(&e, byte, sizeof(e));
	for (; i + 8 <= len; i += 8) {
		memcpy(&w, b + i, 8);
		if (w != e)
			break;
	}
	for (; i < len; i++)
		if (b[i] != byte)
			return (long long)i;
	return -1;
}

long long mem_first_diff(const void *a, const void *b, size_t len)
{
	const uint8_t *x = a, *y = b;
	size_t i = 0;

	/* memcmp per 4 KiB block to stay fast, then byte by byte inside the bad block */
	while (i < len) {
		size_t n = len - i < 4096 ? len - i : 4096;

		if (memcmp(x + i, y + i, n) != 0) {
			for (; n; i++, n--)
				if (x[i] != y[i])
					return (long long)i;
		}
		i += n;
	}
	return -1;
}

static const struct {
	uint64_t seed;
	const char *name;
} known_seeds[] = {
	{ SEED_GUARD, "buffer guard" },
	{ SEED_FILE, "source file" },
	{ SEED_BUF, "buffer data" },
	{ SEED_DEST, "destination prefill" },
};

void pat_report(const char *what, const void *p, size_t len, uint64_t seed, uint64_t off,
		long long bad, bool inv)
{
	const uint8_t *b = p;
	uint8_t x = inv ? 0xff : 0;
	size_t from, to, i, k;
	long long wi;
	uint64_t w;

	if (bad < 0)
		return;
	from = (size_t)bad > 8 ? (size_t)bad - 8 : 0;
	to = (size_t)bad + 8 < len ? (size_t)bad + 8 : len;
	fprintf(stderr, "MISMATCH %s: first bad byte %lld of %zu (stream offset %llu)\n", what, bad,
		len, (unsigned long long)(off + (uint64_t)bad));
	fprintf(stderr, "  expected:");
	for (i = from; i < to; i++)
		fprintf(stderr, "%s%02x", i == (size_t)bad ? " [" : " ",
			(uint8_t)(pat_byte(seed, off + i) ^ x));
	fprintf(stderr, "\n  found:   ");
	for (i = from; i < to; i++)
		fprintf(stderr, "%s%02x", i == (size_t)bad ? " [" : " ", b[i]);
	fprintf(stderr, "\n");
	/* where does the aligned word holding the bad byte come from? */
	wi = bad - (long long)((off + (uint64_t)bad) & 7);
	if (wi < 0 || (size_t)wi + 8 > len)
		return;
	memcpy(&w, b + wi, 8);
	w = le64toh(w);
	for (k = 0; k < ARRAY_SIZE(known_seeds); k++) {
		int64_t o = pat_decode(w, known_seeds[k].seed, 1ull << 40);
		int64_t oi = pat_decode(~w, known_seeds[k].seed, 1ull << 40);

		if (o >= 0)
			fprintf(stderr, "  found word = %s at offset %lld\n", known_seeds[k].name,
				(long long)o);
		if (oi >= 0)
			fprintf(stderr, "  found word = complemented %s at offset %lld\n",
				known_seeds[k].name, (long long)oi);
	}
	if (w == 0)
		fprintf(stderr, "  found word is zero\n");
}

/* ------------------------------------------------------------------------------------------ */
/* Files */

static pthread_mutex_t tmp_lock = PTHREAD_MUTEX_INITIALIZER;
static char **tmp_paths;
static pid_t *tmp_pids;   /* the process that made each one (a child inherits the list) */
static size_t tmp_n;
static bool tmp_atexit;

/* A forked child leaves with _exit(), which runs no atexit handler: the temp files it made
 * itself would stay in the test directory (31 a run of rel-hostile, whose seccomp children each
 * make a world of files). Those are removed here; the parent's stay for the parent. The lock
 * may have been held by another thread of the parent at the fork: the child, single-threaded,
 * goes on without it then. */
void test_child_exit(int code)
{
	bool locked = pthread_mutex_trylock(&tmp_lock) == 0;
	pid_t me = getpid();

	for (size_t i = 0; i < tmp_n; i++)
		if (tmp_pids[i] == me)
			unlink(tmp_paths[i]);
	if (locked)
		pthread_mutex_unlock(&tmp_lock);
	_exit(code);
}

void test_cleanup(void)
{
	size_t i;

	pthread_mutex_lock(&tmp_lock);
	for (i = 0; i < tmp_n; i++) {
		if (tmp_pids[i] == getpid()) /* a child's exit() leaves the parent's files */
			unlink(tmp_paths[i]);
		free(tmp_paths[i]);
	}
	free(tmp_paths);
	free(tmp_pids);
	tmp_paths = NULL;
	tmp_pids = NULL;
	tmp_n = 0;
	pthread_mutex_unlock(&tmp_lock);
}

static bool usable_dir(const char *d)
{
	struct stat st;

	return d && *d && stat(d, &st) == 0 && S_ISDIR(st.st_mode) && access(d, W_OK | X_OK) == 0;
}

static bool is_memfs(const char *d)
{
	struct statfs sf;

	if (statfs(d, &sf) != 0)
		return false;
	return sf.f_type == TMPFS_MAGIC || sf.f_type == RAMFS_MAGIC;
}

int test_dirs(const char **dirs, int max)
{
	static char *list[16];
	static int n = -1;
	const char *env, *tmp;
	int i;

	if (n < 0) {
		n = 0;
		env = getenv("DMAIO_TEST_DIRS");
		if (env) {
			char *copy = strdup(env), *save = NULL, *tok;

			for (tok = strtok_r(copy, " \t", &save); tok && n < 16;
			     tok = strtok_r(NULL, " \t", &save))
				if (usable_dir(tok))
					list[n++] = strdup(tok);
			free(copy);
		}
		if (n == 0) {
			tmp = getenv("TMPDIR");
			if (usable_dir(tmp) && !is_memfs(tmp))
				list[n++] = strdup(tmp);
			else if (usable_dir("/var/tmp"))
				list[n++] = strdup("/var/tmp");
			else if (usable_dir(tmp))
				list[n++] = strdup(tmp);
			else
				list[n++] = strdup(".");
		}
	}
	for (i = 0; i < n && i < max; i++)
		dirs[i] = list[i];
	return n;
}

const char *test_dir(void)
{
	const char *d[1];

	test_dirs(d, 1);
	return d[0];
}

int test_tmpfile(const char *dir, char *path, size_t path_len)
{
	char p[PATH_MAX];
	char **np;
	pid_t *pp;
	int fd;

	if (!dir)
		dir = test_dir();
	snprintf(p, sizeof(p), "%s/dmaio-test-XXXXXX", dir);
	fd = mkostemp(p, O_CLOEXEC);
	if (fd < 0) {
		fprintf(stderr, "cannot create a temp file in %s: %s\n", dir, strerror(errno));
		exit(1);
	}
	pthread_mutex_lock(&tmp_lock);
	np = realloc(tmp_paths, (tmp_n + 1) * sizeof(*np));
	if (np)
		tmp_paths = np;
	pp = realloc(tmp_pids, (tmp_n + 1) * sizeof(*pp));
	if (pp)
		tmp_pids = pp;
	if (np && pp) {
		tmp_pids[tmp_n] = getpid();
		tmp_paths[tmp_n++] = strdup(p);
	}
	if (!tmp_atexit) {
		tmp_atexit = true;
		atexit(test_cleanup);
	}
	pthread_mutex_unlock(&tmp_lock);
	if (path)
		snprintf(path, path_len, "%s", p);
	return fd;
}

ssize_t pread_full(int fd, void *p, size_t len, off_t off)
{
	size_t done = 0;
	ssize_t r;

	while (done < len) {
		r = pread(fd, (char *)p + done, len - done, off + (off_t)done);
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

ssize_t pwrite_full(int fd, const void *p, size_t len, off_t off)
{
	size_t done = 0;
	ssize_t r;

	while (done < len) {
		r = pwrite(fd, (const char *)p + done, len - done, off + (off_t)done);
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0)
			return -errno;
		done += (size_t)r;
	}
	return (ssize_t)done;
}

#define CHUNK (1 * MiB)

/* One scratch chunk per thread, kept: no malloc/page faults per file check */
static __thread uint8_t *scratch;

static void scratch_free(void *p)
{
	free(p);
}

static pthread_key_t scratch_key;
static pthread_once_t scratch_once = PTHREAD_ONCE_INIT;

static void scratch_key_init(void)
{
	pthread_key_create(&scratch_key, scratch_free);
}

static uint8_t *get_scratch(void)
{
	if (!scratch) {
		pthread_once(&scratch_once, scratch_key_init);
		scratch = malloc(CHUNK);
		if (scratch)
			pthread_setspecific(scratch_key, scratch);
	}
	return scratch;
}

static int file_fill(int fd, off_t off, size_t len, uint64_t seed, uint64_t pat_off, bool inv)
{
	uint8_t *b = get_scratch();
	size_t done = 0, n;
	ssize_t r;

	if (!b)
		return -ENOMEM;
	while (done < len) {
		n = len - done < CHUNK ? len - done : CHUNK;
		if (inv)
			pat_fill_inv(b, n, seed, pat_off + done);
		else
			pat_fill(b, n, seed, pat_off + done);
		r = pwrite_full(fd, b, n, off + (off_t)done);
		if (r < 0)
			return (int)r;
		done += n;
	}
	return 0;
}

int file_fill_pattern(int fd, off_t off, size_t len, uint64_t seed)
{
	return file_fill(fd, off, len, seed, (uint64_t)off, false);
}

int file_fill_stream(int fd, off_t off, size_t len, uint64_t seed, uint64_t pat_off, bool inv)
{
	return file_fill(fd, off, len, seed, pat_off, inv);
}

/* mode: 0 pattern, 1 complemented pattern, 2 zero */
static long long file_check(int fd, off_t off, size_t len, uint64_t seed, uint64_t pat_off,
			    int mode)
{
	uint8_t *b = get_scratch();
	size_t done = 0, n;
	long long bad;
	ssize_t r;

	if (!b)
		return -2;
	while (done < len) {
		n = len - done < CHUNK ? len - done : CHUNK;
		r = pread_full(fd, b, n, off + (off_t)done);
		if (r != (ssize_t)n) {
			fprintf(stderr, "file check: pread(%zu at %lld) = %zd\n", n,
				(long long)(off + (off_t)done), r);
			return -2;
		}
		if (mode == 2)
			bad = mem_check_byte(b, n, 0);
		else if (mode == 1)
			bad = pat_check_inv(b, n, seed, pat_off + done);
		else
			bad = pat_check(b, n, seed, pat_off + done);
		if (bad >= 0) {
			if (mode != 2)
				pat_report("file", b, n, seed, pat_off + done, bad, mode == 1);
			else
				fprintf(stderr, "file: byte at %lld is 0x%02x, expected 0\n",
					(long long)off + (long long)done + bad, b[bad]);
			return (long long)off + (long long)done + bad;
		}
		done += n;
	}
	return -1;
}

long long file_check_pattern(int fd, off_t off, size_t len, uint64_t seed, uint64_t pat_off)
{
	return file_check(fd, off, len, seed, pat_off, 0);
}

long long file_check_pattern_inv(int fd, off_t off, size_t len, uint64_t seed, uint64_t pat_off)
{
	return file_check(fd, off, len, seed, pat_off, 1);
}

long long file_check_zero(int fd, off_t off, size_t len)
{
	return file_check(fd, off, len, 0, 0, 2);
}

int test_can_odirect(const char *path)
{
	int fd = open(path, O_RDONLY | O_DIRECT | O_CLOEXEC);

	if (fd < 0)
		return 0;
	close(fd);
	return 1;
}

/* ------------------------------------------------------------------------------------------ */
/* File descriptors */

static int for_each_fd(void (*cb)(int fd, void *arg), void *arg)
{
	DIR *d = opendir("/proc/self/fd");
	struct dirent *de;
	int n = 0, self;

	if (!d)
		return -1;
	self = dirfd(d);
	while ((de = readdir(d))) {
		char *end;
		long fd;

		if (de->d_name[0] == '.')
			continue;
		fd = strtol(de->d_name, &end, 10);
		if (*end || fd == self)
			continue;
		n++;
		if (cb)
			cb((int)fd, arg);
	}
	closedir(d);
	return n;
}

int test_count_fds(void)
{
	return for_each_fd(NULL, NULL);
}

struct snap {
	uint8_t *set;
	int max;
};

static void snap_cb(int fd, void *arg)
{
	struct snap *s = arg;

	if (fd < s->max)
		s->set[fd / 8] |= (uint8_t)(1u << (fd % 8));
}

void test_fd_snapshot(uint8_t *set, int max)
{
	struct snap s = { set, max };

	memset(set, 0, (size_t)(max + 7) / 8);
	for_each_fd(snap_cb, &s);
}

int test_check_new_fds_cloexec(const uint8_t *before, int max, const char *what, int *nnew)
{
	uint8_t *now = calloc(1, (size_t)(max + 7) / 8);
	int fd, bad = 0, n = 0, fl;
	char link[64], target[256];
	ssize_t l;

	if (!now)
		return 1;
	test_fd_snapshot(now, max);
	for (fd = 0; fd < max; fd++) {
		bool was = before[fd / 8] & (1u << (fd % 8));
		bool is = now[fd / 8] & (1u << (fd % 8));

		if (!is || was)
			continue;
		n++;
		fl = fcntl(fd, F_GETFD);
		if (fl >= 0 && (fl & FD_CLOEXEC))
			continue;
		snprintf(link, sizeof(link), "/proc/self/fd/%d", fd);
		l = readlink(link, target, sizeof(target) - 1);
		target[l > 0 ? l : 0] = 0;
		fprintf(stderr, "%s: fd %d (%s) is not close-on-exec (F_GETFD = %d)\n", what, fd,
			target, fl);
		bad++;
	}
	free(now);
	if (nnew)
		*nnew = n;
	return bad;
}
