// SPDX-License-Identifier: GPL-2.0

//! The SMC-R CLC Accept (server) and Confirm (client): the RoCE endpoint
//! and the RMB of each side.

use super::{
    write_header, write_trailer, ClcError, Header, LocalInfo, MsgType, Reader, SmcType, Writer,
    EID_LEN, HEADER_LEN, SMCR_ACCEPT_CONFIRM_LEN_V1, SMCR_ACCEPT_CONFIRM_LEN_V2, SMC_V1,
};

/// An SMC-R Accept or Confirm.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub struct SmcrAcceptConfirm {
    /// Accept (server) or Confirm (client).
    pub kind: MsgType,
    /// SMC version.
    pub version: u8,
    /// The server asks for a new link group (first contact, `typev2` bit 1).
    pub first_contact: bool,
    /// The sender's identity and RoCE port.
    pub local: LocalInfo,
    /// Queue pair number (24 bits).
    pub qpn: u32,
    /// rkey of the sender's RMB.
    pub rmb_rkey: u32,
    /// Index of the RMB element in the RMB (1-based).
    pub rmbe_idx: u8,
    /// Connection's alert token.
    pub rmbe_alert_token: u32,
    /// Compressed RMB element size (4 bits).
    pub rmbe_size: u8,
    /// QP MTU (4 bits).
    pub qp_mtu: u8,
    /// DMA address of the RMB.
    pub rmb_dma_addr: u64,
    /// Initial packet sequence number (24 bits).
    pub psn: u32,
    /// The EID both sides agreed on (v2).
    pub eid: [u8; EID_LEN],
}

impl SmcrAcceptConfirm {
    /// Parses a complete SMC-R accept or confirm. v2 messages may carry a
    /// first-contact extension after the fixed part; it is not interpreted
    /// here.
    pub fn parse(msg: &[u8]) -> Result<Self, ClcError> {
        let h = Header::parse(msg)?;
        if h.kind != MsgType::Accept && h.kind != MsgType::Confirm {
            return Err(ClcError::BadType);
        }
        if h.typev1 != SmcType::R {
            return Err(ClcError::BadVersion);
        }
        let len = h.length as usize;
        if (h.version == SMC_V1 && len != SMCR_ACCEPT_CONFIRM_LEN_V1)
            || (h.version != SMC_V1 && len < SMCR_ACCEPT_CONFIRM_LEN_V2)
        {
            return Err(ClcError::BadLength);
        }
        let msg = h.whole(msg, true)?;
        let mut r = Reader::at(msg, HEADER_LEN);
        let local = LocalInfo::read(&mut r)?;
        let qpn = r.be24()?;
        let rmb_rkey = r.be32()?;
        let rmbe_idx = r.u8()?;
        let rmbe_alert_token = r.be32()?;
        let sizes = r.u8()?;
        r.skip(1)?;
        let rmb_dma_addr = r.be64()?;
        r.skip(1)?;
        let psn = r.be24()?;
        let mut eid = [0u8; EID_LEN];
        if h.version != SMC_V1 {
            eid = r.array()?;
        }
        Ok(SmcrAcceptConfirm {
            kind: h.kind,
            version: h.version,
            first_contact: h.typev2 & 2 != 0,
            local,
            qpn,
            rmb_rkey,
            rmbe_idx,
            rmbe_alert_token,
            rmbe_size: sizes >> 4,
            qp_mtu: sizes & 0xf,
            rmb_dma_addr,
            psn,
            eid,
        })
    }

    /// Encodes the fixed part (v1: 68 bytes; v2: 108 bytes, no first
    /// contact extension); returns the number of bytes written.
    pub fn encode(&self, buf: &mut [u8]) -> Result<usize, ClcError> {
        if self.kind != MsgType::Accept && self.kind != MsgType::Confirm {
            return Err(ClcError::BadType);
        }
        let len = if self.version == SMC_V1 {
            SMCR_ACCEPT_CONFIRM_LEN_V1
        } else {
            SMCR_ACCEPT_CONFIRM_LEN_V2
        };
        let mut w = Writer::new(buf, len)?;
        let typev2 = if self.first_contact { 2 } else { 0 };
        write_header(&mut w, self.kind, len, self.version, SmcType::R, typev2)?;
        self.local.write(&mut w)?;
        w.be24(self.qpn)?;
        w.be32(self.rmb_rkey)?;
        w.u8(self.rmbe_idx)?;
        w.be32(self.rmbe_alert_token)?;
        w.u8((self.rmbe_size << 4) | (self.qp_mtu & 0xf))?;
        w.u8(0)?;
        w.be64(self.rmb_dma_addr)?;
        w.u8(0)?;
        w.be24(self.psn)?;
        if self.version != SMC_V1 {
            w.put(&self.eid)?;
            w.zeros(8)?;
        }
        write_trailer(&mut w)?;
        Ok(len)
    }
}

#[cfg(test)]
mod tests {
    use super::super::testdata::*;
    use super::super::*;

    #[test]
    fn accept_v1_round_trip() {
        let a = SmcrAcceptConfirm::parse(&accept_v1_bytes()).unwrap();
        assert_eq!(a.kind, MsgType::Accept);
        assert!(a.first_contact);
        assert_eq!(a.qpn, 0x123);
        assert_eq!(a.rmb_rkey, 0xdead_beef);
        assert_eq!((a.rmbe_size, a.qp_mtu), (3, 3));
        assert_eq!(a.rmb_dma_addr, 0x1122_3344_5566_7788);
        assert_eq!(a.psn, 7);
        let mut buf = [0u8; 128];
        let n = a.encode(&mut buf).unwrap();
        assert_eq!(&buf[..n], &accept_v1_bytes()[..]);
    }

    #[test]
    fn accept_v2_round_trip() {
        let mut a = SmcrAcceptConfirm::parse(&accept_v1_bytes()).unwrap();
        a.version = SMC_V2;
        a.kind = MsgType::Confirm;
        a.eid = *UEID;
        let mut buf = [0u8; 128];
        let n = a.encode(&mut buf).unwrap();
        assert_eq!(n, SMCR_ACCEPT_CONFIRM_LEN_V2);
        assert_eq!(SmcrAcceptConfirm::parse(&buf[..n]).unwrap(), a);
    }
}
