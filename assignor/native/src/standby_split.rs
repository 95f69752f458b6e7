//! The KIP-925 compact standby graph's flows read back (`streams/rack/standby_flow.py` states
//! the model): each replica that moved into a (tag class, rack) hub given one of the hub's
//! clients that does not hold its task yet, and every standby listed by (task, client). Here in
//! one pass over the flows rather than a dozen whole-array steps and a Python loop for the rare
//! trades (issue 24: about 1 ms a solve at 10,000 standbys, twice a call).

use crate::standby_graph::{Ints, Problem};
use std::collections::HashMap;

/// The compact graph as `standby_graph::Plan::write` laid it out (arcs: each replica's stay,
/// the group-to-hub moves, each client's hub arc, each client's bank arc; then the nodes'
/// supplies, then each group's task) and the solver's flow on every arc.
pub(crate) struct Solved<'a> {
    pub graph: Ints<'a>,
    pub nodes: usize,
    pub moves: usize,
    pub flows: Ints<'a>,
}

impl Solved<'_> {
    fn arcs(&self, p: &Problem) -> usize {
        p.rep_task.len() + self.moves + 2 * p.client_rack.len()
    }

    /// Whether the buffer and the flows are the graph's of this problem, every index in range.
    pub(crate) fn consistent(&self, p: &Problem) -> bool {
        let (n_rep, c_n, arcs) = (p.rep_task.len(), p.client_rack.len(), self.arcs(p));
        if self.flows.len() != arcs || self.graph.len() < 4 * arcs + self.nodes {
            return false;
        }
        let groups = self.graph.len() - 4 * arcs - self.nodes;
        let hubs = self.nodes.saturating_sub(groups + c_n + 1);
        let node_in = |v: i64, lo: usize, n: usize| v >= lo as i64 && v < (lo + n) as i64;
        let t_n = p.active_client.len() as i64;
        // the pairs are sorted as packed keys: (task * clients + client) * 2 + 1 must fit
        if (t_n as u128) * (c_n as u128) >= 1 << 62 {
            return false;
        }
        (0..groups).all(|g| (0..t_n).contains(&self.graph.at(4 * arcs + self.nodes + g)))
            && (0..self.moves).all(|k| {
                node_in(self.graph.at(n_rep + k), 0, groups)
                    && node_in(self.graph.at(arcs + n_rep + k), groups, hubs)
            })
            && (0..c_n).all(|c| node_in(self.graph.at(n_rep + self.moves + c), groups, hubs))
            && (0..n_rep + self.moves + c_n).all(|k| self.flows.at(k) >= 0)
            && (n_rep..n_rep + self.moves)
                .try_fold(0i64, |sum, k| sum.checked_add(self.flows.at(k)))
                .is_some_and(|arriving| arriving <= n_rep as i64)
    }
}

/// The standbys after the solve, sorted by (task, client), or `None` when some hub's inflow
/// cannot be split over its clients (the caller then solves the dense graph).
///
/// Replicas in (hub, task) order, ties by arrival, take the hub's slots in client order; a
/// replica that landed where its task already is (its active, a kept replica, another arriving
/// one) trades places with the first replica of the same hub, in that order, for which the
/// trade is valid both ways.
pub(crate) fn split(p: &Problem, s: &Solved) -> Option<Vec<(i64, i64)>> {
    let (n_rep, c_n, arcs) = (p.rep_task.len(), p.client_rack.len(), s.arcs(p));
    let groups = s.graph.len() - 4 * arcs - s.nodes;
    let group_task = |g: i64| s.graph.at(4 * arcs + s.nodes + g as usize);
    let (mut tasks, mut hubs) = (Vec::new(), Vec::new());
    for k in 0..s.moves {
        let (g, h) = (s.graph.at(n_rep + k), s.graph.at(arcs + n_rep + k));
        for _ in 0..s.flows.at(n_rep + k) {
            tasks.push(group_task(g));
            hubs.push(h - groups as i64);
        }
    }
    let client_hub = |c: usize| s.graph.at(n_rep + s.moves + c) - groups as i64;
    let mut order: Vec<usize> = (0..tasks.len()).collect();
    order.sort_unstable_by_key(|&i| (hubs[i], tasks[i], i)); // ties by arrival, as a stable sort
    let mut by_client: Vec<usize> = (0..c_n).collect();
    by_client.sort_unstable_by_key(|&c| (client_hub(c), c));
    let slots = |c: usize| s.flows.at(n_rep + s.moves + c) as usize;
    let mut chosen = vec![0i64; tasks.len()];
    let mut next = order.iter();
    for &c in &by_client {
        for _ in 0..slots(c) {
            let &i = next.next()?;
            if hubs[i] != client_hub(c) {
                return None;
            }
            chosen[i] = c as i64;
        }
    }
    if next.next().is_some() {
        return None;
    }
    let kept: Vec<usize> = (0..n_rep).filter(|&i| s.flows.at(i) > 0).collect();
    let pair = |i: usize| (p.rep_task.at(i), p.rep_client.at(i));
    let sorted = sorted_pairs(&kept, pair, &tasks, &chosen, c_n);
    let clash = sorted.is_none()
        || tasks
            .iter()
            .zip(&chosen)
            .any(|(&t, &c)| p.active_client.at(t as usize) == c);
    if !clash {
        return sorted;
    }
    let mut held: HashMap<(i64, i64), i64> = HashMap::with_capacity(tasks.len() + 2 * n_rep);
    let taken = kept
        .iter()
        .map(|&i| pair(i))
        .chain((0..p.active_client.len()).filter_map(|t| {
            let a = p.active_client.at(t);
            (a >= 0).then_some((t as i64, a))
        }));
    for pair in taken.chain(tasks.iter().copied().zip(chosen.iter().copied())) {
        *held.entry(pair).or_default() += 1;
    }
    trade(&tasks, &hubs, &mut chosen, &order, &mut held)?;
    let mut pairs: Vec<(i64, i64)> = kept
        .iter()
        .map(|&i| pair(i))
        .chain(tasks.into_iter().zip(chosen))
        .collect();
    pairs.sort_unstable(); // equal pairs are equal values: any sort gives the same list
    Some(pairs)
}

