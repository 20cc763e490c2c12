// SPDX-License-Identifier: GPL-2.0

//! `smcd device`, `smcd linkgroup` and `smcd seid` end to end over a
//! scripted kernel: one that answers as smc.ko and smc_rs do on x86 (no
//! ISM device: empty device and link group dumps, a system EID message
//! without attributes, `EOPNOTSUPP` to enable or disable it), one with an
//! ISM device as smc.ko on s390 (`smc_nl_handle_smcd_dev()`,
//! `smc_nl_fill_smcd_lgr()`, `smc_nl_dump_seid()`), and one without the
//! system EID commands at all.

mod common;

use smc_tools::genl::{self, GENL_ID_CTRL};
use smc_tools::netlink::{
    self, Received, Transport, NLMSG_DONE, NLM_F_ACK, NLM_F_DUMP, NLM_F_REQUEST,
};
use smc_tools::scripted::Script;
use smc_tools::smcr::Flavor;
use std::cell::RefCell;
use std::io;
use std::path::PathBuf;

const FAMILY: u16 = 0x22;
const NLM_F_MULTI: u16 = 2;
const SEID: &[u8] = b"IBM-SYSZ-ISMSEID00000000";

#[derive(Clone, Copy, PartialEq, Eq)]
enum Machine {
    /// smc.ko or smc_rs on x86.
    X86,
    /// smc.ko on s390 with one ISM device and one link group.
    S390,
    /// A kernel without the system EID commands.
    NoSeid,
}

struct Kernel {
    machine: Machine,
    /// The system EID's state (s390).
    seid_enabled: RefCell<bool>,
    /// User EIDs defined (s390: the system EID can be disabled only then).
    ueids: usize,
    /// The generic netlink commands sent to the SMC family.
    cmds: RefCell<Vec<u8>>,
    /// The requests and the answers waiting.
    script: Script,
}

impl Kernel {
    fn new(machine: Machine) -> Kernel {
        Kernel {
            machine,
            seid_enabled: RefCell::new(true),
            ueids: 0,
            cmds: RefCell::new(Vec::new()),
            script: Script::new(),
        }
    }

