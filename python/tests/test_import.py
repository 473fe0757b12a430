import pathlib

import acco


def test_the_package_is_the_one_of_this_tree_with_its_compiled_core():
    assert pathlib.Path(acco.__file__).name == "__init__.py"
    assert pathlib.Path(acco._core.__file__).name.startswith("_core")
    assert acco._core.__file__.endswith(".so")


def test_every_public_name_is_there_and_documented():
    for name in acco.__all__:
        obj = getattr(acco, name)
        assert obj.__doc__, name


def test_the_stub_names_every_public_name_of_the_core():
    stub = (pathlib.Path(acco.__file__).parent / "_core.pyi").read_text()
    for name in dir(acco._core):
        if not name.startswith("__"):
            assert name in stub, name
