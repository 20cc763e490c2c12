// SPDX-License-Identifier: GPL-2.0

//! Tests of the LLC codecs: upstream's layouts byte for byte, round
//! trips, and hostile input.

use super::testdata::*;
use super::*;

/// Encodes `m`, checks it gives `want` and parses back to `m`.
fn check_vector(m: LlcMessage<'_>, want: &[u8]) {
    let mut buf = [0xa5u8; 256];
    assert_eq!(m.encoded_len(), want.len(), "{m:?}");
    assert_eq!(m.encode(&mut buf), Ok(want.len()), "{m:?}");
    assert_eq!(&buf[..want.len()], want, "{m:?}");
    assert_eq!(buf[want.len()], 0xa5);
    assert_eq!(LlcMessage::parse(want), Ok(m));
    assert_eq!(
        m.encode(&mut buf[..want.len() - 1]),
        Err(LlcError::BufferTooSmall)
    );
}

const RT0: AddLinkRkey = AddLinkRkey {
    rmb_key: 0x1111_1111,
    rmb_key_new: 0x2222_2222,
    rmb_vaddr_new: 0x0000_7f00_0000_1000,
};
const RT1: AddLinkRkey = AddLinkRkey {
    rmb_key: 0x3333_3333,
    rmb_key_new: 0x4444_4444,
    rmb_vaddr_new: 0x0000_7f00_0000_2000,
};

#[test]
fn confirm_link_matches_upstream() {
    let m = ConfirmLink {
        version: LlcVersion::V1,
        resp: false,
        no_rmbe_eyec: true,
        sender_mac: MAC,
        sender_gid: GID,
        sender_qpn: 0x123,
        link_num: 1,
        link_uid: [0xde, 0xad, 0, 1],
        max_links: 2,
        max_conns: 0,
    };
    check_vector(LlcMessage::ConfirmLink(m), &confirm_link_v1());
    let r = ConfirmLink {
        version: LlcVersion::V2,
        resp: true,
        sender_gid: GID2,
        sender_qpn: 0xab_cdef,
        max_conns: 255,
        ..m
    };
    check_vector(LlcMessage::ConfirmLink(r), &confirm_link_v2_resp());
}

#[test]
fn add_link_matches_upstream() {
    let reject = AddLink {
        version: LlcVersion::V1,
        resp: true,
        reject: true,
        reject_reason: REJ_RSN_NO_ALT_PATH,
        sender_mac: MAC,
        sender_gid: GID,
        sender_qpn: 0x456,
        link_num: 2,
        qp_mtu: 3,
        initial_psn: 0x12_3456,
        ext: None,
    };
    check_vector(LlcMessage::AddLink(reject), &add_link_v1_reject());

    let mut keys = [0u8; 32];
    let rkeys = EntryList::build(&[RT0, RT1], &mut keys).unwrap();
    let v2 = AddLink {
        version: LlcVersion::V2,
        resp: false,
        reject: false,
        reject_reason: 0,
        sender_mac: MAC,
        sender_gid: GID2,
        sender_qpn: 0x99,
        link_num: 2,
        qp_mtu: 5,
        initial_psn: 7,
        ext: Some(AddLinkV2Ext {
            direct: true,
            client_target_gid: GID,
            rkeys,
        }),
    };
    check_vector(LlcMessage::AddLink(v2), &add_link_v2());
    let b = add_link_v2();
    let Ok(LlcMessage::AddLink(p)) = LlcMessage::parse(&b) else {
        panic!("add link v2 does not parse");
    };
    let e = p.ext.unwrap();
    assert_eq!(e.rkeys.len(), 2);
    assert_eq!(e.rkeys.get(1), Some(RT1));
    assert_eq!(e.rkeys.get(2), None);
    let mut it = e.rkeys.iter();
    assert_eq!(
        (it.next(), it.next(), it.next()),
        (Some(RT0), Some(RT1), None)
    );

    // The 44-byte v2 reject: no extension, no room for a reason.
    let v2_reject = AddLink {
        resp: true,
        reject: true,
        ext: None,
        ..v2
    };
    check_vector(LlcMessage::AddLink(v2_reject), &add_link_v2_no_ext());
    let with_reason = AddLink {
        reject_reason: REJ_RSN_NO_ALT_PATH,
        ..v2_reject
    };
    let mut buf = [0u8; 44];
    with_reason.encode(&mut buf).unwrap();
    assert_eq!(buf, add_link_v2_no_ext());
}

