// SPDX-License-Identifier: GPL-2.0

//! The connections of a link waiting for a free send slot: a first come,
//! first served queue of tokens, each at most once, with room for `N`.
//!
//! A completed slot goes to the first waiting connection (as upstream's
//! senders queue for a slot) and does not wake them all. The queue never
//! has to drop a waiter as long as its owner keeps one rule: a connection
//! that leaves the link is taken out ([`TokenQueue::forget`]). Then no more
//! tokens wait than the link has connections, and `N` is that maximum.
//! Without the rule, tokens of connections that closed while queued stay
//! until they come up and fill the queue under churn: the next push is
//! dropped and a blocked writer with nothing in flight waits for ever (the
//! host tests show both). Nothing here allocates.

/// Up to `N` distinct tokens in arrival order.
pub struct TokenQueue<const N: usize> {
    tokens: [u32; N],
    head: usize,
    len: usize,
}

impl<const N: usize> Default for TokenQueue<N> {
    fn default() -> Self {
        Self::new()
    }
}

impl<const N: usize> TokenQueue<N> {
    /// An empty queue.
    pub const fn new() -> Self {
        TokenQueue {
            tokens: [0; N],
            head: 0,
            len: 0,
        }
    }

    /// How many tokens wait.
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether none waits.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// The token `k` places behind the head (`k < len`).
    fn at(&self, k: usize) -> Option<u32> {
        self.tokens.get((self.head + k) % N.max(1)).copied()
    }

    /// Whether `token` waits.
    pub fn contains(&self, token: u32) -> bool {
        (0..self.len).any(|k| self.at(k) == Some(token))
    }

    /// Queues `token` unless it waits already. `false` only when the queue
    /// is full and `token` is not in it: the push is lost (which the
    /// forget rule above rules out).
    pub fn push(&mut self, token: u32) -> bool {
        if self.contains(token) {
            return true;
        }
        if self.len == N {
            return false;
        }
        match self.tokens.get_mut((self.head + self.len) % N) {
            Some(t) => {
                *t = token;
                self.len += 1;
                true
            }
            None => false,
        }
    }

    /// Takes `token` out, keeping the others in their order.
    pub fn forget(&mut self, token: u32) {
        let mut kept = 0;
        for k in 0..self.len {
            let Some(t) = self.at(k) else {
                continue;
            };
            if t == token {
                continue;
            }
            if let Some(dst) = self.tokens.get_mut((self.head + kept) % N) {
                *dst = t;
            }
            kept += 1;
        }
        self.len = kept;
    }

    /// Takes the first waiting token.
    pub fn pop(&mut self) -> Option<u32> {
        if self.len == 0 {
            return None;
        }
        let token = self.at(0);
        self.head = (self.head + 1) % N;
        self.len -= 1;
        token
    }
}

#[cfg(test)]
mod tests {
    extern crate std;
    use super::*;
    use std::collections::{BTreeSet, VecDeque};
    use std::vec::Vec;

    #[test]
    fn first_come_first_served_each_once() {
        let mut q: TokenQueue<4> = TokenQueue::new();
        assert!(q.push(7));
        assert!(q.push(3));
        assert!(q.push(7), "already waiting: kept in its place");
        assert_eq!(q.len(), 2);
        assert_eq!(q.pop(), Some(7));
        assert_eq!(q.pop(), Some(3));
        assert_eq!(q.pop(), None);
        assert!(q.is_empty());
    }

    #[test]
    fn full_queue_refuses_a_new_token_only() {
        let mut q: TokenQueue<2> = TokenQueue::new();
        assert!(q.push(1) && q.push(2));
        assert!(!q.push(3), "full: the push is lost");
        assert!(q.push(2), "waiting already: not lost");
        q.forget(1);
        assert!(q.push(3));
        assert_eq!((q.pop(), q.pop(), q.pop()), (Some(2), Some(3), None));
    }

    #[test]
    fn forget_keeps_the_order_across_the_wrap() {
        let mut q: TokenQueue<5> = TokenQueue::new();
        for t in 1..=4 {
            assert!(q.push(t));
        }
        assert_eq!((q.pop(), q.pop()), (Some(1), Some(2)));
        for t in 5..=7 {
            assert!(q.push(t));
        }
        q.forget(5);
        q.forget(9);
        let mut got = Vec::new();
        while let Some(t) = q.pop() {
            got.push(t);
        }
        assert_eq!(got, [3, 4, 6, 7]);
    }

    /// A small deterministic generator (no dependencies).
    fn rng(seed: &mut u64) -> u64 {
        *seed ^= *seed << 13;
        *seed ^= *seed >> 7;
        *seed ^= *seed << 17;
        *seed
    }

    /// A link's life under churn with `N` connections at most: connections
    /// join with fresh tokens (a counter, as the link group's), queue for a
    /// slot, are served, or leave, some while queued. Returns how many
    /// pushes were lost, checking the order against a model on the way.
    fn churn<const N: usize>(forget_on_leave: bool, seed: u64, steps: usize) -> usize {
        let mut seed = seed;
        let mut q: TokenQueue<N> = TokenQueue::new();
        let mut model: VecDeque<u32> = VecDeque::new();
        let mut live: BTreeSet<u32> = BTreeSet::new();
        let mut next = 1u32;
        let mut lost = 0;
        for _ in 0..steps {
            let pick = |s: &mut u64, set: &BTreeSet<u32>| {
                let i = (rng(s) as usize) % set.len().max(1);
                set.iter().nth(i).copied()
            };
            match rng(&mut seed) % 8 {
                0 | 1 if live.len() < N => {
                    live.insert(next);
                    next += 1;
                }
                2..=4 => {
                    if let Some(t) = pick(&mut seed, &live) {
                        if q.push(t) {
                            if !model.contains(&t) {
                                model.push_back(t);
                            }
                        } else {
                            lost += 1;
                        }
                    }
                }
                5 => {
                    if let Some(t) = pick(&mut seed, &live) {
                        live.remove(&t);
                        if forget_on_leave {
                            q.forget(t);
                            model.retain(|&m| m != t);
                        }
                    }
                }
                _ => {
                    // A slot completes: it goes to the first waiter that
                    // is still there, the gone ones are skipped (as the
                    // completion handler does).
                    loop {
                        let got = q.pop();
                        assert_eq!(got, model.pop_front());
                        match got {
                            Some(t) if !live.contains(&t) => continue,
                            _ => break,
                        }
                    }
                }
            }
            assert_eq!(q.len(), model.len());
            if forget_on_leave {
                assert!(q.len() <= live.len());
            }
        }
        lost
    }

    #[test]
    fn with_forget_on_leave_no_push_is_ever_lost() {
        for seed in 1..200u64 {
            assert_eq!(churn::<8>(true, seed * 0x9e37_79b9, 2000), 0, "seed {seed}");
        }
        assert_eq!(churn::<255>(true, 0x5eed, 200_000), 0);
    }

    /// The queue as it was before the rule: tokens of connections that
    /// left while queued stay until they come up, fill it, and a live
    /// connection's push is lost.
    #[test]
    fn without_forget_stale_tokens_lose_pushes() {
        let lost: usize = (1..200u64).map(|s| churn::<8>(false, s * 0x9e37_79b9, 2000)).sum();
        assert!(lost > 0);
    }
}
