// SPDX-License-Identifier: GPL-2.0

//! LLC (Link Layer Control) messages, exchanged over the RoCE links of a
//! link group to confirm, add and delete links, to announce and withdraw
//! RMB keys and to test links (RFC 7609, section 3.5; SMC-Rv2 extensions;
//! upstream's `net/smc/smc_llc.c`).
//!
//! Every message starts with a 4-byte header:
//!
//! ```text
//! 0     type: the low nibble is the message type, the high nibble the
//!       LLC version (0 for SMC-Rv1, 2 for SMC-Rv2); CDC's 0xFE shares it
//! 1..3  v1: length (44), then a byte whose low nibble is ADD_LINK's
//!       reject reason; v2: the length as a 16-bit integer in the
//!       sender's byte order (see [`LlcHeader`])
//! 3     flags: 0x80 response, the others depend on the type
//! ```
//!
//! Version 1 messages are 44 bytes long. Version 2 ones are 44 bytes too,
//! except ADD_LINK with its [`AddLinkV2Ext`], REQ_ADD_LINK with more than
//! one GID and DELETE_RKEY with more than nine keys, which upstream sends
//! and receives through the separate v2 buffer of up to
//! [`LLC_V2_MAX_LEN`] bytes: the first 44 bytes land in the normal receive
//! buffer, the rest in the v2 buffer at offset 44. [`LlcMessage::parse`]
//! takes the whole message as one slice, exactly as long as received.
//!
//! The codecs of the message families are in submodules: links
//! (`link.rs`), RMB keys (`rkey.rs`), the request/response flows that
//! order them (`flow.rs`), and the answers of a link group that keeps a
//! single link (`onelink.rs`).

mod flow;
mod link;
mod onelink;
mod rkey;
#[cfg(test)]
mod testdata;

use core::marker::PhantomData;

use super::codec::{CodecError, Reader, Writer};

// In the kernel module, where `wire` is private, a re-export nothing uses
// is an unused import: the kernel uses only some of these.
#[cfg(any(test, feature = "invariants"))]
pub use flow::check_route_invariants;
#[allow(unused_imports)]
pub use flow::{
    end_local, initiate, may_initiate, route, start_for_peer, work_item_takes, FlowState, FlowType,
    LlcAction, Role,
};
#[allow(unused_imports)]
pub use link::{
    AddLink, AddLinkCont, AddLinkRkey, AddLinkV2Ext, ConfirmLink, DeleteLink, ReqAddLink, TestLink,
    RKEYS_PER_CONT,
};
pub use onelink::{OneLink, OneLinkAction, Refusal};
#[allow(unused_imports)]
pub use rkey::{
    ConfirmRkey, ConfirmRkeyCont, DeleteRkey, LinkRkey, CONFIRM_RKEY_CONT_RKEYS,
    CONFIRM_RKEY_OTHERS,
};

/// The length of every v1 LLC message, and the least of a v2 one.
pub const LLC_LEN: usize = 44;
/// The length of the LLC header.
pub const LLC_HEADER_LEN: usize = 4;
/// The largest v2 LLC message (upstream's `SMC_WR_BUF_V2_SIZE`).
pub const LLC_V2_MAX_LEN: usize = 8192;
/// Length of a RoCE GID.
pub const GID_LEN: usize = 16;
/// Length of a link user id and a link group id.
pub const LGR_ID_LEN: usize = 4;

/// Flag of every response.
pub const FLAG_RESP: u8 = 0x80;
/// CONFIRM_LINK: the sender does not use RMBE eyecatchers; upstream
/// requires it in every CONFIRM_LINK it receives.
pub const FLAG_NO_RMBE_EYEC: u8 = 0x03;
/// ADD_LINK response: the add is rejected.
pub const FLAG_ADD_LNK_REJ: u8 = 0x40;
/// DELETE_LINK: delete all links, that is the link group.
pub const FLAG_DEL_LINK_ALL: u8 = 0x40;
/// DELETE_LINK: an orderly deletion.
pub const FLAG_DEL_LINK_ORDERLY: u8 = 0x20;
/// CONFIRM_RKEY / DELETE_RKEY response: the peer may retry.
pub const FLAG_RKEY_RETRY: u8 = 0x10;
/// CONFIRM_RKEY(_CONT) / DELETE_RKEY response: negative.
pub const FLAG_RKEY_NEG: u8 = 0x20;

