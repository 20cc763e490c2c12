// SPDX-License-Identifier: GPL-2.0

//! Memory regions (`struct ib_mr`) for fast registration: a buffer that
//! the device may reach through a key, locally (`lkey`) or from the peer
//! (`rkey`).

use super::super::bindings;
use super::super::errno::{EINVAL, ENOMEM};
use super::buf::DmaBuf;
use super::pd::Pd;
use core::ffi::{c_int, c_uint};
use core::panic::Location;
use core::ptr::{null_mut, NonNull};
use core::sync::atomic::{AtomicPtr, Ordering};
use kernel::error::{from_err_ptr, Result};
use kernel::page::PAGE_SIZE;
use kernel::sync::Arc;

/// What a registration allows the device to do with the memory.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum MrAccess {
    /// Local writes and the peer's RDMA WRITEs: an RMB. (Send buffers need
    /// no region: see [`RegisteredBuf::local`].)
    RemoteWrite,
}

impl MrAccess {
    pub(super) fn flags(self) -> c_int {
        let local = bindings::ib_access_flags_IB_ACCESS_LOCAL_WRITE;
        let bits = match self {
            MrAccess::RemoteWrite => local | bindings::ib_access_flags_IB_ACCESS_REMOTE_WRITE,
        };
        // Small flag values: no truncation.
        bits as c_int
    }
}

/// A buffer together with the memory region that maps it.
///
/// The region owns its buffer, so no key outlives the memory: drop
/// deregisters the region first (after which the device rejects both keys,
/// and work requests still using them complete in error), and only then
/// unmaps and frees the pages. The keys are usable once a
/// `Qp::post_reg_mr` with this region has completed successfully.
///
/// # Invariants
///
/// `mr`, if any, was allocated in `pd` by `ib_alloc_mr` and maps all of
/// `buf` (from `buf.dma_addr()`, in pages); it is deregistered only in
/// `drop`. Without one, the buffer is reached locally through the
/// domain's local DMA key only (never by the peer). `registered` is null
/// until a registration request for `mr` is about to be posted, then the
/// place in the code that asked for it, for good: the region is never
/// invalidated, and a device rejects a second registration of a valid
/// region by taking its queue pair to the error state.
pub(crate) struct RegisteredBuf {
    mr: Option<NonNull<bindings::ib_mr>>,
    buf: DmaBuf,
    pd: Arc<Pd>,
    registered: AtomicPtr<Location<'static>>,
}

// SAFETY: the region's fields are written by the driver at allocation and
// mapping, and by registration work requests the device carries out; the
// owner only reads the keys and the address.
unsafe impl Send for RegisteredBuf {}
// SAFETY: as above; `DmaBuf` is `Sync`.
unsafe impl Sync for RegisteredBuf {}

impl RegisteredBuf {
    /// Allocates a fast-registration region in `pd` for all of `buf`
    /// (mapped for the same device) and maps it. May sleep.
    pub(crate) fn new(pd: &Arc<Pd>, buf: DmaBuf) -> Result<RegisteredBuf> {
        if buf.device().as_raw() != pd.device().as_raw() {
            return Err(EINVAL.into());
        }
        let pages = u32::try_from(buf.len() / PAGE_SIZE).map_err(|_| EINVAL)?;
        // SAFETY: a live domain; a page count the buffer has.
        let raw = unsafe {
            bindings::ib_alloc_mr(pd.as_raw(), bindings::ib_mr_type_IB_MR_TYPE_MEM_REG, pages)
        };
        let mr = NonNull::new(from_err_ptr(raw)?).ok_or(ENOMEM)?;
        // INVARIANT: allocated in `pd` just now; mapped below.
        let reg = RegisteredBuf {
            mr: Some(mr),
            buf,
            pd: pd.clone(),
            registered: AtomicPtr::new(null_mut()),
        };
        let page_size = c_uint::try_from(PAGE_SIZE).map_err(|_| EINVAL)?;
        let sgl = reg.buf.sgl();
        // SAFETY: a live region of `pages` pages and the buffer's live
        // one-entry list of the same size; no offset wanted.
        let mapped = unsafe { bindings::ib_map_mr_sg(mr.as_ptr(), sgl, 1, null_mut(), page_size) };
        if mapped != 1 {
            // `reg` deregisters the region on its way out.
            return Err(if mapped < 0 {
                kernel::error::Error::from_errno(mapped)
            } else {
                ENOMEM.into()
            });
        }
        Ok(reg)
    }

