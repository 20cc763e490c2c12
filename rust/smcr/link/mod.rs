// SPDX-License-Identifier: GPL-2.0

//! A link: the queue pair to the peer, the send and receive slots of its
//! control messages, posting on them, and the demux of their completions
//! into the [`LinkOwner`] trait that its link group implements
//! (upstream's `smc_link` and `smc_wr` floors).
//!
//! Nothing here knows connections, CDC or LLC: a completed receive is a
//! CDC or an LLC message by its first byte and goes to the owner as such;
//! a completed send tells the owner which connection's data it carried and
//! which connections may now have a free slot.
//!
//! Lifetime: the queue pair holds an `Arc` of its link (its completion
//! handler), as does the registration queue pair (see [`REG_CAPS`]); the
//! link holds both and an `Arc` of its owner, the owner holds the link.
//! The cycle ends in [`Link::shut_down`], which the owner calls once: it
//! takes the queue pairs out and drops them, which waits for every posted
//! work request to complete, then lets the owner go.
//! [`Link::release`] then gives back the protection domain, the
//! completion queues and the device hold, after the owner gave back the
//! memory regions made on them.

pub(crate) mod activity;
pub(crate) mod rxbufs;
pub(crate) mod slots;
mod post;
mod txslots;

pub(crate) use txslots::CONNS_PER_LGR;

use crate::ib::{DeviceHold, SmcrV2Device};
use crate::sys::errno::{EINVAL, ENOLINK, ENOMEM};
use crate::sys::ib::buf::DmaBuf;
use crate::sys::ib::cq::Cq;
use crate::sys::ib::device::IbDevice;
use crate::sys::ib::pd::Pd;
use crate::sys::ib::qp::{Init, Qp, QpCaps, RtrParams, Rts};
use crate::sys::print::smc_dbg;
use crate::sys::sync::{new_spinlock_bh, SpinLockBh};
use crate::sysctl::LgrParams;
use crate::wire::llc::LLC_LEN;
use activity::Activity;
use core::sync::atomic::{AtomicBool, AtomicU32, AtomicU8, Ordering};
use kernel::prelude::*;
use kernel::sync::{new_condvar, new_mutex, Arc, CondVar, Mutex};
use rxbufs::{RxLayout, WR_BUF_SIZE, WR_BUF_V2_SIZE};
use slots::Slots;
use txslots::TxSlots;

/// Work requests one send slot may post: three RDMA WRITEs (a write that
/// wraps the peer's ring and our send buffer's) and the message.
const WR_PER_SLOT: u32 = 4;
/// The registration queue pair: one registration in flight, nothing
/// else. Regions are not registered on the link's queue pair: a device
/// that retransmits the link's traffic may run every request after the
/// first unacknowledged one again (rxe does, local ones included), and a
/// second registration of a region that is valid takes the queue pair to
/// the error state: the link would go down under a burst of handshakes.
/// Connected to itself, this one never sends a packet, so nothing on it
/// is ever run twice.
const REG_CAPS: QpCaps = QpCaps {
    max_send_wr: 1,
    max_recv_wr: 1,
    max_send_sge: 1,
    max_recv_sge: 1,
    max_inline_data: 0,
};
/// How long a sender waits for a free slot, in milliseconds (upstream:
/// 10 s).
const SLOT_WAIT_MS: u32 = 10_000;
/// The queue pair's own buffers: control message sends (one 64-byte
/// stride per slot), the one buffer for sends of long SMC-Rv2 LLC
/// messages, then the receive buffers (see [`rxbufs`]).
const TX_BUFS: usize = 0;
const TX_LONG_BUF: usize = 1;
const RX_BUFS: usize = 2;
/// How many received LLC requests wait for the process that expects them.
const LLC_INBOX: usize = 4;

/// What the link reports to the link group it belongs to, from its
/// completion handler (softirq) unless said otherwise. The owner does the
/// protocol's work; the link only posts and keeps slots.
pub(crate) trait LinkOwner: Send + Sync {
    /// A CDC message arrived.
    fn cdc_received(&self, msg: &[u8]);
    /// An LLC message arrived on `link` (44 bytes, or up to 8 KiB for
    /// SMC-Rv2's long messages).
    fn llc_received(&self, link: &Link, msg: &[u8]);
    /// A send slot completed; it carried connection `token`'s data up to
    /// `prod_total` of its stream (`token` 0: no connection's). The owner
    /// gives free slots to the connections waiting for one
    /// ([`Link::next_slot_waiter`]).
    fn slot_completed(&self, link: &Link, token: u32, prod_total: u64);
    /// `link` went down: nothing is posted on it any more (any
    /// context).
    fn link_down(&self, link: &Link);
    /// A connection on the link was closed on both sides and its socket
    /// let go of it (process context).
    fn conn_finished(&self);
}

