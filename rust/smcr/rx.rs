// SPDX-License-Identifier: GPL-2.0

//! Receiving on an SMC-R connection: the peer's bytes are in our RMB
//! between our consumer cursor and the peer's producer cursor; reading
//! copies them out and moves the consumer cursor, which goes back to the
//! peer in a CDC message once enough room was freed (not after every read).

use super::cdc;
use super::conn::{Conn, ConnShared};
use crate::wire::bufsize::rmb_wnd_update_limit;
use crate::sys::args::MsgHdr;
use crate::sys::errno::{EAGAIN, ECONNRESET};
use kernel::prelude::*;

/// What a reader finds.
enum Avail {
    /// Bytes to read.
    Bytes(u64),
    /// The peer will send no more: end of stream.
    Eof,
    /// Nothing yet.
    Empty,
}

fn avail(conn: &Conn) -> Result<Avail> {
    let sh = conn.shared.lock();
    let n = sh.rx_prod.saturating_sub(sh.rx_cons);
    if n > 0 {
        return Ok(Avail::Bytes(n));
    }
    if let Some(e) = conn.failure(&sh) {
        return Err(e);
    }
    if sh.rcv_shutdown {
        return Ok(Avail::Eof);
    }
    Ok(Avail::Empty)
}

/// Whether the consumer cursor goes back to the peer now: once upstream's
/// window update limit was read since the last update, or at once when the
/// peer is blocked or asks for it -- not after every read.
fn update_due(conn: &Conn, sh: &ConnShared) -> bool {
    let limit = u64::from(rmb_wnd_update_limit(conn.rmb_size()));
    let unsent = sh.rx_cons - sh.rx_cons_sent;
    unsent > 0 && (unsent >= limit || sh.peer_flags.write_blocked || sh.peer_flags.cons_curs_upd_req)
}

/// Reads up to `len` bytes into `msg`. `peek` leaves them; `waitall`
/// waits for all of them (unless the stream ends or fails).
pub(crate) fn recv(
    conn: &Conn,
    msg: &mut MsgHdr<'_>,
    len: usize,
    nonblock: bool,
    peek: bool,
    waitall: bool,
    mut wait: impl FnMut(&dyn Fn() -> bool) -> Result,
) -> Result<usize> {
    let mut got = 0usize;
    while got < len {
        let n = match avail(conn) {
            Ok(Avail::Bytes(n)) => n,
            Ok(Avail::Eof) => break,
            Err(e) if got == 0 => return Err(e),
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
                let ready = || !matches!(avail(conn), Ok(Avail::Empty));
                match wait(&ready) {
                    Ok(()) => continue,
                    Err(e) if got == 0 => return Err(e),
                    Err(_) => break,
                }
            }
        };
        let want = ((len - got) as u64).min(n) as usize;
        let size = conn.rmb_size() as usize;
        let start = conn.shared.lock().rx_cons + if peek { got as u64 } else { 0 };
        let off = (start % size as u64) as usize;
        let first = want.min(size - off);
        let copied = {
            let rmb = conn.rmb.lock();
            let rmb = rmb.as_ref().ok_or(ECONNRESET)?.buf();
            // What the peer's device wrote, visible to the CPU.
            rmb.sync_for_cpu();
            let mut copied = rmb.drain_to_msg(off, first, msg)?;
            if copied == first && want > first {
                copied += rmb.drain_to_msg(0, want - first, msg)?;
            }
            copied
        };
        got += copied;
        if peek {
            if copied < want || got as u64 >= n {
                break;
            }
            continue;
        }
        let due = {
            let mut sh = conn.shared.lock();
            sh.rx_cons += copied as u64;
            update_due(conn, &sh)
        };
        if copied < want {
            break;
        }
        if due {
            cdc::send(conn, |_| {})?;
        }
    }
    Ok(got)
}

/// Whether a read would not block (poll's `EPOLLIN`), and whether
/// reading is shut down: the peer is done writing or `SHUT_RD`
/// (`EPOLLRDHUP`).
pub(crate) fn readable(conn: &Conn) -> (bool, bool) {
    let shut = conn.shared.lock().rcv_shutdown;
    match avail(conn) {
        Ok(Avail::Bytes(_)) => (true, shut),
        Ok(Avail::Eof) | Err(_) => (true, true),
        Ok(Avail::Empty) => (false, shut),
    }
}
