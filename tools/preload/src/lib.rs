// SPDX-License-Identifier: GPL-2.0

//! `libsmc-preload.so`: run an unmodified TCP program over SMC.
//!
//! Loaded with `LD_PRELOAD` (by `smc_run`), the library interposes
//! `socket(3)` and nothing else: a call for an `AF_INET` or `AF_INET6`
//! stream socket with protocol 0 or `IPPROTO_TCP` creates an `AF_SMC`
//! socket instead (`SMCPROTO_SMC` for IPv4, `SMCPROTO_SMC6` for IPv6),
//! with the caller's `SOCK_NONBLOCK`/`SOCK_CLOEXEC` flags. SMC falls back
//! to TCP by itself when the peer does not speak it; when the kernel has no
//! `AF_SMC` at all (no module), the original call is made. Every other
//! call goes to the next `socket` (libc's) unchanged.
//!
//! The environment, read once when the library is loaded (each `exec`
//! loads it again), as upstream's library reads it:
//!
//! * `SMC_DEBUG`: set and not starting with `0`: one line on stderr per
//!   mapped socket and per buffer size set;
//! * `SMC_SNDBUF`, `SMC_RCVBUF`: a size in bytes, `k`/`K` or `m`/`M`
//!   suffix allowed: `SO_SNDBUF`/`SO_RCVBUF` set on each mapped socket.
//!
//! The interposer allocates nothing and takes no lock: the configuration
//! and the next `socket` are kept in atomics, messages are formatted on
//! the stack and written with `write(2)`, so `socket()` stays usable from
//! signal handlers and any number of threads.

#![forbid(unsafe_op_in_unsafe_fn)]
#![deny(clippy::undocumented_unsafe_blocks)]

pub mod config;
// The exported `socket` would replace libc's in the unit-test binary.
#[cfg(not(test))]
mod interpose;