/// ADD_LINK reject reason: no alternate path available.
pub const REJ_RSN_NO_ALT_PATH: u8 = 1;

/// DELETE_LINK request reason: lost path.
pub const DEL_LOST_PATH: u32 = 0x0001_0000;
/// DELETE_LINK request reason: operator initiated termination.
pub const DEL_OP_INIT_TERM: u32 = 0x0002_0000;
/// DELETE_LINK request reason: program initiated termination.
pub const DEL_PROG_INIT_TERM: u32 = 0x0003_0000;
/// DELETE_LINK request reason: LLC protocol violation.
pub const DEL_PROT_VIOL: u32 = 0x0004_0000;
/// DELETE_LINK request reason: asymmetric link no longer needed.
pub const DEL_NO_ASYM_NEEDED: u32 = 0x0005_0000;
/// DELETE_LINK response reason: unknown link id.
pub const DEL_NOLNK: u32 = 0x0010_0000;
/// DELETE_LINK response reason: unknown link group.
pub const DEL_NOLGR: u32 = 0x0020_0000;

/// Rkeys a v1 DELETE_RKEY carries at most (`SMC_LLC_DEL_RKEY_MAX`).
pub const DEL_RKEY_MAX: usize = 8;
/// Entries a v2 list (ADD_LINK rkeys, DELETE_RKEY keys, REQ_ADD_LINK
/// GIDs) holds at most: its count is one byte (`SMC_LLC_RKEYS_PER_MSG_V2`).
pub const V2_LIST_MAX: usize = 255;

/// Errors in an LLC message. See [`LlcMessage::parse`] for what upstream
/// does with each.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum LlcError {
    /// Fewer bytes than the message needs: less than [`LLC_LEN`], or fewer
    /// than the entries its count announces.
    Truncated,
    /// A type byte upstream has no handler for (any version nibble but 0
    /// and 2, ADD_LINK_CONT and CONFIRM_RKEY_CONT in v2, REQ_ADD_LINK in
    /// v1, unassigned types). Upstream drops such a message silently.
    UnknownType(u8),
    /// The length field is not 44 (v1) or below 44 (v2).
    BadLength,
    /// Encoding: a count that disagrees with its list, or a list longer
    /// than its count field can say.
    BadCount,
    /// Encoding: a field the message's version cannot carry (a v2
    /// extension in a v1 ADD_LINK).
    BadVersion,
    /// The output buffer is too small for the message.
    BufferTooSmall,
}

impl From<CodecError> for LlcError {
    #[inline]
    fn from(e: CodecError) -> Self {
        match e {
            CodecError::Truncated => LlcError::Truncated,
            CodecError::BufferTooSmall => LlcError::BufferTooSmall,
        }
    }
}

/// The LLC version of a message: the high nibble of its type byte.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum LlcVersion {
    /// SMC-Rv1 (nibble 0): 44-byte messages with an 8-bit length.
    V1,
    /// SMC-Rv2 (nibble 2): a 16-bit length, longer messages possible.
    V2,
}

impl LlcVersion {
    /// The version nibble on the wire.
    pub fn nibble(self) -> u8 {
        match self {
            LlcVersion::V1 => 0,
            LlcVersion::V2 => 2,
        }
    }
}

