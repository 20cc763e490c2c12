// SPDX-License-Identifier: GPL-2.0

//! Receiving on an SMC-R connection: the peer's bytes are in our RMB
//! between our consumer cursor and the peer's producer cursor; reading
//! copies them out and moves the consumer cursor, which goes back to the
//! peer in a CDC message once enough room was freed (not after every read).
//!
//! Urgent data (`MSG_OOB`) is the last byte of a write the peer flagged.
//! As with TCP, a read stops at it; unless `SO_OOBINLINE`, it is taken out
//! of the stream when the reader reaches it (the consumer cursor passes
//! it at once, which lets the peer go on) and read with `MSG_OOB`.

use super::cdc;
use super::conn::{Conn, ConnBuf};
use super::path::across_wrap;
use super::shared::{ConnShared, SharedGuard};
use crate::stats::tech::{BufferEvent, Dir};
use crate::sys::args::MsgHdr;
use crate::sys::bindings as b;
use crate::sys::errno::{EAGAIN, ECONNRESET, EINVAL};
use kernel::prelude::*;

/// What a reader finds.
enum Avail {
    /// Bytes to read (up to the urgent mark at most), from the consumer
    /// cursor (the second value: only the reader moves it, so it holds
    /// until the reader's next step).
    Bytes(u64, u64),
    /// The peer will send no more: end of stream.
    Eof,
    /// Nothing yet.
    Empty,
}

/// Where an urgent byte not yet taken out of the stream is, if the
/// stream has one (not with `SO_OOBINLINE`).
fn pending_mark(sh: &ConnShared) -> Option<u64> {
    match sh.urg_rx {
        Some(u) if !sh.oob_inline && u.byte.is_none() && u.pos >= sh.rx_cons => Some(u.pos),
        _ => None,
    }
}

/// What a reader finds (the connection's lock is held).
fn avail_locked(conn: &Conn, sh: &ConnShared) -> Result<Avail> {
    let mut n = sh.rx_prod.saturating_sub(sh.rx_cons);
    if let Some(pos) = pending_mark(sh) {
        // Up to the mark; at the mark, what follows the urgent byte.
        n = match pos - sh.rx_cons {
            0 => n.saturating_sub(1),
            before => before,
        };
    }
    if n > 0 {
        return Ok(Avail::Bytes(n, sh.rx_cons));
    }
    if let Some(e) = conn.sock_error(sh) {
        return Err(e);
    }
    // A failure already reported ends the stream, as TCP's reset does.
    if sh.rcv_shutdown || conn.failure(sh).is_some() {
        return Ok(Avail::Eof);
    }
    Ok(Avail::Empty)
}

/// Where stream position `pos` is in the RMB.
fn rmb_offset(conn: &Conn, pos: u64) -> usize {
    (pos % u64::from(conn.rmb_size().max(1))) as usize
}

/// The reader is at the urgent mark and the urgent byte (there since it
/// was announced with it) is still in the stream.
fn at_pending_mark(sh: &ConnShared) -> bool {
    pending_mark(sh) == Some(sh.rx_cons)
}

/// Takes the urgent byte out of the stream when the reader is at it: it
/// is kept for `MSG_OOB`, and the consumer cursor passes it and goes to
/// the peer at once (the peer writes nothing after an urgent byte before
/// that). Process context.
fn take_urgent_at_mark(conn: &Conn) -> Result {
    if !at_pending_mark(&conn.shared.lock()) {
        return Ok(());
    }
    {
        let guard = conn.rmb.lock();
        let mut sh = conn.shared.lock();
        let Some(pos) = pending_mark(&sh) else {
            return Ok(());
        };
        if pos != sh.rx_cons || sh.rx_prod <= pos {
            return Ok(());
        }
        let rmb = guard.as_ref().ok_or(ECONNRESET)?;
        rmb.sync_for_cpu();
        let mut byte = [0u8; 1];
        rmb.read(rmb_offset(conn, pos), &mut byte)?;
        sh.rx_cons += 1;
        if let Some(u) = sh.urg_rx.as_mut() {
            u.byte = Some(byte[0]);
            u.at_mark = true;
        }
    }
    cdc::update_consumer(conn);
    Ok(())
}

/// Counts what a reader asking for `len` bytes finds, `readable` bytes:
/// a full RMB, or more than it asks for (upstream's
/// `SMC_STAT_RMB_RX_FULL`, `SMC_STAT_RMB_RX_SIZE_SMALL`).
fn count_reader_meets(conn: &Conn, len: usize, readable: u64) {
    if readable >= u64::from(conn.rmb_size()) {
        conn.count_buffer_event(Dir::Rx, BufferEvent::Full);
    }
    if (len as u64) < readable {
        conn.count_buffer_event(Dir::Rx, BufferEvent::SizeSmall);
    }
}

