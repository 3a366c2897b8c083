/* SPDX-License-Identifier: MIT */
/* Probing: what the machine offers (once per context, cached) and what each file allows. */
#include <dirent.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/fs.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/statfs.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "dmaio-private.h"

#define ANON_INODE_FS_MAGIC 0x09041934u
#define DMA_BUF_MAGIC_FS 0x444d4142u

uint64_t dmaio_read_sysfs_u64(const char *path, uint64_t dflt)
{
	char line[64];
	ssize_t n;
	int fd = open(path, O_RDONLY | O_CLOEXEC);

	if (fd < 0)
		return dflt;
	n = read(fd, line, sizeof(line) - 1);
	close(fd);
	if (n <= 0)
		return dflt;
	line[n] = 0;
	return strtoull(line, NULL, 10);
}

uint32_t dmaio_huge_page_size(void)
{
	static uint32_t cached;
	uint32_t kb = 0, c = __atomic_load_n(&cached, __ATOMIC_RELAXED);
	char line[128];
	FILE *f;

	if (c)
		return c;
	f = fopen("/proc/meminfo", "re");
	if (!f)
		return 0;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "Hugepagesize: %u kB", &kb) == 1)
			break;
	fclose(f);
	__atomic_store_n(&cached, kb * 1024u, __ATOMIC_RELAXED);
	return kb * 1024u;
}

/* ---- heaps -------------------------------------------------------------------------------- */
static int heap_cmp(const void *a, const void *b)
{
	return strcmp(((const struct dmaio_heap *)a)->name, ((const struct dmaio_heap *)b)->name);
}

int dmaio_list_heaps_locked(struct dmaio_ctx *ctx)
{
	struct dmaio_heap *v = NULL;
	struct dirent *de;
	int n = 0, cap = 0;
	DIR *d;

	if (ctx->heaps_listed)
		return ctx->nheaps;
	d = opendir("/dev/dma_heap");
	if (!d) {
		int err = neg_errno();

		ctx->heaps_listed = true;
		ctx->nheaps = 0;
		return err;
	}
	while ((de = readdir(d))) {
		if (de->d_name[0] == '.' || strlen(de->d_name) >= DMAIO_NAME_MAX)
			continue;
		if (n == cap) {
			struct dmaio_heap *nv = realloc(v, sizeof(*v) * (size_t)(cap ? cap * 2 : 8));

			if (!nv) {
				closedir(d);
				free(v);
				return -ENOMEM;
			}
			v = nv;
			cap = cap ? cap * 2 : 8;
		}
		memset(&v[n], 0, sizeof(v[n]));
		strcpy(v[n].name, de->d_name);
		strcpy(v[n].info.name, de->d_name);
		v[n].fd = -1;
		n++;
	}
	closedir(d);
	if (n)
		qsort(v, (size_t)n, sizeof(*v), heap_cmp);
	ctx->heaps = v;
	ctx->nheaps = n;
	ctx->heaps_listed = true;
	return n;
}

struct dmaio_heap *dmaio_find_heap_locked(struct dmaio_ctx *ctx, const char *name)
{
	dmaio_list_heaps_locked(ctx);
	for (int i = 0; i < ctx->nheaps; i++)
		if (!strcmp(ctx->heaps[i].name, name))
			return &ctx->heaps[i];
	return NULL;
}

/* A one-page allocation proves the heap allocates; mapping it proves mmap; RW_FILE is probed on
 * the same buffer. */
void dmaio_probe_heap_locked(struct dmaio_ctx *ctx, struct dmaio_heap *h)
{
	size_t ps = (size_t)dmaio_page_size();
	int fd, r, err;
	void *p;

	if (h->probed)
		return;
	h->probed = true;
	r = dmaio_heap_alloc_fd(ctx, h, ps, &fd);
	if (r < 0) {
		h->info.alloc = DMAIO_CAP_NO;
		h->info.alloc_err = r;
		h->info.mmap = DMAIO_CAP_UNKNOWN;
		return;
	}
	h->info.alloc = DMAIO_CAP_YES;
	p = sys_mmap(ps, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0, &err);
	if (p) {
		h->info.mmap = DMAIO_CAP_YES;
		munmap(p, ps);
	} else {
		h->info.mmap = DMAIO_CAP_NO;
	}
	dmaio_heap_probe_rw_file(ctx, h, fd);
	close(fd);
}

