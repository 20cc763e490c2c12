// SPDX-License-Identifier: GPL-2.0

//! Making an SMC-R connection once the CLC Accept arrived (client): find or
//! create the link group, create the connection's buffers, bring the link
//! up, and build the CLC Confirm that tells the server where our RMB is.
//!
//! The server's side: choose or create the link group for a client's
//! proposal, then take its Confirm. Link groups are kept in the registry
//! (see [`registry`](super::registry)).

use super::conn::Conn;
use super::shared::PeerRmb;
use super::connbufs::buffers_under_conf;
use super::ids::{new_lgr_id, next_token};
use super::lgr::{LinkGroup, PENDING_ADD_LINK};
use super::link::{Link, PeerLink, Role};
use super::llc;
use super::registry::LgrRegistry;
use super::setups::Setup;
use crate::ib::{gid_ipv4, SmcrV2Device};
use crate::sys::print::smc_dbg;
use crate::sys::random;
use crate::sys::tcp::TcpSock;
use crate::sysctl::LgrParams;
use crate::wire::bufsize;
use crate::wire::lgr_links::{assign_link, LgrType};
use crate::wire::clc::{
    valid_qp_mtu, DeclineReason, FirstContactExt, GidList, LocalInfo, MsgType, SmcrAcceptConfirm,
    OS_LINUX, SMC_FEATURE_MASK, SMC_RELEASE, SMC_V2,
};
use core::sync::atomic::Ordering;
use kernel::prelude::*;
use kernel::sync::Arc;
use kernel::types::ARef;

/// Decline codes of the connection setup (upstream's numbers).
const DECL_MEM: u32 = 0x0101_0000;
pub(crate) const DECL_NOSRVLINK: u32 = 0x030b_0000;
const DECL_ERR_RDYLNK: u32 = 0x0999_0002;
const DECL_ERR_REGBUF: u32 = 0x0999_0003;

/// What the client answers in its CLC Confirm.
pub(crate) struct ClientConn {
    pub(crate) lgr: Arc<LinkGroup>,
    pub(crate) conn: Arc<Conn>,
    pub(crate) confirm: SmcrAcceptConfirm,
    /// A new link group: after the Confirm, the link is confirmed in LLC.
    pub(crate) first_contact: bool,
    /// On a new link group: announces it until it is in the registry.
    pub(crate) setup: Option<Setup>,
}

