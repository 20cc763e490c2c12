// SPDX-License-Identifier: GPL-2.0

//! An RDMA device (`struct ib_device`): its limits, ports and GIDs.

use super::super::bindings;
use super::super::errno::{is_err_or_null, ENODEV};
use super::super::net::{Net, ETH_ALEN};
use super::super::sync::RcuReadGuard;
use core::ffi::{c_int, CStr};
use core::ptr::NonNull;
use kernel::error::{to_result, Result};
use kernel::types::{AlwaysRefCounted, Opaque};

/// An RDMA device.
///
/// # Invariants
///
/// A `&IbDevice` is a live `struct ib_device`: borrowed from an ib_core
/// callback that runs while the device is registered, or held by an
/// `ARef<IbDevice>` (which keeps the memory, not the registration).
#[repr(transparent)]
pub(crate) struct IbDevice(Opaque<bindings::ib_device>);

// SAFETY: ib_core devices are used from any context; the core and the
// driver do their own locking.
unsafe impl Send for IbDevice {}
// SAFETY: as above.
unsafe impl Sync for IbDevice {}

// SAFETY: `get_device`/`put_device` on the embedded `struct device` keep the
// `ib_device` allocated while the count is above zero.
unsafe impl AlwaysRefCounted for IbDevice {
    fn inc_ref(&self) {
        // SAFETY: live device (invariant); `dev` is the member in use of the
        // union (`coredev` starts with the same `struct device`).
        unsafe {
            bindings::get_device(core::ptr::addr_of_mut!(
                (*self.as_raw()).__bindgen_anon_1.dev
            ))
        };
    }

    unsafe fn dec_ref(obj: NonNull<Self>) {
        let dev = obj.as_ptr().cast::<bindings::ib_device>();
        // SAFETY: the caller owns an increment (trait contract).
        unsafe { bindings::put_device(core::ptr::addr_of_mut!((*dev).__bindgen_anon_1.dev)) };
    }
}

/// What a device can do, as the driver reports it (`struct ib_device_attr`):
/// the link code sizes its queues from these, never from one driver's numbers.
#[derive(Clone, Copy)]
pub(crate) struct DeviceCaps {
    /// Work requests per queue.
    pub(crate) max_qp_wr: u32,
    /// Scatter/gather entries per send work request.
    pub(crate) max_send_sge: u32,
    /// Scatter/gather entries per receive work request (1 on erdma).
    pub(crate) max_recv_sge: u32,
    /// Entries per completion queue.
    pub(crate) max_cqe: u32,
    /// Largest memory region.
    pub(crate) max_mr_size: u64,
    /// Page sizes memory regions can use (a bit per size).
    pub(crate) page_size_cap: u64,
}

/// The state of a port (`enum ib_port_state`), and what SMC needs of it.
#[derive(Clone, Copy, Debug)]
pub(crate) struct PortAttr {
    /// The port is up (`IB_PORT_ACTIVE`).
    pub(crate) active: bool,
    /// The active MTU as `enum ib_mtu` (1 = 256 ... 5 = 4096).
    pub(crate) active_mtu: u32,
    /// Entries in the GID table.
    pub(crate) gid_table_len: u32,
}

/// A GID of a port and what it belongs to.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct GidEntry {
    /// The 16 bytes of the GID (an IPv6 or IPv4-mapped address for RoCE).
    pub(crate) gid: [u8; 16],
    /// Its index in the port's GID table.
    pub(crate) index: u16,
    /// RoCE v2 (routable, UDP-encapsulated) rather than RoCE v1 or IB.
    pub(crate) roce_v2: bool,
    /// The interface index of its network device (0: none).
    pub(crate) ifindex: i32,
    /// The namespace of that device, comparable with [`Net::id`] of a live
    /// namespace (0: none).
    pub(crate) net_id: usize,
    /// The MAC address of that device (zero: none).
    pub(crate) mac: [u8; ETH_ALEN],
}

