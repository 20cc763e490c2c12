// SPDX-License-Identifier: GPL-2.0

//! Reading one CLC message from the clcsock, within upstream's wait.

use crate::sys::errno::EAGAIN;
use crate::sys::tcp::KernelSocket;
use crate::wire::clc::{ClcError, Header, HEADER_LEN, MAX_MESSAGE_LEN};
use kernel::prelude::*;

/// How long a peer has to answer a CLC message (upstream's `CLC_WAIT_TIME`).
pub(crate) const CLC_WAIT_MS: u32 = 6000;

/// Why no CLC message could be read.
pub(super) enum RecvError {
    /// The peer's bytes are not a CLC message, or it said nothing in time.
    Clc(ClcError),
    /// The socket failed (signal, reset, ...).
    Os(Error),
    /// Nothing at all came within the wait.
    Silent,
}

/// Reads one whole CLC message into `buf`, header first.
pub(super) fn recv_message(
    clc: &KernelSocket,
    buf: &mut [u8; MAX_MESSAGE_LEN],
) -> core::result::Result<Header, RecvError> {
    let timed_out = |e: Error| {
        if e == EAGAIN {
            RecvError::Clc(ClcError::Truncated)
        } else {
            RecvError::Os(e)
        }
    };
    let (head, rest) = buf.split_at_mut(HEADER_LEN);
    // A timed-out wait that got some bytes returns them; only a peer that
    // sent nothing at all ends in `EAGAIN`: it is silent. A message begun
    // and not finished in time is broken CLC.
    let n = clc.recv_exact(head, CLC_WAIT_MS).map_err(|e| {
        if e == EAGAIN {
            RecvError::Silent
        } else {
            RecvError::Os(e)
        }
    })?;
    if n < HEADER_LEN {
        return Err(RecvError::Clc(ClcError::Truncated));
    }
    // `Header::parse` bounds the length by the header and the buffer.
    let header = Header::parse(head).map_err(RecvError::Clc)?;
    let body = usize::from(header.length)
        .checked_sub(HEADER_LEN)
        .and_then(|n| rest.get_mut(..n))
        .ok_or(RecvError::Clc(ClcError::BadLength))?;
    let want = body.len();
    let n = clc.recv_exact(body, CLC_WAIT_MS).map_err(timed_out)?;
    if n < want {
        return Err(RecvError::Clc(ClcError::Truncated));
    }
    Ok(header)
}
