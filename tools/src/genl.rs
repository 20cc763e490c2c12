// SPDX-License-Identifier: GPL-2.0

//! Generic netlink for the tools: requests (`struct genlmsghdr` and
//! attributes), the family lookup through the controller
//! (`CTRL_CMD_GETFAMILY`, what libnl's `genl_ctrl_resolve()` does), a
//! resolved family that numbers its requests, and libnl's wording of
//! errors, which upstream's generic netlink tools print through
//! `nl_perror()`. No `unsafe` here: the I/O is [`crate::netlink`]'s.

use crate::netlink::{
    self, align, attrs, DumpError, DumpWarning, Message, Transport, NLA_HDRLEN, NLM_F_ACK,
    NLM_F_DUMP, NLM_F_REQUEST,
};

/// `GENL_HDRLEN`: `struct genlmsghdr` (cmd, version, reserved u16).
pub const GENL_HDRLEN: usize = 4;
/// `GENL_ID_CTRL`: the controller's fixed family id.
pub const GENL_ID_CTRL: u16 = 0x10;
/// `CTRL_CMD_GETFAMILY`.
pub const CTRL_CMD_GETFAMILY: u8 = 3;
/// `CTRL_ATTR_FAMILY_ID` (u16).
pub const CTRL_ATTR_FAMILY_ID: u16 = 1;
/// `CTRL_ATTR_FAMILY_NAME` (NUL-terminated string).
pub const CTRL_ATTR_FAMILY_NAME: u16 = 2;
/// The controller's version in our requests (libnl sends 1).
pub const CTRL_VERSION: u8 = 1;

/// One attribute, header and payload, padded to 4 bytes.
pub fn attr(kind: u16, payload: &[u8]) -> Vec<u8> {
    let len = NLA_HDRLEN + payload.len();
    let mut a = Vec::with_capacity(align(len));
    // An attribute longer than 64 KiB cannot be said; none of ours is.
    a.extend_from_slice(&u16::try_from(len).unwrap_or(u16::MAX).to_ne_bytes());
    a.extend_from_slice(&kind.to_ne_bytes());
    a.extend_from_slice(payload);
    a.resize(align(len), 0);
    a
}

/// A string attribute as `nla_put_string()` lays it out: the bytes and a
/// terminating NUL.
pub fn string_attr(kind: u16, s: &[u8]) -> Vec<u8> {
    let mut v = s.to_vec();
    v.push(0);
    attr(kind, &v)
}

/// A whole request: netlink header, generic netlink header, attributes.
pub fn message(family: u16, flags: u16, seq: u32, cmd: u8, version: u8, attrs: &[u8]) -> Vec<u8> {
    let mut payload = vec![cmd, version, 0, 0];
    payload.extend_from_slice(attrs);
    netlink::request(family, flags, seq, &payload)
}

/// A generic netlink message: its header and its attribute bytes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct GenlMsg<'a> {
    /// `genlmsghdr.cmd`.
    pub cmd: u8,
    /// `genlmsghdr.version`.
    pub version: u8,
    /// The attributes after the header.
    pub attrs: &'a [u8],
}

impl GenlMsg<'_> {
    /// Reads a netlink payload; `None` when it is shorter than the generic
    /// netlink header (libnl: `NLE_MSG_TOOSHORT`).
    pub fn parse(payload: &[u8]) -> Option<GenlMsg<'_>> {
        let hdr = payload.get(..GENL_HDRLEN)?;
        Some(GenlMsg {
            cmd: hdr[0],
            version: hdr[1],
            attrs: &payload[GENL_HDRLEN..],
        })
    }
}

/// The payload of the attribute of type `kind` in `buf`: the last one when
/// there are several, as libnl's `nla_parse()` keeps the last.
pub fn find_attr(buf: &[u8], kind: u16) -> Option<&[u8]> {
    attrs(buf)
        .filter(|a| a.kind == kind)
        .last()
        .map(|a| a.payload)
}

/// A string attribute as `%s` reads it: up to the first NUL, or all of it
/// when there is none (where C would read past it).
pub fn c_str(payload: &[u8]) -> &[u8] {
    match payload.iter().position(|&b| b == 0) {
        Some(end) => &payload[..end],
        None => payload,
    }
}

