// SPDX-License-Identifier: GPL-2.0

//! The checks the fuzz targets run, shared so that `clc_any` can run them
//! all, and the seed messages of their corpora.
//!
//! Every parser must return on any input without panicking; beyond that,
//! each check `assert!`s properties of what it accepts: the header fields
//! are what the bytes say, re-encoding a parsed message gives one that
//! parses to the same value, encoding what the fuzzer makes up parses back
//! to it, and the server's choice follows what the client offers. A failed
//! assertion is how a fuzz target reports a bug.

#![forbid(unsafe_code)]

use smc_wire::clc::{
    choose_variant, encode_proposal, ClcError, Decline, DeclineReason, FirstContactExt, GidList,
    Header, Ipv4Prefix, LocalInfo, MsgType, Proposal, ProposalParams, ServerCaps, SmcType,
    SmcrAcceptConfirm, Variant, DECLINE_LEN_V1, DECLINE_LEN_V2, EID_LEN, EYECATCHER_SMCD,
    EYECATCHER_SMCR, FCE_LEN_V20, FCE_LEN_V2X, HEADER_LEN, MAX_FCE_GIDS, MAX_MESSAGE_LEN,
    MAX_UEIDS, MAX_V6_PREFIXES, OS_LINUX, SMCR_ACCEPT_CONFIRM_LEN_V2, SMC_FEATURE_MASK,
    SMC_RELEASE, SMC_RELEASE_1, SMC_V1, SMC_V2, TRAILER_LEN,
};
use smc_wire::codec::Reader;

pub mod rdma;
pub mod seeds;

pub use rdma::{check_cdc, check_cursor, check_llc_any};

/// Every combination of what a server can serve.
pub const ALL_CAPS: [ServerCaps; 4] = [
    ServerCaps {
        smcr_v1: false,
        smcr_v2: false,
    },
    ServerCaps {
        smcr_v1: true,
        smcr_v2: false,
    },
    ServerCaps {
        smcr_v1: false,
        smcr_v2: true,
    },
    ServerCaps {
        smcr_v1: true,
        smcr_v2: true,
    },
];

/// The variants a message indicates for v2: none in a v1 message.
fn typev2_of(h: &Header) -> SmcType {
    if h.version >= SMC_V2 {
        match h.typev2 & 3 {
            0 => SmcType::R,
            1 => SmcType::D,
            2 => SmcType::N,
            _ => SmcType::B,
        }
    } else {
        SmcType::N
    }
}

/// `Header::parse`: accepts exactly the headers whose fields are in range,
/// reads only the first 8 bytes, and the fields give back those bytes.
pub fn check_header(data: &[u8]) {
    let parsed = Header::parse(data);
    let Ok(h) = parsed else {
        if data.len() >= HEADER_LEN {
            assert_eq!(Header::parse(&data[..HEADER_LEN]), parsed);
        }
        return;
    };
    assert!(data.len() >= HEADER_LEN);
    assert_eq!(Header::parse(&data[..HEADER_LEN]), parsed);
    assert!(h.eyecatcher == EYECATCHER_SMCR || h.eyecatcher == EYECATCHER_SMCD);
    let len = usize::from(h.length);
    assert!((HEADER_LEN + TRAILER_LEN..=MAX_MESSAGE_LEN).contains(&len));
    assert!((1..16).contains(&h.version) && h.typev2 < 4);
    let mut b = [0u8; HEADER_LEN];
    b[..4].copy_from_slice(&h.eyecatcher);
    b[4] = h.kind as u8;
    b[5..7].copy_from_slice(&h.length.to_be_bytes());
    b[7] = (h.version << 4) | (h.typev2 << 2) | h.typev1 as u8;
    assert_eq!(b[..], data[..HEADER_LEN]);
}

