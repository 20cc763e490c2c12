// SPDX-License-Identifier: GPL-2.0

//! The SMC-R CLC Accept (server) and Confirm (client): the RoCE endpoint
//! and the RMB of each side.

use super::first_contact::{read_extensions, FirstContactExt, GidList, FCE_LEN_V20, FCE_LEN_V2X};
use super::{
    write_trailer, ClcError, Header, LocalInfo, MsgType, Reader, SmcType, EID_LEN, HEADER_LEN,
    SMCR_ACCEPT_CONFIRM_LEN_V1, SMCR_ACCEPT_CONFIRM_LEN_V2, SMC_V1, TRAILER_LEN,
};

/// Where the first contact extension starts in a v2 message: after the
/// fixed part, before the trailer.
const V2_FIXED_END: usize = SMCR_ACCEPT_CONFIRM_LEN_V2 - TRAILER_LEN;

/// An SMC-R Accept or Confirm.
///
/// Lengths on the wire: v1 68 bytes; v2 108 without first contact; v2 with
/// first contact 108 + 52 for the extension (an accept: 160), and in a
/// confirm 4 + 16 per GID more for the GID list (one GID: 180, two: 196).
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
    /// v2 with first contact: the first contact extension. Present exactly
    /// then.
    pub fce: Option<FirstContactExt>,
    /// v2 with first contact: the GID list after the extension, which
    /// Linux sends in a confirm and never in an accept.
    pub gid_list: Option<GidList>,
}

/// Whether `mtu` is an `enum ib_mtu` a queue pair can be set to
/// (`IB_MTU_256` 1 to `IB_MTU_4096` 5). A peer's `qp_mtu` outside that
/// range must not reach the device: 0 would make the path MTU of the
/// smaller of both sides 0, which rxe turns into an MTU of -1.
pub fn valid_qp_mtu(mtu: u8) -> bool {
    (1..=5).contains(&mtu)
}

impl SmcrAcceptConfirm {
    /// Parses a complete SMC-R accept or confirm.
    ///
    /// The length must match the layout exactly: 68 bytes in v1, 108 in v2
    /// without first contact; with first contact, the extension (36 bytes
    /// from release 0 senders before Linux 6.5, else 52) and optionally a
    /// GID list whose count fills the rest. Linux 6.12 itself only checks
    /// for at least 108 bytes and reads the extension wherever it would
    /// be; we refuse what it would misread.
    pub fn parse(msg: &[u8]) -> Result<Self, ClcError> {
        let (h, first_contact) = Header::parse_accept_confirm(msg, SmcType::R)?;
        let len = h.length as usize;
        let v2 = h.version != SMC_V1;
        let len_ok = if !v2 {
            len == SMCR_ACCEPT_CONFIRM_LEN_V1
        } else if first_contact {
            len >= SMCR_ACCEPT_CONFIRM_LEN_V2 + FCE_LEN_V20
        } else {
            len == SMCR_ACCEPT_CONFIRM_LEN_V2
        };
        if !len_ok {
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
        let (mut fce, mut gid_list) = (None, None);
        if v2 {
            eid = r.array()?;
            if first_contact {
                let body = msg
                    .get(V2_FIXED_END..len - TRAILER_LEN)
                    .ok_or(ClcError::BadLength)?;
                let (ext, gids) = read_extensions(body)?;
                fce = Some(ext);
                gid_list = gids;
            }
        }
        Ok(SmcrAcceptConfirm {
            kind: h.kind,
            version: h.version,
            first_contact,
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
            fce,
            gid_list,
        })
    }

    /// Where the sender's RMB element starts (the address our RDMA WRITEs
    /// go to): `rmbe_idx` counts elements of `rmbe_size` from 1 at
    /// `rmb_dma_addr`. `None` for an index 0, or an element that would end
    /// past the top of the address space: a peer's message that names no
    /// place to write is declined, not wrapped around.
    pub fn rmbe_addr(&self) -> Option<u64> {
        let size = u64::from(super::super::bufsize::uncompress(self.rmbe_size));
        let offset = u64::from(self.rmbe_idx.checked_sub(1)?).checked_mul(size)?;
        let start = self.rmb_dma_addr.checked_add(offset)?;
        start.checked_add(size)?;
        Some(start)
    }

    /// The length of the encoded message, trailer included.
    pub fn encoded_len(&self) -> usize {
        if self.version == SMC_V1 {
            return SMCR_ACCEPT_CONFIRM_LEN_V1;
        }
        SMCR_ACCEPT_CONFIRM_LEN_V2
            + self.fce.map_or(0, |_| FCE_LEN_V2X)
            + self.gid_list.map_or(0, |g| g.encoded_len())
    }

    /// Encodes the message as Linux 6.12 lays it out; returns the number
    /// of bytes written ([`Self::encoded_len`]). A v2 first contact message has the
    /// 52-byte extension (the release 1 fields zero before release 1) and
    /// the GID list when there is one. Refused with `BadLayout`: an
    /// extension without v2 first contact or the reverse, a GID list
    /// without an extension.
    pub fn encode(&self, buf: &mut [u8]) -> Result<usize, ClcError> {
        if self.kind != MsgType::Accept && self.kind != MsgType::Confirm {
            return Err(ClcError::BadType);
        }
        let v2 = self.version != SMC_V1;
        if self.fce.is_some() != (v2 && self.first_contact)
            || (self.gid_list.is_some() && self.fce.is_none())
        {
            return Err(ClcError::BadLayout);
        }
        let len = self.encoded_len();
        let mut w = Header::write_accept_confirm(
            buf,
            self.kind,
            len,
            self.version,
            SmcType::R,
            self.first_contact,
        )?;
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
        if v2 {
            w.put(&self.eid)?;
            w.zeros(8)?;
        }
        if let Some(fce) = &self.fce {
            fce.write(&mut w)?;
        }
        if let Some(gids) = &self.gid_list {
            gids.write(&mut w)?;
        }
        write_trailer(&mut w)?;
        Ok(len)
    }
}

#[cfg(test)]
mod tests {
    use super::super::testdata::*;
    use super::super::*;

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
    fn accept_v2_without_first_contact_is_108_bytes() {
        let mut a = SmcrAcceptConfirm::parse(&accept_v1_bytes()).unwrap();
        a.version = SMC_V2;
        a.kind = MsgType::Confirm;
        a.first_contact = false;
        a.eid = *UEID;
        let mut buf = [0u8; 256];
        let n = a.encode(&mut buf).unwrap();
        assert_eq!(n, SMCR_ACCEPT_CONFIRM_LEN_V2);
        assert_eq!(buf[7], 0x20); // version 2, no first contact, typev1 R
        assert_eq!(&buf[64..96], UEID);
        assert_eq!(SmcrAcceptConfirm::parse(&buf[..n]).unwrap(), a);
        // First contact in v2 needs the extension, and the reverse.
        a.first_contact = true;
        assert_eq!(a.encode(&mut buf), Err(ClcError::BadLayout));
        // A v2 message without first contact is exactly 108 bytes.
        let mut long = [0u8; 112];
        long[..104].copy_from_slice(&buf[..104]);
        long[5..7].copy_from_slice(&112u16.to_be_bytes());
        long[108..].copy_from_slice(&SMCR);
        assert_eq!(SmcrAcceptConfirm::parse(&long), Err(ClcError::BadLength));
    }

