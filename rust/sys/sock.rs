// SPDX-License-Identifier: GPL-2.0

//! The AF_SMC `struct sock` and the protocol state that lives behind it.

use super::bindings;
use super::socket::{errno, KernelSocket};
use core::cell::UnsafeCell;
use core::ffi::c_long;
use core::ops::{Deref, DerefMut};
use core::ptr::{addr_of_mut, null_mut, NonNull};
use core::sync::atomic::{AtomicPtr, Ordering};
use kernel::alloc::flags::GFP_KERNEL;
use kernel::error::{Error, Result};
use kernel::types::Opaque;
use kernel::workqueue::Queue;

/// The two halves of a protocol's per-socket state, and the socket's
/// deferred work.
pub(crate) trait SockState: Sized + 'static {
    /// Fixed at creation or synchronised on its own; readable at any time.
    type Shared: Send + Sync;
    /// Only reachable under the socket lock.
    type Locked: Send;

    /// Runs the socket's work item (see [`SmcSk::schedule_work`]), on the
    /// handshake workqueue, in process context, with a reference held.
    fn run_work(sk: &SmcSk<Self>);
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
/// another socket), `shared` and `locked` are initialised; `locked` is only
/// accessed under the socket lock (`lock_sock`), and both are dropped
/// exclusively in `sk_destruct`.
#[repr(C)]
pub(crate) struct SmcSk<S: SockState> {
    /// A `struct sock`, with room for the `inet_sock` it is when the socket
    /// was made by `socket(AF_INET/AF_INET6, SOCK_STREAM, IPPROTO_SMC)`.
    sk: Opaque<bindings::inet_sock>,
    work: Opaque<bindings::work_struct>,
    shared: S::Shared,
    locked: UnsafeCell<S::Locked>,
}

// SAFETY: `shared` is `Sync`, `locked` is only reached under the socket lock,
// and the `struct sock` is designed for concurrent use.
unsafe impl<S: SockState> Sync for SmcSk<S> {}

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

    /// Writes the initial state into a freshly allocated socket.
    ///
    /// # Safety
    ///
    /// `sk` must come from `sk_alloc` with the AF_SMC proto for state type `S`
    /// and must not be reachable by anyone else yet.
    pub(crate) unsafe fn init_state(sk: *mut bindings::sock, shared: S::Shared, locked: S::Locked) {
        let this = sk.cast::<Self>();
        // SAFETY: in bounds (`obj_size`), unseen by others: ours to initialise.
        unsafe {
            bindings::smc_rs_init_work(
                Opaque::raw_get(addr_of_mut!((*this).work)),
                Some(work_trampoline::<S>),
            )
        };
        // The object is `obj_size == size_of::<Self>()` bytes: fields in bounds.
        // SAFETY: unseen by others; the zeroed old content needs no drop.
        unsafe {
            addr_of_mut!((*this).shared).write(shared);
            addr_of_mut!((*this).locked).write(UnsafeCell::new(locked));
        }
    }

    /// Drops the state of a socket whose last reference is gone.
    ///
    /// # Safety
    ///
    /// Called once, from `sk_destruct`, on a socket whose state was
    /// initialised; nobody can reach the socket any more.
    pub(crate) unsafe fn drop_state(sk: *mut bindings::sock) {
        let this = sk.cast::<Self>();
        // SAFETY: initialised (caller); the only access left (no references).
        unsafe {
            core::ptr::drop_in_place(addr_of_mut!((*this).locked));
            core::ptr::drop_in_place(addr_of_mut!((*this).shared));
        }
    }

    /// Queues the socket's work item on the handshake workqueue, holding a
    /// reference for it. Returns false when it was queued already.
    pub(crate) fn schedule_work(&self) -> bool {
        let wq = HANDSHAKE_WQ.load(Ordering::Acquire);
        if wq.is_null() {
            return false;
        }
        // The reference is dropped by the work item after it ran, or by
        // `cancel_work` if it never runs.
        // SAFETY: `self` is live.
        unsafe { bindings::smc_rs_sock_hold(self.as_raw()) };
        // The queue lives until module exit, which drains it.
        // SAFETY: the work item was initialised with the socket.
        let queued = unsafe { bindings::smc_rs_queue_work(wq, self.work.get()) };
        if !queued {
            // SAFETY: taken above and not handed to a work item.
            unsafe { bindings::smc_rs_sock_put(self.as_raw()) };
        }
        queued
    }

    /// Cancels the work item, waiting for it if it is running. Must not be
    /// called with the socket lock held (the work item takes it).
    pub(crate) fn cancel_work(&self) {
        // SAFETY: the work item was initialised with the socket.
        if unsafe { bindings::cancel_work_sync(self.work.get()) } {
            // SAFETY: it was pending and will not run: drop its reference.
            unsafe { bindings::smc_rs_sock_put(self.as_raw()) };
        }
    }

    /// A counted reference to the socket, for work that outlives the call.
    pub(crate) fn get_ref(&self) -> SockRef<S> {
        // SAFETY: `self` is live; the reference is dropped by `SockRef`.
        unsafe { bindings::smc_rs_sock_hold(self.as_raw()) };
        // INVARIANT: a reference is held for the new value.
        SockRef {
            sk: NonNull::from(self),
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

    /// The part of the state that needs no lock.
    pub(crate) fn shared(&self) -> &S::Shared {
        &self.shared
    }

    /// Takes the socket lock (may sleep) and gives exclusive access to the state.
    pub(crate) fn lock(&self) -> SockGuard<'_, S> {
        // SAFETY: `self` is a live socket (type invariant of a reference).
        unsafe { bindings::smc_rs_lock_sock(self.as_raw()) };
        SockGuard { sk: self }
    }

    /// The network namespace the socket lives in.
    pub(crate) fn net(&self) -> Net {
        // SAFETY: a live socket always has a network namespace.
        let net = unsafe { bindings::smc_rs_sock_net(self.as_raw()) };
        // INVARIANT: the namespace of a live socket outlives the socket.
        Net(net)
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
                bindings::SOCK_WAKE_WAITD as core::ffi::c_int,
                bindings::POLL_IN as core::ffi::c_int,
            )
        };
    }

    /// Marks the socket listening (`TCP_LISTEN`) or not (`TCP_CLOSE`), for
    /// the socket layer's own view (`SO_ACCEPTCONN`) and diagnostics.
    pub(crate) fn set_listening(&self, on: bool) {
        let state = if on {
            bindings::TCP_LISTEN
        } else {
            bindings::TCP_CLOSE
        };
        // `sk_state` is read locklessly by the socket layer (READ_ONCE).
        // SAFETY: a single-byte store into a live socket.
        unsafe {
            core::ptr::write_volatile(
                core::ptr::addr_of_mut!((*self.as_raw()).__sk_common.skc_state),
                state as u8,
            )
        };
    }

    /// Sets `SOCK_DEAD`-style flags and shutdown bits when the socket goes away.
    pub(crate) fn set_flag(&self, flag: bindings::sock_flags) {
        // SAFETY: `sock_set_flag` is an atomic bit operation on a live socket.
        unsafe { bindings::smc_rs_sock_set_flag(self.as_raw(), flag) };
    }
}

