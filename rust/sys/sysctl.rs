// SPDX-License-Identifier: GPL-2.0

//! Per network namespace sysctl tables (`register_net_sysctl_sz`): 32-bit
//! integer knobs under a `/proc/sys` path, one set per namespace.
//!
//! Each knob is a cell in memory the table owns. The kernel's
//! proc handlers read and write it through `ctl_table.data` as a plain
//! `int`; the module reads it with a relaxed atomic load, which is the
//! `READ_ONCE` C readers use for the same cells.

use super::bindings;
use super::errno::EBUSY;
use super::net::Net;
use core::ffi::{c_int, c_uint};
use core::sync::atomic::{AtomicBool, AtomicI32, AtomicPtr, Ordering};
use kernel::prelude::*;
use kernel::str::CStr;
use kernel::types::Opaque;

/// How `/proc/sys` shows and checks a knob (the kernel's proc handler).
#[derive(Clone, Copy)]
pub(crate) enum Handler {
    /// `proc_dointvec_minmax`: a signed value within `min..=max`.
    IntMinMax {
        min: &'static c_int,
        max: &'static c_int,
    },
    /// `proc_douintvec`: any unsigned value.
    UInt,
    /// `proc_douintvec_minmax`: an unsigned value within `min..=max`.
    UIntMinMax {
        min: &'static c_uint,
        max: &'static c_uint,
    },
    /// `proc_dointvec_jiffies`: jiffies in the cell, seconds in `/proc`.
    IntJiffies,
}

/// One knob of a table.
pub(crate) struct Knob {
    /// The file name under the table's path.
    pub(crate) name: &'static CStr,
    pub(crate) handler: Handler,
    /// The value of a new namespace, as `/proc` shows it (seconds for
    /// [`Handler::IntJiffies`], the bit pattern for unsigned knobs).
    pub(crate) initial: i32,
}

/// What the kernel's table points at: the cells and the entries.
struct Cells<const N: usize> {
    values: [AtomicI32; N],
    /// The kernel's view of the knobs, filled by `register`.
    table: [Opaque<bindings::ctl_table>; N],
}

/// The cells of `N` knobs and, once [`register`](Self::register)ed, their
/// sysctl table in one namespace; unregistered on drop. The cells and the
/// table are in their own allocation, so this value may move.
pub(crate) struct NetSysctlTable<const N: usize> {
    knobs: &'static [Knob; N],
    cells: KBox<Cells<N>>,
    /// Set by the first `register`: the table is filled by that call only.
    claimed: AtomicBool,
    /// The registration, null while not registered.
    header: AtomicPtr<bindings::ctl_table_header>,
}

// SAFETY: the values are atomics; the table is written once, by the
// `register` call that claimed it, before the kernel sees it, and only read
// (by the kernel) afterwards; `header` is an atomic pointer.
unsafe impl<const N: usize> Send for NetSysctlTable<N> {}
// SAFETY: as above.
unsafe impl<const N: usize> Sync for NetSysctlTable<N> {}

impl<const N: usize> NetSysctlTable<N> {
    /// Cells with the knobs' initial values, not registered.
    pub(crate) fn new(knobs: &'static [Knob; N]) -> Result<Self> {
        let values = core::array::from_fn(|i| {
            let initial = knobs
                .get(i)
                .map_or((Handler::UInt, 0), |k| (k.handler, k.initial));
            AtomicI32::new(match initial {
                (Handler::IntJiffies, secs) => seconds_to_jiffies(secs),
                (_, v) => v,
            })
        });
        let cells = KBox::new(
            Cells {
                values,
                table: [const { Opaque::uninit() }; N],
            },
            GFP_KERNEL,
        )?;
        Ok(NetSysctlTable {
            knobs,
            cells,
            claimed: AtomicBool::new(false),
            header: AtomicPtr::new(core::ptr::null_mut()),
        })
    }

