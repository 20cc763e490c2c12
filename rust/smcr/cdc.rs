// SPDX-License-Identifier: GPL-2.0

//! CDC messages: the cursors and flags of a connection, sent after the data
//! they announce and received in the completion handler.

use super::close::{self, Deferred};
use super::conn::{cursor_of, Conn};
use super::shared::{ConnShared, UrgentRx};
use super::conntable::ConnTable;
use super::inject;
use super::link::Link;
use super::rejects::{self, Reject};
use crate::smcd::dmb::Dmb;
use crate::sys::errno::{EAGAIN, ECONNABORTED, ECONNRESET, ENOLINK};
use crate::sys::sync::SpinLockBh;
use crate::sys::wake::Wake;
use crate::wire::bufsize::{consumer_update, rmb_wnd_update_limit, ConsumerUpdate, ConsumerView};
use crate::wire::cdc::{seq_before, CdcMsg, ProducerFlags, CDC_LEN};
use crate::wire::close::CloseEvent;
use crate::wire::cursor::{ism_tx_fin, peer_consumer_advance, peer_producer_advance, CursorError};
use crate::wire::lgr_links::resume_from_delivered;
use kernel::prelude::*;
use kernel::sync::Arc;

/// Takes a CDC message the peer sent (softirq): checks everything in it
/// against what the connection allows, then applies it. A message for an
/// unknown token is dropped; a cursor outside the rules aborts the
/// connection. `then` gets the connection and what is left to do for it
/// (see [`settle::after_cdc`](super::settle::after_cdc)), still under the
/// table's lock: the table holds the connection, so the completion handler
/// never drops its last reference (which may sleep).
pub(crate) fn received(
    conns: &SpinLockBh<ConnTable>,
    msg: &[u8],
    then: impl FnOnce(&Arc<Conn>, Arrival),
) {
    let cdc = match CdcMsg::parse(msg) {
        Ok(cdc) => cdc,
        Err(e) => {
            rejects::count(
                Reject::CdcMalformed,
                format_args!("{} bytes: {:?}", msg.len(), e),
            );
            return;
        }
    };
    let known = conns.lock().with(cdc.token, |conn| then(conn, apply(conn, &cdc)));
    if !known {
        rejects::count(
            Reject::CdcUnknownToken,
            format_args!("token {:#x}", cdc.token),
        );
    }
}

/// What a CDC message leaves to do for its connection once its lock is
/// dropped, in this order.
#[derive(Clone, Copy, Debug, Default)]
#[must_use]
pub(crate) struct Arrival {
    /// The close machine moved (or the connection was aborted): the work
    /// item settles the connection, with what the machine left.
    pub(crate) settle: Option<Deferred>,
    /// The peer made room for what waits in the send buffer: push it.
    pub(crate) push: bool,
    /// The peer waits for room: send the consumer cursor.
    pub(crate) update_consumer: bool,
    /// Whom to wake.
    pub(crate) wake: Wake,
}