/// The kept replicas and the arrivals `(tasks[i], chosen[i])` sorted by (task, client), or
/// `None` when an arrival shares its pair with a kept replica or another arrival. One sort of
/// packed keys (`(task * clients + client) * 2`, plus one for an arrival): equal pairs end up
/// side by side.
fn sorted_pairs(
    kept: &[usize],
    pair: impl Fn(usize) -> (i64, i64),
    tasks: &[i64],
    chosen: &[i64],
    c_n: usize,
) -> Option<Vec<(i64, i64)>> {
    let key = |(t, c): (i64, i64)| (t as u64 * c_n as u64 + c as u64) << 1;
    let mut keys: Vec<u64> = kept
        .iter()
        .map(|&i| key(pair(i)))
        .chain(tasks.iter().zip(chosen).map(|(&t, &c)| key((t, c)) | 1))
        .collect();
    keys.sort_unstable();
    let mut start = 0;
    for end in 1..=keys.len() {
        if end == keys.len() || keys[end] >> 1 != keys[start] >> 1 {
            let run = &keys[start..end];
            if run.len() > 1 && run.iter().any(|k| k & 1 == 1) {
                return None;
            }
            start = end;
        }
    }
    let unkey = |k: u64| ((k >> 1) / c_n as u64, (k >> 1) % c_n as u64);
    Some(
        keys.into_iter()
            .map(|k| {
                let (t, c) = unkey(k);
                (t as i64, c as i64)
            })
            .collect(),
    )
}

/// Clashes left by the slots resolved by pairwise trades within a hub (rarely needed);
/// `None` if some replica finds no valid trade.
fn trade(
    tasks: &[i64],
    hubs: &[i64],
    chosen: &mut [i64],
    order: &[usize],
    held: &mut HashMap<(i64, i64), i64>,
) -> Option<()> {
    let mut in_hub: HashMap<i64, Vec<usize>> = HashMap::new();
    for &i in order {
        in_hub.entry(hubs[i]).or_default().push(i);
    }
    let count = |held: &HashMap<(i64, i64), i64>, pair| held.get(&pair).copied().unwrap_or(0);
    for &i in order {
        let (t, c) = (tasks[i], chosen[i]);
        if count(held, (t, c)) <= 1 {
            continue;
        }
        let j = in_hub[&hubs[i]].iter().copied().find(|&j| {
            let (u, d) = (tasks[j], chosen[j]);
            d != c && u != t && count(held, (t, d)) == 0 && count(held, (u, c)) == 0
        })?;
        let (u, d) = (tasks[j], chosen[j]);
        for (pair, by) in [((t, c), -1), ((u, d), -1), ((t, d), 1), ((u, c), 1)] {
            *held.entry(pair).or_default() += by;
        }
        chosen[i] = d;
        chosen[j] = c;
    }
    Some(())
}
