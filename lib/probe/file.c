/* SPDX-License-Identifier: MIT */
/* Probing a file, once: type, size, access mode, O_DIRECT support and alignment, the two
 * descriptors the paths need (O_DIRECT and buffered). What changes during I/O (the size, the
 * page-cache residency of a range) is kept up to date by the sys layer (sys/sysio.c). */
#include <fcntl.h>
#include <linux/fs.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/statfs.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "probe.h"
#include "../sys/sys.h"

#define ANON_INODE_FS_MAGIC 0x09041934u
#define DMA_BUF_MAGIC_FS 0x444d4142u

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

/* Alignments of an open O_DIRECT file: statx(STATX_DIOALIGN | STATX_DIO_READ_ALIGN), else the
 * logical block size of a block device, else the page size (safe for every filesystem that does
 * O_DIRECT at all). */
static void file_align(struct dmaio_file *f)
{
	struct kstatx sx;

	memset(&sx, 0, sizeof(sx));
	if (!syscall(SYS_statx, f->dfd, "", AT_EMPTY_PATH, K_STATX_DIOALIGN | K_STATX_DIO_READ_ALIGN,
		     &sx) &&
	    (sx.mask & K_STATX_DIOALIGN) && sx.dio_offset_align) {
		f->mem_align = sx.dio_mem_align ? sx.dio_mem_align : 1;
		f->off_align = sx.dio_offset_align;
		f->roff_align = (sx.mask & K_STATX_DIO_READ_ALIGN) && sx.dio_read_offset_align ?
					sx.dio_read_offset_align : sx.dio_offset_align;
		f->align_source = 1;
		return;
	}
	f->align_source = 2;
	if (f->is_blk) {
		int lbs = 0;

		if (!ioctl(f->dfd, BLKSSZGET, &lbs) && lbs > 0) {
			f->mem_align = f->off_align = f->roff_align = (uint32_t)lbs;
			return;
		}
	}
	f->mem_align = f->off_align = f->roff_align = (uint32_t)dmaio_page_size();
}

/* Another open file description of the same file, through /proc/self/fd (keeps the caller's
 * file status flags and offset untouched). */
static int reopen(int fd, int accmode, int extra)
{
	char path[40];

	snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
	return sys_open(path, accmode | extra, 0);
}

int dmaio_file_probe(struct dmaio_ctx *ctx, int fd, bool own, struct dmaio_file *f)
{
	static uint64_t next_id; /* process-wide */
	struct statfs sfs;
	struct stat st;
	int fl, r;

	memset(f, 0, sizeof(*f));
	f->ctx = ctx;
	f->fd = f->dfd = f->bfd = -1;
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
	if (!fstatfs(fd, &sfs)) {
		if ((uint32_t)sfs.f_type == ANON_INODE_FS_MAGIC ||
		    (uint32_t)sfs.f_type == DMA_BUF_MAGIC_FS)
			return -EINVAL;
		f->fs_magic = S_ISBLK(st.st_mode) ? 0 : (uint32_t)sfs.f_type;
	}
	f->id = __atomic_add_fetch(&next_id, 1, __ATOMIC_RELAXED);
	f->accmode = fl & O_ACCMODE;
	f->sync_flags = fl & (O_SYNC | O_DSYNC); /* the caller's durability, kept by the reopens */
	f->append = fl & O_APPEND;
	f->caller_direct = fl & O_DIRECT;
	f->is_blk = S_ISBLK(st.st_mode);
	f->dev = (uint64_t)st.st_dev;
	f->ino = (uint64_t)st.st_ino;
	f->size = (uint64_t)st.st_size;
	if (f->is_blk) {
		uint64_t sz = 0;

		if (!ioctl(fd, BLKGETSIZE64, &sz))
			f->size = sz;
	}
	if (own) {
		r = sys_dup(fd);
		if (r < 0)
			return r;
		f->fd = r;
		f->fd_owned = true;
	} else {
		f->fd = fd;
	}
	/* the O_DIRECT descriptor: the file's own, or a reopened one */
	if (f->caller_direct) {
		f->dfd = f->fd;
	} else {
		r = reopen(f->fd, f->accmode, O_DIRECT | f->sync_flags);
		if (r < 0) {
			/* EINVAL: the filesystem has no O_DIRECT; ENOENT: no /proc; EMFILE...:
			 * the page-cache paths still serve */
			f->direct = r;
		} else {
			f->dfd = r;
			f->dfd_owned = true;
		}
	}
	if (f->dfd >= 0) {
		f->direct = 1;
		file_align(f);
	}
	/* the buffered descriptor: the file's own, or a reopened one without O_DIRECT */
	if (!f->caller_direct) {
		f->bfd = f->fd;
	} else {
		r = reopen(f->fd, f->accmode, f->sync_flags);
		if (r < 0) {
			dmaio_file_release(f);
			return r;
		}
		f->bfd = r;
		f->bfd_owned = true;
	}
	return 0;
}

void dmaio_file_release(struct dmaio_file *f)
{
	if (f->dfd_owned && f->dfd >= 0)
		close(f->dfd);
	if (f->bfd_owned && f->bfd >= 0)
		close(f->bfd);
	if (f->fd_owned && f->fd >= 0)
		close(f->fd);
	f->fd = f->dfd = f->bfd = -1;
	f->fd_owned = f->dfd_owned = f->bfd_owned = false;
}

int dmaio_file_check_dir(const struct dmaio_file *f, bool write)
{
	if (write && (f->accmode == O_RDONLY || f->append))
		return -EBADF;
	if (!write && f->accmode == O_WRONLY)
		return -EBADF;
	return 0;
}

void dmaio_file_fill_info(const struct dmaio_file *f, struct dmaio_file_info *info)
{
	memset(info, 0, sizeof(*info));
	info->is_blockdev = f->is_blk;
	info->struct_size = sizeof(*info);
	info->file_size = dmaio_file_size_load(f);
	info->fs_magic = f->fs_magic;
	if (f->direct < 0) {
		info->direct = DMAIO_CAP_NO;
		info->direct_err = f->direct;
		return;
	}
	info->direct = DMAIO_CAP_YES;
	info->dio_mem_align = f->mem_align;
	info->dio_offset_align = f->off_align;
	info->dio_read_offset_align = f->roff_align;
	info->align_source = f->align_source;
}
