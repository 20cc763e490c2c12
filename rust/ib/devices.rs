// SPDX-License-Identifier: GPL-2.0

//! The RDMA devices in use: each with its limits and the state of its
//! ports, kept current by port and GID events, listed for readers under
//! RCU; the holds of the link groups on them; who is told when one goes.

use super::pnet::{self, PnetId, PNETID_LEN};
use crate::sys::ib::device::{DeviceListLock, GidEntry, IbDevice};
use crate::sys::ib::event::{IbEvent, IbEventSink};
use crate::sys::net::Net;
use crate::sys::print::smc_dbg;
use crate::sys::sync::{RcuPointer, SpinLockBh};
use core::fmt;
use core::sync::atomic::{AtomicBool, AtomicU32, Ordering};
use kernel::prelude::*;
use kernel::sync::{Arc, CondVar};
use kernel::types::ARef;

/// What uses the devices (the link groups) and must let go of one that
/// goes away, before ib_core finishes removing it.
pub(crate) trait DeviceUsers: Send + Sync {
    /// `dev` is going away: end everything on it. Process context.
    fn device_removed(&self, dev: &SmcIbDevice);
    /// Port `port` of `dev` went down (`IB_EVENT_PORT_ERR`): the links on
    /// it go down now (upstream's `smcr_port_err`), not when their queue
    /// pairs give up. Process context (ib_core's event work).
    fn port_down(&self, dev: &SmcIbDevice, port: u32);
    /// Port `port` of `dev` came up or got a new GID: link groups short of
    /// links may add one over it. Process context.
    fn port_up(&self, dev: &SmcIbDevice, port: u32);
}

/// The users of the devices, told about removals.
pub(super) static USERS: RcuPointer<Arc<dyn DeviceUsers>> = RcuPointer::new();

/// Sets (or clears) who is told when a device goes away.
pub(crate) fn set_device_users(users: Option<Arc<dyn DeviceUsers>>) -> Result {
    let boxed = match users {
        Some(u) => Some(KBox::new(u, GFP_KERNEL)?),
        None => None,
    };
    USERS.replace(boxed);
    Ok(())
}

/// A port of an RDMA device, as SMC sees it.
pub(super) struct SmcIbPort {
    pub(super) number: u32,
    /// `IB_PORT_ACTIVE`, kept current by port events.
    pub(super) active: AtomicBool,
    /// The active MTU as `enum ib_mtu` when the device was added (a link
    /// reads the current one).
    pub(super) active_mtu: AtomicU32,
    /// Entries in the GID table (fixed per port).
    pub(super) gid_table_len: u32,
    /// The port's hardware PNETID, all padding when it has none (hardware
    /// PNETIDs exist on s390 only).
    pub(super) pnetid: [u8; PNETID_LEN],
}

impl SmcIbPort {
    /// The port's PNETID: the hardware's, else the PNET table's for this
    /// port of `dev` (upstream applies the table's when neither the
    /// hardware's nor an earlier entry set one). Does not sleep.
    pub(super) fn pnetid(&self, dev: &IbDevice) -> Option<PnetId> {
        PnetId::new(self.pnetid)
            .or_else(|| pnet::ib_port_pnetid(dev.name().to_bytes(), self.number))
    }

    /// Whether the port's PNETID comes from the PNET table.
    pub(super) fn pnetid_by_user(&self, dev: &IbDevice) -> bool {
        PnetId::new(self.pnetid).is_none()
            && pnet::ib_port_pnetid(dev.name().to_bytes(), self.number).is_some()
    }
}

/// An RDMA device SMC-R may use.
#[pin_data]
pub(crate) struct SmcIbDevice {
    pub(super) dev: ARef<IbDevice>,
    pub(super) ports: KVec<SmcIbPort>,
    /// ib_core took the device away: not to be picked any more.
    pub(super) removed: AtomicBool,
    /// The [`DeviceHold`]s: link groups whose verbs objects are on it.
    #[pin]
    pub(super) holds: SpinLockBh<usize>,
    /// Signalled when the last hold goes.
    #[pin]
    pub(super) holds_gone: CondVar,
}

/// A link group's hold on its device: its verbs objects (PD, CQs, queue
/// pair, memory regions) are on it, and ib_core's removal of the device
/// waits until every hold is gone -- also those of link groups that no
/// registry lists (in their handshake, or just taken out by the keeper),
/// as upstream counts the links per device. Kept with the verbs objects,
/// so that it goes when they go. Any context.
pub(crate) struct DeviceHold(Arc<SmcIbDevice>);

impl DeviceHold {
    /// Holds `dev`; fails once its removal began. Checked under the lock
    /// that the removal marks the device under: a hold is either counted
    /// before the removal waits for the holds, or never taken (a link
    /// still being made when the device went must not put verbs objects
    /// on it after ib_core's removal of our client returned).
    pub(crate) fn new(dev: &Arc<SmcIbDevice>) -> Result<Self> {
        let mut n = dev.holds.lock();
        if dev.removed.load(Ordering::Acquire) {
            return Err(ENODEV);
        }
        *n = n.saturating_add(1);
        drop(n);
        Ok(DeviceHold(dev.clone()))
    }
}

