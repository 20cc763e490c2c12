// SPDX-License-Identifier: GPL-2.0

//! `smc_pnet`: the PNET table, as upstream smc-tools' `smc_pnet(8)`, over
//! the `SMC_PNETID` generic netlink family.
//!
//! * `smc_pnet [-s] [<pnetid>]`: the entries (of one PNETID), one line
//!   each: PNETID, interface, RDMA device, port (`n/a` and 255 where an
//!   entry has none), as the kernel gives them;
//! * `smc_pnet -a <pnetid> -I <interface> | -D <device> [-P <port>]`;
//! * `smc_pnet -d <pnetid>`; `smc_pnet -f`.
//!
//! Options as upstream's `getopt_long("I:D:P:fasdhvV")`: `-a`, `-d`, `-s`
//! take no argument, the PNETID is the one operand. Errors of the kernel
//! are libnl's words after the program name (`nl_perror`), exit 1.

use crate::genl::{self, c_str, find_attr, Family, GenlMsg, NlError, ResolveError};
use crate::getopt::{self, Event, Opt};
use crate::netlink::{DumpError, Socket, SocketError, Transport, NETLINK_GENERIC};
use crate::smcr::Output;
use std::io::{self, Write};

/// `SMCR_GENL_FAMILY_NAME`.
pub const FAMILY_NAME: &str = "SMC_PNETID";
/// `SMCR_GENL_FAMILY_VERSION`.
pub const FAMILY_VERSION: u8 = 1;

/// `SMC_PNETID_GET`.
pub const SMC_PNETID_GET: u8 = 1;
/// `SMC_PNETID_ADD`.
pub const SMC_PNETID_ADD: u8 = 2;
/// `SMC_PNETID_DEL`.
pub const SMC_PNETID_DEL: u8 = 3;
/// `SMC_PNETID_FLUSH`.
pub const SMC_PNETID_FLUSH: u8 = 4;

/// `SMC_PNETID_NAME`.
pub const SMC_PNETID_NAME: u16 = 1;
/// `SMC_PNETID_ETHNAME`.
pub const SMC_PNETID_ETHNAME: u16 = 2;
/// `SMC_PNETID_IBNAME`.
pub const SMC_PNETID_IBNAME: u16 = 3;
/// `SMC_PNETID_IBPORT`.
pub const SMC_PNETID_IBPORT: u16 = 4;

const OPTS: &[Opt] = &[
    Opt::with_arg('I', "interface"),
    Opt::with_arg('D', "ibdevice"),
    Opt::with_arg('P', "ibport"),
    Opt::flag('f', "flush"),
    Opt::flag('a', "add"),
    Opt::flag('s', "show"),
    Opt::flag('d', "delete"),
    Opt {
        short: 'v',
        short_ok: true,
        long: None,
        has_arg: getopt::HasArg::No,
    },
    Opt::flag('V', "version"),
    Opt::flag('h', "help"),
];

/// The usage text (upstream's, with the program's name).
pub fn usage(prog: &str) -> String {
    format!(
        "Usage: {prog} [ OPTIONS ] [pnetid]\n\
         \t-h, --help            this message\n\
         \t-V, --version         show version information\n\
         \t-a, --add             add a pnetid entry, requires interface or ib/ism device\n\
         \t-d, --delete          delete a pnetid entry\n\
         \t-s, --show            show a pnetid entry\n\
         \t-f, --flush           flush the complete pnet table\n\
         \t-I, --interface       Ethernet interface name of a pnetid entry\n\
         \t-D, --ibdevice        Infiniband device name of a pnetid entry\n\
         \t-P, --ibport          Infiniband device port (default: 1)\n\
         \t\n\
         \tno OPTIONS            show complete pnet table\n"
    )
}

/// One request, as the command line makes it.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Request {
    /// The command (`SMC_PNETID_*`).
    pub cmd: u8,
    /// The PNETID operand.
    pub pnetid: Option<String>,
    /// `-I`.
    pub ethname: Option<String>,
    /// `-D`.
    pub ibname: Option<String>,
    /// `-P` (0: not given).
    pub ibport: u8,
}

