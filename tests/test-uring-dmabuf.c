// SPDX-License-Identifier: MIT
/*
 * test-uring-dmabuf: the "uring-dmabuf" path (the proposed io_uring dma-buf registered buffers)
 * end to end against the raw NVMe namespace of the test VM (DMAIO_TEST_RAWDEV, destructive),
 * with a system-heap buffer and a udmabuf. Suite needs-uring-dmabuf. What is expected comes from
 * the kernel command line of tests/vm/run:
 *   io_uring_dmabuf=on   (7.3 test kernel) the probes say the kernel has the registration and
 *                        both buffers register for the NVMe device; reads and writes (aligned,
 *                        unaligned heads and tails, tiny ranges) go through uring-dmabuf
 *                        (xfer.path and the per-path statistics) and are byte-exact, touching
 *                        nothing outside their range; with spurious -EAGAIN injected
 *                        (/sys/module/io_uring/parameters/dmabuf_eagain) they are reissued
 *                        (stats.reissues) and still exact; a busy registration (injected
 *                        -EBUSY, .../dmabuf_ebusy) is tried again, falls back under auto and
 *                        is -EBUSY, never -EOPNOTSUPP, when forced; the kernel's refusals as posted:
 *                        a regular file as target -EOPNOTSUPP, a target not open O_DIRECT
 *                        -EINVAL at I/O, I/O on another file -EBADF.
 *   io_uring_dmabuf=off  or no such word (6.12, or a kernel without the patch): the probe says
 *                        the kernel lacks it (-EINVAL, mainline's answer) and the same calls are
 *                        served by the other paths, byte-exact.
 * Exit 77 outside the VM when no raw device or no dma-heap is there, and in a VM whose kernel has
 * no system heap (DMAIO_TEST_DEVICES, Debian's 6.1).
 *
 * Usage: test-uring-dmabuf   Env: DMAIO_TEST_RAWDEV=/dev/BLOCKDEV (destructive), DMAIO_TEST_DIRS
 */
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>
#include <liburing.h>

#include "common.h"
#include "../lib/uapi/io_uring-dmabuf.h"

#ifndef MiB
#define MiB (1024u * 1024u)
#endif
#define BUF_SIZE (8 * MiB)
#define EAGAIN_KNOB "/sys/module/io_uring/parameters/dmabuf_eagain"
#define EBUSY_KNOB "/sys/module/io_uring/parameters/dmabuf_ebusy"

enum expect { EXPECT_OFF, EXPECT_ON };

static enum expect expect;
static const char *rawdev;
static struct dmaio_ctx *ctx;
static int dev_fd = -1;   /* O_RDWR | O_DIRECT: the library's file and the reference I/O */
static void *ref;         /* aligned scratch for reference reads/writes */

static void write_knob(const char *path, const char *v)
{
	int fd = open(path, O_WRONLY | O_CLOEXEC);

	assert_true(fd >= 0);
	assert_int_equal(write(fd, v, strlen(v)), (ssize_t)strlen(v));
	close(fd);
}

/* The device's [off, off + len) holds the stream of @seed at @off (written O_DIRECT). */
static void dev_fill(off_t off, size_t len, uint64_t seed)
{
	assert_true(off % 4096 == 0 && len % 4096 == 0 && len <= 32 * MiB);
	pat_fill(ref, len, seed, (uint64_t)off);
	assert_int_equal(pwrite_full(dev_fd, ref, len, off), (ssize_t)len);
}

/* Read [off, off + len) of the device (aligned outward) O_DIRECT; pointer to byte off. */
static const uint8_t *dev_read(off_t off, size_t len)
{
	off_t a = off & ~(off_t)4095;
	size_t n = ((size_t)(off - a) + len + 4095) & ~(size_t)4095;

	assert_true(n <= 32 * MiB);
	assert_int_equal(pread_full(dev_fd, ref, n, a), (ssize_t)n);
	return (const uint8_t *)ref + (off - a);
}

