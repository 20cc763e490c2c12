// SPDX-License-Identifier: GPL-2.0

//! A directory of ours under the debugfs root, with files that show (and,
//! where the mode allows, set) integers living in statics.
//!
//! debugfs is optional: without `CONFIG_DEBUG_FS`, or with debugfs turned
//! off at boot, the directory is absent and adding files does nothing. The
//! directory and its files go away when the [`DebugfsDir`] is dropped.

use super::bindings;
use core::ptr::NonNull;
use core::sync::atomic::{AtomicU32, AtomicU64};
use kernel::str::CStr;

/// Our directory under the debugfs root (or nothing, when debugfs is not
/// there).
///
/// # Invariants
///
/// `dir`, when set, is a directory `debugfs_create_dir` returned, not yet
/// removed.
pub(crate) struct DebugfsDir {
    dir: Option<NonNull<bindings::dentry>>,
}

// SAFETY: the dentry pointer is only passed to debugfs functions, which may
// be called from any thread; nothing is read through it here.
unsafe impl Send for DebugfsDir {}
// SAFETY: as for `Send`: `&DebugfsDir` only adds files, which debugfs
// serialises itself.
unsafe impl Sync for DebugfsDir {}

impl DebugfsDir {
    /// Creates directory `name` under the debugfs root; absent when
    /// debugfs is (the module works without it).
    pub(crate) fn new(name: &'static CStr) -> Self {
        // SAFETY: `name` is a NUL-terminated string; the helper returns a
        // new directory or NULL (debugfs absent, disabled, or no memory).
        let dir = unsafe { bindings::smc_rs_debugfs_create_dir(name.as_char_ptr().cast()) };
        DebugfsDir {
            dir: NonNull::new(dir),
        }
    }

    /// Whether the directory exists.
    pub(crate) fn is_present(&self) -> bool {
        self.dir.is_some()
    }

    /// Adds file `name` showing `value` in decimal; writable by root when
    /// `writable`. debugfs reads and writes the integer as one aligned
    /// 32-bit access, which is what an atomic access is on every
    /// architecture the kernel supports.
    pub(crate) fn add_u32(&self, name: &'static CStr, writable: bool, value: &'static AtomicU32) {
        let Some(dir) = self.dir else { return };
        let mode = if writable { 0o600 } else { 0o400 };
        // SAFETY: `dir` is live (invariant); `name` is NUL-terminated and
        // static; `value` is static, so it outlives the file (removed with
        // the directory at the latest), and debugfs only accesses it as
        // one aligned `u32`, which `AtomicU32` has the layout of.
        unsafe {
            bindings::smc_rs_debugfs_create_u32(
                name.as_char_ptr().cast(),
                mode,
                dir.as_ptr(),
                value.as_ptr(),
            )
        };
    }

    /// Adds read-only file `name` showing `value` in decimal.
    pub(crate) fn add_u64(&self, name: &'static CStr, value: &'static AtomicU64) {
        let Some(dir) = self.dir else { return };
        // SAFETY: as in `add_u32`: live directory, static name and value;
        // the file is read-only, so debugfs only reads the `u64`.
        unsafe {
            bindings::smc_rs_debugfs_create_u64(
                name.as_char_ptr().cast(),
                0o400,
                dir.as_ptr(),
                value.as_ptr(),
            )
        };
    }
}

impl Drop for DebugfsDir {
    fn drop(&mut self) {
        if let Some(dir) = self.dir.take() {
            // SAFETY: `dir` is live (invariant) and removed once; debugfs
            // waits for the file operations under way, so nobody reaches
            // the statics through it afterwards.
            unsafe { bindings::smc_rs_debugfs_remove(dir.as_ptr()) };
        }
    }
}
