// SPDX-License-Identifier: MIT
/*
 * dmaio-info: what this machine offers libdmaio (dma-buf heaps, udmabuf, hugetlb memfds, io_uring,
 * DRM), how to fix what is missing, and for each FILE argument its O_DIRECT rules and the path a
 * read of it would take into a buffer from each provider that works.
 *
 * Exit status: 0 when at least one dma-buf provider works, 1 when none does, 2 on usage errors
 * (including a FILE that cannot be opened or probed).
 */
#include <dmaio.h>

#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <grp.h>
#include <inttypes.h>
#include <pwd.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#define PROG "dmaio-info"
#define MIB ((uint64_t)1 << 20)
#define MAX_HEAPS 32
#define MAX_PROVS (MAX_HEAPS + 4)
#define MAX_HINTS 48
#define RANGE_MAX (64ull * MIB)
#define UDEV_RULE "udev/60-dmaio.rules"

/* ------------------------------------------------------------------------------------------- */
/* small helpers */

static const char *errname(int err)
{
	static char buf[4][24];
	static int slot;
	const char *n;

	if (err < 0)
		err = -err;
	if (err == 0)
		return "0";
#if defined(__GLIBC__) && (__GLIBC__ > 2 || (__GLIBC__ == 2 && __GLIBC_MINOR__ >= 32))
	n = strerrorname_np(err);
	if (n)
		return n;
#endif
	slot = (slot + 1) % 4;
	snprintf(buf[slot], sizeof(buf[slot]), "errno %d", err);
	n = buf[slot];
	return n;
}

static const char *cap_name(int cap)
{
	switch (cap) {
	case DMAIO_CAP_YES:
		return "yes";
	case DMAIO_CAP_NO:
		return "no";
	default:
		return "unknown";
	}
}

static const char *fs_name(uint32_t magic)
{
	switch (magic) {
	case 0xEF53: return "ext2/3/4";
	case 0x58465342: return "xfs";
	case 0x9123683E: return "btrfs";
	case 0xF2F52010: return "f2fs";
	case 0x01021994: return "tmpfs";
	case 0x794c7630: return "overlayfs";
	case 0x6969: return "nfs";
	case 0xFE534D42: return "smb2";
	case 0x01021997: return "9p";
	case 0x65735546: return "fuse";
	case 0x2fc12fc1: return "zfs";
	case 0x4d44: return "vfat";
	case 0x2011BAB0: return "exfat";
	case 0x5346544e: return "ntfs";
	case 0x858458f6: return "ramfs";
	case 0x958458f6: return "hugetlbfs";
	case 0x73717368: return "squashfs";
	case 0xCA451A4E: return "bcachefs";
	case 0: return "-";
	default: return "other";
	}
}

static void human_size(char *out, size_t len, uint64_t v)
{
	static const char *unit[] = { "B", "KiB", "MiB", "GiB", "TiB" };
	double d = (double)v;
	int u = 0;

	while (d >= 1024.0 && u < 4) {
		d /= 1024.0;
		u++;
	}
	if (u == 0)
		snprintf(out, len, "%" PRIu64 " B", v);
	else if (d == (double)(uint64_t)d)
		snprintf(out, len, "%.0f %s", d, unit[u]);
	else
		snprintf(out, len, "%.1f %s", d, unit[u]);
}

/*
 * "crw-rw---- root:video" of a device node, or "" when absent. Returns 1 when users other than
 * root can open it read-write (group video or everyone), 0 when only root can, -errno if absent.
 */
static int node_perms(const char *path, char *out, size_t len)
{
	struct stat st;
	struct passwd *pw;
	struct group *gr;
	char mode[11];
	char uname[32], gname[32];

	if (stat(path, &st) < 0) {
		snprintf(out, len, "%s", "");
		return -errno;
	}
	mode[0] = S_ISCHR(st.st_mode) ? 'c' : S_ISDIR(st.st_mode) ? 'd' : S_ISBLK(st.st_mode) ? 'b' : '-';
	mode[1] = st.st_mode & S_IRUSR ? 'r' : '-';
	mode[2] = st.st_mode & S_IWUSR ? 'w' : '-';
	mode[3] = st.st_mode & S_IXUSR ? 'x' : '-';
	mode[4] = st.st_mode & S_IRGRP ? 'r' : '-';
	mode[5] = st.st_mode & S_IWGRP ? 'w' : '-';
	mode[6] = st.st_mode & S_IXGRP ? 'x' : '-';
	mode[7] = st.st_mode & S_IROTH ? 'r' : '-';
	mode[8] = st.st_mode & S_IWOTH ? 'w' : '-';
	mode[9] = st.st_mode & S_IXOTH ? 'x' : '-';
	mode[10] = '\0';
	pw = getpwuid(st.st_uid);
	gr = getgrgid(st.st_gid);
	if (pw)
		snprintf(uname, sizeof(uname), "%s", pw->pw_name);
	else
		snprintf(uname, sizeof(uname), "%u", (unsigned)st.st_uid);
	if (gr)
		snprintf(gname, sizeof(gname), "%s", gr->gr_name);
	else
		snprintf(gname, sizeof(gname), "%u", (unsigned)st.st_gid);
	snprintf(out, len, "%s %.31s:%.31s", mode, uname, gname);
	if ((st.st_mode & (S_IROTH | S_IWOTH)) == (S_IROTH | S_IWOTH))
		return 1;
	return (st.st_mode & (S_IRGRP | S_IWGRP)) == (S_IRGRP | S_IWGRP) && st.st_gid != 0;
}

/* ------------------------------------------------------------------------------------------- */
/* the report, gathered first and then printed as text or JSON */

/* A buffer from one provider by name (NULL: the library's order); why it was refused into
 * why (may be NULL). */
static int ex_alloc(const char *provider, uint64_t size, uint32_t flags, struct dmaio_buf **b,
		    char *why, size_t why_len)
{
	const char *list[2] = { provider, NULL };
	struct dmaio_alloc_opts o = { .struct_size = sizeof(o), .flags = flags,
				      .providers = provider ? list : NULL };
	struct dmaio_reason r = { .struct_size = sizeof(r) };
	int ret = dmaio_buf_alloc(NULL, size, &o, b, &r);

	if (why && why_len)
		snprintf(why, why_len, "%s", r.text);
	return ret;
}

/* The path a read of [off, off + len) into b at 0 would take, and why. */
static int choose(struct dmaio_buf *b, int fd, uint64_t off, uint64_t len, char *why, size_t n)
{
	struct dmaio_reason r = { .struct_size = sizeof(r) };
	int path = dmaio_fd_choose_path(fd, off, b, 0, len, DMAIO_OP_READ, 0, &r);

	snprintf(why, n, "%s", r.text);
	return path;
}

struct prov {
	char name[64];
	const char *type;   /* "dma-heap", "udmabuf", "udmabuf-huge", "drm", "memfd" */
	bool dmabuf;        /* a dma-buf provider (memfd is not) */
	int err;            /* 0: a one-page dmaio_buf_alloc() worked; else its -errno */
	char why[DMAIO_REASON_MAX]; /* the library's reason when it did not */
};

struct heap_rep {
	struct dmaio_heap_info hi;
	struct dmaio_heap_proposed hp; /* what the unmerged proposals answer for it */
	char perms[96];
	int shared;         /* node_perms(): 1 usable by a group or everyone, 0 root only */
};

