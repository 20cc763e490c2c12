// SPDX-License-Identifier: GPL-2.0

//! The link messages: CONFIRM_LINK, ADD_LINK (with its v2 extension),
//! ADD_LINK_CONT, DELETE_LINK, REQ_ADD_LINK and TEST_LINK.
//!
//! Offsets in the layouts are from the start of the message; 0..4 is the
//! header (see the parent module).

use super::{
    resp_flag, write_header, CodecError, Entry, EntryList, LlcError, LlcHeader, LlcKind,
    LlcVersion, Reader, Writer, FLAG_ADD_LNK_REJ, FLAG_DEL_LINK_ALL, FLAG_DEL_LINK_ORDERLY,
    FLAG_NO_RMBE_EYEC, GID_LEN, LGR_ID_LEN, LLC_LEN, V2_LIST_MAX,
};

/// Writes the low 24 bits of `v` (queue pair and packet sequence numbers).
fn put24(w: &mut Writer<'_>, v: u32) -> Result<(), LlcError> {
    w.be24(v)?;
    Ok(())
}

/// CONFIRM_LINK (`struct smc_llc_msg_confirm_link`): the server confirms a
/// new link over it, the client answers over it.
///
/// ```text
///  4..10 sender MAC   10..26 sender GID   26..29 sender QP number
/// 29 link number      30..34 link user id 34 max links  35 max conns
/// 36..44 reserved
/// ```
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub struct ConfirmLink {
    /// LLC version.
    pub version: LlcVersion,
    /// A response.
    pub resp: bool,
    /// The sender uses no RMBE eyecatchers ([`FLAG_NO_RMBE_EYEC`]);
    /// upstream sends it always and fails the link without it
    /// (`smc_llc_eval_conf_link`).
    pub no_rmbe_eyec: bool,
    /// MAC of the sender's RoCE port.
    pub sender_mac: [u8; 6],
    /// GID of the sender's RoCE port.
    pub sender_gid: [u8; GID_LEN],
    /// The sender's queue pair number (24 bits).
    pub sender_qpn: u32,
    /// The link id; the server assigns it.
    pub link_num: u8,
    /// The sender's link user id (diagnostics only).
    pub link_uid: [u8; LGR_ID_LEN],
    /// Maximum links per link group (v2.1: negotiated; else 2).
    pub max_links: u8,
    /// Maximum connections per link group (v2.1; else 0).
    pub max_conns: u8,
}

impl ConfirmLink {
    pub(super) fn read(h: &LlcHeader, r: &mut Reader<'_>) -> Result<Self, LlcError> {
        let m = ConfirmLink {
            version: h.version,
            resp: h.is_response(),
            no_rmbe_eyec: h.flags & FLAG_NO_RMBE_EYEC != 0,
            sender_mac: r.array()?,
            sender_gid: r.array()?,
            sender_qpn: r.be24()?,
            link_num: r.u8()?,
            link_uid: r.array()?,
            max_links: r.u8()?,
            max_conns: r.u8()?,
        };
        Ok(m)
    }

    /// Encodes the 44-byte message; returns its length.
    pub fn encode(&self, buf: &mut [u8]) -> Result<usize, LlcError> {
        let mut w = Writer::new(buf, LLC_LEN)?;
        let mut flags = resp_flag(self.resp);
        if self.no_rmbe_eyec {
            flags |= FLAG_NO_RMBE_EYEC;
        }
        write_header(
            &mut w,
            LlcKind::ConfirmLink,
            self.version,
            LLC_LEN,
            flags,
            0,
        )?;
        w.put(&self.sender_mac)?;
        w.put(&self.sender_gid)?;
        put24(&mut w, self.sender_qpn)?;
        w.u8(self.link_num)?;
        w.put(&self.link_uid)?;
        w.u8(self.max_links)?;
        w.u8(self.max_conns)?;
        Ok(LLC_LEN)
    }
}

/// One RMB's keys for a new link (`struct smc_llc_msg_add_link_cont_rt`),
/// 16 bytes: the key of the RMB on the link the message travels over
/// (to find the RMB), and its key and address on the new link.
#[derive(Clone, Copy, PartialEq, Eq, Debug, Default)]
pub struct AddLinkRkey {
    /// The RMB's rkey on the sending link.
    pub rmb_key: u32,
    /// The RMB's rkey on the new link.
    pub rmb_key_new: u32,
    /// The RMB's virtual address on the new link.
    pub rmb_vaddr_new: u64,
}

impl Entry for AddLinkRkey {
    const LEN: usize = 16;
    fn read(r: &mut Reader<'_>) -> Result<Self, CodecError> {
        Ok(AddLinkRkey {
            rmb_key: r.be32()?,
            rmb_key_new: r.be32()?,
            rmb_vaddr_new: r.be64()?,
        })
    }
    fn write(&self, w: &mut Writer<'_>) -> Result<(), CodecError> {
        w.be32(self.rmb_key)?;
        w.be32(self.rmb_key_new)?;
        w.be64(self.rmb_vaddr_new)
    }
}

