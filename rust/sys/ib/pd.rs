// SPDX-License-Identifier: GPL-2.0

//! A protection domain (`struct ib_pd`): the scope of a device's queue
//! pairs and memory regions.

use super::super::bindings;
use super::super::errno::ENOMEM;
use super::device::IbDevice;
use core::ptr::NonNull;
use kernel::error::{from_err_ptr, Result};
use kernel::prelude::*;
use kernel::sync::Arc;
use kernel::types::ARef;

/// A protection domain of one device.
///
/// Shared (`Arc`): every queue pair and memory region made in it holds a
/// reference, because ib_core frees the domain in `ib_dealloc_pd` even
/// while objects still count on it.
///
/// # Invariants
///
/// `raw` is a domain allocated on `dev` by `ib_alloc_pd`, deallocated only
/// in `drop`.
pub(crate) struct Pd {
    raw: NonNull<bindings::ib_pd>,
    dev: ARef<IbDevice>,
}

// SAFETY: ib_core serialises what changes a domain (its use count is
// atomic); the owner only reads fields fixed at allocation.
unsafe impl Send for Pd {}
// SAFETY: as above.
unsafe impl Sync for Pd {}

impl Pd {
    /// Allocates a domain on `dev` (may sleep).
    pub(crate) fn new(dev: &IbDevice) -> Result<Arc<Pd>> {
        // SAFETY: a live device (`IbDevice` invariant); flags 0.
        let raw = from_err_ptr(unsafe { bindings::smc_rs_ib_alloc_pd(dev.as_raw()) })?;
        let raw = NonNull::new(raw).ok_or(ENOMEM)?;
        // INVARIANT: allocated on `dev` just now.
        let pd = Pd {
            raw,
            dev: ARef::from(dev),
        };
        Ok(Arc::new(pd, GFP_KERNEL)?)
    }

    /// The device of the domain.
    pub(crate) fn device(&self) -> &IbDevice {
        &self.dev
    }

    /// The key that lets the device reach any DMA-mapped memory of the
    /// domain. Work requests never take it from callers: only buffers a
    /// queue pair owns are addressed with it (see `Qp::local_sge`).
    pub(crate) fn local_dma_lkey(&self) -> u32 {
        // SAFETY: a live domain (invariant); the field is set at allocation.
        unsafe { (*self.raw.as_ptr()).local_dma_lkey }
    }

    pub(super) fn as_raw(&self) -> *mut bindings::ib_pd {
        self.raw.as_ptr()
    }
}

impl Drop for Pd {
    fn drop(&mut self) {
        // Queue pairs and memory regions hold an `Arc<Pd>`, so none is left.
        // SAFETY: allocated in `new` (invariant), deallocated once.
        unsafe { bindings::smc_rs_ib_dealloc_pd(self.raw.as_ptr()) };
    }
}
