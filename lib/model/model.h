/* SPDX-License-Identifier: MIT */
/*
 * The model layer (LAYERS rank -1): tensor tables of safetensors and GGUF files and their loading.
 * Above the api layer: it uses the public API of dmaio.h / dmaio-model.h only, plus the inline
 * helpers of dmaio-types.h for the extensible structs and the reasons.
 */
#ifndef DMAIO_MODEL_INTERNAL_H
#define DMAIO_MODEL_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* The public API with its prototypes first: dmaio-types.h asks dmaio.h for the types only
 * (DMAIO_NO_PROTOTYPES), which would hide the functions this layer calls. */
#include "dmaio-model.h"
#include "../dmaio-types.h"

struct model_tensor {
	char *name;
	uint32_t dtype;
	uint32_t ndims;
	uint64_t shape[DMAIO_MODEL_MAX_DIMS];
	uint64_t nelems;
	uint32_t file;
	uint64_t offset; /* absolute */
	uint64_t size;
};

struct model_file {
	int fd;
	uint64_t size;
	uint32_t format;
	uint32_t version;
	uint32_t alignment;
	uint64_t data_offset;
	uint64_t data_size;
	uint32_t first;     /* index of its first tensor in the model */
	uint32_t ntensors;
};

/* a growing array of tensors (one file's table while it is parsed) */
struct tensor_vec {
	struct model_tensor *t;
	size_t n, cap;
};

struct dmaio_model {
	struct dmaio_ctx *ctx;
	unsigned nfiles;
	struct model_file *files;
	uint32_t n;
	struct model_tensor *t;
	uint32_t *by_name; /* tensor indices sorted by name */
};

/* element types */
struct dtype_desc {
	uint32_t id;
	const char *name;
	uint32_t blck;    /* elements per block */
	uint32_t bytes;   /* bytes per block */
	bool safetensors; /* a safetensors dtype string */
	bool ggml;        /* a ggml type id */
};
const struct dtype_desc *model_dtype(uint32_t id);
const struct dtype_desc *model_dtype_by_st_name(const char *name, size_t len);

/* helpers */
int model_pread(int fd, void *dst, size_t len, uint64_t off); /* all or -ENODATA / -errno */
bool model_utf8_valid(const unsigned char *s, size_t len);
int tensor_vec_push(struct tensor_vec *v, struct model_tensor **out);
void tensor_vec_free(struct tensor_vec *v);

/* A name (tensor, key, dtype string) as a reason shows it: NUL-terminated in @out, quoted by the
 * caller; bytes that are not printable (or not valid UTF-8) as \xNN, "..." when cut. */
#define MODEL_SHOW_MAX 72
const char *model_show(char out[MODEL_SHOW_MAX], const void *s, size_t len);
/* "[a, b, c]" of a shape, "..." when cut */
const char *model_show_shape(char out[MODEL_SHOW_MAX], const uint64_t *shape, uint32_t ndims);

/* Bytes of nelems elements (with ne0 the innermost dimension for block types). A refusal
 * (-EOVERFLOW, -EMSGSIZE) is said in @why, for tensor @name of file @file. */
int model_tensor_bytes(const struct dtype_desc *d, const uint64_t *shape, uint32_t ndims,
		       bool ne0_first, uint64_t *nelems, uint64_t *bytes,
		       struct dmaio_reason *why, uint32_t file, const char *name);
/* sort by offset, then size */
void model_sort_by_offset(struct tensor_vec *v);

/* The parsers: fill @f (data_offset, data_size, version, alignment) and @v; -errno, with the
 * refusal said in @why ("file N: ..."). */
int model_parse_safetensors(struct model_file *f, uint32_t file_index, struct tensor_vec *v,
			    struct dmaio_reason *why);
int model_parse_gguf(struct model_file *f, uint32_t file_index, struct tensor_vec *v,
		     struct dmaio_reason *why);

#endif
