// SPDX-License-Identifier: GPL-2.0

//! The RDMA devices SMC-R may use: smc_rs is an ib_core client that adds
//! each device to the list of those in use ([`devices`]) and takes it out
//! again once nothing holds it; link groups pick their device there
//! ([`select`]).

mod devices;
pub(crate) mod info;
pub(crate) mod pnet;
mod select;

pub(crate) use devices::{any_port_up, set_device_users, DeviceHold, DeviceUsers, SmcIbDevice};
pub(crate) use select::{
    find_alt_smcr_v2_device, find_smcr_v2_device, gid_ipv4, local_systemid, SmcrV2Device,
};

use crate::sys::ib::client::IbClientOps;
use crate::sys::ib::device::IbDevice;
use crate::sys::ib::event::IbEventRegistration;
use crate::sys::print::smc_dbg;
use crate::sys::sync::new_spinlock_bh;
use core::sync::atomic::{AtomicBool, AtomicU32, Ordering};
use devices::{update_devices, Gid, Name, SmcIbPort, USERS};
use kernel::prelude::*;
use kernel::sync::{new_condvar, Arc};
use kernel::types::ARef;
use pnet::PNETID_LEN;

/// What ib_core keeps for us per device: the device's state and the
/// registration that feeds it events (dropped first).
pub(crate) struct DeviceEntry {
    _events: Pin<KBox<IbEventRegistration<SmcIbDevice>>>,
    device: Arc<SmcIbDevice>,
}

/// smc_rs as an ib_core client.
pub(crate) struct SmcIbClient;

impl IbClientOps for SmcIbClient {
    type Device = DeviceEntry;

    fn add(dev: &IbDevice) -> Result<KBox<DeviceEntry>> {
        let caps = dev.caps();
        let mut ports = KVec::new();
        for number in dev.ports() {
            let attr = dev.query_port(number)?;
            smc_dbg!(
                "ib: {} port {}: {}, mtu enum {}, {} GIDs",
                Name(dev),
                number,
                if attr.active { "ACTIVE" } else { "DOWN" },
                attr.active_mtu,
                attr.gid_table_len
            );
            dev.for_each_gid(number, attr.gid_table_len, |g| {
                smc_dbg!("ib: {} port {} {}", Name(dev), number, Gid(&g));
            });
            ports.push(
                SmcIbPort {
                    number,
                    active: AtomicBool::new(attr.active),
                    active_mtu: AtomicU32::new(attr.active_mtu),
                    gid_table_len: attr.gid_table_len,
                    pnetid: [0; PNETID_LEN],
                },
                GFP_KERNEL,
            )?;
            if attr.active {
                select::define_systemid(dev, number);
            }
        }
        smc_dbg!(
            "ib: {} added: {} port(s), max_qp_wr {}, max_sge send {} recv {}, max_cqe {}, max_mr_size {:#x}, page sizes {:#x}",
            Name(dev),
            ports.len(),
            caps.max_qp_wr,
            caps.max_send_sge,
            caps.max_recv_sge,
            caps.max_cqe,
            caps.max_mr_size,
            caps.page_size_cap
        );
        let device = Arc::pin_init(
            pin_init!(SmcIbDevice {
                dev: ARef::from(dev),
                ports,
                removed: AtomicBool::new(false),
                holds <- new_spinlock_bh!(0, "SmcIbDevice::holds"),
                holds_gone <- new_condvar!("SmcIbDevice::holds_gone"),
            }),
            GFP_KERNEL,
        )?;
        let events = IbEventRegistration::new(dev, device.clone())?;
        let entry = KBox::new(
            DeviceEntry {
                _events: events,
                device,
            },
            GFP_KERNEL,
        )?;
        // Listed last: whatever fails before leaves nothing behind.
        update_devices(Some(&entry.device), None)?;
        // Its active ports are news for link groups short of a link, as a
        // port that comes up is (upstream's port event work on a new
        // device).
        if let Some(users) = USERS.read(|u| u.cloned()) {
            for p in entry.device.ports.iter() {
                if p.active.load(Ordering::Acquire) {
                    users.port_up(&entry.device, p.number);
                }
            }
        }
        Ok(entry)
    }

    fn remove(dev: &IbDevice, entry: KBox<DeviceEntry>) {
        smc_dbg!(
            "ib: {} removed (port 1 was {})",
            Name(dev),
            if entry.device.port_active(1) {
                "active"
            } else {
                "down"
            }
        );
        // Readers skip it from now on; without memory for the new list it
        // stays listed (its memory is kept, its GIDs are gone) until the
        // next change of the list. Marked under the holds' lock: no hold
        // is taken after the count below was read.
        let holds = entry.device.holds.lock();
        entry.device.removed.store(true, Ordering::Release);
        drop(holds);
        if let Some(users) = USERS.read(|u| u.cloned()) {
            users.device_removed(&entry.device);
        }
        // Link groups the users could not end (in their handshake, or
        // being ended elsewhere) end within their handshake's timeouts:
        // nothing may use the device once this returns.
        let mut holds = entry.device.holds.lock();
        while *holds > 0 {
            smc_dbg!("ib: {} waits for {} link group(s)", Name(dev), *holds);
            entry.device.holds_gone.wait(&mut holds);
        }
        drop(holds);
        let _ = update_devices(None, Some(&entry.device));
        drop(entry);
    }
}

