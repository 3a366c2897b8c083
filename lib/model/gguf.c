/* SPDX-License-Identifier: MIT */
/*
 * GGUF (little-endian, versions 2 and 3): "GGUF", u32 version, u64 tensor_count,
 * u64 metadata_kv_count, the key/values (string key, u32 value type, value), the tensor infos
 * (string name, u32 n_dims, u64 dims[n_dims], u32 ggml type, u64 offset), then the data section
 * at the next multiple of general.alignment (a u32, default 32); every tensor offset is relative
 * to it and a multiple of the alignment. Strings are a u64 length and UTF-8 bytes without NUL.
 * Only general.alignment is kept of the metadata; every value is checked and skipped.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "model.h" /* the public API, then dmaio-types.h */

enum {
	GGUF_UINT8 = 0, GGUF_INT8 = 1, GGUF_UINT16 = 2, GGUF_INT16 = 3, GGUF_UINT32 = 4,
	GGUF_INT32 = 5, GGUF_FLOAT32 = 6, GGUF_BOOL = 7, GGUF_STRING = 8, GGUF_ARRAY = 9,
	GGUF_UINT64 = 10, GGUF_INT64 = 11, GGUF_FLOAT64 = 12,
};

#define GGUF_MAX_DIMS 4
#define GGUF_DEFAULT_ALIGNMENT 32
#define GGUF_KEY_MAX 65535u
#define GGUF_STRING_MAX (1u << 30)
#define GGUF_ARRAY_DEPTH 4

/* a buffered reader over the header */
struct rd {
	int fd;
	uint32_t file;           /* its index, for the reasons */
	struct dmaio_reason *why;
	uint64_t size;
	uint64_t pos;       /* file position of the next byte */
	uint64_t buf_pos;   /* file position of buf[0] */
	size_t buf_len;
	unsigned char buf[65536];
};

/* A read of @what at @at failed with @e: say so. */
__attribute__((format(printf, 4, 5)))
static int rd_why(struct rd *r, int e, uint64_t at, const char *fmt, ...)
{
	char what[160];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(what, sizeof(what), fmt, ap);
	va_end(ap);
	if (e == -ENODATA)
		return dmaio_reason_set(r->why, e, "file %u: %s at offset %llu runs past the end of "
					"the file (%llu bytes)", r->file, what,
					(unsigned long long)at, (unsigned long long)r->size);
	if (e == -ENOMEM)
		return dmaio_reason_set(r->why, e, "file %u: out of memory reading %s", r->file,
					what);
	return dmaio_reason_set(r->why, e, "file %u: reading %s at offset %llu: %s", r->file,
				what, (unsigned long long)at, strerror(-e));
}

static int rd_fill(struct rd *r, size_t need)
{
	size_t have = r->pos >= r->buf_pos && r->pos - r->buf_pos <= r->buf_len ?
			      r->buf_len - (size_t)(r->pos - r->buf_pos) : 0;
	size_t want;
	int e;

	if (have >= need)
		return 0;
	if (r->pos > r->size || r->size - r->pos < need)
		return -ENODATA;
	want = sizeof(r->buf);
	if (r->size - r->pos < want)
		want = (size_t)(r->size - r->pos);
	e = model_pread(r->fd, r->buf, want, r->pos);
	if (e < 0)
		return e;
	r->buf_pos = r->pos;
	r->buf_len = want;
	return 0;
}

static int rd_bytes(struct rd *r, void *dst, size_t n)
{
	unsigned char *d = dst;

	while (n > 0) {
		size_t chunk = n < sizeof(r->buf) ? n : sizeof(r->buf);
		int e = rd_fill(r, chunk);

		if (e < 0)
			return e;
		memcpy(d, r->buf + (r->pos - r->buf_pos), chunk);
		r->pos += chunk;
		d += chunk;
		n -= chunk;
	}
	return 0;
}

static int rd_skip(struct rd *r, uint64_t n)
{
	if (r->pos > r->size || r->size - r->pos < n)
		return -ENODATA;
	r->pos += n;
	return 0;
}

static int rd_u32(struct rd *r, uint32_t *v)
{
	unsigned char b[4];
	int e;

	*v = 0;
	e = rd_bytes(r, b, 4);
	if (e == 0)
		*v = (uint32_t)b[0] | (uint32_t)b[1] << 8 | (uint32_t)b[2] << 16 |
		     (uint32_t)b[3] << 24;
	return e;
}

