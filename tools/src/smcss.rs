// SPDX-License-Identifier: GPL-2.0

//! `smcss`: the table of AF_SMC sockets, as upstream smc-tools' `smcss`
//! prints it. Everything here is a pure function of the options and the
//! decoded replies, so the exact output is tested without a kernel; the
//! binary (`src/bin/smcss.rs`) only adds the socket and the printing.
//!
//! Comments name the upstream behaviour each piece reproduces (smc-tools
//! 1.8.x `smcss.c`: `print_header()`, `smc_state()`, `addr_format()`,
//! `show_one_smc_sock()`, `main()`).

use crate::getopt::{self, Event, Opt};
use crate::printable;
use crate::smc_diag::{
    ext_bit, DiagMsg, SockInfo, SMC_DIAG_CONNINFO, SMC_DIAG_DMBINFO, SMC_DIAG_LGRINFO,
    SMC_DIAG_MODE_FALLBACK_TCP, SMC_DIAG_MODE_SMCD, SMC_DIAG_MODE_SMCR,
};
use std::fmt::Write as _;

/// The sequence number of the request (upstream's `MAGIC_SEQ`).
pub const MAGIC_SEQ: u32 = 123456;

/// Width of an address column before `--wide` (`ADDR_LEN_SHORT`).
pub const ADDR_LEN_SHORT: usize = 23;

/// `enum smc_state` values that change what a row shows.
pub const SMC_ACTIVE: u8 = 1;
pub const SMC_INIT: u8 = 2;
pub const SMC_CLOSED: u8 = 7;
pub const SMC_LISTEN: u8 = 10;

/// What the command line asked for.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Options {
    /// `-a`: every socket, listening and initial ones included.
    pub all: bool,
    /// `-l`: listening sockets only.
    pub listening: bool,
    /// `-d`: shutdown state and connection details.
    pub debug: bool,
    /// `-R`: SMC-R sockets only, with their link.
    pub smcr: bool,
    /// `-D`: SMC-D sockets only, with their DMB.
    pub smcd: bool,
    /// `-W`: addresses never truncated.
    pub wide: bool,
}

impl Options {
    /// The `diag_ext` bits of the request (`smc_show_netlink()`).
    pub fn diag_ext(&self) -> u8 {
        let mut ext = 0;
        if self.debug {
            ext |= ext_bit(SMC_DIAG_CONNINFO);
        }
        if self.smcr {
            ext |= ext_bit(SMC_DIAG_LGRINFO);
        }
        if self.smcd {
            ext |= ext_bit(SMC_DIAG_DMBINFO);
        }
        ext
    }
}

/// The options (upstream's `long_opts`; short string `"aldDRhvW"`).
/// Upstream maps `--version` to `'V'`, which its switch lacks, so its
/// `--version` prints the usage and fails; ours prints the version.
pub const OPTS: &[Opt] = &[
    Opt::flag('a', "all"),
    Opt::flag('d', "debug"),
    Opt::flag('l', "listening"),
    Opt::flag('D', "smcd"),
    Opt::flag('R', "smcr"),
    Opt::flag('v', "version"),
    Opt::flag('W', "wide"),
    Opt::flag('h', "help"),
];

/// What to do after reading the command line.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Action {
    /// Dump and print.
    Run(Options),
    /// `-h`: the usage on stdout, exit 0.
    Help,
    /// `-v`: the version on stdout, exit 0.
    Version,
    /// A bad command line: the message (if any) and then the usage on
    /// stderr, exit 1.
    Usage(Option<UsageError>),
}

/// Why the command line is refused.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum UsageError {
    /// getopt's message; printed after `progname: `.
    Getopt(String),
    /// Two options that do not go together; printed alone.
    Conflict(&'static str),
}