/// A network namespace.
///
/// # Invariants
///
/// The pointer is a live namespace for as long as the value is used: it comes
/// from a live socket or from the socket layer's `create` call.
#[derive(Clone, Copy)]
pub(crate) struct Net(*mut bindings::net);

impl Net {
    /// Wraps a namespace handed to us by the socket layer.
    ///
    /// # Safety
    ///
    /// `net` must be a live namespace for as long as the value is used.
    pub(crate) unsafe fn from_raw(net: *mut bindings::net) -> Self {
        Net(net)
    }

    /// The raw namespace pointer.
    pub(crate) fn as_raw(self) -> *mut bindings::net {
        self.0
    }
}

/// Exclusive access to a socket's state while its socket lock is held.
pub(crate) struct SockGuard<'a, S: SockState> {
    sk: &'a SmcSk<S>,
}

impl<S: SockState> SockGuard<'_, S> {
    /// The locked socket.
    pub(crate) fn sk(&self) -> &SmcSk<S> {
        self.sk
    }

    /// Sleeps until a wake-up on `on`'s wait queue, a signal, or the end of
    /// `*timeo` jiffies (updated), with the socket lock dropped meanwhile,
    /// like `sk_wait_event`. The waiter is exclusive: a wake-up for one
    /// event (one new connection) wakes one such waiter. `ready` is checked
    /// after queueing and before sleeping, so no wake-up is lost. Fails with
    /// `EAGAIN` when the time is up and `EINTR`/`ERESTARTSYS` on a signal.
    pub(crate) fn wait_exclusive(
        &mut self,
        on: &KernelSocket,
        timeo: &mut c_long,
        ready: impl Fn() -> bool,
    ) -> Result {
        let entry = Opaque::<bindings::wait_queue_entry>::uninit();
        let head = on.wait_queue();
        // `entry` stays in place until `finish_wait` took it off the queue;
        // `head` is the live wait queue of a socket the caller keeps alive.
        // SAFETY: so both are valid for the whole wait.
        unsafe {
            bindings::init_wait_entry(entry.get(), 0);
            bindings::prepare_to_wait_exclusive(
                head,
                entry.get(),
                bindings::TASK_INTERRUPTIBLE as core::ffi::c_int,
            );
        }
        // The lock is taken again below, before the guard is used again.
        // SAFETY: the guard holds the lock.
        unsafe { bindings::release_sock(self.sk.as_raw()) };
        if !ready() {
            // SAFETY: plain sleep, the task state was set by `prepare_to_wait`.
            *timeo = unsafe { bindings::schedule_timeout(*timeo) };
        }
        // Retakes the lock the guard stands for; `entry` is queued on `head`
        // or was taken off by its wake-up.
        // SAFETY: `head` and `entry` are valid as above.
        unsafe {
            bindings::smc_rs_lock_sock(self.sk.as_raw());
            bindings::finish_wait(head, entry.get());
        }
        if ready() {
            return Ok(());
        }
        if kernel::current!().signal_pending() {
            // SAFETY: pure function of its argument.
            return Err(Error::from_errno(unsafe {
                bindings::smc_rs_sock_intr_errno(*timeo)
            }));
        }
        if *timeo == 0 {
            return Err(errno(bindings::EAGAIN));
        }
        Ok(())
    }
}

