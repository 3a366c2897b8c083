/* SPDX-License-Identifier: MIT */
/**
 * @file dmaio-account.h
 * @brief libdmaio-account: who holds the dma-buf memory of the system. A snapshot of every
 * dma-buf: its inode, size, exporter and name, and each process that holds it through file
 * descriptors or mappings.
 *
 * Its own library, libdmaio-account (pkg-config libdmaio-account); it follows dmaio.h's naming
 * rule, extensible structs and reasons, and needs no context: a snapshot reads the system, not
 * the buffers of one program.
 *
 * @par Sources
 * - ::DMAIO_SNAPSHOT_PROC, any kernel: every process's dma-buf descriptors (/proc/PID/fd and
 *   fdinfo: size, exporter, name, inode) and dma-buf mappings (/proc/PID/maps). A buffer that
 *   one process only maps (its descriptor closed) is described through
 *   /proc/PID/map_files (needs CAP_SYS_ADMIN or CAP_CHECKPOINT_RESTORE) or the kernel's
 *   per-buffer sysfs statistics (/sys/kernel/dmabuf/buffers, Linux 5.13 to 6.x where built);
 *   without either its size is the length of its mappings and its exporter is unknown
 *   (::DMAIO_SNAPSHOT_BUF_PARTIAL). A caller without CAP_SYS_PTRACE sees only the processes it
 *   may trace (its own user's); the snapshot counts the others (dmaio_snapshot_info.hidden) and
 *   its reason says so. Buffers held by no process (by a driver, queued to a device, leaked
 *   by the kernel) are invisible to this source.
 * - ::DMAIO_SNAPSHOT_BPF, Linux 6.16 and later with BTF and the BPF dma-buf iterator: every
 *   dma-buf of the system, from the kernel's own list, including those held by no process
 *   (::DMAIO_SNAPSHOT_BUF_KERNEL); the holders still come from /proc. Needs CAP_BPF and
 *   CAP_PERFMON (or CAP_SYS_ADMIN), and a library built with libbpf.
 *
 * A snapshot is not atomic: a process that exits while it is read is left out (counted in
 * dmaio_snapshot_info.vanished), a descriptor closed and reused while it is read is checked
 * (its inode before and after) and left out when it changed. Threads of one process that do not
 * share its descriptor table (clone without CLONE_FILES) are counted with the process.
 */
#ifndef DMAIO_ACCOUNT_H
#define DMAIO_ACCOUNT_H

#include "dmaio.h"

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

struct dmaio_snapshot;
struct dmaio_snapshot_reader;

/** Where a snapshot's buffers come from (dmaio_snapshot_opts.source, dmaio_snapshot_info.source). */
enum dmaio_snapshot_source {
	/** BPF where it works, else /proc (the reason says why BPF was not used) */
	DMAIO_SNAPSHOT_AUTO = 0,
	/** /proc only */
	DMAIO_SNAPSHOT_PROC = 1,
	/** the BPF dma-buf iterator (fails when it cannot be used) */
	DMAIO_SNAPSHOT_BPF = 2
};

/** dmaio_snapshot_opts.flags: read only descriptors, not mappings (/proc/PID/maps is the
 *  costly part of a /proc snapshot; buffers that are only mapped are then missed). */
#define DMAIO_SNAPSHOT_NO_MAPS (1u << 0)
/** Every valid dmaio_snapshot_opts.flags bit. */
#define DMAIO_SNAPSHOT_FLAGS_ALL DMAIO_SNAPSHOT_NO_MAPS

/** Options of dmaio_snapshot_new() (1.1 size: ::DMAIO_SIZE_SNAPSHOT_OPTS). Zero-initialise with
 *  @c struct_size set. */
struct dmaio_snapshot_opts {
	uint32_t struct_size;    /**< set by the caller: sizeof(struct dmaio_snapshot_opts) */
	uint32_t source;         /**< ::dmaio_snapshot_source */
	uint32_t flags;          /**< DMAIO_SNAPSHOT_* flags */
	int32_t pid;             /**< 0: every process; > 0: only this process's holdings (with
				      the BPF source, every buffer is still listed) */
	/** the /proc to read, or NULL for "/proc" (a test or a container's view) */
	const char *proc_root;
};
/** Size of struct dmaio_snapshot_opts in 1.1. */
#define DMAIO_SIZE_SNAPSHOT_OPTS (offsetof(struct dmaio_snapshot_opts, proc_root) + sizeof(void *))

/** dmaio_snapshot_info.flags: some processes could not be read (permissions): their
 *  holdings are missing. */
