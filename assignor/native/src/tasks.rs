//! A Streams request's topology read from its bytes (issue 24): every `TaskInfo` of an
//! `AssignRequest` at once, into columns, checked. The decoder read each task and partition
//! through protobuf's accessors before, a Python step per field (about 800 ms of a 100,000-task
//! call's decode).
//!
//! The request's bytes are read for field 3 (`tasks`) only, as protobuf reads them: a
//! singular field's last value wins (an `int32` is the varint's low 32 bits, a `bool` any
//! non-zero varint), repeated fields append, a message field sent twice is merged, a field of
//! an unexpected wire type is an unknown field, unknown fields are skipped.
//!
//!     TaskInfo: 1 id, 2 stateful, 3 state_store_names, 4 topic_partitions,
//!       5 changelog_end_offset_sum, 6 load (optional double), 7 state_bytes (optional int64)
//!     TaskId: 1 subtopology, 2 partition, 3 named_topology
//!     TaskTopicPartition: 1 topic, 2 partition, 3 is_source, 4 is_changelog, 5 rack_ids
//!
//! The topology's checks run here, in the order the decoder states them (per task in request
//! order: its id, its end offset sum, each partition, a partition listed twice, a negative
//! id, a source partition another task reads, its load and state bytes; then a task id given
//! twice); the first that fails is reported as a `Failure` and the decoder words it.

use std::cmp::Ordering;
use std::collections::{HashMap, HashSet};

use crate::owned::{delimited, skip, varint, Failure as WireFailure};

const TASKS: u64 = 3;
pub const SOURCE: u8 = 1;
pub const CHANGELOG: u8 = 2;

/// The first check a topology fails: what, the task's row (request order), the partition's
/// index in the task (or -1), the value at fault, and the other row (a source partition's
/// first reader, a duplicate id's first row).
#[derive(Debug, Clone, PartialEq)]
pub enum Check {
    MissingId,
    NegativeEndSum(i64),
    EmptyTopic(usize),
    NegativePartition(usize, i32),
    ListedTwice(usize),
    NegativeId,
    SourceOfTwo(usize, usize),
    BadLoad(f64),
    NegativeStateBytes(i64),
    DuplicateId(usize),
}

/// Strings numbered in order of first appearance (one Python object each later).
#[derive(Default)]
pub struct Strings<'a> {
    pub values: Vec<&'a str>,
    index: HashMap<&'a str, u32>,
}

impl<'a> Strings<'a> {
    fn id(&mut self, s: &'a str) -> u32 {
        let next = self.values.len() as u32;
        *self.index.entry(s).or_insert_with(|| {
            self.values.push(s);
            next
        })
    }
}

/// The tasks as columns, in request order, and the first check failed.
#[derive(Default)]
pub struct Tasks<'a> {
    pub strings: Strings<'a>,
    /// Per task: its named topology (a string id, `NONE` when unnamed), sub-topology, partition.
    pub names: Vec<u32>,
    pub subs: Vec<i32>,
    pub parts: Vec<i32>,
    pub stateful: Vec<u8>,
    pub ends: Vec<i64>,
    pub stores: Vec<(u32, Vec<u32>)>,
    pub loads: Vec<(u32, f64)>,
    pub state_bytes: Vec<(u32, i64)>,
    /// Per task `[starts[i], starts[i + 1])` of the partition columns.
    pub starts: Vec<u32>,
    pub topics: Vec<u32>,
    pub numbers: Vec<i32>,
    pub flags: Vec<u8>,
    pub racks: Vec<u32>,
    /// The topics in order of first appearance (string ids), and each topic's place there.
    pub topic_order: Vec<u32>,
    topic_of: HashMap<u32, u32>,
    /// Rack sets (sorted distinct non-empty string ids) in order of first appearance; the
    /// first is the empty set.
    pub rack_sets: Vec<Vec<u32>>,
    rack_of: HashMap<Vec<u32>, u32>,
    /// Per task: the longest string's UTF-8 bytes (named topology, stores, topics, racks).
    pub longest: Vec<u32>,
    pub failure: Option<(usize, Check)>,
    sources: HashMap<(u32, i32), u32>,
}

