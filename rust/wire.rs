// SPDX-License-Identifier: GPL-2.0

//! The `no_std` wire-format crate (`wire/`), compiled into the module from
//! the same source files the host tests use. Every module of `wire/src/lib.rs`
//! is listed here too.

#[path = "../wire/src/bufsize.rs"]
pub(crate) mod bufsize;
#[path = "../wire/src/cdc.rs"]
pub(crate) mod cdc;
#[path = "../wire/src/clc/mod.rs"]
pub(crate) mod clc;
#[path = "../wire/src/close/mod.rs"]
pub(crate) mod close;
#[path = "../wire/src/codec.rs"]
pub(crate) mod codec;
#[path = "../wire/src/cursor.rs"]
pub(crate) mod cursor;
#[path = "../wire/src/lgr_links.rs"]
pub(crate) mod lgr_links;
#[path = "../wire/src/ring.rs"]
pub(crate) mod ring;
#[path = "../wire/src/rtokens.rs"]
pub(crate) mod rtokens;
#[path = "../wire/src/lgr_match.rs"]
pub(crate) mod lgr_match;
#[path = "../wire/src/llc/mod.rs"]
pub(crate) mod llc;
#[path = "../wire/src/tokens.rs"]
pub(crate) mod tokens;
#[path = "../wire/src/waiters.rs"]
pub(crate) mod waiters;
