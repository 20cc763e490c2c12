// SPDX-License-Identifier: GPL-2.0

//! The peer's RMB keys of one SMC-R link group, as upstream 6.12 keeps
//! them (`lgr->rtokens` and `rtokens_used_mask` in `smc_core.c`): one row
//! per peer RMB, one column per link slot, each entry the key and address
//! the peer registered that RMB with on that link. Keys arrive in the CLC
//! Accept or Confirm, CONFIRM_RKEY, ADD_LINK and ADD_LINK_CONT, and leave
//! with DELETE_RKEY or when a link is cleared. Values are in host byte
//! order: the caller converts.
//!
//! The caller provides the rows, [`RtokenRow`]s in any storage that
//! dereferences to a slice of them: upstream's [`ROWS`] rows take about
//! 12.5 KB, too much for the kernel stack, so the kernel module allocates
//! them on the heap (`KVec::from_elem(EMPTY_ROW, ROWS, GFP_KERNEL)`) and
//! hands them to [`RtokenTable::new`]. Nothing here allocates or panics.

use core::ops::{Deref, DerefMut};

use super::lgr_links::LINKS_MAX;

/// Most peer RMBs a link group has keys for (`SMC_RMBS_PER_LGR_MAX`): the
/// row count of a link group's table.
pub const ROWS: usize = 255;

/// A row's state: bit `l` set when column `l` is filled, bit
/// `RETIRED_SHIFT + l` when it held a key of a link cleared since, and this
/// one when the row is in use.
const USED: u8 = 0x80;
const RETIRED_SHIFT: usize = LINKS_MAX;
const _: () = assert!(2 * LINKS_MAX < 8);

/// A peer RMB's key and address on one link.
#[derive(Clone, Copy, PartialEq, Eq, Debug, Default)]
pub struct Rtoken {
    /// The remote key.
    pub rkey: u32,
    /// The RMB's address for that key.
    pub addr: u64,
}

const EMPTY: Rtoken = Rtoken { rkey: 0, addr: 0 };

/// One row of an [`RtokenTable`]: one peer RMB's keys, one per link slot,
/// and whether the row is in use. Only the table reads and writes it; the
/// caller only provides storage for rows, all [`EMPTY_ROW`] to begin with.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub struct RtokenRow {
    keys: [Rtoken; LINKS_MAX],
    state: u8,
}

/// A free row with every column empty. A slice of these is an empty table.
pub const EMPTY_ROW: RtokenRow = RtokenRow {
    keys: [EMPTY; LINKS_MAX],
    state: 0,
};

/// Why a table operation failed.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum RtokenError {
    /// Every row is in use (upstream's `-ENOSPC`).
    Full,
    /// No row in use matches (upstream's `-ENOENT`).
    NotFound,
    /// A link index is not below [`LINKS_MAX`].
    BadLink,
}

/// The state bit of column `link`.
fn bit(link: usize) -> Result<u8, RtokenError> {
    if link < LINKS_MAX {
        Ok(1 << link)
    } else {
        Err(RtokenError::BadLink)
    }
}

impl RtokenRow {
    /// Whether the row is in use.
    fn is_used(&self) -> bool {
        self.state & USED != 0
    }

    /// The key for `link`, if the row is in use and the column filled.
    fn get(&self, link: usize) -> Option<Rtoken> {
        let want = USED | bit(link).ok()?;
        if self.state & want != want {
            return None;
        }
        self.keys.get(link).copied()
    }

    /// Whether column `link` held `tok` when its link was cleared.
    fn retired_with(&self, link: usize, tok: Rtoken) -> bool {
        let Ok(b) = bit(link) else { return false };
        let want = USED | (b << RETIRED_SHIFT);
        self.state & want == want && self.keys.get(link) == Some(&tok)
    }