    fn answer(&self, req: &[u8]) -> Vec<Vec<u8>> {
        let (m, g) = common::request_of(req);
        let seq = m.seq;
        let err = |errno: i32| common::error_answer(req, seq, errno);
        if m.kind == GENL_ID_CTRL {
            return common::family_answer(req, seq, FAMILY, None);
        }
        assert_eq!(m.kind, FAMILY);
        self.cmds.borrow_mut().push(g.cmd);
        let dump = m.flags == NLM_F_REQUEST | NLM_F_DUMP;
        if !dump {
            assert_eq!(m.flags, NLM_F_REQUEST | NLM_F_ACK);
        }
        let done = netlink::request(NLMSG_DONE, NLM_F_MULTI, seq, &0i32.to_ne_bytes());
        let reply = |cmd: u8, nest: u16, body: &[u8]| {
            let mut p = vec![cmd, 1, 0, 0];
            if nest != 0 {
                p.extend(genl::attr(nest | 0x8000, body));
            } else {
                p.extend_from_slice(body);
            }
            netlink::request(FAMILY, NLM_F_MULTI, seq, &p)
        };
        let s390 = self.machine == Machine::S390;
        match (g.cmd, dump) {
            (4, true) if s390 => {
                let mut n = genl::attr(1, &0x1100u32.to_ne_bytes());
                n.extend(genl::attr(2, &7u64.to_ne_bytes()));
                n.extend(genl::attr(10, &0u64.to_ne_bytes()));
                n.extend(genl::attr(3, &8u64.to_ne_bytes()));
                n.extend(genl::attr(11, &0u64.to_ne_bytes()));
                n.extend(genl::attr(4, &[0]));
                n.extend(genl::attr(5, &2u32.to_ne_bytes()));
                n.extend(genl::attr(7, &0x7c0u32.to_ne_bytes()));
                n.extend(genl::string_attr(6, b"NETA            "));
                vec![reply(4, 4, &n), done]
            }
            (5, true) if s390 => {
                let mut port = genl::attr(1, &[0]);
                port.extend(genl::string_attr(2, b"NETA            "));
                let mut n = genl::attr(1, &1u32.to_ne_bytes());
                n.extend(genl::attr(2, &[1]));
                n.extend(genl::attr(3, &0x1234u32.to_ne_bytes()));
                n.extend(genl::attr(4, &0x7c0u16.to_ne_bytes()));
                n.extend(genl::attr(5, &0x1014u16.to_ne_bytes()));
                n.extend(genl::attr(6, &0x04edu16.to_ne_bytes()));
                n.extend(genl::string_attr(7, b"0000:00:00.0"));
                n.extend(genl::attr(8 | 0x8000, &port));
                vec![reply(5, 5, &n), done]
            }
            (4 | 5, true) => vec![done],
            (13..=15, _) if self.machine == Machine::NoSeid => err(libc::EOPNOTSUPP),
            (13, true) if s390 => {
                let mut a = genl::string_attr(1, SEID);
                a.extend(genl::attr(2, &[u8::from(*self.seid_enabled.borrow())]));
                vec![reply(13, 0, &a), done]
            }
            (13, true) => vec![reply(13, 0, &[]), done],
            (14, false) if s390 => {
                *self.seid_enabled.borrow_mut() = true;
                err(0)
            }
            (15, false) if s390 && self.ueids == 0 => err(libc::ENOENT),
            (15, false) if s390 => {
                *self.seid_enabled.borrow_mut() = false;
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

/// Exit status, stdout, stderr of `smcd ARGS`.
fn smcd(k: &Kernel, args: &[&str]) -> (i32, String, String) {
    let cache = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("smcd-cli-unused-cache");
    common::run_smc(Flavor::Smcd, k, args, &cache)
}

fn ok(out: &str) -> (i32, String, String) {
    (0, out.to_string(), String::new())
}

const SEID_USAGE: &str =
    "Usage: smcd seid [show]\n       smcd seid enable\n       smcd seid disable\n";

#[test]
fn x86_without_ism_devices() {
    let k = Kernel::new(Machine::X86);
    // Empty dumps: not even the header.
    for args in [
        &["device"][..],
        &["d", "s", "a"],
        &["-d", "device"],
        &["linkgroup"],
        &["l", "all"],
        &["linkgroup", "link-show"],
        &["linkgroup", "1100"],
    ] {
        assert_eq!(smcd(&k, args), ok(""), "{args:?}");
    }
    assert_eq!(*k.cmds.borrow(), [5, 5, 5, 4, 4, 4, 4]);
    // A system EID message without attributes.
    for args in [&["seid"][..], &["seid", "show"], &["se", "s"]] {
        assert_eq!(smcd(&k, args), ok("n/a\n"), "{args:?}");
    }
    // Nothing to enable or disable: only the dump is sent.
    k.cmds.borrow_mut().clear();
    for args in [&["seid", "enable"][..], &["seid", "disable"]] {
        assert_eq!(
            smcd(&k, args),
            (
                255,
                "Error: System EID not available\n".to_string(),
                String::new()
            )
        );
    }
    assert_eq!(*k.cmds.borrow(), [13, 13]);
}

#[test]
fn usage_of_the_smcd_objects() {
    let k = Kernel::new(Machine::X86);
    for (args, usage) in [
        (
            &["device", "netdev", "eth0"][..],
            "Usage: smcd device [show] [all]\n",
        ),
        (
            &["device", "ibdev", "rxe0"],
            "Usage: smcd device [show] [all]\n",
        ),
        (&["device", "help"], "Usage: smcd device [show] [all]\n"),
        (
            &["linkgroup", "all", "ibdev"],
            "Usage: smcd linkgroup [show] [all | LG-ID]\n",
        ),
        (&["seid", "bogus"], SEID_USAGE),
        (&["seid", "enable", "disable"], SEID_USAGE),
        (&["seid", "show", "x"], SEID_USAGE),
        (&["seid", "help"], SEID_USAGE),
    ] {
        assert_eq!(
            smcd(&k, args),
            (255, String::new(), usage.to_string()),
            "{args:?}"
        );
    }
    assert!(k.cmds.borrow().is_empty());
}

#[test]
fn s390_with_an_ism_device() {
    let mut k = Kernel::new(Machine::S390);
    assert_eq!(
        smcd(&k, &["device"]),
        ok("FID  Type  PCI-ID        PCHID  InUse  #LGs  PNET-ID  \n\
            1234 ISM   0000:00:00.0  07c0   Yes       1  NETA             \n")
    );
    let lgr = "LG-ID    VLAN  #Conns  PNET-ID \n\
               00001100    0       2  NETA             \n";
    assert_eq!(smcd(&k, &["linkgroup"]), ok(lgr));
    assert_eq!(smcd(&k, &["linkgroup", "1100"]), ok(lgr));
    // The whole id is compared, not masked.
    assert_eq!(
        smcd(&k, &["linkgroup", "11ff"]),
        ok("LG-ID    VLAN  #Conns  PNET-ID \n")
    );
    assert_eq!(
        smcd(&k, &["seid"]),
        ok("IBM-SYSZ-ISMSEID00000000 [enabled]\n")
    );
    assert_eq!(
        smcd(&k, &["seid", "disable"]),
        (
            255,
            String::new(),
            "Error: System EID cannot be disabled because no User EID is defined\n".to_string()
        )
    );
    k.ueids = 1;
    assert_eq!(smcd(&k, &["seid", "d"]), ok(""));
    assert_eq!(
        smcd(&k, &["seid"]),
        ok("IBM-SYSZ-ISMSEID00000000 [disabled]\n")
    );
    assert_eq!(smcd(&k, &["seid", "e"]), ok(""));
    assert_eq!(
        smcd(&k, &["seid"]),
        ok("IBM-SYSZ-ISMSEID00000000 [enabled]\n")
    );
}

#[test]
fn kernel_without_seid_commands() {
    let k = Kernel::new(Machine::NoSeid);
    let unsupported = "Error: operation not supported by kernel\n".to_string();
    assert_eq!(
        smcd(&k, &["seid"]),
        (255, String::new(), unsupported.clone())
    );
    assert_eq!(
        smcd(&k, &["seid", "enable"]),
        (
            255,
            "Error: System EID not available\n".to_string(),
            unsupported
        )
    );
}
