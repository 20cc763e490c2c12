// SPDX-License-Identifier: GPL-2.0

//! A fixed table of values found by a 32-bit key (a connection's token) in
//! O(1): open addressing with linear probing from `key % N`, and
//! backward-shift deletion, so no tombstones pile up. Tokens come from a
//! counter, so the connections of one link group usually sit in their home
//! slots and a lookup touches one entry. Nothing here allocates.

/// What a table keeps: a value that knows its key.
pub trait Keyed {
    /// The key the value is found by.
    fn key(&self) -> u32;
}

/// Why an insert failed.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum InsertError {
    /// A value with the same key is there.
    Exists,
    /// Every slot is taken.
    Full,
}

/// Up to `N` values, each key at most once.
pub struct TokenTable<T, const N: usize> {
    slots: [Option<T>; N],
    len: usize,
}

impl<T: Keyed, const N: usize> Default for TokenTable<T, N> {
    fn default() -> Self {
        Self::new()
    }
}

impl<T: Keyed, const N: usize> TokenTable<T, N> {
    /// An empty table.
    pub const fn new() -> Self {
        TokenTable {
            slots: [const { None }; N],
            len: 0,
        }
    }

    fn home(key: u32) -> usize {
        (key as usize) % N.max(1)
    }

    /// The slot of `key`, if it is there.
    fn find(&self, key: u32) -> Option<usize> {
        let mut i = Self::home(key);
        for _ in 0..N {
            match self.slots.get(i)? {
                None => return None,
                Some(v) if v.key() == key => return Some(i),
                Some(_) => i = (i + 1) % N,
            }
        }
        None
    }

    /// Adds `value`.
    pub fn insert(&mut self, value: T) -> Result<(), InsertError> {
        let key = value.key();
        let mut i = Self::home(key);
        for _ in 0..N {
            match self.slots.get_mut(i) {
                Some(slot @ None) => {
                    *slot = Some(value);
                    self.len += 1;
                    return Ok(());
                }
                Some(Some(v)) if v.key() == key => return Err(InsertError::Exists),
                Some(Some(_)) => i = (i + 1) % N,
                None => break,
            }
        }
        Err(InsertError::Full)
    }

    /// The value of `key`.
    pub fn get(&self, key: u32) -> Option<&T> {
        self.slots.get(self.find(key)?)?.as_ref()
    }

    /// Takes the value of `key` out.
    pub fn remove(&mut self, key: u32) -> Option<T> {
        let at = self.find(key)?;
        self.remove_at(at)
    }

    /// Takes slot `at` out and moves later entries of its probe run back,
    /// so every entry stays reachable from its home slot.
    fn remove_at(&mut self, at: usize) -> Option<T> {
        let taken = self.slots.get_mut(at)?.take()?;
        self.len -= 1;
        let mut hole = at;
        let mut j = (at + 1) % N;
        for _ in 1..N {
            let Some(home) = self.slots.get(j).and_then(|s| s.as_ref()).map(|v| Self::home(v.key()))
            else {
                break;
            };
            // The entry at `j` may fill the hole unless its home lies
            // cyclically in (hole, j].
            let stays = if hole <= j {
                hole < home && home <= j
            } else {
                hole < home || home <= j
            };
            if !stays {
                let moved = self.slots.get_mut(j).and_then(Option::take);
                if let Some(dst) = self.slots.get_mut(hole) {
                    *dst = moved;
                }
                hole = j;
            }
            j = (j + 1) % N;
        }
        Some(taken)
    }

    /// Takes out, into `out`, values that `pick` accepts, as many as fit;
    /// returns how many.
    pub fn take_if(&mut self, out: &mut [Option<T>], pick: impl Fn(&T) -> bool) -> usize {
        let mut n = 0;
        while n < out.len() {
            let Some(at) = self
                .slots
                .iter()
                .position(|s| s.as_ref().is_some_and(&pick))
            else {
                break;
            };
            let Some(v) = self.remove_at(at) else { break };
            if let Some(dst) = out.get_mut(n) {
                *dst = Some(v);
            }
            n += 1;
        }
        n
    }

