// SPDX-License-Identifier: GPL-2.0

//! The names link groups and connections get: link group ids and
//! connection tokens (SMC-R and SMC-D alike).

use crate::sys::random;
use core::sync::atomic::{AtomicU32, Ordering};

/// A new link group id: random, with the low-order byte of its host-order
/// word zero, as upstream's ids (multiples of 256; operators' tools mask
/// that byte, where upstream numbers the links).
pub(crate) fn new_lgr_id() -> [u8; 4] {
    let mut id = [0u8; 4];
    random::fill(&mut id);
    let word = u32::from_ne_bytes(id) & !0xff;
    // Never 0: operators' tools read 0 as "no id given".
    (if word == 0 { 0x100 } else { word }).to_ne_bytes()
}

/// Tokens name connections in CDC messages and link groups' tables;
/// never 0.
static NEXT_TOKEN: AtomicU32 = AtomicU32::new(1);

/// A new connection token.
pub(crate) fn next_token() -> u32 {
    loop {
        let t = NEXT_TOKEN.fetch_add(1, Ordering::Relaxed);
        if t != 0 {
            return t;
        }
    }
}
