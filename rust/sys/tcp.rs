// SPDX-License-Identifier: GPL-2.0

//! TCP underneath SMC: the internal TCP socket every SMC socket owns (the
//! clcsock), its `struct sock` as a counted handle, and the TCP SMC option.

use super::args::{MsgHdr, PollTable, SockAddr, SockAddrOut, SockoptIn, SockoptOut};
use super::bindings;
use super::errno::{ECONNABORTED, ENOMEM, EOPNOTSUPP, EPIPE};
use super::net::Net;
use core::ffi::{c_int, c_long, c_uint, c_ulong};
use core::ptr::{null_mut, NonNull};
use kernel::error::{to_result, Error, Result};
use kernel::types::{ARef, AlwaysRefCounted, Opaque};

/// Turns the return value of a socket call into a `Result`, keeping
/// non-negative values (byte counts, lengths, poll masks).
pub(super) fn to_count(ret: c_int) -> Result<i32> {
    if ret < 0 {
        Err(Error::from_errno(ret))
    } else {
        Ok(ret)
    }
}

/// The `struct sock` of a TCP connection or listener.
///
/// # Invariants
///
/// A `&TcpSock` is a live TCP `struct sock`: borrowed from a live
/// [`KernelSocket`] or held by an `ARef<TcpSock>`.
#[repr(transparent)]
pub(crate) struct TcpSock(Opaque<bindings::sock>);

// SAFETY: a `struct sock` is made for use from any context; TCP does its own
// locking.
unsafe impl Send for TcpSock {}
// SAFETY: as above.
unsafe impl Sync for TcpSock {}

// SAFETY: `sock_hold`/`sock_put` keep the `struct sock` (not the connection)
// alive while the count is above zero.
unsafe impl AlwaysRefCounted for TcpSock {
    fn inc_ref(&self) {
        // SAFETY: live (type invariant), so the count is not zero.
        unsafe { bindings::smc_rs_sock_hold(self.as_raw()) };
    }

    unsafe fn dec_ref(obj: NonNull<Self>) {
        // SAFETY: the caller owns an increment (trait contract).
        unsafe { bindings::smc_rs_sock_put(obj.as_ptr().cast()) };
    }
}

impl TcpSock {
    /// The raw `struct sock`.
    pub(super) fn as_raw(&self) -> *mut bindings::sock {
        self.0.get()
    }

    /// Aborts whatever the connection is doing (a connect, a receive, the
    /// connection itself) with `ECONNABORTED` and an RST, waking its
    /// waiters, like `SOCK_DESTROY` from sock_diag. Aborting a closed
    /// connection does nothing.
    pub(crate) fn abort(&self) {
        // SAFETY: live socket (invariant); `tcp_abort` takes its own locks.
        unsafe { bindings::tcp_abort(self.as_raw(), ECONNABORTED.positive()) };
    }

    /// `TCP_NODELAY` and `TCP_CORK` as the application set them on the
    /// socket.
    pub(crate) fn nodelay_cork(&self) -> (bool, bool) {
        // SAFETY: a read of a field of a live socket (invariant), which is
        // a TCP socket (the type's invariant).
        let nonagle = u32::from(unsafe { bindings::smc_rs_tcp_nonagle(self.as_raw()) });
        (
            nonagle & bindings::TCP_NAGLE_OFF != 0,
            nonagle & bindings::TCP_NAGLE_CORK != 0,
        )
    }

    /// The namespace the socket lives in.
    pub(crate) fn net(&self) -> &Net {
        // SAFETY: a live socket's namespace outlives it (the socket holds a
        // reference), and the borrow ends with `self`.
        unsafe { Net::from_raw(bindings::smc_rs_sock_net(self.as_raw())) }
    }

