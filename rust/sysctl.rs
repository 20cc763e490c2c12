// SPDX-License-Identifier: GPL-2.0

//! `net.smc.*`: upstream's per network namespace sysctls, with its names,
//! types, bounds, defaults and proc handlers, and what each means here.
//!
//! | name                     | handler               | range            | default |
//! |--------------------------|-----------------------|------------------|---------|
//! | `autocorking_size`       | `proc_douintvec`      | any u32          | 65536   |
//! | `smcr_buf_type`          | `proc_douintvec_minmax` | 0..=2          | 0       |
//! | `smcr_testlink_time`     | `proc_dointvec_jiffies` | seconds        | 30      |
//! | `wmem`, `rmem`           | `proc_dointvec_minmax` | 16384..=INT_MAX/2 | 65536 |
//! | `smcr_max_links_per_lgr` | `proc_dointvec_minmax` | 1..=2           | 2       |
//! | `smcr_max_conns_per_lgr` | `proc_dointvec_minmax` | 16..=255        | 255     |
//! | `limit_smc_hs`           | `proc_dointvec_minmax` | 0..=1           | 0       |
//! | `smcr_max_send_wr`       | `proc_dointvec_minmax` | 2..=2048        | 16      |
//! | `smcr_max_recv_wr`       | `proc_dointvec_minmax` | 2..=2048        | 48      |
//! | `smcd_loopback`          | `proc_dointvec_minmax` | 0..=1           | 1       |
//!
//! `smcd_loopback` is ours: 1 lets connections between sockets of this
//! host use SMC-D through the loopback ISM device (upstream has it when
//! built with `CONFIG_SMC_LO`).
//!
//! Values are read when they take effect (a connection's buffers, a new
//! link group), never on the data path. `smcr_buf_type` is kept for
//! compatibility only: buffers here are always physically contiguous, so
//! 1 (virtually contiguous) and 2 (mixed) act as 0.

use crate::sys::net::Net;
use crate::sys::pernet::{self, PernetData};
use crate::sys::sysctl::{jiffies_to_ms, Handler, Knob, NetSysctlTable};
use core::ffi::{c_int, c_uint};
use core::sync::atomic::AtomicU32;
use kernel::c_str;
use kernel::prelude::*;

/// Positions of the knobs in [`KNOBS`] (upstream's order).
const AUTOCORKING_SIZE: usize = 0;
// 1: `smcr_buf_type`, accepted and shown, with no effect (see above).
const SMCR_TESTLINK_TIME: usize = 2;
const WMEM: usize = 3;
const RMEM: usize = 4;
const SMCR_MAX_LINKS_PER_LGR: usize = 5;
const SMCR_MAX_CONNS_PER_LGR: usize = 6;
const LIMIT_SMC_HS: usize = 7;
const SMCR_MAX_SEND_WR: usize = 8;
const SMCR_MAX_RECV_WR: usize = 9;
const SMCD_LOOPBACK: usize = 10;
const KNOB_COUNT: usize = 11;

/// The smallest send buffer and RMB (upstream's `SMC_BUF_MIN_SIZE`).
static BUF_MIN: c_int = 16384;
/// The largest `wmem`/`rmem` upstream accepts.
static BUF_MAX: c_int = c_int::MAX / 2;
/// Links per link group (`SMC_LINKS_ADD_LNK_MIN`/`MAX`).
static LINKS_MIN: c_int = 1;
static LINKS_MAX: c_int = 2;
/// Connections per link group (`SMC_CONN_PER_LGR_MIN`/`MAX`).
static CONNS_MIN: c_int = 16;
static CONNS_MAX: c_int = 255;
/// `smcr_buf_type`: 0 physically, 1 virtually contiguous, 2 mixed.
static BUF_TYPE_MIN: c_uint = 0;
static BUF_TYPE_MAX: c_uint = 2;
/// `limit_smc_hs`: off or on.
static OFF: c_int = 0;
static ON: c_int = 1;
/// Work requests per queue (upstream's bounds for both directions).
static WR_MIN: c_int = 2;
static WR_MAX: c_int = 2048;