    /// `buf` (mapped for the device of `pd`) for local access only, the
    /// source of RDMA WRITEs and sends: no region to allocate or register,
    /// the domain's local DMA key reaches it.
    pub(crate) fn local(pd: &Arc<Pd>, buf: DmaBuf) -> Result<RegisteredBuf> {
        if buf.device().as_raw() != pd.device().as_raw() {
            return Err(EINVAL.into());
        }
        // INVARIANT: no region.
        Ok(RegisteredBuf {
            mr: None,
            buf,
            pd: pd.clone(),
            registered: AtomicPtr::new(null_mut()),
        })
    }

    /// The buffer.
    pub(crate) fn buf(&self) -> &DmaBuf {
        &self.buf
    }

    /// The key the peer uses in RDMA WRITEs (0 for a local buffer, which
    /// the peer cannot reach).
    pub(crate) fn rkey(&self) -> u32 {
        // SAFETY: a live region (invariant); read-only after allocation
        // apart from `ib_update_fast_reg_key`, which is never called.
        self.mr.map_or(0, |mr| unsafe { (*mr.as_ptr()).rkey })
    }

    /// The address of the first byte as the keys see it (the peer writes
    /// to `iova() + offset`).
    pub(crate) fn iova(&self) -> u64 {
        match self.mr {
            // SAFETY: a live region (invariant); set by `ib_map_mr_sg` in
            // `new`.
            Some(mr) => unsafe { (*mr.as_ptr()).iova },
            None => self.buf.dma_addr(),
        }
    }

    /// The device address of `len` bytes at `offset`; `None` outside the
    /// buffer.
    pub(super) fn range(&self, offset: usize, len: u32) -> Option<u64> {
        let end = offset.checked_add(usize::try_from(len).ok()?)?;
        if end > self.buf.len() {
            return None;
        }
        self.iova().checked_add(u64::try_from(offset).ok()?)
    }

    /// The domain of the region.
    pub(super) fn pd(&self) -> &Arc<Pd> {
        &self.pd
    }

    /// The region (`None` for a local buffer).
    pub(super) fn as_raw(&self) -> Option<*mut bindings::ib_mr> {
        self.mr.map(NonNull::as_ptr)
    }

    /// Notes that `at` registers the region now. The region can be
    /// registered once: `Err` with the place that did it first when it
    /// was already.
    pub(super) fn claim_registration(
        &self,
        at: &'static Location<'static>,
    ) -> core::result::Result<(), &'static Location<'static>> {
        let at = core::ptr::from_ref(at).cast_mut();
        match self
            .registered
            .compare_exchange(null_mut(), at, Ordering::AcqRel, Ordering::Acquire)
        {
            Ok(_) => Ok(()),
            // SAFETY: only `&'static Location` pointers are stored.
            Err(first) => Err(unsafe { &*first }),
        }
    }

    /// Takes back [`claim_registration`](Self::claim_registration): the
    /// request was not posted.
    pub(super) fn unclaim_registration(&self) {
        self.registered.store(null_mut(), Ordering::Release);
    }
}

impl Drop for RegisteredBuf {
    fn drop(&mut self) {
        // Before the buffer (a field) is unmapped and freed. A queue pair
        // holds an `Arc` of a region whose registration is in flight, so a
        // region is never dropped while its registration request runs.
        if let Some(mr) = self.mr {
            // SAFETY: allocated in `new` (invariant), deregistered once.
            unsafe { bindings::smc_rs_ib_dereg_mr(mr.as_ptr()) };
        }
    }
}
