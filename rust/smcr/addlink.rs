// SPDX-License-Identifier: GPL-2.0

//! Adding links to a link group, as upstream 6.12 does for SMC-Rv2
//! (`smc_llc_cli_add_link`, `smc_llc_srv_add_link`): the server finds
//! another RDMA device, proposes a new link in ADD LINK with the keys of
//! every RMB on it, the client answers with its end and its keys, both
//! move the new queue pair to RTS, register the buffers on it, and the
//! server confirms the link over the new link itself. The link group's
//! work item ([`lgrwork`](super::lgrwork)) runs these flows, in process
//! context.

use super::bufs::LgrBuf;
use super::conn::Conn;
use super::flows::WAIT_MS;
use super::lgr::LinkGroup;
use super::link::{Link, LinkState, PeerLink};
use super::llc;
use crate::ib::{find_alt_smcr_v2_device, gid_ipv4};
use crate::sys::errno::{EAGAIN, ENOLINK, EPROTO, ETIMEDOUT};
use crate::sys::ib::qp::DrainedQp;
use crate::sys::print::smc_dbg;
use crate::sys::net::Net;
use crate::sys::tcp::TcpSock;
use crate::wire::clc::valid_qp_mtu;
use crate::wire::lgr_links::{
    alloc_alt_link, client_add_link_type, server_add_link_type, LgrType,
};
use crate::wire::llc::{
    AddLink, AddLinkRkey, AddLinkV2Ext, ConfirmLink, DeleteLink, EntryList, FlowType,
    LlcMessage, ReqAddLink, DEL_LOST_PATH, LLC_V2_MAX_LEN,
    REJ_RSN_NO_ALT_PATH,
};
use core::sync::atomic::Ordering;
use kernel::prelude::*;
use kernel::sync::Arc;
use kernel::types::ARef;

/// How long a new link waits for its CONFIRM LINK
/// (`SMC_LLC_WAIT_FIRST_TIME`).
const WAIT_FIRST_MS: u32 = 5000;

/// The connections of the group, taken out of its table's lock.
pub(crate) fn conns_of(lgr: &LinkGroup) -> Result<KVec<Arc<Conn>>> {
    let mut out = KVec::with_capacity(super::link::CONNS_PER_LGR, GFP_KERNEL)?;
    lgr.conns.lock().for_each(|c| {
        // Room for every connection was reserved: no allocation here.
        let _ = out.push(c.clone(), GFP_ATOMIC);
    });
    Ok(out)
}

/// Every buffer of the group (in use, pooled, retired), and whether it is
/// an RMB (whose keys the peer has: a pooled or retired one keeps its row
/// at the peer, and needs its key on a new link as much as one in use).
fn buffers_of(lgr: &LinkGroup) -> Result<KVec<(Arc<LgrBuf>, bool)>> {
    let mut out = KVec::new();
    for c in conns_of(lgr)?.iter() {
        let rmb = c.rmb.lock().as_ref().and_then(|b| b.lgr().cloned());
        if let Some(b) = rmb {
            out.push((b, true), GFP_KERNEL)?;
        }
        let snd = c.sndbuf.lock().as_ref().and_then(|b| b.lgr().cloned());
        if let Some(b) = snd {
            out.push((b, false), GFP_KERNEL)?;
        }
    }
    lgr.for_each_kept_buffer(|b, rmb| out.push((b.clone(), rmb), GFP_KERNEL).map_err(Into::into))?;
    Ok(out)
}

/// Another device for a new link of `lgr` next to `known` (see
/// [`find_alt_smcr_v2_device`]), in the group's namespace: a connection's
/// socket's, or the initial namespace when the group is its and has no
/// connection now (the group keeps no reference to its namespace).
fn alt_device(
    lgr: &LinkGroup,
    known: &Link,
    daddr: Option<[u8; 4]>,
) -> Option<crate::ib::SmcrV2Device> {
    let mut sock: Option<ARef<TcpSock>> = None;
    lgr.conns.lock().for_each(|c| {
        if sock.is_none() {
            sock = Some(c.waker.clone());
        }
    });
    let saddr = gid_ipv4(&known.dev.gid);
    match sock {
        Some(s) => find_alt_smcr_v2_device(s.net(), &known.dev, saddr, daddr),
        None => {
            let init = Net::init();
            (init.cookie() == known.params.net)
                .then(|| find_alt_smcr_v2_device(init, &known.dev, saddr, daddr))
                .flatten()
        }
    }
}