#define DMAIO_SNAPSHOT_PARTIAL_PROCS (1u << 0)
/** dmaio_snapshot_info.flags: some buffers are known only by their mappings (size from the
 *  mappings' length, exporter unknown). */
#define DMAIO_SNAPSHOT_PARTIAL_BUFS (1u << 1)
/** dmaio_snapshot_info.flags: buffers held by no process are listed (the BPF source). */
#define DMAIO_SNAPSHOT_HAS_KERNEL (1u << 2)

/** The whole snapshot (dmaio_snapshot_get_info(); 1.1 size: ::DMAIO_SIZE_SNAPSHOT_INFO). */
struct dmaio_snapshot_info {
	uint32_t struct_size;    /**< set by the caller: sizeof(struct dmaio_snapshot_info) */
	uint32_t source;         /**< the source used: ::DMAIO_SNAPSHOT_PROC or ::DMAIO_SNAPSHOT_BPF */
	uint32_t flags;          /**< DMAIO_SNAPSHOT_PARTIAL_PROCS, _PARTIAL_BUFS, _HAS_KERNEL */
	uint32_t nbuffers;       /**< buffers (dmaio_snapshot_get_buffer()) */
	uint32_t nprocesses;     /**< processes holding at least one (dmaio_snapshot_get_process()) */
	uint32_t nholders;       /**< (process, buffer) pairs (dmaio_snapshot_get_holder()) */
	uint32_t scanned;        /**< processes read */
	uint32_t hidden;         /**< processes that could not be read (permissions) */
	uint32_t vanished;       /**< processes that exited or changed while they were read */
	uint32_t pad0;           /**< zero */
	uint64_t bytes;          /**< size of every listed buffer, each counted once */
	uint64_t kernel_bytes;   /**< of it, buffers held by no process (BPF source only) */
	uint64_t cma_total;      /**< CmaTotal of /proc/meminfo, bytes (0: none) */
	uint64_t cma_free;       /**< CmaFree of /proc/meminfo, bytes */
	int64_t time_ns;         /**< CLOCK_REALTIME when the snapshot started */
	uint64_t duration_ns;    /**< how long it took (CLOCK_MONOTONIC) */
	uint32_t memcg_accounting; /**< ::dmaio_snapshot_memcg: whether dma-heap allocations are
				        charged to the allocating process's memory cgroup */
	uint32_t ncgroups;       /**< cgroups of the holding processes
				      (dmaio_snapshot_get_cgroup()) */
};
/** Smallest struct_size of struct dmaio_snapshot_info (its first 1.1 size, up to duration_ns;
 *  memcg_accounting and ncgroups are filled when struct_size covers them). */
#define DMAIO_SIZE_SNAPSHOT_INFO (offsetof(struct dmaio_snapshot_info, duration_ns) + 8)

/** dmaio_snapshot_info.memcg_accounting: the kernel's dma-heap memcg accounting
 *  (/sys/module/dma_heap/parameters/mem_accounting, Linux 7.0 and later; the boot parameter
 *  dma_heap.mem_accounting=1). When on, the system heap allocates with __GFP_ACCOUNT: a buffer
 *  is charged to the memory cgroup of the process that allocated it, in its memory.current and
 *  the "kernel" line of its memory.stat, and stays charged there whoever holds it later, until
 *  it is freed. */
enum dmaio_snapshot_memcg {
	/** the kernel has no such accounting (before 7.0, or no dma-heaps) */
	DMAIO_SNAPSHOT_MEMCG_ABSENT = 0,
	/** it has, switched off (the default): dma-heap memory is charged to no cgroup */
	DMAIO_SNAPSHOT_MEMCG_OFF = 1,
	/** switched on */
	DMAIO_SNAPSHOT_MEMCG_ON = 2
};

/** dmaio_snapshot_buffer.flags: held by no process descriptor or mapping. */
#define DMAIO_SNAPSHOT_BUF_KERNEL (1u << 0)
/** dmaio_snapshot_buffer.flags: known only from mappings: size is their length, exporter "". */
#define DMAIO_SNAPSHOT_BUF_PARTIAL (1u << 1)

/** One dma-buf (dmaio_snapshot_get_buffer(); 1.1 size: ::DMAIO_SIZE_SNAPSHOT_BUFFER).
 *  Buffers are sorted by inode; strings belong to the snapshot. */