/* ---- system ------------------------------------------------------------------------------- */
static void probe_udmabuf(struct dmaio_ctx *ctx, struct dmaio_sys_info *s)
{
	int fd = open("/dev/udmabuf", O_RDWR | O_CLOEXEC);

	if (fd < 0) {
		s->udmabuf = DMAIO_CAP_NO;
		s->udmabuf_err = neg_errno();
	} else {
		s->udmabuf = DMAIO_CAP_YES;
		ctx->udmabuf_fd = fd;
	}
	s->udmabuf_size_limit =
		dmaio_read_sysfs_u64("/sys/module/udmabuf/parameters/size_limit_mb", 0) << 20;
	s->udmabuf_list_limit =
		(uint32_t)dmaio_read_sysfs_u64("/sys/module/udmabuf/parameters/list_limit", 0);
}

static void probe_hugetlb(struct dmaio_ctx *ctx, struct dmaio_sys_info *s)
{
	size_t sz;
	int fd;

	s->huge_page_size = dmaio_huge_page_size();
	s->hugetlb_memfd = DMAIO_CAP_NO;
	s->udmabuf_huge = DMAIO_CAP_NO;
	if (!s->huge_page_size)
		return;
	fd = dmaio_memfd_create(s->huge_page_size, true, true, &sz, 0);
	if (fd < 0)
		return;
	s->hugetlb_memfd = DMAIO_CAP_YES;
	if (ctx->udmabuf_fd >= 0) {
		struct dmaio_buf b = { .fd = -1, .memfd = -1 };

		close(fd);
		/* the provider proves it end to end, seals and all */
		if (!dmaio_udmabuf_make(ctx, ctx->udmabuf_fd, s->huge_page_size, true,
					s->udmabuf_size_limit, s->udmabuf_list_limit, &b)) {
			s->udmabuf_huge = DMAIO_CAP_YES;
			close(b.fd);
			close(b.memfd);
		}
		return;
	}
	close(fd);
}

