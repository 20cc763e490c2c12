// SPDX-License-Identifier: GPL-2.0

//! A link group: the connections to one peer, over its links (one or two,
//! see [`linkset`](super::linkset) and [`link`](super::link)), with the
//! pool of their buffers, the peer's keys and the LLC flows; and what the
//! group does with what its links report ([`LinkOwner`]): CDC messages go
//! to their connection, LLC messages to the link rules or the flows, a
//! completed send slot to the connections waiting for one, a link that
//! went down to a failover.
//!
//! Lifetime: each link holds an `Arc` of its link group (its owner), the
//! link group holds the links and, for its work item, itself. The cycles
//! end in [`LinkGroup::terminate`], which every owner of a link group
//! calls once.

use super::bufs::LgrBuf;
use super::cdc;
use super::conn::Conn;
use super::conntable::ConnTable;
use super::link::{Link, LinkOwner, LinkState, PeerLink, Role};
use super::flows::{FlowNext, Flows};
use super::llc;
use super::peerkeys::PeerKeys;
use super::settle;
use crate::ib::SmcrV2Device;
use crate::sys::sync::{new_spinlock_bh, SpinLockBh};
use crate::sysctl::LgrParams;
use super::linkset::LinkSet;
use crate::wire::lgr_links::{LgrType, LINKS_MAX};
use crate::wire::lgr_match::LgrIdentity;
use core::sync::atomic::{AtomicU32, AtomicU64, AtomicUsize, Ordering};
use kernel::prelude::*;
use kernel::sync::{new_mutex, Arc, Mutex};
use kernel::workqueue::{new_work, Work};

/// A connection's RMB and send buffer.
pub(crate) type BufferPair = (Arc<LgrBuf>, Arc<LgrBuf>);
/// Buffer pairs a link group keeps for later connections.
const POOL_MAX: usize = 256;
/// Buffer pairs of failed handshakes a link group keeps registered.
const RETIRED_MAX: usize = 16;

/// Buffers of handshakes that failed after the peer was told the RMB's
/// rkey: they stay registered and are never reused. A peer that took the
/// connection for made and writes into the RMB writes into memory no
/// connection reads, and the link stays up (a region deregistered under
/// its writes would fail them with a remote access error, which takes the
/// link and every connection on it down). The oldest is let go when
/// [`RETIRED_MAX`] more came after it.
struct Retired {
    pairs: [Option<BufferPair>; RETIRED_MAX],
    next: usize,
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

/// A link group with its links.
#[pin_data]
pub(crate) struct LinkGroup {
    /// Link group id (chosen by the server).
    pub(crate) id: [u8; 4],
    /// Its links.
    #[pin]
    links: SpinLockBh<LinkSet>,
    /// Buffers of freed connections (RMB, send buffer), registered on the
    /// link: a new connection takes them without a registration.
    #[pin]
    pub(crate) pool: Mutex<KVec<Option<BufferPair>>>,
    /// What the handshakes told about the peer and the link, for operators.
    #[pin]
    pub(crate) about: SpinLockBh<super::about::LgrAbout>,
    /// The connections on the link group, by token.
    #[pin]
    pub(crate) conns: SpinLockBh<ConnTable>,
    /// Server handshakes that chose this link group and have not yet put
    /// their connection in the table ([`Joining`]).
    joining: AtomicUsize,
    #[pin]
    retired: Mutex<Retired>,
    /// Answers to our CLC Accepts the link group got (moves on with each):
    /// see [`answers`](Self::answers).
    answers: AtomicU32,
    /// The peer's RMB keys, per link.
    #[pin]
    pub(crate) peer_keys: PeerKeys,
    /// The LLC flows (with more than one link possible).
    #[pin]
    pub(crate) flows: Flows,
    /// Serialises what changes the links against what makes or maps
    /// buffers (upstream's `llc_conf_mutex`): adding or deleting a link,
    /// a new connection's buffers, the end of the group.
    #[pin]
    pub(crate) conf: Mutex<()>,
    /// Runs the local LLC flows and failovers, in process context.
    #[pin]
    pub(crate) llc_work: Work<LinkGroup>,
    /// What the work item has to do besides a started flow.
    pub(crate) pending: AtomicU32,
    /// When a server short of a link tries to add one again (jiffies, 0:
    /// not short), and the wait before the try after it, in milliseconds
    /// (see [`keepalive`](super::keepalive)).
    pub(crate) add_due: AtomicU64,
    pub(crate) add_backoff_ms: AtomicU32,
    /// The group itself while it lives, for its work item (let go in
    /// [`terminate`](Self::terminate)).
    #[pin]
    me: SpinLockBh<Option<Arc<LinkGroup>>>,
}

/// [`LinkGroup::pending`]: this side adds a link (server, after the first
/// contact or when a device came back).
pub(crate) const PENDING_ADD_LINK: u32 = 1;
/// [`LinkGroup::pending`]: a link went down; its connections move.
pub(crate) const PENDING_FAILOVER: u32 = 2;

impl LinkGroup {
    /// Creates a link group towards `peer` on `dev`, with its link's queue
    /// pair in INIT and every receive posted. The caller must end it with
    /// [`terminate`](Self::terminate).
    pub(crate) fn new(
        role: Role,
        id: [u8; 4],
        dev: SmcrV2Device,
        peer: PeerLink,
        params: LgrParams,
    ) -> Result<Arc<Self>> {
        let link = Link::new(role, 0, dev, peer, params)?;
        let held = link.clone();
        let keys = PeerKeys::new();
        let flows = Flows::new(role.wire());
        let (keys, flows) = match (keys, flows) {
            (Ok(k), Ok(f)) => (k, f),
            (Err(e), _) | (_, Err(e)) => {
                link.shut_down();
                link.release();
                return Err(e);
            }
        };
        let made = Arc::pin_init(
            try_pin_init!(LinkGroup {
                id,
                links <- new_spinlock_bh!(LinkSet::new(held), "LinkGroup::links"),
                pool <- new_mutex!(KVec::new(), "LinkGroup::pool"),
                about <- super::about::new_about(),
                conns <- new_spinlock_bh!(ConnTable::new(), "LinkGroup::conns"),
                joining: AtomicUsize::new(0),
                retired <- new_mutex!(
                    Retired {
                        pairs: [const { None }; RETIRED_MAX],
                        next: 0,
                    },
                    "LinkGroup::retired"
                ),
                answers: AtomicU32::new(0),
                peer_keys <- keys,
                flows <- flows,
                conf <- new_mutex!((), "LinkGroup::conf"),
                llc_work <- new_work!("LinkGroup::llc_work"),
                pending: AtomicU32::new(0),
                add_due: AtomicU64::new(0),
                add_backoff_ms: AtomicU32::new(0),
                me <- new_spinlock_bh!(None, "LinkGroup::me"),
            }? Error),
            GFP_KERNEL,
        );
        match made {
            Ok(lgr) => {
                link.set_owner(lgr.clone());
                *lgr.me.lock() = Some(lgr.clone());
                Ok(lgr)
            }
            Err(e) => {
                link.shut_down();
                link.release();
                Err(e)
            }
        }
    }

