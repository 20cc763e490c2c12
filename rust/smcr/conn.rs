// SPDX-License-Identifier: GPL-2.0

//! A connection (SMC-R, or SMC-D through the loopback device): its send
//! buffer and RMB, where the peer's RMB is, and the cursors both sides
//! move.
//!
//! Cursors are kept as byte counts since the connection began (`u64`, they
//! never wrap); the wire's (wrap, count) cursors are derived from them and
//! checked against them with the wire crate's cursor rules.

use super::bufs::LgrBuf;
use super::link::Link;
use super::peerkeys::PeerKeys;
pub(crate) use super::path::{ConnBuf, IsmPath, Path};
use super::path::DMB_HEADER;
use super::shared::{ConnShared, PeerRmb, SharedLock};
use crate::smcd::dmb::Dmb;
use crate::stats::tech::{self, BufferEvent, Dir, Tech, TechCounters};
use crate::sys::ib::buf::BufMem;
use crate::sys::net::Net;
use crate::sys::owner::OwnerHook;
use crate::sys::errno::{EALREADY, ECONNRESET, ENOLINK};
use crate::sys::sync::{new_spinlock_bh, OnceArc, SpinLockBh};
use crate::sys::tcp::TcpSock;
use crate::sys::wake::Wake;
use crate::wire::close::CloseMachine;
use crate::wire::cursor::Cursor;
use crate::wire::lgr_links::LINKS_MAX;
use core::sync::atomic::{AtomicBool, AtomicU32, AtomicU8, Ordering};
use kernel::prelude::*;
use kernel::sync::{new_mutex, Arc, Mutex};
use kernel::types::ARef;
use kernel::workqueue::{new_work, Work};

/// An SMC-R connection.
#[pin_data]
pub(crate) struct Conn {
    /// Our token: the peer names this connection with it.
    pub(crate) token: u32,
    /// Our receive buffer, registered for the peer's RDMA WRITEs, until
    /// the link group ends (a device that goes away takes it back).
    #[pin]
    pub(crate) rmb: Mutex<Option<ConnBuf>>,
    /// Our SMC-R send buffer, read by the device; taken back like the RMB
    /// (SMC-D writes into the peer's DMB, `peer_dmb`). A
    /// spinlock: the completion handler pushes from it in softirq context
    /// (it never drops the last reference there).
    #[pin]
    pub(crate) sndbuf: SpinLockBh<Option<ConnBuf>>,
    rmb_size: u32,
    /// An SMC-D connection learns it with the peer's DMB.
    sndbuf_size: AtomicU32,
    /// `net.smc.autocorking_size` as it was when the link group was made
    /// (its links share it; 0 for SMC-D, which never corks).
    autocork_size: u32,
    /// SMC-D: the send buffer is the peer's RMB (nothing is copied or
    /// completed: room comes back as the peer reads).
    ism: bool,
    /// SMC-D: the peer's DMB (our send buffer's memory, and where our CDC
    /// messages go), once the CLC handshake named it; read without a lock.
    peer_dmb: OnceArc<Dmb>,
    /// SMC-D: our DMB's memory (the RMB), read without a lock.
    own_dmb: Option<Arc<BufMem>>,
    /// Settles the connection in process context after an event taken in
    /// softirq context (closing flags, an abort, the clcsock's reset).
    #[pin]
    pub(super) tx_work: Work<Conn>,
    /// The clcsock, whose wait queue the socket's callers sleep on.
    pub(crate) waker: ARef<TcpSock>,
    /// The counters of the clcsock's namespace that its data path adds to.
    counters: Option<TechCounters>,
    /// The socket was closed: the link group frees the connection once the
    /// peer can no longer write into its RMB.
    orphaned: AtomicBool,
    /// The close state of `shared`, for readers without its lock.
    close_state: AtomicU8,
    #[pin]
    pub(crate) shared: SharedLock,
    /// How the connection reaches its peer. SMC-R: the link it sends on
    /// (the peer's CDC messages may come on any link of the group);
    /// another one of the group after a failover.
    #[pin]
    link: SpinLockBh<Path>,
}

