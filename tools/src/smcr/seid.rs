// SPDX-License-Identifier: GPL-2.0

//! `smcd seid`: the system EID (upstream `seid.c`).
//!
//! * `show` (the default): the `SMC_NETLINK_DUMP_SEID` dump; a message
//!   with the EID and its state prints `<SEID> [enabled]` or
//!   `<SEID> [disabled]`, one without them (no ISM device able to speak
//!   SMC-Dv2: every machine but s390, for smc_rs and smc.ko alike) prints
//!   `n/a` and ends the listing;
//! * `enable`, `disable`: the same dump first; without a system EID,
//!   `Error: System EID not available` on stdout (as upstream) and nothing
//!   is sent; else `SMC_NETLINK_ENABLE_SEID` or `SMC_NETLINK_DISABLE_SEID`.
//!
//! The words are prefixes (`contains()`): `s`, `e`, `d`, `h`.

use super::common::{
    abbreviates, Output, EXIT_OBJECT_FAILURE, SMC_NETLINK_DISABLE_SEID, SMC_NETLINK_DUMP_SEID,
    SMC_NETLINK_ENABLE_SEID,
};
use crate::genl::{self, c_str, find_attr, Family, GenlMsg, NlError};
use crate::netlink::{DumpError, DumpWarning, Transport};

/// `SMC_NLA_SEID_ENTRY` (string).
pub const SMC_NLA_SEID_ENTRY: u16 = 1;
/// `SMC_NLA_SEID_ENABLED` (u8).
pub const SMC_NLA_SEID_ENABLED: u16 = 2;

/// One `seid` command.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Command {
    /// `show`.
    Show,
    /// `enable`.
    Enable,
    /// `disable`.
    Disable,
}

/// Reads the arguments after `seid` as upstream's `handle_cmd_params()`:
/// nothing is `show`; `enable` and `disable` may follow one another (a
/// word twice counts once), `show` ends the words; anything left over, or
/// other than exactly one command, is the usage (`None`).
pub fn parse_args(args: &[Vec<u8>]) -> Option<Command> {
    if args.is_empty() {
        return Some(Command::Show);
    }
    let (mut enable, mut disable, mut show) = (false, false, false);
    let mut i = 0;
    while let Some(a) = args.get(i) {
        if abbreviates(a, "help") {
            return None;
        } else if abbreviates(a, "enable") {
            enable = true;
        } else if abbreviates(a, "disable") {
            disable = true;
        } else if abbreviates(a, "show") {
            show = true;
            break;
        } else {
            return None;
        }
        i += 1;
    }
    if i + 1 < args.len() {
        return None;
    }
    match (enable, disable, show) {
        (true, false, false) => Some(Command::Enable),
        (false, true, false) => Some(Command::Disable),
        (false, false, true) => Some(Command::Show),
        _ => None,
    }
}

/// The usage text.
pub const USAGE: &str =
    "Usage: smcd seid [show]\n       smcd seid enable\n       smcd seid disable\n";

/// What one message of the dump says.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Seid {
    /// The system EID and whether it is enabled.
    Defined(Vec<u8>, bool),
    /// No system EID (no entry or no state).
    Undefined,
    /// Shorter than a generic netlink header.
    Invalid,
}

/// Reads one message of the `DUMP_SEID` dump.
pub fn parse_reply(payload: &[u8]) -> Seid {
    let Some(msg) = GenlMsg::parse(payload) else {
        return Seid::Invalid;
    };
    match (
        find_attr(msg.attrs, SMC_NLA_SEID_ENTRY),
        find_attr(msg.attrs, SMC_NLA_SEID_ENABLED).and_then(|e| e.first()),
    ) {
        (Some(entry), Some(&on)) => Seid::Defined(c_str(entry).to_vec(), on != 0),
        _ => Seid::Undefined,
    }
}

/// The message for a failed request (`gen_nl_seid_handle()` and, for the
/// dumps, `gen_nl_handle()`): upstream's words for the errors it names,
/// libnl's for the rest.
pub fn error_message(cmd: Option<Command>, e: &DumpError) -> String {
    let DumpError::Kernel(errno) = e else {
        return genl::perror(e);
    };
    match (cmd, NlError::from_errno(*errno)) {
        (_, NlError::OpNotSupp) => "Error: operation not supported by kernel".to_string(),
        (Some(Command::Disable), NlError::ObjNotFound) => {
            "Error: System EID cannot be disabled because no User EID is defined".to_string()
        }
        (_, nle) => nle.perror(),
    }
}

/// Runs the dump, reports its warnings; the messages and the result.
fn dump_seid<T: Transport + ?Sized>(
    family: &mut Family<'_, T>,
    o: &mut Output<'_>,
) -> genl::Answer {
    let mut warnings: Vec<DumpWarning> = Vec::new();
    let answer = family.dump(SMC_NETLINK_DUMP_SEID, &mut |w| warnings.push(w));
    for w in warnings {
        o.err_line(&w.to_string());
    }
    answer
}

