// SPDX-License-Identifier: MIT
/*
 * test-vfio: device memory as a libdmaio buffer. A range of a vfio-pci device's BAR exported as
 * a dma-buf (VFIO_DEVICE_FEATURE_DMA_BUF; in the test VM the ivshmem-plain device that
 * tests/vm/run adds on 7.3 and /init binds to vfio-pci, named by DMAIO_TEST_VFIO) and wrapped
 * with dmaio_buf_import(). On a kernel whose VFIO dma-bufs cannot be mapped (mainline 7.3):
 *
 *   import     size, kind and provider as for any import; dmaio_buf_get_info() names the
 *              exporter as /proc/self/fdinfo does and the inode as fstat does, and answers
 *              mmap NO (-ENODEV); dmaio_buf_map() is -ENODEV; naming works; several ranges
 *              make one buffer of their summed size; no descriptor is left behind.
 *   refusals   every read and write (auto, each forced path with and without fallback, through
 *              a queue), at several alignments and across the end of file, refuses: -ENODEV
 *              (auto, fallback) or -EOPNOTSUPP (a forced path that cannot serve, no fallback),
 *              0 bytes done; on the files of DMAIO_TEST_DIRS and on the raw NVMe namespace
 *              (DMAIO_TEST_RAWDEV), where uring-dmabuf is a candidate whose registration of
 *              this dma-buf the kernel refuses. Afterwards the BAR (read through the device fd, a way that is not
 *              the dma-buf's) and the file hold exactly what they held, the file's size too;
 *              no descriptor and no mapping is left behind.
 *   revoke     (mmap on) the device's memory switched off (PCI_COMMAND_MEMORY) by another thread
 *              at 1/6 .. 5/6 of a transfer of 8 MiB - 200 bytes (page-cache edges, O_DIRECT
 *              middle), both ways, auto and each path that can serve: the process never gets
 *              SIGBUS (a handler fails the test), the call returns all of it or -ENXIO with
 *              the bytes before xfer.done moved, each byte after them old or new, nothing
 *              outside the range changed in the BAR or the file; at least one revocation per
 *              case must land during the transfer; off before the call: -ENXIO, nothing moved;
 *              memory back on: transfers work again. Then the series' revoke request (for
 *              good) during a read: -ENXIO then and for every later transfer; the device
 *              still exports.
 *   explain    dmaio_fd_explain_path(): no path can serve, none is chosen, each says why; the
 *              paths through the mapping say that the exporter gives none.
 *   info       dmaio-info --json --dmabuf PID:FD FILE on a buffer this test holds: size, inode,
 *              exporter, mmap "no" (ENODEV), and the read of FILE into it refused (ENODEV).
 *              The tool's path comes from DMAIO_TEST_INFO (tests/meson.build); without the
 *              examples built this part skips.
 *
 * Without DMAIO_TEST_VFIO (the host, kernels other than our 7.3) the test skips (77). With it,
 * a device that cannot be opened or exported is a failure.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <pthread.h>
#include <signal.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "common.h"
#include "vfio.h"

#define BAR 2                     /* ivshmem-plain's memory BAR */
#define WIN_OFF (1 * MiB)         /* the buffer: [WIN_OFF, WIN_OFF + WIN_LEN) of the BAR */
#define WIN_LEN (2 * MiB)
#define GUARD_LEN (4 * MiB)       /* [0, GUARD_LEN) of the BAR is checked: window and around */
#define FILE_LEN (4 * MiB + 123)
#define SEED_BAR 0x626172ull

static struct test_args args;
static struct test_vfio vf;
static struct dmaio_ctx *ctx;
static bool mmap_on; /* the kernel maps VFIO dma-bufs: vfio_dmabuf_mmap=on (the ported series) */

static int export_or_fail(const uint64_t (*ranges)[2], unsigned nr)
{
	int fd = test_vfio_dmabuf(&vf, ranges, nr);

	if (fd < 0)
		fail_msg("VFIO_DEVICE_FEATURE_DMA_BUF of %u range(s) of %s BAR %d: %s", nr, vf.bdf,
			 BAR, test_errname(fd));
	return fd;
}

/* ------------------------------------------------------------------------------------------ */

static void test_import(void **state)
{
	static const uint64_t whole[][2] = { { 0, 0 } };
	static const uint64_t one[][2] = { { WIN_OFF, WIN_LEN } };
	static const uint64_t two[][2] = { { 0, 1 * MiB }, { 8 * MiB, 3 * MiB } };
	struct {
		const uint64_t (*r)[2];
		unsigned nr;
		uint64_t size;
	} cases[] = {
		{ whole, 1, 0 },
		{ one, 1, WIN_LEN },
		{ two, 2, 4 * MiB },
	};
	int fds_before = test_count_fds();

	(void)state;
	for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
		uint64_t wr[1][2] = { { 0, vf.bar_size } };
		const uint64_t (*r)[2] = cases[i].r == whole ? (const uint64_t (*)[2])wr : cases[i].r;
		uint64_t size = cases[i].size ? cases[i].size : vf.bar_size;
		struct dmaio_buf_info info = { .struct_size = sizeof(info) };
		char exp_name[64], name[64];
		struct dmaio_buf *buf = NULL;
		struct stat st;
		void *addr = NULL;
		int fd = export_or_fail(r, cases[i].nr);

		assert_rc_equal(dmaio_buf_import(ctx, fd, 0, &buf), 0);
		assert_rc_equal(dmaio_buf_size(buf), (int64_t)size);
		assert_rc_equal(dmaio_buf_kind(buf), DMAIO_BUF_IMPORTED);
		assert_string_equal(dmaio_buf_provider(buf), "import");
		assert_rc_equal(dmaio_buf_get_info(buf, &info), 0);
		assert_int_equal(info.kind, DMAIO_BUF_IMPORTED);
		assert_int_equal(info.size, size);
		assert_string_equal(info.provider, "import");
		assert_int_equal(fstat(fd, &st), 0);
		assert_int_equal(info.inode, (uint64_t)st.st_ino);
		test_fdinfo(fd, "exp_name", exp_name, sizeof(exp_name));
		assert_true(exp_name[0] != 0);
		assert_string_equal(info.exporter, exp_name);
		assert_string_equal(info.name, "");
		if (mmap_on) {
			/* the ported series: the dma-buf maps (the BAR, uncached) */
			assert_int_equal(info.mmap, DMAIO_CAP_YES);
			assert_rc_equal(info.mmap_err, 0);
			assert_rc_equal(dmaio_buf_map(buf, &addr), 0);
			assert_non_null(addr);
			assert_rc_equal(dmaio_buf_unmap(buf), 0);
		} else {
			/* mainline 7.3: VFIO's dma-buf has no mmap */
			assert_int_equal(info.mmap, DMAIO_CAP_NO);
			assert_rc_equal(info.mmap_err, -ENODEV);
			assert_rc_equal(dmaio_buf_map(buf, &addr), -ENODEV);
			assert_null(addr);
		}
		/* the name is the dma-buf core's, whatever the exporter */
		assert_rc_equal(dmaio_buf_set_name(buf, "vfio-bar-test"), 0);
		assert_rc_equal(dmaio_buf_get_info(buf, &info), 0);
		assert_string_equal(info.name, "vfio-bar-test");
		test_fdinfo(fd, "name", name, sizeof(name));
		assert_string_equal(name, "vfio-bar-test");
		print_message("%s BAR %d, %u range(s), %" PRIu64 " bytes: exporter \"%s\", inode %" PRIu64
			      ", mmap %s (%s)\n", vf.bdf, BAR, cases[i].nr, size, info.exporter,
			      info.inode, mmap_on ? "works" : "refused", test_errname(info.mmap_err));
		dmaio_buf_free(buf);
		close(fd);
	}
	assert_int_equal(test_count_fds(), fds_before);
}

