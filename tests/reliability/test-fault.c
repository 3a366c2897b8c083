// SPDX-License-Identifier: MIT
/*
 * test-fault: every call into the kernel that the library makes through its syscall seam
 * (lib/sysio.c), failed in turn. Linked with the static fault-injection build of the library
 * (libdmaio_fault_dep: dmaio_fault_calls / dmaio_fault_nth / dmaio_fault_err, see lib/fault.h).
 *
 * Scenarios: read and write of an unaligned range, of an aligned one, and a read across end of
 * file, with each path forced (DMAIO_RW_PATH(p) | DMAIO_RW_NO_FALLBACK) and with AUTO; dmaio_buf_alloc
 * of "memfd", of the --heap and of heap NULL; dmaio_buf_map. Each runs on a fresh context (so the
 * lazy probes are part of it) and a fresh buffer. For every scenario:
 *   1. a counting run (dmaio_fault_nth = 0) gives N, the number of seam calls, and where each
 *      call comes from (a backtrace through this executable's symbol table);
 *   2. for every n in 1..N and every fault in {EINTR, EAGAIN, short count, ENOMEM, EIO, ENOSPC}
 *      one run with dmaio_fault_nth = n;
 *   3. for every n whose call moves data: a short count at n and EIO at the call right after
 *      (a retry that fails), injected through the wrapper of dmaio_fault_hit();
 * and after each run:
 *   - the result is either complete success with every byte right, or a negative errno; then
 *     for reads the bytes [0, xfer.done) of the range are right, for writes the file bytes
 *     [0, xfer.done) of the range are the buffer's; dmaio_buf_get_stats() agrees (last_done,
 *     last_result);
 *   - no byte outside the range changed: guard pattern around the range in the buffer (reads;
 *     after a short read at end of file also the rest of the range), the destination file's
 *     bytes outside the range and its size (writes), the whole source buffer (writes);
 *   - transient faults (EINTR, EAGAIN, short counts) at calls where the kernel really returns
 *     them end in success (policy below);
 *   - the same operation repeated without faults on the same context succeeds (no poisoned
 *     state: engines, probes, mappings);
 *   - after dmaio_buf_free() and dmaio_ctx_free(): the number of open fds and of library mappings
 *     (memfd, dma-buf, io_uring) is what it was before the context was created;
 *   - no hang (alarm) and no crash (the scenario is printed on a fatal signal).
 *
 * Transient-fault policy (injected EINTR/EAGAIN/short must end in success):
 *   pread, pwrite, copy_file_range, splice, io_uring completions: EINTR, EAGAIN, short count;
 *   ioctl: EINTR; EAGAIN for DMA_BUF_IOCTL_SYNC (documented there as "restart");
 *   open, ftruncate, fallocate: EINTR (documented for each; hugetlbfs fallocate returns it
 *   whenever a signal is pending);
 * not held to it (any clean negative errno passes): EAGAIN from other ioctls and from
 * open/ftruncate/fallocate/mmap, and EINTR/EAGAIN from memfd_create and mmap (the kernel never
 * returns them as a transient condition there), and a "short count" at a call that moves no
 * data (the seam turns it into EIO).
 *
 * Then, not injected: real signals (SIGUSR1 every 50 us, every 2 ms with DMAIO_TEST_QUICK; no
 * SA_RESTART) in fresh child processes while buffers are allocated ("memfd", the --heap,
 * "udmabuf-huge" where it works) and files read and written through every path: nothing the
 * kernel interrupts or cancels may reach the caller (hugetlbfs fallocate gives EINTR, io-wq
 * cancels a punted request with ECANCELED when it cannot start a worker while a signal is
 * pending).
 *
 * Each scenario is a cmocka test, and so are the real signals; every problem is reported (the
 * first two of each class in full) and counted with the shared test_fail() (common.h), the test
 * failing at its end when there was any.
 *
 * Usage: test-fault [--heap NAME] [--only SUBSTRING] [--verbose]
 * Env:   DMAIO_TEST_QUICK=1 (smaller ranges), DMAIO_TEST_DIRS.
 * Prints: "injected N faults over M scenarios".
 */
#include <errno.h>
#include <execinfo.h>
#include <fcntl.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "common.h"
#include "rel.h"

/* lib/fault.h is private: the counters of the fault-injection build */
extern unsigned long dmaio_fault_calls;
extern unsigned long dmaio_fault_nth;
extern int dmaio_fault_err;

/* ---- the seam hook (-Wl,--wrap=dmaio_fault_hit) ------------------------------------------ */
#define MAX_BT 24
#define MAX_REC 2048

struct trace {
	void *bt[MAX_BT];
	int nbt;
};

static struct {
	bool record;             /* counting run: keep a backtrace of every call */
	struct trace *rec;       /* [MAX_REC] */
	unsigned long second_at; /* 0, or a call number to fail with second_err */
	int second_err;
	int hits;
	struct trace hit[2];
} hook;

int __real_dmaio_fault_hit(void);
int __wrap_dmaio_fault_hit(void);

int __wrap_dmaio_fault_hit(void)
{
	int r = __real_dmaio_fault_hit();
	unsigned long n = __atomic_load_n(&dmaio_fault_calls, __ATOMIC_RELAXED);

	if (hook.record && n >= 1 && n <= MAX_REC)
		hook.rec[n - 1].nbt = backtrace(hook.rec[n - 1].bt, MAX_BT);
	if (!r && hook.second_at && n == hook.second_at) {
		dmaio_fault_err = hook.second_err; /* read by the seam after we return */
		r = 1;
	}
	if (r && hook.hits < 2) {
		hook.hit[hook.hits].nbt = backtrace(hook.hit[hook.hits].bt, MAX_BT);
		hook.hits++;
	}
	return r;
}

static void arm(unsigned long nth, int err, unsigned long second_at, int second_err)
{
	hook.hits = 0;
	hook.second_at = second_at;
	hook.second_err = second_err;
	dmaio_fault_err = err;
	dmaio_fault_calls = 0;
	dmaio_fault_nth = nth;
}

static unsigned long disarm(void)
{
	unsigned long n = dmaio_fault_calls;

	dmaio_fault_nth = 0;
	dmaio_fault_err = 0;
	hook.second_at = 0;
	hook.record = false;
	return n;
}

/* ---- sites: which seam function a call went through, and from where ------------------------ */
static const char *const public_api[] = {
	"dmaio_fd_read", "dmaio_fd_write", "dmaio_file_read", "dmaio_file_write",
	"dmaio_buf_alloc", "dmaio_buf_map", "dmaio_buf_import", "dmaio_buf_free", "dmaio_ctx_get_system",
};

