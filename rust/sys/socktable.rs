// SPDX-License-Identifier: GPL-2.0

//! The registered family's C tables and its list of sockets: what the
//! socket calls ([`family`](super::family)) and sock_diag
//! ([`diag`](super::diag)) find while the family is registered
//! ([`registration`](super::registration) makes, fills and publishes them).

use super::bindings;
use super::errno::EBUSY;
use super::sync::{new_spinlock_bh, SpinLockBh};
use core::ptr::null_mut;
use core::sync::atomic::{AtomicPtr, Ordering};
use kernel::error::Result;
use kernel::prelude::*;
use kernel::types::Opaque;

/// The C tables of a registered family. They live in a pinned allocation
/// owned by [`Registration`](super::registration::Registration), and
/// sockets point into them; the module cannot be unloaded while a socket
/// exists (each holds a reference on `owner`).
#[pin_data]
pub(super) struct Tables {
    pub(super) proto: Opaque<bindings::proto>,
    pub(super) ops: Opaque<bindings::proto_ops>,
    pub(super) family: Opaque<bindings::net_proto_family>,
    /// The same sockets made through `AF_INET` and `AF_INET6`.
    pub(super) inet: [InetTables; 2],
    /// Every socket of the family from creation to `close()`, newest first
    /// (what sock_diag lists), IPv4 ones and IPv6 ones apart as upstream
    /// keeps them; each entry holds a socket reference.
    #[pin]
    sockets: SpinLockBh<SockLists>,
}

impl Tables {
    /// Tables to fill before they are registered, with empty socket lists.
    pub(super) fn new() -> impl PinInit<Self> {
        let inet = || InetTables {
            proto: Opaque::uninit(),
            ops: Opaque::uninit(),
            protosw: Opaque::uninit(),
        };
        pin_init!(Tables {
            proto: Opaque::uninit(),
            ops: Opaque::uninit(),
            family: Opaque::uninit(),
            inet: [inet(), inet()],
            sockets <- new_spinlock_bh!(
                SockLists([bindings::hlist_head { first: null_mut() }; 2]),
                "smc_rs::sockets"
            ),
        })
    }
}

/// Two `hlist`s of `struct sock` linked through `sk_node`: IPv4, IPv6.
struct SockLists([bindings::hlist_head; 2]);

// SAFETY: the lists are only reached under their lock; the sockets in them
// are made for use from any context.
unsafe impl Send for SockLists {}

/// Which list a socket goes to: IPv6 for `SMCPROTO_SMC6` and `AF_INET6`.
///
/// # Safety
///
/// `sk` must be a live socket.
unsafe fn list_of(sk: *mut bindings::sock) -> usize {
    // SAFETY: fields set at creation (caller: live socket).
    let (protocol, family) = unsafe { ((*sk).sk_protocol, (*sk).__sk_common.skc_family) };
    usize::from(protocol == 1 || u32::from(family) == bindings::AF_INET6)
}

/// What `socket(AF_INET or AF_INET6, SOCK_STREAM, IPPROTO_SMC)` finds: an
/// `inet_protosw` pointing at a proto of the family's own and the same
/// `proto_ops`, with the family's number.
pub(super) struct InetTables {
    pub(super) proto: Opaque<bindings::proto>,
    pub(super) ops: Opaque<bindings::proto_ops>,
    pub(super) protosw: Opaque<bindings::inet_protosw>,
}

// SAFETY: the tables are written once before they are published and only
// read afterwards (by the socket layer and by `install`), except for the
// protosw list links, which the inet layer changes under its own lock.
unsafe impl Send for Tables {}
// SAFETY: as above: shared access is read-only.
unsafe impl Sync for Tables {}

/// The registered family's tables, for `create`, which gets no context pointer.
static TABLES: AtomicPtr<Tables> = AtomicPtr::new(null_mut());

