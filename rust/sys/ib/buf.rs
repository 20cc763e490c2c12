// SPDX-License-Identifier: GPL-2.0

//! Physically contiguous, zeroed buffers mapped for DMA by RDMA devices:
//! the memory behind memory regions (RMBs, send buffers) and behind the
//! control messages of a link; one memory may be mapped by several
//! devices (the links of a link group).

use super::super::args::MsgHdr;
use super::super::bindings;
use super::super::errno::{EINVAL, ENOMEM};
use super::device::IbDevice;
use core::ops::Deref;
use core::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use core::ptr::NonNull;
use kernel::alloc::flags::GFP_KERNEL;
use kernel::error::{to_result, Result};
use kernel::sync::Arc;
use kernel::page::PAGE_SIZE;
use kernel::types::ARef;

/// The largest buffer: 2^10 pages (4 MiB), the page allocator's largest
/// block (`MAX_PAGE_ORDER`).
const MAX_ORDER: u32 = 10;

/// A block of 2^order pages from the page allocator, freed on drop.
///
/// # Invariants
///
/// `page` heads a block of `2^order` pages allocated by `alloc_pages`.
struct Pages {
    page: NonNull<bindings::page>,
    order: u32,
}

impl Drop for Pages {
    fn drop(&mut self) {
        // SAFETY: allocated with this order (invariant), freed once.
        unsafe { bindings::__free_pages(self.page.as_ptr(), self.order) };
    }
}

/// A one-entry scatter/gather table, freed on drop.
///
/// # Invariants
///
/// `0` was set up by `sg_alloc_table` with one entry.
struct SgTable(bindings::sg_table);

impl Drop for SgTable {
    fn drop(&mut self) {
        // SAFETY: allocated by `sg_alloc_table` (invariant), freed once.
        unsafe { bindings::sg_free_table(&mut self.0) };
    }
}

/// Zeroed, physically contiguous memory of a power-of-two size: the bytes
/// behind one or more device mappings ([`DmaBuf`]). A buffer of a link
/// group with two links is mapped once for each link's device.
///
/// A device may write into the memory at any time (an RMB is written by
/// the peer's RDMA WRITEs), so no Rust reference to the bytes is ever
/// made: they are only copied in and out through raw pointers. Concurrent
/// copies to overlapping ranges (by the CPU or a device) leave unspecified
/// bytes there, never undefined behaviour of this program.
///
/// The CPU's writes are tracked (`written`), so that a
/// buffer no device ever mapped can be handed on with only the bytes
/// written since its last [`clear`](Self::clear) set to zero.
///
/// # Invariants
///
/// `vaddr` is the kernel address of `pages`, `len` bytes. Every byte at or
/// after `written` is zero unless `mapped` is set (the CPU's writes move
/// `written` past their bytes before they return; the block was zeroed when
/// allocated).
pub(crate) struct BufMem {
    vaddr: NonNull<u8>,
    len: usize,
    pages: Pages,
    /// The end of the highest range the CPU wrote since the last clear.
    written: AtomicUsize,
    /// A device mapped the memory (it may write any byte).
    mapped: AtomicBool,
}

// SAFETY: the memory is owned by the value and only reached through raw
// copies.
unsafe impl Send for BufMem {}
// SAFETY: as above; no method hands out a reference to the bytes.
unsafe impl Sync for BufMem {}

impl BufMem {
    /// Allocates `size` zeroed bytes (a power of two, at least a page, at
    /// most 4 MiB). May sleep.
    fn new(size: usize) -> Result<BufMem> {
        if !size.is_power_of_two() || size < PAGE_SIZE {
            return Err(EINVAL.into());
        }
        let order = (size / PAGE_SIZE).trailing_zeros();
        if order > MAX_ORDER {
            return Err(EINVAL.into());
        }
        // SAFETY: any order up to `MAX_PAGE_ORDER` may be asked for.
        let raw_page = unsafe { bindings::smc_rs_alloc_buf_pages(order) };
        let page = NonNull::new(raw_page).ok_or(ENOMEM)?;
        // INVARIANT: a block of 2^order pages.
        let pages = Pages { page, order };
        // Buffer pages are never highmem on the 64-bit kernels RDMA runs on.
        // SAFETY: a valid page.
        let raw_vaddr = unsafe { bindings::smc_rs_page_address(page.as_ptr()) };
        let vaddr = NonNull::new(raw_vaddr).ok_or(ENOMEM)?.cast::<u8>();
        // INVARIANT: the address of the block just allocated.
        Ok(BufMem {
            vaddr,
            len: size,
            pages,
            written: AtomicUsize::new(0),
            mapped: AtomicBool::new(false),
        })
    }

