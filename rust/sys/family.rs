// SPDX-License-Identifier: GPL-2.0

//! Registration of the AF_SMC protocol family: the `struct proto` our
//! sockets are allocated from, the `net_proto_family` that creates them and
//! the `proto_ops` table, whose C trampolines call a safe [`SocketFamily`].

use super::bindings;
use super::sock::{Net, SmcSk, SockState};
use super::socket::{
    errno, MsgHdr, NewSocket, PollTable, SockAddr, SockAddrOut, Socket, SockoptIn, SockoptOut,
};
use core::ffi::{c_char, c_int, c_uint, c_ulong};
use core::marker::PhantomData;
use core::ptr::null_mut;
use core::sync::atomic::{AtomicPtr, Ordering};
use kernel::error::{from_result, to_result, Error, Result};
use kernel::prelude::*;
use kernel::types::Opaque;
use kernel::ThisModule;

/// Accept-time options the socket layer passes down (`accept4` flags).
pub(crate) struct AcceptArg {
    /// File flags of the listener plus `accept4` flags (`O_NONBLOCK`).
    pub(crate) flags: i32,
    /// The caller is the kernel, not user space.
    pub(crate) kern: bool,
}

/// A protocol family implemented in safe Rust on top of these wrappers.
///
/// Each method is one `proto_ops` entry; [`Socket`] is the socket the call
/// is for, valid for the call. Errors become negative errnos.
pub(crate) trait SocketFamily: SockState + Sized {
    /// Makes the state of a new socket of `kind` (`SOCK_STREAM`, ...) and
    /// `protocol` in `net`.
    fn create(net: Net, kind: i16, protocol: i32) -> Result<(Self::Shared, Self::Locked)>;
    /// Makes the state of a new socket of `kind` made through address
    /// family `family` (`AF_INET`, `AF_INET6`) with protocol `IPPROTO_SMC`.
    fn create_inet(net: Net, kind: i16, family: u32) -> Result<(Self::Shared, Self::Locked)>;
    /// The socket is being closed: stop everything that still works on it
    /// (handshakes that could redirect its file). The wrapper then undoes a
    /// file redirection, detaches the socket and drops its reference.
    fn release(sock: &Socket<'_, Self>);
    fn bind(sock: &Socket<'_, Self>, addr: SockAddr<'_>) -> Result;
    fn connect(sock: &Socket<'_, Self>, addr: SockAddr<'_>, flags: i32) -> Result;
    /// Accepts one connection and returns the state of the new socket.
    fn accept(sock: &Socket<'_, Self>, arg: &AcceptArg) -> Result<(Self::Shared, Self::Locked)>;
    /// Called on the new socket once it is installed, before user space sees it.
    fn accepted(sock: &Socket<'_, Self>);
    fn getname(sock: &Socket<'_, Self>, out: SockAddrOut<'_>, peer: bool) -> Result<i32>;
    fn poll(sock: &Socket<'_, Self>, pt: PollTable<'_>) -> u32;
    fn ioctl(sock: &Socket<'_, Self>, cmd: u32, arg: usize) -> Result<i32>;
    fn listen(sock: &Socket<'_, Self>, backlog: i32) -> Result;
    fn shutdown(sock: &Socket<'_, Self>, how: i32) -> Result;
    fn setsockopt(sock: &Socket<'_, Self>, level: i32, name: i32, val: SockoptIn<'_>) -> Result;
    fn getsockopt(sock: &Socket<'_, Self>, level: i32, name: i32, out: SockoptOut<'_>) -> Result;
    fn sendmsg(sock: &Socket<'_, Self>, msg: MsgHdr<'_>, len: usize) -> Result<i32>;
    fn recvmsg(sock: &Socket<'_, Self>, msg: MsgHdr<'_>, len: usize, flags: i32) -> Result<i32>;
}

/// The C tables of a registered family. They live in a pinned allocation
/// owned by [`Registration`], and sockets point into them; the module cannot
/// be unloaded while a socket exists (each holds a reference on `owner`).
struct Tables {
    proto: Opaque<bindings::proto>,
    ops: Opaque<bindings::proto_ops>,
    family: Opaque<bindings::net_proto_family>,
    /// The same sockets made through `AF_INET` and `AF_INET6`.
    inet: [InetTables; 2],
}

/// What `socket(AF_INET or AF_INET6, SOCK_STREAM, IPPROTO_SMC)` finds: an
/// `inet_protosw` pointing at a proto of the family's own and the same
/// `proto_ops`, with the family's number.
struct InetTables {
    proto: Opaque<bindings::proto>,
    ops: Opaque<bindings::proto_ops>,
    protosw: Opaque<bindings::inet_protosw>,
}

// SAFETY: the tables are written once before they are published and only
// read afterwards (by the socket layer and by `install`), except for the
// protosw list links, which the inet layer changes under its own lock.
unsafe impl Send for Tables {}
// SAFETY: as above: shared access is read-only.
unsafe impl Sync for Tables {}

/// The registered family's tables, for `create`, which gets no context pointer.
static TABLES: AtomicPtr<Tables> = AtomicPtr::new(null_mut());

/// A registered protocol family; unregisters on drop.
pub(crate) struct Registration<F: SocketFamily> {
    tables: Pin<KBox<Tables>>,
    /// How many of `tables.inet` are registered (IPv4 first).
    inet_registered: usize,
    _family: PhantomData<F>,
}

/// Fills a `struct proto` for sockets of `size` bytes.
///
/// # Safety
///
/// `proto` must be valid for writes and not yet registered.
unsafe fn fill_proto(proto: *mut bindings::proto, name: &CStr, module: &ThisModule, size: usize) {
    // SAFETY: the caller's promise; all-zero is "no callback" for the rest.
    unsafe {
        proto.write(core::mem::zeroed());
        let pname = name.as_bytes_with_nul();
        let n = pname.len().min((*proto).name.len());
        for (d, s) in (*proto).name.iter_mut().zip(pname[..n].iter()) {
            *d = *s as c_char;
        }
        (*proto).owner = module.as_ptr().cast();
        (*proto).obj_size = size as c_uint;
    }
}

impl<F: SocketFamily> Registration<F> {
    /// Registers protocol family `family` under `name`, and the same sockets
    /// as protocol `IPPROTO_SMC` of `AF_INET` and `AF_INET6`.
    pub(crate) fn new(
        family: u32,
        name: &'static CStr,
        module: &'static ThisModule,
    ) -> Result<Self> {
        let inet = || InetTables {
            proto: Opaque::uninit(),
            ops: Opaque::uninit(),
            protosw: Opaque::uninit(),
        };
        let tables = KBox::pin(
            Tables {
                proto: Opaque::uninit(),
                ops: Opaque::uninit(),
                family: Opaque::uninit(),
                inet: [inet(), inet()],
            },
            GFP_KERNEL,
        )?;
        let size = core::mem::size_of::<SmcSk<F>>();
        // An IPv6 socket keeps its `ipv6_pinfo` right after our state.
        let pinfo_align = core::mem::align_of::<bindings::ipv6_pinfo>();
        let pinfo_offset = size.div_ceil(pinfo_align) * pinfo_align;
        let size6 = pinfo_offset + core::mem::size_of::<bindings::ipv6_pinfo>();
        // Every field is a C struct for which all-zero means "no callback".
        // SAFETY: the tables are not shared yet, so writing them is exclusive.
        unsafe {
            fill_proto(tables.proto.get(), name, module, size);
            tables.ops.get().write(vtable::<F>(family, module));

            let fam = tables.family.get();
            fam.write(core::mem::zeroed());
            (*fam).family = family as c_int;
            (*fam).owner = module.as_ptr().cast();
            (*fam).create = Some(create_trampoline::<F>);

            let inet_kinds = [
                (kernel::c_str!("INET_SMC"), bindings::PF_INET, size, 0),
                (kernel::c_str!("INET6_SMC"), bindings::PF_INET6, size6, pinfo_offset),
            ];
            for (t, (pname, pf, psize, offset)) in tables.inet.iter().zip(inet_kinds) {
                let proto = t.proto.get();
                fill_proto(proto, pname, module, psize);
                (*proto).ipv6_pinfo_offset = offset as c_uint;
                (*proto).init = Some(inet_init_trampoline::<F>);
                // `sk_common_release` calls it unconditionally.
                (*proto).unhash = Some(unhash_trampoline);
                t.ops.get().write(vtable::<F>(pf, module));
                let sw = t.protosw.get();
                sw.write(core::mem::zeroed());
                (*sw).type_ = bindings::sock_type_SOCK_STREAM as u16;
                (*sw).protocol = bindings::IPPROTO_SMC as u16;
                (*sw).prot = proto;
                (*sw).ops = t.ops.get();
            }
        }

        if TABLES
            .compare_exchange(
                null_mut(),
                (&*tables as *const Tables).cast_mut(),
                Ordering::AcqRel,
                Ordering::Acquire,
            )
            .is_err()
        {
            return Err(errno(bindings::EBUSY));
        }
        // SAFETY: `proto` is initialised and pinned for the registration's life.
        let rc = unsafe { bindings::proto_register(tables.proto.get(), 1) };
        if rc != 0 {
            TABLES.store(null_mut(), Ordering::Release);
            return Err(Error::from_errno(rc));
        }
        // `sock_register` fails with -EEXIST when the family is taken (smc.ko).
        // SAFETY: `family` is initialised and pinned for the registration's life.
        let rc = unsafe { bindings::sock_register(tables.family.get()) };
        if rc != 0 {
            // SAFETY: registered just above.
            unsafe { bindings::proto_unregister(tables.proto.get()) };
            TABLES.store(null_mut(), Ordering::Release);
            if rc == -(bindings::EEXIST as c_int) {
                pr_err!(
                    "protocol family {} is already registered (is smc.ko loaded?)\n",
                    family
                );
            }
            return Err(Error::from_errno(rc));
        }
        let mut reg = Self {
            tables,
            inet_registered: 0,
            _family: PhantomData,
        };
        // From here on, `drop` undoes whatever was registered.
        for (i, t) in reg.tables.inet.iter().enumerate() {
            // SAFETY: `t.proto` is initialised and pinned for our life.
            to_result(unsafe { bindings::proto_register(t.proto.get(), 1) })?;
            // The protosw points at the registered proto and at ops that
            // live as long; both stay until `drop`.
            // SAFETY: so the inet layer may use them until unregistered.
            let rc = unsafe {
                if i == 0 {
                    bindings::inet_register_protosw(t.protosw.get());
                    0
                } else {
                    bindings::inet6_register_protosw(t.protosw.get())
                }
            };
            if rc != 0 {
                // SAFETY: registered just above, not in use.
                unsafe { bindings::proto_unregister(t.proto.get()) };
                return Err(Error::from_errno(rc));
            }
            reg.inet_registered = i + 1;
        }
        Ok(reg)
    }
}

impl<F: SocketFamily> Drop for Registration<F> {
    fn drop(&mut self) {
        for (i, t) in self.tables.inet.iter().enumerate().take(self.inet_registered).rev() {
            // Unregistering waits for concurrent `socket()` calls (RCU).
            // SAFETY: registered in `new`, unregistered once.
            unsafe {
                if i == 0 {
                    bindings::inet_unregister_protosw(t.protosw.get());
                } else {
                    bindings::inet6_unregister_protosw(t.protosw.get());
                }
                bindings::proto_unregister(t.proto.get());
            }
        }
        // `sock_unregister` waits for concurrent `create` calls (RCU); the
        // module reference each socket holds means none is left at unload.
        // SAFETY: both were registered in `new` and are unregistered once.
        unsafe {
            bindings::sock_unregister((*self.tables.family.get()).family);
            bindings::proto_unregister(self.tables.proto.get());
        }
        TABLES.store(null_mut(), Ordering::Release);
    }
}

/// # Safety
///
/// `proto::init` of our inet protos: called by `inet_create`/`inet6_create`
/// on a new socket of our proto, with `sk_socket` set, before anyone else
/// sees it.
unsafe extern "C" fn inet_init_trampoline<F: SocketFamily>(sk: *mut bindings::sock) -> c_int {
    from_result(|| {
        // SAFETY: the new socket's fields were set by `sock_init_data`.
        let (net, kind, family) = unsafe {
            (
                Net::from_raw(bindings::smc_rs_sock_net(sk)),
                (*sk).sk_type as i16,
                (*sk).__sk_common.skc_family,
            )
        };
        let (shared, locked) = F::create_inet(net, kind, u32::from(family))?;
        // The socket is ours alone (contract); on failure above, the inet
        // layer releases it with its own destructor.
        // SAFETY: allocated from our proto, so it has room for `SmcSk<F>`.
        unsafe {
            SmcSk::<F>::init_state(sk, shared, locked);
            bindings::smc_rs_sock_lock_init_class(sk);
            (*sk).sk_destruct = Some(destruct_trampoline::<F>);
            // SOL_SOCKET options reach our setsockopt, which applies them
            // to the TCP socket too.
            let sock = (*sk).sk_socket;
            if !sock.is_null() {
                (*sock).flags |= 1 << bindings::SOCK_CUSTOM_SOCKOPT;
            }
        }
        Ok(0)
    })
}

/// Our sockets are in no lookup table.
unsafe extern "C" fn unhash_trampoline(_sk: *mut bindings::sock) {}

/// Gives a new `struct socket` its SMC `struct sock` carrying `state`.
///
/// # Safety
///
/// `sock` must be a live socket without `sk`, and `net` live.
unsafe fn install<F: SocketFamily>(
    sock: *mut bindings::socket,
    net: Net,
    protocol: i32,
    kern: bool,
    (shared, locked): (F::Shared, F::Locked),
) -> Result {
    let tables = TABLES.load(Ordering::Acquire);
    if tables.is_null() {
        return Err(errno(bindings::EAFNOSUPPORT));
    }
    // `sock_unregister` waits for running `create`/`accept` calls.
    // SAFETY: so `tables` is valid: the family is registered while they run.
    let (proto, ops) = unsafe { ((*tables).proto.get(), (*tables).ops.get()) };
    // SAFETY: `net` is live and `proto` registered (see above).
    let sk = unsafe {
        bindings::smc_rs_sk_alloc(
            net.as_raw(),
            bindings::PF_SMC as c_int,
            proto,
            kern as c_int,
        )
    };
    if sk.is_null() {
        // `state` is dropped here, releasing what it owns.
        return Err(errno(bindings::ENOBUFS));
    }
    // `sk` is fresh from `sk_alloc` with our proto and unseen by others.
    // SAFETY: so it and the live `sock` without `sk` (caller) are ours to set up.
    unsafe {
        SmcSk::<F>::init_state(sk, shared, locked);
        (*sock).ops = ops;
        (*sock).state = bindings::socket_state_SS_UNCONNECTED;
        // SOL_SOCKET options reach our setsockopt, which applies them to the
        // TCP socket too.
        (*sock).flags |= 1 << bindings::SOCK_CUSTOM_SOCKOPT;
        bindings::sock_init_data(sock, sk);
        bindings::smc_rs_sock_lock_init_class(sk);
        (*sk).sk_destruct = Some(destruct_trampoline::<F>);
        (*sk).sk_protocol = protocol as u16;
    }
    Ok(())
}

/// Builds the `proto_ops` table of `F`.
fn vtable<F: SocketFamily>(family: u32, module: &'static ThisModule) -> bindings::proto_ops {
    bindings::proto_ops {
        family: family as c_int,
        owner: module.as_ptr().cast(),
        release: Some(release_trampoline::<F>),
        bind: Some(bind_trampoline::<F>),
        connect: Some(connect_trampoline::<F>),
        socketpair: Some(bindings::sock_no_socketpair),
        accept: Some(accept_trampoline::<F>),
        getname: Some(getname_trampoline::<F>),
        poll: Some(poll_trampoline::<F>),
        ioctl: Some(ioctl_trampoline::<F>),
        listen: Some(listen_trampoline::<F>),
        shutdown: Some(shutdown_trampoline::<F>),
        setsockopt: Some(setsockopt_trampoline::<F>),
        getsockopt: Some(getsockopt_trampoline::<F>),
        sendmsg: Some(sendmsg_trampoline::<F>),
        recvmsg: Some(recvmsg_trampoline::<F>),
        mmap: Some(bindings::sock_no_mmap),
        // SAFETY: all-zero is "no callback" for the remaining entries.
        ..unsafe { core::mem::zeroed() }
    }
}

/// # Safety
///
/// Called by the socket layer for `sk_destruct` of one of our sockets.
unsafe extern "C" fn destruct_trampoline<F: SocketFamily>(sk: *mut bindings::sock) {
    // The state was initialised in `install` before the destructor was set.
    // SAFETY: the last reference is gone, so this is the only access.
    unsafe { SmcSk::<F>::drop_state(sk) };
}

/// # Safety
///
/// Called by the socket layer with a live, new `sock` and live `net`.
unsafe extern "C" fn create_trampoline<F: SocketFamily>(
    net: *mut bindings::net,
    sock: *mut bindings::socket,
    protocol: c_int,
    kern: c_int,
) -> c_int {
    from_result(|| {
        // SAFETY: `net` is live for the call (socket layer contract).
        let net = unsafe { Net::from_raw(net) };
        // SAFETY: `sock` is live; `type` was set by the socket layer.
        let kind = unsafe { (*sock).type_ } as i16;
        let state = F::create(net, kind, protocol)?;
        // SAFETY: `sock` is new and has no `sk`; `net` is live.
        unsafe { install::<F>(sock, net, protocol, kern != 0, state) }?;
        Ok(0)
    })
}

/// Borrows the socket of a `proto_ops` call.
///
/// # Safety
///
/// `sock` must be one of our sockets with its `sk` installed, live for `'a`.
unsafe fn socket<'a, F: SocketFamily>(sock: *mut bindings::socket) -> Socket<'a, F> {
    // SAFETY: forwarded from the caller.
    unsafe { Socket::from_raw(sock) }
}

/// # Safety
///
/// Called by the socket layer from `sock_close` with one of our sockets.
unsafe extern "C" fn release_trampoline<F: SocketFamily>(sock: *mut bindings::socket) -> c_int {
    // SAFETY: `sock` is live for the call.
    let sk = unsafe { (*sock).sk };
    if sk.is_null() {
        return 0;
    }
    {
        // SAFETY: `sock` is live and `sk` is set: a socket we installed.
        let s = unsafe { socket::<F>(sock) };
        // Stops whatever could still redirect the file (handshake work).
        F::release(&s);
    }
    // A file redirected to the TCP fallback points back at us again before
    // the TCP socket is released (with the last reference to `sk`).
    // SAFETY: `sock` is live; its file, if any, is the one being closed.
    unsafe {
        let file = (*sock).file;
        if !file.is_null() && (*file).private_data != sock.cast() {
            let tcp = (*file).private_data.cast::<bindings::socket>();
            (*sock).wq.fasync_list = (*tcp).wq.fasync_list;
            (*tcp).wq.fasync_list = null_mut();
            (*tcp).file = null_mut();
            bindings::smc_rs_set_file_private(file, sock.cast());
        }
    }
    // Detach the socket from the file, then drop the reference `sk_alloc`
    // gave us; timers or work still holding one keep it alive.
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
unsafe extern "C" fn bind_trampoline<F: SocketFamily>(
    sock: *mut bindings::socket,
    addr: *mut bindings::sockaddr,
    len: c_int,
) -> c_int {
    // SAFETY: our socket, live for the call.
    let s = unsafe { socket::<F>(sock) };
    from_result(|| F::bind(&s, SockAddr::new(addr, len)).map(|_| 0))
}

/// # Safety
///
/// `proto_ops::connect` contract.
unsafe extern "C" fn connect_trampoline<F: SocketFamily>(
    sock: *mut bindings::socket,
    addr: *mut bindings::sockaddr,
    len: c_int,
    flags: c_int,
) -> c_int {
    // SAFETY: our socket, live for the call.
    let s = unsafe { socket::<F>(sock) };
    from_result(|| F::connect(&s, SockAddr::new(addr, len), flags).map(|_| 0))
}

/// # Safety
///
/// `proto_ops::accept` contract: `newsock` is a fresh socket with our ops and
/// a file, without `sk`.
unsafe extern "C" fn accept_trampoline<F: SocketFamily>(
    sock: *mut bindings::socket,
    newsock: *mut bindings::socket,
    arg: *mut bindings::proto_accept_arg,
) -> c_int {
    // SAFETY: our socket, live for the call; `arg` is the caller's.
    let (s, arg) = unsafe { (socket::<F>(sock), &mut *arg) };
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
        let ns = unsafe { socket::<F>(newsock) };
        F::accepted(&ns);
        Ok(0)
    })
}

/// # Safety
///
/// `proto_ops::getname` contract: `addr` is a kernel `sockaddr_storage`.
unsafe extern "C" fn getname_trampoline<F: SocketFamily>(
    sock: *mut bindings::socket,
    addr: *mut bindings::sockaddr,
    peer: c_int,
) -> c_int {
    // SAFETY: our socket, live for the call.
    let s = unsafe { socket::<F>(sock) };
    from_result(|| F::getname(&s, SockAddrOut::new(addr), peer != 0))
}

/// # Safety
///
/// `proto_ops::poll` contract.
unsafe extern "C" fn poll_trampoline<F: SocketFamily>(
    file: *mut bindings::file,
    sock: *mut bindings::socket,
    wait: *mut bindings::poll_table_struct,
) -> bindings::__poll_t {
    // SAFETY: our socket, live for the call.
    let s = unsafe { socket::<F>(sock) };
    F::poll(&s, PollTable::new(file, wait))
}

/// # Safety
///
/// `proto_ops::ioctl` contract.
unsafe extern "C" fn ioctl_trampoline<F: SocketFamily>(
    sock: *mut bindings::socket,
    cmd: c_uint,
    arg: c_ulong,
) -> c_int {
    // SAFETY: our socket, live for the call.
    let s = unsafe { socket::<F>(sock) };
    from_result(|| F::ioctl(&s, cmd, arg as usize))
}

/// # Safety
///
/// `proto_ops::listen` contract.
unsafe extern "C" fn listen_trampoline<F: SocketFamily>(
    sock: *mut bindings::socket,
    backlog: c_int,
) -> c_int {
    // SAFETY: our socket, live for the call.
    let s = unsafe { socket::<F>(sock) };
    from_result(|| F::listen(&s, backlog).map(|_| 0))
}

/// # Safety
///
/// `proto_ops::shutdown` contract.
unsafe extern "C" fn shutdown_trampoline<F: SocketFamily>(
    sock: *mut bindings::socket,
    how: c_int,
) -> c_int {
    // SAFETY: our socket, live for the call.
    let s = unsafe { socket::<F>(sock) };
    from_result(|| F::shutdown(&s, how).map(|_| 0))
}

/// # Safety
///
/// `proto_ops::setsockopt` contract.
unsafe extern "C" fn setsockopt_trampoline<F: SocketFamily>(
    sock: *mut bindings::socket,
    level: c_int,
    name: c_int,
    val: bindings::sockptr_t,
    len: c_uint,
) -> c_int {
    // SAFETY: our socket, live for the call.
    let s = unsafe { socket::<F>(sock) };
    from_result(|| F::setsockopt(&s, level, name, SockoptIn::new(val, len)).map(|_| 0))
}

/// # Safety
///
/// `proto_ops::getsockopt` contract: user pointers of the call.
unsafe extern "C" fn getsockopt_trampoline<F: SocketFamily>(
    sock: *mut bindings::socket,
    level: c_int,
    name: c_int,
    val: *mut c_char,
    len: *mut c_int,
) -> c_int {
    // SAFETY: our socket, live for the call.
    let s = unsafe { socket::<F>(sock) };
    from_result(|| F::getsockopt(&s, level, name, SockoptOut::new(val, len)).map(|_| 0))
}

/// # Safety
///
/// `proto_ops::sendmsg` contract.
unsafe extern "C" fn sendmsg_trampoline<F: SocketFamily>(
    sock: *mut bindings::socket,
    msg: *mut bindings::msghdr,
    len: usize,
) -> c_int {
    // SAFETY: our socket, live for the call.
    let s = unsafe { socket::<F>(sock) };
    from_result(|| F::sendmsg(&s, MsgHdr::new(msg), len))
}

/// # Safety
///
/// `proto_ops::recvmsg` contract.
unsafe extern "C" fn recvmsg_trampoline<F: SocketFamily>(
    sock: *mut bindings::socket,
    msg: *mut bindings::msghdr,
    len: usize,
    flags: c_int,
) -> c_int {
    // SAFETY: our socket, live for the call.
    let s = unsafe { socket::<F>(sock) };
    from_result(|| F::recvmsg(&s, MsgHdr::new(msg), len, flags))
}