/// The ADD LINK v2 extension's keys: for each RMB, its key on `via` and
/// its key and address on `new` (upstream sends those of RMBs in use: it
/// deletes a key at the peer when its buffer goes unused).
fn rkeys_for(bufs: &[(Arc<LgrBuf>, bool)], via: &Link, new: &Link, out: &mut KVec<AddLinkRkey>) -> Result {
    for (b, rmb) in bufs.iter() {
        if !*rmb || out.len() >= 255 {
            continue;
        }
        let (Some((key, _)), Some((key_new, addr_new))) = (b.rkey(via.idx), b.rkey(new.idx)) else {
            continue;
        };
        out.push(
            AddLinkRkey {
                rmb_key: key,
                rmb_key_new: key_new,
                rmb_vaddr_new: addr_new,
            },
            GFP_KERNEL,
        )?;
    }
    Ok(())
}

/// Our ADD LINK (request or response) for `new`, sent over `via`.
fn send_add_link(via: &Link, new: &Link, resp: bool, mtu: u8, rkeys: &[AddLinkRkey]) -> Result {
    let mut list = KVec::from_elem(0u8, rkeys.len() * 16, GFP_KERNEL)?;
    let msg = AddLink {
        version: llc::version(via),
        resp,
        reject: false,
        reject_reason: 0,
        sender_mac: new.dev.mac,
        sender_gid: new.dev.gid,
        sender_qpn: new.qpn(),
        link_num: new.link_num.load(Ordering::Relaxed),
        qp_mtu: mtu,
        initial_psn: new.psn,
        ext: Some(AddLinkV2Ext {
            direct: !new.dev.uses_gateway,
            client_target_gid: new.dev.gid,
            rkeys: EntryList::build(rkeys, &mut list).map_err(|_| EPROTO)?,
        }),
    };
    llc::send(via, &LlcMessage::AddLink(msg))
}

/// The CONFIRM LINK of `new` (request from the server, response from the
/// client), with our link user id.
fn confirm_link(new: &Link, resp: bool, uid: [u8; 4], max_links: u8, max_conns: u8) -> Result {
    let msg = ConfirmLink {
        version: llc::version(new),
        resp,
        no_rmbe_eyec: true,
        sender_mac: new.dev.mac,
        sender_gid: new.dev.gid,
        sender_qpn: new.qpn(),
        link_num: new.link_num.load(Ordering::Relaxed),
        link_uid: uid,
        max_links,
        max_conns,
    };
    llc::send(new, &LlcMessage::ConfirmLink(msg))
}

/// Asks the peer to delete link `num` (a new link that failed), over
/// `via`.
pub(crate) fn send_delete_link(via: &Link, num: u8, orderly: bool) {
    let msg = DeleteLink {
        version: llc::version(via),
        resp: false,
        all: false,
        orderly,
        link_num: num,
        reason: DEL_LOST_PATH,
    };
    let _ = llc::send(via, &LlcMessage::DeleteLink(msg));
}

/// A new link of the group in slot `idx`, made on `dev` towards `peer`.
fn new_link(lgr: &Arc<LinkGroup>, via: &Link, idx: usize, dev: crate::ib::SmcrV2Device, peer: PeerLink, num: u8) -> Result<Arc<Link>> {
    let link = Link::new(via.role, idx, dev, peer, via.params)?;
    link.set_owner(lgr.clone());
    link.link_num.store(num, Ordering::Relaxed);
    if !lgr.with_links(|s| s.insert(link.clone())) {
        link.shut_down();
        link.release();
        return Err(EAGAIN.into());
    }
    Ok(link)
}

/// Takes a link that failed to come up (or went) out of the group: its
/// queue pair drained, the buffers' mappings on it and the peer's keys
/// for it let go. Process context, under `lgr.conf`. The queue pair is
/// destroyed, and then the link's verbs objects given back, when the
/// result is dropped: after `conf`, where a failover is concerned (the
/// destruction may wait long for the device, and the group's handshakes
/// wait for `conf`).
pub(crate) fn clear_link(lgr: &LinkGroup, link: &Arc<Link>) -> Cleared {
    link.link_down();
    let removed = lgr.with_links(|s| s.remove(link.idx));
    let qp = link.stop();
    if let Ok(bufs) = buffers_of(lgr) {
        for (b, _) in bufs.iter() {
            b.drop_link(link.idx);
        }
    }
    lgr.peer_keys.clear_link(link.idx);
    refresh_peer_keys(lgr);
    Cleared {
        link: link.clone(),
        qp,
        release: removed.is_some(),
    }
}

