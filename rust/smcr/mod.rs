// SPDX-License-Identifier: GPL-2.0

//! SMC-R: link groups over an RDMA device, the LLC messages that keep them,
//! connections with their buffers, and the data path (RDMA WRITE into the
//! peer's RMB, CDC messages with the cursors).
//!
//! Floors, bottom up (see `Documentation/design.rst`): [`link`] (a link:
//! queue pair, work request slots, completions demultiplexed into the
//! [`link::LinkOwner`] trait), [`llc`] (link-level control), [`bufs`] (a connection
//! buffer on every link of its group), [`conn`] (a
//! connection's buffers, cursors and close machine), [`close`] (its
//! events), [`inject`] (test faults), [`cdc`] (cursor messages, both
//! ways), [`tx`] and [`rx`] (what `send` and `recv` do), [`settle`] (the
//! executor of what those return), [`lgr`] (a link group: the owner of
//! its link), [`info`] and [`about`] (what operators see), [`keepalive`],
//! [`registry`] (the host's link groups, with [`setups`]: those being
//! made), [`setup`] (what the CLC handshakes create). Beside them: [`rejects`] counts what peers sent
//! that was refused.

pub(crate) mod about;
pub(crate) mod addlink;
pub(crate) mod bufs;
pub(crate) mod cdc;
pub(crate) mod close;
pub(crate) mod conn;
pub(crate) mod connbufs;
pub(crate) mod conntable;
pub(crate) mod dellink;
pub(crate) mod failover;
pub(crate) mod flows;
pub(crate) mod ids;
pub(crate) mod info;
pub(crate) mod inject;
pub(crate) mod keepalive;
pub(crate) mod lgr;
pub(crate) mod lgrwork;
pub(crate) mod link;
pub(crate) mod linkset;
pub(crate) mod llc;
pub(crate) mod path;
pub(crate) mod peerkeys;
pub(crate) mod registry;
pub(crate) mod rejects;
pub(crate) mod rkeys;
pub(crate) mod rx;
pub(crate) mod settle;
pub(crate) mod setup;
pub(crate) mod setups;
pub(crate) mod shared;
pub(crate) mod tx;
