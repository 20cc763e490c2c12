// SPDX-License-Identifier: GPL-2.0

//! The CLC Decline: SMC will not be used on this connection, and why.

use super::{
    write_header, write_trailer, ClcError, DeclineReason, Header, MsgType, Reader, SmcType, Writer,
    DECLINE_LEN_V1, DECLINE_LEN_V2, EYECATCHER_SMCR, HEADER_LEN, OS_LINUX, SMC_V1, SYSTEMID_LEN,
};

/// A CLC Decline.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub struct Decline {
    /// SMC version of the message (1: 28 bytes, 2 and later: 44 bytes).
    pub version: u8,
    /// The sender's system identifier (zero when it has none).
    pub peer_id: [u8; SYSTEMID_LEN],
    /// Why the sender declines.
    pub reason: DeclineReason,
    /// The sender's OS type (v2; 2 is Linux).
    pub os_type: u8,
    /// The sender lost synchronisation of a first contact: its link group
    /// must go (the "first contact" bit of `typev2`).
    pub sync_error: bool,
    /// Additional diagnosis codes (v2).
    pub diagnosis_v2: [u32; 4],
}

/// The length of a decline of `version`.
fn decline_len(version: u8) -> usize {
    if version == SMC_V1 {
        DECLINE_LEN_V1
    } else {
        DECLINE_LEN_V2
    }
}

impl Decline {
    /// The decline we send for `reason` in the given protocol version.
    pub fn new(version: u8, peer_id: [u8; SYSTEMID_LEN], reason: DeclineReason) -> Self {
        Decline {
            version,
            peer_id,
            reason,
            os_type: if version == SMC_V1 { 0 } else { OS_LINUX },
            sync_error: reason == DeclineReason::SyncError,
            diagnosis_v2: [0; 4],
        }
    }

    /// Its length on the wire.
    // A message is never empty: an `is_empty` would make no sense.
    #[allow(clippy::len_without_is_empty)]
    pub fn len(&self) -> usize {
        decline_len(self.version)
    }

    /// Encodes into `buf`; returns the number of bytes written.
    pub fn encode(&self, buf: &mut [u8]) -> Result<usize, ClcError> {
        let len = self.len();
        let mut w = Writer::new(buf, len)?;
        let typev2 = if self.sync_error { 2 } else { 0 };
        write_header(
            &mut w,
            &EYECATCHER_SMCR,
            MsgType::Decline,
            len,
            self.version,
            SmcType::R,
            typev2,
        )?;
        w.put(&self.peer_id)?;
        w.be32(self.reason.code())?;
        w.u8(self.os_type << 4)?;
        w.zeros(3)?;
        if self.version != SMC_V1 {
            for d in self.diagnosis_v2 {
                w.be32(d)?;
            }
        }
        write_trailer(&mut w)?;
        Ok(len)
    }

    /// Parses a complete decline. Like upstream, the trailer is not checked.
    pub fn parse(msg: &[u8]) -> Result<Self, ClcError> {
        let h = Header::parse(msg)?;
        if h.kind != MsgType::Decline {
            return Err(ClcError::BadType);
        }
        if usize::from(h.length) != decline_len(h.version) {
            return Err(ClcError::BadLength);
        }
        let msg = h.whole(msg, false)?;
        let mut r = Reader::at(msg, HEADER_LEN);
        let peer_id = r.array()?;
        let reason = DeclineReason::from_code(r.be32()?);
        let os_type = r.u8()? >> 4;
        r.skip(3)?;
        let mut diagnosis_v2 = [0u32; 4];
        if h.version != SMC_V1 {
            for d in diagnosis_v2.iter_mut() {
                *d = r.be32()?;
            }
        }
        Ok(Decline {
            version: h.version,
            peer_id,
            reason,
            os_type,
            sync_error: h.typev2 & 2 != 0,
            diagnosis_v2,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::super::testdata::*;
    use super::super::*;

    #[test]
    fn decline_v1_matches_upstream_layout() {
        let d = Decline::new(SMC_V1, ID, DeclineReason::NoSmcDevice);
        let mut buf = [0u8; 64];
        let n = d.encode(&mut buf).unwrap();
        assert_eq!(&buf[..n], &decline_v1_bytes()[..]);
        assert_eq!(Decline::parse(&decline_v1_bytes()).unwrap(), d);
    }

    #[test]
    fn decline_v2_matches_upstream_layout() {
        let d = Decline::new(SMC_V2, ID, DeclineReason::NoUeid);
        let mut buf = [0u8; 64];
        let n = d.encode(&mut buf).unwrap();
        assert_eq!(&buf[..n], &decline_v2_bytes()[..]);
        let p = Decline::parse(&decline_v2_bytes()).unwrap();
        assert_eq!(p, d);
        assert_eq!(p.os_type, OS_LINUX);
    }

    #[test]
    fn decline_sync_error_sets_first_contact_bit() {
        let d = Decline::new(SMC_V2, ID, DeclineReason::SyncError);
        let mut buf = [0u8; 64];
        d.encode(&mut buf).unwrap();
        assert_eq!(buf[7], 0x20 | (2 << 2));
        assert!(Decline::parse(&buf).unwrap().sync_error);
    }

    #[test]
    fn decline_into_small_buffer_fails() {
        let d = Decline::new(SMC_V2, ID, DeclineReason::NoUeid);
        assert_eq!(d.encode(&mut [0u8; 43]), Err(ClcError::BufferTooSmall));
    }
}
