// SPDX-License-Identifier: GPL-2.0

//! LLC test vectors, laid out byte by byte after upstream's structs in
//! `net/smc/smc_llc.c` (offsets in the comments), as an x86 Linux peer
//! sends them (the v2 length and rkey count little-endian).

pub(super) const MAC: [u8; 6] = [0x52, 0x54, 0x00, 0x5c, 0x00, 0x01];
pub(super) const GID: [u8; 16] = [
    0xfe, 0x80, 0, 0, 0, 0, 0, 0, 0x50, 0x54, 0, 0xff, 0xfe, 0x5c, 0, 1,
];
pub(super) const GID2: [u8; 16] = [0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff, 192, 168, 122, 2];

/// v1 header: type, length 44, reserved/reject reason, flags.
fn v1(t: u8, flags: u8) -> [u8; 44] {
    let mut b = [0u8; 44];
    b[0] = t;
    b[1] = 44;
    b[3] = flags;
    b
}

/// v2 header of a `len`-byte message: type, length_v2 (little-endian),
/// flags.
fn v2<const N: usize>(t: u8, flags: u8) -> [u8; N] {
    let mut b = [0u8; N];
    b[0] = t;
    b[1..3].copy_from_slice(&(N as u16).to_le_bytes());
    b[3] = flags;
    b
}

/// `struct smc_llc_msg_confirm_link`, v1 request as a server sends it.
pub(super) fn confirm_link_v1() -> [u8; 44] {
    let mut b = v1(0x01, 0x03); // SMC_LLC_FLAG_NO_RMBE_EYEC
    b[4..10].copy_from_slice(&MAC); // sender_mac
    b[10..26].copy_from_slice(&GID); // sender_gid
    b[26..29].copy_from_slice(&[0x00, 0x01, 0x23]); // sender_qp_num
    b[29] = 1; // link_num
    b[30..34].copy_from_slice(&[0xde, 0xad, 0x00, 0x01]); // link_uid
    b[34] = 2; // max_links
    b[35] = 0; // max_conns
    b
}

/// The v2 response of a release 1 peer (max_conns and max_links set).
pub(super) fn confirm_link_v2_resp() -> [u8; 44] {
    let mut b = v2::<44>(0x21, 0x80 | 0x03);
    b[4..10].copy_from_slice(&MAC);
    b[10..26].copy_from_slice(&GID2);
    b[26..29].copy_from_slice(&[0xab, 0xcd, 0xef]);
    b[29] = 1;
    b[30..34].copy_from_slice(&[0xde, 0xad, 0x00, 0x01]);
    b[34] = 2;
    b[35] = 255;
    b
}

/// `struct smc_llc_msg_add_link`, a v1 reject response.
pub(super) fn add_link_v1_reject() -> [u8; 44] {
    let mut b = v1(0x02, 0x80 | 0x40); // RESP | ADD_LNK_REJ
    b[2] = 0x01; // add_link_rej_rsn: SMC_LLC_REJ_RSN_NO_ALT_PATH
    b[4..10].copy_from_slice(&MAC); // sender_mac
                                    // 10..12 reserved2
    b[12..28].copy_from_slice(&GID); // sender_gid
    b[28..31].copy_from_slice(&[0x00, 0x04, 0x56]); // sender_qp_num
    b[31] = 2; // link_num
    b[32] = 0x03; // reserved3 (high nibble), qp_mtu 3 (1024)
    b[33..36].copy_from_slice(&[0x12, 0x34, 0x56]); // initial_psn
    b
}

/// A v2 ADD_LINK request with its extension and two rkeys, 104 bytes.
pub(super) fn add_link_v2() -> [u8; 104] {
    let mut b = v2::<104>(0x22, 0);
    b[4..10].copy_from_slice(&MAC);
    b[12..28].copy_from_slice(&GID2);
    b[28..31].copy_from_slice(&[0x00, 0x00, 0x99]);
    b[31] = 2;
    b[32] = 0x05; // qp_mtu 5 (4096)
    b[33..36].copy_from_slice(&[0x00, 0x00, 0x07]);
    // struct smc_llc_msg_add_link_v2_ext at 44
    b[44] = 0x80; // v2_direct
    b[46..62].copy_from_slice(&GID); // client_target_gid
                                     // 62..70 reserved3
    b[70..72].copy_from_slice(&2u16.to_le_bytes()); // num_rkeys
                                                    // rt[0] at 72: rmb_key, rmb_key_new, rmb_vaddr_new
    b[72..76].copy_from_slice(&0x1111_1111u32.to_be_bytes());
    b[76..80].copy_from_slice(&0x2222_2222u32.to_be_bytes());
    b[80..88].copy_from_slice(&0x0000_7f00_0000_1000u64.to_be_bytes());
    // rt[1] at 88
    b[88..92].copy_from_slice(&0x3333_3333u32.to_be_bytes());
    b[92..96].copy_from_slice(&0x4444_4444u32.to_be_bytes());
    b[96..104].copy_from_slice(&0x0000_7f00_0000_2000u64.to_be_bytes());
    b
}

