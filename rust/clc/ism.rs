// SPDX-License-Identifier: GPL-2.0

//! The SMC-Dv2 parts of the CLC handshake over the loopback device: what a
//! client offers, which proposals a server serves with it, and the Accept
//! and Confirm that carry each side's DMB.
//!
//! A proposal offers the loopback device (CHID 0xFFFF, its 128-bit GID)
//! when `net.smc.smcd_loopback` is on and a UEID is set; a server with the
//! same setting serves it when that GID is its own device's (the client is
//! on this host) and the two sides share a UEID. Off s390 the system EID
//! is disabled (upstream's `seid_enabled` 0 there, and it cannot be
//! enabled): proposals carry none, and only a UEID matches, as upstream's
//! loopback device needs. As upstream's listener, a server prefers
//! SMC-Dv2 to SMC-Rv2.

use super::decline::send_decline;
use super::recv::recv_message;
use super::outcome::{ClientOutcome, ServerOutcome};
use crate::smcd::lgr::{self, NewConn, Role};
use crate::smcd::lo;
use crate::smcr::conn::Conn;
use crate::sys::errno::EINVAL;
use crate::sys::net::Net;
use crate::sys::print::smc_dbg;
use crate::sys::tcp::KernelSocket;
use crate::wire::clc::{
    ClcError, DeclineReason, FirstContactExt, IsmDevice, MsgType, Proposal, SmcType, SmcdAcceptConfirm, SmcdGid, EID_LEN,
    MAX_MESSAGE_LEN, OS_LINUX, SMC_FEATURE_MASK, SMC_RELEASE_1, SMC_V2,
};
use kernel::prelude::*;
use kernel::sync::Arc;

/// The device a client in `net` offers for SMC-Dv2, if any.
pub(crate) fn client_offer(net: &Net) -> Option<IsmDevice> {
    if !crate::sysctl::smcd_loopback(net) || !crate::ueid::any() {
        return None;
    }
    lgr::can_connect().ok()?;
    let dev = lo::device()?;
    Some(IsmDevice {
        chid: dev.chid,
        gid: dev.gid,
    })
}

/// What a server agrees on for SMC-Dv2: the client's device (ours) and the
/// EID, and the release for the first contact extension.
pub(crate) struct ServerMatch {
    gid: SmcdGid,
    eid: [u8; EID_LEN],
    release: u8,
}

/// Whether a server in `net` serves proposal `p` with SMC-Dv2 over the
/// loopback device.
pub(crate) fn server_match(net: &Net, p: &Proposal<'_>) -> Option<ServerMatch> {
    if !crate::sysctl::smcd_loopback(net) || p.header.version < SMC_V2 {
        return None;
    }
    if !SmcType::from_bits(p.header.typev2).has_d() {
        return None;
    }
    let v2 = p.v2.as_ref()?;
    p.smcd_v2.as_ref()?;
    let ours = crate::ueid::snapshot();
    let eid = v2
        .ueids()
        .find_map(|u| ours.iter().find(|o| o.as_slice() == u).copied())?;
    let dev = lo::device()?;
    let gid = p.smcd_v2_devices().find(|d| dev.is_local(&d.gid))?.gid;
    lgr::can_connect().ok()?;
    Some(ServerMatch {
        gid,
        eid,
        release: v2.release.min(SMC_RELEASE_1),
    })
}

/// Our Accept or Confirm for the connection `nc`.
fn message(kind: MsgType, nc: &NewConn, eid: [u8; EID_LEN], release: u8) -> Option<SmcdAcceptConfirm> {
    let dev = lo::device()?;
    Some(SmcdAcceptConfirm {
        kind,
        version: SMC_V2,
        first_contact: nc.first_contact,
        gid: dev.gid,
        token: nc.token,
        dmbe_idx: 0,
        dmbe_size: nc.dmbe_class,
        link_id: nc.lgr.id,
        chid: dev.chid,
        eid,
        fce: nc.first_contact.then(|| FirstContactExt {
            v2_direct: false,
            os_type: OS_LINUX,
            release,
            hostname: crate::sys::genl::hostname(),
            max_conns: 0,
            max_links: 0,
            feature_mask: if release >= SMC_RELEASE_1 { SMC_FEATURE_MASK } else { 0 },
        }),
    })
}

