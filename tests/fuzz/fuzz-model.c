/* SPDX-License-Identifier: MIT */
/*
 * fuzz-safetensors, fuzz-gguf: a model file from the input (a memfd holding it), opened through
 * the public API (dmaio_model_open); when it opens, every accessor is walked and what it says is
 * checked against the file: one shard of the input's size, tensors inside the data section, not
 * overlapping, found by their names, shapes and element counts consistent; a model whose data
 * is small is then loaded into memfd buffers and every tensor's bytes compared with the file's.
 * The two harnesses are this program; they differ in their seed corpora (tests/fuzz/corpus/).
 */
#include <errno.h>
#include <stdbool.h>
#include <string.h>

#include <dmaio-model.h>

#include "fuzz.h"

/* a load is tried for models whose data section is at most this */
#define LOAD_MAX (256u << 10)

static bool utf8_valid(const unsigned char *s, size_t n)
{
	for (size_t i = 0; i < n;) {
		unsigned c = s[i], len, min;
		uint32_t cp;

		if (c < 0x80) {
			i++;
			continue;
		}
		if ((c & 0xe0) == 0xc0)
			len = 2, cp = c & 0x1f, min = 0x80;
		else if ((c & 0xf0) == 0xe0)
			len = 3, cp = c & 0x0f, min = 0x800;
		else if ((c & 0xf8) == 0xf0)
			len = 4, cp = c & 0x07, min = 0x10000;
		else
			return false;
		if (n - i < len)
			return false;
		for (unsigned k = 1; k < len; k++) {
			if ((s[i + k] & 0xc0) != 0x80)
				return false;
			cp = cp << 6 | (s[i + k] & 0x3f);
		}
		if (cp < min || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff))
			return false;
		i += len;
	}
	return true;
}

static int cmp_u64(const void *a, const void *b)
{
	const uint64_t *x = a, *y = b;

	return x[0] < y[0] ? -1 : x[0] > y[0] ? 1 : x[1] < y[1] ? -1 : x[1] > y[1];
}

/* Load the model into memfd buffers (mode from the input) and compare every tensor's bytes. */
static void check_load(struct dmaio_model *m, int n, const uint8_t *data, size_t size)
{
	static const char *const memfd_only[] = { "memfd", NULL };
	struct dmaio_alloc_opts ao = { .struct_size = sizeof(ao), .providers = memfd_only };
	struct dmaio_load_opts lo = { .struct_size = sizeof(lo), .alloc = &ao };
	struct dmaio_reason why = { .struct_size = sizeof(why) };
	struct dmaio_load *l = NULL;
	int r, nb;

	lo.mode = (uint32_t)(size % 3); /* WHOLE, PER_TENSOR, PACKED */
	if (lo.mode == DMAIO_LOAD_PER_TENSOR && n > 256) /* a descriptor per tensor: within limits */
		lo.mode = DMAIO_LOAD_PACKED;
	if (lo.mode == DMAIO_LOAD_PACKED)
		lo.align = 1u << (size % 7);
	r = dmaio_model_load(m, &lo, &l, &why);
	FUZZ_CHECK(r == 0, "load (mode %u) of a model that opened: %d (%s)", lo.mode, r, why.text);
	nb = dmaio_load_buf_count(l);
	FUZZ_CHECK(nb >= 0, "dmaio_load_buf_count %d", nb);
	for (int i = 0; i < n; i++) {
		struct dmaio_tensor_info ti = { .struct_size = sizeof(ti) };
		struct dmaio_tensor_place pl = { .struct_size = sizeof(pl) };
		struct dmaio_buf *b = NULL;
		void *map = NULL;

		FUZZ_CHECK(dmaio_model_get_tensor(m, (uint32_t)i, &ti) == 0, "get_tensor %d", i);
		r = dmaio_load_get_tensor(l, (uint32_t)i, &pl);
		FUZZ_CHECK(r == 0, "dmaio_load_get_tensor(%d): %d", i, r);
		FUZZ_CHECK(pl.nbytes == ti.nbytes, "tensor %d: placed %llu bytes of %llu", i,
			   (unsigned long long)pl.nbytes, (unsigned long long)ti.nbytes);
		if (!ti.nbytes)
			continue;
		FUZZ_CHECK(pl.buf && pl.buf_index < (uint32_t)nb, "tensor %d: no buffer", i);
		FUZZ_CHECK(dmaio_load_get_buf(l, pl.buf_index, &b) == 0 && b == pl.buf,
			   "tensor %d: buffer %u is not its place's", i, pl.buf_index);
		FUZZ_CHECK(pl.offset <= (uint64_t)dmaio_buf_size(b) &&
				   pl.nbytes <= (uint64_t)dmaio_buf_size(b) - pl.offset,
			   "tensor %d: [%llu, +%llu) past its buffer (%lld)", i,
			   (unsigned long long)pl.offset, (unsigned long long)pl.nbytes,
			   (long long)dmaio_buf_size(b));
		r = dmaio_buf_map(b, &map);
		FUZZ_CHECK(r == 0, "dmaio_buf_map: %d", r);
		FUZZ_CHECK(dmaio_buf_sync_begin(b, DMAIO_SYNC_READ) == 0, "sync_begin");
		FUZZ_CHECK(memcmp((const char *)map + pl.offset, data + ti.offset, ti.nbytes) == 0,
			   "tensor %d (\"%s\"): the loaded bytes differ from the file's", i, ti.name);
		FUZZ_CHECK(dmaio_buf_sync_end(b, DMAIO_SYNC_READ) == 0, "sync_end");
	}
	dmaio_load_free(l);
}