    /// A buffer of `size` zeroed bytes no device maps (an SMC-D DMB: the
    /// CPU copies in and out, on both sides of the connection). May sleep.
    pub(crate) fn alloc(size: usize) -> Result<Arc<BufMem>> {
        Ok(Arc::new(BufMem::new(size)?, GFP_KERNEL)?)
    }

    /// The size in bytes.
    pub(crate) fn len(&self) -> usize {
        self.len
    }

    /// The address of `len` bytes at `offset`, if they lie in the buffer.
    fn range(&self, offset: usize, len: usize) -> Result<*mut u8> {
        match offset.checked_add(len) {
            Some(end) if end <= self.len => {
                // SAFETY: `offset <= self.len`: in or one past the block.
                Ok(unsafe { self.vaddr.as_ptr().add(offset) })
            }
            _ => Err(EINVAL.into()),
        }
    }

    /// Sets every byte to zero (a buffer passed on to another connection):
    /// those the CPU wrote since the last clear, or all of them once a
    /// device mapped the memory. Whoever hands the buffer on holds it
    /// alone, or knows that no copy into it runs meanwhile.
    pub(crate) fn clear(&self) {
        let n = if self.mapped.load(Ordering::Acquire) {
            self.len
        } else {
            self.written.load(Ordering::Relaxed).min(self.len)
        };
        // SAFETY: the first `n <= self.len` bytes of the block are ours
        // (invariant); no Rust reference covers them.
        unsafe { core::ptr::write_bytes(self.vaddr.as_ptr(), 0, n) };
        self.written.store(0, Ordering::Relaxed);
    }

    /// The CPU is about to write `len` bytes at `offset` (checked to lie in
    /// the buffer): they count as written from now on.
    fn will_write(&self, offset: usize, len: usize) {
        let end = offset + len;
        // Once a ring wrapped, `written` stays at its end: a load.
        if self.written.load(Ordering::Relaxed) < end {
            self.written.fetch_max(end, Ordering::Relaxed);
        }
    }

    /// Copies `out.len()` bytes at `offset` into `out`.
    pub(crate) fn read(&self, offset: usize, out: &mut [u8]) -> Result {
        let src = self.range(offset, out.len())?;
        // SAFETY: `src` has `out.len()` bytes of the buffer (checked above),
        // which nothing else references; `out` is a distinct Rust slice.
        unsafe { core::ptr::copy_nonoverlapping(src, out.as_mut_ptr(), out.len()) };
        Ok(())
    }

    /// Copies `data` into the buffer at `offset`.
    pub(crate) fn write(&self, offset: usize, data: &[u8]) -> Result {
        let dst = self.range(offset, data.len())?;
        self.will_write(offset, data.len());
        // SAFETY: `dst` has `data.len()` bytes of the buffer (checked above),
        // which no Rust reference covers; `data` is a distinct slice.
        unsafe { core::ptr::copy_nonoverlapping(data.as_ptr(), dst, data.len()) };
        Ok(())
    }

    /// Copies up to `len` bytes from the message's data (user memory for a
    /// `sendmsg`) into the buffer at `offset`; returns how many it copied
    /// (fewer when the message has less, or at a fault). May sleep.
    pub(crate) fn fill_from_msg(
        &self,
        offset: usize,
        len: usize,
        msg: &mut MsgHdr<'_>,
    ) -> Result<usize> {
        let dst = self.range(offset, len)?;
        self.will_write(offset, len);
        // SAFETY: `dst` has `len` writable bytes of the buffer (checked
        // above); the iterator is the live one of the call (`MsgHdr`).
        Ok(unsafe { bindings::smc_rs_copy_from_iter(dst.cast(), len, msg.iov_iter()) })
    }

    /// Copies up to `len` bytes at `offset` to the message's data (user
    /// memory for a `recvmsg`); returns how many it copied (fewer when the
    /// message has less room, or at a fault). May sleep.
    pub(crate) fn drain_to_msg(
        &self,
        offset: usize,
        len: usize,
        msg: &mut MsgHdr<'_>,
    ) -> Result<usize> {
        let src = self.range(offset, len)?;
        // SAFETY: `src` has `len` readable bytes of the buffer (checked
        // above); the iterator is the live one of the call (`MsgHdr`).
        Ok(unsafe { bindings::smc_rs_copy_to_iter(src.cast(), len, msg.iov_iter()) })
    }
}

/// A [`BufMem`] mapped for DMA (both directions) by one device for as long
/// as the mapping lives; the memory lives as long as its last mapping (or
/// other holder). Its bytes are reached through [`Deref`] to the memory.
///
/// # Invariants
///
/// `sgt`'s single entry covers all of `mem` and is mapped for `dev`, with
/// `dma_addr` as its device address, until `drop` unmaps it.
pub(crate) struct DmaBuf {
    dma_addr: u64,
    sgt: SgTable,
    dev: ARef<IbDevice>,
    /// Last: the pages go after the table that describes them.
    mem: Arc<BufMem>,
}

