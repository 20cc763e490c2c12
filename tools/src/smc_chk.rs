// SPDX-License-Identifier: GPL-2.0

//! `smc_chk`: checks whether SMC works, with the modes and options of
//! smc-tools' `smc_chk(8)`: `-S` serves on the first free port from
//! `--port` (37373), `-C IP` connects to such a server and says whether the
//! connection runs SMC-R or SMC-D or fell back to TCP, and why (the
//! reasons in words); `-l` tests the host's active interfaces against a
//! server of its own; `-i IFACE` prints an interface's PNET ID; `-s` the
//! SMC-D configuration. The sockets are AF_SMC sockets of our own (smc-tools
//! runs Python through `smc_run`); the connection's mode and fallback
//! reasons come from sock_diag, as `smcss` reads them.

use crate::getopt::{self, Event, Opt};
use crate::netlink::{self, Socket, NETLINK_SOCK_DIAG};
use crate::smc_diag::{
    dump_request, SockInfo, SMC_DIAG_MODE_SMCD, SMC_DIAG_MODE_SMCR, SOCK_DIAG_BY_FAMILY,
};
use std::io::{self, Read};
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr, TcpListener, TcpStream, ToSocketAddrs};
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::time::Duration;

/// `--port`'s default (upstream's `PRT_DFT`).
pub const PORT_DEFAULT: u16 = 37373;
/// `AF_SMC`.
const AF_SMC: i32 = 43;
/// `SMCPROTO_SMC` and `SMCPROTO_SMC6`.
const SMCPROTO_SMC: i32 = 0;
const SMCPROTO_SMC6: i32 = 1;
/// The sock_diag sequence number of our dumps.
const SEQ: u32 = 0x5343_4b31;

/// What the command line asks for.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Mode {
    /// `-C HOST`: a client to HOST's `smc_chk -S`.
    Connect(String),
    /// `-S`: a server only.
    Server,
    /// `-i IFACE`: the interface's PNET ID.
    PnetId(String),
    /// `-l`: live test of the active interfaces (or those named).
    Live,
    /// `-s`: static analysis (SMC-D).
    Static,
    /// `-l` and `-s` together.
    All,
}

/// Parsed options.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Options {
    pub mode: Mode,
    pub port: u16,
    pub ipv6: bool,
    pub debug: bool,
    /// Interfaces named as operands (`-l`, `-s`).
    pub ifaces: Vec<String>,
}

/// What to do.
#[derive(Debug, PartialEq, Eq)]
pub enum Action {
    Help,
    Version,
    /// A usage error: its message.
    Usage(String),
    Run(Options),
}

const OPTS: &[Opt] = &[
    Opt::with_arg('C', "connect"),
    Opt::flag('d', "debug"),
    Opt::flag('h', "help"),
    Opt::with_arg('i', "pnetid"),
    Opt::flag('l', "live-test"),
    Opt::with_arg('p', "port"),
    Opt::flag('s', "static-analysis"),
    Opt::flag('S', "server"),
    Opt::flag('v', "version"),
    Opt::flag('6', "ipv6"),
];

fn mode_flag(m: &Mode) -> &'static str {
    match m {
        Mode::Connect(_) => "'-C/--connect'",
        Mode::Server => "'-S/--server'",
        Mode::PnetId(_) => "'-i/--pnetid'",
        Mode::Live | Mode::All => "'-l/--live-test'",
        Mode::Static => "'-s/--static-analysis'",
    }
}

/// Parses the arguments (without the program name).
pub fn parse_args<S: AsRef<str>>(args: &[S]) -> Action {
    let mut mode: Option<Mode> = None;
    let mut port = PORT_DEFAULT;
    let (mut ipv6, mut debug) = (false, false);
    let mut ifaces = Vec::new();
    for ev in getopt::parse(args, OPTS) {
        let new = match ev {
            Event::Error(m) => return Action::Usage(m),
            Event::Operand(o) => {
                ifaces.push(o);
                continue;
            }
            Event::Opt('h', _) => return Action::Help,
            Event::Opt('v', _) => return Action::Version,
            Event::Opt('d', _) => {
                debug = true;
                continue;
            }
            Event::Opt('6', _) => {
                ipv6 = true;
                continue;
            }
            Event::Opt('p', a) => {
                match a.as_deref().and_then(|p| p.parse::<u16>().ok()).filter(|p| *p > 0) {
                    Some(p) => port = p,
                    None => return Action::Usage(format!("Error: Invalid port '{}'", a.unwrap_or_default())),
                }
                continue;
            }
            Event::Opt('C', a) => Mode::Connect(a.unwrap_or_default()),
            Event::Opt('i', a) => Mode::PnetId(a.unwrap_or_default()),
            Event::Opt('l', _) => Mode::Live,
            Event::Opt('s', _) => Mode::Static,
            Event::Opt('S', _) => Mode::Server,
            Event::Opt(c, _) => return Action::Usage(format!("Error: unknown option -{c}")),
        };
        mode = match (mode, new) {
            (None, n) => Some(n),
            (Some(m), n) if m == n => Some(m),
            (Some(Mode::Live), Mode::Static) | (Some(Mode::Static), Mode::Live) => Some(Mode::All),
            (Some(m), n) => {
                return Action::Usage(format!(
                    "Error: Cannot combine options {} and {}",
                    mode_flag(&m),
                    mode_flag(&n)
                ))
            }
        };
    }
    let Some(mode) = mode else {
        return Action::Help;
    };
    if matches!(mode, Mode::PnetId(_)) && !ifaces.is_empty() {
        return Action::Usage("Error: Option -i/--pnetid takes no extra targets".into());
    }
    Action::Run(Options { mode, port, ipv6, debug, ifaces })
}

