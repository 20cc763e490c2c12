// SPDX-License-Identifier: GPL-2.0

//! Posting work requests on a queue pair: receives in any state, sends,
//! RDMA WRITEs and memory registrations once it is ready to send.
//!
//! Requests are built on the stack (the driver copies them while posting),
//! each names a slot of the queue pair's completion table by index: no
//! allocation per message. An index out of range is `EINVAL`. A signaled
//! request takes its send slot until it completes (`EBUSY` meanwhile);
//! otherwise whether a slot is free is the caller's bookkeeping: reusing
//! one only makes its handler see two completions for one index, because
//! the slot's entry is never written after creation and lives until the
//! queue pair is drained. A local buffer (no region) is only read by an
//! RDMA WRITE that the queue pair keeps it alive for
//! ([`Qp::post_rdma_write_held`]).

use super::super::bindings;
use super::super::errno::{EALREADY, EINVAL};
use super::super::print::smc_warn_ratelimited;
use super::mr::{MrAccess, RegisteredBuf};
use super::qp::{Qp, QpInner, QpState, Rts};
use super::sge::Sge;
use super::wr::{QpHandler, SlotKind, MAX_SGE};
use core::ffi::c_int;
use core::panic::Location;
use kernel::error::{to_result, Result};
use kernel::sync::Arc;

/// The entries of a request, converted for the driver, on the stack.
struct SgeList {
    raw: [bindings::ib_sge; MAX_SGE],
    count: usize,
}

impl SgeList {
    fn as_mut_ptr(&mut self) -> *mut bindings::ib_sge {
        if self.count == 0 {
            core::ptr::null_mut()
        } else {
            self.raw.as_mut_ptr()
        }
    }

    fn num(&self) -> c_int {
        // At most `MAX_SGE`: no truncation.
        self.count as c_int
    }
}

