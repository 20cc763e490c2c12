// SPDX-License-Identifier: GPL-2.0

//! What a link posts and how its completions come back: send slots taken
//! and given back, control messages, RDMA WRITEs, memory registrations,
//! the LLC requests a handshake waits for, and the end of the link.
//!
//! Locks (see `Documentation/design.rst`): `tx`, `llc`, `qp`, `reg_qp`
//! and `owner` are spinlocks taken with bottom halves off, in any
//! context, never two at once; `reg_lock` and `verbs` are mutexes
//! (process context). The owner is called with none of them held.

use super::txslots::SlotUse;
use super::{Link, LinkQp, LinkState, SLOT_WAIT_MS, TX_BUFS, TX_LONG_BUF, WR_PER_SLOT};
use super::rxbufs::WR_BUF_V2_SIZE;
use super::slots::MAX_SLOTS;
use crate::sys::errno::{EAGAIN, EALREADY, EBUSY, EINVAL, ENOLINK, ETIMEDOUT};
use crate::sys::ib::mr::{MrAccess, RegisteredBuf};
use crate::sys::ib::pd::Pd;
use crate::sys::ib::buf::DmaBuf;
use crate::sys::ib::qp::{DrainedQp, Qp};
use crate::sys::ib::wr::{QpEvent, QpHandler, WcStatus};
use crate::sys::print::{smc_dbg, smc_warn_ratelimited};
use crate::wire::cdc::CDC_MSG_TYPE;
use crate::wire::llc::LLC_LEN;
use core::sync::atomic::Ordering;
use kernel::prelude::*;
use kernel::sync::{Arc, CondVarTimeoutResult};

/// The work request of a slot that carries its message; the writes before
/// it are numbered from 0.
const MSG_WR: u32 = WR_PER_SLOT - 1;

impl Link {
    /// Takes a free send slot, waiting for one up to 10 seconds; `Err`
    /// when the link went down, the time is up or a signal came.
    pub(crate) fn get_slot(&self) -> Result<u32> {
        let mut left = kernel::time::msecs_to_jiffies(SLOT_WAIT_MS) as _;
        let mut tx = self.tx.lock();
        if let Some(slot) = tx.take() {
            return Ok(slot);
        }
        // Waiting: the slots that come free are ours before any
        // connection's (see `TxSlots::llc_waiting`).
        tx.llc_waiting += 1;
        let got = loop {
            if self.state() == LinkState::Down {
                break Err(ENOLINK.into());
            }
            if let Some(slot) = tx.take() {
                break Ok(slot);
            }
            if left == 0 {
                break Err(ETIMEDOUT.into());
            }
            left = match self.tx_wait.wait_interruptible_timeout(&mut tx, left) {
                CondVarTimeoutResult::Timeout => 0,
                CondVarTimeoutResult::Woken { jiffies } => jiffies,
                CondVarTimeoutResult::Signal { .. } => break Err(kernel::error::code::ERESTARTSYS),
            };
        };
        tx.llc_waiting -= 1;
        let stranded = got.is_err() && tx.free() != 0;
        drop(tx);
        if stranded {
            // A slot kept for us that we do not take: the connections
            // waiting for one get it (no completion may come to serve
            // them).
            if let Some(owner) = self.owner() {
                owner.slot_completed(self, 0, 0);
            }
        }
        got
    }

    /// Takes a free send slot for connection `token`'s data, or queues the
    /// connection for the next slot that completes (`None`), which pushes
    /// it then (any context).
    pub(crate) fn get_slot_or_queue(&self, token: u32) -> Result<Option<u32>> {
        if self.state() == LinkState::Down {
            return Err(ENOLINK.into());
        }
        let mut tx = self.tx.lock();
        let slot = tx.take_for_data();
        if slot.is_none() && !tx.waiters.push(token) {
            // Cannot happen while every connection that leaves is
            // forgotten (no more wait than the group has connections).
            drop(tx);
            smc_warn_ratelimited!("link: slot queue full, token {token:#x} not queued");
            return Err(EAGAIN.into());
        }
        Ok(slot)
    }

