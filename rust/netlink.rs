// SPDX-License-Identifier: GPL-2.0

//! The SMC generic netlink family (`SMC_GEN_NETLINK`, version 1), with
//! upstream's command and attribute numbers, so upstream's tools (and ours)
//! work on smc_rs unchanged: system information, statistics, the UEID
//! table, the system EID (none without ISM devices, as upstream's off
//! s390), and the SMC-R link groups, links and devices ([`smcr`]). Commands
//! are registered in upstream's order.

use crate::stats::{self, tech::{Tech, TechSnapshot}};
use crate::sys::bindings as b;
use crate::sys::errno::{EINVAL, EMSGSIZE, EOPNOTSUPP};
use crate::sys::genl::{
    hostname, AttrPolicy, CommandKind, GenlCommand, GenlDump, GenlFamily, GenlMessage, GenlRequest,
};
use crate::sys::print::smc_dbg;
use crate::ueid::{self, Eid, EID_LEN};
use core::ffi::c_long;
use kernel::prelude::*;

mod pnet;
mod smcd;
mod smcr;

pub(crate) use pnet::PnetNetlink;

/// The SMC generic netlink family.
pub(crate) struct SmcNetlink;

const EID_ATTR: u16 = b::SMC_NLA_EID_TABLE_ENTRY as u16;
/// A UEID attribute: 32 characters and a NUL.
const EID_STRING: &[(u16, AttrPolicy)] = &[(EID_ATTR, AttrPolicy::String(EID_LEN as u16))];

const fn command(
    cmd: u32,
    kind: CommandKind,
    admin: bool,
    attrs: &'static [(u16, AttrPolicy)],
) -> GenlCommand {
    GenlCommand {
        cmd: cmd as u8,
        kind,
        admin,
        attrs,
    }
}