/// `seid show`: the exit status.
fn show<T: Transport + ?Sized>(family: &mut Family<'_, T>, o: &mut Output<'_>) -> i32 {
    let answer = dump_seid(family, o);
    for m in &answer.messages {
        match parse_reply(m) {
            Seid::Defined(eid, on) => o.out(&format!(
                "{} {}\n",
                crate::printable(&eid),
                if on { "[enabled]" } else { "[disabled]" }
            )),
            Seid::Undefined => {
                o.out("n/a\n");
                break;
            }
            Seid::Invalid => {
                o.err_line("Error: invalid data returned: smc_gen_seid_policy");
                break;
            }
        }
    }
    match &answer.result {
        Ok(()) => 0,
        Err(e) => {
            o.err_line(&error_message(Some(Command::Show), e));
            EXIT_OBJECT_FAILURE
        }
    }
}

/// Whether the kernel has a system EID (`is_seid_defined()`): the last
/// message of the dump decides; a failed dump is reported and counts as
/// none.
fn defined<T: Transport + ?Sized>(family: &mut Family<'_, T>, o: &mut Output<'_>) -> bool {
    let answer = dump_seid(family, o);
    let mut seid = false;
    for m in &answer.messages {
        match parse_reply(m) {
            Seid::Invalid => {
                o.err_line("Error: Invalid data returned: smc_gen_seid_policy");
                break;
            }
            s => seid = matches!(s, Seid::Defined(..)),
        }
    }
    if let Err(e) = &answer.result {
        o.err_line(&error_message(None, e));
    }
    seid
}

/// `seid` with `args` after it; the exit status.
pub fn invoke<T: Transport + ?Sized>(
    args: &[Vec<u8>],
    family: &mut Family<'_, T>,
    o: &mut Output<'_>,
) -> i32 {
    let Some(cmd) = parse_args(args) else {
        o.err(USAGE.as_bytes());
        return EXIT_OBJECT_FAILURE;
    };
    let nlcmd = match cmd {
        Command::Show => return show(family, o),
        Command::Enable => SMC_NETLINK_ENABLE_SEID,
        Command::Disable => SMC_NETLINK_DISABLE_SEID,
    };
    if !defined(family, o) {
        o.out("Error: System EID not available\n");
        return EXIT_OBJECT_FAILURE;
    }
    let mut warnings: Vec<DumpWarning> = Vec::new();
    let answer = family.request(nlcmd, &[], &mut |w| warnings.push(w));
    for w in warnings {
        o.err_line(&w.to_string());
    }
    match &answer.result {
        Ok(()) => 0,
        Err(e) => {
            o.err_line(&error_message(Some(cmd), e));
            EXIT_OBJECT_FAILURE
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::genl::{attr, string_attr};
    use crate::smcr::common::args as a;

    #[test]
    fn arguments_as_upstream() {
        assert_eq!(parse_args(&a(&[])), Some(Command::Show));
        assert_eq!(parse_args(&a(&["s"])), Some(Command::Show));
        assert_eq!(parse_args(&a(&["e"])), Some(Command::Enable));
        assert_eq!(parse_args(&a(&["dis"])), Some(Command::Disable));
        assert_eq!(parse_args(&a(&["enable", "enable"])), Some(Command::Enable));
        assert_eq!(parse_args(&a(&["enable", "disable"])), None);
        assert_eq!(parse_args(&a(&["enable", "show"])), None);
        assert_eq!(parse_args(&a(&["show", "x"])), None);
        assert_eq!(parse_args(&a(&["show", "show"])), None);
        assert_eq!(parse_args(&a(&["h"])), None);
        assert_eq!(parse_args(&a(&["x"])), None);
        assert_eq!(parse_args(&a(&[""])), None);
    }

    #[test]
    fn replies() {
        assert_eq!(parse_reply(&[13, 1, 0, 0]), Seid::Undefined);
        assert_eq!(parse_reply(&[13, 1]), Seid::Invalid);
        let mut p = vec![13, 1, 0, 0];
        p.extend(string_attr(SMC_NLA_SEID_ENTRY, b"IBM-SYSZ-ISMSEID00000000"));
        assert_eq!(parse_reply(&p), Seid::Undefined);
        p.extend(attr(SMC_NLA_SEID_ENABLED, &[1]));
        assert_eq!(
            parse_reply(&p),
            Seid::Defined(b"IBM-SYSZ-ISMSEID00000000".to_vec(), true)
        );
    }

    #[test]
    fn errors_in_upstream_words() {
        let k = |e| DumpError::Kernel(e);
        assert_eq!(
            error_message(Some(Command::Enable), &k(libc::EOPNOTSUPP)),
            "Error: operation not supported by kernel"
        );
        assert_eq!(
            error_message(Some(Command::Disable), &k(libc::ENOENT)),
            "Error: System EID cannot be disabled because no User EID is defined"
        );
        assert_eq!(
            error_message(Some(Command::Enable), &k(libc::EPERM)),
            "Error: Operation not permitted"
        );
    }
}
