// SPDX-License-Identifier: GPL-2.0

//! LLC messages on a link: the CONFIRM LINK handshake that makes a new
//! link usable, TEST LINK answered at once, DELETE LINK taking the link
//! down. Malformed or unknown messages are dropped (and counted, see
//! [`rejects`](super::rejects)) and the link stays up, as upstream does.

use super::lgr::LinkGroup;
use super::rejects::{self, Reject};
use crate::sys::errno::{EPROTO, ETIMEDOUT};
use crate::sys::print::smc_dbg;
use crate::wire::llc::{
    ConfirmLink, ConfirmRkey, DeleteLink, DeleteRkey, EntryList, LlcError, LlcMessage, LlcVersion,
    TestLink, LLC_LEN,
};

/// Rkeys in the long DELETE RKEY of [`long_delete_rkey`].
const LONG_DELETE_RKEYS: usize = 30;
/// Its length: the 8 bytes before the rkeys, and 4 bytes each.
pub(crate) const LONG_DELETE_RKEY_LEN: usize = 8 + 4 * LONG_DELETE_RKEYS;
use kernel::prelude::*;

/// Takes an LLC message the peer sent (softirq). `msg` holds the first
/// bytes, `len` is how long the message was on the wire.
pub(crate) fn received(lgr: &LinkGroup, msg: &[u8], len: usize) {
    let parsed = match LlcMessage::parse(msg) {
        Ok(m) => m,
        Err(e) => {
            let t = msg.first().copied().unwrap_or(0);
            rejects::count(
                Reject::LlcMalformed,
                format_args!("type {:#04x}, {} bytes: {:?}", t, len, e),
            );
            return;
        }
    };
    match parsed {
        LlcMessage::ConfirmLink(_) => {
            let mut copy = [0u8; LLC_LEN];
            if let Some(src) = msg.get(..LLC_LEN) {
                copy.copy_from_slice(src);
                lgr.queue_llc(&copy);
            }
        }
        LlcMessage::TestLink(t) if !t.resp => {
            let reply = TestLink {
                version: t.version,
                resp: true,
                user_data: t.user_data,
            };
            answer(lgr, |buf| reply.encode(buf));
        }
        // One link: the peer's new or deleted RMBs need no rkeys for other
        // links of ours, so every request is confirmed as it came.
        LlcMessage::ConfirmRkey(c) if !c.resp => {
            answer(lgr, |buf| ConfirmRkey { resp: true, ..c }.encode(buf));
        }
        LlcMessage::DeleteRkey(d) if !d.resp => {
            let resp = DeleteRkey {
                resp: true,
                negative: false,
                retry: false,
                err_mask: 0,
                rkeys: match d.version {
                    LlcVersion::V1 => d.rkeys,
                    LlcVersion::V2 => EntryList::from_wire(&[]).unwrap_or(d.rkeys),
                },
                ..d
            };
            answer(lgr, |buf| resp.encode(buf));
        }
        LlcMessage::DeleteLink(d) if !d.resp => {
            smc_dbg!("llc: peer deletes the link (reason {:#x})", d.reason);
            lgr.link_down();
        }
        other => {
            smc_dbg!("llc: {:?} not handled", other.kind());
        }
    }
}

/// Sends a response from the receive path if a slot is free now; a
/// response that cannot go is lost, and the peer's request times out as
/// it would on a lost message.
fn answer(lgr: &LinkGroup, encode: impl FnOnce(&mut [u8]) -> Result<usize, LlcError>) {
    let mut buf = [0u8; LLC_LEN];
    let Ok(n) = encode(&mut buf) else { return };
    let Some(msg) = buf.get(..n) else { return };
    if let Ok(slot) = lgr.try_get_slot() {
        if lgr.post_msg(slot, msg).is_err() {
            lgr.put_slot(slot);
        }
    }
}

/// The LLC version a link group speaks.
pub(crate) fn version(_lgr: &LinkGroup) -> LlcVersion {
    LlcVersion::V2
}

/// Client side of the first link's confirmation: waits for the server's
/// CONFIRM LINK request, checks it names the peer we agreed on in CLC, and
/// answers. Returns the link number the server gave.
pub(crate) fn client_confirm_link(lgr: &LinkGroup, link_uid: [u8; 4]) -> Result<u8> {
    // Twice the server's wait, as upstream's client does.
    let msg = lgr
        .wait_llc(
            4000,
            |m| matches!(LlcMessage::parse(m), Ok(LlcMessage::ConfirmLink(c)) if !c.resp),
        )
        .ok_or(ETIMEDOUT)?;
    let Ok(LlcMessage::ConfirmLink(req)) = LlcMessage::parse(&msg) else {
        return Err(EPROTO.into());
    };
    let peer = lgr.peer();
    if req.sender_qpn != peer.qpn || req.sender_gid != peer.gid || !req.no_rmbe_eyec {
        smc_dbg!("llc: CONFIRM LINK does not match the CLC peer");
        return Err(EPROTO.into());
    }
    let resp = ConfirmLink {
        version: version(lgr),
        resp: true,
        no_rmbe_eyec: true,
        sender_mac: lgr.dev.mac,
        sender_gid: lgr.dev.gid,
        sender_qpn: lgr.qpn(),
        link_num: req.link_num,
        link_uid,
        max_links: req.max_links,
        max_conns: req.max_conns,
    };
    let mut buf = [0u8; LLC_LEN];
    resp.encode(&mut buf).map_err(|_| EPROTO)?;
    lgr.send_llc(&buf)?;
    lgr.record_link_uids(link_uid, req.link_uid);
    Ok(req.link_num)
}

