/* SPDX-License-Identifier: MIT */
/*
 * libdmaio-account: a snapshot's buffers, holders and per-process totals equal, exactly, what
 * the test made: named buffers of the system heap, the CMA heap and udmabuf held by several
 * processes, shared through fork() and SCM_RIGHTS, mapped twice with the descriptor closed,
 * held twice through dup(). Then: an unprivileged caller sees its own processes and says what
 * it cannot see; processes that churn descriptors, mappings and children while snapshots run
 * get no wrong attribution and leak nothing; a pid namespace sees itself with its own pids.
 * With BPF: both sources agree; a buffer held only by a driver (imported into DRM, or queued
 * to vivid as V4L2_MEMORY_DMABUF) with its descriptor closed is held by the kernel, then gone.
 * Suite needs-dmaheap (system heap and udmabuf; the CMA part where a CMA heap exists).
 */
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <inttypes.h>
#include <linux/dma-buf.h>
#include <linux/udmabuf.h>
#include <linux/videodev2.h>
#include <sched.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "common.h"
#include "dmaio-account.h"

#ifdef TEST_HAVE_DRM
#include <drm.h>
#endif
#include <sys/utsname.h>


static struct test_args args;

/* ---- helpers ---- */

static uint64_t ino_of(int fd)
{
	struct stat st;

	return fstat(fd, &st) ? 0 : (uint64_t)st.st_ino;
}

/* a named buffer of a heap: fd, or the test skips/fails when the heap is missing */
static int heap_buf(const char *heap, uint64_t size, const char *name)
{
	int fd = test_heap_alloc_fd(heap, size);

	if (fd < 0)
		return fd;
	if (ioctl(fd, DMA_BUF_SET_NAME_B, name)) {
		close(fd);
		return -errno;
	}
	return fd;
}

static int udmabuf_buf(uint64_t size, const char *name)
{
	struct udmabuf_create c = { .flags = UDMABUF_FLAGS_CLOEXEC, .size = size };
	int dev, mfd, fd;

	mfd = memfd_create("acct-udmabuf", MFD_ALLOW_SEALING | MFD_CLOEXEC);
	if (mfd < 0 || ftruncate(mfd, (off_t)size) || fcntl(mfd, F_ADD_SEALS, F_SEAL_SHRINK))
		return -errno;
	dev = open("/dev/udmabuf", O_RDWR | O_CLOEXEC);
	if (dev < 0) {
		close(mfd);
		return -errno;
	}
	c.memfd = (uint32_t)mfd;
	fd = ioctl(dev, UDMABUF_CREATE, &c);
	fd = fd < 0 ? -errno : fd;
	close(dev);
	close(mfd);
	if (fd >= 0 && ioctl(fd, DMA_BUF_SET_NAME_B, name)) {
		close(fd);
		return -errno;
	}
	return fd;
}

static void need(int fd_or_err, const char *what)
{
	if (fd_or_err >= 0)
		return;
	if (fd_or_err == -ENOENT || fd_or_err == -ENODEV || fd_or_err == -ENOTTY)
		test_no_device("%s: %s", what, strerror(-fd_or_err));
	fail_msg("%s: %s", what, strerror(-fd_or_err));
}

static int send_fd(int sock, int fd)
{
	char c = 'f', ctl[CMSG_SPACE(sizeof(int))] = { 0 };
	struct iovec iov = { &c, 1 };
	struct msghdr m = { .msg_iov = &iov, .msg_iovlen = 1, .msg_control = ctl,
			    .msg_controllen = sizeof(ctl) };
	struct cmsghdr *h = CMSG_FIRSTHDR(&m);

	h->cmsg_level = SOL_SOCKET;
	h->cmsg_type = SCM_RIGHTS;
	h->cmsg_len = CMSG_LEN(sizeof(int));
	memcpy(CMSG_DATA(h), &fd, sizeof(int));
	return sendmsg(sock, &m, 0) == 1 ? 0 : -errno;
}

static int recv_fd(int sock)
{
	char c, ctl[CMSG_SPACE(sizeof(int))];
	struct iovec iov = { &c, 1 };
	struct msghdr m = { .msg_iov = &iov, .msg_iovlen = 1, .msg_control = ctl,
			    .msg_controllen = sizeof(ctl) };
	struct cmsghdr *h;
	int fd;

	if (recvmsg(sock, &m, MSG_CMSG_CLOEXEC) != 1)
		return -errno;
	h = CMSG_FIRSTHDR(&m);
	if (!h || h->cmsg_type != SCM_RIGHTS)
		return -EPROTO;
	memcpy(&fd, CMSG_DATA(h), sizeof(int));
	return fd;
}

/* A child that holds what its function set up, reports 64-bit values, and lives until the
 * parent closes its "go" pipe. Later children inherit earlier children's pipe ends, so they
 * are stopped in reverse order. */
struct kid {
	pid_t pid;
	int rep, go;
};

static void kid_start(struct kid *k, void (*fn)(int rep, void *arg), void *arg)
{
	int rp[2], gp[2];
	char c;

	assert_int_equal(pipe2(rp, O_CLOEXEC), 0);
	assert_int_equal(pipe2(gp, O_CLOEXEC), 0);
	k->pid = fork();
	assert_true(k->pid >= 0);
	if (!k->pid) {
		close(rp[0]);
		close(gp[1]);
		fn(rp[1], arg);
		while (read(gp[0], &c, 1) < 0 && errno == EINTR)
			;
		_exit(0);
	}
	close(rp[1]);
	close(gp[0]);
	k->rep = rp[0];
	k->go = gp[1];
}

static void kid_report(int rep, uint64_t v)
{
	if (write(rep, &v, sizeof(v)) != sizeof(v))
		_exit(3);
}

/* a child that cannot set up reports 0 and exits 1 */
static void kid_fail(int rep, const char *what, int err)
{
	fprintf(stderr, "child %d: %s: %s\n", (int)getpid(), what, strerror(err < 0 ? -err : err));
	kid_report(rep, 0);
	_exit(1);
}

static uint64_t kid_read(struct kid *k)
{
	uint64_t v = 0;
	ssize_t n;

	do
		n = read(k->rep, &v, sizeof(v));
	while (n < 0 && errno == EINTR);
	if (n != sizeof(v) || !v)
		fail_msg("child %d did not set up (see its message)", (int)k->pid);
	return v;
}

static void kid_stop(struct kid *k)
{
	int st = 0;

	close(k->go);
	assert_int_equal(waitpid(k->pid, &st, 0), k->pid);
	close(k->rep);
	if (!WIFEXITED(st) || WEXITSTATUS(st))
		fail_msg("child %d ended with status 0x%x", (int)k->pid, st);
}

/* ---- what the test made, and the check of a snapshot against it ---- */

struct want_holder {
	pid_t pid;
	uint32_t fds, maps;
	uint64_t mapped;
};

struct want {
	const char *what;
	uint64_t ino, size;
	const char *exporter, *name;
	bool partial_ok;           /* known only by mappings without sysfs statistics */
	struct want_holder h[3];
	int nh;
};

static bool sysfs_stats(uint64_t ino)
{
	char p[96];

	snprintf(p, sizeof(p), "/sys/kernel/dmabuf/buffers/%llu/exporter_name",
		 (unsigned long long)ino);
	return access(p, F_OK) == 0;
}

