//! Standby replica placement over task positions and client ranks (`streams/standby.py` states
//! the policy): the KIP-708 tag pass, then the least-loaded pass, both picking the client with
//! the least `(assigned / threads, rank)` as Kafka's `ConstrainedPrioritySet` does with its
//! double loads.

use crate::general::Checkpoint;
use pyo3::prelude::*;
use std::cmp::{Ordering, Reverse};
use std::collections::{BinaryHeap, HashMap};

/// A client's place in the order: its load as Kafka's double, then its rank.
#[derive(Clone, Copy, PartialEq)]
struct Key {
    load: f64,
    rank: u32,
}

impl Eq for Key {}

impl Ord for Key {
    fn cmp(&self, other: &Self) -> Ordering {
        self.load
            .total_cmp(&other.load)
            .then(self.rank.cmp(&other.rank))
    }
}

impl PartialOrd for Key {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

/// Clients by key, one heap per tag-value group, and a heap of the groups by their best
/// client (entries go stale when a group's best changes; `listed` says which is current), so
/// that a poll skips a barred group in one step however many clients it holds.
struct LeastLoaded {
    capacity: Vec<f64>,
    count: Vec<u32>,
    group: Vec<u32>,
    members: Vec<BinaryHeap<Reverse<Key>>>,
    listed: Vec<Option<Key>>,
    tops: BinaryHeap<Reverse<(Key, u32)>>,
}

impl LeastLoaded {
    fn new(capacities: &[u32], counts: &[u32], group: &[u32], groups: usize) -> Self {
        let capacity: Vec<f64> = capacities.iter().map(|&c| f64::from(c.max(1))).collect();
        let mut members: Vec<Vec<Reverse<Key>>> = vec![Vec::new(); groups];
        for (rank, (&count, &g)) in counts.iter().zip(group).enumerate() {
            members[g as usize].push(Reverse(Key {
                load: f64::from(count) / capacity[rank],
                rank: rank as u32,
            }));
        }
        let mut heap = LeastLoaded {
            capacity,
            count: counts.to_vec(),
            group: group.to_vec(),
            members: members.into_iter().map(BinaryHeap::from).collect(),
            listed: vec![None; groups],
            tops: BinaryHeap::new(),
        };
        for g in 0..groups {
            heap.list(g);
        }
        heap
    }

    /// Put group `g` in the heap of groups under its best client's key (if that changed).
    fn list(&mut self, g: usize) {
        let key = self.members[g].peek().map(|r| r.0);
        if let Some(best) = key {
            if key != self.listed[g] {
                self.tops.push(Reverse((best, g as u32)));
            }
        }
        self.listed[g] = key;
    }

    /// The least-loaded client outside `holding` in a group `barred` leaves; it gets one more.
    fn poll(&mut self, holding: &[u32], barred: Option<&[bool]>) -> Option<u32> {
        let mut touched: Vec<usize> = Vec::new();
        let mut stashed: Vec<(usize, Reverse<Key>)> = Vec::new();
        let mut chosen: Option<Key> = None;
        while let Some(Reverse((key, g))) = self.tops.pop() {
            let g = g as usize;
            if self.listed[g] != Some(key) {
                continue; // stale: the group's best client changed since
            }
            self.listed[g] = None;
            touched.push(g);
            if barred.is_some_and(|b| b[g]) {
                continue;
            }
            let members = &mut self.members[g];
            if holding.contains(&members.peek().expect("listed").0.rank) {
                while let Some(top) = members.peek() {
                    if !holding.contains(&top.0.rank) {
                        break;
                    }
                    stashed.push((g, members.pop().expect("peeked")));
                }
                self.list(g);
                continue;
            }
            chosen = members.pop().map(|r| r.0);
            break;
        }
        for (g, entry) in stashed {
            self.members[g].push(entry);
        }
        if let Some(key) = chosen {
            let rank = key.rank as usize;
            self.count[rank] += 1;
            let g = self.group[rank] as usize;
            self.members[g].push(Reverse(Key {
                load: f64::from(self.count[rank]) / self.capacity[rank],
                rank: key.rank,
            }));
        }
        for g in touched {
            self.list(g);
        }
        chosen.map(|k| k.rank)
    }
}

/// The clients' tag values by group: `values[g][k]` the value number of group `g` on key `k`
/// (-1: unset), `distinct[k]` how many values key `k` has over all clients.
pub struct Tags {
    pub distinct: Vec<u32>,
    pub values: Vec<Vec<i32>>,
    pub sizes: Vec<u32>, // clients per group
}

/// Per key, the values a task's replicas may no longer take (`tags.exclude_used_values`): one
/// numbered state per combination met, each with the groups it bars and how many clients those
/// leave, worked out once (a few combinations serve a hundred thousand tasks).
struct Bars<'a> {
    tags: &'a Tags,
    states: Vec<Vec<Vec<i32>>>,
    number: HashMap<Vec<Vec<i32>>, usize>,
    barred: Vec<Vec<bool>>,
    open: Vec<u32>,
    after: HashMap<(usize, u32, u32), usize>,
}

