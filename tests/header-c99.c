/* SPDX-License-Identifier: MIT */
/*
 * The public header alone, compiled as strict C99 (-std=c99 -pedantic -Werror, see
 * meson.build), without _GNU_SOURCE, then linked and called.
 */
#undef _GNU_SOURCE
#undef _DEFAULT_SOURCE
#include <dmaio.h>
#include <dmaio.h> /* include guard */
#include <dmaio-model.h>
#include <dmaio-model.h> /* include guard */

/* the header provides every type it uses */
static size_t sizes(void)
{
	struct dmaio_xfer x;
	struct dmaio_stats st;
	struct dmaio_sys_info si;
	struct dmaio_heap_info hi;
	struct dmaio_file_info fi;
	ssize_t r = 0;
	off_t o = 0;

	x.done = 0;
	st.ops = 0;
	si.page_size = 0;
	hi.name[0] = 0;
	fi.size = 0;
	return sizeof(x) + sizeof(st) + sizeof(si) + sizeof(hi) + sizeof(fi) + (size_t)r +
	       (size_t)o + x.done + st.ops + si.page_size + (size_t)hi.name[0] + fi.size;
}

int main(void)
{
	const char *n = dmaio_path_name(DMAIO_PATH_BUFFERED);
	unsigned fl = DMAIO_RW_PATH(DMAIO_PATH_SENDFILE) | DMAIO_RW_NO_FALLBACK;

	if (!n || dmaio_path_from_name(n) != DMAIO_PATH_BUFFERED)
		return 1;
	if ((fl & ~DMAIO_RW_FLAGS_ALL) != 0 || (DMAIO_ALLOC_FLAGS_ALL & ~0xfu) != 0)
		return 1;
	if (DMAIO_PATH_COUNT != 7 || DMAIO_VERSION_MAJOR != 0)
		return 1;
	/* the library the program runs with is the one of this header (generated from meson.build) */
	if (dmaio_version() != DMAIO_VERSION_NUMBER ||
	    DMAIO_VERSION_NUMBER != DMAIO_VERSION_ENCODE(DMAIO_VERSION_MAJOR, DMAIO_VERSION_MINOR,
							 DMAIO_VERSION_MICRO) ||
	    DMAIO_VERSION_NUMBER < DMAIO_VERSION_ENCODE(0, 2, 0))
		return 1;
	/* the layouts of the queue structs are ABI: fixed sizes, reserved room included */
	if (sizeof(struct dmaio_io) != 72 || sizeof(struct dmaio_done) != 64 ||
	    sizeof(struct dmaio_progress) != 96 || sizeof(struct dmaio_stats) != 72 + 64 + 128)
		return 1;
	/* and those of the allocation and image structs (0.3) */
	if (sizeof(struct dmaio_alloc_opts) != 64 || sizeof(struct dmaio_image_desc) != 64 ||
	    sizeof(struct dmaio_plane) != 24 || sizeof(struct dmaio_image_layout) != 160 ||
	    sizeof(struct dmaio_heap_info) != 64 + 8 * 4 || DMAIO_IMAGE_MAX_PLANES != 4 ||
	    DMAIO_BUF_NAME_MAX != 32)
		return 1;
	/* the model header: its structs keep their sizes, the calls link */
	if (sizeof(struct dmaio_tensor_info) != 16 + 8 + 64 + 8 + 8 + 16 + 32 ||
	    sizeof(struct dmaio_model_file_info) != 8 + 24 + 8 + 32 ||
	    sizeof(struct dmaio_tensor_place) != 8 + 8 + 16 + 24 ||
	    sizeof(struct dmaio_load_stats) != 48 + 48 + 128 ||
	    dmaio_model_count(NULL) != -22 || dmaio_model_dtype_name(DMAIO_DTYPE_Q4_K) == NULL)
		return 1;
	return sizes() > 0 ? 0 : 1;
}
