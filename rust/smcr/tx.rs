// SPDX-License-Identifier: GPL-2.0

//! Sending on an SMC-R connection: `send` copies the application's bytes
//! into the send buffer and returns; [`push`] RDMA-writes what the peer's
//! RMB has room for at the producer cursor (up to three writes, cut where
//! its ring or the send buffer wraps), then one CDC message announces
//! them. What does not fit waits in
//! the send buffer and goes when the peer reports room (its consumer
//! cursor) or a send slot frees up, from the completion handler.
//!
//! Cursors: `tx_fin <= tx_prod <= tx_copied`; the send buffer holds
//! `tx_copied - tx_fin` bytes (written or not, not yet completed).

use super::bufs::LgrBuf;
use super::cdc;
use super::close;
use super::conn::{Conn, ConnBuf};
use super::path::across_wrap;
use super::shared::ConnShared;
use super::link::Link;
use crate::smcd::dmb::Dmb;
use crate::stats::tech::{BufferEvent, Dir};
use crate::sys::args::MsgHdr;
use crate::sys::errno::{EAGAIN, ECONNRESET, EINTR, ENOLINK, EPIPE};
use crate::sys::ib::mr::RegisteredBuf;
use crate::sys::print::smc_dbg;
use crate::sys::wake::Wake;
use crate::wire::cdc::ProducerFlags;
use crate::wire::close::CloseEvent;
use crate::wire::ring::write_pieces;
use kernel::error::code::ERESTARTSYS;
use kernel::prelude::*;
use kernel::sync::Arc;

/// The longest piece written inline (the link's limit applies too; CDC
/// messages, 44 bytes, are sent inline, so every device here allows that).
const INLINE_WRITE_MAX: usize = 64;

/// Room for new bytes in the send buffer.
#[derive(Clone, Copy)]
struct Room {
    /// How many bytes fit; none for urgent data while the last urgent byte
    /// waits (one at a time, as upstream).
    free: u64,
    /// Where they go: `tx_copied`, which only the socket's caller (under
    /// the socket lock) moves.
    at: u64,
}

fn room(conn: &Conn, urgent: bool) -> Result<Room> {
    room_locked(conn, &conn.shared.lock(), urgent)
}

fn room_locked(conn: &Conn, sh: &ConnShared, urgent: bool) -> Result<Room> {
    if let Some(e) = conn.sock_error(sh) {
        return Err(e);
    }
    if conn.failure(sh).is_some() || sh.close.write_closed() {
        return Err(EPIPE.into());
    }
    let free = if urgent && sh.urg_tx.is_some() {
        0
    } else {
        let used = sh.tx_copied.saturating_sub(sh.tx_fin);
        u64::from(conn.sndbuf_size()).saturating_sub(used)
    };
    Ok(Room {
        free,
        at: sh.tx_copied,
    })
}

/// The room a send of `len` bytes starts with (see [`room`]), or `None`
/// when the peer closed: what is sent now is dropped (its RMB may already
/// serve another connection), and, as TCP answers such a send with a
/// reset, the connection fails with `EPIPE` after it: the send itself
/// succeeds, the next one fails (and raises `SIGPIPE`). Counts a send
/// larger than the send buffer or the peer's RMB (upstream's
/// `SMC_STAT_RMB_TX_SIZE_SMALL`, `..._PEER_SIZE_SMALL`).
fn start(conn: &Conn, urgent: bool, len: usize) -> Option<Result<Room>> {
    let (room, peer_size) = {
        let mut sh = conn.shared.lock();
        if sh.peer_state.any_close() && sh.error.is_none() && !sh.close.write_closed() {
            sh.error = Some(EPIPE.into());
            return None;
        }
        (room_locked(conn, &sh, urgent), sh.peer.size)
    };
    if len as u64 > u64::from(conn.sndbuf_size()) {
        conn.count_buffer_event(Dir::Tx, BufferEvent::SizeSmall);
    }
    if len as u64 > u64::from(peer_size) {
        conn.count_buffer_event(Dir::Tx, BufferEvent::SizeSmallPeer);
    }
    Some(room)
}

