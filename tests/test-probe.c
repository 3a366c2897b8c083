// SPDX-License-Identifier: MIT
/*
 * test-probe: dmaio_ctx_get_system(), t_probe_heaps() and dmaio_probe_file() against what the
 * test finds out by itself (sysconf, /dev/dma_heap, its own ioctls, its own O_DIRECT I/O).
 * Every answer is compared on its own and each mismatch reported (test_expect(), common.h), so
 * one run shows all that a probe gets wrong; each test fails at its end when any was reported.
 *
 * Usage: test-probe [--heap NAME] [--expect-devices]
 *   --heap: also check what the probes say about that provider (skip 77 when it is missing).
 *   --expect-devices (or DMAIO_TEST_VM=1 / DMAIO_TEST_EXPECT_DEVICES=1): dma-heaps and udmabuf
 *   must exist and work; a missing provider fails instead of skipping.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/dma-buf.h>
#include <linux/fs.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cmocka.h>

#include "common.h"

#ifndef STATX_DIOALIGN
#define STATX_DIOALIGN 0x00002000U
#endif
#define STATX_DIO_READ_ALIGN_ 0x00020000U
#define STX_DIO_READ_ALIGN_OFFSET 0xb4 /* __u32 stx_dio_read_offset_align (6.16) */

/* The proposed RW_FILE ioctl (see kernel-facts.md). */
struct rw_file_arg {
	uint32_t flags;
	int32_t fd;
	uint64_t file_offset;
	uint64_t buf_offset;
	uint64_t buf_len;
};
#define RW_FILE_READ (1u << 0)
#define RW_FILE_IOCTL _IOW('b', 4, struct rw_file_arg)

static struct test_args args;
static bool expect;
static const char *capname(int c)
{
	switch (c) {
	case DMAIO_CAP_UNKNOWN:
		return "UNKNOWN";
	case DMAIO_CAP_YES:
		return "YES";
	case DMAIO_CAP_NO:
		return "NO";
	default:
		return "INVALID";
	}
}

static bool valid_cap(int c)
{
	return c == DMAIO_CAP_UNKNOWN || c == DMAIO_CAP_YES || c == DMAIO_CAP_NO;
}

/* Entries of /dev/dma_heap: count, or -errno. Names into @names when not NULL. */
static int list_heaps(char names[][64], int max)
{
	DIR *d = opendir("/dev/dma_heap");
	struct dirent *de;
	int n = 0;

	if (!d)
		return -errno;
	while ((de = readdir(d))) {
		if (de->d_name[0] == '.')
			continue;
		if (names && n < max)
			snprintf(names[n], 64, "%.63s", de->d_name);
		n++;
	}
	closedir(d);
	return n;
}

static int own_io_uring(void)
{
#ifdef __NR_io_uring_setup
	uint8_t params[120]; /* struct io_uring_params */
	long fd;

	memset(params, 0, sizeof(params));
	fd = syscall(__NR_io_uring_setup, 1, params);
	if (fd < 0)
		return -errno;
	close((int)fd);
	return 0;
#else
	return -ENOSYS;
#endif
}

