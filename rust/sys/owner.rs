// SPDX-License-Identifier: GPL-2.0

//! The SMC socket a connected clcsock serves, for the receive path: an
//! SMC-R connection holds its clcsock (whose wait queue the SMC socket's
//! callers sleep on, see [`TcpSock::wake_waiters`]), not the SMC socket.
//! Through an [`OwnerHook`] it reaches the SMC socket to signal urgent
//! data to the process that owns the socket's file (`F_SETOWN`), as TCP
//! does.
//!
//! The hook uses the clcsock's `sk_user_data`, as a
//! [`ListenHook`](super::listen::ListenHook) does on a listener: when set,
//! it points at the live SMC `struct sock` that owns the clcsock, and is
//! only read under the read side of the clcsock's callback lock.

use super::bindings;
use super::sock::{SmcSk, SockState};
use super::tcp::TcpSock;
use core::ptr::null_mut;
use kernel::types::ARef;

/// While alive, the clcsock of its owner names the owner, so that
/// [`TcpSock::signal_urgent`] reaches it. Dropping it unhooks the owner;
/// once the drop returns, nothing reaches the owner through the clcsock.
///
/// # Invariants
///
/// `tcp`'s `sk_user_data` points at the owner's `struct sock`, whose
/// `sk_socket` stays the same live socket at least until the hook is
/// dropped.
pub(crate) struct OwnerHook {
    tcp: ARef<TcpSock>,
}

impl OwnerHook {
    /// Hooks `owner` onto its clcsock. The owner must be connected with a
    /// socket (`sk_socket` set) and must drop the hook in `release`,
    /// before its socket is orphaned.
    pub(crate) fn new<S: SockState>(owner: &SmcSk<S>) -> Self {
        let tcp = owner.state().clcsock().sk();
        let sk = tcp.as_raw();
        // `sk` is the live clcsock of `owner`; its user data changes under
        // its callback lock, where readers look at it.
        // SAFETY: so this write races with no reader.
        unsafe {
            bindings::smc_rs_callback_write_lock(sk);
            bindings::smc_rs_set_user_data_nocopy(sk, owner.as_raw().cast());
            bindings::smc_rs_callback_write_unlock(sk);
        }
        // INVARIANT: set above; the owner keeps its socket until it drops
        // the hook (the caller's promise).
        OwnerHook {
            tcp: ARef::from(tcp),
        }
    }
}

impl Drop for OwnerHook {
    fn drop(&mut self) {
        let sk = self.tcp.as_raw();
        // Readers hold the read side of the callback lock: after the write
        // side, none is running or will see the owner.
        // SAFETY: live `sk` (reference held until the `ARef` goes).
        unsafe {
            bindings::smc_rs_callback_write_lock(sk);
            bindings::smc_rs_set_user_data_nocopy(sk, null_mut());
            bindings::smc_rs_callback_write_unlock(sk);
        }
    }
}

impl TcpSock {
    /// Urgent data were announced on the connection this clcsock serves:
    /// `SIGURG` to the owner of the SMC socket's file (`F_SETOWN`), and to
    /// its `O_ASYNC` owners, as TCP's `sk_send_sigurg`. Nothing when no
    /// SMC socket is hooked. Any context.
    pub(crate) fn signal_urgent(&self) {
        let sk = self.as_raw();
        // SAFETY: `sk` is live (type invariant).
        unsafe { bindings::smc_rs_callback_read_lock(sk) };
        // SAFETY: as above.
        let owner = unsafe { bindings::smc_rs_user_data(sk) }.cast::<bindings::sock>();
        if !owner.is_null() {
            // Set by a hook (this one, or a listener's on a listening
            // clcsock, which also points at its live SMC socket) that is
            // unset under the write side before its owner's socket goes:
            // under the read side the owner, its socket and the socket's
            // file (freed after the socket's `release`) are live, and
            // `sk_send_sigurg` checks both for NULL.
            // SAFETY: so `owner` is a live `struct sock`.
            unsafe { bindings::sk_send_sigurg(owner) };
        }
        // SAFETY: taken above.
        unsafe { bindings::smc_rs_callback_read_unlock(sk) };
    }
}
