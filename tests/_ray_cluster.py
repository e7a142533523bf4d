"""A real Ray cluster on this machine: a head and worker nodes started with
``ray start``, each node a raylet of its own standing in for a machine.

Each node is a ``ray start --block`` process and the processes it starts
(the raylet, its agents, its workers): :meth:`RayCluster.stop` kills exactly
those, never another Ray on the machine (``ray stop`` would kill them all).

Nodes join one after the other: ``ray start`` names a node's sockets after
the ones it finds in the session directory, and two nodes starting at once
take the same name.
"""

from __future__ import annotations

import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path

import psutil

__all__ = ["NODE", "RayCluster"]

NODE = "TOOLWIRE_TEST_RAY_NODE"
"""The environment variable naming the node a process belongs to."""
START_DEADLINE = 120.0
"""Seconds for the head, then for each node, to come up."""


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


@dataclass
class RayCluster:
    """A head (no CPUs: it runs nothing) and ``len(nodes)`` worker nodes."""

    directory: Path
    port: int
    env: dict[str, str]
    processes: dict[str, subprocess.Popen[bytes]] = field(default_factory=dict)
    """``ray start --block`` of each node by name: ``head``, ``n0``, ``n1``..."""

    @property
    def address(self) -> str:
        return f"127.0.0.1:{self.port}"

    @classmethod
    def start(cls, nodes: int, *, cpus: int = 1, env: Mapping[str, str] = ()) -> RayCluster:
        """Start the head, then ``nodes`` worker nodes of ``cpus`` CPUs each.

        Raises:
            RuntimeError: a node did not come up within :data:`START_DEADLINE`.
        """
        directory = Path(tempfile.mkdtemp(prefix="twray-"))
        # Ray's settings are this cluster's own, none inherited: another
        # suite's single-node setting (RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER=0,
        # tests/ray/conftest.py) would refuse every node but the head, and a
        # RAY_AUTH_TOKEN would make the head refuse its own nodes.
        inherited = {k: v for k, v in os.environ.items() if not k.startswith("RAY_")}
        full = {
            **inherited,
            # Where Ray may keep files of its own (its auth token...): not the user's.
            "HOME": str(directory),
            "RAY_USAGE_STATS_ENABLED": "0",
            # A node that stops answering is declared dead within seconds.
            "RAY_health_check_period_ms": "1000",
            "RAY_health_check_timeout_ms": "1000",
            "RAY_health_check_failure_threshold": "3",
            **dict(env),
        }
        cluster = cls(directory, _free_port(), full)
        try:
            cluster._launch(
                "head",
                "--head",
                f"--port={cluster.port}",
                "--num-cpus=0",
                "--include-dashboard=false",
                f"--dashboard-port={_free_port()}",
                f"--temp-dir={directory}",
            )
            cluster._wait(cluster._port_open, "the head")
            for n in range(nodes):
                cluster._launch(f"n{n}", f"--address={cluster.address}", f"--num-cpus={cpus}")
                cluster._wait(lambda n=n: cluster.alive_nodes() >= n + 2, f"node n{n}")
        except BaseException:
            cluster.stop()
            raise
        return cluster

    def _launch(self, name: str, *args: str) -> None:
        ray = Path(sys.executable).with_name("ray")
        log = open(self.directory / f"{name}.log", "wb")
        process = subprocess.Popen(
            [
                str(ray),
                "start",
                "--block",
                "--disable-usage-stats",
                "--node-ip-address=127.0.0.1",
                f"--dashboard-agent-listen-port={_free_port()}",
                "--object-store-memory=100000000",
                *args,
            ],
            env={**self.env, NODE: name},
            stdout=log,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
        log.close()
        self.processes[name] = process

    def _port_open(self) -> bool:
        try:
            socket.create_connection(("127.0.0.1", self.port), timeout=1).close()
        except OSError:
            return False
        return True

    def _wait(self, ready: Callable[[], bool], what: str) -> None:
        deadline = time.monotonic() + START_DEADLINE
        while time.monotonic() < deadline:
            if ready():
                return
            if any(p.poll() is not None for p in self.processes.values()):
                break
            time.sleep(0.25)
        logs = "\n".join(
            f"{p.name}: {p.read_text(errors='replace')[-1500:]}"
            for p in sorted(self.directory.glob("*.log"))
        )
        raise RuntimeError(f"{what} of the Ray cluster did not come up:\n{logs}")

    def alive_nodes(self) -> int:
        """Nodes the cluster's GCS counts alive."""
        from ray._raylet import GcsClient
        from ray.core.generated.gcs_pb2 import GcsNodeInfo

        try:
            nodes = GcsClient(address=self.address).get_all_node_info(
                timeout=10, state_filter=GcsNodeInfo.GcsNodeState.ALIVE
            )
        except Exception:
            return 0
        return len(nodes)

    def node_processes(self, name: str) -> list[psutil.Process]:
        """Every live process of node ``name`` (``ray start`` and what it
        started: the raylet, its agents, its workers)."""
        found: list[psutil.Process] = []
        for node, process in self.processes.items():
            if name not in ("*", node):
                continue
            try:
                root = psutil.Process(process.pid)
                found += [root, *root.children(recursive=True)]
            except psutil.Error:
                continue
        return found

    def kill_node(self, name: str) -> list[int]:
        """``kill -9`` every process of node ``name``, as when its machine dies;
        the ids of the processes killed."""
        victims = self.node_processes(name)
        _kill(victims)
        return [process.pid for process in victims]

    def stop(self) -> None:
        """Kill every process of the cluster and remove its directory."""
        for _ in range(3):  # a process may start another while the first are killed
            victims = self.node_processes("*")
            if not victims:
                break
            _kill(victims)
        for process in self.processes.values():
            process.wait(timeout=10)
        shutil.rmtree(self.directory, ignore_errors=True)


def _kill(processes: list[psutil.Process]) -> None:
    """SIGKILL, after SIGSTOP to all: none sees another die and reacts (a
    raylet's workers exit when it does; the test wants them killed)."""
    for signum in (signal.SIGSTOP, signal.SIGKILL):
        for process in processes:
            try:
                process.send_signal(signum)
            except psutil.Error:
                pass
    psutil.wait_procs(processes, timeout=10)
