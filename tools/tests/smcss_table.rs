// SPDX-License-Identifier: GPL-2.0

//! `smcss` output for a synthetic sock_diag dump, end to end: netlink
//! datagrams laid out by hand per `linux/netlink.h` and `linux/smc_diag.h`
//! (not with the crate's own encoders), fed through the dump protocol, the
//! decoder and the row formatter, compared with tables in
//! `tests/expected/` that were derived from upstream smc-tools' `smcss.c`
//! (its `printf` formats) for the same sockets.

use smc_tools::netlink::{DumpState, Message};
use smc_tools::smcss::{self, Action, Options};

const SOCK_DIAG_BY_FAMILY: u16 = 20;
const NLMSG_DONE: u16 = 3;
const NLM_F_MULTI: u16 = 2;
const SEQ: u32 = smcss::MAGIC_SEQ;

/// One socket of the synthetic dump.
struct Sock {
    state: u8,
    mode: u8,
    sport: u16,
    dport: u16,
    src: [u8; 16],
    dst: [u8; 16],
    ifindex: u32,
    uid: u32,
    inode: u64,
    /// Attributes: (type, payload).
    attrs: Vec<(u16, Vec<u8>)>,
}

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

fn shutdown(mask: u8) -> (u16, Vec<u8>) {
    (3, vec![mask])
}

fn fallback(reason: u32, peer: u32) -> (u16, Vec<u8>) {
    let mut p = reason.to_ne_bytes().to_vec();
    p.extend(peer.to_ne_bytes());
    (5, p)
}

/// `struct smc_diag_cursor`: reserved u16, wrap u16, count u32.
fn cursor(p: &mut Vec<u8>, wrap: u16, count: u32) {
    p.extend(0u16.to_ne_bytes());
    p.extend(wrap.to_ne_bytes());
    p.extend(count.to_ne_bytes());
}

/// `struct smc_diag_conninfo`, 76 bytes.
fn conninfo(token: u32) -> (u16, Vec<u8>) {
    let mut p = Vec::new();
    for v in [token, 0x10000, 0x10000, 0x8000] {
        p.extend(v.to_ne_bytes());
    }
    cursor(&mut p, 0, 0x1000); // rx_prod
    cursor(&mut p, 0, 0x0800); // rx_cons
    cursor(&mut p, 1, 0x0040); // tx_prod
    cursor(&mut p, 1, 0x0020); // tx_cons
    p.extend([0x00, 0x00, 0x40, 0x00]); // rx_prod, rx_conn_state, tx_prod, tx_conn_state flags
    cursor(&mut p, 1, 0x0040); // tx_prep
    cursor(&mut p, 1, 0x0040); // tx_sent
    cursor(&mut p, 1, 0x0030); // tx_fin
    assert_eq!(p.len(), 76);
    (1, p)
}

/// `struct smc_diag_lgrinfo`, 147 bytes.
fn lgrinfo(role: u8) -> (u16, Vec<u8>) {
    let mut p = vec![0u8; 147];
    p[0] = 1; // link_id
    p[1..5].copy_from_slice(b"rxe0"); // ibname[64]
    p[65] = 1; // ibport
    let gid = b"fe80:0000:0000:0000:5054:00ff:fe12:3401";
    let peer = b"fe80:0000:0000:0000:5054:00ff:fe12:3402";
    p[66..66 + gid.len()].copy_from_slice(gid); // gid[40]
    p[106..106 + peer.len()].copy_from_slice(peer); // peer_gid[40]
    p[146] = role;
    (2, p)
}

/// `struct smcd_diag_dmbinfo` as the 6.12 kernel sends it, 56 bytes.
fn dmbinfo() -> (u16, Vec<u8>) {
    let mut p = Vec::new();
    p.extend(0x0000_0102u32.to_ne_bytes()); // linkid
    p.extend([0; 4]); // padding before the aligned u64s
    for v in [
        0x1111_2222_3333_4444u64,
        0x5555_6666_7777_8888,
        0xfeed,
        0xbeef,
        0,
        0,
    ] {
        p.extend(v.to_ne_bytes()); // peer_gid, my_gid, token, peer_token, *_ext
    }
    (4, p)
}

