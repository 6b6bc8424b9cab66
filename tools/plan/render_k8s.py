"""Kubernetes rendering: one batch/v1 Job per planned node (or per test), checked against the official
client models.

The plan picks a pool; Kubernetes still picks the node, so the Job carries the pool's node selector,
the GPU count as `nvidia.com/gpu` limits, the GPU taint toleration and the Bazel timeout as
`activeDeadlineSeconds`. Planned node/start/wave travel as annotations for humans and dashboards.
"""

from __future__ import annotations

import inspect
import json
import re
from collections.abc import Mapping, Sequence
from typing import Any

import yaml

from tools.contract import runtime
from tools.gpu_manifest.schema import ManifestTest, command_words, shell_join
from tools.plan.fleet import Fleet, Pool
from tools.plan.jobs import EngineJob, engine_jobs, job_name, test_budget_s
from tools.plan.scheduler import Placement, Plan

DEFAULT_IMAGE = "ghcr.io/example/torch-bazel-ci:latest"
_DNS_LABEL = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?$")
_LABEL_VALUE = re.compile(r"^(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?$")
_LABEL_KEY = re.compile(r"^([a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*/)?"
                        r"[A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?$")


class RenderError(ValueError):
    """A rendered object the engine would reject; the message names the object and field."""


def shell_command(test: ManifestTest) -> str:
    """The test's command as one line for the engine's shell, every word (the label too) quoted."""
    try:
        return shell_join(command_words(test.command))
    except ValueError as err:
        raise RenderError(f"{test.label}: command {test.command[:200]!r}: {err}") from None


def node_selector(pool: Pool) -> dict[str, str]:
    """Model/VRAM/CUDA labels the cluster admin puts on the pool's nodes; `node_labels` overrides."""
    selector = {
        "torch-ci/gpu-pool": pool.name,
        "torch-ci/gpu-model": pool.gpu_model,
        "torch-ci/gpu-vram-gb": f"{pool.vram_gb:g}",
        "torch-ci/cuda": pool.cuda,
    }
    selector.update(pool.node_labels)
    return selector


def render_job(placement: Placement, test: ManifestTest, pool: Pool, image: str,
               namespace: str | None = None) -> dict[str, Any]:
    """One Job as plain data (what `kubectl apply -f` reads)."""
    name = job_name(test.label)
    gpus = len(placement.gpus)
    labels = {"app.kubernetes.io/name": "torch-gpu-test", "torch-ci/pool": pool.name,
              "torch-ci/wave": str(placement.wave)}
    annotations = {
        "torch-ci/bazel-label": test.label,
        "torch-ci/planned-node": placement.node,
        "torch-ci/planned-gpus": ",".join(map(str, placement.gpus)),
        "torch-ci/planned-start-s": f"{placement.start_s:.1f}",
        "torch-ci/gpu-share": f"{placement.slot_fraction:g}",
    }
    metadata: dict[str, Any] = {"name": name, "labels": labels, "annotations": annotations}
    if namespace:
        metadata["namespace"] = namespace
    env = [
        {"name": runtime.GPU_COUNT, "value": str(test.gpu_count)},
        {"name": runtime.VRAM_GB, "value": f"{test.vram_gb:g}"},
        {"name": runtime.GPU_MEMORY_FRACTION, "value": f"{placement.slot_fraction:g}"},
    ]
    container = {"command": ["bash", "-c", shell_command(test)], "env": env}
    return _job(metadata, pool, image, 1 if test.flaky else 0, test_budget_s(test), container, gpus)


def _job(metadata: dict[str, Any], pool: Pool, image: str, backoff: int, deadline_s: int,
         container: dict[str, Any], gpus: int) -> dict[str, Any]:
    """The Job around one `bazel-test` container: the pool's node selector, the GPU taint toleration,
    `gpus` as the nvidia.com/gpu limit, never restarted in place."""
    return {
        "apiVersion": "batch/v1",
        "kind": "Job",
        "metadata": metadata,
        "spec": {
            "backoffLimit": backoff,
            "activeDeadlineSeconds": deadline_s,
            "ttlSecondsAfterFinished": 86400,
            "template": {
                "metadata": {"labels": dict(metadata["labels"])},
                "spec": {
                    "restartPolicy": "Never",
                    "nodeSelector": node_selector(pool),
                    "tolerations": [{"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoSchedule"}],
                    "containers": [{
                        "name": "bazel-test",
                        "image": image,
                        "workingDir": "/workspace",
                        **container,
                        "resources": {"limits": {"nvidia.com/gpu": str(gpus)}},
                    }],
                },
            },
        },
    }


