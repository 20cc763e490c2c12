// SPDX-License-Identifier: GPL-2.0

//! What the tests over a scripted kernel share: reading a request, the
//! kernel's error and acknowledgement answers, the generic netlink
//! controller's answer, and a run of `smcr`/`smcd` with its outcome.

// Each test program uses a part of this.
#![allow(dead_code)]

use smc_tools::genl::{self, GenlMsg, GENL_ID_CTRL};
use smc_tools::netlink::{self, Message, SocketError, Transport, NLMSG_ERROR, NLMSG_HDRLEN};
use smc_tools::smcr::{run_in, Flavor};
use std::path::Path;

/// The one netlink message of a request and its generic netlink header.
pub fn request_of(req: &[u8]) -> (Message<'_>, GenlMsg<'_>) {
    let m = netlink::messages(req)
        .next()
        .expect("one message")
        .expect("well formed");
    let g = GenlMsg::parse(m.payload).expect("genl header");
    (m, g)
}

/// The kernel's answer `errno` (0: the acknowledgement) to request `req`
/// of sequence number `seq`.
pub fn error_answer(req: &[u8], seq: u32, errno: i32) -> Vec<Vec<u8>> {
    let mut e = (-errno).to_ne_bytes().to_vec();
    e.extend_from_slice(&req[..NLMSG_HDRLEN]);
    vec![netlink::request(NLMSG_ERROR, 0, seq, &e)]
}

/// The controller's answer to request `req` (`seq`) for a family: its
/// name (when `name` is given) and id `family`, then the acknowledgement,
/// in one datagram.
pub fn family_answer(req: &[u8], seq: u32, family: u16, name: Option<&[u8]>) -> Vec<Vec<u8>> {
    let mut p = vec![1, 2, 0, 0];
    if let Some(name) = name {
        p.extend(genl::string_attr(genl::CTRL_ATTR_FAMILY_NAME, name));
    }
    p.extend(genl::attr(genl::CTRL_ATTR_FAMILY_ID, &family.to_ne_bytes()));
    let mut d = netlink::request(GENL_ID_CTRL, 0, seq, &p);
    d.extend(error_answer(req, seq, 0).concat());
    vec![d]
}

/// Exit status, stdout and stderr of `smcr`/`smcd ARGS` (by `flavor`)
/// over `kernel`, with the statistics cache at `cache`.
pub fn run_smc<T: Transport>(
    flavor: Flavor,
    kernel: T,
    args: &[&str],
    cache: &Path,
) -> (i32, String, String) {
    let args: Vec<Vec<u8>> = args.iter().map(|a| a.as_bytes().to_vec()).collect();
    let (mut out, mut err) = (Vec::new(), Vec::new());
    let code = run_in(
        flavor,
        &args,
        || Ok::<_, SocketError>(kernel),
        cache,
        &mut out,
        &mut err,
    );
    (
        code,
        String::from_utf8(out).expect("utf-8"),
        String::from_utf8(err).expect("utf-8"),
    )
}
