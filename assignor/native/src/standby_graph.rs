//! The KIP-925 standby graph's arrays (`streams/rack/standby_flow.py` states the model): the
//! replica groups and where each may go, and the compact graph through (tag class, rack) hubs,
//! arc for arc in the order the solver's tie-breaks depend on. Built here in one pass over the
//! replicas rather than some fifteen whole-array steps (issue 24: about 2.5 ms a solve at
//! 10,000 standbys, twice a call).

/// A column of native-endian int64 values (numpy's `tobytes()`), read in place.
#[derive(Clone, Copy)]
pub(crate) struct Ints<'a>(&'a [u8]);

impl<'a> Ints<'a> {
    /// `None` unless `raw` is whole values.
    pub(crate) fn of(raw: &'a [u8]) -> Option<Self> {
        raw.len().is_multiple_of(8).then_some(Ints(raw))
    }

    pub(crate) fn len(&self) -> usize {
        self.0.len() / 8
    }

    pub(crate) fn at(&self, i: usize) -> i64 {
        i64::from_ne_bytes(self.0[8 * i..8 * i + 8].try_into().expect("8 bytes"))
    }

    pub(crate) fn iter(&self) -> impl Iterator<Item = i64> + 'a {
        self.0
            .chunks_exact(8)
            .map(|c| i64::from_ne_bytes(c.try_into().expect("8 bytes")))
    }
}

/// A standby problem as flat columns (`StandbyProblem`'s fields; `None`: the field's default).
pub(crate) struct Problem<'a> {
    pub client_rack: Ints<'a>,
    pub client_class: Ints<'a>,
    /// `classes x width` tag value codes, row by row (0: unset).
    pub class_values: Ints<'a>,
    pub classes: usize,
    pub width: usize,
    pub rep_task: Ints<'a>,
    pub rep_client: Ints<'a>,
    pub active_client: Ints<'a>,
    /// `tasks x racks`, row by row.
    pub misses: Ints<'a>,
    pub racks: usize,
    pub traffic_cost: i64,
    pub non_overlap_cost: i64,
    pub anchored: Option<&'a [u8]>,
    pub fixed: Option<&'a [u8]>,
    pub may_lose: Ints<'a>,
    pub may_gain: Ints<'a>,
    pub loose: Option<&'a [u8]>,
}

impl Problem<'_> {
    /// Whether the columns fit together: every index within its table.
    pub(crate) fn consistent(&self) -> bool {
        let (c_n, t_n, n) = (
            self.client_rack.len(),
            self.active_client.len(),
            self.rep_task.len(),
        );
        let q_n = self.classes;
        let in_range =
            |v: &Ints, lo: i64, hi: usize| v.iter().all(|x| x >= lo && (x as i128) < hi as i128);
        self.client_class.len() == c_n
            && self.class_values.len() == q_n * self.width
            && self.rep_client.len() == n
            && self.misses.len() == t_n * self.racks
            && self.may_lose.len() == c_n
            && self.may_gain.len() == c_n
            && self.anchored.is_none_or(|a| a.len() == n)
            && self.fixed.is_none_or(|a| a.len() == n)
            && self.loose.is_none_or(|a| a.len() == t_n)
            && in_range(&self.client_rack, 0, self.racks)
            && in_range(&self.client_class, 0, q_n)
            && in_range(&self.rep_task, 0, t_n)
            && in_range(&self.rep_client, 0, c_n)
            && in_range(&self.active_client, -1, c_n)
    }
}

/// Replicas that may go to the same places (`_Groups`): each replica's group, each group's
/// task and size, and `allowed[g * classes + q]`: group `g` may go to tag class `q`.
pub(crate) struct Groups {
    pub of_replica: Vec<i64>,
    pub task: Vec<i64>,
    pub supply: Vec<i64>,
    pub allowed: Vec<bool>,
}

/// Distinct set values among two replicas' tag codes (code 0 is "unset").
fn distinct(a: i64, b: i64) -> i64 {
    i64::from(a != 0) + i64::from(b != 0) - i64::from(a == b && a != 0)
}

