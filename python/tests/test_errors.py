import subprocess

import pytest

import acco

CODES = {
    acco.InvalidArgumentError: "invalid argument",
    acco.NotFoundError: "not found",
    acco.UnavailableError: "unavailable",
    acco.UnsupportedError: "unsupported",
    acco.DeviceError: "device error",
    acco.InternalError: "internal error",
    acco.UsageError: "usage error",
    acco.CannotWriteError: "cannot write",
}


def test_there_is_one_error_class_per_code_below_acco_error():
    for cls, code in CODES.items():
        assert issubclass(cls, acco.Error)
        assert cls.code == code
        assert cls.__module__ == "acco"
    assert not issubclass(acco.Error, RuntimeError)


def test_builtin_bases_let_plain_python_code_catch_what_fits():
    assert issubclass(acco.InvalidArgumentError, ValueError)
    assert issubclass(acco.NotFoundError, LookupError)
    assert issubclass(acco.UnsupportedError, NotImplementedError)


def test_an_empty_sysroot_raises_not_found_with_the_message_the_cli_prints(tmp_path, acco_binary):
    with pytest.raises(acco.NotFoundError) as raised:
        acco.probe(sysroot=str(tmp_path))
    printed = subprocess.run([str(acco_binary), "probe", "--sysroot", str(tmp_path)],
                             capture_output=True, text=True)
    assert printed.returncode == 66
    assert printed.stderr == f"acco: {raised.value}\n"
    assert type(raised.value) is acco.NotFoundError
    assert raised.value.code == "not found"


def test_a_snapshot_that_is_not_one_raises_invalid_argument_like_the_cli(tmp_path, acco_binary):
    snapshot = tmp_path / "snapshot.json"
    snapshot.write_text("{}")
    with pytest.raises(acco.InvalidArgumentError) as raised:
        acco.probe(snapshot=str(snapshot))
    printed = subprocess.run([str(acco_binary), "probe", "--from", str(snapshot)],
                             capture_output=True, text=True)
    assert printed.returncode == 65
    assert printed.stderr == f"acco: {raised.value}\n"


def test_a_bad_nvml_mode_is_an_invalid_argument():
    with pytest.raises(acco.InvalidArgumentError, match="'sometimes' is not one of auto, on, off"):
        acco.probe(nvml="sometimes")
