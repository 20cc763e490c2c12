// SPDX-License-Identifier: GPL-2.0

//! What operators see of the RDMA devices SMC-R may use: name, ports,
//! their state, network device and PNETID, as upstream's
//! `SMC_NETLINK_GET_DEV_SMCR` lists them. Read only.

use super::pnet::PNETID_LEN;
use super::devices::{with_devices, SmcIbDevice};
use crate::sys::diag::IBNAME_LEN;
use core::sync::atomic::Ordering;
use kernel::prelude::*;
use kernel::sync::Arc;

/// A port of a device, for a listing.
pub(crate) struct PortInfo {
    /// Its number (from 1).
    pub(crate) number: u32,
    /// `IB_PORT_ACTIVE`.
    pub(crate) active: bool,
    /// The interface index of its network device (0: none).
    pub(crate) ifindex: u32,
    /// Its PNETID, NUL padded (all NUL: none).
    pub(crate) pnetid: [u8; PNETID_LEN],
    /// The PNETID comes from the PNET table.
    pub(crate) pnetid_by_user: bool,
}

/// A device, for a listing.
pub(crate) struct DeviceInfo {
    /// The device itself, to match link groups against.
    pub(crate) device: Arc<SmcIbDevice>,
    /// Its name, NUL terminated and padded.
    pub(crate) name: [u8; IBNAME_LEN],
    /// Its ports, in order.
    pub(crate) ports: KVec<PortInfo>,
}

/// The devices in use, in list order. Process context.
pub(crate) fn devices() -> Result<KVec<DeviceInfo>> {
    let len = with_devices(|list| list.len());
    let mut held: KVec<Arc<SmcIbDevice>> = KVec::with_capacity(len, GFP_KERNEL)?;
    with_devices(|list| {
        for d in list {
            // Within the capacity: no allocation, so no sleeping. A device
            // added meanwhile is left for the next listing.
            if held.push(d.clone(), GFP_ATOMIC).is_err() {
                break;
            }
        }
    });
    let mut out = KVec::with_capacity(held.len(), GFP_KERNEL)?;
    for device in held {
        let ib = device.ib();
        let mut name = [0u8; IBNAME_LEN];
        for (o, b) in name
            .iter_mut()
            .take(IBNAME_LEN - 1)
            .zip(ib.name().to_bytes())
        {
            *o = *b;
        }
        let mut ports = KVec::with_capacity(device.ports.len(), GFP_KERNEL)?;
        for p in device.ports.iter() {
            // The network device of the port's default GID is the port's.
            let ifindex = ib
                .gid(p.number, 0)
                .map_or(0, |g| u32::try_from(g.ifindex).unwrap_or(0));
            ports.push(
                PortInfo {
                    number: p.number,
                    active: p.active.load(Ordering::Acquire),
                    ifindex,
                    pnetid: p.pnetid(ib).map_or([0; PNETID_LEN], |id| *id.raw()),
                    pnetid_by_user: p.pnetid_by_user(ib),
                },
                GFP_KERNEL,
            )?;
        }
        out.push(
            DeviceInfo {
                device,
                name,
                ports,
            },
            GFP_KERNEL,
        )?;
    }
    Ok(out)
}
