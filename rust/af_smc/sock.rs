// SPDX-License-Identifier: GPL-2.0

//! The state of an SMC socket: where it is in its life, what poll and
//! sock_diag read without the socket lock, and the moves to TCP fallback
//! and to SMC-R mode that connect and accept end with.

use crate::listen::{ListenCounters, ListenSocket, Listener};
use crate::smcr::conn::Conn;
use crate::stats::{count, Event, Side};
use crate::sys::args::SavedAddr;
use crate::sys::bindings as b;
use crate::sys::diag::{DiagExt, DiagInfo, SockDiag};
use crate::sys::errno::EPROTONOSUPPORT;
use crate::sys::listen::{ListenOwner, SavedDataReady};
use crate::sys::owner::{OwnerHook, PollWord};
use crate::sys::print::smc_dbg;
use crate::sys::sock::{SmcSk, SockGuard, SockState};
use crate::sys::socket::{FileRedirect, Socket};
use kernel::sync::{new_spinlock, SpinLock};
use crate::sys::tcp::KernelSocket;
use crate::sys::wake::epoll;
use crate::wire::clc::DeclineReason;
use core::sync::atomic::{AtomicBool, AtomicU32, Ordering};
use kernel::prelude::*;
use kernel::sync::Arc;
use kernel::workqueue::{new_work, Work};


/// Where an SMC socket is in its life.
pub(crate) enum SmcState {
    /// Created, possibly bound; no connection yet.
    Init,
    /// A non-blocking connect offering SMC: TCP and CLC handshakes run in
    /// the socket's connect work item, towards the saved address.
    Connecting(SavedAddr),
    /// Listening for connections.
    Listen(Listener),
    /// Connected over TCP: SMC could not be used, for this reason.
    Fallback(DeclineReason),
    /// Connected over SMC-R. `reported` is false while a non-blocking
    /// connect's success is still to be told to the next `connect()`.
    /// The connection holds an [`OwnerHook`] onto the socket from here (an
    /// accepted socket's once it has its socket) until `release`.
    Smcr { conn: Arc<Conn>, reported: bool },
    /// Released.
    Closed,
}

/// `sk_state` of an SMC socket, numbered as upstream's (and reported by
/// sock_diag): connected.
pub(crate) const SMC_ACTIVE: u8 = 1;
/// Created, not connected.
pub(crate) const SMC_INIT: u8 = 2;

/// The work item that finishes a non-blocking connect.
pub(crate) const CONNECT_WORK: u64 = 1;
/// The work item of a listener that takes TCP's new connections.
pub(crate) const LISTEN_WORK: u64 = 2;

/// The state of an SMC socket, built in place in its `struct sock`.
#[pin_data]
pub(crate) struct SmcSock {
    /// The internal TCP socket. It lives as long as the SMC socket: it is
    /// released when the last reference to the SMC socket goes, which for a
    /// socket nothing else holds is in `close()`.
    pub(super) clcsock: KernelSocket,
    /// A non-blocking connect's handshakes are running: poll must not report
    /// the TCP socket ready before they are done.
    pub(super) connecting: AtomicBool,
    /// Why the connection uses TCP (0 while it does not), for sock_diag.
    pub(super) fallback_reason: AtomicU32,
    /// What the peer's decline said, for sock_diag.
    pub(super) peer_diagnosis: AtomicU32,
    /// The SMC-R connection while the socket is in SMC-R mode, for
    /// sock_diag and poll (which do not take the socket lock). Process
    /// context only: a plain spin lock, cheaper than one that also keeps
    /// softirqs off.
    #[pin]
    pub(super) diag_conn: SpinLock<Option<Arc<Conn>>>,
    /// What poll reads of that connection without a lock (see
    /// `smcr_ops::poll_quick`).
    pub(super) poll: PollWord,
    /// What poll, accept and TCP's SYN handling need of a listener.
    #[pin]
    pub(super) listen: ListenCounters,
    /// TCP's own `sk_data_ready` of the listener while it is hooked.
    pub(super) tcp_data_ready: SavedDataReady,
    #[pin]
    pub(super) connect_work: Work<SmcSock, CONNECT_WORK>,
    #[pin]
    pub(super) listen_work: Work<SmcSock, LISTEN_WORK>,
}

/// The state of an SMC socket behind its socket lock.
pub(crate) struct SmcLocked {
    pub(super) state: SmcState,
    /// What the peer's CLC decline said, if it sent one.
    pub(super) peer_diagnosis: u32,
}

