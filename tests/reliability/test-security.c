// SPDX-License-Identifier: MIT
/*
 * test-security: what the library leaves to other programs and processes.
 *
 * Parts (default: cloexec, seals, files; "--part suid" is registered as its own test):
 *   cloexec  every fd the library creates is close-on-exec: fds are compared before/after
 *            dmaio_buf_alloc (the --heap, "memfd", heap NULL), dmaio_buf_map, dmaio_buf_import, the probes
 *            and reads/writes through every path while the buffers are alive, AND at every call
 *            of the library's syscall seam (the wrapped dmaio_fault_hit() of the fault-injection
 *            build, here never injecting), so that fds living only inside one call (the O_DIRECT
 *            reopen, splice pipes, probe fds) are checked too; finally a child exec'd with all
 *            the buffers alive must not have inherited any of the library's fds;
 *   seals    the memfd behind a buffer is sealed: for heap "memfd" dmaio_buf_fd() is the memfd;
 *            for udmabuf it is found through /proc/self/fd ("/memfd:libdmaio", the buffer's name): F_GET_SEALS has
 *            F_SEAL_SHRINK | F_SEAL_GROW, ftruncate() smaller and larger and fallocate() past
 *            the end fail with EPERM, F_SEAL_WRITE cannot be added;
 *   files    the library creates no files of its own: the test dirs, /tmp, /var/tmp and the
 *            cwd are listed before and after a sequence of probes, allocations, reads, writes
 *            and frees (and, where fanotify works, every entry created in them during the
 *            sequence by this process is reported); the fds the library holds are memfds,
 *            dma-bufs, devices, rings or pipes, never files on a filesystem;
 *   suid     environment knobs are ignored in set-uid processes: as root, a copy of this program
 *            (the library is linked in statically) is made set-uid root on a filesystem that
 *            allows it and run by user nobody with DMAIO_PATH=sendfile DMAIO_DEBUG=1; the child
 *            (AT_SECURE) reads an aligned 4 MiB range, where auto picks another path: it must
 *            not use sendfile and the library must write nothing to stderr. A control run
 *            without set-uid must use sendfile and log. 77 when not root, with no_new_privs, or
 *            without a directory that honours set-uid.
 *
 * Each part is a cmocka test that reports every problem it finds (test_fail(), common.h) and fails
 * at its end when there was any. The --fdlist and --suid-child modes are the programs the parts
 * exec; they report on stdout.
 *
 * Usage: test-security [--heap NAME] [--part cloexec|seals|files|suid]
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <limits.h>
#include <poll.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <sys/fanotify.h>
#include <sys/mman.h>
#include <sys/sendfile.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "common.h"
#include "rel.h"

#define MAXFD 4096

static struct test_args args;
static const char *self_exe;

static const int paths[] = { DMAIO_PATH_RW_FILE,  DMAIO_PATH_UDMABUF_DIRECT,
			     DMAIO_PATH_BOUNCE_DIRECT, DMAIO_PATH_BUFFERED,
			     DMAIO_PATH_SENDFILE, DMAIO_PATH_AUTO };

static unsigned forced(int path)
{
	return path == DMAIO_PATH_AUTO ? 0 : DMAIO_RW_PATH(path) | DMAIO_RW_NO_FALLBACK;
}

static bool is_dev_heap(void)
{
	return args.heap_name && strcmp(args.heap_name, "memfd");
}

static void fd_link(int fd, char *target, size_t len)
{
	char link[64];
	ssize_t l;

	snprintf(link, sizeof(link), "/proc/self/fd/%d", fd);
	l = readlink(link, target, len - 1);
	target[l > 0 ? l : 0] = 0;
}

/* ---- (a) close-on-exec -------------------------------------------------------------------- */
/* Checked at every call of the library's syscall seam (-Wl,--wrap=dmaio_fault_hit). */
static struct {
	bool on;
	uint8_t before[MAXFD / 8];
	uint8_t seen[MAXFD / 8];   /* new fds seen at a seam call */
	unsigned checks, transient, bad;
} seam;

int __real_dmaio_fault_hit(void);
int __wrap_dmaio_fault_hit(void);

static void seam_check(void)
{
	DIR *d = opendir("/proc/self/fd");
	struct dirent *de;

	if (!d)
		return;
	seam.checks++;
	while ((de = readdir(d))) {
		int fd = atoi(de->d_name), fl;

		if (de->d_name[0] == '.' || fd == dirfd(d) || fd >= MAXFD)
			continue;
		if (seam.before[fd / 8] & (1u << (fd % 8)))
			continue;
		if (!(seam.seen[fd / 8] & (1u << (fd % 8)))) {
			seam.seen[fd / 8] |= (uint8_t)(1u << (fd % 8));
			seam.transient++;
		}
		fl = fcntl(fd, F_GETFD);
		if (fl >= 0 && !(fl & FD_CLOEXEC)) {
			char target[256];

			fd_link(fd, target, sizeof(target));
			seam.bad++;
			if (seam.bad <= 5)
				test_fail("cloexec: fd %d (%s), open at a call of the library's "
					  "syscall seam, is not close-on-exec", fd, target);
		}
	}
	closedir(d);
}

