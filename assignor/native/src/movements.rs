//! Kafka's `PartitionMovements` (`sticky_movements` before): per moved partition its
//! (original owner, current owner), and per topic and such pair the partitions as a Java
//! `HashSet`, whose first element is the one moved back instead of swapping.

use crate::hash_table::HashTable;
use std::collections::HashMap;

type Pair = (u32, u32); // (source member, destination member)

#[derive(Default)]
pub struct Movements {
    pub smallest: bool, // move back a set's smallest partition, not its first (tests only)
    by_partition: HashMap<u32, Pair>,
    by_topic: HashMap<u32, HashMap<Pair, HashTable>>,
}

impl Movements {
    pub fn new(smallest: bool) -> Self {
        Movements {
            smallest,
            ..Movements::default()
        }
    }

    fn remove(&mut self, tp: u32, topic: u32, spread: u32) -> Pair {
        let pair = self.by_partition.remove(&tp).expect("moved");
        let pairs = self.by_topic.get_mut(&topic).expect("moved");
        let set = pairs.get_mut(&pair).expect("moved");
        set.remove(tp, spread);
        if set.is_empty() {
            pairs.remove(&pair);
        }
        if pairs.is_empty() {
            self.by_topic.remove(&topic);
        }
        pair
    }

    fn add(&mut self, tp: u32, topic: u32, spread: u32, pair: Pair) {
        self.by_partition.insert(tp, pair);
        self.by_topic
            .entry(topic)
            .or_default()
            .entry(pair)
            .or_insert_with(HashTable::new)
            .put(tp, spread);
    }

    /// Record `tp` moving `old` -> `new`; a move back home erases the record.
    pub fn record(&mut self, tp: u32, topic: u32, spread: u32, old: u32, new: u32) {
        if self.by_partition.contains_key(&tp) {
            let (source, _) = self.remove(tp, topic, spread);
            if source != new {
                self.add(tp, topic, spread, (source, new));
            }
        } else {
            self.add(tp, topic, spread, (old, new));
        }
    }

    /// The partition to move instead of `tp` (`old` -> `new`): `tp` unless a partition of its
    /// topic already moved from `new` to `tp`'s original owner.
    pub fn partition_to_move(&self, tp: u32, topic: u32, old: u32, new: u32) -> u32 {
        let Some(pairs) = self.by_topic.get(&topic) else {
            return tp;
        };
        let old = self.by_partition.get(&tp).map_or(old, |p| p.0);
        let pick = if self.smallest {
            HashTable::smallest
        } else {
            HashTable::first
        };
        pairs.get(&(new, old)).map_or(tp, pick)
    }
}
