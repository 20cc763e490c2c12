// SPDX-License-Identifier: GPL-2.0

//! `smcr device`: the RDMA devices SMC-R may use, one line per valid port
//! (upstream `dev.c`, `SMC_NETLINK_GET_DEV_SMCR`). Arguments, decoding and
//! the text are pure functions; [`invoke`] runs the dump.

use super::common::{
    abbreviates, Detail, Flavor, Output, EXIT_OBJECT_FAILURE, SMC_NETLINK_GET_DEV_SMCR,
};
use crate::genl::{self, c_str, Family, GenlMsg};
use crate::netlink::{attrs, DumpError, DumpWarning, Transport};

/// `SMC_GEN_DEV_SMCD` (nest).
pub const SMC_GEN_DEV_SMCD: u16 = 5;
/// `SMC_GEN_DEV_SMCR` (nest).
pub const SMC_GEN_DEV_SMCR: u16 = 6;
/// `SMC_NLA_DEV_*` of `SMC_GEN_DEV_SMCR` and `SMC_GEN_DEV_SMCD`.
pub const SMC_NLA_DEV_USE_CNT: u16 = 1;
pub const SMC_NLA_DEV_IS_CRIT: u16 = 2;
pub const SMC_NLA_DEV_PCI_FID: u16 = 3;
pub const SMC_NLA_DEV_PCI_CHID: u16 = 4;
pub const SMC_NLA_DEV_PCI_VENDOR: u16 = 5;
pub const SMC_NLA_DEV_PCI_DEVICE: u16 = 6;
pub const SMC_NLA_DEV_PCI_ID: u16 = 7;
pub const SMC_NLA_DEV_PORT: u16 = 8;
pub const SMC_NLA_DEV_IB_NAME: u16 = 10;
/// `SMC_NLA_DEV_PORT_*` of a port nest.
pub const SMC_NLA_DEV_PORT_PNET_USR: u16 = 1;
pub const SMC_NLA_DEV_PORT_PNETID: u16 = 2;
pub const SMC_NLA_DEV_PORT_NETDEV: u16 = 3;
pub const SMC_NLA_DEV_PORT_STATE: u16 = 4;
pub const SMC_NLA_DEV_PORT_VALID: u16 = 5;
pub const SMC_NLA_DEV_PORT_LNK_CNT: u16 = 6;
/// Upstream's `SMC_MAX_PORTS`.
pub const MAX_PORTS: usize = 2;

/// What upstream prints for a message without a valid generic header.
pub const BAD_HEADER: &str = "Error: Invalid data returned: smc_gen_net_policy";
/// What upstream prints for a device nest it cannot parse.
pub const BAD_DEV: &str = "Error: failed to parse nested attributes: smc_gen_dev_smcd_sock_policy";
/// What upstream prints for a port nest it cannot parse.
pub const BAD_PORT: &str =
    "Error: Failed to parse nested attributes: smc_gen_dev_port_smcd_sock_policy";

/// Which devices to show.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Filter {
    /// Only ports with this network device.
    pub netdev: Option<Vec<u8>>,
    /// Only this RDMA device.
    pub ibdev: Option<Vec<u8>>,
}

/// Upstream's `handle_cmd_params()` of `dev.c`: `[show] [all]
/// [ibdev <dev>] [netdev <dev>]` (smcd: no `ibdev`, `netdev`), each word a
/// prefix; `None`: the usage.
pub fn parse_args(flavor: Flavor, args: &[Vec<u8>]) -> Option<Filter> {
    if (args.len() == 1 && abbreviates(&args[0], "help")) || args.len() > 4 {
        return None;
    }
    let mut i = usize::from(args.first().is_some_and(|a| abbreviates(a, "show")));
    let mut f = Filter::default();
    let (mut want_ibdev, mut want_netdev) = (false, false);
    while let Some(a) = args.get(i) {
        i += 1;
        if want_ibdev {
            f.ibdev = Some(truncated(a, 63));
            break;
        } else if want_netdev {
            f.netdev = Some(truncated(a, 15));
            break;
        } else if abbreviates(a, "help") {
            return None;
        } else if abbreviates(a, "all") {
            // All devices are always shown.
        } else if flavor == Flavor::Smcr && abbreviates(a, "ibdev") {
            want_ibdev = true;
        } else if flavor == Flavor::Smcr && abbreviates(a, "netdev") {
            want_netdev = true;
        } else {
            return None;
        }
    }
    if i < args.len() {
        return None;
    }
    Some(f)
}

/// The first `n` bytes, as upstream's `snprintf` into a fixed buffer.
pub(crate) fn truncated(a: &[u8], n: usize) -> Vec<u8> {
    a.get(..n).unwrap_or(a).to_vec()
}

