// SPDX-License-Identifier: GPL-2.0

//! The SMC-D CLC Accept (server) and Confirm (client): the ISM device and
//! the DMB element of each side.
//!
//! Both carry the "SMCD" eyecatcher in header and trailer, and SMC-D in
//! `typev1`. After the header (offsets from the start of the message):
//!
//! ```text
//!   8   8  GID of the sender's ISM device
//!  16   8  DMB token
//!  24   1  DMB element index (Linux sends 0)
//!  25   1  compressed DMB element size (high nibble), low nibble reserved
//!  26   2  reserved
//!  28   4  link group id
//!  --- v1: 12 reserved bytes, the trailer at 44: 48 bytes ---
//!  32   2  CHID of the sender's ISM device (v2)
//!  34  32  the EID both sides agreed on (v2)
//!  66   8  GID extension of an emulated ISM device (v2; Linux 6.9 and
//!          later, reserved before and for native devices)
//!  --- v2: the trailer at 74: 78 bytes ---
//! ```
//!
//! A v2 message with the first contact bit has the first contact
//! extension at 74, before the trailer: 36 bytes for release 0, 52 from
//! release 1 on, where the SMC-R connection and link limits are reserved.
//! No GID list follows it in SMC-D.

use super::{
    chid_is_emulated, ClcError, FirstContactExt, Header, MsgType, Reader, SmcType, SmcdGid, Writer,
    EID_LEN, EYECATCHER_SMCD, FCE_LEN_V20, FCE_LEN_V2X, HEADER_LEN, HOSTNAME_LEN,
    SMCD_ACCEPT_CONFIRM_LEN_V1, SMCD_ACCEPT_CONFIRM_LEN_V2, SMC_RELEASE_1, SMC_V1, TRAILER_LEN,
};

/// `struct smcd_clc_msg_accept_confirm_common`: GID, token, index, size,
/// reserved, link id.
const D0_LEN: usize = 24;
/// The v2 part after it: CHID, EID, GID extension.
const D1_LEN: usize = 42;
/// Where the first contact extension starts in a v2 message.
const V2_FIXED_END: usize = HEADER_LEN + D0_LEN + D1_LEN;

const _: () = assert!(V2_FIXED_END + TRAILER_LEN == SMCD_ACCEPT_CONFIRM_LEN_V2);
const _: () = assert!(HEADER_LEN + D0_LEN + 12 + TRAILER_LEN == SMCD_ACCEPT_CONFIRM_LEN_V1);

/// An SMC-D Accept or Confirm.
///
/// Lengths on the wire: v1 48 bytes; v2 78 without first contact; v2 with
/// first contact 78 + 36 (release 0: 114) or 78 + 52 (release 1: 130).
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub struct SmcdAcceptConfirm {
    /// Accept (server) or Confirm (client).
    pub kind: MsgType,
    /// SMC version.
    pub version: u8,
    /// A new link group (first contact, `typev2` bit 1).
    pub first_contact: bool,
    /// The sender's GID; the extension only in v2 with an emulated
    /// device's CHID, else zero.
    pub gid: SmcdGid,
    /// Token of the sender's DMB.
    pub token: u64,
    /// Index of the DMB element (Linux sends 0).
    pub dmbe_idx: u8,
    /// Compressed DMB element size (4 bits).
    pub dmbe_size: u8,
    /// The link group id, as the sender's bytes.
    pub link_id: [u8; 4],
    /// CHID of the sender's ISM device (v2; zero in v1).
    pub chid: u16,
    /// The EID both sides agreed on (v2; zero in v1).
    pub eid: [u8; EID_LEN],
    /// v2 with first contact: the first contact extension, present exactly
    /// then. `max_conns` and `max_links` are reserved in SMC-D: zero.
    pub fce: Option<FirstContactExt>,
}

/// The length of the first contact extension Linux sends in SMC-D for
/// `release`.
fn fce_len(release: u8) -> usize {
    if release >= SMC_RELEASE_1 {
        FCE_LEN_V2X
    } else {
        FCE_LEN_V20
    }
}