/// Applies a parsed message to its connection (over SMC-D, as the peer
/// signalled it: its DMB's owner is `conn`, no token to look up; its
/// cursors are checked as any peer's).
pub(crate) fn apply(conn: &Arc<Conn>, cdc: &CdcMsg) -> Arrival {
    let mut sh = conn.shared.lock();
    if cdc.prod_flags.failover_validation {
        // The peer moved the connection to another link and names the
        // last message it knows completed: one we never saw means a
        // message was lost, and the connection cannot go on
        // (`smc_cdc_msg_validate`). Nothing else in it counts.
        let seen = sh.rx_seq.is_some_and(|last| !seq_before(last, cdc.seqno));
        if seen {
            return Arrival::default();
        }
        rejects::count(
            Reject::CdcStaleSeqno,
            format_args!("token {:#x}: validation of {} unseen", conn.token, cdc.seqno),
        );
        let d = close::event(conn, &mut sh, CloseEvent::LocalAbort).unwrap_or_default();
        return Arrival {
            settle: Some(d),
            ..Arrival::default()
        };
    }
    if let Some(last) = sh.rx_seq {
        // Upstream drops what is older than the last message taken.
        if seq_before(cdc.seqno, last) {
            rejects::count(
                Reject::CdcStaleSeqno,
                format_args!("token {:#x}: {} after {}", conn.token, cdc.seqno, last),
            );
            return Arrival::default();
        }
    }
    sh.rx_seq = Some(cdc.seqno);
    let mut deferred = Deferred::default();
    let mut settle = false;
    let prod_before = sh.rx_prod;
    let fin_before = sh.tx_fin;
    if let Err(e) = take_cursors(conn, &mut sh, cdc) {
        // The peer learns it from an abort CDC message and from its reset
        // clcsock (both sent by the settling work item).
        rejects::count(
            Reject::CdcBadCursor,
            format_args!(
                "token {:#x}: {:?}, prod {:?}, cons {:?}",
                conn.token, e, cdc.prod, cdc.cons
            ),
        );
        deferred = close::event(conn, &mut sh, CloseEvent::LocalAbort).unwrap_or_default();
        settle = true;
    }
    if sh.rx_prod > prod_before && sh.shut_rd && sh.sent_state.peer_done_writing && !settle {
        // Data for a connection shut down both ways: reset, as TCP does.
        sh.error.get_or_insert(ECONNRESET.into());
        deferred = close::event(conn, &mut sh, CloseEvent::LocalAbort).unwrap_or_default();
        settle = true;
    }
    // The peer consumed our last urgent byte: the next may go.
    let urgent_gone = sh.urg_tx.is_some_and(|p| sh.tx_prod > p && sh.tx_acked > p);
    if urgent_gone {
        sh.urg_tx = None;
    }
    sh.peer_flags = cdc.prod_flags;
    let urgent_arrived = cdc.prod_flags.urg_data_present && sh.rx_prod > prod_before;
    if urgent_arrived {
        // The last byte this message announces is urgent; a byte an
        // earlier one flagged and nobody took stays in the stream.
        sh.urg_rx = Some(UrgentRx {
            pos: sh.rx_prod - 1,
            byte: None,
            read: false,
            at_mark: false,
        });
    }
    // SIGURG once per urgent byte, when the peer first tells of it (that
    // it is pending, or the byte itself), as TCP sends it when it first
    // sees an urgent pointer.
    let sigurg = (urgent_arrived || cdc.prod_flags.urg_data_pending) && !sh.urg_announced;
    sh.urg_announced = !urgent_arrived && (sh.urg_announced || cdc.prod_flags.urg_data_pending);
    let f = cdc.conn_state_flags;
    let old = sh.peer_state;
    sh.peer_state.peer_done_writing |= f.peer_done_writing;
    sh.peer_state.peer_conn_closed |= f.peer_conn_closed;
    sh.peer_state.peer_conn_abort |= f.peer_conn_abort;
    let events = [
        (
            f.peer_done_writing && !old.peer_done_writing,
            CloseEvent::PeerDoneWriting,
        ),
        (
            f.peer_conn_closed && !old.peer_conn_closed,
            CloseEvent::PeerConnClosed,
        ),
        (
            f.peer_conn_abort && !old.peer_conn_abort,
            CloseEvent::PeerConnAbort,
        ),
    ];
    for (new, ev) in events {
        if new {
            let d = close::event(conn, &mut sh, ev).unwrap_or_default();
            deferred.wake |= d.wake;
            settle = true;
        }
    }
    // The peer waits for room or asks for our consumer cursor: it goes
    // now if the rule says so (a reader's next read may send it too).
    let update_consumer = (cdc.prod_flags.cons_curs_upd_req || cdc.prod_flags.write_blocked)
        && consumer_update_due(conn, &sh);
    // Readers and pollers care for new bytes, urgent data, the peer's
    // flags and failures; the peer's consumer cursor only feeds the push,
    // but when it passed what a failover would write again it freed room
    // in the send buffer (see `resume_from_delivered`): writers wake.
    let wake = Wake::NONE
        .or_if(sh.rx_prod > prod_before || cdc.prod_flags.urg_data_pending, Wake::READERS)
        .or_if(sh.tx_fin > fin_before || urgent_gone, Wake::WRITERS)
        .or_if(settle || sh.error.is_some(), Wake::ALL);
    // The peer may have made room for what waits in the send buffer: it
    // goes from here, unless the work item settles the connection anyway.
    let push = sh.tx_copied > sh.tx_prod && !settle;
    sh.signal_owner(wake, sigurg);
    drop(sh);
    Arrival {
        settle: settle.then_some(deferred),
        push,
        update_consumer,
        wake,
    }
}