#[test]
fn add_link_cont_matches_upstream() {
    let m = AddLinkCont {
        resp: true,
        link_num: 2,
        num_rkeys: 3,
        rkeys: [
            AddLinkRkey {
                rmb_key: 0x0101_0101,
                rmb_key_new: 0x0202_0202,
                rmb_vaddr_new: 0x1000,
            },
            AddLinkRkey {
                rmb_key: 0x0303_0303,
                rmb_key_new: 0x0404_0404,
                rmb_vaddr_new: 0x2000,
            },
        ],
    };
    check_vector(LlcMessage::AddLinkCont(m), &add_link_cont());
    assert_eq!(m.used().len(), 2);
    let one = AddLinkCont { num_rkeys: 1, ..m };
    assert_eq!(one.used(), &m.rkeys[..1]);
}

#[test]
fn delete_link_matches_upstream() {
    let all = DeleteLink {
        version: LlcVersion::V1,
        resp: false,
        all: true,
        orderly: true,
        link_num: 0,
        reason: DEL_PROG_INIT_TERM,
    };
    check_vector(LlcMessage::DeleteLink(all), &delete_link_v1_all());
    let resp = DeleteLink {
        version: LlcVersion::V2,
        resp: true,
        all: false,
        orderly: false,
        link_num: 2,
        reason: DEL_NOLNK,
    };
    check_vector(LlcMessage::DeleteLink(resp), &delete_link_v2_resp());
}

#[test]
fn req_add_link_matches_upstream() {
    let mut gids = [0u8; 32];
    let m = ReqAddLink {
        resp: false,
        gids: EntryList::build(&[GID, GID2], &mut gids).unwrap(),
    };
    check_vector(LlcMessage::ReqAddLink(m), &req_add_link());
    let r = ReqAddLink {
        resp: true,
        gids: EntryList::empty(),
    };
    check_vector(LlcMessage::ReqAddLink(r), &req_add_link_resp());
    // One GID fits in 44 bytes.
    let mut one = [0u8; 16];
    let m1 = ReqAddLink {
        resp: false,
        gids: EntryList::build(&[GID], &mut one).unwrap(),
    };
    assert_eq!(m1.encoded_len(), 44);
}

#[test]
fn confirm_rkey_matches_upstream() {
    let m = ConfirmRkey {
        version: LlcVersion::V1,
        resp: false,
        negative: false,
        retry: false,
        num_rkeys: 1,
        rkey: 0xaabb_ccdd,
        vaddr: 0x0000_7f12_3456_0000,
        others: [
            LinkRkey {
                link_id: 2,
                rkey: 0x1122_3344,
                vaddr: 0x0000_7f12_3456_8000,
            },
            LinkRkey::default(),
        ],
    };
    check_vector(LlcMessage::ConfirmRkey(m), &confirm_rkey_v1());
    assert_eq!(m.used(), Some(&m.others[..1]));
    let neg = ConfirmRkey {
        version: LlcVersion::V2,
        resp: true,
        negative: true,
        retry: true,
        num_rkeys: 4,
        rkey: 7,
        vaddr: 0,
        others: [
            LinkRkey::default(),
            LinkRkey {
                link_id: 3,
                rkey: 9,
                vaddr: 0x10,
            },
        ],
    };
    check_vector(LlcMessage::ConfirmRkey(neg), &confirm_rkey_v2_neg());
    assert_eq!(neg.used(), None);
    assert_eq!(
        ConfirmRkey {
            num_rkeys: 3,
            ..neg
        }
        .used(),
        Some(&neg.others[..])
    );
}

#[test]
fn confirm_rkey_cont_matches_rfc() {
    let k = |link_id, rkey, vaddr| LinkRkey {
        link_id,
        rkey,
        vaddr,
    };
    let m = ConfirmRkeyCont {
        resp: true,
        negative: true,
        num_rkeys: 1,
        rkeys: [k(1, 2, 3), k(4, 5, 6), k(7, 8, 9)],
    };
    check_vector(LlcMessage::ConfirmRkeyCont(m), &confirm_rkey_cont());
}