/// What a new link group learned of its peer, for operators.
fn remember_peer(nc: &NewConn, f: &FirstContactExt, eid: &[u8; EID_LEN]) {
    let mut about = nc.lgr.about.lock();
    about.peer_release = f.release;
    about.peer_os = f.os_type;
    about.peer_hostname = f.hostname;
    about.negotiated_eid = *eid;
}

/// Sends `m` on the clcsock.
fn send(clc: &KernelSocket, m: &SmcdAcceptConfirm) -> Result {
    let mut buf = [0u8; MAX_MESSAGE_LEN];
    let n = m.encode(&mut buf).map_err(|_| Error::from(EINVAL))?;
    clc.send_all(buf.get(..n).ok_or(EINVAL)?)
}

/// How the server's part ended.
pub(crate) enum ServerEnd {
    /// The connection is up.
    Up(Arc<Conn>),
    /// Decline with this (upstream's `SMC_CLC_DECL_*`), nothing was sent.
    Decline(u32),
    /// The client answered with a Decline (its reason code).
    PeerDeclined(u32),
    /// The client's answer is not what it must be: decline with
    /// `SYNCERR`.
    SyncError,
    /// The clcsock failed.
    Broken,
}

/// Upstream's `SMC_CLC_DECL_MEM`: no memory (or room) for the DMB.
const DECL_MEM: u32 = 0x0101_0000;
/// Upstream's `SMC_CLC_DECL_ERR_REGBUF`: the peer's DMB cannot be used.
const DECL_ERR_REGBUF: u32 = 0x0999_0003;

/// The server's part of an SMC-Dv2 connection: Accept with our DMB, the
/// client's Confirm with its DMB.
pub(crate) fn server(clc: &KernelSocket, m: &ServerMatch) -> ServerEnd {
    let nc = match lgr::new_conn(Role::Server, m.gid, None, clc.abort_handle()) {
        Ok(nc) => nc,
        Err(e) => {
            smc_dbg!("server: SMC-D connection not made ({:?})", e);
            return ServerEnd::Decline(DECL_MEM);
        }
    };
    let Some(accept) = message(MsgType::Accept, &nc, m.eid, m.release) else {
        lgr::abort_conn(nc);
        return ServerEnd::Decline(DECL_MEM);
    };
    if send(clc, &accept).is_err() {
        lgr::abort_conn(nc);
        return ServerEnd::Broken;
    }
    let mut buf = [0u8; MAX_MESSAGE_LEN];
    let header = match recv_message(clc, &mut buf) {
        Ok(h) => h,
        Err(_) => {
            lgr::abort_conn(nc);
            return ServerEnd::Broken;
        }
    };
    let msg = buf.get(..usize::from(header.length)).unwrap_or(&[]);
    if header.kind == MsgType::Decline {
        lgr::abort_conn(nc);
        let diagnosis = crate::wire::clc::Decline::parse(msg).map_or(0, |d| d.reason.code());
        return ServerEnd::PeerDeclined(diagnosis);
    }
    let confirm = match SmcdAcceptConfirm::parse(msg) {
        Ok(c) if c.kind == MsgType::Confirm && c.gid == m.gid && c.eid == m.eid => c,
        _ => {
            lgr::abort_conn(nc);
            return ServerEnd::SyncError;
        }
    };
    let attached = lo::device()
        .ok_or(Error::from(EINVAL))
        .and_then(|dev| lgr::attach(&dev, &nc.conn, confirm.token, confirm.dmbe_size));
    if let Err(e) = attached {
        smc_dbg!("server: the client's DMB cannot be used ({:?})", e);
        lgr::abort_conn(nc);
        return ServerEnd::Decline(DECL_ERR_REGBUF);
    }
    if let Some(f) = confirm.fce.filter(|_| nc.first_contact) {
        remember_peer(&nc, &f, &m.eid);
    }
    smc_dbg!("server: SMC-D connection up, token {:#x}", nc.conn.token);
    ServerEnd::Up(nc.conn)
}

