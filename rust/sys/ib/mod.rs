// SPDX-License-Identifier: GPL-2.0

//! ib_core, the RDMA stack underneath SMC-R: the client registration that
//! tells us about devices, the devices with their ports and RoCE GIDs, and
//! their asynchronous events. Queue pairs, completion queues, memory
//! regions and DMA mappings come here as well, in the pattern
//! `Documentation/design.rst` describes.

pub(crate) mod client;
pub(crate) mod device;
pub(crate) mod event;
