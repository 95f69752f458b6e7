//! The Kafka Streams answer's lists (`streams_wire.rs`) as a Python function: the task ids and
//! strings read from the model's objects with the GIL, every list's entry then ordered and
//! written without it.

use std::collections::HashMap;
use std::ops::Range;

use pyo3::buffer::{Element, PyUntypedBuffer};
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::pybacked::PyBackedStr;
use pyo3::types::{PyBytes, PyTuple};

use crate::streams_wire::{
    self, Answer, Client, Index, Key, Lists, Member, Sources, Topology, UNKNOWN,
};

/// A task table as `streams_lists` takes it: its ids (sorted, distinct) and its partition
/// columns (`TaskTable.partition_columns()`: starts, topics, numbers, flags, topic names).
type TableIn<'py> = (
    Bound<'py, PyTuple>,
    Bound<'py, PyAny>,
    Bound<'py, PyAny>,
    Bound<'py, PyAny>,
    Bound<'py, PyAny>,
    Vec<PyBackedStr>,
);

/// A client: process id, active and standby tasks, follow-up deadline, rack, member ids,
/// end point.
type ClientIn<'py> = (
    PyBackedStr,
    Bound<'py, PyAny>,
    Bound<'py, PyAny>,
    i64,
    PyBackedStr,
    Vec<PyBackedStr>,
    PyBackedStr,
);

/// Given partitions: (topic, number) each.
type PartitionsIn = Option<Vec<(PyBackedStr, i64)>>;

/// A member: member id, process id, active and standby tasks, and its active and standby
/// partitions (`None`: its tasks' sources in the table).
type MemberIn<'py> = (
    PyBackedStr,
    PyBackedStr,
    Bound<'py, PyAny>,
    Bound<'py, PyAny>,
    PartitionsIn,
    PartitionsIn,
);

/// Task ids read into numbers: each named topology numbered once (the table's in its order).
/// The thread distribution (`py_threads.rs`) reads its tasks into the table's rows with it too.
#[derive(Default)]
pub(crate) struct Reader {
    index: Index,
    numbers: HashMap<Vec<u8>, u32>,
    /// The last topology read, and its number: a list's tasks mostly share one.
    last: Option<(u32, Vec<u8>)>,
    /// The table's group of the last task found (`Index::row`'s hint).
    group: usize,
    lists: Lists,
}

fn invalid(what: impl Into<String>) -> PyErr {
    PyValueError::new_err(what.into())
}

impl Reader {
    fn topology(&mut self, utf16: &[u8]) -> PyResult<u32> {
        if let Some(&(n, _)) = self.last.as_ref().filter(|(_, l)| l[..] == *utf16) {
            return Ok(n);
        }
        if let Some(&n) = self.numbers.get(utf16) {
            self.last = Some((n, utf16.to_vec()));
            return Ok(n);
        }
        let units: Vec<u16> = utf16
            .chunks(2)
            .map(|c| match c {
                [a, b] => Ok(u16::from_be_bytes([*a, *b])),
                _ => Err(invalid("a task's named topology: an odd number of bytes")),
            })
            .collect::<PyResult<_>>()?;
        let utf8 = String::from_utf16(&units)
            .map_err(|_| invalid("a task's named topology is not valid UTF-16"))?;
        let n = self.index.topologies.len() as u32;
        self.index.topologies.push(Topology {
            utf16: utf16.to_vec(),
            utf8: utf8.into_bytes(),
        });
        self.numbers.insert(utf16.to_vec(), n);
        self.last = Some((n, utf16.to_vec()));
        Ok(n)
    }

    /// A `TaskId` (a tuple: topology as UTF-16-BE bytes, sub-topology, partition) by value.
    fn task(&mut self, task: Borrowed<'_, '_, PyAny>) -> PyResult<Key> {
        let t = task.cast::<PyTuple>()?;
        if t.len() != 3 {
            return Err(invalid("a task id is not three fields"));
        }
        Ok(Key {
            topology: self.topology(t.get_borrowed_item(0)?.cast::<PyBytes>()?.as_bytes())?,
            subtopology: t.get_borrowed_item(1)?.extract()?,
            partition: t.get_borrowed_item(2)?.extract()?,
        })
    }

    /// The table's ids as groups of one topology and sub-topology; `ValueError` unless they
    /// are sorted and distinct.
    pub(crate) fn table(&mut self, ids: &Bound<'_, PyTuple>) -> PyResult<()> {
        self.index.partitions.reserve_exact(ids.len());
        let mut last: Option<Key> = None;
        for i in 0..ids.len() {
            let key = self.task(ids.get_borrowed_item(i)?)?;
            let index = &mut self.index;
            let new_group = match &last {
                None => true,
                Some(prev) => {
                    let id_of = |k: &Key| {
                        let name = &index.topologies[k.topology as usize].utf16[..];
                        (name, k.subtopology, k.partition)
                    };
                    if id_of(prev) >= id_of(&key) {
                        return Err(invalid("the table's task ids are not sorted and distinct"));
                    }
                    (prev.topology, prev.subtopology) != (key.topology, key.subtopology)
                }
            };
            if new_group {
                let row = index.partitions.len() as u32;
                index.groups.push((key.topology, key.subtopology, row));
            }
            index.partitions.push(key.partition);
            last = Some(key);
        }
        Ok(())
    }

    /// A list's tasks appended to the entries, as rows of the table or unknown tasks.
    fn list(&mut self, tasks: &Bound<'_, PyAny>) -> PyResult<Range<usize>> {
        let start = self.lists.rows.len();
        if let Ok(tuple) = tasks.cast::<PyTuple>() {
            for i in 0..tuple.len() {
                self.entry(tuple.get_borrowed_item(i)?)?;
            }
        } else {
            for task in tasks.try_iter()? {
                self.entry(task?.as_borrowed())?;
            }
        }
        Ok(start..self.lists.rows.len())
    }

