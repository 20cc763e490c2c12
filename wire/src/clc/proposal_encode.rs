// SPDX-License-Identifier: GPL-2.0

//! The encoder of the CLC Proposal: SMC-R, SMC-D or both, in v1 and v2,
//! laid out as Linux 6.12's `smc_clc_send_proposal` lays them out.

use super::proposal::{
    PROPOSAL_BASE_LEN, PROPOSAL_PREFIX_LEN, PROPOSAL_SMCD_LEN, SMCD_V2_EXT_OFFSET_END,
    SMCD_V2_EXT_OFFSET_POS, V2_EXT_LEN,
};
use super::smcd::SMCD_OFFSET_END;
use super::{
    chid_is_emulated, write_header, write_trailer, ClcError, GidChid, Ipv4Prefix, IsmDevice,
    LocalInfo, MsgType, SmcType, Writer, EID_LEN, EYECATCHER_SMCR, GID_CHID_LEN, GID_LEN,
    MAX_ISM_GIDS, MAX_UEIDS, SMCD_V2_EXT_LEN, SMC_V2, TRAILER_LEN,
};

/// What a client proposes of SMC-R, for [`encode_proposal`] and
/// [`encode_proposal_smcd`]: IPv4 prefix, and optionally the SMC-Rv2
/// extension with UEIDs.
///
/// To send what Linux 6.12 sends: `release` [`super::SMC_RELEASE`] and
/// `feature_mask` [`super::SMC_FEATURE_MASK`] (it offers both whatever the
/// variant), `max_conns` 255 and `max_links` 2 (its sysctl defaults).
#[derive(Clone, Copy, Debug, Default)]
pub struct ProposalParams<'a> {
    /// Offer SMC-Rv1 (needs a RoCEv1-capable device).
    pub v1: bool,
    /// Offer SMC-Rv2 (needs a RoCEv2 device and at least one UEID).
    pub v2: bool,
    /// The client's identity and RoCE port (v1).
    pub local: LocalInfo,
    /// The client's IPv4 prefix (any v1 offer, SMC-R or SMC-D).
    pub ipv4_prefix: Ipv4Prefix,
    /// RoCEv2 GID (v2).
    pub roce_gid: [u8; GID_LEN],
    /// UEIDs (any v2 offer), at most [`MAX_UEIDS`].
    pub ueids: &'a [[u8; EID_LEN]],
    /// SMC release offered in v2 (any v2 offer).
    pub release: u8,
    /// Connections and links per link group wanted (release 1).
    pub max_conns: u8,
    /// Links per link group wanted (release 1).
    pub max_links: u8,
    /// Feature mask (release 1, any v2 offer).
    pub feature_mask: u16,
}

/// What a client proposes of SMC-D, for [`encode_proposal_smcd`]. The
/// default offers none.
#[derive(Clone, Copy, Debug, Default)]
pub struct SmcdProposalParams<'a> {
    /// Offer SMC-Dv1 with `ism` (and the IP prefix).
    pub v1: bool,
    /// Offer SMC-Dv2 with `devices` (and the v2 extension).
    pub v2: bool,
    /// The native ISM device of the SMC-D area: GID and CHID (v1).
    pub ism: GidChid,
    /// The system EID (v2): `Some` sets the SEID flag and sends it.
    pub seid: Option<[u8; EID_LEN]>,
    /// The ISM devices offered for v2, in order. An emulated one takes two
    /// entries, a native one (whose `gid_ext` must be zero) one; at most
    /// [`MAX_ISM_GIDS`] entries in all.
    pub devices: &'a [IsmDevice],
}

/// The variants of `smcd` and `smcr` offered together.
fn indicated(smcd: bool, smcr: bool) -> SmcType {
    match (smcd, smcr) {
        (true, true) => SmcType::B,
        (true, false) => SmcType::D,
        (false, true) => SmcType::R,
        (false, false) => SmcType::N,
    }
}

/// Encodes an SMC-R proposal the way Linux lays it out; returns the number
/// of bytes written. The SMC-D area is always present; the SMC-Dv2
/// extension never is (SMC-D is not offered). A proposal that offers
/// neither v1 nor v2 is valid: it asks a CLC peer to decline.
pub fn encode_proposal(p: &ProposalParams<'_>, buf: &mut [u8]) -> Result<usize, ClcError> {
    encode_proposal_smcd(p, &SmcdProposalParams::default(), buf)
}