/// Checks and applies the producer and consumer cursors of `cdc`.
fn take_cursors(conn: &Conn, sh: &mut ConnShared, cdc: &CdcMsg) -> Result<(), CursorError> {
    let size = conn.rmb_size();
    let cons = cursor_of(sh.rx_cons, size);
    match peer_producer_advance(sh.rx_prod_curs, cdc.prod, cons, size) {
        Ok(n) => {
            sh.rx_prod += u64::from(n);
            sh.rx_prod_curs = cdc.prod;
        }
        Err(CursorError::Behind) => {}
        Err(e) => return Err(e),
    }
    let psize = sh.peer.size;
    if psize == 0 {
        // The peer's RMB is not known yet: it cannot have read anything.
        return if cdc.cons == sh.peer_cons_curs {
            Ok(())
        } else {
            Err(CursorError::Overrun)
        };
    }
    // What the peer may have read: all we ever wrote (`tx_prod_high`
    // is never below `tx_prod`), even when a failover moved `tx_prod`
    // back.
    let prod = cursor_of(sh.tx_prod_high, psize);
    match peer_consumer_advance(sh.peer_cons_curs, cdc.cons, prod, psize) {
        Ok(n) => {
            sh.tx_acked += u64::from(n);
            sh.peer_cons_curs = cdc.cons;
            (sh.tx_prod, sh.tx_fin) = if conn.is_ism() {
                // The send buffer is the peer's RMB: what it read is free.
                (sh.tx_prod, ism_tx_fin(sh.tx_fin, sh.tx_prod, sh.tx_acked))
            } else {
                resume_from_delivered(sh.tx_prod, sh.tx_fin, sh.tx_acked)
            };
        }
        Err(CursorError::Behind) => {}
        Err(e) => return Err(e),
    }
    Ok(())
}

/// A failover moved the producer cursor back (see
/// [`switch_resend_from`](crate::wire::lgr_links::switch_resend_from))
/// and the bytes from there are not written again yet. No message goes
/// but the one that announces them: each carries the producer cursor,
/// and one below what the peer last heard moves upstream's cursor back,
/// which it then counts forward again (its `smc_curs_diff` takes no step
/// back; across a wrap it takes one as a step of nearly two rings): the
/// reader would be handed bytes never written again. The write that
/// catches up announces everything at once ([`tx::push`](super::tx::push)
/// writes across the end of the send buffer), with the consumer cursor
/// and flags due. An abort goes all the same.
pub(crate) fn rewrite_pending(conn: &Conn, sh: &ConnShared) -> bool {
    !conn.is_ism() && sh.tx_prod < sh.tx_prod_high && !sh.sent_state.peer_conn_abort
}

/// Builds the connection's next CDC message after `update` changed the
/// shared state, and posts it on `slot` of `link`, all under the
/// connection's lock so that sequence numbers go out in order; not while
/// a rewrite is pending ([`rewrite_pending`], `EAGAIN`).
pub(crate) fn post(
    conn: &Conn,
    link: &Link,
    slot: u32,
    flags: ProducerFlags,
    update: impl FnOnce(&mut ConnShared),
) -> Result {
    let mut sh = conn.shared.lock();
    // Moved to another link since the caller took `link` (see
    // `tx::push`): the move made the cursors due there, and a message on
    // the old link would mark them sent.
    if !conn.is_on(link) {
        return Err(ENOLINK.into());
    }
    update(&mut sh);
    if rewrite_pending(conn, &sh) {
        return Err(EAGAIN.into());
    }
    post_locked(conn, link, &mut sh, slot, flags)
}

/// Posts the connection's next CDC message on `slot` of `link` (the link
/// the caller took the slot from) with the cursors in `sh` (the caller
/// holds the connection's lock).
pub(crate) fn post_locked(
    conn: &Conn,
    link: &Link,
    sh: &mut ConnShared,
    slot: u32,
    flags: ProducerFlags,
) -> Result {
    let mut msg = next_msg(conn, sh, flags);
    let prod_total = sh.tx_prod;
    // The fault injection seam (tests only: a hostile message armed in
    // debugfs changes the message or follows it).
    inject::cdc_post(&mut msg, conn, link, sh, |msg| {
        let mut buf = [0u8; CDC_LEN];
        msg.encode(&mut buf).map_err(|_| ECONNABORTED)?;
        link.slot_for_conn(slot, conn.token, prod_total);
        link.post_msg(slot, &buf)
    })?;
    mark_sent(sh);
    Ok(())
}

/// The connection's next CDC message, with `flags`.
fn next_msg(conn: &Conn, sh: &ConnShared, flags: ProducerFlags) -> CdcMsg {
    let mut flags = flags;
    // Urgent data waits to be written.
    flags.urg_data_pending |= sh.urg_tx.is_some_and(|p| sh.tx_prod <= p);
    CdcMsg {
        seqno: sh.tx_seq,
        token: sh.peer.token,
        prod: cursor_of(sh.tx_prod, sh.peer.size),
        cons: cursor_of(sh.rx_cons, conn.rmb_size()),
        prod_flags: flags,
        conn_state_flags: sh.sent_state,
    }
}

