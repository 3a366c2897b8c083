#!/bin/sh
# SPDX-License-Identifier: MIT
# host-only.sh CMD ARGS...: run a test that checks the host's build (the tools and the bench as a
# user runs them, with python3) and is not for the test VM, whose initramfs carries neither the
# build tree nor python: there it exits 77 (skipped).
if [ "${DMAIO_TEST_VM:-0}" = 1 ]; then
	echo "SKIP: a host-only test (the VM has no python3 and no build tree)"
	exit 77
fi
exec "$@"
