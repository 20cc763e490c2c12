// SPDX-License-Identifier: GPL-2.0

//! Locks the kernel crate does not offer yet: a spin lock that also keeps
//! softirqs off (`spin_lock_bh`), for state shared between process context
//! and softirq callbacks (TCP's, and later completion handlers); and the
//! RCU read-side critical section.
//!
//! It plugs into the kernel crate's [`Lock`] as a [`Backend`], so it is
//! built in place with `pin_init`, its guard is `!Send`, and the protected
//! data is only reachable through the guard.

use super::bindings;
use kernel::sync::lock::{Backend, Lock};

/// A `spinlock_t` taken with `spin_lock_bh`: usable from process context and
/// softirq alike, never from hard interrupts.
pub(crate) type SpinLockBh<T> = Lock<T, SpinLockBhBackend>;

/// The [`Backend`] of [`SpinLockBh`].
pub(crate) struct SpinLockBhBackend;

// SAFETY: `lock` and `unlock` take and drop the same `spinlock_t`, which
// gives mutual exclusion between every context that may take it; the guard
// state is empty, so `relock` is trivially right.
unsafe impl Backend for SpinLockBhBackend {
    type State = kernel::bindings::spinlock_t;
    type GuardState = ();

    unsafe fn init(
        ptr: *mut Self::State,
        name: *const kernel::ffi::c_char,
        key: *mut kernel::bindings::lock_class_key,
    ) {
        // SAFETY: `ptr` is writable, `name` and `key` static (trait contract).
        unsafe { kernel::bindings::__spin_lock_init(ptr, name, key) }
    }

    unsafe fn lock(ptr: *mut Self::State) -> Self::GuardState {
        // SAFETY: initialised by `init` (trait contract).
        unsafe { bindings::smc_rs_spin_lock_bh(ptr.cast()) }
    }

    unsafe fn unlock(ptr: *mut Self::State, _guard_state: &Self::GuardState) {
        // SAFETY: held by the caller (trait contract).
        unsafe { bindings::smc_rs_spin_unlock_bh(ptr.cast()) }
    }
}

/// Creates a [`SpinLockBh`] initialiser with its own lock class, named after
/// the call site unless a name is given.
macro_rules! new_spinlock_bh {
    ($inner:expr $(, $name:literal)? $(,)?) => {
        $crate::sys::sync::SpinLockBh::new(
            $inner,
            ::kernel::optional_name!($($name)?),
            ::kernel::static_lock_class!(),
        )
    };
}
pub(crate) use new_spinlock_bh;

/// Softirqs kept off on this CPU, from `new` to drop (`local_bh_disable`,
/// `local_bh_enable`): around a plain spin lock, what `spin_lock_bh` does.
/// Not `Send`: it must end in the task that started it.
pub(crate) struct BhOff(core::marker::PhantomData<*mut ()>);

impl BhOff {
    /// Turns softirqs off (nested sections count). Process or softirq
    /// context, not hard interrupts.
    pub(crate) fn new() -> Self {
        // SAFETY: balanced by `drop`, in the same task (`!Send`).
        unsafe { bindings::smc_rs_local_bh_disable() };
        BhOff(core::marker::PhantomData)
    }
}

impl Drop for BhOff {
    fn drop(&mut self) {
        // SAFETY: turned off in `new`; softirqs that became pending run
        // here, as after `spin_unlock_bh`.
        unsafe { bindings::smc_rs_local_bh_enable() };
    }
}

/// An RCU read-side critical section, from `new` to drop. Not `Send`: it
/// must end on the CPU and task that started it.
pub(crate) struct RcuReadGuard(core::marker::PhantomData<*mut ()>);

impl RcuReadGuard {
    /// Enters the critical section.
    pub(crate) fn new() -> Self {
        // SAFETY: always allowed; left in `drop`.
        unsafe { bindings::smc_rs_rcu_read_lock() };
        RcuReadGuard(core::marker::PhantomData)
    }
}

impl Drop for RcuReadGuard {
    fn drop(&mut self) {
        // SAFETY: entered in `new` by this task.
        unsafe { bindings::smc_rs_rcu_read_unlock() };
    }
}

