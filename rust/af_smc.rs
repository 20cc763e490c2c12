// SPDX-License-Identifier: GPL-2.0

//! The AF_SMC socket: its states, the switch to TCP fallback, and the
//! `proto_ops` every SMC socket is driven through.
//!
//! Every SMC socket owns a TCP socket, the clcsock. Until SMC-R is agreed on
//! a connection, calls are served by the clcsock. Once a connection has
//! fallen back to TCP, the socket's file is redirected to the clcsock so
//! that every later call is TCP's own, with TCP's exact semantics and no
//! extra cost; `release` undoes the redirection.

use crate::listen::{self, ListenCounters, ListenSocket, Listener};
use crate::smcr::conn::Conn;
use crate::stats::{count, Event, Side};
use crate::sys::args::{
    MsgHdr, PollTable, SavedAddr, SockAddr, SockAddrOut, SockoptIn, SockoptOut,
};
use crate::sys::bindings as b;
use crate::sys::diag::{DiagExt, DiagInfo, SockDiag};
use crate::sys::errno::{EINVAL, ENOPROTOOPT, EPROTONOSUPPORT, ESOCKTNOSUPPORT};
use crate::sys::family::{AcceptArg, SocketFamily};
use crate::sys::listen::{ListenOwner, SavedDataReady};
use crate::sys::net::Net;
use crate::sys::owner::OwnerHook;
use crate::sys::print::smc_dbg;
use crate::sys::sock::{SmcSk, SockGuard, SockState};
use crate::sys::socket::{FileRedirect, Socket};
use crate::sys::sync::{new_spinlock_bh, SpinLockBh};
use crate::sys::tcp::KernelSocket;
use crate::sys::work::SockWork;
use crate::wire::clc::DeclineReason;
use core::sync::atomic::{AtomicBool, AtomicU32, Ordering};
use kernel::prelude::*;
use kernel::sync::Arc;
use kernel::workqueue::{impl_has_work, new_work, Work, WorkItem};

mod connect;
mod smcr_ops;

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
    /// `owner` lets the connection's receive path signal the socket's
    /// owner (an accepted socket gets it once it has its socket).
    Smcr {
        conn: Arc<Conn>,
        reported: bool,
        owner: Option<OwnerHook>,
    },
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
    clcsock: KernelSocket,
    /// A non-blocking connect's handshakes are running: poll must not report
    /// the TCP socket ready before they are done.
    connecting: AtomicBool,
    /// Why the connection uses TCP (0 while it does not), for sock_diag.
    fallback_reason: AtomicU32,
    /// What the peer's decline said, for sock_diag.
    peer_diagnosis: AtomicU32,
    /// The SMC-R connection while the socket is in SMC-R mode, for
    /// sock_diag and poll (which do not take the socket lock).
    #[pin]
    diag_conn: SpinLockBh<Option<Arc<Conn>>>,
    /// What poll, accept and TCP's SYN handling need of a listener.
    #[pin]
    listen: ListenCounters,
    /// TCP's own `sk_data_ready` of the listener while it is hooked.
    tcp_data_ready: SavedDataReady,
    #[pin]
    connect_work: Work<SmcSock, CONNECT_WORK>,
    #[pin]
    listen_work: Work<SmcSock, LISTEN_WORK>,
}

/// The state of an SMC socket behind its socket lock.
pub(crate) struct SmcLocked {
    state: SmcState,
    /// What the peer's CLC decline said, if it sent one.
    peer_diagnosis: u32,
}

