/* SPDX-License-Identifier: MIT */
/*
 * safetensors: an 8-byte little-endian header length N, N bytes of JSON (an object of
 * name -> {"dtype", "shape", "data_offsets": [begin, end]}, plus an optional "__metadata__"
 * object of strings), then the data section from 8 + N; offsets are relative to it. The JSON is
 * parsed by jansson (UTF-8 validated, duplicate keys refused); without it: -EOPNOTSUPP.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "model.h" /* the public API, then dmaio-types.h */

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

static const char *json_kind(const json_t *j)
{
	switch (json_typeof(j)) {
	case JSON_OBJECT: return "an object";
	case JSON_ARRAY: return "an array";
	case JSON_STRING: return "a string";
	case JSON_INTEGER: return "an integer";
	case JSON_REAL: return "a real number";
	case JSON_TRUE: return "true";
	case JSON_FALSE: return "false";
	default: return "null";
	}
}

/* the tensor being read, for the reasons */
struct st_tensor {
	struct dmaio_reason *why;
	uint32_t file;
	char name[MODEL_SHOW_MAX];
};

/* a JSON integer in [0, 2^63): @what (e.g. "shape", 2) */
static int json_u64(const struct st_tensor *c, const json_t *j, const char *what, size_t i,
		    uint64_t *v)
{
	json_int_t x;

	if (!json_is_integer(j))
		return dmaio_reason_set(c->why, -EBADMSG, "file %u: tensor \"%s\": %s[%zu] is %s, "
					"not an integer", c->file, c->name, what, i, json_kind(j));
	x = json_integer_value(j);
	if (x < 0)
		return dmaio_reason_set(c->why, -EBADMSG, "file %u: tensor \"%s\": %s[%zu] is %lld, "
					"negative", c->file, c->name, what, i, (long long)x);
	*v = (uint64_t)x;
	return 0;
}

/* the fields of a tensor entry: "dtype" a string, "shape" an array, "data_offsets" an array of
 * two, nothing else */
static int check_fields(const struct st_tensor *c, json_t *o)
{
	static const char *const fields[] = { "dtype", "shape", "data_offsets" };
	const char *key;
	json_t *val;
	char sk[MODEL_SHOW_MAX];

	if (!json_is_object(o))
		return dmaio_reason_set(c->why, -EBADMSG, "file %u: tensor \"%s\": its entry is %s, "
					"not an object", c->file, c->name, json_kind(o));
	for (size_t i = 0; i < ARRAY_SIZE(fields); i++)
		if (!json_object_get(o, fields[i]))
			return dmaio_reason_set(c->why, -EBADMSG, "file %u: tensor \"%s\": no \"%s\"",
						c->file, c->name, fields[i]);
	json_object_foreach(o, key, val) {
		size_t i = 0;

		while (i < ARRAY_SIZE(fields) && strcmp(key, fields[i]) != 0)
			i++;
		if (i == ARRAY_SIZE(fields))
			return dmaio_reason_set(c->why, -EBADMSG, "file %u: tensor \"%s\": unknown "
						"field \"%s\"", c->file, c->name,
						model_show(sk, key, strlen(key)));
		if (i == 0 && !json_is_string(val))
			return dmaio_reason_set(c->why, -EBADMSG, "file %u: tensor \"%s\": \"dtype\" "
						"is %s, not a string", c->file, c->name,
						json_kind(val));
		if (i > 0 && !json_is_array(val))
			return dmaio_reason_set(c->why, -EBADMSG, "file %u: tensor \"%s\": \"%s\" is "
						"%s, not an array", c->file, c->name, fields[i],
						json_kind(val));
		if (i == 2 && json_array_size(val) != 2)
			return dmaio_reason_set(c->why, -EBADMSG, "file %u: tensor \"%s\": "
						"\"data_offsets\" has %zu entries, not 2", c->file,
						c->name, json_array_size(val));
	}
	return 0;
}

