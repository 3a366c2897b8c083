// SPDX-License-Identifier: MIT
/*
 * The /proc source of a snapshot: each process's dma-buf descriptors (/proc/PID/fd, fdinfo) and
 * mappings (/proc/PID/maps). A process is read through a descriptor of its /proc directory, so
 * a pid reused while it is read cannot mix two processes: the old directory's entries are gone
 * (ENOENT/ESRCH) and the process counts as vanished. A descriptor closed or replaced between its
 * readlink, its fdinfo and its stat is left out (the inode must agree).
 */
#include "account.h"

#include <ctype.h>
#include <dirent.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdlib.h>
#include <sys/sysmacros.h>
#include <unistd.h>

/* the biggest /proc file read (a process's maps): far above any real one */
#define READ_MAX (256u << 20)

struct scan {
	struct acct_raw *raw;
	int procfd;
	uint32_t flags;
	bool dev_known;
	dev_t dev;                /* the dma-buf pseudo filesystem's device */
	bool map_files_denied;    /* map_files needs CAP_SYS_ADMIN / CAP_CHECKPOINT_RESTORE */
	uint32_t partial;         /* buffers seen only through mappings */
	/* inodes known with full facts (a set: open addressing, 0 = empty) */
	uint64_t *known;
	size_t known_cap, known_n;
};

/* Read a whole /proc file relative to dirfd: malloc'd, NUL-terminated. */
static int read_at(int dirfd, const char *path, char **out, size_t *len)
{
	size_t cap = 4096, n = 0;
	char *b;
	int fd = openat(dirfd, path, O_RDONLY | O_CLOEXEC | O_NOCTTY);

	if (fd < 0)
		return neg_errno();
	b = malloc(cap + 1);
	if (!b) {
		close(fd);
		return -ENOMEM;
	}
	for (;;) {
		ssize_t r;

		if (n == cap) {
			char *nb;

			if (cap >= READ_MAX) {
				free(b);
				close(fd);
				return -EFBIG;
			}
			nb = realloc(b, cap * 2 + 1);
			if (!nb) {
				free(b);
				close(fd);
				return -ENOMEM;
			}
			b = nb;
			cap *= 2;
		}
		r = read(fd, b + n, cap - n);
		if (r < 0) {
			int e = neg_errno();

			if (e == -EINTR)
				continue;
			free(b);
			close(fd);
			return e;
		}
		if (r == 0)
			break;
		n += (size_t)r;
	}
	close(fd);
	b[n] = 0;
	*out = b;
	if (len)
		*len = n;
	return 0;
}

static uint64_t hash64(uint64_t x)
{
	x ^= x >> 33;
	x *= 0xff51afd7ed558ccdull;
	x ^= x >> 33;
	return x;
}

static bool known_has(const struct scan *s, uint64_t ino)
{
	if (!s->known_cap)
		return false;
	for (size_t i = hash64(ino) & (s->known_cap - 1);; i = (i + 1) & (s->known_cap - 1)) {
		if (s->known[i] == ino)
			return true;
		if (!s->known[i])
			return false;
	}
}

static int known_add(struct scan *s, uint64_t ino)
{
	if (!ino || known_has(s, ino))
		return 0;
	if ((s->known_n + 1) * 2 > s->known_cap) {
		size_t cap = s->known_cap ? s->known_cap * 2 : 1024;
		uint64_t *t = calloc(cap, sizeof(*t));

		if (!t)
			return -ENOMEM;
		for (size_t j = 0; j < s->known_cap; j++) {
			uint64_t v = s->known[j];

			if (!v)
				continue;
			size_t i = hash64(v) & (cap - 1);

			while (t[i])
				i = (i + 1) & (cap - 1);
			t[i] = v;
		}
		free(s->known);
		s->known = t;
		s->known_cap = cap;
	}
	size_t i = hash64(ino) & (s->known_cap - 1);

	while (s->known[i])
		i = (i + 1) & (s->known_cap - 1);
	s->known[i] = ino;
	s->known_n++;
	return 0;
}

/* The facts of a dma-buf descriptor's fdinfo. */
struct fdinfo {
	uint64_t ino;       /* 0: no "ino:" line (before Linux 5.14) */
	uint64_t size;
	bool dmabuf;        /* an "exp_name:" line: dma_buf_show_fdinfo() wrote it */
	char exporter[128];
	const char *name;   /* into the file's text, or NULL */
};

