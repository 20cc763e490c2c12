// SPDX-License-Identifier: GPL-2.0

//! `smc_run --bpf`: the command line, usage and what is read from
//! `/proc` (where cgroup v2 is mounted, the capabilities), as pure
//! functions. The program (`src/bin/smc_run.rs` and its modules) loads a
//! BPF program on the kernel's `update_socket_protocol()` hook that makes
//! the TCP sockets of one cgroup's tasks `IPPROTO_SMC` sockets: no
//! preloaded library, so static binaries and programs that make their own
//! system calls (Go) are reached too.

use crate::smc_run::{self, Action, Mode};
use std::ffi::OsString;
use std::os::unix::ffi::OsStrExt;
use std::path::PathBuf;

/// `CAP_SYS_ADMIN` (`linux/capability.h`): cgroups, and tracing programs.
pub const CAP_SYS_ADMIN: u32 = 21;
/// `CAP_BPF` (`linux/capability.h`).
pub const CAP_BPF: u32 = 39;

/// What `smc_run --bpf` is asked to do.
#[derive(Debug, PartialEq, Eq)]
pub struct BpfRun {
    /// `-v`, `-d` (or `SMC_DEBUG=1`, see [`debug_env`]): say on stderr
    /// what is attached, and how many sockets became SMC.
    pub verbose: bool,
    /// `--cgroup PATH`: an existing cgroup whose tasks (and those of the
    /// cgroups below it) get SMC sockets until SIGINT or SIGTERM.
    pub cgroup: Option<PathBuf>,
    /// The program and its arguments, run in a new cgroup of its own
    /// (empty with `--cgroup`).
    pub command: Vec<OsString>,
}

/// What a `--bpf` command line asks for (`-h`, `--help`: the usage;
/// `--version`: the version; the run; or a message on stdout, exit 1).
pub type BpfAction = Action<BpfRun>;

/// The lines the usage adds for `--bpf` (after upstream's).
pub fn usage_bpf() -> &'static str {
    "\n\
     Usage: smc_run --bpf [ -v ] COMMAND\n\
     \x20      smc_run --bpf [ -v ] --cgroup <PATH>\n\
     \n\
     Run COMMAND, or every task of an existing cgroup, with a BPF program on\n\
     the kernel's socket() path that creates SMC sockets for TCP (also for\n\
     static binaries and Go programs); needs CAP_BPF and CAP_SYS_ADMIN\n\
     \n\
     \x20  --bpf            make the sockets SMC by BPF, not by LD_PRELOAD\n\
     \x20  --cgroup <PATH>  no COMMAND: the tasks of cgroup v2 directory PATH\n\
     \x20                   and below it, until SIGINT or SIGTERM\n\
     \x20  -v, -d           say what is attached (also SMC_DEBUG=1)\n"
}

/// Whether the command line (the arguments after the program name) asks
/// for the BPF mode: `--bpf` or `--cgroup` among the options before the
/// first operand (the value of a trailing `-r`/`-t` is skipped).
pub fn wants_bpf(args: &[OsString]) -> bool {
    let mut words = args.iter();
    while let Some(word) = words.next() {
        let bytes = word.as_bytes();
        match bytes {
            b"--" => return false,
            b"--bpf" => return true,
            [b'-', b'-', rest @ ..] if rest.starts_with(b"cgroup") => return true,
            [b'-', letters @ ..] if !letters.is_empty() => {
                // A cluster's -r/-t takes the rest of the word, or the next.
                if let Some(at) = letters.iter().position(|&c| c == b'r' || c == b't') {
                    if at + 1 == letters.len() {
                        words.next();
                    }
                }
            }
            _ => return false,
        }
    }
    false
}

/// Parses a `--bpf` command line (the arguments after the program name).
/// Options end at the first operand, as in the preload mode.
pub fn parse(args: &[OsString]) -> BpfAction {
    smc_run::parse_options(args, Mode::Bpf).map(|options| BpfRun {
        verbose: options.debug,
        cgroup: options.cgroup,
        command: options.command,
    })
}

/// Whether `SMC_DEBUG` asks for the messages (as the preload library reads
/// it: set and not `0`).
pub fn debug_env(value: Option<&std::ffi::OsStr>) -> bool {
    matches!(value, Some(v) if !v.is_empty() && v.as_bytes() != b"0")
}

