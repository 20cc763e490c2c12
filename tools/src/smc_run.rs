// SPDX-License-Identifier: GPL-2.0

//! `smc_run`: start a program with `libsmc-preload.so` preloaded, so that
//! its TCP sockets are SMC sockets. Options, messages and exit codes are
//! upstream's `smc_run` script's (`getopts "dhr:t:v"`: options end at the
//! first operand, so the program's own options are left alone), plus
//! `--help` and `--version`. Pure functions; the program is
//! `src/bin/smc_run.rs`.

use std::ffi::{OsStr, OsString};
use std::os::unix::ffi::{OsStrExt, OsStringExt};
use std::path::{Path, PathBuf};

/// The preload library's installed name (upstream's).
pub const LIB_NAME: &str = "libsmc-preload.so";
/// The name cargo gives the library in `target/release`.
pub const CARGO_LIB_NAME: &str = "libsmc_preload.so";

/// Which way `smc_run` makes the program's sockets SMC sockets.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mode {
    /// `libsmc-preload.so` in `LD_PRELOAD` (upstream's way).
    Preload,
    /// A BPF program for a cgroup (`--bpf`, `--cgroup`; see
    /// [`crate::smc_run_bpf`]).
    Bpf,
}

/// What the command line asks for; `R` is how to run, as a mode has it.
#[derive(Debug, PartialEq, Eq)]
pub enum Action<R = Run> {
    /// `-h`: the usage on stdout, exit 0.
    Help,
    /// `-v` (`--version`): the version on stdout, exit 0.
    Version,
    /// Run `command` (never empty without `--cgroup`).
    Run(R),
    /// A message on stdout (as upstream's `echo`), exit 1.
    Error(String),
}

impl<R> Action<R> {
    /// The same action, with `view` applied to what is run.
    pub fn map<S>(self, view: impl FnOnce(R) -> S) -> Action<S> {
        match self {
            Action::Help => Action::Help,
            Action::Version => Action::Version,
            Action::Run(run) => Action::Run(view(run)),
            Action::Error(text) => Action::Error(text),
        }
    }
}

/// Which SMC sockets the preload library makes of TCP ones (`-f`, the
/// library's `SMC_FAMILY`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Family {
    /// `AF_SMC` sockets (`SMCPROTO_SMC`/`SMCPROTO_SMC6`), as upstream's
    /// library makes them.
    #[default]
    Smc,
    /// `IPPROTO_SMC` sockets of the caller's `AF_INET`/`AF_INET6` (Linux
    /// 6.11 and later): the socket keeps its family, as a program may
    /// check it (`getsockname()`, `SO_DOMAIN`).
    Inet,
    /// `IPPROTO_SMC` where the kernel has it, else `AF_SMC`.
    Auto,
}

impl Family {
    /// The word of `-f` and `SMC_FAMILY`.
    pub fn word(self) -> &'static str {
        match self {
            Family::Smc => "smc",
            Family::Inet => "inet",
            Family::Auto => "auto",
        }
    }

    /// The family a word names.
    pub fn from_word(w: &[u8]) -> Option<Family> {
        match w {
            b"smc" => Some(Family::Smc),
            b"inet" => Some(Family::Inet),
            b"auto" => Some(Family::Auto),
            _ => None,
        }
    }
}

/// The options of either mode's command line.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct Options {
    /// `-d` (with `--bpf`, `-v` too): say more.
    pub debug: bool,
    /// `-f FAMILY` (preload mode only).
    pub family: Option<Family>,
    /// `-r SIZE` (preload mode only).
    pub rcvbuf: Option<i32>,
    /// `-t SIZE` (preload mode only).
    pub sndbuf: Option<i32>,
    /// `--cgroup PATH` (BPF mode only).
    pub cgroup: Option<PathBuf>,
    /// The program and its arguments.
    pub command: Vec<OsString>,
}

/// How to run the program.
#[derive(Debug, PartialEq, Eq)]
pub struct Run {
    /// `-d`: `SMC_DEBUG=1` (else `SMC_DEBUG=0`, as upstream exports it).
    pub debug: bool,
    /// `-r SIZE`: `SMC_RCVBUF`, in bytes.
    pub rcvbuf: Option<i32>,
    /// `-t SIZE`: `SMC_SNDBUF`, in bytes.
    pub sndbuf: Option<i32>,
    /// `-f FAMILY`: `SMC_FAMILY`.
    pub family: Option<Family>,
    /// The program and its arguments.
    pub command: Vec<OsString>,
}