/// A link [`clear_link`] took out of its group: dropping it destroys the
/// link's drained queue pair, then gives back its verbs objects. Process
/// context.
#[must_use = "dropping it destroys the queue pair, which may sleep long"]
pub(crate) struct Cleared {
    link: Arc<Link>,
    qp: Option<DrainedQp<Link>>,
    release: bool,
}

impl Drop for Cleared {
    fn drop(&mut self) {
        drop(self.qp.take());
        if self.release {
            self.link.release();
        }
    }
}

/// Every connection copies its RMB's keys again from the table.
pub(crate) fn refresh_peer_keys(lgr: &LinkGroup) {
    if let Ok(conns) = conns_of(lgr) {
        for c in conns.iter() {
            c.reload_peer_keys(&lgr.peer_keys);
        }
    }
}

/// Maps (and with `register`, registers) every buffer of the group on
/// `link`.
fn map_buffers(lgr: &LinkGroup, link: &Link, register: bool) -> Result<KVec<(Arc<LgrBuf>, bool)>> {
    let bufs = buffers_of(lgr)?;
    for (b, _) in bufs.iter() {
        b.add_link(link, register)?;
    }
    Ok(bufs)
}

/// The client answers the server's ADD LINK `msg` that came over link
/// slot `via` (`smc_llc_cli_add_link`); a link it cannot add is rejected.
pub(crate) fn client_add_link(lgr: &Arc<LinkGroup>, via: usize, msg: &[u8]) {
    let Ok(LlcMessage::AddLink(req)) = LlcMessage::parse(msg) else { return };
    let Some(via) = lgr.links().get(via).cloned().flatten() else { return };
    // Before `conf`: the lookup queries ports, whose locks ib_core takes
    // around events that reach the registry, which ends groups under it.
    let alt = alt_device(lgr, &via, Some(gid_ipv4(&req.sender_gid)));
    let conf = lgr.conf.lock();
    let result = try_client_add_link(lgr, &via, &req, alt);
    drop(conf);
    if let Err(e) = result {
        smc_dbg!("smcr: ADD LINK {} rejected ({:?})", req.link_num, e);
        let reject = AddLink {
            version: llc::version(&via),
            resp: true,
            reject: true,
            reject_reason: REJ_RSN_NO_ALT_PATH,
            ext: None,
            ..req
        };
        let _ = llc::send(&via, &LlcMessage::AddLink(reject));
    }
}

fn try_client_add_link(
    lgr: &Arc<LinkGroup>,
    via: &Arc<Link>,
    req: &AddLink<'_>,
    alt: Option<crate::ib::SmcrV2Device>,
) -> Result {
    if !valid_qp_mtu(req.qp_mtu) || lgr.max_links() <= 1 || via.state() != LinkState::Active {
        return Err(EPROTO.into());
    }
    let peer_same = req.sender_gid == via.peer().gid;
    let new_t = client_add_link_type(peer_same, alt.is_some()).ok_or(ENOLINK)?;
    let idx = lgr.with_links(|s| {
        let idx = alloc_alt_link(s.kind, new_t, &s.slots());
        if idx.is_none() {
            smc_dbg!("smcr: no slot for a {:?} link in a {:?} group", new_t, s.kind);
        }
        idx
    });
    let idx = idx.ok_or(ENOLINK)?;
    let dev = alt.unwrap_or_else(|| via.dev.clone());
    let peer = PeerLink {
        systemid: via.peer().systemid,
        gid: req.sender_gid,
        mac: req.sender_mac,
        qpn: req.sender_qpn,
        psn: req.initial_psn,
        mtu: req.qp_mtu,
    };
    let link = new_link(lgr, via, idx, dev, peer, req.link_num)?;
    let r = client_bring_up(lgr, via, &link, req, new_t);
    if r.is_err() {
        // Never used: destroyed at once.
        drop(clear_link(lgr, &link));
    }
    r
}

