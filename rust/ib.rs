// SPDX-License-Identifier: GPL-2.0

//! The RDMA devices SMC-R may use: smc_rs is an ib_core client, keeps for
//! each device its limits and the state of its ports, and follows port and
//! GID events. Link groups pick their device here.

use crate::sys::ib::client::IbClientOps;
use crate::sys::ib::device::{GidEntry, IbDevice};
use crate::sys::ib::event::{IbEvent, IbEventRegistration, IbEventSink};
use crate::sys::print::smc_dbg;
use core::fmt;
use core::sync::atomic::{AtomicBool, Ordering};
use kernel::prelude::*;
use kernel::sync::Arc;
use kernel::types::ARef;

/// A port of an RDMA device, as SMC sees it.
struct SmcIbPort {
    number: u32,
    /// `IB_PORT_ACTIVE`, kept current by port events.
    active: AtomicBool,
    /// The GID table changed since it was last read.
    gids_stale: AtomicBool,
}

/// An RDMA device SMC-R may use.
pub(crate) struct SmcIbDevice {
    dev: ARef<IbDevice>,
    ports: KVec<SmcIbPort>,
}

impl SmcIbDevice {
    fn port(&self, number: u32) -> Option<&SmcIbPort> {
        self.ports.iter().find(|p| p.number == number)
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
                    p.active
                        .store(matches!(event, IbEvent::PortActive(_)), Ordering::Release);
                    p.gids_stale.store(true, Ordering::Release);
                }
            }
            IbEvent::GidChange(n) => {
                if let Some(p) = self.port(n) {
                    p.gids_stale.store(true, Ordering::Release);
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
                    gids_stale: AtomicBool::new(false),
                },
                GFP_KERNEL,
            )?;
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
        let device = Arc::new(
            SmcIbDevice {
                dev: ARef::from(dev),
                ports,
            },
            GFP_KERNEL,
        )?;
        let events = IbEventRegistration::new(dev, device.clone())?;
        Ok(KBox::new(
            DeviceEntry {
                _events: events,
                device,
            },
            GFP_KERNEL,
        )?)
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
        drop(entry);
    }
}

/// Formats a device's name.
struct Name<'a>(&'a IbDevice);

impl fmt::Display for Name<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for b in self.0.name().to_bytes() {
            write!(f, "{}", char::from(*b))?;
        }
        Ok(())
    }
}

/// Formats a GID entry: the GID as IPv6 groups, its index, type and netdev.
struct Gid<'a>(&'a GidEntry);

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
