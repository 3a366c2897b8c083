/* SPDX-License-Identifier: MIT */
/*
 * What one small warm read costs in syscalls (run by check-syscalls.sh under strace): a 4 KiB
 * read through a registered file must cost the data syscall plus at most one more (the range's
 * page-cache residency). The reads measured sit between two getppid() markers; everything the
 * library sets up once (ring, mapping, probes) happens before the first marker.
 * Usage: syscall-probe DIR MODE (MODE: file = dmaio_file_read, fd = dmaio_fd_read)
 */
#include <dmaio.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#define FILE_SIZE (1u << 20)
#define READS 16

int main(int argc, char **argv)
{
	static const char *const memfd_list[] = { "memfd", NULL };
	const struct dmaio_alloc_opts memfd = { .struct_size = sizeof(memfd),
						.providers = memfd_list };
	char path[4096], *data;
	struct dmaio_buf *buf;
	struct dmaio_file *file;
	bool reg;
	int fd, r;

	if (argc != 3)
		return 2;
	reg = !strcmp(argv[2], "file");
	snprintf(path, sizeof(path), "%s/dmaio-syscalls.XXXXXX", argv[1]);
	fd = mkostemp(path, O_CLOEXEC);
	if (fd < 0)
		return 2;
	unlink(path);
	data = malloc(FILE_SIZE);
	memset(data, 0x5a, FILE_SIZE);
	if (pwrite(fd, data, FILE_SIZE, 0) != FILE_SIZE || pread(fd, data, FILE_SIZE, 0) != FILE_SIZE)
		return 2; /* written and read: in the page cache */
	r = dmaio_buf_alloc(NULL, FILE_SIZE, &memfd, &buf, NULL);
	if (!r)
		r = dmaio_file_open(NULL, fd, 0, &file);
	if (r) {
		fprintf(stderr, "setup: %s\n", strerror(-r));
		return 2;
	}
	/* once: the pooled queue, its ring, the mapping */
	r = reg ? (int)dmaio_file_read(file, 0, buf, 0, 4096, 0, NULL) :
		  (int)dmaio_fd_read(fd, 0, buf, 0, 4096, 0, NULL);
	if (r != 4096)
		return 2;
	syscall(SYS_getppid);
	for (int i = 0; i < READS; i++) {
		off_t off = (off_t)i * 4096 * 3;

		r = reg ? (int)dmaio_file_read(file, off, buf, (size_t)off, 4096, 0, NULL) :
			  (int)dmaio_fd_read(fd, off, buf, (size_t)off, 4096, 0, NULL);
		if (r != 4096) {
			fprintf(stderr, "read %d: %d\n", i, r);
			return 1;
		}
	}
	syscall(SYS_getppid);
	printf("%d\n", READS);
	dmaio_file_close(file);
	dmaio_buf_free(buf);
	free(data);
	close(fd);
	return 0;
}
