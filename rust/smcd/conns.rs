// SPDX-License-Identifier: GPL-2.0

//! The connections of an SMC-D link group, by token. Unlike an SMC-R
//! group's table, nothing on a receive path looks here (a signal reaches
//! its DMB's owner directly), and a group has no fixed capacity (upstream
//! bounds SMC-D only by the device's DMBs): a tree, changed in process
//! context under the group's mutex.

use crate::smcr::conn::Conn;
use kernel::prelude::*;
use kernel::rbtree::RBTree;
use kernel::sync::Arc;

/// The connections of a group.
pub(crate) struct IsmConns {
    tree: RBTree<u32, Arc<Conn>>,
    count: usize,
}

impl IsmConns {
    pub(crate) fn new() -> Self {
        IsmConns {
            tree: RBTree::new(),
            count: 0,
        }
    }

    /// Adds a connection (its token is new). May sleep.
    pub(crate) fn insert(&mut self, conn: Arc<Conn>) -> Result {
        let token = conn.token;
        if self.tree.get(&token).is_some() {
            return Err(EEXIST);
        }
        self.tree.try_create_and_insert(token, conn, GFP_KERNEL)?;
        self.count += 1;
        Ok(())
    }

    /// Takes the connection with `token` out.
    pub(crate) fn remove(&mut self, token: u32) -> Option<Arc<Conn>> {
        let c = self.tree.remove(&token)?;
        self.count -= 1;
        Some(c)
    }

    /// How many connections there are.
    pub(crate) fn count(&self) -> usize {
        self.count
    }

    /// Bytes their DMBs took.
    pub(crate) fn dmb_bytes(&self) -> u64 {
        self.tree.values().map(|c| u64::from(c.rmb_alloc_size())).sum()
    }

    /// Takes out one connection, if any is left.
    pub(crate) fn take_any(&mut self) -> Option<Arc<Conn>> {
        let token = self.tree.iter().next().map(|(t, _)| *t)?;
        self.remove(token)
    }
}
