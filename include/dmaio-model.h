/* SPDX-License-Identifier: MIT */
/**
 * @file dmaio-model.h
 * @brief libdmaio model files: the tensor tables of safetensors and GGUF files, and loading their
 * tensors into dma-bufs through the asynchronous queue.
 *
 * Its own library, libdmaio-model (pkg-config libdmaio-model), on the public API of dmaio.h only
 * (same contexts and buffers); it follows dmaio.h's naming rule, extensible structs and reasons.
 * The safetensors reader needs jansson (JSON, UTF-8 validation, duplicate keys refused); a
 * libdmaio-model built without it refuses safetensors files with -EOPNOTSUPP and still reads
 * GGUF.
 *
 * @par Errors of dmaio_model_open(): what a file can lie about, one errno each
 * | errno              | the file...                                                          |
 * |--------------------|----------------------------------------------------------------------|
 * | -ENOEXEC           | is neither safetensors (a JSON object header) nor GGUF (magic)       |
 * | -EPROTONOSUPPORT   | is GGUF of a version other than 2 or 3 (or big-endian)               |
 * | -EOPNOTSUPP        | is safetensors and libdmaio was built without jansson                |
 * | -ENODATA           | has a header (length, strings, arrays, tensor infos) past its end   |
 * | -E2BIG             | has a count or length above the limits (DMAIO_MODEL_MAX_*)           |
 * | -EBADMSG           | has a malformed header: JSON syntax, wrong JSON types, missing or   |
 * |                    | unknown fields, an unknown GGUF value type, general.alignment not a |
 * |                    | power-of-two u32                                                     |
 * | -EILSEQ            | has invalid UTF-8 in the JSON header or in a GGUF key or tensor name |
 * | -EEXIST            | names a tensor twice (also across shards), or repeats a JSON or GGUF |
 * |                    | key                                                                  |
 * | -EPROTOTYPE        | uses a dtype or ggml type this library does not know                 |
 * | -EMSGSIZE          | gives a tensor a byte size that disagrees with dtype × shape (GGUF:  |
 * |                    | a first dimension that is not a multiple of the type's block)        |
 * | -EOVERFLOW         | has a shape, size or offset whose arithmetic overflows 64 bits       |
 * | -EDOM              | has a safetensors range with begin > end                             |
 * | -ERANGE            | has tensor data past the end of the file                             |
 * | -EADDRINUSE        | has two tensors whose bytes overlap                                  |
 * | -ENOTEMPTY         | is safetensors with data bytes no tensor owns (holes, trailing bytes)|
 * | -ENXIO             | is GGUF with a tensor offset not a multiple of general.alignment     |
 *
 * Each errno is for programs; for a person, the ::dmaio_reason of dmaio_model_open() names the
 * file, the field or tensor, and the offsets or values that are wrong. Nothing is allocated
 * when dmaio_model_open() fails.
 */
#ifndef DMAIO_MODEL_H
#define DMAIO_MODEL_H

#include "dmaio.h"

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

struct dmaio_model;
struct dmaio_load;

/** Most shard files one model has. */
#define DMAIO_MODEL_MAX_FILES 1024u
/** Most tensors of one file (and of one model). */
#define DMAIO_MODEL_MAX_TENSORS (1u << 20)
/** Most bytes of a safetensors JSON header (the reference implementation's limit). */
#define DMAIO_MODEL_MAX_HEADER 100000000u
/** Most dimensions of a tensor (GGUF: 4). */
#define DMAIO_MODEL_MAX_DIMS 8u
/** Longest tensor name in bytes (without the terminating NUL). */
#define DMAIO_MODEL_NAME_MAX 4096u
/** Most GGUF metadata key/values of one file. */
#define DMAIO_MODEL_MAX_KV (1u << 20)

/** The file formats. */
enum dmaio_model_format {
	DMAIO_MODEL_SAFETENSORS = 1,
	DMAIO_MODEL_GGUF = 2
};

