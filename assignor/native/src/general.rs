//! Kafka's `GeneralAssignmentBuilder` over numbers: partitions are ids (topic offset plus
//! partition, topics by name), members are their place in the group's hash order.

use crate::hash_table::spread;
use crate::lists::Lists;
use crate::movements::Movements;
use pyo3::prelude::*;
use std::cmp::Reverse;
use std::collections::{BinaryHeap, HashMap};
use std::time::{Duration, Instant};

const NONE: u32 = u32::MAX;

/// The group as numbers (`sticky_general.build` makes it).
pub struct Input {
    pub offsets: Vec<u32>, // topic t's partitions are ids offsets[t]..offsets[t + 1]
    pub topic_hashes: Vec<u32>, // String.hashCode of each topic's name
    pub rank: Vec<u32>,    // per member, its place in Java's member id order
    pub subscription_sets: Vec<Vec<u32>>, // distinct subscriptions, as sorted topic numbers
    pub subscription_of: Vec<u32>, // per member, its subscription
    pub owned_order: Vec<u32>, // members in the order of Kafka's map of owned partitions
    pub owned: Vec<u32>,   // per member (ends), its settled claims, in claim order
    pub owned_ends: Vec<u32>,
    pub previous_generation: Vec<Option<i64>>, // per member, the generation its claims count as
    pub previous: Vec<u32>,                    // per member (ends), its previous partitions
    pub previous_ends: Vec<u32>,
    pub member_rack: Vec<i64>, // per member its rack's number, or -1; all -1 off rack mode
    pub set_of: Vec<u32>,      // per partition its replica rack set (rack mode only)
    pub set_has: Vec<bool>,    // set_has[set * racks + rack]
    pub racks: usize,
    pub java_set_order: bool, // false: see `Movements::smallest`
}

impl Input {
    /// Every number in range, so that `build` cannot index out of bounds.
    pub fn check(&self, total: u32) -> Result<(), String> {
        let n = self.rank.len() as u32;
        let topics = self.topic_hashes.len() as u32;
        let rack_mode = self.member_rack.iter().any(|&r| r >= 0);
        let sets = self.set_has.len().checked_div(self.racks).unwrap_or(0);
        let ok = self.offsets.windows(2).all(|w| w[0] <= w[1])
            && self.subscription_sets.iter().flatten().all(|&t| t < topics)
            && self
                .subscription_sets
                .iter()
                .all(|s| s.windows(2).all(|w| w[0] < w[1]))
            && self
                .subscription_of
                .iter()
                .all(|&s| (s as usize) < self.subscription_sets.len())
            && self.owned.iter().chain(&self.previous).all(|&p| p < total)
            && {
                let mut seen = vec![false; n as usize];
                self.owned_order
                    .iter()
                    .all(|&m| m < n && !std::mem::replace(&mut seen[m as usize], true))
            }
            && self.member_rack.iter().all(|&r| r < self.racks as i64)
            && (!rack_mode
                || (self.set_of.len() == total as usize
                    && self.set_has.len().is_multiple_of(self.racks)
                    && self.set_of.iter().all(|&s| (s as usize) < sets)));
        if ok {
            Ok(())
        } else {
            Err("general_assignment: a number out of range".into())
        }
    }
}

pub struct Output {
    pub ids: Vec<u32>,
    pub ends: Vec<u32>,                   // per member (group order)
    pub order: Vec<u32>,                  // the answer's member order
    pub null_pointer: Option<(u32, u32)>, // (partition, previous owner) where Kafka throws
}

/// `interrupt.checkpoint()` every 20 ms at most (`CHECK_EVERY_SECONDS`: checking more often
/// would change nothing), with the GIL taken back for the call: a busy Python thread can make
/// each wait a switch interval (5 ms).
pub struct Checkpoint {
    call: Py<PyAny>,
    next: Instant,
    steps: u32,
}

impl Checkpoint {
    pub fn new(call: Py<PyAny>) -> Self {
        Checkpoint {
            call,
            next: Instant::now(),
            steps: 0,
        }
    }

    pub fn step(&mut self) -> PyResult<()> {
        self.steps += 1;
        if !self.steps.is_multiple_of(1024) || Instant::now() < self.next {
            return Ok(());
        }
        self.next = Instant::now() + Duration::from_millis(20);
        Python::attach(|py| self.call.call0(py).map(drop))
    }
}

struct Builder<'a> {
    input: &'a Input,
    topic_of: Vec<u32>,
    subscribers: Vec<u32>,         // per topic, how many subscribe
    subscribers_of: Vec<Vec<u32>>, // per topic, its subscribers in group order
    max_size: Vec<u32>,
    current: Lists,
    taking_part: Vec<bool>, // per member: not set aside (fixed)
    owner: Vec<u32>,        // per partition
    previous: Vec<u32>,     // per partition, its previous owner or NONE
    movements: Movements,
    heaviest: Vec<(u32, u32)>, // per topic, (stamp, heaviest owner load) of `is_balanced`
    stamp: u32,
}

