/* SPDX-License-Identifier: MIT */
/*
 * safetensors: an 8-byte little-endian header length N, N bytes of JSON (an object of
 * name -> {"dtype", "shape", "data_offsets": [begin, end]}, plus an optional "__metadata__"
 * object of strings), then the data section from 8 + N; offsets are relative to it. The JSON is
 * parsed by jansson (UTF-8 validated, duplicate keys refused); without it: -EOPNOTSUPP.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "../dmaio-types.h"
#include "model.h"

#ifdef DMAIO_HAVE_JANSSON
#include <jansson.h>

static int json_err(const json_error_t *e)
{
	switch (json_error_code(e)) {
	case json_error_invalid_utf8:
		return -EILSEQ;
	case json_error_duplicate_key:
		return -EEXIST;
	case json_error_out_of_memory:
		return -ENOMEM;
	default:
		return -EBADMSG;
	}
}

/* a JSON integer in [0, 2^63) */
static int json_u64(const json_t *j, uint64_t *v)
{
	json_int_t x;

	if (!json_is_integer(j))
		return -EBADMSG;
	x = json_integer_value(j);
	if (x < 0)
		return -EBADMSG;
	*v = (uint64_t)x;
	return 0;
}

static int parse_tensor(const char *name, size_t name_len, json_t *o, uint64_t data_size,
			uint32_t file_index, struct tensor_vec *v)
{
	json_t *dt = json_object_get(o, "dtype"), *sh = json_object_get(o, "shape"),
	       *off = json_object_get(o, "data_offsets");
	const struct dtype_desc *d;
	struct model_tensor *t;
	uint64_t shape[DMAIO_MODEL_MAX_DIMS] = { 0 }, begin, end, nelems, bytes;
	size_t ndims;
	int r;

	if (!json_is_object(o) || !json_is_string(dt) || !json_is_array(sh) || !json_is_array(off) ||
	    json_array_size(off) != 2 || json_object_size(o) != 3)
		return -EBADMSG;
	if (name_len == 0)
		return -EBADMSG;
	if (name_len > DMAIO_MODEL_NAME_MAX)
		return -E2BIG;
	if (memchr(name, 0, name_len))
		return -EBADMSG;
	d = model_dtype_by_st_name(json_string_value(dt), json_string_length(dt));
	if (!d)
		return -EPROTOTYPE;
	ndims = json_array_size(sh);
	if (ndims > DMAIO_MODEL_MAX_DIMS)
		return -E2BIG;
	for (size_t i = 0; i < ndims; i++) {
		r = json_u64(json_array_get(sh, i), &shape[i]);
		if (r < 0)
			return r;
	}
	r = json_u64(json_array_get(off, 0), &begin);
	if (r == 0)
		r = json_u64(json_array_get(off, 1), &end);
	if (r < 0)
		return r;
	r = model_tensor_bytes(d, shape, (uint32_t)ndims, false, &nelems, &bytes);
	if (r < 0)
		return r;
	if (begin > end)
		return -EDOM;
	if (end > data_size)
		return -ERANGE;
	if (end - begin != bytes)
		return -EMSGSIZE;
	if (v->n >= DMAIO_MODEL_MAX_TENSORS)
		return -E2BIG;
	r = tensor_vec_push(v, &t);
	if (r < 0)
		return r;
	t->name = strndup(name, name_len);
	if (!t->name) {
		v->n--;
		return -ENOMEM;
	}
	t->dtype = (uint32_t)d->id;
	t->ndims = (uint32_t)ndims;
	memcpy(t->shape, shape, sizeof(shape));
	t->nelems = nelems;
	t->file = file_index;
	t->offset = begin; /* relative until the caller adds the data start */
	t->size = bytes;
	return 0;
}

int model_parse_safetensors(struct model_file *f, uint32_t file_index, struct tensor_vec *v)
{
	unsigned char lenb[8];
	uint64_t n = 0, data_size;
	json_error_t jerr;
	json_t *root;
	const char *key;
	json_t *val;
	char *text;
	int r;

	r = model_pread(f->fd, lenb, 8, 0);
	if (r < 0)
		return r;
	for (int i = 7; i >= 0; i--)
		n = n << 8 | lenb[i];
	if (n > DMAIO_MODEL_MAX_HEADER)
		return -E2BIG;
	if (n + 8 > f->size)
		return -ENODATA;
	text = malloc(n ? n : 1);
	if (!text)
		return -ENOMEM;
	r = model_pread(f->fd, text, n, 8);
	if (r < 0) {
		free(text);
		return r;
	}
	root = json_loadb(text, n, JSON_REJECT_DUPLICATES, &jerr);
	free(text);
	if (!root)
		return json_err(&jerr);
	if (!json_is_object(root)) {
		json_decref(root);
		return -EBADMSG;
	}
	f->format = DMAIO_MODEL_SAFETENSORS;
	f->version = 0;
	f->alignment = 1;
	f->data_offset = 8 + n;
	data_size = f->size - f->data_offset;
	size_t first = v->n;
	size_t key_len;

	json_object_keylen_foreach(root, key, key_len, val) {
		if (key_len == 12 && memcmp(key, "__metadata__", 12) == 0) {
			const char *k2;
			json_t *v2;

			if (!json_is_object(val)) {
				r = -EBADMSG;
				break;
			}
			json_object_foreach(val, k2, v2)
				if (!json_is_string(v2)) {
					r = -EBADMSG;
					break;
				}
			if (r < 0)
				break;
			continue;
		}
		r = parse_tensor(key, key_len, val, data_size, file_index, v);
		if (r < 0)
			break;
	}
	json_decref(root);
	if (r < 0)
		return r;
	/* the data section is the tensors, back to back: no hole, no overlap, nothing after */
	struct tensor_vec part = { v->t + first, v->n - first, v->n - first };

	model_sort_by_offset(&part);
	uint64_t at = 0;

	for (size_t i = 0; i < part.n; i++) {
		struct model_tensor *t = &part.t[i];

		if (t->offset < at)
			return -EADDRINUSE;
		if (t->offset > at)
			return -ENOTEMPTY;
		at = t->offset + t->size;
		t->offset += f->data_offset;
	}
	if (at != data_size)
		return -ENOTEMPTY;
	f->data_size = data_size;
	return 0;
}

#else

int model_parse_safetensors(struct model_file *f, uint32_t file_index, struct tensor_vec *v)
{
	(void)f;
	(void)file_index;
	(void)v;
	return -EOPNOTSUPP;
}

#endif
