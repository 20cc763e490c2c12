// SPDX-License-Identifier: GPL-2.0

//! `smcss`: print information about the AF_SMC sockets, as upstream
//! smc-tools' `smcss(8)` does, from the kernel's sock_diag interface.

use smc_tools::netlink::{self, DumpError, Socket, NETLINK_SOCK_DIAG};
use smc_tools::smc_diag::{dump_request, SockInfo, SOCK_DIAG_BY_FAMILY};
use smc_tools::smcss::{self, Action, Options, UsageError, MAGIC_SEQ};
use smc_tools::{default_sigpipe, progname, EXIT_FAILURE};
use std::io::{self, BufWriter, Write};
use std::process::exit;

fn main() {
    default_sigpipe();
    let argv: Vec<String> = std::env::args_os()
        .map(|a| a.to_string_lossy().into_owned())
        .collect();
    let prog = progname(argv.first().map(String::as_str), "smcss");
    let args = argv.get(1..).unwrap_or_default();
    let code = match smcss::parse_args(args) {
        Action::Help => print_text(&smcss::usage(&prog)),
        Action::Version => print_text(&smcss::version()),
        Action::Usage(msg) => {
            // getopt's own messages carry the program name; the conflicts
            // of upstream's main() do not.
            match msg {
                Some(UsageError::Getopt(m)) => eprintln!("{prog}: {m}"),
                Some(UsageError::Conflict(m)) => eprintln!("{m}"),
                None => {}
            }
            eprint!("{}", smcss::usage(&prog));
            EXIT_FAILURE
        }
        Action::Run(opts) => show(&opts),
    };
    exit(code);
}

/// Writes `line` unless an earlier write failed; keeps the first error.
fn emit(out: &mut impl Write, line: &str, err: &mut Option<io::Error>) {
    if err.is_none() {
        if let Err(e) = writeln!(out, "{line}") {
            *err = Some(e);
        }
    }
}

fn print_text(text: &str) -> i32 {
    let mut out = io::stdout().lock();
    if out
        .write_all(text.as_bytes())
        .and_then(|()| out.flush())
        .is_err()
    {
        return EXIT_FAILURE;
    }
    0
}

/// Dumps the AF_SMC sockets and prints the table; the exit code.
fn show(opts: &Options) -> i32 {
    let sock = match Socket::open(NETLINK_SOCK_DIAG) {
        Ok(s) => s,
        Err(e) => {
            eprintln!("Error: {e}");
            return EXIT_FAILURE;
        }
    };
    let mut out = BufWriter::new(io::stdout().lock());
    // The header goes out with the first answer, so that a failed request
    // (no AF_SMC handler) leaves stdout empty.
    let mut header_done = false;
    let mut write_err: Option<io::Error> = None;
    let request = dump_request(opts.diag_ext(), MAGIC_SEQ);
    let result = netlink::dump(
        &sock,
        &request,
        MAGIC_SEQ,
        |m| {
            if m.kind != SOCK_DIAG_BY_FAMILY {
                return;
            }
            if !header_done {
                header_done = true;
                emit(&mut out, &smcss::header(opts), &mut write_err);
            }
            let Some(info) = SockInfo::parse(m.payload) else {
                eprintln!(
                    "Error: Incomplete message ({} bytes of smc_diag_msg)",
                    m.payload.len()
                );
                return;
            };
            if let Some((left, len)) = info.deficit {
                eprintln!("Error: Deficit {left}, rta_len={len}");
            }
            if let Some(row) = smcss::row(opts, &info) {
                emit(&mut out, &row, &mut write_err);
            }
        },
        |w| eprintln!("{w}"),
    );
    let code = match result {
        Ok(()) => {
            if !header_done {
                emit(&mut out, &smcss::header(opts), &mut write_err);
            }
            0
        }
        Err(DumpError::Kernel(libc::ENOENT)) => {
            eprintln!("Error: SMC module not loaded (no sock_diag handler for AF_SMC)");
            EXIT_FAILURE
        }
        Err(e) => {
            eprintln!("{e}");
            EXIT_FAILURE
        }
    };
    if let Err(e) = out.flush() {
        write_err.get_or_insert(e);
    }
    if let Some(e) = write_err {
        eprintln!("Error: Cannot write output: {e}");
        return EXIT_FAILURE;
    }
    code
}
