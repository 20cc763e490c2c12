// SPDX-License-Identifier: GPL-2.0

//! `smcr linkgroup`: the SMC-R link groups (`show`,
//! `SMC_NETLINK_GET_LGR_SMCR`) or their links (`link-show`,
//! `SMC_NETLINK_GET_LINK_SMCR`: each link group's message, then one per
//! link), as upstream `linkgroup.c` prints them. Arguments, decoding and
//! the text are pure functions; [`invoke`] runs the dump.

use super::common::{abbreviates, Detail, Flavor, Output, EXIT_OBJECT_FAILURE};
use super::device::{if_name, padded_or_cut, trim_space, truncated};
use crate::genl::{self, c_str, Family, GenlMsg};
use crate::netlink::{attrs, Transport};

/// `SMC_NETLINK_GET_LGR_SMCR` (dump).
pub const SMC_NETLINK_GET_LGR_SMCR: u8 = 2;
/// `SMC_NETLINK_GET_LINK_SMCR` (dump).
pub const SMC_NETLINK_GET_LINK_SMCR: u8 = 3;
/// `SMC_GEN_LGR_SMCR`, `SMC_GEN_LINK_SMCR`, `SMC_GEN_LGR_SMCD` (nests).
pub const SMC_GEN_LGR_SMCR: u16 = 2;
pub const SMC_GEN_LINK_SMCR: u16 = 3;
pub const SMC_GEN_LGR_SMCD: u16 = 4;
/// `SMC_NLA_LGR_R_*`.
pub const SMC_NLA_LGR_R_ID: u16 = 1;
pub const SMC_NLA_LGR_R_ROLE: u16 = 2;
pub const SMC_NLA_LGR_R_TYPE: u16 = 3;
pub const SMC_NLA_LGR_R_PNETID: u16 = 4;
pub const SMC_NLA_LGR_R_VLAN_ID: u16 = 5;
pub const SMC_NLA_LGR_R_CONNS_NUM: u16 = 6;
/// `SMC_NLA_LINK_*`.
pub const SMC_NLA_LINK_ID: u16 = 1;
pub const SMC_NLA_LINK_IB_DEV: u16 = 2;
pub const SMC_NLA_LINK_IB_PORT: u16 = 3;
pub const SMC_NLA_LINK_GID: u16 = 4;
pub const SMC_NLA_LINK_PEER_GID: u16 = 5;
pub const SMC_NLA_LINK_CONN_CNT: u16 = 6;
pub const SMC_NLA_LINK_NET_DEV: u16 = 7;
pub const SMC_NLA_LINK_UID: u16 = 8;
pub const SMC_NLA_LINK_PEER_UID: u16 = 9;
pub const SMC_NLA_LINK_STATE: u16 = 10;

/// What upstream prints for a message without a valid generic header.
pub const BAD_HEADER: &str = super::device::BAD_HEADER;
/// What upstream prints for nests it cannot parse.
pub const BAD_LGR: &str = "Error: Failed to parse nested attributes: smc_gen_lgr_smcr_sock_policy";
pub const BAD_LINK: &str =
    "Error: Failed to parse nested attributes: smc_gen_link_smcr_sock_policy";

/// Upstream's mask of a link group id given on the command line.
const LGID_MASK: u32 = 0xffff_ff00;
/// Upstream's id for an argument without hex digits.
const INVALID_LGID: u32 = 0xffff_ffff;

/// What to list and which.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Args {
    /// `link-show`: the links.
    pub links: bool,
    /// Only links on this network device (`link-show`).
    pub netdev: Option<Vec<u8>>,
    /// Only links on this RDMA device (`link-show`).
    pub ibdev: Option<Vec<u8>>,
    /// The id given (0: none), and its masked value compared with.
    pub lgid: u32,
    pub lgid_masked: u32,
}

