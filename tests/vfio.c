// SPDX-License-Identifier: MIT
/* Device memory for the tests: see vfio.h. */
#include "vfio.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/pci_regs.h>
#include <linux/vfio.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include "../lib/uapi/vfio-dmabuf.h"
#include "../lib/uapi/vfio-dmabuf-mmap.h"

static int fail(char *why, size_t n, int err, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

static int fail(char *why, size_t n, int err, const char *fmt, ...)
{
	va_list ap;
	int len = 0;

	if (why && n) {
		va_start(ap, fmt);
		len = vsnprintf(why, n, fmt, ap);
		va_end(ap);
		if (len >= 0 && (size_t)len < n)
			snprintf(why + len, n - (size_t)len, ": %s", strerror(err));
	}
	return -err;
}

const char *test_vfio_env(void)
{
	const char *s = getenv("DMAIO_TEST_VFIO");

	return s && *s ? s : NULL;
}

static int region(struct test_vfio *v, unsigned index, uint64_t *size, uint64_t *offset)
{
	struct vfio_region_info ri = { .argsz = sizeof(ri), .index = index };

	if (ioctl(v->device, VFIO_DEVICE_GET_REGION_INFO, &ri))
		return -errno;
	*size = ri.size;
	*offset = ri.offset;
	return 0;
}

int test_vfio_open(const char *bdf, int bar, struct test_vfio *v, char *why, size_t why_len)
{
	struct vfio_group_status st = { .argsz = sizeof(st) };
	char link[256], path[PATH_MAX];
	const char *grp;
	ssize_t n;
	int err;

	memset(v, 0, sizeof(*v));
	v->container = v->group = v->device = -1;
	if (!bdf || strlen(bdf) >= sizeof(v->bdf) || bar < 0 || bar > VFIO_PCI_BAR5_REGION_INDEX)
		return fail(why, why_len, EINVAL, "device '%s' BAR %d", bdf ? bdf : "(null)", bar);
	snprintf(v->bdf, sizeof(v->bdf), "%s", bdf);
	v->bar = bar;
	snprintf(path, sizeof(path), "/sys/bus/pci/devices/%s/iommu_group", bdf);
	n = readlink(path, link, sizeof(link) - 1);
	if (n < 0)
		return fail(why, why_len, errno, "%s (is %s bound to vfio-pci?)", path, bdf);
	link[n] = 0;
	grp = strrchr(link, '/') ? strrchr(link, '/') + 1 : link;
	snprintf(path, sizeof(path), "/dev/vfio/noiommu-%s", grp);
	v->noiommu = access(path, F_OK) == 0;
	if (!v->noiommu)
		snprintf(path, sizeof(path), "/dev/vfio/%s", grp);
	v->container = open("/dev/vfio/vfio", O_RDWR | O_CLOEXEC);
	if (v->container < 0) {
		err = fail(why, why_len, errno, "open /dev/vfio/vfio");
		goto out;
	}
	v->group = open(path, O_RDWR | O_CLOEXEC);
	if (v->group < 0) {
		err = fail(why, why_len, errno, "open %s", path);
		goto out;
	}
	if (ioctl(v->group, VFIO_GROUP_GET_STATUS, &st)) {
		err = fail(why, why_len, errno, "VFIO_GROUP_GET_STATUS %s", path);
		goto out;
	}
	if (!(st.flags & VFIO_GROUP_FLAGS_VIABLE)) {
		err = fail(why, why_len, EBUSY, "group %s not viable (another device of it is bound "
			   "to a host driver)", path);
		goto out;
	}
	if (ioctl(v->group, VFIO_GROUP_SET_CONTAINER, &v->container)) {
		err = fail(why, why_len, errno, "VFIO_GROUP_SET_CONTAINER %s", path);
		goto out;
	}
	if (ioctl(v->container, VFIO_SET_IOMMU, v->noiommu ? VFIO_NOIOMMU_IOMMU : VFIO_TYPE1v2_IOMMU)) {
		err = fail(why, why_len, errno, "VFIO_SET_IOMMU %s", v->noiommu ? "noiommu" : "type1v2");
		goto out;
	}
	v->device = ioctl(v->group, VFIO_GROUP_GET_DEVICE_FD, v->bdf);
	if (v->device < 0) {
		err = fail(why, why_len, errno, "VFIO_GROUP_GET_DEVICE_FD %s", v->bdf);
		goto out;
	}
	err = region(v, (unsigned)bar, &v->bar_size, &v->bar_offset);
	if (!err && !v->bar_size)
		err = -ENXIO;
	if (err) {
		err = fail(why, why_len, -err, "%s BAR %d region", v->bdf, bar);
		goto out;
	}
	err = region(v, VFIO_PCI_CONFIG_REGION_INDEX, &(uint64_t){ 0 }, &v->cfg_offset);
	if (err) {
		err = fail(why, why_len, -err, "%s config region", v->bdf);
		goto out;
	}
	return 0;
out:
	test_vfio_close(v);
	return err;
}

void test_vfio_close(struct test_vfio *v)
{
	if (v->device >= 0)
		close(v->device);
	if (v->group >= 0)
		close(v->group);
	if (v->container >= 0)
		close(v->container);
	v->container = v->group = v->device = -1;
}

int test_vfio_dmabuf(struct test_vfio *v, const uint64_t (*ranges)[2], unsigned nr)
{
	struct vfio_device_feature *f;
	struct dmaio_vfio_device_feature_dma_buf *db;
	size_t sz = sizeof(*f) + sizeof(*db) + nr * sizeof(db->dma_ranges[0]);
	int fd;

	f = calloc(1, sz);
	if (!f)
		return -ENOMEM;
	f->argsz = (uint32_t)sz;
	f->flags = VFIO_DEVICE_FEATURE_GET | DMAIO_VFIO_DEVICE_FEATURE_DMA_BUF;
	db = (struct dmaio_vfio_device_feature_dma_buf *)f->data;
	db->region_index = (uint32_t)v->bar;
	db->open_flags = O_RDWR | O_CLOEXEC;
	db->nr_ranges = nr;
	for (unsigned i = 0; i < nr; i++) {
		db->dma_ranges[i].offset = ranges[i][0];
		db->dma_ranges[i].length = ranges[i][1];
	}
	fd = ioctl(v->device, VFIO_DEVICE_FEATURE, f);
	if (fd < 0)
		fd = -errno;
	free(f);
	return fd;
}

static int feature_set(struct test_vfio *v, uint32_t feature, const void *arg, size_t len)
{
	struct vfio_device_feature *f = calloc(1, sizeof(*f) + len);
	int r;

	if (!f)
		return -ENOMEM;
	f->argsz = (uint32_t)(sizeof(*f) + len);
	f->flags = VFIO_DEVICE_FEATURE_SET | feature;
	memcpy(f->data, arg, len);
	r = ioctl(v->device, VFIO_DEVICE_FEATURE, f) < 0 ? -errno : 0;
	free(f);
	return r;
}

bool test_vfio_mmap_on(void)
{
	char line[4096] = "";
	FILE *f = fopen("/proc/cmdline", "re");

	if (f) {
		if (!fgets(line, sizeof(line), f))
			line[0] = 0;
		fclose(f);
	}
	return strstr(line, "vfio_dmabuf_mmap=on") != NULL;
}

int test_vfio_revoke(struct test_vfio *v, int dmabuf_fd)
{
	struct dmaio_vfio_device_feature_dma_buf_revoke r = { .dmabuf_fd = dmabuf_fd };

	return feature_set(v, DMAIO_VFIO_DEVICE_FEATURE_DMA_BUF_REVOKE, &r, sizeof(r));
}

int test_vfio_memattr(struct test_vfio *v, int dmabuf_fd, bool wc)
{
	struct dmaio_vfio_device_feature_dma_buf_memattr m = {
		.dmabuf_fd = dmabuf_fd,
		.memattr = wc ? DMAIO_VFIO_DMA_BUF_MEMATTR_WC : DMAIO_VFIO_DMA_BUF_MEMATTR_NC,
	};

	return feature_set(v, DMAIO_VFIO_DEVICE_FEATURE_DMA_BUF_MEMATTR, &m, sizeof(m));
}

static int rw_all(int fd, void *p, size_t len, uint64_t off, bool write)
{
	while (len) {
		ssize_t n = write ? pwrite(fd, p, len, (off_t)off) : pread(fd, p, len, (off_t)off);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return n < 0 ? -errno : -EIO;
		p = (char *)p + n;
		len -= (size_t)n;
		off += (uint64_t)n;
	}
	return 0;
}

int test_vfio_bar_read(struct test_vfio *v, void *dst, size_t len, uint64_t off)
{
	if (off > v->bar_size || len > v->bar_size - off)
		return -EINVAL;
	return rw_all(v->device, dst, len, v->bar_offset + off, false);
}

int test_vfio_bar_write(struct test_vfio *v, const void *src, size_t len, uint64_t off)
{
	if (off > v->bar_size || len > v->bar_size - off)
		return -EINVAL;
	return rw_all(v->device, (void *)src, len, v->bar_offset + off, true);
}

int test_vfio_memory(struct test_vfio *v, bool on)
{
	uint16_t cmd;
	int err = rw_all(v->device, &cmd, sizeof(cmd), v->cfg_offset + PCI_COMMAND, false);

	if (err)
		return err;
	cmd = on ? (uint16_t)(cmd | PCI_COMMAND_MEMORY) : (uint16_t)(cmd & ~PCI_COMMAND_MEMORY);
	return rw_all(v->device, &cmd, sizeof(cmd), v->cfg_offset + PCI_COMMAND, true);
}
