// SPDX-License-Identifier: GPL-2.0

//! The link groups of this host: kept so that later connections to the
//! same peer reuse them (as the server decides: first contact or not),
//! found by the handshakes, looked after by the keeper, listed for
//! operators, and ended when their device goes or the module unloads.
//!
//! Locks: `lgrs` (a mutex, process context) is taken inside the setups'
//! lock, never while waiting on a link; no handshake holds a lock of the
//! registry across a wait for its peer (see [`setups`] and
//! `Documentation/design.rst`).

use super::keepalive::{self, Verdict};
use super::lgr::{Joining, LinkGroup, PENDING_ADD_LINK};
use super::link::{LinkState, Role};
use super::llc;
use super::setups::{Setup, Setups, CLIENT_PATIENCE_MS, SERVER_PATIENCE_MS};
use crate::ib::{DeviceUsers, SmcIbDevice};
use crate::sys::print::smc_dbg;
use crate::sys::sync::RcuPointer;
use crate::sys::ticker::Ticker;
use crate::wire::clc::SmcrAcceptConfirm;
use crate::wire::lgr_match::LgrIdentity;
use kernel::prelude::*;
use kernel::sync::{new_mutex, Arc, Mutex};

/// The link groups of this host.
#[pin_data]
pub(crate) struct LgrRegistry {
    #[pin]
    lgrs: Mutex<KVec<Option<Arc<LinkGroup>>>>,
    /// The link groups handshakes are making now (see [`setups`]).
    setups: Arc<Setups>,
    /// Runs [`keep`](Self::keep) while there are link groups.
    #[pin]
    keeper: Ticker,
}

impl LgrRegistry {
    pub(crate) fn new(setups: Arc<Setups>) -> impl PinInit<Self> {
        pin_init!(LgrRegistry {
            lgrs <- new_mutex!(KVec::new(), "LgrRegistry::lgrs"),
            setups,
            keeper <- Ticker::new(keep_link_groups, keepalive::TICK_MS),
        })
    }

    /// The link group a server's Accept names for a client connection of
    /// namespace `net`: found in the registry, after waiting while our own
    /// first contact with that server still brings it up.
    pub(crate) fn client_join(&self, net: u64, a: &SmcrAcceptConfirm) -> Option<Arc<LinkGroup>> {
        let key = client_key(net, a);
        let find = || {
            self.find(&key, |l| {
                l.link().activity.reused();
                Some(l.clone())
            })
        };
        Setups::find_waiting(&self.setups, &key, CLIENT_PATIENCE_MS, find)
    }

    /// Announces the link group a client makes for a server's first
    /// contact, until it is in the registry (see [`client_join`]).
    ///
    /// [`client_join`]: Self::client_join
    pub(crate) fn client_setup(&self, net: u64, a: &SmcrAcceptConfirm) -> Result<Setup> {
        Setups::begin(&self.setups, client_key(net, a))
    }

    /// The link group for a proposal of namespace `net` from the client
    /// with `systemid` whose RoCE port is `gid`: a live one with room, a
    /// place in it taken (held until the connection is in its table), or
    /// else (`Err`) the setup of a new one. Waits a little while another handshake
    /// makes one to the same client (see [`setups`]).
    pub(crate) fn server_choice(
        &self,
        net: u64,
        systemid: &[u8; 8],
        gid: &[u8; 16],
    ) -> Result<core::result::Result<Joining, Setup>> {
        let key = LgrIdentity {
            net,
            role: Role::Server.wire(),
            peer_systemid: *systemid,
            peer_gid: *gid,
            peer_qpn: 0,
        };
        let find = || {
            let joining = self.find(&key, |l| l.try_join(usize::from(l.link().params.max_conns)))?;
            joining.lgr().link().activity.reused();
            Some(joining)
        };
        Setups::find_or_begin(&self.setups, key, SERVER_PATIENCE_MS, find)
    }

    /// The first live link group that admits `want` and for which `take`
    /// gives something.
    fn find<R>(&self, want: &LgrIdentity, take: impl Fn(&Arc<LinkGroup>) -> Option<R>) -> Option<R> {
        let lgrs = self.lgrs.lock();
        lgrs.iter().flatten().find_map(|l| {
            if !l.admits(want) {
                return None;
            }
            take(l)
        })
    }

