"""bench/ghz: the data files are current, parse as AssignRequest, and a real server answers each OK."""

from __future__ import annotations

import json

import grpc
import pytest
from google.protobuf import json_format
from kassign.server.runtime.app import ServerConfig, create_server
from kassign.v1 import assignment_pb2 as pb
from kassign.v1 import assignment_pb2_grpc

from tests.ops.serving import DATA, ROOT, load_script

make_data = load_script("bench/ghz/make_data.py")
GROUPS = {g.name: g for g in make_data.GROUPS}


def test_data_files_are_what_make_data_writes() -> None:
    assert make_data.main(["--check"]) == 0
    assert sorted(p.stem for p in DATA.glob("*.json")) == sorted(GROUPS)


@pytest.mark.parametrize("name", sorted(GROUPS))
def test_data_file_describes_the_group_it_is_named_for(name: str) -> None:
    group = GROUPS[name]
    request = json_format.Parse((DATA / f"{name}.json").read_text(), pb.AssignRequest())
    assert len(request.tasks) == group.tasks
    assert len(request.members) == group.clients * group.threads
    assert len({m.subscription.info.process_id for m in request.members}) == group.clients
    newcomer = [
        m for m in request.members if m.member_id.startswith(f"client-{group.clients - 1}-")
    ]
    assert newcomer and all(not m.subscription.owned_partitions for m in newcomer)


@pytest.mark.slow
def test_every_data_file_is_answered_ok_by_a_real_server() -> None:
    server, port = create_server(ServerConfig(host="127.0.0.1", port=0))
    server.start()
    try:
        with grpc.insecure_channel(f"127.0.0.1:{port}") as channel:
            stub = assignment_pb2_grpc.TaskAssignmentServiceStub(channel)
            for name, group in sorted(GROUPS.items()):
                request = json_format.Parse((DATA / f"{name}.json").read_text(), pb.AssignRequest())
                response = stub.Assign(request, timeout=120)
                assert response.error == pb.ASSIGNMENT_ERROR_NONE, name
                assert len(response.clients) == group.clients, name
                assert len(response.members) == group.clients * group.threads, name
                actives = sum(len(c.active_tasks) for c in response.clients)
                assert actives == group.tasks, name
    finally:
        server.stop(None).wait()


def test_ghz_config_calls_a_real_method_with_a_shipped_data_file_over_several_connections() -> None:
    config = json.loads((ROOT / "bench" / "ghz" / "ghz.json").read_text())
    service, method = config["call"].rsplit(".", 1)
    assert pb.DESCRIPTOR.services_by_name[service.rsplit(".", 1)[1]].methods_by_name[method]
    assert (ROOT / config["data-file"]).is_file()
    assert config["connections"] > 1
    assert "proto" not in config and "protoset" not in config  # reflection
