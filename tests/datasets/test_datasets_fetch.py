"""``nolo data fetch``: downloads with checksums, tested against a local HTTP server on the loopback address."""

import functools
import http.server
import threading
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner

from nolo.cli import main
from nolo.datasets import load_dataset
from nolo.datasets.errors import DatasetNotFoundError
from nolo.datasets.fetch import fetch
from nolo.datasets.idx import write_idx

IDX = ("train-images-idx3-ubyte.gz", "train-labels-idx1-ubyte.gz", "t10k-images-idx3-ubyte.gz",
       "t10k-labels-idx1-ubyte.gz")


@pytest.fixture()
def server(tmp_path):
    """A loopback HTTP server over a directory holding small IDX fixtures; yields (base URL, served directory)."""
    served = tmp_path / "served"
    served.mkdir()
    rng = np.random.default_rng(0)
    for split, n in (("train", 30), ("t10k", 12)):
        write_idx(served / f"{split}-images-idx3-ubyte.gz", rng.integers(0, 256, (n, 28, 28), dtype=np.uint8))
        write_idx(served / f"{split}-labels-idx1-ubyte.gz", rng.integers(0, 10, n, dtype=np.uint8))
    handler = functools.partial(http.server.SimpleHTTPRequestHandler, directory=str(served))
    handler.log_message = lambda *a, **k: None
    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{httpd.server_address[1]}/", served
    finally:
        httpd.shutdown()
        httpd.server_close()


def test_fetch_downloads_the_files_the_loader_reads(server, tmp_path):
    url, _ = server
    data = tmp_path / "data"
    res = CliRunner().invoke(main, ["data", "fetch", "fashion-mnist", "--data-dir", str(data), "--base-url", url,
                                    "--quiet"])
    assert res.exit_code == 0, res.output
    assert res.output.count("downloaded, no pinned checksum") == 4
    X, y = load_dataset("fashion-mnist", data_dir=data, split="test", features="raw")
    assert X.shape == (12, 784) and y.shape == (12,)
    again = fetch("fashion-mnist", data, base_url=url)
    assert not any(f["downloaded"] for f in again)  # present: not fetched again


def test_a_file_that_fails_its_checksum_is_not_kept(server, tmp_path):
    url, _ = server
    data = tmp_path / "data"
    with pytest.raises(DatasetNotFoundError, match="does not have the published SHA-256"):
        fetch("mnist", data, base_url=url)  # the fixtures are not the published MNIST test files
    assert not (data / "mnist" / "t10k-images-idx3-ubyte.gz").exists()
    res = CliRunner().invoke(main, ["data", "fetch", "mnist", "--data-dir", str(data), "--base-url", url, "--quiet"])
    assert res.exit_code == 1 and "published SHA-256" in res.output and "Traceback" not in res.output


def test_the_published_mnist_test_files_pass(tmp_path):
    import os
    import shutil

    src = Path(os.environ.get("NOLO_DATA_DIR", "")) / "mnist"
    if not (src / "t10k-images-idx3-ubyte.gz").exists():
        pytest.skip("the MNIST test files are not in NOLO_DATA_DIR")
    served = tmp_path / "served"
    served.mkdir()
    for f in ("t10k-images-idx3-ubyte.gz", "t10k-labels-idx1-ubyte.gz"):
        shutil.copy(src / f, served / f)
    for f in ("train-images-idx3-ubyte.gz", "train-labels-idx1-ubyte.gz"):  # small stand-ins: no pinned checksum
        write_idx(served / f, np.zeros((2, 28, 28) if "images" in f else 2, np.uint8))
    handler = functools.partial(http.server.SimpleHTTPRequestHandler, directory=str(served))
    handler.log_message = lambda *a, **k: None
    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    try:
        files = fetch("mnist", tmp_path / "data", base_url=f"http://127.0.0.1:{httpd.server_address[1]}/")
    finally:
        httpd.shutdown()
        httpd.server_close()
    verified = {Path(f["file"]).name: f["verified"] for f in files}
    assert verified == {"train-images-idx3-ubyte.gz": False, "train-labels-idx1-ubyte.gz": False,
                        "t10k-images-idx3-ubyte.gz": True, "t10k-labels-idx1-ubyte.gz": True}


def test_datasets_without_a_download_say_so(tmp_path):
    with pytest.raises(DatasetNotFoundError, match="Kaggle.*usps.h5"):
        fetch("usps", tmp_path)
    res = CliRunner().invoke(main, ["data", "fetch", "digits", "--data-dir", str(tmp_path)])
    assert res.exit_code == 2 and "built in" in res.output
    res = CliRunner().invoke(main, ["data", "fetch", "nope", "--data-dir", str(tmp_path)])
    assert res.exit_code == 2 and "unknown dataset" in res.output
    res = CliRunner().invoke(main, ["data", "fetch", "mnist", "usps", "--base-url", "http://127.0.0.1:9/"])
    assert res.exit_code == 2 and "one NAME" in res.output


def test_an_unreachable_source_is_one_line(tmp_path):
    res = CliRunner().invoke(main, ["data", "fetch", "fashion-mnist", "--data-dir", str(tmp_path), "--base-url",
                                    "http://127.0.0.1:9/", "--quiet"])
    assert res.exit_code == 1 and "could not download" in res.output and "Traceback" not in res.output
