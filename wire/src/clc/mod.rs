// SPDX-License-Identifier: GPL-2.0

//! CLC (Connection Layer Control) messages exchanged over the TCP connection
//! to negotiate SMC (RFC 7609, section 3.7; SMC-Rv2 and SMC-Dv2 extensions).
//!
//! This module holds what every CLC message shares: the header, message
//! and SMC types, decline reasons, errors and limits. Each message has its
//! own codec in a submodule; their public items are re-exported here.

mod accept;
mod decline;
mod first_contact;
mod proposal;
mod proposal_encode;
mod smcd;
mod smcd_accept;
#[cfg(test)]
mod testdata;

// In the kernel module, where `wire` is private, a re-export nothing uses
// is an unused import: the kernel uses only some of these.
#[allow(unused_imports)]
pub use accept::{valid_qp_mtu, SmcrAcceptConfirm};
#[allow(unused_imports)]
pub use decline::Decline;
#[allow(unused_imports)]
pub use first_contact::{
    FirstContactExt, GidList, FCE_LEN_V20, FCE_LEN_V2X, GID_LIST_HEADER_LEN, HOSTNAME_LEN,
    MAX_FCE_GIDS, SMC_FEATURE_MASK, SMC_RELEASE, SMC_RELEASE_1,
};
#[allow(unused_imports)]
pub use proposal::{choose_variant, Ipv4Prefix, Proposal, ProposalV2, ServerCaps, Variant};
#[allow(unused_imports)]
pub use proposal_encode::{
    encode_proposal, encode_proposal_smcd, ProposalParams, SmcdProposalParams,
};
#[allow(unused_imports)]
pub use smcd::{
    chid_is_emulated, GidChid, IsmDevice, IsmDevices, SmcdGid, SmcdV2Ext, GID_CHID_LEN,
    LOOPBACK_CHID, MAX_SMCD_V2_EXT_OFFSET, SMCD_V2_EXT_LEN,
};
#[allow(unused_imports)]
pub use smcd_accept::SmcdAcceptConfirm;

use super::codec::{CodecError, Reader, Writer};

/// Why SMC was not used on a connection: the peer's (or our own) decline
/// reason, as carried in a CLC Decline and reported by `smcss`.
///
/// The high byte is the class (1 resources, 2 timeout, 3 configuration,
/// 4 synchronisation, 5 peer decline, 9 internal error).
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum DeclineReason {
    /// Insufficient memory resources.
    Mem,
    /// Timeout waiting for QP confirm link.
    TimeoutConfirmLink,
    /// Timeout waiting for QP add link.
    TimeoutAddLink,
    /// Configuration error.
    ConfigError,
    /// The peer did not indicate SMC in the TCP handshake.
    PeerNoSmc,
    /// IPsec is used on the connection.
    Ipsec,
    /// No SMC device found (R or D).
    NoSmcDevice,
    /// No SMC-D device found.
    NoSmcdDevice,
    /// No SMC-R device found.
    NoSmcrDevice,
    /// Peer sent no CLC v2 extension.
    NoV2Extension,
    /// Peer sent no UEID.
    NoUeid,
    /// SMC modes do not match.
    ModeUnsupported,
    /// A socket option (fastopen) is not supported with SMC.
    OptionUnsupported,
    /// IP prefix / subnet mismatch.
    DiffPrefix,
    /// SMC version mismatch.
    VersionMismatch,
    /// SMC-Rv2: no route to the peer.
    NoRoute,
    /// Synchronisation error.
    SyncError,
    /// The peer declined during the handshake.
    PeerDeclined,
    /// Internal error.
    InternalError,
    /// Any other code, kept as received.
    Other(u32),
}