/// The SMC-Rv2 extension after a v2 ADD_LINK (`struct
/// smc_llc_msg_add_link_v2_ext`, packed), carrying the rkeys that v1
/// exchanges in ADD_LINK_CONT messages.
///
/// ```text
/// 44 bit 0x80: direct (no gateway)   45 reserved
/// 46..62 client target GID           62..70 reserved
/// 70..72 number of rkeys, in the sender's byte order (see below)
/// 72..   the rkeys, 16 bytes each
/// ```
///
/// Upstream writes the count as a host-order `u16` (little-endian from
/// x86 hosts) and reads only its low byte through `min_t(u8, ...)`. This
/// codec writes it little-endian and rejects counts above 255.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub struct AddLinkV2Ext<'a> {
    /// The new link's peer is reached without a gateway.
    pub direct: bool,
    /// The GID the client is to use as the new link's target.
    pub client_target_gid: [u8; GID_LEN],
    /// One entry per RMB of the link group.
    pub rkeys: EntryList<'a, AddLinkRkey>,
}

/// Offset of the v2 extension in an ADD_LINK.
const ADD_LINK_EXT_OFF: usize = LLC_LEN;
/// Length of the v2 extension before its rkeys.
const ADD_LINK_EXT_LEN: usize = 28;

/// ADD_LINK (`struct smc_llc_msg_add_link`): the server proposes a new
/// link, the client answers with its end of it or rejects it; in v1 a
/// client may also suggest one (a request the server answers with its own
/// ADD_LINK flow).
///
/// ```text
///  2 (v1) low nibble: reject reason   3 flags: 0x40 reject
///  4..10 sender MAC   10..12 reserved  12..28 sender GID
/// 28..31 sender QP number   31 link number
/// 32 low nibble: QP MTU     33..36 initial PSN   36..44 reserved
/// 44..   v2 extension (v2 only, see AddLinkV2Ext)
/// ```
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub struct AddLink<'a> {
    /// LLC version.
    pub version: LlcVersion,
    /// A response.
    pub resp: bool,
    /// The response rejects the link ([`FLAG_ADD_LNK_REJ`]).
    pub reject: bool,
    /// Why (v1 only, 4 bits, e.g. [`super::REJ_RSN_NO_ALT_PATH`]). In v2
    /// its byte belongs to the length: upstream's v2 reject carries none,
    /// and encoding a v2 message leaves it out.
    pub reject_reason: u8,
    /// MAC of the sender's RoCE port for the new link.
    pub sender_mac: [u8; 6],
    /// GID of the sender's RoCE port for the new link.
    pub sender_gid: [u8; GID_LEN],
    /// The sender's queue pair number of the new link (24 bits).
    pub sender_qpn: u32,
    /// The new link's id.
    pub link_num: u8,
    /// The new link's path MTU, as an IB MTU enum (4 bits; 0 means none,
    /// which upstream's client rejects).
    pub qp_mtu: u8,
    /// The new link's initial packet sequence number (24 bits).
    pub initial_psn: u32,
    /// The v2 extension: in every v2 ADD_LINK longer than 44 bytes.
    pub ext: Option<AddLinkV2Ext<'a>>,
}

impl<'a> AddLink<'a> {
    pub(super) fn read(h: &LlcHeader, r: &mut Reader<'a>, msg: &'a [u8]) -> Result<Self, LlcError> {
        let reject_reason = match h.version {
            LlcVersion::V1 => msg.get(2).map_or(0, |b| b & 0xf),
            LlcVersion::V2 => 0,
        };
        let sender_mac = r.array()?;
        r.skip(2)?;
        let sender_gid = r.array()?;
        let sender_qpn = r.be24()?;
        let link_num = r.u8()?;
        let qp_mtu = r.u8()? & 0xf;
        let initial_psn = r.be24()?;
        let ext = if h.version == LlcVersion::V2 && msg.len() > LLC_LEN {
            let mut e = Reader::at(msg, ADD_LINK_EXT_OFF);
            let direct = e.u8()? & 0x80 != 0;
            e.skip(1)?;
            let client_target_gid = e.array()?;
            e.skip(8)?;
            let n = usize::from(u16::from_le_bytes(e.array()?));
            if n > V2_LIST_MAX {
                return Err(LlcError::BadCount);
            }
            Some(AddLinkV2Ext {
                direct,
                client_target_gid,
                rkeys: EntryList::take(&mut e, n)?,
            })
        } else {
            None
        };
        Ok(AddLink {
            version: h.version,
            resp: h.is_response(),
            reject: h.flags & FLAG_ADD_LNK_REJ != 0,
            reject_reason,
            sender_mac,
            sender_gid,
            sender_qpn,
            link_num,
            qp_mtu,
            initial_psn,
            ext,
        })
    }

