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
//! gone). When the last holder lets go of the DMB, its memory goes back
//! to the device's [`DmbPool`], if nothing else holds it, for the next
//! DMB of its size (upstream reuses an ended connection's DMB in its link
//! group); no late write of an ended connection reaches a new one, and
//! the bytes it wrote are zeroed before the memory is handed on.
//!
//! Locks (see `Documentation/design.rst`): `owner` is held while queued
//! messages are applied in order (its owner then takes its connection's
//! `shared`); the queue has no lock: senders add to it under their own
//! connection's `shared`, so that it holds their messages in the order they
//! numbered them. Nobody drains a DMB while holding another DMB's `owner`:
//! signals are kicked only with no lock held. The pool's `free` is a
//! leaf, taken in any context.

use crate::sys::errno::ENOSPC;
use crate::sys::ib::buf::BufMem;
use crate::sys::sync::{new_spinlock_bh, SpinLockBh};
use crate::wire::cdc::CdcMsg;
use crate::wire::clc::SmcdGid;
use core::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use kernel::prelude::*;
use kernel::sync::Arc;

/// Messages queued for a DMB at most: more than the senders of one
/// connection can queue between two drains (each sender drains after it
/// queued).
const QUEUE_LEN: usize = 32;

/// Buffers a pool keeps at most: enough for a few threads that open and
/// close connections in turn (both ends of each take one).
const POOL_SLOTS: usize = 16;

/// The memory of DMBs that ended, for new DMBs of the same size.
#[pin_data]
pub(crate) struct DmbPool {
    /// Buffers nobody holds, not yet zeroed.
    #[pin]
    free: SpinLockBh<[Option<Arc<BufMem>>; POOL_SLOTS]>,
}

impl DmbPool {
    pub(crate) fn new() -> Result<Arc<DmbPool>> {
        Arc::pin_init(
            pin_init!(DmbPool {
                free <- new_spinlock_bh!([const { None }; POOL_SLOTS], "DmbPool::free"),
            }),
            GFP_KERNEL,
        )
    }

    /// Zeroed memory of `size` bytes for a new DMB, from the pool when it
    /// has some of that size (true), else allocated. May sleep.
    fn take(&self, size: usize) -> Result<(Arc<BufMem>, bool)> {
        let found = self
            .free
            .lock()
            .iter_mut()
            .find(|m| m.as_ref().is_some_and(|m| m.len() == size))
            .and_then(Option::take);
        match found {
            Some(mem) => {
                // Only this holds it: no copy into it runs.
                mem.clear();
                Ok((mem, true))
            }
            None => Ok((BufMem::alloc(size)?, false)),
        }
    }

    /// Keeps `mem` (a DMB's that ended) when nothing else holds it and a
    /// place is free; else lets go of it. Any context.
    fn give_back(&self, mem: Arc<BufMem>) {
        let Some(alone) = mem.into_unique_or_drop() else {
            return;
        };
        let mut spare = Some(Arc::from(alone));
        if let Some(place) = self.free.lock().iter_mut().find(|m| m.is_none()) {
            *place = spare.take();
        }
        // A buffer without a place is freed here, after the lock.
        drop(spare);
    }
}

/// Gives a DMB's memory back to its pool when the DMB goes: the last field
/// of [`Dmb`], so that the DMB's own reference to the memory is gone by
/// then.
struct Home {
    mem: Option<Arc<BufMem>>,
    pool: Arc<DmbPool>,
}

impl Drop for Home {
    fn drop(&mut self) {
        if let Some(mem) = self.mem.take() {
            self.pool.give_back(mem);
        }
    }
}

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

/// A place in the [`Queue`]: whose turn it is, and a message as words.
struct Place {
    turn: AtomicUsize,
    words: [AtomicU64; 3],
}

/// CDC messages sent and not yet applied, oldest first, without a lock
/// (D. Vyukov's bounded queue): each sender and each taker draws a ticket
/// (`tail`, `head`); the place of ticket `t` (`t` modulo its length) is the
/// sender's to fill while its turn is `t`, then the taker's while it is
/// `t + 1`, and the next round's sender's once the taker set it to
/// `t + QUEUE_LEN`. The turn is stored with release after the words and
/// loaded with acquire before them: a taker reads what its sender wrote.
struct Queue {
    places: [Place; QUEUE_LEN],
    tail: AtomicUsize,
    head: AtomicUsize,
}

