//! The Kafka Streams answer's client and member lists as protobuf wire bytes (issue 24): every
//! `ClientAssignment` and `MemberAssignment` of `AssignResponse` written at once, their task
//! lists in the answer's order and each member's partitions read from the topology's columns
//! (`kassign.server.streams.response_wire`). Written in Python, each list entry took a step
//! (a cached entry, a bisection of the task table, a source partition read per task): 210 ms of
//! a 10,000-task call's 560, 1.1-1.3 s at 100,000 tasks; a per-call memo of the entries took
//! half of that but held 18-26 MB (issue 16's bound).
//!
//! Nothing here is kept per task beyond the call's own columns (`Index`: 8 bytes a task, the
//! table's partition columns, and the lists' rows, 4 bytes an entry); each entry is written
//! from them as it is reached. Every client's and member's body is measured first (`plan`), so
//! the answer is written once, into the `bytes` the caller allocated at that size (`fill`).
//!
//!     AssignResponse: 1 clients, 2 members
//!     ClientAssignment: 1 process_id, 2 active_tasks, 3 standby_tasks,
//!         4 followup_rebalance_deadline_ms (int64), 5 rack_id, 6 member_ids, 7 user_end_point
//!     MemberAssignment: 1 member_id, 2 process_id, 3 active_tasks, 4 standby_tasks,
//!         5 active_partitions, 6 standby_partitions
//!     TaskId: 1 subtopology (int32), 2 partition (int32), 3 named_topology (string)
//!     TopicPartition: 1 topic (string), 2 partition (int32)

use std::cmp::Ordering;
use std::ops::Range;

use crate::members_wire::{self, field_len, varint};

/// An entry of a list whose task the table lacks: its position in `Lists::unknown`, this bit set.
pub const UNKNOWN: u32 = 1 << 31;
/// A partition row's flag: read as a source (`kassign.assignor.streams.task_columns.SOURCE`).
pub const SOURCE: u8 = 1;

/// A named topology: as the task ids hold it (UTF-16-BE code units, which sort as Java compares
/// the names) and as the answer writes it (UTF-8; both empty for none).
pub struct Topology {
    pub utf16: Vec<u8>,
    pub utf8: Vec<u8>,
}

/// A task by value: its topology's index in `Index::topologies`, sub-topology and partition.
#[derive(Clone, Copy)]
pub struct Key {
    pub topology: u32,
    pub subtopology: i64,
    pub partition: i64,
}

/// The table's task ids (sorted, distinct) by group of one topology and sub-topology: a group's
/// rows are consecutive, and a row's task is its group's with `partitions[row]`.
#[derive(Default)]
pub struct Index {
    pub topologies: Vec<Topology>,
    /// Per group: its topology, sub-topology and first row, in the table's order.
    pub groups: Vec<(u32, i64, u32)>,
    pub partitions: Vec<i64>,
}

impl Index {
    /// The row of task `key`, or `None` when the table lacks it: its group found by bisection
    /// unless it is group `hint`'s (a list's tasks are mostly in task order, so mostly it is;
    /// `hint` becomes the group found), then its partition.
    pub fn row(&self, key: &Key, hint: &mut usize) -> Option<u32> {
        let wanted = (key.topology, key.subtopology);
        let g = match self.groups.get(*hint) {
            Some(&(t, s, _)) if (t, s) == wanted => *hint,
            _ => self
                .groups
                .binary_search_by(|&(t, s, _)| (t, s).cmp(&wanted))
                .ok()?,
        };
        *hint = g;
        let rows = self.rows_of(g);
        let parts = &self.partitions[rows.clone()];
        // a group's partitions are mostly 0 to n - 1, or another unbroken run: no bisection
        let first = parts[0];
        let at = if parts[parts.len() - 1] - first == parts.len() as i64 - 1 {
            usize::try_from(key.partition.checked_sub(first)?)
                .ok()
                .filter(|&at| at < parts.len())?
        } else {
            parts.binary_search(&key.partition).ok()?
        };
        Some((rows.start + at) as u32)
    }

