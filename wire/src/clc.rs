// SPDX-License-Identifier: GPL-2.0

//! CLC (Connection Layer Control) messages exchanged over the TCP connection
//! to negotiate SMC (RFC 7609, section 3.7; SMC-Rv2 extensions).

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
/// Minimum length of an SMC-R v2 accept or confirm.
pub const SMCR_ACCEPT_CONFIRM_LEN_V2: usize = 108;
/// Length of an SMC-D v1 accept or confirm.
pub const SMCD_ACCEPT_CONFIRM_LEN_V1: usize = 48;
/// Minimum length of an SMC-D v2 accept or confirm.
pub const SMCD_ACCEPT_CONFIRM_LEN_V2: usize = 78;

/// The fixed part of a proposal: header, local info, IP area offset.
const PROPOSAL_BASE_LEN: usize = 40;
/// The SMC-D area that follows the base in every proposal Linux sends.
const PROPOSAL_SMCD_LEN: usize = 40;
/// The IPv4 prefix area.
const PROPOSAL_PREFIX_LEN: usize = 8;
/// One IPv6 prefix: address and prefix length.
const IPV6_PREFIX_LEN: usize = 17;
/// The fixed part of the v2 extension.
const V2_EXT_LEN: usize = 40;
/// The fixed part of the SMC-Dv2 extension.
const SMCD_V2_EXT_LEN: usize = 48;
/// One SMC-Dv2 GID/CHID entry.
const ISM_GID_CHID_LEN: usize = 10;
/// Offset of the v2 extension offset field inside the SMC-D area, plus its size.
const SMCD_V2_EXT_OFFSET_END: usize = 12;

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
    fn from_bits(v: u8) -> Self {
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

/// Reads big-endian integers from a byte slice, never past its end.
struct Reader<'a> {
    buf: &'a [u8],
    pos: usize,
}

impl<'a> Reader<'a> {
    fn new(buf: &'a [u8]) -> Self {
        Reader { buf, pos: 0 }
    }

    fn at(buf: &'a [u8], pos: usize) -> Self {
        Reader { buf, pos }
    }

    fn bytes(&mut self, n: usize) -> Result<&'a [u8], ClcError> {
        let end = self.pos.checked_add(n).ok_or(ClcError::Truncated)?;
        let s = self.buf.get(self.pos..end).ok_or(ClcError::Truncated)?;
        self.pos = end;
        Ok(s)
    }

    fn array<const N: usize>(&mut self) -> Result<[u8; N], ClcError> {
        let mut a = [0u8; N];
        a.copy_from_slice(self.bytes(N)?);
        Ok(a)
    }

    fn u8(&mut self) -> Result<u8, ClcError> {
        Ok(self.bytes(1)?[0])
    }

    fn be16(&mut self) -> Result<u16, ClcError> {
        Ok(u16::from_be_bytes(self.array()?))
    }

    fn be24(&mut self) -> Result<u32, ClcError> {
        let b: [u8; 3] = self.array()?;
        Ok(u32::from_be_bytes([0, b[0], b[1], b[2]]))
    }

    fn be32(&mut self) -> Result<u32, ClcError> {
        Ok(u32::from_be_bytes(self.array()?))
    }

    fn be64(&mut self) -> Result<u64, ClcError> {
        Ok(u64::from_be_bytes(self.array()?))
    }

    fn skip(&mut self, n: usize) -> Result<(), ClcError> {
        self.bytes(n).map(|_| ())
    }
}

/// Writes big-endian integers into a byte slice, never past its end.
struct Writer<'a> {
    buf: &'a mut [u8],
    pos: usize,
}

impl<'a> Writer<'a> {
    fn new(buf: &'a mut [u8], len: usize) -> Result<Self, ClcError> {
        let buf = buf.get_mut(..len).ok_or(ClcError::BufferTooSmall)?;
        buf.fill(0);
        Ok(Writer { buf, pos: 0 })
    }

    fn put(&mut self, data: &[u8]) -> Result<(), ClcError> {
        let end = self
            .pos
            .checked_add(data.len())
            .ok_or(ClcError::BufferTooSmall)?;
        self.buf
            .get_mut(self.pos..end)
            .ok_or(ClcError::BufferTooSmall)?
            .copy_from_slice(data);
        self.pos = end;
        Ok(())
    }

    fn u8(&mut self, v: u8) -> Result<(), ClcError> {
        self.put(&[v])
    }

    fn be16(&mut self, v: u16) -> Result<(), ClcError> {
        self.put(&v.to_be_bytes())
    }

    fn be24(&mut self, v: u32) -> Result<(), ClcError> {
        self.put(&v.to_be_bytes()[1..])
    }

    fn be32(&mut self, v: u32) -> Result<(), ClcError> {
        self.put(&v.to_be_bytes())
    }

    fn be64(&mut self, v: u64) -> Result<(), ClcError> {
        self.put(&v.to_be_bytes())
    }

    fn zeros(&mut self, n: usize) -> Result<(), ClcError> {
        let end = self.pos.checked_add(n).ok_or(ClcError::BufferTooSmall)?;
        if end > self.buf.len() {
            return Err(ClcError::BufferTooSmall);
        }
        self.pos = end;
        Ok(())
    }

    fn header(
        &mut self,
        kind: MsgType,
        len: usize,
        version: u8,
        typev1: SmcType,
        typev2: u8,
    ) -> Result<(), ClcError> {
        self.put(&EYECATCHER_SMCR)?;
        self.u8(kind as u8)?;
        self.be16(u16::try_from(len).map_err(|_| ClcError::BadLength)?)?;
        self.u8((version << 4) | ((typev2 & 3) << 2) | (typev1 as u8))
    }

