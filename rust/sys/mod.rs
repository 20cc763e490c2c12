// SPDX-License-Identifier: GPL-2.0

//! The only place in smc_rs that talks to C.
//!
//! Everything above this module is safe Rust: the wrappers here own the raw
//! pointers, state the invariants they rely on and prove each `unsafe` block
//! against them.

pub(crate) mod bindings;
pub(crate) mod family;
pub(crate) mod listen;
pub(crate) mod pernet;
pub(crate) mod sock;
pub(crate) mod socket;
