// SPDX-License-Identifier: GPL-2.0

//! Fault injection for tests: `/sys/kernel/debug/smc_rs/inject` makes this
//! side send one hostile message, so that a peer's defences can be tested
//! end to end. 0 (the default) is off; a fault is applied to the next CDC
//! message any connection posts, then the knob goes back to 0:
//!
//! | value | what goes out |
//! |---|---|
//! | 1 | the CDC message's producer cursor points past the end of the peer's RMB |
//! | 2 | after the CDC message, a copy for a token the peer does not know |
//! | 3 | after the CDC message, a copy with the previous sequence number |
//! | 4 | the CDC message's consumer cursor is more than a ring ahead of what the peer wrote |
//! | 5 | after the CDC message, on its link, an LLC message of a type nobody handles and a TEST LINK with a wrong length |
//! | 6 | after the CDC message, on its link, the link requests a link group with one link refuses: ADD LINK, REQ ADD LINK, DELETE LINK of another link id, CONFIRM LINK |
//! | 7 | after the CDC message, on its link, an SMC-Rv2 DELETE RKEY request of 30 rkeys (128 bytes: longer than a receive slot's 48-byte buffer) |
//! | 8 | not a CDC message: the next SMC-R CLC Accept or Confirm this side sends names `qp_mtu` 0 |
//! | 9 | not a CDC message: the next SMC-R CLC Confirm this client sends goes out 4 s late (a slow client; a server waits 6 s for it) |
//! | 10 | not a CDC message: the next SMC-R CLC Accept this server sends is held back 7 s (a busy server; a client waits 6 s for it) |
//!
//! 7 is well-formed: it tests that the peer receives long SMC-Rv2 LLC
//! messages whole (see [`rxbufs`](super::link::rxbufs)). Other values do nothing. The copies of 2 and 3 also carry a producer cursor outside any ring: a
//! peer that failed to drop them would abort the connection. A fault that
//! needs a free send slot and finds none waits for the next message.
//!
//! The data path meets it in two calls only: [`cdc_post`] wraps the post of
//! every CDC message (faults 1-7), [`smcr_clc_out`] sees every SMC-R CLC
//! Accept and Confirm before it is sent (8-10). Nothing armed costs one
//! relaxed atomic load.

use super::conn::{cursor_of, Conn};
use super::shared::ConnShared;
use super::link::Link;
use crate::sys::debugfs::DebugfsDir;
use crate::sys::print::smc_dbg;
use crate::wire::cdc::{CdcMsg, CDC_LEN};
use crate::wire::clc::{MsgType, SmcrAcceptConfirm};
use crate::wire::cursor::Cursor;
use crate::wire::llc::LLC_LEN;
use core::sync::atomic::{AtomicU32, Ordering};
use kernel::c_str;

/// The knob, as debugfs shows and sets it.
static KNOB: AtomicU32 = AtomicU32::new(0);

/// A hostile message to send.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
#[repr(u32)]
pub(crate) enum Fault {
    /// The producer cursor points past the end of the peer's RMB.
    ProducerBeyondRmb = 1,
    /// A copy of the message for a token the peer does not know.
    UnknownToken = 2,
    /// A copy of the message with the previous sequence number.
    StaleSeqno = 3,
    /// The consumer cursor claims more than the peer has written.
    ConsumerBeyondSent = 4,
    /// Malformed LLC messages on the link.
    MalformedLlc = 5,
    /// Requests to add a link, to delete another one, to confirm the link
    /// again.
    LinkRequests = 6,
    /// A well-formed LLC message longer than 48 bytes on the link.
    LongLlc = 7,
    /// An SMC-R CLC Accept or Confirm with `qp_mtu` 0.
    ZeroQpMtu = 8,
    /// An SMC-R CLC Confirm held back.
    LateConfirm = 9,
    /// An SMC-R CLC Accept held back.
    LateAccept = 10,
}

/// The fault armed now, if any (one relaxed load).
pub(crate) fn armed() -> Option<Fault> {
    match KNOB.load(Ordering::Relaxed) {
        1 => Some(Fault::ProducerBeyondRmb),
        2 => Some(Fault::UnknownToken),
        3 => Some(Fault::StaleSeqno),
        4 => Some(Fault::ConsumerBeyondSent),
        5 => Some(Fault::MalformedLlc),
        6 => Some(Fault::LinkRequests),
        7 => Some(Fault::LongLlc),
        8 => Some(Fault::ZeroQpMtu),
        9 => Some(Fault::LateConfirm),
        10 => Some(Fault::LateAccept),
        _ => None,
    }
}

/// Disarms `fault`; `false` when another message took it first.
fn take(fault: Fault) -> bool {
    KNOB.compare_exchange(fault as u32, 0, Ordering::AcqRel, Ordering::Relaxed)
        .is_ok()
}

/// The seam of the CLC faults, for the SMC-R CLC Accept or Confirm `msg`
/// about to be sent: fault 8 sets its `qp_mtu` to 0, faults 9 (a Confirm)
/// and 10 (an Accept) say how long to hold it back, in milliseconds (0:
/// send it now). An applied fault is disarmed.
pub(crate) fn smcr_clc_out(msg: &mut SmcrAcceptConfirm) -> u32 {
    let Some(fault) = armed() else { return 0 };
    let hold_ms = match (fault, msg.kind) {
        (Fault::ZeroQpMtu, _) => 0,
        (Fault::LateConfirm, MsgType::Confirm) => 4000,
        (Fault::LateAccept, MsgType::Accept) => 7000,
        _ => return 0,
    };
    if !take(fault) {
        return 0;
    }
    if fault == Fault::ZeroQpMtu {
        msg.qp_mtu = 0;
    }
    smc_dbg!("inject: CLC {:?} sent with {:?}", msg.kind, fault);
    hold_ms
}

