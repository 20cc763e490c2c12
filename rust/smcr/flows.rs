// SPDX-License-Identifier: GPL-2.0

//! The LLC flows of a link group that may have more than one link
//! (upstream's `llc_flow_lcl`, `llc_flow_rmt` and their queue entries):
//! where each received message goes, by [`route`]. A local flow (adding
//! or deleting a link) runs in process context, in the link group's work
//! item; it starts with a message, or from this side, and waits here for
//! the messages that answer it. A remote flow (the peer's CONFIRM RKEY or
//! DELETE RKEY) is answered at once from the receive path. Nothing here
//! calls up: [`Flows::receive`] returns what the link group does next.
//!
//! A link group with one link at most answers by
//! [`OneLink`](crate::wire::llc::OneLink) instead (see [`llc`](super::llc)).

use super::link::{Link, LinkState};
use super::llc;
use super::peerkeys::PeerKeys;
use super::rejects::{self, Reject};
use crate::sys::sync::{new_spinlock_bh, SpinLockBh};
use crate::wire::lgr_links::LINKS_MAX;
use crate::wire::llc::{
    end_local, initiate, route, start_for_peer, work_item_takes, ConfirmRkey, DeleteRkey,
    EntryList, FlowState, FlowType, LlcAction, LlcKind, LlcMessage, LlcVersion, Role, TestLink,
    LLC_HEADER_LEN, LLC_LEN, LLC_V2_MAX_LEN,
};
use kernel::prelude::*;
use kernel::sync::{new_condvar, Arc, CondVar, CondVarTimeoutResult};

/// How long a flow waits for the peer's answer (`SMC_LLC_WAIT_TIME`).
pub(crate) const WAIT_MS: u32 = 2000;

/// What the link group does after a message was taken.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
#[must_use]
pub(crate) enum FlowNext {
    /// Nothing.
    Nothing,
    /// A local flow starts: run the link group's work item.
    RunFlow,
}

/// The state the receive path and the flows share.
struct FlowBox {
    st: FlowState,
    /// The local flow's message: the one it started with, then each it
    /// waits for, whole (up to 8 KiB), and the slot of the link it came on.
    msg: KVec<u8>,
    msg_len: usize,
    msg_link: usize,
    /// The message of a flow that waits for the local one to end
    /// (upstream's delayed event), whole: an SMC-Rv2 ADD LINK carries the
    /// keys of every RMB. `delayed` is its link's slot and its length.
    delayed_msg: KVec<u8>,
    delayed: Option<(usize, usize)>,
    /// The link group ends: no local flow starts any more.
    closing: bool,
}

/// The flows of a link group.
#[pin_data]
pub(crate) struct Flows {
    role: Role,
    #[pin]
    state: SpinLockBh<FlowBox>,
    #[pin]
    wait: CondVar,
}

/// A message the local flow took: its bytes are in the caller's buffer.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Taken {
    /// The flow it started (for a started flow).
    pub(crate) flow: FlowType,
    /// The slot of the link it came on.
    pub(crate) link: usize,
    /// Its length.
    pub(crate) len: usize,
}

impl Flows {
    /// No flow runs. May sleep (allocates the message buffer).
    pub(crate) fn new(role: Role) -> Result<impl PinInit<Self, Error>> {
        let msg = KVec::from_elem(0u8, LLC_V2_MAX_LEN, GFP_KERNEL)?;
        let delayed_msg = KVec::from_elem(0u8, LLC_V2_MAX_LEN, GFP_KERNEL)?;
        Ok(try_pin_init!(Flows {
            role,
            state <- new_spinlock_bh!(
                FlowBox {
                    st: FlowState::default(),
                    msg,
                    msg_len: 0,
                    msg_link: 0,
                    delayed_msg,
                    delayed: None,
                    closing: false,
                },
                "Flows::state"
            ),
            wait <- new_condvar!("Flows::wait"),
        }? Error))
    }

