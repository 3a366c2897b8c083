// SPDX-License-Identifier: MIT
/*
 * Smoke test for the DMA_BUF_IOCTL_RW_FILE kernel patch (tests/vm/kernel/0001-*.patch).
 * Built statically on the host by tests/vm/run (no library needed) and run in the VM:
 *
 *   rwfile-smoke [DIR]      DIR defaults to $TMPDIR, then /mnt/ext4
 *
 * With dma_buf_rw_file=off on the kernel command line it checks -ENOTTY everywhere;
 * otherwise it checks data and return values on the system heap, -EINVAL on the CMA heap
 * and on udmabuf. Exit 0 = pass, 1 = fail, 77 = no dma-heap.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>
#include <linux/dma-heap.h>
#include <linux/udmabuf.h>

#ifndef DMA_BUF_IOCTL_RW_FILE
struct dma_buf_rw_file {
	uint32_t flags;
	int32_t fd;
	uint64_t file_offset;
	uint64_t buf_offset;
	uint64_t buf_len;
};
#define DMA_BUF_RW_FLAGS_READ (1 << 0)
#define DMA_BUF_RW_FLAGS_WRITE (2 << 0)
#define DMA_BUF_RW_FLAGS_DIRECT (1u << 31)
#define DMA_BUF_IOCTL_RW_FILE _IOW('b', 4, struct dma_buf_rw_file)
#endif

#define MiB (1024u * 1024u)
#define FILE_SIZE (8 * MiB + 1234)
#define BUF_SIZE (16 * MiB)

static int failures;

#define CHECK(cond, ...)                                                                 \
	do {                                                                             \
		if (cond) {                                                              \
			printf("  ok   ");                                               \
		} else {                                                                 \
			printf("  FAIL ");                                               \
			failures++;                                                      \
		}                                                                        \
		printf(__VA_ARGS__);                                                     \
		printf("\n");                                                            \
	} while (0)

/* byte at file offset o: position-encoded so misplaced data is caught */
static uint8_t pat(uint64_t o)
{
	return (uint8_t)((o * 2654435761u) >> 13) ^ (uint8_t)(o >> 20);
}

/* ioctl through syscall() so the full long result is seen (glibc's ioctl returns int) */
static long rw(int buf, uint32_t flags, int fd, uint64_t foff, uint64_t boff, uint64_t len)
{
	struct dma_buf_rw_file a = {
		.flags = flags, .fd = fd, .file_offset = foff, .buf_offset = boff, .buf_len = len,
	};
	long r = syscall(SYS_ioctl, buf, DMA_BUF_IOCTL_RW_FILE, &a);

	return r < 0 ? -errno : r;
}

static int heap_alloc(const char *heap, size_t len, unsigned int fd_flags)
{
	char path[128];
	struct dma_heap_allocation_data d = { .len = len, .fd_flags = fd_flags };
	int h, r;

	snprintf(path, sizeof(path), "/dev/dma_heap/%s", heap);
	h = open(path, O_RDONLY | O_CLOEXEC);
	if (h < 0)
		return -errno;
	r = ioctl(h, DMA_HEAP_IOCTL_ALLOC, &d);
	r = r < 0 ? -errno : (int)d.fd;
	close(h);
	return r;
}

static int udmabuf_alloc(size_t len)
{
	struct udmabuf_create c = { .flags = UDMABUF_FLAGS_CLOEXEC, .size = len };
	int dev, mfd, r;

	dev = open("/dev/udmabuf", O_RDWR | O_CLOEXEC);
	if (dev < 0)
		return -errno;
	mfd = memfd_create("smoke", MFD_ALLOW_SEALING | MFD_CLOEXEC);
	if (mfd < 0 || ftruncate(mfd, len) || fcntl(mfd, F_ADD_SEALS, F_SEAL_SHRINK)) {
		close(dev);
		return -errno;
	}
	c.memfd = mfd;
	r = ioctl(dev, UDMABUF_CREATE, &c);
	r = r < 0 ? -errno : r;
	close(mfd);
	close(dev);
	return r;
}