/* ------------------------------------------------------------------------------------------ */

struct rcase {
	uint64_t file_off, buf_off, len;
};

static const struct rcase rcases[] = {
	{ 0, 0, WIN_LEN },                        /* the whole buffer, aligned */
	{ 4096, 8192, 64 * KiB },                 /* page aligned */
	{ 1, 3, 4097 },                           /* nothing aligned */
	{ 512, 512, 1 * MiB + 512 },              /* sector aligned, not page aligned */
	{ FILE_LEN - 1000, 0, 4096 },             /* across the end of file */
	{ 100, WIN_LEN - 1, 1 },                  /* the buffer's last byte */
};

/* The errno a refused transfer must give: auto and fallback -ENODEV (no mapping, no other way);
 * a forced path without fallback that cannot serve -EOPNOTSUPP. */
static long want_err(uint32_t flags)
{
	return DMAIO_RW_PATH(flags) != DMAIO_PATH_AUTO && (flags & DMAIO_RW_NO_FALLBACK) ?
	       -EOPNOTSUPP : -ENODEV;
}

static bool bar_intact(const char *after, uint8_t *scratch)
{
	int err = test_vfio_bar_read(&vf, scratch, GUARD_LEN, 0);
	long long bad;

	if (err) {
		test_fail("%s: reading the BAR back through the device fd: %s", after, test_errname(err));
		return false;
	}
	bad = pat_check(scratch, GUARD_LEN, SEED_BAR, 0);
	if (bad >= 0) {
		test_fail("%s: the BAR changed at byte %lld (buffer window [%zu, %zu))", after, bad,
			  WIN_OFF, WIN_OFF + WIN_LEN);
		pat_report("BAR", scratch, GUARD_LEN, SEED_BAR, 0, bad, false);
		return false;
	}
	return true;
}

static bool file_intact(int fd, const char *after)
{
	struct stat st;
	long long bad;

	if (fstat(fd, &st) || (!S_ISBLK(st.st_mode) && st.st_size != (off_t)FILE_LEN)) {
		test_fail("%s: the file's size is %lld, not %zu", after, (long long)st.st_size,
			  (size_t)FILE_LEN);
		return false;
	}
	bad = file_check_pattern(fd, 0, FILE_LEN, SEED_FILE, 0);
	if (bad != -1) {
		test_fail("%s: the file changed at offset %lld", after, bad);
		return false;
	}
	return true;
}

static bool maps_hold_dmabuf(void)
{
	FILE *f = fopen("/proc/self/maps", "re");
	char line[512];
	bool found = false;

	if (!f)
		return false;
	while (fgets(line, sizeof(line), f))
		if (strstr(line, "/dmabuf:"))
			found = true;
	fclose(f);
	return found;
}

/* The target of a matrix: dir a directory (a temp file in it, its path in path, *blk false), or
 * a block device (the raw NVMe namespace, opened read-write, *blk true: the uring-dmabuf path is
 * a candidate there). The fd, or the test fails. */
static int open_target(const char *dir, char *path, size_t path_len, bool *blk)
{
	struct stat st;
	int fd;

	*blk = stat(dir, &st) == 0 && S_ISBLK(st.st_mode);
	fd = *blk ? open(dir, O_RDWR | O_CLOEXEC) : test_tmpfile(dir, path, path_len);
	if (fd < 0)
		fail_msg("open %s: %s", dir, strerror(errno));
	return fd;
}

/* dir: see open_target(); on the raw namespace the kernel refuses to register this dma-buf for
 * uring-dmabuf */
