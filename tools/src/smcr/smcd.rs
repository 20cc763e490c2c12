// SPDX-License-Identifier: GPL-2.0

//! `smcd device` and `smcd linkgroup`: the ISM devices SMC-D may use
//! (`SMC_NETLINK_GET_DEV_SMCD`) and the SMC-D link groups
//! (`SMC_NETLINK_GET_LGR_SMCD`), as upstream `dev.c` and `linkgroup.c`
//! print them when built as `smcd`. As there, the header comes with the
//! first message of the dump: a kernel without ISM devices (every x86
//! machine, smc_rs and upstream smc.ko alike) answers with an empty dump
//! and the programs print nothing at all. Decoding and the text are pure
//! functions; the two `invoke_*` run the dumps.

use super::common::{Flavor, Output, EXIT_OBJECT_FAILURE, SMC_NETLINK_GET_DEV_SMCD};
use super::device::{
    self, dev_type, hash_x, print_dump, trim_space, truncated, u16_of, u32_of, u8_of, BAD_HEADER,
    BAD_PORT, SMC_GEN_DEV_SMCD, SMC_GEN_DEV_SMCR, SMC_NLA_DEV_IS_CRIT, SMC_NLA_DEV_PCI_CHID,
    SMC_NLA_DEV_PCI_DEVICE, SMC_NLA_DEV_PCI_FID, SMC_NLA_DEV_PCI_ID, SMC_NLA_DEV_PCI_VENDOR,
    SMC_NLA_DEV_PORT, SMC_NLA_DEV_PORT_PNETID, SMC_NLA_DEV_PORT_PNET_USR, SMC_NLA_DEV_USE_CNT,
};
use super::linkgroup::{self, Args, SMC_GEN_LGR_SMCD, SMC_GEN_LGR_SMCR, SMC_GEN_LINK_SMCR};
use crate::genl::{self, c_str, Family, GenlMsg};
use crate::netlink::{attrs, Transport};

/// `SMC_NETLINK_GET_LGR_SMCD` (dump).
pub const SMC_NETLINK_GET_LGR_SMCD: u8 = 4;
/// `SMC_NLA_LGR_D_*` of `SMC_GEN_LGR_SMCD`.
pub const SMC_NLA_LGR_D_ID: u16 = 1;
pub const SMC_NLA_LGR_D_VLAN_ID: u16 = 4;
pub const SMC_NLA_LGR_D_CONNS_NUM: u16 = 5;
pub const SMC_NLA_LGR_D_PNETID: u16 = 6;

/// What upstream prints for an ISM device nest it cannot parse.
pub const BAD_DEV: &str = "Error: Failed to parse nested attributes: smc_gen_dev_smcd_sock_policy";
/// What upstream prints for an SMC-D link group nest it cannot parse.
pub const BAD_LGR: &str = "Error: Failed to parse nested attributes: smc_gen_lgr_smcd_sock_policy";

/// The device header (`print_devs_smcd_header()`).
pub const DEVICE_HEADER: &str = "FID  Type  PCI-ID        PCHID  InUse  #LGs  PNET-ID  \n";
/// The link group header (`print_lgr_smcd_header()`).
pub const LINKGROUP_HEADER: &str = "LG-ID    VLAN  #Conns  PNET-ID \n";

/// An ISM device as the dump describes it.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct IsmDevice {
    pub use_cnt: u32,
    pub critical: bool,
    pub pci_fid: u32,
    pub pci_chid: u16,
    pub pci_device: u16,
    pub pci_id: Vec<u8>,
    pub pnetid: Vec<u8>,
    pub pnet_by_user: bool,
}

/// One message of the `GET_DEV_SMCD` dump.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum DeviceReply {
    /// An ISM device.
    Device(IsmDevice),
    /// Only an SMC-R device nest: nothing to show, the next message.
    Other,
    /// No device nest: upstream stops reading.
    Stop,
    /// Upstream's error message, then it stops.
    Error(&'static str),
}

