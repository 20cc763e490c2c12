// SPDX-License-Identifier: GPL-2.0

//! The socket calls of a connection in SMC-R mode: send and receive through
//! the RMBs, poll from the connection's cursors, shutdown and close with
//! CDC flags. Callers sleep on the clcsock's wait queue, which the
//! connection's completion handling wakes.

use super::{Guard, Sock};
use crate::smcr::conn::Conn;
use crate::smcr::{rx, tx};
use crate::wire::cdc::ConnStateFlags;
use crate::sys::args::MsgHdr;
use crate::sys::bindings as b;
use kernel::prelude::*;
use kernel::sync::Arc;

/// `send`/`write` on an SMC-R socket; `st` is its lock, taken by the caller.
pub(super) fn sendmsg(
    sock: &Sock<'_>,
    conn: &Conn,
    mut st: Guard<'_>,
    mut msg: MsgHdr<'_>,
    len: usize,
) -> Result<i32> {
    let nonblock = msg.flags() & b::MSG_DONTWAIT != 0;
    let sk = sock.sk();
    let clcsock = &sk.state().clcsock;
    let mut timeo = sk.sndtimeo(nonblock);
    let n = tx::send(conn, &mut msg, len, nonblock, |ready| {
        st.wait_exclusive(clcsock, &mut timeo, ready)
    })?;
    Ok(n as i32)
}

/// `recv`/`read` on an SMC-R socket; `st` is its lock, taken by the caller.
pub(super) fn recvmsg(
    sock: &Sock<'_>,
    conn: &Conn,
    mut st: Guard<'_>,
    mut msg: MsgHdr<'_>,
    len: usize,
    flags: i32,
) -> Result<i32> {
    let flags = flags as u32;
    let nonblock = flags & b::MSG_DONTWAIT != 0;
    let peek = flags & b::MSG_PEEK != 0;
    let waitall = flags & b::MSG_WAITALL != 0;
    let sk = sock.sk();
    let clcsock = &sk.state().clcsock;
    let mut timeo = sk.rcvtimeo(nonblock);
    let n = rx::recv(conn, &mut msg, len, nonblock, peek, waitall, |ready| {
        st.wait_exclusive(clcsock, &mut timeo, ready)
    })?;
    Ok(n as i32)
}

/// `EPOLL*` bits (uapi/linux/eventpoll.h).
const EPOLLIN: u32 = 0x0001;
const EPOLLOUT: u32 = 0x0004;
const EPOLLERR: u32 = 0x0008;
const EPOLLHUP: u32 = 0x0010;
const EPOLLRDNORM: u32 = 0x0040;
const EPOLLWRNORM: u32 = 0x0100;
const EPOLLRDHUP: u32 = 0x2000;

/// What poll reports for an SMC-R connection.
pub(super) fn poll_mask(conn: &Conn) -> u32 {
    let mut mask = 0;
    let (readable, hup) = rx::readable(conn);
    if readable {
        mask |= EPOLLIN | EPOLLRDNORM;
    }
    if hup {
        mask |= EPOLLRDHUP;
    }
    if tx::writable(conn) {
        mask |= EPOLLOUT | EPOLLWRNORM;
    }
    let sh = conn.shared.lock();
    if conn.failure(&sh).is_some() {
        mask |= EPOLLERR | EPOLLHUP;
    }
    if sh.sent_state.peer_done_writing && hup {
        mask |= EPOLLHUP;
    }
    mask
}

/// `shutdown(2)`: a shutdown for writing tells the peer we are done.
pub(super) fn shutdown(conn: &Conn, how: i32) -> Result {
    if how == b::sock_shutdown_cmd_SHUT_RD as i32 {
        return Ok(());
    }
    let done = {
        let sh = conn.shared.lock();
        sh.sent_state.peer_done_writing || sh.pending_state.peer_done_writing
    };
    if !done {
        tx::send_state(
            conn,
            ConnStateFlags {
                peer_done_writing: true,
                ..ConnStateFlags::default()
            },
        )?;
    }
    conn.wake();
    Ok(())
}

/// `close(2)`: the peer is told the connection is closed; the buffers stay
/// with the link group until the peer can no longer write into them.
pub(super) fn release(conn: Arc<Conn>) {
    let tell = {
        let sh = conn.shared.lock();
        sh.error.is_none() && !sh.sent_state.peer_conn_closed
    };
    if tell {
        let _ = tx::send_state(
            &conn,
            ConnStateFlags {
                peer_done_writing: true,
                peer_conn_closed: true,
                peer_conn_abort: false,
            },
        );
    }
    conn.orphan();
    let lgr = conn.lgr.clone();
    drop(conn);
    lgr.reap();
}