static void refuse_on(const char *dir, struct dmaio_buf *buf, uint8_t *scratch)
{
	char path[512], what[256];
	bool blk;
	int fd = open_target(dir, path, sizeof(path), &blk);
	unsigned before = test_failures();
	struct dmaio_file *file = NULL;
	struct dmaio_queue *q = NULL;

	assert_int_equal(file_fill_pattern(fd, 0, FILE_LEN, SEED_FILE), 0);
	assert_int_equal(fsync(fd), 0);
	for (int write = 0; write <= 1; write++) {
		for (size_t c = 0; c < ARRAY_SIZE(rcases); c++) {
			const struct rcase *rc = &rcases[c];

			for (int p = DMAIO_PATH_AUTO; p < DMAIO_PATH_COUNT; p++) {
				for (int nofb = 0; nofb <= (p != DMAIO_PATH_AUTO); nofb++) {
					uint32_t flags = (uint32_t)p | (nofb ? DMAIO_RW_NO_FALLBACK : 0);
					struct dmaio_xfer x = { .struct_size = sizeof(x) };
					int64_t r = write ?
						dmaio_fd_write(fd, rc->file_off, buf, rc->buf_off, rc->len,
							       flags, &x) :
						dmaio_fd_read(fd, rc->file_off, buf, rc->buf_off, rc->len,
							      flags, &x);

					snprintf(what, sizeof(what), "%s %s file %" PRIu64 " buf %"
						 PRIu64 " len %" PRIu64 " path %s%s", dir,
						 write ? "write" : "read", rc->file_off, rc->buf_off,
						 rc->len, test_pname(p), nofb ? " no-fallback" : "");
					test_expect(r == want_err(flags), "%s: %s, expected %s", what,
						    test_errname(r), test_errname(want_err(flags)));
					test_expect(x.done == 0, "%s: done %" PRIu64, what, x.done);
				}
			}
		}
	}
	/* through a queue, one read and one write */
	assert_rc_equal(dmaio_file_open(ctx, fd, 0, &file), 0);
	assert_rc_equal(dmaio_queue_new(ctx, 4, 0, &q), 0);
	{
		struct dmaio_io io[2] = {
			{ .struct_size = sizeof(io[0]), .op = DMAIO_OP_READ, .file = file,
			  .file_off = 4096, .buf = buf, .buf_off = 0, .len = 1 * MiB, .user_data = 1 },
			{ .struct_size = sizeof(io[0]), .op = DMAIO_OP_WRITE, .file = file,
			  .file_off = 8192, .buf = buf, .buf_off = 4096, .len = 64 * KiB,
			  .user_data = 2 },
		};
		struct dmaio_done d[2] = { { .struct_size = sizeof(d[0]) } };
		int n;

		assert_rc_equal(dmaio_queue_submit(q, io, 2), 2);
		n = dmaio_queue_reap(q, d, 2, 2, 60000);
		assert_rc_equal(n, 2);
		for (int i = 0; i < n; i++) {
			test_expect(d[i].res == -ENODEV, "%s: queued %s: %s, expected -ENODEV", dir,
				    d[i].user_data == 1 ? "read" : "write", test_errname(d[i].res));
			test_expect(d[i].done == 0, "%s: queued: done %" PRIu64, dir, d[i].done);
		}
	}
	dmaio_queue_free(q);
	dmaio_file_close(file);
	snprintf(what, sizeof(what), "after the refusals on %s", dir);
	bar_intact(what, scratch);
	file_intact(fd, what);
	close(fd);
	if (!blk)
		unlink(path);
	assert_no_failures_since(before);
}

static void test_refusals(void **state)
{
	if (mmap_on) {
		print_message("the kernel maps VFIO dma-bufs (vfio_dmabuf_mmap=on): the refusals are "
			      "mainline's, checked with the switch off\n");
		skip();
	}
	static const uint64_t win[][2] = { { WIN_OFF, WIN_LEN } };
	const char *dirs[8];
	int ndirs = test_dirs(dirs, 8), fds_before, fd;
	uint8_t *scratch = malloc(GUARD_LEN);
	struct dmaio_buf *buf = NULL;
	unsigned before = test_failures();

	(void)state;
	/* the context's own descriptors (its ring, its workers' eventfds) come with its first
	 * transfer and stay until dmaio_ctx_free(): made before the count */
	{
		struct dmaio_buf *m = NULL;
		char wpath[512];
		int wfd = test_tmpfile(NULL, wpath, sizeof(wpath));

		assert_int_equal(file_fill_pattern(wfd, 0, 64 * KiB, SEED_FILE), 0);
		assert_rc_equal(t_alloc(ctx, "memfd", 64 * KiB, 0, &m), 0);
		assert_rc_equal(dmaio_fd_read(wfd, 0, m, 0, 64 * KiB, 0, NULL), 64 * KiB);
		dmaio_buf_free(m);
		close(wfd);
		unlink(wpath);
	}
	fds_before = test_count_fds();
	assert_non_null(scratch);
	pat_fill(scratch, GUARD_LEN, SEED_BAR, 0);
	assert_rc_equal(test_vfio_bar_write(&vf, scratch, GUARD_LEN, 0), 0);
	assert_true(bar_intact("after filling the BAR", scratch));
	fd = export_or_fail(win, 1);
	assert_rc_equal(dmaio_buf_import(ctx, fd, 0, &buf), 0);
	close(fd); /* the library's duplicate keeps the dma-buf */
	for (int d = 0; d < ndirs; d++)
		refuse_on(dirs[d], buf, scratch);
	if (getenv("DMAIO_TEST_RAWDEV") && *getenv("DMAIO_TEST_RAWDEV"))
		refuse_on(getenv("DMAIO_TEST_RAWDEV"), buf, scratch);
	test_expect(!maps_hold_dmabuf(), "a dma-buf mapping is left in /proc/self/maps");
	dmaio_buf_free(buf);
	test_expect(test_count_fds() == fds_before, "%d descriptors before, %d after",
		    fds_before, test_count_fds());
	bar_intact("after freeing the buffer", scratch);
	free(scratch);
	assert_no_failures_since(before);
}

/* ------------------------------------------------------------------------------------------ */