    fn trailer(&mut self) -> Result<(), ClcError> {
        self.put(&EYECATCHER_SMCR)
    }
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

    /// Checks that `msg` holds exactly this message and ends in a valid trailer.
    fn whole<'a>(&self, msg: &'a [u8], check_trailer: bool) -> Result<&'a [u8], ClcError> {
        let len = self.length as usize;
        let msg = msg.get(..len).ok_or(ClcError::Truncated)?;
        if check_trailer && !valid_eyecatcher(&msg[len - TRAILER_LEN..]) {
            return Err(ClcError::BadEyecatcher);
        }
        Ok(msg)
    }
}

/// A CLC Decline.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub struct Decline {
    /// SMC version of the message (1: 28 bytes, 2 and later: 44 bytes).
    pub version: u8,
    /// The sender's system identifier (zero when it has none).
    pub peer_id: [u8; SYSTEMID_LEN],
    /// Why the sender declines.
    pub reason: DeclineReason,
    /// The sender's OS type (v2; 2 is Linux).
    pub os_type: u8,
    /// The sender lost synchronisation of a first contact: its link group
    /// must go (the "first contact" bit of `typev2`).
    pub sync_error: bool,
    /// Additional diagnosis codes (v2).
    pub diagnosis_v2: [u32; 4],
}

/// OS type Linux, as sent in v2 declines and first contact extensions.
pub const OS_LINUX: u8 = 2;

impl Decline {
    /// The decline we send for `reason` in the given protocol version.
    pub fn new(version: u8, peer_id: [u8; SYSTEMID_LEN], reason: DeclineReason) -> Self {
        Decline {
            version,
            peer_id,
            reason,
            os_type: if version == SMC_V1 { 0 } else { OS_LINUX },
            sync_error: reason == DeclineReason::SyncError,
            diagnosis_v2: [0; 4],
        }
    }

    /// Its length on the wire.
    pub fn len(&self) -> usize {
        if self.version == SMC_V1 {
            DECLINE_LEN_V1
        } else {
            DECLINE_LEN_V2
        }
    }

    /// Encodes into `buf`; returns the number of bytes written.
    pub fn encode(&self, buf: &mut [u8]) -> Result<usize, ClcError> {
        let len = self.len();
        let mut w = Writer::new(buf, len)?;
        let typev2 = if self.sync_error { 2 } else { 0 };
        w.header(MsgType::Decline, len, self.version, SmcType::R, typev2)?;
        w.put(&self.peer_id)?;
        w.be32(self.reason.code())?;
        w.u8(self.os_type << 4)?;
        w.zeros(3)?;
        if self.version != SMC_V1 {
            for d in self.diagnosis_v2 {
                w.be32(d)?;
            }
        }
        w.trailer()?;
        Ok(len)
    }

    /// Parses a complete decline. Like upstream, the trailer is not checked.
    pub fn parse(msg: &[u8]) -> Result<Self, ClcError> {
        let h = Header::parse(msg)?;
        if h.kind != MsgType::Decline {
            return Err(ClcError::BadType);
        }
        let want = if h.version == SMC_V1 {
            DECLINE_LEN_V1
        } else {
            DECLINE_LEN_V2
        };
        if h.length as usize != want {
            return Err(ClcError::BadLength);
        }
        let msg = h.whole(msg, false)?;
        let mut r = Reader::at(msg, HEADER_LEN);
        let peer_id = r.array()?;
        let reason = DeclineReason::from_code(r.be32()?);
        let os_type = r.u8()? >> 4;
        r.skip(3)?;
        let mut diagnosis_v2 = [0u32; 4];
        if h.version != SMC_V1 {
            for d in diagnosis_v2.iter_mut() {
                *d = r.be32()?;
            }
        }
        Ok(Decline {
            version: h.version,
            peer_id,
            reason,
            os_type,
            sync_error: h.typev2 & 2 != 0,
            diagnosis_v2,
        })
    }
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
    fn read(r: &mut Reader<'_>) -> Result<Self, ClcError> {
        Ok(LocalInfo {
            peer_id: r.array()?,
            gid: r.array()?,
            mac: r.array()?,
        })
    }

    fn write(&self, w: &mut Writer<'_>) -> Result<(), ClcError> {
        w.put(&self.peer_id)?;
        w.put(&self.gid)?;
        w.put(&self.mac)
    }
}

/// The IPv4 prefix of a proposal (the subnet the client's address is in).
#[derive(Clone, Copy, PartialEq, Eq, Debug, Default)]
pub struct Ipv4Prefix {
    /// Subnet (network byte order value).
    pub subnet: u32,
    /// Number of significant bits.
    pub len: u8,
}

/// The SMC-Rv2 / SMC-Dv2 extension of a proposal.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub struct ProposalV2<'a> {
    /// SMC release the client speaks (0 or 1).
    pub release: u8,
    /// The client sent a system EID (SMC-Dv2).
    pub seid: bool,
    /// RoCEv2 GID of the client's device.
    pub roce_gid: [u8; GID_LEN],
    /// Connections per link group the client wants (release 1).
    pub max_conns: u8,
    /// Links per link group the client wants (release 1).
    pub max_links: u8,
    /// Feature mask (release 1).
    pub feature_mask: u16,
    /// The client's UEIDs, [`EID_LEN`] bytes each.
    ueids: &'a [u8],
    /// Number of SMC-Dv2 GID/CHID entries.
    pub ism_gid_count: u8,
}

impl<'a> ProposalV2<'a> {
    /// The client's UEIDs.
    pub fn ueids(&self) -> impl Iterator<Item = &'a [u8]> {
        self.ueids.chunks_exact(EID_LEN)
    }
}

