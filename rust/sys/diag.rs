// SPDX-License-Identifier: GPL-2.0

//! The sock_diag handler of AF_SMC: `NETLINK_SOCK_DIAG` dumps of the
//! family's sockets in upstream smc_diag's format (`struct smc_diag_msg`
//! and its attributes), so `smcss` and other readers of that ABI work.

use super::bindings;
use super::errno::EMSGSIZE;
use super::socktable::for_each_sock;
use super::sock::{SmcSk, SockState};
use crate::wire::cursor::Cursor;
use core::ffi::c_int;
use core::marker::PhantomData;
use kernel::error::Result;
use kernel::prelude::*;
use kernel::types::Opaque;
use kernel::ThisModule;

/// What a socket tells sock_diag about itself, read without its lock.
pub(crate) struct DiagInfo {
    /// `SMC_DIAG_MODE_*`.
    pub(crate) mode: u8,
    /// The state to report instead of `sk_state` (an SMC-R connection's
    /// close state, which moves without the socket lock).
    pub(crate) state: Option<u8>,
    /// Why it uses TCP (0: it does not).
    pub(crate) fallback_reason: u32,
    /// What the peer's decline said.
    pub(crate) peer_diagnosis: u32,
    /// The SMC-R connection's buffers and cursors, when asked for and
    /// there is one (`SMC_DIAG_CONNINFO`).
    pub(crate) conn: Option<ConnDiag>,
    /// Its link, when asked for and the link group is live
    /// (`SMC_DIAG_LGRINFO`).
    pub(crate) link: Option<LinkDiag>,
    /// An SMC-D connection's DMBs and GIDs, when asked for
    /// (`SMC_DIAG_DMBINFO`).
    pub(crate) dmb: Option<DmbDiag>,
}

/// smc_diag's `struct smcd_diag_dmbinfo`, in our terms.
pub(crate) struct DmbDiag {
    /// The link group's id, as a host word.
    pub(crate) linkid: u32,
    pub(crate) peer_gid: u64,
    pub(crate) peer_gid_ext: u64,
    pub(crate) my_gid: u64,
    pub(crate) my_gid_ext: u64,
    /// Our DMB's token, and the peer's.
    pub(crate) token: u64,
    pub(crate) peer_token: u64,
}

/// `IB_DEVICE_NAME_MAX`: bytes of an RDMA device name, NUL included.
pub(crate) const IBNAME_LEN: usize = 64;

/// Bytes of a GID as text: eight groups of four hex digits, seven colons
/// and a NUL.
pub(crate) const GID_TEXT_LEN: usize = 40;

/// smc_diag's `struct smc_diag_conninfo`, in our terms.
pub(crate) struct ConnDiag {
    pub(crate) token: u32,
    pub(crate) sndbuf_size: u32,
    pub(crate) rmbe_size: u32,
    pub(crate) peer_rmbe_size: u32,
    /// The peer's cursors in the last CDC message received: its producer
    /// in our RMB, its consumer in its own.
    pub(crate) rx_prod: Cursor,
    pub(crate) rx_cons: Cursor,
    /// Our cursors in the last CDC message sent.
    pub(crate) tx_prod: Cursor,
    pub(crate) tx_cons: Cursor,
    pub(crate) rx_prod_flags: u8,
    pub(crate) rx_conn_state_flags: u8,
    pub(crate) tx_prod_flags: u8,
    pub(crate) tx_conn_state_flags: u8,
    /// Send buffer cursors: filled by the application, written to the
    /// peer, confirmed by the device.
    pub(crate) tx_prep: Cursor,
    pub(crate) tx_sent: Cursor,
    pub(crate) tx_fin: Cursor,
}

/// smc_diag's `struct smc_diag_lgrinfo` (its one link), in our terms.
pub(crate) struct LinkDiag {
    pub(crate) link_id: u8,
    pub(crate) ibname: [u8; IBNAME_LEN],
    pub(crate) ibport: u8,
    /// GIDs as text, `smc_gid_be16_convert`'s format, NUL terminated.
    pub(crate) gid: [u8; GID_TEXT_LEN],
    pub(crate) peer_gid: [u8; GID_TEXT_LEN],
    pub(crate) role: u8,
}

/// The extensions a request asks for (`smc_diag_req::diag_ext`).
#[derive(Clone, Copy)]
pub(crate) struct DiagExt(u8);

impl DiagExt {
    /// `SMC_DIAG_CONNINFO` is asked for.
    pub(crate) fn conninfo(self) -> bool {
        self.0 & (1 << (bindings::SMC_DIAG_CONNINFO - 1)) != 0
    }

