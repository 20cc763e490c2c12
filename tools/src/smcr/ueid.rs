// SPDX-License-Identifier: GPL-2.0

//! `smcr ueid` / `smcd ueid`: the user-defined EIDs (upstream `ueid.c`).
//!
//! * `show` (the default): one line per UEID, the kernel's string as it
//!   is (32 characters, blank padded);
//! * `add <uEID>`, `del <uEID>`: the UEID checked as upstream's
//!   `set_eid()`/`ueid_valid()` check it, then sent blank padded to 32
//!   bytes with a NUL (33 bytes, what the kernel requires);
//! * `flush`.
//!
//! The words are prefixes (`contains()`): `a`, `d`, `f`, `s`, `h`.

use super::common::{
    Flavor, Output, EXIT_OBJECT_FAILURE, SMC_NETLINK_ADD_UEID, SMC_NETLINK_DUMP_UEID,
    SMC_NETLINK_FLUSH_UEID, SMC_NETLINK_REMOVE_UEID,
};
use crate::genl::{self, c_str, find_attr, Family, GenlMsg, NlError};
use crate::netlink::{DumpError, Transport};

/// `SMC_MAX_EID_LEN`.
pub const SMC_MAX_EID_LEN: usize = 32;
/// `SMC_NLA_EID_TABLE_ENTRY`.
pub const SMC_NLA_EID_TABLE_ENTRY: u16 = 1;

/// A UEID as the kernel takes it: blank padded to 32 bytes, then NUL.
pub type PaddedEid = [u8; SMC_MAX_EID_LEN + 1];

/// One `ueid` command.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Command {
    /// `show`.
    Show,
    /// `add <uEID>`.
    Add(PaddedEid),
    /// `del <uEID>`.
    Del(PaddedEid),
    /// `flush`.
    Flush,
}

/// What the arguments after `ueid` ask for.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Args {
    /// Run it.
    Run(Command),
    /// The usage on stderr, exit 255.
    Usage,
    /// A UEID refused before anything is sent: the message, exit 255.
    Invalid(Vec<u8>),
}

/// `isspace()` in the C locale.
fn c_isspace(c: u8) -> bool {
    matches!(c, b' ' | b'\t' | b'\n' | 0x0b | 0x0c | b'\r')
}

/// Pads `eid` as upstream's `set_eid()` does (`%-32s`) and checks it as
/// its `ueid_valid()` does, with the same messages (which end in a
/// newline; the character is written as the byte it is).
pub fn pad(eid: &[u8]) -> Result<PaddedEid, Vec<u8>> {
    const PREFIX: &str = "Error: Invalid User EID specified: ";
    if eid.len() > SMC_MAX_EID_LEN {
        return Err(format!("{PREFIX}EID is longer than 32 characters\n").into_bytes());
    }
    let mut p = [b' '; SMC_MAX_EID_LEN + 1];
    p[..eid.len()].copy_from_slice(eid);
    p[SMC_MAX_EID_LEN] = 0;
    let body = &p[..SMC_MAX_EID_LEN];
    let Some(end) = body.iter().rposition(|&c| !c_isspace(c)) else {
        return Err(format!("{PREFIX}EID is empty\n").into_bytes());
    };
    if !body[0].is_ascii_alphanumeric() {
        return Err(format!("{PREFIX}first character must be alphanumeric\n").into_bytes());
    }
    if body.windows(2).any(|w| w == b"..") {
        return Err(format!("{PREFIX}consecutive dots not allowed\n").into_bytes());
    }
    if let Some(&bad) = body[..=end].iter().find(|&&c| {
        (!c.is_ascii_alphanumeric() || c.is_ascii_lowercase()) && c != b'.' && c != b'-'
    }) {
        let mut m = format!("{PREFIX}unsupported character: '").into_bytes();
        m.push(bad);
        m.extend_from_slice(b"'\n       Supported characters are: A-Z, 0-9, '.' and '-'\n");
        return Err(m);
    }
    Ok(p)
}

