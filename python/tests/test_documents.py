import json
import subprocess

import pytest

import acco


def cli(binary, *args):
    return subprocess.run([str(binary), *args], capture_output=True, text=True)


def test_probe_of_a_sysroot_is_the_document_acco_probe_json_prints(workstation, acco_binary):
    document = acco.probe(sysroot=str(workstation))
    assert document["schema"] == "acco.probe/1"
    assert document["machine"]["hostname"] == "ws-01"
    printed = cli(acco_binary, "probe", "--sysroot", str(workstation), "--json")
    assert document == json.loads(printed.stdout)
    assert list(document) == list(json.loads(printed.stdout))  # the same key order


def test_probe_of_the_live_machine_says_what_cuda_driver_it_found():
    document = acco.probe(nvml="off")
    assert document["schema"] == "acco.probe/1"
    assert set(document["cuda_driver"]) == {"library", "version", "cuda_version", "device_count",
                                            "error"}


def test_doctor_of_a_sysroot_is_the_document_acco_doctor_json_prints(workstation, acco_binary):
    document = acco.doctor(sysroot=str(workstation))
    printed = json.loads(
        cli(acco_binary, "doctor", "--sysroot", str(workstation), "--json", "--no-bench").stdout)
    # The same document but the reason the quick bench was skipped (each names its own flag).
    assert document["quick_bench"] == {"note": "skipped (bench=False)", "results": []}
    assert printed["quick_bench"] == {"note": "skipped (--no-bench)", "results": []}
    document.pop("quick_bench")
    printed.pop("quick_bench")
    assert document == printed
    assert list(document) == list(printed)
    assert document["fix_first"]  # the workstation has things to fix
    assert document["summary"].endswith("start with " + ", ".join(document["fix_first"]))


def test_doctor_of_the_live_machine_has_a_one_line_summary(tmp_path):
    document = acco.doctor(nvml="off", tune_dir=str(tmp_path / "profiles"))
    assert "\n" not in document["summary"]
    rules = [f["rule"] for f in document["findings"]]
    assert "tune-profile-missing" in rules  # no profile in that directory
    assert str(tmp_path / "profiles") in next(
        f["message"] for f in document["findings"] if f["rule"] == "tune-profile-missing")


def test_a_quick_bench_returns_the_bench_document():
    document = acco.bench(cases=["h2d_pinned_*"], backend="host", profile=False)
    assert document["schema"] == "acco.bench/1"
    results = document["results"]
    assert results and all(r["case"].startswith("h2d_pinned_") for r in results)
    assert all(r["status"] == "ok" and r["median_bytes_per_second"] > 0 for r in results)


def test_a_bench_pattern_that_matches_nothing_is_an_invalid_argument():
    with pytest.raises(acco.InvalidArgumentError) as raised:
        acco.bench(cases=["no_such_case_*"], backend="host", profile=False)
    assert isinstance(raised.value, ValueError)
    assert str(raised.value) == "no case matches the patterns"


def test_a_bad_link_names_the_value_and_the_accepted_forms():
    with pytest.raises(acco.InvalidArgumentError, match="fast"):
        acco.bench(link="fast", backend="host", profile=False)


def test_a_missing_profile_file_is_not_found():
    with pytest.raises(acco.NotFoundError, match="/no/such/profile.json"):
        acco.bench(backend="host", profile="/no/such/profile.json")