impl Conn {
    /// A new SMC-R connection on `link`.
    pub(crate) fn new(
        token: u32,
        link: Arc<Link>,
        peer: Option<PeerRmb>,
        rmb: Arc<LgrBuf>,
        sndbuf: Arc<LgrBuf>,
        waker: ARef<TcpSock>,
    ) -> Result<Arc<Conn>> {
        let autocork_size = link.params.autocork_size;
        Self::make(
            token,
            Path::Link(link),
            autocork_size,
            peer,
            ConnBuf::Lgr(rmb),
            Some(ConnBuf::Lgr(sndbuf)),
            waker,
        )
    }

    /// A new SMC-D connection on `path` (its send buffer comes with the
    /// peer's DMB, [`attach_peer`](Self::attach_peer)).
    pub(crate) fn new_ism(token: u32, path: IsmPath, waker: ARef<TcpSock>) -> Result<Arc<Conn>> {
        let rmb = ConnBuf::Mem(path.own.mem.clone());
        Self::make(token, Path::Ism(path), 0, None, rmb, None, waker)
    }

    fn make(
        token: u32,
        path: Path,
        autocork_size: u32,
        peer: Option<PeerRmb>,
        rmb: ConnBuf,
        sndbuf: Option<ConnBuf>,
        waker: ARef<TcpSock>,
    ) -> Result<Arc<Conn>> {
        let ism = matches!(path, Path::Ism(_));
        let own_dmb = match &path {
            Path::Ism(p) => Some(p.own.mem.clone()),
            Path::Link(_) => None,
        };
        let counters = TechCounters::new(waker.net(), if ism { Tech::Smcd } else { Tech::Smcr });
        let shared = SharedLock::new(ConnShared::new(peer.unwrap_or_default()), ism);
        Arc::pin_init(
            try_pin_init!(Conn {
                token,
                link <- new_spinlock_bh!(path, "Conn::link"),
                rmb_size: rmb.len() as u32,
                sndbuf_size: AtomicU32::new(sndbuf.as_ref().map_or(0, |b| b.len() as u32)),
                autocork_size,
                ism,
                peer_dmb: OnceArc::new(),
                own_dmb,
                rmb <- new_mutex!(Some(rmb), "Conn::rmb"),
                sndbuf <- new_spinlock_bh!(sndbuf, "Conn::sndbuf"),
                tx_work <- new_work!("Conn::tx_work"),
                waker,
                counters,
                orphaned: AtomicBool::new(false),
                close_state: AtomicU8::new(CloseMachine::active().state as u8),
                shared <- shared,
            }? Error),
            GFP_KERNEL,
        )
    }

    /// How the connection reaches its peer now. A sender keeps what it
    /// got for one message: an SMC-R slot belongs to that link.
    pub(crate) fn path(&self) -> Path {
        self.link.lock().clone()
    }

    /// The link an SMC-R connection sends on now; `ENOLINK` for SMC-D.
    pub(crate) fn link(&self) -> Result<Arc<Link>> {
        match &*self.link.lock() {
            Path::Link(l) => Ok(l.clone()),
            Path::Ism(_) => Err(ENOLINK.into()),
        }
    }

    /// Whether this is an SMC-D connection.
    pub(crate) fn is_ism(&self) -> bool {
        self.ism
    }

    /// The technology whose statistics count the connection.
    pub(crate) fn tech(&self) -> Tech {
        if self.ism {
            Tech::Smcd
        } else {
            Tech::Smcr
        }
    }

    /// Counts a `send` or `recv` on the connection (see
    /// [`TechCounters::payload`]).
    pub(crate) fn count_payload(&self, dir: Dir, len: usize, result: Option<usize>) {
        if let Some(c) = &self.counters {
            c.payload(dir, len, result);
        }
    }

    /// Counts a buffer of the connection found full or too small.
    pub(crate) fn count_buffer_event(&self, dir: Dir, event: BufferEvent) {
        if let Some(c) = &self.counters {
            c.buffer_event(dir, event);
        }
    }

    /// The peer's DMB an SMC-D connection writes into and signals, once
    /// the handshake named it (`None` for SMC-R).
    pub(crate) fn peer_dmb(&self) -> Option<&Dmb> {
        self.peer_dmb.get()
    }

    /// The memory of an SMC-D connection's own DMB (`None` for SMC-R).
    pub(crate) fn own_dmb(&self) -> Option<&BufMem> {
        self.own_dmb.as_deref()
    }