/// The usage text (upstream's, line for line, and `-f`).
pub fn usage() -> &'static str {
    "\n\
     Usage: smc_run [ OPTIONS ] COMMAND\n\
     \n\
     Run COMMAND using SMC for TCP sockets\n\
     \n\
     \x20  -d         enable debug mode\n\
     \x20  -f <FAM>   SMC sockets of family smc (AF_SMC, the default),\n\
     \x20             inet (IPPROTO_SMC of AF_INET/AF_INET6) or auto\n\
     \x20  -h         display this message\n\
     \x20  -r <SIZE>  request receive buffer size in Bytes\n\
     \x20  -t <SIZE>  request transmit buffer size in Bytes\n\
     \x20  -v         display version info\n"
}

/// The version line (upstream: `smc_run utility, smc-tools-%s`).
pub fn version() -> String {
    format!("smc_run utility, smc_rs-tools-{}\n", crate::VERSION)
}

/// A buffer size as `-r`/`-t` and `SMC_RCVBUF`/`SMC_SNDBUF` take it:
/// decimal digits and an optional `k`/`K` (KiB) or `m`/`M` (MiB) suffix
/// (upstream's `^[0-9]+[k|K|m|M]?$`). `None` for anything else, and for
/// sizes that do not fit the `int` of `setsockopt()`.
pub fn parse_size(value: &[u8]) -> Option<i32> {
    let (last, rest) = value.split_last()?;
    let (digits, unit) = match last {
        b'k' | b'K' => (rest, 1024),
        b'm' | b'M' => (rest, 1024 * 1024),
        _ => (value, 1),
    };
    if digits.is_empty() {
        return None;
    }
    let mut n: i32 = 0;
    for &d in digits {
        if !d.is_ascii_digit() {
            return None;
        }
        n = n.checked_mul(10)?.checked_add(i32::from(d - b'0'))?;
    }
    n.checked_mul(unit)
}

/// Parses the arguments after the program name (preload mode).
pub fn parse(args: &[OsString]) -> Action {
    parse_options(args, Mode::Preload).map(|options| Run {
        debug: options.debug,
        rcvbuf: options.rcvbuf,
        sndbuf: options.sndbuf,
        family: options.family,
        command: options.command,
    })
}