    fn expected_fce() -> FirstContactExt {
        FirstContactExt {
            v2_direct: true,
            os_type: OS_LINUX,
            release: 1,
            hostname: *HOSTNAME,
            max_conns: 255,
            max_links: 2,
            feature_mask: 1,
        }
    }

    #[test]
    fn accept_v2_first_contact_matches_upstream_layout() {
        let b = accept_v2_fce_bytes();
        let a = SmcrAcceptConfirm::parse(&b).unwrap();
        assert_eq!(
            (a.kind, a.version, a.first_contact),
            (MsgType::Accept, 2, true)
        );
        assert_eq!(a.eid, *UEID);
        assert_eq!(a.fce, Some(expected_fce()));
        assert_eq!(a.gid_list, None);
        assert_eq!(a.encoded_len(), 160);
        let mut buf = [0u8; 256];
        let n = a.encode(&mut buf).unwrap();
        assert_eq!(&buf[..n], &b[..]);
        assert_eq!(a.encode(&mut buf[..159]), Err(ClcError::BufferTooSmall));
    }

    #[test]
    fn confirm_v2_first_contact_carries_the_gid_list() {
        let b = confirm_v2_fce_bytes();
        let c = SmcrAcceptConfirm::parse(&b).unwrap();
        assert_eq!(c.kind, MsgType::Confirm);
        assert_eq!(c.fce, Some(expected_fce()));
        assert_eq!(c.gid_list.unwrap().gids(), &[ROCE_GID, ALT_GID]);
        assert_eq!(c.encoded_len(), 196);
        let mut buf = [0u8; 256];
        let n = c.encode(&mut buf).unwrap();
        assert_eq!(&buf[..n], &b[..]);
        // Built from scratch the way a client fills it.
        let built = SmcrAcceptConfirm {
            gid_list: Some(GidList::new(&[ROCE_GID, ALT_GID]).unwrap()),
            ..c
        };
        assert_eq!(built, c);
    }

    #[test]
    fn only_ib_mtus_are_valid() {
        let valid: [bool; 16] = core::array::from_fn(|m| super::valid_qp_mtu(m as u8));
        let want = [
            false, true, true, true, true, true, false, false, false, false, false, false, false,
            false, false, false,
        ];
        assert_eq!(valid, want);
    }