    /// The buffer sizes the application set (`SO_SNDBUF`, `SO_RCVBUF`;
    /// the socket's doubled values), each `None` when it left the default.
    pub(crate) fn user_buf_sizes(&self) -> (Option<u32>, Option<u32>) {
        let sk = self.as_raw();
        // Set under the socket lock by `setsockopt`; a read racing with it
        // sees the old or the new size, either of which is valid.
        // SAFETY: plain reads of fields of a live socket (invariant).
        let (locks, snd, rcv) = unsafe {
            (
                core::ptr::read_volatile(core::ptr::addr_of!((*sk).sk_userlocks)),
                core::ptr::read_volatile(core::ptr::addr_of!((*sk).sk_sndbuf)),
                core::ptr::read_volatile(core::ptr::addr_of!((*sk).sk_rcvbuf)),
            )
        };
        let locked = |bit: u32| u32::from(locks) & bit != 0;
        (
            locked(bindings::SOCK_SNDBUF_LOCK).then_some(snd.max(0) as u32),
            locked(bindings::SOCK_RCVBUF_LOCK).then_some(rcv.max(0) as u32),
        )
    }

    /// The peer finished its side of the TCP connection: its FIN came
    /// (`SOCK_DONE`, which TCP sets on the peer's FIN only: this side's
    /// own `shutdown` of the socket leaves it), or the connection was reset.
    pub(crate) fn peer_finished(&self) -> bool {
        let sk = self.as_raw();
        // TCP sets the flag under the socket lock; a lockless test of the
        // bit sees it set or not yet.
        // SAFETY: a live socket (invariant); `sock_flag` only tests a bit.
        let done = unsafe { bindings::smc_rs_sock_flag(sk, bindings::sock_flags_SOCK_DONE) };
        done || self.was_reset()
    }

    /// The connection was reset or aborted: closed (`TCP_CLOSE`) with an
    /// error. An orderly close (both FINs, then TIME_WAIT) leaves none.
    pub(crate) fn was_reset(&self) -> bool {
        let sk = self.as_raw();
        // `sk_state` and `sk_err` are read locklessly by TCP's own poll
        // (READ_ONCE); nobody consumes the error of a clcsock in SMC-R mode.
        // SAFETY: reads of fields of a live socket (invariant).
        let (state, err) = unsafe {
            (
                core::ptr::read_volatile(core::ptr::addr_of!((*sk).__sk_common.skc_state)),
                core::ptr::read_volatile(core::ptr::addr_of!((*sk).sk_err)),
            )
        };
        u32::from(state) == bindings::TCP_CLOSE && err != 0
    }

    /// Runs `f` with the TCP socket lock held (`lock_sock`), which
    /// serialises with TCP's own process-context and softirq work on it.
    fn locked<R>(&self, f: impl FnOnce(*mut bindings::sock) -> R) -> R {
        let sk = self.as_raw();
        // SAFETY: live socket (invariant); unlocked below.
        unsafe { bindings::smc_rs_lock_sock(sk) };
        let r = f(sk);
        // SAFETY: taken above.
        unsafe { bindings::release_sock(sk) };
        r
    }
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
    pub(crate) fn new_tcp(net: &Net, family: u32) -> Result<Self> {
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
        let sock = NonNull::new(res).ok_or(ENOMEM)?;
        // Its TCP timers may run after we release it, so it must pin the
        // namespace like a user socket does.
        // SAFETY: a socket fresh from `sock_create_kern` has a live `sk`.
        unsafe { bindings::sk_net_refcnt_upgrade((*res).sk) };
        // INVARIANT: created above, `file` is NULL, owned from here on.
        Ok(Self { sock })
    }

    /// Takes ownership of a socket `kernel_accept` returned.
    ///
    /// # Safety
    ///
    /// `sock` must be a live socket with `ops` and `sk` set and no file,
    /// owned by nobody else.
    unsafe fn from_accepted(sock: NonNull<bindings::socket>) -> Self {
        // INVARIANT: the caller's promise.
        KernelSocket { sock }
    }

    pub(super) fn raw(&self) -> *mut bindings::socket {
        self.sock.as_ptr()
    }

    fn ops(&self) -> &bindings::proto_ops {
        // SAFETY: `ops` of a live socket is non-null and static (invariant).
        unsafe { &*(*self.raw()).ops }
    }

    /// The TCP `struct sock` of the socket.
    pub(crate) fn sk(&self) -> &TcpSock {
        // SAFETY: a live socket's `sk` is set and lives as long (invariant).
        unsafe { &*(*self.raw()).sk.cast::<TcpSock>() }
    }