/// The `CTRL_CMD_GETFAMILY` request for `name`.
pub fn getfamily_request(name: &str, seq: u32) -> Vec<u8> {
    message(
        GENL_ID_CTRL,
        NLM_F_REQUEST | NLM_F_ACK,
        seq,
        CTRL_CMD_GETFAMILY,
        CTRL_VERSION,
        &string_attr(CTRL_ATTR_FAMILY_NAME, name.as_bytes()),
    )
}

/// The family id in the controller's answer, if it holds one.
pub fn family_id(payload: &[u8]) -> Option<u16> {
    let msg = GenlMsg::parse(payload)?;
    let id = find_attr(msg.attrs, CTRL_ATTR_FAMILY_ID)?;
    Some(u16::from_ne_bytes(id.get(..2)?.try_into().ok()?))
}

/// libnl's error codes, as `nl_syserr2nlerr()` makes them of an errno.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum NlError {
    /// `NLE_FAILURE`: any errno libnl does not map.
    Failure,
    /// `NLE_INTR`.
    Intr,
    /// `NLE_BAD_SOCK`.
    BadSock,
    /// `NLE_AGAIN`.
    Again,
    /// `NLE_NOMEM`.
    NoMem,
    /// `NLE_EXIST`.
    Exist,
    /// `NLE_INVAL`.
    Inval,
    /// `NLE_RANGE`.
    Range,
    /// `NLE_OPNOTSUPP`.
    OpNotSupp,
    /// `NLE_AF_NOSUPPORT`.
    AfNoSupport,
    /// `NLE_OBJ_NOTFOUND`.
    ObjNotFound,
    /// `NLE_NOADDR`.
    NoAddr,
    /// `NLE_BUSY`.
    Busy,
    /// `NLE_PROTO_MISMATCH`.
    ProtoMismatch,
    /// `NLE_NOACCESS`.
    NoAccess,
    /// `NLE_PERM`.
    Perm,
    /// `NLE_NODEV`.
    NoDev,
}

impl NlError {
    /// `nl_syserr2nlerr(errno)`.
    pub fn from_errno(errno: i32) -> NlError {
        use libc::*;
        match errno {
            EBADF | ENOTSOCK => NlError::BadSock,
            EADDRINUSE | EEXIST => NlError::Exist,
            EADDRNOTAVAIL => NlError::NoAddr,
            ESRCH | ENOENT => NlError::ObjNotFound,
            EINTR => NlError::Intr,
            EAGAIN => NlError::Again,
            ENOPROTOOPT | EFAULT | EINVAL => NlError::Inval,
            EACCES => NlError::NoAccess,
            ENOBUFS | ENOMEM => NlError::NoMem,
            EAFNOSUPPORT => NlError::AfNoSupport,
            EPROTONOSUPPORT => NlError::ProtoMismatch,
            EOPNOTSUPP => NlError::OpNotSupp,
            EPERM => NlError::Perm,
            EBUSY => NlError::Busy,
            ERANGE => NlError::Range,
            ENODEV => NlError::NoDev,
            _ => NlError::Failure,
        }
    }

    /// `nl_geterror()`: libnl 3's text for the code.
    pub fn text(self) -> &'static str {
        match self {
            NlError::Failure => "Unspecific failure",
            NlError::Intr => "Interrupted system call",
            NlError::BadSock => "Bad socket",
            NlError::Again => "Try again",
            NlError::NoMem => "Out of memory",
            NlError::Exist => "Object exists",
            NlError::Inval => "Invalid input data or parameter",
            NlError::Range => "Input data out of range",
            NlError::OpNotSupp => "Operation not supported",
            NlError::AfNoSupport => "Address family not supported",
            NlError::ObjNotFound => "Object not found",
            NlError::NoAddr => "Invalid address for specified address family",
            NlError::Busy => "Object busy",
            NlError::ProtoMismatch => "Protocol mismatch",
            NlError::NoAccess => "No Access",
            NlError::Perm => "Operation not permitted",
            NlError::NoDev => "No such device",
        }
    }

    /// `nl_perror(code, "Error")`, without the newline.
    pub fn perror(self) -> String {
        format!("Error: {}", self.text())
    }
}

