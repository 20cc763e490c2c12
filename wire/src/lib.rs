// SPDX-License-Identifier: GPL-2.0

//! SMC-R wire formats, in `no_std` safe Rust.
//!
//! The same source files are compiled into the `smc_rs` kernel module (see
//! `rust/wire.rs`) and, through this crate, tested on the host. Input from
//! the network is hostile: decoders return errors, never panic.
//!
//! Modules refer to each other with `super::` paths, never `crate::`: in
//! the kernel module they live under `crate::wire`.

#![no_std]
#![forbid(unsafe_code)]

pub mod bufsize;
pub mod cdc;
pub mod clc;
pub mod close;
pub mod codec;
pub mod cursor;
pub mod lgr_links;
pub mod lgr_match;
pub mod llc;
pub mod ring;
pub mod rtokens;
pub mod tokens;
pub mod waiters;
