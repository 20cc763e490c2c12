// SPDX-License-Identifier: GPL-2.0

//! Seed inputs: valid messages of every kind the parsers accept, built
//! with the encoders where they can express the message and byte by byte
//! (upstream's layouts) where they cannot. `examples/seeds.rs` writes them
//! into the corpora.

use super::*;

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

/// SMC-R accepts and confirms: v1, v2, v2 with a first contact
/// extension after the fixed part.
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
    };
    let v2 = SmcrAcceptConfirm {
        kind: MsgType::Confirm,
        version: SMC_V2,
        first_contact: false,
        eid: UEID,
        ..v1
    };
    let v2_fce = SmcrAcceptConfirm {
        kind: MsgType::Accept,
        first_contact: true,
        ..v2
    };
    let mut fce = encoded(|b| v2_fce.encode(b));
    fce.truncate(SMCR_ACCEPT_CONFIRM_LEN_V2 - TRAILER_LEN);
    // First contact extension: OS type Linux, release 1, host name.
    fce.extend_from_slice(&[0, 0x21, 0, 0]);
    fce.extend_from_slice(b"smc-rs-testbed\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0");
    fce.extend_from_slice(&EYECATCHER_SMCR);
    set_length(&mut fce);
    vec![
        ("accept-v1", encoded(|b| v1.encode(b))),
        ("confirm-v2", encoded(|b| v2.encode(b))),
        ("accept-v2-fce", fce),
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
        }
        for (_, seeds) in all() {
            for (_, m) in seeds {
                check_any(&m);
            }
        }
    }
}