static int parse_tensor(const char *name, size_t name_len, json_t *o, uint64_t data_size,
			uint32_t file_index, struct tensor_vec *v, struct dmaio_reason *why)
{
	json_t *dt, *sh, *off;
	const struct dtype_desc *d;
	struct model_tensor *t;
	uint64_t shape[DMAIO_MODEL_MAX_DIMS] = { 0 }, begin, end, nelems, bytes;
	struct st_tensor c = { why, file_index, "" };
	char sd[MODEL_SHOW_MAX], ss[MODEL_SHOW_MAX];
	size_t ndims;
	int r;

	model_show(c.name, name, name_len);
	if (name_len == 0)
		return dmaio_reason_set(why, -EBADMSG, "file %u: a tensor has an empty name",
					file_index);
	r = check_fields(&c, o);
	if (r < 0)
		return r;
	dt = json_object_get(o, "dtype");
	sh = json_object_get(o, "shape");
	off = json_object_get(o, "data_offsets");
	if (name_len > DMAIO_MODEL_NAME_MAX)
		return dmaio_reason_set(why, -E2BIG, "file %u: tensor \"%s\": a name of %zu bytes, "
					"above DMAIO_MODEL_NAME_MAX (%u)", file_index, c.name,
					name_len, DMAIO_MODEL_NAME_MAX);
	if (memchr(name, 0, name_len))
		return dmaio_reason_set(why, -EBADMSG, "file %u: tensor \"%s\": the name contains a "
					"NUL byte", file_index, c.name);
	d = model_dtype_by_st_name(json_string_value(dt), json_string_length(dt));
	if (!d)
		return dmaio_reason_set(why, -EPROTOTYPE, "file %u: tensor \"%s\": unknown dtype "
					"\"%s\"", file_index, c.name,
					model_show(sd, json_string_value(dt), json_string_length(dt)));
	ndims = json_array_size(sh);
	if (ndims > DMAIO_MODEL_MAX_DIMS)
		return dmaio_reason_set(why, -E2BIG, "file %u: tensor \"%s\": %zu dimensions, at most "
					"%u", file_index, c.name, ndims, DMAIO_MODEL_MAX_DIMS);
	for (size_t i = 0; i < ndims; i++) {
		r = json_u64(&c, json_array_get(sh, i), "shape", i, &shape[i]);
		if (r < 0)
			return r;
	}
	r = json_u64(&c, json_array_get(off, 0), "data_offsets", 0, &begin);
	if (r == 0)
		r = json_u64(&c, json_array_get(off, 1), "data_offsets", 1, &end);
	if (r < 0)
		return r;
	r = model_tensor_bytes(d, shape, (uint32_t)ndims, false, &nelems, &bytes, why, file_index,
			       name); /* NUL-terminated: a jansson key without NUL (checked) */
	if (r < 0)
		return r;
	if (begin > end)
		return dmaio_reason_set(why, -EDOM, "file %u: tensor \"%s\": data_offsets [%llu, %llu] "
					"begin after their end", file_index, c.name,
					(unsigned long long)begin, (unsigned long long)end);
	if (end > data_size)
		return dmaio_reason_set(why, -ERANGE, "file %u: tensor \"%s\": data_offsets [%llu, "
					"%llu] run past the end of the data section (%llu bytes)",
					file_index, c.name, (unsigned long long)begin,
					(unsigned long long)end, (unsigned long long)data_size);
	if (end - begin != bytes)
		return dmaio_reason_set(why, -EMSGSIZE, "file %u: tensor \"%s\": data_offsets [%llu, "
					"%llu] hold %llu bytes, but %s %s takes %llu", file_index,
					c.name, (unsigned long long)begin, (unsigned long long)end,
					(unsigned long long)(end - begin), d->name,
					model_show_shape(ss, shape, (uint32_t)ndims),
					(unsigned long long)bytes);
	if (v->n >= DMAIO_MODEL_MAX_TENSORS)
		return dmaio_reason_set(why, -E2BIG, "file %u: more than DMAIO_MODEL_MAX_TENSORS (%u) "
					"tensors", file_index, DMAIO_MODEL_MAX_TENSORS);
	r = tensor_vec_push(v, &t);
	if (r < 0)
		return dmaio_reason_set(why, r, "out of memory");
	t->name = strndup(name, name_len);
	if (!t->name) {
		v->n--;
		return dmaio_reason_set(why, -ENOMEM, "out of memory");
	}
	t->dtype = d->id;
	t->ndims = (uint32_t)ndims;
	memcpy(t->shape, shape, sizeof(shape));
	t->nelems = nelems;
	t->file = file_index;
	t->offset = begin; /* relative until the caller adds the data start */
	t->size = bytes;
	return 0;
}

/* "__metadata__": an object of strings */
static int check_metadata(json_t *val, uint32_t file_index, struct dmaio_reason *why)
{
	const char *k;
	json_t *v;
	char sk[MODEL_SHOW_MAX];

	if (!json_is_object(val))
		return dmaio_reason_set(why, -EBADMSG, "file %u: \"__metadata__\" is %s, not an "
					"object", file_index, json_kind(val));
	json_object_foreach(val, k, v)
		if (!json_is_string(v))
			return dmaio_reason_set(why, -EBADMSG, "file %u: \"__metadata__\" key \"%s\" "
						"is %s, not a string", file_index,
						model_show(sk, k, strlen(k)), json_kind(v));
	return 0;
}

/* The data section is the tensors (of v->t[first..]), back to back: no hole, no overlap,
 * nothing after. Their offsets become absolute. */