#[test]
fn delete_rkey_matches_upstream() {
    let mut k = [0u8; 48];
    let req = DeleteRkey {
        version: LlcVersion::V1,
        resp: false,
        negative: false,
        retry: false,
        num_rkeys: 2,
        err_mask: 0,
        rkeys: EntryList::build(&[0x1234, 0x5678], &mut k).unwrap(),
    };
    check_vector(LlcMessage::DeleteRkey(req), &delete_rkey_v1());
    let resp = DeleteRkey {
        resp: true,
        negative: true,
        err_mask: 0x40,
        ..req
    };
    check_vector(LlcMessage::DeleteRkey(resp), &delete_rkey_v1_resp());

    let keys: [u32; 12] = core::array::from_fn(|i| 0x100 + i as u32);
    let v2 = DeleteRkey {
        version: LlcVersion::V2,
        resp: false,
        negative: false,
        retry: false,
        num_rkeys: 12,
        err_mask: 0,
        rkeys: EntryList::build(&keys, &mut k).unwrap(),
    };
    check_vector(LlcMessage::DeleteRkey(v2), &delete_rkey_v2());
    let v2_resp = DeleteRkey {
        resp: true,
        negative: true,
        err_mask: 3,
        rkeys: EntryList::empty(),
        ..v2
    };
    check_vector(LlcMessage::DeleteRkey(v2_resp), &delete_rkey_v2_resp());
    // What upstream sends: one rkey in 44 bytes.
    let mut k1 = [0u8; 4];
    let one = DeleteRkey {
        num_rkeys: 1,
        rkeys: EntryList::build(&[0xabcd], &mut k1).unwrap(),
        ..v2
    };
    assert_eq!(one.encoded_len(), 44);
}

#[test]
fn delete_rkey_counts_are_checked() {
    let mut k = [0u8; 64];
    let v1 = DeleteRkey {
        version: LlcVersion::V1,
        resp: false,
        negative: false,
        retry: false,
        num_rkeys: 3,
        err_mask: 0,
        rkeys: EntryList::build(&[1, 2], &mut k).unwrap(),
    };
    let mut buf = [0u8; 64];
    assert_eq!(v1.encode(&mut buf), Err(LlcError::BadCount));
    // v1: more than eight announced, eight carried.
    let keys = [7u32; 8];
    let mut k8 = [0u8; 32];
    let many = DeleteRkey {
        num_rkeys: 200,
        rkeys: EntryList::build(&keys, &mut k8).unwrap(),
        ..v1
    };
    assert_eq!(many.encode(&mut buf), Ok(44));
    let Ok(LlcMessage::DeleteRkey(p)) = LlcMessage::parse(&buf[..44]) else {
        panic!("v1 delete rkey does not parse");
    };
    assert_eq!(p, many);
    // A v2 response carries no rkeys; a v2 request all it announces.
    let v2_resp = DeleteRkey {
        version: LlcVersion::V2,
        resp: true,
        ..many
    };
    assert_eq!(v2_resp.encode(&mut buf), Err(LlcError::BadCount));
    let mut b = delete_rkey_v2();
    b[4] = 13;
    assert_eq!(LlcMessage::parse(&b), Err(LlcError::Truncated));
    // Nine rkeys fit into 44 bytes.
    let mut b = delete_rkey_v2();
    b[4] = 9;
    let Ok(LlcMessage::DeleteRkey(p)) = LlcMessage::parse(&b[..44]) else {
        panic!("nine rkeys do not parse");
    };
    assert_eq!(p.rkeys.len(), 9);
    assert_eq!(p.rkeys.get(8), Some(0x108));
}

#[test]
fn test_link_matches_upstream() {
    let m = TestLink {
        version: LlcVersion::V1,
        resp: false,
        user_data: *b"0123456789abcdef",
    };
    check_vector(LlcMessage::TestLink(m), &test_link_v1());
    let r = TestLink {
        version: LlcVersion::V2,
        resp: true,
        user_data: [0xee; 16],
    };
    check_vector(LlcMessage::TestLink(r), &test_link_v2_resp());
}

