//! Kafka Streams' functions: standby placement (`standby.rs`), and the sorted task lists its
//! assignors hand out per client, read from shared objects in one call.

use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyTuple};

use crate::{general, ids, ne_bytes, spans, standby, standby_graph};

/// Standby placement; see `streams.standby.place_standby_indexed` for the arguments. The
/// actives come as `(task position, rank)` pairs, two int64 columns (numpy's `tobytes()`): the
/// high-availability assignor holds them as a column, not as a set per client (issue 24).
/// Returns (per rank the task positions it received, in order; with tags the `(task, rank)`
/// replicas placed least loaded; the tasks left short).
#[pyfunction]
#[pyo3(signature = (
    replicas, tasks, active_tasks, active_ranks, capacities, counts, group, distinct, values,
    sizes, tag_aware, checkpoint
))]
#[allow(clippy::too_many_arguments, clippy::type_complexity)]
pub(crate) fn standby_placement(
    py: Python<'_>,
    replicas: u32,
    tasks: usize,
    active_tasks: &[u8],
    active_ranks: &[u8],
    capacities: Vec<u32>,
    counts: Vec<u32>,
    group: Vec<u32>,
    distinct: Vec<u32>,
    values: Vec<Vec<i32>>,
    sizes: Vec<u32>,
    tag_aware: bool,
    checkpoint: Py<PyAny>,
) -> PyResult<(Vec<Vec<u32>>, Vec<(u32, u32)>, Vec<u32>)> {
    let clients = capacities.len();
    let active_tasks = ids(active_tasks, "standby_placement")?;
    let active_ranks = ids(active_ranks, "standby_placement")?;
    let bad = active_tasks.len() != active_ranks.len()
        || counts.len() != clients
        || group.len() != clients
        || group.iter().any(|&g| g as usize >= sizes.len())
        || values.len() != sizes.len()
        || values.iter().any(|v| v.len() != distinct.len())
        || active_tasks.iter().any(|&t| t as usize >= tasks)
        || active_ranks.iter().any(|&c| c as usize >= clients);
    if bad {
        return Err(PyValueError::new_err(
            "standby_placement: inconsistent input",
        ));
    }
    let mut holding: Vec<Vec<u32>> = vec![Vec::new(); tasks];
    for (&t, &rank) in active_tasks.iter().zip(&active_ranks) {
        holding[t as usize].push(rank);
    }
    for held in holding.iter_mut().filter(|h| h.len() > 1) {
        held.sort_unstable(); // holders by rank, whatever the pairs' order
    }
    let group = if tag_aware { group } else { vec![0; clients] }; // no tags: one group
    let input = standby::Input {
        replicas,
        holding,
        capacities,
        counts,
        group,
        tags: tag_aware.then_some(standby::Tags {
            distinct,
            values,
            sizes,
        }),
    };
    let out = py.detach(|| standby::place(input, &mut general::Checkpoint::new(checkpoint)))?;
    Ok((out.placed, out.untagged, out.short))
}

/// Per collection of `held` (any iterable of positions in `items`), the items at its positions
/// in ascending order, as a tuple: shared objects (task ids, the layout's ints) in sorted lists
/// for every client at once (a `sorted` and an `itemgetter` per client in Python; issue 24).
#[pyfunction]
pub(crate) fn picked_sorted<'py>(
    py: Python<'py>,
    items: &Bound<'py, PyTuple>,
    held: Vec<Bound<'py, PyAny>>,
) -> PyResult<Vec<Bound<'py, PyTuple>>> {
    let n = items.len();
    let mut positions: Vec<usize> = Vec::new();
    let mut out = Vec::with_capacity(held.len());
    for h in &held {
        positions.clear();
        for p in h.try_iter()? {
            let p: usize = p?.extract()?;
            if p >= n {
                return Err(PyValueError::new_err(format!(
                    "picked_sorted: position {p} past {n} items"
                )));
            }
            positions.push(p);
        }
        positions.sort_unstable();
        out.push(picked_tuple(py, items, &positions)?);
    }
    Ok(out)
}

/// `items` at `positions` (each checked by the caller), as a tuple of the same objects.
pub(crate) fn picked_tuple<'py>(
    py: Python<'py>,
    items: &Bound<'py, PyTuple>,
    positions: &[usize],
) -> PyResult<Bound<'py, PyTuple>> {
    let picked = positions
        .iter()
        .map(|&p| items.get_item(p))
        .collect::<PyResult<Vec<_>>>()?;
    PyTuple::new(py, picked)
}

