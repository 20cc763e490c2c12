// SPDX-License-Identifier: GPL-2.0

//! `smcr` and `smcd`: upstream smc-tools builds both from one `smc.c`
//! (`-DSMCR`, `-DSMCD`); they differ in their name, their usage text and
//! `seid` (SMC-D only). Both talk to the SMC generic netlink family
//! (`SMC_GEN_NETLINK`). This version serves `device` ([`device`], SMC-D's
//! in [`smcd`]), `linkgroup` ([`linkgroup`], [`smcd`]), `ueid` ([`ueid`]),
//! `seid` ([`seid`]), `info` ([`info`]) and `stats` ([`stats`]); `dumpdev`
//! says that it is not supported yet.
//!
//! The command line is read as upstream's `main()` and `run_cmd()` read it
//! (smc-tools 1.8.x `smc.c`, `util.c`): options first, each one a prefix of
//! its long name (`contains()`), then the object, also by prefix, in the
//! order of upstream's `cmds[]` table, so `smcr d` is `device` and
//! `smcr u s` is `ueid show`. Exit codes are upstream's: 0; 1 when the
//! family cannot be resolved or the object is unknown (and, ours, not
//! served yet); 255 (`exit(-1)`,
//! or `-(EXIT_FAILURE)` returned from `main()`) for a bad option,
//! `-v`, an object's usage and any failure of an object, except that
//! `stats`, as upstream's, ends with 0 when the kernel refuses a dump.
//!
//! [`run`] is the whole program over a [`Transport`] and two writers, so
//! that it is tested on hand-laid netlink datagrams; [`main`] gives it the
//! socket, stdout and stderr.

mod common;
pub mod device;
pub mod info;
pub mod linkgroup;
pub mod seid;
pub mod smcd;
pub mod stats;
pub mod ueid;

use crate::genl::{self, Family, ResolveError};
use crate::netlink::{Socket, SocketError, Transport, NETLINK_GENERIC};
pub use common::{
    abbreviates, Detail, Flavor, Object, Output, EXIT_OBJECT_FAILURE, NOT_LOADED,
    SMC_GENL_FAMILY_NAME, SMC_GENL_FAMILY_VERSION, SMC_NETLINK_ADD_UEID, SMC_NETLINK_DISABLE_SEID,
    SMC_NETLINK_DUMP_SEID, SMC_NETLINK_DUMP_UEID, SMC_NETLINK_ENABLE_SEID, SMC_NETLINK_FLUSH_UEID,
    SMC_NETLINK_GET_DEV_SMCD, SMC_NETLINK_GET_DEV_SMCR, SMC_NETLINK_GET_FBACK_STATS,
    SMC_NETLINK_GET_STATS, SMC_NETLINK_GET_SYS_INFO, SMC_NETLINK_REMOVE_UEID,
};
use std::io::{self, Write};
use std::path::Path;

/// What the options ask for.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Start {
    /// `-h[elp]`: the usage on stderr, exit 0, no netlink.
    Help,
    /// `-v[ersion]`: the version on stderr, exit 255.
    Version,
    /// An unknown option (as upstream prints it: one leading `-` of `--`
    /// dropped): message, exit 255.
    BadOption(Vec<u8>),
    /// Go on with the arguments from index `rest`.
    Run {
        /// The last detail option.
        detail: Detail,
        /// Index of the object in the arguments.
        rest: usize,
    },
}

/// Reads the options as upstream's `main()` does: up to `--` or the first
/// argument not starting with `-`; `--name` is `-name`; each is tried as
/// `-ad`/`-da` (3 bytes), then as a prefix of `-absolute`, `-version`,
/// `-details`, `-ddetails`, `-help`, in that order.
pub fn parse_options(args: &[Vec<u8>]) -> Start {
    let mut detail = Detail::None;
    let mut i = 0;
    while let Some(arg) = args.get(i) {
        if arg.as_slice() == b"--" {
            i += 1;
            break;
        }
        if arg.first() != Some(&b'-') {
            break;
        }
        let opt = if arg.get(1) == Some(&b'-') {
            &arg[1..]
        } else {
            &arg[..]
        };
        if opt.starts_with(b"-ad") || opt.starts_with(b"-da") {
            detail = Detail::DetailsAbsolute;
        } else if abbreviates(opt, "-absolute") {
            detail = Detail::Absolute;
        } else if abbreviates(opt, "-version") {
            return Start::Version;
        } else if abbreviates(opt, "-details") {
            detail = Detail::Details;
        } else if abbreviates(opt, "-ddetails") {
            detail = Detail::MoreDetails;
        } else if abbreviates(opt, "-help") {
            return Start::Help;
        } else {
            return Start::BadOption(opt.to_vec());
        }
        i += 1;
    }
    Start::Run { detail, rest: i }
}

