// SPDX-License-Identifier: GPL-2.0

//! Where a link's receive slots put the control messages the peer sends.
//!
//! A CDC message or an SMC-Rv1 LLC message is 44 bytes; an SMC-Rv2 LLC
//! message may be up to 8 KiB ([`WR_BUF_V2_SIZE`]). Two layouts, chosen
//! per link from the device's `max_recv_sge`:
//!
//! - [`RxLayout::SharedTail`] (two entries per receive request, upstream's
//!   layout): the first 48 bytes into the slot's own stride of one page of
//!   receive buffers, the rest into one 8 KiB buffer all slots share (only
//!   one long message is expected at a time, as upstream assumes).
//! - [`RxLayout::PerSlot`] (one entry per receive request, for devices such
//!   as erdma with `max_recv_sge == 1`): each slot has an 8 KiB buffer of
//!   its own. More memory (8 KiB per slot), but SMC-Rv2 works where a queue
//!   pair with two receive entries cannot be made.
//!
//! For tests, `/sys/kernel/debug/smc_rs/max_recv_sge` caps the entries the
//! module uses (0, the default: what the device has; 1: behave as a device
//! with one), for link groups made after it is set. Beside it, two
//! read-only counters: `lgr_one_sge` (link groups made with the per-slot
//! layout) and `rx_llc_long` (SMC-Rv2 LLC messages longer than 44 bytes
//! received whole).

use crate::sys::debugfs::DebugfsDir;
use crate::sys::errno::{EINVAL, ENOLINK};
use crate::sys::ib::buf::DmaBuf;
use crate::sys::ib::device::{DeviceCaps, IbDevice};
use crate::sys::ib::qp::{Qp, QpState};
use crate::sys::ib::wr::QpHandler;
use core::sync::atomic::{AtomicU32, AtomicU64, Ordering};
use kernel::c_str;
use kernel::prelude::*;

/// Bytes of a control message buffer (upstream's work request buffer).
pub(crate) const WR_BUF_SIZE: usize = 48;
/// Bytes of the buffer that receives long SMC-Rv2 LLC messages.
pub(crate) const WR_BUF_V2_SIZE: usize = 8192;
/// The distance between two slots' buffers in the page of the shared
/// layout.
const SLOT_STRIDE: usize = 64;

/// The test knob: at most this many receive entries per request (0: no
/// cap).
static MAX_RECV_SGE: AtomicU32 = AtomicU32::new(0);
/// Link groups made with the per-slot layout.
static ONE_SGE_LGRS: AtomicU64 = AtomicU64::new(0);
/// SMC-Rv2 LLC messages longer than 44 bytes received whole.
static LONG_LLC: AtomicU64 = AtomicU64::new(0);

/// Adds the knob and the counters to `dir`.
pub(crate) fn add_files(dir: &DebugfsDir) {
    dir.add_u32(c_str!("max_recv_sge"), true, &MAX_RECV_SGE);
    dir.add_u64(c_str!("lgr_one_sge"), &ONE_SGE_LGRS);
    dir.add_u64(c_str!("rx_llc_long"), &LONG_LLC);
}

/// Counts an SMC-Rv2 LLC message longer than 44 bytes, received whole.
pub(crate) fn count_long_llc() {
    LONG_LLC.fetch_add(1, Ordering::Relaxed);
}

/// How a link's receive requests are laid out.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(crate) enum RxLayout {
    /// Two entries: 48 bytes in the slot's stride, the rest in the one
    /// 8 KiB buffer of the link.
    SharedTail,
    /// One entry: the slot's own 8 KiB buffer.
    PerSlot,
}

impl RxLayout {
    /// The layout for a device with `caps`, under the test knob's cap.
    pub(crate) fn for_device(caps: &DeviceCaps) -> Self {
        let sges = match MAX_RECV_SGE.load(Ordering::Relaxed) {
            0 => caps.max_recv_sge,
            cap => caps.max_recv_sge.min(cap),
        };
        if sges >= 2 {
            RxLayout::SharedTail
        } else {
            RxLayout::PerSlot
        }
    }

