// SPDX-License-Identifier: GPL-2.0

//! A link's send slots: which are busy and what for, the connections
//! waiting for one, and the LLC answers that found none free.
//!
//! Everything here is plain data under the link's `tx` lock (a spinlock
//! taken in any context); the link wakes and posts, this only keeps
//! account.

use super::slots::MAX_SLOTS;
use crate::wire::llc::LLC_LEN;
use crate::wire::waiters::TokenQueue;

/// Most connections a link group carries (tokens waiting on one link).
pub(crate) const CONNS_PER_LGR: usize = 255;

/// Connections (by token) waiting for a send slot, first come first
/// served, each once. A connection that leaves the link group is taken
/// out, so no more than a link group's connections ever wait and no push
/// is lost (see the wire crate's `waiters`).
pub(super) type SlotWaiters = TokenQueue<CONNS_PER_LGR>;

/// What a send slot was used for, for its completion.
#[derive(Clone, Copy, Default)]
pub(super) struct SlotUse {
    /// The connection whose CDC message the slot carried (0: none).
    pub(super) token: u32,
    /// How many bytes of that connection's stream the message covered.
    pub(super) prod_total: u64,
    /// The message went from the buffer for long messages.
    pub(super) long: bool,
}

/// The send slots: which are busy and what for.
pub(super) struct TxSlots {
    busy: u64,
    /// The slots the link has (its lowest bits).
    pub(super) mask: u64,
    uses: [SlotUse; MAX_SLOTS as usize],
    /// Connections whose data waits for a free slot.
    pub(super) waiters: SlotWaiters,
    /// LLC answers that found no free slot: they go first on the next
    /// slots that complete.
    pub(super) answers: QueuedAnswers,
    /// LLC senders waiting for a slot in process context
    /// (`Link::get_slot`): the slots that come free are theirs before any
    /// connection's. Without it, a busy link's completions handed every
    /// slot to the connections queued for one, and a DELETE LINK found
    /// none in its two seconds.
    pub(super) llc_waiting: u32,
}

impl TxSlots {
    /// No slot busy; `mask` gives the slots there are.
    pub(super) const fn new(mask: u64) -> Self {
        TxSlots {
            busy: 0,
            mask,
            uses: [SlotUse {
                token: 0,
                prod_total: 0,
                long: false,
            }; MAX_SLOTS as usize],
            waiters: SlotWaiters::new(),
            answers: QueuedAnswers::new(),
            llc_waiting: 0,
        }
    }

    /// The free slots, one bit each.
    pub(super) fn free(&self) -> u64 {
        !self.busy & self.mask
    }

    /// Whether `slot` is busy.
    pub(super) fn is_busy(&self, slot: u32) -> bool {
        self.busy & 1u64.checked_shl(slot).unwrap_or(0) != 0
    }

    /// Takes the lowest free slot, if any.
    pub(super) fn take(&mut self) -> Option<u32> {
        let free = self.free();
        if free == 0 {
            return None;
        }
        let slot = free.trailing_zeros();
        self.busy |= 1 << slot;
        if let Some(u) = self.uses.get_mut(slot as usize) {
            *u = SlotUse::default();
        }
        Some(slot)
    }

    /// Whether a free slot is left for a connection's data once every
    /// waiting LLC sender has one.
    pub(super) fn free_for_data(&self) -> bool {
        self.free().count_ones() > self.llc_waiting
    }

    /// Takes the lowest free slot for a connection's data, unless the
    /// waiting LLC senders need it.
    pub(super) fn take_for_data(&mut self) -> Option<u32> {
        if !self.free_for_data() {
            return None;
        }
        self.take()
    }

    /// Frees `slot`; returns what it was used for.
    pub(super) fn release(&mut self, slot: u32) -> SlotUse {
        let used = self.uses.get(slot as usize).copied().unwrap_or_default();
        self.busy &= !1u64.checked_shl(slot).unwrap_or(0);
        used
    }

    /// What `slot` is used for, to be changed.
    pub(super) fn use_of(&mut self, slot: u32) -> Option<&mut SlotUse> {
        self.uses.get_mut(slot as usize)
    }
}

/// How many LLC answers may wait for a send slot. A peer keeps one LLC
/// flow open at a time (upstream's flows), with a TEST LINK beside it: a
/// peer that floods requests loses what does not fit, as on a lost
/// message, and its requests time out.
const ANSWERS_QUEUED: usize = 8;

/// LLC answers waiting for a send slot, first come first served.
pub(super) struct QueuedAnswers {
    msgs: [([u8; LLC_LEN], u8); ANSWERS_QUEUED],
    head: usize,
    len: usize,
}

impl QueuedAnswers {
    const fn new() -> Self {
        QueuedAnswers {
            msgs: [([0; LLC_LEN], 0); ANSWERS_QUEUED],
            head: 0,
            len: 0,
        }
    }

    /// Whether no answer waits.
    pub(super) fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Queues `msg` (at most [`LLC_LEN`] bytes); `false` when full.
    pub(super) fn push(&mut self, msg: &[u8]) -> bool {
        if self.len == ANSWERS_QUEUED || msg.len() > LLC_LEN {
            return false;
        }
        let Some((buf, len)) = self.msgs.get_mut((self.head + self.len) % ANSWERS_QUEUED) else {
            return false;
        };
        let Some(dst) = buf.get_mut(..msg.len()) else {
            return false;
        };
        dst.copy_from_slice(msg);
        *len = msg.len() as u8;
        self.len += 1;
        true
    }

    /// Takes the oldest answer.
    pub(super) fn pop(&mut self) -> Option<([u8; LLC_LEN], u8)> {
        if self.len == 0 {
            return None;
        }
        let msg = self.msgs.get(self.head).copied();
        self.head = (self.head + 1) % ANSWERS_QUEUED;
        self.len -= 1;
        msg
    }
}
