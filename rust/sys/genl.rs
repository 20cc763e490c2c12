// SPDX-License-Identifier: GPL-2.0

//! Generic netlink families: registration (RAII), the `doit`/`dumpit`
//! trampolines, the request's attributes and the messages of a dump.
//!
//! A family is a [`GenlFamily`]: its name, version, commands (each a `do`,
//! a `dump` or both, with or without `CAP_NET_ADMIN`, which the netlink
//! core checks) and the attributes its requests may carry (the policy the
//! core validates against before a handler runs).

use super::bindings;
use super::errno::{EINVAL, EMSGSIZE, ENOMEM};
use super::net::Net;
use core::ffi::{c_int, c_long};
use core::marker::PhantomData;
use kernel::error::{to_result, Result};
use kernel::prelude::*;
use kernel::types::Opaque;
use kernel::ThisModule;

/// What a command does.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(crate) enum CommandKind {
    /// A request answered by an error code (`doit`).
    Do,
    /// A dump: messages until the handler has no more (`dumpit`).
    Dump,
    /// Both: a dump when the request asks for one (`NLM_F_DUMP`), a
    /// request otherwise.
    DoAndDump,
}

/// What an attribute of a request must be.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(crate) enum AttrPolicy {
    /// A string of at most this many characters, NUL-terminated or not
    /// (`NLA_STRING`).
    String(u16),
    /// A NUL-terminated string of at most this many characters before the
    /// NUL (`NLA_NUL_STRING`).
    NulString(u16),
    /// A `u8` (`NLA_U8`).
    U8,
}

/// One command of a family.
pub(crate) struct GenlCommand {
    /// Its number.
    pub(crate) cmd: u8,
    /// Do or dump.
    pub(crate) kind: CommandKind,
    /// Needs `CAP_NET_ADMIN` in the caller's network namespace.
    pub(crate) admin: bool,
    /// Its requests may carry these attributes; every other one is
    /// rejected (or, in a [`GenlFamily::LENIENT`] family, not looked at).
    pub(crate) attrs: &'static [(u16, AttrPolicy)],
}