/// Parses the arguments after the program name for `mode` (which the
/// caller has chosen, see [`crate::smc_run_bpf::wants_bpf`], as `-v` means
/// one thing in each). Options end at the first operand in both modes;
/// `--bpf` and `--cgroup` are options of the BPF mode only, `-r` and `-t`
/// of the preload mode only.
pub fn parse_options(args: &[OsString], mode: Mode) -> Action<Options> {
    let bpf = mode == Mode::Bpf;
    let mut options = Options::default();
    let mut bpf_asked = false;
    let mut i = 0;
    while let Some(arg) = args.get(i) {
        let bytes = arg.as_bytes();
        i += 1;
        match bytes {
            b"--" => break,
            b"--help" => return Action::Help,
            b"--version" => return Action::Version,
            b"--bpf" if bpf => bpf_asked = true,
            b"--cgroup" if bpf => {
                let Some(path) = args.get(i) else {
                    return Action::Error(
                        "smc_run: Error: Option requires an argument: --cgroup".to_string(),
                    );
                };
                i += 1;
                options.cgroup = Some(PathBuf::from(path));
            }
            [b'-', b'-', b'c', b'g', b'r', b'o', b'u', b'p', b'=', path @ ..] if bpf => {
                options.cgroup = Some(PathBuf::from(OsStr::from_bytes(path)));
            }
            [b'-', b'-', ..] => {
                return Action::Error(format!(
                    "smc_run: Error: Invalid option: {}",
                    arg.to_string_lossy()
                ))
            }
            [b'-', letters @ ..] if !letters.is_empty() => {
                let mut at = 0;
                while let Some(&letter) = letters.get(at) {
                    at += 1;
                    match (letter, mode) {
                        (b'd', _) | (b'v', Mode::Bpf) => options.debug = true,
                        (b'h', _) => return Action::Help,
                        (b'v', Mode::Preload) => return Action::Version,
                        (b'r' | b't' | b'f', Mode::Bpf) => {
                            return Action::Error(format!(
                                "smc_run: Error: Option -{} needs the preload mode (not --bpf)",
                                letter as char
                            ))
                        }
                        (b'r' | b't' | b'f', Mode::Preload) => {
                            // The value is the rest of this word or the next.
                            let value = match letters.get(at..) {
                                Some(rest) if !rest.is_empty() => rest,
                                _ => {
                                    let Some(next) = args.get(i) else {
                                        return Action::Error(format!(
                                            "smc_run: Error: Option requires an argument: -{}",
                                            letter as char
                                        ));
                                    };
                                    i += 1;
                                    next.as_bytes()
                                }
                            };
                            if letter == b'f' {
                                let Some(f) = Family::from_word(value) else {
                                    return Action::Error(format!(
                                        "smc_run: Error: Invalid family: '{}' (smc, inet or auto)",
                                        String::from_utf8_lossy(value)
                                    ));
                                };
                                options.family = Some(f);
                                break;
                            }
                            let Some(size) = parse_size(value) else {
                                return Action::Error(format!(
                                    "Error: Invalid buffer size specified: '{}'",
                                    String::from_utf8_lossy(value)
                                ));
                            };
                            if letter == b'r' {
                                options.rcvbuf = Some(size);
                            } else {
                                options.sndbuf = Some(size);
                            }
                            break;
                        }
                        (other, _) => {
                            return Action::Error(format!(
                                "smc_run: Error: Invalid option: -{}",
                                String::from_utf8_lossy(&[other])
                            ))
                        }
                    }
                }
            }
            _ => {
                i -= 1;
                break;
            }
        }
    }
    options.command = args.get(i..).unwrap_or_default().to_vec();
    if bpf && !bpf_asked {
        return Action::Error("smc_run: Error: --cgroup needs --bpf".to_string());
    }
    match (&options.cgroup, options.command.is_empty()) {
        (None, true) => Action::Error("smc_run: Error: Missing command parameter".to_string()),
        (Some(_), false) => Action::Error(
            "smc_run: Error: --cgroup <PATH> takes no COMMAND (its tasks are run elsewhere)"
                .to_string(),
        ),
        _ => Action::Run(options),
    }
}

/// Debian's multiarch directory of the target (`lib/<triplet>`), where a
/// distribution package puts libraries.
pub const MULTIARCH: &str = if cfg!(all(target_arch = "x86_64", target_env = "gnu")) {
    "x86_64-linux-gnu"
} else if cfg!(all(target_arch = "aarch64", target_env = "gnu")) {
    "aarch64-linux-gnu"
} else if cfg!(all(target_arch = "s390x", target_env = "gnu")) {
    "s390x-linux-gnu"
} else if cfg!(all(target_arch = "powerpc64", target_endian = "little", target_env = "gnu")) {
    "powerpc64le-linux-gnu"
} else if cfg!(all(target_arch = "riscv64", target_env = "gnu")) {
    "riscv64-linux-gnu"
} else {
    ""
};

/// Where the library may be, for `smc_run` in `exe_dir`, in order: next
/// to it (`make install` of a flat layout, or cargo's `target/release`
/// with cargo's name), then `../lib`, Debian's multiarch `../lib/<triplet>`
/// and `../lib64` (`make install`: `PREFIX/bin/smc_run`,
/// `PREFIX/lib/libsmc-preload.so`; a Debian package:
/// `/usr/lib/<triplet>/libsmc-preload.so`).
pub fn library_candidates(exe_dir: &Path) -> Vec<PathBuf> {
    let up = exe_dir.parent().unwrap_or(exe_dir);
    let mut v = vec![
        exe_dir.join(LIB_NAME),
        exe_dir.join(CARGO_LIB_NAME),
        up.join("lib").join(LIB_NAME),
    ];
    if !MULTIARCH.is_empty() {
        v.push(up.join("lib").join(MULTIARCH).join(LIB_NAME));
    }
    v.push(up.join("lib64").join(LIB_NAME));
    v
}