    /// Asks TCP to carry the SMC experimental option on the SYN (or on the
    /// SYN-ACKs of a listener, for SYNs that carried it). Takes effect on
    /// the next SYN TCP builds or answers.
    pub(crate) fn set_syn_smc(&self, on: bool) {
        // `syn_smc` is a bit field beside others TCP changes under the
        // socket lock, so it is written under that lock too.
        self.sk().locked(|sk| {
            // SAFETY: live TCP socket (invariant), lock held by `locked`.
            unsafe { bindings::smc_rs_tcp_set_syn_smc(sk, on) }
        });
    }

    /// After the handshake: whether the peer answered with the SMC option.
    pub(crate) fn peer_offered_smc(&self) -> bool {
        // SAFETY: a read of a flag TCP set during the handshake (invariant: live).
        unsafe { bindings::smc_rs_tcp_syn_smc(self.sk().as_raw()) }
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
            _ => Err(EPIPE.into()),
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
        let timeo = kernel::time::msecs_to_jiffies(timeout_ms) as c_long;
        let sk = self.sk().as_raw();
        // The receive timeout is ours to set: no one else receives on it.
        // SAFETY: live socket (invariant).
        let old = unsafe { bindings::smc_rs_sk_swap_rcvtimeo(sk, timeo) };
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
        unsafe { bindings::smc_rs_sk_swap_rcvtimeo(sk, old) };
        Ok(to_count(n)? as usize)
    }

    /// A counted handle on the connection, to abort it from elsewhere (while
    /// it is used by a handshake), valid even after the socket is released.
    pub(crate) fn abort_handle(&self) -> ARef<TcpSock> {
        ARef::from(self.sk())
    }

    /// The wait queue the socket's waiters (poll, accept, ...) sleep on.
    pub(super) fn wait_queue(&self) -> *mut bindings::wait_queue_head {
        // SAFETY: live socket (invariant): its embedded `wq` is valid.
        unsafe { core::ptr::addr_of_mut!((*self.raw()).wq.wait) }
    }

    /// Aborts whatever the socket is doing (see [`TcpSock::abort`]).
    pub(crate) fn abort(&self) {
        self.sk().abort();
    }

    /// Puts back an error that waiting for the connection consumed, so that
    /// the owner of the socket still sees it (`SO_ERROR`, `POLLERR`) once.
    pub(crate) fn restore_error(&self, e: Error) {
        // TCP sets and clears `sk_err` under the socket lock (or in softirq,
        // which the lock excludes); so do we.
        self.sk().locked(|sk| {
            // SAFETY: live socket (invariant), lock held by `locked`.
            unsafe { core::ptr::write_volatile(&mut (*sk).sk_err, -e.to_errno()) }
        });
    }

    /// Sets the receive timeout (`SO_RCVTIMEO`, in jiffies). A fallback
    /// gives the clcsock its SMC socket's own timeout: a handshake's receive
    /// puts its saved value back when it ends, over one the application set
    /// while it waited.
    pub(crate) fn set_rcvtimeo(&self, timeo: c_long) {
        // SAFETY: live socket (invariant); the exchange is atomic, like the
        // `WRITE_ONCE` of `sock_setsockopt`, and readers use `READ_ONCE`.
        unsafe { bindings::smc_rs_sk_swap_rcvtimeo(self.sk().as_raw(), timeo) };
    }

    /// Marks the socket as connecting again after a wait for the connection
    /// that its owner did not see: the owner's next `connect()` then
    /// completes it and returns 0, as after a non-blocking TCP connect.
    pub(crate) fn mark_connecting(&self) {
        let sock = self.raw();
        // `inet_stream_connect` reads and writes `state` under the socket
        // lock; so do we.
        self.sk().locked(|_| {
            // SAFETY: live socket (invariant), lock held by `locked`.
            unsafe { (*sock).state = bindings::socket_state_SS_CONNECTING }
        });
    }