/**
 * Element types. Values 0 to 255 are the ggml types of GGUF (same numbers); the safetensors-only
 * types follow from 256. Safetensors types that ggml also has map to the ggml value (F32, F16,
 * BF16, F64, I8, I16, I32, I64).
 */
enum dmaio_dtype {
	DMAIO_DTYPE_F32 = 0,
	DMAIO_DTYPE_F16 = 1,
	DMAIO_DTYPE_Q4_0 = 2,
	DMAIO_DTYPE_Q4_1 = 3,
	DMAIO_DTYPE_Q5_0 = 6,
	DMAIO_DTYPE_Q5_1 = 7,
	DMAIO_DTYPE_Q8_0 = 8,
	DMAIO_DTYPE_Q8_1 = 9,
	DMAIO_DTYPE_Q2_K = 10,
	DMAIO_DTYPE_Q3_K = 11,
	DMAIO_DTYPE_Q4_K = 12,
	DMAIO_DTYPE_Q5_K = 13,
	DMAIO_DTYPE_Q6_K = 14,
	DMAIO_DTYPE_Q8_K = 15,
	DMAIO_DTYPE_IQ2_XXS = 16,
	DMAIO_DTYPE_IQ2_XS = 17,
	DMAIO_DTYPE_IQ3_XXS = 18,
	DMAIO_DTYPE_IQ1_S = 19,
	DMAIO_DTYPE_IQ4_NL = 20,
	DMAIO_DTYPE_IQ3_S = 21,
	DMAIO_DTYPE_IQ2_S = 22,
	DMAIO_DTYPE_IQ4_XS = 23,
	DMAIO_DTYPE_I8 = 24,
	DMAIO_DTYPE_I16 = 25,
	DMAIO_DTYPE_I32 = 26,
	DMAIO_DTYPE_I64 = 27,
	DMAIO_DTYPE_F64 = 28,
	DMAIO_DTYPE_IQ1_M = 29,
	DMAIO_DTYPE_BF16 = 30,
	DMAIO_DTYPE_TQ1_0 = 34,
	DMAIO_DTYPE_TQ2_0 = 35,
	DMAIO_DTYPE_MXFP4 = 39,
	/* safetensors only */
	DMAIO_DTYPE_BOOL = 256,
	DMAIO_DTYPE_U8 = 257,
	DMAIO_DTYPE_U16 = 258,
	DMAIO_DTYPE_U32 = 259,
	DMAIO_DTYPE_U64 = 260,
	DMAIO_DTYPE_F8_E4M3 = 261,
	DMAIO_DTYPE_F8_E5M2 = 262
};

/** One tensor of a model (dmaio_model_get_tensor(); 1.0 size: ::DMAIO_SIZE_TENSOR_INFO).
 *  Strings belong to the model. */
struct dmaio_tensor_info {
	uint32_t struct_size;    /**< set by the caller: sizeof(struct dmaio_tensor_info) */
	uint32_t dtype;          /**< ::dmaio_dtype */
	const char *name;        /**< UTF-8, NUL-terminated, valid until dmaio_model_close() */
	const char *dtype_name;  /**< "F16", "Q4_K", "BOOL", ... (static) */
	uint32_t ndims;          /**< 0 (a scalar) to ::DMAIO_MODEL_MAX_DIMS */
	uint32_t file;           /**< shard index (the position of its fd in dmaio_model_open()) */
	uint64_t shape[DMAIO_MODEL_MAX_DIMS]; /**< as in the file: safetensors outermost first,
						   GGUF ne[0] (innermost) first; 0 past ndims */
	uint64_t nelems;         /**< elements: the product of the shape */
	uint32_t format;         /**< ::dmaio_model_format of that shard */
	uint32_t pad0;           /**< zero */
	uint64_t offset;         /**< absolute byte offset in that file */
	uint64_t nbytes;         /**< bytes */
};
/** Size of struct dmaio_tensor_info in 1.0. */
#define DMAIO_SIZE_TENSOR_INFO (offsetof(struct dmaio_tensor_info, nbytes) + 8)