/// Per run `positions[ends[i-1]:ends[i]]` (native-endian int64 bytes, numpy's `tobytes()`),
/// the items at those positions in the order given, as a tuple: a client's task list read
/// straight from the high-availability assignor's integer columns, every client in one call
/// (issue 24: a slice and an `itemgetter` per client in Python).
#[pyfunction]
pub(crate) fn picked_runs<'py>(
    py: Python<'py>,
    items: &Bound<'py, PyTuple>,
    positions: &[u8],
    ends: Vec<u32>,
) -> PyResult<Vec<Bound<'py, PyTuple>>> {
    let n = items.len();
    let positions = ids(positions, "picked_runs")?;
    spans(&ends, positions.len(), "picked_runs")?;
    if let Some(&p) = positions.iter().find(|&&p| p as usize >= n) {
        return Err(PyValueError::new_err(format!(
            "picked_runs: position {p} past {n} items"
        )));
    }
    let mut out = Vec::with_capacity(ends.len());
    let mut run: Vec<usize> = Vec::new();
    let mut start = 0;
    for &end in &ends {
        run.clear();
        run.extend(positions[start..end as usize].iter().map(|&p| p as usize));
        out.push(picked_tuple(py, items, &run)?);
        start = end as usize;
    }
    Ok(out)
}

/// A `StandbyProblem` as Python hands it over (`standby_flow._native_input`): the columns
/// client_rack, client_class, class_values, rep_task, rep_client, active_client, misses,
/// may_lose and may_gain as int64 bytes; (classes, tag keys, racks); (traffic_cost,
/// non_overlap_cost); the flags anchored, fixed and loose as numpy `bool_` bytes or `None`.
#[derive(FromPyObject)]
pub(crate) struct StandbyInput<'py>(
    Vec<Bound<'py, PyBytes>>,
    (usize, usize, usize),
    (i64, i64),
    Option<Bound<'py, PyBytes>>,
    Option<Bound<'py, PyBytes>>,
    Option<Bound<'py, PyBytes>>,
);

impl StandbyInput<'_> {
    /// The problem, read in place from the bytes, checked to fit together.
    fn problem(&self, what: &str) -> PyResult<standby_graph::Problem<'_>> {
        let bad = || PyValueError::new_err(format!("{what}: inconsistent input"));
        let ints = self
            .0
            .iter()
            .map(|c| standby_graph::Ints::of(c.as_bytes()))
            .collect::<Option<Vec<_>>>()
            .ok_or_else(bad)?;
        let [client_rack, client_class, class_values, rep_task, rep_client, active_client, misses, may_lose, may_gain] =
            <[standby_graph::Ints; 9]>::try_from(ints).map_err(|_| bad())?;
        let (classes, width, racks) = self.1;
        let [anchored, fixed, loose] =
            [&self.3, &self.4, &self.5].map(|f| f.as_ref().map(|a| a.as_bytes()));
        let problem = standby_graph::Problem {
            client_rack,
            client_class,
            class_values,
            classes,
            width,
            rep_task,
            rep_client,
            active_client,
            misses,
            racks,
            traffic_cost: self.2 .0,
            non_overlap_cost: self.2 .1,
            anchored,
            fixed,
            may_lose,
            may_gain,
            loose,
        };
        if !problem.consistent() {
            return Err(bad());
        }
        Ok(problem)
    }
}

/// The standby problem's replica groups (`standby_flow._groups`; the dense graph's input):
/// each replica's group, each group's task and size (int64 bytes), and which tag classes each
/// group may go to (`groups x classes` bytes of 0 or 1).
#[pyfunction]
#[allow(clippy::type_complexity)]
pub(crate) fn standby_groups(
    py: Python<'_>,
    problem: StandbyInput<'_>,
) -> PyResult<(Py<PyBytes>, Py<PyBytes>, Py<PyBytes>, Py<PyBytes>)> {
    let p = problem.problem("standby_groups")?;
    let g = py.detach(|| standby_graph::groups(&p));
    let allowed: Vec<u8> = g.allowed.iter().map(|&a| u8::from(a)).collect();
    Ok((
        ne_bytes(py, &g.of_replica, i64::to_ne_bytes),
        ne_bytes(py, &g.task, i64::to_ne_bytes),
        ne_bytes(py, &g.supply, i64::to_ne_bytes),
        PyBytes::new(py, &allowed).unbind(),
    ))
}

