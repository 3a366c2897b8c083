// SPDX-License-Identifier: MIT
/*
 * The BPF source of a snapshot: every dma-buf of the kernel's own list, through the BPF dma-buf
 * iterator (kernel/bpf/dmabuf_iter.c, Linux 6.16+) and our program dmabuf.bpf.c, loaded with
 * libbpf from its generated skeleton. Buffers that no process holds (a driver's, a device's
 * queue, a leak) are seen here and nowhere else. Holders still come from /proc (proc.c).
 */
#include "account.h"

#ifdef DMAIO_HAVE_BPF
#include <fcntl.h>
#include <stdlib.h>
#include <unistd.h>
#include <linux/types.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "dmabuf-record.h"
#include "dmabuf.skel.h"

/* libbpf prints to stderr by default; a library says why through its reason instead, unless
 * DMAIO_DEBUG asks for libbpf's own messages (the verifier's log among them) */
static int quiet(enum libbpf_print_level level, const char *fmt, va_list ap)
{
	const char *d = secure_getenv("DMAIO_DEBUG");

	if (d && *d && strcmp(d, "0") && level != LIBBPF_DEBUG)
		return vfprintf(stderr, fmt, ap);
	return 0;
}

static int load_refusal(int e, struct dmaio_reason *why)
{
	if (e == -EPERM || e == -EACCES)
		return dmaio_reason_set(why, -EPERM, "loading the BPF dma-buf iterator needs CAP_BPF "
					"and CAP_PERFMON (or CAP_SYS_ADMIN)");
	if (e == -ENOENT || e == -ESRCH || e == -EINVAL || e == -EOPNOTSUPP || e == -524 /* ENOTSUPP */)
		return dmaio_reason_set(why, -EOPNOTSUPP, "this kernel has no BPF dma-buf iterator "
					"(Linux 6.16+, CONFIG_BPF_SYSCALL): %s", strerror(-e));
	return dmaio_reason_set(why, e, "loading the BPF dma-buf iterator: %s", strerror(-e));
}

int acct_bpf_scan(struct acct_raw *raw, struct dmaio_reason *why)
{
	libbpf_print_fn_t old = libbpf_set_print(quiet);
	struct dmabuf_bpf *sk = NULL;
	struct bpf_link *link = NULL;
	char *data = NULL;
	size_t n = 0, cap = 0;
	int ifd = -1, r = 0;

	if (access("/sys/kernel/btf/vmlinux", R_OK)) {
		r = dmaio_reason_set(why, -EOPNOTSUPP, "this kernel has no BTF "
				     "(/sys/kernel/btf/vmlinux: CONFIG_DEBUG_INFO_BTF), which BPF "
				     "iterators need");
		goto out;
	}
	sk = dmabuf_bpf__open();
	if (!sk) {
		r = dmaio_reason_set(why, neg_errno(), "opening the BPF object: %s", strerror(errno));
		goto out;
	}
	r = dmabuf_bpf__load(sk);
	if (r) {
		r = load_refusal(r < 0 ? r : -EINVAL, why);
		goto out;
	}
	link = bpf_program__attach_iter(sk->progs.dmaio_dmabuf_dump, NULL);
	if (!link) {
		r = load_refusal(neg_errno(), why);
		goto out;
	}
	ifd = bpf_iter_create(bpf_link__fd(link));
	if (ifd < 0) {
		r = dmaio_reason_set(why, ifd, "creating the iterator: %s", strerror(-ifd));
		goto out;
	}
	for (;;) {
		ssize_t got;

		if (cap - n < 65536) {
			char *nd = realloc(data, cap ? cap * 2 : 262144);

			if (!nd) {
				r = -ENOMEM;
				goto out;
			}
			data = nd;
			cap = cap ? cap * 2 : 262144;
		}
		got = read(ifd, data + n, cap - n);
		if (got < 0) {
			if (errno == EINTR)
				continue;
			r = dmaio_reason_set(why, neg_errno(), "reading the iterator: %s",
					     strerror(errno));
			goto out;
		}
		if (!got)
			break;
		n += (size_t)got;
	}
	if (n % sizeof(struct dmaio_dmabuf_record)) {
		r = dmaio_reason_set(why, -EBADMSG, "the iterator gave %zu bytes, not whole records",
				     n);
		goto out;
	}
	for (size_t o = 0; o < n; o += sizeof(struct dmaio_dmabuf_record)) {
		struct dmaio_dmabuf_record rec;

		memcpy(&rec, data + o, sizeof(rec));
		if (rec.magic != DMAIO_DMABUF_RECORD_MAGIC) {
			r = dmaio_reason_set(why, -EBADMSG, "a record of the iterator is damaged");
			goto out;
		}
		rec.exporter[sizeof(rec.exporter) - 1] = 0;
		rec.name[sizeof(rec.name) - 1] = 0;
		r = acct_add_buf(raw, rec.ino, rec.size, rec.exporter, rec.has_name ? rec.name : NULL,
				 0);
		if (r)
			goto out;
	}
out:
	if (ifd >= 0)
		close(ifd);
	bpf_link__destroy(link);
	dmabuf_bpf__destroy(sk);
	free(data);
	libbpf_set_print(old);
	return r;
}

#else

int acct_bpf_scan(struct acct_raw *raw, struct dmaio_reason *why)
{
	(void)raw;
	return dmaio_reason_set(why, -EOPNOTSUPP, "this libdmaio-account was built without libbpf "
				"(meson -Dbpf): no BPF source");
}

#endif