fn client_bring_up(lgr: &Arc<LinkGroup>, via: &Link, link: &Arc<Link>, req: &AddLink<'_>, new_t: LgrType) -> Result {
    link.connect_qp()?;
    let bufs = map_buffers(lgr, link, false)?;
    let mut rkeys = KVec::new();
    rkeys_for(&bufs, via, link, &mut rkeys)?;
    send_add_link(via, link, true, link.mtu().min(req.qp_mtu), &rkeys)?;
    smc_dbg!(
        "smcr: ADD LINK {} answered: qp {:#x} psn {:#x}, {} rkeys",
        req.link_num,
        link.qpn(),
        link.psn,
        rkeys.len()
    );
    if let Some(ext) = req.ext {
        for k in ext.rkeys.iter() {
            let _ = lgr.peer_keys.set(via.idx, k.rmb_key, link.idx, k.rmb_key_new, k.rmb_vaddr_new);
        }
    }
    let pick = |m: &[u8]| matches!(LlcMessage::parse(m), Ok(LlcMessage::ConfirmLink(c)) if !c.resp);
    let Some(conf) = link.wait_llc(WAIT_FIRST_MS, pick) else {
        send_delete_link(via, req.link_num, false);
        return Err(ETIMEDOUT.into());
    };
    let Ok(LlcMessage::ConfirmLink(c)) = LlcMessage::parse(&conf) else {
        return Err(EPROTO.into());
    };
    if c.sender_qpn != req.sender_qpn || c.sender_gid != req.sender_gid {
        send_delete_link(via, req.link_num, false);
        return Err(EPROTO.into());
    }
    for (b, _) in bufs.iter() {
        b.register(link)?;
    }
    let mut uid = [0u8; 4];
    crate::sys::random::fill(&mut uid);
    confirm_link(link, true, uid, c.max_links, c.max_conns)?;
    link.record_uids(uid, c.link_uid);
    activate(lgr, link, new_t);
    smc_dbg!("smcr: link {} added (client, type {:?})", req.link_num, new_t);
    Ok(())
}

/// The new link carries traffic; the group has its new type.
fn activate(lgr: &LinkGroup, link: &Link, new_t: LgrType) {
    let asym = matches!(new_t, LgrType::AsymmetricLocal | LgrType::AsymmetricPeer);
    link.asym.store(asym, Ordering::Relaxed);
    link.set_active(link.link_num.load(Ordering::Relaxed));
    lgr.set_kind(new_t);
    refresh_peer_keys(lgr);
}

/// The next free link id (`smcr_next_link_id`): 1 to 255, not in use.
fn next_link_num(lgr: &LinkGroup) -> u8 {
    let links = lgr.links();
    let used = |n: u8| {
        links
            .iter()
            .flatten()
            .any(|l| l.link_num.load(Ordering::Relaxed) == n)
    };
    (1..=u8::MAX).find(|n| !used(*n)).unwrap_or(u8::MAX)
}

/// The server adds a link on another device, if it has one
/// (`smc_llc_srv_add_link`). Unlike upstream, a server without another
/// device adds no second link on its only one: the client could not use
/// it for anything but the same path.
pub(crate) fn server_add_link(lgr: &Arc<LinkGroup>) -> bool {
    let via = lgr.link();
    // Before `conf` (see `client_add_link`).
    let Some(alt) = alt_device(lgr, &via, None) else {
        return false;
    };
    let _conf = lgr.conf.lock();
    if lgr.max_links() <= 1 || via.state() != LinkState::Active {
        return false;
    }
    if lgr.with_links(|s| s.active().count()) >= 2 {
        return false;
    }
    let Some(idx) = lgr.with_links(|s| alloc_alt_link(s.kind, LgrType::Symmetric, &s.slots()))
    else {
        return false;
    };
    let peer = PeerLink {
        systemid: via.peer().systemid,
        ..via.peer()
    };
    let Ok(link) = new_link(lgr, &via, idx, alt, peer, next_link_num(lgr)) else {
        return false;
    };
    if let Err(e) = server_bring_up(lgr, &via, &link) {
        smc_dbg!("smcr: adding a link failed ({:?})", e);
        drop(clear_link(lgr, &link));
    }
    // The client's REQ ADD LINK, if any, was answered by the ADD LINK.
    true
}

/// The server answers a client's REQ ADD LINK it adds no link for
/// (`smc_llc_send_req_add_link_response`: all data cleared).
pub(crate) fn refuse_request(via: &Link) {
    let msg = LlcMessage::ReqAddLink(ReqAddLink {
        resp: true,
        gids: EntryList::empty(),
    });
    let _ = llc::send(via, &msg);
}

