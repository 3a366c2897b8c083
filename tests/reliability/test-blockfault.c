// SPDX-License-Identifier: MIT
/*
 * test-blockfault: real block-layer errors during direct reads. The kernel's fail_make_request
 * fails a bio of DMAIO_TEST_RAWDEV (make-it-fail on that device; probability 100, times 1, and
 * a "space" budget so the failure comes first or part-way into the read); the read is forced
 * through udmabuf-direct, bounce-direct, and auto. Each read must return -EIO with
 * xfer.done <= len, the bytes [0, xfer.done) of the range right (a pattern written to the
 * device beforehand), the buffer outside the range untouched; the same read without fault
 * afterwards must succeed.
 *
 * DESTRUCTIVE for DMAIO_TEST_RAWDEV (a scratch device: a pattern is written to 8 MiB of it).
 * Exits 77 unless DMAIO_TEST_RAWDEV names a block device, /sys/kernel/debug/fail_make_request
 * exists (CONFIG_FAIL_MAKE_REQUEST, debugfs mounted) and the test runs as root. The fault
 * attributes are restored at the end; verbose is 0 while the test runs (no stack traces in the
 * kernel log).
 *
 * Every read is checked and each problem reported (test_fail(), common.h); the test fails at its
 * end when any was.
 *
 * Usage: test-blockfault [--heap NAME]     Env: DMAIO_TEST_RAWDEV, DMAIO_TEST_QUICK=1.
 */
#include <errno.h>
#include <fcntl.h>
#include <linux/fs.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include <cmocka.h>

#include "common.h"
#include "rel.h"

#define FMR "/sys/kernel/debug/fail_make_request"

static struct test_args args;
static const char *dev;
static struct stat dev_st;
static char make_it_fail[128];

static const char *const attrs[] = { "probability", "interval", "times", "space", "verbose" };
static char saved[ARRAY_SIZE(attrs)][64];

static int put(const char *path, const char *val)
{
	int fd = open(path, O_WRONLY | O_CLOEXEC), r = 0;

	if (fd < 0)
		return -errno;
	if (write(fd, val, strlen(val)) < 0)
		r = -errno;
	close(fd);
	return r;
}

static int get(const char *path, char *val, size_t len)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	ssize_t n;

	if (fd < 0)
		return -errno;
	n = read(fd, val, len - 1);
	close(fd);
	if (n < 0)
		return -errno;
	val[n] = 0;
	val[strcspn(val, "\n")] = 0;
	return 0;
}

static int set_attr(const char *name, const char *val)
{
	char p[128];

	snprintf(p, sizeof(p), FMR "/%s", name);
	return put(p, val);
}

static void faults_off(void)
{
	put(make_it_fail, "0");
	set_attr("probability", "0");
}

static void restore(void)
{
	faults_off();
	for (size_t i = 0; i < ARRAY_SIZE(attrs); i++)
		if (saved[i][0])
			set_attr(attrs[i], saved[i]);
}

/* Fail one bio once @space bytes of bios went through. */
static int faults_on(unsigned long long space)
{
	char v[32];
	int r;

	snprintf(v, sizeof(v), "%llu", space);
	r = set_attr("verbose", "0");
	r = r ? r : set_attr("interval", "1");
	r = r ? r : set_attr("times", "1");
	r = r ? r : set_attr("space", v);
	r = r ? r : set_attr("probability", "100");
	r = r ? r : put(make_it_fail, "1");
	return r;
}

/* What the test holds, freed by its teardown also when an assert ended it part-way. */
struct hold {
	struct dmaio_buf *buf;
	uint8_t *ref;
	int fd, dfd;
};

static int hold_setup(void **state)
{
	struct hold *h = calloc(1, sizeof(*h));

	if (!h)
		return -1;
	h->fd = h->dfd = -1;
	*state = h;
	return 0;
}

static int hold_teardown(void **state)
{
	struct hold *h = *state;

	restore();
	dmaio_buf_free(h->buf);
	free(h->ref);
	if (h->fd >= 0)
		close(h->fd);
	if (h->dfd >= 0)
		close(h->dfd);
	free(h);
	return 0;
}

