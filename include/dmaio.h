/* SPDX-License-Identifier: MIT */
/**
 * @file dmaio.h
 * @brief libdmaio: move file data into and out of DMA-BUFs by the fastest path the kernel offers.
 *
 * Conventions, for every function in this header:
 * - A function returning @c int or @c ssize_t returns a non-negative value on success and a negative
 *   errno value (@c -EINVAL, ...) on failure. @c errno is never the channel: it may be changed by any
 *   call and carries no meaning.
 * - Arguments are checked before anything else is done; a failed check changes nothing (not even
 *   the statistics). When several checks fail, which errno is returned is not specified.
 * - Every file descriptor the library creates is close-on-exec.
 * - A @c NULL context means the process-wide default context, created on first use.
 *   Contexts are thread-safe; a buffer may be used by several threads at once on disjoint ranges.
 *
 * Environment (read with secure_getenv(), so ignored in set-uid/set-gid processes):
 * - @c DMAIO_PATH=<name>: force one data path for every call of the process (see ::dmaio_path).
 *   A path forced through the flags of a call wins over the environment.
 * - @c DMAIO_DEBUG=1: log to stderr the path chosen for every call and why, and every fallback.
 */
#ifndef DMAIO_H
#define DMAIO_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#ifdef __cplusplus
extern "C" {
#endif

#define DMAIO_VERSION_MAJOR 0
#define DMAIO_VERSION_MINOR 1
#define DMAIO_VERSION_MICRO 0

/** A library context: probes, cached device fds, I/O engines. Opaque. */
struct dmaio_ctx;
/** A buffer: a dma-buf (or, when asked for by name, a memfd) of a fixed size. Opaque. */
struct dmaio_buf;

/* ------------------------------------------------------------------------------------------- */
/** @name Data paths */
/** @{ */
/**
 * The data paths, in the order the library prefers them. Names (dmaio_path_name()) are used by
 * @c DMAIO_PATH and the debug log.
 */
enum dmaio_path {
	DMAIO_PATH_AUTO = 0,           /**< let the library choose (the default) */
	DMAIO_PATH_RW_FILE = 1,        /**< "rw-file": proposed DMA_BUF_IOCTL_RW_FILE */
	DMAIO_PATH_URING_DMABUF = 2,   /**< "uring-dmabuf": proposed io_uring dma-buf registered buffers */
	DMAIO_PATH_UDMABUF_DIRECT = 3, /**< "udmabuf-direct": O_DIRECT io_uring into the memfd pages */
	DMAIO_PATH_BOUNCE_DIRECT = 4,  /**< "bounce-direct": O_DIRECT into bounce buffers, copied */
	DMAIO_PATH_BUFFERED = 5,       /**< "buffered": pread/pwrite against the mapping */
	DMAIO_PATH_SENDFILE = 6,       /**< "sendfile": sendfile/copy_file_range/splice with the memfd */
	DMAIO_PATH_COUNT = 7
};

/**
 * @brief Name of a path.
 * @param path a ::dmaio_path value.
 * @return a static string ("auto", "rw-file", ...), or NULL for an unknown value.
 */
const char *dmaio_path_name(int path);

/**
 * @brief Path value of a name.
 * @param name a path name as returned by dmaio_path_name() (case-sensitive).
 * @return the ::dmaio_path value (>= 0).
 * @retval -EINVAL @p name is NULL or names no path.
 */
int dmaio_path_from_name(const char *name);
/** @} */

/* ------------------------------------------------------------------------------------------- */
/** @name Contexts */
/** @{ */
/**
 * @brief Create a context.
 * Probing is lazy: nothing is opened until a function needs it.
 * @param[out] ctx receives the new context.
 * @return 0.
 * @retval -EINVAL @p ctx is NULL.
 * @retval -ENOMEM out of memory.
 */
int dmaio_ctx_new(struct dmaio_ctx **ctx);

/**
 * @brief Free a context. Buffers allocated from it must have been freed before. NULL is a no-op.
 * The default context (NULL) cannot be freed.
 * @param ctx the context.
 */
void dmaio_ctx_free(struct dmaio_ctx *ctx);
/** @} */

/* ------------------------------------------------------------------------------------------- */
/** @name Allocation */
/** @{ */
/** dmaio_alloc(): with @c heap NULL, a plain memfd may be returned when no dma-buf provider works. */
#define DMAIO_ALLOC_ALLOW_NON_DMABUF (1u << 0)
/** dmaio_alloc(): refuse results that are not dma-bufs, even for heap "memfd" (gives -EOPNOTSUPP). */
#define DMAIO_ALLOC_DMABUF_ONLY (1u << 1)
/** Every valid dmaio_alloc() flag. */
#define DMAIO_ALLOC_FLAGS_ALL (DMAIO_ALLOC_ALLOW_NON_DMABUF | DMAIO_ALLOC_DMABUF_ONLY)

/** Where a buffer comes from (dmaio_buf_kind()). */
enum dmaio_buf_kind {
	DMAIO_BUF_HEAP = 1,         /**< a /dev/dma_heap heap */
	DMAIO_BUF_UDMABUF = 2,      /**< udmabuf over a sealed shmem memfd */
	DMAIO_BUF_UDMABUF_HUGE = 3, /**< udmabuf over a sealed hugetlb memfd */
	DMAIO_BUF_DRM = 4,          /**< DRM dumb buffer exported with PRIME */
	DMAIO_BUF_MEMFD = 5,        /**< sealed memfd, not a dma-buf */
	DMAIO_BUF_IMPORTED = 6      /**< a dma-buf given to dmaio_import() */
};

/**
 * @brief Allocate a buffer.
 *
 * @param ctx context, or NULL for the default one.
 * @param heap where to allocate: NULL (the best dma-buf provider for file I/O here), the name of an
 *        entry of /dev/dma_heap, "udmabuf", "udmabuf-huge", "drm" or "memfd".
 * @param size bytes; rounded up to the page size (or the huge page size) by the provider, but
 *        dmaio_buf_size() and every range check use @p size as given.
 * @param flags 0 or a combination of DMAIO_ALLOC_* flags.
 * @param[out] buf receives the buffer.
 * @return 0.
 * @retval -EINVAL @p buf NULL, unknown flags, @p size 0, or @p heap empty, longer than 63 bytes,
 *         or containing '/' or "..".
 * @retval -ENOENT no heap or provider of that name, or its device node is absent ("udmabuf" without
 *         /dev/udmabuf, "drm" without a usable /dev/dri node).
 * @retval -ENODEV @p heap NULL and no dma-buf provider works (DMAIO_DEBUG=1 tells what is missing).
 * @retval -EOPNOTSUPP "memfd" with DMAIO_ALLOC_DMABUF_ONLY; or the provider exists but cannot make
 *         such a buffer (e.g. hugetlb memfds refused by udmabuf).
 * @retval -EFBIG @p size above the provider's limit (udmabuf size_limit_mb, list_limit).
 * @retval -EOVERFLOW @p size too large to round up to pages.
 * @retval -EACCES the device exists but cannot be opened by this process.
 * @retval -ENOMEM out of memory (in the process or the provider).
 */
int dmaio_alloc(struct dmaio_ctx *ctx, const char *heap, size_t size, unsigned flags,
		struct dmaio_buf **buf);

/**
 * @brief Wrap a dma-buf made elsewhere (V4L2, DRM, VFIO...). The fd is duplicated (CLOEXEC); the
 * caller keeps its own.
 * @param ctx context, or NULL.
 * @param dmabuf_fd a dma-buf file descriptor.
 * @param flags must be 0.
 * @param[out] buf receives the buffer.
 * @return 0.
 * @retval -EINVAL @p buf NULL or @p flags not 0.
 * @retval -EBADF @p dmabuf_fd negative or not open.
 * @retval -ENOTTY @p dmabuf_fd is open but is not a dma-buf.
 * @retval -ENOMEM out of memory.
 */
int dmaio_import(struct dmaio_ctx *ctx, int dmabuf_fd, unsigned flags, struct dmaio_buf **buf);

/**
 * @brief Free a buffer: unmap it, drop every registration, close the library's fds. NULL is a no-op.
 * @param buf the buffer.
 */
void dmaio_free(struct dmaio_buf *buf);

/**
 * @brief The buffer's fd (a dma-buf, or the memfd for kind DMAIO_BUF_MEMFD). Owned by the buffer.
 * @return the fd.
 * @retval -EINVAL @p buf NULL.
 */
int dmaio_buf_fd(const struct dmaio_buf *buf);

/**
 * @brief The buffer's size as requested from dmaio_alloc() (or the dma-buf's size when imported).
 * @return the size, 0 for a NULL @p buf.
 */
size_t dmaio_buf_size(const struct dmaio_buf *buf);

/**
 * @brief Where the buffer comes from.
 * @return a ::dmaio_buf_kind value.
 * @retval -EINVAL @p buf NULL.
 */
int dmaio_buf_kind(const struct dmaio_buf *buf);

/**
 * @brief The provider name: the heap name, "udmabuf", "udmabuf-huge", "drm", "memfd" or "import".
 * @return a string owned by the buffer, or NULL for a NULL @p buf.
 */
const char *dmaio_buf_provider(const struct dmaio_buf *buf);
/** @} */

/* ------------------------------------------------------------------------------------------- */
/** @name CPU access */
/** @{ */
/**
 * @brief Map the whole buffer read-write into the process. Mapping twice returns the same address.
 * @param buf the buffer.
 * @param[out] addr receives the address.
 * @return 0.
 * @retval -EINVAL @p buf or @p addr NULL.
 * @retval -ENODEV the exporter cannot be mapped.
 * @retval -ENOMEM no address space.
 */
int dmaio_map(struct dmaio_buf *buf, void **addr);

/**
 * @brief Drop the mapping made by dmaio_map().
 * @return 0.
 * @retval -EINVAL @p buf NULL.
 * @retval -ENOENT the buffer is not mapped.
 */
int dmaio_unmap(struct dmaio_buf *buf);

#define DMAIO_SYNC_READ 1u  /**< the CPU reads the buffer */
#define DMAIO_SYNC_WRITE 2u /**< the CPU writes the buffer */
#define DMAIO_SYNC_RW (DMAIO_SYNC_READ | DMAIO_SYNC_WRITE)

/**
 * @brief Begin CPU access (DMA_BUF_IOCTL_SYNC START); retried on EINTR/EAGAIN. A no-op for memfds.
 * @param buf the buffer.
 * @param dir DMAIO_SYNC_READ, DMAIO_SYNC_WRITE or both.
 * @return 0.
 * @retval -EINVAL @p buf NULL, or @p dir 0 or with unknown bits.
 * @retval other a negative errno from the exporter.
 */
int dmaio_sync_begin(struct dmaio_buf *buf, unsigned dir);

/**
 * @brief End CPU access (DMA_BUF_IOCTL_SYNC END). Same rules as dmaio_sync_begin().
 * @retval -EINVAL @p buf NULL, or @p dir 0 or with unknown bits.
 */
int dmaio_sync_end(struct dmaio_buf *buf, unsigned dir);
/** @} */

/* ------------------------------------------------------------------------------------------- */
/** @name File I/O */
/** @{ */
/** Force one path for this call: DMAIO_RW_PATH(DMAIO_PATH_BUFFERED). Wins over DMAIO_PATH.
 *  Values of the path bits that name no path (DMAIO_PATH_COUNT and above) give -EINVAL. */
#define DMAIO_RW_PATH(p) ((unsigned)(p) & 0xfu)
/** Mask of the path bits in the flags. */
#define DMAIO_RW_PATH_MASK 0xfu
/** With a forced path (flag or environment): fail with -EOPNOTSUPP rather than fall back. */
#define DMAIO_RW_NO_FALLBACK (1u << 4)
/** Every valid flag bit of dmaio_read_file() / dmaio_write_file(). */
#define DMAIO_RW_FLAGS_ALL (DMAIO_RW_PATH_MASK | DMAIO_RW_NO_FALLBACK)

/** What one dmaio_read_file_ex() / dmaio_write_file_ex() call did. */
struct dmaio_xfer {
	uint64_t done;          /**< bytes moved, also when the call failed part-way */
	int32_t path;           /**< ::dmaio_path that moved the bulk of the bytes (for 0 bytes: the
				     path that met end of file; DMAIO_PATH_AUTO when no path ran) */
	uint32_t fallbacks;     /**< paths that refused before one served */
	uint64_t unaligned;     /**< bytes moved outside the direct middle (heads, tails) */
	uint64_t ns;            /**< wall time of the call */
};

/**
 * @brief Read @p len bytes of file @p fd at @p file_off into the buffer at @p buf_off.
 *
 * The file may be open with or without O_DIRECT, at any offset; alignment is handled. Bytes of the
 * buffer outside [@p buf_off, @p buf_off + returned count) are never written.
 * A path that refuses (EINVAL from O_DIRECT, EOPNOTSUPP, ENOTTY, ENOSYS, EPERM...) is replaced by the
 * next one; a real I/O error is returned. When an error happens part-way, how many bytes had been
 * moved is given by dmaio_read_file_ex() (struct dmaio_xfer.done) and by the buffer's statistics
 * (struct dmaio_stats.last_done).
 *
 * @param buf the buffer.
 * @param buf_off where in the buffer.
 * @param fd a file open for reading (regular file or block device).
 * @param file_off where in the file (>= 0).
 * @param len bytes (0 returns 0 after the checks).
 * @param flags 0, DMAIO_RW_PATH(p), DMAIO_RW_NO_FALLBACK.
 * @return bytes read: @p len, or less only at end of file.
 * @retval -EINVAL @p buf NULL, unknown flags, @p file_off negative, or range past the buffer.
 * @retval -EOVERFLOW @p file_off + @p len overflows off_t, or @p buf_off + @p len overflows.
 * @retval -EBADF @p fd negative, closed, or not open for reading.
 * @retval -EISDIR @p fd is a directory.
 * @retval -ESPIPE @p fd is a pipe, socket or other file without offsets.
 * @retval -EINVAL @p fd is a file that cannot be read at offsets (eventfd, ...).
 * @retval -EOPNOTSUPP the forced path cannot serve this buffer/file and fallback is forbidden.
 * @retval -EIO, -ENOSPC, -EFBIG, -ENOMEM, ... an I/O error from the kernel.
 */
ssize_t dmaio_read_file(struct dmaio_buf *buf, size_t buf_off, int fd, off_t file_off, size_t len,
			unsigned flags);

/**
 * @brief Write @p len bytes of the buffer at @p buf_off to file @p fd at @p file_off.
 *
 * Bytes of the file outside [@p file_off, @p file_off + @p len) are never written; the file grows
 * when the range ends past its end. Same path rules as dmaio_read_file().
 * @return bytes written (@p len).
 * @retval -EINVAL @p buf NULL, unknown flags, @p file_off negative, or range past the buffer.
 * @retval -EOVERFLOW offset + length overflow.
 * @retval -EBADF @p fd negative, closed, not open for writing, or open with O_APPEND.
 * @retval -EISDIR @p fd is a directory.
 * @retval -ESPIPE @p fd is a pipe, socket or other file without offsets.
 * @retval -EOPNOTSUPP the forced path cannot serve and fallback is forbidden.
 * @retval -EIO, -ENOSPC, -EFBIG, ... an I/O error from the kernel.
 */
ssize_t dmaio_write_file(struct dmaio_buf *buf, size_t buf_off, int fd, off_t file_off, size_t len,
			 unsigned flags);

/**
 * @brief dmaio_read_file(), reporting what was done in @p xfer (may be NULL), also on failure.
 * @retval (as dmaio_read_file())
 */
ssize_t dmaio_read_file_ex(struct dmaio_buf *buf, size_t buf_off, int fd, off_t file_off, size_t len,
			   unsigned flags, struct dmaio_xfer *xfer);

/**
 * @brief dmaio_write_file(), reporting what was done in @p xfer (may be NULL), also on failure.
 * @retval (as dmaio_write_file())
 */
ssize_t dmaio_write_file_ex(struct dmaio_buf *buf, size_t buf_off, int fd, off_t file_off,
			    size_t len, unsigned flags, struct dmaio_xfer *xfer);

/**
 * @brief The path a read (@p write 0) or write (@p write 1) of this range would take now, and why.
 * Runs the same decision as the I/O functions, without moving data.
 * @param why buffer for a one-line reason (may be NULL).
 * @param why_len its size.
 * @return the ::dmaio_path value.
 * @retval -EINVAL, -EBADF, -EOVERFLOW, -ESPIPE, -EISDIR as for the I/O functions.
 * @retval -EOPNOTSUPP no path can serve.
 */
int dmaio_choose_path(struct dmaio_buf *buf, size_t buf_off, int fd, off_t file_off, size_t len,
		      int write, unsigned flags, char *why, size_t why_len);
/** @} */

/* ------------------------------------------------------------------------------------------- */
/** @name Statistics */
/** @{ */
/** Counters of a buffer or of a context. */
struct dmaio_stats {
	uint64_t bytes_read;                   /**< bytes moved file -> buffer */
	uint64_t bytes_written;                /**< bytes moved buffer -> file */
	uint64_t ops;                          /**< read/write calls */
	uint64_t errors;                       /**< calls that returned an error */
	uint64_t ns;                           /**< wall time inside read/write calls */
	uint64_t fallbacks;                    /**< paths that refused and were replaced */
	uint64_t unaligned_bytes;              /**< bytes moved outside a direct middle */
	uint64_t path_bytes[DMAIO_PATH_COUNT]; /**< bytes moved by each path */
	int32_t last_path;                     /**< path of the last call (DMAIO_PATH_AUTO if none) */
	int32_t last_result;                   /**< 0 or the -errno of the last call */
	uint64_t last_done;                    /**< bytes moved by the last call, also on error */
};

/**
 * @brief Counters of one buffer.
 * @retval -EINVAL @p buf or @p st NULL.
 */
int dmaio_buf_stats(const struct dmaio_buf *buf, struct dmaio_stats *st);

/**
 * @brief Counters of every buffer of a context (NULL: the default context), freed ones included.
 * @retval -EINVAL @p st NULL.
 * @retval -ENOMEM the default context could not be created.
 */
int dmaio_ctx_stats(struct dmaio_ctx *ctx, struct dmaio_stats *st);
/** @} */

/* ------------------------------------------------------------------------------------------- */
/** @name Probes */
/** @{ */
/** Answer of a capability probe. */
enum dmaio_cap {
	DMAIO_CAP_UNKNOWN = 0, /**< not probed yet (needs an allocation first) */
	DMAIO_CAP_YES = 1,     /**< works (proved by a call, not assumed) */
	DMAIO_CAP_NO = 2       /**< refused; the errno is kept beside it */
};

/** One /dev/dma_heap entry. */
struct dmaio_heap_info {
	char name[64];     /**< the heap name */
	int32_t alloc;     /**< ::dmaio_cap: a one-page allocation works */
	int32_t alloc_err; /**< -errno when it did not */
	int32_t mmap;      /**< ::dmaio_cap: that buffer can be mapped */
	int32_t rw_file;   /**< ::dmaio_cap: DMA_BUF_IOCTL_RW_FILE accepted by this exporter */
	int32_t rw_file_err; /**< -ENOTTY: kernel lacks it; -EINVAL: this exporter lacks it */
	int32_t reserved[3];
};

/** What this machine offers, probed once per context and cached. */
struct dmaio_sys_info {
	uint32_t page_size;
	int32_t nheaps;             /**< entries in /dev/dma_heap (-errno if unreadable) */
	int32_t udmabuf;            /**< ::dmaio_cap: /dev/udmabuf opens read-write */
	int32_t udmabuf_err;        /**< -ENOENT absent, -EACCES no permission */
	uint64_t udmabuf_size_limit; /**< bytes per udmabuf (size_limit_mb), 0 if unknown */
	uint32_t udmabuf_list_limit; /**< items per UDMABUF_CREATE_LIST, 0 if unknown */
	int32_t udmabuf_huge;       /**< ::dmaio_cap: udmabuf accepts a hugetlb memfd */
	int32_t hugetlb_memfd;      /**< ::dmaio_cap: memfd_create(MFD_HUGETLB) with a huge page works */
	uint32_t huge_page_size;    /**< default huge page size, 0 if none */
	int32_t io_uring;           /**< ::dmaio_cap: a ring can be set up */
	int32_t io_uring_err;       /**< -ENOSYS/-EPERM (seccomp, io_uring_disabled) */
	int32_t io_uring_disabled;  /**< /proc/sys/kernel/io_uring_disabled, -1 if absent */
	int32_t io_uring_fixed;     /**< ::dmaio_cap: buffers can be registered (memlock) */
	int32_t uring_dmabuf;       /**< ::dmaio_cap: proposed dma-buf registration accepted */
	int32_t uring_dmabuf_err;   /**< its -errno */
	int32_t drm;                /**< ::dmaio_cap: a DRM node does dumb buffers + PRIME */
	char drm_node[32];          /**< that node, e.g. "/dev/dri/card0" */
	int32_t rw_file_kernel;     /**< ::dmaio_cap: kernel knows DMA_BUF_IOCTL_RW_FILE (from a heap probe) */
	int32_t reserved[7];
};

/** Per-file O_DIRECT facts. */
struct dmaio_file_info {
	int32_t is_blockdev;        /**< 1 for a block device */
	int32_t direct;             /**< ::dmaio_cap: O_DIRECT open works */
	int32_t direct_err;         /**< its -errno */
	uint32_t dio_mem_align;     /**< STATX_DIOALIGN memory alignment (0: unknown/unsupported) */
	uint32_t dio_offset_align;  /**< STATX_DIOALIGN offset alignment */
	uint32_t dio_read_offset_align; /**< STATX_DIO_READ_ALIGN (6.16+), else = dio_offset_align */
	uint32_t align_source;      /**< 1 statx, 2 block size fallback, 0 none */
	uint32_t fs_magic;          /**< statfs f_type (0 for block devices) */
	uint64_t size;              /**< file or device size in bytes */
	int32_t reserved[6];
};

/**
 * @brief System capabilities (cached in the context after the first call).
 * @param ctx context, or NULL.
 * @param[out] info filled in.
 * @return 0.
 * @retval -EINVAL @p info NULL.
 * @retval -ENOMEM the default context could not be created.
 */
int dmaio_probe_system(struct dmaio_ctx *ctx, struct dmaio_sys_info *info);

/**
 * @brief The dma-heaps of this machine, each probed (a one-page allocation, mmap, RW_FILE).
 * @param ctx context, or NULL.
 * @param[out] heaps array to fill (may be NULL when @p max is 0).
 * @param max its length.
 * @return the number of heaps present (may exceed @p max: only @p max are written).
 * @retval -EINVAL @p heaps NULL with @p max > 0.
 * @retval -ENOMEM out of memory.
 */
int dmaio_probe_heaps(struct dmaio_ctx *ctx, struct dmaio_heap_info *heaps, size_t max);

/**
 * @brief O_DIRECT support and alignment of an open file.
 * @param ctx context, or NULL.
 * @param fd the file.
 * @param[out] info filled in.
 * @return 0.
 * @retval -EINVAL @p info NULL.
 * @retval -EBADF @p fd negative or closed.
 * @retval -EISDIR a directory. @retval -ESPIPE a pipe, socket or character device.
 */
int dmaio_probe_file(struct dmaio_ctx *ctx, int fd, struct dmaio_file_info *info);
/** @} */

#ifdef __cplusplus
}
#endif
#endif /* DMAIO_H */
