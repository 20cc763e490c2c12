// SPDX-License-Identifier: GPL-2.0

//! Sockets: the internal TCP socket (the clcsock) every SMC socket owns, the
//! user-facing `struct socket` our `proto_ops` are called with, and the
//! arguments those calls carry, which are only ever passed through.

use super::bindings;
use super::sock::{Net, SmcSk, SockGuard, SockState};
use core::ffi::{c_char, c_int, c_uint, c_ulong};
use core::marker::PhantomData;
use core::ptr::{null_mut, NonNull};
use kernel::error::{to_result, Error, Result};
use kernel::uaccess::UserSlice;

/// Makes an [`Error`] from one of the positive errno constants of the bindings.
pub(crate) fn errno(code: u32) -> Error {
    // `code` is a small positive errno constant, so the negation is in range.
    Error::from_errno(-(code as c_int))
}

/// Turns the return value of a socket call into a `Result`, keeping
/// non-negative values (byte counts, lengths, poll masks).
fn to_count(ret: c_int) -> Result<i32> {
    if ret < 0 {
        Err(Error::from_errno(ret))
    } else {
        Ok(ret)
    }
}

/// An address the socket layer copied into the kernel for `bind`/`connect`.
#[derive(Clone, Copy)]
pub(crate) struct SockAddr<'a> {
    ptr: *mut bindings::sockaddr,
    len: c_int,
    _call: PhantomData<&'a ()>,
}

impl<'a> SockAddr<'a> {
    /// The IP address bytes of an `AF_INET` (4 bytes) or `AF_INET6`
    /// (16 bytes) address long enough to hold them.
    pub(crate) fn ip(&self) -> Option<&'a [u8]> {
        if self.ptr.is_null() || self.len < 2 {
            return None;
        }
        // The socket layer copied `len` bytes of the caller's address to `ptr`.
        // SAFETY: `len` was checked above to cover the family field.
        let family = u32::from(unsafe { (*self.ptr).sa_family });
        let (off, n) = match family {
            bindings::AF_INET => (4, 4),
            bindings::AF_INET6 => (8, 16),
            _ => return None,
        };
        if (self.len as usize) < off + n {
            return None;
        }
        // SAFETY: `off + n <= len` bytes are readable at `ptr` for the call.
        Some(unsafe { core::slice::from_raw_parts(self.ptr.cast::<u8>().add(off), n) })
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

impl SockAddr<'_> {
    /// Copies the address.
    pub(crate) fn save(&self) -> SavedAddr {
        let mut saved = SavedAddr {
            bytes: [0; 128],
            len: 0,
        };
        let len = (self.len.max(0) as usize).min(saved.bytes.len());
        if !self.ptr.is_null() {
            // `ptr` is the socket layer's copy of the address.
            // SAFETY: `len` bytes are readable there and fit; no overlap.
            unsafe {
                core::ptr::copy_nonoverlapping(self.ptr.cast::<u8>(), saved.bytes.as_mut_ptr(), len)
            };
        }
        saved.len = len as c_int;
        saved
    }
}

impl SavedAddr {
    /// The saved address, as a call argument.
    pub(crate) fn addr(&mut self) -> SockAddr<'_> {
        SockAddr::new(self.bytes.as_mut_ptr().cast(), self.len)
    }
}

/// Where `getname` writes an address (a kernel `sockaddr_storage`).
pub(crate) struct SockAddrOut<'a> {
    ptr: *mut bindings::sockaddr,
    _call: PhantomData<&'a mut ()>,
}

/// The message of a `sendmsg`/`recvmsg` call, passed through untouched.
pub(crate) struct MsgHdr<'a> {
    ptr: *mut bindings::msghdr,
    _call: PhantomData<&'a mut ()>,
}

impl MsgHdr<'_> {
    /// The `MSG_*` flags of the call (`MSG_DONTWAIT` for non-blocking files).
    pub(crate) fn flags(&self) -> u32 {
        // SAFETY: `ptr` is the live msghdr of the current call.
        unsafe { (*self.ptr).msg_flags as u32 }
    }
}

/// The file and poll table of a `poll` call.
pub(crate) struct PollTable<'a> {
    file: *mut bindings::file,
    wait: *mut bindings::poll_table_struct,
    _call: PhantomData<&'a mut ()>,
}

