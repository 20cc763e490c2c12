// SPDX-License-Identifier: GPL-2.0

//! The socket calls of a connection in SMC-R mode: send and receive through
//! the RMBs, poll from the connection's cursors, shutdown and close with
//! CDC flags. Callers sleep on the clcsock's wait queue, which the
//! connection's completion handling wakes.

use super::sock::{smcr_locked, Guard, Sock};
use crate::smcr::close::{self, Deferred};
use crate::smcr::conn::Conn;
use crate::smcr::shared::Snapshot;
use crate::smcr::{rx, settle, tx};
use crate::stats::tech::{self, Dir, Special};
use crate::sys::args::{MsgHdr, SockoptIn};
use crate::sys::bindings as b;
use crate::sys::errno::EINVAL;
use crate::sys::owner::PollWord;
use crate::sys::wake::epoll::*;
use crate::wire::close::{CloseEvent, Shutdown};
use kernel::prelude::*;
use kernel::sync::Arc;
use kernel::uaccess::UserSlice;

/// `send`/`write` on an SMC-R socket; `st` is its lock, taken by the caller.
pub(super) fn sendmsg(
    sock: &Sock<'_>,
    conn: &Conn,
    mut st: Guard<'_>,
    mut msg: MsgHdr<'_>,
    len: usize,
) -> Result<i32> {
    let flags = msg.flags();
    let nonblock = flags & b::MSG_DONTWAIT != 0;
    let sk = sock.sk();
    let clcsock = &sk.state().clcsock;
    let mut timeo = sk.sndtimeo(nonblock);
    let urgent = flags & b::MSG_OOB != 0;
    let (nodelay, cork) = clcsock.sk().nodelay_cork();
    let more = flags & b::MSG_MORE != 0 || cork;
    let net = sk.net();
    if urgent {
        tech::special(net, conn.tech(), Special::Urgent);
    }
    let r = tx::send(
        conn,
        &mut msg,
        len,
        nonblock,
        urgent,
        more,
        nodelay,
        |ready| st.wait(clcsock, &mut timeo, ready),
    );
    st.set_sk_state(conn.sk_state());
    conn.count_payload(Dir::Tx, len, r.as_ref().ok().copied());
    match r {
        Ok(n) => Ok(n as i32),
        Err(e) => Err(sk.stream_error(flags, e)),
    }
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
    let inline = sk.oob_inline();
    let net = sk.net();
    if flags & b::MSG_OOB != 0 {
        let r = rx::recv_urgent(conn, &mut msg, len, peek, inline);
        if r.is_ok() {
            tech::special(net, conn.tech(), Special::Urgent);
        }
        let got = r.as_ref().ok().copied();
        conn.count_payload(Dir::Rx, got.unwrap_or(0), got);
        return Ok(r? as i32);
    }
    let r = rx::recv(
        conn,
        &mut msg,
        len,
        nonblock,
        peek,
        waitall,
        inline,
        |ready| st.wait(clcsock, &mut timeo, ready),
    );
    st.set_sk_state(conn.sk_state());
    let got = r.as_ref().ok().copied();
    conn.count_payload(Dir::Rx, got.unwrap_or(0), got);
    Ok(r? as i32)
}

/// `TCP_NODELAY` switched on and `TCP_CORK` switched off on an SMC-R
/// connection count as special socket calls, as upstream's.
pub(super) fn count_tcp_option(sock: &Sock<'_>, name: i32, val: SockoptIn<'_>) {
    let Ok(v) = val.read_int() else {
        return;
    };
    let call = match name as u32 {
        b::TCP_NODELAY if v != 0 => Special::Nodelay,
        b::TCP_CORK if v == 0 => Special::Cork,
        _ => return,
    };
    if let Some((conn, _)) = smcr_locked(sock) {
        tech::special(sock.sk().net(), conn.tech(), call);
    }
}