/// The object an argument names.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Lookup {
    /// The first object of the table it abbreviates.
    Found(Object),
    /// `smcr` given an abbreviation of `seid`.
    SmcdOnly,
    /// Nothing.
    Unknown,
}

/// `run_cmd()`'s search.
pub fn lookup(flavor: Flavor, arg: &[u8]) -> Lookup {
    if let Some(o) = flavor.objects().iter().find(|o| abbreviates(arg, o.name())) {
        return Lookup::Found(*o);
    }
    if flavor == Flavor::Smcr && abbreviates(arg, "seid") {
        return Lookup::SmcdOnly;
    }
    Lookup::Unknown
}

/// The usage text (`usage()` of `smc.c`; two blanks after the name are
/// upstream's).
pub fn usage(flavor: Flavor) -> String {
    let (objects, options) = match flavor {
        Flavor::Smcd => (
            "{info | linkgroup | device | stats | ueid | seid | dumpdev}",
            "{-v[ersion] | -d[etails] | -a[bsolute]}",
        ),
        Flavor::Smcr => (
            "{info | linkgroup | device | stats | ueid | dumpdev}",
            "{-v[ersion] | -d[etails] | -dd[etails] | -a[bsolute]}",
        ),
    };
    format!(
        "Usage: {}  [ OPTIONS ] OBJECT {{COMMAND | help}}\n\
         where  OBJECT := {objects}\n       \
         OPTIONS := {options}\n",
        flavor.name()
    )
}

/// The version line (upstream: `%s utility, smc-tools-%s`).
pub fn version(flavor: Flavor) -> String {
    format!(
        "{} utility, smc_rs-tools-{}\n",
        flavor.name(),
        crate::VERSION
    )
}

fn quoted_error(what: &str, arg: &[u8], tail: &str, flavor: Flavor) -> Vec<u8> {
    let mut m = format!("Error: {what} \"").into_bytes();
    m.extend_from_slice(arg);
    m.extend_from_slice(format!("\" {tail}, try \"{} help\".\n", flavor.name()).as_bytes());
    m
}

/// `Error: Option "X" is unknown, try "smcr help".`
pub fn bad_option(flavor: Flavor, opt: &[u8]) -> Vec<u8> {
    quoted_error("Option", opt, "is unknown", flavor)
}

/// `Error: Object "X" is unknown, try "smcr help".`
pub fn unknown_object(flavor: Flavor, arg: &[u8]) -> Vec<u8> {
    quoted_error("Object", arg, "is unknown", flavor)
}

/// `Error: Object "X" is valid for SMC-D only, try "smcr help".`
pub fn smcd_only(flavor: Flavor, arg: &[u8]) -> Vec<u8> {
    quoted_error("Object", arg, "is valid for SMC-D only", flavor)
}

/// Ours, for the objects this version does not serve.
pub fn not_supported(flavor: Flavor, object: Object) -> String {
    format!(
        "Error: Object \"{}\" is not supported yet by this version of {} (smc_rs-tools-{}).\n",
        object.name(),
        flavor.name(),
        crate::VERSION
    )
}

/// The whole program: `args` without `argv[0]`; `open` gives the netlink
/// transport once the options are read; `stats` keeps its cache file in
/// [`stats::default_cache_path`]. Returns the exit status.
pub fn run<T, O>(
    flavor: Flavor,
    args: &[Vec<u8>],
    open: O,
    out: &mut dyn Write,
    err: &mut dyn Write,
) -> i32
where
    T: Transport,
    O: FnOnce() -> Result<T, SocketError>,
{
    run_in(flavor, args, open, &stats::default_cache_path(), out, err)
}

/// [`run`] with the cache file of `stats` at `stats_cache`.
pub fn run_in<T, O>(
    flavor: Flavor,
    args: &[Vec<u8>],
    open: O,
    stats_cache: &Path,
    out: &mut dyn Write,
    err: &mut dyn Write,
) -> i32
where
    T: Transport,
    O: FnOnce() -> Result<T, SocketError>,
{
    let mut o = Output::new(out, err);
    let code = run_with(flavor, args, open, stats_cache, &mut o);
    o.finish(code)
}