/// Sends `len` bytes of `msg`. A blocking call returns when every byte is
/// in the send buffer, as TCP's does; `wait` sleeps until the connection
/// changes (or fails with `EAGAIN` after the timeout, or on a signal).
/// With `urgent` (`MSG_OOB`) the last byte is urgent data; `more`
/// (`MSG_MORE`, `TCP_CORK`) says more follows soon; `nodelay`
/// (`TCP_NODELAY`) sends small writes at once.
#[allow(clippy::too_many_arguments)]
pub(crate) fn send(
    conn: &Conn,
    msg: &mut MsgHdr<'_>,
    len: usize,
    nonblock: bool,
    urgent: bool,
    more: bool,
    nodelay: bool,
    mut wait: impl FnMut(&dyn Fn() -> bool) -> Result,
) -> Result<usize> {
    let Some(first) = start(conn, urgent, len) else {
        return Ok(len);
    };
    let mut first = Some(first);
    let mut sent = 0usize;
    let mut was_full = false;
    while sent < len {
        let r = match first.take().unwrap_or_else(|| room(conn, urgent)) {
            Ok(r) => r,
            // What was queued counts; the error comes with the next call.
            Err(_) if sent > 0 => break,
            Err(e) => {
                conn.error_reported();
                return Err(e);
            }
        };
        if r.free == 0 {
            conn.note_no_room();
            if !was_full {
                was_full = true;
                conn.count_buffer_event(Dir::Tx, BufferEvent::Full);
            }
            if nonblock {
                break;
            }
            let ready = || room(conn, urgent).map_or(true, |r| r.free > 0);
            match wait(&ready) {
                Ok(()) => continue,
                Err(e) if sent > 0 && (e == EAGAIN || e == ERESTARTSYS || e == EINTR) => break,
                Err(e) => return Err(e),
            }
        }
        let n = copy_in(conn, msg, ((len - sent) as u64).min(r.free) as usize, r.at)?;
        if n == 0 {
            break;
        }
        sent += n;
        let urgent_at = urgent.then_some(len - sent + n);
        if let Some(peer) = conn.peer_dmb() {
            // SMC-D: never corked (nothing is in flight); the bytes are
            // announced under the lock that publishes them.
            let mut sh = conn.shared.lock();
            let peer_full = publish(&mut sh, n, urgent_at);
            let pushed = push_ism_locked(conn, peer, &mut sh);
            drop(sh);
            if peer_full {
                conn.count_buffer_event(Dir::Tx, BufferEvent::FullPeer);
            }
            pushed.finish(conn, peer);
        } else {
            // One lock publishes the bytes and decides whether they wait:
            // a small send behind one in flight costs no more (upstream's
            // corked send takes no lock of its own either).
            let (peer_full, corked) = {
                let mut sh = conn.shared.lock();
                let peer_full = publish(&mut sh, n, urgent_at);
                (peer_full, corked(conn, &sh, more && sent == len, nodelay))
            };
            if !corked {
                if peer_full {
                    conn.count_buffer_event(Dir::Tx, BufferEvent::FullPeer);
                }
                push(conn);
            }
        }
    }
    if sent == 0 && len > 0 {
        return Err(EAGAIN.into());
    }
    Ok(sent)
}

/// Whether new bytes wait in the send buffer instead of going at once
/// (`sh`, the connection's state, locked): while a write of the connection
/// is in flight, its completion pushes them, so that small sends leave
/// together (autocorking, as upstream); not past [`Conn::autocork_limit`]
/// unless the sender said more follows; not with `TCP_NODELAY`, as TCP's
/// Nagle. Nothing waits with nothing in flight. SMC-R only (SMC-D has
/// nothing in flight: its bytes are in the peer's RMB already).
fn corked(conn: &Conn, sh: &ConnShared, more: bool, nodelay: bool) -> bool {
    let in_flight = sh.tx_fin < sh.tx_prod;
    let waiting = sh.tx_copied - sh.tx_prod;
    in_flight && (more || (!nodelay && waiting <= conn.autocork_limit())) && sh.urg_tx.is_none()
}

