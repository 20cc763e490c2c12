// SPDX-License-Identifier: GPL-2.0

//! The `no_std` wire-format crate (`wire/`), compiled into the module from
//! the same source files the host tests use.

#[path = "../wire/src/clc.rs"]
pub(crate) mod clc;