const DECLINE_CODES: [(DeclineReason, u32); 19] = [
    (DeclineReason::Mem, 0x0101_0000),
    (DeclineReason::TimeoutConfirmLink, 0x0201_0000),
    (DeclineReason::TimeoutAddLink, 0x0202_0000),
    (DeclineReason::ConfigError, 0x0300_0000),
    (DeclineReason::PeerNoSmc, 0x0301_0000),
    (DeclineReason::Ipsec, 0x0302_0000),
    (DeclineReason::NoSmcDevice, 0x0303_0000),
    (DeclineReason::NoSmcdDevice, 0x0303_0001),
    (DeclineReason::NoSmcrDevice, 0x0303_0002),
    (DeclineReason::NoV2Extension, 0x0303_0004),
    (DeclineReason::NoUeid, 0x0303_0008),
    (DeclineReason::ModeUnsupported, 0x0304_0000),
    (DeclineReason::OptionUnsupported, 0x0306_0000),
    (DeclineReason::DiffPrefix, 0x0307_0000),
    (DeclineReason::VersionMismatch, 0x030c_0000),
    (DeclineReason::NoRoute, 0x030e_0000),
    (DeclineReason::SyncError, 0x0400_0000),
    (DeclineReason::PeerDeclined, 0x0500_0000),
    (DeclineReason::InternalError, 0x0999_0000),
];

impl DeclineReason {
    /// The 32-bit code on the wire and in diagnostics.
    pub fn code(self) -> u32 {
        if let DeclineReason::Other(code) = self {
            return code;
        }
        DECLINE_CODES
            .iter()
            .find(|(r, _)| *r == self)
            .map_or(0, |(_, c)| *c)
    }

    /// Number of distinct [`DeclineReason::index`] values.
    pub const COUNT: usize = DECLINE_CODES.len() + 1;

    /// A dense index for per-reason counters: the known reasons in table
    /// order, then one slot for every other code.
    pub fn index(self) -> usize {
        DECLINE_CODES
            .iter()
            .position(|(r, _)| *r == self)
            .unwrap_or(DECLINE_CODES.len())
    }

    /// The reason for a code read from the wire; unknown codes are kept.
    pub fn from_code(code: u32) -> Self {
        DECLINE_CODES
            .iter()
            .find(|(_, c)| *c == code)
            .map_or(DeclineReason::Other(code), |(r, _)| *r)
    }
}

/// Errors found in a received CLC message. Each one ends the handshake with
/// a decline (or a fallback) and is counted; none is ever a panic.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum ClcError {
    /// Fewer bytes than the message (or its header) needs.
    Truncated,
    /// The leading or trailing eyecatcher is neither "SMCR" nor "SMCD" in EBCDIC.
    BadEyecatcher,
    /// Unknown message type.
    BadType,
    /// The length field disagrees with the message's layout or exceeds
    /// [`MAX_MESSAGE_LEN`].
    BadLength,
    /// A version this implementation does not speak, or a version/type mix
    /// that is not allowed.
    BadVersion,
    /// An offset or count inside the message points outside it or exceeds
    /// the protocol's limits.
    BadLayout,
    /// The output buffer is too small for the message being encoded.
    BufferTooSmall,
}

impl From<CodecError> for ClcError {
    #[inline]
    fn from(e: CodecError) -> Self {
        match e {
            CodecError::Truncated => ClcError::Truncated,
            CodecError::BufferTooSmall => ClcError::BufferTooSmall,
        }
    }
}

/// "SMCR" in EBCDIC: eyecatcher of SMC-R messages (and of every decline we send).
pub const EYECATCHER_SMCR: [u8; 4] = [0xe2, 0xd4, 0xc3, 0xd9];
/// "SMCD" in EBCDIC: eyecatcher of SMC-D messages.
pub const EYECATCHER_SMCD: [u8; 4] = [0xe2, 0xd4, 0xc3, 0xc4];

/// SMC version 1 (RFC 7609).
pub const SMC_V1: u8 = 1;
/// SMC version 2.
pub const SMC_V2: u8 = 2;

