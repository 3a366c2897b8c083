/* SPDX-License-Identifier: MIT */
/* libgstdmaio.so: registers dmaiosink and dmaiosrc. */
#include <gst/gst.h>

#include "gstdmaio.h"

int gst_dmaio_cmp_u64(const void *a, const void *b)
{
	guint64 x = *(const guint64 *)a, y = *(const guint64 *)b;

	return x < y ? -1 : x > y;
}

static gboolean plugin_init(GstPlugin *plugin)
{
	return gst_element_register(plugin, "dmaiosink", GST_RANK_NONE, GST_TYPE_DMAIO_SINK) &&
	       gst_element_register(plugin, "dmaiosrc", GST_RANK_NONE, GST_TYPE_DMAIO_SRC);
}

GST_PLUGIN_DEFINE(GST_VERSION_MAJOR, GST_VERSION_MINOR, dmaio,
		  "Raw video frames between files and dma-bufs through libdmaio", plugin_init,
		  GST_DMAIO_VERSION, "MIT", "libdmaio", "https://libdmaio.invalid/")
