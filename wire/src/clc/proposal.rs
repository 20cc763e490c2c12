// SPDX-License-Identifier: GPL-2.0

//! The CLC Proposal (client to server: what the client can do) and the
//! server's choice of a variant. The encoder is in `proposal_encode`, the
//! SMC-D parts in `smcd`.

use super::smcd::{read_smcd_area, read_smcd_v2_ext};
use super::{
    ClcError, DeclineReason, GidChid, Header, LocalInfo, MsgType, Reader, SmcType, SmcdV2Ext,
    EID_LEN, GID_CHID_LEN, GID_LEN, HEADER_LEN, MAX_ISM_GIDS, MAX_UEIDS, MAX_V6_PREFIXES,
    SMCD_V2_EXT_LEN, SMC_V1, SMC_V2, TRAILER_LEN,
};

/// The fixed part of a proposal: header, local info, IP area offset.
pub(super) const PROPOSAL_BASE_LEN: usize = 40;
/// The SMC-D area that follows the base in every proposal Linux sends.
pub(super) const PROPOSAL_SMCD_LEN: usize = 40;
/// The IPv4 prefix area.
pub(super) const PROPOSAL_PREFIX_LEN: usize = 8;
/// One IPv6 prefix: address and prefix length.
const IPV6_PREFIX_LEN: usize = 17;
/// The fixed part of the v2 extension.
pub(super) const V2_EXT_LEN: usize = 40;
/// Offset of the v2 extension offset field inside the SMC-D area, plus its size.
pub(super) const SMCD_V2_EXT_OFFSET_END: usize = 12;
/// Offset of the v2 extension offset field inside the SMC-D area.
pub(super) const SMCD_V2_EXT_OFFSET_POS: usize = 10;
/// The largest v2 extension offset: past the prefix area of the largest
/// proposal Linux sends (upstream's `smc_get_clc_v2_ext`).
const MAX_V2_EXT_OFFSET: usize = PROPOSAL_SMCD_LEN - SMCD_V2_EXT_OFFSET_END
    + PROPOSAL_PREFIX_LEN
    + MAX_V6_PREFIXES * IPV6_PREFIX_LEN;

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

    /// Reads the v2 extension of a proposal indicating `typev2` (not N)
    /// where the SMC-D area locates it, with the checks upstream makes;
    /// returns it, the length it takes in the message (with the SMC-Dv2
    /// extension when `typev2` has SMC-D) and where it starts.
    fn read(msg: &'a [u8], typev2: SmcType) -> Result<(Self, usize, usize), ClcError> {
        let mut s = Reader::at(msg, PROPOSAL_BASE_LEN + SMCD_V2_EXT_OFFSET_POS);
        let v2_off = usize::from(s.be16()?);
        // The extension must lie past the prefix area of the largest
        // proposal Linux sends and nowhere past the message.
        if v2_off == 0 || v2_off > MAX_V2_EXT_OFFSET {
            return Err(ClcError::BadLayout);
        }
        let ext_start = PROPOSAL_BASE_LEN + SMCD_V2_EXT_OFFSET_END + v2_off;
        let mut e = Reader::at(msg, ext_start);
        let eid_cnt = usize::from(e.u8()?);
        let ism_gid_count = e.u8()?;
        e.skip(1)?;
        let flag = e.u8()?;
        e.skip(4)?; // reserved, SMC-Dv2 extension offset
        let roce_gid = e.array()?;
        let max_conns = e.u8()?;
        let max_links = e.u8()?;
        let feature_mask = e.be16()?;
        e.skip(12)?;
        if eid_cnt > MAX_UEIDS || (typev2.has_d() && usize::from(ism_gid_count) > MAX_ISM_GIDS) {
            return Err(ClcError::BadLayout);
        }
        let ueids = e.bytes(eid_cnt * EID_LEN)?;
        let mut len = V2_EXT_LEN + eid_cnt * EID_LEN;
        if typev2.has_d() {
            len += SMCD_V2_EXT_LEN + usize::from(ism_gid_count) * GID_CHID_LEN;
        }
        let ext = ProposalV2 {
            release: flag >> 4,
            seid: flag & 1 != 0,
            roce_gid,
            max_conns,
            max_links,
            feature_mask,
            ueids,
            ism_gid_count,
        };
        Ok((ext, len, ext_start))
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
    /// The native ISM device of the SMC-D area (zero when the client
    /// filled none in), when the proposal indicates SMC-D in v1 or v2.
    pub smcd: Option<GidChid>,
    /// The SMC-Dv2 extension, when v2 indicates SMC-D and the v2 extension
    /// locates one (upstream declines SMC-Dv2 without it, `NOV2DEXT`).
    pub smcd_v2: Option<SmcdV2Ext<'a>>,
}

/// The IP prefix area of a proposal: the IPv4 prefix and the number of
/// IPv6 prefixes, with a reader left where the IPv6 prefixes start.
struct PrefixArea<'a> {
    ipv4: Ipv4Prefix,
    /// How many bytes of IPv6 prefixes follow.
    v6_len: usize,
    rest: Reader<'a>,
}

impl<'a> PrefixArea<'a> {
    /// Reads the prefix area at `start`; at most [`MAX_V6_PREFIXES`].
    fn read(msg: &'a [u8], start: usize) -> Result<Self, ClcError> {
        let mut p = Reader::at(msg, start);
        let subnet = p.be32()?;
        let len = p.u8()?;
        p.skip(2)?;
        let v6_count = usize::from(p.u8()?);
        if v6_count > MAX_V6_PREFIXES {
            return Err(ClcError::BadLayout);
        }
        Ok(PrefixArea {
            ipv4: Ipv4Prefix { subnet, len },
            v6_len: v6_count * IPV6_PREFIX_LEN,
            rest: p,
        })
    }

