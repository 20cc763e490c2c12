// SPDX-License-Identifier: GPL-2.0

//! The checks of the messages exchanged over the RoCE links, LLC and CDC,
//! and of the cursor arithmetic their receive path relies on.

use smc_wire::cdc::{CdcError, CdcMsg, ConnStateFlags, ProducerFlags, CDC_LEN, CDC_MIN_LEN};
use smc_wire::codec::Reader;
use smc_wire::cursor::{peer_consumer_advance, peer_producer_advance, Cursor, CursorError};
use smc_wire::llc::{
    AddLink, AddLinkCont, AddLinkRkey, AddLinkV2Ext, ConfirmLink, ConfirmRkey, ConfirmRkeyCont,
    DeleteLink, DeleteRkey, EntryList, LinkRkey, LlcError, LlcHeader, LlcKind, LlcMessage,
    LlcVersion, OneLink, OneLinkAction, ReqAddLink, Role, TestLink, DEL_RKEY_MAX, FLAG_RESP,
    LLC_LEN, LLC_V2_MAX_LEN,
};

/// The flow rules hold for every role and state (see
/// `check_route_invariants`).
fn check_routes(kind: LlcKind, resp: bool) {
    smc_wire::llc::check_route_invariants(kind, resp);
}

/// `LlcMessage::parse` and `encode`: a parsed message re-encodes to one
/// that parses the same, keeps its type and response flag, is never
/// longer than what was received, and the encoding is stable; errors are
/// the header's; a message made up from the input round-trips.
pub fn check_llc_any(data: &[u8]) {
    let parsed = LlcMessage::parse(data);
    let header = LlcHeader::parse(data);
    match parsed {
        Ok(m) => {
            let h = header.expect("a message has a header");
            assert!(data.len() >= LLC_LEN);
            assert_eq!((m.kind(), m.version()), (h.kind, h.version));
            assert_eq!(m.is_response(), h.flags & FLAG_RESP != 0);
            let mut out = [0xa5u8; LLC_V2_MAX_LEN];
            let n = m.encode(&mut out).expect("a parsed message encodes");
            assert_eq!(n, m.encoded_len());
            assert!(n >= LLC_LEN && n <= data.len().max(LLC_LEN));
            let again = LlcMessage::parse(&out[..n]).expect("an encoded message parses");
            assert_eq!(again, m);
            let mut out2 = [0u8; LLC_V2_MAX_LEN];
            assert_eq!(again.encode(&mut out2), Ok(n));
            assert_eq!(out[..n], out2[..n]);
            assert_eq!(out[0], data[0]);
            assert_eq!(out[3] & FLAG_RESP, data[3] & FLAG_RESP);
            match m.version() {
                LlcVersion::V1 => assert_eq!(usize::from(out[1]), LLC_LEN),
                LlcVersion::V2 => {
                    assert_eq!(usize::from(u16::from_le_bytes([out[1], out[2]])), n)
                }
            }
            assert_eq!(m.encode(&mut out[..n - 1]), Err(LlcError::BufferTooSmall));
            check_routes(m.kind(), m.is_response());
        }
        Err(e) => {
            match data.first() {
                None => assert_eq!(e, LlcError::Truncated),
                Some(&t) if LlcKind::from_type_byte(t).is_none() => {
                    assert_eq!(e, LlcError::UnknownType(t))
                }
                Some(_) => {}
            }
            if let Err(he) = header {
                assert_eq!(e, he);
            }
        }
    }
    llc_from_fields(data);
    check_one_link(data);
}

