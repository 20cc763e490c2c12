// SPDX-License-Identifier: GPL-2.0

//! The `linux/smc_diag.h` ABI: the request, `struct smc_diag_msg` and the
//! attributes that follow it, decoded from bytes by explicit offsets (the
//! uapi layout on every Linux ABI: `__aligned_u64` fields, host byte order
//! except ports and addresses). A reply shorter than a structure decodes
//! to nothing rather than to anything read past its end.

use crate::netlink;

/// `AF_SMC` (`PF_SMC`).
pub const AF_SMC: u8 = 43;
/// `SOCK_DIAG_BY_FAMILY`.
pub const SOCK_DIAG_BY_FAMILY: u16 = 20;

/// `SMC_DIAG_CONNINFO`.
pub const SMC_DIAG_CONNINFO: u16 = 1;
/// `SMC_DIAG_LGRINFO`.
pub const SMC_DIAG_LGRINFO: u16 = 2;
/// `SMC_DIAG_SHUTDOWN`.
pub const SMC_DIAG_SHUTDOWN: u16 = 3;
/// `SMC_DIAG_DMBINFO`.
pub const SMC_DIAG_DMBINFO: u16 = 4;
/// `SMC_DIAG_FALLBACK`.
pub const SMC_DIAG_FALLBACK: u16 = 5;
/// `SMC_DIAG_MAX`.
pub const SMC_DIAG_MAX: u16 = 5;

/// `SMC_DIAG_MODE_SMCR`.
pub const SMC_DIAG_MODE_SMCR: u8 = 0;
/// `SMC_DIAG_MODE_FALLBACK_TCP`.
pub const SMC_DIAG_MODE_FALLBACK_TCP: u8 = 1;
/// `SMC_DIAG_MODE_SMCD`.
pub const SMC_DIAG_MODE_SMCD: u8 = 2;

/// `sizeof(struct smc_diag_req)`.
pub const SMC_DIAG_REQ_LEN: usize = 52;
/// `sizeof(struct smc_diag_msg)`.
pub const SMC_DIAG_MSG_LEN: usize = 64;
/// `sizeof(struct smc_diag_conninfo)`.
pub const CONNINFO_LEN: usize = 76;
/// `sizeof(struct smc_diag_lgrinfo)`.
pub const LGRINFO_LEN: usize = 147;
/// The part of `struct smcd_diag_dmbinfo` that smc-tools reads (up to
/// `peer_token`; the kernel's has the `_ext` halves of the GIDs after it).
pub const DMBINFO_LEN: usize = 40;
/// `sizeof(struct smc_diag_fallback)`.
pub const FALLBACK_LEN: usize = 8;
/// `IB_DEVICE_NAME_MAX`.
pub const IB_DEVICE_NAME_MAX: usize = 64;

/// The bit of `diag_ext` that asks for attribute `ext` (`1 << (ext - 1)`).
pub const fn ext_bit(ext: u16) -> u8 {
    1 << (ext - 1)
}

/// The dump request for all AF_SMC sockets, with extensions `ext`.
/// Flags: `NLM_F_REQUEST | NLM_F_DUMP` (upstream's tool sends only
/// `NLM_F_ROOT`, half of `NLM_F_DUMP`; every handler tests the pair with `&`).
pub fn dump_request(ext: u8, seq: u32) -> Vec<u8> {
    let mut r = [0u8; SMC_DIAG_REQ_LEN];
    r[0] = AF_SMC;
    r[3] = ext;
    netlink::request(
        SOCK_DIAG_BY_FAMILY,
        netlink::NLM_F_REQUEST | netlink::NLM_F_DUMP,
        seq,
        &r,
    )
}

fn u16_at(b: &[u8], at: usize) -> u16 {
    b.get(at..at + 2)
        .and_then(|s| s.try_into().ok())
        .map(u16::from_ne_bytes)
        .unwrap_or(0)
}

fn u32_at(b: &[u8], at: usize) -> u32 {
    b.get(at..at + 4)
        .and_then(|s| s.try_into().ok())
        .map(u32::from_ne_bytes)
        .unwrap_or(0)
}

fn u64_at(b: &[u8], at: usize) -> u64 {
    b.get(at..at + 8)
        .and_then(|s| s.try_into().ok())
        .map(u64::from_ne_bytes)
        .unwrap_or(0)
}

fn array<const N: usize>(b: &[u8], at: usize) -> [u8; N] {
    b.get(at..at + N)
        .and_then(|s| s.try_into().ok())
        .unwrap_or([0; N])
}

