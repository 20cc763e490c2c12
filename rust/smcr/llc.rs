// SPDX-License-Identifier: GPL-2.0

//! LLC messages on a link: the CONFIRM LINK handshake that makes a new
//! link usable, and the answers to what the peer sends, as upstream gives
//! them for a link group that keeps a single link (see
//! [`OneLink`](crate::wire::llc::OneLink)): TEST LINK echoed, rkeys
//! confirmed, ADD LINK refused, DELETE LINK taking the link down or
//! answered for a link id that is not ours. Malformed or unknown messages
//! are dropped (and counted, see [`rejects`](super::rejects)) and the link
//! stays up, as upstream does.

use super::link::{Link, LinkState};
use super::rejects::{self, Reject};
use crate::sys::errno::{EPROTO, ETIMEDOUT};
use crate::sys::print::smc_dbg;
use crate::wire::llc::{
    self, AddLink, ConfirmLink, DeleteLink, DeleteRkey, EntryList, LlcMessage, LlcVersion, OneLink,
    OneLinkAction, Refusal, ReqAddLink, TestLink, LLC_LEN,
};
use core::sync::atomic::Ordering;
use kernel::prelude::*;

/// Rkeys in the long DELETE RKEY of [`long_delete_rkey`].
const LONG_DELETE_RKEYS: usize = 30;
/// Its length: the 8 bytes before the rkeys, and 4 bytes each.
pub(crate) const LONG_DELETE_RKEY_LEN: usize = 8 + 4 * LONG_DELETE_RKEYS;

/// Takes an LLC message the peer sent (softirq): `msg` is the whole
/// message as it was received.
pub(crate) fn received(link: &Link, msg: &[u8]) {
    let rules = OneLink {
        role: link.role.wire(),
        version: version(link),
        link_num: link.link_num.load(Ordering::Relaxed),
        confirming: link.state() == LinkState::Activating,
    };
    let action = match rules.decide(msg) {
        Ok(a) => a,
        Err(e) => {
            let t = msg.first().copied().unwrap_or(0);
            rejects::count(
                Reject::LlcMalformed,
                format_args!("type {:#04x}, {} bytes: {:?}", t, msg.len(), e),
            );
            return;
        }
    };
    match action {
        OneLinkAction::Nothing => {}
        OneLinkAction::Answer(m) => answer(link, &m),
        OneLinkAction::Refuse(why, m) => {
            let what = match why {
                Refusal::AddLink => Reject::LlcAddLinkRefused,
                Refusal::UnknownLink => Reject::LlcUnknownLink,
                Refusal::OutOfFlow => Reject::LlcOutOfFlow,
            };
            rejects::count(
                what,
                format_args!(
                    "type {:#04x}, {}answered",
                    msg.first().copied().unwrap_or(0),
                    if m.is_some() { "" } else { "not " }
                ),
            );
            if let Some(m) = m {
                answer(link, &m);
            }
        }
        OneLinkAction::ToConfirmation => {
            let mut copy = [0u8; LLC_LEN];
            if let Some(src) = msg.get(..LLC_LEN) {
                copy.copy_from_slice(src);
                link.queue_llc(&copy);
            }
        }
        OneLinkAction::EndLink(m) => {
            smc_dbg!(
                "llc: the peer ends the link (type {:#04x})",
                msg.first().copied().unwrap_or(0)
            );
            if let Some(m) = m {
                answer(link, &m);
            }
            link.link_down();
        }
    }
}

/// Sends `msg` from the receive path: on a free slot now, or on the next
/// one that completes. An answer that cannot go (the link is down, or the
/// peer floods requests) is lost, and the peer's request times out as it
/// would on a lost message.
pub(crate) fn answer(link: &Link, msg: &LlcMessage<'_>) {
    let mut buf = [0u8; LLC_LEN];
    let Ok(n) = msg.encode(&mut buf) else { return };
    let Some(bytes) = buf.get(..n) else { return };
    if !link.answer_llc(bytes) {
        smc_dbg!("llc: an answer found no slot and no room to wait");
    }
}

/// Sends `msg` on `link`, waiting for a slot: 44 bytes from a slot's
/// buffer, a longer SMC-Rv2 message from the link's buffer for long ones.
/// Process context.
pub(crate) fn send(link: &Link, msg: &LlcMessage<'_>) -> Result {
    let r = encode_and_send(link, msg);
    if let Err(e) = r {
        // Most callers have nothing better to do than go on (the flow's
        // wait for an answer then times out): say it here, once for all.
        smc_dbg!(
            "llc: sending {:?}{} on link {} failed ({:?})",
            msg.kind(),
            if msg.is_response() { " response" } else { "" },
            link.idx,
            e
        );
    }
    r
}