int __wrap_dmaio_fault_hit(void)
{
	int r = __real_dmaio_fault_hit();

	if (seam.on)
		seam_check();
	return r;
}

static uint8_t snap_before[MAXFD / 8];
static unsigned cloexec_checked;

static void check_new(const char *what)
{
	int bad, n = 0;

	bad = test_check_new_fds_cloexec(snap_before, MAXFD, what, &n);
	cloexec_checked += (unsigned)n;
	if (bad)
		test_fail("cloexec: %s: %d new fds are not close-on-exec", what, bad);
}

/* A child exec'd now: which fds does it have? ("--fdlist" mode prints them.) */
static void check_exec_inherit(void)
{
	char out[8192] = "";
	size_t used = 0;
	int pfd[2], st;
	pid_t pid;

	if (pipe2(pfd, O_CLOEXEC)) {
		test_fail("cloexec: pipe2: %s", strerror(errno));
		return;
	}
	fflush(NULL);
	pid = fork();
	if (pid == 0) {
		dup2(pfd[1], 1);
		execl(self_exe, self_exe, "--fdlist", (char *)NULL);
		_exit(127);
	}
	close(pfd[1]);
	for (;;) {
		ssize_t n = read(pfd[0], out + used, sizeof(out) - 1 - used);

		if (n <= 0)
			break;
		used += (size_t)n;
	}
	out[used] = 0;
	close(pfd[0]);
	if (pid < 0 || waitpid(pid, &st, 0) != pid || !WIFEXITED(st) || WEXITSTATUS(st)) {
		test_fail("cloexec: the exec'd child failed");
		return;
	}
	for (char *tok = strtok(out, " \n"); tok; tok = strtok(NULL, " \n")) {
		int fd = atoi(tok);

		if (fd < 0 || fd >= MAXFD || (snap_before[fd / 8] & (1u << (fd % 8))))
			continue;
		if (fd <= 2)
			continue;
		test_fail("cloexec: fd %d of the library was inherited by an exec'd program", fd);
	}
}

static int fdlist_main(void)
{
	DIR *d = opendir("/proc/self/fd");
	struct dirent *de;

	if (!d)
		return 1;
	while ((de = readdir(d)))
		if (de->d_name[0] != '.' && atoi(de->d_name) != dirfd(d))
			printf("%s ", de->d_name);
	printf("\n");
	closedir(d);
	return 0;
}

