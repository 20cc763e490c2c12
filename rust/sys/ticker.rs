// SPDX-License-Identifier: GPL-2.0

//! A function run after a delay on the system workqueue, again each time
//! it is kicked: the timer of periodic housekeeping that needs process
//! context and should cost nothing while there is nothing to keep.

use super::bindings;
use core::ffi::c_ulong;
use core::sync::atomic::{AtomicBool, Ordering};
use kernel::prelude::*;
use kernel::types::Opaque;

/// Runs `run` once per [`kick`](Ticker::kick), `period` after it (a kick
/// while a run is pending does nothing). Dropping it waits for a run in
/// progress and stops further ones.
#[pin_data(PinnedDrop)]
pub(crate) struct Ticker {
    /// First field: the work callback finds the ticker from it.
    #[pin]
    work: Opaque<bindings::delayed_work>,
    run: fn(),
    period: c_ulong,
    stopped: AtomicBool,
}

// SAFETY: the delayed work is only touched through the workqueue API,
// which is safe from any thread; the other fields are read-only or atomic.
unsafe impl Send for Ticker {}
// SAFETY: as above.
unsafe impl Sync for Ticker {}

impl Ticker {
    /// A ticker running `run` `period_ms` after each kick.
    pub(crate) fn new(run: fn(), period_ms: u32) -> impl PinInit<Self> {
        pin_init!(Ticker {
            // SAFETY: `slot` is the ticker's pinned delayed work, which
            // lives until `drop` cancelled it.
            work <- unsafe {
                Opaque::ffi_init(|slot: *mut bindings::delayed_work| {
                    bindings::smc_rs_init_delayed_work(slot, Some(tick))
                })
            },
            run,
            period: kernel::time::msecs_to_jiffies(period_ms) as c_ulong,
            stopped: AtomicBool::new(false),
        })
    }

    /// Runs the function one period from now, unless a run is pending
    /// already or the ticker stopped.
    pub(crate) fn kick(&self) {
        if self.stopped.load(Ordering::Acquire) {
            return;
        }
        // SAFETY: the delayed work was initialised in `new` and stays in
        // place (pinned) until `drop` cancelled it.
        unsafe { bindings::smc_rs_queue_delayed_work(self.work.get(), self.period) };
    }

    /// No run after this returns (a run in progress is waited for).
    pub(crate) fn stop(&self) {
        self.stopped.store(true, Ordering::Release);
        // SAFETY: initialised in `new`, pinned; cancelling is allowed from
        // any sleeping context other than the work itself, and this is
        // never called from `run`.
        unsafe { bindings::cancel_delayed_work_sync(self.work.get()) };
    }
}

#[pinned_drop]
impl PinnedDrop for Ticker {
    fn drop(self: Pin<&mut Self>) {
        self.stop();
    }
}

/// The work callback: the `work_struct` is the first field of the
/// `delayed_work`, which is the ticker's `work` field.
///
/// # Safety
///
/// Called by the workqueue only, for a work item queued by
/// [`Ticker::kick`].
unsafe extern "C" fn tick(work: *mut bindings::work_struct) {
    // `Ticker` is `repr(Rust)`, so find the field by its offset.
    let off = core::mem::offset_of!(Ticker, work);
    // SAFETY: `work` is the `work` member (offset 0) of the delayed work
    // embedded at `off` in a live ticker: it is only queued by `kick`,
    // and `drop` waits for the callback before the ticker goes away.
    let ticker = unsafe { &*work.cast::<u8>().sub(off).cast::<Ticker>() };
    (ticker.run)();
}

/// The kernel's tick count (`jiffies`).
pub(crate) fn jiffies() -> c_ulong {
    // SAFETY: reads a global counter.
    unsafe { bindings::smc_rs_jiffies() }
}
