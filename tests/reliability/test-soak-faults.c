// SPDX-License-Identifier: MIT
/*
 * test-soak-faults: the faults together, for a fixed time, over synchronous and queued I/O.
 *
 * Four worker threads, each with a context, a buffer (--heap), a source file, a destination
 * file and a long-lived queue of its own, loop over:
 *   - dmaio_fd_read / dmaio_fd_write on the plain descriptors,
 *   - dmaio_file_read / dmaio_file_write on the registered files,
 *   - batches of 2 to 6 ranges (reads and writes) through the worker's queue
 *     (dmaio_queue_submit / dmaio_queue_reap),
 *   - now and then a batch through a new queue over files registered anew (freed after it),
 * with the path rotating over auto and every forced path (DMAIO_RW_PATH(p), fallback allowed),
 * lengths from 1 byte to 1 MiB + 777, offsets page-aligned or not, reads that cross or start past
 * the end of the source file. Every range is checked byte by byte against position-encoded
 * patterns (common.h): the bytes of the range, and 8 KiB of guard bytes on each side of it in
 * the destination (the buffer for reads, the file for writes); the source of a write must not
 * change. The buffer outside the ranges holds a guard pattern and the destination file its own
 * pattern the whole time; both files and the whole buffer are checked every 40 operations and
 * at the end (nothing written anywhere else).
 *
 * Meanwhile:
 *   - forks: a thread forks every 50 ms; the child makes one synchronous read into a buffer it
 *     inherited and one queued read (a new queue) through a registered file it inherited,
 *     checks both byte by byte and exits 0. A child still running after 20 s (x10 in the VM
 *     and with DMAIO_TEST_QUICK) hung: its threads' stacks are printed (gdb, when installed),
 *     it is killed, a failure. In an AddressSanitizer build the forks wait until every worker
 *     is between two operations (GCC 12's libasan allocator is not fork-safe: see fork_gate);
 *   - a signal storm: SIGUSR1 (a handler without SA_RESTART) to every worker thread every
 *     100 us (pthread_kill); nothing may return -EINTR;
 *   - injected faults: the static fault-injection build, dmaio_fault_hit() wrapped
 *     (-Wl,--wrap=dmaio_fault_hit). During an operation of a worker (its own thread, or one of
 *     its context's worker threads: pthread_create is wrapped too, so the library's threads are
 *     known by the worker that started them) a seam call fails now and then (1 in
 *     DMAIO_SOAK_FAULT_ODDS, default 40 calls), at most one fault at a time in the process (the
 *     seam reads the errno from one global) and one per operation: transient (EINTR, EAGAIN,
 *     a short count at a data call) must be invisible, the operation complete and exact; hard
 *     (EIO, ENOSPC, ENOMEM) must end each range either complete and exact or with exactly that
 *     -errno, done (xfer.done, dmaio_done.done) counting bytes that are right in the
 *     destination, nothing outside the range touched. Where a hard fault ended (surfaced with
 *     its errno, or absorbed: every range complete) is counted per seam call (its site, read
 *     from this executable's symbol table);
 *   - RLIMIT_NOFILE: every 2 s, for 200 ms, the main thread lowers it to leave 0 to 2
 *     descriptors free. Every transfer must still work; only a new queue or a new registration
 *     may fail then, with -EMFILE (an EMFILE event), and only while the limit is low. No fork
 *     meanwhile (a child would inherit the limit);
 *   - RLIMIT_FSIZE: worker 0 writes across a limit (64 MiB + 1536, + 1000 or + 4096) on a file
 *     of its own every 12 operations, the limit set around that write only (the other files
 *     stay below 16 MiB; SIGXFSZ ignored), through dmaio_fd_write, dmaio_file_write or its
 *     queue: -EFBIG with done every byte below the limit (through rw-file at most those), those
 *     bytes in the file, nothing at or past the limit, the 8 KiB before the range untouched.
 * At the end everything is freed: the open fds and the library's mappings (rel_count_lib_maps)
 * must be what they were before.
 *
 * Usage: test-soak-faults [--heap NAME]
 * Env:   DMAIO_SOAK_SECONDS (default 45; 15 with DMAIO_TEST_QUICK=1, 20 in the VM,
 *        DMAIO_TEST_VM=1), DMAIO_SOAK_SEED (the random seed; printed), DMAIO_SOAK_FAULT_ODDS,
 *        DMAIO_TEST_DIRS.
 * Prints: the faults by seam call ("# faults by seam call ..."), then one summary line
 *        "soak-faults: S s, heap H, seed N: sync reads N, sync writes N, queued ranges N
 *        (batches N, fresh N), bytes verified N; forks N (ok N, hung N, failed N); signals sent
 *        N (handled N); faults N (transient N: absorbed N; hard N: right errno N (N with done
 *        > 0), absorbed N); EMFILE N (windows N, transfers in them N); EFBIG checks N; fds
 *        B/A, maps B/A; failures N" (a hard fault is absorbed when every range of its
 *        operation completed: e.g. an O_DIRECT reopen that failed, the page cache served).
 */
#include <dirent.h>
#include <errno.h>
#include <execinfo.h>
#include <fcntl.h>
#include <pthread.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "common.h"
#include "rel.h"

/* lib/sys/fault.h is private: the errno the seam injects when dmaio_fault_hit() says so */
extern int dmaio_fault_err;

#define NWORKERS 4
#define BSZ (8u << 20)                    /* each worker's buffer */
#define SSZ ((8u << 20) + 3333)           /* source files: the end not aligned */
#define DSZ (8u << 20)                    /* destination files: never grow */
#define MAXLEN ((1u << 20) + 777)         /* the longest range */
#define GUARD_LEN 8192u                   /* guard bytes checked on each side of a range */
#define MAXRANGES 6                       /* ranges of a batch */
#define FULL_CHECK_EVERY 40               /* operations between checks of everything */
#define FSIZE_EVERY 12                    /* worker 0: operations between writes across FSIZE */
#define FSIZE_BASE (64ull << 20)
#define FORK_BSZ (2u << 20)
#define FORK_SSZ (4u << 20)
#define FORK_MAXLEN ((512u << 10) + 11)
#define SEED_FORK 0x666f726b73726300ull

static struct test_args args;

/* ---- counters -------------------------------------------------------------------------------- */
static struct {
	unsigned long sync_reads, sync_writes, queued, batches, fresh, bytes;
	unsigned long forks_ok, forks_hung, forks_failed;
	unsigned long sig_sent, sig_handled;
	unsigned long f_transient, f_transient_ok, f_hard, f_hard_surfaced, f_hard_absorbed;
	unsigned long f_partial;  /* surfaced with done > 0: a prefix moved and checked */
	unsigned long emfile, windows, in_window, efbig;
} tot;

#define ADD(field, n) __atomic_add_fetch(&tot.field, (unsigned long)(n), __ATOMIC_RELAXED)

static int stop; /* atomic: the soak is over */

static bool stopped(void)
{
	return __atomic_load_n(&stop, __ATOMIC_RELAXED);
}

/* ---- random numbers -------------------------------------------------------------------------- */
static uint64_t soak_seed;

static uint64_t rnd(uint64_t *s)
{
	uint64_t x = (*s += 0x9e3779b97f4a7c15ull);

	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
	x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
	return x ^ (x >> 31);
}

/* 0 .. n - 1 (n > 0) */
static uint64_t below(uint64_t *s, uint64_t n)
{
	return rnd(s) % n;
}

