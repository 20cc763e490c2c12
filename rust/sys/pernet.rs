// SPDX-License-Identifier: GPL-2.0

//! Per network namespace data (`register_pernet_subsys` with an id and a
//! size): one `T` per namespace, made when the namespace is, dropped when it
//! goes.

use super::bindings;
use super::errno::EBUSY;
use super::net::Net;
use core::ffi::{c_int, c_uint};
use core::marker::PhantomData;
use core::ptr::NonNull;
use core::sync::atomic::{AtomicU32, Ordering};
use kernel::error::{Error, Result};
use kernel::prelude::*;
use kernel::types::{ARef, Opaque};

/// A type kept once per network namespace, built in place in the slot the
/// kernel allocates for it.
pub(crate) trait PernetData: Send + Sync + 'static {
    /// The initial value for a new namespace.
    fn init() -> impl PinInit<Self, Error>;

    /// Where the kernel writes the id of this type's registration (before
    /// it calls `init` for any namespace); 0 while not registered (the
    /// kernel never hands out 0).
    fn id() -> &'static AtomicU32;

    /// Runs once `init`'s value is in place in `net`'s slot, where it stays
    /// until the namespace goes (for what needs the namespace or a fixed
    /// address, such as a sysctl table). On error the value is dropped and
    /// the namespace is not made. Undo belongs in `Drop`.
    fn setup(self: Pin<&Self>, _net: &Net) -> Result {
        Ok(())
    }
}

struct Tables(Opaque<bindings::pernet_operations>);

// SAFETY: written before registration, read-only afterwards.
unsafe impl Send for Tables {}
// SAFETY: as above.
unsafe impl Sync for Tables {}

/// A registered `T` per namespace; unregisters (dropping every `T`) on drop.
pub(crate) struct PernetRegistration<T: PernetData> {
    tables: Pin<KBox<Tables>>,
    _data: PhantomData<T>,
}

impl<T: PernetData> PernetRegistration<T> {
    /// Registers `T`: every existing and future namespace gets one.
    pub(crate) fn new() -> Result<Self> {
        if T::id().load(Ordering::Acquire) != 0 {
            return Err(EBUSY.into());
        }
        let tables = KBox::pin(Tables(Opaque::uninit()), GFP_KERNEL)?;
        // All-zero is a `pernet_operations` without callbacks. The kernel
        // writes the id into `T::id()`, a static that outlives the
        // registration, while no one else uses it.
        // SAFETY: not shared yet, so writing the operations is exclusive.
        unsafe {
            let ops = tables.0.get();
            ops.write(core::mem::zeroed());
            (*ops).init = Some(init_trampoline::<T>);
            (*ops).exit = Some(exit_trampoline::<T>);
            (*ops).id = T::id().as_ptr().cast::<c_uint>();
            (*ops).size = core::mem::size_of::<T>();
        }
        // SAFETY: `ops` is initialised and pinned for the registration's life.
        let rc = unsafe { bindings::register_pernet_subsys(tables.0.get()) };
        if rc != 0 {
            T::id().store(0, Ordering::Release);
            return Err(Error::from_errno(rc));
        }
        Ok(Self {
            tables,
            _data: PhantomData,
        })
    }
}

impl<T: PernetData> Drop for PernetRegistration<T> {
    fn drop(&mut self) {
        // SAFETY: registered in `new`; runs `exit` for every namespace.
        unsafe { bindings::unregister_pernet_subsys(self.tables.0.get()) };
        T::id().store(0, Ordering::Release);
    }
}

/// Calls `f` with `net`'s `T`; `None` while `T` is not registered.
pub(crate) fn with<T: PernetData, R>(net: &Net, f: impl FnOnce(&T) -> R) -> Option<R> {
    let id = T::id().load(Ordering::Acquire);
    if id == 0 {
        return None;
    }
    // The slot holds an initialised `T` until the namespace exits, which
    // cannot happen while a socket of it (our caller's) exists.
    // SAFETY: `net` is live (invariant of `Net`) and `T` is registered as `id`.
    let data = unsafe { &*bindings::smc_rs_net_generic(net.as_raw(), id).cast::<T>() };
    Some(f(data))
}