/// C's `(unsigned int)strtol(arg, &end, 16)`, `None` when no digit was
/// read.
pub fn strtol_hex(arg: &[u8]) -> Option<u32> {
    let mut s = arg;
    while let Some((c, rest)) = s.split_first() {
        if !c.is_ascii_whitespace() {
            break;
        }
        s = rest;
    }
    let negative = s.first() == Some(&b'-');
    if matches!(s.first(), Some(b'-' | b'+')) {
        s = &s[1..];
    }
    if (s.starts_with(b"0x") || s.starts_with(b"0X")) && s.get(2).is_some_and(u8::is_ascii_hexdigit)
    {
        s = &s[2..];
    }
    let digits: Vec<u8> = s
        .iter()
        .copied()
        .take_while(u8::is_ascii_hexdigit)
        .collect();
    if digits.is_empty() {
        return None;
    }
    let mut v: i64 = 0;
    let mut overflow = false;
    for d in digits {
        let x = i64::from(char::from(d).to_digit(16).unwrap_or(0));
        match v.checked_mul(16).and_then(|v| v.checked_add(x)) {
            Some(n) => v = n,
            None => overflow = true,
        }
    }
    let v = match (overflow, negative) {
        (true, false) => i64::MAX,
        (true, true) => i64::MIN,
        (false, true) => -v,
        (false, false) => v,
    };
    Some(v as u32)
}

/// Upstream's `handle_cmd_params()` of `linkgroup.c`:
/// `[show | link-show] [all | LG-ID] [ibdev <dev>] [netdev <dev>]` (smcd:
/// no `ibdev`, `netdev`; `link-show` is taken and changes nothing);
/// `None`: the usage.
pub fn parse_args(flavor: Flavor, args: &[Vec<u8>]) -> Option<Args> {
    if (args.len() == 1 && abbreviates(&args[0], "help")) || args.len() > 4 {
        return None;
    }
    let mut a = Args::default();
    let mut i = 0;
    if let Some(first) = args.first() {
        if abbreviates(first, "show") {
            i = 1;
        } else if abbreviates(first, "link-show") {
            a.links = true;
            i = 1;
        }
    }
    let (mut want_ibdev, mut want_netdev, mut all) = (false, false, false);
    while let Some(arg) = args.get(i) {
        i += 1;
        if want_ibdev {
            a.ibdev = Some(truncated(arg, 63));
            break;
        } else if want_netdev {
            a.netdev = Some(truncated(arg, 15));
            break;
        } else if abbreviates(arg, "help") {
            return None;
        } else if abbreviates(arg, "all") {
            all = true;
        } else if flavor == Flavor::Smcr && abbreviates(arg, "ibdev") {
            want_ibdev = true;
        } else if flavor == Flavor::Smcr && abbreviates(arg, "netdev") {
            want_netdev = true;
        } else if !all {
            match strtol_hex(arg) {
                Some(v) => {
                    a.lgid = v;
                    a.lgid_masked = v & LGID_MASK;
                }
                None => a.lgid = INVALID_LGID,
            }
            break;
        } else {
            return None;
        }
    }
    if i < args.len() {
        return None;
    }
    Some(a)
}

/// The usage text.
pub fn usage(flavor: Flavor) -> String {
    match flavor {
        Flavor::Smcr => "Usage: smcr linkgroup [show | link-show] [all | LG-ID]\n\
                         \x20                                        [ibdev <dev>]\n\
                         \x20                                        [netdev <dev>]\n"
            .to_string(),
        Flavor::Smcd => "Usage: smcd linkgroup [show] [all | LG-ID]\n".to_string(),
    }
}

/// A link group as the dump describes it.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Lgr {
    pub id: u32,
    pub role: u8,
    pub kind: u8,
    pub vlan: u8,
    pub conns: u32,
    pub pnetid: Vec<u8>,
}

/// A link as the dump describes it.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Link {
    pub state: u32,
    pub conns: u32,
    /// The user ids as their four bytes.
    pub uid: [u8; 4],
    pub peer_uid: [u8; 4],
    pub ibport: u8,
    pub netdev: u32,
    pub ibname: Vec<u8>,
    pub gid: Vec<u8>,
    pub peer_gid: Vec<u8>,
}