/* ---- the workers ----------------------------------------------------------------------------- */
struct worker {
	int id;
	pthread_t th;
	struct dmaio_ctx *ctx;
	struct dmaio_buf *buf;
	uint8_t *map;
	int src, dst, fsz;                       /* fds; fsz: worker 0 only (RLIMIT_FSIZE) */
	struct dmaio_file *rsrc, *rdst, *rfsz;
	struct dmaio_queue *q;
	uint64_t rng;
	unsigned path_ctr;
	unsigned long ops;
	bool broken;                             /* a range did not complete: stop */
	/* the fault of the current operation, written by the wrapper (any thread of the worker) */
	int armed;                               /* atomic */
	int fault;                               /* atomic: 0, an errno, or FAULT_SHORT */
	int fault_site;                          /* index in sites[] */
};

static struct worker workers[NWORKERS];

static uint64_t src_seed(const struct worker *w)
{
	return SEED_FILE + (uint64_t)w->id;
}

static uint64_t dst_seed(const struct worker *w)
{
	return SEED_DEST + (uint64_t)w->id;
}

static uint64_t guard_seed(const struct worker *w)
{
	return SEED_GUARD + (uint64_t)w->id;
}

/* ---- fault injection ------------------------------------------------------------------------- */
/*
 * The seam (lib/sys) asks dmaio_fault_hit() before each call into the kernel; when it answers 1
 * the call fails with the errno in the global dmaio_fault_err (0: a data call moves half of
 * what it was asked). One global: so one fault at a time in the process (fault_token), set by
 * the thread that injects it, which reads it right after.
 */
#define FAULT_SHORT (-1)

static __thread struct worker *owner;  /* the worker this thread (or the library's) works for */
static __thread uint64_t thread_rng;
static int fault_token;                 /* atomic: 0, or the id + 1 of the worker holding it */
static int fault_off;                   /* in a child: nothing injected */
static unsigned fault_odds = 40;

static const char *const sites[] = {
	"?", "sys_pread", "sys_pwrite", "sys_copy_file_range", "sys_splice", "sys_uring_result",
	"sys_ioctl", "sys_open", "sys_dup", "sys_memfd_create", "sys_ftruncate", "sys_fallocate",
	"sys_mmap", "sys_pipe", "sys_fsync",
};
#define NSITES ARRAY_SIZE(sites)
#define FIRST_NON_DATA_SITE 6

static struct {
	unsigned long transient, transient_ok, hard, surfaced, absorbed;
} by_site[NSITES];

/* The seam function the current fault is in: the first sys_* (or raw_*, inlined into it)
 * function of the call chain. */
static int fault_site_now(void)
{
	void *bt[8];
	int n = backtrace(bt, 8);

	for (int i = 1; i < n; i++) {
		const char *s = rel_sym((char *)bt[i] - 1, NULL);
		size_t l;

		if (!s || (strncmp(s, "sys_", 4) && strncmp(s, "raw_", 4)))
			continue;
		s += 4;
		l = strlen(s);
		if (l > 5 && !strcmp(s + l - 5, "_full"))
			l -= 5; /* sys_pread_full: sys_pread inlined */
		for (size_t k = 1; k < NSITES; k++)
			if (strlen(sites[k] + 4) == l && !strncmp(sites[k] + 4, s, l))
				return (int)k;
		return 0;
	}
	return 0;
}

int __real_dmaio_fault_hit(void);
int __wrap_dmaio_fault_hit(void);

int __wrap_dmaio_fault_hit(void)
{
	static const int kinds[] = { EINTR, EAGAIN, FAULT_SHORT, EIO, ENOSPC, ENOMEM };
	struct worker *w = owner;
	int free_token = 0, kind, site;

	if (__real_dmaio_fault_hit())
		return 1; /* dmaio_fault_nth is never set here */
	if (!w || __atomic_load_n(&fault_off, __ATOMIC_RELAXED) ||
	    !__atomic_load_n(&w->armed, __ATOMIC_ACQUIRE))
		return 0;
	if (!thread_rng)
		thread_rng = soak_seed ^ (uint64_t)(uintptr_t)&thread_rng;
	if (below(&thread_rng, fault_odds))
		return 0;
	if (!__atomic_compare_exchange_n(&fault_token, &free_token, w->id + 1, false,
					 __ATOMIC_ACQUIRE, __ATOMIC_RELAXED))
		return 0; /* a fault is in flight somewhere */
	if (!__atomic_load_n(&w->armed, __ATOMIC_ACQUIRE)) {
		__atomic_store_n(&fault_token, 0, __ATOMIC_RELEASE);
		return 0;
	}
	site = fault_site_now();
	kind = kinds[below(&thread_rng, ARRAY_SIZE(kinds))];
	if (kind == FAULT_SHORT && (site == 0 || site >= FIRST_NON_DATA_SITE))
		kind = EINTR; /* a short count is a data call's; elsewhere the seam makes it EIO */
	dmaio_fault_err = kind == FAULT_SHORT ? 0 : kind;
	w->fault_site = site;
	__atomic_store_n(&w->fault, kind, __ATOMIC_RELEASE);
	return 1;
}

/* The library's threads: they work for the worker whose call started them. */
int __real_pthread_create(pthread_t *th, const pthread_attr_t *attr, void *(*fn)(void *),
			  void *arg);
int __wrap_pthread_create(pthread_t *th, const pthread_attr_t *attr, void *(*fn)(void *),
			  void *arg);

/* A slot per thread started (no malloc/free: see fork_gate below); the library starts at most
 * 4 per context here. */
#define NTRAMPS 256

static struct tramp {
	void *(*fn)(void *);
	void *arg;
	struct worker *owner;
} tramps[NTRAMPS];
static unsigned ntramps; /* atomic */

static void *tramp_main(void *p)
{
	struct tramp *t = p;

	owner = t->owner;
	return t->fn(t->arg);
}

int __wrap_pthread_create(pthread_t *th, const pthread_attr_t *attr, void *(*fn)(void *),
			  void *arg)
{
	struct tramp *t;
	unsigned i;

	if (!owner)
		return __real_pthread_create(th, attr, fn, arg);
	i = __atomic_fetch_add(&ntramps, 1, __ATOMIC_RELAXED);
	if (i >= NTRAMPS)
		return __real_pthread_create(th, attr, fn, arg); /* no faults in that thread */
	t = &tramps[i];
	t->fn = fn;
	t->arg = arg;
	t->owner = owner;
	return __real_pthread_create(th, attr, tramp_main, t);
}

/* Around each library call of an operation: faults may be injected in between. */
static void arm(struct worker *w)
{
	int mine = w->id + 1;

	/* a token left from before (cannot happen: a seam call of an operation ends before it) */
	__atomic_compare_exchange_n(&fault_token, &mine, 0, false, __ATOMIC_RELEASE,
				    __ATOMIC_RELAXED);
	__atomic_store_n(&w->fault, 0, __ATOMIC_RELAXED);
	w->fault_site = 0;
	__atomic_store_n(&w->armed, 1, __ATOMIC_RELEASE);
}

/* The fault injected since arm(): 0, an errno, FAULT_SHORT. */
static int disarm(struct worker *w)
{
	int mine = w->id + 1, f;

	__atomic_store_n(&w->armed, 0, __ATOMIC_RELEASE);
	f = __atomic_load_n(&w->fault, __ATOMIC_ACQUIRE);
	__atomic_compare_exchange_n(&fault_token, &mine, 0, false, __ATOMIC_RELEASE,
				    __ATOMIC_RELAXED);
	return f;
}