/// A parsed CLC Proposal, borrowing the variable parts from the message.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub struct Proposal<'a> {
    /// The header (version and indicated variants).
    pub header: Header,
    /// The client's identity and RoCE port.
    pub local: LocalInfo,
    /// The client's IPv4 prefix (absent when v1 indicates nothing, in a v2 proposal).
    pub ipv4_prefix: Option<Ipv4Prefix>,
    ipv6_prefixes: &'a [u8],
    /// The v2 extension, when the proposal indicates a v2 variant.
    pub v2: Option<ProposalV2<'a>>,
}

impl<'a> Proposal<'a> {
    /// The client's IPv6 prefixes: address and prefix length.
    pub fn ipv6_prefixes(&self) -> impl Iterator<Item = ([u8; 16], u8)> + 'a {
        self.ipv6_prefixes.chunks_exact(IPV6_PREFIX_LEN).map(|c| {
            let mut a = [0u8; 16];
            a.copy_from_slice(&c[..16]);
            (a, c[16])
        })
    }

    /// Parses and validates a complete proposal with the checks upstream
    /// makes: prefix counts, UEID and GID counts, offsets inside the
    /// message, a length that matches the layout exactly, the trailer.
    pub fn parse(msg: &'a [u8]) -> Result<Self, ClcError> {
        let header = Header::parse(msg)?;
        if header.kind != MsgType::Proposal {
            return Err(ClcError::BadType);
        }
        let msg = header.whole(msg, true)?;
        let len = msg.len();
        let mut r = Reader::at(msg, HEADER_LEN);
        let local = LocalInfo::read(&mut r)?;
        let iparea_offset = r.be16()? as usize;
        if iparea_offset > PROPOSAL_SMCD_LEN {
            return Err(ClcError::BadLayout);
        }
        let smcd_start = PROPOSAL_BASE_LEN;
        let prefix_start = PROPOSAL_BASE_LEN + iparea_offset;
        let mut p = Reader::at(msg, prefix_start);
        let subnet = p.be32()?;
        let prefix_len = p.u8()?;
        p.skip(2)?;
        let v6_count = p.u8()? as usize;
        if v6_count > MAX_V6_PREFIXES {
            return Err(ClcError::BadLayout);
        }
        let v6_len = v6_count * IPV6_PREFIX_LEN;

        if header.version == SMC_V1 {
            if header.typev1 == SmcType::N {
                return Err(ClcError::BadVersion);
            }
            if len != prefix_start + PROPOSAL_PREFIX_LEN + v6_len + TRAILER_LEN {
                return Err(ClcError::BadLength);
            }
            let ipv6_prefixes = p.bytes(v6_len)?;
            return Ok(Proposal {
                header,
                local,
                ipv4_prefix: Some(Ipv4Prefix {
                    subnet,
                    len: prefix_len,
                }),
                ipv6_prefixes,
                v2: None,
            });
        }

        let typev2 = SmcType::from_bits(header.typev2);
        // An SMC-D v1 offer moves the prefix area; then the SMC-D area that
        // locates the v2 extension is not where it must be.
        if typev2 != SmcType::N && header.typev1.has_d() && iparea_offset != PROPOSAL_SMCD_LEN {
            return Err(ClcError::BadLayout);
        }
        let mut v2 = None;
        let mut v2_len = 0;
        if typev2 != SmcType::N {
            let mut s = Reader::at(msg, smcd_start + 10);
            let v2_off = s.be16()? as usize;
            // The extension must lie past the prefix area of the largest
            // proposal Linux sends and nowhere past the message.
            let max_off = PROPOSAL_SMCD_LEN - SMCD_V2_EXT_OFFSET_END
                + PROPOSAL_PREFIX_LEN
                + MAX_V6_PREFIXES * IPV6_PREFIX_LEN;
            if v2_off == 0 || v2_off > max_off {
                return Err(ClcError::BadLayout);
            }
            let ext_start = smcd_start + SMCD_V2_EXT_OFFSET_END + v2_off;
            let mut e = Reader::at(msg, ext_start);
            let eid_cnt = e.u8()? as usize;
            let ism_gid_count = e.u8()?;
            e.skip(1)?;
            let flag = e.u8()?;
            e.skip(4)?; // reserved, SMC-Dv2 extension offset
            let roce_gid = e.array()?;
            let max_conns = e.u8()?;
            let max_links = e.u8()?;
            let feature_mask = e.be16()?;
            e.skip(12)?;
            if eid_cnt > MAX_UEIDS || (typev2.has_d() && ism_gid_count as usize > MAX_ISM_GIDS) {
                return Err(ClcError::BadLayout);
            }
            let ueids = e.bytes(eid_cnt * EID_LEN)?;
            v2_len = V2_EXT_LEN + eid_cnt * EID_LEN;
            if typev2.has_d() {
                v2_len += SMCD_V2_EXT_LEN + ism_gid_count as usize * ISM_GID_CHID_LEN;
            }
            v2 = Some(ProposalV2 {
                release: flag >> 4,
                seid: flag & 1 != 0,
                roce_gid,
                max_conns,
                max_links,
                feature_mask,
                ueids,
                ism_gid_count,
            });
        }
        let v1_len = if header.typev1 != SmcType::N {
            PROPOSAL_PREFIX_LEN + v6_len
        } else {
            0
        };
        if len != PROPOSAL_BASE_LEN + PROPOSAL_SMCD_LEN + v1_len + v2_len + TRAILER_LEN {
            return Err(ClcError::BadLength);
        }
        let (ipv4_prefix, ipv6_prefixes) = if header.typev1 != SmcType::N {
            (
                Some(Ipv4Prefix {
                    subnet,
                    len: prefix_len,
                }),
                p.bytes(v6_len)?,
            )
        } else {
            (None, &msg[..0])
        };
        Ok(Proposal {
            header,
            local,
            ipv4_prefix,
            ipv6_prefixes,
            v2,
        })
    }
}