void dmaio_probe_sys_locked(struct dmaio_ctx *ctx)
{
	struct dmaio_sys_info *s = &ctx->sys;
	int n;

	if (ctx->sys_probed)
		return;
	ctx->sys_probed = true;
	memset(s, 0, sizeof(*s));
	s->page_size = (uint32_t)dmaio_page_size();
	n = dmaio_list_heaps_locked(ctx);
	s->nheaps = n;
	probe_udmabuf(ctx, s);
	probe_hugetlb(ctx, s);
	s->io_uring_disabled =
		(int32_t)dmaio_read_sysfs_u64("/proc/sys/kernel/io_uring_disabled", (uint64_t)-1);
	dmaio_uring_probe(s);
	dmaio_drm_probe_locked(ctx, s);
	s->rw_file_kernel = DMAIO_CAP_UNKNOWN;
	s->uring_dmabuf = DMAIO_CAP_UNKNOWN;
	for (int i = 0; i < ctx->nheaps; i++) {
		struct dmaio_heap *h = &ctx->heaps[i];

		dmaio_probe_heap_locked(ctx, h);
		if (h->info.rw_file == DMAIO_CAP_YES)
			s->rw_file_kernel = DMAIO_CAP_YES;
		else if (h->info.rw_file_err == -ENOTTY)
			s->rw_file_kernel = DMAIO_CAP_NO;
		else if (h->info.rw_file_err == -EINVAL && s->rw_file_kernel == DMAIO_CAP_UNKNOWN)
			s->rw_file_kernel = DMAIO_CAP_YES; /* the core knows it, this exporter not */
	}
	/* io_uring dma-buf registration: tried with a heap buffer against a memfd target; the
	 * proposal only takes NVMe block devices, so this mostly proves the kernel lacks it. */
	if (s->io_uring == DMAIO_CAP_YES && ctx->nheaps > 0) {
		for (int i = 0; i < ctx->nheaps; i++) {
			struct dmaio_heap *h = &ctx->heaps[i];
			int fd, t, r;

			if (h->info.alloc != DMAIO_CAP_YES ||
			    dmaio_heap_alloc_fd(ctx, h, s->page_size, &fd))
				continue;
			t = dmaio_memfd_create(s->page_size, false, true, NULL, 0);
			r = t < 0 ? t : dmaio_uring_dmabuf_probe(ctx, fd, t);
			s->uring_dmabuf = r ? DMAIO_CAP_NO : DMAIO_CAP_YES;
			s->uring_dmabuf_err = r;
			if (t >= 0)
				close(t);
			close(fd);
			break;
		}
	} else if (s->io_uring != DMAIO_CAP_YES) {
		s->uring_dmabuf = DMAIO_CAP_NO;
		s->uring_dmabuf_err = s->io_uring_err;
	}
	if (ctx->uring_dmabuf == DMAIO_CAP_UNKNOWN && s->uring_dmabuf == DMAIO_CAP_NO &&
	    s->uring_dmabuf_err != -EOPNOTSUPP)
		ctx->uring_dmabuf = DMAIO_CAP_NO; /* the kernel has no such registration at all */
}

DMAIO_EXPORT int dmaio_probe_system(struct dmaio_ctx *ctx, struct dmaio_sys_info *info)
{
	struct dmaio_ctx *c;

	if (!info)
		return -EINVAL;
	c = dmaio_ctx_get(ctx);
	if (!c)
		return -ENOMEM;
	pthread_mutex_lock(&c->lock);
	dmaio_probe_sys_locked(c);
	*info = c->sys;
	pthread_mutex_unlock(&c->lock);
	return 0;
}

DMAIO_EXPORT int dmaio_probe_heaps(struct dmaio_ctx *ctx, struct dmaio_heap_info *heaps, size_t max)
{
	struct dmaio_ctx *c;
	int n;

	if (!heaps && max)
		return -EINVAL;
	c = dmaio_ctx_get(ctx);
	if (!c)
		return -ENOMEM;
	pthread_mutex_lock(&c->lock);
	n = dmaio_list_heaps_locked(c);
	if (n == -ENOENT)
		n = 0;
	for (int i = 0; i < n; i++) {
		dmaio_probe_heap_locked(c, &c->heaps[i]);
		if ((size_t)i < max)
			heaps[i] = c->heaps[i].info;
	}
	pthread_mutex_unlock(&c->lock);
	return n;
}

/* ---- files -------------------------------------------------------------------------------- */
/* statx with the kernel's own layout: glibc 2.36's struct statx lacks the DIO fields. */
struct kstatx {
	uint32_t mask, blksize;
	uint64_t attributes;
	uint32_t nlink, uid, gid;
	uint16_t mode, pad1;
	uint64_t ino, size, blocks, attributes_mask;
	struct { int64_t sec; uint32_t nsec; int32_t pad; } atime, btime, ctime, mtime;
	uint32_t rdev_major, rdev_minor, dev_major, dev_minor;
	uint64_t mnt_id;
	uint32_t dio_mem_align, dio_offset_align;
	uint64_t subvol;
	uint32_t atomic_write_unit_min, atomic_write_unit_max, atomic_write_segments_max;
	uint32_t dio_read_offset_align;
	uint64_t spare[9];
};
#define K_STATX_DIOALIGN 0x00002000u
#define K_STATX_DIO_READ_ALIGN 0x00020000u

/* Alignments of an open file: statx(STATX_DIOALIGN), else the logical block size of a block
 * device, else the page size (safe for every filesystem that does O_DIRECT at all). */