static void test_cloexec(void **state)
{
	struct dmaio_buf *bufs[4] = { NULL }, *imp = NULL;
	const char *heaps[3] = { "memfd", NULL, NULL };
	struct dmaio_sys_info si = { .struct_size = sizeof(struct dmaio_sys_info) };
	struct t_heap_info hi[8];
	struct dmaio_file_info fi = { .struct_size = sizeof(struct dmaio_file_info) };
	struct dmaio_ctx *ctx;
	int nb = 0, src, dst, nh = 1, r;
	const size_t len = 4 * MiB;
	unsigned io = 0, before = test_failures();

	(void)state;
	rel_set_label("part cloexec");
	src = test_tmpfile(NULL, NULL, 0);
	dst = test_tmpfile(NULL, NULL, 0);
	assert_int_equal(file_fill_pattern(src, 0, len + 8192, SEED_FILE), 0);
	if (is_dev_heap())
		heaps[nh++] = args.heap_name;
	test_fd_snapshot(snap_before, MAXFD);
	memcpy(seam.before, snap_before, sizeof(seam.before));
	seam.on = true;

	r = dmaio_ctx_new(0, &ctx);
	if (r) {
		seam.on = false;
		fail_msg("cloexec: dmaio_ctx_new = %s", test_errname(r));
	}
	dmaio_ctx_get_system(ctx, &si);
	dmaio_ctx_get_system(NULL, &si);
	t_probe_heaps(ctx, hi, ARRAY_SIZE(hi));
	dmaio_fd_get_info(src, &fi);
	check_new("probes");
	for (int i = 0; i < nh; i++) {
		r = test_alloc_or_skip(ctx, heaps[i], len + 8192, 0, &bufs[nb]);
		if (r) {
			test_fail("cloexec: dmaio_buf_alloc(%s) = %s", heaps[i], test_errname(r));
			continue;
		}
		nb++;
	}
	r = t_alloc(NULL, NULL, len + 8192, DMAIO_ALLOC_ALLOW_NON_DMABUF, &bufs[nb]);
	if (r)
		test_fail("cloexec: dmaio_buf_alloc(heap NULL) = %s", test_errname(r));
	else
		nb++;
	check_new("dmaio_buf_alloc");
	for (int i = 0; i < nb; i++) {
		void *p;

		if (dmaio_buf_map(bufs[i], &p))
			test_fail("cloexec: dmaio_buf_map(%s) failed", dmaio_buf_provider(bufs[i]));
	}
	check_new("dmaio_buf_map");
	for (int i = 0; i < nb; i++) {
		if (dmaio_buf_kind(bufs[i]) == DMAIO_BUF_MEMFD)
			continue;
		r = dmaio_buf_import(ctx, dmaio_buf_fd(bufs[i]), 0, &imp);
		if (r)
			test_fail("cloexec: dmaio_buf_import(%s) = %s", dmaio_buf_provider(bufs[i]),
				  test_errname(r));
		else
			check_new("dmaio_buf_import");
		break;
	}
	for (int i = 0; i < nb; i++) {
		for (size_t pi = 0; pi < ARRAY_SIZE(paths); pi++) {
			ssize_t n;

			n = dmaio_fd_read(src, 513, bufs[i], 4097, len - 4096, forced(paths[pi]), NULL);
			io++;
			if (n < 0 && n != -EOPNOTSUPP)
				test_fail("cloexec: read via %s into %s: %s",
					  dmaio_path_name(paths[pi]), dmaio_buf_provider(bufs[i]),
					  test_errname(n));
			n = dmaio_fd_read(src, 0, bufs[i], 0, len, forced(paths[pi]), NULL);
			n = dmaio_fd_write(dst, 0, bufs[i], 0, len, forced(paths[pi]), NULL);
			n = dmaio_fd_write(dst, 513, bufs[i], 4097, len - 4096, forced(paths[pi]), NULL);
			io += 3;
			if (n < 0 && n != -EOPNOTSUPP)
				test_fail("cloexec: write via %s from %s: %s",
					  dmaio_path_name(paths[pi]), dmaio_buf_provider(bufs[i]),
					  test_errname(n));
		}
	}
	check_new("reads and writes");
	seam.on = false;
	check_exec_inherit();
	dmaio_buf_free(imp);
	for (int i = 0; i < nb; i++)
		dmaio_buf_free(bufs[i]);
	dmaio_ctx_free(ctx);
	close(src);
	close(dst);
	test_cleanup();
	printf("# cloexec: %u fds checked after %d allocations, map, import, probes and %u "
	       "reads/writes; %u seam calls checked, %u fds seen only inside calls; exec'd child "
	       "inherited none\n", cloexec_checked, nb, io, seam.checks, seam.transient);
	assert_no_failures_since(before);
}

/* ---- (c) seals ---------------------------------------------------------------------------- */
static void check_seals(const char *what, int fd)
{
	struct stat st;
	int seals = fcntl(fd, F_GET_SEALS);

	if (seals < 0) {
		test_fail("seals: %s: F_GET_SEALS: %s", what, strerror(errno));
		return;
	}
	if ((seals & (F_SEAL_SHRINK | F_SEAL_GROW)) != (F_SEAL_SHRINK | F_SEAL_GROW))
		test_fail("seals: %s: seals 0x%x lack F_SEAL_SHRINK | F_SEAL_GROW", what, seals);
	if (fstat(fd, &st)) {
		test_fail("seals: %s: fstat: %s", what, strerror(errno));
		return;
	}
	errno = 0;
	if (ftruncate(fd, st.st_size - 4096) == 0 || errno != EPERM)
		test_fail("seals: %s: ftruncate smaller: %s (expected EPERM)", what,
			  errno ? strerror(errno) : "succeeded");
	errno = 0;
	if (ftruncate(fd, st.st_size + 4096) == 0 || errno != EPERM)
		test_fail("seals: %s: ftruncate larger: %s (expected EPERM)", what,
			  errno ? strerror(errno) : "succeeded");
	errno = 0;
	if (fallocate(fd, 0, st.st_size, 4096) == 0 || errno != EPERM)
		test_fail("seals: %s: fallocate past the end: %s (expected EPERM)", what,
			  errno ? strerror(errno) : "succeeded");
	errno = 0;
	if (fcntl(fd, F_ADD_SEALS, F_SEAL_WRITE) == 0 || errno != EPERM)
		test_fail("seals: %s: F_ADD_SEALS F_SEAL_WRITE: %s (expected EPERM)", what,
			  errno ? strerror(errno) : "succeeded");
	if (fstat(fd, &st) == 0 && (fcntl(fd, F_GET_SEALS) & F_SEAL_WRITE))
		test_fail("seals: %s: F_SEAL_WRITE got added", what);
}