static bool is_public(const char *s)
{
	for (size_t i = 0; i < ARRAY_SIZE(public_api); i++)
		if (!strcmp(s, public_api[i]))
			return true;
	return false;
}

/* The seam function of a trace ("sys_pread", ...) and a caller chain, "?" if unknown. */
static const char *site_of(const struct trace *t, char *chain, size_t chain_len)
{
	const char *site = "?";
	size_t used = 0;
	int i, first = -1;

	if (chain && chain_len)
		chain[0] = 0;
	for (i = 1; i < t->nbt; i++) {
		const char *s = rel_sym((char *)t->bt[i] - 1, NULL);

		if (!s)
			continue;
		if (!strncmp(s, "sys_", 4)) {
			site = s;
			first = i;
			break;
		}
		if (!strcmp(s, "dmaio_pread_full") || !strcmp(s, "dmaio_pwrite_full")) {
			/* sys_pread/sys_pwrite inlined into the loop */
			site = strstr(s, "pread") ? "sys_pread" : "sys_pwrite";
			first = i - 1;
			break;
		}
	}
	if (first < 0 || !chain)
		return site;
	used += (size_t)snprintf(chain, chain_len, "%s", site);
	for (i = first + 1; i < t->nbt && used < chain_len; i++) {
		unsigned long off = 0;
		const char *s = rel_sym((char *)t->bt[i] - 1, &off);

		if (s && (!strcmp(s, "run_op") || !strcmp(s, "do_op") || !strcmp(s, "alloc_buf") ||
			  !strcmp(s, "env_open")))
			break; /* this test */
		used += (size_t)snprintf(chain + used, chain_len - used, " < %s", s ? s : "?");
		if (!s || is_public(s))
			break;
	}
	return site;
}

static bool is_data_site(const char *s)
{
	return !strcmp(s, "sys_pread") || !strcmp(s, "sys_pwrite") ||
	       !strcmp(s, "sys_copy_file_range") || !strcmp(s, "sys_splice") ||
	       !strcmp(s, "sys_uring_result");
}

/*
 * Must an injected @err (0: short count) at @site (called as in @chain) end in success? See the
 * policy above.
 */
static bool must_succeed(const char *site, const char *chain, int err)
{
	if (err == 0)
		return is_data_site(site);
	if (err != EINTR && err != EAGAIN)
		return false;
	if (is_data_site(site))
		return true;
	/* ioctl: EINTR always; EAGAIN where the kernel documents it (DMA_BUF_IOCTL_SYNC) */
	if (!strcmp(site, "sys_ioctl"))
		return err == EINTR || (chain && strstr(chain, "dmaio_sync_ioctl"));
	if (err == EINTR && (!strcmp(site, "sys_open") || !strcmp(site, "sys_ftruncate") ||
			     !strcmp(site, "sys_fallocate")))
		return true;
	return false;
}

/* ---- scenarios ---------------------------------------------------------------------------- */
enum op { OP_READ, OP_WRITE, OP_ALLOC, OP_MAP };

struct scen {
	char name[96];
	enum op op;
	int path;              /* read/write: DMAIO_PATH_*, AUTO = no forcing */
	const char *heap;      /* buffer provider (alloc: what is allocated; NULL = heap NULL) */
	unsigned alloc_flags;
	size_t buf_size, buf_off, len;
	off_t file_off;
	off_t file_size;       /* read: source size; write: destination size before the call */
	int fd;                /* source or destination file */
	bool cold;             /* a fresh context and buffer for every run */
};

static const int paths[] = {
	DMAIO_PATH_RW_FILE,  DMAIO_PATH_UDMABUF_DIRECT, DMAIO_PATH_BOUNCE_DIRECT,
	DMAIO_PATH_BUFFERED, DMAIO_PATH_SENDFILE,       DMAIO_PATH_AUTO,
};

static const int faults[] = { EINTR, EAGAIN, 0, ENOMEM, EIO, ENOSPC };

static const char *fault_name(int e)
{
	return e ? test_errname(-e) + 1 : "short";
}

static struct test_args args;
static const char *only;
static bool verbose;

/* ---- counters ----------------------------------------------------------------------------- */
static unsigned long total_injected, total_runs, total_fail, total_scen, total_na;
static unsigned long total_transient_ok, total_err_runs, total_ok_runs;

#define MAX_CLASSES 64
static struct fclass {
	char key[200];
	char first[1400];
	unsigned n;
} classes[MAX_CLASSES];
static unsigned nclasses;

/* A failure: counted per class (scenario kind + fault + site + what), details printed for the
 * first few of each class. */
static void failure(const struct scen *sc, const char *fault, const char *site, const char *chain,
		    unsigned long n, const char *fmt, ...) __attribute__((format(printf, 6, 7)));

static void failure(const struct scen *sc, const char *fault, const char *site, const char *chain,
		    unsigned long n, const char *fmt, ...)
{
	char what[512], key[200];
	struct fclass *c = NULL;
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(what, sizeof(what), fmt, ap);
	va_end(ap);
	total_fail++;
	{
		/* the class: operation, fault, site and the problem without its numbers */
		char gist[64];
		size_t k = 0;

		for (const char *c2 = what; *c2 && k < sizeof(gist) - 1; c2++)
			if (*c2 < '0' || *c2 > '9')
				gist[k++] = *c2;
		gist[k] = 0;
		snprintf(key, sizeof(key), "%s|%s|%s|%s", sc->op == OP_READ ? "read" :
			 sc->op == OP_WRITE ? "write" : sc->op == OP_ALLOC ? "alloc" : "map", fault,
			 site, gist);
	}
	for (unsigned i = 0; i < nclasses; i++)
		if (!strcmp(classes[i].key, key))
			c = &classes[i];
	if (!c && nclasses < MAX_CLASSES) {
		c = &classes[nclasses++];
		snprintf(c->key, sizeof(c->key), "%s", key);
		snprintf(c->first, sizeof(c->first), "%s, fault %s at call %lu (%s): %s", sc->name,
			 fault, n, chain && *chain ? chain : site, what);
	}
	if (c)
		c->n++;
	if (c && c->n == 1 && !n)
		snprintf(c->first, sizeof(c->first), "%s: %s", sc->name, what);
	/* counted by the shared test_fail(); printed in full for the first two of a class */
	if ((!c || c->n <= 2 || verbose) && !n)
		test_fail("%s: %s", sc->name, what);
	else if (!c || c->n <= 2 || verbose)
		test_fail("%s: fault %s at call %lu (%s): %s", sc->name, fault, n,
			  chain && *chain ? chain : site, what);
	else
		test_fail_count(1);
}