static int setup(void **state)
{
	struct dmaio_sys_info s = { .struct_size = sizeof(struct dmaio_sys_info) };

	(void)state;
	rawdev = getenv("DMAIO_TEST_RAWDEV");
	if (!rawdev || !*rawdev) {
		if (test_expect_devices()) {
			fprintf(stderr, "DMAIO_TEST_RAWDEV not set inside the VM\n");
			return -1;
		}
		printf("# SKIP: DMAIO_TEST_RAWDEV not set (a raw NVMe namespace, destructive)\n");
		exit(77);
	}
	expect = test_cmdline_has("io_uring_dmabuf=on") ? EXPECT_ON : EXPECT_OFF;
	if (dmaio_ctx_new(0, &ctx))
		return -1;
	if (dmaio_ctx_get_system(ctx, &s) || s.nheaps <= 0) {
		/* the VM's kernel may have no dma-heap (DMAIO_TEST_DEVICES: Debian's 6.1) */
		if (test_expect_device("system"))
			return -1;
		printf("# SKIP: no dma-heap\n");
		exit(77);
	}
	dev_fd = open(rawdev, O_RDWR | O_DIRECT | O_CLOEXEC);
	if (dev_fd < 0 || posix_memalign(&ref, 4096, 32 * MiB))
		return -1;
	printf("# %s, expecting io_uring dma-buf registration %s\n", rawdev,
	       expect == EXPECT_ON ? "on" : "absent");
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	for (int i = 0; i < 2; i++) {
		const char *knob = i ? EBUSY_KNOB : EAGAIN_KNOB;
		int fd = access(knob, W_OK) ? -1 : open(knob, O_WRONLY | O_CLOEXEC);

		if (fd >= 0) {
			if (write(fd, "0", 1) != 1)
				fprintf(stderr, "cannot reset %s\n", knob);
			close(fd);
		}
	}
	if (dev_fd >= 0)
		close(dev_fd);
	free(ref);
	dmaio_ctx_free(ctx);
	return 0;
}

/* What the probes report, per heap and for the system. */
static void t_probe(void **state)
{
	struct t_heap_info h[16];
	struct t_sys_info si;
	const struct dmaio_proposed_info *p = &si.prop;
	int n, sys_heap = -1;

	(void)state;
	assert_int_equal(t_probe_system(ctx, &si), 0);
	n = t_probe_heaps(ctx, h, 16);
	assert_true(n > 0);
	for (int i = 0; i < n && i < 16; i++) {
		printf("# heap %s: uring_dmabuf %d\n", h[i].name, h[i].uring_dmabuf);
		if (!strcmp(h[i].name, "system"))
			sys_heap = i;
	}
	assert_true(sys_heap >= 0);
	printf("# kernel %d (%s), registration %d, device '%s', memcg %d\n", p->uring_dmabuf_kernel,
	       test_errname(p->uring_dmabuf_err), p->uring_dmabuf, p->uring_dmabuf_dev, si.sys.heap_memcg);
	if (expect == EXPECT_ON) {
		assert_int_equal(p->uring_dmabuf_kernel, DMAIO_CAP_YES);
		assert_int_equal(p->uring_dmabuf, DMAIO_CAP_YES);
		assert_memory_equal(p->uring_dmabuf_dev, "/dev/nvme", 9);
		assert_int_equal(h[sys_heap].uring_dmabuf, DMAIO_CAP_YES);
	} else {
		assert_int_equal(p->uring_dmabuf_kernel, DMAIO_CAP_NO);
		assert_int_equal(p->uring_dmabuf_err, -EINVAL);
		assert_int_equal(p->uring_dmabuf, DMAIO_CAP_NO);
		for (int i = 0; i < n && i < 16; i++)
			assert_int_equal(h[i].uring_dmabuf, DMAIO_CAP_UNKNOWN);
	}
}

struct range {
	off_t file_off;
	size_t buf_off, len;
	/* a direct middle, buffer and device offsets congruent modulo the block: the path that moves
	 * it must be uring-dmabuf; the others may take any path */
	bool bulk;
};