    /// Takes a free send slot if there is one now (any context).
    pub(crate) fn try_get_slot(&self) -> Result<u32> {
        if self.state() == LinkState::Down {
            return Err(ENOLINK.into());
        }
        self.tx.lock().take().ok_or_else(|| EAGAIN.into())
    }

    /// Gives a slot back without having posted on it.
    pub(crate) fn put_slot(&self, slot: u32) {
        self.tx.lock().release(slot);
        self.tx_wait.notify_one();
    }

    /// Sends an LLC answer (at most [`LLC_LEN`] bytes) from the receive
    /// path, in any context: on a free slot now, or queued for the next
    /// slot that completes, before any connection's data (a peer's LLC
    /// flow waits for it, and upstream's gives up after two seconds).
    /// `false` when it cannot go: the link is down, or the queue is full.
    pub(crate) fn answer_llc(&self, msg: &[u8]) -> bool {
        if self.state() == LinkState::Down {
            return false;
        }
        let mut tx = self.tx.lock();
        let Some(slot) = tx.take() else {
            return tx.answers.push(msg);
        };
        drop(tx);
        if self.post_msg(slot, msg).is_err() {
            self.put_slot(slot);
            return false;
        }
        true
    }

    /// A free slot and the oldest queued LLC answer, while there are both.
    fn next_answer(&self) -> Option<(u32, [u8; LLC_LEN], u8)> {
        if self.state() == LinkState::Down {
            return None;
        }
        let mut tx = self.tx.lock();
        if tx.answers.is_empty() {
            return None;
        }
        let slot = tx.take()?;
        match tx.answers.pop() {
            Some((msg, len)) => Some((slot, msg, len)),
            None => {
                tx.release(slot);
                None
            }
        }
    }

    /// A connection leaves the link: it waits for no send slot.
    pub(crate) fn forget_slot_waiter(&self, token: u32) {
        self.tx.lock().waiters.forget(token);
    }

    /// The next connection waiting for a send slot, while one is free.
    pub(crate) fn next_slot_waiter(&self) -> Option<u32> {
        if self.state() == LinkState::Down {
            return None;
        }
        let mut tx = self.tx.lock();
        if !tx.free_for_data() {
            return None;
        }
        tx.waiters.pop()
    }

    /// Notes that `slot` carries connection `token`'s CDC message covering
    /// its stream up to `prod_total`.
    pub(crate) fn slot_for_conn(&self, slot: u32, token: u32, prod_total: u64) {
        if let Some(u) = self.tx.lock().use_of(slot) {
            *u = SlotUse {
                token,
                prod_total,
                long: false,
            };
        }
    }

    /// Sends a control message (LLC or CDC, at most 48 bytes) on `slot`.
    pub(crate) fn post_msg(&self, slot: u32, msg: &[u8]) -> Result {
        let wr = slot * WR_PER_SLOT + MSG_WR;
        let inline = msg.len() as u32 <= self.max_inline.load(Ordering::Relaxed);
        self.with_rts(|qp| {
            if inline {
                qp.post_send_inline(wr, msg, true, true)
            } else {
                let off = slot as usize * 64;
                qp.local_buf(TX_BUFS).ok_or(ENOLINK)?.write(off, msg)?;
                let sge = qp
                    .local_sge(TX_BUFS, off, msg.len() as u32)
                    .ok_or(ENOLINK)?;
                qp.post_send(wr, sge, true, true)
            }
        })
    }