static void test_explain(void **state)
{
	if (mmap_on) {
		print_message("vfio_dmabuf_mmap=on: the paths through the mapping serve (test_transfers)\n");
		skip();
	}
	static const uint64_t win[][2] = { { WIN_OFF, WIN_LEN } };
	struct dmaio_path_estimate est[DMAIO_PATH_COUNT] = { { .struct_size = sizeof(est[0]) } };
	unsigned before = test_failures();
	struct dmaio_buf *buf = NULL;
	int fd, n, ffd;
	char path[512];

	(void)state;
	fd = export_or_fail(win, 1);
	assert_rc_equal(dmaio_buf_import(ctx, fd, 0, &buf), 0);
	close(fd);
	ffd = test_tmpfile(NULL, path, sizeof(path));
	assert_int_equal(file_fill_pattern(ffd, 0, FILE_LEN, SEED_FILE), 0);
	for (int write = 0; write <= 1; write++) {
		n = dmaio_fd_explain_path(ffd, 0, buf, 0, 1 * MiB,
					  write ? DMAIO_OP_WRITE : DMAIO_OP_READ, 0, est,
					  ARRAY_SIZE(est));
		assert_rc_equal(n, DMAIO_PATH_COUNT - 1);
		for (int i = 0; i < n; i++) {
			const char *pn = test_pname((int)est[i].path);

			print_message("%s %-15s %-12s %s\n", write ? "write" : "read", pn,
				      test_errname(est[i].status), est[i].reason);
			test_expect(est[i].status < 0, "%s via %s: status %d, expected a refusal",
				    write ? "write" : "read", pn, est[i].status);
			test_expect(!est[i].chosen, "%s: %s chosen", write ? "write" : "read", pn);
			test_expect(est[i].reason[0] != 0, "%s via %s: no reason",
				    write ? "write" : "read", pn);
			if (est[i].path == DMAIO_PATH_BUFFERED || est[i].path == DMAIO_PATH_BOUNCE_DIRECT)
				test_expect(est[i].status == -ENODEV && strstr(est[i].reason, "mapping"),
					    "%s via %s: %s \"%s\", expected -ENODEV and the mapping "
					    "named", write ? "write" : "read", pn,
					    test_errname(est[i].status), est[i].reason);
		}
	}
	close(ffd);
	dmaio_buf_free(buf);
	assert_no_failures_since(before);
}

/* ------------------------------------------------------------------------------------------ */
/* With the ported mmap series: file data reaches the BAR through the mapping and back, byte
 * exact, checked through the device fd (not the mapping) and outside the range unchanged. */

static const int xpaths[] = { DMAIO_PATH_AUTO, DMAIO_PATH_BOUNCE_DIRECT, DMAIO_PATH_BUFFERED };

/* the BAR's [0, GUARD_LEN) must be the SEED_BAR stream except [at, at + n), which must be
 * stream @seed from @soff; then that range is put back */
static void bar_expect(const char *what, uint8_t *scratch, uint64_t at, uint64_t n, uint64_t seed,
		       uint64_t soff)
{
	long long bad;
	int err = test_vfio_bar_read(&vf, scratch, GUARD_LEN, 0);

	if (err) {
		test_fail("%s: reading the BAR: %s", what, test_errname(err));
		return;
	}
	bad = pat_check(scratch + at, n, seed, soff);
	if (bad >= 0) {
		test_fail("%s: BAR byte %llu (buffer byte %llu) wrong", what, (unsigned long long)(at + bad),
			  (unsigned long long)(at + bad - WIN_OFF));
		pat_report("BAR", scratch + at, n, seed, soff, bad, false);
	}
	bad = pat_check(scratch, at, SEED_BAR, 0);
	if (bad >= 0)
		test_fail("%s: BAR byte %lld before the range changed", what, bad);
	bad = pat_check(scratch + at + n, GUARD_LEN - at - n, SEED_BAR, at + n);
	if (bad >= 0)
		test_fail("%s: BAR byte %llu after the range changed", what,
			  (unsigned long long)(at + n + bad));
	pat_fill(scratch, n, SEED_BAR, at);
	err = test_vfio_bar_write(&vf, scratch, n, at);
	if (err)
		test_fail("%s: restoring the BAR: %s", what, test_errname(err));
}

static void transfer_on(const char *dir, struct dmaio_buf *buf, uint8_t *scratch)
{
	char path[512], what[256];
	struct stat st;
	bool blk;
	int fd = open_target(dir, path, sizeof(path), &blk);

	for (size_t c = 0; c < ARRAY_SIZE(rcases); c++) {
		const struct rcase *rc = &rcases[c];

		for (size_t k = 0; k < ARRAY_SIZE(xpaths); k++) {
			uint32_t flags = (uint32_t)xpaths[k] |
					 (xpaths[k] != DMAIO_PATH_AUTO ? DMAIO_RW_NO_FALLBACK : 0);
			uint64_t want = rc->file_off >= FILE_LEN ? 0 :
					MIN(rc->len, FILE_LEN - rc->file_off);
			struct dmaio_xfer x = { .struct_size = sizeof(x) };
			int64_t r;
			long long bad;

			/* file -> BAR (a device has no end of file here: its pattern goes past; a
			 * file is cut back to FILE_LEN, which the write before may have grown) */
			assert_int_equal(file_fill_pattern(fd, 0, FILE_LEN + (blk ? 64 * KiB : 0),
							   SEED_FILE), 0);
			if (!blk)
				assert_int_equal(ftruncate(fd, FILE_LEN), 0);
			r = dmaio_fd_read(fd, rc->file_off, buf, rc->buf_off, rc->len, flags, &x);
			snprintf(what, sizeof(what), "%s read file %" PRIu64 " buf %" PRIu64 " len %"
				 PRIu64 " path %s", dir, rc->file_off, rc->buf_off, rc->len,
				 test_pname(xpaths[k]));
			test_expect(r == (int64_t)(blk ? rc->len : want), "%s: %s, expected %" PRIu64,
				    what, test_errname(r), blk ? rc->len : want);
			if (r > 0)
				bar_expect(what, scratch, WIN_OFF + rc->buf_off, (uint64_t)r, SEED_FILE,
					   rc->file_off);
			/* BAR -> file */
			assert_int_equal(file_fill_pattern(fd, 0, FILE_LEN, SEED_DEST), 0);
			if (!blk)
				assert_int_equal(ftruncate(fd, FILE_LEN), 0);
			r = dmaio_fd_write(fd, rc->file_off, buf, rc->buf_off, rc->len, flags, &x);
			snprintf(what, sizeof(what), "%s write file %" PRIu64 " buf %" PRIu64 " len %"
				 PRIu64 " path %s", dir, rc->file_off, rc->buf_off, rc->len,
				 test_pname(xpaths[k]));
			test_expect(r == (int64_t)rc->len, "%s: %s, expected %" PRIu64, what,
				    test_errname(r), rc->len);
			bad = file_check_pattern(fd, (off_t)rc->file_off, rc->len, SEED_BAR,
						 WIN_OFF + rc->buf_off);
			test_expect(bad == -1, "%s: file byte %lld wrong", what, bad);
			bad = file_check_pattern(fd, 0, rc->file_off, SEED_DEST, 0);
			test_expect(bad == -1, "%s: file byte %lld before the range changed", what, bad);
			if (rc->file_off + rc->len < FILE_LEN) {
				bad = file_check_pattern(fd, (off_t)(rc->file_off + rc->len),
							 FILE_LEN - rc->file_off - rc->len, SEED_DEST,
							 rc->file_off + rc->len);
				test_expect(bad == -1, "%s: file byte %lld after the range changed", what,
					    bad);
			}
			if (!blk) {
				test_expect(fstat(fd, &st) == 0 && (uint64_t)st.st_size ==
					    MAX((uint64_t)FILE_LEN, rc->file_off + rc->len),
					    "%s: file size %lld", what, (long long)st.st_size);
			}
		}
	}
	close(fd);
	if (!blk)
		unlink(path);
}

