//! Kafka Streams' thread distribution (`threads.rs`) as a Python function: the group's
//! assignment and clients read with the GIL into rows of the caller's sorted task ids, spread
//! without it, and every consumer's `MemberAssignment` made of those ids' own objects.

use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyDict, PyString, PyTuple, PyType};
use pyo3::{ffi, intern};

use crate::py_streams::picked_tuple;
use crate::py_streams_wire::Reader;
use crate::threads::{self, Client, Had, Input, STATEFUL, STATELESS};

/// A consumer as read: its id's order (`order_key`), its id and the consumer.
type Consumer<'py> = (Vec<u8>, Bound<'py, PyString>, Bound<'py, PyAny>);

/// A client's consumers: each distinct member id once (of two equal, the later), in member-id
/// order.
fn consumers<'py>(py: Python<'py>, client: &Bound<'py, PyAny>) -> PyResult<Vec<Consumer<'py>>> {
    let mut read: Vec<Consumer<'py>> = Vec::new();
    for consumer in client.getattr(intern!(py, "consumers"))?.try_iter()? {
        let consumer = consumer?;
        let id = consumer
            .getattr(intern!(py, "member_id"))?
            .cast_into::<PyString>()?;
        read.push((order_key(&id)?, id, consumer));
    }
    read.sort_by(|a, b| a.0.cmp(&b.0)); // stable: of equal ids the later stays last
    let mut out: Vec<Consumer<'py>> = Vec::with_capacity(read.len());
    for consumer in read {
        if out.last().is_some_and(|last| last.0 == consumer.0) {
            out.pop();
        }
        out.push(consumer);
    }
    Ok(out)
}

/// A member id as bytes that sort as Python sorts the strings (code points): UTF-8, lone
/// surrogates written as UTF-8 writes any code point.
fn order_key(id: &Bound<'_, PyString>) -> PyResult<Vec<u8>> {
    match id.to_str() {
        Ok(s) => Ok(s.as_bytes().to_vec()),
        Err(_) => Ok(id
            .call_method1(intern!(id.py(), "encode"), ("utf-8", "surrogatepass"))?
            .cast_into::<PyBytes>()?
            .as_bytes()
            .to_vec()),
    }
}

/// The rows of `ids`' own objects by address (open addressing, linear probing): the
/// assignment's lists hold the table's ids, so most tasks are found without reading them.
struct Addresses {
    slots: Vec<(usize, u32)>,
    mask: usize,
}

impl Addresses {
    fn of(ids: &Bound<'_, PyTuple>) -> Self {
        let size = (ids.len() * 2).next_power_of_two().max(16);
        let mut table = Addresses {
            slots: vec![(0, 0); size],
            mask: size - 1,
        };
        for (row, id) in ids.iter_borrowed().enumerate() {
            let mut at = table.home(id.as_ptr() as usize);
            while table.slots[at].0 != 0 {
                at = (at + 1) & table.mask;
            }
            table.slots[at] = (id.as_ptr() as usize, row as u32);
        }
        table
    }

    fn home(&self, address: usize) -> usize {
        // objects are 16-byte aligned: the low bits say nothing; a multiply spreads the rest
        ((address >> 4).wrapping_mul(0x9E37_79B9_7F4A_7C15) >> 20) & self.mask
    }

    fn row(&self, address: usize) -> Option<u32> {
        let mut at = self.home(address);
        loop {
            match self.slots[at] {
                (0, _) => return None,
                (a, row) if a == address => return Some(row),
                _ => at = (at + 1) & self.mask,
            }
        }
    }
}

/// Task ids into rows of the sorted ids: by address, else by value (the ids read into a
/// `Reader` the first time one is needed).
struct Rows<'a, 'py> {
    ids: &'a Bound<'py, PyTuple>,
    addresses: Option<Addresses>,
    reader: Option<Reader>,
}

impl Rows<'_, '_> {
    fn find(&mut self, task: Borrowed<'_, '_, PyAny>) -> PyResult<Option<u32>> {
        let addresses = self
            .addresses
            .get_or_insert_with(|| Addresses::of(self.ids));
        if let Some(row) = addresses.row(task.as_ptr() as usize) {
            return Ok(Some(row));
        }
        if self.reader.is_none() {
            let mut reader = Reader::default();
            reader.table(self.ids)?;
            self.reader = Some(reader);
        }
        Ok(self.reader.as_mut().expect("read").find(task)?.1)
    }
}

