// SPDX-License-Identifier: MIT
/*
 * test-api: the argument contract of every public function (the bad-input table), the path
 * names, close-on-exec of every fd the library creates, no fd leaks, and the DMAIO_PATH /
 * DMAIO_DEBUG environment.
 *
 * Each bad-input case must return exactly the errno the header documents, leave the number of
 * open fds unchanged and leave the guard bytes of the buffer and of the file untouched.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "common.h"

#define BUF_SIZE ((size_t)65536 + 5)
#define FILE_SIZE ((off_t)65536 + 7)
#define CLOSED_FD 900

static unsigned ncases;
static char self_exe[PATH_MAX];

/* Environment shared by the bad-input cases. */
static struct {
	struct dmaio_ctx *ctx;
	struct dmaio_buf *buf; /* memfd, BUF_SIZE, mapped, guard pattern */
	uint8_t *map;
	char path[PATH_MAX];
	int rw, ro, wo, app_wo, app_rw, dir, pipe_r, pipe_w, sock, efd, opath, devnull, memfd;
} E;

static const char *ename(long v)
{
	return test_errname(v);
}

/* Guards of the buffer and of the file, checked after every case. */
static void check_guards(const char *desc)
{
	struct stat st;
	long long e;

	e = pat_check(E.map, BUF_SIZE, SEED_GUARD, 0);
	if (e >= 0) {
		test_fail("%s: buffer byte %lld changed", desc, e);
		pat_fill(E.map, BUF_SIZE, SEED_GUARD, 0);
	}
	if (fstat(E.rw, &st) != 0 || st.st_size != FILE_SIZE) {
		test_fail("%s: file size changed to %lld", desc, (long long)st.st_size);
		if (ftruncate(E.rw, FILE_SIZE))
			test_fail("ftruncate failed");
	}
	e = file_check_pattern(E.rw, 0, (size_t)FILE_SIZE, SEED_DEST, 0);
	if (e != -1) {
		test_fail("%s: file byte %lld changed", desc, e);
		file_fill_pattern(E.rw, 0, (size_t)FILE_SIZE, SEED_DEST);
	}
}

/* One case: @got against @exp (or @exp2 when not 0), fd count, guards. */
static void verdict(const char *desc, long got, long exp, long exp2, int fds_before)
{
	int fds_after = test_count_fds();

	ncases++;
	if (got != exp && !(exp2 && got == exp2))
		test_fail("%s returned %s, expected %s%s%s", desc, ename(got), ename(exp),
			  exp2 ? " or " : "", exp2 ? ename(exp2) : "");
	/* a call that fails keeps no fd; a valid one may cache device fds in the context */
	if (fds_after != fds_before && (exp < 0 || got < 0))
		test_fail("%s: open fds %d -> %d", desc, fds_before, fds_after);
	check_guards(desc);
}