struct dmaio_snapshot_buffer {
	uint32_t struct_size;    /**< set by the caller: sizeof(struct dmaio_snapshot_buffer) */
	uint32_t flags;          /**< DMAIO_SNAPSHOT_BUF_* */
	uint64_t inode;          /**< the buffer's inode number (unique while it lives) */
	uint64_t size;           /**< bytes */
	const char *exporter;    /**< "system", "default_cma_region", "udmabuf", a DRM driver, ... */
	const char *name;        /**< the name set with DMA_BUF_SET_NAME, or "" */
	uint32_t nprocesses;     /**< processes holding it */
	uint32_t first_holder;   /**< its holders are first_holder .. first_holder + nprocesses - 1
				      (dmaio_snapshot_get_holder(), sorted by buffer, then pid) */
};
/** Size of struct dmaio_snapshot_buffer in 1.1. */
#define DMAIO_SIZE_SNAPSHOT_BUFFER (offsetof(struct dmaio_snapshot_buffer, first_holder) + 4)

/** One process's hold on one buffer (dmaio_snapshot_get_holder(); 1.1 size:
 *  ::DMAIO_SIZE_SNAPSHOT_HOLDER). */
struct dmaio_snapshot_holder {
	uint32_t struct_size;    /**< set by the caller: sizeof(struct dmaio_snapshot_holder) */
	uint32_t buffer;         /**< the buffer's index */
	uint32_t process;        /**< the process's index */
	int32_t pid;             /**< its pid (in the namespace of the /proc read) */
	uint32_t fds;            /**< descriptors of it */
	uint32_t maps;           /**< mappings (VMAs) of it */
	uint64_t mapped_bytes;   /**< bytes those mappings span */
};
/** Size of struct dmaio_snapshot_holder in 1.1. */
#define DMAIO_SIZE_SNAPSHOT_HOLDER (offsetof(struct dmaio_snapshot_holder, mapped_bytes) + 8)

/** One process holding dma-bufs (dmaio_snapshot_get_process(); 1.1 size:
 *  ::DMAIO_SIZE_SNAPSHOT_PROCESS). Processes are sorted by pid. A buffer's size counts in full
 *  in @c bytes of every process that holds it; @c pss_bytes shares it among them (like PSS). */
struct dmaio_snapshot_process {
	uint32_t struct_size;    /**< set by the caller: sizeof(struct dmaio_snapshot_process) */
	int32_t pid;             /**< pid (in the namespace of the /proc read) */
	const char *comm;        /**< its command name (/proc/PID/comm) */
	uint32_t nbuffers;       /**< buffers it holds */
	uint32_t pad0;           /**< zero */
	uint64_t bytes;          /**< their sizes */
	uint64_t private_bytes;  /**< of it, buffers no other process holds */
	uint64_t shared_bytes;   /**< of it, buffers other processes hold too */
	uint64_t pss_bytes;      /**< each buffer's size divided by the number of its holders */
	uint32_t cgroup;         /**< index of its cgroup (dmaio_snapshot_get_cgroup()) */
	uint32_t pad1;           /**< zero */
};
/** Smallest struct_size of struct dmaio_snapshot_process (its first 1.1 size, up to
 *  pss_bytes; cgroup is filled when struct_size covers it). */
#define DMAIO_SIZE_SNAPSHOT_PROCESS (offsetof(struct dmaio_snapshot_process, pss_bytes) + 8)

/** dmaio_snapshot_cgroup.flags: memory_current and memory_kernel were read (the cgroup has
 *  the memory controller, and its files are reachable through a cgroup2 mount of the
 *  caller's). */
#define DMAIO_SNAPSHOT_CGROUP_MEMORY (1u << 0)

/** One cgroup (v2) of the processes holding dma-bufs (dmaio_snapshot_get_cgroup(); 1.1 size:
 *  ::DMAIO_SIZE_SNAPSHOT_CGROUP). Cgroups are sorted by path. What its processes hold is not
 *  what it is charged: with ::DMAIO_SNAPSHOT_MEMCG_ON a buffer is charged to the cgroup of the
 *  process that allocated it, which may hold it no more, and a cgroup's "kernel" memory holds
 *  its slab, stacks and page tables too. */
struct dmaio_snapshot_cgroup {
	uint32_t struct_size;    /**< set by the caller: sizeof(struct dmaio_snapshot_cgroup) */
	uint32_t flags;          /**< DMAIO_SNAPSHOT_CGROUP_* */
	/** its path in the caller's cgroup namespace ("/" the root), from /proc/PID/cgroup; ""
	 *  for processes without a cgroup v2 line (a v1-only hierarchy) */
	const char *path;
	uint32_t nprocesses;     /**< processes of the snapshot in it */
	uint32_t nbuffers;       /**< buffers they hold, each once */
	uint64_t bytes;          /**< the sizes of those buffers, each once */
	uint64_t memory_current; /**< its memory.current, bytes (with DMAIO_SNAPSHOT_CGROUP_MEMORY) */
	uint64_t memory_kernel;  /**< the "kernel" line of its memory.stat, bytes (idem): where
				      dma-heap buffers its processes allocated are charged */
};
/** Size of struct dmaio_snapshot_cgroup in 1.1. */
#define DMAIO_SIZE_SNAPSHOT_CGROUP (offsetof(struct dmaio_snapshot_cgroup, memory_kernel) + 8)