static int check_data(struct model_file *f, uint32_t file_index, struct tensor_vec *v,
		      size_t first, uint64_t data_size, struct dmaio_reason *why)
{
	char sa[MODEL_SHOW_MAX], sb[MODEL_SHOW_MAX];
	const struct model_tensor *prev = NULL;
	struct tensor_vec part = { NULL, 0, 0 };
	uint64_t at = 0;

	if (v->n > first) {
		part = (struct tensor_vec){ v->t + first, v->n - first, v->n - first };
		model_sort_by_offset(&part);
	}
	for (size_t i = 0; i < part.n; i++) {
		struct model_tensor *t = &part.t[i];

		if (t->offset < at)
			return dmaio_reason_set(why, -EADDRINUSE, "file %u: tensors \"%s\" [%llu, %llu) "
						"and \"%s\" [%llu, %llu) of the data section overlap",
						file_index,
						model_show(sa, prev->name, strlen(prev->name)),
						(unsigned long long)prev->offset,
						(unsigned long long)(prev->offset + prev->size),
						model_show(sb, t->name, strlen(t->name)),
						(unsigned long long)t->offset,
						(unsigned long long)(t->offset + t->size));
		if (t->offset > at) {
			if (prev)
				return dmaio_reason_set(why, -ENOTEMPTY, "file %u: data section bytes "
							"[%llu, %llu) belong to no tensor (between "
							"\"%s\" and \"%s\")", file_index,
							(unsigned long long)at,
							(unsigned long long)t->offset,
							model_show(sa, prev->name,
								   strlen(prev->name)),
							model_show(sb, t->name, strlen(t->name)));
			return dmaio_reason_set(why, -ENOTEMPTY, "file %u: data section bytes [0, %llu) "
						"belong to no tensor (before \"%s\")", file_index,
						(unsigned long long)t->offset,
						model_show(sb, t->name, strlen(t->name)));
		}
		at = t->offset + t->size;
		prev = t;
	}
	if (at != data_size) {
		if (prev)
			return dmaio_reason_set(why, -ENOTEMPTY, "file %u: data section bytes [%llu, "
						"%llu) belong to no tensor (after the last one, "
						"\"%s\")", file_index, (unsigned long long)at,
						(unsigned long long)data_size,
						model_show(sa, prev->name, strlen(prev->name)));
		return dmaio_reason_set(why, -ENOTEMPTY, "file %u: data section bytes [0, %llu) belong "
					"to no tensor (the header lists none)", file_index,
					(unsigned long long)data_size);
	}
	for (size_t i = 0; i < part.n; i++)
		part.t[i].offset += f->data_offset;
	return 0;
}

int model_parse_safetensors(struct model_file *f, uint32_t file_index, struct tensor_vec *v,
			    struct dmaio_reason *why)
{
	unsigned char lenb[8];
	uint64_t n = 0, data_size;
	json_error_t jerr;
	json_t *root;
	const char *key;
	json_t *val;
	char *text;
	size_t first = v->n, key_len;
	int r;

	r = model_pread(f->fd, lenb, 8, 0);
	if (r < 0)
		return dmaio_reason_set(why, r, "file %u: reading the header length: %s", file_index,
					strerror(-r));
	for (int i = 7; i >= 0; i--)
		n = n << 8 | lenb[i];
	if (n > DMAIO_MODEL_MAX_HEADER)
		return dmaio_reason_set(why, -E2BIG, "file %u: header length %llu is above the limit "
					"of %u bytes", file_index, (unsigned long long)n,
					DMAIO_MODEL_MAX_HEADER);
	if (n + 8 > f->size)
		return dmaio_reason_set(why, -ENODATA, "file %u: header length %llu runs past the end "
					"of the file (%llu bytes)", file_index,
					(unsigned long long)n, (unsigned long long)f->size);
	text = malloc(n ? n : 1);
	if (!text)
		return dmaio_reason_set(why, -ENOMEM, "file %u: out of memory for a header of %llu "
					"bytes", file_index, (unsigned long long)n);
	r = model_pread(f->fd, text, n, 8);
	if (r < 0) {
		free(text);
		return dmaio_reason_set(why, r, "file %u: reading the header: %s", file_index,
					strerror(-r));
	}
	root = json_loadb(text, n, JSON_REJECT_DUPLICATES, &jerr);
	free(text);
	if (!root)
		return dmaio_reason_set(why, json_err(&jerr), "file %u: JSON header, byte %d: %s%s",
					file_index, jerr.position,
					json_err(&jerr) == -EILSEQ ? "invalid UTF-8: " : "",
					jerr.text);
	if (!json_is_object(root)) {
		r = dmaio_reason_set(why, -EBADMSG, "file %u: the JSON header is %s, not an object",
				     file_index, json_kind(root));
		json_decref(root);
		return r;
	}
	f->format = DMAIO_MODEL_SAFETENSORS;
	f->version = 0;
	f->alignment = 1;
	f->data_offset = 8 + n;
	data_size = f->size - f->data_offset;
	json_object_keylen_foreach(root, key, key_len, val) {
		if (key_len == 12 && memcmp(key, "__metadata__", 12) == 0)
			r = check_metadata(val, file_index, why);
		else
			r = parse_tensor(key, key_len, val, data_size, file_index, v, why);
		if (r < 0)
			break;
	}
	json_decref(root);
	if (r < 0)
		return r;
	r = check_data(f, file_index, v, first, data_size, why);
	if (r < 0)
		return r;
	f->data_size = data_size;
	return 0;
}

#else

int model_parse_safetensors(struct model_file *f, uint32_t file_index, struct tensor_vec *v,
			    struct dmaio_reason *why)
{
	(void)f;
	(void)v;
	return dmaio_reason_set(why, -EOPNOTSUPP, "file %u: a safetensors file, and this "
				"libdmaio-model was built without jansson (GGUF only)", file_index);
}

#endif
