"""Descriptive statistics of a list of numbers: a toolhost module in Python.

Tools: `mean`, `median`, `stdev`, `percentiles` and `summary`; built with
componentize-py (`cargo xtask build-examples python`).
"""

import math
import statistics
from typing import Annotated, Literal

from toolhost_guest import Toolbox, ToolError

tools = Toolbox()

Numbers = Annotated[list[float], "The numbers (at least one)."]


def _data(numbers: list[float], at_least: int = 1) -> list[float]:
    """The numbers, checked: finite, and at least `at_least` of them."""
    if len(numbers) < at_least:
        raise ToolError(
            f"need at least {at_least} number{'s' if at_least > 1 else ''}, got {len(numbers)}"
        )
    for i, x in enumerate(numbers):
        if not math.isfinite(x):
            raise ToolError(f"numbers[{i}] is not a finite number")
    return numbers


# Each tool runs a few times at build time with typical numbers (`warm_up`),
# so that every call's fresh instance starts from a warmed interpreter.
SAMPLE = {"numbers": [3, 1.5, 4, 2.25, 8]}


@tools.tool(warm_up=SAMPLE)
def mean(numbers: Numbers) -> float:
    """The arithmetic mean (average) of a list of numbers."""
    return statistics.fmean(_data(numbers))


@tools.tool(warm_up=SAMPLE)
def median(numbers: Numbers) -> float:
    """The median of a list of numbers: the middle value, or the mean of the
    two middle values when there is an even count."""
    return float(statistics.median(_data(numbers)))


@tools.tool(warm_up=[SAMPLE, {**SAMPLE, "kind": "population"}])
def stdev(
    numbers: Annotated[list[float], "The numbers (at least two for a sample)."],
    kind: Annotated[
        Literal["sample", "population"],
        "'sample' (n - 1 in the denominator) or 'population' (n).",
    ] = "sample",
) -> float:
    """The standard deviation of a list of numbers."""
    if kind == "population":
        return statistics.pstdev(_data(numbers))
    return statistics.stdev(_data(numbers, at_least=2))


@tools.tool(warm_up=[SAMPLE, {**SAMPLE, "percents": [10, 90]}])
def percentiles(
    numbers: Numbers,
    percents: Annotated[
        list[float], "Which percentiles, each from 0 to 100 (50 is the median)."
    ] = [25.0, 50.0, 75.0],  # noqa: B006 - never mutated
) -> dict[str, float]:
    """Percentiles of a list of numbers, by linear interpolation between the
    closest ranks. Returns an object from each percent to its value."""
    data = sorted(_data(numbers))
    result = {}
    for p in percents:
        if not 0 <= p <= 100:
            raise ToolError(f"percent {p:g} is out of range: give percents from 0 to 100")
        rank = (len(data) - 1) * p / 100
        low = math.floor(rank)
        high = min(low + 1, len(data) - 1)
        result[f"{p:g}"] = data[low] + (data[high] - data[low]) * (rank - low)
    return result


@tools.tool(warm_up=SAMPLE)
def summary(numbers: Numbers) -> dict[str, float]:
    """Count, minimum, maximum, sum, mean, median and sample standard
    deviation (0 for a single number) of a list of numbers, in one call."""
    data = _data(numbers)
    return {
        "count": len(data),
        "min": min(data),
        "max": max(data),
        "sum": math.fsum(data),
        "mean": statistics.fmean(data),
        "median": float(statistics.median(data)),
        "stdev": statistics.stdev(data) if len(data) > 1 else 0.0,
    }


WitWorld = tools.world()
