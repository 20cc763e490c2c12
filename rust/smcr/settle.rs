// SPDX-License-Identifier: GPL-2.0

//! The executor: carries out what the floors below leave to do for a
//! connection -- what a CDC message arrived with ([`cdc::Arrival`]), what
//! a completed send asks ([`TxDone`]), what the close machine deferred
//! ([`Deferred`]) -- by pushing, waking, signalling and settling. The
//! connection's work item runs here too: [`settle`] in process context.
//!
//! Nothing below this file calls up into it; the link group (above)
//! calls it from its completion handler.

use super::cdc::{self, Arrival};
use super::close::{self, Deferred};
use super::conn::{Conn, Path};
use super::tx::{self, TxDone};
use crate::sys::wake::Wake;
use crate::wire::close::CloseEvent;
use kernel::sync::Arc;
use kernel::workqueue::{impl_has_work, WorkItem};

/// Does what the machine left for process context (a socket call or the
/// connection's work item): pushes the send buffer and announces new
/// connection state flags (both by the push: the flags ride on the CDC
/// message of the last bytes when there are any, an abort goes at once;
/// without a free send slot they go with the next one, and nothing here
/// waits for one), resets the clcsock, and frees the connection once it is
/// closed and the socket let go of it.
pub(crate) fn settle(conn: &Arc<Conn>) {
    tx::push(conn);
    let reset = core::mem::take(&mut conn.shared.lock().clcsock_reset);
    if reset {
        conn.waker.abort();
    }
    if conn.finished() {
        match conn.path() {
            Path::Link(link) => {
                if let Some(owner) = link.owner() {
                    owner.conn_finished();
                }
            }
            Path::Ism(p) => p.group.conn_finished(conn.token),
        }
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

/// The connection is lost (its link failed, or the peer broke the
/// protocol): calls fail with `ECONNABORTED`, the peer is told with an
/// abort where the link still carries it and through a reset of the
/// clcsock (as upstream's abort does). Any context.
pub(crate) fn abort(conn: &Arc<Conn>) {
    let d = {
        let mut sh = conn.shared.lock();
        let d = close::event(conn, &mut sh, CloseEvent::LocalAbort);
        // As TCP's error report: the owner learns of it.
        sh.signal_owner(Wake::ALL, false);
        d
    };
    settle_later(conn, d.unwrap_or_default());
}

/// A connection no socket will own (its listener closed before `accept`,
/// its connect was given up, or its handshake failed after the peer's end
/// was up) is aborted and let go: the peer sees an abort, and the link
/// group frees it once that went out. Process context.
pub(crate) fn abandon(conn: &Arc<Conn>) {
    conn.count_buffers_given_back(conn.waker.net());
    conn.orphan();
    abort(conn);
}

/// Carries out what a CDC message left to do (softirq).
pub(crate) fn after_cdc(conn: &Arc<Conn>, a: Arrival) {
    // A message that settles the connection wakes everyone (`a.wake`).
    if a.settle.is_some() {
        conn.schedule_push();
    } else if a.push {
        tx::push(conn);
    }
    if a.update_consumer {
        // The peer waits for room: tell it now, or with the next free slot.
        cdc::update_consumer(conn);
    }
    conn.wake_for(a.wake);
}

/// Carries out what a completed send asks of its connection (softirq):
/// corked bytes go from here (as upstream's completion handler sends
/// them: no work item, no thread to wake).
pub(crate) fn after_tx(conn: &Arc<Conn>, t: TxDone) {
    if t.push {
        tx::push(conn);
    }
    if t.settle {
        conn.schedule_push();
    }
    conn.wake_for(t.wake);
}

impl_has_work! {
    impl HasWork<Self> for Conn { self.tx_work }
}

impl WorkItem for Conn {
    type Pointer = Arc<Conn>;

    fn run(conn: Arc<Conn>) {
        settle(&conn);
    }
}