impl SockDiag for SmcSock {
    fn diag_info(&self, ext: DiagExt) -> DiagInfo {
        let reason = self.fallback_reason.load(Ordering::Relaxed);
        let (conn, link, state, dmb, ism) = {
            // The socket's reference keeps the connection while the lock
            // is held (release takes it under the lock): nothing is
            // dropped here.
            let held = self.diag_conn.lock();
            match held.as_ref() {
                Some(c) => (
                    ext.conninfo().then(|| c.diag()),
                    if ext.lgrinfo() {
                        c.link().ok().and_then(|l| l.link_diag())
                    } else {
                        None
                    },
                    Some(c.sk_state()),
                    if ext.dmbinfo() {
                        crate::smcd::lgr::dmb_diag(c)
                    } else {
                        None
                    },
                    c.is_ism(),
                ),
                None => (None, None, None, None, false),
            }
        };
        DiagInfo {
            conn,
            link,
            dmb,
            state,
            mode: if reason != 0 {
                b::SMC_DIAG_MODE_FALLBACK_TCP as u8
            } else if ism {
                b::SMC_DIAG_MODE_SMCD as u8
            } else {
                b::SMC_DIAG_MODE_SMCR as u8
            },
            fallback_reason: reason,
            peer_diagnosis: self.peer_diagnosis.load(Ordering::Relaxed),
        }
    }
}

impl SockState for SmcSock {
    type Locked = SmcLocked;

    fn clcsock(&self) -> &KernelSocket {
        &self.clcsock
    }
}

impl SmcSock {
    /// The state of a new socket that owns `clcsock`; `limit_hs` is its
    /// `SMC_LIMIT_HS`.
    pub(super) fn new(clcsock: KernelSocket, limit_hs: bool) -> impl PinInit<Self, Error> {
        try_pin_init!(SmcSock {
            clcsock,
            connecting: AtomicBool::new(false),
            fallback_reason: AtomicU32::new(0),
            peer_diagnosis: AtomicU32::new(0),
            diag_conn <- new_spinlock!(None, "SmcSock::diag_conn"),
            poll: PollWord::default(),
            listen <- ListenCounters::new(limit_hs),
            tcp_data_ready: SavedDataReady::new(),
            connect_work <- new_work!("SmcSock::connect_work"),
            listen_work <- new_work!("SmcSock::listen_work"),
        }? Error)
    }
}

pub(super) fn new_locked(state: SmcState, peer_diagnosis: u32) -> SmcLocked {
    SmcLocked {
        state,
        peer_diagnosis,
    }
}

pub(super) type Sock<'a> = Socket<'a, SmcSock>;
pub(super) type Guard<'a> = SockGuard<'a, SmcSock>;

/// The clcsock of `sock`.
pub(super) fn clc<'a>(sock: &Sock<'a>) -> &'a KernelSocket {
    &sock.sk().state().clcsock
}

impl ListenOwner for SmcSock {
    fn connection_ready(sk: &SmcSk<Self>) -> bool {
        if sk.state().listen.needs_work_item() {
            // It wakes waiters once it queued the connection.
            sk.queue_work::<LISTEN_WORK>();
            return false;
        }
        // accept() takes it: acceptable now, as with TCP. TCP's wake-up
        // reaches the waiters in accept() and the pollers.
        sk.signal_readable();
        true
    }

    fn saved_data_ready(sk: &SmcSk<Self>) -> &SavedDataReady {
        &sk.state().tcp_data_ready
    }

    fn handshakes_congested(sk: &SmcSk<Self>) -> bool {
        let listen = &sk.state().listen;
        let congested = listen.congested();
        if !congested {
            // The SYN had the option and gets it back.
            listen.smc_request();
        }
        congested
    }
}

impl ListenSocket for SmcSock {
    fn counters(&self) -> &ListenCounters {
        &self.listen
    }

    fn listener(st: &mut SmcLocked) -> Option<&mut Listener> {
        match &mut st.state {
            SmcState::Listen(l) => Some(l),
            _ => None,
        }
    }

    fn take_later(sk: &SmcSk<Self>) {
        sk.queue_work::<LISTEN_WORK>();
    }
}

/// What a TCP listener reports when a connection can be accepted.
pub(super) const POLL_READABLE: u32 = epoll::EPOLLIN | epoll::EPOLLRDNORM;

/// AF_SMC protocol number for IPv4 connections (`socket(AF_SMC, SOCK_STREAM, 0)`).
pub(crate) const SMCPROTO_SMC: i32 = 0;
/// AF_SMC protocol number for IPv6 connections.
pub(crate) const SMCPROTO_SMC6: i32 = 1;

