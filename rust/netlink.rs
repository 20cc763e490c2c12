// SPDX-License-Identifier: GPL-2.0

//! The SMC generic netlink family (`SMC_GEN_NETLINK`, version 1), with
//! upstream's command and attribute numbers, so upstream's tools (and ours)
//! work on smc_rs unchanged. Today: the UEID table.

use crate::sys::bindings as b;
use crate::sys::errno::{EINVAL, EMSGSIZE, EOPNOTSUPP};
use crate::sys::genl::{CommandKind, GenlCommand, GenlDump, GenlFamily, GenlRequest};
use crate::sys::print::smc_dbg;
use crate::ueid::{self, Eid, EID_LEN};
use kernel::prelude::*;

/// The SMC generic netlink family.
pub(crate) struct SmcNetlink;

const EID_ATTR: u16 = b::SMC_NLA_EID_TABLE_ENTRY as u16;
/// A UEID attribute: 32 characters and a NUL.
const EID_STRING: &[(u16, u16)] = &[(EID_ATTR, EID_LEN as u16)];

const fn command(cmd: u32, kind: CommandKind, admin: bool, strings: &'static [(u16, u16)]) -> GenlCommand {
    GenlCommand {
        cmd: cmd as u8,
        kind,
        admin,
        strings,
    }
}

impl GenlFamily for SmcNetlink {
    const NAME: &'static CStr = kernel::c_str!("SMC_GEN_NETLINK");
    const VERSION: u32 = b::SMC_GENL_FAMILY_VERSION;
    const MAX_ATTR: u16 = 1;
    const COMMANDS: &'static [GenlCommand] = &[
        // Readable by everyone, as upstream's.
        command(b::SMC_NETLINK_DUMP_UEID, CommandKind::Dump, false, &[]),
        command(b::SMC_NETLINK_ADD_UEID, CommandKind::Do, true, EID_STRING),
        command(b::SMC_NETLINK_REMOVE_UEID, CommandKind::Do, true, EID_STRING),
        command(b::SMC_NETLINK_FLUSH_UEID, CommandKind::Do, true, &[]),
    ];

    fn doit(cmd: u8, req: &GenlRequest<'_>) -> Result {
        match u32::from(cmd) {
            b::SMC_NETLINK_ADD_UEID => {
                let eid = eid_attr(req)?;
                let r = ueid::add(&eid);
                smc_dbg!("netlink: add UEID: {:?}", r.err());
                r
            }
            b::SMC_NETLINK_REMOVE_UEID => ueid::remove(&eid_attr(req)?),
            b::SMC_NETLINK_FLUSH_UEID => {
                ueid::flush();
                Ok(())
            }
            _ => Err(EOPNOTSUPP.into()),
        }
    }

    fn dumpit(cmd: u8, dump: &mut GenlDump<'_, Self>) -> Result {
        if u32::from(cmd) != b::SMC_NETLINK_DUMP_UEID {
            return Err(EOPNOTSUPP.into());
        }
        let table = ueid::snapshot();
        let start = usize::try_from(dump.cursor()[0]).unwrap_or(0);
        for (i, eid) in table.iter().enumerate().skip(start) {
            let mut text = [0u8; EID_LEN + 1];
            if let Some(t) = text.get_mut(..EID_LEN) {
                t.copy_from_slice(eid);
            }
            match dump.message(cmd, |m| m.put(EID_ATTR, &text)) {
                Ok(()) => dump.cursor()[0] = (i + 1) as _,
                Err(e) if e == EMSGSIZE => return Ok(()),
                Err(e) => return Err(e),
            }
        }
        Ok(())
    }
}

/// The UEID of a request: exactly 32 characters and a NUL, as upstream
/// requires (`EINVAL` otherwise).
fn eid_attr(req: &GenlRequest<'_>) -> Result<Eid> {
    let data = req.attr(EID_ATTR).ok_or(EINVAL)?;
    if data.len() != EID_LEN + 1 {
        return Err(EINVAL.into());
    }
    let mut eid = [0u8; EID_LEN];
    eid.copy_from_slice(data.get(..EID_LEN).ok_or(EINVAL)?);
    Ok(eid)
}