/// A generic netlink family.
pub(crate) trait GenlFamily: Sized + 'static {
    /// The family's name.
    const NAME: &'static CStr;
    /// Its version.
    const VERSION: u32;
    /// Its commands.
    const COMMANDS: &'static [GenlCommand];
    /// The highest attribute number any command accepts.
    const MAX_ATTR: u16;
    /// Validation as by `GENL_DONT_VALIDATE_STRICT | GENL_DONT_VALIDATE_DUMP`
    /// (older families'): attributes not in the policy are let through,
    /// not rejected, and a dump's request is not parsed.
    const LENIENT: bool = false;

    /// Runs a `Do` command (or a `DoAndDump` one not asked as a dump).
    fn doit(cmd: u8, req: &GenlRequest<'_>) -> Result;
    /// Runs a `Dump` command: fills `dump` with messages from where its
    /// cursor says, and leaves the cursor where the next call goes on.
    fn dumpit(cmd: u8, dump: &mut GenlDump<'_, Self>) -> Result;
}

/// The C tables of a family, pinned for its registration.
struct Tables {
    family: Opaque<bindings::genl_family>,
    ops: KVec<bindings::genl_ops>,
    /// One policy per command: `MAX_ATTR + 1` entries each.
    _policies: KVec<KVec<bindings::nla_policy>>,
    /// The family-wide policy: every attribute rejected (let through when
    /// lenient).
    reject: KVec<bindings::nla_policy>,
}

/// A registered family; unregisters on drop.
pub(crate) struct GenlRegistration<F: GenlFamily> {
    tables: Pin<KBox<Tables>>,
    _f: PhantomData<F>,
}

// SAFETY: the tables are written before registration and only read by the
// netlink core afterwards.
unsafe impl<F: GenlFamily> Send for GenlRegistration<F> {}
// SAFETY: as above.
unsafe impl<F: GenlFamily> Sync for GenlRegistration<F> {}

/// A policy of `max + 1` entries: the given attributes accepted, all else
/// rejected (unless `lenient`).
fn policy(
    max: u16,
    attrs: &[(u16, AttrPolicy)],
    lenient: bool,
) -> Result<KVec<bindings::nla_policy>> {
    let mut p = KVec::with_capacity(usize::from(max) + 1, GFP_KERNEL)?;
    for attr in 0..=max {
        // SAFETY: all-zero is a valid `nla_policy` (NLA_UNSPEC).
        let mut e: bindings::nla_policy = unsafe { core::mem::zeroed() };
        match attrs.iter().find(|(a, _)| *a == attr) {
            Some((_, AttrPolicy::String(len))) => {
                e.type_ = bindings::NLA_STRING as u8;
                e.len = *len;
            }
            Some((_, AttrPolicy::NulString(len))) => {
                e.type_ = bindings::NLA_NUL_STRING as u8;
                e.len = *len;
            }
            Some((_, AttrPolicy::U8)) => e.type_ = bindings::NLA_U8 as u8,
            None if attr > 0 && !lenient => e.type_ = bindings::NLA_REJECT as u8,
            None => {}
        }
        p.push(e, GFP_KERNEL)?;
    }
    Ok(p)
}

impl<F: GenlFamily> GenlRegistration<F> {
    /// Registers the family.
    pub(crate) fn register(module: &'static ThisModule) -> Result<Self> {
        let mut ops = KVec::with_capacity(F::COMMANDS.len(), GFP_KERNEL)?;
        let mut policies = KVec::with_capacity(F::COMMANDS.len(), GFP_KERNEL)?;
        for c in F::COMMANDS {
            policies.push(policy(F::MAX_ATTR, c.attrs, F::LENIENT)?, GFP_KERNEL)?;
        }
        for (c, p) in F::COMMANDS.iter().zip(policies.iter()) {
            // SAFETY: all-zero is "no callback, no flags" for a `genl_ops`.
            let mut op: bindings::genl_ops = unsafe { core::mem::zeroed() };
            op.cmd = c.cmd;
            op.flags = if c.admin {
                bindings::GENL_ADMIN_PERM as u8
            } else {
                0
            };
            if F::LENIENT {
                op.validate = (bindings::genl_validate_flags_GENL_DONT_VALIDATE_STRICT
                    | bindings::genl_validate_flags_GENL_DONT_VALIDATE_DUMP)
                    as u8;
            }
            if c.kind != CommandKind::Dump {
                op.doit = Some(doit_trampoline::<F>);
            }
            if c.kind != CommandKind::Do {
                op.dumpit = Some(dumpit_trampoline::<F>);
            }
            if !c.attrs.is_empty() {
                // The policy lives in `policies`, owned by the registration.
                op.policy = p.as_ptr();
                op.maxattr = u32::from(F::MAX_ATTR);
            }
            ops.push(op, GFP_KERNEL)?;
        }
        let tables = KBox::pin(
            Tables {
                family: Opaque::uninit(),
                ops,
                _policies: policies,
                reject: policy(F::MAX_ATTR, &[], F::LENIENT)?,
            },
            GFP_KERNEL,
        )?;
        let fam = tables.family.get();
        // All-zero is an unregistered family without callbacks.
        // SAFETY: not shared yet: writing it is exclusive; the pointers stored
        // point into `tables`, which outlives the registration.
        unsafe {
            fam.write(core::mem::zeroed());
            for (d, s) in (*fam).name.iter_mut().zip(F::NAME.as_bytes_with_nul()) {
                *d = *s as _;
            }
            (*fam).version = F::VERSION;
            (*fam).maxattr = u32::from(F::MAX_ATTR);
            (*fam).policy = tables.reject.as_ptr();
            (*fam).set_netnsok(1);
            (*fam).module = module.as_ptr().cast();
            (*fam).ops = tables.ops.as_ptr();
            (*fam).n_ops = tables.ops.len() as u8;
            (*fam).resv_start_op = F::COMMANDS
                .iter()
                .map(|c| c.cmd)
                .max()
                .unwrap_or(0)
                .saturating_add(1);
        }
        // SAFETY: filled above, pinned until `drop` unregisters it.
        if let Err(e) = to_result(unsafe { bindings::genl_register_family(fam) }) {
            if e == super::errno::EEXIST {
                pr_err!("generic netlink family {} is already registered\n", F::NAME);
            }
            return Err(e);
        }
        Ok(GenlRegistration {
            tables,
            _f: PhantomData,
        })
    }
}

impl<F: GenlFamily> Drop for GenlRegistration<F> {
    fn drop(&mut self) {
        // Waits for running handlers.
        // SAFETY: registered in `register`, unregistered once.
        unsafe { bindings::genl_unregister_family(self.tables.family.get()) };
    }
}

/// The attributes of a `do` request, validated against the command's policy.
pub(crate) struct GenlRequest<'a> {
    info: *mut bindings::genl_info,
    max: u16,
    _call: PhantomData<&'a ()>,
}