static bool is_hard(int f)
{
	return f == EIO || f == ENOSPC || f == ENOMEM;
}

static const char *fault_name(int f)
{
	return f == 0 ? "none" : f == FAULT_SHORT ? "short count" : test_errname(-f);
}

/* ---- fork and AddressSanitizer --------------------------------------------------------------- */
/*
 * GCC 12's libasan takes no lock of its allocator around fork(): a child forked while another
 * thread is inside malloc() or free() blocks in its first allocation for ever (gdb:
 * SizeClassAllocator64::GetFromAllocator, Mutex::Lock, from the child's first library call).
 * glibc's malloc is fork-safe. So in an ASan build the forker waits until every worker is
 * between two operations (then no thread of the process allocates: the library's threads of a
 * worker are idle once its operation returned); other builds fork in the middle of operations.
 */
#if defined(__SANITIZE_ADDRESS__)
#define SOAK_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define SOAK_ASAN 1
#endif
#endif

#ifdef SOAK_ASAN
static pthread_rwlock_t fork_gate; /* workers: read lock per operation; forker: write lock */

static void fork_gate_init(void)
{
	pthread_rwlockattr_t a;

	pthread_rwlockattr_init(&a);
	pthread_rwlockattr_setkind_np(&a, PTHREAD_RWLOCK_PREFER_WRITER_NONRECURSIVE_NP);
	pthread_rwlock_init(&fork_gate, &a);
	pthread_rwlockattr_destroy(&a);
}
#define gate_enter() pthread_rwlock_rdlock(&fork_gate)
#define gate_leave() pthread_rwlock_unlock(&fork_gate)
#define gate_close() pthread_rwlock_wrlock(&fork_gate)
#define gate_open() pthread_rwlock_unlock(&fork_gate)
#define FORKS_BETWEEN_OPS true
#else
static void fork_gate_init(void)
{
}
#define gate_enter() ((void)0)
#define gate_leave() ((void)0)
#define gate_close() ((void)0)
#define gate_open() ((void)0)
#define FORKS_BETWEEN_OPS false
#endif

/* ---- RLIMIT_NOFILE windows ------------------------------------------------------------------- */
static pthread_mutex_t limits_lock = PTHREAD_MUTEX_INITIALIZER; /* no fork in a window */
static unsigned pressure;                                        /* atomic: odd in a window */

static unsigned pressure_now(void)
{
	return __atomic_load_n(&pressure, __ATOMIC_ACQUIRE);
}

/* -EMFILE of a new queue or registration is allowed when a window was open during the call
 * (and a transfer counts as one made in a window). */
static bool emfile_allowed(unsigned before)
{
	return (before & 1) || pressure_now() != before;
}

/* ---- one range ------------------------------------------------------------------------------- */
enum via { VIA_FD, VIA_FILE, VIA_QUEUE, VIA_FRESH };
static const char *const via_name[] = { "fd", "file", "queue", "fresh queue" };

struct range {
	bool write;
	enum via via;
	uint32_t flags;
	uint64_t boff, off, len;
	/* results */
	int64_t res;
	uint64_t done;
	uint32_t path;
	bool completed;
};

static void cpu_begin(struct worker *w)
{
	dmaio_buf_sync_begin(w->buf, DMAIO_SYNC_RW);
}

static void cpu_end(struct worker *w)
{
	dmaio_buf_sync_end(w->buf, DMAIO_SYNC_RW);
}

static uint32_t next_flags(struct worker *w)
{
	return DMAIO_RW_PATH(w->path_ctr++ % DMAIO_PATH_COUNT); /* 0: auto */
}

static uint64_t rand_len(struct worker *w, uint64_t max)
{
	uint64_t len;

	switch (below(&w->rng, 5)) {
	case 0:
		len = 1 + below(&w->rng, 4096);
		break;
	case 1:
		len = 4096 + below(&w->rng, 252u << 10);
		break;
	case 2:
		len = (256u << 10) + below(&w->rng, MAXLEN - (256u << 10) + 1);
		break;
	case 3:
		len = 4096 * (1 + below(&w->rng, 256)); /* whole pages */
		break;
	default:
		len = MAXLEN;
		break;
	}
	return MAX(1, MIN(len, max));
}

/* A place for @len bytes in [lo, hi) (hi - lo >= len), page-aligned half of the time. */
static uint64_t rand_place(struct worker *w, uint64_t lo, uint64_t hi, uint64_t len, bool aligned)
{
	uint64_t at = lo + below(&w->rng, hi - lo - len + 1);

	if (aligned && at / 4096 * 4096 >= lo)
		at = at / 4096 * 4096;
	return at;
}

/* A read's or write's range inside buffer slot [blo, bhi) (guards inside it). */
static void pick_range(struct worker *w, struct range *r, bool write, uint64_t blo, uint64_t bhi,
		       uint64_t flo, uint64_t fhi)
{
	bool aligned = below(&w->rng, 2);

	r->write = write;
	r->len = rand_len(w, bhi - blo - 2 * GUARD_LEN);
	r->boff = rand_place(w, blo + GUARD_LEN, bhi - GUARD_LEN, r->len, aligned);
	if (write) {
		/* the file's guards inside the slot too: another range of the batch may fail */
		r->len = MIN(r->len, fhi - flo - 2 * GUARD_LEN);
		r->off = rand_place(w, flo + GUARD_LEN, fhi - GUARD_LEN, r->len, aligned);
		return;
	}
	switch (below(&w->rng, 16)) {
	case 0: /* across the end of the file */
		r->off = SSZ - 1 - below(&w->rng, MIN(r->len, SSZ));
		break;
	case 1: /* at or past the end */
		r->off = SSZ + below(&w->rng, 3) * 4096;
		break;
	default:
		r->off = rand_place(w, 0, SSZ, r->len, aligned);
		break;
	}
}

/* Before the transfer: a write's source in the buffer and its range of the file (the
 * complement of what it will hold). The buffer outside ranges is the guard pattern already. */
static void prepare(struct worker *w, const struct range *r)
{
	int e;

	if (!r->write)
		return;
	pat_fill(w->map + r->boff, r->len, dst_seed(w), r->off);
	e = file_fill_stream(w->dst, (off_t)r->off, r->len, dst_seed(w), r->off, true);
	if (e)
		test_fail("worker %d: prefill of the destination: %s", w->id, test_errname(e));
}

static void describe(const struct worker *w, const struct range *r, int fault, char *s, size_t n)
{
	snprintf(s, n, "worker %d: %s %s of %llu at file %llu, buffer %llu, path %s: res %s, "
		 "done %llu (path %s; fault %s at %s)", w->id, via_name[r->via],
		 r->write ? "write" : "read", (unsigned long long)r->len,
		 (unsigned long long)r->off, (unsigned long long)r->boff,
		 r->flags ? test_pname((int)r->flags) : "auto", test_errname(r->res),
		 (unsigned long long)r->done, test_pname((int)r->path), fault_name(fault),
		 sites[w->fault_site]);
}

/* Buffer bytes [from, to) (clipped) hold the guard pattern? */
static bool buf_guard_ok(struct worker *w, uint64_t from, uint64_t to)
{
	to = MIN(to, BSZ);
	return from >= to || pat_check(w->map + from, to - from, guard_seed(w), from) < 0;
}

