//! Kafka Streams' thread distribution over numbers: each client's tasks spread over its
//! consumers, the whole group in one pass (`kassign.assignor.streams.threads`' docstring states
//! the rule; Kafka's `StreamsPartitionAssignor.assignTasksToThreads`). Tasks are rows of the
//! caller's sorted task ids, so row order is task order; a client's consumers are numbered in
//! member-id order.

use std::collections::VecDeque;
use std::ops::Range;

/// A row's kind: stateless, stateful, or a task the topology lacks (only in a library caller's
/// assignment: spread with the stateless actives, never kept from before).
pub const STATELESS: u8 = 0;
pub const STATEFUL: u8 = 1;

/// What a consumer had before: a task's row, and for a stateful one the client's lag on it
/// (kept by least lag, then task), for a stateless active none (kept by task).
pub struct Had {
    pub consumer: u32,
    pub row: u32,
    pub lag: Option<i64>,
}

/// One client: its number of consumers and its lists as ranges of `Input::tasks` (in any
/// order, a task possibly twice) and of `Input::had`.
pub struct Client {
    pub consumers: usize,
    pub active: Range<usize>,
    pub standby: Range<usize>,
    pub had: Range<usize>,
}

pub struct Input<'a> {
    /// Per row its kind (`STATELESS`, `STATEFUL`, or anything else: not in the topology).
    pub kinds: &'a [u8],
    pub tasks: Vec<u32>,
    pub had: Vec<Had>,
    pub clients: Vec<Client>,
}

/// Every consumer's tasks, client after client, each client's consumers in order: its active
/// and standby rows, sorted, as ranges of `rows`.
pub struct Output {
    pub rows: Vec<u32>,
    pub lists: Vec<[Range<usize>; 2]>,
}

/// Per row: the run it is open in, and the run it was skipped by a previous owner in (and by
/// whom); run numbers stamp them, so the columns are cleared once a call, not once a run.
struct Scratch {
    open: Vec<u32>,
    skipped: Vec<u32>,
    owner: Vec<u32>,
    run: u32,
}

pub fn distribute(input: &Input<'_>) -> Output {
    let rows = input.kinds.len();
    let mut scratch = Scratch {
        open: vec![0; rows],
        skipped: vec![0; rows],
        owner: vec![0; rows],
        run: 0,
    };
    let mut out = Output {
        rows: Vec::with_capacity(input.tasks.len()),
        lists: Vec::new(),
    };
    for client in &input.clients {
        distribute_client(input, client, &mut scratch, &mut out);
    }
    out
}

fn distribute_client(input: &Input<'_>, client: &Client, scratch: &mut Scratch, out: &mut Output) {
    let k = client.consumers;
    if k == 1 {
        // a lone consumer gets every task, whatever it had: each run's floor is all of them
        let active = sorted_once(&mut out.rows, &input.tasks[client.active.clone()]);
        let standby = sorted_once(&mut out.rows, &input.tasks[client.standby.clone()]);
        out.lists.push([active, standby]);
        return;
    }
    let (stateful_before, stateless_before) = previous(&input.had[client.had.clone()], k);
    let given = &input.tasks[client.active.clone()];
    let stateful: Vec<u32> = given
        .iter()
        .copied()
        .filter(|&t| input.kinds[t as usize] == STATEFUL)
        .collect();
    let stateless: Vec<u32> = given
        .iter()
        .copied()
        .filter(|&t| input.kinds[t as usize] != STATEFUL)
        .collect();
    let standby = &input.tasks[client.standby.clone()];
    let mut counts = vec![0usize; k];
    let mut active = spread(&stateful, &mut counts, &stateful_before, scratch);
    let standby = spread(standby, &mut counts, &stateful_before, scratch);
    let stateless = spread(&stateless, &mut counts, &stateless_before, scratch);
    for ((mut mine, extra), mut standby) in active.drain(..).zip(stateless).zip(standby) {
        mine.extend(extra);
        mine.sort_unstable();
        standby.sort_unstable();
        let start = out.rows.len();
        out.rows.extend(mine);
        let middle = out.rows.len();
        out.rows.extend(standby);
        out.lists.push([start..middle, middle..out.rows.len()]);
    }
}

/// `tasks` appended to `rows` sorted, each once; where they went.
fn sorted_once(rows: &mut Vec<u32>, tasks: &[u32]) -> Range<usize> {
    let from = rows.len();
    rows.extend_from_slice(tasks);
    rows[from..].sort_unstable();
    let mut end = from;
    for i in from..rows.len() {
        if end == from || rows[i] != rows[end - 1] {
            rows[end] = rows[i];
            end += 1;
        }
    }
    rows.truncate(end);
    from..end
}

