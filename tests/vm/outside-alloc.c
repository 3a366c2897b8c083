/* SPDX-License-Identifier: MIT */
/*
 * outside-alloc: a program that knows libdmaio only through its installed header and
 * `pkg-config --cflags --libs libdmaio` (tests/vm/outside-program builds it that way, outside the
 * meson project). In the VM it allocates one buffer from each provider named on the command line
 * (default: system reserved udmabuf), fills it from a file with a position-encoded pattern, checks
 * every byte through the mapping, writes it back to a second file and compares that too.
 *
 * usage: outside-alloc DIR [PROVIDER...]     exit 0 all good, 1 a failure
 */
#define _GNU_SOURCE
#include <dmaio.h>

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define LEN ((size_t)8 << 20)
#define ODD 4093 /* a length that is not a page multiple, at an unaligned offset */

static unsigned char pat(uint64_t pos)
{
	return (unsigned char)((pos >> 0) ^ (pos >> 8) ^ (pos >> 16) ^ (pos >> 24) ^ 0x5a);
}

static int write_file(const char *path, size_t len)
{
	unsigned char *p = malloc(len);
	int fd, ok;

	if (!p)
		return -1;
	for (size_t i = 0; i < len; i++)
		p[i] = pat(i);
	fd = open(path, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	ok = fd >= 0 && write(fd, p, len) == (ssize_t)len && fsync(fd) == 0;
	if (fd >= 0)
		close(fd);
	free(p);
	return ok ? 0 : -1;
}

/* first position in [0, len) of the buffer mapping that is not pat(file_off + i), or -1 */
static int64_t check_map(struct dmaio_buf *b, const unsigned char *m, size_t buf_off, uint64_t file_off,
			 size_t len)
{
	int64_t bad = -1;

	dmaio_buf_sync_begin(b, DMAIO_SYNC_READ);
	for (size_t i = 0; i < len; i++)
		if (m[buf_off + i] != pat(file_off + i)) {
			bad = (int64_t)i;
			break;
		}
	dmaio_buf_sync_end(b, DMAIO_SYNC_READ);
	return bad;
}

static int one(const char *dir, const char *prov)
{
	char src[4096], dst[4096];
	struct dmaio_buf *b = NULL;
	struct dmaio_xfer x = { .struct_size = sizeof(struct dmaio_xfer) };
	unsigned char *m;
	void *addr;
	int fd = -1, fo = -1, ret, rc = 1;
	ssize_t n;
	int64_t bad;

	snprintf(src, sizeof(src), "%s/outside-src.%s", dir, prov);
	snprintf(dst, sizeof(dst), "%s/outside-dst.%s", dir, prov);
	{
		const char *list[2] = { prov, NULL };
		struct dmaio_alloc_opts o = { .struct_size = sizeof(o), .providers = list };
		struct dmaio_reason why = { .struct_size = sizeof(why) };

		ret = dmaio_buf_alloc(NULL, LEN, &o, &b, &why);
		if (ret < 0) {
			printf("FAIL %s: dmaio_buf_alloc: %s (%s)\n", prov, strerror(-ret), why.text);
			return 1;
		}
	}
	printf("%s: %lld bytes, provider %s, kind %d (%s)\n", prov, (long long)dmaio_buf_size(b), dmaio_buf_provider(b),
	       dmaio_buf_kind(b), dmaio_buf_kind(b) == DMAIO_BUF_MEMFD ? "memfd, not a dma-buf" : "dma-buf");
	if (dmaio_buf_kind(b) == DMAIO_BUF_MEMFD) {
		printf("FAIL %s: not a dma-buf\n", prov);
		goto out;
	}
	ret = dmaio_buf_map(b, &addr);
	if (ret < 0) {
		printf("FAIL %s: dmaio_buf_map: %s\n", prov, strerror(-ret));
		goto out;
	}
	m = addr;
	if (write_file(src, LEN)) {
		printf("FAIL %s: cannot write %s: %s\n", prov, src, strerror(errno));
		goto out;
	}
	fd = open(src, O_RDONLY | O_CLOEXEC);
	fo = open(dst, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	if (fd < 0 || fo < 0) {
		printf("FAIL %s: open: %s\n", prov, strerror(errno));
		goto out;
	}
	posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED);
	n = dmaio_fd_read(fd, 0, b, 0, LEN, 0, &x);
	if (n != (ssize_t)LEN) {
		printf("FAIL %s: read %zd: %s\n", prov, n, n < 0 ? strerror((int)-n) : "short");
		goto out;
	}
	bad = check_map(b, m, 0, 0, LEN);
	printf("%s: read %zu bytes via %s (%" PRIu64 " fallbacks): %s\n", prov, LEN, dmaio_path_name(x.path),
	       (uint64_t)x.fallbacks, bad < 0 ? "every byte right" : "WRONG");
	if (bad >= 0) {
		printf("FAIL %s: byte %" PRId64 " wrong after the read\n", prov, bad);
		goto out;
	}
	/* unaligned: ODD bytes from file offset 12345 to buffer offset 777 */
	n = dmaio_fd_read(fd, 12345, b, 777, ODD, 0, &x);
	bad = n == ODD ? check_map(b, m, 777, 12345, ODD) : 0;
	printf("%s: unaligned read of %d bytes via %s: %s\n", prov, ODD, dmaio_path_name(x.path),
	       n == ODD && bad < 0 ? "every byte right" : "WRONG");
	if (n != ODD || bad >= 0) {
		printf("FAIL %s: unaligned read (%zd, bad %" PRId64 ")\n", prov, n, bad);
		goto out;
	}
	/* restore the buffer and save it whole */
	if (dmaio_fd_read(fd, 0, b, 0, LEN, 0, NULL) != (ssize_t)LEN) {
		printf("FAIL %s: second read\n", prov);
		goto out;
	}
	n = dmaio_fd_write(fo, 0, b, 0, LEN, 0, &x);
	if (n != (ssize_t)LEN || fsync(fo)) {
		printf("FAIL %s: write %zd: %s\n", prov, n, n < 0 ? strerror((int)-n) : "short");
		goto out;
	}
	{
		unsigned char *c = malloc(LEN);

		if (!c || pread(fo, c, LEN, 0) != (ssize_t)LEN) {
			printf("FAIL %s: re-read %s\n", prov, dst);
			free(c);
			goto out;
		}
		for (size_t i = 0; i < LEN; i++)
			if (c[i] != pat(i)) {
				printf("FAIL %s: file byte %zu wrong after the write\n", prov, i);
				free(c);
				goto out;
			}
		free(c);
	}
	printf("%s: wrote %zu bytes via %s: every byte right\n", prov, LEN, dmaio_path_name(x.path));
	rc = 0;
out:
	if (fd >= 0)
		close(fd);
	if (fo >= 0)
		close(fo);
	unlink(src);
	unlink(dst);
	dmaio_buf_free(b);
	return rc;
}

int main(int argc, char **argv)
{
	static const char *def[] = { "system", "reserved", "udmabuf" };
	const char **provs = def;
	int nprov = 3, fails = 0;

	if (argc < 2) {
		fprintf(stderr, "usage: %s DIR [PROVIDER...]\n", argv[0]);
		return 2;
	}
	if (argc > 2) {
		provs = (const char **)&argv[2];
		nprov = argc - 2;
	}
	printf("libdmaio header %d.%d.%d\n", DMAIO_VERSION_MAJOR, DMAIO_VERSION_MINOR, DMAIO_VERSION_MICRO);
	for (int i = 0; i < nprov; i++)
		fails += one(argv[1], provs[i]);
	printf("%s: %d of %d providers failed\n", fails ? "FAIL" : "ok", fails, nprov);
	return fails ? 1 : 0;
}