    /// The link that link group messages go on (see [`LinkSet`]).
    pub(crate) fn link(&self) -> Arc<Link> {
        self.links.lock().main().clone()
    }

    /// Every link of the group, by slot.
    pub(crate) fn links(&self) -> [Option<Arc<Link>>; LINKS_MAX] {
        self.links.lock().all().clone()
    }

    /// Runs `f` on the group's links (under their lock: no sleeping).
    pub(crate) fn with_links<R>(&self, f: impl FnOnce(&mut LinkSet) -> R) -> R {
        f(&mut self.links.lock())
    }

    /// The group's type.
    pub(crate) fn kind(&self) -> LgrType {
        self.links.lock().kind
    }

    /// Sets the group's type (a link was confirmed, added or lost).
    pub(crate) fn set_kind(&self, kind: LgrType) {
        self.links.lock().kind = kind;
    }

    /// A new connection with this identity may join the group: one of its
    /// active links leads to that peer.
    pub(crate) fn admits(&self, want: &LgrIdentity) -> bool {
        self.links
            .lock()
            .all()
            .iter()
            .flatten()
            .filter(|l| l.state() == LinkState::Active)
            .any(|l| identity_of(l).admits(want))
    }

    /// How many connections send on `link`.
    pub(crate) fn conn_count_on(&self, link: &Link) -> usize {
        let mut n = 0;
        self.conns.lock().for_each(|c| {
            if c.link_idx() == link.idx {
                n += 1;
            }
        });
        n
    }

    /// What a new connection that may join the link group looks for (by
    /// its main link).
    pub(crate) fn identity(&self) -> LgrIdentity {
        identity_of(&self.link())
    }

    /// How many connections the link group carries.
    pub(crate) fn conn_count(&self) -> usize {
        self.conns.lock().count()
    }

