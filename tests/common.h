/* SPDX-License-Identifier: MIT */
/*
 * Helpers shared by the libdmaio test programs: argument parsing (--heap), provider
 * resolution and skipping (77 on the host, a failure in the VM), failures counted for the tests
 * that go on after one, children that run cmocka tests of their own, the position-encoded data
 * pattern, temp files on a real filesystem, dma-bufs used without the library, file-descriptor
 * accounting.
 */
#ifndef DMAIO_TEST_COMMON_H
#define DMAIO_TEST_COMMON_H

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "dmaio.h"

#define TEST_SKIP 77

#define KiB ((size_t)1024)
#define MiB ((size_t)1024 * 1024)

#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))

/* ------------------------------------------------------------------------------------------ */
/* Arguments */

struct test_args {
	const char *heap;      /* as asked for: "memfd", "system", "cma", "udmabuf", ... */
	const char *heap_name; /* what dmaio_buf_alloc() gets (cma resolved to a real heap name) */
	bool expect_devices;   /* --expect-devices (or env): device nodes must exist and work */
	bool quick;            /* DMAIO_TEST_QUICK=1 or running under valgrind */
};

/*
 * Parse --heap NAME (or env DMAIO_TEST_HEAP, else @default_heap) and --expect-devices.
 * Exits 77 when the heap is "cma" and no CMA heap exists, 2 on a usage error.
 */
void test_parse_args(int argc, char **argv, struct test_args *a, const char *default_heap);

/* The first existing CMA heap name, or NULL. */
const char *test_cma_heap(void);

/*
 * Device nodes must exist and work: --expect-devices, DMAIO_TEST_VM=1 (set by the test VM) or
 * DMAIO_TEST_EXPECT_DEVICES=1. test_alloc_or_skip() then fails instead of skipping. The test VM
 * on a kernel that lacks some providers (Debian's own images) also sets DMAIO_TEST_DEVICES to
 * the kinds its kernel has ("system cma udmabuf drm v4l2", read from the kernel's config on the
 * host): devices of a kind not on that list are not expected, and the tests that need them skip.
 * test_expect_devices() asks about the test's --heap (memfd: always; default: any provider).
 */
bool test_expect_devices(void);
bool test_expect_device(const char *kind);

/* True when sizes should be kept small (DMAIO_TEST_QUICK=1, valgrind). */
bool test_quick(void);
/* True when running under valgrind (its preload in LD_PRELOAD): valgrind keeps descriptors of
 * its own at the top of RLIMIT_NOFILE and refuses a limit below them. */
bool test_under_valgrind(void);

/* Whether the kernel command line (/proc/cmdline) holds @word (the VM's boot switches). */
bool test_cmdline_has(const char *word);

/* ENOENT, ENODEV, EACCES, EOPNOTSUPP: the provider is not usable here. */
bool test_is_skip_err(int neg_err);

/*
 * dmaio_buf_alloc() that exits 77 (with a message) when the provider is not usable here.
 * "memfd" never skips: every error is returned to the caller.
 */
/* One heap with what the proposals answer for it (dmaio_ctx_get_heap() and
 * dmaio_ctx_get_heap_proposed() together), for tests that look at both. */
struct t_heap_info {
	char name[DMAIO_HEAP_NAME_MAX];
	int32_t alloc, alloc_err, mmap, contiguous, uncached;
	int32_t rw_file, rw_file_err, uring_dmabuf;
};
/* every heap: the count (as dmaio_ctx_heap_count()), at most max of them written */
int t_probe_heaps(struct dmaio_ctx *ctx, struct t_heap_info *heaps, size_t max);

/* The system and what the proposals answer (dmaio_ctx_get_system() and
 * dmaio_ctx_get_proposed() together). */
struct t_sys_info {
	struct dmaio_sys_info sys;
	struct dmaio_proposed_info prop;
};
int t_probe_system(struct dmaio_ctx *ctx, struct t_sys_info *si);

/* One plane of an image layout (its per-plane arrays), for code that walks planes. */
struct plane {
	uint64_t offset, size;
	uint32_t stride;
};

static inline struct plane plane_of(const struct dmaio_image_layout *l, unsigned p)
{
	struct plane v = { l->offsets[p], l->plane_sizes[p], l->strides[p] };

	return v;
}

/* dmaio_fd_choose_path() with the reason copied to why (why_len bytes; may be NULL), write
 * non-zero for DMAIO_OP_WRITE: the form the path tests want. */
int t_choose_path(struct dmaio_buf *buf, uint64_t buf_off, int fd, uint64_t file_off, uint64_t len,
		  int write, uint32_t flags, char *why, size_t why_len);

/* dmaio_buf_alloc() from one provider by name (NULL: the library's order) with flags: the
 * form most tests want. */
int t_alloc(struct dmaio_ctx *ctx, const char *heap, uint64_t size, uint32_t flags,
	    struct dmaio_buf **buf);
int test_alloc_or_skip(struct dmaio_ctx *ctx, const char *heap, size_t size, unsigned flags,
		       struct dmaio_buf **buf);