    fn rows_of(&self, g: usize) -> Range<usize> {
        let start = self.groups[g].2 as usize;
        let end = self
            .groups
            .get(g + 1)
            .map_or(self.partitions.len(), |n| n.2 as usize);
        start..end
    }

    /// Row `row`'s task, its group found by bisection unless it is group `hint`'s (which it
    /// becomes).
    fn key_of_row(&self, row: u32, hint: &mut usize) -> Key {
        if !(*hint < self.groups.len() && self.rows_of(*hint).contains(&(row as usize))) {
            *hint = self.groups.partition_point(|&(_, _, start)| start <= row) - 1;
        }
        let (topology, subtopology, _) = self.groups[*hint];
        Key {
            topology,
            subtopology,
            partition: self.partitions[row as usize],
        }
    }
}

/// The table's partition rows (`kassign.assignor.streams.task_columns.PartitionColumns`): task
/// row `i`'s are `starts[i]` to `starts[i + 1]`; per row its topic, number and flags.
pub struct Sources {
    pub starts: Vec<i64>,
    pub topic: Vec<i32>,
    pub number: Vec<i32>,
    pub flags: Vec<u8>,
    /// The topic names (UTF-8) sorted, as Python sorts them (UTF-8 bytes sort as code points).
    sorted: Vec<Vec<u8>>,
    /// Per topic of the table's names, its place in `sorted`.
    rank: Vec<u32>,
}

impl Sources {
    /// The columns and the table's topic names (UTF-8), in its order.
    pub fn new(
        starts: Vec<i64>,
        topic: Vec<i32>,
        number: Vec<i32>,
        flags: Vec<u8>,
        names: Vec<Vec<u8>>,
    ) -> Self {
        let mut order: Vec<usize> = (0..names.len()).collect();
        order.sort_by(|&a, &b| names[a].cmp(&names[b]));
        let mut rank = vec![0; names.len()];
        for (r, &i) in order.iter().enumerate() {
            rank[i] = r as u32;
        }
        let mut names: Vec<Option<Vec<u8>>> = names.into_iter().map(Some).collect();
        let sorted = order
            .iter()
            .map(|&i| names[i].take().unwrap_or_default())
            .collect();
        Sources {
            starts,
            topic,
            number,
            flags,
            sorted,
            rank,
        }
    }

    /// Columns that fit `rows` tasks, or what does not fit (checked once, so reads cannot fail).
    pub fn check(&self, rows: usize) -> Result<(), String> {
        let parts = self.topic.len();
        if self.number.len() != parts || self.flags.len() != parts {
            return Err("partition columns of different lengths".into());
        }
        if self.starts.len() != rows + 1 || self.starts.first() != Some(&0) {
            return Err("starts: not one per task after a first 0".into());
        }
        if self.starts.windows(2).any(|w| w[0] > w[1]) || self.starts[rows] as usize > parts {
            return Err("starts: not ascending within the partitions".into());
        }
        if self
            .topic
            .iter()
            .any(|&t| t < 0 || t as usize >= self.rank.len())
        {
            return Err("a partition's topic outside the topic names".into());
        }
        Ok(())
    }
}

/// Every list's tasks end to end: per entry its row in the table, or `UNKNOWN | i` for
/// `unknown[i]`; each list a range of `rows`.
#[derive(Default)]
pub struct Lists {
    pub rows: Vec<u32>,
    pub unknown: Vec<Key>,
}

/// A `ClientAssignment`: its strings, and its lists as ranges of `Lists::rows`.
pub struct Client<'a> {
    pub process_id: &'a [u8],
    pub active: Range<usize>,
    pub standby: Range<usize>,
    pub followup_ms: i64,
    pub rack_id: &'a [u8],
    pub member_ids: Vec<&'a [u8]>,
    pub user_end_point: &'a [u8],
}