    /// Whether [`receive`](Self::receive) takes `msg` in a group that
    /// keeps one link: the peer's CONFIRM RKEY and DELETE RKEY, which
    /// change its keys in the table as in any group, and the answer a
    /// local flow of ours waits for (such a group runs RKEY flows too).
    /// Softirq.
    pub(crate) fn takes_one_link(&self, msg: &[u8]) -> bool {
        let Ok(parsed) = LlcMessage::parse(msg) else {
            return false;
        };
        let (kind, resp) = (parsed.kind(), parsed.is_response());
        if !resp {
            return matches!(kind, LlcKind::ConfirmRkey | LlcKind::DeleteRkey);
        }
        route(kind, resp, self.role, &self.state.lock().st) == LlcAction::ToLocalFlow
    }

    /// Takes an LLC message that arrived on `link` (softirq), for a link
    /// group whose links are `links`; `keys` is its table of the peer's
    /// keys, which CONFIRM RKEY and DELETE RKEY change.
    pub(crate) fn receive(
        &self,
        link: &Link,
        links: &[Option<Arc<Link>>; LINKS_MAX],
        keys: &PeerKeys,
        msg: &[u8],
    ) -> FlowNext {
        let parsed = match LlcMessage::parse(msg) {
            Ok(m) => m,
            Err(e) => {
                rejects::count(
                    Reject::LlcMalformed,
                    format_args!("type {:#04x}, {} bytes: {:?}", msg.first().copied().unwrap_or(0), msg.len(), e),
                );
                return FlowNext::Nothing;
            }
        };
        let kind = parsed.kind();
        let resp = parsed.is_response();
        // A new link's CONFIRM LINK goes to the one who confirms it.
        if kind == LlcKind::ConfirmLink && link.state() == LinkState::Activating {
            let mut copy = [0u8; LLC_LEN];
            if let Some(src) = msg.get(..LLC_LEN) {
                copy.copy_from_slice(src);
                link.queue_llc(&copy);
            }
            return FlowNext::Nothing;
        }
        // Upstream takes messages on a link being confirmed too (the
        // server's ADD LINK may overtake our own view of the first link).
        if link.state() == LinkState::Down {
            return FlowNext::Nothing;
        }
        // Upstream's client queues an empty ADD LINK to itself to invite
        // the server; one from the peer means nothing.
        if kind == LlcKind::AddLink && !resp && body_empty(msg) {
            return FlowNext::Nothing;
        }
        let mut b = self.state.lock();
        let action = route(kind, resp, self.role, &b.st);
        crate::sys::print::smc_dbg!(
            "llc: {:?}{} on link {} ({} bytes): {:?}",
            kind,
            if resp { " response" } else { "" },
            link.idx,
            msg.len(),
            action
        );
        match action {
            LlcAction::Echo => {
                drop(b);
                if let LlcMessage::TestLink(t) = parsed {
                    llc::answer(link, &LlcMessage::TestLink(TestLink { resp: true, ..t }));
                }
                FlowNext::Nothing
            }
            LlcAction::TestLinkDone => FlowNext::Nothing,
            // Our REQ ADD LINK is answered: by the server's ADD LINK, which
            // the waiting flow then runs, or by its refusal.
            LlcAction::ToLocalFlow | LlcAction::TakeOverLocalFlow | LlcAction::StopLocalFlow => {
                if action == LlcAction::TakeOverLocalFlow {
                    b.st.local = FlowType::AddLink;
                }
                if b.put(link.idx, msg) {
                    b.st.local_has_msg = true;
                    drop(b);
                    self.wait.notify_all();
                }
                FlowNext::Nothing
            }
            LlcAction::StartLocalFlow(t) => {
                if b.closing || !b.put(link.idx, msg) {
                    return FlowNext::Nothing;
                }
                start_for_peer(&mut b.st, t);
                FlowNext::RunFlow
            }
            LlcAction::StartRemoteFlow => {
                drop(b);
                rkey_flow(link, links, keys, &parsed);
                FlowNext::Nothing
            }
            LlcAction::Delay => {
                if let Some(dst) = b.delayed_msg.get_mut(..msg.len()) {
                    copy(dst, msg);
                    b.delayed = Some((link.idx, msg.len()));
                    b.st.delayed_pending = true;
                }
                FlowNext::Nothing
            }
            LlcAction::Drop => {
                drop(b);
                rejects::count(
                    Reject::LlcOutOfFlow,
                    format_args!("type {:#04x}, no flow for it", msg.first().copied().unwrap_or(0)),
                );
                FlowNext::Nothing
            }
        }
    }

