// SPDX-License-Identifier: GPL-2.0

//! The data path counters of one technology, upstream's `struct
//! smc_stats_tech` beyond the connection counts: bytes and calls sent and
//! received with their sizes, buffers handed to connections with their
//! sizes, the times a buffer was full or too small, and the special
//! socket calls. Counted where upstream's `SMC_STAT_*` macros count; smc_rs
//! speaks SMC-R only, so SMC-D's stay 0.

use super::NetStats;
use crate::sys::net::Net;
use core::sync::atomic::{AtomicU64, Ordering};

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

/// A histogram by size class.
pub(crate) type Histogram = [AtomicU64; SIZE_CLASSES];

/// Buffer events of one direction (upstream's `struct smc_stats_rmbcnt`).
#[derive(Default)]
pub(crate) struct BufferCounts {
    /// A buffer of the link group's pool given to a connection.
    pub(crate) reuse: AtomicU64,
    /// A new buffer made for a connection.
    pub(crate) alloc: AtomicU64,
    /// A new buffer made smaller than asked for.
    pub(crate) downgrade: AtomicU64,
    /// Receive: the RMB was full when the reader came; send: a sender
    /// found the send buffer full.
    pub(crate) full: AtomicU64,
    /// The peer's RMB had no room for what waits to be sent.
    pub(crate) full_peer: AtomicU64,
    /// Receive: the reader asked for less than there was; send: more was
    /// sent at once than the send buffer holds.
    pub(crate) size_small: AtomicU64,
    /// More was sent at once than the peer's RMB holds.
    pub(crate) size_small_peer: AtomicU64,
}

/// The counters of one technology.
#[derive(Default)]
pub(crate) struct TechStats {
    /// Buffers given to connections, by size: send buffers, RMBs.
    pub(crate) tx_bufsize: Histogram,
    pub(crate) rx_bufsize: Histogram,
    /// Payload per call, by size: sent (the length asked for), received.
    pub(crate) tx_payload: Histogram,
    pub(crate) rx_payload: Histogram,
    pub(crate) tx_buf: BufferCounts,
    pub(crate) rx_buf: BufferCounts,
    pub(crate) tx_bytes: AtomicU64,
    pub(crate) rx_bytes: AtomicU64,
    /// `send`/`recv` calls, successful or not.
    pub(crate) tx_calls: AtomicU64,
    pub(crate) rx_calls: AtomicU64,
    /// Bytes of buffers that connections hold now.
    pub(crate) tx_buf_use: AtomicU64,
    pub(crate) rx_buf_use: AtomicU64,
    /// `TCP_CORK` switched off, `TCP_NODELAY` switched on.
    pub(crate) cork: AtomicU64,
    pub(crate) nodelay: AtomicU64,
    /// Urgent data sent or read.
    pub(crate) urgent: AtomicU64,
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

/// A buffer event of [`BufferCounts`] other than getting one.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(crate) enum BufferEvent {
    Full,
    FullPeer,
    SizeSmall,
    SizeSmallPeer,
}

/// A special socket call.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(crate) enum Special {
    Cork,
    Nodelay,
    Urgent,
}

fn add(counter: &AtomicU64, n: u64) {
    counter.fetch_add(n, Ordering::Relaxed);
}

/// Calls `f` with `net`'s SMC-R counters.
fn with_smcr(net: &Net, f: impl FnOnce(&TechStats)) {
    crate::sys::pernet::with::<NetStats, _>(net, |s| f(&s.smcr));
}

impl TechStats {
    fn dir(&self, dir: Dir) -> (&Histogram, &Histogram, &BufferCounts) {
        match dir {
            Dir::Rx => (&self.rx_payload, &self.rx_bufsize, &self.rx_buf),
            Dir::Tx => (&self.tx_payload, &self.tx_bufsize, &self.tx_buf),
        }
    }
}

/// A `send` (`Dir::Tx`: `len` asked for) or `recv` (`len` = what it
/// returned) on an SMC-R connection of `net` that returned `result`: one
/// call, and for a positive result its bytes and size class (upstream's
/// `SMC_STAT_TX_PAYLOAD`, `SMC_STAT_RX_PAYLOAD`).
pub(crate) fn payload(net: &Net, dir: Dir, len: usize, result: Option<usize>) {
    with_smcr(net, |t| {
        let (calls, bytes) = match dir {
            Dir::Rx => (&t.rx_calls, &t.rx_bytes),
            Dir::Tx => (&t.tx_calls, &t.tx_bytes),
        };
        add(calls, 1);
        let Some(n) = result.filter(|n| *n > 0 && len > 0) else {
            return;
        };
        if let Some(c) = t.dir(dir).0.get(size_class(len as u64)) {
            add(c, 1);
        }
        add(bytes, n as u64);
    });
}