/// Sets up the connection the server accepted: link group (new or reused),
/// buffers, queue pair. On error, the reason to decline with.
pub(crate) fn client_accept(
    reg: &LgrRegistry,
    dev: &SmcrV2Device,
    a: &SmcrAcceptConfirm,
    waker: ARef<TcpSock>,
) -> core::result::Result<ClientConn, DeclineReason> {
    let peer_rmb_size = bufsize::uncompress(a.rmbe_size);
    // The peer's MTU goes to the device: only a valid one.
    if a.first_contact && !valid_qp_mtu(a.qp_mtu) {
        smc_dbg!("client: the Accept's qp_mtu {} is no IB MTU", a.qp_mtu);
        return Err(DeclineReason::Other(DECL_ERR_RDYLNK));
    }
    let Some(peer_addr) = a.rmbe_addr() else {
        smc_dbg!("client: the Accept names no RMB element (index {})", a.rmbe_idx);
        return Err(DeclineReason::ConfigError);
    };
    let net = waker.net().cookie();
    let (lgr, setup) = if a.first_contact {
        let setup = reg
            .client_setup(net, a)
            .map_err(|_| DeclineReason::Other(DECL_MEM))?;
        let mut params = LgrParams::of(waker.net());
        params.max_conns = match a.fce {
            Some(f) if f.release >= 1 => crate::sysctl::client_limits(f.max_conns, f.max_links)
                .map_err(DeclineReason::Other)?,
            _ => LgrParams::DEFAULT.max_conns,
        };
        let peer = PeerLink {
            systemid: a.local.peer_id,
            gid: a.local.gid,
            mac: a.local.mac,
            qpn: a.qpn,
            psn: a.psn,
            mtu: a.qp_mtu,
        };
        // Our own id for it (the server's never reaches us).
        let lgr = LinkGroup::new(Role::Client, new_lgr_id(), dev.clone(), peer, params)
            .map_err(|_| DeclineReason::Other(DECL_ERR_RDYLNK))?;
        lgr.record_peer(
            a,
            a.eid,
            a.fce.map_or((0, 0), |f| (f.max_conns, f.max_links)),
        );
        if lgr.link().connect_qp().is_err() {
            lgr.terminate();
            return Err(DeclineReason::Other(DECL_ERR_RDYLNK));
        }
        (lgr, Some(setup))
    } else {
        // None in our namespace: the server's link group is another
        // namespace's. Not a sync error, which would make the server end
        // the link group that namespace's connections use.
        let lgr = reg
            .client_join(net, a)
            .ok_or(DeclineReason::Other(DECL_NOSRVLINK))?;
        (lgr, None)
    };
    let fail = |lgr: &LinkGroup, reason: u32| {
        if a.first_contact {
            lgr.terminate();
        }
        DeclineReason::Other(reason)
    };
    // The server chose the link: the one whose queue pair its Accept
    // names.
    let link = if a.first_contact {
        lgr.link()
    } else {
        lgr.with_links(|s| s.for_peer(a.qpn, &a.local.gid))
            .ok_or(DeclineReason::Other(DECL_NOSRVLINK))?
    };
    // Under `conf` until the connection is in the table: a failover that
    // took the link before leaves us to decline (the server falls back
    // with us), one after moves the connection.
    let Some((rmb, sndbuf, conf)) = buffers_under_conf(&lgr, true, &waker) else {
        return Err(fail(&lgr, DECL_ERR_REGBUF));
    };
    if !lgr.with_links(|s| s.holds(&link)) {
        drop(conf);
        smc_dbg!("smcr: the Accept's link went meanwhile");
        super::rkeys::retire(&lgr, (rmb, sndbuf));
        return Err(DeclineReason::Other(DECL_NOSRVLINK));
    }
    let Ok((row, keys)) = lgr.peer_keys.add(link.idx, a.rmb_rkey, peer_addr) else {
        return Err(unlocked(conf, || fail(&lgr, DECL_MEM)));
    };
    let peer = PeerRmb {
        token: a.rmbe_alert_token,
        size: peer_rmb_size,
        row,
        keys,
    };
    let Some((confirm_rkey, confirm_addr)) = rmb.rkey(link.idx) else {
        return Err(unlocked(conf, || fail(&lgr, DECL_ERR_REGBUF)));
    };
    let conn = match Conn::new(next_token(), link.clone(), Some(peer), rmb, sndbuf, waker) {
        Ok(c) => c,
        Err(_) => {
            return Err(unlocked(conf, || fail(&lgr, DECL_MEM)));
        }
    };
    if lgr.conns.lock().insert(conn.clone()).is_err() {
        return Err(unlocked(conf, || fail(&lgr, DECL_MEM)));
    }
    drop(conf);
    let mut confirm = *a;
    if let Some(fce) = confirm.fce.as_mut() {
        // The server checks that we took its maximums; the name is ours.
        fce.hostname = crate::sys::genl::hostname();
        fce.os_type = crate::wire::clc::OS_LINUX;
    }
    if a.first_contact {
        confirm.gid_list = GidList::new(&[dev.gid]).ok();
    }
    confirm.kind = crate::wire::clc::MsgType::Confirm;
    confirm.local.gid = link.dev.gid;
    confirm.local.mac = link.dev.mac;
    confirm.local.peer_id = crate::ib::local_systemid();
    confirm.qpn = link.qpn();
    confirm.rmb_rkey = confirm_rkey;
    confirm.rmbe_idx = 1;
    confirm.rmbe_alert_token = conn.token;
    confirm.rmbe_size = bufsize::compress(conn.rmb_size());
    confirm.qp_mtu = link.mtu().min(a.qp_mtu);
    confirm.rmb_dma_addr = confirm_addr;
    confirm.psn = link.psn;
    Ok(ClientConn {
        lgr,
        conn,
        confirm,
        first_contact: a.first_contact,
        setup,
    })
}

