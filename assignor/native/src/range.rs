//! Kafka's `RangeAssignor` when some topic needs rack matching (KIP-881); Python:
//! `kassign.assignor.consumer.range_assignor`, whose docstring states the algorithm. Topics
//! are numbers, partitions ids (a topic's offset plus its number), members their places in
//! member order. Every choice reads the counts the one before left (a member's quota in a
//! topic depends on how many members already took one more), so it goes a partition or a
//! member at a time, as Kafka does.

use crate::general::Checkpoint;
use pyo3::PyResult;

/// The group as numbers. Topic `t`'s partitions are ids `offsets[t]..offsets[t + 1]`, its
/// subscribers `subscribers[subscriber_ends[t - 1]..subscriber_ends[t]]` (member places,
/// ascending). `set_of` gives each partition id its replica rack set, `set_has` each (set,
/// rack) whether the set holds the rack; `member_rack` each member's rack, -1 for none.
pub struct Input {
    pub offsets: Vec<u32>,
    pub subscribers: Vec<u32>,
    pub subscriber_ends: Vec<u32>,
    pub member_rack: Vec<i64>,
    pub set_of: Vec<u32>,
    pub set_has: Vec<bool>,
    pub racks: usize,
}

impl Input {
    /// Whether the numbers agree with each other (the caller made them; a mismatch is a bug
    /// there, not bad input, but must not crash the process).
    pub fn check(&self, passes: &[Vec<u32>]) -> Result<(), String> {
        let topics = self.subscriber_ends.len();
        let total = *self.offsets.last().unwrap_or(&0) as usize;
        let members = self.member_rack.len();
        let sets = self.set_has.len().checked_div(self.racks).unwrap_or(0);
        let ordered = |v: &[u32], top: usize| {
            v.windows(2).all(|w| w[0] <= w[1]) && v.last().is_none_or(|&e| e as usize <= top)
        };
        let bad = self.offsets.len() != topics + 1
            || self.offsets.first().is_some_and(|&o| o != 0)
            || !ordered(&self.offsets, total)
            || !ordered(&self.subscriber_ends, self.subscribers.len())
            || self.subscribers.iter().any(|&m| m as usize >= members)
            || self.set_has.len() != sets * self.racks
            || self.member_rack.iter().any(|&r| r >= self.racks as i64)
            || self.set_of.len() != total
            || self.set_of.iter().any(|&s| s as usize >= sets)
            || passes.iter().flatten().any(|&t| t as usize >= topics)
            || (0..topics)
                .any(|t| self.offsets[t + 1] > self.offsets[t] && self.subs(t).is_empty());
        if bad {
            return Err("range_with_racks: inconsistent input".into());
        }
        for pass in passes.iter().filter(|p| p.len() > 1) {
            let first = pass[0] as usize;
            let size = |t: usize| self.offsets[t + 1] - self.offsets[t];
            if pass.iter().any(|&t| {
                size(t as usize) != size(first) || self.subs(t as usize) != self.subs(first)
            }) {
                return Err(
                    "range_with_racks: topics passed together are not co-partitioned".into(),
                );
            }
        }
        Ok(())
    }

    fn subs(&self, topic: usize) -> &[u32] {
        let start = if topic == 0 {
            0
        } else {
            self.subscriber_ends[topic - 1] as usize
        };
        &self.subscribers[start..self.subscriber_ends[topic] as usize]
    }

    fn rack_of(&self, member: u32) -> Option<usize> {
        usize::try_from(self.member_rack[member as usize]).ok()
    }

    fn holds(&self, partition: usize, rack: usize) -> bool {
        self.set_has[self.set_of[partition] as usize * self.racks + rack]
    }
}

/// One topic's counts as Kafka's `TopicAssignmentState` keeps them.
struct Topic {
    first: usize,
    size: usize,
    base: u32,
    extra: i64, // members that may still take one more than `base`
    left: usize,
    assigned: Vec<u32>, // per subscriber (its index among them)
    cursor: usize,      // every partition below it is taken
    on_rack: Vec<Option<(Vec<u32>, usize)>>, // per rack: its partitions' numbers and a cursor
}

impl Topic {
    fn new(input: &Input, t: usize) -> Self {
        let first = input.offsets[t] as usize;
        let size = input.offsets[t + 1] as usize - first;
        let consumers = input.subs(t).len().max(1);
        Topic {
            first,
            size,
            base: (size / consumers) as u32,
            extra: (size % consumers) as i64,
            left: size,
            assigned: vec![0; consumers],
            cursor: 0,
            on_rack: vec![None; input.racks],
        }
    }

    fn max_assignable(&self, k: usize) -> u32 {
        (self.base + u32::from(self.extra > 0)).saturating_sub(self.assigned[k])
    }

    /// Subscriber `k` (member `member`) takes `partitions` (numbers within the topic).
    fn give(&mut self, k: usize, member: u32, partitions: &[u32], owner: &mut [i64]) {
        self.assigned[k] += partitions.len() as u32;
        if self.assigned[k] > self.base {
            self.extra -= 1;
        }
        for &p in partitions {
            owner[self.first + p as usize] = i64::from(member);
        }
        self.left -= partitions.len();
    }