/// One message of the dump.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Reply {
    /// A link group and/or a link nest.
    Item {
        lgr: Option<Lgr>,
        link: Option<Link>,
    },
    /// No nest upstream knows: it stops reading.
    Stop,
    /// Upstream's error message, then it stops.
    Error(&'static str),
}

fn u32_of(p: &[u8]) -> Option<u32> {
    super::device::fixed::<4>(p).map(u32::from_ne_bytes)
}

/// A string attribute within `max` bytes.
fn string_of(p: &[u8], max: usize) -> Option<Vec<u8>> {
    (p.len() <= max).then(|| c_str(p).to_vec())
}

fn parse_lgr(nest: &[u8]) -> Option<Lgr> {
    let mut l = Lgr::default();
    for a in attrs(nest) {
        match a.kind {
            SMC_NLA_LGR_R_ID => l.id = u32_of(a.payload)?,
            SMC_NLA_LGR_R_ROLE => l.role = *a.payload.first()?,
            SMC_NLA_LGR_R_TYPE => l.kind = *a.payload.first()?,
            SMC_NLA_LGR_R_PNETID => l.pnetid = string_of(a.payload, 17)?,
            SMC_NLA_LGR_R_VLAN_ID => l.vlan = *a.payload.first()?,
            SMC_NLA_LGR_R_CONNS_NUM => l.conns = u32_of(a.payload)?,
            _ => {}
        }
    }
    Some(l)
}

fn parse_link(nest: &[u8]) -> Option<Link> {
    let mut l = Link::default();
    for a in attrs(nest) {
        match a.kind {
            SMC_NLA_LINK_ID => {
                a.payload.first()?;
            }
            SMC_NLA_LINK_STATE => l.state = u32_of(a.payload)?,
            SMC_NLA_LINK_CONN_CNT => l.conns = u32_of(a.payload)?,
            SMC_NLA_LINK_UID => l.uid = super::device::fixed::<4>(a.payload)?,
            SMC_NLA_LINK_PEER_UID => l.peer_uid = super::device::fixed::<4>(a.payload)?,
            SMC_NLA_LINK_IB_PORT => l.ibport = *a.payload.first()?,
            SMC_NLA_LINK_NET_DEV => l.netdev = u32_of(a.payload)?,
            SMC_NLA_LINK_IB_DEV => l.ibname = string_of(a.payload, 65)?,
            SMC_NLA_LINK_GID => l.gid = string_of(a.payload, 41)?,
            SMC_NLA_LINK_PEER_GID => l.peer_gid = string_of(a.payload, 41)?,
            _ => {}
        }
    }
    Some(l)
}

/// Decodes one message of either dump.
pub fn parse_reply(payload: &[u8]) -> Reply {
    let Some(msg) = GenlMsg::parse(payload) else {
        return Reply::Error(BAD_HEADER);
    };
    let lgr = genl::find_attr(msg.attrs, SMC_GEN_LGR_SMCR);
    let link = genl::find_attr(msg.attrs, SMC_GEN_LINK_SMCR);
    if lgr.is_none() && link.is_none() {
        // An SMC-D link group nest is not shown by smcr; anything else ends.
        return match genl::find_attr(msg.attrs, SMC_GEN_LGR_SMCD) {
            Some(_) => Reply::Item {
                lgr: None,
                link: None,
            },
            None => Reply::Stop,
        };
    }
    let lgr = match lgr.map(parse_lgr) {
        Some(None) => return Reply::Error(BAD_LGR),
        other => other.flatten(),
    };
    let link = match link.map(parse_link) {
        Some(None) => return Reply::Error(BAD_LINK),
        other => other.flatten(),
    };
    Reply::Item { lgr, link }
}