/* The library's memfds that appeared since @before. */
static int find_lib_memfds(const uint8_t *before, int *out, int max)
{
	int n = 0;

	for (int fd = 0; fd < MAXFD && n < max; fd++) {
		char target[256];

		if (before[fd / 8] & (1u << (fd % 8)) || fcntl(fd, F_GETFD) < 0)
			continue;
		fd_link(fd, target, sizeof(target));
		if (!strncmp(target, "/memfd:libdmaio", 15))
			out[n++] = fd;
	}
	return n;
}

static void test_seals(void **state)
{
	const char *heaps[2] = { "memfd", NULL };
	unsigned checked = 0, fail0 = test_failures();
	int nh = 1;

	(void)state;
	rel_set_label("part seals");
	if (is_dev_heap())
		heaps[nh++] = args.heap_name;
	for (int i = 0; i < nh; i++) {
		uint8_t before[MAXFD / 8];
		struct dmaio_buf *b = NULL;
		int memfds[4], n, r;
		char what[96];

		test_fd_snapshot(before, MAXFD);
		r = test_alloc_or_skip(NULL, heaps[i], 1 * MiB + 1, 0, &b);
		if (r) {
			test_fail("seals: dmaio_buf_alloc(%s) = %s", heaps[i], test_errname(r));
			continue;
		}
		if (dmaio_buf_kind(b) == DMAIO_BUF_MEMFD) {
			snprintf(what, sizeof(what), "heap %s, dmaio_buf_fd()", heaps[i]);
			check_seals(what, dmaio_buf_fd(b));
			checked++;
		}
		n = find_lib_memfds(before, memfds, 4);
		if (dmaio_buf_kind(b) == DMAIO_BUF_UDMABUF || dmaio_buf_kind(b) == DMAIO_BUF_UDMABUF_HUGE) {
			if (n != 1)
				test_fail("seals: heap %s: %d new fds link to /memfd:libdmaio, "
					  "expected 1", heaps[i], n);
		}
		for (int k = 0; k < n; k++) {
			if (memfds[k] == dmaio_buf_fd(b))
				continue;
			snprintf(what, sizeof(what), "heap %s, the library's memfd (fd %d)", heaps[i],
				 memfds[k]);
			check_seals(what, memfds[k]);
			checked++;
		}
		if (!n && dmaio_buf_kind(b) != DMAIO_BUF_MEMFD)
			printf("# seals: heap %s has no memfd behind it (kind %d): nothing to seal\n",
			       heaps[i], dmaio_buf_kind(b));
		dmaio_buf_free(b);
	}
	printf("# seals: %u memfds checked (F_GET_SEALS, shrink, grow, fallocate, F_SEAL_WRITE)\n",
	       checked);
	assert_no_failures_since(fail0);
}

/* ---- (d) no files ------------------------------------------------------------------------- */
#define MAXDIRS 8
#define MAXNAMES 4096

struct listing {
	char dir[PATH_MAX];
	char **names;
	int n;
};