static void test_transfers(void **state)
{
	static const uint64_t win[][2] = { { WIN_OFF, WIN_LEN } };
	const char *dirs[8];
	int ndirs = test_dirs(dirs, 8), fd;
	uint8_t *scratch = malloc(GUARD_LEN);
	struct dmaio_buf *buf = NULL;
	struct dmaio_stats st = { .struct_size = sizeof(st) };
	unsigned before = test_failures();

	(void)state;
	if (!mmap_on) {
		print_message("VFIO dma-bufs cannot be mapped on this kernel (mainline, or "
			      "vfio_dmabuf_mmap=off): test_refusals checks that\n");
		free(scratch);
		skip();
	}
	assert_non_null(scratch);
	pat_fill(scratch, GUARD_LEN, SEED_BAR, 0);
	assert_rc_equal(test_vfio_bar_write(&vf, scratch, GUARD_LEN, 0), 0);
	fd = export_or_fail(win, 1);
	assert_rc_equal(dmaio_buf_import(ctx, fd, 0, &buf), 0);
	close(fd);
	for (int d = 0; d < ndirs; d++)
		transfer_on(dirs[d], buf, scratch);
	if (getenv("DMAIO_TEST_RAWDEV") && *getenv("DMAIO_TEST_RAWDEV"))
		transfer_on(getenv("DMAIO_TEST_RAWDEV"), buf, scratch);
	assert_rc_equal(dmaio_buf_get_stats(buf, &st), 0);
	print_message("%" PRIu64 " bytes read, %" PRIu64 " written; bounce-direct %" PRIu64
		      ", buffered %" PRIu64 "\n", st.bytes_read, st.bytes_written,
		      st.path_bytes[DMAIO_PATH_BOUNCE_DIRECT], st.path_bytes[DMAIO_PATH_BUFFERED]);
	dmaio_buf_free(buf);
	free(scratch);
	assert_no_failures_since(before);
}

/* ------------------------------------------------------------------------------------------ */

/* Run argv, its stdout into out (NUL-terminated, truncated to len - 1): the exit status, or -1. */
static int run_capture(char *const argv[], char *out, size_t len)
{
	int pfd[2], status;
	size_t got = 0;
	pid_t pid;

	if (pipe2(pfd, O_CLOEXEC))
		return -1;
	pid = fork();
	if (pid < 0)
		return -1;
	if (pid == 0) {
		dup2(pfd[1], 1);
		execv(argv[0], argv);
		_exit(127);
	}
	close(pfd[1]);
	for (;;) {
		ssize_t n = read(pfd[0], out + got, len - 1 - got);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0 || (got += (size_t)n) == len - 1)
			break;
	}
	out[got] = 0;
	close(pfd[0]);
	if (waitpid(pid, &status, 0) != pid)
		return -1;
	return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

static void test_info(void **state)
{
	if (mmap_on) {
		print_message("vfio_dmabuf_mmap=on: dmaio-info's refusal report is checked with the "
			      "switch off\n");
		skip();
	}
	static const uint64_t win[][2] = { { WIN_OFF, WIN_LEN } };
	const char *tool = getenv("DMAIO_TEST_INFO");
	char spec[64], path[512], want[160], *out;
	struct dmaio_buf_info info = { .struct_size = sizeof(info) };
	struct dmaio_buf *buf = NULL;
	unsigned before = test_failures();
	int fd, ffd, st;

	(void)state;
	if (!tool || access(tool, X_OK)) {
		print_message("dmaio-info not built (DMAIO_TEST_INFO=%s): not checked\n",
			      tool ? tool : "(unset)");
		skip();
	}
	fd = export_or_fail(win, 1);
	assert_rc_equal(dmaio_buf_import(ctx, fd, 0, &buf), 0);
	assert_rc_equal(dmaio_buf_get_info(buf, &info), 0);
	ffd = test_tmpfile(NULL, path, sizeof(path));
	assert_int_equal(file_fill_pattern(ffd, 0, 1 * MiB, SEED_FILE), 0);
	snprintf(spec, sizeof(spec), "%d:%d", (int)getpid(), fd);
	out = malloc(1 << 20);
	assert_non_null(out);
	st = run_capture((char *const[]){ (char *)tool, "--json", "--dmabuf", spec, path, NULL },
			 out, 1 << 20);
	/* 0: some dma-buf provider works (the VM's heaps) */
	test_expect(st == 0, "dmaio-info --json --dmabuf %s %s: exit status %d", spec, path, st);
	snprintf(want, sizeof(want), "\"dmabuf\": \"%s\"", spec);
	test_expect(strstr(out, want), "no %s in the report", want);
	snprintf(want, sizeof(want), "\"size\": %zu", WIN_LEN);
	test_expect(strstr(out, want), "no %s in the report", want);
	snprintf(want, sizeof(want), "\"inode\": %" PRIu64, info.inode);
	test_expect(strstr(out, want), "no %s in the report", want);
	snprintf(want, sizeof(want), "\"exporter\": \"%s\"", info.exporter);
	test_expect(strstr(out, want), "no %s in the report", want);
	test_expect(strstr(out, "\"mmap\": \"no\""), "no \"mmap\": \"no\" in the report");
	test_expect(strstr(out, "\"mmap_error\": \"ENODEV\""), "no mmap_error ENODEV in the report");
	snprintf(want, sizeof(want), "\"provider\": \"dma-buf %s\"", spec);
	test_expect(strstr(out, want), "no read of the file into the dma-buf (%s) in the report", want);
	test_expect(strstr(strstr(out, want) ? strstr(out, want) : out, "\"path_error\": \"ENODEV\""),
		    "the read into the dma-buf is not refused with ENODEV in the report");
	if (test_failures() != before)
		print_message("the report:\n%s\n", out);
	free(out);
	close(ffd);
	dmaio_buf_free(buf);
	close(fd);
	assert_no_failures_since(before);
}

