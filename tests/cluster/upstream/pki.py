"""Certificates for the upstream tier, made with `openssl`: a CA and leaf certificates it signs.

The API server's front proxy (the aggregator's client certificate, which KEDA's metrics adapter
trusts through `extension-apiserver-authentication`) and KEDA's own certificates (one leaf with
every name, as KEDA's cert rotation makes it: kedacore/keda pkg/certificates/certificate_manager.go)
come from here. Throwaway keys for one test session, never written outside its run directory.
"""

from __future__ import annotations

import base64
import subprocess
from dataclasses import dataclass
from pathlib import Path


@dataclass(frozen=True)
class Pair:
    """A certificate and its key, PEM files."""

    crt: Path
    key: Path

    def b64(self) -> str:
        """The certificate base64-encoded (an APIService's `caBundle`)."""
        return base64.b64encode(self.crt.read_bytes()).decode()


def _openssl(*args: str) -> None:
    subprocess.run(["openssl", *args], check=True, capture_output=True)


def make_ca(directory: Path, name: str) -> Pair:
    """A self-signed CA `NAME.crt` / `NAME.key` in `directory`, valid two days."""
    directory.mkdir(parents=True, exist_ok=True)
    pair = Pair(directory / f"{name}.crt", directory / f"{name}.key")
    _openssl(
        "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "2",
        "-subj", f"/CN={name}", "-addext", "basicConstraints=critical,CA:TRUE",
        "-addext", "keyUsage=critical,keyCertSign,cRLSign",
        "-keyout", str(pair.key), "-out", str(pair.crt),
    )  # fmt: skip
    return pair


def make_leaf(
    directory: Path,
    name: str,
    ca: Pair,
    common_name: str,
    dns: tuple[str, ...] = (),
    ips: tuple[str, ...] = (),
) -> Pair:
    """A key and a certificate signed by `ca`, for serving and as a client (both usages)."""
    pair = Pair(directory / f"{name}.crt", directory / f"{name}.key")
    csr = directory / f"{name}.csr"
    _openssl(
        "req", "-new", "-newkey", "rsa:2048", "-nodes", "-subj", f"/CN={common_name}",
        "-keyout", str(pair.key), "-out", str(csr),
    )  # fmt: skip
    names = [f"DNS:{d}" for d in dns] + [f"IP:{i}" for i in ips]
    extensions = directory / f"{name}.ext"
    lines = ["basicConstraints=CA:FALSE", "extendedKeyUsage=serverAuth,clientAuth"]
    if names:
        lines.append("subjectAltName=" + ",".join(names))
    extensions.write_text("\n".join(lines) + "\n")
    _openssl(
        "x509", "-req", "-in", str(csr), "-CA", str(ca.crt), "-CAkey", str(ca.key),
        "-CAcreateserial", "-days", "2", "-extfile", str(extensions), "-out", str(pair.crt),
    )  # fmt: skip
    return pair
