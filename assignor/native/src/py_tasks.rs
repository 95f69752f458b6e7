//! The Streams room's request topology as a Python function (`tasks.rs`): every task of an
//! `AssignRequest` read from its bytes at once, checked, as the columns of a `TaskTable`.

use pyo3::exceptions::PyValueError;
use pyo3::ffi;
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyList, PyString, PyTuple, PyType};

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

/// A `TaskId` (`task_id`, a subclass of `tuple`) of `items`, made as `tuple.__new__` makes a
/// subclass's: its type's allocation, then the items (a Python call a task cost 40 ms of a
/// 100,000-task read).
fn new_id<'py>(
    py: Python<'py>,
    task_id: &Bound<'py, PyType>,
    items: [Bound<'py, PyAny>; 3],
) -> PyResult<Bound<'py, PyAny>> {
    // SAFETY: `task_id` is a subclass of tuple (checked by the caller), whose `tp_alloc` gives
    // a tuple of 3 empty slots; `PyTuple_SetItem` steals each item into a fresh tuple.
    unsafe {
        let ty = task_id.as_type_ptr();
        let slot = ffi::PyType_GetSlot(ty, ffi::Py_tp_alloc);
        if slot.is_null() {
            return Err(PyValueError::new_err("task_id has no allocator"));
        }
        let alloc: ffi::allocfunc = std::mem::transmute(slot);
        let made = alloc(ty, 3);
        if made.is_null() {
            return Err(PyErr::fetch(py));
        }
        let made = Bound::from_owned_ptr(py, made);
        for (i, item) in items.into_iter().enumerate() {
            if ffi::PyTuple_SetItem(made.as_ptr(), i as ffi::Py_ssize_t, item.into_ptr()) != 0 {
                return Err(PyErr::fetch(py));
            }
        }
        Ok(made)
    }
}

/// `len` values from `values` as native-endian bytes, written in place (no second copy).
fn column<'py, T, const N: usize>(
    py: Python<'py>,
    len: usize,
    values: impl Iterator<Item = T>,
    to: impl Fn(T) -> [u8; N],
) -> PyResult<Bound<'py, PyAny>> {
    let bytes = PyBytes::new_with(py, len * N, |out| {
        for (chunk, v) in out.chunks_exact_mut(N).zip(values) {
            chunk.copy_from_slice(&to(v));
        }
        Ok(())
    })?;
    Ok(bytes.into_any())
}

