/* SPDX-License-Identifier: MIT */
/*
 * The model layer (LAYERS rank -1): tensor tables of safetensors and GGUF files and their loading.
 * Above the api layer: it uses the public API of dmaio.h / dmaio-model.h only.
 */
#ifndef DMAIO_MODEL_INTERNAL_H
#define DMAIO_MODEL_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "dmaio-model.h"

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
	int id;
	const char *name;
	uint32_t blck;    /* elements per block */
	uint32_t bytes;   /* bytes per block */
	bool safetensors; /* a safetensors dtype string */
	bool ggml;        /* a ggml type id */
};
const struct dtype_desc *model_dtype(int id);
const struct dtype_desc *model_dtype_by_st_name(const char *name, size_t len);

/* helpers */
int model_pread(int fd, void *dst, size_t len, uint64_t off); /* all or -ENODATA / -errno */
bool model_utf8_valid(const unsigned char *s, size_t len);
int tensor_vec_push(struct tensor_vec *v, struct model_tensor **out);
void tensor_vec_free(struct tensor_vec *v);
/* bytes of nelems elements (with ne0 the innermost dimension for block types) */
int model_tensor_bytes(const struct dtype_desc *d, const uint64_t *shape, uint32_t ndims,
		       bool ne0_first, uint64_t *nelems, uint64_t *bytes);
/* sort by offset; overlaps: -EADDRINUSE */
void model_sort_by_offset(struct tensor_vec *v);

/* the parsers: fill @f (data_offset, data_size, version, alignment) and @v; -errno */
int model_parse_safetensors(struct model_file *f, uint32_t file_index, struct tensor_vec *v);
int model_parse_gguf(struct model_file *f, uint32_t file_index, struct tensor_vec *v);

#endif