impl GenlRequest<'_> {
    /// The network namespace the request came from.
    pub(crate) fn net(&self) -> &Net {
        // SAFETY: `info` is live for the call; its namespace outlives it.
        unsafe { Net::from_raw(bindings::smc_rs_genl_info_net(self.info)) }
    }

    /// The payload of attribute `attr`, if the request carries it.
    pub(crate) fn attr(&self, attr: u16) -> Option<&[u8]> {
        if attr > self.max {
            return None;
        }
        // `attrs` has `maxattr + 1` entries (the command's policy), each
        // NULL or a validated attribute inside the request message, which
        // lives for the call.
        // SAFETY: so the reads stay inside valid memory.
        unsafe {
            let attrs = (*self.info).attrs;
            if attrs.is_null() {
                return None;
            }
            let nla = *attrs.add(usize::from(attr));
            if nla.is_null() {
                return None;
            }
            let len =
                usize::from((*nla).nla_len).checked_sub(core::mem::size_of::<bindings::nlattr>())?;
            Some(core::slice::from_raw_parts(
                nla.cast::<u8>()
                    .add(core::mem::size_of::<bindings::nlattr>()),
                len,
            ))
        }
    }
}

impl GenlRequest<'_> {
    /// Answers the request with messages of command `cmd`, as many as
    /// `fill` adds (each flagged `NLM_F_MULTI`), then `NLMSG_DONE`: a dump's
    /// answer in one buffer of a page (upstream's `genlmsg_reply` of a
    /// `nlmsg_new(NLMSG_DEFAULT_SIZE)`). A message that does not fit is
    /// left out, and so are those after it.
    pub(crate) fn reply_multi(
        &self,
        cmd: u8,
        fill: impl FnOnce(&mut GenlReply<'_>) -> Result,
    ) -> Result {
        // SAFETY: allocates a fresh buffer (or fails with NULL).
        let skb = unsafe { bindings::smc_rs_genlmsg_new() };
        if skb.is_null() {
            return Err(ENOMEM.into());
        }
        let mut reply = GenlReply {
            skb,
            info: self.info,
            cmd,
            _call: PhantomData,
        };
        let _ = fill(&mut reply);
        // SAFETY: `info` is live for the call; `skb` is ours.
        let done = unsafe {
            bindings::smc_rs_nlmsg_put(
                skb,
                (*self.info).snd_portid,
                (*self.info).snd_seq,
                bindings::NLMSG_DONE as c_int,
                0,
                bindings::NLM_F_MULTI as c_int,
            )
        };
        if done.is_null() {
            // SAFETY: `skb` is ours and not handed on.
            unsafe { bindings::smc_rs_nlmsg_free(skb) };
            return Err(EMSGSIZE.into());
        }
        // SAFETY: consumes `skb` (also on failure); `info` is live.
        to_result(unsafe { bindings::smc_rs_genlmsg_reply(skb, self.info) })
    }
}

/// Fills the message whose header `genlmsg_put` returned (`EMSGSIZE`
/// when it found no room) with `fill`, and ends it, or takes it back
/// when `fill` fails.
///
/// # Safety
///
/// `skb` is a message buffer the caller owns; `hdr` is null or the header
/// `genlmsg_put` just put into it.
unsafe fn finish_message(
    skb: *mut bindings::sk_buff,
    hdr: *mut core::ffi::c_void,
    fill: impl FnOnce(&mut GenlMessage<'_>) -> Result,
) -> Result {
    if hdr.is_null() {
        return Err(EMSGSIZE.into());
    }
    let mut msg = GenlMessage {
        skb,
        _call: PhantomData,
    };
    match fill(&mut msg) {
        // SAFETY: `hdr` is in `skb` (the caller's promise).
        Ok(()) => unsafe { bindings::smc_rs_genlmsg_end(skb, hdr) },
        Err(e) => {
            // SAFETY: as above; removes the partial message.
            unsafe { bindings::smc_rs_genlmsg_cancel(skb, hdr) };
            return Err(e);
        }
    }
    Ok(())
}

/// The answer to a request being built ([`GenlRequest::reply_multi`]).
pub(crate) struct GenlReply<'a> {
    skb: *mut bindings::sk_buff,
    info: *mut bindings::genl_info,
    cmd: u8,
    _call: PhantomData<&'a mut ()>,
}

impl GenlReply<'_> {
    /// Adds one message built by `fill`; `EMSGSIZE` (and the message taken
    /// back) when the buffer is full.
    pub(crate) fn message(&mut self, fill: impl FnOnce(&mut GenlMessage<'_>) -> Result) -> Result {
        // SAFETY: `skb` is ours; `info` and its family are live for the call.
        let hdr = unsafe {
            bindings::genlmsg_put(
                self.skb,
                (*self.info).snd_portid,
                (*self.info).snd_seq,
                (*self.info).family,
                bindings::NLM_F_MULTI as c_int,
                self.cmd,
            )
        };
        // SAFETY: `hdr` is null or was just put into `skb`, which is ours.
        unsafe { finish_message(self.skb, hdr, fill) }
    }
}

