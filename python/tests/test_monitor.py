import json
import subprocess
import time

import pytest

import acco


def test_a_sample_has_the_simulated_devices_and_the_host():
    monitor = acco.Monitor(interval=0.1, simulate=2, nvml="off")
    assert monitor.nvml == "off"
    sample = monitor.sample()
    assert [d["device"] for d in sample["devices"]] == ["0", "1"]
    assert all(d["power_watts"] > 0 for d in sample["devices"])
    assert "host" in sample and sample["time_unix_nanos"] > 0


def test_as_a_context_manager_it_samples_on_its_own_thread():
    monitor = acco.Monitor(interval=0.05, simulate=1, nvml="off", host=False)
    started = time.time()
    with monitor:
        time.sleep(0.3)
    taken = monitor.samples()
    assert len(taken) >= 3
    times = [s["time_unix_nanos"] for s in taken]
    assert times == sorted(times)
    assert monitor.samples(since=time.time() + 10) == []
    assert len(monitor.samples(since=started)) == len(taken)
    time.sleep(0.15)
    assert len(monitor.samples()) == len(taken)  # stopped on exit


def test_bad_monitor_arguments_are_invalid():
    with pytest.raises(acco.InvalidArgumentError, match="interval"):
        acco.Monitor(interval=0)
    with pytest.raises(acco.InvalidArgumentError, match="'maybe'"):
        acco.Monitor(nvml="maybe")


def test_analyze_is_the_document_acco_analyze_json_prints(tmp_path, acco_binary):
    recording = tmp_path / "run.jsonl"
    subprocess.run([str(acco_binary), "record", "--simulate", "2", "--fast", "--duration", "90s",
                    "--interval", "1s", "--out", str(recording)], check=True,
                   capture_output=True)
    document = acco.analyze(str(recording), window=30)
    printed = subprocess.run([str(acco_binary), "analyze", str(recording), "--json"],
                             capture_output=True, text=True, check=True)
    assert document == json.loads(printed.stdout)
    assert document["schema"].startswith("acco.analyze/")


def test_analyze_of_a_missing_file_raises_not_found_with_the_cli_message(tmp_path, acco_binary):
    missing = tmp_path / "none.jsonl"
    with pytest.raises(acco.NotFoundError) as raised:
        acco.analyze(str(missing))
    printed = subprocess.run([str(acco_binary), "analyze", str(missing)], capture_output=True,
                             text=True)
    assert printed.stderr == f"acco: {raised.value}\n"
