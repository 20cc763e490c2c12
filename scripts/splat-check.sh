#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# Exit 1 (and print the first offending lines) when kernel logs hold a
# splat: the real headers only, since a debug kernel's benign boot lines
# mention "lockdep", "bug" and "Warning".
set -u
pattern='WARNING: CPU:|BUG:|kernel BUG at|possible circular locking|possible recursive locking|inconsistent lock state|KASAN:|UBSAN:|refcount_t:|unreferenced object|blocked for more than|Oops|general protection fault|Kernel panic|rcu_sched self-detected stall|rcu: INFO|list_add corruption|list_del corruption|ODEBUG:'
hits=$(grep -hE "$pattern" "$@" 2>/dev/null)
[ -z "$hits" ] && exit 0
echo "$hits" | head -n 10
echo "($(echo "$hits" | wc -l) splat lines in all)"
exit 1