/// A dump in progress: the reply buffer and the cursor kept between calls.
pub(crate) struct GenlDump<'a, F: GenlFamily> {
    skb: *mut bindings::sk_buff,
    cb: *mut bindings::netlink_callback,
    _call: PhantomData<(&'a mut (), F)>,
}

impl<'a, F: GenlFamily> GenlDump<'a, F> {
    /// The network namespace the dump request came from (live for the
    /// whole call).
    pub(crate) fn net(&self) -> &'a Net {
        // SAFETY: the request's socket and namespace outlive the dump call.
        unsafe { Net::from_raw(bindings::smc_rs_skb_sock_net((*self.cb).skb)) }
    }

    /// Six words kept from one call of the dump to the next (0 at first).
    pub(crate) fn cursor(&mut self) -> &mut [c_long; 6] {
        // SAFETY: `cb` is live for the call and its `args` are ours.
        unsafe { &mut (*self.cb).__bindgen_anon_1.args }
    }

    /// Runs `fill`, which adds messages; when it fails, every message it
    /// added is taken back (a group of messages that goes whole or not).
    pub(crate) fn group(&mut self, fill: impl FnOnce(&mut Self) -> Result) -> Result {
        // SAFETY: `skb` is live for the call.
        let mark = unsafe { bindings::smc_rs_skb_len(self.skb) };
        let r = fill(self);
        if r.is_err() {
            // SAFETY: as above; `mark` is not beyond the buffer's length,
            // which only grew since.
            unsafe { bindings::smc_rs_skb_trim(self.skb, mark) };
        }
        r
    }

    /// Adds one message of command `cmd` (flagged `NLM_F_MULTI`) built by
    /// `fill`. `EMSGSIZE` when the buffer is full: the message is taken
    /// back and the caller stops, to go on in the next call.
    pub(crate) fn message(
        &mut self,
        cmd: u8,
        fill: impl FnOnce(&mut GenlMessage<'_>) -> Result,
    ) -> Result {
        // SAFETY: `skb` and `cb` are live for the call and belong to a
        // dump of the family, registered while its handlers run.
        let hdr = unsafe {
            bindings::genlmsg_put(
                self.skb,
                bindings::smc_rs_netlink_cb_portid((*self.cb).skb),
                (*(*self.cb).nlh).nlmsg_seq,
                bindings::smc_rs_genl_dump_family(self.cb),
                bindings::NLM_F_MULTI as c_int,
                cmd,
            )
        };
        // SAFETY: `hdr` is null or was just put into `skb`, which is ours.
        unsafe { finish_message(self.skb, hdr, fill) }
    }
}

/// A message being built in a dump.
pub(crate) struct GenlMessage<'a> {
    skb: *mut bindings::sk_buff,
    _call: PhantomData<&'a mut ()>,
}

