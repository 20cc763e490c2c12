// SPDX-License-Identifier: GPL-2.0

//! The AF_SMC protocol family as the socket layer sees it: the `proto_ops`
//! table, filled from a `#[vtable]` trait through C trampolines, and the
//! creation of sockets. The registrations live in [`super::registration`].

use super::args::{MsgHdr, PollTable, SockAddr, SockAddrOut, SockoptIn, SockoptOut};
use super::bindings;
use super::errno::{EAFNOSUPPORT, ENOBUFS};
use super::net::Net;
use super::socktable::{hash, tables, unhash};
use super::sock::{SmcSk, SockState};
use super::socket::{FileRedirect, NewSocket, Socket};
use core::ffi::{c_char, c_int, c_uint, c_ulong};
use core::ptr::null_mut;
use kernel::error::{from_result, Error, Result, VTABLE_DEFAULT_ERROR};
use kernel::init::PinInit;
use kernel::prelude::*;

/// Accept-time options the socket layer passes down (`accept4` flags).
pub(crate) struct AcceptArg {
    /// File flags of the listener plus `accept4` flags (`O_NONBLOCK`).
    pub(crate) flags: i32,
    /// The caller is the kernel, not user space.
    pub(crate) kern: bool,
}

/// A protocol family implemented in safe Rust on top of these wrappers.
///
/// Each optional method is one `proto_ops` entry; an entry the
/// implementation leaves out gets the socket layer's `sock_no_*` answer.
/// [`Socket`] is the socket the call is for, valid for the call. Errors
/// become negative errnos.
#[vtable]
pub(crate) trait SocketFamily: SockState {
    /// `sk_state` of a new socket (what sock_diag reports for it).
    const INITIAL_STATE: u8;