/// A mount point of `/proc/self/mountinfo` with its octal escapes
/// (`\040` for a blank) undone.
fn unescape_mount_point(field: &str) -> PathBuf {
    let bytes = field.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while let Some(&b) = bytes.get(i) {
        let digits = bytes.get(i + 1..i + 4);
        let value = digits.and_then(|d| {
            d.iter().try_fold(0u32, |acc, &c| {
                (b'0'..=b'7')
                    .contains(&c)
                    .then(|| acc * 8 + u32::from(c - b'0'))
            })
        });
        match value {
            Some(v) if b == b'\\' && v <= 0xff => {
                out.push(v as u8);
                i += 4;
            }
            _ => {
                out.push(b);
                i += 1;
            }
        }
    }
    PathBuf::from(OsString::from(std::ffi::OsStr::from_bytes(&out)))
}

/// Where the cgroup v2 hierarchy is mounted, from the text of
/// `/proc/self/mountinfo` (file system type `cgroup2`): the first such
/// mount, or `None`.
pub fn cgroup2_mount(mountinfo: &str) -> Option<PathBuf> {
    mountinfo.lines().find_map(|line| {
        let (mount, rest) = line.split_once(" - ")?;
        let fstype = rest.split(' ').next()?;
        if fstype != "cgroup2" {
            return None;
        }
        // id parent major:minor root mount-point ...
        let point = mount.split(' ').nth(4)?;
        Some(unescape_mount_point(point))
    })
}

/// The effective capabilities, from the text of `/proc/self/status`
/// (`CapEff:`, hexadecimal).
pub fn effective_caps(status: &str) -> Option<u64> {
    status
        .lines()
        .find_map(|l| l.strip_prefix("CapEff:"))
        .and_then(|hex| u64::from_str_radix(hex.trim(), 16).ok())
}

/// Whether a capability set holds both capabilities `--bpf` needs.
pub fn caps_suffice(caps: u64) -> bool {
    let has = |cap: u32| caps & (1u64 << cap) != 0;
    has(CAP_BPF) && has(CAP_SYS_ADMIN)
}

