// SPDX-License-Identifier: GPL-2.0

//! The SMC-R listings of the SMC generic netlink family: link groups
//! (`SMC_NETLINK_GET_LGR_SMCR`), link groups with their links
//! (`SMC_NETLINK_GET_LINK_SMCR`) and RDMA devices
//! (`SMC_NETLINK_GET_DEV_SMCR`), with upstream's attributes and values.
//! The cursor's first word is the index of the next link group or device,
//! as upstream's `pos[0]`. Generic over the family that carries them (the
//! SMC family, see [`netlink`](super)).

use crate::ib::info::{devices, DeviceInfo};
use crate::smcr::info::{gid_text, LGR_SMC_VERSION};
use crate::smcr::lgr::LinkGroup;
use crate::smcr::link::{Link, LinkState};
use crate::wire::lgr_links::LgrType;
use crate::sys::bindings as b;
use crate::sys::genl::{GenlDump, GenlFamily, GenlMessage};
use core::ffi::c_long;
use kernel::prelude::*;
use kernel::sync::Arc;

/// The live link groups of this host (none before SMC-R started).
fn link_groups() -> Result<KVec<Arc<LinkGroup>>> {
    match crate::smcr::registry::registry() {
        Some(reg) => reg.link_groups(),
        None => Ok(KVec::new()),
    }
}

/// Where the dump goes on: the cursor's first word.
fn position<F: GenlFamily>(dump: &mut GenlDump<'_, F>) -> usize {
    usize::try_from(dump.cursor()[0]).unwrap_or(0)
}

/// `SMC_NETLINK_GET_LGR_SMCR` (`links` false) and
/// `SMC_NETLINK_GET_LINK_SMCR` (`links` true: each link group's message is
/// followed by one per link, the group going whole into one reply).
pub(super) fn dump_link_groups<F: GenlFamily>(dump: &mut GenlDump<'_, F>, links: bool) -> Result {
    let lgrs = link_groups()?;
    let cookie = dump.net().cookie();
    let start = position(dump);
    for (i, lgr) in lgrs.iter().enumerate().skip(start) {
        let r = dump.group(|d| {
            d.message(b::SMC_NETLINK_GET_LGR_SMCR as u8, |m| {
                m.nest(b::SMC_GEN_LGR_SMCR as u16, |m| fill_lgr(m, lgr, cookie))
            })?;
            if links {
                for link in lgr.links().iter().flatten() {
                    if link.state() != LinkState::Active {
                        continue;
                    }
                    d.message(b::SMC_NETLINK_GET_LINK_SMCR as u8, |m| {
                        m.nest(b::SMC_GEN_LINK_SMCR as u16, |m| fill_link(m, lgr, link))
                    })?;
                }
            }
            Ok(())
        });
        if let Err(e) = r {
            dump.cursor()[0] = i as c_long;
            return Err(e);
        }
    }
    dump.cursor()[0] = lgrs.len().max(start) as c_long;
    Ok(())
}

/// The attributes of `SMC_GEN_LGR_SMCR`, in upstream's order.
fn fill_lgr(m: &mut GenlMessage<'_>, lgr: &LinkGroup, cookie: u64) -> Result {
    let about = lgr.about();
    let (sndbufs, rmbs) = lgr.allocated_bytes();
    m.put_u32(b::SMC_NLA_LGR_R_ID as u16, lgr.id_word())?;
    m.put_u32(b::SMC_NLA_LGR_R_CONNS_NUM as u16, lgr.conn_count() as u32)?;
    m.put_u8(b::SMC_NLA_LGR_R_ROLE as u16, lgr.link().role_number())?;
    m.put_u8(b::SMC_NLA_LGR_R_TYPE as u16, lgr.kind() as u8)?;
    // Physically contiguous buffers (`SMCR_PHYS_CONT_BUFS`).
    m.put_u8(b::SMC_NLA_LGR_R_BUF_TYPE as u16, 0)?;
    m.put_u8(b::SMC_NLA_LGR_R_VLAN_ID as u16, 0)?;
    m.put_u64(
        b::SMC_NLA_LGR_R_NET_COOKIE as u16,
        cookie,
        b::SMC_NLA_LGR_R_PAD as u16,
    )?;
    // The group's PNETID: its link's port's (empty without one).
    let pnetid = lgr.link().dev.pnetid();
    m.put_str(
        b::SMC_NLA_LGR_R_PNETID as u16,
        pnetid.as_ref().map_or(&[][..], |p| &p.raw()[..]),
    )?;
    m.put_uint(b::SMC_NLA_LGR_R_SNDBUF_ALLOC as u16, sndbufs)?;
    m.put_uint(b::SMC_NLA_LGR_R_RMB_ALLOC as u16, rmbs)?;
    m.nest(b::SMC_NLA_LGR_R_V2_COMMON as u16, |m| about.fill_v2_common(m, LGR_SMC_VERSION))?;
    m.nest(b::SMC_NLA_LGR_R_V2 as u16, |m| {
        m.put_u8(
            b::SMC_NLA_LGR_R_V2_DIRECT as u16,
            u8::from(!lgr.link().dev.uses_gateway),
        )?;
        m.put_u8(b::SMC_NLA_LGR_R_V2_MAX_CONNS as u16, about.max_conns)?;
        m.put_u8(b::SMC_NLA_LGR_R_V2_MAX_LINKS as u16, about.max_links)
    })
}

