"""The type stubs cover the public API, and every public name has a
docstring."""
import ast
import inspect
import os

import gopt

PACKAGE = os.path.dirname(os.path.realpath(gopt.__file__))


def _stub_names(module):
    tree = ast.parse(open(os.path.join(PACKAGE, module + ".pyi")).read())
    names, members = set(), {}
    for node in tree.body:
        if isinstance(node, ast.ImportFrom):
            names.update(a.asname or a.name for a in node.names)
        elif isinstance(node, (ast.FunctionDef, ast.ClassDef)):
            names.add(node.name)
            if isinstance(node, ast.ClassDef):
                members[node.name] = {
                    n.name for n in node.body if isinstance(n, ast.FunctionDef)}
    return names, members


def test_every_public_name_has_a_stub_and_a_docstring():
    names, members = _stub_names("__init__")
    _, training_members = _stub_names("training")
    members.update(training_members)
    for name in gopt.__all__:
        assert name in names, f"gopt.{name} has no stub"
        obj = getattr(gopt, name)
        if inspect.isclass(obj) or inspect.isfunction(obj):
            assert obj.__doc__, f"gopt.{name} has no docstring"
        if inspect.isclass(obj) and not issubclass(obj, Exception):
            for attr, value in vars(obj).items():
                if attr.startswith("_") or not callable(value) and not isinstance(
                        value, (property, classmethod)):
                    continue
                assert attr in members.get(name, set()), \
                    f"gopt.{name}.{attr} has no stub"
                assert getattr(obj, attr).__doc__, \
                    f"gopt.{name}.{attr} has no docstring"