/// `struct smc_llc_msg_add_link_cont` from a client (response flag).
pub(super) fn add_link_cont() -> [u8; 44] {
    let mut b = v1(0x03, 0x80);
    b[4] = 2; // link_num
    b[5] = 3; // num_rkeys
              // 6..8 reserved2; rt[0] at 8, rt[1] at 24
    b[8..12].copy_from_slice(&0x0101_0101u32.to_be_bytes());
    b[12..16].copy_from_slice(&0x0202_0202u32.to_be_bytes());
    b[16..24].copy_from_slice(&0x1000u64.to_be_bytes());
    b[24..28].copy_from_slice(&0x0303_0303u32.to_be_bytes());
    b[28..32].copy_from_slice(&0x0404_0404u32.to_be_bytes());
    b[32..40].copy_from_slice(&0x2000u64.to_be_bytes());
    // 40..44 reserved
    b
}

/// `struct smc_llc_msg_del_link`: delete the link group, orderly.
pub(super) fn delete_link_v1_all() -> [u8; 44] {
    let mut b = v1(0x04, 0x40 | 0x20); // DEL_LINK_ALL | DEL_LINK_ORDERLY
    b[4] = 0; // link_num
    b[5..9].copy_from_slice(&0x0003_0000u32.to_be_bytes()); // reason
    b
}

/// A v2 DELETE_LINK response for an unknown link.
pub(super) fn delete_link_v2_resp() -> [u8; 44] {
    let mut b = v2::<44>(0x24, 0x80);
    b[4] = 2;
    b[5..9].copy_from_slice(&0x0010_0000u32.to_be_bytes()); // SMC_LLC_DEL_NOLNK
    b
}

/// `struct smc_llc_msg_req_add_link_v2` with two GIDs, 60 bytes.
pub(super) fn req_add_link() -> [u8; 60] {
    let mut b = v2::<60>(0x25, 0);
    // 4..24 reserved
    b[24] = 2; // gid_cnt
               // 25..28 reserved2
    b[28..44].copy_from_slice(&GID);
    b[44..60].copy_from_slice(&GID2);
    b
}

/// The server's answer: the header with the response flag, data cleared.
pub(super) fn req_add_link_resp() -> [u8; 44] {
    v2::<44>(0x25, 0x80)
}

/// `struct smc_llc_msg_confirm_rkey` with one other link.
pub(super) fn confirm_rkey_v1() -> [u8; 44] {
    let mut b = v1(0x06, 0);
    b[4] = 1; // rtoken[0].num_rkeys
    b[5..9].copy_from_slice(&0xaabb_ccddu32.to_be_bytes()); // rtoken[0].rmb_key
    b[9..17].copy_from_slice(&0x0000_7f12_3456_0000u64.to_be_bytes()); // rmb_vaddr
    b[17] = 2; // rtoken[1].link_id
    b[18..22].copy_from_slice(&0x1122_3344u32.to_be_bytes());
    b[22..30].copy_from_slice(&0x0000_7f12_3456_8000u64.to_be_bytes());
    // 30..43 rtoken[2], 43 reserved
    b
}

/// A negative v2 CONFIRM_RKEY response (upstream's answer to a count
/// above 3).
pub(super) fn confirm_rkey_v2_neg() -> [u8; 44] {
    let mut b = v2::<44>(0x26, 0x80 | 0x20 | 0x10); // RESP | RKEY_NEG | RKEY_RETRY
    b[4] = 4;
    b[5..9].copy_from_slice(&7u32.to_be_bytes());
    b[30] = 3; // rtoken[2].link_id
    b[31..35].copy_from_slice(&9u32.to_be_bytes());
    b[35..43].copy_from_slice(&0x10u64.to_be_bytes());
    b
}