    /// `SMC_DIAG_LGRINFO` is asked for.
    pub(crate) fn lgrinfo(self) -> bool {
        self.0 & (1 << (bindings::SMC_DIAG_LGRINFO - 1)) != 0
    }

    /// `SMC_DIAG_DMBINFO` is asked for.
    pub(crate) fn dmbinfo(self) -> bool {
        self.0 & (1 << (bindings::SMC_DIAG_DMBINFO - 1)) != 0
    }
}

/// A protocol whose sockets sock_diag can list.
pub(crate) trait SockDiag: SockState {
    /// The socket's diagnostic state, with the extensions `ext` asks for;
    /// called with softirqs off: no sleeping.
    fn diag_info(&self, ext: DiagExt) -> DiagInfo;
}

/// The registered sock_diag handler; unregisters on drop.
pub(crate) struct DiagRegistration<S: SockDiag> {
    handler: Pin<KBox<Opaque<bindings::sock_diag_handler>>>,
    _s: PhantomData<S>,
}

// SAFETY: the handler table is written before registration and only read after.
unsafe impl<S: SockDiag> Send for DiagRegistration<S> {}
// SAFETY: as above.
unsafe impl<S: SockDiag> Sync for DiagRegistration<S> {}

impl<S: SockDiag> DiagRegistration<S> {
    /// Registers the handler for address family `family`.
    pub(crate) fn register(family: u8, module: &'static ThisModule) -> Result<Self> {
        let handler = KBox::pin(Opaque::<bindings::sock_diag_handler>::uninit(), GFP_KERNEL)?;
        let h = handler.get();
        // All-zero is "no callback" for the entries left out.
        // SAFETY: not shared yet: writing is exclusive.
        unsafe {
            h.write(core::mem::zeroed());
            (*h).owner = module.as_ptr().cast();
            (*h).family = family;
            (*h).dump = Some(request_trampoline::<S>);
        }
        // `EBUSY` when smc_diag.ko (of upstream SMC) has the family.
        // SAFETY: filled and pinned until `drop` unregisters it.
        kernel::error::to_result(unsafe { bindings::sock_diag_register(h) })?;
        Ok(DiagRegistration {
            handler,
            _s: PhantomData,
        })
    }
}

impl<S: SockDiag> Drop for DiagRegistration<S> {
    fn drop(&mut self) {
        // Waits for running requests; dumps in progress hold a module
        // reference (`netlink_dump_control::module`).
        // SAFETY: registered in `register`, unregistered once.
        unsafe { bindings::sock_diag_unregister(self.handler.get()) };
    }
}

/// # Safety
///
/// `sock_diag_handler::dump`: a request on a sock_diag socket.
unsafe extern "C" fn request_trampoline<S: SockDiag>(
    skb: *mut bindings::sk_buff,
    nlh: *mut bindings::nlmsghdr,
) -> c_int {
    // SAFETY: `nlh` is the live request header.
    let (kind, flags) = unsafe { ((*nlh).nlmsg_type, (*nlh).nlmsg_flags) };
    if u32::from(kind) != bindings::SOCK_DIAG_BY_FAMILY
        || u32::from(flags) & bindings::NLM_F_DUMP == 0
    {
        return 0;
    }
    // SAFETY: all-zero is a dump control without callbacks.
    let mut c: bindings::netlink_dump_control = unsafe { core::mem::zeroed() };
    c.dump = Some(dump_trampoline::<S>);
    // SAFETY: a helper returning a constant.
    c.min_dump_alloc = unsafe { bindings::smc_rs_diag_min_dump_alloc() };
    // This module's `struct module`: a dump in progress pins it.
    c.module = &raw mut bindings::__this_module;
    // The request's socket lives in the namespace whose diag socket answers.
    // SAFETY: live request buffer and socket.
    unsafe {
        let net = bindings::smc_rs_skb_sock_net(skb);
        bindings::__netlink_dump_start(bindings::smc_rs_net_diag_nlsk(net), skb, nlh, &mut c)
    }
}

