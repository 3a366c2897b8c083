// SPDX-License-Identifier: MIT
/*
 * test-heap: one dma-heap, like the kernel's dmabuf-heap selftest but through libdmaio:
 * alloc + map + sync + CPU access, zeroed on (re)allocation, concurrent allocations from
 * several threads, and dmaio_import() of a dma-buf made outside the library (dup semantics).
 *
 * Usage: test-heap --heap NAME   (system, cma = first existing CMA heap, or any heap name)
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/dma-buf.h>
#include <linux/dma-heap.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "common.h"

static struct test_args args;
static struct dmaio_ctx *ctx;

/* The "exp_name:" of a dma-buf fd in /proc/self/fdinfo, "" when it is not a dma-buf. */
static void fdinfo_field(int fd, const char *key, char *out, size_t outlen)
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

static int own_sync(int fd, uint64_t flags)
{
	struct dma_buf_sync s = { flags };
	int rc;

	do
		rc = ioctl(fd, DMA_BUF_IOCTL_SYNC, &s);
	while (rc < 0 && (errno == EINTR || errno == EAGAIN));
	return rc < 0 ? -errno : 0;
}

static int own_heap_alloc(size_t len)
{
	struct dma_heap_allocation_data d = { .len = len, .fd_flags = O_RDWR | O_CLOEXEC };
	char p[128];
	int hfd, rc;

	snprintf(p, sizeof(p), "/dev/dma_heap/%s", args.heap_name);
	hfd = open(p, O_RDONLY | O_CLOEXEC);
	if (hfd < 0)
		return -errno;
	rc = ioctl(hfd, DMA_HEAP_IOCTL_ALLOC, &d);
	rc = rc < 0 ? -errno : (int)d.fd;
	close(hfd);
	return rc;
}

static size_t page_round(size_t n)
{
	size_t ps = (size_t)sysconf(_SC_PAGESIZE);

	return (n + ps - 1) / ps * ps;
}

/* ------------------------------------------------------------------------------------------ */

static void test_alloc_map(void **state)
{
	const size_t sizes[] = { 1, 4095, 4096, 4097, 65536 + 3, MiB + 1 };
	size_t i;

	(void)state;
	for (i = 0; i < ARRAY_SIZE(sizes); i++) {
		struct dmaio_buf *b = NULL;
		size_t sz = sizes[i], maplen = page_round(sz);
		char exp_name[64], fsize[32];
		uint8_t *m = NULL, *m2 = NULL, *own;
		int rc, fd, fl;

		rc = dmaio_alloc(ctx, args.heap_name, sz, 0, &b);
		CHECK(rc == 0, "dmaio_alloc(%s, %zu) = %s", args.heap, sz, test_errname(rc));
		CHECK(dmaio_buf_kind(b) == DMAIO_BUF_HEAP, "kind %d", dmaio_buf_kind(b));
		CHECK(strcmp(dmaio_buf_provider(b), args.heap_name) == 0, "provider %s, heap %s",
		      dmaio_buf_provider(b), args.heap_name);
		CHECK(dmaio_buf_size(b) == sz, "dmaio_buf_size %zu, asked %zu", dmaio_buf_size(b),
		      sz);
		fd = dmaio_buf_fd(b);
		CHECK(fd >= 0, "dmaio_buf_fd = %d", fd);
		fl = fcntl(fd, F_GETFD);
		CHECK(fl >= 0 && (fl & FD_CLOEXEC), "buffer fd not close-on-exec");
		fdinfo_field(fd, "exp_name", exp_name, sizeof(exp_name));
		CHECK(exp_name[0], "fd %d is not a dma-buf (no exp_name in fdinfo)", fd);
		fdinfo_field(fd, "size", fsize, sizeof(fsize));
		CHECK(strtoull(fsize, NULL, 10) == maplen, "dma-buf size %s, expected %zu", fsize,
		      maplen);
		CHECK(dmaio_unmap(b) == -ENOENT, "unmap before map");

		CHECK(dmaio_map(b, (void **)&m) == 0 && m, "dmaio_map");
		CHECK(dmaio_map(b, (void **)&m2) == 0 && m2 == m, "second map: other address");
		CHECK(dmaio_sync_begin(b, DMAIO_SYNC_WRITE) == 0, "sync_begin(WRITE)");
		pat_fill(m, sz, SEED_BUF, 0);
		CHECK(dmaio_sync_end(b, DMAIO_SYNC_WRITE) == 0, "sync_end(WRITE)");
		CHECK(dmaio_unmap(b) == 0, "unmap");
		CHECK(dmaio_unmap(b) == -ENOENT, "second unmap");
		m = NULL;
		CHECK(dmaio_map(b, (void **)&m) == 0 && m, "map again");
		CHECK(dmaio_sync_begin(b, DMAIO_SYNC_READ) == 0, "sync_begin(READ)");
		CHECK(pat_check(m, sz, SEED_BUF, 0) == -1, "data lost across unmap/map (size %zu)",
		      sz);
		CHECK(dmaio_sync_end(b, DMAIO_SYNC_READ) == 0, "sync_end(READ)");

		/* an independent mapping of the dma-buf sees the same bytes */
		own = mmap(NULL, maplen, PROT_READ, MAP_SHARED, fd, 0);
		CHECK(own != MAP_FAILED, "own mmap of the dma-buf: %s", strerror(errno));
		CHECK(own_sync(fd, DMA_BUF_SYNC_START | DMA_BUF_SYNC_READ) == 0, "own sync");
		CHECK(pat_check(own, sz, SEED_BUF, 0) == -1, "own mapping differs (size %zu)", sz);
		CHECK(own_sync(fd, DMA_BUF_SYNC_END | DMA_BUF_SYNC_READ) == 0, "own sync end");
		munmap(own, maplen);

		/* RW both ways */
		CHECK(dmaio_sync_begin(b, DMAIO_SYNC_RW) == 0, "sync_begin(RW)");
		m[sz - 1] ^= 0xff;
		CHECK(dmaio_sync_end(b, DMAIO_SYNC_RW) == 0, "sync_end(RW)");
		CHECK(dmaio_sync_begin(b, 0) == -EINVAL && dmaio_sync_end(b, 8) == -EINVAL,
		      "bad sync directions accepted");
		dmaio_free(b); /* still mapped: free unmaps */
		CHECK(fcntl(fd, F_GETFD) < 0, "dmaio_free left the buffer fd %d open", fd);
	}
}

