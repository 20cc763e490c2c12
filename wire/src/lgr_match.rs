// SPDX-License-Identifier: GPL-2.0

//! Which existing link group a new SMC-R connection joins: upstream's
//! `smcr_lgr_match` (the peer's system id and GID, our role, and for a
//! client the peer's queue pair the server's Accept names), within the
//! network namespace the link group was made in.
//!
//! A link group takes its parameters from the namespace of the socket
//! that made it (`net.smc` sysctls: TEST LINK time, autocorking, work
//! requests, connections per group), so only connections of sockets in
//! that namespace join it. Upstream 6.12 asks instead whether the
//! socket's namespace may use the link's RDMA device
//! (`rdma_dev_access_netns`), which in the RDMA subsystem's default
//! shared mode every namespace may: there, upstream's link groups are
//! shared across namespaces; in exclusive mode both rules agree.

use super::llc::Role;

/// What a link group is known by when a connection looks for one, and
/// what a connection looks for.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub struct LgrIdentity {
    /// The namespace (its cookie): the link group's, or the socket's.
    pub net: u64,
    /// Our side.
    pub role: Role,
    /// The peer's system id.
    pub peer_systemid: [u8; 8],
    /// The GID of the peer's RoCE port.
    pub peer_gid: [u8; 16],
    /// The peer's queue pair number; counts on a client only (the server
    /// names it in its Accept; a server knows it from its own link).
    pub peer_qpn: u32,
}

impl LgrIdentity {
    /// A connection looking for `want` may join this link group.
    pub fn admits(&self, want: &LgrIdentity) -> bool {
        self.net == want.net
            && self.role == want.role
            && self.peer_systemid == want.peer_systemid
            && self.peer_gid == want.peer_gid
            && (self.role == Role::Server || self.peer_qpn == want.peer_qpn)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const CLIENT: LgrIdentity = LgrIdentity {
        net: 1,
        role: Role::Client,
        peer_systemid: [1, 2, 3, 4, 5, 6, 7, 8],
        peer_gid: [0xfe; 16],
        peer_qpn: 0x11,
    };

    #[test]
    fn same_peer_same_namespace_joins() {
        assert!(CLIENT.admits(&CLIENT));
        let server = LgrIdentity {
            role: Role::Server,
            ..CLIENT
        };
        assert!(server.admits(&server));
        // A server's link group does not depend on the queue pair asked.
        assert!(server.admits(&LgrIdentity {
            peer_qpn: 0,
            ..server
        }));
    }

    #[test]
    fn another_namespace_never_joins() {
        for role in [Role::Client, Role::Server] {
            let lgr = LgrIdentity { role, ..CLIENT };
            for net in [0, 2, u64::MAX] {
                assert!(!lgr.admits(&LgrIdentity { net, ..lgr }), "{role:?} {net}");
            }
        }
    }

    #[test]
    fn every_peer_field_counts() {
        let differ = [
            LgrIdentity {
                role: Role::Server,
                ..CLIENT
            },
            LgrIdentity {
                peer_systemid: [0; 8],
                ..CLIENT
            },
            LgrIdentity {
                peer_gid: [0; 16],
                ..CLIENT
            },
            LgrIdentity {
                peer_qpn: 0x12,
                ..CLIENT
            },
        ];
        for want in differ {
            assert!(!CLIENT.admits(&want), "{want:?}");
        }
    }
}
