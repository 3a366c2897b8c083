/* SPDX-License-Identifier: MIT */
/*
 * libdmaio-account internals: what a source collects, before snapshot.c merges, sorts and
 * totals it. A source appends raw records (the same buffer or hold many times over); the
 * merge makes them unique.
 */
#ifndef DMAIO_ACCOUNT_INTERNAL_H
#define DMAIO_ACCOUNT_INTERNAL_H

#include "../dmaio-types.h"
#include "dmaio-account.h"

/* one buffer as a source saw it */
struct acct_buf {
	uint64_t ino;
	uint64_t size;
	char *exporter;          /* malloc'd, or NULL (unknown) */
	char *name;              /* malloc'd, or NULL */
	uint32_t flags;          /* DMAIO_SNAPSHOT_BUF_* */
	uint32_t holder_count;   /* set by the merge */
	uint32_t first_holder;   /* set by the merge */
};

/* one descriptor or mapping of a buffer in a process */
struct acct_ref {
	uint64_t ino;
	int32_t pid;
	uint32_t fds;
	uint32_t maps;
	uint32_t process;        /* set by the merge: the process's index */
	uint32_t buffer;         /* set by the merge: the buffer's index */
	uint64_t mapped_bytes;
};

struct acct_proc {
	int32_t pid;
	char *comm;              /* malloc'd */
	char *cgroup;            /* malloc'd: its cgroup v2 path, "" when it has none */
};

struct acct_raw {
	struct acct_buf *bufs;
	size_t nbufs, cap_bufs;
	struct acct_ref *refs;
	size_t nrefs, cap_refs;
	struct acct_proc *procs;
	size_t nprocs, cap_procs;
	uint32_t scanned, hidden, vanished;
	uint32_t flags;          /* DMAIO_SNAPSHOT_PARTIAL_*, _HAS_KERNEL */
};

/* appenders: 0 or -ENOMEM; strings are copied (NULL allowed) */
int acct_add_buf(struct acct_raw *raw, uint64_t ino, uint64_t size, const char *exporter,
		 const char *name, uint32_t flags);
int acct_add_ref(struct acct_raw *raw, int32_t pid, uint64_t ino, uint32_t fds, uint32_t maps,
		 uint64_t mapped_bytes);
int acct_add_proc(struct acct_raw *raw, int32_t pid, const char *comm, const char *cgroup);
void acct_raw_free(struct acct_raw *raw);

/* The /proc source: every process's (or one pid's) dma-buf descriptors and mappings. The
 * reason, on success, says what it could not see. */
int acct_proc_scan(struct acct_raw *raw, const char *proc_root, int32_t pid, uint32_t flags,
		   struct dmaio_reason *why);

/* The BPF source (bpf.c): every dma-buf of the kernel's list. open loads and attaches the
 * program (-EOPNOTSUPP without libbpf, BTF or the iterator; -EPERM without privilege), read
 * runs one iteration, close unloads. */
struct acct_bpf;
int acct_bpf_open(struct acct_bpf **b, struct dmaio_reason *why);
int acct_bpf_read(struct acct_bpf *b, struct acct_raw *raw, struct dmaio_reason *why);
void acct_bpf_close(struct acct_bpf *b);

#endif