/// LLC message types (upstream's `enum smc_llc_msg_type`, the low nibble
/// of the type byte).
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum LlcKind {
    /// CONFIRM_LINK: the new link works.
    ConfirmLink = 1,
    /// ADD_LINK: add a link to the link group.
    AddLink = 2,
    /// ADD_LINK_CONT: rkeys of the new link (v1).
    AddLinkCont = 3,
    /// DELETE_LINK: delete a link or the link group.
    DeleteLink = 4,
    /// REQ_ADD_LINK: a client asks the server to add a link (v2).
    ReqAddLink = 5,
    /// CONFIRM_RKEY: a new RMB and its rkeys on every link.
    ConfirmRkey = 6,
    /// TEST_LINK: keepalive.
    TestLink = 7,
    /// CONFIRM_RKEY_CONT: more rkeys of a CONFIRM_RKEY (v1; upstream
    /// neither sends nor processes it).
    ConfirmRkeyCont = 8,
    /// DELETE_RKEY: RMBs withdrawn.
    DeleteRkey = 9,
}

/// Every kind, in type order.
pub const ALL_KINDS: [LlcKind; 9] = [
    LlcKind::ConfirmLink,
    LlcKind::AddLink,
    LlcKind::AddLinkCont,
    LlcKind::DeleteLink,
    LlcKind::ReqAddLink,
    LlcKind::ConfirmRkey,
    LlcKind::TestLink,
    LlcKind::ConfirmRkeyCont,
    LlcKind::DeleteRkey,
];

impl LlcKind {
    /// The type byte of this kind in `version`, if upstream has that
    /// message (registers a receive handler for it).
    pub fn type_byte(self, version: LlcVersion) -> Option<u8> {
        let exists = match version {
            LlcVersion::V1 => self != LlcKind::ReqAddLink,
            LlcVersion::V2 => !matches!(self, LlcKind::AddLinkCont | LlcKind::ConfirmRkeyCont),
        };
        exists.then_some((version.nibble() << 4) | self as u8)
    }

    /// The kind and version of a type byte upstream handles.
    pub fn from_type_byte(b: u8) -> Option<(LlcKind, LlcVersion)> {
        let version = match b >> 4 {
            0 => LlcVersion::V1,
            2 => LlcVersion::V2,
            _ => return None,
        };
        let kind = ALL_KINDS.into_iter().find(|k| *k as u8 == b & 0xf)?;
        (kind.type_byte(version) == Some(b)).then_some((kind, version))
    }
}

/// The header of a received LLC message.
///
/// Upstream writes the v2 length in host byte order (`u16 length_v2`
/// set without `htons` in `smc_llc_init_msg_hdr`): little-endian from
/// the x86 and arm64 hosts it runs on, big-endian from s390. The
/// receiver only checks it is at least 44, in its own byte order, and
/// takes the message's true extent from the receive completion. This
/// codec writes and reads it little-endian, as an x86 Linux peer does,
/// and likewise takes the extent from the slice it is given.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub struct LlcHeader {
    /// The message type.
    pub kind: LlcKind,
    /// The LLC version.
    pub version: LlcVersion,
    /// The length field: 44 in v1, at least 44 in v2.
    pub length: u16,
    /// The flags byte.
    pub flags: u8,
}

impl LlcHeader {
    /// Parses the header of a received message and checks it as upstream
    /// does (`smc_wr_rx_demultiplex`, `smc_llc_rx_handler`): a type with
    /// a handler, at least [`LLC_LEN`] bytes, a v1 length of exactly 44, a
    /// v2 length of at least 44.
    pub fn parse(buf: &[u8]) -> Result<LlcHeader, LlcError> {
        let mut r = Reader::new(buf);
        let t = r.u8()?;
        let (kind, version) = LlcKind::from_type_byte(t).ok_or(LlcError::UnknownType(t))?;
        if buf.len() < LLC_LEN {
            return Err(LlcError::Truncated);
        }
        let length = match version {
            LlcVersion::V1 => {
                let l = r.u8()?;
                r.skip(1)?;
                u16::from(l)
            }
            LlcVersion::V2 => u16::from_le_bytes(r.array()?),
        };
        let ok = match version {
            LlcVersion::V1 => usize::from(length) == LLC_LEN,
            LlcVersion::V2 => usize::from(length) >= LLC_LEN,
        };
        if !ok {
            return Err(LlcError::BadLength);
        }
        let flags = r.u8()?;
        Ok(LlcHeader {
            kind,
            version,
            length,
            flags,
        })
    }

