/* SPDX-License-Identifier: MIT */
/*
 * The caller's synchronous-write semantics hold on every path: every descriptor the library
 * opens for a file opened O_DSYNC or O_SYNC (the O_DIRECT reopen, the buffered reopen of an
 * O_DIRECT fd) carries the same flag, as /proc/self/fdinfo shows; and writes through each path
 * of such a file are byte-exact.
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
#include <sys/stat.h>
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
		char path[64], line[128];
		struct stat st;
		FILE *f;
		int fd = atoi(de->d_name);

		if (de->d_name[0] == '.' || fd == dirfd(d) || fstat(fd, &st) || st.st_ino != of->st_ino ||
		    st.st_dev != of->st_dev)
			continue;
		snprintf(path, sizeof(path), "/proc/self/fdinfo/%d", fd);
		f = fopen(path, "re");
		assert_non_null(f);
		while (fgets(line, sizeof(line), f))
			if (sscanf(line, "flags: %o", &flags[n]) == 1)
				break;
		fclose(f);
		fds[n++] = fd;
	}
	closedir(d);
	return n;
}

static void one_mode(int extra, const char *name)
{
	static const int paths[] = { DMAIO_PATH_AUTO, DMAIO_PATH_UDMABUF_DIRECT,
				     DMAIO_PATH_BOUNCE_DIRECT, DMAIO_PATH_BUFFERED,
				     DMAIO_PATH_SENDFILE };
	int want = extra & (O_SYNC | O_DSYNC), fds[16], n, fd, tmp, check;
	char path[4096];
	unsigned flags[16];
	struct dmaio_file *file;
	struct dmaio_buf *buf;
	struct stat st;
	void *map;

	tmp = test_tmpfile(NULL, path, sizeof(path));
	close(tmp);
	fd = open(path, O_RDWR | O_CLOEXEC | extra);
	if (fd < 0 && (extra & O_DIRECT)) {
		printf("# %s: the test filesystem takes no O_DIRECT\n", name);
		return;
	}
	assert_true(fd >= 0);
	assert_int_equal(fstat(fd, &st), 0);
	if (test_alloc_or_skip(NULL, args.heap_name, SIZE, 0, &buf)) {
		close(fd);
		return;
	}
	assert_int_equal(dmaio_map(buf, &map), 0);
	pat_fill(map, SIZE, SEED_BUF, 0);
	assert_int_equal(dmaio_file_open(NULL, fd, 0, &file), 0);
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
	for (size_t i = 0; i < sizeof(paths) / sizeof(paths[0]); i++) {
		unsigned f = paths[i] ? DMAIO_RW_PATH(paths[i]) : 0;
		off_t off = (off_t)i * SIZE + 100; /* unaligned: page-cache edges too */
		ssize_t r = dmaio_file_write(file, off, buf, 0, SIZE - 200, f, NULL);

		assert_int_equal(r, SIZE - 200);
		assert_true(file_check_pattern(check, off, SIZE - 200, SEED_BUF, 0) == -1);
	}
	dmaio_file_close(file);
	dmaio_free(buf);
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

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_sync_flags),
	};

	test_parse_args(argc, argv, &args, "memfd");
	return cmocka_run_group_tests_name("durability", tests, NULL, NULL);
}
