#!/bin/sh
# SPDX-License-Identifier: MIT
#
# The xenstore module's readers and parsers (tests/test-xenbus.c), with
# hostile values, against the real xenstored that xensim-host starts.
. "$top_srcdir/tests/lib.sh"

xenstore_setup

"$top_builddir/tests/test-xenbus" || fail "the xenstore parsers"
finish "xenstore parsers ok"