/// Upstream's table.
static KNOBS: [Knob; KNOB_COUNT] = [
    Knob {
        name: c_str!("autocorking_size"),
        handler: Handler::UInt,
        initial: 64 * 1024,
    },
    Knob {
        name: c_str!("smcr_buf_type"),
        handler: Handler::UIntMinMax {
            min: &BUF_TYPE_MIN,
            max: &BUF_TYPE_MAX,
        },
        initial: 0,
    },
    Knob {
        name: c_str!("smcr_testlink_time"),
        handler: Handler::IntJiffies,
        initial: 30,
    },
    Knob {
        name: c_str!("wmem"),
        handler: Handler::IntMinMax {
            min: &BUF_MIN,
            max: &BUF_MAX,
        },
        initial: 64 * 1024,
    },
    Knob {
        name: c_str!("rmem"),
        handler: Handler::IntMinMax {
            min: &BUF_MIN,
            max: &BUF_MAX,
        },
        initial: 64 * 1024,
    },
    Knob {
        name: c_str!("smcr_max_links_per_lgr"),
        handler: Handler::IntMinMax {
            min: &LINKS_MIN,
            max: &LINKS_MAX,
        },
        initial: 2,
    },
    Knob {
        name: c_str!("smcr_max_conns_per_lgr"),
        handler: Handler::IntMinMax {
            min: &CONNS_MIN,
            max: &CONNS_MAX,
        },
        initial: 255,
    },
    Knob {
        name: c_str!("limit_smc_hs"),
        handler: Handler::IntMinMax {
            min: &OFF,
            max: &ON,
        },
        initial: 0,
    },
    Knob {
        name: c_str!("smcr_max_send_wr"),
        handler: Handler::IntMinMax {
            min: &WR_MIN,
            max: &WR_MAX,
        },
        initial: 16,
    },
    Knob {
        name: c_str!("smcr_max_recv_wr"),
        handler: Handler::IntMinMax {
            min: &WR_MIN,
            max: &WR_MAX,
        },
        initial: 48,
    },
    // Ours: whether connections between sockets of this host may use
    // SMC-D through the loopback ISM device (upstream builds it in with
    // `CONFIG_SMC_LO`).
    Knob {
        name: c_str!("smcd_loopback"),
        handler: Handler::IntMinMax {
            min: &OFF,
            max: &ON,
        },
        initial: 1,
    },
];

/// The knobs of one namespace, registered as `net/smc` in it.
#[pin_data]
pub(crate) struct NetSysctls {
    table: NetSysctlTable<KNOB_COUNT>,
}

static NET_SYSCTLS_ID: AtomicU32 = AtomicU32::new(0);

impl PernetData for NetSysctls {
    fn init() -> impl PinInit<Self, Error> {
        try_pin_init!(NetSysctls {
            table: NetSysctlTable::new(&KNOBS)?,
        }? Error)
    }

    fn id() -> &'static AtomicU32 {
        &NET_SYSCTLS_ID
    }

    fn setup(self: Pin<&Self>, net: &Net) -> Result {
        self.get_ref().table.register(net, c_str!("net/smc"))
    }
}

/// Knob `index` of `net`, or its default when the knobs are not there.
fn value(net: &Net, index: usize) -> i32 {
    pernet::with::<NetSysctls, _>(net, |s| s.table.get(index))
        .flatten()
        .or_else(|| KNOBS.get(index).map(|k| k.initial))
        .unwrap_or(0)
}

/// `net.smc.wmem`: the send buffer of a socket whose application did not
/// set `SO_SNDBUF` is sized for twice this (as upstream's `sk_sndbuf`).
pub(crate) fn wmem(net: &Net) -> u32 {
    value(net, WMEM).max(BUF_MIN) as u32
}

/// `net.smc.rmem`: as [`wmem`], for the RMB and `SO_RCVBUF`.
pub(crate) fn rmem(net: &Net) -> u32 {
    value(net, RMEM).max(BUF_MIN) as u32
}

/// `net.smc.smcd_loopback`: SMC-D through the loopback device is offered
/// and served in this namespace.
pub(crate) fn smcd_loopback(net: &Net) -> bool {
    value(net, SMCD_LOOPBACK) != 0
}

/// `net.smc.limit_smc_hs`: new listening sockets limit their handshakes.
pub(crate) fn limit_smc_hs(net: &Net) -> bool {
    value(net, LIMIT_SMC_HS) != 0
}

/// Sets `net.smc.limit_smc_hs` (the `SMC_NETLINK_*_HS_LIMITATION`
/// commands).
pub(crate) fn set_limit_smc_hs(net: &Net, on: bool) {
    pernet::with::<NetSysctls, _>(net, |s| s.table.set(LIMIT_SMC_HS, i32::from(on)));
}

/// `net.smc.smcr_max_conns_per_lgr`, the most connections we offer or
/// accept per link group (SMC-Rv2.1).
fn max_conns_per_lgr(net: &Net) -> u8 {
    value(net, SMCR_MAX_CONNS_PER_LGR).clamp(CONNS_MIN, CONNS_MAX) as u8
}

