// SPDX-License-Identifier: GPL-2.0

//! Reliable-connected queue pairs (`struct ib_qp`) as a typestate: a
//! [`Qp<Init>`] becomes a [`Qp<Rtr>`] and then a [`Qp<Rts>`] only through
//! the modify calls that bring it there (upstream `smc_ib_modify_qp_*`), and
//! only a `Qp<Rts>` can post send requests. Receive requests may be posted
//! in any state. Posting is in `post.rs`, completions in `wr.rs`.

use super::super::bindings;
use super::super::errno::{EINVAL, ENODEV, ENOMEM, EOPNOTSUPP};
use super::buf::DmaBuf;
use super::cq::Cq;
use super::pd::Pd;
use super::sge::Sge;
use super::wr::{qp_event, QpHandler, QpShared, SlotKind, MAX_SGE};
use core::ffi::c_int;
use core::marker::PhantomData;
use core::ptr::NonNull;
use kernel::error::{from_err_ptr, to_result, Result};
use kernel::prelude::*;
use kernel::sync::Arc;

/// RNR NAK timer asked of the peer: 0.96 ms (upstream `SMC_QP_MIN_RNR_TIMER`).
const MIN_RNR_TIMER: u8 = 5;
/// Local ACK timeout, 4.096 us * 2^15 = 134 ms (upstream `SMC_QP_TIMEOUT`).
const ACK_TIMEOUT: u8 = 15;
/// Transport retries, 7 (upstream `SMC_QP_RETRY_CNT`).
const RETRY_COUNT: u8 = 7;
/// RNR retries, 7 = infinite (upstream `SMC_QP_RNR_RETRY`).
const RNR_RETRY: u8 = 7;
/// Packet sequence numbers have 24 bits.
const PSN_MASK: u32 = 0x00ff_ffff;

mod sealed {
    pub(crate) trait Sealed {}
}

/// A state of a queue pair, as a marker type.
pub(crate) trait QpState: sealed::Sealed {}

/// Initialised: receive requests may be posted.
pub(crate) struct Init;
/// Ready to receive: connected to the peer's queue pair.
pub(crate) struct Rtr;
/// Ready to send.
pub(crate) struct Rts;

impl sealed::Sealed for Init {}
impl sealed::Sealed for Rtr {}
impl sealed::Sealed for Rts {}
impl QpState for Init {}
impl QpState for Rtr {}
impl QpState for Rts {}

/// The sizes of a queue pair: asked for in [`Qp::create`], granted in
/// [`Qp::caps`].
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct QpCaps {
    /// Send requests in flight (the number of send slots).
    pub(crate) max_send_wr: u32,
    /// Receive requests in flight (the number of receive slots).
    pub(crate) max_recv_wr: u32,
    /// Scatter/gather entries per send request (at most 4).
    pub(crate) max_send_sge: u32,
    /// Scatter/gather entries per receive request (at most 4).
    pub(crate) max_recv_sge: u32,
    /// Bytes a send may carry inline (0: none).
    pub(crate) max_inline_data: u32,
}

/// What the move to RTR needs of the peer (as upstream's
/// `smc_ib_modify_qp_rtr`).
#[derive(Clone, Copy, Debug)]
pub(crate) struct RtrParams {
    /// The path MTU as `enum ib_mtu` (1 = 256 ... 5 = 4096): the smaller
    /// of ours and the peer's.
    pub(crate) path_mtu: u32,
    /// The peer's queue pair number.
    pub(crate) dest_qpn: u32,
    /// The peer's first send sequence number (24 bits).
    pub(crate) rq_psn: u32,
    /// The index of our RoCE GID in the port's table.
    pub(crate) sgid_index: u8,
    /// The peer's GID.
    pub(crate) dgid: [u8; 16],
    /// The peer's (or the next hop's) MAC address.
    pub(crate) dmac: [u8; 6],
    /// The IP hop limit (1 unless a gateway is between).
    pub(crate) hop_limit: u8,
}

/// A reliable-connected queue pair in state `S`, whose completions and
/// events go to `H`.
///
/// Dropping it sleeps (process context only): it moves the queue pair to
/// the error state, waits until every posted request has completed or been
/// flushed (so no completion can name its slot table any more), destroys
/// it, and only then frees the table and the buffers it owns.
pub(crate) struct Qp<S: QpState, H: QpHandler> {
    pub(super) inner: QpInner<H>,
    _state: PhantomData<S>,
}

