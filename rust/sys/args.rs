// SPDX-License-Identifier: GPL-2.0

//! The arguments of `proto_ops` calls: addresses, messages, poll tables and
//! option buffers. They belong to the call (the lifetime says so) and are
//! only read where the protocol needs a value, otherwise passed through.

use super::bindings;
use super::errno::{EFAULT, EINVAL};
use core::ffi::{c_char, c_int, c_uint};
use core::marker::PhantomData;
use kernel::error::Result;
use kernel::uaccess::UserSlice;

/// An address the socket layer copied into the kernel for `bind`/`connect`.
///
/// # Invariants
///
/// `ptr` is NULL or points at `len` readable bytes for `'a`.
#[derive(Clone, Copy)]
pub(crate) struct SockAddr<'a> {
    pub(super) ptr: *mut bindings::sockaddr,
    pub(super) len: c_int,
    _call: PhantomData<&'a ()>,
}

impl<'a> SockAddr<'a> {
    /// Wraps the address of a call.
    ///
    /// # Safety
    ///
    /// `ptr` must be NULL or point at `len` readable bytes for `'a`.
    pub(super) unsafe fn new(ptr: *mut bindings::sockaddr, len: c_int) -> Self {
        // INVARIANT: the caller's promise.
        SockAddr {
            ptr,
            len,
            _call: PhantomData,
        }
    }

    /// The bytes of the address.
    fn bytes(&self) -> &'a [u8] {
        if self.ptr.is_null() || self.len <= 0 {
            return &[];
        }
        // SAFETY: `len` bytes are readable at `ptr` for `'a` (invariant).
        unsafe { core::slice::from_raw_parts(self.ptr.cast::<u8>(), self.len as usize) }
    }

    /// The IP address bytes of an `AF_INET` (4 bytes) or `AF_INET6`
    /// (16 bytes) address long enough to hold them.
    pub(crate) fn ip(&self) -> Option<&'a [u8]> {
        let bytes = self.bytes();
        let family = u32::from(u16::from_ne_bytes([*bytes.first()?, *bytes.get(1)?]));
        let (off, n) = match family {
            bindings::AF_INET => (4, 4),
            bindings::AF_INET6 => (8, 16),
            _ => return None,
        };
        bytes.get(off..off + n)
    }

    /// Copies the address, for a handshake that goes on after the call.
    pub(crate) fn save(&self) -> SavedAddr {
        let mut saved = SavedAddr {
            bytes: [0; 128],
            len: 0,
        };
        let src = self.bytes();
        let len = src.len().min(saved.bytes.len());
        if let (Some(dst), Some(src)) = (saved.bytes.get_mut(..len), src.get(..len)) {
            dst.copy_from_slice(src);
        }
        saved.len = len as c_int;
        saved
    }
}

/// A copy of a `connect` address, for a handshake that goes on after the call.
#[derive(Clone, Copy, Debug)]
#[repr(C, align(8))]
pub(crate) struct SavedAddr {
    /// Room and alignment of a `struct sockaddr_storage`.
    bytes: [u8; 128],
    len: c_int,
}

impl SavedAddr {
    /// The saved address, as a call argument.
    pub(crate) fn addr(&mut self) -> SockAddr<'_> {
        // SAFETY: `len <= 128` bytes of `bytes` are readable while borrowed.
        unsafe { SockAddr::new(self.bytes.as_mut_ptr().cast(), self.len) }
    }
}

/// Where `getname` writes an address (a kernel `sockaddr_storage`).
pub(crate) struct SockAddrOut<'a> {
    pub(super) ptr: *mut bindings::sockaddr,
    _call: PhantomData<&'a mut ()>,
}

impl SockAddrOut<'_> {
    pub(super) fn new(ptr: *mut bindings::sockaddr) -> Self {
        SockAddrOut {
            ptr,
            _call: PhantomData,
        }
    }
}

/// The message of a `sendmsg`/`recvmsg` call, passed through untouched.
///
/// # Invariants
///
/// `ptr` is the live `msghdr` of the current call.
pub(crate) struct MsgHdr<'a> {
    pub(super) ptr: *mut bindings::msghdr,
    _call: PhantomData<&'a mut ()>,
}

