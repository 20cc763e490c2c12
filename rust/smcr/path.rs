// SPDX-License-Identifier: GPL-2.0

//! How a connection reaches its peer ([`Path`]: an SMC-R link, or the
//! peer's DMB through the loopback device) and what its buffers are
//! ([`ConnBuf`]).

use super::bufs::LgrBuf;
use super::link::Link;
use crate::smcd::dmb::{Dmb, IsmGroup};
use crate::sys::ib::buf::BufMem;
use crate::sys::args::MsgHdr;
use kernel::prelude::*;
use kernel::sync::Arc;

/// A connection buffer: one of an SMC-R link group (mapped on its links),
/// or memory only the CPU touches (SMC-D: our DMB, or the peer's DMB that
/// our send buffer is), whose first [`DMB_HEADER`] bytes are not part of
/// the ring (upstream keeps its CDC message there, `struct smcd_cdc_msg`;
/// both ends count the ring without them).
#[derive(Clone)]
pub(crate) enum ConnBuf {
    /// SMC-R.
    Lgr(Arc<LgrBuf>),
    /// SMC-D.
    Mem(Arc<BufMem>),
}

/// Bytes at the start of a DMB before its ring.
pub(crate) const DMB_HEADER: usize = 32;

/// Copies `n` bytes (at most `size`) at ring offset `off` of a ring of
/// `size` bytes: the piece up to the ring's end, then the rest from its
/// start unless the first piece came up short (a fault). `copy(at, len)`
/// copies one piece and says how many bytes it copied; returns the total.
pub(crate) fn across_wrap(
    off: usize,
    n: usize,
    size: usize,
    mut copy: impl FnMut(usize, usize) -> Result<usize>,
) -> Result<usize> {
    let first = n.min(size.saturating_sub(off));
    let rest = n.min(size) - first;
    let mut copied = copy(off, first)?;
    if copied == first && rest > 0 {
        copied += copy(0, rest)?;
    }
    Ok(copied)
}

impl ConnBuf {
    /// The SMC-R buffer, if it is one.
    pub(crate) fn lgr(&self) -> Option<&Arc<LgrBuf>> {
        match self {
            ConnBuf::Lgr(b) => Some(b),
            ConnBuf::Mem(_) => None,
        }
    }

    /// The memory and where the ring starts in it.
    fn ring(&self) -> (&BufMem, usize) {
        match self {
            ConnBuf::Lgr(b) => (b, 0),
            ConnBuf::Mem(m) => (m, DMB_HEADER),
        }
    }

    /// The ring's size in bytes.
    pub(crate) fn len(&self) -> usize {
        let (m, base) = self.ring();
        m.len().saturating_sub(base)
    }

    /// Copies `out.len()` bytes of the ring at `offset` into `out`.
    pub(crate) fn read(&self, offset: usize, out: &mut [u8]) -> Result {
        let (m, base) = self.ring();
        m.read(base + offset, out)
    }

    /// Copies up to `len` bytes of the message into the ring at `offset`;
    /// how many (see [`BufMem::fill_from_msg`]).
    pub(crate) fn fill_from_msg(&self, offset: usize, len: usize, msg: &mut MsgHdr<'_>) -> Result<usize> {
        let (m, base) = self.ring();
        m.fill_from_msg(base + offset, len, msg)
    }

    /// Copies up to `len` bytes of the message into the ring of the DMB
    /// whose memory is `dmb` at `offset` (an SMC-D send buffer, without
    /// a `ConnBuf` of its own); how many.
    pub(crate) fn fill_dmb_from_msg(dmb: &BufMem, offset: usize, len: usize, msg: &mut MsgHdr<'_>) -> Result<usize> {
        dmb.fill_from_msg(DMB_HEADER + offset, len, msg)
    }

    /// Copies up to `len` bytes of the ring of the DMB whose memory is
    /// `dmb` at `offset` to the message (an SMC-D RMB read without its
    /// `ConnBuf`); how many.
    pub(crate) fn drain_dmb_to_msg(dmb: &BufMem, offset: usize, len: usize, msg: &mut MsgHdr<'_>) -> Result<usize> {
        dmb.drain_to_msg(DMB_HEADER + offset, len, msg)
    }

    /// Copies up to `len` bytes of the ring at `offset` to the message;
    /// how many (see [`BufMem::drain_to_msg`]).
    pub(crate) fn drain_to_msg(&self, offset: usize, len: usize, msg: &mut MsgHdr<'_>) -> Result<usize> {
        let (m, base) = self.ring();
        m.drain_to_msg(base + offset, len, msg)
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
    /// Our DMB (the RMB), registered with the device. The peer's is the
    /// connection's ([`Conn::peer_dmb`](super::conn::Conn::peer_dmb)).
    pub(crate) own: Arc<Dmb>,
    /// The link group, told when the connection is finished.
    pub(crate) group: Arc<dyn IsmGroup>,
}