static bool verify(const uint8_t *m, uint64_t boff, uint64_t foff, uint64_t len)
{
	for (uint64_t i = 0; i < len; i++)
		if (m[boff + i] != pat(foff + i)) {
			printf("       mismatch at buf %" PRIu64 " (file %" PRIu64 "): %02x != %02x\n",
			       boff + i, foff + i, m[boff + i], pat(foff + i));
			return false;
		}
	return true;
}

static bool all_bytes(const uint8_t *m, uint64_t off, uint64_t len, uint8_t v)
{
	for (uint64_t i = 0; i < len; i++)
		if (m[off + i] != v)
			return false;
	return true;
}

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static bool cmdline_has(const char *s)
{
	char buf[4096] = "";
	FILE *f = fopen("/proc/cmdline", "r");

	if (f) {
		if (!fgets(buf, sizeof(buf), f))
			buf[0] = 0;
		fclose(f);
	}
	return strstr(buf, s) != NULL;
}

static const char *other_heap(void)
{
	static const char *names[] = { "reserved", "linux,cma", "default_cma_region", "default-pool" };
	char path[128];

	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		snprintf(path, sizeof(path), "/dev/dma_heap/%s", names[i]);
		if (access(path, F_OK) == 0)
			return names[i];
	}
	return NULL;
}

