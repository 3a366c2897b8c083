/* SPDX-License-Identifier: MIT */
/*
 * The caller's synchronous-write semantics hold on every path: every descriptor the library
 * opens for a file opened O_DSYNC or O_SYNC (the O_DIRECT reopen, the buffered reopen of an
 * O_DIRECT fd) carries the same flag, as /proc/self/fdinfo shows; and writes through each path
 * of such a file are byte-exact.
 *
 * And the power-cut check: when a write to such a file returns, its bytes are on the device.
 * Where the test file's filesystem sits on a block device this process can read, the file's
 * extents (FIEMAP, without its sync flag) are read straight from the device (O_DIRECT, below the
 * page cache) and every byte of the range is compared: a range still in the page cache
 * (delayed allocation, unwritten extents, dirty pages) is not on the device. The plain-fd
 * control shows what the check sees when nothing forces the data out. (It sees data left in the
 * page cache; a missing device-cache flush after an O_DIRECT write is beyond it: the fdinfo check
 * above catches that one.)
 *
 * And dmaio_file_sync() / dmaio_fd_sync(): page-cache writes to a plain file are on the device
 * when the sync returns (the same check).
 */
#include <dirent.h>
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <linux/fiemap.h>
#include <linux/fs.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include <cmocka.h>

#include "common.h"

#define SIZE (1u << 20)

static struct test_args args;

/* flags (fdinfo, octal) of every open fd of the process on the file of of st; returns how many */
static int fds_on(const struct stat *of, int *fds, unsigned *flags, int max)
{
	struct dirent *de;
	DIR *d = opendir("/proc/self/fd");
	int n = 0;

	assert_non_null(d);
	while ((de = readdir(d)) && n < max) {
		char fl[32];
		struct stat st;
		int fd = atoi(de->d_name);

		if (de->d_name[0] == '.' || fd == dirfd(d) || fstat(fd, &st) || st.st_ino != of->st_ino ||
		    st.st_dev != of->st_dev)
			continue;
		test_fdinfo(fd, "flags", fl, sizeof(fl));
		assert_true(fl[0]); /* every fd has flags in its fdinfo */
		flags[n] = (unsigned)strtoul(fl, NULL, 8);
		fds[n++] = fd;
	}
	closedir(d);
	return n;
}

/* The block device holding the filesystem of st, opened O_DIRECT read-only, or -1. */
static int open_device(const struct stat *st)
{
	char p[128], line[256], dev[300] = "";
	FILE *f;
	int fd;

	snprintf(p, sizeof(p), "/sys/dev/block/%u:%u/uevent", major(st->st_dev), minor(st->st_dev));
	f = fopen(p, "re");
	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f))
		if (!strncmp(line, "DEVNAME=", 8)) {
			line[strcspn(line, "\n")] = 0;
			snprintf(dev, sizeof(dev), "/dev/%s", line + 8);
		}
	fclose(f);
	if (!dev[0])
		return -1;
	fd = open(dev, O_RDONLY | O_DIRECT | O_CLOEXEC);
	if (fd >= 0)
		printf("# power-cut check reads %s\n", dev);
	return fd;
}

/*
 * Bytes of [off, off + len) of the file that are not on the device as the pattern (seed, 0):
 * 0 when every byte is there. Extents still delayed or unwritten count as missing.
 */