/// `Decline::parse` and `Decline::encode`: a parsed decline re-encodes to
/// one that parses the same with the same identifier and codes, and a
/// decline made up from the input round-trips.
pub fn check_decline(data: &[u8]) {
    if let Ok(d) = Decline::parse(data) {
        let h = Header::parse(data).expect("a decline has a header");
        assert_eq!(h.kind, MsgType::Decline);
        assert_eq!(usize::from(h.length), d.len());
        assert!(data.len() >= d.len());
        assert_eq!(Decline::parse(&data[..d.len()]), Ok(d));
        let mut buf = [0xa5u8; 64];
        let n = d.encode(&mut buf).expect("a parsed decline encodes");
        assert_eq!(n, d.len());
        assert_eq!(Decline::parse(&buf[..n]), Ok(d));
        // Identifier, diagnosis and (v2) additional codes are kept as sent.
        assert_eq!(buf[8..20], data[8..20]);
        if n == DECLINE_LEN_V2 {
            assert_eq!(buf[24..40], data[24..40]);
        }
        let mut again = [0u8; 64];
        assert_eq!(Decline::parse(&buf[..n]).unwrap().encode(&mut again), Ok(n));
        assert_eq!(again[..n], buf[..n]);
    }
    decline_from_fields(data);
}

/// A decline with fields taken from `data` encodes into what parses back
/// to it (within the field widths: 4-bit version 1..15 and OS type).
fn decline_from_fields(data: &[u8]) {
    let mut r = Reader::new(data);
    let (Ok(v), Ok(peer_id), Ok(code), Ok(flags), Ok(diag)) =
        (r.u8(), r.array::<8>(), r.be32(), r.u8(), r.array::<16>())
    else {
        return;
    };
    let version = 1 + v % 15;
    let mut d = Decline::new(version, peer_id, DeclineReason::from_code(code));
    d.os_type = flags & 0xf;
    d.sync_error = flags & 0x10 != 0;
    if version != SMC_V1 {
        let mut dr = Reader::new(&diag);
        for x in d.diagnosis_v2.iter_mut() {
            *x = dr.be32().unwrap();
        }
    }
    let mut buf = [0u8; DECLINE_LEN_V2];
    let n = d
        .encode(&mut buf)
        .expect("a decline fits in DECLINE_LEN_V2");
    let want = if version == SMC_V1 {
        DECLINE_LEN_V1
    } else {
        DECLINE_LEN_V2
    };
    assert_eq!(n, want);
    assert_eq!(Decline::parse(&buf[..n]), Ok(d));
    assert_eq!(d.encode(&mut buf[..n - 1]), Err(ClcError::BufferTooSmall));
}

/// What `choose_variant` may answer for `p` with `caps`.
fn check_choice(p: &Proposal<'_>, caps: ServerCaps) -> Result<Variant, DeclineReason> {
    let choice = choose_variant(p, caps);
    let typev2 = typev2_of(&p.header);
    let v2_usable = typev2.has_r() && p.v2.is_some_and(|e| e.ueids().next().is_some());
    let v1_usable = p.header.typev1.has_r();
    match choice {
        Ok(Variant::SmcrV2) => assert!(caps.smcr_v2 && v2_usable),
        Ok(Variant::SmcrV1) => {
            assert!(caps.smcr_v1 && v1_usable);
            assert!(!(caps.smcr_v2 && v2_usable), "v2 is preferred");
        }
        Err(reason) => {
            let servable = (caps.smcr_v2 && v2_usable) || (caps.smcr_v1 && v1_usable);
            assert!(!servable);
            assert!(matches!(
                reason,
                DeclineReason::NoSmcDevice
                    | DeclineReason::NoSmcrDevice
                    | DeclineReason::NoSmcdDevice
                    | DeclineReason::NoV2Extension
                    | DeclineReason::NoUeid
                    | DeclineReason::PeerNoSmc
            ));
        }
    }
    choice
}

/// `Proposal::parse`, `choose_variant` and `encode_proposal`.
pub fn check_proposal(data: &[u8]) {
    if let Ok(p) = Proposal::parse(data) {
        check_parsed_proposal(data, &p);
    }
    proposal_from_fields(data);
}