/// Decodes one message of the `GET_DEV_SMCD` dump
/// (`handle_gen_dev_reply()`, `fill_dev_smcd_struct()`).
pub fn parse_device(payload: &[u8]) -> DeviceReply {
    let Some(msg) = GenlMsg::parse(payload) else {
        return DeviceReply::Error(BAD_HEADER);
    };
    let Some(nest) = genl::find_attr(msg.attrs, SMC_GEN_DEV_SMCD) else {
        return match genl::find_attr(msg.attrs, SMC_GEN_DEV_SMCR) {
            Some(_) => DeviceReply::Other,
            None => DeviceReply::Stop,
        };
    };
    let mut d = IsmDevice::default();
    let mut port = None;
    for a in attrs(nest) {
        let ok = match a.kind {
            SMC_NLA_DEV_USE_CNT => u32_of(a.payload).map(|v| d.use_cnt = v),
            SMC_NLA_DEV_IS_CRIT => u8_of(a.payload).map(|v| d.critical = v != 0),
            SMC_NLA_DEV_PCI_FID => u32_of(a.payload).map(|v| d.pci_fid = v),
            SMC_NLA_DEV_PCI_CHID => u16_of(a.payload).map(|v| d.pci_chid = v),
            SMC_NLA_DEV_PCI_VENDOR => u16_of(a.payload).map(|_| ()),
            SMC_NLA_DEV_PCI_DEVICE => u16_of(a.payload).map(|v| d.pci_device = v),
            SMC_NLA_DEV_PCI_ID => {
                d.pci_id = c_str(a.payload).to_vec();
                Some(())
            }
            SMC_NLA_DEV_PORT => {
                port = Some(a.payload);
                Some(())
            }
            _ => Some(()),
        };
        if ok.is_none() {
            return DeviceReply::Error(BAD_DEV);
        }
    }
    // Upstream reads the port nest unconditionally; a device without one
    // has no PNET ID here.
    for a in attrs(port.unwrap_or_default()) {
        match a.kind {
            SMC_NLA_DEV_PORT_PNET_USR => match u8_of(a.payload) {
                Some(v) => d.pnet_by_user = v != 0,
                None => return DeviceReply::Error(BAD_PORT),
            },
            SMC_NLA_DEV_PORT_PNETID => d.pnetid = c_str(a.payload).to_vec(),
            _ => {}
        }
    }
    DeviceReply::Device(d)
}

/// The line of one ISM device (`show_dev_smcd_info()`).
pub fn device_line(d: &IsmDevice) -> String {
    let mut pnet = Vec::new();
    if d.pnet_by_user {
        pnet.push(b'*');
    }
    pnet.extend_from_slice(&d.pnetid);
    format!(
        "{:04x} {:<4}  {:<12}  {:04x}   {:<4}  {:5}  {:<16} \n",
        d.pci_fid,
        dev_type(d.pci_device),
        crate::printable(&d.pci_id),
        d.pci_chid,
        if d.critical { "Yes" } else { "No" },
        d.use_cnt,
        trim_space(&truncated(&pnet, 16)),
    )
}

/// An SMC-D link group as the dump describes it.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct IsmLgr {
    pub id: u32,
    pub vlan: u8,
    pub conns: u32,
    pub pnetid: Vec<u8>,
}

/// One message of the `GET_LGR_SMCD` dump.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum LgrReply {
    /// An SMC-D link group.
    Lgr(IsmLgr),
    /// Only SMC-R nests: nothing to show, the next message.
    Other,
    /// No link group or link nest: upstream stops reading.
    Stop,
    /// Upstream's error message, then it stops.
    Error(&'static str),
}