#define MAX_EST 16
#define MAX_DMABUFS 8
static bool explain; /* --explain */

/* --dmabuf PID:FD: a dma-buf another process holds, taken with pidfd_getfd(2) and imported */
struct dmabuf_rep {
	char spec[32];      /* "PID:FD" */
	int pid, fd;
	int err;            /* -errno of taking or importing it */
	const char *step;   /* which step failed */
	struct dmaio_buf *b;
	struct dmaio_buf_info info;
};
static struct dmabuf_rep dmabufs[MAX_DMABUFS];
static int ndmabufs;

struct file_choice {
	char provider[64];
	int alloc_err;
	char alloc_why[DMAIO_REASON_MAX]; /* the library's reason for alloc_err */
	size_t buf_len;
	int path;           /* >= 0 path, else -errno of dmaio_fd_choose_path() */
	char why[256];
	bool has_last;      /* the last chunk of a whole-file read, when it differs */
	uint64_t last_off;
	size_t last_len;
	int last_path;
	char last_why[256];
	int nest;           /* --explain: every path's estimate for [0, buf_len), or -errno */
	struct dmaio_path_estimate est[MAX_EST];
};

struct file_rep {
	const char *name;
	int open_err;
	int probe_err;
	struct dmaio_file_info fi;
	int nchoice;
	struct file_choice choice[MAX_PROVS];
};

struct report {
	int sys_err;
	struct dmaio_sys_info sys;
	struct dmaio_proposed_info prop; /* what the unmerged proposals answer here */
	int nheaps;         /* from dmaio_ctx_heap_count(), or -errno */
	struct heap_rep heaps[MAX_HEAPS];
	char udmabuf_perms[96];
	int udmabuf_shared;
	int nprovs;
	struct prov provs[MAX_PROVS];
	char default_provider[64];
	int default_err;
	char default_why[DMAIO_REASON_MAX];
	const char *env_path;
	bool any_dmabuf;
	int nhints;
	char *hints[MAX_HINTS];
	int nfiles;
	struct file_rep *files;
};

__attribute__((format(printf, 2, 3)))
static void hint(struct report *r, const char *fmt, ...)
{
	va_list ap;
	char *s;
	int i;

	if (r->nhints >= MAX_HINTS)
		return;
	va_start(ap, fmt);
	if (vasprintf(&s, fmt, ap) < 0)
		s = NULL;
	va_end(ap);
	if (!s)
		return;
	for (i = 0; i < r->nhints; i++) {
		if (!strcmp(r->hints[i], s)) {
			free(s);
			return;
		}
	}
	r->hints[r->nhints++] = s;
}

static const char *rw_file_meaning(int cap, int err)
{
	if (cap == DMAIO_CAP_YES)
		return "accepted: zero-copy reads and writes by the exporter";
	if (cap != DMAIO_CAP_NO)
		return "not probed";
	if (err == -ENOTTY)
		return "the kernel lacks DMA_BUF_IOCTL_RW_FILE (a proposed patch, not merged)";
	if (err == -EINVAL)
		return "the kernel knows the ioctl but this heap's exporter does not implement it";
	return "refused";
}

static const char *perm_fix =
	"install the rule the library ships (" UDEV_RULE ": group video gets rw on /dev/dma_heap/* and "
	"/dev/udmabuf): `sudo install -m 644 " UDEV_RULE " /etc/udev/rules.d/ && sudo udevadm control "
	"--reload && sudo udevadm trigger`, then `sudo usermod -aG video $USER` and log in again";

static void probe_providers(struct report *r)
{
	static const struct {
		const char *name;
		const char *type;
	} extra[] = {
		{ "udmabuf", "udmabuf" },
		{ "udmabuf-huge", "udmabuf-huge" },
		{ "drm", "drm" },
		{ "memfd", "memfd" },
	};
	struct dmaio_buf *b;
	size_t page = r->sys.page_size ? r->sys.page_size : 4096;
	int i, n;

	n = r->nheaps < 0 ? 0 : r->nheaps > MAX_HEAPS ? MAX_HEAPS : r->nheaps;
	for (i = 0; i < n && r->nprovs < MAX_PROVS; i++) {
		struct prov *p = &r->provs[r->nprovs++];

		snprintf(p->name, sizeof(p->name), "%s", r->heaps[i].hi.name);
		p->type = "dma-heap";
		p->dmabuf = true;
	}
	for (i = 0; i < (int)(sizeof(extra) / sizeof(extra[0])) && r->nprovs < MAX_PROVS; i++) {
		struct prov *p = &r->provs[r->nprovs++];

		snprintf(p->name, sizeof(p->name), "%s", extra[i].name);
		p->type = extra[i].type;
		p->dmabuf = strcmp(extra[i].name, "memfd") != 0;
	}
	for (i = 0; i < r->nprovs; i++) {
		struct prov *p = &r->provs[i];
		size_t sz = page;

		if (!strcmp(p->type, "udmabuf-huge") && r->sys.huge_page_size)
			sz = r->sys.huge_page_size;
		p->err = ex_alloc(p->name, sz, p->dmabuf ? DMAIO_ALLOC_DMABUF_ONLY : 0, &b, p->why,
				  sizeof(p->why));
		if (p->err == 0) {
			dmaio_buf_free(b);
			if (p->dmabuf)
				r->any_dmabuf = true;
		}
	}
	r->default_err = ex_alloc(NULL, page, 0, &b, r->default_why, sizeof(r->default_why));
	if (r->default_err == 0) {
		snprintf(r->default_provider, sizeof(r->default_provider), "%s",
			 dmaio_buf_provider(b) ? dmaio_buf_provider(b) : "?");
		dmaio_buf_free(b);
	}
}

