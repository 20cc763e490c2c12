// SPDX-License-Identifier: GPL-2.0

//! SMC-D over the loopback ISM device: connections between two sockets of
//! this host through memory. The connection, its cursors, CDC messages and
//! close machine are SMC-R's (`crate::smcr::conn` and above); here are the
//! device and its DMBs ([`lo`], [`dmb`]), the link groups ([`lgr`]) and what
//! the CLC handshake creates ([`setup`]).

pub(crate) mod conns;
pub(crate) mod dmb;
pub(crate) mod lgr;
pub(crate) mod lo;
