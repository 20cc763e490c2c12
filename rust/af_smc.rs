// SPDX-License-Identifier: GPL-2.0

//! The AF_SMC socket: its states, the switch to TCP fallback, and the
//! `proto_ops` every SMC socket is driven through.
//!
//! Every SMC socket owns a TCP socket, the clcsock. Until SMC-R is agreed on
//! a connection, calls are served by the clcsock. Once a connection has
//! fallen back to TCP, the socket's file is redirected to the clcsock so
//! that every later call is TCP's own, with TCP's exact semantics and no
//! extra cost; `release` undoes the redirection.

use crate::listen::{self, Listener};
use crate::stats::Side;
use crate::sys::args::{MsgHdr, PollTable, SockAddr, SockAddrOut, SockoptIn, SockoptOut};
use crate::sys::bindings as b;
use crate::sys::errno::{EINVAL, ENOPROTOOPT, ESOCKTNOSUPPORT};
use crate::sys::family::{AcceptArg, SocketFamily};
use crate::sys::net::Net;
use crate::sys::tcp::KernelSocket;
use crate::sys::work::SockWork;
use core::sync::atomic::Ordering;
use kernel::prelude::*;
use kernel::workqueue::{impl_has_work, WorkItem};

mod connect;
mod smcr_ops;
mod sock;

pub(crate) use sock::SmcSock;
use sock::{
    clc, clc_family, enter_fallback, new_locked, smcr_conn, smcr_locked, SmcLocked, SmcState,
    Sock, CONNECT_WORK, LISTEN_WORK, POLL_READABLE, SMC_ACTIVE, SMC_INIT,
};

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
                SmcState::Smcr { conn, .. } => {
                    // Nothing reaches the socket from the connection now.
                    drop(conn.set_owner(None));
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
            SmcState::Smcr { ref conn, .. } => {
                // Poll asks `diag_conn` once the hook is on.
                *sock.sk().state().diag_conn.lock() = Some(conn.clone());
                sock::hook_owner(sock, conn);
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
        // Without the socket lock, as upstream's `smc_poll`: a sender or
        // reader that sleeps holding it must not stall poll in other
        // threads.
        let state = sock.sk().state();
        if state.poll.connected() {
            // An SMC connection's mask is its own: TCP is not asked. What
            // its connection published into the socket tells it; what that
            // cannot tell (or before the first poll) is asked of the
            // connection under its lock.
            clc(sock).poll_wait(pt);
            let oob_inline = sock.sk().oob_inline();
            if let Some(mask) = smcr_ops::poll_quick(&state.poll, clc(sock).sk().was_reset(), oob_inline) {
                return mask;
            }
            let conn = state.diag_conn.lock().clone();
            // The socket keeps its connection until `release`, which no
            // poll outlives.
            return conn.map_or(0, |c| smcr_ops::poll_locked(&c, oob_inline));
        }
        let mask = clc(sock).poll(pt);
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