static void make_hints(struct report *r)
{
	const struct dmaio_sys_info *s = &r->sys;
	bool have_system = false;
	int i, n;

	if (r->sys_err < 0) {
		hint(r, "the system probe failed (%s): %s", errname(r->sys_err), strerror(-r->sys_err));
		return;
	}
	n = r->nheaps < 0 ? 0 : r->nheaps > MAX_HEAPS ? MAX_HEAPS : r->nheaps;
	if (r->nheaps == -ENOENT)
		hint(r, "no /dev/dma_heap: the kernel has no dma-buf heaps; build it with "
			"CONFIG_DMABUF_HEAPS=y and CONFIG_DMABUF_HEAPS_SYSTEM=y "
			"(CONFIG_DMABUF_HEAPS_CMA=y adds a CMA heap)");
	else if (r->nheaps == -EACCES)
		hint(r, "/dev/dma_heap cannot be listed: %s", perm_fix);
	else if (r->nheaps < 0)
		hint(r, "/dev/dma_heap cannot be read: %s", strerror(-r->nheaps));
	for (i = 0; i < n; i++) {
		const struct dmaio_heap_info *h = &r->heaps[i].hi;

		if (!strcmp(h->name, "system"))
			have_system = true;
		if (h->alloc == DMAIO_CAP_NO && (h->alloc_err == -EACCES || h->alloc_err == -EPERM))
			hint(r, "heap '%s' exists but this process may not open it: %s", h->name, perm_fix);
		else if (h->alloc == DMAIO_CAP_NO)
			hint(r, "heap '%s' refused a one-page allocation (%s: %s)", h->name,
			     errname(h->alloc_err), strerror(-h->alloc_err));
	}
	for (i = 0; i < n; i++) {
		if (r->heaps[i].shared == 0 && r->heaps[i].hi.alloc == DMAIO_CAP_YES) {
			hint(r, "only root may open /dev/dma_heap/* and /dev/udmabuf here; for other users: %s",
			     perm_fix);
			break;
		}
	}
	if (r->udmabuf_shared == 0 && s->udmabuf == DMAIO_CAP_YES)
		hint(r, "only root may open /dev/dma_heap/* and /dev/udmabuf here; for other users: %s", perm_fix);
	if (r->nheaps >= 0 && !have_system)
		hint(r, "no 'system' heap: build the kernel with CONFIG_DMABUF_HEAPS_SYSTEM=y");

	if (s->udmabuf == DMAIO_CAP_NO) {
		if (s->udmabuf_err == -ENOENT) {
			if (access("/sys/module/udmabuf", F_OK) == 0)
				hint(r, "the udmabuf module is loaded but /dev/udmabuf is missing: is devtmpfs "
					"mounted and udev running?");
			else
				hint(r, "no /dev/udmabuf: `sudo modprobe udmabuf` (the kernel needs CONFIG_UDMABUF=m or y)");
		} else if (s->udmabuf_err == -EACCES || s->udmabuf_err == -EPERM) {
			hint(r, "/dev/udmabuf exists but this process may not open it read-write: %s", perm_fix);
		} else if (s->udmabuf_err) {
			hint(r, "/dev/udmabuf does not work: %s", strerror(-s->udmabuf_err));
		}
	} else if (s->udmabuf == DMAIO_CAP_YES && s->udmabuf_size_limit &&
		   s->udmabuf_size_limit < 1024 * MIB) {
		hint(r, "each udmabuf is limited to %" PRIu64 " MiB (size_limit_mb); for bigger buffers: "
			"`echo 1024 | sudo tee /sys/module/udmabuf/parameters/size_limit_mb` "
			"(or `options udmabuf size_limit_mb=1024` in /etc/modprobe.d/)",
		     s->udmabuf_size_limit / MIB);
	}
	if (s->udmabuf == DMAIO_CAP_YES && s->hugetlb_memfd == DMAIO_CAP_NO)
		hint(r, "no huge pages for hugetlb memfds (provider udmabuf-huge): reserve some with "
			"`echo 512 | sudo tee /proc/sys/vm/nr_hugepages`");
	if (s->udmabuf == DMAIO_CAP_YES && s->hugetlb_memfd == DMAIO_CAP_YES && s->udmabuf_huge == DMAIO_CAP_NO)
		hint(r, "udmabuf refuses hugetlb memfds on this kernel (accepted again since about 6.11)");

	if (s->io_uring == DMAIO_CAP_NO) {
		if (s->io_uring_disabled > 0)
			hint(r, "io_uring is disabled (kernel.io_uring_disabled=%d): `sudo sysctl -w "
				"kernel.io_uring_disabled=0`%s", s->io_uring_disabled,
			     s->io_uring_disabled == 1 ? " (or add this user to the io_uring_group)" : "");
		else if (s->io_uring_err == -ENOSYS || s->io_uring_err == -EPERM)
			hint(r, "io_uring is blocked (%s): a seccomp filter (container runtime?) or a kernel "
				"without CONFIG_IO_URING; allow io_uring_setup/io_uring_enter/io_uring_register",
			     errname(s->io_uring_err));
		else
			hint(r, "io_uring does not work here (%s): the direct paths will use synchronous I/O",
			     errname(s->io_uring_err));
	} else if (s->io_uring == DMAIO_CAP_YES && s->io_uring_fixed == DMAIO_CAP_NO) {
		hint(r, "io_uring cannot register buffers: raise the locked-memory limit (`ulimit -l unlimited`, "
			"LimitMEMLOCK=infinity in a systemd unit, or memlock in /etc/security/limits.conf)");
	}
	if (!r->any_dmabuf)
		hint(r, "no dma-buf provider works: only heap \"memfd\" (not a dma-buf) is usable; "
			"fix one of the above, the system heap or udmabuf being the usual ones");
}

static void probe_file_dmabufs(struct file_rep *f, int fd);

static void probe_file(struct report *r, struct file_rep *f)
{
	int fd, i;

	fd = open(f->name, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		f->open_err = -errno;
		return;
	}
	f->fi.struct_size = sizeof(f->fi);
	f->probe_err = dmaio_fd_get_info(fd, &f->fi);
	if (f->probe_err < 0) {
		close(fd);
		return;
	}
	for (i = 0; i < r->nprovs && f->nchoice < MAX_PROVS; i++) {
		const struct prov *p = &r->provs[i];
		struct file_choice *c;
		struct dmaio_buf *b = NULL;
		uint64_t size = f->fi.file_size;
		size_t len;
		int ret;

		if (p->err)
			continue;
		c = &f->choice[f->nchoice++];
		snprintf(c->provider, sizeof(c->provider), "%s", p->name);
		len = size < RANGE_MAX ? (size_t)size : (size_t)RANGE_MAX;
		if (!strcmp(p->type, "udmabuf") && r->sys.udmabuf_size_limit &&
		    len > r->sys.udmabuf_size_limit)
			len = r->sys.udmabuf_size_limit;
		c->buf_len = len;
		ret = ex_alloc(p->name, len ? len : r->sys.page_size,
			       p->dmabuf ? DMAIO_ALLOC_DMABUF_ONLY : 0, &b, c->alloc_why,
			       sizeof(c->alloc_why));
		while (ret == -EFBIG || ret == -ENOMEM) {
			/* provider limit or memory pressure: try a smaller range */
			if (len <= r->sys.page_size)
				break;
			len /= 2;
			c->buf_len = len;
			ret = ex_alloc(p->name, len, p->dmabuf ? DMAIO_ALLOC_DMABUF_ONLY : 0, &b,
				       c->alloc_why, sizeof(c->alloc_why));
		}
		if (ret < 0) {
			c->alloc_err = ret;
			continue;
		}
		c->path = choose(b, fd, 0, len, c->why, sizeof(c->why));
		if (explain) {
			c->est[0].struct_size = sizeof(c->est[0]);
			c->nest = dmaio_fd_explain_path(fd, 0, b, 0, len, DMAIO_OP_READ, 0, c->est,
							MAX_EST);
			if (c->nest > MAX_EST)
				c->nest = MAX_EST;
		}
		if (len && size > len) {
			/* the last chunk of a whole-file read in chunks of len */
			uint64_t off = (size / len) * len;
			size_t tail = (size_t)(size - off);
			char why[256] = "";
			int path;

			if (tail == 0) {
				off -= len;
				tail = len;
			}
			path = choose(b, fd, off, tail, why, sizeof(why));
			if (path != c->path || strcmp(why, c->why)) {
				c->has_last = true;
				c->last_off = off;
				c->last_len = tail;
				c->last_path = path;
				snprintf(c->last_why, sizeof(c->last_why), "%s", why);
			}
		}
		dmaio_buf_free(b);
	}
	probe_file_dmabufs(f, fd);
	close(fd);
	if (f->fi.direct == DMAIO_CAP_NO)
		hint(r, "%s: O_DIRECT is not supported there (%s), so reads of it are copied through the page "
			"cache; put data on a block filesystem (ext4, xfs, f2fs, btrfs) for the direct paths",
		     f->name, errname(f->fi.direct_err));
}

