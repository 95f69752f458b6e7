"""``kassign explain``'s model over the snapshot corpus: every answer told as it is.

The corpus (tests/snapshots/corpus.py: the examples, the ghz groups, Kafka's byte vectors and 160
seeded groups with racks, tags, standbys and both rack-aware strategies) gives groups of every
shape; for each valid one the told answer must hold exactly the answer's replicas, its moves, its
warm-ups and its explanation's previous owners, and the page one cell per replica.
"""

from __future__ import annotations

import re

import pytest
from kassign.assignor.errors import InvalidRequest
from kassign.cli.explain_html import page
from kassign.cli.explain_model import Kind
from kassign.cli.explain_streams import group_view
from kassign.cli.table import task_name
from kassign.server.streams.servicer import assign_request
from kassign.v1 import assignment_pb2 as pb

from tests.snapshots.corpus import cases

CASES = [(name, request) for name, request in cases() if not name.startswith("invalid/")]


@pytest.mark.parametrize(("name", "request_"), CASES, ids=[n for n, _ in CASES])
def test_the_told_answer_is_the_answer(name: str, request_: pb.AssignRequest) -> None:
    request_.explain = True
    try:
        outcome = assign_request(request_)
    except InvalidRequest as told:
        # the corpus's two consumer vectors (no Streams userData): refused just the same
        request_.explain = False
        with pytest.raises(InvalidRequest) as plain:
            assign_request(request_)
        assert str(plain.value) == str(told)
        return
    response = outcome.response
    view = group_view(outcome.decoded, response)
    for client in response.clients:
        held = view.held(client.process_id)
        actives = sorted(t.name for t, r in held if r.kind is Kind.ACTIVE)
        others = sorted(t.name for t, r in held if r.kind is not Kind.ACTIVE)
        assert actives == sorted(task_name(t) for t in client.active_tasks)
        assert others == sorted(task_name(t) for t in client.standby_tasks)
    moves, report = view.moves(), response.report.moves
    assert (moves.stateful_actives, moves.stateless_actives, moves.standbys, moves.warmups) == (
        report.stateful_actives,
        report.stateless_actives,
        report.standbys,
        report.warmups,
    )
    told = {task_name(t.task): t for t in response.explanation.tasks}
    for task in view.tasks:
        assert task.previous_active == tuple(told[task.name].previous_active)
        assert task.previous_standby == tuple(told[task.name].previous_standby)
    text = page(view)
    replicas = sum(len(c.active_tasks) + len(c.standby_tasks) for c in response.clients)
    assert len(re.findall(r'<button type="button" class="cell ', text)) == replicas
