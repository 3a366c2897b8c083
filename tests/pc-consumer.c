// SPDX-License-Identifier: MIT
/*
 * A program built only with `pkg-config --cflags --libs libdmaio` against an installed copy of
 * the library (see check-pkgconfig.sh). It reads a file at unaligned offsets into a "memfd"
 * buffer, writes ranges of the buffer to another file and compares every byte with what plain
 * pread/pwrite give. With DMAIO_PATH set, that path must serve every call (NO_FALLBACK).
 *
 * Usage: pc-consumer WORKDIR   (writes WORKDIR/out.<path>; exit 0 only if all bytes match)
 */
#define _GNU_SOURCE
#include <dmaio.h>
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define SRC_SIZE (3u * 1024 * 1024 + 123)
#define BUF_SIZE (1024u * 1024 + 5)
#define OUT_SIZE (3u * 1024 * 1024)

static int errors;

static uint8_t src_byte(uint64_t i)
{
	uint64_t z = (i >> 3) * 0x9e3779b97f4a7c15ull + 0x1234;

	z ^= z >> 29;
	return (uint8_t)(z >> (8 * (i & 7)));
}

static void fail(const char *what, long long a, long long b)
{
	fprintf(stderr, "pc-consumer: %s (%lld, %lld)\n", what, a, b);
	errors++;
}

int main(int argc, char **argv)
{
	static const struct {
		size_t boff;
		off_t foff;
		size_t len;
	} rd[] = {
		{ 0, 0, 4096 },		 { 1, 1, 1 },		 { 3, 4097, 100000 },
		{ 511, 513, 1048576 - 600 }, { 0, SRC_SIZE - 23, 1000 }, { 4096, 65536, 65536 },
	}, wr[] = {
		{ 7, 3, 50000 }, { 0, 65537, 1048576 }, { 100, 2 * 1048576 + 1, 12345 },
		{ 4096, 4096, 8192 },
	};
	const char *env = getenv("DMAIO_PATH");
	int want = env ? dmaio_path_from_name(env) : DMAIO_PATH_AUTO;
	unsigned flags = env ? DMAIO_RW_NO_FALLBACK : 0;
	struct dmaio_buf *buf = NULL;
	uint8_t *map = NULL, *tmp, *model;
	char path[4096];
	int src, out, rc;
	size_t i, k;

	if (argc != 2) {
		fprintf(stderr, "usage: pc-consumer WORKDIR\n");
		return 2;
	}
	if (want < 0) {
		fprintf(stderr, "pc-consumer: DMAIO_PATH=%s is not a path name\n", env);
		return 2;
	}
	tmp = malloc(SRC_SIZE);
	model = calloc(1, OUT_SIZE + BUF_SIZE);
	if (!tmp || !model)
		return 1;

	snprintf(path, sizeof(path), "%s/src", argv[1]);
	src = open(path, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (src < 0)
		return perror(path), 1;
	for (i = 0; i < SRC_SIZE; i++)
		tmp[i] = src_byte(i);
	if (pwrite(src, tmp, SRC_SIZE, 0) != (ssize_t)SRC_SIZE)
		return perror("pwrite"), 1;

	{
		static const char *const memfd[] = { "memfd", NULL };
		struct dmaio_alloc_opts o = { .struct_size = sizeof(o), .providers = memfd };
		struct dmaio_reason why = { .struct_size = sizeof(why) };

		rc = dmaio_buf_alloc(NULL, BUF_SIZE, &o, &buf, &why);
		if (rc)
			return fprintf(stderr, "dmaio_buf_alloc: %s\n", why.text), 1;
	}
	rc = dmaio_buf_map(buf, (void **)&map);
	if (rc)
		return fprintf(stderr, "dmaio_buf_map: %s\n", strerror(-rc)), 1;

	/* reads at unaligned offsets and lengths, one across EOF */
	for (k = 0; k < sizeof(rd) / sizeof(rd[0]); k++) {
		struct dmaio_xfer x = { .struct_size = sizeof(struct dmaio_xfer) };
		size_t exp = rd[k].foff + rd[k].len > SRC_SIZE ? SRC_SIZE - (size_t)rd[k].foff :
								   rd[k].len;
		ssize_t r;

		memset(map, 0xee, BUF_SIZE);
		r = dmaio_fd_read(src, rd[k].foff, buf, rd[k].boff, rd[k].len, flags, &x);
		if (r != (ssize_t)exp) {
			fail("read returned", (long long)r, (long long)exp);
			continue;
		}
		if (env && x.path != want)
			fail("read path differs from DMAIO_PATH", x.path, want);
		for (i = 0; i < BUF_SIZE; i++) {
			uint8_t e = i >= rd[k].boff && i < rd[k].boff + exp ?
					    src_byte((uint64_t)rd[k].foff + (i - rd[k].boff)) :
					    0xee;

			if (map[i] != e) {
				fail("read: buffer byte differs", (long long)k, (long long)i);
				break;
			}
		}
	}

	/* writes of buffer ranges to another file, compared with a model */
	snprintf(path, sizeof(path), "%s/out.%s", argv[1], env ? env : "auto");
	out = open(path, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (out < 0)
		return perror(path), 1;
	for (i = 0; i < BUF_SIZE; i++)
		map[i] = src_byte(i * 7 + 1);
	{
		size_t end = 0;
		struct stat st;
		ssize_t r;

		for (k = 0; k < sizeof(wr) / sizeof(wr[0]); k++) {
			struct dmaio_xfer x = { .struct_size = sizeof(struct dmaio_xfer) };

			r = dmaio_fd_write(out, wr[k].foff, buf, wr[k].boff, wr[k].len, flags, &x);
			if (r != (ssize_t)wr[k].len) {
				fail("write returned", (long long)r, (long long)wr[k].len);
				continue;
			}
			if (env && x.path != want)
				fail("write path differs from DMAIO_PATH", x.path, want);
			memcpy(model + wr[k].foff, map + wr[k].boff, wr[k].len);
			if ((size_t)wr[k].foff + wr[k].len > end)
				end = (size_t)wr[k].foff + wr[k].len;
		}
		if (fstat(out, &st) != 0 || (size_t)st.st_size != end)
			fail("output size", (long long)st.st_size, (long long)end);
		if (pread(out, tmp, end, 0) != (ssize_t)end)
			fail("pread output", 0, 0);
		for (i = 0; i < end; i++)
			if (tmp[i] != model[i]) {
				fail("output byte differs", (long long)i, tmp[i]);
				break;
			}
	}
	dmaio_buf_free(buf);
	close(src);
	close(out);
	free(tmp);
	free(model);
	printf("pc-consumer: DMAIO_PATH=%s: %s\n", env ? env : "(unset)", errors ? "FAIL" : "ok");
	return errors ? 1 : 0;
}
