// SPDX-License-Identifier: GPL-2.0

//! Counters kept per CPU and summed when read (as upstream keeps its
//! statistics): what the data path counts on every call touches only its
//! own CPU's copy, no cache line bounces between CPUs.

use super::bindings;
use super::errno::ENOMEM;
use core::ptr::NonNull;
use kernel::prelude::*;

/// `N` 64-bit counters per possible CPU. Additions wrap, so a gauge may be
/// kept by adding and subtracting (see [`sum_signed`](Self::sum_signed)).
///
/// # Invariants
///
/// `base` is a per-CPU allocation of `N` `u64`s (`__alloc_percpu`),
/// freed only in `drop`.
pub(crate) struct PerCpuCounters<const N: usize> {
    base: NonNull<u64>,
}

// SAFETY: each CPU writes only its own copy (with preemption-safe
// `this_cpu_add`); readers only read. The allocation is not tied to a task.
unsafe impl<const N: usize> Send for PerCpuCounters<N> {}
// SAFETY: as above.
unsafe impl<const N: usize> Sync for PerCpuCounters<N> {}

impl<const N: usize> PerCpuCounters<N> {
    /// `N` counters at 0 on every CPU. May sleep.
    pub(crate) fn new() -> Result<Self> {
        let size = N.checked_mul(core::mem::size_of::<u64>()).ok_or(ENOMEM)?;
        // SAFETY: a plain allocation; per-CPU memory comes zeroed.
        let base = unsafe { bindings::smc_rs_alloc_percpu(size, core::mem::align_of::<u64>()) };
        // INVARIANT: allocated just now.
        Ok(PerCpuCounters {
            base: NonNull::new(base.cast::<u64>()).ok_or(ENOMEM)?,
        })
    }

    /// Adds `n` (wrapping) to counter `idx` of the current CPU; an index
    /// out of range is ignored. Any context.
    pub(crate) fn add(&self, idx: usize, n: u64) {
        if idx >= N {
            return;
        }
        // SAFETY: `idx` is within the allocation of every CPU (invariant).
        unsafe { bindings::smc_rs_this_cpu_add_u64(self.base.as_ptr(), idx, n) };
    }

    /// Counter `idx` summed over all CPUs (wrapping); 0 out of range.
    pub(crate) fn sum(&self, idx: usize) -> u64 {
        if idx >= N {
            return 0;
        }
        let mut total = 0u64;
        // SAFETY: no arguments; returns a possible CPU or -1.
        let mut cpu = unsafe { bindings::smc_rs_next_possible_cpu(-1) };
        while cpu >= 0 {
            // SAFETY: `cpu` is a possible CPU and `idx` in range: the
            // counter lies within that CPU's copy (invariant).
            total = total.wrapping_add(unsafe {
                bindings::smc_rs_per_cpu_u64(self.base.as_ptr(), cpu, idx)
            });
            // SAFETY: as above.
            cpu = unsafe { bindings::smc_rs_next_possible_cpu(cpu) };
        }
        total
    }

    /// Counter `idx` summed over all CPUs as a gauge: additions and
    /// subtractions of different CPUs cancel, never below 0.
    pub(crate) fn sum_signed(&self, idx: usize) -> u64 {
        (self.sum(idx) as i64).max(0) as u64
    }
}

impl<const N: usize> Drop for PerCpuCounters<N> {
    fn drop(&mut self) {
        // SAFETY: allocated by `__alloc_percpu` (invariant), freed once.
        unsafe { bindings::free_percpu(self.base.as_ptr().cast()) };
    }
}
