// SPDX-License-Identifier: GPL-2.0

//! The connections of a link group (SMC-R or SMC-D), by token.

use super::conn::Conn;
use super::link::CONNS_PER_LGR;
use crate::sys::errno::{EEXIST, ENOSPC};
use crate::wire::tokens::{InsertError, Keyed, TokenTable};
use kernel::prelude::*;
use kernel::sync::Arc;

/// The connections of a link group, by token: a fixed table, so that
/// adding and removing never allocates (the receive path looks here), and
/// a lookup by token is O(1) (see [`TokenTable`]).
pub(crate) struct ConnTable {
    conns: TokenTable<Arc<Conn>, CONNS_PER_LGR>,
}

impl Keyed for Arc<Conn> {
    fn key(&self) -> u32 {
        self.token
    }
}

impl ConnTable {
    pub(crate) fn new() -> Self {
        ConnTable {
            conns: TokenTable::new(),
        }
    }

    /// Adds a connection; its token must be new.
    pub(crate) fn insert(&mut self, conn: Arc<Conn>) -> Result {
        self.conns.insert(conn).map_err(|e| match e {
            InsertError::Exists => EEXIST.into(),
            InsertError::Full => ENOSPC.into(),
        })
    }

    /// Takes the connection with `token` out; the caller drops it in
    /// process context.
    pub(crate) fn remove(&mut self, token: u32) -> Option<Arc<Conn>> {
        self.conns.remove(token)
    }

    /// Runs `f` on the connection with `token`, if there is one.
    pub(crate) fn with(&self, token: u32, f: impl FnOnce(&Arc<Conn>)) -> bool {
        match self.conns.get(token) {
            Some(c) => {
                f(c);
                true
            }
            None => false,
        }
    }

    /// Takes out connections (all of them, in rounds), into `out`.
    pub(crate) fn take_all(&mut self, out: &mut [Option<Arc<Conn>>]) -> usize {
        self.conns.take_if(out, |_| true)
    }

    /// Takes out the connections that are [`finished`](Conn::finished),
    /// into `out` (to be dropped in process context).
    pub(crate) fn take_finished(&mut self, out: &mut [Option<Arc<Conn>>]) -> usize {
        self.conns.take_if(out, |c| c.finished())
    }

    /// How many connections there are.
    pub(crate) fn count(&self) -> usize {
        self.conns.len()
    }

    /// Runs `f` on every connection.
    pub(crate) fn for_each(&self, mut f: impl FnMut(&Arc<Conn>)) {
        for c in self.conns.iter() {
            f(c);
        }
    }
}