fn encode_and_send(link: &Link, msg: &LlcMessage<'_>) -> Result {
    let len = msg.encoded_len();
    if len <= LLC_LEN {
        let mut buf = [0u8; LLC_LEN];
        let n = msg.encode(&mut buf).map_err(|_| EPROTO)?;
        return link.send_llc(buf.get(..n).ok_or(EPROTO)?);
    }
    let mut buf = KVec::from_elem(0u8, len, GFP_KERNEL)?;
    let n = msg.encode(&mut buf).map_err(|_| EPROTO)?;
    link.send_llc_long(buf.get(..n).ok_or(EPROTO)?)
}

/// The LLC version a link group speaks.
pub(crate) fn version(_link: &Link) -> LlcVersion {
    LlcVersion::V2
}

/// Client side of the first link's confirmation: waits for the server's
/// CONFIRM LINK request, checks it names the peer we agreed on in CLC, and
/// answers. Returns the link number the server gave and the server's link
/// user id.
pub(crate) fn client_confirm_link(link: &Link, link_uid: [u8; 4]) -> Result<(u8, [u8; 4])> {
    // Twice the server's wait, as upstream's client does.
    let msg = link
        .wait_llc(
            4000,
            |m| matches!(LlcMessage::parse(m), Ok(LlcMessage::ConfirmLink(c)) if !c.resp),
        )
        .ok_or(ETIMEDOUT)?;
    let Ok(LlcMessage::ConfirmLink(req)) = LlcMessage::parse(&msg) else {
        return Err(EPROTO.into());
    };
    let peer = link.peer();
    if req.sender_qpn != peer.qpn || req.sender_gid != peer.gid || !req.no_rmbe_eyec {
        smc_dbg!("llc: CONFIRM LINK does not match the CLC peer");
        return Err(EPROTO.into());
    }
    let resp = ConfirmLink {
        version: version(link),
        resp: true,
        no_rmbe_eyec: true,
        sender_mac: link.dev.mac,
        sender_gid: link.dev.gid,
        sender_qpn: link.qpn(),
        link_num: req.link_num,
        link_uid,
        max_links: req.max_links,
        max_conns: req.max_conns,
    };
    let mut buf = [0u8; LLC_LEN];
    resp.encode(&mut buf).map_err(|_| EPROTO)?;
    link.send_llc(&buf)?;
    Ok((req.link_num, req.link_uid))
}

/// This side's CONFIRM LINK request for link `link_num` of `link` (one link
/// at most), with link UID `link_uid` and `max_conns` connections.
fn confirm_link_request(
    link: &Link,
    link_num: u8,
    link_uid: [u8; 4],
    max_conns: u8,
) -> ConfirmLink {
    ConfirmLink {
        version: version(link),
        resp: false,
        no_rmbe_eyec: true,
        sender_mac: link.dev.mac,
        sender_gid: link.dev.gid,
        sender_qpn: link.qpn(),
        link_num,
        link_uid,
        max_links: 1,
        max_conns,
    }
}

/// Server side of a new link's confirmation: sends CONFIRM LINK and waits
/// for the client's answer from the peer agreed in CLC. Returns our link
/// user id and the client's.
pub(crate) fn server_confirm_link(link: &Link, max_conns: u8) -> Result<([u8; 4], [u8; 4])> {
    let mut uid = [0u8; 4];
    crate::sys::random::fill(&mut uid);
    let req = confirm_link_request(link, 1, uid, max_conns);
    let mut buf = [0u8; LLC_LEN];
    req.encode(&mut buf).map_err(|_| EPROTO)?;
    link.send_llc(&buf)?;
    let msg = link
        .wait_llc(
            2000,
            |m| matches!(LlcMessage::parse(m), Ok(LlcMessage::ConfirmLink(c)) if c.resp),
        )
        .ok_or(ETIMEDOUT)?;
    let Ok(LlcMessage::ConfirmLink(resp)) = LlcMessage::parse(&msg) else {
        return Err(EPROTO.into());
    };
    let peer = link.peer();
    if resp.sender_qpn != peer.qpn || resp.sender_gid != peer.gid {
        smc_dbg!("llc: CONFIRM LINK answer does not match the CLC peer");
        return Err(EPROTO.into());
    }
    Ok((uid, resp.link_uid))
}

/// Asks the peer whether the link is alive; any message it sends back
/// (its response, or anything else) says so.
pub(crate) fn send_test_link(link: &Link) -> Result {
    let msg = TestLink {
        version: version(link),
        resp: false,
        user_data: [0; 16],
    };
    let mut buf = [0u8; LLC_LEN];
    let n = msg.encode(&mut buf).map_err(|_| EPROTO)?;
    link.send_llc(buf.get(..n).ok_or(EPROTO)?)
}