static void test_zeroed(void **state)
{
	const size_t sizes[] = { 4096, 256 * KiB + 1, 4 * MiB };
	unsigned round;
	size_t i;

	(void)state;
	for (i = 0; i < ARRAY_SIZE(sizes); i++) {
		for (round = 0; round < 4; round++) {
			struct dmaio_buf *b = NULL;
			uint8_t *m = NULL;
			long long e;
			int rc;

			rc = dmaio_alloc(ctx, args.heap_name, sizes[i], 0, &b);
			if (rc == -ENOMEM && sizes[i] > MiB) {
				printf("# zeroed: %zu bytes: -ENOMEM, size skipped\n", sizes[i]);
				break;
			}
			CHECK(rc == 0, "dmaio_alloc(%zu) = %s", sizes[i], test_errname(rc));
			CHECK(dmaio_map(b, (void **)&m) == 0, "map");
			CHECK(dmaio_sync_begin(b, DMAIO_SYNC_RW) == 0, "sync");
			/* the whole mapping, page rounding included */
			e = mem_check_byte(m, page_round(sizes[i]), 0);
			CHECK(e < 0, "round %u, size %zu: byte %lld of a new buffer is %#x, not 0",
			      round, sizes[i], e, e >= 0 ? m[e] : 0);
			memset(m, 0xff, page_round(sizes[i]));
			CHECK(dmaio_sync_end(b, DMAIO_SYNC_RW) == 0, "sync end");
			dmaio_free(b);
		}
	}
}

/* ------------------------------------------------------------------------------------------ */

#define NTHREADS 4

struct thr {
	pthread_t tid;
	struct dmaio_ctx *c;
	unsigned id, iters, errors, done;
	char msg[200];
};

static void *thread_main(void *arg)
{
	struct thr *t = arg;
	unsigned i, seed = t->id * 7919 + 1;

	for (i = 0; i < t->iters; i++) {
		struct dmaio_buf *b = NULL;
		uint8_t *m = NULL;
		size_t sz;
		int rc;

		seed = seed * 1103515245 + 12345;
		sz = 1 + (seed >> 8) % (256 * KiB);
		rc = dmaio_alloc(t->c, args.heap_name, sz, 0, &b);
		if (rc) {
			if (!t->errors++)
				snprintf(t->msg, sizeof(t->msg), "alloc(%zu) = %s", sz,
					 test_errname(rc));
			continue;
		}
		rc = dmaio_map(b, (void **)&m);
		if (rc || dmaio_sync_begin(b, DMAIO_SYNC_RW)) {
			if (!t->errors++)
				snprintf(t->msg, sizeof(t->msg), "map/sync = %s", test_errname(rc));
			dmaio_free(b);
			continue;
		}
		if (mem_check_byte(m, sz, 0) >= 0 && !t->errors++)
			snprintf(t->msg, sizeof(t->msg), "new buffer of %zu not zeroed", sz);
		pat_fill(m, sz, SEED_BUF + t->id, i);
		if (pat_check(m, sz, SEED_BUF + t->id, i) >= 0 && !t->errors++)
			snprintf(t->msg, sizeof(t->msg), "pattern lost in buffer of %zu", sz);
		dmaio_sync_end(b, DMAIO_SYNC_RW);
		dmaio_free(b);
		t->done++;
	}
	return NULL;
}

