//! A Kafka Streams request's members read from its bytes (issue 24), every member at once: the
//! decoder walked each through protobuf's accessors, one Python step a field, and checked its
//! `SubscriptionInfo` field by field (about half of a 10,000-task, 2,000-member call's decode).
//!
//! The members (`AssignRequest` field 2) are read by the consumer room's reader (`members.rs`),
//! the subscription's owned partitions and structured `info` (field 5) here, as protobuf reads
//! them (message fields sent twice merged, the `user_data` oneof's last member kept, a known
//! field of another wire type skipped as unknown); a userData sent as bytes (`info_bytes`,
//! v7-11) by `subscription_info.rs`. Only the common shape is taken: a structured
//! subscription whose userData is v7-11 without task lists or named topologies. Whatever is
//! not (a raw subscription, v1-6, any fault the decoder would name) makes the whole read
//! `None`, and the decoder's walk (`server/streams/decode/members.py`) reads the request and
//! words the fault, so errors stay the walk's. What this checks is what that walk checks of
//! those fields, nothing more; the offset sums are checked by the decoder's columns
//! (`offset_sums.checked_columns`).
//!
//!     SubscriptionInfo: 1 version, 2 latest_supported_version, 3 process_id, 4 prev_tasks,
//!       5 standby_tasks, 6 user_end_point, 7 task_offset_sums, 8 unique_field, 9 error_code,
//!       10 client_tags
//!     TaskOffsetSum: 1 task, 2 offset_sum; TaskId: 1 subtopology, 2 partition, 3 named_topology
//!     ClientTag: 1 key, 2 value; TopicPartition: 1 topic, 2 partition

use std::collections::HashMap;

use crate::members::{self, Member, KIND_SUBSCRIPTION};
use crate::owned::{delimited, skip, varint};
use crate::subscription_info::{self, Read};

const MEMBERS: u64 = 2;
const INFO: u8 = 5;
const INFO_BYTES: u8 = 6;
const FIRST_VERSION: i32 = 7; // offset sums, no task lists
const LATEST_VERSION: i32 = 11;
const FIRST_TAGS_VERSION: i32 = 11;

/// One distinct userData, checked: the `user_data` field it came in (5 or 6) and its fields.
pub struct Info<'a> {
    pub field: u8,
    pub version: i32,
    /// As the decoder resolves it: unset (0) means the version used.
    pub latest: i32,
    pub process_id: u128,
    pub end_point: &'a str,
    pub unique: i32,
    pub error: i32,
    /// Sorted by key, no key twice.
    pub tags: Vec<(&'a str, &'a str)>,
    /// (topic group, partition, offset sum) in the order sent.
    pub sums: Vec<(i32, i32, i64)>,
}

/// One member's fields.
pub struct StreamsMember<'a> {
    pub id: &'a str,
    pub instance_id: &'a str,
    pub topics: Vec<&'a str>,
    pub rack: &'a str,
    pub generation: Option<i32>,
    /// Owned partitions sorted by topic then partition, each topic once: topic, partitions.
    pub owned: Vec<(&'a str, Vec<i32>)>,
    pub info: usize,
}

/// The group's members and their distinct userData, with what the limits read.
pub struct Group<'a> {
    pub members: Vec<StreamsMember<'a>>,
    pub infos: Vec<Info<'a>>,
    /// The most UTF-8 bytes of any id, name, rack, end point or tag (a process id as its 36).
    pub longest: usize,
    pub owned: usize,
    pub reported: usize,
}

fn text(bytes: &[u8]) -> Option<&str> {
    std::str::from_utf8(bytes).ok()
}

/// Fields of the message `data` to `field` (number, wire type, value bytes or varint).
fn fields<'a>(
    data: &'a [u8],
    mut field: impl FnMut(u64, u64, &'a [u8], u64) -> Option<()>,
) -> Option<()> {
    let mut at = 0;
    while at < data.len() {
        let key = varint(data, &mut at).ok()?;
        let (number, wire) = (key >> 3, key & 7);
        match wire {
            0 => {
                let v = varint(data, &mut at).ok()?;
                field(number, wire, b"", v)?;
            }
            2 => {
                let body = delimited(data, &mut at).ok()?;
                field(number, wire, body, 0)?;
            }
            _ => skip(data, &mut at, key).ok()?,
        }
    }
    Some(())
}

fn task_id(body: &[u8], id: &mut (i32, i32)) -> Option<()> {
    fields(body, |n, w, b, v| {
        match (n, w) {
            (1, 0) => id.0 = v as i32,
            (2, 0) => id.1 = v as i32,
            (3, 2) if !b.is_empty() => return None, // a named topology: the walk reads it
            _ => {}
        }
        Some(())
    })
}