static void take_dmabuf(struct dmabuf_rep *d)
{
	long pidfd, fd;
	int err;

	pidfd = syscall(SYS_pidfd_open, d->pid, 0);
	if (pidfd < 0) {
		d->err = -errno;
		d->step = "pidfd_open";
		return;
	}
	fd = syscall(SYS_pidfd_getfd, (int)pidfd, d->fd, 0); /* close-on-exec by the kernel */
	err = fd < 0 ? -errno : 0;
	close((int)pidfd);
	if (err) {
		d->err = err;
		d->step = "pidfd_getfd";
		return;
	}
	err = dmaio_buf_import(NULL, (int)fd, 0, &d->b);
	close((int)fd);
	if (err) {
		d->err = err;
		d->step = "dmaio_buf_import";
		return;
	}
	d->info.struct_size = sizeof(d->info);
	err = dmaio_buf_get_info(d->b, &d->info);
	if (err) {
		d->err = err;
		d->step = "dmaio_buf_get_info";
	}
}

/* a read of FILE into each --dmabuf buffer: which path, and (--explain) every path's estimate */
static void probe_file_dmabufs(struct file_rep *f, int fd)
{
	for (int i = 0; i < ndmabufs && f->nchoice < MAX_PROVS; i++) {
		const struct dmabuf_rep *d = &dmabufs[i];
		struct file_choice *c;
		uint64_t len = f->fi.file_size;

		if (d->err)
			continue;
		c = &f->choice[f->nchoice++];
		snprintf(c->provider, sizeof(c->provider), "dma-buf %.31s", d->spec);
		if (len > d->info.size)
			len = d->info.size;
		if (len > RANGE_MAX)
			len = RANGE_MAX;
		c->buf_len = (size_t)len;
		c->path = choose(d->b, fd, 0, c->buf_len, c->why, sizeof(c->why));
		if (explain) {
			c->est[0].struct_size = sizeof(c->est[0]);
			c->nest = dmaio_fd_explain_path(fd, 0, d->b, 0, c->buf_len, DMAIO_OP_READ, 0,
							c->est, MAX_EST);
			if (c->nest > MAX_EST)
				c->nest = MAX_EST;
		}
	}
}

/* ------------------------------------------------------------------------------------------- */
/* text output */

static const char *path_str(int path)
{
	const char *n;

	if (path < 0)
		return errname(path);
	n = dmaio_path_name(path);
	return n ? n : "?";
}

/* --explain: one line per path, the chosen one marked */
static void print_estimates(const struct file_choice *c)
{
	if (!explain)
		return;
	if (c->nest < 0) {
		printf("  %-16s   estimates: %s\n", "", strerror(-c->nest));
		return;
	}
	for (int k = 0; k < c->nest; k++) {
		const struct dmaio_path_estimate *e = &c->est[k];

		if (e->status) {
			printf("  %-16s   %c %-15s cannot: %s\n", "", ' ', path_str((int)e->path),
			       e->reason[0] ? e->reason : strerror(-e->status));
			continue;
		}
		printf("  %-16s   %c %-15s %10.1f us = (ops %.1f + bytes %.1f + walk %.1f) x %.2f"
		       " (%u measured) + setup %.1f; cpu %.1f\n", "", e->chosen ? '*' : ' ',
		       path_str((int)e->path), (double)e->est_ns / 1e3, (double)e->ops_ns / 1e3,
		       (double)e->bytes_ns / 1e3, (double)e->walk_ns / 1e3,
		       (double)e->ratio_milli / 1e3, e->samples, (double)e->setup_ns / 1e3,
		       (double)e->cpu_ns / 1e3);
	}
}