#[test]
fn type_bytes_are_upstreams() {
    let mut known = 0;
    for b in 0..=255u8 {
        if let Some((k, v)) = LlcKind::from_type_byte(b) {
            known += 1;
            assert_eq!(k.type_byte(v), Some(b));
        }
    }
    // The 15 types upstream registers receive handlers for.
    assert_eq!(known, 15);
    for b in [0x01, 0x02, 0x03, 0x04, 0x06, 0x07, 0x08, 0x09] {
        assert_eq!(
            LlcKind::from_type_byte(b).map(|x| x.1),
            Some(LlcVersion::V1)
        );
    }
    for b in [0x21, 0x22, 0x24, 0x25, 0x26, 0x27, 0x29] {
        assert_eq!(
            LlcKind::from_type_byte(b).map(|x| x.1),
            Some(LlcVersion::V2)
        );
    }
    for k in ALL_KINDS {
        assert_eq!(
            k.type_byte(LlcVersion::V1).is_some(),
            k != LlcKind::ReqAddLink
        );
    }
}

#[test]
fn headers_are_checked_like_upstream() {
    let b = test_link_v1();
    for t in [0x00, 0x05, 0x0a, 0x10, 0x23, 0x28, 0x31, 0x87, 0xfe, 0xff] {
        let mut m = b;
        m[0] = t;
        assert_eq!(LlcMessage::parse(&m), Err(LlcError::UnknownType(t)));
    }
    assert_eq!(LlcMessage::parse(&[]), Err(LlcError::Truncated));
    assert_eq!(LlcMessage::parse(&[0x42]), Err(LlcError::UnknownType(0x42)));
    let mut m = b;
    m[1] = 45;
    assert_eq!(LlcMessage::parse(&m), Err(LlcError::BadLength));
    m[1] = 0;
    assert_eq!(LlcMessage::parse(&m), Err(LlcError::BadLength));
    // v2: at least 44, in little-endian.
    let mut m = test_link_v2_resp();
    m[1..3].copy_from_slice(&43u16.to_le_bytes());
    assert_eq!(LlcMessage::parse(&m), Err(LlcError::BadLength));
    // A big-endian 44 from an s390 host reads as 11264: accepted, as by
    // upstream on x86.
    m[1..3].copy_from_slice(&44u16.to_be_bytes());
    let h = LlcHeader::parse(&m).unwrap();
    assert_eq!(
        (h.length, h.version, h.kind),
        (0x2c00, LlcVersion::V2, LlcKind::TestLink)
    );
    assert!(h.is_response());
    assert!(LlcMessage::parse(&m).is_ok());
    // A v1 message: the reserved nibble of byte 2 is ignored.
    let mut m = delete_link_v1_all();
    m[2] = 0xff;
    assert_eq!(
        LlcMessage::parse(&m),
        LlcMessage::parse(&delete_link_v1_all())
    );
}

#[test]
fn versions_without_the_message_are_refused() {
    let mut keys = [0u8; 16];
    let m = AddLink {
        version: LlcVersion::V1,
        resp: false,
        reject: false,
        reject_reason: 0,
        sender_mac: MAC,
        sender_gid: GID,
        sender_qpn: 1,
        link_num: 1,
        qp_mtu: 3,
        initial_psn: 1,
        ext: Some(AddLinkV2Ext {
            direct: false,
            client_target_gid: GID,
            rkeys: EntryList::build(&[RT0], &mut keys).unwrap(),
        }),
    };
    assert_eq!(m.encode(&mut [0u8; 128]), Err(LlcError::BadVersion));
    // A v2 add link count above 255 is hostile.
    let mut b = [0u8; 72 + 16 * 256];
    b[..104].copy_from_slice(&add_link_v2());
    let len = b.len() as u16;
    b[1..3].copy_from_slice(&len.to_le_bytes());
    b[70..72].copy_from_slice(&256u16.to_le_bytes());
    assert_eq!(LlcMessage::parse(&b), Err(LlcError::BadCount));
    b[70..72].copy_from_slice(&255u16.to_le_bytes());
    assert!(LlcMessage::parse(&b).is_ok());
}