impl SmcdAcceptConfirm {
    /// Parses a complete SMC-D accept or confirm.
    ///
    /// The length must match the layout exactly: 48 bytes in v1, 78 in v2
    /// without first contact, 78 plus the extension with it (release 0: 36
    /// bytes, or 52 as SMC-R sends it; release 1 and later: 52). Linux
    /// 6.12 itself only checks for at least 78 bytes in v2 and reads the
    /// extension wherever it would be; we refuse what it would misread.
    pub fn parse(msg: &[u8]) -> Result<Self, ClcError> {
        let (h, first_contact) = Header::parse_accept_confirm(msg, SmcType::D)?;
        let len = usize::from(h.length);
        let v2 = h.version != SMC_V1;
        let len_ok = if !v2 {
            len == SMCD_ACCEPT_CONFIRM_LEN_V1
        } else if first_contact {
            len == SMCD_ACCEPT_CONFIRM_LEN_V2 + FCE_LEN_V20
                || len == SMCD_ACCEPT_CONFIRM_LEN_V2 + FCE_LEN_V2X
        } else {
            len == SMCD_ACCEPT_CONFIRM_LEN_V2
        };
        if !len_ok {
            return Err(ClcError::BadLength);
        }
        let msg = h.whole(msg, true)?;
        let mut r = Reader::at(msg, HEADER_LEN);
        let mut gid = SmcdGid {
            gid: r.be64()?,
            gid_ext: 0,
        };
        let token = r.be64()?;
        let dmbe_idx = r.u8()?;
        let dmbe_size = r.u8()? >> 4;
        r.skip(2)?;
        let link_id = r.array()?;
        let (mut chid, mut eid, mut fce) = (0, [0u8; EID_LEN], None);
        if v2 {
            chid = r.be16()?;
            eid = r.array()?;
            let gid_ext = r.be64()?;
            if chid_is_emulated(chid) {
                gid.gid_ext = gid_ext;
            }
            if first_contact {
                fce = Some(Self::read_fce(msg, len)?);
            }
        }
        Ok(SmcdAcceptConfirm {
            kind: h.kind,
            version: h.version,
            first_contact,
            gid,
            token,
            dmbe_idx,
            dmbe_size,
            link_id,
            chid,
            eid,
            fce,
        })
    }

    /// Reads the first contact extension of a message of `len` bytes:
    /// from the fixed part to the trailer.
    fn read_fce(msg: &[u8], len: usize) -> Result<FirstContactExt, ClcError> {
        let body = len
            .checked_sub(TRAILER_LEN)
            .and_then(|end| msg.get(V2_FIXED_END..end))
            .ok_or(ClcError::BadLength)?;
        let mut fce = FirstContactExt::read(&mut Reader::new(body), body.len())?;
        // Release 1 fields (the feature mask) need the long layout.
        if fce.release >= SMC_RELEASE_1 && body.len() != FCE_LEN_V2X {
            return Err(ClcError::BadLength);
        }
        fce.max_conns = 0;
        fce.max_links = 0;
        Ok(fce)
    }

    /// The length of the encoded message, trailer included.
    pub fn encoded_len(&self) -> usize {
        if self.version == SMC_V1 {
            return SMCD_ACCEPT_CONFIRM_LEN_V1;
        }
        SMCD_ACCEPT_CONFIRM_LEN_V2 + self.fce.map_or(0, |f| fce_len(f.release))
    }

    /// Encodes the message as Linux 6.12 lays it out; returns the number
    /// of bytes written ([`Self::encoded_len`]). Refused with `BadLayout`:
    /// an extension without v2 first contact or the reverse; in v1 a CHID,
    /// EID or GID extension; a GID extension with a native device's CHID;
    /// SMC-R limits in the extension, a feature mask before release 1, a
    /// release wider than 4 bits.
    pub fn encode(&self, buf: &mut [u8]) -> Result<usize, ClcError> {
        if self.kind != MsgType::Accept && self.kind != MsgType::Confirm {
            return Err(ClcError::BadType);
        }
        let v2 = self.version != SMC_V1;
        let v1_extras = self.chid != 0 || self.eid != [0; EID_LEN] || self.gid.gid_ext != 0;
        // The release decides the layout: it must fit its 4 bits.
        let fce_bad = self.fce.is_some_and(|f| {
            f.release > 0xf
                || f.max_conns != 0
                || f.max_links != 0
                || (f.release < SMC_RELEASE_1 && f.feature_mask != 0)
        });
        if self.fce.is_some() != (v2 && self.first_contact)
            || (!v2 && v1_extras)
            || (!chid_is_emulated(self.chid) && self.gid.gid_ext != 0)
            || fce_bad
        {
            return Err(ClcError::BadLayout);
        }
        let len = self.encoded_len();
        let mut w = Header::write_accept_confirm(
            buf,
            self.kind,
            len,
            self.version,
            SmcType::D,
            self.first_contact,
        )?;
        w.be64(self.gid.gid)?;
        w.be64(self.token)?;
        w.u8(self.dmbe_idx)?;
        w.u8(self.dmbe_size << 4)?;
        w.zeros(2)?;
        w.put(&self.link_id)?;
        if v2 {
            w.be16(self.chid)?;
            w.put(&self.eid)?;
            w.be64(self.gid.gid_ext)?;
        } else {
            w.zeros(SMCD_ACCEPT_CONFIRM_LEN_V1 - HEADER_LEN - D0_LEN - TRAILER_LEN)?;
        }
        if let Some(f) = &self.fce {
            write_fce(f, &mut w)?;
        }
        w.put(&EYECATCHER_SMCD)?;
        Ok(len)
    }
}