/// The option value of a `setsockopt` call (user or kernel memory).
#[derive(Clone, Copy)]
pub(crate) struct SockoptIn<'a> {
    val: bindings::sockptr_t,
    len: c_uint,
    _call: PhantomData<&'a ()>,
}

/// The user buffers of a `getsockopt` call.
pub(crate) struct SockoptOut<'a> {
    val: *mut c_char,
    len: *mut c_int,
    _call: PhantomData<&'a mut ()>,
}

/// An in-kernel TCP socket owned by smc_rs (the clcsock).
///
/// # Invariants
///
/// `sock` is a live socket with non-null `ops` and `sk`, owned by this value
/// and released exactly once, in `drop`. Its `file` is NULL whenever it is
/// released.
pub(crate) struct KernelSocket {
    sock: NonNull<bindings::socket>,
}

// SAFETY: a `struct socket` may be used and released from any thread; the
// socket layer does its own locking.
unsafe impl Send for KernelSocket {}
// SAFETY: all methods take `&self` and call socket functions that are safe to
// call concurrently (each takes the TCP socket lock itself).
unsafe impl Sync for KernelSocket {}

impl KernelSocket {
    /// Creates a TCP socket of `family` (`AF_INET` or `AF_INET6`) in `net`.
    pub(crate) fn new_tcp(net: Net, family: u32) -> Result<Self> {
        let mut res: *mut bindings::socket = null_mut();
        // SAFETY: `net` is live (invariant of `Net`); `res` is a valid out pointer.
        to_result(unsafe {
            bindings::sock_create_kern(
                net.as_raw(),
                family as c_int,
                bindings::sock_type_SOCK_STREAM as c_int,
                bindings::IPPROTO_TCP as c_int,
                &mut res,
            )
        })?;
        let sock = NonNull::new(res).ok_or_else(|| errno(bindings::ENOMEM))?;
        // Its TCP timers may run after we release it, so it must pin the
        // namespace like a user socket does.
        // SAFETY: a socket fresh from `sock_create_kern` has a live `sk`.
        unsafe { bindings::sk_net_refcnt_upgrade((*res).sk) };
        // INVARIANT: created above, `file` is NULL, owned from here on.
        Ok(Self { sock })
    }

    fn raw(&self) -> *mut bindings::socket {
        self.sock.as_ptr()
    }

    fn ops(&self) -> &bindings::proto_ops {
        // SAFETY: `ops` of a live socket is non-null and static (invariant).
        unsafe { &*(*self.raw()).ops }
    }

    /// Asks TCP to carry the SMC experimental option on the SYN (or on the
    /// SYN-ACKs of a listener, for SYNs that carried it).
    pub(crate) fn set_syn_smc(&self, on: bool) {
        // TCP reads the flag only when it builds or answers a SYN.
        // SAFETY: live TCP socket (invariant), not yet connecting or listening.
        unsafe { bindings::smc_rs_tcp_set_syn_smc(self.sk_raw(), on) };
    }

    /// After the handshake: whether the peer answered with the SMC option.
    pub(crate) fn peer_offered_smc(&self) -> bool {
        // SAFETY: live TCP socket (invariant).
        unsafe { bindings::smc_rs_tcp_syn_smc(self.sk_raw()) }
    }

    fn sk_raw(&self) -> *mut bindings::sock {
        // SAFETY: a live socket's `sk` is set (invariant).
        unsafe { (*self.raw()).sk }
    }

    /// Sends all of `data` (blocking).
    pub(crate) fn send_all(&self, data: &[u8]) -> Result {
        let mut vec = bindings::kvec {
            iov_base: data.as_ptr() as *mut _,
            iov_len: data.len(),
        };
        // SAFETY: all-zero is an empty message header (no name, no control).
        let mut msg: bindings::msghdr = unsafe { core::mem::zeroed() };
        msg.msg_flags = bindings::MSG_NOSIGNAL as c_uint;
        // SAFETY: live socket; `vec` describes `data`, which outlives the call.
        let n = unsafe { bindings::kernel_sendmsg(self.raw(), &mut msg, &mut vec, 1, data.len()) };
        match to_count(n)? as usize {
            n if n == data.len() => Ok(()),
            _ => Err(errno(bindings::EPIPE)),
        }
    }

