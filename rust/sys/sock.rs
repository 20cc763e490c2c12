// SPDX-License-Identifier: GPL-2.0

//! The AF_SMC `struct sock` and the protocol state built in place behind it.

use super::bindings;
use super::errno::EAGAIN;
use super::net::Net;
use super::tcp::KernelSocket;
use core::cell::UnsafeCell;
use core::ffi::{c_int, c_long};
use core::marker::PhantomData;
use core::ops::{Deref, DerefMut};
use core::ptr::{addr_of_mut, NonNull};
use kernel::error::{Error, Result};
use kernel::init::{Init, PinInit};
use kernel::types::{AlwaysRefCounted, Opaque};

/// The protocol state of an SMC socket.
///
/// The value itself (`Self`) is built in place with `pin_init` when the
/// socket is made and never moves: it may hold locks, wait queues and work
/// items. It is shared: reachable from any context that holds the socket.
/// [`SockState::Locked`] is the part only reachable under the socket lock.
pub(crate) trait SockState: Sized + Send + Sync + 'static {
    /// Only reachable under the socket lock (`lock_sock`), through a
    /// [`SockGuard`].
    type Locked: Send;

    /// The internal TCP socket that serves the SMC socket (the clcsock).
    fn clcsock(&self) -> &KernelSocket;
}

/// An AF_SMC `struct sock` followed by the protocol's per-socket state.
///
/// The protocol's `struct proto` has `obj_size >= size_of::<SmcSk<S>>()`, so
/// `sk_alloc` hands out memory for this whole type (an IPv6 socket has its
/// `ipv6_pinfo` after it); `sk` must stay first.
///
/// # Invariants
///
/// Once a socket is published (it has a `struct socket` or is reachable from
/// another socket), `state` and `locked` are initialised and `state` is
/// pinned; `locked` is only accessed under the socket lock, and both are
/// dropped exclusively in `sk_destruct`.
#[repr(C)]
pub(crate) struct SmcSk<S: SockState> {
    /// A `struct sock`, with room for the `inet_sock` it is when the socket
    /// was made by `socket(AF_INET/AF_INET6, SOCK_STREAM, IPPROTO_SMC)`.
    sk: Opaque<bindings::inet_sock>,
    pub(super) state: S,
    locked: UnsafeCell<S::Locked>,
}

// SAFETY: `state` is `Sync`, `locked` is only reached under the socket lock,
// and the `struct sock` is designed for concurrent use.
unsafe impl<S: SockState> Sync for SmcSk<S> {}
// SAFETY: as above; a socket may be released from any thread.
unsafe impl<S: SockState> Send for SmcSk<S> {}

// SAFETY: `sock_hold`/`sock_put` keep the socket memory and its state alive
// while the count is above zero; at zero `sk_destruct` drops the state.
unsafe impl<S: SockState> AlwaysRefCounted for SmcSk<S> {
    fn inc_ref(&self) {
        // SAFETY: live (reference), so the count is not zero.
        unsafe { bindings::smc_rs_sock_hold(self.as_raw()) };
    }

    unsafe fn dec_ref(obj: NonNull<Self>) {
        // SAFETY: the caller owns an increment (trait contract).
        unsafe { bindings::smc_rs_sock_put(obj.as_ptr().cast()) };
    }
}

impl<S: SockState> SmcSk<S> {
    /// Borrows the `SmcSk` behind a raw `struct sock`.
    ///
    /// # Safety
    ///
    /// `sk` must have been allocated from the AF_SMC proto whose state type is
    /// `S`, with its state initialised, and must stay alive for `'a`.
    pub(crate) unsafe fn from_raw<'a>(sk: *mut bindings::sock) -> &'a Self {
        // `SmcSk` is `repr(C)` with the `struct sock` first: same pointer.
        // SAFETY: liveness for `'a` and the state type are the caller's promise.
        unsafe { &*sk.cast::<Self>() }
    }

    /// The raw `struct sock`.
    pub(crate) fn as_raw(&self) -> *mut bindings::sock {
        // `struct inet_sock` starts with its `struct sock`.
        self.sk.get().cast()
    }

    /// Builds the state of a freshly allocated socket in place.
    ///
    /// On failure nothing is left to drop: `state` failed, and `locked` is
    /// only moved in after it succeeded.
    ///
    /// # Safety
    ///
    /// `sk` must come from `sk_alloc` with the AF_SMC proto for state type `S`
    /// and must not be reachable by anyone else yet.
    pub(super) unsafe fn init_state(
        sk: *mut bindings::sock,
        state: impl PinInit<S, Error>,
        locked: S::Locked,
    ) -> Result {
        let this = sk.cast::<Self>();
        // The object is `obj_size >= size_of::<Self>()` bytes and never
        // moves until it is freed, after `drop_state`.
        // SAFETY: so the slot is valid, unseen by others and pinned.
        unsafe { state.__pinned_init(addr_of_mut!((*this).state))? };
        // SAFETY: as above; a value initialises its slot and cannot fail.
        unsafe { Init::<_, Error>::__init(UnsafeCell::new(locked), addr_of_mut!((*this).locked))? };
        Ok(())
    }

