// SPDX-License-Identifier: GPL-2.0

//! IPv4 routing as SMC-Rv2 needs it: which interface traffic to a peer
//! leaves by, whether it goes through a gateway, and the MAC address of the
//! next hop (RoCEv2 frames are addressed to it); and whether an interface
//! holds an address on a given subnet.

use super::bindings;
use super::errno::{is_err_or_null, ENOENT};
use super::net::{Net, ETH_ALEN};
use super::sync::RcuReadGuard;
use kernel::error::Result;

/// Where IPv4 traffic from one address to another goes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct RouteInfo {
    /// The interface the traffic leaves by.
    pub(crate) ifindex: i32,
    /// The next hop is a gateway, not the destination itself.
    pub(crate) uses_gateway: bool,
    /// The MAC address of the next hop.
    pub(crate) nexthop_mac: [u8; ETH_ALEN],
    /// The source address (the one asked for, or the one routing chose).
    pub(crate) saddr: [u8; 4],
}

/// A routing table entry, released on drop.
///
/// # Invariants
///
/// `0` is a counted, valid `struct rtable`.
struct Route(*mut bindings::rtable);

impl Route {
    /// The interface the route leaves by, whether it goes through a
    /// gateway, and the gateway's address family.
    fn output(&self) -> (i32, bool, u8) {
        // SAFETY: a valid route (invariant), whose flags are fixed once it
        // is published; a valid route has an output device.
        unsafe {
            (
                bindings::smc_rs_rt_ifindex(self.0),
                (*self.0).rt_uses_gateway != 0,
                (*self.0).rt_gw_family,
            )
        }
    }
}

impl Drop for Route {
    fn drop(&mut self) {
        // SAFETY: the reference taken by the lookup (invariant), dropped once.
        unsafe { bindings::smc_rs_ip_rt_put(self.0) };
    }
}

/// A neighbour (ARP) entry, released on drop.
///
/// # Invariants
///
/// `0` is a counted, valid `struct neighbour`.
struct Neighbour(*mut bindings::neighbour);

impl Drop for Neighbour {
    fn drop(&mut self) {
        // SAFETY: the reference taken by the lookup (invariant), dropped once.
        unsafe { bindings::smc_rs_neigh_release(self.0) };
    }
}

/// Looks up the route from `saddr` (0: any) to `daddr` in `net`, and the
/// next hop's MAC address, which must be known (a valid neighbour state).
/// `ENOENT` when there is no such route, the gateway is not IPv4, or the
/// next hop's address is not resolved.
pub(crate) fn find_route_v4(net: &Net, saddr: [u8; 4], daddr: [u8; 4]) -> Result<RouteInfo> {
    let (rt, fl4) = lookup(net, saddr, daddr)?;
    let (ifindex, uses_gateway, gw_family) = rt.output();
    if uses_gateway && u32::from(gw_family) != bindings::AF_INET {
        return Err(ENOENT.into());
    }
    // SAFETY: a valid route; `fl4.daddr` is readable for the call.
    let n = unsafe { bindings::smc_rs_dst_neigh_lookup(rt.0, &fl4.daddr) };
    if is_err_or_null(n) {
        return Err(ENOENT.into());
    }
    // INVARIANT: a successful lookup returns a counted neighbour.
    let n = Neighbour(n);
    // SAFETY: a valid neighbour (invariant).
    let state = unsafe { bindings::smc_rs_neigh_nud_state(n.0) };
    if u32::from(state) & bindings::NUD_VALID == 0 {
        return Err(ENOENT.into());
    }
    let mut ha = [0u8; bindings::MAX_ADDR_LEN as usize];
    // SAFETY: a valid neighbour; `ha` has room for any hardware address
    // (`MAX_ADDR_LEN`), and the copy is consistent under its seqlock.
    unsafe { bindings::smc_rs_neigh_ha_snapshot(ha.as_mut_ptr().cast(), n.0) };
    let mut nexthop_mac = [0u8; ETH_ALEN];
    nexthop_mac.copy_from_slice(&ha[..ETH_ALEN]);
    Ok(RouteInfo {
        ifindex,
        uses_gateway,
        nexthop_mac,
        saddr: fl4.saddr.to_ne_bytes(),
    })
}

/// The interface the route from `saddr` to `daddr` in `net` leaves by,
/// and whether it goes through a gateway; no neighbour needs to be known
/// (a direct peer's MAC comes from elsewhere). `ENOENT` without a route.
pub(crate) fn route_dev_v4(net: &Net, saddr: [u8; 4], daddr: [u8; 4]) -> Result<(i32, bool)> {
    let (rt, _) = lookup(net, saddr, daddr)?;
    let (ifindex, uses_gateway, _) = rt.output();
    Ok((ifindex, uses_gateway))
}

/// The route from `saddr` (0: any) to `daddr` in `net`, and the flow key
/// the lookup completed.
fn lookup(net: &Net, saddr: [u8; 4], daddr: [u8; 4]) -> Result<(Route, bindings::flowi4)> {
    if daddr == [0xff; 4] || daddr == [0; 4] {
        return Err(ENOENT.into());
    }
    // SAFETY: all-zero is an empty flow key (no interface, mark or ports).
    let mut fl4: bindings::flowi4 = unsafe { core::mem::zeroed() };
    // Addresses are in network order: their bytes as they are.
    fl4.saddr = u32::from_ne_bytes(saddr);
    fl4.daddr = u32::from_ne_bytes(daddr);
    // SAFETY: `net` is live (invariant of `Net`); `fl4` is a valid flow key
    // that the lookup completes (source address, ...).
    let rt = unsafe { bindings::smc_rs_ip_route_output_key(net.as_raw(), &mut fl4) };
    if is_err_or_null(rt) {
        return Err(ENOENT.into());
    }
    // INVARIANT: a successful lookup returns a counted route.
    Ok((Route(rt), fl4))
}

/// Whether interface `ifindex` of `net` holds an IPv4 address on a subnet
/// that contains `addr` (upstream's `inet_ifa_match` over the interface's
/// addresses). Does not sleep.
pub(crate) fn on_subnet(net: &Net, ifindex: i32, addr: [u8; 4]) -> bool {
    let _rcu = RcuReadGuard::new();
    // SAFETY: `net` is live; the RCU read lock is held.
    let dev = unsafe { bindings::dev_get_by_index_rcu(net.as_raw(), ifindex) };
    if dev.is_null() {
        return false;
    }
    // SAFETY: a device found under the RCU read lock, which is still held.
    let in_dev = unsafe { bindings::smc_rs_in_dev_get_rcu(dev) };
    if in_dev.is_null() {
        return false;
    }
    // SAFETY: as above: the device's IPv4 state lives while the lock is held.
    let mut ifa = unsafe { bindings::smc_rs_in_dev_ifa_list_rcu(in_dev) };
    while !ifa.is_null() {
        // SAFETY: an address of the list, live under the RCU read lock.
        if unsafe { bindings::smc_rs_inet_ifa_match(u32::from_ne_bytes(addr), ifa) } {
            return true;
        }
        // SAFETY: as above.
        ifa = unsafe { bindings::smc_rs_ifa_next_rcu(ifa) };
    }
    false
}
