// SPDX-License-Identifier: GPL-2.0

//! A link group and its link: the queue pair to the peer, the send and
//! receive slots of its control messages, and the dispatch of their
//! completions.
//!
//! A link group has one link for now (one RDMA device per side, as rxe
//! gives); the structure keeps the link's parts apart so that a second
//! link can join later.
//!
//! Lifetime: the queue pair holds an `Arc` of its link group (its
//! completion handler), and the link group holds the queue pair. The cycle
//! ends in [`LinkGroup::terminate`], which every owner calls once: it takes
//! the queue pair out and drops it, which waits for every posted work
//! request to complete.

use super::conn::{Conn, ConnTable, CONNS_PER_LGR};
use super::keepalive::Activity;
use super::rxbufs::{self, RxLayout, WR_BUF_V2_SIZE};
use super::slots::Slots;
use crate::ib::{DeviceHold, SmcrV2Device};
use crate::sys::errno::{EAGAIN, EBUSY, EINVAL, ENOLINK, ENOMEM, ETIMEDOUT};
use crate::sys::ib::buf::DmaBuf;
use crate::sys::ib::cq::Cq;
use crate::sys::ib::device::IbDevice;
use crate::sys::ib::mr::{MrAccess, RegisteredBuf};
use crate::sys::ib::pd::Pd;
use crate::sys::ib::qp::{Init, Qp, QpCaps, QpState, RtrParams, Rts};
use crate::sys::ib::sge::Sge;
use crate::sys::ib::wr::QpHandler;
use crate::sys::ib::wr::{QpEvent, WcStatus};
use crate::sys::print::smc_dbg;
use crate::sys::sync::{new_spinlock_bh, SpinLockBh};
use crate::sysctl::LgrParams;
use crate::wire::cdc::CDC_MSG_TYPE;
use crate::wire::lgr_match::LgrIdentity;
use crate::wire::llc::LLC_LEN;
use core::sync::atomic::{AtomicBool, AtomicU32, AtomicU8, AtomicUsize, Ordering};
use kernel::prelude::*;
use kernel::sync::{new_condvar, new_mutex, Arc, CondVar, Mutex};

/// Bytes of a control message buffer (upstream's work request buffer).
pub(crate) const WR_BUF_SIZE: usize = 48;
/// Most send or receive slots a link has: one bit each in a `u64`, one
/// 64-byte stride each in a page of control message buffers. How many it
/// has comes from `net.smc.smcr_max_send_wr`/`smcr_max_recv_wr`
/// (see [`crate::smcr::slots`]).
pub(crate) const MAX_SLOTS: u32 = 64;
/// Work requests one send slot may post: two RDMA WRITEs (a write that
/// wraps the peer's ring) and the message.
const WR_PER_SLOT: u32 = 3;
/// A connection's RMB and send buffer.
pub(crate) type BufferPair = (Arc<RegisteredBuf>, Arc<RegisteredBuf>);
/// Buffer pairs a link group keeps for later connections.
const POOL_MAX: usize = 256;
/// How long a sender waits for a free slot, in jiffies (upstream: 10 s).
const SLOT_WAIT_MS: u32 = 10_000;
/// The queue pair's own buffers: control message sends (one 64-byte
/// stride per slot), the one buffer for sends of long SMC-Rv2 LLC
/// messages, then the receive buffers (see [`rxbufs`]).
const TX_BUFS: usize = 0;
const TX_LONG_BUF: usize = 1;
const RX_BUFS: usize = 2;
/// How many received LLC requests wait for the process that expects them.
const LLC_INBOX: usize = 4;

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
    /// Not created, or taken out by `terminate`.
    None,
    /// Created; receives may be posted.
    Init(Qp<Init, LinkGroup>),
    /// Ready to send.
    Rts(Qp<Rts, LinkGroup>),
}

/// What a send slot was used for, for its completion.
#[derive(Clone, Copy, Default)]
struct SlotUse {
    /// The connection whose CDC message the slot carried (0: none).
    token: u32,
    /// How many bytes of that connection's stream the message covered.
    prod_total: u64,
    /// The message went from the buffer for long messages.
    long: bool,
}

/// The send slots: which are busy and what for.
struct TxSlots {
    busy: u64,
    /// The slots the link has (its lowest bits).
    mask: u64,
    uses: [SlotUse; MAX_SLOTS as usize],
    /// Connections whose data waits for a free slot.
    waiters: SlotWaiters,
    /// LLC answers that found no free slot: they go first on the next
    /// slots that complete.
    answers: QueuedAnswers,
}

impl TxSlots {
    /// The free slots, one bit each.
    fn free(&self) -> u64 {
        !self.busy & self.mask
    }

