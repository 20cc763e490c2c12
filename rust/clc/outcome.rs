// SPDX-License-Identifier: GPL-2.0

//! How a CLC handshake ended, on each side.

use crate::smcr::conn::Conn;
use crate::wire::clc::{ClcError, DeclineReason};
use kernel::sync::Arc;

/// How a client's CLC handshake ended.
pub(crate) enum ClientOutcome {
    /// SMC was agreed: the connection runs over an SMC-R link group, or
    /// through the loopback device (SMC-D; [`Conn::is_ism`]).
    Smcr(Arc<Conn>),
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
    /// The peer echoed the option and then sent nothing within the CLC
    /// wait: a peer without CLC whose application waits for ours to speak,
    /// or a CLC server too busy to answer in time. This connection is made
    /// again without the option either way.
    Silent,
}

/// How the server side of a CLC handshake ended.
pub(crate) enum ServerOutcome {
    /// SMC was agreed: the connection runs over an SMC-R link group, or
    /// through the loopback device (SMC-D; [`Conn::is_ism`]).
    Smcr(Arc<Conn>),
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
