//! Step 2 of Kafka's `ConstrainedAssignmentBuilder` in rack mode (Python:
//! `kassign.assignor.consumer.sticky_constrained`, which states the whole builder): the
//! partitions left, in the order given, each to a member on one of its replicas' racks within
//! the quotas. Under-minimum members take turns from a cursor over their list; else the first
//! at-minimum member on such a rack takes it. One partition at a time, as Kafka does: each
//! choice moves the cursor and the lists the next one reads.

/// The quotas and the count of members already at the maximum.
pub struct Quotas {
    pub min: u32,
    pub max: u32,
    pub over: u32,
    pub expected_over: u32,
}

/// Whether a member's rack (`member_rack`, -1 for none) holds a replica of a partition.
pub struct Racks<'a> {
    pub member_rack: &'a [i64],
    pub set_of: &'a [u32],
    pub set_has: &'a [bool],
    pub racks: usize,
}

impl Racks<'_> {
    fn local(&self, partition: u32, member: u32) -> bool {
        let rack = self.member_rack[member as usize];
        rack >= 0
            && self.set_has[self.set_of[partition as usize] as usize * self.racks + rack as usize]
    }

    /// Index of the first of `members`, from `start` round the list, local to `partition`.
    fn next(&self, partition: u32, members: &[u32], start: usize) -> Option<usize> {
        let n = members.len();
        (0..n)
            .map(|i| (start + i) % n)
            .find(|&at| self.local(partition, members[at]))
    }
}

/// Per partition of `unassigned`, the member it went to, or -1 (left for the plain round
/// robin). `under_min`, `at_min`, `counts` and `quotas.over` are updated as Kafka's are.
pub fn rack_round_robin(
    unassigned: &[u32],
    under_min: &mut Vec<u32>,
    at_min: &mut Vec<u32>,
    counts: &mut [u32],
    quotas: &mut Quotas,
    racks: &Racks<'_>,
) -> Vec<i64> {
    let mut placed = Vec::with_capacity(unassigned.len());
    let mut next_index = 0;
    for &partition in unassigned {
        let mut member = None;
        if let Some(mut index) = racks.next(partition, under_min, next_index) {
            let m = under_min[index];
            member = Some(m);
            let count = counts[m as usize] + 1;
            if count >= quotas.min {
                under_min.remove(index);
                if count < quotas.max && quotas.over < quotas.expected_over {
                    at_min.push(m);
                }
            } else {
                index += 1;
            }
            next_index = if under_min.is_empty() {
                0
            } else {
                index % under_min.len()
            };
        } else if !at_min.is_empty() {
            if let Some(first) = racks.next(partition, at_min, 0) {
                let m = at_min[first];
                member = Some(m);
                if counts[m as usize] + 1 == quotas.max {
                    at_min.remove(first);
                    quotas.over += 1;
                    if quotas.over == quotas.expected_over {
                        at_min.clear();
                    }
                }
            }
        }
        match member {
            Some(m) => {
                counts[m as usize] += 1;
                placed.push(i64::from(m));
            }
            None => placed.push(-1),
        }
    }
    placed
}