static void file_align(int fd, bool is_blk, uint32_t *mem, uint32_t *off, uint32_t *roff,
		       uint32_t *source)
{
	struct kstatx sx;

	memset(&sx, 0, sizeof(sx));
	if (!syscall(SYS_statx, fd, "", AT_EMPTY_PATH, K_STATX_DIOALIGN | K_STATX_DIO_READ_ALIGN,
		     &sx) &&
	    (sx.mask & K_STATX_DIOALIGN) && sx.dio_offset_align) {
		*mem = sx.dio_mem_align;
		*off = sx.dio_offset_align;
		*roff = (sx.mask & K_STATX_DIO_READ_ALIGN) && sx.dio_read_offset_align ?
				sx.dio_read_offset_align : sx.dio_offset_align;
		*source = 1;
		return;
	}
	if (is_blk) {
		int lbs = 0;

		if (!ioctl(fd, BLKSSZGET, &lbs) && lbs > 0) {
			*mem = *off = *roff = (uint32_t)lbs;
			*source = 2;
			return;
		}
	}
	*mem = *off = *roff = (uint32_t)dmaio_page_size();
	*source = 2;
}

/* Checks the caller's fd for the direction and fills what every path needs. */
int dmaio_file_open(struct dmaio_file *f, int fd, bool write)
{
	struct statfs sfs;
	struct stat st;
	int fl;

	memset(f, 0, sizeof(*f));
	f->fd = fd;
	f->dfd = f->bfd = -1;
	fl = fcntl(fd, F_GETFL);
	if (fl < 0 || (fl & O_PATH))
		return -EBADF; /* closed, or an O_PATH descriptor that cannot do I/O */
	if (fstat(fd, &st))
		return neg_errno();
	if (S_ISDIR(st.st_mode))
		return -EISDIR;
	if (S_ISFIFO(st.st_mode) || S_ISSOCK(st.st_mode) || S_ISCHR(st.st_mode))
		return -ESPIPE;
	if (!S_ISREG(st.st_mode) && !S_ISBLK(st.st_mode))
		return -EINVAL;
	if (!fstatfs(fd, &sfs) && ((uint32_t)sfs.f_type == ANON_INODE_FS_MAGIC ||
				   (uint32_t)sfs.f_type == DMA_BUF_MAGIC_FS))
		return -EINVAL;
	f->accmode = fl & O_ACCMODE;
	if (write && (f->accmode == O_RDONLY || (fl & O_APPEND)))
		return -EBADF;
	if (!write && f->accmode == O_WRONLY)
		return -EBADF;
	f->caller_direct = fl & O_DIRECT;
	f->is_blk = S_ISBLK(st.st_mode);
	f->dev = st.st_dev;
	f->rdev = st.st_rdev;
	f->ino = st.st_ino;
	f->size = (uint64_t)st.st_size;
	if (f->is_blk) {
		uint64_t sz = 0;

		if (!ioctl(fd, BLKGETSIZE64, &sz))
			f->size = sz;
	}
	return 0;
}

void dmaio_file_close(struct dmaio_file *f)
{
	if (f->dfd_owned && f->dfd >= 0)
		close(f->dfd);
	if (f->bfd_owned && f->bfd >= 0)
		close(f->bfd);
	f->dfd = f->bfd = -1;
	f->dfd_owned = f->bfd_owned = false;
}

/* Another open file description of the same file, through /proc/self/fd (keeps the caller's
 * file status flags and offset untouched). */
static int reopen(int fd, int accmode, int extra)
{
	char path[40];
	int r;

	snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
	r = sys_open(path, accmode | extra, 0);
	return r < 0 ? neg_errno() : r;
}

