// SPDX-License-Identifier: GPL-2.0

//! The loopback ISM device: SMC-D between two sockets of this host, through
//! memory (upstream's `loopback-ism`, Linux 6.9 and later). It has a random
//! 128-bit GID and the reserved CHID 0xFFFF; a peer whose proposal offers
//! this GID is on this host. It registers DMBs under random tokens, lets the
//! peer attach them by token, and passes CDC signals to their owners.
//!
//! The device is published while the module is loaded
//! ([`LoopbackDevice`]); a DMB lives as long as its holders (see
//! [`super::dmb`]), whatever the table here says.

use super::dmb::{Dmb, DmbPool};
use crate::sys::errno::{ENOENT, ENOSPC};
use crate::sys::random;
use crate::sys::sync::RcuPointer;
use crate::wire::clc::{SmcdGid, LOOPBACK_CHID};
use kernel::prelude::*;
use kernel::rbtree::RBTree;
use kernel::sync::{new_mutex, Arc, Mutex};

/// DMBs registered at most (upstream's `SMC_LO_MAX_DMBS`).
pub(crate) const MAX_DMBS: usize = 5000;

/// A registered DMB, and the DMB of the peer that attached it: until the
/// DMB leaves the table, that peer is who must hear of an abort of its
/// owner (which may not know the peer's DMB yet).
struct Entry {
    dmb: Arc<Dmb>,
    attacher: Option<Arc<Dmb>>,
}

/// The registered DMBs by token.
struct Table {
    dmbs: RBTree<u64, Entry>,
    count: usize,
}

/// The loopback ISM device.
#[pin_data]
pub(crate) struct Loopback {
    /// Its GID (random at load).
    pub(crate) gid: SmcdGid,
    /// Its CHID.
    pub(crate) chid: u16,
    /// Registered DMBs; process context only (registration allocates).
    #[pin]
    table: Mutex<Table>,
    /// The memory of DMBs that ended.
    pool: Arc<DmbPool>,
}

impl Loopback {
    fn new() -> Result<Arc<Loopback>> {
        let mut raw = [0u8; 16];
        while raw.iter().all(|&b| b == 0) {
            random::fill(&mut raw);
        }
        let (hi, lo) = raw.split_at(8);
        let gid = SmcdGid {
            gid: u64::from_ne_bytes(hi.try_into().map_err(|_| EINVAL)?),
            gid_ext: u64::from_ne_bytes(lo.try_into().map_err(|_| EINVAL)?),
        };
        Arc::pin_init(
            try_pin_init!(Loopback {
                gid,
                chid: LOOPBACK_CHID,
                table <- new_mutex!(
                    Table {
                        dmbs: RBTree::new(),
                        count: 0,
                    },
                    "Loopback::table"
                ),
                pool: DmbPool::new()?,
            }? Error),
            GFP_KERNEL,
        )
    }

    /// Whether `gid` is this device's: the peer is on this host.
    pub(crate) fn is_local(&self, gid: &SmcdGid) -> bool {
        *gid == self.gid
    }

    /// Registers a new DMB of `size` bytes under a new token. May sleep.
    pub(crate) fn register(&self, size: usize) -> Result<Arc<Dmb>> {
        let mut t = self.table.lock();
        if t.count >= MAX_DMBS {
            return Err(ENOSPC.into());
        }
        let token = loop {
            let mut raw = [0u8; 8];
            random::fill(&mut raw);
            let token = u64::from_ne_bytes(raw);
            if token != 0 && t.dmbs.get(&token).is_none() {
                break token;
            }
        };
        // The table's lock is held since the token was found unused.
        let dmb = Dmb::new(token, size, &self.pool)?;
        let entry = Entry {
            dmb: dmb.clone(),
            attacher: None,
        };
        t.dmbs.try_create_and_insert(token, entry, GFP_KERNEL)?;
        t.count += 1;
        Ok(dmb)
    }

    /// The DMB registered under `token`, for a peer whose own DMB is
    /// `mine` to write into (the peer's view: upstream's `attach_dmb`).
    /// `ENOENT` when there is none.
    pub(crate) fn attach(&self, token: u64, mine: &Arc<Dmb>) -> Result<Arc<Dmb>> {
        let mut t = self.table.lock();
        let e = t.dmbs.get_mut(&token).ok_or(ENOENT)?;
        e.attacher = Some(mine.clone());
        Ok(e.dmb.clone())
    }

    /// Takes the DMB with `token` out of the table: no new peer can attach
    /// it; those attached keep its memory until they let go. Returns the
    /// DMB of the peer that attached it, if one did.
    pub(crate) fn unregister(&self, token: u64) -> Option<Arc<Dmb>> {
        let old = {
            let mut t = self.table.lock();
            let old = t.dmbs.remove(&token);
            if old.is_some() {
                t.count -= 1;
            }
            old
        };
        old.and_then(|e| {
            e.dmb.disown();
            e.attacher
        })
    }

    /// DMBs registered now.
    pub(crate) fn dmbs(&self) -> usize {
        self.table.lock().count
    }
}

/// The loopback device, published while the module is loaded.
static LOOPBACK: RcuPointer<Arc<Loopback>> = RcuPointer::new();

/// The loopback device, while the module is loaded.
pub(crate) fn device() -> Option<Arc<Loopback>> {
    LOOPBACK.read(|d| d.cloned())
}

/// The loopback device's lifetime in the module: published when made,
/// unpublished when dropped (after the last socket: no DMB is left).
pub(crate) struct LoopbackDevice(());

impl LoopbackDevice {
    pub(crate) fn start() -> Result<Self> {
        let dev = Loopback::new()?;
        LOOPBACK.replace(Some(KBox::new(dev, GFP_KERNEL)?));
        Ok(LoopbackDevice(()))
    }
}

impl Drop for LoopbackDevice {
    fn drop(&mut self) {
        LOOPBACK.replace(None);
    }
}