/// A task's single standby is a group of its own; several are grouped by tag class, or all
/// together if the task is loose; a fixed replica is a group of its own that may go nowhere
/// but where it is. Groups are numbered by their key ascending (fixed ones first, the last
/// replica first), as `np.unique` numbered them.
pub(crate) fn groups(p: &Problem) -> Groups {
    let (n, q_n, w) = (p.rep_task.len(), p.classes, p.width);
    let mut per_task = vec![0u32; p.active_client.len()];
    for t in p.rep_task.iter() {
        per_task[t as usize] += 1;
    }
    let fixed = |i: usize| p.fixed.is_some_and(|f| f[i] != 0);
    // 0: single, 1: loose, 2: by tag class (a fixed replica is keyed apart, whatever it is)
    let kind = |i: usize| {
        let t = p.rep_task.at(i) as usize;
        if per_task[t] == 1 && p.active_client.at(t) >= 0 {
            0
        } else if p.loose.is_some_and(|l| l[t] != 0) && !fixed(i) {
            1
        } else {
            2
        }
    };
    let key = |i: usize| {
        if fixed(i) {
            return -1 - i as i64;
        }
        let class = match kind(i) {
            2 => p.client_class.at(p.rep_client.at(i) as usize) + 1,
            _ => 0,
        };
        p.rep_task.at(i) * (q_n as i64 + 1) + class
    };
    let keys: Vec<i64> = (0..n).map(key).collect();
    // replicas by key, ties by position (a stable sort: the replicas come nearly in key order),
    // so each group's first replica leads its run
    let mut order: Vec<u32> = (0..n as u32).collect();
    order.sort_by_key(|&i| keys[i as usize]);
    let mut of_replica = vec![0i64; n];
    let mut first: Vec<usize> = Vec::new();
    let mut supply: Vec<i64> = Vec::new();
    let mut last = None;
    for &i in &order {
        let i = i as usize;
        if last != Some(keys[i]) {
            first.push(i);
            supply.push(0);
            last = Some(keys[i]);
        }
        of_replica[i] = first.len() as i64 - 1;
        *supply.last_mut().expect("a group") += 1;
    }
    let class_values: Vec<i64> = p.class_values.iter().collect();
    let values = |q: usize| &class_values[q * w..(q + 1) * w];
    let mut allowed = vec![false; first.len() * q_n];
    let mut had = vec![0i64; w];
    for (g, &i) in first.iter().enumerate() {
        let row = &mut allowed[g * q_n..(g + 1) * q_n];
        let own = p.client_class.at(p.rep_client.at(i) as usize) as usize;
        if fixed(i) {
            continue; // a fixed group goes nowhere but where it is (its own stay arc)
        }
        match kind(i) {
            1 => row.fill(true),
            0 => {
                // a single standby keeps every tag key's distinct values with its active
                let active = p.active_client.at(p.rep_task.at(i) as usize) as usize;
                let a_vals = values(p.client_class.at(active) as usize);
                for (k, h) in had.iter_mut().enumerate() {
                    *h = distinct(a_vals[k], values(own)[k]);
                }
                for (q, cell) in row.iter_mut().enumerate() {
                    *cell = (0..w).all(|k| distinct(a_vals[k], values(q)[k]) >= had[k]);
                }
            }
            _ => row[own] = true,
        }
    }
    let task = first.iter().map(|&i| p.rep_task.at(i)).collect();
    Groups {
        of_replica,
        task,
        supply,
        allowed,
    }
}

/// What the compact graph is built from (`solve_standby_compact`'s nodes: groups, (class,
/// rack) hubs, clients, the bank): the groups, the hubs' keys (`class * racks + rack`,
/// ascending), each client's hub, each hub's size, each client's standby count and the
/// group-to-hub arcs' number.
pub(crate) struct Plan {
    groups: Groups,
    hubs: Vec<i64>,
    client_hub: Vec<i64>,
    hub_size: Vec<i64>,
    counts: Vec<i64>,
    act_hub: Vec<i64>,
    pub moves: usize,
}