    /// The `count` lowest partitions left with a replica on `rack` (`None`: any), into
    /// `chosen` (cleared first). Each list is walked once: what a cursor passed is taken.
    fn lowest(
        &mut self,
        input: &Input,
        rack: Option<usize>,
        count: u32,
        owner: &[i64],
        chosen: &mut Vec<u32>,
    ) {
        let taken = |p: u32| owner[self.first + p as usize] >= 0;
        chosen.clear();
        match rack {
            None => {
                while chosen.len() < count as usize && self.cursor < self.size {
                    if !taken(self.cursor as u32) {
                        chosen.push(self.cursor as u32);
                    }
                    self.cursor += 1;
                }
            }
            Some(r) => {
                let (list, cursor) = self.on_rack[r].get_or_insert_with(|| {
                    let on: Vec<u32> = (0..self.size as u32)
                        .filter(|&p| input.holds(self.first + p as usize, r))
                        .collect();
                    (on, 0)
                });
                while chosen.len() < count as usize && *cursor < list.len() {
                    if !taken(list[*cursor]) {
                        chosen.push(list[*cursor]);
                    }
                    *cursor += 1;
                }
            }
        }
    }
}

/// Each subscriber in order takes its quota of the lowest partitions left, on its rack when
/// `rack_matched` (a member without a rack matches any).
fn ranges(
    input: &Input,
    t: usize,
    topic: &mut Topic,
    rack_matched: bool,
    owner: &mut [i64],
    checkpoint: &mut Checkpoint,
) -> PyResult<()> {
    let mut chosen = Vec::new();
    for (k, &member) in input.subs(t).iter().enumerate() {
        if topic.left == 0 {
            break;
        }
        checkpoint.step()?;
        let rack = if rack_matched {
            input.rack_of(member)
        } else {
            None
        };
        let quota = topic.max_assignable(k);
        topic.lowest(input, rack, quota, owner, &mut chosen);
        if !chosen.is_empty() {
            topic.give(k, member, &chosen, owner);
        }
    }
    Ok(())
}

/// Partition `p` of every topic of `together` to the first member that has no rack or one
/// holding a replica of each, and room in each. The topics have the same subscribers and
/// partition count, and this pass (their first) gives each number to one member in all of
/// them, so their counts stay equal throughout: the first topic's stand for all.
fn co_partitioned(
    input: &Input,
    together: &[u32],
    topics: &mut [Topic],
    owner: &mut [i64],
    checkpoint: &mut Checkpoint,
) -> PyResult<()> {
    let lead = together[0] as usize;
    let subs = input.subs(lead);
    let rackless = subs.iter().any(|&m| input.rack_of(m).is_none());
    let mut remaining: Vec<usize> = (0..subs.len()).collect(); // subscriber indexes
    let mut common = vec![false; input.racks];
    for p in 0..topics[lead].size {
        checkpoint.step()?;
        for (r, on) in common.iter_mut().enumerate() {
            *on = together
                .iter()
                .all(|&t| input.holds(topics[t as usize].first + p, r));
        }
        if !rackless && !common.iter().any(|&on| on) {
            continue;
        }
        let fits = |k: usize| input.rack_of(subs[k]).is_none_or(|r| common[r]);
        let Some(at) = remaining
            .iter()
            .position(|&k| fits(k) && topics[lead].max_assignable(k) > 0)
        else {
            continue;
        };
        let k = remaining[at];
        for &t in together {
            topics[t as usize].give(k, subs[k], &[p as u32], owner);
        }
        if topics[lead].max_assignable(k) == 0 {
            remaining.remove(at);
            if remaining.is_empty() {
                break;
            }
        }
    }
    Ok(())
}

/// Each partition id's member (its place). `passes` are the rack-matched passes in Kafka's
/// order: several topics are co-partitioned ones, one is a topic's rack-matched ranges; then
/// every topic's plain ranges fill what is left.
pub fn assign(
    input: &Input,
    passes: &[Vec<u32>],
    checkpoint: &mut Checkpoint,
) -> PyResult<Vec<i64>> {
    let count = input.subscriber_ends.len();
    let total = *input.offsets.last().unwrap_or(&0) as usize;
    let mut owner = vec![-1i64; total];
    let mut topics: Vec<Topic> = (0..count).map(|t| Topic::new(input, t)).collect();
    for pass in passes {
        match pass.as_slice() {
            [] => {}
            [t] => {
                let t = *t as usize;
                ranges(input, t, &mut topics[t], true, &mut owner, checkpoint)?;
            }
            together => co_partitioned(input, together, &mut topics, &mut owner, checkpoint)?,
        }
    }
    for (t, topic) in topics.iter_mut().enumerate() {
        ranges(input, t, topic, false, &mut owner, checkpoint)?;
    }
    Ok(owner)
}