/// Copies up to `n` bytes (at most the room) of `msg` into the send
/// buffer at `start` (the room's `at`), on from the ring's start where it
/// wraps; returns how many. Nothing sees them before [`publish`]: the
/// bytes on both sides of the wrap go in one announcement (as upstream's
/// `sendmsg` copies both pieces before it sends), so that a reader woken
/// by it finds them all.
fn copy_in(conn: &Conn, msg: &mut MsgHdr<'_>, n: usize, start: u64) -> Result<usize> {
    let size = conn.sndbuf_size() as usize;
    let off = (start % size as u64) as usize;
    let copied = if let Some(peer) = conn.peer_dmb() {
        // SMC-D: the send buffer is the peer's DMB, which the connection
        // holds as long as it lives; no device reads it.
        across_wrap(off, n, size, |at, len| ConnBuf::fill_dmb_from_msg(&peer.mem, at, len, msg))?
    } else {
        // The copy from the caller may fault and sleep: it holds a
        // reference to the buffer, not its lock (whoever drops the last
        // one is in process context: this call, or the one that took the
        // buffer back).
        let sndbuf = conn.sndbuf.lock().clone().ok_or(ECONNRESET)?;
        let copied = across_wrap(off, n, size, |at, len| sndbuf.fill_from_msg(at, len, msg))?;
        // The devices read what the CPU wrote (a no-op where DMA is
        // coherent).
        sndbuf.sync_for_device();
        copied
    };
    Ok(copied)
}

/// Publishes `n` bytes copied in: a push may send them from here. With
/// `urgent_at`, the byte that many bytes on is the urgent one: when they
/// end with it, it is marked urgent in the same step, so that no push (the
/// completion handler's included) can send it without its flag. Returns
/// whether the peer's RMB has no room for what waits to be sent now.
fn publish(sh: &mut ConnShared, n: usize, urgent_at: Option<usize>) -> bool {
    sh.tx_copied += n as u64;
    if n > 0 && urgent_at == Some(n) {
        sh.urg_tx = Some(sh.tx_copied - 1);
    }
    sh.tx_copied > sh.tx_prod && sh.tx_prod - sh.tx_acked.min(sh.tx_prod) >= u64::from(sh.peer.size)
}

/// Writes what waits in the send buffer into the peer's RMB, as far as it
/// has room and send slots are free; any context (the sender, and the
/// completion handler for what was corked or waited for room or a slot).
/// A connection that waits for a slot is pushed again when one completes.
pub(crate) fn push(conn: &Conn) {
    let urgent_gone = if conn.is_ism() {
        conn.peer_dmb().is_some_and(|peer| {
            let pushed = push_ism_locked(conn, peer, &mut conn.shared.lock());
            pushed.kick(peer)
        })
    } else {
        // A failover between taking the link and the cursors (see
        // `push_on_link`) is rare; each try sees the move that ended it.
        loop {
            if let Some(gone) = push_on_link(conn) {
                break gone;
            }
        }
    };
    // A sender of urgent data waits for the last urgent byte to be gone.
    if urgent_gone {
        conn.wake_for(Wake::WRITERS);
    }
}