/* ------------------------------------------------------------------------------------------ */
/* Revocation (with the ported mmap series): the device's memory is taken away while a transfer
 * between a file and the BAR runs, by another thread, at several points of the transfer. */

#define REV_OFF (8 * MiB)         /* the buffer: [REV_OFF, REV_OFF + REV_LEN) of the BAR */
#define REV_LEN (8 * MiB)
#define REV_GUARD (1 * MiB)       /* checked on each side of it */
#define REV_BUF_OFF 100ull        /* the range: buffer [100, REV_LEN - 100), file from 4196: */
#define REV_FILE_OFF (4096ull + REV_BUF_OFF) /* congruent, so O_DIRECT middle, page-cache edges */
#define REV_RLEN (REV_LEN - 2 * REV_BUF_OFF)
#define REV_FILE_LEN (REV_FILE_OFF + REV_RLEN + 64 * KiB)
#define REV_TRIES 12              /* revocations per case, at 1/6 .. 5/6 of its duration */
#define REV_HITS 2                /* ... until this many landed during the transfer */

enum { REV_MEMORY, REV_REQUEST };

struct revoker {
	pthread_t thread;
	int how;                  /* REV_MEMORY: PCI_COMMAND_MEMORY off; REV_REQUEST: revoke dmabuf_fd */
	int dmabuf_fd;
	uint64_t delay_ns;        /* after go */
	int go;                   /* atomic: the transfer starts now */
	uint64_t at_ns;           /* when the revocation began */
	int err;
};

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static void *revoker_main(void *arg)
{
	struct revoker *rv = arg;
	struct timespec pause = { 0, 20000 };
	uint64_t t;

	while (!__atomic_load_n(&rv->go, __ATOMIC_ACQUIRE))
		nanosleep(&pause, NULL);
	t = now_ns() + rv->delay_ns;
	while (now_ns() < t)
		;
	rv->at_ns = now_ns();
	rv->err = rv->how == REV_MEMORY ? test_vfio_memory(&vf, false)
					: test_vfio_revoke(&vf, rv->dmabuf_fd);
	return NULL;
}

static void sigbus_handler(int sig)
{
	static const char msg[] = "FAIL: SIGBUS: the process touched revoked device memory\n";

	(void)sig;
	if (write(2, msg, sizeof(msg) - 1) < 0)
		_exit(2);
	_exit(1);
}

/* One transfer of the range between fd and buf; with rv, revoked rv->delay_ns after it starts.
 * Returns the result; *x what was done, *t_ns its duration, *during whether the revocation
 * began before the call returned. */
static int64_t rev_transfer(int fd, struct dmaio_buf *buf, bool write, uint32_t flags,
			    struct revoker *rv, struct dmaio_xfer *x, uint64_t *t_ns, bool *during)
{
	uint64_t t0, t1;
	int64_t r;

	*during = false;
	if (rv) {
		rv->go = 0;
		rv->at_ns = 0;
		rv->err = 0;
		assert_int_equal(pthread_create(&rv->thread, NULL, revoker_main, rv), 0);
	}
	t0 = now_ns();
	if (rv)
		__atomic_store_n(&rv->go, 1, __ATOMIC_RELEASE);
	r = write ? dmaio_fd_write(fd, REV_FILE_OFF, buf, REV_BUF_OFF, REV_RLEN, flags, x)
		  : dmaio_fd_read(fd, REV_FILE_OFF, buf, REV_BUF_OFF, REV_RLEN, flags, x);
	t1 = now_ns();
	if (rv) {
		assert_int_equal(pthread_join(rv->thread, NULL), 0);
		if (rv->err)
			fail_msg("revoking (%s): %s", rv->how == REV_MEMORY ? "memory off" : "request",
				 test_errname(rv->err));
		*during = rv->at_ns < t1;
	}
	*t_ns = t1 - t0;
	return r;
}

/* byte i of the range after the call: the new byte (i < done), either (i >= done) */
static long long rev_check(const uint8_t *p, uint64_t done, uint64_t new_seed, uint64_t new_off,
			   uint64_t old_seed, uint64_t old_off)
{
	long long bad = pat_check(p, done, new_seed, new_off);

	if (bad >= 0)
		return bad;
	for (uint64_t i = done; i < REV_RLEN; i++)
		if (p[i] != pat_byte(new_seed, new_off + i) && p[i] != pat_byte(old_seed, old_off + i))
			return (long long)i;
	return -1;
}

/* After a transfer that r/x say ended so (memory back on): the BAR and the file hold what they
 * must. Puts both back. */
