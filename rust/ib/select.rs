// SPDX-License-Identifier: GPL-2.0

//! Choosing the RDMA device, port and GID of an SMC-Rv2 connection, as
//! upstream does (`smc_pnet_find_roce_resource` with `check_smcrv2`), and
//! the system identifier SMC peers tell each other.
//!
//! A port qualifies when it is up and holds, as a RoCE v2 GID, an IPv4
//! address of the connection's namespace:
//! - when the interface the connection leaves by has a PNETID, on a port
//!   with the same PNETID: the GID of the connection's source address, or
//!   else the first IPv4 GID on an interface whose subnet holds it;
//! - otherwise (no PNETIDs, as with rxe), the GID of the connection's source
//!   address on that very interface. ib_core lists a port's GIDs for the
//!   port's netdev and the devices stacked on it (VLANs), so this is
//!   upstream's "the port's netdev is the interface or its base device".

use super::pnet::{netdev_pnetid, PnetId};
use super::devices::{with_devices, Name, SmcIbDevice, SmcIbPort};
use crate::sys::ib::device::{GidEntry, IbDevice};
use crate::sys::net::Net;
use crate::sys::net::ETH_ALEN;
use crate::sys::print::smc_dbg;
use crate::sys::random::random_u16;
use crate::sys::route::{find_route_v4, on_subnet, route_dev_v4, RouteInfo};
use core::sync::atomic::{AtomicU64, Ordering};
use kernel::sync::Arc;

/// The length of a GID.
pub(crate) const GID_LEN: usize = 16;

/// An RDMA device and port chosen for an SMC-Rv2 connection.
#[derive(Clone)]
pub(crate) struct SmcrV2Device {
    /// The device.
    pub(crate) device: Arc<SmcIbDevice>,
    /// The port number.
    pub(crate) port: u32,
    /// The index of the GID in the port's table (the QP's source GID).
    pub(crate) gid_index: u32,
    /// The GID: the IPv4-mapped address RoCE v2 traffic comes from.
    pub(crate) gid: [u8; GID_LEN],
    /// The MAC address of the GID's network device.
    pub(crate) mac: [u8; ETH_ALEN],
    /// The peer is reached through a gateway.
    pub(crate) uses_gateway: bool,
    /// The MAC address of the next hop towards the peer.
    pub(crate) nexthop_mac: [u8; ETH_ALEN],
    /// The port's active MTU as `enum ib_mtu` (1 = 256 ... 5 = 4096): the
    /// largest path MTU the QP may use.
    pub(crate) path_mtu: u32,
}

/// `addr` as an IPv4-mapped IPv6 address (`::ffff:a.b.c.d`).
fn ipv4_mapped(addr: [u8; 4]) -> [u8; GID_LEN] {
    let mut gid = [0u8; GID_LEN];
    gid[10] = 0xff;
    gid[11] = 0xff;
    gid[12..].copy_from_slice(&addr);
    gid
}

/// Whether `gid` holds an IPv4 address (IPv4-mapped, or IPv4-compatible as
/// upstream's `smc_ib_gid_to_ipv4` also accepts), other than 255.255.255.255.
fn gid_is_ipv4(gid: &[u8; GID_LEN]) -> bool {
    let zeros = |bytes: &[u8]| bytes.iter().all(|b| *b == 0);
    let mapped = zeros(&gid[..10]) && gid[10..12] == [0xff, 0xff];
    let compatible = zeros(&gid[..12]);
    (mapped || compatible) && gid[12..] != [0xff; 4]
}

/// The GID of `port` to use for traffic from `route.saddr`, by the rules in
/// the module documentation. Does not sleep.
fn port_gid(dev: &SmcIbDevice, port: &SmcIbPort, net: &Net, route: &RouteInfo) -> Option<GidEntry> {
    let own = ipv4_mapped(route.saddr);
    let entry = match netdev_pnetid(net, route.ifindex) {
        None => dev
            .dev
            .find_roce_v2_gid(port.number, &own, Some((net, route.ifindex)))?,
        Some(pnetid) => {
            if !port.pnetid(&dev.dev).is_some_and(|p| p.matches(&pnetid)) {
                return None;
            }
            let in_net = |e: &GidEntry| e.net_id == net.id();
            match dev.dev.find_roce_v2_gid(port.number, &own, None) {
                Some(e) if in_net(&e) => e,
                _ => {
                    let mut found = None;
                    dev.dev.for_each_gid(port.number, port.gid_table_len, |e| {
                        if found.is_none()
                            && e.roce_v2
                            && gid_is_ipv4(&e.gid)
                            && in_net(&e)
                            && on_subnet(net, e.ifindex, route.saddr)
                        {
                            found = Some(e);
                        }
                    });
                    found?
                }
            }
        }
    };
    (entry.net_id == net.id()).then_some(entry)
}