    /// Sends an LLC message longer than a slot's buffer (at most 8 KiB) on
    /// `slot`, from the link's one buffer for long messages: `EBUSY` while
    /// another long message is on its way.
    pub(crate) fn post_long_msg(&self, slot: u32, msg: &[u8]) -> Result {
        if msg.len() > WR_BUF_V2_SIZE {
            return Err(EINVAL.into());
        }
        if self.long_tx_busy.swap(true, Ordering::AcqRel) {
            return Err(EBUSY.into());
        }
        self.mark_long(slot, true);
        let wr = slot * WR_PER_SLOT + MSG_WR;
        let posted = self.with_rts(|qp| {
            let buf = qp.local_buf(TX_LONG_BUF).ok_or(ENOLINK)?;
            buf.write(0, msg)?;
            buf.sync_for_device();
            let sge = qp
                .local_sge(TX_LONG_BUF, 0, msg.len() as u32)
                .ok_or(ENOLINK)?;
            qp.post_send(wr, sge, true, true)
        });
        if posted.is_err() {
            self.mark_long(slot, false);
            self.long_tx_busy.store(false, Ordering::Release);
        }
        posted
    }

    /// Notes whether `slot` carries a message from the buffer for long
    /// messages.
    fn mark_long(&self, slot: u32, long: bool) {
        if let Some(u) = self.tx.lock().use_of(slot) {
            u.long = long;
        }
    }

    /// RDMA-WRITEs `len` bytes at `offset` of the send buffer `src` to the
    /// peer's `remote_addr` under `rkey`, as part `part` (0 or 1) of slot
    /// `slot`'s message; unsignalled: the message posted after it reports
    /// both, and until then the queue pair keeps `src` alive.
    pub(crate) fn post_write(
        &self,
        slot: u32,
        part: u32,
        src: &Arc<RegisteredBuf>,
        (offset, len): (usize, u32),
        remote_addr: u64,
        rkey: u32,
    ) -> Result {
        let wr = slot * WR_PER_SLOT + part.min(MSG_WR - 1);
        self.with_rts(|qp| qp.post_rdma_write_held(wr, src, offset, len, remote_addr, rkey))
    }

    /// Writes `data` (at most [`Self::max_inline`] bytes) inline into the
    /// peer's memory: the device copies it while posting, looking up no
    /// memory region (upstream writes short pieces this way too).
    pub(crate) fn post_write_inline(
        &self,
        slot: u32,
        part: u32,
        data: &[u8],
        remote_addr: u64,
        rkey: u32,
    ) -> Result {
        let wr = slot * WR_PER_SLOT + part.min(MSG_WR - 1);
        self.with_rts(|qp| qp.post_rdma_write_inline(wr, data, remote_addr, rkey))
    }

    /// The most bytes a request may carry inline on this link.
    pub(crate) fn max_inline(&self) -> usize {
        self.max_inline.load(Ordering::Relaxed) as usize
    }

    /// The protection domain, for memory regions on this link.
    pub(crate) fn pd(&self) -> Result<Arc<Pd>> {
        self.verbs
            .lock()
            .as_ref()
            .map(|v| v.pd.clone())
            .ok_or(ENOLINK.into())
    }

    /// Sends one LLC message, waiting for a slot.
    pub(crate) fn send_llc(&self, msg: &[u8]) -> Result {
        let slot = self.get_slot()?;
        let r = self.post_msg(slot, msg);
        if r.is_err() {
            self.put_slot(slot);
        }
        r
    }

    /// Sends one LLC message longer than 44 bytes (SMC-Rv2), waiting for a
    /// slot.
    pub(crate) fn send_llc_long(&self, msg: &[u8]) -> Result {
        let slot = self.get_slot()?;
        let r = self.post_long_msg(slot, msg);
        if r.is_err() {
            self.put_slot(slot);
        }
        r
    }