/// The warning when no module serves `AF_SMC` (`socket()` gave
/// `EAFNOSUPPORT` after the kernel tried to load one): the program then
/// runs over TCP, every socket falling back.
pub fn no_module_warning() -> &'static str {
    "smc_run: Warning: no SMC module is loaded (AF_SMC is not supported); the command runs over TCP"
}

/// `LD_PRELOAD` for the program: the caller's, with the library appended
/// (upstream appends), unless it is already in the list.
pub fn ld_preload(existing: Option<&OsStr>, lib: &Path) -> OsString {
    let lib = lib.as_os_str();
    let existing = existing.map(OsStr::as_bytes).unwrap_or_default();
    let listed = existing
        .split(|&b| b == b':' || b == b' ')
        .any(|entry| entry == lib.as_bytes());
    if listed {
        return OsString::from_vec(existing.to_vec());
    }
    if existing.is_empty() {
        return lib.to_os_string();
    }
    let mut joined = existing.to_vec();
    joined.push(b':');
    joined.extend_from_slice(lib.as_bytes());
    OsString::from_vec(joined)
}

/// The exit code of a failed `exec`, as a shell's: 127 for a program that
/// is not there, 126 for one that cannot be run.
pub fn exec_failure_code(err: &std::io::Error) -> i32 {
    if err.kind() == std::io::ErrorKind::NotFound {
        127
    } else {
        126
    }
}