/// Encodes a proposal offering what `r` offers of SMC-R and `d` of SMC-D,
/// laid out as Linux 6.12 lays it out; returns the number of bytes
/// written. Without an SMC-D offer, the same bytes as [`encode_proposal`].
///
/// The parts, in order: the fixed part (the identity only with SMC-Rv1);
/// the SMC-D area (its device only with SMC-Dv1); the prefix area with any
/// v1 offer; the v2 extension with any v2 offer (the RoCE fields only with
/// SMC-Rv2); the SMC-Dv2 extension and its entries with SMC-Dv2. Refused
/// with `BadLayout`: too many UEIDs or entries, SMC-Rv2 without a UEID, a
/// native device with a GID extension.
pub fn encode_proposal_smcd(
    r: &ProposalParams<'_>,
    d: &SmcdProposalParams<'_>,
    buf: &mut [u8],
) -> Result<usize, ClcError> {
    if r.ueids.len() > MAX_UEIDS || (r.v2 && r.ueids.is_empty()) {
        return Err(ClcError::BadLayout);
    }
    let devices = if d.v2 { d.devices } else { &[] };
    if devices
        .iter()
        .any(|dev| !chid_is_emulated(dev.chid) && dev.gid.gid_ext != 0)
    {
        return Err(ClcError::BadLayout);
    }
    let entries: usize = devices.iter().map(IsmDevice::entries).sum();
    if entries > MAX_ISM_GIDS {
        return Err(ClcError::BadLayout);
    }
    let typev1 = indicated(d.v1, r.v1);
    let typev2 = indicated(d.v2, r.v2);
    let v1_len = if typev1 != SmcType::N {
        PROPOSAL_PREFIX_LEN
    } else {
        0
    };
    let v2_len = if typev2 != SmcType::N {
        V2_EXT_LEN + r.ueids.len() * EID_LEN
    } else {
        0
    };
    let smcd_len = if d.v2 {
        SMCD_V2_EXT_LEN + entries * GID_CHID_LEN
    } else {
        0
    };
    let len = PROPOSAL_BASE_LEN + PROPOSAL_SMCD_LEN + v1_len + v2_len + smcd_len + TRAILER_LEN;
    // Linux always sends a v2 header; a v1-only peer reads the v1 part.
    let mut w = Writer::new(buf, len)?;
    write_header(
        &mut w,
        &EYECATCHER_SMCR,
        MsgType::Proposal,
        len,
        SMC_V2,
        typev1,
        typev2 as u8,
    )?;
    // The sender's identity is for the SMC-Rv1 offer only: without it
    // Linux leaves the 30 bytes zero (an SMC-Rv2 server reads the GID from
    // the v2 extension).
    if r.v1 {
        r.local.write(&mut w)?;
    } else {
        w.zeros(30)?;
    }
    // Without a v1 offer there is no prefix area of its own.
    w.be16(if v1_len != 0 {
        PROPOSAL_SMCD_LEN as u16
    } else {
        0
    })?;
    // SMC-D area: the native ISM device for SMC-Dv1, the v2 extension offset.
    if d.v1 {
        w.be64(d.ism.gid)?;
        w.be16(d.ism.chid)?;
    } else {
        w.zeros(SMCD_V2_EXT_OFFSET_POS)?;
    }
    let v2_off = if v2_len != 0 {
        PROPOSAL_SMCD_LEN - SMCD_V2_EXT_OFFSET_END + v1_len
    } else {
        0
    };
    w.be16(v2_off as u16)?;
    w.zeros(PROPOSAL_SMCD_LEN - SMCD_V2_EXT_OFFSET_END)?;
    if v1_len != 0 {
        w.be32(r.ipv4_prefix.subnet)?;
        w.u8(r.ipv4_prefix.len)?;
        w.zeros(3)?; // reserved, no IPv6 prefixes
    }
    if v2_len != 0 {
        write_v2_ext(r, d, entries, &mut w)?;
    }
    if d.v2 {
        write_smcd_v2_ext(d, &mut w)?;
    }
    write_trailer(&mut w)?;
    Ok(len)
}

/// Writes the v2 extension of a proposal: the UEIDs, the SMC-Dv2 part of
/// its header with SMC-Dv2, the RoCE fields with SMC-Rv2.
fn write_v2_ext(
    r: &ProposalParams<'_>,
    d: &SmcdProposalParams<'_>,
    entries: usize,
    w: &mut Writer<'_>,
) -> Result<(), ClcError> {
    let seid = d.v2 && d.seid.is_some();
    w.u8(r.ueids.len() as u8)?;
    w.u8(if d.v2 { entries as u8 } else { 0 })?;
    w.u8(0)?;
    w.u8((r.release << 4) | u8::from(seid))?;
    w.zeros(2)?;
    // The SMC-Dv2 extension follows the UEIDs.
    let smcd_off = if d.v2 {
        V2_EXT_LEN - SMCD_OFFSET_END + r.ueids.len() * EID_LEN
    } else {
        0
    };
    w.be16(smcd_off as u16)?;
    if r.v2 {
        w.put(&r.roce_gid)?;
        w.u8(r.max_conns)?;
        w.u8(r.max_links)?;
    } else {
        w.zeros(GID_LEN + 2)?;
    }
    w.be16(r.feature_mask)?;
    w.zeros(12)?;
    for u in r.ueids {
        w.put(u)?;
    }
    Ok(())
}

