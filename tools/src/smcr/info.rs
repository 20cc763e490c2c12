// SPDX-License-Identifier: GPL-2.0

//! `smcr info` / `smcd info`: the kernel's and the hardware's SMC
//! capabilities (upstream `info.c`, `handle_gen_info_reply()`).
//!
//! Upstream first counts the ISM and RoCE devices
//! (`SMC_NETLINK_GET_DEV_SMCD`, `SMC_NETLINK_GET_DEV_SMCR` dumps), then
//! dumps `SMC_NETLINK_GET_SYS_INFO`. A kernel that does not implement the
//! device dumps (`EOPNOTSUPP`, as smc_rs today) counts as one without
//! devices here, where upstream gives up.

use super::common::{
    Flavor, Output, EXIT_OBJECT_FAILURE, SMC_NETLINK_GET_DEV_SMCD, SMC_NETLINK_GET_DEV_SMCR,
    SMC_NETLINK_GET_SYS_INFO,
};
use crate::genl::{self, c_str, find_attr, Family, GenlMsg};
use crate::netlink::{attrs, DumpError, DumpWarning, Transport};
use std::fmt::Write as _;

/// `SMC_GEN_SYS_INFO` (nest).
pub const SMC_GEN_SYS_INFO: u16 = 1;
/// `SMC_GEN_DEV_SMCD` (nest).
pub const SMC_GEN_DEV_SMCD: u16 = 5;
/// `SMC_GEN_DEV_SMCR` (nest).
pub const SMC_GEN_DEV_SMCR: u16 = 6;

/// `SMC_NLA_SYS_VER` (u8).
pub const SMC_NLA_SYS_VER: u16 = 1;
/// `SMC_NLA_SYS_REL` (u8).
pub const SMC_NLA_SYS_REL: u16 = 2;
/// `SMC_NLA_SYS_IS_ISM_V2` (u8).
pub const SMC_NLA_SYS_IS_ISM_V2: u16 = 3;
/// `SMC_NLA_SYS_LOCAL_HOST` (string).
pub const SMC_NLA_SYS_LOCAL_HOST: u16 = 4;
/// `SMC_NLA_SYS_SEID` (string).
pub const SMC_NLA_SYS_SEID: u16 = 5;
/// `SMC_NLA_SYS_IS_SMCR_V2` (u8).
pub const SMC_NLA_SYS_IS_SMCR_V2: u16 = 6;

/// `SMC_NLA_DEV_PCI_DEVICE` (u16) in `SMC_GEN_DEV_SMCR`.
pub const SMC_NLA_DEV_PCI_DEVICE: u16 = 6;

/// The PCI device ids of the first RoCE Express (ConnectX-3 functions),
/// which know RoCE v1 only (`smc_rnics`).
pub const ROCE_EXPRESS_V1_IDS: [u16; 2] = [0x1003, 0x1004];

/// What the arguments after `info` ask for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Args {
    /// `show`, or nothing.
    Show,
    /// The usage on stderr, exit 255.
    Usage,
}

/// Upstream's `handle_cmd_params()`: nothing, or one prefix of `show`.
pub fn parse_args(args: &[Vec<u8>]) -> Args {
    match args {
        [] => Args::Show,
        [w] if !super::common::abbreviates(w, "help") && super::common::abbreviates(w, "show") => {
            Args::Show
        }
        _ => Args::Usage,
    }
}

/// The usage (`usage()` of `info.c`).
pub fn usage(flavor: Flavor) -> String {
    format!("Usage: {} info [show]\n", flavor.name())
}

/// The `SMC_GEN_SYS_INFO` nest.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct SysInfo {
    /// `SMC_NLA_SYS_VER`.
    pub ver: Option<u8>,
    /// `SMC_NLA_SYS_REL`.
    pub rel: Option<u8>,
    /// `SMC_NLA_SYS_IS_ISM_V2`.
    pub ism_v2: Option<u8>,
    /// `SMC_NLA_SYS_LOCAL_HOST`, up to its NUL.
    pub host: Option<Vec<u8>>,
    /// `SMC_NLA_SYS_SEID`, up to its NUL.
    pub seid: Option<Vec<u8>>,
    /// `SMC_NLA_SYS_IS_SMCR_V2`.
    pub smcr_v2: Option<u8>,
}

/// One message of the `GET_SYS_INFO` dump.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Reply {
    /// The nest, decoded.
    Info(SysInfo),
    /// No `SMC_GEN_SYS_INFO`: nothing to print.
    Nothing,
    /// Shorter than a generic netlink header: upstream's message; the
    /// dump's messages end here, successfully.
    BadHeader,
    /// A u8 attribute without its byte (libnl's policy check): upstream's
    /// message; the dump's messages end here, successfully.
    BadNest,
}

