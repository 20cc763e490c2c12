// SPDX-License-Identifier: GPL-2.0

//! Registration of the AF_SMC protocol family: the `struct proto` our
//! sockets are allocated from, the `net_proto_family` that creates them, and
//! the same sockets as protocol `IPPROTO_SMC` of `AF_INET` and `AF_INET6`.
//!
//! Each registration is a value that undoes itself on drop; [`Registration`]
//! holds them in the reverse order of their making, so a failure part-way
//! and module unload both unwind by drop order.

use super::bindings;
use super::errno::{EBUSY, EEXIST};
use super::family::{Adapter, SocketFamily};
use super::sock::SmcSk;
use super::sync::{new_spinlock_bh, SpinLockBh};
use core::ffi::{c_char, c_int, c_uint};
use core::marker::PhantomData;
use core::ptr::null_mut;
use core::sync::atomic::{AtomicPtr, Ordering};
use kernel::error::{to_result, Result};
use kernel::prelude::*;
use kernel::types::Opaque;
use kernel::ThisModule;

/// The C tables of a registered family. They live in a pinned allocation
/// owned by [`Registration`], and sockets point into them; the module cannot
/// be unloaded while a socket exists (each holds a reference on `owner`).
#[pin_data]
struct Tables {
    proto: Opaque<bindings::proto>,
    ops: Opaque<bindings::proto_ops>,
    family: Opaque<bindings::net_proto_family>,
    /// The same sockets made through `AF_INET` and `AF_INET6`.
    inet: [InetTables; 2],
    /// Every socket of the family from creation to `close()`, newest first
    /// (what sock_diag lists), IPv4 ones and IPv6 ones apart as upstream
    /// keeps them; each entry holds a socket reference.
    #[pin]
    sockets: SpinLockBh<SockLists>,
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
struct InetTables {
    proto: Opaque<bindings::proto>,
    ops: Opaque<bindings::proto_ops>,
    protosw: Opaque<bindings::inet_protosw>,
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

/// Fills a `struct proto` for sockets of `size` bytes.
///
/// # Safety
///
/// `proto` must be valid for writes and not yet registered.
unsafe fn fill_proto(proto: *mut bindings::proto, name: &CStr, module: &ThisModule, size: usize) {
    // SAFETY: the caller's promise; all-zero is "no callback" for the rest.
    unsafe {
        proto.write(core::mem::zeroed());
        let pname = name.as_bytes_with_nul();
        for (d, s) in (*proto).name.iter_mut().zip(pname.iter()) {
            *d = *s as c_char;
        }
        (*proto).owner = module.as_ptr().cast();
        (*proto).obj_size = size as c_uint;
    }
}

/// `TABLES` published; cleared on drop.
struct Published;

impl Published {
    fn new(tables: &Tables) -> Result<Self> {
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

/// A registered `struct proto`.
struct ProtoRegistration(*mut bindings::proto);

impl ProtoRegistration {
    /// # Safety
    ///
    /// `proto` must be filled and stay valid and pinned until the value is dropped.
    unsafe fn new(proto: *mut bindings::proto) -> Result<Self> {
        // SAFETY: the caller's promise.
        to_result(unsafe { bindings::proto_register(proto, 1) })?;
        Ok(ProtoRegistration(proto))
    }
}

impl Drop for ProtoRegistration {
    fn drop(&mut self) {
        // SAFETY: registered in `new`, unregistered once.
        unsafe { bindings::proto_unregister(self.0) };
    }
}

/// A registered protocol family.
struct FamilyRegistration(c_int);

impl FamilyRegistration {
    /// # Safety
    ///
    /// `family` must be filled and stay valid and pinned until the value is dropped.
    unsafe fn new(family: *mut bindings::net_proto_family) -> Result<Self> {
        // `sock_register` fails with -EEXIST when the family is taken (smc.ko).
        // SAFETY: the caller's promise.
        let rc = unsafe { bindings::sock_register(family) };
        // SAFETY: as above.
        let number = unsafe { (*family).family };
        if rc == EEXIST.to_neg() {
            pr_err!(
                "protocol family {} is already registered (is smc.ko loaded?)\n",
                number
            );
        }
        to_result(rc)?;
        Ok(FamilyRegistration(number))
    }
}

impl Drop for FamilyRegistration {
    fn drop(&mut self) {
        // `sock_unregister` waits for concurrent `create` calls (RCU); the
        // module reference each socket holds means none is left at unload.
        // SAFETY: registered in `new`, unregistered once.
        unsafe { bindings::sock_unregister(self.0) };
    }
}

/// A registered `IPPROTO_SMC` protocol of `AF_INET` or `AF_INET6`, with its proto.
struct InetRegistration {
    protosw: *mut bindings::inet_protosw,
    v6: bool,
    /// Dropped after the protosw is gone.
    _proto: ProtoRegistration,
}

impl InetRegistration {
    /// # Safety
    ///
    /// `t` must be filled and stay valid and pinned until the value is dropped.
    unsafe fn new(t: &InetTables, v6: bool) -> Result<Self> {
        // SAFETY: the caller's promise.
        let proto = unsafe { ProtoRegistration::new(t.proto.get())? };
        let protosw = t.protosw.get();
        // The protosw points at the registered proto and at ops that live as
        // long; both stay until `drop`.
        // SAFETY: so the inet layer may use them until unregistered.
        to_result(unsafe {
            if v6 {
                bindings::inet6_register_protosw(protosw)
            } else {
                bindings::inet_register_protosw(protosw);
                0
            }
        })?;
        Ok(InetRegistration {
            protosw,
            v6,
            _proto: proto,
        })
    }
}

impl Drop for InetRegistration {
    fn drop(&mut self) {
        // Unregistering waits for concurrent `socket()` calls (RCU).
        // SAFETY: registered in `new`, unregistered once.
        unsafe {
            if self.v6 {
                bindings::inet6_unregister_protosw(self.protosw);
            } else {
                bindings::inet_unregister_protosw(self.protosw);
            }
        }
    }
}

/// A registered protocol family; unregisters on drop, in field order.
pub(crate) struct Registration<F: SocketFamily> {
    _inet6: InetRegistration,
    _inet: InetRegistration,
    _family: FamilyRegistration,
    _proto: ProtoRegistration,
    _published: Published,
    /// Freed last, once nothing points into it.
    _tables: Pin<KBox<Tables>>,
    _f: PhantomData<F>,
}

// SAFETY: the raw pointers point into `_tables`, owned by the value; the
// registrations may be undone from any thread.
unsafe impl<F: SocketFamily> Send for Registration<F> {}
// SAFETY: shared access does nothing.
unsafe impl<F: SocketFamily> Sync for Registration<F> {}

impl<F: SocketFamily> Registration<F> {
    /// Registers protocol family `family` under `name`, and the same sockets
    /// as protocol `IPPROTO_SMC` of `AF_INET` and `AF_INET6`.
    pub(crate) fn new(
        family: u32,
        name: &'static CStr,
        module: &'static ThisModule,
    ) -> Result<Self> {
        let tables = Self::tables(family, name, module)?;
        let published = Published::new(&tables)?;
        // Every table lives, pinned, in `tables`, which the result owns and
        // drops after all registrations; on an early return the locals
        // unwind in reverse order, `tables` last.
        // SAFETY: so each registration's pointers outlive it.
        let (proto, fam, inet, inet6) = unsafe {
            let proto = ProtoRegistration::new(tables.proto.get())?;
            let fam = FamilyRegistration::new(tables.family.get())?;
            let [t4, t6] = &tables.inet;
            let inet = InetRegistration::new(t4, false)?;
            let inet6 = InetRegistration::new(t6, true)?;
            (proto, fam, inet, inet6)
        };
        Ok(Registration {
            _inet6: inet6,
            _inet: inet,
            _family: fam,
            _proto: proto,
            _published: published,
            _tables: tables,
            _f: PhantomData,
        })
    }

    /// Builds the C tables of the family.
    fn tables(
        family: u32,
        name: &'static CStr,
        module: &'static ThisModule,
    ) -> Result<Pin<KBox<Tables>>> {
        let inet = || InetTables {
            proto: Opaque::uninit(),
            ops: Opaque::uninit(),
            protosw: Opaque::uninit(),
        };
        let tables = KBox::pin_init(
            pin_init!(Tables {
                proto: Opaque::uninit(),
                ops: Opaque::uninit(),
                family: Opaque::uninit(),
                inet: [inet(), inet()],
                sockets <- new_spinlock_bh!(
                    SockLists([bindings::hlist_head { first: null_mut() }; 2]),
                    "smc_rs::sockets"
                ),
            }),
            GFP_KERNEL,
        )?;
        let size = core::mem::size_of::<SmcSk<F>>();
        // An IPv6 socket keeps its `ipv6_pinfo` right after our state.
        let pinfo_align = core::mem::align_of::<bindings::ipv6_pinfo>();
        let pinfo_offset = size.div_ceil(pinfo_align) * pinfo_align;
        let size6 = pinfo_offset + core::mem::size_of::<bindings::ipv6_pinfo>();
        let ops = |pf: u32| bindings::proto_ops {
            owner: module.as_ptr().cast(),
            ..Adapter::<F>::proto_ops(pf)
        };
        // Every field is a C struct for which all-zero means "no callback".
        // SAFETY: the tables are not shared yet, so writing them is exclusive.
        unsafe {
            fill_proto(tables.proto.get(), name, module, size);
            tables.ops.get().write(ops(family));

            let fam = tables.family.get();
            fam.write(core::mem::zeroed());
            (*fam).family = family as c_int;
            (*fam).owner = module.as_ptr().cast();
            (*fam).create = Some(Adapter::<F>::create);

            let inet_kinds = [
                (kernel::c_str!("INET_SMC"), bindings::PF_INET, size, 0),
                (
                    kernel::c_str!("INET6_SMC"),
                    bindings::PF_INET6,
                    size6,
                    pinfo_offset,
                ),
            ];
            for (t, (pname, pf, psize, offset)) in tables.inet.iter().zip(inet_kinds) {
                let proto = t.proto.get();
                fill_proto(proto, pname, module, psize);
                (*proto).ipv6_pinfo_offset = offset as c_uint;
                (*proto).init = Some(Adapter::<F>::inet_init);
                (*proto).unhash = Some(Adapter::<F>::unhash);
                t.ops.get().write(ops(pf));
                let sw = t.protosw.get();
                sw.write(core::mem::zeroed());
                (*sw).type_ = bindings::sock_type_SOCK_STREAM as u16;
                (*sw).protocol = bindings::IPPROTO_SMC as u16;
                (*sw).prot = proto;
                (*sw).ops = t.ops.get();
            }
        }
        Ok(tables)
    }
}