    /// The IPv6 prefixes, [`IPV6_PREFIX_LEN`] bytes each.
    fn ipv6(mut self) -> Result<&'a [u8], ClcError> {
        Ok(self.rest.bytes(self.v6_len)?)
    }
}

impl<'a> Proposal<'a> {
    /// The client's IPv6 prefixes: address and prefix length.
    pub fn ipv6_prefixes(&self) -> impl Iterator<Item = ([u8; 16], u8)> + 'a {
        self.ipv6_prefixes
            .chunks_exact(IPV6_PREFIX_LEN)
            .filter_map(|c| {
                let (len, addr) = c.split_last()?;
                Some((<[u8; 16]>::try_from(addr).ok()?, *len))
            })
    }

    /// Parses and validates a complete proposal with the checks upstream
    /// makes: prefix counts, UEID and GID counts, offsets inside the
    /// message, a length that matches the layout exactly, the trailer.
    /// Stricter than upstream: an SMC-Dv1 offer needs its SMC-D area, and
    /// an SMC-Dv2 extension must lie inside the message.
    pub fn parse(msg: &'a [u8]) -> Result<Self, ClcError> {
        let header = Header::parse(msg)?;
        if header.kind != MsgType::Proposal {
            return Err(ClcError::BadType);
        }
        let msg = header.whole(msg, true)?;
        let mut r = Reader::at(msg, HEADER_LEN);
        let local = LocalInfo::read(&mut r)?;
        let iparea_offset = usize::from(r.be16()?);
        if iparea_offset > PROPOSAL_SMCD_LEN {
            return Err(ClcError::BadLayout);
        }
        let prefix_start = PROPOSAL_BASE_LEN + iparea_offset;
        let prefixes = PrefixArea::read(msg, prefix_start)?;
        let smcd = read_smcd_area(msg, &header, iparea_offset)?;
        let mut p = if header.version == SMC_V1 {
            Self::parse_v1(header, local, msg.len(), prefix_start, prefixes)?
        } else {
            Self::parse_v2(header, local, msg, prefixes)?
        };
        p.smcd = smcd;
        Ok(p)
    }

    /// The rest of a v1 proposal: an SMC variant and the prefix area, which
    /// ends the message.
    fn parse_v1(
        header: Header,
        local: LocalInfo,
        len: usize,
        prefix_start: usize,
        prefixes: PrefixArea<'a>,
    ) -> Result<Self, ClcError> {
        if header.typev1 == SmcType::N {
            return Err(ClcError::BadVersion);
        }
        if len != prefix_start + PROPOSAL_PREFIX_LEN + prefixes.v6_len + TRAILER_LEN {
            return Err(ClcError::BadLength);
        }
        let ipv4_prefix = Some(prefixes.ipv4);
        Ok(Proposal {
            header,
            local,
            ipv4_prefix,
            ipv6_prefixes: prefixes.ipv6()?,
            v2: None,
            smcd: None,
            smcd_v2: None,
        })
    }

    /// The rest of a v2 (or later) proposal: the SMC-D area, the prefix
    /// area when v1 indicates a variant, the v2 extension when v2 does and
    /// the SMC-Dv2 extension when v2 indicates SMC-D.
    fn parse_v2(
        header: Header,
        local: LocalInfo,
        msg: &'a [u8],
        prefixes: PrefixArea<'a>,
    ) -> Result<Self, ClcError> {
        let typev2 = SmcType::from_bits(header.typev2);
        let (v2, v2_len, v2_start) = if typev2 != SmcType::N {
            let (ext, len, start) = ProposalV2::read(msg, typev2)?;
            (Some(ext), len, start)
        } else {
            (None, 0, 0)
        };
        let has_v1 = header.typev1 != SmcType::N;
        let v1_len = if has_v1 {
            PROPOSAL_PREFIX_LEN + prefixes.v6_len
        } else {
            0
        };
        if msg.len() != PROPOSAL_BASE_LEN + PROPOSAL_SMCD_LEN + v1_len + v2_len + TRAILER_LEN {
            return Err(ClcError::BadLength);
        }
        let (ipv4_prefix, ipv6_prefixes) = if has_v1 {
            (Some(prefixes.ipv4), prefixes.ipv6()?)
        } else {
            (None, &[][..])
        };
        let smcd_v2 = match v2 {
            Some(ext) if typev2.has_d() => read_smcd_v2_ext(msg, v2_start, ext.ism_gid_count)?,
            _ => None,
        };
        Ok(Proposal {
            header,
            local,
            ipv4_prefix,
            ipv6_prefixes,
            v2,
            smcd: None,
            smcd_v2,
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

#[cfg(test)]
mod tests {
    use super::super::testdata::*;
    use super::super::*;

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
        assert_eq!(
            choose_variant(&p, v1_only),
            Err(DeclineReason::NoSmcrDevice)
        );

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
        // What the caller has at hand for v1 goes nowhere in a v2-only
        // proposal: the identity and prefix areas stay zero.
        let params = ProposalParams {
            v1: false,
            v2: true,
            local: LocalInfo {
                peer_id: ID,
                gid: ROCE_GID,
                mac: [2, 0, 0, 0, 0, 1],
            },
            ipv4_prefix: Ipv4Prefix {
                subnet: 0x0a0a_0000,
                len: 24,
            },
            roce_gid: ROCE_GID,
            ueids: &ueids,
            release: SMC_RELEASE,
            max_conns: 255,
            max_links: 2,
            feature_mask: SMC_FEATURE_MASK,
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
}
