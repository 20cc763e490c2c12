// SPDX-License-Identifier: GPL-2.0

//! Raw netlink for the tools: the socket, message and attribute walking
//! (`NLMSG_OK`/`RTA_OK` semantics, but every length checked against the
//! bytes actually there), and the dump loop that upstream's `rtnl_dump()`
//! runs. The only `unsafe` of the crate's I/O lives here.

use std::fmt;
use std::io;
use std::mem::{size_of, zeroed};
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};

/// `sizeof(struct nlmsghdr)`.
pub const NLMSG_HDRLEN: usize = 16;
/// `sizeof(struct nlattr)` / `sizeof(struct rtattr)`.
pub const NLA_HDRLEN: usize = 4;
/// `sizeof(struct nlmsgerr)`: the error code and the request's header.
pub const NLMSGERR_LEN: usize = 4 + NLMSG_HDRLEN;

/// `NLMSG_NOOP`.
pub const NLMSG_NOOP: u16 = 1;
/// `NLMSG_ERROR`.
pub const NLMSG_ERROR: u16 = 2;
/// `NLMSG_DONE`.
pub const NLMSG_DONE: u16 = 3;
/// `NLMSG_MIN_TYPE`: types below are netlink's own control messages.
pub const NLMSG_MIN_TYPE: u16 = 0x10;

/// `NLM_F_REQUEST`.
pub const NLM_F_REQUEST: u16 = 0x1;
/// `NLM_F_ACK`: answer a request with an `NLMSG_ERROR` of code 0.
pub const NLM_F_ACK: u16 = 0x4;
/// `NLM_F_DUMP_INTR`: the dump changed while it was taken.
pub const NLM_F_DUMP_INTR: u16 = 0x10;
/// `NLM_F_ROOT`.
pub const NLM_F_ROOT: u16 = 0x100;
/// `NLM_F_MATCH`.
pub const NLM_F_MATCH: u16 = 0x200;
/// `NLM_F_DUMP`.
pub const NLM_F_DUMP: u16 = NLM_F_ROOT | NLM_F_MATCH;

/// The type bits of `nla_type` (without `NLA_F_NESTED`/`NLA_F_NET_BYTEORDER`).
pub const NLA_TYPE_MASK: u16 = 0x3fff;

/// `NETLINK_SOCK_DIAG`.
pub const NETLINK_SOCK_DIAG: i32 = 4;
/// `NETLINK_GENERIC`.
pub const NETLINK_GENERIC: i32 = 16;

/// `NLMSG_ALIGN` / `NLA_ALIGN`: up to a multiple of 4.
pub const fn align(len: usize) -> usize {
    (len + 3) & !3
}

fn u16_at(b: &[u8], at: usize) -> Option<u16> {
    Some(u16::from_ne_bytes(b.get(at..at + 2)?.try_into().ok()?))
}

fn u32_at(b: &[u8], at: usize) -> Option<u32> {
    Some(u32::from_ne_bytes(b.get(at..at + 4)?.try_into().ok()?))
}

/// One netlink message of a datagram.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Message<'a> {
    /// `nlmsg_type`.
    pub kind: u16,
    /// `nlmsg_flags`.
    pub flags: u16,
    /// `nlmsg_seq`.
    pub seq: u32,
    /// `nlmsg_pid`.
    pub pid: u32,
    /// The bytes after the header, `nlmsg_len - NLMSG_HDRLEN` of them.
    pub payload: &'a [u8],
}

/// A datagram that does not end where its messages say.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Malformed {
    /// Offset of the bad header in the datagram.
    pub offset: usize,
    /// The bytes left from there.
    pub left: usize,
}

impl fmt::Display for Malformed {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "malformed netlink message at offset {} ({} bytes left)",
            self.offset, self.left
        )
    }
}

/// The messages of one datagram (`NLMSG_OK`/`NLMSG_NEXT`); a header whose
/// length is short or runs past the datagram ends the walk with an error.
pub struct Messages<'a> {
    buf: &'a [u8],
    offset: usize,
    failed: bool,
}