static void rev_verify(const char *what, int fd, bool write, int64_t r, const struct dmaio_xfer *x,
		       uint8_t *scratch)
{
	uint64_t done = r == (int64_t)REV_RLEN ? REV_RLEN : x->done;
	uint64_t lo = REV_OFF - REV_GUARD, at = REV_OFF + REV_BUF_OFF;
	size_t span = REV_LEN + 2 * REV_GUARD;
	long long bad;
	struct stat st;

	test_expect(done <= REV_RLEN, "%s: done %" PRIu64 " past the range", what, done);
	if (done > REV_RLEN)
		done = REV_RLEN;
	if (test_vfio_bar_read(&vf, scratch, span, lo)) {
		test_fail("%s: reading the BAR back", what);
		return;
	}
	if (!write) {
		bad = rev_check(scratch + (at - lo), done, SEED_FILE, REV_FILE_OFF, SEED_BAR, at);
		test_expect(bad < 0, "%s: BAR byte %lld of the range wrong (done %" PRIu64 ")", what,
			    bad, done);
	}
	bad = pat_check(scratch, at - lo, SEED_BAR, lo);
	test_expect(bad < 0, "%s: BAR byte %llu before the range changed", what,
		    (unsigned long long)(lo + (uint64_t)bad));
	bad = pat_check(scratch + (at - lo) + REV_RLEN, span - (at - lo) - REV_RLEN, SEED_BAR,
			at + REV_RLEN);
	test_expect(bad < 0, "%s: BAR byte %llu after the range changed", what,
		    (unsigned long long)(at + REV_RLEN + (uint64_t)bad));
	if (write) {
		uint8_t *f = malloc(REV_FILE_LEN);

		assert_non_null(f);
		assert_int_equal(pread(fd, f, REV_FILE_LEN, 0), (ssize_t)REV_FILE_LEN);
		bad = rev_check(f + REV_FILE_OFF, done, SEED_BAR, at, SEED_DEST, REV_FILE_OFF);
		test_expect(bad < 0, "%s: file byte %llu of the range wrong (done %" PRIu64 ")", what,
			    (unsigned long long)(REV_FILE_OFF + (uint64_t)bad), done);
		bad = pat_check(f, REV_FILE_OFF, SEED_DEST, 0);
		test_expect(bad < 0, "%s: file byte %lld before the range changed", what, bad);
		bad = pat_check(f + REV_FILE_OFF + REV_RLEN, REV_FILE_LEN - REV_FILE_OFF - REV_RLEN,
				SEED_DEST, REV_FILE_OFF + REV_RLEN);
		test_expect(bad < 0, "%s: file byte %llu after the range changed", what,
			    (unsigned long long)(REV_FILE_OFF + REV_RLEN + (uint64_t)bad));
		free(f);
		test_expect(fstat(fd, &st) == 0 && st.st_size == (off_t)REV_FILE_LEN,
			    "%s: the file's size changed", what);
		assert_int_equal(file_fill_pattern(fd, 0, REV_FILE_LEN, SEED_DEST), 0);
	} else {
		test_expect(file_check_pattern(fd, 0, REV_FILE_LEN, SEED_FILE, 0) == -1,
			    "%s: the source file changed", what);
	}
	pat_fill(scratch, span, SEED_BAR, lo);
	if (test_vfio_bar_write(&vf, scratch, span, lo))
		test_fail("%s: restoring the BAR", what);
}

/* a transfer must end in one of two ways: all of it, or -ENXIO part-way */
static bool rev_outcome(const char *what, int64_t r, const struct dmaio_xfer *x)
{
	if (r == (int64_t)REV_RLEN)
		return false;
	test_expect(r == -ENXIO, "%s: %s (done %" PRIu64 "), expected all %" PRIu64 " bytes or "
		    "ENXIO", what, test_errname(r), x->done, (uint64_t)REV_RLEN);
	return r == -ENXIO;
}

static void revoke_case(int fd, struct dmaio_buf *buf, bool write, int path, uint8_t *scratch)
{
	uint32_t flags = (uint32_t)path | (path != DMAIO_PATH_AUTO ? DMAIO_RW_NO_FALLBACK : 0);
	struct revoker rv = { .how = REV_MEMORY };
	struct dmaio_xfer x = { .struct_size = sizeof(x) };
	unsigned hits = 0, late = 0, tries = 0;
	uint64_t t_ns, t_full;
	char what[160];
	bool during;
	int64_t r;

	snprintf(what, sizeof(what), "%s path %s", write ? "BAR -> file" : "file -> BAR",
		 test_pname(path));
	/* untouched: all of it, and how long it takes */
	r = rev_transfer(fd, buf, write, flags, NULL, &x, &t_full, &during);
	test_expect(r == (int64_t)REV_RLEN, "%s, memory on: %s", what, test_errname(r));
	rev_verify(what, fd, write, r, &x, scratch);
	/* revoked before the call: nothing moves, nothing is written */
	assert_rc_equal(test_vfio_memory(&vf, false), 0);
	r = rev_transfer(fd, buf, write, flags, NULL, &x, &t_ns, &during);
	assert_rc_equal(test_vfio_memory(&vf, true), 0);
	test_expect(r == -ENXIO && x.done == 0, "%s, memory off before: %s, done %" PRIu64
		    ", expected ENXIO and 0", what, test_errname(r), x.done);
	rev_verify(what, fd, write, r, &x, scratch);
	/* revoked while it runs */
	for (; tries < REV_TRIES && hits < REV_HITS; tries++) {
		rv.delay_ns = t_full * (tries % 5 + 1) / 6;
		r = rev_transfer(fd, buf, write, flags, &rv, &x, &t_ns, &during);
		assert_rc_equal(test_vfio_memory(&vf, true), 0);
		if (rev_outcome(what, r, &x) && during)
			hits++;
		else if (r == (int64_t)REV_RLEN)
			late++;
		rev_verify(what, fd, write, r, &x, scratch);
	}
	print_message("%s: %" PRIu64 " ms; revoked during the transfer %u of %u times (ENXIO), "
		      "after its last access %u\n", what, t_full / 1000000, hits, tries, late);
	test_expect(hits >= 1, "%s: no revocation landed during a transfer in %u tries (%" PRIu64
		    " ms each)", what, tries, t_full / 1000000);
	/* nothing remembered: the memory back, it works again */
	r = rev_transfer(fd, buf, write, flags, NULL, &x, &t_ns, &during);
	test_expect(r == (int64_t)REV_RLEN, "%s, memory back on: %s", what, test_errname(r));
	rev_verify(what, fd, write, r, &x, scratch);
}