/// The usage text.
pub fn usage(flavor: Flavor) -> String {
    match flavor {
        Flavor::Smcr => "Usage: smcr device [show] [all]\n\
                         \x20                         [ibdev <dev>]\n\
                         \x20                         [netdev <dev>]\n"
            .to_string(),
        Flavor::Smcd => "Usage: smcd device [show] [all]\n".to_string(),
    }
}

/// One port of a device.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Port {
    pub valid: bool,
    pub pnetid: Vec<u8>,
    pub pnet_by_user: bool,
    pub netdev: u32,
    pub state: u8,
    pub links: u32,
}

/// A device as the dump describes it.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Device {
    pub name: Vec<u8>,
    pub critical: bool,
    pub pci_fid: u32,
    pub pci_chid: u16,
    pub pci_device: u16,
    pub pci_id: Vec<u8>,
    pub ports: [Port; MAX_PORTS],
}

/// One message of the dump.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Reply {
    /// A device.
    Device(Device),
    /// Only an SMC-D device nest: nothing to show, the next message.
    Other,
    /// No device nest: upstream stops reading.
    Stop,
    /// Upstream's error message, then it stops.
    Error(&'static str),
}

/// The payload of a fixed-size attribute, if long enough.
pub(crate) fn fixed<const N: usize>(p: &[u8]) -> Option<[u8; N]> {
    p.get(..N).and_then(|b| b.try_into().ok())
}

pub(crate) fn u8_of(p: &[u8]) -> Option<u8> {
    p.first().copied()
}

pub(crate) fn u16_of(p: &[u8]) -> Option<u16> {
    fixed::<2>(p).map(u16::from_ne_bytes)
}

pub(crate) fn u32_of(p: &[u8]) -> Option<u32> {
    fixed::<4>(p).map(u32::from_ne_bytes)
}

/// Decodes a port nest; `None` when an attribute is too short.
fn parse_port(nest: &[u8]) -> Option<Port> {
    let mut p = Port::default();
    for a in attrs(nest) {
        match a.kind {
            SMC_NLA_DEV_PORT_PNET_USR => p.pnet_by_user = u8_of(a.payload)? != 0,
            SMC_NLA_DEV_PORT_PNETID => p.pnetid = c_str(a.payload).to_vec(),
            SMC_NLA_DEV_PORT_NETDEV => p.netdev = u32_of(a.payload)?,
            SMC_NLA_DEV_PORT_STATE => p.state = u8_of(a.payload)?,
            SMC_NLA_DEV_PORT_VALID => p.valid = u8_of(a.payload)? != 0,
            SMC_NLA_DEV_PORT_LNK_CNT => p.links = u32_of(a.payload)?,
            _ => {}
        }
    }
    Some(p)
}

/// Decodes one message of the `GET_DEV_SMCR` dump.
pub fn parse_reply(payload: &[u8]) -> Reply {
    let Some(msg) = GenlMsg::parse(payload) else {
        return Reply::Error(BAD_HEADER);
    };
    let Some(nest) = genl::find_attr(msg.attrs, SMC_GEN_DEV_SMCR) else {
        return match genl::find_attr(msg.attrs, SMC_GEN_DEV_SMCD) {
            Some(_) => Reply::Other,
            None => Reply::Stop,
        };
    };
    let mut d = Device::default();
    let mut port_nests: [Option<&[u8]>; MAX_PORTS] = [None; MAX_PORTS];
    for a in attrs(nest) {
        let ok = match a.kind {
            SMC_NLA_DEV_IS_CRIT => u8_of(a.payload).map(|v| d.critical = v != 0),
            SMC_NLA_DEV_PCI_FID => u32_of(a.payload).map(|v| d.pci_fid = v),
            SMC_NLA_DEV_PCI_CHID => u16_of(a.payload).map(|v| d.pci_chid = v),
            SMC_NLA_DEV_PCI_VENDOR => u16_of(a.payload).map(|_| ()),
            SMC_NLA_DEV_PCI_DEVICE => u16_of(a.payload).map(|v| d.pci_device = v),
            SMC_NLA_DEV_PCI_ID => {
                d.pci_id = c_str(a.payload).to_vec();
                Some(())
            }
            SMC_NLA_DEV_IB_NAME => {
                d.name = c_str(a.payload).to_vec();
                Some(())
            }
            k if (SMC_NLA_DEV_PORT..SMC_NLA_DEV_PORT + MAX_PORTS as u16).contains(&k) => {
                if let Some(slot) = port_nests.get_mut(usize::from(k - SMC_NLA_DEV_PORT)) {
                    *slot = Some(a.payload);
                }
                Some(())
            }
            _ => Some(()),
        };
        if ok.is_none() {
            return Reply::Error(BAD_DEV);
        }
    }
    for (slot, nest) in d.ports.iter_mut().zip(port_nests) {
        if let Some(n) = nest {
            match parse_port(n) {
                Some(p) => *slot = p,
                None => return Reply::Error(BAD_PORT),
            }
        }
    }
    Reply::Device(d)
}