impl<H: QpHandler> QpInner<H> {
    /// Converts `sges` (`1..=max` of them, each valid on this queue pair).
    fn sge_list(&self, sges: &[Sge<'_>], max: u32) -> Result<SgeList> {
        if sges.is_empty() || sges.len() > max as usize {
            return Err(EINVAL.into());
        }
        let mut list = SgeList {
            raw: [bindings::ib_sge::default(); MAX_SGE],
            count: sges.len(),
        };
        let owner = core::ptr::from_ref(self.shared()) as usize;
        for (dst, sge) in list.raw.iter_mut().zip(sges) {
            *dst = sge.raw_on(owner).ok_or(EINVAL)?;
        }
        Ok(list)
    }

    /// The entry of `kind`, or `EINVAL` for a slot out of range.
    fn cqe(&self, kind: SlotKind) -> Result<*mut bindings::ib_cqe> {
        Ok(self.shared().cqe(kind).ok_or(EINVAL)?)
    }

    /// Posts one send request `wr` with send slot `slot`, whose completion
    /// entry this sets (see [`QpShared::send_begin`]).
    ///
    /// [`QpShared::send_begin`]: super::wr::QpShared::send_begin
    fn post_on_slot(&self, slot: u32, wr: &mut bindings::ib_send_wr) -> Result {
        let signaled = wr.send_flags & bindings::ib_send_flags_IB_SEND_SIGNALED != 0;
        wr.__bindgen_anon_1.wr_cqe = self.shared().send_begin(slot, signaled)?;
        let posted = self.post_send_raw(wr);
        if posted.is_err() {
            self.shared().send_not_posted(slot, signaled);
        }
        posted
    }

    /// Posts one send request.
    fn post_send_raw(&self, wr: &bindings::ib_send_wr) -> Result {
        // SAFETY: a live queue pair (invariant). The request and its
        // entries are valid for the call (the driver copies them); its
        // completion entry lives until the queue pair is drained; every
        // address it names is a range the device may use for as long as the
        // request can run (`Sge`'s invariant; inline data the driver copies
        // now; a local buffer whose hold `post_rdma_write_held` takes right
        // after, while the caller's reference still keeps it alive).
        to_result(unsafe { bindings::smc_rs_ib_post_send(self.as_raw(), wr) })
    }
}

/// The `send_flags` of a request.
fn send_flags(signaled: bool, solicited: bool) -> c_int {
    let mut flags = 0;
    if signaled {
        flags |= bindings::ib_send_flags_IB_SEND_SIGNALED;
    }
    if solicited {
        flags |= bindings::ib_send_flags_IB_SEND_SOLICITED;
    }
    flags
}

/// An empty send request (its completion entry is set when it is posted).
fn send_wr(opcode: bindings::ib_wr_opcode, flags: c_int) -> bindings::ib_send_wr {
    bindings::ib_send_wr {
        opcode,
        send_flags: flags,
        ..Default::default()
    }
}

impl<S: QpState, H: QpHandler> Qp<S, H> {
    /// Posts a receive into `sges` (1 to `caps().max_recv_sge` entries)
    /// with receive slot `slot`. Allowed in every state.
    pub(crate) fn post_recv(&self, slot: u32, sges: &[Sge<'_>]) -> Result {
        let inner = &self.inner;
        let mut list = inner.sge_list(sges, inner.caps.max_recv_sge)?;
        let mut wr = bindings::ib_recv_wr::default();
        wr.__bindgen_anon_1.wr_cqe = inner.cqe(SlotKind::Recv(slot))?;
        wr.sg_list = list.as_mut_ptr();
        wr.num_sge = list.num();
        // SAFETY: a live queue pair; the request and its entries are valid
        // for the call (copied by the driver); the completion entry lives
        // until the drain; the entries are ranges the device may write for
        // as long as the request can run (`Sge`'s invariant).
        to_result(unsafe { bindings::smc_rs_ib_post_recv(inner.as_raw(), &wr) })
    }
}

impl<H: QpHandler> Qp<Rts, H> {
    /// Sends `data` inline (the driver copies it while posting) with send
    /// slot `slot`. `EINVAL` if longer than `caps().max_inline_data`.
    pub(crate) fn post_send_inline(
        &self,
        slot: u32,
        data: &[u8],
        signaled: bool,
        solicited: bool,
    ) -> Result {
        let inner = &self.inner;
        let len = u32::try_from(data.len()).map_err(|_| EINVAL)?;
        if len > inner.caps.max_inline_data {
            return Err(EINVAL.into());
        }
        let mut sge = bindings::ib_sge {
            addr: data.as_ptr() as u64,
            length: len,
            lkey: 0,
        };
        let flags = send_flags(signaled, solicited) | bindings::ib_send_flags_IB_SEND_INLINE;
        let mut wr = send_wr(bindings::ib_wr_opcode_IB_WR_SEND, flags);
        if len > 0 {
            wr.sg_list = &mut sge;
            wr.num_sge = 1;
        }
        inner.post_on_slot(slot, &mut wr)
    }

    /// Sends the bytes of `sge` with send slot `slot`.
    pub(crate) fn post_send(
        &self,
        slot: u32,
        sge: Sge<'_>,
        signaled: bool,
        solicited: bool,
    ) -> Result {
        let inner = &self.inner;
        let mut list = inner.sge_list(&[sge], inner.caps.max_send_sge)?;
        let mut wr = send_wr(
            bindings::ib_wr_opcode_IB_WR_SEND,
            send_flags(signaled, solicited),
        );
        wr.sg_list = list.as_mut_ptr();
        wr.num_sge = list.num();
        inner.post_on_slot(slot, &mut wr)
    }

    /// Writes `len` bytes at `offset` of the local buffer `src` (one of
    /// this queue pair's domain, without a region) to the peer's memory at
    /// `remote_addr` under its key `rkey`, with send slot `slot`,
    /// unsignaled. The domain's DMA key reaches any memory, so the queue
    /// pair keeps `src` alive until a signaled request posted after this
    /// one completes successfully, or until it is drained: the caller may
    /// drop its reference at once. `EBUSY` while the slot still holds the
    /// buffer of an earlier WRITE; `EINVAL` for a buffer with a region, of
    /// another domain, or a range outside it.
    pub(crate) fn post_rdma_write_held(
        &self,
        slot: u32,
        src: &Arc<RegisteredBuf>,
        offset: usize,
        len: u32,
        remote_addr: u64,
        rkey: u32,
    ) -> Result {
        let inner = &self.inner;
        if src.as_raw().is_some() || !Arc::ptr_eq(src.pd(), &inner.pd) || len == 0 {
            return Err(EINVAL.into());
        }
        let addr = src.range(offset, len).ok_or(EINVAL)?;
        let mut sge = bindings::ib_sge {
            addr,
            length: len,
            lkey: inner.pd.local_dma_lkey(),
        };
        let mut wr = bindings::ib_rdma_wr {
            wr: send_wr(bindings::ib_wr_opcode_IB_WR_RDMA_WRITE, 0),
            remote_addr,
            rkey,
        };
        wr.wr.sg_list = &mut sge;
        wr.wr.num_sge = 1;
        let shared = inner.shared();
        shared.hold_begin(slot)?;
        match inner.post_on_slot(slot, &mut wr.wr) {
            Ok(()) => {
                shared.hold_taken(slot, src);
                Ok(())
            }
            Err(e) => {
                shared.hold_dropped(slot);
                Err(e)
            }
        }
    }