/// A `MemberAssignment`: its strings, its lists as ranges of `Lists::rows`, and its active and
/// standby partitions as ranges of the given ones, or `None`: its tasks' sources (none without
/// a table).
pub struct Member<'a> {
    pub member_id: &'a [u8],
    pub process_id: &'a [u8],
    pub active: Range<usize>,
    pub standby: Range<usize>,
    pub partitions: [Option<Range<usize>>; 2],
}

/// What the lists are written from.
pub struct Answer<'a> {
    pub index: &'a Index,
    pub sources: Option<&'a Sources>,
    /// Sort each list (the table's tasks in its order, then the others by id) or keep it.
    pub ordered: bool,
    /// Given partitions: topic (UTF-8) and number.
    pub given: &'a [(&'a [u8], i64)],
}

fn varint_len(v: u64) -> usize {
    (70 - (v | 1).leading_zeros() as usize) / 7
}

/// An integer field, left out when zero; a negative one as its 64-bit two's complement.
fn int_field(out: &mut Vec<u8>, number: u8, value: i64) {
    if value != 0 {
        out.push(number << 3);
        varint(out, value as u64);
    }
}

fn int_len(value: i64) -> usize {
    if value == 0 {
        0
    } else {
        1 + varint_len(value as u64)
    }
}

/// A length-delimited field, left out when empty (proto3 writes no default).
fn field(out: &mut Vec<u8>, number: u8, value: &[u8]) {
    members_wire::field(out, number << 3 | 2, value);
}

/// A length-delimited field or repeated entry, written even when empty.
fn entry(out: &mut Vec<u8>, number: u8, value: &[u8]) {
    out.push(number << 3 | 2);
    varint(out, value.len() as u64);
    out.extend_from_slice(value);
}