/// One `SOCK_DIAG_BY_FAMILY` message: nlmsghdr, smc_diag_msg, attributes.
fn message(s: &Sock) -> Vec<u8> {
    let mut m = vec![0u8; 16];
    m.extend([43, s.state, s.mode, 0]); // family, state, mode, shutdown
    m.extend(s.sport.to_be_bytes());
    m.extend(s.dport.to_be_bytes());
    m.extend(s.src);
    m.extend(s.dst);
    m.extend(s.ifindex.to_ne_bytes());
    m.extend([0xc0, 0x0c, 0, 0, 0, 0, 0, 0]); // idiag_cookie
    m.extend(s.uid.to_ne_bytes());
    m.extend(s.inode.to_ne_bytes()); // offset 56 from the payload
    assert_eq!(m.len(), 16 + 64);
    for (kind, payload) in &s.attrs {
        let len = 4 + payload.len();
        m.extend((len as u16).to_ne_bytes());
        m.extend(kind.to_ne_bytes());
        m.extend(payload);
        while !m.len().is_multiple_of(4) {
            m.push(0);
        }
    }
    header(&mut m, SOCK_DIAG_BY_FAMILY);
    m
}

fn header(m: &mut [u8], kind: u16) {
    let len = m.len() as u32;
    m[0..4].copy_from_slice(&len.to_ne_bytes());
    m[4..6].copy_from_slice(&kind.to_ne_bytes());
    m[6..8].copy_from_slice(&NLM_F_MULTI.to_ne_bytes());
    m[8..12].copy_from_slice(&SEQ.to_ne_bytes());
    m[12..16].copy_from_slice(&0u32.to_ne_bytes());
}

fn done() -> Vec<u8> {
    let mut m = vec![0u8; 20];
    header(&mut m, NLMSG_DONE);
    m
}

/// The synthetic dump: every state class and mode smcss tells apart.
fn sockets() -> Vec<Sock> {
    let base = |state, mode, inode| Sock {
        state,
        mode,
        sport: 0,
        dport: 0,
        src: [0; 16],
        dst: [0; 16],
        ifindex: 0,
        uid: 0,
        inode,
        attrs: vec![shutdown(0), fallback(0, 0)],
    };
    vec![
        // 1. IPv4 listener on any address.
        Sock {
            sport: 12345,
            ..base(10, 0, 10001)
        },
        // 2. IPv6 listener on "::": all-zero, so upstream shows 0.0.0.0.
        Sock {
            sport: 12346,
            ..base(10, 0, 10002)
        },
        // 3. A socket not yet connected.
        Sock {
            uid: 1000,
            ..base(2, 0, 10003)
        },
        // 4. SMC-R connection, with connection and link details.
        Sock {
            sport: 12345,
            dport: 40000,
            src: v4([10, 10, 0, 1]),
            dst: v4([10, 10, 0, 2]),
            attrs: vec![
                shutdown(0),
                fallback(0, 0),
                conninfo(0x0000_1a2b),
                lgrinfo(1),
            ],
            ..base(1, 0, 10004)
        },
        // 5. Fell back: the peer has no SMC.
        Sock {
            sport: 12345,
            dport: 40001,
            src: v4([10, 10, 0, 1]),
            dst: v4([10, 10, 0, 3]),
            uid: 1000,
            attrs: vec![shutdown(0), fallback(0x0301_0000, 0)],
            ..base(1, 1, 10005)
        },
        // 6. Fell back over IPv6, bound to interface 2, the peer declined.
        Sock {
            sport: 12346,
            dport: 51000,
            src: v6("fe80::5054:ff:fe12:3401"),
            dst: v6("fe80::5054:ff:fe12:3402"),
            ifindex: 2,
            uid: 1000,
            attrs: vec![shutdown(0), fallback(0x0500_0000, 0x0303_0002)],
            ..base(1, 1, 10006)
        },
        // 7. SMC-D, closing, receive side shut down, with its DMB.
        Sock {
            sport: 2000,
            dport: 3000,
            src: v4([192, 168, 100, 1]),
            dst: v4([192, 168, 100, 2]),
            attrs: vec![
                shutdown(1),
                fallback(0, 0),
                conninfo(0x0000_00ff),
                dmbinfo(),
            ],
            ..base(22, 2, 10007)
        },
        // 8. Closed after a fallback.
        Sock {
            sport: 12345,
            dport: 40002,
            src: v4([10, 10, 0, 1]),
            dst: v4([10, 10, 0, 4]),
            attrs: vec![shutdown(3), fallback(0x0301_0000, 0)],
            ..base(7, 1, 10008)
        },
        // 9. SMC-R, both directions shut down, uid 65534.
        Sock {
            sport: 40003,
            dport: 12345,
            src: v4([10, 10, 0, 2]),
            dst: v4([10, 10, 0, 1]),
            uid: 65534,
            attrs: vec![
                shutdown(3),
                fallback(0, 0),
                conninfo(0x0000_1a2c),
                lgrinfo(0),
            ],
            ..base(21, 0, 10009)
        },
    ]
}