    /// The encoded length: 44, or more with the v2 extension.
    pub fn encoded_len(&self) -> usize {
        match &self.ext {
            None => LLC_LEN,
            Some(e) => ADD_LINK_EXT_OFF
                .saturating_add(ADD_LINK_EXT_LEN)
                .saturating_add(e.rkeys.as_bytes().len()),
        }
    }

    /// Encodes the message; returns its length.
    pub fn encode(&self, buf: &mut [u8]) -> Result<usize, LlcError> {
        if self.ext.is_some() && self.version != LlcVersion::V2 {
            return Err(LlcError::BadVersion);
        }
        let len = self.encoded_len();
        let mut w = Writer::new(buf, len)?;
        let mut flags = resp_flag(self.resp);
        if self.reject {
            flags |= FLAG_ADD_LNK_REJ;
        }
        write_header(
            &mut w,
            LlcKind::AddLink,
            self.version,
            len,
            flags,
            self.reject_reason,
        )?;
        w.put(&self.sender_mac)?;
        w.zeros(2)?;
        w.put(&self.sender_gid)?;
        put24(&mut w, self.sender_qpn)?;
        w.u8(self.link_num)?;
        w.u8(self.qp_mtu & 0xf)?;
        put24(&mut w, self.initial_psn)?;
        w.zeros(8)?;
        if let Some(e) = &self.ext {
            let n = u16::try_from(e.rkeys.len())
                .ok()
                .filter(|n| usize::from(*n) <= V2_LIST_MAX)
                .ok_or(LlcError::BadCount)?;
            w.u8(if e.direct { 0x80 } else { 0 })?;
            w.zeros(1)?;
            w.put(&e.client_target_gid)?;
            w.zeros(8)?;
            w.put(&n.to_le_bytes())?;
            e.rkeys.write(&mut w)?;
        }
        Ok(len)
    }
}

/// Rkeys per ADD_LINK_CONT (`SMC_LLC_RKEYS_PER_CONT_MSG`).
pub const RKEYS_PER_CONT: usize = 2;

/// ADD_LINK_CONT (`struct smc_llc_msg_add_link_cont`, v1 only): two
/// RMBs' keys on the new link per message, both sides in turn until
/// neither has any left (upstream's client sets the response flag on
/// its own, the server does not).
///
/// ```text
///  4 link number   5 number of rkeys still to come, this message's
///  included        6..8 reserved   8..24, 24..40 rkeys   40..44 reserved
/// ```
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub struct AddLinkCont {
    /// A response.
    pub resp: bool,
    /// The new link's id.
    pub link_num: u8,
    /// The rkeys the sender still has to send, these included; upstream
    /// uses the first `min(num_rkeys, 2)` entries.
    pub num_rkeys: u8,
    /// The entries, unused ones zero.
    pub rkeys: [AddLinkRkey; RKEYS_PER_CONT],
}

impl AddLinkCont {
    pub(super) fn read(h: &LlcHeader, r: &mut Reader<'_>) -> Result<Self, LlcError> {
        let link_num = r.u8()?;
        let num_rkeys = r.u8()?;
        r.skip(2)?;
        let mut rkeys = [AddLinkRkey::default(); RKEYS_PER_CONT];
        for k in rkeys.iter_mut() {
            *k = AddLinkRkey::read(r)?;
        }
        Ok(AddLinkCont {
            resp: h.is_response(),
            link_num,
            num_rkeys,
            rkeys,
        })
    }

    /// The entries upstream uses: the first `min(num_rkeys, 2)`.
    pub fn used(&self) -> &[AddLinkRkey] {
        let n = usize::from(self.num_rkeys).min(RKEYS_PER_CONT);
        self.rkeys.get(..n).unwrap_or(&[])
    }

    /// Encodes the 44-byte message; returns its length.
    pub fn encode(&self, buf: &mut [u8]) -> Result<usize, LlcError> {
        let mut w = Writer::new(buf, LLC_LEN)?;
        write_header(
            &mut w,
            LlcKind::AddLinkCont,
            LlcVersion::V1,
            LLC_LEN,
            resp_flag(self.resp),
            0,
        )?;
        w.u8(self.link_num)?;
        w.u8(self.num_rkeys)?;
        w.zeros(2)?;
        for k in &self.rkeys {
            k.write(&mut w)?;
        }
        Ok(LLC_LEN)
    }
}

