// SPDX-License-Identifier: MIT
/*
 * Snapshots: the exported functions of libdmaio-account. A source (proc.c, bpf.c) appends raw
 * records; the merge here makes each buffer and each (buffer, process) hold unique, sorts them,
 * links buffers to their holders and totals each process.
 */
#include "account.h"

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

/* one cgroup of the holding processes */
struct snap_cgroup {
	char *path;
	uint32_t flags;             /* DMAIO_SNAPSHOT_CGROUP_* */
	uint32_t nprocs, nbufs;
	uint64_t bytes, current, kernel;
	uint32_t last_buf;          /* the merge's marker: 1 + the last buffer counted */
};

struct dmaio_snapshot {
	struct dmaio_snapshot_info info;
	struct acct_buf *bufs;
	size_t nbufs;
	struct acct_ref *holders;
	size_t nholders;
	struct dmaio_snapshot_process *procs;
	char **comms;
	size_t nprocs;
	struct snap_cgroup *cgroups;
	size_t ncgroups;
};

static int grow(void **p, size_t *cap, size_t n, size_t elem)
{
	if (n < *cap)
		return 0;
	size_t c = *cap ? *cap * 2 : 64;
	void *np = reallocarray(*p, c, elem);

	if (!np)
		return -ENOMEM;
	*p = np;
	*cap = c;
	return 0;
}

static int dup_str(const char *s, char **out)
{
	*out = NULL;
	if (!s)
		return 0;
	*out = strdup(s);
	return *out ? 0 : -ENOMEM;
}

int acct_add_buf(struct acct_raw *raw, uint64_t ino, uint64_t size, const char *exporter,
		 const char *name, uint32_t flags)
{
	struct acct_buf *b;

	if (grow((void **)&raw->bufs, &raw->cap_bufs, raw->nbufs, sizeof(*raw->bufs)))
		return -ENOMEM;
	b = &raw->bufs[raw->nbufs];
	memset(b, 0, sizeof(*b));
	b->ino = ino;
	b->size = size;
	b->flags = flags;
	if (dup_str(exporter, &b->exporter) || dup_str(name, &b->name)) {
		free(b->exporter);
		return -ENOMEM;
	}
	raw->nbufs++;
	return 0;
}

int acct_add_ref(struct acct_raw *raw, int32_t pid, uint64_t ino, uint32_t fds, uint32_t maps,
		 uint64_t mapped_bytes)
{
	if (grow((void **)&raw->refs, &raw->cap_refs, raw->nrefs, sizeof(*raw->refs)))
		return -ENOMEM;
	raw->refs[raw->nrefs++] = (struct acct_ref){ .ino = ino, .pid = pid, .fds = fds,
						     .maps = maps, .mapped_bytes = mapped_bytes };
	return 0;
}

int acct_add_proc(struct acct_raw *raw, int32_t pid, const char *comm, const char *cgroup)
{
	struct acct_proc *p;

	if (grow((void **)&raw->procs, &raw->cap_procs, raw->nprocs, sizeof(*raw->procs)))
		return -ENOMEM;
	p = &raw->procs[raw->nprocs];
	if (dup_str(comm ? comm : "", &p->comm))
		return -ENOMEM;
	if (dup_str(cgroup ? cgroup : "", &p->cgroup)) {
		free(p->comm);
		return -ENOMEM;
	}
	p->pid = pid;
	raw->nprocs++;
	return 0;
}

void acct_raw_free(struct acct_raw *raw)
{
	for (size_t i = 0; i < raw->nbufs; i++) {
		free(raw->bufs[i].exporter);
		free(raw->bufs[i].name);
	}
	for (size_t i = 0; i < raw->nprocs; i++) {
		free(raw->procs[i].comm);
		free(raw->procs[i].cgroup);
	}
	free(raw->bufs);
	free(raw->refs);
	free(raw->procs);
	memset(raw, 0, sizeof(*raw));
}

/* inode, then the complete record first, then the longest (a mapping's length) */
static int cmp_buf(const void *a, const void *b)
{
	const struct acct_buf *x = a, *y = b;
	bool px = x->flags & DMAIO_SNAPSHOT_BUF_PARTIAL, py = y->flags & DMAIO_SNAPSHOT_BUF_PARTIAL;

	if (x->ino != y->ino)
		return x->ino < y->ino ? -1 : 1;
	if (px != py)
		return px ? 1 : -1;
	return x->size == y->size ? 0 : x->size > y->size ? -1 : 1;
}

