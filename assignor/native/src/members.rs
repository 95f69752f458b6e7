//! A consumer request's members read from its bytes (issue 24), every member's fields at once,
//! as columns: the decoder read each through protobuf's accessors before, one Python step a
//! member and field (about 2 ms of a fresh 800-member call).
//!
//! The request's bytes (`ConsumerAssignRequest`) are read for field 3 (`MemberSubscription`)
//! only, as protobuf reads them: a singular field's last value wins, repeated fields append, a
//! message field sent twice is merged, a oneof takes its last member (setting one clears the
//! other), unknown fields are skipped. Strings are handed back as bytes: the server parsed the
//! same request with protobuf first, which checks their UTF-8.
//!
//!     MemberSubscription: 1 member_id, 2 group_instance_id, 3 subscription, 4 raw_subscription
//!     ConsumerSubscription: 1 topics, 2 owned_partitions, 3 generation_id, 4 rack_id,
//!       5 info, 6 info_bytes, 7 user_data_bytes (oneof user_data), 8 topic_list,
//!       9 owned_by_topic, 10 capacity

use crate::owned::{delimited, skip, varint, Failure};

const MEMBERS: u64 = 3;

/// Which of `kind` a member set: none, `subscription`, `raw_subscription`.
pub const KIND_NONE: u8 = 0;
pub const KIND_SUBSCRIPTION: u8 = 1;
pub const KIND_RAW: u8 = 2;

/// One member's fields; a structured subscription's are empty unless `kind` is one.
#[derive(Default)]
pub struct Member<'a> {
    pub id: &'a [u8],
    pub instance_id: &'a [u8],
    pub kind: u8,
    pub raw: &'a [u8],
    pub topics: Vec<&'a [u8]>,
    pub owned_partitions: i64,
    pub generation: Option<i32>,
    pub rack: &'a [u8],
    /// The `user_data` oneof's field number (5, 6, 7), 0 when none, and its bytes (6, 7).
    pub user_data: u8,
    pub user_data_bytes: &'a [u8],
    pub topic_list: Option<i32>,
    pub by_topic: i64,
    /// The subscription's `owned_by_topic` fields (tag, length, entry) end to end, as the
    /// owned partitions' reader (`owned.rs`) takes them.
    pub by_topic_bytes: Vec<u8>,
    pub capacity: Option<f64>,
    /// The `subscription` field's bodies in order (sent twice, protobuf merges them): the
    /// Streams member read (`streams_members.rs`) walks them for what this read skips.
    pub subscription_parts: Vec<&'a [u8]>,
}

fn subscription<'a>(data: &'a [u8], m: &mut Member<'a>) -> Result<(), Failure> {
    let mut at = 0;
    while at < data.len() {
        let start = at;
        let key = varint(data, &mut at)?;
        match (key >> 3, key & 7) {
            (1, 2) => m.topics.push(delimited(data, &mut at)?),
            (2, 2) => {
                delimited(data, &mut at)?;
                m.owned_partitions += 1;
            }
            (3, 0) => m.generation = Some(varint(data, &mut at)? as i32),
            (4, 2) => m.rack = delimited(data, &mut at)?,
            (5, 2) => {
                delimited(data, &mut at)?;
                (m.user_data, m.user_data_bytes) = (5, b"");
            }
            (n @ (6 | 7), 2) => {
                m.user_data_bytes = delimited(data, &mut at)?;
                m.user_data = n as u8;
            }
            (8, 0) => m.topic_list = Some(varint(data, &mut at)? as i32),
            (9, 2) => {
                delimited(data, &mut at)?;
                m.by_topic += 1;
                m.by_topic_bytes.extend_from_slice(&data[start..at]);
            }
            (10, 1) => {
                let Some(v) = data.get(at..at + 8) else {
                    return Err(("truncated fixed-size field".to_string(), at));
                };
                m.capacity = Some(f64::from_le_bytes(v.try_into().expect("8 bytes")));
                at += 8;
            }
            _ => skip(data, &mut at, key)?,
        }
    }
    Ok(())
}

fn member<'a>(data: &'a [u8], m: &mut Member<'a>) -> Result<(), Failure> {
    let mut at = 0;
    while at < data.len() {
        let key = varint(data, &mut at)?;
        let from = at;
        match (key >> 3, key & 7) {
            (1, 2) => m.id = delimited(data, &mut at)?,
            (2, 2) => m.instance_id = delimited(data, &mut at)?,
            (3, 2) => {
                let body = delimited(data, &mut at)?;
                if m.kind != KIND_SUBSCRIPTION {
                    // the oneof switches: a new, empty subscription (the raw bytes cleared)
                    *m = Member {
                        id: m.id,
                        instance_id: m.instance_id,
                        ..Member::default()
                    };
                    m.kind = KIND_SUBSCRIPTION;
                }
                m.subscription_parts.push(body);
                let offset = at - body.len();
                subscription(body, m).map_err(|(what, k)| (what, offset + k))?;
            }
            (4, 2) => {
                let raw = delimited(data, &mut at)?;
                *m = Member {
                    id: m.id,
                    instance_id: m.instance_id,
                    ..Member::default()
                };
                (m.kind, m.raw) = (KIND_RAW, raw);
            }
            _ => skip(data, &mut at, key).map_err(|(what, _)| (what, from))?,
        }
    }
    Ok(())
}

/// Every member of a `ConsumerAssignRequest`'s bytes, in request order; the first failure
/// (member, reason, offset in the request) ends the read.
pub fn read(data: &[u8]) -> Result<Vec<Member<'_>>, (usize, Failure)> {
    read_field(data, MEMBERS)
}

/// Every member of a request whose members are field `field` (an `AssignRequest`'s are 2).
pub fn read_field(data: &[u8], field: u64) -> Result<Vec<Member<'_>>, (usize, Failure)> {
    let mut members = Vec::new();
    let mut at = 0;
    while at < data.len() {
        let key = varint(data, &mut at).map_err(|f| (members.len(), f))?;
        if key != field << 3 | 2 {
            skip(data, &mut at, key).map_err(|f| (members.len(), f))?;
            continue;
        }
        let body = delimited(data, &mut at).map_err(|f| (members.len(), f))?;
        let offset = at - body.len();
        let mut m = Member::default();
        member(body, &mut m).map_err(|(what, k)| (members.len(), (what, offset + k)))?;
        members.push(m);
    }
    Ok(members)
}