static void print_text(const struct report *r)
{
	const struct dmaio_sys_info *s = &r->sys;
	const struct dmaio_proposed_info *pp = &r->prop;
	char tmp[64];
	int i, j, n;

	printf("libdmaio %d.%d.%d capability report (page size %u)\n", DMAIO_VERSION_MAJOR,
	       DMAIO_VERSION_MINOR, DMAIO_VERSION_MICRO, s->page_size);
	if (r->env_path)
		printf("DMAIO_PATH=%s is set: it forces that path for every call of a process\n", r->env_path);
	if (r->sys_err < 0) {
		printf("system probe failed: %s\n", strerror(-r->sys_err));
		goto hints;
	}

	printf("\ndma-buf heaps (/dev/dma_heap):");
	n = r->nheaps < 0 ? 0 : r->nheaps > MAX_HEAPS ? MAX_HEAPS : r->nheaps;
	if (r->nheaps < 0)
		printf(" %s (%s)\n", r->nheaps == -ENOENT ? "absent" : strerror(-r->nheaps), errname(r->nheaps));
	else if (r->nheaps == 0)
		printf(" none\n");
	else
		printf("\n");
	for (i = 0; i < n; i++) {
		const struct dmaio_heap_info *h = &r->heaps[i].hi;
		const struct dmaio_heap_proposed *hp = &r->heaps[i].hp;

		printf("  %-16s %-24s alloc %s", h->name, r->heaps[i].perms, cap_name(h->alloc));
		if (h->alloc == DMAIO_CAP_NO)
			printf(" (%s)", errname(h->alloc_err));
		printf(", mmap %s, rw-file %s", cap_name(h->mmap), cap_name(hp->rw_file));
		if (hp->rw_file == DMAIO_CAP_NO)
			printf(" (%s: %s)", errname(hp->rw_file_err), rw_file_meaning(hp->rw_file, hp->rw_file_err));
		if (hp->uring_dmabuf != DMAIO_CAP_UNKNOWN)
			printf(", io_uring dma-buf %s", cap_name(hp->uring_dmabuf));
		if (h->contiguous)
			printf(", physically contiguous (CMA)");
		if (h->uncached)
			printf(", uncached");
		printf("\n");
	}
	if (r->nheaps > MAX_HEAPS)
		printf("  ... and %d more\n", r->nheaps - MAX_HEAPS);
	printf("  DMA_BUF_IOCTL_RW_FILE in the kernel: %s\n", cap_name(pp->rw_file_kernel));

	printf("\nudmabuf (/dev/udmabuf): ");
	if (s->udmabuf_err == -ENOENT) {
		printf("absent\n");
	} else {
		printf("present%s%s, opens read-write: %s", r->udmabuf_perms[0] ? " " : "", r->udmabuf_perms,
		       cap_name(s->udmabuf));
		if (s->udmabuf == DMAIO_CAP_NO)
			printf(" (%s)", errname(s->udmabuf_err));
		printf("\n");
		if (s->udmabuf_size_limit)
			printf("  size_limit_mb %" PRIu64 " (largest udmabuf)", s->udmabuf_size_limit / MIB);
		else
			printf("  size_limit_mb unknown");
		if (s->udmabuf_list_limit)
			printf(", list_limit %u\n", s->udmabuf_list_limit);
		else
			printf(", list_limit unknown\n");
		printf("  hugetlb memfds accepted: %s\n", cap_name(s->udmabuf_huge));
	}
	printf("hugetlb memfd: %s", cap_name(s->hugetlb_memfd));
	if (s->huge_page_size) {
		human_size(tmp, sizeof(tmp), s->huge_page_size);
		printf(" (huge page %s)", tmp);
	}
	printf("\n");

	printf("io_uring: %s", s->io_uring == DMAIO_CAP_YES ? "usable" : cap_name(s->io_uring));
	if (s->io_uring == DMAIO_CAP_NO)
		printf(" (%s)", errname(s->io_uring_err));
	if (s->io_uring_disabled >= 0)
		printf(", kernel.io_uring_disabled=%d", s->io_uring_disabled);
	printf(", fixed buffers: %s\n", cap_name(s->io_uring_fixed));
	printf("io_uring dma-buf registration (proposed): kernel %s",
	       pp->uring_dmabuf_kernel == DMAIO_CAP_YES ? "has it" : "lacks it");
	if (pp->uring_dmabuf_kernel == DMAIO_CAP_NO)
		printf(" (%s)", errname(pp->uring_dmabuf_err));
	else
		printf(", a heap buffer for %s: %s", pp->uring_dmabuf_dev[0] ? pp->uring_dmabuf_dev :
		       "(no NVMe device to try)", cap_name(pp->uring_dmabuf));
	if (pp->uring_dmabuf_kernel == DMAIO_CAP_YES && pp->uring_dmabuf == DMAIO_CAP_NO)
		printf(" (%s)", errname(pp->uring_dmabuf_err));
	printf("\n");
	printf("dma-heap memcg accounting: %s\n", s->heap_memcg > 0 ? "on (dma_heap.mem_accounting)" :
	       s->heap_memcg == 0 ? "off (dma_heap.mem_accounting=N)" : "not in this kernel (7.0+)");
	printf("DRM dumb buffers + PRIME: %s%s%s\n", cap_name(s->drm), s->drm_node[0] ? " on " : "",
	       s->drm_node);

	printf("cachestat(2) (page-cache residency of a read, for the path choice): %s\n",
	       s->cachestat == DMAIO_CAP_YES ? "yes" : "no (a kernel before 6.5, or one built "
	       "without CONFIG_CACHESTAT_SYSCALL: a warm read is priced as a cold one)");
	printf("\nproviders (a one-page dmaio_buf_alloc() from each):\n");
	for (i = 0; i < r->nprovs; i++) {
		const struct prov *p = &r->provs[i];

		printf("  %-16s %-13s %s", p->name, p->type, p->err ? "no" : "works");
		if (p->err)
			printf(" (%s: %s)", errname(p->err), p->why[0] ? p->why : strerror(-p->err));
		if (!p->dmabuf)
			printf(" [not a dma-buf]");
		printf("\n");
	}
	if (r->default_err == 0)
		printf("  default (heap NULL): %s\n", r->default_provider);
	else
		printf("  default (heap NULL): none (%s: %s)\n", errname(r->default_err),
		       r->default_why[0] ? r->default_why : strerror(-r->default_err));
	printf("dma-buf provider available: %s\n", r->any_dmabuf ? "yes" : "no");

	for (i = 0; i < ndmabufs; i++) {
		const struct dmabuf_rep *d = &dmabufs[i];
		const struct dmaio_buf_info *bi = &d->info;

		printf("\ndma-buf %s: ", d->spec);
		if (d->err) {
			printf("%s: %s\n", d->step, strerror(-d->err));
			continue;
		}
		human_size(tmp, sizeof(tmp), bi->size);
		printf("%s, %" PRIu64 " bytes, inode %" PRIu64 ", exporter %s, name \"%s\"\n", tmp,
		       bi->size, bi->inode, bi->exporter[0] ? bi->exporter : "(unknown)", bi->name);
		if (bi->mmap == DMAIO_CAP_YES)
			printf("  CPU mapping: yes: every path that copies through a mapping can serve it\n");
		else if (bi->mmap == DMAIO_CAP_NO)
			printf("  CPU mapping: no (%s): its exporter gives none, so neither "
			       "dmaio_buf_map() nor the paths that copy through a mapping (bounce-direct, "
			       "buffered) can serve it; only a path where the kernel moves the data "
			       "could%s\n", errname(bi->mmap_err),
			       r->nfiles ? " (the file lines below say which one does)" :
			       " (give a FILE to see whether one does)");
		else
			printf("  CPU mapping: unknown (%s)\n", errname(bi->mmap_err));
	}

	for (i = 0; i < r->nfiles; i++) {
		const struct file_rep *f = &r->files[i];
		const struct dmaio_file_info *fi = &f->fi;

		printf("\nfile %s: ", f->name);
		if (f->open_err) {
			printf("cannot open: %s\n", strerror(-f->open_err));
			continue;
		}
		if (f->probe_err) {
			printf("cannot probe: %s\n", strerror(-f->probe_err));
			continue;
		}
		human_size(tmp, sizeof(tmp), fi->file_size);
		printf("%s%s, %" PRIu64 " bytes (%s), %s (0x%x)\n", fi->is_blockdev ? "block device" : "file",
		       "", fi->file_size, tmp, fs_name(fi->fs_magic), fi->fs_magic);
		printf("  O_DIRECT: %s", cap_name(fi->direct));
		if (fi->direct == DMAIO_CAP_NO)
			printf(" (%s)", errname(fi->direct_err));
		if (fi->direct == DMAIO_CAP_YES || fi->dio_mem_align)
			printf(", memory alignment %u, offset alignment %u, read offset alignment %u (%s)",
			       fi->dio_mem_align, fi->dio_offset_align, fi->dio_read_offset_align,
			       fi->align_source == 1 ? "statx STATX_DIOALIGN" :
			       fi->align_source == 2 ? "block size fallback" : "unknown source");
		printf("\n");
		for (j = 0; j < f->nchoice; j++) {
			const struct file_choice *c = &f->choice[j];

			human_size(tmp, sizeof(tmp), c->buf_len);
			if (c->alloc_err) {
				printf("  %-16s cannot allocate %s: %s\n", c->provider, tmp,
				       c->alloc_why[0] ? c->alloc_why : strerror(-c->alloc_err));
				continue;
			}
			printf("  %-16s %s buffer, bytes [0, %zu)%s: %s", c->provider, tmp, c->buf_len,
			       fi->file_size > c->buf_len ? " (the first chunk)" : "", path_str(c->path));
			if (c->why[0])
				printf(" - %s", c->why);
			printf("\n");
			print_estimates(c);
			if (c->has_last) {
				printf("  %-16s %s buffer, bytes [%" PRIu64 ", %" PRIu64 ") (the last chunk): %s", "", tmp, c->last_off,
				       c->last_off + c->last_len, path_str(c->last_path));
				if (c->last_why[0])
					printf(" - %s", c->last_why);
				printf("\n");
			}
		}
	}
hints:
	if (r->nhints) {
		printf("\nto fix or know:\n");
		for (i = 0; i < r->nhints; i++)
			printf("  - %s\n", r->hints[i]);
	}
}

/* ------------------------------------------------------------------------------------------- */
/* JSON output */

#define JSON_SCHEMA 1

struct json {
	int depth;
	bool first[16];
};

/* Length of the well-formed UTF-8 sequence at p (RFC 3629: no overlong forms, no surrogates,
 * nothing above U+10FFFF), 0 when p does not start one. */