/// Who made the link group.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(crate) enum Role {
    /// We connected: the server's CONFIRM LINK comes to us.
    Client,
    /// We accepted: we confirm the link.
    Server,
}

impl Role {
    /// The same side, as the wire's link rules name it.
    pub(crate) fn wire(self) -> crate::wire::llc::Role {
        match self {
            Role::Client => crate::wire::llc::Role::Client,
            Role::Server => crate::wire::llc::Role::Server,
        }
    }
}

/// Where the link is in its life.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
#[repr(u8)]
pub(crate) enum LinkState {
    /// Being set up: the CLC and LLC handshakes run.
    Activating = 0,
    /// Carrying connections.
    Active = 1,
    /// Failed or deleted: nothing is posted any more.
    Down = 2,
}

/// The queue pair as the link moves it towards RTS.
enum LinkQp {
    /// Not created, or taken out by `shut_down`.
    None,
    /// Created; receives may be posted.
    Init(Qp<Init, Link>),
    /// Ready to send.
    Rts(Qp<Rts, Link>),
}

/// Received LLC requests waiting for the process that runs a handshake.
struct LlcInbox {
    msgs: [Option<[u8; LLC_LEN]>; LLC_INBOX],
    /// A memory registration completed (`Some(ok)`).
    reg_done: Option<bool>,
}

/// What the link knows about the peer's end of it.
#[derive(Clone, Copy, Debug)]
pub(crate) struct PeerLink {
    /// The peer's system id.
    pub(crate) systemid: [u8; 8],
    /// GID of the peer's RoCE port.
    pub(crate) gid: [u8; 16],
    /// MAC to send to (the peer's, or the next hop's behind a gateway).
    pub(crate) mac: [u8; 6],
    /// The peer's queue pair number.
    pub(crate) qpn: u32,
    /// The peer's first packet sequence number.
    pub(crate) psn: u32,
    /// The peer's MTU (`enum ib_mtu`).
    pub(crate) mtu: u8,
}

/// The verbs objects of a link that the queue pair does not own, and the
/// hold on their device, let go last.
struct LinkVerbs {
    pd: Arc<Pd>,
    _send_cq: Arc<Cq>,
    _recv_cq: Arc<Cq>,
    _hold: DeviceHold,
}

/// A link to the peer.
#[pin_data]
pub(crate) struct Link {
    pub(crate) role: Role,
    /// Its slot in the link group (upstream's `link_idx`): the column of
    /// the group's tables (buffer mappings, the peer's keys) that is this
    /// link's.
    pub(crate) idx: usize,
    /// The device, port and GID the link uses.
    pub(crate) dev: SmcrV2Device,
    /// Our first packet sequence number.
    pub(crate) psn: u32,
    /// What the link took from the `net.smc` sysctls when it was made, and
    /// the connection limit agreed in the CLC handshake.
    pub(crate) params: LgrParams,
    /// The peer's end: its identity from the CLC Proposal or Accept, its
    /// queue pair from the Accept or Confirm.
    #[pin]
    peer: SpinLockBh<PeerLink>,
    /// The link number the server gave.
    pub(crate) link_num: AtomicU8,
    /// The second link of an asymmetric group: it stands by and carries
    /// no connection (upstream's `link_is_asym`).
    pub(crate) asym: AtomicBool,
    /// Our link user id and the peer's (CONFIRM LINK), for operators.
    pub(crate) uid: AtomicU32,
    pub(crate) peer_uid: AtomicU32,
    state: AtomicU8,
    /// When the peer was last heard, the link tested, the group idle.
    pub(crate) activity: Activity,
    /// The protection domain, completion queues and device hold, until
    /// [`Link::release`] (a device that goes away takes them back with
    /// everything else, even while sockets still hold the link).
    #[pin]
    verbs: Mutex<Option<LinkVerbs>>,
    /// Largest message the device sends inline (0: none).
    max_inline: AtomicU32,
    /// How the receive requests are laid out (from the device).
    rx_layout: RxLayout,
    /// A message longer than 44 bytes is copied here whole (8 KiB) before
    /// it is handled: the receive path allocates nothing. Taken before
    /// `qp`, never after it.
    #[pin]
    rx_long: SpinLockBh<KVec<u8>>,
    /// The buffer for long messages is in use, until its send completes.
    long_tx_busy: AtomicBool,
    #[pin]
    qp: SpinLockBh<LinkQp>,
    #[pin]
    tx: SpinLockBh<TxSlots>,
    #[pin]
    tx_wait: CondVar,
    #[pin]
    llc: SpinLockBh<LlcInbox>,
    #[pin]
    llc_wait: CondVar,
    /// Serialises memory registrations on the link.
    #[pin]
    reg_lock: Mutex<()>,
    /// The queue pair memory regions are registered with (see
    /// [`REG_CAPS`]), from `new` until `stop`.
    #[pin]
    reg_qp: SpinLockBh<Option<Qp<Rts, Link>>>,
    /// The link group, from [`Link::set_owner`] until `shut_down`.
    #[pin]
    owner: SpinLockBh<Option<Arc<dyn LinkOwner>>>,
}