impl Plan {
    pub(crate) fn of(p: &Problem) -> Plan {
        let groups = groups(p);
        let (c_n, r_n) = (p.client_rack.len() as i64, p.racks as i64);
        let hub_key = |c: usize| p.client_class.at(c) * r_n + p.client_rack.at(c);
        let mut hubs: Vec<i64> = (0..c_n as usize).map(hub_key).collect();
        hubs.sort_unstable();
        hubs.dedup();
        let client_hub: Vec<i64> = (0..c_n as usize)
            .map(|c| hubs.binary_search(&hub_key(c)).expect("a hub") as i64)
            .collect();
        let mut hub_size = vec![0i64; hubs.len()];
        for &h in &client_hub {
            hub_size[h as usize] += 1;
        }
        let mut counts = vec![0i64; c_n as usize];
        for c in p.rep_client.iter() {
            counts[c as usize] += 1;
        }
        let act_hub = groups
            .task
            .iter()
            .map(|&t| match p.active_client.at(t as usize) {
                a if a >= 0 => client_hub[a as usize],
                _ => -1,
            })
            .collect();
        let mut plan = Plan {
            groups,
            hubs,
            client_hub,
            hub_size,
            counts,
            act_hub,
            moves: 0,
        };
        plan.moves = (0..plan.groups.task.len())
            .map(|g| plan.move_arcs(p, g).count())
            .sum();
        plan
    }

    /// Group `g`'s arcs to hubs: (hub, capacity), hubs ascending. A group may use a hub of a
    /// class it may go to, up to its size and the hub's clients bar its task's active.
    fn move_arcs<'a>(
        &'a self,
        p: &'a Problem,
        g: usize,
    ) -> impl Iterator<Item = (usize, i64)> + 'a {
        let (q_n, r_n) = (p.classes, p.racks as i64);
        let allowed = &self.groups.allowed[g * q_n..(g + 1) * q_n];
        self.hubs.iter().enumerate().filter_map(move |(h, &key)| {
            let own = i64::from(self.act_hub[g] == h as i64);
            let cap = self.groups.supply[g].min(self.hub_size[h] - own);
            (allowed[(key / r_n) as usize] && cap > 0).then_some((h, cap))
        })
    }

    /// Arcs: each replica staying, each group to hub, each hub to client, each client to the
    /// bank.
    pub(crate) fn arcs(&self, p: &Problem) -> usize {
        p.rep_task.len() + self.moves + 2 * p.client_rack.len()
    }

    pub(crate) fn nodes(&self, p: &Problem) -> usize {
        self.groups.task.len() + self.hubs.len() + p.client_rack.len() + 1
    }

    /// `tails | heads | capacities | unit costs` (each `arcs()` long) `| supplies` (`nodes()`)
    /// `| each group's task`, as native-endian int64 bytes into `out` (exactly that long).
    pub(crate) fn write(&self, p: &Problem, out: &mut [u8]) {
        let (n, c_n, r_n) = (p.rep_task.len(), p.client_rack.len(), p.racks);
        let (a_n, g_n) = (self.arcs(p), self.groups.task.len());
        let (cols, rest) = out.split_at_mut(8 * 4 * a_n);
        let (tails, rest4) = cols.split_at_mut(8 * a_n);
        let (heads, rest4) = rest4.split_at_mut(8 * a_n);
        let (caps, costs) = rest4.split_at_mut(8 * a_n);
        let (supplies, group_task) = rest.split_at_mut(8 * self.nodes(p));
        let h0 = g_n as i64;
        let c0 = h0 + self.hubs.len() as i64;
        let bank = c0 + c_n as i64;
        let scale = n as i64 + 1;
        let (traffic, overlap) = (p.traffic_cost, p.non_overlap_cost);
        let miss = |t: i64, r: i64| p.misses.at(t as usize * r_n + r as usize);
        let mut a = 0;
        let mut arc = |tail: i64, head: i64, cap: i64, cost: i64| {
            for (col, v) in [
                (&mut *tails, tail),
                (&mut *heads, head),
                (&mut *caps, cap),
                (&mut *costs, cost),
            ] {
                put(col, a, v);
            }
            a += 1;
        };
        // An unanchored replica pays non_overlap_cost whether it stays or moves (see the
        // Python); moving costs one more than staying, so staying wins ties.
        for i in 0..n {
            let (t, c) = (p.rep_task.at(i), p.rep_client.at(i));
            let unanchored = p.anchored.is_some_and(|an| an[i] == 0);
            let cost = traffic
                .wrapping_mul(miss(t, p.client_rack.at(c as usize)))
                .wrapping_add(overlap.wrapping_mul(i64::from(unanchored)))
                .wrapping_mul(scale);
            arc(self.groups.of_replica[i], c0 + c, 1, cost);
        }
        for (g, &t) in self.groups.task.iter().enumerate() {
            for (h, cap) in self.move_arcs(p, g) {
                let cost = traffic
                    .wrapping_mul(miss(t, self.hubs[h] % r_n as i64))
                    .wrapping_add(overlap)
                    .wrapping_mul(scale)
                    .wrapping_add(1);
                arc(g as i64, h0 + h as i64, cap, cost);
            }
        }
        for c in 0..c_n {
            let gain = self.counts[c] + p.may_gain.at(c);
            arc(h0 + self.client_hub[c], c0 + c as i64, gain, 0);
        }
        for c in 0..c_n {
            arc(c0 + c as i64, bank, p.may_lose.at(c) + p.may_gain.at(c), 0);
        }
        for h in 0..self.hubs.len() {
            put(supplies, h0 as usize + h, 0);
        }
        for (g, &supply) in self.groups.supply.iter().enumerate() {
            put(supplies, g, supply);
        }
        for c in 0..c_n {
            put(
                supplies,
                c0 as usize + c,
                -(self.counts[c] - p.may_lose.at(c)),
            );
        }
        put(supplies, bank as usize, -p.may_lose.iter().sum::<i64>());
        for (g, &t) in self.groups.task.iter().enumerate() {
            put(group_task, g, t);
        }
    }

    pub(crate) fn len(&self, p: &Problem) -> usize {
        4 * self.arcs(p) + self.nodes(p) + self.groups.task.len()
    }
}