/// What the command line asks for.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Parsed {
    /// Send this request; the warnings first (on stderr).
    Run(Request, Vec<String>),
    /// Print this on stdout, exit 0 (`-h`, `-v`).
    Exit0(String),
    /// Print this (and the usage) on stderr, exit 1.
    Usage(String),
}

/// `strtoul(s, &end, 0)` with nothing left over, as upstream's `convert`
/// reads it (a negative number wraps to a huge one: `None` here as any
/// value beyond `u64`).
fn c_port(s: &str) -> Option<u64> {
    if s.is_empty() {
        return Some(0);
    }
    let t = s.trim_start_matches(|c: char| c.is_ascii_whitespace());
    let (neg, t) = match t.as_bytes().first() {
        Some(b'-') => (true, &t[1..]),
        Some(b'+') => (false, &t[1..]),
        _ => (false, t),
    };
    let (digits, radix) = match t.strip_prefix("0x").or_else(|| t.strip_prefix("0X")) {
        Some(h) if !h.is_empty() => (h, 16),
        _ if t.starts_with('0') => (t, 8),
        _ => (t, 10),
    };
    if digits.is_empty() || !digits.chars().all(|c| c.is_digit(radix)) {
        return None;
    }
    let v = u64::from_str_radix(digits, radix).ok()?;
    if neg && v != 0 {
        return None;
    }
    Some(v)
}

/// Reads the command line (without the program name) as upstream's `main`.
pub fn parse(prog: &str, args: &[String]) -> Parsed {
    let mut req = Request::default();
    let mut operands = Vec::new();
    let set = |req: &mut Request, cmd: u8| {
        if req.cmd != 0 {
            return false;
        }
        req.cmd = cmd;
        true
    };
    for ev in getopt::parse(args, OPTS) {
        match ev {
            Event::Opt(c, arg) => {
                let ok = match c {
                    'f' => set(&mut req, SMC_PNETID_FLUSH),
                    's' => set(&mut req, SMC_PNETID_GET),
                    'd' => set(&mut req, SMC_PNETID_DEL),
                    'a' => set(&mut req, SMC_PNETID_ADD),
                    'I' => {
                        req.ethname = arg;
                        true
                    }
                    'D' => {
                        req.ibname = arg;
                        true
                    }
                    'P' => {
                        let a = arg.unwrap_or_default();
                        match c_port(&a).filter(|p| *p <= 2) {
                            Some(p) => req.ibport = p as u8,
                            None => return Parsed::Usage(format!("{prog} invalid ib port:{a}\n")),
                        }
                        true
                    }
                    'v' | 'V' => {
                        return Parsed::Exit0(format!(
                            "smc_pnet utility, smc_rs-tools-{}\n",
                            crate::VERSION
                        ))
                    }
                    'h' => return Parsed::Exit0(usage(prog)),
                    _ => false,
                };
                if !ok {
                    return Parsed::Usage(String::new());
                }
            }
            Event::Operand(o) => operands.push(o),
            Event::Error(e) => return Parsed::Usage(format!("{prog}: {e}\n")),
        }
    }
    if operands.len() > 1 {
        return Parsed::Usage(format!("{prog} too many parameters\n"));
    }
    req.pnetid = operands.first().cloned();
    if req.cmd == 0 {
        if !operands.is_empty() {
            return Parsed::Usage(format!("{prog}: parameters without option\n"));
        }
        req.cmd = SMC_PNETID_GET;
    }
    if req.cmd == SMC_PNETID_FLUSH && !operands.is_empty() {
        return Parsed::Usage(format!("{prog}: -f takes no parameters\n"));
    }
    let mut warnings = Vec::new();
    if req.cmd == SMC_PNETID_ADD {
        if req.ethname.is_none() && req.ibname.is_none() {
            return Parsed::Usage(format!("{prog}: interface or device missing\n"));
        }
        if req.ibport == 0 {
            req.ibport = 1;
        }
    }
    if req.cmd == SMC_PNETID_GET || req.cmd == SMC_PNETID_DEL {
        if let Some(e) = req.ethname.take() {
            warnings.push(format!("{prog}: interface {e} ignored"));
        }
        if let Some(d) = req.ibname.take() {
            warnings.push(format!("{prog}: ibdevice {d} ignored"));
        }
        if req.ibport != 0 {
            warnings.push(format!("{prog}: ibport {} ignored", req.ibport));
            req.ibport = 0;
        }
    }
    Parsed::Run(req, warnings)
}