/// The state-independent part of a [`Qp`], which owns everything.
///
/// # Invariants
///
/// `raw` is a queue pair created in `pd` with `send_cq` and `recv_cq`, at
/// least in INIT, destroyed only in `drop`; its context and the entries of
/// its requests point into `shared` (from `QpShared::alloc`), which lives
/// until then. `caps` are within what the driver granted, with one more
/// send and one more receive request left for the drain.
pub(super) struct QpInner<H: QpHandler> {
    raw: NonNull<bindings::ib_qp>,
    shared: NonNull<QpShared<H>>,
    pub(super) caps: QpCaps,
    port: u32,
    send_cq: Arc<Cq>,
    recv_cq: Arc<Cq>,
    pub(super) pd: Arc<Pd>,
    /// What the drain found, once it ran ([`Qp::drain`] or `drop`).
    drained: Option<bool>,
}

// SAFETY: posting and modifying are serialised by the driver and ib_core;
// the shared state is `Send + Sync`; the rest is read-only.
unsafe impl<H: QpHandler> Send for QpInner<H> {}
// SAFETY: as above.
unsafe impl<H: QpHandler> Sync for QpInner<H> {}

impl<H: QpHandler> Qp<Init, H> {
    /// Creates a queue pair in `pd` with its completion queues (all of the
    /// same device), sized by `caps` (clamped to the device; the inline
    /// size is taken as asked or refused by the driver), on `port`, and
    /// moves it to INIT (local and remote write access, P_Key index 0).
    /// `local_bufs` become the queue pair's own buffers, addressed with
    /// [`Qp::local_sge`]; they live as long as it does. May sleep.
    pub(crate) fn create(
        pd: &Arc<Pd>,
        send_cq: &Arc<Cq>,
        recv_cq: &Arc<Cq>,
        caps: QpCaps,
        port: u32,
        handler: Arc<H>,
        local_bufs: KVec<DmaBuf>,
    ) -> Result<Qp<Init, H>> {
        let dev = pd.device();
        let same_dev = |d: *mut bindings::ib_device| d == dev.as_raw();
        if !same_dev(send_cq.device().as_raw())
            || !same_dev(recv_cq.device().as_raw())
            || !local_bufs.iter().all(|b| same_dev(b.device().as_raw()))
        {
            return Err(EINVAL.into());
        }
        if !dev.ports().contains(&port) {
            return Err(ENODEV.into());
        }
        // The drain below is the generic one; iWARP devices drain their own
        // way, and SMC-R never runs on them.
        // SAFETY: a live device.
        if unsafe { bindings::smc_rs_ib_has_drain_ops(dev.as_raw()) } {
            return Err(EOPNOTSUPP.into());
        }
        let dcaps = dev.caps();
        // One request of each queue is kept for the drain, one more of the
        // send queue for the registration in flight (`post_reg_mr`): neither
        // takes one of the caller's `max_send_wr`.
        let room = dcaps.max_qp_wr.saturating_sub(1);
        let want = QpCaps {
            max_send_wr: caps.max_send_wr.min(room.saturating_sub(1)),
            max_recv_wr: caps.max_recv_wr.min(room),
            max_send_sge: caps
                .max_send_sge
                .min(dcaps.max_send_sge)
                .min(MAX_SGE as u32),
            max_recv_sge: caps
                .max_recv_sge
                .min(dcaps.max_recv_sge)
                .min(MAX_SGE as u32),
            max_inline_data: caps.max_inline_data,
        };
        if want.max_send_wr == 0
            || want.max_recv_wr == 0
            || want.max_send_sge == 0
            || want.max_recv_sge == 0
        {
            return Err(EINVAL.into());
        }
        let shared = QpShared::alloc(handler, want.max_send_wr, want.max_recv_wr, local_bufs)?;
        // SAFETY: all-zero is a valid `ib_qp_init_attr` (no SRQ, no XRC).
        let mut attr: bindings::ib_qp_init_attr = unsafe { core::mem::zeroed() };
        attr.event_handler = Some(qp_event::<H>);
        attr.qp_context = shared.as_ptr().cast();
        attr.send_cq = send_cq.as_raw();
        attr.recv_cq = recv_cq.as_raw();
        attr.cap.max_send_wr = want.max_send_wr + 2;
        attr.cap.max_recv_wr = want.max_recv_wr + 1;
        attr.cap.max_send_sge = want.max_send_sge;
        attr.cap.max_recv_sge = want.max_recv_sge;
        attr.cap.max_inline_data = want.max_inline_data;
        attr.sq_sig_type = bindings::ib_sig_type_IB_SIGNAL_REQ_WR;
        attr.qp_type = bindings::ib_qp_type_IB_QPT_RC;
        // SAFETY: a live domain and queues of its device; `attr` is valid
        // and the context lives until the queue pair is destroyed.
        let raw = unsafe { bindings::smc_rs_ib_create_qp(pd.as_raw(), &mut attr) };
        let raw = match from_err_ptr(raw).map(NonNull::new) {
            Ok(Some(raw)) => raw,
            res => {
                // SAFETY: no queue pair refers to `shared`.
                unsafe { QpShared::free(shared) };
                return Err(res.err().unwrap_or(ENOMEM.into()));
            }
        };
        // The driver reports what it granted, at least what was asked (or
        // leaves the numbers as they were).
        let granted = attr.cap;
        let caps = QpCaps {
            max_send_sge: want.max_send_sge.min(granted.max_send_sge),
            max_recv_sge: want.max_recv_sge.min(granted.max_recv_sge),
            max_inline_data: granted.max_inline_data,
            ..want
        };
        let short = granted.max_send_wr < want.max_send_wr + 2
            || granted.max_recv_wr < want.max_recv_wr + 1
            || caps.max_send_sge == 0
            || caps.max_recv_sge == 0;
        let mut qattr = zeroed_attr();
        qattr.qp_state = bindings::ib_qp_state_IB_QPS_INIT;
        qattr.pkey_index = 0;
        qattr.port_num = port;
        qattr.qp_access_flags = (bindings::ib_access_flags_IB_ACCESS_LOCAL_WRITE
            | bindings::ib_access_flags_IB_ACCESS_REMOTE_WRITE)
            as c_int;
        let mask = bindings::ib_qp_attr_mask_IB_QP_STATE
            | bindings::ib_qp_attr_mask_IB_QP_PKEY_INDEX
            | bindings::ib_qp_attr_mask_IB_QP_ACCESS_FLAGS
            | bindings::ib_qp_attr_mask_IB_QP_PORT;
        let init = if short {
            Err(EINVAL.into())
        } else {
            // SAFETY: a live queue pair in RESET; a valid attribute set.
            to_result(unsafe { bindings::ib_modify_qp(raw.as_ptr(), &mut qattr, mask as c_int) })
        };
        if let Err(e) = init {
            // Still in RESET with nothing posted: no completion can name
            // the table, so it goes right after the queue pair.
            // SAFETY: created above, destroyed once.
            unsafe { bindings::smc_rs_ib_destroy_qp(raw.as_ptr()) };
            // SAFETY: the queue pair that referred to it is gone.
            unsafe { QpShared::free(shared) };
            return Err(e);
        }
        // INVARIANT: created in `pd` with these queues, in INIT, with
        // `shared` as its context; `caps` as granted, less the drain room.
        let inner = QpInner {
            raw,
            shared,
            caps,
            port,
            send_cq: send_cq.clone(),
            recv_cq: recv_cq.clone(),
            pd: pd.clone(),
            drained: None,
        };
        Ok(Qp {
            inner,
            _state: PhantomData,
        })
    }