/// Reads the command line (without `argv[0]`) as upstream's `main()` does:
/// options in order, `-h` and `-v` acting at once, the first bad option
/// ending in the usage, operands ignored, then the incompatible pairs.
pub fn parse_args<S: AsRef<str>>(args: &[S]) -> Action {
    let mut o = Options::default();
    for ev in getopt::parse(args, OPTS) {
        match ev {
            Event::Opt('a', _) => o.all = true,
            Event::Opt('l', _) => o.listening = true,
            Event::Opt('d', _) => o.debug = true,
            Event::Opt('D', _) => o.smcd = true,
            Event::Opt('R', _) => o.smcr = true,
            Event::Opt('W', _) => o.wide = true,
            Event::Opt('v', _) => return Action::Version,
            Event::Opt('h', _) => return Action::Help,
            Event::Opt(..) => return Action::Usage(None),
            Event::Operand(_) => {}
            Event::Error(msg) => return Action::Usage(Some(UsageError::Getopt(msg))),
        }
    }
    let conflicts = [
        (
            o.smcr && o.smcd,
            "--smcd together with --smcr is not supported",
        ),
        (
            o.listening && o.debug,
            "--listening together with --debug is not supported",
        ),
        (
            o.listening && o.all,
            "--listening together with --all is not supported",
        ),
        (
            o.listening && o.smcr,
            "--listening together with --smcr is not supported",
        ),
        (
            o.listening && o.smcd,
            "--listening together with --smcd is not supported",
        ),
    ];
    if let Some((_, msg)) = conflicts.iter().find(|(bad, _)| *bad) {
        return Action::Usage(Some(UsageError::Conflict(msg)));
    }
    Action::Run(o)
}

/// The usage text (`_usage()`).
pub fn usage(progname: &str) -> String {
    format!(
        "Usage: {progname} [ OPTIONS ]\n\
         \t-h, --help          this message\n\
         \t-v, --version       show version information\n\
         \t-a, --all           show all sockets\n\
         \t-l, --listening     show listening sockets\n\
         \t-d, --debug         show debug socket information\n\
         \t-W, --wide          do not truncate IP addresses\n\
         \t-D, --smcd          show detailed SMC-D information (shows only SMC-D sockets)\n\
         \t-R, --smcr          show detailed SMC-R information (shows only SMC-R sockets)\n\
         \tno OPTIONS          show all connected sockets\n"
    )
}

/// The version line (upstream: `smcss utility, smc-tools-%s`).
pub fn version() -> String {
    format!("smcss utility, smc_rs-tools-{}\n", crate::VERSION)
}

/// The header line, without its newline (`print_header()`).
pub fn header(o: &Options) -> String {
    let mut h = String::from(
        "State          UID   Inode   Local Address           Peer Address            Intf Mode ",
    );
    if o.debug {
        h.push_str(
            "Shutd Token    Sndbuf   Rcvbuf   Peerbuf  rxprod-Cursor rxcons-Cursor rxFlags \
             txprod-Cursor txcons-Cursor txFlags txprep-Cursor txsent-Cursor txfin-Cursor  ",
        );
    }
    if o.smcr {
        h.push_str(
            "Role IB-device       Port Linkid GID                                      Peer-GID",
        );
    }
    if o.smcd {
        h.push_str("GID              Token            Peer-GID         Peer-Token       Linkid");
    }
    h
}

/// The State column's text (`smc_state()`): the name, or the number as
/// C's `%#x?` writes it (`0?` for zero, `0x3?` otherwise).
pub fn state_name(state: u8) -> String {
    let name = match state {
        1 => "ACTIVE",
        2 => "INIT",
        7 => "CLOSED",
        10 => "LISTEN",
        20 => "PEERCLOSEWAIT1",
        21 => "PEERCLOSEWAIT2",
        22 => "APPCLOSEWAIT1",
        23 => "APPCLOSEWAIT2",
        24 => "APPFINCLOSEWAIT1",
        25 => "PEERFINCLOSEWAIT",
        26 => "PEERABORTWAIT",
        27 => "PROCESSABORT",
        0 => return "0?".to_string(),
        x => return format!("{x:#x}?"),
    };
    name.to_string()
}

