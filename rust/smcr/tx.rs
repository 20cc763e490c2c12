// SPDX-License-Identifier: GPL-2.0

//! Sending on an SMC-R connection: `send` copies the application's bytes
//! into the send buffer and returns; [`push`] RDMA-writes what the peer's
//! RMB has room for at the producer cursor (two writes when its ring
//! wraps), then one CDC message announces them. What does not fit waits in
//! the send buffer and goes when the peer reports room (its consumer
//! cursor) or a send slot frees up, from the completion handler.
//!
//! Cursors: `tx_fin <= tx_prod <= tx_copied`; the send buffer holds
//! `tx_copied - tx_fin` bytes (written or not, not yet completed).

use super::cdc;
use super::close;
use super::conn::{Conn, ConnShared};
use crate::sys::args::MsgHdr;
use crate::sys::errno::{EAGAIN, ECONNRESET, EINTR, EPIPE};
use crate::sys::ib::mr::RegisteredBuf;
use crate::wire::cdc::ProducerFlags;
use crate::wire::close::CloseEvent;
use kernel::error::code::ERESTARTSYS;
use kernel::prelude::*;

/// Room for new bytes in the send buffer.
fn room(conn: &Conn) -> Result<u64> {
    let sh = conn.shared.lock();
    if let Some(e) = conn.failure(&sh) {
        return Err(e);
    }
    // The peer closed: its RMB may already serve another connection.
    if sh.close.write_closed() || sh.peer_state.any_close() {
        return Err(EPIPE.into());
    }
    let used = sh.tx_copied.saturating_sub(sh.tx_fin);
    Ok(u64::from(conn.sndbuf_size()).saturating_sub(used))
}

/// Sends `len` bytes of `msg`. A blocking call returns when every byte is
/// in the send buffer, as TCP's does; `wait` sleeps until the connection
/// changes (or fails with `EAGAIN` after the timeout, or on a signal).
pub(crate) fn send(
    conn: &Conn,
    msg: &mut MsgHdr<'_>,
    len: usize,
    nonblock: bool,
    mut wait: impl FnMut(&dyn Fn() -> bool) -> Result,
) -> Result<usize> {
    let mut sent = 0usize;
    while sent < len {
        let free = room(conn)?;
        if free == 0 {
            if nonblock {
                break;
            }
            let ready = || room(conn).map_or(true, |r| r > 0);
            match wait(&ready) {
                Ok(()) => continue,
                Err(e) if sent > 0 && (e == EAGAIN || e == ERESTARTSYS || e == EINTR) => break,
                Err(e) => return Err(e),
            }
        }
        let n = copy_in(conn, msg, ((len - sent) as u64).min(free) as usize)?;
        if n == 0 {
            break;
        }
        sent += n;
        push(conn);
    }
    if sent == 0 && len > 0 {
        return Err(EAGAIN.into());
    }
    Ok(sent)
}

/// Copies up to `n` bytes of `msg` into the send buffer (up to its end at
/// most); returns how many.
fn copy_in(conn: &Conn, msg: &mut MsgHdr<'_>, n: usize) -> Result<usize> {
    let size = conn.sndbuf_size() as usize;
    // Only this socket's caller (under the socket lock) moves `tx_copied`.
    let start = conn.shared.lock().tx_copied;
    let off = (start % size as u64) as usize;
    let copied = {
        let sndbuf = conn.sndbuf.lock();
        let buf = sndbuf.as_ref().ok_or(ECONNRESET)?.buf();
        let copied = buf.fill_from_msg(off, n.min(size - off), msg)?;
        // The device reads what the CPU wrote (a no-op where DMA is coherent).
        buf.sync_for_device();
        copied
    };
    conn.shared.lock().tx_copied += copied as u64;
    Ok(copied)
}

/// Writes what waits in the send buffer into the peer's RMB, as far as it
/// has room and send slots are free; process context (the completion
/// handler asks for it through the connection's work item). A connection
/// that waits for a slot is pushed again when one completes.
pub(crate) fn push(conn: &Conn) {
    let sndbuf = conn.sndbuf.lock();
    let Some(sndbuf) = sndbuf.as_ref() else {
        return;
    };
    let mut sh = conn.shared.lock();
    // Nothing goes into the RMB of a peer that closed: it may already
    // serve another connection.
    while sh.error.is_none() && !sh.peer_state.any_close() && sh.tx_copied > sh.tx_prod {
        let Ok(slot) = conn.lgr.try_get_slot() else {
            conn.lgr.wait_for_slot();
            return;
        };
        match write_chunk(conn, sndbuf, &mut sh, slot) {
            Ok(true) => {}
            Ok(false) => {
                conn.lgr.put_slot(slot);
                return;
            }
            Err(e) => {
                conn.lgr.put_slot(slot);
                sh.error = Some(e);
                drop(sh);
                conn.wake();
                return;
            }
        }
    }
}

/// Writes one chunk on `slot`: no further than the end of the send buffer
/// and the room in the peer's RMB; `false` when there is no room.
fn write_chunk(
    conn: &Conn,
    sndbuf: &RegisteredBuf,
    sh: &mut ConnShared,
    slot: u32,
) -> Result<bool> {
    let peer = sh.peer;
    let (size, psize) = (u64::from(conn.sndbuf_size()), u64::from(peer.size));
    if psize == 0 {
        return Ok(false);
    }
    let peer_free = psize.saturating_sub(sh.tx_prod - sh.tx_acked.min(sh.tx_prod));
    if peer_free == 0 {
        return Ok(false);
    }
    let off = sh.tx_prod % size;
    let n = (sh.tx_copied - sh.tx_prod).min(peer_free).min(size - off);
    let poff = sh.tx_prod % psize;
    let first = n.min(psize - poff);
    let pieces = [(off, poff, first), (off + first, 0, n - first)];
    for (part, (src, dst, len)) in (0u32..).zip(pieces) {
        if len == 0 {
            continue;
        }
        let sge = sndbuf.sge(src as usize, len as u32).ok_or(EPIPE)?;
        conn.lgr
            .post_write(slot, part, sge, peer.addr.wrapping_add(dst), peer.rkey)?;
    }
    sh.tx_prod += n;
    if sh.tx_prod == sh.tx_copied {
        // A shutdown or close that waited for the last bytes goes with
        // them (its flags into this message); wake-ups follow from the
        // completion of the message.
        let _ = close::event(sh, CloseEvent::TxFlushed);
    }
    // More waits and the peer's RMB is full: ask for its consumer cursor.
    let blocked = sh.tx_copied > sh.tx_prod && sh.tx_prod - sh.tx_acked >= psize;
    let flags = ProducerFlags {
        write_blocked: blocked,
        ..ProducerFlags::default()
    };
    // Should this fail, the writes went without their announcement: the
    // caller fails the connection, which is no longer in step with the peer.
    cdc::post_locked(conn, sh, slot, flags)?;
    Ok(true)
}

/// Whether a send would not block (poll's `EPOLLOUT`).
pub(crate) fn writable(conn: &Conn) -> bool {
    room(conn).map_or(true, |r| r > 0)
}
