// SPDX-License-Identifier: GPL-2.0

//! The command of `smc_run --bpf` in its cgroup, and `smc_run` waiting for
//! it. SIGINT, SIGTERM and SIGCHLD are blocked in `smc_run` and taken one
//! at a time with `sigwaitinfo()`: a SIGINT or SIGTERM sent to `smc_run`
//! (by `kill`) is passed on to the command; one from the terminal (the
//! kernel's, `SI_KERNEL`) is not, as the terminal sends it to the command
//! too. The command starts with the mask `smc_run` had before (the child
//! unblocks the three before `exec`; the standard library passes the mask
//! on as it is).

use std::ffi::OsString;
use std::fs::File;
use std::io::{self, Write};
use std::mem::MaybeUninit;
use std::os::unix::process::{CommandExt, ExitStatusExt};
use std::process::{Child, Command, ExitStatus};

/// The signals `smc_run --bpf` takes itself, blocked.
pub struct Signals {
    set: libc::sigset_t,
}

impl Signals {
    /// Blocks SIGINT, SIGTERM and SIGCHLD in this (single-threaded)
    /// process, so that they wait for [`Signals::next`].
    pub fn block() -> io::Result<Self> {
        let mut set = MaybeUninit::<libc::sigset_t>::uninit();
        // SAFETY: `sigemptyset()` initialises the set it is given, which
        // is valid for writes.
        if unsafe { libc::sigemptyset(set.as_mut_ptr()) } != 0 {
            return Err(io::Error::last_os_error());
        }
        // SAFETY: initialised by `sigemptyset()` above.
        let mut set = unsafe { set.assume_init() };
        for signal in [libc::SIGINT, libc::SIGTERM, libc::SIGCHLD] {
            // SAFETY: `set` is an initialised set; the signals are valid.
            unsafe {
                libc::sigaddset(&mut set, signal);
            }
        }
        // SAFETY: `set` is initialised; the old mask is not asked for.
        let rc = unsafe { libc::sigprocmask(libc::SIG_BLOCK, &set, std::ptr::null_mut()) };
        if rc != 0 {
            return Err(io::Error::last_os_error());
        }
        Ok(Self { set })
    }

    /// Waits for one of the blocked signals: its number, and whether a
    /// process sent it (rather than the kernel, as a terminal's SIGINT).
    pub fn next(&self) -> io::Result<(i32, bool)> {
        loop {
            let mut info = MaybeUninit::<libc::siginfo_t>::uninit();
            // SAFETY: `self.set` is an initialised set; `info` is valid for
            // writes of a `siginfo_t`.
            let signal = unsafe { libc::sigwaitinfo(&self.set, info.as_mut_ptr()) };
            if signal > 0 {
                // SAFETY: `sigwaitinfo()` filled `info` when it returned a
                // signal.
                let info = unsafe { info.assume_init() };
                return Ok((signal, info.si_code != libc::SI_KERNEL));
            }
            let err = io::Error::last_os_error();
            if err.kind() != io::ErrorKind::Interrupted {
                return Err(err);
            }
        }
    }

    /// Waits for SIGINT or SIGTERM (the end of `--cgroup` mode); returns it.
    pub fn wait_for_stop(&self) -> io::Result<i32> {
        loop {
            let (signal, _) = self.next()?;
            if signal == libc::SIGINT || signal == libc::SIGTERM {
                return Ok(signal);
            }
        }
    }
}