/// One push on the connection's link: whether it found the last urgent
/// byte gone (consumed by the peer); `None` when the connection moved to
/// another link meanwhile (nothing was sent).
fn push_on_link(conn: &Conn) -> Option<bool> {
    // One link for the whole push: its slots are that link's.
    let Ok(link) = conn.link() else {
        return Some(false);
    };
    let sndbuf = conn.sndbuf.lock();
    let Some(sndbuf) = sndbuf.as_ref().and_then(|b| b.lgr()) else {
        return Some(false);
    };
    // The send buffer as this link's device reads it, once per push.
    let mapped = sndbuf.on(link.idx);
    let mut sh = conn.shared.lock();
    // A failover moves the connection, then rewinds its cursors under
    // `shared` for the new link: after that, the old link must carry
    // nothing (a server's old link is still up while it moves its
    // connections on the peer's DELETE LINK), or the bytes written there
    // would be lost with it and never written again.
    if !conn.is_on(&link) {
        return None;
    }
    let urgent_before = sh.urg_tx.is_some();
    // Nothing goes into the RMB of a peer that closed: it may already
    // serve another connection.
    while sh.error.is_none() && !sh.peer_state.any_close() && sh.tx_copied > sh.tx_prod {
        // Whether anything can go is known before a slot is taken: a slot
        // taken and given back unused would not go to the connections
        // queued for one (only completions serve them).
        let Some(chunk) = next_chunk(&mut sh) else {
            break;
        };
        // No slot: the connection queues for the next that completes.
        let Ok(Some(slot)) = link.get_slot_or_queue(conn.token) else {
            return Some(urgent_before && sh.urg_tx.is_none());
        };
        match write_chunk(conn, &link, sndbuf, mapped.as_ref(), &mut sh, slot, chunk) {
            Ok(()) => {}
            Err(e) => {
                link.put_slot(slot);
                sh.error = Some(e);
                drop(sh);
                conn.wake();
                return Some(false);
            }
        }
    }
    // What waited for a free slot (the connection queued for one) goes
    // now, unless a data write above carried it. A link that is down
    // takes it with it; the clcsock's reset tells the peer then.
    if control_due(conn, &sh) && !cdc::rewrite_pending(conn, &sh) {
        if let Ok(Some(slot)) = link.get_slot_or_queue(conn.token) {
            if cdc::post_locked(conn, &link, &mut sh, slot, ProducerFlags::default()).is_err() {
                link.put_slot(slot);
            }
        }
    }
    Some(urgent_before && sh.urg_tx.is_none())
}

/// What an SMC-D push did under the connection's lock, for after it.
#[must_use]
struct IsmPushed {
    /// Messages were queued for the peer's DMB: it is to be kicked.
    signalled: bool,
    /// The last urgent byte was found gone.
    urgent_gone: bool,
}

impl IsmPushed {
    /// Kicks the peer's DMB if messages were queued (with no lock held);
    /// returns whether the last urgent byte was found gone.
    fn kick(self, peer: &Dmb) -> bool {
        if self.signalled {
            peer.kick();
        }
        self.urgent_gone
    }

    /// Kicks, and wakes a sender of urgent data waiting for the last
    /// urgent byte to be gone (as [`push`] does).
    fn finish(self, conn: &Conn, peer: &Dmb) {
        if self.kick(peer) {
            conn.wake_for(Wake::WRITERS);
        }
    }
}

/// Announces what waits in the send buffer of an SMC-D connection: its
/// bytes are in the peer's DMB already (the send buffer is that memory),
/// so a push only moves the producer cursor and signals it, together with
/// any flags and consumer cursor due.
fn push_ism_locked(conn: &Conn, peer: &Dmb, sh: &mut ConnShared) -> IsmPushed {
    let mut signalled = false;
    let urgent_before = sh.urg_tx.is_some();
    while sh.error.is_none() && !sh.peer_state.any_close() && sh.tx_copied > sh.tx_prod {
        // Every byte copied is in the peer's DMB: all of it goes, but for
        // the urgent cut.
        let waiting = sh.tx_copied - sh.tx_prod;
        let Some(chunk) = cut_at_urgent(sh, waiting) else {
            break;
        };
        sh.tx_prod += chunk.len;
        sh.tx_prod_high = sh.tx_prod;
        if sh.tx_prod == sh.tx_copied {
            let _ = close::event(conn, sh, CloseEvent::TxFlushed);
        }
        let flags = ProducerFlags {
            urg_data_present: chunk.urgent,
            urg_data_pending: chunk.urgent,
            ..ProducerFlags::default()
        };
        if let Err(e) = cdc::signal_locked(conn, peer, sh, flags) {
            sh.error = Some(e);
            break;
        }
        signalled = true;
    }
    if control_due(conn, sh)
        && cdc::signal_locked(conn, peer, sh, ProducerFlags::default()).is_ok()
    {
        signalled = true;
    }
    IsmPushed {
        signalled,
        urgent_gone: urgent_before && sh.urg_tx.is_none(),
    }
}

