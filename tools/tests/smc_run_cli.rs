// SPDX-License-Identifier: GPL-2.0

//! `smc_run` end to end on this host: usage, version, errors and exit
//! codes as upstream's script has them; the environment the program gets;
//! and, when cargo has built the preload library next to `smc_run`, a
//! program's TCP socket under it (AF_SMC where the kernel has it, TCP by
//! fallback where it does not), UDP left alone.

use std::path::PathBuf;
use std::process::{Command, Output};

fn smc_run(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_smc_run"))
        .args(args)
        .env_remove("LD_PRELOAD")
        .output()
        .expect("smc_run runs")
}

fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

/// Whether the preload library is where `smc_run` looks for it.
fn library_built() -> bool {
    let exe = PathBuf::from(env!("CARGO_BIN_EXE_smc_run"));
    let dir = exe.parent().expect("a directory");
    dir.join("libsmc_preload.so").is_file()
}

#[test]
fn usage_version_errors() {
    let o = smc_run(&["-h"]);
    assert_eq!(o.status.code(), Some(0));
    assert!(stdout(&o).starts_with("\nUsage: smc_run [ OPTIONS ] COMMAND\n"));
    assert!(stdout(&o).contains("   -r <SIZE>  request receive buffer size in Bytes\n"));
    let o = smc_run(&["-v"]);
    assert_eq!(o.status.code(), Some(0));
    assert!(stdout(&o).starts_with("smc_run utility, smc_rs-tools-"));
    for (args, text) in [
        (&[][..], "smc_run: Error: Missing command parameter\n"),
        (&["-x", "true"][..], "smc_run: Error: Invalid option: -x\n"),
        (
            &["-r", "1g", "true"][..],
            "Error: Invalid buffer size specified: '1g'\n",
        ),
    ] {
        let o = smc_run(args);
        assert_eq!(o.status.code(), Some(1), "{args:?}");
        assert_eq!(stdout(&o), text, "{args:?}");
    }
}

#[test]
fn program_not_there() {
    if !library_built() {
        eprintln!("preload library not built next to smc_run: skipped");
        return;
    }
    let o = smc_run(&["/nonexistent/program"]);
    assert_eq!(o.status.code(), Some(127));
    // Without an SMC module on this host, a warning comes first.
    let warning = format!("{}\n", smc_tools::smc_run::no_module_warning());
    let err = String::from_utf8_lossy(&o.stderr).into_owned();
    let rest = err.strip_prefix(&warning).unwrap_or(&err);
    assert_eq!(rest, "smc_run: /nonexistent/program: command not found\n");
    assert_eq!(err.starts_with(&warning), !af_smc_here(), "{err}");
}

/// Whether this host has an AF_SMC module (loaded on demand by the call).
fn af_smc_here() -> bool {
    // SAFETY: plain system call; a descriptor it returns is closed here.
    let fd = unsafe { libc::socket(43, libc::SOCK_STREAM, 0) };
    if fd >= 0 {
        // SAFETY: `fd` is ours.
        unsafe { libc::close(fd) };
    }
    fd >= 0 || std::io::Error::last_os_error().raw_os_error() != Some(libc::EAFNOSUPPORT)
}

#[test]
fn environment_of_the_program() {
    if !library_built() {
        eprintln!("preload library not built next to smc_run: skipped");
        return;
    }
    let script = "echo \"$LD_PRELOAD|$SMC_DEBUG|${SMC_RCVBUF-unset}|${SMC_SNDBUF-unset}\"";
    let o = smc_run(&["sh", "-c", script]);
    assert_eq!(o.status.code(), Some(0));
    let line = stdout(&o);
    let fields: Vec<&str> = line.trim_end().split('|').collect();
    assert!(fields[0].ends_with("/libsmc_preload.so"), "{line}");
    assert_eq!(&fields[1..], ["0", "unset", "unset"]);
    // Options end at the program: its own -d and -r are its own.
    let o = smc_run(&["-d", "-r", "64k", "-t1M", "sh", "-c", script, "-d", "-r"]);
    let line = stdout(&o);
    let fields: Vec<&str> = line.trim_end().split('|').collect();
    assert_eq!(&fields[1..], ["1", "65536", "1048576"]);
    // The exit status is the program's.
    assert_eq!(smc_run(&["sh", "-c", "exit 7"]).status.code(), Some(7));
}