/// What a server can serve, for [`choose_variant`].
#[derive(Clone, Copy, PartialEq, Eq, Debug, Default)]
pub struct ServerCaps {
    /// An SMC-Rv1 (RoCEv1 or RoCEv2 with matching prefix) device is usable.
    pub smcr_v1: bool,
    /// An SMC-Rv2 device with a UEID in common is usable.
    pub smcr_v2: bool,
}

/// The SMC variant a server agrees on.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Variant {
    /// SMC-R, version 1.
    SmcrV1,
    /// SMC-R, version 2.
    SmcrV2,
}

impl Proposal<'_> {
    /// The version a reply to this proposal carries: v2 when the client
    /// speaks v2, else v1.
    pub fn reply_version(&self) -> u8 {
        if self.header.version >= SMC_V2 {
            SMC_V2
        } else {
            SMC_V1
        }
    }
}

/// The server's choice for a proposal, checked the way upstream's listener
/// does: v2 first (it needs the v2 extension, and SMC-Rv2 needs a UEID),
/// then v1. SMC-D is never served. Without a variant both sides can use,
/// the reason to decline with: the device reason of what the client
/// offered (`NoSmcrDevice`, `NoSmcdDevice`, `NoSmcDevice` for both), the v2
/// check that failed when nothing else was offered, or `PeerNoSmc` for a
/// proposal that offers nothing.
pub fn choose_variant(p: &Proposal<'_>, caps: ServerCaps) -> Result<Variant, DeclineReason> {
    let typev2 = if p.header.version >= SMC_V2 {
        SmcType::from_bits(p.header.typev2)
    } else {
        SmcType::N
    };
    let mut v2_reason = None;
    let mut offers_r = false;
    if typev2.has_r() {
        match &p.v2 {
            None => v2_reason = Some(DeclineReason::NoV2Extension),
            Some(ext) if ext.ueids().next().is_none() => v2_reason = Some(DeclineReason::NoUeid),
            Some(_) if caps.smcr_v2 => return Ok(Variant::SmcrV2),
            Some(_) => offers_r = true,
        }
    }
    if p.header.typev1.has_r() {
        if caps.smcr_v1 {
            return Ok(Variant::SmcrV1);
        }
        offers_r = true;
    }
    let offers_d = typev2.has_d() || p.header.typev1.has_d();
    Err(match (offers_r, offers_d, v2_reason) {
        (true, true, _) => DeclineReason::NoSmcDevice,
        (true, false, _) => DeclineReason::NoSmcrDevice,
        (false, true, _) => DeclineReason::NoSmcdDevice,
        (false, false, Some(reason)) => reason,
        (false, false, None) => DeclineReason::PeerNoSmc,
    })
}

/// What a client proposes, for [`encode_proposal`]: SMC-R only, IPv4
/// prefix, and optionally the SMC-Rv2 extension with UEIDs.
#[derive(Clone, Copy, Debug, Default)]
pub struct ProposalParams<'a> {
    /// Offer SMC-Rv1 (needs a RoCEv1-capable device).
    pub v1: bool,
    /// Offer SMC-Rv2 (needs a RoCEv2 device and at least one UEID).
    pub v2: bool,
    /// The client's identity and RoCE port (v1).
    pub local: LocalInfo,
    /// The client's IPv4 prefix.
    pub ipv4_prefix: Ipv4Prefix,
    /// RoCEv2 GID (v2).
    pub roce_gid: [u8; GID_LEN],
    /// UEIDs (v2), at most [`MAX_UEIDS`].
    pub ueids: &'a [[u8; EID_LEN]],
    /// SMC release offered in v2.
    pub release: u8,
    /// Connections and links per link group wanted (release 1).
    pub max_conns: u8,
    /// Links per link group wanted (release 1).
    pub max_links: u8,
    /// Feature mask (release 1).
    pub feature_mask: u16,
}

/// Encodes an SMC-R proposal the way Linux lays it out (the SMC-D area is
/// always present); returns the number of bytes written. A proposal that
/// offers neither v1 nor v2 is valid: it asks a CLC peer to decline, which
/// tells a CLC speaker from a peer that only echoed the TCP option.
pub fn encode_proposal(p: &ProposalParams<'_>, buf: &mut [u8]) -> Result<usize, ClcError> {
    if p.ueids.len() > MAX_UEIDS || (p.v2 && p.ueids.is_empty()) {
        return Err(ClcError::BadLayout);
    }
    let v1_len = if p.v1 { PROPOSAL_PREFIX_LEN } else { 0 };
    let v2_len = if p.v2 {
        V2_EXT_LEN + p.ueids.len() * EID_LEN
    } else {
        0
    };
    let len = PROPOSAL_BASE_LEN + PROPOSAL_SMCD_LEN + v1_len + v2_len + TRAILER_LEN;
    // Linux always sends a v2 header; a v1-only peer reads the v1 part.
    let version = SMC_V2;
    let typev1 = if p.v1 { SmcType::R } else { SmcType::N };
    let typev2 = if p.v2 {
        SmcType::R as u8
    } else {
        SmcType::N as u8
    };
    let mut w = Writer::new(buf, len)?;
    w.header(MsgType::Proposal, len, version, typev1, typev2)?;
    p.local.write(&mut w)?;
    // Without a v1 offer there is no prefix area of its own.
    w.be16(if p.v1 { PROPOSAL_SMCD_LEN as u16 } else { 0 })?;
    // SMC-D area: no ISM device; only the v2 extension offset.
    w.zeros(10)?;
    let v2_off = if p.v2 {
        PROPOSAL_SMCD_LEN - SMCD_V2_EXT_OFFSET_END + v1_len
    } else {
        0
    };
    w.be16(v2_off as u16)?;
    w.zeros(PROPOSAL_SMCD_LEN - SMCD_V2_EXT_OFFSET_END)?;
    if p.v1 {
        w.be32(p.ipv4_prefix.subnet)?;
        w.u8(p.ipv4_prefix.len)?;
        w.zeros(3)?; // reserved, no IPv6 prefixes
    }
    if p.v2 {
        w.u8(p.ueids.len() as u8)?;
        w.u8(0)?;
        w.u8(0)?;
        w.u8(p.release << 4)?;
        w.zeros(4)?;
        w.put(&p.roce_gid)?;
        w.u8(p.max_conns)?;
        w.u8(p.max_links)?;
        w.be16(p.feature_mask)?;
        w.zeros(12)?;
        for u in p.ueids {
            w.put(u)?;
        }
    }
    w.trailer()?;
    Ok(len)
}