static void test_concurrent(void **state)
{
	struct thr t[NTHREADS];
	unsigned i, errors = 0, done = 0;
	int fds0 = test_count_fds();

	(void)state;
	for (i = 0; i < NTHREADS; i++) {
		memset(&t[i], 0, sizeof(t[i]));
		t[i].id = i;
		t[i].iters = args.quick ? 8 : 64;
		/* half the threads on the shared context, half on the default one */
		t[i].c = i & 1 ? NULL : ctx;
		assert_int_equal(pthread_create(&t[i].tid, NULL, thread_main, &t[i]), 0);
	}
	for (i = 0; i < NTHREADS; i++) {
		pthread_join(t[i].tid, NULL);
		if (t[i].errors)
			fprintf(stderr, "thread %u: %u errors, first: %s\n", i, t[i].errors,
				t[i].msg);
		errors += t[i].errors;
		done += t[i].done;
	}
	printf("# concurrent: %u threads, %u allocations, %u errors\n", NTHREADS, done, errors);
	CHECK(errors == 0, "%u errors in concurrent allocations", errors);
	CHECK(done == NTHREADS * t[0].iters, "only %u allocations done", done);
	/* the default context may keep a cached heap fd, nothing else */
	CHECK(test_count_fds() <= fds0 + 2, "fds %d -> %d after the threads", fds0,
	      test_count_fds());
}

/* ------------------------------------------------------------------------------------------ */