static int own_hugetlb_memfd(size_t hps)
{
	void *p;
	int fd;

	if (!hps)
		return -ENOENT;
	fd = memfd_create("probe-huge", MFD_CLOEXEC | MFD_HUGETLB);
	if (fd < 0)
		return -errno;
	if (ftruncate(fd, (off_t)hps) != 0) {
		int e = -errno;

		close(fd);
		return e;
	}
	p = mmap(NULL, hps, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (p == MAP_FAILED) {
		int e = -errno;

		close(fd);
		return e;
	}
	munmap(p, hps);
	close(fd);
	return 0;
}

/* ------------------------------------------------------------------------------------------ */

static void test_system(void **state)
{
	struct dmaio_ctx *ctx = NULL;
	struct dmaio_sys_info a, b;
	struct dmaio_proposed_info pa = { .struct_size = sizeof(pa) };
	long hp_kb, lim, ll, dis;
	int nh, ours, ufd;
	unsigned before = test_failures();

	(void)state;
	assert_int_equal(dmaio_ctx_new(0, &ctx), 0);
	memset(&a, 0xa5, sizeof(a));
	a.struct_size = sizeof(a);
	memset(&b, 0x5a, sizeof(b));
	a.struct_size = b.struct_size = sizeof(a);
	assert_int_equal(dmaio_ctx_get_system(ctx, &a), 0);
	assert_int_equal(dmaio_ctx_get_system(ctx, &b), 0);
	test_expect(memcmp(&a, &b, sizeof(a)) == 0,
		    "two dmaio_ctx_get_system() calls on one context differ");
	assert_int_equal(dmaio_ctx_get_proposed(ctx, &pa), 0);
	printf("# page %u, heaps %d, udmabuf %s (%s, limit %llu, list %u), udmabuf-huge %s, "
	       "hugetlb memfd %s (%u), io_uring %s (%s, disabled %d, fixed %s), uring-dmabuf %s, "
	       "drm %s (%s), rw_file kernel %s, cachestat %s\n",
	       a.page_size, a.nheaps, capname(a.udmabuf), test_errname(a.udmabuf_err),
	       (unsigned long long)a.udmabuf_size_limit, a.udmabuf_list_limit,
	       capname(a.udmabuf_huge), capname(a.hugetlb_memfd), a.huge_page_size,
	       capname(a.io_uring), test_errname(a.io_uring_err), a.io_uring_disabled,
	       capname(a.io_uring_fixed), capname(pa.uring_dmabuf), capname(a.drm), a.drm_node,
	       capname(pa.rw_file_kernel), capname(a.cachestat));

	test_expect(a.page_size == (uint32_t)sysconf(_SC_PAGESIZE), "page_size %u, sysconf %ld",
		    a.page_size, sysconf(_SC_PAGESIZE));
	test_expect(valid_cap(a.udmabuf) && valid_cap(a.udmabuf_huge) &&
			    valid_cap(a.hugetlb_memfd) && valid_cap(a.io_uring) &&
			    valid_cap(a.io_uring_fixed) && valid_cap(pa.uring_dmabuf) &&
			    valid_cap(a.drm) && valid_cap(pa.rw_file_kernel) &&
			    a.cachestat != DMAIO_CAP_UNKNOWN && valid_cap(a.cachestat),
		    "a capability field holds a value outside enum dmaio_cap");

	/* heaps */
	nh = list_heaps(NULL, 0);
	if (nh == -ENOENT)
		test_expect(a.nheaps == 0 || a.nheaps == -ENOENT,
			    "no /dev/dma_heap but nheaps = %d (expected 0 or -ENOENT)", a.nheaps);
	else
		test_expect(a.nheaps == nh, "nheaps %d, /dev/dma_heap has %d entries", a.nheaps,
			    nh);

	/* udmabuf */
	ufd = open("/dev/udmabuf", O_RDWR | O_CLOEXEC);
	ours = ufd < 0 ? -errno : 0;
	if (ufd >= 0)
		close(ufd);
	if (ours == 0) {
		test_expect(a.udmabuf == DMAIO_CAP_YES, "/dev/udmabuf opens here, udmabuf = %s",
			    capname(a.udmabuf));
	} else {
		test_expect(a.udmabuf == DMAIO_CAP_NO && a.udmabuf_err == ours,
			    "/dev/udmabuf: open gives %s, probe says %s %s", test_errname(ours),
			    capname(a.udmabuf), test_errname(a.udmabuf_err));
	}
	lim = test_read_long("/sys/module/udmabuf/parameters/size_limit_mb");
	if (a.udmabuf == DMAIO_CAP_YES && lim > 0)
		test_expect(a.udmabuf_size_limit == (uint64_t)lim * MiB,
			    "udmabuf_size_limit %llu, size_limit_mb %ld",
			    (unsigned long long)a.udmabuf_size_limit, lim);
	ll = test_read_long("/sys/module/udmabuf/parameters/list_limit");
	if (a.udmabuf == DMAIO_CAP_YES && ll > 0)
		test_expect(a.udmabuf_list_limit == (uint32_t)ll,
			    "udmabuf_list_limit %u, list_limit %ld", a.udmabuf_list_limit, ll);
	if (a.udmabuf != DMAIO_CAP_YES)
		test_expect(a.udmabuf_huge != DMAIO_CAP_YES, "udmabuf_huge YES without udmabuf");

	/* huge pages */
	hp_kb = test_meminfo("Hugepagesize");
	if (hp_kb > 0)
		test_expect(a.huge_page_size == 0 || a.huge_page_size == (uint32_t)hp_kb * 1024,
			    "huge_page_size %u, /proc/meminfo Hugepagesize %ld kB",
			    a.huge_page_size, hp_kb);
	else
		test_expect(a.huge_page_size == 0, "huge_page_size %u without Hugepagesize",
			    a.huge_page_size);
	if (a.hugetlb_memfd != DMAIO_CAP_UNKNOWN) {
		ours = own_hugetlb_memfd(hp_kb > 0 ? (size_t)hp_kb * 1024 : 0);
		test_expect((ours == 0) == (a.hugetlb_memfd == DMAIO_CAP_YES),
			    "hugetlb_memfd %s, our own MFD_HUGETLB memfd + mmap: %s",
			    capname(a.hugetlb_memfd), test_errname(ours));
	}

	/* io_uring */
	dis = test_read_long("/proc/sys/kernel/io_uring_disabled");
	test_expect(a.io_uring_disabled == (int32_t)dis, "io_uring_disabled %d, /proc says %ld",
		    a.io_uring_disabled, dis);
	if (a.io_uring != DMAIO_CAP_UNKNOWN) {
		ours = own_io_uring();
		test_expect((ours == 0) == (a.io_uring == DMAIO_CAP_YES),
			    "io_uring %s (%s), our own io_uring_setup: %s", capname(a.io_uring),
			    test_errname(a.io_uring_err), test_errname(ours));
		if (ours && a.io_uring == DMAIO_CAP_NO)
			test_expect(a.io_uring_err == ours, "io_uring_err %s, ours %s",
				    test_errname(a.io_uring_err), test_errname(ours));
	}
	if (a.io_uring != DMAIO_CAP_YES)
		test_expect(a.io_uring_fixed != DMAIO_CAP_YES && pa.uring_dmabuf != DMAIO_CAP_YES,
			    "io_uring features YES without io_uring");

	/* drm */
	if (a.drm == DMAIO_CAP_YES) {
		struct stat st;

		test_expect(strncmp(a.drm_node, "/dev/dri/", 9) == 0 &&
				    stat(a.drm_node, &st) == 0 && S_ISCHR(st.st_mode),
			    "drm YES but drm_node \"%.32s\" is not a /dev/dri character device",
			    a.drm_node);
	}
	if (access("/dev/dri", F_OK) != 0)
		test_expect(a.drm != DMAIO_CAP_YES, "drm YES without /dev/dri");
	test_expect(memchr(a.drm_node, 0, sizeof(a.drm_node)) != NULL, "drm_node not terminated");

	/* the default context answers the same */
	assert_int_equal(dmaio_ctx_get_system(NULL, &b), 0);
	test_expect(a.page_size == b.page_size && a.nheaps == b.nheaps && a.udmabuf == b.udmabuf,
		    "the default context probes differently");

	if (expect) {
		/* what the VM's kernel has (DMAIO_TEST_DEVICES on Debian's images; all on ours) */
		if (test_expect_device("system") || test_expect_device("cma"))
			test_expect(a.nheaps >= 1, "expected devices: nheaps %d", a.nheaps);
		else
			printf("# this kernel has no dma-heap: nheaps %d\n", a.nheaps);
		if (test_expect_device("udmabuf"))
			test_expect(a.udmabuf == DMAIO_CAP_YES, "expected devices: udmabuf %s (%s)",
				    capname(a.udmabuf), test_errname(a.udmabuf_err));
		else
			printf("# this kernel has no udmabuf: udmabuf %s (%s)\n", capname(a.udmabuf),
			       test_errname(a.udmabuf_err));
	} else if (access("/dev/dma_heap", F_OK) != 0 && access("/dev/udmabuf", F_OK) != 0) {
		printf("# no device nodes (host): nheaps %d, udmabuf %s %s\n", a.nheaps,
		       capname(a.udmabuf), test_errname(a.udmabuf_err));
	}
	dmaio_ctx_free(ctx);
	assert_no_failures_since(before);
}

/* ------------------------------------------------------------------------------------------ */

/* Our own RW_FILE READ of one page from a file into a fresh buffer of @heap: 0 or -errno. */
static int own_rw_file(const char *heap)
{
	struct rw_file_arg a;
	char path[PATH_MAX];
	int bfd, fd, rc;
	uint8_t *m;

	bfd = test_heap_alloc_fd(heap, 4096);
	if (bfd < 0)
		return bfd;
	fd = test_tmpfile(NULL, path, sizeof(path));
	file_fill_pattern(fd, 0, 8192, SEED_FILE);
	memset(&a, 0, sizeof(a));
	a.flags = RW_FILE_READ;
	a.fd = fd;
	a.file_offset = 4096;
	a.buf_len = 4096;
	rc = ioctl(bfd, RW_FILE_IOCTL, &a) < 0 ? -errno : 0;
	if (rc == 0) {
		/* really there? */
		m = mmap(NULL, 4096, PROT_READ, MAP_SHARED, bfd, 0);
		if (m != MAP_FAILED) {
			test_dmabuf_sync(bfd, DMA_BUF_SYNC_START | DMA_BUF_SYNC_READ);
			if (pat_check(m, 4096, SEED_FILE, 4096) >= 0)
				rc = -EIO;
			test_dmabuf_sync(bfd, DMA_BUF_SYNC_END | DMA_BUF_SYNC_READ);
			munmap(m, 4096);
		}
	}
	close(fd);
	unlink(path);
	close(bfd);
	return rc;
}

static void test_heaps(void **state)
{
	char names[64][64];
	struct t_heap_info hi[66];
	struct dmaio_proposed_info si = { .struct_size = sizeof(struct dmaio_proposed_info) };
	int n, nd, i, j, rc, any_yes = 0, any_notty = 0, any_rw = 0;
	unsigned before = test_failures();
	uint8_t pat[sizeof(hi[0])];

	(void)state;
	nd = list_heaps(names, 64);
	n = t_probe_heaps(NULL, NULL, 0);
	if (nd == -ENOENT) {
		test_expect(n == 0, "no /dev/dma_heap, dmaio_probe_heaps = %d (expected 0)", n);
		printf("# no dma-heaps here\n");
		assert_no_failures_since(before);
		return;
	}
	test_expect(n == nd, "t_probe_heaps(max 0) = %d, /dev/dma_heap has %d", n, nd);
	if (nd > 64)
		nd = 64;
	memset(hi, 0xa5, sizeof(hi));
	memset(pat, 0xa5, sizeof(pat));
	rc = t_probe_heaps(NULL, hi, (size_t)nd + 2);
	test_expect(rc == nd, "t_probe_heaps(max %d) = %d, expected %d", nd + 2, rc, nd);
	test_expect(memcmp(&hi[nd], pat, sizeof(pat)) == 0 &&
			    memcmp(&hi[nd + 1], pat, sizeof(pat)) == 0,
		    "dmaio_probe_heaps wrote past the heaps present");
	for (i = 0; i < nd; i++) {
		struct t_heap_info *h = &hi[i];
		int own;

		test_expect(memchr(h->name, 0, sizeof(h->name)) != NULL,
			    "heap %d name not terminated", i);
		for (j = 0; j < nd; j++)
			if (strcmp(h->name, names[j]) == 0)
				break;
		test_expect(j < nd, "heap \"%.64s\" is not in /dev/dma_heap", h->name);
		for (j = 0; j < i; j++)
			test_expect(strcmp(h->name, hi[j].name) != 0, "heap %s listed twice",
				    h->name);
		test_expect(valid_cap(h->alloc) && valid_cap(h->mmap) && valid_cap(h->rw_file),
			    "heap %s: capability outside enum dmaio_cap", h->name);
		own = test_heap_alloc_fd(h->name, 4096);
		test_expect((own >= 0) == (h->alloc == DMAIO_CAP_YES),
			    "heap %s: alloc %s (%s), our own one-page allocation: %s", h->name,
			    capname(h->alloc), test_errname(h->alloc_err), test_errname(own));
		if (own < 0 && h->alloc == DMAIO_CAP_NO)
			test_expect(h->alloc_err == own, "heap %s: alloc_err %s, ours %s", h->name,
				    test_errname(h->alloc_err), test_errname(own));
		if (own >= 0) {
			void *m = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED, own, 0);

			test_expect((m != MAP_FAILED) == (h->mmap == DMAIO_CAP_YES),
				    "heap %s: mmap %s, our own mmap %s", h->name, capname(h->mmap),
				    m == MAP_FAILED ? strerror(errno) : "works");
			if (m != MAP_FAILED)
				munmap(m, 4096);
			close(own);
			any_yes++;
		}
		if (h->alloc == DMAIO_CAP_YES && h->rw_file != DMAIO_CAP_UNKNOWN) {
			int r = own_rw_file(h->name);

			test_expect((r == 0) == (h->rw_file == DMAIO_CAP_YES),
				    "heap %s: rw_file %s (%s), our own RW_FILE read: %s", h->name,
				    capname(h->rw_file), test_errname(h->rw_file_err),
				    test_errname(r));
			if (h->rw_file == DMAIO_CAP_NO)
				test_expect(h->rw_file_err == -ENOTTY || h->rw_file_err == -EINVAL,
					    "heap %s: rw_file_err %s", h->name,
					    test_errname(h->rw_file_err));
			if (h->rw_file == DMAIO_CAP_NO && r != 0 && (r == -ENOTTY || r == -EINVAL))
				test_expect(h->rw_file_err == r, "heap %s: rw_file_err %s, ours %s",
					    h->name, test_errname(h->rw_file_err), test_errname(r));
			any_notty += h->rw_file_err == -ENOTTY;
			any_rw += h->rw_file == DMAIO_CAP_YES;
		}
		printf("# heap %-20s alloc %s %s mmap %s rw_file %s %s\n", h->name,
		       capname(h->alloc), h->alloc == DMAIO_CAP_NO ? test_errname(h->alloc_err) : "",
		       capname(h->mmap), capname(h->rw_file),
		       h->rw_file == DMAIO_CAP_NO ? test_errname(h->rw_file_err) : "");
	}
	/* a shorter array: only max entries written, the count is still every heap */
	if (nd >= 2) {
		memset(hi, 0xa5, sizeof(hi));
		rc = t_probe_heaps(NULL, hi, (size_t)nd - 1);
		test_expect(rc == nd, "t_probe_heaps(max %d) = %d, expected %d", nd - 1, rc,
			    nd);
		test_expect(memcmp(&hi[nd - 1], pat, sizeof(pat)) == 0,
			    "t_probe_heaps(max %d) wrote entry %d", nd - 1, nd - 1);
	}
	/* the kernel-level RW_FILE answer agrees with the heaps' */
	assert_int_equal(dmaio_ctx_get_proposed(NULL, &si), 0);
	if (any_rw)
		test_expect(si.rw_file_kernel == DMAIO_CAP_YES,
			    "a heap takes RW_FILE, rw_file_kernel %s", capname(si.rw_file_kernel));
	if (any_notty)
		test_expect(si.rw_file_kernel == DMAIO_CAP_NO,
			    "-ENOTTY from a heap, rw_file_kernel %s", capname(si.rw_file_kernel));
	if (expect) {
		test_expect(any_yes >= 1, "expected devices: no heap allocates");
		for (i = 0; i < nd; i++)
			if (strcmp(hi[i].name, "system") == 0)
				test_expect(hi[i].alloc == DMAIO_CAP_YES,
					    "expected devices: system heap %s",
					    capname(hi[i].alloc));
	}
	assert_no_failures_since(before);
}

