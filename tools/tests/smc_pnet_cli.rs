// SPDX-License-Identifier: GPL-2.0

//! `smc_pnet` end to end over a scripted kernel: the controller's answer
//! and an `SMC_PNETID` family that keeps a PNET table with the rules of
//! upstream's `smc_pnet.c` (one entry per interface and per RDMA device,
//! `EEXIST`, `ENOENT`, `EINVAL`, `EOPNOTSUPP` for a dump of `DEL`) in;
//! exact stdout, stderr, exit codes and request bytes out.

mod common;

use smc_tools::genl::{self, GENL_ID_CTRL};
use smc_tools::netlink::{
    self, Received, SocketError, Transport, NLMSG_DONE, NLM_F_ACK, NLM_F_DUMP, NLM_F_REQUEST,
};
use smc_tools::scripted::Script;
use smc_tools::smc_pnet::run;
use std::cell::RefCell;
use std::io;

const FAMILY: u16 = 0x22;
const NLM_F_MULTI: u16 = 2;

/// An entry: PNETID, interface, device, port.
type Entry = (String, String, String, u8);

struct Kernel {
    loaded: bool,
    table: RefCell<Vec<Entry>>,
    /// The requests and the answers waiting.
    script: Script,
}

fn text(a: Option<&[u8]>) -> Option<String> {
    a.map(|v| String::from_utf8_lossy(genl::c_str(v)).into_owned())
}

impl Kernel {
    fn new() -> Kernel {
        Kernel {
            loaded: true,
            table: RefCell::new(Vec::new()),
            script: Script::new(),
        }
    }

    fn answer(&self, req: &[u8]) -> Vec<Vec<u8>> {
        let (m, g) = common::request_of(req);
        let seq = m.seq;
        let err = |errno: i32| common::error_answer(req, seq, errno);
        if m.kind == GENL_ID_CTRL {
            assert_eq!(
                genl::find_attr(g.attrs, genl::CTRL_ATTR_FAMILY_NAME),
                Some(&b"SMC_PNETID\0"[..])
            );
            if !self.loaded {
                return err(libc::ENOENT);
            }
            return common::family_answer(req, seq, FAMILY, None);
        }
        assert_eq!(m.kind, FAMILY);
        let dump = m.flags & NLM_F_DUMP != 0;
        let done = netlink::request(NLMSG_DONE, NLM_F_MULTI, seq, &0i32.to_ne_bytes());
        let entry_msg = |e: &Entry| {
            let mut p = vec![1, 1, 0, 0];
            p.extend(genl::string_attr(1, e.0.as_bytes()));
            p.extend(genl::string_attr(2, e.1.as_bytes()));
            p.extend(genl::string_attr(3, e.2.as_bytes()));
            p.extend(genl::attr(4, &[e.3]));
            netlink::request(FAMILY, NLM_F_MULTI, seq, &p)
        };
        let name = text(genl::find_attr(g.attrs, 1));
        let mut table = self.table.borrow_mut();
        match (g.cmd, dump) {
            (1, true) => {
                let mut d: Vec<u8> = table.iter().flat_map(entry_msg).collect();
                d.extend(done);
                vec![d]
            }
            (1, false) => {
                let Some(n) = name else {
                    return err(libc::EINVAL);
                };
                let mut d: Vec<u8> = table
                    .iter()
                    .filter(|e| e.0 == n)
                    .flat_map(entry_msg)
                    .collect();
                d.extend(done);
                vec![d, err(0).concat()]
            }
            (2, false) => {
                let Some(n) = name else {
                    return err(libc::EINVAL);
                };
                if n.is_empty() || n.len() > 16 || !n.bytes().all(|b| b.is_ascii_alphanumeric()) {
                    return err(libc::EINVAL);
                }
                let n = n.to_ascii_uppercase();
                let mut added = false;
                if let Some(eth) = text(genl::find_attr(g.attrs, 2)) {
                    if !table.iter().any(|e| e.1 == eth) {
                        table.push((n.clone(), eth, "n/a".into(), 255));
                        added = true;
                    }
                }
                if let Some(ib) = text(genl::find_attr(g.attrs, 3)) {
                    let port = genl::find_attr(g.attrs, 4).map_or(1, |p| p[0]);
                    if !(1..=2).contains(&port) {
                        return err(libc::EINVAL);
                    }
                    if !table.iter().any(|e| e.2 == ib) {
                        table.push((n, "n/a".into(), ib, port));
                        added = true;
                    }
                }
                err(if added { 0 } else { libc::EEXIST })
            }
            (3, true) => err(libc::EOPNOTSUPP),
            (3, false) => {
                let Some(n) = name else {
                    return err(libc::EINVAL);
                };
                let before = table.len();
                table.retain(|e| e.0 != n);
                err(if table.len() < before {
                    0
                } else {
                    libc::ENOENT
                })
            }
            (4, _) => {
                table.clear();
                err(0)
            }
            _ => err(libc::EOPNOTSUPP),
        }
    }
}