static int name_cmp(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

static void list_dir(struct listing *l)
{
	DIR *d = opendir(l->dir);
	struct dirent *de;

	l->n = 0;
	l->names = calloc(MAXNAMES, sizeof(char *));
	if (!d || !l->names) {
		if (d)
			closedir(d);
		return;
	}
	while ((de = readdir(d)) && l->n < MAXNAMES)
		if (strcmp(de->d_name, ".") && strcmp(de->d_name, ".."))
			l->names[l->n++] = strdup(de->d_name);
	closedir(d);
	qsort(l->names, (size_t)l->n, sizeof(char *), name_cmp);
}

static void free_listing(struct listing *l)
{
	for (int i = 0; i < l->n; i++)
		free(l->names[i]);
	free(l->names);
	l->names = NULL;
	l->n = 0;
}

/* fanotify: creations in the watched dirs, with the pid that made them */
static int fan_init(struct listing *dirs, int nd)
{
	int fan = fanotify_init(FAN_CLASS_NOTIF | FAN_REPORT_DFID_NAME | FAN_NONBLOCK, O_RDONLY);

	if (fan < 0)
		return -errno;
	for (int i = 0; i < nd; i++)
		if (fanotify_mark(fan, FAN_MARK_ADD, FAN_CREATE | FAN_MOVED_TO | FAN_ONDIR,
				  AT_FDCWD, dirs[i].dir)) {
			int err = -errno;

			close(fan);
			return err;
		}
	return fan;
}

/* Events of this process: counted and printed, names kept in @mine_names. */
static char mine_names[64][NAME_MAX + 1];
static unsigned nmine;

static unsigned fan_drain(int fan, unsigned *others)
{
	char buf[8192] __attribute__((aligned(8)));
	unsigned mine = 0;
	ssize_t n;

	while ((n = read(fan, buf, sizeof(buf))) > 0) {
		struct fanotify_event_metadata *m = (void *)buf;

		for (; FAN_EVENT_OK(m, n); m = FAN_EVENT_NEXT(m, n)) {
			const char *name = "?";
			char *p = (char *)m + m->metadata_len;

			if ((char *)m + m->event_len > p + (long)sizeof(struct fanotify_event_info_fid)) {
				struct fanotify_event_info_fid *fid = (void *)p;
				struct file_handle *fh = (void *)fid->handle;

				if (fid->hdr.info_type == FAN_EVENT_INFO_TYPE_DFID_NAME)
					name = (char *)fh->f_handle + fh->handle_bytes;
			}
			if (m->pid == getpid()) {
				mine++;
				if (nmine < 64)
					snprintf(mine_names[nmine++], sizeof(mine_names[0]), "%s",
						 name);
				test_fail("files: this process created \"%s\" (fanotify mask "
					  "0x%llx) during the library calls", name,
					  (unsigned long long)m->mask);
			} else {
				(*others)++;
			}
			if (m->fd >= 0)
				close(m->fd);
		}
	}
	return mine;
}

static void library_sequence(int src, int dst)
{
	struct dmaio_sys_info si = { .struct_size = sizeof(struct dmaio_sys_info) };
	struct t_heap_info hi[8];
	struct dmaio_file_info fi = { .struct_size = sizeof(struct dmaio_file_info) };
	struct dmaio_buf *b[3] = { NULL };
	struct dmaio_ctx *ctx = NULL;
	int nb = 0;

	dmaio_ctx_new(0, &ctx);
	dmaio_ctx_get_system(ctx, &si);
	t_probe_heaps(ctx, hi, ARRAY_SIZE(hi));
	dmaio_fd_get_info(src, &fi);
	if (!t_alloc(ctx, "memfd", 2 * MiB + 1, 0, &b[nb]))
		nb++;
	if (is_dev_heap() && !t_alloc(ctx, args.heap_name, 2 * MiB + 1, 0, &b[nb]))
		nb++;
	if (!t_alloc(NULL, NULL, 2 * MiB + 1, DMAIO_ALLOC_ALLOW_NON_DMABUF, &b[nb]))
		nb++;
	for (int i = 0; i < nb; i++) {
		void *p;

		dmaio_buf_map(b[i], &p);
		for (size_t pi = 0; pi < ARRAY_SIZE(paths); pi++) {
			dmaio_fd_read(src, 0, b[i], 0, 2 * MiB, forced(paths[pi]), NULL);
			dmaio_fd_read(src, 4095, b[i], 1, MiB, forced(paths[pi]), NULL);
			dmaio_fd_write(dst, 0, b[i], 0, 2 * MiB, forced(paths[pi]), NULL);
			dmaio_fd_write(dst, 4095, b[i], 1, MiB, forced(paths[pi]), NULL);
		}
	}
	/* what the library holds while its buffers are alive: no file of a filesystem */
	for (int fd = 3; fd < MAXFD; fd++) {
		char target[256];

		if (fd == src || fd == dst || fcntl(fd, F_GETFD) < 0 ||
		    (snap_before[fd / 8] & (1u << (fd % 8))))
			continue;
		fd_link(fd, target, sizeof(target));
		if (!strncmp(target, "/memfd:", 7) || !strncmp(target, "anon_inode:", 11) ||
		    !strncmp(target, "/dev/", 5) || !strncmp(target, "/dmabuf:", 8) ||
		    !strncmp(target, "dmabuf:", 7) || !strncmp(target, "pipe:", 5))
			continue;
		test_fail("files: the library holds fd %d on \"%s\"", fd, target);
	}
	for (int i = 0; i < nb; i++)
		dmaio_buf_free(b[i]);
	dmaio_ctx_free(ctx);
}

static void test_files(void **state)
{
	struct listing before[MAXDIRS], after[MAXDIRS];
	const char *cand[MAXDIRS + 4];
	int nd = 0, nc, src, dst, fan;
	unsigned others = 0, new_entries = 0, total_names = 0, fail0 = test_failures();
	char src_path[PATH_MAX], dst_path[PATH_MAX], cwd[PATH_MAX];

	(void)state;
	rel_set_label("part files");
	nc = test_dirs(cand, MAXDIRS);
	cand[nc++] = "/tmp";
	cand[nc++] = "/var/tmp";
	cand[nc++] = getcwd(cwd, sizeof(cwd)) ? cwd : ".";
	for (int i = 0; i < nc && nd < MAXDIRS; i++) {
		char rp[PATH_MAX];
		bool dup = false;

		if (!realpath(cand[i], rp))
			continue;
		for (int k = 0; k < nd; k++)
			dup |= !strcmp(before[k].dir, rp);
		if (dup)
			continue;
		snprintf(before[nd].dir, sizeof(before[nd].dir), "%s", rp);
		snprintf(after[nd].dir, sizeof(after[nd].dir), "%s", rp);
		nd++;
	}
	/* the test's own files exist before the first listing */
	src = test_tmpfile(NULL, src_path, sizeof(src_path));
	dst = test_tmpfile(NULL, dst_path, sizeof(dst_path));
	assert_int_equal(file_fill_pattern(src, 0, 2 * MiB + 8192, SEED_FILE), 0);
	test_fd_snapshot(snap_before, MAXFD);
	fan = fan_init(before, nd);
	if (fan < 0)
		printf("# files: fanotify unavailable (%s): listings only\n", test_errname(fan));
	for (int i = 0; i < nd; i++) {
		list_dir(&before[i]);
		total_names += (unsigned)before[i].n;
	}
	library_sequence(src, dst);
	if (fan >= 0) {
		fan_drain(fan, &others);
		close(fan);
	}
	for (int i = 0; i < nd; i++) {
		list_dir(&after[i]);
		for (int k = 0; k < after[i].n; k++) {
			const char *nm = after[i].names[k];

			if (bsearch(&nm, before[i].names, (size_t)before[i].n, sizeof(char *),
				    name_cmp))
				continue;
			/* other tests of this suite run in parallel: their temp files */
			if (!strncmp(nm, "dmaio-test-", 11) || !strncmp(nm, "dmaio-suid-", 11))
				continue;
			new_entries++;
			for (unsigned k2 = 0; k2 < nmine; k2++)
				if (!strcmp(mine_names[k2], nm))
					nm = NULL;
			if (!nm)
				continue; /* reported from the fanotify event */
			if (fan >= 0)
				printf("# files: new entry %s/%s (not made by this process: fanotify "
				       "saw no creation by it)\n", after[i].dir, after[i].names[k]);
			else
				test_fail("files: new entry %s/%s after the library calls",
					  after[i].dir, nm);
		}
	}
	for (int i = 0; i < nd; i++) {
		free_listing(&before[i]);
		free_listing(&after[i]);
	}
	close(src);
	close(dst);
	test_cleanup();
	printf("# files: %d directories (%u entries) listed before and after; %u new entries; "
	       "fanotify %s (%u creations by other processes ignored)\n", nd, total_names,
	       new_entries, fan >= 0 ? "watched them" : "not used", others);
	assert_no_failures_since(fail0);
}

/* ---- (b) set-uid -------------------------------------------------------------------------- */
#define SUID_LEN (4 * MiB)

/* The set-uid child (and the control): "--suid-child FILE secure|plain". Reports on stdout;
 * writes nothing to stderr itself. */
static int suid_child_main(const char *file, const char *mode)
{
	bool want_secure = !strcmp(mode, "secure");
	unsigned long secure = getauxval(AT_SECURE);
	struct dmaio_buf *b = NULL;
	struct dmaio_xfer x = { .struct_size = sizeof(struct dmaio_xfer) };
	char why[200] = "";
	uint8_t *p;
	ssize_t n;
	int fd, r, choice;

	printf("secure=%lu uid=%d euid=%d\n", secure, (int)getuid(), (int)geteuid());
	if ((secure == 1) != want_secure) {
		printf("RESULT wrong-mode\n");
		return 3;
	}
	fd = open(file, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		printf("RESULT open %s\n", strerror(errno));
		return 4;
	}
	r = t_alloc(NULL, "memfd", SUID_LEN + 4096, 0, &b);
	if (r) {
		printf("RESULT alloc %d\n", r);
		return 5;
	}
	choice = t_choose_path(b, 0, fd, 0, SUID_LEN, 0, 0, why, sizeof(why));
	n = dmaio_fd_read(fd, 0, b, 0, SUID_LEN, 0, &x);
	if (n != (ssize_t)SUID_LEN) {
		printf("RESULT read %zd\n", n);
		return 6;
	}
	if (dmaio_buf_map(b, (void **)&p) || pat_check(p, SUID_LEN, SEED_FILE, 0) >= 0) {
		printf("RESULT data\n");
		return 7;
	}
	printf("choose=%s (%s)\n", dmaio_path_name(choice), why);
	printf("RESULT path=%s\n", dmaio_path_name(x.path));
	dmaio_buf_free(b);
	close(fd);
	return 0;
}

static int copy_file(const char *from, const char *to)
{
	struct stat st;
	int in = open(from, O_RDONLY | O_CLOEXEC), out;
	off_t off = 0;

	if (in < 0 || fstat(in, &st))
		return -1;
	out = open(to, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0700);
	if (out < 0) {
		close(in);
		return -1;
	}
	while (off < st.st_size)
		if (sendfile(out, in, &off, (size_t)(st.st_size - off)) <= 0)
			break;
	close(in);
	if (off != st.st_size || fchown(out, 0, 0) || fchmod(out, 04755)) {
		close(out);
		return -1;
	}
	return close(out);
}

/* Run @prog in a child (dropped to nobody when @drop); its stdout and stderr are collected. */
static int run_child(const char *prog, const char *file, bool drop, char *out, size_t out_len,
		     char *err, size_t err_len)
{
	char *const env[] = { "DMAIO_PATH=sendfile", "DMAIO_DEBUG=1", "PATH=/usr/bin:/bin", NULL };
	int po[2], pe[2], st = 0;
	size_t no = 0, ne = 0;
	pid_t pid;

	if (pipe2(po, O_CLOEXEC) || pipe2(pe, O_CLOEXEC))
		return -1;
	fflush(NULL);
	pid = fork();
	if (pid == 0) {
		dup2(po[1], 1);
		dup2(pe[1], 2);
		if (drop && (setgroups(0, NULL) || setresgid(65534, 65534, 65534) ||
			     setresuid(65534, 65534, 65534)))
			_exit(120);
		execle(prog, prog, "--suid-child", file, drop ? "secure" : "plain", (char *)NULL,
		       env);
		_exit(127);
	}
	close(po[1]);
	close(pe[1]);
	for (;;) {
		struct pollfd pf[2] = { { po[0], POLLIN, 0 }, { pe[0], POLLIN, 0 } };
		int open_fds = 0;

		for (int i = 0; i < 2; i++)
			open_fds += pf[i].fd >= 0;
		if (!open_fds || poll(pf, 2, 30000) <= 0)
			break;
		if (pf[0].revents) {
			ssize_t n = read(po[0], out + no, out_len - 1 - no);

			if (n <= 0) {
				close(po[0]);
				po[0] = -1;
			} else {
				no += (size_t)n;
			}
		}
		if (pf[1].revents) {
			char sink[4096];
			ssize_t n = read(pe[0], ne < err_len - 1 ? err + ne : sink,
					 ne < err_len - 1 ? err_len - 1 - ne : sizeof(sink));

			if (n <= 0) {
				close(pe[0]);
				pe[0] = -1;
			} else if (ne < err_len - 1) {
				ne += (size_t)n;
			}
		}
		if (po[0] < 0 && pe[0] < 0)
			break;
	}
	if (po[0] >= 0)
		close(po[0]);
	if (pe[0] >= 0)
		close(pe[0]);
	out[no] = 0;
	err[ne] = 0;
	if (pid < 0 || waitpid(pid, &st, 0) != pid)
		return -1;
	return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

static bool no_new_privs(void)
{
	char line[128];
	int v = 0;
	FILE *f = fopen("/proc/self/status", "re");

	if (!f)
		return false;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "NoNewPrivs: %d", &v) == 1)
			break;
	fclose(f);
	return v != 0;
}