/// An SMC-R Accept or Confirm.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub struct SmcrAcceptConfirm {
    /// Accept (server) or Confirm (client).
    pub kind: MsgType,
    /// SMC version.
    pub version: u8,
    /// The server asks for a new link group (first contact, `typev2` bit 1).
    pub first_contact: bool,
    /// The sender's identity and RoCE port.
    pub local: LocalInfo,
    /// Queue pair number (24 bits).
    pub qpn: u32,
    /// rkey of the sender's RMB.
    pub rmb_rkey: u32,
    /// Index of the RMB element in the RMB (1-based).
    pub rmbe_idx: u8,
    /// Connection's alert token.
    pub rmbe_alert_token: u32,
    /// Compressed RMB element size (4 bits).
    pub rmbe_size: u8,
    /// QP MTU (4 bits).
    pub qp_mtu: u8,
    /// DMA address of the RMB.
    pub rmb_dma_addr: u64,
    /// Initial packet sequence number (24 bits).
    pub psn: u32,
    /// The EID both sides agreed on (v2).
    pub eid: [u8; EID_LEN],
}

impl SmcrAcceptConfirm {
    /// Parses a complete SMC-R accept or confirm. v2 messages may carry a
    /// first-contact extension after the fixed part; it is not interpreted
    /// here.
    pub fn parse(msg: &[u8]) -> Result<Self, ClcError> {
        let h = Header::parse(msg)?;
        if h.kind != MsgType::Accept && h.kind != MsgType::Confirm {
            return Err(ClcError::BadType);
        }
        if h.typev1 != SmcType::R {
            return Err(ClcError::BadVersion);
        }
        let len = h.length as usize;
        if (h.version == SMC_V1 && len != SMCR_ACCEPT_CONFIRM_LEN_V1)
            || (h.version != SMC_V1 && len < SMCR_ACCEPT_CONFIRM_LEN_V2)
        {
            return Err(ClcError::BadLength);
        }
        let msg = h.whole(msg, true)?;
        let mut r = Reader::at(msg, HEADER_LEN);
        let local = LocalInfo::read(&mut r)?;
        let qpn = r.be24()?;
        let rmb_rkey = r.be32()?;
        let rmbe_idx = r.u8()?;
        let rmbe_alert_token = r.be32()?;
        let sizes = r.u8()?;
        r.skip(1)?;
        let rmb_dma_addr = r.be64()?;
        r.skip(1)?;
        let psn = r.be24()?;
        let mut eid = [0u8; EID_LEN];
        if h.version != SMC_V1 {
            eid = r.array()?;
        }
        Ok(SmcrAcceptConfirm {
            kind: h.kind,
            version: h.version,
            first_contact: h.typev2 & 2 != 0,
            local,
            qpn,
            rmb_rkey,
            rmbe_idx,
            rmbe_alert_token,
            rmbe_size: sizes >> 4,
            qp_mtu: sizes & 0xf,
            rmb_dma_addr,
            psn,
            eid,
        })
    }

    /// Encodes the fixed part (v1: 68 bytes; v2: 108 bytes, no first
    /// contact extension); returns the number of bytes written.
    pub fn encode(&self, buf: &mut [u8]) -> Result<usize, ClcError> {
        if self.kind != MsgType::Accept && self.kind != MsgType::Confirm {
            return Err(ClcError::BadType);
        }
        let len = if self.version == SMC_V1 {
            SMCR_ACCEPT_CONFIRM_LEN_V1
        } else {
            SMCR_ACCEPT_CONFIRM_LEN_V2
        };
        let mut w = Writer::new(buf, len)?;
        let typev2 = if self.first_contact { 2 } else { 0 };
        w.header(self.kind, len, self.version, SmcType::R, typev2)?;
        self.local.write(&mut w)?;
        w.be24(self.qpn)?;
        w.be32(self.rmb_rkey)?;
        w.u8(self.rmbe_idx)?;
        w.be32(self.rmbe_alert_token)?;
        w.u8((self.rmbe_size << 4) | (self.qp_mtu & 0xf))?;
        w.u8(0)?;
        w.be64(self.rmb_dma_addr)?;
        w.u8(0)?;
        w.be24(self.psn)?;
        if self.version != SMC_V1 {
            w.put(&self.eid)?;
            w.zeros(8)?;
        }
        w.trailer()?;
        Ok(len)
    }
}