fn offset_sum(body: &[u8]) -> Option<(i32, i32, i64)> {
    let (mut id, mut sum) = ((0, 0), 0i64);
    fields(body, |n, w, b, v| {
        match (n, w) {
            (1, 2) => task_id(b, &mut id)?,
            (2, 0) => sum = v as i64,
            _ => {}
        }
        Some(())
    })?;
    Some((id.0, id.1, sum))
}

fn tag(body: &[u8]) -> Option<(&str, &str)> {
    let (mut key, mut value) = (&b""[..], &b""[..]);
    fields(body, |n, w, b, _| {
        match (n, w) {
            (1, 2) => key = b,
            (2, 2) => value = b,
            _ => {}
        }
        Some(())
    })?;
    Some((text(key)?, text(value)?))
}

/// A structured `SubscriptionInfo` from its parts (a message sent twice is merged).
fn structured<'a>(parts: &[&'a [u8]]) -> Option<Info<'a>> {
    let mut info = Info {
        field: INFO,
        version: 0,
        latest: 0,
        process_id: 0,
        end_point: "",
        unique: 0,
        error: 0,
        tags: Vec::new(),
        sums: Vec::new(),
    };
    let mut process_id: &[u8] = b"";
    for part in parts {
        fields(part, |n, w, b, v| {
            match (n, w) {
                (1, 0) => info.version = v as i32,
                (2, 0) => info.latest = v as i32,
                (3, 2) => process_id = b,
                (4 | 5, 2) => return None, // v1-6's task lists: the walk reads them
                (6, 2) => info.end_point = text(b)?,
                (7, 2) => info.sums.push(offset_sum(b)?),
                (8, 0) => info.unique = v as i32,
                (9, 0) => info.error = v as i32,
                (10, 2) => info.tags.push(tag(b)?),
                _ => {}
            }
            Some(())
        })?;
    }
    info.process_id = uuid(process_id)?;
    Some(info)
}

/// Canonical UUID text (8-4-4-4-12 hex digits, either case) as its number.
fn uuid(text: &[u8]) -> Option<u128> {
    if text.len() != 36 {
        return None;
    }
    let mut value = 0u128;
    for (i, &c) in text.iter().enumerate() {
        if matches!(i, 8 | 13 | 18 | 23) {
            if c != b'-' {
                return None;
            }
            continue;
        }
        value = value << 4 | u128::from((c as char).to_digit(16)? as u8);
    }
    Some(value)
}

fn from_bytes(data: &[u8]) -> Option<Info<'_>> {
    let Read::Columns(read) = subscription_info::read(data) else {
        return None;
    };
    let mut sums = Vec::with_capacity(read.rows);
    subscription_info::each_sum(data, &read, |g, p, s| sums.push((g, p, s)));
    Some(Info {
        field: INFO_BYTES,
        version: read.version,
        latest: read.latest,
        process_id: u128::from_be_bytes(read.process_id.try_into().ok()?),
        end_point: read.end_point,
        unique: i32::from(read.unique),
        error: read.error,
        tags: read.tags,
        sums,
    })
}

/// `host:port` as Kafka's `HostInfo` reads it, the port 0-65535 in ASCII digits (leading
/// zeros allowed); empty means none.
fn end_point_ok(text: &str) -> bool {
    if text.is_empty() {
        return true;
    }
    let Some(colon) = text.rfind(':') else {
        return false;
    };
    let port = &text.as_bytes()[colon + 1..];
    if colon == 0 || port.is_empty() || !port.iter().all(u8::is_ascii_digit) {
        return false;
    }
    let digits = &port[port
        .iter()
        .take_while(|&&c| c == b'0')
        .count()
        .min(port.len() - 1)..];
    digits.len() <= 5
        && digits
            .iter()
            .fold(0u32, |n, &c| n * 10 + u32::from(c - b'0'))
            <= 65535
}

