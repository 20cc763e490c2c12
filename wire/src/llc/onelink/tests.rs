// SPDX-License-Identifier: GPL-2.0

//! The answers of a link group with one link, against upstream's
//! messages byte for byte.

use super::super::testdata::*;
use super::*;
use crate::llc::{DEL_LOST_PATH, DEL_PROG_INIT_TERM, FLAG_RESP};

const CLIENT: OneLink = OneLink {
    role: Role::Client,
    version: LlcVersion::V2,
    link_num: 1,
    confirming: false,
};
const SERVER: OneLink = OneLink {
    role: Role::Server,
    ..CLIENT
};

fn confirming(link: OneLink) -> OneLink {
    OneLink {
        confirming: true,
        ..link
    }
}

/// The bytes of `m`, at most 44 of them (what the answering side posts).
fn bytes(m: &LlcMessage<'_>) -> [u8; LLC_LEN] {
    let mut buf = [0u8; LLC_LEN];
    assert_eq!(m.encode(&mut buf), Ok(LLC_LEN), "{m:?}");
    buf
}

/// The answer of `link` to `msg`, which must be a refusal of `why` with a
/// message.
fn refusal_answer(link: &OneLink, msg: &[u8], why: Refusal) -> [u8; LLC_LEN] {
    match link.decide(msg) {
        Ok(OneLinkAction::Refuse(w, Some(m))) if w == why => bytes(&m),
        other => panic!("{link:?}: {other:?}"),
    }
}

/// A v2 DELETE_LINK request of link `link_num`.
fn delete_link(link_num: u8, all: bool) -> [u8; LLC_LEN] {
    bytes(&LlcMessage::DeleteLink(DeleteLink {
        version: LlcVersion::V2,
        resp: false,
        all,
        orderly: false,
        link_num,
        reason: DEL_LOST_PATH,
    }))
}

#[test]
fn client_rejects_add_link_as_upstream() {
    // A v2 request with its extension: the 44-byte reject echoes the
    // request's link data, response and reject flags set.
    let want = add_link_v2_no_ext();
    assert_eq!(
        refusal_answer(&CLIENT, &add_link_v2(), Refusal::AddLink),
        want
    );
    // The same without the extension.
    let mut short = add_link_v2_no_ext();
    short[3] = 0;
    assert_eq!(refusal_answer(&CLIENT, &short, Refusal::AddLink), want);
    // A v1 link group: the reason in the header's third byte.
    let mut v1_req = add_link_v1_reject();
    v1_req[2] = 0;
    v1_req[3] = 0;
    let v1_group = OneLink {
        version: LlcVersion::V1,
        ..CLIENT
    };
    assert_eq!(
        refusal_answer(&v1_group, &v1_req, Refusal::AddLink),
        add_link_v1_reject()
    );
    // A v1 request on a v2 link group is answered in the group's version.
    let r = refusal_answer(&CLIENT, &v1_req, Refusal::AddLink);
    assert_eq!((r[0], r[1], r[2], r[3]), (0x22, 44, 0, 0xc0));
    assert_eq!(r[4..], add_link_v1_reject()[4..]);
}

#[test]
fn client_ignores_an_empty_add_link() {
    let mut empty = [0u8; LLC_LEN];
    empty[..4].copy_from_slice(&add_link_v2_no_ext()[..4]);
    empty[3] = 0;
    for link in [CLIENT, confirming(CLIENT)] {
        assert_eq!(
            link.decide(&empty),
            Ok(OneLinkAction::Refuse(Refusal::AddLink, None))
        );
    }
    // Any byte of link data makes it a request to reject.
    empty[43] = 1;
    assert!(matches!(
        CLIENT.decide(&empty),
        Ok(OneLinkAction::Refuse(Refusal::AddLink, Some(_)))
    ));
}