/// Why a program could not be run, as `smc_run` says it after the
/// program's name: "command not found" for one that is not there, else
/// the error's text.
pub fn exec_failure_text(err: &std::io::Error) -> String {
    match err.raw_os_error() {
        Some(code) if code == libc::ENOENT => "command not found".to_string(),
        Some(code) => crate::strerror(code),
        None => err.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args(list: &[&str]) -> Vec<OsString> {
        list.iter().map(OsString::from).collect()
    }

    fn run_of(list: &[&str]) -> Run {
        match parse(&args(list)) {
            Action::Run(run) => run,
            other => panic!("{list:?}: {other:?}"),
        }
    }

    #[test]
    fn options_end_at_the_program() {
        let run = run_of(&["redis-benchmark", "-h", "10.10.0.1", "-t", "set"]);
        assert!(!run.debug);
        assert_eq!(run.rcvbuf, None);
        assert_eq!(run.sndbuf, None);
        assert_eq!(
            run.command,
            args(&["redis-benchmark", "-h", "10.10.0.1", "-t", "set"])
        );
        let run = run_of(&["-d", "-r", "64k", "-t1m", "--", "-x", "-d"]);
        assert!(run.debug);
        assert_eq!(run.rcvbuf, Some(65536));
        assert_eq!(run.sndbuf, Some(1 << 20));
        assert_eq!(run.command, args(&["-x", "-d"]));
        let run = run_of(&["-dr", "4096", "prog"]);
        assert!(run.debug);
        assert_eq!(run.rcvbuf, Some(4096));
        assert_eq!(run.command, args(&["prog"]));
        // A lone "-" is an operand, as getopts has it.
        assert_eq!(run_of(&["-", "x"]).command, args(&["-", "x"]));
    }

    #[test]
    fn families() {
        assert_eq!(run_of(&["prog"]).family, None);
        assert_eq!(run_of(&["-f", "inet", "prog"]).family, Some(Family::Inet));
        assert_eq!(run_of(&["-fauto", "prog"]).family, Some(Family::Auto));
        assert_eq!(run_of(&["-d", "-f", "smc", "prog"]).family, Some(Family::Smc));
        for f in [Family::Smc, Family::Inet, Family::Auto] {
            assert_eq!(Family::from_word(f.word().as_bytes()), Some(f));
        }
        assert_eq!(
            parse(&args(&["-f", "tcp", "prog"])),
            Action::Error("smc_run: Error: Invalid family: 'tcp' (smc, inet or auto)".into())
        );
        assert_eq!(
            parse(&args(&["-f"])),
            Action::Error("smc_run: Error: Option requires an argument: -f".into())
        );
    }

    #[test]
    fn help_version_errors() {
        assert_eq!(parse(&args(&["-h"])), Action::Help);
        assert_eq!(parse(&args(&["--help"])), Action::Help);
        assert_eq!(parse(&args(&["-d", "-h", "prog"])), Action::Help);
        assert_eq!(parse(&args(&["-v"])), Action::Version);
        assert_eq!(parse(&args(&["--version"])), Action::Version);
        let error = |list: &[&str]| match parse(&args(list)) {
            Action::Error(text) => text,
            other => panic!("{list:?}: {other:?}"),
        };
        assert_eq!(error(&[]), "smc_run: Error: Missing command parameter");
        assert_eq!(error(&["-d"]), "smc_run: Error: Missing command parameter");
        assert_eq!(
            error(&["-d", "--"]),
            "smc_run: Error: Missing command parameter"
        );
        assert_eq!(error(&["-x", "prog"]), "smc_run: Error: Invalid option: -x");
        assert_eq!(
            error(&["-dq", "prog"]),
            "smc_run: Error: Invalid option: -q"
        );
        assert_eq!(
            error(&["--bogus", "prog"]),
            "smc_run: Error: Invalid option: --bogus"
        );
        assert_eq!(
            error(&["-r"]),
            "smc_run: Error: Option requires an argument: -r"
        );
        assert_eq!(
            error(&["-t", "12g", "prog"]),
            "Error: Invalid buffer size specified: '12g'"
        );
        assert_eq!(
            error(&["-r", "-1", "prog"]),
            "Error: Invalid buffer size specified: '-1'"
        );
    }

    #[test]
    fn sizes() {
        assert_eq!(parse_size(b"65536"), Some(65536));
        assert_eq!(parse_size(b"0"), Some(0));
        assert_eq!(parse_size(b"64k"), Some(65536));
        assert_eq!(parse_size(b"64K"), Some(65536));
        assert_eq!(parse_size(b"4m"), Some(4 << 20));
        assert_eq!(parse_size(b"4M"), Some(4 << 20));
        assert_eq!(parse_size(b"2047M"), Some(2047 << 20));
        assert_eq!(parse_size(b"2048M"), None);
        assert_eq!(parse_size(b"2147483647"), Some(i32::MAX));
        assert_eq!(parse_size(b"2147483648"), None);
        for bad in [
            &b""[..],
            b"k",
            b"M",
            b"-1",
            b"+1",
            b" 1",
            b"1 ",
            b"1g",
            b"1kk",
            b"0x10",
        ] {
            assert_eq!(parse_size(bad), None, "{bad:?}");
        }
    }

    #[test]
    fn library_places() {
        let found = library_candidates(Path::new("/usr/bin"));
        let mut want = vec![
            PathBuf::from("/usr/bin/libsmc-preload.so"),
            PathBuf::from("/usr/bin/libsmc_preload.so"),
            PathBuf::from("/usr/lib/libsmc-preload.so"),
        ];
        if cfg!(all(target_arch = "x86_64", target_env = "gnu")) {
            want.push(PathBuf::from("/usr/lib/x86_64-linux-gnu/libsmc-preload.so"));
        }
        want.push(PathBuf::from("/usr/lib64/libsmc-preload.so"));
        assert_eq!(found, want);
    }

    #[test]
    fn preload_list() {
        let lib = Path::new("/usr/lib/libsmc-preload.so");
        assert_eq!(ld_preload(None, lib), "/usr/lib/libsmc-preload.so");
        assert_eq!(
            ld_preload(Some(OsStr::new("")), lib),
            "/usr/lib/libsmc-preload.so"
        );
        assert_eq!(
            ld_preload(Some(OsStr::new("libother.so")), lib),
            "libother.so:/usr/lib/libsmc-preload.so"
        );
        assert_eq!(
            ld_preload(Some(OsStr::new("a.so:/usr/lib/libsmc-preload.so")), lib),
            "a.so:/usr/lib/libsmc-preload.so"
        );
    }

    #[test]
    fn exec_codes() {
        let missing = std::io::Error::from_raw_os_error(libc::ENOENT);
        let denied = std::io::Error::from_raw_os_error(libc::EACCES);
        assert_eq!(exec_failure_code(&missing), 127);
        assert_eq!(exec_failure_code(&denied), 126);
    }
}