#[cfg(test)]
mod tests {
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

    const ID: [u8; 8] = [1, 2, 3, 4, 5, 6, 7, 8];
    const SMCR: [u8; 4] = [0xe2, 0xd4, 0xc3, 0xd9];

    /// A v1 decline laid out as `struct smc_clc_msg_decline`.
    fn decline_v1_bytes() -> [u8; 28] {
        let mut b = [0u8; 28];
        b[..4].copy_from_slice(&SMCR);
        b[4] = 4; // type
        b[5..7].copy_from_slice(&28u16.to_be_bytes());
        b[7] = 0x10; // version 1, typev2 0, typev1 R
        b[8..16].copy_from_slice(&ID);
        b[16..20].copy_from_slice(&0x0303_0000u32.to_be_bytes());
        b[24..28].copy_from_slice(&SMCR);
        b
    }

    /// A v2 decline laid out as `struct smc_clc_msg_decline_v2`.
    fn decline_v2_bytes() -> [u8; 44] {
        let mut b = [0u8; 44];
        b[..4].copy_from_slice(&SMCR);
        b[4] = 4;
        b[5..7].copy_from_slice(&44u16.to_be_bytes());
        b[7] = 0x20;
        b[8..16].copy_from_slice(&ID);
        b[16..20].copy_from_slice(&0x0303_0008u32.to_be_bytes());
        b[20] = 0x20; // os_type Linux in the high nibble
        b[40..44].copy_from_slice(&SMCR);
        b
    }

    const UEID: &[u8; 32] = b"SMC-RS-TESTBED                  ";
    const ROCE_GID: [u8; 16] = [
        0xfe, 0x80, 0, 0, 0, 0, 0, 0, 0x50, 0x54, 0, 0xff, 0xfe, 0x5c, 0, 1,
    ];

    /// What upstream Linux sends over rxe: an SMC-Rv2-only proposal
    /// (typev1 N, so no prefix area of its own) with one UEID.
    fn proposal_v2_bytes() -> [u8; 156] {
        let mut b = [0u8; 156];
        b[..4].copy_from_slice(&SMCR);
        b[4] = 1;
        b[5..7].copy_from_slice(&156u16.to_be_bytes());
        b[7] = 0x22; // version 2, typev2 R, typev1 N
                     // local info (8..38) stays zero without a v1 offer; iparea_offset 0
                     // SMC-D area at 40: v2 extension offset at 50..52
        b[50..52].copy_from_slice(&28u16.to_be_bytes());
        // v2 extension at 40 + 12 + 28 = 80
        b[80] = 1; // one UEID
        b[83] = 0x10; // release 1
        b[88..104].copy_from_slice(&ROCE_GID);
        b[104] = 255; // max_conns
        b[105] = 2; // max_links
        b[106..108].copy_from_slice(&1u16.to_be_bytes());
        b[120..152].copy_from_slice(UEID);
        b[152..156].copy_from_slice(&SMCR);
        b
    }

    /// An SMC-Rv1 proposal with an IPv4 prefix and one IPv6 prefix.
    fn proposal_v1_bytes() -> [u8; 109] {
        let mut b = [0u8; 109];
        b[..4].copy_from_slice(&SMCR);
        b[4] = 1;
        b[5..7].copy_from_slice(&109u16.to_be_bytes());
        b[7] = 0x20 | (2 << 2); // version 2, typev2 N, typev1 R
        b[8..16].copy_from_slice(&ID);
        b[16..32].copy_from_slice(&ROCE_GID);
        b[32..38].copy_from_slice(&[0x52, 0x54, 0, 0x5c, 0, 1]);
        b[38..40].copy_from_slice(&40u16.to_be_bytes());
        // prefix area at 80
        b[80..84].copy_from_slice(&[10, 10, 0, 0]);
        b[84] = 24;
        b[87] = 1; // one IPv6 prefix
        b[88] = 0xfd; // fd00::/64
        b[104] = 64;
        b[105..109].copy_from_slice(&SMCR);
        b
    }

    fn accept_v1_bytes() -> [u8; 68] {
        let mut b = [0u8; 68];
        b[..4].copy_from_slice(&SMCR);
        b[4] = 2;
        b[5..7].copy_from_slice(&68u16.to_be_bytes());
        b[7] = 0x10 | (2 << 2); // version 1, first contact
        b[8..16].copy_from_slice(&ID);
        b[16..32].copy_from_slice(&ROCE_GID);
        b[32..38].copy_from_slice(&[0x52, 0x54, 0, 0x5c, 0, 1]);
        b[38..41].copy_from_slice(&[0x00, 0x01, 0x23]); // qpn
        b[41..45].copy_from_slice(&0xdead_beefu32.to_be_bytes()); // rkey
        b[45] = 1; // rmbe_idx
        b[46..50].copy_from_slice(&0x0000_0042u32.to_be_bytes()); // token
        b[50] = (3 << 4) | 3; // rmbe_size 3, qp_mtu 3
        b[52..60].copy_from_slice(&0x1122_3344_5566_7788u64.to_be_bytes());
        b[61..64].copy_from_slice(&[0, 0, 7]); // psn
        b[64..68].copy_from_slice(&SMCR);
        b
    }

    #[test]
    fn decline_v1_matches_upstream_layout() {
        let d = Decline::new(SMC_V1, ID, DeclineReason::NoSmcDevice);
        let mut buf = [0u8; 64];
        let n = d.encode(&mut buf).unwrap();
        assert_eq!(&buf[..n], &decline_v1_bytes()[..]);
        assert_eq!(Decline::parse(&decline_v1_bytes()).unwrap(), d);
    }

