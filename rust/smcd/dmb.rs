// SPDX-License-Identifier: GPL-2.0

//! A DMB (direct memory buffer): the receive buffer of an SMC-D
//! connection, registered with the loopback ISM device under a token. The
//! peer attaches it by that token and writes its bytes straight into it
//! (the peer's send buffer *is* this memory: one copy per byte), then
//! signals it with a CDC message, which the device hands to the DMB's
//! owner (the connection) in the order it was sent. Both ends are this
//! module: the message goes as the parsed value, never encoded.
//!
//! Ownership: the memory is an `Arc`, held by the owner's connection and by
//! every peer attached, so it lives as long as either can still write or
//! read it. The owner is held in [`Dmb::owner`] from registration until
//! [`Dmb::disown`]; signals after that are dropped (the connection is
//! gone).
//!
//! Locks (see `Documentation/design.rst`): `owner` is taken first, while
//! queued messages are applied in order (its owner then takes its
//! connection's `shared`); `queue` is a leaf, taken by senders under their
//! own connection's `shared`. Nobody drains a DMB while holding another
//! DMB's `owner`: signals are kicked only with no lock held.

use crate::sys::errno::ENOSPC;
use crate::sys::ib::buf::BufMem;
use crate::sys::sync::{new_spinlock_bh, SpinLockBh};
use crate::wire::cdc::CdcMsg;
use crate::wire::clc::SmcdGid;
use kernel::prelude::*;
use kernel::sync::Arc;

/// Messages queued for a DMB at most: more than the senders of one
/// connection can queue between two drains (each sender drains after it
/// queued).
const QUEUE_LEN: usize = 32;

/// Messages a kick takes from the queue at once.
const KICK_BATCH: usize = 4;

/// Who a DMB's signals are for: its connection.
pub(crate) trait DmbOwner: Send + Sync {
    /// A CDC message for the connection, in the order the peer sent them;
    /// called with the DMB's `owner` lock held, from the sender's context
    /// (process context, no lock of the sender's held).
    fn cdc_arrived(&self, msg: &CdcMsg);
}

/// The SMC-D link group of a connection, as the connection sees it.
pub(crate) trait IsmGroup: Send + Sync {
    /// The connection with `token` is finished (closed, its socket gone,
    /// see [`Conn::finished`](crate::smcr::conn::Conn::finished)): the
    /// group lets it go. Process context.
    fn conn_finished(&self, token: u32);

    /// The group's id as a host word (upstream's `*(u32 *)lgr->id`).
    fn id_word(&self) -> u32;

    /// The peer's ISM GID.
    fn peer_gid(&self) -> SmcdGid;
}

/// CDC messages sent and not yet applied, oldest first.
struct Queue {
    msgs: [CdcMsg; QUEUE_LEN],
    head: usize,
    len: usize,
}

impl Queue {
    fn push(&mut self, msg: &CdcMsg) -> Result {
        if self.len == QUEUE_LEN {
            return Err(ENOSPC.into());
        }
        let at = (self.head + self.len) % QUEUE_LEN;
        if let Some(slot) = self.msgs.get_mut(at) {
            *slot = *msg;
        }
        self.len += 1;
        Ok(())
    }

    /// Moves the oldest messages into `out`, as many as fit; returns how
    /// many.
    fn pop_into(&mut self, out: &mut [CdcMsg]) -> usize {
        let n = self.len.min(out.len());
        for slot in out.iter_mut().take(n) {
            if let Some(m) = self.msgs.get(self.head) {
                *slot = *m;
            }
            self.head = (self.head + 1) % QUEUE_LEN;
        }
        self.len -= n;
        n
    }
}

/// A registered DMB.
#[pin_data]
pub(crate) struct Dmb {
    /// The token peers attach it by (random, never 0).
    pub(crate) token: u64,
    /// Its bytes.
    pub(crate) mem: Arc<BufMem>,
    #[pin]
    queue: SpinLockBh<Queue>,
    /// The connection that reads it; held while signals are applied.
    #[pin]
    owner: SpinLockBh<Option<Arc<dyn DmbOwner>>>,
}

impl Dmb {
    /// A DMB of `size` bytes (a power of two, a page to 4 MiB), zeroed,
    /// with no owner yet. May sleep.
    pub(crate) fn new(token: u64, size: usize) -> Result<Arc<Dmb>> {
        let mem = BufMem::alloc(size)?;
        Arc::pin_init(
            try_pin_init!(Dmb {
                token,
                mem,
                queue <- new_spinlock_bh!(
                    Queue {
                        msgs: [CdcMsg::default(); QUEUE_LEN],
                        head: 0,
                        len: 0,
                    },
                    "Dmb::queue"
                ),
                owner <- new_spinlock_bh!(None, "Dmb::owner"),
            }? Error),
            GFP_KERNEL,
        )
    }

    /// Its size in bytes.
    pub(crate) fn len(&self) -> usize {
        self.mem.len()
    }

    /// Makes `owner` the receiver of the DMB's signals.
    pub(crate) fn own(&self, owner: Arc<dyn DmbOwner>) {
        *self.owner.lock() = Some(owner);
    }

    /// The owner lets go (its connection ended): later signals are
    /// dropped, and the cycle owner -> DMB -> owner ends.
    pub(crate) fn disown(&self) {
        let old = self.owner.lock().take();
        drop(old);
    }

    /// Queues a CDC message for the owner (any context; the sender's
    /// connection lock may be held, so that its messages queue in the
    /// order it numbered them). [`kick`](Self::kick) delivers it.
    /// `ENOSPC` when the queue is full (cannot be while every sender
    /// kicks after it queued).
    pub(crate) fn signal(&self, msg: &CdcMsg) -> Result {
        self.queue.lock().push(msg)
    }

    /// Delivers the queued messages to the owner, oldest first. Called with
    /// no lock held (the owner takes its connection's lock).
    pub(crate) fn kick(&self) {
        let owner = self.owner.lock();
        let mut batch = [CdcMsg::default(); KICK_BATCH];
        loop {
            // A few at a time, one trip to the queue's lock for all of
            // them. A sender that queues after the last trip kicks after
            // this one lets go of `owner`, and applies its message then.
            let n = self.queue.lock().pop_into(&mut batch);
            for msg in batch.iter().take(n) {
                if let Some(o) = owner.as_ref() {
                    o.cdc_arrived(msg);
                }
            }
            if n < KICK_BATCH {
                break;
            }
        }
    }
}
