// SPDX-License-Identifier: GPL-2.0

//! `smcr`: SMC-R information and settings, as upstream smc-tools'
//! `smcr(8)`, from the SMC generic netlink family. This version serves
//! `ueid`, `info` and `stats`; see `smc_tools::smcr`.

use smc_tools::smcr::{self, Flavor};

fn main() {
    std::process::exit(smcr::main(Flavor::Smcr));
}