    /// Receives exactly `buf.len()` bytes, waiting at most `timeout_ms`.
    /// Returns fewer bytes only when the peer closed; times out with `EAGAIN`.
    pub(crate) fn recv_exact(&self, buf: &mut [u8], timeout_ms: u32) -> Result<usize> {
        self.recv_waitall(buf, timeout_ms, 0)
    }

    /// Like [`Self::recv_exact`], but leaves the bytes in the socket
    /// (`MSG_PEEK`). A timeout with some bytes there returns those.
    pub(crate) fn peek_exact(&self, buf: &mut [u8], timeout_ms: u32) -> Result<usize> {
        self.recv_waitall(buf, timeout_ms, bindings::MSG_PEEK)
    }

    fn recv_waitall(&self, buf: &mut [u8], timeout_ms: u32, flags: u32) -> Result<usize> {
        let mut vec = bindings::kvec {
            iov_base: buf.as_mut_ptr().cast(),
            iov_len: buf.len(),
        };
        // SAFETY: all-zero is an empty message header.
        let mut msg: bindings::msghdr = unsafe { core::mem::zeroed() };
        let timeo = kernel::time::msecs_to_jiffies(timeout_ms) as core::ffi::c_long;
        // The receive timeout is ours to set: no one else receives on it.
        // SAFETY: live socket (invariant).
        let old = unsafe { bindings::smc_rs_sk_swap_rcvtimeo(self.sk_raw(), timeo) };
        // SAFETY: live socket; `vec` describes `buf`, which outlives the call.
        let n = unsafe {
            bindings::kernel_recvmsg(
                self.raw(),
                &mut msg,
                &mut vec,
                1,
                buf.len(),
                (bindings::MSG_WAITALL | flags) as c_int,
            )
        };
        // SAFETY: as above.
        unsafe { bindings::smc_rs_sk_swap_rcvtimeo(self.sk_raw(), old) };
        Ok(to_count(n)? as usize)
    }

    /// A handle that can abort this connection from elsewhere (while it is
    /// used by a handshake), valid even after the socket is released.
    pub(crate) fn abort_handle(&self) -> AbortHandle {
        let sk = self.sk_raw();
        // SAFETY: live socket; the reference is dropped by the handle.
        unsafe { bindings::smc_rs_sock_hold(sk) };
        // INVARIANT: `sk` is live and a reference is held for the handle.
        AbortHandle {
            // SAFETY: the `sk` of a live socket is never NULL (invariant).
            sk: unsafe { NonNull::new_unchecked(sk) },
        }
    }

    /// The wait queue the socket's waiters (poll, accept, ...) sleep on.
    pub(super) fn wait_queue(&self) -> *mut bindings::wait_queue_head {
        // SAFETY: live socket (invariant): its embedded `wq` is valid.
        unsafe { core::ptr::addr_of_mut!((*self.raw()).wq.wait) }
    }

    /// The TCP `struct sock`, for the wrappers of this module's siblings.
    pub(super) fn tcp_sk(&self) -> *mut bindings::sock {
        self.sk_raw()
    }

    /// Takes ownership of a socket `kernel_accept` returned.
    ///
    /// # Safety
    ///
    /// `sock` must be a live socket with `ops` and `sk` set and no file,
    /// owned by nobody else.
    pub(super) unsafe fn from_accepted(sock: NonNull<bindings::socket>) -> Self {
        // INVARIANT: the caller's promise.
        KernelSocket { sock }
    }

    /// Aborts whatever the socket is doing (a connect, a receive) with
    /// `ECONNABORTED`, waking its waiters.
    pub(crate) fn abort(&self) {
        // SAFETY: live TCP socket (invariant); `tcp_abort` takes its locks.
        unsafe { bindings::tcp_abort(self.sk_raw(), bindings::ECONNABORTED as c_int) };
    }

    /// Puts back an error that waiting for the connection consumed, so that
    /// the owner of the socket still sees it (`SO_ERROR`, `POLLERR`) once.
    pub(crate) fn restore_error(&self, e: Error) {
        let sk = self.sk_raw();
        // TCP itself sets and clears `sk_err` with plain int accesses.
        // SAFETY: live socket (invariant).
        unsafe { core::ptr::write_volatile(&mut (*sk).sk_err, -e.to_errno()) };
    }