/// After the Confirm went out on a new link group: the LLC handshake, then
/// the link group joins the registry.
pub(crate) fn client_confirm_link(reg: &LgrRegistry, cc: &ClientConn) -> Result {
    let lgr = &cc.lgr;
    let mut uid = [0u8; 4];
    random::fill(&mut uid);
    let (link_num, peer_uid) = llc::client_confirm_link(&lgr.link(), uid)?;
    lgr.link().record_uids(uid, peer_uid);
    lgr.link().set_active(link_num);
    lgr.set_kind(LgrType::Single);
    smc_dbg!("smcr: link {} of a new link group is up", link_num);
    reg.add(lgr.clone())
}

/// Undoes [`client_accept`] or [`server_accept`] when the handshake fails
/// after it: `conn` leaves `lgr`, which ends if it was new.
///
/// The peer may have the RMB's rkey (our Accept or Confirm carried it) and
/// take the connection for made: on a link group that stays, the buffers
/// stay registered, out of use ([`rkeys::retire`](super::rkeys::retire)).
pub(crate) fn abort_conn(lgr: Arc<LinkGroup>, conn: Arc<Conn>, first_contact: bool) {
    let removed = lgr.conns.lock().remove(conn.token);
    if let Ok(link) = conn.link() {
        link.forget_slot_waiter(conn.token);
    }
    drop(removed);
    if first_contact {
        drop(conn);
        lgr.terminate();
        return;
    }
    if let Some(pair) = conn.take_buffers() {
        super::rkeys::retire(&lgr, pair);
    }
}

/// What the server knows of a client that proposed SMC-Rv2.
pub(crate) struct ClientProposal {
    /// The client's system id (zero in a v2-only proposal).
    pub(crate) systemid: [u8; 8],
    /// GID of the client's RoCE device.
    pub(crate) gid: [u8; 16],
    /// The UEID both sides have.
    pub(crate) eid: [u8; 32],
    /// The client's release and link group limits.
    pub(crate) release: u8,
    pub(crate) max_conns: u8,
    pub(crate) max_links: u8,
    pub(crate) feature_mask: u16,
}

/// The server's side of a connection between its Accept and the client's
/// Confirm.
pub(crate) struct ServerConn {
    pub(crate) lgr: Arc<LinkGroup>,
    pub(crate) conn: Arc<Conn>,
    /// The link the Accept names (the connection may have moved since).
    pub(crate) link: Arc<Link>,
    pub(crate) accept: SmcrAcceptConfirm,
    pub(crate) first_contact: bool,
    /// On a new link group: announces it until it is in the registry.
    pub(crate) setup: Option<Setup>,
}

/// Lets the group's `conf` go, then runs `f` (which may take it).
fn unlocked<G, T>(conf: G, f: impl FnOnce() -> T) -> T {
    drop(conf);
    f()
}