static long long on_device(int dev, int fd, off_t off, size_t len, uint64_t seed)
{
	size_t n = 64;
	struct fiemap *fm = calloc(1, sizeof(*fm) + n * sizeof(fm->fm_extents[0]));
	uint64_t covered = 0, bad = 0;
	uint8_t *blk = NULL;

	assert_non_null(fm);
	assert_int_equal(posix_memalign((void **)&blk, 4096, 1u << 20), 0);
	fm->fm_start = (uint64_t)off;
	fm->fm_length = len;
	fm->fm_flags = 0; /* not FIEMAP_FLAG_SYNC: that would write the file out first */
	fm->fm_extent_count = (uint32_t)n;
	assert_int_equal(ioctl(fd, FS_IOC_FIEMAP, fm), 0);
	for (uint32_t i = 0; i < fm->fm_mapped_extents; i++) {
		const struct fiemap_extent *e = &fm->fm_extents[i];
		uint64_t lo = MAX(e->fe_logical, (uint64_t)off);
		uint64_t hi = MIN(e->fe_logical + e->fe_length, (uint64_t)off + len);

		if (hi <= lo)
			continue;
		if (e->fe_flags & (FIEMAP_EXTENT_DELALLOC | FIEMAP_EXTENT_UNKNOWN |
				   FIEMAP_EXTENT_UNWRITTEN | FIEMAP_EXTENT_NOT_ALIGNED |
				   FIEMAP_EXTENT_DATA_INLINE | FIEMAP_EXTENT_ENCODED))
			continue; /* not (plainly) on the device */
		for (uint64_t pos = lo; pos < hi;) {
			uint64_t phys = e->fe_physical + (pos - e->fe_logical);
			uint64_t a = phys & ~4095ull, skip = phys - a;
			size_t chunk = (size_t)MIN(hi - pos, (1u << 20) - skip);
			size_t rd = (size_t)((skip + chunk + 4095) & ~4095ull);

			assert_true(pread(dev, blk, rd, (off_t)a) >= (ssize_t)(skip + chunk));
			for (size_t k = 0; k < chunk; k++)
				bad += blk[skip + k] != pat_byte(seed, pos + k - (uint64_t)off);
			covered += chunk;
			pos += chunk;
		}
	}
	free(blk);
	free(fm);
	return (long long)(bad + (len - covered));
}

/* fd registered, and a buffer of SIZE of the provider under test holding the pattern (77
 * where the provider is missing on the host; in the VM a failure) */
static struct dmaio_file *register_with_buf(int fd, struct dmaio_buf **buf)
{
	struct dmaio_file *file;
	void *map;

	if (test_alloc_or_skip(NULL, args.heap_name, SIZE, 0, buf)) {
		close(fd);
		fail_msg("dmaio_buf_alloc(%s) failed", args.heap);
	}
	assert_int_equal(dmaio_buf_map(*buf, &map), 0);
	pat_fill(map, SIZE, SEED_BUF, 0);
	assert_int_equal(dmaio_file_open(NULL, fd, 0, &file), 0);
	return file;
}

static void one_mode(int extra, const char *name)
{
	static const int paths[] = { DMAIO_PATH_AUTO, DMAIO_PATH_RW_FILE, DMAIO_PATH_UDMABUF_DIRECT,
				     DMAIO_PATH_BOUNCE_DIRECT, DMAIO_PATH_BUFFERED,
				     DMAIO_PATH_SENDFILE };
	int want = extra & (O_SYNC | O_DSYNC), fds[16], n, fd, tmp, check, dev;
	char path[4096];
	unsigned flags[16];
	struct dmaio_file *file;
	struct dmaio_buf *buf;
	struct stat st;

	tmp = test_tmpfile(NULL, path, sizeof(path));
	close(tmp);
	fd = open(path, O_RDWR | O_CLOEXEC | extra);
	if (fd < 0 && (extra & O_DIRECT)) {
		printf("# %s: the test filesystem takes no O_DIRECT\n", name);
		return;
	}
	assert_true(fd >= 0);
	assert_int_equal(fstat(fd, &st), 0);
	file = register_with_buf(fd, &buf);
	check = -1;
	n = fds_on(&st, fds, flags, 16);
	printf("# %s: %d descriptors of the file:", name, n);
	for (int i = 0; i < n; i++)
		printf(" %d (flags 0%o)", fds[i], flags[i]);
	printf("\n");
	assert_true(n >= 2); /* the caller's and at least the library's copy */
	for (int i = 0; i < n; i++) {
		if ((int)(flags[i] & (unsigned)(O_SYNC | O_DSYNC)) != want)
			fail_msg("%s: fd %d has flags 0%o, without the caller's 0%o", name, fds[i],
				 flags[i], (unsigned)want);
	}
	check = open(path, O_RDONLY | O_CLOEXEC); /* a plain reader: fd may be O_DIRECT */
	assert_true(check >= 0);
	dev = open_device(&st);
	for (size_t i = 0; i < sizeof(paths) / sizeof(paths[0]); i++) {
		unsigned f = paths[i] ? DMAIO_RW_PATH(paths[i]) : 0;
		off_t off = (off_t)i * SIZE + 100; /* unaligned: page-cache edges too */
		ssize_t r = dmaio_file_write(file, off, buf, 0, SIZE - 200, f, NULL);

		assert_int_equal(r, SIZE - 200);
		if (dev >= 0) {
			long long missing = on_device(dev, fd, off, SIZE - 200, SEED_BUF);
			struct dmaio_stats bs = { .struct_size = sizeof(struct dmaio_stats) };

			assert_int_equal(dmaio_buf_get_stats(buf, &bs), 0);
			printf("# %s, %s (ran %s): %lld of %u bytes not on the device\n", name,
			       paths[i] ? dmaio_path_name(paths[i]) : "auto",
			       dmaio_path_name(bs.last_path), missing, SIZE - 200);
			if (want && missing)
				fail_msg("%s: a write through %s returned before its data was on the "
					 "device", name, dmaio_path_name(bs.last_path));
		}
		assert_true(file_check_pattern(check, off, SIZE - 200, SEED_BUF, 0) == -1);
	}
	if (dev >= 0)
		close(dev);
	dmaio_file_close(file);
	dmaio_buf_free(buf);
	close(check);
	close(fd);
}