/// Runs the dump (two datagrams, as a kernel may split it) and formats it
/// as the `smcss` binary does.
fn run(args: &[&str]) -> String {
    let Action::Run(opts) = smcss::parse_args(args) else {
        panic!("{args:?} is a valid command line");
    };
    let socks = sockets();
    let mut d1 = Vec::new();
    for s in &socks[..5] {
        d1.extend(message(s));
    }
    let mut d2 = Vec::new();
    for s in &socks[5..] {
        d2.extend(message(s));
    }
    d2.extend(done());

    let mut out = smcss::header(&opts) + "\n";
    let mut on_message = |m: &Message<'_>| {
        let info = smc_tools::smc_diag::SockInfo::parse(m.payload).expect("full smc_diag_msg");
        assert_eq!(info.deficit, None);
        if let Some(r) = smcss::row(&opts, &info) {
            out.push_str(&r);
            out.push('\n');
        }
    };
    let mut st = DumpState::new(SEQ, &mut on_message, |w| panic!("warning {w}"));
    assert!(!st.datagram(&d1).expect("first datagram"));
    assert!(st.datagram(&d2).expect("second datagram"));
    out
}

fn check(args: &[&str], expected: &str) {
    let got = run(args);
    if got != expected {
        panic!("smcss {args:?}\n--- expected\n{expected}--- got\n{got}---");
    }
}

#[test]
fn default_shows_connected_and_closing() {
    check(&[], include_str!("expected/smcss.txt"));
}

#[test]
fn all() {
    check(&["-a"], include_str!("expected/smcss-a.txt"));
}

#[test]
fn listening() {
    check(&["-l"], include_str!("expected/smcss-l.txt"));
}

#[test]
fn wide() {
    check(&["--all", "--wide"], include_str!("expected/smcss-aW.txt"));
}

#[test]
fn debug() {
    check(&["-d"], include_str!("expected/smcss-d.txt"));
}

#[test]
fn smcr() {
    check(&["-R", "-d"], include_str!("expected/smcss-Rd.txt"));
}

#[test]
fn smcd() {
    check(&["-aD"], include_str!("expected/smcss-aD.txt"));
}

/// The table helper gives the same text as the message path.
#[test]
fn table_helper_agrees() {
    let opts = Options {
        all: true,
        ..Options::default()
    };
    let msgs: Vec<Vec<u8>> = sockets().iter().map(message).collect();
    let table = smcss::table(&opts, msgs.iter().map(|m| &m[16..]));
    assert_eq!(table, include_str!("expected/smcss-a.txt"));
}

/// Short and odd replies: no panic, no row from a truncated message, rows
/// still printed when attributes are short or broken.
#[test]
fn hostile_replies() {
    let opts = Options {
        all: true,
        debug: true,
        smcr: true,
        ..Options::default()
    };
    let mut s = sockets().remove(3);
    // Short attributes of every kind, then a broken one.
    s.attrs = vec![
        (3, vec![]),
        (5, vec![1, 2, 3]),
        (1, vec![0; 75]),
        (2, vec![0; 146]),
        (4, vec![0; 39]),
    ];
    let mut m = message(&s);
    m.extend([0xff, 0x00, 0x03, 0x00]); // rta_len 255 past the end
    header(&mut m, SOCK_DIAG_BY_FAMILY);
    let info = smc_tools::smc_diag::SockInfo::parse(&m[16..]).expect("fixed part present");
    assert_eq!(info.deficit, Some((4, 255)));
    let r = smcss::row(&opts, &info).expect("ACTIVE SMC-R row");
    assert!(r.ends_with("0000 SMCR "), "{r:?}");

    // Shorter than struct smc_diag_msg: no socket at all.
    for cut in 0..64 {
        assert!(smc_tools::smc_diag::SockInfo::parse(&m[16..16 + cut]).is_none());
    }
    // Every prefix and every single-byte corruption of a datagram.
    let mut d = message(&sockets()[3]);
    d.extend(done());
    for cut in 0..d.len() {
        let mut st = DumpState::new(
            SEQ,
            |m: &Message<'_>| {
                if let Some(i) = smc_tools::smc_diag::SockInfo::parse(m.payload) {
                    let _ = smcss::row(&opts, &i);
                }
            },
            |_| {},
        );
        let _ = st.datagram(&d[..cut]);
    }
    for at in 0..d.len() {
        for v in [0u8, 1, 0x7f, 0xff] {
            let mut c = d.clone();
            c[at] = v;
            let mut st = DumpState::new(
                SEQ,
                |m: &Message<'_>| {
                    if let Some(i) = smc_tools::smc_diag::SockInfo::parse(m.payload) {
                        let _ = smcss::row(&opts, &i);
                    }
                },
                |_| {},
            );
            let _ = st.datagram(&c);
        }
    }
}
