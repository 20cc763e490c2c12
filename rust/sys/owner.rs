// SPDX-License-Identifier: GPL-2.0

//! The SMC socket a connection serves, for the connection's paths that
//! signal the process owning the socket's file: an SMC connection holds
//! its clcsock (whose wait queue the SMC socket's callers sleep on, see
//! [`TcpSock::wake`](super::tcp::TcpSock)), not the SMC socket. Through an
//! [`OwnerHook`] it sends what TCP sends from its own callbacks: `SIGIO`
//! for new bytes, a change of state and room to write (`O_ASYNC`), and
//! `SIGURG` for urgent data (`F_SETOWN`).
//!
//! The connection keeps the hook under its own lock and signals under
//! that lock; the socket takes the hook back under the same lock in its
//! `release`, before it is orphaned. So whoever signals through a hook
//! finds the socket connected, with its socket and file.

use super::bindings;
use super::sock::{SmcSk, SockState};
use core::ffi::c_int;
use core::sync::atomic::{AtomicU32, AtomicU64, Ordering};

/// What poll reads of a connection without a lock, kept in the socket the
/// connection serves (so that poll needs neither the connection nor a lock
/// to find it): the connection's last snapshot word, which it publishes
/// through its [`OwnerHook`] once poll asked for it and from then on each
/// time it lets go of its lock after a change (zero until then: a
/// published word never is), and the size of its send buffer, set when
/// the socket got its connection (zero until then: a connection's never
/// is).
#[derive(Default)]
pub(crate) struct PollWord {
    snap: AtomicU64,
    sndbuf: AtomicU32,
}

impl PollWord {
    /// The last word published, and the send buffer's size.
    pub(crate) fn read(&self) -> (u64, u32) {
        (self.snap.load(Ordering::Acquire), self.sndbuf.load(Ordering::Relaxed))
    }

    /// The socket has its connection (see [`set_sndbuf`](Self::set_sndbuf)).
    pub(crate) fn connected(&self) -> bool {
        self.sndbuf.load(Ordering::Acquire) != 0
    }

    /// Sets the send buffer's size (not zero) once the socket can find its
    /// connection: from then on poll asks the connection.
    pub(crate) fn set_sndbuf(&self, size: u32) {
        self.sndbuf.store(size, Ordering::Release);
    }
}

/// The SMC socket (`struct sock`) of a connection, to signal its owner.
///
/// # Invariants
///
/// `sk` is a `struct sock` this hook holds a reference to (`sock_hold`):
/// its memory lives as long as the hook, and so does `poll`, which points
/// into its state. Its `sk_socket` is the same live
/// socket, with the same file, at least until the hook is dropped (the
/// promise of [`OwnerHook::new`]'s caller).
pub(crate) struct OwnerHook {
    sk: *mut bindings::sock,
    poll: *const PollWord,
}

// SAFETY: a `struct sock` is made for use from any context; the hook only
// calls functions that take its own locks (or RCU).
unsafe impl Send for OwnerHook {}
// SAFETY: as above.
unsafe impl Sync for OwnerHook {}

impl OwnerHook {
    /// A hook onto `owner`. The owner must be connected with a socket
    /// (`sk_socket` set) and must drop the hook in `release`, before its
    /// socket is orphaned.
    /// `poll` finds the socket's [`PollWord`] in its state, which the hook
    /// publishes to.
    pub(crate) fn new<S: SockState>(owner: &SmcSk<S>, poll: fn(&S) -> &PollWord) -> Self {
        let sk = owner.as_raw();
        // SAFETY: `owner` is a live socket, so its count is not zero.
        unsafe { bindings::smc_rs_sock_hold(sk) };
        // INVARIANT: held above; the socket and its file stay until the
        // hook is dropped (the caller's promise). The word is borrowed from
        // the socket's state, which lives while the socket is held.
        OwnerHook {
            sk,
            poll: poll(owner.state()),
        }
    }

    /// Whether a word was published for the socket's poll (see
    /// [`PollWord`]): later changes are to be published too.
    pub(crate) fn poll_published(&self) -> bool {
        // SAFETY: `poll` lives as long as the socket the hook holds
        // (invariant).
        unsafe { (*self.poll).snap.load(Ordering::Relaxed) != 0 }
    }

    /// Publishes the connection's snapshot word (never zero) for the
    /// socket's poll.
    pub(crate) fn publish_poll(&self, word: u64) {
        // SAFETY: `poll` lives as long as the socket the hook holds
        // (invariant).
        unsafe { (*self.poll).snap.store(word, Ordering::Release) };
    }

    fn wake_async(&self, how: u32, band: u32) {
        // SAFETY: `sk` is live (invariant); `sk_wake_async` checks
        // `SOCK_FASYNC` and reads the socket's wait queue under RCU.
        unsafe { bindings::smc_rs_sk_wake_async(self.sk, how as c_int, band as c_int) };
    }

    /// `SIGIO` to the `O_ASYNC` owners of the socket's file, as TCP sends
    /// it: `readable` for new bytes or a change of the connection's state
    /// (`POLL_IN`, unless a reader is blocked in its call), `room` for room
    /// to write once a send or poll found none (`POLL_OUT`, see
    /// [`Self::note_no_room`]). Any context.
    pub(crate) fn signal_io(&self, readable: bool, room: bool) {
        if readable {
            self.wake_async(bindings::SOCK_WAKE_WAITD, bindings::POLL_IN);
        }
        if room {
            // Signals only when `note_no_room` set `SOCKWQ_ASYNC_NOSPACE`,
            // and clears it.
            self.wake_async(bindings::SOCK_WAKE_SPACE, bindings::POLL_OUT);
        }
    }

    /// A send or poll found the send buffer full: the next wake-up for
    /// room sends `SIGIO` (TCP's `SOCKWQ_ASYNC_NOSPACE`). Any context.
    pub(crate) fn note_no_room(&self) {
        // SAFETY: live socket (invariant); `sk_set_bit` does nothing
        // without `SOCK_FASYNC` and sets an atomic bit of the wait queue of
        // the socket, which is connected (invariant), otherwise.
        unsafe { bindings::smc_rs_sk_set_async_nospace(self.sk) };
    }

    /// Urgent data were announced: `SIGURG` to the owner of the socket's
    /// file (`F_SETOWN`), and to its `O_ASYNC` owners, as TCP's
    /// `sk_send_sigurg`. Any context.
    pub(crate) fn signal_urgent(&self) {
        // SAFETY: live socket whose `sk_socket` and file are live
        // (invariant); `sk_send_sigurg` checks both for NULL.
        unsafe { bindings::sk_send_sigurg(self.sk) };
    }
}

impl Drop for OwnerHook {
    fn drop(&mut self) {
        // SAFETY: the reference taken in `new`.
        unsafe { bindings::smc_rs_sock_put(self.sk) };
    }
}