/* Destination file bytes [from, to) (clipped) hold the file's pattern? */
static bool dst_ok(struct worker *w, uint64_t from, uint64_t to)
{
	to = MIN(to, DSZ);
	return from >= to || file_check_pattern(w->dst, (off_t)from, to - from, dst_seed(w),
						 from) == -1;
}

/*
 * After the transfer: check one range against what it may have done with @fault injected into
 * its operation, then put the buffer and the file back to their patterns. Returns whether the
 * range surfaced the hard fault (-errno).
 */
static bool check_range(struct worker *w, struct range *r, int fault)
{
	char what[400];
	bool surfaced = false, ok = true;
	uint64_t good;

	describe(w, r, fault, what, sizeof(what));
	if (!r->completed) {
		test_fail("%s: never completed", what);
		w->broken = true;
		return false;
	}
	if (r->res < 0) {
		if (!is_hard(fault) || r->res != -fault) {
			test_fail("%s: an error %s", what, is_hard(fault) ?
				  "other than the injected one" : "with no hard fault injected");
			ok = false;
		} else {
			surfaced = true;
			if (r->done)
				ADD(f_partial, 1);
		}
	}
	cpu_begin(w);
	if (!r->write) {
		uint64_t want = r->off >= SSZ ? 0 : MIN(r->len, SSZ - r->off);
		uint64_t untouched;
		long long e;

		if (r->res >= 0 && ((uint64_t)r->res != want || r->done != want)) {
			test_fail("%s: expected %llu bytes", what, (unsigned long long)want);
			ok = false;
		}
		if (r->res < 0 && r->done > want) {
			test_fail("%s: done past the end of the file (%llu readable)", what,
				  (unsigned long long)want);
			ok = false;
		}
		good = r->res >= 0 ? (uint64_t)r->res : MIN(r->done, want);
		untouched = r->res >= 0 ? r->boff + good : r->boff + r->len;
		e = pat_check(w->map + r->boff, good, src_seed(w), r->off);
		if (e >= 0) {
			test_fail("%s: buffer byte %lld of the %llu done is wrong", what, e,
				  (unsigned long long)good);
			if (test_fail_printing())
				pat_report("range", w->map + r->boff, good, src_seed(w), r->off, e,
					   false);
			ok = false;
		}
		if (!buf_guard_ok(w, r->boff - GUARD_LEN, r->boff) ||
		    !buf_guard_ok(w, untouched, r->boff + r->len + GUARD_LEN)) {
			test_fail("%s: buffer bytes outside the range (or past the bytes read) "
				  "written", what);
			ok = false;
		}
		if (ok)
			ADD(bytes, good + 2 * GUARD_LEN);
		/* back to the guard pattern */
		pat_fill(w->map + r->boff, r->len, guard_seed(w), r->boff);
	} else {
		struct stat st;

		if (r->res >= 0 && ((uint64_t)r->res != r->len || r->done != r->len)) {
			test_fail("%s: expected %llu bytes", what, (unsigned long long)r->len);
			ok = false;
		}
		if (r->res < 0 && r->done > r->len) {
			test_fail("%s: done past the range", what);
			ok = false;
		}
		good = r->res >= 0 ? r->len : MIN(r->done, r->len);
		if (file_check_pattern(w->dst, (off_t)r->off, good, dst_seed(w), r->off) != -1) {
			test_fail("%s: file bytes of the %llu done are wrong", what,
				  (unsigned long long)good);
			ok = false;
		}
		if (!dst_ok(w, r->off >= GUARD_LEN ? r->off - GUARD_LEN : 0, r->off) ||
		    !dst_ok(w, r->off + r->len, r->off + r->len + GUARD_LEN)) {
			test_fail("%s: file bytes outside the range written", what);
			ok = false;
		}
		if (fstat(w->dst, &st) || st.st_size != DSZ) {
			test_fail("%s: the destination's size is %lld, was %u", what,
				  (long long)st.st_size, DSZ);
			ok = false;
		}
		if (pat_check(w->map + r->boff, r->len, dst_seed(w), r->off) >= 0 ||
		    !buf_guard_ok(w, r->boff - GUARD_LEN, r->boff) ||
		    !buf_guard_ok(w, r->boff + r->len, r->boff + r->len + GUARD_LEN)) {
			test_fail("%s: the write changed the buffer", what);
			ok = false;
		}
		if (good < r->len)
			file_fill_pattern(w->dst, (off_t)r->off, r->len, dst_seed(w));
		if (ok)
			ADD(bytes, good + 2 * GUARD_LEN);
		pat_fill(w->map + r->boff, r->len, guard_seed(w), r->boff);
	}
	cpu_end(w);
	return surfaced;
}

/* Count how an operation's fault ended; every range was checked already. */
static void fault_ended(struct worker *w, int fault, bool surfaced, bool all_complete)
{
	int s = w->fault_site;

	if (!fault)
		return;
	if (!is_hard(fault)) {
		ADD(f_transient, 1);
		__atomic_add_fetch(&by_site[s].transient, 1, __ATOMIC_RELAXED);
		if (all_complete) {
			ADD(f_transient_ok, 1);
			__atomic_add_fetch(&by_site[s].transient_ok, 1, __ATOMIC_RELAXED);
		}
		return;
	}
	ADD(f_hard, 1);
	__atomic_add_fetch(&by_site[s].hard, 1, __ATOMIC_RELAXED);
	if (surfaced) {
		ADD(f_hard_surfaced, 1);
		__atomic_add_fetch(&by_site[s].surfaced, 1, __ATOMIC_RELAXED);
	} else if (all_complete) {
		ADD(f_hard_absorbed, 1);
		__atomic_add_fetch(&by_site[s].absorbed, 1, __ATOMIC_RELAXED);
	}
}

/* ---- operations ------------------------------------------------------------------------------ */
static void op_sync(struct worker *w, bool write, bool registered)
{
	struct dmaio_xfer x = { .struct_size = sizeof(x) };
	struct range r = { .via = registered ? VIA_FILE : VIA_FD };
	unsigned p0;
	int fault;
	bool surfaced;

	pick_range(w, &r, write, 0, BSZ, 0, DSZ);
	r.flags = next_flags(w);
	cpu_begin(w);
	prepare(w, &r);
	cpu_end(w);
	p0 = pressure_now();
	arm(w);
	if (write)
		r.res = registered ?
			dmaio_file_write(w->rdst, r.off, w->buf, r.boff, r.len, r.flags, &x) :
			dmaio_fd_write(w->dst, r.off, w->buf, r.boff, r.len, r.flags, &x);
	else
		r.res = registered ?
			dmaio_file_read(w->rsrc, r.off, w->buf, r.boff, r.len, r.flags, &x) :
			dmaio_fd_read(w->src, r.off, w->buf, r.boff, r.len, r.flags, &x);
	fault = disarm(w);
	if (emfile_allowed(p0))
		ADD(in_window, 1);
	r.done = x.done;
	r.path = x.path;
	r.completed = true;
	surfaced = check_range(w, &r, fault);
	fault_ended(w, fault, surfaced, r.res >= 0);
	if (write)
		ADD(sync_writes, 1);
	else
		ADD(sync_reads, 1);
}

static int reap_timeout_ms(void)
{
	const char *vm = getenv("DMAIO_TEST_VM");

	return (vm && *vm == '1') || test_quick() ? 600000 : 60000;
}

/* A batch of 2 to MAXRANGES ranges through @q over @src / @dst (registered), each in its own
 * slot of the buffer and, for writes, of the destination file. */
