// SPDX-License-Identifier: GPL-2.0

//! SMC-D link groups over the loopback device, and the connections the CLC
//! handshake makes in them.
//!
//! A link group holds the connections with one peer GID in one network
//! namespace, whatever their role, as upstream's (`smcd_lgr_match` does
//! not look at the role, and nothing but the device's DMBs bounds an
//! SMC-D group): over the loopback device the peer is this host, so the
//! client and the server end of a connection share their group. The
//! server makes a group on first contact and names it in its Accept; the
//! client's end joins it. A connection is made with its DMB registered;
//! it learns the peer's DMB from the peer's Accept or Confirm
//! ([`attach`]). The group lets a connection go once it is finished (see
//! [`Conn::finished`](crate::smcr::conn::Conn::finished)): its DMB leaves
//! the device, and the memory goes with the last holder. A group without
//! connections goes at once (upstream lets it linger ten minutes).
//!
//! Locks (mutexes, process context): `IsmLgrs::lgrs` before a group's
//! `conns`.

use super::conns::IsmConns;
use super::dmb::{Dmb, DmbOwner, IsmGroup};
use super::lo::{self, Loopback, LoopbackDevice};
use crate::smcr::about::{new_about, LgrAbout};
use crate::smcr::cdc;
use crate::smcr::settle;
use crate::smcr::ids::{new_lgr_id, next_token};
use crate::smcr::conn::{Conn, IsmPath, Path};
use crate::smcr::shared::PeerRmb;
use crate::smcr::path::DMB_HEADER;
use crate::stats::tech::{self, BufferSource, Dir, Tech};
use crate::sys::diag::DmbDiag;
use crate::sys::errno::{EINVAL, ENODEV, ENOSPC};
use crate::sys::print::smc_dbg;
use crate::sys::sync::{RcuPointer, SpinLockBh};
use crate::sys::tcp::TcpSock;
use crate::wire::bufsize;
use crate::wire::cdc::CdcMsg;
use crate::wire::clc::SmcdGid;
use kernel::prelude::*;
use kernel::sync::{new_mutex, Arc, Mutex};
use kernel::types::ARef;

/// The largest DMB: upstream's `SMCD_DMBE_SIZES` classes (16 KiB to 1 MiB).
const DMB_MAX_CLASS: u8 = 6;

/// Which end of its connections a link group is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Role {
    Client,
    Server,
}

/// An SMC-D link group.
#[pin_data]
pub(crate) struct IsmLgr {
    /// Its id, as the CLC Accept carries it.
    pub(crate) id: [u8; 4],
    /// The peer's ISM GID.
    pub(crate) peer_gid: SmcdGid,
    /// The namespace its connections are in (its cookie).
    net: u64,
    #[pin]
    conns: Mutex<IsmConns>,
    /// What the first contact told of the peer, for operators.
    #[pin]
    pub(crate) about: SpinLockBh<LgrAbout>,
}

impl IsmLgr {
    /// Its id as upstream's netlink puts it (the bytes as a host word).
    pub(crate) fn id_word(&self) -> u32 {
        u32::from_ne_bytes(self.id)
    }

    /// Its connections.
    pub(crate) fn conn_count(&self) -> usize {
        self.conns.lock().count()
    }

    /// Bytes of the DMBs its connections registered.
    pub(crate) fn dmb_bytes(&self) -> u64 {
        self.conns.lock().dmb_bytes()
    }
}

impl IsmGroup for IsmLgr {
    fn id_word(&self) -> u32 {
        IsmLgr::id_word(self)
    }

    fn peer_gid(&self) -> SmcdGid {
        self.peer_gid
    }

    fn conn_finished(&self, token: u32) {
        // Only its own settling finds a connection finished: the group
        // looks at that one alone, not at all of them.
        let done = self.conns.lock().remove(token);
        if let Some(c) = done {
            end_conn(&c);
        }
        if let Some(all) = registry() {
            all.forget_if_empty(self);
        }
    }
}