    /// Drops the state of a socket whose last reference is gone.
    ///
    /// # Safety
    ///
    /// Called once, from `sk_destruct`, on a socket whose state was
    /// initialised; nobody can reach the socket any more.
    pub(super) unsafe fn drop_state(sk: *mut bindings::sock) {
        let this = sk.cast::<Self>();
        // SAFETY: initialised (caller); the only access left (no references).
        unsafe {
            core::ptr::drop_in_place(addr_of_mut!((*this).locked));
            core::ptr::drop_in_place(addr_of_mut!((*this).state));
        }
    }

    /// The receive timeout (`SO_RCVTIMEO`) in jiffies; 0 for `nonblock`.
    pub(crate) fn rcvtimeo(&self, nonblock: bool) -> c_long {
        // SAFETY: a read of a field of a live socket.
        unsafe { bindings::smc_rs_sk_rcvtimeo(self.as_raw(), nonblock) }
    }

    /// The send timeout (`SO_SNDTIMEO`) in jiffies; 0 for `nonblock`.
    pub(crate) fn sndtimeo(&self, nonblock: bool) -> c_long {
        // SAFETY: a read of a field of a live socket.
        unsafe { bindings::smc_rs_sk_sndtimeo(self.as_raw(), nonblock) }
    }

    /// The linger time of `SO_LINGER` in jiffies, if it is on.
    pub(crate) fn linger(&self) -> Option<c_long> {
        // SAFETY: reads of the flags and a field of a live socket; the
        // option is set under the socket lock, a stale value is harmless.
        unsafe {
            let sk = self.as_raw();
            if !bindings::smc_rs_sock_flag(sk, bindings::sock_flags_SOCK_LINGER) {
                return None;
            }
            Some(core::ptr::read_volatile(core::ptr::addr_of!((*sk).sk_lingertime)) as c_long)
        }
    }

    /// `SO_OOBINLINE`: urgent data stays in the stream.
    pub(crate) fn oob_inline(&self) -> bool {
        // SAFETY: a read of the flags of a live socket.
        unsafe { bindings::smc_rs_sock_flag(self.as_raw(), bindings::sock_flags_SOCK_URGINLINE) }
    }

    /// A stream's send error `err` for a `sendmsg` with `flags`: `EPIPE`
    /// raises `SIGPIPE` unless `MSG_NOSIGNAL`, as TCP's does.
    pub(crate) fn stream_error(&self, flags: u32, err: Error) -> Error {
        // SAFETY: a live socket; the call only reads it and signals the
        // current task.
        let e = unsafe { bindings::sk_stream_error(self.as_raw(), flags as c_int, err.to_errno()) };
        Error::from_errno(e)
    }

    /// The protocol state (the part that needs no socket lock).
    pub(crate) fn state(&self) -> &S {
        &self.state
    }

    /// Takes the socket lock (may sleep) and gives exclusive access to the
    /// locked state.
    pub(crate) fn lock(&self) -> SockGuard<'_, S> {
        // SAFETY: `self` is a live socket (type invariant of a reference).
        unsafe { bindings::smc_rs_lock_sock(self.as_raw()) };
        // INVARIANT: the lock was taken above.
        SockGuard {
            sk: self,
            _not_send: PhantomData,
        }
    }

    /// The network namespace the socket lives in.
    pub(crate) fn net(&self) -> &Net {
        // SAFETY: a live socket always has a network namespace, which
        // outlives it.
        unsafe { Net::from_raw(bindings::smc_rs_sock_net(self.as_raw())) }
    }

    /// The protocol number the socket was created with.
    pub(crate) fn protocol(&self) -> u16 {
        // SAFETY: a plain read of a field set at creation.
        unsafe { (*self.as_raw()).sk_protocol }
    }

    /// Sends `SIGIO` (`POLL_IN`) to an `O_ASYNC` owner of the socket's
    /// file: something can be read (a listener: accepted).
    pub(crate) fn signal_readable(&self) {
        // SAFETY: a live socket; `sk_wake_async` checks `SOCK_FASYNC`.
        unsafe {
            bindings::smc_rs_sk_wake_async(
                self.as_raw(),
                bindings::SOCK_WAKE_WAITD as c_int,
                bindings::POLL_IN as c_int,
            )
        };
    }
}

/// Exclusive access to a socket's locked state while its socket lock is
/// held. Not `Send`: lockdep wants the task that locked to unlock.
///
/// # Invariants
///
/// The socket lock of `sk` is held by the current task.
pub(crate) struct SockGuard<'a, S: SockState> {
    sk: &'a SmcSk<S>,
    _not_send: PhantomData<*mut ()>,
}