/// Starts `command` (not empty) so that it joins the cgroup whose
/// `cgroup.procs` is `procs` before it is executed: every socket it and
/// its children make is seen from inside the cgroup. The signals
/// `signals` blocks are unblocked in the command.
pub fn spawn_in_cgroup(command: &[OsString], procs: File, signals: &Signals) -> io::Result<Child> {
    let (program, args) = command
        .split_first()
        .ok_or_else(|| io::Error::new(io::ErrorKind::InvalidInput, "no command"))?;
    let mut cmd = Command::new(program);
    cmd.args(args);
    let blocked = signals.set;
    let prepare = move || {
        (&procs).write_all(b"0")?;
        // SAFETY: `blocked` is an initialised set (a copy of `Signals`');
        // the old mask is not asked for.
        let rc = unsafe { libc::sigprocmask(libc::SIG_UNBLOCK, &blocked, std::ptr::null_mut()) };
        if rc != 0 {
            return Err(io::Error::last_os_error());
        }
        Ok(())
    };
    // SAFETY: the closure runs in the forked child before `exec`; it makes
    // a `write()` on a descriptor that is open in the child (inherited,
    // closed by `exec`) and a `sigprocmask()`, both async-signal-safe; it
    // allocates nothing and takes no lock, so it is sound after `fork()`
    // (and `smc_run` has one thread).
    unsafe {
        cmd.pre_exec(prepare);
    }
    cmd.spawn()
}

/// Waits for `child`, passing on SIGINT and SIGTERM sent to `smc_run`.
pub fn wait_forwarding(child: &mut Child, signals: &Signals) -> io::Result<ExitStatus> {
    let pid = libc::pid_t::try_from(child.id())
        .map_err(|_| io::Error::new(io::ErrorKind::InvalidData, "a pid out of range"))?;
    loop {
        if let Some(status) = child.try_wait()? {
            return Ok(status);
        }
        let (signal, from_process) = signals.next()?;
        if (signal == libc::SIGINT || signal == libc::SIGTERM) && from_process {
            // SAFETY: `kill()` touches no memory of ours; the child is not
            // reaped yet (only this loop reaps it), so `pid` is still it.
            unsafe {
                libc::kill(pid, signal);
            }
        }
    }
}

/// Ends `smc_run` as the command ended: with its exit code, or killed by
/// its signal (without a core file of `smc_run`'s own).
pub fn exit_as(status: ExitStatus) -> ! {
    if let Some(code) = status.code() {
        std::process::exit(code);
    }
    let Some(signal) = status.signal() else {
        std::process::exit(smc_tools::EXIT_FAILURE);
    };
    let no_core = libc::rlimit {
        rlim_cur: 0,
        rlim_max: 0,
    };
    let mut all = MaybeUninit::<libc::sigset_t>::uninit();
    // SAFETY: `setrlimit()` reads the limit it is given; `signal()` sets a
    // default action; `sigfillset()` initialises `all`, which
    // `sigprocmask()` then reads; `raise()` takes a signal number the
    // kernel has just reported.
    unsafe {
        libc::setrlimit(libc::RLIMIT_CORE, &no_core);
        libc::signal(signal, libc::SIG_DFL);
        if libc::sigfillset(all.as_mut_ptr()) == 0 {
            libc::sigprocmask(libc::SIG_UNBLOCK, all.as_ptr(), std::ptr::null_mut());
        }
        libc::raise(signal);
    }
    // A signal whose default is not to end a process.
    std::process::exit(128 + signal);
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The command writes `0` to `cgroup.procs` (a plain file here) and
    /// starts with no signal blocked although `smc_run` blocks three.
    #[test]
    fn command_joins_and_starts_unblocked() {
        let dir = std::env::temp_dir().join(format!("smc_run-child-{}", std::process::id()));
        std::fs::create_dir_all(&dir).expect("a temporary directory");
        let procs_path = dir.join("cgroup.procs");
        let mask_path = dir.join("mask");
        let procs = File::create(&procs_path).expect("a file");
        // Blocks in this test's thread only; the child inherits its mask.
        let signals = Signals::block().expect("signals blocked");
        let script = format!("grep ^SigBlk /proc/self/status >{}", mask_path.display());
        let command: Vec<OsString> = ["sh", "-c", &script].iter().map(OsString::from).collect();
        let mut child = spawn_in_cgroup(&command, procs, &signals).expect("sh runs");
        let status = child.wait().expect("sh ends");
        assert!(status.success());
        assert_eq!(std::fs::read(&procs_path).expect("written"), b"0");
        let mask = std::fs::read_to_string(&mask_path).expect("sh wrote its mask");
        assert_eq!(mask.trim_end(), "SigBlk:\t0000000000000000");
        let _ = std::fs::remove_dir_all(&dir);
    }
}