static size_t utf8_len(const unsigned char *p)
{
	unsigned c = p[0];
	size_t n, i;
	unsigned cp;

	if (c < 0x80)
		return 1;
	if (c >= 0xc2 && c <= 0xdf)
		n = 2, cp = c & 0x1f;
	else if (c >= 0xe0 && c <= 0xef)
		n = 3, cp = c & 0x0f;
	else if (c >= 0xf0 && c <= 0xf4)
		n = 4, cp = c & 0x07;
	else
		return 0;
	for (i = 1; i < n; i++) {
		if ((p[i] & 0xc0) != 0x80)
			return 0; /* also stops at the terminating NUL */
		cp = (cp << 6) | (p[i] & 0x3f);
	}
	if ((n == 3 && cp < 0x800) || (n == 4 && (cp < 0x10000 || cp > 0x10ffff)) ||
	    (cp >= 0xd800 && cp <= 0xdfff))
		return 0;
	return n;
}

static bool utf8_valid(const char *s)
{
	const unsigned char *p = (const unsigned char *)s;
	size_t n;

	for (; *p; p += n)
		if (!(n = utf8_len(p)))
			return false;
	return true;
}

/* A JSON string. The output is always valid UTF-8 JSON: control characters are escaped, and
 * each byte that is not part of a well-formed UTF-8 sequence (a file name can be any bytes)
 * becomes U+FFFD, written \ufffd. The exact bytes of a file name are in its "name_hex". */
static void j_str_raw(const char *s)
{
	const unsigned char *p = (const unsigned char *)s;
	size_t n;

	putchar('"');
	for (; *p; p += n) {
		n = utf8_len(p);
		if (!n) {
			fputs("\\ufffd", stdout);
			n = 1;
			continue;
		}
		if (n > 1) {
			fwrite(p, 1, n, stdout);
			continue;
		}
		switch (*p) {
		case '"': fputs("\\\"", stdout); break;
		case '\\': fputs("\\\\", stdout); break;
		case '\b': fputs("\\b", stdout); break;
		case '\f': fputs("\\f", stdout); break;
		case '\n': fputs("\\n", stdout); break;
		case '\r': fputs("\\r", stdout); break;
		case '\t': fputs("\\t", stdout); break;
		default:
			if (*p < 0x20 || *p == 0x7f)
				printf("\\u%04x", *p);
			else
				putchar(*p);
		}
	}
	putchar('"');
}

static void j_key(struct json *j, const char *key)
{
	if (!j->first[j->depth])
		putchar(',');
	j->first[j->depth] = false;
	printf("\n%*s", 2 * (j->depth + 1), "");
	if (key) {
		j_str_raw(key);
		fputs(": ", stdout);
	}
}

static void j_open(struct json *j, const char *key, char c)
{
	if (j->depth >= 0)
		j_key(j, key);
	putchar(c);
	j->depth++;
	j->first[j->depth] = true;
}

static void j_close(struct json *j, char c)
{
	bool empty = j->first[j->depth];

	j->depth--;
	if (!empty)
		printf("\n%*s", 2 * (j->depth + 1), "");
	putchar(c);
}

static void j_str(struct json *j, const char *key, const char *v)
{
	j_key(j, key);
	if (v)
		j_str_raw(v);
	else
		fputs("null", stdout);
}

static void j_int(struct json *j, const char *key, long long v)
{
	j_key(j, key);
	printf("%lld", v);
}

static void j_bool(struct json *j, const char *key, bool v)
{
	j_key(j, key);
	fputs(v ? "true" : "false", stdout);
}

static void j_err(struct json *j, const char *key, int err)
{
	j_str(j, key, err ? errname(err) : NULL);
}

static void j_cap(struct json *j, const char *key, int cap)
{
	j_str(j, key, cap_name(cap));
}

/* --explain: "estimates": one object per path, times in nanoseconds */
static void json_estimates(struct json *j, const struct file_choice *c)
{
	if (c->nest < 0) {
		j_err(j, "estimates_error", c->nest);
		return;
	}
	j_open(j, "estimates", '[');
	for (int k = 0; k < c->nest; k++) {
		const struct dmaio_path_estimate *e = &c->est[k];

		j_open(j, NULL, '{');
		j_str(j, "path", path_str((int)e->path));
		j_err(j, "error", e->status);
		j_bool(j, "chosen", e->chosen);
		j_int(j, "est_ns", (long long)e->est_ns);
		j_int(j, "ops_ns", (long long)e->ops_ns);
		j_int(j, "bytes_ns", (long long)e->bytes_ns);
		j_int(j, "walk_ns", (long long)e->walk_ns);
		j_int(j, "setup_ns", (long long)e->setup_ns);
		j_int(j, "samples", e->samples);
		j_int(j, "ratio_milli", e->ratio_milli);
		j_str(j, "reason", e->reason);
		j_close(j, '}');
	}
	j_close(j, ']');
}