#[test]
fn sockets_under_the_library() {
    if !library_built() {
        eprintln!("preload library not built next to smc_run: skipped");
        return;
    }
    // SO_DOMAIN of a TCP and of a UDP socket, as a shell cannot make them:
    // python3 is there on the build host (Debian's setup installs it).
    let probe = "import socket\n\
        t = socket.socket(socket.AF_INET, socket.SOCK_STREAM | socket.SOCK_NONBLOCK)\n\
        u = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)\n\
        print(t.getsockopt(socket.SOL_SOCKET, 39), t.getblocking(), u.getsockopt(socket.SOL_SOCKET, 39))\n";
    let Ok(o) = Command::new(env!("CARGO_BIN_EXE_smc_run"))
        .args(["-d", "python3", "-c", probe])
        .env_remove("LD_PRELOAD")
        .output()
    else {
        return;
    };
    if o.status.code() == Some(127) {
        eprintln!("no python3: skipped");
        return;
    }
    let out = stdout(&o);
    let err = String::from_utf8_lossy(&o.stderr).into_owned();
    let smc_here = std::fs::read_to_string("/proc/net/protocols")
        .map(|p| p.lines().any(|l| l.starts_with("SMC ")))
        .unwrap_or(false);
    if smc_here {
        assert_eq!(out, "43 False 2\n", "{err}");
        assert!(err.contains("libsmc-preload: map sock to AF_SMC"), "{err}");
    } else if out == "43 False 2\n" {
        // The module was loaded on demand by the AF_SMC socket() call.
        assert!(err.contains("libsmc-preload: map sock to AF_SMC"), "{err}");
    } else {
        assert_eq!(out, "2 False 2\n", "{err}");
        assert!(
            err.contains("AF_SMC socket failed (errno 97), keeping TCP"),
            "{err}"
        );
    }
}

#[test]
fn bpf_usage_and_errors() {
    let o = smc_run(&["--help"]);
    assert_eq!(o.status.code(), Some(0));
    assert!(stdout(&o).contains("\nUsage: smc_run --bpf [ -v ] COMMAND\n"));
    assert!(stdout(&o).contains("   --cgroup <PATH>  no COMMAND"));
    let o = smc_run(&["--bpf", "--help"]);
    assert_eq!(o.status.code(), Some(0));
    assert!(stdout(&o).starts_with("\nUsage: smc_run [ OPTIONS ] COMMAND\n"));
    let o = smc_run(&["--bpf", "--version"]);
    assert_eq!(o.status.code(), Some(0));
    assert!(stdout(&o).starts_with("smc_run utility, smc_rs-tools-"));
    for (args, text) in [
        (
            &["--bpf"][..],
            "smc_run: Error: Missing command parameter\n",
        ),
        (
            &["--bpf", "-t", "1m", "true"][..],
            "smc_run: Error: Option -t needs the preload mode (not --bpf)\n",
        ),
        (
            &["--cgroup", "/x"][..],
            "smc_run: Error: --cgroup needs --bpf\n",
        ),
    ] {
        let o = smc_run(args);
        assert_eq!(o.status.code(), Some(1), "{args:?}");
        assert_eq!(stdout(&o), text, "{args:?}");
    }
}

/// `smc_run --bpf` on this host: the command runs (a kernel with the hook
/// and SMC, and the privileges), or one of the clear errors, exit 1.
#[test]
fn bpf_on_this_host() {
    let o = smc_run(&["--bpf", "true"]);
    let err = String::from_utf8_lossy(&o.stderr).into_owned();
    if o.status.code() == Some(0) {
        return;
    }
    assert_eq!(o.status.code(), Some(1), "{err}");
    let known = [
        "smc_run: --bpf needs CAP_BPF and CAP_SYS_ADMIN\n",
        "smc_run: SMC module not loaded (socket(AF_INET, SOCK_STREAM, IPPROTO_SMC): ",
        "smc_run: kernel has no update_socket_protocol hook for BPF",
        "smc_run: the kernel does not permit the BPF program",
    ];
    assert!(known.iter().any(|k| err.starts_with(k)), "{err}");
}

/// Without the capabilities (as `nobody`, when the tests run as root):
/// the first check says so.
#[test]
fn bpf_without_privileges() {
    use std::os::unix::process::CommandExt;
    if smc_tools::uid() != 0 {
        eprintln!("not root: skipped");
        return;
    }
    let Ok(o) = Command::new(env!("CARGO_BIN_EXE_smc_run"))
        .args(["--bpf", "true"])
        .uid(65534)
        .gid(65534)
        .output()
    else {
        return;
    };
    let err = String::from_utf8_lossy(&o.stderr).into_owned();
    if o.status.code() == Some(126) || err.contains("Permission denied") {
        eprintln!("smc_run not executable by nobody here: skipped");
        return;
    }
    assert_eq!(o.status.code(), Some(1), "{err}");
    assert_eq!(err, "smc_run: --bpf needs CAP_BPF and CAP_SYS_ADMIN\n");
    assert!(o.stdout.is_empty());
}