/// The standby problem's compact graph (`standby_flow.solve_standby_compact`'s): (nodes,
/// group-to-hub arcs, one int64 buffer: the arcs' tails, heads, capacities and unit costs, the
/// nodes' supplies, each group's task). One buffer, written in place, not a column each
/// (every fresh allocation's pages the kernel clears: at 10,000 standbys that was most of the
/// time), and the input read where it lies.
#[pyfunction]
pub(crate) fn standby_compact_graph<'py>(
    py: Python<'py>,
    problem: StandbyInput<'py>,
) -> PyResult<(usize, usize, Bound<'py, PyBytes>)> {
    let p = problem.problem("standby_compact_graph")?;
    let plan = py.detach(|| standby_graph::Plan::of(&p));
    let raw = PyBytes::new_with(py, plan.len(&p) * 8, |buf| {
        py.detach(|| plan.write(&p, buf));
        Ok(())
    })?;
    Ok((plan.nodes(&p), plan.moves, raw))
}

/// Per task and tag key of the standby problem, the distinct set tag values among the replicas
/// `(tasks[i], clients[i])` (int64 bytes each) and the task's active (`problems.diversity`):
/// `tasks x tag keys` int64 bytes, row by row.
#[pyfunction]
pub(crate) fn standby_diversity<'py>(
    py: Python<'py>,
    problem: StandbyInput<'py>,
    tasks: &[u8],
    clients: &[u8],
) -> PyResult<Bound<'py, PyBytes>> {
    let p = problem.problem("standby_diversity")?;
    let bad = || PyValueError::new_err("standby_diversity: replicas outside the problem");
    let (tasks, clients) = (
        standby_graph::Ints::of(tasks).ok_or_else(bad)?,
        standby_graph::Ints::of(clients).ok_or_else(bad)?,
    );
    let (t_n, c_n) = (p.active_client.len() as i64, p.client_rack.len() as i64);
    if tasks.len() != clients.len()
        || tasks.iter().any(|t| !(0..t_n).contains(&t))
        || clients.iter().any(|c| !(0..c_n).contains(&c))
    {
        return Err(bad());
    }
    let size = p.active_client.len() * p.width * 8;
    PyBytes::new_with(py, size, |out| {
        py.detach(|| standby_graph::diversity(&p, tasks, clients, out));
        Ok(())
    })
}

/// The compact standby graph's flows read back (`standby_flow.solve_standby_compact`): from the
/// problem, the graph `standby_compact_graph` gave (nodes, moves, its buffer) and the solver's
/// flow on each arc (int64 bytes), the standbys sorted by (task, client) as one int64 buffer,
/// the tasks then the clients; `None` when a hub's inflow cannot be split over its clients.
#[pyfunction]
pub(crate) fn standby_split<'py>(
    py: Python<'py>,
    problem: StandbyInput<'py>,
    graph: (usize, usize, &[u8]),
    flows: &[u8],
) -> PyResult<Option<Bound<'py, PyBytes>>> {
    let p = problem.problem("standby_split")?;
    let bad = || PyValueError::new_err("standby_split: the flows are not the problem's graph's");
    let solved = crate::standby_split::Solved {
        graph: standby_graph::Ints::of(graph.2).ok_or_else(bad)?,
        nodes: graph.0,
        moves: graph.1,
        flows: standby_graph::Ints::of(flows).ok_or_else(bad)?,
    };
    if !solved.consistent(&p) {
        return Err(bad());
    }
    let Some(pairs) = py.detach(|| crate::standby_split::split(&p, &solved)) else {
        return Ok(None);
    };
    let m = pairs.len();
    let raw = PyBytes::new_with(py, 16 * m, |out| {
        let (tasks, clients) = out.split_at_mut(8 * m);
        for (i, (t, c)) in pairs.into_iter().enumerate() {
            tasks[8 * i..8 * i + 8].copy_from_slice(&t.to_ne_bytes());
            clients[8 * i..8 * i + 8].copy_from_slice(&c.to_ne_bytes());
        }
        Ok(())
    })?;
    Ok(Some(raw))
}
