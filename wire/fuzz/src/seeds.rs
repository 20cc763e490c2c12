// SPDX-License-Identifier: GPL-2.0

//! Seed inputs: valid messages of every kind the parsers accept, built
//! with the encoders where they can express the message and byte by byte
//! (upstream's layouts) where they cannot. `examples/seeds.rs` writes them
//! into the corpora.

use super::rdma::CURSOR_INPUT_LEN;
use super::*;
use smc_wire::cdc::{CdcMsg, ConnStateFlags, ProducerFlags, CDC_LEN, CDC_MIN_LEN};
use smc_wire::cursor::Cursor;
use smc_wire::llc::{
    AddLink, AddLinkCont, AddLinkRkey, AddLinkV2Ext, ConfirmLink, ConfirmRkey, ConfirmRkeyCont,
    DeleteLink, DeleteRkey, EntryList, LinkRkey, LlcMessage, LlcVersion, ReqAddLink, TestLink,
    DEL_NOLNK, DEL_PROG_INIT_TERM, LLC_V2_MAX_LEN, REJ_RSN_NO_ALT_PATH,
};

/// Named seed messages.
pub type Seeds = Vec<(&'static str, Vec<u8>)>;

fn encoded(f: impl FnOnce(&mut [u8]) -> Result<usize, ClcError>) -> Vec<u8> {
    let mut buf = [0u8; MAX_MESSAGE_LEN];
    let n = f(&mut buf).expect("seed encodes");
    buf[..n].to_vec()
}

fn set_length(m: &mut [u8]) {
    let len = u16::try_from(m.len()).expect("seed fits");
    m[5..7].copy_from_slice(&len.to_be_bytes());
}

const UEID: [u8; EID_LEN] = *b"SMC-RS-TESTBED                  ";
const GID: [u8; 16] = [
    0xfe, 0x80, 0, 0, 0, 0, 0, 0, 0x50, 0x54, 0, 0xff, 0xfe, 0x5c, 0, 1,
];
const LOCAL: LocalInfo = LocalInfo {
    peer_id: [1, 2, 3, 4, 5, 6, 7, 8],
    gid: GID,
    mac: [0x52, 0x54, 0, 0x5c, 0, 1],
};

/// Declines: v1, v2, v2 with a sync error and additional codes.
pub fn declines() -> Seeds {
    let v1 = Decline::new(SMC_V1, LOCAL.peer_id, DeclineReason::NoSmcDevice);
    let v2 = Decline::new(SMC_V2, LOCAL.peer_id, DeclineReason::NoUeid);
    let mut sync = Decline::new(SMC_V2, [0; 8], DeclineReason::SyncError);
    sync.diagnosis_v2 = [1, 2, 0x0303_0000, u32::MAX];
    vec![
        ("decline-v1", encoded(|b| v1.encode(b))),
        ("decline-v2", encoded(|b| v2.encode(b))),
        ("decline-v2-sync", encoded(|b| sync.encode(b))),
    ]
}

/// Proposals: what smc_rs and upstream send, and the layouts with
/// IPv6 prefixes and SMC-D that the encoder does not produce.
pub fn proposals() -> Seeds {
    let ueids = [UEID, [b'X'; EID_LEN]];
    let v2 = ProposalParams {
        v2: true,
        roce_gid: GID,
        ueids: &ueids[..1],
        release: 1,
        max_conns: 255,
        max_links: 2,
        feature_mask: 1,
        ..ProposalParams::default()
    };
    let v1 = ProposalParams {
        v1: true,
        local: LOCAL,
        ipv4_prefix: Ipv4Prefix {
            subnet: 0x0a0a_0000,
            len: 24,
        },
        ..ProposalParams::default()
    };
    let both = ProposalParams {
        v2: true,
        ueids: &ueids,
        ..v1
    };
    vec![
        (
            "proposal-empty",
            encoded(|b| encode_proposal(&ProposalParams::default(), b)),
        ),
        ("proposal-v2-rxe", encoded(|b| encode_proposal(&v2, b))),
        ("proposal-v1", encoded(|b| encode_proposal(&v1, b))),
        ("proposal-v1-v2", encoded(|b| encode_proposal(&both, b))),
        ("proposal-v1-ipv6", proposal_v1_ipv6()),
        ("proposal-smcd-v2", proposal_smcd_v2()),
        ("proposal-both-both", proposal_both_both()),
    ]
}

/// A version 1 SMC-R proposal with an IPv4 and one IPv6 prefix.
fn proposal_v1_ipv6() -> Vec<u8> {
    let mut m = vec![0u8; 40];
    m[..4].copy_from_slice(&EYECATCHER_SMCR);
    m[4] = MsgType::Proposal as u8;
    m[7] = 0x10; // version 1, typev1 R
    m[8..16].copy_from_slice(&LOCAL.peer_id);
    m[16..32].copy_from_slice(&GID);
    m[38..40].copy_from_slice(&40u16.to_be_bytes());
    m.extend_from_slice(&[0; 40]); // SMC-D area
    m.extend_from_slice(&[10, 10, 0, 0, 24, 0, 0, 1]);
    let mut v6 = [0u8; 17];
    v6[0] = 0xfd;
    v6[16] = 64;
    m.extend_from_slice(&v6);
    m.extend_from_slice(&EYECATCHER_SMCR);
    set_length(&mut m);
    m
}

/// The v2 extension: UEID count, GID count, release 1, RoCE GID.
fn v2_ext(ueids: u8, gids: u8) -> Vec<u8> {
    let mut e = vec![ueids, gids, 0, 0x10, 0, 0, 0, 0];
    e.extend_from_slice(&GID);
    e.extend_from_slice(&[16, 1, 0, 0]);
    e.extend_from_slice(&[0; 12]);
    for _ in 0..ueids {
        e.extend_from_slice(&UEID);
    }
    e
}

/// The SMC-Dv2 extension: SEID, reserved, and `gids` GID/CHID entries.
fn smcd_v2_ext(gids: u8) -> Vec<u8> {
    let mut e = vec![b'S'; 32];
    e.extend_from_slice(&[0; 16]);
    for i in 0..gids {
        e.extend_from_slice(&[i, 0, 0, 0, 0, 0, 0, 1, 0, 7]);
    }
    e
}

/// An SMC-Dv2-only proposal with one ISM GID, as upstream lays it out.
fn proposal_smcd_v2() -> Vec<u8> {
    let mut m = vec![0u8; 80];
    m[..4].copy_from_slice(&EYECATCHER_SMCD);
    m[4] = MsgType::Proposal as u8;
    m[7] = 0x20 | (1 << 2) | 2; // version 2, typev2 D, typev1 N
    m[50..52].copy_from_slice(&28u16.to_be_bytes()); // extension at 80
    m.extend(v2_ext(0, 1));
    m[80 + 3] |= 1; // SEID present
    m.extend(smcd_v2_ext(1));
    m.extend_from_slice(&EYECATCHER_SMCD);
    set_length(&mut m);
    m
}

/// Both variants in v1 and in v2: SMC-D area, prefix area with an
/// IPv6 prefix, v2 extension with a UEID and an ISM GID.
fn proposal_both_both() -> Vec<u8> {
    let mut m = vec![0u8; 80];
    m[..4].copy_from_slice(&EYECATCHER_SMCR);
    m[4] = MsgType::Proposal as u8;
    m[7] = 0x20 | (3 << 2) | 3; // version 2, typev2 B, typev1 B
    m[8..38].copy_from_slice(&[7; 30]);
    m[38..40].copy_from_slice(&40u16.to_be_bytes());
    m[40..48].copy_from_slice(&[0, 0, 0, 0, 0, 0, 0x12, 0x34]); // ISM GID
    m.extend_from_slice(&[192, 168, 1, 0, 24, 0, 0, 1]);
    m.extend_from_slice(&[0xfd; 16]);
    m.push(48);
    let off = u16::try_from(m.len() - 52).expect("small");
    m[50..52].copy_from_slice(&off.to_be_bytes());
    m.extend(v2_ext(1, 1));
    m.extend(smcd_v2_ext(1));
    m.extend_from_slice(&EYECATCHER_SMCR);
    set_length(&mut m);
    m
}

/// SMC-R accepts and confirms: v1, v2, v2 first contact accept and
/// confirm (with the GID list) as Linux 6.12 sends them, and a release 0
/// confirm with the short extension of Linux before 6.5.
pub fn accepts() -> Seeds {
    let v1 = SmcrAcceptConfirm {
        kind: MsgType::Accept,
        version: SMC_V1,
        first_contact: true,
        local: LOCAL,
        qpn: 0x123,
        rmb_rkey: 0xdead_beef,
        rmbe_idx: 1,
        rmbe_alert_token: 0x42,
        rmbe_size: 3,
        qp_mtu: 3,
        rmb_dma_addr: 0x1122_3344_5566_7788,
        psn: 7,
        eid: [0; EID_LEN],
        fce: None,
        gid_list: None,
    };
    let v2 = SmcrAcceptConfirm {
        kind: MsgType::Confirm,
        version: SMC_V2,
        first_contact: false,
        eid: UEID,
        ..v1
    };
    let fce = FirstContactExt {
        v2_direct: true,
        os_type: OS_LINUX,
        release: SMC_RELEASE,
        hostname: *b"smc-rs-testbed                  ",
        max_conns: 255,
        max_links: 2,
        feature_mask: SMC_FEATURE_MASK,
    };
    let v2_fce = SmcrAcceptConfirm {
        kind: MsgType::Accept,
        first_contact: true,
        fce: Some(fce),
        ..v2
    };
    let mut gid2 = GID;
    gid2[15] = 2;
    let v2_fce_confirm = SmcrAcceptConfirm {
        kind: MsgType::Confirm,
        gid_list: Some(GidList::new(&[GID, gid2]).expect("two GIDs fit")),
        ..v2_fce
    };
    // Release 0 from Linux before 6.5: the 36-byte extension, then the
    // GID list with one GID.
    let mut short = encoded(|b| v2_fce.encode(b));
    short.truncate(SMCR_ACCEPT_CONFIRM_LEN_V2 - TRAILER_LEN);
    short[4] = MsgType::Confirm as u8;
    short.extend_from_slice(&[0, OS_LINUX << 4, 0, 0]);
    short.extend_from_slice(b"smc-rs-testbed                  ");
    short.extend_from_slice(&[1, 0, 0, 0]);
    short.extend_from_slice(&GID);
    short.extend_from_slice(&EYECATCHER_SMCR);
    set_length(&mut short);
    vec![
        ("accept-v1", encoded(|b| v1.encode(b))),
        ("confirm-v2", encoded(|b| v2.encode(b))),
        ("accept-v2-fce", encoded(|b| v2_fce.encode(b))),
        ("confirm-v2-fce-gids", encoded(|b| v2_fce_confirm.encode(b))),
        ("confirm-v20-fce-short", short),
    ]
}

fn llc_encoded(m: LlcMessage<'_>) -> Vec<u8> {
    let mut buf = [0u8; LLC_V2_MAX_LEN];
    let n = m.encode(&mut buf).expect("seed encodes");
    buf[..n].to_vec()
}

const LLC_GID2: [u8; 16] = [0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff, 192, 168, 122, 2];

/// LLC messages: every type in every version it exists in, requests and
/// responses, with and without the v2 lists.
pub fn llc() -> Seeds {
    use LlcVersion::{V1, V2};
    let confirm = ConfirmLink {
        version: V1,
        resp: false,
        no_rmbe_eyec: true,
        sender_mac: LOCAL.mac,
        sender_gid: GID,
        sender_qpn: 0x123,
        link_num: 1,
        link_uid: [0xde, 0xad, 0, 1],
        max_links: 2,
        max_conns: 0,
    };
    let add = AddLink {
        version: V1,
        resp: false,
        reject: false,
        reject_reason: 0,
        sender_mac: LOCAL.mac,
        sender_gid: GID,
        sender_qpn: 0x456,
        link_num: 2,
        qp_mtu: 3,
        initial_psn: 0x12_3456,
        ext: None,
    };
    let rt = [
        AddLinkRkey {
            rmb_key: 0x1111_1111,
            rmb_key_new: 0x2222_2222,
            rmb_vaddr_new: 0x7f00_0000_1000,
        },
        AddLinkRkey {
            rmb_key: 0x3333_3333,
            rmb_key_new: 0x4444_4444,
            rmb_vaddr_new: 0x7f00_0000_2000,
        },
    ];
    let mut rt_buf = [0u8; 32];
    let add_v2 = AddLink {
        version: V2,
        sender_gid: LLC_GID2,
        qp_mtu: 5,
        ext: Some(AddLinkV2Ext {
            direct: true,
            client_target_gid: GID,
            rkeys: EntryList::build(&rt, &mut rt_buf).expect("fits"),
        }),
        ..add
    };
    let cont = AddLinkCont {
        resp: true,
        link_num: 2,
        num_rkeys: 3,
        rkeys: rt,
    };
    let del = DeleteLink {
        version: V1,
        resp: false,
        all: true,
        orderly: true,
        link_num: 0,
        reason: DEL_PROG_INIT_TERM,
    };
    let mut gid_buf = [0u8; 32];
    let req = ReqAddLink {
        resp: false,
        gids: EntryList::build(&[GID, LLC_GID2], &mut gid_buf).expect("fits"),
    };
    let other = LinkRkey {
        link_id: 2,
        rkey: 0x1122_3344,
        vaddr: 0x7f12_3456_8000,
    };
    let crk = ConfirmRkey {
        version: V1,
        resp: false,
        negative: false,
        retry: false,
        num_rkeys: 1,
        rkey: 0xaabb_ccdd,
        vaddr: 0x7f12_3456_0000,
        others: [other, LinkRkey::default()],
    };
    let crk_cont = ConfirmRkeyCont {
        resp: false,
        negative: false,
        num_rkeys: 1,
        rkeys: [other; 3],
    };
    let mut k_buf = [0u8; 48];
    let keys: [u32; 12] = core::array::from_fn(|i| 0x100 + i as u32);
    let drk = DeleteRkey {
        version: V1,
        resp: false,
        negative: false,
        retry: false,
        num_rkeys: 2,
        err_mask: 0,
        rkeys: EntryList::build(&keys[..2], &mut k_buf).expect("fits"),
    };
    let mut k2_buf = [0u8; 48];
    let drk_v2 = DeleteRkey {
        version: V2,
        num_rkeys: 12,
        rkeys: EntryList::build(&keys, &mut k2_buf).expect("fits"),
        ..drk
    };
    let test = TestLink {
        version: V1,
        resp: false,
        user_data: [0; 16],
    };
    vec![
        (
            "llc-confirm-link-v1",
            llc_encoded(LlcMessage::ConfirmLink(confirm)),
        ),
        (
            "llc-confirm-link-v2-resp",
            llc_encoded(LlcMessage::ConfirmLink(ConfirmLink {
                version: V2,
                resp: true,
                max_conns: 255,
                ..confirm
            })),
        ),
        ("llc-add-link-v1", llc_encoded(LlcMessage::AddLink(add))),
        (
            "llc-add-link-v1-reject",
            llc_encoded(LlcMessage::AddLink(AddLink {
                resp: true,
                reject: true,
                reject_reason: REJ_RSN_NO_ALT_PATH,
                ..add
            })),
        ),
        ("llc-add-link-v2", llc_encoded(LlcMessage::AddLink(add_v2))),
        (
            "llc-add-link-v2-reject",
            llc_encoded(LlcMessage::AddLink(AddLink {
                resp: true,
                reject: true,
                ext: None,
                ..add_v2
            })),
        ),
        (
            "llc-add-link-cont",
            llc_encoded(LlcMessage::AddLinkCont(cont)),
        ),
        (
            "llc-delete-link-v1-all",
            llc_encoded(LlcMessage::DeleteLink(del)),
        ),
        (
            "llc-delete-link-v2-resp",
            llc_encoded(LlcMessage::DeleteLink(DeleteLink {
                version: V2,
                resp: true,
                all: false,
                orderly: false,
                link_num: 2,
                reason: DEL_NOLNK,
            })),
        ),
        ("llc-req-add-link", llc_encoded(LlcMessage::ReqAddLink(req))),
        (
            "llc-req-add-link-resp",
            llc_encoded(LlcMessage::ReqAddLink(ReqAddLink {
                resp: true,
                gids: EntryList::empty(),
            })),
        ),
        (
            "llc-confirm-rkey-v1",
            llc_encoded(LlcMessage::ConfirmRkey(crk)),
        ),
        (
            "llc-confirm-rkey-v2-neg",
            llc_encoded(LlcMessage::ConfirmRkey(ConfirmRkey {
                version: V2,
                resp: true,
                negative: true,
                retry: true,
                num_rkeys: 4,
                ..crk
            })),
        ),
        (
            "llc-confirm-rkey-cont",
            llc_encoded(LlcMessage::ConfirmRkeyCont(crk_cont)),
        ),
        (
            "llc-delete-rkey-v1",
            llc_encoded(LlcMessage::DeleteRkey(drk)),
        ),
        (
            "llc-delete-rkey-v1-resp",
            llc_encoded(LlcMessage::DeleteRkey(DeleteRkey {
                resp: true,
                negative: true,
                err_mask: 0x40,
                ..drk
            })),
        ),
        (
            "llc-delete-rkey-v2",
            llc_encoded(LlcMessage::DeleteRkey(drk_v2)),
        ),
        (
            "llc-delete-rkey-v2-resp",
            llc_encoded(LlcMessage::DeleteRkey(DeleteRkey {
                resp: true,
                negative: true,
                err_mask: 3,
                rkeys: EntryList::empty(),
                ..drk_v2
            })),
        ),
        ("llc-test-link-v1", llc_encoded(LlcMessage::TestLink(test))),
        (
            "llc-test-link-v2-resp",
            llc_encoded(LlcMessage::TestLink(TestLink {
                version: V2,
                resp: true,
                ..test
            })),
        ),
    ]
}

/// CDC messages: data, an urgent byte, a close, and cursors across wraps.
pub fn cdc() -> Seeds {
    let data = CdcMsg {
        seqno: 1,
        token: 0x102,
        prod: Cursor::new(0, 4096),
        cons: Cursor::new(0, 0),
        ..CdcMsg::default()
    };
    let urgent = CdcMsg {
        seqno: 0xffff,
        prod: Cursor::new(0xffff, 65535),
        cons: Cursor::new(0xfffe, 17),
        prod_flags: ProducerFlags {
            urg_data_present: true,
            urg_data_pending: true,
            cons_curs_upd_req: true,
            ..ProducerFlags::default()
        },
        ..data
    };
    let close = CdcMsg {
        seqno: 7,
        conn_state_flags: ConnStateFlags {
            peer_done_writing: true,
            peer_conn_closed: true,
            ..ConnStateFlags::default()
        },
        prod_flags: ProducerFlags {
            write_blocked: true,
            failover_validation: true,
            ..ProducerFlags::default()
        },
        ..data
    };
    let enc = |c: CdcMsg| {
        let mut b = [0u8; CDC_LEN];
        c.encode(&mut b).expect("seed encodes");
        b.to_vec()
    };
    let short = enc(data)[..CDC_MIN_LEN].to_vec();
    vec![
        ("cdc-data", enc(data)),
        ("cdc-urgent", enc(urgent)),
        ("cdc-close", enc(close)),
        ("cdc-short", short),
    ]
}

/// A cursor check input: size, step, mode, prev, new, anchor.
fn cursor_input(size: u32, step: u32, mode: u8, cursors: [Cursor; 3]) -> Vec<u8> {
    let mut v = Vec::with_capacity(CURSOR_INPUT_LEN);
    v.extend_from_slice(&size.to_be_bytes());
    v.extend_from_slice(&step.to_be_bytes());
    v.push(mode);
    for c in cursors {
        v.extend_from_slice(&c.wrap.to_be_bytes());
        v.extend_from_slice(&c.count.to_be_bytes());
    }
    v
}

/// Cursor checks: upstream RMBE sizes, wraps of the ring and of the wrap
/// count, full rings, and hostile cursors.
pub fn cursor() -> Seeds {
    let c = Cursor::new;
    vec![
        (
            "cursor-step",
            cursor_input(16384, 100, 3, [c(0, 0), c(0, 0), c(0, 0)]),
        ),
        (
            "cursor-wrap",
            cursor_input(65536, 1000, 3, [c(5, 65000), c(0, 0), c(5, 64000)]),
        ),
        (
            "cursor-wrap-count",
            cursor_input(1 << 19, 1 << 19, 3, [c(0xffff, 7), c(0, 0), c(0xffff, 0)]),
        ),
        (
            "cursor-behind",
            cursor_input(16384, 0, 1, [c(3, 100), c(3, 50), c(3, 0)]),
        ),
        (
            "cursor-overrun",
            cursor_input(16384, 0, 1, [c(3, 100), c(4, 200), c(3, 0)]),
        ),
        (
            "cursor-out-of-ring",
            cursor_input(16384, 0, 0, [c(3, 100), c(3, 16384), c(3, 0)]),
        ),
        (
            "cursor-huge",
            cursor_input(
                u32::MAX,
                u32::MAX,
                2,
                [c(1, u32::MAX - 1), c(0, 0), c(1, 0)],
            ),
        ),
    ]
}

/// Every target with its seeds.
pub fn all() -> Vec<(&'static str, Seeds)> {
    let every: Vec<_> = [declines(), proposals(), accepts()].concat();
    vec![
        ("clc_header", every.clone()),
        ("clc_decline", declines()),
        ("clc_proposal", proposals()),
        ("clc_accept_confirm", accepts()),
        ("clc_any", every),
        ("llc_any", llc()),
        ("cdc", cdc()),
        ("cursor", cursor()),
    ]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn seeds_parse() {
        for (name, m) in declines() {
            Decline::parse(&m).unwrap_or_else(|e| panic!("{name}: {e:?}"));
        }
        for (name, m) in proposals() {
            Proposal::parse(&m).unwrap_or_else(|e| panic!("{name}: {e:?}"));
        }
        for (name, m) in accepts() {
            SmcrAcceptConfirm::parse(&m).unwrap_or_else(|e| panic!("{name}: {e:?}"));
            check_accept_confirm(&m);
        }
        for (name, m) in llc() {
            LlcMessage::parse(&m).unwrap_or_else(|e| panic!("{name}: {e:?}"));
            check_llc_any(&m);
        }
        for (name, m) in cdc() {
            CdcMsg::parse(&m).unwrap_or_else(|e| panic!("{name}: {e:?}"));
            check_cdc(&m);
        }
        for (_, m) in cursor() {
            check_cursor(&m);
        }
        for (target, seeds) in all() {
            if target.starts_with("clc") {
                for (_, m) in seeds {
                    check_any(&m);
                }
            }
        }
    }
}
