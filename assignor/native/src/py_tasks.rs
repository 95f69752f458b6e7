//! The Streams room's request topology as a Python function (`tasks.rs`): every task of an
//! `AssignRequest` read from its bytes at once, checked, as the columns of a `TaskTable`.

use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyList, PyString, PyTuple};

use crate::ne_bytes;
use crate::tasks::{self, Check, Tasks, NONE};

/// One Python object per distinct string and number of the read (issue 16: a 100,000-task
/// topology repeats them), made when first asked for.
struct Objects<'py, 'a> {
    py: Python<'py>,
    tasks: &'a Tasks<'a>,
    strings: Vec<Option<Bound<'py, PyString>>>,
    numbers: std::collections::HashMap<i32, Bound<'py, PyAny>>,
}

impl<'py, 'a> Objects<'py, 'a> {
    fn string(&mut self, id: u32) -> Bound<'py, PyString> {
        let slot = &mut self.strings[id as usize];
        slot.get_or_insert_with(|| PyString::new(self.py, self.tasks.strings.values[id as usize]))
            .clone()
    }

    fn number(&mut self, n: i32) -> PyResult<Bound<'py, PyAny>> {
        if let Some(found) = self.numbers.get(&n) {
            return Ok(found.clone());
        }
        let made = n.into_pyobject(self.py)?.into_any();
        self.numbers.insert(n, made.clone());
        Ok(made)
    }
}

fn failure<'py>(
    py: Python<'py>,
    t: &Tasks<'_>,
    row: usize,
    check: &Check,
) -> PyResult<Bound<'py, PyTuple>> {
    let id = |r: usize| {
        let name = match t.names[r] {
            NONE => None,
            s => Some(t.strings.values[s as usize]),
        };
        (t.subs[r], t.parts[r], name)
    };
    let topic = |j: usize| {
        t.strings.values[t.topic_order[t.topics[t.starts[row] as usize + j] as usize] as usize]
    };
    let number = |j: usize| t.numbers[t.starts[row] as usize + j];
    // (code, row, index, int value, float value, topic, partition, task id, other row's id)
    let none: Option<(i32, i32, Option<&str>)> = None;
    let out = match *check {
        Check::MissingId => ("id", -1, 0, 0.0, "", 0, none, none),
        Check::NegativeEndSum(v) => ("end", -1, v, 0.0, "", 0, none, none),
        Check::EmptyTopic(j) => ("topic", j as i64, 0, 0.0, "", 0, none, none),
        Check::NegativePartition(j, p) => {
            ("partition", j as i64, i64::from(p), 0.0, "", 0, none, none)
        }
        Check::ListedTwice(j) => ("twice", j as i64, 0, 0.0, topic(j), number(j), none, none),
        Check::NegativeId => ("task", -1, 0, 0.0, "", 0, Some(id(row)), none),
        Check::SourceOfTwo(j, other) => (
            "source",
            j as i64,
            0,
            0.0,
            topic(j),
            number(j),
            Some(id(row)),
            Some(id(other)),
        ),
        Check::BadLoad(v) => ("load", -1, 0, v, "", 0, Some(id(row)), none),
        Check::NegativeStateBytes(v) => ("state_bytes", -1, v, 0.0, "", 0, Some(id(row)), none),
        Check::DuplicateId(first) => (
            "duplicate",
            first as i64,
            0,
            0.0,
            "",
            0,
            Some(id(row)),
            none,
        ),
    };
    let (code, index, value, real, topic, partition, task, other) = out;
    (code, row, index, value, real, topic, partition, task, other).into_pyobject(py)
}

