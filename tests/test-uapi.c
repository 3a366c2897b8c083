/* SPDX-License-Identifier: MIT */
/*
 * test-uapi: the library's private copies of the two proposed uAPIs and the requests it builds
 * from them, checked against the facts of the proposals (byte offsets, sizes, ioctl number, flag
 * values), and the refusal of the io_uring dma-buf registration by the running kernel.
 *
 *   DMA_BUF_IOCTL_RW_FILE (May 2025): struct dma_buf_rw_file { __u32 flags; __s32 fd;
 *     __u64 file_offset; __u64 buf_offset; __u64 buf_len; }, _IOW('b', 4, ...), READ 1, WRITE 2,
 *     DIRECT 1 << 31, op mask 0xff.
 *   io_uring dma-buf registered buffers, RFC v3: struct io_uring_regbuf_desc { __u32 type;
 *     __u32 flags; __u64 size; __u64 uaddr; __s32 dmabuf_fd; __s32 target_fd; __u64 __resv[6]; }
 *     (the two fds take the place of one reserved u64: the size stays 80 bytes), types EMPTY 0,
 *     UADDR 1, DMABUF 2, sent through IORING_REGISTER_BUFFERS_UPDATE.
 *
 * Needs the static build of the library (option fault_injection, on by default) for the internal
 * request builder. Suite host: runs anywhere.
 */
#include <errno.h>
#include <fcntl.h>
#include <liburing.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cmocka.h>

#include "../lib/engine/engine.h"
#include "../lib/uapi/dma-buf-rw-file.h"
#include "../lib/uapi/io_uring-dmabuf.h"

#define FIELD_SIZE(t, f) sizeof(((t *)0)->f)

static void test_rw_file_layout(void **state)
{
	typedef struct dmaio_dma_buf_rw_file a;

	(void)state;
	assert_int_equal(sizeof(a), 32);
	assert_int_equal(offsetof(a, flags), 0);
	assert_int_equal(FIELD_SIZE(a, flags), 4);
	assert_int_equal(offsetof(a, fd), 4);
	assert_int_equal(FIELD_SIZE(a, fd), 4);
	assert_int_equal(offsetof(a, file_offset), 8);
	assert_int_equal(offsetof(a, buf_offset), 16);
	assert_int_equal(offsetof(a, buf_len), 24);
	assert_int_equal(FIELD_SIZE(a, buf_len), 8);
	/* fd is signed, the offsets unsigned */
	assert_true((__typeof__(((a *)0)->fd))-1 < 0);
	assert_true((__typeof__(((a *)0)->file_offset))-1 > 0);

	assert_int_equal(_IOC_TYPE(DMAIO_DMA_BUF_IOCTL_RW_FILE), 'b');
	assert_int_equal(_IOC_NR(DMAIO_DMA_BUF_IOCTL_RW_FILE), 4);
	assert_int_equal(_IOC_DIR(DMAIO_DMA_BUF_IOCTL_RW_FILE), _IOC_WRITE);
	assert_int_equal(_IOC_SIZE(DMAIO_DMA_BUF_IOCTL_RW_FILE), 32);
	assert_int_equal((unsigned long)DMAIO_DMA_BUF_IOCTL_RW_FILE, 0x40206204ul);

	assert_int_equal(DMAIO_DMA_BUF_RW_FLAGS_READ, 1u);
	assert_int_equal(DMAIO_DMA_BUF_RW_FLAGS_WRITE, 2u);
	assert_int_equal(DMAIO_DMA_BUF_RW_FLAGS_DIRECT, 0x80000000u);
	assert_int_equal(DMAIO_DMA_BUF_RW_FLAGS_OP_MASK, 0xffu);
	assert_int_equal(DMAIO_DMA_BUF_RW_FLAGS_READ & ~DMAIO_DMA_BUF_RW_FLAGS_OP_MASK, 0);
	assert_int_equal(DMAIO_DMA_BUF_RW_FLAGS_WRITE & ~DMAIO_DMA_BUF_RW_FLAGS_OP_MASK, 0);
	assert_int_equal(DMAIO_DMA_BUF_RW_FLAGS_DIRECT & DMAIO_DMA_BUF_RW_FLAGS_OP_MASK, 0);
}

