// SPDX-License-Identifier: GPL-2.0

//! The RMB key messages: CONFIRM_RKEY, CONFIRM_RKEY_CONT and DELETE_RKEY.
//!
//! Offsets in the layouts are from the start of the message; 0..4 is the
//! header (see the parent module).

use super::{
    resp_flag, write_header, CodecError, Entry, EntryList, LlcError, LlcHeader, LlcKind,
    LlcVersion, Reader, Writer, DEL_RKEY_MAX, FLAG_RKEY_NEG, FLAG_RKEY_RETRY, LLC_LEN, V2_LIST_MAX,
};

/// An RMB's key and address on one link of the link group (`struct
/// smc_rmb_rtoken`, packed), 13 bytes.
#[derive(Clone, Copy, PartialEq, Eq, Debug, Default)]
pub struct LinkRkey {
    /// The link id.
    pub link_id: u8,
    /// The RMB's rkey on that link.
    pub rkey: u32,
    /// The RMB's virtual address on that link.
    pub vaddr: u64,
}

impl Entry for LinkRkey {
    const LEN: usize = 13;
    fn read(r: &mut Reader<'_>) -> Result<Self, CodecError> {
        Ok(LinkRkey {
            link_id: r.u8()?,
            rkey: r.be32()?,
            vaddr: r.be64()?,
        })
    }
    fn write(&self, w: &mut Writer<'_>) -> Result<(), CodecError> {
        w.u8(self.link_id)?;
        w.be32(self.rkey)?;
        w.be64(self.vaddr)
    }
}

/// The flags of an rkey message.
fn rkey_flags(resp: bool, negative: bool, retry: bool) -> u8 {
    let mut f = resp_flag(resp);
    if negative {
        f |= FLAG_RKEY_NEG;
    }
    if retry {
        f |= FLAG_RKEY_RETRY;
    }
    f
}

/// Other links' rkeys a CONFIRM_RKEY carries.
pub const CONFIRM_RKEY_OTHERS: usize = 2;

/// CONFIRM_RKEY (`struct smc_llc_msg_confirm_rkey`, the same in v1 and
/// v2): a new RMB, with its key on the link the message travels over and
/// on the group's other links. The receiver answers with the same message,
/// response flag set, negative (and retry) when it cannot use it.
///
/// ```text
///  3 flags: 0x20 negative, 0x10 retry
///  4 number of other links' rkeys (first byte of rtoken[0])
///  5..9 rkey   9..17 virtual address on this link
/// 17..30, 30..43 other links' rkeys (link id, rkey, address)
/// 43 reserved
/// ```
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub struct ConfirmRkey {
    /// LLC version.
    pub version: LlcVersion,
    /// A response.
    pub resp: bool,
    /// Negative response.
    pub negative: bool,
    /// The requester may retry.
    pub retry: bool,
    /// How many of `others` are used. Upstream answers negative with
    /// retry when it is above 3, and uses `min(num_rkeys, 2)` entries.
    pub num_rkeys: u8,
    /// The RMB's rkey on the link the message travels over.
    pub rkey: u32,
    /// The RMB's virtual address on that link.
    pub vaddr: u64,
    /// The RMB on the other links; unused entries zero.
    pub others: [LinkRkey; CONFIRM_RKEY_OTHERS],
}

impl ConfirmRkey {
    pub(super) fn read(h: &LlcHeader, r: &mut Reader<'_>) -> Result<Self, LlcError> {
        let num_rkeys = r.u8()?;
        let rkey = r.be32()?;
        let vaddr = r.be64()?;
        let mut others = [LinkRkey::default(); CONFIRM_RKEY_OTHERS];
        for o in others.iter_mut() {
            *o = LinkRkey::read(r)?;
        }
        Ok(ConfirmRkey {
            version: h.version,
            resp: h.is_response(),
            negative: h.flags & FLAG_RKEY_NEG != 0,
            retry: h.flags & FLAG_RKEY_RETRY != 0,
            num_rkeys,
            rkey,
            vaddr,
            others,
        })
    }

    /// The entries of `others` upstream uses, or `None` when it answers
    /// negative (`smc_llc_rmt_conf_rkey`: more than 3).
    pub fn used(&self) -> Option<&[LinkRkey]> {
        if self.num_rkeys > 3 {
            return None;
        }
        let n = usize::from(self.num_rkeys).min(CONFIRM_RKEY_OTHERS);
        self.others.get(..n)
    }

    /// Encodes the 44-byte message; returns its length.
    pub fn encode(&self, buf: &mut [u8]) -> Result<usize, LlcError> {
        let mut w = Writer::new(buf, LLC_LEN)?;
        let flags = rkey_flags(self.resp, self.negative, self.retry);
        write_header(
            &mut w,
            LlcKind::ConfirmRkey,
            self.version,
            LLC_LEN,
            flags,
            0,
        )?;
        w.u8(self.num_rkeys)?;
        w.be32(self.rkey)?;
        w.be64(self.vaddr)?;
        for o in &self.others {
            o.write(&mut w)?;
        }
        Ok(LLC_LEN)
    }
}

/// Rkeys a CONFIRM_RKEY_CONT carries.
pub const CONFIRM_RKEY_CONT_RKEYS: usize = 3;

/// CONFIRM_RKEY_CONT (RFC 7609, v1 only): more links' rkeys of a
/// CONFIRM_RKEY. Upstream defines no struct for it, never sends it (three
/// links' keys fit into one CONFIRM_RKEY) and drops it on receipt; the
/// layout is RFC 7609's.
///
/// ```text
///  3 flags: 0x20 negative
///  4 number of rkeys still to come   5..18, 18..31, 31..44 rkeys
/// ```
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub struct ConfirmRkeyCont {
    /// A response.
    pub resp: bool,
    /// Negative response.
    pub negative: bool,
    /// The rkeys still to come, these included.
    pub num_rkeys: u8,
    /// The entries; unused ones zero.
    pub rkeys: [LinkRkey; CONFIRM_RKEY_CONT_RKEYS],
}