    /// Fills column `link` and marks the row used.
    fn put(&mut self, link: usize, tok: Rtoken) -> Result<(), RtokenError> {
        let b = bit(link)?;
        if let Some(k) = self.keys.get_mut(link) {
            *k = tok;
            self.state = (self.state & !(b << RETIRED_SHIFT)) | USED | b;
        }
        Ok(())
    }
}

/// The peer's RMB keys of a link group: rows of [`LINKS_MAX`] columns, kept
/// in the caller's storage `S`, which dereferences to a slice of
/// [`RtokenRow`]s: a heap allocation of [`ROWS`] rows in the kernel (a
/// `KVec<RtokenRow>`), or a `Vec`, a `Box<[RtokenRow]>` or a
/// `&mut [RtokenRow]`. The slice's length is the table's capacity,
/// [`rows`](Self::rows); a slice of [`EMPTY_ROW`]s is an empty table, and
/// [`new`](Self::new) makes it one.
///
/// A connection keeps the row index [`add`](Self::add) gave it (upstream's
/// `conn->rtoken_idx`) and looks up the key for the link it writes on with
/// [`get`](Self::get). When the peer deletes an rkey, [`delete`](Self::delete)
/// frees the whole row, every link's key with it, and the next `add` may
/// hand the row to another RMB. A connection that still holds the row
/// index would then write into that other RMB, so it must not simply go
/// on: `delete` returns the row so that the caller can find the
/// connections holding it and stop them. (The peer should delete a key
/// only once its connection is gone; a faulty or hostile peer may not.)
///
/// Unlike upstream, which marks an empty entry with rkey 0, an entry is
/// either filled or empty: an empty column never matches a key, and 0 is
/// a key like any other. As upstream, a row stays in use when
/// [`clear_link`](Self::clear_link) empties its columns; it is freed only
/// by `delete` with a key it still holds.
pub struct RtokenTable<S> {
    rows: S,
}

impl<S: Deref<Target = [RtokenRow]>> RtokenTable<S> {
    /// How many rows the table has, used or free: its capacity.
    pub fn rows(&self) -> usize {
        self.rows.len()
    }

    /// How many rows are in use.
    pub fn used(&self) -> usize {
        self.rows.iter().filter(|r| r.is_used()).count()
    }

    /// Whether `row` is in use; `false` for an index out of range.
    pub fn is_used(&self, row: usize) -> bool {
        self.rows.get(row).is_some_and(RtokenRow::is_used)
    }

    /// The key in `row` for `link`, if the row is in use and the column
    /// filled.
    pub fn get(&self, row: usize, link: usize) -> Option<Rtoken> {
        self.rows.get(row)?.get(link)
    }

    /// The row in use whose column `link` holds `rkey`
    /// (`smc_rtoken_find_by_link`).
    pub fn find(&self, link: usize, rkey: u32) -> Option<usize> {
        let holds = |r: &RtokenRow| r.get(link).is_some_and(|t| t.rkey == rkey);
        self.rows.iter().position(holds)
    }

    /// The row in use whose column `link` held `rkey` and `addr` when that
    /// link was cleared, and has not been filled since: where a CLC
    /// message that named a link lost meanwhile finds its RMB (upstream
    /// has no such lookup and takes the key for the connection's new
    /// link). The key itself is never used again. Only the latest
    /// clearing of `link` counts, and only one row: `None` when two match.
    pub fn find_retired(&self, link: usize, rkey: u32, addr: u64) -> Option<usize> {
        let tok = Rtoken { rkey, addr };
        let mut hits = self.rows.iter().enumerate().filter(|(_, r)| r.retired_with(link, tok));
        match (hits.next(), hits.next()) {
            (Some((row, _)), None) => Some(row),
            _ => None,
        }
    }
}

impl<S: DerefMut<Target = [RtokenRow]>> RtokenTable<S> {
    /// An empty table in `rows`, whose every row is set to [`EMPTY_ROW`]
    /// first, whatever it held.
    pub fn new(mut rows: S) -> Self {
        rows.fill(EMPTY_ROW);
        RtokenTable { rows }
    }