/// Decodes one message of the `GET_LGR_SMCD` dump
/// (`handle_gen_lgr_reply()`, `fill_lgr_smcd_struct()`).
pub fn parse_lgr(payload: &[u8]) -> LgrReply {
    let Some(msg) = GenlMsg::parse(payload) else {
        return LgrReply::Error(linkgroup::BAD_HEADER);
    };
    let Some(nest) = genl::find_attr(msg.attrs, SMC_GEN_LGR_SMCD) else {
        let smcr = genl::find_attr(msg.attrs, SMC_GEN_LGR_SMCR)
            .or_else(|| genl::find_attr(msg.attrs, SMC_GEN_LINK_SMCR));
        return match smcr {
            Some(_) => LgrReply::Other,
            None => LgrReply::Stop,
        };
    };
    let mut l = IsmLgr::default();
    for a in attrs(nest) {
        let ok = match a.kind {
            SMC_NLA_LGR_D_ID => u32_of(a.payload).map(|v| l.id = v),
            SMC_NLA_LGR_D_VLAN_ID => u8_of(a.payload).map(|v| l.vlan = v),
            SMC_NLA_LGR_D_CONNS_NUM => u32_of(a.payload).map(|v| l.conns = v),
            // A NUL-terminated string of at most 16 characters.
            SMC_NLA_LGR_D_PNETID => (a.payload.len() <= 17).then(|| {
                l.pnetid = c_str(a.payload).to_vec();
            }),
            _ => Some(()),
        };
        if ok.is_none() {
            return LgrReply::Error(BAD_LGR);
        }
    }
    LgrReply::Lgr(l)
}

/// The line of one SMC-D link group (`show_lgr_smcd_info()`), or nothing
/// when the LG-ID given on the command line is another (upstream compares
/// the whole id, not masked as for SMC-R).
pub fn lgr_line(a: &Args, l: &IsmLgr) -> String {
    if a.lgid != 0 && a.lgid != l.id {
        return String::new();
    }
    format!(
        "{:08x} {:>4}  {:6}  {:<16} \n",
        l.id,
        hash_x(u32::from(l.vlan)),
        l.conns,
        trim_space(&l.pnetid)
    )
}

/// `smcd device` with `args` after it (read as `smcr device` reads them);
/// the exit status.
pub fn devices<T: Transport + ?Sized>(
    args: &[Vec<u8>],
    family: &mut Family<'_, T>,
    o: &mut Output<'_>,
) -> i32 {
    if device::parse_args(Flavor::Smcd, args).is_none() {
        o.err(device::usage(Flavor::Smcd).as_bytes());
        return EXIT_OBJECT_FAILURE;
    }
    invoke_devices(family, o)
}

/// `smcd linkgroup` with `args` after it; the exit status.
pub fn linkgroups<T: Transport + ?Sized>(
    args: &[Vec<u8>],
    family: &mut Family<'_, T>,
    o: &mut Output<'_>,
) -> i32 {
    let Some(a) = linkgroup::parse_args(Flavor::Smcd, args) else {
        o.err(linkgroup::usage(Flavor::Smcd).as_bytes());
        return EXIT_OBJECT_FAILURE;
    };
    invoke_linkgroups(&a, family, o)
}

/// `smcd device` (its arguments read already: it has no filters); the
/// exit status.
pub fn invoke_devices<T: Transport + ?Sized>(
    family: &mut Family<'_, T>,
    o: &mut Output<'_>,
) -> i32 {
    print_dump(
        family,
        SMC_NETLINK_GET_DEV_SMCD,
        DEVICE_HEADER,
        o,
        |m, o| match parse_device(m) {
            DeviceReply::Device(d) => {
                o.out(&device_line(&d));
                true
            }
            DeviceReply::Other => true,
            DeviceReply::Stop => false,
            DeviceReply::Error(text) => {
                o.err_line(text);
                false
            }
        },
    )
}

