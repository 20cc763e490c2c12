// SPDX-License-Identifier: GPL-2.0

//! The SMC-D listings of the SMC generic netlink family: link groups over
//! the loopback device (`SMC_NETLINK_GET_LGR_SMCD`), with upstream's
//! attributes and values. Upstream leaves its loopback device out of the
//! device listing (`SMC_NETLINK_GET_DEV_SMCD`), which is therefore empty.

use crate::smcd::lgr::IsmLgr;
use crate::smcd::lo;
use crate::smcr::info::LGR_SMC_VERSION;
use crate::sys::bindings as b;
use crate::sys::genl::{GenlDump, GenlFamily, GenlMessage};
use core::ffi::c_long;
use kernel::prelude::*;
use kernel::sync::Arc;

/// `SMC_NETLINK_GET_LGR_SMCD`: one message per link group of the host
/// (upstream lists every namespace's). The cursor's first word is the
/// index of the next one.
pub(super) fn dump_link_groups<F: GenlFamily>(dump: &mut GenlDump<'_, F>) -> Result {
    let lgrs = match crate::smcd::lgr::registry() {
        Some(reg) => reg.link_groups()?,
        None => KVec::new(),
    };
    let start = usize::try_from(dump.cursor()[0]).unwrap_or(0);
    for (i, lgr) in lgrs.iter().enumerate().skip(start) {
        let r = dump.message(b::SMC_NETLINK_GET_LGR_SMCD as u8, |m| {
            m.nest(b::SMC_GEN_LGR_SMCD as u16, |m| fill_lgr(m, lgr))
        });
        if let Err(e) = r {
            dump.cursor()[0] = i as c_long;
            return Err(e);
        }
    }
    dump.cursor()[0] = lgrs.len().max(start) as c_long;
    Ok(())
}

/// The attributes of `SMC_GEN_LGR_SMCD`, in upstream's order.
fn fill_lgr(m: &mut GenlMessage<'_>, lgr: &Arc<IsmLgr>) -> Result {
    let pad = b::SMC_NLA_LGR_D_PAD as u16;
    let about = *lgr.about.lock();
    let (gid, chid) = lo::device().map_or((Default::default(), 0), |d| (d.gid, d.chid));
    m.put_u32(b::SMC_NLA_LGR_D_ID as u16, lgr.id_word())?;
    m.put_u64(b::SMC_NLA_LGR_D_GID as u16, gid.gid, pad)?;
    m.put_u64(b::SMC_NLA_LGR_D_EXT_GID as u16, gid.gid_ext, pad)?;
    m.put_u64(b::SMC_NLA_LGR_D_PEER_GID as u16, lgr.peer_gid.gid, pad)?;
    m.put_u64(b::SMC_NLA_LGR_D_PEER_EXT_GID as u16, lgr.peer_gid.gid_ext, pad)?;
    m.put_u8(b::SMC_NLA_LGR_D_VLAN_ID as u16, 0)?;
    m.put_u32(b::SMC_NLA_LGR_D_CONNS_NUM as u16, lgr.conn_count() as u32)?;
    m.put_u32(b::SMC_NLA_LGR_D_CHID as u16, u32::from(chid))?;
    // The send buffers are the peers' DMBs: none is allocated.
    m.put_uint(b::SMC_NLA_LGR_D_SNDBUF_ALLOC as u16, 0)?;
    m.put_uint(b::SMC_NLA_LGR_D_DMB_ALLOC as u16, lgr.dmb_bytes())?;
    // The loopback device has no PNETID.
    m.put_str(b::SMC_NLA_LGR_D_PNETID as u16, &[])?;
    m.nest(b::SMC_NLA_LGR_D_V2_COMMON as u16, |m| about.fill_v2_common(m, LGR_SMC_VERSION))
}
