#!/bin/sh
# SPDX-License-Identifier: MIT
#
# The device state machine as a unit (tests/test-vbd.c): xenstore events
# in, nodes and worker calls out, against the real xenstored that
# xensim-host starts.
. "$top_srcdir/tests/lib.sh"

requires_xenstored
XENSIM_HOST=$(hv_tool xensim-host) || skip "xensim-host not built"
scratch_dir
XENSTORED_BIN=$XENSTORED_BIN "$XENSIM_HOST" start "$WORK/host" \
	>"$WORK/host.log" 2>&1 || hard_error "xensim-host start failed"
SIM_HOSTS=host
# shellcheck disable=SC1091
. "$WORK/host/env" || hard_error "no $WORK/host/env"
export XENSIM_DIR XENSTORED_PATH

"$top_builddir/tests/test-vbd" || fail "the device state machine"
finish "device state machine ok"
