/* SPDX-License-Identifier: MIT */
/*
 * Helpers of the libFuzzer harnesses (tests/fuzz/README.md): the input read as a stream of
 * fields, a memfd holding bytes, and a check that aborts (libFuzzer then keeps the input).
 */
#ifndef DMAIO_FUZZ_H
#define DMAIO_FUZZ_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerInitialize(int *argc, char ***argv);

/* A broken promise of the library: say which and abort (a crash for libFuzzer). */
#define FUZZ_CHECK(cond, ...)                                                                   \
	do {                                                                                    \
		if (!(cond)) {                                                                  \
			fprintf(stderr, "%s:%d: check failed: %s: ", __FILE__, __LINE__, #cond); \
			fprintf(stderr, __VA_ARGS__);                                           \
			fputc('\n', stderr);                                                    \
			abort();                                                                \
		}                                                                               \
	} while (0)

/* The harness itself cannot go on (no memfd, no memory): not the library's fault. */
#define FUZZ_DIE(...)                                                                           \
	do {                                                                                    \
		fprintf(stderr, "fuzz harness: " __VA_ARGS__);                                  \
		fputc('\n', stderr);                                                            \
		exit(1);                                                                        \
	} while (0)

/* The input as fields: past its end every field reads as zero. */
struct fz {
	const uint8_t *p;
	size_t n;
};

static inline uint64_t fz_bytes(struct fz *f, unsigned k)
{
	uint64_t v = 0;

	for (unsigned i = 0; i < k; i++) {
		if (f->n) {
			v |= (uint64_t)f->p[0] << (8 * i);
			f->p++;
			f->n--;
		}
	}
	return v;
}

static inline uint8_t fz_u8(struct fz *f) { return (uint8_t)fz_bytes(f, 1); }
static inline uint16_t fz_u16(struct fz *f) { return (uint16_t)fz_bytes(f, 2); }
static inline uint32_t fz_u32(struct fz *f) { return (uint32_t)fz_bytes(f, 4); }
static inline uint64_t fz_u64(struct fz *f) { return fz_bytes(f, 8); }

/* A memfd (close-on-exec) holding @size bytes of @data. */
static inline int fuzz_memfd(const char *name, const void *data, size_t size)
{
	const char *p = data;
	int fd = memfd_create(name, MFD_CLOEXEC);

	if (fd < 0)
		FUZZ_DIE("memfd_create: %m");
	while (size > 0) {
		ssize_t w = write(fd, p, size);

		if (w <= 0)
			FUZZ_DIE("write to a memfd: %m");
		p += w;
		size -= (size_t)w;
	}
	return fd;
}

#endif