/// The registered tables.
fn registered() -> Option<&'static Tables> {
    let tables = TABLES.load(Ordering::Acquire);
    // Published only while a `Registration` owns them, which outlives every
    // socket of the family (the module cannot go while one exists) and
    // every sock_diag dump (the handler is unregistered first).
    // SAFETY: so they are valid for as long as anyone can call this.
    unsafe { tables.as_ref() }
}

/// Adds a new socket to the family's list (taking a reference for it).
///
/// # Safety
///
/// `sk` must be a live socket of the family, not in the list.
pub(super) unsafe fn hash(sk: *mut bindings::sock) {
    if let Some(t) = registered() {
        let mut lists = t.sockets.lock();
        // SAFETY: a live socket (caller).
        let i = unsafe { list_of(sk) };
        if let Some(head) = lists.0.get_mut(i) {
            // SAFETY: `sk_node` of a socket in no list; the lock is held.
            unsafe { bindings::smc_rs_sk_add_node(sk, head) };
        }
    }
}

/// Takes a socket off the family's list (dropping the list's reference)
/// if it is there.
///
/// # Safety
///
/// `sk` must be a live socket of the family on which the caller holds a
/// reference of its own.
pub(super) unsafe fn unhash(sk: *mut bindings::sock) {
    if let Some(t) = registered() {
        let _list = t.sockets.lock();
        // SAFETY: the lock is held; the caller's reference keeps `sk` alive.
        unsafe { bindings::smc_rs_sk_del_node_init(sk) };
    }
}

/// Calls `f` for each socket of the family in `net`, IPv4 ones first, then
/// newest first, from the `skip`th on, with the list locked (softirqs off: `f` must not
/// sleep); stops at the first error. Returns how many were visited
/// (skipped ones included) before `f` failed or the list ended.
pub(super) fn for_each_sock(
    net: *mut bindings::net,
    skip: usize,
    mut f: impl FnMut(*mut bindings::sock) -> Result,
) -> usize {
    let Some(t) = registered() else {
        return 0;
    };
    let lists = t.sockets.lock();
    let mut n = 0;
    let offset = core::mem::offset_of!(bindings::sock_common, __bindgen_anon_6.skc_node);
    for head in lists.0.iter() {
        let mut node = head.first;
        while !node.is_null() {
            // Each node is the `skc_node` of a listed, live socket (the list
            // holds a reference; `struct sock` starts with its `sock_common`).
            // SAFETY: so stepping back to the socket stays inside it.
            let sk = unsafe { node.cast::<u8>().sub(offset).cast::<bindings::sock>() };
            // SAFETY: as above.
            node = unsafe { (*node).next };
            // SAFETY: a live socket's namespace pointer.
            if unsafe { bindings::smc_rs_sock_net(sk) } != net {
                continue;
            }
            if n >= skip && f(sk).is_err() {
                return n;
            }
            n += 1;
        }
    }
    n
}

/// The `struct proto` and `proto_ops` of the registered family, while it is
/// registered. `sock_unregister` waits for running `create`/`accept`
/// calls, which are the only callers, so the pointers stay valid for them.
pub(super) fn tables() -> Option<(*mut bindings::proto, *mut bindings::proto_ops)> {
    let tables = TABLES.load(Ordering::Acquire);
    if tables.is_null() {
        return None;
    }
    // SAFETY: published by a live `Registration` (see above).
    Some(unsafe { ((*tables).proto.get(), (*tables).ops.get()) })
}

/// `TABLES` published; cleared on drop.
pub(super) struct Published;

impl Published {
    pub(super) fn new(tables: &Tables) -> Result<Self> {
        TABLES
            .compare_exchange(
                null_mut(),
                (tables as *const Tables).cast_mut(),
                Ordering::AcqRel,
                Ordering::Acquire,
            )
            .map_err(|_| EBUSY)?;
        Ok(Published)
    }
}

impl Drop for Published {
    fn drop(&mut self) {
        TABLES.store(null_mut(), Ordering::Release);
    }
}