    #[test]
    fn decline_v2_matches_upstream_layout() {
        let d = Decline::new(SMC_V2, ID, DeclineReason::NoUeid);
        let mut buf = [0u8; 64];
        let n = d.encode(&mut buf).unwrap();
        assert_eq!(&buf[..n], &decline_v2_bytes()[..]);
        let p = Decline::parse(&decline_v2_bytes()).unwrap();
        assert_eq!(p, d);
        assert_eq!(p.os_type, OS_LINUX);
    }

    #[test]
    fn decline_sync_error_sets_first_contact_bit() {
        let d = Decline::new(SMC_V2, ID, DeclineReason::SyncError);
        let mut buf = [0u8; 64];
        d.encode(&mut buf).unwrap();
        assert_eq!(buf[7], 0x20 | (2 << 2));
        assert!(Decline::parse(&buf).unwrap().sync_error);
    }

    #[test]
    fn decline_into_small_buffer_fails() {
        let d = Decline::new(SMC_V2, ID, DeclineReason::NoUeid);
        assert_eq!(d.encode(&mut [0u8; 43]), Err(ClcError::BufferTooSmall));
    }

    #[test]
    fn proposal_v2_as_sent_over_rxe() {
        let b = proposal_v2_bytes();
        let p = Proposal::parse(&b).unwrap();
        assert_eq!(p.header.version, SMC_V2);
        assert_eq!(p.header.typev1, SmcType::N);
        assert_eq!(p.ipv4_prefix, None);
        assert_eq!(p.ipv6_prefixes().count(), 0);
        let v2 = p.v2.unwrap();
        assert_eq!(v2.release, 1);
        assert_eq!(v2.roce_gid, ROCE_GID);
        assert_eq!((v2.max_conns, v2.max_links, v2.feature_mask), (255, 2, 1));
        let ueids: [&[u8]; 1] = [UEID];
        assert!(v2.ueids().eq(ueids.iter().copied()));
    }

    #[test]
    fn server_choice_follows_what_the_client_offers() {
        let none = ServerCaps::default();
        let all = ServerCaps {
            smcr_v1: true,
            smcr_v2: true,
        };
        // SMC-Rv2 with a UEID, as upstream sends over rxe.
        let b = proposal_v2_bytes();
        let p = Proposal::parse(&b).unwrap();
        assert_eq!(p.reply_version(), SMC_V2);
        assert_eq!(choose_variant(&p, none), Err(DeclineReason::NoSmcrDevice));
        assert_eq!(choose_variant(&p, all), Ok(Variant::SmcrV2));
        let v1_only = ServerCaps {
            smcr_v1: true,
            smcr_v2: false,
        };
        assert_eq!(choose_variant(&p, v1_only), Err(DeclineReason::NoSmcrDevice));

        // The empty proposal smc_rs clients send offers nothing.
        let mut buf = [0u8; MAX_MESSAGE_LEN];
        let n = encode_proposal(&ProposalParams::default(), &mut buf).unwrap();
        let p = Proposal::parse(&buf[..n]).unwrap();
        assert_eq!(choose_variant(&p, all), Err(DeclineReason::PeerNoSmc));

        // v1 and v2 offered: v2 is preferred, v1 is the way back.
        let ueids = [*UEID];
        let params = ProposalParams {
            v1: true,
            v2: true,
            ueids: &ueids,
            ..ProposalParams::default()
        };
        let n = encode_proposal(&params, &mut buf).unwrap();
        let p = Proposal::parse(&buf[..n]).unwrap();
        assert_eq!(choose_variant(&p, all), Ok(Variant::SmcrV2));
        assert_eq!(choose_variant(&p, v1_only), Ok(Variant::SmcrV1));
        assert_eq!(choose_variant(&p, none), Err(DeclineReason::NoSmcrDevice));

        // v1 only, in the v2 header Linux always sends: replies are v2.
        let params = ProposalParams {
            v1: true,
            v2: false,
            ..ProposalParams::default()
        };
        let n = encode_proposal(&params, &mut buf).unwrap();
        let p = Proposal::parse(&buf[..n]).unwrap();
        assert_eq!(p.reply_version(), SMC_V2);
        assert_eq!(choose_variant(&p, v1_only), Ok(Variant::SmcrV1));
        assert_eq!(choose_variant(&p, none), Err(DeclineReason::NoSmcrDevice));
    }

    #[test]
    fn proposal_encoding_matches_upstream_layout() {
        let ueids = [*UEID];
        let params = ProposalParams {
            v1: false,
            v2: true,
            local: LocalInfo::default(),
            ipv4_prefix: Ipv4Prefix::default(),
            roce_gid: ROCE_GID,
            ueids: &ueids,
            release: 1,
            max_conns: 255,
            max_links: 2,
            feature_mask: 1,
        };
        let mut buf = [0u8; 512];
        let n = encode_proposal(&params, &mut buf).unwrap();
        assert_eq!(&buf[..n], &proposal_v2_bytes()[..]);
    }

    #[test]
    fn proposal_v1_and_v2_round_trip() {
        let ueids = [*UEID, [b'X'; 32]];
        let local = LocalInfo {
            peer_id: ID,
            gid: ROCE_GID,
            mac: [2, 0, 0, 0, 0, 1],
        };
        let params = ProposalParams {
            v1: true,
            v2: true,
            local,
            ipv4_prefix: Ipv4Prefix {
                subnet: 0x0a0a_0000,
                len: 24,
            },
            roce_gid: ROCE_GID,
            ueids: &ueids,
            release: 1,
            max_conns: 16,
            max_links: 1,
            feature_mask: 0,
        };
        let mut buf = [0u8; 512];
        let n = encode_proposal(&params, &mut buf).unwrap();
        let p = Proposal::parse(&buf[..n]).unwrap();
        assert_eq!(p.local, local);
        assert_eq!(
            p.ipv4_prefix,
            Some(Ipv4Prefix {
                subnet: 0x0a0a_0000,
                len: 24
            })
        );
        assert_eq!(p.header.typev1, SmcType::R);
        assert_eq!(p.v2.unwrap().ueids().count(), 2);
    }

