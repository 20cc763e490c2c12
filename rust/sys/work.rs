// SPDX-License-Identifier: GPL-2.0

//! Deferred work of SMC sockets: typed work items, one per job, embedded in
//! the socket's state with the kernel crate's [`Work<T, ID>`] and
//! [`HasWork`], queued on the handshake workqueue with a socket reference
//! that the run gives back.
//!
//! A protocol declares a job as
//!
//! ```ignore
//! #[pin] connect_work: Work<MyState, CONNECT_WORK>,   // a field of the state
//! impl_has_work! { impl HasWork<Self, CONNECT_WORK> for MyState { self.connect_work } }
//! impl WorkItem<CONNECT_WORK> for MyState {
//!     type Pointer = SockWork<MyState>;
//!     fn run(sk: SockWork<MyState>) { ... }
//! }
//! ```
//!
//! and queues it with [`SmcSk::queue_work`].

use super::bindings;
use super::errno::{EBUSY, ENOMEM};
use super::sock::{SmcSk, SockState};
use core::ops::Deref;
use core::ptr::{addr_of_mut, null_mut, NonNull};
use core::sync::atomic::{AtomicPtr, Ordering};
use kernel::error::Result;
use kernel::types::{ARef, AlwaysRefCounted};
use kernel::workqueue::{HasWork, Queue, RawWorkItem, Work, WorkItem, WorkItemPointer};

/// The counted socket reference a queued work item of the socket's state
/// owns; its job gets it back when it runs.
pub(crate) struct SockWork<S: SockState>(ARef<SmcSk<S>>);

impl<S: SockState> Deref for SockWork<S> {
    type Target = SmcSk<S>;

    fn deref(&self) -> &SmcSk<S> {
        &self.0
    }
}

/// Where in an `SmcSk<S>` the work item `ID` of its state lives.
///
/// # Safety
///
/// `state` must point at the `state` field of a live `SmcSk<S>`.
unsafe fn work_of<S, const ID: u64>(state: *mut S) -> *mut kernel::bindings::work_struct
where
    S: SockState + HasWork<S, ID>,
{
    // SAFETY: `state` is valid (caller), so is its `Work` field.
    unsafe { Work::raw_get(S::raw_get_work(state)) }
}

// SAFETY: the pointer handed to `queue_work_on` is the work item inside the
// socket on which the value holds a reference; that reference goes with the
// queued work (`into_raw`) and is only taken back by `run` or, when the item
// was queued already, right here.
unsafe impl<S, const ID: u64> RawWorkItem<ID> for SockWork<S>
where
    S: SockState + WorkItem<ID, Pointer = SockWork<S>> + HasWork<S, ID>,
{
    type EnqueueOutput = core::result::Result<(), Self>;

    unsafe fn __enqueue<F>(self, queue_work_on: F) -> Self::EnqueueOutput
    where
        F: FnOnce(*mut kernel::bindings::work_struct) -> bool,
    {
        let sk = ARef::into_raw(self.0);
        // SAFETY: `sk` is live (the reference just released into the queue).
        let work = unsafe { work_of::<S, ID>(addr_of_mut!((*sk.as_ptr()).state)) };
        if queue_work_on(work) {
            Ok(())
        } else {
            // SAFETY: not queued: the reference is still ours.
            Err(SockWork(unsafe { ARef::from_raw(sk) }))
        }
    }
}

// SAFETY: `__enqueue` queues the `Work<S, ID>` of the socket's state, whose
// function is this `run` (set up by `Work::new` for `S: WorkItem<ID>`).
unsafe impl<S, const ID: u64> WorkItemPointer<ID> for SockWork<S>
where
    S: SockState + WorkItem<ID, Pointer = SockWork<S>> + HasWork<S, ID>,
{
    unsafe extern "C" fn run(ptr: *mut kernel::bindings::work_struct) {
        // The queued `work_struct` is the one `__enqueue` found in the
        // `state` field of a live `SmcSk<S>`.
        // SAFETY: so both container_of steps stay inside that object.
        let sk = unsafe {
            let state = S::work_container_of(ptr.cast::<Work<S, ID>>());
            let offset = core::mem::offset_of!(SmcSk<S>, state);
            state.cast::<u8>().sub(offset).cast::<SmcSk<S>>()
        };
        // SAFETY: `__enqueue` gave this reference to the queue; it is ours now.
        let sk = unsafe { ARef::from_raw(NonNull::new_unchecked(sk)) };
        S::run(SockWork(sk))
    }
}

