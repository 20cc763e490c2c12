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

// SMC-D vectors. GIDs and CHIDs are big-endian on the wire.

pub(super) const SMCD: [u8; 4] = [0xe2, 0xd4, 0xc3, 0xc4];
/// A native ISM device offered for SMC-Dv1 (the SMC-D area's device).
pub(super) const ISM_GID: u64 = 0x1111_2222_3333_4444;
pub(super) const ISM_CHID: u16 = 0x0123;
/// A second native ISM device, offered for SMC-Dv2.
pub(super) const ISM2_GID: u64 = 0x5555_6666_7777_8888;
pub(super) const ISM2_CHID: u16 = 0x0456;
/// The loopback device: a 128-bit GID (a UUID's two halves), CHID 0xffff.
pub(super) const LO_GID: u64 = 0x0011_2233_4455_6677;
pub(super) const LO_GID_EXT: u64 = 0x8899_aabb_ccdd_eeff;
pub(super) const LO_CHID: u16 = 0xffff;
pub(super) const SEID: &[u8; 32] = b"SMC-RS-SYSTEM-EID               ";
pub(super) const DMB_TOKEN: u64 = 0x0102_0304_0506_0708;
pub(super) const LGR_ID: [u8; 4] = [0, 0, 1, 0x10];

/// Writes a GID/CHID entry (`struct smc_clc_smcd_gid_chid`, 10 bytes).
fn put_gid_chid(b: &mut [u8], at: usize, gid: u64, chid: u16) {
    b[at..at + 8].copy_from_slice(&gid.to_be_bytes());
    b[at + 8..at + 10].copy_from_slice(&chid.to_be_bytes());
}

/// An SMC-Dv1-only proposal in the v2 header Linux always sends: typev1
/// D, typev2 N. `smc_clc_msg_proposal` (40), `smc_clc_msg_smcd` at 40
/// with the device, the prefix area at 80, the trailer at 88: 92 bytes.
pub(super) fn proposal_smcd_v1_bytes() -> [u8; 92] {
    let mut b = [0u8; 92];
    b[..4].copy_from_slice(&SMCR); // proposals always say "SMCR"
    b[4] = 1;
    b[5..7].copy_from_slice(&92u16.to_be_bytes());
    b[7] = 0x20 | (2 << 2) | 1; // version 2, typev2 N, typev1 D
                                // 8..38 local info: zero without SMC-Rv1
    b[38..40].copy_from_slice(&40u16.to_be_bytes()); // iparea_offset
    put_gid_chid(&mut b, 40, ISM_GID, ISM_CHID); // ism.gid, ism.chid
                                                 // 50..52 v2_ext_offset 0; 52..80 vendor, reserved
    b[80..84].copy_from_slice(&[10, 10, 0, 0]); // outgoing_subnet
    b[84] = 24; // prefix_len; 85..87 reserved; 87 no IPv6 prefix
    b[88..92].copy_from_slice(&SMCR);
    b
}

/// An SMC-Dv2-only proposal (typev1 N, typev2 D) offering the loopback
/// device and a native ISM device, with one UEID and the SEID.
///
/// SMC-D area at 40 without a device, v2_ext_offset 28 at 50 (40 + 12 +
/// 28 = 80). `smc_clc_v2_extension` at 80: eid_cnt 1, ism_gid_cnt 3,
/// flag release 1 and seid, smcd_v2_ext_offset 64 at 86 (80 + 8 + 64 =
/// 152), no RoCE fields, feature_mask 1 at 106, the UEID at 120.
/// `smc_clc_smcd_v2_extension` at 152: system EID, 16 reserved, entries at
/// 200, 210 (the loopback GID and its extension) and 220; the trailer at
/// 230: 234 bytes.
pub(super) fn proposal_smcd_v2_bytes() -> [u8; 234] {
    let mut b = [0u8; 234];
    b[..4].copy_from_slice(&SMCR);
    b[4] = 1;
    b[5..7].copy_from_slice(&234u16.to_be_bytes());
    b[7] = 0x20 | (1 << 2) | 2; // version 2, typev2 D, typev1 N
    b[50..52].copy_from_slice(&28u16.to_be_bytes());
    b[80] = 1; // eid_cnt
    b[81] = 3; // ism_gid_cnt
    b[83] = 0x11; // release 1, seid
    b[86..88].copy_from_slice(&64u16.to_be_bytes()); // smcd_v2_ext_offset
    b[106..108].copy_from_slice(&1u16.to_be_bytes()); // feature_mask
    b[120..152].copy_from_slice(UEID);
    b[152..184].copy_from_slice(SEID);
    put_gid_chid(&mut b, 200, LO_GID, LO_CHID);
    put_gid_chid(&mut b, 210, LO_GID_EXT, LO_CHID);
    put_gid_chid(&mut b, 220, ISM2_GID, ISM2_CHID);
    b[230..234].copy_from_slice(&SMCR);
    b
}

