// SPDX-License-Identifier: GPL-2.0

//! What every object of `smcr` and `smcd` shares: the generic netlink
//! family's names and commands, the two flavours and their objects, the
//! detail options, upstream's prefix matching and exit code, and where a
//! run writes. The floor under the objects; [`super`] dispatches to them.

use std::io::{self, Write};

/// `SMC_GENL_FAMILY_NAME`.
pub const SMC_GENL_FAMILY_NAME: &str = "SMC_GEN_NETLINK";
/// `SMC_GENL_FAMILY_VERSION`.
pub const SMC_GENL_FAMILY_VERSION: u8 = 1;

/// `SMC_NETLINK_GET_SYS_INFO` (dump).
pub const SMC_NETLINK_GET_SYS_INFO: u8 = 1;
/// `SMC_NETLINK_GET_DEV_SMCD` (dump).
pub const SMC_NETLINK_GET_DEV_SMCD: u8 = 5;
/// `SMC_NETLINK_GET_DEV_SMCR` (dump).
pub const SMC_NETLINK_GET_DEV_SMCR: u8 = 6;
/// `SMC_NETLINK_GET_STATS` (dump).
pub const SMC_NETLINK_GET_STATS: u8 = 7;
/// `SMC_NETLINK_GET_FBACK_STATS` (dump).
pub const SMC_NETLINK_GET_FBACK_STATS: u8 = 8;
/// `SMC_NETLINK_DUMP_UEID` (dump).
pub const SMC_NETLINK_DUMP_UEID: u8 = 9;
/// `SMC_NETLINK_ADD_UEID`.
pub const SMC_NETLINK_ADD_UEID: u8 = 10;
/// `SMC_NETLINK_REMOVE_UEID`.
pub const SMC_NETLINK_REMOVE_UEID: u8 = 11;
/// `SMC_NETLINK_FLUSH_UEID`.
pub const SMC_NETLINK_FLUSH_UEID: u8 = 12;
/// `SMC_NETLINK_DUMP_SEID` (dump).
pub const SMC_NETLINK_DUMP_SEID: u8 = 13;
/// `SMC_NETLINK_ENABLE_SEID`.
pub const SMC_NETLINK_ENABLE_SEID: u8 = 14;
/// `SMC_NETLINK_DISABLE_SEID`.
pub const SMC_NETLINK_DISABLE_SEID: u8 = 15;

/// The exit status of upstream's `exit(-1)` and of `main()` returning
/// `-(EXIT_FAILURE)` after an object failed.
pub const EXIT_OBJECT_FAILURE: i32 = 255;

/// Which of the two programs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Flavor {
    /// `smcr` (upstream `-DSMCR`).
    Smcr,
    /// `smcd` (upstream `-DSMCD`).
    Smcd,
}

/// The objects of upstream's `cmds[]`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Object {
    /// `device`.
    Device,
    /// `linkgroup`.
    Linkgroup,
    /// `info`.
    Info,
    /// `stats`.
    Stats,
    /// `ueid`.
    Ueid,
    /// `seid` (`smcd` only).
    Seid,
    /// `dumpdev`: not supported yet.
    Dumpdev,
    /// `help`.
    Help,
}

impl Object {
    /// The full name.
    pub fn name(self) -> &'static str {
        match self {
            Object::Device => "device",
            Object::Linkgroup => "linkgroup",
            Object::Info => "info",
            Object::Stats => "stats",
            Object::Ueid => "ueid",
            Object::Seid => "seid",
            Object::Dumpdev => "dumpdev",
            Object::Help => "help",
        }
    }
}

impl Flavor {
    /// The program name (upstream's `myname`).
    pub fn name(self) -> &'static str {
        match self {
            Flavor::Smcr => "smcr",
            Flavor::Smcd => "smcd",
        }
    }

    /// The objects in the order `run_cmd()` tries them.
    pub fn objects(self) -> &'static [Object] {
        match self {
            Flavor::Smcr => &[
                Object::Device,
                Object::Linkgroup,
                Object::Info,
                Object::Stats,
                Object::Ueid,
                Object::Dumpdev,
                Object::Help,
            ],
            Flavor::Smcd => &[
                Object::Device,
                Object::Linkgroup,
                Object::Info,
                Object::Stats,
                Object::Ueid,
                Object::Seid,
                Object::Dumpdev,
                Object::Help,
            ],
        }
    }
}

/// Upstream's `contains(prfx, str) == 0`: `prefix` is a non-empty prefix
/// of `word`.
pub fn abbreviates(prefix: &[u8], word: &str) -> bool {
    !prefix.is_empty() && word.as_bytes().starts_with(prefix)
}

/// The detail options (`stats` reads them; `ueid` and `info` ignore them,
/// as upstream's do).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Detail {
    /// None given.
    #[default]
    None,
    /// `-a[bsolute]`.
    Absolute,
    /// `-d[etails]`.
    Details,
    /// `-dd[etails]`.
    MoreDetails,
    /// `-ad`, `-da`.
    DetailsAbsolute,
}

/// Upstream's `gen_nl_open()` failure for a missing family.
pub const NOT_LOADED: &str = "Error: SMC module not loaded\n";

/// Where a run writes: stdout (kept for the end, so that a failed write is
/// reported once) and stderr (best effort, as C's `fprintf(stderr)`).
pub struct Output<'a> {
    out: &'a mut dyn Write,
    err: &'a mut dyn Write,
    failed: Option<io::Error>,
}

impl<'a> Output<'a> {
    /// Over two writers.
    pub fn new(out: &'a mut dyn Write, err: &'a mut dyn Write) -> Self {
        Output {
            out,
            err,
            failed: None,
        }
    }

    /// Writes to stdout unless an earlier write failed.
    pub fn out(&mut self, text: &str) {
        if self.failed.is_none() {
            if let Err(e) = self.out.write_all(text.as_bytes()) {
                self.failed = Some(e);
            }
        }
    }

    /// Writes to stderr; its failures are not reported anywhere.
    pub fn err(&mut self, bytes: &[u8]) {
        let _ = self.err.write_all(bytes).and_then(|()| self.err.flush());
    }

    /// A line on stderr.
    pub fn err_line(&mut self, line: &str) {
        self.err(format!("{line}\n").as_bytes());
    }

    /// Flushes stdout; `code`, or 1 with a message when stdout failed.
    pub fn finish(mut self, code: i32) -> i32 {
        if self.failed.is_none() {
            if let Err(e) = self.out.flush() {
                self.failed = Some(e);
            }
        }
        match self.failed.take() {
            Some(e) => {
                self.err_line(&format!("Error: Cannot write output: {e}"));
                crate::EXIT_FAILURE
            }
            None => code,
        }
    }
}

/// Command line arguments as the tools get them (tests).
#[cfg(test)]
pub(crate) fn args(v: &[&str]) -> Vec<Vec<u8>> {
    v.iter().map(|s| s.as_bytes().to_vec()).collect()
}
