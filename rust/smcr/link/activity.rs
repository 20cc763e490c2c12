// SPDX-License-Identifier: GPL-2.0

//! When a link last heard from its peer, tested it, and when its link
//! group became idle: the timestamps the keeper (see
//! [`keepalive`](crate::smcr::keepalive)) decides on. Written from any
//! context, without a lock.

use crate::sys::ticker::jiffies;
use core::sync::atomic::{AtomicU64, Ordering};

/// Jiffies, 0 for never (a real 0 is nudged to 1).
pub(crate) struct Activity {
    /// The last message from the peer.
    pub(crate) heard: AtomicU64,
    /// The TEST LINK request still unanswered.
    pub(crate) tested: AtomicU64,
    /// Since when the link group carries no connection.
    pub(crate) idle_since: AtomicU64,
}

/// A time in jiffies that is never 0.
pub(crate) fn stamp() -> u64 {
    (jiffies() as u64).max(1)
}

impl Activity {
    pub(crate) fn new() -> Self {
        Activity {
            heard: AtomicU64::new(stamp()),
            tested: AtomicU64::new(0),
            idle_since: AtomicU64::new(0),
        }
    }

    /// A message arrived on the link: the peer is alive (any context).
    pub(crate) fn heard(&self) {
        self.heard.store(stamp(), Ordering::Relaxed);
        if self.tested.load(Ordering::Relaxed) != 0 {
            self.tested.store(0, Ordering::Relaxed);
        }
    }

    /// A new connection is about to join: the link group is not idle.
    pub(crate) fn reused(&self) {
        self.idle_since.store(0, Ordering::Relaxed);
    }
}