static void print_json(const struct report *r)
{
	const struct dmaio_sys_info *s = &r->sys;
	const struct dmaio_proposed_info *pp = &r->prop;
	struct json j = { .depth = -1 };
	char ver[32];
	int i, k, n;

	snprintf(ver, sizeof(ver), "%d.%d.%d", DMAIO_VERSION_MAJOR, DMAIO_VERSION_MINOR, DMAIO_VERSION_MICRO);
	j_open(&j, NULL, '{');
	/* the layout of this object: raised when a field changes meaning or goes away */
	j_int(&j, "schema", JSON_SCHEMA);
	j_str(&j, "version", ver);
	j_str(&j, "dmaio_path_env", r->env_path);
	j_err(&j, "system_probe_error", r->sys_err);
	j_int(&j, "page_size", s->page_size);
	j_cap(&j, "cachestat", s->cachestat);

	j_open(&j, "heaps", '{');
	j_int(&j, "count", r->nheaps < 0 ? 0 : r->nheaps);
	j_err(&j, "error", r->nheaps < 0 ? r->nheaps : 0);
	j_cap(&j, "rw_file_kernel", pp->rw_file_kernel);
	j_open(&j, "list", '[');
	n = r->nheaps < 0 ? 0 : r->nheaps > MAX_HEAPS ? MAX_HEAPS : r->nheaps;
	for (i = 0; i < n; i++) {
		const struct dmaio_heap_info *h = &r->heaps[i].hi;
		const struct dmaio_heap_proposed *hp = &r->heaps[i].hp;

		j_open(&j, NULL, '{');
		j_str(&j, "name", h->name);
		j_str(&j, "node_permissions", r->heaps[i].perms);
		j_cap(&j, "alloc", h->alloc);
		j_err(&j, "alloc_error", h->alloc == DMAIO_CAP_NO ? h->alloc_err : 0);
		j_cap(&j, "mmap", h->mmap);
		j_cap(&j, "rw_file", hp->rw_file);
		j_err(&j, "rw_file_error", hp->rw_file == DMAIO_CAP_NO ? hp->rw_file_err : 0);
		j_str(&j, "rw_file_meaning", rw_file_meaning(hp->rw_file, hp->rw_file_err));
		j_cap(&j, "uring_dmabuf", hp->uring_dmabuf);
		j_bool(&j, "contiguous", h->contiguous);
		j_bool(&j, "uncached", h->uncached);
		j_close(&j, '}');
	}
	j_close(&j, ']');
	j_close(&j, '}');

	j_open(&j, "udmabuf", '{');
	j_bool(&j, "present", s->udmabuf_err != -ENOENT);
	j_str(&j, "node_permissions", r->udmabuf_perms[0] ? r->udmabuf_perms : NULL);
	j_cap(&j, "usable", s->udmabuf);
	j_err(&j, "error", s->udmabuf == DMAIO_CAP_NO ? s->udmabuf_err : 0);
	j_int(&j, "size_limit_mb", (long long)(s->udmabuf_size_limit / MIB));
	j_int(&j, "list_limit", s->udmabuf_list_limit);
	j_cap(&j, "hugetlb_memfd_accepted", s->udmabuf_huge);
	j_close(&j, '}');

	j_open(&j, "hugetlb_memfd", '{');
	j_cap(&j, "usable", s->hugetlb_memfd);
	j_int(&j, "huge_page_size", s->huge_page_size);
	j_close(&j, '}');

	j_open(&j, "io_uring", '{');
	j_cap(&j, "usable", s->io_uring);
	j_err(&j, "error", s->io_uring == DMAIO_CAP_NO ? s->io_uring_err : 0);
	j_int(&j, "io_uring_disabled", s->io_uring_disabled);
	j_cap(&j, "fixed_buffers", s->io_uring_fixed);
	j_cap(&j, "dmabuf_registration_kernel", pp->uring_dmabuf_kernel);
	j_cap(&j, "dmabuf_registration", pp->uring_dmabuf);
	j_err(&j, "dmabuf_registration_error", pp->uring_dmabuf == DMAIO_CAP_NO ? pp->uring_dmabuf_err : 0);
	j_str(&j, "dmabuf_registration_device", pp->uring_dmabuf_dev[0] ? pp->uring_dmabuf_dev : NULL);
	j_close(&j, '}');

	j_open(&j, "dma_heap", '{');
	j_int(&j, "memcg_accounting", s->heap_memcg);
	j_close(&j, '}');

	j_open(&j, "drm", '{');
	j_cap(&j, "usable", s->drm);
	j_str(&j, "node", s->drm_node[0] ? s->drm_node : NULL);
	j_close(&j, '}');

	j_open(&j, "providers", '[');
	for (i = 0; i < r->nprovs; i++) {
		const struct prov *p = &r->provs[i];

		j_open(&j, NULL, '{');
		j_str(&j, "name", p->name);
		j_str(&j, "type", p->type);
		j_bool(&j, "dmabuf", p->dmabuf);
		j_bool(&j, "works", p->err == 0);
		j_err(&j, "error", p->err);
		if (p->err)
			j_str(&j, "reason", p->why);
		j_close(&j, '}');
	}
	j_close(&j, ']');
	j_str(&j, "default_provider", r->default_err ? NULL : r->default_provider);
	j_err(&j, "default_provider_error", r->default_err);
	j_bool(&j, "dmabuf_provider_available", r->any_dmabuf);

	j_open(&j, "dmabufs", '[');
	for (i = 0; i < ndmabufs; i++) {
		const struct dmabuf_rep *d = &dmabufs[i];

		j_open(&j, NULL, '{');
		j_str(&j, "dmabuf", d->spec);
		j_int(&j, "pid", d->pid);
		j_int(&j, "fd", d->fd);
		j_str(&j, "failed_step", d->err ? d->step : NULL);
		j_err(&j, "error", d->err);
		if (!d->err) {
			j_int(&j, "size", (long long)d->info.size);
			j_int(&j, "inode", (long long)d->info.inode);
			j_str(&j, "exporter", d->info.exporter);
			j_str(&j, "name", d->info.name);
			j_cap(&j, "mmap", d->info.mmap);
			j_err(&j, "mmap_error", d->info.mmap_err);
		}
		j_close(&j, '}');
	}
	j_close(&j, ']');

	j_open(&j, "files", '[');
	for (i = 0; i < r->nfiles; i++) {
		const struct file_rep *f = &r->files[i];
		const struct dmaio_file_info *fi = &f->fi;
		bool ok = !f->open_err && !f->probe_err;

		j_open(&j, NULL, '{');
		j_str(&j, "name", f->name);
		if (!utf8_valid(f->name)) {
			char *hex = malloc(2 * strlen(f->name) + 1);

			for (size_t k2 = 0; hex && f->name[k2]; k2++)
				sprintf(hex + 2 * k2, "%02x", (unsigned char)f->name[k2]);
			j_str(&j, "name_hex", hex ? hex : "");
			free(hex);
		}
		j_err(&j, "error", f->open_err ? f->open_err : f->probe_err);
		if (ok) {
			j_bool(&j, "block_device", fi->is_blockdev);
			j_int(&j, "size", (long long)fi->file_size);
			j_str(&j, "filesystem", fs_name(fi->fs_magic));
			j_int(&j, "fs_magic", fi->fs_magic);
			j_cap(&j, "direct", fi->direct);
			j_err(&j, "direct_error", fi->direct == DMAIO_CAP_NO ? fi->direct_err : 0);
			j_int(&j, "dio_mem_align", fi->dio_mem_align);
			j_int(&j, "dio_offset_align", fi->dio_offset_align);
			j_int(&j, "dio_read_offset_align", fi->dio_read_offset_align);
			j_str(&j, "align_source", fi->align_source == 1 ? "statx" :
			      fi->align_source == 2 ? "block-size" : NULL);
			j_open(&j, "read_paths", '[');
			for (k = 0; k < f->nchoice; k++) {
				const struct file_choice *c = &f->choice[k];

				j_open(&j, NULL, '{');
				j_str(&j, "provider", c->provider);
				j_int(&j, "buffer_size", (long long)c->buf_len);
				j_err(&j, "alloc_error", c->alloc_err);
				if (!c->alloc_err) {
					j_int(&j, "offset", 0);
					j_int(&j, "length", (long long)c->buf_len);
					j_str(&j, "path", c->path >= 0 ? path_str(c->path) : NULL);
					j_err(&j, "path_error", c->path < 0 ? c->path : 0);
					j_str(&j, "why", c->why);
					if (explain)
						json_estimates(&j, c);
					if (c->has_last) {
						j_open(&j, "last_chunk", '{');
						j_int(&j, "offset", (long long)c->last_off);
						j_int(&j, "length", (long long)c->last_len);
						j_str(&j, "path", c->last_path >= 0 ? path_str(c->last_path) : NULL);
						j_err(&j, "path_error", c->last_path < 0 ? c->last_path : 0);
						j_str(&j, "why", c->last_why);
						j_close(&j, '}');
					}
				}
				j_close(&j, '}');
			}
			j_close(&j, ']');
		}
		j_close(&j, '}');
	}
	j_close(&j, ']');

	j_open(&j, "hints", '[');
	for (i = 0; i < r->nhints; i++)
		j_str(&j, NULL, r->hints[i]);
	j_close(&j, ']');
	j_close(&j, '}');
	putchar('\n');
}

/* ------------------------------------------------------------------------------------------- */

