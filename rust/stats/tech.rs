// SPDX-License-Identifier: GPL-2.0

//! The data path counters of one technology, upstream's `struct
//! smc_stats_tech` beyond the connection counts: bytes and calls sent and
//! received with their sizes, buffers handed to connections with their
//! sizes, the times a buffer was full or too small, and the special
//! socket calls. Counted where upstream's `SMC_STAT_*` macros count, for
//! SMC-R and SMC-D (over the loopback device) apart.

use crate::sys::net::Net;
use crate::sys::pernet::{NetData, PernetData};
use crate::sys::percpu::PerCpuCounters;
use core::sync::atomic::AtomicU32;
use kernel::prelude::*;

/// Size classes of the histograms: 8 KiB, 16 KiB, ... 1 MiB, larger
/// (upstream's `SMC_BUF_MAX`).
pub(crate) const SIZE_CLASSES: usize = 9;

/// The size class of `len` bytes (upstream: `fls64((len - 1) >> 13)`, at
/// most the last).
pub(crate) fn size_class(len: u64) -> usize {
    let units = len.saturating_sub(1) >> 13;
    let class = (u64::BITS - units.leading_zeros()) as usize;
    class.min(SIZE_CLASSES - 1)
}

/// Where each counter lies in the per-CPU block. Histograms take
/// [`SIZE_CLASSES`] counters (smallest class first), buffer events
/// [`BUFFER_EVENTS`] (in upstream's attribute order, see [`BufferEvent`]).
mod at {
    use super::{BUFFER_EVENTS, SIZE_CLASSES};

    /// Buffers given to connections, by size: send buffers, RMBs.
    pub(super) const TX_BUFSIZE: usize = 0;
    pub(super) const RX_BUFSIZE: usize = TX_BUFSIZE + SIZE_CLASSES;
    /// Payload per call, by size: sent (the length asked for), received.
    pub(super) const TX_PAYLOAD: usize = RX_BUFSIZE + SIZE_CLASSES;
    pub(super) const RX_PAYLOAD: usize = TX_PAYLOAD + SIZE_CLASSES;
    /// Buffer events of each direction (upstream's `smc_stats_rmbcnt`).
    pub(super) const TX_BUF: usize = RX_PAYLOAD + SIZE_CLASSES;
    pub(super) const RX_BUF: usize = TX_BUF + BUFFER_EVENTS;
    pub(super) const TX_BYTES: usize = RX_BUF + BUFFER_EVENTS;
    pub(super) const RX_BYTES: usize = TX_BYTES + 1;
    /// `send`/`recv` calls, successful or not.
    pub(super) const TX_CALLS: usize = RX_BYTES + 1;
    pub(super) const RX_CALLS: usize = TX_CALLS + 1;
    /// Bytes of buffers that connections hold now (gauges).
    pub(super) const TX_BUF_USE: usize = RX_CALLS + 1;
    pub(super) const RX_BUF_USE: usize = TX_BUF_USE + 1;
    /// `TCP_CORK` switched off, `TCP_NODELAY` switched on, urgent data
    /// sent or read.
    pub(super) const CORK: usize = RX_BUF_USE + 1;
    pub(super) const NODELAY: usize = CORK + 1;
    pub(super) const URGENT: usize = NODELAY + 1;
    pub(super) const COUNT: usize = URGENT + 1;
}

/// Buffer events per direction (upstream's `struct smc_stats_rmbcnt`).
const BUFFER_EVENTS: usize = 7;

/// The counters of one technology, per CPU: the data path counts on every
/// call, and a counter shared by all CPUs would bounce between them.
#[pin_data]
pub(crate) struct TechStats {
    /// SMC-R's block, then SMC-D's.
    counters: PerCpuCounters<{ 2 * at::COUNT }>,
}

/// The technology a connection uses.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(crate) enum Tech {
    Smcr,
    Smcd,
}

impl Tech {
    /// Where its block of counters starts.
    fn base(self) -> usize {
        match self {
            Tech::Smcr => 0,
            Tech::Smcd => at::COUNT,
        }
    }
}

/// One technology's counters of a namespace.
struct Block<'a> {
    stats: &'a TechStats,
    base: usize,
}

impl Block<'_> {
    fn add(&self, idx: usize, n: u64) {
        self.stats.counters.add(self.base + idx, n);
    }
}

static TECH_STATS_ID: AtomicU32 = AtomicU32::new(0);