/* ------------------------------------------------------------------------------------------ */

struct own_align {
	bool have;
	uint32_t mem, off, rd;
};

static struct own_align own_statx(int fd)
{
	struct own_align o = { 0 };
	struct statx stx;

	memset(&stx, 0, sizeof(stx));
	if (statx(fd, "", AT_EMPTY_PATH, STATX_DIOALIGN | STATX_DIO_READ_ALIGN_, &stx) != 0)
		return o;
	if (!(stx.stx_mask & STATX_DIOALIGN) || !stx.stx_dio_offset_align)
		return o;
	o.have = true;
	o.mem = stx.stx_dio_mem_align;
	o.off = stx.stx_dio_offset_align;
	o.rd = o.off;
	if (stx.stx_mask & STATX_DIO_READ_ALIGN_) {
		uint32_t v;

		memcpy(&v, (char *)&stx + STX_DIO_READ_ALIGN_OFFSET, sizeof(v));
		if (v)
			o.rd = v;
	}
	return o;
}

/* O_DIRECT I/O at exactly the alignment reported must work. */
static void try_aligned(const char *what, const char *path, const struct dmaio_file_info *fi,
			bool rw)
{
	size_t ma = fi->dio_mem_align ? fi->dio_mem_align : 1;
	size_t len = fi->dio_offset_align;
	uint8_t *mem = NULL;
	ssize_t r;
	int fd;

	if (!len)
		return;
	fd = open(path, (rw ? O_RDWR : O_RDONLY) | O_DIRECT | O_CLOEXEC);
	test_expect(fd >= 0, "%s: direct YES but O_DIRECT open fails: %s", what, strerror(errno));
	if (fd < 0)
		return;
	assert_int_equal(posix_memalign((void **)&mem, 65536, 65536 + len), 0);
	/* the memory only aligned to dio_mem_align (when smaller than a page) */
	r = pread(fd, mem + (ma < 4096 ? ma : 0), len, (off_t)fi->dio_read_offset_align);
	test_expect(r == (ssize_t)len,
		    "%s: O_DIRECT pread(mem align %zu, len %zu, off %u) = %zd (%s)", what, ma, len,
		    fi->dio_read_offset_align, r, r < 0 ? strerror(errno) : "");
	if (rw) {
		r = pwrite(fd, mem + (ma < 4096 ? ma : 0), len, (off_t)fi->dio_offset_align);
		test_expect(r == (ssize_t)len,
			    "%s: O_DIRECT pwrite(mem align %zu, len %zu, off %u) = %zd (%s)", what,
			    ma, len, fi->dio_offset_align, r, r < 0 ? strerror(errno) : "");
	}
	free(mem);
	close(fd);
}

