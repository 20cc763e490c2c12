// SPDX-License-Identifier: GPL-2.0

//! How a connection reaches its peer ([`Path`]: an SMC-R link, or the
//! peer's DMB through the loopback device) and what its buffers are
//! ([`ConnBuf`]).

use super::bufs::LgrBuf;
use super::link::Link;
use crate::smcd::dmb::{Dmb, IsmGroup};
use crate::sys::ib::buf::BufMem;
use core::ops::Deref;
use kernel::sync::Arc;

/// A connection buffer: one of an SMC-R link group (mapped on its links),
/// or memory only the CPU touches (SMC-D: our DMB, or the peer's DMB that
/// our send buffer is).
#[derive(Clone)]
pub(crate) enum ConnBuf {
    /// SMC-R.
    Lgr(Arc<LgrBuf>),
    /// SMC-D.
    Mem(Arc<BufMem>),
}

impl ConnBuf {
    /// The SMC-R buffer, if it is one.
    pub(crate) fn lgr(&self) -> Option<&Arc<LgrBuf>> {
        match self {
            ConnBuf::Lgr(b) => Some(b),
            ConnBuf::Mem(_) => None,
        }
    }

    /// Makes what devices wrote visible to the CPU.
    pub(crate) fn sync_for_cpu(&self) {
        if let ConnBuf::Lgr(b) = self {
            b.sync_for_cpu();
        }
    }

    /// Hands what the CPU wrote to the devices.
    pub(crate) fn sync_for_device(&self) {
        if let ConnBuf::Lgr(b) = self {
            b.sync_for_device();
        }
    }
}

impl Deref for ConnBuf {
    type Target = BufMem;

    fn deref(&self) -> &BufMem {
        match self {
            ConnBuf::Lgr(b) => b,
            ConnBuf::Mem(m) => m,
        }
    }
}

/// How a connection reaches its peer.
#[derive(Clone)]
pub(crate) enum Path {
    /// SMC-R: the link it sends on (another of its group after a failover).
    Link(Arc<Link>),
    /// SMC-D over the loopback device.
    Ism(IsmPath),
}

/// An SMC-D connection's ends: its DMB, and the peer's once attached.
#[derive(Clone)]
pub(crate) struct IsmPath {
    /// Our DMB (the RMB), registered with the device.
    pub(crate) own: Arc<Dmb>,
    /// The peer's DMB (our send buffer's memory, and where our CDC
    /// messages go); `None` until the CLC handshake named it.
    pub(crate) peer: Option<Arc<Dmb>>,
    /// The link group, told when the connection is finished.
    pub(crate) group: Arc<dyn IsmGroup>,
}