int main(int argc, char **argv)
{
	const char *dir = argc > 1 ? argv[1] : getenv("TMPDIR") ? getenv("TMPDIR") : "/mnt/ext4";
	bool off = cmdline_has("dma_buf_rw_file=off");
	char path[512], path2[512];
	uint8_t *m, *chunk;
	int fd, dfd, buf, cma, ubuf, wfd;
	long r;

	setvbuf(stdout, NULL, _IOLBF, 0);
	printf("rwfile-smoke: dir=%s, expecting the ioctl %s\n", dir, off ? "OFF (ENOTTY)" : "ON");

	buf = heap_alloc("system", BUF_SIZE, O_RDWR | O_CLOEXEC);
	if (buf == -ENOENT) {
		printf("rwfile-smoke: SKIP no /dev/dma_heap/system\n");
		return 77;
	}
	CHECK(buf >= 0, "allocate %u MiB from the system heap (%s)", BUF_SIZE / MiB,
	      buf < 0 ? strerror(-buf) : "ok");
	if (buf < 0)
		return 1;

	/* test file with a known pattern, flushed and evicted from the page cache */
	snprintf(path, sizeof(path), "%s/rwfile-smoke.%d", dir, getpid());
	fd = open(path, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	CHECK(fd >= 0, "create %s", path);
	if (fd < 0)
		return 1;
	chunk = malloc(MiB);
	for (uint64_t o = 0; o < FILE_SIZE; o += MiB) {
		uint64_t n = FILE_SIZE - o < MiB ? FILE_SIZE - o : MiB;

		for (uint64_t i = 0; i < n; i++)
			chunk[i] = pat(o + i);
		if (pwrite(fd, chunk, n, o) != (ssize_t)n) {
			perror("pwrite");
			return 1;
		}
	}
	fsync(fd);
	posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED);
	dfd = open(path, O_RDONLY | O_DIRECT | O_CLOEXEC);
	CHECK(dfd >= 0, "open with O_DIRECT (%s)", dfd < 0 ? strerror(errno) : "ok");

	cma = other_heap() ? heap_alloc(other_heap(), 4 * MiB, O_RDWR | O_CLOEXEC) : -ENOENT;
	ubuf = udmabuf_alloc(4 * MiB);

	if (off) {
		CHECK(rw(buf, DMA_BUF_RW_FLAGS_READ, fd, 0, 0, 4096) == -ENOTTY,
		      "system heap, switched off: ENOTTY");
		CHECK(rw(buf, DMA_BUF_RW_FLAGS_READ | DMA_BUF_RW_FLAGS_DIRECT, fd, 0, 0, 4096) == -ENOTTY,
		      "system heap DIRECT, switched off: ENOTTY");
		CHECK(rw(buf, 0x77, -1, 0, 0, 0) == -ENOTTY, "garbage arguments, switched off: ENOTTY");
		if (cma >= 0)
			CHECK(rw(cma, DMA_BUF_RW_FLAGS_READ, fd, 0, 0, 4096) == -ENOTTY,
			      "CMA heap '%s', switched off: ENOTTY", other_heap());
		if (ubuf >= 0)
			CHECK(rw(ubuf, DMA_BUF_RW_FLAGS_READ, fd, 0, 0, 4096) == -ENOTTY,
			      "udmabuf, switched off: ENOTTY");
		goto out;
	}

	m = mmap(NULL, BUF_SIZE, PROT_READ | PROT_WRITE, MAP_SHARED, buf, 0);
	CHECK(m != MAP_FAILED, "mmap the dma-buf");
	if (m == MAP_FAILED)
		return 1;
	memset(m, 0xAA, BUF_SIZE);

	/* data paths */
	r = rw(buf, DMA_BUF_RW_FLAGS_READ, fd, 0, 0, 4 * MiB);
	CHECK(r == 0 && verify(m, 0, 0, 4 * MiB), "READ buffered 4 MiB at 0 -> %ld", r);
	r = rw(buf, DMA_BUF_RW_FLAGS_READ | DMA_BUF_RW_FLAGS_DIRECT, fd, 4 * MiB, 4 * MiB, 4 * MiB);
	CHECK(r == 0 && verify(m, 4 * MiB, 4 * MiB, 4 * MiB), "READ DIRECT 4 MiB at 4 MiB -> %ld", r);
	r = rw(buf, DMA_BUF_RW_FLAGS_READ | DMA_BUF_RW_FLAGS_DIRECT, dfd, 0, 8 * MiB, 4 * MiB);
	CHECK(r == 0 && verify(m, 8 * MiB, 0, 4 * MiB), "READ DIRECT through an O_DIRECT fd -> %ld", r);
	r = rw(buf, DMA_BUF_RW_FLAGS_READ, dfd, 12345, 12 * MiB + 777, 1000001);
	CHECK(r == 0 && verify(m, 12 * MiB + 777, 12345, 1000001),
	      "READ buffered unaligned (file 12345, buf +777, len 1000001) -> %ld", r);

	/* end of file */
	memset(m, 0xAA, 2 * MiB);
	r = rw(buf, DMA_BUF_RW_FLAGS_READ, fd, FILE_SIZE - 1000, 0, 4096);
	CHECK(r == 1000 && verify(m, 0, FILE_SIZE - 1000, 1000) && all_bytes(m, 1000, 3096, 0xAA),
	      "READ buffered across EOF returns the short count (1000) -> %ld", r);
	/* direct I/O transfers whole blocks: the rest of the page holding EOF may change */
	r = rw(buf, DMA_BUF_RW_FLAGS_READ | DMA_BUF_RW_FLAGS_DIRECT, fd, 8 * MiB, MiB, 8192);
	CHECK(r == 1234 && verify(m, MiB, 8 * MiB, 1234) && all_bytes(m, MiB + 4096, 4096, 0xAA),
	      "READ DIRECT across EOF returns the short count (1234) -> %ld", r);
	r = rw(buf, DMA_BUF_RW_FLAGS_READ, fd, FILE_SIZE, 0, 4096);
	CHECK(r == -ENODATA, "READ at EOF -> ENODATA (%ld)", r);
	r = rw(buf, DMA_BUF_RW_FLAGS_READ | DMA_BUF_RW_FLAGS_DIRECT, fd, 16 * MiB, 0, 4096);
	CHECK(r == -ENODATA, "READ DIRECT past EOF -> ENODATA (%ld)", r);

	/* argument checks */
	CHECK(rw(buf, DMA_BUF_RW_FLAGS_READ | DMA_BUF_RW_FLAGS_DIRECT, fd, 512, 0, 4096) == -EINVAL,
	      "DIRECT unaligned file offset -> EINVAL");
	CHECK(rw(buf, DMA_BUF_RW_FLAGS_READ | DMA_BUF_RW_FLAGS_DIRECT, fd, 0, 512, 4096) == -EINVAL,
	      "DIRECT unaligned buf offset -> EINVAL");
	CHECK(rw(buf, DMA_BUF_RW_FLAGS_READ | DMA_BUF_RW_FLAGS_DIRECT, fd, 0, 0, 1000) == -EINVAL,
	      "DIRECT unaligned length -> EINVAL");
	CHECK(rw(buf, DMA_BUF_RW_FLAGS_READ, fd, 0, 0, 0) == -EINVAL, "zero length -> EINVAL");
	CHECK(rw(buf, DMA_BUF_RW_FLAGS_READ, fd, 0, BUF_SIZE - 4096, 8192) == -EINVAL,
	      "range past the end of the dma-buf -> EINVAL");
	CHECK(rw(buf, DMA_BUF_RW_FLAGS_READ, fd, 0, UINT64_MAX - 10, 4096) == -EINVAL,
	      "buf_offset overflow -> EINVAL");
	CHECK(rw(buf, DMA_BUF_RW_FLAGS_READ, fd, UINT64_MAX - 100, 0, 4096) == -EINVAL,
	      "file_offset + buf_len overflow -> EINVAL");
	CHECK(rw(buf, 0, fd, 0, 0, 4096) == -EINVAL, "op 0 -> EINVAL");
	CHECK(rw(buf, 3, fd, 0, 0, 4096) == -EINVAL, "op 3 -> EINVAL");
	CHECK(rw(buf, DMA_BUF_RW_FLAGS_READ | (1u << 12), fd, 0, 0, 4096) == -EINVAL,
	      "unknown flag bit -> EINVAL");
	CHECK(rw(buf, DMA_BUF_RW_FLAGS_READ, -1, 0, 0, 4096) == -EBADF, "fd -1 -> EBADF");
	CHECK(rw(buf, DMA_BUF_RW_FLAGS_READ, 987, 0, 0, 4096) == -EBADF, "closed fd -> EBADF");
	{
		int p[2];

		if (pipe(p) == 0) {
			r = rw(buf, DMA_BUF_RW_FLAGS_READ, p[0], 0, 0, 4096);
			CHECK(r == -ESPIPE, "pipe -> ESPIPE (%ld)", r);
			close(p[0]);
			close(p[1]);
		}
	}
	{
		int ro = heap_alloc("system", MiB, O_RDONLY | O_CLOEXEC);

		if (ro >= 0) {
			r = rw(ro, DMA_BUF_RW_FLAGS_READ, fd, 0, 0, 4096);
			CHECK(r == -EBADF, "READ into a read-only dma-buf fd -> EBADF (%ld)", r);
			close(ro);
		}
	}
	{
		wfd = open(path, O_WRONLY | O_CLOEXEC);
		r = rw(buf, DMA_BUF_RW_FLAGS_READ, wfd, 0, 0, 4096);
		CHECK(r == -EBADF, "READ from a write-only file -> EBADF (%ld)", r);
		close(wfd);
	}

	/* WRITE: dma-buf -> file, buffered and direct, checked with pread */
	for (uint64_t i = 0; i < 8 * MiB; i++)
		m[i] = pat(i + 99);
	snprintf(path2, sizeof(path2), "%s/rwfile-smoke-w.%d", dir, getpid());
	wfd = open(path2, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	r = rw(buf, DMA_BUF_RW_FLAGS_WRITE, wfd, 0, 0, 4 * MiB);
	CHECK(r == 0, "WRITE buffered 4 MiB -> %ld", r);
	r = rw(buf, DMA_BUF_RW_FLAGS_WRITE | DMA_BUF_RW_FLAGS_DIRECT, wfd, 4 * MiB, 4 * MiB, 4 * MiB);
	CHECK(r == 0, "WRITE DIRECT 4 MiB -> %ld", r);
	r = rw(buf, DMA_BUF_RW_FLAGS_WRITE, wfd, 8 * MiB + 5, 3, 10);
	CHECK(r == 0, "WRITE buffered unaligned 10 bytes -> %ld", r);
	{
		struct stat st;
		uint8_t *back = malloc(8 * MiB + 15);
		bool same;

		fstat(wfd, &st);
		same = pread(wfd, back, 8 * MiB + 15, 0) == (ssize_t)(8 * MiB + 15) &&
		       memcmp(back, m, 8 * MiB) == 0 && memcmp(back + 8 * MiB + 5, m + 3, 10) == 0 &&
		       all_bytes(back, 8 * MiB, 5, 0);
		CHECK(same && st.st_size == 8 * MiB + 15, "WRITE data read back with pread (size %lld)",
		      (long long)st.st_size);
		free(back);
	}
	close(wfd);
	wfd = open(path2, O_RDONLY | O_CLOEXEC);
	r = rw(buf, DMA_BUF_RW_FLAGS_WRITE, wfd, 0, 0, 4096);
	CHECK(r == -EBADF, "WRITE to a read-only file -> EBADF (%ld)", r);
	close(wfd);
	unlink(path2);

	/* a raw block device (DMAIO_TEST_RAWDEV, scratch): WRITE then READ back, both DIRECT */
	if (getenv("DMAIO_TEST_RAWDEV")) {
		const char *dev = getenv("DMAIO_TEST_RAWDEV");
		int bfd = open(dev, O_RDWR | O_CLOEXEC);

		if (bfd >= 0) {
			for (uint64_t i = 0; i < MiB; i++)
				m[i] = pat(i + 7);
			memset(m + MiB, 0, MiB);
			r = rw(buf, DMA_BUF_RW_FLAGS_WRITE | DMA_BUF_RW_FLAGS_DIRECT, bfd, MiB, 0, MiB);
			CHECK(r == 0, "WRITE DIRECT 1 MiB to %s -> %ld", dev, r);
			r = rw(buf, DMA_BUF_RW_FLAGS_READ | DMA_BUF_RW_FLAGS_DIRECT, bfd, MiB, MiB, MiB);
			CHECK(r == 0 && memcmp(m, m + MiB, MiB) == 0, "READ DIRECT it back from %s -> %ld",
			      dev, r);
			close(bfd);
		} else {
			CHECK(0, "open %s: %s", dev, strerror(errno));
		}
	}

	/* exporters without the op */
	if (cma >= 0)
		CHECK(rw(cma, DMA_BUF_RW_FLAGS_READ, fd, 0, 0, 4096) == -EINVAL,
		      "CMA heap '%s' (no rw_file op) -> EINVAL", other_heap());
	else
		CHECK(0, "no CMA heap buffer (%s)", strerror(-cma));
	if (ubuf >= 0)
		CHECK(rw(ubuf, DMA_BUF_RW_FLAGS_READ, fd, 0, 0, 4096) == -EINVAL,
		      "udmabuf (no rw_file op) -> EINVAL");
	else
		CHECK(0, "no udmabuf (%s)", strerror(-ubuf));

	/* informational throughput, 8 MiB file, page cache dropped before each */
	for (int direct = 0; direct < 2; direct++) {
		double t;

		posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED);
		t = now();
		r = rw(buf, DMA_BUF_RW_FLAGS_READ | (direct ? DMA_BUF_RW_FLAGS_DIRECT : 0), fd, 0, 0, 8 * MiB);
		t = now() - t;
		printf("  info READ %s 8 MiB: %ld, %.1f MB/s\n", direct ? "DIRECT  " : "buffered", r,
		       8 * MiB / t / 1e6);
	}
	munmap(m, BUF_SIZE);
out:
	close(fd);
	if (dfd >= 0)
		close(dfd);
	unlink(path);
	printf("rwfile-smoke: %s (%d failure%s)\n", failures ? "FAIL" : "PASS", failures,
	       failures == 1 ? "" : "s");
	return failures ? 1 : 0;
}