fn run_with<T, O>(
    flavor: Flavor,
    args: &[Vec<u8>],
    open: O,
    stats_cache: &Path,
    o: &mut Output<'_>,
) -> i32
where
    T: Transport,
    O: FnOnce() -> Result<T, SocketError>,
{
    let (detail, rest) = match parse_options(args) {
        Start::Help => {
            o.err(usage(flavor).as_bytes());
            return 0;
        }
        Start::Version => {
            o.err(version(flavor).as_bytes());
            return EXIT_OBJECT_FAILURE;
        }
        Start::BadOption(opt) => {
            o.err(&bad_option(flavor, &opt));
            return EXIT_OBJECT_FAILURE;
        }
        Start::Run { detail, rest } => (detail, args.get(rest..).unwrap_or_default()),
    };
    // Upstream resolves the family before it looks at the object, so even
    // `smcr help` needs it.
    let sock = match open() {
        Ok(s) => s,
        Err(e) => {
            o.err_line(&format!("Error: {e}"));
            return crate::EXIT_FAILURE;
        }
    };
    let mut warn_text = Vec::new();
    let resolved = Family::resolve(
        &sock,
        SMC_GENL_FAMILY_NAME,
        SMC_GENL_FAMILY_VERSION,
        &mut |w| warn_text.push(w.to_string()),
    );
    for w in warn_text {
        o.err_line(&w);
    }
    let mut family = match resolved {
        Ok(f) => f,
        Err(ResolveError::NotFound) => {
            o.err(NOT_LOADED.as_bytes());
            return crate::EXIT_FAILURE;
        }
        Err(ResolveError::Failed(e)) => {
            o.err_line(&genl::perror(&e));
            return crate::EXIT_FAILURE;
        }
    };
    let Some((object, sub)) = rest.split_first() else {
        o.err(usage(flavor).as_bytes());
        return 0;
    };
    match lookup(flavor, object) {
        Lookup::Unknown => {
            o.err(&unknown_object(flavor, object));
            crate::EXIT_FAILURE
        }
        Lookup::SmcdOnly => {
            o.err(&smcd_only(flavor, object));
            crate::EXIT_FAILURE
        }
        Lookup::Found(Object::Help) => {
            o.err(usage(flavor).as_bytes());
            0
        }
        Lookup::Found(Object::Ueid) => ueid::invoke(flavor, sub, &mut family, o),
        Lookup::Found(Object::Info) => info::invoke(flavor, sub, &mut family, o),
        Lookup::Found(Object::Device) if flavor == Flavor::Smcd => {
            smcd::devices(sub, &mut family, o)
        }
        Lookup::Found(Object::Device) => device::invoke(flavor, detail, sub, &mut family, o),
        Lookup::Found(Object::Linkgroup) if flavor == Flavor::Smcd => {
            smcd::linkgroups(sub, &mut family, o)
        }
        Lookup::Found(Object::Linkgroup) => linkgroup::invoke(flavor, detail, sub, &mut family, o),
        Lookup::Found(Object::Seid) => seid::invoke(sub, &mut family, o),
        Lookup::Found(Object::Stats) => {
            stats::invoke(flavor, detail, sub, &mut family, stats_cache, o)
        }
        Lookup::Found(other) => {
            o.err(not_supported(flavor, other).as_bytes());
            crate::EXIT_FAILURE
        }
    }
}

/// Runs `flavor` on this process: its arguments, the netlink socket,
/// stdout and stderr. Returns the exit status.
pub fn main(flavor: Flavor) -> i32 {
    use std::os::unix::ffi::OsStringExt;
    crate::default_sigpipe();
    let args: Vec<Vec<u8>> = std::env::args_os().skip(1).map(|a| a.into_vec()).collect();
    let stdout = io::stdout();
    let mut out = stdout.lock();
    let stderr = io::stderr();
    let mut err = stderr.lock();
    run(
        flavor,
        &args,
        || Socket::open(NETLINK_GENERIC),
        &mut out,
        &mut err,
    )
}

#[cfg(test)]
pub(crate) mod tests {
    use super::common::args as a;
    use super::*;

    #[test]
    fn prefixes_as_contains() {
        assert!(abbreviates(b"u", "ueid"));
        assert!(abbreviates(b"ueid", "ueid"));
        assert!(!abbreviates(b"ueids", "ueid"));
        assert!(!abbreviates(b"", "ueid"));
        assert!(!abbreviates(b"x", "ueid"));
    }

