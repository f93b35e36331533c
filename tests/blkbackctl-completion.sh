#!/bin/sh
# blkbackctl's bash completion, as bash runs it on <Tab>: the commands,
# the options, the log levels, and after `stats`, `resize`, `limit`,
# `snapshot` and `move` the devices the running daemon serves, asked
# through the socket given on the command line; after `detach` their
# domains, then that domain's devices (also after the domain's name).
. "$top_srcdir/tests/lib.sh"
requires bash
COMPLETION=$top_srcdir/tools/blkbackctl/completion/blkbackctl
xensim_setup
start_daemon
SOCKET=$WORK/state/control
guest 1 4M
attach 1
guest 7 4M
attach 7 xvdb
wait_node "$(be_path 7 51728)/state" 2 15 || fail "dom 7 was not picked up"

# complete WORD...: what <Tab> offers after "blkbackctl WORD...", one per
# line, sorted; the last WORD is the one being completed.
complete_line() {
	PATH="$top_builddir/tools/blkbackctl:$PATH" bash -c '
		. "$1" || exit 1
		shift
		COMP_WORDS=(blkbackctl "$@")
		COMP_CWORD=$#
		_blkbackctl
		[ ${#COMPREPLY[@]} -eq 0 ] || printf "%s\n" "${COMPREPLY[@]}"' bash "$COMPLETION" "$@" | sort |
		tr '\n' ' '
}

# expect WANT WORD...
expect() {
	want=$1
	shift
	got=$(complete_line "$@")
	[ "$got" = "$want" ] || fail_later "blkbackctl $* <Tab>: '$got', wanted '$want'"
}

expect "attach detach limit list log-level metrics move reload resize snapshot stats top " ""
expect "limit list log-level " l
expect "reload resize " re
expect "--json " --j
expect "debug " log-level d
expect "debug err info notice warning " log-level ""
expect "1/51712 7/51728 " --socket "$SOCKET" stats ""
expect "1/51712 7/51728 " --socket "$SOCKET" resize ""
expect "1/51712 7/51728 " --socket "$SOCKET" limit --iops 5 ""
expect "1/51712 7/51728 " --socket "$SOCKET" snapshot ""
expect "1/51712 7/51728 " --socket "$SOCKET" move --bw 5M ""
expect "--wait " --wa
expect "--copy " --cop
expect "1/51712 7/51728 " --socket "$SOCKET" snapshot --copy --bw 5M ""
expect "1 7 " --socket "$SOCKET" detach ""
expect "51728 " --socket "$SOCKET" detach 7 ""
expect "51728 " --socket "$SOCKET" detach "$(xs_read /local/domain/7/name)" ""
expect "" --socket "$SOCKET" limit 1/51712 --bw ""
# bash hands "--socket=PATH" over as three words.
expect "7/51728 " --socket = "$SOCKET" stats 7
expect "" --socket "$SOCKET" stats 1/51712 ""
expect "" --socket "$WORK/nothing" stats ""
assert_daemon_alive
finish