/// `smcd linkgroup` with its arguments; the exit status.
pub fn invoke_linkgroups<T: Transport + ?Sized>(
    a: &Args,
    family: &mut Family<'_, T>,
    o: &mut Output<'_>,
) -> i32 {
    print_dump(
        family,
        SMC_NETLINK_GET_LGR_SMCD,
        LINKGROUP_HEADER,
        o,
        |m, o| match parse_lgr(m) {
            LgrReply::Lgr(l) => {
                o.out(&lgr_line(a, &l));
                true
            }
            LgrReply::Other => true,
            LgrReply::Stop => false,
            LgrReply::Error(text) => {
                o.err_line(text);
                false
            }
        },
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::genl::{attr, string_attr};

    fn message(cmd: u8, nest: u16, body: &[u8]) -> Vec<u8> {
        let mut p = vec![cmd, 1, 0, 0];
        p.extend(attr(nest | 0x8000, body));
        p
    }

    #[test]
    fn ism_device_as_upstream() {
        let mut port = attr(SMC_NLA_DEV_PORT_PNET_USR, &[1]);
        port.extend(string_attr(SMC_NLA_DEV_PORT_PNETID, b"NETA            "));
        let mut n = attr(SMC_NLA_DEV_USE_CNT, &2u32.to_ne_bytes());
        n.extend(attr(SMC_NLA_DEV_IS_CRIT, &[1]));
        n.extend(attr(SMC_NLA_DEV_PCI_FID, &0x1234u32.to_ne_bytes()));
        n.extend(attr(SMC_NLA_DEV_PCI_CHID, &0x7c0u16.to_ne_bytes()));
        n.extend(attr(SMC_NLA_DEV_PCI_VENDOR, &0x1014u16.to_ne_bytes()));
        n.extend(attr(SMC_NLA_DEV_PCI_DEVICE, &0x04edu16.to_ne_bytes()));
        n.extend(string_attr(SMC_NLA_DEV_PCI_ID, b"0000:00:00.0"));
        n.extend(attr(SMC_NLA_DEV_PORT | 0x8000, &port));
        let DeviceReply::Device(d) = parse_device(&message(5, SMC_GEN_DEV_SMCD, &n)) else {
            panic!("a device");
        };
        assert_eq!(
            device_line(&d),
            "1234 ISM   0000:00:00.0  07c0   Yes       2  *NETA            \n"
        );
        assert_eq!(
            parse_device(&message(6, SMC_GEN_DEV_SMCR, &[])),
            DeviceReply::Other
        );
        assert_eq!(parse_device(&[5, 1, 0, 0]), DeviceReply::Stop);
        assert_eq!(parse_device(&[5]), DeviceReply::Error(BAD_HEADER));
        let short = attr(SMC_NLA_DEV_USE_CNT, &[1]);
        assert_eq!(
            parse_device(&message(5, SMC_GEN_DEV_SMCD, &short)),
            DeviceReply::Error(BAD_DEV)
        );
    }

    #[test]
    fn ism_link_group_as_upstream() {
        let mut n = attr(SMC_NLA_LGR_D_ID, &0x1100u32.to_ne_bytes());
        n.extend(attr(2, &7u64.to_ne_bytes()));
        n.extend(attr(SMC_NLA_LGR_D_VLAN_ID, &[5]));
        n.extend(attr(SMC_NLA_LGR_D_CONNS_NUM, &3u32.to_ne_bytes()));
        n.extend(string_attr(SMC_NLA_LGR_D_PNETID, b"NETA            "));
        let LgrReply::Lgr(l) = parse_lgr(&message(4, SMC_GEN_LGR_SMCD, &n)) else {
            panic!("a link group");
        };
        let all = Args::default();
        assert_eq!(
            lgr_line(&all, &l),
            "00001100  0x5       3  NETA             \n"
        );
        let zero = IsmLgr::default();
        assert_eq!(
            lgr_line(&all, &zero),
            "00000000    0       0                   \n"
        );
        let other = Args {
            lgid: 0x1101,
            ..Args::default()
        };
        assert_eq!(lgr_line(&other, &l), "");
        assert_eq!(
            parse_lgr(&message(2, SMC_GEN_LGR_SMCR, &[])),
            LgrReply::Other
        );
        assert_eq!(parse_lgr(&[4, 1, 0, 0]), LgrReply::Stop);
        let long = string_attr(SMC_NLA_LGR_D_PNETID, &[b'A'; 17]);
        assert_eq!(
            parse_lgr(&message(4, SMC_GEN_LGR_SMCD, &long)),
            LgrReply::Error(BAD_LGR)
        );
    }
}