static void test_import(void **state)
{
	const size_t sz = 64 * KiB;
	struct dmaio_buf *b = NULL, *b2 = NULL, *orig = NULL;
	char path[PATH_MAX];
	uint8_t *own, *m = NULL;
	struct stat st;
	int fd, ffd, rc, fl;
	ssize_t r;

	(void)state;
	fd = own_heap_alloc(sz);
	CHECK(fd >= 0, "own allocation from %s: %s", args.heap_name, test_errname(fd));
	own = mmap(NULL, sz, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	CHECK(own != MAP_FAILED, "own mmap: %s", strerror(errno));
	own_sync(fd, DMA_BUF_SYNC_START | DMA_BUF_SYNC_WRITE);
	pat_fill(own, sz, SEED_BUF, 0);
	own_sync(fd, DMA_BUF_SYNC_END | DMA_BUF_SYNC_WRITE);

	rc = dmaio_import(ctx, fd, 0, &b);
	CHECK(rc == 0, "dmaio_import = %s", test_errname(rc));
	CHECK(dmaio_buf_kind(b) == DMAIO_BUF_IMPORTED, "kind %d", dmaio_buf_kind(b));
	CHECK(strcmp(dmaio_buf_provider(b), "import") == 0, "provider %s", dmaio_buf_provider(b));
	CHECK(dmaio_buf_size(b) == sz, "size %zu", dmaio_buf_size(b));
	CHECK(dmaio_buf_fd(b) >= 0 && dmaio_buf_fd(b) != fd, "the fd was not duplicated");
	fl = fcntl(dmaio_buf_fd(b), F_GETFD);
	CHECK(fl >= 0 && (fl & FD_CLOEXEC), "imported fd not close-on-exec");
	CHECK(dmaio_map(b, (void **)&m) == 0, "map imported");
	dmaio_sync_begin(b, DMAIO_SYNC_READ);
	CHECK(pat_check(m, sz, SEED_BUF, 0) == -1, "imported buffer does not show the data");
	dmaio_sync_end(b, DMAIO_SYNC_READ);

	/* file -> imported buffer, visible through our own mapping */
	ffd = test_tmpfile(NULL, path, sizeof(path));
	assert_int_equal(file_fill_pattern(ffd, 0, 3 * sz, SEED_FILE), 0);
	r = dmaio_read_file(b, 1, ffd, 4097, sz - 2, 0);
	CHECK(r == (ssize_t)(sz - 2), "read into imported = %s", test_errname(r));
	own_sync(fd, DMA_BUF_SYNC_START | DMA_BUF_SYNC_READ);
	CHECK(pat_check(own + 1, sz - 2, SEED_FILE, 4097) == -1, "read data not in our mapping");
	CHECK(own[0] == pat_byte(SEED_BUF, 0) && own[sz - 1] == pat_byte(SEED_BUF, sz - 1),
	      "bytes outside the read range changed");
	own_sync(fd, DMA_BUF_SYNC_END | DMA_BUF_SYNC_READ);
	/* imported buffer -> file */
	r = dmaio_write_file(b, 0, ffd, 2 * (off_t)sz + 3, sz, 0);
	CHECK(r == (ssize_t)sz, "write from imported = %s", test_errname(r));
	{
		uint8_t *chk = malloc(sz);

		assert_non_null(chk);
		assert_int_equal(pread_full(ffd, chk, sz, 2 * (off_t)sz + 3), (ssize_t)sz);
		own_sync(fd, DMA_BUF_SYNC_START | DMA_BUF_SYNC_READ);
		CHECK(mem_first_diff(chk, own, sz) < 0, "written file differs from the buffer");
		own_sync(fd, DMA_BUF_SYNC_END | DMA_BUF_SYNC_READ);
		free(chk);
	}

	/* dup semantics: after dmaio_free the caller's fd and mapping still work */
	dmaio_free(b);
	CHECK(fcntl(fd, F_GETFD) >= 0 && fstat(fd, &st) == 0, "caller's fd closed by dmaio_free");
	own_sync(fd, DMA_BUF_SYNC_START | DMA_BUF_SYNC_READ);
	CHECK(pat_check(own + 1, sz - 2, SEED_FILE, 4097) == -1, "caller's mapping lost its data");
	own_sync(fd, DMA_BUF_SYNC_END | DMA_BUF_SYNC_READ);
	munmap(own, sz);
	own = mmap(NULL, sz, PROT_READ, MAP_SHARED, fd, 0);
	CHECK(own != MAP_FAILED, "caller cannot mmap its fd after dmaio_free");
	munmap(own, sz);

	/* and the other way: the caller closes first, the imported buffer lives on */
	rc = dmaio_import(ctx, fd, 0, &b2);
	CHECK(rc == 0, "second import = %s", test_errname(rc));
	close(fd);
	m = NULL;
	CHECK(dmaio_map(b2, (void **)&m) == 0, "map after the caller closed its fd");
	r = dmaio_read_file(b2, 0, ffd, 0, sz, DMAIO_RW_PATH(DMAIO_PATH_BUFFERED));
	CHECK(r == (ssize_t)sz, "read after the caller closed its fd = %s", test_errname(r));
	dmaio_sync_begin(b2, DMAIO_SYNC_READ);
	CHECK(pat_check(m, sz, SEED_FILE, 0) == -1, "data wrong after the caller closed its fd");
	dmaio_sync_end(b2, DMAIO_SYNC_READ);
	dmaio_free(b2);

	/* importing a library buffer's fd, then freeing the original first */
	rc = dmaio_alloc(ctx, args.heap_name, sz, 0, &orig);
	CHECK(rc == 0, "alloc = %s", test_errname(rc));
	rc = dmaio_import(NULL, dmaio_buf_fd(orig), 0, &b2);
	CHECK(rc == 0, "import of a library buffer = %s", test_errname(rc));
	dmaio_free(orig);
	r = dmaio_read_file(b2, 3, ffd, 5, sz - 3, 0);
	CHECK(r == (ssize_t)(sz - 3), "read into import of a freed buffer = %s", test_errname(r));
	m = NULL;
	CHECK(dmaio_map(b2, (void **)&m) == 0, "map");
	dmaio_sync_begin(b2, DMAIO_SYNC_READ);
	CHECK(pat_check(m + 3, sz - 3, SEED_FILE, 5) == -1, "data wrong");
	dmaio_sync_end(b2, DMAIO_SYNC_READ);
	dmaio_free(b2);
	close(ffd);
	unlink(path);
}

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_alloc_map),
		cmocka_unit_test(test_zeroed),
		cmocka_unit_test(test_concurrent),
		cmocka_unit_test(test_import),
	};
	struct dmaio_buf *b = NULL;
	int rc;

	test_parse_args(argc, argv, &args, "system");
	setvbuf(stdout, NULL, _IOLBF, 0);
	if (test_expected_kind(args.heap_name) != DMAIO_BUF_HEAP) {
		fprintf(stderr, "test-heap takes a dma-heap name, not %s\n", args.heap);
		return 2;
	}
	assert_int_equal(dmaio_ctx_new(&ctx), 0);
	rc = test_alloc_or_skip(ctx, args.heap_name, 4096, 0, &b);
	if (rc) {
		fprintf(stderr, "dmaio_alloc(%s) = %s\n", args.heap, test_errname(rc));
		return 1;
	}
	dmaio_free(b);
	rc = cmocka_run_group_tests_name(args.heap, tests, NULL, NULL);
	printf("# heap %s: %u checks\n", args.heap_name, test_nchecks);
	dmaio_ctx_free(ctx);
	test_cleanup();
	return rc ? 1 : 0;
}