/// `OneLink::decide`: in every role, version and phase it decides exactly
/// on what parses, and every answer is one 44-byte message.
fn check_one_link(data: &[u8]) {
    let parses = LlcMessage::parse(data).is_ok();
    for role in [Role::Client, Role::Server] {
        for version in [LlcVersion::V1, LlcVersion::V2] {
            for confirming in [false, true] {
                let link = OneLink {
                    role,
                    version,
                    link_num: data.get(4).copied().unwrap_or(1) ^ (confirming as u8),
                    confirming,
                };
                let Ok(action) = link.decide(data) else {
                    assert!(!parses);
                    continue;
                };
                assert!(parses);
                let answer = match action {
                    OneLinkAction::Answer(m) => Some(m),
                    OneLinkAction::Refuse(_, m) | OneLinkAction::EndLink(m) => m,
                    OneLinkAction::Nothing | OneLinkAction::ToConfirmation => None,
                };
                if let Some(m) = answer {
                    let mut out = [0u8; LLC_LEN];
                    assert_eq!(m.encode(&mut out), Ok(LLC_LEN), "{m:?}");
                }
            }
        }
    }
}

/// A `[u8; N]` from the reader, or zeros.
fn arr<const N: usize>(r: &mut Reader<'_>) -> [u8; N] {
    r.array().unwrap_or([0; N])
}

/// An ADD_LINK rkey from the reader, or zeros.
fn add_link_rkey(r: &mut Reader<'_>) -> AddLinkRkey {
    AddLinkRkey {
        rmb_key: r.be32().unwrap_or(0),
        rmb_key_new: r.be32().unwrap_or(0),
        rmb_vaddr_new: r.be64().unwrap_or(0),
    }
}

/// A link's rkey from the reader, or zeros.
fn link_rkey(r: &mut Reader<'_>) -> LinkRkey {
    LinkRkey {
        link_id: r.u8().unwrap_or(0),
        rkey: r.be32().unwrap_or(0),
        vaddr: r.be64().unwrap_or(0),
    }
}

/// The list entries in what is left of the reader: at most `max` entries
/// of `len` bytes.
fn rest<'a>(r: &mut Reader<'a>, len: usize, max: usize) -> &'a [u8] {
    let n = (r.remaining() / len).min(max);
    r.bytes(n * len).unwrap_or(&[])
}