static void check_buffer(struct dmaio_snapshot *s, const struct want *w)
{
	struct dmaio_snapshot_buffer b = { .struct_size = sizeof(b) };
	int i = dmaio_snapshot_find_buffer(s, w->ino);

	if (i < 0)
		fail_msg("%s (inode %llu): not in the snapshot", w->what, (unsigned long long)w->ino);
	assert_int_equal(dmaio_snapshot_get_buffer(s, (uint32_t)i, &b), 0);
	assert_int_equal(b.inode, w->ino);
	if (b.size != w->size)
		fail_msg("%s: size %llu, want %llu", w->what, (unsigned long long)b.size,
			 (unsigned long long)w->size);
	if (w->partial_ok && (b.flags & DMAIO_SNAPSHOT_BUF_PARTIAL))
		assert_string_equal(b.exporter, "");
	else
		assert_string_equal(b.exporter, w->exporter);
	assert_false(b.flags & DMAIO_SNAPSHOT_BUF_KERNEL);
	if (!w->partial_ok)
		assert_false(b.flags & DMAIO_SNAPSHOT_BUF_PARTIAL);
	assert_string_equal(b.name, w->name);
	if ((int)b.nprocesses != w->nh)
		fail_msg("%s: %u holders, want %d", w->what, b.nprocesses, w->nh);
	for (int k = 0; k < w->nh; k++) {
		struct dmaio_snapshot_holder h = { .struct_size = sizeof(h) };
		struct dmaio_snapshot_process p = { .struct_size = sizeof(p) };

		assert_int_equal(dmaio_snapshot_get_holder(s, b.first_holder + (uint32_t)k, &h), 0);
		assert_int_equal(h.buffer, (uint32_t)i);
		if (h.pid != w->h[k].pid || h.fds != w->h[k].fds || h.maps != w->h[k].maps ||
		    h.mapped_bytes != w->h[k].mapped)
			fail_msg("%s holder %d: pid %d fds %u maps %u mapped %llu, want pid %d fds %u "
				 "maps %u mapped %llu", w->what, k, h.pid, h.fds, h.maps,
				 (unsigned long long)h.mapped_bytes, (int)w->h[k].pid, w->h[k].fds,
				 w->h[k].maps, (unsigned long long)w->h[k].mapped);
		assert_int_equal(dmaio_snapshot_get_process(s, h.process, &p), 0);
		assert_int_equal(p.pid, h.pid);
	}
}

/* every process of @pids holds exactly the wanted buffers, with the totals they make */
static void check_processes(struct dmaio_snapshot *s, const struct want *w, int nw,
			    const pid_t *pids, int npids)
{
	struct dmaio_snapshot_info in = { .struct_size = sizeof(in) };

	assert_int_equal(dmaio_snapshot_get_info(s, &in), 0);
	for (int k = 0; k < npids; k++) {
		uint64_t bytes = 0, priv = 0, shared = 0, pss = 0;
		uint32_t n = 0;
		bool found = false;

		for (int i = 0; i < nw; i++)
			for (int j = 0; j < w[i].nh; j++) {
				if (w[i].h[j].pid != pids[k])
					continue;
				n++;
				bytes += w[i].size;
				*(w[i].nh > 1 ? &shared : &priv) += w[i].size;
				pss += w[i].size / (uint64_t)w[i].nh;
			}
		for (uint32_t i = 0; i < in.nprocesses; i++) {
			struct dmaio_snapshot_process p = { .struct_size = sizeof(p) };

			assert_int_equal(dmaio_snapshot_get_process(s, i, &p), 0);
			if (p.pid != pids[k])
				continue;
			found = true;
			if (p.nbuffers != n || p.bytes != bytes || p.private_bytes != priv ||
			    p.shared_bytes != shared || p.pss_bytes != pss)
				fail_msg("pid %d: %u buffers, %llu bytes (private %llu, shared %llu, "
					 "pss %llu); want %u, %llu (%llu, %llu, %llu)", (int)p.pid,
					 p.nbuffers, (unsigned long long)p.bytes,
					 (unsigned long long)p.private_bytes,
					 (unsigned long long)p.shared_bytes,
					 (unsigned long long)p.pss_bytes, n, (unsigned long long)bytes,
					 (unsigned long long)priv, (unsigned long long)shared,
					 (unsigned long long)pss);
			assert_true(p.comm[0] != 0);
		}
		if (!found && n)
			fail_msg("pid %d: not in the snapshot", (int)pids[k]);
	}
}

static struct dmaio_snapshot *take(uint32_t source, int32_t pid, struct dmaio_reason *why)
{
	struct dmaio_snapshot_opts o = { .struct_size = sizeof(o), .source = source, .pid = pid };
	struct dmaio_snapshot *s = NULL;
	int r = dmaio_snapshot_new(&o, &s, why);

	if (r)
		fail_msg("dmaio_snapshot_new(source %u, pid %d): %s: %s", source, (int)pid,
			 strerror(-r), why ? why->text : "");
	return s;
}

/* ---- exact: several processes, every way of holding ---- */

struct exact {
	int fd_a, sock[2];
};

/* C1: inherits A, receives B from C2 */
static void kid1(int rep, void *arg)
{
	struct exact *e = arg;
	int b;

	close(e->sock[1]);
	b = recv_fd(e->sock[0]);
	if (b < 0)
		kid_fail(rep, "recv B", b);
	kid_report(rep, ino_of(b));
}

/* C2: makes B (kept, mapped once, sent to C1) and M (mapped twice, descriptor closed) */
static void kid2(int rep, void *arg)
{
	struct exact *e = arg;
	int b, m, r;
	uint64_t ino_m;

	close(e->fd_a);
	close(e->sock[0]);
	b = heap_buf("system", 2 * MiB, "acct-B");
	if (b < 0)
		kid_fail(rep, "alloc B", b);
	if (mmap(NULL, 2 * MiB, PROT_READ | PROT_WRITE, MAP_SHARED, b, 0) == MAP_FAILED)
		kid_fail(rep, "map B", errno);
	r = send_fd(e->sock[1], b);
	if (r)
		kid_fail(rep, "send B", r);
	m = heap_buf("system", 3 * MiB, "acct-M");
	if (m < 0)
		kid_fail(rep, "alloc M", m);
	if (mmap(NULL, 3 * MiB, PROT_READ, MAP_SHARED, m, 0) == MAP_FAILED ||
	    mmap(NULL, 1 * MiB, PROT_READ | PROT_WRITE, MAP_SHARED, m, 0) == MAP_FAILED)
		kid_fail(rep, "map M", errno);
	ino_m = ino_of(m);
	close(m);
	kid_report(rep, ino_of(b));
	kid_report(rep, ino_m);
}

/* C3: a udmabuf held through two descriptors */
static void kid3(int rep, void *arg)
{
	struct exact *e = arg;
	int u;

	close(e->fd_a);
	close(e->sock[0]);
	close(e->sock[1]);
	u = udmabuf_buf(4 * MiB, "acct-U");
	if (u < 0)
		kid_fail(rep, "udmabuf", u);
	if (fcntl(u, F_DUPFD_CLOEXEC, 0) < 0)
		kid_fail(rep, "dup", errno);
	kid_report(rep, ino_of(u));
}

