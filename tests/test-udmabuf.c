// SPDX-License-Identifier: MIT
/*
 * test-udmabuf: the udmabuf provider (sealed shmem memfd, or hugetlb memfd for udmabuf-huge):
 * the size_limit_mb limit gives -EFBIG, the buffer is a real udmabuf dma-buf of the rounded
 * size, and data written through dmaio_map() is what reaches a file (and data read from a
 * file is what an independent mapping of the dma-buf shows), for every path that serves it.
 *
 * Usage: test-udmabuf --heap udmabuf|udmabuf-huge
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/dma-buf.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cmocka.h>

#include "common.h"

#define LIMIT_PATH "/sys/module/udmabuf/parameters/size_limit_mb"

static struct test_args args;
static int want_kind;
static long saved_limit = -1;

static long read_limit(void)
{
	char b[32] = "";
	FILE *f = fopen(LIMIT_PATH, "re");
	long v = -1;

	if (!f)
		return -1;
	if (fgets(b, sizeof(b), f))
		v = strtol(b, NULL, 10);
	fclose(f);
	return v;
}

static int write_limit(long mb)
{
	FILE *f = fopen(LIMIT_PATH, "we");
	int rc;

	if (!f)
		return -errno;
	rc = fprintf(f, "%ld\n", mb) < 0 ? -EIO : 0;
	if (fclose(f) != 0)
		rc = -errno;
	return rc;
}

static void restore_limit(void)
{
	if (saved_limit > 0) {
		write_limit(saved_limit);
		saved_limit = -1;
	}
}

static size_t huge_size(void)
{
	struct dmaio_sys_info si;

	if (dmaio_probe_system(NULL, &si) == 0 && si.huge_page_size)
		return si.huge_page_size;
	return 2 * MiB;
}

static size_t rounded(size_t n)
{
	size_t g = want_kind == DMAIO_BUF_UDMABUF_HUGE ? huge_size() : (size_t)sysconf(_SC_PAGESIZE);

	return (n + g - 1) / g * g;
}

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

/* ------------------------------------------------------------------------------------------ */

static void test_kind(void **state)
{
	const size_t sizes[] = { 1, 4097, MiB + 3 };
	size_t i;

	(void)state;
	for (i = 0; i < ARRAY_SIZE(sizes); i++) {
		struct dmaio_buf *b = NULL;
		char exp[64], sz[32];
		int rc, fd;

		rc = dmaio_alloc(NULL, args.heap_name, sizes[i], 0, &b);
		CHECK(rc == 0, "dmaio_alloc(%s, %zu) = %s", args.heap, sizes[i], test_errname(rc));
		CHECK(dmaio_buf_kind(b) == want_kind, "kind %d, expected %d", dmaio_buf_kind(b),
		      want_kind);
		CHECK(strcmp(dmaio_buf_provider(b), args.heap_name) == 0, "provider %s",
		      dmaio_buf_provider(b));
		CHECK(dmaio_buf_size(b) == sizes[i], "size %zu, asked %zu", dmaio_buf_size(b),
		      sizes[i]);
		fd = dmaio_buf_fd(b);
		fdinfo_field(fd, "exp_name", exp, sizeof(exp));
		CHECK(strcmp(exp, "udmabuf") == 0, "buffer fd exporter \"%s\", expected udmabuf", exp);
		fdinfo_field(fd, "size", sz, sizeof(sz));
		CHECK(strtoull(sz, NULL, 10) == rounded(sizes[i]), "dma-buf size %s, expected %zu",
		      sz, rounded(sizes[i]));
		dmaio_free(b);
	}
}