/// What one call reads: the task ids' rows and kinds, and the group's columns.
struct Reading<'a, 'py> {
    rows: Rows<'a, 'py>,
    kinds: &'a [u8],
    tasks: Vec<u32>,
    had: Vec<Had>,
    /// Stateful tasks had before, their lags not read yet: (consumer, row, task).
    pending: Vec<(u32, u32, Bound<'py, PyAny>)>,
}

impl<'py> Reading<'_, 'py> {
    /// A list's tasks appended to `tasks`; `false` if the ids lack one.
    fn list(&mut self, tasks: &Bound<'py, PyAny>) -> PyResult<bool> {
        if let Ok(tuple) = tasks.cast::<PyTuple>() {
            for task in tuple.iter_borrowed() {
                match self.rows.find(task)? {
                    Some(row) => self.tasks.push(row),
                    None => return Ok(false),
                }
            }
        } else {
            for task in tasks.try_iter()? {
                match self.rows.find(task?.as_borrowed())? {
                    Some(row) => self.tasks.push(row),
                    None => return Ok(false),
                }
            }
        }
        Ok(true)
    }

    /// What consumer `j` had: its previous actives (stateless ones by task, stateful ones by
    /// lag) and the tasks it has state for (stateful ones by lag); tasks of the topology only.
    fn history(&mut self, py: Python<'py>, j: u32, consumer: &Bound<'py, PyAny>) -> PyResult<()> {
        let names = [
            intern!(py, "previous_active"),
            intern!(py, "previous_stateful"),
        ];
        for (n, name) in names.into_iter().enumerate() {
            for task in consumer.getattr(name)?.try_iter()? {
                let task = task?;
                let Some(row) = self.rows.find(task.as_borrowed())? else {
                    continue;
                };
                match self.kinds[row as usize] {
                    STATEFUL => self.pending.push((j, row, task)),
                    STATELESS if n == 0 => self.had.push(Had {
                        consumer: j,
                        row,
                        lag: None,
                    }),
                    _ => {}
                }
            }
        }
        Ok(())
    }

    /// The pending tasks' lags from the client's `task_lags`: `local` (what `local_lags` gives)
    /// when it is a dict holding the task, else the mapping's `get`; a task without a lag is
    /// not kept from before.
    fn lags(
        &mut self,
        py: Python<'py>,
        lags: &Bound<'py, PyAny>,
        local: &Bound<'py, PyAny>,
    ) -> PyResult<()> {
        let local = local.cast::<PyDict>().ok();
        for (j, row, task) in self.pending.drain(..) {
            let lag = match local.map(|d| d.get_item(&task)).transpose()?.flatten() {
                Some(lag) => Some(lag),
                None => {
                    Some(lags.call_method1(intern!(py, "get"), (&task,))?).filter(|l| !l.is_none())
                }
            };
            if let Some(lag) = lag {
                let lag: i64 = lag.extract().map_err(|_| {
                    PyValueError::new_err(format!("task_lags: lag {lag} of {task} is not an int64"))
                })?;
                self.had.push(Had {
                    consumer: j,
                    row,
                    lag: Some(lag),
                });
            }
        }
        Ok(())
    }
}

