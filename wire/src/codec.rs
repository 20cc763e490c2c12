// SPDX-License-Identifier: GPL-2.0

//! Bounds-checked big-endian byte readers and writers for the wire codecs.
//!
//! Every access is checked: reading past the end of the input or writing
//! past the end of the output is a [`CodecError`], never a panic. Message
//! codecs (CLC today, LLC and CDC later) turn it into their own error type
//! through `From`, so `?` works unchanged in them.

/// A read or a write that went past the end of its buffer.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum CodecError {
    /// A read needed more bytes than the input has.
    Truncated,
    /// A write needed more room than the output has.
    BufferTooSmall,
}

/// Reads big-endian integers from a byte slice, never past its end.
#[derive(Clone, Debug)]
pub struct Reader<'a> {
    buf: &'a [u8],
    pos: usize,
}

impl<'a> Reader<'a> {
    /// A reader at the start of `buf`.
    #[inline]
    pub fn new(buf: &'a [u8]) -> Self {
        Reader { buf, pos: 0 }
    }

    /// A reader at offset `pos` of `buf`. `pos` may lie past the end: then
    /// the first read fails.
    #[inline]
    pub fn at(buf: &'a [u8], pos: usize) -> Self {
        Reader { buf, pos }
    }

    /// The offset of the next byte to read.
    #[inline]
    pub fn pos(&self) -> usize {
        self.pos
    }

    /// How many bytes are left to read.
    #[inline]
    pub fn remaining(&self) -> usize {
        self.buf.len().saturating_sub(self.pos)
    }

    /// The next `n` bytes, borrowed from the input.
    #[inline]
    pub fn bytes(&mut self, n: usize) -> Result<&'a [u8], CodecError> {
        let end = self.pos.checked_add(n).ok_or(CodecError::Truncated)?;
        let s = self.buf.get(self.pos..end).ok_or(CodecError::Truncated)?;
        self.pos = end;
        Ok(s)
    }

    /// The next `N` bytes, copied.
    #[inline]
    pub fn array<const N: usize>(&mut self) -> Result<[u8; N], CodecError> {
        <[u8; N]>::try_from(self.bytes(N)?).map_err(|_| CodecError::Truncated)
    }

    /// One byte.
    #[inline]
    pub fn u8(&mut self) -> Result<u8, CodecError> {
        let [b] = self.array()?;
        Ok(b)
    }

    /// A big-endian 16-bit integer.
    #[inline]
    pub fn be16(&mut self) -> Result<u16, CodecError> {
        Ok(u16::from_be_bytes(self.array()?))
    }

    /// A big-endian 24-bit integer (queue pair numbers, sequence numbers).
    #[inline]
    pub fn be24(&mut self) -> Result<u32, CodecError> {
        let [a, b, c] = self.array()?;
        Ok(u32::from_be_bytes([0, a, b, c]))
    }

    /// A big-endian 32-bit integer.
    #[inline]
    pub fn be32(&mut self) -> Result<u32, CodecError> {
        Ok(u32::from_be_bytes(self.array()?))
    }

    /// A big-endian 64-bit integer.
    #[inline]
    pub fn be64(&mut self) -> Result<u64, CodecError> {
        Ok(u64::from_be_bytes(self.array()?))
    }

    /// Steps over `n` bytes, which must be there.
    #[inline]
    pub fn skip(&mut self, n: usize) -> Result<(), CodecError> {
        self.bytes(n).map(|_| ())
    }
}

/// Writes big-endian integers into a byte slice, never past its end.
#[derive(Debug)]
pub struct Writer<'a> {
    buf: &'a mut [u8],
    pos: usize,
}

impl<'a> Writer<'a> {
    /// A writer for a message of exactly `len` bytes at the start of `buf`,
    /// which is zeroed first: bytes not written (reserved fields) stay zero.
    #[inline]
    pub fn new(buf: &'a mut [u8], len: usize) -> Result<Self, CodecError> {
        let buf = buf.get_mut(..len).ok_or(CodecError::BufferTooSmall)?;
        buf.fill(0);
        Ok(Writer { buf, pos: 0 })
    }