    /// Connects the queue pair to the peer's (INIT to RTR). On error the
    /// queue pair is dropped.
    pub(crate) fn into_rtr(self, peer: &RtrParams) -> Result<Qp<Rtr, H>> {
        let mut attr = zeroed_attr();
        attr.qp_state = bindings::ib_qp_state_IB_QPS_RTR;
        attr.path_mtu = peer.path_mtu;
        attr.ah_attr.type_ = bindings::rdma_ah_attr_type_RDMA_AH_ATTR_TYPE_ROCE;
        // SAFETY: `ah_attr` is a valid, writable RoCE address vector.
        unsafe {
            bindings::smc_rs_rdma_ah_set_port_num(&mut attr.ah_attr, self.inner.port);
            bindings::smc_rs_rdma_ah_set_grh(&mut attr.ah_attr, peer.sgid_index, peer.hop_limit);
            bindings::smc_rs_rdma_ah_set_dgid_raw(&mut attr.ah_attr, peer.dgid.as_ptr());
        }
        // Kernel users give the resolved MAC address themselves.
        attr.ah_attr.__bindgen_anon_1.roce.dmac = peer.dmac;
        attr.dest_qp_num = peer.dest_qpn;
        attr.rq_psn = peer.rq_psn & PSN_MASK;
        attr.max_dest_rd_atomic = 1;
        attr.min_rnr_timer = MIN_RNR_TIMER;
        let mask = bindings::ib_qp_attr_mask_IB_QP_STATE
            | bindings::ib_qp_attr_mask_IB_QP_AV
            | bindings::ib_qp_attr_mask_IB_QP_PATH_MTU
            | bindings::ib_qp_attr_mask_IB_QP_DEST_QPN
            | bindings::ib_qp_attr_mask_IB_QP_RQ_PSN
            | bindings::ib_qp_attr_mask_IB_QP_MAX_DEST_RD_ATOMIC
            | bindings::ib_qp_attr_mask_IB_QP_MIN_RNR_TIMER;
        self.inner.modify(&mut attr, mask)?;
        Ok(self.into_state())
    }
}

