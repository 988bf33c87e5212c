"""A bare aiohttp server that reads each `POST /slack/events` body and answers 200: the floor
bench/ack_latency.py holds the service's HTTP acks against (the same server library, the same
burst, no signature, no replay memory, no Slack command).

    .venv/bin/python bench/bare_ack.py PORT      (prints "ready" once it listens)
"""

from __future__ import annotations

import asyncio
import sys

from aiohttp import web


async def ack(request: web.Request) -> web.Response:
    await request.read()
    return web.Response(status=200)


async def serve(port: int) -> None:
    app = web.Application()
    app.router.add_post("/slack/events", ack)
    runner = web.AppRunner(app, access_log=None)
    await runner.setup()
    await web.TCPSite(runner, "127.0.0.1", port).start()
    print("ready", flush=True)
    await asyncio.Event().wait()  # until terminated


if __name__ == "__main__":
    asyncio.run(serve(int(sys.argv[1])))