impl ConfirmRkeyCont {
    pub(super) fn read(h: &LlcHeader, r: &mut Reader<'_>) -> Result<Self, LlcError> {
        let num_rkeys = r.u8()?;
        let mut rkeys = [LinkRkey::default(); CONFIRM_RKEY_CONT_RKEYS];
        for k in rkeys.iter_mut() {
            *k = LinkRkey::read(r)?;
        }
        Ok(ConfirmRkeyCont {
            resp: h.is_response(),
            negative: h.flags & FLAG_RKEY_NEG != 0,
            num_rkeys,
            rkeys,
        })
    }

    /// Encodes the 44-byte message; returns its length.
    pub fn encode(&self, buf: &mut [u8]) -> Result<usize, LlcError> {
        let mut w = Writer::new(buf, LLC_LEN)?;
        let flags = rkey_flags(self.resp, self.negative, false);
        write_header(
            &mut w,
            LlcKind::ConfirmRkeyCont,
            LlcVersion::V1,
            LLC_LEN,
            flags,
            0,
        )?;
        w.u8(self.num_rkeys)?;
        for k in &self.rkeys {
            k.write(&mut w)?;
        }
        Ok(LLC_LEN)
    }
}

/// Offset of the rkeys in a DELETE_RKEY.
const DELETE_RKEY_KEYS_OFF: usize = 8;

/// DELETE_RKEY (`struct smc_llc_msg_delete_rkey`, v2 `struct
/// smc_llc_msg_delete_rkey_v2`): RMBs withdrawn. The receiver answers
/// with the same message, response flag set, negative when some rkeys
/// were unknown.
///
/// ```text
///  3 flags: 0x20 negative, 0x10 retry
///  4 number of rkeys
///  5 v1: bit mask of unknown rkeys (0x80 the first); v2: their number
///  6..8 reserved
///  v1: 8..40 eight rkey slots, 40..44 reserved
///  v2: 8.. the rkeys (nine fit in 44 bytes, more go to the v2 buffer)
/// ```
///
/// Which rkeys [`DeleteRkey::rkeys`] holds, as upstream reads them:
/// v1: the first `min(num_rkeys, 8)` slots (a response echoes them);
/// v2 request: `num_rkeys` rkeys, which must all be in the message;
/// v2 response: none (upstream clears them and keeps the count).
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub struct DeleteRkey<'a> {
    /// LLC version.
    pub version: LlcVersion,
    /// A response.
    pub resp: bool,
    /// Negative response: some rkeys were unknown.
    pub negative: bool,
    /// The requester may retry.
    pub retry: bool,
    /// The number of rkeys, as sent.
    pub num_rkeys: u8,
    /// Response: v1 a bit mask of the unknown rkeys (0x80 is the
    /// first), v2 their number.
    pub err_mask: u8,
    /// The rkeys (see above).
    pub rkeys: EntryList<'a, u32>,
}

impl<'a> DeleteRkey<'a> {
    pub(super) fn read(h: &LlcHeader, r: &mut Reader<'a>) -> Result<Self, LlcError> {
        let num_rkeys = r.u8()?;
        let err_mask = r.u8()?;
        r.skip(2)?;
        let resp = h.is_response();
        let n = match (h.version, resp) {
            (LlcVersion::V1, _) => usize::from(num_rkeys).min(DEL_RKEY_MAX),
            (LlcVersion::V2, false) => usize::from(num_rkeys),
            (LlcVersion::V2, true) => 0,
        };
        Ok(DeleteRkey {
            version: h.version,
            resp,
            negative: h.flags & FLAG_RKEY_NEG != 0,
            retry: h.flags & FLAG_RKEY_RETRY != 0,
            num_rkeys,
            err_mask,
            rkeys: EntryList::take(r, n)?,
        })
    }

    /// The number of rkeys [`DeleteRkey::rkeys`] must hold (see there).
    fn expected_rkeys(&self) -> usize {
        match (self.version, self.resp) {
            (LlcVersion::V1, _) => usize::from(self.num_rkeys).min(DEL_RKEY_MAX),
            (LlcVersion::V2, false) => usize::from(self.num_rkeys),
            (LlcVersion::V2, true) => 0,
        }
    }

    /// The encoded length: 44, or more for a v2 request of more than nine
    /// rkeys.
    pub fn encoded_len(&self) -> usize {
        match self.version {
            LlcVersion::V1 => LLC_LEN,
            LlcVersion::V2 => DELETE_RKEY_KEYS_OFF
                .saturating_add(self.rkeys.as_bytes().len())
                .max(LLC_LEN),
        }
    }

    /// Encodes the message; returns its length. The rkeys must be as many
    /// as [`DeleteRkey::rkeys`] describes for the version and direction.
    pub fn encode(&self, buf: &mut [u8]) -> Result<usize, LlcError> {
        if self.rkeys.len() != self.expected_rkeys() || self.rkeys.len() > V2_LIST_MAX {
            return Err(LlcError::BadCount);
        }
        let len = self.encoded_len();
        let mut w = Writer::new(buf, len)?;
        let flags = rkey_flags(self.resp, self.negative, self.retry);
        write_header(&mut w, LlcKind::DeleteRkey, self.version, len, flags, 0)?;
        w.u8(self.num_rkeys)?;
        w.u8(self.err_mask)?;
        w.zeros(2)?;
        self.rkeys.write(&mut w)?;
        // Unused slots (v1) and the rest of 44 bytes (v2) stay zero.
        Ok(len)
    }
}