/// Length of a system identifier (`id_for_peer`).
pub const SYSTEMID_LEN: usize = 8;
/// Length of an RoCE GID.
pub const GID_LEN: usize = 16;
/// Length of an EID (UEID or SEID).
pub const EID_LEN: usize = 32;
/// At most this many IPv6 prefixes in a proposal.
pub const MAX_V6_PREFIXES: usize = 8;
/// At most this many UEIDs in a proposal.
pub const MAX_UEIDS: usize = 8;
/// At most this many SMC-Dv2 GID/CHID entries in a proposal.
pub const MAX_ISM_GIDS: usize = 8;
/// No CLC message we accept is longer than this; longer ones are hostile.
pub const MAX_MESSAGE_LEN: usize = 1024;

/// Length of the common header.
pub const HEADER_LEN: usize = 8;
/// Length of the trailer (an eyecatcher).
pub const TRAILER_LEN: usize = 4;
/// Length of a v1 decline.
pub const DECLINE_LEN_V1: usize = 28;
/// Length of a v2 decline.
pub const DECLINE_LEN_V2: usize = 44;
/// Length of an SMC-R v1 accept or confirm.
pub const SMCR_ACCEPT_CONFIRM_LEN_V1: usize = 68;
/// Length of an SMC-R v2 accept or confirm without first contact; with
/// first contact the extension and (in a confirm) the GID list follow
/// (see [`SmcrAcceptConfirm`]).
pub const SMCR_ACCEPT_CONFIRM_LEN_V2: usize = 108;
/// Length of an SMC-D v1 accept or confirm (upstream's
/// `SMCD_CLC_ACCEPT_CONFIRM_LEN`).
pub const SMCD_ACCEPT_CONFIRM_LEN_V1: usize = 48;
/// Length of an SMC-D v2 accept or confirm without first contact (upstream's
/// `SMCD_CLC_ACCEPT_CONFIRM_LEN_V2`); with first contact the extension
/// follows (see [`SmcdAcceptConfirm`]).
pub const SMCD_ACCEPT_CONFIRM_LEN_V2: usize = 78;

/// OS type Linux, as sent in v2 declines and first contact extensions.
pub const OS_LINUX: u8 = 2;

/// CLC message types.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum MsgType {
    /// Client to server: what the client can do.
    Proposal = 1,
    /// Server to client: what the server chose.
    Accept = 2,
    /// Client to server: the client confirms.
    Confirm = 3,
    /// Either way: SMC will not be used.
    Decline = 4,
}

impl MsgType {
    fn from_u8(v: u8) -> Result<Self, ClcError> {
        match v {
            1 => Ok(MsgType::Proposal),
            2 => Ok(MsgType::Accept),
            3 => Ok(MsgType::Confirm),
            4 => Ok(MsgType::Decline),
            _ => Err(ClcError::BadType),
        }
    }
}

/// The SMC variants a message indicates (`typev1`/`typev2` fields).
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum SmcType {
    /// SMC-R only.
    R = 0,
    /// SMC-D only.
    D = 1,
    /// Neither.
    N = 2,
    /// Both SMC-R and SMC-D.
    B = 3,
}

impl SmcType {
    /// The variants a 2-bit type field indicates.
    pub fn from_bits(v: u8) -> Self {
        match v & 3 {
            0 => SmcType::R,
            1 => SmcType::D,
            2 => SmcType::N,
            _ => SmcType::B,
        }
    }

    /// SMC-R is among the indicated variants.
    pub fn has_r(self) -> bool {
        matches!(self, SmcType::R | SmcType::B)
    }

    /// SMC-D is among the indicated variants.
    pub fn has_d(self) -> bool {
        matches!(self, SmcType::D | SmcType::B)
    }
}