/* Parse fdinfo text (modified in place: the name is cut out of it). "name:" is the last line
 * dma_buf_show_fdinfo() writes and the name may hold any byte but NUL, newlines included, so it
 * runs to the end of the text, less the final newline. */
static void parse_fdinfo(char *t, size_t len, struct fdinfo *fi)
{
	char *p = t, *end = t + len;

	memset(fi, 0, sizeof(*fi));
	while (p < end) {
		char *nl = memchr(p, '\n', (size_t)(end - p));
		char *le = nl ? nl : end;

		if (!strncmp(p, "name:\t", 6)) {
			char *e = end;

			if (e > p + 6 && e[-1] == '\n')
				e--;
			*e = 0;
			fi->name = p + 6;
			break;
		}
		*le = 0;
		if (!strncmp(p, "ino:", 4))
			fi->ino = strtoull(p + 4, NULL, 10);
		else if (!strncmp(p, "size:", 5))
			fi->size = strtoull(p + 5, NULL, 10);
		else if (!strncmp(p, "exp_name:", 9)) {
			const char *v = p + 9;

			while (*v == '\t' || *v == ' ')
				v++;
			snprintf(fi->exporter, sizeof(fi->exporter), "%s", v);
			fi->dmabuf = true;
		}
		p = le + 1;
	}
}

/* "/dmabuf:NAME" (Linux 5.3+: every dma-buf has its own inode on the dma-buf filesystem) */
static bool is_dmabuf_path(const char *s)
{
	return !strncmp(s, "/dmabuf:", 8);
}

static bool is_vanished(int e)
{
	return e == -ENOENT || e == -ESRCH;
}

static bool is_denied(int e)
{
	return e == -EACCES || e == -EPERM;
}

/* A buffer seen only through a mapping: its size from the mapping's inode where map_files can
 * be stat'ed (no open: a dma-buf inode cannot be opened by path), its exporter from the
 * per-buffer sysfs statistics where the kernel has them, its name from the maps path. */
static int describe_mapped(struct scan *s, int pd, uint64_t start, uint64_t end, uint64_t ino,
			   const char *path)
{
	char p[64], name[128] = "", exporter[128] = "";
	uint64_t size = end - start;
	uint32_t flags = DMAIO_SNAPSHOT_BUF_PARTIAL;
	bool have_size = false;
	char *t;

	if (!s->map_files_denied) {
		struct stat st;

		snprintf(p, sizeof(p), "map_files/%" PRIx64 "-%" PRIx64, start, end);
		if (!fstatat(pd, p, &st, 0)) {
			if ((uint64_t)st.st_ino == ino) {
				size = (uint64_t)st.st_size;
				have_size = true;
			}
		} else if (is_denied(neg_errno())) {
			s->map_files_denied = true;
		}
	}
	snprintf(p, sizeof(p), "/sys/kernel/dmabuf/buffers/%" PRIu64 "/exporter_name", ino);
	if (!read_at(AT_FDCWD, p, &t, NULL)) {
		snprintf(exporter, sizeof(exporter), "%.*s", (int)strcspn(t, "\n"), t);
		free(t);
		if (!have_size) {
			snprintf(p, sizeof(p), "/sys/kernel/dmabuf/buffers/%" PRIu64 "/size", ino);
			if (!read_at(AT_FDCWD, p, &t, NULL)) {
				size = strtoull(t, NULL, 10);
				have_size = true;
				free(t);
			}
		}
	}
	if (have_size && exporter[0])
		flags = 0;
	/* the name: after "/dmabuf:", newlines escaped as \012 by the maps file */
	const char *n = path + 8;
	size_t o = 0;

	while (*n && o + 1 < sizeof(name)) {
		if (!strncmp(n, "\\012", 4)) {
			name[o++] = '\n';
			n += 4;
		} else {
			name[o++] = *n++;
		}
	}
	name[o] = 0;
	if (!flags) {
		int r = known_add(s, ino);

		if (r)
			return r;
	} else {
		s->partial++;
	}
	return acct_add_buf(s->raw, ino, size, flags ? (exporter[0] ? exporter : NULL) : exporter,
			    name, flags);
}

