// SPDX-License-Identifier: GPL-2.0

//! Per network namespace counters: connections handled, fallbacks by
//! reason, handshake errors, for the client and the server side (what
//! `smcr stats` shows; exported by the diagnostics interfaces).

use crate::sys::pernet::PernetData;
use crate::sys::net::Net;
use crate::wire::clc::DeclineReason;
use core::sync::atomic::{AtomicBool, AtomicU32, AtomicU64, Ordering};

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
    /// Connections that fell back to TCP, by reason.
    pub(crate) fallbacks: [AtomicU64; DeclineReason::COUNT],
    /// CLC handshakes that failed (malformed, truncated or missing answers,
    /// socket errors).
    pub(crate) handshake_errors: AtomicU64,
}

/// The counters of one network namespace.
#[derive(Default)]
pub(crate) struct NetStats {
    pub(crate) client: SideStats,
    pub(crate) server: SideStats,
    /// Peers found to echo the SMC option without speaking CLC.
    pub(crate) non_clc_peers: AtomicU64,
    /// New sockets start with `SMC_LIMIT_HS` on (upstream's
    /// `net->smc.limit_smc_hs`, set by `SMC_NETLINK_ENABLE_HS_LIMITATION`).
    pub(crate) limit_handshakes: AtomicBool,
}

/// Whether new sockets of `net` start with `SMC_LIMIT_HS` on.
pub(crate) fn limit_handshakes(net: &Net) -> bool {
    crate::sys::pernet::with::<NetStats, _>(net, |s| s.limit_handshakes.load(Ordering::Relaxed))
        .unwrap_or(false)
}

/// Sets the `SMC_LIMIT_HS` default of new sockets of `net`.
pub(crate) fn set_limit_handshakes(net: &Net, on: bool) {
    crate::sys::pernet::with::<NetStats, _>(net, |s| s.limit_handshakes.store(on, Ordering::Relaxed));
}

static NET_STATS_ID: AtomicU32 = AtomicU32::new(0);

impl PernetData for NetStats {
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
    /// A CLC handshake failed.
    HandshakeError,
    /// A peer echoed the SMC option without speaking CLC.
    NonClcPeer,
}

/// Counts `event` on `side` in `net`.
pub(crate) fn count(net: &Net, side: Side, event: Event) {
    crate::sys::pernet::with::<NetStats, _>(net, |s| {
        let side = match side {
            Side::Client => &s.client,
            Side::Server => &s.server,
        };
        let counter = match event {
            Event::Connection => &side.connections,
            Event::Fallback(reason) => match side.fallbacks.get(reason.index()) {
                Some(c) => c,
                None => return,
            },
            Event::HandshakeError => &side.handshake_errors,
            Event::NonClcPeer => &s.non_clc_peers,
        };
        counter.fetch_add(1, Ordering::Relaxed);
    });
}
