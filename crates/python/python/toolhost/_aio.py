"""The coroutines behind ``ToolManager.acall`` and the like.

The native side can hand a call to its own threads only from inside a
running event loop; these coroutines start the call when they are awaited,
so that ``asyncio.run(manager.acall(call))`` works as well as awaiting it
inside a task.
"""

from typing import Any, Awaitable, Callable


async def started_when_awaited(start: Callable[[Any], Awaitable[Any]], argument: Any) -> Any:
    """Awaits ``start(argument)``, called inside the running loop."""
    return await start(argument)