    /// Fills column `link` of `row` and marks the row used; nothing for a
    /// row out of range.
    fn put(&mut self, row: usize, link: usize, tok: Rtoken) -> Result<(), RtokenError> {
        match self.rows.get_mut(row) {
            Some(r) => r.put(link, tok),
            None => bit(link).map(|_| ()),
        }
    }

    /// Takes the key the peer registered an RMB with on `link`
    /// (`smc_rtoken_add`): the row in use that has the same key and
    /// address on `link` already, else the lowest free row, now in use.
    pub fn add(&mut self, link: usize, rkey: u32, addr: u64) -> Result<usize, RtokenError> {
        bit(link)?;
        let tok = Rtoken { rkey, addr };
        if let Some(row) = self.rows.iter().position(|r| r.get(link) == Some(tok)) {
            return Ok(row);
        }
        let row = self.rows.iter().position(|r| !r.is_used());
        let row = row.ok_or(RtokenError::Full)?;
        self.put(row, link, tok)?;
        Ok(row)
    }

    /// Frees the row in use whose column `link` holds `rkey`, all its
    /// columns with it (`smc_rtoken_delete`). Returns the row, whose
    /// connections are left without a key (see the type).
    pub fn delete(&mut self, link: usize, rkey: u32) -> Result<usize, RtokenError> {
        bit(link)?;
        let row = self.find(link, rkey).ok_or(RtokenError::NotFound)?;
        if let Some(r) = self.rows.get_mut(row) {
            *r = EMPTY_ROW;
        }
        Ok(row)
    }

    /// Gives the RMB that has `known_rkey` on `link` the key it has on
    /// `new_link` (`smc_rtoken_set`, for ADD_LINK and ADD_LINK_CONT).
    /// Returns the row.
    pub fn set(
        &mut self,
        link: usize,
        known_rkey: u32,
        new_link: usize,
        rkey: u32,
        addr: u64,
    ) -> Result<usize, RtokenError> {
        bit(link)?;
        bit(new_link)?;
        let row = self.find(link, known_rkey).ok_or(RtokenError::NotFound)?;
        self.put(row, new_link, Rtoken { rkey, addr })?;
        Ok(row)
    }

    /// Fills column `link` of `row`, which must be in use
    /// (`smc_rtoken_set2`, for the other links' keys in CONFIRM_RKEY; the
    /// caller maps the message's link id to the slot).
    pub fn set_at(
        &mut self,
        row: usize,
        link: usize,
        rkey: u32,
        addr: u64,
    ) -> Result<(), RtokenError> {
        bit(link)?;
        if !self.is_used(row) {
            return Err(RtokenError::NotFound);
        }
        self.put(row, link, Rtoken { rkey, addr })
    }

    /// Empties column `link` of every row; the rows stay in use
    /// (`smcr_rtoken_clear_link`, when the link is cleared). A filled
    /// column's key is kept, retired, for [`find_retired`](Self::find_retired)
    /// until the column is filled again; every other lookup sees the
    /// column empty.
    pub fn clear_link(&mut self, link: usize) {
        let Ok(b) = bit(link) else { return };
        for r in self.rows.iter_mut() {
            let retired = if r.state & b != 0 { b << RETIRED_SHIFT } else { 0 };
            if retired == 0 {
                if let Some(k) = r.keys.get_mut(link) {
                    *k = EMPTY;
                }
            }
            r.state = (r.state & !(b | (b << RETIRED_SHIFT))) | retired;
        }
    }
}

#[cfg(test)]
mod tests {
    extern crate std;

    use super::RtokenError::{BadLink, Full, NotFound};
    use super::*;
    use std::boxed::Box;
    use std::vec;
    use std::vec::Vec;