    /// Takes a place for one more connection if the link group carries
    /// fewer than `max`, counting the places taken and not yet filled:
    /// handshakes that chose it at the same time do not all pass the
    /// limit. The caller holds the registry's lock, so no two take the
    /// last place. The retired RMBs count too: they hold rows of the
    /// peer's key table (as many as a group may have connections), which
    /// a new RMB's CONFIRM RKEY would find full. The pooled ones hold
    /// rows as well, but a connection takes one of them, or has one let
    /// go for its new RMB ([`take_misfit`](Self::take_misfit)), when the
    /// pool has any: the rows never outnumber the places.
    pub(crate) fn try_join(self: &Arc<Self>, max: usize) -> Option<Joining> {
        let kept = self.retired.lock().pairs.iter().flatten().count();
        if self.conn_count() + self.joining.load(Ordering::Acquire) + kept >= max {
            return None;
        }
        self.joining.fetch_add(1, Ordering::AcqRel);
        Some(Joining(self.clone()))
    }

    /// Ends the link group: the link goes down, its queue pair is drained
    /// and destroyed (which sleeps), the connections give their buffers
    /// back, then the link its verbs objects. Process context.
    pub(crate) fn terminate(&self) {
        // No flow starts any more; one that runs gives up its waits and
        // ends before the links go.
        self.flows.close();
        let conf = self.conf.lock();
        let links = self.links();
        for l in links.iter().flatten() {
            l.shut_down();
        }
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
        let retired = core::mem::replace(
            &mut self.retired.lock().pairs,
            [const { None }; RETIRED_MAX],
        );
        drop(retired);
        for l in links.iter().flatten() {
            l.release();
        }
        drop(conf);
        let me = self.me.lock().take();
        drop(me);
    }

    /// The most links the group may have (agreed in the first contact).
    pub(crate) fn max_links(&self) -> u8 {
        self.about.lock().max_links
    }

    /// Whether any link of the group still lives (is not down).
    pub(crate) fn alive(&self) -> bool {
        self.links
            .lock()
            .all()
            .iter()
            .flatten()
            .any(|l| l.state() != LinkState::Down)
    }

    /// Ends the local flow this side started (a CONFIRM or DELETE RKEY,
    /// the server's DELETE LINK, the client's REQ ADD LINK), and runs the
    /// work item for the peer's request that waited for it, or for a link
    /// to add that found it running (see `lgrwork`).
    pub(crate) fn stop_flow(&self) {
        if self.flows.stop() == FlowNext::RunFlow || self.pending.load(Ordering::Acquire) != 0 {
            self.run_work();
        }
    }

    /// Queues the group's work item (flows, failover), unless the group
    /// ended.
    pub(crate) fn run_work(&self) {
        let me = self.me.lock().clone();
        if let Some(me) = me {
            crate::sys::work::queue_arc(me);
        }
    }

    /// Keeps the buffers of a connection whose handshake failed after the
    /// peer got the RMB's rkey (see [`Retired`]). Process context.
    /// Returns the oldest pair it pushed out, for the caller to let go
    /// ([`rkeys::retire`](super::rkeys::retire)).
    #[must_use]
    pub(crate) fn retire_buffers(&self, pair: BufferPair) -> Option<BufferPair> {
        // A link that is down takes no writes: `terminate` lets them go.
        if !self.alive() {
            return None;
        }
        let mut r = self.retired.lock();
        let at = r.next % RETIRED_MAX;
        r.next = at + 1;
        r.pairs.get_mut(at).and_then(|p| p.replace(pair))
    }

    /// Counts an answer (Confirm or Decline) to one of our Accepts.
    pub(crate) fn answered(&self) {
        self.answers.fetch_add(1, Ordering::AcqRel);
    }

    /// How many answers to our Accepts the link group got so far. A client
    /// answers one Accept at a time (upstream's holds a lock from reading
    /// the Accept to sending its Confirm, the link's memory registration
    /// included), so Accepts sent together are answered one after the
    /// other: a server waits for its answer while others come.
    pub(crate) fn answers(&self) -> u32 {
        self.answers.load(Ordering::Acquire)
    }

