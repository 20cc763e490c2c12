// SPDX-License-Identifier: GPL-2.0

//! The CLC handshake over the clcsock (RFC 7609, section 3.7; SMC-Rv2),
//! and the memory of peers that echo the SMC TCP option without speaking CLC.

use crate::sys::args::SockAddr;
use crate::sys::errno::{EAGAIN, EINVAL};
use crate::sys::net::Net;
use crate::sys::print::smc_dbg;
use crate::sys::tcp::KernelSocket;
use crate::wire::clc::{
    choose_variant, encode_proposal, ClcError, Decline, DeclineReason, Header, MsgType, Proposal,
    ProposalParams, ServerCaps, DECLINE_LEN_V2, EYECATCHER_SMCD, EYECATCHER_SMCR, HEADER_LEN,
    MAX_MESSAGE_LEN, SMC_V1, SMC_V2, SYSTEMID_LEN,
};
use core::sync::atomic::{AtomicU64, Ordering};
use kernel::prelude::*;
use kernel::time::Ktime;

/// How long a peer has to answer a CLC message (upstream's `CLC_WAIT_TIME`).
pub(crate) const CLC_WAIT_MS: u32 = 6000;

/// How a client's CLC handshake ended.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(crate) enum ClientOutcome {
    /// The peer did not echo the SMC option: it is plain TCP.
    PeerNoSmc,
    /// The peer speaks CLC and SMC will not be used; both sides fall back.
    /// `reason` is ours, `peer_diagnosis` what the peer's decline said.
    Declined {
        reason: DeclineReason,
        peer_diagnosis: u32,
    },
    /// The peer echoed the option but did not answer in CLC (a middlebox or
    /// a stack that reflects unknown options): this connection is unusable
    /// and must be made again without the option.
    NotClc(ClcError),
}

/// Runs the client side on a connected clcsock. smc_rs has no SMC-R device
/// yet, so the proposal offers nothing (typev1 and typev2 N): a CLC peer
/// answers with a decline, anything else shows the peer is not CLC.
pub(crate) fn client_handshake(clc: &KernelSocket) -> Result<ClientOutcome> {
    if !clc.peer_offered_smc() {
        return Ok(ClientOutcome::PeerNoSmc);
    }
    let mut buf = [0u8; MAX_MESSAGE_LEN];
    let n =
        encode_proposal(&ProposalParams::default(), &mut buf).map_err(|_| Error::from(EINVAL))?;
    clc.send_all(&buf[..n])?;

    let header = match recv_message(clc, &mut buf) {
        Ok(h) => h,
        Err(RecvError::Clc(e)) => return Ok(ClientOutcome::NotClc(e)),
        Err(RecvError::Os(e)) => return Err(e),
    };
    let msg = &buf[..header.length as usize];
    match header.kind {
        MsgType::Decline => match Decline::parse(msg) {
            Ok(d) => {
                smc_dbg!("client: peer declined with {:#010x}", d.reason.code());
                Ok(ClientOutcome::Declined {
                    reason: DeclineReason::NoSmcDevice,
                    peer_diagnosis: d.reason.code(),
                })
            }
            Err(e) => Ok(ClientOutcome::NotClc(e)),
        },
        MsgType::Accept => {
            // A peer that accepts an offer of nothing is confused; tell it no.
            let d = Decline::new(SMC_V2, [0; SYSTEMID_LEN], DeclineReason::NoSmcDevice);
            let n = d.encode(&mut buf).map_err(|_| Error::from(EINVAL))?;
            clc.send_all(&buf[..n])?;
            Ok(ClientOutcome::Declined {
                reason: DeclineReason::NoSmcDevice,
                peer_diagnosis: 0,
            })
        }
        // Our own proposal coming back: an echo, not a CLC peer.
        MsgType::Proposal | MsgType::Confirm => Ok(ClientOutcome::NotClc(ClcError::BadType)),
    }
}