static int rd_u64(struct rd *r, uint64_t *v)
{
	unsigned char b[8];
	int e;

	*v = 0;
	e = rd_bytes(r, b, 8);
	if (e == 0) {
		for (int i = 7; i >= 0; i--)
			*v = *v << 8 | b[i];
	}
	return e;
}

/* A string (@what, for the reasons): into *out (malloc'd, NUL-terminated) if out, else skipped
 * after its UTF-8 check. */
static int rd_string(struct rd *r, uint64_t max, char **out, size_t *len_out, const char *what)
{
	uint64_t len, at = r->pos;
	char *s, sn[MODEL_SHOW_MAX];
	int e = rd_u64(r, &len);

	if (e < 0)
		return rd_why(r, e, at, "the length of %s", what);
	if (len > max)
		return dmaio_reason_set(r->why, -E2BIG, "file %u: %s at offset %llu: length %llu is "
					"above the limit of %llu bytes", r->file, what,
					(unsigned long long)at, (unsigned long long)len,
					(unsigned long long)max);
	if (r->size - r->pos < len)
		return dmaio_reason_set(r->why, -ENODATA, "file %u: %s at offset %llu: its %llu "
					"bytes run past the end of the file (%llu bytes)", r->file,
					what, (unsigned long long)at, (unsigned long long)len,
					(unsigned long long)r->size);
	s = malloc((size_t)len + 1);
	if (!s)
		return rd_why(r, -ENOMEM, at, "%s", what);
	e = rd_bytes(r, s, (size_t)len);
	if (e < 0) {
		free(s);
		return rd_why(r, e, at, "%s", what);
	}
	s[len] = 0;
	if (!model_utf8_valid((unsigned char *)s, (size_t)len)) {
		e = dmaio_reason_set(r->why, -EILSEQ, "file %u: %s \"%s\" at offset %llu is not "
				     "valid UTF-8", r->file, what, model_show(sn, s, (size_t)len),
				     (unsigned long long)at);
		free(s);
		return e;
	}
	if (len_out)
		*len_out = (size_t)len;
	if (out)
		*out = s;
	else
		free(s);
	return 0;
}

static int scalar_size(uint32_t type)
{
	switch (type) {
	case GGUF_UINT8: case GGUF_INT8: case GGUF_BOOL: return 1;
	case GGUF_UINT16: case GGUF_INT16: return 2;
	case GGUF_UINT32: case GGUF_INT32: case GGUF_FLOAT32: return 4;
	case GGUF_UINT64: case GGUF_INT64: case GGUF_FLOAT64: return 8;
	default: return 0;
	}
}

static const char *type_name(uint32_t type)
{
	static const char *const names[] = { "u8", "i8", "u16", "i16", "u32", "i32", "f32", "bool",
					     "string", "array", "u64", "i64", "f64" };

	return type < ARRAY_SIZE(names) ? names[type] : "unknown";
}