/// The invariants of a parsed proposal, the server's choice for it, and
/// the round trip through the encoder where it can express the proposal.
fn check_parsed_proposal(data: &[u8], p: &Proposal<'_>) {
    let h = p.header;
    assert_eq!(h.kind, MsgType::Proposal);
    assert_eq!(Header::parse(data), Ok(h));
    let len = usize::from(h.length);
    assert_eq!(Proposal::parse(&data[..len]).as_ref(), Ok(p));
    assert!(p.ipv6_prefixes().count() <= MAX_V6_PREFIXES);
    let typev2 = typev2_of(&h);
    assert_eq!(p.v2.is_some(), typev2 != SmcType::N);
    assert_eq!(p.ipv4_prefix.is_some(), h.typev1 != SmcType::N);
    if h.version == SMC_V1 {
        assert!(h.typev1 != SmcType::N);
    }
    if let Some(v2) = p.v2 {
        assert!(v2.ueids().count() <= MAX_UEIDS);
        assert!(v2.ueids().all(|u| u.len() == EID_LEN));
    }
    let choices = ALL_CAPS.map(|caps| check_choice(p, caps));
    assert!(choices[0].is_err(), "nothing is served without a device");

    // What `encode_proposal` can express: SMC-R only, no IPv6 prefix, no
    // SMC-D, and v2 only with a UEID.
    let v2_ok =
        p.v2.is_none_or(|e| !e.seid && e.ism_gid_count == 0 && e.ueids().next().is_some());
    if !matches!(h.typev1, SmcType::R | SmcType::N)
        || !matches!(typev2, SmcType::R | SmcType::N)
        || p.ipv6_prefixes().next().is_some()
        || !v2_ok
    {
        return;
    }
    let mut ueids = [[0u8; EID_LEN]; MAX_UEIDS];
    let mut n_ueids = 0;
    if let Some(e) = p.v2 {
        for (slot, u) in ueids.iter_mut().zip(e.ueids()) {
            slot.copy_from_slice(u);
            n_ueids += 1;
        }
    }
    let mut params = ProposalParams {
        v1: h.typev1 == SmcType::R,
        v2: p.v2.is_some(),
        local: p.local,
        ipv4_prefix: p.ipv4_prefix.unwrap_or_default(),
        ueids: &ueids[..n_ueids],
        ..ProposalParams::default()
    };
    if let Some(e) = p.v2 {
        params.roce_gid = e.roce_gid;
        params.release = e.release;
        params.max_conns = e.max_conns;
        params.max_links = e.max_links;
        params.feature_mask = e.feature_mask;
    }
    let mut buf = [0u8; MAX_MESSAGE_LEN];
    let n = encode_proposal(&params, &mut buf).expect("an expressible proposal encodes");
    let q = Proposal::parse(&buf[..n]).expect("an encoded proposal parses");
    // The identity is the v1 offer's: without one it goes out zero.
    if h.typev1 == SmcType::N {
        assert_eq!(q.local, LocalInfo::default());
    } else {
        assert_eq!(q.local, p.local);
    }
    assert_eq!(q.ipv4_prefix, p.ipv4_prefix);
    assert_eq!(q.v2, p.v2);
    assert_eq!(q.header.typev1, h.typev1);
    assert_eq!(typev2_of(&q.header), typev2);
    assert_eq!(ALL_CAPS.map(|caps| choose_variant(&q, caps)), choices);
}