    /// A table of `n` rows on the heap, as the kernel keeps it.
    fn table(n: usize) -> RtokenTable<Vec<RtokenRow>> {
        RtokenTable::new(vec![EMPTY_ROW; n])
    }

    const fn t(rkey: u32, addr: u64) -> Option<Rtoken> {
        Some(Rtoken { rkey, addr })
    }

    #[test]
    fn same_key_same_row_else_a_new_one() {
        let mut tb = table(8);
        assert_eq!(tb.add(0, 1, 100), Ok(0));
        assert_eq!(tb.add(0, 1, 100), Ok(0)); // same key, address and link
        assert_eq!(tb.add(0, 1, 200), Ok(1)); // other address
        assert_eq!(tb.add(1, 1, 100), Ok(2)); // other link
        assert_eq!(tb.add(0, 2, 100), Ok(3)); // other key
        assert_eq!(tb.used(), 4);
        assert_eq!((tb.get(2, 1), tb.get(2, 0)), (t(1, 100), None));
        assert_eq!((tb.find(0, 1), tb.find(1, 1)), (Some(0), Some(2)));
    }

    #[test]
    fn full_table() {
        let mut tb = table(ROWS);
        assert_eq!(tb.rows(), ROWS);
        for i in 0..ROWS {
            assert_eq!(tb.add(1, i as u32, 0), Ok(i));
        }
        assert_eq!(tb.add(1, 9999, 0), Err(Full));
        assert_eq!(tb.add(1, 7, 0), Ok(7)); // a known key still finds its row
        assert_eq!(tb.used(), ROWS);
        assert_eq!(tb.delete(1, 200), Ok(200));
        assert_eq!(tb.add(1, 9999, 0), Ok(200));
    }

    #[test]
    fn delete_frees_the_whole_row_for_reuse() {
        let mut tb = table(4);
        assert_eq!(tb.add(0, 10, 0xa), Ok(0));
        assert_eq!(tb.set(0, 10, 1, 11, 0xb), Ok(0));
        assert_eq!(tb.add(0, 20, 0xc), Ok(1));
        assert_eq!(tb.delete(0, 11), Err(NotFound)); // 11 is link 1's key
        assert_eq!(tb.delete(1, 11), Ok(0));
        assert!(!tb.is_used(0));
        assert_eq!((tb.get(0, 0), tb.get(0, 1)), (None, None));
        assert_eq!(tb.find(0, 10), None);
        assert_eq!(tb.used(), 1);
        assert_eq!(tb.delete(1, 11), Err(NotFound));
        assert_eq!(tb.add(2, 30, 0xd), Ok(0)); // the lowest free row again
        let row: [_; LINKS_MAX] = core::array::from_fn(|l| tb.get(0, l));
        assert_eq!(row, [None, None, t(30, 0xd)]);
    }

    #[test]
    fn set_by_known_key_and_set_at_on_a_used_row() {
        let mut tb = table(4);
        assert_eq!(tb.set_at(0, 1, 3, 3), Err(NotFound));
        assert_eq!(tb.set_at(usize::MAX, 1, 3, 3), Err(NotFound));
        assert_eq!(tb.used(), 0);
        assert_eq!(tb.add(0, 5, 0x50), Ok(0));
        assert_eq!(tb.add(0, 7, 0x70), Ok(1));
        assert_eq!(tb.set(0, 7, 2, 77, 0x77), Ok(1));
        assert_eq!((tb.get(1, 2), tb.get(1, 0)), (t(77, 0x77), t(7, 0x70)));
        assert_eq!(tb.get(0, 2), None);
        assert_eq!(tb.set(0, 99, 2, 1, 1), Err(NotFound));
        assert_eq!(tb.set(1, 7, 2, 1, 1), Err(NotFound)); // 7 is not on link 1
        assert_eq!(tb.find(2, 77), Some(1));
        assert_eq!(tb.set_at(0, 1, 3, 3), Ok(()));
        assert_eq!(tb.get(0, 1), t(3, 3));
        assert_eq!(tb.set_at(2, 1, 3, 3), Err(NotFound));
        assert_eq!(tb.used(), 2);
    }