/// What poll reports for an SMC connection from what the socket's
/// [`PollWord`] says of it (`was_reset`: the clcsock's), without a lock:
/// `None` for what needs the connection's lock (an urgent byte that may be
/// at the reader, `SO_OOBINLINE` changed, no room to write: the owner is
/// to be told, see `Conn::note_no_room`). The same mask as [`poll_locked`].
pub(super) fn poll_quick(poll: &PollWord, was_reset: bool, oob_inline: bool) -> Option<u32> {
    let (word, sndbuf) = poll.read();
    let s = Snapshot::from_word(word);
    if !s.usable(oob_inline) {
        return None;
    }
    let failed = s.failed(was_reset);
    let sock_error = failed && !s.error_reported();
    // `tx::writable`: an error or a closed side lets a write fail at once.
    let writable = failed || s.write_closed() || u64::from(sndbuf) > s.tx_used();
    if !writable {
        return None;
    }
    // `rx::poll_read`: bytes, else an error or the end of the stream.
    let readable = s.readable(was_reset);
    let shut = s.rcv_shutdown() || (readable && !s.bytes());
    let mut mask = EPOLLOUT | EPOLLWRNORM;
    if sock_error {
        mask |= EPOLLERR;
    }
    if failed {
        mask |= EPOLLHUP;
    }
    if readable {
        mask |= EPOLLIN | EPOLLRDNORM;
    }
    if shut {
        mask |= EPOLLRDHUP;
    }
    if s.urgent() {
        mask |= EPOLLPRI;
    }
    if s.write_closed() && shut {
        mask |= EPOLLHUP;
    }
    Some(mask)
}

/// What poll reports for an SMC connection, under its lock; `oob_inline`
/// is the socket's `SO_OOBINLINE`.
pub(super) fn poll_locked(conn: &Conn, oob_inline: bool) -> u32 {
    // The sending side's bits under the lock the reading side's take.
    let (r, (mut mask, write_closed)) = rx::poll_read(conn, oob_inline, |sh| {
        let mut mask = 0;
        if tx::writable(conn, sh) {
            mask |= EPOLLOUT | EPOLLWRNORM;
        } else if let Some(o) = &sh.owner {
            o.note_no_room();
        }
        if conn.sock_error(sh).is_some() {
            mask |= EPOLLERR;
        }
        if conn.failure(sh).is_some() {
            mask |= EPOLLHUP;
        }
        (mask, sh.close.write_closed())
    });
    if r.readable {
        mask |= EPOLLIN | EPOLLRDNORM;
    }
    if r.shut {
        mask |= EPOLLRDHUP;
    }
    if r.urgent {
        mask |= EPOLLPRI;
    }
    // Both directions shut down, as TCP's `SHUTDOWN_MASK`.
    if write_closed && r.shut {
        mask |= EPOLLHUP;
    }
    mask
}

/// `shutdown(2)`: `SHUT_WR` tells the peer we are done writing once the
/// send buffer is out, `SHUT_RD` ends reading; the clcsock follows as
/// upstream's does.
pub(super) fn shutdown(sock: &Sock<'_>, conn: &Arc<Conn>, how: i32) -> Result {
    let how = match how as u32 {
        b::sock_shutdown_cmd_SHUT_RD => Shutdown::Read,
        b::sock_shutdown_cmd_SHUT_WR => Shutdown::Write,
        b::sock_shutdown_cmd_SHUT_RDWR => Shutdown::ReadWrite,
        _ => return Err(EINVAL.into()),
    };
    let st = sock.sk().lock();
    let d = {
        let mut sh = conn.shared.lock();
        let d = close::event(conn, &mut sh, CloseEvent::AppShutdown(how))?;
        sh.shut_rd |= how != Shutdown::Write;
        d
    };
    settle::settle(conn);
    st.set_sk_state(conn.sk_state());
    drop(st);
    finish(sock, conn, d);
    Ok(())
}