/// The detail level of upstream's `d_level`: 1 for `-d`, 2 for `-dd`.
pub fn level(detail: Detail) -> u8 {
    match detail {
        Detail::Details | Detail::DetailsAbsolute => 1,
        Detail::MoreDetails => 2,
        Detail::None | Detail::Absolute => 0,
    }
}

/// The header line.
pub fn header(level: u8) -> String {
    let mut s = String::from("Net-Dev         IB-Dev   IB-P  IB-State  Type          Crit  ");
    if level >= 1 {
        s.push_str(" FID   PCI-ID        PCHID  ");
    }
    s.push_str("#Links  PNET-ID  \n");
    s
}

/// C's `%#x`: `0` for zero, else `0x…`.
pub fn hash_x(v: u32) -> String {
    if v == 0 {
        "0".to_string()
    } else {
        format!("{v:#x}")
    }
}

/// `smc_ib_dev_type()`.
pub fn dev_type(pci_device: u16) -> String {
    match pci_device {
        0x1004 => "RoCE_Express".to_string(),
        0x1016 => "RoCE_Express2".to_string(),
        0x04ed => "ISM".to_string(),
        v => hash_x(u32::from(v)),
    }
}

/// `smc_ib_port_state()`.
fn port_state(v: u8) -> String {
    match v {
        0 => "INACTIVE".to_string(),
        1 => "ACTIVE".to_string(),
        v => format!("{}?", hash_x(u32::from(v))),
    }
}

/// Upstream's `trim_space()`: no leading or trailing white space.
pub fn trim_space(b: &[u8]) -> String {
    crate::printable(b)
        .trim_matches(|c: char| c.is_ascii_whitespace())
        .to_string()
}

/// `%-Ws` of a name that upstream truncates to `max` characters (without
/// padding) when it is longer.
pub fn padded_or_cut(name: &str, width: usize, max: usize) -> String {
    if name.len() > max {
        name.chars().take(max).collect()
    } else {
        format!("{name:<width$}")
    }
}

/// The lines of one device: one per valid port that passes `filter`;
/// `ifname` names an interface index (empty when unknown).
pub fn format(dev: &Device, level: u8, filter: &Filter, ifname: &dyn Fn(u32) -> String) -> String {
    let mut s = String::new();
    let name = crate::printable(&dev.name);
    for (i, p) in dev.ports.iter().enumerate() {
        let netdev = if p.netdev != 0 {
            ifname(p.netdev)
        } else {
            String::new()
        };
        let shown = match (&filter.netdev, &filter.ibdev) {
            (Some(n), _) => n.as_slice() == netdev.as_bytes(),
            (None, Some(d)) => d.as_slice() == dev.name.as_slice(),
            (None, None) => true,
        };
        if !p.valid || !shown {
            continue;
        }
        s.push_str(&padded_or_cut(&netdev, 15, 15));
        s.push(' ');
        s.push_str(&padded_or_cut(&name, 8, 8));
        s.push(' ');
        s.push_str(&format!("{:4}  ", i + 1));
        s.push_str(&format!("{:>8}  ", port_state(p.state)));
        s.push_str(&format!("{:<13}  ", dev_type(dev.pci_device)));
        s.push_str(&format!(
            "{:>3}   ",
            if dev.critical { "Yes" } else { "No" }
        ));
        if level >= 1 {
            s.push_str(&format!("{:04x}  ", dev.pci_fid));
            s.push_str(&format!("{:<12}  ", crate::printable(&dev.pci_id)));
            s.push_str(&format!("{:04x}    ", dev.pci_chid));
        }
        s.push_str(&format!("{:5} ", p.links));
        let mut pnet = Vec::new();
        if p.pnet_by_user {
            pnet.push(b'*');
        }
        pnet.extend_from_slice(&p.pnetid);
        s.push_str(&format!(
            " {:<16} \n",
            trim_space(truncated(&pnet, 16).as_slice())
        ));
    }
    s
}

/// The name of interface `index` on this host (empty when there is none).
pub fn if_name(index: u32) -> String {
    let mut buf = [0 as libc::c_char; libc::IF_NAMESIZE];
    // SAFETY: `buf` has room for IF_NAMESIZE bytes, as if_indextoname needs.
    let p = unsafe { libc::if_indextoname(index, buf.as_mut_ptr()) };
    if p.is_null() {
        return String::new();
    }
    let bytes: Vec<u8> = buf
        .iter()
        .take_while(|c| **c != 0)
        .map(|c| *c as u8)
        .collect();
    crate::printable(&bytes)
}