/// DELETE_LINK (`struct smc_llc_msg_del_link`, packed): delete one link,
/// or with [`FLAG_DEL_LINK_ALL`] the whole link group.
///
/// ```text
///  3 flags: 0x40 all, 0x20 orderly
///  4 link number   5..9 reason   9..44 reserved
/// ```
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub struct DeleteLink {
    /// LLC version.
    pub version: LlcVersion,
    /// A response.
    pub resp: bool,
    /// Delete every link: the link group ends.
    pub all: bool,
    /// An orderly deletion.
    pub orderly: bool,
    /// The link to delete (0 with `all`).
    pub link_num: u8,
    /// Why ([`super::DEL_LOST_PATH`] and the other `DEL_` codes).
    pub reason: u32,
}

impl DeleteLink {
    pub(super) fn read(h: &LlcHeader, r: &mut Reader<'_>) -> Result<Self, LlcError> {
        Ok(DeleteLink {
            version: h.version,
            resp: h.is_response(),
            all: h.flags & FLAG_DEL_LINK_ALL != 0,
            orderly: h.flags & FLAG_DEL_LINK_ORDERLY != 0,
            link_num: r.u8()?,
            reason: r.be32()?,
        })
    }

    /// Encodes the 44-byte message; returns its length.
    pub fn encode(&self, buf: &mut [u8]) -> Result<usize, LlcError> {
        let mut w = Writer::new(buf, LLC_LEN)?;
        let mut flags = resp_flag(self.resp);
        if self.all {
            flags |= FLAG_DEL_LINK_ALL;
        }
        if self.orderly {
            flags |= FLAG_DEL_LINK_ORDERLY;
        }
        write_header(&mut w, LlcKind::DeleteLink, self.version, LLC_LEN, flags, 0)?;
        w.u8(self.link_num)?;
        w.be32(self.reason)?;
        Ok(LLC_LEN)
    }
}

/// Offset of the GIDs in a REQ_ADD_LINK.
const REQ_ADD_LINK_GIDS_OFF: usize = 28;

/// REQ_ADD_LINK (`struct smc_llc_msg_req_add_link_v2`, v2 only): a
/// client with more than one usable GID asks the server to add a link;
/// upstream's server only looks at the first GID. The response (upstream
/// clears everything after the header) says the server will not.
///
/// ```text
///  4..24 reserved   24 GID count   25..28 reserved   28.. GIDs
/// ```
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub struct ReqAddLink<'a> {
    /// A response.
    pub resp: bool,
    /// The client's GIDs.
    pub gids: EntryList<'a, [u8; GID_LEN]>,
}

impl<'a> ReqAddLink<'a> {
    pub(super) fn read(h: &LlcHeader, r: &mut Reader<'a>) -> Result<Self, LlcError> {
        r.skip(20)?;
        let n = usize::from(r.u8()?);
        r.skip(3)?;
        Ok(ReqAddLink {
            resp: h.is_response(),
            gids: EntryList::take(r, n)?,
        })
    }

    /// The encoded length: 44, or more with two GIDs or more.
    pub fn encoded_len(&self) -> usize {
        REQ_ADD_LINK_GIDS_OFF
            .saturating_add(self.gids.as_bytes().len())
            .max(LLC_LEN)
    }

    /// Encodes the message; returns its length.
    pub fn encode(&self, buf: &mut [u8]) -> Result<usize, LlcError> {
        let n = u8::try_from(self.gids.len()).map_err(|_| LlcError::BadCount)?;
        let len = self.encoded_len();
        let mut w = Writer::new(buf, len)?;
        write_header(
            &mut w,
            LlcKind::ReqAddLink,
            LlcVersion::V2,
            len,
            resp_flag(self.resp),
            0,
        )?;
        w.zeros(20)?;
        w.u8(n)?;
        w.zeros(3)?;
        self.gids.write(&mut w)?;
        Ok(len)
    }
}

/// TEST_LINK (`struct smc_llc_msg_test_link`): keepalive; the receiver
/// echoes it with the response flag.
///
/// ```text
///  4..20 user data   20..44 reserved
/// ```
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub struct TestLink {
    /// LLC version.
    pub version: LlcVersion,
    /// A response.
    pub resp: bool,
    /// Echoed back unchanged (upstream sends zeros).
    pub user_data: [u8; 16],
}

impl TestLink {
    pub(super) fn read(h: &LlcHeader, r: &mut Reader<'_>) -> Result<Self, LlcError> {
        Ok(TestLink {
            version: h.version,
            resp: h.is_response(),
            user_data: r.array()?,
        })
    }

    /// Encodes the 44-byte message; returns its length.
    pub fn encode(&self, buf: &mut [u8]) -> Result<usize, LlcError> {
        let mut w = Writer::new(buf, LLC_LEN)?;
        write_header(
            &mut w,
            LlcKind::TestLink,
            self.version,
            LLC_LEN,
            resp_flag(self.resp),
            0,
        )?;
        w.put(&self.user_data)?;
        Ok(LLC_LEN)
    }
}
