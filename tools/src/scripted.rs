// SPDX-License-Identifier: GPL-2.0

//! The exchange with a scripted kernel, for tests of the tools without a
//! socket: the requests it was sent, and the datagrams it answered that
//! wait to be received. A test's kernel makes the answers and implements
//! [`crate::netlink::Transport`] with [`Script::send`] and
//! [`Script::recv`].

use crate::netlink::Received;
use std::cell::RefCell;
use std::collections::VecDeque;

/// The requests a scripted kernel got, and its answers not yet received.
#[derive(Debug, Default)]
pub struct Script {
    /// Every request, in the order sent.
    pub sent: RefCell<Vec<Vec<u8>>>,
    /// The datagrams waiting.
    queue: RefCell<VecDeque<Vec<u8>>>,
}

impl Script {
    /// An exchange with nothing sent yet.
    pub fn new() -> Script {
        Script::default()
    }

    /// Records the request `msg` and queues the datagrams answering it.
    pub fn send(&self, msg: &[u8], answer: Vec<Vec<u8>>) {
        self.sent.borrow_mut().push(msg.to_vec());
        self.queue.borrow_mut().extend(answer);
    }

    /// The next datagram into `buf` (cut to its size); an empty one when
    /// none is waiting.
    pub fn recv(&self, buf: &mut [u8]) -> Received {
        let datagram = self.queue.borrow_mut().pop_front().unwrap_or_default();
        let len = datagram.len().min(buf.len());
        if let (Some(to), Some(from)) = (buf.get_mut(..len), datagram.get(..len)) {
            to.copy_from_slice(from);
        }
        Received {
            len,
            truncated: datagram.len() > buf.len(),
            sender: 0,
        }
    }
}
