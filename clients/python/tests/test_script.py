"""The package runs the hub's own publish script: its copy is pubsub/publish.lua byte for byte, and so is the copy a
built wheel carries."""
import email
import shutil
import subprocess
import sys
import zipfile

from conftest import REPO

import syncverse_hub

HUB_SCRIPT = REPO / "pubsub" / "publish.lua"
PACKAGE_SCRIPT = REPO / "clients" / "python" / "src" / "syncverse_hub" / "publish.lua"


def test_package_script_is_the_hubs():
    hub, ours = HUB_SCRIPT.read_bytes(), PACKAGE_SCRIPT.read_bytes()
    assert ours == hub, (f"{PACKAGE_SCRIPT} differs from {HUB_SCRIPT}; copy it again: "
                         f"cp pubsub/publish.lua clients/python/src/syncverse_hub/publish.lua")
    assert syncverse_hub.publish_script().encode() == hub


def test_sharded_script_differs_only_in_spublish():
    plain, sharded = syncverse_hub.publish_script(), syncverse_hub.publish_script(sharded=True)
    assert "redis.call('PUBLISH'," in plain
    assert sharded == plain.replace("redis.call('PUBLISH',", "redis.call('SPUBLISH',", 1) != plain


def test_wheel_ships_the_script_and_metadata(tmp_path):
    # Built with the PEP 517 hook pip calls, in a copy of the package so the work tree gets no build/ or egg-info.
    src = tmp_path / "src"
    shutil.copytree(REPO / "clients" / "python", src, ignore=shutil.ignore_patterns("tests", "__pycache__", "*.egg-info"))
    out = tmp_path / "dist"
    out.mkdir()
    built = subprocess.run([sys.executable, "-c", "import sys, setuptools.build_meta as b; print(b.build_wheel(sys.argv[1]))",
                            str(out)], cwd=src, capture_output=True, text=True)
    assert built.returncode == 0, f"build_wheel failed:\n{built.stdout}\n{built.stderr}"
    wheel = out / built.stdout.strip().splitlines()[-1]
    with zipfile.ZipFile(wheel) as z:
        names = z.namelist()
        assert z.read("syncverse_hub/publish.lua") == HUB_SCRIPT.read_bytes()
        meta = email.message_from_bytes(z.read(next(n for n in names if n.endswith(".dist-info/METADATA"))))
    assert meta["Name"] == "syncverse-hub"
    assert meta["License"] == "Apache-2.0"
    assert [r.split(">")[0].split(" ")[0] for r in meta.get_all("Requires-Dist")] == ["redis"]
    assert "syncverse_hub/py.typed" in names