/// The common header of every CLC message.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub struct Header {
    /// "SMCR" or "SMCD".
    pub eyecatcher: [u8; 4],
    /// Message type.
    pub kind: MsgType,
    /// Length of the whole message, header and trailer included.
    pub length: u16,
    /// SMC version (high nibble of the flags byte).
    pub version: u8,
    /// Variants for v1 (low two bits).
    pub typev1: SmcType,
    /// Variants for v2 (next two bits); in a decline, bit 1 is "first contact".
    pub typev2: u8,
}

fn valid_eyecatcher(e: &[u8]) -> bool {
    e == EYECATCHER_SMCR || e == EYECATCHER_SMCD
}

impl Header {
    /// Parses and checks the 8-byte header at the start of `buf`: the
    /// eyecatcher, the type, and a length between the header size and
    /// [`MAX_MESSAGE_LEN`]. The rest of the message need not be there yet:
    /// this is what a receiver reads first to learn how much more to read.
    pub fn parse(buf: &[u8]) -> Result<Header, ClcError> {
        let mut r = Reader::new(buf);
        let eyecatcher: [u8; 4] = r.array()?;
        if !valid_eyecatcher(&eyecatcher) {
            return Err(ClcError::BadEyecatcher);
        }
        let kind = MsgType::from_u8(r.u8()?)?;
        let length = r.be16()?;
        let flags = r.u8()?;
        if (length as usize) < HEADER_LEN + TRAILER_LEN || length as usize > MAX_MESSAGE_LEN {
            return Err(ClcError::BadLength);
        }
        let version = flags >> 4;
        if version == 0 {
            return Err(ClcError::BadVersion);
        }
        Ok(Header {
            eyecatcher,
            kind,
            length,
            version,
            typev1: SmcType::from_bits(flags),
            typev2: (flags >> 2) & 3,
        })
    }

    /// The first `length` bytes of `msg`: the whole message, which must be
    /// there. With `check_trailer`, it must end in a valid eyecatcher.
    fn whole<'a>(&self, msg: &'a [u8], check_trailer: bool) -> Result<&'a [u8], ClcError> {
        let len = usize::from(self.length);
        let msg = msg.get(..len).ok_or(ClcError::Truncated)?;
        if check_trailer {
            let trailer = len
                .checked_sub(TRAILER_LEN)
                .and_then(|start| msg.get(start..))
                .ok_or(ClcError::BadLength)?;
            if !valid_eyecatcher(trailer) {
                return Err(ClcError::BadEyecatcher);
            }
        }
        Ok(msg)
    }
}

impl Header {
    /// Parses the header of an accept or confirm for SMC type `ty` (R or
    /// D); returns it and whether it asks for a first contact.
    fn parse_accept_confirm(msg: &[u8], ty: SmcType) -> Result<(Header, bool), ClcError> {
        let h = Header::parse(msg)?;
        if h.kind != MsgType::Accept && h.kind != MsgType::Confirm {
            return Err(ClcError::BadType);
        }
        if h.typev1 != ty {
            return Err(ClcError::BadVersion);
        }
        let first_contact = h.typev2 & 2 != 0;
        Ok((h, first_contact))
    }

    /// Starts an accept or confirm of `len` bytes for SMC type `ty` (R or
    /// D, which also picks the eyecatcher) in `buf` with its header.
    fn write_accept_confirm(
        buf: &mut [u8],
        kind: MsgType,
        len: usize,
        version: u8,
        ty: SmcType,
        first_contact: bool,
    ) -> Result<Writer<'_>, ClcError> {
        let mut w = Writer::new(buf, len)?;
        let eyecatcher = if ty == SmcType::D {
            &EYECATCHER_SMCD
        } else {
            &EYECATCHER_SMCR
        };
        let typev2 = if first_contact { 2 } else { 0 };
        write_header(&mut w, eyecatcher, kind, len, version, ty, typev2)?;
        Ok(w)
    }
}