// SAFETY: `BufMem` is `Send`; the table and mapping are changed only at
// creation and drop.
unsafe impl Send for DmaBuf {}
// SAFETY: as above; `BufMem` is `Sync` and nothing else is shared.
unsafe impl Sync for DmaBuf {}

impl DmaBuf {
    /// Allocates `size` zeroed bytes (a power of two, at least a page, at
    /// most 4 MiB) and maps them for `dev`. May sleep.
    pub(crate) fn new(dev: &IbDevice, size: usize) -> Result<DmaBuf> {
        let mem = Arc::new(BufMem::new(size)?, GFP_KERNEL)?;
        Self::map(dev, &mem)
    }

    /// Maps `mem` for `dev` (one more mapping of memory that other devices
    /// may have mapped too). May sleep.
    pub(crate) fn map(dev: &IbDevice, mem: &Arc<BufMem>) -> Result<DmaBuf> {
        let len_c = u32::try_from(mem.len).map_err(|_| EINVAL)?;
        // From here a device may write any byte: a clear clears them all.
        mem.mapped.store(true, Ordering::Release);
        // SAFETY: all-zero is the empty table `sg_alloc_table` expects.
        let mut table: bindings::sg_table = unsafe { core::mem::zeroed() };
        // SAFETY: `table` is writable.
        to_result(unsafe { bindings::smc_rs_sg_alloc_table_one(&mut table) })?;
        // INVARIANT: allocated with one entry just now.
        let mut sgt = SgTable(table);
        // SAFETY: the table's one entry gets the whole block, which is
        // `mem.len` bytes of physically contiguous memory (`BufMem`'s
        // invariant), kept alive by `mem` for as long as the entry.
        unsafe { bindings::smc_rs_sg_set_page(sgt.0.sgl, mem.pages.page.as_ptr(), len_c) };
        // SAFETY: a live device and a valid one-entry list.
        let mapped = unsafe { bindings::smc_rs_ib_dma_map_sg(dev.as_raw(), sgt.0.sgl, 1) };
        if mapped != 1 {
            return Err(ENOMEM.into());
        }
        sgt.0.nents = 1;
        // SAFETY: the entry was mapped just now.
        let dma_addr = unsafe { bindings::smc_rs_sg_dma_address(sgt.0.sgl) };
        // INVARIANT: described and mapped above.
        Ok(DmaBuf {
            mem: mem.clone(),
            dma_addr,
            sgt,
            dev: ARef::from(dev),
        })
    }

    /// The memory, for mappings on other devices.
    pub(crate) fn mem(&self) -> &Arc<BufMem> {
        &self.mem
    }

    /// The device address of the first byte (for the mapping device).
    pub(crate) fn dma_addr(&self) -> u64 {
        self.dma_addr
    }

    /// The device the buffer is mapped for.
    pub(crate) fn device(&self) -> &IbDevice {
        &self.dev
    }

    /// The scatter/gather list that describes the buffer (one entry).
    pub(super) fn sgl(&self) -> *mut bindings::scatterlist {
        self.sgt.0.sgl
    }

    /// Makes what the device wrote visible to the CPU (before reading data
    /// the peer placed). A no-op on coherent and software devices.
    pub(crate) fn sync_for_cpu(&self) {
        // SAFETY: the range is the live mapping for `dev` (invariant).
        unsafe {
            bindings::smc_rs_ib_dma_sync_for_cpu(self.dev.as_raw(), self.dma_addr, self.mem.len)
        };
    }

    /// Hands what the CPU wrote to the device (before posting a send or an
    /// RDMA WRITE from the buffer). A no-op on coherent and software devices.
    pub(crate) fn sync_for_device(&self) {
        // SAFETY: the range is the live mapping for `dev` (invariant).
        unsafe {
            bindings::smc_rs_ib_dma_sync_for_device(self.dev.as_raw(), self.dma_addr, self.mem.len)
        };
    }
}

impl Deref for DmaBuf {
    type Target = BufMem;

    fn deref(&self) -> &BufMem {
        &self.mem
    }
}

impl Drop for DmaBuf {
    fn drop(&mut self) {
        // The table, then the memory (if this was its last mapping) are
        // freed after this, as fields.
        // SAFETY: mapped for `dev` in `new` (invariant), unmapped once.
        unsafe { bindings::smc_rs_ib_dma_unmap_sg(self.dev.as_raw(), self.sgt.0.sgl, 1) };
    }
}