static void test_exact(void **state)
{
	struct exact e;
	struct kid k1, k2, k3;
	struct want w[5];
	const char *cma = test_cma_heap();
	uint64_t ino_a, ino_b, ino_m, ino_u, ino_k = 0;
	int fd_k = -1, nw = 0;
	pid_t me = getpid();
	struct dmaio_reason why = { .struct_size = sizeof(why) };
	(void)state;

	need(e.fd_a = heap_buf("system", 1 * MiB, "acct-A"), "system heap");
	int probe = udmabuf_buf(4096, "probe");

	need(probe, "udmabuf");
	close(probe);
	assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, e.sock), 0);
	ino_a = ino_of(e.fd_a);
	kid_start(&k1, kid1, &e);
	kid_start(&k2, kid2, &e);
	kid_start(&k3, kid3, &e);
	close(e.sock[0]);
	close(e.sock[1]);
	if (cma) {
		need(fd_k = heap_buf(cma, 1 * MiB, "acct-K"), "CMA heap");
		ino_k = ino_of(fd_k);
	} else if (test_expect_device("cma")) {
		fail_msg("no CMA heap where one is expected");
	}
	assert_int_equal(kid_read(&k1), ino_b = kid_read(&k2));
	ino_m = kid_read(&k2);
	ino_u = kid_read(&k3);
	assert_true(ino_a != ino_b && ino_b != ino_m && ino_m != ino_u);

	pid_t lo = me < k1.pid ? me : k1.pid, hi = me < k1.pid ? k1.pid : me;

	w[nw++] = (struct want){ "A (system, fork)", ino_a, 1 * MiB, "system", "acct-A", false,
				 { { lo, 1, 0, 0 }, { hi, 1, 0, 0 } }, 2 };
	lo = k1.pid < k2.pid ? k1.pid : k2.pid;
	w[nw] = (struct want){ "B (system, SCM_RIGHTS, mapped)", ino_b, 2 * MiB, "system",
			       "acct-B", false, { { 0 } }, 2 };
	w[nw].h[k1.pid == lo ? 0 : 1] = (struct want_holder){ k1.pid, 1, 0, 0 };
	w[nw].h[k1.pid == lo ? 1 : 0] = (struct want_holder){ k2.pid, 1, 1, 2 * MiB };
	nw++;
	w[nw++] = (struct want){ "M (system, mapped twice, fd closed)", ino_m, 3 * MiB, "system",
				 "acct-M", !sysfs_stats(ino_m), { { k2.pid, 0, 2, 4 * MiB } }, 1 };
	w[nw++] = (struct want){ "U (udmabuf, two fds)", ino_u, 4 * MiB, "udmabuf", "acct-U",
				 false, { { k3.pid, 2, 0, 0 } }, 1 };
	if (cma)
		w[nw++] = (struct want){ "K (CMA)", ino_k, 1 * MiB, cma, "acct-K", false,
					 { { me, 1, 0, 0 } }, 1 };

	/* every process */
	struct dmaio_snapshot *s = take(DMAIO_SNAPSHOT_PROC, 0, &why);
	struct dmaio_snapshot_info in = { .struct_size = sizeof(in) };
	pid_t pids[] = { me, k1.pid, k2.pid, k3.pid };

	assert_int_equal(dmaio_snapshot_get_info(s, &in), 0);
	assert_int_equal(in.source, DMAIO_SNAPSHOT_PROC);
	assert_true(in.scanned >= 4);
	assert_int_equal(in.hidden, 0); /* root */
	for (int i = 0; i < nw; i++)
		check_buffer(s, &w[i]);
	check_processes(s, w, nw, pids, 4);
	/* holders are sorted by buffer, then pid, and cover each buffer's range */
	for (uint32_t i = 0; i + 1 < in.nholders; i++) {
		struct dmaio_snapshot_holder a = { .struct_size = sizeof(a) },
					     b = { .struct_size = sizeof(b) };

		dmaio_snapshot_get_holder(s, i, &a);
		dmaio_snapshot_get_holder(s, i + 1, &b);
		assert_true(a.buffer < b.buffer || (a.buffer == b.buffer && a.pid < b.pid));
	}
	dmaio_snapshot_free(s);

	/* one process: C2's buffers only, with C2 as their only listed holder */
	s = take(DMAIO_SNAPSHOT_PROC, k2.pid, NULL);
	assert_int_equal(dmaio_snapshot_get_info(s, &in), 0);
	assert_int_equal(in.nbuffers, 2);
	assert_int_equal(in.nprocesses, 1);
	assert_true(dmaio_snapshot_find_buffer(s, ino_b) >= 0);
	assert_true(dmaio_snapshot_find_buffer(s, ino_m) >= 0);
	assert_int_equal(dmaio_snapshot_find_buffer(s, ino_a), -ENOENT);
	dmaio_snapshot_free(s);

	/* the automatic source gives the same holdings */
	s = take(DMAIO_SNAPSHOT_AUTO, 0, NULL);
	for (int i = 0; i < nw; i++)
		check_buffer(s, &w[i]);
	check_processes(s, w, nw, pids, 4);
	dmaio_snapshot_free(s);

	kid_stop(&k3);
	kid_stop(&k2);
	kid_stop(&k1);
	if (fd_k >= 0)
		close(fd_k);
	close(e.fd_a);
}

/* ---- unprivileged: its own processes, and a statement of what it cannot see ---- */

static void test_unprivileged(void **state)
{
	int fd = heap_buf("system", 64 * 1024, "acct-X"), st;
	pid_t pid;
	(void)state;

	need(fd, "system heap");
	pid = fork();
	assert_true(pid >= 0);
	if (!pid) {
		struct dmaio_reason why = { .struct_size = sizeof(why) };
		struct dmaio_snapshot_info in = { .struct_size = sizeof(in) };
		struct dmaio_snapshot_opts o = { .struct_size = sizeof(o),
						 .source = DMAIO_SNAPSHOT_PROC };
		struct dmaio_snapshot *s;
		int bad = 0, i;

		if (setgroups(0, NULL) || setgid(65534) || setuid(65534) ||
		    prctl(PR_SET_DUMPABLE, 1, 0, 0, 0))
			_exit(10);
		if (dmaio_snapshot_new(&o, &s, &why))
			_exit(11);
		dmaio_snapshot_get_info(s, &in);
		if (!in.hidden || !(in.flags & DMAIO_SNAPSHOT_PARTIAL_PROCS) ||
		    !strstr(why.text, "CAP_SYS_PTRACE"))
			bad |= 1;
		i = dmaio_snapshot_find_buffer(s, ino_of(fd));
		if (i < 0) {
			bad |= 2;
		} else {
			struct dmaio_snapshot_buffer b = { .struct_size = sizeof(b) };
			struct dmaio_snapshot_holder h = { .struct_size = sizeof(h) };

			dmaio_snapshot_get_buffer(s, (uint32_t)i, &b);
			dmaio_snapshot_get_holder(s, b.first_holder, &h);
			/* the parent (root) is not visible: this process is the only holder */
			if (b.size != 64 * 1024 || strcmp(b.exporter, "system") ||
			    strcmp(b.name, "acct-X") || b.nprocesses != 1 || h.pid != getpid() ||
			    h.fds != 1)
				bad |= 4;
		}
		dmaio_snapshot_free(s);
		o.pid = getppid();
		if (dmaio_snapshot_new(&o, &s, &why) != -EACCES || !strstr(why.text, "CAP_SYS_PTRACE"))
			bad |= 8;
		if (bad)
			fprintf(stderr, "unprivileged: failures 0x%x (reason: %s)\n", bad, why.text);
		_exit(bad);
	}
	assert_int_equal(waitpid(pid, &st, 0), pid);
	close(fd);
	if (!WIFEXITED(st) || WEXITSTATUS(st))
		fail_msg("unprivileged child: status 0x%x", st);
}

/* ---- hostile: descriptors replaced, mappings and children coming and going ---- */

static void churn(int rep, void *arg)
{
	int *fds = arg;

	kid_report(rep, 1);
	for (;;) {
		void *p;
		pid_t c;

		dup2(fds[0], 100);
		dup2(fds[1], 100);
		close(100);
		p = mmap(NULL, 128 * 1024, PROT_READ, MAP_SHARED, fds[1], 0);
		if (p != MAP_FAILED)
			munmap(p, 128 * 1024);
		c = fork();
		if (!c)
			_exit(0);
		if (c > 0)
			waitpid(c, NULL, 0);
		if (getppid() == 1)
			_exit(0);
	}
}

static int count_fds(void)
{
	int n = 0;
	char p[64];

	for (int fd = 0; fd < 1024; fd++) {
		snprintf(p, sizeof(p), "/proc/self/fd/%d", fd);
		n += access(p, F_OK) == 0;
	}
	return n;
}

