"""One local Ray instance for the Ray tests, on loopback only.

Ray is started once for this package (starting it takes seconds on a small
machine) and shut down after its last test.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Iterator
from typing import Any

import pytest

# Read by Ray when it is imported and by the processes it starts: a
# single-node instance bound to 127.0.0.1 (not the host's address), and no
# usage statistics sent anywhere.
os.environ["RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER"] = "0"
os.environ["RAY_USAGE_STATS_ENABLED"] = "0"


@pytest.fixture(scope="package")
def ray_instance() -> Iterator[Any]:
    import ray

    ray.init(
        num_cpus=2,
        include_dashboard=False,
        log_to_driver=False,
        logging_level=logging.ERROR,
        namespace="toolwire-tests",
    )
    try:
        yield ray
    finally:
        ray.shutdown()