pub const NONE: u32 = u32::MAX;

fn text(bytes: &[u8], at: usize) -> Result<&str, WireFailure> {
    std::str::from_utf8(bytes).map_err(|_| ("a string is not UTF-8".to_string(), at))
}

fn fixed64(data: &[u8], at: &mut usize) -> Result<[u8; 8], WireFailure> {
    let Some(v) = data.get(*at..*at + 8) else {
        return Err(("truncated fixed-size field".to_string(), *at));
    };
    *at += 8;
    Ok(v.try_into().expect("8 bytes"))
}

/// One task as read, before its checks.
#[derive(Default)]
struct Row<'a> {
    has_id: bool,
    name: &'a str,
    sub: i32,
    part: i32,
    stateful: bool,
    stores: Vec<u32>,
    end: i64,
    load: Option<f64>,
    state_bytes: Option<i64>,
    longest: usize,
}

impl<'a> Tasks<'a> {
    fn task_id(
        &mut self,
        data: &'a [u8],
        row: &mut Row<'a>,
        base: usize,
    ) -> Result<(), WireFailure> {
        row.has_id = true;
        let mut at = 0;
        while at < data.len() {
            let key = varint(data, &mut at).map_err(|(w, k)| (w, base + k))?;
            match (key >> 3, key & 7) {
                (1, 0) => row.sub = varint(data, &mut at).map_err(|(w, k)| (w, base + k))? as i32,
                (2, 0) => row.part = varint(data, &mut at).map_err(|(w, k)| (w, base + k))? as i32,
                (3, 2) => {
                    let s = delimited(data, &mut at).map_err(|(w, k)| (w, base + k))?;
                    let s = text(s, base + at)?;
                    row.longest = row.longest.max(s.len());
                    row.name = s;
                }
                _ => skip(data, &mut at, key).map_err(|(w, k)| (w, base + k))?,
            }
        }
        Ok(())
    }

    /// One `TaskTopicPartition`, appended to the partition columns.
    fn partition(
        &mut self,
        data: &'a [u8],
        row: &mut Row<'a>,
        base: usize,
    ) -> Result<(), WireFailure> {
        let (mut topic, mut number, mut flags) = ("", 0i32, 0u8);
        let mut racks: Vec<&'a str> = Vec::new();
        let mut at = 0;
        let at_base = |(w, k): WireFailure| (w, base + k);
        while at < data.len() {
            let key = varint(data, &mut at).map_err(at_base)?;
            match (key >> 3, key & 7) {
                (1, 2) => topic = text(delimited(data, &mut at).map_err(at_base)?, base + at)?,
                (2, 0) => number = varint(data, &mut at).map_err(at_base)? as i32,
                (3, 0) => {
                    let on = varint(data, &mut at).map_err(at_base)? != 0;
                    flags = if on { flags | SOURCE } else { flags & !SOURCE };
                }
                (4, 0) => {
                    let on = varint(data, &mut at).map_err(at_base)? != 0;
                    flags = if on {
                        flags | CHANGELOG
                    } else {
                        flags & !CHANGELOG
                    };
                }
                (5, 2) => racks.push(text(delimited(data, &mut at).map_err(at_base)?, base + at)?),
                _ => skip(data, &mut at, key).map_err(at_base)?,
            }
        }
        row.longest = racks
            .iter()
            .fold(row.longest.max(topic.len()), |m, r| m.max(r.len()));
        let id = self.strings.id(topic);
        let next = self.topic_order.len() as u32;
        let place = *self.topic_of.entry(id).or_insert(next);
        if place == next {
            self.topic_order.push(id);
        }
        let mut set: Vec<u32> = racks
            .iter()
            .filter(|r| !r.is_empty())
            .map(|r| self.strings.id(r))
            .collect();
        set.sort_by(|a, b| self.strings.values[*a as usize].cmp(self.strings.values[*b as usize]));
        set.dedup();
        let next = self.rack_sets.len() as u32;
        let rack = match self.rack_of.get(&set) {
            Some(&r) => r,
            None => {
                self.rack_of.insert(set.clone(), next);
                self.rack_sets.push(set);
                next
            }
        };
        self.topics.push(place);
        self.numbers.push(number);
        self.flags.push(flags);
        self.racks.push(rack);
        Ok(())
    }

