// SPDX-License-Identifier: GPL-2.0

//! Fuzz target: see `smc_wire_fuzz::check_llc_any`.

#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| smc_wire_fuzz::check_llc_any(data));