/// Reads the arguments after `ueid` as upstream's `handle_cmd_params()`:
/// nothing is `show`; the first word picks the command by prefix (`help`
/// first); `add`/`del` take the next argument as the UEID, checked at
/// once; anything left over, or a missing UEID, is the usage.
pub fn parse_args(args: &[Vec<u8>]) -> Args {
    let Some((first, rest)) = args.split_first() else {
        return Args::Run(Command::Show);
    };
    let word = first.as_slice();
    let abbr = |w: &str| super::common::abbreviates(word, w);
    let (cmd, rest) = if abbr("help") {
        return Args::Usage;
    } else if abbr("add") || abbr("del") {
        let add = abbr("add");
        let Some((eid, rest)) = rest.split_first() else {
            return Args::Usage;
        };
        let padded = match pad(eid) {
            Ok(p) => p,
            Err(msg) => return Args::Invalid(msg),
        };
        let cmd = if add {
            Command::Add(padded)
        } else {
            Command::Del(padded)
        };
        (cmd, rest)
    } else if abbr("flush") {
        (Command::Flush, rest)
    } else if abbr("show") {
        (Command::Show, rest)
    } else {
        return Args::Usage;
    };
    if !rest.is_empty() {
        return Args::Usage;
    }
    Args::Run(cmd)
}

/// The usage (upstream `ueid.c` writes `smcd` for both programs; ours
/// writes the program's name).
pub fn usage(flavor: Flavor) -> String {
    let n = flavor.name();
    format!(
        "Usage: {n} ueid [show]\n       \
         {n} ueid add <eid>\n       \
         {n} ueid del <eid>\n       \
         {n} ueid flush\n"
    )
}

impl Command {
    /// The generic netlink command and its attributes.
    pub fn request(&self) -> (u8, Vec<u8>) {
        match self {
            Command::Show => (SMC_NETLINK_DUMP_UEID, Vec::new()),
            Command::Flush => (SMC_NETLINK_FLUSH_UEID, Vec::new()),
            Command::Add(p) => (SMC_NETLINK_ADD_UEID, genl::attr(SMC_NLA_EID_TABLE_ENTRY, p)),
            Command::Del(p) => (
                SMC_NETLINK_REMOVE_UEID,
                genl::attr(SMC_NLA_EID_TABLE_ENTRY, p),
            ),
        }
    }
}

/// What one message of the `show` dump gives (`handle_gen_ueid_reply()`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ShowLine {
    /// A line of output, newline included.
    Line(String),
    /// No entry: the listing ends here, successfully (`NL_STOP`).
    Stop,
    /// Shorter than a generic netlink header: the message, and the
    /// listing ends (upstream adds `nl_msg_dump()`, which we do not).
    Invalid(&'static str),
}

/// Reads one message of the `show` dump.
pub fn show_line(payload: &[u8]) -> ShowLine {
    let Some(msg) = GenlMsg::parse(payload) else {
        return ShowLine::Invalid("Error: invalid data returned: smc_gen_ueid_policy");
    };
    match find_attr(msg.attrs, SMC_NLA_EID_TABLE_ENTRY) {
        Some(entry) => ShowLine::Line(format!("{}\n", crate::printable(c_str(entry)))),
        None => ShowLine::Stop,
    }
}

/// The message for a failed command (`gen_nl_ueid_handle()`): upstream's
/// words for the errors it names, libnl's for the rest.
pub fn error_message(cmd: &Command, e: &DumpError) -> String {
    let DumpError::Kernel(errno) = e else {
        return genl::perror(e);
    };
    let nle = NlError::from_errno(*errno);
    let text = match (cmd, nle) {
        (_, NlError::OpNotSupp) => "Error: operation not supported by kernel",
        (Command::Del(_), NlError::Again) => {
            "Info: the System EID was activated because the last User EID was removed"
        }
        // Upstream says "not defined" for every other error of `del`,
        // `EPERM` too; ours says what it is.
        (Command::Del(_), NlError::Perm) => return nle.perror(),
        (Command::Del(_), _) => "Error: specified User EID is not defined",
        (Command::Add(_), NlError::Inval) => {
            "Error: specified User EID was rejected by the kernel"
        }
        (Command::Add(_), NlError::NoMem) => {
            "Error: kernel reported an out of memory condition"
        }
        (Command::Add(_), NlError::Range) => {
            "Error: specified User EID was rejected because the maximum number of User EIDs is reached"
        }
        (Command::Add(_), NlError::Exist) => "Error: specified User EID is already defined",
        _ => return nle.perror(),
    };
    text.to_string()
}

