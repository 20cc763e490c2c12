// SPDX-License-Identifier: GPL-2.0

//! What the receive path (softirq) and the socket calls of a connection
//! share, and its lock. Letting the lock go publishes what `poll` needs
//! of the state in one word ([`SharedLock::snapshot`]), so that poll
//! reads it without the lock (as upstream's `smc_poll` reads its atomic
//! cursors), then sends the owner's signals: whoever is woken or signalled
//! after a change (wake-ups come after the lock is let go) polls the
//! changed state. Poll takes the lock only for what is rare: an urgent
//! byte at the reader, a full send buffer, a changed `SO_OOBINLINE`.

use crate::sys::owner::OwnerHook;
use crate::sys::sync::BhOff;
use crate::sys::wake::Wake;
use crate::wire::cdc::{ConnStateFlags, ProducerFlags};
use crate::wire::close::CloseMachine;
use crate::wire::cursor::Cursor;
use crate::wire::lgr_links::LINKS_MAX;
use crate::wire::rtokens::Rtoken;
use core::ops::{Deref, DerefMut};
use kernel::prelude::*;
use kernel::sync::lock::spinlock::SpinLockBackend;
use kernel::sync::lock::Guard;
use kernel::sync::SpinLock;
use kernel::{c_str, static_lock_class};

/// Where the peer's receive buffer is.
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct PeerRmb {
    /// The peer's token for this connection (put in every CDC we send).
    pub(crate) token: u32,
    /// Its size.
    pub(crate) size: u32,
    /// Its row in the link group's table of the peer's keys (upstream's
    /// `rtoken_idx`).
    pub(crate) row: usize,
    /// Its key and address on each link of the group, copied from that
    /// row (the link group copies them again when a link comes or goes).
    pub(crate) keys: [Option<Rtoken>; LINKS_MAX],
}

impl PeerRmb {
    /// The key and address to write with on link slot `idx`.
    pub(crate) fn key(&self, idx: usize) -> Option<Rtoken> {
        self.keys.get(idx).copied().flatten()
    }
}