static void test_churn(void **state)
{
	int fds[2];
	struct kid k;
	uint64_t ix, iy;
	int before, rounds = test_quick() ? 10 : 40;
	(void)state;

	need(fds[0] = heap_buf("system", 64 * 1024, "acct-X"), "system heap");
	need(fds[1] = heap_buf("system", 128 * 1024, "acct-Y"), "system heap");
	ix = ino_of(fds[0]);
	iy = ino_of(fds[1]);
	kid_start(&k, churn, fds);
	kid_read(&k);
	close(fds[0]);
	close(fds[1]);
	before = count_fds();
	for (int r = 0; r < rounds; r++) {
		struct dmaio_snapshot *s = take(r & 1 ? DMAIO_SNAPSHOT_PROC : DMAIO_SNAPSHOT_AUTO, 0,
						NULL);
		struct dmaio_snapshot_info in = { .struct_size = sizeof(in) };

		dmaio_snapshot_get_info(s, &in);
		for (uint32_t i = 0; i < in.nbuffers; i++) {
			struct dmaio_snapshot_buffer b = { .struct_size = sizeof(b) };

			dmaio_snapshot_get_buffer(s, i, &b);
			if (b.inode != ix && b.inode != iy)
				continue;
			/* the size always belongs to the inode reported */
			if (b.size != (b.inode == ix ? 64 * 1024u : 128 * 1024u) ||
			    strcmp(b.name, b.inode == ix ? "acct-X" : "acct-Y"))
				fail_msg("round %d: inode %llu: size %llu name %s", r,
					 (unsigned long long)b.inode, (unsigned long long)b.size,
					 b.name);
			for (uint32_t h = 0; h < b.nprocesses; h++) {
				struct dmaio_snapshot_holder ho = { .struct_size = sizeof(ho) };

				dmaio_snapshot_get_holder(s, b.first_holder + h, &ho);
				/* the churner or one of its short-lived children: each holds
				 * its fd of the buffer, and at most the dup2 copy and one map */
				if (ho.fds > 2 || ho.maps > 1 || (ho.maps && b.inode != iy) ||
				    ho.pid == getpid())
					fail_msg("round %d: holder pid %d fds %u maps %u of inode "
						 "%llu", r, ho.pid, ho.fds, ho.maps,
						 (unsigned long long)b.inode);
			}
		}
		dmaio_snapshot_free(s);
	}
	assert_int_equal(count_fds(), before);
	kill(k.pid, SIGKILL);
	close(k.go);
	waitpid(k.pid, NULL, 0);
	close(k.rep);
}

/* ---- a pid namespace: its own /proc, its own pids ---- */

static void test_pidns(void **state)
{
	int fd, p[2], q[2], st;
	pid_t outer, inner_outer_pid = 0;
	uint64_t ino;
	(void)state;

	need(fd = heap_buf("system", 256 * 1024, "acct-Z"), "system heap");
	ino = ino_of(fd);
	/* p: the inner process's outer pid to the parent; q: the parent's "done" to it */
	assert_int_equal(pipe2(p, O_CLOEXEC), 0);
	assert_int_equal(pipe2(q, O_CLOEXEC), 0);
	outer = fork();
	assert_true(outer >= 0);
	if (!outer) {
		pid_t g;

		close(p[0]);
		close(q[1]);
		if (unshare(CLONE_NEWPID | CLONE_NEWNS))
			_exit(errno == EPERM || errno == EINVAL ? 77 : 20);
		g = fork();
		if (g < 0)
			_exit(21);
		if (g > 0) {
			close(fd);
			if (write(p[1], &g, sizeof(g)) != sizeof(g))
				_exit(22);
			close(p[1]);
			waitpid(g, &st, 0);
			_exit(WIFEXITED(st) ? WEXITSTATUS(st) : 23);
		}
		/* pid 1 of the new namespace, with its own /proc */
		struct dmaio_snapshot_opts o = { .struct_size = sizeof(o),
						 .source = DMAIO_SNAPSHOT_PROC };
		struct dmaio_snapshot_info in = { .struct_size = sizeof(in) };
		struct dmaio_snapshot_buffer b = { .struct_size = sizeof(b) };
		struct dmaio_snapshot_holder h = { .struct_size = sizeof(h) };
		struct dmaio_snapshot *s;
		char c;
		int i;

		close(p[1]);
		if (mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) ||
		    mount("proc", "/proc", "proc", 0, NULL))
			_exit(24);
		if (dmaio_snapshot_new(&o, &s, NULL))
			_exit(25);
		dmaio_snapshot_get_info(s, &in);
		i = dmaio_snapshot_find_buffer(s, ino);
		if (i < 0 || in.nprocesses != 1)
			_exit(26);
		dmaio_snapshot_get_buffer(s, (uint32_t)i, &b);
		dmaio_snapshot_get_holder(s, b.first_holder, &h);
		if (b.nprocesses != 1 || h.pid != 1 || h.fds != 1 || b.size != 256 * 1024)
			_exit(27);
		dmaio_snapshot_free(s);
		/* wait for the parent's snapshot */
		while (read(q[0], &c, 1) < 0 && errno == EINTR)
			;
		_exit(0);
	}
	close(fd);
	close(p[1]);
	close(q[0]);
	if (read(p[0], &inner_outer_pid, sizeof(inner_outer_pid)) != sizeof(inner_outer_pid)) {
		waitpid(outer, &st, 0);
		close(p[0]);
		close(q[1]);
		if (WIFEXITED(st) && WEXITSTATUS(st) == 77) {
			if (test_expect_devices()) /* every VM kernel has them */
				fail_msg("this kernel has no pid namespaces (CONFIG_PID_NS)");
			print_message("SKIP: this kernel has no pid namespaces (CONFIG_PID_NS)\n");
			skip();
		}
		fail_msg("namespace child: status 0x%x", st);
	}
	/* outside: the inner process under its outer pid, the only holder */
	struct dmaio_snapshot *s = take(DMAIO_SNAPSHOT_PROC, 0, NULL);
	struct dmaio_snapshot_buffer b = { .struct_size = sizeof(b) };
	struct dmaio_snapshot_holder h = { .struct_size = sizeof(h) };
	int i = dmaio_snapshot_find_buffer(s, ino);

	assert_true(i >= 0);
	dmaio_snapshot_get_buffer(s, (uint32_t)i, &b);
	dmaio_snapshot_get_holder(s, b.first_holder, &h);
	assert_int_equal(b.nprocesses, 1);
	assert_int_equal(h.pid, inner_outer_pid);
	dmaio_snapshot_free(s);
	close(q[1]);
	close(p[0]);
	assert_int_equal(waitpid(outer, &st, 0), outer);
	if (!WIFEXITED(st) || WEXITSTATUS(st))
		fail_msg("namespace child: status 0x%x", st);
}

/* ---- the BPF source: the kernel's list, buffers no process holds, agreement with /proc ---- */

/* The BPF source must work on Linux 6.16+ in the test VM (our 7.3 kernel has BTF and the
 * iterator: a kernel or library without them is a failure there, not a skip) */
static bool bpf_expected(void)
{
	struct utsname u;
	unsigned maj = 0, min = 0;

	if (uname(&u) || sscanf(u.release, "%u.%u", &maj, &min) != 2)
		return false;
	return (maj > 6 || (maj == 6 && min >= 16)) && test_expect_devices();
}

static struct dmaio_snapshot *take_bpf_or_skip(void)
{
	struct dmaio_reason why = { .struct_size = sizeof(why) };
	struct dmaio_snapshot_opts o = { .struct_size = sizeof(o), .source = DMAIO_SNAPSHOT_BPF };
	struct dmaio_snapshot *s = NULL;
	int r = dmaio_snapshot_new(&o, &s, &why);

