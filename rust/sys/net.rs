// SPDX-License-Identifier: GPL-2.0

//! Network namespaces (`struct net`), borrowed from the socket that lives in
//! one or held by a counted [`ARef`].

use super::bindings;
use core::ptr::NonNull;
use kernel::types::{AlwaysRefCounted, Opaque};

/// The size of an interface name with its NUL (`IFNAMSIZ`).
pub(crate) const IFNAMSIZ: usize = bindings::IFNAMSIZ as usize;

/// A network namespace.
///
/// # Invariants
///
/// A `&Net` is a live namespace for its lifetime: it is borrowed from a live
/// socket, from the socket layer's `create` call, or from an `ARef<Net>`.
#[repr(transparent)]
pub(crate) struct Net(Opaque<bindings::net>);

// SAFETY: a namespace is shared by every task and socket in it; the kernel
// synchronises its own fields.
unsafe impl Send for Net {}
// SAFETY: as above.
unsafe impl Sync for Net {}

impl Net {
    /// Borrows a namespace the kernel handed us.
    ///
    /// # Safety
    ///
    /// `net` must be a live namespace for `'a`.
    pub(crate) unsafe fn from_raw<'a>(net: *mut bindings::net) -> &'a Net {
        // SAFETY: `Net` is a transparent wrapper; liveness is the caller's promise.
        unsafe { &*net.cast::<Net>() }
    }

    /// The initial namespace, which lives as long as the kernel.
    pub(crate) fn init() -> &'static Net {
        // SAFETY: `init_net` is static and never goes away.
        unsafe { Net::from_raw(bindings::smc_rs_init_net()) }
    }

    /// Whether this is the initial namespace.
    pub(crate) fn is_init(&self) -> bool {
        self.id() == Net::init().id()
    }

    /// The name of interface `ifindex` of this namespace, NUL-padded
    /// (`IFNAMSIZ` bytes), or `None` when there is no such interface. Does
    /// not sleep.
    pub(crate) fn netdev_name(&self, ifindex: i32) -> Option<[u8; IFNAMSIZ]> {
        let _rcu = super::sync::RcuReadGuard::new();
        // SAFETY: a live namespace (type invariant); the RCU read lock is held.
        let dev = unsafe { bindings::dev_get_by_index_rcu(self.as_raw(), ifindex) };
        if dev.is_null() {
            return None;
        }
        // A device found under the RCU read lock, still held, has a
        // NUL-terminated name of at most `IFNAMSIZ` bytes.
        // SAFETY: so reading it up to its NUL stays inside it.
        let name = unsafe { core::ffi::CStr::from_ptr(bindings::smc_rs_netdev_name(dev)) };
        let mut out = [0u8; IFNAMSIZ];
        for (d, s) in out.iter_mut().zip(name.to_bytes()) {
            *d = *s;
        }
        Some(out)
    }

    /// The raw namespace pointer.
    pub(crate) fn as_raw(&self) -> *mut bindings::net {
        self.0.get()
    }

    /// A value that tells namespaces apart for as long as this one lives
    /// (for hashing; never turned back into a pointer).
    pub(crate) fn id(&self) -> usize {
        self.as_raw() as usize
    }

    /// The namespace's cookie (`net->net_cookie`), as netlink reports it.
    pub(crate) fn cookie(&self) -> u64 {
        // SAFETY: a live namespace (type invariant).
        unsafe { bindings::smc_rs_net_cookie(self.as_raw()) }
    }
}

// SAFETY: `get_net`/`put_net` keep the namespace alive while the count is
// above zero, and `put_net` frees it (after an RCU grace period) at zero.
unsafe impl AlwaysRefCounted for Net {
    fn inc_ref(&self) {
        // SAFETY: `self` is live (type invariant), so its count is not zero.
        unsafe { bindings::smc_rs_get_net(self.as_raw()) };
    }

    unsafe fn dec_ref(obj: NonNull<Self>) {
        // SAFETY: the caller owns an increment (trait contract).
        unsafe { bindings::smc_rs_put_net(obj.as_ptr().cast()) };
    }
}

/// The length of an Ethernet address.
pub(crate) const ETH_ALEN: usize = 6;