    /// The response flag is set.
    pub fn is_response(&self) -> bool {
        self.flags & FLAG_RESP != 0
    }
}

/// Writes the header of a message of `len` bytes. `rej_rsn` is ADD_LINK's
/// reject reason, which only v1 has room for.
fn write_header(
    w: &mut Writer<'_>,
    kind: LlcKind,
    version: LlcVersion,
    len: usize,
    flags: u8,
    rej_rsn: u8,
) -> Result<(), LlcError> {
    let t = kind.type_byte(version).ok_or(LlcError::BadVersion)?;
    w.u8(t)?;
    match version {
        LlcVersion::V1 => {
            w.u8(u8::try_from(len).map_err(|_| LlcError::BadLength)?)?;
            w.u8(rej_rsn & 0xf)?;
        }
        LlcVersion::V2 => {
            let l = u16::try_from(len).map_err(|_| LlcError::BadLength)?;
            w.put(&l.to_le_bytes())?;
        }
    }
    w.u8(flags)?;
    Ok(())
}

/// The response flag, or nothing.
fn resp_flag(resp: bool) -> u8 {
    if resp {
        FLAG_RESP
    } else {
        0
    }
}

/// A fixed-size entry of a list carried in an LLC message.
pub trait Entry: Sized + Copy {
    /// Its length on the wire.
    const LEN: usize;
    /// Reads one entry.
    fn read(r: &mut Reader<'_>) -> Result<Self, CodecError>;
    /// Writes one entry.
    fn write(&self, w: &mut Writer<'_>) -> Result<(), CodecError>;
}

/// An rkey, as DELETE_RKEY lists them.
impl Entry for u32 {
    const LEN: usize = 4;
    fn read(r: &mut Reader<'_>) -> Result<Self, CodecError> {
        r.be32()
    }
    fn write(&self, w: &mut Writer<'_>) -> Result<(), CodecError> {
        w.be32(*self)
    }
}

/// A GID, as REQ_ADD_LINK lists them.
impl Entry for [u8; GID_LEN] {
    const LEN: usize = GID_LEN;
    fn read(r: &mut Reader<'_>) -> Result<Self, CodecError> {
        r.array()
    }
    fn write(&self, w: &mut Writer<'_>) -> Result<(), CodecError> {
        w.put(self)
    }
}

/// A list of entries borrowed in their wire form from a received message,
/// or from a buffer [`EntryList::build`] filled: no allocation.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub struct EntryList<'a, T> {
    bytes: &'a [u8],
    entry: PhantomData<T>,
}

impl<'a, T: Entry> EntryList<'a, T> {
    /// The empty list.
    pub const fn empty() -> Self {
        EntryList {
            bytes: &[],
            entry: PhantomData,
        }
    }

    /// The list in `bytes`, whose length must be a multiple of the entry
    /// length.
    pub fn from_wire(bytes: &'a [u8]) -> Result<Self, LlcError> {
        if bytes.len().checked_rem(T::LEN) != Some(0) {
            return Err(LlcError::BadCount);
        }
        Ok(EntryList {
            bytes,
            entry: PhantomData,
        })
    }

    /// Writes `items` into `buf` and returns the list they make there.
    pub fn build(items: &[T], buf: &'a mut [u8]) -> Result<Self, LlcError> {
        let n = items
            .len()
            .checked_mul(T::LEN)
            .ok_or(LlcError::BufferTooSmall)?;
        let out = buf.get_mut(..n).ok_or(LlcError::BufferTooSmall)?;
        let mut w = Writer::at(&mut *out, 0);
        for it in items {
            it.write(&mut w)?;
        }
        Ok(EntryList {
            bytes: out,
            entry: PhantomData,
        })
    }