    /// A writer at offset `pos` of `buf`, which is left as it is: for
    /// patching fields of a message already built. `pos` may lie past the
    /// end: then the first write fails.
    #[inline]
    pub fn at(buf: &'a mut [u8], pos: usize) -> Self {
        Writer { buf, pos }
    }

    /// The offset of the next byte to write: after a message built from
    /// offset 0, its length so far.
    #[inline]
    pub fn pos(&self) -> usize {
        self.pos
    }

    /// How many bytes are left to write.
    #[inline]
    pub fn remaining(&self) -> usize {
        self.buf.len().saturating_sub(self.pos)
    }

    /// The next `n` bytes of the output, for the caller to fill.
    #[inline]
    fn slot(&mut self, n: usize) -> Result<&mut [u8], CodecError> {
        let end = self.pos.checked_add(n).ok_or(CodecError::BufferTooSmall)?;
        let s = self
            .buf
            .get_mut(self.pos..end)
            .ok_or(CodecError::BufferTooSmall)?;
        self.pos = end;
        Ok(s)
    }

    /// Copies `data`.
    #[inline]
    pub fn put(&mut self, data: &[u8]) -> Result<(), CodecError> {
        self.slot(data.len())?.copy_from_slice(data);
        Ok(())
    }

    /// One byte.
    #[inline]
    pub fn u8(&mut self, v: u8) -> Result<(), CodecError> {
        self.put(&[v])
    }

    /// A big-endian 16-bit integer.
    #[inline]
    pub fn be16(&mut self, v: u16) -> Result<(), CodecError> {
        self.put(&v.to_be_bytes())
    }

    /// The low 24 bits of `v`, big-endian.
    #[inline]
    pub fn be24(&mut self, v: u32) -> Result<(), CodecError> {
        let [_, a, b, c] = v.to_be_bytes();
        self.put(&[a, b, c])
    }

    /// A big-endian 32-bit integer.
    #[inline]
    pub fn be32(&mut self, v: u32) -> Result<(), CodecError> {
        self.put(&v.to_be_bytes())
    }

    /// A big-endian 64-bit integer.
    #[inline]
    pub fn be64(&mut self, v: u64) -> Result<(), CodecError> {
        self.put(&v.to_be_bytes())
    }

    /// `n` zero bytes (reserved fields).
    #[inline]
    pub fn zeros(&mut self, n: usize) -> Result<(), CodecError> {
        self.slot(n)?.fill(0);
        Ok(())
    }

