// SPDX-License-Identifier: GPL-2.0

//! The scatter/gather entry of a work request, and where it is valid: the
//! floor under queue pairs (which make entries for their own buffers) and
//! work requests (which accept them).

use super::super::bindings;
use core::marker::PhantomData;

/// A scatter/gather entry of a request: a range of a buffer a queue pair
/// owns (`Qp::local_sge`), accepted on that queue pair only. Its key is
/// the domain's DMA key, which reaches any memory, and the buffer lives
/// until the queue pair is drained, so for as long as a request can.
///
/// A buffer of the domain without a region (a send buffer) gets no entry:
/// an RDMA WRITE from it goes through `Qp::post_rdma_write_held`, which
/// keeps the buffer alive for as long as the device may read it.
///
/// The lifetime ties it to the queue pair it came from, so the address
/// that identifies it cannot be reused by another one meanwhile.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Sge<'a> {
    addr: u64,
    length: u32,
    lkey: u32,
    /// Where it is valid: the address of the queue pair's shared state.
    owner: usize,
    _source: PhantomData<&'a ()>,
}

impl<'a> Sge<'a> {
    /// # Invariants (for callers in `sys::ib`)
    ///
    /// `owner` is the address of a `QpShared` and `lkey` its domain's DMA
    /// key, the range in one of its buffers; it lives for `'a`.
    pub(super) fn new(addr: u64, length: u32, lkey: u32, owner: usize) -> Sge<'a> {
        Sge {
            addr,
            length,
            lkey,
            owner,
            _source: PhantomData,
        }
    }

    /// The entry for the driver, if it is valid on the queue pair whose
    /// shared state is at `owner`.
    pub(super) fn raw_on(&self, owner: usize) -> Option<bindings::ib_sge> {
        (self.owner == owner).then_some(bindings::ib_sge {
            addr: self.addr,
            length: self.length,
            lkey: self.lkey,
        })
    }
}