impl<H: QpHandler> Qp<Rtr, H> {
    /// Makes the queue pair ready to send (RTR to RTS), its first packet
    /// numbered `sq_psn` (24 bits). On error the queue pair is dropped.
    pub(crate) fn into_rts(self, sq_psn: u32) -> Result<Qp<Rts, H>> {
        let mut attr = zeroed_attr();
        attr.qp_state = bindings::ib_qp_state_IB_QPS_RTS;
        attr.timeout = ACK_TIMEOUT;
        attr.retry_cnt = RETRY_COUNT;
        attr.rnr_retry = RNR_RETRY;
        attr.sq_psn = sq_psn & PSN_MASK;
        attr.max_rd_atomic = 1;
        let mask = bindings::ib_qp_attr_mask_IB_QP_STATE
            | bindings::ib_qp_attr_mask_IB_QP_TIMEOUT
            | bindings::ib_qp_attr_mask_IB_QP_RETRY_CNT
            | bindings::ib_qp_attr_mask_IB_QP_SQ_PSN
            | bindings::ib_qp_attr_mask_IB_QP_RNR_RETRY
            | bindings::ib_qp_attr_mask_IB_QP_MAX_QP_RD_ATOMIC;
        self.inner.modify(&mut attr, mask)?;
        Ok(self.into_state())
    }
}

impl<S: QpState, H: QpHandler> Qp<S, H> {
    fn into_state<T: QpState>(self) -> Qp<T, H> {
        Qp {
            inner: self.inner,
            _state: PhantomData,
        }
    }

    /// The queue pair number the peer sends to.
    pub(crate) fn qpn(&self) -> u32 {
        // SAFETY: a live queue pair (invariant); the number is fixed.
        unsafe { (*self.inner.raw.as_ptr()).qp_num }
    }

    /// The sizes granted: slots per queue, entries per request, inline bytes.
    pub(crate) fn caps(&self) -> QpCaps {
        self.inner.caps
    }

    /// Buffer `index` of those given at creation.
    pub(crate) fn local_buf(&self, index: usize) -> Option<&DmaBuf> {
        self.inner.shared().local_buf(index)
    }

    /// A scatter/gather entry for `len` bytes at `offset` of local buffer
    /// `index`, valid on this queue pair only (its buffers live as long as
    /// it, so as long as any of its requests); `None` outside the buffer.
    pub(crate) fn local_sge(&self, index: usize, offset: usize, len: u32) -> Option<Sge<'_>> {
        let shared = self.inner.shared();
        let buf = shared.local_buf(index)?;
        let end = offset.checked_add(usize::try_from(len).ok()?)?;
        if end > buf.len() {
            return None;
        }
        let addr = buf.dma_addr().checked_add(u64::try_from(offset).ok()?)?;
        let owner = core::ptr::from_ref(shared) as usize;
        Some(Sge::new(addr, len, self.inner.pd.local_dma_lkey(), owner))
    }
}

/// An all-zero attribute set: every field the mask leaves out is ignored.
fn zeroed_attr() -> bindings::ib_qp_attr {
    // SAFETY: all-zero is a valid `ib_qp_attr` (integers and NULL pointers).
    unsafe { core::mem::zeroed() }
}

impl<H: QpHandler> QpInner<H> {
    pub(super) fn shared(&self) -> &QpShared<H> {
        // SAFETY: live until `drop` (invariant).
        unsafe { self.shared.as_ref() }
    }

    pub(super) fn as_raw(&self) -> *mut bindings::ib_qp {
        self.raw.as_ptr()
    }