	if (r == -EOPNOTSUPP && !bpf_expected()) {
		print_message("SKIP: no BPF source: %s\n", why.text);
		skip();
	}
	if (r)
		fail_msg("BPF snapshot: %s: %s", strerror(-r), why.text);
	return s;
}

/* every buffer /proc sees complete, BPF sees the same, with the same holders */
static void check_agree(struct dmaio_snapshot *p, struct dmaio_snapshot *b)
{
	struct dmaio_snapshot_info in = { .struct_size = sizeof(in) };

	dmaio_snapshot_get_info(p, &in);
	for (uint32_t i = 0; i < in.nbuffers; i++) {
		struct dmaio_snapshot_buffer x = { .struct_size = sizeof(x) },
					     y = { .struct_size = sizeof(y) };
		int j;

		dmaio_snapshot_get_buffer(p, i, &x);
		j = dmaio_snapshot_find_buffer(b, x.inode);
		if (j < 0)
			fail_msg("inode %llu (%s): in /proc's snapshot, not in BPF's",
				 (unsigned long long)x.inode, x.name);
		dmaio_snapshot_get_buffer(b, (uint32_t)j, &y);
		if (x.size != y.size || strcmp(x.name, y.name) || y.flags ||
		    (!(x.flags & DMAIO_SNAPSHOT_BUF_PARTIAL) && strcmp(x.exporter, y.exporter)) ||
		    x.nprocesses != y.nprocesses)
			fail_msg("inode %llu: /proc %llu %s %s %u holders, BPF %llu %s %s %u holders "
				 "(flags 0x%x)", (unsigned long long)x.inode,
				 (unsigned long long)x.size, x.exporter, x.name, x.nprocesses,
				 (unsigned long long)y.size, y.exporter, y.name, y.nprocesses, y.flags);
	}
}

static void test_bpf(void **state)
{
	struct dmaio_snapshot *b = take_bpf_or_skip(), *p;
	struct dmaio_snapshot_info in = { .struct_size = sizeof(in) };
	int fd, i;
	uint64_t ino;
	(void)state;

	assert_int_equal(dmaio_snapshot_get_info(b, &in), 0);
	assert_int_equal(in.source, DMAIO_SNAPSHOT_BPF);
	assert_true(in.flags & DMAIO_SNAPSHOT_HAS_KERNEL);
	dmaio_snapshot_free(b);

	need(fd = heap_buf("system", 192 * 1024, "acct-H"), "system heap");
	ino = ino_of(fd);
	/* held by a process: both sources, and they agree on everything */
	b = take_bpf_or_skip();
	p = take(DMAIO_SNAPSHOT_PROC, 0, NULL);
	assert_true(dmaio_snapshot_find_buffer(p, ino) >= 0);
	check_agree(p, b);
	dmaio_snapshot_free(p);
	dmaio_snapshot_free(b);
#ifdef TEST_HAVE_DRM
	/* held by a driver only: imported into the DRM device (a GEM object keeps it), the
	 * descriptor closed */
	int drm = open("/dev/dri/card0", O_RDWR | O_CLOEXEC);
	struct drm_prime_handle h = { .fd = fd };

	if (drm < 0) {
		close(fd);
		if (test_expect_device("drm"))
			fail_msg("/dev/dri/card0: %s", strerror(errno));
		print_message("SKIP: no DRM device for a buffer held by the kernel only\n");
		skip();
	}
	if (ioctl(drm, DRM_IOCTL_PRIME_FD_TO_HANDLE, &h))
		fail_msg("PRIME import into /dev/dri/card0: %s", strerror(errno));
	close(fd);
	b = take_bpf_or_skip();
	p = take(DMAIO_SNAPSHOT_PROC, 0, NULL);
	i = dmaio_snapshot_find_buffer(b, ino);
	assert_true(i >= 0);
	struct dmaio_snapshot_buffer x = { .struct_size = sizeof(x) };

	dmaio_snapshot_get_buffer(b, (uint32_t)i, &x);
	assert_int_equal(x.flags, DMAIO_SNAPSHOT_BUF_KERNEL);
	assert_int_equal(x.nprocesses, 0);
	assert_int_equal(x.size, 192 * 1024);
	assert_string_equal(x.name, "acct-H");
	assert_string_equal(x.exporter, "system");
	assert_int_equal(dmaio_snapshot_get_info(b, &in), 0);
	assert_true(in.kernel_bytes >= 192 * 1024);
	assert_int_equal(dmaio_snapshot_find_buffer(p, ino), -ENOENT);
	check_agree(p, b);
	dmaio_snapshot_free(p);
	dmaio_snapshot_free(b);
	/* the device's last reference gone: so is the buffer */
	close(drm);
	b = take_bpf_or_skip();
	assert_int_equal(dmaio_snapshot_find_buffer(b, ino), -ENOENT);
	dmaio_snapshot_free(b);
#else
	close(fd);
	(void)i;
#endif
}

/* Held by a device queue: a system-heap buffer queued to vivid (V4L2_MEMORY_DMABUF: videobuf2
 * takes a reference at VIDIOC_QBUF and keeps it while the buffer is queued), its descriptor
 * closed. The BPF source lists it as held by the kernel only, with its size, exporter and
 * name; /proc cannot see it; once the queue lets it go (REQBUFS 0), it is gone. */
static int open_vivid(void)
{
	char path[32];

	for (int i = 0; i < 64; i++) {
		struct v4l2_capability cap;
		int fd;

		snprintf(path, sizeof(path), "/dev/video%d", i);
		fd = open(path, O_RDWR | O_CLOEXEC);
		if (fd < 0)
			continue;
		if (ioctl(fd, VIDIOC_QUERYCAP, &cap) == 0 && !strcmp((const char *)cap.driver, "vivid") &&
		    ((cap.capabilities & V4L2_CAP_DEVICE_CAPS ? cap.device_caps : cap.capabilities) &
		     V4L2_CAP_VIDEO_CAPTURE))
			return fd;
		close(fd);
	}
	return -1;
}

static void test_bpf_vivid(void **state)
{
	struct v4l2_requestbuffers rb = { .count = 1, .type = V4L2_BUF_TYPE_VIDEO_CAPTURE,
					  .memory = V4L2_MEMORY_DMABUF };
	struct v4l2_format f = { .type = V4L2_BUF_TYPE_VIDEO_CAPTURE };
	struct dmaio_snapshot_buffer x = { .struct_size = sizeof(x) };
	struct dmaio_snapshot *b = take_bpf_or_skip(), *p;
	struct v4l2_buffer vb = { 0 };
	uint64_t ino, size;
	int vfd, fd, i;
	(void)state;

	dmaio_snapshot_free(b);
	vfd = open_vivid();
	if (vfd < 0) {
		if (test_expect_device("v4l2"))
			fail_msg("no vivid capture node, and this kernel has vivid");
		print_message("SKIP: no vivid capture node for a buffer held by a device queue\n");
		skip();
	}
	assert_int_equal(ioctl(vfd, VIDIOC_G_FMT, &f), 0);
	size = ((uint64_t)f.fmt.pix.sizeimage + 4095) & ~4095ull;
	need(fd = heap_buf("system", size, "acct-V"), "system heap");
	ino = ino_of(fd);
	assert_int_equal(ioctl(vfd, VIDIOC_REQBUFS, &rb), 0);
	assert_true(rb.count >= 1);
	vb.index = 0;
	vb.type = V4L2_BUF_TYPE_VIDEO_CAPTURE;
	vb.memory = V4L2_MEMORY_DMABUF;
	vb.m.fd = fd;
	vb.length = (uint32_t)size;
	if (ioctl(vfd, VIDIOC_QBUF, &vb))
		fail_msg("VIDIOC_QBUF of a %" PRIu64 "-byte system-heap dma-buf: %s", size,
			 strerror(errno));
	close(fd);
	b = take_bpf_or_skip();
	p = take(DMAIO_SNAPSHOT_PROC, 0, NULL);
	i = dmaio_snapshot_find_buffer(b, ino);
	assert_true(i >= 0);
	assert_int_equal(dmaio_snapshot_get_buffer(b, (uint32_t)i, &x), 0);
	assert_int_equal(x.flags, DMAIO_SNAPSHOT_BUF_KERNEL);
	assert_int_equal(x.nprocesses, 0);
	assert_int_equal(x.size, size);
	assert_string_equal(x.name, "acct-V");
	assert_string_equal(x.exporter, "system");
	assert_int_equal(dmaio_snapshot_find_buffer(p, ino), -ENOENT);
	check_agree(p, b);
	dmaio_snapshot_free(p);
	dmaio_snapshot_free(b);
	/* the queue lets it go: so does the kernel */
	rb.count = 0;
	assert_int_equal(ioctl(vfd, VIDIOC_REQBUFS, &rb), 0);
	b = take_bpf_or_skip();
	assert_int_equal(dmaio_snapshot_find_buffer(b, ino), -ENOENT);
	dmaio_snapshot_free(b);
	close(vfd);
}