    /// Tests the links of `lgr` and of every other live link group this
    /// side serves to the same client in the same namespace, now (see
    /// [`LinkGroup::probe`]): the client declined an Accept naming `lgr`
    /// as unknown, and a client that lost one (its device went) has most
    /// likely lost them all.
    pub(crate) fn probe_peer(&self, lgr: &LinkGroup) {
        let want = lgr.identity();
        let mut same = KVec::new();
        {
            let lgrs = self.lgrs.lock();
            for l in lgrs.iter().flatten() {
                if l.link().state() == LinkState::Active
                    && l.identity().admits(&want)
                    && same.push(l.clone(), GFP_KERNEL).is_err()
                {
                    break;
                }
            }
        }
        for l in same.iter() {
            l.probe();
        }
    }

    pub(crate) fn add(&self, lgr: Arc<LinkGroup>) -> Result {
        let mut lgrs = self.lgrs.lock();
        // Link groups that went down leave room.
        let mut dead = KVec::new();
        for slot in lgrs.iter_mut() {
            if slot.as_ref().is_some_and(|l| !l.alive()) {
                if let Some(l) = slot.take() {
                    dead.push(l, GFP_KERNEL)?;
                }
            }
        }
        // No fixed size: the table grows when every slot is taken.
        match lgrs.iter_mut().find(|s| s.is_none()) {
            Some(free) => *free = Some(lgr),
            None => lgrs.push(Some(lgr), GFP_KERNEL)?,
        }
        drop(lgrs);
        self.keeper.kick();
        for l in dead.iter() {
            l.terminate();
        }
        Ok(())
    }

    /// The live link groups, for operators' listings.
    pub(crate) fn link_groups(&self) -> Result<KVec<Arc<LinkGroup>>> {
        let lgrs = self.lgrs.lock();
        let mut out = KVec::with_capacity(lgrs.len(), GFP_KERNEL)?;
        for l in lgrs.iter().flatten() {
            if l.alive() {
                out.push(l.clone(), GFP_KERNEL)?;
            }
        }
        Ok(out)
    }

    /// Ends the link groups on `dev` (it goes away): their queue pairs and
    /// buffers go now; the peers see the link fail.
    fn end_on_device(&self, dev: &SmcIbDevice) {
        let on_dev = |l: &LinkGroup| {
            l.links()
                .iter()
                .flatten()
                .any(|k| core::ptr::eq(&*k.dev.device, dev))
        };
        // A group with a link elsewhere loses only the links on `dev`:
        // their connections move, and the links are cleared now.
        let mut moved = KVec::new();
        {
            let lgrs = self.lgrs.lock();
            for l in lgrs.iter().flatten() {
                let elsewhere = l.links().iter().flatten().any(|k| {
                    !core::ptr::eq(&*k.dev.device, dev) && k.state() == LinkState::Active
                });
                if on_dev(l) && elsewhere {
                    let _ = moved.push(l.clone(), GFP_KERNEL);
                }
            }
        }
        for l in moved.iter() {
            for k in l.links().iter().flatten() {
                if core::ptr::eq(&*k.dev.device, dev) {
                    k.link_down();
                }
            }
            super::failover::run(l);
        }
        let mut ended = KVec::new();
        {
            let mut lgrs = self.lgrs.lock();
            for slot in lgrs.iter_mut() {
                if slot.as_ref().is_some_and(|l| on_dev(l)) {
                    if let Some(l) = slot.take() {
                        // Without memory for the list, end it right here.
                        if let Err(kernel::alloc::AllocError) = ended.push(l.clone(), GFP_KERNEL) {
                            l.terminate();
                        }
                    }
                }
            }
        }
        for l in ended.iter() {
            smc_dbg!("smcr: device removed, link group ends");
            l.terminate();
        }
    }