    #[test]
    fn options_as_upstream_main() {
        let run = |detail, rest| Start::Run { detail, rest };
        assert_eq!(parse_options(&a(&[])), run(Detail::None, 0));
        assert_eq!(parse_options(&a(&["ueid"])), run(Detail::None, 0));
        assert_eq!(parse_options(&a(&["-d", "info"])), run(Detail::Details, 1));
        assert_eq!(
            parse_options(&a(&["--details", "-dd", "x"])),
            run(Detail::MoreDetails, 2)
        );
        assert_eq!(
            parse_options(&a(&["-adxyz"])),
            run(Detail::DetailsAbsolute, 1)
        );
        assert_eq!(parse_options(&a(&["-da"])), run(Detail::DetailsAbsolute, 1));
        assert_eq!(parse_options(&a(&["-abs"])), run(Detail::Absolute, 1));
        // A lone "-" is a prefix of "-absolute".
        assert_eq!(parse_options(&a(&["-"])), run(Detail::Absolute, 1));
        assert_eq!(parse_options(&a(&["--", "-d"])), run(Detail::None, 1));
        assert_eq!(parse_options(&a(&["-v"])), Start::Version);
        assert_eq!(parse_options(&a(&["--vers", "-x"])), Start::Version);
        assert_eq!(parse_options(&a(&["-h"])), Start::Help);
        assert_eq!(parse_options(&a(&["--help"])), Start::Help);
        assert_eq!(
            parse_options(&a(&["--foo", "-h"])),
            Start::BadOption(b"-foo".to_vec())
        );
        assert_eq!(
            parse_options(&a(&["-dx"])),
            Start::BadOption(b"-dx".to_vec())
        );
        assert_eq!(
            parse_options(&a(&["---"])),
            Start::BadOption(b"--".to_vec())
        );
    }

    #[test]
    fn objects_by_prefix_in_table_order() {
        use Lookup::*;
        let r = Flavor::Smcr;
        let d = Flavor::Smcd;
        assert_eq!(lookup(r, b"u"), Found(Object::Ueid));
        assert_eq!(lookup(r, b"i"), Found(Object::Info));
        assert_eq!(lookup(r, b"d"), Found(Object::Device));
        assert_eq!(lookup(r, b"du"), Found(Object::Dumpdev));
        assert_eq!(lookup(r, b"s"), Found(Object::Stats));
        assert_eq!(lookup(r, b"l"), Found(Object::Linkgroup));
        assert_eq!(lookup(r, b"h"), Found(Object::Help));
        assert_eq!(lookup(r, b"se"), SmcdOnly);
        assert_eq!(lookup(r, b"seid"), SmcdOnly);
        assert_eq!(lookup(d, b"se"), Found(Object::Seid));
        assert_eq!(lookup(d, b"s"), Found(Object::Stats));
        assert_eq!(lookup(r, b""), Unknown);
        assert_eq!(lookup(r, b"ueidx"), Unknown);
        assert_eq!(lookup(d, b"seidx"), Unknown);
    }

    #[test]
    fn usage_texts() {
        assert_eq!(
            usage(Flavor::Smcr),
            "Usage: smcr  [ OPTIONS ] OBJECT {COMMAND | help}\n\
             where  OBJECT := {info | linkgroup | device | stats | ueid | dumpdev}\n\
             \x20      OPTIONS := {-v[ersion] | -d[etails] | -dd[etails] | -a[bsolute]}\n"
        );
        assert_eq!(
            usage(Flavor::Smcd),
            "Usage: smcd  [ OPTIONS ] OBJECT {COMMAND | help}\n\
             where  OBJECT := {info | linkgroup | device | stats | ueid | seid | dumpdev}\n\
             \x20      OPTIONS := {-v[ersion] | -d[etails] | -a[bsolute]}\n"
        );
        assert_eq!(
            version(Flavor::Smcd),
            format!("smcd utility, smc_rs-tools-{}\n", crate::VERSION)
        );
    }

    #[test]
    fn dispatch_messages() {
        assert_eq!(
            bad_option(Flavor::Smcr, b"-x"),
            b"Error: Option \"-x\" is unknown, try \"smcr help\".\n"
        );
        assert_eq!(
            unknown_object(Flavor::Smcd, b"q\xff"),
            b"Error: Object \"q\xff\" is unknown, try \"smcd help\".\n"
        );
        assert_eq!(
            smcd_only(Flavor::Smcr, b"se"),
            b"Error: Object \"se\" is valid for SMC-D only, try \"smcr help\".\n"
        );
        assert_eq!(
            not_supported(Flavor::Smcr, Object::Device),
            format!(
                "Error: Object \"device\" is not supported yet by this version of smcr \
                 (smc_rs-tools-{}).\n",
                crate::VERSION
            )
        );
    }
}