    /// Sends `SIGIO` (`POLL_OUT`) to an `O_ASYNC` owner: the connection
    /// TCP reported while the SMC socket still held the file is usable now.
    pub(crate) fn signal_connected(&self) {
        // SAFETY: live socket (invariant); `sk_wake_async` checks the flag.
        unsafe {
            bindings::smc_rs_sk_wake_async(
                self.sk().as_raw(),
                bindings::SOCK_WAKE_IO as c_int,
                bindings::POLL_OUT as c_int,
            )
        };
    }

    /// Wakes everyone waiting on the socket, so that pollers look again.
    pub(crate) fn wake_waiters(&self) {
        self.sk().wake_waiters();
    }

    /// Drops the connection (RST) so that the socket can connect again,
    /// like `connect(AF_UNSPEC)`.
    pub(crate) fn disconnect(&self) -> Result {
        let f = self.ops().connect.ok_or(EOPNOTSUPP)?;
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
        let f = self.ops().bind.ok_or(EOPNOTSUPP)?;
        // SAFETY: live socket; `addr` is the caller's kernel copy of the address.
        to_result(unsafe { f(self.raw(), addr.ptr, addr.len) })
    }

    /// `connect(2)`; `flags` are the file flags (`O_NONBLOCK`).
    pub(crate) fn connect(&self, addr: SockAddr<'_>, flags: i32) -> Result {
        let f = self.ops().connect.ok_or(EOPNOTSUPP)?;
        // SAFETY: as in `bind`.
        to_result(unsafe { f(self.raw(), addr.ptr, addr.len, flags) })
    }

    /// `listen(2)`.
    pub(crate) fn listen(&self, backlog: i32) -> Result {
        // SAFETY: live socket.
        to_result(unsafe { bindings::kernel_listen(self.raw(), backlog) })
    }

    /// Whether a listener has no established connection to accept (a
    /// lockless look, like TCP's poll: a connection queued concurrently
    /// may not be seen).
    pub(crate) fn accept_queue_empty(&self) -> bool {
        // SAFETY: a read of the queue head of a live socket (invariant);
        // the queue is in every `inet_connection_sock`, which every TCP
        // socket is.
        unsafe { bindings::smc_rs_accept_queue_empty(self.sk().as_raw()) }
    }

    /// `accept(2)`: waits (unless `flags` has `O_NONBLOCK`) for a connection.
    pub(crate) fn accept(&self, flags: i32) -> Result<KernelSocket> {
        let mut new: *mut bindings::socket = null_mut();
        // SAFETY: live listening socket; `new` is a valid out pointer.
        to_result(unsafe { bindings::kernel_accept(self.raw(), &mut new, flags) })?;
        let sock = NonNull::new(new).ok_or(ENOMEM)?;
        // `kernel_accept` returned a live socket with `ops` and `sk` set and
        // no file, which is ours.
        // SAFETY: that is what `from_accepted` requires.
        Ok(unsafe { KernelSocket::from_accepted(sock) })
    }

    /// `getsockname(2)` / `getpeername(2)`; returns the address length.
    pub(crate) fn getname(&self, out: SockAddrOut<'_>, peer: bool) -> Result<i32> {
        let f = self.ops().getname.ok_or(EOPNOTSUPP)?;
        // SAFETY: live socket; `out` is a kernel `sockaddr_storage`.
        to_count(unsafe { f(self.raw(), out.ptr, peer as c_int) })
    }

    /// The namespace the socket lives in.
    pub(crate) fn net(&self) -> &Net {
        // SAFETY: a live socket's namespace outlives it (the socket holds a
        // reference), and the borrow ends with `self`.
        unsafe { Net::from_raw(bindings::smc_rs_sock_net(self.sk().as_raw())) }
    }

    /// The local IPv4 address (an IPv4-mapped IPv6 address counts as IPv4);
    /// `None` for other IPv6 addresses or when there is none.
    pub(crate) fn local_addr(&self) -> Option<[u8; 4]> {
        self.ipv4_name(false)
    }

    /// The peer's IPv4 address, as [`Self::local_addr`].
    pub(crate) fn peer_addr(&self) -> Option<[u8; 4]> {
        self.ipv4_name(true)
    }

