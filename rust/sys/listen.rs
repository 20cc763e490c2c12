// SPDX-License-Identifier: GPL-2.0

//! Hooks on the TCP listener behind a listening SMC socket: TCP tells the
//! SMC socket about new connections (`sk_data_ready`) and asks it whether
//! new SYNs may still be offered SMC (`smc_hs_congested`).

use super::bindings;
use super::errno::EINVAL;
use super::sock::{SmcSk, SockState};
use super::tcp::{KernelSocket, TcpSock};
use core::cell::UnsafeCell;
use core::ptr::null_mut;
use kernel::error::Result;
use kernel::types::ARef;

/// A protocol whose sockets listen through a TCP listener.
pub(crate) trait ListenOwner: SockState {
    /// TCP queued a new connection on the listener of `sk`. Runs in softirq
    /// context: it may only schedule work, or return `true` to have the
    /// listener's waiters woken as TCP wakes them (one waiter in
    /// `accept()`, every poller), which then take the connection.
    fn connection_ready(sk: &SmcSk<Self>) -> bool;

    /// Where the hook keeps TCP's own `sk_data_ready` of the listener of
    /// `sk`, for the wake-ups of [`connection_ready`](Self::connection_ready).
    fn saved_data_ready(sk: &SmcSk<Self>) -> &SavedDataReady;

    /// Whether SYNs reaching the listener of `sk` should be answered
    /// without the SMC option (too many handshakes already). Softirq context.
    fn handshakes_congested(sk: &SmcSk<Self>) -> bool;
}

type DataReady = unsafe extern "C" fn(*mut bindings::sock);

/// TCP's own `sk_data_ready` of a hooked listener, kept in the owner so
/// that the hook's callback can wake the listener's waiters.
///
/// # Invariants
///
/// Written only under the write side of the listener's callback lock (by
/// [`ListenHook`]), read only under its read side (by the callbacks).
pub(crate) struct SavedDataReady(UnsafeCell<Option<DataReady>>);

// SAFETY: accesses are serialised by the callback lock (invariant).
unsafe impl Sync for SavedDataReady {}
// SAFETY: a function pointer, usable from any thread.
unsafe impl Send for SavedDataReady {}

impl SavedDataReady {
    /// Empty: no listener hooked yet.
    pub(crate) const fn new() -> Self {
        SavedDataReady(UnsafeCell::new(None))
    }
}

/// While alive, the TCP listener it was made for reports to its SMC socket
/// through the [`ListenOwner`] callbacks. Dropping it restores TCP's own
/// callbacks; once the drop returns, no callback runs for the SMC socket
/// any more.
///
/// # Invariants
///
/// `tcp`'s `sk_user_data` points at the owning `SmcSk` and its
/// `sk_data_ready` was `data_ready` before the hook replaced it; the owner
/// outlives the hook.
pub(crate) struct ListenHook {
    tcp: ARef<TcpSock>,
    data_ready: Option<DataReady>,
}

// SAFETY: the hook's state is only changed under the TCP socket's callback
// lock; `data_ready` is a function pointer fixed at creation.
unsafe impl Send for ListenHook {}
// SAFETY: shared access only reads fields fixed at creation.
unsafe impl Sync for ListenHook {}

impl ListenHook {
    /// Hooks `owner` onto its TCP listener `tcp` (before `listen(2)` on it,
    /// or right after).
    ///
    /// The owner must drop the hook before its own last reference goes
    /// (in `release`), so callbacks never see a dying owner.
    pub(crate) fn new<S: ListenOwner>(tcp: &KernelSocket, owner: &SmcSk<S>) -> Self {
        let sk = tcp.sk().as_raw();
        // `sk` is the live `struct sock` of `tcp`; its callbacks change
        // under its callback lock, as every other user of them does.
        // SAFETY: so these writes race with no reader or writer.
        let data_ready = unsafe {
            bindings::smc_rs_callback_write_lock(sk);
            let old = (*sk).sk_data_ready;
            // INVARIANT: under the write side of the callback lock.
            *S::saved_data_ready(owner).0.get() = old;
            // Children cloned from the listener do not inherit the pointer
            // (NOCOPY); they inherit `sk_data_ready`, which `accept` undoes.
            bindings::smc_rs_set_user_data_nocopy(sk, owner.as_raw().cast());
            (*sk).sk_data_ready = Some(data_ready_trampoline::<S>);
            bindings::smc_rs_tcp_set_hs_congested(sk, Some(congested_trampoline::<S>));
            bindings::smc_rs_callback_write_unlock(sk);
            old
        };
        // INVARIANT: callbacks installed above, `owner` outlives the hook.
        ListenHook {
            tcp: ARef::from(tcp.sk()),
            data_ready,
        }
    }