impl GenlFamily for SmcNetlink {
    const NAME: &'static CStr = kernel::c_str!("SMC_GEN_NETLINK");
    const VERSION: u32 = b::SMC_GENL_FAMILY_VERSION;
    const MAX_ATTR: u16 = 1;
    const COMMANDS: &'static [GenlCommand] = &[
        // Readable by everyone, as upstream's.
        command(b::SMC_NETLINK_GET_SYS_INFO, CommandKind::Dump, false, &[]),
        command(b::SMC_NETLINK_GET_LGR_SMCR, CommandKind::Dump, false, &[]),
        command(b::SMC_NETLINK_GET_LINK_SMCR, CommandKind::Dump, false, &[]),
        command(b::SMC_NETLINK_GET_LGR_SMCD, CommandKind::Dump, false, &[]),
        command(b::SMC_NETLINK_GET_DEV_SMCD, CommandKind::Dump, false, &[]),
        command(b::SMC_NETLINK_GET_DEV_SMCR, CommandKind::Dump, false, &[]),
        command(b::SMC_NETLINK_GET_STATS, CommandKind::Dump, false, &[]),
        command(
            b::SMC_NETLINK_GET_FBACK_STATS,
            CommandKind::Dump,
            false,
            &[],
        ),
        command(b::SMC_NETLINK_DUMP_UEID, CommandKind::Dump, false, &[]),
        command(b::SMC_NETLINK_ADD_UEID, CommandKind::Do, true, EID_STRING),
        command(
            b::SMC_NETLINK_REMOVE_UEID,
            CommandKind::Do,
            true,
            EID_STRING,
        ),
        command(b::SMC_NETLINK_FLUSH_UEID, CommandKind::Do, true, &[]),
        // The system EID is an s390 (ISM) notion: readable by everyone,
        // switching it is for administrators and refused here, as
        // upstream's on other architectures.
        command(b::SMC_NETLINK_DUMP_SEID, CommandKind::Dump, false, &[]),
        command(b::SMC_NETLINK_ENABLE_SEID, CommandKind::Do, true, &[]),
        command(b::SMC_NETLINK_DISABLE_SEID, CommandKind::Do, true, &[]),
        command(
            b::SMC_NETLINK_DUMP_HS_LIMITATION,
            CommandKind::Dump,
            false,
            &[],
        ),
        command(
            b::SMC_NETLINK_ENABLE_HS_LIMITATION,
            CommandKind::Do,
            true,
            &[],
        ),
        command(
            b::SMC_NETLINK_DISABLE_HS_LIMITATION,
            CommandKind::Do,
            true,
            &[],
        ),
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
            // Upstream switches the system EID on s390 only.
            b::SMC_NETLINK_ENABLE_SEID | b::SMC_NETLINK_DISABLE_SEID => Err(EOPNOTSUPP.into()),
            _ => Err(EOPNOTSUPP.into()),
        }
    }

    fn dumpit(cmd: u8, dump: &mut GenlDump<'_, Self>) -> Result {
        match u32::from(cmd) {
            b::SMC_NETLINK_DUMP_UEID => dump_ueids(cmd, dump),
            b::SMC_NETLINK_GET_LGR_SMCR => smcr::dump_link_groups(dump, false),
            b::SMC_NETLINK_GET_LINK_SMCR => smcr::dump_link_groups(dump, true),
            b::SMC_NETLINK_GET_DEV_SMCR => smcr::dump_devices(dump),
            b::SMC_NETLINK_GET_LGR_SMCD => smcd::dump_link_groups(dump),
            // Upstream does not list its loopback device: empty.
            b::SMC_NETLINK_GET_DEV_SMCD => Ok(()),
            // The loopback ISM device makes SMC-Dv2 possible, as
            // upstream's with `CONFIG_SMC_LO`: the system EID is shown, all
            // zero off s390, and disabled there (it cannot be enabled).
            b::SMC_NETLINK_DUMP_SEID => once(cmd, dump, |m| {
                m.put_str(b::SMC_NLA_SEID_ENTRY as u16, &[])?;
                m.put_u8(b::SMC_NLA_SEID_ENABLED as u16, 0)
            }),
            b::SMC_NETLINK_GET_SYS_INFO => once(cmd, dump, |m| {
                m.nest(b::SMC_GEN_SYS_INFO as u16, |m| {
                    m.put_u8(b::SMC_NLA_SYS_VER as u16, SMC_V2)?;
                    m.put_u8(b::SMC_NLA_SYS_REL as u16, SMC_RELEASE)?;
                    // SMC-Dv2 through the loopback device, SMC-Rv2.
                    m.put_u8(b::SMC_NLA_SYS_IS_ISM_V2 as u16, 1)?;
                    m.put_u8(b::SMC_NLA_SYS_IS_SMCR_V2 as u16, 1)?;
                    let mut host = [0u8; 33];
                    if let Some(h) = host.get_mut(..32) {
                        h.copy_from_slice(&hostname());
                    }
                    m.put(b::SMC_NLA_SYS_LOCAL_HOST as u16, &host)?;
                    // The system EID, as SMC-Dv2 is possible (all zero
                    // off s390).
                    m.put_str(b::SMC_NLA_SYS_SEID as u16, &[])
                })
            }),
            b::SMC_NETLINK_GET_STATS => {
                let errors = stats::handshake_errors(dump.net());
                let smcr = stats::v2_connections(dump.net(), Tech::Smcr);
                let smcd = stats::v2_connections(dump.net(), Tech::Smcd);
                let tech = (
                    stats::tech::snapshot(dump.net(), Tech::Smcd),
                    stats::tech::snapshot(dump.net(), Tech::Smcr),
                );
                once(cmd, dump, |m| {
                    m.nest(b::SMC_GEN_STATS as u16, |m| {
                        fill_stats(m, errors, (smcd, smcr), &tech)
                    })
                })
            }
            b::SMC_NETLINK_GET_FBACK_STATS => dump_fallbacks(cmd, dump),
            b::SMC_NETLINK_DUMP_HS_LIMITATION => {
                let on = stats::limit_handshakes(dump.net());
                once(cmd, dump, |m| {
                    m.put_u8(b::SMC_NLA_HS_LIMITATION_ENABLED as u16, u8::from(on))
                })
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

/// `SMC_GEN_STATS`: per technology (SMC-D, then SMC-R) the buffer,
/// payload and connection counters, then the handshake errors (client,
/// server), in upstream's attribute order.
fn fill_stats(
    m: &mut GenlMessage<'_>,
    (client_errors, server_errors): (u64, u64),
    (smcd_v2, smcr_v2): ((u64, u64), (u64, u64)),
    (smcd, smcr): &(TechSnapshot, TechSnapshot),
) -> Result {
    m.nest(b::SMC_NLA_STATS_SMCD_TECH as u16, |m| fill_tech(m, smcd_v2, smcd))?;
    m.nest(b::SMC_NLA_STATS_SMCR_TECH as u16, |m| {
        fill_tech(m, smcr_v2, smcr)
    })?;
    m.put_u64(
        b::SMC_NLA_STATS_CLNT_HS_ERR_CNT as u16,
        client_errors,
        b::SMC_NLA_STATS_PAD as u16,
    )?;
    m.put_u64(
        b::SMC_NLA_STATS_SRV_HS_ERR_CNT as u16,
        server_errors,
        b::SMC_NLA_STATS_PAD as u16,
    )
}

/// One technology's counters: buffer events (send buffers, RMBs), payload
/// and buffer size histograms, the v2 connections made as client and as
/// server (smc_rs makes no v1 ones), bytes, buffer usage, calls and the
/// special socket calls (no `sendpage` in 6.12: 0, as upstream's).
fn fill_tech(
    m: &mut GenlMessage<'_>,
    (client_v2, server_v2): (u64, u64),
    t: &TechSnapshot,
) -> Result {
    const RMB: [u32; 7] = [
        b::SMC_NLA_STATS_RMB_REUSE_CNT,
        b::SMC_NLA_STATS_RMB_SIZE_SM_PEER_CNT,
        b::SMC_NLA_STATS_RMB_SIZE_SM_CNT,
        b::SMC_NLA_STATS_RMB_FULL_PEER_CNT,
        b::SMC_NLA_STATS_RMB_FULL_CNT,
        b::SMC_NLA_STATS_RMB_ALLOC_CNT,
        b::SMC_NLA_STATS_RMB_DGRADE_CNT,
    ];
    let pad = b::SMC_NLA_STATS_PAD as u16;
    for (nest, values) in [
        (b::SMC_NLA_STATS_T_TX_RMB_STATS, &t.tx_buf),
        (b::SMC_NLA_STATS_T_RX_RMB_STATS, &t.rx_buf),
    ] {
        m.nest(nest as u16, |m| {
            RMB.iter()
                .zip(values)
                .try_for_each(|(a, v)| m.put_u64(*a as u16, *v, b::SMC_NLA_STATS_RMB_PAD as u16))
        })?;
    }
    for (nest, values) in [
        (b::SMC_NLA_STATS_T_TXPLOAD_SIZE, &t.tx_payload),
        (b::SMC_NLA_STATS_T_RXPLOAD_SIZE, &t.rx_payload),
        (b::SMC_NLA_STATS_T_TX_RMB_SIZE, &t.tx_bufsize),
        (b::SMC_NLA_STATS_T_RX_RMB_SIZE, &t.rx_bufsize),
    ] {
        m.nest(nest as u16, |m| {
            (b::SMC_NLA_STATS_PLOAD_8K..=b::SMC_NLA_STATS_PLOAD_G_1024K)
                .zip(values)
                .try_for_each(|(a, v)| m.put_u64(a as u16, *v, b::SMC_NLA_STATS_PLOAD_PAD as u16))
        })?;
    }
    [
        (b::SMC_NLA_STATS_T_CLNT_V1_SUCC, 0),
        (b::SMC_NLA_STATS_T_CLNT_V2_SUCC, client_v2),
        (b::SMC_NLA_STATS_T_SRV_V1_SUCC, 0),
        (b::SMC_NLA_STATS_T_SRV_V2_SUCC, server_v2),
        (b::SMC_NLA_STATS_T_RX_BYTES, t.rx_bytes),
        (b::SMC_NLA_STATS_T_TX_BYTES, t.tx_bytes),
    ]
    .iter()
    .try_for_each(|(a, v)| m.put_u64(*a as u16, *v, pad))?;
    m.put_uint(b::SMC_NLA_STATS_T_RX_RMB_USAGE as u16, t.rx_buf_use)?;
    m.put_uint(b::SMC_NLA_STATS_T_TX_RMB_USAGE as u16, t.tx_buf_use)?;
    [
        (b::SMC_NLA_STATS_T_RX_CNT, t.rx_calls),
        (b::SMC_NLA_STATS_T_TX_CNT, t.tx_calls),
        (b::SMC_NLA_STATS_T_SENDPAGE_CNT, 0),
        (b::SMC_NLA_STATS_T_CORK_CNT, t.cork),
        (b::SMC_NLA_STATS_T_NDLY_CNT, t.nodelay),
        (b::SMC_NLA_STATS_T_SPLICE_CNT, 0),
        (b::SMC_NLA_STATS_T_URG_DATA_CNT, t.urgent),
    ]
    .iter()
    .try_for_each(|(a, v)| m.put_u64(*a as u16, *v, pad))
}

/// `SMC_NETLINK_GET_FBACK_STATS`: for each reason slot, the server's then
/// the client's reason and count, one message each; the first message also
/// carries both totals. The cursor is upstream's: slot, "server slot done",
/// "totals sent".
fn dump_fallbacks(cmd: u8, dump: &mut GenlDump<'_, SmcNetlink>) -> Result {
    let Some(f) = stats::fallbacks(dump.net()) else {
        return Ok(());
    };
    let start = usize::try_from(dump.cursor()[0]).unwrap_or(0);
    let mut skip_server = dump.cursor()[1] != 0;
    let (mut server_rc, mut k) = (Ok(()), start);
    while k < stats::FALLBACK_REASONS {
        if !skip_server {
            server_rc = fallback_message(cmd, dump, &f, k, true);
            if matches!(server_rc, Err(Some(_))) {
                break;
            }
        } else {
            skip_server = false;
        }
        let client_rc = fallback_message(cmd, dump, &f, k, false);
        if matches!(client_rc, Err(Some(_))) {
            skip_server = true;
            break;
        }
        if client_rc == Err(None) && server_rc == Err(None) {
            break;
        }
        k += 1;
    }
    dump.cursor()[1] = c_long::from(skip_server);
    dump.cursor()[0] = k as c_long;
    Ok(())
}

/// One reason of one side; `Err(None)` when the slot is empty,
/// `Err(Some(e))` when the message does not fit.
fn fallback_message(
    cmd: u8,
    dump: &mut GenlDump<'_, SmcNetlink>,
    f: &stats::FallbackReasons,
    slot: usize,
    server: bool,
) -> core::result::Result<(), Option<Error>> {
    let side = if server { &f.server } else { &f.client };
    let Some(&(code, count)) = side.entries.get(slot).filter(|e| e.0 != 0) else {
        return Err(None);
    };
    let totals_sent = dump.cursor()[2] != 0;
    let pad = b::SMC_NLA_FBACK_STATS_PAD as u16;
    dump.message(cmd, |m| {
        m.nest(b::SMC_GEN_FBACK_STATS as u16, |m| {
            m.put_u8(b::SMC_NLA_FBACK_STATS_TYPE as u16, u8::from(server))?;
            if !totals_sent {
                m.put_u64(b::SMC_NLA_FBACK_STATS_SRV_CNT as u16, f.server.total, pad)?;
                m.put_u64(b::SMC_NLA_FBACK_STATS_CLNT_CNT as u16, f.client.total, pad)?;
            }
            m.put_u32(b::SMC_NLA_FBACK_STATS_RSN_CODE as u16, code)?;
            m.put_u16(b::SMC_NLA_FBACK_STATS_RSN_CNT as u16, count)
        })
    })
    .map_err(Some)?;
    dump.cursor()[2] = 1;
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