    #[test]
    fn empty_proposal_is_valid_and_offers_nothing() {
        let mut buf = [0u8; 128];
        let n = encode_proposal(&ProposalParams::default(), &mut buf).unwrap();
        assert_eq!(n, 84);
        assert_eq!(buf[7], 0x20 | (2 << 2) | 2); // version 2, typev2 N, typev1 N
        let p = Proposal::parse(&buf[..n]).unwrap();
        assert_eq!(p.header.typev1, SmcType::N);
        assert!(p.ipv4_prefix.is_none() && p.v2.is_none());
    }

    #[test]
    fn proposal_v1_with_ipv6_prefix() {
        let b = proposal_v1_bytes();
        let p = Proposal::parse(&b).unwrap();
        assert_eq!(p.local.peer_id, ID);
        assert_eq!(
            p.ipv4_prefix,
            Some(Ipv4Prefix {
                subnet: 0x0a0a_0000,
                len: 24
            })
        );
        let v6: [([u8; 16], u8); 1] = [(
            {
                let mut a = [0u8; 16];
                a[0] = 0xfd;
                a
            },
            64,
        )];
        assert!(p.ipv6_prefixes().eq(v6.iter().copied()));
        assert!(p.v2.is_none());
    }

    #[test]
    fn proposal_with_too_many_prefixes_or_ueids_is_rejected() {
        let mut b = proposal_v1_bytes();
        b[87] = 9;
        assert_eq!(Proposal::parse(&b), Err(ClcError::BadLayout));
        let mut b = proposal_v2_bytes();
        b[80] = 9;
        assert_eq!(Proposal::parse(&b), Err(ClcError::BadLayout));
    }

    #[test]
    fn proposal_with_bad_offsets_is_rejected() {
        let mut b = proposal_v2_bytes();
        b[50..52].copy_from_slice(&173u16.to_be_bytes()); // past the largest layout
        assert_eq!(Proposal::parse(&b), Err(ClcError::BadLayout));
        b[50..52].copy_from_slice(&0u16.to_be_bytes()); // v2 indicated, no extension
        assert_eq!(Proposal::parse(&b), Err(ClcError::BadLayout));
        b[50..52].copy_from_slice(&150u16.to_be_bytes()); // extension starts past the end
        assert_eq!(Proposal::parse(&b), Err(ClcError::Truncated));
        let mut b = proposal_v1_bytes();
        b[38..40].copy_from_slice(&41u16.to_be_bytes()); // IP area past the SMC-D area
        assert_eq!(Proposal::parse(&b), Err(ClcError::BadLayout));
    }

    #[test]
    fn proposal_length_must_match_layout() {
        let mut b = [0u8; 160];
        b[..156].copy_from_slice(&proposal_v2_bytes());
        b[5..7].copy_from_slice(&160u16.to_be_bytes());
        b[156..160].copy_from_slice(&SMCR);
        assert_eq!(Proposal::parse(&b), Err(ClcError::BadLength));
    }

    #[test]
    fn v1_proposal_indicating_nothing_is_rejected() {
        let mut b = proposal_v1_bytes();
        b[7] = 0x10 | 2; // version 1, typev1 N
        assert_eq!(Proposal::parse(&b), Err(ClcError::BadVersion));
    }

    #[test]
    fn accept_v1_round_trip() {
        let a = SmcrAcceptConfirm::parse(&accept_v1_bytes()).unwrap();
        assert_eq!(a.kind, MsgType::Accept);
        assert!(a.first_contact);
        assert_eq!(a.qpn, 0x123);
        assert_eq!(a.rmb_rkey, 0xdead_beef);
        assert_eq!((a.rmbe_size, a.qp_mtu), (3, 3));
        assert_eq!(a.rmb_dma_addr, 0x1122_3344_5566_7788);
        assert_eq!(a.psn, 7);
        let mut buf = [0u8; 128];
        let n = a.encode(&mut buf).unwrap();
        assert_eq!(&buf[..n], &accept_v1_bytes()[..]);
    }

    #[test]
    fn accept_v2_round_trip() {
        let mut a = SmcrAcceptConfirm::parse(&accept_v1_bytes()).unwrap();
        a.version = SMC_V2;
        a.kind = MsgType::Confirm;
        a.eid = *UEID;
        let mut buf = [0u8; 128];
        let n = a.encode(&mut buf).unwrap();
        assert_eq!(n, SMCR_ACCEPT_CONFIRM_LEN_V2);
        assert_eq!(SmcrAcceptConfirm::parse(&buf[..n]).unwrap(), a);
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
        let v: [(&[u8], fn(&[u8]) -> bool); 5] = [
            (&d1, |b| Decline::parse(b).is_err()),
            (&d2, |b| Decline::parse(b).is_err()),
            (&p2, |b| Proposal::parse(b).is_err()),
            (&p1, |b| Proposal::parse(b).is_err()),
            (&a1, |b| SmcrAcceptConfirm::parse(b).is_err()),
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
        let msgs: [&[u8]; 5] = [&d1, &d2, &p2, &p1, &a1];
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