/// Walks the messages of `buf`.
pub fn messages(buf: &[u8]) -> Messages<'_> {
    Messages {
        buf,
        offset: 0,
        failed: false,
    }
}

impl<'a> Iterator for Messages<'a> {
    type Item = Result<Message<'a>, Malformed>;

    fn next(&mut self) -> Option<Self::Item> {
        if self.failed || self.offset >= self.buf.len() {
            return None;
        }
        let rest = &self.buf[self.offset..];
        let bad = Malformed {
            offset: self.offset,
            left: rest.len(),
        };
        let hdr = (|| {
            Some((
                u32_at(rest, 0)? as usize,
                u16_at(rest, 4)?,
                u16_at(rest, 6)?,
                u32_at(rest, 8)?,
                u32_at(rest, 12)?,
            ))
        })();
        let Some((len, kind, flags, seq, pid)) = hdr else {
            self.failed = true;
            return Some(Err(bad));
        };
        if len < NLMSG_HDRLEN || len > rest.len() {
            self.failed = true;
            return Some(Err(bad));
        }
        self.offset += align(len).min(rest.len());
        Some(Ok(Message {
            kind,
            flags,
            seq,
            pid,
            payload: &rest[NLMSG_HDRLEN..len],
        }))
    }
}

/// One attribute: its type (flag bits masked off) and its payload.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Attr<'a> {
    /// `nla_type & NLA_TYPE_MASK`.
    pub kind: u16,
    /// The `nla_len - NLA_HDRLEN` bytes after the header.
    pub payload: &'a [u8],
}

/// The attributes of a message tail (`RTA_OK`/`RTA_NEXT`). Whatever is left
/// when no further attribute fits is [`Attrs::deficit`].
pub struct Attrs<'a> {
    buf: &'a [u8],
    offset: usize,
    stopped: bool,
}

/// Walks the attributes in `buf`.
pub fn attrs(buf: &[u8]) -> Attrs<'_> {
    Attrs {
        buf,
        offset: 0,
        stopped: false,
    }
}

impl Attrs<'_> {
    /// After the walk: the bytes no attribute accounted for, and the length
    /// field of the attribute that did not fit (upstream's "Deficit").
    pub fn deficit(&self) -> Option<(usize, u16)> {
        let left = self.buf.len().saturating_sub(self.offset);
        if left == 0 {
            return None;
        }
        Some((left, u16_at(self.buf, self.offset).unwrap_or(0)))
    }
}

impl<'a> Iterator for Attrs<'a> {
    type Item = Attr<'a>;

    fn next(&mut self) -> Option<Attr<'a>> {
        if self.stopped {
            return None;
        }
        let rest = self.buf.get(self.offset..).unwrap_or_default();
        let (Some(len), Some(kind)) = (u16_at(rest, 0), u16_at(rest, 2)) else {
            self.stopped = true;
            return None;
        };
        let len = usize::from(len);
        if len < NLA_HDRLEN || len > rest.len() {
            self.stopped = true;
            return None;
        }
        // The last attribute may lack its padding.
        self.offset += align(len).min(rest.len());
        Some(Attr {
            kind: kind & NLA_TYPE_MASK,
            payload: &rest[NLA_HDRLEN..len],
        })
    }
}

/// Builds a request: header and payload, `nlmsg_pid` 0 (to the kernel).
pub fn request(kind: u16, flags: u16, seq: u32, payload: &[u8]) -> Vec<u8> {
    let len = NLMSG_HDRLEN + payload.len();
    let mut m = Vec::with_capacity(align(len));
    m.extend_from_slice(&(len as u32).to_ne_bytes());
    m.extend_from_slice(&kind.to_ne_bytes());
    m.extend_from_slice(&flags.to_ne_bytes());
    m.extend_from_slice(&seq.to_ne_bytes());
    m.extend_from_slice(&0u32.to_ne_bytes());
    m.extend_from_slice(payload);
    m.resize(align(len), 0);
    m
}

/// A failure of the socket itself, with upstream's wording.
#[derive(Debug)]
pub struct SocketError {
    /// What failed: "Cannot open netlink socket", "SO_RCVBUF", ...
    pub what: &'static str,
    /// Why.
    pub err: io::Error,
}

