// SPDX-License-Identifier: GPL-2.0

//! Work requests and their completions (their scatter/gather entries are
//! [`Sge`](super::sge::Sge)s): the table of completion entries (`ib_cqe`) each posted
//! request points at, and the softirq trampolines that turn a completion
//! into a call of the queue pair's [`QpHandler`].
//!
//! No allocation happens per message: a queue pair allocates its table once
//! and a request names one of its slots by index. The table lives, at a
//! fixed address, until the queue pair is drained and destroyed, so every
//! completion the device can still produce finds it.

use super::super::bindings;
use super::super::errno::{EBUSY, EINVAL, ENOMEM};
use super::buf::DmaBuf;
use super::mr::RegisteredBuf;
use core::cell::UnsafeCell;
use core::ffi::c_void;
use core::ptr::NonNull;
use core::sync::atomic::{AtomicBool, AtomicPtr, AtomicU64, AtomicUsize, Ordering};
use kernel::prelude::*;
use kernel::sync::Arc;
use kernel::types::Opaque;

/// How a work request ended (`enum ib_wc_status`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum WcStatus {
    /// Carried out.
    Success,
    /// Flushed: the queue pair went to the error state first.
    Flushed,
    /// Failed, by `enum ib_wc_status` number (retries exceeded, remote
    /// access error, ...); the queue pair is in the error state.
    Error(u32),
}

impl WcStatus {
    fn from_raw(status: bindings::ib_wc_status) -> WcStatus {
        match status {
            bindings::ib_wc_status_IB_WC_SUCCESS => WcStatus::Success,
            bindings::ib_wc_status_IB_WC_WR_FLUSH_ERR => WcStatus::Flushed,
            other => WcStatus::Error(other),
        }
    }
}

/// An asynchronous event of a queue pair (`enum ib_event_type`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum QpEvent {
    /// The queue pair failed (`IB_EVENT_QP_FATAL`, `IB_EVENT_QP_REQ_ERR`).
    Fatal,
    /// The peer broke the access rules (`IB_EVENT_QP_ACCESS_ERR`).
    AccessError,
    /// The first packet arrived in RTR (`IB_EVENT_COMM_EST`).
    Established,
    /// Anything else, by number.
    Other(u32),
}

/// The owner of a queue pair: told about completions and events.
///
/// Completions arrive in softirq context (from the completion queue's
/// `irq_poll`), events in whatever context the driver reports them (it may
/// be atomic): neither may sleep.
pub(crate) trait QpHandler: Send + Sync + 'static {
    /// A send request posted with send slot `slot` completed. Unsignaled
    /// requests report only when flushed or failed.
    fn send_done(&self, slot: u32, status: WcStatus);

    /// A receive request posted with receive slot `slot` completed with
    /// `byte_len` bytes received into the queue pair's own buffers,
    /// `bufs` (those given at creation): they are readable here wherever
    /// the queue pair itself is, even while it drains.
    fn recv_done(&self, slot: u32, byte_len: u32, status: WcStatus, bufs: &[DmaBuf]);

    /// A memory registration (`Qp::post_reg_mr`) completed.
    fn reg_done(&self, _status: WcStatus) {}

    /// An asynchronous event of the queue pair.
    fn async_event(&self, _event: QpEvent) {}
}

/// At most this many scatter/gather entries per request (upstream SMC-R
/// uses at most 2).
pub(crate) const MAX_SGE: usize = 4;

/// A completion entry of the table, one per request a queue pair may
/// have in flight.
///
/// # Invariants
///
/// `cqe` is the first field (`repr(C)`), so a pointer to it is a pointer to
/// the slot; `owner` is the shared state that holds the table.
#[repr(C)]
pub(super) struct CqeSlot<H: QpHandler> {
    cqe: bindings::ib_cqe,
    owner: *const QpShared<H>,
    index: u32,
}

/// What a send slot knows beyond its completion entry: the signaled
/// request in flight on it, and the local buffer an RDMA WRITE posted on
/// it reads (see [`QpShared::hold_taken`]).
///
/// # Invariants
///
/// `posted_at` is written only by whoever set `busy` from false to true,
/// before posting. `held` is null, [`reserved`] while a post that will hold
/// a buffer is under way, or `Arc::into_raw` of a local buffer of the queue
/// pair's domain, taken back exactly once (by a release or by `drop`);
/// `held_at` is written before such a pointer is stored.
struct SendState {
    busy: AtomicBool,
    posted_at: AtomicU64,
    held: AtomicPtr<RegisteredBuf>,
    held_at: AtomicU64,
}

