// SPDX-License-Identifier: GPL-2.0

//! The socket and dump loop against the running kernel, without AF_SMC:
//! a sock_diag dump of TCP listeners (inet_diag) must list one we open,
//! and an AF_SMC dump must either work or fail the way `smcss` reports as
//! "module not loaded". Skipped where the kernel has no sock_diag.

use smc_tools::netlink::{self, DumpError, Message, Socket, NETLINK_SOCK_DIAG};
use std::net::TcpListener;

const SEQ: u32 = 4711;

fn open() -> Option<Socket> {
    match Socket::open(NETLINK_SOCK_DIAG) {
        Ok(s) => Some(s),
        Err(e) => {
            eprintln!("skipped: {e}");
            None
        }
    }
}

#[test]
fn dumps_tcp_listeners() {
    let Some(sock) = open() else { return };
    let listener = TcpListener::bind("127.0.0.1:0").expect("bind a listener");
    let port = listener.local_addr().expect("its address").port();

    // struct inet_diag_req_v2: family, protocol, ext, pad, states, sockid.
    let mut req = vec![libc::AF_INET as u8, libc::IPPROTO_TCP as u8, 0, 0];
    req.extend((1u32 << 10).to_ne_bytes()); // TCPF_LISTEN
    req.extend([0u8; 48]);
    let msg = netlink::request(20, netlink::NLM_F_REQUEST | netlink::NLM_F_DUMP, SEQ, &req);

    let mut ports = Vec::new();
    let res = netlink::dump(
        &sock,
        &msg,
        SEQ,
        |m: &Message<'_>| {
            if let Some(p) = m.payload.get(4..6) {
                ports.push(u16::from_be_bytes([p[0], p[1]]));
            }
        },
        |_| {},
    );
    match res {
        Ok(()) => assert!(ports.contains(&port), "{port} not in {ports:?}"),
        Err(DumpError::Kernel(libc::ENOENT)) => eprintln!("skipped: no inet_diag"),
        Err(e) => panic!("{e}"),
    }
}

#[test]
fn smc_dump_answers_or_says_why() {
    let Some(sock) = open() else { return };
    let req = smc_tools::smc_diag::dump_request(0, SEQ);
    let mut rows = 0;
    match netlink::dump(&sock, &req, SEQ, |_| rows += 1, |_| {}) {
        Ok(()) => eprintln!("AF_SMC sock_diag answered with {rows} sockets"),
        Err(DumpError::Kernel(libc::ENOENT)) => eprintln!("no AF_SMC sock_diag handler"),
        Err(e) => panic!("{e}"),
    }
}