    /// A task id's key, and its row in the table (`None`: the table lacks it).
    pub(crate) fn find(&mut self, task: Borrowed<'_, '_, PyAny>) -> PyResult<(Key, Option<u32>)> {
        let key = self.task(task)?;
        let row = self.index.row(&key, &mut self.group);
        Ok((key, row))
    }

    /// A task appended to the entries, as its row in the table or an unknown task.
    fn entry(&mut self, task: Borrowed<'_, '_, PyAny>) -> PyResult<()> {
        let entry = match self.find(task)? {
            (_, Some(row)) => row,
            (key, None) => {
                self.lists.unknown.push(key);
                UNKNOWN | (self.lists.unknown.len() - 1) as u32
            }
        };
        self.lists.rows.push(entry);
        Ok(())
    }
}

/// A column's values (an `array` or `bytes`), copied: an empty `array`'s buffer is not aligned.
fn column<T: Element>(py: Python<'_>, values: &Bound<'_, PyAny>) -> PyResult<Vec<T>> {
    let buffer = PyUntypedBuffer::get(values)?;
    if buffer.len_bytes() == 0 {
        return Ok(Vec::new());
    }
    buffer.into_typed::<T>()?.to_vec(py)
}

fn sources(py: Python<'_>, table: &TableIn<'_>) -> PyResult<Sources> {
    let (_, starts, topics, numbers, flags, names) = table;
    Ok(Sources::new(
        column(py, starts)?,
        column(py, topics)?,
        column(py, numbers)?,
        column(py, flags)?,
        names.iter().map(|n| n.as_bytes().to_vec()).collect(),
    ))
}

/// `AssignResponse`'s `clients` and `members` (fields 1 and 2) as protobuf wire bytes; see
/// `streams_wire.rs`. With `table`, each task list in the answer's order (the table's tasks in
/// task order, then those it lacks) and a member's partitions, when `None`, its tasks' sources
/// in the table; without, lists and partitions as given. The ids and strings are read with the
/// GIL, the lists ordered and written without it. `ValueError` for a task id that is not one,
/// or columns that do not fit together.
#[pyfunction]
#[pyo3(signature = (table, clients, members))]
pub(crate) fn streams_lists(
    py: Python<'_>,
    table: Option<TableIn<'_>>,
    clients: Vec<ClientIn<'_>>,
    members: Vec<MemberIn<'_>>,
) -> PyResult<Py<PyBytes>> {
    let mut reader = Reader::default();
    let sources = match &table {
        Some(t) => {
            reader.table(&t.0)?;
            let s = sources(py, t)?;
            s.check(reader.index.partitions.len()).map_err(invalid)?;
            Some(s)
        }
        None => None,
    };
    // the entries' column sized once (grown by doubling, it left up to its size again behind)
    let lists_of = |c: &ClientIn<'_>| [c.1.len(), c.2.len()];
    let sizes = clients
        .iter()
        .map(lists_of)
        .chain(members.iter().map(|m| [m.2.len(), m.3.len()]));
    let total = sizes.flatten().sum::<PyResult<usize>>()?;
    reader.lists.rows.reserve_exact(total);
    let mut ranges = Vec::with_capacity(2 * (clients.len() + members.len()));
    for (_, active, standby, ..) in &clients {
        ranges.push([reader.list(active)?, reader.list(standby)?]);
    }
    for (_, _, active, standby, ..) in &members {
        ranges.push([reader.list(active)?, reader.list(standby)?]);
    }
    let mut given: Vec<(&[u8], i64)> = Vec::new();
    let mut member_parts: Vec<[Option<Range<usize>>; 2]> = Vec::with_capacity(members.len());
    for m in &members {
        let mut parts = [None, None];
        for (k, p) in [&m.4, &m.5].into_iter().enumerate() {
            if let Some(p) = p {
                let start = given.len();
                given.extend(p.iter().map(|(t, n)| (t.as_bytes(), *n)));
                parts[k] = Some(start..given.len());
            }
        }
        member_parts.push(parts);
    }
    let mut ranges = ranges.into_iter();
    let client_specs: Vec<Client<'_>> = clients
        .iter()
        .zip(ranges.by_ref())
        .map(|(c, [active, standby])| Client {
            process_id: c.0.as_bytes(),
            active,
            standby,
            followup_ms: c.3,
            rack_id: c.4.as_bytes(),
            member_ids: c.5.iter().map(|m| m.as_bytes()).collect(),
            user_end_point: c.6.as_bytes(),
        })
        .collect();
    let member_specs: Vec<Member<'_>> = members
        .iter()
        .zip(ranges)
        .zip(member_parts)
        .map(|((m, [active, standby]), partitions)| Member {
            member_id: m.0.as_bytes(),
            process_id: m.1.as_bytes(),
            active,
            standby,
            partitions,
        })
        .collect();
    let Reader {
        index, mut lists, ..
    } = reader;
    let answer = Answer {
        index: &index,
        sources: sources.as_ref(),
        ordered: table.is_some(),
        given: &given,
    };
    let (sizes, bytes) = py
        .detach(|| streams_wire::plan(&answer, &mut lists, &client_specs, &member_specs))
        .map_err(invalid)?;
    // measured first, so the answer is written once, into its own `bytes` (no copy)
    let out = PyBytes::new_with(py, bytes, |buf| {
        py.detach(|| streams_wire::fill(&answer, &lists, &client_specs, &member_specs, &sizes, buf))
            .map_err(invalid)
    })?;
    Ok(out.unbind())
}
