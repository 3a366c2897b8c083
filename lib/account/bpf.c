// SPDX-License-Identifier: MIT
/*
 * The BPF source of a snapshot: the kernel's own list of dma-bufs through the BPF dma-buf
 * iterator (kernel/bpf/dmabuf_iter.c, Linux 6.16+). Not built yet: this library reports that
 * it has no BPF source, and AUTO snapshots read /proc.
 */
#include "account.h"

int acct_bpf_scan(struct acct_raw *raw, struct dmaio_reason *why)
{
	(void)raw;
	return dmaio_reason_set(why, -EOPNOTSUPP,
				"this libdmaio-account has no BPF source (not built)");
}
