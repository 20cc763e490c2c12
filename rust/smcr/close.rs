// SPDX-License-Identifier: GPL-2.0

//! How an SMC-R connection closes: the wire crate's close state machine
//! ([`crate::wire::close`]) driven by the socket calls (`shutdown`,
//! `close`), by the peer's CDC flags and by the loss of the link, and what
//! its actions mean here.
//!
//! The machine runs under the connection's lock. What cannot be done there
//! (a CDC message that needs a send slot, a reset of the clcsock, freeing
//! the connection) comes back as [`Deferred`] for the caller to carry out
//! once the lock is dropped: at once in process context, from the
//! connection's work item when the event came in softirq context.

use super::conn::Conn;
use super::shared::ConnShared;
use crate::sys::errno::{ECONNABORTED, ECONNRESET, ENOTCONN};
use crate::wire::close::{CloseEvent, CloseFlag, Shutdown, SockError};
use kernel::prelude::*;

/// What is left to do after an event, outside the connection's lock.
#[derive(Clone, Copy, Debug, Default)]
#[must_use]
pub(crate) struct Deferred {
    /// Shut the clcsock down this way (socket calls only: it is theirs).
    pub(crate) clcsock_shutdown: Option<Shutdown>,
    /// Wake readers, writers and pollers.
    pub(crate) wake: bool,
}

/// Delivers `event` to the connection's machine (its lock is held),
/// keeping the facts it needs current first. `ENOTCONN` for a shutdown of
/// a connection that is not up.
///
/// New connection state flags go into `sent_state` (the next CDC message
/// carries them; [`settle`](super::settle::settle) sends one if nothing
/// else does), a reset of the clcsock into `clcsock_reset`; both are done
/// by `settle`.
pub(crate) fn event(conn: &Conn, sh: &mut ConnShared, event: CloseEvent) -> Result<Deferred> {
    // An emptied send buffer matters only to a close or shutdown waiting
    // for it (a no-op of the machine otherwise, see the wire crate's
    // tests): pushes deliver it whenever they empty the buffer.
    if event == CloseEvent::TxFlushed && !sh.close.awaits_flush() {
        return Ok(Deferred::default());
    }
    let (unread, pending) = (sh.rx_prod > sh.rx_cons, sh.tx_copied > sh.tx_prod);
    let mut out = Deferred::default();
    let mut next = Some(event);
    while let Some(ev) = next.take() {
        let a = sh.close.step(ev, unread, pending);
        conn.mirror_state(sh);
        if a.not_connected {
            return Err(ENOTCONN.into());
        }
        if let Some(e) = a.sock_error {
            let e = match e {
                SockError::ConnReset => ECONNRESET,
                SockError::ConnAborted => ECONNABORTED,
            };
            sh.error.get_or_insert(e.into());
        }
        match a.send {
            Some(CloseFlag::DoneWriting) => sh.sent_state.peer_done_writing = true,
            Some(CloseFlag::ConnClosed) => {
                sh.sent_state.peer_done_writing = true;
                sh.sent_state.peer_conn_closed = true;
            }
            Some(CloseFlag::Abort) => sh.sent_state.peer_conn_abort = true,
            None => {}
        }
        sh.rcv_shutdown |= a.rcv_shutdown;
        sh.clcsock_reset |= a.clcsock_abort;
        out.clcsock_shutdown = a.clcsock_shutdown.or(out.clcsock_shutdown);
        out.wake |= a.wake_io || a.wake_state;
        if a.cancel_close_work {
            // Peer events are applied under the connection's lock, which
            // the caller holds: none is in flight.
            next = Some(CloseEvent::AbortSettled);
        }
    }
    Ok(out)
}