/// The device, port and GID for an SMC-Rv2 connection in `net` whose IPv4
/// traffic follows `route` (from the clcsock's local address to the peer),
/// or `None` when no RDMA port can carry it.
///
/// Process context: the port's current MTU is queried (may sleep).
pub(crate) fn find_smcr_v2_device(net: &Net, route: &RouteInfo) -> Option<SmcrV2Device> {
    let (device, port, gid, path_mtu) = with_devices(|devices| {
        devices.iter().find_map(|d| {
            if d.removed.load(Ordering::Acquire) || !d.dev.usable_in(net) {
                return None;
            }
            d.ports.iter().find_map(|p| {
                if !p.active.load(Ordering::Acquire) {
                    return None;
                }
                let gid = port_gid(d, p, net, route)?;
                Some((
                    d.clone(),
                    p.number,
                    gid,
                    p.active_mtu.load(Ordering::Relaxed),
                ))
            })
        })
    })?;
    let path_mtu = device
        .dev
        .query_port(port)
        .map_or(path_mtu, |a| a.active_mtu);
    smc_dbg!(
        "ib: SMC-Rv2 via {} port {} gid[{}] (ifindex {}, mtu enum {}, {})",
        Name(&device.dev),
        port,
        gid.index,
        route.ifindex,
        path_mtu,
        if route.uses_gateway {
            "via gateway"
        } else {
            "direct"
        }
    );
    Some(SmcrV2Device::new(
        device,
        port,
        &gid,
        (route.uses_gateway, route.nexthop_mac),
        path_mtu,
    ))
}

impl SmcrV2Device {
    /// The PNETID of the port (the hardware's, else the PNET table's):
    /// for a group's link, the group's, as upstream records it from its
    /// first link's port (`lgr->pnet_id`). Does not sleep.
    pub(crate) fn pnetid(&self) -> Option<PnetId> {
        self.device
            .ports
            .iter()
            .find(|p| p.number == self.port)
            .and_then(|p| p.pnetid(&self.device.dev))
    }

    fn new(
        device: Arc<SmcIbDevice>,
        port: u32,
        gid: &GidEntry,
        (uses_gateway, nexthop_mac): (bool, [u8; ETH_ALEN]),
        path_mtu: u32,
    ) -> Self {
        SmcrV2Device {
            device,
            port,
            gid_index: u32::from(gid.index),
            gid: gid.gid,
            mac: gid.mac,
            uses_gateway,
            nexthop_mac,
            path_mtu,
        }
    }
}

/// The system identifier, 8 bytes: 2 random ones naming this instance,
/// then the MAC address of the first RDMA port seen up (zero until then).
static SYSTEMID: AtomicU64 = AtomicU64::new(0);

/// Splits the system identifier into its random part and its MAC address.
fn systemid_parts(id: u64) -> ([u8; 2], [u8; ETH_ALEN]) {
    let b = id.to_ne_bytes();
    ([b[0], b[1]], [b[2], b[3], b[4], b[5], b[6], b[7]])
}

/// Sets the system identifier's MAC address, unless one is set already, to
/// that of `port` of `dev` (its first GID's netdev, as upstream).
pub(super) fn define_systemid(dev: &IbDevice, port: u32) {
    let Some(mac) = dev.gid(port, 0).map(|e| e.mac) else {
        return;
    };
    if mac == [0; ETH_ALEN] {
        return;
    }
    let mut cur = SYSTEMID.load(Ordering::Acquire);
    loop {
        let (random, old_mac) = systemid_parts(cur);
        if old_mac != [0; ETH_ALEN] {
            return;
        }
        let random = if random == [0; 2] {
            random_u16().to_ne_bytes()
        } else {
            random
        };
        let mut new = [0u8; 8];
        new[..2].copy_from_slice(&random);
        new[2..].copy_from_slice(&mac);
        match SYSTEMID.compare_exchange(
            cur,
            u64::from_ne_bytes(new),
            Ordering::AcqRel,
            Ordering::Acquire,
        ) {
            Ok(_) => return,
            Err(now) => cur = now,
        }
    }
}