/// `T` of one namespace, found once: it holds the namespace, so reading
/// it later takes no RCU read-side section (`net_generic`'s), for data
/// paths that count into `T` on every call.
pub(crate) struct NetData<T: PernetData> {
    _net: ARef<Net>,
    data: NonNull<T>,
}

// SAFETY: it only hands out `&T`, and `T` is `Send + Sync`; the namespace
// reference may be dropped from any thread.
unsafe impl<T: PernetData> Send for NetData<T> {}
// SAFETY: as above.
unsafe impl<T: PernetData> Sync for NetData<T> {}

impl<T: PernetData> NetData<T> {
    /// `net`'s `T`; `None` while `T` is not registered.
    pub(crate) fn new(net: &Net) -> Option<Self> {
        let id = T::id().load(Ordering::Acquire);
        if id == 0 {
            return None;
        }
        // SAFETY: `net` is live (invariant of `Net`) and `T` is registered
        // as `id`, so its slot is allocated and initialised.
        let data = unsafe { bindings::smc_rs_net_generic(net.as_raw(), id) }.cast::<T>();
        Some(Self {
            _net: ARef::from(net),
            data: NonNull::new(data)?,
        })
    }

    /// The value; `None` once `T` is no longer registered.
    pub(crate) fn get(&self) -> Option<&T> {
        if T::id().load(Ordering::Acquire) == 0 {
            return None;
        }
        // The slot's address is fixed for the namespace's life (only the
        // array of slot addresses is replaced under RCU), and it holds an
        // initialised `T` until the namespace exits, which the reference
        // held here prevents, or `T` is unregistered, checked above as
        // `with` does.
        // SAFETY: so `data` is valid for the borrow of `self`.
        Some(unsafe { self.data.as_ref() })
    }
}

/// # Safety
///
/// Called by the kernel with a new namespace whose slot for `T` is allocated.
unsafe extern "C" fn init_trampoline<T: PernetData>(net: *mut bindings::net) -> c_int {
    // The kernel wrote the id before calling `init`.
    let id = T::id().load(Ordering::Acquire);
    // The slot is `size_of::<T>()` kzalloc-aligned bytes that stay in place
    // until the namespace goes (`exit` drops the value); on failure the
    // kernel frees it without calling `exit`, and nothing was initialised.
    // SAFETY: `net` is the namespace being made.
    let slot = unsafe { bindings::smc_rs_net_generic(net, id).cast::<T>() };
    // SAFETY: so it is ours to initialise in place.
    if let Err(e) = unsafe { T::init().__pinned_init(slot) } {
        return e.to_errno();
    }
    // The value stays in the slot, unmoved, until `exit_trampoline`
    // drops it (or below, on failure, when the kernel calls no `exit`).
    // SAFETY: initialised above; pinned as said.
    let data = unsafe { Pin::new_unchecked(&*slot) };
    // SAFETY: the kernel passes a live namespace.
    let net_ref = unsafe { Net::from_raw(net) };
    match T::setup(data, net_ref) {
        Ok(()) => 0,
        Err(e) => {
            // SAFETY: initialised above; its only borrow (`data`) ended
            // with `setup`; the kernel calls no `exit` for it, so this is
            // the one drop.
            unsafe { core::ptr::drop_in_place(slot) };
            e.to_errno()
        }
    }
}

/// # Safety
///
/// Called by the kernel when a namespace goes; its `T` was initialised.
unsafe extern "C" fn exit_trampoline<T: PernetData>(net: *mut bindings::net) {
    let id = T::id().load(Ordering::Acquire);
    if id == 0 {
        return;
    }
    // SAFETY: initialised in `init_trampoline`; nobody uses it any more.
    unsafe { core::ptr::drop_in_place(bindings::smc_rs_net_generic(net, id).cast::<T>()) };
}
