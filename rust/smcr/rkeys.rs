// SPDX-License-Identifier: GPL-2.0

//! What the peer knows of our RMBs beyond the CLC messages: the keys of
//! an RMB made while the group has more links (CONFIRM RKEY,
//! `smc_llc_do_confirm_rkey`), and an RMB's row in its key table given
//! back when the group lets the RMB go while it lives (DELETE RKEY,
//! `smc_llc_do_delete_rkey`).
//!
//! Upstream deletes an RMB's keys whenever its connection ends and
//! confirms them again when the buffer is used next; here an RMB of an
//! ended connection keeps its keys in the group's pool for the next
//! connection of its size (no LLC exchange per connection). The peer's
//! table has a row per RMB it knows, as many as the group may have
//! connections: when a new RMB is made while the pool holds only buffers
//! of other sizes, one of them is let go, its row deleted at the peer
//! first ([`let_go`]), so the group keeps room for its connections
//! without a second link group. A buffer of a failed handshake pushed
//! out of the retired ones ([`retire`]) gives its row back the same way.
//! Each exchange is a local flow of its own: process context, not under
//! `lgr.conf`, not inside another flow of the group.

use super::bufs::LgrBuf;
use super::flows::WAIT_MS;
use super::lgr::{BufferPair, LinkGroup};
use super::link::LinkState;
use super::llc;
use crate::sys::errno::{ENOLINK, EPROTO, ETIMEDOUT};
use crate::sys::print::smc_dbg;
use crate::wire::llc::{
    ConfirmRkey, DeleteRkey, EntryList, FlowType, LinkRkey, LlcMessage, CONFIRM_RKEY_OTHERS,
    LLC_LEN,
};
use core::sync::atomic::Ordering;
use kernel::prelude::*;

/// How long an RKEY flow waits for the flows before it: handshakes that
/// come together queue here, one exchange each (upstream waits ten times
/// `SMC_LLC_WAIT_TIME` too).
const INITIATE_MS: u32 = 10 * WAIT_MS;

/// Runs `f` as a local RKEY flow of the group (waiting for another flow
/// to end first).
fn in_flow(lgr: &LinkGroup, f: impl FnOnce() -> Result) -> Result {
    if !lgr.flows.initiate_wait(FlowType::Rkey, INITIATE_MS) {
        return Err(ETIMEDOUT.into());
    }
    let r = f();
    lgr.stop_flow();
    r
}

/// Sends `msg` on the group's main link and waits for the peer's answer
/// of the same kind, into `answer`.
fn exchange(lgr: &LinkGroup, msg: &LlcMessage<'_>, answer: &mut [u8; LLC_LEN]) -> Result {
    llc::send(&lgr.link(), msg)?;
    let kind = msg.kind();
    let is_answer = |m: &LlcMessage<'_>| m.kind() == kind && m.is_response();
    lgr.flows
        .wait(WAIT_MS, answer, is_answer)
        .ok_or(ETIMEDOUT)?;
    Ok(())
}

/// Tells the peer a new RMB's keys on every link before the CLC message
/// that names it.
pub(crate) fn confirm_rkey(lgr: &LinkGroup, rmb: &LgrBuf) -> Result {
    in_flow(lgr, || {
        let via = lgr.link();
        let (rkey, vaddr) = rmb.rkey(via.idx).ok_or(ENOLINK)?;
        let mut others = [LinkRkey::default(); CONFIRM_RKEY_OTHERS];
        let mut n = 0u8;
        for l in lgr.links().iter().flatten() {
            if l.idx == via.idx || l.state() != LinkState::Active {
                continue;
            }
            let Some((k, a)) = rmb.rkey(l.idx) else {
                continue;
            };
            if let Some(o) = others.get_mut(usize::from(n)) {
                *o = LinkRkey {
                    link_id: l.link_num.load(Ordering::Relaxed),
                    rkey: k,
                    vaddr: a,
                };
                n += 1;
            }
        }
        let msg = ConfirmRkey {
            version: llc::version(&via),
            resp: false,
            negative: false,
            retry: false,
            num_rkeys: n,
            rkey,
            vaddr,
            others,
        };
        let mut answer = [0u8; LLC_LEN];
        exchange(lgr, &LlcMessage::ConfirmRkey(msg), &mut answer)?;
        match LlcMessage::parse(&answer) {
            Ok(LlcMessage::ConfirmRkey(c)) if !c.negative => Ok(()),
            _ => Err(EPROTO.into()),
        }
    })
}

/// Deletes an RMB's row in the peer's key table: one DELETE RKEY with its
/// key on the main link (the peer finds the row by the key on the link
/// the request comes on and clears it for every link), answered. A
/// negative answer means the peer had no such row: it is gone either way.
pub(crate) fn delete_rkey(lgr: &LinkGroup, rmb: &LgrBuf) -> Result {
    in_flow(lgr, || {
        let via = lgr.link();
        let (rkey, _) = rmb.rkey(via.idx).ok_or(ENOLINK)?;
        let mut list = [0u8; 4];
        let msg = DeleteRkey {
            version: llc::version(&via),
            resp: false,
            negative: false,
            retry: false,
            num_rkeys: 1,
            err_mask: 0,
            rkeys: EntryList::build(&[rkey], &mut list).map_err(|_| EPROTO)?,
        };
        let mut answer = [0u8; LLC_LEN];
        exchange(lgr, &LlcMessage::DeleteRkey(msg), &mut answer)?;
        match LlcMessage::parse(&answer) {
            Ok(LlcMessage::DeleteRkey(d)) => {
                if d.negative {
                    smc_dbg!("smcr: the peer knew no row of rkey {:#x}", rkey);
                }
                Ok(())
            }
            _ => Err(EPROTO.into()),
        }
    })
}

/// Lets a pooled pair go while the group lives: its RMB's row at the peer
/// deleted first, then the memory (when the last reference drops). A
/// pair whose deletion was not answered stays registered among the
/// retired ones: the peer may still hold its keys.
pub(crate) fn let_go(lgr: &LinkGroup, pair: BufferPair) {
    if let Err(e) = delete_rkey(lgr, &pair.0) {
        smc_dbg!(
            "smcr: DELETE RKEY not answered ({:?}): the buffer is kept",
            e
        );
        retire(lgr, pair);
    }
}

/// Keeps the buffers of a failed handshake registered (see
/// [`LinkGroup::retire_buffers`]); the oldest pair they push out gives its
/// row at the peer back before its memory goes.
pub(crate) fn retire(lgr: &LinkGroup, pair: BufferPair) {
    if let Some(old) = lgr.retire_buffers(pair) {
        // Unanswered, the row stays at the peer; the memory goes anyway.
        let _ = delete_rkey(lgr, &old.0);
    }
}