    fn task(&mut self, data: &'a [u8], base: usize) -> Result<(), WireFailure> {
        let mut row = Row::default();
        let first = self.numbers.len();
        let mut at = 0;
        while at < data.len() {
            let key = varint(data, &mut at).map_err(|(w, k)| (w, base + k))?;
            let start = at;
            match (key >> 3, key & 7) {
                (1, 2) => {
                    let body = delimited(data, &mut at).map_err(|(w, k)| (w, base + k))?;
                    self.task_id(body, &mut row, base + at - body.len())?;
                }
                (2, 0) => {
                    row.stateful = varint(data, &mut at).map_err(|(w, k)| (w, base + k))? != 0
                }
                (3, 2) => {
                    let s = text(
                        delimited(data, &mut at).map_err(|(w, k)| (w, base + k))?,
                        base + start,
                    )?;
                    row.longest = row.longest.max(s.len());
                    let id = self.strings.id(s);
                    row.stores.push(id);
                }
                (4, 2) => {
                    let body = delimited(data, &mut at).map_err(|(w, k)| (w, base + k))?;
                    self.partition(body, &mut row, base + at - body.len())?;
                }
                (5, 0) => row.end = varint(data, &mut at).map_err(|(w, k)| (w, base + k))? as i64,
                (6, 1) => row.load = Some(f64::from_le_bytes(fixed64(data, &mut at)?)),
                (7, 0) => {
                    row.state_bytes =
                        Some(varint(data, &mut at).map_err(|(w, k)| (w, base + k))? as i64)
                }
                _ => skip(data, &mut at, key).map_err(|(w, k)| (w, base + k))?,
            }
        }
        let i = self.names.len();
        if self.failure.is_none() {
            if let Some(check) = self.check(&row, first) {
                self.failure = Some((i, check));
            }
        }
        let name = if row.name.is_empty() {
            NONE
        } else {
            self.strings.id(row.name)
        };
        self.names.push(name);
        self.subs.push(row.sub);
        self.parts.push(row.part);
        self.stateful.push(u8::from(row.stateful));
        self.ends.push(row.end);
        if !row.stores.is_empty() {
            self.stores
                .push((i as u32, std::mem::take(&mut row.stores)));
        }
        if let Some(load) = row.load {
            self.loads.push((i as u32, load));
        }
        if let Some(size) = row.state_bytes {
            self.state_bytes.push((i as u32, size));
        }
        self.longest.push(row.longest as u32);
        self.starts.push(self.numbers.len() as u32);
        Ok(())
    }

    /// The task's checks, in the decoder's order; source partitions are claimed here.
    fn check(&mut self, row: &Row<'a>, first: usize) -> Option<Check> {
        if !row.has_id {
            return Some(Check::MissingId);
        }
        if row.end < 0 {
            return Some(Check::NegativeEndSum(row.end));
        }
        let end = self.numbers.len();
        for j in first..end {
            let topic = self.topic_order[self.topics[j] as usize];
            if self.strings.values[topic as usize].is_empty() {
                return Some(Check::EmptyTopic(j - first));
            }
            if self.numbers[j] < 0 {
                return Some(Check::NegativePartition(j - first, self.numbers[j]));
            }
        }
        if end - first > 1 {
            let mut seen = HashSet::with_capacity(end - first);
            for j in first..end {
                if !seen.insert((self.topics[j], self.numbers[j])) {
                    return Some(Check::ListedTwice(j - first));
                }
            }
        }
        if row.sub < 0 || row.part < 0 {
            return Some(Check::NegativeId);
        }
        let i = self.names.len() as u32;
        for j in first..end {
            if self.flags[j] & SOURCE == 0 {
                continue;
            }
            let feeds = *self
                .sources
                .entry((self.topics[j], self.numbers[j]))
                .or_insert(i);
            if feeds != i && !self.same_id(feeds as usize, row) {
                return Some(Check::SourceOfTwo(j - first, feeds as usize));
            }
        }
        if let Some(load) = row.load {
            if !(load.is_finite() && load >= 0.0) {
                return Some(Check::BadLoad(load));
            }
        }
        match row.state_bytes {
            Some(size) if size < 0 => Some(Check::NegativeStateBytes(size)),
            _ => None,
        }
    }