/// `inet_ntop(AF_INET6)` as glibc writes it: the first longest run of two
/// or more zero groups as `::`, lowercase hex, and IPv4 dotted for
/// `::a.b.c.d` and `::ffff:a.b.c.d`.
pub fn ntop6(a: &[u8; 16]) -> String {
    let words: Vec<u16> = a
        .chunks_exact(2)
        .map(|w| u16::from_be_bytes([w[0], w[1]]))
        .collect();
    // The first longest run of zero words.
    let (mut best, mut cur): ((usize, usize), Option<(usize, usize)>) = ((0, 0), None);
    for (i, &w) in words.iter().enumerate() {
        if w == 0 {
            let c = cur.get_or_insert((i, 0));
            c.1 += 1;
            if c.1 > best.1 {
                best = *c;
            }
        } else {
            cur = None;
        }
    }
    let run = (best.1 >= 2).then_some(best);
    let mut s = String::new();
    let mut i = 0;
    while i < 8 {
        if let Some((base, len)) = run {
            if i == base {
                s.push(':');
                i += len;
                if i == 8 {
                    s.push(':');
                }
                continue;
            }
        }
        if i != 0 {
            s.push(':');
        }
        if i == 6
            && run.is_some_and(|(base, len)| {
                base == 0 && (len == 6 || (len == 5 && words[5] == 0xffff))
            })
        {
            let _ = write!(s, "{}.{}.{}.{}", a[12], a[13], a[14], a[15]);
            break;
        }
        let _ = write!(s, "{:x}", words[i]);
        i += 1;
    }
    s
}

/// The address text of a socket (`addr_format()`): IPv4 when the last three
/// 32-bit words are zero (the kernel clears the field and reports
/// `diag_family` `AF_SMC` for both), else IPv6.
pub fn ntop(a: &[u8; 16]) -> String {
    if a[4..].iter().all(|&b| b == 0) {
        format!("{}.{}.{}.{}", a[0], a[1], a[2], a[3])
    } else {
        ntop6(a)
    }
}

/// `address:port`, cut to [`ADDR_LEN_SHORT`] with `..` before the port when
/// longer and not `wide` (`addr_format()`).
pub fn format_addr(a: &[u8; 16], port: u16, wide: bool) -> String {
    let addr = ntop(a);
    let port = port.to_string();
    if !wide && addr.len() + 1 + port.len() > ADDR_LEN_SHORT {
        // Addresses are ASCII: cutting by bytes is cutting by characters.
        let keep = ADDR_LEN_SHORT - 1 - port.len() - 2;
        format!("{}..:{port}", &addr[..keep.min(addr.len())])
    } else {
        format!("{addr}:{port}")
    }
}

/// Whether a socket has a row under `o` (the filters at the top of
/// `show_one_smc_sock()`): `-l` listening sockets only; by default neither
/// listening nor initial ones; `-a` all; `-R`/`-D` one mode only.
pub fn shows(o: &Options, m: &DiagMsg) -> bool {
    if o.listening {
        if m.state != SMC_LISTEN {
            return false;
        }
    } else if !o.all && (m.state == SMC_LISTEN || m.state == SMC_INIT) {
        return false;
    }
    if o.smcr && m.mode != SMC_DIAG_MODE_SMCR {
        return false;
    }
    if o.smcd && m.mode != SMC_DIAG_MODE_SMCD {
        return false;
    }
    true
}

/// The Mode column of a socket that fell back to TCP: `TCP ` and, when the
/// kernel gave the reasons, `0x%08x` and `/0x%08x` for a peer's diagnosis.
pub fn fallback_mode(info: &SockInfo) -> String {
    let mut s = String::from("TCP ");
    if let Some(f) = info.fallback {
        let _ = write!(s, "0x{:08x}", f.reason);
        if f.peer_diagnosis != 0 {
            let _ = write!(s, "/0x{:08x}", f.peer_diagnosis);
        }
    }
    s
}

