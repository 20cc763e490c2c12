// SPDX-License-Identifier: GPL-2.0

//! Sending on an SMC-R connection: the application's bytes are copied into
//! the send buffer, RDMA-written into the peer's RMB at the producer cursor
//! (two writes when the ring wraps), then one CDC message announces them.
//!
//! The send buffer and the peer's RMB are rings of their own sizes; a chunk
//! never crosses the end of the send buffer, so it crosses at most the end
//! of the peer's ring (two writes).

use super::cdc;
use super::conn::Conn;
use crate::sys::args::MsgHdr;
use crate::sys::errno::{EAGAIN, EPIPE};
use crate::wire::cdc::ProducerFlags;
use kernel::prelude::*;

/// Room for new bytes: what the peer's RMB can take and what the send
/// buffer has free, whichever is less.
fn room(conn: &Conn) -> Result<u64> {
    let sh = conn.shared.lock();
    if let Some(e) = sh.error {
        return Err(e);
    }
    if sh.sent_state.peer_done_writing || sh.sent_state.peer_conn_closed {
        return Err(EPIPE.into());
    }
    let peer_free = u64::from(sh.peer.size).saturating_sub(sh.tx_prod - sh.tx_acked.min(sh.tx_prod));
    let buf_free = u64::from(conn.sndbuf_size()).saturating_sub(sh.tx_prod - sh.tx_fin.min(sh.tx_prod));
    Ok(peer_free.min(buf_free))
}

/// Sends `len` bytes of `msg`. A blocking call returns when every byte is
/// on its way, as TCP's does; `wait` sleeps until the connection changes
/// (or fails with `EAGAIN` after the timeout, or on a signal).
pub(crate) fn send(
    conn: &Conn,
    msg: &mut MsgHdr<'_>,
    len: usize,
    nonblock: bool,
    mut wait: impl FnMut(&dyn Fn() -> bool) -> Result,
) -> Result<usize> {
    let mut sent = 0usize;
    while sent < len {
        let mut free = room(conn)?;
        if free == 0 {
            if nonblock {
                break;
            }
            let ready = || room(conn).map_or(true, |r| r > 0);
            match wait(&ready) {
                Ok(()) => {}
                Err(e) if sent > 0 && (e == EAGAIN || e == kernel::error::code::ERESTARTSYS || e == kernel::error::code::EINTR) => break,
                Err(e) => return Err(e),
            }
            free = room(conn)?;
            if free == 0 {
                continue;
            }
        }
        let n = ((len - sent) as u64).min(free) as usize;
        let n = push(conn, msg, n)?;
        if n == 0 {
            break;
        }
        sent += n;
    }
    if sent == 0 && len > 0 {
        return Err(EAGAIN.into());
    }
    Ok(sent)
}

/// Copies `n` bytes of `msg` into the send buffer, writes them into the
/// peer's RMB and announces them. Returns how many bytes went.
fn push(conn: &Conn, msg: &mut MsgHdr<'_>, n: usize) -> Result<usize> {
    let size = conn.sndbuf_size() as usize;
    let (start, peer) = {
        let sh = conn.shared.lock();
        (sh.tx_prod, sh.peer)
    };
    let psize = peer.size as usize;
    if psize == 0 {
        return Err(EPIPE.into());
    }
    let off = (start % size as u64) as usize;
    let n = n.min(size - off);
    let copied = conn.sndbuf.buf().fill_from_msg(off, n, msg)?;
    if copied == 0 {
        return Ok(0);
    }
    let lgr = &conn.lgr;
    let slot = lgr.get_slot()?;
    // Where the bytes go in the peer's ring, split at its end.
    let poff = (start % psize as u64) as usize;
    let first = copied.min(psize - poff);
    let pieces = [(off, poff, first), (off + first, 0, copied - first)];
    let mut part = 0;
    let mut result = Ok(());
    for (src, dst, len) in pieces {
        if len == 0 {
            continue;
        }
        let Some(sge) = conn.sndbuf.sge(src, len as u32) else {
            result = Err(EPIPE.into());
            break;
        };
        result = lgr.post_write(slot, part, sge, peer.addr + dst as u64, peer.rkey);
        if result.is_err() {
            break;
        }
        part += 1;
    }
    let result = result.and_then(|()| {
        cdc::post(conn, slot, ProducerFlags::default(), |sh| {
            sh.tx_prod += copied as u64;
        })
    });
    if let Err(e) = result {
        lgr.put_slot(slot);
        return Err(e);
    }
    Ok(copied)
}

/// Whether a send would not block (poll's `EPOLLOUT`).
pub(crate) fn writable(conn: &Conn) -> bool {
    room(conn).map_or(true, |r| r > 0)
}