impl Answer<'_> {
    fn key(&self, unknown: &[Key], at: u32, hint: &mut usize) -> Key {
        if at & UNKNOWN != 0 {
            unknown[(at & !UNKNOWN) as usize]
        } else {
            self.index.key_of_row(at, hint)
        }
    }

    /// The answer's order: the table's tasks by row (its rows are in task order), then the
    /// tasks it lacks by id (topology as UTF-16, sub-topology, partition), as Python sorts
    /// `TaskId`s.
    fn order(&self, unknown: &[Key], entries: &mut [u32]) {
        if entries.iter().all(|&e| e & UNKNOWN == 0) {
            entries.sort_unstable();
            return;
        }
        let tops = &self.index.topologies;
        let id = |k: Key| (&tops[k.topology as usize].utf16, k.subtopology, k.partition);
        entries.sort_unstable_by(|&a, &b| match (a & UNKNOWN, b & UNKNOWN) {
            (0, 0) => a.cmp(&b),
            (0, _) => Ordering::Less,
            (_, 0) => Ordering::Greater,
            _ => id(self.key(unknown, a, &mut 0)).cmp(&id(self.key(unknown, b, &mut 0))),
        });
    }

    fn task_body_len(&self, key: &Key) -> usize {
        let name = &self.index.topologies[key.topology as usize].utf8;
        int_len(key.subtopology) + int_len(key.partition) + field_len(name.len())
    }

    /// Repeated `TaskId` field `number` holding `entries` in the order given.
    fn task_list(&self, out: &mut Vec<u8>, unknown: &[Key], number: u8, entries: &[u32]) {
        let mut hint = 0;
        for &at in entries {
            let key = self.key(unknown, at, &mut hint);
            out.push(number << 3 | 2);
            varint(out, self.task_body_len(&key) as u64);
            int_field(out, 1, key.subtopology);
            int_field(out, 2, key.partition);
            field(out, 3, &self.index.topologies[key.topology as usize].utf8);
        }
    }

    fn task_list_len(&self, unknown: &[Key], entries: &[u32]) -> usize {
        let mut hint = 0;
        let body = |&at: &u32| self.task_body_len(&self.key(unknown, at, &mut hint));
        entries.iter().map(body).map(entry_len).sum()
    }

    /// A member's partitions of one list: `given` (a range of the given ones), or else the
    /// sources of its tasks in the table (`entries`), sorted by topic then number, each once,
    /// gathered into `found` (none without a table).
    fn partitions<'s>(
        &'s self,
        given: &Option<Range<usize>>,
        entries: &[u32],
        found: &'s mut Vec<(u32, i64)>,
    ) -> Box<dyn Iterator<Item = (&'s [u8], i64)> + 's> {
        if let Some(range) = given {
            return Box::new(self.given[range.clone()].iter().copied());
        }
        let Some(sources) = self.sources else {
            return Box::new(std::iter::empty());
        };
        found.clear();
        for &row in entries.iter().filter(|&&e| e & UNKNOWN == 0) {
            let rows =
                sources.starts[row as usize] as usize..sources.starts[row as usize + 1] as usize;
            for p in rows.filter(|&p| sources.flags[p] & SOURCE != 0) {
                let topic = sources.rank[sources.topic[p] as usize];
                found.push((topic, i64::from(sources.number[p])));
            }
        }
        found.sort_unstable();
        found.dedup();
        Box::new(
            found
                .iter()
                .map(|&(topic, n)| (&sources.sorted[topic as usize][..], n)),
        )
    }

    /// Repeated `TopicPartition` field `number` holding `partitions`.
    fn partition_list<'t>(
        out: &mut Vec<u8>,
        number: u8,
        partitions: impl Iterator<Item = (&'t [u8], i64)>,
    ) {
        for (topic, partition) in partitions {
            out.push(number << 3 | 2);
            varint(out, partition_body_len(topic, partition) as u64);
            field(out, 1, topic);
            int_field(out, 2, partition);
        }
    }

    fn client_len(&self, unknown: &[Key], rows: &[u32], c: &Client<'_>) -> usize {
        field_len(c.process_id.len())
            + self.task_list_len(unknown, &rows[c.active.clone()])
            + self.task_list_len(unknown, &rows[c.standby.clone()])
            + int_len(c.followup_ms)
            + field_len(c.rack_id.len())
            + c.member_ids
                .iter()
                .map(|m| entry_len(m.len()))
                .sum::<usize>()
            + field_len(c.user_end_point.len())
    }

    fn client(&self, b: &mut Vec<u8>, unknown: &[Key], rows: &[u32], c: &Client<'_>) {
        field(b, 1, c.process_id);
        self.task_list(b, unknown, 2, &rows[c.active.clone()]);
        self.task_list(b, unknown, 3, &rows[c.standby.clone()]);
        int_field(b, 4, c.followup_ms);
        field(b, 5, c.rack_id);
        for m in &c.member_ids {
            entry(b, 6, m);
        }
        field(b, 7, c.user_end_point);
    }

    fn member_len(
        &self,
        unknown: &[Key],
        rows: &[u32],
        m: &Member<'_>,
        found: &mut Vec<(u32, i64)>,
    ) -> usize {
        let (active, standby) = (&rows[m.active.clone()], &rows[m.standby.clone()]);
        let mut len = field_len(m.member_id.len())
            + field_len(m.process_id.len())
            + self.task_list_len(unknown, active)
            + self.task_list_len(unknown, standby);
        for (given, entries) in m.partitions.iter().zip([active, standby]) {
            let sizes = self.partitions(given, entries, found);
            len += sizes
                .map(|(t, n)| entry_len(partition_body_len(t, n)))
                .sum::<usize>();
        }
        len
    }

    fn member(
        &self,
        b: &mut Vec<u8>,
        unknown: &[Key],
        rows: &[u32],
        m: &Member<'_>,
        found: &mut Vec<(u32, i64)>,
    ) {
        field(b, 1, m.member_id);
        field(b, 2, m.process_id);
        let (active, standby) = (&rows[m.active.clone()], &rows[m.standby.clone()]);
        self.task_list(b, unknown, 3, active);
        self.task_list(b, unknown, 4, standby);
        for (k, (given, entries)) in m.partitions.iter().zip([active, standby]).enumerate() {
            Self::partition_list(b, 5 + k as u8, self.partitions(given, entries, found));
        }
    }
}

fn partition_body_len(topic: &[u8], partition: i64) -> usize {
    field_len(topic.len()) + int_len(partition)
}