    /// Sends one LLC message, waiting for a slot, then waits up to `ms`
    /// milliseconds until the device reports it sent (the peer acknowledged
    /// it): for the last message before the queue pair goes, which would
    /// flush it otherwise. Process context.
    pub(crate) fn send_llc_wait(&self, msg: &[u8], ms: u32) -> Result {
        let slot = self.get_slot()?;
        if let Err(e) = self.post_msg(slot, msg) {
            self.put_slot(slot);
            return Err(e);
        }
        // A completion may wake another waiter instead: look again at least
        // every 10 ms.
        let step = kernel::time::msecs_to_jiffies(10).max(1);
        let mut left = kernel::time::msecs_to_jiffies(ms);
        let mut tx = self.tx.lock();
        while tx.is_busy(slot) {
            if left == 0 || self.state() == LinkState::Down {
                return Err(ETIMEDOUT.into());
            }
            let wait = left.min(step);
            left -= wait;
            let _ = self.tx_wait.wait_interruptible_timeout(&mut tx, wait as _);
        }
        Ok(())
    }

    /// Registers `mr` on the link and waits for the device to confirm.
    /// The caller's place names a region registered twice (see
    /// `post_reg_mr`).
    #[track_caller]
    pub(crate) fn register_mr(&self, mr: &Arc<RegisteredBuf>, access: MrAccess) -> Result {
        let at = core::panic::Location::caller();
        // One registration at a time on the link: the queue pair takes one,
        // and its completion is reported here.
        let _one = self.reg_lock.lock();
        self.llc.lock().reg_done = None;
        // The region the queue pair held before goes here, outside the lock.
        let previous = match self.with_reg_qp(|qp| qp.post_reg_mr(mr, access, at)) {
            // Registered before (and said so): usable as it is.
            Err(e) if e == EALREADY => return Ok(()),
            r => r?,
        };
        drop(previous);
        let mut left = kernel::time::msecs_to_jiffies(SLOT_WAIT_MS) as _;
        let mut inbox = self.llc.lock();
        loop {
            match inbox.reg_done {
                Some(true) => return Ok(()),
                Some(false) => return Err(ENOLINK.into()),
                None => {}
            }
            if left == 0 || self.state() == LinkState::Down {
                return Err(ETIMEDOUT.into());
            }
            left = match self.llc_wait.wait_interruptible_timeout(&mut inbox, left) {
                CondVarTimeoutResult::Woken { jiffies } => jiffies,
                _ => 0,
            };
        }
    }

    /// Waits up to `ms` milliseconds for an LLC request that `pick`
    /// accepts, and takes it.
    pub(crate) fn wait_llc(&self, ms: u32, pick: impl Fn(&[u8]) -> bool) -> Option<[u8; LLC_LEN]> {
        let mut left = kernel::time::msecs_to_jiffies(ms) as _;
        let mut inbox = self.llc.lock();
        loop {
            let found = inbox
                .msgs
                .iter_mut()
                .find(|m| m.as_ref().is_some_and(|b| pick(b)));
            if let Some(m) = found {
                return m.take();
            }
            if left == 0 || self.state() == LinkState::Down {
                return None;
            }
            left = match self.llc_wait.wait_interruptible_timeout(&mut inbox, left) {
                CondVarTimeoutResult::Woken { jiffies } => jiffies,
                _ => 0,
            };
        }
    }

    /// Keeps an LLC request for a waiting handshake.
    pub(crate) fn queue_llc(&self, msg: &[u8; LLC_LEN]) {
        let mut inbox = self.llc.lock();
        if let Some(free) = inbox.msgs.iter_mut().find(|m| m.is_none()) {
            *free = Some(*msg);
        }
        drop(inbox);
        self.llc_wait.notify_all();
    }

    /// Marks the link down: nothing is posted any more, the owner hears of
    /// it (its connections are aborted), waiters wake up. Any context.
    pub(crate) fn link_down(&self) {
        if self.state.swap(LinkState::Down as u8, Ordering::AcqRel) == LinkState::Down as u8 {
            return;
        }
        smc_dbg!("link: down");
        if let Some(owner) = self.owner() {
            owner.link_down(self);
        }
        self.tx_wait.notify_all();
        self.llc_wait.notify_all();
    }

    /// Ends the link: it goes down, the queue pair is drained and
    /// destroyed (which sleeps: nothing posted on it can reach a buffer
    /// afterwards), and the owner is let go. Process context.
    pub(crate) fn shut_down(&self) {
        drop(self.stop());
    }

