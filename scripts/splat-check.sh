#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# Exit 1 (and print the offending lines) when a kernel log holds a splat:
# the real headers only, since a debug kernel's benign boot lines mention
# "lockdep", "bug" and "Warning".
set -u
pattern='WARNING: CPU:|BUG:|kernel BUG at|possible circular locking|possible recursive locking|inconsistent lock state|KASAN:|UBSAN:|refcount_t:|unreferenced object|blocked for more than|Oops|general protection fault|Kernel panic|rcu_sched self-detected stall|rcu: INFO|list_add corruption|list_del corruption|ODEBUG:'
if grep -E "$pattern" "$@" 2>/dev/null; then
	exit 1
fi
exit 0
