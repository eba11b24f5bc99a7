"""How pickled ``ToolManager``s are rebuilt (see ``ToolManager.__reduce__``),
so that a manager can be captured in a Ray task or actor, or sent to
another process."""

from pathlib import Path
from typing import Any, List, Optional, Tuple

from ._errors import ConfigError
from ._native import ToolController, ToolManager

_SHARE = (
    "a manager made by ToolManager.from_config is rebuilt from that file, so the config and "
    "the files it names must be at the same path on every machine (a shared disk); or build "
    "the manager from toolhost.load_module modules, which pickle with their component's bytes"
)


def manager_from_config(path: str, text: str, controller: Optional[ToolController]) -> ToolManager:
    """The manager of the config at ``path``, which must still read ``text``;
    then the pickled controller (its rules as they were) put in its place."""
    try:
        current = Path(path).read_text(encoding="utf-8")
    except OSError as e:
        raise ConfigError(f"cannot rebuild a pickled ToolManager: its config {path} cannot be read here ({e}); {_SHARE}") from None
    if current != text:
        raise ConfigError(
            f"cannot rebuild a pickled ToolManager: the config {path} is not the one it was made "
            f"from (it changed since, or this machine has another); {_SHARE}"
        )
    manager = ToolManager.from_config(path)
    if controller is not None:
        manager.tool_controller = controller
    return manager


def manager_from_tools(entries: List[Tuple[str, Any, bool]], controller: Optional[ToolController]) -> ToolManager:
    """A manager with ``entries`` (name, the object registered, whether it is
    a native tool) registered in order, and ``controller``."""
    manager = ToolManager(tool_controller=controller)
    wanted = {name: obj for name, obj, _ in entries}
    registered = set()
    for name, obj, native in entries:
        if native:
            manager.register(obj, name)
        elif id(obj) not in registered:
            registered.add(id(obj))
            manager.register(obj)
            # A tool of the module removed before the pickle stays removed.
            for tool in obj.tools:
                if wanted.get(tool) is not obj:
                    manager.unregister(tool)
    return manager