    /// Stops the link as [`shut_down`](Self::shut_down) does, but hands
    /// the drained queue pair to the caller, who destroys it by dropping
    /// it (which may sleep long: see [`DrainedQp`]), outside its locks.
    /// Process context.
    pub(crate) fn stop(&self) -> Option<DrainedQp<Link>> {
        self.link_down();
        // Nothing but a registration is ever posted on it: destroyed at
        // once, which waits for that.
        let reg = self.reg_qp.lock().take();
        drop(reg.map(Qp::drain));
        let qp = core::mem::replace(&mut *self.qp.lock(), LinkQp::None);
        let drained = match qp {
            LinkQp::None => None,
            LinkQp::Init(q) => Some(q.drain()),
            LinkQp::Rts(q) => Some(q.drain()),
        };
        let owner = self.owner.lock().take();
        drop(owner);
        drained
    }

    /// Gives back the protection domain, the completion queues and the
    /// hold on the device, once the queue pair is gone and the owner gave
    /// back the memory regions made on them. Process context.
    pub(crate) fn release(&self) {
        let verbs = self.verbs.lock().take();
        drop(verbs);
    }
}

impl QpHandler for Link {
    fn send_done(&self, wr: u32, status: WcStatus) {
        let slot = wr / WR_PER_SLOT;
        if slot >= MAX_SLOTS {
            return;
        }
        let used = self.tx.lock().release(slot);
        self.tx_wait.notify_one();
        if used.long {
            self.long_tx_busy.store(false, Ordering::Release);
        }
        if status != WcStatus::Success {
            smc_dbg!("link: send completion error {:?}", status);
            self.link_down();
            return;
        }
        // Queued LLC answers go first: the peer's LLC flow waits for them.
        while let Some((slot, msg, len)) = self.next_answer() {
            let sent = msg
                .get(..len as usize)
                .is_some_and(|m| self.post_msg(slot, m).is_ok());
            if !sent {
                self.put_slot(slot);
                break;
            }
        }
        if let Some(owner) = self.owner() {
            owner.slot_completed(self, used.token, used.prod_total);
        }
    }

    fn recv_done(&self, slot: u32, byte_len: u32, status: WcStatus, bufs: &[DmaBuf]) {
        if status != WcStatus::Success {
            if status != WcStatus::Flushed {
                smc_dbg!("link: receive completion error {:?}", status);
            }
            self.link_down();
            return;
        }
        let len = byte_len as usize;
        let mut msg = [0u8; LLC_LEN];
        // A CDC message and an SMC-Rv1 LLC message are 44 bytes: the slot
        // is posted again as soon as they are copied. A longer LLC message
        // keeps its slot until it was copied whole.
        let is_long = |head: &[u8]| len > LLC_LEN && head.first() != Some(&CDC_MSG_TYPE);
        let (n, held) = self.take_rx(bufs, slot, len, &mut msg, is_long);
        if n == 0 {
            return;
        }
        self.activity.heard();
        let Some(owner) = self.owner() else { return };
        if held {
            self.recv_long(&*owner, bufs, slot, len);
            return;
        }
        let Some(msg) = msg.get(..n) else { return };
        if msg.first() == Some(&CDC_MSG_TYPE) {
            // Also on a link that went down: its queue pair drains what
            // arrived before, and the peer counts it as delivered.
            owner.cdc_received(msg);
        } else {
            owner.llc_received(self, msg);
        }
    }

    fn reg_done(&self, status: WcStatus) {
        if status != WcStatus::Success {
            smc_dbg!("link: memory registration completed with {:?}", status);
        }
        self.llc.lock().reg_done = Some(status == WcStatus::Success);
        self.llc_wait.notify_all();
    }

    fn async_event(&self, ev: QpEvent) {
        smc_dbg!("link: queue pair event {:?}", ev);
        if matches!(ev, QpEvent::Fatal | QpEvent::AccessError) {
            self.link_down();
        }
    }
}