    /// Starts a local flow of type `t` from this side, if none runs and
    /// the link group does not end (`smc_llc_flow_initiate`; upstream
    /// waits, this side tries again later).
    pub(crate) fn initiate(&self, t: FlowType) -> bool {
        self.initiate_wait(t, 0)
    }

    /// Starts a local flow of type `t` from this side, waiting up to `ms`
    /// milliseconds for the flows that run to end (`smc_llc_flow_initiate`).
    /// Process context.
    pub(crate) fn initiate_wait(&self, t: FlowType, ms: u32) -> bool {
        let mut left = kernel::time::msecs_to_jiffies(ms) as _;
        let mut b = self.state.lock();
        loop {
            if b.closing {
                return false;
            }
            if crate::wire::llc::may_initiate(t, &b.st) {
                initiate(&mut b.st, t);
                return true;
            }
            if left == 0 {
                return false;
            }
            left = match self.wait.wait_interruptible_timeout(&mut b, left) {
                CondVarTimeoutResult::Woken { jiffies } => jiffies,
                _ => 0,
            };
        }
    }

    /// The message a peer's request started a local flow with (the work
    /// item's turn): copied into `out`, consumed. Never the answer a flow
    /// this side started waits for.
    pub(crate) fn take_started(&self, out: &mut [u8]) -> Option<Taken> {
        let mut b = self.state.lock();
        if !work_item_takes(&b.st) {
            return None;
        }
        let flow = b.st.local;
        let taken = b.take(out)?;
        b.st.local_has_msg = false;
        Some(Taken { flow, ..taken })
    }

    /// Waits up to `ms` milliseconds for a message to the local flow that
    /// `pick` accepts, copied into `out`; others are dropped (as upstream's
    /// `smc_llc_wait` drops what it did not expect). Process context.
    pub(crate) fn wait(&self, ms: u32, out: &mut [u8], pick: impl Fn(&LlcMessage<'_>) -> bool) -> Option<Taken> {
        let mut left = kernel::time::msecs_to_jiffies(ms) as _;
        let mut b = self.state.lock();
        loop {
            if b.st.local_has_msg {
                let t = b.take(out);
                b.st.local_has_msg = false;
                if let Some(t) = t {
                    let ok = out
                        .get(..t.len)
                        .and_then(|m| LlcMessage::parse(m).ok())
                        .is_some_and(|m| pick(&m));
                    if ok {
                        return Some(Taken { flow: b.st.local, ..t });
                    }
                }
            }
            if left == 0 || b.closing {
                return None;
            }
            left = match self.wait.wait_interruptible_timeout(&mut b, left) {
                CondVarTimeoutResult::Woken { jiffies } => jiffies,
                _ => 0,
            };
        }
    }

    /// Ends the local flow. Returns the delayed message, which starts the
    /// next one, as `Some` (the caller runs it).
    pub(crate) fn stop(&self) -> FlowNext {
        let mut b = self.state.lock();
        end_local(&mut b.st);
        // Whoever waits to start a flow may now.
        self.wait.notify_all();
        let Some((link, len)) = b.delayed.take() else {
            return FlowNext::Nothing;
        };
        b.st.delayed_pending = false;
        let t = match b.delayed_msg.get(..len).map(LlcMessage::parse) {
            Some(Ok(parsed)) => FlowType::of_request(parsed.kind()),
            _ => return FlowNext::Nothing,
        };
        if b.closing || t == FlowType::None || !b.promote_delayed(link, len) {
            return FlowNext::Nothing;
        }
        start_for_peer(&mut b.st, t);
        FlowNext::RunFlow
    }

    /// Whether a local flow runs (a link to add waits for its end).
    pub(crate) fn busy(&self) -> bool {
        self.state.lock().st.local != FlowType::None
    }

    /// The link group ends: no flow starts, waiters give up.
    pub(crate) fn close(&self) {
        self.state.lock().closing = true;
        self.wait.notify_all();
    }
}

impl FlowBox {
    /// Keeps `msg` from link slot `link` for the local flow; false when it
    /// does not fit (it is dropped then).
    fn put(&mut self, link: usize, msg: &[u8]) -> bool {
        let Some(dst) = self.msg.get_mut(..msg.len()) else {
            return false;
        };
        dst.copy_from_slice(msg);
        self.msg_len = msg.len();
        self.msg_link = link;
        true
    }

