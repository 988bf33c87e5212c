"""Entering a library's package without running its `__init__`, to import only the parts used.

`kubernetes/__init__.py` (kubernetes-client/python) imports every part of the client: `dynamic`
(with kubernetes_validate and jsonschema when they are installed), `stream` (websocket), `watch`,
`leaderelection`, `informer`. The gateway uses `client` and `config` only. Counted in
instructions (callgrind), the rest is 7 % of the service's start where kubernetes_validate is
installed (the development environment, where bench/startup.py runs), 1 % in the image.
"""

from __future__ import annotations

import importlib.util
import sys
import threading


def without_package_init(name: str) -> None:
    """Put package `name` in `sys.modules` without running its `__init__`, so that
    `import name.part` and `from name import part` load that part alone.

    Any other name asked of the package (`name.__version__`, a class its `__init__` imports)
    runs its `__init__` then, once, so it is the whole package from then on. A package already
    imported is left as it is; a name that is not an installed package is left for the import
    that follows to report.
    """
    if name in sys.modules:
        return
    spec = importlib.util.find_spec(name)
    if spec is None or spec.loader is None or spec.submodule_search_locations is None:
        return
    package = importlib.util.module_from_spec(spec)
    loader = spec.loader
    once = threading.Lock()  # two threads asking at once run the __init__ once

    def part_or_whole(attribute: str) -> object:
        if importlib.util.find_spec(f"{name}.{attribute}") is not None:
            return importlib.import_module(f"{name}.{attribute}")  # a part: that part alone
        with once:
            if "__getattr__" in vars(package):  # from now on the package's own names answer
                delattr(package, "__getattr__")
                loader.exec_module(package)
        return getattr(package, attribute)

    setattr(package, "__getattr__", part_or_whole)  # noqa: B010 (a module's own __getattr__)
    sys.modules[name] = package