/// `struct smc_diag_msg`.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct DiagMsg {
    /// `diag_family` (`AF_SMC` from current kernels).
    pub family: u8,
    /// `diag_state`: `sk_state`, numbered as `enum smc_state`.
    pub state: u8,
    /// `diag_mode` (`SMC_DIAG_MODE_*`).
    pub mode: u8,
    /// `diag_shutdown` (never filled by the kernel: see the attribute).
    pub shutdown: u8,
    /// `id.idiag_sport`, in host order.
    pub sport: u16,
    /// `id.idiag_dport`, in host order.
    pub dport: u16,
    /// `id.idiag_src`: the address bytes as on the wire (IPv4 in the first 4).
    pub src: [u8; 16],
    /// `id.idiag_dst`.
    pub dst: [u8; 16],
    /// `id.idiag_if`.
    pub ifindex: u32,
    /// `id.idiag_cookie`.
    pub cookie: [u32; 2],
    /// `diag_uid`.
    pub uid: u32,
    /// `diag_inode`.
    pub inode: u64,
}

impl DiagMsg {
    /// Decodes the fixed part; `None` when `b` is shorter than it.
    pub fn parse(b: &[u8]) -> Option<DiagMsg> {
        if b.len() < SMC_DIAG_MSG_LEN {
            return None;
        }
        Some(DiagMsg {
            family: b[0],
            state: b[1],
            mode: b[2],
            shutdown: b[3],
            sport: u16::from_be_bytes([b[4], b[5]]),
            dport: u16::from_be_bytes([b[6], b[7]]),
            src: array(b, 8),
            dst: array(b, 24),
            ifindex: u32_at(b, 40),
            cookie: [u32_at(b, 44), u32_at(b, 48)],
            uid: u32_at(b, 52),
            inode: u64_at(b, 56),
        })
    }
}

/// `struct smc_diag_cursor` (its `reserved` half left out).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Cursor {
    /// `wrap`.
    pub wrap: u16,
    /// `count`.
    pub count: u32,
}

fn cursor(b: &[u8], at: usize) -> Cursor {
    Cursor {
        wrap: u16_at(b, at + 2),
        count: u32_at(b, at + 4),
    }
}

/// `struct smc_diag_conninfo`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ConnInfo {
    pub token: u32,
    pub sndbuf_size: u32,
    pub rmbe_size: u32,
    pub peer_rmbe_size: u32,
    pub rx_prod: Cursor,
    pub rx_cons: Cursor,
    pub tx_prod: Cursor,
    pub tx_cons: Cursor,
    pub rx_prod_flags: u8,
    pub rx_conn_state_flags: u8,
    pub tx_prod_flags: u8,
    pub tx_conn_state_flags: u8,
    pub tx_prep: Cursor,
    pub tx_sent: Cursor,
    pub tx_fin: Cursor,
}

impl ConnInfo {
    /// Decodes the attribute payload; `None` when short.
    pub fn parse(b: &[u8]) -> Option<ConnInfo> {
        if b.len() < CONNINFO_LEN {
            return None;
        }
        Some(ConnInfo {
            token: u32_at(b, 0),
            sndbuf_size: u32_at(b, 4),
            rmbe_size: u32_at(b, 8),
            peer_rmbe_size: u32_at(b, 12),
            rx_prod: cursor(b, 16),
            rx_cons: cursor(b, 24),
            tx_prod: cursor(b, 32),
            tx_cons: cursor(b, 40),
            rx_prod_flags: b[48],
            rx_conn_state_flags: b[49],
            tx_prod_flags: b[50],
            tx_conn_state_flags: b[51],
            tx_prep: cursor(b, 52),
            tx_sent: cursor(b, 60),
            tx_fin: cursor(b, 68),
        })
    }
}

/// `struct smc_diag_lgrinfo` (its one link).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LgrInfo {
    /// `lnk[0].link_id`.
    pub link_id: u8,
    /// `lnk[0].ibname`, up to its NUL.
    pub ibname: Vec<u8>,
    /// `lnk[0].ibport`.
    pub ibport: u8,
    /// `lnk[0].gid` (text), up to its NUL.
    pub gid: Vec<u8>,
    /// `lnk[0].peer_gid` (text), up to its NUL.
    pub peer_gid: Vec<u8>,
    /// `role`: 0 client, else server.
    pub role: u8,
}

/// The C string in a fixed array: up to the first NUL, or all of it.
fn c_str(b: &[u8]) -> Vec<u8> {
    b.iter().take_while(|&&c| c != 0).copied().collect()
}

impl LgrInfo {
    /// Decodes the attribute payload; `None` when short.
    pub fn parse(b: &[u8]) -> Option<LgrInfo> {
        if b.len() < LGRINFO_LEN {
            return None;
        }
        Some(LgrInfo {
            link_id: b[0],
            ibname: c_str(&b[1..1 + IB_DEVICE_NAME_MAX]),
            ibport: b[65],
            gid: c_str(&b[66..106]),
            peer_gid: c_str(&b[106..146]),
            role: b[146],
        })
    }
}

/// `struct smcd_diag_dmbinfo`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct DmbInfo {
    pub linkid: u32,
    pub peer_gid: u64,
    pub my_gid: u64,
    pub token: u64,
    pub peer_token: u64,
}

impl DmbInfo {
    /// Decodes the attribute payload; `None` when short.
    pub fn parse(b: &[u8]) -> Option<DmbInfo> {
        if b.len() < DMBINFO_LEN {
            return None;
        }
        Some(DmbInfo {
            linkid: u32_at(b, 0),
            peer_gid: u64_at(b, 8),
            my_gid: u64_at(b, 16),
            token: u64_at(b, 24),
            peer_token: u64_at(b, 32),
        })
    }
}

