// SPDX-License-Identifier: GPL-2.0

//! Per network namespace counters: connections handled, fallbacks by
//! reason, handshake errors, for the client and the server side, and the
//! data path's ([`tech`]) (what `smcr stats` shows; exported by the
//! diagnostics interfaces).

pub(crate) mod tech;

use crate::sys::net::Net;
use crate::sys::pernet::PernetData;
use crate::sys::sync::{new_spinlock_bh, SpinLockBh};
use crate::wire::clc::DeclineReason;
use core::sync::atomic::{AtomicU32, AtomicU64, Ordering};
use kernel::prelude::*;
use tech::Tech;

/// Which end of the connection a counter is about.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(crate) enum Side {
    /// We connected.
    Client,
    /// We accepted.
    Server,
}

/// The counters of one side.
#[derive(Default)]
pub(crate) struct SideStats {
    /// Connections that completed the TCP handshake.
    pub(crate) connections: AtomicU64,
    /// CLC handshakes that failed (malformed, truncated or missing answers,
    /// socket errors).
    pub(crate) handshake_errors: AtomicU64,
    /// Connections that agreed on SMC-Rv2.
    pub(crate) smcr_v2: AtomicU64,
    /// Connections that agreed on SMC-Dv2.
    pub(crate) smcd_v2: AtomicU64,
}

/// How many fallback reasons are told apart per side, as upstream
/// (`SMC_MAX_FBACK_RSN_CNT`); later reasons are only counted in the total.
pub(crate) const FALLBACK_REASONS: usize = 36;

/// Fallbacks of one side by reason, in the order the reasons first
/// occurred (upstream reports them in that order).
#[derive(Clone, Copy)]
pub(crate) struct ReasonCounts {
    /// (reason code, count); a code of 0 ends the list.
    pub(crate) entries: [(u32, u16); FALLBACK_REASONS],
    /// All fallbacks of the side.
    pub(crate) total: u64,
}

impl ReasonCounts {
    const fn new() -> Self {
        ReasonCounts {
            entries: [(0, 0); FALLBACK_REASONS],
            total: 0,
        }
    }

    fn add(&mut self, code: u32) {
        self.total = self.total.wrapping_add(1);
        for e in self.entries.iter_mut() {
            if e.0 == code || e.0 == 0 {
                e.0 = code;
                // A 16-bit count that wraps, as upstream's.
                e.1 = e.1.wrapping_add(1);
                return;
            }
        }
    }
}

/// The fallbacks of both sides.
#[derive(Clone, Copy)]
pub(crate) struct FallbackReasons {
    /// We accepted.
    pub(crate) server: ReasonCounts,
    /// We connected.
    pub(crate) client: ReasonCounts,
}

/// The counters of one network namespace.
#[pin_data]
pub(crate) struct NetStats {
    pub(crate) client: SideStats,
    pub(crate) server: SideStats,
    /// Peers found to echo the SMC option without speaking CLC.
    pub(crate) non_clc_peers: AtomicU64,
    #[pin]
    fallbacks: SpinLockBh<FallbackReasons>,
}

/// Whether new sockets of `net` start with `SMC_LIMIT_HS` on: the sysctl
/// `net.smc.limit_smc_hs`, which the netlink commands set too.
pub(crate) fn limit_handshakes(net: &Net) -> bool {
    crate::sysctl::limit_smc_hs(net)
}

/// Sets the `SMC_LIMIT_HS` default of new sockets of `net`
/// (`SMC_NETLINK_ENABLE/DISABLE_HS_LIMITATION`).
pub(crate) fn set_limit_handshakes(net: &Net, on: bool) {
    crate::sysctl::set_limit_smc_hs(net, on)
}

/// A copy of `net`'s fallback counts.
pub(crate) fn fallbacks(net: &Net) -> Option<FallbackReasons> {
    crate::sys::pernet::with::<NetStats, _>(net, |s| *s.fallbacks.lock())
}

/// `net`'s handshake errors, client then server.
pub(crate) fn handshake_errors(net: &Net) -> (u64, u64) {
    crate::sys::pernet::with::<NetStats, _>(net, |s| {
        (
            s.client.handshake_errors.load(Ordering::Relaxed),
            s.server.handshake_errors.load(Ordering::Relaxed),
        )
    })
    .unwrap_or((0, 0))
}

/// `net`'s v2 connections over `tech`, client then server.
pub(crate) fn v2_connections(net: &Net, tech: Tech) -> (u64, u64) {
    crate::sys::pernet::with::<NetStats, _>(net, |s| {
        let of = |side: &SideStats| match tech {
            Tech::Smcr => side.smcr_v2.load(Ordering::Relaxed),
            Tech::Smcd => side.smcd_v2.load(Ordering::Relaxed),
        };
        (of(&s.client), of(&s.server))
    })
    .unwrap_or((0, 0))
}

static NET_STATS_ID: AtomicU32 = AtomicU32::new(0);

impl PernetData for NetStats {
    fn init() -> impl PinInit<Self, Error> {
        try_pin_init!(NetStats {
            client: SideStats::default(),
            server: SideStats::default(),
            non_clc_peers: AtomicU64::new(0),
            fallbacks <- new_spinlock_bh!(
                FallbackReasons {
                    server: ReasonCounts::new(),
                    client: ReasonCounts::new(),
                },
                "NetStats::fallbacks"
            ),
        }? Error)
    }

    fn id() -> &'static AtomicU32 {
        &NET_STATS_ID
    }
}

/// What can be counted.
#[derive(Clone, Copy, Debug)]
pub(crate) enum Event {
    /// A connection completed its TCP handshake.
    Connection,
    /// A connection fell back to TCP.
    Fallback(DeclineReason),
    /// A connection agreed on SMC-Rv2.
    SmcrV2,
    /// A connection agreed on SMC-Dv2.
    SmcdV2,
    /// A CLC handshake failed.
    HandshakeError,
    /// A peer echoed the SMC option without speaking CLC.
    NonClcPeer,
}

/// Counts `event` on `side` in `net`.
pub(crate) fn count(net: &Net, side: Side, event: Event) {
    let side_kind = side;
    crate::sys::pernet::with::<NetStats, _>(net, |s| {
        let side = match side {
            Side::Client => &s.client,
            Side::Server => &s.server,
        };
        let counter = match event {
            Event::Connection => &side.connections,
            Event::Fallback(reason) => {
                let mut f = s.fallbacks.lock();
                match side_kind {
                    Side::Client => f.client.add(reason.code()),
                    Side::Server => f.server.add(reason.code()),
                }
                return;
            }
            Event::SmcrV2 => &side.smcr_v2,
            Event::SmcdV2 => &side.smcd_v2,
            Event::HandshakeError => &side.handshake_errors,
            Event::NonClcPeer => &s.non_clc_peers,
        };
        counter.fetch_add(1, Ordering::Relaxed);
    });
}