/*
 * Skip on the host (exit 77), fail (exit 1) where devices are expected (test_expect_devices()):
 * for a device or kernel feature that is not there. Prints "SKIP: ..." or "FAIL: devices
 * expected ... but ...". Does not return.
 */
void test_no_device(const char *fmt, ...) __attribute__((noreturn, format(printf, 1, 2)));

/* ------------------------------------------------------------------------------------------ */
/* Failures counted, for the tests that go on after one */

/*
 * Checks are cmocka asserts (assert_int_equal, assert_true, ...): the first failure ends the
 * test. A test that deliberately goes on to report every mismatch (a matrix of paths x cases,
 * a table of probe answers, worker threads, which must never call a cmocka assert) reports
 * each one with test_fail() (or test_expect()) and ends with assert_no_failures_since(before),
 * @before being test_failures() when it started: the test fails when anything was reported.
 *
 * test_fail() counts (thread-safe) and prints "FAIL: [where: ]message" with cmocka's
 * print_error(), the first TEST_FAIL_PRINT_MAX of the process only; test_fail_printing() is
 * false once more were reported (whether a caller's extra detail, e.g. pat_report(), for the
 * failure it just reported would be printed too).
 * test_fail_count() counts failures the caller reported in its own way (a summary per class).
 * The macros need <cmocka.h>.
 */
