#!/bin/sh
# SPDX-License-Identifier: MIT
#
# The device state machine as a unit (tests/test-vbd.c): xenstore events
# in, nodes and worker calls out, against the real xenstored that
# xensim-host starts.
. "$top_srcdir/tests/lib.sh"

xenstore_setup

"$top_builddir/tests/test-vbd" || fail "the device state machine"
finish "device state machine ok"