    /// Counts the connection's buffers as given back (upstream counts that
    /// when it frees the connection): an SMC-D connection took its DMB
    /// only (its send buffer is the peer's).
    pub(crate) fn count_buffers_given_back(&self, net: &Net) {
        let t = self.tech();
        tech::buffer_given_back(net, t, Dir::Rx, self.rmb_alloc_size());
        if !self.ism {
            tech::buffer_given_back(net, t, Dir::Tx, self.sndbuf_size());
        }
    }

    /// Whether the connection sends on `link` (a failover moves it).
    pub(crate) fn is_on(&self, link: &Link) -> bool {
        matches!(&*self.link.lock(), Path::Link(l) if core::ptr::eq(&**l, link))
    }

    /// The slot of the link the connection sends on (`LINKS_MAX` for
    /// SMC-D: no slot).
    pub(crate) fn link_idx(&self) -> usize {
        match &*self.link.lock() {
            Path::Link(l) => l.idx,
            Path::Ism(_) => LINKS_MAX,
        }
    }

    /// Moves an SMC-R connection to `link` (a link of the same group); the
    /// caller resends what the peer may not have (see
    /// [`switch_resend_from`](crate::wire::lgr_links::switch_resend_from)).
    /// Returns the link it was on.
    pub(crate) fn set_link(&self, link: Arc<Link>) -> Result<Arc<Link>> {
        match &mut *self.link.lock() {
            Path::Link(l) => Ok(core::mem::replace(l, link)),
            Path::Ism(_) => Err(ENOLINK.into()),
        }
    }

    /// An SMC-D connection learned the peer's DMB (`peer.token` is its
    /// token, `peer.size` its size): our send buffer is its memory from
    /// now on, and our CDC messages go to it.
    pub(crate) fn attach_peer(&self, dmb: Arc<Dmb>, peer: PeerRmb) -> Result {
        if !self.is_ism() {
            return Err(ENOLINK.into());
        }
        // Its ring is our send buffer (written through `peer_dmb`, no
        // `ConnBuf` of our own).
        let ring = dmb.mem.len().saturating_sub(DMB_HEADER);
        // The handshake names it once.
        self.peer_dmb.set(dmb).map_err(|_| EALREADY)?;
        self.sndbuf_size.store(ring as u32, Ordering::Release);
        self.set_peer(peer);
        Ok(())
    }

    /// Size of our RMB.
    pub(crate) fn rmb_size(&self) -> u32 {
        self.rmb_size
    }

    /// Bytes our RMB took (an SMC-D DMB has its header before the ring).
    pub(crate) fn rmb_alloc_size(&self) -> u32 {
        self.rmb_size + if self.ism { DMB_HEADER as u32 } else { 0 }
    }

    /// The server learned where the client's RMB is.
    pub(crate) fn set_peer(&self, peer: PeerRmb) {
        self.shared.lock().peer = peer;
    }

    /// The peer's keys for the connection's RMB changed (a link came or
    /// went): copies its row of the link group's `table` again. Nothing
    /// while the peer's RMB is not known (a server before the Confirm).
    pub(crate) fn reload_peer_keys(&self, table: &PeerKeys) {
        let mut sh = self.shared.lock();
        if sh.peer.size != 0 {
            sh.peer.keys = table.row(sh.peer.row);
        }
    }

    /// Size of our send buffer (0 for SMC-D until the peer's DMB is
    /// known).
    pub(crate) fn sndbuf_size(&self) -> u32 {
        self.sndbuf_size.load(Ordering::Acquire)
    }

    /// How many bytes autocorking holds back at most: half the send
    /// buffer, and not past `net.smc.autocorking_size` (0: never).
    pub(crate) fn autocork_limit(&self) -> u64 {
        (u64::from(self.sndbuf_size()) / 2).min(u64::from(self.autocork_size))
    }

    /// Settles the connection (push, closing flags) from process context
    /// (any context may ask).
    pub(crate) fn schedule_push(self: &Arc<Self>) {
        // Already queued: that run pushes.
        crate::sys::work::queue_arc(self.clone());
    }

    /// Takes the buffers out of a finished SMC-R connection, for the pool.
    pub(crate) fn take_buffers(&self) -> Option<(Arc<LgrBuf>, Arc<LgrBuf>)> {
        let rmb = self.rmb.lock().take()?;
        let sndbuf = self.sndbuf.lock().take()?;
        match (rmb, sndbuf) {
            (ConnBuf::Lgr(r), ConnBuf::Lgr(s)) => Some((r, s)),
            _ => None,
        }
    }

