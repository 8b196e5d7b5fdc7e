"""Checks Python programs' use of a generated Pulumi SDK against that SDK, without running them
(test/pulumi/python-sdk.test.ts): each `<alias>.<Name>(...)` names a class of the SDK and binds to
its parameters (a component's `_internal_init`, an args class's `__init__`: unknown keywords and
missing required ones fail), and each attribute read of a variable assigned such a component is one
of its outputs.

    python check_sdk_calls.py <sdk module> <program.py>...

Prints `checked <n> calls, <m> outputs` and exits 0, or prints one line per problem
(`<file>:<line>: ...`) and exits 1.
"""

import ast
import importlib
import inspect
import sys

import pulumi


def sdk_aliases(tree, module):
    """The names a program imports the SDK module as."""
    names = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for a in node.names:
                if a.name == module:
                    names.add(a.asname or a.name)
    return names


def sdk_class(node, aliases, sdk):
    """The SDK class a call's function names (`lvm.NodeSet`), its name, or (None, None)."""
    f = node.func
    if isinstance(f, ast.Attribute) and isinstance(f.value, ast.Name) and f.value.id in aliases:
        return getattr(sdk, f.attr, None), f.attr
    return None, None


def check(path, module, sdk):
    tree = ast.parse(open(path, encoding="utf-8").read(), path)
    aliases = sdk_aliases(tree, module)
    problems, calls, outputs = [], 0, 0
    if not aliases:
        return [f"{path}: does not import {module}"], 0, 0
    components = {}  # variable -> component class
    for node in ast.walk(tree):
        if not isinstance(node, ast.Call):
            continue
        cls, name = sdk_class(node, aliases, sdk)
        if name is None:
            continue
        where = f"{path}:{node.lineno}"
        if not inspect.isclass(cls):
            problems.append(f"{where}: {module} has no class {name}")
            continue
        calls += 1
        is_component = issubclass(cls, pulumi.Resource)
        sig = inspect.signature(cls._internal_init if is_component else cls.__init__)
        # self (and for a component its resource name, given positionally in every program here).
        positional = [None] * (1 + len(node.args))
        keywords = {k.arg: None for k in node.keywords if k.arg is not None}
        try:
            sig.bind(*positional, **keywords)
        except TypeError as e:
            problems.append(f"{where}: {name}(...): {e}")
    for node in ast.walk(tree):
        if (
            isinstance(node, ast.Assign)
            and len(node.targets) == 1
            and isinstance(node.targets[0], ast.Name)
            and isinstance(node.value, ast.Call)
        ):
            cls, _ = sdk_class(node.value, aliases, sdk)
            if inspect.isclass(cls) and issubclass(cls, pulumi.Resource):
                components[node.targets[0].id] = cls
    for node in ast.walk(tree):
        if (
            isinstance(node, ast.Attribute)
            and isinstance(node.ctx, ast.Load)
            and isinstance(node.value, ast.Name)
            and node.value.id in components
        ):
            cls = components[node.value.id]
            outputs += 1
            if not isinstance(inspect.getattr_static(cls, node.attr, None), property):
                problems.append(f"{path}:{node.lineno}: {cls.__name__} has no output {node.attr}")
    return problems, calls, outputs


def main(argv):
    module, programs = argv[1], argv[2:]
    sdk = importlib.import_module(module)
    problems, calls, outputs = [], 0, 0
    for path in programs:
        p, c, o = check(path, module, sdk)
        problems += p
        calls += c
        outputs += o
    for p in problems:
        print(p)
    print(f"checked {calls} calls, {outputs} outputs")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