/// Whether a CDC message without new data is due after a push: what a
/// reader or the close machine could not send (the consumer cursor while
/// it is due, both cursors once after a move to another link) and new
/// connection state flags once the bytes before them are written (an
/// abort at once).
fn control_due(conn: &Conn, sh: &ConnShared) -> bool {
    let flags_due = sh.sent_state != sh.announced_state
        && (sh.tx_copied == sh.tx_prod || sh.sent_state.peer_conn_abort);
    let cursors_due = sh.cursors_due || cdc::consumer_update_due(conn, sh);
    flags_due || (sh.error.is_none() && cursors_due)
}

/// The next piece of the send buffer to write.
#[derive(Clone, Copy)]
struct Chunk {
    /// Its length.
    len: u64,
    /// It ends with the urgent byte.
    urgent: bool,
}

/// What the next write takes: what waits, as far as the peer's RMB has
/// room (across the end of the send buffer: one message announces it
/// all, see [`write_chunk`]); `None` when the peer has no room, or the
/// last urgent byte waits for the peer to consume it.
fn next_chunk(sh: &mut ConnShared) -> Option<Chunk> {
    let psize = u64::from(sh.peer.size);
    if psize == 0 {
        return None;
    }
    let peer_free = psize.saturating_sub(sh.tx_prod - sh.tx_acked.min(sh.tx_prod));
    if peer_free == 0 {
        return None;
    }
    let len = (sh.tx_copied - sh.tx_prod).min(peer_free);
    cut_at_urgent(sh, len)
}

/// The next `len` bytes to announce, cut after the urgent byte: it ends a
/// write of its own (the peer takes the last byte a CDC message announces
/// as urgent), and nothing follows it until the peer consumed it
/// (upstream's readers need that); `None` while it waits for that.
fn cut_at_urgent(sh: &mut ConnShared, len: u64) -> Option<Chunk> {
    let mut len = len;
    let mut urgent = false;
    if let Some(p) = sh.urg_tx {
        if sh.tx_prod > p {
            if sh.tx_acked <= p {
                return None;
            }
            sh.urg_tx = None;
        } else if len >= p + 1 - sh.tx_prod {
            len = p + 1 - sh.tx_prod;
            urgent = true;
        }
    }
    (len > 0).then_some(Chunk { len, urgent })
}