    /// Steps over `n` bytes, leaving them as they are.
    #[inline]
    pub fn skip(&mut self, n: usize) -> Result<(), CodecError> {
        self.slot(n).map(|_| ())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reader_reads_big_endian() {
        let b = [
            1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18,
        ];
        let mut r = Reader::new(&b);
        assert_eq!(r.u8(), Ok(1));
        assert_eq!(r.be16(), Ok(0x0203));
        assert_eq!(r.be24(), Ok(0x0004_0506));
        assert_eq!(r.be32(), Ok(0x0708_090a));
        assert_eq!(r.be64(), Ok(0x0b0c_0d0e_0f10_1112));
        assert_eq!(r.pos(), 18);
        assert_eq!(r.remaining(), 0);
        assert_eq!(r.u8(), Err(CodecError::Truncated));
    }

    #[test]
    fn reader_bytes_array_skip() {
        let b = [1, 2, 3, 4, 5, 6];
        let mut r = Reader::new(&b);
        assert_eq!(r.bytes(2), Ok(&b[..2]));
        r.skip(1).unwrap();
        assert_eq!(r.array::<3>(), Ok([4, 5, 6]));
        assert_eq!(r.bytes(0), Ok(&b[6..]));
        assert_eq!(r.array::<1>(), Err(CodecError::Truncated));
    }

    #[test]
    fn reader_failure_consumes_nothing() {
        let b = [1, 2, 3];
        let mut r = Reader::new(&b);
        assert_eq!(r.be32(), Err(CodecError::Truncated));
        assert_eq!(r.pos(), 0);
        assert_eq!(r.be24(), Ok(0x0001_0203));
    }

    #[test]
    fn reader_at_any_position_never_panics() {
        let b = [0xaa; 4];
        assert_eq!(Reader::at(&b, 2).be16(), Ok(0xaaaa));
        assert_eq!(Reader::at(&b, 3).be16(), Err(CodecError::Truncated));
        assert_eq!(Reader::at(&b, 5).u8(), Err(CodecError::Truncated));
        assert_eq!(Reader::at(&b, 5).remaining(), 0);
        let mut r = Reader::at(&b, usize::MAX);
        assert_eq!(r.bytes(0), Err(CodecError::Truncated));
        assert_eq!(r.skip(1), Err(CodecError::Truncated));
        assert_eq!(
            Reader::new(&b).bytes(usize::MAX),
            Err(CodecError::Truncated)
        );
    }

    #[test]
    fn writer_writes_big_endian_and_zero_fills() {
        let mut b = [0xffu8; 24];
        let mut w = Writer::new(&mut b, 22).unwrap();
        w.u8(1).unwrap();
        w.be16(0x0203).unwrap();
        w.be24(0xff04_0506).unwrap();
        w.be32(0x0708_090a).unwrap();
        w.be64(0x0b0c_0d0e_0f10_1112).unwrap();
        w.zeros(1).unwrap();
        w.skip(1).unwrap();
        w.put(&[0x13, 0x14]).unwrap();
        assert_eq!(w.pos(), 22);
        assert_eq!(w.remaining(), 0);
        assert_eq!(w.u8(0), Err(CodecError::BufferTooSmall));
        assert_eq!(
            b,
            [
                1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 0, 0, 0x13, 0x14,
                0xff, 0xff
            ]
        );
    }

    #[test]
    fn writer_needs_room_for_the_message() {
        let mut b = [0u8; 4];
        assert_eq!(
            Writer::new(&mut b, 5).map(|_| ()),
            Err(CodecError::BufferTooSmall)
        );
        let mut w = Writer::new(&mut b, 3).unwrap();
        assert_eq!(w.be32(1), Err(CodecError::BufferTooSmall));
        assert_eq!(w.pos(), 0);
        assert_eq!(w.zeros(4), Err(CodecError::BufferTooSmall));
        assert_eq!(w.skip(usize::MAX), Err(CodecError::BufferTooSmall));
        w.be24(7).unwrap();
    }

    #[test]
    fn writer_at_patches_in_place() {
        let mut b = [0xeeu8; 8];
        let mut w = Writer::at(&mut b, 2);
        w.be16(0x1234).unwrap();
        w.zeros(2).unwrap();
        assert_eq!(w.pos(), 6);
        assert_eq!(w.be32(0), Err(CodecError::BufferTooSmall));
        assert_eq!(b, [0xee, 0xee, 0x12, 0x34, 0, 0, 0xee, 0xee]);
        let mut w = Writer::at(&mut b, usize::MAX);
        assert_eq!(w.put(&[]), Err(CodecError::BufferTooSmall));
        assert_eq!(w.remaining(), 0);
    }

    /// What an LLC or CDC codec does: a fixed 44-byte message, written
    /// field by field and read back.
    #[test]
    fn fixed_size_message_round_trip() {
        let mut b = [0u8; 64];
        let mut w = Writer::new(&mut b, 44).unwrap();
        w.u8(0xfe).unwrap();
        w.u8(44).unwrap();
        w.zeros(2).unwrap();
        w.be32(0xdead_beef).unwrap();
        w.be64(u64::MAX).unwrap();
        w.put(&[7; 28]).unwrap();
        assert_eq!(w.remaining(), 0);
        let mut r = Reader::new(&b[..44]);
        assert_eq!(r.u8(), Ok(0xfe));
        assert_eq!(r.u8(), Ok(44));
        r.skip(2).unwrap();
        assert_eq!(r.be32(), Ok(0xdead_beef));
        assert_eq!(r.be64(), Ok(u64::MAX));
        assert_eq!(r.array::<28>(), Ok([7; 28]));
        assert_eq!(r.remaining(), 0);
    }
}