/// The message upstream prints for [`Reply::BadHeader`].
pub const BAD_HEADER: &str = "Error: Invalid data returned: smc_gen_net_policy";
/// The message upstream prints for [`Reply::BadNest`].
pub const BAD_NEST: &str = "Error: Failed to parse nested attributes: smc_gen_info_policy";

/// Decodes one `GET_SYS_INFO` message (attributes of a type given twice:
/// the last, as libnl).
pub fn parse_reply(payload: &[u8]) -> Reply {
    let Some(msg) = GenlMsg::parse(payload) else {
        return Reply::BadHeader;
    };
    let Some(nest) = find_attr(msg.attrs, SMC_GEN_SYS_INFO) else {
        return Reply::Nothing;
    };
    let mut info = SysInfo::default();
    for a in attrs(nest) {
        let u8_slot = match a.kind {
            SMC_NLA_SYS_VER => Some(&mut info.ver),
            SMC_NLA_SYS_REL => Some(&mut info.rel),
            SMC_NLA_SYS_IS_ISM_V2 => Some(&mut info.ism_v2),
            SMC_NLA_SYS_IS_SMCR_V2 => Some(&mut info.smcr_v2),
            _ => None,
        };
        if let Some(slot) = u8_slot {
            let Some(&b) = a.payload.first() else {
                return Reply::BadNest;
            };
            *slot = Some(b);
            continue;
        }
        match a.kind {
            SMC_NLA_SYS_LOCAL_HOST => info.host = Some(c_str(a.payload).to_vec()),
            SMC_NLA_SYS_SEID => info.seid = Some(c_str(a.payload).to_vec()),
            _ => {}
        }
    }
    Reply::Info(info)
}

/// The devices the kernel reported.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Devices {
    /// ISM devices (`SMC_GEN_DEV_SMCD` messages).
    pub ism: u32,
    /// RoCE devices that know RoCE v1 only (RoCE Express).
    pub roce_v1: u32,
    /// Other RoCE devices (`SMC_GEN_DEV_SMCR` messages), taken as able
    /// to do RoCE v2 and so SMC-R v2.
    pub roce_v2: u32,
}

/// Counts the ISM devices in the `GET_DEV_SMCD` dump.
pub fn count_ism(messages: &[Vec<u8>]) -> u32 {
    let n = messages
        .iter()
        .filter_map(|m| GenlMsg::parse(m))
        .filter(|m| find_attr(m.attrs, SMC_GEN_DEV_SMCD).is_some())
        .count();
    u32::try_from(n).unwrap_or(u32::MAX)
}

/// Counts the RoCE devices in the `GET_DEV_SMCR` dump: `(v1 only, v2)`.
pub fn count_roce(messages: &[Vec<u8>]) -> (u32, u32) {
    let (mut v1, mut v2) = (0u32, 0u32);
    for m in messages.iter().filter_map(|m| GenlMsg::parse(m)) {
        let Some(dev) = find_attr(m.attrs, SMC_GEN_DEV_SMCR) else {
            continue;
        };
        let pci_device = find_attr(dev, SMC_NLA_DEV_PCI_DEVICE)
            .and_then(|p| p.get(..2))
            .map(|p| u16::from_ne_bytes([p[0], p[1]]));
        match pci_device {
            Some(id) if ROCE_EXPRESS_V1_IDS.contains(&id) => v1 = v1.saturating_add(1),
            _ => v2 = v2.saturating_add(1),
        }
    }
    (v1, v2)
}

/// The text `handle_gen_info_reply()` prints for one reply.
pub fn format(info: &SysInfo, dev: &Devices) -> String {
    let or_na = |v: String| if v.is_empty() { "n/a".to_string() } else { v };
    let text = |b: &Option<Vec<u8>>| or_na(b.as_deref().map(crate::printable).unwrap_or_default());
    let mut s = String::from("Kernel Capabilities\n");
    let (version, smc_version) = match (info.ver, info.rel) {
        (Some(v), Some(r)) => (format!("{v}.{r}"), v),
        _ => ("n/a".to_string(), 1),
    };
    let _ = writeln!(s, "SMC Version:      {version}");
    let _ = writeln!(s, "SMC Hostname:     {}", text(&info.host));
    let v2 = |yes: bool| if yes { "v1 v2" } else { "v1" };
    let _ = writeln!(s, "SMC-D Features:   {}", v2(smc_version >= 2));
    let _ = writeln!(
        s,
        "SMC-R Features:   {}",
        v2(info.smcr_v2.is_some_and(|b| b != 0))
    );
    s.push('\n');
    s.push_str("Hardware Capabilities\n");
    let _ = writeln!(s, "SEID:             {}", text(&info.seid));
    let ism = if dev.ism == 0 {
        "n/a"
    } else {
        v2(info.ism_v2.is_some_and(|b| b != 0))
    };
    let _ = writeln!(s, "ISM:              {ism}");
    // Upstream's "v1 " keeps its blank when there is no "v2".
    let roce = match (dev.roce_v1, dev.roce_v2) {
        (0, 0) => "n/a",
        (_, 0) => "v1 ",
        _ => "v1 v2",
    };
    let _ = writeln!(s, "RoCE:             {roce}");
    s
}