    /// Marks the socket as connecting again after a wait for the connection
    /// that its owner did not see: the owner's next `connect()` then
    /// completes it and returns 0, as after a non-blocking TCP connect.
    pub(crate) fn mark_connecting(&self) {
        // `state` is only used by `inet_stream_connect`, which nobody else
        // runs on this socket now (callers: before its file is redirected).
        // SAFETY: live socket (invariant).
        unsafe { (*self.raw()).state = bindings::socket_state_SS_CONNECTING };
    }

    /// Sends `SIGIO` (`POLL_OUT`) to an `O_ASYNC` owner: the connection
    /// TCP reported while the SMC socket still held the file is usable now.
    pub(crate) fn signal_connected(&self) {
        // SAFETY: live socket (invariant); `sk_wake_async` checks the flag.
        unsafe {
            bindings::smc_rs_sk_wake_async(
                self.sk_raw(),
                bindings::SOCK_WAKE_IO as c_int,
                bindings::POLL_OUT as c_int,
            )
        };
    }

    /// Wakes everyone waiting on the socket, so that pollers look again.
    pub(crate) fn wake_waiters(&self) {
        let sk = self.sk_raw();
        // SAFETY: live socket; `sk_state_change` is set for every socket.
        unsafe {
            if let Some(f) = (*sk).sk_state_change {
                f(sk);
            }
        }
    }

    /// Drops the connection (RST) so that the socket can connect again,
    /// like `connect(AF_UNSPEC)`.
    pub(crate) fn disconnect(&self) -> Result {
        let f = self
            .ops()
            .connect
            .ok_or_else(|| errno(bindings::EOPNOTSUPP))?;
        // SAFETY: all-zero is an `AF_UNSPEC` address.
        let mut unspec: bindings::sockaddr = unsafe { core::mem::zeroed() };
        // SAFETY: live socket; `unspec` is a valid address of the given length.
        to_result(unsafe {
            f(
                self.raw(),
                &mut unspec,
                core::mem::size_of::<bindings::sockaddr>() as c_int,
                0,
            )
        })
    }

    /// `bind(2)`.
    pub(crate) fn bind(&self, addr: SockAddr<'_>) -> Result {
        let f = self.ops().bind.ok_or_else(|| errno(bindings::EOPNOTSUPP))?;
        // SAFETY: live socket; `addr` is the caller's kernel copy of the address.
        to_result(unsafe { f(self.raw(), addr.ptr, addr.len) })
    }

    /// `connect(2)`; `flags` are the file flags (`O_NONBLOCK`).
    pub(crate) fn connect(&self, addr: SockAddr<'_>, flags: i32) -> Result {
        let f = self
            .ops()
            .connect
            .ok_or_else(|| errno(bindings::EOPNOTSUPP))?;
        // SAFETY: as in `bind`.
        to_result(unsafe { f(self.raw(), addr.ptr, addr.len, flags) })
    }

    /// `listen(2)`.
    pub(crate) fn listen(&self, backlog: i32) -> Result {
        // SAFETY: live socket.
        to_result(unsafe { bindings::kernel_listen(self.raw(), backlog) })
    }

    /// `accept(2)`: waits (unless `flags` has `O_NONBLOCK`) for a connection.
    pub(crate) fn accept(&self, flags: i32) -> Result<KernelSocket> {
        let mut new: *mut bindings::socket = null_mut();
        // SAFETY: live listening socket; `new` is a valid out pointer.
        to_result(unsafe { bindings::kernel_accept(self.raw(), &mut new, flags) })?;
        let sock = NonNull::new(new).ok_or_else(|| errno(bindings::ENOMEM))?;
        // `kernel_accept` returned a live socket with `ops` and `sk` set and
        // no file, which is ours.
        // SAFETY: that is what `from_accepted` requires.
        Ok(unsafe { KernelSocket::from_accepted(sock) })
    }

