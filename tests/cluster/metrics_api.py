"""KEDA's external metrics API as the real aggregator sees it: served, so the APIService is
Available for real.

The aggregator resolves an APIService's Service to its EndpointSlices and refuses nothing on
loopback there, but the API server refuses a loopback address in an EndpointSlice ("may not be
in the loopback range"). So the server runs in a network namespace of the run's own, a test
host joined to this one by a veth pair (`ip netns`, root), and an EndpointSlice names its
address. It answers what the aggregator's availability check asks: the discovery document of
`external.metrics.k8s.io/v1beta1`, over TLS with a certificate for the Service's DNS name, whose
CA the APIService carries in `caBundle`.
"""

from __future__ import annotations

import base64
import os
import shutil
import subprocess
import sys
import textwrap
from dataclasses import dataclass
from pathlib import Path

SERVICE = ("keda", "keda-operator-metrics-apiserver")
PORT = 6443
_SERVER = textwrap.dedent(
    """
    import http.server, json, ssl, sys
    DISCOVERY = json.dumps({"kind": "APIResourceList", "apiVersion": "v1",
        "groupVersion": "external.metrics.k8s.io/v1beta1", "resources": []}).encode()
    class Handler(http.server.BaseHTTPRequestHandler):
        def do_GET(self):
            found = self.path.split("?")[0].rstrip("/") == "/apis/external.metrics.k8s.io/v1beta1"
            self.send_response(200 if found else 404)
            self.send_header("Content-Type", "application/json")
            self.end_headers()
            self.wfile.write(DISCOVERY if found else b"{}")
        def log_message(self, *args):
            pass
    server = http.server.ThreadingHTTPServer((sys.argv[1], int(sys.argv[2])), Handler)
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(sys.argv[3], sys.argv[4])
    server.socket = context.wrap_socket(server.socket, server_side=True)
    print("serving", flush=True)
    server.serve_forever()
    """
)


def available(needs: str = "network namespaces") -> str | None:
    """Why the metrics API cannot be served here, or None when it can (`needs`: what of this
    machine's networking the caller uses, for the message)."""
    if os.geteuid() != 0:
        return f"{needs} need root"
    if shutil.which("ip") is None:
        return "`ip` (iproute2) is not installed"
    return None


@dataclass
class MetricsApi:
    """A served external metrics API in a network namespace of its own; `start()`, `stop()`."""

    workdir: Path
    namespace: str = f"kaichatops-{os.getpid()}"
    subnet: int = os.getpid() % 250

    @property
    def address(self) -> str:
        return f"10.250.{self.subnet}.2"

    @property
    def ca_bundle(self) -> str:
        return base64.b64encode((self.workdir / "metrics.crt").read_bytes()).decode()

    def endpoint_slice(self) -> dict[str, object]:
        namespace, name = SERVICE
        return {
            "apiVersion": "discovery.k8s.io/v1",
            "kind": "EndpointSlice",
            "metadata": {
                "name": f"{name}-served",
                "namespace": namespace,
                "labels": {"kubernetes.io/service-name": name},
            },
            "addressType": "IPv4",
            "endpoints": [{"addresses": [self.address], "conditions": {"ready": True}}],
            "ports": [{"name": "https", "port": PORT, "protocol": "TCP"}],
        }

    def start(self) -> None:
        self._certificate()
        host_end, test_end = f"kc{self.subnet}h", f"kc{self.subnet}n"
        self.stop()
        for command in (
            f"netns add {self.namespace}",
            f"link add {host_end} type veth peer name {test_end}",
            f"link set {test_end} netns {self.namespace}",
            f"addr add 10.250.{self.subnet}.1/30 dev {host_end}",
            f"link set {host_end} up",
            f"-n {self.namespace} addr add {self.address}/30 dev {test_end}",
            f"-n {self.namespace} link set {test_end} up",
            f"-n {self.namespace} link set lo up",
        ):
            subprocess.run(["ip", *command.split()], check=True, capture_output=True)
        script = self.workdir / "metrics_server.py"
        script.write_text(_SERVER)
        self._process = subprocess.Popen(
            [
                "ip", "netns", "exec", self.namespace, sys.executable, str(script),
                self.address, str(PORT),
                str(self.workdir / "metrics.crt"), str(self.workdir / "metrics.key"),
            ],
            stdout=subprocess.PIPE,
            text=True,
        )  # fmt: skip
        assert self._process.stdout is not None
        line = self._process.stdout.readline()
        assert line.strip() == "serving", f"the metrics server did not start: {line!r}"

    def stop(self) -> None:
        process = getattr(self, "_process", None)
        if process is not None:
            process.terminate()
            process.wait(timeout=10)
        subprocess.run(["ip", "netns", "del", self.namespace], capture_output=True, check=False)
        subprocess.run(["ip", "link", "del", f"kc{self.subnet}h"], capture_output=True, check=False)

    def _certificate(self) -> None:
        namespace, name = SERVICE
        host = f"{name}.{namespace}.svc"
        subprocess.run(
            [
                "openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "2",
                "-subj", f"/CN={host}", "-addext", f"subjectAltName=DNS:{host}",
                "-keyout", str(self.workdir / "metrics.key"),
                "-out", str(self.workdir / "metrics.crt"),
            ],
            check=True,
            capture_output=True,
        )  # fmt: skip