    fn modify(&self, attr: &mut bindings::ib_qp_attr, mask: bindings::ib_qp_attr_mask) -> Result {
        let mask = c_int::try_from(mask).map_err(|_| EINVAL)?;
        // SAFETY: a live queue pair (invariant) and a valid attribute set;
        // ib_core and the driver serialise modifications.
        to_result(unsafe { bindings::ib_modify_qp(self.raw.as_ptr(), attr, mask) })
    }

    fn set_error(&self) -> Result {
        let mut attr = zeroed_attr();
        attr.qp_state = bindings::ib_qp_state_IB_QPS_ERR;
        self.modify(&mut attr, bindings::ib_qp_attr_mask_IB_QP_STATE)
    }

    /// Moves to ERR and waits until the last request of each queue has
    /// been flushed through its completion queue: completions come in
    /// order, so when the drain entries complete no other entry of the
    /// table can be named by the device or ib_core again. False if a drain
    /// request could not be posted (then nothing is known). Runs once: a
    /// second call gives the first one's answer.
    fn drain(&mut self) -> bool {
        if let Some(done) = self.drained {
            return done;
        }
        let done = self.drain_once();
        self.drained = Some(done);
        done
    }

    fn drain_once(&self) -> bool {
        if self.set_error().is_err() {
            return false;
        }
        let shared = self.shared();
        let (Some(send_cqe), Some(recv_cqe)) = (
            shared.cqe(SlotKind::DrainSend),
            shared.cqe(SlotKind::DrainRecv),
        ) else {
            return false;
        };
        // An RDMA WRITE without entries, as ib_core's own drain.
        let mut swr = bindings::ib_rdma_wr::default();
        swr.wr.__bindgen_anon_1.wr_cqe = send_cqe;
        swr.wr.opcode = bindings::ib_wr_opcode_IB_WR_RDMA_WRITE;
        swr.wr.send_flags = bindings::ib_send_flags_IB_SEND_SIGNALED;
        let mut rwr = bindings::ib_recv_wr::default();
        rwr.__bindgen_anon_1.wr_cqe = recv_cqe;
        // One request of each queue was kept for this (`caps`).
        // SAFETY: a live queue pair; the requests are valid for the call
        // (the driver copies them) and their entries live (invariant).
        let (sent, received) = unsafe {
            (
                bindings::smc_rs_ib_post_send(self.raw.as_ptr(), &swr.wr) == 0,
                bindings::smc_rs_ib_post_recv(self.raw.as_ptr(), &rwr) == 0,
            )
        };
        // Each completion is waited for once, and only if its request was
        // posted; the completion queues are polled by ib_core, not by us.
        // SAFETY: initialised in `QpShared::alloc`, live until freed.
        unsafe {
            if sent {
                bindings::wait_for_completion(shared.sq_drained.get());
            }
            if received {
                bindings::wait_for_completion(shared.rq_drained.get());
            }
        }
        sent && received
    }
}

/// A queue pair that was drained ([`Qp::drain`]): nothing can be posted
/// on it any more, nothing it had posted can complete any more. Dropping it
/// destroys it, which sleeps, possibly long: the driver may wait for its
/// own references (rxe up to 50 s, for packets a stalled NIC holds).
pub(crate) struct DrainedQp<H: QpHandler> {
    _inner: QpInner<H>,
}

impl<S: QpState, H: QpHandler> Qp<S, H> {
    /// Moves the queue pair to the error state and waits until every
    /// request it had posted completed or was flushed (sleeps; process
    /// context), so that no completion names its requests any more; what
    /// is left can only be destroyed, by dropping it, later.
    pub(crate) fn drain(self) -> DrainedQp<H> {
        let mut inner = self.inner;
        inner.drain();
        DrainedQp { _inner: inner }
    }
}

impl<H: QpHandler> Drop for QpInner<H> {
    fn drop(&mut self) {
        let drained = self.drain();
        // SAFETY: created in `create` (invariant), destroyed once.
        let destroyed = unsafe { bindings::smc_rs_ib_destroy_qp(self.raw.as_ptr()) } == 0;
        if !destroyed {
            // The queue pair still counts on its domain and queues: keep
            // them (and everything it may still name) forever.
            core::mem::forget(self.pd.clone());
            core::mem::forget(self.send_cq.clone());
            core::mem::forget(self.recv_cq.clone());
        }
        if drained && destroyed {
            // SAFETY: no request is left and the queue pair is gone, so
            // neither completions nor events can reach the table.
            unsafe { QpShared::free(self.shared) };
        } else {
            // Completions may still name the table: leave it allocated.
            pr_warn!("smc_rs: queue pair not drained; its completion table stays allocated\n");
        }
    }
}