static const struct range ranges[] = {
	{ 0, 0, BUF_SIZE, true },
	{ 1 * MiB, 2 * MiB, 4 * MiB, true },
	{ 4096 + 123, 8192 + 123, 3 * MiB + 555, true }, /* unaligned head and tail */
	{ 512, 4096 + 512, 1 * MiB, true },              /* block-aligned, not page-aligned */
	{ 4096 + 123, 77, 3 * MiB + 555, false },        /* offsets not congruent */
	{ 9 * MiB - 100, 5 * MiB + 1, 2 * MiB + 3, false },
	{ 1000, 10, 100, false },                        /* inside one block */
	{ 12 * MiB + 4095, BUF_SIZE - 2, 2, false },
};

static void check_path(const char *what, const struct range *r, const struct dmaio_xfer *x)
{
	if (expect == EXPECT_ON && r->bulk && x->path != DMAIO_PATH_URING_DMABUF)
		fail_msg("%s %lld+%zu: path %s, expected uring-dmabuf", what, (long long)r->file_off,
			 r->len, dmaio_path_name(x->path));
	if (expect == EXPECT_OFF && x->path == DMAIO_PATH_URING_DMABUF)
		fail_msg("%s: uring-dmabuf used although the kernel lacks it", what);
}

static void read_matrix(const char *heap, uint64_t *path_bytes_out, uint64_t *reissues_out)
{
	struct dmaio_file *f = NULL;
	struct dmaio_buf *b = NULL;
	struct dmaio_stats st = { .struct_size = sizeof(struct dmaio_stats) };
	uint8_t *p = NULL;

	assert_int_equal(test_alloc_or_skip(ctx, heap, BUF_SIZE, 0, &b), 0);
	assert_int_equal(dmaio_buf_map(b, (void **)&p), 0);
	assert_int_equal(dmaio_file_open(ctx, dev_fd, 0, &f), 0);
	dev_fill(0, 16 * MiB, SEED_FILE);
	for (size_t i = 0; i < sizeof(ranges) / sizeof(ranges[0]); i++) {
		const struct range *r = &ranges[i];
		struct dmaio_xfer x = { .struct_size = sizeof(struct dmaio_xfer) };
		long long bad;
		ssize_t n;

		pat_fill_inv(p, BUF_SIZE, SEED_GUARD, 0);
		n = dmaio_file_read(f, r->file_off, b, r->buf_off, r->len, 0, &x);
		assert_int_equal(n, (ssize_t)r->len);
		bad = pat_check(p + r->buf_off, r->len, SEED_FILE, (uint64_t)r->file_off);
		if (bad >= 0)
			pat_report("read", p + r->buf_off, r->len, SEED_FILE, (uint64_t)r->file_off, bad,
				   false);
		assert_int_equal(bad, -1);
		/* nothing outside the range */
		assert_int_equal(pat_check_inv(p, r->buf_off, SEED_GUARD, 0), -1);
		assert_int_equal(pat_check_inv(p + r->buf_off + r->len, BUF_SIZE - r->buf_off - r->len,
					       SEED_GUARD, r->buf_off + r->len), -1);
		check_path(heap, r, &x);
	}
	assert_int_equal(dmaio_buf_get_stats(b, &st), 0);
	*path_bytes_out = st.path_bytes[DMAIO_PATH_URING_DMABUF];
	*reissues_out = st.reissues;
	dmaio_file_close(f);
	dmaio_buf_free(b);
}