/** One shard file of a model (dmaio_model_get_file(); 1.0 size: ::DMAIO_SIZE_MODEL_FILE_INFO). */
struct dmaio_model_file_info {
	uint32_t struct_size;    /**< set by the caller: sizeof(struct dmaio_model_file_info) */
	uint32_t format;         /**< ::dmaio_model_format */
	uint32_t version;        /**< GGUF version; 0 for safetensors */
	uint32_t alignment;      /**< GGUF general.alignment (default 32); 1 for safetensors */
	uint64_t file_size;      /**< file size, bytes */
	uint64_t data_offset;    /**< start of the data section (safetensors 8 + N; GGUF aligned) */
	uint64_t data_size;      /**< bytes from data_offset to the end of the last tensor */
	uint32_t ntensors;       /**< tensors of this file */
	uint32_t pad0;           /**< zero */
};
/** Size of struct dmaio_model_file_info in 1.0. */
#define DMAIO_SIZE_MODEL_FILE_INFO (offsetof(struct dmaio_model_file_info, pad0) + 4)

/** Every valid dmaio_model_open() flag (none yet). */
#define DMAIO_MODEL_FLAGS_ALL 0u

/** @name Loading: options and results */
/** @{ */
/** Load modes (dmaio_load_opts.mode). */
enum dmaio_load_mode {
	/** One buffer per shard holding its whole data section at its file phase: the data
	 *  start at buffer offset data_offset mod ::DMAIO_LOAD_PHASE, every tensor at its file
	 *  position relative to it (dmaio_load_opts.select and .align must be 0). */
	DMAIO_LOAD_WHOLE = 0,
	/** One buffer per tensor, the tensor at offset 0 (zero-byte tensors get no buffer).
	 *  Direct I/O serves only tensors whose file offset is a multiple of the file's O_DIRECT
	 *  alignment (e.g. GGUF with general.alignment 4096); the others are copied. */
	DMAIO_LOAD_PER_TENSOR = 1,
	/** Tensors packed in file order into buffers of at most dmaio_load_opts.max_buf bytes.
	 *  A tensor whose file offset is a multiple of @c align is placed at an offset congruent
	 *  to its file offset modulo ::DMAIO_LOAD_PHASE (so direct I/O can read it and tensors
	 *  adjacent in the file stay adjacent: one range); the others at the next multiple of
	 *  @c align. */
	DMAIO_LOAD_PACKED = 2
};

/** dmaio_load_opts.flags: after each range is read, drop the file's page cache over it
 *  (posix_fadvise(POSIX_FADV_DONTNEED)): a cold load leaves no page-cache residue. Pages of
 *  those ranges that were cached before the load are dropped as well. */
#define DMAIO_LOAD_DROP_CACHE (1u << 0)
/** Every valid dmaio_load_opts.flags bit. */
#define DMAIO_LOAD_FLAGS_ALL DMAIO_LOAD_DROP_CACHE

/** The phase kept between file offsets and buffer offsets (WHOLE, PACKED): 4 KiB, the largest
 *  usual O_DIRECT alignment and the page size. */
#define DMAIO_LOAD_PHASE 4096u
/** PACKED buffer limit when neither the caller nor the provider gives one: 1 GiB (room for
 *  the largest tensors of today's models, 256 MiB and more, at their file phase). */
#define DMAIO_LOAD_DEFAULT_MAX_BUF (1ull << 30)
/** Largest range one queued read covers; a longer tensor is read as several ranges. */
#define DMAIO_LOAD_RANGE_MAX (16ull << 20)

/**
 * Progress callback: @p done of @p total bytes are in their buffers. Called from the thread of
 * dmaio_model_load(), at least once per completion round. Return non-zero to cancel the load.
 */