/// The message [`next_msg`] made went: its cursors and flags are the
/// peer's.
fn mark_sent(sh: &mut ConnShared) {
    sh.tx_seq = sh.tx_seq.wrapping_add(1);
    sh.rx_cons_sent = sh.rx_cons;
    sh.rx_cons_wanted = false;
    sh.cursors_due = false;
    sh.announced_state = sh.sent_state;
}

/// Signals the connection's next CDC message to the peer's DMB `peer`
/// (SMC-D), under the connection's lock so that messages queue in order;
/// the caller [`kick`](Dmb::kick)s the DMB once the lock is dropped.
pub(crate) fn signal_locked(
    conn: &Conn,
    peer: &Dmb,
    sh: &mut ConnShared,
    flags: ProducerFlags,
) -> Result {
    peer.signal(&next_msg(conn, sh, flags))?;
    mark_sent(sh);
    Ok(())
}

/// What upstream's rule for the consumer cursor says now
/// ([`consumer_update`]): send it once more than the window update limit
/// was read since the last update and the peer is blocked or sees at most
/// half of our RMB free; at once when the peer asks for it. A peer that is
/// blocked alone does not get every byte a reader takes announced: that
/// would have it write a byte per message (the silly window of TCP).
fn consumer_rule(conn: &Conn, sh: &ConnShared) -> ConsumerUpdate {
    let size = conn.rmb_size();
    consumer_update(&ConsumerView {
        rmbe_size: size,
        update_limit: rmb_wnd_update_limit(size),
        confirmed: cursor_of(sh.rx_cons_sent, size),
        consumer: cursor_of(sh.rx_cons, size),
        peer_producer: cursor_of(sh.rx_prod, size),
        peer_requested: sh.peer_flags.cons_curs_upd_req,
        peer_write_blocked: sh.peer_flags.write_blocked,
        force: sh.rx_cons_wanted,
        // Left to the senders: SMC-D's and the push's skip a failed
        // connection; SMC-R's `update_consumer` posts regardless, where
        // upstream sends nothing on a killed or aborted one.
        aborted: false,
        bytes_to_receive: u32::try_from(sh.rx_prod - sh.rx_cons).unwrap_or(u32::MAX),
    })
}

/// Whether the consumer cursor goes back to the peer now (see
/// [`consumer_rule`]), or because it was asked to go and waited for a
/// send slot; never when it did not move.
pub(crate) fn consumer_update_due(conn: &Conn, sh: &ConnShared) -> bool {
    sh.rx_cons > sh.rx_cons_sent && consumer_rule(conn, sh).send
}

/// After a read: whether the consumer cursor goes now (see
/// [`consumer_update_due`]); a peer that was blocked and whose bytes were
/// all read is no longer taken as blocked (upstream forgets its flag then).
pub(crate) fn consumer_update_after_read(conn: &Conn, sh: &mut ConnShared) -> bool {
    let rule = consumer_rule(conn, sh);
    if rule.clear_write_blocked {
        sh.peer_flags.write_blocked = false;
    }
    sh.rx_cons > sh.rx_cons_sent && rule.send
}

/// Sends the consumer cursor after a read, and never fails the read (its
/// bytes are the application's already): without a free send slot the
/// connection queues for the next one, and the push that the completion
/// handler runs for it then sends the update while it is still due (see
/// `tx::push`), which sends it even when less than the window update
/// limit was read. On a link that is down nobody waits for it. Any context.
pub(crate) fn update_consumer(conn: &Conn) {
    if let Some(peer) = conn.peer_dmb() {
        // SMC-D: signalled at once, under the lock that marks it wanted.
        let sent = {
            let mut sh = conn.shared.lock();
            sh.rx_cons_wanted = true;
            sh.error.is_none()
                && signal_locked(conn, peer, &mut sh, ProducerFlags::default()).is_ok()
        };
        if sent {
            peer.kick();
        }
        return;
    }
    // Before queueing: the queue may be served before this returns.
    conn.shared.lock().rx_cons_wanted = true;
    if conn.is_ism() {
        return;
    }
    let Ok(link) = conn.link() else { return };
    if let Ok(Some(slot)) = link.get_slot_or_queue(conn.token) {
        if post(conn, &link, slot, ProducerFlags::default(), |_| {}).is_err() {
            link.put_slot(slot);
        }
    }
}