/* ---- one run ------------------------------------------------------------------------------ */
struct outcome {
	ssize_t ret;
	struct dmaio_xfer x;
	unsigned long calls;
	int hits;
	char bad[400];          /* first problem found, empty when the run is clean */
};

static void bad(struct outcome *o, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static void bad(struct outcome *o, const char *fmt, ...)
{
	va_list ap;

	if (o->bad[0])
		return;
	va_start(ap, fmt);
	vsnprintf(o->bad, sizeof(o->bad), fmt, ap);
	va_end(ap);
}

static unsigned rw_flags(int path)
{
	return path == DMAIO_PATH_AUTO ? 0 : DMAIO_RW_PATH(path) | DMAIO_RW_NO_FALLBACK;
}

static bool is_errno(long r)
{
	return r < 0 && r > -4096;
}

/* Reset the files and the buffer contents for one read or write. */
static void prepare(const struct scen *sc, struct dmaio_buf *buf, uint8_t *p)
{
	dmaio_buf_sync_begin(buf, DMAIO_SYNC_RW);
	pat_fill(p, sc->buf_size, sc->op == OP_READ ? SEED_GUARD : SEED_BUF, 0);
	dmaio_buf_sync_end(buf, DMAIO_SYNC_RW);
	if (sc->op == OP_WRITE) {
		/* the prefill outside the range only; the range is a hole (no page cache for
		 * O_DIRECT writes to flush first) */
		off_t end = sc->file_off + (off_t)sc->len;

		if (ftruncate(sc->fd, 0) || ftruncate(sc->fd, sc->file_size) ||
		    file_fill_pattern(sc->fd, 0, (size_t)sc->file_off, SEED_DEST) ||
		    (sc->file_size > end &&
		     file_fill_pattern(sc->fd, end, (size_t)(sc->file_size - end), SEED_DEST)))
			fail_msg("cannot reset the destination file: %s", strerror(errno));
	}
}

static ssize_t do_op(const struct scen *sc, struct dmaio_buf *buf, struct dmaio_xfer *x)
{
	if (sc->op == OP_READ)
		return dmaio_fd_read(sc->fd, sc->file_off, buf, sc->buf_off, sc->len, rw_flags(sc->path), x);
	return dmaio_fd_write(sc->fd, sc->file_off, buf, sc->buf_off, sc->len, rw_flags(sc->path), x);
}

/* Check the buffer and the file after a read/write that returned @ret with @x. */
static void verify_rw(const struct scen *sc, struct dmaio_buf *buf, const uint8_t *p, ssize_t ret,
		      const struct dmaio_xfer *x, struct outcome *o)
{
	struct dmaio_stats st = { .struct_size = sizeof(struct dmaio_stats) };
	long long e;

	if (ret >= 0 && (uint64_t)ret != x->done)
		bad(o, "returned %zd but xfer.done = %llu", ret, (unsigned long long)x->done);
	if (x->done > sc->len)
		bad(o, "xfer.done %llu > len %zu", (unsigned long long)x->done, sc->len);
	if (dmaio_buf_get_stats(buf, &st) == 0) {
		if (st.last_done != x->done)
			bad(o, "stats.last_done %llu != xfer.done %llu",
			    (unsigned long long)st.last_done, (unsigned long long)x->done);
		if (st.last_result != (ret < 0 ? ret : 0))
			bad(o, "stats.last_result %d for a call that returned %zd", st.last_result,
			    ret);
	}
	if (sc->op == OP_READ) {
		size_t want = sc->file_off >= sc->file_size ? 0 :
			      (size_t)MIN((off_t)sc->len, sc->file_size - sc->file_off);
		size_t good = ret >= 0 ? (size_t)ret : (size_t)MIN(x->done, sc->len);
		size_t guard_from = ret >= 0 ? sc->buf_off + (size_t)ret : sc->buf_off + sc->len;

		if (ret >= 0 && (size_t)ret != want)
			bad(o, "read returned %zd, expected %zu", ret, want);
		if (ret < 0 && x->done > want)
			bad(o, "xfer.done %llu past end of file (%zu readable)",
			    (unsigned long long)x->done, want);
		if (guard_from > sc->buf_size)
			guard_from = sc->buf_size;
		dmaio_buf_sync_begin(buf, DMAIO_SYNC_READ);
		e = pat_check(p + sc->buf_off, MIN(good, sc->buf_size - sc->buf_off), SEED_FILE,
			      (uint64_t)sc->file_off);
		if (e >= 0) {
			bad(o, "buffer byte %lld of the range (of %zu reported done) is wrong", e,
			    good);
			if (verbose)
				pat_report("range", p + sc->buf_off, good, SEED_FILE,
					   (uint64_t)sc->file_off, e, false);
		}
		e = pat_check(p, sc->buf_off, SEED_GUARD, 0);
		if (e >= 0)
			bad(o, "buffer byte %lld before the range was changed", e);
		e = pat_check(p + guard_from, sc->buf_size - guard_from, SEED_GUARD, guard_from);
		if (e >= 0)
			bad(o, "buffer byte %zu after the %s was changed", guard_from + (size_t)e,
			    ret >= 0 ? "bytes read" : "range");
		dmaio_buf_sync_end(buf, DMAIO_SYNC_READ);
	} else {
		off_t end = sc->file_off + (off_t)sc->len;
		off_t want_size = MAX(end, sc->file_size);
		size_t good = ret >= 0 ? sc->len : (size_t)MIN(x->done, sc->len);
		struct stat stt;

		if (ret >= 0 && (size_t)ret != sc->len)
			bad(o, "write returned %zd, expected %zu", ret, sc->len);
		if (fstat(sc->fd, &stt))
			bad(o, "fstat: %s", strerror(errno));
		else if (ret >= 0 && stt.st_size != want_size)
			bad(o, "file size %lld after a complete write, expected %lld",
			    (long long)stt.st_size, (long long)want_size);
		else if (stt.st_size > want_size)
			bad(o, "file size %lld beyond the end of the range (%lld)",
			    (long long)stt.st_size, (long long)want_size);
		else if (stt.st_size < sc->file_size)
			bad(o, "file shrank to %lld (was %lld)", (long long)stt.st_size,
			    (long long)sc->file_size);
		e = file_check_pattern(sc->fd, 0, (size_t)sc->file_off, SEED_DEST, 0);
		if (e != -1)
			bad(o, "file byte %lld before the range was changed", e);
		if (sc->file_size > end) {
			e = file_check_pattern(sc->fd, end, (size_t)(sc->file_size - end), SEED_DEST,
					       (uint64_t)end);
			if (e != -1)
				bad(o, "file byte %lld after the range was changed", e);
		}
		e = file_check_pattern(sc->fd, sc->file_off, good, SEED_BUF, sc->buf_off);
		if (e != -1)
			bad(o, "file byte %lld of the range (of %zu reported done) is wrong", e, good);
		dmaio_buf_sync_begin(buf, DMAIO_SYNC_READ);
		e = pat_check(p, sc->buf_size, SEED_BUF, 0);
		dmaio_buf_sync_end(buf, DMAIO_SYNC_READ);
		if (e >= 0)
			bad(o, "the write changed buffer byte %lld", e);
	}
}

/* A buffer from dmaio_buf_alloc(): right size and kind, its memory usable. */
static void verify_buf(const struct scen *sc, struct dmaio_buf *buf, struct outcome *o)
{
	size_t sz = dmaio_buf_size(buf);
	uint8_t *p;
	long long e;

	if (sz != sc->buf_size) {
		bad(o, "dmaio_buf_size %zu, asked for %zu", sz, sc->buf_size);
		return;
	}
	if (sc->heap && test_expected_kind(sc->heap) != dmaio_buf_kind(buf))
		bad(o, "kind %d for heap %s", dmaio_buf_kind(buf), sc->heap);
	p = mmap(NULL, sz, PROT_READ | PROT_WRITE, MAP_SHARED, dmaio_buf_fd(buf), 0);
	if (p == MAP_FAILED) {
		bad(o, "the buffer's fd cannot be mapped: %s", strerror(errno));
		return;
	}
	dmaio_buf_sync_begin(buf, DMAIO_SYNC_RW);
	pat_fill(p, sz, SEED_BUF, 0);
	e = pat_check(p, sz, SEED_BUF, 0);
	dmaio_buf_sync_end(buf, DMAIO_SYNC_RW);
	if (e >= 0)
		bad(o, "the buffer does not keep what is written to it (byte %lld)", e);
	munmap(p, sz);
}

/* dmaio_buf_map() result: the address is the buffer (same bytes as a mapping of its fd). */
static void verify_map(struct dmaio_buf *buf, void *addr, struct outcome *o)
{
	size_t sz = dmaio_buf_size(buf);
	uint8_t *p = mmap(NULL, sz, PROT_READ | PROT_WRITE, MAP_SHARED, dmaio_buf_fd(buf), 0);
	long long e;

	if (p == MAP_FAILED) {
		bad(o, "mmap of the buffer fd: %s", strerror(errno));
		return;
	}
	dmaio_buf_sync_begin(buf, DMAIO_SYNC_RW);
	pat_fill(addr, sz, SEED_BUF, 0);
	e = pat_check(p, sz, SEED_BUF, 0);
	dmaio_buf_sync_end(buf, DMAIO_SYNC_RW);
	if (e >= 0)
		bad(o, "dmaio_buf_map address and the buffer differ at byte %lld", e);
	munmap(p, sz);
}

static int alloc_buf(struct dmaio_ctx *ctx, const struct scen *sc, struct dmaio_buf **buf)
{
	return t_alloc(ctx, sc->heap, sc->buf_size, sc->alloc_flags, buf);
}

/* What a scenario runs in: a context, and for I/O and map scenarios a buffer and a mapping of
 * its fd (made by the test, so the library's own mapping is still made by the library). */
struct env {
	struct dmaio_ctx *ctx;
	struct dmaio_buf *buf;
	uint8_t *p;
	int fds0, maps0;
};

static int env_open(const struct scen *sc, struct env *v, struct outcome *o)
{
	int r;

	memset(v, 0, sizeof(*v));
	v->fds0 = test_count_fds();
	v->maps0 = rel_count_lib_maps();
	if (dmaio_ctx_new(0, &v->ctx)) {
		bad(o, "dmaio_ctx_new failed");
		return -1;
	}
	if (sc->op == OP_ALLOC)
		return 0;
	r = alloc_buf(v->ctx, sc, &v->buf);
	if (r) {
		bad(o, "setup: dmaio_buf_alloc %s", test_errname(r));
		return -1;
	}
	if (sc->op == OP_MAP)
		return 0;
	v->p = mmap(NULL, sc->buf_size, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_POPULATE,
		    dmaio_buf_fd(v->buf), 0);
	if (v->p == MAP_FAILED) {
		v->p = NULL;
		bad(o, "setup: mmap of the buffer: %s", strerror(errno));
		return -1;
	}
	return 0;
}

/* Free everything: fds and library mappings must be back to what they were before. */
static void env_close(const struct scen *sc, struct env *v, struct outcome *o)
{
	int fds1, maps1;

	if (v->p)
		munmap(v->p, sc->buf_size);
	dmaio_buf_free(v->buf);
	dmaio_ctx_free(v->ctx);
	fds1 = test_count_fds();
	maps1 = rel_count_lib_maps();
	if (fds1 != v->fds0) {
		bad(o, "%d fds open after dmaio_buf_free + dmaio_ctx_free, %d before", fds1, v->fds0);
		if (verbose)
			rel_dump_fds("after");
	}
	if (maps1 != v->maps0)
		bad(o, "%d memfd/dma-buf/io_uring mappings after dmaio_buf_free + dmaio_ctx_free, %d "
		    "before", maps1, v->maps0);
	memset(v, 0, sizeof(*v));
}

static bool warming_up; /* the first call in a steady environment: it keeps fds and mappings */

/*
 * One operation of @sc in @v: fault @err at call @nth (0: none) and, when @second_at,
 * @second_err there. Everything is checked; o->bad tells the first problem. After a faulted
 * operation the same operation runs again without fault and must succeed.
 */
static void run_op(const struct scen *sc, struct env *v, unsigned long nth, int err,
		   unsigned long second_at, int second_err, bool record, struct outcome *o)
{
	int fds0 = test_count_fds(), maps0 = rel_count_lib_maps(), fds1, maps1, r;
	struct dmaio_buf *abuf = NULL;
	void *addr = NULL;

	memset(o, 0, sizeof(*o));
	o->x.struct_size = sizeof(o->x);
	switch (sc->op) {
	case OP_READ:
	case OP_WRITE:
		prepare(sc, v->buf, v->p);
		hook.record = record;
		arm(nth, err, second_at, second_err);
		o->ret = do_op(sc, v->buf, &o->x);
		o->calls = disarm();
		o->hits = hook.hits;
		if (o->ret >= 0 || is_errno(o->ret))
			verify_rw(sc, v->buf, v->p, o->ret, &o->x, o);
		else
			bad(o, "returned %zd: neither a count nor a negative errno", o->ret);
		if (nth && !o->bad[0]) {
			/* the same call again, no fault: the context and buffer still work */
			struct outcome o2 = { 0 };
			struct dmaio_xfer x2 = { .struct_size = sizeof(struct dmaio_xfer) };
			ssize_t r2;

			prepare(sc, v->buf, v->p);
			r2 = do_op(sc, v->buf, &x2);
			if (r2 < 0)
				bad(o, "the same call without fault afterwards failed: %s",
				    test_errname(r2));
			else
				verify_rw(sc, v->buf, v->p, r2, &x2, &o2);
			if (o2.bad[0])
				bad(o, "the same call without fault afterwards: %s", o2.bad);
		}
		break;
	case OP_ALLOC:
		hook.record = record;
		arm(nth, err, second_at, second_err);
		r = alloc_buf(v->ctx, sc, &abuf);
		o->calls = disarm();
		o->hits = hook.hits;
		o->ret = r;
		if (r == 0) {
			verify_buf(sc, abuf, o);
		} else if (!is_errno(r)) {
			bad(o, "returned %d: neither 0 nor a negative errno", r);
		} else {
			abuf = NULL;
			r = alloc_buf(v->ctx, sc, &abuf);
			if (r)
				bad(o, "dmaio_buf_alloc without fault afterwards failed: %s",
				    test_errname(r));
			else
				verify_buf(sc, abuf, o);
		}
		dmaio_buf_free(abuf);
		break;
	case OP_MAP:
		hook.record = record;
		arm(nth, err, second_at, second_err);
		r = dmaio_buf_map(v->buf, &addr);
		o->calls = disarm();
		o->hits = hook.hits;
		o->ret = r;
		if (r == 0) {
			verify_map(v->buf, addr, o);
		} else if (!is_errno(r)) {
			bad(o, "returned %d: neither 0 nor a negative errno", r);
		} else {
			r = dmaio_buf_map(v->buf, &addr);
			if (r)
				bad(o, "dmaio_buf_map without fault afterwards failed: %s",
				    test_errname(r));
			else
				verify_map(v->buf, addr, o);
		}
		if (r == 0 && dmaio_buf_unmap(v->buf))
			bad(o, "dmaio_buf_unmap failed after a successful map");
		break;
	}
	if (sc->cold || warming_up)
		return; /* the context's first rings, mapping, probes stay: env_close() checks */
	fds1 = test_count_fds();
	maps1 = rel_count_lib_maps();
	if (fds1 != fds0) {
		bad(o, "%d fds open after the call, %d before", fds1, fds0);
		if (verbose)
			rel_dump_fds("after");
	}
	if (maps1 != maps0)
		bad(o, "%d memfd/dma-buf/io_uring mappings after the call, %d before", maps1, maps0);
}

/*
 * One run: in a cold scenario a fresh context and buffer around the operation (the lazy probes,
 * the first mapping and the first ring are then part of it), else the scenario's environment.
 */
static void run_once(const struct scen *sc, struct env *steady, unsigned long nth, int err,
		     unsigned long second_at, int second_err, bool record, struct outcome *o)
{
	struct outcome oc = { 0 };
	struct env v;

	if (!sc->cold) {
		run_op(sc, steady, nth, err, second_at, second_err, record, o);
		return;
	}
	if (env_open(sc, &v, &oc)) {
		env_close(sc, &v, &oc);
		*o = oc;
		return;
	}
	run_op(sc, &v, nth, err, second_at, second_err, record, o);
	env_close(sc, &v, o);
}

/* ---- one scenario ------------------------------------------------------------------------- */
static void test_scenario(void **state)
{
	static struct trace rec[MAX_REC];
	static const char *sites[MAX_REC];
	const struct scen *sc = *state;
	unsigned long N, n, injected = 0, runs = 0, fails0 = total_fail;
	unsigned before = test_failures();
	unsigned ok = 0, errs = 0, pairs = 0;
	struct outcome o, oe = { 0 };
	char chain[600];
	double t0 = test_now();
	struct env v = { 0 };

	rel_set_label("%s: setup", sc->name);
	rel_watchdog(60);
	if (!sc->cold) {
		if (env_open(sc, &v, &oe)) {
			failure(sc, "none", "-", NULL, 0, "%s", oe.bad);
			env_close(sc, &v, &oe);
			assert_no_failures_since(before);
		}
		/*
		 * Warm up: probes, rings, registrations, the library's mapping. This first call on
		 * a fresh buffer is checked like the others: the buffer was filled through a mapping
		 * of its dma-buf fd (as a device or another importer would), before the library
		 * ever touched its pages.
		 */
		warming_up = true;
		run_op(sc, &v, 0, 0, 0, 0, false, &o);
		warming_up = false;
		if (o.bad[0] || (o.ret < 0 && o.ret != -EOPNOTSUPP))
			failure(sc, "none", "-", NULL, 0, "first call on a fresh buffer filled "
				"through its dma-buf fd: %s%s", o.bad[0] ? o.bad : "failed: ",
				o.bad[0] ? "" : test_errname(o.ret));
	}
	rel_set_label("%s: counting run", sc->name);
	hook.rec = rec;
	memset(rec, 0, sizeof(rec));
	run_once(sc, &v, 0, 0, 0, 0, true, &o);
	N = o.calls;
	if (o.bad[0] || o.ret < 0) {
		if (sc->path != DMAIO_PATH_AUTO && o.ret == -EOPNOTSUPP && !o.bad[0]) {
			printf("# %-46s not applicable: the forced path refuses (%s)\n", sc->name,
			       test_errname(o.ret));
			total_na++;
		} else {
			failure(sc, "none", "-", NULL, 0, "the run without faults: %s%s",
				o.bad[0] ? o.bad : "failed: ", o.bad[0] ? "" : test_errname(o.ret));
		}
		if (!sc->cold)
			env_close(sc, &v, &oe);
		rel_watchdog(0);
		assert_no_failures_since(before);
		return;
	}
	total_scen++;
	for (n = 1; n <= N; n++)
		sites[MIN(n, MAX_REC) - 1] = n <= MAX_REC ? site_of(&rec[n - 1], NULL, 0) : "?";
	if (verbose) {
		printf("# %s: %lu seam calls\n", sc->name, N);
		for (n = 1; n <= N && n <= MAX_REC; n++) {
			site_of(&rec[n - 1], chain, sizeof(chain));
			printf("#   %3lu %s\n", n, chain);
		}
	}

	for (n = 1; n <= N; n++) {
		for (size_t f = 0; f < ARRAY_SIZE(faults); f++) {
			int err = faults[f];
			const char *site = sites[MIN(n, MAX_REC) - 1];

			rel_set_label("%s: fault %s at call %lu (%s)", sc->name, fault_name(err), n,
				      site);
			rel_watchdog(60);
			run_once(sc, &v, n, err, 0, 0, false, &o);
			runs++;
			total_runs++;
			if (o.hits) {
				injected++;
				site = site_of(&hook.hit[0], chain, sizeof(chain));
			} else {
				site_of(&rec[MIN(n, MAX_REC) - 1], chain, sizeof(chain));
				bad(&o, "call %lu was not reached (the run made %lu calls)", n,
				    o.calls);
			}
			if (!o.bad[0] && o.ret < 0 && must_succeed(site, chain, err))
				bad(&o, "returned %s after an injected transient %s (not retried)",
				    test_errname(o.ret), fault_name(err));
			if (o.bad[0])
				failure(sc, fault_name(err), site, chain, n, "%s", o.bad);
			if (o.ret < 0) {
				errs++;
				total_err_runs++;
			} else {
				ok++;
				total_ok_runs++;
				if (err == EINTR || err == EAGAIN || err == 0)
					total_transient_ok++;
			}
		}
	}
	/* a short count, then a failure of the call right after it (mostly its retry) */
	for (n = 1; n < N && n <= MAX_REC; n++) {
		const char *site = sites[n - 1];
		size_t used;

		if (!is_data_site(site))
			continue;
		rel_set_label("%s: short at call %lu (%s), EIO at %lu", sc->name, n, site, n + 1);
		rel_watchdog(60);
		run_once(sc, &v, n, 0, n + 1, EIO, false, &o);
		runs++;
		total_runs++;
		pairs++;
		injected += (unsigned long)o.hits;
		site_of(o.hits ? &hook.hit[0] : &rec[n - 1], chain, sizeof(chain));
		used = strlen(chain);
		if (o.hits >= 2) {
			snprintf(chain + used, sizeof(chain) - used, ", then EIO at ");
			used = strlen(chain);
			site_of(&hook.hit[1], chain + used, sizeof(chain) - used);
		} else {
			snprintf(chain + used, sizeof(chain) - used, ", then no further seam call");
		}
		if (o.bad[0])
			failure(sc, "short+EIO", site, chain, n, "%s", o.bad);
		if (o.ret < 0) {
			errs++;
			total_err_runs++;
		} else {
			ok++;
			total_ok_runs++;
		}
	}
	if (!sc->cold) {
		rel_set_label("%s: teardown", sc->name);
		env_close(sc, &v, &oe);
		if (oe.bad[0])
			failure(sc, "none", "-", NULL, 0, "at the end of the scenario: %s", oe.bad);
	}
	rel_watchdog(0);
	total_injected += injected;
	printf("# %-46s N=%3lu calls, %4lu runs (%2u short+EIO), %4lu faults: %3u ok, %3u errors, "
	       "%lu failures (%.1f s)\n", sc->name, N, runs, pairs, injected, ok, errs,
	       total_fail - fails0, test_now() - t0);
	fflush(stdout);
	assert_no_failures_since(before);
}

/* ---- real signals ------------------------------------------------------------------------- */
/*
 * Not injected: SIGUSR1 every 50 us (a handler without SA_RESTART) while buffers are allocated
 * and files read and written. What the kernel really interrupts (hugetlbfs fallocate returns
 * EINTR on any pending signal, older kernels' shmem fallocate too; io_uring waits) must not
 * reach the caller.
 */
static volatile sig_atomic_t storm_ticks;

static void storm_handler(int sig)
{
	(void)sig;
	storm_ticks++;
}

static unsigned long storm_fail;

struct storm_result {
	unsigned allocs, ios, fails;
	int ticks;
	char first[3][200];
};

static void storm_note(struct storm_result *res, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

static void storm_note(struct storm_result *res, const char *fmt, ...)
{
	va_list ap;

	if (res->fails < 3) {
		va_start(ap, fmt);
		vsnprintf(res->first[res->fails], sizeof(res->first[0]), fmt, ap);
		va_end(ap);
	}
	res->fails++;
}

/* One child: a fresh process (its first ring and io-wq worker are made under the signals). */
static void storm_child(const char *const *heaps, unsigned nh, int src, off_t src_size, int dst,
			struct storm_result *res)
{
	size_t asize = (args.quick ? 2 : 16) * MiB, iolen = (args.quick ? 256 : 1024) * KiB + 123;
	/* every 50 us; every 2 ms under valgrind and sanitizers, which deliver signals slowly */
	long ns = args.quick ? 2000000 : 50000;
	struct itimerspec its = { { 0, ns }, { 0, ns } };
	struct sigevent sev = { 0 };
	struct sigaction sa = { 0 };
	struct dmaio_buf *b = NULL;
	timer_t tm;

	sa.sa_handler = storm_handler;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGUSR1, &sa, NULL);
	sev.sigev_notify = SIGEV_SIGNAL;
	sev.sigev_signo = SIGUSR1;
	if (timer_create(CLOCK_MONOTONIC, &sev, &tm)) {
		storm_note(res, "timer_create: %s", strerror(errno));
		return;
	}
	timer_settime(tm, 0, &its, NULL);
	for (unsigned h = 0; h < nh; h++) {
		for (int i = 0; i < (args.quick ? 2 : 4); i++) {
			int r = t_alloc(NULL, heaps[h], asize, 0, &b);

			res->allocs++;
			if (r == 0)
				dmaio_buf_free(b);
			else
				storm_note(res, "dmaio_buf_alloc(%s, %zu) = %s", heaps[h], asize,
					   test_errname(r));
		}
	}
	if (t_alloc(NULL, args.heap_name, iolen + 8192, 0, &b) == 0) {
		for (size_t pi = 0; pi < ARRAY_SIZE(paths); pi++) {
			for (int i = 0; i < 4; i++) {
				bool w = i & 1;
				ssize_t n;

				n = w ? dmaio_fd_write(dst, 4095, b, 1, iolen, rw_flags(paths[pi]), NULL) :
					dmaio_fd_read(src, 4095, b, 1, MIN(iolen, (size_t)src_size - 4095), rw_flags(paths[pi]), NULL);
				res->ios++;
				if (n < 0 && n != -EOPNOTSUPP)
					storm_note(res, "%s via %s = %s", w ? "write" : "read",
						   dmaio_path_name(paths[pi]), test_errname(n));
			}
		}
		dmaio_buf_free(b);
	}
	timer_delete(tm);
	res->ticks = (int)storm_ticks;
}

static int storm_src = -1, storm_dst = -1;
static off_t storm_src_size;

static void test_signals(void **state)
{
	int src = storm_src, dst = storm_dst;
	off_t src_size = storm_src_size;
	unsigned before = test_failures();

	const char *heaps[3] = { "memfd", NULL, NULL };
	unsigned allocs = 0, ios = 0, na = 0, nh = 1, nchild = args.quick ? 2 : 6;
	long ticks = 0;

	(void)state;
	if (args.heap_name && strcmp(args.heap_name, "memfd"))
		heaps[nh++] = args.heap_name;
	if (!access("/dev/udmabuf", R_OK | W_OK) && (!args.heap_name ||
						     strcmp(args.heap_name, "udmabuf-huge"))) {
		/* hugetlbfs fallocate stops at any signal; applicable when it works without */
		struct dmaio_buf *b = NULL;

		if (t_alloc(NULL, "udmabuf-huge", (args.quick ? 2 : 16) * MiB, 0, &b) == 0) {
			heaps[nh++] = "udmabuf-huge";
			dmaio_buf_free(b);
		} else {
			na++;
		}
	}
	rel_set_label("signals");
	rel_watchdog(120);
	for (unsigned c = 0; c < nchild; c++) {
		struct storm_result res = { 0 };
		int pfd[2], st = 0;
		pid_t pid;

		if (pipe2(pfd, O_CLOEXEC)) {
			printf("# signals: pipe2: %s, skipped\n", strerror(errno));
			break;
		}
		fflush(NULL);
		pid = fork();
		if (pid == 0) {
			rel_set_label("signals, process %u", c);
			rel_watchdog(60);
			storm_child(heaps, nh, src, src_size, dst, &res);
			(void)!write(pfd[1], &res, sizeof(res));
			_exit(0);
		}
		close(pfd[1]);
		if (pid < 0 || read(pfd[0], &res, sizeof(res)) != (ssize_t)sizeof(res)) {
			res.fails = 1;
			snprintf(res.first[0], sizeof(res.first[0]), "the child process died");
		}
		close(pfd[0]);
		if (pid > 0)
			waitpid(pid, &st, 0);
		allocs += res.allocs;
		ios += res.ios;
		ticks += res.ticks;
		for (unsigned k = 0; k < res.fails && k < 3; k++)
			test_fail("signals (process %u, SIGUSR1 every %s): %s", c,
				  args.quick ? "2 ms" : "50 us", res.first[k]);
		if (res.fails > 3)
			test_fail_count(res.fails - 3);
		storm_fail += res.fails;
		total_fail += res.fails;
	}
	rel_watchdog(0);
	printf("# signals: %u processes, %u allocations (%s%s%s%s%s) and %u reads/writes with %ld "
	       "signals delivered: %lu failures%s\n", nchild, allocs, heaps[0], nh > 1 ? ", " : "",
	       nh > 1 ? heaps[1] : "", nh > 2 ? ", " : "", nh > 2 ? heaps[2] : "", ios, ticks,
	       storm_fail, na ? " (udmabuf-huge does not allocate here)" : "");
	assert_no_failures_since(before);
}

/* ---- main --------------------------------------------------------------------------------- */
static int make_file(const char *what, off_t size, uint64_t seed)
{
	int fd = test_tmpfile(NULL, NULL, 0);

	if (size && file_fill_pattern(fd, 0, (size_t)size, seed)) {
		fprintf(stderr, "cannot write the %s file\n", what);
		exit(1);
	}
	return fd;
}

int main(int argc, char **argv)
{
	struct { const char *name; size_t buf_off; off_t file_off; size_t len; } ranges[3];
	char *kept[argc + 1];
	int nkept = 0, nscen = 0;
	struct scen *sc = calloc(64, sizeof(*sc));
	struct dmaio_buf *probe = NULL;
	struct CMUnitTest *tests;
	int r, ntests = 0;

	for (int i = 0; i < argc; i++) {
		if (!strcmp(argv[i], "--only") && i + 1 < argc)
			only = argv[++i];
		else if (!strcmp(argv[i], "--verbose") || !strcmp(argv[i], "-v"))
			verbose = true;
		else
			kept[nkept++] = argv[i];
	}
	kept[nkept] = NULL;
	test_parse_args(nkept, kept, &args, "memfd");
	setvbuf(stdout, NULL, _IOLBF, 0);
	rel_install_crash_label();
	{
		void *bt[4];

		backtrace(bt, 4); /* load the unwinder now, not inside the first counted run */
		rel_sym((void *)main, NULL);
	}
	if (!rel_sym((void *)__wrap_dmaio_fault_hit, NULL))
		printf("# no symbol table: fault sites are shown as \"?\" and the transient-fault "
		       "policy is not applied per call\n");

	/* the buffer provider exists? (77 when not, "memfd" always does) */
	r = test_alloc_or_skip(NULL, args.heap_name, 4096, 0, &probe);
	if (r) {
		fprintf(stderr, "dmaio_buf_alloc(%s) = %s\n", args.heap, test_errname(r));
		return 1;
	}
	dmaio_buf_free(probe);

	if (!args.quick) {
		ranges[0].name = "unaligned";
		ranges[0].buf_off = 4097, ranges[0].file_off = 513, ranges[0].len = 3 * MiB + 123;
		ranges[1].name = "aligned";
		ranges[1].buf_off = 64 * KiB, ranges[1].file_off = (off_t)MiB, ranges[1].len = 4 * MiB;
		ranges[2].name = "eof";
		ranges[2].buf_off = 8192, ranges[2].file_off = 12288, ranges[2].len = 2 * MiB + 4096;
	} else {
		ranges[0].name = "unaligned";
		ranges[0].buf_off = 4097, ranges[0].file_off = 513, ranges[0].len = 160 * KiB + 123;
		ranges[1].name = "aligned";
		ranges[1].buf_off = 64 * KiB, ranges[1].file_off = 128 * KiB, ranges[1].len = 256 * KiB;
		ranges[2].name = "eof";
		ranges[2].buf_off = 8192, ranges[2].file_off = 12288, ranges[2].len = 192 * KiB + 4096;
	}
	printf("# heap %s, test files in %s%s\n", args.heap, test_dir(),
	       args.quick ? ", quick sizes" : "");

	for (int op = OP_READ; op <= OP_WRITE; op++) {
		for (size_t ri = 0; ri < ARRAY_SIZE(ranges); ri++) {
			off_t fsize;
			int fd;

			if (op == OP_WRITE && ri == 2)
				continue; /* eof: reads only */
			if (op == OP_READ) {
				/* unaligned: inside the file; aligned: ends at end of file; eof: the
				 * file ends 1 MiB + 5000 bytes before the end of the range */
				fsize = ranges[ri].file_off + (off_t)ranges[ri].len;
				if (ri == 0)
					fsize += 4096 + 7;
				if (ri == 2)
					fsize -= (off_t)(args.quick ? 64 * KiB : MiB) + 5000;
				fd = make_file("source", fsize, SEED_FILE);
			} else {
				/* unaligned: the file goes on 5000 bytes after the range; aligned: it
				 * ends in the middle of the range (the write makes it grow) */
				fsize = ranges[ri].file_off + (off_t)ranges[ri].len;
				fsize = ri == 0 ? fsize + 5000 :
					ranges[ri].file_off + (off_t)ranges[ri].len / 2;
				fd = make_file("destination", 0, 0);
			}
			if (op == OP_READ && ri == 0) {
				storm_src = fd;
				storm_src_size = fsize;
			}
			if (op == OP_WRITE && ri == 0)
				storm_dst = fd;
			for (size_t pi = 0; pi < ARRAY_SIZE(paths); pi++) {
				struct scen *s = &sc[nscen++];

				snprintf(s->name, sizeof(s->name), "%s %s %s", op == OP_READ ? "read" :
					 "write", ranges[ri].name, dmaio_path_name(paths[pi]));
				s->op = (enum op)op;
				s->path = paths[pi];
				s->heap = args.heap_name;
				s->buf_off = ranges[ri].buf_off;
				s->file_off = ranges[ri].file_off;
				s->len = ranges[ri].len;
				s->buf_size = s->buf_off + s->len + 8 * KiB + 1;
				s->file_size = fsize;
				s->fd = fd;
			}
		}
	}
	/* cold: a fresh context and buffer per run, smaller (first probes, mapping, ring) */
	{
		static const int cold_paths[] = { DMAIO_PATH_UDMABUF_DIRECT, DMAIO_PATH_BOUNCE_DIRECT,
						  DMAIO_PATH_SENDFILE, DMAIO_PATH_AUTO };
		size_t len = (args.quick ? 96 * KiB : MiB) + 123;
		int src = make_file("source", 513 + (off_t)len + 4096, SEED_FILE);
		int dst = make_file("destination", 0, 0);

		for (int op = OP_READ; op <= OP_WRITE; op++) {
			for (size_t pi = 0; pi < ARRAY_SIZE(cold_paths); pi++) {
				struct scen *s = &sc[nscen++];

				snprintf(s->name, sizeof(s->name), "cold %s unaligned %s",
					 op == OP_READ ? "read" : "write",
					 dmaio_path_name(cold_paths[pi]));
				s->op = (enum op)op;
				s->path = cold_paths[pi];
				s->heap = args.heap_name;
				s->buf_off = 4097;
				s->file_off = 513;
				s->len = len;
				s->buf_size = s->buf_off + s->len + 4 * KiB + 1;
				s->file_size = op == OP_READ ? 513 + (off_t)len + 4096 :
					       513 + (off_t)len + 5000;
				s->fd = op == OP_READ ? src : dst;
				s->cold = true;
			}
		}
	}
	/* allocations: "memfd", the --heap, heap NULL (cold: the probes run in it; a memfd is
	 * allowed as the last resort) */
	{
		const char *heaps[3] = { "memfd", NULL, NULL };
		int nh = 1;

		if (args.heap_name && strcmp(args.heap_name, "memfd"))
			heaps[nh++] = args.heap_name;
		for (int i = 0; i <= nh; i++) {
			struct scen *s = &sc[nscen++];

			s->op = OP_ALLOC;
			s->heap = i < nh ? heaps[i] : NULL;
			s->alloc_flags = i < nh ? 0 : DMAIO_ALLOC_ALLOW_NON_DMABUF;
			s->buf_size = (args.quick ? 128 * KiB : MiB) + 1;
			s->cold = i == nh;
			snprintf(s->name, sizeof(s->name), "alloc %s", s->heap ? s->heap : "(NULL)");
		}
	}
	{
		struct scen *s = &sc[nscen++];

		s->op = OP_MAP;
		s->heap = args.heap_name;
		s->buf_size = (args.quick ? 128 * KiB : MiB) + 1;
		snprintf(s->name, sizeof(s->name), "map %s", args.heap);
	}

	/* a cmocka test per scenario (--only: those whose name has it), then the real signals */
	tests = calloc((size_t)nscen + 1, sizeof(*tests));
	if (!tests)
		return 1;
	for (int i = 0; i < nscen; i++) {
		if (only && !strstr(sc[i].name, only))
			continue;
		tests[ntests].name = sc[i].name;
		tests[ntests].test_func = test_scenario;
		tests[ntests].initial_state = &sc[i];
		ntests++;
	}
	if (!only || strstr("signals", only)) {
		tests[ntests].name = "signals";
		tests[ntests].test_func = test_signals;
		ntests++;
	}
	r = _cmocka_run_group_tests("fault", tests, (size_t)ntests, NULL, NULL);
	free(tests);

	printf("injected %lu faults over %lu scenarios (%lu runs: %lu complete successes, %lu "
	       "clean errors; %lu transient faults absorbed; %lu scenarios not applicable)\n",
	       total_injected, total_scen, total_runs, total_ok_runs, total_err_runs,
	       total_transient_ok, total_na);
	if (total_fail) {
		if (storm_fail)
			printf("%lu failures under real signals (above)\n", storm_fail);
		if (total_fail > storm_fail)
			printf("%lu failures in %u classes:\n", total_fail - storm_fail, nclasses);
		for (unsigned i = 0; i < nclasses; i++)
			printf("  [%u x] %s\n", classes[i].n, classes[i].first);
	}
	free(sc);
	return r ? 1 : 0;
}
