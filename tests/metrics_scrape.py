"""Reading the service's real `GET /metrics` as Prometheus would: the samples it serves, and the
names of the series its metric families declare (even those with no sample yet)."""

from __future__ import annotations

import aiohttp
from prometheus_client.parser import text_string_to_metric_families

# The series a family of each type is read as (prometheus_client's exposition, OpenMetrics' names).
SUFFIXES = {
    "counter": ("_total", "_created"),
    "gauge": ("",),
    "histogram": ("_bucket", "_sum", "_count", "_created"),
    "summary": ("", "_sum", "_count", "_created"),
    "info": ("_info",),
}

Samples = dict[tuple[str, frozenset[tuple[str, str]]], float]


async def scrape(port: int) -> str:
    """The text of `GET /metrics` of the service listening on `port`."""
    url = f"http://127.0.0.1:{port}/metrics"
    async with aiohttp.ClientSession() as session, session.get(url) as response:
        assert response.status == 200, response.status
        return await response.text()


def samples(text: str) -> Samples:
    """Every sample of the exposition: (name, labels) -> value."""
    return {
        (s.name, frozenset(s.labels.items())): s.value
        for family in text_string_to_metric_families(text)
        for s in family.samples
    }


def value(found: Samples, name: str, **labels: str) -> float | None:
    """The value of the series `name{labels}`, None when it is not served."""
    return found.get((name, frozenset(labels.items())))


def series_names(text: str) -> set[str]:
    """The name of every series the exposition's families declare, sampled or not (a counter
    with labels shows its samples only once counted, but says its name and type at once)."""
    names: set[str] = set()
    for family in text_string_to_metric_families(text):
        names |= {family.name + suffix for suffix in SUFFIXES.get(family.type, ("",))}
        names |= {s.name for s in family.samples}
    return names