    #[test]
    fn clear_link_keeps_the_other_columns_and_rows() {
        let mut tb = table(4);
        for (i, k) in [1u32, 2, 3].into_iter().enumerate() {
            assert_eq!(tb.add(0, k, 0), Ok(i));
            assert_eq!(tb.set(0, k, 1, k + 10, 1), Ok(i));
        }
        tb.clear_link(0);
        assert_eq!(tb.used(), 3);
        for (i, k) in [1u32, 2, 3].into_iter().enumerate() {
            assert_eq!((tb.get(i, 0), tb.get(i, 1)), (None, t(k + 10, 1)));
            assert_eq!(tb.find(0, k), None);
        }
        assert_eq!(tb.add(0, 1, 0), Ok(3)); // the cleared key is new again
        assert_eq!(tb.delete(1, 12), Ok(1));
        assert_eq!(tb.used(), 3);
    }

    #[test]
    fn a_cleared_link_keeps_its_keys_for_find_retired_only() {
        let mut tb = table(4);
        assert_eq!(tb.add(0, 1, 0xa), Ok(0));
        assert_eq!(tb.set(0, 1, 1, 11, 0xb), Ok(0));
        assert_eq!(tb.add(1, 12, 0xc), Ok(1)); // nothing on link 0
        assert_eq!(tb.find_retired(0, 1, 0xa), None); // link 0 is alive
        tb.clear_link(0);
        assert_eq!((tb.get(0, 0), tb.find(0, 1)), (None, None));
        assert_eq!(tb.find_retired(0, 1, 0xa), Some(0));
        assert_eq!(tb.find_retired(0, 1, 0xb), None); // another address
        assert_eq!(tb.find_retired(1, 11, 0xb), None); // link 1 is alive
        assert_eq!(tb.delete(0, 1), Err(NotFound)); // retired keys delete nothing
        assert_eq!(tb.add(0, 1, 0xa), Ok(2)); // nor does add take them
        assert_eq!(tb.delete(0, 1), Ok(2));
        // A new link in the slot fills the column: the old key is gone.
        assert_eq!(tb.set(1, 11, 0, 5, 0x5), Ok(0));
        assert_eq!(tb.find_retired(0, 1, 0xa), None);
        tb.clear_link(0);
        assert_eq!(tb.find_retired(0, 5, 0x5), Some(0));
        tb.clear_link(0); // a second clearing forgets it
        assert_eq!(tb.find_retired(0, 5, 0x5), None);
        tb.clear_link(1);
        assert_eq!(tb.find_retired(1, 11, 0xb), Some(0));
        assert_eq!(tb.delete(1, 12), Err(NotFound));
        assert_eq!(tb.used(), 2);
        assert_eq!(tb.find_retired(LINKS_MAX, 11, 0xb), None);
        // Two rows that held the same key: neither is taken.
        let mut tb = table(4);
        assert_eq!(tb.add(0, 7, 0x70), Ok(0));
        assert_eq!(tb.add(1, 8, 0x80), Ok(1));
        assert_eq!(tb.set_at(1, 0, 7, 0x70), Ok(()));
        tb.clear_link(0);
        assert_eq!(tb.find_retired(0, 7, 0x70), None);
    }

    #[test]
    fn rkey_zero_is_a_key_and_empty_never_matches() {
        let mut tb = table(4);
        assert_eq!(tb.add(0, 5, 0), Ok(0));
        assert_eq!(tb.find(1, 0), None);
        assert_eq!(tb.delete(1, 0), Err(NotFound));
        assert_eq!(tb.add(1, 0, 0), Ok(1)); // not row 0's empty column
        assert_eq!(tb.delete(1, 0), Ok(1));
    }

