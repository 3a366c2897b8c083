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
#include <stdlib.h>
#include <string.h>

#include "../dmaio-types.h"
#include "model.h"

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
	uint64_t size;
	uint64_t pos;       /* file position of the next byte */
	uint64_t buf_pos;   /* file position of buf[0] */
	size_t buf_len;
	unsigned char buf[65536];
};

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

/* a string: into *out (malloc'd, NUL-terminated) if out, else skipped after UTF-8 check */
static int rd_string(struct rd *r, uint64_t max, char **out, size_t *len_out)
{
	uint64_t len;
	char *s;
	int e = rd_u64(r, &len);

	if (e < 0)
		return e;
	if (len > max)
		return -E2BIG;
	if (r->size - r->pos < len)
		return -ENODATA;
	s = malloc((size_t)len + 1);
	if (!s)
		return -ENOMEM;
	e = rd_bytes(r, s, (size_t)len);
	if (e < 0) {
		free(s);
		return e;
	}
	s[len] = 0;
	if (!model_utf8_valid((unsigned char *)s, (size_t)len)) {
		free(s);
		return -EILSEQ;
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

static int skip_value(struct rd *r, uint32_t type, int depth)
{
	int sz = scalar_size(type);

	if (sz > 0) {
		if (type == GGUF_BOOL) {
			unsigned char b;
			int e = rd_bytes(r, &b, 1);

			if (e == 0 && b > 1)
				return -EBADMSG;
			return e;
		}
		return rd_skip(r, (uint64_t)sz);
	}
	if (type == GGUF_STRING)
		return rd_string(r, GGUF_STRING_MAX, NULL, NULL);
	if (type == GGUF_ARRAY) {
		uint32_t et = 0;
		uint64_t count = 0;
		int e;

		if (depth >= GGUF_ARRAY_DEPTH)
			return -E2BIG;
		e = rd_u32(r, &et);
		if (e == 0)
			e = rd_u64(r, &count);
		if (e < 0)
			return e;
		sz = scalar_size(et);
		if (sz == 0 && et != GGUF_STRING && et != GGUF_ARRAY)
			return -EBADMSG;
		/* every element takes at least its size (a string or array its 8/12-byte head) */
		uint64_t min = sz ? (uint64_t)sz : et == GGUF_STRING ? 8 : 12;

		if (count > (r->size - r->pos) / min)
			return -ENODATA;
		if (sz > 0 && et != GGUF_BOOL)
			return rd_skip(r, count * (uint64_t)sz);
		for (uint64_t i = 0; i < count; i++) {
			e = skip_value(r, et, depth + 1);
			if (e < 0)
				return e;
		}
		return 0;
	}
	return -EBADMSG;
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

static int read_kvs(struct rd *r, uint64_t nkv, uint32_t *alignment)
{
	char **keys;
	int e = 0;
	uint64_t got = 0;

	/* the shortest key/value: an empty key head (8), the type (4), a u8 (1) */
	if (nkv > (r->size - r->pos) / 13)
		return -ENODATA;
	keys = calloc(nkv ? nkv : 1, sizeof(char *));
	if (!keys)
		return -ENOMEM;
	for (; got < nkv; got++) {
		uint32_t type;
		size_t klen;

		e = rd_string(r, GGUF_KEY_MAX, &keys[got], &klen);
		if (e < 0)
			break;
		e = rd_u32(r, &type);
		if (e < 0) {
			got++;
			break;
		}
		if (klen == 0 || memchr(keys[got], 0, klen)) {
			got++;
			e = -EBADMSG;
			break;
		}
		if (strcmp(keys[got], "general.alignment") == 0) {
			uint32_t a;

			if (type != GGUF_UINT32) {
				got++;
				e = -EBADMSG;
				break;
			}
			e = rd_u32(r, &a);
			if (e == 0 && (a == 0 || (a & (a - 1)) != 0))
				e = -EBADMSG;
			if (e < 0) {
				got++;
				break;
			}
			*alignment = a;
		} else {
			e = skip_value(r, type, 0);
			if (e < 0) {
				got++;
				break;
			}
		}
	}
	if (e == 0 && nkv > 1) {
		qsort(keys, nkv, sizeof(char *), cmp_str);
		for (uint64_t i = 1; i < nkv; i++)
			if (strcmp(keys[i], keys[i - 1]) == 0) {
				e = -EEXIST;
				break;
			}
	}
	for (uint64_t i = 0; i < nkv; i++)
		free(keys[i]);
	free(keys);
	return e;
}

int model_parse_gguf(struct model_file *f, uint32_t file_index, struct tensor_vec *v)
{
	struct rd *r;
	uint32_t version, alignment = GGUF_DEFAULT_ALIGNMENT;
	uint64_t ntensors = 0, nkv = 0, data_start, end_max = 0;
	size_t first = v->n;
	int e;

	r = malloc(sizeof(*r));
	if (!r)
		return -ENOMEM;
	r->fd = f->fd;
	r->size = f->size;
	r->pos = 4;
	r->buf_pos = 0;
	r->buf_len = 0;
	e = rd_u32(r, &version);
	if (e < 0)
		goto out;
	if (version != 2 && version != 3) {
		e = -EPROTONOSUPPORT;
		goto out;
	}
	e = rd_u64(r, &ntensors);
	if (e == 0)
		e = rd_u64(r, &nkv);
	if (e < 0)
		goto out;
	if (ntensors > DMAIO_MODEL_MAX_TENSORS || nkv > DMAIO_MODEL_MAX_KV) {
		e = -E2BIG;
		goto out;
	}
	e = read_kvs(r, nkv, &alignment);
	if (e < 0)
		goto out;
	/* the tensor infos: name, n_dims, dims, type, offset (the shortest is 8 + 4 + 4 + 8) */
	if (ntensors > (r->size - r->pos) / 24) {
		e = -ENODATA;
		goto out;
	}
	for (uint64_t i = 0; i < ntensors; i++) {
		struct model_tensor *t;
		char *name = NULL;
		size_t nlen;
		uint32_t ndims, type;
		uint64_t off;
		const struct dtype_desc *d;

		e = rd_string(r, DMAIO_MODEL_NAME_MAX, &name, &nlen);
		if (e < 0)
			goto out;
		e = tensor_vec_push(v, &t);
		if (e < 0) {
			free(name);
			goto out;
		}
		t->name = name;
		t->file = file_index;
		if (nlen == 0 || memchr(name, 0, nlen)) {
			e = -EBADMSG;
			goto out;
		}
		e = rd_u32(r, &ndims);
		if (e < 0)
			goto out;
		if (ndims > GGUF_MAX_DIMS) {
			e = -E2BIG;
			goto out;
		}
		t->ndims = ndims;
		for (uint32_t k = 0; k < ndims; k++) {
			e = rd_u64(r, &t->shape[k]);
			if (e < 0)
				goto out;
		}
		e = rd_u32(r, &type);
		if (e == 0)
			e = rd_u64(r, &off);
		if (e < 0)
			goto out;
		d = model_dtype((int)type);
		if (!d || !d->ggml) {
			e = -EPROTOTYPE;
			goto out;
		}
		t->dtype = type;
		e = model_tensor_bytes(d, t->shape, ndims, true, &t->nelems, &t->size);
		if (e < 0)
			goto out;
		if (off % alignment != 0) {
			e = -ENXIO;
			goto out;
		}
		t->offset = off; /* relative for now */
	}
	data_start = round_up_u64(r->pos, alignment);
	for (size_t i = first; i < v->n; i++) {
		struct model_tensor *t = &v->t[i];

		if (t->offset > UINT64_MAX - data_start ||
		    t->size > UINT64_MAX - data_start - t->offset) {
			e = -EOVERFLOW;
			goto out;
		}
		t->offset += data_start;
		if (t->offset + t->size > f->size) {
			e = -ERANGE;
			goto out;
		}
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
