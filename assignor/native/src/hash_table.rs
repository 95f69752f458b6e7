//! The iteration order of a default-constructed Java `HashSet` of partitions, as
//! `java_order.HashTable` replays it: buckets by index, each in insertion order; the table
//! doubles after the insertion that crosses the load factor (0.75), or when a bucket reaches
//! nine keys below 64 buckets, keeping each bucket's relative order; it never shrinks.

use std::collections::BTreeMap;

const DEFAULT_CAPACITY: u32 = 16;
const TREEIFY_BIN: usize = 9;
const MIN_TREEIFY_CAPACITY: u32 = 64;

/// `HashMap.hash`: the high half folded into the low half.
pub fn spread(hash: u32) -> u32 {
    hash ^ (hash >> 16)
}

pub struct HashTable {
    capacity: u32,
    buckets: BTreeMap<u32, Vec<(u32, u32)>>, // index -> (key, spread hash)
    size: usize,
}

impl HashTable {
    pub fn new() -> Self {
        HashTable {
            capacity: DEFAULT_CAPACITY,
            buckets: BTreeMap::new(),
            size: 0,
        }
    }

    pub fn is_empty(&self) -> bool {
        self.size == 0
    }

    fn grow(&mut self) {
        let old = std::mem::take(&mut self.buckets);
        self.capacity *= 2;
        for (key, spread) in old.into_values().flatten() {
            self.buckets
                .entry(spread & (self.capacity - 1))
                .or_default()
                .push((key, spread));
        }
    }

    /// `HashSet.add` of `key` whose spread hash is `spread` (a present key keeps its place).
    pub fn put(&mut self, key: u32, spread: u32) {
        let bucket = self
            .buckets
            .entry(spread & (self.capacity - 1))
            .or_default();
        if bucket.iter().any(|&(k, _)| k == key) {
            return;
        }
        bucket.push((key, spread));
        self.size += 1;
        // a crowded bucket at 64 buckets or more would be treeified: not followed, as in Python
        if bucket.len() >= TREEIFY_BIN && self.capacity < MIN_TREEIFY_CAPACITY {
            self.grow();
        }
        if self.size > (self.capacity as usize) * 3 / 4 {
            self.grow();
        }
    }

    pub fn remove(&mut self, key: u32, spread: u32) {
        let index = spread & (self.capacity - 1);
        if let Some(bucket) = self.buckets.get_mut(&index) {
            if let Some(at) = bucket.iter().position(|&(k, _)| k == key) {
                bucket.remove(at);
                self.size -= 1;
                if bucket.is_empty() {
                    self.buckets.remove(&index);
                }
            }
        }
    }

    /// The smallest key (tests: what if Java's order did not decide); not empty.
    pub fn smallest(&self) -> u32 {
        self.buckets
            .values()
            .flatten()
            .map(|&(k, _)| k)
            .min()
            .expect("not empty")
    }

    /// `iterator().next()`; the table must not be empty.
    pub fn first(&self) -> u32 {
        self.buckets.values().next().expect("not empty")[0].0
    }
}