/// A message of the kind and version the first byte picks, with fields
/// from the rest of the input (within their widths), encodes into what
/// parses back to it.
fn llc_from_fields(data: &[u8]) {
    let mut r = Reader::new(data);
    let Ok(sel) = r.u8() else {
        return;
    };
    let kind = smc_wire::llc::ALL_KINDS[usize::from(sel & 0xf) % 9];
    let flags = r.u8().unwrap_or(0);
    let want_v2 = sel & 0x10 != 0;
    let version = if kind.type_byte(LlcVersion::V2).is_some()
        && (want_v2 || kind.type_byte(LlcVersion::V1).is_none())
    {
        LlcVersion::V2
    } else {
        LlcVersion::V1
    };
    let v2 = version == LlcVersion::V2;
    let (resp, f1, f2, f3) = (
        flags & 1 != 0,
        flags & 2 != 0,
        flags & 4 != 0,
        flags & 8 != 0,
    );
    let m = match kind {
        LlcKind::ConfirmLink => LlcMessage::ConfirmLink(ConfirmLink {
            version,
            resp,
            no_rmbe_eyec: f1,
            sender_mac: arr(&mut r),
            sender_gid: arr(&mut r),
            sender_qpn: r.be32().unwrap_or(0) & 0xff_ffff,
            link_num: r.u8().unwrap_or(0),
            link_uid: arr(&mut r),
            max_links: r.u8().unwrap_or(0),
            max_conns: r.u8().unwrap_or(0),
        }),
        LlcKind::AddLink => {
            let reason = r.u8().unwrap_or(0);
            let fixed = AddLink {
                version,
                resp,
                reject: f1,
                reject_reason: if v2 { 0 } else { reason & 0xf },
                sender_mac: arr(&mut r),
                sender_gid: arr(&mut r),
                sender_qpn: r.be32().unwrap_or(0) & 0xff_ffff,
                link_num: r.u8().unwrap_or(0),
                qp_mtu: r.u8().unwrap_or(0) & 0xf,
                initial_psn: r.be32().unwrap_or(0) & 0xff_ffff,
                ext: None,
            };
            let ext = (v2 && f2).then(|| AddLinkV2Ext {
                direct: f3,
                client_target_gid: arr(&mut r),
                rkeys: EntryList::from_wire(rest(&mut r, 16, 255)).expect("whole entries"),
            });
            LlcMessage::AddLink(AddLink { ext, ..fixed })
        }
        LlcKind::AddLinkCont => LlcMessage::AddLinkCont(AddLinkCont {
            resp,
            link_num: r.u8().unwrap_or(0),
            num_rkeys: r.u8().unwrap_or(0),
            rkeys: [add_link_rkey(&mut r), add_link_rkey(&mut r)],
        }),
        LlcKind::DeleteLink => LlcMessage::DeleteLink(DeleteLink {
            version,
            resp,
            all: f1,
            orderly: f2,
            link_num: r.u8().unwrap_or(0),
            reason: r.be32().unwrap_or(0),
        }),
        LlcKind::ReqAddLink => LlcMessage::ReqAddLink(ReqAddLink {
            resp,
            gids: EntryList::from_wire(rest(&mut r, 16, 255)).expect("whole entries"),
        }),
        LlcKind::ConfirmRkey => LlcMessage::ConfirmRkey(ConfirmRkey {
            version,
            resp,
            negative: f1,
            retry: f2,
            num_rkeys: r.u8().unwrap_or(0),
            rkey: r.be32().unwrap_or(0),
            vaddr: r.be64().unwrap_or(0),
            others: [link_rkey(&mut r), link_rkey(&mut r)],
        }),
        LlcKind::ConfirmRkeyCont => LlcMessage::ConfirmRkeyCont(ConfirmRkeyCont {
            resp,
            negative: f1,
            num_rkeys: r.u8().unwrap_or(0),
            rkeys: [link_rkey(&mut r), link_rkey(&mut r), link_rkey(&mut r)],
        }),
        LlcKind::DeleteRkey => {
            let err_mask = r.u8().unwrap_or(0);
            let announced = r.u8().unwrap_or(0);
            let (num_rkeys, rkeys) = match (v2, resp) {
                (false, _) => {
                    let n = usize::from(announced).min(DEL_RKEY_MAX);
                    let keys = rest(&mut r, 4, n);
                    // Fewer keys than announced: announce what is there.
                    if keys.len() / 4 < n {
                        ((keys.len() / 4) as u8, keys)
                    } else {
                        (announced, keys)
                    }
                }
                (true, false) => {
                    let keys = rest(&mut r, 4, usize::from(announced));
                    ((keys.len() / 4) as u8, keys)
                }
                (true, true) => (announced, &[][..]),
            };
            LlcMessage::DeleteRkey(DeleteRkey {
                version,
                resp,
                negative: f1,
                retry: f2,
                num_rkeys,
                err_mask,
                rkeys: EntryList::from_wire(rkeys).expect("whole entries"),
            })
        }
        LlcKind::TestLink => LlcMessage::TestLink(TestLink {
            version,
            resp,
            user_data: arr(&mut r),
        }),
    };
    let mut out = [0u8; LLC_V2_MAX_LEN];
    let n = m.encode(&mut out).expect("a made-up message encodes");
    assert_eq!(n, m.encoded_len());
    assert_eq!(LlcMessage::parse(&out[..n]), Ok(m));
}