/// The name of the transient cgroup for the `smc_run` of process `pid`.
pub fn transient_cgroup_name(pid: u32) -> String {
    format!("smc_run.{pid}")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args(list: &[&str]) -> Vec<OsString> {
        list.iter().map(OsString::from).collect()
    }

    #[test]
    fn bpf_mode_is_asked_for() {
        assert!(wants_bpf(&args(&["--bpf", "prog"])));
        assert!(wants_bpf(&args(&["-v", "--bpf", "prog"])));
        assert!(wants_bpf(&args(&["-r", "64k", "--bpf", "prog"])));
        assert!(wants_bpf(&args(&["-dr", "64k", "--bpf", "prog"])));
        assert!(wants_bpf(&args(&["--cgroup", "/x"])));
        assert!(wants_bpf(&args(&["--cgroup=/x"])));
        assert!(!wants_bpf(&args(&["prog", "--bpf"])));
        assert!(!wants_bpf(&args(&["--", "--bpf"])));
        assert!(!wants_bpf(&args(&["-r64k", "prog", "--bpf"])));
        assert!(!wants_bpf(&args(&["-d", "prog"])));
        assert!(!wants_bpf(&args(&[])));
    }

    #[test]
    fn bpf_command_lines() {
        let run = |list: &[&str]| match parse(&args(list)) {
            BpfAction::Run(run) => run,
            other => panic!("{list:?}: {other:?}"),
        };
        let r = run(&["--bpf", "redis-server", "-v", "--bpf"]);
        assert!(!r.verbose);
        assert_eq!(r.cgroup, None);
        assert_eq!(r.command, args(&["redis-server", "-v", "--bpf"]));
        let r = run(&["-v", "--bpf", "--", "-x"]);
        assert!(r.verbose);
        assert_eq!(r.command, args(&["-x"]));
        assert!(run(&["--bpf", "-d", "prog"]).verbose);
        let r = run(&["--bpf", "--cgroup", "/sys/fs/cgroup/web"]);
        assert_eq!(r.cgroup, Some(PathBuf::from("/sys/fs/cgroup/web")));
        assert!(r.command.is_empty());
        let r = run(&["--cgroup=/sys/fs/cgroup/a b", "-vd", "--bpf"]);
        assert_eq!(r.cgroup, Some(PathBuf::from("/sys/fs/cgroup/a b")));
        assert!(r.verbose);
        assert_eq!(parse(&args(&["--bpf", "-h"])), BpfAction::Help);
        assert_eq!(parse(&args(&["--bpf", "--help", "x"])), BpfAction::Help);
        assert_eq!(parse(&args(&["--bpf", "--version"])), BpfAction::Version);
    }

    #[test]
    fn bpf_errors() {
        let error = |list: &[&str]| match parse(&args(list)) {
            BpfAction::Error(text) => text,
            other => panic!("{list:?}: {other:?}"),
        };
        assert_eq!(
            error(&["--bpf"]),
            "smc_run: Error: Missing command parameter"
        );
        assert_eq!(
            error(&["--bpf", "-v", "--"]),
            "smc_run: Error: Missing command parameter"
        );
        assert_eq!(
            error(&["--bpf", "-r", "64k", "prog"]),
            "smc_run: Error: Option -r needs the preload mode (not --bpf)"
        );
        assert_eq!(
            error(&["--bpf", "-x", "prog"]),
            "smc_run: Error: Invalid option: -x"
        );
        assert_eq!(
            error(&["--bpf", "--bogus", "prog"]),
            "smc_run: Error: Invalid option: --bogus"
        );
        assert_eq!(
            error(&["--bpf", "--cgroup"]),
            "smc_run: Error: Option requires an argument: --cgroup"
        );
        assert_eq!(
            error(&["--cgroup", "/x"]),
            "smc_run: Error: --cgroup needs --bpf"
        );
        assert_eq!(
            error(&["--bpf", "--cgroup", "/x", "prog"]),
            "smc_run: Error: --cgroup <PATH> takes no COMMAND (its tasks are run elsewhere)"
        );
    }

    #[test]
    fn cgroup2_mount_point() {
        let hybrid = "31 23 0:28 / /sys/fs/cgroup rw,relatime - tmpfs tmpfs rw,mode=755\n\
            32 31 0:29 / /sys/fs/cgroup/cpu rw,relatime - cgroup cgroup rw,cpu\n\
            41 31 0:38 / /sys/fs/cgroup/unified rw,relatime - cgroup2 cgroup2 rw\n";
        assert_eq!(
            cgroup2_mount(hybrid),
            Some(PathBuf::from("/sys/fs/cgroup/unified"))
        );
        let unified =
            "25 1 0:22 / /sys/fs/cgroup rw,nosuid shared:4 - cgroup2 cgroup2 rw,nsdelegate\n";
        assert_eq!(
            cgroup2_mount(unified),
            Some(PathBuf::from("/sys/fs/cgroup"))
        );
        let blank = "25 1 0:22 / /mnt/a\\040b rw - cgroup2 none rw\n";
        assert_eq!(cgroup2_mount(blank), Some(PathBuf::from("/mnt/a b")));
        assert_eq!(cgroup2_mount("1 0 0:1 / / rw - ext4 /dev/vda rw\n"), None);
        assert_eq!(cgroup2_mount("garbage\n - cgroup2\n"), None);
        assert_eq!(cgroup2_mount(""), None);
    }

    #[test]
    fn capabilities() {
        let status = "Name:\tsmc_run\nCapPrm:\t0\nCapEff:\t000001fffeffffff\nCapBnd:\t0\n";
        assert_eq!(effective_caps(status), Some(0x1fffeffffff));
        assert!(caps_suffice(0x1fffeffffff));
        assert!(!caps_suffice(0));
        assert!(!caps_suffice(1 << CAP_SYS_ADMIN));
        assert!(!caps_suffice(1 << CAP_BPF));
        assert!(caps_suffice((1 << CAP_BPF) | (1 << CAP_SYS_ADMIN)));
        assert_eq!(effective_caps("CapEff:\tzz\n"), None);
        assert_eq!(effective_caps(""), None);
    }

    #[test]
    fn small_things() {
        assert!(debug_env(Some(std::ffi::OsStr::new("1"))));
        assert!(debug_env(Some(std::ffi::OsStr::new("yes"))));
        assert!(!debug_env(Some(std::ffi::OsStr::new("0"))));
        assert!(!debug_env(Some(std::ffi::OsStr::new(""))));
        assert!(!debug_env(None));
        assert_eq!(transient_cgroup_name(42), "smc_run.42");
    }
}