/* A reader: the BPF program loaded once, each take sees the buffers of that moment (a buffer
 * made between two takes appears, one freed disappears), no descriptor grows per take, and
 * freeing the reader closes what it opened. */
static void test_reader(void **state)
{
	struct dmaio_reason why = { .struct_size = sizeof(why) };
	struct dmaio_snapshot_opts o = { .struct_size = sizeof(o), .source = DMAIO_SNAPSHOT_BPF };
	struct dmaio_snapshot_info in = { .struct_size = sizeof(in) };
	struct dmaio_snapshot_reader *rd = NULL;
	struct dmaio_snapshot *s;
	int fds0 = test_count_fds(), fds1, fd, r;
	uint64_t ino;
	(void)state;

	r = dmaio_snapshot_reader_new(&o, &rd, &why);
	if (r == -EOPNOTSUPP && !bpf_expected()) {
		print_message("SKIP: no BPF source: %s\n", why.text);
		skip();
	}
	if (r)
		fail_msg("BPF reader: %s: %s", strerror(-r), why.text);
	fds1 = test_count_fds();
	need(fd = heap_buf("system", 64 * 1024, "acct-R"), "system heap");
	ino = ino_of(fd);
	for (int i = 0; i < 3; i++) {
		assert_int_equal(dmaio_snapshot_reader_take(rd, &s, &why), 0);
		assert_int_equal(dmaio_snapshot_get_info(s, &in), 0);
		assert_int_equal(in.source, DMAIO_SNAPSHOT_BPF);
		assert_true(dmaio_snapshot_find_buffer(s, ino) >= 0);
		dmaio_snapshot_free(s);
		assert_int_equal(test_count_fds(), fds1 + 1); /* + the heap buffer */
	}
	close(fd);
	assert_int_equal(dmaio_snapshot_reader_take(rd, &s, &why), 0);
	assert_int_equal(dmaio_snapshot_find_buffer(s, ino), -ENOENT);
	dmaio_snapshot_free(s);
	dmaio_snapshot_reader_free(rd);
	assert_int_equal(test_count_fds(), fds0);
}

/* ---- memcg: the holders' cgroups, and the charge of dma_heap.mem_accounting ---- */

#define CG_A "dmaio-acct-a"
#define CG_B "dmaio-acct-b"

static char cg_mnt[256];

/* the first cgroup2 mount, or mount one on /sys/fs/cgroup; 0 or -errno */
static int cg_mount(void)
{
	char line[1024], mnt[256], type[64];
	FILE *f = fopen("/proc/self/mounts", "re");

	while (f && fgets(line, sizeof(line), f))
		if (sscanf(line, "%*s %255s %63s", mnt, type) == 2 && !strcmp(type, "cgroup2")) {
			snprintf(cg_mnt, sizeof(cg_mnt), "%s", mnt);
			fclose(f);
			return 0;
		}
	if (f)
		fclose(f);
	snprintf(cg_mnt, sizeof(cg_mnt), "/sys/fs/cgroup");
	mkdir(cg_mnt, 0755);
	return mount("cgroup2", cg_mnt, "cgroup2", 0, NULL) ? -errno : 0;
}