/// An `AssignRequest`'s tasks read from its bytes, checked (see `tasks.rs`; the read without
/// the GIL). Returns `(counts, longest, failure, table)`: per task in request order its
/// partitions' count and its longest string's UTF-8 bytes (int64 bytes, native order); the
/// first check failed as a tuple, or `None`; and, without a failure, the table's columns in
/// task order (see the stub), each task's id a `task_id` (a tuple subclass) of `(key,
/// subtopology, partition)`.
/// `ValueError` naming the task and offset where bytes are not protobuf.
#[pyfunction]
pub(crate) fn request_tasks<'py>(
    py: Python<'py>,
    data: &[u8],
    task_id: Bound<'py, PyType>,
) -> PyResult<Bound<'py, PyTuple>> {
    if !task_id.is_subclass_of::<PyTuple>()? {
        return Err(PyValueError::new_err("task_id must be a subclass of tuple"));
    }
    let (t, order) = py
        .detach(|| {
            let mut t = tasks::read(data)?;
            let order = t.order();
            t.release_indexes();
            Ok((t, order))
        })
        .map_err(|(i, (what, at)): (usize, (String, usize))| {
            PyValueError::new_err(format!("tasks[{i}]: {what} at byte {at}"))
        })?;
    let n = t.names.len();
    let spans = t.starts.windows(2);
    let counts = column(
        py,
        n,
        spans.map(|w| i64::from(w[1] - w[0])),
        i64::to_ne_bytes,
    )?;
    let longest = column(
        py,
        n,
        t.longest.iter().map(|&l| i64::from(l)),
        i64::to_ne_bytes,
    )?;
    if let Some((row, check)) = &t.failure {
        let f = failure(py, &t, *row, check)?.into_any();
        return PyTuple::new(py, [counts, longest, f, py.None().into_bound(py)]);
    }
    let rows: Vec<usize> = match order {
        Some(o) => o.into_iter().map(|r| r as usize).collect(),
        None => (0..n).collect(),
    };
    let mut objects = Objects {
        py,
        tasks: &t,
        strings: vec![None; t.strings.values.len()],
        numbers: std::collections::HashMap::new(),
    };
    let mut named: std::collections::HashMap<u32, Bound<'py, PyAny>> =
        std::collections::HashMap::new();
    let empty = PyBytes::new(py, b"").into_any();
    let mut ids: Vec<Bound<'py, PyAny>> = Vec::with_capacity(n);
    for &r in &rows {
        let key = match t.names[r] {
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
        };
        let id = [key, objects.number(t.subs[r])?, objects.number(t.parts[r])?];
        ids.push(new_id(py, &task_id, id)?);
    }
    let ids = PyTuple::new(py, ids)?.into_any();
    let spans = || {
        rows.iter()
            .map(|&r| t.starts[r] as usize..t.starts[r + 1] as usize)
    };
    let total = t.numbers.len();
    let partitions = || spans().flatten();
    let mut start = 0i64;
    let starts = std::iter::once(0).chain(spans().map(|s| {
        start += s.len() as i64;
        start
    }));
    let mut sources: Vec<(Vec<Bound<'py, PyAny>>, Vec<i64>)> = (0..t.topic_order.len())
        .map(|_| (Vec::new(), Vec::new()))
        .collect();
    for (at, span) in spans().enumerate() {
        for j in span.filter(|&j| t.flags[j] & tasks::SOURCE != 0) {
            let (by_number, task_rows) = &mut sources[t.topics[j] as usize];
            by_number.push(objects.number(t.numbers[j])?);
            task_rows.push(at as i64);
        }
    }
    let mut place = vec![0u32; n];
    for (at, &r) in rows.iter().enumerate() {
        place[r] = at as u32;
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
    let sources: Vec<(usize, Bound<'py, PyList>, Bound<'py, PyAny>)> = sources
        .into_iter()
        .enumerate()
        .filter(|(_, (by_number, _))| !by_number.is_empty())
        .map(|(topic, (by_number, rows))| {
            let rows = column(py, rows.len(), rows.into_iter(), i64::to_ne_bytes)?;
            Ok((topic, PyList::new(py, by_number)?, rows))
        })
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
    let one = |v: u8| [v];
    let table: Vec<Bound<'py, PyAny>> = vec![
        ids,
        column(py, n, rows.iter().map(|&r| t.stateful[r]), one)?,
        column(py, n, rows.iter().map(|&r| t.ends[r]), i64::to_ne_bytes)?,
        stores.into_pyobject(py)?.into_any(),
        column(py, n + 1, starts, i64::to_ne_bytes)?,
        column(
            py,
            total,
            partitions().map(|j| t.topics[j] as i32),
            i32::to_ne_bytes,
        )?,
        column(
            py,
            total,
            partitions().map(|j| t.numbers[j]),
            i32::to_ne_bytes,
        )?,
        column(py, total, partitions().map(|j| t.flags[j]), one)?,
        column(
            py,
            total,
            partitions().map(|j| t.racks[j] as i32),
            i32::to_ne_bytes,
        )?,
        topic_names.into_pyobject(py)?.into_any(),
        rack_sets.into_pyobject(py)?.into_any(),
        sources.into_pyobject(py)?.into_any(),
        loads.into_pyobject(py)?.into_any(),
        sizes.into_pyobject(py)?.into_any(),
    ];
    let table = PyTuple::new(py, table)?.into_any();
    PyTuple::new(py, [counts, longest, py.None().into_bound(py), table])
}
