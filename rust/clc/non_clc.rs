// SPDX-License-Identifier: GPL-2.0

//! The memory of peers that echo the SMC TCP option without speaking CLC
//! (a middlebox, or a stack that reflects unknown options): connections to
//! them skip SMC for a while.

use crate::sys::args::SockAddr;
use crate::sys::net::Net;
use core::sync::atomic::{AtomicU64, Ordering};
use kernel::time::Ktime;

/// Peers (by address, per network namespace) that echoed the SMC option
/// without speaking CLC: connections to them skip SMC for a while.
///
/// A small lock-free table: each slot holds a 32-bit hash of namespace and
/// address and the second until which the entry holds. A collision can only
/// make a connection skip SMC needlessly, never break it.
pub(crate) struct NonClcPeers {
    slots: [AtomicU64; Self::SLOTS],
}

impl NonClcPeers {
    const SLOTS: usize = 64;
    /// How long a peer stays remembered.
    const HOLD_SECS: u32 = 600;

    pub(crate) const fn new() -> Self {
        #[allow(clippy::declare_interior_mutable_const)]
        const EMPTY: AtomicU64 = AtomicU64::new(0);
        NonClcPeers {
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

    /// Remembers `addr` as a peer that does not speak CLC.
    pub(crate) fn insert(&self, net: &Net, addr: &SockAddr<'_>) {
        let Some(ip) = addr.ip() else { return };
        let key = Self::key(net, ip);
        let until = Self::now_secs().wrapping_add(Self::HOLD_SECS);
        if let Some(slot) = self.slots.get(key as usize % Self::SLOTS) {
            slot.store((u64::from(key) << 32) | u64::from(until), Ordering::Relaxed);
        }
    }

    /// Whether `addr` is a remembered peer that does not speak CLC.
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