/// The decoder's checks of a userData's fields (the offset sums apart); the tags sorted.
fn checked(mut info: Info<'_>) -> Option<Info<'_>> {
    if !(FIRST_VERSION..=LATEST_VERSION).contains(&info.version) {
        return None;
    }
    if info.latest == 0 {
        info.latest = info.version;
    }
    if info.latest < info.version || !(-128..=127).contains(&info.unique) {
        return None;
    }
    if !end_point_ok(info.end_point) {
        return None;
    }
    if !info.tags.is_empty() && info.version < FIRST_TAGS_VERSION {
        return None;
    }
    info.tags.sort_unstable();
    let repeated = info.tags.windows(2).any(|w| w[0].0 == w[1].0);
    if repeated || info.tags.first().is_some_and(|t| t.0.is_empty()) {
        return None;
    }
    Some(info)
}

/// The member's owned partitions, sorted; `None` at an empty topic, a negative partition or
/// one listed twice.
fn owned<'a>(parts: &[&'a [u8]]) -> Option<Vec<(&'a str, Vec<i32>)>> {
    let mut pairs: Vec<(&[u8], i32)> = Vec::new();
    for part in parts {
        fields(part, |n, w, b, _| {
            if (n, w) == (2, 2) {
                let (mut topic, mut partition) = (&b""[..], 0i32);
                fields(b, |n, w, b, v| {
                    match (n, w) {
                        (1, 2) => topic = b,
                        (2, 0) => partition = v as i32,
                        _ => {}
                    }
                    Some(())
                })?;
                if topic.is_empty() || partition < 0 {
                    return None;
                }
                pairs.push((topic, partition));
            }
            Some(())
        })?;
    }
    pairs.sort_unstable();
    if pairs.windows(2).any(|w| w[0] == w[1]) {
        return None;
    }
    let mut out: Vec<(&str, Vec<i32>)> = Vec::new();
    for (topic, partition) in pairs {
        let topic = text(topic)?;
        match out.last_mut() {
            Some((t, numbers)) if *t == topic => numbers.push(partition),
            _ => out.push((topic, vec![partition])),
        }
    }
    Some(out)
}

/// The `user_data` oneof's structured `info` parts, walked as protobuf keeps a oneof: a part
/// after `info_bytes` starts a new message.
fn info_parts<'a>(parts: &[&'a [u8]]) -> Option<Vec<&'a [u8]>> {
    let mut infos = Vec::new();
    for part in parts {
        fields(part, |n, w, b, _| {
            match (n, w) {
                (5, 2) => infos.push(b),
                (6 | 7, 2) => infos.clear(),
                _ => {}
            }
            Some(())
        })?;
    }
    Some(infos)
}

fn member<'a>(
    m: &Member<'a>,
    infos: &mut Vec<Info<'a>>,
    seen: &mut HashMap<(u8, Vec<&'a [u8]>), usize>,
) -> Option<StreamsMember<'a>> {
    let plain = m.topic_list.is_none() && m.by_topic == 0 && m.capacity.is_none();
    if m.kind != KIND_SUBSCRIPTION || !plain || m.id.is_empty() {
        return None;
    }
    let key = match m.user_data {
        INFO => (INFO, info_parts(&m.subscription_parts)?),
        INFO_BYTES => (INFO_BYTES, vec![m.user_data_bytes]),
        _ => return None,
    };
    let info = match seen.get(&key) {
        Some(&i) => i,
        None => {
            let read = match key.0 {
                INFO => structured(&key.1)?,
                _ => from_bytes(key.1[0])?,
            };
            infos.push(checked(read)?);
            seen.insert(key, infos.len() - 1);
            infos.len() - 1
        }
    };
    if m.generation.is_some_and(|g| g < -1) {
        return None;
    }
    Some(StreamsMember {
        id: text(m.id)?,
        instance_id: text(m.instance_id)?,
        topics: m.topics.iter().map(|t| text(t)).collect::<Option<_>>()?,
        rack: text(m.rack)?,
        generation: m.generation.filter(|&g| g != -1),
        owned: if m.owned_partitions > 0 {
            owned(&m.subscription_parts)?
        } else {
            Vec::new()
        },
        info,
    })
}

/// Every member of an `AssignRequest`'s bytes, or `None` where any is not of the common shape
/// or the decoder would refuse it (the decoder's walk then reads the request).
pub fn read(data: &[u8]) -> Option<Group<'_>> {
    let raw = members::read_field(data, MEMBERS).ok()?;
    let (mut infos, mut seen) = (Vec::new(), HashMap::new());
    let mut out = Vec::with_capacity(raw.len());
    for m in &raw {
        out.push(member(m, &mut infos, &mut seen)?);
    }
    let mut longest = 0;
    for m in &out {
        let topic = m.topics.iter().map(|t| t.len()).max().unwrap_or(0);
        longest = longest.max(
            m.id.len()
                .max(m.instance_id.len())
                .max(m.rack.len())
                .max(topic),
        );
    }
    for info in &infos {
        let tags = info.tags.iter().map(|t| t.0.len().max(t.1.len())).max();
        longest = longest
            .max(36)
            .max(info.end_point.len())
            .max(tags.unwrap_or(0));
    }
    let owned = out
        .iter()
        .map(|m| m.owned.iter().map(|o| o.1.len()).sum::<usize>())
        .sum();
    let reported = out.iter().map(|m| infos[m.info].sums.len()).sum();
    Some(Group {
        members: out,
        infos,
        longest,
        owned,
        reported,
    })
}