/// The clcsock's part of a close or shutdown, and the wake-ups. A
/// shutdown for writing leaves the TCP connection alone: its FIN could
/// reach the peer before our CDC message and wake its readers before
/// there is anything to report (upstream shuts it down; TCP's FIN comes
/// with the end of the data).
fn finish(sock: &Sock<'_>, conn: &Conn, d: Deferred) {
    let how = match d.clcsock_shutdown {
        Some(Shutdown::Read) => Some(b::sock_shutdown_cmd_SHUT_RD),
        Some(Shutdown::ReadWrite) => Some(b::sock_shutdown_cmd_SHUT_RDWR),
        Some(Shutdown::Write) | None => None,
    };
    if let Some(how) = how {
        // The connection's state is in its CDC flags; the TCP connection
        // only mirrors it.
        let _ = sock.sk().state().clcsock.shutdown(how as i32);
    }
    if d.wake {
        conn.wake();
    }
}

/// `close(2)`, with the socket lock `st` held: the peer is told the
/// connection is closed after the send buffer (aborted when data is left
/// unread, or with `SO_LINGER` 0). A linger time waits for the send buffer
/// to go out; without one the close completes in the background. The
/// buffers stay with the link group until the peer can no longer write
/// into them.
pub(super) fn release(sock: &Sock<'_>, st: &mut Guard<'_>, conn: Arc<Conn>) {
    let sk = sock.sk();
    let linger = sk.linger();
    let d = {
        let mut sh = conn.shared.lock();
        if linger == Some(0) {
            // Like TCP's reset: what waits is dropped, the peer sees an
            // abort (and a reset TCP connection).
            let _ = close::event(&conn, &mut sh, CloseEvent::LocalAbort);
        }
        close::event(&conn, &mut sh, CloseEvent::AppClose).unwrap_or_default()
    };
    if let Some(mut timeo) = linger.filter(|t| *t > 0) {
        settle::settle(&conn);
        let clcsock = &sk.state().clcsock;
        let flushed = || {
            let sh = conn.shared.lock();
            sh.tx_copied == sh.tx_prod || conn.failure(&sh).is_some()
        };
        // Every completion that moves the cursors wakes the waiter: it
        // sleeps again until all is out, the time is up or a signal came.
        while !flushed() && st.wait(clcsock, &mut timeo, flushed).is_ok() {}
        // All is out or the linger time is over: the close goes now.
        let _ = close::event(&conn, &mut conn.shared.lock(), CloseEvent::TxFlushed);
    }
    // The connection holds its buffers no longer (upstream counts that
    // when it frees the connection).
    conn.count_buffers_given_back(sk.net());
    conn.orphan();
    settle::settle(&conn);
    finish(sock, &conn, d);
    st.set_sk_state(conn.sk_state());
}

/// `SIOC*` requests (uapi/linux/sockios.h, asm-generic/ioctls.h).
const SIOCINQ: u32 = 0x541B;
const SIOCOUTQ: u32 = 0x5411;
const SIOCATMARK: u32 = 0x8905;
const SIOCOUTQNSD: u32 = 0x894B;

/// The `ioctl`s TCP answers from its queues, answered from the connection's
/// cursors: bytes to read, bytes not yet completed towards the peer,
/// bytes not yet written into the peer's RMB, and whether the reader is at
/// the urgent mark. `None` for other requests (the clcsock's).
pub(super) fn ioctl(conn: &Conn, cmd: u32, arg: usize) -> Option<Result<i32>> {
    let value = {
        let sh = conn.shared.lock();
        match cmd {
            SIOCINQ => rx::bytes_to_read(&sh),
            // SMC-D: what the peer's buffer has is delivered (TCP's
            // acknowledged), read or not.
            SIOCOUTQ if conn.is_ism() => sh.tx_copied - sh.tx_prod,
            SIOCOUTQ => sh.tx_copied - sh.tx_fin,
            SIOCOUTQNSD => sh.tx_copied - sh.tx_prod,
            SIOCATMARK => u64::from(rx::at_urgent_mark(&sh)),
            _ => return None,
        }
    };
    let value = i32::try_from(value).unwrap_or(i32::MAX);
    let mut out = UserSlice::new(arg, core::mem::size_of::<i32>()).writer();
    Some(out.write(&value).map(|()| 0))
}