/* the value of a key (@key: as shown in the reasons) */
static int skip_value(struct rd *r, uint32_t type, int depth, const char *key)
{
	uint64_t at = r->pos;
	int sz = scalar_size(type), e;

	if (sz > 0) {
		if (type == GGUF_BOOL) {
			unsigned char b;

			e = rd_bytes(r, &b, 1);
			if (e < 0)
				return rd_why(r, e, at, "the bool value of key \"%s\"", key);
			if (b > 1)
				return dmaio_reason_set(r->why, -EBADMSG, "file %u: key \"%s\": bool "
							"value %u at offset %llu is neither 0 nor 1",
							r->file, key, b, (unsigned long long)at);
			return 0;
		}
		e = rd_skip(r, (uint64_t)sz);
		if (e < 0)
			return rd_why(r, e, at, "the %s value of key \"%s\"", type_name(type), key);
		return 0;
	}
	if (type == GGUF_STRING) {
		char what[MODEL_SHOW_MAX + 32];

		snprintf(what, sizeof(what), "key \"%s\": a string value", key);
		return rd_string(r, GGUF_STRING_MAX, NULL, NULL, what);
	}
	if (type == GGUF_ARRAY) {
		uint32_t et = 0;
		uint64_t count = 0, min;

		if (depth >= GGUF_ARRAY_DEPTH)
			return dmaio_reason_set(r->why, -E2BIG, "file %u: key \"%s\": arrays nested "
						"more than %d deep (at offset %llu)", r->file, key,
						GGUF_ARRAY_DEPTH, (unsigned long long)at);
		e = rd_u32(r, &et);
		if (e == 0)
			e = rd_u64(r, &count);
		if (e < 0)
			return rd_why(r, e, at, "the array head of key \"%s\"", key);
		sz = scalar_size(et);
		if (sz == 0 && et != GGUF_STRING && et != GGUF_ARRAY)
			return dmaio_reason_set(r->why, -EBADMSG, "file %u: key \"%s\": an array of "
						"unknown value type %u (at offset %llu)", r->file,
						key, et, (unsigned long long)at);
		/* every element takes at least its size (a string or array its 8/12-byte head) */
		min = sz ? (uint64_t)sz : et == GGUF_STRING ? 8 : 12;
		if (count > (r->size - r->pos) / min)
			return dmaio_reason_set(r->why, -ENODATA, "file %u: key \"%s\": an array of "
						"%llu %s elements at offset %llu runs past the end "
						"of the file (%llu bytes)", r->file, key,
						(unsigned long long)count, type_name(et),
						(unsigned long long)at, (unsigned long long)r->size);
		if (sz > 0 && et != GGUF_BOOL) {
			e = rd_skip(r, count * (uint64_t)sz);
			if (e < 0)
				return rd_why(r, e, at, "the array of key \"%s\"", key);
			return 0;
		}
		for (uint64_t i = 0; i < count; i++) {
			e = skip_value(r, et, depth + 1, key);
			if (e < 0)
				return e;
		}
		return 0;
	}
	return dmaio_reason_set(r->why, -EBADMSG, "file %u: key \"%s\": unknown value type %u "
				"(the value at offset %llu)", r->file, key, type,
				(unsigned long long)at);
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* one key/value (@index): its key into *key; general.alignment into *alignment */
static int read_kv(struct rd *r, uint64_t index, char **key, uint32_t *alignment)
{
	char what[64], sk[MODEL_SHOW_MAX];
	uint64_t at = r->pos, vat;
	uint32_t type;
	size_t klen;
	int e;

	snprintf(what, sizeof(what), "metadata key %llu", (unsigned long long)index);
	e = rd_string(r, GGUF_KEY_MAX, key, &klen, what);
	if (e < 0)
		return e;
	model_show(sk, *key, klen);
	if (klen == 0)
		return dmaio_reason_set(r->why, -EBADMSG, "file %u: metadata key %llu at offset %llu "
					"is empty", r->file, (unsigned long long)index,
					(unsigned long long)at);
	if (memchr(*key, 0, klen))
		return dmaio_reason_set(r->why, -EBADMSG, "file %u: metadata key \"%s\" at offset "
					"%llu contains a NUL byte", r->file, sk,
					(unsigned long long)at);
	vat = r->pos;
	e = rd_u32(r, &type);
	if (e < 0)
		return rd_why(r, e, vat, "the value type of key \"%s\"", sk);
	if (strcmp(*key, "general.alignment") != 0)
		return skip_value(r, type, 0, sk);
	if (type != GGUF_UINT32)
		return dmaio_reason_set(r->why, -EBADMSG, "file %u: key \"general.alignment\" has "
					"value type %u (%s), not u32 (%u)", r->file, type,
					type_name(type), GGUF_UINT32);
	vat = r->pos;
	e = rd_u32(r, alignment);
	if (e < 0)
		return rd_why(r, e, vat, "the value of key \"general.alignment\"");
	if (*alignment == 0 || (*alignment & (*alignment - 1)) != 0)
		return dmaio_reason_set(r->why, -EBADMSG, "file %u: key \"general.alignment\" is "
					"%u, not a power of two", r->file, *alignment);
	return 0;
}

static int read_kvs(struct rd *r, uint64_t nkv, uint32_t *alignment)
{
	char **keys, sk[MODEL_SHOW_MAX];
	int e = 0;

	/* the shortest key/value: an empty key head (8), the type (4), a u8 (1) */
	if (nkv > (r->size - r->pos) / 13)
		return dmaio_reason_set(r->why, -ENODATA, "file %u: %llu metadata key/values cannot "
					"fit in the %llu bytes after offset %llu (13 bytes or more "
					"each)", r->file, (unsigned long long)nkv,
					(unsigned long long)(r->size - r->pos),
					(unsigned long long)r->pos);
	keys = calloc(nkv ? nkv : 1, sizeof(char *));
	if (!keys)
		return rd_why(r, -ENOMEM, r->pos, "the metadata");
	for (uint64_t i = 0; i < nkv && e == 0; i++)
		e = read_kv(r, i, &keys[i], alignment);
	if (e == 0 && nkv > 1) {
		qsort(keys, nkv, sizeof(char *), cmp_str);
		for (uint64_t i = 1; i < nkv; i++)
			if (strcmp(keys[i], keys[i - 1]) == 0) {
				e = dmaio_reason_set(r->why, -EEXIST, "file %u: metadata key \"%s\" "
						     "appears twice", r->file,
						     model_show(sk, keys[i], strlen(keys[i])));
				break;
			}
	}
	for (uint64_t i = 0; i < nkv; i++)
		free(keys[i]);
	free(keys);
	return e;
}

/* one tensor info (@index of the file): name, dims, type, offset (relative for now) */
static int read_tensor_info(struct rd *r, uint64_t index, uint32_t alignment,
			    struct tensor_vec *v)
{
	char what[64], sn[MODEL_SHOW_MAX], *name = NULL;
	uint64_t at = r->pos, vat, off;
	struct model_tensor *t;
	const struct dtype_desc *d;
	uint32_t ndims, type;
	size_t nlen;
	int e;

	snprintf(what, sizeof(what), "the name of tensor %llu", (unsigned long long)index);
	e = rd_string(r, DMAIO_MODEL_NAME_MAX, &name, &nlen, what);
	if (e < 0)
		return e;
	e = tensor_vec_push(v, &t);
	if (e < 0) {
		free(name);
		return rd_why(r, e, at, "%s", what);
	}
	t->name = name;
	t->file = r->file;
	model_show(sn, name, nlen);
	if (nlen == 0)
		return dmaio_reason_set(r->why, -EBADMSG, "file %u: tensor %llu (its info at offset "
					"%llu) has an empty name", r->file,
					(unsigned long long)index, (unsigned long long)at);
	if (memchr(name, 0, nlen))
		return dmaio_reason_set(r->why, -EBADMSG, "file %u: tensor name \"%s\" at offset %llu "
					"contains a NUL byte", r->file, sn, (unsigned long long)at);
	vat = r->pos;
	e = rd_u32(r, &ndims);
	if (e < 0)
		return rd_why(r, e, vat, "the number of dimensions of tensor \"%s\"", sn);
	if (ndims > GGUF_MAX_DIMS)
		return dmaio_reason_set(r->why, -E2BIG, "file %u: tensor \"%s\": %u dimensions, GGUF "
					"has at most %d", r->file, sn, ndims, GGUF_MAX_DIMS);
	t->ndims = ndims;
	for (uint32_t k = 0; k < ndims; k++) {
		vat = r->pos;
		e = rd_u64(r, &t->shape[k]);
		if (e < 0)
			return rd_why(r, e, vat, "ne[%u] of tensor \"%s\"", k, sn);
	}
	vat = r->pos;
	e = rd_u32(r, &type);
	if (e == 0)
		e = rd_u64(r, &off);
	if (e < 0)
		return rd_why(r, e, vat, "the type and offset of tensor \"%s\"", sn);
	d = model_dtype(type);
	if (!d || !d->ggml)
		return dmaio_reason_set(r->why, -EPROTOTYPE, "file %u: tensor \"%s\": unknown ggml "
					"type %u", r->file, sn, type);
	t->dtype = type;
	e = model_tensor_bytes(d, t->shape, ndims, true, &t->nelems, &t->size, r->why, r->file,
			       name);
	if (e < 0)
		return e;
	if (off % alignment != 0)
		return dmaio_reason_set(r->why, -ENXIO, "file %u: tensor \"%s\": offset %llu is not a "
					"multiple of general.alignment %u", r->file, sn,
					(unsigned long long)off, alignment);
	t->offset = off; /* relative for now */
	return 0;
}

int model_parse_gguf(struct model_file *f, uint32_t file_index, struct tensor_vec *v,
		     struct dmaio_reason *why)
{
	struct rd *r;
	uint32_t version, alignment = GGUF_DEFAULT_ALIGNMENT;
	uint64_t ntensors = 0, nkv = 0, data_start, end_max = 0;
	size_t first = v->n;
	char sn[MODEL_SHOW_MAX];
	int e;

	r = malloc(sizeof(*r));
	if (!r)
		return dmaio_reason_set(why, -ENOMEM, "out of memory");
	r->fd = f->fd;
	r->file = file_index;
	r->why = why;
	r->size = f->size;
	r->pos = 4;
	r->buf_pos = 0;
	r->buf_len = 0;
	e = rd_u32(r, &version);
	if (e < 0) {
		e = rd_why(r, e, 4, "the GGUF version");
		goto out;
	}
	if (version != 2 && version != 3) {
		uint32_t swapped = __builtin_bswap32(version);

		if (swapped == 2 || swapped == 3)
			e = dmaio_reason_set(why, -EPROTONOSUPPORT, "file %u: GGUF version %u: a "
					     "big-endian file (version %u), only little-endian "
					     "ones are read", file_index, version, swapped);
		else
			e = dmaio_reason_set(why, -EPROTONOSUPPORT, "file %u: GGUF version %u is not "
					     "supported (2 and 3 are)", file_index, version);
		goto out;
	}
	e = rd_u64(r, &ntensors);
	if (e < 0) {
		e = rd_why(r, e, 8, "the tensor count");
		goto out;
	}
	e = rd_u64(r, &nkv);
	if (e < 0) {
		e = rd_why(r, e, 16, "the metadata key/value count");
		goto out;
	}
	if (ntensors > DMAIO_MODEL_MAX_TENSORS) {
		e = dmaio_reason_set(why, -E2BIG, "file %u: tensor count %llu is above "
				     "DMAIO_MODEL_MAX_TENSORS (%u)", file_index,
				     (unsigned long long)ntensors, DMAIO_MODEL_MAX_TENSORS);
		goto out;
	}
	if (nkv > DMAIO_MODEL_MAX_KV) {
		e = dmaio_reason_set(why, -E2BIG, "file %u: metadata key/value count %llu is above "
				     "DMAIO_MODEL_MAX_KV (%u)", file_index, (unsigned long long)nkv,
				     DMAIO_MODEL_MAX_KV);
		goto out;
	}
	e = read_kvs(r, nkv, &alignment);
	if (e < 0)
		goto out;
	/* the tensor infos: name, n_dims, dims, type, offset (the shortest is 8 + 4 + 4 + 8) */
	if (ntensors > (r->size - r->pos) / 24) {
		e = dmaio_reason_set(why, -ENODATA, "file %u: %llu tensor infos cannot fit in the "
				     "%llu bytes after offset %llu (24 bytes or more each)",
				     file_index, (unsigned long long)ntensors,
				     (unsigned long long)(r->size - r->pos),
				     (unsigned long long)r->pos);
		goto out;
	}
	for (uint64_t i = 0; i < ntensors; i++) {
		e = read_tensor_info(r, i, alignment, v);
		if (e < 0)
			goto out;
	}
	data_start = round_up_u64(r->pos, alignment);
	for (size_t i = first; i < v->n; i++) {
		struct model_tensor *t = &v->t[i];

		if (t->offset > UINT64_MAX - data_start ||
		    t->size > UINT64_MAX - data_start - t->offset) {
			e = dmaio_reason_set(why, -EOVERFLOW, "file %u: tensor \"%s\": offset %llu + "
					     "%llu bytes after the data section at %llu overflow 64 "
					     "bits", file_index,
					     model_show(sn, t->name, strlen(t->name)),
					     (unsigned long long)t->offset,
					     (unsigned long long)t->size,
					     (unsigned long long)data_start);
			goto out;
		}
		if (data_start + t->offset + t->size > f->size) {
			e = dmaio_reason_set(why, -ERANGE, "file %u: tensor \"%s\": offset %llu: bytes "
					     "[%llu, %llu) run past the end of the file (%llu "
					     "bytes)", file_index,
					     model_show(sn, t->name, strlen(t->name)),
					     (unsigned long long)t->offset,
					     (unsigned long long)(data_start + t->offset),
					     (unsigned long long)(data_start + t->offset + t->size),
					     (unsigned long long)f->size);
			goto out;
		}
		t->offset += data_start;
		if (t->offset + t->size > end_max)
			end_max = t->offset + t->size;
	}
	f->format = DMAIO_MODEL_GGUF;
	f->version = version;
	f->alignment = alignment;
	f->data_offset = data_start;
	f->data_size = end_max > data_start ? end_max - data_start : 0;
	e = 0;
out:
	free(r);
	return e;
}
