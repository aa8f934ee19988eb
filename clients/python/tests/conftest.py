"""Fixtures: a real redis-server on a free loopback port, a client of it that notes what it sends, a unique key prefix
per test, and the hub itself."""
import json
import os
import pathlib
import queue
import shutil
import socket
import subprocess
import threading
import time
import urllib.request
import uuid

import pytest
import redis

REPO = pathlib.Path(__file__).resolve().parents[3]


def _need(tool):
    path = shutil.which(tool)
    if path is None:
        if os.environ.get("CI"):
            pytest.fail(f"{tool} is not installed; CI installs it (.ci/run)")
        pytest.skip(f"{tool} is not installed")
    return path


def _free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _poll(what, within, cond):
    deadline = time.monotonic() + within
    while True:
        try:
            if cond():
                return
        except (OSError, redis.exceptions.ConnectionError):
            pass
        if time.monotonic() > deadline:
            raise AssertionError(f"{what}: not within {within}s")
        time.sleep(0.05)


class RedisServer:
    def __init__(self, tmp):
        self.port = _free_port()
        self.url = f"redis://127.0.0.1:{self.port}/0"
        self.proc = subprocess.Popen(
            [_need("redis-server"), "--port", str(self.port), "--bind", "127.0.0.1", "--save", "", "--appendonly",
             "no", "--dir", str(tmp), "--loglevel", "warning"],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        client = self.client()
        try:
            _poll(f"redis-server on port {self.port} answers PING", 10, client.ping)
        except AssertionError:
            self.stop()
            raise
        finally:
            client.close()

    def client(self, **kw):
        return redis.Redis(host="127.0.0.1", port=self.port, **kw)

    def stop(self):
        self.proc.terminate()
        self.proc.wait(10)


@pytest.fixture(scope="session")
def redis_server(tmp_path_factory):
    server = RedisServer(tmp_path_factory.mktemp("redis"))
    yield server
    server.stop()


@pytest.fixture
def rdb(redis_server):
    client = redis_server.client()
    yield client
    client.close()


@pytest.fixture
def prefix():
    return "py" + uuid.uuid4().hex[:12]


class Recording(redis.Redis):
    """A client that notes every command it sends, and every pipeline it opens."""

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.sent = []

    def execute_command(self, *args, **options):
        self.sent.append(args[0])
        return super().execute_command(*args, **options)

    def pipeline(self, *args, **kwargs):
        self.sent.append("PIPELINE")
        return super().pipeline(*args, **kwargs)


@pytest.fixture
def recording(redis_server):
    """A client of the test's redis-server whose sent lists the commands it sent."""
    client = Recording(host="127.0.0.1", port=redis_server.port)
    yield client
    client.close()


class Hub:
    """The hub binary serving on a free port against the test's Redis, with its own key prefix."""

    def __init__(self, binary, redis_url, tmp):
        self.prefix = "pyhub" + uuid.uuid4().hex[:8]
        # The hub refuses HUB_* variables it does not know, so it gets a clean environment of its own.
        env = {"PATH": os.environ.get("PATH", ""), "HOME": str(tmp), "HUB_REDIS_PREFIX": self.prefix,
               "HUB_LOG_LEVEL": "warn"}
        self.stderr = open(tmp / "hub.stderr", "w+b")
        self.proc = subprocess.Popen([binary, "serve", "--listen", "127.0.0.1:0", "--redis-url", redis_url],
                                     env=env, stdout=subprocess.PIPE, stderr=self.stderr)
        lines = queue.Queue()
        threading.Thread(target=self._read, args=(lines,), daemon=True).start()
        self.url = None
        deadline = time.monotonic() + 30
        while self.url is None:
            try:
                line = lines.get(timeout=max(0.0, deadline - time.monotonic()))
            except queue.Empty:
                self.stop()
                raise AssertionError(f"hub serve printed no listening line within 30s; stderr: {self.log()}")
            if line is None:
                self.stop()
                raise AssertionError(f"hub serve exited before listening; stderr: {self.log()}")
            try:
                msg = json.loads(line)
            except ValueError:
                continue
            if msg.get("message") == "hub listening":
                self.url = msg["url"]
        _poll("hub /readyz answers 200", 15, lambda: urllib.request.urlopen(self.url + "/readyz", timeout=2).status == 200)

    def _read(self, lines):
        for line in self.proc.stdout:
            lines.put(line)
        lines.put(None)

    def log(self):
        self.stderr.seek(0)
        return self.stderr.read().decode(errors="replace")[-4000:]

    def stop(self):
        if self.proc.poll() is None:
            self.proc.terminate()  # SIGTERM: the hub ends its streams and exits within shutdown_timeout
            try:
                self.proc.wait(15)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        self.stderr.close()


@pytest.fixture(scope="session")
def hub_binary(tmp_path_factory):
    """The hub built from this work tree (or the binary PYTEST_HUB_BINARY names, built elsewhere)."""
    if os.environ.get("PYTEST_HUB_BINARY"):
        return os.environ["PYTEST_HUB_BINARY"]
    go = _need("go")
    out = tmp_path_factory.mktemp("hubbin") / "hub"
    built = subprocess.run([go, "build", "-o", str(out), "."], cwd=REPO, capture_output=True, text=True)
    if built.returncode != 0:
        pytest.fail(f"go build -o {out} . failed:\n{built.stderr}")
    return str(out)


@pytest.fixture
def hub(hub_binary, redis_server, tmp_path):
    h = Hub(hub_binary, redis_server.url, tmp_path)
    yield h
    h.stop()