/// Reports a failed dump as upstream's `gen_nl_handle()`.
pub(crate) fn dump_failed(e: &DumpError, o: &mut Output<'_>) -> i32 {
    match e {
        DumpError::Kernel(libc::EOPNOTSUPP) => {
            o.err_line("Error: operation not supported by kernel")
        }
        e => o.err_line(&genl::perror(e)),
    }
    EXIT_OBJECT_FAILURE
}

/// `device` with `args` after it; the exit status.
pub fn invoke<T: Transport + ?Sized>(
    flavor: Flavor,
    detail: Detail,
    args: &[Vec<u8>],
    family: &mut Family<'_, T>,
    o: &mut Output<'_>,
) -> i32 {
    let Some(filter) = parse_args(flavor, args) else {
        o.err(usage(flavor).as_bytes());
        return EXIT_OBJECT_FAILURE;
    };
    let level = level(detail);
    let head = header(level);
    print_dump(
        family,
        SMC_NETLINK_GET_DEV_SMCR,
        &head,
        o,
        |m, o| match parse_reply(m) {
            Reply::Device(d) => {
                o.out(&format(&d, level, &filter, &if_name));
                true
            }
            Reply::Other => true,
            Reply::Stop => false,
            Reply::Error(text) => {
                o.err_line(text);
                false
            }
        },
    )
}

/// Runs dump `cmd` and prints it as upstream's tools do: warnings on
/// stderr, `header` before the first message, then each message through
/// `row` until it returns false; the exit status.
pub(crate) fn print_dump<T: Transport + ?Sized>(
    family: &mut Family<'_, T>,
    cmd: u8,
    header: &str,
    o: &mut Output<'_>,
    mut row: impl FnMut(&[u8], &mut Output<'_>) -> bool,
) -> i32 {
    let mut warnings: Vec<DumpWarning> = Vec::new();
    let answer = family.dump(cmd, &mut |w| warnings.push(w));
    for w in warnings {
        o.err_line(&w.to_string());
    }
    for (n, m) in answer.messages.iter().enumerate() {
        if n == 0 {
            o.out(header);
        }
        if !row(m, o) {
            break;
        }
    }
    match &answer.result {
        Ok(()) => 0,
        Err(e) => dump_failed(e, o),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    use crate::smcr::common::args as a;

    #[test]
    fn arguments_as_upstream() {
        let r = Flavor::Smcr;
        assert_eq!(parse_args(r, &a(&[])), Some(Filter::default()));
        assert_eq!(parse_args(r, &a(&["s", "a"])), Some(Filter::default()));
        assert_eq!(parse_args(r, &a(&["help"])), None);
        assert_eq!(parse_args(r, &a(&["x"])), None);
        let f = parse_args(r, &a(&["netdev", "eth0"])).expect("netdev");
        assert_eq!(f.netdev.as_deref(), Some(&b"eth0"[..]));
        assert_eq!(parse_args(r, &a(&["netdev", "eth0", "all"])), None);
        // smcd knows neither ibdev nor netdev.
        let d = Flavor::Smcd;
        assert_eq!(parse_args(d, &a(&["show", "all"])), Some(Filter::default()));
        assert_eq!(parse_args(d, &a(&["netdev", "eth0"])), None);
        assert_eq!(parse_args(d, &a(&["i", "rxe0"])), None);
    }

    #[test]
    fn c_formats() {
        assert_eq!(hash_x(0), "0");
        assert_eq!(hash_x(0x107f), "0x107f");
        assert_eq!(dev_type(0x1016), "RoCE_Express2");
        assert_eq!(padded_or_cut("rxe0", 8, 8), "rxe0    ");
        assert_eq!(padded_or_cut("erdma_000", 8, 8), "erdma_00");
        assert_eq!(trim_space(b"  NET1  "), "NET1");
    }

    #[test]
    fn hostile_messages_end_the_listing() {
        assert_eq!(parse_reply(&[6]), Reply::Error(BAD_HEADER));
        let mut p = vec![6, 1, 0, 0];
        let port = crate::genl::attr(SMC_NLA_DEV_PORT_NETDEV, &[1]);
        p.extend(crate::genl::attr(
            SMC_GEN_DEV_SMCR | 0x8000,
            &crate::genl::attr(SMC_NLA_DEV_PORT | 0x8000, &port),
        ));
        assert_eq!(parse_reply(&p), Reply::Error(BAD_PORT));
    }
}
