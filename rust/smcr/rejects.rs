// SPDX-License-Identifier: GPL-2.0

//! Counters of what peers sent that was refused, module wide: CDC
//! messages whose cursors break the rules (their connection is aborted),
//! CDC messages for no connection we know or older than the last one taken
//! (dropped, as upstream does), and malformed CDC or LLC messages (dropped,
//! the link stays, as upstream does). A broken message also leaves a
//! rate-limited warning in the kernel log; the dropped ones (which a late
//! message after a close can also cause) a debug message. The counts are
//! shown in debugfs.

use crate::sys::debugfs::DebugfsDir;
use crate::sys::print::{smc_dbg, smc_warn_ratelimited};
use core::sync::atomic::{AtomicU64, Ordering};
use kernel::c_str;
use kernel::str::CStr;

/// What was refused.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(crate) enum Reject {
    /// A CDC message's producer or consumer cursor is outside the ring or
    /// beyond what the rules allow: the connection is aborted.
    CdcBadCursor,
    /// A CDC message names a token no connection of the link group has.
    CdcUnknownToken,
    /// A CDC message's sequence number is before the last one taken.
    CdcStaleSeqno,
    /// A CDC message too short, or with a wrong length field.
    CdcMalformed,
    /// An LLC message of a type nobody handles, too short, or with a wrong
    /// length field.
    LlcMalformed,
}

static CDC_BAD_CURSOR: AtomicU64 = AtomicU64::new(0);
static CDC_UNKNOWN_TOKEN: AtomicU64 = AtomicU64::new(0);
static CDC_STALE_SEQNO: AtomicU64 = AtomicU64::new(0);
static CDC_MALFORMED: AtomicU64 = AtomicU64::new(0);
static LLC_MALFORMED: AtomicU64 = AtomicU64::new(0);

impl Reject {
    /// Every kind, in the order the files are listed.
    const ALL: [Reject; 5] = [
        Reject::CdcBadCursor,
        Reject::CdcUnknownToken,
        Reject::CdcStaleSeqno,
        Reject::CdcMalformed,
        Reject::LlcMalformed,
    ];

    fn counter(self) -> &'static AtomicU64 {
        match self {
            Reject::CdcBadCursor => &CDC_BAD_CURSOR,
            Reject::CdcUnknownToken => &CDC_UNKNOWN_TOKEN,
            Reject::CdcStaleSeqno => &CDC_STALE_SEQNO,
            Reject::CdcMalformed => &CDC_MALFORMED,
            Reject::LlcMalformed => &LLC_MALFORMED,
        }
    }

    /// The counter's file name in debugfs.
    fn file_name(self) -> &'static CStr {
        match self {
            Reject::CdcBadCursor => c_str!("rx_cdc_bad_cursor"),
            Reject::CdcUnknownToken => c_str!("rx_cdc_unknown_token"),
            Reject::CdcStaleSeqno => c_str!("rx_cdc_stale_seqno"),
            Reject::CdcMalformed => c_str!("rx_cdc_malformed"),
            Reject::LlcMalformed => c_str!("rx_llc_malformed"),
        }
    }

    /// What the warning says.
    fn what(self) -> &'static str {
        match self {
            Reject::CdcBadCursor => "CDC cursor out of bounds, connection aborted",
            Reject::CdcUnknownToken => "CDC for an unknown connection dropped",
            Reject::CdcStaleSeqno => "stale CDC sequence number dropped",
            Reject::CdcMalformed => "malformed CDC message dropped",
            Reject::LlcMalformed => "malformed LLC message dropped",
        }
    }

    /// Whether only a broken peer sends this (else a late message can).
    fn is_broken(self) -> bool {
        !matches!(self, Reject::CdcUnknownToken | Reject::CdcStaleSeqno)
    }
}

/// Counts one refused message of kind `what` and says so; `detail` names
/// the field that was wrong. Any context.
pub(crate) fn count(what: Reject, detail: core::fmt::Arguments<'_>) {
    what.counter().fetch_add(1, Ordering::Relaxed);
    if what.is_broken() {
        smc_warn_ratelimited!("SMC-R peer: {} ({})", what.what(), detail);
    } else {
        smc_dbg!("SMC-R peer: {} ({})", what.what(), detail);
    }
}

/// Adds a read-only file per counter to `dir`.
pub(crate) fn add_files(dir: &DebugfsDir) {
    for r in Reject::ALL {
        dir.add_u64(r.file_name(), r.counter());
    }
}
