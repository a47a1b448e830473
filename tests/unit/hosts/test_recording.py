"""Recording this machine as a demo site (``ari-jupyter probe --record-site``): the replay gives
the same probe results, commands that hung replay as hanging, and no secret reaches the file.
The machine here is real processes: stand-in SLURM programs on PATH, run by LocalHost."""
from __future__ import annotations

import json
import re
import stat

import pytest

from ari_jupyter.cli import main
from ari_jupyter.slurm.allocation import Allocation
from ari_jupyter.hosts.host import LocalHost
from ari_jupyter.hosts.recorded_site import RecordedSite
from ari_jupyter.probes import ProbeContext, run_probes_sync
from ari_jupyter.probes import modules as modules_probe
from ari_jupyter.hosts.recording import HANG_DELAY_S, RecordingHost
from ari_jupyter.base.redact import MASK

from probe_support import OUTPUTS

TOKEN = "hf_" + "Q" * 34  # a token-shaped secret that a command prints and the env holds

STAND_INS = {
    "sbatch": "case \"$1\" in --version) echo 'slurm 22.05.8';; --help) echo '  --gpu-bind=...';;\n"
              "  *) echo 'sbatch: Job 7 to start at 2026-11-29T10:00:00 using 1 processors on nodes n1 "
              "in partition small' >&2;; esac",
    "sinfo": "case \"$*\" in *%G*) echo '(null)';; *) cat {outputs}/sinfo/testbed_nogres.txt;; esac",
    "squeue": "echo '25:00'",
    "nvidia-smi": "sleep 30",
    "ari": f"echo 'ari 0.9 (token {TOKEN})'",
}


@pytest.fixture
def machine(tmp_path, monkeypatch):
    """LocalHost over stand-in programs and an allocation's environment (with a secret)."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    sinfo_table = OUTPUTS / "sinfo" / "testbed_nogres.txt"
    for name, body in STAND_INS.items():
        script = bin_dir / name
        script.write_text("#!/bin/sh\n" + body.replace("{outputs}", str(OUTPUTS)) + "\n")
        script.chmod(script.stat().st_mode | stat.S_IXUSR)
    assert sinfo_table.is_file()
    env = {"PATH": f"{bin_dir}:/usr/bin:/bin", "HOME": str(tmp_path / "home"),
           "SLURM_JOB_ID": "4242", "SLURM_JOB_NUM_NODES": "2", "SLURM_JOB_NODELIST": "n[1-2]",
           "SLURM_JOB_PARTITION": "small", "SLURM_TASKS_PER_NODE": "2(x2)", "SLURM_NTASKS": "4",
           "HF_TOKEN": TOKEN, "ARI_API_KEY": TOKEN, "JUPYTER_TOKEN": "abc" * 8, "UNRELATED": "x"}
    (tmp_path / "home").mkdir()
    monkeypatch.chdir(tmp_path)
    modules_probe.clear_cache()
    return LocalHost(env)


def _probe(host, tmp_path):
    ctx = ProbeContext(allocation=Allocation.from_env(host.env), timeout=0.5, module_cache=False,
                       checkpoint_dir=str(tmp_path / "ckpt"))
    results = sorted((r.to_json() for r in run_probes_sync(host, ctx)), key=lambda r: r["id"])
    return json.loads(_same_clock(json.dumps(results)))


def _same_clock(text: str) -> str:
    """A live timeout reports the time it really took (0.5 s, or 0.6 s with the kill grace);
    the replay waits the timeout exactly. Everything else must match to the byte."""
    text = re.sub(r"(within|after) \d+\.\ds", r"\1 T", text)
    return re.sub(r'"seconds": "\d+\.\d"', '"seconds": "T"', text)  # the same, as a parameter


def test_a_replayed_recording_gives_the_same_results(machine, tmp_path):
    recorder = RecordingHost(machine)
    live = _probe(recorder, tmp_path)
    site = json.loads(json.dumps(recorder.to_site("here")))  # what the file holds
    replayed = _probe(RecordedSite.from_dict(site), tmp_path)
    assert replayed == live
    statuses = {r["id"]: r["status"] for r in live}
    assert statuses["gpus"] == "unknown" and statuses["sbatch"] == "ok", statuses  # a hang, an answer
    hung = [c for c in site["commands"] if c["argv"][0] == "nvidia-smi"]
    assert hung and all(c == {"argv": c["argv"], "delay": HANG_DELAY_S} for c in hung)


def test_the_recording_keeps_no_secret_and_only_the_variables_that_matter(machine, tmp_path):
    recorder = RecordingHost(machine)
    _probe(recorder, tmp_path)
    text = json.dumps(recorder.to_site("here"))
    assert TOKEN not in text and "abc" * 8 not in text
    env = recorder.to_site("here")["env"]
    assert env["SLURM_JOB_ID"] == "4242" and env["ARI_API_KEY"] == MASK  # kept, value masked
    assert not {"HF_TOKEN", "JUPYTER_TOKEN", "UNRELATED"} & set(env)  # not what probes read
    ari = next(c for c in recorder.to_site("here")["commands"] if c["argv"][0] == "ari")
    assert "token" in ari["stdout"] and TOKEN not in ari["stdout"]


def test_cli_records_then_replays_and_never_overwrites_silently(machine, tmp_path, monkeypatch, capsys):
    for name, value in machine.env.items():
        monkeypatch.setenv(name, value)
    site_file = tmp_path / "mycluster.json"
    args = ["probe", "--json", "--timeout", "0.5", "--checkpoint-dir", str(tmp_path / "ckpt")]
    assert main([*args, "--record-site", str(site_file)]) in (0, 1)
    live = json.loads(capsys.readouterr().out)
    assert json.loads(site_file.read_text())["name"] == "mycluster"

    assert main([*args, "--site", str(site_file)]) in (0, 1)
    replayed = json.loads(capsys.readouterr().out)
    assert _same_clock(json.dumps(replayed["probes"])) == _same_clock(json.dumps(live["probes"]))
    assert replayed["allocation"] == live["allocation"]

    before = site_file.read_text()
    assert main([*args, "--record-site", str(site_file)]) == 2
    assert "exists; use --force" in capsys.readouterr().err and site_file.read_text() == before
    assert main([*args, "--record-site", str(tmp_path / "x.json"), "--site", "sx40"]) == 2
    assert "cannot be used with --site" in capsys.readouterr().err
    assert main([*args, "--record-site", str(tmp_path / "no" / "such" / "dir.json")]) == 2
    assert "cannot write" in capsys.readouterr().err
