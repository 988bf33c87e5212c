"""`load_settings`: the YAML file read (a key written twice refused), then parsed
(`bot.config.parse`). The one module of `bot.config` that reads a file.
"""

from __future__ import annotations

from collections.abc import Hashable
from typing import Any

import yaml

from bot.config.model import Settings
from bot.config.parse import parse_settings
from bot.core import errors


def load_settings(path: str) -> Settings:
    """Read and parse the YAML file at `path`; reads that file, nothing else.

    Raises:
        ConfigError: the file is missing, unreadable or not YAML (one line), or its content is
            invalid (one line per problem). A key written twice in one mapping is refused.
    """
    try:
        with open(path, "rb") as file:
            data = file.read()
    except FileNotFoundError:
        raise errors.ConfigError(
            [f"{path}: no such file (start from config.example.yaml)"]
        ) from None
    except OSError as e:
        raise errors.ConfigError([f"{path}: cannot read it: {e.strerror or e}"]) from None
    try:
        raw = _load_yaml(data)
    except yaml.YAMLError as e:
        raise errors.ConfigError([f"{path}: not valid YAML: {_describe_yaml_error(e)}"]) from None
    except RecursionError:
        raise errors.ConfigError([f"{path}: not valid YAML: nested too deeply"]) from None
    except ValueError as e:  # a number of more than 4300 digits: Python's int limit
        raise errors.ConfigError([f"{path}: not valid YAML: {str(e).split(';')[0]}"]) from None
    return parse_settings(raw)


def _describe_yaml_error(e: yaml.YAMLError) -> str:
    if isinstance(e, yaml.MarkedYAMLError) and e.problem_mark is not None:
        mark = e.problem_mark
        return f"{e.problem} (line {mark.line + 1}, column {mark.column + 1})"
    return " ".join(str(e).split())


def _load_yaml(data: bytes) -> Any:
    """The file's data with libyaml's parser when PyYAML has it (a fleet's config of a thousand
    clusters parses in milliseconds, not a third of a second); a file it refuses is parsed
    again by PyYAML's own parser, whose messages (and line and column) are the ones we show.

    Raises:
        yaml.YAMLError, RecursionError, ValueError: as `yaml.load`.
    """
    try:
        return yaml.load(data, Loader=_FastUniqueKeyLoader)  # safe loaders: plain data only
    except yaml.YAMLError:
        return yaml.load(data, Loader=_UniqueKeyLoader)


class _UniqueKeys:
    """yaml.safe_load, except that a key given twice is an error, not silently the last one."""

    def construct_mapping(self, node: yaml.MappingNode, deep: bool = False) -> dict[Hashable, Any]:
        seen = set()
        for key_node, _ in node.value:
            if isinstance(key_node, yaml.ScalarNode) and key_node.value in seen:
                problem = f"found key {key_node.value!r} twice (the second would replace the first)"
                raise yaml.constructor.ConstructorError(None, None, problem, key_node.start_mark)
            seen.add(key_node.value if isinstance(key_node, yaml.ScalarNode) else None)
        return super().construct_mapping(node, deep=deep)  # type: ignore[misc, no-any-return]


class _UniqueKeyLoader(_UniqueKeys, yaml.SafeLoader):
    pass


class _FastUniqueKeyLoader(_UniqueKeys, getattr(yaml, "CSafeLoader", yaml.SafeLoader)):  # type: ignore[misc]
    pass