#define TEST_FAIL_PRINT_MAX 50
void test_fail(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void test_fail_in(const char *where, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void test_vfail(const char *where, const char *fmt, va_list ap)
	__attribute__((format(printf, 2, 0)));
void test_fail_count(unsigned n);
unsigned test_failures(void);
bool test_fail_printing(void);

/* A check that goes on: test_fail(...) when @cond is false. */
#define test_expect(cond, ...)                                                                \
	do {                                                                                  \
		if (!(cond))                                                                  \
			test_fail(__VA_ARGS__);                                               \
	} while (0)

/* The cmocka assert that ends such a test: nothing was reported since @before. */
#define assert_no_failures_since(before)                                                      \
	do {                                                                                  \
		unsigned nf_ = test_failures() - (before);                                    \
		if (nf_)                                                                      \
			print_error("%u failure(s) reported above\n", nf_);                   \
		assert_int_equal(nf_, 0);                                                     \
	} while (0)

/*
 * assert_int_equal() for a result that is a count or a -errno: on a mismatch the message
 * names both ("dmaio_buf_alloc(...) = -ENOENT, expected 0"). A cmocka assert (fail_msg()).
 */
#define assert_rc_equal(rc, want)                                                             \
	do {                                                                                  \
		long r_ = (long)(rc), w_ = (long)(want);                                      \
		if (r_ != w_)                                                                 \
			fail_msg("%s = %s, expected %s", #rc, test_errname(r_),               \
				 test_errname(w_));                                           \
	} while (0)

/*
 * Run @fn(&@state) in a forked child as a cmocka test of its own, and fail the calling test
 * unless it passed. A fork copies the parent's test runner: an assert in the child must end
 * the child, never go on with the parent's remaining tests there; here it ends the child's own
 * test, the child exits non-zero (with _exit(): the parent's temp files and atexit handlers stay
 * the parent's) and the parent's assert on its status fails. A signal in the child fails too.
 */
void test_in_child(const char *name, void (*fn)(void **state), void *state);

/* ------------------------------------------------------------------------------------------ */
/* Small things several tests need */

#ifndef MIN
#define MIN(a, b) ((a) < (b) ? (a) : (b))
#endif
#ifndef MAX
#define MAX(a, b) ((a) > (b) ? (a) : (b))
#endif

/* Monotonic time in seconds. */
double test_now(void);

/* dmaio_path_name(), "?" for a value that names no path. */
const char *test_pname(int path);

/* The number at the start of a one-line file (sysfs, procfs), or -1. */
long test_read_long(const char *path);

/* The number of a /proc/meminfo line ("MemTotal", "CmaFree": kB; "HugePages_Free": pages), or -1. */
long test_meminfo(const char *key);

/* "-EINVAL" style name of a negative errno (or the number). Static storage for unknowns. */
const char *test_errname(long neg_err);

/* Expected dmaio_buf_kind() for a heap name as given to dmaio_buf_alloc(). */
int test_expected_kind(const char *heap_name);

/*
 * True when path @path must serve every read and write of a buffer of kind @kind (a
 * ::dmaio_buf_kind) against a regular file: DMAIO_PATH_AUTO always; with
 * DMAIO_RW_NO_FALLBACK any other path may answer -EOPNOTSUPP.
 */
bool test_path_mandatory(int kind, int path);

/* ------------------------------------------------------------------------------------------ */
/* The position-encoded pattern */

/*
 * Byte x of a stream with seed s is byte (x & 7) (little-endian) of pat_word(s, x & ~7).
 * pat_word() is a bijection of (seed * K + offset): every 8-byte word holds its own absolute
 * offset, so a byte moved to any other place (or taken from another seed) is detected, and a
 * wrong word can be decoded back to where it came from (pat_decode()).
 */
uint64_t pat_word(uint64_t seed, uint64_t off8);
uint8_t pat_byte(uint64_t seed, uint64_t off);

/* Fill @len bytes at @dst with the stream of @seed starting at stream offset @off. */
void pat_fill(void *dst, size_t len, uint64_t seed, uint64_t off);
/* Same, each byte complemented: differs from pat_fill() in every byte. */
void pat_fill_inv(void *dst, size_t len, uint64_t seed, uint64_t off);

/* Index of the first byte that differs from the stream, or -1 when all @len bytes match. */
long long pat_check(const void *p, size_t len, uint64_t seed, uint64_t off);
long long pat_check_inv(const void *p, size_t len, uint64_t seed, uint64_t off);

/* Index of the first byte not equal to @byte, or -1. */
long long mem_check_byte(const void *p, size_t len, uint8_t byte);
/* Index of the first differing byte of @a and @b, or -1. */
long long mem_first_diff(const void *a, const void *b, size_t len);

/*
 * Print (to stderr) a mismatch at byte @bad of @p (stream @seed at @off): expected and found
 * bytes around it, and where the found word seems to come from.
 */
void pat_report(const char *what, const void *p, size_t len, uint64_t seed, uint64_t off,
		long long bad, bool inv);

/* Decode a pattern word: the stream offset it holds for @seed, or -1 if it is not of @seed. */
int64_t pat_decode(uint64_t word, uint64_t seed, uint64_t max_off);

/* Well-known seeds, registered so pat_report() can name where stray data came from. */
#define SEED_GUARD 0x6775617264ull /* buffer guard */
#define SEED_FILE 0x66696c65ull     /* source file for reads */
#define SEED_BUF 0x627566ull        /* buffer contents for writes */
#define SEED_DEST 0x64657374ull     /* destination file prefill */

/* ------------------------------------------------------------------------------------------ */
/* dma-bufs made and used without the library */

/* A dma-buf of @len bytes from /dev/dma_heap/@heap (our own DMA_HEAP_IOCTL_ALLOC): fd or -errno. */
int test_heap_alloc_fd(const char *heap, size_t len);

/* DMA_BUF_IOCTL_SYNC with @flags (DMA_BUF_SYNC_*) on @fd, retried on EINTR/EAGAIN: 0 or -errno. */
int test_dmabuf_sync(int fd, uint64_t flags);

/* The value of "@key:" in /proc/self/fdinfo/@fd ("exp_name", "size", ...), "" when absent. */
void test_fdinfo(int fd, const char *key, char *out, size_t outlen);

/* ------------------------------------------------------------------------------------------ */
/* Files */

/*
 * The directories to create test files in: every writable directory of DMAIO_TEST_DIRS (space
 * separated), else TMPDIR (unless tmpfs), else /var/tmp. Returns the count; @dirs[i] static.
 */
int test_dirs(const char **dirs, int max);
/* The first of them. */
const char *test_dir(void);

/*
 * Create an empty temp file in @dir (NULL: test_dir()), open O_RDWR|O_CLOEXEC. The path is
 * copied to @path (may be NULL) and removed at exit. Returns the fd or exits on failure.
 */
int test_tmpfile(const char *dir, char *path, size_t path_len);

/* Remove the temp files now (also done at exit): this process's own, not a parent's. */
void test_cleanup(void);
/* _exit(code) from a forked child, removing the temp files the child made first. */
void test_child_exit(int code) __attribute__((noreturn));

ssize_t pread_full(int fd, void *p, size_t len, off_t off);
ssize_t pwrite_full(int fd, const void *p, size_t len, off_t off);

/* Write the stream @seed (stream offset = file offset) to [off, off + len) of @fd. 0 or -errno. */
int file_fill_pattern(int fd, off_t off, size_t len, uint64_t seed);
/* Write stream @seed from stream offset @pat_off (complemented when @inv) at [off, off + len). */
int file_fill_stream(int fd, off_t off, size_t len, uint64_t seed, uint64_t pat_off, bool inv);
/*
 * Check [off, off + len) of @fd against stream @seed at stream offset @pat_off.
 * Returns -1 when it matches, the first bad file offset, or -2 on a read error / short file.
 */
long long file_check_pattern(int fd, off_t off, size_t len, uint64_t seed, uint64_t pat_off);
long long file_check_pattern_inv(int fd, off_t off, size_t len, uint64_t seed, uint64_t pat_off);
/* Same for bytes that must be zero. */
long long file_check_zero(int fd, off_t off, size_t len);

/* 1 when an O_DIRECT open of @path works, 0 when it is refused. */
int test_can_odirect(const char *path);

/* ------------------------------------------------------------------------------------------ */
/* File descriptors */

/* Number of open fds of the process. */
int test_count_fds(void);

/* Bitmap of open fds (fds >= max are ignored). */
void test_fd_snapshot(uint8_t *set, int max);

/*
 * Check that every fd open now but not in @before is close-on-exec. Prints each offender.
 * Returns the number of offenders; *@nnew receives the number of new fds.
 */
int test_check_new_fds_cloexec(const uint8_t *before, int max, const char *what, int *nnew);

#endif /* DMAIO_TEST_COMMON_H */
