// SPDX-License-Identifier: GPL-2.0

//! `smcd`: the same program as `smcr` under its SMC-D name (upstream
//! builds both from `smc.c`); it knows `seid` as an object, `smcr` sends
//! it to `smcd`. See `smc_tools::smcr`.

use smc_tools::smcr::{self, Flavor};

fn main() {
    std::process::exit(smcr::main(Flavor::Smcd));
}