/// A counted reference to an SMC socket: keeps its memory and state alive
/// (not its connection) wherever it goes.
///
/// # Invariants
///
/// `sk` is a `SmcSk<S>` with initialised state on which this value holds a
/// reference.
pub(crate) struct SockRef<S: SockState> {
    sk: NonNull<SmcSk<S>>,
}

// SAFETY: `SmcSk` is `Sync`, and a socket reference may be dropped anywhere.
unsafe impl<S: SockState> Send for SockRef<S> {}
// SAFETY: shared access only hands out `&SmcSk`, which is `Sync`.
unsafe impl<S: SockState> Sync for SockRef<S> {}

impl<S: SockState> Deref for SockRef<S> {
    type Target = SmcSk<S>;

    fn deref(&self) -> &SmcSk<S> {
        // SAFETY: the reference held keeps the socket alive (invariant).
        unsafe { self.sk.as_ref() }
    }
}

impl<S: SockState> Drop for SockRef<S> {
    fn drop(&mut self) {
        // SAFETY: drops the reference taken in `get_ref` (invariant).
        unsafe { bindings::smc_rs_sock_put(self.sk.as_ptr().cast()) };
    }
}

/// Runs `job` on the handshake workqueue (unbound, may sleep). Fails with
/// `ENOMEM` when the work item cannot be allocated, or while the module
/// unloads.
pub(crate) fn spawn_handshake(job: impl FnOnce() + Send + 'static) -> Result {
    let wq = HANDSHAKE_WQ.load(Ordering::Acquire);
    if wq.is_null() {
        return Err(errno(bindings::ENOMEM));
    }
    // The queue lives until module exit, which first waits for every
    // socket (each holds a module reference) and then drains the queue.
    // SAFETY: `wq` is the live handshake queue for the duration of the call.
    let queue = unsafe { Queue::from_raw(wq.cast()) };
    queue
        .try_spawn(GFP_KERNEL, job)
        .map_err(|_| errno(bindings::ENOMEM))
}

impl<S: SockState> Deref for SockGuard<'_, S> {
    type Target = S::Locked;

    fn deref(&self) -> &S::Locked {
        // By the `SmcSk` invariant the lock gives exclusive access to `locked`.
        // SAFETY: the socket lock is held for the guard's lifetime.
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
        // SAFETY: the lock was taken when the guard was made.
        unsafe { bindings::release_sock(self.sk.as_raw()) };
    }
}

/// # Safety
///
/// Called by the workqueue for the work item of a live `SmcSk<S>` that holds
/// a reference for it (see [`SmcSk::schedule_work`]).
unsafe extern "C" fn work_trampoline<S: SockState>(work: *mut bindings::work_struct) {
    let offset = core::mem::offset_of!(SmcSk<S>, work);
    // The work item is the `work` field of its `SmcSk`, `offset` bytes in.
    // SAFETY: `work` points into a live `SmcSk<S>` (contract).
    let sk = unsafe { &*work.cast::<u8>().sub(offset).cast::<SmcSk<S>>() };
    S::run_work(sk);
    // SAFETY: drops the reference `schedule_work` took for this run.
    unsafe { bindings::smc_rs_sock_put(sk.as_raw()) };
}

/// The workqueue the handshakes of all SMC sockets run on.
static HANDSHAKE_WQ: AtomicPtr<bindings::workqueue_struct> = AtomicPtr::new(null_mut());

/// Owns the handshake workqueue; destroying it (at module exit) waits for
/// every work item, so no module code runs after unload.
pub(crate) struct HandshakeQueue(());

impl HandshakeQueue {
    /// Creates the handshake workqueue.
    pub(crate) fn new() -> Result<Self> {
        // Unbound, like upstream's handshake queue: a handshake may sleep.
        // SAFETY: a constant name without format directives.
        let wq = unsafe {
            bindings::alloc_workqueue(
                c"smc_rs_hs_wq".as_ptr(),
                bindings::wq_flags_WQ_UNBOUND as core::ffi::c_uint,
                0,
            )
        };
        if wq.is_null() {
            return Err(kernel::error::code::ENOMEM);
        }
        if HANDSHAKE_WQ
            .compare_exchange(null_mut(), wq, Ordering::AcqRel, Ordering::Acquire)
            .is_err()
        {
            // SAFETY: created above, never shared.
            unsafe { bindings::destroy_workqueue(wq) };
            return Err(kernel::error::code::EBUSY);
        }
        Ok(HandshakeQueue(()))
    }
}

impl Drop for HandshakeQueue {
    fn drop(&mut self) {
        let wq = HANDSHAKE_WQ.swap(null_mut(), Ordering::AcqRel);
        if !wq.is_null() {
            // SAFETY: created in `new`; drains pending and running work first.
            unsafe { bindings::destroy_workqueue(wq) };
        }
    }
}
