// SPDX-License-Identifier: GPL-2.0

//! `smc_chk`: checks an SMC setup, as upstream smc-tools' `smc_chk(8)`;
//! see `smc_tools::smc_chk`.

use smc_tools::smc_chk::{self, Action, Mode, Options};
use smc_tools::{default_sigpipe, EXIT_FAILURE};
use std::net::SocketAddr;
use std::process::{exit, Command};

fn main() {
    default_sigpipe();
    let args: Vec<String> = std::env::args().skip(1).collect();
    let code = match smc_chk::parse_args(&args) {
        Action::Help => {
            print!("{}", smc_chk::usage());
            0
        }
        Action::Version => {
            print!("{}", smc_chk::version());
            0
        }
        Action::Usage(m) => {
            eprintln!("{m}");
            2
        }
        Action::Run(o) => run(&o),
    };
    exit(code);
}

fn debug(o: &Options, what: &str) {
    if o.debug {
        println!("[DEBUG] {what}");
    }
}

/// The output of another tool of ours, or nothing.
fn tool_output(name: &str, args: &[&str]) -> String {
    Command::new(smc_tools::sibling_tool(name))
        .args(args)
        .output()
        .map(|o| String::from_utf8_lossy(&o.stdout).into_owned())
        .unwrap_or_default()
}

fn iface_exists(i: &str) -> bool {
    !i.contains('/') && std::path::Path::new("/sys/class/net").join(i).exists()
}

/// Whether interface `i` is up (`IFF_UP`).
fn iface_up(i: &str) -> bool {
    std::fs::read_to_string(format!("/sys/class/net/{i}/flags"))
        .ok()
        .and_then(|f| u32::from_str_radix(f.trim().trim_start_matches("0x"), 16).ok())
        .is_some_and(|f| f & 1 != 0)
}

/// The interfaces that are up, in index order.
fn active_ifaces() -> Vec<String> {
    let mut all: Vec<(u32, String)> = std::fs::read_dir("/sys/class/net")
        .map(|d| {
            d.flatten()
                .filter_map(|e| {
                    let name = e.file_name().to_string_lossy().into_owned();
                    let idx = std::fs::read_to_string(e.path().join("ifindex")).ok()?;
                    Some((idx.trim().parse().ok()?, name))
                })
                .collect()
        })
        .unwrap_or_default();
    all.sort();
    all.into_iter().map(|(_, n)| n).filter(|n| iface_up(n)).collect()
}

/// The first address of `i` that is not link-local (`ip addr show`).
fn iface_addr(i: &str) -> Option<std::net::IpAddr> {
    let out = Command::new("ip").args(["-o", "addr", "show", "dev", i]).output().ok()?;
    String::from_utf8_lossy(&out.stdout).lines().find_map(|l| {
        let w: Vec<&str> = l.split_whitespace().collect();
        if l.contains("scope link") {
            return None;
        }
        let at = w.iter().position(|x| *x == "inet" || *x == "inet6")?;
        w.get(at + 1)?.split('/').next()?.parse().ok()
    })
}

/// The interface's PNET ID from the PNET table (`smc_pnet`), marked `*`
/// as set by software.
fn pnetid(i: &str) -> Option<String> {
    tool_output("smc_pnet", &[]).lines().find_map(|l| {
        let w: Vec<&str> = l.split_whitespace().collect();
        (w.get(1) == Some(&i)).then(|| format!("{}*", w.first().copied().unwrap_or_default()))
    })
}

