// SPDX-License-Identifier: MIT
//
// The public header compiled as C++ (-pedantic -Werror, see meson.build), linked and called:
// proves the extern "C" block and that nothing in it is C-only.
#include <dmaio.h>
#include <dmaio-model.h>
#include <cstring>

int main()
{
	const char *n = dmaio_path_name(DMAIO_PATH_SENDFILE);
	struct dmaio_stats st;
	struct dmaio_xfer x = {};
	dmaio_buf *buf = nullptr;
	int kind = DMAIO_BUF_MEMFD;
	unsigned fl = DMAIO_RW_PATH(DMAIO_PATH_BUFFERED) | DMAIO_RW_NO_FALLBACK;

	if (!n || std::strcmp(n, "sendfile") != 0)
		return 1;
	if (dmaio_path_from_name("sendfile") != DMAIO_PATH_SENDFILE)
		return 1;
	if (dmaio_buf_stats(buf, &st) >= 0 || x.done != 0 || kind != 5 || (fl & ~DMAIO_RW_FLAGS_ALL))
		return 1;
	struct dmaio_load_opts lo = {};
	dmaio_model *m = nullptr;
	lo.mode = DMAIO_LOAD_PACKED;
	if (dmaio_model_count(m) >= 0 || std::strcmp(dmaio_model_dtype_name(DMAIO_DTYPE_BF16), "BF16") != 0 ||
	    lo.mode != 2)
		return 1;
	return 0;
}
