"""`python -m testbed.sim`: run a standalone simulated cluster until Ctrl-C.

Prints the kubeconfig it wrote and a kubectl command to try; nothing else runs here.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import tempfile
from pathlib import Path

from testbed.sim.scenarios import scenario_names
from testbed.sim.simulator import Simulator


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    """The command line: --scenario (repeatable), --port, --kubeconfig."""
    parser = argparse.ArgumentParser(prog="python -m testbed.sim", description=__doc__)
    parser.add_argument(
        "--scenario",
        action="append",
        help=f"scenario name ({', '.join(scenario_names())}) or YAML path; default: default",
    )
    parser.add_argument("--port", type=int, default=0, help="port on 127.0.0.1 (0 = any free)")
    parser.add_argument("--kubeconfig", help="where to write the kubeconfig (default: a temp dir)")
    return parser.parse_args(argv)


async def serve(args: argparse.Namespace) -> None:
    """Start the simulator, print how to reach it, and serve until cancelled."""
    simulator = Simulator(scenarios=args.scenario or ["default"])
    await simulator.start(port=args.port)
    default_path = Path(tempfile.mkdtemp(prefix="kai-sim-")) / "kubeconfig"
    kubeconfig = simulator.write_kubeconfig(args.kubeconfig or str(default_path))
    print(f"simulated Kubernetes API at {simulator.url}", flush=True)
    print(f"kubeconfig: {kubeconfig}", flush=True)
    print(f"try: kubectl --kubeconfig {kubeconfig} get configs", flush=True)
    print("Ctrl-C to stop", flush=True)
    try:
        await asyncio.Event().wait()
    finally:
        await simulator.stop()


def main(argv: list[str] | None = None) -> None:
    """Entry point of `python -m testbed.sim`."""
    args = parse_args(argv)
    with contextlib.suppress(KeyboardInterrupt):
        asyncio.run(serve(args))


if __name__ == "__main__":
    main()
