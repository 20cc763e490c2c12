// SPDX-License-Identifier: GPL-2.0

//! Shared code of the smc_rs operator tools.
//!
//! * [`netlink`]: a raw netlink socket, message and attribute parsing that
//!   never trusts a length it was given, and the dump loop;
//! * [`scripted`]: the exchange with a scripted kernel, for tests;
//! * [`genl`]: generic netlink (requests, the family lookup, libnl's
//!   wording of errors);
//! * [`smc_diag`]: the `linux/smc_diag.h` ABI (request, reply, attributes);
//! * [`getopt`]: `getopt_long(3)`-style option parsing, so the tools accept
//!   and reject the same command lines as upstream's C tools;
//! * [`smcss`]: the `smcss` table (header, rows, filters), pure functions;
//! * [`smcr`]: `smcr`/`smcd` (`ueid`, `info`, `stats`), the program over
//!   any netlink transport;
//! * [`smc_chk`]: `smc_chk`'s options, its AF_SMC test server and
//!   client, and the fallback reasons in words;
//! * [`smc_run`]: `smc_run`'s options and where its preload library is;
//! * [`smc_run_bpf`]: `smc_run --bpf`'s options, the cgroup v2 mount and
//!   the capabilities it reads from `/proc`.
//!
//! Each tool is a thin binary under `src/bin/`.

#![forbid(unsafe_op_in_unsafe_fn)]

pub mod genl;
pub mod getopt;
pub mod netlink;
pub mod scripted;
pub mod smc_chk;
pub mod smc_diag;
pub mod smc_pnet;
pub mod smc_run;
pub mod smc_run_bpf;
pub mod smcr;
pub mod smcss;

/// The version every tool reports.
pub const VERSION: &str = env!("CARGO_PKG_VERSION");

/// `EXIT_FAILURE`: what upstream's tools return on every error.
pub const EXIT_FAILURE: i32 = 1;

/// Gives `SIGPIPE` back its default action, as a C program has it, so that
/// `smcss | head -1` ends quietly instead of failing on a write error.
pub fn default_sigpipe() {
    // SAFETY: setting the default disposition of a signal has no
    // preconditions; no handler of ours is replaced.
    unsafe {
        libc::signal(libc::SIGPIPE, libc::SIG_DFL);
    }
}

/// `getuid()`: the real user id (upstream names per-user files after it).
pub fn uid() -> u32 {
    // SAFETY: `getuid()` has no preconditions and cannot fail.
    unsafe { libc::getuid() }
}

/// `flock(fd, LOCK_EX)`: waits for an exclusive lock on `file`, held until
/// the file is closed.
pub fn lock_exclusive(file: &std::fs::File) -> std::io::Result<()> {
    use std::os::fd::AsRawFd;
    loop {
        // SAFETY: the descriptor is open for as long as `file` is borrowed;
        // `flock()` touches no memory of ours.
        let rc = unsafe { libc::flock(file.as_raw_fd(), libc::LOCK_EX) };
        if rc == 0 {
            return Ok(());
        }
        let err = std::io::Error::last_os_error();
        if err.kind() != std::io::ErrorKind::Interrupted {
            return Err(err);
        }
    }
}

/// The program name as C's tools print it: the last component of `argv[0]`.
pub fn progname(argv0: Option<&str>, default: &'static str) -> String {
    match argv0 {
        Some(a) if !a.is_empty() => a.rsplit('/').next().unwrap_or(a).to_string(),
        _ => default.to_string(),
    }
}

/// `strerror(code)`, as `perror(3)` prints it: the text without Rust's
/// " (os error N)" suffix.
pub fn strerror(code: i32) -> String {
    let text = std::io::Error::from_raw_os_error(code).to_string();
    match text.rfind(" (os error ") {
        Some(at) => text[..at].to_string(),
        None => text,
    }
}

/// Text from the kernel (device names, GIDs, UEIDs, host names) as `%s`
/// prints it, but with bytes that are not printable ASCII shown as `?`: a
/// line of output stays one line whatever a reply holds.
pub fn printable(b: &[u8]) -> String {
    b.iter()
        .map(|&c| {
            if (0x20..0x7f).contains(&c) {
                c as char
            } else {
                '?'
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn progname_is_basename() {
        assert_eq!(progname(Some("/usr/sbin/smcss"), "x"), "smcss");
        assert_eq!(progname(Some("smcss"), "x"), "smcss");
        assert_eq!(progname(Some(""), "smcss"), "smcss");
        assert_eq!(progname(None, "smcss"), "smcss");
        assert_eq!(progname(Some("dir/"), "smcss"), "");
    }

    #[test]
    fn printable_ascii_only() {
        assert_eq!(printable(b"ab c~"), "ab c~");
        assert_eq!(printable(b"a\nb\x7f\xc3\x84"), "a?b???");
    }

    #[test]
    fn exclusive_lock_on_a_file() {
        let path = std::env::temp_dir().join(format!("smc_tools-lock-{}", std::process::id()));
        let f = std::fs::File::create(&path).expect("create");
        assert!(lock_exclusive(&f).is_ok());
        // Locking again through the same open file is allowed.
        assert!(lock_exclusive(&f).is_ok());
        drop(f);
        let _ = std::fs::remove_file(&path);
        assert_eq!(uid(), uid());
    }

    #[test]
    fn strerror_like_perror() {
        assert_eq!(strerror(libc::ENOENT), "No such file or directory");
        assert_eq!(strerror(libc::EPERM), "Operation not permitted");
    }
}

/// Another tool of ours by name: the one beside the running program
/// (`make install` puts them together, as cargo does), else `name` for a
/// search of `PATH`.
pub fn sibling_tool(name: &str) -> std::path::PathBuf {
    std::env::current_exe()
        .ok()
        .and_then(|p| p.parent().map(|d| d.join(name)))
        .filter(|p| p.exists())
        .unwrap_or_else(|| std::path::PathBuf::from(name))
}