/// How the client's part after an SMC-D Accept ended.
pub(crate) enum ClientEnd {
    /// The connection is up.
    Up(Arc<Conn>),
    /// Decline with this reason code (nothing was sent).
    Decline(u32),
}

/// The client's part after the server's SMC-D Accept `a`: our connection
/// (in the group the server named, or a new one on first contact), the
/// server's DMB, and our Confirm. `Err` when the clcsock failed.
pub(crate) fn client(clc: &KernelSocket, a: &SmcdAcceptConfirm) -> Result<ClientEnd> {
    let Some(dev) = lo::device() else {
        return Ok(ClientEnd::Decline(DECL_MEM));
    };
    if !dev.is_local(&a.gid) {
        return Ok(ClientEnd::Decline(DECL_ERR_REGBUF));
    }
    let nc = match lgr::new_conn(Role::Client, a.gid, Some(a.link_id), clc.abort_handle()) {
        Ok(nc) => nc,
        Err(e) => {
            smc_dbg!("client: SMC-D connection not made ({:?})", e);
            return Ok(ClientEnd::Decline(DECL_MEM));
        }
    };
    if let Err(e) = lgr::attach(&dev, &nc.conn, a.token, a.dmbe_size) {
        smc_dbg!("client: the server's DMB cannot be used ({:?})", e);
        lgr::abort_conn(nc);
        return Ok(ClientEnd::Decline(DECL_ERR_REGBUF));
    }
    let release = a.fce.map_or(SMC_RELEASE_1, |f| f.release.min(SMC_RELEASE_1));
    let sent = match message(MsgType::Confirm, &nc, a.eid, release) {
        Some(c) => send(clc, &c),
        None => Err(EINVAL.into()),
    };
    if let Err(e) = sent {
        lgr::abort_conn(nc);
        return Err(e);
    }
    if let Some(f) = a.fce.filter(|_| nc.first_contact) {
        remember_peer(&nc, &f, &a.eid);
    }
    smc_dbg!("client: SMC-D connection up, token {:#x}", nc.conn.token);
    Ok(ClientEnd::Up(nc.conn))
}

/// Whether a server's answer `msg` (an Accept) is SMC-D.
pub(crate) fn is_smcd_accept(msg: &[u8]) -> bool {
    msg.starts_with(&crate::wire::clc::EYECATCHER_SMCD)
}

/// The client's part after an SMC-Dv2 Accept.
pub(super) fn client_smcd(clc: &KernelSocket, a: &SmcdAcceptConfirm) -> Result<ClientOutcome> {
    match client(clc, a)? {
        ClientEnd::Up(conn) => Ok(ClientOutcome::Smcr(conn)),
        ClientEnd::Decline(code) => {
            let reason = DeclineReason::Other(code);
            send_decline(clc, reason)?;
            Ok(ClientOutcome::Declined {
                reason,
                peer_diagnosis: 0,
            })
        }
    }
}

/// The server's part of an SMC-Dv2 connection over the loopback device.
pub(super) fn server_smcd(clc: &KernelSocket, m: &ServerMatch) -> ServerOutcome {
    let fallback = |reason, peer_diagnosis| ServerOutcome::Fallback {
        reason,
        peer_diagnosis,
        not_clc: false,
        error: None,
    };
    let reason = match server(clc, m) {
        ServerEnd::Up(conn) => return ServerOutcome::Smcr(conn),
        ServerEnd::PeerDeclined(d) => return fallback(DeclineReason::PeerDeclined, d),
        ServerEnd::Broken => return ServerOutcome::Abort(ClcError::Truncated),
        ServerEnd::Decline(code) => DeclineReason::Other(code),
        ServerEnd::SyncError => DeclineReason::SyncError,
    };
    if send_decline(clc, reason).is_err() {
        return ServerOutcome::Abort(ClcError::Truncated);
    }
    fallback(reason, 0)
}