impl<S: SockState> SmcSk<S> {
    /// Queues the work item `ID` of the socket's state on the handshake
    /// workqueue, holding a socket reference for it. Returns false when it
    /// was queued already (or the module is unloading).
    pub(crate) fn queue_work<const ID: u64>(&self) -> bool
    where
        S: WorkItem<ID, Pointer = SockWork<S>> + HasWork<S, ID>,
    {
        let Some(queue) = handshake_queue() else {
            return false;
        };
        queue.enqueue::<_, ID>(SockWork(ARef::from(self))).is_ok()
    }

    /// Cancels the work item `ID`, waiting for it if it is running. Must not
    /// be called with the socket lock held (jobs take it).
    pub(crate) fn cancel_work<const ID: u64>(&self)
    where
        S: WorkItem<ID, Pointer = SockWork<S>> + HasWork<S, ID>,
    {
        let state = (&self.state as *const S).cast_mut();
        // SAFETY: `state` is the state field of this live socket.
        let work = unsafe { work_of::<S, ID>(state) };
        // SAFETY: the work item was initialised with the state.
        if unsafe { bindings::cancel_work_sync(work.cast()) } {
            // It was pending and will not run: drop the reference it held.
            // SAFETY: that reference was given to the queue by `queue_work`.
            unsafe { SmcSk::<S>::dec_ref(NonNull::from(self)) };
        }
    }
}

/// The workqueue the handshakes and jobs of all SMC sockets run on.
static HANDSHAKE_WQ: AtomicPtr<bindings::workqueue_struct> = AtomicPtr::new(null_mut());

/// The handshake workqueue, while the module is loaded.
fn handshake_queue() -> Option<&'static Queue> {
    let wq = HANDSHAKE_WQ.load(Ordering::Acquire);
    if wq.is_null() {
        return None;
    }
    // The queue lives until module exit, which first waits for every socket
    // (each holds a module reference) and then drains the queue.
    // SAFETY: so it is valid for as long as anyone can use it.
    Some(unsafe { Queue::from_raw(wq.cast()) })
}

/// The handshake workqueue for C calls, while the module is loaded (valid
/// until module exit, see [`handshake_queue`]).
pub(super) fn handshake_wq() -> Option<*mut bindings::workqueue_struct> {
    let wq = HANDSHAKE_WQ.load(Ordering::Acquire);
    (!wq.is_null()).then_some(wq)
}

/// Queues the work item of a reference-counted object on the handshake
/// workqueue (which module exit drains). False when it was queued already,
/// or while the module unloads.
pub(crate) fn queue_arc<T>(item: kernel::sync::Arc<T>) -> bool
where
    T: kernel::workqueue::WorkItem<Pointer = kernel::sync::Arc<T>>
        + kernel::workqueue::HasWork<T>
        + Send
        + Sync
        + 'static,
{
    handshake_queue().is_some_and(|q| q.enqueue(item).is_ok())
}

/// Owns the handshake workqueue; destroying it (at module exit) waits for
/// every work item, so no module code runs after unload.
pub(crate) struct HandshakeQueue(());

impl HandshakeQueue {
    /// Creates the handshake workqueue.
    pub(crate) fn new() -> Result<Self> {
        // Unbound: a handshake may sleep. (Upstream's `smc_hs_wq` is
        // per-CPU; here a per-CPU queue behaved the same.)
        // SAFETY: a constant name without format directives.
        let wq = unsafe {
            bindings::alloc_workqueue(
                c"smc_rs_hs_wq".as_ptr(),
                bindings::wq_flags_WQ_UNBOUND as core::ffi::c_uint,
                0,
            )
        };
        if wq.is_null() {
            return Err(ENOMEM.into());
        }
        if HANDSHAKE_WQ
            .compare_exchange(null_mut(), wq, Ordering::AcqRel, Ordering::Acquire)
            .is_err()
        {
            // SAFETY: created above, never shared.
            unsafe { bindings::destroy_workqueue(wq) };
            return Err(EBUSY.into());
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