    /// Accepts a connection from the hooked listener `tcp` without waiting
    /// (`EAGAIN` when there is none), with TCP's own data callback restored
    /// on it.
    pub(crate) fn accept(&self, tcp: &KernelSocket) -> Result<KernelSocket> {
        if !core::ptr::eq(tcp.sk(), &*self.tcp) {
            return Err(EINVAL.into());
        }
        let child = tcp.accept(bindings::O_NONBLOCK as i32)?;
        let sk = child.sk().as_raw();
        // Until now the child called our trampoline, which does nothing for
        // it (its `sk_user_data` is NULL): nobody waited on it yet.
        // SAFETY: the live child's callbacks change under its callback lock.
        unsafe {
            bindings::smc_rs_callback_write_lock(sk);
            (*sk).sk_data_ready = self.data_ready;
            bindings::smc_rs_tcp_set_hs_congested(sk, None);
            bindings::smc_rs_callback_write_unlock(sk);
        }
        Ok(child)
    }

    /// Wakes the waiters of the hooked listener for one new connection, as
    /// TCP's own callback would (one exclusive waiter, every poller).
    pub(crate) fn wake_one(&self) {
        if let Some(f) = self.data_ready {
            // SAFETY: TCP's callback on the live listener (reference held).
            unsafe { f(self.tcp.as_raw()) };
        }
    }
}

impl Drop for ListenHook {
    fn drop(&mut self) {
        let sk = self.tcp.as_raw();
        // Trampolines run under the read side of the callback lock: after
        // the write side, none is running or will see the owner.
        // SAFETY: live `sk` (reference held until the `ARef` goes).
        unsafe {
            bindings::smc_rs_callback_write_lock(sk);
            bindings::smc_rs_set_user_data_nocopy(sk, null_mut());
            (*sk).sk_data_ready = self.data_ready;
            bindings::smc_rs_tcp_set_hs_congested(sk, None);
            bindings::smc_rs_callback_write_unlock(sk);
        }
    }
}

/// Runs `f` with the owner hooked onto `sk`, if any, under the read side of
/// the callback lock (which keeps the owner alive: see [`ListenHook`]).
///
/// # Safety
///
/// `sk` must be a live TCP socket whose `sk_user_data`, when set, was set
/// by a [`ListenHook`] for an owner of type `S`.
unsafe fn with_owner<S: ListenOwner, R>(
    sk: *mut bindings::sock,
    f: impl FnOnce(&SmcSk<S>) -> R,
) -> Option<R> {
    // SAFETY: `sk` is live (caller).
    unsafe { bindings::smc_rs_callback_read_lock(sk) };
    // SAFETY: as above.
    let owner = unsafe { bindings::smc_rs_user_data(sk) };
    let r = if owner.is_null() {
        None
    } else {
        // The hook clears the pointer under the write lock before its owner
        // can go away, so under the read lock the owner is alive.
        // SAFETY: set by a `ListenHook` for an `SmcSk<S>` (caller).
        Some(f(unsafe { SmcSk::<S>::from_raw(owner.cast()) }))
    };
    // SAFETY: taken above.
    unsafe { bindings::smc_rs_callback_read_unlock(sk) };
    r
}

/// # Safety
///
/// Installed as `sk_data_ready` of a hooked TCP listener (and inherited by
/// its children until accepted); TCP calls it with that live socket.
unsafe extern "C" fn data_ready_trampoline<S: ListenOwner>(sk: *mut bindings::sock) {
    let wake = |owner: &SmcSk<S>| {
        if !S::connection_ready(owner) {
            return;
        }
        // SAFETY: `with_owner` runs this under the read side of the
        // callback lock, which serialises it with the hook's writes
        // (`SavedDataReady` invariant).
        let tcp_ready = unsafe { *S::saved_data_ready(owner).0.get() };
        if let Some(f) = tcp_ready {
            // SAFETY: TCP's own callback of this live listener, called as
            // TCP would call it.
            unsafe { f(sk) };
        }
    };
    // SAFETY: contract of the trampoline.
    unsafe { with_owner::<S, _>(sk, wake) };
}

/// # Safety
///
/// Installed as `smc_hs_congested` of a hooked TCP listener; TCP calls it
/// with that live socket while answering a SYN.
unsafe extern "C" fn congested_trampoline<S: ListenOwner>(sk: *const bindings::sock) -> bool {
    // SAFETY: contract of the trampoline.
    unsafe { with_owner::<S, _>(sk.cast_mut(), |owner| S::handshakes_congested(owner)) }
        .unwrap_or(false)
}