/// What the receive path (softirq) and the socket calls share.
pub(crate) struct ConnShared {
    /// The peer's RMB (all zero until the server has the client's Confirm:
    /// nothing is sent before).
    pub(crate) peer: PeerRmb,
    /// Bytes the peer has written into our RMB.
    pub(crate) rx_prod: u64,
    /// Bytes we have read from our RMB.
    pub(crate) rx_cons: u64,
    /// The consumer position we last told the peer.
    pub(crate) rx_cons_sent: u64,
    /// The consumer cursor was asked to go now (`cdc::update_consumer`)
    /// and may wait in the queue for a free send slot: the push that
    /// serves the queue sends it however little was read.
    pub(crate) rx_cons_wanted: bool,
    /// Both cursors go to the peer with the next push, whatever changed:
    /// the connection moved to another link, and a message of ours that
    /// the old one completed may still be lost at the peer (cursors are
    /// absolute, so the next message makes it good).
    pub(crate) cursors_due: bool,
    /// The peer's producer cursor as last received.
    pub(crate) rx_prod_curs: Cursor,
    /// Bytes the application has put into the send buffer.
    pub(crate) tx_copied: u64,
    /// Bytes we have written into the peer's RMB.
    pub(crate) tx_prod: u64,
    /// The furthest `tx_prod` has been: a failover moves `tx_prod` back to
    /// write again what the peer may not have, but the peer may have read
    /// up to here.
    pub(crate) tx_prod_high: u64,
    /// Bytes whose CDC message the device completed: the send buffer
    /// below this may be reused.
    pub(crate) tx_fin: u64,
    /// Bytes the peer has read from its RMB.
    pub(crate) tx_acked: u64,
    /// The peer's consumer cursor as last received.
    pub(crate) peer_cons_curs: Cursor,
    /// Sequence number of our next CDC message.
    pub(crate) tx_seq: u16,
    /// Sequence number of the last CDC message taken from the peer.
    pub(crate) rx_seq: Option<u16>,
    /// The peer's connection state flags, accumulated.
    pub(crate) peer_state: ConnStateFlags,
    /// The peer's last producer flags.
    pub(crate) peer_flags: ProducerFlags,
    /// Connection state flags we send (done writing, closed, abort):
    /// every CDC message from now on carries them.
    pub(crate) sent_state: ConnStateFlags,
    /// The flags the last CDC message we posted carried.
    pub(crate) announced_state: ConnStateFlags,
    /// Where the connection is in closing.
    pub(crate) close: CloseMachine,
    /// Nothing more will arrive (the peer is done writing or closed, or
    /// `shutdown(SHUT_RD)`): reads end with end of file once the RMB is
    /// empty.
    pub(crate) rcv_shutdown: bool,
    /// The clcsock is to be reset (an abort): done in process context.
    pub(crate) clcsock_reset: bool,
    /// The application shut reading down (`SHUT_RD`).
    pub(crate) shut_rd: bool,
    /// Keeper's view of a closed socket's connection that waits for the
    /// peer to make room: the peer's consumer position last seen, and for
    /// how many ticks it has not moved.
    pub(crate) stall: (u64, u32),
    /// Keeper ticks the peer's clcsock has been finished without a closing
    /// flag by CDC (see `keepalive.rs`).
    pub(crate) fin_ticks: u32,
    /// The connection cannot be used any more (link down, protocol error,
    /// abort): `Some(errno)` for what calls report.
    pub(crate) error: Option<Error>,
    /// The application was told of the failure (TCP reports `sk_err`
    /// once; later sends fail with `EPIPE`, reads end).
    pub(crate) error_reported: bool,
    /// The last urgent byte the peer sent (`MSG_OOB`).
    pub(crate) urg_rx: Option<UrgentRx>,
    /// Position of the urgent byte we send: the data up to it goes in a
    /// write of its own, nothing after it until the peer consumed it.
    pub(crate) urg_tx: Option<u64>,
    /// `SO_OOBINLINE` as the socket's last read saw it.
    pub(crate) oob_inline: bool,
    /// The peer announced its next urgent byte (`urg_data_pending`) and
    /// the socket's owner got its `SIGURG`; the byte has not arrived yet.
    pub(crate) urg_announced: bool,
    /// The socket that owns the connection, once it has one, until its
    /// `release`: signalled under this lock.
    pub(crate) owner: Option<OwnerHook>,
    /// What to signal the owner when the lock is let go (see
    /// [`signal_owner`](Self::signal_owner)).
    signals: Option<(Wake, bool)>,
}

impl ConnShared {
    /// The state of a new connection whose peer's RMB is `peer`.
    pub(crate) fn new(peer: PeerRmb) -> ConnShared {
        ConnShared {
            peer,
            rx_prod: 0,
            rx_cons: 0,
            rx_cons_sent: 0,
            rx_cons_wanted: false,
            cursors_due: false,
            rx_prod_curs: Cursor::default(),
            tx_copied: 0,
            tx_prod: 0,
            tx_prod_high: 0,
            tx_fin: 0,
            tx_acked: 0,
            peer_cons_curs: Cursor::default(),
            tx_seq: 0,
            rx_seq: None,
            peer_state: ConnStateFlags::default(),
            peer_flags: ProducerFlags::default(),
            sent_state: ConnStateFlags::default(),
            announced_state: ConnStateFlags::default(),
            close: CloseMachine::active(),
            rcv_shutdown: false,
            clcsock_reset: false,
            shut_rd: false,
            stall: (0, 0),
            fin_ticks: 0,
            urg_rx: None,
            urg_tx: None,
            oob_inline: false,
            urg_announced: false,
            owner: None,
            error: None,
            error_reported: false,
            signals: None,
        }
    }

    /// Signals the socket's owner what `w` wakes for, as TCP's callbacks
    /// do (see [`OwnerHook::signal_io`]), and urgent data with `urgent`:
    /// when the lock is let go, once what poll reads of the connection is
    /// current (an owner woken by the signal may poll at once).
    pub(crate) fn signal_owner(&mut self, w: Wake, urgent: bool) {
        let (old, was_urgent) = self.signals.take().unwrap_or((Wake::NONE, false));
        self.signals = Some((old.or(w), was_urgent || urgent));
    }
}