/// Value `i` of an int64 column held as bytes.
fn put(col: &mut [u8], i: usize, v: i64) {
    col[8 * i..8 * i + 8].copy_from_slice(&v.to_ne_bytes());
}

/// Per task and tag key (`tasks x width`, row by row, int64 bytes into `out`), how many
/// distinct set values (code 0 is unset) the task's replicas `(tasks[i], clients[i])` and its
/// active have between them: the replicas read by task (as given when sorted, as the solves
/// and the problems hold them), each key's few values sorted and counted; no table as large
/// as the tasks but the answer.
pub(crate) fn diversity(p: &Problem, tasks: Ints, clients: Ints, out: &mut [u8]) {
    let (t_n, w, n) = (p.active_client.len(), p.width, tasks.len());
    let class_values: Vec<i64> = p.class_values.iter().collect();
    let sorted = (1..n).all(|i| tasks.at(i - 1) <= tasks.at(i));
    let mut order: Vec<u32> = Vec::new();
    if !sorted {
        order.extend(0..n as u32);
        order.sort_by_key(|&i| tasks.at(i as usize));
    }
    let at = |k: usize| if sorted { k } else { order[k] as usize };
    let (mut k, mut holders, mut seen) = (0, Vec::new(), Vec::new());
    for t in 0..t_n {
        holders.clear();
        while k < n && tasks.at(at(k)) == t as i64 {
            holders.push(p.client_class.at(clients.at(at(k)) as usize) as usize);
            k += 1;
        }
        let active = p.active_client.at(t);
        if active >= 0 {
            holders.push(p.client_class.at(active as usize) as usize);
        }
        for key in 0..w {
            seen.clear();
            seen.extend(
                holders
                    .iter()
                    .map(|&q| class_values[q * w + key])
                    .filter(|&v| v != 0),
            );
            seen.sort_unstable();
            seen.dedup();
            put(out, t * w + key, seen.len() as i64);
        }
    }
}