/// CONFIRM_RKEY_CONT after RFC 7609: a negative response, one rkey left.
pub(super) fn confirm_rkey_cont() -> [u8; 44] {
    let mut b = v1(0x08, 0x80 | 0x20);
    b[4] = 1; // rkeys to come
    b[5] = 1; // rkey[0]: link id, rkey, vaddr
    b[6..10].copy_from_slice(&2u32.to_be_bytes());
    b[10..18].copy_from_slice(&3u64.to_be_bytes());
    b[18] = 4;
    b[19..23].copy_from_slice(&5u32.to_be_bytes());
    b[23..31].copy_from_slice(&6u64.to_be_bytes());
    b[31] = 7;
    b[32..36].copy_from_slice(&8u32.to_be_bytes());
    b[36..44].copy_from_slice(&9u64.to_be_bytes());
    b
}

/// `struct smc_llc_msg_delete_rkey`: a request for two rkeys.
pub(super) fn delete_rkey_v1() -> [u8; 44] {
    let mut b = v1(0x09, 0);
    b[4] = 2; // num_rkeys
    b[5] = 0; // err_mask
              // 6..8 reserved; rkey[8] at 8..40; 40..44 reserved2
    b[8..12].copy_from_slice(&0x0000_1234u32.to_be_bytes());
    b[12..16].copy_from_slice(&0x0000_5678u32.to_be_bytes());
    b
}

/// Its negative response: the second rkey was unknown.
pub(super) fn delete_rkey_v1_resp() -> [u8; 44] {
    let mut b = delete_rkey_v1();
    b[3] = 0x80 | 0x20; // RESP | RKEY_NEG
    b[5] = 0x40; // err_mask: 1 << (8 - 1 - 1)
    b
}

/// `struct smc_llc_msg_delete_rkey_v2` with twelve rkeys, 56 bytes.
pub(super) fn delete_rkey_v2() -> [u8; 56] {
    let mut b = v2::<56>(0x29, 0);
    b[4] = 12; // num_rkeys
    b[5] = 0; // num_inval_rkeys
    for i in 0..12u32 {
        let o = 8 + 4 * i as usize; // rkey[i]
        b[o..o + 4].copy_from_slice(&(0x100 + i).to_be_bytes());
    }
    b
}

/// Upstream's v2 response to it: rkeys cleared, count kept, three unknown.
pub(super) fn delete_rkey_v2_resp() -> [u8; 44] {
    let mut b = v2::<44>(0x29, 0x80 | 0x20);
    b[4] = 12;
    b[5] = 3; // err_mask = num_inval_rkeys
    b
}

/// `struct smc_llc_msg_test_link`.
pub(super) fn test_link_v1() -> [u8; 44] {
    let mut b = v1(0x07, 0);
    b[4..20].copy_from_slice(b"0123456789abcdef"); // user_data
    b
}

/// A v2 TEST_LINK response.
pub(super) fn test_link_v2_resp() -> [u8; 44] {
    let mut b = v2::<44>(0x27, 0x80);
    b[4..20].copy_from_slice(&[0xee; 16]);
    b
}

/// Room for the longest vector.
pub(super) const MAX: usize = 104;

/// Every vector, padded to [`MAX`] bytes, with its length.
pub(super) fn all() -> [([u8; MAX], usize); 19] {
    fn pad<const N: usize>(b: [u8; N]) -> ([u8; MAX], usize) {
        let mut p = [0u8; MAX];
        p[..N].copy_from_slice(&b);
        (p, N)
    }
    [
        pad(confirm_link_v1()),
        pad(confirm_link_v2_resp()),
        pad(add_link_v1_reject()),
        pad(add_link_v2()),
        pad(add_link_v2_no_ext()),
        pad(add_link_cont()),
        pad(delete_link_v1_all()),
        pad(delete_link_v2_resp()),
        pad(req_add_link()),
        pad(req_add_link_resp()),
        pad(confirm_rkey_v1()),
        pad(confirm_rkey_v2_neg()),
        pad(confirm_rkey_cont()),
        pad(delete_rkey_v1()),
        pad(delete_rkey_v1_resp()),
        pad(delete_rkey_v2()),
        pad(delete_rkey_v2_resp()),
        pad(test_link_v1()),
        pad(test_link_v2_resp()),
    ]
}

/// A v2 ADD_LINK of 44 bytes, as upstream's reject response is.
pub(super) fn add_link_v2_no_ext() -> [u8; 44] {
    let mut b = [0u8; 44];
    b.copy_from_slice(&add_link_v2()[..44]);
    b[1..3].copy_from_slice(&44u16.to_le_bytes());
    b[3] = 0x80 | 0x40;
    b
}