fn server_bring_up(lgr: &Arc<LinkGroup>, via: &Arc<Link>, link: &Arc<Link>) -> Result {
    let bufs = map_buffers(lgr, link, false)?;
    let mut rkeys = KVec::new();
    rkeys_for(&bufs, via, link, &mut rkeys)?;
    send_add_link(via, link, false, link.mtu(), &rkeys)?;
    smc_dbg!(
        "smcr: ADD LINK {} sent: qp {:#x}, {} rkeys",
        link.link_num.load(Ordering::Relaxed),
        link.qpn(),
        rkeys.len()
    );
    let mut buf = KVec::from_elem(0u8, LLC_V2_MAX_LEN, GFP_KERNEL)?;
    let is_answer = |m: &LlcMessage<'_>| matches!(m, LlcMessage::AddLink(a) if a.resp);
    let t = lgr
        .flows
        .wait(WAIT_MS, &mut buf, is_answer)
        .ok_or(ETIMEDOUT)?;
    let Ok(LlcMessage::AddLink(resp)) = LlcMessage::parse(buf.get(..t.len).ok_or(EPROTO)?) else {
        return Err(EPROTO.into());
    };
    if resp.reject || !valid_qp_mtu(resp.qp_mtu) {
        return Err(ENOLINK.into());
    }
    let peer_same = resp.sender_gid == via.peer().gid;
    let new_t = server_add_link_type(lgr.kind(), true, peer_same);
    link.set_peer(PeerLink {
        systemid: via.peer().systemid,
        gid: resp.sender_gid,
        mac: resp.sender_mac,
        qpn: resp.sender_qpn,
        psn: resp.initial_psn,
        mtu: resp.qp_mtu,
    });
    link.connect_qp()?;
    for (b, _) in bufs.iter() {
        b.register(link)?;
    }
    if let Some(ext) = resp.ext {
        for k in ext.rkeys.iter() {
            let _ = lgr.peer_keys.set(via.idx, k.rmb_key, link.idx, k.rmb_key_new, k.rmb_vaddr_new);
        }
    }
    let mut uid = [0u8; 4];
    crate::sys::random::fill(&mut uid);
    let about = lgr.about();
    confirm_link(link, false, uid, about.max_links, about.max_conns)?;
    let pick = |m: &[u8]| matches!(LlcMessage::parse(m), Ok(LlcMessage::ConfirmLink(c)) if c.resp);
    let Some(conf) = link.wait_llc(WAIT_FIRST_MS, pick) else {
        send_delete_link(via, link.link_num.load(Ordering::Relaxed), false);
        return Err(ETIMEDOUT.into());
    };
    let Ok(LlcMessage::ConfirmLink(c)) = LlcMessage::parse(&conf) else {
        return Err(EPROTO.into());
    };
    link.record_uids(uid, c.link_uid);
    activate(lgr, link, new_t);
    smc_dbg!("smcr: link {} added (server, type {:?})", link.link_num.load(Ordering::Relaxed), new_t);
    Ok(())
}

/// The client asks the server for another link, over the device that
/// came (back) up (`smc_llc_send_request_add_link`): REQ ADD LINK with
/// the current link's GID and the other device's; the server answers
/// with its ADD LINK, which is run here, or with a refusal. False when
/// another flow runs (the request waits for it to end).
pub(crate) fn client_request_add_link(lgr: &Arc<LinkGroup>) -> bool {
    let via = lgr.link();
    if lgr.max_links() <= 1
        || via.state() != LinkState::Active
        || lgr.with_links(|s| s.active().count()) >= 2
    {
        return true;
    }
    let Some(alt) = alt_device(lgr, &via, None) else {
        return true;
    };
    if !lgr.flows.initiate(FlowType::ReqAddLink) {
        return false;
    }
    let gids = [via.dev.gid, alt.gid];
    let mut list = [0u8; 32];
    let sent = EntryList::build(&gids, &mut list)
        .map_err(|_| Error::from(EPROTO))
        .and_then(|gids| llc::send(&via, &LlcMessage::ReqAddLink(ReqAddLink { resp: false, gids })));
    if sent.is_ok() {
        let mut buf = KVec::from_elem(0u8, LLC_V2_MAX_LEN, GFP_KERNEL);
        if let Ok(buf) = buf.as_mut() {
            let answer = |m: &LlcMessage<'_>| {
                matches!(m, LlcMessage::AddLink(a) if !a.resp)
                    || matches!(m, LlcMessage::ReqAddLink(r) if r.resp)
            };
            if let Some(t) = lgr.flows.wait(WAIT_MS, buf, answer) {
                let msg = buf.get(..t.len).unwrap_or(&[]);
                if let Ok(LlcMessage::AddLink(_)) = LlcMessage::parse(msg) {
                    client_add_link(lgr, t.link, msg);
                }
            }
        }
    }
    lgr.stop_flow();
    true
}