/// Writes an SMC-D first contact extension: the 36 bytes of release 0, or
/// 52 from release 1 on with the connection and link limits reserved.
fn write_fce(f: &FirstContactExt, w: &mut Writer<'_>) -> Result<(), ClcError> {
    w.u8(if f.v2_direct { 0x80 } else { 0 })?;
    w.u8((f.os_type << 4) | (f.release & 0xf))?;
    w.zeros(2)?;
    w.put(&f.hostname)?;
    if f.release >= SMC_RELEASE_1 {
        w.zeros(2)?;
        w.be16(f.feature_mask)?;
        w.zeros(FCE_LEN_V2X - 4 - HOSTNAME_LEN - 4)?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::super::testdata::*;
    use super::super::*;

    fn fce(release: u8, feature_mask: u16) -> FirstContactExt {
        FirstContactExt {
            v2_direct: false,
            os_type: OS_LINUX,
            release,
            hostname: *HOSTNAME,
            max_conns: 0,
            max_links: 0,
            feature_mask,
        }
    }

    fn v1_accept() -> SmcdAcceptConfirm {
        SmcdAcceptConfirm {
            kind: MsgType::Accept,
            version: SMC_V1,
            first_contact: true,
            gid: SmcdGid {
                gid: ISM_GID,
                gid_ext: 0,
            },
            token: DMB_TOKEN,
            dmbe_idx: 0,
            dmbe_size: 3,
            link_id: LGR_ID,
            chid: 0,
            eid: [0; 32],
            fce: None,
        }
    }

    fn encode(m: &SmcdAcceptConfirm) -> ([u8; 256], usize) {
        let mut buf = [0u8; 256];
        let n = m.encode(&mut buf).unwrap();
        assert_eq!(n, m.encoded_len());
        (buf, n)
    }

    #[test]
    fn lengths_match_upstream() {
        // smc_clc.c: SMCD_CLC_ACCEPT_CONFIRM_LEN 48, ..._V2 78.
        assert_eq!(
            (SMCD_ACCEPT_CONFIRM_LEN_V1, SMCD_ACCEPT_CONFIRM_LEN_V2),
            (48, 78)
        );
        assert_eq!(
            (super::D0_LEN, super::D1_LEN, super::V2_FIXED_END),
            (24, 42, 74)
        );
        assert_eq!(v1_accept().encoded_len(), 48);
        let v2 = SmcdAcceptConfirm {
            version: SMC_V2,
            first_contact: false,
            ..v1_accept()
        };
        assert_eq!(v2.encoded_len(), 78);
        let r0 = SmcdAcceptConfirm {
            first_contact: true,
            fce: Some(fce(0, 0)),
            ..v2
        };
        assert_eq!(r0.encoded_len(), 114);
        let r1 = SmcdAcceptConfirm {
            fce: Some(fce(1, 1)),
            ..r0
        };
        assert_eq!(r1.encoded_len(), 130);
    }

    #[test]
    fn v1_accept_matches_upstream_layout() {
        let b = smcd_accept_v1_bytes();
        let a = SmcdAcceptConfirm::parse(&b).unwrap();
        assert_eq!(a, v1_accept());
        let (buf, n) = encode(&a);
        assert_eq!(&buf[..n], &b[..]);
    }

    #[test]
    fn v2_loopback_accept_matches_upstream_layout() {
        let b = smcd_accept_v2_lo_bytes();
        let a = SmcdAcceptConfirm::parse(&b).unwrap();
        let want = SmcdAcceptConfirm {
            version: SMC_V2,
            gid: SmcdGid {
                gid: LO_GID,
                gid_ext: LO_GID_EXT,
            },
            chid: LO_CHID,
            eid: *SEID,
            fce: Some(fce(1, 1)),
            ..v1_accept()
        };
        assert_eq!(a, want);
        let (buf, n) = encode(&a);
        assert_eq!(&buf[..n], &b[..]);
        assert_eq!(a.encode(&mut [0u8; 129]), Err(ClcError::BufferTooSmall));
    }

    #[test]
    fn v2_release0_confirm_matches_upstream_layout() {
        let b = smcd_confirm_v2_r0_bytes();
        let c = SmcdAcceptConfirm::parse(&b).unwrap();
        let want = SmcdAcceptConfirm {
            kind: MsgType::Confirm,
            version: SMC_V2,
            gid: SmcdGid {
                gid: ISM2_GID,
                gid_ext: 0,
            },
            chid: ISM2_CHID,
            eid: *UEID,
            fce: Some(fce(0, 0)),
            ..v1_accept()
        };
        assert_eq!(c, want);
        let (buf, n) = encode(&c);
        assert_eq!(&buf[..n], &b[..]);
    }

    #[test]
    fn v2_without_first_contact_round_trips() {
        let m = SmcdAcceptConfirm {
            kind: MsgType::Confirm,
            version: SMC_V2,
            first_contact: false,
            chid: ISM_CHID,
            eid: *UEID,
            ..v1_accept()
        };
        let (buf, n) = encode(&m);
        assert_eq!(n, 78);
        assert_eq!(buf[7], 0x21); // version 2, no first contact, typev1 D
        assert_eq!((&buf[..4], &buf[74..78]), (&SMCD[..], &SMCD[..]));
        assert_eq!(buf[32..34], ISM_CHID.to_be_bytes());
        assert_eq!(&buf[34..66], UEID);
        assert_eq!(buf[66..74], [0; 8]);
        assert_eq!(SmcdAcceptConfirm::parse(&buf[..n]), Ok(m));
    }

    #[test]
    fn gid_extension_only_for_emulated_devices() {
        // A native device's CHID: the 8 bytes at 66 are reserved.
        let mut b = smcd_confirm_v2_r0_bytes();
        b[66..74].copy_from_slice(&LO_GID_EXT.to_be_bytes());
        assert_eq!(SmcdAcceptConfirm::parse(&b).unwrap().gid.gid_ext, 0);
        // A virtio-ism CHID: they are the GID extension.
        b[32..34].copy_from_slice(&0xff01u16.to_be_bytes());
        assert_eq!(
            SmcdAcceptConfirm::parse(&b).unwrap().gid.gid_ext,
            LO_GID_EXT
        );
    }

    #[test]
    fn release0_extension_of_52_bytes_is_read() {
        // Release 0 in the long layout: the release 1 fields are ignored,
        // and it goes back out in the 36 bytes Linux sends.
        let mut b = smcd_accept_v2_lo_bytes();
        b[75] = 0x20;
        let a = SmcdAcceptConfirm::parse(&b).unwrap();
        assert_eq!(a.fce, Some(fce(0, 0)));
        let (buf, n) = encode(&a);
        assert_eq!(n, 114);
        assert_eq!(buf[5..7], 114u16.to_be_bytes());
        assert_eq!((&buf[..5], &buf[7..110]), (&b[..5], &b[7..110]));
    }

    #[test]
    fn hostile_lengths_and_types_are_errors() {
        let set_len = |b: &mut [u8], len: u16| b[5..7].copy_from_slice(&len.to_be_bytes());
        // v1 is exactly 48 bytes.
        let mut b = [0u8; 52];
        b[..44].copy_from_slice(&smcd_accept_v1_bytes()[..44]);
        set_len(&mut b, 52);
        b[48..].copy_from_slice(&SMCD);
        assert_eq!(SmcdAcceptConfirm::parse(&b), Err(ClcError::BadLength));
        // v2 first contact: 114 or 130, nothing else.
        let lo = smcd_accept_v2_lo_bytes();
        for len in [78u16, 82, 113, 118, 126, 134] {
            let mut b = [0u8; 140];
            b[..74].copy_from_slice(&lo[..74]);
            set_len(&mut b, len);
            let l = usize::from(len);
            b[l - 4..l].copy_from_slice(&SMCD);
            assert_eq!(
                SmcdAcceptConfirm::parse(&b),
                Err(ClcError::BadLength),
                "{len}"
            );
        }
        // Release 1 needs the 52-byte extension.
        let mut b = [0u8; 114];
        b[..110].copy_from_slice(&lo[..110]);
        set_len(&mut b, 114);
        b[110..].copy_from_slice(&SMCD);
        assert_eq!(SmcdAcceptConfirm::parse(&b), Err(ClcError::BadLength));
        // v2 without first contact is exactly 78 bytes.
        let mut b = lo;
        b[7] = 0x21;
        assert_eq!(SmcdAcceptConfirm::parse(&b), Err(ClcError::BadLength));
        // SMC-R and SMC-D messages are not each other's.
        assert_eq!(
            SmcdAcceptConfirm::parse(&accept_v1_bytes()),
            Err(ClcError::BadVersion)
        );
        assert_eq!(SmcrAcceptConfirm::parse(&lo), Err(ClcError::BadVersion));
        assert_eq!(
            SmcdAcceptConfirm::parse(&proposal_smcd_v2_bytes()),
            Err(ClcError::BadType)
        );
        let mut b = lo;
        b[129] = 0;
        assert_eq!(SmcdAcceptConfirm::parse(&b), Err(ClcError::BadEyecatcher));
    }

    #[test]
    fn inconsistent_messages_are_not_encoded() {
        let mut buf = [0u8; 256];
        let v2 = SmcdAcceptConfirm::parse(&smcd_accept_v2_lo_bytes()).unwrap();
        let v1 = v1_accept();
        let bad = [
            SmcdAcceptConfirm { fce: None, ..v2 },
            SmcdAcceptConfirm {
                first_contact: false,
                ..v2
            },
            SmcdAcceptConfirm { fce: v2.fce, ..v1 },
            SmcdAcceptConfirm { chid: 1, ..v1 },
            SmcdAcceptConfirm { eid: *UEID, ..v1 },
            SmcdAcceptConfirm { gid: v2.gid, ..v1 },
            SmcdAcceptConfirm {
                chid: ISM_CHID,
                ..v2
            },
            SmcdAcceptConfirm {
                fce: Some(FirstContactExt {
                    max_conns: 255,
                    ..fce(1, 1)
                }),
                ..v2
            },
            SmcdAcceptConfirm {
                fce: Some(fce(0, 1)),
                ..v2
            },
            SmcdAcceptConfirm {
                fce: Some(fce(0x11, 1)),
                ..v2
            },
        ];
        for m in bad {
            assert_eq!(m.encode(&mut buf), Err(ClcError::BadLayout), "{m:?}");
        }
        let wrong_kind = SmcdAcceptConfirm {
            kind: MsgType::Decline,
            ..v1
        };
        assert_eq!(wrong_kind.encode(&mut buf), Err(ClcError::BadType));
    }

    #[test]
    fn every_truncation_is_an_error_and_mutations_never_panic() {
        let (a, b, c) = (
            smcd_accept_v1_bytes(),
            smcd_accept_v2_lo_bytes(),
            smcd_confirm_v2_r0_bytes(),
        );
        let msgs: [&[u8]; 3] = [&a, &b, &c];
        let mut buf = [0u8; 256];
        for m in msgs {
            for n in 0..m.len() {
                assert!(SmcdAcceptConfirm::parse(&m[..n]).is_err(), "prefix of {n}");
            }
            for i in 0..m.len() {
                for v in [0u8, 1, 2, 0x0f, 0x10, 0x21, 0x7f, 0x80, 0xfe, 0xff] {
                    buf[..m.len()].copy_from_slice(m);
                    buf[i] = v;
                    let Ok(p) = SmcdAcceptConfirm::parse(&buf[..m.len()]) else {
                        continue;
                    };
                    // What parses encodes, and parses back the same.
                    let mut out = [0u8; 256];
                    let n = p.encode(&mut out).unwrap();
                    assert_eq!(SmcdAcceptConfirm::parse(&out[..n]), Ok(p));
                }
            }
        }
        // Every length up to the largest message over the accept's bytes.
        every_length(&b, &SMCD, |m| {
            SmcdAcceptConfirm::parse(m).ok().map(|p| p.encoded_len())
        });
    }
}