    /// How many values there are.
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether there are none.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Every value, in slot order.
    pub fn iter(&self) -> impl Iterator<Item = &T> {
        self.slots.iter().flatten()
    }
}

#[cfg(test)]
mod tests {
    extern crate std;
    use super::*;
    use std::collections::BTreeMap;
    use std::vec::Vec;

    #[derive(Debug, PartialEq)]
    struct V(u32, u64);

    impl Keyed for V {
        fn key(&self) -> u32 {
            self.0
        }
    }

    #[test]
    fn insert_get_remove() {
        let mut t: TokenTable<V, 7> = TokenTable::new();
        assert_eq!(t.insert(V(1, 10)), Ok(()));
        assert_eq!(t.insert(V(8, 80)), Ok(()), "same home as 1");
        assert_eq!(t.insert(V(1, 11)), Err(InsertError::Exists));
        assert_eq!(t.get(8), Some(&V(8, 80)));
        assert_eq!(t.remove(1), Some(V(1, 10)));
        assert_eq!(t.get(8), Some(&V(8, 80)), "moved back to its home");
        assert_eq!(t.get(1), None);
        assert_eq!(t.len(), 1);
    }

    #[test]
    fn full_table_refuses() {
        let mut t: TokenTable<V, 3> = TokenTable::new();
        for k in 0..3 {
            assert_eq!(t.insert(V(k * 3, 0)), Ok(()));
        }
        assert_eq!(t.insert(V(100, 0)), Err(InsertError::Full));
        assert_eq!(t.get(100), None);
        assert_eq!(t.get(6), Some(&V(6, 0)));
    }

    /// A small deterministic generator (no dependencies).
    fn rng(seed: &mut u64) -> u64 {
        *seed ^= *seed << 13;
        *seed ^= *seed >> 7;
        *seed ^= *seed << 17;
        *seed
    }

    /// Random inserts, removes and takes against a map: every key stays
    /// reachable, none is found twice, the count is right.
    #[test]
    fn agrees_with_a_map() {
        let mut seed = 0x9e37_79b9_7f4a_7c15;
        for round in 0..200 {
            let mut t: TokenTable<V, 13> = TokenTable::new();
            let mut m = BTreeMap::new();
            for step in 0..400u64 {
                let key = (rng(&mut seed) % 40) as u32 + round;
                match rng(&mut seed) % 5 {
                    0 | 1 => {
                        let r = t.insert(V(key, step));
                        if m.contains_key(&key) {
                            assert_eq!(r, Err(InsertError::Exists));
                        } else if m.len() == 13 {
                            assert_eq!(r, Err(InsertError::Full));
                        } else {
                            assert_eq!(r, Ok(()));
                            m.insert(key, step);
                        }
                    }
                    2 => assert_eq!(t.remove(key).map(|v| v.1), m.remove(&key)),
                    3 => {
                        let mut out: [Option<V>; 3] = [None, None, None];
                        let n = t.take_if(&mut out, |v| v.1 % 2 == 0);
                        for v in out.iter().flatten() {
                            assert_eq!(m.remove(&v.0), Some(v.1));
                        }
                        assert_eq!(out.iter().flatten().count(), n);
                    }
                    _ => assert_eq!(t.get(key).map(|v| v.1), m.get(&key).copied()),
                }
                assert_eq!(t.len(), m.len());
                for (k, s) in &m {
                    assert_eq!(t.get(*k).map(|v| v.1), Some(*s));
                }
                let mut seen: Vec<u32> = t.iter().map(|v| v.0).collect();
                seen.sort();
                assert_eq!(seen, m.keys().copied().collect::<Vec<_>>());
            }
        }
    }

    /// Sequential tokens sit in their home slots: a lookup is one probe.
    #[test]
    fn sequential_tokens_sit_at_home() {
        let mut t: TokenTable<V, 255> = TokenTable::new();
        for k in 1000..1255 {
            assert_eq!(t.insert(V(k, 0)), Ok(()));
        }
        for k in 1000..1255u32 {
            assert_eq!(t.find(k), Some(k as usize % 255));
        }
    }
}