/// The message for a failed conversation: a kernel errno in libnl's words
/// (`nl_perror(rc, "Error")`), anything else in [`DumpError`]'s.
pub fn perror(e: &DumpError) -> String {
    match e {
        DumpError::Kernel(errno) => NlError::from_errno(*errno).perror(),
        other => other.to_string(),
    }
}

/// What the kernel said to one request.
#[derive(Debug)]
pub struct Answer {
    /// The payloads (generic netlink header and attributes) of the
    /// messages of the family, in order.
    pub messages: Vec<Vec<u8>>,
    /// How the conversation ended.
    pub result: Result<(), DumpError>,
}

/// Why a family could not be resolved.
#[derive(Debug)]
pub enum ResolveError {
    /// The controller does not know it (`ENOENT`, or an answer without an
    /// id): upstream's "module not loaded".
    NotFound,
    /// Anything else.
    Failed(DumpError),
}

/// A resolved family on a transport; numbers its requests from 1.
pub struct Family<'a, T: ?Sized> {
    sock: &'a T,
    id: u16,
    version: u8,
    seq: u32,
}

impl<'a, T: Transport + ?Sized> Family<'a, T> {
    /// Asks the controller for the id of `name`; requests will carry
    /// `version`.
    pub fn resolve(
        sock: &'a T,
        name: &str,
        version: u8,
        warn: &mut dyn FnMut(DumpWarning),
    ) -> Result<Self, ResolveError> {
        let seq = 1;
        let mut id = None;
        let res = netlink::exchange(
            sock,
            &getfamily_request(name, seq),
            seq,
            |m: &Message<'_>| {
                if m.kind == GENL_ID_CTRL {
                    if let Some(found) = family_id(m.payload) {
                        id = Some(found);
                    }
                }
            },
            warn,
        );
        match res {
            Ok(()) => {}
            Err(DumpError::Kernel(libc::ENOENT)) => return Err(ResolveError::NotFound),
            Err(e) => return Err(ResolveError::Failed(e)),
        }
        match id {
            Some(id) => Ok(Family {
                sock,
                id,
                version,
                seq,
            }),
            None => Err(ResolveError::NotFound),
        }
    }

    /// The family id.
    pub fn id(&self) -> u16 {
        self.id
    }

    fn next_seq(&mut self) -> u32 {
        self.seq = self.seq.wrapping_add(1);
        self.seq
    }

    /// Dumps `cmd` (`NLM_F_REQUEST | NLM_F_DUMP`, no attributes).
    pub fn dump(&mut self, cmd: u8, warn: &mut dyn FnMut(DumpWarning)) -> Answer {
        let seq = self.next_seq();
        let req = message(
            self.id,
            NLM_F_REQUEST | NLM_F_DUMP,
            seq,
            cmd,
            self.version,
            &[],
        );
        let mut messages = Vec::new();
        let id = self.id;
        let result = netlink::dump(
            self.sock,
            &req,
            seq,
            |m: &Message<'_>| {
                if m.kind == id {
                    messages.push(m.payload.to_vec());
                }
            },
            warn,
        );
        Answer { messages, result }
    }

    /// Sends `cmd` with `attrs` (`NLM_F_REQUEST | NLM_F_ACK`) and waits for
    /// the acknowledgement.
    pub fn request(&mut self, cmd: u8, attrs: &[u8], warn: &mut dyn FnMut(DumpWarning)) -> Answer {
        let seq = self.next_seq();
        let req = message(
            self.id,
            NLM_F_REQUEST | NLM_F_ACK,
            seq,
            cmd,
            self.version,
            attrs,
        );
        let mut messages = Vec::new();
        let id = self.id;
        let result = netlink::exchange(
            self.sock,
            &req,
            seq,
            |m: &Message<'_>| {
                if m.kind == id {
                    messages.push(m.payload.to_vec());
                }
            },
            warn,
        );
        Answer { messages, result }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::netlink::{Received, NLMSG_DONE, NLMSG_ERROR, NLMSG_HDRLEN};
    use crate::scripted::Script;
    use std::io;

    #[test]
    fn getfamily_layout() {
        let r = getfamily_request("SMC_GEN_NETLINK", 1);
        // nlmsghdr: len 16 + genl 4 + attr (4 + 16 bytes) = 40.
        let mut want = Vec::new();
        want.extend(40u32.to_ne_bytes());
        want.extend(GENL_ID_CTRL.to_ne_bytes());
        want.extend((NLM_F_REQUEST | NLM_F_ACK).to_ne_bytes());
        want.extend(1u32.to_ne_bytes());
        want.extend(0u32.to_ne_bytes());
        want.extend([CTRL_CMD_GETFAMILY, 1, 0, 0]);
        want.extend(20u16.to_ne_bytes());
        want.extend(CTRL_ATTR_FAMILY_NAME.to_ne_bytes());
        want.extend(b"SMC_GEN_NETLINK\0");
        assert_eq!(r, want);
    }

    #[test]
    fn attributes_pad_and_strings_end_in_nul() {
        assert_eq!(attr(3, &[7]), vec![5, 0, 3, 0, 7, 0, 0, 0]);
        assert_eq!(string_attr(1, b"AB"), vec![7, 0, 1, 0, b'A', b'B', 0, 0]);
        assert_eq!(attr(2, &[]), vec![4, 0, 2, 0]);
    }

    #[test]
    fn genl_header_and_last_attribute_wins() {
        assert_eq!(GenlMsg::parse(&[1, 2, 3]), None);
        let mut p = vec![9, 1, 0, 0];
        p.extend(attr(1, b"first"));
        p.extend(attr(2, b"x"));
        p.extend(attr(1, b"second"));
        let m = GenlMsg::parse(&p).expect("header");
        assert_eq!((m.cmd, m.version), (9, 1));
        assert_eq!(find_attr(m.attrs, 1), Some(&b"second"[..]));
        assert_eq!(find_attr(m.attrs, 3), None);
    }

    #[test]
    fn c_strings() {
        assert_eq!(c_str(b"abc\0def"), b"abc");
        assert_eq!(c_str(b"abc"), b"abc");
        assert_eq!(c_str(b""), b"");
    }

    #[test]
    fn family_ids() {
        let mut p = vec![1, 2, 0, 0];
        p.extend(string_attr(CTRL_ATTR_FAMILY_NAME, b"SMC_GEN_NETLINK"));
        p.extend(attr(CTRL_ATTR_FAMILY_ID, &0x25u16.to_ne_bytes()));
        assert_eq!(family_id(&p), Some(0x25));
        let mut short = vec![1, 2, 0, 0];
        short.extend(attr(CTRL_ATTR_FAMILY_ID, &[1]));
        assert_eq!(family_id(&short), None);
        assert_eq!(family_id(&[1, 2]), None);
    }

    #[test]
    fn libnl_wording() {
        assert_eq!(
            NlError::from_errno(libc::ENOENT).perror(),
            "Error: Object not found"
        );
        assert_eq!(
            NlError::from_errno(libc::EPERM).text(),
            "Operation not permitted"
        );
        assert_eq!(NlError::from_errno(libc::ENOBUFS), NlError::NoMem);
        assert_eq!(NlError::from_errno(libc::EADDRINUSE), NlError::Exist);
        assert_eq!(
            NlError::from_errno(libc::EMSGSIZE).text(),
            "Unspecific failure"
        );
        assert_eq!(
            perror(&DumpError::Kernel(libc::EOPNOTSUPP)),
            "Error: Operation not supported"
        );
        assert_eq!(perror(&DumpError::Eof), "Error: Unexpected EOF on netlink");
    }

    /// A kernel that answers each request with what `answer` makes of it.
    struct Scripted<A> {
        answer: A,
        script: Script,
    }

    impl<A: Fn(&[u8]) -> Vec<Vec<u8>>> Transport for Scripted<A> {
        fn send(&self, msg: &[u8]) -> io::Result<()> {
            self.script.send(msg, (self.answer)(msg));
            Ok(())
        }

        fn recv(&self, buf: &mut [u8]) -> io::Result<Received> {
            Ok(self.script.recv(buf))
        }
    }

    fn seq_of(req: &[u8]) -> u32 {
        u32::from_ne_bytes(req[8..12].try_into().expect("a header"))
    }

    fn errmsg(seq: u32, errno: i32) -> Vec<u8> {
        let mut e = (-errno).to_ne_bytes().to_vec();
        e.extend([0; NLMSG_HDRLEN]);
        netlink::request(NLMSG_ERROR, 0, seq, &e)
    }

    #[test]
    fn resolves_then_numbers_requests() {
        let k = Scripted {
            answer: |req: &[u8]| {
                let seq = seq_of(req);
                let kind = u16::from_ne_bytes([req[4], req[5]]);
                if kind == GENL_ID_CTRL {
                    let mut p = vec![1, 2, 0, 0];
                    p.extend(attr(CTRL_ATTR_FAMILY_ID, &0x1fu16.to_ne_bytes()));
                    let mut d = netlink::request(GENL_ID_CTRL, 0, seq, &p);
                    d.extend(errmsg(seq, 0));
                    vec![d]
                } else if req[16] == 9 {
                    let mut d = netlink::request(0x1f, 2, seq, &[9, 1, 0, 0]);
                    d.extend(netlink::request(0x20, 2, seq, &[9, 1, 0, 0, 1]));
                    vec![d, netlink::request(NLMSG_DONE, 2, seq, &[0; 4])]
                } else {
                    vec![errmsg(seq, libc::EPERM)]
                }
            },
            script: Script::new(),
        };
        let mut fam = match Family::resolve(&k, "SMC_GEN_NETLINK", 1, &mut |_| {}) {
            Ok(f) => f,
            Err(e) => panic!("{e:?}"),
        };
        assert_eq!(fam.id(), 0x1f);
        let a = fam.dump(9, &mut |_| {});
        assert!(a.result.is_ok());
        assert_eq!(a.messages, vec![vec![9, 1, 0, 0]]);
        let a = fam.request(10, &attr(1, b"x"), &mut |_| {});
        assert!(matches!(a.result, Err(DumpError::Kernel(libc::EPERM))));
        let sent = k.script.sent.borrow();
        assert_eq!(sent.len(), 3);
        assert_eq!(
            sent.iter().map(|r| seq_of(r)).collect::<Vec<_>>(),
            [1, 2, 3]
        );
        let kind_flags = |m: &[u8]| (m[4..6].to_vec(), m[6..8].to_vec());
        let want = |k: u16, f: u16| (k.to_ne_bytes().to_vec(), f.to_ne_bytes().to_vec());
        assert_eq!(kind_flags(&sent[1]), want(0x1f, NLM_F_REQUEST | NLM_F_DUMP));
        assert_eq!(kind_flags(&sent[2]), want(0x1f, NLM_F_REQUEST | NLM_F_ACK));
        assert_eq!(&sent[2][16..20], &[10, 1, 0, 0]);
    }

    #[test]
    fn unknown_family() {
        let k = Scripted {
            answer: |req: &[u8]| vec![errmsg(seq_of(req), libc::ENOENT)],
            script: Script::new(),
        };
        assert!(matches!(
            Family::resolve(&k, "SMC_GEN_NETLINK", 1, &mut |_| {}),
            Err(ResolveError::NotFound)
        ));
        // An acknowledgement without an answer is no family either.
        let k = Scripted {
            answer: |req: &[u8]| vec![errmsg(seq_of(req), 0)],
            script: Script::new(),
        };
        assert!(matches!(
            Family::resolve(&k, "SMC_GEN_NETLINK", 1, &mut |_| {}),
            Err(ResolveError::NotFound)
        ));
        let k = Scripted {
            answer: |req: &[u8]| vec![errmsg(seq_of(req), libc::EACCES)],
            script: Script::new(),
        };
        assert!(matches!(
            Family::resolve(&k, "SMC_GEN_NETLINK", 1, &mut |_| {}),
            Err(ResolveError::Failed(DumpError::Kernel(libc::EACCES)))
        ));
    }
}