/// The mark of a hold being taken: never the address of an allocation.
fn reserved() -> *mut RegisteredBuf {
    core::ptr::NonNull::dangling().as_ptr()
}

impl Drop for SendState {
    fn drop(&mut self) {
        let p = *self.held.get_mut();
        if !p.is_null() && p != reserved() {
            // SAFETY: `Arc::into_raw` of a buffer, not taken back yet
            // (invariant).
            drop(unsafe { Arc::from_raw(p.cast_const()) });
        }
    }
}

/// What a queue pair shares with its completion and event callbacks, and
/// what must live until no completion can name it any more.
///
/// # Invariants
///
/// Allocated with `KBox` and never moved; freed only after the queue pair
/// was drained and destroyed (or never, when that failed). `slots` holds
/// `send_slots` send entries, `recv_slots` receive entries, then the
/// registration entry and the two drain entries; it is not resized after
/// creation. `held_reg` is only touched by whoever set `reg_busy` from
/// false to true, until it is false again, or by `drop`.
pub(super) struct QpShared<H: QpHandler> {
    pub(super) handler: Arc<H>,
    slots: KVec<CqeSlot<H>>,
    send_slots: u32,
    recv_slots: u32,
    pub(super) sq_drained: Opaque<bindings::completion>,
    pub(super) rq_drained: Opaque<bindings::completion>,
    reg_busy: AtomicBool,
    held_reg: UnsafeCell<Option<Arc<RegisteredBuf>>>,
    pub(super) local_bufs: KVec<DmaBuf>,
    /// One per send slot.
    sends: KVec<SendState>,
    /// Orders posts: a signaled request that began posting after a hold
    /// was taken completes only after the held buffer's request did.
    epoch: AtomicU64,
    /// How many buffers are held.
    holding: AtomicUsize,
}

/// Which entry of the table.
#[derive(Clone, Copy)]
pub(super) enum SlotKind {
    Send(u32),
    Recv(u32),
    Reg,
    DrainSend,
    DrainRecv,
}

impl<H: QpHandler> QpShared<H> {
    /// Allocates the shared state with its table; returns it as a pointer
    /// (the entries point back at it), to be freed with
    /// [`QpShared::free`].
    pub(super) fn alloc(
        handler: Arc<H>,
        send_slots: u32,
        recv_slots: u32,
        local_bufs: KVec<DmaBuf>,
    ) -> Result<NonNull<QpShared<H>>> {
        let total = usize::try_from(u64::from(send_slots) + u64::from(recv_slots) + 3)
            .map_err(|_| ENOMEM)?;
        let slots = KVec::with_capacity(total, GFP_KERNEL)?;
        let mut sends = KVec::with_capacity(send_slots as usize, GFP_KERNEL)?;
        for _ in 0..send_slots {
            sends.push(
                SendState {
                    busy: AtomicBool::new(false),
                    posted_at: AtomicU64::new(0),
                    held: AtomicPtr::new(core::ptr::null_mut()),
                    held_at: AtomicU64::new(0),
                },
                GFP_KERNEL,
            )?;
        }
        let shared = KBox::new(
            QpShared {
                handler,
                slots,
                send_slots,
                recv_slots,
                sq_drained: Opaque::uninit(),
                rq_drained: Opaque::uninit(),
                reg_busy: AtomicBool::new(false),
                held_reg: UnsafeCell::new(None),
                local_bufs,
                sends,
                epoch: AtomicU64::new(1),
                holding: AtomicUsize::new(0),
            },
            GFP_KERNEL,
        )?;
        let shared = NonNull::from(KBox::leak(shared));
        let raw = shared.as_ptr();
        let sends = (0..send_slots).map(|i| (i, send_done::<H> as Trampoline));
        let recvs = (0..recv_slots).map(|i| (i, recv_done::<H> as Trampoline));
        let extras = [
            (0, reg_done::<H> as Trampoline),
            (0, drain_send_done::<H> as Trampoline),
            (0, drain_recv_done::<H> as Trampoline),
        ];
        let entries = Iterator::chain(Iterator::chain(sends, recvs), extras);
        for (index, done) in entries {
            let slot = CqeSlot {
                cqe: bindings::ib_cqe { done: Some(done) },
                owner: raw.cast_const(),
                index,
            };
            // Capacity was reserved for all `total` entries: no reallocation,
            // so earlier entries keep their addresses.
            // SAFETY: `raw` is the live, unshared allocation from above.
            if let Err(e) = unsafe { (*raw).slots.push(slot, GFP_KERNEL) } {
                // SAFETY: from `KBox::leak` above; nothing refers to it.
                drop(unsafe { KBox::from_raw(raw) });
                return Err(e.into());
            }
        }
        // SAFETY: the completions are in the pinned allocation, not shared yet.
        unsafe {
            bindings::smc_rs_init_completion((*raw).sq_drained.get());
            bindings::smc_rs_init_completion((*raw).rq_drained.get());
        }
        Ok(shared)
    }

