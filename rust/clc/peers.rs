// SPDX-License-Identifier: GPL-2.0

//! What a client remembers of the peers it offered SMC to: those that
//! echoed the SMC TCP option without speaking CLC (a middlebox, or a stack
//! that reflects unknown options: connections to them skip SMC for a
//! while), and those that answered in CLC (a later silence of theirs is a
//! busy server, not a missing CLC: it does not make them the former).

use crate::sys::args::SockAddr;
use crate::sys::net::Net;
use core::sync::atomic::{AtomicU64, Ordering};
use kernel::time::Ktime;

/// Peers (by address, per network namespace) remembered for a while.
///
/// A small lock-free table: each slot holds a 32-bit hash of namespace and
/// address and the second until which the entry holds. A collision can only
/// make a connection skip SMC needlessly (or offer it once more), never
/// break it.
pub(crate) struct PeerMemory {
    slots: [AtomicU64; Self::SLOTS],
}

impl PeerMemory {
    const SLOTS: usize = 64;
    /// How long a peer stays remembered.
    const HOLD_SECS: u32 = 600;

    pub(crate) const fn new() -> Self {
        #[allow(clippy::declare_interior_mutable_const)]
        const EMPTY: AtomicU64 = AtomicU64::new(0);
        PeerMemory {
            slots: [EMPTY; Self::SLOTS],
        }
    }

    fn key(net: &Net, addr: &[u8]) -> u32 {
        let fnv = |h: u32, bytes: &[u8]| {
            bytes.iter().fold(h, |h, byte| {
                (h ^ u32::from(*byte)).wrapping_mul(0x0100_0193)
            })
        };
        let h = fnv(0x811c_9dc5, &net.id().to_ne_bytes());
        fnv(h, addr) | 1 // never 0, the empty slot's key
    }

    /// Seconds since boot; 32 bits last 136 years.
    fn now_secs() -> u32 {
        (Ktime::ktime_get().to_ms() / 1000) as u32
    }

    /// Remembers `addr` (again) from now on.
    pub(crate) fn insert(&self, net: &Net, addr: &SockAddr<'_>) {
        let Some(ip) = addr.ip() else { return };
        let key = Self::key(net, ip);
        let until = Self::now_secs().wrapping_add(Self::HOLD_SECS);
        if let Some(slot) = self.slots.get(key as usize % Self::SLOTS) {
            slot.store((u64::from(key) << 32) | u64::from(until), Ordering::Relaxed);
        }
    }

    /// Whether `addr` is remembered.
    pub(crate) fn contains(&self, net: &Net, addr: &SockAddr<'_>) -> bool {
        let Some(ip) = addr.ip() else { return false };
        let key = Self::key(net, ip);
        let Some(slot) = self.slots.get(key as usize % Self::SLOTS) else {
            return false;
        };
        let slot = slot.load(Ordering::Relaxed);
        (slot >> 32) as u32 == key && slot as u32 > Self::now_secs()
    }
}