/// The help text.
pub fn usage() -> String {
    format!(
        "\nUsage: smc_chk [OPTIONS] -C <IP>\n\
         \x20      smc_chk [OPTIONS] -S\n\
         \x20      smc_chk -i <iface>\n\
         \x20      smc_chk [OPTIONS] -l|-s [<iface>...]\n\n\
         Check SMC setup\n\n\
         \x20  -C, --connect <IP>           connect to specified IP (a host running smc_chk -S)\n\
         \x20  -d, --debug                  show debug messages\n\
         \x20  -h, --help                   display this message\n\
         \x20  -i, --pnetid <IFACE>         print PNET ID and exit\n\
         \x20  -l, --live-test              test the active interfaces against a local server\n\
         \x20  -p, --port <PORT>            use the next free port starting\n\
         \x20                               with PORT (default: {PORT_DEFAULT})\n\
         \x20  -s, --static-analysis        show the SMC-D configuration\n\
         \x20  -S, --server                 start server only\n\
         \x20  -v, --version                display version info\n\
         \x20  -6, --ipv6                   IP address is IPv6\n\n"
    )
}

/// The version line.
pub fn version() -> String {
    format!("smc_chk utility, smc_rs-tools-{}\n", crate::VERSION)
}

/// What a CLC decline code means, in words (af_smc(7) lists them).
pub fn reason_text(code: u32) -> &'static str {
    match code {
        0x0101_0000 => "out of memory",
        0x0102_0000 => "timeout waiting for a CLC message",
        0x0201_0000 => "the link was not confirmed in time",
        0x0202_0000 => "a second link was not added in time",
        0x0300_0000 => "configuration error",
        0x0301_0000 => "the peer did not offer SMC in the TCP handshake",
        0x0302_0000 => "IPsec is used on the connection",
        0x0303_0000 => "no usable SMC device, or nothing to propose",
        0x0303_0001 => "no SMC-D device",
        0x0303_0002 => "no usable SMC-R device",
        0x0303_0003 => "no ISM device for SMC-Dv2",
        0x0303_0004 => "an SMC-Rv2 proposal without its v2 extension",
        0x0303_0005 => "no SEID in common",
        0x0303_0006 => "no SMC-Dv2 device in common",
        0x0303_0008 => "no UEID in common",
        0x0303_000a => "connection limit below the minimum",
        0x0303_000b => "link limit out of range",
        0x0304_0000 => "SMC modes do not match",
        0x0306_0000 => "a socket option that SMC does not support",
        0x0307_0000 => "IP prefixes do not match",
        0x0308_0000 => "the peer's host has no SMC-D GID in common",
        0x0309_0000 => "no SMC-D device in the peer's proposal",
        0x030a_0000 => "out of link group connection slots",
        0x030b_0000 => "the server has no link to add the connection to",
        0x030c_0000 => "SMC version mismatch",
        0x030d_0000 => "the peer needs a connection limit we do not have",
        0x030e_0000 => "no route to the peer",
        0x0400_0000 => "unexpected or invalid CLC message",
        0x0500_0000 => "the peer declined",
        0x0600_0000 => "interrupted",
        0x0999_0000 => "internal error",
        0x0999_0002 => "the link could not be made ready",
        0x0999_0003 => "a buffer could not be registered",
        0x0999_0004 => "an rkey could not be stored",
        _ => "unknown error code, or a peer that is not Linux",
    }
}