typedef int (*dmaio_load_progress_fn)(void *arg, uint64_t done, uint64_t total);

/** Options of dmaio_model_load() (1.0 size: ::DMAIO_SIZE_LOAD_OPTS). Zero-initialise with
 *  @c struct_size set; fields not used must stay zero. */
struct dmaio_load_opts {
	uint32_t struct_size;    /**< set by the caller: sizeof(struct dmaio_load_opts) */
	uint32_t mode;           /**< ::dmaio_load_mode */
	uint32_t flags;          /**< DMAIO_LOAD_* flags */
	uint32_t rw_flags;       /**< DMAIO_RW_* flags of every range (a forced path); 0: auto */
	/** where new buffers come from, as for dmaio_buf_alloc() (providers, flags; the buffers
	 * are named "dmaio-model" (best effort: kernels before 5.8 keep them unnamed) unless @c alloc->name is set); NULL: the library's order */
	const struct dmaio_alloc_opts *alloc;
	uint32_t align;          /**< PACKED: tensor start alignment in a buffer, a power of two;
				      0 means 1 (only the file phase, see ::DMAIO_LOAD_PACKED) */
	uint32_t depth;          /**< queue depth, as dmaio_queue_new() (0: 32) */
	uint64_t max_buf;        /**< PACKED: most bytes per buffer; 0: the provider's limit (udmabuf
				      size_limit_mb for "udmabuf*" providers, and for none when
				      udmabuf works here), else ::DMAIO_LOAD_DEFAULT_MAX_BUF */
	const uint32_t *select;  /**< tensor indices to load (each once), or NULL for all */
	uint32_t nselect;        /**< entries of @c select */
	uint32_t nbufs;          /**< PACKED: entries of @c bufs (0: the load allocates) */
	/** PACKED into the caller's buffers instead of new ones (a runtime that reloads weights
	 *  into memory it already has, or a device arena): tensors fill bufs[0], then bufs[1], ...
	 *  each up to its dmaio_buf_size() (@c max_buf must be 0). The buffers stay the caller's:
	 *  dmaio_load_free() does not free them, and on failure they hold what was read so far
	 *  (only inside the tensors' places). */
	struct dmaio_buf *const *bufs;
	dmaio_load_progress_fn progress; /**< or NULL */
	void *progress_arg;      /**< passed to @c progress */
	const volatile int *cancel; /**< or NULL: the load is cancelled once *cancel is non-zero
					 (checked at every completion round) */
};
/** Size of struct dmaio_load_opts in 1.0. */
#define DMAIO_SIZE_LOAD_OPTS (offsetof(struct dmaio_load_opts, cancel) + sizeof(void *))

/** Where a loaded tensor is (dmaio_load_get_tensor(); 1.0 size: ::DMAIO_SIZE_TENSOR_PLACE). */
struct dmaio_tensor_place {
	uint32_t struct_size;    /**< set by the caller: sizeof(struct dmaio_tensor_place) */
	uint32_t buf_index;      /**< the buffer's index for dmaio_load_get_buf() */
	struct dmaio_buf *buf;   /**< the buffer (owned by the load); NULL for a zero-byte tensor */
	uint64_t offset;         /**< bytes from the start of the buffer */
	uint64_t nbytes;         /**< bytes */
};
/** Size of struct dmaio_tensor_place in 1.0. */
#define DMAIO_SIZE_TENSOR_PLACE (offsetof(struct dmaio_tensor_place, nbytes) + 8)