static void op_batch(struct worker *w, struct dmaio_queue *q, struct dmaio_file *src,
		     struct dmaio_file *dst, enum via via)
{
	unsigned n = 2 + (unsigned)below(&w->rng, MAXRANGES - 1), sent = 0, got = 0;
	struct range r[MAXRANGES];
	struct dmaio_io io[MAXRANGES];
	struct dmaio_done d[MAXRANGES];
	uint64_t bslot = BSZ / n, fslot = DSZ / n;
	bool surfaced = false, all_complete = true;
	unsigned p0;
	int fault;

	memset(r, 0, sizeof(r));
	memset(io, 0, sizeof(io));
	cpu_begin(w);
	for (unsigned i = 0; i < n; i++) {
		r[i].via = via;
		pick_range(w, &r[i], below(&w->rng, 2), i * bslot, (i + 1) * bslot, i * fslot,
			   (i + 1) * fslot);
		r[i].flags = next_flags(w);
		prepare(w, &r[i]);
		io[i].struct_size = sizeof(io[i]);
		io[i].op = r[i].write ? DMAIO_OP_WRITE : DMAIO_OP_READ;
		io[i].file = r[i].write ? dst : src;
		io[i].file_off = r[i].off;
		io[i].buf = w->buf;
		io[i].buf_off = r[i].boff;
		io[i].len = r[i].len;
		io[i].flags = r[i].flags;
		io[i].user_data = i;
	}
	cpu_end(w);
	p0 = pressure_now();
	arm(w);
	while (got < n) {
		int k;

		if (sent < n) {
			k = dmaio_queue_submit(q, io + sent, n - sent);
			if (k < 0 && k != -EAGAIN) {
				test_fail("worker %d: %s submit: %s", w->id, via_name[via],
					  test_errname(k));
				w->broken = true;
				break;
			}
			sent += k > 0 ? (unsigned)k : 0;
		}
		d[0].struct_size = sizeof(d[0]);
		k = dmaio_queue_reap(q, d, n - got, sent > got ? 1 : 0, reap_timeout_ms());
		if (k < 0) {
			test_fail("worker %d: %s reap after %u of %u: %s", w->id, via_name[via],
				  got, n, test_errname(k));
			w->broken = true;
			break;
		}
		for (int j = 0; j < k; j++) {
			uint64_t i = d[j].user_data;

			if (i >= n || r[i].completed) {
				test_fail("worker %d: %s: completion of range %llu unknown or "
					  "twice", w->id, via_name[via], (unsigned long long)i);
				continue;
			}
			r[i].completed = true;
			r[i].res = d[j].res;
			r[i].done = d[j].done;
			r[i].path = d[j].path;
		}
		got += (unsigned)k;
	}
	fault = disarm(w);
	if (w->broken)
		return; /* ranges may still be in flight: nothing can be checked */
	if (emfile_allowed(p0))
		ADD(in_window, 1);
	for (unsigned i = 0; i < n; i++) {
		surfaced |= check_range(w, &r[i], fault);
		all_complete &= r[i].res >= 0;
	}
	fault_ended(w, fault, surfaced, all_complete);
	ADD(queued, n);
	ADD(batches, 1);
}

/* A batch through a new queue over files registered anew: each may be refused with -EMFILE
 * while a RLIMIT_NOFILE window is open, nothing else. */
static void op_fresh(struct worker *w)
{
	struct dmaio_file *fs = NULL, *fd = NULL;
	struct dmaio_queue *q = NULL;
	unsigned p0 = pressure_now();
	int r[3];

	r[0] = dmaio_file_open(w->ctx, w->src, 0, &fs);
	r[1] = dmaio_file_open(w->ctx, w->dst, 0, &fd);
	r[2] = dmaio_queue_new(w->ctx, 4 + (uint32_t)below(&w->rng, 13), 0, &q);
	for (int i = 0; i < 3; i++) {
		static const char *const what[] = { "dmaio_file_open(source)",
						    "dmaio_file_open(destination)",
						    "dmaio_queue_new" };

		if (r[i] == -EMFILE && emfile_allowed(p0))
			ADD(emfile, 1);
		else if (r[i])
			test_fail("worker %d: %s = %s%s", w->id, what[i], test_errname(r[i]),
				  r[i] == -EMFILE ? " outside a RLIMIT_NOFILE window" : "");
	}
	if (!r[0] && !r[1] && !r[2]) {
		op_batch(w, q, fs, fd, VIA_FRESH);
		ADD(fresh, 1);
	}
	dmaio_queue_free(q);
	dmaio_file_close(fs);
	dmaio_file_close(fd);
}

/* Worker 0: a write across RLIMIT_FSIZE (the limit set around the call only). */
static void op_fsize(struct worker *w)
{
	static const uint64_t above[] = { 1536, 1000, 4096 };
	uint64_t limit = FSIZE_BASE + above[below(&w->rng, 3)];
	uint64_t a = 1 + below(&w->rng, MAXLEN - 1), off, len, boff, want, done = 0;
	uint64_t seed = SEED_BUF + (uint64_t)w->id;
	unsigned how = (unsigned)below(&w->rng, 3);
	uint32_t flags = next_flags(w), path = 0;
	struct rlimit rl, old;
	char what[300];
	struct stat st;
	int64_t res = 0;
	int e;

	off = limit - a;
	if (below(&w->rng, 2))
		off = off / 4096 * 4096;
	a = limit - off;
	len = a + 1 + below(&w->rng, MAXLEN + 4096 - a);
	boff = rand_place(w, GUARD_LEN, BSZ - GUARD_LEN, len, below(&w->rng, 2));
	want = limit - off;
	snprintf(what, sizeof(what), "worker %d: write of [%llu, %llu) across RLIMIT_FSIZE %llu "
		 "via %s, path %s", w->id, (unsigned long long)off, (unsigned long long)(off + len),
		 (unsigned long long)limit, via_name[how], flags ? test_pname((int)flags) : "auto");
	while ((e = ftruncate(w->fsz, 0)) && errno == EINTR)
		;
	if (e || file_fill_pattern(w->fsz, (off_t)(off - GUARD_LEN), GUARD_LEN, dst_seed(w))) {
		test_fail("%s: preparing the file: %s", what, strerror(errno));
		return;
	}
	cpu_begin(w);
	pat_fill(w->map + boff, len, seed, off);
	cpu_end(w);
	if (getrlimit(RLIMIT_FSIZE, &old)) {
		test_fail("getrlimit: %s", strerror(errno));
		return;
	}
	rl = old;
	rl.rlim_cur = limit;
	if (setrlimit(RLIMIT_FSIZE, &rl)) {
		test_fail("setrlimit(RLIMIT_FSIZE): %s", strerror(errno));
		return;
	}
	if (how < 2) {
		struct dmaio_xfer x = { .struct_size = sizeof(x) };

		res = how ? dmaio_file_write(w->rfsz, off, w->buf, boff, len, flags, &x) :
			    dmaio_fd_write(w->fsz, off, w->buf, boff, len, flags, &x);
		done = x.done;
		path = x.path;
	} else {
		struct dmaio_io io = { .struct_size = sizeof(io), .op = DMAIO_OP_WRITE,
				       .file = w->rfsz, .file_off = off, .buf = w->buf,
				       .buf_off = boff, .len = len, .flags = flags };
		struct dmaio_done d = { .struct_size = sizeof(d) };
		int k = dmaio_queue_submit(w->q, &io, 1);

		if (k == 1)
			k = dmaio_queue_reap(w->q, &d, 1, 1, reap_timeout_ms());
		if (k != 1) {
			test_fail("%s: submit/reap = %s", what, test_errname(k));
			w->broken = true;
		}
		res = d.res;
		done = d.done;
		path = d.path;
	}
	if (setrlimit(RLIMIT_FSIZE, &old))
		test_fail("setrlimit(RLIMIT_FSIZE) back: %s", strerror(errno));
	if (w->broken)
		return;
	ADD(efbig, 1);
	if (res != -EFBIG)
		test_fail("%s: %s, expected -EFBIG", what, test_errname(res));
	if (path == DMAIO_PATH_RW_FILE ? done > want : done != want)
		test_fail("%s: done %llu (path %s), expected %s%llu (every byte below the limit)",
			  what, (unsigned long long)done, test_pname((int)path),
			  path == DMAIO_PATH_RW_FILE ? "at most " : "", (unsigned long long)want);
	if (fstat(w->fsz, &st) || (uint64_t)st.st_size > limit ||
	    (uint64_t)st.st_size < off + MIN(done, want))
		test_fail("%s: file size %lld", what, (long long)st.st_size);
	if (file_check_pattern(w->fsz, (off_t)off, MIN(done, want), seed, off) != -1)
		test_fail("%s: the bytes counted done are not in the file", what);
	if (file_check_pattern(w->fsz, (off_t)(off - GUARD_LEN), GUARD_LEN, dst_seed(w),
			       off - GUARD_LEN) != -1)
		test_fail("%s: file bytes before the range written", what);
	cpu_begin(w);
	if (pat_check(w->map + boff, len, seed, off) >= 0 ||
	    !buf_guard_ok(w, boff - GUARD_LEN, boff) ||
	    !buf_guard_ok(w, boff + len, boff + len + GUARD_LEN))
		test_fail("%s: the write changed the buffer", what);
	pat_fill(w->map + boff, len, guard_seed(w), boff);
	cpu_end(w);
	ADD(bytes, MIN(done, want) + GUARD_LEN);
}