static void test_blockfault(void **state)
{
	static const int paths[] = { DMAIO_PATH_UDMABUF_DIRECT, DMAIO_PATH_BOUNCE_DIRECT,
				     DMAIO_PATH_AUTO };
	struct hold *h = *state;
	unsigned long long budgets[3], devsize = 0;
	size_t len, boff = 4096, bsize;
	unsigned reads = 0, na = 0, partial = 0, injected = 0, before = test_failures();
	off_t region;
	uint8_t *p, *ref;
	int fd, r;

	len = args.quick ? 2 * MiB : 8 * MiB;
	bsize = boff + len + 4096 + 1;
	fd = h->fd = open(dev, O_RDWR | O_CLOEXEC);
	h->dfd = open(dev, O_RDWR | O_DIRECT | O_CLOEXEC);
	if (fd < 0 || h->dfd < 0)
		fail_msg("cannot open %s: %s", dev, strerror(errno));
	assert_int_equal(ioctl(fd, BLKGETSIZE64, &devsize), 0);
	assert_true(devsize >= 16 * MiB); /* checked in main() */
	region = (off_t)(devsize >= 96 * MiB ? 64 * MiB : devsize - 16 * MiB);
	region &= ~(off_t)(MiB - 1);
	for (size_t i = 0; i < ARRAY_SIZE(attrs); i++) {
		char pth[128];

		snprintf(pth, sizeof(pth), FMR "/%s", attrs[i]);
		if (get(pth, saved[i], sizeof(saved[i])))
			saved[i][0] = 0;
	}
	atexit(restore);

	/* the pattern on the device, written around the page cache */
	assert_int_equal(posix_memalign((void **)&h->ref, 4096, len), 0);
	ref = h->ref;
	pat_fill(ref, len, SEED_FILE, (uint64_t)region);
	if (pwrite_full(h->dfd, ref, len, region) != (ssize_t)len || fsync(h->dfd))
		fail_msg("cannot write the pattern to %s: %s", dev, strerror(errno));
	ioctl(fd, BLKFLSBUF, 0);

	assert_rc_equal(t_alloc(NULL, args.heap_name, bsize, 0, &h->buf), 0);
	assert_rc_equal(dmaio_buf_map(h->buf, (void **)&p), 0);
	/* the first bio fails; one after half the range went through; one near the end (then
	 * the first chunks are usually complete and xfer.done > 0) */
	budgets[0] = 0;
	budgets[1] = len / 2 + 4096;
	budgets[2] = len - 64 * KiB;
	printf("# %s (%llu MiB), range %zu bytes at %lld, heap %s\n", dev, devsize >> 20, len,
	       (long long)region, args.heap);
	rel_watchdog(100);
	for (size_t pi = 0; pi < ARRAY_SIZE(paths); pi++) {
		const char *pn = dmaio_path_name(paths[pi]);
		unsigned flags = paths[pi] == DMAIO_PATH_AUTO ? 0 :
				 DMAIO_RW_PATH(paths[pi]) | DMAIO_RW_NO_FALLBACK;

		for (size_t bi = 0; bi < ARRAY_SIZE(budgets); bi++) {
			struct dmaio_xfer x = { .struct_size = sizeof(struct dmaio_xfer) };
			ssize_t n;
			long long e;

			rel_set_label("%s, fault after %llu bytes", pn, budgets[bi]);
			dmaio_buf_sync_begin(h->buf, DMAIO_SYNC_WRITE);
			pat_fill(p, bsize, SEED_GUARD, 0);
			dmaio_buf_sync_end(h->buf, DMAIO_SYNC_WRITE);
			r = faults_on(budgets[bi]);
			if (r)
				fail_msg("cannot arm fail_make_request: %s", test_errname(r));
			n = dmaio_fd_read(fd, region, h->buf, boff, len, flags, &x);
			faults_off();
			if (n == -EOPNOTSUPP && paths[pi] != DMAIO_PATH_AUTO) {
				printf("# %-15s not applicable to heap %s\n", pn, args.heap);
				na++;
				break;
			}
			injected++;
			reads++;
			printf("# %-15s bio failing after %8llu bytes: %s, xfer.done %llu via %s\n",
			       pn, budgets[bi], test_errname(n), (unsigned long long)x.done,
			       dmaio_path_name(x.path));
			if (n != -EIO)
				test_fail("%s: a read with a failing bio returned %s, expected "
					  "-EIO", pn, test_errname(n));
			if (n < 0 && x.done > 0)
				partial++;
			if (x.done > len)
				test_fail("%s: xfer.done %llu > len %zu", pn,
					  (unsigned long long)x.done, len);
			dmaio_buf_sync_begin(h->buf, DMAIO_SYNC_READ);
			e = pat_check(p + boff, MIN(x.done, len), SEED_FILE, (uint64_t)region);
			if (e >= 0)
				test_fail("%s: buffer byte %lld of the %llu reported done is wrong",
					  pn, e, (unsigned long long)x.done);
			e = pat_check(p, boff, SEED_GUARD, 0);
			if (e < 0)
				e = pat_check(p + boff + len, bsize - boff - len, SEED_GUARD, boff + len);
			if (e >= 0)
				test_fail("%s: the buffer changed outside the range", pn);
			dmaio_buf_sync_end(h->buf, DMAIO_SYNC_READ);

			/* no fault: the same read works */
			n = dmaio_fd_read(fd, region, h->buf, boff, len, flags, &x);
			reads++;
			dmaio_buf_sync_begin(h->buf, DMAIO_SYNC_READ);
			if (n != (ssize_t)len)
				test_fail("%s: the read without fault afterwards returned %s", pn,
					  test_errname(n));
			else if ((e = pat_check(p + boff, len, SEED_FILE, (uint64_t)region)) >= 0)
				test_fail("%s: the read without fault afterwards: byte %lld "
					  "wrong", pn, e);
			dmaio_buf_sync_end(h->buf, DMAIO_SYNC_READ);
		}
	}
	rel_watchdog(0);
	printf("blockfault: %u reads (%u with an injected block-layer error, %u of them failing "
	       "part-way with xfer.done > 0), %u paths not applicable, %u failures\n", reads,
	       injected, partial, na, test_failures() - before);
	assert_no_failures_since(before);
}

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_blockfault, hold_setup, hold_teardown),
	};
	unsigned long long devsize = 0;
	struct dmaio_buf *buf = NULL;
	int fd, r;

	test_parse_args(argc, argv, &args, "memfd");
	setvbuf(stdout, NULL, _IOLBF, 0);
	rel_install_crash_label();
	/* what the test needs: 77 when it is not there */
	dev = getenv("DMAIO_TEST_RAWDEV");
	if (!dev || !*dev) {
		printf("SKIP: DMAIO_TEST_RAWDEV is not set (a scratch block device)\n");
		return TEST_SKIP;
	}
	if (stat(dev, &dev_st) || !S_ISBLK(dev_st.st_mode)) {
		printf("SKIP: DMAIO_TEST_RAWDEV=%s is not a block device\n", dev);
		return TEST_SKIP;
	}
	if (access(FMR, F_OK)) {
		printf("SKIP: %s absent (CONFIG_FAIL_MAKE_REQUEST, debugfs)\n", FMR);
		return TEST_SKIP;
	}
	if (geteuid() != 0) {
		printf("SKIP: fail_make_request needs root\n");
		return TEST_SKIP;
	}
	snprintf(make_it_fail, sizeof(make_it_fail), "/sys/dev/block/%u:%u/make-it-fail",
		 major(dev_st.st_rdev), minor(dev_st.st_rdev));
	if (access(make_it_fail, W_OK)) {
		printf("SKIP: %s absent\n", make_it_fail);
		return TEST_SKIP;
	}
	r = test_alloc_or_skip(NULL, args.heap_name, 4096, 0, &buf);
	if (r) {
		fprintf(stderr, "dmaio_buf_alloc(%s) = %s\n", args.heap, test_errname(r));
		return 1;
	}
	dmaio_buf_free(buf);
	fd = open(dev, O_RDONLY | O_CLOEXEC);
	if (fd < 0 || ioctl(fd, BLKGETSIZE64, &devsize)) {
		fprintf(stderr, "cannot open %s: %s\n", dev, strerror(errno));
		return 1;
	}
	close(fd);
	if (devsize < 16 * MiB) {
		printf("SKIP: %s is smaller than 16 MiB\n", dev);
		return TEST_SKIP;
	}
	return cmocka_run_group_tests_name("blockfault", tests, NULL, NULL) ? 1 : 0;
}