    /// Writes `data` inline (the driver copies it while posting) to the
    /// peer's memory at `remote_addr` under its key `rkey`, with send slot
    /// `slot`, unsignaled. `EINVAL` if longer than `caps().max_inline_data`.
    pub(crate) fn post_rdma_write_inline(
        &self,
        slot: u32,
        data: &[u8],
        remote_addr: u64,
        rkey: u32,
    ) -> Result {
        let inner = &self.inner;
        let len = u32::try_from(data.len()).map_err(|_| EINVAL)?;
        if len == 0 || len > inner.caps.max_inline_data {
            return Err(EINVAL.into());
        }
        let mut sge = bindings::ib_sge {
            addr: data.as_ptr() as u64,
            length: len,
            lkey: 0,
        };
        let mut wr = bindings::ib_rdma_wr {
            wr: send_wr(
                bindings::ib_wr_opcode_IB_WR_RDMA_WRITE,
                bindings::ib_send_flags_IB_SEND_INLINE,
            ),
            remote_addr,
            rkey,
        };
        wr.wr.sg_list = &mut sge;
        wr.wr.num_sge = 1;
        inner.post_on_slot(slot, &mut wr.wr)
    }

    /// Registers `reg` (a region of this queue pair's domain) with
    /// `access`; the handler's `reg_done` reports the outcome, after which
    /// the keys work. One registration at a time (`EBUSY`); the queue pair
    /// keeps a reference to the region until the next registration or its
    /// own end, so the region lives while the device works on it. Does not
    /// sleep: the reference it held before is handed back, for the caller
    /// to drop where it may sleep (dropping it may deregister a region).
    ///
    /// A region is registered once (`EALREADY` after, with a warning that
    /// names `at` and the first place): the device would take the queue
    /// pair to the error state for a second registration of a valid region.
    pub(crate) fn post_reg_mr(
        &self,
        reg: &Arc<RegisteredBuf>,
        access: MrAccess,
        at: &'static Location<'static>,
    ) -> Result<Option<Arc<RegisteredBuf>>> {
        let inner = &self.inner;
        if !Arc::ptr_eq(reg.pd(), &inner.pd) {
            return Err(EINVAL.into());
        }
        // A local buffer has no region to register.
        let mr = reg.as_raw().ok_or(EINVAL)?;
        let cqe = inner.cqe(SlotKind::Reg)?;
        if let Err(first) = reg.claim_registration(at) {
            smc_warn_ratelimited!(
                "ib: region (key {:#x}) registered again at {}, first at {}",
                reg.rkey(),
                at,
                first
            );
            return Err(EALREADY.into());
        }
        let shared = inner.shared();
        let previous = match shared.reg_begin(reg) {
            Ok(p) => p,
            Err(e) => {
                reg.unclaim_registration();
                return Err(e);
            }
        };
        let mut wr = bindings::ib_reg_wr {
            wr: send_wr(
                bindings::ib_wr_opcode_IB_WR_REG_MR,
                bindings::ib_send_flags_IB_SEND_SIGNALED,
            ),
            mr,
            key: reg.rkey(),
            access: access.flags(),
        };
        wr.wr.__bindgen_anon_1.wr_cqe = cqe;
        match inner.post_send_raw(&wr.wr) {
            Ok(()) => Ok(previous),
            Err(e) => {
                // Nothing was posted: the previous region stays held, as
                // if this call had not been made.
                reg.unclaim_registration();
                let failed = shared.reg_post_failed(previous);
                drop(failed);
                Err(e)
            }
        }
    }
}