static void test_sync_flags(void **state)
{
	(void)state;
	one_mode(O_DSYNC, "O_DSYNC");
	one_mode(O_SYNC, "O_SYNC");
	one_mode(O_DSYNC | O_DIRECT, "O_DSYNC|O_DIRECT");
	one_mode(0, "plain");
}

/* dmaio_file_sync() / dmaio_fd_sync() on a plain file: page-cache writes (buffered, sendfile),
 * on the device when the sync returns (where the power-cut check can read the device); what a
 * plain fd reads back is the pattern. */
static void test_file_sync(void **state)
{
	static const int paths[] = { DMAIO_PATH_BUFFERED, DMAIO_PATH_SENDFILE, DMAIO_PATH_AUTO };
	struct dmaio_file *file;
	struct dmaio_buf *buf;
	char path[4096];
	struct stat st;
	int fd, dev;

	(void)state;
	fd = test_tmpfile(NULL, path, sizeof(path));
	assert_true(fd >= 0);
	assert_int_equal(fstat(fd, &st), 0);
	file = register_with_buf(fd, &buf);
	dev = open_device(&st);
	for (int round = 0; round < 2; round++) {
		for (size_t i = 0; i < sizeof(paths) / sizeof(paths[0]); i++) {
			uint64_t off = ((uint64_t)round * 4 + i) * SIZE + 100;
			int64_t r = dmaio_file_write(file, off, buf, 0, SIZE - 200,
						     paths[i] ? DMAIO_RW_PATH(paths[i]) : 0, NULL);

			assert_int_equal(r, SIZE - 200);
		}
		/* the registered file, then a plain descriptor of it */
		assert_int_equal(round ? dmaio_fd_sync(fd, NULL, 0)
				       : dmaio_file_sync(file, DMAIO_SYNC_DATA), 0);
		for (size_t i = 0; i < sizeof(paths) / sizeof(paths[0]); i++) {
			uint64_t off = ((uint64_t)round * 4 + i) * SIZE + 100;

			if (dev >= 0) {
				long long missing = on_device(dev, fd, (off_t)off, SIZE - 200, SEED_BUF);

				printf("# %s, %s: %lld of %u bytes not on the device after the sync\n",
				       round ? "dmaio_fd_sync" : "dmaio_file_sync",
				       paths[i] ? dmaio_path_name(paths[i]) : "auto", missing,
				       SIZE - 200);
				if (missing)
					fail_msg("%s returned before the writes were on the device",
						 round ? "dmaio_fd_sync" : "dmaio_file_sync");
			}
			assert_true(file_check_pattern(fd, off, SIZE - 200, SEED_BUF, 0) == -1);
		}
	}
	if (dev < 0)
		printf("# the device under the test file cannot be read: durability not checked, "
		       "the data read back\n");
	else
		close(dev);
	dmaio_file_close(file);
	dmaio_buf_free(buf);
	close(fd);
	unlink(path);
}

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_sync_flags),
		cmocka_unit_test(test_file_sync),
	};

	test_parse_args(argc, argv, &args, "memfd");
	return cmocka_run_group_tests_name("durability", tests, NULL, NULL);
}
