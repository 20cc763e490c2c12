// SPDX-License-Identifier: GPL-2.0

//! SMC-R: link groups over an RDMA device, the LLC messages that keep them,
//! connections with their buffers, and the data path (RDMA WRITE into the
//! peer's RMB, CDC messages with the cursors).
//!
//! Floors, bottom up: [`lgr`] (a link group with its one link: queue pair,
//! work request slots, completion dispatch), [`llc`] (link-level control),
//! [`conn`] (a connection's buffers and cursors), [`cdc`] (cursor
//! messages, both ways), [`tx`] and [`rx`] (what `send` and `recv` do),
//! [`close`] (the close state machine at work),
//! [`setup`] (the client side of the CLC handshake that creates them),
//! [`info`] (what operators see of them).
//! Beside them: [`rejects`] counts what peers sent that was refused, and
//! [`inject`] makes this side send such messages, for tests.

pub(crate) mod cdc;
pub(crate) mod close;
pub(crate) mod conn;
pub(crate) mod info;
pub(crate) mod inject;
pub(crate) mod keepalive;
pub(crate) mod lgr;
pub(crate) mod llc;
pub(crate) mod rejects;
pub(crate) mod rx;
pub(crate) mod rxbufs;
pub(crate) mod setup;
pub(crate) mod slots;
pub(crate) mod tx;