/// How the server side of a CLC handshake ended.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(crate) enum ServerOutcome {
    /// The connection goes on over TCP, positioned where the client's data
    /// starts. `error` is set when the client's CLC was broken but the
    /// stream could still be resynchronised (we declined).
    Fallback {
        reason: DeclineReason,
        peer_diagnosis: u32,
        /// The client sent no CLC at all: nothing was taken from the stream.
        not_clc: bool,
        error: Option<ClcError>,
    },
    /// The client's CLC cannot be made sense of (or stopped halfway): the
    /// stream position is lost, so the connection must be dropped.
    Abort(ClcError),
}

/// Runs the server side on a connection whose SYN carried the SMC option.
///
/// The first bytes are peeked, not read: a client that does not start with
/// a CLC message (it only echoed the option, or waits for the server to
/// speak) keeps its bytes and gets plain TCP. A CLC proposal is read whole
/// and answered with a decline (smc_rs serves no SMC variant yet) whose
/// reason says why, in the version the client speaks.
pub(crate) fn server_handshake(clc: &KernelSocket) -> ServerOutcome {
    let not_clc = ServerOutcome::Fallback {
        reason: DeclineReason::PeerNoSmc,
        peer_diagnosis: 0,
        not_clc: true,
        error: None,
    };
    let mut buf = [0u8; MAX_MESSAGE_LEN];
    let (head, _) = buf.split_at_mut(HEADER_LEN);
    // Closed, reset or silent: nothing was taken; TCP reports the rest.
    let seen = clc.peek_exact(head, CLC_WAIT_MS).unwrap_or(0);
    if seen < HEADER_LEN
        || !(head.starts_with(&EYECATCHER_SMCR) || head.starts_with(&EYECATCHER_SMCD))
    {
        return not_clc;
    }
    // CLC from here on: a header that does not say how long the message is
    // leaves no way to find where the application's data begins.
    let header = match Header::parse(head) {
        Ok(h) => h,
        Err(e) => return ServerOutcome::Abort(e),
    };
    // `Header::parse` bounds the length by `MAX_MESSAGE_LEN`.
    let Some(msg) = buf.get_mut(..usize::from(header.length)) else {
        return ServerOutcome::Abort(ClcError::BadLength);
    };
    match clc.recv_exact(msg, CLC_WAIT_MS) {
        Ok(n) if n == msg.len() => {}
        _ => return ServerOutcome::Abort(ClcError::Truncated),
    }
    let msg = &*msg;
    let version = if header.version >= SMC_V2 {
        SMC_V2
    } else {
        SMC_V1
    };
    let (reason, error) = match header.kind {
        MsgType::Proposal => match Proposal::parse(msg) {
            Ok(p) => match choose_variant(&p, ServerCaps::default()) {
                Err(reason) => (reason, None),
                // No variant can be chosen without a device.
                Ok(_) => (DeclineReason::NoSmcDevice, None),
            },
            Err(ClcError::BadVersion) => {
                (DeclineReason::VersionMismatch, Some(ClcError::BadVersion))
            }
            Err(e) => (DeclineReason::SyncError, Some(e)),
        },
        // The client gave up first: nothing to answer.
        MsgType::Decline => {
            let (diagnosis, error) = match Decline::parse(msg) {
                Ok(d) => (d.reason.code(), None),
                Err(e) => (0, Some(e)),
            };
            return ServerOutcome::Fallback {
                reason: DeclineReason::PeerDeclined,
                peer_diagnosis: diagnosis,
                not_clc: false,
                error,
            };
        }
        MsgType::Accept | MsgType::Confirm => (DeclineReason::SyncError, Some(ClcError::BadType)),
    };
    smc_dbg!(
        "server: declining the client's CLC, reason {:#010x}",
        reason.code()
    );
    let decline = Decline::new(version, [0; SYSTEMID_LEN], reason);
    let mut out = [0u8; DECLINE_LEN_V2];
    let sent = match decline.encode(&mut out).ok().and_then(|n| out.get(..n)) {
        Some(bytes) => clc.send_all(bytes),
        None => Err(EINVAL.into()),
    };
    if sent.is_err() {
        return ServerOutcome::Abort(ClcError::Truncated);
    }
    ServerOutcome::Fallback {
        reason,
        peer_diagnosis: 0,
        not_clc: false,
        error,
    }
}