static void test_regbuf_desc_layout(void **state)
{
	typedef struct dmaio_io_uring_regbuf_desc d;

	(void)state;
	assert_int_equal(sizeof(d), 80); /* = v2's __u32 type, flags; __u64 size, uaddr, __resv[7] */
	assert_int_equal(offsetof(d, type), 0);
	assert_int_equal(offsetof(d, flags), 4);
	assert_int_equal(offsetof(d, size), 8);
	assert_int_equal(offsetof(d, uaddr), 16);
	assert_int_equal(offsetof(d, dmabuf_fd), 24);
	assert_int_equal(offsetof(d, target_fd), 28);
	assert_int_equal(offsetof(d, __resv), 32);
	assert_int_equal(FIELD_SIZE(d, __resv), 6 * 8);
	assert_true((__typeof__(((d *)0)->dmabuf_fd))-1 < 0);
	assert_int_equal(DMAIO_IO_REGBUF_TYPE_EMPTY, 0);
	assert_int_equal(DMAIO_IO_REGBUF_TYPE_UADDR, 1);
	assert_int_equal(DMAIO_IO_REGBUF_TYPE_DMABUF, 2);
	assert_true(DMAIO_IO_URING_DMABUF_MAX == 1ull << 30);

	/* the carrier, from the installed io_uring uAPI */
	assert_int_equal(sizeof(struct io_uring_rsrc_update2), 32);
	assert_int_equal(offsetof(struct io_uring_rsrc_update2, offset), 0);
	assert_int_equal(offsetof(struct io_uring_rsrc_update2, resv), 4);
	assert_int_equal(offsetof(struct io_uring_rsrc_update2, data), 8);
	assert_int_equal(offsetof(struct io_uring_rsrc_update2, tags), 16);
	assert_int_equal(offsetof(struct io_uring_rsrc_update2, nr), 24);
}

/* every byte of the request, built over garbage */
static void test_regbuf_request(void **state)
{
	static const int slots[] = { 0, 15, 65535 };
	struct dmaio_io_uring_regbuf_desc d;
	struct io_uring_rsrc_update2 up;

	(void)state;
	for (size_t i = 0; i < sizeof(slots) / sizeof(slots[0]); i++) {
		memset(&d, 0xa5, sizeof(d));
		memset(&up, 0x5a, sizeof(up));
		dmaio_uring_dmabuf_request(&up, &d, (unsigned)slots[i], 1000 + (int)i, 7);

		assert_int_equal(d.type, DMAIO_IO_REGBUF_TYPE_DMABUF);
		assert_int_equal(d.flags, 0);
		assert_true(d.size == 0);  /* zero for a dma-buf */
		assert_true(d.uaddr == 0); /* zero for a dma-buf: fixed I/O addresses are offsets */
		assert_int_equal(d.dmabuf_fd, 1000 + (int)i);
		assert_int_equal(d.target_fd, 7);
		for (int k = 0; k < 6; k++)
			assert_true(d.__resv[k] == 0);

		assert_int_equal(up.offset, (unsigned)slots[i]);
		/* IORING_RSRC_UPDATE_EXTENDED = 1U << 1, "io_uring/rsrc: extend buffer update" v3
		 * 09/10 (2026-04-29); the kernel rejects any other bit with -EINVAL */
		assert_int_equal(up.resv, 2u);
		assert_int_equal(up.resv, DMAIO_IORING_RSRC_UPDATE_EXTENDED);
		assert_true(up.data == (__u64)(uintptr_t)&d);
		assert_true(up.tags == 0);
		assert_int_equal(up.nr, 1);
		assert_int_equal(up.resv2, 0);
	}
}

/*
 * The running kernel, given the request with a memfd (not a dma-buf) for a regular file: every
 * kernel refuses that (mainline: EINVAL for the non-zero resv; with the series: not a dma-buf or
 * not an NVMe target), and the probe must report it as a refusal, never as success.
 */
static void test_regbuf_refused(void **state)
{
	char path[] = "/tmp/dmaio-uapi.XXXXXX";
	struct io_uring ring;
	int mfd, ffd, r;

	(void)state;
	/* without io_uring every registration fails for that reason alone: nothing is shown */
	r = io_uring_queue_init(2, &ring, 0);
	if (r < 0) {
		printf("# io_uring unavailable here (%s): nothing to check\n", strerror(-r));
		skip();
	}
	io_uring_queue_exit(&ring);
	mfd = memfd_create("dmaio-uapi", MFD_CLOEXEC);
	assert_true(mfd >= 0);
	assert_int_equal(ftruncate(mfd, 4096), 0);
	ffd = mkostemp(path, O_CLOEXEC);
	assert_true(ffd >= 0);
	unlink(path);
	r = dmaio_engine_dmabuf_probe(mfd, ffd);
	printf("# io_uring dma-buf registration of a memfd for a regular file: %d (%s)\n", r,
	       r < 0 ? strerror(-r) : "accepted");
	/* mainline: -EINVAL (flags bit set in what it calls resv); with the series: the memfd is no
	 * dma-buf (dma_buf_get: -EINVAL) or the regular file has no dma-buf op (-EOPNOTSUPP) */
	assert_true(r == -EINVAL || r == -EOPNOTSUPP);
	close(ffd);
	close(mfd);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_rw_file_layout),
		cmocka_unit_test(test_regbuf_desc_layout),
		cmocka_unit_test(test_regbuf_request),
		cmocka_unit_test(test_regbuf_refused),
	};

	return cmocka_run_group_tests_name("uapi", tests, NULL, NULL);
}