static void write_matrix(const char *heap)
{
	struct dmaio_file *f = NULL;
	struct dmaio_buf *b = NULL;
	uint8_t *p = NULL;

	assert_int_equal(test_alloc_or_skip(ctx, heap, BUF_SIZE, 0, &b), 0);
	assert_int_equal(dmaio_buf_map(b, (void **)&p), 0);
	assert_int_equal(dmaio_file_open(ctx, dev_fd, 0, &f), 0);
	for (size_t i = 0; i < sizeof(ranges) / sizeof(ranges[0]); i++) {
		const struct range *r = &ranges[i];
		off_t lo = r->file_off > (off_t)(64 * 1024) ? r->file_off - 64 * 1024 : 0;
		off_t hi = r->file_off + (off_t)r->len + 64 * 1024;
		const uint8_t *d;
		struct dmaio_xfer x = { .struct_size = sizeof(struct dmaio_xfer) };
		ssize_t n;

		lo &= ~(off_t)4095;
		hi = (hi + 4095) & ~(off_t)4095;
		dev_fill(0, 16 * MiB, SEED_DEST);
		pat_fill(p, BUF_SIZE, SEED_BUF, (uint64_t)(r->file_off - (off_t)r->buf_off));
		n = dmaio_file_write(f, r->file_off, b, r->buf_off, r->len, 0, &x);
		assert_int_equal(n, (ssize_t)r->len);
		check_path(heap, r, &x);
		d = dev_read(lo, (size_t)(hi - lo));
		assert_int_equal(pat_check(d, (size_t)(r->file_off - lo), SEED_DEST, (uint64_t)lo), -1);
		assert_int_equal(pat_check(d + (r->file_off - lo), r->len, SEED_BUF,
					   (uint64_t)r->file_off), -1);
		assert_int_equal(pat_check(d + (r->file_off - lo) + r->len,
					   (size_t)(hi - r->file_off) - r->len, SEED_DEST,
					   (uint64_t)r->file_off + r->len), -1);
	}
	dmaio_file_close(f);
	dmaio_buf_free(b);
}

static void t_system_read(void **state)
{
	uint64_t pb, re;

	(void)state;
	read_matrix("system", &pb, &re);
	if (expect == EXPECT_ON)
		assert_true(pb > 0);
	else
		assert_int_equal(pb, 0);
}

static void t_udmabuf_read(void **state)
{
	uint64_t pb, re;

	(void)state;
	read_matrix("udmabuf", &pb, &re);
	if (expect == EXPECT_ON)
		assert_true(pb > 0);
	else
		assert_int_equal(pb, 0);
}

static void t_system_write(void **state)
{
	(void)state;
	write_matrix("system");
}

static void t_udmabuf_write(void **state)
{
	(void)state;
	write_matrix("udmabuf");
}

/* Spurious -EAGAIN completions (every 3rd dma-buf fixed I/O) are reissued, bytes still exact. */
static void t_eagain(void **state)
{
	uint64_t pb, re;

	(void)state;
	if (expect != EXPECT_ON)
		skip();
	assert_int_equal(access(EAGAIN_KNOB, W_OK), 0);
	write_knob(EAGAIN_KNOB, "3");
	read_matrix("system", &pb, &re);
	write_matrix("udmabuf");
	write_knob(EAGAIN_KNOB, "0");
	printf("# with injection: %llu bytes through uring-dmabuf, %llu reissues\n",
	       (unsigned long long)pb, (unsigned long long)re);
	assert_true(pb > 0);
	assert_true(re > 0);
}

/* One read of range 0 into a fresh buffer of the heap, with these flags: the result, the
 * transfer, and whether the buffer holds exactly the file's bytes (or, failed, is untouched). */
static ssize_t busy_read(struct dmaio_buf *b, uint8_t *p, struct dmaio_file *f, uint32_t flags,
			 struct dmaio_xfer *x)
{
	ssize_t n;

	pat_fill_inv(p, BUF_SIZE, SEED_GUARD, 0);
	memset(x, 0, sizeof(*x));
	x->struct_size = sizeof(*x);
	n = dmaio_file_read(f, 0, b, 0, BUF_SIZE, flags, x);
	if (n == (ssize_t)BUF_SIZE)
		assert_int_equal(pat_check(p, BUF_SIZE, SEED_FILE, 0), -1);
	else
		assert_int_equal(pat_check_inv(p, BUF_SIZE, SEED_GUARD, 0), -1);
	return n;
}