/** What a load did (dmaio_load_get_stats(); 1.0 size: ::DMAIO_SIZE_LOAD_STATS). */
struct dmaio_load_stats {
	uint32_t struct_size;    /**< set by the caller: sizeof(struct dmaio_load_stats) */
	uint32_t pad0;           /**< zero */
	uint64_t bytes;          /**< bytes read into buffers */
	uint64_t ranges;         /**< ranges queued */
	uint64_t buffers;        /**< buffers allocated */
	uint64_t buffer_bytes;   /**< their sizes, summed */
	uint64_t ns;             /**< wall time of dmaio_model_load() */
	uint64_t fallbacks;      /**< path fallbacks of the ranges */
	uint64_t alloc_ns;       /**< time spent allocating the new buffers, and faulting in those
				      of memfd-backed providers (a thread of the load does it while
				      earlier ones are read; 0 with dmaio_load_opts.bufs) */
	uint64_t alloc_wait_ns;  /**< of it, the time reading waited for a buffer */
	uint64_t path_bytes[DMAIO_PATH_SLOTS]; /**< bytes moved by each path (index ::dmaio_path) */
};
/** Size of struct dmaio_load_stats in 1.0. */
#define DMAIO_SIZE_LOAD_STATS (offsetof(struct dmaio_load_stats, path_bytes) + 8 * DMAIO_PATH_SLOTS)
/** @} */

#ifdef __cplusplus
}
#endif
#endif /* DMAIO_MODEL_H */