impl Builder<'_> {
    fn subscribed(&self, member: u32) -> &[u32] {
        &self.input.subscription_sets[self.input.subscription_of[member as usize] as usize]
    }

    fn load(&self, member: u32) -> u32 {
        self.current.len(member)
    }

    /// The member has a rack (rack mode) that holds no replica of `tp`.
    fn mismatch(&self, member: u32, tp: u32) -> bool {
        let rack = self.input.member_rack[member as usize];
        rack >= 0
            && !self.input.set_has
                [self.input.set_of[tp as usize] as usize * self.input.racks + rack as usize]
    }

    fn spread(&self, tp: u32) -> u32 {
        let topic = self.topic_of[tp as usize];
        let partition = tp - self.input.offsets[topic as usize];
        // TopicPartition.hashCode: 31 * (31 + partition) + topic.hashCode()
        spread(
            31u32
                .wrapping_mul(31u32.wrapping_add(partition))
                .wrapping_add(self.input.topic_hashes[topic as usize]),
        )
    }
}

/// Step 2's least-loaded candidate per candidate set (a topic's subscribers, or those of
/// them on one replica rack set): a heap of (load, rank, member), stale entries refreshed
/// when they reach the top (loads only grow meanwhile).
#[derive(Default)]
struct Lightest {
    heaps: HashMap<(u32, u32), Candidates>,
}

/// (load, rank, member), least first.
type Candidates = BinaryHeap<Reverse<(u32, u32, u32)>>;

impl Lightest {
    fn pick(&mut self, b: &Builder, tp: u32, rack_local: bool) -> Option<u32> {
        let topic = b.topic_of[tp as usize];
        let set = if rack_local {
            b.input.set_of[tp as usize]
        } else {
            NONE
        };
        let heap = self.heaps.entry((topic, set)).or_insert_with(|| {
            b.subscribers_of[topic as usize]
                .iter()
                .filter(|&&m| !(rack_local && b.mismatch(m, tp)))
                .map(|&m| Reverse((b.load(m), b.input.rank[m as usize], m)))
                .collect()
        });
        loop {
            let mut top = heap.peek_mut()?;
            let Reverse((load, rank, member)) = *top;
            let actual = b.load(member);
            if load == actual {
                *top = Reverse((load + 1, rank, member));
                return Some(member);
            }
            *top = Reverse((actual, rank, member));
        }
    }
}

pub fn build(input: &Input, checkpoint: &mut Checkpoint) -> PyResult<Output> {
    let n = input.rank.len();
    let topics = input.topic_hashes.len();
    let total = input.offsets[topics] as usize;
    let mut topic_of = vec![0u32; total];
    for t in 0..topics {
        topic_of[input.offsets[t] as usize..input.offsets[t + 1] as usize].fill(t as u32);
    }
    let mut subscribers_of = vec![Vec::new(); topics];
    let mut max_size = vec![0u32; n];
    for (m, size) in max_size.iter_mut().enumerate() {
        for &t in &input.subscription_sets[input.subscription_of[m] as usize] {
            subscribers_of[t as usize].push(m as u32);
            *size += input.offsets[t as usize + 1] - input.offsets[t as usize];
        }
    }
    let subscribers: Vec<u32> = subscribers_of.iter().map(|s| s.len() as u32).collect();
    // Kafka's prevAssignment: per partition, the claimant from the latest generation
    let mut previous = vec![NONE; total];
    let mut previous_generation = vec![i64::MIN; total];
    let mut start = 0;
    for m in 0..n {
        let end = input.previous_ends[m] as usize;
        if let Some(generation) = input.previous_generation[m] {
            for &tp in &input.previous[start..end] {
                if previous[tp as usize] == NONE || generation > previous_generation[tp as usize] {
                    previous[tp as usize] = m as u32;
                    previous_generation[tp as usize] = generation;
                }
            }
        }
        start = end;
    }
    let mut current = Lists::new(n, total);
    let mut start = 0;
    for m in 0..n {
        let end = input.owned_ends[m] as usize;
        for &tp in &input.owned[start..end] {
            current.push(m as u32, tp);
        }
        start = end;
    }
    let mut b = Builder {
        input,
        topic_of,
        subscribers,
        subscribers_of,
        max_size,
        current,
        taking_part: vec![true; n],
        owner: vec![NONE; total],
        previous,
        movements: Movements::new(!input.java_set_order),
        heaviest: vec![(0, 0); topics],
        stamp: 0,
    };
    let mut sorted_topics: Vec<u32> = (0..topics as u32).collect();
    sorted_topics.sort_by_key(|&t| (b.subscribers[t as usize], t));
    let every: Vec<u32> = sorted_topics
        .iter()
        .flat_map(|&t| input.offsets[t as usize]..input.offsets[t as usize + 1])
        .collect();
    let revocation_required = keep_owned(&mut b);
    for m in 0..n {
        for tp in b.current.iter(m as u32) {
            b.owner[tp as usize] = m as u32;
        }
    }
    let unassigned: Vec<u32> = every
        .iter()
        .copied()
        .filter(|&tp| b.owner[tp as usize] == NONE)
        .collect();
    balance(&mut b, &every, &unassigned, revocation_required, checkpoint)
}