impl IbDevice {
    /// Borrows a device ib_core handed us.
    ///
    /// # Safety
    ///
    /// `dev` must be a live device for `'a`.
    pub(super) unsafe fn from_raw<'a>(dev: *mut bindings::ib_device) -> &'a IbDevice {
        // SAFETY: transparent wrapper; liveness is the caller's promise.
        unsafe { &*dev.cast::<IbDevice>() }
    }

    pub(super) fn as_raw(&self) -> *mut bindings::ib_device {
        self.0.get()
    }

    /// The device's name (`rxe0`, `mlx5_0`, ...).
    pub(crate) fn name(&self) -> &CStr {
        // SAFETY: a live device has a NUL-terminated name that lives as
        // long as it (renames are not reported to us while we borrow it).
        unsafe { CStr::from_ptr(bindings::smc_rs_ib_device_name(self.as_raw()).cast()) }
    }

    /// The limits the driver reports.
    pub(crate) fn caps(&self) -> DeviceCaps {
        // SAFETY: `attrs` of a registered device is set and read-only.
        let a = unsafe { &(*self.as_raw()).attrs };
        DeviceCaps {
            max_qp_wr: a.max_qp_wr.max(0) as u32,
            max_send_sge: a.max_send_sge.max(0) as u32,
            max_recv_sge: a.max_recv_sge.max(0) as u32,
            max_cqe: a.max_cqe.max(0) as u32,
            max_mr_size: a.max_mr_size,
            page_size_cap: a.page_size_cap,
        }
    }

    /// The port numbers of the device.
    pub(crate) fn ports(&self) -> core::ops::RangeInclusive<u32> {
        // SAFETY: pure reads of a live device's fixed fields.
        let (first, last) = unsafe {
            (
                bindings::smc_rs_rdma_start_port(self.as_raw()),
                bindings::smc_rs_rdma_end_port(self.as_raw()),
            )
        };
        first..=last
    }

    /// Queries the state of `port` (may sleep).
    pub(crate) fn query_port(&self, port: u32) -> Result<PortAttr> {
        if !self.ports().contains(&port) {
            return Err(ENODEV.into());
        }
        // SAFETY: all-zero is a valid `ib_port_attr` to be filled in.
        let mut attr: bindings::ib_port_attr = unsafe { core::mem::zeroed() };
        // SAFETY: live device, valid port, `attr` is writable.
        to_result(unsafe { bindings::ib_query_port(self.as_raw(), port, &mut attr) })?;
        Ok(PortAttr {
            active: attr.state == bindings::ib_port_state_IB_PORT_ACTIVE,
            active_mtu: attr.active_mtu,
            gid_table_len: attr.gid_tbl_len.max(0) as u32,
        })
    }

    /// The valid entries of `port`'s GID table, in index order, passed to
    /// `f` one at a time. Does not sleep.
    pub(crate) fn for_each_gid(&self, port: u32, table_len: u32, mut f: impl FnMut(GidEntry)) {
        for index in 0..table_len.min(u32::from(u16::MAX)) {
            if let Some(entry) = self.gid(port, index) {
                f(entry);
            }
        }
    }

    /// Entry `index` of `port`'s GID table, if it is valid. Does not sleep.
    pub(crate) fn gid(&self, port: u32, index: u32) -> Option<GidEntry> {
        if !self.ports().contains(&port) {
            return None;
        }
        let index = c_int::try_from(index).ok()?;
        // SAFETY: live device and port; an empty slot is an error pointer.
        let attr = unsafe { bindings::rdma_get_gid_attr(self.as_raw(), port, index) };
        if is_err_or_null(attr) {
            return None;
        }
        // SAFETY: a counted reference to a valid entry, which we own.
        Some(unsafe { take_entry(attr) })
    }