/// The attributes of `SMC_GEN_LINK_SMCR`, in upstream's order.
fn fill_link(m: &mut GenlMessage<'_>, lgr: &LinkGroup, link: &Link) -> Result {
    let ifindex = link
        .dev
        .device
        .ib()
        .gid(link.dev.port, link.dev.gid_index)
        .map_or(0, |g| u32::try_from(g.ifindex).unwrap_or(0));
    let (uid, peer_uid) = link.uids();
    m.put_u8(b::SMC_NLA_LINK_ID as u16, link.link_id())?;
    m.put_u32(b::SMC_NLA_LINK_STATE as u16, link.link_state_number())?;
    m.put_u32(b::SMC_NLA_LINK_CONN_CNT as u16, lgr.conn_count_on(link) as u32)?;
    m.put_u8(b::SMC_NLA_LINK_IB_PORT as u16, link.dev.port as u8)?;
    m.put_u32(b::SMC_NLA_LINK_NET_DEV as u16, ifindex)?;
    m.put_str(b::SMC_NLA_LINK_IB_DEV as u16, &link.ibname())?;
    m.put_u32(b::SMC_NLA_LINK_UID as u16, uid)?;
    m.put_u32(b::SMC_NLA_LINK_PEER_UID as u16, peer_uid)?;
    m.put_str(b::SMC_NLA_LINK_GID as u16, &gid_text(&link.dev.gid))?;
    m.put_str(b::SMC_NLA_LINK_PEER_GID as u16, &gid_text(&link.peer().gid))
}

/// `SMC_NETLINK_GET_DEV_SMCR`: one message per RDMA device.
pub(super) fn dump_devices<F: GenlFamily>(dump: &mut GenlDump<'_, F>) -> Result {
    let devs = devices()?;
    let lgrs = link_groups()?;
    let start = position(dump);
    for (i, dev) in devs.iter().enumerate().skip(start) {
        let r = dump.message(b::SMC_NETLINK_GET_DEV_SMCR as u8, |m| {
            m.nest(b::SMC_GEN_DEV_SMCR as u16, |m| fill_device(m, dev, &lgrs))
        });
        if let Err(e) = r {
            dump.cursor()[0] = i as c_long;
            return Err(e);
        }
    }
    dump.cursor()[0] = devs.len().max(start) as c_long;
    Ok(())
}

/// Upstream's `SMC_MAX_PORTS`: port attributes `SMC_NLA_DEV_PORT` and
/// `SMC_NLA_DEV_PORT2`.
const MAX_PORTS: u32 = 2;

/// The attributes of `SMC_GEN_DEV_SMCR`, in upstream's order. A device
/// without a PCI parent (rxe) has no PCI attributes, as upstream's.
fn fill_device(m: &mut GenlMessage<'_>, dev: &DeviceInfo, lgrs: &[Arc<LinkGroup>]) -> Result {
    let on_dev = |l: &Link| {
        core::ptr::eq(&*l.dev.device, &*dev.device) && l.state() == LinkState::Active
    };
    // A link group without another link on a device of this side would
    // lose its connections with it (upstream: a link here in a group of
    // type SINGLE or ASYMMETRIC_LOCAL).
    let critical = lgrs.iter().any(|l| {
        matches!(l.kind(), LgrType::Single | LgrType::AsymmetricLocal)
            && l.links().iter().flatten().any(|k| on_dev(k))
    });
    m.put_u8(b::SMC_NLA_DEV_IS_CRIT as u16, u8::from(critical))?;
    m.put_str(b::SMC_NLA_DEV_IB_NAME as u16, &dev.name)?;
    for p in dev
        .ports
        .iter()
        .filter(|p| (1..=MAX_PORTS).contains(&p.number))
    {
        let links: usize = lgrs
            .iter()
            .map(|l| {
                l.links()
                    .iter()
                    .flatten()
                    .filter(|k| on_dev(k) && k.dev.port == p.number)
                    .count()
            })
            .sum();
        let attr = b::SMC_NLA_DEV_PORT + p.number - 1;
        m.nest(attr as u16, |m| {
            m.put_u8(
                b::SMC_NLA_DEV_PORT_PNET_USR as u16,
                u8::from(p.pnetid_by_user),
            )?;
            m.put_str(b::SMC_NLA_DEV_PORT_PNETID as u16, &p.pnetid)?;
            m.put_u32(b::SMC_NLA_DEV_PORT_NETDEV as u16, p.ifindex)?;
            m.put_u8(b::SMC_NLA_DEV_PORT_VALID as u16, 1)?;
            m.put_u8(b::SMC_NLA_DEV_PORT_STATE as u16, u8::from(p.active))?;
            m.put_u32(b::SMC_NLA_DEV_PORT_LNK_CNT as u16, links as u32)
        })?;
    }
    Ok(())
}
