// SPDX-License-Identifier: GPL-2.0

//! Counters of what peers sent that was refused, module wide: CDC
//! messages whose cursors break the rules (their connection is aborted),
//! CDC messages for no connection we know or older than the last one taken
//! (dropped, as upstream does), malformed CDC or LLC messages (dropped,
//! the link stays, as upstream does), and LLC link requests a link group
//! with one link refuses or no flow waits for (answered or dropped as
//! upstream does, the link stays). A broken message also leaves a
//! rate-limited warning in the kernel log; the others (which a late
//! message after a close, or a peer that would add links, can also cause)
//! a debug message. The counts are shown in debugfs.

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
    /// An LLC request to add a link (ADD LINK, REQ ADD LINK), refused.
    LlcAddLinkRefused,
    /// An LLC DELETE LINK of a link id that is not ours.
    LlcUnknownLink,
    /// An LLC message no flow waits for: a response to a request we never
    /// sent, a CONFIRM LINK after the link's confirmation.
    LlcOutOfFlow,
}

static CDC_BAD_CURSOR: AtomicU64 = AtomicU64::new(0);
static CDC_UNKNOWN_TOKEN: AtomicU64 = AtomicU64::new(0);
static CDC_STALE_SEQNO: AtomicU64 = AtomicU64::new(0);
static CDC_MALFORMED: AtomicU64 = AtomicU64::new(0);
static LLC_MALFORMED: AtomicU64 = AtomicU64::new(0);
static LLC_ADD_LINK_REFUSED: AtomicU64 = AtomicU64::new(0);
static LLC_UNKNOWN_LINK: AtomicU64 = AtomicU64::new(0);
static LLC_OUT_OF_FLOW: AtomicU64 = AtomicU64::new(0);

impl Reject {
    /// Every kind, in the order the files are listed.
    const ALL: [Reject; 8] = [
        Reject::CdcBadCursor,
        Reject::CdcUnknownToken,
        Reject::CdcStaleSeqno,
        Reject::CdcMalformed,
        Reject::LlcMalformed,
        Reject::LlcAddLinkRefused,
        Reject::LlcUnknownLink,
        Reject::LlcOutOfFlow,
    ];

    fn counter(self) -> &'static AtomicU64 {
        match self {
            Reject::CdcBadCursor => &CDC_BAD_CURSOR,
            Reject::CdcUnknownToken => &CDC_UNKNOWN_TOKEN,
            Reject::CdcStaleSeqno => &CDC_STALE_SEQNO,
            Reject::CdcMalformed => &CDC_MALFORMED,
            Reject::LlcMalformed => &LLC_MALFORMED,
            Reject::LlcAddLinkRefused => &LLC_ADD_LINK_REFUSED,
            Reject::LlcUnknownLink => &LLC_UNKNOWN_LINK,
            Reject::LlcOutOfFlow => &LLC_OUT_OF_FLOW,
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
            Reject::LlcAddLinkRefused => c_str!("rx_llc_add_link_refused"),
            Reject::LlcUnknownLink => c_str!("rx_llc_unknown_link"),
            Reject::LlcOutOfFlow => c_str!("rx_llc_out_of_flow"),
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
            Reject::LlcAddLinkRefused => "LLC request to add a link refused",
            Reject::LlcUnknownLink => "LLC DELETE LINK of another link id",
            Reject::LlcOutOfFlow => "LLC message outside any flow dropped",
        }
    }

    /// Whether only a broken peer sends this (else a late message, or a
    /// peer that manages links differently, can).
    fn is_broken(self) -> bool {
        matches!(
            self,
            Reject::CdcBadCursor | Reject::CdcMalformed | Reject::LlcMalformed
        )
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