/// An `AssignRequest`'s tasks read from its bytes, checked (see `tasks.rs`; the read without
/// the GIL). Returns `(counts, longest, failure, table)`: per task in request order its
/// partitions' count and its longest string's UTF-8 bytes (int64 bytes, native order); the
/// first check failed as a tuple, or `None`; and, without a failure, the table's columns in
/// task order (see the stub). `ValueError` naming the task and offset where bytes are not
/// protobuf.
#[pyfunction]
pub(crate) fn request_tasks<'py>(py: Python<'py>, data: &[u8]) -> PyResult<Bound<'py, PyTuple>> {
    let (t, order) = py
        .detach(|| {
            let mut t = tasks::read(data)?;
            let order = t.order();
            Ok((t, order))
        })
        .map_err(|(i, (what, at)): (usize, (String, usize))| {
            PyValueError::new_err(format!("tasks[{i}]: {what} at byte {at}"))
        })?;
    let n = t.names.len();
    let counts: Vec<i64> = t
        .starts
        .windows(2)
        .map(|w| i64::from(w[1] - w[0]))
        .collect();
    let longest: Vec<i64> = t.longest.iter().map(|&l| i64::from(l)).collect();
    let counts = ne_bytes(py, &counts, i64::to_ne_bytes)
        .into_bound(py)
        .into_any();
    let longest = ne_bytes(py, &longest, i64::to_ne_bytes)
        .into_bound(py)
        .into_any();
    if let Some((row, check)) = &t.failure {
        let f = failure(py, &t, *row, check)?.into_any();
        return PyTuple::new(py, [counts, longest, f, py.None().into_bound(py)]);
    }
    let rows: Vec<usize> = match &order {
        Some(o) => o.iter().map(|&r| r as usize).collect(),
        None => (0..n).collect(),
    };
    let mut place = vec![0u32; n];
    for (at, &r) in rows.iter().enumerate() {
        place[r] = at as u32;
    }
    let mut objects = Objects {
        py,
        tasks: &t,
        strings: vec![None; t.strings.values.len()],
        numbers: std::collections::HashMap::new(),
    };
    let mut keys: Vec<Bound<'py, PyAny>> = Vec::with_capacity(n);
    let mut named: std::collections::HashMap<u32, Bound<'py, PyAny>> =
        std::collections::HashMap::new();
    let empty = PyBytes::new(py, b"").into_any();
    let (mut subs, mut parts) = (Vec::with_capacity(n), Vec::with_capacity(n));
    let (mut stateful, mut ends) = (Vec::with_capacity(n), Vec::with_capacity(n));
    let mut starts: Vec<i64> = Vec::with_capacity(n + 1);
    starts.push(0);
    let total = t.numbers.len();
    let (mut topics, mut numbers) = (Vec::with_capacity(total), Vec::with_capacity(total));
    let (mut flags, mut racks) = (Vec::with_capacity(total), Vec::with_capacity(total));
    let mut sources: Vec<(Vec<Bound<'py, PyAny>>, Vec<u32>)> = (0..t.topic_order.len())
        .map(|_| (Vec::new(), Vec::new()))
        .collect();
    for (at, &r) in rows.iter().enumerate() {
        keys.push(match t.names[r] {
            NONE => empty.clone(),
            s => named
                .entry(s)
                .or_insert_with(|| {
                    let units: Vec<u8> = t.strings.values[s as usize]
                        .encode_utf16()
                        .flat_map(u16::to_be_bytes)
                        .collect();
                    PyBytes::new(py, &units).into_any()
                })
                .clone(),
        });
        subs.push(objects.number(t.subs[r])?);
        parts.push(objects.number(t.parts[r])?);
        stateful.push(t.stateful[r]);
        ends.push(t.ends[r]);
        for j in t.starts[r] as usize..t.starts[r + 1] as usize {
            topics.push(t.topics[j] as i32);
            numbers.push(t.numbers[j]);
            flags.push(t.flags[j]);
            racks.push(t.racks[j] as i32);
            if t.flags[j] & tasks::SOURCE != 0 {
                let (by_number, task_rows) = &mut sources[t.topics[j] as usize];
                by_number.push(objects.number(t.numbers[j])?);
                task_rows.push(at as u32);
            }
        }
        starts.push(topics.len() as i64);
    }
    let stores: Vec<(u32, Bound<'py, PyTuple>)> = t
        .stores
        .iter()
        .map(|(r, names)| {
            let names: Vec<_> = names.iter().map(|&s| objects.string(s)).collect();
            Ok((place[*r as usize], PyTuple::new(py, names)?))
        })
        .collect::<PyResult<_>>()?;
    let topic_names: Vec<_> = t.topic_order.iter().map(|&s| objects.string(s)).collect();
    let rack_sets: Vec<Vec<_>> = t.rack_sets[1..]
        .iter()
        .map(|set| set.iter().map(|&s| objects.string(s)).collect())
        .collect();
    let sources: Vec<(usize, Bound<'py, PyList>, Vec<u32>)> = sources
        .into_iter()
        .enumerate()
        .filter(|(_, (by_number, _))| !by_number.is_empty())
        .map(|(topic, (by_number, rows))| Ok((topic, PyList::new(py, by_number)?, rows)))
        .collect::<PyResult<_>>()?;
    let loads: Vec<(u32, f64)> = t
        .loads
        .iter()
        .map(|&(r, v)| (place[r as usize], v))
        .collect();
    let sizes: Vec<(u32, i64)> = t
        .state_bytes
        .iter()
        .map(|&(r, v)| (place[r as usize], v))
        .collect();
    let table: Vec<Bound<'py, PyAny>> = vec![
        PyList::new(py, keys)?.into_any(),
        PyList::new(py, subs)?.into_any(),
        PyList::new(py, parts)?.into_any(),
        PyBytes::new(py, &stateful).into_any(),
        ne_bytes(py, &ends, i64::to_ne_bytes)
            .into_bound(py)
            .into_any(),
        stores.into_pyobject(py)?.into_any(),
        ne_bytes(py, &starts, i64::to_ne_bytes)
            .into_bound(py)
            .into_any(),
        ne_bytes(py, &topics, i32::to_ne_bytes)
            .into_bound(py)
            .into_any(),
        ne_bytes(py, &numbers, i32::to_ne_bytes)
            .into_bound(py)
            .into_any(),
        PyBytes::new(py, &flags).into_any(),
        ne_bytes(py, &racks, i32::to_ne_bytes)
            .into_bound(py)
            .into_any(),
        topic_names.into_pyobject(py)?.into_any(),
        rack_sets.into_pyobject(py)?.into_any(),
        sources.into_pyobject(py)?.into_any(),
        loads.into_pyobject(py)?.into_any(),
        sizes.into_pyobject(py)?.into_any(),
    ];
    let table = PyTuple::new(py, table)?.into_any();
    PyTuple::new(py, [counts, longest, py.None().into_bound(py), table])
}
