// SPDX-License-Identifier: GPL-2.0

//! `smc_dbg`: collects what a support case about SMC needs, as upstream
//! smc-tools' `smc_dbg(8)` does: versions, devices, sockets, link groups,
//! the PNET table, statistics, EIDs, the `net.smc` sysctls and the kernel's
//! SMC messages; on stdout, or with `-t` one file per part in a `.tgz`.

use smc_tools::getopt::{self, Event, Opt};
use smc_tools::{default_sigpipe, EXIT_FAILURE};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{exit, Command};

const OPTS: &[Opt] = &[
    Opt::flag('h', "help"),
    Opt::flag('t', "tgz"),
    Opt::flag('v', "version"),
];

/// The parts: a file name and the commands whose output goes into it (a
/// command is a program and its arguments; `@sysctl` reads `net.smc`).
const PARTS: &[(&str, &[&[&str]])] = &[
    (
        "version.txt",
        &[
            &["smcss", "-v"],
            &["smcr", "-v"],
            &["smc_pnet", "-v"],
            &["smc_chk", "-v"],
            &["smc_dbg", "-v"],
            &["uname", "-a"],
            &["@modules"],
        ],
    ),
    ("devices.txt", &[&["smcr", "-d", "device"], &["smcd", "-d", "device"], &["rdma", "link", "show"]]),
    ("smcss_all.txt", &[&["smcss", "--all", "--debug"]]),
    ("smcss_smcr.txt", &[&["smcss", "--smcr"]]),
    ("smcss_smcd.txt", &[&["smcss", "--smcd"]]),
    ("pnet_table.txt", &[&["smc_pnet", "--show"]]),
    ("smcr_links.txt", &[&["smcr", "-d", "linkgroup", "link-show"]]),
    ("smcd_lgs.txt", &[&["smcd", "-d", "linkgroup"]]),
    ("stats.txt", &[&["smcr", "-d", "stats"], &["smcd", "-d", "stats"]]),
    ("eids.txt", &[&["smcr", "ueid", "show"], &["smcd", "seid", "show"], &["smcd", "info"]]),
    ("sysctl.txt", &[&["@sysctl"]]),
    ("dmesg.txt", &[&["@dmesg"]]),
];

fn usage() -> &'static str {
    "\nUsage: smc_dbg [ OPTIONS ]\n\n\
     Collect debug information\n\n\
     \x20  -h, --help           display this message\n\
     \x20  -t, --tgz            generate .tgz file\n\
     \x20  -v, --version        display version info\n\n"
}

/// The `net.smc` sysctls, as `sysctl net.smc` prints them.
fn sysctls() -> String {
    let mut names: Vec<PathBuf> = std::fs::read_dir("/proc/sys/net/smc")
        .map(|d| d.flatten().map(|e| e.path()).collect())
        .unwrap_or_default();
    names.sort();
    names
        .iter()
        .filter_map(|p| {
            let v = std::fs::read_to_string(p).ok()?;
            let name = p.file_name()?.to_string_lossy().into_owned();
            Some(format!("net.smc.{name} = {}\n", v.trim_end()))
        })
        .collect()
}

/// How a part's header names a command (those of our own by what they
/// read).
fn header(cmd: &[&str]) -> String {
    match cmd.first().copied() {
        Some("@sysctl") => "sysctl net.smc".into(),
        Some("@modules") => "the SMC modules loaded (/proc/modules, srcversion)".into(),
        Some("@dmesg") => "dmesg (the lines about SMC and RDMA)".into(),
        _ => cmd.join(" "),
    }
}

/// One command's output, introduced by the command line.
fn output(cmd: &[&str]) -> String {
    let mut s = format!("# {}\n", header(cmd));
    match cmd.first().copied() {
        Some("@sysctl") => s += &sysctls(),
        Some("@modules") => {
            s += &std::fs::read_to_string("/proc/modules")
                .unwrap_or_default()
                .lines()
                .filter(|l| l.starts_with("smc"))
                .map(|l| format!("{l}\n"))
                .collect::<String>();
            for m in ["smc_rs", "smc"] {
                if let Ok(v) = std::fs::read_to_string(format!("/sys/module/{m}/srcversion")) {
                    s += &format!("{m} srcversion {}", v);
                }
            }
        }
        Some("@dmesg") => {
            let out = Command::new("dmesg").output().map(|o| o.stdout).unwrap_or_default();
            for l in String::from_utf8_lossy(&out).lines() {
                let low = l.to_ascii_lowercase();
                if low.contains("smc") || low.contains("rxe") || low.contains("infiniband") {
                    s += l;
                    s.push('\n');
                }
            }
        }
        Some(prog) => {
            let path = if prog.starts_with("smc") { smc_tools::sibling_tool(prog) } else { PathBuf::from(prog) };
            match Command::new(path).args(&cmd[1..]).output() {
                Ok(o) => {
                    s += &String::from_utf8_lossy(&o.stdout);
                    s += &String::from_utf8_lossy(&o.stderr);
                }
                Err(e) => s += &format!("(not run: {e})\n"),
            }
        }
        None => {}
    }
    s.push('\n');
    s
}

/// Writes every part into `dir`, then `dir.tgz`; its path.
fn tgz(dir: &Path) -> std::io::Result<PathBuf> {
    for (file, cmds) in PARTS {
        let mut f = std::fs::File::create(dir.join(file))?;
        for c in *cmds {
            f.write_all(output(c).as_bytes())?;
        }
    }
    let parent = dir.parent().unwrap_or(Path::new("/tmp"));
    let name = dir.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
    let out = parent.join(format!("{name}.tgz"));
    let st = Command::new("tar").arg("czf").arg(&out).arg("-C").arg(parent).arg(&name).status()?;
    std::fs::remove_dir_all(dir)?;
    if !st.success() {
        return Err(std::io::Error::other("tar failed"));
    }
    Ok(out)
}

fn main() {
    default_sigpipe();
    let args: Vec<String> = std::env::args().skip(1).collect();
    let mut want_tgz = false;
    for ev in getopt::parse(&args, OPTS) {
        match ev {
            Event::Opt('h', _) => {
                print!("{}", usage());
                exit(0);
            }
            Event::Opt('v', _) => {
                println!("smc_dbg utility, smc_rs-tools-{}", smc_tools::VERSION);
                exit(0);
            }
            Event::Opt('t', _) => want_tgz = true,
            Event::Error(m) => {
                eprintln!("smc_dbg: {m}");
                eprint!("{}", usage());
                exit(EXIT_FAILURE);
            }
            _ => {}
        }
    }
    if !want_tgz {
        let mut out = std::io::stdout().lock();
        for (_, cmds) in PARTS {
            for c in *cmds {
                if out.write_all(output(c).as_bytes()).is_err() {
                    exit(EXIT_FAILURE);
                }
            }
        }
        exit(0);
    }
    let dir = std::env::temp_dir().join(format!("smc_dbg-{}", std::process::id()));
    let made = std::fs::create_dir(&dir).and_then(|()| tgz(&dir));
    match made {
        Ok(p) => println!("Debug output written to {}", p.display()),
        Err(e) => {
            eprintln!("Error: cannot write the debug output: {e}");
            exit(EXIT_FAILURE);
        }
    }
}