/// `struct smc_diag_fallback`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Fallback {
    /// `reason`: the local `SMC_CLC_DECL_*` code.
    pub reason: u32,
    /// `peer_diagnosis`: the code the peer declined with.
    pub peer_diagnosis: u32,
}

impl Fallback {
    /// Decodes the attribute payload; `None` when short.
    pub fn parse(b: &[u8]) -> Option<Fallback> {
        if b.len() < FALLBACK_LEN {
            return None;
        }
        Some(Fallback {
            reason: u32_at(b, 0),
            peer_diagnosis: u32_at(b, 4),
        })
    }
}

/// One socket of the dump: the fixed part and the attributes we know,
/// each decoded from the first attribute of its type (as upstream's
/// `parse_rtattr()` keeps the first), dropped when too short.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SockInfo {
    pub msg: DiagMsg,
    /// `SMC_DIAG_SHUTDOWN`: `sk_shutdown` (bit 0 receive, bit 1 send).
    pub shutdown: Option<u8>,
    pub conninfo: Option<ConnInfo>,
    pub lgrinfo: Option<LgrInfo>,
    pub dmbinfo: Option<DmbInfo>,
    pub fallback: Option<Fallback>,
    /// Trailing bytes no attribute covered, and the bad length field
    /// (upstream prints "Deficit").
    pub deficit: Option<(usize, u16)>,
}

impl SockInfo {
    /// Decodes the payload of one reply message; `None` when it is shorter
    /// than `struct smc_diag_msg`.
    pub fn parse(payload: &[u8]) -> Option<SockInfo> {
        let msg = DiagMsg::parse(payload)?;
        let mut seen = [false; SMC_DIAG_MAX as usize + 1];
        let mut info = SockInfo {
            msg,
            shutdown: None,
            conninfo: None,
            lgrinfo: None,
            dmbinfo: None,
            fallback: None,
            deficit: None,
        };
        // The attributes start at NLMSG_ALIGN(sizeof(struct smc_diag_msg)).
        let tail = payload
            .get(netlink::align(SMC_DIAG_MSG_LEN)..)
            .unwrap_or_default();
        let mut walk = netlink::attrs(tail);
        for a in walk.by_ref() {
            let Some(first) = seen.get_mut(usize::from(a.kind)) else {
                continue;
            };
            if std::mem::replace(first, true) {
                continue;
            }
            match a.kind {
                SMC_DIAG_SHUTDOWN => info.shutdown = a.payload.first().copied(),
                SMC_DIAG_CONNINFO => info.conninfo = ConnInfo::parse(a.payload),
                SMC_DIAG_LGRINFO => info.lgrinfo = LgrInfo::parse(a.payload),
                SMC_DIAG_DMBINFO => info.dmbinfo = DmbInfo::parse(a.payload),
                SMC_DIAG_FALLBACK => info.fallback = Fallback::parse(a.payload),
                _ => {}
            }
        }
        info.deficit = walk.deficit();
        Some(info)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn request_bytes() {
        let r = dump_request(
            ext_bit(SMC_DIAG_CONNINFO) | ext_bit(SMC_DIAG_LGRINFO),
            123456,
        );
        assert_eq!(r.len(), 16 + 52);
        assert_eq!(u32_at(&r, 0), 68);
        assert_eq!(u16_at(&r, 4), 20);
        assert_eq!(u16_at(&r, 6), 0x301);
        assert_eq!(r[16], 43);
        assert_eq!(r[19], 0b11);
        assert!(r[20..].iter().all(|&b| b == 0));
        assert_eq!(ext_bit(SMC_DIAG_DMBINFO), 8);
    }

    #[test]
    fn short_payloads_decode_to_nothing() {
        assert!(DiagMsg::parse(&[0; 63]).is_none());
        assert!(SockInfo::parse(&[0; 10]).is_none());
        assert!(ConnInfo::parse(&[0; 75]).is_none());
        assert!(LgrInfo::parse(&[0; 146]).is_none());
        assert!(DmbInfo::parse(&[0; 39]).is_none());
        assert!(Fallback::parse(&[0; 7]).is_none());
        assert!(DiagMsg::parse(&[0; 64]).is_some());
    }

    #[test]
    fn lgrinfo_strings_stop_at_nul_or_field_end() {
        let mut b = vec![0u8; LGRINFO_LEN];
        b[0] = 1;
        b[1..1 + 64].fill(b'x'); // no NUL: the field's length, no further
        b[65] = 2;
        b[66..70].copy_from_slice(b"fe80");
        b[146] = 1;
        let l = LgrInfo::parse(&b).expect("long enough");
        assert_eq!(l.ibname.len(), 64);
        assert_eq!(l.gid, b"fe80");
        assert!(l.peer_gid.is_empty());
        assert_eq!((l.link_id, l.ibport, l.role), (1, 2, 1));
    }
}