    /// `getsockname(2)` / `getpeername(2)`; returns the address length.
    pub(crate) fn getname(&self, out: SockAddrOut<'_>, peer: bool) -> Result<i32> {
        let f = self
            .ops()
            .getname
            .ok_or_else(|| errno(bindings::EOPNOTSUPP))?;
        // SAFETY: live socket; `out` is a kernel `sockaddr_storage`.
        to_count(unsafe { f(self.raw(), out.ptr, peer as c_int) })
    }

    /// `poll(2)` on this socket for the SMC socket's file: waiters are queued
    /// on this socket's wait queue.
    pub(crate) fn poll(&self, pt: PollTable<'_>) -> u32 {
        match self.ops().poll {
            // SAFETY: live socket; file and table come from the current poll call.
            Some(f) => unsafe { f(pt.file, self.raw(), pt.wait) },
            None => 0,
        }
    }

    /// `ioctl(2)`.
    pub(crate) fn ioctl(&self, cmd: u32, arg: usize) -> Result<i32> {
        let f = self
            .ops()
            .ioctl
            .ok_or_else(|| errno(bindings::ENOIOCTLCMD))?;
        // SAFETY: live socket; `arg` is the caller's untouched ioctl argument.
        to_count(unsafe { f(self.raw(), cmd as c_uint, arg as c_ulong) })
    }

    /// `shutdown(2)`.
    pub(crate) fn shutdown(&self, how: i32) -> Result {
        let f = self
            .ops()
            .shutdown
            .ok_or_else(|| errno(bindings::EOPNOTSUPP))?;
        // SAFETY: live socket.
        to_result(unsafe { f(self.raw(), how) })
    }

    /// `setsockopt(2)` at any level, `SOL_SOCKET` included.
    pub(crate) fn setsockopt(&self, level: i32, name: i32, val: SockoptIn<'_>) -> Result {
        if level == bindings::SOL_SOCKET as i32 {
            // SAFETY: live socket; `val` describes the caller's option buffer.
            return to_result(unsafe {
                bindings::sock_setsockopt(self.raw(), level, name, val.val, val.len)
            });
        }
        let f = self
            .ops()
            .setsockopt
            .ok_or_else(|| errno(bindings::EOPNOTSUPP))?;
        // SAFETY: as above.
        to_result(unsafe { f(self.raw(), level, name, val.val, val.len) })
    }

    /// `getsockopt(2)` at a level other than `SOL_SOCKET`.
    pub(crate) fn getsockopt(&self, level: i32, name: i32, out: SockoptOut<'_>) -> Result {
        let f = self
            .ops()
            .getsockopt
            .ok_or_else(|| errno(bindings::EOPNOTSUPP))?;
        // SAFETY: live socket; `out` holds the caller's user pointers.
        to_result(unsafe { f(self.raw(), level, name, out.val, out.len) })
    }

    /// `sendmsg(2)`; returns the bytes queued.
    pub(crate) fn sendmsg(&self, msg: MsgHdr<'_>, len: usize) -> Result<i32> {
        let f = self
            .ops()
            .sendmsg
            .ok_or_else(|| errno(bindings::EOPNOTSUPP))?;
        // SAFETY: live socket; `msg` is the current call's message.
        to_count(unsafe { f(self.raw(), msg.ptr, len) })
    }

    /// `recvmsg(2)`; returns the bytes received.
    pub(crate) fn recvmsg(&self, msg: MsgHdr<'_>, len: usize, flags: i32) -> Result<i32> {
        let f = self
            .ops()
            .recvmsg
            .ok_or_else(|| errno(bindings::EOPNOTSUPP))?;
        // SAFETY: as in `sendmsg`.
        to_count(unsafe { f(self.raw(), msg.ptr, len, flags) })
    }
}

/// A counted reference to a TCP connection that can abort it (RST) from
/// any thread, e.g. to end a handshake blocked on it when its listener
/// closes. Aborting a connection that is already closed does nothing.
///
/// # Invariants
///
/// `sk` is a TCP `struct sock` on which the handle holds a reference.
pub(crate) struct AbortHandle {
    sk: NonNull<bindings::sock>,
}

// SAFETY: the reference may be used and dropped from any thread.
unsafe impl Send for AbortHandle {}
// SAFETY: `tcp_abort` takes the socket's own locks.
unsafe impl Sync for AbortHandle {}