/*
 * -EBUSY from the registration (injected: every Nth dma-buf registration of the test kernel,
 * /sys/module/io_uring/parameters/dmabuf_ebusy) means "not now", never "not this buffer":
 *   always busy: forced uring-dmabuf without fallback ends with -EBUSY, nothing moved (not
 *   -EOPNOTSUPP, as on 0d69629); auto falls back and is exact; the buffer is not marked refused:
 *   busy no more, auto takes uring-dmabuf for it again;
 *   every 2nd busy: forced uring-dmabuf without fallback succeeds on fresh buffers (the busy
 *   registration tried again at once).
 */
static void t_ebusy(void **state)
{
	const uint32_t forced = DMAIO_RW_PATH(DMAIO_PATH_URING_DMABUF) | DMAIO_RW_NO_FALLBACK;
	struct dmaio_xfer x;
	struct dmaio_file *f = NULL;
	struct dmaio_buf *b = NULL;
	uint8_t *p = NULL;
	ssize_t n;

	(void)state;
	if (expect != EXPECT_ON)
		skip();
	assert_int_equal(access(EBUSY_KNOB, W_OK), 0);
	dev_fill(0, 16 * MiB, SEED_FILE);
	assert_int_equal(dmaio_file_open(ctx, dev_fd, 0, &f), 0);

	write_knob(EBUSY_KNOB, "1");
	assert_int_equal(test_alloc_or_skip(ctx, "system", BUF_SIZE, 0, &b), 0);
	assert_int_equal(dmaio_buf_map(b, (void **)&p), 0);
	n = busy_read(b, p, f, forced, &x);
	printf("# always busy, forced uring-dmabuf: %s, done %llu\n", test_errname((int)n),
	       (unsigned long long)x.done);
	assert_int_equal(n, -EBUSY);
	assert_int_equal(x.done, 0);
	n = busy_read(b, p, f, 0, &x);
	printf("# always busy, auto: %s via %s, %u fallbacks\n", test_errname((int)n),
	       dmaio_path_name(x.path), x.fallbacks);
	assert_int_equal(n, (ssize_t)BUF_SIZE);
	assert_int_not_equal(x.path, DMAIO_PATH_URING_DMABUF);
	assert_true(x.fallbacks >= 1);
	write_knob(EBUSY_KNOB, "0");
	n = busy_read(b, p, f, 0, &x);
	printf("# busy no more, auto: %s via %s\n", test_errname((int)n), dmaio_path_name(x.path));
	assert_int_equal(n, (ssize_t)BUF_SIZE);
	assert_int_equal(x.path, DMAIO_PATH_URING_DMABUF);
	dmaio_buf_free(b);

	write_knob(EBUSY_KNOB, "2");
	for (int i = 0; i < 4; i++) {
		assert_int_equal(test_alloc_or_skip(ctx, "system", BUF_SIZE, 0, &b), 0);
		assert_int_equal(dmaio_buf_map(b, (void **)&p), 0);
		n = busy_read(b, p, f, forced, &x);
		if (n != (ssize_t)BUF_SIZE)
			fail_msg("every 2nd registration busy, buffer %d: %s", i,
				 test_errname((int)n));
		assert_int_equal(x.path, DMAIO_PATH_URING_DMABUF);
		dmaio_buf_free(b);
	}
	printf("# every 2nd registration busy: 4 fresh buffers read through uring-dmabuf\n");
	write_knob(EBUSY_KNOB, "0");
	dmaio_file_close(f);
}

/* One registration by hand through the uAPI; returns the update's result. */
static int reg(struct io_uring *ring, int dmabuf_fd, int target_fd)
{
	struct dmaio_io_uring_regbuf_desc d;
	struct dmaio_io_uring_rsrc_update2 up;

	memset(&d, 0, sizeof(d));
	d.type = DMAIO_IO_REGBUF_TYPE_DMABUF;
	d.dmabuf_fd = dmabuf_fd;
	d.target_fd = target_fd;
	memset(&up, 0, sizeof(up));
	up.flags = DMAIO_IORING_RSRC_UPDATE_EXTENDED;
	up.data = (__u64)(uintptr_t)&d;
	up.nr = 1;
	return io_uring_register(ring->ring_fd, IORING_REGISTER_BUFFERS_UPDATE, &up, sizeof(up));
}