#[test]
fn entry_lists() {
    assert_eq!(
        EntryList::<u32>::from_wire(&[1, 2, 3]),
        Err(LlcError::BadCount)
    );
    let l = EntryList::<u32>::from_wire(&[0, 0, 0, 1, 0, 0, 0, 2]).unwrap();
    assert_eq!(
        (l.len(), l.get(0), l.get(1), l.get(usize::MAX)),
        (2, Some(1), Some(2), None)
    );
    assert!(EntryList::<u32>::empty().is_empty());
    let mut small = [0u8; 7];
    assert_eq!(
        EntryList::build(&[1u32, 2], &mut small),
        Err(LlcError::BufferTooSmall)
    );
}

/// The message accessors agree with the header.
#[test]
fn accessors_agree_with_header() {
    for (b, n) in all() {
        let m = LlcMessage::parse(&b[..n]).unwrap();
        let h = LlcHeader::parse(&b[..n]).unwrap();
        assert_eq!(
            (m.kind(), m.version(), m.is_response()),
            (h.kind, h.version, h.is_response())
        );
    }
}

/// Every prefix shorter than a vector fails to parse, but the 44 bytes
/// of a v2 ADD_LINK, which are an ADD_LINK without extension.
#[test]
fn every_truncation_is_an_error() {
    for (b, n) in all() {
        for k in 0..n {
            let r = LlcMessage::parse(&b[..k]);
            if k == LLC_LEN && b[0] == 0x22 {
                let Ok(LlcMessage::AddLink(a)) = r else {
                    panic!("44 bytes of add link v2: {r:?}");
                };
                assert!(a.ext.is_none());
            } else {
                assert!(r.is_err(), "prefix of {k} of {n} bytes parsed: {r:?}");
            }
        }
    }
}

/// What parses re-encodes to what parses the same, and the re-encoding
/// is stable.
fn round_trip(b: &[u8]) {
    let Ok(m) = LlcMessage::parse(b) else {
        return;
    };
    let mut out = [0u8; 8192];
    let n = m.encode(&mut out).unwrap();
    assert_eq!(n, m.encoded_len());
    assert!(n >= LLC_LEN && n <= b.len().max(LLC_LEN));
    let again = LlcMessage::parse(&out[..n]).unwrap();
    assert_eq!(again, m);
    let mut out2 = [0u8; 8192];
    assert_eq!(again.encode(&mut out2), Ok(n));
    assert_eq!(out[..n], out2[..n]);
    // The type byte and the response flag are kept.
    assert_eq!(out[0], b[0]);
    assert_eq!(out[3] & FLAG_RESP, b[3] & FLAG_RESP);
}

/// Every single-byte change of every vector, and random buffers: parsing
/// returns, never panics, and what parses round-trips.
#[test]
fn mutations_never_panic() {
    for (b, n) in all() {
        for i in 0..n {
            for v in [0u8, 1, 2, 3, 8, 9, 0x0f, 0x20, 0x2c, 0x7f, 0x80, 0xfe, 0xff] {
                let mut m = b;
                m[i] = v;
                round_trip(&m[..n]);
            }
        }
    }
    let mut x: u64 = 0x9e37_79b9_7f4a_7c15;
    let mut buf = [0u8; 1100];
    for _ in 0..100_000 {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        let len = if x & 0x100 == 0 {
            44
        } else {
            (x % 1100) as usize
        };
        for (i, v) in buf[..len].iter_mut().enumerate() {
            *v = (x >> (i % 8 * 8)) as u8 ^ i as u8;
        }
        // Often a valid type and length, to reach the bodies.
        if x & 1 == 0 && len >= 4 {
            let types = [
                1u8, 2, 3, 4, 6, 7, 8, 9, 0x21, 0x22, 0x24, 0x25, 0x26, 0x27, 0x29,
            ];
            buf[0] = types[(x >> 32) as usize % types.len()];
            if buf[0] < 0x20 {
                buf[1] = 44;
            } else {
                buf[1..3].copy_from_slice(&(len as u16).to_le_bytes());
            }
            // Small counts, so that lists fit.
            if x & 2 == 0 {
                buf[4] %= 16;
                buf[24] %= 8;
                if len > 72 {
                    buf[70..72].copy_from_slice(&(((len - 72) / 16) as u16).to_le_bytes());
                }
            }
        }
        round_trip(&buf[..len]);
    }
}
