"""Fixtures of the zarr_rs tests.

Tests that need a service are marked and run when the test command has started it:
``s3`` tests need the local S3 server (``scripts/s3-server``; ``ZARR_S3_TEST=1`` and
``AWS_ENDPOINT_URL``), ``cli`` tests the ``zarr`` command (``ZARR_CLI_BIN``). When the
variable that says the service is there is set, a missing service is a failure, not a skip.
"""

from __future__ import annotations

import os
import uuid

import numpy as np
import pytest


def pytest_configure(config):
    config.addinivalue_line("markers", "s3: needs the local S3 server (scripts/s3-server)")
    config.addinivalue_line("markers", "cli: needs the zarr command (ZARR_CLI_BIN)")


@pytest.fixture
def rng():
    return np.random.default_rng(7)


@pytest.fixture
def s3_url():
    """A fresh s3:// prefix in a new bucket of the local S3 server."""
    if os.environ.get("ZARR_S3_TEST") != "1":
        pytest.skip("needs the local S3 server: run through scripts/test (ZARR_S3_TEST=1)")
    endpoint = os.environ.get("AWS_ENDPOINT_URL")
    assert endpoint, "ZARR_S3_TEST=1 but AWS_ENDPOINT_URL is not set (eval \"$(scripts/s3-server)\")"
    import urllib.request

    bucket = f"zarr-rs-py-{uuid.uuid4().hex[:12]}"
    req = urllib.request.Request(f"{endpoint}/{bucket}", method="PUT")
    urllib.request.urlopen(req).read()
    return f"s3://{bucket}/data"


@pytest.fixture
def zarr_cli():
    """The path of the `zarr` command."""
    path = os.environ.get("ZARR_CLI_BIN")
    if not path:
        pytest.skip("needs the zarr command: run through scripts/test (ZARR_CLI_BIN)")
    assert os.access(path, os.X_OK), f"ZARR_CLI_BIN={path} is not an executable"
    return path