    fn name_of(&self, row: usize) -> &str {
        match self.names[row] {
            NONE => "",
            id => self.strings.values[id as usize],
        }
    }

    fn same_id(&self, other: usize, row: &Row<'_>) -> bool {
        self.subs[other] == row.sub
            && self.parts[other] == row.part
            && self.name_of(other) == row.name
    }

    /// Kafka's `TaskId` order: the named topology in UTF-16 code units, then the numbers.
    pub fn compare(&self, a: usize, b: usize) -> Ordering {
        let (x, y) = (self.name_of(a), self.name_of(b));
        let names = if x == y {
            Ordering::Equal
        } else {
            x.encode_utf16().cmp(y.encode_utf16())
        };
        names
            .then(self.subs[a].cmp(&self.subs[b]))
            .then(self.parts[a].cmp(&self.parts[b]))
    }

    /// The rows in task order (stable: equal ids keep request order), `None` when already so
    /// and distinct; a duplicate id is recorded as the failure when no other check failed.
    pub fn order(&mut self) -> Option<Vec<u32>> {
        let n = self.names.len();
        if (1..n).all(|i| self.compare(i - 1, i) == Ordering::Less) {
            return None;
        }
        let mut order: Vec<u32> = (0..n as u32).collect();
        order.sort_by(|&a, &b| self.compare(a as usize, b as usize));
        if self.failure.is_none() {
            // the first row (request order) whose id an earlier row has: the second row of a
            // group of equal ids (the sort is stable), the earliest such over the groups
            let mut found: Option<(usize, usize)> = None;
            let mut start = 0;
            while start < n {
                let mut end = start + 1;
                while end < n
                    && self.compare(order[start] as usize, order[end] as usize) == Ordering::Equal
                {
                    end += 1;
                }
                if end - start > 1 {
                    let (first, row) = (order[start] as usize, order[start + 1] as usize);
                    if found.is_none_or(|(r, _)| row < r) {
                        found = Some((row, first));
                    }
                }
                start = end;
            }
            if let Some((row, first)) = found {
                self.failure = Some((row, Check::DuplicateId(first)));
            }
        }
        Some(order)
    }
}

impl Tasks<'_> {
    /// Lets go of the read's indexes (sources, topics, rack sets, strings by value) once the
    /// checks ran: the columns are all the Python objects are made from (issue 16's peak).
    pub fn release_indexes(&mut self) {
        self.sources = HashMap::new();
        self.topic_of = HashMap::new();
        self.rack_of = HashMap::new();
        self.strings.index = HashMap::new();
    }
}

/// Every task of an `AssignRequest`'s bytes, in request order, checked; the first wire
/// failure (task, reason, offset in the request) ends the read.
pub fn read(data: &[u8]) -> Result<Tasks<'_>, (usize, WireFailure)> {
    let mut tasks = Tasks {
        starts: vec![0],
        rack_sets: vec![Vec::new()],
        ..Tasks::default()
    };
    tasks.rack_of.insert(Vec::new(), 0);
    let mut at = 0;
    while at < data.len() {
        let n = tasks.names.len();
        let key = varint(data, &mut at).map_err(|f| (n, f))?;
        if key != TASKS << 3 | 2 {
            skip(data, &mut at, key).map_err(|f| (n, f))?;
            continue;
        }
        let body = delimited(data, &mut at).map_err(|f| (n, f))?;
        tasks.task(body, at - body.len()).map_err(|f| (n, f))?;
    }
    Ok(tasks)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn random_bytes_never_panic() {
        let mut state = 0x2545_f491_4f6c_dd1du64;
        for len in 0..400 {
            let data: Vec<u8> = (0..len)
                .map(|_| {
                    state ^= state << 13;
                    state ^= state >> 7;
                    state ^= state << 17;
                    (state & 0xff) as u8
                })
                .collect();
            if let Ok(mut t) = read(&data) {
                t.order();
            }
        }
    }
}
