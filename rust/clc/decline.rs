// SPDX-License-Identifier: GPL-2.0

//! Declines: ours, and the peer's when a handshake failed on both sides at
//! once (only one of the two may reach the applications' streams).

use super::recv::CLC_WAIT_MS;
use crate::ib::local_systemid;
use crate::sys::errno::EINVAL;
use crate::sys::print::smc_dbg;
use crate::sys::tcp::KernelSocket;
use crate::wire::clc::{
    Decline, DeclineReason, Header, MsgType, DECLINE_LEN_V2, HEADER_LEN, MAX_MESSAGE_LEN, SMC_V2,
};
use kernel::prelude::*;

/// How long a side whose first link could not be confirmed waits for the
/// peer's Decline: longer than upstream's `CLC_WAIT_TIME_SHORT` (1 s).
/// Each application found the other side's Decline at the start of its
/// data when both sent one: an upstream server was seen to start its 2 s
/// CONFIRM LINK wait about 2 s after the client's Confirm left, so its
/// Decline came after an smc_rs client's 4 s + 1 s; and an upstream
/// client waits 4 s for CONFIRM LINK and 1 s for our Decline after its
/// Confirm, so its Decline came after an smc_rs server's 2 s + 3 s began
/// later. 5 s covers the peer's whole wait (up to 4 s, then 1 s) begun
/// up to 2 s after ours.
const CLC_WAIT_SHORT_MS: u32 = 5000;

/// The peer's Decline, if one comes within [`CLC_WAIT_SHORT_MS`]: when the
/// first link cannot be confirmed, the side that gives up first declines,
/// and the other must take that Decline from the stream instead of sending
/// its own, or each application would find the other side's Decline at the
/// start of its data (upstream waits alike). Only a whole Decline is taken;
/// anything else stays in the stream. Returns the peer's reason code.
fn peer_decline(clc: &KernelSocket) -> Option<u32> {
    let mut buf = [0u8; MAX_MESSAGE_LEN];
    let head = buf.get_mut(..HEADER_LEN)?;
    if clc.peek_exact(head, CLC_WAIT_SHORT_MS).ok()? < HEADER_LEN {
        return None;
    }
    let header = Header::parse(head).ok()?;
    if header.kind != MsgType::Decline {
        return None;
    }
    let msg = buf.get_mut(..usize::from(header.length))?;
    let len = msg.len();
    if clc.recv_exact(msg, CLC_WAIT_MS).ok()? < len {
        return None;
    }
    Some(Decline::parse(msg).map_or(0, |d| d.reason.code()))
}

/// The end of a handshake whose first link could not be confirmed (or set
/// up after the peer's last CLC message): the peer's Decline if it sent
/// one, else ours with `reason`.
pub(super) fn decline_unless_peer_did(
    clc: &KernelSocket,
    reason: DeclineReason,
) -> Result<(DeclineReason, u32)> {
    if let Some(diagnosis) = peer_decline(clc) {
        smc_dbg!(
            "the peer declined first ({:#010x}): no decline of ours",
            diagnosis
        );
        return Ok((DeclineReason::PeerDeclined, diagnosis));
    }
    send_decline(clc, reason)?;
    Ok((reason, 0))
}

/// Sends a v2 decline with `reason`.
pub(super) fn send_decline(clc: &KernelSocket, reason: DeclineReason) -> Result {
    let d = Decline::new(SMC_V2, local_systemid(), reason);
    let mut out = [0u8; DECLINE_LEN_V2];
    let n = d.encode(&mut out).map_err(|_| Error::from(EINVAL))?;
    clc.send_all(out.get(..n).ok_or(EINVAL)?)
}