/// A proposal made up from `data` encodes as specified (or is refused for
/// too many or missing UEIDs) and parses back to what was offered.
fn proposal_from_fields(data: &[u8]) {
    let mut r = Reader::new(data);
    let (Ok(flags), Ok(peer_id), Ok(gid), Ok(mac), Ok(subnet), Ok(plen)) = (
        r.u8(),
        r.array::<8>(),
        r.array::<16>(),
        r.array::<6>(),
        r.be32(),
        r.u8(),
    ) else {
        return;
    };
    let (Ok(roce_gid), Ok(release), Ok(max_conns), Ok(max_links), Ok(feature_mask)) =
        (r.array::<16>(), r.u8(), r.u8(), r.u8(), r.be16())
    else {
        return;
    };
    let mut ueids = [[0u8; EID_LEN]; MAX_UEIDS + 1];
    let n_ueids = usize::from(flags >> 2) % (MAX_UEIDS + 2);
    for u in ueids.iter_mut().take(n_ueids) {
        *u = r.array().unwrap_or([0x40; EID_LEN]);
    }
    let params = ProposalParams {
        v1: flags & 1 != 0,
        v2: flags & 2 != 0,
        local: LocalInfo { peer_id, gid, mac },
        ipv4_prefix: Ipv4Prefix { subnet, len: plen },
        roce_gid,
        ueids: &ueids[..n_ueids],
        release: release & 0xf,
        max_conns,
        max_links,
        feature_mask,
    };
    let mut buf = [0u8; MAX_MESSAGE_LEN];
    let res = encode_proposal(&params, &mut buf);
    if n_ueids > MAX_UEIDS || (params.v2 && n_ueids == 0) {
        assert_eq!(res, Err(ClcError::BadLayout));
        return;
    }
    let n = res.expect("a valid proposal encodes");
    let p = Proposal::parse(&buf[..n]).expect("an encoded proposal parses");
    assert_eq!(p.header.version, SMC_V2);
    let local = if params.v1 {
        params.local
    } else {
        LocalInfo::default()
    };
    assert_eq!(p.local, local);
    assert_eq!(p.ipv4_prefix, params.v1.then_some(params.ipv4_prefix));
    assert_eq!(p.ipv6_prefixes().count(), 0);
    match p.v2 {
        Some(e) => {
            assert!(params.v2);
            assert_eq!(e.roce_gid, roce_gid);
            assert_eq!(e.release, params.release);
            assert_eq!((e.max_conns, e.max_links), (max_conns, max_links));
            assert_eq!(e.feature_mask, feature_mask);
            assert!(e.ueids().eq(params.ueids.iter().map(|u| &u[..])));
            assert!(!e.seid && e.ism_gid_count == 0);
        }
        None => assert!(!params.v2),
    }
    for caps in ALL_CAPS {
        let want = if params.v2 && caps.smcr_v2 {
            Ok(Variant::SmcrV2)
        } else if params.v1 && caps.smcr_v1 {
            Ok(Variant::SmcrV1)
        } else if !params.v1 && !params.v2 {
            Err(DeclineReason::PeerNoSmc)
        } else {
            Err(DeclineReason::NoSmcrDevice)
        };
        assert_eq!(check_choice(&p, caps), want);
    }
    assert_eq!(
        encode_proposal(&params, &mut buf[..n - 1]),
        Err(ClcError::BufferTooSmall)
    );
}

