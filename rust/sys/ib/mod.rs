// SPDX-License-Identifier: GPL-2.0

//! ib_core, the RDMA stack underneath SMC-R: the client registration that
//! tells us about devices, the devices with their ports and RoCE GIDs, and
//! their asynchronous events; and the verbs a link uses: protection
//! domains, completion queues, queue pairs as a typestate, the work
//! requests they post and complete, DMA-mapped buffers and the memory
//! regions that register them, in the pattern `Documentation/design.rst`
//! describes.

#[allow(dead_code)] // Until the SMC-R link code uses all of it.
pub(crate) mod buf;
pub(crate) mod client;
#[allow(dead_code)] // Until the SMC-R link code uses all of it.
pub(crate) mod cq;
pub(crate) mod device;
pub(crate) mod event;
#[allow(dead_code)] // Until the SMC-R link code uses all of it.
pub(crate) mod mr;
#[allow(dead_code)] // Until the SMC-R link code uses all of it.
pub(crate) mod pd;
#[allow(dead_code)] // Until the SMC-R link code uses all of it.
pub(crate) mod post;
#[allow(dead_code)] // Until the SMC-R link code uses all of it.
pub(crate) mod qp;
#[allow(dead_code)] // Until the SMC-R link code uses all of it.
pub(crate) mod wr;