/// Lets a connection's DMB go: it leaves the device, its owner (the
/// connection) is dropped from it, and peers attached keep its memory
/// until they let go.
fn end_conn(conn: &Conn) {
    if let Path::Ism(p) = conn.path() {
        match lo::device() {
            Some(dev) => drop(dev.unregister(p.own.token)),
            None => p.own.disown(),
        }
    }
}

/// The receiving end of a DMB: its connection.
struct IsmRx(Arc<Conn>);

impl DmbOwner for IsmRx {
    fn cdc_arrived(&self, msg: &CdcMsg) {
        let conn = &self.0;
        let a = cdc::apply(conn, msg);
        // Sending from here would signal the peer under this DMB's lock:
        // what sends goes to the connection's work item.
        if a.settle.is_some() || a.push || a.update_consumer {
            conn.schedule_push();
        }
        // A message that settles the connection wakes everyone already.
        conn.wake_for(a.wake);
    }
}

/// The host's SMC-D link groups.
#[pin_data]
pub(crate) struct IsmLgrs {
    #[pin]
    lgrs: Mutex<KVec<Arc<IsmLgr>>>,
}

impl IsmLgrs {
    /// Puts the connection `make` makes for its group into the group with
    /// `peer` in `net` (named `id`, when the server named it), or into a
    /// new one: true for a first contact. A client's end finds the group
    /// its server made; should that be gone meanwhile, it makes one with
    /// that id. Under the registry's lock: no group is forgotten between
    /// being chosen and getting the connection.
    fn add(
        &self,
        peer: SmcdGid,
        net: u64,
        id: Option<[u8; 4]>,
        make: impl FnOnce(&Arc<IsmLgr>) -> Result<Arc<Conn>>,
    ) -> Result<(Arc<IsmLgr>, Arc<Conn>, bool)> {
        let mut lgrs = self.lgrs.lock();
        let found = lgrs
            .iter()
            .find(|l| l.peer_gid == peer && l.net == net && id.map_or(true, |id| l.id == id))
            .cloned();
        let (lgr, first_contact) = match found {
            Some(l) => (l, false),
            None => {
                let l = Arc::pin_init(
                    try_pin_init!(IsmLgr {
                        id: id.unwrap_or_else(new_lgr_id),
                        peer_gid: peer,
                        net,
                        conns <- new_mutex!(IsmConns::new(), "IsmLgr::conns"),
                        about <- new_about(),
                    }? Error),
                    GFP_KERNEL,
                )?;
                (l, true)
            }
        };
        let conn = make(&lgr)?;
        lgr.conns.lock().insert(conn.clone())?;
        if first_contact {
            if let Err(e) = lgrs.push(lgr.clone(), GFP_KERNEL) {
                lgr.conns.lock().remove(conn.token);
                return Err(e.into());
            }
        }
        Ok((lgr, conn, first_contact))
    }

    /// Forgets `lgr` once it has no connection left.
    fn forget_if_empty(&self, lgr: &IsmLgr) {
        let mut lgrs = self.lgrs.lock();
        if lgr.conns.lock().count() > 0 {
            return;
        }
        let Some(at) = lgrs.iter().position(|l| core::ptr::eq(&**l, lgr)) else {
            return;
        };
        // Rebuilt without it (no removal in place here): the old list's
        // references go after the lock.
        let mut kept = KVec::new();
        for (i, l) in lgrs.iter().enumerate() {
            if i != at && kept.push(l.clone(), GFP_KERNEL).is_err() {
                return;
            }
        }
        let old = core::mem::replace(&mut *lgrs, kept);
        drop(lgrs);
        drop(old);
    }

    /// The link groups now.
    pub(crate) fn link_groups(&self) -> Result<KVec<Arc<IsmLgr>>> {
        let lgrs = self.lgrs.lock();
        let mut out = KVec::with_capacity(lgrs.len(), GFP_KERNEL)?;
        for l in lgrs.iter() {
            out.push(l.clone(), GFP_KERNEL)?;
        }
        Ok(out)
    }

    /// Ends every connection (module unload, after the last socket): the
    /// DMBs leave the device and their owners are dropped.
    fn shutdown(&self) {
        let lgrs = core::mem::take(&mut *self.lgrs.lock());
        for l in lgrs.iter() {
            loop {
                let c = l.conns.lock().take_any();
                let Some(c) = c else { break };
                end_conn(&c);
            }
        }
    }
}

