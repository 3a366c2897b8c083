// SPDX-License-Identifier: (GPL-2.0-only OR MIT)
/*
 * The BPF program of the accounting's BPF source: for each dma-buf of the kernel's list (the
 * dma-buf iterator, kernel/bpf/dmabuf_iter.c, Linux 6.16+), one fixed-size record into the
 * iterator's seq_file, read by bpf.c. The kernel structs are declared here with only the
 * fields read, relocated against the running kernel's BTF (CO-RE): no vmlinux.h of the build
 * machine. Dual-licensed so the kernel accepts its GPL-only helpers (bpf_seq_write).
 */
#include <linux/types.h>
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_core_read.h>

#include "dmabuf-record.h"

struct inode {
	unsigned long i_ino;
} __attribute__((preserve_access_index));

struct file {
	struct inode *f_inode;
} __attribute__((preserve_access_index));

struct dma_buf {
	__kernel_size_t size;
	struct file *file;
	const char *exp_name;
	const char *name;
} __attribute__((preserve_access_index));

struct seq_file;

struct bpf_iter_meta {
	struct seq_file *seq;
	__u64 session_id;
	__u64 seq_num;
} __attribute__((preserve_access_index));

struct bpf_iter__dmabuf {
	struct bpf_iter_meta *meta;
	struct dma_buf *dmabuf;
} __attribute__((preserve_access_index));

SEC("iter/dmabuf")
int dmaio_dmabuf_dump(struct bpf_iter__dmabuf *ctx)
{
	struct dma_buf *d = ctx->dmabuf;
	struct dmaio_dmabuf_record r = { 0 };
	const char *s;

	if (!d)
		return 0;
	r.magic = DMAIO_DMABUF_RECORD_MAGIC;
	r.size = BPF_CORE_READ(d, size);
	r.ino = BPF_CORE_READ(d, file, f_inode, i_ino);
	s = BPF_CORE_READ(d, exp_name);
	if (s)
		bpf_probe_read_kernel_str(r.exporter, sizeof(r.exporter), s);
	/* the name may change under dmabuf->name_lock meanwhile: a torn name at worst */
	s = BPF_CORE_READ(d, name);
	if (s) {
		bpf_probe_read_kernel_str(r.name, sizeof(r.name), s);
		r.has_name = 1;
	}
	bpf_seq_write(ctx->meta->seq, &r, sizeof(r));
	return 0;
}

char LICENSE[] SEC("license") = "Dual MIT/GPL";
