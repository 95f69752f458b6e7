//! The compact consumer request's owned partitions (issue 24): each member's
//! `ConsumerSubscription` bytes (protobuf) read for its `owned_by_topic` entries only
//! (field 9, `TopicPartitions`: 1 topic, 2 partitions, packed or not), every member's at once,
//! into the same columns as eager sticky's userData (`user_data::Claims`). A rejoining group of
//! 800 members sends 40,000 entries, read one protobuf accessor at a time before (a microsecond
//! each, most of its call).
//!
//! Kept as protobuf reads them: an entry's topic is its last `topic` field, its partitions all
//! of its `partitions` fields in order (packed runs and single varints alike, int32 from the
//! varint's low 32 bits); unknown fields are skipped. As the decoder takes them: entries
//! without partitions are dropped, and a member is `sorted` when its entries' names ascend
//! strictly and each entry's numbers ascend strictly (Kafka's `serializeSubscription` order).

use crate::user_data::{Claims, Names};

const OWNED_BY_TOPIC: u64 = 9;
const TOPIC: u64 = 1;
const PARTITIONS: u64 = 2;

/// Where bytes are not protobuf: what was expected, and at which offset.
pub type Failure = (String, usize);

pub(crate) fn varint(data: &[u8], at: &mut usize) -> Result<u64, Failure> {
    let mut value = 0u64;
    for shift in (0..64).step_by(7) {
        let Some(&b) = data.get(*at) else {
            return Err(("truncated varint".to_string(), *at));
        };
        *at += 1;
        value |= u64::from(b & 0x7F) << shift;
        if b & 0x80 == 0 {
            return Ok(value);
        }
    }
    Err(("varint longer than ten bytes".to_string(), *at))
}

pub(crate) fn delimited<'a>(data: &'a [u8], at: &mut usize) -> Result<&'a [u8], Failure> {
    let start = *at;
    let size = varint(data, at)? as usize;
    let Some(body) = data.get(*at..(*at).saturating_add(size)) else {
        return Err(("truncated length-delimited field".to_string(), start));
    };
    *at += size;
    Ok(body)
}

/// Groups nested deeper than this are refused (protobuf's Python runtime allows 100 levels).
const MAX_GROUP_DEPTH: u32 = 100;

/// Skips the value of an unknown field whose key is `key`, as protobuf skips it; a group (the
/// deprecated wire types 3 and 4, which proto3 encoders never write) to its matching end.
pub(crate) fn skip(data: &[u8], at: &mut usize, key: u64) -> Result<(), Failure> {
    let fixed = |n: usize, at: &mut usize| {
        if data.len() < *at + n {
            return Err(("truncated fixed-size field".to_string(), *at));
        }
        *at += n;
        Ok(())
    };
    match key & 7 {
        0 => varint(data, at).map(|_| ()),
        1 => fixed(8, at),
        2 => delimited(data, at).map(|_| ()),
        3 => skip_group(data, at, key >> 3, 1),
        5 => fixed(4, at),
        wire => Err((format!("wire type {wire} not read"), *at)),
    }
}

/// Skips a group's fields up to its end (wire type 4 with the group's field number).
fn skip_group(data: &[u8], at: &mut usize, field: u64, depth: u32) -> Result<(), Failure> {
    if depth > MAX_GROUP_DEPTH {
        return Err(("groups nested too deep".to_string(), *at));
    }
    loop {
        let start = *at;
        if start >= data.len() {
            return Err(("group without its end".to_string(), start));
        }
        let key = varint(data, at)?;
        match key & 7 {
            4 if key >> 3 == field => return Ok(()),
            4 => return Err(("end of another group".to_string(), start)),
            3 => skip_group(data, at, key >> 3, depth + 1)?,
            _ => skip(data, at, key)?,
        }
    }
}

/// One `TopicPartitions`: its topic's bytes and its numbers, appended to `numbers`.
fn entry<'a>(data: &'a [u8], numbers: &mut Vec<i32>) -> Result<&'a [u8], Failure> {
    let mut topic: &[u8] = b"";
    let mut at = 0;
    while at < data.len() {
        let key = varint(data, &mut at)?;
        match (key >> 3, key & 7) {
            (TOPIC, 2) => topic = delimited(data, &mut at)?,
            (PARTITIONS, 2) => {
                let packed = delimited(data, &mut at)?;
                let mut p = 0;
                while p < packed.len() {
                    numbers.push(varint(packed, &mut p)? as i32);
                }
            }
            (PARTITIONS, 0) => numbers.push(varint(data, &mut at)? as i32),
            _ => skip(data, &mut at, key)?,
        }
    }
    Ok(topic)
}

/// One member's subscription bytes appended to `out`'s entry columns; whether it is sorted.
fn read_member<'a>(
    data: &'a [u8],
    names: &mut Names<'a>,
    out: &mut Claims,
) -> Result<bool, Failure> {
    let mut at = 0;
    let mut sorted = true;
    let mut last: Option<&[u8]> = None;
    while at < data.len() {
        let key = varint(data, &mut at)?;
        if key != OWNED_BY_TOPIC << 3 | 2 {
            skip(data, &mut at, key)?;
            continue;
        }
        let start = at;
        let body = delimited(data, &mut at)?;
        let from = out.numbers.len();
        let topic = entry(body, &mut out.numbers).map_err(|(what, k)| (what, start + k))?;
        let added = &out.numbers[from..];
        if added.is_empty() {
            continue; // an entry without partitions claims nothing
        }
        sorted &= last.is_none_or(|l| l < topic) && added.windows(2).all(|w| w[0] < w[1]);
        last = Some(topic);
        out.entry_topic.push(names.index(topic, &mut out.names));
        out.entry_count.push(added.len() as i64);
    }
    Ok(sorted)
}

/// Every member's `ConsumerSubscription` bytes (`None`: none sent) read for their owned
/// partitions into columns; per member whether its entries are sorted; the first failure
/// (member, reason, offset) ends the read.
pub fn read(members: &[Option<&[u8]>]) -> Result<(Claims, Vec<bool>), (usize, Failure)> {
    let mut out = Claims::default();
    let mut sorted = Vec::with_capacity(members.len());
    let mut names = Names::default();
    for (i, data) in members.iter().enumerate() {
        let ok = match data {
            Some(d) => read_member(d, &mut names, &mut out).map_err(|f| (i, f))?,
            None => true,
        };
        sorted.push(ok);
        out.generations.push(None);
        out.failures.push(None);
        out.entry_ends.push(out.entry_topic.len() as i64);
        out.number_ends.push(out.numbers.len() as i64);
    }
    Ok((out, sorted))
}