/* Everything of the worker: the whole buffer is the guard pattern, the files theirs. */
static void full_check(struct worker *w, const char *when)
{
	long long e;
	struct stat st;

	cpu_begin(w);
	e = pat_check(w->map, BSZ, guard_seed(w), 0);
	cpu_end(w);
	if (e >= 0)
		test_fail("worker %d (%s): buffer byte %lld outside every range was written", w->id,
			  when, e);
	e = file_check_pattern(w->src, 0, SSZ, src_seed(w), 0);
	if (e != -1)
		test_fail("worker %d (%s): source file byte %lld changed", w->id, when, e);
	e = file_check_pattern(w->dst, 0, DSZ, dst_seed(w), 0);
	if (e != -1)
		test_fail("worker %d (%s): destination file byte %lld wrong", w->id, when, e);
	if (fstat(w->src, &st) || st.st_size != SSZ || fstat(w->dst, &st) || st.st_size != DSZ)
		test_fail("worker %d (%s): a file changed size", w->id, when);
	else if (e == -1)
		ADD(bytes, BSZ + SSZ + DSZ);
}

static void *soak_worker(void *arg)
{
	struct worker *w = arg;

	owner = w;
	while (!stopped() && !w->broken) {
		unsigned k = (unsigned)below(&w->rng, 16);

		gate_enter();
		if (k < 3)
			op_sync(w, false, false);
		else if (k < 6)
			op_sync(w, true, false);
		else if (k < 9)
			op_sync(w, false, true);
		else if (k < 12)
			op_sync(w, true, true);
		else if (k < 15)
			op_batch(w, w->q, w->rsrc, w->rdst, VIA_QUEUE);
		else
			op_fresh(w);
		w->ops++;
		if (w->fsz >= 0 && w->ops % FSIZE_EVERY == 0 && !w->broken)
			op_fsize(w);
		if (w->ops % FULL_CHECK_EVERY == 0 && !w->broken)
			full_check(w, "during the soak");
		gate_leave();
	}
	owner = NULL;
	return NULL;
}

/* ---- signals --------------------------------------------------------------------------------- */
static void on_usr1(int sig)
{
	(void)sig;
	__atomic_add_fetch(&tot.sig_handled, 1, __ATOMIC_RELAXED);
}

static void *signal_main(void *arg)
{
	struct timespec ts = { 0, 100000 };

	(void)arg;
	while (!stopped()) {
		for (int i = 0; i < NWORKERS; i++)
			if (!pthread_kill(workers[i].th, SIGUSR1))
				ADD(sig_sent, 1);
		nanosleep(&ts, NULL);
	}
	return NULL;
}

/* ---- forks ----------------------------------------------------------------------------------- */
static struct dmaio_ctx *fork_ctx;
static struct dmaio_buf *fork_buf;
static struct dmaio_file *fork_file;
static uint8_t *fork_map;
static int fork_src = -1;

static unsigned slow_factor(void)
{
	const char *vm = getenv("DMAIO_TEST_VM");

	return (vm && *vm == '1') || test_quick() ? 10 : 1;
}

/* The child: exit 0 when both reads are exact, 1 otherwise (the reason on stderr). */
static void __attribute__((noreturn)) child_main(unsigned k)
{
	uint64_t rng = soak_seed ^ ((uint64_t)k << 32), half = FORK_BSZ / 2;
	uint64_t len = 1 + below(&rng, FORK_MAXLEN), off = below(&rng, FORK_SSZ - len);
	uint64_t boff = GUARD_LEN + below(&rng, half - 2 * GUARD_LEN - len);
	uint64_t len2 = 1 + below(&rng, FORK_MAXLEN), off2 = below(&rng, FORK_SSZ - len2);
	uint64_t boff2 = half + GUARD_LEN + below(&rng, half - 2 * GUARD_LEN - len2);
	uint32_t flags = DMAIO_RW_PATH(k % DMAIO_PATH_COUNT);
	struct dmaio_io io = { .struct_size = sizeof(io), .op = DMAIO_OP_READ, .file = fork_file,
			       .file_off = off2, .buf = fork_buf, .buf_off = boff2, .len = len2,
			       .flags = DMAIO_RW_PATH((k + 3) % DMAIO_PATH_COUNT) };
	struct dmaio_done d = { .struct_size = sizeof(d) };
	struct dmaio_queue *q = NULL;
	int64_t n;
	int r;

	__atomic_store_n(&fault_off, 1, __ATOMIC_RELAXED);
	dmaio_buf_sync_begin(fork_buf, DMAIO_SYNC_RW);
	pat_fill(fork_map, FORK_BSZ, SEED_GUARD, 0);
	dmaio_buf_sync_end(fork_buf, DMAIO_SYNC_RW);
	n = dmaio_fd_read(fork_src, off, fork_buf, boff, len, flags, NULL);
	if (n != (int64_t)len) {
		fprintf(stderr, "fork child %u: read of %llu at %llu via %s: %s\n", k,
			(unsigned long long)len, (unsigned long long)off, test_pname((int)flags),
			test_errname(n));
		_exit(1);
	}
	r = dmaio_queue_new(fork_ctx, 4, 0, &q);
	if (r == 0)
		r = dmaio_queue_submit(q, &io, 1);
	if (r == 1)
		r = dmaio_queue_reap(q, &d, 1, 1, -1);
	if (r != 1 || d.res != (int64_t)len2) {
		fprintf(stderr, "fork child %u: queued read of %llu at %llu via %s: %s, res %s\n",
			k, (unsigned long long)len2, (unsigned long long)off2,
			test_pname((int)io.flags), test_errname(r), test_errname(d.res));
		_exit(1);
	}
	dmaio_queue_free(q);
	dmaio_buf_sync_begin(fork_buf, DMAIO_SYNC_RW);
	if (pat_check(fork_map + boff, len, SEED_FORK, off) >= 0 ||
	    pat_check(fork_map + boff2, len2, SEED_FORK, off2) >= 0) {
		fprintf(stderr, "fork child %u: wrong bytes read\n", k);
		_exit(1);
	}
	if (pat_check(fork_map, boff, SEED_GUARD, 0) >= 0 ||
	    pat_check(fork_map + boff + len, boff2 - boff - len, SEED_GUARD, boff + len) >= 0 ||
	    pat_check(fork_map + boff2 + len2, FORK_BSZ - boff2 - len2, SEED_GUARD,
		      boff2 + len2) >= 0) {
		fprintf(stderr, "fork child %u: buffer bytes outside the ranges written\n", k);
		_exit(1);
	}
	dmaio_buf_sync_end(fork_buf, DMAIO_SYNC_RW);
	_exit(0);
}