/// Writes the SMC-Dv2 extension: system EID, reserved bytes, then one
/// entry per native device and two per emulated one.
fn write_smcd_v2_ext(d: &SmcdProposalParams<'_>, w: &mut Writer<'_>) -> Result<(), ClcError> {
    w.put(&d.seid.unwrap_or([0; EID_LEN]))?;
    w.zeros(SMCD_V2_EXT_LEN - EID_LEN)?;
    for dev in d.devices {
        w.be64(dev.gid.gid)?;
        w.be16(dev.chid)?;
        if chid_is_emulated(dev.chid) {
            w.be64(dev.gid.gid_ext)?;
            w.be16(dev.chid)?;
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::super::testdata::*;
    use super::super::*;

    const MAC: [u8; 6] = [0x52, 0x54, 0, 0x5c, 0, 1];

    fn lo() -> IsmDevice {
        IsmDevice {
            chid: LO_CHID,
            gid: SmcdGid {
                gid: LO_GID,
                gid_ext: LO_GID_EXT,
            },
        }
    }

    fn ism2() -> IsmDevice {
        IsmDevice {
            chid: ISM2_CHID,
            gid: SmcdGid {
                gid: ISM2_GID,
                gid_ext: 0,
            },
        }
    }

    /// What Linux 6.12 fills in for the v2 extension whatever is offered.
    fn linux_v2<'a>(ueids: &'a [[u8; 32]]) -> ProposalParams<'a> {
        ProposalParams {
            ueids,
            release: SMC_RELEASE,
            feature_mask: SMC_FEATURE_MASK,
            ..ProposalParams::default()
        }
    }

    fn encoded(r: &ProposalParams<'_>, d: &SmcdProposalParams<'_>) -> ([u8; 512], usize) {
        let mut buf = [0u8; 512];
        let n = encode_proposal_smcd(r, d, &mut buf).unwrap();
        (buf, n)
    }

    const ISM: GidChid = GidChid {
        gid: ISM_GID,
        chid: ISM_CHID,
    };

    #[test]
    fn smcd_v1_proposal_matches_upstream_layout() {
        // The prefix is the v1 offer's; the v2 fields go nowhere.
        let r = ProposalParams {
            ipv4_prefix: Ipv4Prefix {
                subnet: 0x0a0a_0000,
                len: 24,
            },
            ..linux_v2(&[])
        };
        let d = SmcdProposalParams {
            v1: true,
            ism: ISM,
            devices: &[ism2()], // without v2: not sent
            ..SmcdProposalParams::default()
        };
        let (buf, n) = encoded(&r, &d);
        assert_eq!(&buf[..n], &proposal_smcd_v1_bytes()[..]);
    }

    #[test]
    fn smcd_v2_proposal_matches_upstream_layout() {
        let ueids = [*UEID];
        let r = ProposalParams {
            roce_gid: ROCE_GID, // without SMC-Rv2: not sent
            max_conns: 255,
            ..linux_v2(&ueids)
        };
        let d = SmcdProposalParams {
            v2: true,
            ism: ISM, // without SMC-Dv1: not sent
            seid: Some(*SEID),
            devices: &[lo(), ism2()],
            ..SmcdProposalParams::default()
        };
        let (buf, n) = encoded(&r, &d);
        assert_eq!(&buf[..n], &proposal_smcd_v2_bytes()[..]);
    }

    #[test]
    fn smcr_and_smcd_proposal_matches_upstream_layout() {
        let ueids = [*UEID];
        let r = ProposalParams {
            v1: true,
            v2: true,
            local: LocalInfo {
                peer_id: ID,
                gid: ROCE_GID,
                mac: MAC,
            },
            ipv4_prefix: Ipv4Prefix {
                subnet: 0x0a0a_0000,
                len: 24,
            },
            roce_gid: ROCE_GID,
            max_conns: 255,
            max_links: 2,
            ..linux_v2(&ueids)
        };
        let d = SmcdProposalParams {
            v1: true,
            v2: true,
            ism: ISM,
            seid: Some(*SEID),
            devices: &[ism2(), lo()],
        };
        let (buf, n) = encoded(&r, &d);
        assert_eq!(&buf[..n], &proposal_smcd_all_bytes()[..]);
        assert_eq!(
            encode_proposal_smcd(&r, &d, &mut [0u8; 241]),
            Err(ClcError::BufferTooSmall)
        );
    }

    #[test]
    fn without_smcd_the_smcr_encoding_is_unchanged() {
        let ueids = [*UEID, [b'X'; 32]];
        let local = LocalInfo {
            peer_id: ID,
            gid: ROCE_GID,
            mac: MAC,
        };
        for (v1, v2) in [(false, false), (true, false), (false, true), (true, true)] {
            let r = ProposalParams {
                v1,
                v2,
                local,
                roce_gid: ROCE_GID,
                max_conns: 16,
                max_links: 1,
                ..linux_v2(&ueids)
            };
            let (a, n) = encoded(&r, &SmcdProposalParams::default());
            let mut b = [0u8; 512];
            assert_eq!(encode_proposal(&r, &mut b), Ok(n));
            assert_eq!(a[..n], b[..n]);
            // SMC-D devices and identity without an SMC-D offer: not sent.
            let d = SmcdProposalParams {
                ism: ISM,
                seid: Some(*SEID),
                devices: &[lo()],
                ..SmcdProposalParams::default()
            };
            let (c, m) = encoded(&r, &d);
            assert_eq!(c[..m], b[..n]);
        }
        let (buf, n) = encoded(&linux_v2(&[]), &SmcdProposalParams::default());
        assert_eq!(n, 84);
        assert_eq!(buf[7], 0x2a); // typev2 N, typev1 N
    }

    #[test]
    fn smcd_proposals_round_trip() {
        let ueids = [*UEID, [b'Y'; 32]];
        let native = [ism2(), IsmDevice { chid: 7, ..ism2() }];
        let mixed = [lo(), ism2(), lo()];
        let ueid_sets: [&[[u8; 32]]; 3] = [&[], &ueids[..1], &ueids];
        for (r1, r2, d1, d2) in (0..16).map(|i| (i & 1 != 0, i & 2 != 0, i & 4 != 0, i & 8 != 0)) {
            for (devices, seid) in [(&native[..], None), (&mixed[..], Some(*SEID))] {
                for u in ueid_sets {
                    let r = ProposalParams {
                        v1: r1,
                        v2: r2,
                        roce_gid: ROCE_GID,
                        ..linux_v2(u)
                    };
                    let d = SmcdProposalParams {
                        v1: d1,
                        v2: d2,
                        ism: ISM,
                        seid,
                        devices,
                    };
                    let mut buf = [0u8; 512];
                    let res = encode_proposal_smcd(&r, &d, &mut buf);
                    if r2 && u.is_empty() {
                        assert_eq!(res, Err(ClcError::BadLayout));
                        continue;
                    }
                    let n = res.unwrap();
                    let p = Proposal::parse(&buf[..n]).unwrap();
                    assert_eq!(p.header.typev1.has_d(), d1);
                    assert_eq!(p.header.typev1.has_r(), r1);
                    let typev2 = SmcType::from_bits(p.header.typev2);
                    assert_eq!((typev2.has_d(), typev2.has_r()), (d2, r2));
                    assert_eq!(p.ipv4_prefix.is_some(), r1 || d1);
                    assert_eq!(p.v2.is_some(), r2 || d2);
                    let area = if d1 { ISM } else { GidChid::default() };
                    assert_eq!(p.smcd, (d1 || d2).then_some(area));
                    match p.smcd_v2 {
                        Some(e) => {
                            assert!(d2);
                            assert!(e.devices().eq(devices.iter().copied()));
                            assert_eq!(e.system_eid, seid.unwrap_or([0; 32]));
                            assert_eq!(p.v2.unwrap().seid, seid.is_some());
                        }
                        None => assert!(!d2),
                    }
                    if let Some(v2) = p.v2 {
                        assert!(v2.ueids().eq(u.iter().map(|x| &x[..])));
                    }
                }
            }
        }
    }

    #[test]
    fn hostile_smcd_params_are_refused() {
        let mut buf = [0u8; 512];
        let r = linux_v2(&[]);
        // Five emulated devices: ten entries, two too many.
        let many = [lo(); 5];
        let d = SmcdProposalParams {
            v2: true,
            devices: &many,
            ..SmcdProposalParams::default()
        };
        assert_eq!(
            encode_proposal_smcd(&r, &d, &mut buf),
            Err(ClcError::BadLayout)
        );
        let d = SmcdProposalParams {
            devices: &many[..4],
            ..d
        };
        assert_eq!(
            encode_proposal_smcd(&r, &d, &mut buf),
            Ok(40 + 40 + 40 + 48 + 80 + 4)
        );
        // A native device has no GID extension to send.
        let bad = [IsmDevice {
            gid: SmcdGid { gid: 1, gid_ext: 2 },
            ..ism2()
        }];
        let d = SmcdProposalParams { devices: &bad, ..d };
        assert_eq!(
            encode_proposal_smcd(&r, &d, &mut buf),
            Err(ClcError::BadLayout)
        );
    }
}