/// An immutable value that readers use under RCU and writers replace as a
/// whole: readers never wait, a replaced value is freed once no reader can
/// see it any more. For small, rarely changed, often read tables.
pub(crate) struct RcuPointer<T: Send + Sync + 'static> {
    ptr: core::sync::atomic::AtomicPtr<T>,
    _owns: core::marker::PhantomData<kernel::alloc::KBox<T>>,
}

impl<T: Send + Sync + 'static> RcuPointer<T> {
    /// Nothing published.
    pub(crate) const fn new() -> Self {
        RcuPointer {
            ptr: core::sync::atomic::AtomicPtr::new(core::ptr::null_mut()),
            _owns: core::marker::PhantomData,
        }
    }

    /// Calls `f` with the published value under the RCU read lock: `f` must
    /// not sleep, and cannot keep the reference.
    pub(crate) fn read<R>(&self, f: impl FnOnce(Option<&T>) -> R) -> R {
        let _rcu = RcuReadGuard::new();
        let p = self.ptr.load(core::sync::atomic::Ordering::Acquire);
        // A published value is freed only after a grace period that starts
        // after it was unpublished, and this read-side section began before.
        // SAFETY: so `p` is NULL or valid until `_rcu` goes.
        f(unsafe { p.as_ref() })
    }

    /// Publishes `new` (or nothing) and frees the old value after a grace
    /// period. May sleep.
    pub(crate) fn replace(&self, new: Option<kernel::alloc::KBox<T>>) {
        let newp = new.map_or(core::ptr::null_mut(), kernel::alloc::KBox::into_raw);
        let old = self.ptr.swap(newp, core::sync::atomic::Ordering::AcqRel);
        if old.is_null() {
            return;
        }
        // SAFETY: waits until every reader that may have seen `old` is done.
        unsafe { bindings::synchronize_rcu() };
        // SAFETY: `old` came from `KBox::into_raw` here and nobody sees it now.
        drop(unsafe { kernel::alloc::KBox::from_raw(old) });
    }
}

/// An `Arc` set at most once and then read without a lock for as long as
/// this lives (an SMC-D connection's peer DMB: named once by the
/// handshake, never changed after). Dropping it drops the `Arc`.
pub(crate) struct OnceArc<T: Send + Sync> {
    ptr: core::sync::atomic::AtomicPtr<T>,
    _owns: core::marker::PhantomData<kernel::sync::Arc<T>>,
}

impl<T: Send + Sync> OnceArc<T> {
    /// Not set.
    pub(crate) const fn new() -> Self {
        OnceArc {
            ptr: core::sync::atomic::AtomicPtr::new(core::ptr::null_mut()),
            _owns: core::marker::PhantomData,
        }
    }

    /// Sets it to `v`; gives `v` back when it was set already.
    pub(crate) fn set(&self, v: kernel::sync::Arc<T>) -> Result<(), kernel::sync::Arc<T>> {
        let raw = kernel::sync::Arc::into_raw(v).cast_mut();
        match self.ptr.compare_exchange(
            core::ptr::null_mut(),
            raw,
            core::sync::atomic::Ordering::AcqRel,
            core::sync::atomic::Ordering::Acquire,
        ) {
            Ok(_) => Ok(()),
            // SAFETY: `raw` came from `Arc::into_raw` above and was not
            // stored: its reference is still ours.
            Err(_) => Err(unsafe { kernel::sync::Arc::from_raw(raw) }),
        }
    }

    /// The value, once set.
    pub(crate) fn get(&self) -> Option<&T> {
        let p = self.ptr.load(core::sync::atomic::Ordering::Acquire);
        // A stored pointer holds a reference to its `Arc` that only `drop`
        // gives back, and it never changes once set: the value lives at
        // least as long as `&self`.
        // SAFETY: so `p` is NULL or valid for the borrow of `self`.
        unsafe { p.as_ref() }
    }
}

impl<T: Send + Sync> Drop for OnceArc<T> {
    fn drop(&mut self) {
        let p = *self.ptr.get_mut();
        if !p.is_null() {
            // SAFETY: `p` came from `Arc::into_raw` in `set`; its reference
            // is given back once, here.
            drop(unsafe { kernel::sync::Arc::from_raw(p) });
        }
    }
}