/* Print where a hung child's threads wait (from /proc), then kill it. */
static void kill_hung(pid_t pid, unsigned k)
{
	char path[96], line[128];
	struct dirent *de;
	DIR *d;
	int st;

	snprintf(path, sizeof(path), "/proc/%d/task", (int)pid);
	d = opendir(path);
	while (d && (de = readdir(d))) {
		FILE *f;

		if (de->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "/proc/%d/task/%.16s/wchan", (int)pid, de->d_name);
		f = fopen(path, "re");
		if (f && fgets(line, sizeof(line), f))
			fprintf(stderr, "fork child %u (pid %d): thread %s waits in %s\n", k,
				(int)pid, de->d_name, line);
		if (f)
			fclose(f);
	}
	if (d)
		closedir(d);
	/* and the user-space stacks, when gdb is there (no RLIMIT_NOFILE window meanwhile) */
	if (!access("/usr/bin/gdb", X_OK)) {
		char cmd[200];

		snprintf(cmd, sizeof(cmd), "gdb -p %d -batch -ex 'thread apply all bt' 2>&1 | "
			 "grep -E '^(#|Thread)' >&2", (int)pid);
		pthread_mutex_lock(&limits_lock);
		if (system(cmd))
			fprintf(stderr, "(gdb failed)\n");
		pthread_mutex_unlock(&limits_lock);
	}
	kill(pid, SIGKILL);
	while (waitpid(pid, &st, 0) < 0 && errno == EINTR)
		;
}

static void *fork_main(void *arg)
{
	double limit = 20.0 * slow_factor();
	struct timespec ts = { 0, 50000000 };

	(void)arg;
	for (unsigned k = 0; !stopped(); k++) {
		double t0;
		pid_t pid, r;
		int st = 0;

		nanosleep(&ts, NULL);
		pthread_mutex_lock(&limits_lock);
		gate_close();
		pid = fork();
		if (pid == 0)
			child_main(k);
		gate_open();
		pthread_mutex_unlock(&limits_lock);
		if (pid < 0) {
			test_fail("fork: %s", strerror(errno));
			ADD(forks_failed, 1);
			continue;
		}
		t0 = test_now();
		while ((r = waitpid(pid, &st, WNOHANG)) == 0 && test_now() - t0 < limit)
			usleep(1000);
		if (r != pid) {
			test_fail("fork child %u hung: still running after %.0f s, killed", k,
				  limit);
			kill_hung(pid, k);
			ADD(forks_hung, 1);
		} else if (WIFEXITED(st) && WEXITSTATUS(st) == 0) {
			ADD(forks_ok, 1);
		} else {
			test_fail("fork child %u: %s %d", k, WIFEXITED(st) ? "exit" : "signal",
				  WIFEXITED(st) ? WEXITSTATUS(st) : WTERMSIG(st));
			ADD(forks_failed, 1);
		}
	}
	return NULL;
}

/* ---- RLIMIT_NOFILE windows (the main thread) ------------------------------------------------- */
static int lowest_free_fd(void)
{
	int fd = fcntl(STDERR_FILENO, F_DUPFD_CLOEXEC, 0);

	if (fd < 0)
		fd = open("/dev/null", O_RDONLY | O_CLOEXEC);
	if (fd >= 0)
		close(fd);
	return fd;
}

static void nofile_window(uint64_t *rng, double secs)
{
	struct rlimit old, rl;
	int fd;

	pthread_mutex_lock(&limits_lock);
	fd = lowest_free_fd();
	if (fd < 0 || getrlimit(RLIMIT_NOFILE, &old)) {
		test_fail("RLIMIT_NOFILE window: no descriptor to measure with: %s",
			  strerror(errno));
		pthread_mutex_unlock(&limits_lock);
		return;
	}
	rl = old;
	rl.rlim_cur = (rlim_t)fd + below(rng, 3); /* 0 to 2 free */
	__atomic_add_fetch(&pressure, 1, __ATOMIC_ACQ_REL);
	if (setrlimit(RLIMIT_NOFILE, &rl))
		test_fail("setrlimit(RLIMIT_NOFILE, %llu): %s", (unsigned long long)rl.rlim_cur,
			  strerror(errno));
	usleep((useconds_t)(secs * 1e6));
	if (setrlimit(RLIMIT_NOFILE, &old))
		test_fail("setrlimit(RLIMIT_NOFILE) back: %s", strerror(errno));
	__atomic_add_fetch(&pressure, 1, __ATOMIC_ACQ_REL);
	pthread_mutex_unlock(&limits_lock);
	ADD(windows, 1);
}

/* ---- the soak -------------------------------------------------------------------------------- */
static double soak_seconds(void)
{
	const char *s = getenv("DMAIO_SOAK_SECONDS"), *vm = getenv("DMAIO_TEST_VM");

	if (s && *s)
		return atof(s);
	if (vm && *vm == '1')
		return 20; /* per variant and boot in CI: 2 variants x 2 boots */
	return test_quick() ? 15 : 45;
}

static int make_file(off_t size, uint64_t seed)
{
	int fd = test_tmpfile(NULL, NULL, 0);

	if (size)
		assert_int_equal(file_fill_pattern(fd, 0, (size_t)size, seed), 0);
	return fd;
}

static void worker_open(struct worker *w, int id)
{
	void *m;

	memset(w, 0, sizeof(*w));
	w->id = id;
	w->fsz = -1;
	w->rng = soak_seed + 0x1000 * (uint64_t)(id + 1);
	assert_rc_equal(dmaio_ctx_new(0, &w->ctx), 0);
	/* exits 77 where the provider is missing on the host; fails where devices are expected */
	assert_rc_equal(test_alloc_or_skip(w->ctx, args.heap_name, BSZ, 0, &w->buf), 0);
	assert_rc_equal(dmaio_buf_map(w->buf, &m), 0);
	w->map = m;
	cpu_begin(w);
	pat_fill(w->map, BSZ, guard_seed(w), 0);
	cpu_end(w);
	w->src = make_file(SSZ, src_seed(w));
	w->dst = make_file(DSZ, dst_seed(w));
	assert_rc_equal(dmaio_file_open(w->ctx, w->src, 0, &w->rsrc), 0);
	assert_rc_equal(dmaio_file_open(w->ctx, w->dst, 0, &w->rdst), 0);
	assert_rc_equal(dmaio_queue_new(w->ctx, 16, 0, &w->q), 0);
	if (id == 0) {
		w->fsz = make_file(0, 0);
		assert_rc_equal(dmaio_file_open(w->ctx, w->fsz, 0, &w->rfsz), 0);
	}
}

