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

use super::conn::{Conn, ConnShared};
use crate::sys::errno::{ECONNABORTED, ECONNRESET, ENOTCONN};
use crate::wire::close::{
    on_event, CloseCtx, CloseEvent, CloseFlag, Shutdown, SmcState, SockError,
};
use kernel::prelude::*;
use kernel::sync::Arc;

/// A connection's close state and what the machine remembers.
#[derive(Clone, Copy, Debug)]
pub(crate) struct CloseMachine {
    /// The state (the socket's `sk_state` for sock_diag).
    pub(crate) state: SmcState,
    ctx: CloseCtx,
}

impl CloseMachine {
    /// An established connection.
    pub(crate) fn active() -> Self {
        CloseMachine {
            state: SmcState::Active,
            ctx: CloseCtx::default(),
        }
    }

    /// No more bytes may be queued: we are done writing, closed, or a
    /// shutdown for writing waits for the send buffer.
    pub(crate) fn write_closed(&self) -> bool {
        self.ctx.sent_done_writing || self.ctx.sent_close || self.ctx.waiting.is_some()
    }

    /// Closed, by the socket and the peer or by an abort: the peer can no
    /// longer write into the buffers, which may be reused once the socket
    /// let go of the connection.
    pub(crate) fn closed(&self) -> bool {
        self.state == SmcState::Closed && !self.ctx.aborting
    }
}

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
/// carries them; [`settle`] sends one if nothing else does), a reset of
/// the clcsock into `clcsock_reset`; both are done by [`settle`].
pub(crate) fn event(sh: &mut ConnShared, event: CloseEvent) -> Result<Deferred> {
    sh.close.ctx.unread_data = sh.rx_prod > sh.rx_cons;
    sh.close.ctx.tx_pending = sh.tx_copied > sh.tx_prod;
    let mut out = Deferred::default();
    let mut next = Some(event);
    while let Some(ev) = next.take() {
        let t = on_event(sh.close.state, ev, sh.close.ctx);
        sh.close.state = t.state;
        sh.close.ctx = t.ctx;
        let a = t.actions;
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

/// Does what the machine left for process context (a socket call or the
/// connection's work item): pushes the send buffer and announces new
/// connection state flags (both by the push: the flags ride on the CDC
/// message of the last bytes when there are any, an abort goes at once;
/// without a free send slot they go with the next one, and nothing here
/// waits for one), resets the clcsock, and frees the connection once it is
/// closed and the socket let go of it.
pub(crate) fn settle(conn: &Arc<Conn>) {
    super::tx::push(conn);
    let reset = core::mem::take(&mut conn.shared.lock().clcsock_reset);
    if reset {
        conn.waker.abort();
    }
    if conn.finished() {
        conn.lgr.reap();
    }
}

/// What is left after an event taken in softirq context: the connection's
/// work item settles it.
pub(crate) fn settle_later(conn: &Arc<Conn>, d: Deferred) {
    conn.schedule_push();
    if d.wake {
        conn.wake();
    }
}
