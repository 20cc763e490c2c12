// SPDX-License-Identifier: GPL-2.0

//! The SMC generic netlink family (`SMC_GEN_NETLINK`, version 1), with
//! upstream's command and attribute numbers, so upstream's tools (and ours)
//! work on smc_rs unchanged. Today: the UEID table.

use crate::sys::bindings as b;
use crate::sys::errno::{EINVAL, EMSGSIZE, EOPNOTSUPP};
use crate::stats;
use crate::sys::genl::{hostname, CommandKind, GenlCommand, GenlDump, GenlFamily, GenlMessage, GenlRequest};
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
        command(b::SMC_NETLINK_GET_SYS_INFO, CommandKind::Dump, false, &[]),
        command(b::SMC_NETLINK_DUMP_UEID, CommandKind::Dump, false, &[]),
        command(b::SMC_NETLINK_DUMP_HS_LIMITATION, CommandKind::Dump, false, &[]),
        command(b::SMC_NETLINK_ENABLE_HS_LIMITATION, CommandKind::Do, true, &[]),
        command(b::SMC_NETLINK_DISABLE_HS_LIMITATION, CommandKind::Do, true, &[]),
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
            b::SMC_NETLINK_ENABLE_HS_LIMITATION => {
                stats::set_limit_handshakes(req.net(), true);
                Ok(())
            }
            b::SMC_NETLINK_DISABLE_HS_LIMITATION => {
                stats::set_limit_handshakes(req.net(), false);
                Ok(())
            }
            _ => Err(EOPNOTSUPP.into()),
        }
    }

    fn dumpit(cmd: u8, dump: &mut GenlDump<'_, Self>) -> Result {
        match u32::from(cmd) {
            b::SMC_NETLINK_DUMP_UEID => dump_ueids(cmd, dump),
            b::SMC_NETLINK_GET_SYS_INFO => once(cmd, dump, |m| {
                m.nest(b::SMC_GEN_SYS_INFO as u16, |m| {
                    m.put_u8(b::SMC_NLA_SYS_VER as u16, SMC_V2)?;
                    m.put_u8(b::SMC_NLA_SYS_REL as u16, SMC_RELEASE)?;
                    // No ISM (SMC-D) device can exist here; SMC-Rv2 is spoken.
                    m.put_u8(b::SMC_NLA_SYS_IS_ISM_V2 as u16, 0)?;
                    m.put_u8(b::SMC_NLA_SYS_IS_SMCR_V2 as u16, 1)?;
                    let mut host = [0u8; 33];
                    if let Some(h) = host.get_mut(..32) {
                        h.copy_from_slice(&hostname());
                    }
                    m.put(b::SMC_NLA_SYS_LOCAL_HOST as u16, &host)
                })
            }),
            b::SMC_NETLINK_DUMP_HS_LIMITATION => {
                let on = stats::limit_handshakes(dump.net());
                once(cmd, dump, |m| m.put_u8(b::SMC_NLA_HS_LIMITATION_ENABLED as u16, u8::from(on)))
            }
            _ => Err(EOPNOTSUPP.into()),
        }
    }
}

/// The SMC version and release upstream 6.12 reports.
const SMC_V2: u8 = 2;
const SMC_RELEASE: u8 = 1;

/// A dump of one message: sent on the first call, nothing on the next.
fn once(
    cmd: u8,
    dump: &mut GenlDump<'_, SmcNetlink>,
    fill: impl FnOnce(&mut GenlMessage<'_>) -> Result,
) -> Result {
    if dump.cursor()[0] != 0 {
        return Ok(());
    }
    dump.message(cmd, fill)?;
    dump.cursor()[0] = 1;
    Ok(())
}

/// The UEID table, one message per entry.
fn dump_ueids(cmd: u8, dump: &mut GenlDump<'_, SmcNetlink>) -> Result {
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
