// SPDX-License-Identifier: GPL-2.0

//! smc_rs: the AF_SMC socket family (Shared Memory Communications over RDMA,
//! RFC 7609 and SMC-Rv2) in Rust.
//!
//! Loading the module registers protocol family 43. `socket(AF_SMC,
//! SOCK_STREAM, 0)` then gives a socket with TCP semantics that negotiates
//! SMC-R where it can and falls back to TCP where it cannot.

#![deny(clippy::undocumented_unsafe_blocks)]
// The link group is built in place from many fields (pin_init macros).
#![recursion_limit = "256"]

use kernel::c_str;
use kernel::prelude::*;

mod af_smc;
mod clc;
mod ib;
mod listen;
mod netlink;
mod smcd;
mod smcr;
mod stats;
mod sys;
mod sysctl;
mod ueid;
#[allow(unreachable_pub, dead_code)]
mod wire;

use sys::bindings;
use sys::diag::DiagRegistration;
use sys::genl::GenlRegistration;
use sys::ib::client::IbClient;
use sys::pernet::PernetRegistration;
use sys::registration::Registration;
use sys::tcp::TcpSmcOption;
use sys::work::HandshakeQueue;

module! {
    type: SmcRs,
    name: "smc_rs",
    author: "smc_rs developers",
    description: "Shared Memory Communications over RDMA (AF_SMC) in Rust",
    license: "GPL",
    // Upstream's: the family, IPPROTO_SMC sockets of AF_INET and AF_INET6,
    // both generic netlink families (smc.ko) and the sock_diag handler of
    // AF_SMC (smc_diag.ko), so that `smcss`, `smcr` and `smc_pnet` load
    // the module on demand as they load upstream's.
    alias: [
        "net-pf-43",
        "net-pf-2-proto-256-type-1",
        "net-pf-10-proto-256-type-1",
        "net-pf-16-proto-16-family-SMC_GEN_NETLINK",
        "net-pf-16-proto-16-family-SMC_PNETID",
        "net-pf-16-proto-4-type-43",
    ],
}

/// Torn down in field order: the debugfs files first (fault injection and
/// counters, for tests), no new sockets then, then no more netlink
/// requests and the UEID table goes, then the handshake queue is drained,
/// then the RDMA devices are let go, then the counters and the `net.smc`
/// sysctls go.
struct SmcRs {
    _debugfs: sys::debugfs::DebugfsDir,
    _diag: DiagRegistration<af_smc::SmcSock>,
    _family: Registration<af_smc::SmcSock>,
    _netlink: GenlRegistration<netlink::SmcNetlink>,
    _pnet_netlink: GenlRegistration<netlink::PnetNetlink>,
    _ueids: ueid::Ueids,
    _handshakes: HandshakeQueue,
    _smcd: crate::smcd::lgr::Smcd,
    _link_groups: crate::smcr::registry::SmcrLinkGroups,
    _ib: IbClient<ib::SmcIbClient>,
    _stats: PernetRegistration<stats::NetStats>,
    _smcr_stats: PernetRegistration<stats::tech::TechStats>,
    _pnet_tables: PernetRegistration<ib::pnet::PnetTable>,
    _sysctls: PernetRegistration<sysctl::NetSysctls>,
    _tcp_option: TcpSmcOption,
}

impl kernel::Module for SmcRs {
    fn init(module: &'static ThisModule) -> Result<Self> {
        let stats = PernetRegistration::new()?;
        let smcr_stats = PernetRegistration::new()?;
        let pnet_tables = PernetRegistration::new()?;
        let ib = IbClient::register(c_str!("smc_rs"))?;
        let handshakes = HandshakeQueue::new()?;
        let link_groups = crate::smcr::registry::SmcrLinkGroups::start()?;
        let smcd = crate::smcd::lgr::Smcd::start()?;
        // The family first: taking family 43 is what tells whether upstream
        // SMC is loaded, and says so.
        let family = Registration::new(bindings::PF_SMC, c_str!("SMC"), module)?;
        // The `net.smc` table only after it: upstream's would be there too.
        // Meanwhile the defaults apply.
        let sysctls = PernetRegistration::new()?;
        let ueids = ueid::Ueids::new();
        let netlink = GenlRegistration::register(module)?;
        let pnet_netlink = GenlRegistration::register(module)?;
        let diag = DiagRegistration::register(bindings::PF_SMC as u8, module)?;
        pr_info!("AF_SMC (family {}) registered\n", bindings::PF_SMC);
        Ok(SmcRs {
            _debugfs: smcr::inject::debugfs_files(),
            _diag: diag,
            _family: family,
            _netlink: netlink,
            _pnet_netlink: pnet_netlink,
            _ueids: ueids,
            _handshakes: handshakes,
            _smcd: smcd,
            _link_groups: link_groups,
            _ib: ib,
            _stats: stats,
            _smcr_stats: smcr_stats,
            _pnet_tables: pnet_tables,
            _sysctls: sysctls,
            _tcp_option: TcpSmcOption::enable(),
        })
    }
}

impl Drop for SmcRs {
    fn drop(&mut self) {
        pr_info!("AF_SMC unregistered\n");
    }
}