/// Step 1; returns whether some claim had to be dropped (revocation required).
fn keep_owned(b: &mut Builder) -> bool {
    let mut dropped = false;
    for m in 0..b.current.members() as u32 {
        let mut current = std::mem::replace(&mut b.current, Lists::new(0, 0));
        dropped |= current.retain(m, |tp| {
            b.subscribed(m)
                .binary_search(&b.topic_of[tp as usize])
                .is_ok()
                && !b.mismatch(m, tp)
        });
        b.current = current;
    }
    dropped
}

/// Steps 2 to 4.
fn balance(
    b: &mut Builder,
    every: &[u32],
    unassigned: &[u32],
    revocation_required: bool,
    checkpoint: &mut Checkpoint,
) -> PyResult<Output> {
    let n = b.current.members();
    let initializing = (0..n as u32).all(|m| b.current.len(m) == 0);
    let mut lightest = Lightest::default();
    let mut left = unassigned.to_vec();
    if b.input.member_rack.iter().any(|&r| r >= 0) {
        left.retain(|&tp| !give(b, &mut lightest, tp, true));
    }
    for &tp in &left {
        give(b, &mut lightest, tp, false);
    }
    let movable: Vec<u32> = every
        .iter()
        .copied()
        .filter(|&tp| b.subscribers[b.topic_of[tp as usize] as usize] >= 2)
        .collect();
    let new: Vec<u32> = unassigned
        .iter()
        .copied()
        .filter(|&tp| b.subscribers[b.topic_of[tp as usize] as usize] >= 2)
        .collect();
    for m in 0..n as u32 {
        b.taking_part[m as usize] = can_change(b, m);
    }
    let before = b.current.clone();
    let owners_before = b.owner.clone();
    let thrown = |null_pointer| Output {
        ids: vec![],
        ends: vec![],
        order: vec![],
        null_pointer: Some(null_pointer),
    };
    if !revocation_required {
        if let Err(null_pointer) = reassign_until_balanced(b, &new, checkpoint)? {
            return Ok(thrown(null_pointer));
        }
    }
    let moved = match reassign_until_balanced(b, &movable, checkpoint)? {
        Ok(moved) => moved,
        Err(null_pointer) => return Ok(thrown(null_pointer)),
    };
    if !initializing && moved && score(b, &b.current) >= score(b, &before) {
        b.current = before;
        b.owner = owners_before;
    }
    let mut ids = Vec::with_capacity(b.owner.len());
    let mut ends = Vec::with_capacity(n);
    for m in 0..n as u32 {
        ids.extend(b.current.iter(m));
        ends.push(ids.len() as u32);
    }
    // the members set aside go back at the end of Kafka's map
    let order = b
        .input
        .owned_order
        .iter()
        .filter(|&&m| b.taking_part[m as usize])
        .chain(
            b.input
                .owned_order
                .iter()
                .filter(|&&m| !b.taking_part[m as usize]),
        )
        .copied()
        .collect();
    Ok(Output {
        ids,
        ends,
        order,
        null_pointer: None,
    })
}

/// Assign `tp` to its least-loaded subscriber (on its racks if `rack_local`).
fn give(b: &mut Builder, lightest: &mut Lightest, tp: u32, rack_local: bool) -> bool {
    let Some(member) = lightest.pick(b, tp, rack_local) else {
        return false;
    };
    b.current.push(member, tp);
    b.owner[tp as usize] = member;
    true
}

/// Kafka's `canConsumerParticipateInReassignment`.
fn can_change(b: &Builder, member: u32) -> bool {
    b.current.len(member) < b.max_size[member as usize]
        || b.current
            .iter(member)
            .any(|tp| b.subscribers[b.topic_of[tp as usize] as usize] >= 2)
}