/// What went wrong counting devices (upstream's words).
fn count_failed(what: &str, e: &DumpError, o: &mut Output<'_>) -> i32 {
    o.err_line(&genl::perror(e));
    o.err_line(&format!("Error: Failed to retrieve {what} device count"));
    EXIT_OBJECT_FAILURE
}

/// `info` with `args` after it; the exit status.
pub fn invoke<T: Transport + ?Sized>(
    flavor: Flavor,
    args: &[Vec<u8>],
    family: &mut Family<'_, T>,
    o: &mut Output<'_>,
) -> i32 {
    if parse_args(args) == Args::Usage {
        o.err(usage(flavor).as_bytes());
        return EXIT_OBJECT_FAILURE;
    }
    let mut warnings: Vec<DumpWarning> = Vec::new();
    let mut devices = Devices::default();

    let smcd = family.dump(SMC_NETLINK_GET_DEV_SMCD, &mut |w| warnings.push(w));
    match &smcd.result {
        Ok(()) => devices.ism = count_ism(&smcd.messages),
        Err(DumpError::Kernel(libc::EOPNOTSUPP)) => {}
        Err(e) => return count_failed("ISM", e, o),
    }
    let smcr = family.dump(SMC_NETLINK_GET_DEV_SMCR, &mut |w| warnings.push(w));
    match &smcr.result {
        Ok(()) => (devices.roce_v1, devices.roce_v2) = count_roce(&smcr.messages),
        Err(DumpError::Kernel(libc::EOPNOTSUPP)) => {}
        Err(e) => return count_failed("RoCE", e, o),
    }

    let sys = family.dump(SMC_NETLINK_GET_SYS_INFO, &mut |w| warnings.push(w));
    for w in warnings {
        o.err_line(&w.to_string());
    }
    for m in &sys.messages {
        match parse_reply(m) {
            Reply::Info(info) => o.out(&format(&info, &devices)),
            Reply::Nothing => {}
            Reply::BadHeader => {
                o.err_line(BAD_HEADER);
                break;
            }
            Reply::BadNest => {
                o.err_line(BAD_NEST);
                break;
            }
        }
    }
    match sys.result {
        Ok(()) => 0,
        Err(DumpError::Kernel(libc::EOPNOTSUPP)) => {
            o.err_line("Error: operation not supported by kernel");
            EXIT_OBJECT_FAILURE
        }
        Err(e) => {
            o.err_line(&genl::perror(&e));
            EXIT_OBJECT_FAILURE
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::genl::attr;

    use crate::smcr::common::args as a;

    fn reply(nest: &[u8]) -> Vec<u8> {
        let mut p = vec![SMC_NETLINK_GET_SYS_INFO, 1, 0, 0];
        p.extend(attr(SMC_GEN_SYS_INFO | 0x8000, nest));
        p
    }

    /// What smc_rs and smc.ko put in the nest.
    fn kernel_nest(ism_v2: u8, host: &[u8]) -> Vec<u8> {
        let mut n = attr(SMC_NLA_SYS_VER, &[2]);
        n.extend(attr(SMC_NLA_SYS_REL, &[1]));
        n.extend(attr(SMC_NLA_SYS_IS_ISM_V2, &[ism_v2]));
        n.extend(attr(SMC_NLA_SYS_IS_SMCR_V2, &[1]));
        n.extend(genl::string_attr(SMC_NLA_SYS_LOCAL_HOST, host));
        n
    }

    #[test]
    fn arguments() {
        assert_eq!(parse_args(&a(&[])), Args::Show);
        assert_eq!(parse_args(&a(&["s"])), Args::Show);
        assert_eq!(parse_args(&a(&["show"])), Args::Show);
        for bad in [
            &["h"][..],
            &["help"],
            &["x"],
            &[""],
            &["show", "x"],
            &["shows"],
        ] {
            assert_eq!(parse_args(&a(bad)), Args::Usage, "{bad:?}");
        }
        assert_eq!(usage(Flavor::Smcd), "Usage: smcd info [show]\n");
    }

    #[test]
    fn smc_rs_reply_without_devices() {
        let host = b"vm1                             ";
        let Reply::Info(info) = parse_reply(&reply(&kernel_nest(0, host))) else {
            panic!("no info");
        };
        assert_eq!(
            format(&info, &Devices::default()),
            "Kernel Capabilities\n\
             SMC Version:      2.1\n\
             SMC Hostname:     vm1                             \n\
             SMC-D Features:   v1 v2\n\
             SMC-R Features:   v1 v2\n\
             \n\
             Hardware Capabilities\n\
             SEID:             n/a\n\
             ISM:              n/a\n\
             RoCE:             n/a\n"
        );
    }

    #[test]
    fn devices_and_seid() {
        let mut nest = kernel_nest(1, b"h");
        nest.extend(genl::string_attr(SMC_NLA_SYS_SEID, b"SEID-1"));
        let Reply::Info(info) = parse_reply(&reply(&nest)) else {
            panic!("no info");
        };
        let dev = Devices {
            ism: 1,
            roce_v1: 1,
            roce_v2: 0,
        };
        let text = format(&info, &dev);
        assert!(text.contains("\nSEID:             SEID-1\n"), "{text}");
        assert!(text.contains("\nISM:              v1 v2\n"), "{text}");
        assert!(text.ends_with("\nRoCE:             v1 \n"), "{text}");
        let dev = Devices {
            ism: 1,
            roce_v1: 0,
            roce_v2: 2,
        };
        let info = SysInfo {
            ism_v2: Some(0),
            ..info
        };
        let text = format(&info, &dev);
        assert!(text.contains("\nISM:              v1\n"), "{text}");
        assert!(text.ends_with("\nRoCE:             v1 v2\n"), "{text}");
    }

    #[test]
    fn missing_attributes() {
        // Version without release, no host, SMC-R v2 off.
        let mut nest = attr(SMC_NLA_SYS_VER, &[2]);
        nest.extend(attr(SMC_NLA_SYS_IS_SMCR_V2, &[0]));
        nest.extend(attr(SMC_NLA_SYS_LOCAL_HOST, b""));
        let Reply::Info(info) = parse_reply(&reply(&nest)) else {
            panic!("no info");
        };
        let text = format(&info, &Devices::default());
        assert!(text.starts_with(
            "Kernel Capabilities\n\
             SMC Version:      n/a\n\
             SMC Hostname:     n/a\n\
             SMC-D Features:   v1\n\
             SMC-R Features:   v1\n"
        ));
        assert_eq!(parse_reply(&reply(&[])), Reply::Info(SysInfo::default()));
    }

    #[test]
    fn bad_replies() {
        assert_eq!(parse_reply(&[1, 1]), Reply::BadHeader);
        assert_eq!(parse_reply(&[1, 1, 0, 0]), Reply::Nothing);
        assert_eq!(
            parse_reply(&reply(&attr(SMC_NLA_SYS_REL, &[]))),
            Reply::BadNest
        );
        // Strings without NUL end where the attribute ends; odd bytes are
        // shown as '?'.
        let Reply::Info(info) = parse_reply(&reply(&attr(SMC_NLA_SYS_LOCAL_HOST, b"a\x1bb")))
        else {
            panic!("no info");
        };
        assert!(format(&info, &Devices::default()).contains("SMC Hostname:     a?b\n"));
    }

    #[test]
    fn device_counts() {
        let dev = |gen: u16, nest: &[u8]| {
            let mut p = vec![5, 1, 0, 0];
            p.extend(attr(gen | 0x8000, nest));
            p
        };
        let ism = vec![
            dev(SMC_GEN_DEV_SMCD, &[]),
            dev(SMC_GEN_DEV_SMCD, &[]),
            vec![5, 1],
        ];
        assert_eq!(count_ism(&ism), 2);
        let roce = vec![
            dev(
                SMC_GEN_DEV_SMCR,
                &attr(SMC_NLA_DEV_PCI_DEVICE, &0x1004u16.to_ne_bytes()),
            ),
            dev(
                SMC_GEN_DEV_SMCR,
                &attr(SMC_NLA_DEV_PCI_DEVICE, &0x1016u16.to_ne_bytes()),
            ),
            dev(SMC_GEN_DEV_SMCR, &[]),
            dev(SMC_GEN_DEV_SMCD, &[]),
        ];
        assert_eq!(count_roce(&roce), (1, 2));
    }
}