static int cg_write(const char *cg, const char *file, const char *v)
{
	char p[512];
	int fd, r = 0;

	snprintf(p, sizeof(p), "%s/%s%s%s", cg_mnt, cg, *cg ? "/" : "", file);
	fd = open(p, O_WRONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	if (write(fd, v, strlen(v)) != (ssize_t)strlen(v))
		r = -errno;
	close(fd);
	return r;
}

/* memory.current (key NULL) or a memory.stat line of a cgroup, bytes */
static uint64_t cg_read(const char *cg, const char *key)
{
	char p[512], line[256];
	unsigned long long v = 0;
	size_t kl = key ? strlen(key) : 0;
	FILE *f;

	snprintf(p, sizeof(p), "%s/%s/%s", cg_mnt, cg, key ? "memory.stat" : "memory.current");
	f = fopen(p, "re");
	if (!f)
		fail_msg("%s: %s", p, strerror(errno));
	while (fgets(line, sizeof(line), f))
		if (!key ? sscanf(line, "%llu", &v) == 1 :
		    !strncmp(line, key, kl) && line[kl] == ' ' && sscanf(line + kl, "%llu", &v) == 1)
			break;
	fclose(f);
	return v;
}

/* the cgroup of the snapshot's process pid */
static void snap_cgroup_of(struct dmaio_snapshot *s, pid_t pid, struct dmaio_snapshot_cgroup *g)
{
	struct dmaio_snapshot_info in = { .struct_size = sizeof(in) };

	assert_int_equal(dmaio_snapshot_get_info(s, &in), 0);
	for (uint32_t i = 0; i < in.nprocesses; i++) {
		struct dmaio_snapshot_process p = { .struct_size = sizeof(p) };

		assert_int_equal(dmaio_snapshot_get_process(s, i, &p), 0);
		if (p.pid != pid)
			continue;
		assert_true(p.cgroup < in.ncgroups);
		assert_int_equal(dmaio_snapshot_get_cgroup(s, p.cgroup, g), 0);
		return;
	}
	fail_msg("pid %d: not in the snapshot", (int)pid);
}

struct memcg_kid {
	const char *cg;
	int sock;
};

/* A: in cgroup a, allocates K (4 MiB, kept) and G (48 MiB), gives G to B and closes it */
static void kid_memcg_a(int rep, void *arg)
{
	struct memcg_kid *m = arg;
	char pid[16];
	int k, g, r;

	snprintf(pid, sizeof(pid), "%d", (int)getpid());
	r = cg_write(m->cg, "cgroup.procs", pid);
	if (r)
		kid_fail(rep, "join cgroup a", r);
	k = heap_buf("system", 4 * MiB, "memcg-kept");
	if (k < 0)
		kid_fail(rep, "alloc K", k);
	kid_report(rep, ino_of(k)); /* the parent reads the charge of K alone */
	{
		char c;

		if (read(m->sock, &c, 1) != 1)
			kid_fail(rep, "wait", errno);
	}
	g = heap_buf("system", 48 * MiB, "memcg-given");
	if (g < 0)
		kid_fail(rep, "alloc G", g);
	r = send_fd(m->sock, g);
	if (r)
		kid_fail(rep, "send G", r);
	kid_report(rep, ino_of(g));
	close(g);
}

/* B: in cgroup b, receives G */
static void kid_memcg_b(int rep, void *arg)
{
	struct memcg_kid *m = arg;
	char pid[16];
	int g, r;

	snprintf(pid, sizeof(pid), "%d", (int)getpid());
	r = cg_write(m->cg, "cgroup.procs", pid);
	if (r)
		kid_fail(rep, "join cgroup b", r);
	kid_report(rep, 1); /* joined */
	g = recv_fd(m->sock);
	if (g < 0)
		kid_fail(rep, "recv G", g);
	kid_report(rep, ino_of(g));
}

/* The kernel's switch, as the snapshot must report it: -1 absent, 0 off, 1 on. */
static int memcg_param(void)
{
	char v[8] = "";
	int fd = open("/sys/module/dma_heap/parameters/mem_accounting", O_RDONLY | O_CLOEXEC);
	ssize_t n;

	if (fd < 0)
		return -1;
	n = read(fd, v, sizeof(v) - 1);
	close(fd);
	return n > 0 && (v[0] == 'Y' || v[0] == '1');
}

/* the boot asked for the accounting: then it must be there and work */
static bool memcg_expected(void)
{
	char cmd[4096] = "";
	int fd = open("/proc/cmdline", O_RDONLY | O_CLOEXEC);
	ssize_t n = fd < 0 ? -1 : read(fd, cmd, sizeof(cmd) - 1);

	if (fd >= 0)
		close(fd);
	return n > 0 && strstr(cmd, "dma_heap.mem_accounting=1");
}

/*
 * With dma_heap.mem_accounting=1: process A in cgroup a allocates K (4 MiB, kept) and G
 * (48 MiB), gives G to process B in cgroup b through SCM_RIGHTS and closes its own. The
 * snapshot puts A in a holding K, B in b holding G (bytes exact), and reads each cgroup's
 * memory.current and "kernel" as the files say; the charge of G stays with a (its "kernel"
 * grew by at least 48 MiB when G was made, b's did not), and leaves a when B lets G go.
 * Every kernel: the snapshot reports the switch as /sys/module/dma_heap says.
 */
static void test_memcg(void **state)
{
	struct dmaio_snapshot_cgroup ga = { .struct_size = sizeof(ga) }, gb = ga;
	struct dmaio_snapshot_info in = { .struct_size = sizeof(in) };
	struct memcg_kid ma = { .cg = CG_A }, mb = { .cg = CG_B };
	struct dmaio_snapshot *s;
	struct kid a, b;
	int param = memcg_param(), sk[2], r;
	uint64_t ka0, kb0, ka1, ka2, kb2, ka3, ino_g;
	(void)state;

	s = take(DMAIO_SNAPSHOT_PROC, 0, NULL);
	assert_int_equal(dmaio_snapshot_get_info(s, &in), 0);
	assert_int_equal(in.memcg_accounting, param < 0 ? DMAIO_SNAPSHOT_MEMCG_ABSENT :
			 param ? DMAIO_SNAPSHOT_MEMCG_ON : DMAIO_SNAPSHOT_MEMCG_OFF);
	dmaio_snapshot_free(s);
	if (param != 1) {
		if (memcg_expected())
			fail_msg("booted with dma_heap.mem_accounting=1, and the kernel says %s",
				 param < 0 ? "it has no such parameter" : "it is off");
		print_message("SKIP: dma-heap memcg accounting is %s\n", param < 0 ? "absent" : "off");
		skip();
	}
	if (geteuid() != 0) {
		print_message("SKIP: making cgroups needs root\n");
		skip();
	}
	r = cg_mount();
	if (r)
		fail_msg("no cgroup2 mount, and mounting one failed: %s", strerror(-r));
	r = cg_write("", "cgroup.subtree_control", "+memory");
	if (r)
		fail_msg("%s/cgroup.subtree_control +memory: %s", cg_mnt, strerror(-r));
	for (int i = 0; i < 2; i++) {
		char p[512];

		snprintf(p, sizeof(p), "%s/%s", cg_mnt, i ? CG_B : CG_A);
		rmdir(p);
		if (mkdir(p, 0755))
			fail_msg("mkdir %s: %s", p, strerror(errno));
	}
	assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sk), 0);
	ma.sock = sk[0];
	mb.sock = sk[1];
	/* A first: B, started later, holds A's pipe ends, so B is stopped first (kid_stop) */
	ka0 = cg_read(CG_A, "kernel");
	kid_start(&a, kid_memcg_a, &ma);
	kid_read(&a); /* K made */
	ka1 = cg_read(CG_A, "kernel");
	kb0 = cg_read(CG_B, "kernel");
	kid_start(&b, kid_memcg_b, &mb);
	kid_read(&b);
	if (ka1 - ka0 < 4 * MiB)
		fail_msg("cgroup a's kernel memory grew by %llu bytes for a 4 MiB system-heap buffer",
			 (unsigned long long)(ka1 - ka0));
	assert_int_equal(write(sk[1], "g", 1), 1); /* A: make G and give it */
	ino_g = kid_read(&a);
	assert_int_equal(kid_read(&b), ino_g);
	ka2 = cg_read(CG_A, "kernel");
	kb2 = cg_read(CG_B, "kernel");
	if (ka2 - ka1 < 48 * MiB || ka2 - ka1 > 52 * MiB)
		fail_msg("cgroup a's kernel memory grew by %llu bytes for a 48 MiB buffer it made",
			 (unsigned long long)(ka2 - ka1));
	if (kb2 > kb0 + 4 * MiB)
		fail_msg("cgroup b's kernel memory grew by %llu bytes: charged for a buffer it "
			 "only received", (unsigned long long)(kb2 - kb0));

	s = take(DMAIO_SNAPSHOT_PROC, 0, NULL);
	snap_cgroup_of(s, a.pid, &ga);
	snap_cgroup_of(s, b.pid, &gb);
	assert_string_equal(ga.path, "/" CG_A);
	assert_string_equal(gb.path, "/" CG_B);
	/* what the processes hold: each exact */
	assert_int_equal(ga.nprocesses, 1);
	assert_int_equal(ga.nbuffers, 1);
	assert_int_equal(ga.bytes, 4 * MiB);
	assert_int_equal(gb.nprocesses, 1);
	assert_int_equal(gb.nbuffers, 1);
	assert_int_equal(gb.bytes, 48 * MiB);
	/* what they are charged: the files' values (kernel memory moves a little by itself) */
	assert_true(ga.flags & DMAIO_SNAPSHOT_CGROUP_MEMORY);
	assert_true(gb.flags & DMAIO_SNAPSHOT_CGROUP_MEMORY);
	if (ga.memory_kernel < ka0 + 52 * MiB || ga.memory_kernel > ka2 + 2 * MiB)
		fail_msg("snapshot: cgroup a kernel %llu, the file said %llu (before K and G: %llu)",
			 (unsigned long long)ga.memory_kernel, (unsigned long long)ka2,
			 (unsigned long long)ka0);
	if (gb.memory_kernel > kb2 + 2 * MiB || gb.memory_kernel + 2 * MiB < kb2)
		fail_msg("snapshot: cgroup b kernel %llu, the file said %llu",
			 (unsigned long long)gb.memory_kernel, (unsigned long long)kb2);
	print_message("memcg: a (made K 4 MiB and G 48 MiB, holds K): kernel +%llu KiB, snapshot "
		      "holds %llu KiB, kernel %llu KiB; b (holds G): kernel %+lld KiB, snapshot "
		      "holds %llu KiB, kernel %llu KiB\n", (unsigned long long)(ka2 - ka0) >> 10,
		      (unsigned long long)ga.bytes >> 10, (unsigned long long)ga.memory_kernel >> 10,
		      ((long long)kb2 - (long long)kb0) / 1024, (unsigned long long)gb.bytes >> 10,
		      (unsigned long long)gb.memory_kernel >> 10);
	assert_true(ga.memory_current >= ga.memory_kernel);
	assert_true(gb.memory_current >= gb.memory_kernel);
	dmaio_snapshot_free(s);

	/* B lets G go: its charge leaves a */
	kid_stop(&b);
	ka3 = cg_read(CG_A, "kernel");
	if (ka2 - ka3 < 46 * MiB)
		fail_msg("cgroup a's kernel memory fell by %lld bytes when the 48 MiB buffer it made "
			 "was freed", (long long)(ka2 - ka3));
	s = take(DMAIO_SNAPSHOT_PROC, 0, NULL);
	snap_cgroup_of(s, a.pid, &ga);
	assert_int_equal(ga.bytes, 4 * MiB);
	assert_true(ga.memory_kernel < ka0 + 8 * MiB);
	print_message("memcg: G freed: a's kernel -%llu KiB\n", (unsigned long long)(ka2 - ka3) >> 10);
	dmaio_snapshot_free(s);
	kid_stop(&a);
	close(sk[0]);
	close(sk[1]);
	for (int i = 0; i < 2; i++) {
		char p[512];

		snprintf(p, sizeof(p), "%s/%s", cg_mnt, i ? CG_B : CG_A);
		if (rmdir(p))
			fail_msg("rmdir %s: %s", p, strerror(errno));
	}
}