static int read_fixed(struct io_uring *ring, int fd, uint64_t off_in_buf, unsigned len)
{
	struct io_uring_sqe *sqe = io_uring_get_sqe(ring);
	struct io_uring_cqe *cqe;
	int r;

	io_uring_prep_read_fixed(sqe, fd, (void *)(uintptr_t)off_in_buf, len, 0, 0);
	assert_int_equal(io_uring_submit(ring), 1);
	assert_int_equal(io_uring_wait_cqe(ring, &cqe), 0);
	r = cqe->res;
	io_uring_cqe_seen(ring, cqe);
	return r;
}

/* The kernel's answers, as the posted series gives them. */
static void t_refusals(void **state)
{
	struct dmaio_buf *b = NULL;
	struct io_uring ring;
	char path[4096];
	int tmp, buffered, other;

	(void)state;
	assert_int_equal(test_alloc_or_skip(ctx, "system", BUF_SIZE, 0, &b), 0);
	assert_int_equal(io_uring_queue_init(4, &ring, 0), 0);
	assert_int_equal(io_uring_register_buffers_sparse(&ring, 1), 0);
	if (expect == EXPECT_OFF) {
		/* mainline: the flag word is "resv" and must be zero */
		assert_int_equal(reg(&ring, dmaio_buf_fd(b), dev_fd), -EINVAL);
		goto out;
	}
	/* a regular file has no dma-buf I/O */
	tmp = test_tmpfile(test_dir(), path, sizeof(path));
	assert_true(tmp >= 0);
	assert_int_equal(reg(&ring, dmaio_buf_fd(b), tmp), -EOPNOTSUPP);
	close(tmp);
	/* not a dma-buf, not a file */
	assert_int_equal(reg(&ring, dev_fd, dev_fd), -EINVAL);
	assert_int_equal(reg(&ring, dmaio_buf_fd(b), 100000), -EBADF);
	/* registered for the device opened without O_DIRECT: buffered I/O is refused */
	buffered = open(rawdev, O_RDONLY | O_CLOEXEC);
	assert_true(buffered >= 0);
	assert_int_equal(reg(&ring, dmaio_buf_fd(b), buffered), 1);
	assert_int_equal(read_fixed(&ring, buffered, 0, 4096), -EINVAL);
	/* I/O on another file than the one registered for */
	other = open(rawdev, O_RDONLY | O_DIRECT | O_CLOEXEC);
	assert_true(other >= 0);
	assert_int_equal(read_fixed(&ring, other, 0, 4096), -EBADF);
	/* past the end of the dma-buf */
	assert_int_equal(reg(&ring, dmaio_buf_fd(b), other), 1);
	assert_int_equal(read_fixed(&ring, other, BUF_SIZE - 4096, 8192), -EFAULT);
	/* and it works where it should */
	dev_fill(0, 1 * MiB, SEED_FILE);
	assert_int_equal(read_fixed(&ring, other, 4096, 65536), 65536);
	{
		void *p;

		assert_int_equal(dmaio_buf_map(b, &p), 0);
		assert_int_equal(pat_check((uint8_t *)p + 4096, 65536, SEED_FILE, 0), -1);
	}
	close(buffered);
	close(other);
out:
	io_uring_queue_exit(&ring);
	dmaio_buf_free(b);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(t_probe),
		cmocka_unit_test(t_system_read),
		cmocka_unit_test(t_udmabuf_read),
		cmocka_unit_test(t_system_write),
		cmocka_unit_test(t_udmabuf_write),
		cmocka_unit_test(t_eagain),
		cmocka_unit_test(t_ebusy),
		cmocka_unit_test(t_refusals),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