    /// Looks after every link group (TEST LINK, linger, links gone down);
    /// runs again while there are link groups.
    pub(crate) fn keep(&self) {
        let all = {
            let lgrs = self.lgrs.lock();
            let mut all = KVec::with_capacity(lgrs.len(), GFP_KERNEL);
            if let Ok(all) = all.as_mut() {
                for l in lgrs.iter().flatten() {
                    // Within the capacity reserved above: never fails.
                    let _ = all.push(l.clone(), GFP_ATOMIC);
                }
            }
            all
        };
        // Without memory this time, the next tick looks after them.
        let Ok(all) = all else {
            self.keeper.kick();
            return;
        };
        for lgr in all.iter() {
            if lgr.keep() == Verdict::End {
                let mut lgrs = self.lgrs.lock();
                let slot = lgrs
                    .iter_mut()
                    .find(|s| s.as_ref().is_some_and(|l| Arc::ptr_eq(l, lgr)));
                let ours = slot.and_then(Option::take).is_some();
                drop(lgrs);
                // Whoever took it out of the registry ends it.
                if ours {
                    lgr.terminate();
                }
            }
        }
        drop(all);
        if self.lgrs.lock().iter().any(Option::is_some) {
            self.keeper.kick();
        }
    }

    /// Ends every link group (module unload): the peers are told.
    pub(crate) fn shutdown(&self) {
        self.keeper.stop();
        let mut lgrs = self.lgrs.lock();
        for slot in lgrs.iter_mut() {
            if let Some(l) = slot.take() {
                if l.link().state() == LinkState::Active {
                    llc::send_delete_all(&l.link());
                }
                l.terminate();
            }
        }
    }
}

/// What a client connection of namespace `net` looks for after the
/// server's Accept `a`: the server's link group that the Accept names.
fn client_key(net: u64, a: &SmcrAcceptConfirm) -> LgrIdentity {
    LgrIdentity {
        net,
        role: Role::Client.wire(),
        peer_systemid: a.local.peer_id,
        peer_gid: a.local.gid,
        peer_qpn: a.qpn,
    }
}

impl DeviceUsers for LgrRegistry {
    fn device_removed(&self, dev: &SmcIbDevice) {
        self.end_on_device(dev);
    }

    fn port_up(&self, _dev: &SmcIbDevice, _port: u32) {
        let Ok(lgrs) = self.link_groups() else { return };
        for l in lgrs.iter() {
            if l.max_links() > 1 && l.with_links(|s| s.active().count()) < 2 {
                // A server's retries start over (see `keepalive`).
                l.add_due.store(0, core::sync::atomic::Ordering::Relaxed);
                l.pending
                    .fetch_or(PENDING_ADD_LINK, core::sync::atomic::Ordering::AcqRel);
                l.run_work();
            }
        }
    }

    fn port_down(&self, dev: &SmcIbDevice, port: u32) {
        let Ok(lgrs) = self.link_groups() else { return };
        for l in lgrs.iter() {
            for k in l.links().iter().flatten() {
                if core::ptr::eq(&*k.dev.device, dev) && k.dev.port == port {
                    smc_dbg!("smcr: port {} down, its link goes down", port);
                    k.link_down();
                }
            }
        }
    }
}

/// The link groups of this host, published while the module is loaded.
static REGISTRY: RcuPointer<Arc<LgrRegistry>> = RcuPointer::new();

/// Publishes the link group registry (module load).
fn start_smcr() -> Result {
    let setups = Arc::pin_init(Setups::new(), GFP_KERNEL)?;
    let reg = Arc::pin_init(LgrRegistry::new(setups), GFP_KERNEL)?;
    crate::ib::set_device_users(Some(reg.clone()))?;
    REGISTRY.replace(Some(KBox::new(reg, GFP_KERNEL)?));
    Ok(())
}

/// The link group registry's lifetime in the module: published when made,
/// every link group ended when dropped.
pub(crate) struct SmcrLinkGroups(());

impl SmcrLinkGroups {
    pub(crate) fn start() -> Result<Self> {
        start_smcr()?;
        Ok(SmcrLinkGroups(()))
    }
}

impl Drop for SmcrLinkGroups {
    fn drop(&mut self) {
        stop_smcr();
    }
}

/// Ends every link group (module unload, after the last socket).
fn stop_smcr() {
    if let Some(reg) = registry() {
        let _ = crate::ib::set_device_users(None);
        REGISTRY.replace(None);
        reg.shutdown();
    }
}

/// The link groups' keeper (see [`LgrRegistry::keep`]).
pub(crate) fn keep_link_groups() {
    if let Some(reg) = registry() {
        reg.keep();
    }
}

/// The link group registry, while SMC-R runs.
pub(crate) fn registry() -> Option<Arc<LgrRegistry>> {
    REGISTRY.read(|r| r.cloned())
}