static void check_file(const char *what, const char *path, int fd, bool blk)
{
	struct dmaio_file_info fi = { .struct_size = sizeof(struct dmaio_file_info) }, fi2 = { .struct_size = sizeof(struct dmaio_file_info) };
	struct own_align own;
	struct statfs sf;
	struct stat st;
	int direct, rc;

	memset(&fi, 0xa5, sizeof(fi)); fi.struct_size = sizeof(fi);
	rc = dmaio_fd_get_info(fd, &fi);
	test_expect(rc == 0, "%s: dmaio_probe_file = %s", what, test_errname(rc));
	if (rc)
		return;
	printf("# %s: blockdev %d direct %s %s mem_align %u offset_align %u read_align %u "
	       "source %u fs_magic %#x size %llu\n", what, fi.is_blockdev, capname(fi.direct),
	       fi.direct == DMAIO_CAP_NO ? test_errname(fi.direct_err) : "", fi.dio_mem_align,
	       fi.dio_offset_align, fi.dio_read_offset_align, fi.align_source, fi.fs_magic,
	       (unsigned long long)fi.file_size);
	assert_int_equal(fstat(fd, &st), 0);
	test_expect(fi.is_blockdev == (blk ? 1 : 0), "%s: is_blockdev %d", what, fi.is_blockdev);
	if (blk) {
		uint64_t sz = 0;

		assert_int_equal(ioctl(fd, BLKGETSIZE64, &sz), 0);
		test_expect(fi.file_size == sz, "%s: size %llu, BLKGETSIZE64 %llu", what,
			    (unsigned long long)fi.file_size, (unsigned long long)sz);
		test_expect(fi.fs_magic == 0, "%s: fs_magic %#x for a block device", what,
			    fi.fs_magic);
	} else {
		test_expect(fi.file_size == (uint64_t)st.st_size, "%s: size %llu, st_size %lld", what,
			    (unsigned long long)fi.file_size, (long long)st.st_size);
		assert_int_equal(fstatfs(fd, &sf), 0);
		test_expect(fi.fs_magic == (uint32_t)sf.f_type, "%s: fs_magic %#x, statfs %#lx",
			    what, fi.fs_magic, (unsigned long)sf.f_type);
	}
	direct = test_can_odirect(path);
	test_expect((fi.direct == DMAIO_CAP_YES) == (direct == 1),
		    "%s: direct %s, our own O_DIRECT open %s", what, capname(fi.direct),
		    direct ? "works" : "fails");
	if (fi.direct == DMAIO_CAP_NO)
		test_expect(fi.direct_err < 0, "%s: direct NO without an errno", what);
	test_expect(fi.align_source <= 2, "%s: align_source %u", what, fi.align_source);
	own = own_statx(fd);
	if (own.have) {
		test_expect(fi.align_source == 1, "%s: statx gives DIOALIGN, align_source %u", what,
			    fi.align_source);
		test_expect(fi.dio_mem_align == own.mem && fi.dio_offset_align == own.off &&
				    fi.dio_read_offset_align == own.rd,
			    "%s: alignment %u/%u/%u, statx says %u/%u/%u", what, fi.dio_mem_align,
			    fi.dio_offset_align, fi.dio_read_offset_align, own.mem, own.off,
			    own.rd);
	}
	if (fi.align_source == 0)
		test_expect(fi.dio_offset_align == 0, "%s: alignment without a source", what);
	if (fi.dio_offset_align) {
		test_expect(fi.dio_read_offset_align &&
				    fi.dio_read_offset_align <= fi.dio_offset_align,
			    "%s: dio_read_offset_align %u vs dio_offset_align %u", what,
			    fi.dio_read_offset_align, fi.dio_offset_align);
		test_expect((fi.dio_offset_align & (fi.dio_offset_align - 1)) == 0 &&
				    (fi.dio_mem_align & (fi.dio_mem_align - 1)) == 0,
			    "%s: alignments not powers of two", what);
	}
	if (blk) {
		int lbs = 0;

		if (ioctl(fd, BLKSSZGET, &lbs) == 0 && fi.align_source)
			test_expect(fi.dio_offset_align == (uint32_t)lbs,
				    "%s: dio_offset_align %u, logical block size %d", what,
				    fi.dio_offset_align, lbs);
	}
	if (fi.direct == DMAIO_CAP_YES)
		try_aligned(what, path, &fi, !blk);
	/* the same answer for an fd opened with O_DIRECT */
	{
		int dfd = open(path, O_RDONLY | O_DIRECT | O_CLOEXEC);

		if (dfd >= 0) {
			memset(&fi2, 0xa5, sizeof(fi2)); fi2.struct_size = sizeof(fi2);
			test_expect(dmaio_fd_get_info(dfd, &fi2) == 0 &&
					    fi2.direct == fi.direct &&
					    fi2.dio_offset_align == fi.dio_offset_align &&
					    fi2.file_size == fi.file_size,
				    "%s: probe through an O_DIRECT fd differs", what);
			close(dfd);
		}
	}
}

