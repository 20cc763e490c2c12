// SPDX-License-Identifier: GPL-2.0

//! Debug messages at protocol decisions, through the kernel's dynamic debug:
//! off by default, switched on by the operator with
//! `echo 'module smc_rs +p' > /sys/kernel/debug/dynamic_debug/control`.
//!
//! The message is formatted by printk's `%pA` only when the call site is
//! enabled, so a disabled message costs a call and a branch. What a peer
//! does wrong is also warned about, rate limited, as upstream does for
//! protocol violations.

use super::bindings;
use core::fmt;

/// Emits one debug message (see [`smc_dbg`]).
pub(crate) fn debug(args: fmt::Arguments<'_>) {
    // `%pA` formats the `fmt::Arguments` behind the pointer during the call.
    // SAFETY: `args` lives across the call.
    unsafe { bindings::smc_rs_pr_debug((&args as *const fmt::Arguments<'_>).cast()) };
}

/// `pr_debug` for smc_rs: `smc_dbg!("fallback {:#x}", code)`.
macro_rules! smc_dbg {
    ($($arg:tt)*) => {
        $crate::sys::print::debug(::core::format_args!($($arg)*))
    };
}
pub(crate) use smc_dbg;

/// Emits one warning, rate limited as `pr_warn_ratelimited` (see
/// [`smc_warn_ratelimited`]).
pub(crate) fn warn_ratelimited(args: fmt::Arguments<'_>) {
    // `%pA` formats the `fmt::Arguments` behind the pointer during the call.
    // SAFETY: `args` lives across the call.
    unsafe { bindings::smc_rs_pr_warn_ratelimited((&args as *const fmt::Arguments<'_>).cast()) };
}

/// `pr_warn_ratelimited` for smc_rs, for what a peer does wrong:
/// `smc_warn_ratelimited!("bad cursor {:?}", e)`.
macro_rules! smc_warn_ratelimited {
    ($($arg:tt)*) => {
        $crate::sys::print::warn_ratelimited(::core::format_args!($($arg)*))
    };
}
pub(crate) use smc_warn_ratelimited;