impl fmt::Display for SocketError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{}: {}",
            self.what,
            crate::strerror(self.err.raw_os_error().unwrap_or(0))
        )
    }
}

/// One received datagram.
#[derive(Clone, Copy, Debug)]
pub struct Received {
    /// Bytes received (at most the buffer).
    pub len: usize,
    /// The datagram was longer than the buffer (`MSG_TRUNC`).
    pub truncated: bool,
    /// The sender's port: 0 for the kernel.
    pub sender: u32,
}

/// A bound `AF_NETLINK` socket.
pub struct Socket {
    fd: OwnedFd,
}

fn check(rc: libc::c_int, what: &'static str) -> Result<(), SocketError> {
    if rc < 0 {
        return Err(SocketError {
            what,
            err: io::Error::last_os_error(),
        });
    }
    Ok(())
}

fn sockaddr_kernel() -> libc::sockaddr_nl {
    // SAFETY: `sockaddr_nl` is plain integers; all-zero is valid.
    let mut sa: libc::sockaddr_nl = unsafe { zeroed() };
    sa.nl_family = libc::AF_NETLINK as libc::sa_family_t;
    sa
}

impl Socket {
    /// Opens and binds a netlink socket of `protocol` with upstream's buffer
    /// sizes (`rtnl_open()`: 32 KiB to send, 1 MiB to receive).
    pub fn open(protocol: i32) -> Result<Socket, SocketError> {
        // SAFETY: plain system call; the result is checked below.
        let fd = unsafe {
            libc::socket(
                libc::AF_NETLINK,
                libc::SOCK_RAW | libc::SOCK_CLOEXEC,
                protocol,
            )
        };
        check(fd, "Cannot open netlink socket")?;
        // SAFETY: `fd` is a new descriptor that nothing else owns.
        let fd = unsafe { OwnedFd::from_raw_fd(fd) };
        let sock = Socket { fd };
        sock.set_int(libc::SO_SNDBUF, 32768, "SO_SNDBUF")?;
        sock.set_int(libc::SO_RCVBUF, 1024 * 1024, "SO_RCVBUF")?;
        let local = sockaddr_kernel();
        let sa_len = size_of::<libc::sockaddr_nl>() as libc::socklen_t;
        // SAFETY: `local` is a valid `sockaddr_nl` of `sa_len` bytes.
        let rc = unsafe { libc::bind(sock.fd.as_raw_fd(), (&raw const local).cast(), sa_len) };
        check(rc, "Cannot bind netlink socket")?;
        let mut bound = sockaddr_kernel();
        let mut len = sa_len;
        let fd = sock.fd.as_raw_fd();
        // SAFETY: `bound` has room for `len` bytes; the kernel writes at most that.
        let rc = unsafe { libc::getsockname(fd, (&raw mut bound).cast(), &mut len) };
        check(rc, "Cannot getsockname")?;
        if len != sa_len || i32::from(bound.nl_family) != libc::AF_NETLINK {
            return Err(SocketError {
                what: "Wrong address of the bound netlink socket",
                err: io::Error::from_raw_os_error(libc::EINVAL),
            });
        }
        Ok(sock)
    }

    fn set_int(
        &self,
        opt: libc::c_int,
        value: libc::c_int,
        what: &'static str,
    ) -> Result<(), SocketError> {
        // SAFETY: `value` is a live `c_int` whose size is passed along.
        let rc = unsafe {
            libc::setsockopt(
                self.fd.as_raw_fd(),
                libc::SOL_SOCKET,
                opt,
                (&raw const value).cast(),
                size_of::<libc::c_int>() as libc::socklen_t,
            )
        };
        check(rc, what)
    }