    /// Frees the connections that are closed on both sides: nobody can
    /// write into their buffers any more, which go back to the pool
    /// (process context).
    pub(crate) fn reap(&self) {
        // A link that went down may still have writes on its queue pair
        // that read these buffers: they stay until `terminate` destroyed it.
        if !self.alive() {
            return;
        }
        loop {
            let mut out: [Option<Arc<Conn>>; 16] = [const { None }; 16];
            let n = self.conns.lock().take_finished(&mut out);
            for c in out.iter().flatten() {
                for l in self.links().iter().flatten() {
                    l.forget_slot_waiter(c.token);
                }
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

    /// Calls `f` on every buffer the group keeps for later or retired
    /// (not those of its connections), and whether it is an RMB. Process
    /// context.
    pub(crate) fn for_each_kept_buffer(&self, mut f: impl FnMut(&Arc<LgrBuf>, bool) -> Result) -> Result {
        for (r, s) in self.pool.lock().iter().flatten() {
            f(r, true)?;
            f(s, false)?;
        }
        for (r, s) in self.retired.lock().pairs.iter().flatten() {
            f(r, true)?;
            f(s, false)?;
        }
        Ok(())
    }

    /// A registered pair of buffers from the pool, zeroed when they were
    /// put there.
    pub(crate) fn take_pooled_buffers(
        &self,
        rmb_size: u32,
        sndbuf_size: u32,
    ) -> Option<BufferPair> {
        if self.link().state() != LinkState::Active {
            return None;
        }
        let fits = |p: &Option<BufferPair>| {
            p.as_ref().is_some_and(|(r, s)| {
                r.len() == rmb_size as usize && s.len() == sndbuf_size as usize
            })
        };
        self.pool
            .lock()
            .iter_mut()
            .find(|p| fits(p))
            .and_then(Option::take)
    }

    /// A pooled pair of another size than a new connection's, for the
    /// connection to let go ([`rkeys::let_go`](super::rkeys::let_go))
    /// before it makes its own, after [`take_pooled_buffers`] found none
    /// that fits: the pool keeps no buffers nobody asks for, and the
    /// peer's key table no more rows than the group has places.
    ///
    /// [`take_pooled_buffers`]: Self::take_pooled_buffers
    pub(crate) fn take_misfit(&self) -> Option<BufferPair> {
        if self.link().state() != LinkState::Active {
            return None;
        }
        self.pool.lock().iter_mut().find_map(Option::take)
    }

    /// Keeps a freed connection's buffers for the next one (dropped when
    /// the link group ends, or without memory for the list), zeroed: no
    /// byte of one connection reaches another. Process context; off the
    /// connect path.
    fn pool_buffers(&self, pair: BufferPair) {
        if !self.alive() {
            return;
        }
        for buf in [&pair.0, &pair.1] {
            buf.clear();
            buf.sync_for_device();
        }
        let mut pool = self.pool.lock();
        if let Some(free) = pool.iter_mut().find(|p| p.is_none()) {
            *free = Some(pair);
        } else if pool.len() < POOL_MAX {
            let _ = pool.push(Some(pair), GFP_KERNEL);
        }
    }
}

/// What a connection that may run on `link` looks for.
fn identity_of(link: &Link) -> LgrIdentity {
    let peer = link.peer();
    LgrIdentity {
        net: link.params.net,
        role: link.role.wire(),
        peer_systemid: peer.systemid,
        peer_gid: peer.gid,
        peer_qpn: peer.qpn,
    }
}

impl LinkOwner for LinkGroup {
    fn cdc_received(&self, msg: &[u8]) {
        cdc::received(&self.conns, msg, settle::after_cdc);
    }

    fn llc_received(&self, link: &Link, msg: &[u8]) {
        // A group that may get more links runs upstream's flows; one that
        // keeps one link answers as such a group does, but for the keys
        // of the peer's RMBs and the answers to its own RKEY flows.
        if self.max_links() <= 1 && !self.flows.takes_one_link(msg) {
            llc::received(link, msg);
            return;
        }
        let links = self.links();
        if self.flows.receive(link, &links, &self.peer_keys, msg) == FlowNext::RunFlow {
            self.run_work();
        }
    }

    fn slot_completed(&self, link: &Link, token: u32, prod_total: u64) {
        let conns = self.conns.lock();
        // A completion from a link the connection left is ignored: its
        // bytes are being written again on the new one.
        let mut done = None;
        if token != 0 {
            conns.with(token, |c| {
                if c.link_idx() == link.idx {
                    done = Some(super::tx::done(c, prod_total));
                }
            });
        }
        // Free slots go to the connections waiting for one, in order, from
        // here (no work item, no thread to wake), before the connection
        // whose message completed sends more: with many connections busy,
        // one that waits (a closing one's last bytes and flags) would
        // otherwise wait until the others are done. A connection that
        // finds nothing to send leaves the slot to the next; one that takes
        // the last free slot and has more queues again, which ends the loop.
        while let Some(token) = link.next_slot_waiter() {
            conns.with(token, |c| super::tx::push(c));
        }
        if let Some(t) = done {
            conns.with(token, |c| settle::after_tx(c, t));
        }
    }

    fn link_down(&self, link: &Link) {
        // Another link carries on: the connections move there (process
        // context, the work item), and lost nothing.
        let survivor = self.with_links(|s| {
            s.promote();
            s.active().any(|l| !core::ptr::eq(&**l, link))
        });
        if survivor {
            self.pending.fetch_or(PENDING_FAILOVER, Ordering::AcqRel);
            self.run_work();
            return;
        }
        self.flows.close();
        self.conns.lock().for_each(settle::abort);
    }

    fn conn_finished(&self) {
        self.reap();
    }
}