/// Writes a CLC header with `eyecatcher`: "SMCR" in every message we send
/// but SMC-D accepts and confirms.
fn write_header(
    w: &mut Writer<'_>,
    eyecatcher: &[u8; 4],
    kind: MsgType,
    len: usize,
    version: u8,
    typev1: SmcType,
    typev2: u8,
) -> Result<(), ClcError> {
    w.put(eyecatcher)?;
    w.u8(kind as u8)?;
    w.be16(u16::try_from(len).map_err(|_| ClcError::BadLength)?)?;
    w.u8((version << 4) | ((typev2 & 3) << 2) | (typev1 as u8))?;
    Ok(())
}

/// Writes the trailer that ends every CLC message.
fn write_trailer(w: &mut Writer<'_>) -> Result<(), ClcError> {
    w.put(&EYECATCHER_SMCR)?;
    Ok(())
}

/// The sender's identity in proposals, accepts and confirms.
#[derive(Clone, Copy, PartialEq, Eq, Debug, Default)]
pub struct LocalInfo {
    /// Unique system identifier.
    pub peer_id: [u8; SYSTEMID_LEN],
    /// GID of the RoCE port.
    pub gid: [u8; GID_LEN],
    /// MAC of the RoCE port.
    pub mac: [u8; 6],
}

impl LocalInfo {
    /// Reads the 30 bytes of a sender's identity.
    fn read(r: &mut Reader<'_>) -> Result<Self, ClcError> {
        Ok(LocalInfo {
            peer_id: r.array()?,
            gid: r.array()?,
            mac: r.array()?,
        })
    }

