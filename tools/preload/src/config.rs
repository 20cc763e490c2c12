// SPDX-License-Identifier: GPL-2.0

//! The pure part of the library: which calls are mapped to `AF_SMC`, and
//! the environment's values. No I/O, no allocation.

/// `AF_SMC` (`include/linux/socket.h`).
pub const AF_SMC: i32 = 43;
/// `SMCPROTO_SMC`: an SMC socket whose fallback is IPv4 TCP.
pub const SMCPROTO_SMC: i32 = 0;
/// `SMCPROTO_SMC6`: an SMC socket whose fallback is IPv6 TCP.
pub const SMCPROTO_SMC6: i32 = 1;
/// The socket type without its `SOCK_NONBLOCK`/`SOCK_CLOEXEC` flags
/// (`SOCK_TYPE_MASK` of `include/linux/net.h`).
const SOCK_TYPE_MASK: i32 = 0xf;

/// `IPPROTO_SMC` (Linux 6.11): an SMC socket of `AF_INET`/`AF_INET6`.
pub const IPPROTO_SMC: i32 = 256;

/// Which SMC socket replaces a TCP one (`SMC_FAMILY`, `smc_run -f`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Family {
    /// `AF_SMC` (the default, as upstream's library).
    Smc,
    /// `IPPROTO_SMC` of the caller's family.
    Inet,
    /// `IPPROTO_SMC`, else `AF_SMC`.
    Auto,
}

/// `SMC_FAMILY`: `smc`, `inet` or `auto`; anything else (or unset) is
/// `smc`.
pub fn family(value: Option<&[u8]>) -> Family {
    match value {
        Some(b"inet") => Family::Inet,
        Some(b"auto") => Family::Auto,
        _ => Family::Smc,
    }
}

/// The SMC sockets to try, in order, for a `socket(domain, ty, protocol)`
/// call (TCP stays the last resort), or `None` if the call is not for a
/// TCP socket. The type, flags included, stays the caller's.
pub fn smc_sockets_for(
    domain: i32,
    ty: i32,
    protocol: i32,
    family: Family,
) -> Option<[Option<(i32, i32, i32)>; 2]> {
    let smc = smc_socket_for(domain, ty, protocol)?;
    let inet = (domain, ty, IPPROTO_SMC);
    Some(match family {
        Family::Smc => [Some(smc), None],
        Family::Inet => [Some(inet), None],
        Family::Auto => [Some(inet), Some(smc)],
    })
}

/// The `(domain, type, protocol)` of the `AF_SMC` socket that replaces a
/// `socket(domain, ty, protocol)` call, or `None` if the call is not for a
/// TCP socket. The type, flags included, stays the caller's.
pub fn smc_socket_for(domain: i32, ty: i32, protocol: i32) -> Option<(i32, i32, i32)> {
    if ty & SOCK_TYPE_MASK != libc::SOCK_STREAM {
        return None;
    }
    if protocol != 0 && protocol != libc::IPPROTO_TCP {
        return None;
    }
    match domain {
        libc::AF_INET => Some((AF_SMC, ty, SMCPROTO_SMC)),
        libc::AF_INET6 => Some((AF_SMC, ty, SMCPROTO_SMC6)),
        _ => None,
    }
}

/// `SMC_DEBUG`: on when set and not starting with `0` (upstream's rule).
pub fn debug_enabled(value: Option<&[u8]>) -> bool {
    match value {
        Some(v) => v.first() != Some(&b'0'),
        None => false,
    }
}

/// A buffer size (`SMC_SNDBUF`, `SMC_RCVBUF`): as `smc_run -r/-t` take it.
pub use smc_tools::smc_run::parse_size;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tcp_calls_become_smc() {
        let st = libc::SOCK_STREAM;
        assert_eq!(
            smc_socket_for(libc::AF_INET, st, 0),
            Some((43, st, SMCPROTO_SMC))
        );
        assert_eq!(
            smc_socket_for(libc::AF_INET, st, libc::IPPROTO_TCP),
            Some((43, st, SMCPROTO_SMC))
        );
        assert_eq!(
            smc_socket_for(libc::AF_INET6, st, 0),
            Some((43, st, SMCPROTO_SMC6))
        );
        let flagged = st | libc::SOCK_NONBLOCK | libc::SOCK_CLOEXEC;
        assert_eq!(
            smc_socket_for(libc::AF_INET6, flagged, libc::IPPROTO_TCP),
            Some((43, flagged, SMCPROTO_SMC6))
        );
    }

    #[test]
    fn families() {
        let st = libc::SOCK_STREAM;
        assert_eq!(family(None), Family::Smc);
        assert_eq!(family(Some(b"inet")), Family::Inet);
        assert_eq!(family(Some(b"auto")), Family::Auto);
        assert_eq!(family(Some(b"other")), Family::Smc);
        assert_eq!(
            smc_sockets_for(libc::AF_INET6, st, 0, Family::Inet),
            Some([Some((libc::AF_INET6, st, IPPROTO_SMC)), None])
        );
        assert_eq!(
            smc_sockets_for(libc::AF_INET, st, libc::IPPROTO_TCP, Family::Auto),
            Some([Some((libc::AF_INET, st, IPPROTO_SMC)), Some((43, st, SMCPROTO_SMC))])
        );
        assert_eq!(
            smc_sockets_for(libc::AF_INET, st, 0, Family::Smc),
            Some([Some((43, st, SMCPROTO_SMC)), None])
        );
        assert_eq!(smc_sockets_for(libc::AF_INET, libc::SOCK_DGRAM, 0, Family::Inet), None);
    }

    #[test]
    fn other_calls_stay() {
        let st = libc::SOCK_STREAM;
        assert_eq!(smc_socket_for(libc::AF_INET, libc::SOCK_DGRAM, 0), None);
        assert_eq!(
            smc_socket_for(libc::AF_INET, libc::SOCK_DGRAM | libc::SOCK_CLOEXEC, 0),
            None
        );
        assert_eq!(smc_socket_for(libc::AF_INET, libc::SOCK_SEQPACKET, 0), None);
        assert_eq!(smc_socket_for(libc::AF_INET, libc::SOCK_RAW, 0), None);
        assert_eq!(smc_socket_for(libc::AF_INET, st, libc::IPPROTO_SCTP), None);
        assert_eq!(smc_socket_for(libc::AF_INET, st, 256), None);
        assert_eq!(smc_socket_for(libc::AF_UNIX, st, 0), None);
        assert_eq!(smc_socket_for(AF_SMC, st, 0), None);
        assert_eq!(smc_socket_for(libc::AF_NETLINK, libc::SOCK_RAW, 0), None);
    }

    #[test]
    fn debug_rule() {
        assert!(!debug_enabled(None));
        assert!(!debug_enabled(Some(b"0")));
        assert!(!debug_enabled(Some(b"0x")));
        assert!(debug_enabled(Some(b"1")));
        assert!(debug_enabled(Some(b"yes")));
        assert!(debug_enabled(Some(b"")));
    }
}
