// SPDX-License-Identifier: MIT
/*
 * vfio-copy: one transfer between a file and the BAR of the VFIO test device, through libdmaio
 * (path auto), for the check from outside the VM (tests/vm/vfio-host-check): the host compares
 * the file that backs the BAR with what the guest moved.
 *
 *   vfio-copy read FILE FILE_OFF BAR_OFF LEN    file -> BAR (dmaio_fd_read)
 *   vfio-copy write FILE FILE_OFF BAR_OFF LEN   BAR -> file (dmaio_fd_write, then fsync)
 *
 * The device is DMAIO_TEST_VFIO (the VM's /init sets it on 7.3), BAR 2, exported whole as one
 * dma-buf and imported. Prints the bytes moved and the path; exit 0, or 1 with the reason.
 */
#include <dmaio.h>

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "vfio.h"

int main(int argc, char **argv)
{
	struct dmaio_xfer x = { .struct_size = sizeof(x) };
	const char *bdf = test_vfio_env();
	struct test_vfio vf;
	struct dmaio_buf *buf;
	uint64_t range[1][2], file_off, bar_off, len;
	char why[512];
	bool write;
	int fd, dfd, err;
	int64_t r;

	if (argc != 6 || (strcmp(argv[1], "read") && strcmp(argv[1], "write"))) {
		fprintf(stderr, "usage: vfio-copy read|write FILE FILE_OFF BAR_OFF LEN\n");
		return 2;
	}
	write = !strcmp(argv[1], "write");
	file_off = strtoull(argv[3], NULL, 0);
	bar_off = strtoull(argv[4], NULL, 0);
	len = strtoull(argv[5], NULL, 0);
	if (!bdf) {
		fprintf(stderr, "vfio-copy: no device (DMAIO_TEST_VFIO unset)\n");
		return 1;
	}
	err = test_vfio_open(bdf, 2, &vf, why, sizeof(why));
	if (err) {
		fprintf(stderr, "vfio-copy: %s: %s\n", bdf, why);
		return 1;
	}
	range[0][0] = 0;
	range[0][1] = vf.bar_size;
	dfd = test_vfio_dmabuf(&vf, (const uint64_t (*)[2])range, 1);
	if (dfd < 0) {
		fprintf(stderr, "vfio-copy: VFIO_DEVICE_FEATURE_DMA_BUF: %s\n", strerror(-dfd));
		return 1;
	}
	err = dmaio_buf_import(NULL, dfd, 0, &buf);
	if (err) {
		fprintf(stderr, "vfio-copy: dmaio_buf_import: %s\n", strerror(-err));
		return 1;
	}
	fd = open(argv[2], write ? O_WRONLY | O_CREAT | O_CLOEXEC : O_RDONLY | O_CLOEXEC, 0644);
	if (fd < 0) {
		fprintf(stderr, "vfio-copy: %s: %s\n", argv[2], strerror(errno));
		return 1;
	}
	r = write ? dmaio_fd_write(fd, file_off, buf, bar_off, len, 0, &x)
		  : dmaio_fd_read(fd, file_off, buf, bar_off, len, 0, &x);
	if (r >= 0 && write && fsync(fd))
		r = -errno;
	if (r != (int64_t)len) {
		fprintf(stderr, "vfio-copy: %s: %s (%" PRIu64 " bytes done)\n", argv[1],
			r < 0 ? strerror((int)-r) : "short", x.done);
		return 1;
	}
	printf("vfio-copy %s: %" PRId64 " bytes, path %s, %" PRIu64 " unaligned\n", argv[1], r,
	       dmaio_path_name(x.path), x.unaligned);
	close(fd);
	dmaio_buf_free(buf);
	close(dfd);
	test_vfio_close(&vf);
	return 0;
}