    /// Makes the delayed message of `len` bytes from link slot `link` the
    /// local flow's (see [`put`](Self::put)): the two buffers trade places.
    fn promote_delayed(&mut self, link: usize, len: usize) -> bool {
        if len > self.delayed_msg.len() {
            return false;
        }
        core::mem::swap(&mut self.msg, &mut self.delayed_msg);
        self.msg_len = len;
        self.msg_link = link;
        true
    }

    /// Copies the kept message into `out`.
    fn take(&mut self, out: &mut [u8]) -> Option<Taken> {
        let src = self.msg.get(..self.msg_len)?;
        out.get_mut(..src.len())?.copy_from_slice(src);
        Some(Taken {
            flow: self.st.local,
            link: self.msg_link,
            len: self.msg_len,
        })
    }
}

/// Copies `src` into `dst`, as much as fits (the caller gives both the
/// same length; `copy_from_slice` would keep a length-mismatch panic).
fn copy(dst: &mut [u8], src: &[u8]) {
    for (d, s) in dst.iter_mut().zip(src) {
        *d = *s;
    }
}

/// The body of an ADD LINK is all zero: upstream's local trigger.
fn body_empty(msg: &[u8]) -> bool {
    msg.get(LLC_HEADER_LEN..LLC_LEN)
        .is_some_and(|b| b.iter().all(|x| *x == 0))
}

/// The peer's CONFIRM RKEY or DELETE RKEY, answered at once on the link
/// it came on (`smc_llc_rmt_conf_rkey`, `smc_llc_rmt_delete_rkey`).
fn rkey_flow(link: &Link, links: &[Option<Arc<Link>>; LINKS_MAX], keys: &PeerKeys, msg: &LlcMessage<'_>) {
    match msg {
        LlcMessage::ConfirmRkey(c) => {
            let slot_of = |id: u8| {
                links
                    .iter()
                    .flatten()
                    .find(|l| l.link_num.load(core::sync::atomic::Ordering::Relaxed) == id)
                    .map(|l| l.idx)
            };
            let ok = c.used().is_some_and(|others| {
                keys.add(link.idx, c.rkey, c.vaddr).is_ok_and(|(row, _)| {
                    for o in others {
                        if let Some(idx) = slot_of(o.link_id) {
                            let _ = keys.set_at(row, idx, o.rkey, o.vaddr);
                        }
                    }
                    true
                })
            });
            llc::answer(
                link,
                &LlcMessage::ConfirmRkey(ConfirmRkey {
                    version: llc::version(link),
                    resp: true,
                    negative: !ok,
                    retry: !ok,
                    ..*c
                }),
            );
        }
        LlcMessage::DeleteRkey(d) => {
            let mut unknown = 0u8;
            let mut mask = 0u8;
            for (i, rkey) in d.rkeys.iter().enumerate() {
                if keys.delete(link.idx, rkey).is_err() {
                    unknown = unknown.saturating_add(1);
                    if i < 8 {
                        mask |= 0x80 >> i;
                    }
                }
            }
            let v1 = d.version == LlcVersion::V1;
            llc::answer(
                link,
                &LlcMessage::DeleteRkey(DeleteRkey {
                    version: d.version,
                    resp: true,
                    negative: unknown > 0,
                    retry: false,
                    err_mask: if v1 { mask } else { unknown },
                    rkeys: if v1 { d.rkeys } else { EntryList::empty() },
                    ..*d
                }),
            );
        }
        _ => {}
    }
}