/// Writes `chunk` (see [`next_chunk`]) on `slot` and announces it.
fn write_chunk(
    conn: &Conn,
    link: &Link,
    sndbuf: &LgrBuf,
    mapped: Option<&Arc<RegisteredBuf>>,
    sh: &mut ConnShared,
    slot: u32,
    chunk: Chunk,
) -> Result {
    let peer = sh.peer;
    let (size, psize) = (u64::from(conn.sndbuf_size()), u64::from(peer.size));
    let (n, urgent) = (chunk.len, chunk.urgent);
    let pieces = write_pieces(sh.tx_prod, n, size, psize).ok_or(EPIPE)?;
    let inline_max = link.max_inline().min(INLINE_WRITE_MAX);
    // The peer's RMB as this link reaches it.
    let (Some(key), Some(mapped)) = (peer.key(link.idx), mapped) else {
        // Cannot be while every buffer is on every link and every key
        // of the peer in the table: the connection fails, and says why.
        smc_dbg!(
            "smcr: connection {:#x} cannot write on link {}: {}",
            conn.token,
            link.idx,
            if mapped.is_none() { "its send buffer is not mapped there" } else { "no key of the peer's RMB for it" }
        );
        return Err(ENOLINK.into());
    };
    for (part, (src, dst, len)) in (0u32..).zip(pieces) {
        let (src, len) = (src as usize, len as usize);
        let remote = key.addr.wrapping_add(dst);
        if len == 0 {
            continue;
        }
        if len < inline_max {
            // Short pieces (a request, a reply) go inline, as upstream's.
            let mut bytes = [0u8; INLINE_WRITE_MAX];
            let data = bytes.get_mut(..len).ok_or(EPIPE)?;
            sndbuf.read(src, data)?;
            link.post_write_inline(slot, part, data, remote, key.rkey)?;
        } else {
            link.post_write(slot, part, mapped, (src, len as u32), remote, key.rkey)?;
        }
    }
    sh.tx_prod += n;
    sh.tx_prod_high = sh.tx_prod_high.max(sh.tx_prod);
    if sh.tx_prod == sh.tx_copied {
        // A shutdown or close that waited for the last bytes goes with
        // them (its flags into this message); wake-ups follow from the
        // completion of the message.
        let _ = close::event(conn, sh, CloseEvent::TxFlushed);
    }
    // More waits and the peer's RMB is full: ask for its consumer cursor.
    let blocked = sh.tx_copied > sh.tx_prod && sh.tx_prod - sh.tx_acked >= psize;
    let flags = ProducerFlags {
        write_blocked: blocked,
        urg_data_present: urgent,
        urg_data_pending: urgent,
        ..ProducerFlags::default()
    };
    // Should this fail, the writes went without their announcement: the
    // caller fails the connection, which is no longer in step with the peer.
    cdc::post_locked(conn, link, sh, slot, flags)
}

/// Whether a send would not block (poll's `EPOLLOUT`), under the
/// connection's lock.
pub(crate) fn writable(conn: &Conn, sh: &ConnShared) -> bool {
    room_locked(conn, sh, false).map_or(true, |r| r.free > 0)
}

/// What a completed send asks of its connection.
#[derive(Clone, Copy, Debug, Default)]
#[must_use]
pub(crate) struct TxDone {
    /// Bytes corked behind the write that completed go now.
    pub(crate) push: bool,
    /// The last write of a closed orphan completed: settle it (process
    /// context), which frees it.
    pub(crate) settle: bool,
    /// Writers or a lingering close wait for room.
    pub(crate) wake: Wake,
}

/// The device completed the CDC message that covered the stream up to
/// `prod_total`: the send buffer below it is free. Returns what is to
/// be done now (see [`settle::after_tx`](super::settle::after_tx)).
pub(crate) fn done(conn: &Conn, prod_total: u64) -> TxDone {
    let mut sh = conn.shared.lock();
    // Writers and pollers wait only while the send buffer is full, a
    // lingering close while bytes are on their way: wake them then,
    // not after every message.
    let size = u64::from(conn.sndbuf_size());
    let was_full = sh.tx_copied - sh.tx_fin >= size;
    if prod_total > sh.tx_fin {
        sh.tx_fin = prod_total;
    }
    let wake = Wake::NONE.or_if(
        was_full || (sh.tx_fin == sh.tx_copied && sh.close.write_closed()),
        Wake::WRITERS,
    );
    // Bytes corked behind the write that completed go now, from here
    // (as upstream's completion handler sends them): no work item, no
    // thread to wake.
    let corked = sh.tx_fin == sh.tx_prod && sh.tx_copied > sh.tx_prod;
    // The last write of a closed orphan completed: it can be freed now
    // (process context: the work item).
    let done = sh.tx_fin == sh.tx_prod
        && sh.close.closed()
        && sh.announced_state == sh.sent_state
        && conn.is_orphaned();
    sh.signal_owner(wake, false);
    TxDone {
        push: corked,
        settle: done,
        wake,
    }
}