    /// The `n` entries at the reader's position, which must be there.
    fn take(r: &mut Reader<'a>, n: usize) -> Result<Self, LlcError> {
        let len = n.checked_mul(T::LEN).ok_or(LlcError::Truncated)?;
        Self::from_wire(r.bytes(len)?)
    }

    /// The number of entries.
    pub fn len(&self) -> usize {
        self.bytes.len().checked_div(T::LEN).unwrap_or(0)
    }

    /// There are none.
    pub fn is_empty(&self) -> bool {
        self.bytes.is_empty()
    }

    /// Entry `i`.
    pub fn get(&self, i: usize) -> Option<T> {
        let start = i.checked_mul(T::LEN)?;
        T::read(&mut Reader::at(self.bytes, start)).ok()
    }

    /// The entries in order.
    pub fn iter(&self) -> impl Iterator<Item = T> + 'a {
        let mut r = Reader::new(self.bytes);
        core::iter::from_fn(move || T::read(&mut r).ok())
    }

    /// The entries in their wire form.
    pub fn as_bytes(&self) -> &'a [u8] {
        self.bytes
    }

    /// Writes the entries.
    fn write(&self, w: &mut Writer<'_>) -> Result<(), LlcError> {
        w.put(self.bytes)?;
        Ok(())
    }
}