static void test_limit(void **state)
{
	struct dmaio_ctx *ctx = NULL;
	struct dmaio_sys_info si;
	struct dmaio_buf *b = NULL;
	long lim = read_limit();
	size_t bytes;
	int rc;

	(void)state;
	if (lim <= 0) {
		printf("# %s not readable\n", LIMIT_PATH);
		skip();
	}
	if (lim > 64) {
		/* a limit we can allocate up to: lower it for the test when allowed */
		if (write_limit(64) == 0) {
			saved_limit = lim;
			atexit(restore_limit);
			printf("# size_limit_mb lowered from %ld to 64 for the test\n", lim);
			lim = 64;
		} else if (lim > 256) {
			printf("# size_limit_mb %ld and not writable: limit not tested\n", lim);
			skip();
		}
	}
	bytes = (size_t)lim * MiB;
	/* a new context: the limit is probed per context */
	assert_int_equal(dmaio_ctx_new(&ctx), 0);
	assert_int_equal(dmaio_probe_system(ctx, &si), 0);
	CHECK(si.udmabuf_size_limit == bytes, "udmabuf_size_limit %llu, sysfs %ld MiB",
	      (unsigned long long)si.udmabuf_size_limit, lim);

	rc = dmaio_alloc(ctx, args.heap_name, bytes + 1, 0, &b);
	CHECK(rc == -EFBIG, "dmaio_alloc(limit + 1) = %s, expected -EFBIG", test_errname(rc));
	rc = dmaio_alloc(ctx, args.heap_name, bytes + 4096, 0, &b);
	CHECK(rc == -EFBIG, "dmaio_alloc(limit + 4096) = %s, expected -EFBIG", test_errname(rc));
	rc = dmaio_alloc(ctx, args.heap_name, 4 * bytes, 0, &b);
	CHECK(rc == -EFBIG, "dmaio_alloc(4 x limit) = %s, expected -EFBIG", test_errname(rc));
	rc = dmaio_alloc(ctx, args.heap_name, bytes, 0, &b);
	if (rc == -ENOMEM && want_kind == DMAIO_BUF_UDMABUF_HUGE) {
		printf("# %zu bytes of huge pages not available: at-limit allocation -ENOMEM\n",
		       bytes);
	} else {
		CHECK(rc == 0, "dmaio_alloc(limit = %zu) = %s", bytes, test_errname(rc));
		dmaio_free(b);
	}
	rc = dmaio_alloc(ctx, args.heap_name, bytes - 1, 0, &b);
	if (rc != -ENOMEM || want_kind != DMAIO_BUF_UDMABUF_HUGE) {
		CHECK(rc == 0, "dmaio_alloc(limit - 1) = %s", test_errname(rc));
		dmaio_free(b);
	}
	dmaio_ctx_free(ctx);
	restore_limit();
}