/// `SmcrAcceptConfirm::parse` and `encode`: a parsed message is
/// re-encoded as it was sent (a release 0 extension of the short layout
/// comes back in the 52-byte one Linux 6.12 sends), and one made up from
/// the input round-trips.
pub fn check_accept_confirm(data: &[u8]) {
    if let Ok(a) = SmcrAcceptConfirm::parse(data) {
        let h = Header::parse(data).expect("an accept has a header");
        assert!(matches!(a.kind, MsgType::Accept | MsgType::Confirm));
        assert_eq!(
            (h.kind, h.version, h.typev1),
            (a.kind, a.version, SmcType::R)
        );
        let len = usize::from(h.length);
        let v2 = a.version != SMC_V1;
        assert_eq!(a.fce.is_some(), v2 && a.first_contact);
        assert!(a.gid_list.is_none() || a.fce.is_some());
        assert!(data.len() >= len);
        assert_eq!(SmcrAcceptConfirm::parse(&data[..len]), Ok(a));
        let mut buf = [0xa5u8; MAX_MESSAGE_LEN];
        let n = a.encode(&mut buf).expect("a parsed accept encodes");
        assert_eq!(n, a.encoded_len());
        let short_fce =
            a.fce.is_some_and(|f| f.release == 0) && n == len + FCE_LEN_V2X - FCE_LEN_V20;
        assert!(n == len || short_fce, "{n} bytes for {len}");
        assert_eq!(SmcrAcceptConfirm::parse(&buf[..n]), Ok(a));
        // Every field of the fixed part is where it was; the reserved
        // bytes (51, 60, v2 96..104) are zero.
        assert_eq!(buf[7] & 0xfb, data[7] & 0xfb);
        assert_eq!(buf[8..51], data[8..51]);
        assert_eq!(buf[52..60], data[52..60]);
        assert_eq!(buf[61..64], data[61..64]);
        if v2 {
            assert_eq!(buf[64..96], data[64..96]);
        }
        if let Some(fce) = a.fce {
            // Direct bit, OS type, release and host name as sent.
            assert_eq!(buf[104] & 0x80, data[104] & 0x80);
            assert_eq!(buf[105], data[105]);
            assert_eq!(buf[108..140], data[108..140]);
            if fce.release >= SMC_RELEASE_1 {
                assert_eq!(buf[140..144], data[140..144]);
            }
        }
        if let Some(g) = a.gid_list {
            // The GIDs end the message, before the trailer, in both.
            let gids = g.gids().len() * 16;
            assert_eq!(buf[n - 4 - gids..n - 4], data[len - 4 - gids..len - 4]);
        }
        let mut again = [0u8; MAX_MESSAGE_LEN];
        assert_eq!(
            SmcrAcceptConfirm::parse(&buf[..n])
                .unwrap()
                .encode(&mut again),
            Ok(n)
        );
        assert_eq!(again[..n], buf[..n]);
    }
    accept_from_fields(data);
}

/// An accept or confirm with fields from `data` (within their widths)
/// encodes into what parses back to it.
fn accept_from_fields(data: &[u8]) {
    let mut r = Reader::new(data);
    let (Ok(flags), Ok(peer_id), Ok(gid), Ok(mac), Ok(qpn), Ok(rkey), Ok(idx)) = (
        r.u8(),
        r.array::<8>(),
        r.array::<16>(),
        r.array::<6>(),
        r.be32(),
        r.be32(),
        r.u8(),
    ) else {
        return;
    };
    let (Ok(token), Ok(sizes), Ok(dma), Ok(psn), Ok(eid)) =
        (r.be32(), r.u8(), r.be64(), r.be32(), r.array::<EID_LEN>())
    else {
        return;
    };
    let version = 1 + (flags >> 4) % 15;
    let kind = match flags & 3 {
        0 => MsgType::Accept,
        1 => MsgType::Confirm,
        2 => MsgType::Proposal,
        _ => MsgType::Decline,
    };
    let first_contact = flags & 4 != 0;
    // The first contact extension and GID list, when the input has them.
    let (mut fce, mut gid_list) = (None, None);
    if version != SMC_V1 && first_contact {
        let (Ok(fce_flags), Ok(hostname), Ok(max_conns), Ok(max_links), Ok(mask), Ok(n_gids)) =
            (r.u8(), r.array::<32>(), r.u8(), r.u8(), r.be16(), r.u8())
        else {
            return;
        };
        let release = fce_flags & 0xf;
        let v2x = release >= SMC_RELEASE_1;
        fce = Some(FirstContactExt {
            v2_direct: fce_flags & 0x80 != 0,
            os_type: (fce_flags >> 4) & 7,
            release,
            hostname,
            max_conns: if v2x { max_conns } else { 0 },
            max_links: if v2x { max_links } else { 0 },
            feature_mask: if v2x { mask } else { 0 },
        });
        if n_gids & 0x80 != 0 {
            let mut gids = [[0u8; 16]; MAX_FCE_GIDS + 1];
            let n = usize::from(n_gids & 0xf) % (MAX_FCE_GIDS + 2);
            for g in gids.iter_mut().take(n) {
                *g = r.array().unwrap_or([0x11; 16]);
            }
            match GidList::new(&gids[..n]) {
                Ok(l) => gid_list = Some(l),
                Err(e) => {
                    assert!(n > MAX_FCE_GIDS);
                    assert_eq!(e, ClcError::BadLayout);
                    return;
                }
            }
        }
    }
    let a = SmcrAcceptConfirm {
        kind,
        version,
        first_contact,
        local: LocalInfo { peer_id, gid, mac },
        qpn: qpn & 0xff_ffff,
        rmb_rkey: rkey,
        rmbe_idx: idx,
        rmbe_alert_token: token,
        rmbe_size: sizes >> 4,
        qp_mtu: sizes & 0xf,
        rmb_dma_addr: dma,
        psn: psn & 0xff_ffff,
        eid: if version == SMC_V1 { [0; EID_LEN] } else { eid },
        fce,
        gid_list,
    };
    let mut buf = [0u8; MAX_MESSAGE_LEN];
    let res = a.encode(&mut buf);
    if !matches!(kind, MsgType::Accept | MsgType::Confirm) {
        assert_eq!(res, Err(ClcError::BadType));
        return;
    }
    let n = res.expect("an accept fits in the largest message");
    assert_eq!(n, a.encoded_len());
    assert_eq!(SmcrAcceptConfirm::parse(&buf[..n]), Ok(a));
    assert_eq!(a.encode(&mut buf[..n - 1]), Err(ClcError::BufferTooSmall));
    // An extension where there must be none, or none where there must be
    // one, is refused.
    let wrong = SmcrAcceptConfirm {
        fce: if a.fce.is_some() {
            None
        } else {
            fce.or(Some(FirstContactExt {
                v2_direct: false,
                os_type: 2,
                release: 1,
                hostname: [b' '; 32],
                max_conns: 16,
                max_links: 1,
                feature_mask: 0,
            }))
        },
        gid_list: None,
        ..a
    };
    assert_eq!(wrong.encode(&mut buf), Err(ClcError::BadLayout));
}

