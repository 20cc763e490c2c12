// SPDX-License-Identifier: GPL-2.0

//! The PNET table's generic netlink family (`SMC_PNETID`, version 1), with
//! upstream's commands, attributes, policy and answers, so upstream's
//! `smc_pnet` (and ours) work on smc_rs unchanged: `GET` (a dump, or the
//! entries of one PNETID), `ADD`, `DEL` and `FLUSH` (`CAP_NET_ADMIN`).

use crate::ib::pnet::{self, PnetDevice, PnetEntry, IB_NAME_LEN};
use crate::sys::bindings as b;
use crate::sys::errno::{EINVAL, EMSGSIZE, EOPNOTSUPP};
use crate::sys::genl::{
    AttrPolicy, CommandKind, GenlCommand, GenlDump, GenlFamily, GenlMessage, GenlRequest,
};
use crate::sys::net::IFNAMSIZ;
use kernel::prelude::*;

/// The `SMC_PNETID` generic netlink family.
pub(crate) struct PnetNetlink;

const NAME: u16 = b::SMC_PNETID_NAME as u16;
const ETHNAME: u16 = b::SMC_PNETID_ETHNAME as u16;
const IBNAME: u16 = b::SMC_PNETID_IBNAME as u16;
const IBPORT: u16 = b::SMC_PNETID_IBPORT as u16;

/// Upstream's policy (`smc_pnet_policy`), for every command.
const POLICY: &[(u16, AttrPolicy)] = &[
    (NAME, AttrPolicy::NulString(pnet::PNETID_LEN as u16)),
    (ETHNAME, AttrPolicy::NulString((IFNAMSIZ - 1) as u16)),
    (IBNAME, AttrPolicy::NulString((IB_NAME_LEN - 1) as u16)),
    (IBPORT, AttrPolicy::U8),
];

const fn command(cmd: u32, kind: CommandKind, admin: bool) -> GenlCommand {
    GenlCommand {
        cmd: cmd as u8,
        kind,
        admin,
        attrs: POLICY,
    }
}

impl GenlFamily for PnetNetlink {
    const NAME: &'static CStr = kernel::c_str!("SMC_PNETID");
    const VERSION: u32 = b::SMCR_GENL_FAMILY_VERSION;
    const MAX_ATTR: u16 = b::SMC_PNETID_MAX as u16;
    const LENIENT: bool = true;
    const COMMANDS: &'static [GenlCommand] = &[
        // Readable by everyone, as upstream's.
        command(b::SMC_PNETID_GET, CommandKind::DoAndDump, false),
        command(b::SMC_PNETID_ADD, CommandKind::Do, true),
        command(b::SMC_PNETID_DEL, CommandKind::Do, true),
        command(b::SMC_PNETID_FLUSH, CommandKind::Do, true),
    ];

    fn doit(cmd: u8, req: &GenlRequest<'_>) -> Result {
        match u32::from(cmd) {
            b::SMC_PNETID_GET => {
                let wanted = pnet::raw_pnetid(req.attr(NAME).ok_or(EINVAL)?);
                req.reply_multi(cmd, |r| {
                    pnet::with_entries(req.net(), |entries| {
                        for e in entries.filter(|e| pnet::entry_matches(e, &wanted)) {
                            r.message(|m| put_entry(m, e))?;
                        }
                        Ok(())
                    })
                    .unwrap_or(Ok(()))
                })
            }
            b::SMC_PNETID_ADD => {
                let pnetid = req.attr(NAME).and_then(pnet::valid_pnetid).ok_or(EINVAL)?;
                let eth = req.attr(ETHNAME);
                let ib = req.attr(IBNAME).map(|name| {
                    let port = req
                        .attr(IBPORT)
                        .and_then(|p| p.first().copied())
                        .unwrap_or(1);
                    (name, port)
                });
                pnet::add(req.net(), pnetid, eth, ib)
            }
            b::SMC_PNETID_DEL => {
                let pnetid = pnet::raw_pnetid(req.attr(NAME).ok_or(EINVAL)?);
                pnet::remove(req.net(), Some(&pnetid))
            }
            b::SMC_PNETID_FLUSH => pnet::remove(req.net(), None),
            _ => Err(EOPNOTSUPP.into()),
        }
    }

    fn dumpit(cmd: u8, dump: &mut GenlDump<'_, Self>) -> Result {
        if u32::from(cmd) != b::SMC_PNETID_GET {
            return Err(EOPNOTSUPP.into());
        }
        let start = usize::try_from(dump.cursor()[0]).unwrap_or(0);
        let mut sent = start;
        // The entries are read under RCU: putting messages into the
        // buffer does not sleep.
        let net = dump.net();
        let rc = pnet::with_entries(net, |entries| {
            for e in entries.skip(start) {
                match dump.message(cmd, |m| put_entry(m, e)) {
                    Ok(()) => sent += 1,
                    Err(e) if e == EMSGSIZE => return Ok(()),
                    Err(e) => return Err(e),
                }
            }
            Ok(())
        })
        .unwrap_or(Ok(()));
        dump.cursor()[0] = sent as _;
        rc
    }
}

/// One entry's attributes, as upstream's `smc_pnet_set_nla`: the PNETID,
/// the interface (`n/a` for a port), the RDMA device and port (`n/a` and
/// 255 for an interface).
fn put_entry(m: &mut GenlMessage<'_>, e: &PnetEntry) -> Result {
    m.put_str(NAME, e.pnetid.raw())?;
    match &e.device {
        PnetDevice::Eth(name) => {
            m.put_str(ETHNAME, name)?;
            m.put_str(IBNAME, b"n/a")?;
            m.put_u8(IBPORT, 0xff)
        }
        PnetDevice::Ib { name, port } => {
            m.put_str(ETHNAME, b"n/a")?;
            m.put_str(IBNAME, name)?;
            m.put_u8(IBPORT, *port)
        }
    }
}