/// Address family of the clcsock for an AF_SMC protocol number.
pub(super) fn clc_family(protocol: i32) -> Result<u32> {
    match protocol {
        SMCPROTO_SMC => Ok(b::AF_INET),
        SMCPROTO_SMC6 => Ok(b::AF_INET6),
        _ => Err(EPROTONOSUPPORT.into()),
    }
}

/// Moves a connected socket to TCP fallback: record why, and hand the file to
/// the clcsock so that user space talks to TCP directly from now on.
pub(super) fn switch_to_fallback(sock: &Sock<'_>, st: &mut Guard<'_>, side: Side, reason: DeclineReason) {
    let net = sock.sk().net();
    count(net, side, Event::Connection);
    count(net, side, Event::Fallback(reason));
    enter_fallback(sock, st, side, reason);
}

/// The fallback itself (the counters are the caller's).
pub(super) fn enter_fallback(sock: &Sock<'_>, st: &mut Guard<'_>, side: Side, reason: DeclineReason) {
    smc_dbg!(
        "{:?}: fallback to TCP, reason {:#010x}",
        side,
        reason.code()
    );
    if matches!(st.state, SmcState::Connecting(_)) {
        // The work item's wait marked the TCP socket connected; the
        // application completes a non-blocking connect itself (its next
        // connect() returns 0), as with TCP.
        clc(sock).mark_connecting();
    }
    st.state = SmcState::Fallback(reason);
    // From here on the application's calls are TCP's: a connecting
    // application's receive timeout must be the one it set, also while the
    // handshake waited (upstream copies the socket's settings to the
    // clcsock alike). A server's socket had no owner yet: its clcsock keeps
    // what it inherited from the listener.
    if side == Side::Client {
        clc(sock).set_rcvtimeo(sock.sk().rcvtimeo(false));
    }
    let state = sock.sk().state();
    state
        .fallback_reason
        .store(reason.code(), Ordering::Relaxed);
    state
        .peer_diagnosis
        .store(st.peer_diagnosis, Ordering::Relaxed);
    st.set_sk_state(SMC_ACTIVE);
    sock.set_connected(st);
    // Without a file (a kernel socket) the calls keep coming through our
    // proto_ops, which forward to the clcsock in this state.
    if FileRedirect::install(sock, st) && side == Side::Client {
        // TCP signalled the connection while the file was still ours.
        clc(sock).signal_connected();
    }
}

/// The SMC-R connection of a socket in SMC-R mode.
pub(super) fn smcr_conn(sock: &Sock<'_>) -> Option<Arc<Conn>> {
    smcr_locked(sock).map(|(conn, _)| conn)
}

/// The SMC-R connection of a socket in SMC-R mode, with the socket lock
/// the caller goes on with (sends and receives sleep through it).
pub(super) fn smcr_locked<'a>(sock: &'a Sock<'_>) -> Option<(Arc<Conn>, Guard<'a>)> {
    let st = sock.sk().lock();
    match &st.state {
        SmcState::Smcr { conn, .. } => Some((conn.clone(), st)),
        _ => None,
    }
}

/// Moves a connected socket to SMC-R mode over `conn`.
pub(super) fn enter_smcr(sock: &Sock<'_>, st: &mut Guard<'_>, side: Side, conn: Arc<Conn>) {
    count(sock.sk().net(), side, Event::Connection);
    let (event, mode) = if conn.is_ism() {
        (Event::SmcdV2, "SMC-D")
    } else {
        (Event::SmcrV2, "SMC-R")
    };
    count(sock.sk().net(), side, event);
    smc_dbg!("{:?}: {}, token {:#x}", side, mode, conn.token);
    let reported = !matches!(st.state, SmcState::Connecting(_));
    *sock.sk().state().diag_conn.lock() = Some(conn.clone());
    hook_owner(sock, &conn);
    st.state = SmcState::Smcr { conn, reported };
    st.set_sk_state(SMC_ACTIVE);
    sock.set_connected(st);
}

/// Hooks the socket onto `conn` as its owner: the connection signals the
/// socket's owners and publishes what poll reads into the socket.
pub(super) fn hook_owner(sock: &Sock<'_>, conn: &Conn) {
    sock.sk().state().poll.set_sndbuf(conn.sndbuf_size());
    drop(conn.set_owner(Some(OwnerHook::new(sock.sk(), |s: &SmcSock| &s.poll))));
}