    #[test]
    fn bad_links_are_refused() {
        let mut tb = table(4);
        assert_eq!(tb.add(0, 1, 1), Ok(0));
        for bad in [LINKS_MAX, 8, 64, usize::MAX] {
            assert_eq!(tb.add(bad, 1, 1), Err(BadLink));
            assert_eq!(tb.delete(bad, 1), Err(BadLink));
            assert_eq!(tb.set(bad, 1, 1, 2, 2), Err(BadLink));
            assert_eq!(tb.set(0, 1, bad, 2, 2), Err(BadLink));
            assert_eq!(tb.set_at(0, bad, 2, 2), Err(BadLink));
            assert_eq!((tb.get(0, bad), tb.get(bad, 0)), (None, None));
            assert_eq!(tb.find(bad, 1), None);
            tb.clear_link(bad);
        }
        assert_eq!((tb.used(), tb.get(0, 0)), (1, t(1, 1)));
    }

    #[test]
    fn the_caller_provides_the_rows_and_new_empties_them() {
        let mut arr = [EMPTY_ROW; 3];
        let mut tb = RtokenTable::new(&mut arr[..]);
        assert_eq!((tb.rows(), tb.used()), (3, 0));
        assert_eq!(tb.add(0, 1, 1), Ok(0));
        assert_eq!(tb.set(0, 1, 2, 2, 2), Ok(0));
        assert_eq!(tb.add(1, 3, 3), Ok(1));
        assert_ne!(arr, [EMPTY_ROW; 3]); // the keys live in the caller's rows
        let tb = RtokenTable::new(&mut arr[..]); // a new table forgets them
        assert_eq!((tb.used(), tb.get(0, 0), tb.find(1, 3)), (0, None, None));
        assert_eq!(arr, [EMPTY_ROW; 3]);

        let mut boxed: Box<[RtokenRow]> = vec![EMPTY_ROW; 2].into_boxed_slice();
        if let Some(r) = boxed.first_mut() {
            *r = RtokenRow {
                keys: [Rtoken { rkey: 9, addr: 9 }; LINKS_MAX],
                state: USED | 0x7,
            };
        }
        let mut tb = RtokenTable::new(boxed);
        assert_eq!((tb.rows(), tb.used(), tb.find(0, 9)), (2, 0, None));
        assert_eq!((tb.add(0, 5, 5), tb.add(0, 6, 6)), (Ok(0), Ok(1)));
        assert_eq!(tb.add(0, 7, 7), Err(Full));

        let mut none = table(0);
        assert_eq!((none.rows(), none.used(), none.is_used(0)), (0, 0, false));
        assert_eq!(none.add(0, 1, 1), Err(Full));
        assert_eq!(none.add(LINKS_MAX, 1, 1), Err(BadLink));
        assert_eq!(none.delete(0, 1), Err(NotFound));
        assert_eq!(none.set_at(0, 0, 1, 1), Err(NotFound));
        none.clear_link(0);
    }

    /// A small deterministic generator (no dependencies).
    fn rng(seed: &mut u64) -> u64 {
        *seed ^= *seed << 13;
        *seed ^= *seed >> 7;
        *seed ^= *seed << 17;
        *seed
    }

    /// A row of the obvious model table, of 4 rows, `None` when free.
    type Row = [Option<Rtoken>; LINKS_MAX];

    /// The first used row of `m` whose column `link` passes `f`.
    fn m_pos(m: &[Option<Row>; 4], link: usize, f: impl Fn(Rtoken) -> bool) -> Option<usize> {
        let col = |r: &Option<Row>| r.and_then(|c| c.get(link).copied().flatten());
        m.iter().position(|r| col(r).is_some_and(&f))
    }