/// What a reader finds, under the connection's lock: whether it is at the
/// urgent mark (the byte to take out of the stream first), and what there
/// is to read. A read about to start from here (`!peek`, bytes there)
/// leaves the mark behind (TCP clears its urgent data once a read passes
/// the mark): only this reader moves `rx_cons`, so what it found holds
/// until it read.
fn look(conn: &Conn, sh: &mut SharedGuard<'_>, peek: bool) -> (bool, Result<Avail>) {
    let at_mark = !peek && at_pending_mark(sh);
    let found = avail_locked(conn, sh);
    // Borrowed mutably (to be published) only when there is urgent data to
    // mark passed.
    if !peek && !at_mark && sh.urg_rx.is_some() && matches!(found, Ok(Avail::Bytes(..))) {
        let cons = sh.rx_cons;
        if let Some(u) = sh.urg_rx.as_mut() {
            u.at_mark = false;
            u.read |= cons > u.pos;
        }
    }
    (at_mark, found)
}

/// Reads up to `len` bytes into `msg`. `peek` leaves them; `waitall`
/// waits for all of them (unless the stream ends or fails); `oob_inline`
/// is the socket's `SO_OOBINLINE`.
#[allow(clippy::too_many_arguments)]
pub(crate) fn recv(
    conn: &Conn,
    msg: &mut MsgHdr<'_>,
    len: usize,
    nonblock: bool,
    peek: bool,
    waitall: bool,
    oob_inline: bool,
    mut wait: impl FnMut(&dyn Fn() -> bool) -> Result,
) -> Result<usize> {
    let mut got = 0usize;
    // What the reader finds, looked at once per step: the first with the
    // socket's `SO_OOBINLINE`, later ones with the consumer cursor's move.
    let (first, readable) = {
        let mut sh = conn.shared.lock();
        if sh.oob_inline != oob_inline {
            sh.oob_inline = oob_inline;
        }
        (look(conn, &mut sh, peek), sh.rx_prod.saturating_sub(sh.rx_cons))
    };
    count_reader_meets(conn, len, readable);
    let mut found = Some(first);
    while got < len {
        let (at_mark, mut now) = match found.take() {
            Some(f) => f,
            None => look(conn, &mut conn.shared.lock(), peek),
        };
        if at_mark {
            if let Err(e) = take_urgent_at_mark(conn) {
                if got == 0 {
                    return Err(e);
                }
                break;
            }
            now = look(conn, &mut conn.shared.lock(), peek).1;
        }
        let (n, cons) = match now {
            Ok(Avail::Bytes(n, cons)) => (n, cons),
            Ok(Avail::Eof) => break,
            Err(e) if got == 0 => {
                conn.error_reported();
                return Err(e);
            }
            Err(_) => break,
            Ok(Avail::Empty) => {
                if got > 0 && !waitall {
                    break;
                }
                if nonblock {
                    if got == 0 {
                        return Err(EAGAIN.into());
                    }
                    break;
                }
                // Also once the urgent byte at the mark arrived: it is taken
                // out of the stream above, so that the peer sends on.
                let ready = || {
                    let sh = conn.shared.lock();
                    !matches!(avail_locked(conn, &sh), Ok(Avail::Empty))
                        || (!peek && at_pending_mark(&sh))
                };
                match wait(&ready) {
                    Ok(()) => continue,
                    Err(e) if got == 0 => return Err(e),
                    Err(_) => break,
                }
            }
        };
        let want = ((len - got) as u64).min(n) as usize;
        let size = conn.rmb_size() as usize;
        let start = cons + if peek { got as u64 } else { 0 };
        let off = (start % size as u64) as usize;
        // The bytes from `off`, and from the ring's start where they wrap.
        let copied = if let Some(dmb) = conn.own_dmb() {
            // SMC-D: our DMB lives as long as the connection, and no
            // device writes it.
            across_wrap(off, want, size, |at, n| ConnBuf::drain_dmb_to_msg(dmb, at, n, msg))?
        } else {
            let rmb = conn.rmb.lock();
            let rmb = rmb.as_ref().ok_or(ECONNRESET)?;
            // What the peer's device wrote, visible to the CPU.
            rmb.sync_for_cpu();
            across_wrap(off, want, size, |at, n| rmb.drain_to_msg(at, n, msg))?
        };
        got += copied;
        if peek {
            if copied < want || got as u64 >= n {
                break;
            }
            continue;
        }
        let (due, at_mark) = {
            let mut sh = conn.shared.lock();
            sh.rx_cons += copied as u64;
            let at_mark = pending_mark(&sh) == Some(sh.rx_cons);
            if !at_mark && copied == want && got < len {
                // The next step's look, under this lock.
                found = Some(look(conn, &mut sh, peek));
            }
            (cdc::consumer_update_after_read(conn, &mut sh), at_mark)
        };
        if at_mark {
            // A read stops at the urgent mark, as TCP's does; the bytes
            // before it are the caller's whatever happens to the mark.
            let _ = take_urgent_at_mark(conn);
            break;
        }
        if copied < want {
            break;
        }
        // The consumer update never fails the read: the cursor moved, the
        // bytes are the caller's.
        if due {
            cdc::update_consumer(conn);
        }
    }
    Ok(got)
}