/* The set-uid test's directory (made by suid_skip_reason() before the test runs; removed by its
 * teardown). */
static char suid_dir_path[PATH_MAX];

/* 77 reasons of the suid part, checked before its test runs: NULL when it can run. */
static const char *suid_skip_reason(void)
{
	const char *cand[MAXDIRS + 2];
	int nc;

	if (geteuid() != 0)
		return "not root (a set-uid root copy of the test is needed)";
	if (no_new_privs())
		return "no_new_privs is set: set-uid bits are not honoured";
	nc = test_dirs(cand, MAXDIRS);
	cand[nc++] = "/tmp";
	cand[nc++] = "/var/tmp";
	for (int i = 0; i < nc; i++) {
		struct statvfs sv;
		struct stat st;
		char d[PATH_MAX];

		/* set-uid allowed, and user nobody can reach it */
		if (statvfs(cand[i], &sv) || (sv.f_flag & ST_NOSUID) || stat(cand[i], &st) ||
		    !(st.st_mode & S_IXOTH))
			continue;
		snprintf(d, sizeof(d), "%s/dmaio-suid-XXXXXX", cand[i]);
		if (!mkdtemp(d))
			continue;
		if (chmod(d, 0755)) {
			rmdir(d);
			continue;
		}
		snprintf(suid_dir_path, sizeof(suid_dir_path), "%s", d);
		return NULL;
	}
	return "no directory on a filesystem that honours set-uid (tried the test dirs, /tmp, "
	       "/var/tmp)";
}