static void usage(FILE *out)
{
	fprintf(out,
		"Usage: " PROG " [--json] [--explain] [--dmabuf PID:FD]... [FILE...]\n"
		"Report what this machine offers libdmaio: dma-buf heaps (allocation, mmap,\n"
		"DMA_BUF_IOCTL_RW_FILE), udmabuf, hugetlb memfds, io_uring, DRM, and how to fix what\n"
		"is missing. For each FILE: its O_DIRECT support and alignment, and the path a read\n"
		"of it would take into a buffer from each provider that works, and why.\n"
		"\n"
		"  --explain   for each FILE and provider, every path's estimated time for the read\n"
		"              (the cost model's parts, the ratio learned, why it can or cannot serve)\n"
		"  --dmabuf PID:FD  a dma-buf that process PID holds as FD (taken with\n"
		"              pidfd_getfd(2): root, or the same user where ptrace is allowed): its\n"
		"              size, inode, exporter and name, whether the CPU can map it, and for each\n"
		"              FILE the path a read of FILE into it would take (repeatable, %d at most)\n"
		"  --json      print the report as one JSON object (\"schema\": 1); strings are UTF-8,\n"
		"              a byte of a file name that is not UTF-8 shows as U+FFFD, and the\n"
		"              file's \"name_hex\" then holds the name's exact bytes\n"
		"  --version   print the version of dmaio-info and of the libdmaio it runs with\n"
		"  -h, --help  this help\n"
		"\n"
		"Exit status: 0 when at least one dma-buf provider works, 1 when none does,\n"
		"2 on usage errors (including a FILE that cannot be opened or probed).\n"
		"Set DMAIO_DEBUG=1 for the library's own log of every decision.\n", MAX_DMABUFS);
}

/* The command line: --json into @json; -1 to go on (the files from optind), else the exit status
 * (--help, --version: 0; a usage error: 2). Apart from main so that it can be run alone
 * (tests/fuzz/fuzz-tool-options.c). */
static int parse_options(int argc, char **argv, bool *json)
{
	static const struct option opts[] = {
		{ "json", no_argument, NULL, 'j' },
		{ "explain", no_argument, NULL, 'x' },
		{ "dmabuf", required_argument, NULL, 'd' },
		{ "help", no_argument, NULL, 'h' },
		{ "version", no_argument, NULL, 'R' },
		{ NULL, 0, NULL, 0 },
	};
	int c;

	*json = false;
	explain = false;
	ndmabufs = 0;
	while ((c = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
		switch (c) {
		case 'j':
			*json = true;
			break;
		case 'd': {
			struct dmabuf_rep *d;
			char *end;
			long pid, fd;

			if (ndmabufs == MAX_DMABUFS) {
				fprintf(stderr, PROG ": at most %d --dmabuf\n", MAX_DMABUFS);
				return 2;
			}
			errno = 0;
			pid = strtol(optarg, &end, 10);
			if (errno || end == optarg || *end != ':' || pid <= 0 || pid > INT32_MAX) {
				fprintf(stderr, PROG ": --dmabuf takes PID:FD, not '%s'\n", optarg);
				return 2;
			}
			fd = strtol(end + 1, &end, 10);
			if (errno || *end || end == optarg || fd < 0 || fd > INT32_MAX) {
				fprintf(stderr, PROG ": --dmabuf takes PID:FD, not '%s'\n", optarg);
				return 2;
			}
			d = &dmabufs[ndmabufs++];
			memset(d, 0, sizeof(*d));
			d->pid = (int)pid;
			d->fd = (int)fd;
			snprintf(d->spec, sizeof(d->spec), "%d:%d", d->pid, d->fd);
			break;
		}
		case 'x':
			explain = true;
			break;
		case 'h':
			usage(stdout);
			return 0;
		case 'R': {
			unsigned v = dmaio_version();

			printf(PROG " %d.%d.%d (libdmaio %u.%u.%u)\n", DMAIO_VERSION_MAJOR,
			       DMAIO_VERSION_MINOR, DMAIO_VERSION_MICRO, v >> 16, (v >> 8) & 0xff, v & 0xff);
			return 0;
		}
		default:
			usage(stderr);
			return 2;
		}
	}
	return -1;
}

int main(int argc, char **argv)
{
	struct report *r;
	bool json, file_err = false;
	int i, ret;

	ret = parse_options(argc, argv, &json);
	if (ret >= 0)
		return ret;

	r = calloc(1, sizeof(*r));
	if (!r) {
		fprintf(stderr, PROG ": out of memory\n");
		return 2;
	}
	r->env_path = getenv("DMAIO_PATH");
	r->sys.struct_size = sizeof(r->sys);
	r->prop.struct_size = sizeof(r->prop);
	r->sys_err = dmaio_ctx_get_system(NULL, &r->sys);
	if (!r->sys_err)
		r->sys_err = dmaio_ctx_get_proposed(NULL, &r->prop);
	if (r->sys_err == 0) {
		r->nheaps = dmaio_ctx_heap_count(NULL);
		for (i = 0; i < r->nheaps && i < MAX_HEAPS; i++) {
			struct heap_rep *h = &r->heaps[i];
			char node[128];

			h->hi.struct_size = sizeof(h->hi);
			h->hp.struct_size = sizeof(h->hp);
			if (dmaio_ctx_get_heap(NULL, (uint32_t)i, &h->hi) ||
			    dmaio_ctx_get_heap_proposed(NULL, (uint32_t)i, &h->hp))
				snprintf(h->hi.name, sizeof(h->hi.name), "?");
			snprintf(node, sizeof(node), "/dev/dma_heap/%.63s", h->hi.name);
			r->heaps[i].shared = node_perms(node, r->heaps[i].perms, sizeof(r->heaps[i].perms));
		}
		/* the library reports an absent /dev/dma_heap through nheaps; trust the node too */
		if (r->nheaps == 0 && access("/dev/dma_heap", F_OK) < 0 && errno == ENOENT)
			r->nheaps = -ENOENT;
		r->udmabuf_shared = node_perms("/dev/udmabuf", r->udmabuf_perms, sizeof(r->udmabuf_perms));
		probe_providers(r);
	}

	for (i = 0; i < ndmabufs; i++) {
		take_dmabuf(&dmabufs[i]);
		if (dmabufs[i].err) {
			file_err = true;
			fprintf(stderr, PROG ": --dmabuf %s: %s: %s\n", dmabufs[i].spec, dmabufs[i].step,
				strerror(-dmabufs[i].err));
		}
	}
	r->nfiles = argc - optind;
	if (r->nfiles > 0) {
		r->files = calloc((size_t)r->nfiles, sizeof(*r->files));
		if (!r->files) {
			fprintf(stderr, PROG ": out of memory\n");
			return 2;
		}
	}
	for (i = 0; i < r->nfiles; i++) {
		r->files[i].name = argv[optind + i];
		if (r->sys_err == 0)
			probe_file(r, &r->files[i]);
		if (r->files[i].open_err || r->files[i].probe_err) {
			int e = r->files[i].open_err ? r->files[i].open_err : r->files[i].probe_err;

			file_err = true;
			fprintf(stderr, PROG ": %s: %s\n", r->files[i].name, strerror(-e));
		}
	}
	make_hints(r);

	if (json)
		print_json(r);
	else
		print_text(r);
	fflush(stdout);

	ret = file_err ? 2 : r->any_dmabuf ? 0 : 1;
	for (i = 0; i < ndmabufs; i++)
		dmaio_buf_free(dmabufs[i].b);
	for (i = 0; i < r->nhints; i++)
		free(r->hints[i]);
	free(r->files);
	free(r);
	return ret;
}