/// A connection of `net` got a buffer of `size` bytes.
pub(crate) fn buffer_taken(net: &Net, dir: Dir, size: u32, source: BufferSource) {
    with_smcr(net, |t| {
        let (_, sizes, counts) = t.dir(dir);
        match source {
            BufferSource::Reused => add(&counts.reuse, 1),
            BufferSource::New { downgraded } => {
                if downgraded {
                    add(&counts.downgrade, 1);
                }
                add(&counts.alloc, 1);
            }
        }
        if let Some(c) = sizes.get(size_class(u64::from(size))) {
            add(c, 1);
        }
        let usage = match dir {
            Dir::Rx => &t.rx_buf_use,
            Dir::Tx => &t.tx_buf_use,
        };
        add(usage, u64::from(size));
    });
}

/// A connection of `net` gave back its buffer of `size` bytes.
pub(crate) fn buffer_given_back(net: &Net, dir: Dir, size: u32) {
    with_smcr(net, |t| {
        let usage = match dir {
            Dir::Rx => &t.rx_buf_use,
            Dir::Tx => &t.tx_buf_use,
        };
        // Never below 0, should the counters have been reset in between.
        let _ = usage.fetch_update(Ordering::Relaxed, Ordering::Relaxed, |u| {
            Some(u.saturating_sub(u64::from(size)))
        });
    });
}

/// A buffer of an SMC-R connection of `net` was full or too small.
pub(crate) fn buffer_event(net: &Net, dir: Dir, event: BufferEvent) {
    with_smcr(net, |t| {
        let c = t.dir(dir).2;
        add(
            match event {
                BufferEvent::Full => &c.full,
                BufferEvent::FullPeer => &c.full_peer,
                BufferEvent::SizeSmall => &c.size_small,
                BufferEvent::SizeSmallPeer => &c.size_small_peer,
            },
            1,
        );
    });
}

/// A special socket call on an SMC-R connection of `net`.
pub(crate) fn special(net: &Net, call: Special) {
    with_smcr(net, |t| {
        add(
            match call {
                Special::Cork => &t.cork,
                Special::Nodelay => &t.nodelay,
                Special::Urgent => &t.urgent,
            },
            1,
        );
    });
}

/// A copy of one technology's counters, for the statistics dump.
#[derive(Default, Clone, Copy)]
pub(crate) struct TechSnapshot {
    /// [`BufferCounts`] in upstream's attribute order (see
    /// [`buffer_values`]): send buffers, RMBs.
    pub(crate) tx_buf: [u64; 7],
    pub(crate) rx_buf: [u64; 7],
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

/// `net`'s SMC-R counters (all 0 while the statistics are not registered).
pub(crate) fn smcr_snapshot(net: &Net) -> TechSnapshot {
    let load = |a: &AtomicU64| a.load(Ordering::Relaxed);
    crate::sys::pernet::with::<NetStats, _>(net, |s| {
        let t = &s.smcr;
        TechSnapshot {
            tx_buf: buffer_values(&t.tx_buf),
            rx_buf: buffer_values(&t.rx_buf),
            tx_payload: histogram_values(&t.tx_payload),
            rx_payload: histogram_values(&t.rx_payload),
            tx_bufsize: histogram_values(&t.tx_bufsize),
            rx_bufsize: histogram_values(&t.rx_bufsize),
            rx_bytes: load(&t.rx_bytes),
            tx_bytes: load(&t.tx_bytes),
            rx_buf_use: load(&t.rx_buf_use),
            tx_buf_use: load(&t.tx_buf_use),
            rx_calls: load(&t.rx_calls),
            tx_calls: load(&t.tx_calls),
            cork: load(&t.cork),
            nodelay: load(&t.nodelay),
            urgent: load(&t.urgent),
        }
    })
    .unwrap_or_default()
}

/// The values of [`BufferCounts`] in upstream's attribute order: reuse,
/// size small (peer), size small, full (peer), full, alloc, downgrade.
fn buffer_values(c: &BufferCounts) -> [u64; 7] {
    [
        &c.reuse,
        &c.size_small_peer,
        &c.size_small,
        &c.full_peer,
        &c.full,
        &c.alloc,
        &c.downgrade,
    ]
    .map(|a| a.load(Ordering::Relaxed))
}

/// The values of a histogram, smallest class first.
fn histogram_values(h: &Histogram) -> [u64; SIZE_CLASSES] {
    core::array::from_fn(|i| h.get(i).map_or(0, |a| a.load(Ordering::Relaxed)))
}