/// `CdcMsg::parse` and `encode`: what parses has type 0xFE and length 44,
/// re-encodes with every field where it was (reserved bytes and bits
/// zero) and parses back the same; a message made up from the input
/// round-trips.
pub fn check_cdc(data: &[u8]) {
    match CdcMsg::parse(data) {
        Ok(c) => {
            assert!(data.len() >= CDC_MIN_LEN);
            assert_eq!((data[0], usize::from(data[1])), (0xfe, CDC_LEN));
            let mut out = [0xa5u8; 64];
            assert_eq!(c.encode(&mut out), Ok(CDC_LEN));
            assert_eq!(CdcMsg::parse(&out[..CDC_LEN]), Ok(c));
            assert_eq!(CdcMsg::parse(&data[..CDC_MIN_LEN]), Ok(c));
            assert_eq!(out[..8], data[..8]);
            assert_eq!(out[8..10], [0, 0]);
            assert_eq!(out[10..16], data[10..16]);
            assert_eq!(out[16..18], [0, 0]);
            assert_eq!(out[18..24], data[18..24]);
            assert_eq!(out[24], data[24] & 0xf8);
            assert_eq!(out[25], data[25] & 0xe0);
            assert!(out[26..CDC_LEN].iter().all(|b| *b == 0));
            assert_eq!(out[CDC_LEN], 0xa5);
        }
        Err(e) => match e {
            CdcError::Truncated => assert!(data.len() < CDC_MIN_LEN),
            CdcError::BadType => assert_ne!(data[0], 0xfe),
            CdcError::BadLength => assert_ne!(usize::from(data[1]), CDC_LEN),
            CdcError::BufferTooSmall => panic!("parse said BufferTooSmall"),
        },
    }
    let mut r = Reader::new(data);
    let (Ok(seqno), Ok(token), Ok(pw), Ok(pc), Ok(cw), Ok(cc), Ok(pf), Ok(sf)) = (
        r.be16(),
        r.be32(),
        r.be16(),
        r.be32(),
        r.be16(),
        r.be32(),
        r.u8(),
        r.u8(),
    ) else {
        return;
    };
    let c = CdcMsg {
        seqno,
        token,
        prod: Cursor::new(pw, pc),
        cons: Cursor::new(cw, cc),
        prod_flags: ProducerFlags::from_byte(pf),
        conn_state_flags: ConnStateFlags::from_byte(sf),
    };
    let mut out = [0u8; CDC_LEN];
    assert_eq!(c.encode(&mut out), Ok(CDC_LEN));
    assert_eq!(CdcMsg::parse(&out), Ok(c));
    assert_eq!(
        c.encode(&mut out[..CDC_LEN - 1]),
        Err(CdcError::BufferTooSmall)
    );
}

/// The length of a cursor input: size, step, mode, three cursors.
pub const CURSOR_INPUT_LEN: usize = 4 + 4 + 1 + 3 * 6;