static int cmp_ref(const void *a, const void *b)
{
	const struct acct_ref *x = a, *y = b;

	if (x->ino != y->ino)
		return x->ino < y->ino ? -1 : 1;
	return x->pid == y->pid ? 0 : x->pid < y->pid ? -1 : 1;
}

static int cmp_proc(const void *a, const void *b)
{
	const struct acct_proc *x = a, *y = b;

	return x->pid == y->pid ? 0 : x->pid < y->pid ? -1 : 1;
}

static int cmp_pid(const void *a, const void *b)
{
	int32_t x = *(const int32_t *)a, y = *(const int32_t *)b;

	return x == y ? 0 : x < y ? -1 : 1;
}

static int cmp_snap_proc(const void *a, const void *b)
{
	const struct dmaio_snapshot_process *x = a, *y = b;

	return x->pid == y->pid ? 0 : x->pid < y->pid ? -1 : 1;
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

static int cmp_cgroup(const void *a, const void *b)
{
	return strcmp(((const struct snap_cgroup *)a)->path, ((const struct snap_cgroup *)b)->path);
}

/* The cgroups of the snapshot's processes (paths[i]: process i's, moved from raw): one each,
 * sorted by path; each process gets its index, each cgroup its processes and the buffers they
 * hold, each buffer once. */
static int merge_cgroups(struct dmaio_snapshot *s, char **paths)
{
	char **sorted = malloc((s->nprocs ? s->nprocs : 1) * sizeof(*sorted));
	size_t n = 0;

	if (!sorted)
		return -ENOMEM;
	memcpy(sorted, paths, s->nprocs * sizeof(*sorted));
	if (s->nprocs)
		qsort(sorted, s->nprocs, sizeof(*sorted), cmp_str);
	s->cgroups = calloc(s->nprocs ? s->nprocs : 1, sizeof(*s->cgroups));
	if (!s->cgroups) {
		free(sorted);
		return -ENOMEM;
	}
	for (size_t i = 0; i < s->nprocs; i++) {
		if (n && !strcmp(s->cgroups[n - 1].path, sorted[i]))
			continue;
		s->cgroups[n].path = strdup(sorted[i]);
		if (!s->cgroups[n].path) {
			free(sorted);
			return -ENOMEM;
		}
		n++;
	}
	s->ncgroups = n;
	free(sorted);
	for (size_t i = 0; i < s->nprocs; i++) {
		struct snap_cgroup key = { .path = paths[i] };
		struct snap_cgroup *c = bsearch(&key, s->cgroups, s->ncgroups, sizeof(*s->cgroups),
						cmp_cgroup);

		s->procs[i].cgroup = (uint32_t)(c - s->cgroups);
		c->nprocs++;
	}
	/* holders are sorted by buffer: a cgroup counts a buffer at its first holder in it */
	for (size_t i = 0; i < s->nholders; i++) {
		const struct acct_ref *r = &s->holders[i];
		struct snap_cgroup *c = &s->cgroups[s->procs[r->process].cgroup];

		if (c->last_buf == r->buffer + 1)
			continue;
		c->last_buf = r->buffer + 1;
		c->nbufs++;
		c->bytes += s->bufs[r->buffer].size;
	}
	return 0;
}

static const struct acct_buf *find_buf(const struct acct_buf *v, size_t n, uint64_t ino)
{
	size_t lo = 0, hi = n;

	while (lo < hi) {
		size_t m = lo + (hi - lo) / 2;

		if (v[m].ino < ino)
			lo = m + 1;
		else
			hi = m;
	}
	return lo < n && v[lo].ino == ino ? &v[lo] : NULL;
}

/* Make the raw records a snapshot; raw's memory moves into it. */
static int merge(struct acct_raw *raw, struct dmaio_snapshot *s)
{
	char **cgroup_of;
	size_t n = 0;

	/* buffers: one per inode, the best record kept */
	if (raw->nbufs)
		qsort(raw->bufs, raw->nbufs, sizeof(*raw->bufs), cmp_buf);
	for (size_t i = 0; i < raw->nbufs; i++) {
		if (n && raw->bufs[n - 1].ino == raw->bufs[i].ino) {
			free(raw->bufs[i].exporter);
			free(raw->bufs[i].name);
			continue;
		}
		raw->bufs[n++] = raw->bufs[i];
	}
	s->bufs = raw->bufs;
	s->nbufs = n;
	raw->bufs = NULL;
	raw->nbufs = 0;

	/* holds: one per (inode, pid), summed */
	n = 0;
	if (raw->nrefs)
		qsort(raw->refs, raw->nrefs, sizeof(*raw->refs), cmp_ref);
	for (size_t i = 0; i < raw->nrefs; i++) {
		struct acct_ref *r = &raw->refs[i];

		if (!find_buf(s->bufs, s->nbufs, r->ino))
			continue; /* cannot happen: every source describes what it refers to */
		if (n && raw->refs[n - 1].ino == r->ino && raw->refs[n - 1].pid == r->pid) {
			raw->refs[n - 1].fds += r->fds;
			raw->refs[n - 1].maps += r->maps;
			raw->refs[n - 1].mapped_bytes += r->mapped_bytes;
			continue;
		}
		raw->refs[n++] = *r;
	}
	s->holders = raw->refs;
	s->nholders = n;
	raw->refs = NULL;
	raw->nrefs = 0;

	/* processes: those holding something, sorted by pid */
	int32_t *pids = malloc((s->nholders ? s->nholders : 1) * sizeof(*pids));

	if (!pids)
		return -ENOMEM;
	for (size_t i = 0; i < s->nholders; i++)
		pids[i] = s->holders[i].pid;
	if (s->nholders)
		qsort(pids, s->nholders, sizeof(*pids), cmp_pid);
	n = 0;
	for (size_t i = 0; i < s->nholders; i++)
		if (!n || pids[n - 1] != pids[i])
			pids[n++] = pids[i];
	s->procs = calloc(n ? n : 1, sizeof(*s->procs));
	s->comms = calloc(n ? n : 1, sizeof(*s->comms));
	cgroup_of = calloc(n ? n : 1, sizeof(*cgroup_of));
	if (!s->procs || !s->comms || !cgroup_of) {
		free(pids);
		free(cgroup_of);
		return -ENOMEM;
	}
	s->nprocs = n;
	if (raw->nprocs)
		qsort(raw->procs, raw->nprocs, sizeof(*raw->procs), cmp_proc);
	for (size_t i = 0; i < n; i++) {
		struct acct_proc key = { .pid = pids[i] };
		struct acct_proc *p = bsearch(&key, raw->procs, raw->nprocs, sizeof(*raw->procs),
					      cmp_proc);

		s->procs[i].pid = pids[i];
		cgroup_of[i] = p ? p->cgroup : NULL;
		if (p) {
			s->comms[i] = p->comm;
			p->comm = NULL;
		}
		if (!cgroup_of[i])
			cgroup_of[i] = ""; /* a hold without the process's record: cannot happen */
	}
	free(pids);

	/* links and totals */
	size_t b = 0;
	int err;

	for (size_t i = 0; i < s->nholders; i++) {
		struct acct_ref *r = &s->holders[i];
		struct dmaio_snapshot_process key = { .pid = r->pid };
		struct dmaio_snapshot_process *p = bsearch(&key, s->procs, s->nprocs,
							   sizeof(*s->procs), cmp_snap_proc);

		while (s->bufs[b].ino != r->ino)
			b++;
		if (!s->bufs[b].holder_count)
			s->bufs[b].first_holder = (uint32_t)i;
		s->bufs[b].holder_count++;
		r->process = (uint32_t)(p - s->procs);
		r->buffer = (uint32_t)b;
	}
	for (size_t i = 0; i < s->nholders; i++) {
		const struct acct_ref *r = &s->holders[i];
		const struct acct_buf *bb = &s->bufs[r->buffer];
		struct dmaio_snapshot_process *p = &s->procs[r->process];

		p->nbuffers++;
		p->bytes += bb->size;
		if (bb->holder_count > 1)
			p->shared_bytes += bb->size;
		else
			p->private_bytes += bb->size;
		p->pss_bytes += bb->size / bb->holder_count;
	}
	s->info.flags = raw->flags;
	for (size_t i = 0; i < s->nbufs; i++) {
		s->info.bytes += s->bufs[i].size;
		if (!s->bufs[i].holder_count && (raw->flags & DMAIO_SNAPSHOT_HAS_KERNEL)) {
			s->bufs[i].flags |= DMAIO_SNAPSHOT_BUF_KERNEL;
			s->info.kernel_bytes += s->bufs[i].size;
		}
	}
	s->info.nbuffers = (uint32_t)s->nbufs;
	s->info.nholders = (uint32_t)s->nholders;
	s->info.nprocesses = (uint32_t)s->nprocs;
	s->info.scanned = raw->scanned;
	s->info.hidden = raw->hidden;
	s->info.vanished = raw->vanished;
	err = merge_cgroups(s, cgroup_of);
	free(cgroup_of);
	s->info.ncgroups = (uint32_t)s->ncgroups;
	return err;
}

/* CmaTotal / CmaFree of meminfo, bytes (0 without CMA) */
static void read_cma(const char *proc_root, struct dmaio_snapshot_info *info)
{
	char path[512], line[256];
	FILE *f;

	snprintf(path, sizeof(path), "%s/meminfo", proc_root ? proc_root : "/proc");
	f = fopen(path, "re");
	if (!f)
		return;
	while (fgets(line, sizeof(line), f)) {
		unsigned long long kb;

		if (sscanf(line, "CmaTotal: %llu kB", &kb) == 1)
			info->cma_total = kb * 1024;
		else if (sscanf(line, "CmaFree: %llu kB", &kb) == 1)
			info->cma_free = kb * 1024;
	}
	fclose(f);
}

/* mountinfo's octal escapes (\040 a space, \011, \012, \134), undone in place */
static void unescape(char *t)
{
	char *o = t;

	for (; *t; t++) {
		if (t[0] == '\\' && t[1] >= '0' && t[1] <= '3' && t[2] >= '0' && t[2] <= '7' &&
		    t[3] >= '0' && t[3] <= '7') {
			*o++ = (char)((t[1] - '0') * 64 + (t[2] - '0') * 8 + (t[3] - '0'));
			t += 3;
		} else {
			*o++ = *t;
		}
	}
	*o = 0;
}

/* The caller's first cgroup2 mount (<proc>/self/mountinfo): its mount point and the cgroup
 * path it shows (its root), or -ENOENT. */
static int find_cgroup2(const char *proc_root, char *mnt, size_t mnt_n, char *root,
			size_t root_n)
{
	char path[512], *line = NULL;
	size_t cap = 0;
	int r = -ENOENT;
	FILE *f;

	snprintf(path, sizeof(path), "%s/self/mountinfo", proc_root ? proc_root : "/proc");
	f = fopen(path, "re");
	if (!f)
		return -ENOENT;
	while (r && getline(&line, &cap, f) > 0) {
		char *sep = strstr(line, " - "), *fields[5], *save = NULL, *t = line;
		int k = 0;

		if (!sep || strncmp(sep + 3, "cgroup2 ", 8))
			continue;
		*sep = 0;
		while (k < 5 && (fields[k] = strtok_r(t, " ", &save)))
			t = NULL, k++;
		if (k < 5)
			continue;
		unescape(fields[3]);
		unescape(fields[4]);
		if (strlen(fields[4]) < mnt_n && strlen(fields[3]) < root_n) {
			snprintf(mnt, mnt_n, "%s", fields[4]);
			snprintf(root, root_n, "%s", fields[3]);
			r = 0;
		}
	}
	free(line);
	fclose(f);
	return r;
}

/* One number of a cgroup file: the whole file (key NULL), or the value of its line "key N". */
static int read_cgroup_value(int dirfd, const char *file, const char *key, uint64_t *v)
{
	char buf[8192];
	size_t n = 0, klen = key ? strlen(key) : 0;
	int fd = openat(dirfd, file, O_RDONLY | O_CLOEXEC);
	ssize_t got;

	if (fd < 0)
		return -errno;
	while (n < sizeof(buf) - 1 && (got = read(fd, buf + n, sizeof(buf) - 1 - n)) > 0)
		n += (size_t)got;
	close(fd);
	buf[n] = 0;
	for (char *l = buf; l && *l; l = strchr(l, '\n') ? strchr(l, '\n') + 1 : NULL) {
		unsigned long long x;

		if (key && (strncmp(l, key, klen) || l[klen] != ' '))
			continue;
		if (sscanf(key ? l + klen : l, " %llu", &x) != 1)
			return -EBADMSG;
		*v = x;
		return 0;
	}
	return -ENOENT;
}

/* memory.current and memory.stat "kernel" of each cgroup, through the caller's cgroup2 mount
 * (paths of /proc/PID/cgroup are relative to the caller's cgroup namespace, as is the root a
 * mount shows); cgroups without the memory controller (the root has no memory.current) are
 * left without DMAIO_SNAPSHOT_CGROUP_MEMORY. */
static void read_cgroup_memory(const char *proc_root, struct dmaio_snapshot *s)
{
	char mnt[512], root[512];
	size_t rootlen;
	int mfd;

	if (!s->ncgroups || find_cgroup2(proc_root, mnt, sizeof(mnt), root, sizeof(root)))
		return;
	mfd = open(mnt, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (mfd < 0)
		return;
	rootlen = strcmp(root, "/") ? strlen(root) : 0;
	for (size_t i = 0; i < s->ncgroups; i++) {
		struct snap_cgroup *c = &s->cgroups[i];
		const char *rel = c->path + rootlen;
		int dfd;

		if (c->path[0] != '/' || strncmp(c->path, root, rootlen) ||
		    (*rel && *rel != '/'))
			continue;
		while (*rel == '/')
			rel++;
		dfd = *rel ? openat(mfd, rel, O_RDONLY | O_DIRECTORY | O_CLOEXEC) : dup(mfd);
		if (dfd < 0)
			continue;
		if (!read_cgroup_value(dfd, "memory.current", NULL, &c->current) &&
		    !read_cgroup_value(dfd, "memory.stat", "kernel", &c->kernel))
			c->flags |= DMAIO_SNAPSHOT_CGROUP_MEMORY;
		else
			c->current = c->kernel = 0;
		close(dfd);
	}
	close(mfd);
}

/* /sys/module/dma_heap/parameters/mem_accounting: Y, N, or not there */
static uint32_t read_memcg_accounting(void)
{
	char v[8] = "";
	int fd = open("/sys/module/dma_heap/parameters/mem_accounting", O_RDONLY | O_CLOEXEC);
	ssize_t n;

	if (fd < 0)
		return DMAIO_SNAPSHOT_MEMCG_ABSENT;
	n = read(fd, v, sizeof(v) - 1);
	close(fd);
	if (n <= 0)
		return DMAIO_SNAPSHOT_MEMCG_ABSENT;
	return v[0] == 'Y' || v[0] == '1' ? DMAIO_SNAPSHOT_MEMCG_ON : DMAIO_SNAPSHOT_MEMCG_OFF;
}

static int64_t now_ns(clockid_t c)
{
	struct timespec ts;

	clock_gettime(c, &ts);
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

DMAIO_EXPORT void dmaio_snapshot_free(struct dmaio_snapshot *snap)
{
	if (!snap)
		return;
	for (size_t i = 0; i < snap->nbufs; i++) {
		free(snap->bufs[i].exporter);
		free(snap->bufs[i].name);
	}
	for (size_t i = 0; i < snap->nprocs; i++)
		free(snap->comms[i]);
	for (size_t i = 0; i < snap->ncgroups; i++)
		free(snap->cgroups[i].path);
	free(snap->cgroups);
	free(snap->bufs);
	free(snap->holders);
	free(snap->procs);
	free(snap->comms);
	free(snap);
}

struct dmaio_snapshot_reader {
	struct dmaio_snapshot_opts o;   /* proc_root: our own copy */
	struct acct_bpf *bpf;           /* the loaded program, or NULL: /proc only */
	char bpf_why[DMAIO_REASON_MAX]; /* AUTO without BPF: why */
};

DMAIO_EXPORT void dmaio_snapshot_reader_free(struct dmaio_snapshot_reader *rd)
{
	if (!rd)
		return;
	acct_bpf_close(rd->bpf);
	free((char *)rd->o.proc_root);
	free(rd);
}

DMAIO_EXPORT int dmaio_snapshot_reader_new(const struct dmaio_snapshot_opts *opts,
					   struct dmaio_snapshot_reader **reader,
					   struct dmaio_reason *reason)
{
	struct dmaio_reason bpf_why = { .struct_size = sizeof(bpf_why) };
	struct dmaio_snapshot_reader *rd;
	int r;

	if (dmaio_reason_check(reason) || !reader)
		return -EINVAL;
	dmaio_reason_clear(reason);
	*reader = NULL;
	rd = calloc(1, sizeof(*rd));
	if (!rd)
		return -ENOMEM;
	rd->o.struct_size = sizeof(rd->o);
	if (opts) {
		r = dmaio_abi_copy_in(&rd->o, sizeof(rd->o), opts, DMAIO_SIZE_SNAPSHOT_OPTS);
		if (r) {
			free(rd);
			return dmaio_reason_set(reason, r == -E2BIG ? -EINVAL : r,
						"struct dmaio_snapshot_opts: struct_size %u %s",
						opts->struct_size,
						r == -E2BIG ? "with non-zero bytes this library does not know"
							    : "out of range");
		}
	}
	r = 0;
	if (rd->o.source > DMAIO_SNAPSHOT_BPF)
		r = dmaio_reason_set(reason, -EINVAL, "unknown snapshot source %u", rd->o.source);
	else if (rd->o.flags & ~DMAIO_SNAPSHOT_FLAGS_ALL)
		r = dmaio_reason_set(reason, -EINVAL, "unknown snapshot flags 0x%x",
				     rd->o.flags & ~DMAIO_SNAPSHOT_FLAGS_ALL);
	else if (rd->o.pid < 0)
		r = dmaio_reason_set(reason, -EINVAL, "negative pid %d", (int)rd->o.pid);
	if (r) {
		free(rd);
		return r;
	}
	if (rd->o.proc_root) {
		rd->o.proc_root = strdup(rd->o.proc_root);
		if (!rd->o.proc_root) {
			free(rd);
			return -ENOMEM;
		}
	}
	if (rd->o.source != DMAIO_SNAPSHOT_PROC) {
		r = acct_bpf_open(&rd->bpf, &bpf_why);
		if (r && rd->o.source == DMAIO_SNAPSHOT_BPF) {
			dmaio_reason_set(reason, r, "%s", bpf_why.text);
			dmaio_snapshot_reader_free(rd);
			return r;
		}
		snprintf(rd->bpf_why, sizeof(rd->bpf_why), "%s", bpf_why.text);
	}
	*reader = rd;
	return 0;
}

DMAIO_EXPORT int dmaio_snapshot_reader_take(struct dmaio_snapshot_reader *rd,
					    struct dmaio_snapshot **snap,
					    struct dmaio_reason *reason)
{
	struct acct_raw raw = { 0 };
	struct dmaio_snapshot *s;
	int64_t t0;
	int r;

	if (dmaio_reason_check(reason) || !snap || !rd)
		return -EINVAL;
	dmaio_reason_clear(reason);
	*snap = NULL;
	s = calloc(1, sizeof(*s));
	if (!s)
		return -ENOMEM;
	t0 = now_ns(CLOCK_MONOTONIC);
	s->info.struct_size = sizeof(s->info);
	s->info.time_ns = now_ns(CLOCK_REALTIME);
	s->info.source = DMAIO_SNAPSHOT_PROC;
	if (rd->bpf) {
		r = acct_bpf_read(rd->bpf, &raw, reason);
		if (r)
			goto fail;
		s->info.source = DMAIO_SNAPSHOT_BPF;
		raw.flags |= DMAIO_SNAPSHOT_HAS_KERNEL;
	}
	r = acct_proc_scan(&raw, rd->o.proc_root, rd->o.pid, rd->o.flags, reason);
	if (r)
		goto fail;
	if (!rd->bpf && rd->o.source == DMAIO_SNAPSHOT_AUTO && reason) {
		/* say why the kernel's list was not used, after what /proc could not see */
		char prev[DMAIO_REASON_MAX];

		snprintf(prev, sizeof(prev), "%s", reason->text);
		dmaio_reason_set(reason, 0, "%s%sBPF source not used: %s", prev, prev[0] ? "; " : "",
				 rd->bpf_why);
	}
	r = merge(&raw, s);
	if (r)
		goto fail;
	acct_raw_free(&raw);
	read_cma(rd->o.proc_root, &s->info);
	read_cgroup_memory(rd->o.proc_root, s);
	s->info.memcg_accounting = read_memcg_accounting();
	s->info.duration_ns = (uint64_t)(now_ns(CLOCK_MONOTONIC) - t0);
	*snap = s;
	return 0;
fail:
	acct_raw_free(&raw);
	dmaio_snapshot_free(s);
	return r;
}

DMAIO_EXPORT int dmaio_snapshot_new(const struct dmaio_snapshot_opts *opts,
				    struct dmaio_snapshot **snap, struct dmaio_reason *reason)
{
	struct dmaio_snapshot_reader *rd;
	int r;

	if (dmaio_reason_check(reason) || !snap)
		return -EINVAL;
	*snap = NULL;
	r = dmaio_snapshot_reader_new(opts, &rd, reason);
	if (r)
		return r;
	r = dmaio_snapshot_reader_take(rd, snap, reason);
	dmaio_snapshot_reader_free(rd);
	return r;
}

DMAIO_EXPORT int dmaio_snapshot_get_info(const struct dmaio_snapshot *snap,
					 struct dmaio_snapshot_info *info)
{
	if (!snap || dmaio_abi_check_out(info, DMAIO_SIZE_SNAPSHOT_INFO))
		return -EINVAL;
	dmaio_abi_copy_out(info, &snap->info, sizeof(snap->info));
	return 0;
}

DMAIO_EXPORT int dmaio_snapshot_get_buffer(const struct dmaio_snapshot *snap, uint32_t index,
					   struct dmaio_snapshot_buffer *buf)
{
	struct dmaio_snapshot_buffer b = { .struct_size = sizeof(b) };
	const struct acct_buf *a;

	if (!snap || dmaio_abi_check_out(buf, DMAIO_SIZE_SNAPSHOT_BUFFER))
		return -EINVAL;
	if (index >= snap->nbufs)
		return -ERANGE;
	a = &snap->bufs[index];
	b.flags = a->flags;
	b.inode = a->ino;
	b.size = a->size;
	b.exporter = a->exporter ? a->exporter : "";
	b.name = a->name ? a->name : "";
	b.nprocesses = a->holder_count;
	b.first_holder = a->holder_count ? a->first_holder : 0;
	dmaio_abi_copy_out(buf, &b, sizeof(b));
	return 0;
}

DMAIO_EXPORT int dmaio_snapshot_get_process(const struct dmaio_snapshot *snap, uint32_t index,
					    struct dmaio_snapshot_process *proc)
{
	struct dmaio_snapshot_process p;

	if (!snap || dmaio_abi_check_out(proc, DMAIO_SIZE_SNAPSHOT_PROCESS))
		return -EINVAL;
	if (index >= snap->nprocs)
		return -ERANGE;
	p = snap->procs[index];
	p.struct_size = sizeof(p);
	p.comm = snap->comms[index] ? snap->comms[index] : "";
	dmaio_abi_copy_out(proc, &p, sizeof(p));
	return 0;
}

DMAIO_EXPORT int dmaio_snapshot_get_cgroup(const struct dmaio_snapshot *snap, uint32_t index,
					   struct dmaio_snapshot_cgroup *cgroup)
{
	struct dmaio_snapshot_cgroup g = { .struct_size = sizeof(g) };
	const struct snap_cgroup *c;

	if (!snap || dmaio_abi_check_out(cgroup, DMAIO_SIZE_SNAPSHOT_CGROUP))
		return -EINVAL;
	if (index >= snap->ncgroups)
		return -ERANGE;
	c = &snap->cgroups[index];
	g.flags = c->flags;
	g.path = c->path;
	g.nprocesses = c->nprocs;
	g.nbuffers = c->nbufs;
	g.bytes = c->bytes;
	g.memory_current = c->current;
	g.memory_kernel = c->kernel;
	dmaio_abi_copy_out(cgroup, &g, sizeof(g));
	return 0;
}

DMAIO_EXPORT int dmaio_snapshot_get_holder(const struct dmaio_snapshot *snap, uint32_t index,
					   struct dmaio_snapshot_holder *holder)
{
	struct dmaio_snapshot_holder h = { .struct_size = sizeof(h) };
	const struct acct_ref *r;

	if (!snap || dmaio_abi_check_out(holder, DMAIO_SIZE_SNAPSHOT_HOLDER))
		return -EINVAL;
	if (index >= snap->nholders)
		return -ERANGE;
	r = &snap->holders[index];
	h.buffer = r->buffer;
	h.process = r->process;
	h.pid = r->pid;
	h.fds = r->fds;
	h.maps = r->maps;
	h.mapped_bytes = r->mapped_bytes;
	dmaio_abi_copy_out(holder, &h, sizeof(h));
	return 0;
}

DMAIO_EXPORT int dmaio_snapshot_find_buffer(const struct dmaio_snapshot *snap, uint64_t inode)
{
	const struct acct_buf *b;

	if (!snap)
		return -EINVAL;
	b = find_buf(snap->bufs, snap->nbufs, inode);
	return b ? (int)(b - snap->bufs) : -ENOENT;
}