impl<S: SockState> SockGuard<'_, S> {
    /// The locked socket.
    pub(crate) fn sk(&self) -> &SmcSk<S> {
        self.sk
    }

    /// Marks the socket listening (`TCP_LISTEN`) or not (`TCP_CLOSE`), for
    /// the socket layer's own view (`SO_ACCEPTCONN`) and diagnostics.
    pub(crate) fn set_listening(&self, on: bool) {
        let state = if on {
            bindings::TCP_LISTEN
        } else {
            bindings::TCP_CLOSE
        };
        self.set_sk_state(state as u8);
    }

    /// Sets `sk_state`, which the socket layer and sock_diag read.
    pub(crate) fn set_sk_state(&self, state: u8) {
        // Written under the socket lock (invariant); the socket layer reads
        // it locklessly (READ_ONCE), hence the single volatile store.
        // SAFETY: a single-byte store into a live socket.
        unsafe {
            core::ptr::write_volatile(
                addr_of_mut!((*self.sk.as_raw()).__sk_common.skc_state),
                state,
            )
        };
    }

    /// Sleeps until a wake-up on `on`'s wait queue, a signal, or the end of
    /// `*timeo` jiffies (updated), with the socket lock dropped meanwhile,
    /// like `sk_wait_event`. The waiter is exclusive: a wake-up for one
    /// event (one new connection) wakes one such waiter. `ready` is checked
    /// after queueing and before sleeping, so no wake-up is lost. `Ok` after
    /// any wake-up, ready or not (the caller looks again); fails with
    /// `EAGAIN` when the time is up and `EINTR`/`ERESTARTSYS` on a signal,
    /// unless `ready` holds then.
    pub(crate) fn wait_exclusive(
        &mut self,
        on: &KernelSocket,
        timeo: &mut c_long,
        ready: impl Fn() -> bool,
    ) -> Result {
        self.sleep(on, timeo, ready, true)
    }

    /// As [`wait_exclusive`](Self::wait_exclusive), but every wake-up wakes
    /// this waiter, as TCP's waits for data and room: a wake-up for readers
    /// cannot be taken by a writer waiting on the same queue.
    pub(crate) fn wait(&mut self, on: &KernelSocket, timeo: &mut c_long, ready: impl Fn() -> bool) -> Result {
        self.sleep(on, timeo, ready, false)
    }

    fn sleep(
        &mut self,
        on: &KernelSocket,
        timeo: &mut c_long,
        ready: impl Fn() -> bool,
        exclusive: bool,
    ) -> Result {
        let entry = Opaque::<bindings::wait_queue_entry>::uninit();
        let head = on.wait_queue();
        let state = bindings::TASK_INTERRUPTIBLE as c_int;
        // `entry` stays in place until `finish_wait` took it off the queue;
        // `head` is the live wait queue of a socket the caller keeps alive.
        // SAFETY: so both are valid for the whole wait.
        unsafe {
            bindings::init_wait_entry(entry.get(), 0);
            if exclusive {
                bindings::prepare_to_wait_exclusive(head, entry.get(), state);
            } else {
                bindings::prepare_to_wait(head, entry.get(), state);
            }
        }
        // The lock is taken again below, before the guard is used again.
        // SAFETY: the guard holds the lock (invariant).
        unsafe { bindings::release_sock(self.sk.as_raw()) };
        if !ready() {
            // SAFETY: plain sleep, the task state was set by `prepare_to_wait`.
            *timeo = unsafe { bindings::schedule_timeout(*timeo) };
        }
        // Back to running (`ready` may have held before any sleep, with the
        // task still marked asleep) and off the queue, then retakes the lock
        // the guard stands for, which may sleep. `entry` is queued on `head`
        // or was taken off by its wake-up.
        // SAFETY: `head` and `entry` are valid as above.
        unsafe {
            bindings::finish_wait(head, entry.get());
            bindings::smc_rs_lock_sock(self.sk.as_raw());
        }
        // A wake-up with time left and no signal: the caller looks again
        // (as after any wake-up) without `ready` taking its locks once more
        // here. Otherwise what is ready wins over the signal or the end
        // of the time, as in TCP's waits.
        let signalled = kernel::current!().signal_pending();
        if (!signalled && *timeo != 0) || ready() {
            return Ok(());
        }
        if signalled {
            // SAFETY: pure function of its argument.
            return Err(Error::from_errno(unsafe {
                bindings::smc_rs_sock_intr_errno(*timeo)
            }));
        }
        if *timeo == 0 {
            return Err(EAGAIN.into());
        }
        Ok(())
    }
}

impl<S: SockState> Deref for SockGuard<'_, S> {
    type Target = S::Locked;

    fn deref(&self) -> &S::Locked {
        // By the `SmcSk` invariant the lock gives exclusive access to `locked`.
        // SAFETY: the socket lock is held for the guard's lifetime (invariant).
        unsafe { &*self.sk.locked.get() }
    }
}

impl<S: SockState> DerefMut for SockGuard<'_, S> {
    fn deref_mut(&mut self) -> &mut S::Locked {
        // SAFETY: as in `deref`; `&mut self` makes this the only borrow.
        unsafe { &mut *self.sk.locked.get() }
    }
}

impl<S: SockState> Drop for SockGuard<'_, S> {
    fn drop(&mut self) {
        // SAFETY: the lock was taken when the guard was made (invariant).
        unsafe { bindings::release_sock(self.sk.as_raw()) };
    }
}
