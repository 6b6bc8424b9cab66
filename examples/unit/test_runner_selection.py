"""Pure unit tests (no torch): how the Bazel pytest runner picks node ids, shards and threads."""

from rules.private import pytest_runner as runner


def test_test_key_splits_path_from_node():
    nodeid = "tests/a/test_x.py::TestA::test_b[cuda]"
    assert runner.contract.split_nodeid(nodeid) == ("tests/a/test_x.py", "TestA::test_b[cuda]")


def test_route_label_prefers_the_exact_parametrization():
    labels = {"test_p": "cpu", "test_p[cuda]": "gpu"}
    assert runner.contract.route_label(labels, "test_p[cuda]") == "gpu"
    assert runner.contract.route_label(labels, "test_p[cpu]") == "cpu"


def test_route_label_falls_back_to_the_class_then_unknown():
    assert runner.contract.route_label({"TestOps": "gpu"}, "TestOps::test_add") == "gpu"
    assert runner.contract.route_label({}, "test_new") == "unknown"


def test_unknown_tests_go_to_the_gpu_part():
    routing = {"t.py": {"test_a": "cpu"}}
    assert runner.in_part(routing, "cpu", "t.py::test_a")
    assert not runner.in_part(routing, "cpu", "t.py::test_new")
    assert runner.in_part(routing, "gpu", "t.py::test_new")


def test_a_key_that_names_another_case_without_gpus_goes_where_the_test_runs():
    routing = {"t.py": {"test_p[device0]": runner.contract.ROUTE_CPU_WITHOUT_GPUS}}
    assert runner.in_part(routing, "cpu", "t.py::test_p[device0]", lambda: False)
    assert not runner.in_part(routing, "gpu", "t.py::test_p[device0]", lambda: False)
    assert runner.in_part(routing, "gpu", "t.py::test_p[device0]", lambda: True)


def test_shards_partition_the_items():
    items = list(range(10))
    shards = [runner.shard(items, 3, index) for index in range(3)]
    assert sorted(sum(shards, [])) == items
    assert shards[0] == [0, 3, 6, 9]


def test_user_thread_setting_is_left_alone():
    assert runner.thread_environment({"OMP_NUM_THREADS": "8"}) == {}
    assert runner.thread_environment({"TORCH_TEST_NUM_THREADS": "2"})["OMP_NUM_THREADS"] == "2"