    /// Makes the state of a new socket of `kind` (`SOCK_STREAM`, ...) and
    /// `protocol` in `net`: an initialiser that builds it in place in the
    /// socket, and the value of its locked part.
    fn create(
        net: &Net,
        kind: i16,
        protocol: i32,
    ) -> Result<(impl PinInit<Self, Error>, Self::Locked)>;
    /// Makes the state of a new socket of `kind` made through address
    /// family `family` (`AF_INET`, `AF_INET6`) with protocol `IPPROTO_SMC`.
    fn create_inet(
        net: &Net,
        kind: i16,
        family: u32,
    ) -> Result<(impl PinInit<Self, Error>, Self::Locked)>;
    /// Accepts one connection and returns the state of the new socket.
    fn accept(
        sock: &Socket<'_, Self>,
        arg: &AcceptArg,
    ) -> Result<(impl PinInit<Self, Error>, Self::Locked)>;
    /// Called on the new socket of `accept` once it is installed, before
    /// user space sees it.
    fn accepted(sock: &Socket<'_, Self>);
    /// The socket is being closed: stop everything that still works on it
    /// (handshakes that could redirect its file). The wrapper then undoes a
    /// file redirection, detaches the socket and drops its reference.
    fn release(sock: &Socket<'_, Self>);

    /// `bind(2)`.
    fn bind(_sock: &Socket<'_, Self>, _addr: SockAddr<'_>) -> Result {
        kernel::build_error(VTABLE_DEFAULT_ERROR)
    }
    /// `connect(2)`; `flags` are the file flags.
    fn connect(_sock: &Socket<'_, Self>, _addr: SockAddr<'_>, _flags: i32) -> Result {
        kernel::build_error(VTABLE_DEFAULT_ERROR)
    }
    /// `getsockname(2)`/`getpeername(2)`.
    fn getname(_sock: &Socket<'_, Self>, _out: SockAddrOut<'_>, _peer: bool) -> Result<i32> {
        kernel::build_error(VTABLE_DEFAULT_ERROR)
    }
    /// `poll(2)`.
    fn poll(_sock: &Socket<'_, Self>, _pt: PollTable<'_>) -> u32 {
        kernel::build_error(VTABLE_DEFAULT_ERROR)
    }
    /// `ioctl(2)`.
    fn ioctl(_sock: &Socket<'_, Self>, _cmd: u32, _arg: usize) -> Result<i32> {
        kernel::build_error(VTABLE_DEFAULT_ERROR)
    }
    /// `listen(2)`.
    fn listen(_sock: &Socket<'_, Self>, _backlog: i32) -> Result {
        kernel::build_error(VTABLE_DEFAULT_ERROR)
    }
    /// `shutdown(2)`.
    fn shutdown(_sock: &Socket<'_, Self>, _how: i32) -> Result {
        kernel::build_error(VTABLE_DEFAULT_ERROR)
    }
    /// `setsockopt(2)`, every level.
    fn setsockopt(
        _sock: &Socket<'_, Self>,
        _level: i32,
        _name: i32,
        _val: SockoptIn<'_>,
    ) -> Result {
        kernel::build_error(VTABLE_DEFAULT_ERROR)
    }
    /// `getsockopt(2)` (`SOL_SOCKET` is the socket layer's).
    fn getsockopt(
        _sock: &Socket<'_, Self>,
        _level: i32,
        _name: i32,
        _out: SockoptOut<'_>,
    ) -> Result {
        kernel::build_error(VTABLE_DEFAULT_ERROR)
    }
    /// `sendmsg(2)`; returns the bytes queued.
    fn sendmsg(_sock: &Socket<'_, Self>, _msg: MsgHdr<'_>, _len: usize) -> Result<i32> {
        kernel::build_error(VTABLE_DEFAULT_ERROR)
    }
    /// `recvmsg(2)`; returns the bytes received.
    fn recvmsg(
        _sock: &Socket<'_, Self>,
        _msg: MsgHdr<'_>,
        _len: usize,
        _flags: i32,
    ) -> Result<i32> {
        kernel::build_error(VTABLE_DEFAULT_ERROR)
    }
}

/// The C side of a [`SocketFamily`]: its `proto_ops` table and trampolines.
pub(super) struct Adapter<F: SocketFamily>(core::marker::PhantomData<F>);

impl<F: SocketFamily> Adapter<F> {
    /// The `proto_ops` table of `F` for address family `family`; the
    /// registration fills in the module owner.
    pub(super) const fn proto_ops(family: u32) -> bindings::proto_ops {
        bindings::proto_ops {
            family: family as c_int,
            release: Some(Self::release),
            bind: if F::HAS_BIND {
                Some(Self::bind)
            } else {
                Some(bindings::sock_no_bind)
            },
            connect: if F::HAS_CONNECT {
                Some(Self::connect)
            } else {
                Some(bindings::sock_no_connect)
            },
            socketpair: Some(bindings::sock_no_socketpair),
            accept: Some(Self::accept),
            getname: if F::HAS_GETNAME {
                Some(Self::getname)
            } else {
                Some(bindings::sock_no_getname)
            },
            poll: if F::HAS_POLL { Some(Self::poll) } else { None },
            ioctl: if F::HAS_IOCTL {
                Some(Self::ioctl)
            } else {
                Some(bindings::sock_no_ioctl)
            },
            listen: if F::HAS_LISTEN {
                Some(Self::listen)
            } else {
                Some(bindings::sock_no_listen)
            },
            shutdown: if F::HAS_SHUTDOWN {
                Some(Self::shutdown)
            } else {
                Some(bindings::sock_no_shutdown)
            },
            setsockopt: if F::HAS_SETSOCKOPT {
                Some(Self::setsockopt)
            } else {
                None
            },
            getsockopt: if F::HAS_GETSOCKOPT {
                Some(Self::getsockopt)
            } else {
                None
            },
            sendmsg: if F::HAS_SENDMSG {
                Some(Self::sendmsg)
            } else {
                Some(bindings::sock_no_sendmsg)
            },
            recvmsg: if F::HAS_RECVMSG {
                Some(Self::recvmsg)
            } else {
                Some(bindings::sock_no_recvmsg)
            },
            mmap: Some(bindings::sock_no_mmap),
            // SAFETY: all-zero is "no callback" for the remaining entries.
            ..unsafe { core::mem::zeroed() }
        }
    }

    /// Borrows the socket of a `proto_ops` call.
    ///
    /// # Safety
    ///
    /// `sock` must be one of our sockets with its `sk` installed, live for `'a`.
    unsafe fn socket<'a>(sock: *mut bindings::socket) -> Socket<'a, F> {
        // SAFETY: forwarded from the caller.
        unsafe { Socket::from_raw(sock) }
    }

    /// `net_proto_family::create`.
    ///
    /// # Safety
    ///
    /// Called by the socket layer with a live, new `sock` and live `net`.
    pub(super) unsafe extern "C" fn create(
        net: *mut bindings::net,
        sock: *mut bindings::socket,
        protocol: c_int,
        kern: c_int,
    ) -> c_int {
        from_result(|| {
            // SAFETY: `net` is live for the call (socket layer contract).
            let net = unsafe { Net::from_raw(net) };
            // SAFETY: `sock` is live; `type` was set by the socket layer.
            let kind = unsafe { (*sock).type_ };
            let state = F::create(net, kind, protocol)?;
            // SAFETY: `sock` is new and has no `sk`; `net` is live.
            unsafe { install::<F>(sock, net, protocol, kern != 0, state) }?;
            Ok(0)
        })
    }

    /// `proto::init` of our inet protos.
    ///
    /// # Safety
    ///
    /// Called by `inet_create`/`inet6_create` on a new socket of our proto,
    /// with `sk_socket` set, before anyone else sees it.
    pub(super) unsafe extern "C" fn inet_init(sk: *mut bindings::sock) -> c_int {
        from_result(|| {
            // SAFETY: the new socket's fields were set by `sock_init_data`.
            let (net, kind, family) = unsafe {
                (
                    Net::from_raw(bindings::smc_rs_sock_net(sk)),
                    (*sk).sk_type as i16,
                    (*sk).__sk_common.skc_family,
                )
            };
            let (state, locked) = F::create_inet(net, kind, u32::from(family))?;
            // The socket is ours alone (contract); on failure the inet layer
            // releases it with its own destructor, and there is no state to drop.
            // SAFETY: allocated from our proto, so it has room for `SmcSk<F>`.
            unsafe { SmcSk::<F>::init_state(sk, state, locked)? };
            // SAFETY: as above, the socket is ours to set up.
            unsafe {
                bindings::smc_rs_sock_lock_init_class(sk);
                (*sk).sk_destruct = Some(Self::destruct);
                // SOL_SOCKET options reach our setsockopt, which applies
                // them to the TCP socket too.
                let sock = (*sk).sk_socket;
                if !sock.is_null() {
                    (*sock).flags |= 1 << bindings::SOCK_CUSTOM_SOCKOPT;
                }
                (*sk).__sk_common.skc_state = F::INITIAL_STATE;
                hash(sk);
            }
            Ok(0)
        })
    }

    /// `proto::unhash`: our sockets are in no lookup table, but
    /// `sk_common_release` calls it unconditionally.
    ///
    /// # Safety
    ///
    /// Any pointer will do: it is not used.
    pub(super) unsafe extern "C" fn unhash(_sk: *mut bindings::sock) {}

    /// # Safety
    ///
    /// Called by the socket layer for `sk_destruct` of one of our sockets.
    unsafe extern "C" fn destruct(sk: *mut bindings::sock) {
        // The state was initialised before the destructor was set.
        // SAFETY: the last reference is gone, so this is the only access.
        unsafe { SmcSk::<F>::drop_state(sk) };
    }

    /// # Safety
    ///
    /// Called by the socket layer from `sock_close` with one of our sockets.
    unsafe extern "C" fn release(sock: *mut bindings::socket) -> c_int {
        // SAFETY: `sock` is live for the call.
        let sk = unsafe { (*sock).sk };
        if sk.is_null() {
            return 0;
        }
        // SAFETY: `sock` is live and `sk` is set: a socket we installed.
        let s = unsafe { Self::socket(sock) };
        // Stops whatever could still redirect the file (handshake work).
        F::release(&s);
        // SAFETY: the file, if any, is the one being closed; no one else
        // calls on `sock` any more.
        unsafe { FileRedirect::undo(sock) };
        // Off the family's list (sock_diag): the socket is closed.
        // SAFETY: ours, and the reference `sk_alloc` gave is still held.
        unsafe { unhash(sk) };
        // Detach the socket from the file, then drop the reference `sk_alloc`
        // gave us; work still holding one keeps it alive.
        // SAFETY: `sk` is live until that last `sock_put`, after which it is unused.
        unsafe {
            bindings::smc_rs_lock_sock(sk);
            bindings::smc_rs_sock_orphan(sk);
            (*sock).sk = null_mut();
            bindings::release_sock(sk);
            bindings::smc_rs_sock_put(sk);
        }
        0
    }

    /// # Safety
    ///
    /// `proto_ops::bind` contract: live socket, kernel copy of the address.
    unsafe extern "C" fn bind(
        sock: *mut bindings::socket,
        addr: *mut bindings::sockaddr,
        len: c_int,
    ) -> c_int {
        // SAFETY: our socket, live for the call; the address is the call's.
        let (s, addr) = unsafe { (Self::socket(sock), SockAddr::new(addr, len)) };
        from_result(|| F::bind(&s, addr).map(|()| 0))
    }

    /// # Safety
    ///
    /// `proto_ops::connect` contract.
    unsafe extern "C" fn connect(
        sock: *mut bindings::socket,
        addr: *mut bindings::sockaddr,
        len: c_int,
        flags: c_int,
    ) -> c_int {
        // SAFETY: our socket, live for the call; the address is the call's.
        let (s, addr) = unsafe { (Self::socket(sock), SockAddr::new(addr, len)) };
        from_result(|| F::connect(&s, addr, flags).map(|()| 0))
    }

    /// # Safety
    ///
    /// `proto_ops::accept` contract: `newsock` is a fresh socket with our ops
    /// and a file, without `sk`.
    unsafe extern "C" fn accept(
        sock: *mut bindings::socket,
        newsock: *mut bindings::socket,
        arg: *mut bindings::proto_accept_arg,
    ) -> c_int {
        // SAFETY: our socket, live for the call; `arg` is the caller's.
        let (s, arg) = unsafe { (Self::socket(sock), &mut *arg) };
        let a = AcceptArg {
            flags: arg.flags,
            kern: arg.kern,
        };
        from_result(|| {
            let state = F::accept(&s, &a)?;
            let sk = s.sk();
            let new = NewSocket::new(newsock);
            // The listener's namespace is live while the listener is.
            // SAFETY: `newsock` has no `sk` yet (`proto_ops::accept` contract).
            unsafe { install::<F>(new.raw, sk.net(), i32::from(sk.protocol()), a.kern, state) }?;
            // SAFETY: installed just above.
            let ns = unsafe { Self::socket(newsock) };
            F::accepted(&ns);
            Ok(0)
        })
    }

    /// # Safety
    ///
    /// `proto_ops::getname` contract: `addr` is a kernel `sockaddr_storage`.
    unsafe extern "C" fn getname(
        sock: *mut bindings::socket,
        addr: *mut bindings::sockaddr,
        peer: c_int,
    ) -> c_int {
        // SAFETY: our socket, live for the call.
        let s = unsafe { Self::socket(sock) };
        from_result(|| F::getname(&s, SockAddrOut::new(addr), peer != 0))
    }

    /// # Safety
    ///
    /// `proto_ops::poll` contract.
    unsafe extern "C" fn poll(
        file: *mut bindings::file,
        sock: *mut bindings::socket,
        wait: *mut bindings::poll_table_struct,
    ) -> bindings::__poll_t {
        // SAFETY: our socket, live for the call.
        let s = unsafe { Self::socket(sock) };
        F::poll(&s, PollTable::new(file, wait))
    }

    /// # Safety
    ///
    /// `proto_ops::ioctl` contract.
    unsafe extern "C" fn ioctl(sock: *mut bindings::socket, cmd: c_uint, arg: c_ulong) -> c_int {
        // SAFETY: our socket, live for the call.
        let s = unsafe { Self::socket(sock) };
        from_result(|| F::ioctl(&s, cmd, arg as usize))
    }

    /// # Safety
    ///
    /// `proto_ops::listen` contract.
    unsafe extern "C" fn listen(sock: *mut bindings::socket, backlog: c_int) -> c_int {
        // SAFETY: our socket, live for the call.
        let s = unsafe { Self::socket(sock) };
        from_result(|| F::listen(&s, backlog).map(|()| 0))
    }

    /// # Safety
    ///
    /// `proto_ops::shutdown` contract.
    unsafe extern "C" fn shutdown(sock: *mut bindings::socket, how: c_int) -> c_int {
        // SAFETY: our socket, live for the call.
        let s = unsafe { Self::socket(sock) };
        from_result(|| F::shutdown(&s, how).map(|()| 0))
    }

    /// # Safety
    ///
    /// `proto_ops::setsockopt` contract.
    unsafe extern "C" fn setsockopt(
        sock: *mut bindings::socket,
        level: c_int,
        name: c_int,
        val: bindings::sockptr_t,
        len: c_uint,
    ) -> c_int {
        // SAFETY: our socket, live for the call.
        let s = unsafe { Self::socket(sock) };
        from_result(|| F::setsockopt(&s, level, name, SockoptIn::new(val, len)).map(|()| 0))
    }

    /// # Safety
    ///
    /// `proto_ops::getsockopt` contract: user pointers of the call.
    unsafe extern "C" fn getsockopt(
        sock: *mut bindings::socket,
        level: c_int,
        name: c_int,
        val: *mut c_char,
        len: *mut c_int,
    ) -> c_int {
        // SAFETY: our socket, live for the call.
        let s = unsafe { Self::socket(sock) };
        from_result(|| F::getsockopt(&s, level, name, SockoptOut::new(val, len)).map(|()| 0))
    }

    /// # Safety
    ///
    /// `proto_ops::sendmsg` contract.
    unsafe extern "C" fn sendmsg(
        sock: *mut bindings::socket,
        msg: *mut bindings::msghdr,
        len: usize,
    ) -> c_int {
        // SAFETY: our socket and the call's live message.
        let (s, msg) = unsafe { (Self::socket(sock), MsgHdr::new(msg)) };
        from_result(|| F::sendmsg(&s, msg, len))
    }

    /// # Safety
    ///
    /// `proto_ops::recvmsg` contract.
    unsafe extern "C" fn recvmsg(
        sock: *mut bindings::socket,
        msg: *mut bindings::msghdr,
        len: usize,
        flags: c_int,
    ) -> c_int {
        // SAFETY: our socket and the call's live message.
        let (s, msg) = unsafe { (Self::socket(sock), MsgHdr::new(msg)) };
        from_result(|| F::recvmsg(&s, msg, len, flags))
    }
}

/// Gives a new `struct socket` its SMC `struct sock` carrying `state`.
///
/// # Safety
///
/// `sock` must be a live socket without `sk`, and `net` live.
unsafe fn install<F: SocketFamily>(
    sock: *mut bindings::socket,
    net: &Net,
    protocol: i32,
    kern: bool,
    (state, locked): (impl PinInit<F, Error>, F::Locked),
) -> Result {
    let (proto, ops) = tables().ok_or(EAFNOSUPPORT)?;
    // SAFETY: `net` is live and `proto` registered (see `tables`).
    let sk = unsafe {
        bindings::smc_rs_sk_alloc(
            net.as_raw(),
            bindings::PF_SMC as c_int,
            proto,
            kern as c_int,
        )
    };
    if sk.is_null() {
        // The initialiser is dropped here, releasing what it owns.
        return Err(ENOBUFS.into());
    }
    // `sk` is fresh from `sk_alloc` with our proto and unseen by others.
    // SAFETY: so it is ours to initialise; on failure it is freed unused.
    if let Err(e) = unsafe { SmcSk::<F>::init_state(sk, state, locked) } {
        // SAFETY: nobody else knows `sk`; it has no destructor yet.
        unsafe { bindings::sk_free(sk) };
        return Err(e);
    }
    // SAFETY: `sk` and the live `sock` without `sk` (caller) are ours to set up.
    unsafe {
        (*sock).ops = ops;
        (*sock).state = bindings::socket_state_SS_UNCONNECTED;
        // SOL_SOCKET options reach our setsockopt, which applies them to the
        // TCP socket too.
        (*sock).flags |= 1 << bindings::SOCK_CUSTOM_SOCKOPT;
        bindings::sock_init_data(sock, sk);
        bindings::smc_rs_sock_lock_init_class(sk);
        (*sk).sk_destruct = Some(Adapter::<F>::destruct);
        (*sk).sk_protocol = protocol as u16;
        (*sk).__sk_common.skc_state = F::INITIAL_STATE;
        hash(sk);
    }
    Ok(())
}