/// The cursor arithmetic and the checks of peer cursors on arbitrary
/// sizes and cursors (input: size, step, mode, then `prev`, `new` and
/// `anchor`, each wrap and count; missing bytes are zero). Mode bit 0
/// puts the counts into the ring, bit 1 makes `new` lie `step` bytes
/// after `prev`.
///
/// Asserted: `add` succeeds exactly for a cursor in the ring and a step
/// of at most a ring, and `diff` gives the step back; `comp` is
/// antisymmetric; `diff_large` is capped; an accepted advance leads from
/// `prev` to `new`, keeps the ring within its size, and every advance the
/// invariants allow is accepted.
pub fn check_cursor(data: &[u8]) {
    let mut input = [0u8; CURSOR_INPUT_LEN];
    let n = data.len().min(CURSOR_INPUT_LEN);
    input[..n].copy_from_slice(&data[..n]);
    let mut r = Reader::new(&input);
    let size = r.be32().unwrap();
    let step = r.be32().unwrap();
    let mode = r.u8().unwrap();
    let mut cursor = || Cursor::new(r.be16().unwrap(), r.be32().unwrap());
    let (mut prev, mut new, mut anchor) = (cursor(), cursor(), cursor());
    if mode & 1 != 0 && size > 0 {
        for c in [&mut prev, &mut new, &mut anchor] {
            c.count %= size;
        }
    }
    if mode & 2 != 0 && size > 0 {
        if let Ok(c) = prev.add(step % (size.saturating_add(1)).max(1), size) {
            new = c;
        }
    }

    // add / diff
    let added = prev.add(step, size);
    let valid = |c: Cursor| size > 0 && c.count < size;
    assert_eq!(added.is_ok(), valid(prev) && step <= size, "{added:?}");
    if let Ok(c) = added {
        assert!(valid(c));
        let model =
            (u128::from(prev.wrap) * u128::from(size) + u128::from(prev.count) + u128::from(step))
                % (u128::from(size) << 16);
        assert_eq!(
            u128::from(c.wrap) * u128::from(size) + u128::from(c.count),
            model
        );
        if size <= i32::MAX as u32 {
            assert_eq!(Cursor::diff(prev, c, size), step);
            assert_eq!(Cursor::diff_large(prev, c, size), step);
        }
        assert_eq!(peer_producer_advance(prev, c, prev, size), Ok(step));
        assert_eq!(peer_consumer_advance(prev, c, c, size), Ok(step));
    }
    if size == 0 {
        assert_eq!(prev.check(size), Err(CursorError::BadSize));
    }

    // comp, diff, diff_large never panic and stay in range.
    assert!(Cursor::diff(prev, new, size) <= i32::MAX as u32);
    let (ab, ba) = (Cursor::comp(prev, new, size), Cursor::comp(new, prev, size));
    assert_eq!(ab, 0i32.saturating_sub(ba));
    let dl = Cursor::diff_large(prev, new, size);
    if prev.wrap != new.wrap {
        assert!(dl <= size);
    } else {
        assert!(dl <= i32::MAX as u32);
    }

    check_advance(prev, new, anchor, size, false);
    check_advance(prev, new, anchor, size, true);
}

/// One of the peer cursor checks: sound (what it accepts is an advance
/// within the limit) and complete (every such advance is accepted).
fn check_advance(prev: Cursor, new: Cursor, anchor: Cursor, size: u32, consumer: bool) {
    let check = |p, n, a| {
        if consumer {
            peer_consumer_advance(p, n, a, size)
        } else {
            peer_producer_advance(p, n, a, size)
        }
    };
    let res = check(prev, new, anchor);
    if size == 0 {
        assert_eq!(res, Err(CursorError::BadSize));
        return;
    }
    // Our own cursors: consistent exactly when a null advance is accepted.
    let own_ok = check(prev, prev, anchor).is_ok();
    // How far ahead `anchor` (consumer) or `prev` (producer) is.
    let own = if consumer {
        check(prev, anchor, anchor)
    } else {
        check(anchor, prev, anchor)
    };
    assert_eq!(own_ok, own.is_ok());
    if !own_ok {
        assert_eq!(res, Err(CursorError::Inconsistent));
        return;
    }
    let own = own.unwrap();
    let limit = if consumer { own } else { size - own };
    if new.count >= size {
        assert_eq!(res, Err(CursorError::OutOfRing));
        return;
    }
    match res {
        Ok(adv) => {
            assert!(adv <= limit);
            assert_eq!(prev.add(adv, size), Ok(new));
            // The state after it is consistent.
            if consumer {
                assert_eq!(check(new, anchor, anchor), Ok(own - adv));
            } else {
                assert_eq!(check(anchor, new, anchor), Ok(own + adv));
            }
        }
        Err(e) => {
            assert!(
                matches!(e, CursorError::Behind | CursorError::Overrun),
                "{e:?}"
            );
            // Completeness: no step of at most `limit` leads to `new`.
            if size <= i32::MAX as u32 {
                let k = Cursor::diff(prev, new, size);
                if prev.add(k, size) == Ok(new) {
                    assert!(k > limit, "{prev:?} + {k} = {new:?} refused: {e:?}");
                    assert_eq!(e, CursorError::Overrun);
                }
            }
        }
    }
}