#[test]
fn server_ignores_add_link_requests() {
    for link in [SERVER, confirming(SERVER)] {
        assert_eq!(
            link.decide(&add_link_v2()),
            Ok(OneLinkAction::Refuse(Refusal::AddLink, None))
        );
    }
    // A reject nobody asked for.
    assert_eq!(
        SERVER.decide(&add_link_v2_no_ext()),
        Ok(OneLinkAction::Refuse(Refusal::OutOfFlow, None))
    );
}

#[test]
fn req_add_link_is_answered_by_the_server() {
    let want = req_add_link_resp();
    assert_eq!(
        refusal_answer(&SERVER, &req_add_link(), Refusal::AddLink),
        want
    );
    // Upstream's server answers a response too.
    assert_eq!(refusal_answer(&SERVER, &want, Refusal::AddLink), want);
    // While the first link is confirmed, it drops it.
    assert_eq!(
        confirming(SERVER).decide(&req_add_link()),
        Ok(OneLinkAction::Refuse(Refusal::AddLink, None))
    );
    // A client has no REQ_ADD_LINK flow.
    assert_eq!(
        CLIENT.decide(&req_add_link()),
        Ok(OneLinkAction::Refuse(Refusal::AddLink, None))
    );
    assert_eq!(
        CLIENT.decide(&want),
        Ok(OneLinkAction::Refuse(Refusal::OutOfFlow, None))
    );
}

#[test]
fn delete_link_of_another_link() {
    assert_eq!(
        refusal_answer(&CLIENT, &delete_link(2, false), Refusal::UnknownLink),
        delete_link_v2_resp()
    );
    assert_eq!(
        SERVER.decide(&delete_link(2, false)),
        Ok(OneLinkAction::Refuse(Refusal::UnknownLink, None))
    );
}

#[test]
fn delete_link_of_ours_ends_it() {
    let req = delete_link(1, false);
    let Ok(OneLinkAction::EndLink(Some(m))) = CLIENT.decide(&req) else {
        panic!("client keeps its link");
    };
    let mut want = req;
    want[3] = FLAG_RESP;
    want[5..9].fill(0);
    assert_eq!(bytes(&m), want);
    // The server sends the request back as it came.
    let Ok(OneLinkAction::EndLink(Some(m))) = SERVER.decide(&req) else {
        panic!("server keeps its link");
    };
    assert_eq!(bytes(&m), req);
}

#[test]
fn delete_link_of_the_group() {
    let all = delete_link_v1_all();
    assert_eq!(CLIENT.decide(&all), Ok(OneLinkAction::EndLink(None)));
    let Ok(OneLinkAction::EndLink(Some(m))) = SERVER.decide(&all) else {
        panic!("server keeps its link");
    };
    // Orderly, the peer's reason, in the group's version.
    assert_eq!(
        m,
        LlcMessage::DeleteLink(DeleteLink {
            version: LlcVersion::V2,
            resp: false,
            all: true,
            orderly: true,
            link_num: 0,
            reason: DEL_PROG_INIT_TERM,
        })
    );
    // Of another link id: the flag decides.
    assert_eq!(
        CLIENT.decide(&delete_link(7, true)),
        Ok(OneLinkAction::EndLink(None))
    );
}

#[test]
fn the_confirmation_takes_confirm_link_only() {
    let req = confirm_link_v1();
    let resp = confirm_link_v2_resp();
    assert_eq!(
        confirming(CLIENT).decide(&req),
        Ok(OneLinkAction::ToConfirmation)
    );
    assert_eq!(
        confirming(SERVER).decide(&resp),
        Ok(OneLinkAction::ToConfirmation)
    );
    for link in [confirming(CLIENT), confirming(SERVER)] {
        for m in [
            &delete_link(1, false)[..],
            &delete_link(2, false),
            &add_link_cont(),
        ] {
            assert_eq!(link.decide(m), Ok(OneLinkAction::EndLink(None)), "{m:?}");
        }
    }
    // The client's confirmation fails on an ADD_LINK, as upstream's.
    assert_eq!(
        confirming(CLIENT).decide(&add_link_v2()),
        Ok(OneLinkAction::EndLink(None))
    );
    // Afterwards nothing waits for them.
    for link in [CLIENT, SERVER] {
        for m in [&req[..], &resp, &add_link_cont()] {
            assert_eq!(
                link.decide(m),
                Ok(OneLinkAction::Refuse(Refusal::OutOfFlow, None))
            );
        }
    }
}

