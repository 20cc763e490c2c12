// SPDX-License-Identifier: GPL-2.0

//! Registration of the AF_SMC protocol family: the `struct proto` our
//! sockets are allocated from, the `net_proto_family` that creates them, and
//! the same sockets as protocol `IPPROTO_SMC` of `AF_INET` and `AF_INET6`.
//!
//! Each registration is a value that undoes itself on drop; [`Registration`]
//! holds them in the reverse order of their making, so a failure part-way
//! and module unload both unwind by drop order.

use super::bindings;
use super::errno::EEXIST;
use super::family::{Adapter, SocketFamily};
use super::sock::SmcSk;
use super::socktable::{InetTables, Published, Tables};
use core::ffi::{c_char, c_int, c_uint};
use core::marker::PhantomData;
use kernel::error::{to_result, Result};
use kernel::prelude::*;
use kernel::ThisModule;

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
        let tables = KBox::pin_init(Tables::new(), GFP_KERNEL)?;
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
