// SPDX-License-Identifier: GPL-2.0

//! ib_core, the RDMA stack underneath SMC-R: the client registration that
//! tells us about devices, the devices with their ports and RoCE GIDs, and
//! their asynchronous events; and the verbs a link uses: protection
//! domains, completion queues, queue pairs as a typestate, the work
//! requests they post and complete, DMA-mapped buffers and the memory
//! regions that register them, in the pattern `Documentation/design.rst`
//! describes.

pub(crate) mod buf;
pub(crate) mod client;
pub(crate) mod cq;
pub(crate) mod device;
pub(crate) mod event;
pub(crate) mod mr;
pub(crate) mod pd;
pub(crate) mod post;
pub(crate) mod qp;
pub(crate) mod sge;
pub(crate) mod wr;