impl Request {
    /// Whether it goes as a dump (`GET`/`DEL` without a PNETID).
    pub fn is_dump(&self) -> bool {
        (self.cmd == SMC_PNETID_GET || self.cmd == SMC_PNETID_DEL) && self.pnetid.is_none()
    }

    /// Its attributes, in upstream's order: interface, device, port, PNETID.
    pub fn attrs(&self) -> Vec<u8> {
        let mut a = Vec::new();
        if self.cmd == SMC_PNETID_ADD {
            if let Some(e) = &self.ethname {
                a.extend(genl::string_attr(SMC_PNETID_ETHNAME, e.as_bytes()));
            }
            if let Some(d) = &self.ibname {
                a.extend(genl::string_attr(SMC_PNETID_IBNAME, d.as_bytes()));
                a.extend(genl::attr(SMC_PNETID_IBPORT, &[self.ibport]));
            }
        }
        if self.cmd != SMC_PNETID_FLUSH {
            if let Some(p) = &self.pnetid {
                a.extend(genl::string_attr(SMC_PNETID_NAME, p.as_bytes()));
            }
        }
        a
    }
}

/// One line of the listing (`cb_handler`): `None` for a message without
/// the four attributes (upstream: "invalid data returned", and it stops).
pub fn entry_line(payload: &[u8]) -> Option<String> {
    let msg = GenlMsg::parse(payload)?;
    let s = |k| find_attr(msg.attrs, k).map(|v| crate::printable(c_str(v)));
    let port = *find_attr(msg.attrs, SMC_PNETID_IBPORT)?.first()?;
    Some(format!(
        "{} {} {} {}\n",
        s(SMC_PNETID_NAME)?,
        s(SMC_PNETID_ETHNAME)?,
        s(SMC_PNETID_IBNAME)?,
        port
    ))
}

/// Runs `smc_pnet` with `args` over the socket `open` gives; the exit status.
pub fn run<T, O>(
    prog: &str,
    args: &[String],
    open: O,
    out: &mut dyn Write,
    err: &mut dyn Write,
) -> i32
where
    T: Transport,
    O: FnOnce() -> Result<T, SocketError>,
{
    let mut o = Output::new(out, err);
    let code = run_with(prog, args, open, &mut o);
    o.finish(code)
}