    fn ipv4_name(&self, peer: bool) -> Option<[u8; 4]> {
        let f = self.ops().getname?;
        // SAFETY: all-zero is a valid (`AF_UNSPEC`) address storage.
        let mut ss: bindings::__kernel_sockaddr_storage = unsafe { core::mem::zeroed() };
        let p = core::ptr::addr_of_mut!(ss).cast::<bindings::sockaddr>();
        // SAFETY: live socket; `ss` has room for any address.
        let len = to_count(unsafe { f(self.raw(), p, peer as c_int) }).ok()?;
        // SAFETY: `ss` is plain bytes, as large as a `sockaddr_storage`.
        let bytes = unsafe {
            core::slice::from_raw_parts(
                core::ptr::addr_of!(ss).cast::<u8>(),
                core::mem::size_of::<bindings::__kernel_sockaddr_storage>(),
            )
        };
        let bytes = bytes.get(..usize::try_from(len).ok()?)?;
        ipv4_of_sockaddr(bytes)
    }

    /// Queues the poller of the SMC socket's file on this socket's wait
    /// queue (where the connection's wake-ups go), without asking TCP for
    /// its mask: an SMC connection's is its own.
    pub(crate) fn poll_wait(&self, pt: PollTable<'_>) {
        // SAFETY: live socket (invariant); file and table come from the
        // current poll call, as `sock_poll_wait` wants them.
        unsafe { bindings::smc_rs_sock_poll_wait(pt.file, self.raw(), pt.wait) };
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
        let f = self.ops().ioctl.ok_or(super::errno::ENOIOCTLCMD)?;
        // SAFETY: live socket; `arg` is the caller's untouched ioctl argument.
        to_count(unsafe { f(self.raw(), cmd as c_uint, arg as c_ulong) })
    }

    /// `shutdown(2)`.
    pub(crate) fn shutdown(&self, how: i32) -> Result {
        let f = self.ops().shutdown.ok_or(EOPNOTSUPP)?;
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
        let f = self.ops().setsockopt.ok_or(EOPNOTSUPP)?;
        // SAFETY: as above.
        to_result(unsafe { f(self.raw(), level, name, val.val, val.len) })
    }

    /// `getsockopt(2)` at a level other than `SOL_SOCKET`.
    pub(crate) fn getsockopt(&self, level: i32, name: i32, out: SockoptOut<'_>) -> Result {
        let f = self.ops().getsockopt.ok_or(EOPNOTSUPP)?;
        // SAFETY: live socket; `out` holds the caller's user pointers.
        to_result(unsafe { f(self.raw(), level, name, out.val, out.len) })
    }

    /// `sendmsg(2)`; returns the bytes queued.
    pub(crate) fn sendmsg(&self, msg: MsgHdr<'_>, len: usize) -> Result<i32> {
        let f = self.ops().sendmsg.ok_or(EOPNOTSUPP)?;
        // SAFETY: live socket; `msg` is the current call's message.
        to_count(unsafe { f(self.raw(), msg.ptr, len) })
    }

    /// `recvmsg(2)`; returns the bytes received.
    pub(crate) fn recvmsg(&self, msg: MsgHdr<'_>, len: usize, flags: i32) -> Result<i32> {
        let f = self.ops().recvmsg.ok_or(EOPNOTSUPP)?;
        // SAFETY: as in `sendmsg`.
        to_count(unsafe { f(self.raw(), msg.ptr, len, flags) })
    }
}

impl Drop for KernelSocket {
    fn drop(&mut self) {
        // Its `file` is NULL (invariant), so `sock_release` frees the inode too.
        // SAFETY: owned live socket, released once (invariant).
        unsafe { bindings::sock_release(self.raw()) };
    }
}

/// The IPv4 address of a `sockaddr_in`, or of a `sockaddr_in6` holding an
/// IPv4-mapped address.
fn ipv4_of_sockaddr(sa: &[u8]) -> Option<[u8; 4]> {
    let family = u32::from(u16::from_ne_bytes([*sa.first()?, *sa.get(1)?]));
    let addr = match family {
        bindings::AF_INET => sa.get(4..8)?,
        bindings::AF_INET6 => {
            let a6 = sa.get(8..24)?;
            if a6.get(..12)? != [0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff] {
                return None;
            }
            a6.get(12..)?
        }
        _ => return None,
    };
    addr.try_into().ok()
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