/// The SMC-D link groups, published while the module is loaded.
static REGISTRY: RcuPointer<Arc<IsmLgrs>> = RcuPointer::new();

/// The SMC-D link groups, while the module is loaded.
pub(crate) fn registry() -> Option<Arc<IsmLgrs>> {
    REGISTRY.read(|r| r.cloned())
}

/// SMC-D in the module: the loopback device and the link groups over it,
/// published while alive; dropping ends every connection left.
pub(crate) struct Smcd {
    _dev: LoopbackDevice,
}

impl Smcd {
    pub(crate) fn start() -> Result<Self> {
        let dev = LoopbackDevice::start()?;
        let reg = Arc::pin_init(
            pin_init!(IsmLgrs {
                lgrs <- new_mutex!(KVec::new(), "IsmLgrs::lgrs"),
            }),
            GFP_KERNEL,
        )?;
        REGISTRY.replace(Some(KBox::new(reg, GFP_KERNEL)?));
        Ok(Smcd { _dev: dev })
    }
}

impl Drop for Smcd {
    fn drop(&mut self) {
        if let Some(reg) = registry() {
            REGISTRY.replace(None);
            reg.shutdown();
        }
    }
}

/// A connection made by the CLC handshake, and what its Accept or Confirm
/// tells the peer.
pub(crate) struct NewConn {
    pub(crate) lgr: Arc<IsmLgr>,
    pub(crate) conn: Arc<Conn>,
    /// A new link group.
    pub(crate) first_contact: bool,
    /// Our DMB's token.
    pub(crate) token: u64,
    /// Our DMB's size class.
    pub(crate) dmbe_class: u8,
}

/// The DMB size class for a socket: half its receive buffer (twice
/// `net.smc.rmem` when not set), as an SMC-R RMB, at most 1 MiB.
fn dmb_class(sock: &TcpSock) -> u8 {
    let (_, rcv) = sock.user_buf_sizes();
    let rcv = rcv.unwrap_or(crate::sysctl::rmem(sock.net()).saturating_mul(2));
    bufsize::size_class_for(rcv, true).min(DMB_MAX_CLASS)
}

/// Makes a connection of `role` with `peer` (a GID of this host's loopback
/// device) for the socket whose clcsock is `waker`: in a group with room,
/// or a new one (the server decides; a client's goes into its group with
/// the id `lgr_id` the server's Accept named, made now if need be).
pub(crate) fn new_conn(
    role: Role,
    peer: SmcdGid,
    lgr_id: Option<[u8; 4]>,
    waker: ARef<TcpSock>,
) -> Result<NewConn> {
    let dev = lo::device().ok_or(ENODEV)?;
    if !dev.is_local(&peer) {
        return Err(ENODEV.into());
    }
    let reg = registry().ok_or(ENODEV)?;
    let class = dmb_class(&waker);
    let size = bufsize::uncompress(class);
    let own = dev.register(size as usize)?;
    let token = own.token;
    let net = ARef::from(waker.net());
    let made = make_conn(&reg, role, peer, lgr_id, own.clone(), waker);
    match made {
        Ok((lgr, conn, first_contact)) => {
            // The DMB is the connection's RMB; it has no send buffer of
            // its own (it writes into the peer's DMB).
            let source = if own.reused {
                BufferSource::Reused
            } else {
                BufferSource::New { downgraded: false }
            };
            tech::buffer_taken(&net, Tech::Smcd, Dir::Rx, size, source);
            Ok(NewConn {
            lgr,
            conn,
            first_contact,
            token,
            dmbe_class: class,
        })
        }
        Err(e) => {
            drop(dev.unregister(token));
            Err(e)
        }
    }
}

