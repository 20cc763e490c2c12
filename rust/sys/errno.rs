// SPDX-License-Identifier: GPL-2.0

//! Every errno smc_rs returns or compares against, by name, in one place.
//!
//! The kernel crate names only some codes as `Error` constants, and cannot
//! build others in a `const`; [`Errno`] is a plain constant that converts to
//! an [`Error`] and compares with one, so callers write `Err(EINVAL.into())`
//! and `e == EISCONN` whatever the code.

use super::bindings as b;
use core::ffi::c_int;
use kernel::error::Error;

/// A positive errno value, as the uapi headers define it.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(crate) struct Errno(u32);

impl Errno {
    /// The negative value C functions return for it.
    pub(crate) const fn to_neg(self) -> c_int {
        -self.positive()
    }

    /// The positive value, for C functions that take one (`tcp_abort`).
    pub(crate) const fn positive(self) -> c_int {
        // The constants below are small positive numbers: no overflow.
        self.0 as c_int
    }
}

impl From<Errno> for Error {
    fn from(e: Errno) -> Error {
        Error::from_errno(e.to_neg())
    }
}

impl PartialEq<Errno> for Error {
    fn eq(&self, other: &Errno) -> bool {
        self.to_errno() == other.to_neg()
    }
}

macro_rules! errnos {
    ($($name:ident: $what:literal,)*) => {$(
        #[doc = $what]
        pub(crate) const $name: Errno = Errno(b::$name);
    )*};
}

errnos! {
    EAFNOSUPPORT: "Address family not supported by protocol.",
    EAGAIN: "Try again (non-blocking call, timeout).",
    EALREADY: "Operation already in progress.",
    EBUSY: "Device or resource busy.",
    ECONNABORTED: "Software caused connection abort.",
    ECONNRESET: "Connection reset by peer.",
    EEXIST: "Already exists.",
    EFAULT: "Bad address.",
    EINTR: "Interrupted system call.",
    EINPROGRESS: "Operation now in progress.",
    EINVAL: "Invalid argument.",
    EISCONN: "Transport endpoint is already connected.",
    EMSGSIZE: "Message too long.",
    ENOBUFS: "No buffer space available.",
    ENODEV: "No such device.",
    ENOENT: "No such file or directory (entry).",
    ENOLINK: "Link has been severed.",
    ENOSPC: "No space left (table full).",
    ENOIOCTLCMD: "No such ioctl command (internal).",
    ENOMEM: "Out of memory.",
    ENOTCONN: "Transport endpoint is not connected.",
    ENOPROTOOPT: "Protocol not available.",
    EOPNOTSUPP: "Operation not supported on transport endpoint.",
    EPIPE: "Broken pipe.",
    EPROTO: "Protocol error.",
    EPROTONOSUPPORT: "Protocol not supported.",
    ERANGE: "Out of range (table full).",
    ESOCKTNOSUPPORT: "Socket type not supported.",
    ETIMEDOUT: "Connection timed out.",
}

/// `IS_ERR_OR_NULL` for pointers from C: NULL or the last page of the
/// address space, where the kernel encodes errnos.
pub(in crate::sys) fn is_err_or_null<T>(p: *const T) -> bool {
    const MAX_ERRNO: usize = 4095;
    p.is_null() || (p as usize) > usize::MAX - MAX_ERRNO
}
