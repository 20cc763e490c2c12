// SPDX-License-Identifier: GPL-2.0

//! An RDMA device (`struct ib_device`): its limits, ports and GIDs.

use super::super::bindings;
use super::super::errno::ENODEV;
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
    /// The MAC address of that network device (zero: none).
    pub(crate) mac: [u8; 6],
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
    /// `f` one at a time (may sleep between entries).
    pub(crate) fn for_each_gid(&self, port: u32, table_len: u32, mut f: impl FnMut(GidEntry)) {
        if !self.ports().contains(&port) {
            return;
        }
        for index in 0..table_len.min(u32::from(u16::MAX)) {
            // SAFETY: live device and port; an empty slot is an error pointer.
            let attr = unsafe { bindings::rdma_get_gid_attr(self.as_raw(), port, index as c_int) };
            if is_err_or_null(attr) {
                continue;
            }
            // `attr` is a counted reference to a valid entry until put.
            // SAFETY: so its fields are readable.
            let (gid, roce_v2) = unsafe {
                (
                    (*attr).gid.raw,
                    (*attr).gid_type == bindings::ib_gid_type_IB_GID_TYPE_ROCE_UDP_ENCAP,
                )
            };
            let (ifindex, mac) = {
                let _rcu = RcuReadGuard::new();
                // SAFETY: valid entry; called under the RCU read lock.
                let ndev = unsafe { bindings::rdma_read_gid_attr_ndev_rcu(attr) };
                if is_err_or_null(ndev) {
                    (0, [0; 6])
                } else {
                    let mut mac = [0u8; 6];
                    // A live net device while the RCU read lock is held; an
                    // Ethernet device (RoCE) has a 6-byte address.
                    // SAFETY: so its fields and address bytes are readable.
                    unsafe {
                        let addr = (*ndev).dev_addr;
                        if !addr.is_null() && (*ndev).addr_len == 6 {
                            core::ptr::copy_nonoverlapping(addr, mac.as_mut_ptr(), 6);
                        }
                        ((*ndev).ifindex, mac)
                    }
                }
            };
            // SAFETY: drops the reference `rdma_get_gid_attr` took.
            unsafe { bindings::rdma_put_gid_attr(attr) };
            f(GidEntry {
                gid,
                index: index as u16,
                roce_v2,
                ifindex,
                mac,
            });
        }
    }

    /// The first valid GID of `port` that `pred` accepts (may sleep).
    #[allow(dead_code)] // Until the SMC-R link code picks its GID with it.
    pub(crate) fn find_gid(
        &self,
        port: u32,
        mut pred: impl FnMut(&GidEntry) -> bool,
    ) -> Option<GidEntry> {
        let table_len = self.query_port(port).ok()?.gid_table_len;
        let mut found = None;
        self.for_each_gid(port, table_len, |g| {
            if found.is_none() && pred(&g) {
                found = Some(g);
            }
        });
        found
    }
}

/// `IS_ERR_OR_NULL` for pointers from C: NULL or the last page of the
/// address space, where the kernel encodes errnos.
fn is_err_or_null<T>(p: *const T) -> bool {
    const MAX_ERRNO: usize = 4095;
    p.is_null() || (p as usize) > usize::MAX - MAX_ERRNO
}