    /// The entry of `port` that holds `gid` as a RoCE v2 GID, on the
    /// interface `ifindex` of `net`, or on any interface for `None`. Does
    /// not sleep.
    pub(crate) fn find_roce_v2_gid(
        &self,
        port: u32,
        gid: &[u8; 16],
        netdev: Option<(&Net, i32)>,
    ) -> Option<GidEntry> {
        if !self.ports().contains(&port) {
            return None;
        }
        // SAFETY: all-zero is a valid `union ib_gid`, filled below.
        let mut raw_gid: bindings::ib_gid = unsafe { core::mem::zeroed() };
        raw_gid.raw = *gid;
        let attr = {
            let _rcu = RcuReadGuard::new();
            let ndev = match netdev {
                // SAFETY: `net` is live; the RCU read lock is held.
                Some((net, ifindex)) => unsafe {
                    let d = bindings::dev_get_by_index_rcu(net.as_raw(), ifindex);
                    if d.is_null() {
                        return None;
                    }
                    d
                },
                None => core::ptr::null_mut(),
            };
            // `ndev` is only compared with the entries' devices, and stays
            // valid while the RCU read lock is held.
            // SAFETY: live device and valid port; `raw_gid` is readable.
            unsafe {
                bindings::rdma_find_gid_by_port(
                    self.as_raw(),
                    &raw_gid,
                    bindings::ib_gid_type_IB_GID_TYPE_ROCE_UDP_ENCAP,
                    port,
                    ndev,
                )
            }
        };
        if is_err_or_null(attr) {
            return None;
        }
        // SAFETY: a counted reference to a valid entry, which we own.
        Some(unsafe { take_entry(attr) })
    }

    /// Whether the device may be used by sockets of `net` (its namespace,
    /// or any in shared mode).
    pub(crate) fn usable_in(&self, net: &Net) -> bool {
        // SAFETY: live device and namespace; a pure check.
        unsafe { bindings::rdma_dev_access_netns(self.as_raw(), net.as_raw()) }
    }
}

/// Reads a GID entry and drops the reference to it.
///
/// # Safety
///
/// `attr` must be a counted reference to a valid entry, owned by the caller.
unsafe fn take_entry(attr: *const bindings::ib_gid_attr) -> GidEntry {
    // SAFETY: a valid entry (contract), whose fields are fixed.
    let (gid, index, roce_v2) = unsafe {
        (
            (*attr).gid.raw,
            (*attr).index,
            (*attr).gid_type == bindings::ib_gid_type_IB_GID_TYPE_ROCE_UDP_ENCAP,
        )
    };
    let (ifindex, net_id, mac) = {
        let _rcu = RcuReadGuard::new();
        // SAFETY: valid entry; called under the RCU read lock.
        let ndev = unsafe { bindings::rdma_read_gid_attr_ndev_rcu(attr) };
        if is_err_or_null(ndev) {
            (0, 0, [0; ETH_ALEN])
        } else {
            let mut mac = [0u8; ETH_ALEN];
            // A live net device while the RCU read lock is held; Ethernet
            // devices (all RoCE ones) have `ETH_ALEN` bytes of address.
            // SAFETY: so its fields are readable.
            unsafe {
                if usize::from((*ndev).addr_len) >= ETH_ALEN && !(*ndev).dev_addr.is_null() {
                    core::ptr::copy_nonoverlapping((*ndev).dev_addr, mac.as_mut_ptr(), ETH_ALEN);
                }
                (
                    (*ndev).ifindex,
                    bindings::smc_rs_dev_net(ndev) as usize,
                    mac,
                )
            }
        }
    };
    // SAFETY: drops the reference the caller handed over.
    unsafe { bindings::rdma_put_gid_attr(attr) };
    GidEntry {
        gid,
        index,
        roce_v2,
        ifindex,
        net_id,
        mac,
    }
}

/// While alive, no one else changes smc_rs's list of RDMA devices (whose
/// readers use RCU, not this lock). May sleep.
pub(crate) struct DeviceListLock(core::marker::PhantomData<*mut ()>);

impl DeviceListLock {
    /// Takes the lock.
    pub(crate) fn lock() -> Self {
        // SAFETY: a static mutex, released in `drop` by this task.
        unsafe { bindings::smc_rs_ib_devices_lock() };
        DeviceListLock(core::marker::PhantomData)
    }
}

impl Drop for DeviceListLock {
    fn drop(&mut self) {
        // SAFETY: taken in `lock` by this task.
        unsafe { bindings::smc_rs_ib_devices_unlock() };
    }
}
