// SPDX-License-Identifier: GPL-2.0

//! How many control message slots a new link gets: `net.smc.smcr_max_send_wr`
//! send slots (each may post up to four work requests: three RDMA WRITEs
//! and the message) and `net.smc.smcr_max_recv_wr` receive slots, at most
//! [`MAX_SLOTS`] each (the sysctls allow up to 2048, as upstream; more than
//! 64 are taken as 64). When the queue pair cannot be made for want of
//! memory, both are halved and it is tried again, until either would drop
//! below the counts links had before the sysctls existed (16 and 48), as
//! upstream does.

use crate::sysctl::LgrParams;

/// Most send or receive slots a link has: one bit each in a `u64`, one
/// 64-byte stride each in a page of control message buffers.
pub(crate) const MAX_SLOTS: u32 = 64;
/// Send slots below which halving gives up (upstream's old fixed count).
const TX_FLOOR: u32 = 16;
/// Receive slots below which halving gives up.
const RX_FLOOR: u32 = 48;

/// Send and receive slot counts of a link.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(crate) struct Slots {
    pub(crate) tx: u32,
    pub(crate) rx: u32,
}

impl Slots {
    /// What `params` ask for, within 1..=[`MAX_SLOTS`].
    pub(crate) fn wanted(params: &LgrParams) -> Self {
        Slots {
            tx: params.send_wr.clamp(1, MAX_SLOTS),
            rx: params.recv_wr.clamp(1, MAX_SLOTS),
        }
    }

    /// Half of each, or `None` when that is below what upstream retries
    /// with.
    pub(crate) fn halved(self) -> Option<Self> {
        let next = Slots {
            tx: self.tx / 2,
            rx: self.rx / 2,
        };
        (next.tx >= TX_FLOOR && next.rx >= RX_FLOOR).then_some(next)
    }

    /// One bit per send slot.
    pub(crate) fn tx_mask(self) -> u64 {
        u64::MAX >> (64 - self.tx.clamp(1, MAX_SLOTS))
    }
}