/// Any LLC message.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum LlcMessage<'a> {
    /// CONFIRM_LINK.
    ConfirmLink(ConfirmLink),
    /// ADD_LINK.
    AddLink(AddLink<'a>),
    /// ADD_LINK_CONT.
    AddLinkCont(AddLinkCont),
    /// DELETE_LINK.
    DeleteLink(DeleteLink),
    /// REQ_ADD_LINK.
    ReqAddLink(ReqAddLink<'a>),
    /// CONFIRM_RKEY.
    ConfirmRkey(ConfirmRkey),
    /// CONFIRM_RKEY_CONT.
    ConfirmRkeyCont(ConfirmRkeyCont),
    /// DELETE_RKEY.
    DeleteRkey(DeleteRkey<'a>),
    /// TEST_LINK.
    TestLink(TestLink),
}

impl<'a> LlcMessage<'a> {
    /// Parses a received LLC message: `buf` holds exactly the bytes
    /// received (for a v2 message, the 44 bytes of the receive buffer
    /// followed by the rest from the v2 buffer).
    ///
    /// What the receive path should do with an error, mirroring upstream:
    /// every one of them, [`LlcError::UnknownType`] included, means the
    /// message is dropped silently and the link stays up. Upstream's
    /// `smc_llc_protocol_violation` (which terminates the link group
    /// with [`DEL_PROT_VIOL`]) is only reached for types without a case
    /// in its dispatch, and every type it registers has one, so no wire
    /// input reaches it in 6.12. A CDC message (type 0xFE) shares the
    /// receive queue: dispatch on the first byte before calling this.
    pub fn parse(buf: &'a [u8]) -> Result<LlcMessage<'a>, LlcError> {
        let h = LlcHeader::parse(buf)?;
        let mut r = Reader::at(buf, LLC_HEADER_LEN);
        Ok(match h.kind {
            LlcKind::ConfirmLink => LlcMessage::ConfirmLink(ConfirmLink::read(&h, &mut r)?),
            LlcKind::AddLink => LlcMessage::AddLink(AddLink::read(&h, &mut r, buf)?),
            LlcKind::AddLinkCont => LlcMessage::AddLinkCont(AddLinkCont::read(&h, &mut r)?),
            LlcKind::DeleteLink => LlcMessage::DeleteLink(DeleteLink::read(&h, &mut r)?),
            LlcKind::ReqAddLink => LlcMessage::ReqAddLink(ReqAddLink::read(&h, &mut r)?),
            LlcKind::ConfirmRkey => LlcMessage::ConfirmRkey(ConfirmRkey::read(&h, &mut r)?),
            LlcKind::ConfirmRkeyCont => {
                LlcMessage::ConfirmRkeyCont(ConfirmRkeyCont::read(&h, &mut r)?)
            }
            LlcKind::DeleteRkey => LlcMessage::DeleteRkey(DeleteRkey::read(&h, &mut r)?),
            LlcKind::TestLink => LlcMessage::TestLink(TestLink::read(&h, &mut r)?),
        })
    }

    /// Encodes the message into `buf`; returns its length.
    pub fn encode(&self, buf: &mut [u8]) -> Result<usize, LlcError> {
        match self {
            LlcMessage::ConfirmLink(m) => m.encode(buf),
            LlcMessage::AddLink(m) => m.encode(buf),
            LlcMessage::AddLinkCont(m) => m.encode(buf),
            LlcMessage::DeleteLink(m) => m.encode(buf),
            LlcMessage::ReqAddLink(m) => m.encode(buf),
            LlcMessage::ConfirmRkey(m) => m.encode(buf),
            LlcMessage::ConfirmRkeyCont(m) => m.encode(buf),
            LlcMessage::DeleteRkey(m) => m.encode(buf),
            LlcMessage::TestLink(m) => m.encode(buf),
        }
    }

    /// The length [`LlcMessage::encode`] writes: more than [`LLC_LEN`]
    /// only for v2 messages that go through the v2 buffer.
    pub fn encoded_len(&self) -> usize {
        match self {
            LlcMessage::AddLink(m) => m.encoded_len(),
            LlcMessage::ReqAddLink(m) => m.encoded_len(),
            LlcMessage::DeleteRkey(m) => m.encoded_len(),
            _ => LLC_LEN,
        }
    }

    /// The message type.
    pub fn kind(&self) -> LlcKind {
        match self {
            LlcMessage::ConfirmLink(_) => LlcKind::ConfirmLink,
            LlcMessage::AddLink(_) => LlcKind::AddLink,
            LlcMessage::AddLinkCont(_) => LlcKind::AddLinkCont,
            LlcMessage::DeleteLink(_) => LlcKind::DeleteLink,
            LlcMessage::ReqAddLink(_) => LlcKind::ReqAddLink,
            LlcMessage::ConfirmRkey(_) => LlcKind::ConfirmRkey,
            LlcMessage::ConfirmRkeyCont(_) => LlcKind::ConfirmRkeyCont,
            LlcMessage::DeleteRkey(_) => LlcKind::DeleteRkey,
            LlcMessage::TestLink(_) => LlcKind::TestLink,
        }
    }

    /// The LLC version (ADD_LINK_CONT and CONFIRM_RKEY_CONT exist in v1
    /// only, REQ_ADD_LINK in v2 only).
    pub fn version(&self) -> LlcVersion {
        match self {
            LlcMessage::ConfirmLink(m) => m.version,
            LlcMessage::AddLink(m) => m.version,
            LlcMessage::AddLinkCont(_) | LlcMessage::ConfirmRkeyCont(_) => LlcVersion::V1,
            LlcMessage::DeleteLink(m) => m.version,
            LlcMessage::ReqAddLink(_) => LlcVersion::V2,
            LlcMessage::ConfirmRkey(m) => m.version,
            LlcMessage::DeleteRkey(m) => m.version,
            LlcMessage::TestLink(m) => m.version,
        }
    }

    /// The response flag is set.
    pub fn is_response(&self) -> bool {
        match self {
            LlcMessage::ConfirmLink(m) => m.resp,
            LlcMessage::AddLink(m) => m.resp,
            LlcMessage::AddLinkCont(m) => m.resp,
            LlcMessage::DeleteLink(m) => m.resp,
            LlcMessage::ReqAddLink(m) => m.resp,
            LlcMessage::ConfirmRkey(m) => m.resp,
            LlcMessage::ConfirmRkeyCont(m) => m.resp,
            LlcMessage::DeleteRkey(m) => m.resp,
            LlcMessage::TestLink(m) => m.resp,
        }
    }
}

#[cfg(test)]
mod tests;
