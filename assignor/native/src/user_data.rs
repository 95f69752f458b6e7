//! Eager `StickyAssignor`'s userData, every member's at once: an array of {topic (int16
//! length, UTF-8), partitions (int32 count, int32s)}, then the generation (int32: v1; absent
//! in v0). The one reader of these bytes (`kassign.assignor.consumer.sticky_claims` and
//! `kassign.kafka.consumer_user_data` call it): a rejoining group of 2,000 members sends a
//! million entries, one Python step each before (issue 24).
//!
//! Kafka's reading, which this keeps: v1, else v0 (the same array, no generation after it);
//! bytes after the struct are ignored; names are decoded as Java decodes them, malformed
//! UTF-8 replaced by U+FFFD; bytes that fit neither layout are a failure (the caller decides:
//! the assignor reads "nothing, generation -1", the byte-format API raises).

use std::collections::HashMap;

/// The group's claims as columns (`owned.rs` fills them too): member `i`'s entries are
/// `entry_topic[entry_ends[i-1]..entry_ends[i]]` (with `entry_count`), its numbers
/// `numbers[number_ends[i-1]..number_ends[i]]`.
#[derive(Default)]
pub struct Claims {
    /// Distinct topic names, as decoded, in order of first appearance.
    pub names: Vec<String>,
    /// Per member: `Some(g)` for v1, `None` for v0, no bytes, and failures.
    pub generations: Vec<Option<i32>>,
    /// Per member: `(reason, byte offset)` where bytes fit neither layout.
    pub failures: Vec<Option<(String, usize)>>,
    pub entry_ends: Vec<i64>,
    pub number_ends: Vec<i64>,
    pub entry_topic: Vec<i64>,
    pub entry_count: Vec<i64>,
    pub numbers: Vec<i32>,
}

/// Topic names, each distinct byte string decoded once; byte strings that decode to one name
/// (malformed ones replaced alike) share its index. Members mostly list their topics in one
/// order (Kafka writes them in a `HashMap`'s), so each name's successor last time is tried
/// first, one comparison of bytes; the hash map only when it differs (issue 24: a look-up
/// per entry was most of a rejoining group's read).
#[derive(Default)]
pub struct Names<'a> {
    by_bytes: HashMap<&'a [u8], i64>,
    by_name: HashMap<String, i64>,
    /// Per index, the bytes first read as it, and the index read after it last time.
    raw_of: Vec<&'a [u8]>,
    next_of: Vec<Option<usize>>,
    last: Option<usize>,
}

impl<'a> Names<'a> {
    pub fn index(&mut self, raw: &'a [u8], names: &mut Vec<String>) -> i64 {
        let guess = self.last.and_then(|l| self.next_of[l]);
        if let Some(g) = guess.filter(|&g| self.raw_of[g] == raw) {
            self.last = Some(g);
            return g as i64;
        }
        let i = self.looked_up(raw, names) as usize;
        if let Some(l) = self.last {
            self.next_of[l] = Some(i);
        }
        self.last = Some(i);
        i as i64
    }

    fn looked_up(&mut self, raw: &'a [u8], names: &mut Vec<String>) -> i64 {
        if let Some(&i) = self.by_bytes.get(raw) {
            return i;
        }
        let name = String::from_utf8_lossy(raw).into_owned();
        let next = names.len() as i64;
        let i = *self.by_name.entry(name).or_insert_with_key(|name| {
            names.push(name.clone());
            next
        });
        if i == next {
            self.raw_of.push(raw);
            self.next_of.push(None);
        }
        self.by_bytes.insert(raw, i);
        i
    }
}

fn int16(data: &[u8], at: usize) -> Option<i16> {
    Some(i16::from_be_bytes(data.get(at..at + 2)?.try_into().ok()?))
}

fn int32(data: &[u8], at: usize) -> Option<i32> {
    Some(i32::from_be_bytes(data.get(at..at + 4)?.try_into().ok()?))
}

type Failure = (String, usize);

/// One member's bytes appended to `out`'s entry columns; its generation, or where they fail.
fn read_member<'a>(
    data: &'a [u8],
    names: &mut Names<'a>,
    out: &mut Claims,
) -> Result<Option<i32>, Failure> {
    let fail = |what: &str, at: usize| Err((what.to_string(), at));
    let Some(count) = int32(data, 0) else {
        return fail("previous_assignment: truncated count", 0);
    };
    if count < 0 {
        return fail("previous_assignment: null or negative count", 0);
    }
    if count as usize * 6 > data.len() - 4 {
        return fail("previous_assignment: more elements than bytes", 0);
    }
    let mut at = 4;
    for _ in 0..count {
        let Some(size) = int16(data, at) else {
            return fail("topic: truncated length", at);
        };
        if size < 0 {
            return fail("topic: negative length", at);
        }
        let (start, end) = (at + 2, at + 2 + size as usize);
        let Some(raw) = data.get(start..end) else {
            return fail("topic: truncated", at);
        };
        at = end;
        let Some(n) = int32(data, at) else {
            return fail("partitions: truncated count", at);
        };
        if n < 0 || n as usize * 4 > data.len() - at - 4 {
            return fail("partitions: bad count", at);
        }
        out.entry_topic.push(names.index(raw, &mut out.names));
        out.entry_count.push(i64::from(n));
        let from = at + 4;
        at = from + 4 * n as usize;
        out.numbers.extend(
            data[from..at]
                .chunks_exact(4)
                .map(|c| i32::from_be_bytes(c.try_into().expect("4 bytes"))),
        );
    }
    Ok(int32(data, at))
}

/// Every member's userData (`None`: nothing, no generation) read into columns.
pub fn read(members: &[Option<&[u8]>]) -> Claims {
    let mut out = Claims::default();
    let mut names = Names::default();
    for data in members {
        let (entries, numbers) = (out.entry_topic.len(), out.numbers.len());
        let read = match data {
            Some(d) => read_member(d, &mut names, &mut out),
            None => Ok(None),
        };
        let (generation, failure) = match read {
            Ok(g) => (g, None),
            Err(f) => {
                out.entry_topic.truncate(entries); // a member that fails claims nothing
                out.entry_count.truncate(entries);
                out.numbers.truncate(numbers);
                (None, Some(f))
            }
        };
        out.generations.push(generation);
        out.failures.push(failure);
        out.entry_ends.push(out.entry_topic.len() as i64);
        out.number_ends.push(out.numbers.len() as i64);
    }
    out
}