impl Drop for DeviceHold {
    fn drop(&mut self) {
        let mut n = self.0.holds.lock();
        *n = n.saturating_sub(1);
        if *n == 0 {
            self.0.holds_gone.notify_all();
        }
    }
}

impl SmcIbDevice {
    pub(super) fn port(&self, number: u32) -> Option<&SmcIbPort> {
        self.ports.iter().find(|p| p.number == number)
    }

    /// The ib_core device.
    pub(crate) fn ib(&self) -> &IbDevice {
        &self.dev
    }

    /// Whether `port` is up.
    pub(crate) fn port_active(&self, port: u32) -> bool {
        self.port(port)
            .is_some_and(|p| p.active.load(Ordering::Acquire))
    }
}

impl IbEventSink for SmcIbDevice {
    fn event(&self, event: IbEvent) {
        smc_dbg!("ib: {} event {:?}", Name(&self.dev), event);
        match event {
            IbEvent::PortActive(n) | IbEvent::PortError(n) => {
                if let Some(p) = self.port(n) {
                    // Nothing is queried here: ib_core dispatches events
                    // under a lock that drivers' query paths nest outside
                    // of. The MTU is read when a link is made.
                    let up = matches!(event, IbEvent::PortActive(_));
                    p.active.store(up, Ordering::Release);
                    // Out of the RCU read section: the users may sleep.
                    if let Some(users) = USERS.read(|u| u.cloned()) {
                        if up {
                            users.port_up(self, n);
                        } else {
                            users.port_down(self, n);
                        }
                    }
                }
            }
            // GIDs are looked up afresh for every new link; a new one may
            // carry a link.
            IbEvent::GidChange(n) => {
                if self.port_active(n) {
                    if let Some(users) = USERS.read(|u| u.cloned()) {
                        users.port_up(self, n);
                    }
                }
            }
            IbEvent::DeviceFatal => {
                for p in self.ports.iter() {
                    p.active.store(false, Ordering::Release);
                }
            }
            IbEvent::Other(_) => {}
        }
    }
}

/// The devices in use, replaced as a whole when one comes or goes (under
/// [`DeviceListLock`]); readers do not wait.
static DEVICES: RcuPointer<KVec<Arc<SmcIbDevice>>> = RcuPointer::new();

/// Calls `f` with the devices in use, under the RCU read lock: `f` must not
/// sleep, and keeps a device beyond the call only by cloning its `Arc`.
pub(super) fn with_devices<R>(f: impl FnOnce(&[Arc<SmcIbDevice>]) -> R) -> R {
    DEVICES.read(|list| f(list.map_or(&[], |l| &l[..])))
}

/// Whether an RDMA device in use may serve sockets of `net` and has a port
/// up: without one, no connection in `net` can use SMC-R. Reads the list
/// under RCU only (no lock, no sleep), cheap enough for every `connect()`.
pub(crate) fn any_port_up(net: &Net) -> bool {
    with_devices(|devices| {
        devices.iter().any(|d| {
            !d.removed.load(Ordering::Acquire)
                && d.dev.usable_in(net)
                && d.ports.iter().any(|p| p.active.load(Ordering::Acquire))
        })
    })
}

/// Publishes the list of devices in use with `add` added and `remove`
/// (and any device marked removed) taken out. May sleep: waits for the
/// readers of the old list.
pub(super) fn update_devices(add: Option<&Arc<SmcIbDevice>>, remove: Option<&Arc<SmcIbDevice>>) -> Result {
    let _lock = DeviceListLock::lock();
    // The lock keeps the list as it is between the two reads.
    let len = with_devices(|cur| cur.len());
    let mut list = KVec::with_capacity(len + 1, GFP_KERNEL)?;
    with_devices(|cur| -> Result {
        for d in cur {
            let gone =
                remove.is_some_and(|r| Arc::ptr_eq(r, d)) || d.removed.load(Ordering::Acquire);
            if !gone {
                // Within the capacity: no allocation, so no sleeping.
                list.push(d.clone(), GFP_ATOMIC)?;
            }
        }
        Ok(())
    })?;
    if let Some(d) = add {
        list.push(d.clone(), GFP_KERNEL)?;
    }
    DEVICES.replace(if list.is_empty() {
        None
    } else {
        Some(KBox::new(list, GFP_KERNEL)?)
    });
    Ok(())
}

/// Formats a device's name.
pub(super) struct Name<'a>(pub(super) &'a IbDevice);

impl fmt::Display for Name<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for b in self.0.name().to_bytes() {
            write!(f, "{}", char::from(*b))?;
        }
        Ok(())
    }
}

/// Formats a GID entry: the GID as IPv6 groups, its index, type and netdev.
pub(super) struct Gid<'a>(pub(super) &'a GidEntry);

impl fmt::Display for Gid<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let g = &self.0.gid;
        write!(f, "gid[{}] ", self.0.index)?;
        for (i, pair) in g.chunks(2).enumerate() {
            let word = pair.iter().fold(0u16, |w, b| (w << 8) | u16::from(*b));
            if i > 0 {
                write!(f, ":")?;
            }
            write!(f, "{:x}", word)?;
        }
        write!(
            f,
            " {} ifindex {}",
            if self.0.roce_v2 { "RoCEv2" } else { "RoCEv1" },
            self.0.ifindex
        )
    }
}
