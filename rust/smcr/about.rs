// SPDX-License-Identifier: GPL-2.0

//! What a link group learned of its peer in the handshakes, kept for
//! operators (see [`info`](super::info)).

use crate::sys::bindings as b;
use crate::sys::genl::GenlMessage;
use crate::sys::sync::SpinLockBh;
use kernel::prelude::*;

/// What a link group learned of its peer in the handshakes (upstream
/// keeps these in `struct smc_link_group`).
#[derive(Clone, Copy, Default)]
pub(crate) struct LgrAbout {
    /// The peer's SMC release.
    pub(crate) peer_release: u8,
    /// The peer's operating system type.
    pub(crate) peer_os: u8,
    /// The peer's host name, blank padded.
    pub(crate) peer_hostname: [u8; 32],
    /// The UEID both sides agreed on, blank padded.
    pub(crate) negotiated_eid: [u8; 32],
    /// Connections and links the link group may carry (first contact).
    pub(crate) max_conns: u8,
    pub(crate) max_links: u8,
}

/// A new, empty record for a link group's `about`.
pub(crate) fn new_about() -> impl PinInit<SpinLockBh<LgrAbout>> {
    crate::sys::sync::new_spinlock_bh!(LgrAbout::default(), "LinkGroup::about")
}

impl LgrAbout {
    /// The attributes of upstream's `SMC_NLA_LGR_*_V2_COMMON` nest for a
    /// link group of SMC version `version` (`smc_nl_fill_lgr_v2_common`).
    pub(crate) fn fill_v2_common(&self, m: &mut GenlMessage<'_>, version: u8) -> Result {
        m.put_u8(b::SMC_NLA_LGR_V2_VER as u16, version)?;
        m.put_u8(b::SMC_NLA_LGR_V2_REL as u16, self.peer_release)?;
        m.put_u8(b::SMC_NLA_LGR_V2_OS as u16, self.peer_os)?;
        m.put_str(b::SMC_NLA_LGR_V2_PEER_HOST as u16, &self.peer_hostname)?;
        m.put_str(b::SMC_NLA_LGR_V2_NEG_EID as u16, &self.negotiated_eid)
    }
}