/// `state`'s consumers' tasks after `assignment`; see `kassign.assignor.streams.threads`.
/// `ids` are the tasks, sorted and distinct, `kinds` a byte each (0 stateless, 1 stateful, 2 a
/// task the topology lacks); `assignments` the `KafkaStreamsAssignment`s, `clients` the
/// `KafkaStreamsState`s by process id (the model's fields are read by name), `local_lags`
/// `kassign.assignor.streams.lags.local_lags`. Returns every `MemberAssignment` (made as a
/// frozen dataclass is unpickled: `object.__new__`, then its fields set) sorted by member id,
/// or `None` when a listed task is not among `ids`.
#[pyfunction]
#[pyo3(signature = (ids, kinds, assignments, clients, member_type, local_lags))]
pub(crate) fn thread_distribution<'py>(
    py: Python<'py>,
    ids: &Bound<'py, PyTuple>,
    kinds: &[u8],
    assignments: &Bound<'py, PyAny>,
    clients: &Bound<'py, PyAny>,
    member_type: &Bound<'py, PyType>,
    local_lags: &Bound<'py, PyAny>,
) -> PyResult<Option<Bound<'py, PyTuple>>> {
    if kinds.len() != ids.len() {
        return Err(PyValueError::new_err(
            "thread_distribution: a kind per task id",
        ));
    }
    let mut reading = Reading {
        rows: Rows {
            ids,
            addresses: None,
            reader: None,
        },
        kinds,
        tasks: Vec::new(),
        had: Vec::new(),
        pending: Vec::new(),
    };
    let clients = clients.cast::<PyDict>()?;
    let mut columns: Vec<Client> = Vec::new();
    let mut members: Vec<Made<'py>> = Vec::new();
    for given in assignments.try_iter()? {
        let given = given?;
        let Some(client) = clients.get_item(given.getattr(intern!(py, "process_id"))?)? else {
            continue; // an unknown client
        };
        let consumers = consumers(py, &client)?;
        if consumers.is_empty() {
            continue;
        }
        let lists = [
            given.getattr(intern!(py, "active"))?,
            given.getattr(intern!(py, "standby"))?,
        ];
        let start = reading.tasks.len();
        let mut ranges = [start..start, start..start];
        let mut kept = [None, None];
        for (k, list) in lists.into_iter().enumerate() {
            let from = reading.tasks.len();
            if !reading.list(&list)? {
                return Ok(None);
            }
            ranges[k] = from..reading.tasks.len();
            // a lone consumer's list is the given one sorted, each task once: that tuple
            // itself when it already is (an assignor's is), not made again
            let rows = &reading.tasks[ranges[k].clone()];
            if consumers.len() == 1
                && list.is_exact_instance_of::<PyTuple>()
                && rows.windows(2).all(|w| w[0] < w[1])
            {
                kept[k] = Some(list);
            }
        }
        let process_id = client.getattr(intern!(py, "process_id"))?;
        let had = reading.had.len();
        if consumers.len() > 1 {
            // a lone consumer gets every task whatever it had: its history is not read
            for (j, (_, _, consumer)) in consumers.iter().enumerate() {
                reading.history(py, j as u32, consumer)?;
            }
            if !reading.pending.is_empty() {
                let lags = client.getattr(intern!(py, "task_lags"))?;
                let local = local_lags.call1((&lags,))?;
                reading.lags(py, &lags, &local)?;
            }
        }
        let [active, standby] = ranges;
        columns.push(Client {
            consumers: consumers.len(),
            active,
            standby,
            had: had..reading.had.len(),
        });
        for (key, id, _) in consumers {
            let listed = members.len();
            members.push(Made {
                key,
                id,
                process_id: process_id.clone(),
                kept: kept.clone(),
                lists: listed,
            });
        }
    }
    let input = Input {
        kinds,
        tasks: reading.tasks,
        had: reading.had,
        clients: columns,
    };
    let out = py.detach(|| threads::distribute(&input));
    let mut order: Vec<usize> = (0..members.len()).collect();
    order.sort_by(|&a, &b| members[a].key.cmp(&members[b].key)); // stable, as Python's sorted
    let new = py.get_type::<PyAny>().getattr(intern!(py, "__new__"))?;
    let names = [intern!(py, "active"), intern!(py, "standby")];
    let mut made = Vec::with_capacity(order.len());
    let mut positions: Vec<usize> = Vec::new();
    for m in order {
        let member = &members[m];
        let made_one = new.call1((member_type,))?;
        set(&made_one, intern!(py, "member_id"), member.id.as_any())?;
        set(&made_one, intern!(py, "process_id"), &member.process_id)?;
        for (k, name) in names.iter().enumerate() {
            let list = match &member.kept[k] {
                Some(kept) => kept.clone(),
                None => {
                    let rows = &out.rows[out.lists[member.lists][k].clone()];
                    positions.clear();
                    positions.extend(rows.iter().map(|&r| r as usize));
                    picked_tuple(py, ids, &positions)?.into_any()
                }
            };
            set(&made_one, name, &list)?;
        }
        made.push(made_one);
    }
    Ok(Some(PyTuple::new(py, made)?))
}

/// A consumer's `MemberAssignment` to make: its id's order (`order_key`), its id, its client's
/// process id, its lists where they are the given ones, and its place in the pass's output.
struct Made<'py> {
    key: Vec<u8>,
    id: Bound<'py, PyString>,
    process_id: Bound<'py, PyAny>,
    kept: [Option<Bound<'py, PyAny>>; 2],
    lists: usize,
}

/// `object.__setattr__(obj, name, value)`: a frozen dataclass's field set past its
/// `__setattr__`, as its own `__init__` and unpickling set them.
fn set(
    obj: &Bound<'_, PyAny>,
    name: &Bound<'_, PyString>,
    value: &Bound<'_, PyAny>,
) -> PyResult<()> {
    // SAFETY: three live objects; the generic setter takes its own references.
    let rc = unsafe { ffi::PyObject_GenericSetAttr(obj.as_ptr(), name.as_ptr(), value.as_ptr()) };
    if rc != 0 {
        return Err(PyErr::fetch(obj.py()));
    }
    Ok(())
}