    /// Frees what [`QpShared::alloc`] returned.
    ///
    /// # Safety
    ///
    /// `raw` came from `alloc`, is freed once, and no completion or event
    /// can reach it any more (the queue pair was drained and destroyed, or
    /// never got work requests).
    pub(super) unsafe fn free(raw: NonNull<QpShared<H>>) {
        // SAFETY: from `KBox::leak` in `alloc` (caller's promise).
        drop(unsafe { KBox::from_raw(raw.as_ptr()) });
    }

    /// The completion entry a request of `kind` points at; `None` for a
    /// slot index out of range.
    pub(super) fn cqe(&self, kind: SlotKind) -> Option<*mut bindings::ib_cqe> {
        let extra = self.send_slots as usize + self.recv_slots as usize;
        let pos = match kind {
            SlotKind::Send(i) if i < self.send_slots => i as usize,
            SlotKind::Recv(i) if i < self.recv_slots => self.send_slots as usize + i as usize,
            SlotKind::Send(_) | SlotKind::Recv(_) => return None,
            SlotKind::Reg => extra,
            SlotKind::DrainSend => extra + 1,
            SlotKind::DrainRecv => extra + 2,
        };
        // The device only reads the entry (`done`), which never changes
        // after `alloc`: a shared pointer is enough.
        self.slots
            .get(pos)
            .map(|s| core::ptr::addr_of!(s.cqe).cast_mut())
    }

    /// Starts a registration of `reg`: keeps a reference to it until the
    /// next registration (or the queue pair's end), so the region lives
    /// while the device works on the request. `EBUSY` while one is in
    /// flight. The old reference is returned, to be dropped by the caller
    /// in process context. On success the caller must post the request,
    /// and call [`QpShared::reg_post_failed`] if that fails.
    pub(super) fn reg_begin(&self, reg: &Arc<RegisteredBuf>) -> Result<Option<Arc<RegisteredBuf>>> {
        if self
            .reg_busy
            .compare_exchange(false, true, Ordering::Acquire, Ordering::Relaxed)
            .is_err()
        {
            return Err(EBUSY.into());
        }
        // Setting `reg_busy` gave us `held_reg` (invariant).
        // SAFETY: so no one else accesses it now.
        Ok(unsafe { (*self.held_reg.get()).replace(reg.clone()) })
    }

    /// The registration request was not posted: no completion will come.
    /// `previous` is held again; the region that failed is returned (the
    /// caller has its own reference, so dropping it never deregisters).
    pub(super) fn reg_post_failed(
        &self,
        previous: Option<Arc<RegisteredBuf>>,
    ) -> Option<Arc<RegisteredBuf>> {
        // `reg_busy` is still set by us: `held_reg` is ours (invariant).
        // SAFETY: so no one else accesses it now.
        let failed = unsafe { core::mem::replace(&mut *self.held_reg.get(), previous) };
        self.reg_busy.store(false, Ordering::Release);
        failed
    }

    /// Before a send request with send slot `slot` is posted: a signaled
    /// one takes the slot until its completion (`EBUSY` while the last
    /// signaled one is in flight) and notes when it began posting. Returns
    /// the completion entry; call [`QpShared::send_not_posted`] if the post
    /// then fails.
    pub(super) fn send_begin(&self, slot: u32, signaled: bool) -> Result<*mut bindings::ib_cqe> {
        let cqe = self.cqe(SlotKind::Send(slot)).ok_or(EINVAL)?;
        if signaled {
            let st = self.sends.get(slot as usize).ok_or(EINVAL)?;
            if st
                .busy
                .compare_exchange(false, true, Ordering::AcqRel, Ordering::Relaxed)
                .is_err()
            {
                return Err(EBUSY.into());
            }
            let now = self.epoch.fetch_add(1, Ordering::SeqCst);
            st.posted_at.store(now, Ordering::Release);
        }
        Ok(cqe)
    }