impl Transport for &Kernel {
    fn send(&self, msg: &[u8]) -> io::Result<()> {
        self.script.send(msg, self.answer(msg));
        Ok(())
    }

    fn recv(&self, buf: &mut [u8]) -> io::Result<Received> {
        Ok(self.script.recv(buf))
    }
}

fn pnet(k: &Kernel, args: &[&str]) -> (i32, String, String) {
    let args: Vec<String> = args.iter().map(|a| a.to_string()).collect();
    let (mut out, mut err) = (Vec::new(), Vec::new());
    let code = run(
        "smc_pnet",
        &args,
        || Ok::<_, SocketError>(k),
        &mut out,
        &mut err,
    );
    (
        code,
        String::from_utf8(out).unwrap(),
        String::from_utf8(err).unwrap(),
    )
}

#[test]
fn add_show_delete_flush() {
    let k = Kernel::new();
    assert_eq!(
        pnet(&k, &["-a", "net1", "-I", "eth0"]),
        (0, "".into(), "".into())
    );
    assert_eq!(
        pnet(&k, &["-a", "NET2", "-D", "rxe0", "-P", "1"]),
        (0, "".into(), "".into())
    );
    let all = "NET1 eth0 n/a 255\nNET2 n/a rxe0 1\n";
    assert_eq!(pnet(&k, &[]), (0, all.into(), "".into()));
    assert_eq!(pnet(&k, &["-s"]), (0, all.into(), "".into()));
    assert_eq!(
        pnet(&k, &["-s", "NET2"]),
        (0, "NET2 n/a rxe0 1\n".into(), "".into())
    );
    assert_eq!(pnet(&k, &["-d", "NET1"]), (0, "".into(), "".into()));
    assert_eq!(
        pnet(&k, &["-d", "NET1"]),
        (1, "".into(), "smc_pnet: Object not found\n".into())
    );
    assert_eq!(pnet(&k, &["-f"]), (0, "".into(), "".into()));
    assert_eq!(pnet(&k, &[]), (0, "".into(), "".into()));
}

#[test]
fn requests_carry_upstreams_attributes() {
    let k = Kernel::new();
    pnet(&k, &["-a", "n", "-I", "eth0", "-D", "rxe0", "-P", "2"]);
    let sent = k.script.sent.borrow();
    let add = sent.last().unwrap();
    let m = netlink::messages(add).next().unwrap().unwrap();
    assert_eq!(m.flags, NLM_F_REQUEST | NLM_F_ACK);
    let mut want = vec![2u8, 1, 0, 0];
    want.extend(genl::string_attr(2, b"eth0"));
    want.extend(genl::string_attr(3, b"rxe0"));
    want.extend(genl::attr(4, &[2]));
    want.extend(genl::string_attr(1, b"n"));
    assert_eq!(m.payload, &want[..]);
}

#[test]
fn kernel_errors_in_libnl_words() {
    let k = Kernel::new();
    pnet(&k, &["-a", "A", "-I", "eth0"]);
    assert_eq!(
        pnet(&k, &["-a", "B", "-I", "eth0"]),
        (1, "".into(), "smc_pnet: Object exists\n".into())
    );
    assert_eq!(
        pnet(&k, &["-a", "a-b", "-I", "eth1"]),
        (
            1,
            "".into(),
            "smc_pnet: Invalid input data or parameter\n".into()
        )
    );
    assert_eq!(
        pnet(&k, &["-d"]),
        (1, "".into(), "smc_pnet: Operation not supported\n".into())
    );
    let k = Kernel {
        loaded: false,
        ..Kernel::new()
    };
    assert_eq!(
        pnet(&k, &["-s"]),
        (1, "".into(), "smc_pnet: SMC-R module not loaded\n".into())
    );
}

#[test]
fn usage_and_version() {
    let k = Kernel::new();
    let (code, out, err) = pnet(&k, &["-a", "X"]);
    assert_eq!((code, out.as_str()), (1, ""));
    assert!(err.starts_with(
        "smc_pnet: interface or device missing\nUsage: smc_pnet [ OPTIONS ] [pnetid]\n"
    ));
    let (code, out, _) = pnet(&k, &["-h"]);
    assert_eq!(code, 0);
    assert!(out.starts_with("Usage: smc_pnet"));
    let (code, out, _) = pnet(&k, &["-v"]);
    assert_eq!(code, 0);
    assert!(out.starts_with("smc_pnet utility, "));
    assert!(k.script.sent.borrow().is_empty());
}