static void test_data(void **state)
{
	static const int paths[] = { DMAIO_PATH_AUTO, DMAIO_PATH_UDMABUF_DIRECT,
				     DMAIO_PATH_BOUNCE_DIRECT, DMAIO_PATH_BUFFERED,
				     DMAIO_PATH_SENDFILE };
	const size_t sz = MiB + 3;
	struct dmaio_buf *b = NULL;
	char pout[PATH_MAX], pin[PATH_MAX];
	uint8_t *m = NULL, *own;
	size_t i, maplen = rounded(sz);
	int rc, fd, out, outd, in, ind;
	ssize_t r;

	(void)state;
	rc = dmaio_alloc(NULL, args.heap_name, sz, 0, &b);
	CHECK(rc == 0, "dmaio_alloc = %s", test_errname(rc));
	CHECK(dmaio_map(b, (void **)&m) == 0, "map");
	fd = dmaio_buf_fd(b);
	own = mmap(NULL, maplen, PROT_READ, MAP_SHARED, fd, 0);
	CHECK(own != MAP_FAILED, "own mmap of the udmabuf: %s", strerror(errno));

	out = test_tmpfile(NULL, pout, sizeof(pout));
	outd = open(pout, O_RDWR | O_DIRECT | O_CLOEXEC);
	in = test_tmpfile(NULL, pin, sizeof(pin));
	assert_int_equal(file_fill_pattern(in, 0, 2 * MiB, SEED_FILE), 0);
	ind = open(pin, O_RDONLY | O_DIRECT | O_CLOEXEC);

	for (i = 0; i < ARRAY_SIZE(paths); i++) {
		unsigned fl = paths[i] ? DMAIO_RW_PATH(paths[i]) | DMAIO_RW_NO_FALLBACK : 0;
		const char *pn = dmaio_path_name(paths[i]);
		int wfd = (i & 1) && outd >= 0 ? outd : out;
		int rfd = (i & 1) && ind >= 0 ? ind : in;
		struct dmaio_xfer x;

		/* written through the mapping -> reaches the file */
		CHECK(dmaio_sync_begin(b, DMAIO_SYNC_WRITE) == 0, "sync");
		pat_fill(m, sz, SEED_BUF + i, 0);
		CHECK(dmaio_sync_end(b, DMAIO_SYNC_WRITE) == 0, "sync end");
		own_sync(fd, DMA_BUF_SYNC_START | DMA_BUF_SYNC_READ);
		CHECK(pat_check(own, sz, SEED_BUF + i, 0) == -1,
		      "%s: the dma-buf's own mapping does not show the data", pn);
		own_sync(fd, DMA_BUF_SYNC_END | DMA_BUF_SYNC_READ);
		assert_int_equal(ftruncate(out, 0), 0);
		memset(&x, 0, sizeof(x));
		r = dmaio_write_file_ex(b, 1, wfd, 4095, sz - 1, fl, &x);
		if (r == -EOPNOTSUPP && paths[i] == DMAIO_PATH_SENDFILE &&
		    want_kind == DMAIO_BUF_UDMABUF_HUGE) {
			/* hugetlbfs files cannot be spliced: sendfile does not apply */
			printf("# %s: not applicable to hugetlb memfds\n", pn);
			continue;
		}
		CHECK(r == (ssize_t)(sz - 1), "%s: write = %s", pn, test_errname(r));
		CHECK(!paths[i] || x.path == paths[i], "%s: xfer.path %s", pn,
		      dmaio_path_name(x.path));
		CHECK(file_check_pattern(out, 4095, sz - 1, SEED_BUF + i, 1) == -1,
		      "%s: file differs from what was written through the mapping", pn);
		CHECK(file_check_zero(out, 0, 4095) == -1, "%s: hole not zero", pn);

		/* read from a file -> visible through both mappings */
		CHECK(dmaio_sync_begin(b, DMAIO_SYNC_WRITE) == 0, "sync");
		memset(m, 0, sz);
		CHECK(dmaio_sync_end(b, DMAIO_SYNC_WRITE) == 0, "sync end");
		r = dmaio_read_file_ex(b, 3, rfd, 5 + (off_t)i, sz - 3, fl, &x);
		CHECK(r == (ssize_t)(sz - 3), "%s: read = %s", pn, test_errname(r));
		CHECK(!paths[i] || x.path == paths[i], "%s: xfer.path %s", pn,
		      dmaio_path_name(x.path));
		CHECK(dmaio_sync_begin(b, DMAIO_SYNC_READ) == 0, "sync");
		CHECK(pat_check(m + 3, sz - 3, SEED_FILE, 5 + i) == -1,
		      "%s: read data wrong in dmaio_map", pn);
		CHECK(mem_check_byte(m, 3, 0) < 0, "%s: bytes before the range written", pn);
		CHECK(dmaio_sync_end(b, DMAIO_SYNC_READ) == 0, "sync end");
		own_sync(fd, DMA_BUF_SYNC_START | DMA_BUF_SYNC_READ);
		CHECK(pat_check(own + 3, sz - 3, SEED_FILE, 5 + i) == -1,
		      "%s: read data not visible through the dma-buf's own mapping", pn);
		own_sync(fd, DMA_BUF_SYNC_END | DMA_BUF_SYNC_READ);
	}
	munmap(own, maplen);
	dmaio_free(b);
	if (outd >= 0)
		close(outd);
	if (ind >= 0)
		close(ind);
	close(out);
	close(in);
	unlink(pout);
	unlink(pin);
}

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_kind),
		cmocka_unit_test(test_data),
		cmocka_unit_test(test_limit),
	};
	struct dmaio_buf *b = NULL;
	int rc;

	test_parse_args(argc, argv, &args, "udmabuf");
	setvbuf(stdout, NULL, _IOLBF, 0);
	want_kind = test_expected_kind(args.heap_name);
	if (want_kind != DMAIO_BUF_UDMABUF && want_kind != DMAIO_BUF_UDMABUF_HUGE) {
		fprintf(stderr, "test-udmabuf takes --heap udmabuf or udmabuf-huge\n");
		return 2;
	}
	rc = test_alloc_or_skip(NULL, args.heap_name, 4096, 0, &b);
	if (rc) {
		fprintf(stderr, "dmaio_alloc(%s) = %s\n", args.heap, test_errname(rc));
		return 1;
	}
	dmaio_free(b);
	rc = cmocka_run_group_tests_name(args.heap, tests, NULL, NULL);
	restore_limit();
	printf("# %s: %u checks\n", args.heap, test_nchecks);
	test_cleanup();
	return rc ? 1 : 0;
}
