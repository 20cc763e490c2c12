// SPDX-License-Identifier: GPL-2.0

//! A completion queue (`struct ib_cq`), polled by ib_core in softirq
//! context: each completion goes to the `done` function of the `ib_cqe`
//! its work request carried (see `qp`).

use super::super::bindings;
use super::super::errno::{EINVAL, ENOMEM};
use super::device::IbDevice;
use core::ffi::c_int;
use core::ptr::NonNull;
use kernel::error::{from_err_ptr, Result};
use kernel::prelude::*;
use kernel::sync::Arc;
use kernel::types::ARef;

/// A completion queue of one device, polled with `IB_POLL_SOFTIRQ`:
/// ib_core reaps completions in batches from `irq_poll` (with a budget) and
/// re-arms the queue itself.
///
/// Shared (`Arc`): every queue pair that uses it holds a reference, since
/// `ib_free_cq` frees it even while queue pairs still point at it.
///
/// # Invariants
///
/// `raw` was allocated on `dev` by `ib_alloc_cq` and is freed only in `drop`.
pub(crate) struct Cq {
    raw: NonNull<bindings::ib_cq>,
    dev: ARef<IbDevice>,
}

// SAFETY: after allocation the queue is driven by ib_core and the driver
// under their own locks; the owner keeps only the pointer.
unsafe impl Send for Cq {}
// SAFETY: as above.
unsafe impl Sync for Cq {}

impl Cq {
    /// Allocates a queue with room for `nr_cqe` completions (at most the
    /// device's `max_cqe`), interrupting on vector `comp_vector` (taken
    /// modulo the device's vectors by ib_core). May sleep.
    pub(crate) fn new(dev: &IbDevice, nr_cqe: u32, comp_vector: u32) -> Result<Arc<Cq>> {
        let entries = nr_cqe.min(dev.caps().max_cqe).max(1);
        let entries_c = c_int::try_from(entries).map_err(|_| EINVAL)?;
        let vector = c_int::try_from(comp_vector).map_err(|_| EINVAL)?;
        // SAFETY: a live device (`IbDevice` invariant).
        let raw = unsafe { bindings::smc_rs_ib_alloc_cq(dev.as_raw(), entries_c, vector) };
        let raw = NonNull::new(from_err_ptr(raw)?).ok_or(ENOMEM)?;
        // INVARIANT: allocated on `dev` just now.
        let cq = Cq {
            raw,
            dev: ARef::from(dev),
        };
        Ok(Arc::new(cq, GFP_KERNEL)?)
    }

    /// The device of the queue.
    pub(crate) fn device(&self) -> &IbDevice {
        &self.dev
    }

    pub(super) fn as_raw(&self) -> *mut bindings::ib_cq {
        self.raw.as_ptr()
    }
}

impl Drop for Cq {
    fn drop(&mut self) {
        // Queue pairs hold an `Arc<Cq>`: none uses the queue any more, and
        // each drained its work requests before it was destroyed.
        // SAFETY: allocated in `new` (invariant), freed once; process
        // context (every owner drops in process context).
        unsafe { bindings::ib_free_cq(self.raw.as_ptr()) };
    }
}