/// Sets up the server's side for a client's SMC-Rv2 proposal: link group
/// (reused for a client we have one with, else new), connection, buffers;
/// returns the Accept to send. On error, the reason to decline with.
/// Another handshake that makes a link group to the same client is waited
/// for a little (see [`setups`](super::setups)), never for its peer.
pub(crate) fn server_accept(
    reg: &LgrRegistry,
    dev: &SmcrV2Device,
    p: &ClientProposal,
    waker: ARef<TcpSock>,
) -> core::result::Result<ServerConn, DeclineReason> {
    let release = p.release.min(SMC_RELEASE);
    // SMC-Rv2.1 limits: the smaller of the client's and ours.
    let (max_conns, max_links) = if release >= 1 {
        crate::sysctl::server_limits(waker.net(), p.max_conns, p.max_links)
            .map_err(DeclineReason::Other)?
    } else {
        (LgrParams::DEFAULT.max_conns, 1)
    };
    // The place taken in an existing link group counts against its limit
    // until the connection is in its table.
    let (joining, setup) = match reg.server_choice(waker.net().cookie(), &p.systemid, &p.gid) {
        Ok(Ok(j)) => (Some(j), None),
        Ok(Err(s)) => (None, Some(s)),
        Err(_) => return Err(DeclineReason::Other(DECL_MEM)),
    };
    let (lgr, first_contact) = match &joining {
        Some(j) => (j.lgr().clone(), false),
        None => {
            let id = new_lgr_id();
            let peer = PeerLink {
                systemid: p.systemid,
                gid: p.gid,
                mac: [0; 6],
                qpn: 0,
                psn: 0,
                mtu: 0,
            };
            let mut params = LgrParams::of(waker.net());
            params.max_conns = max_conns;
            let lgr = LinkGroup::new(Role::Server, id, dev.clone(), peer, params)
                .map_err(|_| DeclineReason::Other(DECL_ERR_RDYLNK))?;
            (lgr, true)
        }
    };
    let fail = |lgr: &LinkGroup, reason: u32| {
        if first_contact {
            lgr.terminate();
        }
        DeclineReason::Other(reason)
    };
    // Under `conf` until the connection is in the table: a failover
    // after it moves the connection (see `server_confirm`).
    let Some((rmb, sndbuf, conf)) = buffers_under_conf(&lgr, !first_contact, &waker) else {
        return Err(fail(&lgr, DECL_ERR_REGBUF));
    };
    // Connections spread over the links, as upstream's server spreads
    // them.
    let link = if first_contact {
        Some(lgr.link())
    } else {
        let n = lgr.conn_count();
        lgr.with_links(|s| {
            assign_link(&s.slots(), true, n, false).and_then(|i| s.all().get(i).cloned().flatten())
        })
    };
    let Some(link) = link else {
        return Err(unlocked(conf, || fail(&lgr, DECL_NOSRVLINK)));
    };
    let Some((rkey, addr)) = rmb.rkey(link.idx) else {
        return Err(unlocked(conf, || fail(&lgr, DECL_ERR_REGBUF)));
    };
    let conn = match Conn::new(next_token(), link.clone(), None, rmb, sndbuf, waker) {
        Ok(c) => c,
        Err(_) => {
            return Err(unlocked(conf, || fail(&lgr, DECL_MEM)));
        }
    };
    // In the table before the Accept goes: the client may write as soon
    // as it has it.
    if lgr.conns.lock().insert(conn.clone()).is_err() {
        return Err(unlocked(conf, || fail(&lgr, DECL_MEM)));
    }
    drop(conf);
    drop(joining);
    // Without another device there will be no second link: a client told
    // so does not wait for one after its first contact (upstream's waits
    // two seconds for an ADD LINK).
    let max_links = if first_contact
        && max_links > 1
        && crate::ib::find_alt_smcr_v2_device(conn.waker.net(), dev, gid_ipv4(&dev.gid), None)
            .is_none()
    {
        1
    } else {
        max_links
    };
    let fce = first_contact.then(|| FirstContactExt {
        v2_direct: !dev.uses_gateway,
        os_type: OS_LINUX,
        release,
        hostname: crate::sys::genl::hostname(),
        max_conns: if release >= 1 { max_conns } else { 0 },
        // One link per link group: the client does not wait for a second.
        max_links: if release >= 1 { max_links } else { 0 },
        feature_mask: if release >= 1 {
            p.feature_mask & SMC_FEATURE_MASK
        } else {
            0
        },
    });
    let accept = SmcrAcceptConfirm {
        kind: MsgType::Accept,
        version: SMC_V2,
        first_contact,
        local: LocalInfo {
            peer_id: crate::ib::local_systemid(),
            gid: link.dev.gid,
            mac: link.dev.mac,
        },
        qpn: link.qpn(),
        rmb_rkey: rkey,
        rmbe_idx: 1,
        rmbe_alert_token: conn.token,
        rmbe_size: bufsize::compress(conn.rmb_size()),
        qp_mtu: link.mtu(),
        rmb_dma_addr: addr,
        psn: link.psn,
        eid: p.eid,
        fce,
        gid_list: None,
    };
    Ok(ServerConn {
        lgr,
        conn,
        link,
        accept,
        first_contact,
        setup,
    })
}