/// A new AF_SMC stream socket for `v6` or IPv4.
fn smc_socket(v6: bool) -> io::Result<OwnedFd> {
    let proto = if v6 { SMCPROTO_SMC6 } else { SMCPROTO_SMC };
    // SAFETY: plain system call; the result is checked below.
    let fd = unsafe { libc::socket(AF_SMC, libc::SOCK_STREAM | libc::SOCK_CLOEXEC, proto) };
    if fd < 0 {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: `fd` is a new descriptor that nothing else owns.
    Ok(unsafe { OwnedFd::from_raw_fd(fd) })
}

/// `sockaddr_in`/`sockaddr_in6` of `addr`, and its length.
fn sockaddr(addr: &SocketAddr) -> (libc::sockaddr_storage, libc::socklen_t) {
    // SAFETY: an all-zero sockaddr_storage is valid.
    let mut ss: libc::sockaddr_storage = unsafe { std::mem::zeroed() };
    let len = match addr {
        SocketAddr::V4(a) => {
            // SAFETY: sockaddr_storage is larger than sockaddr_in and
            // suitably aligned for it.
            let sin = unsafe { &mut *(&mut ss as *mut _ as *mut libc::sockaddr_in) };
            sin.sin_family = libc::AF_INET as libc::sa_family_t;
            sin.sin_port = a.port().to_be();
            sin.sin_addr.s_addr = u32::from_ne_bytes(a.ip().octets());
            std::mem::size_of::<libc::sockaddr_in>()
        }
        SocketAddr::V6(a) => {
            // SAFETY: as above, for sockaddr_in6.
            let sin6 = unsafe { &mut *(&mut ss as *mut _ as *mut libc::sockaddr_in6) };
            sin6.sin6_family = libc::AF_INET6 as libc::sa_family_t;
            sin6.sin6_port = a.port().to_be();
            sin6.sin6_addr.s6_addr = a.ip().octets();
            sin6.sin6_scope_id = a.scope_id();
            std::mem::size_of::<libc::sockaddr_in6>()
        }
    };
    (ss, len as libc::socklen_t)
}

/// `setsockopt(fd, SOL_SOCKET, opt, value)`; a failure leaves the
/// socket as it was (the options here are conveniences).
fn set_socket_option<T>(fd: &OwnedFd, opt: i32, value: &T) {
    // SAFETY: `value` points to a live `T` for the duration of the call
    // and the length passed is its size.
    unsafe {
        libc::setsockopt(
            fd.as_raw_fd(),
            libc::SOL_SOCKET,
            opt,
            (value as *const T).cast::<libc::c_void>(),
            std::mem::size_of::<T>() as libc::socklen_t,
        )
    };
}

/// An AF_SMC listener on the first free port from `port` (as upstream
/// looks for one), on every address.
pub fn listen_free(port: u16, v6: bool) -> io::Result<(TcpListener, u16)> {
    let mut last = io::Error::from(io::ErrorKind::AddrInUse);
    for p in port..=u16::MAX {
        let fd = smc_socket(v6)?;
        let any: IpAddr = if v6 {
            Ipv6Addr::UNSPECIFIED.into()
        } else {
            Ipv4Addr::UNSPECIFIED.into()
        };
        let (ss, len) = sockaddr(&SocketAddr::new(any, p));
        set_socket_option(&fd, libc::SO_REUSEADDR, &(1 as libc::c_int));
        // SAFETY: `ss` holds an address of `len` bytes.
        let rc = unsafe { libc::bind(fd.as_raw_fd(), &ss as *const _ as *const libc::sockaddr, len) };
        if rc != 0 {
            last = io::Error::last_os_error();
            if last.raw_os_error() == Some(libc::EADDRINUSE) {
                continue;
            }
            return Err(last);
        }
        // SAFETY: plain system call on our descriptor.
        if unsafe { libc::listen(fd.as_raw_fd(), 128) } != 0 {
            return Err(io::Error::last_os_error());
        }
        return Ok((TcpListener::from(fd), p));
    }
    Err(last)
}

/// Serves `l`: each connection is read until its end, then closed.
pub fn serve(l: &TcpListener, debug: bool) {
    for c in l.incoming() {
        let Ok(mut c) = c else { continue };
        if debug {
            println!("[DEBUG] connection from {:?}", c.peer_addr().ok());
        }
        std::thread::spawn(move || {
            let mut buf = [0u8; 4096];
            while matches!(c.read(&mut buf), Ok(n) if n > 0) {}
        });
    }
}

/// Connects an AF_SMC socket to `to` within 10 s.
pub fn connect(to: &SocketAddr) -> io::Result<TcpStream> {
    let fd = smc_socket(to.is_ipv6())?;
    let (ss, len) = sockaddr(to);
    // A send timeout bounds a blocking connect.
    set_socket_option(&fd, libc::SO_SNDTIMEO, &libc::timeval { tv_sec: 10, tv_usec: 0 });
    // SAFETY: `ss` holds an address of `len` bytes.
    let rc = unsafe { libc::connect(fd.as_raw_fd(), &ss as *const _ as *const libc::sockaddr, len) };
    if rc != 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(TcpStream::from(fd))
}

/// The sock_diag entry of our connection from `local` to `peer`.
pub fn find_socket(local: &SocketAddr, peer: &SocketAddr) -> Option<SockInfo> {
    let sock = Socket::open(NETLINK_SOCK_DIAG).ok()?;
    let mut found = None;
    let want = |a: &[u8; 16], ip: IpAddr| match ip {
        IpAddr::V4(v) => a.get(..4) == Some(&v.octets()[..]),
        IpAddr::V6(v) => match v.to_ipv4_mapped() {
            Some(v4) => a.get(..4) == Some(&v4.octets()[..]) || *a == v.octets(),
            None => *a == v.octets(),
        },
    };
    let _ = netlink::dump(
        &sock,
        &dump_request(0, SEQ),
        SEQ,
        |m| {
            if m.kind != SOCK_DIAG_BY_FAMILY || found.is_some() {
                return;
            }
            let Some(info) = SockInfo::parse(m.payload) else { return };
            let d = &info.msg;
            if d.sport == local.port() && d.dport == peer.port() && want(&d.dst, peer.ip()) {
                found = Some(info);
            }
        },
        |_| {},
    );
    found
}

/// The live test of one connection to `to`: the lines upstream prints.
pub fn live_test(to: &SocketAddr, debug: bool) -> String {
    let stream = match connect(to) {
        Ok(s) => s,
        Err(e) => {
            if debug {
                println!("[DEBUG] connect to {to}: {e}");
            }
            return "     Failed, no connection\n".into();
        }
    };
    let local = stream.local_addr().ok();
    // The mode is known once connect returned; the diag entry shows it.
    let mut info = None;
    for _ in 0..50 {
        info = local.as_ref().and_then(|l| find_socket(l, to));
        if info.is_some() {
            break;
        }
        std::thread::sleep(Duration::from_millis(100));
    }
    drop(stream);
    let Some(info) = info else {
        return "     Failed, no connection\n".into();
    };
    match info.msg.mode {
        SMC_DIAG_MODE_SMCR => "     Success, using SMC-R\n".into(),
        SMC_DIAG_MODE_SMCD => "     Success, using SMC-D\n".into(),
        _ => {
            let mut s = String::from("     Failed  (TCP fallback), reasons:\n");
            let f = info.fallback.unwrap_or_default();
            s += &format!("          Client: 0x{:08x}  {}\n", f.reason, reason_text(f.reason));
            if f.peer_diagnosis != 0 {
                s += &format!(
                    "          Server: 0x{:08x}  {}\n",
                    f.peer_diagnosis,
                    reason_text(f.peer_diagnosis)
                );
            }
            s
        }
    }
}

/// The first address of `host` (a literal or a name), IPv6 first with
/// `v6`.
pub fn resolve(host: &str, port: u16, v6: bool) -> Option<SocketAddr> {
    let all: Vec<SocketAddr> = (host, port).to_socket_addrs().ok()?.collect();
    all.iter()
        .find(|a| a.is_ipv6() == v6)
        .or_else(|| all.first())
        .copied()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run(args: &[&str]) -> Action {
        parse_args(args)
    }

    #[test]
    fn modes_and_options() {
        assert_eq!(run(&[]), Action::Help);
        assert_eq!(run(&["-v"]), Action::Version);
        let Action::Run(o) = run(&["-C", "10.0.0.1", "-p", "4000", "-6"]) else {
            panic!("no run");
        };
        assert_eq!(o.mode, Mode::Connect("10.0.0.1".into()));
        assert_eq!((o.port, o.ipv6), (4000, true));
        let Action::Run(o) = run(&["--server"]) else { panic!("no run") };
        assert_eq!((o.mode, o.port), (Mode::Server, PORT_DEFAULT));
        let Action::Run(o) = run(&["-l", "-s", "eth0"]) else { panic!("no run") };
        assert_eq!((o.mode, o.ifaces), (Mode::All, vec!["eth0".to_string()]));
        assert_eq!(
            run(&["-S", "-C", "x"]),
            Action::Usage("Error: Cannot combine options '-S/--server' and '-C/--connect'".into())
        );
        assert!(matches!(run(&["-p", "0", "-S"]), Action::Usage(_)));
        assert!(matches!(run(&["-i", "eth0", "eth1"]), Action::Usage(_)));
        assert!(matches!(run(&["-x"]), Action::Usage(_)));
    }

    #[test]
    fn reasons_in_words() {
        assert_eq!(reason_text(0x0301_0000), "the peer did not offer SMC in the TCP handshake");
        assert_eq!(reason_text(0x0303_0008), "no UEID in common");
        assert!(reason_text(0x1234_5678).starts_with("unknown"));
    }
}
