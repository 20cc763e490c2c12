// SPDX-License-Identifier: GPL-2.0

//! Random numbers from the kernel's generator.

use super::bindings;

/// A random 16-bit number.
pub(crate) fn random_u16() -> u16 {
    // SAFETY: callable from any context once the kernel runs.
    unsafe { bindings::get_random_u16() }
}

/// Fills `buf` with random bytes.
pub(crate) fn fill(buf: &mut [u8]) {
    // SAFETY: `buf` is valid for writes of its length.
    unsafe { bindings::get_random_bytes(buf.as_mut_ptr().cast(), buf.len()) };
}