/// Takes the client's Confirm: where its RMB is, and on a new link group
/// its queue pair, which the server then brings up and confirms in LLC.
pub(crate) fn server_confirm(
    reg: &LgrRegistry,
    sc: &ServerConn,
    c: &SmcrAcceptConfirm,
) -> core::result::Result<(), DeclineReason> {
    let lgr = &sc.lgr;
    let Some(peer_addr) = c.rmbe_addr() else {
        smc_dbg!("server: the Confirm names no RMB element (index {})", c.rmbe_idx);
        return Err(DeclineReason::ConfigError);
    };
    if sc.first_contact {
        if !valid_qp_mtu(c.qp_mtu) {
            smc_dbg!("server: the Confirm's qp_mtu {} is no IB MTU", c.qp_mtu);
            return Err(DeclineReason::Other(DECL_ERR_RDYLNK));
        }
        let limits = sc.accept.fce.map_or((0, 0), |f| (f.max_conns, f.max_links));
        lgr.record_peer(c, sc.accept.eid, limits);
        lgr.link().set_peer_qp(c.qpn, c.psn, c.local.mac, c.qp_mtu);
        if lgr.link().connect_qp().is_err() {
            return Err(DeclineReason::Other(DECL_ERR_RDYLNK));
        }
        // The first RMB waited for the link; the send buffer needs none.
        let rmb = sc.conn.rmb.lock().clone();
        let regs = match rmb {
            Some(rmb) => match rmb.lgr() {
                Some(rmb) => rmb.register(&lgr.link()),
                None => Err(crate::sys::errno::ENOLINK.into()),
            },
            None => Err(crate::sys::errno::ENOLINK.into()),
        };
        if regs.is_err() {
            return Err(DeclineReason::Other(DECL_ERR_REGBUF));
        }
    } else {
        let peer = sc.link.peer();
        if c.qpn != peer.qpn || c.local.gid != peer.gid {
            return Err(DeclineReason::Other(DECL_NOSRVLINK));
        }
    }
    let size = bufsize::uncompress(c.rmbe_size);
    // The client's key is for the Accept's link. Under `conf`: that link
    // is in the group, or a failover cleared it and the key is retired in
    // the table, whose row has the RMB's keys on the links left (the
    // client's CONFIRM RKEY); a failover after this copies them again.
    let conf = lgr.conf.lock();
    let added = if lgr.with_links(|s| s.holds(&sc.link)) {
        lgr.peer_keys.add(sc.link.idx, c.rmb_rkey, peer_addr)
    } else {
        smc_dbg!("smcr: the Confirm names a link that went meanwhile");
        lgr.peer_keys.adopt(sc.link.idx, c.rmb_rkey, peer_addr)
    };
    let Ok((row, keys)) = added else {
        return Err(DeclineReason::Other(DECL_MEM));
    };
    sc.conn.set_peer(PeerRmb {
        token: c.rmbe_alert_token,
        size,
        row,
        keys,
    });
    drop(conf);
    if sc.first_contact {
        let max_conns = sc.accept.fce.map_or(0, |f| f.max_conns);
        match llc::server_confirm_link(&lgr.link(), max_conns) {
            Ok((ours, peer_uid)) => {
                lgr.link().record_uids(ours, peer_uid);
                lgr.link().set_active(1);
                lgr.set_kind(LgrType::Single);
                // A second link, when another device can carry it.
                if lgr.max_links() > 1 {
                    lgr.pending.fetch_or(PENDING_ADD_LINK, Ordering::AcqRel);
                    lgr.run_work();
                }
                smc_dbg!("smcr: link 1 of a new link group is up (server)");
                reg.add(lgr.clone())
                    .map_err(|_| DeclineReason::Other(DECL_MEM))?;
            }
            Err(_) => return Err(DeclineReason::TimeoutConfirmLink),
        }
    }
    Ok(())
}