/// Each namespace has its own counters (all 0 while not registered).
impl PernetData for TechStats {
    fn init() -> impl PinInit<Self, Error> {
        // May sleep: namespaces are made in process context.
        try_pin_init!(TechStats {
            counters: PerCpuCounters::new()?,
        }? Error)
    }

    fn id() -> &'static AtomicU32 {
        &TECH_STATS_ID
    }
}

impl TechStats {
    /// The first counter of `dir`'s payload histogram, buffer size
    /// histogram and buffer events.
    fn dir(dir: Dir) -> (usize, usize, usize) {
        match dir {
            Dir::Rx => (at::RX_PAYLOAD, at::RX_BUFSIZE, at::RX_BUF),
            Dir::Tx => (at::TX_PAYLOAD, at::TX_BUFSIZE, at::TX_BUF),
        }
    }
}

/// Which way the bytes go.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(crate) enum Dir {
    /// Received: the RMB.
    Rx,
    /// Sent: the send buffer.
    Tx,
}

/// How a connection got its buffer.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(crate) enum BufferSource {
    /// From the link group's pool.
    Reused,
    /// Made now; `downgraded`: smaller than asked for.
    New { downgraded: bool },
}

/// A buffer event other than getting one: the RMB was full when the
/// reader came, or a sender found the send buffer full (`Full`); the
/// peer's RMB had no room for what waits (`FullPeer`); the reader asked for
/// less than there was, or more was sent at once than the send buffer
/// holds (`SizeSmall`); more was sent at once than the peer's RMB holds
/// (`SizeSmallPeer`).
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(crate) enum BufferEvent {
    Full,
    FullPeer,
    SizeSmall,
    SizeSmallPeer,
}

/// Offsets of the buffer events within a direction's block, in upstream's
/// attribute order: reuse, size small (peer), size small, full (peer),
/// full, alloc, downgrade.
const REUSE: usize = 0;
const ALLOC: usize = 5;
const DOWNGRADE: usize = 6;

impl BufferEvent {
    fn offset(self) -> usize {
        match self {
            BufferEvent::SizeSmallPeer => 1,
            BufferEvent::SizeSmall => 2,
            BufferEvent::FullPeer => 3,
            BufferEvent::Full => 4,
        }
    }
}

/// A special socket call.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(crate) enum Special {
    Cork,
    Nodelay,
    Urgent,
}