    /// Registers the knobs as `path` (e.g. `net/smc`) in `net`. Once only;
    /// `EBUSY` after that, `ENOMEM` when the kernel refuses.
    pub(crate) fn register(&self, net: &Net, path: &'static CStr) -> Result {
        if self.claimed.swap(true, Ordering::AcqRel) {
            return Err(EBUSY.into());
        }
        let cells = &*self.cells;
        for ((slot, knob), value) in cells.table.iter().zip(self.knobs).zip(&cells.values) {
            let (proc_handler, maxlen, extra1, extra2) = knob.handler.parts();
            let entry = bindings::ctl_table {
                procname: knob.name.as_char_ptr().cast(),
                data: value.as_ptr().cast(),
                maxlen,
                mode: 0o644,
                proc_handler,
                poll: core::ptr::null_mut(),
                extra1,
                extra2,
            };
            // SAFETY: `claimed` gives this call alone the table, which the
            // kernel does not know yet, so the write races with nothing.
            unsafe { slot.get().write(entry) };
        }
        // `Opaque<T>` has `T`'s layout, so the array is an array of
        // `ctl_table`. It and the cells it points at are in `self.cells`,
        // which stays until `drop` has unregistered. The bounds are statics
        // the handlers only read; `path` is static.
        // SAFETY: `net` is live (invariant of `Net`), the table is filled.
        let header = unsafe {
            bindings::register_net_sysctl_sz(
                net.as_raw(),
                path.as_char_ptr().cast(),
                cells
                    .table
                    .as_ptr()
                    .cast_mut()
                    .cast::<bindings::ctl_table>(),
                N,
            )
        };
        if header.is_null() {
            return Err(kernel::error::code::ENOMEM);
        }
        self.header.store(header, Ordering::Release);
        Ok(())
    }

    /// Knob `index`'s current value (for unsigned knobs, its bit pattern;
    /// for [`Handler::IntJiffies`], jiffies); `None` past the table.
    pub(crate) fn get(&self, index: usize) -> Option<i32> {
        self.cells
            .values
            .get(index)
            .map(|v| v.load(Ordering::Relaxed))
    }

    /// Sets knob `index` (as another writer than `/proc` would); `false`
    /// past the table. The caller keeps within the knob's bounds.
    pub(crate) fn set(&self, index: usize, value: i32) -> bool {
        self.cells
            .values
            .get(index)
            .map(|v| v.store(value, Ordering::Relaxed))
            .is_some()
    }
}

impl<const N: usize> Drop for NetSysctlTable<N> {
    fn drop(&mut self) {
        let header = self.header.swap(core::ptr::null_mut(), Ordering::AcqRel);
        if !header.is_null() {
            // Waits for running proc handlers; afterwards nothing uses the
            // table or the cells, which go with `self.cells` after this.
            // SAFETY: `header` came from `register_net_sysctl_sz` and is
            // unregistered once (it was swapped out).
            unsafe { bindings::unregister_net_sysctl_table(header) };
        }
    }
}

impl Handler {
    /// The proc handler, `maxlen` and bounds of a `ctl_table` entry.
    fn parts(
        self,
    ) -> (
        bindings::proc_handler,
        c_int,
        *mut core::ffi::c_void,
        *mut core::ffi::c_void,
    ) {
        let int_len = core::mem::size_of::<c_int>() as c_int;
        let none = core::ptr::null_mut();
        let bound_int = |b: &'static c_int| core::ptr::from_ref(b).cast_mut().cast();
        let bound_uint = |b: &'static c_uint| core::ptr::from_ref(b).cast_mut().cast();
        match self {
            Handler::IntMinMax { min, max } => (
                Some(bindings::proc_dointvec_minmax),
                int_len,
                bound_int(min),
                bound_int(max),
            ),
            Handler::UInt => (Some(bindings::proc_douintvec), int_len, none, none),
            Handler::UIntMinMax { min, max } => (
                Some(bindings::proc_douintvec_minmax),
                int_len,
                bound_uint(min),
                bound_uint(max),
            ),
            Handler::IntJiffies => (Some(bindings::proc_dointvec_jiffies), int_len, none, none),
        }
    }
}

/// `secs` seconds in jiffies, as `proc_dointvec_jiffies` stores them.
fn seconds_to_jiffies(secs: i32) -> i32 {
    let ms = u32::try_from(secs).unwrap_or(0).saturating_mul(1000);
    i32::try_from(kernel::time::msecs_to_jiffies(ms)).unwrap_or(i32::MAX)
}

/// `jiffies` (a jiffies knob's value) in milliseconds; 0 for none or less.
pub(crate) fn jiffies_to_ms(jiffies: i32) -> u32 {
    let Ok(j) = core::ffi::c_ulong::try_from(jiffies) else {
        return 0;
    };
    // SAFETY: a pure conversion.
    unsafe { bindings::jiffies_to_msecs(j) }
}