static void worker_close(struct worker *w)
{
	dmaio_queue_free(w->q);
	dmaio_file_close(w->rsrc);
	dmaio_file_close(w->rdst);
	dmaio_file_close(w->rfsz);
	dmaio_buf_free(w->buf);
	dmaio_ctx_free(w->ctx);
	close(w->src);
	close(w->dst);
	if (w->fsz >= 0)
		close(w->fsz);
}

static void print_sites(void)
{
	printf("# faults by seam call (transient: absorbed/injected; hard: "
	       "surfaced+absorbed/injected):");
	for (size_t s = 0; s < NSITES; s++)
		if (by_site[s].transient || by_site[s].hard)
			printf(" %s %lu/%lu %lu+%lu/%lu", sites[s], by_site[s].transient_ok,
			       by_site[s].transient, by_site[s].surfaced, by_site[s].absorbed,
			       by_site[s].hard);
	printf("\n");
}

static void test_soak_faults(void **state)
{
	double secs = soak_seconds(), t0, end, next_window;
	unsigned before = test_failures();
	int fds0, maps0, fds1, maps1;
	pthread_t sig_th, fork_th;
	struct sigaction sa;
	uint64_t rng = soak_seed;
	void *m;

	(void)state;
	fds0 = test_count_fds();
	maps0 = rel_count_lib_maps();
	signal(SIGXFSZ, SIG_IGN);
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_usr1; /* no SA_RESTART: every blocking syscall sees EINTR */
	sigemptyset(&sa.sa_mask);
	assert_int_equal(sigaction(SIGUSR1, &sa, NULL), 0);

	rel_set_label("soak-faults: setup");
	for (int i = 0; i < NWORKERS; i++)
		worker_open(&workers[i], i);
	assert_rc_equal(dmaio_ctx_new(0, &fork_ctx), 0);
	assert_rc_equal(test_alloc_or_skip(fork_ctx, args.heap_name, FORK_BSZ, 0, &fork_buf), 0);
	assert_rc_equal(dmaio_buf_map(fork_buf, &m), 0);
	fork_map = m;
	fork_src = make_file(FORK_SSZ, SEED_FORK);
	assert_rc_equal(dmaio_file_open(fork_ctx, fork_src, 0, &fork_file), 0);

	rel_set_label("soak-faults: %.0f s of workers, forks, signals, faults and rlimits", secs);
	/* before meson's timeout (host 180 s; VM 600 s, ASan 540 s: rel_watchdog() x10 there) */
	rel_watchdog(slow_factor() > 1 ? MAX(50u, ((unsigned)secs + 109) / 10) :
		     (unsigned)secs + 100);
	t0 = test_now();
	end = t0 + secs;
	for (int i = 0; i < NWORKERS; i++)
		assert_int_equal(pthread_create(&workers[i].th, NULL, soak_worker, &workers[i]), 0);
	assert_int_equal(pthread_create(&fork_th, NULL, fork_main, NULL), 0);
	assert_int_equal(pthread_create(&sig_th, NULL, signal_main, NULL), 0);
	next_window = t0 + 1.0;
	while (test_now() < end) {
		if (test_now() >= next_window && test_now() + 0.5 < end) {
			nofile_window(&rng, 0.2);
			next_window = test_now() + 1.5 + (double)below(&rng, 1000) / 1000;
		}
		usleep(20000);
	}
	__atomic_store_n(&stop, 1, __ATOMIC_RELAXED);
	pthread_join(sig_th, NULL); /* first: it signals the workers */
	for (int i = 0; i < NWORKERS; i++)
		pthread_join(workers[i].th, NULL);
	pthread_join(fork_th, NULL);
	secs = test_now() - t0;

	rel_set_label("soak-faults: final checks and teardown");
	for (int i = 0; i < NWORKERS; i++) {
		if (!workers[i].broken)
			full_check(&workers[i], "at the end");
		if (workers[i].ops == 0)
			test_fail("worker %d made no operation", i);
	}
	for (int i = 0; i < NWORKERS; i++)
		worker_close(&workers[i]);
	dmaio_file_close(fork_file);
	dmaio_buf_free(fork_buf);
	dmaio_ctx_free(fork_ctx);
	close(fork_src);
	signal(SIGUSR1, SIG_DFL);
	fds1 = test_count_fds();
	maps1 = rel_count_lib_maps();
	if (fds1 != fds0) {
		test_fail("%d fds open after everything was freed, %d before", fds1, fds0);
		rel_dump_fds("after the soak");
	}
	if (maps1 != maps0)
		test_fail("%d memfd/dma-buf/io_uring mappings after everything was freed, %d "
			  "before", maps1, maps0);
	rel_watchdog(0);

	print_sites();
	printf("soak-faults: %.1f s, heap %s, seed %llu: sync reads %lu, sync writes %lu, queued "
	       "ranges %lu (batches %lu, fresh %lu), bytes verified %lu; forks %lu (ok %lu, hung "
	       "%lu, failed %lu); signals sent %lu (handled %lu); faults %lu (transient %lu: "
	       "absorbed %lu; hard %lu: right errno %lu (%lu with done > 0), absorbed %lu); EMFILE "
	       "%lu (windows %lu, transfers in them %lu); EFBIG checks %lu; fds %d/%d, maps %d/%d; "
	       "failures %u\n", secs, args.heap,
	       (unsigned long long)soak_seed, tot.sync_reads, tot.sync_writes, tot.queued,
	       tot.batches, tot.fresh, tot.bytes, tot.forks_ok + tot.forks_hung + tot.forks_failed,
	       tot.forks_ok, tot.forks_hung, tot.forks_failed, tot.sig_sent, tot.sig_handled,
	       tot.f_transient + tot.f_hard, tot.f_transient, tot.f_transient_ok, tot.f_hard,
	       tot.f_hard_surfaced, tot.f_partial, tot.f_hard_absorbed, tot.emfile, tot.windows,
	       tot.in_window, tot.efbig,
	       fds0, fds1, maps0, maps1, test_failures() - before);
	assert_no_failures_since(before);
}

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_soak_faults),
	};
	const char *s = getenv("DMAIO_SOAK_SEED"), *odds = getenv("DMAIO_SOAK_FAULT_ODDS");
	int rc;

	test_parse_args(argc, argv, &args, "memfd");
	setvbuf(stdout, NULL, _IOLBF, 0);
	fork_gate_init();
	if (FORKS_BETWEEN_OPS)
		printf("# AddressSanitizer build: forks between the workers' operations (its "
		       "allocator is not fork-safe)\n");
	soak_seed = s && *s ? strtoull(s, NULL, 0) : (uint64_t)time(NULL) * 2654435761u + getpid();
	if (odds && *odds)
		fault_odds = MAX(1u, (unsigned)strtoul(odds, NULL, 0));
	rel_install_crash_label();
	{
		void *bt[4];

		backtrace(bt, 4); /* load the unwinder now, not in the first fault */
		rel_sym((void *)main, NULL); /* the symbol table, read before the threads start */
	}
	if (!rel_sym((void *)__wrap_dmaio_fault_hit, NULL))
		printf("# no symbol table: every fault's seam call is \"?\" (no short counts)\n");
	rc = cmocka_run_group_tests_name("soak-faults", tests, NULL, NULL);
	test_cleanup();
	return rc;
}