    /// Entries per receive request.
    pub(crate) fn sges(self) -> u32 {
        match self {
            RxLayout::SharedTail => 2,
            RxLayout::PerSlot => 1,
        }
    }

    /// Notes that a link group was made with this layout.
    pub(crate) fn note_created(self) {
        if self == RxLayout::PerSlot {
            ONE_SGE_LGRS.fetch_add(1, Ordering::Relaxed);
        }
    }

    /// Allocates the receive buffers of `slots` slots, appended to `bufs`
    /// from index `first` on (which must be `bufs.len()`). May sleep.
    pub(crate) fn alloc(
        self,
        ibdev: &IbDevice,
        slots: u32,
        first: usize,
        bufs: &mut KVec<DmaBuf>,
    ) -> Result {
        if bufs.len() != first {
            return Err(EINVAL.into());
        }
        match self {
            RxLayout::SharedTail => {
                bufs.push(DmaBuf::new(ibdev, 4096)?, GFP_KERNEL)?;
                bufs.push(DmaBuf::new(ibdev, WR_BUF_V2_SIZE)?, GFP_KERNEL)?;
            }
            RxLayout::PerSlot => {
                bufs.reserve(slots as usize, GFP_KERNEL)?;
                for _ in 0..slots {
                    bufs.push(DmaBuf::new(ibdev, WR_BUF_V2_SIZE)?, GFP_KERNEL)?;
                }
            }
        }
        Ok(())
    }

    /// Posts receive slot `slot` on `qp`, whose receive buffers start at
    /// local buffer `first`.
    pub(crate) fn post<S: QpState, H: QpHandler>(
        self,
        qp: &Qp<S, H>,
        first: usize,
        slot: u32,
    ) -> Result {
        match self {
            RxLayout::SharedTail => {
                let off = slot as usize * SLOT_STRIDE;
                let head = qp
                    .local_sge(first, off, WR_BUF_SIZE as u32)
                    .ok_or(ENOLINK)?;
                let tail = qp
                    .local_sge(
                        first + 1,
                        WR_BUF_SIZE,
                        (WR_BUF_V2_SIZE - WR_BUF_SIZE) as u32,
                    )
                    .ok_or(ENOLINK)?;
                qp.post_recv(slot, &[head, tail])
            }
            RxLayout::PerSlot => {
                let whole = qp
                    .local_sge(first + slot as usize, 0, WR_BUF_V2_SIZE as u32)
                    .ok_or(ENOLINK)?;
                qp.post_recv(slot, &[whole])
            }
        }
    }

    /// Copies the first bytes of the message received in `slot` (`len`
    /// bytes long) into `out`, as many as fit, from `bufs`, the queue
    /// pair's own buffers, whose receive buffers start at `first`; returns
    /// how many were copied (0 when the buffers are not there).
    pub(crate) fn read(
        self,
        bufs: &[DmaBuf],
        first: usize,
        slot: u32,
        len: usize,
        out: &mut [u8],
    ) -> usize {
        let n = len.min(out.len()).min(WR_BUF_V2_SIZE);
        let Some(out) = out.get_mut(..n) else {
            return 0;
        };
        match self {
            RxLayout::SharedTail => {
                let (head, tail) = out.split_at_mut(n.min(WR_BUF_SIZE));
                let off = slot as usize * SLOT_STRIDE;
                if bufs
                    .get(first)
                    .map_or(true, |b| b.read(off, head).is_err())
                {
                    return 0;
                }
                if tail.is_empty() {
                    return head.len();
                }
                match bufs.get(first + 1) {
                    Some(b) if b.read(WR_BUF_SIZE, tail).is_ok() => n,
                    _ => head.len(),
                }
            }
            RxLayout::PerSlot => match bufs.get(first + slot as usize) {
                Some(b) if b.read(0, out).is_ok() => n,
                _ => 0,
            },
        }
    }
}