enum RecvError {
    /// The peer's bytes are not a CLC message, or it said nothing in time.
    Clc(ClcError),
    /// The socket failed (signal, reset, ...).
    Os(Error),
}

/// Reads one whole CLC message into `buf`, header first.
fn recv_message(
    clc: &KernelSocket,
    buf: &mut [u8; MAX_MESSAGE_LEN],
) -> core::result::Result<Header, RecvError> {
    let timed_out = |e: Error| {
        if e == EAGAIN {
            RecvError::Clc(ClcError::Truncated)
        } else {
            RecvError::Os(e)
        }
    };
    let n = clc
        .recv_exact(&mut buf[..HEADER_LEN], CLC_WAIT_MS)
        .map_err(timed_out)?;
    if n < HEADER_LEN {
        return Err(RecvError::Clc(ClcError::Truncated));
    }
    let header = Header::parse(&buf[..HEADER_LEN]).map_err(RecvError::Clc)?;
    let len = header.length as usize;
    let n = clc
        .recv_exact(&mut buf[HEADER_LEN..len], CLC_WAIT_MS)
        .map_err(timed_out)?;
    if n < len - HEADER_LEN {
        return Err(RecvError::Clc(ClcError::Truncated));
    }
    Ok(header)
}

/// Peers (by address, per network namespace) that echoed the SMC option
/// without speaking CLC: connections to them skip SMC for a while.
///
/// A small lock-free table: each slot holds a 32-bit hash of namespace and
/// address and the second until which the entry holds. A collision can only
/// make a connection skip SMC needlessly, never break it.
pub(crate) struct NonClcPeers {
    slots: [AtomicU64; Self::SLOTS],
}

impl NonClcPeers {
    const SLOTS: usize = 64;
    /// How long a peer stays remembered.
    const HOLD_SECS: u32 = 600;

    pub(crate) const fn new() -> Self {
        #[allow(clippy::declare_interior_mutable_const)]
        const EMPTY: AtomicU64 = AtomicU64::new(0);
        NonClcPeers {
            slots: [EMPTY; Self::SLOTS],
        }
    }

    fn key(net: &Net, addr: &[u8]) -> u32 {
        let fnv = |h: u32, bytes: &[u8]| {
            bytes.iter().fold(h, |h, byte| {
                (h ^ u32::from(*byte)).wrapping_mul(0x0100_0193)
            })
        };
        let h = fnv(0x811c_9dc5, &net.id().to_ne_bytes());
        fnv(h, addr) | 1 // never 0, the empty slot's key
    }

    /// Seconds since boot; 32 bits last 136 years.
    fn now_secs() -> u32 {
        (Ktime::ktime_get().to_ms() / 1000) as u32
    }

    /// Remembers `addr` as a peer that does not speak CLC.
    pub(crate) fn insert(&self, net: &Net, addr: &SockAddr<'_>) {
        let Some(ip) = addr.ip() else { return };
        let key = Self::key(net, ip);
        let until = Self::now_secs().wrapping_add(Self::HOLD_SECS);
        self.slots[key as usize % Self::SLOTS]
            .store((u64::from(key) << 32) | u64::from(until), Ordering::Relaxed);
    }

    /// Whether `addr` is a remembered peer that does not speak CLC.
    pub(crate) fn contains(&self, net: &Net, addr: &SockAddr<'_>) -> bool {
        let Some(ip) = addr.ip() else { return false };
        let key = Self::key(net, ip);
        let slot = self.slots[key as usize % Self::SLOTS].load(Ordering::Relaxed);
        (slot >> 32) as u32 == key && slot as u32 > Self::now_secs()
    }
}