impl SockDiag for SmcSock {
    fn diag_info(&self, ext: DiagExt) -> DiagInfo {
        let reason = self.fallback_reason.load(Ordering::Relaxed);
        let (conn, link, state) = {
            // The socket's reference keeps the connection while the lock
            // is held: nothing is dropped here (softirqs are off).
            let held = self.diag_conn.lock();
            match held.as_ref() {
                Some(c) => (
                    ext.conninfo().then(|| c.diag()),
                    if ext.lgrinfo() {
                        c.lgr.link_diag()
                    } else {
                        None
                    },
                    Some(c.sk_state()),
                ),
                None => (None, None, None),
            }
        };
        DiagInfo {
            conn,
            link,
            state,
            mode: if reason != 0 {
                b::SMC_DIAG_MODE_FALLBACK_TCP as u8
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

impl_has_work! {
    impl HasWork<Self, CONNECT_WORK> for SmcSock { self.connect_work }
    impl HasWork<Self, LISTEN_WORK> for SmcSock { self.listen_work }
}

impl WorkItem<CONNECT_WORK> for SmcSock {
    type Pointer = SockWork<SmcSock>;

    fn run(sk: SockWork<SmcSock>) {
        connect::finish_connect(&sk);
    }
}

impl WorkItem<LISTEN_WORK> for SmcSock {
    type Pointer = SockWork<SmcSock>;

    fn run(sk: SockWork<SmcSock>) {
        listen::take_connections(&sk);
    }
}

impl SmcSock {
    /// The state of a new socket that owns `clcsock`; `limit_hs` is its
    /// `SMC_LIMIT_HS`.
    fn new(clcsock: KernelSocket, limit_hs: bool) -> impl PinInit<Self, Error> {
        try_pin_init!(SmcSock {
            clcsock,
            connecting: AtomicBool::new(false),
            fallback_reason: AtomicU32::new(0),
            peer_diagnosis: AtomicU32::new(0),
            diag_conn <- new_spinlock_bh!(None, "SmcSock::diag_conn"),
            listen <- ListenCounters::new(limit_hs),
            tcp_data_ready: SavedDataReady::new(),
            connect_work <- new_work!("SmcSock::connect_work"),
            listen_work <- new_work!("SmcSock::listen_work"),
        }? Error)
    }
}

fn new_locked(state: SmcState, peer_diagnosis: u32) -> SmcLocked {
    SmcLocked {
        state,
        peer_diagnosis,
    }
}

type Sock<'a> = Socket<'a, SmcSock>;
type Guard<'a> = SockGuard<'a, SmcSock>;

/// The clcsock of `sock`.
fn clc<'a>(sock: &Sock<'a>) -> &'a KernelSocket {
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

/// `EPOLLIN | EPOLLRDNORM` (uapi/linux/eventpoll.h): what a TCP listener
/// reports when a connection can be accepted.
const POLL_READABLE: u32 = 0x0001 | 0x0040;

/// AF_SMC protocol number for IPv4 connections (`socket(AF_SMC, SOCK_STREAM, 0)`).
pub(crate) const SMCPROTO_SMC: i32 = 0;
/// AF_SMC protocol number for IPv6 connections.
pub(crate) const SMCPROTO_SMC6: i32 = 1;

/// Address family of the clcsock for an AF_SMC protocol number.
fn clc_family(protocol: i32) -> Result<u32> {
    match protocol {
        SMCPROTO_SMC => Ok(b::AF_INET),
        SMCPROTO_SMC6 => Ok(b::AF_INET6),
        _ => Err(EPROTONOSUPPORT.into()),
    }
}

/// Moves a connected socket to TCP fallback: record why, and hand the file to
/// the clcsock so that user space talks to TCP directly from now on.
fn switch_to_fallback(sock: &Sock<'_>, st: &mut Guard<'_>, side: Side, reason: DeclineReason) {
    let net = sock.sk().net();
    count(net, side, Event::Connection);
    count(net, side, Event::Fallback(reason));
    enter_fallback(sock, st, side, reason);
}

/// The fallback itself (the counters are the caller's).
fn enter_fallback(sock: &Sock<'_>, st: &mut Guard<'_>, side: Side, reason: DeclineReason) {
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
fn smcr_conn(sock: &Sock<'_>) -> Option<Arc<Conn>> {
    smcr_locked(sock).map(|(conn, _)| conn)
}

/// The SMC-R connection of a socket in SMC-R mode, with the socket lock
/// the caller goes on with (sends and receives sleep through it).
fn smcr_locked<'a>(sock: &'a Sock<'_>) -> Option<(Arc<Conn>, Guard<'a>)> {
    let st = sock.sk().lock();
    match &st.state {
        SmcState::Smcr { conn, .. } => Some((conn.clone(), st)),
        _ => None,
    }
}

/// Moves a connected socket to SMC-R mode over `conn`.
fn enter_smcr(sock: &Sock<'_>, st: &mut Guard<'_>, side: Side, conn: Arc<Conn>) {
    count(sock.sk().net(), side, Event::Connection);
    count(sock.sk().net(), side, Event::SmcrV2);
    smc_dbg!("{:?}: SMC-R, token {:#x}", side, conn.token);
    let reported = !matches!(st.state, SmcState::Connecting(_));
    *sock.sk().state().diag_conn.lock() = Some(conn.clone());
    st.state = SmcState::Smcr {
        conn,
        reported,
        owner: Some(OwnerHook::new(sock.sk())),
    };
    st.set_sk_state(SMC_ACTIVE);
    sock.set_connected(st);
}

/// A new socket of `kind` with a TCP clcsock of `family`.
fn new_socket(
    net: &Net,
    kind: i16,
    family: u32,
) -> Result<(impl PinInit<SmcSock, Error>, SmcLocked)> {
    if kind as u32 != b::sock_type_SOCK_STREAM {
        return Err(ESOCKTNOSUPPORT.into());
    }
    let clcsock = KernelSocket::new_tcp(net, family)?;
    // New sockets take the namespace's default (upstream's `limit_smc_hs`).
    let limit_hs = crate::stats::limit_handshakes(net);
    Ok((
        SmcSock::new(clcsock, limit_hs),
        new_locked(SmcState::Init, 0),
    ))
}

#[vtable]
impl SocketFamily for SmcSock {
    const INITIAL_STATE: u8 = SMC_INIT;

    fn create(
        net: &Net,
        kind: i16,
        protocol: i32,
    ) -> Result<(impl PinInit<Self, Error>, SmcLocked)> {
        if kind as u32 != b::sock_type_SOCK_STREAM {
            return Err(ESOCKTNOSUPPORT.into());
        }
        new_socket(net, kind, clc_family(protocol)?)
    }

    fn create_inet(
        net: &Net,
        kind: i16,
        family: u32,
    ) -> Result<(impl PinInit<Self, Error>, SmcLocked)> {
        new_socket(net, kind, family)
    }

    fn release(sock: &Sock<'_>) {
        let sk = sock.sk();
        if sk.state().connecting.load(Ordering::Acquire) {
            // Unblock the work item's handshake, then wait for it.
            clc(sock).abort();
        }
        {
            let mut st = sk.lock();
            let old = core::mem::replace(&mut st.state, SmcState::Closed);
            // Dropped here, in process context, not under the spinlock.
            let listed = sk.state().diag_conn.lock().take();
            drop(listed);
            match old {
                SmcState::Listen(l) => l.stop(&st),
                SmcState::Smcr { conn, owner, .. } => {
                    // Nothing reaches the socket from the connection now.
                    drop(owner);
                    smcr_ops::release(sock, &mut st, conn)
                }
                _ => {}
            }
        }
        sk.cancel_work::<CONNECT_WORK>();
        sk.cancel_work::<LISTEN_WORK>();
    }

    fn bind(sock: &Sock<'_>, addr: SockAddr<'_>) -> Result {
        let st = sock.sk().lock();
        if !matches!(st.state, SmcState::Init) {
            return Err(EINVAL.into());
        }
        clc(sock).bind(addr)
    }

    fn connect(sock: &Sock<'_>, addr: SockAddr<'_>, flags: i32) -> Result {
        connect::connect(sock, addr, flags)
    }

    fn accept(sock: &Sock<'_>, arg: &AcceptArg) -> Result<(impl PinInit<Self, Error>, SmcLocked)> {
        let nonblock = arg.flags & b::O_NONBLOCK as i32 != 0;
        let conn = listen::accept(sock.sk(), nonblock)?;
        let state = match conn.smcr {
            Some(c) => SmcState::Smcr {
                conn: c,
                reported: true,
                owner: None,
            },
            None => SmcState::Fallback(conn.reason),
        };
        Ok((
            SmcSock::new(conn.clcsock, false),
            new_locked(state, conn.peer_diagnosis),
        ))
    }

    fn accepted(sock: &Sock<'_>) {
        let mut st = sock.sk().lock();
        // The handshake was counted when it finished.
        match st.state {
            SmcState::Fallback(reason) => enter_fallback(sock, &mut st, Side::Server, reason),
            SmcState::Smcr {
                ref conn,
                ref mut owner,
                ..
            } => {
                *owner = Some(OwnerHook::new(sock.sk()));
                *sock.sk().state().diag_conn.lock() = Some(conn.clone());
                st.set_sk_state(SMC_ACTIVE);
                sock.set_connected(&st);
            }
            _ => {}
        }
    }

    fn getname(sock: &Sock<'_>, out: SockAddrOut<'_>, peer: bool) -> Result<i32> {
        clc(sock).getname(out, peer)
    }

    fn poll(sock: &Sock<'_>, pt: PollTable<'_>) -> u32 {
        // Waiters queue on the clcsock: it is what wakes them, before and
        // after a fallback (the connect work item wakes them when done, a
        // listener when a connection is ready to be accepted).
        let mask = clc(sock).poll(pt);
        // Without the socket lock, as upstream's `smc_poll`: a sender or
        // reader that sleeps holding it must not stall poll in other
        // threads.
        let conn = sock.sk().state().diag_conn.lock().clone();
        if let Some(conn) = conn {
            return smcr_ops::poll_mask(&conn);
        }
        let state = sock.sk().state();
        if state.listen.listening() {
            // Finished connections, and those accept() takes from TCP.
            return if state.listen.acceptable(clc(sock)) {
                POLL_READABLE
            } else {
                0
            };
        }
        if state.connecting.load(Ordering::Acquire) {
            // Nothing to report until the work item is done: connected to
            // TCP is not connected yet, and a TCP error is only reported
            // (SO_ERROR, POLLERR) once the file is TCP's.
            return 0;
        }
        mask
    }

    fn ioctl(sock: &Sock<'_>, cmd: u32, arg: usize) -> Result<i32> {
        if let Some(conn) = smcr_conn(sock) {
            if let Some(r) = smcr_ops::ioctl(&conn, cmd, arg) {
                return r;
            }
        }
        clc(sock).ioctl(cmd, arg)
    }

    fn listen(sock: &Sock<'_>, backlog: i32) -> Result {
        let sk = sock.sk();
        let mut st = sk.lock();
        match &mut st.state {
            SmcState::Init => {
                // SYN-ACKs answer the SMC option of SYNs that carry it.
                clc(sock).set_syn_smc(true);
                clc(sock).listen(backlog)?;
                let l = Listener::new(&st, backlog);
                st.state = SmcState::Listen(l);
                // Connections may have arrived before the hook was in place.
                sk.queue_work::<LISTEN_WORK>();
            }
            SmcState::Listen(l) => {
                clc(sock).listen(backlog)?;
                l.set_backlog(sk, backlog);
            }
            _ => return Err(EINVAL.into()),
        }
        Ok(())
    }

    fn shutdown(sock: &Sock<'_>, how: i32) -> Result {
        if let Some(conn) = smcr_conn(sock) {
            return smcr_ops::shutdown(sock, &conn, how);
        }
        let sk = sock.sk();
        if !sk.state().listen.listening() {
            return clc(sock).shutdown(how);
        }
        let mut st = sk.lock();
        clc(sock).shutdown(how)?;
        // A listener shut down for reading stops listening, as TCP's does
        // (it may listen again).
        if how != b::sock_shutdown_cmd_SHUT_WR as i32 && matches!(st.state, SmcState::Listen(_)) {
            if let SmcState::Listen(l) = core::mem::replace(&mut st.state, SmcState::Init) {
                l.stop(&st);
            }
        }
        Ok(())
    }

    fn setsockopt(sock: &Sock<'_>, level: i32, name: i32, val: SockoptIn<'_>) -> Result {
        if level == b::SOL_SMC as i32 {
            return match name as u32 {
                b::SMC_LIMIT_HS => {
                    let on = val.read_int()? != 0;
                    sock.sk().state().listen.set_limit_handshakes(on);
                    Ok(())
                }
                _ => Err(ENOPROTOOPT.into()),
            };
        }
        if level == b::SOL_SOCKET as i32 {
            // Socket-level options describe the SMC socket (timeouts, buffer
            // sizes, ...) and the connection the clcsock carries: set both.
            sock.setsockopt_own(name, val)?;
        }
        clc(sock).setsockopt(level, name, val)?;
        if level == b::SOL_TCP as i32 {
            smcr_ops::count_tcp_option(sock, name, val);
        }
        Ok(())
    }

    fn getsockopt(sock: &Sock<'_>, level: i32, name: i32, out: SockoptOut<'_>) -> Result {
        if level == b::SOL_SMC as i32 {
            return match name as u32 {
                b::SMC_LIMIT_HS => {
                    out.write_int(i32::from(sock.sk().state().listen.limit_handshakes()))
                }
                _ => Err(ENOPROTOOPT.into()),
            };
        }
        clc(sock).getsockopt(level, name, out)
    }

    fn sendmsg(sock: &Sock<'_>, msg: MsgHdr<'_>, len: usize) -> Result<i32> {
        connect::wait_connected(sock, msg.flags(), true)?;
        if let Some((conn, st)) = smcr_locked(sock) {
            return smcr_ops::sendmsg(sock, &conn, st, msg, len);
        }
        clc(sock).sendmsg(msg, len)
    }

    fn recvmsg(sock: &Sock<'_>, msg: MsgHdr<'_>, len: usize, flags: i32) -> Result<i32> {
        connect::wait_connected(sock, flags as u32, false)?;
        if let Some((conn, st)) = smcr_locked(sock) {
            return smcr_ops::recvmsg(sock, &conn, st, msg, len, flags);
        }
        clc(sock).recvmsg(msg, len, flags)
    }
}