/* ---- arguments: each refusal its own errno ---- */

static void test_args_contract(void **state)
{
	struct dmaio_snapshot *s = NULL;
	struct dmaio_snapshot_opts o = { .struct_size = sizeof(o) };
	struct dmaio_reason why = { .struct_size = sizeof(why) };
	struct dmaio_snapshot_info in = { .struct_size = 8 };
	(void)state;

	assert_int_equal(dmaio_snapshot_new(NULL, NULL, NULL), -EINVAL);
	o.source = 9;
	assert_int_equal(dmaio_snapshot_new(&o, &s, &why), -EINVAL);
	assert_non_null(strstr(why.text, "source"));
	o.source = 0;
	o.flags = 1u << 31;
	assert_int_equal(dmaio_snapshot_new(&o, &s, NULL), -EINVAL);
	o.flags = 0;
	o.pid = -1;
	assert_int_equal(dmaio_snapshot_new(&o, &s, NULL), -EINVAL);
	o.pid = 0;
	o.struct_size = 4;
	assert_int_equal(dmaio_snapshot_new(&o, &s, NULL), -EINVAL);
	o.struct_size = sizeof(o);
	o.proc_root = "/nonexistent-proc";
	assert_int_equal(dmaio_snapshot_new(&o, &s, &why), -ENOENT);
	o.proc_root = NULL;
	o.pid = INT32_MAX;
	assert_int_equal(dmaio_snapshot_new(&o, &s, &why), -ESRCH);
	o.pid = 0;
	o.source = DMAIO_SNAPSHOT_PROC;
	assert_int_equal(dmaio_snapshot_new(&o, &s, NULL), 0);
	assert_int_equal(dmaio_snapshot_get_info(s, &in), -EINVAL);
	assert_int_equal(dmaio_snapshot_get_info(NULL, &in), -EINVAL);
	in.struct_size = sizeof(in);
	assert_int_equal(dmaio_snapshot_get_info(s, &in), 0);
	struct dmaio_snapshot_buffer b = { .struct_size = sizeof(b) };

	assert_int_equal(dmaio_snapshot_get_buffer(s, in.nbuffers, &b), -ERANGE);
	struct dmaio_snapshot_process p = { .struct_size = sizeof(p) };

	assert_int_equal(dmaio_snapshot_get_process(s, in.nprocesses, &p), -ERANGE);
	struct dmaio_snapshot_holder h = { .struct_size = sizeof(h) };

	assert_int_equal(dmaio_snapshot_get_holder(s, in.nholders, &h), -ERANGE);
	struct dmaio_snapshot_cgroup g = { .struct_size = sizeof(g) };

	assert_int_equal(dmaio_snapshot_get_cgroup(s, in.ncgroups, &g), -ERANGE);
	assert_int_equal(dmaio_snapshot_get_cgroup(NULL, 0, &g), -EINVAL);
	g.struct_size = 4;
	assert_int_equal(dmaio_snapshot_get_cgroup(s, 0, &g), -EINVAL);
	assert_true(in.memcg_accounting <= DMAIO_SNAPSHOT_MEMCG_ON);
	assert_int_equal(dmaio_snapshot_find_buffer(NULL, 1), -EINVAL);
	dmaio_snapshot_free(s);
	dmaio_snapshot_free(NULL);

	/* readers: the same checks as dmaio_snapshot_new(), then their own */
	struct dmaio_snapshot_reader *rd = NULL;
	int fds0 = test_count_fds();

	assert_int_equal(dmaio_snapshot_reader_new(NULL, NULL, NULL), -EINVAL);
	o.source = 9;
	assert_int_equal(dmaio_snapshot_reader_new(&o, &rd, &why), -EINVAL);
	assert_non_null(strstr(why.text, "source"));
	assert_null(rd);
	o.source = DMAIO_SNAPSHOT_PROC;
	o.flags = 1u << 31;
	assert_int_equal(dmaio_snapshot_reader_new(&o, &rd, NULL), -EINVAL);
	o.flags = 0;
	o.pid = -1;
	assert_int_equal(dmaio_snapshot_reader_new(&o, &rd, NULL), -EINVAL);
	o.pid = 0;
	o.struct_size = 4;
	assert_int_equal(dmaio_snapshot_reader_new(&o, &rd, NULL), -EINVAL);
	o.struct_size = sizeof(o);
	why.struct_size = 3;
	assert_int_equal(dmaio_snapshot_reader_new(&o, &rd, &why), -EINVAL);
	why.struct_size = sizeof(why);
	/* a missing /proc is found when a snapshot is taken */
	o.proc_root = "/nonexistent-proc";
	assert_int_equal(dmaio_snapshot_reader_new(&o, &rd, &why), 0);
	assert_int_equal(dmaio_snapshot_reader_take(rd, &s, &why), -ENOENT);
	assert_null(s);
	dmaio_snapshot_reader_free(rd);
	o.proc_root = NULL;
	assert_int_equal(dmaio_snapshot_reader_new(&o, &rd, &why), 0);
	assert_int_equal(dmaio_snapshot_reader_take(NULL, &s, NULL), -EINVAL);
	assert_int_equal(dmaio_snapshot_reader_take(rd, NULL, NULL), -EINVAL);
	for (int i = 0; i < 3; i++) {
		assert_int_equal(dmaio_snapshot_reader_take(rd, &s, &why), 0);
		assert_int_equal(dmaio_snapshot_get_info(s, &in), 0);
		assert_int_equal(in.source, DMAIO_SNAPSHOT_PROC);
		dmaio_snapshot_free(s);
	}
	dmaio_snapshot_reader_free(rd);
	dmaio_snapshot_reader_free(NULL);
	assert_int_equal(test_count_fds(), fds0);
}

int main(int argc, char **argv)
{
	const struct CMUnitTest host[] = {
		cmocka_unit_test(test_args_contract),
	};
	const struct CMUnitTest dev[] = {
		cmocka_unit_test(test_exact),
		cmocka_unit_test(test_unprivileged),
		cmocka_unit_test(test_churn),
		cmocka_unit_test(test_pidns),
		cmocka_unit_test(test_bpf),
		cmocka_unit_test(test_bpf_vivid),
		cmocka_unit_test(test_reader),
		cmocka_unit_test(test_memcg),
	};

	test_parse_args(argc, argv, &args, "system");
	if (!strcmp(args.heap, "memfd"))
		return cmocka_run_group_tests_name("account-args", host, NULL, NULL);
	return cmocka_run_group_tests_name("account", dev, NULL, NULL);
}