static int scan_fds(struct scan *s, int pd, int32_t pid, struct acct_raw *out)
{
	int fdd = openat(pd, "fd", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	DIR *d;
	struct dirent *e;
	int ret = 0;

	if (fdd < 0)
		return neg_errno();
	d = fdopendir(fdd);
	if (!d) {
		ret = neg_errno();
		close(fdd);
		return ret;
	}
	errno = 0;
	while ((e = readdir(d))) {
		char link[256], p[288], *t;
		size_t len;
		ssize_t n;
		struct fdinfo fi;
		struct stat st;

		if (!isdigit((unsigned char)e->d_name[0]))
			continue;
		n = readlinkat(fdd, e->d_name, link, sizeof(link) - 1);
		if (n < 0) {
			if (is_vanished(neg_errno()))
				continue; /* closed meanwhile */
			ret = neg_errno();
			break;
		}
		link[n] = 0;
		if (!is_dmabuf_path(link))
			continue;
		snprintf(p, sizeof(p), "fdinfo/%s", e->d_name);
		ret = read_at(pd, p, &t, &len);
		if (ret) {
			if (is_vanished(ret)) {
				ret = 0;
				continue;
			}
			break;
		}
		parse_fdinfo(t, len, &fi);
		if (!fi.dmabuf || fstatat(fdd, e->d_name, &st, 0) ||
		    (fi.ino && fi.ino != (uint64_t)st.st_ino) || (uint64_t)st.st_size != fi.size) {
			free(t); /* closed, or replaced by another file or buffer */
			continue;
		}
		if (!s->dev_known) {
			s->dev = st.st_dev;
			s->dev_known = true;
		}
		ret = acct_add_buf(out, (uint64_t)st.st_ino, fi.size, fi.exporter, fi.name, 0);
		if (!ret)
			ret = acct_add_ref(out, pid, (uint64_t)st.st_ino, 1, 0, 0);
		if (!ret)
			ret = known_add(s, (uint64_t)st.st_ino);
		free(t);
		if (ret)
			break;
		errno = 0;
	}
	if (!ret && errno)
		ret = neg_errno();
	closedir(d);
	return ret;
}

static int scan_maps(struct scan *s, int pd, int32_t pid, struct acct_raw *out)
{
	char *t, *line, *next;
	int ret = read_at(pd, "maps", &t, NULL);

	if (ret)
		return ret;
	for (line = t; line && *line; line = next) {
		uint64_t start, end, off, ino;
		unsigned int maj, min;
		char perms[8];
		int pos = 0;

		next = strchr(line, '\n');
		if (next)
			*next++ = 0;
		if (sscanf(line, "%" SCNx64 "-%" SCNx64 " %7s %" SCNx64 " %x:%x %" SCNu64 " %n", &start,
			   &end, perms, &off, &maj, &min, &ino, &pos) < 7 || !pos)
			continue;
		const char *path = line + pos;

		if (!is_dmabuf_path(path) || end <= start || !ino)
			continue;
		if (s->dev_known && makedev(maj, min) != s->dev)
			continue; /* a file of another filesystem whose path looks alike */
		ret = acct_add_ref(out, pid, ino, 0, 1, end - start);
		if (!ret && !known_has(s, ino))
			ret = describe_mapped(s, pd, start, end, ino, path);
		if (ret)
			break;
	}
	free(t);
	return ret;
}

/* PF_KTHREAD in /proc/PID/stat's flags (field 9): kernel threads hold no descriptors. */
static int is_kthread(int pd)
{
	char *t, *p;
	unsigned long flags = 0;
	int r = read_at(pd, "stat", &t, NULL);

	if (r)
		return r;
	p = strrchr(t, ')');
	if (p && sscanf(p + 1, " %*c %*d %*d %*d %*d %*d %lu", &flags) == 1)
		r = (flags & 0x00200000ul) ? 1 : 0;
	else
		r = -EBADMSG;
	free(t);
	return r;
}

/* The cgroup v2 path of a process that holds something ("0::/path" of /proc/PID/cgroup,
 * relative to the caller's cgroup namespace): malloc'd, or NULL (no v2 line, exited, out of
 * memory: the process is then counted in the cgroup ""). Read through the process's directory
 * descriptor, as everything else of it. */
static char *read_cgroup(int pd)
{
	char *t, *line, *out = NULL;

	if (read_at(pd, "cgroup", &t, NULL))
		return NULL;
	for (line = t; line && *line; line = strchr(line, '\n') ? strchr(line, '\n') + 1 : NULL) {
		if (strncmp(line, "0::", 3) == 0) {
			size_t n = strcspn(line + 3, "\n");

			out = strndup(line + 3, n);
			break;
		}
	}
	free(t);
	return out;
}

/* Read one process: 0 (read, or a kernel thread), 1 vanished, 2 denied, < 0 a failure. */
static int scan_pid(struct scan *s, int32_t pid)
{
	char name[16], *comm = NULL, *cgroup;
	struct acct_raw mine = { 0 };
	int pd, r;

	snprintf(name, sizeof(name), "%d", (int)pid);
	pd = openat(s->procfd, name, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (pd < 0)
		return is_vanished(neg_errno()) ? 1 : neg_errno();
	r = is_kthread(pd);
	if (r == 1) {
		close(pd);
		return 0;
	}
	if (!r)
		r = read_at(pd, "comm", &comm, NULL);
	if (!r)
		r = scan_fds(s, pd, pid, &mine);
	if (!r && !(s->flags & DMAIO_SNAPSHOT_NO_MAPS))
		r = scan_maps(s, pd, pid, &mine);
	cgroup = !r && mine.nrefs ? read_cgroup(pd) : NULL;
	close(pd);
	if (r) {
		free(comm);
		free(cgroup);
		acct_raw_free(&mine);
		if (is_vanished(r))
			return 1;
		if (is_denied(r))
			return 2;
		return r;
	}
	comm[strcspn(comm, "\n")] = 0;
	r = acct_add_proc(s->raw, pid, comm, cgroup ? cgroup : "");
	free(comm);
	free(cgroup);
	for (size_t i = 0; !r && i < mine.nbufs; i++) {
		struct acct_buf *b = &mine.bufs[i];

		r = acct_add_buf(s->raw, b->ino, b->size, b->exporter, b->name, b->flags);
	}
	for (size_t i = 0; !r && i < mine.nrefs; i++) {
		struct acct_ref *f = &mine.refs[i];

		r = acct_add_ref(s->raw, f->pid, f->ino, f->fds, f->maps, f->mapped_bytes);
	}
	acct_raw_free(&mine);
	return r;
}

int acct_proc_scan(struct acct_raw *raw, const char *proc_root, int32_t pid, uint32_t flags,
		   struct dmaio_reason *why)
{
	struct scan s = { .raw = raw, .flags = flags };
	const char *root = proc_root ? proc_root : "/proc";
	int r = 0;

	s.procfd = open(root, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (s.procfd < 0)
		return dmaio_reason_set(why, neg_errno(), "%s cannot be opened: %s", root,
					strerror(errno));
	if (pid > 0) {
		r = scan_pid(&s, pid);
		if (r == 1)
			r = dmaio_reason_set(why, -ESRCH, "no process %d in %s", (int)pid, root);
		else if (r == 2)
			r = dmaio_reason_set(why, -EACCES,
					     "process %d: its descriptors and mappings may not be "
					     "read by this caller (another user's: needs CAP_SYS_PTRACE)",
					     (int)pid);
		else if (!r)
			raw->scanned++;
	} else {
		DIR *d;
		struct dirent *e;
		int dfd = dup(s.procfd);

		d = dfd >= 0 ? fdopendir(dfd) : NULL;
		if (!d) {
			r = neg_errno();
			if (dfd >= 0)
				close(dfd);
			close(s.procfd);
			free(s.known);
			return r;
		}
		while ((e = readdir(d))) {
			char *endp;
			long v = strtol(e->d_name, &endp, 10);

			if (*endp || v <= 0 || v > INT32_MAX)
				continue;
			r = scan_pid(&s, (int32_t)v);
			if (r == 1) {
				raw->vanished++;
				r = 0;
			} else if (r == 2) {
				raw->hidden++;
				r = 0;
			} else if (!r) {
				raw->scanned++;
			} else {
				break;
			}
		}
		closedir(d);
	}
	close(s.procfd);
	free(s.known);
	if (r < 0)
		return why && !why->text[0] ? dmaio_reason_set(why, r, "reading %s: %s", root,
							       strerror(-r)) : r;
	if (raw->hidden)
		raw->flags |= DMAIO_SNAPSHOT_PARTIAL_PROCS;
	if (s.partial)
		raw->flags |= DMAIO_SNAPSHOT_PARTIAL_BUFS;
	if (raw->hidden || s.partial) {
		char h[96] = "";

		if (raw->hidden)
			snprintf(h, sizeof(h), "%u processes of other users not read (needs "
				 "CAP_SYS_PTRACE)", raw->hidden);
		dmaio_reason_set(why, 0, "%s%s%s", h, raw->hidden && s.partial ? "; " : "",
				 s.partial ? "buffers seen only mapped have no exporter or size (needs "
					     "CAP_SYS_ADMIN for map_files, or sysfs dma-buf statistics)" : "");
	}
	return 0;
}