    /// Writes the 30 bytes of a sender's identity.
    fn write(&self, w: &mut Writer<'_>) -> Result<(), ClcError> {
        w.put(&self.peer_id)?;
        w.put(&self.gid)?;
        w.put(&self.mac)?;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::testdata::*;
    use super::*;

    #[test]
    fn decline_codes_match_upstream() {
        assert_eq!(DeclineReason::PeerNoSmc.code(), 0x0301_0000);
        assert_eq!(DeclineReason::NoSmcDevice.code(), 0x0303_0000);
        assert_eq!(DeclineReason::NoUeid.code(), 0x0303_0008);
    }

    #[test]
    fn decline_codes_round_trip() {
        for (reason, code) in DECLINE_CODES {
            assert_eq!(DeclineReason::from_code(code), reason);
            assert_eq!(reason.code(), code);
        }
        assert_eq!(
            DeclineReason::from_code(0x1234_5678),
            DeclineReason::Other(0x1234_5678)
        );
        assert_eq!(DeclineReason::Other(0x1234_5678).code(), 0x1234_5678);
    }

    #[test]
    fn decline_indexes_are_dense_and_distinct() {
        for (i, (reason, _)) in DECLINE_CODES.iter().enumerate() {
            assert_eq!(reason.index(), i);
        }
        assert_eq!(DeclineReason::Other(7).index(), DeclineReason::COUNT - 1);
    }

    #[test]
    fn header_rejects_hostile_input() {
        let mut b = decline_v1_bytes();
        b[0] = b'S';
        assert_eq!(Header::parse(&b), Err(ClcError::BadEyecatcher));
        let mut b = decline_v1_bytes();
        b[4] = 9;
        assert_eq!(Header::parse(&b), Err(ClcError::BadType));
        let mut b = decline_v1_bytes();
        b[5..7].copy_from_slice(&0xffffu16.to_be_bytes());
        assert_eq!(Header::parse(&b), Err(ClcError::BadLength));
        b[5..7].copy_from_slice(&4u16.to_be_bytes());
        assert_eq!(Header::parse(&b), Err(ClcError::BadLength));
        let mut b = decline_v1_bytes();
        b[7] = 0;
        assert_eq!(Header::parse(&b), Err(ClcError::BadVersion));
        // HTTP is not CLC.
        assert_eq!(
            Header::parse(b"GET / HTTP/1.1\r\n"),
            Err(ClcError::BadEyecatcher)
        );
    }

    #[test]
    fn wrong_message_kind_is_rejected() {
        assert_eq!(Proposal::parse(&decline_v1_bytes()), Err(ClcError::BadType));
        assert_eq!(Decline::parse(&accept_v1_bytes()), Err(ClcError::BadType));
        assert_eq!(
            SmcrAcceptConfirm::parse(&proposal_v2_bytes()),
            Err(ClcError::BadType)
        );
    }

    #[test]
    fn bad_trailer_is_rejected() {
        let mut b = accept_v1_bytes();
        b[67] = 0;
        assert_eq!(SmcrAcceptConfirm::parse(&b), Err(ClcError::BadEyecatcher));
        let mut b = proposal_v2_bytes();
        b[155] = 0;
        assert_eq!(Proposal::parse(&b), Err(ClcError::BadEyecatcher));
    }

    fn parse_any(b: &[u8]) {
        let _ = Header::parse(b);
        let _ = Decline::parse(b);
        let _ = Proposal::parse(b);
        let _ = SmcrAcceptConfirm::parse(b);
    }

    #[test]
    fn every_truncation_is_an_error() {
        let (d1, d2, p2, p1, a1) = (
            decline_v1_bytes(),
            decline_v2_bytes(),
            proposal_v2_bytes(),
            proposal_v1_bytes(),
            accept_v1_bytes(),
        );
        let (a2, c2, c20) = (
            accept_v2_fce_bytes(),
            confirm_v2_fce_bytes(),
            confirm_v20_fce_bytes(),
        );
        type Fails = fn(&[u8]) -> bool;
        let accept_fails: Fails = |b| SmcrAcceptConfirm::parse(b).is_err();
        let v: [(&[u8], Fails); 8] = [
            (&d1, |b| Decline::parse(b).is_err()),
            (&d2, |b| Decline::parse(b).is_err()),
            (&p2, |b| Proposal::parse(b).is_err()),
            (&p1, |b| Proposal::parse(b).is_err()),
            (&a1, accept_fails),
            (&a2, accept_fails),
            (&c2, accept_fails),
            (&c20, accept_fails),
        ];
        for (msg, fails) in v {
            for n in 0..msg.len() {
                assert!(fails(&msg[..n]), "prefix of {} bytes parsed", n);
            }
        }
    }

    /// Every single-byte change of every vector, at every position, and
    /// random buffers: parsing returns, it never panics.
    #[test]
    fn mutations_never_panic() {
        let (d1, d2, p2, p1, a1) = (
            decline_v1_bytes(),
            decline_v2_bytes(),
            proposal_v2_bytes(),
            proposal_v1_bytes(),
            accept_v1_bytes(),
        );
        let (a2, c2, c20) = (
            accept_v2_fce_bytes(),
            confirm_v2_fce_bytes(),
            confirm_v20_fce_bytes(),
        );
        let msgs: [&[u8]; 8] = [&d1, &d2, &p2, &p1, &a1, &a2, &c2, &c20];
        let mut buf = [0u8; 256];
        for m in msgs {
            for i in 0..m.len() {
                for v in [0u8, 1, 2, 0x7f, 0x80, 0xfe, 0xff] {
                    buf[..m.len()].copy_from_slice(m);
                    buf[i] = v;
                    parse_any(&buf[..m.len()]);
                }
            }
        }
        let mut x: u64 = 0x9e37_79b9_7f4a_7c15;
        for _ in 0..200_000 {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            let len = (x % 200) as usize;
            for (i, b) in buf[..len].iter_mut().enumerate() {
                *b = (x >> (i % 8 * 8)) as u8 ^ i as u8;
            }
            // Keep a valid header often enough to reach the bodies.
            if x & 1 == 0 && len >= 8 {
                buf[..4].copy_from_slice(&SMCR);
                buf[4] = (x >> 8) as u8 % 5;
                buf[5..7].copy_from_slice(&(len as u16).to_be_bytes());
            }
            parse_any(&buf[..len]);
        }
    }
}