/// Kafka's `performReassignments` over the members taking part; whether anything moved, or
/// where Kafka throws NullPointerException (a previous owner set aside).
///
/// Kafka asks `isBalanced` before every partition; the answer changes only with a move, so a
/// "no" is remembered until the next one. A subscriber with two fewer than the owner cannot
/// exist while the owner has at most one more than the least-loaded member (`floor`).
fn reassign_until_balanced(
    b: &mut Builder,
    partitions: &[u32],
    checkpoint: &mut Checkpoint,
) -> PyResult<Result<bool, (u32, u32)>> {
    let subscribers: Vec<Vec<u32>> = b
        .subscribers_of
        .iter()
        .map(|s| {
            s.iter()
                .copied()
                .filter(|&m| b.taking_part[m as usize])
                .collect()
        })
        .collect();
    let mut moved = false;
    let mut unbalanced = false;
    let mut floor: Option<u32> = None;
    loop {
        let mut modified = false;
        for &tp in partitions {
            checkpoint.step()?;
            if !unbalanced && is_balanced(b) {
                break;
            }
            unbalanced = true;
            let load = b.load(b.owner[tp as usize]);
            let home = b.previous[tp as usize];
            if home != NONE {
                if !b.taking_part[home as usize] {
                    return Ok(Err((tp, home)));
                }
                if load > b.load(home) + 1 {
                    move_partition(b, tp, home);
                    (moved, modified, unbalanced, floor) = (true, true, false, None);
                    continue;
                }
            }
            let lowest = *floor.get_or_insert_with(|| {
                (0..b.current.members() as u32)
                    .filter(|&m| b.taking_part[m as usize])
                    .map(|m| b.load(m))
                    .min()
                    .unwrap_or(0)
            });
            let candidates = &subscribers[b.topic_of[tp as usize] as usize];
            if load <= lowest + 1 || candidates.is_empty() {
                continue;
            }
            let lightest = *candidates
                .iter()
                .min_by_key(|&&m| (b.load(m), b.input.rank[m as usize]))
                .expect("some");
            if load > b.load(lightest) + 1 {
                move_partition(b, tp, lightest);
                (moved, modified, unbalanced, floor) = (true, true, false, None);
            }
        }
        if !modified {
            return Ok(Ok(moved));
        }
    }
}

/// Move `tp` to `new`, or the partition `Movements` says to move instead.
fn move_partition(b: &mut Builder, tp: u32, new: u32) {
    let topic = b.topic_of[tp as usize];
    let actual = b
        .movements
        .partition_to_move(tp, topic, b.owner[tp as usize], new);
    let old = b.owner[actual as usize];
    let spread = b.spread(actual);
    b.movements.record(actual, topic, spread, old, new);
    b.current.remove(old, actual);
    b.current.push(new, actual);
    b.owner[actual as usize] = new;
}

/// Loads within one, or no member could take a partition of its topics from a member with
/// two more than it (Kafka's `isBalanced`), over the members taking part.
fn is_balanced(b: &mut Builder) -> bool {
    let n = b.current.members() as u32;
    let loads = (0..n)
        .filter(|&m| b.taking_part[m as usize])
        .map(|m| b.load(m));
    let (lo, hi) = loads.fold((u32::MAX, 0), |(lo, hi), l| (lo.min(l), hi.max(l)));
    if lo.saturating_add(1) >= hi {
        return true;
    }
    b.stamp += 1;
    // the answer does not depend on the members' order: the lightest one that could take
    // more, the likeliest to say "no", is asked first
    let lightest = (0..n)
        .filter(|&m| b.taking_part[m as usize] && b.load(m) != b.max_size[m as usize])
        .min_by_key(|&m| b.load(m));
    let Some(lightest) = lightest else {
        return true;
    };
    if could_take(b, lightest) {
        return false;
    }
    !(0..n).any(|m| {
        b.taking_part[m as usize] && b.load(m) != b.max_size[m as usize] && could_take(b, m)
    })
}

/// Some topic `member` subscribes to has a partition whose owner has two more than it.
fn could_take(b: &mut Builder, member: u32) -> bool {
    let input = b.input;
    let load = b.load(member);
    for &topic in &input.subscription_sets[input.subscription_of[member as usize] as usize] {
        let t = topic as usize;
        let top = if b.heaviest[t].0 == b.stamp {
            b.heaviest[t].1
        } else {
            let (start, end) = (input.offsets[t], input.offsets[t + 1]);
            let top = (start..end)
                .map(|tp| b.load(b.owner[tp as usize]))
                .max()
                .unwrap_or(0);
            b.heaviest[t] = (b.stamp, top);
            top
        };
        if top > load + 1 {
            return true;
        }
    }
    false
}

/// Kafka's balance score: the sum of load differences over all pairs of members taking part.
fn score(b: &Builder, assignment: &Lists) -> i64 {
    let mut loads: Vec<i64> = (0..assignment.members() as u32)
        .filter(|&m| b.taking_part[m as usize])
        .map(|m| i64::from(assignment.len(m)))
        .collect();
    loads.sort_unstable();
    let k = loads.len() as i64;
    loads
        .iter()
        .enumerate()
        .map(|(i, &l)| l * (2 * i as i64 - k + 1))
        .sum()
}