    /// Takes the buffers back (the link group ended): their memory
    /// regions are deregistered now, whoever still holds the connection.
    /// Process context; the link's queue pair is gone.
    pub(crate) fn revoke_buffers(&self) {
        let rmb = self.rmb.lock().take();
        if let Some(b) = rmb.as_ref().and_then(ConnBuf::lgr) {
            b.drop_all();
        }
        let sndbuf = self.sndbuf.lock().take();
        if let Some(b) = sndbuf.as_ref().and_then(ConnBuf::lgr) {
            b.drop_all();
        }
    }

    /// Wakes whoever waits on the socket (readers, writers, pollers).
    pub(crate) fn wake(&self) {
        self.waker.wake_waiters();
    }

    /// Wakes those `w` is for.
    pub(crate) fn wake_for(&self, w: Wake) {
        self.waker.wake(w);
    }

    /// Hooks the socket that owns the connection on (`Some`) or off
    /// (`None`, in its `release`, before it is orphaned); returns the old
    /// hook, to be dropped outside the connection's lock.
    pub(crate) fn set_owner(&self, owner: Option<OwnerHook>) -> Option<OwnerHook> {
        core::mem::replace(&mut self.shared.lock().owner, owner)
    }

    /// A send or poll found no room: see [`OwnerHook::note_no_room`].
    pub(crate) fn note_no_room(&self) {
        if let Some(o) = &self.shared.lock().owner {
            o.note_no_room();
        }
    }

    /// The connection failed (link down, protocol error) or its clcsock
    /// was reset by the peer (whose link failed): what calls report.
    pub(crate) fn failure(&self, sh: &ConnShared) -> Option<Error> {
        if sh.error.is_some() {
            return sh.error;
        }
        // A peer whose link failed resets the TCP connection; its closing
        // flags may have gone with the link.
        if self.waker.was_reset() && !sh.peer_state.any_close() {
            return Some(ECONNRESET.into());
        }
        None
    }

    /// The failure to report to the application, once (as TCP's
    /// `sk_err`): `None` after [`error_reported`](Self::error_reported).
    pub(crate) fn sock_error(&self, sh: &ConnShared) -> Option<Error> {
        if sh.error_reported {
            return None;
        }
        self.failure(sh)
    }

    /// The application got the failure.
    pub(crate) fn error_reported(&self) {
        self.shared.lock().error_reported = true;
    }

    /// Whether the socket was closed (see [`orphan`](Self::orphan)).
    pub(crate) fn is_orphaned(&self) -> bool {
        self.orphaned.load(Ordering::Acquire)
    }

    /// The socket let go of the connection.
    pub(crate) fn orphan(&self) {
        self.orphaned.store(true, Ordering::Release);
    }

    /// Closed by the socket, and by the peer or an abort, its last
    /// connection state flags sent (until the peer has them it may still
    /// write into the RMB), and every RDMA WRITE this side posted from the
    /// send buffer completed (an abort goes straight to closed while they
    /// may still be on their way): nothing can reach the buffers any more.
    /// Writes flushed by a link that went down never complete: such a
    /// connection stays until its link group ends, which destroys the queue
    /// pair before it takes the buffers.
    /// An SMC-D connection has no writes in flight (its bytes are in the
    /// peer's DMB when `send` returns).
    pub(crate) fn finished(&self) -> bool {
        self.orphaned.load(Ordering::Acquire) && {
            let sh = self.shared.lock();
            sh.close.closed()
                && sh.announced_state == sh.sent_state
                && (self.ism || sh.tx_fin == sh.tx_prod)
        }
    }

    /// The connection's close state, numbered as sock_diag reports it:
    /// as of the last event of its machine, read without the lock.
    pub(crate) fn sk_state(&self) -> u8 {
        self.close_state.load(Ordering::Relaxed)
    }

    /// Copies the close state out of `sh` (the connection's, locked) for
    /// [`sk_state`](Self::sk_state).
    pub(crate) fn mirror_state(&self, sh: &ConnShared) {
        self.close_state.store(sh.close.state as u8, Ordering::Relaxed);
    }
}

/// A cursor in a ring of `size` bytes for a byte count.
pub(crate) fn cursor_of(total: u64, size: u32) -> Cursor {
    let size = u64::from(size.max(1));
    Cursor {
        wrap: (total / size) as u16,
        count: (total % size) as u32,
    }
}
