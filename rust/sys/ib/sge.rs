// SPDX-License-Identifier: GPL-2.0

//! The scatter/gather entry of a work request, and where it is valid: the
//! floor under memory regions (which make entries for their ranges) and
//! work requests (which accept them).

use super::super::bindings;
use core::marker::PhantomData;

/// A scatter/gather entry of a request. It can only be made for memory the
/// device may touch for as long as a request can, and is accepted only
/// where its key means that memory:
///
/// - a range of a registered region, on queue pairs of the region's
///   domain: the device checks every access against the region, whose keys
///   die before its memory (keys are unique per device, but another device
///   could give the same number another meaning). Nothing makes one today:
///   no request reads a region;
/// - a range of a buffer a queue pair owns (`Qp::local_sge`), on that queue
///   pair only: its key is the domain's DMA key, which reaches any memory,
///   and the buffer lives until the queue pair is drained.
///
/// A buffer of the domain without a region (a send buffer) gets no entry:
/// an RDMA WRITE from it goes through `Qp::post_rdma_write_held`, which
/// keeps the buffer alive for as long as the device may read it.
///
/// The lifetime ties it to the object it came from, so the address that
/// identifies its scope cannot be reused by another object meanwhile.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Sge<'a> {
    addr: u64,
    length: u32,
    lkey: u32,
    /// Where it is valid: the address of the domain (a region's range) or
    /// of the queue pair's shared state (its own buffer).
    scope: usize,
    _source: PhantomData<&'a ()>,
}

impl<'a> Sge<'a> {
    /// # Invariants (for callers in `sys::ib`)
    ///
    /// `scope` is the address of a `Pd` and `lkey` the key of a region of
    /// it that holds the range, or the address of a `QpShared` and `lkey`
    /// its domain's DMA key, the range in one of its buffers; whichever it
    /// is lives for `'a`.
    pub(super) fn new(addr: u64, length: u32, lkey: u32, scope: usize) -> Sge<'a> {
        Sge {
            addr,
            length,
            lkey,
            scope,
            _source: PhantomData,
        }
    }

    /// The entry for the driver, if valid in one of the scopes given.
    pub(super) fn raw_in(&self, scopes: [usize; 2]) -> Option<bindings::ib_sge> {
        scopes.contains(&self.scope).then_some(bindings::ib_sge {
            addr: self.addr,
            length: self.length,
            lkey: self.lkey,
        })
    }
}
