// SPDX-License-Identifier: GPL-2.0

//! Physical network IDs (PNETIDs): which RDMA ports are attached to the
//! same physical network as an IP interface. Upstream assigns them by
//! hardware (s390) or by the operator's PNET table; an interface with a
//! PNETID may only use RDMA ports with the same one. Without PNETIDs (the
//! common case, and rxe's) a port serves the interface it is bound to.

use crate::sys::net::Net;

/// The length of a PNETID: upper-case characters, blank- or NUL-padded.
pub(crate) const PNETID_LEN: usize = 16;

/// A PNETID that is set (not all blanks or NULs).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct PnetId([u8; PNETID_LEN]);

/// Whether `b` ends a PNETID (the padding).
fn is_pad(b: u8) -> bool {
    b == 0 || b == b' '
}

impl PnetId {
    /// The PNETID held in `raw`, `None` when it is empty.
    pub(crate) fn new(raw: [u8; PNETID_LEN]) -> Option<Self> {
        match raw.first() {
            Some(b) if !is_pad(*b) => Some(PnetId(raw)),
            _ => None,
        }
    }

    /// Whether two PNETIDs name the same network: equal up to where both
    /// end, NUL and blank padding being the same (upstream's
    /// `smc_pnet_match`).
    pub(crate) fn matches(&self, other: &PnetId) -> bool {
        for (a, b) in self.0.iter().zip(other.0.iter()) {
            if is_pad(*a) && is_pad(*b) {
                break;
            }
            if a != b {
                return false;
            }
        }
        true
    }
}

/// The PNETID of interface `ifindex` of `net` (or of the device below it).
/// There is no PNET table yet and no hardware PNETID outside s390, so no
/// interface has one.
pub(crate) fn netdev_pnetid(_net: &Net, _ifindex: i32) -> Option<PnetId> {
    None
}
