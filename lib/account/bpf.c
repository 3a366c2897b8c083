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

struct acct_bpf {
	struct dmabuf_bpf *sk;
	struct bpf_link *link;
};

void acct_bpf_close(struct acct_bpf *b)
{
	if (!b)
		return;
	bpf_link__destroy(b->link);
	dmabuf_bpf__destroy(b->sk);
	free(b);
}

int acct_bpf_open(struct acct_bpf **out, struct dmaio_reason *why)
{
	libbpf_print_fn_t old;
	struct acct_bpf *b;
	int r = 0;

	*out = NULL;
	if (access("/sys/kernel/btf/vmlinux", R_OK))
		return dmaio_reason_set(why, -EOPNOTSUPP, "this kernel has no BTF "
					"(/sys/kernel/btf/vmlinux: CONFIG_DEBUG_INFO_BTF), which BPF "
					"iterators need");
	b = calloc(1, sizeof(*b));
	if (!b)
		return -ENOMEM;
	old = libbpf_set_print(quiet);
	b->sk = dmabuf_bpf__open();
	if (!b->sk) {
		r = dmaio_reason_set(why, neg_errno(), "opening the BPF object: %s", strerror(errno));
		goto out;
	}
	r = dmabuf_bpf__load(b->sk);
	if (r) {
		r = load_refusal(r < 0 ? r : -EINVAL, why);
		goto out;
	}
	b->link = bpf_program__attach_iter(b->sk->progs.dmaio_dmabuf_dump, NULL);
	if (!b->link)
		r = load_refusal(neg_errno(), why);
out:
	libbpf_set_print(old);
	if (r)
		acct_bpf_close(b);
	else
		*out = b;
	return r;
}

int acct_bpf_read(struct acct_bpf *b, struct acct_raw *raw, struct dmaio_reason *why)
{
	char *data = NULL;
	size_t n = 0, cap = 0;
	int ifd, r = 0;

	/* a new iterator instance per snapshot: the program and its link stay */
	ifd = bpf_iter_create(bpf_link__fd(b->link));
	if (ifd < 0)
		return dmaio_reason_set(why, ifd, "creating the iterator: %s", strerror(-ifd));
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
	close(ifd);
	free(data);
	return r;
}

#else

int acct_bpf_open(struct acct_bpf **out, struct dmaio_reason *why)
{
	*out = NULL;
	return dmaio_reason_set(why, -EOPNOTSUPP, "this libdmaio-account was built without libbpf "
				"(meson -Dbpf): no BPF source");
}

int acct_bpf_read(struct acct_bpf *b, struct acct_raw *raw, struct dmaio_reason *why)
{
	(void)b;
	(void)raw;
	(void)why;
	return -EOPNOTSUPP;
}

void acct_bpf_close(struct acct_bpf *b)
{
	(void)b;
}

#endif