static void check_model(struct dmaio_model *m, const uint8_t *data, size_t size)
{
	struct dmaio_model_file_info fi = { .struct_size = sizeof(fi) };
	struct {
		struct dmaio_tensor_info ti;
		unsigned char tail[16];
	} big;
	uint64_t *spans; /* offset, nbytes of each tensor */
	uint64_t data_end;
	int n, r;

	n = dmaio_model_tensor_count(m);
	FUZZ_CHECK(n >= 0 && (uint32_t)n <= DMAIO_MODEL_MAX_TENSORS, "tensor count %d", n);
	FUZZ_CHECK(dmaio_model_file_count(m) == 1, "file count %d", dmaio_model_file_count(m));
	r = dmaio_model_get_file(m, 0, &fi);
	FUZZ_CHECK(r == 0, "get_file(0): %d", r);
	FUZZ_CHECK(dmaio_model_get_file(m, 1, &fi) == -ERANGE, "get_file(1) is not -ERANGE");
	FUZZ_CHECK(fi.format == DMAIO_MODEL_SAFETENSORS || fi.format == DMAIO_MODEL_GGUF,
		   "format %u", fi.format);
	FUZZ_CHECK(fi.file_size == size, "file_size %llu of %zu bytes",
		   (unsigned long long)fi.file_size, size);
	/* the data section is inside the file; but a GGUF file without tensors may end before
	 * the aligned end of its header, which is its data_offset (dmaio_model_get_file(3)) */
	if (n > 0)
		FUZZ_CHECK(fi.data_offset <= size && fi.data_size <= size - fi.data_offset,
			   "data section [%llu, +%llu) past the file (%zu)",
			   (unsigned long long)fi.data_offset, (unsigned long long)fi.data_size,
			   size);
	else
		FUZZ_CHECK(fi.data_size == 0 && (fi.data_offset <= size ||
						 fi.format == DMAIO_MODEL_GGUF),
			   "no tensor, data section [%llu, +%llu), file %zu",
			   (unsigned long long)fi.data_offset, (unsigned long long)fi.data_size,
			   size);
	FUZZ_CHECK(fi.ntensors == (uint32_t)n, "file's ntensors %u, model's %d", fi.ntensors, n);
	FUZZ_CHECK(fi.alignment >= 1 && !(fi.alignment & (fi.alignment - 1)),
		   "alignment %u", fi.alignment);
	if (fi.format == DMAIO_MODEL_GGUF)
		FUZZ_CHECK(fi.data_offset % fi.alignment == 0, "GGUF data offset %llu, alignment %u",
			   (unsigned long long)fi.data_offset, fi.alignment);
	else
		FUZZ_CHECK(fi.version == 0 && fi.alignment == 1 && fi.data_offset >= 8,
			   "safetensors version %u alignment %u data offset %llu", fi.version,
			   fi.alignment, (unsigned long long)fi.data_offset);
	FUZZ_CHECK(!__builtin_add_overflow(fi.data_offset, fi.data_size, &data_end),
		   "data section [%llu, +%llu) past 64 bits", (unsigned long long)fi.data_offset,
		   (unsigned long long)fi.data_size);

	spans = calloc((size_t)n + 1, 2 * sizeof(uint64_t));
	if (!spans)
		FUZZ_DIE("out of memory");
	for (int i = 0; i < n; i++) {
		struct dmaio_tensor_info ti = { .struct_size = sizeof(ti) };
		uint64_t nelems = 1;
		bool wrap = false;
		size_t len;

		r = dmaio_model_get_tensor(m, (uint32_t)i, &ti);
		FUZZ_CHECK(r == 0, "get_tensor(%d): %d", i, r);
		FUZZ_CHECK(ti.name != NULL, "tensor %d: no name", i);
		len = strlen(ti.name);
		FUZZ_CHECK(len <= DMAIO_MODEL_NAME_MAX, "tensor %d: a name of %zu bytes", i, len);
		FUZZ_CHECK(utf8_valid((const unsigned char *)ti.name, len),
			   "tensor %d: a name that is not UTF-8", i);
		FUZZ_CHECK(ti.dtype_name && dmaio_dtype_name(ti.dtype) == ti.dtype_name,
			   "tensor %d: dtype %u named %s", i, ti.dtype,
			   ti.dtype_name ? ti.dtype_name : "(null)");
		FUZZ_CHECK(ti.ndims <= DMAIO_MODEL_MAX_DIMS, "tensor %d: %u dims", i, ti.ndims);
		for (uint32_t d = 0; d < DMAIO_MODEL_MAX_DIMS; d++) {
			if (d >= ti.ndims) {
				FUZZ_CHECK(ti.shape[d] == 0, "tensor %d: shape[%u] past ndims", i, d);
				continue;
			}
			if (__builtin_mul_overflow(nelems, ti.shape[d], &nelems))
				wrap = true;
		}
		if (wrap) /* a zero dimension later makes it 0 */
			nelems = 0;
		for (uint32_t d = 0; d < ti.ndims; d++)
			if (ti.shape[d] == 0)
				nelems = 0, wrap = false;
		FUZZ_CHECK(!wrap && nelems == ti.nelems, "tensor %d: nelems %llu, shape gives %llu", i,
			   (unsigned long long)ti.nelems, (unsigned long long)nelems);
		FUZZ_CHECK(ti.nelems || !ti.nbytes, "tensor %d: no element but %llu bytes", i,
			   (unsigned long long)ti.nbytes);
		FUZZ_CHECK(ti.file == 0 && ti.format == fi.format && !ti.pad0,
			   "tensor %d: file %u format %u", i, ti.file, ti.format);
		FUZZ_CHECK(ti.offset >= fi.data_offset && ti.offset <= data_end &&
				   ti.nbytes <= data_end - ti.offset,
			   "tensor %d: [%llu, +%llu) outside the data section [%llu, %llu)", i,
			   (unsigned long long)ti.offset, (unsigned long long)ti.nbytes,
			   (unsigned long long)fi.data_offset, (unsigned long long)data_end);
		if (fi.format == DMAIO_MODEL_GGUF)
			FUZZ_CHECK((ti.offset - fi.data_offset) % fi.alignment == 0,
				   "tensor %d: offset %llu not aligned to %u", i,
				   (unsigned long long)ti.offset, fi.alignment);
		r = dmaio_model_find_tensor(m, ti.name);
		FUZZ_CHECK(r == i, "tensor %d (\"%s\") found as %d", i, ti.name, r);
		spans[2 * i] = ti.offset;
		spans[2 * i + 1] = ti.nbytes;
	}
	qsort(spans, (size_t)n, 2 * sizeof(uint64_t), cmp_u64);
	for (int i = 0, last = -1; i < n; i++) { /* tensors with bytes never share one */
		if (!spans[2 * i + 1])
			continue;
		if (last >= 0)
			FUZZ_CHECK(spans[2 * last] + spans[2 * last + 1] <= spans[2 * i],
				   "tensors at %llu (+%llu) and %llu overlap",
				   (unsigned long long)spans[2 * last],
				   (unsigned long long)spans[2 * last + 1],
				   (unsigned long long)spans[2 * i]);
		last = i;
	}
	free(spans);

	/* the accessors' edges: past the end, a struct larger than the library knows */
	memset(&big, 0, sizeof(big));
	FUZZ_CHECK(dmaio_model_get_tensor(m, 0, &big.ti) == -EINVAL, "struct_size 0");
	big.ti.struct_size = sizeof(big);
	memset(big.tail, 0xa5, sizeof(big.tail));
	FUZZ_CHECK(dmaio_model_get_tensor(m, (uint32_t)n, &big.ti) == -ERANGE, "get_tensor(n)");
	if (n > 0) {
		FUZZ_CHECK(dmaio_model_get_tensor(m, 0, &big.ti) == 0, "a larger struct");
		for (size_t k = 0; k < sizeof(big.tail); k++)
			FUZZ_CHECK(big.tail[k] == 0, "byte %zu past the struct not zeroed", k);
	}
	FUZZ_CHECK(dmaio_model_find_tensor(m, "\xff no such tensor") == -ENOENT, "find a bad name");

	if (n > 0 && fi.data_size <= LOAD_MAX)
		check_load(m, n, data, size);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct dmaio_reason why = { .struct_size = sizeof(why) };
	struct dmaio_model *m = NULL;
	int fd, r;

	fd = fuzz_memfd("fuzz-model", data, size);
	r = dmaio_model_open(NULL, &fd, 1, 0, &m, &why);
	if (getenv("DMAIO_FUZZ_VERBOSE")) /* what an input does, for a person replaying it */
		fprintf(stderr, "dmaio_model_open: %d %s, %d tensors\n", r, why.text,
			r ? -1 : dmaio_model_tensor_count(m));
	if (r < 0) {
		FUZZ_CHECK(why.error == r && why.text[0], "refused with %d without a reason", r);
		FUZZ_CHECK(strlen(why.text) < DMAIO_REASON_MAX && !strchr(why.text, '\n'),
			   "a reason of more than one line");
	} else {
		FUZZ_CHECK(r == 0 && m, "dmaio_model_open: %d, model %p", r, (void *)m);
		FUZZ_CHECK(why.error == 0, "opened with a reason error %d", why.error);
		check_model(m, data, size);
		dmaio_model_close(m);
	}
	close(fd);
	return 0;
}
