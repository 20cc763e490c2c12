// SPDX-License-Identifier: GPL-2.0

//! The only place in smc_rs that talks to C.
//!
//! Everything above this module is safe Rust: the wrappers here own the raw
//! pointers, state the invariants they rely on and prove each `unsafe` block
//! against them. The modules are floors; each uses only those below it:
//!
//! ```text
//!   registration   family registration (RAII, unwinds by drop order)
//!   family         proto_ops from a #[vtable] trait, socket creation
//!   socket args    the user socket and its file redirection; call arguments
//!   sock work listen owner readable   the SMC sock and its state, typed
//!                  work, TCP listener hooks, the SMC socket a clcsock
//!                  serves, waits for a connection's first bytes
//!   tcp ib route   the clcsock, TCP's struct sock (ARef), the SMC option;
//!                  ib_core: client, devices, ports, GIDs, events;
//!                  IPv4 routes and next hops
//!   net pernet percpu sysctl sync errno print random debugfs
//!                  namespaces, per-netns data, per-CPU counters, sysctls,
//!                  locks, errnos, debug, random numbers, debugfs files
//!   bindings       generated
//! ```

pub(crate) mod bindings;

pub(crate) mod debugfs;
pub(crate) mod errno;
pub(crate) mod net;
pub(crate) mod percpu;
pub(crate) mod pernet;
pub(crate) mod print;
pub(crate) mod random;
pub(crate) mod sync;
pub(crate) mod sysctl;

pub(crate) mod ib;
pub(crate) mod route;
pub(crate) mod tcp;
pub(crate) mod wake;

pub(crate) mod listen;
pub(crate) mod owner;
pub(crate) mod readable;
pub(crate) mod sock;
pub(crate) mod ticker;
pub(crate) mod work;

pub(crate) mod args;
pub(crate) mod socket;

pub(crate) mod diag;
pub(crate) mod family;
pub(crate) mod genl;
pub(crate) mod registration;
pub(crate) mod socktable;