/// `net.smc.smcr_max_links_per_lgr` (SMC-Rv2.1).
fn max_links_per_lgr(net: &Net) -> u8 {
    value(net, SMCR_MAX_LINKS_PER_LGR).clamp(LINKS_MIN, LINKS_MAX) as u8
}

/// Upstream's decline codes of the SMC-Rv2.1 limit negotiation.
pub(crate) const DECL_MAXCONNERR: u32 = 0x0303_000a;
pub(crate) const DECL_MAXLINKERR: u32 = 0x0303_000b;
/// Links per link group here: two (upstream's `SMC_LINKS_ADD_LNK_MAX`).
const LINKS_SUPPORTED: u8 = 2;

/// What a client proposes (SMC-Rv2.1): `smcr_max_conns_per_lgr`, and
/// `smcr_max_links_per_lgr` but at most the links we support.
pub(crate) fn proposal_limits(net: &Net) -> (u8, u8) {
    (
        max_conns_per_lgr(net),
        max_links_per_lgr(net).min(LINKS_SUPPORTED),
    )
}

/// The server's terms for a client's SMC-Rv2.1 proposal (as upstream): the
/// smaller of the client's and our limits (links: at most 1); a decline
/// code when that is below the protocol's minimums.
pub(crate) fn server_limits(net: &Net, conns: u8, links: u8) -> Result<(u8, u8), u32> {
    let conns = conns.min(max_conns_per_lgr(net));
    if i32::from(conns) < CONNS_MIN {
        return Err(DECL_MAXCONNERR);
    }
    let links = links.min(max_links_per_lgr(net)).min(LINKS_SUPPORTED);
    if i32::from(links) < LINKS_MIN {
        return Err(DECL_MAXLINKERR);
    }
    Ok((conns, links))
}

/// The client's check of the server's SMC-Rv2.1 terms (as upstream): the
/// connection limit to keep, or a decline code.
pub(crate) fn client_limits(conns: u8, links: u8) -> Result<u8, u32> {
    if i32::from(conns) < CONNS_MIN {
        return Err(DECL_MAXCONNERR);
    }
    if !(LINKS_MIN..=LINKS_MAX).contains(&i32::from(links)) {
        return Err(DECL_MAXLINKERR);
    }
    Ok(conns)
}

/// What a new link group takes from its namespace when it is made.
#[derive(Clone, Copy, Debug)]
pub(crate) struct LgrParams {
    /// `smcr_testlink_time` in milliseconds; 0: no TEST LINK.
    pub(crate) testlink_ms: u32,
    /// `autocorking_size`: the most bytes a connection holds back.
    pub(crate) autocork_size: u32,
    /// `smcr_max_send_wr`: control message send slots wanted.
    pub(crate) send_wr: u32,
    /// `smcr_max_recv_wr`: receive slots wanted.
    pub(crate) recv_wr: u32,
    /// Connections the link group takes: `smcr_max_conns_per_lgr`, then
    /// what the CLC handshake agreed (SMC-Rv2.1), else 255.
    pub(crate) max_conns: u8,
    /// The namespace these values come from (its cookie): the link
    /// group's, which only connections of sockets in it join.
    pub(crate) net: u64,
}

impl LgrParams {
    /// Upstream's defaults (for a namespace without knobs).
    pub(crate) const DEFAULT: LgrParams = LgrParams {
        testlink_ms: 30_000,
        autocork_size: 64 * 1024,
        send_wr: 16,
        recv_wr: 48,
        max_conns: 255,
        net: 0,
    };

    /// The values of `net` now.
    pub(crate) fn of(net: &Net) -> Self {
        let p = pernet::with::<NetSysctls, _>(net, |s| {
            let get = |i| s.table.get(i).unwrap_or(0);
            LgrParams {
                testlink_ms: jiffies_to_ms(get(SMCR_TESTLINK_TIME)),
                autocork_size: get(AUTOCORKING_SIZE) as u32,
                send_wr: get(SMCR_MAX_SEND_WR).max(WR_MIN) as u32,
                recv_wr: get(SMCR_MAX_RECV_WR).max(WR_MIN) as u32,
                max_conns: get(SMCR_MAX_CONNS_PER_LGR).clamp(CONNS_MIN, CONNS_MAX) as u8,
                net: 0,
            }
        })
        .unwrap_or(Self::DEFAULT);
        LgrParams {
            net: net.cookie(),
            ..p
        }
    }
}