/// The kernel's receive path: the header first, then as many bytes as it
/// says, then the parser for its type; the server answers with a decline
/// in the client's version. Parsers of the other types refuse the message.
pub fn check_any(data: &[u8]) {
    check_header(data);
    let Some(head) = data.get(..HEADER_LEN) else {
        return;
    };
    let Ok(h) = Header::parse(head) else {
        return;
    };
    // The kernel reads exactly `length` bytes; fewer is a short read.
    let Some(msg) = data.get(..usize::from(h.length)) else {
        return;
    };
    let proposal = Proposal::parse(msg);
    let decline = Decline::parse(msg);
    let accept = SmcrAcceptConfirm::parse(msg);
    assert_eq!(Proposal::parse(data), proposal);
    assert_eq!(Decline::parse(data), decline);
    assert_eq!(SmcrAcceptConfirm::parse(data), accept);
    let reason = match h.kind {
        MsgType::Proposal => {
            assert_eq!(decline, Err(ClcError::BadType));
            assert_eq!(accept, Err(ClcError::BadType));
            check_proposal(msg);
            match proposal {
                // smc_rs has no device: whatever it could choose, it declines.
                Ok(p) => Some(
                    choose_variant(&p, ServerCaps::default())
                        .err()
                        .unwrap_or(DeclineReason::NoSmcDevice),
                ),
                Err(ClcError::BadVersion) => Some(DeclineReason::VersionMismatch),
                Err(_) => Some(DeclineReason::SyncError),
            }
        }
        MsgType::Decline => {
            assert_eq!(proposal, Err(ClcError::BadType));
            assert_eq!(accept, Err(ClcError::BadType));
            check_decline(msg);
            None
        }
        MsgType::Accept | MsgType::Confirm => {
            assert_eq!(proposal, Err(ClcError::BadType));
            assert_eq!(decline, Err(ClcError::BadType));
            check_accept_confirm(msg);
            Some(DeclineReason::SyncError)
        }
    };
    if let Some(reason) = reason {
        let version = if h.version >= SMC_V2 { SMC_V2 } else { SMC_V1 };
        let d = Decline::new(version, [0; 8], reason);
        let mut out = [0u8; DECLINE_LEN_V2];
        let n = d.encode(&mut out).expect("the reply decline fits");
        assert_eq!(Decline::parse(&out[..n]), Ok(d));
    }
}