/// The header line.
pub fn header(links: bool, level: u8) -> String {
    let mut s = String::from("LG-ID    LG-Role  LG-Type  ");
    if links {
        s.push_str("Net-Dev         Link-State      #Conns  ");
        if level >= 1 {
            s.push_str("Link-UID  Peer-UID  IB-Dev    IB-P  ");
            if level >= 2 {
                s.push_str("Local-GID                                 Peer-GID  ");
            }
        }
    } else {
        s.push_str("VLAN  #Conns  PNET-ID ");
    }
    s.push('\n');
    s
}

/// `smc_lgr_type()`.
fn lgr_type(v: u8) -> String {
    match v {
        0 => "NONE".to_string(),
        1 => "SINGLE".to_string(),
        2 => "SYM".to_string(),
        3 => "ASYMP".to_string(),
        4 => "ASYML".to_string(),
        v => format!("{}?", super::device::hash_x(u32::from(v))),
    }
}

/// `smc_link_state()`.
fn link_state(v: u32) -> String {
    match v {
        0 => "LINK_UNUSED".to_string(),
        1 => "LINK_INACTIVE".to_string(),
        2 => "LINK_ACTIVATING".to_string(),
        3 => "LINK_ACTIVE".to_string(),
        v => format!("{}?", super::device::hash_x(v)),
    }
}

/// Upstream's `filter_smcr_item()`: whether the line is left out.
fn filtered(a: &Args, lgr: &Lgr, link: &Link, ifname: &str) -> bool {
    if a.ibdev.is_none() && a.netdev.is_none() && a.lgid == 0 {
        return false;
    }
    if let (Some(n), true) = (&a.netdev, a.links) {
        return n.as_slice() != ifname.as_bytes();
    }
    if let (Some(d), true) = (&a.ibdev, a.links) {
        return d.as_slice() != link.ibname.as_slice();
    }
    a.lgid != 0 && a.lgid_masked != lgr.id
}

/// The state kept across the messages of a dump: upstream's last link
/// group (a `static` in `show_lgr_smcr_info()`).
#[derive(Default)]
pub struct Printer {
    last: Lgr,
}

impl Printer {
    /// The line (if any) for one message.
    pub fn line(
        &mut self,
        a: &Args,
        level: u8,
        lgr: Option<Lgr>,
        link: Option<Link>,
        ifname: &dyn Fn(u32) -> String,
    ) -> String {
        let has_lgr = lgr.is_some();
        if let Some(l) = lgr {
            self.last = l;
        }
        if has_lgr && a.links {
            return String::new();
        }
        let link = link.unwrap_or_default();
        let netdev = if link.netdev != 0 {
            ifname(link.netdev)
        } else {
            String::new()
        };
        let l = &self.last;
        if filtered(a, l, &link, &netdev) {
            return String::new();
        }
        let mut s = format!(
            "{:08x} {:<8} {:<8} ",
            l.id,
            if l.role != 0 { "SERV" } else { "CLNT" },
            lgr_type(l.kind)
        );
        if a.links {
            s.push_str(&padded_or_cut(&netdev, 15, 15));
            s.push(' ');
            s.push_str(&format!("{:<15} ", link_state(link.state)));
            s.push_str(&format!("{:6}  ", link.conns));
            if level >= 1 {
                s.push_str(&format!("{:08x}  ", u32::from_be_bytes(link.uid)));
                s.push_str(&format!("{:08x}  ", u32::from_be_bytes(link.peer_uid)));
                s.push_str(&padded_or_cut(&crate::printable(&link.ibname), 8, 8));
                s.push_str("  ");
                s.push_str(&format!("{:4}  ", link.ibport));
                if level >= 2 {
                    s.push_str(&format!("{:<40}  ", crate::printable(&link.gid)));
                    s.push_str(&format!("{}  ", crate::printable(&link.peer_gid)));
                }
            }
        } else {
            let vlan = super::device::hash_x(u32::from(l.vlan));
            s.push_str(&format!("{vlan:>4} "));
            s.push_str(&format!(" {:6} ", l.conns));
            s.push_str(&format!(" {:<16} ", trim_space(&l.pnetid)));
        }
        s.push('\n');
        s
    }
}

