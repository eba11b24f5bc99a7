"""A test tool written for no host in particular: plain typed exports of
the world `py-plain` (wit/world.wit), no toolhost SDK. componentize-py
serves the world's functions from `WitWorld` and the interface `strings`
from `Strings`."""

from componentize_py_types import Err

from wit_world import Stats
from wit_world import exports


class WitWorld:
    def mean(self, values: list[float]) -> Stats:
        if not values:
            raise Err("no values given")
        return Stats(count=len(values), mean=sum(values) / len(values))

    def greet(self, name: str, times: int | None) -> str:
        return " ".join([f"hello {name}"] * (1 if times is None else times))


class Strings(exports.Strings):
    def upper(self, s: str) -> str:
        return s.upper()