static void test_revoke(void **state)
{
	static const uint64_t win[][2] = { { REV_OFF, REV_LEN } };
	struct sigaction sa = { .sa_handler = sigbus_handler }, old;
	struct revoker rv = { .how = REV_REQUEST };
	struct dmaio_xfer x = { .struct_size = sizeof(x) };
	uint8_t *scratch = malloc(REV_LEN + 2 * REV_GUARD);
	unsigned before = test_failures();
	const char *dirs[8];
	struct dmaio_buf *buf = NULL;
	char path[512];
	uint64_t t_full, t_ns;
	bool during;
	int64_t r;
	int fd, dfd;

	(void)state;
	if (!mmap_on) {
		print_message("VFIO dma-bufs cannot be mapped on this kernel: nothing to revoke "
			      "under a mapping\n");
		free(scratch);
		skip();
	}
	assert_non_null(scratch);
	assert_true(test_dirs(dirs, 8) >= 1);
	assert_int_equal(sigaction(SIGBUS, &sa, &old), 0);
	pat_fill(scratch, REV_LEN + 2 * REV_GUARD, SEED_BAR, REV_OFF - REV_GUARD);
	assert_rc_equal(test_vfio_bar_write(&vf, scratch, REV_LEN + 2 * REV_GUARD,
					    REV_OFF - REV_GUARD), 0);
	dfd = export_or_fail(win, 1);
	assert_rc_equal(dmaio_buf_import(ctx, dfd, 0, &buf), 0);
	fd = test_tmpfile(dirs[0], path, sizeof(path));
	assert_true(fd >= 0);
	for (int w = 0; w <= 1; w++) {
		assert_int_equal(file_fill_pattern(fd, 0, REV_FILE_LEN, w ? SEED_DEST : SEED_FILE), 0);
		for (size_t k = 0; k < ARRAY_SIZE(xpaths); k++)
			revoke_case(fd, buf, w, xpaths[k], scratch);
	}
	dmaio_buf_free(buf);
	/* the series' revoke request, for good: -ENXIO during and after */
	assert_int_equal(file_fill_pattern(fd, 0, REV_FILE_LEN, SEED_FILE), 0);
	assert_rc_equal(dmaio_buf_import(ctx, dfd, 0, &buf), 0);
	r = rev_transfer(fd, buf, false, 0, NULL, &x, &t_full, &during);
	test_expect(r == (int64_t)REV_RLEN, "file -> BAR before the revoke request: %s",
		    test_errname(r));
	rev_verify("file -> BAR before the revoke request", fd, false, r, &x, scratch);
	rv.dmabuf_fd = dfd;
	rv.delay_ns = t_full / 2;
	r = rev_transfer(fd, buf, false, 0, &rv, &x, &t_ns, &during);
	(void)rev_outcome("file -> BAR, revoke request", r, &x);
	rev_verify("file -> BAR, revoke request", fd, false, r, &x, scratch);
	print_message("revoke request at %" PRIu64 " of %" PRIu64 " ms: %s, %" PRIu64 " bytes\n",
		      rv.delay_ns / 1000000, t_full / 1000000, test_errname(r), x.done);
	for (int w = 0; w <= 1; w++) {
		r = rev_transfer(fd, buf, w, 0, NULL, &x, &t_ns, &during);
		test_expect(r == -ENXIO && x.done == 0, "%s after the revoke request: %s, done %"
			    PRIu64 ", expected ENXIO and 0", w ? "BAR -> file" : "file -> BAR",
			    test_errname(r), x.done);
	}
	dmaio_buf_free(buf);
	close(dfd);
	close(fd);
	unlink(path);
	/* the device still exports: the revocation was of that one dma-buf */
	dfd = export_or_fail(win, 1);
	close(dfd);
	assert_int_equal(sigaction(SIGBUS, &old, NULL), 0);
	free(scratch);
	assert_no_failures_since(before);
}

/* ------------------------------------------------------------------------------------------ */

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_import),
		cmocka_unit_test(test_refusals),
		cmocka_unit_test(test_transfers),
		cmocka_unit_test(test_revoke),
		cmocka_unit_test(test_explain),
		cmocka_unit_test(test_info),
	};
	const char *bdf;
	char why[512];
	int rc;

	test_parse_args(argc, argv, &args, "system");
	setvbuf(stdout, NULL, _IOLBF, 0);
	bdf = test_vfio_env();
	if (!bdf) {
		struct utsname u;

		/* the test VM adds the device to every boot of our 7.3 kernel: missing there is a
		 * failure of the harness, not a skip */
		if (getenv("DMAIO_TEST_VM") && uname(&u) == 0 && strncmp(u.release, "7.3", 3) == 0) {
			printf("FAIL: no VFIO device (DMAIO_TEST_VFIO unset) on the test VM's %s kernel, "
			       "which tests/vm/run gives one\n", u.release);
			return 1;
		}
		printf("SKIP: no VFIO device (DMAIO_TEST_VFIO unset: the test VM sets it on kernel "
		       "7.3, tests/vm/README.md \"VFIO device memory\")\n");
		return TEST_SKIP;
	}
	rc = test_vfio_open(bdf, BAR, &vf, why, sizeof(why));
	if (rc) {
		printf("FAIL: DMAIO_TEST_VFIO=%s: %s\n", bdf, why);
		return 1;
	}
	printf("%s: BAR %d %" PRIu64 " MiB at region offset 0x%" PRIx64 ", %s group\n", bdf, BAR,
	       vf.bar_size >> 20, vf.bar_offset, vf.noiommu ? "no-IOMMU" : "IOMMU");
	if (vf.bar_size < REV_OFF + REV_LEN + REV_GUARD) {
		printf("FAIL: BAR %d of %s has %" PRIu64 " bytes, the test needs 32 MiB\n", BAR, bdf,
		       vf.bar_size);
		return 1;
	}
	mmap_on = test_vfio_mmap_on();
	printf("VFIO dma-buf mmap: %s\n", mmap_on ? "on (vfio_dmabuf_mmap=on)" : "off (mainline)");
	rc = dmaio_ctx_new(0, &ctx);
	if (rc) {
		printf("FAIL: dmaio_ctx_new: %s\n", test_errname(rc));
		return 1;
	}
	rc = cmocka_run_group_tests_name("vfio", tests, NULL, NULL);
	dmaio_ctx_free(ctx);
	test_vfio_close(&vf);
	return rc;
}
