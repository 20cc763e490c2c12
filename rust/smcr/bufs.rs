// SPDX-License-Identifier: GPL-2.0

//! A connection's buffer over the links of its link group: one memory,
//! mapped for each link's device, and for an RMB a memory region on each
//! link that the peer writes through (upstream's `smc_buf_desc` with its
//! `mr[]` and `sgt[]` per link index).
//!
//! A link added to the group maps and registers every buffer before the
//! peer learns its keys; a link that goes takes its mappings back
//! ([`LgrBuf::drop_link`]) once nothing is posted on it any more. A
//! registration in flight or a WRITE that reads a send buffer holds its
//! [`RegisteredBuf`], so the memory outlives them whatever happens here.

use super::link::Link;
use crate::sys::errno::{EINVAL, ENOLINK};
use crate::sys::ib::buf::{BufMem, DmaBuf};
use crate::sys::ib::mr::{MrAccess, RegisteredBuf};
use crate::sys::sync::{new_spinlock_bh, SpinLockBh};
use crate::wire::lgr_links::LINKS_MAX;
use core::ops::Deref;
use kernel::prelude::*;
use kernel::sync::Arc;

/// What the buffer is for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum BufKind {
    /// An RMB: the peer writes into it (a region per link).
    Rmb,
    /// A send buffer: only our devices read it (the domain's local key
    /// reaches it, no region).
    Send,
}

/// A connection buffer on the links of a link group.
#[pin_data]
pub(crate) struct LgrBuf {
    kind: BufKind,
    /// The memory every mapping below shows.
    mem: Arc<BufMem>,
    /// The mapping (and region) per link slot of the group.
    #[pin]
    on: SpinLockBh<[Option<Arc<RegisteredBuf>>; LINKS_MAX]>,
}

impl LgrBuf {
    /// A new zeroed buffer of `size` bytes, mapped for `link`'s device and
    /// for an RMB given a region on it, which [`register`](Self::register)
    /// makes usable. May sleep.
    pub(crate) fn new(link: &Link, size: usize, kind: BufKind) -> Result<Arc<Self>> {
        let first = DmaBuf::new(link.dev.device.ib(), size)?;
        let mem = first.mem().clone();
        let made = Arc::pin_init(
            try_pin_init!(LgrBuf {
                kind,
                mem,
                on <- new_spinlock_bh!([const { None }; LINKS_MAX], "LgrBuf::on"),
            }? Error),
            GFP_KERNEL,
        )?;
        made.map_on(link, first, false)?;
        Ok(made)
    }

    /// Maps the buffer for a link added to the group (and registers it,
    /// when `register`). May sleep.
    #[track_caller]
    pub(crate) fn add_link(&self, link: &Link, register: bool) -> Result {
        let buf = DmaBuf::map(link.dev.device.ib(), &self.mem)?;
        self.map_on(link, buf, register)
    }

    #[track_caller]
    fn map_on(&self, link: &Link, buf: DmaBuf, register: bool) -> Result {
        let pd = link.pd()?;
        let reg = match self.kind {
            BufKind::Rmb => RegisteredBuf::new(&pd, buf)?,
            BufKind::Send => RegisteredBuf::local(&pd, buf)?,
        };
        let reg = Arc::new(reg, GFP_KERNEL)?;
        if register && self.kind == BufKind::Rmb {
            link.register_mr(&reg, MrAccess::RemoteWrite)?;
        }
        let old = self
            .on
            .lock()
            .get_mut(link.idx)
            .ok_or(EINVAL)?
            .replace(reg);
        drop(old);
        Ok(())
    }

    /// Registers the RMB's region on `link` (the first RMB of a new link
    /// waits until the link can send). May sleep.
    #[track_caller]
    pub(crate) fn register(&self, link: &Link) -> Result {
        let Some(reg) = self.on(link.idx) else {
            return Err(ENOLINK.into());
        };
        if self.kind == BufKind::Rmb {
            link.register_mr(&reg, MrAccess::RemoteWrite)?;
        }
        Ok(())
    }

    /// The mapping for link slot `idx`, if the buffer has one there.
    pub(crate) fn on(&self, idx: usize) -> Option<Arc<RegisteredBuf>> {
        self.on.lock().get(idx).cloned().flatten()
    }

    /// The key the peer writes with on link slot `idx`, and the address
    /// of the first byte as that key sees it.
    pub(crate) fn rkey(&self, idx: usize) -> Option<(u32, u64)> {
        self.on(idx).map(|r| (r.rkey(), r.iova()))
    }

    /// Lets the mapping on link slot `idx` go: its link is gone (its queue
    /// pair destroyed, so nothing posted reads it any more). Process
    /// context.
    pub(crate) fn drop_link(&self, idx: usize) {
        let old = self.on.lock().get_mut(idx).and_then(Option::take);
        drop(old);
    }

    /// Lets every mapping go (the link group ended). Process context.
    pub(crate) fn drop_all(&self) {
        let old = core::mem::replace(&mut *self.on.lock(), [const { None }; LINKS_MAX]);
        drop(old);
    }

    /// Makes what the devices wrote visible to the CPU.
    pub(crate) fn sync_for_cpu(&self) {
        for r in self.on.lock().iter().flatten() {
            r.buf().sync_for_cpu();
        }
    }

    /// Hands what the CPU wrote to the devices.
    pub(crate) fn sync_for_device(&self) {
        for r in self.on.lock().iter().flatten() {
            r.buf().sync_for_device();
        }
    }
}

impl Deref for LgrBuf {
    type Target = BufMem;

    /// The bytes, whatever link reaches them.
    fn deref(&self) -> &BufMem {
        &self.mem
    }
}