    /// Sends one datagram to the kernel.
    pub fn send(&self, msg: &[u8]) -> io::Result<()> {
        let to = sockaddr_kernel();
        loop {
            // SAFETY: `msg` and `to` are live for the call, lengths match.
            let rc = unsafe {
                libc::sendto(
                    self.fd.as_raw_fd(),
                    msg.as_ptr().cast(),
                    msg.len(),
                    0,
                    (&raw const to).cast(),
                    size_of::<libc::sockaddr_nl>() as libc::socklen_t,
                )
            };
            if rc >= 0 {
                return Ok(());
            }
            let err = io::Error::last_os_error();
            if err.kind() != io::ErrorKind::Interrupted {
                return Err(err);
            }
        }
    }

    /// Receives one datagram into `buf` (retrying `EINTR`/`EAGAIN`, as
    /// upstream's `rtnl_dump()` does).
    pub fn recv(&self, buf: &mut [u8]) -> io::Result<Received> {
        loop {
            let mut from = sockaddr_kernel();
            let mut iov = libc::iovec {
                iov_base: buf.as_mut_ptr().cast(),
                iov_len: buf.len(),
            };
            // SAFETY: `msghdr` is plain data; all-zero is valid.
            let mut msg: libc::msghdr = unsafe { zeroed() };
            msg.msg_name = (&raw mut from).cast();
            msg.msg_namelen = size_of::<libc::sockaddr_nl>() as libc::socklen_t;
            msg.msg_iov = &raw mut iov;
            msg.msg_iovlen = 1;
            // SAFETY: `msg` points at `from` and at `buf` through `iov`, all
            // live and of the sizes given; the kernel writes within them.
            let rc = unsafe { libc::recvmsg(self.fd.as_raw_fd(), &mut msg, 0) };
            if rc < 0 {
                let err = io::Error::last_os_error();
                if matches!(err.raw_os_error(), Some(libc::EINTR) | Some(libc::EAGAIN)) {
                    continue;
                }
                return Err(err);
            }
            let len = (rc as usize).min(buf.len());
            return Ok(Received {
                len,
                truncated: msg.msg_flags & libc::MSG_TRUNC != 0,
                sender: from.nl_pid,
            });
        }
    }
}

/// Where requests go and answers come from: the [`Socket`], or a scripted
/// kernel in tests, so that whole conversations are tested on hand-laid
/// datagrams.
pub trait Transport {
    /// Sends one datagram to the kernel.
    fn send(&self, msg: &[u8]) -> io::Result<()>;
    /// Receives one datagram into `buf`.
    fn recv(&self, buf: &mut [u8]) -> io::Result<Received>;
}

impl Transport for Socket {
    fn send(&self, msg: &[u8]) -> io::Result<()> {
        Socket::send(self, msg)
    }

    fn recv(&self, buf: &mut [u8]) -> io::Result<Received> {
        Socket::recv(self, buf)
    }
}

/// Why a dump failed.
#[derive(Debug)]
pub enum DumpError {
    /// Sending the request failed.
    Send(io::Error),
    /// Receiving failed.
    Recv(io::Error),
    /// The socket was closed under us (a zero-length read).
    Eof,
    /// The kernel answered with an error (a positive errno).
    Kernel(i32),
    /// An `NLMSG_ERROR` too short to hold its error code.
    IncompleteError,
    /// A datagram whose messages do not add up.
    Malformed(Malformed),
}

impl fmt::Display for DumpError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let os = |e: &io::Error| crate::strerror(e.raw_os_error().unwrap_or(0));
        match self {
            DumpError::Send(e) => write!(f, "Error: Cannot send netlink request: {}", os(e)),
            DumpError::Recv(e) => write!(
                f,
                "Error: Netlink receive error {} ({})",
                os(e),
                e.raw_os_error().unwrap_or(0)
            ),
            DumpError::Eof => write!(f, "Error: Unexpected EOF on netlink"),
            DumpError::Kernel(errno) => write!(f, "RTNETLINK answers: {}", crate::strerror(*errno)),
            DumpError::IncompleteError => write!(f, "Error: Incomplete message"),
            DumpError::Malformed(m) => write!(f, "Error: {m}"),
        }
    }
}

/// Something odd but not fatal seen during a dump; reported on stderr.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DumpWarning {
    /// `NLM_F_DUMP_INTR`: the list changed while it was dumped.
    Interrupted,
    /// A datagram was larger than the buffer: some rows are missing.
    Truncated,
}