    /// The request [`QpShared::send_begin`] prepared was not posted.
    pub(super) fn send_not_posted(&self, slot: u32, signaled: bool) {
        if let (true, Some(st)) = (signaled, self.sends.get(slot as usize)) {
            st.busy.store(false, Ordering::Release);
        }
    }

    /// Before an RDMA WRITE from a local buffer is posted with send slot
    /// `slot`: `EBUSY` while the slot still holds one. Then
    /// [`QpShared::hold_taken`] or [`QpShared::hold_dropped`].
    pub(super) fn hold_begin(&self, slot: u32) -> Result {
        let st = self.sends.get(slot as usize).ok_or(EINVAL)?;
        st.held
            .compare_exchange(core::ptr::null_mut(), reserved(), Ordering::AcqRel, Ordering::Relaxed)
            .map(|_| ())
            .map_err(|_| EBUSY.into())
    }

    /// The WRITE was posted: the slot keeps `buf` alive until a signaled
    /// request that began posting after this completes successfully (a
    /// queue pair's send queue completes in order, so the WRITE is done
    /// then), or until the queue pair is drained and freed.
    pub(super) fn hold_taken(&self, slot: u32, buf: &Arc<RegisteredBuf>) {
        let Some(st) = self.sends.get(slot as usize) else { return };
        let now = self.epoch.fetch_add(1, Ordering::SeqCst);
        st.held_at.store(now, Ordering::Release);
        self.holding.fetch_add(1, Ordering::AcqRel);
        st.held
            .store(Arc::into_raw(buf.clone()).cast_mut(), Ordering::Release);
    }

    /// The WRITE was not posted: nothing to hold.
    pub(super) fn hold_dropped(&self, slot: u32) {
        if let Some(st) = self.sends.get(slot as usize) {
            st.held.store(core::ptr::null_mut(), Ordering::Release);
        }
    }

    /// Send slot `slot` completed with `status`: ends its signaled request
    /// and, when that one succeeded, lets go of every buffer held for a
    /// WRITE posted before it began. Called by the completion queue's
    /// poller only (one at a time).
    fn send_completed(&self, slot: u32, status: WcStatus) {
        let Some(st) = self.sends.get(slot as usize) else { return };
        if !st.busy.load(Ordering::Acquire) {
            // An unsignaled request, flushed or failed.
            return;
        }
        let began = st.posted_at.load(Ordering::Acquire);
        st.busy.store(false, Ordering::Release);
        if status != WcStatus::Success || self.holding.load(Ordering::Acquire) == 0 {
            return;
        }
        for other in self.sends.iter() {
            let p = other.held.load(Ordering::Acquire);
            if p.is_null() || p == reserved() || other.held_at.load(Ordering::Acquire) >= began {
                continue;
            }
            // Only this poller takes holds back, and none is taken on a
            // slot while it holds one: `p` is still there.
            if other
                .held
                .compare_exchange(p, core::ptr::null_mut(), Ordering::AcqRel, Ordering::Relaxed)
                .is_ok()
            {
                self.holding.fetch_sub(1, Ordering::AcqRel);
                // SAFETY: `Arc::into_raw` of a buffer (invariant), taken
                // back once: the exchange made it ours.
                drop(unsafe { Arc::from_raw(p.cast_const()) });
            }
        }
    }

    /// Local buffer `index`.
    pub(super) fn local_buf(&self, index: usize) -> Option<&DmaBuf> {
        self.local_bufs.get(index)
    }
}

// SAFETY: the table is read-only after `alloc`; the completions are built
// for cross-context use; `held_reg` is guarded by `reg_busy` (invariant);
// `handler` and the buffers are `Send + Sync`.
unsafe impl<H: QpHandler> Send for QpShared<H> {}
// SAFETY: as above.
unsafe impl<H: QpHandler> Sync for QpShared<H> {}

type Trampoline = unsafe extern "C" fn(*mut bindings::ib_cq, *mut bindings::ib_wc);

/// The slot and status of a completion.
///
/// # Safety
///
/// `wc` is a completion ib_core passes to a `done` function of a slot of a
/// live `QpShared<H>` table.
unsafe fn slot_of<'a, H: QpHandler>(wc: *mut bindings::ib_wc) -> (&'a CqeSlot<H>, WcStatus) {
    // SAFETY: a valid completion for the call (contract); it names the
    // `cqe` field of a slot, which is the slot's first field (invariant).
    unsafe {
        let slot = &*(*wc).__bindgen_anon_1.wr_cqe.cast::<CqeSlot<H>>();
        (slot, WcStatus::from_raw((*wc).status))
    }
}