int dmaio_file_direct_fd(struct dmaio_file *f, bool write)
{
	uint32_t mem, off, roff, src;

	if (f->direct < 0)
		return f->direct;
	if (f->dfd >= 0)
		return f->dfd;
	if (f->caller_direct) {
		f->dfd = f->fd;
	} else {
		int r = reopen(f->fd, f->accmode, O_DIRECT);

		if (r < 0) {
			/* EINVAL: the filesystem has no O_DIRECT; ENOENT: no /proc */
			f->direct = r;
			return r;
		}
		f->dfd = r;
		f->dfd_owned = true;
	}
	file_align(f->dfd, f->is_blk, &mem, &off, &roff, &src);
	f->mem_align = mem ? mem : 1;
	f->off_align = write ? off : roff;
	f->align_known = true;
	f->direct = 1;
	return f->dfd;
}

int dmaio_file_buffered_fd(struct dmaio_file *f)
{
	if (f->bfd >= 0)
		return f->bfd;
	if (!f->caller_direct) {
		f->bfd = f->fd;
	} else {
		int r = reopen(f->fd, f->accmode, 0);

		if (r < 0)
			return r;
		f->bfd = r;
		f->bfd_owned = true;
	}
	return f->bfd;
}

/* cachestat(2) (6.5+), absent from older headers: one number on every architecture. */
#ifndef __NR_cachestat
#define __NR_cachestat 451
#endif
struct k_cachestat_range {
	uint64_t off, len;
};
struct k_cachestat {
	uint64_t nr_cache, nr_dirty, nr_writeback, nr_evicted, nr_recently_evicted;
};

/* Percentage of the pages of [off, off + len) that sit in the page cache, -errno when the kernel
 * cannot tell (no cachestat, or a file type it refuses). Asked once per call and range. */
int dmaio_file_cached_pct(struct dmaio_file *f, uint64_t off, uint64_t len)
{
	uint64_t ps = (uint64_t)dmaio_page_size(), pages;
	struct k_cachestat_range rg;
	struct k_cachestat cs;

	if (f->cached_known && f->cached_off == off && f->cached_len == len)
		return f->cached_pct;
	if (off >= f->size)
		return -ENODATA;
	if (len > f->size - off)
		len = f->size - off;
	rg.off = off / ps * ps;
	rg.len = round_up_u64(off + len, ps) - rg.off;
	pages = rg.len / ps;
	f->cached_known = true;
	f->cached_off = off;
	f->cached_len = len;
	if (syscall(__NR_cachestat, f->fd, &rg, &cs, 0))
		f->cached_pct = neg_errno();
	else
		f->cached_pct = (int)(pages ? MIN(cs.nr_cache, pages) * 100 / pages : 0);
	return f->cached_pct;
}

DMAIO_EXPORT int dmaio_probe_file(struct dmaio_ctx *ctx, int fd, struct dmaio_file_info *info)
{
	struct dmaio_file f;
	struct statfs sfs;
	uint32_t mem = 0, off = 0, roff = 0, src = 0;
	int r;

	if (!info)
		return -EINVAL;
	if (fd < 0)
		return -EBADF;
	r = dmaio_file_open(&f, fd, false);
	if (r == -EBADF && fcntl(fd, F_GETFL) >= 0)
		r = dmaio_file_open(&f, fd, true); /* write-only fds are fine here */
	if (r)
		return r;
	memset(info, 0, sizeof(*info));
	info->is_blockdev = f.is_blk;
	info->size = f.size;
	if (!f.is_blk && !fstatfs(fd, &sfs))
		info->fs_magic = (uint32_t)sfs.f_type;
	r = dmaio_file_direct_fd(&f, false);
	if (r < 0) {
		info->direct = DMAIO_CAP_NO;
		info->direct_err = r;
	} else {
		info->direct = DMAIO_CAP_YES;
		file_align(r, f.is_blk, &mem, &off, &roff, &src);
	}
	info->dio_mem_align = mem;
	info->dio_offset_align = off;
	info->dio_read_offset_align = roff;
	info->align_source = src;
	dmaio_file_close(&f);
	(void)ctx;
	return 0;
}