/// The row of one socket, without its newline, or `None` when `o` filters
/// it out (`show_one_smc_sock()`). Trailing blanks are upstream's.
pub fn row(o: &Options, info: &SockInfo) -> Option<String> {
    let m = &info.msg;
    if !shows(o, m) {
        return None;
    }
    let mut s = String::new();
    // `%-14s %05d %07llu `: the uid through a signed int, as C's `%d`.
    let _ = write!(
        s,
        "{:<14} {:05} {:07} ",
        state_name(m.state),
        m.uid as i32,
        m.inode
    );
    if m.state == SMC_INIT {
        return Some(s);
    }
    let _ = write!(
        s,
        "{:<w$} ",
        format_addr(&m.src, m.sport, o.wide),
        w = ADDR_LEN_SHORT
    );
    if m.state == SMC_LISTEN {
        return Some(s);
    }
    let _ = write!(
        s,
        "{:<w$} ",
        format_addr(&m.dst, m.dport, o.wide),
        w = ADDR_LEN_SHORT
    );
    let _ = write!(s, "{:04x} ", m.ifindex);
    if m.state == SMC_CLOSED {
        return Some(s);
    }
    if m.mode == SMC_DIAG_MODE_FALLBACK_TCP {
        s.push_str(&fallback_mode(info));
        return Some(s);
    }
    s.push_str(if m.mode == SMC_DIAG_MODE_SMCD {
        "SMCD "
    } else {
        "SMCR "
    });

    if o.debug {
        if let Some(mask) = info.shutdown {
            let r = if mask & 1 != 0 { 'R' } else { '<' };
            let w = if mask & 2 != 0 { 'W' } else { '>' };
            let _ = write!(s, " {r}-{w}  ");
        }
        if let Some(c) = &info.conninfo {
            let _ = write!(
                s,
                "{:08x} {:08x} {:08x} {:08x} ",
                c.token, c.sndbuf_size, c.rmbe_size, c.peer_rmbe_size
            );
            let _ = write!(s, "{:04x}:{:08x} ", c.rx_prod.wrap, c.rx_prod.count);
            let _ = write!(s, "{:04x}:{:08x} ", c.rx_cons.wrap, c.rx_cons.count);
            let _ = write!(
                s,
                "{:02x}:{:02x}   ",
                c.rx_prod_flags, c.rx_conn_state_flags
            );
            let _ = write!(s, "{:04x}:{:08x} ", c.tx_prod.wrap, c.tx_prod.count);
            let _ = write!(s, "{:04x}:{:08x} ", c.tx_cons.wrap, c.tx_cons.count);
            let _ = write!(
                s,
                "{:02x}:{:02x}   ",
                c.tx_prod_flags, c.tx_conn_state_flags
            );
            let _ = write!(s, "{:04x}:{:08x} ", c.tx_prep.wrap, c.tx_prep.count);
            let _ = write!(s, "{:04x}:{:08x} ", c.tx_sent.wrap, c.tx_sent.count);
            let _ = write!(s, "{:04x}:{:08x} ", c.tx_fin.wrap, c.tx_fin.count);
        }
    }
    if o.smcr {
        if let Some(l) = &info.lgrinfo {
            let role = if l.role != 0 { "SERV" } else { "CLNT" };
            let _ = write!(s, "{role:>4} {:<15} ", printable(&l.ibname));
            let _ = write!(s, "{:02x}   {:02x}     ", l.ibport, l.link_id);
            let _ = write!(s, "{:<40} {}", printable(&l.gid), printable(&l.peer_gid));
        }
    }
    if o.smcd {
        if let Some(d) = &info.dmbinfo {
            let _ = write!(
                s,
                "{:016x} {:016x} {:016x} {:016x} {:08x} ",
                d.my_gid, d.token, d.peer_gid, d.peer_token, d.linkid
            );
        }
    }
    Some(s)
}