impl MsgHdr<'_> {
    /// # Safety
    ///
    /// `ptr` must be the live `msghdr` of the current call.
    pub(super) unsafe fn new(ptr: *mut bindings::msghdr) -> Self {
        // INVARIANT: the caller's promise.
        MsgHdr {
            ptr,
            _call: PhantomData,
        }
    }

    /// The data iterator of the call (user memory for `sendmsg` and
    /// `recvmsg` from user space), for the copy functions.
    pub(super) fn iov_iter(&mut self) -> *mut bindings::iov_iter {
        // SAFETY: `ptr` is the live msghdr of the current call (invariant);
        // only the field's address is taken.
        unsafe { core::ptr::addr_of_mut!((*self.ptr).msg_iter) }
    }

    /// The `MSG_*` flags of the call (`MSG_DONTWAIT` for non-blocking files).
    pub(crate) fn flags(&self) -> u32 {
        // SAFETY: `ptr` is the live msghdr of the current call (invariant).
        unsafe { (*self.ptr).msg_flags }
    }

    /// Adds `flags` to what `recvmsg` reports back (`MSG_OOB`, ...).
    pub(crate) fn add_flags(&mut self, flags: u32) {
        // SAFETY: `ptr` is the live msghdr of the current call (invariant),
        // which the call may write.
        unsafe { (*self.ptr).msg_flags |= flags };
    }

    /// Copies `data` into the caller's buffers; returns how many bytes fit.
    pub(crate) fn copy_out(&mut self, data: &[u8]) -> usize {
        // SAFETY: `data` is a live slice of `data.len()` bytes; the iterator
        // is the live one of the call (invariant).
        unsafe { bindings::smc_rs_copy_to_iter(data.as_ptr().cast(), data.len(), self.iov_iter()) }
    }
}

/// The file and poll table of a `poll` call.
pub(crate) struct PollTable<'a> {
    pub(super) file: *mut bindings::file,
    pub(super) wait: *mut bindings::poll_table_struct,
    _call: PhantomData<&'a mut ()>,
}

impl PollTable<'_> {
    pub(super) fn new(file: *mut bindings::file, wait: *mut bindings::poll_table_struct) -> Self {
        PollTable {
            file,
            wait,
            _call: PhantomData,
        }
    }
}

/// The option value of a `setsockopt` call (user or kernel memory).
#[derive(Clone, Copy)]
pub(crate) struct SockoptIn<'a> {
    pub(super) val: bindings::sockptr_t,
    pub(super) len: c_uint,
    _call: PhantomData<&'a ()>,
}

impl SockoptIn<'_> {
    pub(super) fn new(val: bindings::sockptr_t, len: c_uint) -> Self {
        SockoptIn {
            val,
            len,
            _call: PhantomData,
        }
    }

    /// Reads an `int` option value, as `setsockopt` handlers do.
    pub(crate) fn read_int(self) -> Result<i32> {
        if (self.len as usize) < core::mem::size_of::<c_int>() {
            return Err(EINVAL.into());
        }
        let mut v: c_int = 0;
        // `copy_from_sockptr` checks the (user or kernel) source itself.
        // SAFETY: `v` is a valid destination of `size_of::<c_int>()` bytes.
        let left = unsafe {
            bindings::smc_rs_copy_from_sockptr(
                (&mut v as *mut c_int).cast(),
                self.val,
                core::mem::size_of::<c_int>(),
            )
        };
        if left != 0 {
            return Err(EFAULT.into());
        }
        Ok(v)
    }
}

/// The user buffers of a `getsockopt` call.
pub(crate) struct SockoptOut<'a> {
    pub(super) val: *mut c_char,
    pub(super) len: *mut c_int,
    _call: PhantomData<&'a mut ()>,
}

impl SockoptOut<'_> {
    pub(super) fn new(val: *mut c_char, len: *mut c_int) -> Self {
        SockoptOut {
            val,
            len,
            _call: PhantomData,
        }
    }

    /// Writes an `int` option value back to user space, as `getsockopt` does.
    pub(crate) fn write_int(self, v: i32) -> Result {
        const INT: usize = core::mem::size_of::<c_int>();
        let len: i32 = UserSlice::new(self.len as usize, INT).reader().read()?;
        if len < 0 {
            return Err(EINVAL.into());
        }
        let len = (len as usize).min(INT);
        UserSlice::new(self.len as usize, INT)
            .writer()
            .write(&(len as i32))?;
        UserSlice::new(self.val as usize, len)
            .writer()
            .write_slice(v.to_ne_bytes().get(..len).unwrap_or(&[]))
    }
}
