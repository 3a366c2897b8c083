/* SPDX-License-Identifier: MIT */
/* Probing a buffer, on request (dmaio_buf_get_info): what the kernel says of its fd (the inode
 * by fstat; the exporter and the name by /proc/self/fdinfo, the only place a dma-buf's exporter
 * is told to its holder) and whether the CPU can map it (the providers' trial mapping); at
 * import, whether its exporter can revoke the memory. */
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "probe.h"
#include "../providers/provider.h"
#include "../sys/sys.h"

/* "KEY:\tvalue" of an fdinfo text into dst (the rest of the line; "" when absent) */
static void fdinfo_field(const char *text, const char *key, char *dst, size_t dst_len)
{
	size_t klen = strlen(key), n;
	const char *p = text, *end;

	dst[0] = 0;
	for (; p && *p; p = strchr(p, '\n'), p = p ? p + 1 : NULL) {
		if (strncmp(p, key, klen) || p[klen] != ':')
			continue;
		p += klen + 1;
		p += strspn(p, " \t");
		end = strchr(p, '\n');
		n = end ? (size_t)(end - p) : strlen(p);
		if (n >= dst_len)
			n = dst_len - 1;
		memcpy(dst, p, n);
		dst[n] = 0;
		return;
	}
}

/* the exporter's and the buffer's names from /proc/self/fdinfo ("" when it cannot be read) */
static void fdinfo_names(const struct dmaio_buf *b, char *exporter, size_t exporter_len,
			 char *name, size_t name_len)
{
	char path[48], text[2048];
	ssize_t n = -1;
	int fd;

	exporter[0] = name[0] = 0;
	if (!dmaio_buf_is_dmabuf(b))
		return;
	snprintf(path, sizeof(path), "/proc/self/fdinfo/%d", b->fd);
	fd = sys_open(path, O_RDONLY, 0);
	if (fd >= 0) {
		n = read(fd, text, sizeof(text) - 1);
		close(fd);
	}
	if (n > 0) {
		text[n] = 0;
		fdinfo_field(text, "exp_name", exporter, exporter_len);
		fdinfo_field(text, "name", name, name_len);
	}
}

void dmaio_buf_probe_import(struct dmaio_buf *b)
{
	char exporter[DMAIO_EXPORTER_NAME_MAX], name[DMAIO_BUF_NAME_MAX];

	fdinfo_names(b, exporter, sizeof(exporter), name, sizeof(name));
	/* VFIO's dma-bufs are device memory (a PCI BAR) that VFIO revokes when the device's
	 * memory is disabled or reset, or on request ("vfio_pci_core" in 7.3) */
	b->revocable = !strncmp(exporter, "vfio", 4);
	(void)dmaio_buf_probe_map(b);
}

void dmaio_buf_probe_info(struct dmaio_buf *b, struct dmaio_buf_info *info)
{
	struct stat st;
	int err;

	info->kind = (uint32_t)b->kind;
	info->size = b->size;
	snprintf(info->provider, sizeof(info->provider), "%s", b->provider);
	if (!fstat(b->fd, &st))
		info->inode = (uint64_t)st.st_ino;
	fdinfo_names(b, info->exporter, sizeof(info->exporter), info->name, sizeof(info->name));
	err = dmaio_buf_probe_map(b);
	info->mmap = !err ? DMAIO_CAP_YES : err == -ENODEV ? DMAIO_CAP_NO : DMAIO_CAP_UNKNOWN;
	info->mmap_err = err;
}
