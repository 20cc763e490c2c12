// SPDX-License-Identifier: GPL-2.0

//! `smc_pnet`: the SMC PNET table, as upstream smc-tools' `smc_pnet(8)`;
//! see `smc_tools::smc_pnet`.

fn main() {
    std::process::exit(smc_tools::smc_pnet::main());
}