#ifdef __cplusplus
}
#endif
#endif /* DMAIO_ACCOUNT_H */

#if !defined(DMAIO_NO_PROTOTYPES) && !defined(DMAIO_ACCOUNT_H_PROTOTYPES)
/** Set once the prototypes of dmaio-account.h were seen (an include guard). */
#define DMAIO_ACCOUNT_H_PROTOTYPES
#ifdef __cplusplus
extern "C" {
#endif

/** @name Snapshots of the system's dma-bufs */
/** @{ */
/**
 * @brief Take a snapshot of every dma-buf of the system and of who holds it.
 *
 * Reads the source, then closes everything it opened; the snapshot is plain memory.
 * @param opts options, or NULL for the defaults (::DMAIO_SNAPSHOT_AUTO, every process).
 * @param[out] snap receives the snapshot.
 * @param[out] reason what the snapshot cannot see (processes of other users, buffers known
 *        only by their mappings, why BPF was not used) even on success, or why it failed
 *        (or NULL).
 * @return 0.
 * @retval -EINVAL @p snap NULL, @c opts->struct_size below ::DMAIO_SIZE_SNAPSHOT_OPTS, an
 *         unknown source or flag, a negative pid, or @c reason->struct_size below
 *         ::DMAIO_SIZE_REASON.
 * @retval -ESRCH @c opts->pid names no process.
 * @retval -EACCES @c opts->pid is a process the caller may not read.
 * @retval -ENOENT the /proc to read is not there (not mounted).
 * @retval -EOPNOTSUPP ::DMAIO_SNAPSHOT_BPF asked and the library was built without libbpf, or
 *         the kernel has no BPF dma-buf iterator or no BTF.
 * @retval -EPERM ::DMAIO_SNAPSHOT_BPF asked and the caller may not load BPF programs.
 * @retval -EMFILE no descriptor left.
 * @retval -ENOMEM out of memory.
 */
int dmaio_snapshot_new(const struct dmaio_snapshot_opts *opts, struct dmaio_snapshot **snap,
		       struct dmaio_reason *reason);

/**
 * @brief Prepare to take snapshots again and again with the same options (a refreshing view,
 * a leak watch): the BPF source's program is loaded, verified and attached once, here, and kept
 * until dmaio_snapshot_reader_free(); loading it reads the kernel's BTF and costs more than a
 * snapshot of thousands of buffers. With ::DMAIO_SNAPSHOT_AUTO and no BPF, every snapshot comes
 * from /proc and its reason says why. The /proc source keeps nothing open between snapshots.
 * A reader is used by one thread at a time.
 * @param opts options, or NULL for the defaults (as dmaio_snapshot_new()); copied.
 * @param[out] reader receives the reader.
 * @param[out] reason why it failed (or NULL).
 * @return 0.
 * @retval -EINVAL @p reader NULL, or as dmaio_snapshot_new().
 * @retval -EOPNOTSUPP as dmaio_snapshot_new().
 * @retval -EPERM as dmaio_snapshot_new().
 * @retval -EMFILE no descriptor left.
 * @retval -ENOMEM out of memory.
 */
int dmaio_snapshot_reader_new(const struct dmaio_snapshot_opts *opts,
			      struct dmaio_snapshot_reader **reader, struct dmaio_reason *reason);

/**
 * @brief Take a snapshot with a reader: what dmaio_snapshot_new() does, without loading
 * anything again.
 * @param reader the reader.
 * @param[out] snap receives the snapshot.
 * @param[out] reason as for dmaio_snapshot_new() (or NULL).
 * @return 0.
 * @retval -EINVAL @p reader or @p snap NULL, or @c reason->struct_size below
 *         ::DMAIO_SIZE_REASON.
 * @retval -ESRCH as dmaio_snapshot_new().
 * @retval -EACCES as dmaio_snapshot_new().
 * @retval -ENOENT as dmaio_snapshot_new().
 * @retval -EBADMSG the BPF iterator gave damaged records.
 * @retval -EMFILE no descriptor left.
 * @retval -ENOMEM out of memory.
 */
int dmaio_snapshot_reader_take(struct dmaio_snapshot_reader *reader,
			       struct dmaio_snapshot **snap, struct dmaio_reason *reason);

/**
 * @brief Free a reader: unload what it loaded. Snapshots it took stay valid. NULL is a no-op.
 * @param reader the reader.
 */
void dmaio_snapshot_reader_free(struct dmaio_snapshot_reader *reader);

/**
 * @brief Free a snapshot and its strings. NULL is a no-op.
 * @param snap the snapshot.
 */
void dmaio_snapshot_free(struct dmaio_snapshot *snap);

/**
 * @brief What a snapshot holds: its source, counts and totals.
 * @param snap the snapshot.
 * @param[out] info filled up to @c info->struct_size.
 * @return 0.
 * @retval -EINVAL @p snap or @p info NULL, or @c info->struct_size below
 *         ::DMAIO_SIZE_SNAPSHOT_INFO.
 */
int dmaio_snapshot_get_info(const struct dmaio_snapshot *snap, struct dmaio_snapshot_info *info);

/**
 * @brief One buffer of a snapshot.
 * @param snap the snapshot.
 * @param index 0 to dmaio_snapshot_info.nbuffers - 1.
 * @param[out] buf filled up to @c buf->struct_size.
 * @return 0.
 * @retval -EINVAL @p snap or @p buf NULL, or @c buf->struct_size below
 *         ::DMAIO_SIZE_SNAPSHOT_BUFFER.
 * @retval -ERANGE @p index not below the number of buffers.
 */
int dmaio_snapshot_get_buffer(const struct dmaio_snapshot *snap, uint32_t index,
			      struct dmaio_snapshot_buffer *buf);

/**
 * @brief One process of a snapshot.
 * @param snap the snapshot.
 * @param index 0 to dmaio_snapshot_info.nprocesses - 1.
 * @param[out] proc filled up to @c proc->struct_size.
 * @return 0.
 * @retval -EINVAL @p snap or @p proc NULL, or @c proc->struct_size below
 *         ::DMAIO_SIZE_SNAPSHOT_PROCESS.
 * @retval -ERANGE @p index not below the number of processes.
 */
int dmaio_snapshot_get_process(const struct dmaio_snapshot *snap, uint32_t index,
			       struct dmaio_snapshot_process *proc);

/**
 * @brief One cgroup of a snapshot: where its holding processes live, what they hold, and the
 * cgroup's memory charge (memory.current and memory.stat "kernel", read when the snapshot was
 * taken). With dma-heap memcg accounting on (dmaio_snapshot_info.memcg_accounting), system-heap
 * buffers are charged to the cgroup of the process that allocated them.
 * @param snap the snapshot.
 * @param index 0 to dmaio_snapshot_info.ncgroups - 1 (dmaio_snapshot_process.cgroup).
 * @param[out] cgroup filled up to @c cgroup->struct_size.
 * @return 0.
 * @retval -EINVAL @p snap or @p cgroup NULL, or @c cgroup->struct_size below
 *         ::DMAIO_SIZE_SNAPSHOT_CGROUP.
 * @retval -ERANGE @p index not below the number of cgroups.
 */
int dmaio_snapshot_get_cgroup(const struct dmaio_snapshot *snap, uint32_t index,
			      struct dmaio_snapshot_cgroup *cgroup);

/**
 * @brief One (process, buffer) hold of a snapshot.
 * @param snap the snapshot.
 * @param index 0 to dmaio_snapshot_info.nholders - 1.
 * @param[out] holder filled up to @c holder->struct_size.
 * @return 0.
 * @retval -EINVAL @p snap or @p holder NULL, or @c holder->struct_size below
 *         ::DMAIO_SIZE_SNAPSHOT_HOLDER.
 * @retval -ERANGE @p index not below the number of holders.
 */
int dmaio_snapshot_get_holder(const struct dmaio_snapshot *snap, uint32_t index,
			      struct dmaio_snapshot_holder *holder);

/**
 * @brief The index of the buffer with an inode number.
 * @param snap the snapshot.
 * @param inode the inode number (fstat() of a dma-buf descriptor: st_ino).
 * @return the buffer's index (>= 0).
 * @retval -EINVAL @p snap NULL.
 * @retval -ENOENT no buffer of the snapshot has that inode.
 */
int dmaio_snapshot_find_buffer(const struct dmaio_snapshot *snap, uint64_t inode);
/** @} */

#ifdef __cplusplus
}
#endif
#endif /* prototypes */