    /// Takes the lowest free slot, if any.
    fn take(&mut self) -> Option<u32> {
        let free = self.free();
        if free == 0 {
            return None;
        }
        let slot = free.trailing_zeros();
        self.busy |= 1 << slot;
        if let Some(u) = self.uses.get_mut(slot as usize) {
            *u = SlotUse::default();
        }
        Some(slot)
    }
}

/// How many LLC answers may wait for a send slot. A peer keeps one LLC
/// flow open at a time (upstream's flows), with a TEST LINK beside it: a
/// peer that floods requests loses what does not fit, as on a lost
/// message, and its requests time out.
const ANSWERS_QUEUED: usize = 8;

/// LLC answers waiting for a send slot, first come first served.
struct QueuedAnswers {
    msgs: [([u8; LLC_LEN], u8); ANSWERS_QUEUED],
    head: usize,
    len: usize,
}

impl QueuedAnswers {
    const fn new() -> Self {
        QueuedAnswers {
            msgs: [([0; LLC_LEN], 0); ANSWERS_QUEUED],
            head: 0,
            len: 0,
        }
    }

    /// Queues `msg` (at most [`LLC_LEN`] bytes); `false` when full.
    fn push(&mut self, msg: &[u8]) -> bool {
        if self.len == ANSWERS_QUEUED || msg.len() > LLC_LEN {
            return false;
        }
        let Some((buf, len)) = self.msgs.get_mut((self.head + self.len) % ANSWERS_QUEUED) else {
            return false;
        };
        let Some(dst) = buf.get_mut(..msg.len()) else {
            return false;
        };
        dst.copy_from_slice(msg);
        *len = msg.len() as u8;
        self.len += 1;
        true
    }

    /// Takes the oldest answer.
    fn pop(&mut self) -> Option<([u8; LLC_LEN], u8)> {
        if self.len == 0 {
            return None;
        }
        let msg = self.msgs.get(self.head).copied();
        self.head = (self.head + 1) % ANSWERS_QUEUED;
        self.len -= 1;
        msg
    }
}

/// A place in a link group for a connection whose server handshake chose
/// it; given back when dropped, once the connection is in the table (or
/// the handshake failed).
pub(crate) struct Joining(Arc<LinkGroup>);

impl Joining {
    /// The link group.
    pub(crate) fn lgr(&self) -> &Arc<LinkGroup> {
        &self.0
    }
}

impl Drop for Joining {
    fn drop(&mut self) {
        self.0.joining.fetch_sub(1, Ordering::AcqRel);
    }
}

/// Connections (by token) waiting for a send slot, first come first
/// served, each once: a completed slot goes to the first of them, as
/// upstream's senders queue for a slot, and does not wake them all.
struct SlotWaiters {
    tokens: [u32; CONNS_PER_LGR + 1],
    head: usize,
    len: usize,
}

impl SlotWaiters {
    const fn new() -> Self {
        SlotWaiters {
            tokens: [0; CONNS_PER_LGR + 1],
            head: 0,
            len: 0,
        }
    }

    /// Queues `token` unless it waits already. A connection that leaves
    /// the link group is taken out ([`Self::forget`]), so no more than a
    /// link group's connections ever wait and the queue never overflows.
    fn push(&mut self, token: u32) {
        let cap = self.tokens.len();
        let queued = (0..self.len).any(|k| self.tokens.get((self.head + k) % cap) == Some(&token));
        if queued || self.len == cap {
            return;
        }
        if let Some(t) = self.tokens.get_mut((self.head + self.len) % cap) {
            *t = token;
            self.len += 1;
        }
    }

    /// Takes `token` out: a connection that leaves the link group gives
    /// up its place, so that the queue never holds more than the link
    /// group's live connections and a push is never dropped.
    fn forget(&mut self, token: u32) {
        let cap = self.tokens.len();
        let mut kept = 0;
        for k in 0..self.len {
            let Some(&t) = self.tokens.get((self.head + k) % cap) else {
                continue;
            };
            if t == token {
                continue;
            }
            if let Some(dst) = self.tokens.get_mut((self.head + kept) % cap) {
                *dst = t;
            }
            kept += 1;
        }
        self.len = kept;
    }