    #[test]
    fn release0_confirm_from_older_linux() {
        let b = confirm_v20_fce_bytes();
        let c = SmcrAcceptConfirm::parse(&b).unwrap();
        let fce = c.fce.unwrap();
        assert!(!fce.v2_direct);
        assert_eq!((fce.os_type, fce.release), (OS_LINUX, 0));
        assert_eq!(fce.hostname, *HOSTNAME);
        assert_eq!((fce.max_conns, fce.max_links, fce.feature_mask), (0, 0, 0));
        assert_eq!(c.gid_list.unwrap().gids(), &[ROCE_GID]);
        // Re-encoded as Linux 6.12 does: the 52-byte extension, 16 bytes
        // longer, which parses to the same.
        let mut buf = [0u8; 256];
        let n = c.encode(&mut buf).unwrap();
        assert_eq!(n, 164 + 16);
        assert_eq!(SmcrAcceptConfirm::parse(&buf[..n]), Ok(c));
        assert_eq!(&buf[104..140], &b[104..140]);
        assert_eq!(&buf[140..156], &[0; 16]);
        assert_eq!(&buf[156..176], &b[140..160]);
    }

    #[test]
    fn release1_fields_are_zero_before_release1() {
        let mut a = SmcrAcceptConfirm::parse(&accept_v2_fce_bytes()).unwrap();
        let fce = a.fce.as_mut().unwrap();
        fce.release = 0;
        let mut buf = [0u8; 256];
        let n = a.encode(&mut buf).unwrap();
        assert_eq!(n, 160);
        assert_eq!(&buf[140..156], &[0; 16]);
        let p = SmcrAcceptConfirm::parse(&buf[..n]).unwrap();
        let f = p.fce.unwrap();
        assert_eq!((f.max_conns, f.max_links, f.feature_mask), (0, 0, 0));
        // Received from a release 0 peer, they are ignored too.
        let mut b = accept_v2_fce_bytes();
        b[105] = 0x20;
        let f = SmcrAcceptConfirm::parse(&b).unwrap().fce.unwrap();
        assert_eq!((f.release, f.max_conns, f.feature_mask), (0, 0, 0));
    }

    #[test]
    fn hostile_first_contact_lengths_are_errors() {
        let b = accept_v2_fce_bytes();
        // First contact but no room for the extension.
        let mut short = [0u8; 108];
        short[..104].copy_from_slice(&b[..104]);
        short[5..7].copy_from_slice(&108u16.to_be_bytes());
        short[104..].copy_from_slice(&SMCR);
        assert_eq!(SmcrAcceptConfirm::parse(&short), Err(ClcError::BadLength));
        // Release 1 with the short extension.
        let mut r1 = [0u8; 144];
        r1[..140].copy_from_slice(&b[..140]);
        r1[5..7].copy_from_slice(&144u16.to_be_bytes());
        r1[140..].copy_from_slice(&SMCR);
        assert_eq!(SmcrAcceptConfirm::parse(&r1), Err(ClcError::BadLength));
        // GID counts that do not fill the message.
        let mut c = confirm_v2_fce_bytes();
        for count in [0u8, 1, 3, 0xff] {
            c[156] = count;
            assert_eq!(SmcrAcceptConfirm::parse(&c), Err(ClcError::BadLength));
        }
        // Bytes after the extension too few for a GID list.
        let mut odd = [0u8; 162];
        odd[..156].copy_from_slice(&b[..156]);
        odd[5..7].copy_from_slice(&162u16.to_be_bytes());
        odd[158..].copy_from_slice(&SMCR);
        assert_eq!(SmcrAcceptConfirm::parse(&odd), Err(ClcError::BadLength));
        // Every length from the fixed part to the largest message, with
        // the confirm's bytes: an error or a consistent parse, no panic.
        every_length(&c, &SMCR, |m| {
            SmcrAcceptConfirm::parse(m).ok().map(|p| p.encoded_len())
        });
    }

    #[test]
    fn extension_only_with_v2_first_contact() {
        let a = SmcrAcceptConfirm::parse(&accept_v1_bytes()).unwrap();
        let mut buf = [0u8; 256];
        let with_fce = SmcrAcceptConfirm {
            fce: Some(expected_fce()),
            ..a
        };
        assert_eq!(with_fce.encode(&mut buf), Err(ClcError::BadLayout));
        let c = SmcrAcceptConfirm::parse(&confirm_v2_fce_bytes()).unwrap();
        let gids_alone = SmcrAcceptConfirm {
            fce: None,
            first_contact: false,
            ..c
        };
        assert_eq!(gids_alone.encode(&mut buf), Err(ClcError::BadLayout));
    }

    #[test]
    fn rmbe_addr_is_bounded() {
        let mut a = SmcrAcceptConfirm::parse(&accept_v1_bytes()).unwrap();
        a.rmbe_size = 0; // 16 KiB elements
        a.rmb_dma_addr = 0x1000_0000;
        a.rmbe_idx = 1;
        assert_eq!(a.rmbe_addr(), Some(0x1000_0000));
        a.rmbe_idx = 3;
        assert_eq!(a.rmbe_addr(), Some(0x1000_0000 + 2 * 16384));
        a.rmbe_idx = 0;
        assert_eq!(a.rmbe_addr(), None);
        a.rmbe_idx = 255;
        a.rmbe_size = 15;
        a.rmb_dma_addr = u64::MAX - (1 << 20);
        assert_eq!(a.rmbe_addr(), None);
        a.rmbe_idx = 1;
        a.rmb_dma_addr = u64::MAX - 8;
        assert_eq!(a.rmbe_addr(), None);
    }
}