impl GenlMessage<'_> {
    /// Adds attribute `attr` with payload `data`.
    pub(crate) fn put(&mut self, attr: u16, data: &[u8]) -> Result {
        let len = c_int::try_from(data.len()).map_err(|_| EINVAL)?;
        let (skb, attr, ptr) = (self.skb, c_int::from(attr), data.as_ptr().cast());
        // SAFETY: live reply buffer; `data` is readable for `len` bytes.
        let rc = unsafe { bindings::nla_put(skb, attr, len, ptr) };
        if rc != 0 {
            return Err(EMSGSIZE.into());
        }
        Ok(())
    }

    /// Adds a `u8` attribute.
    pub(crate) fn put_u8(&mut self, attr: u16, v: u8) -> Result {
        self.put(attr, &[v])
    }

    /// Adds a `u16` attribute (host byte order, as netlink's).
    pub(crate) fn put_u16(&mut self, attr: u16, v: u16) -> Result {
        self.put(attr, &v.to_ne_bytes())
    }

    /// Adds a `u32` attribute.
    pub(crate) fn put_u32(&mut self, attr: u16, v: u32) -> Result {
        self.put(attr, &v.to_ne_bytes())
    }

    /// Adds a `u64` attribute, preceded by a `pad` attribute where the
    /// architecture needs it 64-bit aligned (`nla_put_u64_64bit`).
    pub(crate) fn put_u64(&mut self, attr: u16, v: u64, pad: u16) -> Result {
        let bytes = v.to_ne_bytes();
        // SAFETY: live reply buffer; `bytes` is readable for 8 bytes.
        let rc = unsafe {
            bindings::nla_put_64bit(
                self.skb,
                c_int::from(attr),
                8,
                bytes.as_ptr().cast(),
                c_int::from(pad),
            )
        };
        if rc != 0 {
            return Err(EMSGSIZE.into());
        }
        Ok(())
    }

    /// Adds an attribute of netlink's variable-width `uint` type: 32 bits
    /// when the value fits, else 64 (`nla_put_uint`).
    pub(crate) fn put_uint(&mut self, attr: u16, v: u64) -> Result {
        match u32::try_from(v) {
            Ok(v32) => self.put_u32(attr, v32),
            Err(_) => self.put(attr, &v.to_ne_bytes()),
        }
    }

    /// Adds a string attribute: `text` up to its first NUL, then a NUL
    /// (`nla_put_string`).
    pub(crate) fn put_str(&mut self, attr: u16, text: &[u8]) -> Result {
        let len = text.iter().position(|b| *b == 0).unwrap_or(text.len());
        let mut buf = [0u8; 65];
        let dst = buf.get_mut(..len).ok_or(EINVAL)?;
        dst.copy_from_slice(text.get(..len).ok_or(EINVAL)?);
        self.put(attr, buf.get(..=len).ok_or(EINVAL)?)
    }

    /// Adds a nested attribute `attr` filled by `fill`; taken back whole
    /// when `fill` fails.
    pub(crate) fn nest(&mut self, attr: u16, fill: impl FnOnce(&mut Self) -> Result) -> Result {
        // SAFETY: live reply buffer.
        let start = unsafe { bindings::smc_rs_nla_nest_start(self.skb, c_int::from(attr)) };
        if start.is_null() {
            return Err(EMSGSIZE.into());
        }
        match fill(self) {
            // SAFETY: `start` was put into `skb` above.
            Ok(()) => unsafe { bindings::smc_rs_nla_nest_end(self.skb, start) },
            Err(e) => {
                // SAFETY: as above.
                unsafe { bindings::smc_rs_nla_nest_cancel(self.skb, start) };
                return Err(e);
            }
        }
        Ok(())
    }
}

/// The host name of the initial namespace, as upstream's CLC carries it:
/// blank-padded to 32 characters.
pub(crate) fn hostname() -> [u8; 32] {
    let mut out = [b' '; 32];
    // SAFETY: a NUL-terminated name in static storage (`init_uts_ns`).
    let name = unsafe { core::ffi::CStr::from_ptr(bindings::smc_rs_init_nodename().cast()) };
    for (d, s) in out.iter_mut().zip(name.to_bytes()) {
        *d = *s;
    }
    out
}

/// # Safety
///
/// `genl_ops::doit` of a family registered as `F`.
unsafe extern "C" fn doit_trampoline<F: GenlFamily>(
    _skb: *mut bindings::sk_buff,
    info: *mut bindings::genl_info,
) -> c_int {
    // SAFETY: `info` and its header are live for the call.
    let cmd = unsafe { (*(*info).genlhdr).cmd };
    let req = GenlRequest {
        info,
        max: F::MAX_ATTR,
        _call: PhantomData,
    };
    match F::doit(cmd, &req) {
        Ok(()) => 0,
        Err(e) => e.to_errno(),
    }
}

/// # Safety
///
/// `genl_ops::dumpit` of a family registered as `F`.
unsafe extern "C" fn dumpit_trampoline<F: GenlFamily>(
    skb: *mut bindings::sk_buff,
    cb: *mut bindings::netlink_callback,
) -> c_int {
    // SAFETY: `cb` is live for the call and belongs to a genl dump.
    let cmd = unsafe { bindings::smc_rs_genl_dump_cmd(cb) };
    let mut dump = GenlDump::<F> {
        skb,
        cb,
        _call: PhantomData,
    };
    match F::dumpit(cmd, &mut dump) {
        // A full buffer ends this part of the dump; the cursor says where
        // the next one goes on.
        Ok(()) | Err(_) if dump_has_data(skb) => {
            // SAFETY: live reply buffer.
            unsafe { bindings::smc_rs_skb_len(skb) as c_int }
        }
        Ok(()) => 0,
        Err(e) if e == EMSGSIZE => ENOMEM.to_neg(),
        Err(e) => e.to_errno(),
    }
}

fn dump_has_data(skb: *mut bindings::sk_buff) -> bool {
    // SAFETY: live reply buffer (called from the trampoline only).
    unsafe { bindings::smc_rs_skb_len(skb) > 0 }
}