/// How long the last message of a link waits to be sent (upstream's
/// `SMC_LLC_WAIT_TIME`).
const LAST_SEND_WAIT_MS: u32 = 2000;

/// Tells the peer the link group ends (orderly), best effort; waits until
/// the message left (the caller then destroys the queue pair). Process
/// context.
pub(crate) fn send_delete_all(link: &Link) {
    let msg = DeleteLink {
        version: version(link),
        resp: false,
        all: true,
        orderly: true,
        link_num: 0,
        reason: crate::wire::llc::DEL_PROG_INIT_TERM,
    };
    let mut buf = [0u8; LLC_LEN];
    if msg.encode(&mut buf).is_ok() {
        let _ = link.send_llc_wait(&buf, LAST_SEND_WAIT_MS);
    }
}

/// Malformed LLC messages, for fault injection (see
/// [`inject`](super::inject)): one of a type nobody handles (upstream has
/// no handler for it), one TEST LINK request whose length field is wrong
/// for its version (upstream drops it).
pub(crate) fn malformed(link: &Link, out: &mut [[u8; LLC_LEN]; 2]) {
    let [unknown, bad_length] = out;
    unknown.fill(0);
    let [kind, length, ..] = unknown;
    *kind = 0x0f;
    *length = LLC_LEN as u8;
    let test = TestLink {
        version: version(link),
        resp: false,
        user_data: [0x5a; 16],
    };
    let _ = test.encode(bad_length);
    // Four bytes short: v1 wants exactly 44, v2 at least 44.
    let short = (LLC_LEN - 4) as u16;
    let [_, lo, hi, ..] = bad_length;
    match version(link) {
        LlcVersion::V1 => *lo = short as u8,
        LlcVersion::V2 => [*lo, *hi] = short.to_le_bytes(),
    }
}

/// Link requests a link group with one link refuses, for fault injection
/// (see [`inject`](super::inject)), all valid messages: an ADD LINK
/// request for a second link, a REQ ADD LINK offering our GID, a DELETE
/// LINK of a link id that is not ours, and a CONFIRM LINK after the
/// link's confirmation.
pub(crate) fn link_requests(link: &Link, out: &mut [[u8; LLC_LEN]; 4]) {
    let link_num = link.link_num.load(Ordering::Relaxed);
    let other = link_num.wrapping_add(1).max(1);
    let gids = [link.dev.gid];
    let mut gid_bytes = [0u8; 16];
    let msgs = [
        LlcMessage::AddLink(AddLink {
            version: version(link),
            resp: false,
            reject: false,
            reject_reason: 0,
            sender_mac: link.dev.mac,
            sender_gid: link.dev.gid,
            sender_qpn: link.qpn() ^ 0x80_0000,
            link_num: other,
            qp_mtu: link.mtu(),
            initial_psn: link.psn,
            ext: None,
        }),
        LlcMessage::ReqAddLink(ReqAddLink {
            resp: false,
            gids: EntryList::build(&gids, &mut gid_bytes).unwrap_or(EntryList::empty()),
        }),
        LlcMessage::DeleteLink(DeleteLink {
            version: version(link),
            resp: false,
            all: false,
            orderly: true,
            link_num: other,
            reason: llc::DEL_LOST_PATH,
        }),
        LlcMessage::ConfirmLink(confirm_link_request(link, link_num, [0; 4], 255)),
    ];
    for (buf, msg) in out.iter_mut().zip(msgs.iter()) {
        buf.fill(0);
        let _ = msg.encode(buf);
    }
}

/// A well-formed SMC-Rv2 DELETE RKEY request longer than 48 bytes, for
/// fault injection (see [`inject`](super::inject)): 30 rkeys that name no
/// RMB of ours (the peer answers it; upstream negative, smc_rs positive),
/// in `out`; returns its length.
pub(crate) fn long_delete_rkey(
    link: &Link,
    out: &mut [u8; LONG_DELETE_RKEY_LEN],
) -> Option<usize> {
    let mut keys = [0u32; LONG_DELETE_RKEYS];
    for (i, k) in keys.iter_mut().enumerate() {
        *k = 0x5a5a_0000 | i as u32;
    }
    let mut list = [0u8; 4 * LONG_DELETE_RKEYS];
    let msg = DeleteRkey {
        version: version(link),
        resp: false,
        negative: false,
        retry: false,
        num_rkeys: LONG_DELETE_RKEYS as u8,
        err_mask: 0,
        rkeys: EntryList::build(&keys, &mut list).ok()?,
    };
    msg.encode(out).ok()
}