impl fmt::Display for DumpWarning {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            DumpWarning::Interrupted => write!(f, "Error: Dump interrupted"),
            DumpWarning::Truncated => write!(f, "Error: Message truncated"),
        }
    }
}

/// The receive buffer: twice what a sock_diag dump puts in one datagram
/// (`min_dump_alloc` of 32 KiB less overhead).
pub const DUMP_BUFFER: usize = 64 * 1024;

/// Feeds the datagrams of a dump to [`DumpState::datagram`] until
/// `NLMSG_DONE`. `request` must carry sequence number `seq`.
pub fn dump<T, F, W>(
    sock: &T,
    request: &[u8],
    seq: u32,
    on_message: F,
    on_warning: W,
) -> Result<(), DumpError>
where
    T: Transport + ?Sized,
    F: FnMut(&Message<'_>),
    W: FnMut(DumpWarning),
{
    converse(sock, request, DumpState::new(seq, on_message, on_warning))
}

/// Sends a request that carries `NLM_F_ACK` (no `NLM_F_DUMP`) and feeds
/// its answers to `on_message` until the acknowledgement (or an error, or
/// `NLMSG_DONE`). `request` must carry sequence number `seq`.
pub fn exchange<T, F, W>(
    sock: &T,
    request: &[u8],
    seq: u32,
    on_message: F,
    on_warning: W,
) -> Result<(), DumpError>
where
    T: Transport + ?Sized,
    F: FnMut(&Message<'_>),
    W: FnMut(DumpWarning),
{
    converse(sock, request, DumpState::acked(seq, on_message, on_warning))
}

fn converse<T, F, W>(sock: &T, request: &[u8], mut state: DumpState<F, W>) -> Result<(), DumpError>
where
    T: Transport + ?Sized,
    F: FnMut(&Message<'_>),
    W: FnMut(DumpWarning),
{
    sock.send(request).map_err(DumpError::Send)?;
    let mut buf = vec![0u8; DUMP_BUFFER];
    loop {
        let got = sock.recv(&mut buf).map_err(DumpError::Recv)?;
        if got.len == 0 && !got.truncated {
            return Err(DumpError::Eof);
        }
        // Nobody but the kernel answers our requests.
        if got.sender != 0 {
            continue;
        }
        if got.truncated {
            state.warn(DumpWarning::Truncated);
        }
        if state.datagram(&buf[..got.len.min(buf.len())])? {
            return Ok(());
        }
    }
}

/// The protocol of a dump, apart from the socket, so that it can be tested
/// on byte buffers.
pub struct DumpState<F, W> {
    seq: u32,
    on_message: F,
    on_warning: W,
    warned_intr: bool,
    end_on_ack: bool,
}

impl<F, W> DumpState<F, W>
where
    F: FnMut(&Message<'_>),
    W: FnMut(DumpWarning),
{
    /// A dump of the request with sequence number `seq`.
    pub fn new(seq: u32, on_message: F, on_warning: W) -> Self {
        DumpState {
            seq,
            on_message,
            on_warning,
            warned_intr: false,
            end_on_ack: false,
        }
    }

    /// The answers to a request with `NLM_F_ACK`: the acknowledgement (an
    /// `NLMSG_ERROR` of code 0) ends them.
    pub fn acked(seq: u32, on_message: F, on_warning: W) -> Self {
        DumpState {
            end_on_ack: true,
            ..DumpState::new(seq, on_message, on_warning)
        }
    }

    fn warn(&mut self, w: DumpWarning) {
        (self.on_warning)(w);
    }

    /// Handles one datagram; `Ok(true)` when it held `NLMSG_DONE`.
    pub fn datagram(&mut self, buf: &[u8]) -> Result<bool, DumpError> {
        for m in messages(buf) {
            let m = m.map_err(DumpError::Malformed)?;
            if m.seq != self.seq {
                continue; // not an answer to our request
            }
            if m.flags & NLM_F_DUMP_INTR != 0 && !self.warned_intr {
                self.warned_intr = true;
                self.warn(DumpWarning::Interrupted);
            }
            match m.kind {
                NLMSG_DONE => return Ok(true),
                NLMSG_ERROR => {
                    if m.payload.len() < NLMSGERR_LEN {
                        return Err(DumpError::IncompleteError);
                    }
                    let code = u32_at(m.payload, 0).unwrap_or(0) as i32;
                    // An acknowledgement (0) is no error; it ends a request.
                    if code != 0 {
                        return Err(DumpError::Kernel(code.checked_neg().unwrap_or(i32::MAX)));
                    }
                    if self.end_on_ack {
                        return Ok(true);
                    }
                }
                k if k < NLMSG_MIN_TYPE => {} // NOOP, OVERRUN: nothing for us
                _ => (self.on_message)(&m),
            }
        }
        Ok(false)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn msg(kind: u16, flags: u16, seq: u32, payload: &[u8]) -> Vec<u8> {
        request(kind, flags, seq, payload)
    }

    fn attr(kind: u16, payload: &[u8]) -> Vec<u8> {
        let len = NLA_HDRLEN + payload.len();
        let mut a = Vec::new();
        a.extend_from_slice(&(len as u16).to_ne_bytes());
        a.extend_from_slice(&kind.to_ne_bytes());
        a.extend_from_slice(payload);
        a.resize(align(len), 0);
        a
    }

    #[test]
    fn request_layout() {
        let r = request(20, NLM_F_REQUEST | NLM_F_DUMP, 123456, &[1, 2, 3]);
        assert_eq!(r.len(), 20);
        assert_eq!(u32_at(&r, 0), Some(19));
        assert_eq!(u16_at(&r, 4), Some(20));
        assert_eq!(u16_at(&r, 6), Some(0x301));
        assert_eq!(u32_at(&r, 8), Some(123456));
        assert_eq!(&r[16..], &[1, 2, 3, 0]);
    }

    #[test]
    fn walks_messages_and_stops_on_bad_length() {
        let mut d = msg(20, 2, 1, &[9; 5]);
        d.extend(msg(3, 2, 1, &[0; 4]));
        let v: Vec<_> = messages(&d).collect();
        assert_eq!(v.len(), 2);
        assert_eq!(v[0].as_ref().map(|m| m.payload), Ok(&[9u8; 5][..]));
        assert_eq!(v[1].as_ref().map(|m| m.kind), Ok(3));

        // A length past the end, a length below the header, a short tail.
        let mut bad = msg(20, 0, 1, &[0; 8]);
        bad[0] = 200;
        assert!(matches!(messages(&bad).next(), Some(Err(_))));
        bad[0] = 3;
        assert!(matches!(messages(&bad).next(), Some(Err(_))));
        assert!(matches!(messages(&[1, 2, 3]).next(), Some(Err(_))));
        assert!(messages(&[]).next().is_none());
        let mut it = messages(&bad);
        it.next();
        assert!(it.next().is_none());
    }

    #[test]
    fn walks_attributes() {
        let mut b = attr(3, &[1]);
        b.extend(attr(5 | 0x8000, &[1, 2, 3, 4, 5, 6, 7, 8]));
        let mut it = attrs(&b);
        assert_eq!(
            it.next(),
            Some(Attr {
                kind: 3,
                payload: &[1]
            })
        );
        assert_eq!(it.next().map(|a| (a.kind, a.payload.len())), Some((5, 8)));
        assert_eq!(it.next(), None);
        assert_eq!(it.deficit(), None);

        // Short, overlong and zero-length headers end the walk.
        for tail in [
            vec![1u8, 0],
            vec![40, 0, 1, 0, 0, 0, 0, 0],
            vec![0, 0, 1, 0],
        ] {
            let mut b = attr(3, &[1]);
            b.extend(&tail);
            let mut it = attrs(&b);
            assert_eq!(it.by_ref().count(), 1);
            assert_eq!(it.deficit().map(|d| d.0), Some(tail.len()));
        }
        // Unpadded last attribute.
        let b = [5u8, 0, 3, 0, 7];
        let mut it = attrs(&b);
        assert_eq!(
            it.next(),
            Some(Attr {
                kind: 3,
                payload: &[7]
            })
        );
        assert_eq!(it.next(), None);
        assert_eq!(it.deficit(), None);
    }

    fn run(datagrams: &[Vec<u8>]) -> (Vec<Vec<u8>>, Vec<DumpWarning>, Result<bool, String>) {
        let mut rows = Vec::new();
        let mut warns = Vec::new();
        let mut st = DumpState::new(
            7,
            |m: &Message<'_>| rows.push(m.payload.to_vec()),
            |w| warns.push(w),
        );
        let mut res = Ok(false);
        for d in datagrams {
            res = st.datagram(d).map_err(|e| e.to_string());
            if !matches!(res, Ok(false)) {
                break;
            }
        }
        (rows, warns, res)
    }

    #[test]
    fn dump_protocol() {
        let mut d1 = msg(20, 2, 7, b"one");
        d1.extend(msg(20, 2 | NLM_F_DUMP_INTR, 7, b"two"));
        d1.extend(msg(20, 2, 8, b"other request"));
        d1.extend(msg(NLMSG_NOOP, 0, 7, b""));
        let mut d2 = msg(20, 2 | NLM_F_DUMP_INTR, 7, b"three");
        d2.extend(msg(NLMSG_DONE, 2, 7, &[0; 4]));
        let (rows, warns, res) = run(&[d1, d2]);
        assert_eq!(
            rows,
            vec![b"one".to_vec(), b"two".to_vec(), b"three".to_vec()]
        );
        assert_eq!(warns, vec![DumpWarning::Interrupted]);
        assert_eq!(res, Ok(true));
    }

    #[test]
    fn acknowledged_request_ends_on_ack() {
        let mut ack = 0i32.to_ne_bytes().to_vec();
        ack.extend([0; NLMSG_HDRLEN]);
        let mut d = msg(0x10, 0, 7, b"reply");
        d.extend(msg(NLMSG_ERROR, 0x100, 7, &ack));
        d.extend(msg(20, 0, 7, b"after the ack"));
        let mut rows = Vec::new();
        let mut st = DumpState::acked(7, |m: &Message<'_>| rows.push(m.payload.to_vec()), |_| {});
        assert_eq!(st.datagram(&d).map_err(|e| e.to_string()), Ok(true));
        assert_eq!(rows, vec![b"reply".to_vec()]);

        // An error ends it as it ends a dump.
        let mut e = (-libc::EPERM).to_ne_bytes().to_vec();
        e.extend([0; NLMSG_HDRLEN]);
        let mut st = DumpState::acked(7, |_: &Message<'_>| {}, |_| {});
        assert!(matches!(
            st.datagram(&msg(NLMSG_ERROR, 0, 7, &e)),
            Err(DumpError::Kernel(libc::EPERM))
        ));
    }

    #[test]
    fn dump_errors() {
        let mut e = (-libc::ENOENT).to_ne_bytes().to_vec();
        e.extend([0; NLMSG_HDRLEN]);
        let (_, _, res) = run(&[msg(NLMSG_ERROR, 0, 7, &e)]);
        assert_eq!(
            res,
            Err("RTNETLINK answers: No such file or directory".into())
        );
        let (_, _, res) = run(&[msg(NLMSG_ERROR, 0, 7, &e[..4])]);
        assert_eq!(res, Err("Error: Incomplete message".into()));
        let mut ack = 0i32.to_ne_bytes().to_vec();
        ack.extend([0; NLMSG_HDRLEN]);
        let (_, _, res) = run(&[msg(NLMSG_ERROR, 0, 7, &ack)]);
        assert_eq!(res, Ok(false));
        let mut min = i32::MIN.to_ne_bytes().to_vec();
        min.extend([0; NLMSG_HDRLEN]);
        let (_, _, res) = run(&[msg(NLMSG_ERROR, 0, 7, &min)]);
        assert!(res.is_err());
        let (_, _, res) = run(&[vec![1, 2, 3, 4, 5]]);
        assert!(res.is_err_and(|e| e.starts_with("Error: malformed")));
    }
}