/// An urgent byte from the peer: the last byte of the write its CDC
/// message flagged (`urg_data_present`).
#[derive(Clone, Copy, Debug)]
pub(crate) struct UrgentRx {
    /// Its position in the stream.
    pub(crate) pos: u64,
    /// The byte, once taken out of the RMB (the consumer cursor then
    /// passes it, so that the peer may go on writing).
    pub(crate) byte: Option<u8>,
    /// The application read it with `MSG_OOB`.
    pub(crate) read: bool,
    /// Nothing was read after the mark yet (`SIOCATMARK`).
    pub(crate) at_mark: bool,
}

/// The connection's shared state behind its lock. Letting go of it after
/// a change publishes the word poll reads to the socket the connection
/// serves (its owner hook's [`PollWord`](crate::sys::owner::PollWord)).
///
/// An SMC-R connection's receive path takes it in softirq context (the
/// completion handler): the lock keeps softirqs off (as `spin_lock_bh`).
/// An SMC-D connection's is only taken in process context (its CDC
/// messages are applied by the sender's call, see `smcd::dmb`): a plain
/// spin lock, of a lock class of its own, so that lockdep would tell if it
/// ever were taken in softirq context.
#[pin_data]
pub(crate) struct SharedLock {
    #[pin]
    lock: SpinLock<ConnShared>,
    /// Softirqs stay off while it is held (SMC-R).
    bh: bool,
}

impl SharedLock {
    /// The lock around `shared`; `ism` for an SMC-D connection.
    pub(crate) fn new(shared: ConnShared, ism: bool) -> impl PinInit<Self, Error> {
        let (name, class) = if ism {
            (c_str!("Conn::shared (SMC-D)"), static_lock_class!())
        } else {
            (c_str!("Conn::shared"), static_lock_class!())
        };
        try_pin_init!(SharedLock {
            lock <- SpinLock::new(shared, name, class),
            bh: !ism,
        }? Error)
    }

    /// Takes the lock.
    pub(crate) fn lock(&self) -> SharedGuard<'_> {
        let bh = self.bh.then(BhOff::new);
        SharedGuard {
            guard: self.lock.lock(),
            _bh: bh,
            written: false,
        }
    }
}

/// The held lock of a connection's shared state.
pub(crate) struct SharedGuard<'a> {
    // Dropped first: the lock is let go before softirqs come back on.
    guard: Guard<'a, ConnShared, SpinLockBackend>,
    _bh: Option<BhOff>,
    /// The state was borrowed mutably, so it may have changed: only then
    /// does letting go publish the poll word and the signals (nothing
    /// else changes it, `ConnShared` has no interior mutability), which a
    /// look that changes nothing need not pay for.
    written: bool,
}

impl SharedGuard<'_> {
    /// Poll reads the state under this lock: publishes the word for the
    /// socket's poll now, and from then on every change does when the lock
    /// is let go (a socket nobody polls, with blocking calls only, does not
    /// pay for it at each change).
    pub(crate) fn publish_for_poll(&self) {
        if let Some(o) = &self.guard.owner {
            o.publish_poll(Snapshot::of(&self.guard).0);
        }
    }
}

impl Deref for SharedGuard<'_> {
    type Target = ConnShared;

    fn deref(&self) -> &ConnShared {
        &self.guard
    }
}

impl DerefMut for SharedGuard<'_> {
    fn deref_mut(&mut self) -> &mut ConnShared {
        self.written = true;
        &mut self.guard
    }
}

impl Drop for SharedGuard<'_> {
    fn drop(&mut self) {
        // `signals` is set through a mutable borrow too.
        if !self.written {
            return;
        }
        // Under the lock: the stores are in the order of the changes; only
        // for a socket that poll read (see `publish_for_poll`).
        if let Some(o) = &self.guard.owner {
            if o.poll_published() {
                o.publish_poll(Snapshot::of(&self.guard).0);
            }
        }
        if let Some((w, urgent)) = self.guard.signals.take() {
            if let Some(o) = &self.guard.owner {
                if urgent {
                    o.signal_urgent();
                }
                o.signal_io(w.reaches_readers(), w.reaches_writers());
            }
        }
    }
}

