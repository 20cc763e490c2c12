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

pub(super) const HOSTNAME: &[u8; 32] = b"smc-rs-server                   ";
pub(super) const ALT_GID: [u8; 16] = [
    0xfe, 0x80, 0, 0, 0, 0, 0, 0, 0x50, 0x54, 0, 0xff, 0xfe, 0x5c, 0, 2,
];

/// The fixed part of an SMC-R v2 accept or confirm with first contact
/// (`struct smc_clc_msg_accept_confirm`: header, `r0`, `r1`), the same
/// fields as [`accept_v1_bytes`]; `N` is the whole length.
fn v2_fixed<const N: usize>(kind: u8) -> [u8; N] {
    let mut b = [0u8; N];
    b[..64].copy_from_slice(&accept_v1_bytes()[..64]);
    b[4] = kind;
    b[5..7].copy_from_slice(&(N as u16).to_be_bytes());
    b[7] = 0x20 | (2 << 2); // version 2, first contact, typev1 R
    b[64..96].copy_from_slice(UEID); // r1.eid; 96..104 reserved
    b[N - 4..].copy_from_slice(&SMCR);
    b
}

/// `struct smc_clc_first_contact_ext_v2x` at 104 as Linux 6.12 fills it
/// for SMC-R release 1: 104 v2_direct in bit 7; 105 os_type (high nibble)
/// and release (low); 106..108 reserved; 108..140 host name; 140 max_conns;
/// 141 max_links; 142..144 feature_mask; 144..148 vendor options and
/// 148..156 reserved, zero.
fn put_fce_v2x(b: &mut [u8]) {
    b[104] = 0x80; // direct
    b[105] = 0x21; // Linux, release 1
    b[108..140].copy_from_slice(HOSTNAME);
    b[140] = 255;
    b[141] = 2;
    b[142..144].copy_from_slice(&1u16.to_be_bytes());
}

/// A server's v2 first contact accept: fixed part, the 52-byte extension,
/// the trailer at 156. 108 + 52 = 160 bytes.
pub(super) fn accept_v2_fce_bytes() -> [u8; 160] {
    let mut b = v2_fixed::<160>(2);
    put_fce_v2x(&mut b);
    b
}

/// A client's v2 first contact confirm: as the accept, then
/// `struct smc_clc_fce_gid_ext` at 156 (count, 3 reserved bytes) and two
/// GIDs at 160 and 176, the trailer at 192. 108 + 52 + 4 + 2 * 16 = 196.
pub(super) fn confirm_v2_fce_bytes() -> [u8; 196] {
    let mut b = v2_fixed::<196>(3);
    put_fce_v2x(&mut b);
    b[156] = 2;
    b[160..176].copy_from_slice(&ROCE_GID);
    b[176..192].copy_from_slice(&ALT_GID);
    b
}

/// A release 0 confirm from Linux before 6.5: the 36-byte extension
/// (`struct smc_clc_first_contact_ext` alone), the GID list at 140 with one
/// GID at 144, the trailer at 160. 108 + 36 + 4 + 16 = 164.
pub(super) fn confirm_v20_fce_bytes() -> [u8; 164] {
    let mut b = v2_fixed::<164>(3);
    b[105] = 0x20; // Linux, release 0; not direct
    b[108..140].copy_from_slice(HOSTNAME);
    b[140] = 1;
    b[144..160].copy_from_slice(&ROCE_GID);
    b
}