/// Server side of a new link's confirmation: sends CONFIRM LINK and waits
/// for the client's answer from the peer agreed in CLC.
pub(crate) fn server_confirm_link(lgr: &LinkGroup, max_conns: u8) -> Result {
    let mut uid = [0u8; 4];
    crate::sys::random::fill(&mut uid);
    let req = ConfirmLink {
        version: version(lgr),
        resp: false,
        no_rmbe_eyec: true,
        sender_mac: lgr.dev.mac,
        sender_gid: lgr.dev.gid,
        sender_qpn: lgr.qpn(),
        link_num: 1,
        link_uid: uid,
        max_links: 1,
        max_conns,
    };
    let mut buf = [0u8; LLC_LEN];
    req.encode(&mut buf).map_err(|_| EPROTO)?;
    lgr.send_llc(&buf)?;
    let msg = lgr
        .wait_llc(
            2000,
            |m| matches!(LlcMessage::parse(m), Ok(LlcMessage::ConfirmLink(c)) if c.resp),
        )
        .ok_or(ETIMEDOUT)?;
    let Ok(LlcMessage::ConfirmLink(resp)) = LlcMessage::parse(&msg) else {
        return Err(EPROTO.into());
    };
    let peer = lgr.peer();
    if resp.sender_qpn != peer.qpn || resp.sender_gid != peer.gid {
        smc_dbg!("llc: CONFIRM LINK answer does not match the CLC peer");
        return Err(EPROTO.into());
    }
    lgr.record_link_uids(uid, resp.link_uid);
    Ok(())
}

/// Asks the peer whether the link is alive; any message it sends back
/// (its response, or anything else) says so.
pub(crate) fn send_test_link(lgr: &LinkGroup) -> Result {
    let msg = TestLink {
        version: version(lgr),
        resp: false,
        user_data: [0; 16],
    };
    let mut buf = [0u8; LLC_LEN];
    let n = msg.encode(&mut buf).map_err(|_| EPROTO)?;
    lgr.send_llc(buf.get(..n).ok_or(EPROTO)?)
}

/// How long the last message of a link waits to be sent (upstream's
/// `SMC_LLC_WAIT_TIME`).
const LAST_SEND_WAIT_MS: u32 = 2000;

/// Tells the peer the link group ends (orderly), best effort; waits until
/// the message left (the caller then destroys the queue pair). Process
/// context.
pub(crate) fn send_delete_all(lgr: &LinkGroup) {
    let msg = DeleteLink {
        version: version(lgr),
        resp: false,
        all: true,
        orderly: true,
        link_num: 0,
        reason: crate::wire::llc::DEL_PROG_INIT_TERM,
    };
    let mut buf = [0u8; LLC_LEN];
    if msg.encode(&mut buf).is_ok() {
        let _ = lgr.send_llc_wait(&buf, LAST_SEND_WAIT_MS);
    }
}

/// Malformed LLC messages, for fault injection (see
/// [`inject`](super::inject)): one of a type nobody handles (upstream has
/// no handler for it), one TEST LINK request whose length field is wrong
/// for its version (upstream drops it).
pub(crate) fn malformed(lgr: &LinkGroup, out: &mut [[u8; LLC_LEN]; 2]) {
    let [unknown, bad_length] = out;
    unknown.fill(0);
    let [kind, length, ..] = unknown;
    *kind = 0x0f;
    *length = LLC_LEN as u8;
    let test = TestLink {
        version: version(lgr),
        resp: false,
        user_data: [0x5a; 16],
    };
    let _ = test.encode(bad_length);
    // Four bytes short: v1 wants exactly 44, v2 at least 44.
    let short = (LLC_LEN - 4) as u16;
    let [_, lo, hi, ..] = bad_length;
    match version(lgr) {
        LlcVersion::V1 => *lo = short as u8,
        LlcVersion::V2 => [*lo, *hi] = short.to_le_bytes(),
    }
}

/// A well-formed SMC-Rv2 DELETE RKEY request longer than 48 bytes, for
/// fault injection (see [`inject`](super::inject)): 30 rkeys that name no
/// RMB of ours (the peer answers it; upstream negative, smc_rs positive),
/// in `out`; returns its length.
pub(crate) fn long_delete_rkey(
    lgr: &LinkGroup,
    out: &mut [u8; LONG_DELETE_RKEY_LEN],
) -> Option<usize> {
    let mut keys = [0u32; LONG_DELETE_RKEYS];
    for (i, k) in keys.iter_mut().enumerate() {
        *k = 0x5a5a_0000 | i as u32;
    }
    let mut list = [0u8; 4 * LONG_DELETE_RKEYS];
    let msg = DeleteRkey {
        version: version(lgr),
        resp: false,
        negative: false,
        retry: false,
        num_rkeys: LONG_DELETE_RKEYS as u8,
        err_mask: 0,
        rkeys: EntryList::build(&keys, &mut list).ok()?,
    };
    msg.encode(out).ok()
}