/// Per consumer: the stateful tasks it had by (lag, task), the stateless actives by task.
fn previous(had: &[Had], k: usize) -> (Vec<Vec<u32>>, Vec<Vec<u32>>) {
    let mut by_lag: Vec<Vec<(i64, u32)>> = vec![Vec::new(); k];
    let mut by_task: Vec<Vec<u32>> = vec![Vec::new(); k];
    for h in had {
        match h.lag {
            Some(lag) => by_lag[h.consumer as usize].push((lag, h.row)),
            None => by_task[h.consumer as usize].push(h.row),
        }
    }
    let by_lag = by_lag
        .into_iter()
        .map(|mut mine| {
            mine.sort_unstable();
            let mut rows: Vec<u32> = mine.into_iter().map(|(_, t)| t).collect();
            rows.dedup(); // had twice (as active and as state): one lag, so side by side
            rows
        })
        .collect();
    for mine in &mut by_task {
        mine.sort_unstable();
        mine.dedup();
    }
    (by_lag, by_task)
}

/// One run of the three-step spread; `counts` (each consumer's tasks of earlier runs) updated.
fn spread(
    tasks: &[u32],
    counts: &mut [usize],
    previous: &[Vec<u32>],
    scratch: &mut Scratch,
) -> Vec<Vec<u32>> {
    let k = counts.len();
    let mut plan: Vec<Vec<u32>> = vec![Vec::new(); k];
    if tasks.is_empty() {
        return plan;
    }
    // a task listed twice counts twice here, as in Kafka's sum over the list
    let floor = (counts.iter().sum::<usize>() + tasks.len()) / k;
    scratch.run += 1;
    let run = scratch.run;
    for &t in tasks {
        scratch.open[t as usize] = run;
    }
    let mut skipped: Vec<u32> = Vec::new();
    let mut to_fill: Vec<usize> = Vec::new();
    for (m, before) in previous.iter().enumerate() {
        let target = floor.saturating_sub(counts[m]);
        for &t in before {
            let i = t as usize;
            if scratch.open[i] != run {
                continue;
            }
            if plan[m].len() < target {
                plan[m].push(t);
                scratch.open[i] = 0;
            } else {
                if scratch.skipped[i] != run {
                    scratch.skipped[i] = run;
                    skipped.push(t);
                }
                scratch.owner[i] = m as u32; // a later consumer overwrites, as Kafka's does
            }
        }
    }
    for (m, mine) in plan.iter().enumerate() {
        if mine.len() + counts[m] < floor {
            to_fill.push(m);
        }
    }
    let mut ordered: Vec<u32> = tasks
        .iter()
        .copied()
        .filter(|&t| scratch.open[t as usize] == run)
        .collect();
    ordered.sort_unstable();
    ordered.dedup();
    let dealt = deal_up_to_floor(&mut plan, counts, floor, &to_fill, &ordered);
    if dealt < ordered.len() {
        for &t in &ordered[..dealt] {
            scratch.open[t as usize] = 0; // open now means: among the rest
        }
        deal_the_rest(
            &mut plan,
            counts,
            floor,
            skipped,
            &ordered[dealt..],
            scratch,
        );
    }
    for (count, mine) in counts.iter_mut().zip(&plan) {
        *count += mine.len();
    }
    plan
}

/// The open tasks, in task order, round-robin over the consumers still under the floor (in
/// `to_fill`'s order, each leaving the queue at the floor); how many of `ordered` were dealt.
fn deal_up_to_floor(
    plan: &mut [Vec<u32>],
    counts: &[usize],
    floor: usize,
    to_fill: &[usize],
    ordered: &[u32],
) -> usize {
    let mut queue: VecDeque<usize> = to_fill.iter().copied().collect();
    let mut dealt = 0;
    while dealt < ordered.len() {
        let Some(m) = queue.pop_front() else { break };
        plan[m].push(ordered[dealt]);
        dealt += 1;
        if plan[m].len() + counts[m] < floor {
            queue.push_back(m);
        }
    }
    dealt
}

/// One more task each for consumers at the floor: a task's previous owner (the last to skip
/// it) first, then the rest in task order to the first consumers at the floor. `rest` (sorted)
/// is what is open in this run (`scratch.open`).
fn deal_the_rest(
    plan: &mut [Vec<u32>],
    counts: &[usize],
    floor: usize,
    mut skipped: Vec<u32>,
    rest: &[u32],
    scratch: &mut Scratch,
) {
    let k = plan.len();
    let run = scratch.run;
    let mut at_floor: Vec<usize> = (0..k)
        .filter(|&m| plan[m].len() + counts[m] == floor)
        .collect();
    skipped.sort_unstable();
    for t in skipped {
        let i = t as usize;
        if scratch.open[i] != run {
            continue; // kept by a later consumer, or dealt below the floor
        }
        let m = scratch.owner[i] as usize;
        if let Some(at) = at_floor.iter().position(|&f| f == m) {
            plan[m].push(t);
            scratch.open[i] = 0;
            at_floor.remove(at);
        }
    }
    for &t in rest {
        if scratch.open[t as usize] != run {
            continue;
        }
        let m = if at_floor.is_empty() {
            // cannot happen with balanced earlier runs; stay total rather than fail
            (0..k)
                .min_by_key(|&m| (plan[m].len() + counts[m], m))
                .expect("a consumer")
        } else {
            at_floor.remove(0)
        };
        plan[m].push(t);
    }
}