/// `linkgroup` with `args` after it; the exit status.
pub fn invoke<T: Transport + ?Sized>(
    flavor: Flavor,
    detail: Detail,
    args: &[Vec<u8>],
    family: &mut Family<'_, T>,
    o: &mut Output<'_>,
) -> i32 {
    let Some(a) = parse_args(flavor, args) else {
        o.err(usage(flavor).as_bytes());
        return EXIT_OBJECT_FAILURE;
    };
    let level = super::device::level(detail);
    let cmd = if a.links {
        SMC_NETLINK_GET_LINK_SMCR
    } else {
        SMC_NETLINK_GET_LGR_SMCR
    };
    let mut printer = Printer::default();
    let head = header(a.links, level);
    super::device::print_dump(family, cmd, &head, o, |m, o| match parse_reply(m) {
        Reply::Item {
            lgr: None,
            link: None,
        } => true,
        Reply::Item { lgr, link } => {
            o.out(&printer.line(&a, level, lgr, link, &if_name));
            true
        }
        Reply::Stop => false,
        Reply::Error(text) => {
            o.err_line(text);
            false
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    use crate::smcr::common::args as a;

    #[test]
    fn strtol_as_c() {
        assert_eq!(strtol_hex(b"300"), Some(0x300));
        assert_eq!(strtol_hex(b"  0x1fz"), Some(0x1f));
        assert_eq!(strtol_hex(b"0x"), Some(0));
        assert_eq!(strtol_hex(b"-1"), Some(0xffff_ffff));
        assert_eq!(strtol_hex(b"ffffffffffffffffff"), Some(0xffff_ffff));
        assert_eq!(strtol_hex(b"zz"), None);
        assert_eq!(strtol_hex(b""), None);
    }

    #[test]
    fn arguments_as_upstream() {
        let r = Flavor::Smcr;
        assert_eq!(parse_args(r, &a(&[])), Some(Args::default()));
        assert_eq!(parse_args(r, &a(&["h"])), None);
        let links = parse_args(r, &a(&["link-show", "all"])).expect("link-show all");
        assert!(links.links && links.lgid == 0);
        let id = parse_args(r, &a(&["show", "2ab"])).expect("id");
        assert_eq!((id.lgid, id.lgid_masked), (0x2ab, 0x200));
        let bad = parse_args(r, &a(&["zz"])).expect("no digits");
        assert_eq!((bad.lgid, bad.lgid_masked), (INVALID_LGID, 0));
        assert_eq!(parse_args(r, &a(&["all", "1"])), None);
        assert_eq!(parse_args(r, &a(&["1", "2"])), None);
        let dev = parse_args(r, &a(&["l", "ibdev", "rxe0"])).expect("ibdev");
        assert_eq!(dev.ibdev.as_deref(), Some(&b"rxe0"[..]));
        assert_eq!(
            parse_args(r, &a(&["show", "all", "all", "all", "all"])),
            None
        );
        // smcd: "ibdev" is an LG-ID without digits, after "all" the usage.
        let d = Flavor::Smcd;
        let no_id = parse_args(d, &a(&["ibdev"])).expect("an id");
        assert_eq!(no_id.lgid, INVALID_LGID);
        assert_eq!(parse_args(d, &a(&["all", "netdev"])), None);
        assert_eq!(
            parse_args(d, &a(&["link-show", "100"])).map(|a| a.lgid),
            Some(0x100)
        );
    }

    #[test]
    fn hostile_messages_end_the_listing() {
        assert_eq!(parse_reply(&[1, 2]), Reply::Error(BAD_HEADER));
        assert_eq!(parse_reply(&[2, 1, 0, 0]), Reply::Stop);
        // A link group id of two bytes.
        let mut p = vec![2, 1, 0, 0];
        p.extend(crate::genl::attr(
            SMC_GEN_LGR_SMCR | 0x8000,
            &crate::genl::attr(SMC_NLA_LGR_R_ID, &[1, 2]),
        ));
        assert_eq!(parse_reply(&p), Reply::Error(BAD_LGR));
    }
}