/// A repeated message's or string's entry whose body is `len` bytes: key, length, body.
fn entry_len(len: usize) -> usize {
    1 + varint_len(len as u64) + len
}

/// The answer's entries checked, each list put in the answer's order (when `answer.ordered`)
/// and each client's and member's body measured: their sizes, and the bytes of all.
pub fn plan(
    answer: &Answer<'_>,
    lists: &mut Lists,
    clients: &[Client<'_>],
    members: &[Member<'_>],
) -> Result<(Vec<usize>, usize), String> {
    let total = lists.rows.len();
    let fits = |r: &Range<usize>, total: usize| r.start <= r.end && r.end <= total;
    let ranges = || {
        let of_clients = clients.iter().flat_map(|c| [&c.active, &c.standby]);
        of_clients.chain(members.iter().flat_map(|m| [&m.active, &m.standby]))
    };
    if !ranges().all(|r| fits(r, total)) {
        return Err("a list's range outside the entries".into());
    }
    let mut given = members.iter().flat_map(|m| m.partitions.iter().flatten());
    if !given.all(|r| fits(r, answer.given.len())) {
        return Err("a member's partitions outside those given".into());
    }
    let known = answer.index.partitions.len() as u32;
    let unknown = lists.unknown.len() as u32;
    let bad = |&e: &u32| {
        if e & UNKNOWN != 0 {
            e & !UNKNOWN >= unknown
        } else {
            e >= known
        }
    };
    if lists.rows.iter().any(bad)
        || lists
            .unknown
            .iter()
            .any(|k| k.topology as usize >= answer.index.topologies.len())
    {
        return Err("an entry outside the table and the other tasks".into());
    }
    if answer.ordered {
        for r in ranges() {
            answer.order(&lists.unknown, &mut lists.rows[r.clone()]);
        }
    }
    let (rows, unknown) = (&lists.rows, &lists.unknown[..]);
    let mut found = Vec::new();
    let sizes: Vec<usize> = clients
        .iter()
        .map(|c| answer.client_len(unknown, rows, c))
        .chain(
            members
                .iter()
                .map(|m| answer.member_len(unknown, rows, m, &mut found)),
        )
        .collect();
    let bytes = sizes.iter().map(|&s| entry_len(s)).sum();
    Ok((sizes, bytes))
}

/// `AssignResponse`'s fields 1 (`clients`) and 2 (`members`) as protobuf writes them, into
/// `out`, exactly as long as `plan` measured them (`sizes`, one a client then one a member);
/// or where a body's bytes do not match its measure.
pub fn fill(
    answer: &Answer<'_>,
    lists: &Lists,
    clients: &[Client<'_>],
    members: &[Member<'_>],
    sizes: &[usize],
    out: &mut [u8],
) -> Result<(), String> {
    let (rows, unknown) = (&lists.rows, &lists.unknown[..]);
    let (mut body, mut found, mut head) = (Vec::new(), Vec::new(), Vec::with_capacity(11));
    let mut at = 0;
    let bodies = clients.iter().map(Ok).chain(members.iter().map(Err));
    for (i, (item, &size)) in bodies.zip(sizes).enumerate() {
        body.clear();
        let number = match item {
            Ok(c) => {
                answer.client(&mut body, unknown, rows, c);
                1
            }
            Err(m) => {
                answer.member(&mut body, unknown, rows, m, &mut found);
                2
            }
        };
        head.clear();
        head.push(number << 3 | 2);
        varint(&mut head, body.len() as u64);
        let end = at + head.len() + body.len();
        if body.len() != size || end > out.len() {
            return Err(format!(
                "entry {i}: {} bytes written, {size} measured",
                body.len()
            ));
        }
        out[at..at + head.len()].copy_from_slice(&head);
        out[at + head.len()..end].copy_from_slice(&body);
        at = end;
    }
    if at != out.len() || sizes.len() != clients.len() + members.len() {
        return Err(format!("{at} bytes written, {} measured", out.len()));
    }
    Ok(())
}