impl<'a> Bars<'a> {
    fn new(tags: &'a Tags) -> Self {
        let mut bars = Bars {
            tags,
            states: Vec::new(),
            number: HashMap::new(),
            barred: Vec::new(),
            open: Vec::new(),
            after: HashMap::new(),
        };
        bars.state(vec![Vec::new(); tags.distinct.len()]);
        bars
    }

    fn state(&mut self, bars: Vec<Vec<i32>>) -> usize {
        if let Some(&n) = self.number.get(&bars) {
            return n;
        }
        let barred: Vec<bool> = self
            .tags
            .values
            .iter()
            .map(|vals| {
                vals.iter()
                    .zip(&bars)
                    .any(|(&v, bar)| v >= 0 && bar.contains(&v))
            })
            .collect();
        let open = self
            .tags
            .sizes
            .iter()
            .zip(&barred)
            .filter(|(_, &b)| !b)
            .map(|(&n, _)| n)
            .sum();
        let n = self.states.len();
        self.states.push(bars.clone());
        self.number.insert(bars, n);
        self.barred.push(barred);
        self.open.push(open);
        n
    }

    /// The state once a client of `group` holds the task on `used` clients: a key the client
    /// has no value for stays as it was; a key with no more values than clients used stops
    /// constraining; otherwise the client's value is barred too.
    fn after(&mut self, state: usize, group: u32, used: u32) -> usize {
        if let Some(&n) = self.after.get(&(state, group, used)) {
            return n;
        }
        let tags = self.tags;
        let values = &tags.values[group as usize];
        let next: Vec<Vec<i32>> = self.states[state]
            .iter()
            .enumerate()
            .map(|(k, bar)| {
                let v = values[k];
                if v < 0 {
                    bar.clone()
                } else if tags.distinct[k] <= used {
                    Vec::new()
                } else {
                    let mut bar = bar.clone();
                    if let Err(at) = bar.binary_search(&v) {
                        bar.insert(at, v);
                    }
                    bar
                }
            })
            .collect();
        let n = self.state(next);
        self.after.insert((state, group, used), n);
        n
    }

    /// Clients a poll under `state` could pick for a task `holding` holds: none means no poll.
    fn available(&self, state: usize, holding: &[u32], group: &[u32]) -> i64 {
        let barred = &self.barred[state];
        let held = holding
            .iter()
            .filter(|&&c| !barred[group[c as usize] as usize])
            .count();
        i64::from(self.open[state]) - held as i64
    }
}

pub struct Input {
    pub replicas: u32,
    pub holding: Vec<Vec<u32>>, // per task position, its holders by rank (ascending)
    pub capacities: Vec<u32>,   // per rank, its threads
    pub counts: Vec<u32>,       // per rank, the load it starts from
    pub group: Vec<u32>,        // per rank, its tag-value group
    pub tags: Option<Tags>,     // None: no tags configured, least loaded only
}

pub struct Output {
    pub placed: Vec<Vec<u32>>, // per rank, the task positions it received, in order
    pub untagged: Vec<(u32, u32)>, // with tags: replicas tags could not place
    pub short: Vec<u32>,       // tasks left with fewer replicas
}

pub fn place(input: Input, checkpoint: &mut Checkpoint) -> PyResult<Output> {
    let clients = input.capacities.len();
    let groups = input.tags.as_ref().map_or(1, |t| t.sizes.len());
    let mut heap = LeastLoaded::new(&input.capacities, &input.counts, &input.group, groups);
    let mut placed: Vec<Vec<u32>> = vec![Vec::new(); clients];
    let mut holding = input.holding;
    let mut pending: Vec<(u32, u32)> = Vec::new();
    match &input.tags {
        Some(tags) => {
            let mut bars = Bars::new(tags);
            for (task, held) in holding.iter_mut().enumerate() {
                checkpoint.step()?;
                let Some(&first) = held.iter().min() else {
                    pending.push((task as u32, input.replicas));
                    continue;
                };
                let (mut last, mut used, mut remaining, mut state) =
                    (first, 1u32, input.replicas, 0);
                while remaining > 0 {
                    state = bars.after(state, input.group[last as usize], used);
                    if bars.available(state, held, &input.group) <= 0 {
                        break;
                    }
                    let Some(chosen) = heap.poll(held, Some(&bars.barred[state])) else {
                        break;
                    };
                    placed[chosen as usize].push(task as u32);
                    held.push(chosen);
                    last = chosen;
                    used += 1;
                    remaining -= 1;
                }
                if remaining > 0 {
                    pending.push((task as u32, remaining));
                }
            }
        }
        None => pending.extend((0..holding.len() as u32).map(|t| (t, input.replicas))),
    }
    let tagged = input.tags.is_some();
    let mut untagged = Vec::new();
    let mut short = Vec::new();
    for (task, replicas) in pending {
        checkpoint.step()?;
        let held = &mut holding[task as usize];
        for _ in 0..replicas {
            let chosen = if held.len() < clients {
                heap.poll(held, None)
            } else {
                None
            };
            let Some(chosen) = chosen else {
                short.push(task);
                break;
            };
            placed[chosen as usize].push(task);
            held.push(chosen);
            if tagged {
                untagged.push((task, chosen));
            }
        }
    }
    Ok(Output {
        placed,
        untagged,
        short,
    })
}
