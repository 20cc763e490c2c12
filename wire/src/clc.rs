// SPDX-License-Identifier: GPL-2.0

//! CLC (Connection Layer Control) messages exchanged over the TCP connection
//! to negotiate SMC (RFC 7609, section 3.7; SMC-Rv2 extensions).

/// Why SMC was not used on a connection: the peer's (or our own) decline
/// reason, as carried in a CLC Decline and reported by `smcss`.
///
/// The high byte is the class (1 resources, 2 timeout, 3 configuration,
/// 4 synchronisation, 5 peer decline, 9 internal error).
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum DeclineReason {
    /// Insufficient memory resources.
    Mem,
    /// Timeout waiting for QP confirm link.
    TimeoutConfirmLink,
    /// Timeout waiting for QP add link.
    TimeoutAddLink,
    /// Configuration error.
    ConfigError,
    /// The peer did not indicate SMC in the TCP handshake.
    PeerNoSmc,
    /// IPsec is used on the connection.
    Ipsec,
    /// No SMC device found (R or D).
    NoSmcDevice,
    /// No SMC-D device found.
    NoSmcdDevice,
    /// No SMC-R device found.
    NoSmcrDevice,
    /// Peer sent no CLC v2 extension.
    NoV2Extension,
    /// Peer sent no UEID.
    NoUeid,
    /// SMC modes do not match.
    ModeUnsupported,
    /// A socket option (fastopen) is not supported with SMC.
    OptionUnsupported,
    /// IP prefix / subnet mismatch.
    DiffPrefix,
    /// SMC version mismatch.
    VersionMismatch,
    /// SMC-Rv2: no route to the peer.
    NoRoute,
    /// Synchronisation error.
    SyncError,
    /// The peer declined during the handshake.
    PeerDeclined,
    /// Internal error.
    InternalError,
    /// Any other code, kept as received.
    Other(u32),
}

const DECLINE_CODES: [(DeclineReason, u32); 19] = [
    (DeclineReason::Mem, 0x0101_0000),
    (DeclineReason::TimeoutConfirmLink, 0x0201_0000),
    (DeclineReason::TimeoutAddLink, 0x0202_0000),
    (DeclineReason::ConfigError, 0x0300_0000),
    (DeclineReason::PeerNoSmc, 0x0301_0000),
    (DeclineReason::Ipsec, 0x0302_0000),
    (DeclineReason::NoSmcDevice, 0x0303_0000),
    (DeclineReason::NoSmcdDevice, 0x0303_0001),
    (DeclineReason::NoSmcrDevice, 0x0303_0002),
    (DeclineReason::NoV2Extension, 0x0303_0004),
    (DeclineReason::NoUeid, 0x0303_0008),
    (DeclineReason::ModeUnsupported, 0x0304_0000),
    (DeclineReason::OptionUnsupported, 0x0306_0000),
    (DeclineReason::DiffPrefix, 0x0307_0000),
    (DeclineReason::VersionMismatch, 0x030c_0000),
    (DeclineReason::NoRoute, 0x030e_0000),
    (DeclineReason::SyncError, 0x0400_0000),
    (DeclineReason::PeerDeclined, 0x0500_0000),
    (DeclineReason::InternalError, 0x0999_0000),
];

impl DeclineReason {
    /// The 32-bit code on the wire and in diagnostics.
    pub fn code(self) -> u32 {
        if let DeclineReason::Other(code) = self {
            return code;
        }
        DECLINE_CODES
            .iter()
            .find(|(r, _)| *r == self)
            .map_or(0, |(_, c)| *c)
    }

    /// The reason for a code read from the wire; unknown codes are kept.
    pub fn from_code(code: u32) -> Self {
        DECLINE_CODES
            .iter()
            .find(|(_, c)| *c == code)
            .map_or(DeclineReason::Other(code), |(r, _)| *r)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn decline_codes_match_upstream() {
        assert_eq!(DeclineReason::PeerNoSmc.code(), 0x0301_0000);
        assert_eq!(DeclineReason::NoSmcDevice.code(), 0x0303_0000);
        assert_eq!(DeclineReason::NoUeid.code(), 0x0303_0008);
    }

    #[test]
    fn decline_codes_round_trip() {
        for (reason, code) in DECLINE_CODES {
            assert_eq!(DeclineReason::from_code(code), reason);
            assert_eq!(reason.code(), code);
        }
        assert_eq!(DeclineReason::from_code(0x1234_5678), DeclineReason::Other(0x1234_5678));
        assert_eq!(DeclineReason::Other(0x1234_5678).code(), 0x1234_5678);
    }
}