fn run_with<T, O>(prog: &str, args: &[String], open: O, o: &mut Output<'_>) -> i32
where
    T: Transport,
    O: FnOnce() -> Result<T, SocketError>,
{
    let req = match parse(prog, args) {
        Parsed::Run(req, warnings) => {
            for w in warnings {
                o.err_line(&w);
            }
            req
        }
        Parsed::Exit0(text) => {
            o.out(&text);
            return 0;
        }
        Parsed::Usage(msg) => {
            o.err(msg.as_bytes());
            o.err(usage(prog).as_bytes());
            return crate::EXIT_FAILURE;
        }
    };
    let sock = match open() {
        Ok(s) => s,
        Err(e) => {
            o.err_line(&format!("{prog}: {e}"));
            return crate::EXIT_FAILURE;
        }
    };
    let mut warn_text = Vec::new();
    let mut warn = |w: crate::netlink::DumpWarning| warn_text.push(w.to_string());
    let mut family = match Family::resolve(&sock, FAMILY_NAME, FAMILY_VERSION, &mut warn) {
        Ok(f) => f,
        Err(ResolveError::NotFound) => {
            o.err_line(&format!("{prog}: SMC-R module not loaded"));
            return crate::EXIT_FAILURE;
        }
        Err(ResolveError::Failed(e)) => {
            o.err_line(&failure(prog, &e));
            return crate::EXIT_FAILURE;
        }
    };
    let answer = if req.is_dump() {
        family.dump(req.cmd, &mut warn)
    } else {
        family.request(req.cmd, &req.attrs(), &mut warn)
    };
    for w in warn_text {
        o.err_line(&w);
    }
    for m in &answer.messages {
        match entry_line(m) {
            Some(l) => o.out(&l),
            None => {
                o.err_line(&format!("{prog}: invalid data returned"));
                break;
            }
        }
    }
    match answer.result {
        Ok(()) => 0,
        Err(e) => {
            o.err_line(&failure(prog, &e));
            crate::EXIT_FAILURE
        }
    }
}

/// `nl_perror(rc, progname)`: a kernel errno in libnl's words.
fn failure(prog: &str, e: &DumpError) -> String {
    match e {
        DumpError::Kernel(errno) => format!("{prog}: {}", NlError::from_errno(*errno).text()),
        other => format!("{prog}: {other}"),
    }
}

/// Runs `smc_pnet` on this process; the exit status.
pub fn main() -> i32 {
    crate::default_sigpipe();
    let mut argv = std::env::args();
    let prog = crate::progname(argv.next().as_deref(), "smc_pnet");
    let args: Vec<String> = argv.collect();
    let stdout = io::stdout();
    let mut out = stdout.lock();
    let stderr = io::stderr();
    let mut err = stderr.lock();
    run(
        &prog,
        &args,
        || Socket::open(NETLINK_GENERIC),
        &mut out,
        &mut err,
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn p(v: &[&str]) -> Parsed {
        let a: Vec<String> = v.iter().map(|s| s.to_string()).collect();
        parse("smc_pnet", &a)
    }

    #[test]
    fn add_takes_the_operand_as_pnetid() {
        let Parsed::Run(r, w) = p(&["-a", "net1", "-I", "eth0"]) else {
            panic!()
        };
        assert!(w.is_empty());
        assert_eq!(r.cmd, SMC_PNETID_ADD);
        assert_eq!(r.pnetid.as_deref(), Some("net1"));
        assert_eq!(r.ethname.as_deref(), Some("eth0"));
        assert_eq!(r.ibport, 1);
        let Parsed::Run(r, _) = p(&["-D", "rxe0", "-P", "2", "-a", "X"]) else {
            panic!()
        };
        assert_eq!((r.ibname.as_deref(), r.ibport), (Some("rxe0"), 2));
    }

    #[test]
    fn upstream_errors() {
        assert_eq!(
            p(&["-a", "X"]),
            Parsed::Usage("smc_pnet: interface or device missing\n".into())
        );
        assert_eq!(
            p(&["-a", "X", "-D", "d", "-P", "3"]),
            Parsed::Usage("smc_pnet invalid ib port:3\n".into())
        );
        assert_eq!(
            p(&["X"]),
            Parsed::Usage("smc_pnet: parameters without option\n".into())
        );
        assert_eq!(
            p(&["-f", "X"]),
            Parsed::Usage("smc_pnet: -f takes no parameters\n".into())
        );
        assert_eq!(
            p(&["-s", "X", "Y"]),
            Parsed::Usage("smc_pnet too many parameters\n".into())
        );
        assert_eq!(p(&["-s", "-d"]), Parsed::Usage(String::new()));
    }

    #[test]
    fn show_ignores_devices() {
        let Parsed::Run(r, w) = p(&["-s", "-I", "eth0", "-P", "1"]) else {
            panic!()
        };
        assert!(r.is_dump());
        assert_eq!(
            w,
            [
                "smc_pnet: interface eth0 ignored",
                "smc_pnet: ibport 1 ignored"
            ]
        );
    }

    #[test]
    fn port_numbers_as_strtoul() {
        assert_eq!(c_port("0"), Some(0));
        assert_eq!(c_port("02"), Some(2));
        assert_eq!(c_port("0x2"), Some(2));
        assert_eq!(c_port("2x"), None);
        assert_eq!(c_port(""), Some(0));
        assert_eq!(c_port("-1"), None);
    }
}