/// # Safety
///
/// ib_core's `ib_cqe::done` for a send slot: the table is live until the
/// queue pair is drained, which waits for this call.
unsafe extern "C" fn send_done<H: QpHandler>(_cq: *mut bindings::ib_cq, wc: *mut bindings::ib_wc) {
    // SAFETY: called by ib_core for one of our send slots (contract).
    let (slot, status) = unsafe { slot_of::<H>(wc) };
    // SAFETY: the owner outlives every completion of its table (invariant).
    let owner = unsafe { &*slot.owner };
    owner.send_completed(slot.index, status);
    owner.handler.send_done(slot.index, status);
}

/// # Safety
///
/// As for `send_done`, for a receive slot.
unsafe extern "C" fn recv_done<H: QpHandler>(_cq: *mut bindings::ib_cq, wc: *mut bindings::ib_wc) {
    // SAFETY: called by ib_core for one of our receive slots (contract).
    let (slot, status) = unsafe { slot_of::<H>(wc) };
    // SAFETY: a valid completion for the call (contract).
    let byte_len = unsafe { (*wc).byte_len };
    // SAFETY: the owner outlives every completion of its table (invariant).
    let owner = unsafe { &*slot.owner };
    owner
        .handler
        .recv_done(slot.index, byte_len, status, &owner.local_bufs);
}

/// # Safety
///
/// As for `send_done`, for the registration slot.
unsafe extern "C" fn reg_done<H: QpHandler>(_cq: *mut bindings::ib_cq, wc: *mut bindings::ib_wc) {
    // SAFETY: called by ib_core for our registration slot (contract).
    let (slot, status) = unsafe { slot_of::<H>(wc) };
    // SAFETY: the owner outlives every completion of its table (invariant).
    let owner = unsafe { &*slot.owner };
    // The device is done with the region: the next registration may
    // replace the reference (process context drops it there).
    owner.reg_busy.store(false, Ordering::Release);
    owner.handler.reg_done(status);
}

/// # Safety
///
/// As for `send_done`, for the send drain slot.
unsafe extern "C" fn drain_send_done<H: QpHandler>(
    _cq: *mut bindings::ib_cq,
    wc: *mut bindings::ib_wc,
) {
    // SAFETY: called by ib_core for our send drain slot (contract).
    let (slot, _) = unsafe { slot_of::<H>(wc) };
    // The waiter frees the table only after `complete` released the
    // completion's lock, and nothing is touched after it.
    // SAFETY: the owner is live until the waiter returns (invariant).
    unsafe { bindings::complete((*slot.owner).sq_drained.get()) };
}

/// # Safety
///
/// As for `send_done`, for the receive drain slot.
unsafe extern "C" fn drain_recv_done<H: QpHandler>(
    _cq: *mut bindings::ib_cq,
    wc: *mut bindings::ib_wc,
) {
    // SAFETY: called by ib_core for our receive drain slot (contract).
    let (slot, _) = unsafe { slot_of::<H>(wc) };
    // SAFETY: as in `drain_send_done`.
    unsafe { bindings::complete((*slot.owner).rq_drained.get()) };
}

/// `ib_qp_init_attr::event_handler`.
///
/// # Safety
///
/// Called by ib_core with a valid event and the queue pair's context, a
/// `QpShared<H>` that lives until the queue pair is destroyed.
pub(super) unsafe extern "C" fn qp_event<H: QpHandler>(
    event: *mut bindings::ib_event,
    context: *mut c_void,
) {
    // SAFETY: a valid event for the call (contract).
    let kind = unsafe { (*event).event };
    let event = match kind {
        bindings::ib_event_type_IB_EVENT_QP_FATAL | bindings::ib_event_type_IB_EVENT_QP_REQ_ERR => {
            QpEvent::Fatal
        }
        bindings::ib_event_type_IB_EVENT_QP_ACCESS_ERR => QpEvent::AccessError,
        bindings::ib_event_type_IB_EVENT_COMM_EST => QpEvent::Established,
        other => QpEvent::Other(other),
    };
    // SAFETY: the context is our live shared state (contract).
    let shared = unsafe { &*context.cast_const().cast::<QpShared<H>>() };
    shared.handler.async_event(event);
}