/// # Safety
///
/// `netlink_dump_control::dump` of a dump started by [`request_trampoline`].
unsafe extern "C" fn dump_trampoline<S: SockDiag>(
    skb: *mut bindings::sk_buff,
    cb: *mut bindings::netlink_callback,
) -> c_int {
    // SAFETY: live reply buffer and callback; `args[0]` is ours (0 at first).
    let (net, skip) = unsafe {
        (
            bindings::smc_rs_skb_sock_net(skb),
            (*cb).__bindgen_anon_1.args[0].max(0) as usize,
        )
    };
    // SAFETY: the dump's request: its header, and its payload as far as
    // its length says (sock_diag checked the header's).
    let ext = unsafe {
        let nlh = (*cb).nlh;
        let payload = ((*nlh).nlmsg_len as usize).saturating_sub(NLMSG_HDRLEN);
        if payload >= core::mem::size_of::<bindings::smc_diag_req>() {
            let req = bindings::smc_rs_nlmsg_data(nlh).cast::<bindings::smc_diag_req>();
            DiagExt((*req).diag_ext)
        } else {
            // A short request asks for nothing more (upstream reads past it).
            DiagExt(0)
        }
    };
    let done = for_each_sock(net, skip, |sk| fill::<S>(skb, cb, sk, ext));
    // SAFETY: as above.
    unsafe {
        (*cb).__bindgen_anon_1.args[0] = done as _;
        bindings::smc_rs_skb_len(skb) as c_int
    }
}

/// Adds the message of one socket. `EMSGSIZE` when the buffer is full.
fn fill<S: SockDiag>(
    skb: *mut bindings::sk_buff,
    cb: *mut bindings::netlink_callback,
    sk: *mut bindings::sock,
    ext: DiagExt,
) -> Result {
    // The socket is listed, so alive, with its state (see `for_each_sock`);
    // `skb` and `cb` are the dump's.
    // SAFETY: so every pointer read below is valid.
    unsafe {
        let smc = SmcSk::<S>::from_raw(sk);
        let nlh = bindings::smc_rs_nlmsg_put(
            skb,
            bindings::smc_rs_netlink_cb_portid((*cb).skb),
            (*(*cb).nlh).nlmsg_seq,
            i32::from((*(*cb).nlh).nlmsg_type),
            core::mem::size_of::<bindings::smc_diag_msg>() as c_int,
            bindings::NLM_F_MULTI as c_int,
        );
        if nlh.is_null() {
            return Err(EMSGSIZE.into());
        }
        let r = bindings::smc_rs_nlmsg_data(nlh).cast::<bindings::smc_diag_msg>();
        r.write(core::mem::zeroed());
        (*r).diag_family = (*sk).__sk_common.skc_family as u8;
        bindings::sock_diag_save_cookie(sk, (*r).id.idiag_cookie.as_mut_ptr());
        let info = smc.state().diag_info(ext);
        let tcp = smc.state().clcsock().sk().as_raw();
        let c = &(*tcp).__sk_common;
        (*r).id.idiag_sport = c.__bindgen_anon_3.__bindgen_anon_1.skc_num.to_be();
        (*r).id.idiag_dport = c.__bindgen_anon_3.__bindgen_anon_1.skc_dport;
        (*r).id.idiag_if = c.skc_bound_dev_if as u32;
        // Addresses as upstream: by the SMC protocol number, so IPPROTO_SMC
        // sockets report none.
        match u32::from((*sk).sk_protocol) {
            0 => {
                (*r).id.idiag_src[0] = c.__bindgen_anon_1.__bindgen_anon_1.skc_rcv_saddr;
                (*r).id.idiag_dst[0] = c.__bindgen_anon_1.__bindgen_anon_1.skc_daddr;
            }
            1 => {
                (*r).id.idiag_src = c.skc_v6_rcv_saddr.in6_u.u6_addr32;
                (*r).id.idiag_dst = c.skc_v6_daddr.in6_u.u6_addr32;
            }
            _ => {}
        }
        (*r).diag_state = info.state.unwrap_or((*sk).__sk_common.skc_state);
        (*r).__bindgen_anon_1.diag_mode = info.mode;
        (*r).diag_uid = bindings::smc_rs_diag_uid((*cb).skb, sk);
        (*r).diag_inode = bindings::sock_i_ino(sk) as u64;
        // The SMC socket's own bits: after a fallback, shutdown goes to TCP
        // through the redirected file (upstream's too) and these stay 0.
        let shutdown = (*sk).sk_shutdown;
        let fallback = bindings::smc_diag_fallback {
            reason: info.fallback_reason,
            peer_diagnosis: info.peer_diagnosis,
        };
        let ok = bindings::nla_put(
            skb,
            bindings::SMC_DIAG_SHUTDOWN as c_int,
            1,
            (&shutdown as *const u8).cast(),
        ) == 0
            && put_struct(skb, bindings::SMC_DIAG_FALLBACK, &fallback)
            && info.conn.as_ref().map_or(true, |c| {
                put_struct(skb, bindings::SMC_DIAG_CONNINFO, &conninfo(c))
            })
            && info.link.as_ref().map_or(true, |l| {
                put_struct(skb, bindings::SMC_DIAG_LGRINFO, &lgrinfo(l))
            })
            && info.dmb.as_ref().map_or(true, |d| {
                put_struct(skb, bindings::SMC_DIAG_DMBINFO, &dmbinfo(d))
            });
        if !ok {
            bindings::smc_rs_nlmsg_cancel(skb, nlh);
            return Err(EMSGSIZE.into());
        }
        bindings::smc_rs_nlmsg_end(skb, nlh);
    }
    Ok(())
}