/// The whole table for a dump's reply payloads: the header, then a row per
/// shown socket; payloads too short for `struct smc_diag_msg` are skipped.
pub fn table<'a, I: IntoIterator<Item = &'a [u8]>>(o: &Options, payloads: I) -> String {
    let mut out = header(o);
    out.push('\n');
    for p in payloads {
        if let Some(r) = SockInfo::parse(p).and_then(|i| row(o, &i)) {
            out.push_str(&r);
            out.push('\n');
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::smc_diag::{ConnInfo, Cursor, DmbInfo, Fallback, LgrInfo};
    use std::ffi::CStr;

    fn v4(a: [u8; 4]) -> [u8; 16] {
        let mut b = [0; 16];
        b[..4].copy_from_slice(&a);
        b
    }

    fn v6(s: &str) -> [u8; 16] {
        s.parse::<std::net::Ipv6Addr>()
            .expect("test address")
            .octets()
    }

    fn sock(state: u8, mode: u8) -> SockInfo {
        SockInfo {
            msg: DiagMsg {
                family: 43,
                state,
                mode,
                sport: 12345,
                dport: 80,
                src: v4([10, 10, 0, 1]),
                dst: v4([10, 10, 0, 2]),
                uid: 0,
                inode: 4242,
                ..DiagMsg::default()
            },
            shutdown: Some(0),
            conninfo: None,
            lgrinfo: None,
            dmbinfo: None,
            fallback: Some(Fallback::default()),
            deficit: None,
        }
    }

    #[test]
    fn state_names_as_upstream() {
        let names = [
            (1, "ACTIVE"),
            (2, "INIT"),
            (7, "CLOSED"),
            (10, "LISTEN"),
            (20, "PEERCLOSEWAIT1"),
            (21, "PEERCLOSEWAIT2"),
            (22, "APPCLOSEWAIT1"),
            (23, "APPCLOSEWAIT2"),
            (24, "APPFINCLOSEWAIT1"),
            (25, "PEERFINCLOSEWAIT"),
            (26, "PEERABORTWAIT"),
            (27, "PROCESSABORT"),
            (0, "0?"),
            (3, "0x3?"),
            (255, "0xff?"),
        ];
        for (n, name) in names {
            assert_eq!(state_name(n), name, "state {n}");
        }
    }

    extern "C" {
        // POSIX, in glibc; the libc crate does not declare it.
        fn inet_ntop(
            af: libc::c_int,
            src: *const libc::c_void,
            dst: *mut libc::c_char,
            size: libc::socklen_t,
        ) -> *const libc::c_char;
    }

    /// glibc's own `inet_ntop` is the reference for IPv6 text.
    fn libc_ntop6(a: &[u8; 16]) -> String {
        let mut buf = [0 as libc::c_char; 64];
        // SAFETY: `a` holds an `in6_addr`; `buf` has room for
        // INET6_ADDRSTRLEN and its length is passed along.
        let p = unsafe {
            inet_ntop(
                libc::AF_INET6,
                a.as_ptr().cast(),
                buf.as_mut_ptr(),
                buf.len() as _,
            )
        };
        assert!(!p.is_null());
        // SAFETY: on success `buf` holds a NUL-terminated string.
        unsafe { CStr::from_ptr(buf.as_ptr()) }
            .to_string_lossy()
            .into_owned()
    }

    #[test]
    fn ipv6_text_matches_glibc() {
        let mut cases: Vec<[u8; 16]> = [
            "::",
            "::1",
            "::5",
            "::1.2.3.4",
            "::ffff:1.2.3.4",
            "::ffff:0:1.2.3.4",
            "1::",
            "fe80::1",
            "fe80::2:0:0:3",
            "1:0:0:2:0:0:0:3",
            "1:0:0:2:0:0:3:4",
            "1:0:2:0:3:0:4:0",
            "2001:db8:85a3:8d3:1319:8a2e:370:7348",
            "0:0:1::",
            "::1:0:0",
            "0:1::",
        ]
        .iter()
        .map(|s| v6(s))
        .collect();
        // Every pattern of zero and non-zero words, with varied values.
        for mask in 0u32..256 {
            let mut a = [0u8; 16];
            for w in 0..8 {
                if mask & (1 << w) != 0 {
                    let x = (mask as u16)
                        .wrapping_mul(0x9e37)
                        .wrapping_add(w as u16 * 0x1111)
                        | 1;
                    a[2 * w..2 * w + 2].copy_from_slice(&x.to_be_bytes());
                }
            }
            cases.push(a);
            let mut m = a;
            m[10] = 0xff;
            m[11] = 0xff;
            cases.push(m);
        }
        for a in cases {
            assert_eq!(ntop6(&a), libc_ntop6(&a), "{a:?}");
        }
    }

    #[test]
    fn address_family_by_content() {
        assert_eq!(ntop(&v4([192, 168, 1, 20])), "192.168.1.20");
        assert_eq!(ntop(&[0; 16]), "0.0.0.0"); // also IPv6 "::": upstream's rule
        assert_eq!(ntop(&v6("::1")), "::1");
        assert_eq!(ntop(&v6("::ffff:10.0.0.1")), "::ffff:10.0.0.1");
        assert_eq!(ntop(&v6("fe80::1")), "fe80::1");
    }

    #[test]
    fn address_truncation() {
        assert_eq!(
            format_addr(&v4([10, 10, 0, 1]), 12345, false),
            "10.10.0.1:12345"
        );
        // The boundary: 20 + 1 + 2 = 23 characters are kept, 24 are cut to 23.
        let a = v6("2001:db8:aaa:bbbb::1");
        assert_eq!(format_addr(&a, 80, false), "2001:db8:aaa:bbbb::1:80");
        assert_eq!(format_addr(&a, 443, false), "2001:db8:aaa:bbbb..:443");
        let a = v6("2001:db8:85a3:8d3:1319:8a2e:370:7348");
        assert_eq!(format_addr(&a, 443, false), "2001:db8:85a3:8d3..:443");
        assert_eq!(format_addr(&a, 65535, false), "2001:db8:85a3:8..:65535");
        assert_eq!(format_addr(&a, 0, false), "2001:db8:85a3:8d3:1..:0");
        assert_eq!(
            format_addr(&a, 65535, true),
            "2001:db8:85a3:8d3:1319:8a2e:370:7348:65535"
        );
        for port in [0, 9, 99, 999, 9999, 65535] {
            assert_eq!(format_addr(&a, port, false).len(), ADDR_LEN_SHORT);
        }
        let a = v6("fe80::1234:5678:9abc:def0");
        assert_eq!(format_addr(&a, 1, false), "fe80::1234:5678:9ab..:1");
    }

    #[test]
    fn fallback_mode_strings() {
        let mut s = sock(SMC_ACTIVE, SMC_DIAG_MODE_FALLBACK_TCP);
        s.fallback = Some(Fallback {
            reason: 0x0301_0000,
            peer_diagnosis: 0,
        });
        assert_eq!(fallback_mode(&s), "TCP 0x03010000");
        s.fallback = Some(Fallback {
            reason: 0x0503_0000,
            peer_diagnosis: 0x0303_0002,
        });
        assert_eq!(fallback_mode(&s), "TCP 0x05030000/0x03030002");
        s.fallback = None;
        assert_eq!(fallback_mode(&s), "TCP ");
    }

    #[test]
    fn rows_by_state() {
        let o = Options {
            all: true,
            ..Options::default()
        };
        let init = row(&o, &sock(SMC_INIT, 0)).expect("shown with -a");
        assert_eq!(init, "INIT           00000 0004242 ");
        let listen = row(&o, &sock(SMC_LISTEN, 0)).expect("shown with -a");
        assert_eq!(
            listen,
            "LISTEN         00000 0004242 10.10.0.1:12345         "
        );
        let closed = row(&o, &sock(SMC_CLOSED, 1)).expect("shown");
        assert_eq!(
            closed,
            "CLOSED         00000 0004242 10.10.0.1:12345         10.10.0.2:80            0000 "
        );
        let active = row(&o, &sock(SMC_ACTIVE, SMC_DIAG_MODE_SMCD)).expect("shown");
        assert!(active.ends_with("0000 SMCD "), "{active:?}");
        let odd_mode = row(&o, &sock(SMC_ACTIVE, 7)).expect("shown");
        assert!(odd_mode.ends_with("0000 SMCR "), "{odd_mode:?}");
    }

    #[test]
    fn filters() {
        let def = Options::default();
        let all = Options { all: true, ..def };
        let lis = Options {
            listening: true,
            ..def
        };
        let r = Options { smcr: true, ..def };
        let d = Options {
            smcd: true,
            all: true,
            ..def
        };
        let m = |state, mode| sock(state, mode).msg;
        assert!(!shows(&def, &m(SMC_LISTEN, 0)));
        assert!(!shows(&def, &m(SMC_INIT, 0)));
        assert!(shows(&def, &m(SMC_CLOSED, 0)));
        assert!(shows(&def, &m(SMC_ACTIVE, 1)));
        assert!(shows(&all, &m(SMC_LISTEN, 0)) && shows(&all, &m(SMC_INIT, 0)));
        assert!(shows(&lis, &m(SMC_LISTEN, 1)));
        assert!(!shows(&lis, &m(SMC_ACTIVE, 0)));
        assert!(shows(&r, &m(SMC_ACTIVE, 0)));
        assert!(!shows(&r, &m(SMC_ACTIVE, 1)) && !shows(&r, &m(SMC_ACTIVE, 2)));
        assert!(shows(&d, &m(SMC_INIT, 2)) && !shows(&d, &m(SMC_ACTIVE, 0)));
    }

    #[test]
    fn uid_through_signed_int() {
        let o = Options::default();
        let mut s = sock(SMC_ACTIVE, 0);
        s.msg.uid = 1000;
        assert!(row(&o, &s).is_some_and(|r| r.starts_with("ACTIVE         01000 0004242 ")));
        s.msg.uid = u32::MAX;
        assert!(row(&o, &s).is_some_and(|r| r.starts_with("ACTIVE         -0001 0004242 ")));
        s.msg.uid = 123456;
        s.msg.inode = 123456789;
        assert!(row(&o, &s).is_some_and(|r| r.starts_with("ACTIVE         123456 123456789 ")));
    }

    #[test]
    fn debug_and_link_columns() {
        let mut s = sock(SMC_ACTIVE, SMC_DIAG_MODE_SMCR);
        s.shutdown = Some(3);
        s.conninfo = Some(ConnInfo {
            token: 0x1234,
            sndbuf_size: 0x10000,
            rmbe_size: 0x10000,
            peer_rmbe_size: 0x8000,
            rx_prod: Cursor {
                wrap: 1,
                count: 0x20,
            },
            tx_fin: Cursor {
                wrap: 0xffff,
                count: 0xdead_beef,
            },
            rx_conn_state_flags: 0x40,
            tx_prod_flags: 0x80,
            ..ConnInfo::default()
        });
        s.lgrinfo = Some(LgrInfo {
            link_id: 1,
            ibname: b"rxe0".to_vec(),
            ibport: 1,
            gid: b"fe80:0000:0000:0000:5054:00ff:fe12:3401".to_vec(),
            peer_gid: b"fe80:0000:0000:0000:5054:00ff:fe12:3402".to_vec(),
            role: 1,
        });
        let o = Options {
            debug: true,
            smcr: true,
            ..Options::default()
        };
        let r = row(&o, &s).expect("SMC-R row");
        let tail = r
            .split_once("0000 SMCR ")
            .map(|x| x.1)
            .expect("mode column");
        assert_eq!(
            tail,
            " R-W  00001234 00010000 00010000 00008000 0001:00000020 0000:00000000 00:40   \
             0000:00000000 0000:00000000 80:00   0000:00000000 0000:00000000 ffff:deadbeef \
             SERV rxe0            01   01     fe80:0000:0000:0000:5054:00ff:fe12:3401  \
             fe80:0000:0000:0000:5054:00ff:fe12:3402"
        );
        // Without the attributes, only the mode.
        s.shutdown = None;
        s.conninfo = None;
        s.lgrinfo = None;
        assert!(row(&o, &s).is_some_and(|r| r.ends_with("0000 SMCR ")));
    }

    #[test]
    fn smcd_columns() {
        let mut s = sock(SMC_ACTIVE, SMC_DIAG_MODE_SMCD);
        s.dmbinfo = Some(DmbInfo {
            linkid: 0x0102_0304,
            peer_gid: 0xaa,
            my_gid: 0xbb,
            token: 0xcc,
            peer_token: 0xdd,
        });
        let o = Options {
            smcd: true,
            ..Options::default()
        };
        let r = row(&o, &s).expect("SMC-D row");
        assert!(r.ends_with(
            "SMCD 00000000000000bb 00000000000000cc 00000000000000aa 00000000000000dd 01020304 "
        ));
    }

    #[test]
    fn hostile_strings_stay_on_one_line() {
        let mut s = sock(SMC_ACTIVE, SMC_DIAG_MODE_SMCR);
        s.lgrinfo = Some(LgrInfo {
            link_id: 0,
            ibname: b"a\nb\x1b[2J\xff".to_vec(),
            ibport: 0,
            gid: vec![],
            peer_gid: vec![],
            role: 0,
        });
        let o = Options {
            smcr: true,
            ..Options::default()
        };
        let r = row(&o, &s).expect("row");
        assert!(r.contains("CLNT a?b?[2J?        00"), "{r:?}");
        assert!(!r.contains('\n'));
    }

    #[test]
    fn headers() {
        let o = Options::default();
        assert_eq!(
            header(&o),
            "State          UID   Inode   Local Address           Peer Address            Intf Mode "
        );
        let d = header(&Options {
            debug: true,
            smcd: true,
            ..o
        });
        assert!(d.ends_with("txfin-Cursor  GID              Token            Peer-GID         Peer-Token       Linkid"));
        let r = header(&Options { smcr: true, ..o });
        assert!(r.ends_with(
            "Mode Role IB-device       Port Linkid GID                                      Peer-GID"
        ));
    }

    #[test]
    fn command_lines() {
        let run = |a: &[&str]| parse_args(a);
        assert_eq!(run(&[]), Action::Run(Options::default()));
        assert_eq!(
            run(&["-aW", "--debug", "ignored"]),
            Action::Run(Options {
                all: true,
                wide: true,
                debug: true,
                ..Options::default()
            })
        );
        assert_eq!(run(&["-h", "-x"]), Action::Help);
        let getopt = |m: &str| Action::Usage(Some(UsageError::Getopt(m.into())));
        assert_eq!(run(&["-x", "-h"]), getopt("invalid option -- 'x'"));
        assert_eq!(run(&["-v"]), Action::Version);
        assert_eq!(run(&["--version"]), Action::Version);
        assert_eq!(run(&["-V"]), getopt("invalid option -- 'V'"));
        assert_eq!(
            run(&["--smc"]),
            getopt("option '--smc' is ambiguous; possibilities: '--smcd' '--smcr'")
        );
        assert_eq!(
            run(&["--lis"]),
            Action::Run(Options {
                listening: true,
                ..Options::default()
            })
        );
        let bad = |a: &[&str], m: &'static str| {
            assert_eq!(
                run(a),
                Action::Usage(Some(UsageError::Conflict(m))),
                "{a:?}"
            )
        };
        bad(&["-RD"], "--smcd together with --smcr is not supported");
        bad(
            &["-ld"],
            "--listening together with --debug is not supported",
        );
        bad(&["-la"], "--listening together with --all is not supported");
        bad(
            &["-lR"],
            "--listening together with --smcr is not supported",
        );
        bad(
            &["-lD"],
            "--listening together with --smcd is not supported",
        );
        // The first conflict in upstream's order wins.
        bad(&["-lRD"], "--smcd together with --smcr is not supported");
    }

    #[test]
    fn request_extensions() {
        assert_eq!(Options::default().diag_ext(), 0);
        let o = Options {
            debug: true,
            smcr: true,
            ..Options::default()
        };
        assert_eq!(o.diag_ext(), 0b011);
        let o = Options {
            smcd: true,
            ..Options::default()
        };
        assert_eq!(o.diag_ext(), 0b1000);
    }

    #[test]
    fn usage_text() {
        let u = usage("smcss");
        assert!(u.starts_with("Usage: smcss [ OPTIONS ]\n\t-h, --help          this message\n"));
        assert!(u.ends_with("\tno OPTIONS          show all connected sockets\n"));
        assert_eq!(u.lines().count(), 10);
        assert!(version().starts_with("smcss utility, smc_rs-tools-"));
    }
}