/// `ueid` with `args` after it; the exit status.
pub fn invoke<T: Transport + ?Sized>(
    flavor: Flavor,
    args: &[Vec<u8>],
    family: &mut Family<'_, T>,
    o: &mut Output<'_>,
) -> i32 {
    let cmd = match parse_args(args) {
        Args::Run(c) => c,
        Args::Usage => {
            o.err(usage(flavor).as_bytes());
            return EXIT_OBJECT_FAILURE;
        }
        Args::Invalid(msg) => {
            o.err(&msg);
            return EXIT_OBJECT_FAILURE;
        }
    };
    let (nlcmd, attrs) = cmd.request();
    let mut warnings = Vec::new();
    let mut warn = |w: crate::netlink::DumpWarning| warnings.push(w.to_string());
    let answer = if cmd == Command::Show {
        family.dump(nlcmd, &mut warn)
    } else {
        family.request(nlcmd, &attrs, &mut warn)
    };
    for w in warnings {
        o.err_line(&w);
    }
    if cmd == Command::Show {
        for m in &answer.messages {
            match show_line(m) {
                ShowLine::Line(l) => o.out(&l),
                ShowLine::Stop => break,
                ShowLine::Invalid(msg) => {
                    o.err_line(msg);
                    break;
                }
            }
        }
    }
    match answer.result {
        Ok(()) => 0,
        Err(e) => {
            o.err_line(&error_message(&cmd, &e));
            EXIT_OBJECT_FAILURE
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn a(v: &[&[u8]]) -> Vec<Vec<u8>> {
        v.iter().map(|s| s.to_vec()).collect()
    }

    fn padded(s: &str) -> PaddedEid {
        let mut p = [b' '; 33];
        p[..s.len()].copy_from_slice(s.as_bytes());
        p[32] = 0;
        p
    }

    fn invalid(eid: &[u8]) -> String {
        String::from_utf8_lossy(&pad(eid).expect_err("refused")).into_owned()
    }

    #[test]
    fn padding() {
        assert_eq!(pad(b"LOCATION-WEST"), Ok(padded("LOCATION-WEST")));
        let full = "A".repeat(32);
        assert_eq!(pad(full.as_bytes()), Ok(padded(&full)));
        assert_eq!(pad(b"A.B-9"), Ok(padded("A.B-9")));
        // Trailing white space is the padding's; the kernel trims it too.
        assert_eq!(pad(b"AB\t"), Ok(padded("AB\t")));
    }

    #[test]
    fn refusals_as_upstream() {
        let p = "Error: Invalid User EID specified: ";
        assert_eq!(
            invalid("A".repeat(33).as_bytes()),
            format!("{p}EID is longer than 32 characters\n")
        );
        assert_eq!(invalid(b""), format!("{p}EID is empty\n"));
        assert_eq!(invalid(b"   "), format!("{p}EID is empty\n"));
        assert_eq!(
            invalid(b".ABC"),
            format!("{p}first character must be alphanumeric\n")
        );
        assert_eq!(
            invalid(b" ABC"),
            format!("{p}first character must be alphanumeric\n")
        );
        assert_eq!(
            invalid(b"A..B"),
            format!("{p}consecutive dots not allowed\n")
        );
        let unsupported = |c: &str| {
            format!(
                "{p}unsupported character: '{c}'\n       \
                 Supported characters are: A-Z, 0-9, '.' and '-'\n"
            )
        };
        // Lower case passes the first test and fails the loop, as upstream.
        assert_eq!(invalid(b"location"), unsupported("l"));
        assert_eq!(invalid(b"AB_C"), unsupported("_"));
        assert_eq!(invalid(b"AB C"), unsupported(" "));
        assert_eq!(
            pad(b"A\xc3\x84").expect_err("refused"),
            [
                format!("{p}unsupported character: '").as_bytes(),
                b"\xc3",
                b"'\n       Supported characters are: A-Z, 0-9, '.' and '-'\n"
            ]
            .concat()
        );
    }

    #[test]
    fn arguments_as_handle_cmd_params() {
        assert_eq!(parse_args(&a(&[])), Args::Run(Command::Show));
        assert_eq!(parse_args(&a(&[b"s"])), Args::Run(Command::Show));
        assert_eq!(parse_args(&a(&[b"show"])), Args::Run(Command::Show));
        assert_eq!(parse_args(&a(&[b"f"])), Args::Run(Command::Flush));
        assert_eq!(
            parse_args(&a(&[b"a", b"EID1"])),
            Args::Run(Command::Add(padded("EID1")))
        );
        assert_eq!(
            parse_args(&a(&[b"del", b"EID1"])),
            Args::Run(Command::Del(padded("EID1")))
        );
        for bad in [
            &[&b"help"[..]][..],
            &[b"h"],
            &[b"x"],
            &[b""],
            &[b"shows"],
            &[b"show", b"x"],
            &[b"flush", b"x"],
            &[b"add"],
            &[b"del"],
            &[b"add", b"EID1", b"x"],
        ] {
            assert_eq!(parse_args(&a(bad)), Args::Usage, "{bad:?}");
        }
        // The UEID is checked before the surplus is noticed.
        assert!(matches!(
            parse_args(&a(&[b"add", b"bad", b"x"])),
            Args::Invalid(_)
        ));
        // After add, any word is the UEID, "help" too.
        assert!(matches!(
            parse_args(&a(&[b"add", b"help"])),
            Args::Invalid(_)
        ));
        assert!(matches!(
            parse_args(&a(&[b"add", b"HELP"])),
            Args::Run(Command::Add(_))
        ));
    }

    #[test]
    fn usage_text() {
        assert_eq!(
            usage(Flavor::Smcr),
            "Usage: smcr ueid [show]\n       smcr ueid add <eid>\n       \
             smcr ueid del <eid>\n       smcr ueid flush\n"
        );
    }

    #[test]
    fn requests() {
        assert_eq!(Command::Show.request(), (9, vec![]));
        assert_eq!(Command::Flush.request(), (12, vec![]));
        let (cmd, attrs) = Command::Add(padded("AB")).request();
        assert_eq!(cmd, 10);
        assert_eq!(attrs.len(), 40);
        assert_eq!(&attrs[..4], &[37, 0, 1, 0]);
        assert_eq!(&attrs[4..37], &padded("AB"));
        assert_eq!(&attrs[37..], &[0, 0, 0]);
        assert_eq!(Command::Del(padded("AB")).request().0, 11);
    }

    #[test]
    fn show_lines() {
        let mut p = vec![9, 1, 0, 0];
        p.extend(genl::attr(SMC_NLA_EID_TABLE_ENTRY, &padded("EID1")));
        assert_eq!(
            show_line(&p),
            ShowLine::Line("EID1                            \n".into())
        );
        let mut raw = vec![9, 1, 0, 0];
        raw.extend(genl::attr(SMC_NLA_EID_TABLE_ENTRY, b"A\nB"));
        assert_eq!(show_line(&raw), ShowLine::Line("A?B\n".into()));
        assert_eq!(show_line(&[9, 1, 0, 0]), ShowLine::Stop);
        assert!(matches!(show_line(&[9, 1]), ShowLine::Invalid(_)));
    }

    #[test]
    fn errors_by_command() {
        let add = Command::Add(padded("A"));
        let del = Command::Del(padded("A"));
        let k = DumpError::Kernel;
        let m = |c: &Command, e: i32| error_message(c, &k(e));
        assert_eq!(
            m(&add, libc::EOPNOTSUPP),
            "Error: operation not supported by kernel"
        );
        assert_eq!(
            m(&add, libc::EINVAL),
            "Error: specified User EID was rejected by the kernel"
        );
        assert_eq!(
            m(&add, libc::ENOMEM),
            "Error: kernel reported an out of memory condition"
        );
        assert_eq!(
            m(&add, libc::ERANGE),
            "Error: specified User EID was rejected because the maximum number of User EIDs is reached"
        );
        assert_eq!(
            m(&add, libc::EEXIST),
            "Error: specified User EID is already defined"
        );
        assert_eq!(m(&add, libc::EPERM), "Error: Operation not permitted");
        assert_eq!(
            m(&del, libc::ENOENT),
            "Error: specified User EID is not defined"
        );
        assert_eq!(
            m(&del, libc::EINVAL),
            "Error: specified User EID is not defined"
        );
        assert_eq!(
            m(&del, libc::EAGAIN),
            "Info: the System EID was activated because the last User EID was removed"
        );
        assert_eq!(m(&del, libc::EPERM), "Error: Operation not permitted");
        assert_eq!(
            m(&Command::Flush, libc::EPERM),
            "Error: Operation not permitted"
        );
        assert_eq!(
            m(&Command::Show, libc::EOPNOTSUPP),
            "Error: operation not supported by kernel"
        );
        assert_eq!(
            error_message(&Command::Show, &DumpError::Eof),
            "Error: Unexpected EOF on netlink"
        );
    }
}