/// `NLMSG_HDRLEN`: the aligned netlink message header.
const NLMSG_HDRLEN: usize = core::mem::size_of::<bindings::nlmsghdr>();

/// Adds attribute `attr` holding the bytes of `value` (a plain C struct);
/// false when the buffer is full.
fn put_struct<T>(skb: *mut bindings::sk_buff, attr: u32, value: &T) -> bool {
    // SAFETY: a live reply buffer (the dump's); `value` is readable for its
    // size, and its bytes are initialised (the structs are built whole,
    // from zero, below).
    unsafe {
        bindings::nla_put(
            skb,
            attr as c_int,
            core::mem::size_of::<T>() as c_int,
            (value as *const T).cast(),
        ) == 0
    }
}

/// A cursor as smc_diag reports it.
fn cursor(c: crate::wire::cursor::Cursor) -> bindings::smc_diag_cursor {
    bindings::smc_diag_cursor {
        reserved: 0,
        wrap: c.wrap,
        count: c.count,
    }
}

/// `struct smc_diag_conninfo` of a connection.
fn conninfo(c: &ConnDiag) -> bindings::smc_diag_conninfo {
    bindings::smc_diag_conninfo {
        token: c.token,
        sndbuf_size: c.sndbuf_size,
        rmbe_size: c.rmbe_size,
        peer_rmbe_size: c.peer_rmbe_size,
        rx_prod: cursor(c.rx_prod),
        rx_cons: cursor(c.rx_cons),
        tx_prod: cursor(c.tx_prod),
        tx_cons: cursor(c.tx_cons),
        rx_prod_flags: c.rx_prod_flags,
        rx_conn_state_flags: c.rx_conn_state_flags,
        tx_prod_flags: c.tx_prod_flags,
        tx_conn_state_flags: c.tx_conn_state_flags,
        tx_prep: cursor(c.tx_prep),
        tx_sent: cursor(c.tx_sent),
        tx_fin: cursor(c.tx_fin),
    }
}

/// `struct smc_diag_lgrinfo` of a link (padding bytes zero).
fn lgrinfo(l: &LinkDiag) -> bindings::smc_diag_lgrinfo {
    let mut link = bindings::smc_diag_linkinfo {
        link_id: l.link_id,
        ibname: [0; 64],
        ibport: l.ibport,
        gid: [0; 40],
        peer_gid: [0; 40],
    };
    copy_into(&mut link.ibname, &l.ibname);
    copy_into(&mut link.gid, &l.gid);
    copy_into(&mut link.peer_gid, &l.peer_gid);
    bindings::smc_diag_lgrinfo {
        lnk: [link],
        role: l.role,
    }
}

/// Bytes of `struct smcd_diag_dmbinfo`: a 32-bit link id, 4 bytes of
/// padding, six 64-bit words.
const DMBINFO_LEN: usize = 56;
const _: () = assert!(core::mem::size_of::<bindings::smcd_diag_dmbinfo>() == DMBINFO_LEN);

/// `struct smcd_diag_dmbinfo` of an SMC-D connection, as bytes (its
/// padding zero: a struct value's padding would be undefined).
fn dmbinfo(d: &DmbDiag) -> [u8; DMBINFO_LEN] {
    let mut out = [0u8; DMBINFO_LEN];
    let words = [
        d.peer_gid,
        d.my_gid,
        d.token,
        d.peer_token,
        d.peer_gid_ext,
        d.my_gid_ext,
    ];
    for (chunk, w) in out.get_mut(8..).unwrap_or(&mut []).chunks_exact_mut(8).zip(words) {
        chunk.copy_from_slice(&w.to_ne_bytes());
    }
    if let Some(id) = out.get_mut(..4) {
        id.copy_from_slice(&d.linkid.to_ne_bytes());
    }
    out
}

/// Copies as much of `src` as fits into `dst`.
fn copy_into(dst: &mut [u8], src: &[u8]) {
    for (d, s) in dst.iter_mut().zip(src) {
        *d = *s;
    }
}