/// The SMC-D static analysis of interface `i`.
fn analyze(o: &Options, i: &str) {
    println!("  Static Analysis (SMC-D only, EXPERIMENTAL)");
    let devices = tool_output("smcd", &["device"]);
    let fids: Vec<&str> = devices
        .lines()
        .skip(1)
        .filter_map(|l| l.split_whitespace().next())
        .collect();
    debug(o, &format!("SMC-D devices: {fids:?}"));
    if fids.is_empty() {
        println!("     Configuration:      SMC-D not configured\n");
        return;
    }
    println!("     Configuration:      SMC-Dv2 (ISMv2 FID(s): {})", fids.join(" "));
    println!("     PNET ID:            {}", pnetid(i).unwrap_or_default());
    let seid = tool_output("smcd", &["seid", "show"]);
    if let Some(s) = seid.lines().find(|l| l.contains("[enabled]")) {
        println!("     Advertising SEID:   {}", s.split_whitespace().next().unwrap_or_default());
    }
    for (n, u) in tool_output("smcd", &["ueid", "show"]).lines().enumerate() {
        let label = if n == 0 { "     Advertising UEIDs:  " } else { "                         " };
        println!("{label}{}", u.trim());
    }
    println!("     Reachable subnets:  Any\n");
}

/// The live test of interface `i` against our servers.
fn test_iface(o: &Options, i: &str, port: u16, port6: u16, experimental: bool) {
    println!(
        "  Live test (SMC-D and SMC-R{})",
        if experimental { ", EXPERIMENTAL" } else { "" }
    );
    let Some(ip) = iface_addr(i) else {
        println!("     No usable IP address configured, skipping\n");
        return;
    };
    let to = SocketAddr::new(ip, if ip.is_ipv6() { port6 } else { port });
    debug(o, &format!("client to {to}"));
    print!("{}", smc_chk::live_test(&to, o.debug));
    println!();
}

fn run(o: &Options) -> i32 {
    match &o.mode {
        Mode::Server => {
            let (l, p) = match smc_chk::listen_free(o.port, o.ipv6) {
                Ok(x) => x,
                Err(e) => {
                    eprintln!("Error: Cannot start server: {e}");
                    return EXIT_FAILURE;
                }
            };
            println!("Server started on port {p}");
            smc_chk::serve(&l, o.debug);
            0
        }
        Mode::Connect(host) => {
            let Some(to) = smc_chk::resolve(host, o.port, o.ipv6) else {
                eprintln!("Error: Unknown destination '{host}'");
                return EXIT_FAILURE;
            };
            println!("Test with target IP {} and port {}", to.ip(), to.port());
            println!("  Live test (SMC-D and SMC-R)");
            print!("{}", smc_chk::live_test(&to, o.debug));
            println!();
            0
        }
        Mode::PnetId(i) => {
            if !iface_exists(i) {
                eprintln!("Error: Interface {i} does not exist");
                return EXIT_FAILURE;
            }
            if let Some(p) = pnetid(i) {
                println!("{p}");
            }
            0
        }
        Mode::Live | Mode::Static | Mode::All => {
            let ifaces = if o.ifaces.is_empty() { active_ifaces() } else { o.ifaces.clone() };
            for i in &ifaces {
                if !iface_exists(i) {
                    eprintln!("Error: Interface {i} does not exist");
                    return EXIT_FAILURE;
                }
                if !iface_up(i) {
                    eprintln!("Error: {i} is not an active interface");
                    return 2;
                }
            }
            let live = o.mode != Mode::Static;
            // Servers of our own for both families: which an interface
            // needs is known only from its address.
            let mut ports = (o.port, o.port);
            if live {
                let (l4, p4) = match smc_chk::listen_free(o.port, false) {
                    Ok(x) => x,
                    Err(e) => {
                        eprintln!("Error: Cannot start server: {e}");
                        return EXIT_FAILURE;
                    }
                };
                ports.0 = p4;
                std::thread::spawn(move || smc_chk::serve(&l4, false));
                if let Ok((l6, p6)) = smc_chk::listen_free(p4.saturating_add(1), true) {
                    ports.1 = p6;
                    std::thread::spawn(move || smc_chk::serve(&l6, false));
                }
                debug(o, &format!("servers on ports {} and {}", ports.0, ports.1));
            }
            for i in &ifaces {
                println!("Checking active link:    {i}");
                if o.mode != Mode::Live {
                    analyze(o, i);
                }
                if live {
                    test_iface(o, i, ports.0, ports.1, true);
                }
            }
            0
        }
    }
}