impl Queue {
    fn new() -> Self {
        Queue {
            places: core::array::from_fn(|i| Place {
                turn: AtomicUsize::new(i),
                words: Default::default(),
            }),
            tail: AtomicUsize::new(0),
            head: AtomicUsize::new(0),
        }
    }

    fn place(&self, ticket: usize) -> Option<&Place> {
        self.places.get(ticket % QUEUE_LEN)
    }

    /// Queues `msg`; `ENOSPC` when every place holds one.
    fn push(&self, msg: &CdcMsg) -> Result {
        let words = msg.to_words();
        let mut t = self.tail.load(Ordering::Relaxed);
        loop {
            let p = self.place(t).ok_or(ENOSPC)?;
            let turn = p.turn.load(Ordering::Acquire);
            if turn == t {
                match self.tail.compare_exchange_weak(t, t.wrapping_add(1), Ordering::Relaxed, Ordering::Relaxed) {
                    Ok(_) => {
                        for (w, v) in p.words.iter().zip(words) {
                            w.store(v, Ordering::Relaxed);
                        }
                        p.turn.store(t.wrapping_add(1), Ordering::Release);
                        return Ok(());
                    }
                    Err(now) => t = now,
                }
            } else if (turn.wrapping_sub(t) as isize) < 0 {
                // The place still holds the message of the round before.
                return Err(ENOSPC.into());
            } else {
                t = self.tail.load(Ordering::Relaxed);
            }
        }
    }

    /// Takes the oldest message, if any.
    fn pop(&self) -> Option<CdcMsg> {
        let mut t = self.head.load(Ordering::Relaxed);
        loop {
            let p = self.place(t)?;
            let turn = p.turn.load(Ordering::Acquire);
            let filled = t.wrapping_add(1);
            if turn == filled {
                match self.head.compare_exchange_weak(t, filled, Ordering::Relaxed, Ordering::Relaxed) {
                    Ok(_) => {
                        let mut words = [0u64; 3];
                        for (v, w) in words.iter_mut().zip(p.words.iter()) {
                            *v = w.load(Ordering::Relaxed);
                        }
                        p.turn.store(t.wrapping_add(QUEUE_LEN), Ordering::Release);
                        return Some(CdcMsg::from_words(words));
                    }
                    Err(now) => t = now,
                }
            } else if (turn.wrapping_sub(filled) as isize) < 0 {
                // Not filled yet: the queue is empty (or its sender is
                // still writing, and kicks after).
                return None;
            } else {
                t = self.head.load(Ordering::Relaxed);
            }
        }
    }
}

/// A registered DMB.
#[pin_data]
pub(crate) struct Dmb {
    /// The token peers attach it by (random, never 0).
    pub(crate) token: u64,
    /// Its bytes.
    pub(crate) mem: Arc<BufMem>,
    queue: Queue,
    /// The connection that reads it; held while signals are applied.
    #[pin]
    owner: SpinLockBh<Option<Arc<dyn DmbOwner>>>,
    /// Its memory came from the pool.
    pub(crate) reused: bool,
    /// Last (see [`Home`]).
    home: Home,
}

impl Dmb {
    /// A DMB of `size` bytes (a power of two, a page to 4 MiB), zeroed,
    /// with no owner yet, its memory from `pool` or new. May sleep.
    pub(crate) fn new(token: u64, size: usize, pool: &Arc<DmbPool>) -> Result<Arc<Dmb>> {
        let (mem, reused) = pool.take(size)?;
        let home = Home {
            mem: Some(mem.clone()),
            pool: pool.clone(),
        };
        Arc::pin_init(
            try_pin_init!(Dmb {
                token,
                mem,
                queue: Queue::new(),
                owner <- new_spinlock_bh!(None, "Dmb::owner"),
                reused,
                home,
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
        self.queue.push(msg)
    }

    /// Delivers the queued messages to the owner, oldest first. Called with
    /// no lock held (the owner takes its connection's lock). A sender that
    /// queues after the last look kicks after this one lets go of `owner`,
    /// and applies its message then.
    pub(crate) fn kick(&self) {
        let owner = self.owner.lock();
        while let Some(msg) = self.queue.pop() {
            if let Some(o) = owner.as_ref() {
                o.cdc_arrived(&msg);
            }
        }
    }
}
