/* SPDX-License-Identifier: MIT */
/*
 * Device memory for the tests: a vfio-pci device (the VM's ivshmem-plain, tests/vm/README.md
 * "VFIO device memory") opened through its group and the legacy container, ranges of one of
 * its BARs exported as dma-bufs (VFIO_DEVICE_FEATURE_DMA_BUF), and the BAR read and written
 * through the device fd (the region's pread/pwrite), a way to the memory that is not the
 * dma-buf's: what the library wrote or did not write is checked there. The device's memory
 * decoding (PCI_COMMAND_MEMORY) can be switched off and on: vfio-pci then revokes its dma-bufs.
 * Everything returns 0 (or an fd) or -errno; on failure @why (may be NULL) says what failed.
 */
#ifndef DMAIO_TEST_VFIO_H
#define DMAIO_TEST_VFIO_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct test_vfio {
	int container, group, device;
	bool noiommu;            /* the group is /dev/vfio/noiommu-N */
	char bdf[32];
	int bar;                 /* the BAR of the calls below */
	uint64_t bar_size;       /* its region's size */
	uint64_t bar_offset;     /* its region's offset in the device fd */
	uint64_t cfg_offset;     /* the config space region's offset */
};

/* The device named by env DMAIO_TEST_VFIO ("0000:00:10.0", set by the VM's /init when it
 * bound the device), or NULL. */
const char *test_vfio_env(void);

int test_vfio_open(const char *bdf, int bar, struct test_vfio *v, char *why, size_t why_len);
void test_vfio_close(struct test_vfio *v);

/* A dma-buf of @nr ranges (offset, length pairs, page aligned) of the BAR: its fd (O_RDWR |
 * O_CLOEXEC), or -errno. */
int test_vfio_dmabuf(struct test_vfio *v, const uint64_t (*ranges)[2], unsigned nr);

/* The BAR through the device fd: every byte of [off, off + len), or -errno. */
int test_vfio_bar_read(struct test_vfio *v, void *dst, size_t len, uint64_t off);
int test_vfio_bar_write(struct test_vfio *v, const void *src, size_t len, uint64_t off);

/* PCI_COMMAND_MEMORY on (true) or off (false) through the config space region; off revokes
 * the device's dma-bufs (vfio_pci_dma_buf_move()). */
int test_vfio_memory(struct test_vfio *v, bool on);

/* The proposed revoke and memory-attribute requests of the mmap series (our 7.3 port with
 * vfio_dmabuf_mmap=on; lib/uapi/vfio-dmabuf-mmap.h): revoke @dmabuf_fd for good; map it
 * write-combined (@wc) or uncached from its next mmap() on. -ENOTTY on a kernel without them. */
int test_vfio_revoke(struct test_vfio *v, int dmabuf_fd);
/* vfio_dmabuf_mmap=on on the kernel command line (tests/vm/run --vfio-mmap=on): the test
 * kernel has the ported series and it is switched on. Without the word (mainline, or the switch
 * off) a VFIO dma-buf has no mmap. */
bool test_vfio_mmap_on(void);
int test_vfio_memattr(struct test_vfio *v, int dmabuf_fd, bool wc);

#endif