impl AbortHandle {
    /// Aborts the connection with `ECONNABORTED`, waking its waiters.
    pub(crate) fn abort(&self) {
        // Like `SOCK_DESTROY` from sock_diag: any state, held reference.
        // SAFETY: the handle's reference keeps `sk` live (invariant).
        unsafe { bindings::tcp_abort(self.sk.as_ptr(), bindings::ECONNABORTED as c_int) };
    }

    /// Whether this handle is for `sock`'s connection.
    pub(crate) fn is_for(&self, sock: &KernelSocket) -> bool {
        self.sk.as_ptr() == sock.sk_raw()
    }
}

impl Drop for AbortHandle {
    fn drop(&mut self) {
        // SAFETY: drops the reference taken in `abort_handle` (invariant).
        unsafe { bindings::smc_rs_sock_put(self.sk.as_ptr()) };
    }
}

impl Drop for KernelSocket {
    fn drop(&mut self) {
        // Its `file` is NULL (invariant), so `sock_release` frees the inode too.
        // SAFETY: owned live socket, released once (invariant).
        unsafe { bindings::sock_release(self.raw()) };
    }
}

/// The user-facing `struct socket` of an SMC socket, borrowed for one call of
/// a `proto_ops` callback.
///
/// # Invariants
///
/// `raw` is live for `'a` and `raw->sk` is a live `SmcSk<S>` with initialised state.
pub(crate) struct Socket<'a, S: SockState> {
    raw: *mut bindings::socket,
    _sk: PhantomData<&'a SmcSk<S>>,
}

impl<'a, S: SockState> Socket<'a, S> {
    /// # Safety
    ///
    /// `raw` must satisfy the type invariant for `'a`.
    pub(crate) unsafe fn from_raw(raw: *mut bindings::socket) -> Self {
        Socket {
            raw,
            _sk: PhantomData,
        }
    }

    /// The SMC `struct sock` behind this socket.
    pub(crate) fn sk(&self) -> &'a SmcSk<S> {
        // SAFETY: by the type invariant `raw->sk` is a live `SmcSk<S>` for `'a`.
        unsafe { SmcSk::from_raw((*self.raw).sk) }
    }

    /// Marks the socket connected (`SS_CONNECTED`), as `getpeername` expects.
    pub(crate) fn set_connected(&self) {
        // `state` is only written by the owning protocol, in process context.
        // SAFETY: the socket is live and our caller holds its socket lock.
        unsafe { (*self.raw).state = bindings::socket_state_SS_CONNECTED };
    }

    /// Routes every later system call on this socket's file straight to
    /// `clc`, the TCP fallback: the file's private data becomes the TCP
    /// socket, whose wait queue already holds every waiter (our `poll` queues
    /// on it). `release` still reaches us through the inode and undoes this.
    /// Returns false when the socket has no file (not yet accepted).
    pub(crate) fn redirect_file_to(&self, clc: &KernelSocket) -> bool {
        // The TCP socket is owned by this SMC socket and outlives the
        // redirection: `release` restores the file before it releases `clc`.
        // SAFETY: `raw` is live; `file` is NULL or the live file that holds it.
        unsafe {
            let file = (*self.raw).file;
            if file.is_null() {
                return false;
            }
            let tcp = clc.raw();
            (*tcp).file = file;
            (*tcp).wq.fasync_list = (*self.raw).wq.fasync_list;
            (*self.raw).wq.fasync_list = null_mut();
            // O_ASYNC (SIGIO) set on the file so far goes with the list.
            let sk = (*self.raw).sk;
            if bindings::smc_rs_sock_flag(sk, bindings::sock_flags_SOCK_FASYNC) {
                bindings::smc_rs_sock_set_flag(clc.sk_raw(), bindings::sock_flags_SOCK_FASYNC);
            }
            bindings::smc_rs_set_file_private(file, tcp.cast());
        }
        true
    }
}

/// A `struct socket` the socket layer allocated for `accept`, still without a
/// `struct sock`; [`super::family`] installs one.
pub(crate) struct NewSocket<'a> {
    pub(super) raw: *mut bindings::socket,
    _call: PhantomData<&'a mut ()>,
}