/// Creates `smc_rs/` in debugfs with the knob, the counters of refused
/// messages, and the receive layout's test knob and counters; an absent
/// directory (no debugfs) leaves the knobs off.
pub(crate) fn debugfs_files() -> DebugfsDir {
    let dir = DebugfsDir::new(c_str!("smc_rs"));
    if !dir.is_present() {
        smc_dbg!("no debugfs: no fault injection knob");
    }
    dir.add_u32(c_str!("inject"), true, &KNOB);
    super::rejects::add_files(&dir);
    super::link::rxbufs::add_files(&dir);
    dir
}

/// The seam of the CDC faults: `post` sends the CDC message `msg` of
/// `conn` (cursors in `sh`); an armed fault changes the message before it
/// goes or sends more after it. Nothing armed: `post(msg)`.
pub(crate) fn cdc_post(
    msg: &mut CdcMsg,
    conn: &Conn,
    link: &Link,
    sh: &ConnShared,
    post: impl FnOnce(&CdcMsg) -> kernel::error::Result,
) -> kernel::error::Result {
    let Some(fault) = armed() else {
        return post(msg);
    };
    corrupt_cdc(fault, msg, conn, sh);
    post(msg)?;
    after_cdc(fault, link, msg);
    Ok(())
}

/// Applies `fault` to the CDC message `msg` that `conn` is about to post
/// with the cursors in `sh`, if it is one that changes the message itself.
fn corrupt_cdc(fault: Fault, msg: &mut CdcMsg, conn: &Conn, sh: &ConnShared) {
    match fault {
        Fault::ProducerBeyondRmb if sh.peer.size > 0 && take(fault) => {
            // The first byte after the RMB's end.
            msg.prod = Cursor {
                wrap: msg.prod.wrap,
                count: sh.peer.size,
            };
        }
        Fault::ConsumerBeyondSent if take(fault) => {
            // One byte more than a whole ring after what the peer last
            // heard: more than it can have written.
            let size = conn.rmb_size();
            msg.cons = cursor_of(sh.rx_cons_sent.saturating_add(u64::from(size) + 1), size);
        }
        _ => return,
    }
    smc_dbg!(
        "inject: CDC for token {:#x} sent with {:?}",
        msg.token,
        fault
    );
}

/// Sends what `fault` adds after the CDC message `sent` went out on
/// `link`, if it is one that adds messages.
fn after_cdc(fault: Fault, link: &Link, sent: &CdcMsg) {
    let outside = Cursor {
        wrap: sent.prod.wrap,
        count: u32::MAX,
    };
    let copy = match fault {
        Fault::UnknownToken => CdcMsg {
            token: !sent.token,
            prod: outside,
            ..*sent
        },
        Fault::StaleSeqno => CdcMsg {
            seqno: sent.seqno.wrapping_sub(1),
            prod: outside,
            ..*sent
        },
        Fault::MalformedLlc => {
            let mut msgs = [[0u8; LLC_LEN]; 2];
            super::llc::malformed(link, &mut msgs);
            send_extra(link, fault, &msgs);
            return;
        }
        Fault::LinkRequests => {
            let mut msgs = [[0u8; LLC_LEN]; 4];
            super::llc::link_requests(link, &mut msgs);
            send_extra(link, fault, &msgs);
            return;
        }
        Fault::LongLlc => {
            send_long(link, fault);
            return;
        }
        _ => return,
    };
    let mut buf = [0u8; CDC_LEN];
    if copy.encode(&mut buf).is_ok() {
        send_extra(link, fault, &[buf]);
    }
}

/// Posts `msgs` on `link` for `fault`, disarming it once a slot is there.
fn send_extra<const N: usize>(link: &Link, fault: Fault, msgs: &[[u8; N]]) {
    let mut armed = true;
    for msg in msgs {
        let Ok(slot) = link.try_get_slot() else { return };
        if armed {
            if !take(fault) {
                link.put_slot(slot);
                return;
            }
            armed = false;
        }
        if link.post_msg(slot, msg).is_err() {
            link.put_slot(slot);
            return;
        }
    }
    smc_dbg!("inject: {} message(s) sent for {:?}", msgs.len(), fault);
}

/// Posts a long SMC-Rv2 LLC message on `link` for `fault`, disarming it once
/// a slot and the buffer for long messages are there.
fn send_long(link: &Link, fault: Fault) {
    let mut msg = [0u8; super::llc::LONG_DELETE_RKEY_LEN];
    let Some(len) = super::llc::long_delete_rkey(link, &mut msg) else {
        return;
    };
    let Some(msg) = msg.get(..len) else { return };
    let Ok(slot) = link.try_get_slot() else { return };
    if !take(fault) {
        link.put_slot(slot);
        return;
    }
    if link.post_long_msg(slot, msg).is_err() {
        link.put_slot(slot);
        return;
    }
    smc_dbg!("inject: {}-byte LLC message sent for {:?}", len, fault);
}