impl Link {
    /// Creates a link towards `peer` on `dev`, with its queue pair in INIT
    /// and every receive posted. The caller must end it with
    /// [`shut_down`](Self::shut_down) and [`release`](Self::release).
    pub(crate) fn new(
        role: Role,
        idx: usize,
        dev: SmcrV2Device,
        peer: PeerLink,
        params: LgrParams,
    ) -> Result<Arc<Self>> {
        let ibdev = dev.device.ib();
        // Before the first verbs object: a removal of the device from here
        // on waits for this link.
        let hold = DeviceHold::new(&dev.device)?;
        let pd = Pd::new(ibdev)?;
        let mut slots = Slots::wanted(&params);
        let send_cq = Cq::new(ibdev, slots.tx * WR_PER_SLOT + 2, 0)?;
        let recv_cq = Cq::new(ibdev, slots.rx + 1, 0)?;
        let mut psn_bytes = [0u8; 4];
        crate::sys::random::fill(&mut psn_bytes);
        let psn = u32::from_ne_bytes(psn_bytes) & 0x00ff_ffff;
        let verbs = LinkVerbs {
            pd: pd.clone(),
            _send_cq: send_cq.clone(),
            _recv_cq: recv_cq.clone(),
            _hold: hold,
        };
        let rx_layout = RxLayout::for_device(&ibdev.caps());
        let rx_long = KVec::from_elem(0u8, WR_BUF_V2_SIZE, GFP_KERNEL)?;
        let link = Arc::pin_init(
            try_pin_init!(Link {
                role,
                idx,
                dev,
                psn,
                params,
                peer <- new_spinlock_bh!(peer, "Link::peer"),
                link_num: AtomicU8::new(0),
                asym: AtomicBool::new(false),
                uid: AtomicU32::new(0),
                peer_uid: AtomicU32::new(0),
                state: AtomicU8::new(LinkState::Activating as u8),
                activity: Activity::new(),
                verbs <- new_mutex!(Some(verbs), "Link::verbs"),
                max_inline: AtomicU32::new(0),
                rx_layout,
                rx_long <- new_spinlock_bh!(rx_long, "Link::rx_long"),
                long_tx_busy: AtomicBool::new(false),
                qp <- new_spinlock_bh!(LinkQp::None, "Link::qp"),
                tx <- new_spinlock_bh!(TxSlots::new(slots.tx_mask()), "Link::tx"),
                tx_wait <- new_condvar!("Link::tx_wait"),
                llc <- new_spinlock_bh!(
                    LlcInbox {
                        msgs: [None; LLC_INBOX],
                        reg_done: None,
                    },
                    "Link::llc"
                ),
                llc_wait <- new_condvar!("Link::llc_wait"),
                reg_lock <- new_mutex!((), "Link::reg_lock"),
                reg_qp <- new_spinlock_bh!(None, "Link::reg_qp"),
                owner <- new_spinlock_bh!(None, "Link::owner"),
            }? Error),
            GFP_KERNEL,
        )?;
        // Without memory for the queue pair, fewer slots (as upstream).
        let qp = loop {
            let caps = QpCaps {
                max_send_wr: slots.tx * WR_PER_SLOT,
                max_recv_wr: slots.rx,
                max_send_sge: 2,
                max_recv_sge: rx_layout.sges(),
                max_inline_data: WR_BUF_SIZE as u32,
            };
            let made = qp_bufs(link.dev.device.ib(), rx_layout, slots.rx).and_then(|bufs| {
                Qp::create(
                    &pd,
                    &send_cq,
                    &recv_cq,
                    caps,
                    link.dev.port,
                    link.clone(),
                    bufs,
                )
            });
            match made {
                Ok(qp) => break qp,
                Err(e) if e == ENOMEM => slots = slots.halved().ok_or(e)?,
                Err(e) => return Err(e),
            }
        };
        link.tx.lock().mask = slots.tx_mask();
        let granted = qp.caps();
        link.max_inline
            .store(granted.max_inline_data, Ordering::Relaxed);
        // The driver granted fewer entries than the layout needs: nothing
        // can be received.
        let mut result = if granted.max_recv_sge < rx_layout.sges() {
            Err(EINVAL.into())
        } else {
            Ok(())
        };
        for slot in 0..slots.rx.min(granted.max_recv_wr) {
            if result.is_err() {
                break;
            }
            result = rx_layout.post(&qp, RX_BUFS, slot);
        }
        *link.qp.lock() = LinkQp::Init(qp);
        if let Err(e) = result.and_then(|()| link.make_reg_qp(&pd)) {
            link.shut_down();
            link.release();
            return Err(e);
        }
        smc_dbg!(
            "link: {} receive slots, {:?} layout ({} entries a request)",
            slots.rx.min(granted.max_recv_wr),
            rx_layout,
            rx_layout.sges()
        );
        rx_layout.note_created();
        Ok(link)
    }