static void test_file(void **state)
{
	const char *dirs[16];
	char path[PATH_MAX], what[PATH_MAX + 16];
	unsigned before = test_failures();
	int nd, i, fd;

	(void)state;
	nd = test_dirs(dirs, 16);
	for (i = 0; i < nd; i++) {
		fd = test_tmpfile(dirs[i], path, sizeof(path));
		assert_int_equal(file_fill_pattern(fd, 0, MiB + 3, SEED_FILE), 0);
		snprintf(what, sizeof(what), "file in %s", dirs[i]);
		check_file(what, path, fd, false);
		close(fd);
		unlink(path);
	}
	/* a memory filesystem too, if there is one: just consistency */
	if (access("/dev/shm", W_OK) == 0) {
		fd = test_tmpfile("/dev/shm", path, sizeof(path));
		assert_int_equal(file_fill_pattern(fd, 0, 8192, SEED_FILE), 0);
		check_file("file in /dev/shm", path, fd, false);
		close(fd);
		unlink(path);
	}
	if (getenv("DMAIO_TEST_RAWDEV") && *getenv("DMAIO_TEST_RAWDEV")) {
		const char *dev = getenv("DMAIO_TEST_RAWDEV");

		fd = open(dev, O_RDONLY | O_CLOEXEC);
		test_expect(fd >= 0, "open %s: %s", dev, strerror(errno));
		if (fd >= 0) {
			check_file(dev, dev, fd, true);
			close(fd);
		}
	}
	assert_no_failures_since(before);
}