/// Calls `f` with `net`'s counters of `tech`.
fn with(net: &Net, tech: Tech, f: impl FnOnce(&Block<'_>)) {
    crate::sys::pernet::with::<TechStats, _>(net, |stats| {
        f(&Block {
            stats,
            base: tech.base(),
        })
    });
}

/// One namespace's counters of one technology, found once for a
/// connection's data path, which counts on every call.
pub(crate) struct TechCounters {
    stats: NetData<TechStats>,
    tech: Tech,
}

impl TechCounters {
    /// `net`'s counters of `tech`; `None` while they are not registered.
    pub(crate) fn new(net: &Net, tech: Tech) -> Option<Self> {
        Some(Self {
            stats: NetData::new(net)?,
            tech,
        })
    }

    fn with(&self, f: impl FnOnce(&Block<'_>)) {
        if let Some(stats) = self.stats.get() {
            f(&Block {
                stats,
                base: self.tech.base(),
            });
        }
    }

    /// A `send` (`Dir::Tx`: `len` asked for) or `recv` (`len` = what it
    /// returned) that returned `result`: one call, and for a positive
    /// result its bytes and size class (upstream's `SMC_STAT_TX_PAYLOAD`,
    /// `SMC_STAT_RX_PAYLOAD`).
    pub(crate) fn payload(&self, dir: Dir, len: usize, result: Option<usize>) {
        self.with(|t| {
            let (calls, bytes) = match dir {
                Dir::Rx => (at::RX_CALLS, at::RX_BYTES),
                Dir::Tx => (at::TX_CALLS, at::TX_BYTES),
            };
            t.add(calls, 1);
            let Some(n) = result.filter(|n| *n > 0 && len > 0) else {
                return;
            };
            t.add(TechStats::dir(dir).0 + size_class(len as u64), 1);
            t.add(bytes, n as u64);
        });
    }

    /// A buffer was full or too small.
    pub(crate) fn buffer_event(&self, dir: Dir, event: BufferEvent) {
        self.with(|t| t.add(TechStats::dir(dir).2 + event.offset(), 1));
    }
}

/// A connection of `net` got a buffer of `size` bytes.
pub(crate) fn buffer_taken(net: &Net, tech: Tech, dir: Dir, size: u32, source: BufferSource) {
    with(net, tech, |t| {
        let (_, sizes, events) = TechStats::dir(dir);
        match source {
            BufferSource::Reused => t.add(events + REUSE, 1),
            BufferSource::New { downgraded } => {
                if downgraded {
                    t.add(events + DOWNGRADE, 1);
                }
                t.add(events + ALLOC, 1);
            }
        }
        t.add(sizes + size_class(u64::from(size)), 1);
        t.add(buf_use(dir), u64::from(size));
    });
}

/// The gauge of the bytes of `dir`'s buffers in use.
fn buf_use(dir: Dir) -> usize {
    match dir {
        Dir::Rx => at::RX_BUF_USE,
        Dir::Tx => at::TX_BUF_USE,
    }
}

/// A connection of `net` gave back its buffer of `size` bytes.
pub(crate) fn buffer_given_back(net: &Net, tech: Tech, dir: Dir, size: u32) {
    with(net, tech, |t| t.add(buf_use(dir), u64::from(size).wrapping_neg()));
}

/// A special socket call on a connection of `net` over `tech`.
pub(crate) fn special(net: &Net, tech: Tech, call: Special) {
    with(net, tech, |t| {
        t.add(
            match call {
                Special::Cork => at::CORK,
                Special::Nodelay => at::NODELAY,
                Special::Urgent => at::URGENT,
            },
            1,
        );
    });
}

/// A copy of one technology's counters, for the statistics dump.
#[derive(Default, Clone, Copy)]
pub(crate) struct TechSnapshot {
    /// Buffer events in upstream's attribute order (reuse, size small
    /// (peer), size small, full (peer), full, alloc, downgrade): send
    /// buffers, RMBs.
    pub(crate) tx_buf: [u64; BUFFER_EVENTS],
    pub(crate) rx_buf: [u64; BUFFER_EVENTS],
    pub(crate) tx_payload: [u64; SIZE_CLASSES],
    pub(crate) rx_payload: [u64; SIZE_CLASSES],
    pub(crate) tx_bufsize: [u64; SIZE_CLASSES],
    pub(crate) rx_bufsize: [u64; SIZE_CLASSES],
    pub(crate) rx_bytes: u64,
    pub(crate) tx_bytes: u64,
    pub(crate) rx_buf_use: u64,
    pub(crate) tx_buf_use: u64,
    pub(crate) rx_calls: u64,
    pub(crate) tx_calls: u64,
    pub(crate) cork: u64,
    pub(crate) nodelay: u64,
    pub(crate) urgent: u64,
}

/// `net`'s counters of `tech` (all 0 while the statistics are not
/// registered).
pub(crate) fn snapshot(net: &Net, tech: Tech) -> TechSnapshot {
    let b = tech.base();
    crate::sys::pernet::with::<TechStats, _>(net, |s| {
        let c = &s.counters;
        let block =
            |first: usize| -> [u64; SIZE_CLASSES] { core::array::from_fn(|i| c.sum(b + first + i)) };
        let events =
            |first: usize| -> [u64; BUFFER_EVENTS] { core::array::from_fn(|i| c.sum(b + first + i)) };
        TechSnapshot {
            tx_buf: events(at::TX_BUF),
            rx_buf: events(at::RX_BUF),
            tx_payload: block(at::TX_PAYLOAD),
            rx_payload: block(at::RX_PAYLOAD),
            tx_bufsize: block(at::TX_BUFSIZE),
            rx_bufsize: block(at::RX_BUFSIZE),
            rx_bytes: c.sum(b + at::RX_BYTES),
            tx_bytes: c.sum(b + at::TX_BYTES),
            rx_buf_use: c.sum_signed(b + at::RX_BUF_USE),
            tx_buf_use: c.sum_signed(b + at::TX_BUF_USE),
            rx_calls: c.sum(b + at::RX_CALLS),
            tx_calls: c.sum(b + at::TX_CALLS),
            cork: c.sum(b + at::CORK),
            nodelay: c.sum(b + at::NODELAY),
            urgent: c.sum(b + at::URGENT),
        }
    })
    .unwrap_or_default()
}
