// SPDX-License-Identifier: GPL-2.0

//! Test vectors shared by the CLC codec tests: messages laid out byte by
//! byte as upstream Linux sends them.

pub(super) const ID: [u8; 8] = [1, 2, 3, 4, 5, 6, 7, 8];
pub(super) const SMCR: [u8; 4] = [0xe2, 0xd4, 0xc3, 0xd9];

/// A v1 decline laid out as `struct smc_clc_msg_decline`.
pub(super) fn decline_v1_bytes() -> [u8; 28] {
    let mut b = [0u8; 28];
    b[..4].copy_from_slice(&SMCR);
    b[4] = 4; // type
    b[5..7].copy_from_slice(&28u16.to_be_bytes());
    b[7] = 0x10; // version 1, typev2 0, typev1 R
    b[8..16].copy_from_slice(&ID);
    b[16..20].copy_from_slice(&0x0303_0000u32.to_be_bytes());
    b[24..28].copy_from_slice(&SMCR);
    b
}

/// A v2 decline laid out as `struct smc_clc_msg_decline_v2`.
pub(super) fn decline_v2_bytes() -> [u8; 44] {
    let mut b = [0u8; 44];
    b[..4].copy_from_slice(&SMCR);
    b[4] = 4;
    b[5..7].copy_from_slice(&44u16.to_be_bytes());
    b[7] = 0x20;
    b[8..16].copy_from_slice(&ID);
    b[16..20].copy_from_slice(&0x0303_0008u32.to_be_bytes());
    b[20] = 0x20; // os_type Linux in the high nibble
    b[40..44].copy_from_slice(&SMCR);
    b
}

pub(super) const UEID: &[u8; 32] = b"SMC-RS-TESTBED                  ";
pub(super) const ROCE_GID: [u8; 16] = [
    0xfe, 0x80, 0, 0, 0, 0, 0, 0, 0x50, 0x54, 0, 0xff, 0xfe, 0x5c, 0, 1,
];

/// What upstream Linux sends over rxe: an SMC-Rv2-only proposal
/// (typev1 N, so no prefix area of its own) with one UEID.
pub(super) fn proposal_v2_bytes() -> [u8; 156] {
    let mut b = [0u8; 156];
    b[..4].copy_from_slice(&SMCR);
    b[4] = 1;
    b[5..7].copy_from_slice(&156u16.to_be_bytes());
    b[7] = 0x22; // version 2, typev2 R, typev1 N
                 // local info (8..38) stays zero without a v1 offer; iparea_offset 0
                 // SMC-D area at 40: v2 extension offset at 50..52
    b[50..52].copy_from_slice(&28u16.to_be_bytes());
    // v2 extension at 40 + 12 + 28 = 80
    b[80] = 1; // one UEID
    b[83] = 0x10; // release 1
    b[88..104].copy_from_slice(&ROCE_GID);
    b[104] = 255; // max_conns
    b[105] = 2; // max_links
    b[106..108].copy_from_slice(&1u16.to_be_bytes());
    b[120..152].copy_from_slice(UEID);
    b[152..156].copy_from_slice(&SMCR);
    b
}

/// An SMC-Rv1 proposal with an IPv4 prefix and one IPv6 prefix.
pub(super) fn proposal_v1_bytes() -> [u8; 109] {
    let mut b = [0u8; 109];
    b[..4].copy_from_slice(&SMCR);
    b[4] = 1;
    b[5..7].copy_from_slice(&109u16.to_be_bytes());
    b[7] = 0x20 | (2 << 2); // version 2, typev2 N, typev1 R
    b[8..16].copy_from_slice(&ID);
    b[16..32].copy_from_slice(&ROCE_GID);
    b[32..38].copy_from_slice(&[0x52, 0x54, 0, 0x5c, 0, 1]);
    b[38..40].copy_from_slice(&40u16.to_be_bytes());
    // prefix area at 80
    b[80..84].copy_from_slice(&[10, 10, 0, 0]);
    b[84] = 24;
    b[87] = 1; // one IPv6 prefix
    b[88] = 0xfd; // fd00::/64
    b[104] = 64;
    b[105..109].copy_from_slice(&SMCR);
    b
}

pub(super) fn accept_v1_bytes() -> [u8; 68] {
    let mut b = [0u8; 68];
    b[..4].copy_from_slice(&SMCR);
    b[4] = 2;
    b[5..7].copy_from_slice(&68u16.to_be_bytes());
    b[7] = 0x10 | (2 << 2); // version 1, first contact
    b[8..16].copy_from_slice(&ID);
    b[16..32].copy_from_slice(&ROCE_GID);
    b[32..38].copy_from_slice(&[0x52, 0x54, 0, 0x5c, 0, 1]);
    b[38..41].copy_from_slice(&[0x00, 0x01, 0x23]); // qpn
    b[41..45].copy_from_slice(&0xdead_beefu32.to_be_bytes()); // rkey
    b[45] = 1; // rmbe_idx
    b[46..50].copy_from_slice(&0x0000_0042u32.to_be_bytes()); // token
    b[50] = (3 << 4) | 3; // rmbe_size 3, qp_mtu 3
    b[52..60].copy_from_slice(&0x1122_3344_5566_7788u64.to_be_bytes());
    b[61..64].copy_from_slice(&[0, 0, 7]); // psn
    b[64..68].copy_from_slice(&SMCR);
    b
}