#[test]
fn test_link_and_rkeys_are_answered() {
    let test = test_link_v1();
    let Ok(OneLinkAction::Answer(m)) = SERVER.decide(&test) else {
        panic!("no echo");
    };
    let mut want = test_link_v1();
    want[3] = FLAG_RESP;
    assert_eq!(bytes(&m), want);
    assert_eq!(
        CLIENT.decide(&test_link_v2_resp()),
        Ok(OneLinkAction::Nothing)
    );

    // CONFIRM_RKEY: more than three keys is answered negative, retry.
    let mut req = confirm_rkey_v2_neg();
    req[3] = 0;
    let Ok(OneLinkAction::Answer(m)) = CLIENT.decide(&req) else {
        panic!("no answer");
    };
    assert_eq!(bytes(&m), confirm_rkey_v2_neg());
    let confirm = confirm_rkey_v1();
    let Ok(OneLinkAction::Answer(m)) = CLIENT.decide(&confirm) else {
        panic!("no answer");
    };
    let mut want = confirm_rkey_v1();
    want[0] = 0x26;
    want[1..3].copy_from_slice(&44u16.to_le_bytes());
    want[3] = FLAG_RESP;
    assert_eq!(bytes(&m), want);

    // DELETE_RKEY v2: the count kept, the keys cleared.
    let delete = delete_rkey_v2();
    let Ok(OneLinkAction::Answer(m)) = SERVER.decide(&delete) else {
        panic!("no answer");
    };
    let mut want = delete_rkey_v2_resp();
    want[3] = FLAG_RESP;
    want[5] = 0;
    assert_eq!(bytes(&m), want);
    // Responses nobody asked for.
    for m in [&confirm_rkey_v2_neg()[..], &delete_rkey_v2_resp()] {
        assert_eq!(
            SERVER.decide(m),
            Ok(OneLinkAction::Refuse(Refusal::OutOfFlow, None))
        );
    }
}

/// Every vector and every single-byte change of it, in every role and
/// phase: deciding never panics, every answer fits one 44-byte message,
/// and a response is never answered (but REQ_ADD_LINK's, by a server).
#[test]
fn every_answer_fits_and_responses_get_none() {
    let links = [
        CLIENT,
        SERVER,
        confirming(CLIENT),
        confirming(SERVER),
        OneLink {
            version: LlcVersion::V1,
            ..CLIENT
        },
        OneLink {
            version: LlcVersion::V1,
            link_num: 0,
            ..SERVER
        },
    ];
    let check = |msg: &[u8]| {
        for link in &links {
            let Ok(action) = link.decide(msg) else {
                continue;
            };
            let answer = match action {
                OneLinkAction::Answer(m) => Some(m),
                OneLinkAction::Refuse(_, m) | OneLinkAction::EndLink(m) => m,
                _ => None,
            };
            if let Some(m) = answer {
                let mut buf = [0u8; LLC_LEN];
                assert_eq!(m.encode(&mut buf), Ok(LLC_LEN), "{link:?} {msg:?}");
            }
            let resp = msg[3] & FLAG_RESP != 0;
            if resp && !(link.role == Role::Server && msg[0] == 0x25) {
                assert!(answer.is_none(), "{link:?} answers {msg:?}");
            }
        }
    };
    for (b, n) in all() {
        check(&b[..n]);
        for i in 0..n {
            for v in [0u8, 1, 2, 0x20, 0x40, 0x80, 0xc0, 0xff] {
                let mut m = b;
                m[i] = v;
                check(&m[..n]);
            }
        }
    }
}