static char suid_prog[PATH_MAX + 32], suid_data[PATH_MAX + 32];

static int suid_teardown(void **state)
{
	(void)state;
	unlink(suid_prog);
	unlink(suid_data);
	rmdir(suid_dir_path);
	return 0;
}

static void test_suid(void **state)
{
	const char *dir = suid_dir_path;
	char out[4096], err[16384];
	unsigned before = test_failures();
	int rc, fd;

	(void)state;
	rel_set_label("part suid");
	snprintf(suid_prog, sizeof(suid_prog), "%s/test-security", dir);
	snprintf(suid_data, sizeof(suid_data), "%s/data", dir);
	fd = open(suid_data, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
	rc = fd < 0 ? -1 : file_fill_pattern(fd, 0, SUID_LEN + 4096, SEED_FILE);
	if (fd >= 0)
		close(fd);
	if (rc || copy_file(self_exe, suid_prog))
		fail_msg("suid: cannot prepare %s: %s", dir, strerror(errno));

	/* control: not set-uid, the knobs are obeyed */
	rc = run_child(suid_prog, suid_data, false, out, sizeof(out), err, sizeof(err));
	printf("# suid: control run (root, not secure): exit %d, %s", rc, strstr(out, "RESULT") ?
	       strstr(out, "RESULT") : "no result\n");
	if (rc != 0 || !strstr(out, "RESULT path=sendfile"))
		test_fail("suid: control run without set-uid did not obey DMAIO_PATH=sendfile "
			  "(exit %d): %s%s", rc, out, err);
	if (!strstr(err, "dmaio:"))
		test_fail("suid: control run without set-uid did not log with DMAIO_DEBUG=1");

	/* set-uid root, run by nobody */
	rc = run_child(suid_prog, suid_data, true, out, sizeof(out), err, sizeof(err));
	printf("# suid: set-uid run (nobody -> root, AT_SECURE): exit %d, %s", rc,
	       strstr(out, "RESULT") ? strstr(out, "RESULT") : "no result\n");
	if (rc == 3) {
		printf("SKIP: suid: the set-uid copy did not run with AT_SECURE (%s)\n", out);
		suid_teardown(NULL);
		exit(TEST_SKIP);
	}
	if (rc != 0)
		test_fail("suid: the set-uid child failed (exit %d): %s", rc, out);
	else if (strstr(out, "RESULT path=sendfile"))
		test_fail("suid: the set-uid child used sendfile: DMAIO_PATH was obeyed in a "
			  "set-uid process");
	if (err[0])
		test_fail("suid: the set-uid child wrote to stderr (DMAIO_DEBUG obeyed?): %.400s",
			  err);
	assert_no_failures_since(before);
}

/* ---- main --------------------------------------------------------------------------------- */
int main(int argc, char **argv)
{
	const struct CMUnitTest all[] = {
		cmocka_unit_test(test_cloexec),
		cmocka_unit_test(test_seals),
		cmocka_unit_test(test_files),
	};
	const struct CMUnitTest suid[] = {
		cmocka_unit_test_teardown(test_suid, suid_teardown),
	};
	struct CMUnitTest one[1];
	char *kept[argc + 1];
	const char *part = NULL;
	char exe[PATH_MAX];
	ssize_t l;
	int nkept = 0, rc;

	if (argc >= 2 && !strcmp(argv[1], "--fdlist"))
		return fdlist_main();
	if (argc >= 4 && !strcmp(argv[1], "--suid-child"))
		return suid_child_main(argv[2], argv[3]);
	for (int i = 0; i < argc; i++) {
		if (!strcmp(argv[i], "--part") && i + 1 < argc)
			part = argv[++i];
		else
			kept[nkept++] = argv[i];
	}
	kept[nkept] = NULL;
	test_parse_args(nkept, kept, &args, "memfd");
	setvbuf(stdout, NULL, _IOLBF, 0);
	rel_install_crash_label();
	l = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	if (l <= 0) {
		fprintf(stderr, "cannot find this program\n");
		return 1;
	}
	exe[l] = 0;
	self_exe = exe;
	rel_watchdog(110);
	if (part && !strcmp(part, "suid")) {
		const char *why = suid_skip_reason();

		if (why) {
			printf("SKIP: suid: %s\n", why);
			return TEST_SKIP;
		}
		rc = cmocka_run_group_tests_name("security suid", suid, NULL, NULL);
	} else if (part) {
		size_t i;

		for (i = 0; i < ARRAY_SIZE(all); i++)
			if (!strcmp(all[i].name + strlen("test_"), part))
				break;
		if (i == ARRAY_SIZE(all)) {
			fprintf(stderr, "--part cloexec|seals|files|suid\n");
			return 2;
		}
		one[0] = all[i];
		rc = _cmocka_run_group_tests("security", one, 1, NULL, NULL);
	} else {
		rc = cmocka_run_group_tests_name("security", all, NULL, NULL);
	}
	rel_watchdog(0);
	return rc ? 1 : 0;
}