    /// Makes the registration queue pair (see [`REG_CAPS`]): in `pd`,
    /// connected to itself, with a completion queue of its own. May sleep.
    fn make_reg_qp(self: &Arc<Self>, pd: &Arc<Pd>) -> Result {
        let ibdev = self.dev.device.ib();
        // Its registration, and the drain's two requests.
        let cq = Cq::new(ibdev, 4, 0)?;
        let qp = Qp::create(pd, &cq, &cq, REG_CAPS, self.dev.port, self.clone(), KVec::new())?;
        let itself = RtrParams {
            path_mtu: self.dev.path_mtu,
            dest_qpn: qp.qpn(),
            rq_psn: 0,
            sgid_index: self.dev.gid_index as u8,
            dgid: self.dev.gid,
            dmac: self.dev.mac,
            hop_limit: 1,
        };
        let qp = qp.into_rtr(&itself)?.into_rts(0)?;
        *self.reg_qp.lock() = Some(qp);
        Ok(())
    }

    /// Makes `owner` the one the link reports to; before the peer learns
    /// our queue pair, so before anything can arrive on it.
    pub(crate) fn set_owner(&self, owner: Arc<dyn LinkOwner>) {
        *self.owner.lock() = Some(owner);
    }

    /// The owner, while the link has one.
    pub(crate) fn owner(&self) -> Option<Arc<dyn LinkOwner>> {
        self.owner.lock().clone()
    }

    /// Our queue pair number.
    pub(crate) fn qpn(&self) -> u32 {
        match &*self.qp.lock() {
            LinkQp::Init(qp) => qp.qpn(),
            LinkQp::Rts(qp) => qp.qpn(),
            LinkQp::None => 0,
        }
    }

    /// What we know of the peer's end of the link.
    pub(crate) fn peer(&self) -> PeerLink {
        *self.peer.lock()
    }

    /// The peer's end of a link added later (its ADD LINK message).
    pub(crate) fn set_peer(&self, peer: PeerLink) {
        *self.peer.lock() = peer;
    }

    /// The server learns the client's queue pair from its Confirm.
    pub(crate) fn set_peer_qp(&self, qpn: u32, psn: u32, mac: [u8; 6], mtu: u8) {
        let mut p = self.peer.lock();
        p.qpn = qpn;
        p.psn = psn;
        p.mac = mac;
        p.mtu = mtu;
    }

    /// Our MTU for the CLC messages (`enum ib_mtu`).
    pub(crate) fn mtu(&self) -> u8 {
        self.dev.path_mtu as u8
    }

    /// The link's state.
    pub(crate) fn state(&self) -> LinkState {
        match self.state.load(Ordering::Acquire) {
            0 => LinkState::Activating,
            1 => LinkState::Active,
            _ => LinkState::Down,
        }
    }

    /// Marks the link active, with the link number the server gave.
    pub(crate) fn set_active(&self, link_num: u8) {
        self.link_num.store(link_num, Ordering::Relaxed);
        let _ = self.state.compare_exchange(
            LinkState::Activating as u8,
            LinkState::Active as u8,
            Ordering::AcqRel,
            Ordering::Acquire,
        );
    }