#define CASE(exp, call)                                                                       \
	do {                                                                                  \
		int fd0_ = test_count_fds();                                                  \
		long r_ = (long)(call);                                                       \
		verdict(#call, r_, (exp), 0, fd0_);                                           \
	} while (0)

#define CASE2(exp, exp2, call)                                                                \
	do {                                                                                  \
		int fd0_ = test_count_fds();                                                  \
		long r_ = (long)(call);                                                       \
		verdict(#call, r_, (exp), (exp2), fd0_);                                      \
	} while (0)

/* ------------------------------------------------------------------------------------------ */
/* Setup */

static int setup(void **state)
{
	struct dmaio_buf *b = NULL;
	int p[2], s[2];
	void *m = NULL;
	int rc;

	(void)state;
	memset(&E, 0, sizeof(E));
	assert_int_equal(dmaio_ctx_new(0, &E.ctx), 0);
	rc = t_alloc(E.ctx, "memfd", BUF_SIZE, 0, &b);
	if (rc)
		fail_msg("dmaio_buf_alloc(memfd) = %s", ename(rc));
	E.buf = b;
	assert_int_equal(dmaio_buf_map(E.buf, &m), 0);
	E.map = m;
	pat_fill(E.map, BUF_SIZE, SEED_GUARD, 0);

	E.rw = test_tmpfile(NULL, E.path, sizeof(E.path));
	assert_int_equal(file_fill_pattern(E.rw, 0, (size_t)FILE_SIZE, SEED_DEST), 0);
	E.ro = open(E.path, O_RDONLY | O_CLOEXEC);
	E.wo = open(E.path, O_WRONLY | O_CLOEXEC);
	E.app_wo = open(E.path, O_WRONLY | O_APPEND | O_CLOEXEC);
	E.app_rw = open(E.path, O_RDWR | O_APPEND | O_CLOEXEC);
	E.opath = open(E.path, O_PATH | O_CLOEXEC);
	E.dir = open(test_dir(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	E.devnull = open("/dev/null", O_RDWR | O_CLOEXEC);
	assert_int_equal(pipe2(p, O_CLOEXEC), 0);
	E.pipe_r = p[0];
	E.pipe_w = p[1];
	assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, s), 0);
	E.sock = s[0];
	close(s[1]);
	E.efd = eventfd(0, EFD_CLOEXEC);
	E.memfd = memfd_create("not-a-dmabuf", MFD_CLOEXEC);
	assert_true(E.ro >= 0 && E.wo >= 0 && E.app_wo >= 0 && E.app_rw >= 0 && E.opath >= 0);
	assert_true(E.dir >= 0 && E.devnull >= 0 && E.efd >= 0 && E.memfd >= 0);
	assert_int_equal(ftruncate(E.memfd, 8192), 0);
	/* a number that is surely not open, and far from what the library will open */
	assert_true(fcntl(CLOSED_FD, F_GETFD) < 0);
	return 0;
}

static int teardown(void **state)
{
	int *fds[] = { &E.rw, &E.ro, &E.wo, &E.app_wo, &E.app_rw, &E.dir, &E.pipe_r, &E.pipe_w,
		       &E.sock, &E.efd, &E.opath, &E.devnull, &E.memfd };
	size_t i;

	(void)state;
	dmaio_buf_free(E.buf);
	dmaio_ctx_free(E.ctx);
	for (i = 0; i < ARRAY_SIZE(fds); i++)
		if (*fds[i] > 0)
			close(*fds[i]);
	return 0;
}

/* ------------------------------------------------------------------------------------------ */
/* Path names */

static void test_path_names(void **state)
{
	static const char *const names[DMAIO_PATH_COUNT] = {
		"auto",	   "rw-file",  "uring-dmabuf", "udmabuf-direct", "bounce-direct",
		"buffered", "sendfile",
	};
	static const char *const bad_names[] = {
		"",	 "bogus", "buffere", "bufferedx", "buffered ", " auto", "auto\n", "rw_file",
		"7",	 "-1",
	};
	const int bad_values[] = { -1, DMAIO_PATH_COUNT, DMAIO_PATH_COUNT + 1, 15, 16, 100,
				   INT_MAX, INT_MIN };
	unsigned before = test_failures();
	int i;
	size_t k;

	(void)state;
	for (i = 0; i < DMAIO_PATH_COUNT; i++) {
		const char *n = dmaio_path_name(i);

		ncases++;
		if (!n || strcmp(n, names[i]) != 0) {
			test_fail("dmaio_path_name(%d) = %s, expected %s", i, n ? n : "NULL",
				  names[i]);
			continue;
		}
		ncases++;
		if (dmaio_path_from_name(n) != i)
			test_fail("dmaio_path_from_name(\"%s\") = %d, expected %d", n,
				  dmaio_path_from_name(n), i);
	}
	for (k = 0; k < ARRAY_SIZE(bad_values); k++) {
		ncases++;
		if (dmaio_path_name(bad_values[k]) != NULL)
			test_fail("dmaio_path_name(%d) = \"%s\", expected NULL", bad_values[k],
				  dmaio_path_name(bad_values[k]));
	}
	CASE(-EINVAL, dmaio_path_from_name(NULL));
	for (k = 0; k < ARRAY_SIZE(bad_names); k++) {
		int fd0 = test_count_fds();
		char d[64];

		snprintf(d, sizeof(d), "dmaio_path_from_name(\"%s\")", bad_names[k]);
		verdict(d, dmaio_path_from_name(bad_names[k]), -EINVAL, 0, fd0);
	}
	assert_no_failures_since(before);
}

/* ------------------------------------------------------------------------------------------ */
/* Contexts, allocation, import, buffer accessors */

static bool host_has_no_provider(void)
{
	return access("/dev/dma_heap", F_OK) != 0 && access("/dev/udmabuf", F_OK) != 0 &&
	       access("/dev/dri", F_OK) != 0;
}

static void alloc_case(const char *heap, size_t size, unsigned flags, long exp, long exp2)
{
	struct dmaio_buf *sentinel = (struct dmaio_buf *)(uintptr_t)0x1234;
	struct dmaio_buf *b = sentinel;
	char desc[200];
	int fd0 = test_count_fds();
	long rc;

	snprintf(desc, sizeof(desc), "dmaio_buf_alloc(heap %s%.70s%s, size %zu, flags %#x)",
		 heap ? "\"" : "", heap ? heap : "NULL", heap ? "\"" : "", size, flags);
	rc = t_alloc(E.ctx, heap, size, flags, &b);
	if (rc == 0 && b != sentinel)
		dmaio_buf_free(b);
	verdict(desc, rc, exp, exp2, fd0);
	/* "a failed check changes nothing": the out pointer included */
	if (rc < 0 && b != sentinel)
		test_fail("%s failed with %s but wrote *buf = %p", desc, ename(rc), (void *)b);
}

static void test_alloc_args(void **state)
{
	char longname[128];
	struct dmaio_buf *b = NULL;
	unsigned before = test_failures();

	(void)state;
	CASE(-EINVAL, dmaio_ctx_new(0, NULL));
	CASE(-EINVAL, t_alloc(E.ctx, "memfd", 4096, 0, NULL));
	CASE(-EINVAL, t_alloc(NULL, "memfd", 4096, 0, NULL));
	CASE(-EINVAL, t_alloc(E.ctx, NULL, 4096, 0, NULL));
	alloc_case("memfd", 4096, 1u << 30, -EINVAL, 0);
	alloc_case("memfd", 4096, 1u << 31, -EINVAL, 0);
	alloc_case("memfd", 4096, ~0u, -EINVAL, 0);
	alloc_case("memfd", 4096, ~DMAIO_ALLOC_FLAGS_ALL, -EINVAL, 0);
	alloc_case(NULL, 4096, 1u << 5, -EINVAL, 0);
	alloc_case("memfd", 0, 0, -EINVAL, 0);
	alloc_case(NULL, 0, 0, -EINVAL, 0);
	alloc_case("system", 0, 0, -EINVAL, 0);
	alloc_case("", 4096, 0, -EINVAL, 0);
	memset(longname, 'a', sizeof(longname));
	longname[64] = 0;
	alloc_case(longname, 4096, 0, -EINVAL, 0); /* 64 chars */
	longname[100] = 0;
	longname[64] = 'a';
	alloc_case(longname, 4096, 0, -EINVAL, 0); /* 100 chars */
	longname[63] = 0;
	alloc_case(longname, 4096, 0, -ENOENT, 0); /* 63 chars: valid, unknown */
	alloc_case("a/b", 4096, 0, -EINVAL, 0);
	alloc_case("/", 4096, 0, -EINVAL, 0);
	alloc_case("system/", 4096, 0, -EINVAL, 0);
	alloc_case("/system", 4096, 0, -EINVAL, 0);
	alloc_case("..", 4096, 0, -EINVAL, 0);
	alloc_case("../system", 4096, 0, -EINVAL, 0);
	alloc_case("a..b", 4096, 0, -EINVAL, 0);
	alloc_case("...", 4096, 0, -EINVAL, 0);
	alloc_case(".", 4096, 0, -ENOENT, 0);
	alloc_case("no-such-heap-xyz", 4096, 0, -ENOENT, 0);
	alloc_case("MEMFD", 4096, 0, -ENOENT, 0);
	alloc_case("memfd", 4096, DMAIO_ALLOC_DMABUF_ONLY, -EOPNOTSUPP, 0);
	alloc_case("memfd", SIZE_MAX, 0, -EOVERFLOW, 0);
	alloc_case("memfd", SIZE_MAX - 100, 0, -EOVERFLOW, 0);
	/* page-rounded but beyond any file size: documented errnos only */
	alloc_case("memfd", SIZE_MAX & ~(size_t)0xfffff, 0, -EOVERFLOW, -EFBIG);
	if (host_has_no_provider()) {
		alloc_case(NULL, 4096, 0, -ENODEV, 0);
		alloc_case(NULL, 4096, DMAIO_ALLOC_DMABUF_ONLY, -ENODEV, 0);
		/* ALLOW_NON_DMABUF: a memfd */
		ncases++;
		if (t_alloc(E.ctx, NULL, 4096, DMAIO_ALLOC_ALLOW_NON_DMABUF, &b) != 0) {
			test_fail("dmaio_buf_alloc(NULL, ALLOW_NON_DMABUF) failed without providers");
		} else {
			if (dmaio_buf_kind(b) != DMAIO_BUF_MEMFD)
				test_fail("dmaio_buf_alloc(NULL, ALLOW_NON_DMABUF): kind %d",
					  dmaio_buf_kind(b));
			dmaio_buf_free(b);
		}
	} else {
		printf("# device nodes present: heap NULL -ENODEV cases not run\n");
	}
	assert_no_failures_since(before);
}

static void import_case(int fd, unsigned flags, long exp, const char *fdname)
{
	struct dmaio_buf *sentinel = (struct dmaio_buf *)(uintptr_t)0x1234;
	struct dmaio_buf *b = sentinel;
	char desc[160];
	int fd0 = test_count_fds();
	long rc;

	bool was_open = fd >= 0 && fcntl(fd, F_GETFD) >= 0;

	snprintf(desc, sizeof(desc), "dmaio_buf_import(fd %s, flags %#x)", fdname, flags);
	rc = dmaio_buf_import(E.ctx, fd, flags, &b);
	if (rc == 0 && b != sentinel)
		dmaio_buf_free(b);
	verdict(desc, rc, exp, 0, fd0);
	if (rc < 0 && b != sentinel)
		test_fail("%s failed with %s but wrote *buf = %p", desc, ename(rc), (void *)b);
	/* the caller's fd is untouched */
	if (was_open && fcntl(fd, F_GETFD) < 0)
		test_fail("%s closed the caller's fd", desc);
}

static void test_import_args(void **state)
{
	unsigned before = test_failures();

	(void)state;
	CASE(-EINVAL, dmaio_buf_import(E.ctx, E.rw, 0, NULL));
	CASE(-EINVAL, dmaio_buf_import(NULL, E.memfd, 0, NULL));
	import_case(E.rw, 1, -EINVAL, "file");
	import_case(E.rw, ~0u, -EINVAL, "file");
	import_case(-1, 0, -EBADF, "-1");
	import_case(-100, 0, -EBADF, "-100");
	import_case(INT_MIN, 0, -EBADF, "INT_MIN");
	import_case(CLOSED_FD, 0, -EBADF, "closed");
	import_case(INT_MAX, 0, -EBADF, "INT_MAX");
	import_case(E.rw, 0, -ENOTTY, "regular file");
	import_case(E.ro, 0, -ENOTTY, "regular file ro");
	import_case(E.dir, 0, -ENOTTY, "directory");
	import_case(E.pipe_r, 0, -ENOTTY, "pipe");
	import_case(E.sock, 0, -ENOTTY, "socket");
	import_case(E.efd, 0, -ENOTTY, "eventfd");
	import_case(E.memfd, 0, -ENOTTY, "memfd");
	import_case(E.devnull, 0, -ENOTTY, "/dev/null");
	import_case(dmaio_buf_fd(E.buf), 0, -ENOTTY, "memfd-kind buffer fd");
	assert_no_failures_since(before);
}

static void test_buf_args(void **state)
{
	struct dmaio_stats st = { .struct_size = sizeof(struct dmaio_stats) };
	void *a = NULL, *a2 = NULL;
	unsigned before = test_failures();
	int fl;

	(void)state;
	/* NULL buffer everywhere */
	CASE(-EINVAL, dmaio_buf_fd(NULL));
	CASE(-EINVAL, dmaio_buf_size(NULL));
	CASE(-EINVAL, dmaio_buf_kind(NULL));
	CASE(0, dmaio_buf_provider(NULL) != NULL);
	CASE(-EINVAL, dmaio_buf_map(NULL, &a));
	CASE(-EINVAL, dmaio_buf_map(NULL, NULL));
	CASE(-EINVAL, dmaio_buf_map(E.buf, NULL));
	CASE(-EINVAL, dmaio_buf_unmap(NULL));
	CASE(-EINVAL, dmaio_buf_sync_begin(NULL, DMAIO_SYNC_READ));
	CASE(-EINVAL, dmaio_buf_sync_end(NULL, DMAIO_SYNC_READ));
	CASE(-EINVAL, dmaio_buf_get_stats(NULL, &st));
	CASE(-EINVAL, dmaio_buf_get_stats(E.buf, NULL));
	CASE(-EINVAL, dmaio_buf_get_stats(NULL, NULL));
	CASE(-EINVAL, dmaio_ctx_get_stats(E.ctx, NULL));
	CASE(-EINVAL, dmaio_ctx_get_stats(NULL, NULL));
	CASE(0, dmaio_ctx_get_stats(NULL, &st));
	CASE(0, (dmaio_buf_free(NULL), 0));
	CASE(0, (dmaio_ctx_free(NULL), 0));

	/* sync directions */
	CASE(-EINVAL, dmaio_buf_sync_begin(E.buf, 0));
	CASE(-EINVAL, dmaio_buf_sync_end(E.buf, 0));
	CASE(-EINVAL, dmaio_buf_sync_begin(E.buf, 4));
	CASE(-EINVAL, dmaio_buf_sync_end(E.buf, 4));
	CASE(-EINVAL, dmaio_buf_sync_begin(E.buf, DMAIO_SYNC_RW | 4));
	CASE(-EINVAL, dmaio_buf_sync_end(E.buf, DMAIO_SYNC_RW | 8));
	CASE(-EINVAL, dmaio_buf_sync_begin(E.buf, 1u << 31));
	CASE(-EINVAL, dmaio_buf_sync_end(E.buf, ~0u));
	CASE(0, dmaio_buf_sync_begin(E.buf, DMAIO_SYNC_READ));
	CASE(0, dmaio_buf_sync_end(E.buf, DMAIO_SYNC_READ));
	CASE(0, dmaio_buf_sync_begin(E.buf, DMAIO_SYNC_WRITE));
	CASE(0, dmaio_buf_sync_end(E.buf, DMAIO_SYNC_WRITE));
	CASE(0, dmaio_buf_sync_begin(E.buf, DMAIO_SYNC_RW));
	CASE(0, dmaio_buf_sync_end(E.buf, DMAIO_SYNC_RW));

	/* accessors of a memfd buffer */
	CASE(DMAIO_BUF_MEMFD, dmaio_buf_kind(E.buf));
	CASE(BUF_SIZE, dmaio_buf_size(E.buf));
	CASE(0, strcmp(dmaio_buf_provider(E.buf), "memfd"));
	fl = fcntl(dmaio_buf_fd(E.buf), F_GETFD);
	CASE(FD_CLOEXEC, fl >= 0 ? (fl & FD_CLOEXEC) : -1);

	/* dmaio_buf_get_info (1.1): its checks, then a memfd buffer's facts */
	{
		struct dmaio_buf_info info = { .struct_size = sizeof(info) };
		struct dmaio_buf *b = NULL;
		struct stat sst;

		CASE(-EINVAL, dmaio_buf_get_info(NULL, &info));
		CASE(-EINVAL, dmaio_buf_get_info(E.buf, NULL));
		info.struct_size = DMAIO_SIZE_BUF_INFO - 1;
		CASE(-EINVAL, dmaio_buf_get_info(E.buf, &info));
		info.struct_size = 0;
		CASE(-EINVAL, dmaio_buf_get_info(E.buf, &info));
		info.struct_size = 1u << 20;
		CASE(-EINVAL, dmaio_buf_get_info(E.buf, &info));
		info.struct_size = sizeof(info);
		/* not mapped yet: the trial mapping answers and leaves it unmapped */
		assert_int_equal(t_alloc(E.ctx, "memfd", 3 * 4096 + 5, 0, &b), 0);
		CASE(0, dmaio_buf_get_info(b, &info));
		CASE(sizeof(info), info.struct_size);
		CASE(DMAIO_BUF_MEMFD, info.kind);
		CASE(3 * 4096 + 5, info.size);
		CASE(0, fstat(dmaio_buf_fd(b), &sst));
		CASE(1, info.inode == (uint64_t)sst.st_ino);
		CASE(DMAIO_CAP_YES, info.mmap);
		CASE(0, info.mmap_err);
		CASE(0, strcmp(info.provider, "memfd"));
		CASE(0, strcmp(info.exporter, ""));
		CASE(0, strcmp(info.name, ""));
		CASE(-ENOENT, dmaio_buf_unmap(b));
		dmaio_buf_free(b);
	}

	/* mapping twice: same address; unmap when not mapped: -ENOENT */
	CASE(0, dmaio_buf_map(E.buf, &a2));
	CASE(1, a2 == (void *)E.map);
	{
		struct dmaio_buf *b = NULL;
		void *m = NULL;

		assert_int_equal(t_alloc(E.ctx, "memfd", 12345, 0, &b), 0);
		CASE(12345, dmaio_buf_size(b));
		CASE(-ENOENT, dmaio_buf_unmap(b));
		CASE(0, dmaio_buf_map(b, &m));
		pat_fill(m, 12345, SEED_BUF, 0);
		CASE(0, dmaio_buf_unmap(b));
		CASE(-ENOENT, dmaio_buf_unmap(b));
		m = NULL;
		CASE(0, dmaio_buf_map(b, &m));
		/* the data lives in the buffer, not in the mapping */
		CASE(-1, m ? pat_check(m, 12345, SEED_BUF, 0) : 0);
		CASE(0, dmaio_buf_get_stats(b, &st));
		CASE(0, (long)(st.ops + st.bytes_read + st.bytes_written + st.errors));
		CASE(DMAIO_PATH_AUTO, st.last_path);
		dmaio_buf_free(b); /* mapped: free unmaps */
	}
	{
		/* a mapping the library makes for its own I/O is not the caller's */
		struct dmaio_buf *b = NULL;
		int fd = test_tmpfile(NULL, NULL, 0);

		assert_int_equal(file_fill_pattern(fd, 0, 8192, SEED_FILE), 0);
		assert_int_equal(t_alloc(E.ctx, "memfd", 8192, 0, &b), 0);
		CASE(8000, dmaio_fd_read(fd, 3, b, 1, 8000, DMAIO_RW_PATH(DMAIO_PATH_BUFFERED) | DMAIO_RW_NO_FALLBACK, NULL));
		CASE(-ENOENT, dmaio_buf_unmap(b));
		dmaio_buf_free(b);
		close(fd);
	}
	assert_no_failures_since(before);
}

/* ------------------------------------------------------------------------------------------ */
/* read / write / _ex / choose_path */

enum rwv { RD, WR, RD_EX, WR_EX, CH_RD, CH_WR, NV };
static const char *const rwv_name[NV] = { "read_file", "write_file", "read_file_ex",
					  "write_file_ex", "choose_path(read)",
					  "choose_path(write)" };

static bool is_write(enum rwv v)
{
	return v == WR || v == WR_EX || v == CH_WR;
}

static void rw_case(enum rwv v, long exp, long exp2, struct dmaio_buf *b, size_t boff,
		    const char *fdname, int fd, off_t foff, size_t len, unsigned flags)
{
	struct dmaio_stats st0 = { .struct_size = sizeof(struct dmaio_stats) }, st1 = { .struct_size = sizeof(struct dmaio_stats) };
	struct dmaio_xfer x = { .struct_size = sizeof(struct dmaio_xfer) };
	char desc[256], why[128];
	int fd0 = test_count_fds();
	long rc = 0;

	memset(&st0, 0, sizeof(st0));
	st0.struct_size = sizeof(st0);
	memset(&st1, 0, sizeof(st1));
	st1.struct_size = sizeof(st1);
	dmaio_buf_get_stats(E.buf, &st0);
	snprintf(desc, sizeof(desc), "dmaio_%s(buf %s, buf_off %zu, fd %s, file_off %lld, "
		 "len %zu, flags %#x)", rwv_name[v], b ? "ok" : "NULL", boff, fdname,
		 (long long)foff, len, flags);
	memset(&x, 0x5a, sizeof(x)); x.struct_size = sizeof(x);
	switch (v) {
	case RD:
		rc = dmaio_fd_read(fd, foff, b, boff, len, flags, NULL);
		break;
	case WR:
		rc = dmaio_fd_write(fd, foff, b, boff, len, flags, NULL);
		break;
	case RD_EX:
		rc = dmaio_fd_read(fd, foff, b, boff, len, flags, &x);
		break;
	case WR_EX:
		rc = dmaio_fd_write(fd, foff, b, boff, len, flags, &x);
		break;
	case CH_RD:
		rc = t_choose_path(b, boff, fd, foff, len, 0, flags, why, sizeof(why));
		break;
	case CH_WR:
		rc = t_choose_path(b, boff, fd, foff, len, 1, flags, why, sizeof(why));
		break;
	default:
		break;
	}
	verdict(desc, rc, exp, exp2, fd0);
	/* "a failed check changes nothing": the buffer's counters included */
	dmaio_buf_get_stats(E.buf, &st1);
	if (rc < 0 && memcmp(&st0, &st1, sizeof(st0)) != 0)
		test_fail(
			"%s: failed with %s but changed the buffer's statistics (ops %llu -> %llu, "
			"errors %llu -> %llu)",
			desc, ename(rc), (unsigned long long)st0.ops, (unsigned long long)st1.ops,
			(unsigned long long)st0.errors, (unsigned long long)st1.errors);
	if ((v == RD_EX || v == WR_EX) && rc < 0 && x.done != 0)
		test_fail("%s: failed with %s but xfer.done = %llu", desc, ename(rc),
			  (unsigned long long)x.done);
	if ((v == RD_EX || v == WR_EX) && rc >= 0 && x.done != (uint64_t)rc)
		test_fail("%s: returned %ld but xfer.done = %llu", desc, rc,
			  (unsigned long long)x.done);
}

static void test_rw_args(void **state)
{
	const size_t S = BUF_SIZE;
	unsigned before = test_failures();
	int v;

	(void)state;
	for (v = 0; v < NV; v++) {
		bool w = is_write(v);
		bool ch = v == CH_RD || v == CH_WR;
		int good = E.rw;
		int wrong_mode = w ? E.ro : E.wo;
		int pipe_end = w ? E.pipe_w : E.pipe_r;

		/* buffer, flags, offsets */
		rw_case(v, -EINVAL, 0, NULL, 0, "file", good, 0, 16, 0);
		rw_case(v, -EINVAL, 0, NULL, 0, "file", good, 0, 0, 0);
		rw_case(v, -EINVAL, 0, E.buf, 0, "file", good, 0, 16, 1u << 5);
		rw_case(v, -EINVAL, 0, E.buf, 0, "file", good, 0, 16, 1u << 31);
		rw_case(v, -EINVAL, 0, E.buf, 0, "file", good, 0, 16, ~0u);
		rw_case(v, -EINVAL, 0, E.buf, 0, "file", good, 0, 16, ~DMAIO_RW_FLAGS_ALL);
		/* path values that name no path */
		rw_case(v, -EINVAL, 0, E.buf, 0, "file", good, 0, 16, DMAIO_RW_PATH(7));
		rw_case(v, -EINVAL, 0, E.buf, 0, "file", good, 0, 16, DMAIO_RW_PATH(15));
		rw_case(v, -EINVAL, 0, E.buf, 0, "file", good, 0, 16,
			DMAIO_RW_PATH(9) | DMAIO_RW_NO_FALLBACK);
		rw_case(v, -EOVERFLOW, 0, E.buf, 0, "file", good, -1, 16, 0);
		rw_case(v, -EOVERFLOW, 0, E.buf, 0, "file", good, -4096, 0, 0);
		rw_case(v, -EOVERFLOW, 0, E.buf, 0, "file", good, INT64_MIN, 16, 0);
		/* ranges past the buffer */
		rw_case(v, -EINVAL, 0, E.buf, S, "file", good, 0, 1, 0);
		rw_case(v, -EINVAL, 0, E.buf, S + 1, "file", good, 0, 0, 0);
		rw_case(v, -EINVAL, 0, E.buf, 0, "file", good, 0, S + 1, 0);
		rw_case(v, -EINVAL, 0, E.buf, 1, "file", good, 0, S, 0);
		rw_case(v, -EINVAL, 0, E.buf, S - 1, "file", good, 0, 2, 0);
		rw_case(v, -EINVAL, 0, E.buf, 1ul << 40, "file", good, 0, 16, 0);
		rw_case(v, -EINVAL, 0, E.buf, 4096, "file", good, 0, 1ul << 40, 0);
		/* overflows */
		rw_case(v, -EOVERFLOW, 0, E.buf, SIZE_MAX, "file", good, 0, 1, 0);
		rw_case(v, -EOVERFLOW, 0, E.buf, 1, "file", good, 0, SIZE_MAX, 0);
		rw_case(v, -EOVERFLOW, 0, E.buf, SIZE_MAX - 3, "file", good, 0, 8, 0);
		rw_case(v, -EOVERFLOW, 0, E.buf, 0, "file", good, INT64_MAX, 1, 0);
		rw_case(v, -EOVERFLOW, 0, E.buf, 0, "file", good, INT64_MAX - 8, 16, 0);
		/* off_t overflow and range past the buffer at once: either documented errno */
		rw_case(v, -EOVERFLOW, -EINVAL, E.buf, 0, "file", good, 1, (size_t)INT64_MAX, 0);
		rw_case(v, -EOVERFLOW, -EINVAL, E.buf, 0, "file", good, 0, SIZE_MAX, 0);
		/* bad fds */
		rw_case(v, -EBADF, 0, E.buf, 0, "-1", -1, 0, 16, 0);
		rw_case(v, -EBADF, 0, E.buf, 0, "-1", -1, 0, 0, 0);
		rw_case(v, -EBADF, 0, E.buf, 0, "INT_MIN", INT_MIN, 0, 16, 0);
		rw_case(v, -EBADF, 0, E.buf, 0, "closed", CLOSED_FD, 0, 16, 0);
		rw_case(v, -EBADF, 0, E.buf, 0, "INT_MAX", INT_MAX, 0, 16, 0);
		rw_case(v, -EBADF, 0, E.buf, 0, w ? "O_RDONLY" : "O_WRONLY", wrong_mode, 0, 16, 0);
		rw_case(v, -EBADF, 0, E.buf, 0, w ? "O_RDONLY" : "O_WRONLY", wrong_mode, 0, 0, 0);
		rw_case(v, -EBADF, 0, E.buf, 0, "O_PATH", E.opath, 0, 16, 0);
		rw_case(v, -EBADF, 0, E.buf, 0, "O_PATH", E.opath, 0, 0, 0);
		if (w) {
			rw_case(v, -EBADF, 0, E.buf, 0, "O_WRONLY|O_APPEND", E.app_wo, 0, 16, 0);
			rw_case(v, -EBADF, 0, E.buf, 0, "O_RDWR|O_APPEND", E.app_rw, 100, 16, 0);
			rw_case(v, -EBADF, 0, E.buf, 0, "O_RDWR|O_APPEND", E.app_rw, 0, 0,
				DMAIO_RW_PATH(DMAIO_PATH_BUFFERED));
		}
		rw_case(v, -EISDIR, 0, E.buf, 0, "directory", E.dir, 0, 16, 0);
		rw_case(v, -ESPIPE, 0, E.buf, 0, "pipe", pipe_end, 0, 16, 0);
		rw_case(v, -ESPIPE, 0, E.buf, 0, "pipe", pipe_end, 0, 0, 0);
		rw_case(v, -ESPIPE, 0, E.buf, 0, "socket", E.sock, 0, 16, 0);
		if (w)
			rw_case(v, -EINVAL, -ESPIPE, E.buf, 0, "eventfd", E.efd, 0, 16, 0);
		else
			rw_case(v, -EINVAL, 0, E.buf, 0, "eventfd", E.efd, 0, 16, 0);
		/* with a forced path: the same checks come first */
		rw_case(v, -EBADF, 0, E.buf, 0, "-1", -1, 0, 16,
			DMAIO_RW_PATH(DMAIO_PATH_BUFFERED) | DMAIO_RW_NO_FALLBACK);
		rw_case(v, -EINVAL, 0, E.buf, S, "file", good, 0, 16,
			DMAIO_RW_PATH(DMAIO_PATH_SENDFILE) | DMAIO_RW_NO_FALLBACK);
		rw_case(v, -EISDIR, 0, E.buf, 0, "directory", E.dir, 0, 16,
			DMAIO_RW_PATH(DMAIO_PATH_UDMABUF_DIRECT));

		/* valid edges: len 0 returns 0 after the checks, ranges ending at the end */
		if (!ch) {
			rw_case(v, 0, 0, E.buf, 0, "file", w ? E.rw : E.ro, 0, 0, 0);
			rw_case(v, 0, 0, E.buf, S, "file", w ? E.rw : E.ro, 0, 0, 0);
			rw_case(v, 0, 0, E.buf, 7, "file", w ? E.wo : E.rw, 1ll << 40, 0, 0);
			if (!w) {
				/* a read at EOF returns 0 and writes nothing */
				rw_case(v, 0, 0, E.buf, 0, "file", E.ro, FILE_SIZE, 16, 0);
				rw_case(v, 0, 0, E.buf, S - 16, "file", E.ro, FILE_SIZE + 1000, 16,
					0);
			}
		}
	}
	assert_no_failures_since(before);
}

/* Valid edge cases that move data: checked separately (the guards change on purpose). */
static void test_rw_edges(void **state)
{
	struct dmaio_buf *b = NULL;
	uint8_t *m = NULL;
	char path[PATH_MAX];
	int fd;
	ssize_t r;

	(void)state;
	fd = test_tmpfile(NULL, path, sizeof(path));
	assert_int_equal(file_fill_pattern(fd, 0, 8192, SEED_FILE), 0);
	assert_int_equal(t_alloc(E.ctx, "memfd", 4099, 0, &b), 0);
	assert_int_equal(dmaio_buf_map(b, (void **)&m), 0);
	pat_fill(m, 4099, SEED_GUARD, 0);
	/* the last byte of the buffer (size not a page multiple) */
	r = dmaio_fd_read(fd, 77, b, 4098, 1, 0, NULL);
	assert_int_equal(r, 1);
	assert_int_equal(m[4098], pat_byte(SEED_FILE, 77));
	assert_int_equal(pat_check(m, 4098, SEED_GUARD, 0), -1);
	/* the whole buffer */
	r = dmaio_fd_read(fd, 3, b, 0, 4099, 0, NULL);
	assert_int_equal(r, 4099);
	assert_int_equal(pat_check(m, 4099, SEED_FILE, 3), -1);
	/* write the last byte */
	r = dmaio_fd_write(fd, 9000, b, 4098, 1, 0, NULL);
	assert_int_equal(r, 1);
	{
		struct stat st;
		uint8_t c = 0;

		assert_int_equal(fstat(fd, &st), 0);
		assert_int_equal(st.st_size, 9001);
		assert_int_equal(pread(fd, &c, 1, 9000), 1);
		assert_int_equal(c, pat_byte(SEED_FILE, 3 + 4098));
		assert_int_equal(file_check_zero(fd, 8192, 9000 - 8192), -1);
	}
	ncases += 3;
	dmaio_buf_free(b);
	close(fd);
	unlink(path);
}

/* ------------------------------------------------------------------------------------------ */
/* Probes */

/* dmaio_fd_choose_path(): its op, its reason */
static void test_choose_args(void **state)
{
	struct dmaio_reason why = { .struct_size = sizeof(why) };
	unsigned before = test_failures();
	int p;

	(void)state;
	CASE(-EINVAL, dmaio_fd_choose_path(E.rw, 0, E.buf, 0, 16, 0, 0, NULL));
	CASE(-EINVAL, dmaio_fd_choose_path(E.rw, 0, E.buf, 0, 16, 3, 0, NULL));
	CASE(-EINVAL, dmaio_fd_choose_path(E.rw, 0, NULL, 0, 16, DMAIO_OP_READ, 0, &why));
	CASE(-EBADF, dmaio_fd_choose_path(-1, 0, E.buf, 0, 16, DMAIO_OP_READ, 0, &why));
	CASE(-EBADF, dmaio_fd_choose_path(E.ro, 0, E.buf, 0, 16, DMAIO_OP_WRITE, 0, &why));
	CASE(-EBADF, dmaio_fd_choose_path(E.wo, 0, E.buf, 0, 16, DMAIO_OP_READ, 0, &why));
	CASE(-EOVERFLOW, dmaio_fd_choose_path(E.rw, UINT64_MAX, E.buf, 0, 16, DMAIO_OP_READ, 0,
					      &why));
	CASE(-EINVAL, dmaio_fd_choose_path(E.rw, 0, E.buf, 0, 16, DMAIO_OP_READ,
					   DMAIO_RW_PATH(17), &why));
	why.struct_size = DMAIO_SIZE_REASON - 1;
	CASE(-EINVAL, dmaio_fd_choose_path(E.rw, 0, E.buf, 0, 16, DMAIO_OP_READ, 0, &why));
	why.struct_size = sizeof(why);
	p = dmaio_fd_choose_path(E.rw, 0, E.buf, 0, 16, DMAIO_OP_READ, 0, &why);
	if (p <= DMAIO_PATH_AUTO || p >= DMAIO_PATH_COUNT || !why.text[0] || why.error)
		test_fail("dmaio_fd_choose_path(read 16 bytes) = %s, reason \"%s\" (error %d)",
			  test_errname(p), why.text, why.error);
	p = dmaio_fd_choose_path(E.rw, 0, E.buf, 0, 16, DMAIO_OP_WRITE,
				 DMAIO_RW_PATH(DMAIO_PATH_BUFFERED) | DMAIO_RW_NO_FALLBACK, &why);
	if (p != DMAIO_PATH_BUFFERED)
		test_fail("dmaio_fd_choose_path(write, forced buffered) = %s (%s)", test_errname(p),
			  why.text);
	assert_no_failures_since(before);
}

static void test_probe_args(void **state)
{
	struct dmaio_sys_info si = { .struct_size = sizeof(struct dmaio_sys_info) };
	struct dmaio_proposed_info pi = { .struct_size = sizeof(pi) };
	struct {
		struct dmaio_heap_info hi;
		struct dmaio_heap_proposed hp;
	} hsz = { { .struct_size = sizeof(hsz.hi) }, { .struct_size = sizeof(hsz.hp) } };
	struct t_heap_info hi[2];
	struct dmaio_file_info fi = { .struct_size = sizeof(struct dmaio_file_info) };
	unsigned before = test_failures();

	(void)state;
	CASE(-EINVAL, dmaio_ctx_get_system(E.ctx, NULL));
	CASE(-EINVAL, dmaio_ctx_get_system(NULL, NULL));
	CASE(0, dmaio_ctx_get_system(E.ctx, &si));
	CASE(1, dmaio_ctx_heap_count(E.ctx) >= 0);
	CASE(1, dmaio_ctx_heap_count(NULL) >= 0);
	CASE(-EINVAL, dmaio_ctx_get_heap(E.ctx, 0, NULL));
	CASE(-EINVAL, dmaio_ctx_get_heap_proposed(E.ctx, 0, NULL));
	CASE(-ERANGE, dmaio_ctx_get_heap(E.ctx, UINT32_MAX, &hsz.hi));
	CASE(-ERANGE, dmaio_ctx_get_heap_proposed(E.ctx, UINT32_MAX, &hsz.hp));
	CASE(-ERANGE, dmaio_ctx_get_heap(E.ctx, (uint32_t)dmaio_ctx_heap_count(E.ctx), &hsz.hi));
	hsz.hi.struct_size = DMAIO_SIZE_HEAP_INFO - 1;
	CASE(-EINVAL, dmaio_ctx_get_heap(E.ctx, 0, &hsz.hi));
	hsz.hp.struct_size = 0;
	CASE(-EINVAL, dmaio_ctx_get_heap_proposed(E.ctx, 0, &hsz.hp));
	CASE(-EINVAL, dmaio_ctx_get_proposed(E.ctx, NULL));
	pi.struct_size = DMAIO_SIZE_PROPOSED_INFO - 4;
	CASE(-EINVAL, dmaio_ctx_get_proposed(E.ctx, &pi));
	pi.struct_size = 65537; /* garbage in the field: refused, nothing written */
	CASE(-EINVAL, dmaio_ctx_get_proposed(E.ctx, &pi));
	pi.struct_size = sizeof(pi);
	CASE(0, dmaio_ctx_get_proposed(E.ctx, &pi));
	si.struct_size = 3;
	CASE(-EINVAL, dmaio_ctx_get_system(E.ctx, &si));
	si.struct_size = sizeof(si);
	CASE(1, t_probe_heaps(E.ctx, hi, 2) >= 0);
	CASE(-EINVAL, dmaio_fd_get_info(E.rw, NULL));
	CASE(-EINVAL, dmaio_fd_get_info(-1, NULL));
	CASE(-EBADF, dmaio_fd_get_info(-1, &fi));
	CASE(-EBADF, dmaio_fd_get_info(INT_MIN, &fi));
	CASE(-EBADF, dmaio_fd_get_info(CLOSED_FD, &fi));
	CASE(-EBADF, dmaio_fd_get_info(INT_MAX, &fi));
	CASE(-EISDIR, dmaio_fd_get_info(E.dir, &fi));
	CASE(-ESPIPE, dmaio_fd_get_info(E.pipe_r, &fi));
	CASE(-ESPIPE, dmaio_fd_get_info(E.pipe_w, &fi));
	CASE(-ESPIPE, dmaio_fd_get_info(E.sock, &fi));
	CASE(-ESPIPE, dmaio_fd_get_info(E.devnull, &fi));
	CASE(0, dmaio_fd_get_info(E.rw, &fi));
	CASE(0, dmaio_fd_get_info(E.ro, &fi));
	CASE(0, dmaio_fd_get_info(E.wo, &fi));
	CASE(FILE_SIZE, (dmaio_fd_get_info(E.rw, &fi), (long)fi.file_size));
	assert_no_failures_since(before);
}

/* ------------------------------------------------------------------------------------------ */
/* Close-on-exec and fd leaks, per provider */

#define FDMAX 4096

static const struct {
	const char *heap;
	unsigned flags;
} providers[] = {
	{ "memfd", 0 },	       { NULL, DMAIO_ALLOC_ALLOW_NON_DMABUF },
	{ "system", 0 },       { "cma", 0 },
	{ "udmabuf", 0 },      { "udmabuf-huge", 0 },
	{ "drm", 0 },
};

static void exercise(struct dmaio_ctx *c, const char *heap, unsigned aflags, int *nserved,
		     int *nalloc, int *alloc_rc)
{
	struct dmaio_sys_info si = { .struct_size = sizeof(struct dmaio_sys_info) };
	struct t_heap_info hi[8];
	struct dmaio_file_info fi = { .struct_size = sizeof(struct dmaio_file_info) };
	struct dmaio_buf *b = NULL;
	char path[PATH_MAX];
	void *m = NULL;
	int fd, fdd, p, rc;
	ssize_t r;

	dmaio_ctx_get_system(c, &si);
	t_probe_heaps(c, hi, ARRAY_SIZE(hi));
	rc = t_alloc(c, heap, 256 * KiB + 1, aflags, &b);
	*alloc_rc = rc;
	if (rc) {
		if (!test_is_skip_err(rc) && rc != -ENOMEM)
			test_fail("dmaio_buf_alloc(%s) = %s", heap ? heap : "NULL", ename(rc));
		return;
	}
	(*nalloc)++;
	if (dmaio_buf_map(b, &m) != 0)
		test_fail("dmaio_buf_map(%s) failed", heap ? heap : "NULL");
	fd = test_tmpfile(NULL, path, sizeof(path));
	file_fill_pattern(fd, 0, 256 * KiB + 4097, SEED_FILE);
	fdd = open(path, O_RDWR | O_DIRECT | O_CLOEXEC);
	dmaio_fd_get_info(fd, &fi);
	for (p = 0; p < DMAIO_PATH_COUNT; p++) {
		unsigned fl = p ? DMAIO_RW_PATH(p) | DMAIO_RW_NO_FALLBACK : 0;

		r = dmaio_fd_read(fd, 4095, b, 1, 200 * KiB, fl, NULL);
		if (r == 200 * (ssize_t)KiB)
			(*nserved)++;
		if (fdd >= 0) {
			r = dmaio_fd_read(fdd, 0, b, 0, 256 * KiB, fl, NULL);
			r = dmaio_fd_write(fdd, 0, b, 0, 256 * KiB, fl, NULL);
		}
		r = dmaio_fd_write(fd, 1, b, 3, 128 * KiB, fl, NULL);
		(void)r;
	}
	if (dmaio_buf_kind(b) != DMAIO_BUF_MEMFD) {
		struct dmaio_buf *ib = NULL;
		void *im = NULL;

		rc = dmaio_buf_import(c, dmaio_buf_fd(b), 0, &ib);
		if (rc) {
			test_fail("dmaio_buf_import(fd of a %s buffer) = %s", heap ? heap : "NULL",
				  ename(rc));
		} else {
			dmaio_buf_map(ib, &im);
			r = dmaio_fd_read(fd, 4095, ib, 1, 100 * KiB, 0, NULL);
			if (r != 100 * (ssize_t)KiB)
				test_fail("read into an imported %s buffer = %s",
					  heap ? heap : "NULL", ename(r));
			dmaio_buf_free(ib);
		}
	}
	if (fdd >= 0)
		close(fdd);
	close(fd);
	unlink(path);
	if (m && dmaio_buf_unmap(b) != 0)
		test_fail("dmaio_buf_unmap(%s) failed", heap ? heap : "NULL");
	dmaio_buf_free(b);
}

static void test_cloexec_and_leaks(void **state)
{
	static uint8_t snap[FDMAX / 8];
	unsigned before = test_failures();
	size_t i;

	(void)state;
	for (i = 0; i < ARRAY_SIZE(providers); i++) {
		const char *heap = providers[i].heap;
		struct dmaio_ctx *c = NULL;
		int base, nnew = 0, served = 0, nalloc = 0, off, arc = 0;
		char what[64];

		if (heap && strcmp(heap, "cma") == 0) {
			heap = test_cma_heap();
			if (!heap)
				continue;
		}
		snprintf(what, sizeof(what), "provider %s", heap ? heap : "default");
		base = test_count_fds();
		test_fd_snapshot(snap, FDMAX);
		assert_int_equal(dmaio_ctx_new(0, &c), 0);
		exercise(c, heap, providers[i].flags, &served, &nalloc, &arc);
		off = test_check_new_fds_cloexec(snap, FDMAX, what, &nnew);
		ncases++;
		if (off)
			test_fail("%s: %d fds without FD_CLOEXEC", what, off);
		dmaio_ctx_free(c);
		ncases++;
		if (test_count_fds() != base)
			test_fail("%s: %d fds open before the context, %d after freeing everything",
				  what, base, test_count_fds());
		if (nalloc)
			printf("# %s: %d library fds seen, all close-on-exec; %d paths served\n",
			       what, nnew, served);
		else
			printf("# %s: not available here (dmaio_buf_alloc = %s)\n", what, ename(arc));
	}
	/* the default context keeps its fds; they must be close-on-exec too */
	{
		int nnew = 0, served = 0, nalloc = 0, off, arc = 0;

		test_fd_snapshot(snap, FDMAX);
		exercise(NULL, "memfd", 0, &served, &nalloc, &arc);
		off = test_check_new_fds_cloexec(snap, FDMAX, "default context", &nnew);
		ncases++;
		if (off)
			test_fail("default context: %d fds without FD_CLOEXEC", off);
	}
	assert_no_failures_since(before);
}

/* ------------------------------------------------------------------------------------------ */
/* Environment: DMAIO_PATH and DMAIO_DEBUG, checked in fresh processes */

static int child_fail(const char *fmt, ...)
{
	va_list ap;

	fprintf(stdout, "CHILD FAIL: ");
	va_start(ap, fmt);
	vfprintf(stdout, fmt, ap);
	va_end(ap);
	fputc('\n', stdout);
	return 1;
}

/* Runs in the re-executed child; prints to stdout only (stderr belongs to the library). */
static int env_child(const char *mode)
{
	const char *env = getenv("DMAIO_PATH");
	int want = env ? dmaio_path_from_name(env) : -1;
	struct dmaio_ctx *c = NULL;
	struct dmaio_buf *b = NULL;
	struct dmaio_xfer x = { .struct_size = sizeof(struct dmaio_xfer) };
	char path[PATH_MAX], why[200];
	int fd, errs = 0, cp;
	ssize_t r;

	if (dmaio_ctx_new(0, &c) || t_alloc(c, "memfd", 128 * KiB, 0, &b))
		return child_fail("setup");
	fd = test_tmpfile(NULL, path, sizeof(path));
	file_fill_pattern(fd, 0, 200 * KiB, SEED_FILE);

	if (strcmp(mode, "path") == 0) {
		/* env forces @want; per-call flags win */
		memset(&x, 0, sizeof(x));
		x.struct_size = sizeof(x);
		r = dmaio_fd_read(fd, 4097, b, 1, 100 * KiB, 0, &x);
		if (r != 100 * (ssize_t)KiB || (int)x.path != want)
			errs += child_fail("DMAIO_PATH=%s: read = %s, xfer.path %s", env,
					   test_errname(r), dmaio_path_name(x.path));
		r = dmaio_fd_write(fd, 4097, b, 1, 100 * KiB, 0, &x);
		if (r != 100 * (ssize_t)KiB || (int)x.path != want)
			errs += child_fail("DMAIO_PATH=%s: write = %s, xfer.path %s", env,
					   test_errname(r), dmaio_path_name(x.path));
		r = dmaio_fd_read(fd, 4097, b, 1, 100 * KiB, DMAIO_RW_NO_FALLBACK, &x);
		if (r != 100 * (ssize_t)KiB || (int)x.path != want)
			errs += child_fail("DMAIO_PATH=%s + NO_FALLBACK: read = %s, xfer.path %s",
					   env, test_errname(r), dmaio_path_name(x.path));
		cp = t_choose_path(b, 1, fd, 4097, 100 * KiB, 0, 0, why, sizeof(why));
		if (cp != want)
			errs += child_fail("DMAIO_PATH=%s: choose_path = %s (%s)", env,
					   test_errname(cp), why);
		{
			int other = want == DMAIO_PATH_BUFFERED ? DMAIO_PATH_SENDFILE :
								  DMAIO_PATH_BUFFERED;

			r = dmaio_fd_read(fd, 4097, b, 1, 100 * KiB, DMAIO_RW_PATH(other) | DMAIO_RW_NO_FALLBACK, &x);
			if (r != 100 * (ssize_t)KiB || (int)x.path != other)
				errs += child_fail("DMAIO_PATH=%s, flag %s: read = %s, "
						   "xfer.path %s", env, dmaio_path_name(other),
						   test_errname(r), dmaio_path_name(x.path));
		}
	} else if (strcmp(mode, "nofallback") == 0) {
		/* env forces rw-file, which cannot serve a memfd */
		memset(&x, 0, sizeof(x));
		x.struct_size = sizeof(x);
		r = dmaio_fd_read(fd, 0, b, 0, 64 * KiB, DMAIO_RW_NO_FALLBACK, &x);
		if (r != -EOPNOTSUPP || x.done != 0)
			errs += child_fail("DMAIO_PATH=%s + NO_FALLBACK: read = %s (done %llu), "
					   "expected -EOPNOTSUPP", env, test_errname(r),
					   (unsigned long long)x.done);
		r = dmaio_fd_write(fd, 0, b, 0, 64 * KiB, DMAIO_RW_NO_FALLBACK, &x);
		if (r != -EOPNOTSUPP)
			errs += child_fail("DMAIO_PATH=%s + NO_FALLBACK: write = %s", env,
					   test_errname(r));
		cp = t_choose_path(b, 0, fd, 0, 64 * KiB, 0, DMAIO_RW_NO_FALLBACK, why,
				       sizeof(why));
		if (cp != -EOPNOTSUPP)
			errs += child_fail("DMAIO_PATH=%s + NO_FALLBACK: choose_path = %s", env,
					   test_errname(cp));
		memset(&x, 0, sizeof(x));
		x.struct_size = sizeof(x);
		r = dmaio_fd_read(fd, 0, b, 0, 64 * KiB, 0, &x);
		if (r != 64 * (ssize_t)KiB || (int)x.path == want || (int)x.path <= 0 || x.fallbacks < 1)
			errs += child_fail("DMAIO_PATH=%s with fallback: read = %s, path %s, "
					   "fallbacks %u", env, test_errname(r),
					   dmaio_path_name(x.path), x.fallbacks);
		r = dmaio_fd_read(fd, 0, b, 0, 64 * KiB, DMAIO_RW_PATH(DMAIO_PATH_BUFFERED) | DMAIO_RW_NO_FALLBACK, &x);
		if (r != 64 * (ssize_t)KiB || x.path != DMAIO_PATH_BUFFERED)
			errs += child_fail("DMAIO_PATH=%s, flag buffered: read = %s, path %s", env,
					   test_errname(r), dmaio_path_name(x.path));
	} else if (strcmp(mode, "debug") == 0) {
		r = dmaio_fd_read(fd, 0, b, 0, 64 * KiB, DMAIO_RW_PATH(DMAIO_PATH_BUFFERED) | DMAIO_RW_NO_FALLBACK, NULL);
		if (r != 64 * (ssize_t)KiB)
			errs += child_fail("debug: read = %s", test_errname(r));
		r = dmaio_fd_read(fd, 0, b, 0, 64 * KiB, DMAIO_RW_PATH(DMAIO_PATH_RW_FILE), NULL);
		if (r != 64 * (ssize_t)KiB)
			errs += child_fail("debug: read with fallback = %s", test_errname(r));
	} else {
		errs += child_fail("unknown mode %s", mode);
	}
	dmaio_buf_free(b);
	dmaio_ctx_free(c);
	close(fd);
	test_cleanup();
	return errs ? 1 : 0;
}

/* Run this program as a child with @env_path/@env_debug; collect its stdout and stderr. */
static int run_child(const char *mode, const char *env_path, const char *env_debug, char *out,
		     size_t outlen, char *err, size_t errlen)
{
	int po[2], pe[2], status = 0;
	ssize_t n;
	size_t o = 0, e = 0;
	pid_t pid;

	assert_int_equal(pipe2(po, O_CLOEXEC), 0);
	assert_int_equal(pipe2(pe, O_CLOEXEC), 0);
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		char *argv[] = { "test-api", "--env-child", (char *)mode, NULL };

		dup2(po[1], 1);
		dup2(pe[1], 2);
		unsetenv("DMAIO_PATH");
		unsetenv("DMAIO_DEBUG");
		if (env_path)
			setenv("DMAIO_PATH", env_path, 1);
		if (env_debug)
			setenv("DMAIO_DEBUG", env_debug, 1);
		execv(self_exe, argv);
		_exit(127);
	}
	close(po[1]);
	close(pe[1]);
	/* small outputs: read stdout then stderr (the child's stderr fits in a pipe) */
	while ((n = read(po[0], out + o, outlen - 1 - o)) > 0 && o < outlen - 1)
		o += (size_t)n;
	while ((n = read(pe[0], err + e, errlen - 1 - e)) > 0 && e < errlen - 1)
		e += (size_t)n;
	out[o] = 0;
	err[e] = 0;
	close(po[0]);
	close(pe[0]);
	waitpid(pid, &status, 0);
	return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

static void test_env(void **state)
{
	static const char *const forced[] = { "buffered", "sendfile", "bounce-direct",
					      "udmabuf-direct" };
	static char out[16384], err[65536];
	unsigned before = test_failures();
	size_t i;
	int rc;

	(void)state;
	for (i = 0; i < ARRAY_SIZE(forced); i++) {
		rc = run_child("path", forced[i], NULL, out, sizeof(out), err, sizeof(err));
		ncases++;
		if (rc != 0)
			test_fail("DMAIO_PATH=%s: child exit %d:\n%s", forced[i], rc, out);
		ncases++;
		if (err[0])
			test_fail("DMAIO_PATH=%s without DMAIO_DEBUG: the library wrote to "
				  "stderr:\n%.500s", forced[i], err);
	}
	/* in this process: a context created after setenv() follows it */
	{
		struct dmaio_ctx *c = NULL;
		struct dmaio_buf *b = NULL;
		struct dmaio_xfer x = { .struct_size = sizeof(struct dmaio_xfer) };
		char path[PATH_MAX];
		int fd;
		ssize_t r;

		setenv("DMAIO_PATH", "sendfile", 1);
		assert_int_equal(dmaio_ctx_new(0, &c), 0);
		unsetenv("DMAIO_PATH");
		assert_int_equal(t_alloc(c, "memfd", 64 * KiB, 0, &b), 0);
		fd = test_tmpfile(NULL, path, sizeof(path));
		assert_int_equal(file_fill_pattern(fd, 0, 64 * KiB, SEED_FILE), 0);
		memset(&x, 0, sizeof(x));
		x.struct_size = sizeof(x);
		r = dmaio_fd_read(fd, 1, b, 0, 60 * KiB, 0, &x);
		ncases++;
		if (r != 60 * (ssize_t)KiB || x.path != DMAIO_PATH_SENDFILE)
			test_fail("setenv(DMAIO_PATH=sendfile) + dmaio_ctx_new: read = %s via %s",
				  ename(r), dmaio_path_name(x.path));
		r = dmaio_fd_read(fd, 1, b, 0, 60 * KiB, DMAIO_RW_PATH(DMAIO_PATH_BUFFERED), &x);
		ncases++;
		if (r != 60 * (ssize_t)KiB || x.path != DMAIO_PATH_BUFFERED)
			test_fail("DMAIO_PATH=sendfile context, flag buffered: read = %s via %s",
				  ename(r), dmaio_path_name(x.path));
		dmaio_buf_free(b);
		dmaio_ctx_free(c);
		close(fd);
		unlink(path);
	}

	rc = run_child("nofallback", "rw-file", NULL, out, sizeof(out), err, sizeof(err));
	ncases++;
	if (rc != 0)
		test_fail("DMAIO_PATH=rw-file: child exit %d:\n%s", rc, out);

	rc = run_child("debug", NULL, "1", out, sizeof(out), err, sizeof(err));
	ncases++;
	if (rc != 0)
		test_fail("DMAIO_DEBUG=1: child exit %d:\n%s", rc, out);
	ncases++;
	if (!strstr(err, "buffered"))
		test_fail("DMAIO_DEBUG=1: stderr does not name the path \"buffered\":\n%.500s",
			  err);
	ncases++;
	if (!strstr(err, "rw-file"))
		test_fail("DMAIO_DEBUG=1: stderr does not mention the refused \"rw-file\":\n%.500s",
			  err);
	printf("# DMAIO_DEBUG=1 output (first lines):\n");
	{
		char *s = err, *nl;
		int k;

		for (k = 0; k < 4 && s && *s; k++) {
			nl = strchr(s, '\n');
			printf("#   %.*s\n", nl ? (int)(nl - s) : (int)strlen(s), s);
			s = nl ? nl + 1 : NULL;
		}
	}
	rc = run_child("debug", NULL, NULL, out, sizeof(out), err, sizeof(err));
	ncases++;
	if (rc != 0 || err[0])
		test_fail("without DMAIO_DEBUG: exit %d, stderr:\n%.500s", rc, err);
	rc = run_child("debug", NULL, "0", out, sizeof(out), err, sizeof(err));
	ncases++;
	if (rc != 0 || err[0])
		test_fail("DMAIO_DEBUG=0: exit %d, stderr:\n%.500s", rc, err);
	assert_no_failures_since(before);
}

/* ------------------------------------------------------------------------------------------ */
/* Context statistics add up exactly what the buffers did, freed buffers included */

static void expect_stats(const char *what, const struct dmaio_stats *st, uint64_t ops,
			 uint64_t errors, uint64_t rd, uint64_t wr, uint64_t buffered,
			 uint64_t sendfile)
{
	uint64_t sum = 0;
	int i;

	for (i = 0; i < DMAIO_PATH_COUNT; i++)
		sum += st->path_bytes[i];
	ncases++;
	if (st->ops != ops || st->errors != errors || st->bytes_read != rd ||
	    st->bytes_written != wr || st->path_bytes[DMAIO_PATH_BUFFERED] != buffered ||
	    st->path_bytes[DMAIO_PATH_SENDFILE] != sendfile || sum != rd + wr)
		test_fail("%s: ops %llu errors %llu read %llu written %llu buffered %llu "
			  "sendfile %llu (all paths %llu); expected %llu %llu %llu %llu %llu %llu",
			  what, (unsigned long long)st->ops, (unsigned long long)st->errors,
			  (unsigned long long)st->bytes_read, (unsigned long long)st->bytes_written,
			  (unsigned long long)st->path_bytes[DMAIO_PATH_BUFFERED],
			  (unsigned long long)st->path_bytes[DMAIO_PATH_SENDFILE],
			  (unsigned long long)sum, (unsigned long long)ops,
			  (unsigned long long)errors, (unsigned long long)rd,
			  (unsigned long long)wr, (unsigned long long)buffered,
			  (unsigned long long)sendfile);
}

static void test_ctx_stats_exact(void **state)
{
	const unsigned fb = DMAIO_RW_PATH(DMAIO_PATH_BUFFERED) | DMAIO_RW_NO_FALLBACK;
	const unsigned fs = DMAIO_RW_PATH(DMAIO_PATH_SENDFILE) | DMAIO_RW_NO_FALLBACK;
	const unsigned frw = DMAIO_RW_PATH(DMAIO_PATH_RW_FILE) | DMAIO_RW_NO_FALLBACK;
	struct dmaio_ctx *c = NULL;
	struct dmaio_buf *b1 = NULL, *b2 = NULL;
	struct dmaio_stats st = { .struct_size = sizeof(struct dmaio_stats) }, s1 = { .struct_size = sizeof(struct dmaio_stats) }, s2 = { .struct_size = sizeof(struct dmaio_stats) };
	unsigned before = test_failures();
	int fd;

	(void)state;
	fd = test_tmpfile(NULL, NULL, 0);
	assert_int_equal(file_fill_pattern(fd, 0, 8192, SEED_FILE), 0);
	assert_int_equal(dmaio_ctx_new(0, &c), 0);
	assert_int_equal(dmaio_ctx_get_stats(c, &st), 0);
	expect_stats("new context", &st, 0, 0, 0, 0, 0, 0);
	CASE(DMAIO_PATH_AUTO, st.last_path);
	assert_int_equal(t_alloc(c, "memfd", 4096, 0, &b1), 0);
	assert_int_equal(t_alloc(c, "memfd", 4096, 0, &b2), 0);

	CASE(1000, dmaio_fd_read(fd, 7, b1, 1, 1000, fb, NULL));
	CASE(100, dmaio_fd_read(fd, 8092, b1, 0, 1000, fb, NULL));  /* short at EOF */
	CASE(0, dmaio_fd_read(fd, 9000, b1, 0, 10, fb, NULL));      /* at EOF: an op of 0 bytes */
	CASE(-EOPNOTSUPP, dmaio_fd_read(fd, 0, b2, 0, 10, frw, NULL)); /* an error */
	CASE(500, dmaio_fd_write(fd, 100, b2, 3, 500, fs, NULL));

	assert_int_equal(dmaio_buf_get_stats(b1, &s1), 0);
	assert_int_equal(dmaio_buf_get_stats(b2, &s2), 0);
	expect_stats("buffer 1", &s1, 3, 0, 1100, 0, 1100, 0);
	expect_stats("buffer 2", &s2, 2, 1, 0, 500, 0, 500);
	CASE(DMAIO_PATH_SENDFILE, s2.last_path);
	CASE(500, (long)s2.last_done);
	CASE(0, s2.last_result);
	CASE(0, (long)s1.last_done);
	assert_int_equal(dmaio_ctx_get_stats(c, &st), 0);
	expect_stats("context, buffers alive", &st, 5, 1, 1100, 500, 1100, 500);
	CASE(DMAIO_PATH_SENDFILE, st.last_path);
	CASE(500, (long)st.last_done);
	dmaio_buf_free(b1);
	assert_int_equal(dmaio_ctx_get_stats(c, &st), 0);
	expect_stats("context, one buffer freed", &st, 5, 1, 1100, 500, 1100, 500);
	dmaio_buf_free(b2);
	assert_int_equal(dmaio_ctx_get_stats(c, &st), 0);
	expect_stats("context, both freed", &st, 5, 1, 1100, 500, 1100, 500);
	dmaio_ctx_free(c);
	close(fd);
	assert_no_failures_since(before);
}

static int report(void **state)
{
	(void)state;
	printf("# bad-input and contract cases checked: %u, failures: %u\n", ncases,
	       test_failures());
	return 0;
}

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_path_names),
		cmocka_unit_test(test_alloc_args),
		cmocka_unit_test(test_import_args),
		cmocka_unit_test(test_buf_args),
		cmocka_unit_test(test_rw_args),
		cmocka_unit_test(test_rw_edges),
		cmocka_unit_test(test_choose_args),
		cmocka_unit_test(test_probe_args),
		cmocka_unit_test(test_cloexec_and_leaks),
		cmocka_unit_test(test_env),
		cmocka_unit_test(test_ctx_stats_exact),
	};
	int rc;

	if (argc == 3 && strcmp(argv[1], "--env-child") == 0)
		return env_child(argv[2]);
	/* readlink, not execv("/proc/self/exe"): right under valgrind too */
	{
		ssize_t l = readlink("/proc/self/exe", self_exe, sizeof(self_exe) - 1);

		if (l <= 0)
			snprintf(self_exe, sizeof(self_exe), "%s", argv[0]);
		else
			self_exe[l] = 0;
	}
	/* the environment under test is set per child, never inherited */
	unsetenv("DMAIO_PATH");
	unsetenv("DMAIO_DEBUG");
	setvbuf(stdout, NULL, _IOLBF, 0);
	rc = cmocka_run_group_tests_name("api", tests, setup, teardown);
	report(NULL);
	test_cleanup();
	return rc ? 1 : 0;
}