/// The system identifier as SMC messages carry it (`id_for_peer`,
/// `peer_systemid`): fixed once an RDMA port was seen up.
pub(crate) fn local_systemid() -> [u8; 8] {
    let cur = SYSTEMID.load(Ordering::Acquire);
    if systemid_parts(cur).0 != [0; 2] {
        return cur.to_ne_bytes();
    }
    // No port up yet: choose the instance part now, keep it afterwards.
    let mut new = [0u8; 8];
    new[..2].copy_from_slice(&random_u16().to_ne_bytes());
    match SYSTEMID.compare_exchange(
        cur,
        u64::from_ne_bytes(new),
        Ordering::AcqRel,
        Ordering::Acquire,
    ) {
        Ok(_) => new,
        Err(now) => now.to_ne_bytes(),
    }
}

/// A device, port, GID and MTU that may carry another link.
type Candidate = (Arc<SmcIbDevice>, u32, GidEntry, u32);

/// A device other than `known`'s for another link of an SMC-Rv2 link
/// group in `net` whose first link uses the address `saddr` (upstream's
/// `smc_pnet_find_alt_roce` with `check_smcrv2`): an active port with
/// `known`'s port's PNETID (none when it has none, as upstream matches
/// the group's) and a RoCE v2 IPv4 GID of the namespace on an interface
/// whose subnet holds `saddr`. With `daddr` (the peer's address on the new link: a client
/// answering the server's ADD LINK), the route from that GID's address
/// to `daddr` must leave by the same interface (upstream checks only that
/// a route exists). Process context.
pub(crate) fn find_alt_smcr_v2_device(
    net: &Net,
    known: &SmcrV2Device,
    saddr: [u8; 4],
    daddr: Option<[u8; 4]>,
) -> Option<SmcrV2Device> {
    let pnetid = known.pnetid();
    let same_pnet = |p: Option<PnetId>| match (&p, &pnetid) {
        (None, None) => true,
        (Some(a), Some(b)) => a.matches(b),
        _ => false,
    };
    let candidates = with_devices(|devices| {
        let mut out: [Option<Candidate>; 4] = [const { None }; 4];
        let mut n = 0;
        for d in devices.iter() {
            if core::ptr::eq(&**d, &*known.device)
                || d.removed.load(Ordering::Acquire)
                || !d.dev.usable_in(net)
            {
                continue;
            }
            for p in d.ports.iter() {
                if !p.active.load(Ordering::Acquire) || !same_pnet(p.pnetid(&d.dev)) {
                    continue;
                }
                let mut found = None;
                d.dev.for_each_gid(p.number, p.gid_table_len, |e| {
                    if found.is_none()
                        && e.roce_v2
                        && gid_is_ipv4(&e.gid)
                        && e.net_id == net.id()
                        && on_subnet(net, e.ifindex, saddr)
                    {
                        found = Some(e);
                    }
                });
                if let (Some(e), Some(slot)) = (found, out.get_mut(n)) {
                    *slot = Some((d.clone(), p.number, e, p.active_mtu.load(Ordering::Relaxed)));
                    n += 1;
                }
            }
        }
        out
    });
    if candidates.iter().all(Option::is_none) {
        smc_dbg!("ib: no other active port with an IPv4 GID on the group's subnet");
    }
    candidates.into_iter().flatten().find_map(|(device, port, gid, mtu)| {
        let own = [gid.gid[12], gid.gid[13], gid.gid[14], gid.gid[15]];
        let (uses_gateway, nexthop_mac) = match daddr {
            Some(d) => {
                let (ifindex, gateway) = match route_dev_v4(net, own, d) {
                    Ok(r) => r,
                    Err(e) => {
                        smc_dbg!("ib: {} port {}: no route to the peer ({:?})", Name(&device.dev), port, e);
                        return None;
                    }
                };
                if ifindex != gid.ifindex {
                    smc_dbg!(
                        "ib: {} port {}: the route to the peer leaves by ifindex {}, not {}",
                        Name(&device.dev),
                        port,
                        ifindex,
                        gid.ifindex
                    );
                    return None;
                }
                // A direct peer's MAC comes in its ADD LINK; a gateway's
                // must be known.
                if gateway {
                    let route = find_route_v4(net, own, d).ok()?;
                    (true, route.nexthop_mac)
                } else {
                    (false, [0; ETH_ALEN])
                }
            }
            None => (false, [0; ETH_ALEN]),
        };
        let path_mtu = device.dev.query_port(port).map_or(mtu, |a| a.active_mtu);
        smc_dbg!(
            "ib: another link via {} port {} gid[{}]",
            Name(&device.dev),
            port,
            gid.index
        );
        Some(SmcrV2Device::new(
            device,
            port,
            &gid,
            (uses_gateway, nexthop_mac),
            path_mtu,
        ))
    })
}

/// The IPv4 address in an IPv4-mapped GID.
pub(crate) fn gid_ipv4(gid: &[u8; GID_LEN]) -> [u8; 4] {
    [gid[12], gid[13], gid[14], gid[15]]
}