    /// Moves the queue pair to RTR and then RTS towards the peer.
    pub(crate) fn connect_qp(&self) -> Result {
        let peer = self.peer();
        let params = RtrParams {
            path_mtu: u32::from(self.mtu().min(peer.mtu)),
            dest_qpn: peer.qpn,
            rq_psn: peer.psn,
            sgid_index: self.dev.gid_index as u8,
            dgid: peer.gid,
            dmac: if self.dev.uses_gateway {
                self.dev.nexthop_mac
            } else {
                peer.mac
            },
            hop_limit: if self.dev.uses_gateway { 64 } else { 1 },
        };
        // Modifying a queue pair may sleep: it is taken out meanwhile. The
        // peer does not know our queue pair yet, so nothing arrives on it.
        let taken = core::mem::replace(&mut *self.qp.lock(), LinkQp::None);
        let LinkQp::Init(qp) = taken else {
            *self.qp.lock() = taken;
            return Err(ENOLINK.into());
        };
        let rts = qp.into_rtr(&params)?.into_rts(self.psn)?;
        *self.qp.lock() = LinkQp::Rts(rts);
        Ok(())
    }

    /// Runs `f` on the registration queue pair while the link is up.
    fn with_reg_qp<R>(&self, f: impl FnOnce(&Qp<Rts, Link>) -> Result<R>) -> Result<R> {
        if self.state() == LinkState::Down {
            return Err(ENOLINK.into());
        }
        match &*self.reg_qp.lock() {
            Some(qp) => f(qp),
            None => Err(ENOLINK.into()),
        }
    }

    /// Runs `f` on the queue pair if it is ready to send.
    fn with_rts<R>(&self, f: impl FnOnce(&Qp<Rts, Link>) -> Result<R>) -> Result<R> {
        if self.state() == LinkState::Down {
            return Err(ENOLINK.into());
        }
        match &*self.qp.lock() {
            LinkQp::Rts(qp) => f(qp),
            _ => Err(ENOLINK.into()),
        }
    }

    /// Copies the first bytes of what receive slot `slot` got (`len`
    /// bytes, in `bufs`) into `out` and, unless `hold` says from those
    /// bytes that the slot must wait, posts it again. Returns how many
    /// bytes were copied and whether the slot was held. The message is
    /// taken even when the slot cannot be posted again: it arrived, and the
    /// peer's device saw it acknowledged (a CDC message dropped here would
    /// be lost for good: a failover resends only what did not complete).
    /// On a link that is down nothing is posted again (its queue pair
    /// drains); on a live one a failed post takes it down.
    fn take_rx(
        &self,
        bufs: &[DmaBuf],
        slot: u32,
        len: usize,
        out: &mut [u8],
        hold: impl Fn(&[u8]) -> bool,
    ) -> (usize, bool) {
        let n = self.rx_layout.read(bufs, RX_BUFS, slot, len, out);
        let held = out.get(..n).is_some_and(hold);
        if !held {
            self.repost_rx(slot);
        }
        (n, held)
    }

    /// Posts receive slot `slot` again (see [`take_rx`](Self::take_rx)).
    fn repost_rx(&self, slot: u32) {
        let posted = match &*self.qp.lock() {
            _ if self.state() == LinkState::Down => return,
            LinkQp::Init(qp) => self.rx_layout.post(qp, RX_BUFS, slot),
            LinkQp::Rts(qp) => self.rx_layout.post(qp, RX_BUFS, slot),
            LinkQp::None => return,
        };
        if let Err(e) = posted {
            smc_dbg!("link: receive slot {} not posted again ({:?})", slot, e);
            self.link_down();
        }
    }

    /// Handles the LLC message of `len` bytes (more than 44) that receive
    /// slot `slot` holds: copies it whole, posts the slot again, and hands
    /// the copy to the owner (softirq, no allocation).
    fn recv_long(&self, owner: &dyn LinkOwner, bufs: &[DmaBuf], slot: u32, len: usize) {
        let mut copy = self.rx_long.lock();
        let (n, _) = self.take_rx(bufs, slot, len, copy.as_mut_slice(), |_| false);
        let Some(msg) = copy.get(..n).filter(|m| !m.is_empty()) else {
            return;
        };
        if n == len {
            rxbufs::count_long_llc();
        }
        owner.llc_received(self, msg);
    }
}

/// The queue pair's own control message buffers: sends from a buffer
/// (devices without inline data), the buffer for long sends, and the
/// receive buffers of `rx_slots` slots in `layout`.
fn qp_bufs(ibdev: &IbDevice, layout: RxLayout, rx_slots: u32) -> Result<KVec<DmaBuf>> {
    let mut bufs = KVec::with_capacity(RX_BUFS + 2, GFP_KERNEL)?;
    bufs.push(DmaBuf::new(ibdev, 4096)?, GFP_KERNEL)?;
    bufs.push(DmaBuf::new(ibdev, WR_BUF_V2_SIZE)?, GFP_KERNEL)?;
    layout.alloc(ibdev, rx_slots, RX_BUFS, &mut bufs)?;
    Ok(bufs)
}
