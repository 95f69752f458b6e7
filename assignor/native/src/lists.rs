//! Each member's partitions in the order they came (Python's lists), with removal in constant
//! time: a removed partition leaves a hole, skipped when read and squeezed out once holes
//! outnumber partitions (a member giving up thousands of partitions one by one).

const HOLE: u32 = u32::MAX;

#[derive(Clone)]
pub struct Lists {
    items: Vec<Vec<u32>>, // per member, partitions and holes
    count: Vec<u32>,      // per member, its partitions
    place: Vec<u32>,      // per partition, its index in its owner's items
}

impl Lists {
    pub fn new(members: usize, partitions: usize) -> Self {
        Lists {
            items: vec![Vec::new(); members],
            count: vec![0; members],
            place: vec![HOLE; partitions],
        }
    }

    pub fn len(&self, member: u32) -> u32 {
        self.count[member as usize]
    }

    pub fn members(&self) -> usize {
        self.items.len()
    }

    pub fn iter(&self, member: u32) -> impl Iterator<Item = u32> + '_ {
        self.items[member as usize]
            .iter()
            .copied()
            .filter(|&p| p != HOLE)
    }

    pub fn push(&mut self, member: u32, tp: u32) {
        let items = &mut self.items[member as usize];
        self.place[tp as usize] = items.len() as u32;
        items.push(tp);
        self.count[member as usize] += 1;
    }

    /// Remove `tp`, which `member` holds.
    pub fn remove(&mut self, member: u32, tp: u32) {
        let m = member as usize;
        self.items[m][self.place[tp as usize] as usize] = HOLE;
        self.count[m] -= 1;
        if self.items[m].len() > 2 * self.count[m] as usize + 16 {
            self.items[m].retain(|&p| p != HOLE);
            for (i, &p) in self.items[m].iter().enumerate() {
                self.place[p as usize] = i as u32;
            }
        }
    }

    /// Keep only the partitions `keep` accepts; returns whether any went.
    pub fn retain(&mut self, member: u32, mut keep: impl FnMut(u32) -> bool) -> bool {
        let m = member as usize;
        let before = self.items[m].len();
        let mut items = std::mem::take(&mut self.items[m]);
        items.retain(|&p| p != HOLE && keep(p));
        let dropped = items.len() != before;
        self.count[m] = items.len() as u32;
        for (i, &p) in items.iter().enumerate() {
            self.place[p as usize] = i as u32;
        }
        self.items[m] = items;
        dropped
    }
}