    #[test]
    fn matches_a_model() {
        let mut seed = 0x2545_f491_4f6c_dd1d;
        let mut tb = table(4);
        let mut m: [Option<Row>; 4] = [None; 4];
        // The retired keys of each row.
        let mut ret: [Row; 4] = [[None; LINKS_MAX]; 4];
        let (mut hits, mut fulls) = ([0usize; 7], 0);
        for _ in 0..12000 {
            let mut r = || rng(&mut seed);
            let op = r() % 7;
            // Link 3 and row 4 are bad; small key and address ranges match.
            let (link, link2, row) = ((r() % 4) as usize, (r() % 4) as usize, (r() % 5) as usize);
            let (rkey, rkey2, addr) = ((r() % 6) as u32, (r() % 6) as u32, r() % 3);
            let tok = Rtoken { rkey, addr };
            let (got, want) = match op {
                0 | 1 => {
                    let want = bit(link).and_then(|_| {
                        if let Some(i) = m_pos(&m, link, |t| t == tok) {
                            return Ok(i);
                        }
                        let i = m.iter().position(Option::is_none).ok_or(Full)?;
                        let mut c = [None; LINKS_MAX];
                        c[link] = Some(tok);
                        m[i] = Some(c);
                        ret[i] = [None; LINKS_MAX];
                        Ok(i)
                    });
                    (tb.add(link, rkey, addr), want)
                }
                2 => {
                    let want = bit(link).and_then(|_| {
                        let i = m_pos(&m, link, |t| t.rkey == rkey).ok_or(NotFound)?;
                        m[i] = None;
                        ret[i] = [None; LINKS_MAX];
                        Ok(i)
                    });
                    (tb.delete(link, rkey), want)
                }
                3 => {
                    let want = bit(link).and(bit(link2)).and_then(|_| {
                        let i = m_pos(&m, link, |t| t.rkey == rkey2).ok_or(NotFound)?;
                        if let Some(c) = &mut m[i] {
                            c[link2] = Some(tok);
                        }
                        ret[i][link2] = None;
                        Ok(i)
                    });
                    (tb.set(link, rkey2, link2, rkey, addr), want)
                }
                4 => {
                    let want = bit(link).and_then(|_| {
                        let c = m.get_mut(row).and_then(Option::as_mut).ok_or(NotFound)?;
                        c[link] = Some(tok);
                        ret[row][link] = None;
                        Ok(row)
                    });
                    (tb.set_at(row, link, rkey, addr).map(|()| row), want)
                }
                5 => {
                    tb.clear_link(link);
                    for (c, rt) in m.iter_mut().zip(ret.iter_mut()) {
                        let cell = c.as_mut().and_then(|c| c.get_mut(link));
                        if let (Some(e), Some(r)) = (cell, rt.get_mut(link)) {
                            *r = e.take();
                        }
                    }
                    (Ok(0), Ok(0))
                }
                _ => {
                    let held = |i: &usize| m[*i].is_some() && ret[*i].get(link) == Some(&Some(tok));
                    let rows: Vec<usize> = (0..4).filter(held).collect();
                    let want = if rows.len() == 1 { Ok(rows[0]) } else { Err(NotFound) };
                    (tb.find_retired(link, rkey, addr).ok_or(NotFound), want)
                }
            };
            assert_eq!(got, want, "op {op} link {link} {link2} row {row}");
            hits[op as usize] += usize::from(got.is_ok());
            fulls += usize::from(got == Err(Full));
            assert_eq!(tb.used(), m.iter().flatten().count());
            for r in 0..=4 {
                let mr = m.get(r).copied().flatten();
                assert_eq!(tb.is_used(r), mr.is_some());
                for l in 0..=LINKS_MAX {
                    assert_eq!(tb.get(r, l), mr.and_then(|c| c.get(l).copied().flatten()));
                    assert!((0..6).all(|k| tb.find(l, k) == m_pos(&m, l, |t| t.rkey == k)));
                }
            }
        }
        assert!(hits.iter().all(|&h| h > 30), "{hits:?}"); // each op often succeeds
        assert!(fulls > 50, "{fulls}"); // and the table often fills up
    }
}