fn make_conn(
    reg: &IsmLgrs,
    role: Role,
    peer: SmcdGid,
    lgr_id: Option<[u8; 4]>,
    own: Arc<Dmb>,
    waker: ARef<TcpSock>,
) -> Result<(Arc<IsmLgr>, Arc<Conn>, bool)> {
    let net = waker.net().cookie();
    let (lgr, conn, first_contact) = reg.add(peer, net, lgr_id, |lgr| {
        let path = IsmPath {
            own: own.clone(),
            group: lgr.clone(),
        };
        let conn = Conn::new_ism(next_token(), path, waker)?;
        // The caller's unregistering of `own` on failure drops this.
        own.own(Arc::new(IsmRx(conn.clone()), GFP_KERNEL)?);
        Ok(conn)
    })?;
    smc_dbg!(
        "smcd: {:?} connection {:#x}, DMB {:#x}, group {:02x?}{}",
        role,
        conn.token,
        own.token,
        lgr.id,
        if first_contact { " (new)" } else { "" }
    );
    Ok((lgr, conn, first_contact))
}

/// The peer named its DMB (`token`, size class `class`): the connection
/// writes into it from now on. `EINVAL` when it is not the size the peer
/// said, `ENOENT` when there is no such DMB.
pub(crate) fn attach(dev: &Loopback, conn: &Conn, token: u64, class: u8) -> Result {
    let Path::Ism(p) = conn.path() else {
        return Err(EINVAL.into());
    };
    let dmb = dev.attach(token, &p.own)?;
    if dmb.len() != bufsize::uncompress(class) as usize {
        return Err(EINVAL.into());
    }
    attach_dmb(conn, dmb)
}

/// The connection writes into `dmb` from now on.
fn attach_dmb(conn: &Conn, dmb: Arc<Dmb>) -> Result {
    // The ring after the DMB's header, as the peer counts it.
    let size = dmb.len().saturating_sub(DMB_HEADER) as u32;
    conn.attach_peer(
        dmb,
        PeerRmb {
            token: 0,
            size,
            ..PeerRmb::default()
        },
    )
}

/// The handshake failed after `nc` was made: the connection goes, its
/// DMB with it. A peer that attached our DMB meanwhile has its end up (a
/// server's Confirm may not have come, or a client's may not have gone):
/// it is aborted, as an unaccepted connection is, so that the peer's end
/// does not wait for a close that never comes.
pub(crate) fn abort_conn(nc: NewConn) {
    let conn = nc.conn;
    // Out of the device first: nobody attaches the DMB any more, and who
    // did is known.
    let attacher = match (lo::device(), conn.path()) {
        (Some(dev), Path::Ism(p)) => dev.unregister(p.own.token),
        _ => None,
    };
    if conn.peer_dmb().is_none() {
        if let Some(d) = attacher {
            let _ = attach_dmb(&conn, d);
        }
    }
    if conn.peer_dmb().is_some() {
        // The group lets it go once its abort is out.
        settle::abandon(&conn);
        return;
    }
    conn.count_buffers_given_back(conn.waker.net());
    let removed = nc.lgr.conns.lock().remove(conn.token);
    end_conn(&conn);
    drop(removed);
    if let Some(reg) = registry() {
        reg.forget_if_empty(&nc.lgr);
    }
}

/// What smc_diag reports of an SMC-D connection (`SMC_DIAG_DMBINFO`);
/// `None` for SMC-R. Any context.
pub(crate) fn dmb_diag(conn: &Conn) -> Option<DmbDiag> {
    let Path::Ism(p) = conn.path() else {
        return None;
    };
    let mine = lo::device().map_or(SmcdGid::default(), |d| d.gid);
    let peer = p.group.peer_gid();
    Some(DmbDiag {
        linkid: p.group.id_word(),
        peer_gid: peer.gid,
        peer_gid_ext: peer.gid_ext,
        my_gid: mine.gid,
        my_gid_ext: mine.gid_ext,
        token: p.own.token,
        peer_token: conn.peer_dmb().map_or(0, |d| d.token),
    })
}

/// Whether a connection can be made now: the device is there and has room
/// for one more DMB.
pub(crate) fn can_connect() -> Result {
    let dev = lo::device().ok_or(ENODEV)?;
    if dev.dmbs() >= lo::MAX_DMBS {
        return Err(ENOSPC.into());
    }
    Ok(())
}