/* ------------------------------------------------------------------------------------------ */
/* What the probes say about the provider under test (--heap) */

static void test_provider(void **state)
{
	struct dmaio_ctx *ctx = NULL;
	struct dmaio_buf *b = NULL;
	struct dmaio_sys_info si = { .struct_size = sizeof(struct dmaio_sys_info) };
	struct t_heap_info hi[64];
	unsigned before = test_failures();
	int rc, n, i;

	(void)state;
	if (!args.heap_name || strcmp(args.heap_name, "memfd") == 0) {
		printf("# no device provider under test\n");
		skip();
	}
	assert_int_equal(dmaio_ctx_new(0, &ctx), 0);
	rc = t_alloc(ctx, args.heap_name, 4096, 0, &b);
	test_expect(rc == 0, "dmaio_buf_alloc(%s) = %s", args.heap, test_errname(rc));
	assert_int_equal(dmaio_ctx_get_system(ctx, &si), 0);
	switch (test_expected_kind(args.heap_name)) {
	case DMAIO_BUF_HEAP:
		n = t_probe_heaps(ctx, hi, ARRAY_SIZE(hi));
		test_expect(n >= 1, "dmaio_probe_heaps = %d", n);
		for (i = 0; i < n && i < (int)ARRAY_SIZE(hi); i++)
			if (strcmp(hi[i].name, args.heap_name) == 0)
				break;
		test_expect(i < n, "heap %s not listed", args.heap_name);
		if (i < n)
			test_expect(hi[i].alloc == DMAIO_CAP_YES && hi[i].mmap == DMAIO_CAP_YES,
				    "heap %s: alloc %s mmap %s", args.heap_name,
				    capname(hi[i].alloc), capname(hi[i].mmap));
		break;
	case DMAIO_BUF_UDMABUF:
		test_expect(si.udmabuf == DMAIO_CAP_YES, "udmabuf allocates but probe says %s",
			    capname(si.udmabuf));
		break;
	case DMAIO_BUF_UDMABUF_HUGE:
		test_expect(si.udmabuf == DMAIO_CAP_YES && si.udmabuf_huge != DMAIO_CAP_NO &&
				    si.hugetlb_memfd != DMAIO_CAP_NO && si.huge_page_size > 0,
			    "udmabuf-huge allocates but probe says udmabuf %s udmabuf_huge %s "
			    "hugetlb_memfd %s huge_page_size %u",
			    capname(si.udmabuf), capname(si.udmabuf_huge),
			    capname(si.hugetlb_memfd), si.huge_page_size);
		break;
	case DMAIO_BUF_DRM:
		test_expect(si.drm == DMAIO_CAP_YES && si.drm_node[0],
			    "drm allocates but probe says %s (%s)", capname(si.drm), si.drm_node);
		break;
	default:
		break;
	}
	dmaio_buf_free(b);
	dmaio_ctx_free(ctx);
	assert_no_failures_since(before);
}

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_system),
		cmocka_unit_test(test_heaps),
		cmocka_unit_test(test_file),
		cmocka_unit_test(test_provider),
	};
	struct dmaio_buf *b = NULL;
	int rc;

	test_parse_args(argc, argv, &args, "memfd");
	expect = args.expect_devices;
	setvbuf(stdout, NULL, _IOLBF, 0);
	if (args.heap_name && strcmp(args.heap_name, "memfd") != 0) {
		rc = test_alloc_or_skip(NULL, args.heap_name, 4096, 0, &b);
		if (rc) {
			fprintf(stderr, "dmaio_buf_alloc(%s) = %s\n", args.heap, test_errname(rc));
			return 1;
		}
		dmaio_buf_free(b);
	}
	rc = cmocka_run_group_tests_name("probe", tests, NULL, NULL);
	printf("# probe: %u failures reported\n", test_failures());
	test_cleanup();
	return rc ? 1 : 0;
}