#if !defined(DMAIO_NO_PROTOTYPES) && !defined(DMAIO_MODEL_H_PROTOTYPES)
/** Set once the prototypes of dmaio-model.h were seen (an include guard). */
#define DMAIO_MODEL_H_PROTOTYPES
#ifdef __cplusplus
extern "C" {
#endif

/** @name Model files */
/** @{ */
/**
 * @brief Read the tensor tables of a model made of one or more shard files.
 *
 * Every file is recognised by its first bytes ("GGUF" or a safetensors header length followed by
 * '{'), read with pread() and validated completely (see the table in the file comment) before the
 * call returns; the tensor data is not read. The library keeps a duplicate (O_CLOEXEC) of each
 * fd; the caller's fds may be closed afterwards. Tensor names must be unique across the shards.
 * Tensors are numbered shard by shard, in order of their offsets in the file.
 * @param ctx context for loading, or NULL for the default one.
 * @param fds the shard files, open for reading (regular files or block devices).
 * @param nfds how many (1 to ::DMAIO_MODEL_MAX_FILES).
 * @param flags 0.
 * @param[out] model receives the model.
 * @param[out] reason why a file was refused: the shard, the field or tensor, the offsets or
 *        values (or NULL).
 * @return 0.
 * @retval -EINVAL @p fds or @p model NULL, @p nfds 0 or above the limit, unknown @p flags, or
 *         @c reason->struct_size below ::DMAIO_SIZE_REASON.
 * @retval -EBADF an fd negative, not open, an O_PATH descriptor, or not open for reading.
 * @retval -ESPIPE an fd that is not a regular file or block device.
 * @retval -EMFILE no descriptor left for the duplicates (also for the system-wide limit).
 * @retval -ENOMEM out of memory.
 * @retval -EIO an I/O error reading a header (or another -errno of pread()).
 * @retval -ENOEXEC, -EPROTONOSUPPORT, -EOPNOTSUPP, -ENODATA, -E2BIG, -EBADMSG, -EILSEQ, -EEXIST,
 *         -EPROTOTYPE, -EMSGSIZE, -EOVERFLOW, -EDOM, -ERANGE, -EADDRINUSE, -ENOTEMPTY, -ENXIO
 *         a file is malformed, as the table of the file comment says.
 */
int dmaio_model_open(struct dmaio_ctx *ctx, const int *fds, uint32_t nfds, uint32_t flags,
		     struct dmaio_model **model, struct dmaio_reason *reason);

/**
 * @brief Close a model: its descriptors and tables. Loads made from it stay valid. NULL is a no-op.
 * @param model the model.
 */
void dmaio_model_close(struct dmaio_model *model);

/**
 * @brief Number of tensors of the model (all shards).
 * @param model the model.
 * @return the count (>= 0).
 * @retval -EINVAL @p model NULL.
 */
int dmaio_model_tensor_count(const struct dmaio_model *model);

/**
 * @brief Number of shard files of the model.
 * @param model the model.
 * @return the count (>= 1).
 * @retval -EINVAL @p model NULL.
 */
int dmaio_model_file_count(const struct dmaio_model *model);

/**
 * @brief One tensor of the model.
 * @param model the model.
 * @param index 0 to dmaio_model_tensor_count() - 1.
 * @param[out] info filled in (its @c struct_size set by the caller).
 * @return 0.
 * @retval -EINVAL @p model or @p info NULL, or @c info->struct_size below ::DMAIO_SIZE_TENSOR_INFO.
 * @retval -ERANGE @p index not below the count.
 */
int dmaio_model_get_tensor(const struct dmaio_model *model, uint32_t index,
			   struct dmaio_tensor_info *info);

/**
 * @brief The index of the tensor of that name (binary search).
 * @param model the model.
 * @param name the name (exact bytes).
 * @return the index (>= 0).
 * @retval -EINVAL @p model or @p name NULL.
 * @retval -ENOENT no tensor has that name.
 */
int dmaio_model_find_tensor(const struct dmaio_model *model, const char *name);

/**
 * @brief One shard file of the model.
 * @param model the model.
 * @param index 0 to dmaio_model_file_count() - 1.
 * @param[out] info filled in (its @c struct_size set by the caller).
 * @return 0.
 * @retval -EINVAL @p model or @p info NULL, or @c info->struct_size below ::DMAIO_SIZE_MODEL_FILE_INFO.
 * @retval -ERANGE @p index not below the number of files.
 */
int dmaio_model_get_file(const struct dmaio_model *model, uint32_t index,
			 struct dmaio_model_file_info *info);

/**
 * @brief The name of an element type ("F32", "Q4_K", "BOOL"...).
 * @param dtype a ::dmaio_dtype.
 * @return a static string, or NULL for a value that is not a ::dmaio_dtype.
 */
const char *dmaio_dtype_name(uint32_t dtype);
/** @} */

/** @name Loading tensors into buffers */
/** @{ */
/**
 * @brief Load tensors of a model into newly allocated buffers (or the caller's, see
 * dmaio_load_opts.bufs), many ranges in flight on one queue.
 *
 * The whole plan (buffer sizes, each tensor's place) is made first. New buffers are then
 * allocated in plan order by a thread of the call (its signals blocked) while the tensors of the
 * buffers before are read, and those of memfd-backed providers ("memfd", "udmabuf*"), after the
 * first, are faulted in there (MADV_POPULATE_WRITE, 5.14+), so the kernel's work on new memory
 * overlaps with the transfers (dmaio_load_stats.alloc_ns / alloc_wait_ns). Such buffers come
 * back mapped (dmaio_buf_map() returns that mapping). Every tensor (or data section) is read
 * with dmaio_queue_submit() through registered files of the shards; tensors adjacent in the file
 * and in a buffer are read as one range, ranges longer than ::DMAIO_LOAD_RANGE_MAX are split.
 * Memory: the buffers, plus bookkeeping of about 100 bytes per tensor, plus what the queue holds
 * (at most @c depth chunks in flight, see dmaio_queue_new(); chunks that are bounced share the
 * queue's 16 MiB of pinned bounce memory, whatever the depth, made on first use); the model is
 * never copied elsewhere. Measured peak RSS growth: bench/RESULTS.md, "Model loading".
 * On any failure or cancellation everything is freed (buffers, queue, registered files).
 * @param model the model.
 * @param opts options (its @c struct_size set), or NULL for WHOLE into the best provider.
 * @param[out] load receives the load.
 * @param[out] reason why it failed (the option, the tensor, the provider refusals), or NULL.
 * @return 0.
 * @retval -EINVAL @p model or @p load NULL, @c opts->struct_size below ::DMAIO_SIZE_LOAD_OPTS, unknown
 *         mode, flags or rw_flags, non-zero padding, @c align not a power of two (or not 0 in
 *         WHOLE), @c select with an index out of range or repeated, @c select (or @c nselect)
 *         in WHOLE mode, @c nselect without @c select, @c max_buf outside PACKED, @c depth above
 *         ::DMAIO_QUEUE_DEPTH_MAX; @c bufs NULL with @c nbufs or the reverse, with a NULL entry,
 *         outside PACKED, or with @c max_buf or @c alloc; @c bufs of another context than the
 *         model's; or @c alloc refused by dmaio_buf_alloc()'s checks.
 * @retval -E2BIG @c opts->struct_size larger than this library knows, with non-zero bytes past it; or
 *         the plan needs more than INT_MAX buffers.
 * @retval -ENOSPC the caller's buffers cannot hold the selected tensors (nothing is read).
 * @retval -EFBIG PACKED: a tensor larger than the buffer limit; or the provider's limit refused a
 *         buffer (dmaio_buf_alloc()).
 * @retval -ECANCELED the progress callback returned non-zero or *cancel became non-zero.
 * @retval -ENODATA a file got shorter than its tensor table says since dmaio_model_open().
 * @retval -ENOENT, -ENODEV, -EOPNOTSUPP, -EACCES, -ENOMEM as dmaio_buf_alloc() for the buffers.
 * @retval -EMFILE no descriptor left for the registered files of the shards or the queue
 *         (dmaio_file_open(), dmaio_queue_new()).
 * @retval -EIO, ... an I/O error of a range (dmaio_queue_reap()); -EOPNOTSUPP when @c rw_flags
 *         force a path that cannot serve with DMAIO_RW_NO_FALLBACK.
 */
int dmaio_model_load(struct dmaio_model *model, const struct dmaio_load_opts *opts,
		     struct dmaio_load **load, struct dmaio_reason *reason);

/**
 * @brief Where a tensor of the model was loaded.
 * @param load the load.
 * @param tensor the tensor's model index.
 * @param[out] place filled in (its @c struct_size set by the caller).
 * @return 0.
 * @retval -EINVAL @p load or @p place NULL, or @c place->struct_size below ::DMAIO_SIZE_TENSOR_PLACE.
 * @retval -ERANGE @p tensor is not a tensor of the model.
 * @retval -ENOENT the tensor was not selected for this load.
 */
int dmaio_load_get_tensor(const struct dmaio_load *load, uint32_t tensor,
			  struct dmaio_tensor_place *place);

/**
 * @brief Number of buffers of a load.
 * @param load the load.
 * @return the count (>= 0).
 * @retval -EINVAL @p load NULL.
 */
int dmaio_load_buf_count(const struct dmaio_load *load);

/**
 * @brief One buffer of a load (owned by the load: do not free it).
 * @param load the load.
 * @param index 0 to dmaio_load_buf_count() - 1.
 * @param[out] buf receives the buffer.
 * @return 0.
 * @retval -EINVAL @p load or @p buf NULL.
 * @retval -ERANGE @p index not below the count.
 */
int dmaio_load_get_buf(const struct dmaio_load *load, uint32_t index, struct dmaio_buf **buf);

/**
 * @brief What the load did: bytes, ranges, buffers, time and the paths used.
 * @param load the load.
 * @param[out] st filled in (its @c struct_size set by the caller).
 * @return 0.
 * @retval -EINVAL @p load or @p st NULL, or @c st->struct_size below ::DMAIO_SIZE_LOAD_STATS.
 */
int dmaio_load_get_stats(const struct dmaio_load *load, struct dmaio_load_stats *st);

/**
 * @brief Free a load and every buffer it allocated. NULL is a no-op.
 * @param load the load.
 */
void dmaio_load_free(struct dmaio_load *load);
/** @} */

#ifdef __cplusplus
}
#endif
#endif /* prototypes */