def render_node_job(job: EngineJob, pool: Pool, image: str, namespace: str | None = None) -> dict[str, Any]:
    """One Job for a planned node: holds the node's GPUs, runs one `bazel test` over its targets
    (argv, no shell: labels reach Bazel verbatim)."""
    labels = {"app.kubernetes.io/name": "torch-gpu-node", "torch-ci/pool": pool.name}
    annotations = {
        "torch-ci/planned-node": job.planned_node,
        "torch-ci/planned-start-s": f"{job.start_s:.1f}",
        "torch-ci/tests": str(len(job.labels)),
        "torch-ci/bazel-labels": "\n".join(job.labels),
    }
    metadata: dict[str, Any] = {"name": job.name, "labels": labels, "annotations": annotations}
    if namespace:
        metadata["namespace"] = namespace
    # backoffLimit 0: a retry would rerun the whole node; Bazel retries flaky tests itself.
    return _job(metadata, pool, image, 0, job.time_limit_s, {"command": job.bazel_argv()}, job.gpus)


def render(plan: Plan, tests: Mapping[str, ManifestTest], fleet: Fleet, image: str = DEFAULT_IMAGE,
           namespace: str | None = None, handoff: str = "node") -> list[dict[str, Any]]:
    """Jobs as plain data: one per planned node (`node`, default) or one per test (`test`)."""
    pools = {p.name: p for p in fleet.pools}
    if handoff == "test":
        return [render_job(p, tests[p.label], pools[p.pool], image, namespace) for p in plan.placements]
    return [render_node_job(job, pools[job.pool], image, namespace)
            for job in engine_jobs(plan, tests, fleet, handoff)]


class _Response:
    """What ApiClient.deserialize reads: an object with a JSON `data` attribute."""

    def __init__(self, doc: Mapping[str, Any]) -> None:
        self.data = json.dumps(doc)


def _strip_none(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _strip_none(v) for k, v in value.items() if v is not None}
    if isinstance(value, list):
        return [_strip_none(v) for v in value]
    return value


def validate_job(doc: Mapping[str, Any]) -> Any:
    """Deserialize into kubernetes.client.V1Job (required fields, types) and check that nothing was
    dropped on the way (the client silently ignores unknown keys), plus name/label syntax."""
    from kubernetes import client  # heavy import; only when validating

    name = doc.get("metadata", {}).get("name", "?")
    api = client.ApiClient()
    try:
        if "response_text" in inspect.signature(api.deserialize).parameters:  # kubernetes >= 35
            job = api.deserialize(json.dumps(doc), "V1Job", "application/json")
        else:
            job = api.deserialize(_Response(doc), "V1Job")
    except (ValueError, TypeError) as err:
        raise RenderError(f"Job {name}: rejected by kubernetes.client.V1Job: {err}") from None
    back = _strip_none(api.sanitize_for_serialization(job))
    if back != _strip_none(json.loads(json.dumps(doc))):
        raise RenderError(f"Job {name}: fields lost in V1Job round trip (unknown or misspelled keys)")
    if doc.get("apiVersion") != "batch/v1" or doc.get("kind") != "Job":
        raise RenderError(f"Job {name}: apiVersion/kind must be batch/v1 Job")
    if not (isinstance(name, str) and len(name) <= 63 and _DNS_LABEL.match(name)):
        raise RenderError(f"Job {name!r}: metadata.name must be a DNS-1123 label of at most 63 characters")
    pod = job.spec.template.spec
    selectors = [("metadata.labels", job.metadata.labels or {}),
                 ("spec.template.metadata.labels", job.spec.template.metadata.labels or {}),
                 ("spec.template.spec.nodeSelector", pod.node_selector or {})]
    for where, mapping in selectors:
        for key, value in mapping.items():
            if not _LABEL_KEY.match(key) or len(key.rsplit("/", 1)[-1]) > 63:
                raise RenderError(f"Job {name}: {where} key {key!r} is not a valid label key")
            if not (isinstance(value, str) and len(value) <= 63 and _LABEL_VALUE.match(value)):
                raise RenderError(f"Job {name}: {where}[{key!r}] value {value!r} is not a valid label value")
    for container in pod.containers:
        limits = (container.resources.limits or {}) if container.resources else {}
        gpus = limits.get("nvidia.com/gpu")
        if gpus is None or not str(gpus).isdigit() or int(gpus) < 1:
            raise RenderError(f"Job {name}: containers[{container.name}].resources.limits['nvidia.com/gpu'] "
                              f"must be a positive integer, got {gpus!r}")
    deadline = job.spec.active_deadline_seconds
    if not isinstance(deadline, int) or deadline < 1:
        raise RenderError(f"Job {name}: spec.activeDeadlineSeconds must be a positive integer")
    return job


def validate_all(docs: Sequence[Mapping[str, Any]]) -> None:
    names = set()
    for doc in docs:
        validate_job(doc)
        name = doc["metadata"]["name"]
        if name in names:
            raise RenderError(f"Job {name}: duplicate metadata.name")
        names.add(name)


def dumps(docs: Sequence[Mapping[str, Any]]) -> str:
    """Multi-document YAML for `kubectl apply -f`."""
    return yaml.safe_dump_all(list(docs), sort_keys=False, default_flow_style=False)