/// Builders for the per-call argument wrappers, used by the `proto_ops`
/// trampolines only.
impl<'a> SockAddr<'a> {
    pub(super) fn new(ptr: *mut bindings::sockaddr, len: c_int) -> Self {
        SockAddr {
            ptr,
            len,
            _call: PhantomData,
        }
    }
}

impl<'a> SockAddrOut<'a> {
    pub(super) fn new(ptr: *mut bindings::sockaddr) -> Self {
        SockAddrOut {
            ptr,
            _call: PhantomData,
        }
    }
}

impl<'a> MsgHdr<'a> {
    pub(super) fn new(ptr: *mut bindings::msghdr) -> Self {
        MsgHdr {
            ptr,
            _call: PhantomData,
        }
    }
}

impl<'a> PollTable<'a> {
    pub(super) fn new(file: *mut bindings::file, wait: *mut bindings::poll_table_struct) -> Self {
        PollTable {
            file,
            wait,
            _call: PhantomData,
        }
    }
}

impl<'a> SockoptIn<'a> {
    pub(super) fn new(val: bindings::sockptr_t, len: c_uint) -> Self {
        SockoptIn {
            val,
            len,
            _call: PhantomData,
        }
    }

    /// Applies a `SOL_SOCKET` option to the SMC socket itself.
    pub(crate) fn apply_to_own<S: SockState>(self, sock: &Socket<'_, S>, name: i32) -> Result {
        // SAFETY: live socket of the current call; `val` is the call's buffer.
        to_result(unsafe {
            bindings::sock_setsockopt(
                sock.raw,
                bindings::SOL_SOCKET as c_int,
                name,
                self.val,
                self.len,
            )
        })
    }

    /// Reads an `int` option value, as `setsockopt` handlers do.
    pub(crate) fn read_int(self) -> Result<i32> {
        if (self.len as usize) < core::mem::size_of::<c_int>() {
            return Err(errno(bindings::EINVAL));
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
            return Err(errno(bindings::EFAULT));
        }
        Ok(v)
    }
}

impl<'a> SockoptOut<'a> {
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
            return Err(errno(bindings::EINVAL));
        }
        let len = (len as usize).min(INT);
        UserSlice::new(self.len as usize, INT)
            .writer()
            .write(&(len as i32))?;
        UserSlice::new(self.val as usize, len)
            .writer()
            .write_slice(&v.to_ne_bytes()[..len])
    }
}

impl<'a> NewSocket<'a> {
    pub(super) fn new(raw: *mut bindings::socket) -> Self {
        NewSocket {
            raw,
            _call: PhantomData,
        }
    }
}

/// While alive, TCP parses and writes the SMC experimental option (the
/// `tcp_have_smc` static key, shared with upstream SMC, counted).
pub(crate) struct TcpSmcOption(());

impl TcpSmcOption {
    /// Turns the option handling on.
    pub(crate) fn enable() -> Self {
        // SAFETY: a counted static key; the matching decrement is in `drop`.
        unsafe { bindings::smc_rs_tcp_have_smc_inc() };
        TcpSmcOption(())
    }
}

impl Drop for TcpSmcOption {
    fn drop(&mut self) {
        // SAFETY: incremented once in `enable`.
        unsafe { bindings::smc_rs_tcp_have_smc_dec() };
    }
}

/// Calls `f` with the user socket of a locked SMC socket and its locked
/// state; `None` (without calling `f`) once the socket was orphaned (closed).
pub(crate) fn with_user_socket<S: SockState, R>(
    guard: &mut SockGuard<'_, S>,
    f: impl FnOnce(&Socket<'_, S>, &mut S::Locked) -> R,
) -> Option<R> {
    // `sk_socket` only changes under the socket lock (orphan, graft).
    // SAFETY: `guard` holds that lock on a live socket.
    let raw = unsafe { (*guard.sk().as_raw()).sk_socket };
    if raw.is_null() {
        return None;
    }
    // INVARIANT: a non-NULL `sk_socket` is the live socket whose `sk` is
    // ours, and stays so while the lock is held, which covers the call.
    let sock = Socket {
        raw,
        _sk: PhantomData,
    };
    Some(f(&sock, &mut **guard))
}