/// What poll reads of a connection's state, in one word: flags, and in
/// the high half the bytes the send buffer holds.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Snapshot(u64);

impl Snapshot {
    const VALID: u64 = 1 << 0;
    const BYTES: u64 = 1 << 1;
    const PENDING_MARK: u64 = 1 << 2;
    const RCV_SHUTDOWN: u64 = 1 << 3;
    const URGENT_UNREAD: u64 = 1 << 4;
    const OOB_INLINE: u64 = 1 << 5;
    const ERROR: u64 = 1 << 6;
    const ERROR_REPORTED: u64 = 1 << 7;
    const PEER_CLOSED: u64 = 1 << 8;
    const WRITE_CLOSED: u64 = 1 << 9;

    fn of(sh: &ConnShared) -> Snapshot {
        let flag = |cond: bool, bit: u64| if cond { bit } else { 0 };
        let mark = sh
            .urg_rx
            .is_some_and(|u| !sh.oob_inline && u.byte.is_none() && u.pos >= sh.rx_cons);
        let used = sh.tx_copied.saturating_sub(sh.tx_fin).min(u64::from(u32::MAX));
        Snapshot(
            Self::VALID
                | flag(sh.rx_prod > sh.rx_cons, Self::BYTES)
                | flag(mark, Self::PENDING_MARK)
                | flag(sh.rcv_shutdown, Self::RCV_SHUTDOWN)
                | flag(sh.urg_rx.is_some_and(|u| !u.read), Self::URGENT_UNREAD)
                | flag(sh.oob_inline, Self::OOB_INLINE)
                | flag(sh.error.is_some(), Self::ERROR)
                | flag(sh.error_reported, Self::ERROR_REPORTED)
                | flag(sh.peer_state.any_close(), Self::PEER_CLOSED)
                | flag(sh.close.write_closed(), Self::WRITE_CLOSED)
                | used << 32,
        )
    }

    /// The snapshot a word published through the owner hook holds.
    pub(crate) fn from_word(word: u64) -> Snapshot {
        Snapshot(word)
    }

    /// Whether poll can go by it for a socket with `oob_inline`
    /// (`SO_OOBINLINE`): not with an urgent byte that may be at the
    /// reader, nor before the first look, nor after `SO_OOBINLINE` changed.
    pub(crate) fn usable(self, oob_inline: bool) -> bool {
        self.has(Self::VALID)
            && !self.has(Self::PENDING_MARK)
            && self.has(Self::OOB_INLINE) == oob_inline
    }

    fn has(self, bit: u64) -> bool {
        self.0 & bit != 0
    }

    /// Bytes wait to be read.
    pub(crate) fn bytes(self) -> bool {
        self.has(Self::BYTES)
    }

    /// Nothing more will arrive.
    pub(crate) fn rcv_shutdown(self) -> bool {
        self.has(Self::RCV_SHUTDOWN)
    }

    /// Urgent data not read yet, for a socket without `SO_OOBINLINE`.
    pub(crate) fn urgent(self) -> bool {
        !self.has(Self::OOB_INLINE) && self.has(Self::URGENT_UNREAD)
    }

    /// The connection's failure (see `Conn::failure`), given whether its
    /// clcsock `was_reset`.
    pub(crate) fn failed(self, was_reset: bool) -> bool {
        self.has(Self::ERROR) || (was_reset && !self.has(Self::PEER_CLOSED))
    }

    /// A read would not block: bytes, the end of the stream, or a failure
    /// (see [`failed`](Self::failed)), as `rx` finds under the lock when
    /// the snapshot is [`usable`](Self::usable).
    pub(crate) fn readable(self, was_reset: bool) -> bool {
        self.bytes() || self.rcv_shutdown() || self.failed(was_reset)
    }

    /// The application was told of the failure.
    pub(crate) fn error_reported(self) -> bool {
        self.has(Self::ERROR_REPORTED)
    }

    /// The writing side is closed.
    pub(crate) fn write_closed(self) -> bool {
        self.has(Self::WRITE_CLOSED)
    }

    /// Bytes the send buffer holds (written or not, not completed).
    pub(crate) fn tx_used(self) -> u64 {
        self.0 >> 32
    }
}