    fn pop(&mut self) -> Option<u32> {
        if self.len == 0 {
            return None;
        }
        let token = self.tokens.get(self.head).copied();
        self.head = (self.head + 1) % self.tokens.len();
        self.len -= 1;
        token
    }
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

/// The verbs objects of a link that the queue pair does not own.
struct LinkVerbs {
    pd: Arc<Pd>,
    _send_cq: Arc<Cq>,
    _recv_cq: Arc<Cq>,
}

/// A link group with its single link.
#[pin_data]
pub(crate) struct LinkGroup {
    /// Link group id (chosen by the server).
    pub(crate) id: [u8; 4],
    pub(crate) role: Role,
    /// The device, port and GID the link uses.
    pub(crate) dev: SmcrV2Device,
    /// Our first packet sequence number.
    pub(crate) psn: u32,
    /// The peer's end: its identity from the CLC Proposal or Accept, its
    /// queue pair from the Accept or Confirm.
    #[pin]
    peer: SpinLockBh<PeerLink>,
    /// The link number the server gave.
    pub(crate) link_num: AtomicU8,
    state: AtomicU8,
    /// The protection domain and completion queues, until the link group
    /// ends (a device that goes away takes them back with everything else,
    /// even while sockets still hold the link group).
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
    /// Buffers of freed connections (RMB, send buffer), registered on the
    /// link: a new connection takes them without a registration.
    #[pin]
    pub(crate) pool: Mutex<KVec<Option<BufferPair>>>,
    /// What the handshakes told about the peer and the link, for operators.
    #[pin]
    pub(crate) about: SpinLockBh<super::info::LgrAbout>,
    /// The connections on the link group, by token.
    #[pin]
    pub(crate) conns: SpinLockBh<ConnTable>,
    /// When the peer was last heard, the link tested, the group idle.
    pub(crate) activity: Activity,
    /// Server handshakes that chose this link group and have not yet put
    /// their connection in the table ([`Joining`]).
    joining: AtomicUsize,
    /// What the link group took from the `net.smc` sysctls when it was
    /// made, and the connection limit agreed in the CLC handshake.
    pub(crate) params: LgrParams,
    /// The hold on the device, let go last (by `terminate`, after the
    /// queue pair, the buffers and the other verbs objects went; the last
    /// field, so also last when the link group is dropped).
    #[pin]
    hold: Mutex<Option<DeviceHold>>,
}

impl LinkGroup {
    /// Creates a link group towards `peer` on `dev`, with its queue pair in
    /// INIT and every receive posted. The caller must end it with
    /// [`terminate`](Self::terminate).
    pub(crate) fn new(
        role: Role,
        id: [u8; 4],
        dev: SmcrV2Device,
        peer: PeerLink,
        params: LgrParams,
    ) -> Result<Arc<Self>> {
        let ibdev = dev.device.ib();
        // Before the first verbs object: a removal of the device from here
        // on waits for this link group.
        let hold = DeviceHold::new(&dev.device);
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
        };
        let rx_layout = RxLayout::for_device(&ibdev.caps());
        let rx_long = KVec::from_elem(0u8, WR_BUF_V2_SIZE, GFP_KERNEL)?;
        let lgr = Arc::pin_init(
            try_pin_init!(LinkGroup {
                id,
                role,
                dev,
                psn,
                peer <- new_spinlock_bh!(peer, "LinkGroup::peer"),
                link_num: AtomicU8::new(0),
                state: AtomicU8::new(LinkState::Activating as u8),
                verbs <- new_mutex!(Some(verbs), "LinkGroup::verbs"),
                max_inline: AtomicU32::new(0),
                rx_layout,
                rx_long <- new_spinlock_bh!(rx_long, "LinkGroup::rx_long"),
                long_tx_busy: AtomicBool::new(false),
                qp <- new_spinlock_bh!(LinkQp::None, "LinkGroup::qp"),
                tx <- new_spinlock_bh!(
                    TxSlots {
                        busy: 0,
                        mask: slots.tx_mask(),
                        uses: [SlotUse::default(); MAX_SLOTS as usize],
                        waiters: SlotWaiters::new(),
                        answers: QueuedAnswers::new(),
                    },
                    "LinkGroup::tx"
                ),
                tx_wait <- new_condvar!("LinkGroup::tx_wait"),
                llc <- new_spinlock_bh!(
                    LlcInbox {
                        msgs: [None; LLC_INBOX],
                        reg_done: None,
                    },
                    "LinkGroup::llc"
                ),
                llc_wait <- new_condvar!("LinkGroup::llc_wait"),
                reg_lock <- new_mutex!((), "LinkGroup::reg_lock"),
                pool <- new_mutex!(KVec::new(), "LinkGroup::pool"),
                about <- super::info::new_about(),
                hold <- new_mutex!(Some(hold), "LinkGroup::hold"),
                conns <- new_spinlock_bh!(ConnTable::new(), "LinkGroup::conns"),
                activity: Activity::new(),
                joining: AtomicUsize::new(0),
                params,
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
            let made = qp_bufs(lgr.dev.device.ib(), rx_layout, slots.rx).and_then(|bufs| {
                Qp::create(
                    &pd,
                    &send_cq,
                    &recv_cq,
                    caps,
                    lgr.dev.port,
                    lgr.clone(),
                    bufs,
                )
            });
            match made {
                Ok(qp) => break qp,
                Err(e) if e == ENOMEM => slots = slots.halved().ok_or(e)?,
                Err(e) => return Err(e),
            }
        };
        lgr.tx.lock().mask = slots.tx_mask();
        let granted = qp.caps();
        lgr.max_inline
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
        *lgr.qp.lock() = LinkQp::Init(qp);
        if let Err(e) = result {
            lgr.terminate();
            return Err(e);
        }
        smc_dbg!(
            "lgr: {} receive slots, {:?} layout ({} entries a request)",
            slots.rx.min(granted.max_recv_wr),
            rx_layout,
            rx_layout.sges()
        );
        rx_layout.note_created();
        Ok(lgr)
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

    /// What a new connection that may join the link group looks for.
    pub(crate) fn identity(&self) -> LgrIdentity {
        let peer = self.peer();
        LgrIdentity {
            net: self.params.net,
            role: self.role.wire(),
            peer_systemid: peer.systemid,
            peer_gid: peer.gid,
            peer_qpn: peer.qpn,
        }
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

    /// Runs `f` on the queue pair if it is ready to send.
    fn with_rts<R>(&self, f: impl FnOnce(&Qp<Rts, LinkGroup>) -> Result<R>) -> Result<R> {
        if self.state() == LinkState::Down {
            return Err(ENOLINK.into());
        }
        match &*self.qp.lock() {
            LinkQp::Rts(qp) => f(qp),
            _ => Err(ENOLINK.into()),
        }
    }

    /// Copies the first bytes of what receive slot `slot` got (`len`
    /// bytes) into `out` and posts the slot again, unless `hold` says from
    /// those bytes that it must wait. Returns how many bytes were copied
    /// (0 without a queue pair) and whether the slot was held; `Err` when
    /// it could not be posted again.
    fn take_rx(
        &self,
        slot: u32,
        len: usize,
        out: &mut [u8],
        hold: impl Fn(&[u8]) -> bool,
    ) -> Result<(usize, bool)> {
        match &*self.qp.lock() {
            LinkQp::Init(qp) => self.take_rx_on(qp, slot, len, out, hold),
            LinkQp::Rts(qp) => self.take_rx_on(qp, slot, len, out, hold),
            LinkQp::None => Ok((0, false)),
        }
    }

    fn take_rx_on<S: QpState>(
        &self,
        qp: &Qp<S, LinkGroup>,
        slot: u32,
        len: usize,
        out: &mut [u8],
        hold: impl Fn(&[u8]) -> bool,
    ) -> Result<(usize, bool)> {
        let n = self.rx_layout.read(qp, RX_BUFS, slot, len, out);
        let held = out.get(..n).is_some_and(hold);
        if !held {
            self.rx_layout.post(qp, RX_BUFS, slot)?;
        }
        Ok((n, held))
    }

    /// Handles the LLC message of `len` bytes (more than 44) that receive
    /// slot `slot` holds: copies it whole, posts the slot again, and hands
    /// the copy on (softirq, no allocation).
    fn recv_long(&self, slot: u32, len: usize) {
        let mut copy = self.rx_long.lock();
        let n = match self.take_rx(slot, len, copy.as_mut_slice(), |_| false) {
            Ok((n, _)) => n,
            Err(_) => {
                drop(copy);
                self.link_down();
                return;
            }
        };
        let Some(msg) = copy.get(..n).filter(|m| !m.is_empty()) else {
            return;
        };
        if n == len {
            rxbufs::count_long_llc();
        }
        super::llc::received(self, msg);
    }

    /// Takes a free send slot, waiting for one up to 10 seconds; `None`
    /// when the link went down or the time is up.
    pub(crate) fn get_slot(&self) -> Result<u32> {
        let mut left = kernel::time::msecs_to_jiffies(SLOT_WAIT_MS) as _;
        let mut tx = self.tx.lock();
        loop {
            if self.state() == LinkState::Down {
                return Err(ENOLINK.into());
            }
            if let Some(slot) = tx.take() {
                return Ok(slot);
            }
            if left == 0 {
                return Err(ETIMEDOUT.into());
            }
            left = match self.tx_wait.wait_interruptible_timeout(&mut tx, left) {
                kernel::sync::CondVarTimeoutResult::Timeout => 0,
                kernel::sync::CondVarTimeoutResult::Woken { jiffies } => jiffies,
                kernel::sync::CondVarTimeoutResult::Signal { .. } => {
                    return Err(kernel::error::code::ERESTARTSYS)
                }
            };
        }
    }

    /// Takes a free send slot for connection `token`'s data, or queues the
    /// connection for the next slot that completes (`None`), which pushes
    /// it then (any context).
    pub(crate) fn get_slot_or_queue(&self, token: u32) -> Result<Option<u32>> {
        if self.state() == LinkState::Down {
            return Err(ENOLINK.into());
        }
        let mut tx = self.tx.lock();
        let slot = tx.take();
        if slot.is_none() {
            tx.waiters.push(token);
        }
        Ok(slot)
    }

    /// Sends an LLC answer (at most [`LLC_LEN`] bytes) from the receive
    /// path, in any context: on a free slot now, or queued for the next
    /// slot that completes, before any connection's data (a peer's LLC
    /// flow waits for it, and upstream's gives up after two seconds).
    /// `false` when it cannot go: the link is down, or the queue is full.
    pub(crate) fn answer_llc(&self, msg: &[u8]) -> bool {
        if self.state() == LinkState::Down {
            return false;
        }
        let mut tx = self.tx.lock();
        let Some(slot) = tx.take() else {
            return tx.answers.push(msg);
        };
        drop(tx);
        if self.post_msg(slot, msg).is_err() {
            self.put_slot(slot);
            return false;
        }
        true
    }

    /// A free slot and the oldest queued LLC answer, while there are both.
    fn next_answer(&self) -> Option<(u32, [u8; LLC_LEN], u8)> {
        if self.state() == LinkState::Down {
            return None;
        }
        let mut tx = self.tx.lock();
        if tx.answers.len == 0 {
            return None;
        }
        let slot = tx.take()?;
        match tx.answers.pop() {
            Some((msg, len)) => Some((slot, msg, len)),
            None => {
                tx.busy &= !(1u64 << slot);
                None
            }
        }
    }

    /// A connection leaves the link group: it waits for no send slot.
    pub(crate) fn forget_slot_waiter(&self, token: u32) {
        self.tx.lock().waiters.forget(token);
    }

    /// The next connection waiting for a send slot, while one is free.
    fn next_slot_waiter(&self) -> Option<u32> {
        if self.state() == LinkState::Down {
            return None;
        }
        let mut tx = self.tx.lock();
        if tx.free() == 0 {
            return None;
        }
        tx.waiters.pop()
    }

    /// How many connections the link group carries.
    pub(crate) fn conn_count(&self) -> usize {
        self.conns.lock().count()
    }

    /// Takes a place for one more connection if the link group carries
    /// fewer than `max`, counting the places taken and not yet filled:
    /// handshakes that chose it at the same time do not all pass the
    /// limit. The caller holds the registry's lock, so no two take the
    /// last place.
    pub(crate) fn try_join(self: &Arc<Self>, max: usize) -> Option<Joining> {
        if self.conn_count() + self.joining.load(Ordering::Acquire) >= max {
            return None;
        }
        self.joining.fetch_add(1, Ordering::AcqRel);
        Some(Joining(self.clone()))
    }

    /// Takes a free send slot if there is one now (any context).
    pub(crate) fn try_get_slot(&self) -> Result<u32> {
        if self.state() == LinkState::Down {
            return Err(ENOLINK.into());
        }
        self.tx.lock().take().ok_or_else(|| EAGAIN.into())
    }

    /// Gives a slot back without having posted on it.
    pub(crate) fn put_slot(&self, slot: u32) {
        let mut tx = self.tx.lock();
        tx.busy &= !1u64.checked_shl(slot).unwrap_or(0);
        drop(tx);
        self.tx_wait.notify_one();
    }

    /// Notes that `slot` carries connection `token`'s CDC message covering
    /// its stream up to `prod_total`.
    pub(crate) fn slot_for_conn(&self, slot: u32, token: u32, prod_total: u64) {
        if let Some(u) = self.tx.lock().uses.get_mut(slot as usize) {
            *u = SlotUse {
                token,
                prod_total,
                long: false,
            };
        }
    }

    /// Sends a control message (LLC or CDC, at most 48 bytes) on `slot`.
    pub(crate) fn post_msg(&self, slot: u32, msg: &[u8]) -> Result {
        let wr = slot * WR_PER_SLOT + 2;
        let inline = msg.len() as u32 <= self.max_inline.load(Ordering::Relaxed);
        self.with_rts(|qp| {
            if inline {
                qp.post_send_inline(wr, msg, true, true)
            } else {
                let off = slot as usize * 64;
                qp.local_buf(TX_BUFS).ok_or(ENOLINK)?.write(off, msg)?;
                let sge = qp
                    .local_sge(TX_BUFS, off, msg.len() as u32)
                    .ok_or(ENOLINK)?;
                qp.post_send(wr, sge, true, true)
            }
        })
    }

    /// Sends an LLC message longer than a slot's buffer (at most 8 KiB) on
    /// `slot`, from the link's one buffer for long messages: `EBUSY` while
    /// another long message is on its way.
    pub(crate) fn post_long_msg(&self, slot: u32, msg: &[u8]) -> Result {
        if msg.len() > WR_BUF_V2_SIZE {
            return Err(EINVAL.into());
        }
        if self.long_tx_busy.swap(true, Ordering::AcqRel) {
            return Err(EBUSY.into());
        }
        self.mark_long(slot, true);
        let wr = slot * WR_PER_SLOT + 2;
        let posted = self.with_rts(|qp| {
            let buf = qp.local_buf(TX_LONG_BUF).ok_or(ENOLINK)?;
            buf.write(0, msg)?;
            buf.sync_for_device();
            let sge = qp
                .local_sge(TX_LONG_BUF, 0, msg.len() as u32)
                .ok_or(ENOLINK)?;
            qp.post_send(wr, sge, true, true)
        });
        if posted.is_err() {
            self.mark_long(slot, false);
            self.long_tx_busy.store(false, Ordering::Release);
        }
        posted
    }

    /// Notes whether `slot` carries a message from the buffer for long
    /// messages.
    fn mark_long(&self, slot: u32, long: bool) {
        if let Some(u) = self.tx.lock().uses.get_mut(slot as usize) {
            u.long = long;
        }
    }

    /// RDMA-WRITEs `sges` (at most two) to the peer's `remote_addr` under
    /// `rkey`, as part of slot `slot`'s message; unsignalled: the message
    /// posted after it reports both.
    pub(crate) fn post_write(
        &self,
        slot: u32,
        part: u32,
        sge: Sge<'_>,
        remote_addr: u64,
        rkey: u32,
    ) -> Result {
        let wr = slot * WR_PER_SLOT + part.min(1);
        self.with_rts(|qp| qp.post_rdma_write(wr, &[sge], remote_addr, rkey, false))
    }

    /// Writes `data` (at most [`Self::max_inline`] bytes) inline into the
    /// peer's memory: the device copies it while posting, looking up no
    /// memory region (upstream writes short pieces this way too).
    pub(crate) fn post_write_inline(
        &self,
        slot: u32,
        part: u32,
        data: &[u8],
        remote_addr: u64,
        rkey: u32,
    ) -> Result {
        let wr = slot * WR_PER_SLOT + part.min(1);
        self.with_rts(|qp| qp.post_rdma_write_inline(wr, data, remote_addr, rkey))
    }

    /// The most bytes a request may carry inline on this link.
    pub(crate) fn max_inline(&self) -> usize {
        self.max_inline.load(Ordering::Relaxed) as usize
    }

    /// The protection domain, for memory regions of this link group.
    pub(crate) fn pd(&self) -> Result<Arc<Pd>> {
        self.verbs
            .lock()
            .as_ref()
            .map(|v| v.pd.clone())
            .ok_or(ENOLINK.into())
    }

    /// Sends one LLC message, waiting for a slot.
    pub(crate) fn send_llc(&self, msg: &[u8]) -> Result {
        let slot = self.get_slot()?;
        let r = self.post_msg(slot, msg);
        if r.is_err() {
            self.put_slot(slot);
        }
        r
    }

    /// Sends one LLC message, waiting for a slot, then waits up to `ms`
    /// milliseconds until the device reports it sent (the peer acknowledged
    /// it): for the last message before the queue pair goes, which would
    /// flush it otherwise. Process context.
    pub(crate) fn send_llc_wait(&self, msg: &[u8], ms: u32) -> Result {
        let slot = self.get_slot()?;
        if let Err(e) = self.post_msg(slot, msg) {
            self.put_slot(slot);
            return Err(e);
        }
        let bit = 1u64.checked_shl(slot).unwrap_or(0);
        // A completion may wake another waiter instead: look again at least
        // every 10 ms.
        let step = kernel::time::msecs_to_jiffies(10).max(1);
        let mut left = kernel::time::msecs_to_jiffies(ms);
        let mut tx = self.tx.lock();
        while tx.busy & bit != 0 {
            if left == 0 || self.state() == LinkState::Down {
                return Err(ETIMEDOUT.into());
            }
            let wait = left.min(step);
            left -= wait;
            let _ = self.tx_wait.wait_interruptible_timeout(&mut tx, wait as _);
        }
        Ok(())
    }

    /// Registers `mr` on the link and waits for the device to confirm.
    pub(crate) fn register_mr(&self, mr: &Arc<RegisteredBuf>, access: MrAccess) -> Result {
        // One registration at a time on the link: the queue pair takes one,
        // and its completion is reported here.
        let _one = self.reg_lock.lock();
        self.llc.lock().reg_done = None;
        // The region the queue pair held before goes here, outside the lock.
        let previous = self.with_rts(|qp| qp.post_reg_mr(mr, access))?;
        drop(previous);
        let mut left = kernel::time::msecs_to_jiffies(SLOT_WAIT_MS) as _;
        let mut inbox = self.llc.lock();
        loop {
            match inbox.reg_done {
                Some(true) => return Ok(()),
                Some(false) => return Err(ENOLINK.into()),
                None => {}
            }
            if left == 0 || self.state() == LinkState::Down {
                return Err(ETIMEDOUT.into());
            }
            left = match self.llc_wait.wait_interruptible_timeout(&mut inbox, left) {
                kernel::sync::CondVarTimeoutResult::Woken { jiffies } => jiffies,
                _ => 0,
            };
        }
    }

    /// Waits up to `ms` milliseconds for an LLC request that `pick`
    /// accepts, and takes it.
    pub(crate) fn wait_llc(&self, ms: u32, pick: impl Fn(&[u8]) -> bool) -> Option<[u8; LLC_LEN]> {
        let mut left = kernel::time::msecs_to_jiffies(ms) as _;
        let mut inbox = self.llc.lock();
        loop {
            let found = inbox
                .msgs
                .iter_mut()
                .find(|m| m.as_ref().is_some_and(|b| pick(b)));
            if let Some(m) = found {
                return m.take();
            }
            if left == 0 || self.state() == LinkState::Down {
                return None;
            }
            left = match self.llc_wait.wait_interruptible_timeout(&mut inbox, left) {
                kernel::sync::CondVarTimeoutResult::Woken { jiffies } => jiffies,
                _ => 0,
            };
        }
    }

    /// Keeps an LLC request for a waiting handshake.
    pub(crate) fn queue_llc(&self, msg: &[u8; LLC_LEN]) {
        let mut inbox = self.llc.lock();
        if let Some(free) = inbox.msgs.iter_mut().find(|m| m.is_none()) {
            *free = Some(*msg);
        }
        drop(inbox);
        self.llc_wait.notify_all();
    }

    /// Marks the link down: nothing is posted any more, connections are
    /// aborted, waiters wake up. Safe in any context.
    pub(crate) fn link_down(&self) {
        if self.state.swap(LinkState::Down as u8, Ordering::AcqRel) == LinkState::Down as u8 {
            return;
        }
        smc_dbg!("lgr: link down");
        self.conns.lock().for_each(|c| c.abort());
        self.tx_wait.notify_all();
        self.llc_wait.notify_all();
    }

    /// Ends the link group: the link goes down, the queue pair is drained
    /// and destroyed (which sleeps), which lets the link group go.
    pub(crate) fn terminate(&self) {
        self.link_down();
        let qp = core::mem::replace(&mut *self.qp.lock(), LinkQp::None);
        drop(qp);
        // Nothing reaches the buffers any more: every connection leaves the
        // link group and gives its buffers back, now, also those a socket
        // still holds (their calls fail from here on).
        loop {
            let mut out: [Option<Arc<Conn>>; 16] = [const { None }; 16];
            let n = self.conns.lock().take_all(&mut out);
            for c in out.iter().flatten() {
                c.revoke_buffers();
            }
            drop(out);
            if n < 16 {
                break;
            }
        }
        let pooled = core::mem::replace(&mut *self.pool.lock(), KVec::new());
        drop(pooled);
        let verbs = self.verbs.lock().take();
        drop(verbs);
        let hold = self.hold.lock().take();
        drop(hold);
    }

    /// Frees the connections that are closed on both sides: nobody can
    /// write into their buffers any more, which go back to the pool
    /// (process context).
    pub(crate) fn reap(&self) {
        // A link that went down may still have writes on its queue pair
        // that read these buffers: they stay until `terminate` destroyed it.
        if self.state() == LinkState::Down {
            return;
        }
        loop {
            let mut out: [Option<Arc<Conn>>; 16] = [const { None }; 16];
            let n = self.conns.lock().take_finished(&mut out);
            for c in out.iter().flatten() {
                self.forget_slot_waiter(c.token);
                if let Some(pair) = c.take_buffers() {
                    self.pool_buffers(pair);
                }
            }
            drop(out);
            if n < 16 {
                break;
            }
        }
    }

    /// A registered pair of buffers from the pool, zeroed when they were
    /// put there.
    pub(crate) fn take_pooled_buffers(
        &self,
        rmb_size: u32,
        sndbuf_size: u32,
    ) -> Option<BufferPair> {
        if self.state() != LinkState::Active {
            return None;
        }
        let fits = |p: &Option<BufferPair>| {
            p.as_ref().is_some_and(|(r, s)| {
                r.buf().len() == rmb_size as usize && s.buf().len() == sndbuf_size as usize
            })
        };
        self.pool
            .lock()
            .iter_mut()
            .find(|p| fits(p))
            .and_then(Option::take)
    }

    /// Keeps a freed connection's buffers for the next one (dropped when
    /// the link group ends, or without memory for the list), zeroed: no
    /// byte of one connection reaches another. Process context; off the
    /// connect path.
    fn pool_buffers(&self, pair: BufferPair) {
        if self.state() == LinkState::Down {
            return;
        }
        for buf in [&pair.0, &pair.1] {
            buf.buf().clear();
            buf.buf().sync_for_device();
        }
        let mut pool = self.pool.lock();
        if let Some(free) = pool.iter_mut().find(|p| p.is_none()) {
            *free = Some(pair);
        } else if pool.len() < POOL_MAX {
            let _ = pool.push(Some(pair), GFP_KERNEL);
        }
    }
}

impl QpHandler for LinkGroup {
    fn send_done(&self, wr: u32, status: WcStatus) {
        let slot = wr / WR_PER_SLOT;
        if slot >= MAX_SLOTS {
            return;
        }
        let used = {
            let mut tx = self.tx.lock();
            let used = tx.uses.get(slot as usize).copied().unwrap_or_default();
            tx.busy &= !(1u64 << slot);
            used
        };
        self.tx_wait.notify_one();
        if used.long {
            self.long_tx_busy.store(false, Ordering::Release);
        }
        if status != WcStatus::Success {
            smc_dbg!("lgr: send completion error {:?}", status);
            self.link_down();
            return;
        }
        // Queued LLC answers go first: the peer's LLC flow waits for them.
        while let Some((slot, msg, len)) = self.next_answer() {
            let sent = msg
                .get(..len as usize)
                .is_some_and(|m| self.post_msg(slot, m).is_ok());
            if !sent {
                self.put_slot(slot);
                break;
            }
        }
        let conns = self.conns.lock();
        if used.token != 0 {
            conns.with(used.token, |c| c.tx_done(used.prod_total));
        }
        // Free slots go to the connections waiting for one, in order, from
        // here (no work item, no thread to wake). A connection that finds
        // nothing to send leaves the slot to the next; one that takes the
        // last free slot and has more queues again, which ends the loop.
        while let Some(token) = self.next_slot_waiter() {
            conns.with(token, |c| super::tx::push(c));
        }
    }

    fn recv_done(&self, slot: u32, byte_len: u32, status: WcStatus) {
        if status != WcStatus::Success {
            if status != WcStatus::Flushed {
                smc_dbg!("lgr: receive completion error {:?}", status);
            }
            self.link_down();
            return;
        }
        let len = byte_len as usize;
        let mut msg = [0u8; LLC_LEN];
        // A CDC message and an SMC-Rv1 LLC message are 44 bytes: the slot
        // is posted again as soon as they are copied. A longer LLC message
        // keeps its slot until it was copied whole.
        let is_long = |head: &[u8]| len > LLC_LEN && head.first() != Some(&CDC_MSG_TYPE);
        let (n, held) = match self.take_rx(slot, len, &mut msg, is_long) {
            Ok(taken) => taken,
            Err(_) => {
                self.link_down();
                return;
            }
        };
        if n == 0 {
            return;
        }
        self.activity.heard();
        if held {
            self.recv_long(slot, len);
            return;
        }
        let Some(msg) = msg.get(..n) else { return };
        if msg.first() == Some(&CDC_MSG_TYPE) {
            super::cdc::received(self, msg);
        } else {
            super::llc::received(self, msg);
        }
    }

    fn reg_done(&self, status: WcStatus) {
        self.llc.lock().reg_done = Some(status == WcStatus::Success);
        self.llc_wait.notify_all();
    }

    fn async_event(&self, ev: QpEvent) {
        smc_dbg!("lgr: queue pair event {:?}", ev);
        if matches!(ev, QpEvent::Fatal | QpEvent::AccessError) {
            self.link_down();
        }
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