/// `recv(MSG_OOB)`: the urgent byte, once (`peek` leaves it). `EINVAL`
/// when there is none (or `SO_OOBINLINE`), `EAGAIN` while it is announced
/// but not there yet, as TCP.
pub(crate) fn recv_urgent(
    conn: &Conn,
    msg: &mut MsgHdr<'_>,
    len: usize,
    peek: bool,
    oob_inline: bool,
) -> Result<usize> {
    if oob_inline {
        return Err(EINVAL.into());
    }
    let (byte, pos) = {
        let sh = conn.shared.lock();
        match sh.urg_rx {
            Some(u) if !u.read => (u.byte, u.pos),
            _ if sh.peer_flags.urg_data_pending => return Err(EAGAIN.into()),
            _ => return Err(EINVAL.into()),
        }
    };
    let byte = match byte {
        Some(b) => b,
        None => {
            // Still in the RMB: the peer writes nothing after it before
            // it was consumed.
            let rmb = conn.rmb.lock();
            let rmb = rmb.as_ref().ok_or(ECONNRESET)?;
            rmb.sync_for_cpu();
            let mut b = [0u8; 1];
            rmb.read(rmb_offset(conn, pos), &mut b)?;
            b[0]
        }
    };
    msg.add_flags(b::MSG_OOB);
    if len == 0 {
        msg.add_flags(b::MSG_TRUNC);
        return Ok(0);
    }
    if !peek {
        if let Some(u) = conn.shared.lock().urg_rx.as_mut() {
            u.read = true;
        }
        // At the mark, the byte leaves the stream now (as upstream's
        // `smc_rx_recv_urg` moves the consumer cursor past it): the peer
        // writes nothing after an urgent byte until it is consumed, and
        // this reader may wait for what follows without reading in-band.
        let _ = take_urgent_at_mark(conn);
    }
    Ok(msg.copy_out(&[byte]))
}

/// `SIOCINQ`: bytes to read, up to the urgent mark when one is ahead
/// (as TCP counts them).
pub(crate) fn bytes_to_read(sh: &ConnShared) -> u64 {
    match pending_mark(sh) {
        Some(pos) => pos - sh.rx_cons,
        None => sh.rx_prod - sh.rx_cons,
    }
}

/// `SIOCATMARK`: the reader is at the urgent mark.
pub(crate) fn at_urgent_mark(sh: &ConnShared) -> bool {
    match sh.urg_rx {
        Some(u) => u.at_mark || (u.byte.is_none() && u.pos == sh.rx_cons),
        None => false,
    }
}

/// What poll reports of the reading side.
pub(crate) struct ReadPoll {
    /// A read would not block (`EPOLLIN`).
    pub(crate) readable: bool,
    /// Reading is shut down: the peer is done writing or `SHUT_RD`
    /// (`EPOLLRDHUP`).
    pub(crate) shut: bool,
    /// Urgent data not read yet (`EPOLLPRI`).
    pub(crate) urgent: bool,
}

/// What poll reports of the reading side; `oob_inline` is the socket's
/// `SO_OOBINLINE`. A reader at the urgent mark whose urgent byte arrived
/// has it taken out of the stream here, as by a read: a poller waiting for
/// what follows it (without reading the byte, or in-band) would wait
/// forever otherwise, as the peer writes nothing after an urgent byte
/// until it is consumed. `rest` is what the caller asks of the
/// connection under the same lock. Process context.
pub(crate) fn poll_read<R>(conn: &Conn, oob_inline: bool, rest: impl FnOnce(&ConnShared) -> R) -> (ReadPoll, R) {
    let mut sh = conn.shared.lock();
    // Borrowed mutably (published again when let go) only for a change.
    if sh.oob_inline != oob_inline {
        sh.oob_inline = oob_inline;
    }
    if at_pending_mark(&sh) {
        drop(sh);
        let _ = take_urgent_at_mark(conn);
        sh = conn.shared.lock();
    }
    let shut = sh.rcv_shutdown;
    let (readable, shut) = match avail_locked(conn, &sh) {
        Ok(Avail::Bytes(..)) => (true, shut),
        Ok(Avail::Eof) | Err(_) => (true, true),
        Ok(Avail::Empty) => (false, shut),
    };
    let read = ReadPoll {
        readable,
        shut,
        urgent: !sh.oob_inline && sh.urg_rx.is_some_and(|u| !u.read),
    };
    // The next poll may go by the published word (`rest` changes nothing).
    sh.publish_for_poll();
    (read, rest(&sh))
}