/// Everything at once (typev1 B, typev2 B): the SMC-Rv1 identity, the
/// SMC-Dv1 device in the SMC-D area, v2_ext_offset 36 (after the prefix
/// area at 80), the v2 extension at 88 with the RoCE fields (GID at 96,
/// max_conns 255 at 112, max_links 2, feature_mask 1 at 114) and the UEID
/// at 128, smcd_v2_ext_offset 64 at 94 (88 + 8 + 64 = 160): system EID at
/// 160, entries at 208 (native) and 218, 228 (loopback); the trailer at
/// 238: 242 bytes.
pub(super) fn proposal_smcd_all_bytes() -> [u8; 242] {
    let mut b = [0u8; 242];
    b[..4].copy_from_slice(&SMCR);
    b[4] = 1;
    b[5..7].copy_from_slice(&242u16.to_be_bytes());
    b[7] = 0x20 | (3 << 2) | 3; // version 2, typev2 B, typev1 B
    b[8..16].copy_from_slice(&ID);
    b[16..32].copy_from_slice(&ROCE_GID);
    b[32..38].copy_from_slice(&[0x52, 0x54, 0, 0x5c, 0, 1]);
    b[38..40].copy_from_slice(&40u16.to_be_bytes());
    put_gid_chid(&mut b, 40, ISM_GID, ISM_CHID);
    b[50..52].copy_from_slice(&36u16.to_be_bytes());
    b[80..84].copy_from_slice(&[10, 10, 0, 0]);
    b[84] = 24;
    b[88] = 1;
    b[89] = 3;
    b[91] = 0x11;
    b[94..96].copy_from_slice(&64u16.to_be_bytes());
    b[96..112].copy_from_slice(&ROCE_GID);
    b[112] = 255;
    b[113] = 2;
    b[114..116].copy_from_slice(&1u16.to_be_bytes());
    b[128..160].copy_from_slice(UEID);
    b[160..192].copy_from_slice(SEID);
    put_gid_chid(&mut b, 208, ISM2_GID, ISM2_CHID);
    put_gid_chid(&mut b, 218, LO_GID, LO_CHID);
    put_gid_chid(&mut b, 228, LO_GID_EXT, LO_CHID);
    b[238..242].copy_from_slice(&SMCR);
    b
}

/// The fields every SMC-D accept or confirm has
/// (`struct smcd_clc_msg_accept_confirm_common` at 8): GID, token at 16,
/// dmbe_idx 0 at 24, dmbe_size 3 in the high nibble of 25, 26..28
/// reserved, link id at 28. "SMCD" in header and trailer; `N` is the whole
/// length.
fn smcd_fixed<const N: usize>(kind: u8, flags: u8, gid: u64) -> [u8; N] {
    let mut b = [0u8; N];
    b[..4].copy_from_slice(&SMCD);
    b[4] = kind;
    b[5..7].copy_from_slice(&(N as u16).to_be_bytes());
    b[7] = flags;
    b[8..16].copy_from_slice(&gid.to_be_bytes());
    b[16..24].copy_from_slice(&DMB_TOKEN.to_be_bytes());
    b[25] = 3 << 4;
    b[28..32].copy_from_slice(&LGR_ID);
    b[N - 4..].copy_from_slice(&SMCD);
    b
}

/// A v1 first contact accept: 12 reserved bytes at 32, the trailer at 44.
pub(super) fn smcd_accept_v1_bytes() -> [u8; 48] {
    smcd_fixed::<48>(2, 0x10 | (2 << 2) | 1, ISM_GID) // version 1, first contact, D
}

/// A v2 first contact accept over the loopback device, release 1: CHID
/// 0xffff at 32, the EID at 34, the GID extension at 66, then
/// `smc_clc_first_contact_ext_v2x` at 74: 75 os_type Linux and release 1,
/// host name at 78, 110..112 reserved (SMC-D), feature_mask at 112, 114..126
/// vendor options and reserved; the trailer at 126: 78 + 52 = 130 bytes.
pub(super) fn smcd_accept_v2_lo_bytes() -> [u8; 130] {
    let mut b = smcd_fixed::<130>(2, 0x20 | (2 << 2) | 1, LO_GID);
    b[32..34].copy_from_slice(&LO_CHID.to_be_bytes());
    b[34..66].copy_from_slice(SEID);
    b[66..74].copy_from_slice(&LO_GID_EXT.to_be_bytes());
    b[75] = 0x21;
    b[78..110].copy_from_slice(HOSTNAME);
    b[112..114].copy_from_slice(&1u16.to_be_bytes());
    b
}

/// A v2 first contact confirm over a native ISM device at release 0: the
/// 36-byte `smc_clc_first_contact_ext` at 74 (Linux at 75, host name at
/// 78), the trailer at 110: 78 + 36 = 114 bytes.
pub(super) fn smcd_confirm_v2_r0_bytes() -> [u8; 114] {
    let mut b = smcd_fixed::<114>(3, 0x20 | (2 << 2) | 1, ISM2_GID);
    b[32..34].copy_from_slice(&ISM2_CHID.to_be_bytes());
    b[34..66].copy_from_slice(UEID);
    b[75] = 0x20;
    b[78..110].copy_from_slice(HOSTNAME);
    b
}

/// Every length the header can declare up to the largest CLC message, over
/// `msg`'s bytes with the `trailer` eyecatcher moved to that length's end:
/// `parsed_len` (the encoded length of what parses, `None` for an error)
/// must give that length whenever it parses.
pub(crate) fn every_length(
    msg: &[u8],
    trailer: &[u8; 4],
    parsed_len: impl Fn(&[u8]) -> Option<usize>,
) {
    let mut big = [0u8; super::MAX_MESSAGE_LEN];
    big[..msg.len()].copy_from_slice(msg);
    for len in 0..=super::MAX_MESSAGE_LEN {
        big[5..7].copy_from_slice(&(len as u16).to_be_bytes());
        if len >= 4 {
            big[len - 4..len].copy_from_slice(trailer);
        }
        if let Some(n) = parsed_len(&big) {
            assert_eq!(n, len);
        }
    }
}
